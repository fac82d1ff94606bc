/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The read-format decoder (stream/readfmt.h), table-driven: every
 * combination of the format bits, group and single, against answers
 * built here field by field in the order perf_event_open(2) documents,
 * plus the malformed answers it must refuse.
 */
#include <errno.h>
#include <string.h>

#include "stream/readfmt.h"
#include "test.h"

#define TE PERF_FORMAT_TOTAL_TIME_ENABLED
#define TR PERF_FORMAT_TOTAL_TIME_RUNNING
#define ID PERF_FORMAT_ID
#define GR PERF_FORMAT_GROUP
#define LO PC_READFMT_LOST

/* Build the answer of @nr counters (value 100+i, id 10+i, lost i) with
 * enabled 7000, running 5000; return its words. */
static size_t build(uint64_t fmt, size_t nr, uint64_t *w)
{
	size_t n = 0;

	if (fmt & GR) {
		w[n++] = nr;
		if (fmt & TE)
			w[n++] = 7000;
		if (fmt & TR)
			w[n++] = 5000;
		for (size_t i = 0; i < nr; i++) {
			w[n++] = 100 + i;
			if (fmt & ID)
				w[n++] = 10 + i;
			if (fmt & LO)
				w[n++] = i;
		}
		return n;
	}
	w[n++] = 100;
	if (fmt & TE)
		w[n++] = 7000;
	if (fmt & TR)
		w[n++] = 5000;
	if (fmt & ID)
		w[n++] = 10;
	if (fmt & LO)
		w[n++] = 0;
	return n;
}

TEST(every_format_round_trips)
{
	/* All 32 combinations of the five bits, with 1 and 3 members. */
	for (uint64_t fmt = 0; fmt < 32; fmt++) {
		for (size_t nr = 1; nr <= 3; nr += 2) {
			uint64_t w[64];
			struct pc_readfmt head;
			struct pc_readfmt_entry ent[4];
			size_t words = build(fmt, nr, w);
			size_t want = (fmt & GR) ? nr : 1;
			int n;

			memset(ent, 0xff, sizeof(ent));
			CHECK_EQ_U64(pc_readfmt_size(fmt, nr), words * 8);
			n = pc_readfmt_decode(fmt, w, words * 8, &head, ent, 4);
			CHECK_EQ_INT(n, (int)want);
			if (n != (int)want)
				continue;
			CHECK_EQ_U64(head.nr, want);
			CHECK_EQ_U64(head.time_enabled, (fmt & TE) ? 7000 : 0);
			CHECK_EQ_U64(head.time_running, (fmt & TR) ? 5000 : 0);
			for (size_t i = 0; i < want; i++) {
				CHECK_EQ_U64(ent[i].value, 100 + i);
				CHECK_EQ_U64(ent[i].id, (fmt & ID) ? 10 + i : 0);
				CHECK_EQ_U64(ent[i].lost, (fmt & LO) ? i : 0);
				CHECK_EQ_U64(w[pc_readfmt_value_word(fmt, i)], 100 + i);
			}
		}
	}
}

static const struct {
	uint64_t fmt;
	size_t nr;
	size_t head, entry, bytes;	/* words, words, bytes */
} sizes[] = {
	/* The session's layout: 3 + 2 * nr words. */
	{ GR | ID | TE | TR,      1, 3, 2, (3 + 2) * 8 },
	{ GR | ID | TE | TR,      4, 3, 2, (3 + 2 * 4) * 8 },
	{ GR | ID | TE | TR | LO, 4, 3, 3, (3 + 3 * 4) * 8 },
	{ GR,                     2, 1, 1, 3 * 8 },
	{ GR | LO,                2, 1, 2, 5 * 8 },
	/* A single counter: nr is not asked for. */
	{ 0,                      5, 0, 1, 8 },
	{ TE | TR,                1, 2, 1, 3 * 8 },
	{ TE | TR | ID | LO,      1, 2, 3, 5 * 8 },
};

TEST(sizes_and_positions)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		CHECK_EQ_U64(pc_readfmt_head_words(sizes[i].fmt), sizes[i].head);
		CHECK_EQ_U64(pc_readfmt_entry_words(sizes[i].fmt), sizes[i].entry);
		CHECK_EQ_U64(pc_readfmt_size(sizes[i].fmt, sizes[i].nr), sizes[i].bytes);
	}
	/* The value of member k of the session's layout is word 3 + 2k. */
	CHECK_EQ_U64(pc_readfmt_value_word(GR | ID | TE | TR, 0), 3);
	CHECK_EQ_U64(pc_readfmt_value_word(GR | ID | TE | TR, 2), 7);
	CHECK_EQ_U64(pc_readfmt_value_word(TE | TR | ID, 0), 0);
}

