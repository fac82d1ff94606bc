/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The counter engine (core/engine.h) on real counters: exact tracepoint
 * counts through group and single reads, a group answer matched to its
 * members by id, a leader the machine cannot count replaced by the next
 * member, a PMU's own CPU list, per-group toggles, filters, inherit on a
 * CPU-wide unit, strict opens that leave nothing open, and a single
 * helper event on one position (pc_engine__new_single()).
 */
#include "core/engine.h"
#include "session_util.h"
#include "stream/readfmt.h"

#define GROUP_FMT (PERF_FORMAT_GROUP | PERF_FORMAT_ID |			\
		   PERF_FORMAT_TOTAL_TIME_ENABLED |			\
		   PERF_FORMAT_TOTAL_TIME_RUNNING)

static struct perf_event_attr tp_attr(const char *name, uint64_t fmt)
{
	struct perf_event_attr a;
	long long id = test_tracepoint_id(name);

	REQUIRE(id >= 0);
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.read_format = fmt;
	return a;
}

static struct perf_event_attr sw_attr(uint64_t config, uint64_t fmt)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.read_format = fmt;
	return a;
}

static int add(struct pc_engine *e, const struct perf_event_attr *a,
	       size_t leader)
{
	struct pc_engine_event ev = { .attr = a, .leader = leader };

	return pc_engine__add(e, &ev);
}

