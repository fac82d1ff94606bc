/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The rotor: round-robin switching between event sets by enabling and
 * disabling group leaders, with per-set accounting (runs, active time,
 * overflows) and per-event slices for the estimates.  Internal; the
 * session builds one at attach when it has sets to rotate.
 *
 * The rotor sees the counters only through their view (core/counters.h):
 * it toggles a group's leader on a unit and reads a group on a unit;
 * it never opens, closes or owns a counter and never calls into the
 * view's owner otherwise.  Leaders are opened disabled; members enabled,
 * following their leader (ENABLE of a group skips members of another PMU
 * opened disabled: docs/kernel-notes.md 4).
 *
 * A switch is: DISABLE the leaders of the active set (flags 0), read its
 * groups (the slice each event just made), ENABLE the leaders of the next
 * set in increasing set-id order.  Nothing counts in between, so the
 * counts of all sets add up to what one set counting all the time would
 * have counted only if the target does not run during the switch — which
 * holds when the switch runs in the target thread itself (a
 * self-monitoring thread switching in its overflow signal handler).
 *
 * Async-signal-safe: pc_rotor__switch, pc_rotor__overflow (through the
 * view's toggle and read, which are async-signal-safe themselves).  They and
 * start/stop exclude each other with a flag: a switch that finds the
 * rotor busy is dropped and counted in `missed`.
 */
#ifndef PERFCTR_CORE_ROTATE_H
#define PERFCTR_CORE_ROTATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"
#include "perfctr/set.h"

struct pc_rotor;

/*
 * pc_rotor__new() - a rotor for @nr_sets sets (@set_ids in increasing
 * order, distinct) over @counters (kept, not copied: valid until
 * delete).  NULL + errno.
 */
struct pc_rotor *pc_rotor__new(size_t nr_sets, const uint16_t *set_ids,
			       const struct pc_counters *counters);
void pc_rotor__delete(struct pc_rotor *r);

/*
 * pc_rotor__add_group() - group @group of the counters belongs to set
 * index @set (each group to one set at most).  Before the first start
 * only.  0 or -errno.
 */
int pc_rotor__add_group(struct pc_rotor *r, size_t set, size_t group);

/*
 * pc_rotor__switch_after() - switch away from @event's set after @n
 * overflows of @event in one run (pc_rotor__overflow() reports them).
 */
int pc_rotor__switch_after(struct pc_rotor *r, size_t event, uint64_t n);

/* pc_rotor__on_switch() - call @fn(@arg) after every switch, with the new
 * set active (in the switching context: a signal handler, perhaps). */
void pc_rotor__on_switch(struct pc_rotor *r, void (*fn)(void *arg), void *arg);

/* pc_rotor__start() - enable the active set (the first set at the first
 * start, else the one that was active at stop) and begin a run. */
int pc_rotor__start(struct pc_rotor *r);

/* pc_rotor__stop() - disable the active set and close its slice. */
int pc_rotor__stop(struct pc_rotor *r);

/* pc_rotor__switch() - close the active set's run, start the next one.
 * Async-signal-safe.  0, -EBUSY (dropped), -ENOTCONN (not started). */
int pc_rotor__switch(struct pc_rotor *r);

/*
 * pc_rotor__overflow() - @event overflowed @times times: recorded in its
 * set's last overflow mask, and when the event is flagged for switching
 * and its set is active, the set is switched after the n-th overflow of
 * the run.  Async-signal-safe.  Return: 1 when it switched, else 0.
 */
int pc_rotor__overflow(struct pc_rotor *r, size_t event, uint64_t times);

/* pc_rotor__active() - index of the active set. */
size_t pc_rotor__active(const struct pc_rotor *r);

struct pc_rotor_set_stats {
	uint64_t runs;
	uint64_t active_ns;	/* sum over runs of the longest unit's time */
	uint64_t unit_ns;	/* sum over runs and units */
	uint64_t last_ovfl_mask;/* events (session indices < 64) that
				 * overflowed in the set's last run */
	uint64_t overflows;	/* all overflows reported for the set */
	size_t nr_events;
	size_t nr_groups;
};

/* pc_rotor__set_stats() - accounting of set index @set. */
int pc_rotor__set_stats(const struct pc_rotor *r, size_t set,
			struct pc_rotor_set_stats *out);

/* pc_rotor__slices() - the slices @event made, summed over units. */
const struct perfctr_slices *pc_rotor__slices(const struct pc_rotor *r,
					      size_t event);

/* pc_rotor__total_ns() - the whole time, summed over units: what an
 * estimate extrapolates to. */
uint64_t pc_rotor__total_ns(const struct pc_rotor *r);

/* pc_rotor__missed() - switches dropped because the rotor was busy. */
uint64_t pc_rotor__missed(const struct pc_rotor *r);

/* pc_rotor__overflowed_last_run() - whether @event overflowed in the last
 * (or current) run of its set: last_ovfl_mask for any event index. */
bool pc_rotor__overflowed_last_run(const struct pc_rotor *r, size_t event);

/* pc_rotor__event_set() - set index of @event, or (size_t)-1. */
size_t pc_rotor__event_set(const struct pc_rotor *r, size_t event);

#endif /* PERFCTR_CORE_ROTATE_H */
