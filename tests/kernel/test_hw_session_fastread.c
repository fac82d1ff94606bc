/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Hardware tier, the session's user-space fast read for real: a session on
 * the calling thread with armv8 PMU counters is read through the counters'
 * mmap'd pages (the library's page reader and mrs instructions), and must
 * agree with read(2) (a read from another thread, which may not use the
 * pages) and count a fixed-length loop exactly; with perf_user_access = 0
 * the same session falls back to read(2) with the same exact counts; a
 * group with a software member is read with read(2).  Generic events
 * ("instructions:u") get the rdpmc format bit from the engine.  Runs in
 * the PMU lane and skips elsewhere.
 */
#include <pthread.h>

#include "core/session-internal.h"
#include "hw_lane.h"
#include "perfctr/perfctr.h"

#define N_LONG 1000000UL

struct hw_session {
	struct perfctr_session *s;
	struct perfctr_target *t;
};

/* A started session on this thread with @n events, from @attrs or, when
 * NULL, from @spec; one group when @group. */
static struct hw_session open_session(const struct perf_event_attr *attrs,
				      size_t n, bool group, const char *spec)
{
	struct hw_session h;

	perfctr_set_print(NULL);
	h.s = perfctr_session__new(NULL);
	h.t = perfctr_target__new_self();
	REQUIRE(h.s && h.t);
	if (attrs) {
		struct perfctr_evlist *list = perfctr_evlist__new();

		REQUIRE(list);
		for (size_t i = 0; i < n; i++)
			REQUIRE(perfctr_evlist__add_attr(list, &attrs[i], "hw",
							 group && i ? 0 : (size_t)-1) == (int)i);
		REQUIRE(perfctr_session__add_evlist(h.s, list) == (int)n);
		perfctr_evlist__delete(list);
	} else {
		REQUIRE(perfctr_session__add_events(h.s, spec, NULL) == (int)n);
	}
	if (perfctr_session__attach(h.s, h.t) || perfctr_session__start(h.s))
		HW_ABORT("attach: %s", strerror(errno));
	return h;
}

static void close_session(struct hw_session *h)
{
	perfctr_session__delete(h->s);
	perfctr_target__delete(h->t);
}

static uint64_t value_of(struct perfctr_session *s, size_t i)
{
	struct perfctr_count c;

	if (perfctr_session__unit_count(s, i, 0, &c))
		return UINT64_MAX;
	return c.value;
}

/* Loop between two session reads; never inlined, see hw_lane.h.
 * *@fast: how many group reads the pages served. */
static __attribute__((noinline)) uint64_t count_loop(struct perfctr_session *s,
						     size_t i, unsigned long n,
						     uint64_t *fast)
{
	uint64_t f0 = pc_engine__fast_reads(s->engine), a, b;

	perfctr_session__read(s);
	a = value_of(s, i);
	hw_loop(n);
	perfctr_session__read(s);
	b = value_of(s, i);
	*fast = pc_engine__fast_reads(s->engine) - f0;
	return b - a;
}

static void *read_elsewhere(void *arg)
{
	CHECK_EQ_INT(perfctr_session__read(arg), 0);
	return NULL;
}

/*
 * Event @i: two reads in this thread bracket a read(2) made by another
 * thread, and the loop counts exactly.  @groups: the session's groups,
 * each read once per session read, all of them by the pages when @fast.
 */
static void check_event(struct perfctr_session *s, size_t i, size_t groups,
			bool fast)
{
	uint64_t before, mid, after, f0, d1, d2, nfast;
	pthread_t th;

	REQUIRE(perfctr_session__read(s) == 0);
	before = value_of(s, i);
	f0 = pc_engine__fast_reads(s->engine);
	REQUIRE(pthread_create(&th, NULL, read_elsewhere, s) == 0);
	pthread_join(th, NULL);
	CHECK_EQ_U64(pc_engine__fast_reads(s->engine), f0);
	mid = value_of(s, i);
	REQUIRE(perfctr_session__read(s) == 0);
	after = value_of(s, i);
	CHECK(before <= mid);
	CHECK(mid <= after);
	/* Only this thread's user-mode side of pthread_create and join. */
	CHECK(after - before < 200000);
	count_loop(s, i, 1, &nfast);		/* warm-up */
	d1 = count_loop(s, i, 1, &nfast);
	CHECK_EQ_U64(nfast, fast ? 2 * groups : 0);
	d2 = count_loop(s, i, N_LONG, &nfast);
	CHECK_EQ_U64(nfast, fast ? 2 * groups : 0);
	CHECK_EQ_U64(d2 - d1, HW_LOOP_INSNS * (N_LONG - 1));
}

