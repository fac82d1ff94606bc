// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of the shared helpers (common/). */
#include <stdlib.h>

#include "common/internal.h"
#include "test.h"

struct small_opts {
	size_t sz;
	int a;
};

struct big_opts {
	size_t sz;
	int a;
	uint64_t b;
};

TEST(opts_convention)
{
	struct big_opts big = { .sz = sizeof(big), .a = 1 };

	CHECK(pc_opts_valid(NULL, sizeof(struct small_opts)));
	CHECK(pc_opts_valid(&big, sizeof(struct big_opts)));
	/* A newer caller with a zero tail is accepted by an older library... */
	CHECK(pc_opts_valid(&big, sizeof(struct small_opts)));
	/* ... but not one that asks for something the library cannot do. */
	big.b = 7;
	CHECK(!pc_opts_valid(&big, sizeof(struct small_opts)));
}

TEST(parse_u64)
{
	static const struct {
		const char *in;
		int base;
		int ret;
		uint64_t out;
	} rows[] = {
		{ "0", 0, 0, 0 },
		{ "42", 10, 0, 42 },
		{ "0x1f", 0, 0, 31 },
		{ "18446744073709551615", 10, 0, UINT64_MAX },
		{ "18446744073709551616", 10, -ERANGE, 0 },
		{ "", 10, -EINVAL, 0 },
		{ "-1", 10, -EINVAL, 0 },
		{ "12x", 10, -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t v = 0;
		int ret = pc_parse_u64(rows[i].in, rows[i].base, &v);

		CHECK_EQ_INT(ret, rows[i].ret);
		if (!ret)
			CHECK_EQ_U64(v, rows[i].out);
	}
}

TEST(strlcpy_truncates)
{
	char buf[4];

	CHECK_EQ_U64(pc_strlcpy(buf, "abcdef", sizeof(buf)), 6);
	CHECK_STR(buf, "abc");
}

/* Entry i's hash: i / 2 in the low bits, so pairs share a home slot and
 * the second one probes on; the high bits are masked off by any size. */
static uint64_t pair_hash(const void *arg, size_t i)
{
	(void)arg;
	return (uint64_t)(i / 2) | 0xabc0000000000000ULL;
}

TEST(slots_grow)
{
	uint32_t *slots = NULL;
	size_t nslots = 0, nr = 200;

	CHECK_EQ_INT(pc_slots_grow(&slots, &nslots, 0, pair_hash, NULL), 0);
	CHECK_EQ_U64(nslots, 256);
	for (size_t h = 0; h < nslots; h++)
		CHECK_EQ_INT(slots[h], 0);
	CHECK_EQ_INT(pc_slots_grow(&slots, &nslots, nr, pair_hash, NULL), 0);
	CHECK_EQ_U64(nslots, 512);
	/* In id order: entry 2k at slot k's first free one, 2k + 1 after
	 * it; the ids stored plus one, every other slot empty. */
	for (size_t i = 0; i < nr; i++)
		CHECK_EQ_INT(slots[i], i + 1);
	for (size_t h = nr; h < nslots; h++)
		CHECK_EQ_INT(slots[h], 0);
	free(slots);
}

TEST_MAIN(TEST_CASE(opts_convention), TEST_CASE(parse_u64),
	  TEST_CASE(strlcpy_truncates), TEST_CASE(slots_grow))