static void getppids(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static struct pc_engine *self_engine(struct perfctr_target **t)
{
	struct pc_engine *e;

	*t = perfctr_target__new_self();
	REQUIRE(*t);
	e = pc_engine__new(*t);
	REQUIRE(e);
	return e;
}

TEST(group_read_is_exact)
{
	struct perfctr_target *t;
	struct pc_engine *e;
	struct perf_event_attr a = tp_attr(TP_GETPPID, GROUP_FMT);
	struct perf_event_attr b = tp_attr(TP_GETPID, GROUP_FMT);
	const struct pc_slot *sa, *sb;

	require_tracepoints();
	e = self_engine(&t);
	CHECK_EQ_INT(add(e, &a, 0), 0);
	CHECK_EQ_INT(add(e, &b, 0), 1);
	CHECK_EQ_INT(pc_engine__nr_groups(e), 1);
	REQUIRE(pc_engine__open(e, 0) == 0);
	CHECK_EQ_INT(add(e, &a, 2), -EBUSY);
	CHECK_EQ_INT(pc_engine__open(e, 0), -EBUSY);
	getppids(50);		/* off: not counted */
	REQUIRE(pc_engine__enable(e) == 0);
	getppids(1000);
	for (int i = 0; i < 7; i++)
		syscall(SYS_getpid);
	REQUIRE(pc_engine__disable(e) == 0);
	getppids(50);
	REQUIRE(pc_engine__read(e) == 0);
	sa = pc_engine__slot(e, 0, 0);
	sb = pc_engine__slot(e, 1, 0);
	REQUIRE(sa && sb);
	CHECK_EQ_U64(sa->count.value, 1000);
	CHECK_EQ_U64(sb->count.value, 7);
	CHECK_EQ_INT(sa->count.status, PERFCTR_COUNT_OK);
	CHECK(sa->count.time_enabled > 0);
	CHECK_EQ_U64(sa->count.time_enabled, sb->count.time_enabled);
	CHECK_EQ_INT(pc_engine__leader_fd(e, 0, 0), sa->fd);
	CHECK(sa->page == NULL);	/* no PC_ENGINE_MMAP */
	REQUIRE(pc_engine__reset(e) == 0);
	REQUIRE(pc_engine__read(e) == 0);
	CHECK_EQ_U64(sa->count.value, 0);
	pc_engine__close(e);
	CHECK_EQ_INT(pc_engine__fd(e, 0, 0), -1);
	CHECK_EQ_INT(pc_engine__leader_fd(e, 0, 0), -1);
	CHECK(sb->count.time_enabled > 0);	/* counts stay */
	CHECK_EQ_INT(pc_engine__read(e), 0);
	pc_engine__delete(e);
	perfctr_target__delete(t);
}

TEST(single_reads_without_group_format)
{
	/* The sampler's counters: no group format, each fd read alone,
	 * with ids and lost counts decoded the same way. */
	struct perfctr_target *t;
	struct pc_engine *e;
	uint64_t fmt = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
		       PERF_FORMAT_TOTAL_TIME_RUNNING;
	struct perf_event_attr a = tp_attr(TP_GETPPID, fmt);
	struct perf_event_attr b = tp_attr(TP_GETPPID, 0);
	const struct pc_slot *sa, *sb;

	require_tracepoints();
	e = self_engine(&t);
	CHECK_EQ_INT(add(e, &a, 0), 0);
	CHECK_EQ_INT(add(e, &b, 1), 1);
	REQUIRE(pc_engine__open(e, PC_ENGINE_ENABLE) == 0);
	getppids(300);
	REQUIRE(pc_engine__read(e) == 0);
	sa = pc_engine__slot(e, 0, 0);
	sb = pc_engine__slot(e, 1, 0);
	CHECK_EQ_U64(sa->count.value, 300);
	CHECK(sa->count.time_running > 0);
	CHECK_EQ_INT(sa->count.status, PERFCTR_COUNT_OK);
	/* No times in the format: it answered, so it counted. */
	CHECK_EQ_U64(sb->count.value, 300);
	CHECK_EQ_U64(sb->count.time_running, 0);
	CHECK_EQ_INT(sb->count.status, PERFCTR_COUNT_OK);
	pc_engine__delete(e);
	perfctr_target__delete(t);
}

TEST(group_answer_matched_by_id)
{
	/* A synthetic answer in another order than the members, with an id
	 * nobody has and a member that is not open. */
	struct perfctr_target *t;
	struct pc_engine *e;
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_DUMMY, GROUP_FMT);
	struct pc_slot *s[3];

	e = self_engine(&t);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(add(e, &a, 0), i);
	REQUIRE(pc_engine__open(e, 0) == 0);
	for (int i = 0; i < 3; i++) {
		s[i] = pc_engine__slot(e, (size_t)i, 0);
		REQUIRE(s[i] && s[i]->fd >= 0);
		s[i]->id = 10 * (uint64_t)(i + 1);
	}
	{
		const uint64_t ans[] = { 3, 1000, 400, 7, 30, 5, 10, 6, 20 };

		CHECK_EQ_INT(pc_engine__decode_group(e, 0, 0, ans, sizeof(ans)), 0);
		CHECK_EQ_U64(s[0]->count.value, 5);
		CHECK_EQ_U64(s[1]->count.value, 6);
		CHECK_EQ_U64(s[2]->count.value, 7);
		CHECK_EQ_U64(s[2]->count.time_enabled, 1000);
		CHECK_EQ_U64(s[2]->count.time_running, 400);
		CHECK_EQ_INT(s[2]->count.status, PERFCTR_COUNT_OK);
	}
	{
		const uint64_t never[] = { 3, 1000, 0, 0, 10, 0, 20, 0, 30 };

		CHECK_EQ_INT(pc_engine__decode_group(e, 0, 0, never, sizeof(never)), 0);
		for (int i = 0; i < 3; i++)
			CHECK_EQ_INT(s[i]->count.status, PERFCTR_COUNT_NOT_COUNTED);
	}
	{
		/* An id nobody has: member 1 keeps its count. */
		const uint64_t ans[] = { 3, 50, 50, 1, 10, 2, 99, 3, 30 };

		s[1]->count.value = 42;
		CHECK_EQ_INT(pc_engine__decode_group(e, 0, 0, ans, sizeof(ans)), 0);
		CHECK_EQ_U64(s[0]->count.value, 1);
		CHECK_EQ_U64(s[1]->count.value, 42);
		CHECK_EQ_U64(s[2]->count.value, 3);
	}
	{
		/* Two members answer (the third failed to open, say). */
		const uint64_t two[] = { 2, 60, 60, 8, 10, 9, 30 };

		CHECK_EQ_INT(pc_engine__decode_group(e, 0, 0, two, sizeof(two)), 0);
		CHECK_EQ_U64(s[0]->count.value, 8);
		CHECK_EQ_U64(s[1]->count.value, 42);
		CHECK_EQ_U64(s[2]->count.value, 9);
	}
	{
		const uint64_t too_many[] = { 4, 10, 10, 9, 10, 9, 20, 9, 30, 9, 40 };
		const uint64_t shorty[] = { 3, 10, 10, 9, 10 };

		CHECK_EQ_INT(pc_engine__decode_group(e, 0, 0, too_many, sizeof(too_many)), -EIO);
		CHECK_EQ_INT(pc_engine__decode_group(e, 0, 0, shorty, sizeof(shorty)), -EIO);
		CHECK_EQ_U64(s[0]->count.value, 8);	/* the last good values */
	}
	pc_engine__delete(e);
	perfctr_target__delete(t);
}

