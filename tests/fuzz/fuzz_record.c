// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: record decoding.  The first 32 bytes choose the
 * attr (sample_type, read_format, branch_sample_type with HW_INDEX,
 * sample_id_all); the rest is one record, copied into a buffer of exactly
 * hdr->size bytes so that any read past the record is caught by ASan.
 * Every decoder entry point runs on it, alone and through a decoder of
 * two attrs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfctr/record.h"

static void use_sample(const struct perfctr_sample *s)
{
	volatile uint64_t sink = 0;
	struct perfctr_read_value v;

	for (uint64_t i = 0; i < s->read.nr && i < 64; i++)
		if (perfctr_read_format__value(&s->read, i, &v) == 0)
			sink += v.value + v.id + v.lost;
	for (uint64_t i = 0; i < s->callchain_nr; i++)
		sink += s->callchain[i];
	for (uint64_t i = 0; i < s->branch_nr; i++)
		sink += s->branches[i].from + s->branches[i].to;
	for (uint64_t i = 0; i < s->regs_user.nr; i++)
		sink += s->regs_user.regs[i];
	for (uint64_t i = 0; i < s->regs_intr.nr; i++)
		sink += s->regs_intr.regs[i];
	for (uint32_t i = 0; i < s->raw_size; i++)
		sink += ((const unsigned char *)s->raw)[i];
	for (uint64_t i = 0; i < s->stack_user_size; i++)
		sink += ((const unsigned char *)s->stack_user)[i];
	for (uint64_t i = 0; i < s->aux_size; i++)
		sink += ((const unsigned char *)s->aux)[i];
	(void)sink;
}

static void use_record(const struct perfctr_record *r)
{
	volatile size_t sink = 0;

	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		sink += strlen(r->mmap.filename);
		for (unsigned i = 0; r->mmap.build_id && i < r->mmap.build_id_size; i++)
			sink += r->mmap.build_id[i];
		break;
	case PERF_RECORD_COMM:
		sink += strlen(r->comm.comm);
		break;
	case PERF_RECORD_KSYMBOL:
		sink += strlen(r->ksymbol.name);
		break;
	case PERF_RECORD_CGROUP:
		sink += strlen(r->cgroup.path);
		break;
	case PERF_RECORD_NAMESPACES:
		for (uint64_t i = 0; i < 2 * r->namespaces.nr; i++)
			sink += r->namespaces.dev_ino[i];
		break;
	case PERF_RECORD_TEXT_POKE:
		for (unsigned i = 0; i < r->text_poke.old_len; i++)
			sink += r->text_poke.old_bytes[i];
		for (unsigned i = 0; i < r->text_poke.new_len; i++)
			sink += r->text_poke.new_bytes[i];
		break;
	case PERF_RECORD_BPF_EVENT:
		for (unsigned i = 0; i < 8; i++)
			sink += r->bpf_event.tag[i];
		break;
	case PERF_RECORD_READ: {
		struct perfctr_read_value v;

		for (uint64_t i = 0; i < r->read.values.nr && i < 64; i++)
			if (perfctr_read_format__value(&r->read.values, i, &v) == 0)
				sink += v.value;
		break;
	}
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_attr a, b;
	struct perf_event_header h;
	uint64_t cfg[4];
	uint64_t *rec;
	size_t len;

	if (size < sizeof(cfg) + sizeof(h))
		return 0;
	memcpy(cfg, data, sizeof(cfg));
	data += sizeof(cfg);
	size -= sizeof(cfg);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sample_type = cfg[0] & (PERF_SAMPLE_MAX - 1);
	a.read_format = cfg[1] & (PERF_FORMAT_MAX - 1);
	a.branch_sample_type = cfg[2] & PERF_SAMPLE_BRANCH_HW_INDEX;
	a.sample_id_all = cfg[2] >> 63;
	a.sample_regs_user = cfg[3];
	a.sample_regs_intr = cfg[3] >> 17 | cfg[3] << 47;
	b = a;
	b.sample_type ^= PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_PERIOD;

	/* The record: the header says its size; never more than we have. */
	memcpy(&h, data, sizeof(h));
	len = size > 65535 ? 65535 : size;
	if (h.size > len)
		h.size = (uint16_t)len;
	rec = malloc(h.size ? h.size : 1);
	if (!rec)
		return 0;
	memcpy(rec, data, h.size);
	if (h.size >= sizeof(h))
		memcpy(rec, &h, sizeof(h));

	if (h.size >= sizeof(h)) {
		const struct perf_event_header *hdr = (const void *)rec;
		struct perfctr_sample s = { .sz = sizeof(s) };
		struct perfctr_record r = { .sz = sizeof(r) };
		static const uint64_t ids_a[] = { 1, 2, 3 }, ids_b[] = { 4 };
		struct perfctr_decoder *dec;

		if (perfctr_sample__parse(&a, hdr, &s) == 0)
			use_sample(&s);
		if (perfctr_record__parse(&a, hdr, &r) == 0)
			use_record(&r);
		if (perfctr_record__parse(NULL, hdr, &r) == 0)
			use_record(&r);
		dec = perfctr_decoder__new();
		if (dec) {
			perfctr_decoder__add_attr(dec, &a, ids_a, 3);
			perfctr_decoder__add_attr(dec, &b, ids_b, 1);
			perfctr_decoder__find_attr(dec, hdr);
			if (perfctr_decoder__sample(dec, hdr, &s) == 0)
				use_sample(&s);
			if (perfctr_decoder__record(dec, hdr, &r) == 0)
				use_record(&r);
			perfctr_decoder__delete(dec);
		}
	}
	perfctr_record__type_name(h.type);
	perfctr_sample__fixed_size(&a);
	free(rec);
	return 0;
}
