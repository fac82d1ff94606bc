// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unit tests of the fast read (core/fastread.h) against a synthetic
 * perf_event_mmap_page.  The reader under test is the library's own
 * inline algorithm, given a fake "rdpmc" (a variable per counter) and a
 * fake timestamp counter.  A writer thread plays the kernel: the fake
 * counters count on their own, like hardware, and every few counts the
 * writer moves the split between `offset` and the counter under the
 * page's `lock` (odd while writing), as the kernel does at each update.
 * A reader that mixed an old offset with a new counter would be off by
 * up to 2^(width-1): every value must lie between the true counts seen
 * just before and just after the read.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fastread.h"
#include "test.h"

#define CAP_BIT0_IS_DEPRECATED (1ull << 1)
#define CAP_USER_RDPMC (1ull << 2)
#define CAP_USER_TIME (1ull << 3)
#define CAP_USER_TIME_SHORT (1ull << 5)

#define NR_FAKE 4
static _Atomic uint64_t fake_pmc[NR_FAKE];
static _Atomic uint64_t fake_stamp;

/* A real rdpmc takes tens of cycles; the pause widens the window in
 * which a writer can slip in between the page's fields and the counter,
 * so that a reader without the sequence check is caught quickly. */
static uint64_t fake_read_pmc(uint32_t hw_index)
{
	for (volatile int spin = 0; spin < 20; spin++)
		;
	return hw_index < NR_FAKE ?
		atomic_load_explicit(&fake_pmc[hw_index], memory_order_acquire) : 0;
}

static uint64_t fake_read_stamp(void)
{
	return atomic_load(&fake_stamp);
}

static void page_init(struct perf_event_mmap_page *pc, uint32_t index,
		      uint16_t width, int64_t offset)
{
	memset(pc, 0, sizeof(*pc));
	pc->capabilities = CAP_BIT0_IS_DEPRECATED | CAP_USER_RDPMC;
	pc->index = index;
	pc->pmc_width = width;
	pc->offset = offset;
}

static bool read_one(struct perf_event_mmap_page *pc, bool times,
		     struct pc_page_value *v)
{
	return pc_fastread_page_with(pc, times, fake_read_pmc, fake_read_stamp, v);
}

/* Table: the counter's raw bits (with junk above the width, which the
 * hardware may give and which must be ignored) and the expected sum. */
TEST(sign_extension)
{
	static const struct {
		uint16_t width;
		int64_t offset;
		uint64_t raw;
		uint64_t want;
	} rows[] = {
		{ 32, 1000, 0x00000005, 1005 },
		{ 32, 1000, 0xffffffff, 999 },
		{ 32, 1ll << 31, 0x80000000, 0 },
		{ 32, 5000000000ll, 0x7fffffff, 5000000000ull + 0x7fffffff },
		{ 32, 100, 0xdead0000fffffff6ull, 90 },	/* junk above */
		{ 40, 1ll << 39, 0x8000000000ull, 0 },
		{ 40, 7, 0xffffffffffull, 6 },
		{ 40, 7, 0x7fffffffffull, 7 + 0x7fffffffffull },
		{ 40, 0, 0xff00000000000001ull, 1 },
		{ 48, 1ll << 47, 0x800000000000ull, 0 },
		{ 48, 12345, 0xfffffffffffeull, 12343 },
		{ 48, -5, 0x000000000010ull, 11 },
		{ 48, 3, 0xabcd7fffffffffffull, 3 + 0x7fffffffffffull },
		{ 64, 0, 0xffffffffffffffffull, 0xffffffffffffffffull },
		{ 64, 10, 0xfffffffffffffff6ull, 0 },
		{ 64, -1, 0x8000000000000000ull, 0x7fffffffffffffffull },
		{ 64, 1, 41, 42 },
	};
	struct perf_event_mmap_page pc;
	struct pc_page_value v;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		page_init(&pc, 1, rows[i].width, rows[i].offset);
		atomic_store(&fake_pmc[0], rows[i].raw);
		if (!read_one(&pc, false, &v)) {
			test_fail(__FILE__, __LINE__, "row %zu: no value", i);
			continue;
		}
		if (v.value != rows[i].want)
			test_fail(__FILE__, __LINE__,
				  "row %zu (width %u): %#" PRIx64 " != %#" PRIx64,
				  i, rows[i].width, v.value, rows[i].want);
	}
	CHECK_EQ_INT(pc_sign_extend(0x80, 8), -128);
	CHECK_EQ_INT(pc_sign_extend(0x7f, 8), 127);
}