TEST(unsupported_leader_is_replaced)
{
	/* A software config no kernel has: EINVAL, "cannot count here".
	 * The next member leads the group and counts exactly. */
	struct perfctr_target *t;
	struct pc_engine *e;
	struct perf_event_attr bad = sw_attr(9999, GROUP_FMT);
	struct perf_event_attr a = tp_attr(TP_GETPPID, GROUP_FMT);
	struct perf_event_attr b = tp_attr(TP_GETPID, GROUP_FMT);
	const struct pc_slot *s0, *s1, *s2;

	require_tracepoints();
	e = self_engine(&t);
	add(e, &bad, 0);
	add(e, &a, 0);
	add(e, &b, 0);
	REQUIRE(pc_engine__open(e, PC_ENGINE_ENABLE) == 0);
	s0 = pc_engine__slot(e, 0, 0);
	s1 = pc_engine__slot(e, 1, 0);
	s2 = pc_engine__slot(e, 2, 0);
	CHECK_EQ_INT(s0->fd, -1);
	CHECK(s0->open_err != 0);
	CHECK_EQ_INT(s0->count.status, PERFCTR_COUNT_NOT_SUPPORTED);
	CHECK_EQ_INT(pc_engine__leader_fd(e, 0, 0), s1->fd);
	getppids(100);
	syscall(SYS_getpid);
	REQUIRE(pc_engine__read(e) == 0);
	CHECK_EQ_U64(s1->count.value, 100);
	CHECK_EQ_U64(s2->count.value, 1);
	CHECK_EQ_INT(s0->count.status, PERFCTR_COUNT_NOT_SUPPORTED);
	pc_engine__delete(e);
	perfctr_target__delete(t);
}

TEST(strict_open_fails_and_closes_everything)
{
	struct perfctr_target *t;
	struct pc_engine *e;
	struct perf_event_attr ok = sw_attr(PERF_COUNT_SW_TASK_CLOCK, GROUP_FMT);
	struct perf_event_attr bad = sw_attr(9999, GROUP_FMT);
	int before = count_open_fds();

	e = self_engine(&t);
	add(e, &ok, 0);
	add(e, &ok, 1);
	add(e, &bad, 1);
	CHECK(pc_engine__open(e, PC_ENGINE_STRICT) < 0);
	CHECK_EQ_INT(count_open_fds(), before);
	CHECK(pc_engine__slot(e, 0, 0) == NULL);
	/* Not opened: a second try is allowed, and without STRICT works. */
	CHECK_EQ_INT(pc_engine__open(e, 0), 0);
	CHECK(pc_engine__fd(e, 0, 0) >= 0);
	pc_engine__delete(e);
	CHECK_EQ_INT(count_open_fds(), before);
	perfctr_target__delete(t);
}

TEST(pmu_cpu_list_and_cpu_units)
{
	/* Two CPU units; the event's PMU covers CPU 0 only: unsupported
	 * (ENODEV) on the other, opened on CPU 0.  inherit is dropped on a
	 * CPU-wide unit instead of failing the open. */
	struct perfctr_target *t = perfctr_target__new_cpus(NULL);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, GROUP_FMT);
	static const int cpu0[] = { 0 };
	struct pc_engine_event ev = { .attr = &a, .leader = 0,
				      .cpus = cpu0, .nr_cpus = 1 };
	struct pc_engine *e;
	size_t nu;

	REQUIRE(t);
	nu = perfctr_target__nr_units(t);
	if (nu < 2) {
		perfctr_target__delete(t);
		test_skip("one online CPU");
	}
	a.inherit = 1;
	e = pc_engine__new(t);
	REQUIRE(e);
	CHECK_EQ_INT(pc_engine__add(e, &ev), 0);
	REQUIRE(pc_engine__open(e, PC_ENGINE_ENABLE) == 0);
	for (size_t u = 0; u < nu; u++) {
		const struct pc_unit *unit = pc_engine__unit(e, u);
		const struct pc_slot *s = pc_engine__slot(e, 0, u);

		CHECK_EQ_INT(unit->tid, -1);
		if (unit->cpu == 0) {
			CHECK(s->fd >= 0);
		} else {
			CHECK_EQ_INT(s->fd, -1);
			CHECK_EQ_INT(s->open_err, ENODEV);
			CHECK_EQ_INT(s->count.errnum, ENODEV);
		}
	}
	CHECK_EQ_INT(pc_engine__read(e), 0);
	pc_engine__delete(e);
	perfctr_target__delete(t);
}

