// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of the slice estimates (core/estimate.{c,h}) on synthetic slices. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common/internal.h"
#include "core/estimate.h"
#include "perfctr/set.h"
#include "test.h"

static struct perfctr_estimate estimate(const struct perfctr_slices *s,
					uint64_t total)
{
	struct perfctr_estimate est = { .sz = sizeof(est) };

	REQUIRE(perfctr_slices__estimate(s, total, &est) == 0);
	return est;
}

TEST(exact_when_counted_all_the_time)
{
	struct perfctr_slices s = { 0 };
	struct perfctr_estimate est;

	perfctr_slices__add(&s, 1000, 500);
	perfctr_slices__add(&s, 3000, 500);
	est = estimate(&s, 1000);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_EXACT);
	CHECK(est.value == 4000.0);
	CHECK(est.error == 0.0);
	CHECK(est.fraction == 1.0);
	CHECK_EQ_U64(est.counted, 4000);
	CHECK_EQ_U64(est.nr_slices, 2);
	/* A total below the counted time is the counted time. */
	est = estimate(&s, 10);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_EXACT);
	CHECK_EQ_U64(est.time_total, 1000);
}

TEST(not_counted_and_single_slice)
{
	struct perfctr_slices s = { 0 };
	struct perfctr_estimate est;

	est = estimate(&s, 1000);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_NOT_COUNTED);
	CHECK(isnan(est.value) && isnan(est.error));
	/* A zero-length slice adds its count but no rate. */
	perfctr_slices__add(&s, 5, 0);
	est = estimate(&s, 1000);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_NOT_COUNTED);
	CHECK_EQ_U64(est.counted, 5);

	perfctr_slices__add(&s, 95, 250);
	est = estimate(&s, 1000);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_NO_ERROR);
	CHECK(est.value == 400.0);
	CHECK(isnan(est.error));
	CHECK(est.fraction == 0.25);
}

TEST(steady_rate_has_no_error)
{
	struct perfctr_slices s = { 0 };
	struct perfctr_estimate est;

	/* 2 events per ns in slices of different lengths. */
	for (uint64_t t = 100; t <= 1000; t += 100)
		perfctr_slices__add(&s, 2 * t, t);
	est = estimate(&s, 2 * s.time);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_SCALED);
	CHECK(fabs(est.value - 4.0 * (double)s.time) < 1e-6);
	CHECK(est.error >= 0.0 && est.error < 1e-6);
	CHECK(est.fraction == 0.5);
}

/* The textbook formulas, in long double, from the raw slices. */
static void reference(const uint64_t *c, const uint64_t *t, size_t n,
		      uint64_t total, double *value, double *error)
{
	long double w = 0, w2 = 0, mean, m2 = 0, var, neff, f;

	for (size_t i = 0; i < n; i++) {
		w += t[i];
		w2 += (long double)t[i] * t[i];
	}
	mean = 0;
	for (size_t i = 0; i < n; i++)
		mean += (long double)c[i];
	mean /= w;
	for (size_t i = 0; i < n; i++) {
		long double d = (long double)c[i] / t[i] - mean;

		m2 += t[i] * d * d;
	}
	var = m2 / (w - w2 / w);
	neff = w * w / w2;
	f = w / total;
	*value = (double)(mean * total);
	*error = (double)(total * sqrtl(var / neff) * sqrtl(1 - f));
}

TEST(matches_textbook_formula)
{
	static const struct {
		uint64_t c[6], t[6];
		size_t n;
		uint64_t total;
	} rows[] = {
		{ { 100, 120, 80, 110 }, { 10, 10, 10, 10 }, 4, 80 },
		{ { 5, 900, 40 }, { 1, 100, 7 }, 3, 1000 },
		{ { 1000000, 1200000, 900000, 1100000, 950000, 1050000 },
		  { 1000, 1300, 800, 1000, 1000, 900 }, 6, 18000 },
		{ { 0, 10 }, { 5, 5 }, 2, 30 },
	};

	for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
		struct perfctr_slices s = { 0 };
		struct perfctr_estimate est;
		double value, error;

		for (size_t i = 0; i < rows[r].n; i++)
			perfctr_slices__add(&s, rows[r].c[i], rows[r].t[i]);
		reference(rows[r].c, rows[r].t, rows[r].n, rows[r].total,
			  &value, &error);
		est = estimate(&s, rows[r].total);
		CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_SCALED);
		if (fabs(est.value - value) > 1e-9 * value)
			test_fail(__FILE__, __LINE__, "row %zu: value %.9g != %.9g",
				  r, est.value, value);
		if (fabs(est.error - error) > 1e-9 * (error + 1))
			test_fail(__FILE__, __LINE__, "row %zu: error %.9g != %.9g",
				  r, est.error, error);
	}
}

