/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The engine's (and so the session's) user-space fast read against
 * synthetic perf_event_mmap_pages: real software counters are opened (so
 * that read(2) works and answers its own, different values), then their
 * slots are given pages written here and fake counter and timestamp
 * readers.  A group read must take the pages' values when every page
 * allows it (cap_user_rdpmc, index != 0, cap_user_time), and fall back to
 * one read(2) of the group when any one does not, when a member has no
 * page, or when the reader is not the counted thread.  The algorithm on
 * the page itself is tests/unit/test_fastread.c's; the hardware is the
 * PMU lane's (test_hw_session_fastread.c).
 */
#include <pthread.h>

#include "core/engine.h"
#include "core/session-internal.h"
#include "session_util.h"

#define CAP_BIT0_IS_DEPRECATED (1ull << 1)
#define CAP_USER_RDPMC (1ull << 2)
#define CAP_USER_TIME (1ull << 3)

#define GROUP_FMT (PERF_FORMAT_GROUP | PERF_FORMAT_ID |			\
		   PERF_FORMAT_TOTAL_TIME_ENABLED |			\
		   PERF_FORMAT_TOTAL_TIME_RUNNING)

static uint64_t fake_pmc[4];
static uint64_t fake_stamp;

static uint64_t fake_read_pmc(uint32_t hw_index)
{
	return hw_index < 4 ? fake_pmc[hw_index] : 0;
}

static uint64_t fake_read_stamp(void)
{
	return fake_stamp;
}

/* A page whose counter is hardware counter @index - 1, 32 bits wide,
 * with times that advance one ns per stamp tick. */
static void page_init(struct perf_event_mmap_page *pc, uint32_t index,
		      int64_t offset)
{
	memset(pc, 0, sizeof(*pc));
	pc->capabilities = CAP_BIT0_IS_DEPRECATED | CAP_USER_RDPMC | CAP_USER_TIME;
	pc->index = index;
	pc->offset = offset;
	pc->pmc_width = 32;
	pc->time_enabled = 1000;
	pc->time_running = 900;
	pc->time_mult = 1;
	pc->time_shift = 0;
	pc->time_offset = 0;
}

struct fixture {
	struct perfctr_target *t;
	struct pc_engine *e;
	struct perf_event_mmap_page pages[2];
};

/* A group of two dummy software counters (read(2) says 0 for both) on
 * this thread, read through the pages. */
static void setup(struct fixture *f)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.read_format = GROUP_FMT;
	f->t = perfctr_target__new_self();
	REQUIRE(f->t);
	f->e = pc_engine__new(f->t);
	REQUIRE(f->e);
	REQUIRE(pc_engine__add(f->e, &(struct pc_engine_event){ .attr = &a, .leader = 0 }) == 0);
	REQUIRE(pc_engine__add(f->e, &(struct pc_engine_event){ .attr = &a, .leader = 0 }) == 1);
	REQUIRE(pc_engine__open(f->e, PC_ENGINE_MMAP | PC_ENGINE_ENABLE) == 0);
	/* Software counters get no page of their own. */
	CHECK(pc_engine__slot(f->e, 0, 0)->page == NULL);
	page_init(&f->pages[0], 1, 1000);
	page_init(&f->pages[1], 2, 2000);
	fake_pmc[0] = 5;
	fake_pmc[1] = 7;
	fake_stamp = 500;
	pc_engine__set_readers(f->e, fake_read_pmc, fake_read_stamp);
	REQUIRE(pc_engine__set_page(f->e, 0, 0, &f->pages[0]) == 0);
	REQUIRE(pc_engine__set_page(f->e, 1, 0, &f->pages[1]) == 0);
}

static void teardown(struct fixture *f)
{
	pc_engine__delete(f->e);
	perfctr_target__delete(f->t);
}

static uint64_t value(struct fixture *f, size_t ev)
{
	return pc_engine__slot(f->e, ev, 0)->count.value;
}

/* Read the group; true when the pages served it. */
static bool read_fast(struct fixture *f)
{
	uint64_t before = pc_engine__fast_reads(f->e);

	REQUIRE(pc_engine__read_group(f->e, 0, 0) == 0);
	return pc_engine__fast_reads(f->e) == before + 1;
}

TEST(pages_serve_the_group)
{
	struct fixture f;
	const struct pc_slot *s;

	setup(&f);
	CHECK(read_fast(&f));
	CHECK_EQ_U64(value(&f, 0), 1005);
	CHECK_EQ_U64(value(&f, 1), 2007);
	s = pc_engine__slot(f.e, 1, 0);
	/* The page's times plus the 500 ns since its update; running too,
	 * as a counter with an index is on. */
	CHECK_EQ_U64(s->count.time_enabled, 1500);
	CHECK_EQ_U64(s->count.time_running, 1400);
	CHECK_EQ_INT(s->count.status, PERFCTR_COUNT_OK);
	/* A 32-bit counter that went "negative" is sign-extended. */
	fake_pmc[0] = 0xffffffffull;
	CHECK(read_fast(&f));
	CHECK_EQ_U64(value(&f, 0), 999);
	teardown(&f);
}

