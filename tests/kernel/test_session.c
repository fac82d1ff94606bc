// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Sessions on this process: exact tracepoint counts for the calling
 * thread, groups read at once, start/stop/reset, detach and re-attach,
 * "not counted" and "not supported" apart, per-thread isolation and
 * breakdown, breakpoints, CPU-list targets with a common_pid filter.
 */
#include <pthread.h>
#include <linux/hw_breakpoint.h>
#include <sched.h>

#include "session_util.h"

TEST(self_getppid_exact)
{
	static const long ns[] = { 0, 1, 1000, 100000 };
	size_t i;

	require_tracepoints();
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		struct perfctr_session *s = session_with(TP_GETPPID, 0);
		struct perfctr_target *t = perfctr_target__new_self();
		struct perfctr_count c;

		REQUIRE(t);
		REQUIRE(perfctr_session__attach(s, t) == 0);
		do_getppid(3);			/* attached, not started */
		CHECK_EQ_INT(perfctr_session__start(s), 0);
		do_getppid(ns[i]);
		CHECK_EQ_INT(perfctr_session__stop(s), 0);
		do_getppid(5);			/* stopped */
		CHECK_EQ_INT(perfctr_session__read(s), 0);
		CHECK_EQ_INT(perfctr_session__count(s, 0, &c), 0);
		CHECK_EQ_U64(c.value, ns[i]);
		CHECK_EQ_INT(c.status, PERFCTR_COUNT_OK);
		CHECK(c.time_enabled > 0);
		CHECK_EQ_U64(c.time_running, c.time_enabled);
		CHECK(perfctr_count__scaled(&c) == (double)ns[i]);
		CHECK_EQ_U64(perfctr_session__nr_units(s), 1);
		perfctr_session__delete(s);
		perfctr_target__delete(t);
	}
}