static const struct {
	const char *what;
	uint64_t fmt;
	uint64_t words[12];
	size_t nwords;
	size_t max;
	int want;
} bad[] = {
	{ "more entries than room", GR | ID | TE | TR,
	  { 4, 10, 10, 9, 10, 9, 20, 9, 30, 9, 40 }, 11, 3, -EIO },
	{ "shorter than its nr", GR | ID | TE | TR,
	  { 3, 10, 10, 9, 10 }, 5, 3, -EIO },
	{ "no header", GR | TE | TR, { 1, 10 }, 2, 3, -EIO },
	{ "single without its id", TE | TR | ID, { 1, 2, 3 }, 3, 1, -EIO },
	{ "empty", 0, { 0 }, 0, 1, -EIO },
	{ "no room at all", 0, { 5 }, 1, 0, -EIO },
	{ "unknown format bit", GR | (1u << 7), { 0 }, 1, 1, -EINVAL },
};

TEST(malformed_answers_refused)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pc_readfmt head = { 42, 42, 42 };
		struct pc_readfmt_entry ent[3] = { { 42, 42, 42 } };
		int n = pc_readfmt_decode(bad[i].fmt, bad[i].words,
					  bad[i].nwords * 8, &head, ent, bad[i].max);

		if (n != bad[i].want)
			test_fail(__FILE__, __LINE__, "%s: %d, want %d",
				  bad[i].what, n, bad[i].want);
		/* nothing written on error */
		CHECK_EQ_U64(head.nr, 42);
		CHECK_EQ_U64(ent[0].value, 42);
	}
}

TEST(empty_group_and_trailing_bytes)
{
	/* A group whose members all failed answers nr 0; bytes after the
	 * answer (a buffer sized for more members) are ignored. */
	const uint64_t zero[] = { 0, 10, 10, 0xdead, 0xbeef };
	const uint64_t one[] = { 1, 10, 9, 5, 77, 0xdead };
	struct pc_readfmt head;
	struct pc_readfmt_entry ent[2];

	CHECK_EQ_INT(pc_readfmt_decode(GR | ID | TE | TR, zero, sizeof(zero),
				       &head, ent, 2), 0);
	CHECK_EQ_U64(head.time_enabled, 10);
	CHECK_EQ_INT(pc_readfmt_decode(GR | ID | TE | TR, one, sizeof(one),
				       &head, ent, 2), 1);
	CHECK_EQ_U64(ent[0].value, 5);
	CHECK_EQ_U64(ent[0].id, 77);
	CHECK_EQ_U64(head.time_running, 9);
}

TEST(length_of_an_answer_in_a_record)
{
	/* What a record walker needs: where the read part ends. */
	const uint64_t group[] = { 2, 5, 6, 1, 11, 2, 12, 0xdead };
	const uint64_t huge[] = { UINT64_MAX / 2, 5, 6 };
	const uint64_t single[] = { 9, 5, 6, 77 };

	CHECK_EQ_INT(pc_readfmt_length(GR | ID | TE | TR, group, sizeof(group)), 7 * 8);
	CHECK_EQ_INT(pc_readfmt_length(GR | ID | TE | TR, group, 6 * 8), -EIO);
	CHECK_EQ_INT(pc_readfmt_length(GR | ID | TE | TR, group, 2 * 8), -EIO);
	CHECK_EQ_INT(pc_readfmt_length(GR | ID | TE | TR, huge, sizeof(huge)), -EIO);
	CHECK_EQ_INT(pc_readfmt_length(ID | TE | TR, single, sizeof(single)), 4 * 8);
	CHECK_EQ_INT(pc_readfmt_length(ID | TE | TR, single, 3 * 8), -EIO);
	for (uint64_t fmt = 0; fmt < 32; fmt++) {
		uint64_t w[64];
		size_t words = build(fmt, 3, w);

		CHECK_EQ_INT(pc_readfmt_length(fmt, w, sizeof(w)), (long)(words * 8));
	}
}

TEST(unaligned_buffer)
{
	/* A PERF_SAMPLE_READ inside a record need not be 8-byte aligned
	 * in a copy; the decoder copies fields out. */
	unsigned char raw[8 * 5 + 1];
	const uint64_t w[] = { 1, 20, 10, 33, 4 };
	struct pc_readfmt head;
	struct pc_readfmt_entry ent[1];

	memcpy(raw + 1, w, sizeof(w));
	CHECK_EQ_INT(pc_readfmt_decode(GR | ID | TE | TR, raw + 1, sizeof(w),
				       &head, ent, 1), 1);
	CHECK_EQ_U64(ent[0].value, 33);
	CHECK_EQ_U64(ent[0].id, 4);
}

TEST_MAIN(TEST_CASE(every_format_round_trips),
	  TEST_CASE(sizes_and_positions),
	  TEST_CASE(malformed_answers_refused),
	  TEST_CASE(empty_group_and_trailing_bytes),
	  TEST_CASE(length_of_an_answer_in_a_record),
	  TEST_CASE(unaligned_buffer))
