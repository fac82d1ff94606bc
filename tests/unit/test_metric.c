// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of the derived metrics (metric/): which metrics appear, with
 * which values, and which are withheld because their events did not count
 * over the same time. */
#include <errno.h>
#include <math.h>

#include <perfctr/metric.h>

#include "test.h"

#define MS 1000000ull

static struct perfctr_metric_input ev(const char *name, uint64_t value,
				      uint64_t enabled, uint64_t running,
				      size_t group)
{
	struct perfctr_metric_input in = {
		.name = name,
		.count = { .value = value, .time_enabled = enabled,
			   .time_running = running,
			   .status = running ? PERFCTR_COUNT_OK
					     : PERFCTR_COUNT_NOT_COUNTED },
		.group = group,
	};
	return in;
}

static const struct perfctr_metric *find(const struct perfctr_metric *m,
					 int n, const char *name, size_t event)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(m[i].name, name) && m[i].event == event)
			return &m[i];
	return NULL;
}

static bool close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b));
}

TEST(default_set_full_time)
{
	struct perfctr_metric_input in[] = {
		ev("task-clock", 50 * MS, 100 * MS, 100 * MS, 0),
		ev("context-switches", 10, 100 * MS, 100 * MS, 1),
		ev("cycles", 200000000, 100 * MS, 100 * MS, 2),
		ev("instructions", 300000000, 100 * MS, 100 * MS, 3),
		ev("branches", 1000, 100 * MS, 100 * MS, 4),
		ev("branch-misses", 25, 100 * MS, 100 * MS, 5),
	};
	struct perfctr_metric m[16];
	const struct perfctr_metric *x;
	int n = perfctr_metric__compute(in, 6, 100.0 * MS, m, 16);

	CHECK_EQ_INT(n, 7);
	REQUIRE((x = find(m, n, "cpus-utilized", 0)));
	CHECK(close_to(x->value, 0.5));
	CHECK_EQ_U64(x->other, (size_t)-1);
	REQUIRE((x = find(m, n, "rate", 1)));
	CHECK(close_to(x->value, 200.0));	/* 10 per 50 ms of task-clock */
	REQUIRE((x = find(m, n, "ghz", 2)));
	CHECK(close_to(x->value, 4.0));
	REQUIRE((x = find(m, n, "ipc", 3)));
	CHECK(close_to(x->value, 1.5));
	CHECK_EQ_U64(x->other, 2);
	REQUIRE((x = find(m, n, "cpi", 3)));
	CHECK(close_to(x->value, 2.0 / 3.0));
	REQUIRE((x = find(m, n, "rate", 4)));
	CHECK(close_to(x->value, 20000.0));
	REQUIRE((x = find(m, n, "branch-miss-ratio", 5)));
	CHECK(close_to(x->value, 2.5));
	CHECK_STR(x->unit, "% of all branches");
	/* Ordered by event. */
	for (int i = 1; i < n; i++)
		CHECK(m[i - 1].event <= m[i].event);
}

TEST(multiplexed_pair_gives_no_metric)
{
	/* Different groups, each on a counter half the time: the periods need
	 * not overlap, so no IPC. */
	struct perfctr_metric_input in[] = {
		ev("cycles", 100, 100, 50, 0),
		ev("instructions", 100, 100, 50, 1),
	};
	struct perfctr_metric m[4];

	CHECK_EQ_INT(perfctr_metric__compute(in, 2, 0, m, 4), 0);
	CHECK(!perfctr_metric__together(&in[0], &in[1]));
}

TEST(same_group_multiplexed_still_pairs)
{
	/* One group is scheduled as a unit: a ratio of its members is exact. */
	struct perfctr_metric_input in[] = {
		ev("cycles", 100, 100, 50, 7),
		ev("instructions", 250, 100, 50, 7),
	};
	struct perfctr_metric m[4];
	const struct perfctr_metric *x;
	int n = perfctr_metric__compute(in, 2, 0, m, 4);

	CHECK_EQ_INT(n, 2);
	REQUIRE((x = find(m, n, "ipc", 1)));
	CHECK(close_to(x->value, 2.5));
	CHECK(perfctr_metric__together(&in[0], &in[1]));
}

TEST(not_counted_and_unsupported_give_nothing)
{
	struct perfctr_metric_input in[] = {
		ev("task-clock", 10 * MS, 10 * MS, 10 * MS, 0),
		ev("cycles", 0, 10 * MS, 0, 1),			/* not counted */
		ev("instructions", 0, 0, 0, 2),
		ev("page-faults", 40, 10 * MS, 10 * MS, 3),
	};
	struct perfctr_metric m[8];
	int n;

	in[2].count.status = PERFCTR_COUNT_NOT_SUPPORTED;
	n = perfctr_metric__compute(in, 4, 20.0 * MS, m, 8);
	CHECK_EQ_INT(n, 2);
	CHECK(find(m, n, "cpus-utilized", 0) != NULL);
	CHECK(find(m, n, "rate", 3) != NULL);
	CHECK(close_to(find(m, n, "rate", 3)->value, 4000.0));
}