TEST(enable_on_attach)
{
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_target *t = perfctr_target__new_self();

	require_tracepoints();
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	do_getppid(42);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 42);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(group_read_at_once)
{
	struct perfctr_session *s;
	struct perfctr_target *t = perfctr_target__new_self();
	const struct perf_event_attr *attr;
	struct perfctr_count c[4];
	int i;

	require_tracepoints();
	s = session_with("{" TP_GETPPID "," TP_GETPID ",task-clock}," TP_GETPPID, 0);
	REQUIRE(t);
	REQUIRE(perfctr_session__nr_events(s) == 4);
	CHECK_EQ_U64(perfctr_session__event_leader(s, 0), 0);
	CHECK_EQ_U64(perfctr_session__event_leader(s, 1), 0);
	CHECK_EQ_U64(perfctr_session__event_leader(s, 2), 0);
	CHECK_EQ_U64(perfctr_session__event_leader(s, 3), 3);
	CHECK_STR(perfctr_session__event_name(s, 0), TP_GETPPID);
	CHECK_STR(perfctr_session__event_name(s, 2), "task-clock");
	CHECK(perfctr_session__event_name(s, 4) == NULL);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	attr = perfctr_session__event_attr(s, 0);
	REQUIRE(attr);
	CHECK_EQ_U64(attr->read_format, PERF_FORMAT_GROUP | PERF_FORMAT_ID |
		     PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
	CHECK_EQ_INT(attr->disabled, 1);
	CHECK_EQ_INT(perfctr_session__event_attr(s, 1)->disabled, 0);
	CHECK_EQ_INT(perfctr_session__start(s), 0);
	do_getppid(1000);
	do_getpid(77);
	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	for (i = 0; i < 4; i++)
		CHECK_EQ_INT(perfctr_session__count(s, i, &c[i]), 0);
	CHECK_EQ_U64(c[0].value, 1000);
	CHECK_EQ_U64(c[1].value, 77);
	CHECK(c[2].value > 0);			/* task-clock, ns */
	CHECK_EQ_U64(c[3].value, 1000);
	/* One group, one read: the members share the leader's times. */
	CHECK_EQ_U64(c[1].time_enabled, c[0].time_enabled);
	CHECK_EQ_U64(c[2].time_running, c[0].time_running);
	for (i = 0; i < 4; i++)
		CHECK_EQ_INT(c[i].status, PERFCTR_COUNT_OK);
	CHECK_EQ_INT(perfctr_session__count(s, 4, &c[0]), -EINVAL);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(start_stop_windows_accumulate)
{
	struct perfctr_session *s = session_with("{task-clock," TP_GETPPID "}", 0);
	struct perfctr_target *t = perfctr_target__new_self();

	require_tracepoints();
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	for (int w = 1; w <= 5; w++) {
		CHECK_EQ_INT(perfctr_session__start(s), 0);
		do_getppid(w * 10);
		CHECK_EQ_INT(perfctr_session__stop(s), 0);
		do_getppid(1000);
	}
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	/* a member of another PMU than its leader counts in every window */
	CHECK_EQ_U64(value_of(s, 1), 10 + 20 + 30 + 40 + 50);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(reset_zeroes)
{
	struct perfctr_session *s = session_with("{" TP_GETPPID "," TP_GETPID "}", 0);
	struct perfctr_target *t = perfctr_target__new_self();

	require_tracepoints();
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_session__start(s), 0);
	do_getppid(500);
	do_getpid(5);
	CHECK_EQ_INT(perfctr_session__reset(s), 0);
	do_getppid(7);
	do_getpid(3);
	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 7);
	CHECK_EQ_U64(value_of(s, 1), 3);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(not_counted_is_not_zero)
{
	struct perfctr_session *s = session_with(TP_GETPPID, 0);
	struct perfctr_target *t = perfctr_target__new_self();
	struct perfctr_count c;

	require_tracepoints();
	REQUIRE(t);
	/* Before any attach: nothing counted, no unit. */
	CHECK_EQ_INT(perfctr_session__count(s, 0, &c), 0);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_NOT_COUNTED);
	CHECK_EQ_U64(perfctr_session__nr_units(s), 0);
	/* Attached, never started: opened but never ran. */
	REQUIRE(perfctr_session__attach(s, t) == 0);
	do_getppid(10);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_INT(perfctr_session__count(s, 0, &c), 0);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_NOT_COUNTED);
	CHECK_EQ_U64(c.time_running, 0);
	CHECK_EQ_U64(c.value, 0);
	CHECK(perfctr_count__fraction(&c) == 0.0);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

/* The first generic hardware event this machine cannot count (all of
 * them without a PMU; cache-misses on the PMU lane's PMUv3), or NULL. */
static const char *unsupported_hw_event(void)
{
	static const struct { const char *name; uint64_t config; } rows[] = {
		{ "cycles", PERF_COUNT_HW_CPU_CYCLES },
		{ "cache-misses", PERF_COUNT_HW_CACHE_MISSES },
		{ "bus-cycles", PERF_COUNT_HW_BUS_CYCLES },
	};
	struct perf_event_attr attr;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		long fd;

		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = rows[i].config;
		attr.exclude_kernel = 1;
		attr.disabled = 1;
		fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
		if (fd < 0 && errno == ENOENT)
			return rows[i].name;
		if (fd >= 0)
			close((int)fd);
	}
	return NULL;
}