TEST(any_page_that_forbids_falls_back_to_read)
{
	struct fixture f;

	setup(&f);
	/* Not scheduled (index 0): read(2), whose dummy counts are 0. */
	f.pages[1].index = 0;
	CHECK(!read_fast(&f));
	CHECK_EQ_U64(value(&f, 0), 0);
	CHECK_EQ_U64(value(&f, 1), 0);
	CHECK_EQ_INT(pc_engine__slot(f.e, 0, 0)->count.status, PERFCTR_COUNT_OK);
	f.pages[1].index = 2;
	CHECK(read_fast(&f));

	/* No cap_user_rdpmc. */
	f.pages[0].capabilities &= ~CAP_USER_RDPMC;
	CHECK(!read_fast(&f));
	CHECK_EQ_U64(value(&f, 0), 0);
	f.pages[0].capabilities |= CAP_USER_RDPMC;

	/* No current times (cap_user_time): the counts need them. */
	f.pages[1].capabilities &= ~CAP_USER_TIME;
	CHECK(!read_fast(&f));
	CHECK_EQ_U64(value(&f, 1), 0);
	f.pages[1].capabilities |= CAP_USER_TIME;

	/* A member without a page. */
	REQUIRE(pc_engine__set_page(f.e, 1, 0, NULL) == 0);
	CHECK(!read_fast(&f));
	REQUIRE(pc_engine__set_page(f.e, 1, 0, &f.pages[1]) == 0);
	CHECK(read_fast(&f));
	CHECK_EQ_U64(value(&f, 1), 2007);
	teardown(&f);
}

static void *read_elsewhere(void *arg)
{
	struct fixture *f = arg;

	CHECK_EQ_INT(pc_engine__read(f->e), 0);
	return NULL;
}

TEST(another_thread_reads_with_read)
{
	/* The page's index names a counter of the CPU the counted thread
	 * runs on: nobody else may use it. */
	struct fixture f;
	pthread_t th;

	setup(&f);
	REQUIRE(pthread_create(&th, NULL, read_elsewhere, &f) == 0);
	pthread_join(th, NULL);
	CHECK_EQ_U64(pc_engine__fast_reads(f.e), 0);
	CHECK_EQ_U64(value(&f, 0), 0);
	CHECK(read_fast(&f));
	teardown(&f);
}

TEST(session_reads_through_the_pages)
{
	/* A session on this thread maps pages (its engine was opened with
	 * PC_ENGINE_MMAP) and its read takes the pages' values. */
	struct perfctr_session *s = session_with("{dummy,dummy}", 0);
	struct perfctr_target *t = perfctr_target__new_self();
	struct perf_event_mmap_page pages[2];
	struct perfctr_count c;

	REQUIRE(s && t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	page_init(&pages[0], 1, 40);
	page_init(&pages[1], 2, 50);
	fake_pmc[0] = 2;
	fake_pmc[1] = 3;
	fake_stamp = 100;
	pc_engine__set_readers(s->engine, fake_read_pmc, fake_read_stamp);
	REQUIRE(pc_engine__set_page(s->engine, 0, 0, &pages[0]) == 0);
	REQUIRE(pc_engine__set_page(s->engine, 1, 0, &pages[1]) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(pc_engine__fast_reads(s->engine), 1);
	REQUIRE(perfctr_session__count(s, 0, &c) == 0);
	CHECK_EQ_U64(c.value, 42);
	CHECK_EQ_U64(c.time_enabled, 1100);
	REQUIRE(perfctr_session__count(s, 1, &c) == 0);
	CHECK_EQ_U64(c.value, 53);
	/* Forbidden by a page: the same read gives read(2)'s values. */
	pages[0].index = 0;
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(pc_engine__fast_reads(s->engine), 1);
	REQUIRE(perfctr_session__count(s, 0, &c) == 0);
	CHECK_EQ_U64(c.value, 0);
	/* The pages are not the engine's: detach leaves them alone. */
	REQUIRE(perfctr_session__detach(s) == 0);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST_MAIN(TEST_CASE(pages_serve_the_group),
	  TEST_CASE(any_page_that_forbids_falls_back_to_read),
	  TEST_CASE(another_thread_reads_with_read),
	  TEST_CASE(session_reads_through_the_pages))
