// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: the perf.data reader.  The input is a whole file,
 * copied into a buffer of exactly its size; every accessor runs and every
 * record of the data section is decoded; an unfinished file (no feature
 * section) goes through the recovery walk.  The same bytes are then read as
 * a file, through the reader's pread windows (the smallest size), and must
 * give the same records.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfctr/perfdata.h"
#include "perfctr/tpformat.h"

/* The records of @mem's data section, read again from a file of the same
 * bytes: identical, and the same end (or the same error). */
static void same_as_file(struct perfctr_perfdata *mem, const uint8_t *data,
			 size_t size)
{
	PERFCTR_OPTS(perfctr_perfdata_opts, o, .window_size = 64 * 1024);
	const struct perf_event_header *hm, *hf;
	struct perfctr_perfdata *pf;
	uint64_t cm = 0, cf = 0;
	char path[64];
	int fd, rm, rf, n = 0;

	fd = memfd_create("fuzz_perfdata", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	pf = perfctr_perfdata__open(path, &o);
	close(fd);
	if (!pf)
		abort();	/* the same bytes opened from memory */
	do {
		rm = perfctr_perfdata__next(mem, &cm, &hm);
		rf = perfctr_perfdata__next(pf, &cf, &hf);
		if (rm != rf || cm != cf ||
		    (rm == 1 && memcmp(hm, hf, hm->size)))
			abort();
	} while (rm == 1 && n++ < 100000);
	perfctr_perfdata__close(pf);
}

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
	{
		/* The tracing data's formats; every field read from a
		 * payload of a third of the file's bytes. */
		const struct perfctr_tp_formats *tf = perfctr_perfdata__tp_formats(pd);

		for (size_t i = 0; tf && i < perfctr_tp_formats__nr(tf); i++) {
			const struct perfctr_tp_format *fmt =
				perfctr_tp_formats__at(tf, i);

			sink += strlen(perfctr_tp_format__name(fmt));
			for (size_t k = 0; k < perfctr_tp_format__nr_fields(fmt); k++) {
				const struct perfctr_tp_field *fl =
					perfctr_tp_format__field(fmt, k);
				const void *arr;
				size_t len;
				uint64_t v;

				if (perfctr_tp_field__number(fl, data, size / 3, &v) == 0)
					sink += v;
				if (perfctr_tp_field__array(fl, data, size / 3,
							    &arr, &len) == 0 && len)
					sink += ((const unsigned char *)arr)[len - 1];
			}
		}
	}
	{
		struct perfctr_perfdata_recovery rec = { .sz = sizeof(rec) };

		/* A recovered data section lies inside the file. */
		if (perfctr_perfdata__recovered(pd, &rec) == 1 &&
		    (rec.bytes != perfctr_perfdata__data_size(pd) ||
		     rec.bytes > size))
			abort();
	}
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
	if (size >= 104)
		same_as_file(pd, data, size);
	perfctr_perfdata__close(pd);
	free(copy);
	return 0;
}
