// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unit tests of record decoding: records are encoded here word by word as
 * the kernel lays them out, decoded, and compared field by field; every
 * truncation of a valid record must be refused with -EINVAL.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "perfctr/record.h"
#include "test.h"

/* A record builder: header + words. */
struct rec {
	uint64_t w[512];
	size_t n;		/* words including the header word */
};

static void rec_init(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 8 };

	memset(r, 0, sizeof(*r));
	memcpy(&r->w[0], &h, 8);
	r->n = 1;
}

static void put(struct rec *r, uint64_t v)
{
	r->w[r->n++] = v;
}

static void put32x2(struct rec *r, uint32_t a, uint32_t b)
{
	put(r, (uint64_t)a | (uint64_t)b << 32);
}

static void put_str(struct rec *r, const char *s)
{
	size_t len = strlen(s) + 1, words = (len + 7) / 8;

	memset(&r->w[r->n], 0, words * 8);
	memcpy(&r->w[r->n], s, len);
	r->n += words;
}

static const struct perf_event_header *rec_done(struct rec *r)
{
	struct perf_event_header *h = (void *)r->w;

	h->size = (uint16_t)(r->n * 8);
	return h;
}

/* Every shorter size (multiple of 8) must fail to decode as a sample. */
static void check_truncations_sample(const struct perf_event_attr *attr,
				     struct rec *r)
{
	struct perf_event_header *h = (void *)r->w;
	uint16_t full = h->size;

	for (uint16_t sz = 8; sz < full; sz += 8) {
		PERFCTR_OPTS(perfctr_sample, s);

		h->size = sz;
		if (perfctr_sample__parse(attr, h, &s) != -EINVAL)
			test_fail(__FILE__, __LINE__,
				  "truncated to %u of %u bytes: accepted", sz, full);
	}
	h->size = full;
}

TEST(sample_basic_fields)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			       PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_PERIOD,
	};
	struct rec r;
	PERFCTR_OPTS(perfctr_sample, s);

	rec_init(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put(&r, 42);		/* identifier */
	put(&r, 0x401000);	/* ip */
	put32x2(&r, 100, 101);	/* pid, tid */
	put(&r, 123456789);	/* time */
	put(&r, 0xdead0000);	/* addr */
	put(&r, 42);		/* id */
	put(&r, 43);		/* stream_id */
	put32x2(&r, 3, 0);	/* cpu, res */
	put(&r, 1000);		/* period */
	REQUIRE(perfctr_sample__parse(&attr, rec_done(&r), &s) == 0);
	CHECK_EQ_U64(s.id, 42);
	CHECK_EQ_U64(s.ip, 0x401000);
	CHECK_EQ_U64(s.pid, 100);
	CHECK_EQ_U64(s.tid, 101);
	CHECK_EQ_U64(s.time, 123456789);
	CHECK_EQ_U64(s.addr, 0xdead0000);
	CHECK_EQ_U64(s.stream_id, 43);
	CHECK_EQ_U64(s.cpu, 3);
	CHECK_EQ_U64(s.period, 1000);
	CHECK_EQ_INT(s.misc, PERF_RECORD_MISC_USER);
	check_truncations_sample(&attr, &r);
}

TEST(comm_with_trailer)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER,
		.sample_id_all = 1,
	};
	struct rec r;
	PERFCTR_OPTS(perfctr_record, out);

	rec_init(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put32x2(&r, 7, 8);
	put_str(&r, "pcwork");
	put32x2(&r, 7, 8);	/* trailer: tid */
	put(&r, 555);		/* time */
	put(&r, 9);		/* id */
	put32x2(&r, 1, 0);	/* cpu */
	put(&r, 9);		/* identifier */
	REQUIRE(perfctr_record__parse(&attr, rec_done(&r), &out) == 0);
	CHECK_EQ_INT(out.type, PERF_RECORD_COMM);
	CHECK_EQ_U64(out.comm.pid, 7);
	CHECK_EQ_U64(out.comm.tid, 8);
	CHECK_STR(out.comm.comm, "pcwork");
	CHECK_EQ_U64(out.sample_id.time, 555);
	CHECK_EQ_U64(out.sample_id.id, 9);
	CHECK_EQ_U64(out.sample_id.cpu, 1);
	CHECK_EQ_U64(out.sample_id.tid, 8);
}

TEST(sample_is_not_a_side_band_record)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	struct rec r;
	PERFCTR_OPTS(perfctr_record, out);
	PERFCTR_OPTS(perfctr_sample, s);

	rec_init(&r, PERF_RECORD_SAMPLE, 0);
	CHECK_EQ_INT(perfctr_record__parse(&attr, rec_done(&r), &out), -EINVAL);
	rec_init(&r, PERF_RECORD_COMM, 0);
	put(&r, 0);
	CHECK_EQ_INT(perfctr_sample__parse(&attr, rec_done(&r), &s), -EINVAL);
}


/* ---- every sample_type bit ---- */

#define BR_HW_INDEX PERF_SAMPLE_BRANCH_HW_INDEX

struct want {
	uint64_t raw[2];
	uint64_t stack[2];
	uint64_t aux[1];
};

