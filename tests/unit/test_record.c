// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of record decoding: records are encoded here word by word as
 * the kernel lays them out, decoded, and compared field by field; every
 * truncation of a valid record must be refused with -EINVAL.
 */
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

TEST_MAIN(
	TEST_CASE(sample_basic_fields),
	TEST_CASE(comm_with_trailer),
	TEST_CASE(sample_is_not_a_side_band_record),
)
