// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hardware tier, through the session API: a cycles+instructions group
 * counts a fixed-length loop exactly, more instruction events than the PMU
 * has counters are multiplexed by the kernel and scale to the truth, a
 * group larger than the PMU keeps what fits, and events the PMU lacks are
 * "not supported".  Runs in the PMU lane, skips where there is no PMU.
 */
#include "hw_lane.h"
#include "perfctr/perfctr.h"

#define N_LONG 1000000UL

/* A session on the calling thread with user-mode hardware events:
 * @configs[i] joins the group of the previous event when @grouped. */
static struct perfctr_session *hw_session(const uint64_t *configs, size_t n,
					  bool grouped, struct perfctr_target **self)
{
	static const char *const names[] = {
		[PERF_COUNT_HW_CPU_CYCLES] = "cycles:u",
		[PERF_COUNT_HW_INSTRUCTIONS] = "instructions:u",
		[PERF_COUNT_HW_CACHE_MISSES] = "cache-misses:u",
		[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = "branches:u",
	};
	struct perfctr_session *s = perfctr_session__new(NULL);
	struct perfctr_evlist *list = perfctr_evlist__new();
	struct perf_event_attr attr;
	size_t i;

	REQUIRE(s && list);
	for (i = 0; i < n; i++) {
		hw_attr(&attr, configs[i]);
		REQUIRE(perfctr_evlist__add_attr(list, &attr, names[configs[i]],
						 grouped && i ? 0 : (size_t)-1) == (int)i);
	}
	REQUIRE(perfctr_session__add_evlist(s, list) == (int)n);
	perfctr_evlist__delete(list);
	*self = perfctr_target__new_self();
	REQUIRE(*self);
	REQUIRE(perfctr_session__attach(s, *self) == 0);
	return s;
}

/* User-mode counts of one run of hw_loop(n) between start and stop.
 * Never inlined: the code around the loop must be the same for every n. */
static __attribute__((noinline)) void session_count_loop(struct perfctr_session *s,
							 unsigned long n,
							 uint64_t *values, size_t nr)
{
	struct perfctr_count c;
	size_t i;

	perfctr_session__reset(s);
	perfctr_session__start(s);
	hw_loop(n);
	perfctr_session__stop(s);
	perfctr_session__read(s);
	for (i = 0; i < nr; i++) {
		perfctr_session__count(s, i, &c);
		values[i] = c.status == PERFCTR_COUNT_OK ? c.value : UINT64_MAX;
	}
}

TEST(group_counts_loop_exactly)
{
	static const uint64_t configs[] = {
		PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS,
	};
	struct perfctr_target *self;
	struct perfctr_session *s;
	uint64_t c1[2], c2[2], c1b[2], c2b[2];

	hw_require_lane();
	s = hw_session(configs, 2, true, &self);
	CHECK_EQ_U64(perfctr_session__event_leader(s, 1), 0);
	session_count_loop(s, 1, c1, 2);	/* warm-up, see hw_lane.h */
	session_count_loop(s, 1, c1, 2);
	session_count_loop(s, N_LONG, c2, 2);
	session_count_loop(s, 1, c1b, 2);
	session_count_loop(s, N_LONG, c2b, 2);
	for (int i = 0; i < 2; i++) {
		REQUIRE(c1[i] != UINT64_MAX && c2[i] != UINT64_MAX);
		CHECK_EQ_U64(c2[i] - c1[i], HW_LOOP_INSNS * (N_LONG - 1));
		CHECK_EQ_U64(c2b[i] - c1b[i], HW_LOOP_INSNS * (N_LONG - 1));
	}
	perfctr_session__delete(s);
	perfctr_target__delete(self);
}

/* The kernel rotates 10 instruction events over 6 counters; each scaled
 * estimate is within 1 % of the loop's count (see test_hw_count.c). */
TEST(multiplexed_events_scale)
{
	enum { NEV = 10 };
	const unsigned long n = 25000000UL;
	const double truth = (double)HW_LOOP_INSNS * n;
	uint64_t configs[NEV];
	struct perfctr_target *self;
	struct perfctr_session *s;
	int rotated = 0;

	hw_require_lane();
	for (int i = 0; i < NEV; i++)
		configs[i] = PERF_COUNT_HW_INSTRUCTIONS;
	s = hw_session(configs, NEV, false, &self);
	CHECK_EQ_INT(perfctr_session__start(s), 0);
	hw_loop(n);
	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	for (int i = 0; i < NEV; i++) {
		struct perfctr_count c;
		double scaled, err;

		CHECK_EQ_INT(perfctr_session__count(s, i, &c), 0);
		REQUIRE(c.status == PERFCTR_COUNT_OK);
		if (c.time_running < c.time_enabled)
			rotated++;
		scaled = perfctr_count__scaled(&c);
		err = (scaled - truth) / truth;
		if (err > 0.01 || err < -0.01)
			test_fail(__FILE__, __LINE__,
				  "event %d: scaled %.0f vs %.0f (%+.3f %%, ran %.1f %%)",
				  i, scaled, truth, err * 100,
				  100.0 * perfctr_count__fraction(&c));
	}
	CHECK(rotated >= NEV - 6);
	perfctr_session__delete(s);
	perfctr_target__delete(self);
}

/* A cycles leader and 7 instruction members on 6 + 1 counters: the 7th
 * member is refused at open (EINVAL) and kept as not supported, the rest
 * count the loop all the time. */
TEST(group_larger_than_pmu_keeps_what_fits)
{
	enum { NEV = 8 };
	uint64_t configs[NEV], v[NEV];
	struct perfctr_target *self;
	struct perfctr_session *s;
	struct perfctr_count c;

	hw_require_lane();
	if (hw_armv8_pmu_type() < 0)
		test_skip("the counter count (6 + 1) is the lane's emulated PMUv3");
	configs[0] = PERF_COUNT_HW_CPU_CYCLES;
	for (int i = 1; i < NEV; i++)
		configs[i] = PERF_COUNT_HW_INSTRUCTIONS;
	s = hw_session(configs, NEV, true, &self);
	session_count_loop(s, N_LONG, v, NEV);
	for (int i = 0; i < NEV - 1; i++) {
		CHECK_EQ_INT(perfctr_session__count(s, i, &c), 0);
		CHECK_EQ_INT(c.status, PERFCTR_COUNT_OK);
		CHECK_EQ_U64(c.time_running, c.time_enabled);
		CHECK(v[i] >= HW_LOOP_INSNS * N_LONG);
		CHECK(v[i] < HW_LOOP_INSNS * N_LONG + 1000);
	}
	CHECK_EQ_INT(perfctr_session__count(s, NEV - 1, &c), 0);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_NOT_SUPPORTED);
	CHECK_EQ_INT(c.errnum, EINVAL);
	perfctr_session__delete(s);
	perfctr_target__delete(self);
}