/* Encode a sample of @attr in the kernel's order with known values. */
static void encode_sample(const struct perf_event_attr *a, struct rec *r)
{
	uint64_t t = a->sample_type;

	rec_init(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	if (t & PERF_SAMPLE_IDENTIFIER)
		put(r, 5001);
	if (t & PERF_SAMPLE_IP)
		put(r, 0xffffffff81000000ULL);
	if (t & PERF_SAMPLE_TID)
		put32x2(r, 300, 301);
	if (t & PERF_SAMPLE_TIME)
		put(r, 999999);
	if (t & PERF_SAMPLE_ADDR)
		put(r, 0x7fff0000);
	if (t & PERF_SAMPLE_ID)
		put(r, 5001);
	if (t & PERF_SAMPLE_STREAM_ID)
		put(r, 5000);
	if (t & PERF_SAMPLE_CPU)
		put32x2(r, 1, 0);
	if (t & PERF_SAMPLE_PERIOD)
		put(r, 4242);
	if (t & PERF_SAMPLE_READ) {
		uint64_t f = a->read_format;

		if (f & PERF_FORMAT_GROUP) {
			put(r, 3);
			if (f & PERF_FORMAT_TOTAL_TIME_ENABLED)
				put(r, 777);
			if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
				put(r, 666);
			for (uint64_t i = 0; i < 3; i++) {
				put(r, 100 * (i + 1));
				if (f & PERF_FORMAT_ID)
					put(r, 80 + i);
				if (f & PERF_FORMAT_LOST)
					put(r, i);
			}
		} else {
			put(r, 100);
			if (f & PERF_FORMAT_TOTAL_TIME_ENABLED)
				put(r, 777);
			if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
				put(r, 666);
			if (f & PERF_FORMAT_ID)
				put(r, 80);
			if (f & PERF_FORMAT_LOST)
				put(r, 9);
		}
	}
	if (t & PERF_SAMPLE_CALLCHAIN) {
		put(r, 3);
		put(r, (uint64_t)PERF_CONTEXT_USER);
		put(r, 0x401000);
		put(r, 0x402000);
	}
	if (t & PERF_SAMPLE_RAW) {
		/* u32 size 12 + 12 bytes = 16. */
		put(r, 12 | (uint64_t)0xaabbccdd << 32);
		put(r, 0x1122334455667788ULL);
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		put(r, 2);
		if (a->branch_sample_type & BR_HW_INDEX)
			put(r, 7);
		for (int i = 0; i < 2; i++) {
			put(r, 0x1000 + (uint64_t)i);	/* from */
			put(r, 0x2000 + (uint64_t)i);	/* to */
			put(r, 1);			/* flags: mispred */
		}
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		put(r, PERF_SAMPLE_REGS_ABI_64);
		put(r, 11);
		put(r, 22);
		put(r, 33);
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		put(r, 16);
		put(r, 0xabcdef);
		put(r, 0x123456);
		put(r, 8);
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		put(r, 0x0003000200000001ULL);
	if (t & PERF_SAMPLE_DATA_SRC)
		put(r, 0x51);
	if (t & PERF_SAMPLE_TRANSACTION)
		put(r, 0x52);
	if (t & PERF_SAMPLE_REGS_INTR) {
		put(r, PERF_SAMPLE_REGS_ABI_64);
		put(r, 44);
		put(r, 55);
	}
	if (t & PERF_SAMPLE_PHYS_ADDR)
		put(r, 0x1234000);
	if (t & PERF_SAMPLE_CGROUP)
		put(r, 0x53);
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		put(r, 4096);
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		put(r, 2 << 20);
	if (t & PERF_SAMPLE_AUX) {
		put(r, 8);
		put(r, 0xa0a0a0a0);
	}
	rec_done(r);
}

/* Every field the bits of @a put in, checked against encode_sample(). */
static void check_sample(const struct perf_event_attr *a,
			 const struct perfctr_sample *s, const char *what)
{
	uint64_t t = a->sample_type;
	int bad = 0;

#define F(cond) do { if (!(cond)) { bad++; test_fail(__FILE__, __LINE__, "%s: %s", what, #cond); } } while (0)
	F(s->type == t);
	if (t & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID))
		F(s->id == 5001);
	if (t & PERF_SAMPLE_IP)
		F(s->ip == 0xffffffff81000000ULL);
	if (t & PERF_SAMPLE_TID)
		F(s->pid == 300 && s->tid == 301);
	if (t & PERF_SAMPLE_TIME)
		F(s->time == 999999);
	if (t & PERF_SAMPLE_ADDR)
		F(s->addr == 0x7fff0000);
	if (t & PERF_SAMPLE_STREAM_ID)
		F(s->stream_id == 5000);
	if (t & PERF_SAMPLE_CPU)
		F(s->cpu == 1);
	if (t & PERF_SAMPLE_PERIOD)
		F(s->period == 4242);
	if (t & PERF_SAMPLE_READ) {
		uint64_t f = a->read_format;
		struct perfctr_read_value v;
		uint64_t nr = f & PERF_FORMAT_GROUP ? 3 : 1;

		F(s->read.nr == nr);
		if (f & PERF_FORMAT_TOTAL_TIME_ENABLED)
			F(s->read.time_enabled == 777);
		if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
			F(s->read.time_running == 666);
		for (uint64_t i = 0; i < nr; i++) {
			F(perfctr_read_format__value(&s->read, i, &v) == 0);
			F(v.value == 100 * (i + 1));
			F(v.id == (f & PERF_FORMAT_ID ? 80 + i : 0));
			F(v.lost == (f & PERF_FORMAT_LOST ? (nr == 1 ? 9 : i) : 0));
		}
		F(perfctr_read_format__value(&s->read, nr, &v) == -EINVAL);
	} else {
		F(s->read.nr == 0);
	}
	if (t & PERF_SAMPLE_CALLCHAIN)
		F(s->callchain_nr == 3 && s->callchain[1] == 0x401000 &&
		  s->callchain[2] == 0x402000);
	if (t & PERF_SAMPLE_RAW)
		F(s->raw_size == 12 && !memcmp(s->raw, "\xdd\xcc\xbb\xaa\x88\x77", 6));
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		F(s->branch_nr == 2);
		F(s->branches[1].from == 0x1001 && s->branches[1].to == 0x2001);
		F(s->branches[0].mispred == 1);
		F(s->branch_hw_idx == (a->branch_sample_type & BR_HW_INDEX ? 7 : (uint64_t)-1));
	}
	if (t & PERF_SAMPLE_REGS_USER)
		F(s->regs_user.abi == PERF_SAMPLE_REGS_ABI_64 && s->regs_user.nr == 3 &&
		  s->regs_user.regs[2] == 33);
	if (t & PERF_SAMPLE_STACK_USER)
		F(s->stack_user_size == 16 && s->stack_user_dyn_size == 8 &&
		  ((const uint64_t *)s->stack_user)[1] == 0x123456);
	if (t & PERF_SAMPLE_WEIGHT_STRUCT)
		F(s->weight_var1 == 1 && s->weight_var2 == 2 && s->weight_var3 == 3);
	else if (t & PERF_SAMPLE_WEIGHT)
		F(s->weight == 0x0003000200000001ULL);
	if (t & PERF_SAMPLE_DATA_SRC)
		F(s->data_src == 0x51);
	if (t & PERF_SAMPLE_TRANSACTION)
		F(s->transaction == 0x52);
	if (t & PERF_SAMPLE_REGS_INTR)
		F(s->regs_intr.nr == 2 && s->regs_intr.regs[0] == 44 &&
		  s->regs_intr.regs[1] == 55);
	if (t & PERF_SAMPLE_PHYS_ADDR)
		F(s->phys_addr == 0x1234000);
	if (t & PERF_SAMPLE_CGROUP)
		F(s->cgroup == 0x53);
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		F(s->data_page_size == 4096);
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		F(s->code_page_size == 2 << 20);
	if (t & PERF_SAMPLE_AUX)
		F(s->aux_size == 8 && *(const uint64_t *)s->aux == 0xa0a0a0a0);
#undef F
	(void)bad;
}