/* Every reason the page gives for "read() instead". */
TEST(falls_back_when_page_says_so)
{
	struct perf_event_mmap_page pc;
	struct pc_page_value v;

	atomic_store(&fake_pmc[0], 1);
	page_init(&pc, 1, 48, 0);
	CHECK(read_one(&pc, false, &v));
	page_init(&pc, 0, 48, 0);	/* not scheduled, or user access off */
	CHECK(!read_one(&pc, false, &v));
	page_init(&pc, 1, 48, 0);
	pc.capabilities = CAP_BIT0_IS_DEPRECATED;	/* no cap_user_rdpmc */
	CHECK(!read_one(&pc, false, &v));
	page_init(&pc, 1, 48, 0);
	pc.capabilities = CAP_USER_RDPMC;	/* pre-3.12 meaning of bits */
	CHECK(!read_one(&pc, false, &v));
	page_init(&pc, 1, 0, 0);		/* no width */
	CHECK(!read_one(&pc, false, &v));
	page_init(&pc, 1, 65, 0);
	CHECK(!read_one(&pc, false, &v));
	page_init(&pc, 1, 48, 0);
	pc.lock = 7;			/* a writer that never finishes */
	CHECK(!read_one(&pc, false, &v));
}

/* delta = time_offset + cyc * mult / 2^shift, computed here in 128 bits. */
TEST(time_enabled_running)
{
	struct perf_event_mmap_page pc;
	struct pc_page_value v;
	uint64_t cyc = 0x123456789abull, delta;

	page_init(&pc, 1, 48, 0);
	pc.capabilities |= CAP_USER_TIME;
	pc.time_enabled = 1000000;
	pc.time_running = 400000;
	pc.time_mult = 3355443;	/* ~0.4 ns per tick at shift 23 */
	pc.time_shift = 23;
	pc.time_offset = (uint64_t)-1000000000000ll;
	atomic_store(&fake_stamp, cyc);
	delta = pc.time_offset +
		(uint64_t)(((unsigned __int128)cyc * pc.time_mult) >> pc.time_shift);
	REQUIRE(read_one(&pc, true, &v));
	CHECK(v.times);
	CHECK_EQ_U64(v.time_enabled, 1000000 + delta);
	CHECK_EQ_U64(v.time_running, 400000 + delta);

	/* cap_user_time_short: a narrow stamp counter, extended from
	 * time_cycles with time_mask. */
	pc.capabilities |= CAP_USER_TIME_SHORT;
	pc.time_cycles = 0x1000000000ull;
	pc.time_mask = 0xffffff;
	atomic_store(&fake_stamp, 0x00ff123456ull);	/* only low 24 bits count */
	cyc = pc.time_cycles + ((0x00ff123456ull - pc.time_cycles) & pc.time_mask);
	delta = pc.time_offset +
		(uint64_t)(((unsigned __int128)cyc * pc.time_mult) >> pc.time_shift);
	REQUIRE(read_one(&pc, true, &v));
	CHECK_EQ_U64(v.time_enabled, 1000000 + delta);

	/* Without cap_user_time the page's times are given as they are. */
	pc.capabilities = CAP_BIT0_IS_DEPRECATED | CAP_USER_RDPMC;
	REQUIRE(read_one(&pc, true, &v));
	CHECK(!v.times);
	CHECK_EQ_U64(v.time_enabled, 1000000);
}

/* ------------------------------------------------------------------ */
/* The concurrent writer. */