TEST(modifiers_pair_with_the_same_modifiers)
{
	struct perfctr_metric_input in[] = {
		ev("cycles:k", 1000, 10, 10, 0),
		ev("cycles:u", 400, 10, 10, 1),
		ev("instructions:u", 800, 10, 10, 2),
		ev("cpu-cycles:k", 1, 10, 10, 3),
		ev("instructions:k", 3000, 10, 10, 4),
	};
	struct perfctr_metric m[16];
	const struct perfctr_metric *x;
	int n = perfctr_metric__compute(in, 5, 0, m, 16);

	REQUIRE((x = find(m, n, "ipc", 2)));
	CHECK(close_to(x->value, 2.0));
	CHECK_EQ_U64(x->other, 1);
	/* First partner with the same modifiers, aliases folded. */
	REQUIRE((x = find(m, n, "ipc", 4)));
	CHECK_EQ_U64(x->other, 0);
	CHECK(close_to(x->value, 3.0));
}

TEST(own_group_partner_preferred)
{
	struct perfctr_metric_input in[] = {
		ev("cycles", 1000, 10, 10, 0),
		ev("cycles", 500, 10, 10, 1),
		ev("instructions", 1000, 10, 10, 1),
	};
	struct perfctr_metric m[8];
	const struct perfctr_metric *x;
	int n = perfctr_metric__compute(in, 3, 0, m, 8);

	REQUIRE((x = find(m, n, "ipc", 2)));
	CHECK_EQ_U64(x->other, 1);
	CHECK(close_to(x->value, 2.0));
}

TEST(ratio_table)
{
	static const struct {
		const char *miss, *of, *metric;
	} rows[] = {
		{ "branch-misses", "branches", "branch-miss-ratio" },
		{ "branch-misses", "branch-instructions", "branch-miss-ratio" },
		{ "cache-misses", "cache-references", "cache-miss-ratio" },
		{ "L1-dcache-load-misses", "L1-dcache-loads", "l1d-miss-ratio" },
		{ "L1-icache-load-misses", "L1-icache-loads", "l1i-miss-ratio" },
		{ "LLC-load-misses", "LLC-loads", "llc-miss-ratio" },
		{ "dTLB-load-misses", "dTLB-loads", "dtlb-miss-ratio" },
		{ "iTLB-load-misses", "iTLB-loads", "itlb-miss-ratio" },
		{ "stalled-cycles-frontend", "cycles", "frontend-stall-ratio" },
		{ "stalled-cycles-backend", "cpu-cycles", "backend-stall-ratio" },
		{ "idle-cycles-backend", "cycles", "backend-stall-ratio" },
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct perfctr_metric_input in[] = {
			ev(rows[r].of, 400, 10, 10, 0),
			ev(rows[r].miss, 10, 10, 10, 0),
		};
		struct perfctr_metric m[8];
		const struct perfctr_metric *x;
		int n = perfctr_metric__compute(in, 2, 0, m, 8);

		x = find(m, n, rows[r].metric, 1);
		if (!x) {
			test_fail(__FILE__, __LINE__, "row %zu: no %s", r,
				  rows[r].metric);
			continue;
		}
		CHECK(close_to(x->value, 2.5));
	}
}

TEST(tracepoint_names_are_not_modifiers)
{
	/* "syscalls:sys_enter_getppid" is a name, not "syscalls" + modifiers:
	 * it gets a rate against task-clock. */
	struct perfctr_metric_input in[] = {
		ev("syscalls:sys_enter_getppid", 1000, 10, 10, 0),
		ev("task-clock", 2 * MS, 10, 10, 1),
		ev("sched:sched_switch:u", 0, 10, 10, 2),
	};
	struct perfctr_metric m[8];
	const struct perfctr_metric *x;
	int n = perfctr_metric__compute(in, 3, 0, m, 8);

	REQUIRE((x = find(m, n, "rate", 0)));
	CHECK(close_to(x->value, 500000.0));
	REQUIRE((x = find(m, n, "rate", 2)));
	CHECK(close_to(x->value, 0.0));
	/* No wall time: no CPUs utilised. */
	CHECK(find(m, n, "cpus-utilized", 1) == NULL);
}

TEST(capacity_and_arguments)
{
	struct perfctr_metric_input in[] = {
		ev("task-clock", 10, 10, 10, 0),
		ev("page-faults", 1, 10, 10, 1),
		ev("context-switches", 1, 10, 10, 2),
	};
	struct perfctr_metric m[1];

	CHECK_EQ_INT(perfctr_metric__compute(in, 3, 10, NULL, 0), 3);
	CHECK_EQ_INT(perfctr_metric__compute(in, 3, 10, m, 1), 3);
	CHECK_STR(m[0].name, "cpus-utilized");
	CHECK_EQ_INT(perfctr_metric__compute(NULL, 1, 10, m, 1), -EINVAL);
	CHECK_EQ_INT(perfctr_metric__compute(in, 1, 10, NULL, 1), -EINVAL);
	CHECK_EQ_INT(perfctr_metric__compute(NULL, 0, 10, NULL, 0), 0);
	/* Zero clock: no division by zero, no rate. */
	in[0].count.value = 0;
	CHECK_EQ_INT(perfctr_metric__compute(in, 3, 10, m, 1), 1);
}

TEST_MAIN(TEST_CASE(default_set_full_time),
	  TEST_CASE(multiplexed_pair_gives_no_metric),
	  TEST_CASE(same_group_multiplexed_still_pairs),
	  TEST_CASE(not_counted_and_unsupported_give_nothing),
	  TEST_CASE(modifiers_pair_with_the_same_modifiers),
	  TEST_CASE(own_group_partner_preferred),
	  TEST_CASE(ratio_table),
	  TEST_CASE(tracepoint_names_are_not_modifiers),
	  TEST_CASE(capacity_and_arguments))