TEST(toggle_one_group)
{
	/* Rotation's need: groups toggled one at a time. */
	struct perfctr_target *t;
	struct pc_engine *e;
	struct perf_event_attr a = tp_attr(TP_GETPPID, GROUP_FMT);

	require_tracepoints();
	e = self_engine(&t);
	add(e, &a, 0);
	add(e, &a, 1);
	REQUIRE(pc_engine__open(e, 0) == 0);
	CHECK_EQ_INT(pc_engine__toggle_group(e, 1, 0, PC_ENGINE_OP_ENABLE), 0);
	getppids(20);
	CHECK_EQ_INT(pc_engine__toggle_group(e, 1, PC_ENGINE_ALL_UNITS,
					     PC_ENGINE_OP_DISABLE), 0);
	CHECK_EQ_INT(pc_engine__toggle_group(e, 0, 0, PC_ENGINE_OP_ENABLE), 0);
	getppids(30);
	CHECK_EQ_INT(pc_engine__read_group(e, 0, 0), 0);
	CHECK_EQ_INT(pc_engine__read_group(e, 1, 0), 0);
	CHECK_EQ_U64(pc_engine__slot(e, 0, 0)->count.value, 30);
	CHECK_EQ_U64(pc_engine__slot(e, 1, 0)->count.value, 20);
	CHECK_EQ_INT(pc_engine__toggle_group(e, 1, 0, PC_ENGINE_OP_RESET), 0);
	CHECK_EQ_INT(pc_engine__read_group(e, 1, 0), 0);
	CHECK_EQ_U64(pc_engine__slot(e, 1, 0)->count.value, 0);
	CHECK_EQ_INT(pc_engine__toggle_group(e, 2, 0, PC_ENGINE_OP_ENABLE), -EINVAL);
	CHECK_EQ_INT(pc_engine__read_group(e, 0, 1), -EINVAL);
	pc_engine__delete(e);
	perfctr_target__delete(t);
}

TEST(filter_applies_before_counting)
{
	struct perfctr_target *t;
	struct pc_engine *e;
	struct perf_event_attr a = tp_attr(TP_GETPPID, GROUP_FMT);
	struct pc_engine_event none = { .attr = &a, .leader = 0,
					.filter = "common_pid == 1" };
	struct pc_engine_event mine = { .attr = &a, .leader = 1 };
	struct pc_engine_event bad = { .attr = &a, .leader = 0,
				       .filter = "no_such_field == 1" };
	char f[64];

	require_tracepoints();
	snprintf(f, sizeof(f), "common_pid == %d", (int)getpid());
	mine.filter = f;
	e = self_engine(&t);
	CHECK_EQ_INT(pc_engine__add(e, &none), 0);
	CHECK_EQ_INT(pc_engine__add(e, &mine), 1);
	REQUIRE(pc_engine__open(e, PC_ENGINE_ENABLE) == 0);
	getppids(40);
	REQUIRE(pc_engine__read(e) == 0);
	CHECK_EQ_U64(pc_engine__slot(e, 0, 0)->count.value, 0);
	CHECK_EQ_U64(pc_engine__slot(e, 1, 0)->count.value, 40);
	pc_engine__delete(e);

	/* A filter the kernel refuses fails the open, nothing left open. */
	{
		int before = count_open_fds();

		e = pc_engine__new(t);
		REQUIRE(e);
		CHECK_EQ_INT(pc_engine__add(e, &bad), 0);
		CHECK(pc_engine__open(e, 0) < 0);
		CHECK_EQ_INT(count_open_fds(), before);
		pc_engine__delete(e);
	}
	perfctr_target__delete(t);
}