TEST(not_supported_hardware_event)
{
	struct perfctr_session *s;
	struct perfctr_target *t = perfctr_target__new_self();
	struct perfctr_count c;

	const char *hw = unsupported_hw_event();
	char spec[256];

	require_tracepoints();
	if (!hw)
		test_skip("this machine counts cycles, cache-misses and bus-cycles");
	REQUIRE(t);
	/* The event alone, and leading a group whose other member must
	 * still count: it leads the group in the leader's place. */
	snprintf(spec, sizeof(spec), "%s,{%s:u," TP_GETPPID "}," TP_GETPID, hw, hw);
	s = session_with(spec, 0);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_session__start(s), 0);
	do_getppid(300);
	do_getpid(30);
	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(perfctr_session__count(s, i, &c), 0);
		CHECK_EQ_INT(c.status, PERFCTR_COUNT_NOT_SUPPORTED);
		CHECK_EQ_INT(c.errnum, ENOENT);
		CHECK_EQ_U64(c.value, 0);
		CHECK_EQ_INT(perfctr_session__unit_count(s, i, 0, &c), 0);
		CHECK_EQ_INT(c.status, PERFCTR_COUNT_NOT_SUPPORTED);
	}
	CHECK_EQ_U64(value_of(s, 2), 300);
	CHECK_EQ_U64(value_of(s, 3), 30);
	CHECK_EQ_INT(perfctr_session__count(s, 2, &c), 0);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_OK);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(strict_fails_and_rolls_back)
{
	struct perfctr_session *s;
	struct perfctr_target *t = perfctr_target__new_self();
	const char *hw = unsupported_hw_event();
	char spec[256];
	int before, rc;

	require_tracepoints();
	if (!hw)
		test_skip("this machine counts cycles, cache-misses and bus-cycles");
	REQUIRE(t);
	snprintf(spec, sizeof(spec), TP_GETPPID ",task-clock,%s", hw);
	s = session_with(spec, PERFCTR_SESSION_STRICT);
	before = count_open_fds();
	rc = perfctr_session__attach(s, t);
	CHECK_EQ_INT(rc, -ENOENT);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK_EQ_INT(count_open_fds(), before);
	/* Still detached and usable: events can be added, attach again. */
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(perfctr_session__nr_units(s), 0);
	CHECK_EQ_INT(perfctr_session__add_events(s, TP_GETPID, NULL), 1);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(detach_keeps_values_reattach_continues)
{
	struct perfctr_session *s = session_with("{" TP_GETPPID ",task-clock}", 0);
	struct perfctr_target *t = perfctr_target__new_self();
	struct perfctr_count c1, c2;

	require_tracepoints();
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_session__attach(s, t), -EBUSY);
	CHECK_EQ_INT(perfctr_session__add_events(s, TP_GETPID, NULL), -EBUSY);
	CHECK_EQ_INT(perfctr_session__set_filter(s, 0, "common_pid == 1"), -EBUSY);
	CHECK_EQ_INT(perfctr_session__start(s), 0);
	do_getppid(123);
	CHECK_EQ_INT(perfctr_session__detach(s), 0);
	do_getppid(1000);
	CHECK_EQ_INT(perfctr_session__read(s), 0);	/* no-op detached */
	CHECK_EQ_U64(value_of(s, 0), 123);
	CHECK_EQ_U64(unit_value_of(s, 0, 0), 123);
	CHECK_EQ_INT(perfctr_session__count(s, 1, &c1), 0);
	CHECK_EQ_INT(c1.status, PERFCTR_COUNT_OK);
	CHECK_EQ_INT(perfctr_session__detach(s), -ENOTCONN);
	CHECK_EQ_INT(perfctr_session__start(s), -ENOTCONN);

	/* A second attach: sums continue, the units show this attach. */
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_session__start(s), 0);
	do_getppid(77);
	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 123 + 77);
	CHECK_EQ_U64(unit_value_of(s, 0, 0), 77);
	CHECK_EQ_INT(perfctr_session__count(s, 1, &c2), 0);
	CHECK(c2.value > c1.value);
	CHECK(c2.time_enabled > c1.time_enabled);
	/* reset forgets the carried sums too */
	CHECK_EQ_INT(perfctr_session__reset(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 0);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

/* ---- other threads of this process ---- */

struct worker {
	pthread_t thread;
	pid_t tid;
	long calls;
	pthread_barrier_t *barrier;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(w->barrier);	/* tid known */
	pthread_barrier_wait(w->barrier);	/* counters attached */
	do_getppid(w->calls);
	pthread_barrier_wait(w->barrier);	/* done */
	pthread_barrier_wait(w->barrier);	/* may exit */
	return NULL;
}

TEST(thread_target_counts_only_its_thread)
{
	pthread_barrier_t barrier;
	struct worker w[2] = { { .calls = 2000 }, { .calls = 3000 } };
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_target *t;

	require_tracepoints();
	pthread_barrier_init(&barrier, NULL, 3);
	for (int i = 0; i < 2; i++) {
		w[i].barrier = &barrier;
		REQUIRE(pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0);
	}
	pthread_barrier_wait(&barrier);
	t = perfctr_target__new_thread(w[0].tid);
	CHECK(t != NULL);
	if (t)
		CHECK_EQ_INT(perfctr_session__attach(s, t), 0);
	pthread_barrier_wait(&barrier);
	do_getppid(500);			/* this thread: not counted */
	pthread_barrier_wait(&barrier);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 2000);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i].thread, NULL);
	/* The thread is gone: its final count stays readable. */
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 2000);
	pthread_barrier_destroy(&barrier);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

