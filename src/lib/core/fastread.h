/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The fast read (internal): a counter's value computed in user space from
 * its mmap'd perf_event_mmap_page, the modern form of the seed's
 *
 *	value = sum + (now - start)
 *
 * with the page's `lock` sequence count in place of the seed's tsc_start
 * retry check:
 *
 *	do {
 *		seq = lock;			(odd: the kernel is writing)
 *		index, offset, pmc_width, time fields;
 *		pmc = hardware counter index - 1 (rdpmc, mrs)
 *	} while (lock != seq);
 *	value = offset + sign_extend(pmc, pmc_width)
 *
 * It only gives a value when the page says the counter is readable here
 * and now: cap_user_rdpmc set AND index != 0 (with arm64's
 * perf_user_access = 0 the kernel still sets cap_user_rdpmc from config1
 * but gives index 0; an event that is not scheduled has index 0; software,
 * tracepoint and msr events always have index 0).  Otherwise the caller
 * falls back to read(2).  The caller also must not use it for a counter
 * of another thread: the page's index names a counter on the CPU where
 * *that* thread runs.
 *
 * Why software events cannot be read from their page: their count lives
 * in the kernel's event->count and the page's `offset` is a copy made only
 * when the kernel updates the page (scheduling in, mmap, some ioctls), not
 * on each event; with index 0 there is no hardware part to add.  So
 * offset is a stale lower bound, and the time fields are stale too
 * (cap_user_time = 0, docs/kernel-notes.md 12): read() is the only exact
 * way.
 *
 * Time enabled/running (for scaling) come from the page's times plus the
 * time since its last update, measured with the timestamp counter (rdtsc,
 * cntvct_el0) and converted with time_mult/time_shift/time_offset, wrapped
 * with time_cycles/time_mask when cap_user_time_short says the counter is
 * narrow; time_zero only matters for converting to perf_clock and is not
 * used here.  Running advances only while the counter is on (index != 0).
 *
 * Everything here is async-signal-safe and lock-free.  The algorithm is a
 * static inline function taking the counter and timestamp readers as
 * parameters, so that the unit test runs exactly this code against a
 * synthetic page with fake readers (tests/unit/test_fastread.c).
 */
#ifndef PERFCTR_CORE_FASTREAD_H
#define PERFCTR_CORE_FASTREAD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads hardware counter @hw_index (the page's index - 1). */
typedef uint64_t (*pc_read_pmc_t)(uint32_t hw_index);
/* Reads the timestamp counter the page's time_* fields are based on. */
typedef uint64_t (*pc_read_stamp_t)(void);

/* Give up (and fall back to read()) after this many torn attempts: a page
 * rewritten faster than we can read it is not worth spinning on. */
#define PC_FASTREAD_MAX_RETRIES 10000

struct pc_page_value {
	uint64_t value;
	uint64_t time_enabled;
	uint64_t time_running;
	bool times;	/* time fields are current (cap_user_time) */
};

/* Sign-extend the low @width bits of @raw (width 1..64). */
static inline int64_t pc_sign_extend(uint64_t raw, unsigned int width)
{
	unsigned int shift = 64 - width;

	return (int64_t)(raw << shift) >> shift;
}

/* The page's time delta since its last update, per the kernel header. */
static inline uint64_t pc_page_time_delta(uint64_t cyc, uint16_t time_shift,
					  uint32_t time_mult,
					  uint64_t time_offset, bool is_short,
					  uint64_t time_cycles,
					  uint64_t time_mask)
{
	uint64_t quot, rem;

	if (is_short)
		cyc = time_cycles + ((cyc - time_cycles) & time_mask);
	quot = cyc >> time_shift;
	rem = cyc & (((uint64_t)1 << time_shift) - 1);
	return time_offset + quot * time_mult +
	       ((rem * time_mult) >> time_shift);
}

/* The values a page read needs, taken under one sequence number. */
struct pc_page_snap {
	uint32_t seq, index;
	uint64_t offset, pmc;
	uint16_t width;
	bool rdpmc, user_time, time_short;
	uint64_t enabled, running, stamp;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_offset, time_cycles, time_mask;
};

/* Take the fields of one page and read its counter; no retry here.
 * Return: false when the page is being written (odd sequence). */