TEST(fast_read_group_of_two)
{
	struct perf_event_attr a[2];
	struct hw_session h;
	struct perfctr_count c;

	hw_require_lane();
	hw_set_user_access(1);
	hw_armv8_attr(&a[0], ARMV8_INST_RETIRED, ARMV8_CONFIG1_RDPMC);
	hw_armv8_attr(&a[1], ARMV8_CPU_CYCLES, ARMV8_CONFIG1_RDPMC | ARMV8_CONFIG1_LONG);
	h = open_session(a, 2, true, NULL);
	REQUIRE(pc_engine__slot(h.s->engine, 0, 0)->page != NULL);
	check_event(h.s, 0, 1, true);
	check_event(h.s, 1, 1, true);	/* -icount shift=0: a cycle per insn */
	/* The counts carry the page's times. */
	REQUIRE(perfctr_session__count(h.s, 0, &c) == 0);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_OK);
	CHECK(c.time_running > 0);
	CHECK(c.time_enabled >= c.time_running);
	close_session(&h);
	hw_restore_user_access();
}

TEST(fast_read_separate_groups)
{
	struct perf_event_attr a[2];
	struct hw_session h;

	hw_require_lane();
	hw_set_user_access(1);
	hw_armv8_attr(&a[0], ARMV8_INST_RETIRED, ARMV8_CONFIG1_RDPMC);
	hw_armv8_attr(&a[1], ARMV8_INST_RETIRED, ARMV8_CONFIG1_RDPMC);
	h = open_session(a, 2, false, NULL);
	check_event(h.s, 0, 2, true);
	check_event(h.s, 1, 2, true);
	close_session(&h);
	hw_restore_user_access();
}

TEST(generic_events_get_the_rdpmc_bit)
{
	struct hw_session h;

	hw_require_lane();
	hw_set_user_access(1);
	h = open_session(NULL, 1, false, "instructions:u");
	check_event(h.s, 0, 1, true);
	close_session(&h);
	hw_restore_user_access();
}

TEST(no_user_access_falls_back_to_read)
{
	struct perf_event_attr a[2];
	struct hw_session h;

	hw_require_lane();
	hw_set_user_access(0);
	hw_armv8_attr(&a[0], ARMV8_INST_RETIRED, ARMV8_CONFIG1_RDPMC);
	hw_armv8_attr(&a[1], ARMV8_CPU_CYCLES, ARMV8_CONFIG1_RDPMC | ARMV8_CONFIG1_LONG);
	h = open_session(a, 2, true, NULL);
	check_event(h.s, 0, 1, false);
	check_event(h.s, 1, 1, false);
	close_session(&h);
	hw_restore_user_access();
}

TEST(software_member_means_read)
{
	/* task-clock's page holds no current count: the group is read with
	 * read(2), and the hardware member still counts exactly. */
	struct hw_session h;

	hw_require_lane();
	hw_set_user_access(1);
	h = open_session(NULL, 2, true, "{instructions:u,task-clock}");
	CHECK(pc_engine__slot(h.s->engine, 1, 0)->page == NULL);
	check_event(h.s, 0, 1, false);
	close_session(&h);
	hw_restore_user_access();
}

TEST_MAIN(TEST_CASE(fast_read_group_of_two),
	  TEST_CASE(fast_read_separate_groups),
	  TEST_CASE(generic_events_get_the_rdpmc_bit),
	  TEST_CASE(no_user_access_falls_back_to_read),
	  TEST_CASE(software_member_means_read))