TEST(stable_at_high_steady_rates)
{
	/* 3 GHz for 10^6 slices of 1 ms with a jitter of one event: the
	 * naive sum of squares loses every digit here. */
	struct perfctr_slices s = { 0 };
	struct perfctr_estimate est;

	for (int i = 0; i < 1000000; i++)
		perfctr_slices__add(&s, 3000000000ULL + (i & 1), 1000000);
	est = estimate(&s, 2 * s.time);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_SCALED);
	/* rate sd is 0.5e-6 per ns: SE = 0.5e-6/sqrt(1e6) = 5e-10 per ns,
	 * times 2e12 ns, times sqrt(0.5). */
	CHECK(fabs(est.error - 2e12 * 5e-10 * sqrt(0.5)) < 0.01 * est.error);
}

TEST(merge_equals_sequential)
{
	struct perfctr_slices all = { 0 }, a = { 0 }, b = { 0 }, empty = { 0 };
	struct perfctr_estimate e1, e2;
	uint64_t c[] = { 7, 300, 45, 2, 99, 1000, 3 };
	uint64_t t[] = { 3, 100, 20, 0, 40, 400, 1 };

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		perfctr_slices__add(&all, c[i], t[i]);
		perfctr_slices__add(i < 3 ? &a : &b, c[i], t[i]);
	}
	perfctr_slices__merge(&a, &b);
	perfctr_slices__merge(&a, &empty);
	perfctr_slices__merge(&empty, &a);
	CHECK_EQ_U64(a.count, all.count);
	CHECK_EQ_U64(a.time, all.time);
	CHECK_EQ_U64(a.nr_slices, all.nr_slices);
	e1 = estimate(&all, 3000);
	e2 = estimate(&empty, 3000);
	CHECK(fabs(e1.value - e2.value) < 1e-9 * e1.value);
	CHECK(fabs(e1.error - e2.error) < 1e-9 * e1.error);
}

TEST(old_struct_size)
{
	struct perfctr_slices s = { 0 };
	struct perfctr_estimate est = { 0 };

	perfctr_slices__add(&s, 10, 10);
	/* Too small to hold value and error. */
	est.sz = offsetof(struct perfctr_estimate, value);
	CHECK_EQ_INT(perfctr_slices__estimate(&s, 20, &est), -EINVAL);
	CHECK_EQ_INT(perfctr_slices__estimate(&s, 20, NULL), -EINVAL);
	/* An older caller knowing up to fraction gets that much. */
	est.sz = offsetof(struct perfctr_estimate, counted);
	est.counted = 12345;
	CHECK_EQ_INT(perfctr_slices__estimate(&s, 20, &est), 0);
	CHECK(est.value == 20.0);
	CHECK_EQ_U64(est.counted, 12345);
}

/* xorshift64*: deterministic, so the coverage below is reproducible. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static double uniform(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static double normal(void)
{
	double u = uniform(), v = uniform();

	return sqrt(-2.0 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

TEST(error_covers_truth)
{
	/*
	 * Round-robin over two sets: a workload whose rate varies randomly
	 * from slice to slice is counted in every other slice.  If the error
	 * is one standard error, the truth lies within 1.96 errors about 95 %
	 * of the time and within 3 errors nearly always.  Too small an error
	 * (e.g. no finite-population term the other way, or a forgotten
	 * square root) drops the first figure far below 90 %; too large an
	 * error lifts it to 100 %.
	 */
	int trials = 2000, within2 = 0, within3 = 0;

	for (int trial = 0; trial < trials; trial++) {
		struct perfctr_slices s = { 0 };
		struct perfctr_estimate est;
		double truth = 0;
		uint64_t total = 0;

		for (int slice = 0; slice < 200; slice++) {
			uint64_t t = 900000 + (uint64_t)(uniform() * 200000);
			double rate = 1.0 + 0.2 * normal();
			uint64_t c = (uint64_t)llround(rate > 0 ? rate * t : 0);

			truth += (double)c;
			total += t;
			if (slice % 2 == 0)
				perfctr_slices__add(&s, c, t);
		}
		est = estimate(&s, total);
		if (fabs(est.value - truth) <= 1.96 * est.error)
			within2++;
		if (fabs(est.value - truth) <= 3 * est.error)
			within3++;
	}
	if (within2 < trials * 90 / 100 || within2 > trials * 99 / 100)
		test_fail(__FILE__, __LINE__, "%d of %d within 1.96 SE", within2, trials);
	if (within3 < trials * 99 / 100)
		test_fail(__FILE__, __LINE__, "%d of %d within 3 SE", within3, trials);
}