static inline bool pc_page_snap_take(const volatile struct perf_event_mmap_page *pc,
				     struct pc_page_snap *s, bool want_times,
				     pc_read_pmc_t read_pmc,
				     pc_read_stamp_t read_stamp)
{
	uint64_t caps;

	s->seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
	if (s->seq & 1)
		return false;
	caps = pc->capabilities;
	/* Before cap_bit0_is_deprecated (bit 1) the bits below meant
	 * something else: trust none of them then. */
	if (!(caps & 2))
		caps = 0;
	s->rdpmc = (caps >> 2) & 1;		/* cap_user_rdpmc */
	s->user_time = (caps >> 3) & 1;		/* cap_user_time */
	s->time_short = (caps >> 5) & 1;	/* cap_user_time_short */
	s->index = pc->index;
	s->offset = (uint64_t)pc->offset;
	s->width = pc->pmc_width;
	s->pmc = 0;
	if (s->rdpmc && s->index && s->width >= 1 && s->width <= 64)
		s->pmc = read_pmc(s->index - 1);
	if (want_times) {
		s->enabled = pc->time_enabled;
		s->running = pc->time_running;
		s->stamp = s->user_time ? read_stamp() : 0;
		s->time_shift = pc->time_shift;
		s->time_mult = pc->time_mult;
		s->time_offset = pc->time_offset;
		s->time_cycles = pc->time_cycles;
		s->time_mask = pc->time_mask;
	} else {
		s->enabled = s->running = s->stamp = 0;
		s->time_shift = 0;
		s->time_mult = 0;
		s->time_offset = s->time_cycles = s->time_mask = 0;
	}
	return true;
}

/* Still the same sequence number: the snapshot is consistent. */
static inline bool pc_page_snap_valid(const volatile struct perf_event_mmap_page *pc,
				      const struct pc_page_snap *s)
{
	/* Orders the field reads above before the re-read of lock. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&pc->lock, __ATOMIC_RELAXED) == s->seq;
}

/* The value from a consistent snapshot; false when the page says the
 * counter cannot be read in user space now. */
static inline bool pc_page_snap_value(const struct pc_page_snap *s,
				      bool want_times,
				      struct pc_page_value *out)
{
	if (!s->rdpmc || !s->index || s->width < 1 || s->width > 64)
		return false;
	out->value = s->offset + (uint64_t)pc_sign_extend(s->pmc, s->width);
	out->times = false;
	if (want_times) {
		out->time_enabled = s->enabled;
		out->time_running = s->running;
		if (s->user_time) {
			uint64_t delta = pc_page_time_delta(s->stamp,
				s->time_shift, s->time_mult, s->time_offset,
				s->time_short, s->time_cycles, s->time_mask);

			out->time_enabled += delta;
			out->time_running += delta;	/* index != 0: on */
			out->times = true;
		}
	}
	return true;
}

/*
 * pc_fastread_page_with() - read one counter from its page.
 * Return: true with *out filled, false when the caller must read().
 */
static inline bool pc_fastread_page_with(const volatile struct perf_event_mmap_page *pc,
					 bool want_times,
					 pc_read_pmc_t read_pmc,
					 pc_read_stamp_t read_stamp,
					 struct pc_page_value *out)
{
	struct pc_page_snap s;
	unsigned int tries;

	for (tries = 0; tries < PC_FASTREAD_MAX_RETRIES; tries++) {
		if (!pc_page_snap_take(pc, &s, want_times, read_pmc, read_stamp))
			continue;
		if (pc_page_snap_valid(pc, &s))
			return pc_page_snap_value(&s, want_times, out);
	}
	return false;
}

/*
 * pc_fastread_pages_with() - read @n counters in one pass: every page's
 * fields and counter are read, then every sequence number is checked, so
 * the values are from one interval without a kernel update of any of
 * them (a context switch in between makes the pass start again).
 * Return: true with out[0..n-1], false when any counter needs read().
 */
static inline bool pc_fastread_pages_with(const volatile struct perf_event_mmap_page *const *pcs,
					  size_t n, bool want_times,
					  pc_read_pmc_t read_pmc,
					  pc_read_stamp_t read_stamp,
					  struct pc_page_snap *snaps,
					  struct pc_page_value *out)
{
	unsigned int tries;
	size_t i;

	for (tries = 0; tries < PC_FASTREAD_MAX_RETRIES; tries++) {
		bool torn = false;

		for (i = 0; i < n && !torn; i++)
			if (!pc_page_snap_take(pcs[i], &snaps[i], want_times,
					       read_pmc, read_stamp))
				torn = true;
		if (!torn) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			for (i = 0; i < n && !torn; i++)
				if (__atomic_load_n(&pcs[i]->lock,
						    __ATOMIC_RELAXED) != snaps[i].seq)
					torn = true;
		}
		if (torn)
			continue;
		for (i = 0; i < n; i++)
			if (!pc_page_snap_value(&snaps[i], want_times, &out[i]))
				return false;
		return true;
	}
	return false;
}

/* The machine's readers (fastread.c): rdpmc / mrs and rdtsc / cntvct. */
uint64_t pc_arch_read_pmc(uint32_t hw_index);
uint64_t pc_arch_read_stamp(void);
/* Whether this build has a user-space counter reader at all. */
bool pc_arch_has_user_read(void);

/* The real thing: the helpers above with the machine's readers. */
bool pc_fastread_page(const volatile struct perf_event_mmap_page *pc,
		      bool want_times, struct pc_page_value *out);
bool pc_fastread_pages(const volatile struct perf_event_mmap_page *const *pcs,
		       size_t n, bool want_times, struct pc_page_value *out);

#endif /* PERFCTR_CORE_FASTREAD_H */