static pthread_barrier_t barrier_gone;

static void *listed_then_exit(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&barrier_gone);	/* listed */
	pthread_barrier_wait(&barrier_gone);	/* may exit */
	return NULL;
}

TEST(process_target_breaks_down_per_thread)
{
	enum { T = 3 };
	pthread_barrier_t barrier;
	struct worker w[T];
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_target *t;
	uint64_t total = 0;

	require_tracepoints();
	pthread_barrier_init(&barrier, NULL, T + 1);
	for (int i = 0; i < T; i++) {
		w[i] = (struct worker){ .calls = 1000 * (i + 1), .barrier = &barrier };
		REQUIRE(pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0);
	}
	pthread_barrier_wait(&barrier);
	t = perfctr_target__new_process(getpid());
	CHECK(t != NULL);
	if (t)
		CHECK_EQ_INT(perfctr_session__attach(s, t), 0);
	pthread_barrier_wait(&barrier);
	do_getppid(17);				/* the main thread */
	pthread_barrier_wait(&barrier);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	REQUIRE(perfctr_session__nr_units(s) == T + 1);
	for (size_t u = 0; u <= T; u++) {
		pid_t tid;
		int cpu;
		uint64_t want = 0;

		CHECK_EQ_INT(perfctr_session__unit(s, u, &tid, &cpu), 0);
		CHECK_EQ_INT(cpu, -1);
		if (tid == getpid())
			want = 17;
		for (int i = 0; i < T; i++)
			if (tid == w[i].tid)
				want = w[i].calls;
		CHECK(want != 0);
		CHECK_EQ_U64(unit_value_of(s, 0, u), want);
		total += want;
	}
	CHECK_EQ_U64(value_of(s, 0), total);
	CHECK_EQ_U64(total, 17 + 1000 + 2000 + 3000);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < T; i++)
		pthread_join(w[i].thread, NULL);
	pthread_barrier_destroy(&barrier);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

static void *short_lived(void *arg)
{
	(void)arg;
	do_getppid(5);
	return NULL;
}

TEST(process_thread_gone_before_attach)
{
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_target *t;
	struct perfctr_count c;
	pthread_t th;
	pid_t tid;
	int cpu, gone_unit = -1;
	char path[64];

	/* Listed while alive, ended before the attach. */
	pthread_barrier_init(&barrier_gone, NULL, 2);
	REQUIRE(pthread_create(&th, NULL, listed_then_exit, NULL) == 0);
	pthread_barrier_wait(&barrier_gone);
	t = perfctr_target__new_process(getpid());
	pthread_barrier_wait(&barrier_gone);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&barrier_gone);
	REQUIRE(t);
	REQUIRE(perfctr_target__nr_units(t) == 2);
	perfctr_target__unit(t, 1, &tid, &cpu);
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	/* The thread must run to the end of its exit, which a loaded
	 * machine may delay: up to 10 s (the usual wait is under 1 ms). */
	for (int i = 0; i < 10000 && access(path, F_OK) == 0; i++)
		usleep(1000);
	REQUIRE(access(path, F_OK) != 0);

	CHECK_EQ_INT(perfctr_session__attach(s, t), 0);
	do_getppid(64);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	for (size_t u = 0; u < 2; u++) {
		perfctr_session__unit(s, u, &tid, &cpu);
		if (tid != getpid())
			gone_unit = (int)u;
	}
	REQUIRE(gone_unit >= 0);
	CHECK_EQ_INT(perfctr_session__unit_count(s, 0, gone_unit, &c), 0);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_NOT_COUNTED);
	CHECK_EQ_INT(perfctr_session__count(s, 0, &c), 0);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_OK);
	CHECK_EQ_U64(c.value, 64);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(self_inherit_counts_new_threads_and_children)
{
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_INHERIT |
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_session *plain = session_with(TP_GETPPID,
						     PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_target *t = perfctr_target__new_self();
	pthread_t th;
	pid_t child;
	int status = -1;

	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__attach(plain, t) == 0);
	CHECK_EQ_INT(perfctr_session__event_attr(s, 0)->inherit, 1);
	CHECK_EQ_INT(perfctr_session__event_attr(plain, 0)->inherit, 0);
	do_getppid(10);
	REQUIRE(pthread_create(&th, NULL, short_lived, NULL) == 0);	/* 5 */
	pthread_join(th, NULL);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		do_getppid(100);
		_exit(0);
	}
	waitpid(child, &status, 0);
	CHECK_EQ_INT(status, 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_INT(perfctr_session__read(plain), 0);
	CHECK_EQ_U64(value_of(s, 0), 10 + 5 + 100);
	CHECK_EQ_U64(value_of(plain, 0), 10);
	perfctr_session__delete(s);
	perfctr_session__delete(plain);
	perfctr_target__delete(t);
}

