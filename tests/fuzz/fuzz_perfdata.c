// SPDX-License-Identifier: LGPL-2.1
/*
 * libFuzzer target: the perf.data reader.  The input is a whole file,
 * copied into a buffer of exactly its size; every accessor runs and every
 * record of the data section is decoded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfctr/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfctr_perfdata *pd;
	const struct perf_event_header *h;
	const struct perfctr_decoder *dec;
	uint64_t cursor = 0, first, last;
	volatile size_t sink = 0;
	unsigned char *copy;
	int n = 0;

	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	pd = perfctr_perfdata__open_mem(copy, size, NULL);
	if (!pd) {
		free(copy);
		return 0;
	}
	for (size_t i = 0; i < perfctr_perfdata__nr_attrs(pd); i++) {
		const uint64_t *ids;
		size_t nr = perfctr_perfdata__attr_ids(pd, i, &ids);
		const char *name = perfctr_perfdata__attr_name(pd, i);

		sink += perfctr_perfdata__attr(pd, i)->sample_type;
		for (size_t k = 0; k < nr; k++)
			sink += ids[k];
		if (name)
			sink += strlen(name);
	}
	for (unsigned f = 0; f < 260; f++) {
		const void *p;
		size_t sz;
		const char *s = perfctr_perfdata__string(pd, f);

		if (s)
			sink += strlen(s);
		if (perfctr_perfdata__feature(pd, f, &p, &sz) == 0 && sz)
			sink += ((const unsigned char *)p)[sz - 1];
		sink += perfctr_perfdata__has_feature(pd, f);
	}
	{
		const char *const *argv;
		int argc = perfctr_perfdata__cmdline(pd, &argv);
		uint32_t avail, online;

		for (int i = 0; i < argc; i++)
			sink += strlen(argv[i]);
		if (perfctr_perfdata__nr_cpus(pd, &avail, &online) == 0)
			sink += avail + online;
	}
	for (size_t i = 0; i < perfctr_perfdata__nr_build_ids(pd); i++) {
		struct perfctr_build_id b;

		if (perfctr_perfdata__build_id(pd, i, &b) == 0)
			sink += strlen(b.filename) + b.id[b.size ? b.size - 1 : 0];
	}
	perfctr_perfdata__sample_time(pd, &first, &last);
	dec = perfctr_perfdata__decoder(pd);
	while (n++ < 100000 && perfctr_perfdata__next(pd, &cursor, &h) == 1) {
		if (h->type == PERF_RECORD_SAMPLE) {
			struct perfctr_sample s = { .sz = sizeof(s) };

			if (perfctr_decoder__sample(dec, h, &s) == 0)
				sink += s.ip + s.callchain_nr;
		} else {
			struct perfctr_record r = { .sz = sizeof(r) };

			if (perfctr_decoder__record(dec, h, &r) == 0)
				sink += r.type;
		}
	}
	(void)sink;
	perfctr_perfdata__close(pd);
	free(copy);
	return 0;
}