TEST(missing_events_not_supported)
{
	static const uint64_t configs[] = {
		PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CACHE_MISSES,
		PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	};
	struct perfctr_target *self;
	struct perfctr_session *s;
	struct perfctr_count c;
	uint64_t v[3];

	hw_require_lane();
	if (hw_armv8_pmu_type() < 0)
		test_skip("the events missing here are the lane's emulated PMUv3's");
	s = hw_session(configs, 3, false, &self);
	session_count_loop(s, N_LONG, v, 3);
	CHECK(v[0] >= HW_LOOP_INSNS * N_LONG && v[0] < HW_LOOP_INSNS * N_LONG + 1000);
	for (int i = 1; i < 3; i++) {
		CHECK_EQ_INT(perfctr_session__count(s, i, &c), 0);
		CHECK_EQ_INT(c.status, PERFCTR_COUNT_NOT_SUPPORTED);
		CHECK(c.errnum == ENOENT || c.errnum == EOPNOTSUPP);
	}
	perfctr_session__delete(s);
	perfctr_target__delete(self);
}

TEST_MAIN(TEST_CASE(group_counts_loop_exactly),
	  TEST_CASE(multiplexed_events_scale),
	  TEST_CASE(group_larger_than_pmu_keeps_what_fits),
	  TEST_CASE(missing_events_not_supported))