TEST(thread_spread_over_cpus)
{
	/* The sampler's positions for inherited rings: this thread on each
	 * CPU given; the counts add up to the thread's exact total. */
	struct perfctr_target *t = perfctr_target__new_self();
	struct perf_event_attr a = tp_attr(TP_GETPPID, 0);
	static const int cpus[] = { 0, 1 };
	struct pc_engine *e;
	uint64_t sum = 0;

	require_tracepoints();
	REQUIRE(t);
	a.inherit = 1;
	e = pc_engine__new_per_cpu(t, cpus, 2);
	REQUIRE(e);
	CHECK_EQ_INT(pc_engine__nr_units(e), 2);
	CHECK_EQ_INT(pc_engine__unit(e, 1)->cpu, 1);
	CHECK_EQ_INT(pc_engine__unit(e, 1)->tid, pc_self_tid());
	CHECK_EQ_INT(add(e, &a, 0), 0);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		pc_engine__delete(e);
		perfctr_target__delete(t);
		test_skip("one online CPU");
	}
	REQUIRE(pc_engine__open(e, PC_ENGINE_ENABLE) == 0);
	getppids(123);
	REQUIRE(pc_engine__read(e) == 0);
	for (size_t u = 0; u < 2; u++)
		sum += pc_engine__slot(e, 0, u)->count.value;
	CHECK_EQ_U64(sum, 123);
	pc_engine__delete(e);

	/* NULL: the online CPUs. */
	e = pc_engine__new_per_cpu(t, NULL, 0);
	REQUIRE(e);
	CHECK_EQ_INT(pc_engine__nr_units(e), sysconf(_SC_NPROCESSORS_ONLN));
	pc_engine__delete(e);
	CHECK(pc_engine__new_per_cpu(t, cpus, 0) == NULL);
	perfctr_target__delete(t);
}

TEST(bad_adds_refused)
{
	struct perfctr_target *t;
	struct pc_engine *e;
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, GROUP_FMT);

	e = self_engine(&t);
	CHECK_EQ_INT(add(e, &a, 1), -EINVAL);	/* leader after it */
	CHECK_EQ_INT(add(e, NULL, 0), -EINVAL);
	CHECK_EQ_INT(pc_engine__open(e, 0), -EINVAL);	/* no events */
	CHECK_EQ_INT(add(e, &a, 0), 0);
	CHECK_EQ_INT(add(e, &a, 0), 1);
	CHECK_EQ_INT(add(e, &a, 1), -EINVAL);	/* 1 is a member */
	CHECK_EQ_INT(pc_engine__group_size(e, 0), 2);
	CHECK_EQ_INT(pc_engine__group_member(e, 0, 1), 1);
	CHECK_EQ_INT(pc_engine__group_of(e, 1), 0);
	CHECK(pc_engine__slot(e, 0, 0) == NULL);	/* before the open */
	pc_engine__delete(e);
	perfctr_target__delete(t);
	CHECK(pc_engine__new(NULL) == NULL);
}

TEST(single_event_on_a_position)
{
	struct perf_event_attr tp = tp_attr("syscalls:sys_enter_getppid", 0);
	struct perf_event_attr bad = sw_attr(9999, 0);
	struct pc_engine *e;
	int before = count_open_fds(), fd = -1;
	uint64_t v = 0;

	/* Opened disabled, on this thread on any CPU: counts only once
	 * enabled, exactly. */
	tp.disabled = 0;
	e = pc_engine__new_single(&tp, (pid_t)syscall(SYS_gettid), -1, &fd);
	REQUIRE(e);
	CHECK(fd >= 0);
	CHECK_EQ_INT(pc_engine__fd(e, 0, 0), fd);
	getppids(5);
	CHECK_EQ_INT(pc_engine__enable(e), 0);
	getppids(7);
	CHECK_EQ_INT(pc_engine__disable(e), 0);
	CHECK(read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v));
	CHECK_EQ_U64(v, 7);
	pc_engine__delete(e);
	CHECK_EQ_INT(count_open_fds(), before);

	/* What cannot be opened fails with the open's errno, nothing open. */
	fd = -1;
	errno = 0;
	CHECK(pc_engine__new_single(&bad, 0, -1, &fd) == NULL);
	CHECK(errno == ENOENT || errno == EINVAL || errno == EOPNOTSUPP);
	CHECK_EQ_INT(fd, -1);
	CHECK_EQ_INT(count_open_fds(), before);
	errno = 0;
	CHECK(pc_engine__new_single(NULL, 0, -1, &fd) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
}

TEST_MAIN(TEST_CASE(group_read_is_exact),
	  TEST_CASE(single_reads_without_group_format),
	  TEST_CASE(group_answer_matched_by_id),
	  TEST_CASE(unsupported_leader_is_replaced),
	  TEST_CASE(strict_open_fails_and_closes_everything),
	  TEST_CASE(pmu_cpu_list_and_cpu_units),
	  TEST_CASE(toggle_one_group),
	  TEST_CASE(filter_applies_before_counting),
	  TEST_CASE(thread_spread_over_cpus),
	  TEST_CASE(bad_adds_refused),
	  TEST_CASE(single_event_on_a_position))