static void sample_attr(struct perf_event_attr *a, uint64_t type, uint64_t rf,
			uint64_t bst)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_type = type;
	a->read_format = rf;
	a->branch_sample_type = bst;
	a->sample_regs_user = 0xb;	/* 3 registers */
	a->sample_regs_intr = 0x3;	/* 2 registers */
}

/* One row per sample_type bit (alone), then every bit at once, then
 * the read_format and branch variants. */
TEST(every_sample_type_bit)
{
	static const struct {
		uint64_t type, read_format, branch;
	} rows[] = {
		{ PERF_SAMPLE_IP }, { PERF_SAMPLE_TID }, { PERF_SAMPLE_TIME },
		{ PERF_SAMPLE_ADDR }, { PERF_SAMPLE_READ },
		{ PERF_SAMPLE_CALLCHAIN }, { PERF_SAMPLE_ID }, { PERF_SAMPLE_CPU },
		{ PERF_SAMPLE_PERIOD }, { PERF_SAMPLE_STREAM_ID },
		{ PERF_SAMPLE_RAW }, { PERF_SAMPLE_BRANCH_STACK },
		{ PERF_SAMPLE_REGS_USER }, { PERF_SAMPLE_STACK_USER },
		{ PERF_SAMPLE_WEIGHT }, { PERF_SAMPLE_DATA_SRC },
		{ PERF_SAMPLE_IDENTIFIER }, { PERF_SAMPLE_TRANSACTION },
		{ PERF_SAMPLE_REGS_INTR }, { PERF_SAMPLE_PHYS_ADDR },
		{ PERF_SAMPLE_AUX }, { PERF_SAMPLE_CGROUP },
		{ PERF_SAMPLE_DATA_PAGE_SIZE }, { PERF_SAMPLE_CODE_PAGE_SIZE },
		{ PERF_SAMPLE_WEIGHT_STRUCT },
		{ PERF_SAMPLE_MAX - 1 - PERF_SAMPLE_WEIGHT },
		{ PERF_SAMPLE_MAX - 1 - PERF_SAMPLE_WEIGHT_STRUCT,
		  PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
		  PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
		  BR_HW_INDEX },
		{ PERF_SAMPLE_READ, PERF_FORMAT_TOTAL_TIME_ENABLED |
		  PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_LOST },
		{ PERF_SAMPLE_READ, PERF_FORMAT_GROUP },
		{ PERF_SAMPLE_READ | PERF_SAMPLE_TID, PERF_FORMAT_GROUP | PERF_FORMAT_ID },
		{ PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_IP, 0, BR_HW_INDEX },
	};
	uint64_t all_bits = 0;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct perf_event_attr a;
		struct rec r;
		PERFCTR_OPTS(perfctr_sample, s);
		char what[64];

		sample_attr(&a, rows[i].type, rows[i].read_format, rows[i].branch);
		encode_sample(&a, &r);
		snprintf(what, sizeof(what), "row %zu (type %#llx)", i,
			 (unsigned long long)rows[i].type);
		if (perfctr_sample__parse(&a, (void *)r.w, &s)) {
			test_fail(__FILE__, __LINE__, "%s: not decoded", what);
			continue;
		}
		check_sample(&a, &s, what);
		check_truncations_sample(&a, &r);
		if (__builtin_popcountll(rows[i].type) == 1)
			all_bits |= rows[i].type;
	}
	/* The table covers every bit the header defines. */
	CHECK_EQ_U64(all_bits, PERF_SAMPLE_MAX - 1);
}