struct writer {
	struct perf_event_mmap_page *pages[NR_FAKE];
	size_t nr_pages;
	uint16_t width;
	_Atomic uint64_t truth;		/* the true count, published after
					 * the counters show it */
	atomic_bool stop;
	uint64_t resplits;
};

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t mask = w->width == 64 ? ~0ull : (1ull << w->width) - 1;
	uint64_t junk_mask = ~mask, t = atomic_load(&w->truth);
	uint64_t split_t[NR_FAKE], split_raw[NR_FAKE], junk = 0;
	size_t i;

	for (i = 0; i < w->nr_pages; i++) {
		split_t[i] = t;
		split_raw[i] = 0;
	}
	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		unsigned int steps = 1 + (unsigned int)(rng() % 64), s;

		/* The hardware counts. */
		for (s = 0; s < steps; s++) {
			t++;
			for (i = 0; i < w->nr_pages; i++)
				atomic_store_explicit(&fake_pmc[i + 1],
					((split_raw[i] + (t - split_t[i])) & mask) | junk,
					memory_order_release);
			atomic_store_explicit(&w->truth, t, memory_order_release);
		}
		/* The kernel updates the pages: a new split of the same total,
		 * far from the old one, the counter kept clear of its sign
		 * boundary until the next update. */
		for (i = 0; i < w->nr_pages; i++) {
			struct perf_event_mmap_page *pc = w->pages[i];
			int64_t p;

			p = (int64_t)(rng() & mask);
			p = pc_sign_extend((uint64_t)p, w->width);
			if (p > 0 && (uint64_t)p > (mask >> 1) - 4096)
				p -= 8192;
			__atomic_store_n(&pc->lock, pc->lock + 1, __ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_RELEASE);
			junk = (rng() & junk_mask);
			split_t[i] = t;
			split_raw[i] = (uint64_t)p & mask;
			__atomic_store_n(&pc->offset, (int64_t)(t - (uint64_t)p),
					 __ATOMIC_RELAXED);
			atomic_store_explicit(&fake_pmc[i + 1], split_raw[i] | junk,
					      memory_order_release);
			__atomic_thread_fence(__ATOMIC_RELEASE);
			__atomic_store_n(&pc->lock, pc->lock + 1, __ATOMIC_RELAXED);
		}
		__atomic_fetch_add(&w->resplits, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void writer_start(struct writer *w, pthread_t *th,
			 struct perf_event_mmap_page *pages, size_t n,
			 uint16_t width)
{
	size_t i;

	memset(w, 0, sizeof(*w));
	w->width = width;
	w->nr_pages = n;
	atomic_store(&w->truth, 1ull << 40);
	for (i = 0; i < n; i++) {
		page_init(&pages[i], (uint32_t)(i + 2), width,
			  (int64_t)(1ull << 40));
		w->pages[i] = &pages[i];
		atomic_store(&fake_pmc[i + 1], 0);
	}
	REQUIRE(pthread_create(th, NULL, writer_main, w) == 0);
}

static void writer_stop(struct writer *w, pthread_t th)
{
	atomic_store(&w->stop, true);
	pthread_join(th, NULL);
}

#define READS 2000000
#define MIN_RESPLITS 1000

static uint64_t resplits(struct writer *w)
{
	return __atomic_load_n(&w->resplits, __ATOMIC_RELAXED);
}

static void torture(uint16_t width)
{
	struct perf_event_mmap_page page;
	struct pc_page_value v;
	struct writer w;
	pthread_t th;
	uint64_t bad = 0, fallbacks = 0, first_bad = 0, lo, hi;
	long i;

	writer_start(&w, &th, &page, 1, width);
	/* At least READS reads, and on until the writer has re-split the
	 * page often enough to have interleaved with them: on a loaded
	 * machine the writer thread may get little CPU while we read. */
	for (i = 0; i < READS || (resplits(&w) <= MIN_RESPLITS &&
				  i < READS * 50); i++) {
		lo = atomic_load_explicit(&w.truth, memory_order_acquire);
		if (!read_one(&page, false, &v)) {
			fallbacks++;
			continue;
		}
		hi = atomic_load_explicit(&w.truth, memory_order_acquire);
		if (v.value < lo || v.value > hi + 1) {
			if (!bad++)
				first_bad = v.value - lo;
		}
	}
	writer_stop(&w, th);
	if (bad)
		test_fail(__FILE__, __LINE__,
			  "width %u: %" PRIu64 " torn values of %ld (first off by %#" PRIx64 ")",
			  width, bad, i, first_bad);
	/* Giving up is allowed, but not as a habit. */
	CHECK(fallbacks < (uint64_t)i / 100);
	CHECK(w.resplits > MIN_RESPLITS);
}

TEST(concurrent_writer_width_32) { torture(32); }
TEST(concurrent_writer_width_40) { torture(40); }
TEST(concurrent_writer_width_48) { torture(48); }
TEST(concurrent_writer_width_64) { torture(64); }

/* The one-pass group read: three pages updated by one writer. */
TEST(concurrent_writer_group)
{
	struct perf_event_mmap_page pages[3];
	const volatile struct perf_event_mmap_page *pcs[3] = {
		&pages[0], &pages[1], &pages[2] };
	struct pc_page_snap snaps[3];
	struct pc_page_value v[3];
	struct writer w;
	pthread_t th;
	uint64_t bad = 0, lo, hi;
	long i;
	int k;

	writer_start(&w, &th, pages, 3, 48);
	for (i = 0; i < READS / 2; i++) {
		lo = atomic_load_explicit(&w.truth, memory_order_acquire);
		if (!pc_fastread_pages_with(pcs, 3, false, fake_read_pmc,
					    fake_read_stamp, snaps, v))
			continue;
		hi = atomic_load_explicit(&w.truth, memory_order_acquire);
		for (k = 0; k < 3; k++)
			if (v[k].value < lo || v[k].value > hi + 1)
				bad++;
	}
	writer_stop(&w, th);
	CHECK_EQ_U64(bad, 0);
}

/* The tests above can fail: a read that mixes the page of one update with
 * the counter of the next is wrong, and only the sequence check catches it.
 * Shown deterministically (racing a real writer thread for torn reads is
 * a matter of luck, more so under a sanitizer): a counter reader that plays
 * the kernel updating the page between the reader's load of `offset` and its
 * rdpmc, the window a preemption opens. */
static struct perf_event_mmap_page *meddle_page;
static int meddle_left;			/* updates still to slip in */
static uint64_t meddle_new_raw;

static uint64_t meddling_read_pmc(uint32_t hw_index)
{
	if (meddle_left > 0 && hw_index == meddle_page->index - 1) {
		struct perf_event_mmap_page *pc = meddle_page;
		uint64_t total = (uint64_t)pc->offset +
			(uint64_t)pc_sign_extend(atomic_load(&fake_pmc[hw_index]),
						 pc->pmc_width);

		meddle_left--;
		/* A new split of the same total, as the kernel makes. */
		pc->lock++;
		pc->offset = (int64_t)(total - meddle_new_raw);
		atomic_store(&fake_pmc[hw_index], meddle_new_raw);
		pc->lock++;
	}
	return atomic_load(&fake_pmc[hw_index]);
}

#define TORN_TOTAL (1ull << 40)
#define TORN_OLD_RAW 5ull
#define TORN_NEW_RAW 0x7fff00000000ull

static void meddle_setup(struct perf_event_mmap_page *pc, uint32_t index,
			 int updates)
{
	page_init(pc, index, 48, (int64_t)(TORN_TOTAL - TORN_OLD_RAW));
	atomic_store(&fake_pmc[index - 1], TORN_OLD_RAW);
	meddle_page = pc;
	meddle_left = updates;
	meddle_new_raw = TORN_NEW_RAW;
}

TEST(torn_reads_are_seen_without_the_lock)
{
	struct perf_event_mmap_page page;
	struct pc_page_snap s;
	struct pc_page_value v;

	/* Without the check: the old offset plus the new counter. */
	meddle_setup(&page, 1, 1);
	REQUIRE(pc_page_snap_take(&page, &s, false, meddling_read_pmc,
				  fake_read_stamp));
	REQUIRE(pc_page_snap_value(&s, false, &v));
	CHECK_EQ_U64(v.value, TORN_TOTAL - TORN_OLD_RAW + TORN_NEW_RAW);
	CHECK(v.value != TORN_TOTAL);
	/* ... which the sequence check sees. */
	CHECK(!pc_page_snap_valid(&page, &s));

	/* The whole read retries and gets the true count, here and with
	 * updates slipping in on several attempts in a row. */
	meddle_setup(&page, 1, 1);
	REQUIRE(pc_fastread_page_with(&page, false, meddling_read_pmc,
				      fake_read_stamp, &v));
	CHECK_EQ_U64(v.value, TORN_TOTAL);
	CHECK_EQ_INT(meddle_left, 0);
	meddle_setup(&page, 1, 5);
	REQUIRE(pc_fastread_page_with(&page, false, meddling_read_pmc,
				      fake_read_stamp, &v));
	CHECK_EQ_U64(v.value, TORN_TOTAL);
	CHECK_EQ_INT(meddle_left, 0);
}

/* The one-pass group read: an update of the middle page between its
 * fields and its counter makes the whole pass start again. */
TEST(torn_group_read_is_retried)
{
	struct perf_event_mmap_page pages[3];
	const volatile struct perf_event_mmap_page *pcs[3] = {
		&pages[0], &pages[1], &pages[2] };
	struct pc_page_snap snaps[3];
	struct pc_page_value v[3];
	int k;

	page_init(&pages[0], 1, 48, 1000);
	atomic_store(&fake_pmc[0], 1);
	page_init(&pages[2], 3, 48, 3000);
	atomic_store(&fake_pmc[2], 3);
	meddle_setup(&pages[1], 2, 2);
	REQUIRE(pc_fastread_pages_with(pcs, 3, false, meddling_read_pmc,
				       fake_read_stamp, snaps, v));
	CHECK_EQ_INT(meddle_left, 0);
	CHECK_EQ_U64(v[0].value, 1001);
	CHECK_EQ_U64(v[1].value, TORN_TOTAL);
	CHECK_EQ_U64(v[2].value, 3003);
	for (k = 0; k < 3; k++)
		CHECK_EQ_U64(snaps[k].seq, pages[k].lock);
}

TEST_MAIN(TEST_CASE(sign_extension), TEST_CASE(falls_back_when_page_says_so),
	  TEST_CASE(time_enabled_running),
	  TEST_CASE(concurrent_writer_width_32),
	  TEST_CASE(concurrent_writer_width_40),
	  TEST_CASE(concurrent_writer_width_48),
	  TEST_CASE(concurrent_writer_width_64),
	  TEST_CASE(concurrent_writer_group),
	  TEST_CASE(torn_reads_are_seen_without_the_lock),
	  TEST_CASE(torn_group_read_is_retried))