/* ---- breakpoints ---- */

static volatile uint64_t watched;

TEST(breakpoint_counts_writes)
{
	char name[64];
	struct perfctr_session *s;
	struct perfctr_target *t;
	struct perfctr_evlist *list;
	struct perf_event_attr bp;
	const struct perf_event_attr *attr;

	test_require_breakpoints_fire();
	s = perfctr_session__new(NULL);
	t = perfctr_target__new_self();
	list = perfctr_evlist__new();
	REQUIRE(s && t && list);
	/* mem:ADDR/8:w, built by hand so that this tests the session alone */
	memset(&bp, 0, sizeof(bp));
	bp.type = PERF_TYPE_BREAKPOINT;
	bp.bp_type = HW_BREAKPOINT_W;
	bp.bp_addr = (uintptr_t)&watched;
	bp.bp_len = HW_BREAKPOINT_LEN_8;
	snprintf(name, sizeof(name), "mem:%p/8:w", (void *)&watched);
	REQUIRE(perfctr_evlist__add_attr(list, &bp, name, (size_t)-1) == 0);
	CHECK_EQ_INT(perfctr_session__add_evlist(s, list), 1);
	perfctr_evlist__delete(list);
	CHECK_STR(perfctr_session__event_name(s, 0), name);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	attr = perfctr_session__event_attr(s, 0);
	REQUIRE(attr);
	CHECK_EQ_INT(attr->type, PERF_TYPE_BREAKPOINT);
	CHECK_EQ_INT(attr->bp_type, HW_BREAKPOINT_W);
	CHECK_EQ_U64(attr->bp_addr, (uintptr_t)&watched);
	CHECK_EQ_U64(attr->bp_len, 8);
	CHECK_EQ_INT(perfctr_session__start(s), 0);
	for (int i = 0; i < 1234; i++)
		watched = (uint64_t)i;
	for (int i = 0; i < 100; i++)
		(void)watched;			/* reads: not counted */
	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	watched = 0;
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 1234);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

/* ---- scaling without kernel multiplexing ---- */

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The kernel never multiplexes here (docs/kernel-notes.md 1), but a
 * counter of this thread bound to CPU 0 is enabled whenever the thread
 * runs and runs only while it is on CPU 0: time_running < time_enabled,
 * while the value stays exact (only the calls made on CPU 0).  So the
 * session's scaled estimate and fraction are checked on real counts.
 */