/* An older caller's smaller struct is filled only as far as it reaches. */
TEST(sample_struct_size_respected)
{
	struct perf_event_attr a;
	struct rec r;
	struct {
		struct perfctr_sample s;
		uint64_t canary;
	} small;

	sample_attr(&a, PERF_SAMPLE_IP | PERF_SAMPLE_AUX, 0, 0);
	encode_sample(&a, &r);
	memset(&small, 0x5a, sizeof(small));
	small.s.sz = offsetof(struct perfctr_sample, pid);
	CHECK_EQ_INT(perfctr_sample__parse(&a, (void *)r.w, &small.s), 0);
	CHECK_EQ_U64(small.s.ip, 0xffffffff81000000ULL);
	CHECK_EQ_U64(small.s.pid, 0x5a5a5a5a);
	CHECK_EQ_U64(small.canary, 0x5a5a5a5a5a5a5a5aULL);
}

/* Counts and sizes inside the record that would run past its end. */
TEST(malformed_samples)
{
	static const struct {
		uint64_t type, rf;
		uint64_t words[6];
		size_t n;
	} rows[] = {
		/* callchain nr far beyond the record */
		{ PERF_SAMPLE_CALLCHAIN, 0, { 1ULL << 60, 1, 2 }, 3 },
		{ PERF_SAMPLE_CALLCHAIN, 0, { 3, 1, 2 }, 3 },
		/* raw size larger than what follows */
		{ PERF_SAMPLE_RAW, 0, { 0xfffffff0 }, 1 },
		{ PERF_SAMPLE_RAW, 0, { 20, 0 }, 2 },
		/* branch nr overflowing nr * 24 */
		{ PERF_SAMPLE_BRANCH_STACK, 0, { 0x0aaaaaaaaaaaaaabULL, 1, 2, 3 }, 4 },
		/* regs: abi set, registers missing */
		{ PERF_SAMPLE_REGS_USER, 0, { 2, 1 }, 2 },
		/* stack: size not a multiple of 8, dyn_size > size, too big */
		{ PERF_SAMPLE_STACK_USER, 0, { 12, 0, 0, 0 }, 4 },
		{ PERF_SAMPLE_STACK_USER, 0, { 8, 0, 16 }, 3 },
		{ PERF_SAMPLE_STACK_USER, 0, { ~7ULL, 0 }, 2 },
		/* group read with a huge nr */
		{ PERF_SAMPLE_READ, PERF_FORMAT_GROUP | PERF_FORMAT_ID,
		  { 1ULL << 62, 1, 2, 3 }, 4 },
		{ PERF_SAMPLE_READ, PERF_FORMAT_GROUP | PERF_FORMAT_ID,
		  { 0x5555555555555556ULL, 1, 2, 3 }, 4 },
		/* aux size larger than the record */
		{ PERF_SAMPLE_AUX, 0, { 64, 0 }, 2 },
		{ PERF_SAMPLE_AUX, 0, { ~0ULL, 0 }, 2 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct perf_event_attr a;
		struct rec r;
		PERFCTR_OPTS(perfctr_sample, s);

		sample_attr(&a, rows[i].type, rows[i].rf, 0);
		rec_init(&r, PERF_RECORD_SAMPLE, 0);
		for (size_t w = 0; w < rows[i].n; w++)
			put(&r, rows[i].words[w]);
		if (perfctr_sample__parse(&a, rec_done(&r), &s) != -EINVAL)
			test_fail(__FILE__, __LINE__, "row %zu accepted", i);
	}
	/* Misaligned records and bad header sizes. */
	{
		struct perf_event_attr a;
		struct rec r;
		PERFCTR_OPTS(perfctr_sample, s);
		struct perf_event_header *h;

		sample_attr(&a, PERF_SAMPLE_IP, 0, 0);
		encode_sample(&a, &r);
		h = (void *)((char *)r.w + 4);
		memmove(h, r.w, 16);
		CHECK_EQ_INT(perfctr_sample__parse(&a, h, &s), -EINVAL);
		encode_sample(&a, &r);
		h = (void *)r.w;
		h->size = 12;
		CHECK_EQ_INT(perfctr_sample__parse(&a, h, &s), -EINVAL);
		h->size = 4;
		CHECK_EQ_INT(perfctr_sample__parse(&a, h, &s), -EINVAL);
	}
}

/* ---- side-band records ---- */

static const struct perf_event_attr trailer_attr = {
	.size = sizeof(struct perf_event_attr),
	.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
		       PERF_SAMPLE_IDENTIFIER,
	.sample_id_all = 1,
};

static void put_trailer(struct rec *r)
{
	put32x2(r, 41, 42);
	put(r, 4343);
	put(r, 4444);
	put(r, 4545);
	put32x2(r, 1, 0);
	put(r, 4444);
}

static void check_trailer(const struct perfctr_record *out, const char *what)
{
	if (out->sample_id.pid != 41 || out->sample_id.tid != 42 ||
	    out->sample_id.time != 4343 || out->sample_id.id != 4444 ||
	    out->sample_id.stream_id != 4545 || out->sample_id.cpu != 1)
		test_fail(__FILE__, __LINE__, "%s: trailer wrong", what);
}

static void check_truncations_record(struct rec *r, const char *what)
{
	struct perf_event_header *h = (void *)r->w;
	uint16_t full = h->size;

	for (uint16_t sz = 8; sz < full; sz += 8) {
		PERFCTR_OPTS(perfctr_record, out);

		h->size = sz;
		/* Shorter records may still parse when a string or an
		 * array shrinks with them; they must never read past. */
		(void)perfctr_record__parse(&trailer_attr, h, &out);
	}
	h->size = full;
	{
		PERFCTR_OPTS(perfctr_record, out);

		h->size = 8;
		if (h->type != PERF_RECORD_SWITCH &&
		    perfctr_record__parse(&trailer_attr, h, &out) != -EINVAL)
			test_fail(__FILE__, __LINE__, "%s: header-only accepted", what);
		h->size = full;
	}
}

TEST(side_band_records)
{
	struct rec r;
	PERFCTR_OPTS(perfctr_record, o);

#define PARSE(what)							\
	do {								\
		rec_done(&r);						\
		memset(&o, 0, sizeof(o));				\
		o.sz = sizeof(o);					\
		if (perfctr_record__parse(&trailer_attr, (void *)r.w, &o)) { \
			test_fail(__FILE__, __LINE__, "%s not decoded", what); \
			break;						\
		}							\
		check_trailer(&o, what);				\
		check_truncations_record(&r, what);			\
	} while (0)

	rec_init(&r, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	put32x2(&r, 10, 11);
	put(&r, 0x400000);
	put(&r, 0x1000);
	put(&r, 0);
	put_str(&r, "/bin/true");
	put_trailer(&r);
	PARSE("MMAP");
	CHECK_EQ_U64(o.mmap.addr, 0x400000);
	CHECK_EQ_U64(o.mmap.len, 0x1000);
	CHECK_STR(o.mmap.filename, "/bin/true");

	rec_init(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put32x2(&r, 10, 11);
	put(&r, 0x400000);
	put(&r, 0x2000);
	put(&r, 0x1000);
	put32x2(&r, 8, 1);
	put(&r, 123456);
	put(&r, 7);
	put32x2(&r, 5, 2);
	put_str(&r, "/usr/lib/libc.so.6");
	put_trailer(&r);
	PARSE("MMAP2");
	CHECK_EQ_U64(o.mmap.maj, 8);
	CHECK_EQ_U64(o.mmap.min, 1);
	CHECK_EQ_U64(o.mmap.ino, 123456);
	CHECK_EQ_U64(o.mmap.ino_generation, 7);
	CHECK_EQ_U64(o.mmap.prot, 5);
	CHECK_EQ_U64(o.mmap.flags, 2);
	CHECK_EQ_U64(o.mmap.pgoff, 0x1000);
	CHECK_STR(o.mmap.filename, "/usr/lib/libc.so.6");

	rec_init(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	put32x2(&r, 10, 11);
	put(&r, 0x400000);
	put(&r, 0x2000);
	put(&r, 0);
	put(&r, 20 | 0xaaULL << 32);	/* size 20, then id bytes 0xaa.. */
	put(&r, 0xbbbbbbbbbbbbbbbbULL);
	put(&r, 0xccccccccccccccccULL);
	put32x2(&r, 5, 2);
	put_str(&r, "/bin/x");
	put_trailer(&r);
	PARSE("MMAP2 build id");
	CHECK_EQ_INT(o.mmap.build_id_size, 20);
	CHECK_EQ_INT(o.mmap.build_id[0], 0xaa);
	CHECK_EQ_INT(o.mmap.build_id[4], 0xbb);
	CHECK_EQ_INT(o.mmap.build_id[19], 0xcc);

	rec_init(&r, PERF_RECORD_FORK, 0);
	put32x2(&r, 20, 10);
	put32x2(&r, 21, 11);
	put(&r, 5555);
	put_trailer(&r);
	PARSE("FORK");
	CHECK_EQ_U64(o.task.pid, 20);
	CHECK_EQ_U64(o.task.ppid, 10);
	CHECK_EQ_U64(o.task.tid, 21);
	CHECK_EQ_U64(o.task.ptid, 11);
	CHECK_EQ_U64(o.task.time, 5555);

	rec_init(&r, PERF_RECORD_EXIT, 0);
	put32x2(&r, 20, 10);
	put32x2(&r, 20, 10);
	put(&r, 6666);
	put_trailer(&r);
	PARSE("EXIT");
	CHECK_EQ_U64(o.task.time, 6666);

	rec_init(&r, PERF_RECORD_LOST, 0);
	put(&r, 4444);
	put(&r, 17);
	put_trailer(&r);
	PARSE("LOST");
	CHECK_EQ_U64(o.lost.id, 4444);
	CHECK_EQ_U64(o.lost.lost, 17);

	rec_init(&r, PERF_RECORD_LOST_SAMPLES, 0);
	put(&r, 18);
	put_trailer(&r);
	PARSE("LOST_SAMPLES");
	CHECK_EQ_U64(o.lost_samples.lost, 18);

	rec_init(&r, PERF_RECORD_THROTTLE, 0);
	put(&r, 1);
	put(&r, 2);
	put(&r, 3);
	put_trailer(&r);
	PARSE("THROTTLE");
	CHECK_EQ_U64(o.throttle.time, 1);
	CHECK_EQ_U64(o.throttle.id, 2);
	CHECK_EQ_U64(o.throttle.stream_id, 3);

	rec_init(&r, PERF_RECORD_UNTHROTTLE, 0);
	put(&r, 1);
	put(&r, 2);
	put(&r, 3);
	put_trailer(&r);
	PARSE("UNTHROTTLE");
	CHECK_EQ_INT(o.type, PERF_RECORD_UNTHROTTLE);

	rec_init(&r, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT |
		 PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	put_trailer(&r);
	PARSE("SWITCH");
	CHECK(o.context_switch.out);
	CHECK(o.context_switch.preempt);

	rec_init(&r, PERF_RECORD_SWITCH_CPU_WIDE, 0);
	put32x2(&r, 30, 31);
	put_trailer(&r);
	PARSE("SWITCH_CPU_WIDE");
	CHECK(!o.context_switch.out);
	CHECK_EQ_U64(o.context_switch.next_prev_tid, 31);

	rec_init(&r, PERF_RECORD_AUX, 0);
	put(&r, 4096);
	put(&r, 512);
	put(&r, PERF_AUX_FLAG_TRUNCATED);
	put_trailer(&r);
	PARSE("AUX");
	CHECK_EQ_U64(o.aux.aux_offset, 4096);
	CHECK_EQ_U64(o.aux.aux_size, 512);
	CHECK_EQ_U64(o.aux.flags, PERF_AUX_FLAG_TRUNCATED);

	rec_init(&r, PERF_RECORD_ITRACE_START, 0);
	put32x2(&r, 50, 51);
	put_trailer(&r);
	PARSE("ITRACE_START");
	CHECK_EQ_U64(o.itrace_start.tid, 51);

	rec_init(&r, PERF_RECORD_NAMESPACES, 0);
	put32x2(&r, 60, 61);
	put(&r, 2);
	put(&r, 0x10);
	put(&r, 0x11);
	put(&r, 0x20);
	put(&r, 0x21);
	put_trailer(&r);
	PARSE("NAMESPACES");
	CHECK_EQ_U64(o.namespaces.nr, 2);
	CHECK_EQ_U64(o.namespaces.dev_ino[3], 0x21);

	rec_init(&r, PERF_RECORD_KSYMBOL, 0);
	put(&r, 0xffffffffc0000000ULL);
	put(&r, 256 | (uint64_t)PERF_RECORD_KSYMBOL_TYPE_BPF << 32);
	put_str(&r, "bpf_prog_x");
	put_trailer(&r);
	PARSE("KSYMBOL");
	CHECK_EQ_U64(o.ksymbol.len, 256);
	CHECK_EQ_U64(o.ksymbol.ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
	CHECK_STR(o.ksymbol.name, "bpf_prog_x");

	rec_init(&r, PERF_RECORD_BPF_EVENT, 0);
	put(&r, PERF_BPF_EVENT_PROG_LOAD | (uint64_t)77 << 32);
	put(&r, 0x0807060504030201ULL);
	put_trailer(&r);
	PARSE("BPF_EVENT");
	CHECK_EQ_U64(o.bpf_event.bpf_type, PERF_BPF_EVENT_PROG_LOAD);
	CHECK_EQ_U64(o.bpf_event.id, 77);
	CHECK_EQ_INT(o.bpf_event.tag[7], 8);

	rec_init(&r, PERF_RECORD_CGROUP, 0);
	put(&r, 99);
	put_str(&r, "/system.slice");
	put_trailer(&r);
	PARSE("CGROUP");
	CHECK_EQ_U64(o.cgroup.id, 99);
	CHECK_STR(o.cgroup.path, "/system.slice");

	rec_init(&r, PERF_RECORD_TEXT_POKE, 0);
	put(&r, 0xffffffff81001000ULL);
	{
		/* old_len 2, new_len 3, bytes aa bb | cc dd ee, padded. */
		static const unsigned char body[16] = {
			2, 0, 3, 0, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
		};

		memcpy(&r.w[r.n], body, sizeof(body));
		r.n += 2;
	}
	put_trailer(&r);
	PARSE("TEXT_POKE");
	CHECK_EQ_U64(o.text_poke.old_len, 2);
	CHECK_EQ_U64(o.text_poke.new_len, 3);
	REQUIRE(o.text_poke.old_bytes && o.text_poke.new_bytes);
	CHECK_EQ_INT(o.text_poke.old_bytes[1], 0xbb);
	CHECK_EQ_INT(o.text_poke.new_bytes[0], 0xcc);
	CHECK_EQ_INT(o.text_poke.new_bytes[2], 0xee);

	rec_init(&r, PERF_RECORD_AUX_OUTPUT_HW_ID, 0);
	put(&r, 0xabc);
	put_trailer(&r);
	PARSE("AUX_OUTPUT_HW_ID");
	CHECK_EQ_U64(o.aux_output_hw_id.hw_id, 0xabc);
#undef PARSE
}

TEST(read_record_with_group)
{
	struct perf_event_attr a = trailer_attr;
	struct rec r;
	PERFCTR_OPTS(perfctr_record, o);
	struct perfctr_read_value v;

	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			PERF_FORMAT_TOTAL_TIME_ENABLED;
	rec_init(&r, PERF_RECORD_READ, 0);
	put32x2(&r, 70, 71);
	put(&r, 2);		/* nr */
	put(&r, 1000);		/* enabled */
	put(&r, 5);
	put(&r, 91);
	put(&r, 6);
	put(&r, 92);
	put_trailer(&r);
	REQUIRE(perfctr_record__parse(&a, rec_done(&r), &o) == 0);
	CHECK_EQ_U64(o.read.tid, 71);
	CHECK_EQ_U64(o.read.values.nr, 2);
	CHECK_EQ_U64(o.read.values.time_enabled, 1000);
	CHECK_EQ_INT(perfctr_read_format__value(&o.read.values, 1, &v), 0);
	CHECK_EQ_U64(v.value, 6);
	CHECK_EQ_U64(v.id, 92);
	check_trailer(&o, "READ");
}

TEST(malformed_side_band)
{
	struct rec r;
	PERFCTR_OPTS(perfctr_record, o);

	/* COMM whose string has no terminator inside the record. */
	rec_init(&r, PERF_RECORD_COMM, 0);
	put32x2(&r, 1, 1);
	put(&r, 0x4141414141414141ULL);
	CHECK_EQ_INT(perfctr_record__parse(NULL, rec_done(&r), &o), -EINVAL);
	/* A trailer larger than the record. */
	rec_init(&r, PERF_RECORD_LOST, 0);
	put(&r, 1);
	put(&r, 2);
	CHECK_EQ_INT(perfctr_record__parse(&trailer_attr, rec_done(&r), &o), -EINVAL);
	/* NAMESPACES with a count beyond the record. */
	rec_init(&r, PERF_RECORD_NAMESPACES, 0);
	put32x2(&r, 1, 1);
	put(&r, 1ULL << 61);
	put(&r, 0);
	put(&r, 0);
	CHECK_EQ_INT(perfctr_record__parse(NULL, rec_done(&r), &o), -EINVAL);
	/* TEXT_POKE with lengths beyond the record. */
	rec_init(&r, PERF_RECORD_TEXT_POKE, 0);
	put(&r, 0);
	put(&r, 0xffffULL | 0xffffULL << 16);
	CHECK_EQ_INT(perfctr_record__parse(NULL, rec_done(&r), &o), -EINVAL);
	/* MMAP2 build id longer than 20 bytes. */
	rec_init(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
	for (int i = 0; i < 3; i++)
		put(&r, 0);
	put(&r, 0);
	put(&r, 21);
	put(&r, 0);
	put(&r, 0);
	put(&r, 0);
	put_str(&r, "x");
	CHECK_EQ_INT(perfctr_record__parse(NULL, rec_done(&r), &o), -EINVAL);
	/* Unknown types decode their header only. */
	rec_init(&r, 200, 0);
	put(&r, 1);
	CHECK_EQ_INT(perfctr_record__parse(NULL, rec_done(&r), &o), 0);
	CHECK_EQ_INT(o.type, 200);
	CHECK(perfctr_record__type_name(200) == NULL);
	CHECK_STR(perfctr_record__type_name(PERF_RECORD_MMAP2), "MMAP2");
	CHECK_STR(perfctr_record__type_name(68), "FINISHED_ROUND");
}

/* ---- decoder over several attrs ---- */

TEST(decoder_finds_attrs)
{
	struct perf_event_attr a, b;
	static const uint64_t ids_a[] = { 100, 101 }, ids_b[] = { 200 };
	struct perfctr_decoder *dec = perfctr_decoder__new();
	struct rec r;
	PERFCTR_OPTS(perfctr_sample, s);
	PERFCTR_OPTS(perfctr_record, o);

	REQUIRE(dec);
	sample_attr(&a, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID, 0, 0);
	sample_attr(&b, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD, 0, 0);
	a.sample_id_all = b.sample_id_all = 1;
	a.sample_period = 10;
	b.sample_period = 20;
	CHECK_EQ_INT(perfctr_decoder__add_attr(dec, &a, ids_a, 1), 0);
	CHECK_EQ_INT(perfctr_decoder__add_attr(dec, &b, ids_b, 1), 1);
	CHECK_EQ_INT(perfctr_decoder__add_ids(dec, 0, ids_a + 1, 1), 0);
	CHECK_EQ_U64(perfctr_decoder__nr_attrs(dec), 2);
	CHECK(perfctr_decoder__attr(dec, 2) == NULL);

	rec_init(&r, PERF_RECORD_SAMPLE, 0);
	put(&r, 101);
	put(&r, 0x1234);
	put32x2(&r, 1, 2);
	REQUIRE(perfctr_decoder__sample(dec, rec_done(&r), &s) == 0);
	CHECK_EQ_U64(s.attr_idx, 0);
	CHECK_EQ_U64(s.ip, 0x1234);
	CHECK_EQ_U64(s.period, 10);
	CHECK(s.period_from_attr);

	rec_init(&r, PERF_RECORD_SAMPLE, 0);
	put(&r, 200);
	put32x2(&r, 1, 2);
	put(&r, 77);
	REQUIRE(perfctr_decoder__sample(dec, rec_done(&r), &s) == 0);
	CHECK_EQ_U64(s.attr_idx, 1);
	CHECK_EQ_U64(s.period, 77);
	CHECK(!s.period_from_attr);

	rec_init(&r, PERF_RECORD_SAMPLE, 0);
	put(&r, 999);
	put32x2(&r, 1, 2);
	CHECK_EQ_INT(perfctr_decoder__sample(dec, rec_done(&r), &s), -ENOENT);

	/* A side-band record: identified by the last trailer word. */
	rec_init(&r, PERF_RECORD_COMM, 0);
	put32x2(&r, 1, 2);
	put_str(&r, "x");
	put32x2(&r, 1, 2);
	put(&r, 200);
	REQUIRE(perfctr_decoder__record(dec, rec_done(&r), &o) == 0);
	CHECK_EQ_U64(o.attr_idx, 1);
	CHECK_EQ_U64(o.sample_id.id, 200);
	CHECK_STR(o.comm.comm, "x");
	CHECK_EQ_INT(perfctr_decoder__find_attr(dec, (void *)r.w), 1);
	perfctr_decoder__delete(dec);
}

/* Without IDENTIFIER the id is found where every attr puts it. */
TEST(decoder_common_id_position)
{
	struct perf_event_attr a, b;
	static const uint64_t ida = 1, idb = 2;
	struct perfctr_decoder *dec = perfctr_decoder__new();
	struct rec r;

	REQUIRE(dec);
	sample_attr(&a, PERF_SAMPLE_IP | PERF_SAMPLE_ID | PERF_SAMPLE_CPU, 0, 0);
	sample_attr(&b, PERF_SAMPLE_IP | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD, 0, 0);
	perfctr_decoder__add_attr(dec, &a, &ida, 1);
	perfctr_decoder__add_attr(dec, &b, &idb, 1);
	rec_init(&r, PERF_RECORD_SAMPLE, 0);
	put(&r, 0x1);
	put(&r, 2);
	put(&r, 3);
	CHECK_EQ_INT(perfctr_decoder__find_attr(dec, rec_done(&r)), 1);
	/* A third attr with the id elsewhere: positions no longer agree. */
	{
		struct perf_event_attr c;
		static const uint64_t idc = 3;

		sample_attr(&c, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ID, 0, 0);
		perfctr_decoder__add_attr(dec, &c, &idc, 1);
		CHECK_EQ_INT(perfctr_decoder__find_attr(dec, (void *)r.w), -ENOENT);
	}
	perfctr_decoder__delete(dec);
}

TEST_MAIN(
	TEST_CASE(sample_basic_fields),
	TEST_CASE(comm_with_trailer),
	TEST_CASE(sample_is_not_a_side_band_record),
	TEST_CASE(every_sample_type_bit),
	TEST_CASE(sample_struct_size_respected),
	TEST_CASE(malformed_samples),
	TEST_CASE(side_band_records),
	TEST_CASE(read_record_with_group),
	TEST_CASE(malformed_side_band),
	TEST_CASE(decoder_finds_attrs),
	TEST_CASE(decoder_common_id_position),
)
