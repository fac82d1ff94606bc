// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Counts: scaling, fraction, sums and deltas on synthetic values.  The
 * kernel here never multiplexes (docs/kernel-notes.md 1), so this is where
 * running < enabled is exercised with every corner: never ran, ran all the
 * time, ran part of the time, values past 2^53.
 */
#include <errno.h>
#include <math.h>

#include "perfctr/count.h"
#include "test.h"

static struct perfctr_count mk(uint64_t value, uint64_t enabled,
			       uint64_t running, int32_t status, int32_t errnum)
{
	struct perfctr_count c = {
		.value = value, .time_enabled = enabled, .time_running = running,
		.status = status, .errnum = errnum,
	};
	return c;
}

TEST(scaled_table)
{
	static const struct {
		uint64_t value, enabled, running;
		double scaled, fraction;
	} rows[] = {
		{ 1000, 100, 100, 1000.0, 1.0 },	/* ran all the time */
		{ 1000, 100, 50, 2000.0, 0.5 },		/* half the time */
		{ 1000, 400, 100, 4000.0, 0.25 },
		{ 3, 3, 1, 9.0, 1.0 / 3.0 },
		{ 0, 100, 50, 0.0, 0.5 },		/* ran, counted nothing */
		{ 1000, 100, 0, 0.0, 0.0 },		/* never ran */
		{ 0, 0, 0, 0.0, 0.0 },			/* never enabled */
		{ 7, 0, 0, 0.0, 0.0 },
		/* running > enabled cannot be, but must not scale down */
		{ 1000, 100, 120, 1000.0, 1.0 },
		{ 1000, 100, 100, 1000.0, 1.0 },
		/* 2^60 * 3 / 2 does not fit a double's mantissa in a naive
		 * double product of 2^60 * 3e9: the long double keeps it */
		{ 1ULL << 60, 3000000000ULL, 2000000000ULL,
		  1.5 * (double)(1ULL << 60), 2.0 / 3.0 },
		{ UINT64_MAX, 2, 1, 2.0 * (double)UINT64_MAX, 0.5 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct perfctr_count c = mk(rows[i].value, rows[i].enabled,
					    rows[i].running, PERFCTR_COUNT_OK, 0);
		double s = perfctr_count__scaled(&c);
		double f = perfctr_count__fraction(&c);

		if (fabs(s - rows[i].scaled) > 1e-12 * fabs(rows[i].scaled))
			test_fail(__FILE__, __LINE__, "row %zu: scaled %.17g, want %.17g",
				  i, s, rows[i].scaled);
		if (fabs(f - rows[i].fraction) > 1e-15)
			test_fail(__FILE__, __LINE__, "row %zu: fraction %.17g, want %.17g",
				  i, f, rows[i].fraction);
	}
}

TEST(scaled_exact_when_not_multiplexed)
{
	/* A raw value above 2^53 that ran all the time comes back as the
	 * double nearest to it, not through a multiply and divide. */
	struct perfctr_count c = mk((1ULL << 53) + 1, 5, 5, PERFCTR_COUNT_OK, 0);

	CHECK(perfctr_count__scaled(&c) == (double)((1ULL << 53) + 1));
}

TEST(add_sums_values_and_times)
{
	struct perfctr_count sum = mk(10, 100, 90, PERFCTR_COUNT_OK, 0);
	struct perfctr_count c = mk(5, 50, 50, PERFCTR_COUNT_OK, 0);

	perfctr_count__add(&sum, &c);
	CHECK_EQ_U64(sum.value, 15);
	CHECK_EQ_U64(sum.time_enabled, 150);
	CHECK_EQ_U64(sum.time_running, 140);
	CHECK_EQ_INT(sum.status, PERFCTR_COUNT_OK);
	CHECK_EQ_INT(sum.errnum, 0);
}

TEST(add_status_precedence)
{
	static const struct { int32_t a, b, want; } rows[] = {
		{ PERFCTR_COUNT_OK, PERFCTR_COUNT_OK, PERFCTR_COUNT_OK },
		{ PERFCTR_COUNT_OK, PERFCTR_COUNT_NOT_COUNTED, PERFCTR_COUNT_OK },
		{ PERFCTR_COUNT_NOT_COUNTED, PERFCTR_COUNT_OK, PERFCTR_COUNT_OK },
		{ PERFCTR_COUNT_OK, PERFCTR_COUNT_NOT_SUPPORTED, PERFCTR_COUNT_OK },
		{ PERFCTR_COUNT_NOT_SUPPORTED, PERFCTR_COUNT_OK, PERFCTR_COUNT_OK },
		{ PERFCTR_COUNT_NOT_COUNTED, PERFCTR_COUNT_NOT_SUPPORTED,
		  PERFCTR_COUNT_NOT_COUNTED },
		{ PERFCTR_COUNT_NOT_SUPPORTED, PERFCTR_COUNT_NOT_COUNTED,
		  PERFCTR_COUNT_NOT_COUNTED },
		{ PERFCTR_COUNT_NOT_SUPPORTED, PERFCTR_COUNT_NOT_SUPPORTED,
		  PERFCTR_COUNT_NOT_SUPPORTED },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct perfctr_count sum = mk(1, 1, 1, rows[i].a,
					      rows[i].a == PERFCTR_COUNT_NOT_SUPPORTED ? ENOENT : 0);
		struct perfctr_count c = mk(1, 1, 1, rows[i].b,
					    rows[i].b == PERFCTR_COUNT_NOT_SUPPORTED ? EINVAL : 0);

		perfctr_count__add(&sum, &c);
		if (sum.status != rows[i].want)
			test_fail(__FILE__, __LINE__, "row %zu: status %d, want %d",
				  i, sum.status, rows[i].want);
		/* errnum only describes a NOT_SUPPORTED result: the first
		 * one seen is kept */
		if (rows[i].want == PERFCTR_COUNT_NOT_SUPPORTED)
			CHECK_EQ_INT(sum.errnum, ENOENT);
		else
			CHECK_EQ_INT(sum.errnum, 0);
	}
}

TEST(delta_of_two_reads)
{
	struct perfctr_count before = mk(100, 1000, 800, PERFCTR_COUNT_OK, 0);
	struct perfctr_count now = mk(250, 3000, 1800, PERFCTR_COUNT_OK, 0);
	struct perfctr_count d;

	perfctr_count__delta(&d, &now, &before);
	CHECK_EQ_U64(d.value, 150);
	CHECK_EQ_U64(d.time_enabled, 2000);
	CHECK_EQ_U64(d.time_running, 1000);
	CHECK_EQ_INT(d.status, PERFCTR_COUNT_OK);
	CHECK(fabs(perfctr_count__scaled(&d) - 300.0) < 1e-9);
	CHECK(fabs(perfctr_count__fraction(&d) - 0.5) < 1e-15);
}

TEST(delta_idle_interval_is_not_counted)
{
	/* Enabled for an interval but never scheduled: not counted, not 0. */
	struct perfctr_count before = mk(100, 1000, 800, PERFCTR_COUNT_OK, 0);
	struct perfctr_count now = mk(100, 2000, 800, PERFCTR_COUNT_OK, 0);
	struct perfctr_count d;

	perfctr_count__delta(&d, &now, &before);
	CHECK_EQ_U64(d.value, 0);
	CHECK_EQ_U64(d.time_enabled, 1000);
	CHECK_EQ_U64(d.time_running, 0);
	CHECK_EQ_INT(d.status, PERFCTR_COUNT_NOT_COUNTED);
}

TEST(delta_across_reset_is_the_new_count)
{
	/* The kernel's RESET zeroes the value but not the times. */
	struct perfctr_count before = mk(500, 1000, 1000, PERFCTR_COUNT_OK, 0);
	struct perfctr_count now = mk(20, 1500, 1500, PERFCTR_COUNT_OK, 0);
	struct perfctr_count d;

	perfctr_count__delta(&d, &now, &before);
	CHECK_EQ_U64(d.value, 20);
	CHECK_EQ_U64(d.time_enabled, 1500);
	CHECK_EQ_U64(d.time_running, 1500);
}

TEST(delta_keeps_not_supported)
{
	struct perfctr_count ns = mk(0, 0, 0, PERFCTR_COUNT_NOT_SUPPORTED, ENOENT);
	struct perfctr_count d;

	perfctr_count__delta(&d, &ns, &ns);
	CHECK_EQ_INT(d.status, PERFCTR_COUNT_NOT_SUPPORTED);
	CHECK_EQ_INT(d.errnum, ENOENT);
}

TEST_MAIN(TEST_CASE(scaled_table),
	  TEST_CASE(scaled_exact_when_not_multiplexed),
	  TEST_CASE(add_sums_values_and_times),
	  TEST_CASE(add_status_precedence),
	  TEST_CASE(delta_of_two_reads),
	  TEST_CASE(delta_idle_interval_is_not_counted),
	  TEST_CASE(delta_across_reset_is_the_new_count),
	  TEST_CASE(delta_keeps_not_supported))