TEST(shared_spread)
{
	struct perfctr_slices steady = { 0 }, hiccup = { 0 };
	struct perfctr_estimate own, shared;
	double v;

	/* Counting noise only: 10000 +- 90 per slice (Poisson: 100) leaves no
	 * excess to share. */
	for (int i = 0; i < 40; i++)
		perfctr_slices__add(&steady, 10000 + (i % 2 ? 90 : -90), 1000);
	CHECK(perfctr_slices__shared_rel_var(&steady) == 0.0);
	/* One slice at half speed: the machine slowed down. */
	for (int i = 0; i < 40; i++)
		perfctr_slices__add(&hiccup, 10000, i == 7 ? 2000 : 1000);
	v = perfctr_slices__shared_rel_var(&hiccup);
	CHECK(v > 0.005 && v < 0.05);
	/* The steady set's error grows to the shared spread... */
	own = estimate(&steady, 2 * steady.time + 1000);
	shared.sz = sizeof(shared);
	REQUIRE(perfctr_slices__estimate_shared(&steady, 2 * steady.time + 1000,
						v, &shared) == 0);
	CHECK(shared.value == own.value);
	CHECK(shared.error > 5 * own.error);
	/* ... and a spread smaller than its own changes nothing. */
	REQUIRE(perfctr_slices__estimate_shared(&hiccup, 2 * hiccup.time, 1e-9,
						&shared) == 0);
	own = estimate(&hiccup, 2 * hiccup.time);
	CHECK(shared.error == own.error);
	/* Fewer than two slices: nothing to share. */
	{
		struct perfctr_slices one = { 0 };

		perfctr_slices__add(&one, 5, 5);
		CHECK(perfctr_slices__shared_rel_var(&one) == 0.0);
	}
}

TEST(rotation_shares_the_largest_spread)
{
	/* Event 0 runs at a steady rate (no spread of its own); event 2's
	 * slices vary far beyond counting noise: the workload's speed
	 * varied, which event 0 extrapolates into as well. */
	struct perfctr_slices all[3] = { { 0 } };
	struct perfctr_estimate est = { .sz = sizeof(est) }, alone = { .sz = sizeof(alone) };
	double shared;

	for (int i = 0; i < 10; i++) {
		perfctr_slices__add(&all[0], 1000000, 1000);
		perfctr_slices__add(&all[1], 500000, 1000);
		perfctr_slices__add(&all[2], i % 2 ? 1500000 : 500000, 1000);
	}
	shared = perfctr_slices__shared_rel_var(&all[2]);
	CHECK(shared > 0.1);
	CHECK(perfctr_slices__shared_rel_var(&all[0]) == 0.0);
	REQUIRE(perfctr_slices__estimate(&all[0], 30000, &alone) == 0);
	CHECK(alone.error == 0.0);
	REQUIRE(pc_estimate_rotated(all, 3, 0, 30000, &est) == 0);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_SCALED);
	CHECK(est.value == 3.0e7);
	CHECK(est.error > 0.0);
	{
		struct perfctr_estimate want = { .sz = sizeof(want) };

		REQUIRE(perfctr_slices__estimate_shared(&all[0], 30000, shared, &want) == 0);
		CHECK(est.error == want.error);
	}
	CHECK_EQ_INT(pc_estimate_rotated(all, 3, 3, 30000, &est), -EINVAL);
	/* Only one event: its own spread alone. */
	REQUIRE(pc_estimate_rotated(all, 1, 0, 30000, &est) == 0);
	CHECK(est.error == 0.0);
}

TEST(multiplexed_by_the_kernel)
{
	struct perfctr_estimate est = { .sz = sizeof(est) };

	REQUIRE(pc_estimate_multiplexed(100, 50, 100, &est) == 0);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_NO_ERROR);
	CHECK(est.value == 200.0);
	CHECK(isnan(est.error));
	REQUIRE(pc_estimate_multiplexed(100, 70, 70, &est) == 0);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_EXACT);
	CHECK(est.value == 100.0);
	REQUIRE(pc_estimate_multiplexed(0, 0, 70, &est) == 0);
	CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_NOT_COUNTED);
	CHECK_EQ_U64(pc_estimate_whole_time(10, 30), 30);
	CHECK_EQ_U64(pc_estimate_whole_time(40, 30), 40);
}

TEST_MAIN(TEST_CASE(shared_spread),
	  TEST_CASE(exact_when_counted_all_the_time),
	  TEST_CASE(not_counted_and_single_slice),
	  TEST_CASE(steady_rate_has_no_error),
	  TEST_CASE(matches_textbook_formula),
	  TEST_CASE(stable_at_high_steady_rates),
	  TEST_CASE(merge_equals_sequential),
	  TEST_CASE(old_struct_size),
	  TEST_CASE(error_covers_truth),
	  TEST_CASE(rotation_shares_the_largest_spread),
	  TEST_CASE(multiplexed_by_the_kernel))