TEST(scaling_thread_bound_to_one_cpu)
{
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_target *t;
	struct perfctr_count c, c0, c1;
	cpu_set_t saved;
	double want;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		test_skip("needs two online CPUs (has %ld)", sysconf(_SC_NPROCESSORS_ONLN));
	REQUIRE(sched_getaffinity(0, sizeof(saved), &saved) == 0);
	if (pin_to(0) || !CPU_ISSET(1, &saved))
		test_skip("cannot run on CPUs 0 and 1");
	t = perfctr_target__new_thread_on_cpus((pid_t)syscall(SYS_gettid), "0-1");
	REQUIRE(t);
	CHECK_EQ_U64(perfctr_target__nr_units(t), 2);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	do_getppid(1000);			/* on CPU 0 */
	REQUIRE(pin_to(1) == 0);
	do_getppid(200000);			/* on CPU 1: a long while */
	REQUIRE(pin_to(0) == 0);
	do_getppid(10);				/* on CPU 0 again */
	REQUIRE(perfctr_session__stop(s) == 0);
	sched_setaffinity(0, sizeof(saved), &saved);
	CHECK_EQ_INT(perfctr_session__read(s), 0);

	CHECK_EQ_INT(perfctr_session__unit_count(s, 0, 0, &c0), 0);
	CHECK_EQ_INT(perfctr_session__unit_count(s, 0, 1, &c1), 0);
	CHECK_EQ_U64(c0.value, 1010);
	CHECK_EQ_U64(c1.value, 200000);
	CHECK_EQ_INT(c0.status, PERFCTR_COUNT_OK);
	CHECK(c0.time_running > 0 && c0.time_running < c0.time_enabled);
	CHECK(c1.time_running > 0 && c1.time_running < c1.time_enabled);
	/* CPU 0 ran the short part: its estimate of the whole is above
	 * the count, by exactly enabled / running. */
	want = (double)((long double)c0.value * c0.time_enabled / c0.time_running);
	CHECK(perfctr_count__scaled(&c0) == want);
	CHECK(perfctr_count__scaled(&c0) > 1010.0);
	CHECK(perfctr_count__fraction(&c0) > 0.0 && perfctr_count__fraction(&c0) < 1.0);
	CHECK(perfctr_count__fraction(&c1) > perfctr_count__fraction(&c0));
	/* The sum over the units adds values and times. */
	CHECK_EQ_INT(perfctr_session__count(s, 0, &c), 0);
	CHECK_EQ_U64(c.value, 201010);
	CHECK_EQ_U64(c.time_enabled, c0.time_enabled + c1.time_enabled);
	CHECK_EQ_U64(c.time_running, c0.time_running + c1.time_running);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

/* ---- global mode ---- */

/* A child pinned to @cpu (or unpinned for -1) that makes @calls getppid
 * calls once released through the returned pipe.  It says when it is
 * ready, so that whatever a runtime does in a child after fork (the
 * sanitizers make system calls there) is over before counting starts. */
static pid_t pinned_child(int cpu, long calls, int *release_fd)
{
	int go[2], ready[2];
	pid_t pid;
	char c;

	if (pipe(go))
		return -1;
	if (pipe(ready)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(ready[0]);
		if (cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(2);
		}
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		do_getppid(calls);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	*release_fd = go[1];
	return pid;
}

static void cpu_target_case(const char *cpulist, int pin)
{
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_target *t;
	char filter[64];
	int release, status = -1;
	pid_t child;

	child = pinned_child(pin, 4321, &release);
	REQUIRE(child > 0);
	/* Other processes make the same calls on these CPUs. */
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)child);
	CHECK_EQ_INT(perfctr_session__set_filter(s, 0, filter), 0);
	t = perfctr_target__new_cpus(cpulist);
	CHECK(t != NULL);
	if (t)
		CHECK_EQ_INT(perfctr_session__attach(s, t), 0);
	(void)!write(release, "g", 1);
	close(release);
	waitpid(child, &status, 0);
	CHECK_EQ_INT(status, 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 4321);
	for (size_t u = 0; u < perfctr_session__nr_units(s); u++) {
		pid_t tid;
		int cpu;

		CHECK_EQ_INT(perfctr_session__unit(s, u, &tid, &cpu), 0);
		CHECK_EQ_INT(tid, -1);
		if (pin >= 0)
			CHECK_EQ_U64(unit_value_of(s, 0, u), cpu == pin ? 4321 : 0);
	}
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(cpu_list_counts_pinned_workload)
{
	require_tracepoints();
	test_require_root();
	cpu_target_case("0", 0);
}

TEST(all_cpus_count_workload)
{
	require_tracepoints();
	test_require_root();
	cpu_target_case(NULL, -1);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		cpu_target_case(NULL, 1);
}

TEST(bad_filter_fails_attach)
{
	struct perfctr_session *s = session_with(TP_GETPPID, 0);
	struct perfctr_target *t = perfctr_target__new_self();
	int before;

	require_tracepoints();
	REQUIRE(t);
	CHECK_EQ_INT(perfctr_session__set_filter(s, 0, "no_such_field ==="), 0);
	before = count_open_fds();
	CHECK_EQ_INT(perfctr_session__attach(s, t), -EINVAL);
	CHECK_EQ_INT(count_open_fds(), before);
	CHECK_EQ_INT(perfctr_session__set_filter(s, 0, NULL), 0);
	CHECK_EQ_INT(perfctr_session__attach(s, t), 0);
	CHECK_EQ_INT(perfctr_session__set_filter(s, 1, NULL), -EINVAL);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(opts_checked)
{
	struct { struct perfctr_session_opts o; char tail[8]; } big;
	struct perfctr_session *s;

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	s = perfctr_session__new(&big.o);	/* newer, zero tail: fine */
	CHECK(s != NULL);
	perfctr_session__delete(s);
	big.tail[3] = 1;
	errno = 0;
	CHECK(perfctr_session__new(&big.o) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	s = perfctr_session__new(NULL);
	REQUIRE(s);
	CHECK_EQ_U64(perfctr_session__nr_events(s), 0);
	CHECK_EQ_INT(perfctr_session__attach(s, NULL), -EINVAL);
	perfctr_session__delete(s);
	perfctr_session__delete(NULL);
}

TEST(parse_error_leaves_session_unchanged)
{
	struct perfctr_session *s = session_with("task-clock", 0);
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	int rc;

	rc = perfctr_session__add_events(s, "page-faults,cyclez", &err);
	CHECK(rc < 0);
	CHECK_EQ_INT(rc, -err.errnum);
	CHECK(strstr(err.message, "cyclez") != NULL);
	CHECK_EQ_U64(perfctr_session__nr_events(s), 1);
	CHECK_EQ_INT(perfctr_session__add_events(s, "{page-faults,cpu-clock}", &err), 2);
	CHECK_EQ_U64(perfctr_session__nr_events(s), 3);
	CHECK_EQ_U64(perfctr_session__event_leader(s, 2), 1);
	CHECK_EQ_U64(perfctr_session__event_leader(s, 3), (size_t)-1);
	CHECK_STR(perfctr_session__event_unit(s, 0), "");
	CHECK(perfctr_session__event_scale(s, 0) == 1.0);
	perfctr_session__delete(s);
}

TEST_MAIN(TEST_CASE(self_getppid_exact),
	  TEST_CASE(enable_on_attach),
	  TEST_CASE(group_read_at_once),
	  TEST_CASE(start_stop_windows_accumulate),
	  TEST_CASE(reset_zeroes),
	  TEST_CASE(not_counted_is_not_zero),
	  TEST_CASE(not_supported_hardware_event),
	  TEST_CASE(strict_fails_and_rolls_back),
	  TEST_CASE(detach_keeps_values_reattach_continues),
	  TEST_CASE(thread_target_counts_only_its_thread),
	  TEST_CASE(process_target_breaks_down_per_thread),
	  TEST_CASE(process_thread_gone_before_attach),
	  TEST_CASE(self_inherit_counts_new_threads_and_children),
	  TEST_CASE(breakpoint_counts_writes),
	  TEST_CASE(scaling_thread_bound_to_one_cpu),
	  TEST_CASE(cpu_list_counts_pinned_workload),
	  TEST_CASE(all_cpus_count_workload),
	  TEST_CASE(bad_filter_fails_attach),
	  TEST_CASE(opts_checked),
	  TEST_CASE(parse_error_leaves_session_unchanged))
