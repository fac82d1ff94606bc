// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Set rotation by toggling group leaders: see rotate.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/rotate.h"
#include "sys/sys.h"

struct rotor_group {
	size_t set;
	size_t group;		/* the counters' group index */
	const size_t *events;	/* the counters' members, leader first */
	size_t nr_members;
	uint64_t *last_enabled;	/* per unit, at the end of the last slice */
	uint64_t *last_running;
};

struct rotor_set {
	uint16_t id;
	struct pc_rotor_set_stats stats;
};

struct rotor_event {
	size_t set;		/* (size_t)-1 until its group is added */
	size_t group;
	uint64_t switch_after;	/* 0: not a switch counter */
	uint64_t run_overflows;
	uint64_t ovfl_run;	/* its set's run of its last overflow, 0: none */
	uint64_t slice_count;	/* scratch while a slice is closed */
	uint64_t slice_time;
	struct perfctr_slices slices;
};

struct pc_rotor {
	const struct pc_counters *counters;
	size_t nr_sets, nr_events, nr_units, nr_groups;
	struct rotor_set *sets;
	struct rotor_event *events;
	struct rotor_group *groups;
	uint64_t *last_value;	/* event-major: [e * nr_units + u] */
	/* One group read (the largest group), used with busy held. */
	uint64_t *read_value;
	bool *read_present;
	size_t read_members;
	size_t active;
	bool started;		/* between start and stop */
	bool ever_started;
	atomic_flag busy;
	_Atomic uint64_t missed;
	void (*on_switch)(void *arg);
	void *on_switch_arg;
};

struct pc_rotor *pc_rotor__new(size_t nr_sets, const uint16_t *set_ids,
			       const struct pc_counters *counters)
{
	size_t nr_events = counters ? counters->nr_events : 0;
	size_t nr_units = counters ? counters->nr_units : 0;
	struct pc_rotor *r;
	size_t i;

	if (!nr_sets || !set_ids || !nr_units) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 1; i < nr_sets; i++)
		if (set_ids[i] <= set_ids[i - 1]) {
			errno = EINVAL;
			return NULL;
		}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->counters = counters;
	r->nr_sets = nr_sets;
	r->nr_events = nr_events;
	r->nr_units = nr_units;
	r->sets = calloc(nr_sets, sizeof(*r->sets));
	r->events = calloc(nr_events ? nr_events : 1, sizeof(*r->events));
	r->last_value = calloc(nr_events * nr_units + 1, sizeof(*r->last_value));
	if (!r->sets || !r->events || !r->last_value) {
		pc_rotor__delete(r);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nr_sets; i++)
		r->sets[i].id = set_ids[i];
	for (i = 0; i < nr_events; i++)
		r->events[i].set = (size_t)-1;
	atomic_flag_clear(&r->busy);
	return r;
}

void pc_rotor__delete(struct pc_rotor *r)
{
	size_t g;

	if (!r)
		return;
	for (g = 0; g < r->nr_groups; g++) {
		free(r->groups[g].last_enabled);
		free(r->groups[g].last_running);
	}
	free(r->groups);
	free(r->sets);
	free(r->events);
	free(r->last_value);
	free(r->read_value);
	free(r->read_present);
	free(r);
}

int pc_rotor__add_group(struct pc_rotor *r, size_t set, size_t group)
{
	const struct pc_counters *c = r->counters;
	struct rotor_group *groups, *grp;
	const size_t *events;
	size_t i, nr_members;

	if (set >= r->nr_sets || group >= c->nr_groups)
		return pc_err(EINVAL);
	events = c->group_members[group];
	nr_members = c->group_nr_members[group];
	if (!nr_members)
		return pc_err(EINVAL);
	if (r->ever_started)
		return pc_err(EBUSY);
	for (i = 0; i < nr_members; i++)
		if (events[i] >= r->nr_events || r->events[events[i]].set != (size_t)-1)
			return pc_err(EINVAL);
	groups = realloc(r->groups, (r->nr_groups + 1) * sizeof(*groups));
	if (!groups)
		return pc_err(ENOMEM);
	r->groups = groups;
	grp = &groups[r->nr_groups];
	memset(grp, 0, sizeof(*grp));
	grp->set = set;
	grp->group = group;
	grp->events = events;
	grp->nr_members = nr_members;
	grp->last_enabled = calloc(r->nr_units, sizeof(uint64_t));
	grp->last_running = calloc(r->nr_units, sizeof(uint64_t));
	if (nr_members > r->read_members) {
		uint64_t *v = realloc(r->read_value, nr_members * sizeof(*v));
		bool *p = v ? realloc(r->read_present, nr_members * sizeof(*p)) : NULL;

		if (v)
			r->read_value = v;
		if (p) {
			r->read_present = p;
			r->read_members = nr_members;
		}
	}
	if (!grp->last_enabled || !grp->last_running ||
	    r->read_members < nr_members) {
		free(grp->last_enabled);
		free(grp->last_running);
		return pc_err(ENOMEM);
	}
	for (i = 0; i < nr_members; i++) {
		r->events[events[i]].set = set;
		r->events[events[i]].group = r->nr_groups;
	}
	r->sets[set].stats.nr_events += nr_members;
	r->sets[set].stats.nr_groups++;
	r->nr_groups++;
	return 0;
}

void pc_rotor__on_switch(struct pc_rotor *r, void (*fn)(void *arg), void *arg)
{
	r->on_switch = fn;
	r->on_switch_arg = arg;
}

int pc_rotor__switch_after(struct pc_rotor *r, size_t event, uint64_t n)
{
	if (event >= r->nr_events)
		return pc_err(EINVAL);
	r->events[event].switch_after = n;
	return 0;
}

static int toggle_set(struct pc_rotor *r, size_t set, bool enable)
{
	int err = 0;

	for (size_t g = 0; g < r->nr_groups; g++) {
		if (r->groups[g].set != set)
			continue;
		for (size_t u = 0; u < r->nr_units; u++) {
			int rc = pc_counters_toggle(r->counters, r->groups[g].group,
						    u, enable);

			if (rc && !err)
				err = rc;
		}
	}
	return err;
}

/*
 * Read every group of @set on every unit and turn the differences since
 * the last slice into one slice per event (summed over units).  Called
 * with the set disabled, so the values are final for this run.
 */
static void close_slice(struct pc_rotor *r, size_t set)
{
	struct rotor_set *st = &r->sets[set];
	uint64_t longest = 0, unit_sum = 0;
	bool timed = false;

	for (size_t g = 0; g < r->nr_groups; g++) {
		struct rotor_group *grp = &r->groups[g];

		if (grp->set != set)
			continue;
		for (size_t m = 0; m < grp->nr_members; m++) {
			r->events[grp->events[m]].slice_count = 0;
			r->events[grp->events[m]].slice_time = 0;
		}
		for (size_t u = 0; u < r->nr_units; u++) {
			struct pc_group_values gv = {
				.nr_members = grp->nr_members,
				.value = r->read_value,
				.present = r->read_present,
			};
			uint64_t d_enabled, d_running;

			if (pc_counters_read(r->counters, grp->group, u, &gv))
				continue;
			d_enabled = gv.time_enabled - grp->last_enabled[u];
			d_running = gv.time_running - grp->last_running[u];
			grp->last_enabled[u] = gv.time_enabled;
			grp->last_running[u] = gv.time_running;
			/* The set's time is that of its first group. */
			if (!timed) {
				unit_sum += d_enabled;
				if (d_enabled > longest)
					longest = d_enabled;
			}
			for (size_t m = 0; m < grp->nr_members; m++) {
				size_t e = grp->events[m];
				uint64_t value = gv.value[m], *last;

				if (!gv.present[m])
					continue;
				last = &r->last_value[e * r->nr_units + u];
				/* Lower than last time: a sampling control
				 * reset it to 0 since. */
				r->events[e].slice_count += value >= *last ?
							    value - *last : value;
				r->events[e].slice_time += d_running;
				*last = value;
			}
		}
		for (size_t m = 0; m < grp->nr_members; m++) {
			struct rotor_event *ev = &r->events[grp->events[m]];

			perfctr_slices__add(&ev->slices, ev->slice_count,
					    ev->slice_time);
		}
		timed = true;
	}
	st->stats.active_ns += longest;
	st->stats.unit_ns += unit_sum;
}

static int begin_run(struct pc_rotor *r)
{
	struct rotor_set *st = &r->sets[r->active];

	st->stats.runs++;
	st->stats.last_ovfl_mask = 0;
	for (size_t e = 0; e < r->nr_events; e++)
		if (r->events[e].set == r->active)
			r->events[e].run_overflows = 0;
	return toggle_set(r, r->active, true);
}

static int end_run(struct pc_rotor *r)
{
	int err = toggle_set(r, r->active, false);

	close_slice(r, r->active);
	return err;
}

int pc_rotor__start(struct pc_rotor *r)
{
	int err;

	if (atomic_flag_test_and_set(&r->busy))
		return pc_err(EBUSY);
	if (r->started) {
		atomic_flag_clear(&r->busy);
		return 0;
	}
	r->ever_started = true;
	/* Leaders opened with enable_on_exec (a command target) all came on
	 * at the exec: only the active set may count. */
	for (size_t set = 0; set < r->nr_sets; set++)
		if (set != r->active)
			toggle_set(r, set, false);
	err = begin_run(r);
	r->started = true;
	atomic_flag_clear(&r->busy);
	return err ? pc_err(-err) : 0;
}

int pc_rotor__stop(struct pc_rotor *r)
{
	int err;

	while (atomic_flag_test_and_set(&r->busy))
		;	/* a handler on another thread finishes its switch */
	if (!r->started) {
		atomic_flag_clear(&r->busy);
		return 0;
	}
	err = end_run(r);
	r->started = false;
	atomic_flag_clear(&r->busy);
	return err ? pc_err(-err) : 0;
}

/* With busy held. */
static int do_switch(struct pc_rotor *r)
{
	int err, err2;

	err = end_run(r);
	r->active = (r->active + 1) % r->nr_sets;
	err2 = begin_run(r);
	if (r->on_switch)
		r->on_switch(r->on_switch_arg);
	return err ? err : err2;
}

int pc_rotor__switch(struct pc_rotor *r)
{
	int err;

	if (atomic_flag_test_and_set(&r->busy)) {
		atomic_fetch_add(&r->missed, 1);
		return -EBUSY;
	}
	if (!r->started) {
		atomic_flag_clear(&r->busy);
		return -ENOTCONN;
	}
	err = do_switch(r);
	atomic_flag_clear(&r->busy);
	return err;
}

int pc_rotor__overflow(struct pc_rotor *r, size_t event, uint64_t times)
{
	struct rotor_event *ev;
	struct rotor_set *st;
	int switched = 0;

	if (event >= r->nr_events || r->events[event].set == (size_t)-1)
		return 0;
	if (atomic_flag_test_and_set(&r->busy)) {
		atomic_fetch_add(&r->missed, 1);
		return 0;
	}
	ev = &r->events[event];
	st = &r->sets[ev->set];
	st->stats.overflows += times;
	if (event < 64)
		st->stats.last_ovfl_mask |= 1ull << event;
	ev->ovfl_run = st->stats.runs;
	ev->run_overflows += times;
	if (r->started && ev->set == r->active && ev->switch_after &&
	    ev->run_overflows >= ev->switch_after) {
		do_switch(r);
		switched = 1;
	}
	atomic_flag_clear(&r->busy);
	return switched;
}

size_t pc_rotor__active(const struct pc_rotor *r)
{
	return r->active;
}

int pc_rotor__set_stats(const struct pc_rotor *r, size_t set,
			struct pc_rotor_set_stats *out)
{
	if (set >= r->nr_sets || !out)
		return pc_err(EINVAL);
	*out = r->sets[set].stats;
	return 0;
}

const struct perfctr_slices *pc_rotor__slices(const struct pc_rotor *r,
					      size_t event)
{
	if (event >= r->nr_events)
		return NULL;
	return &r->events[event].slices;
}

uint64_t pc_rotor__total_ns(const struct pc_rotor *r)
{
	uint64_t total = 0;

	for (size_t i = 0; i < r->nr_sets; i++)
		total += r->sets[i].stats.unit_ns;
	return total;
}

uint64_t pc_rotor__missed(const struct pc_rotor *r)
{
	return atomic_load(&((struct pc_rotor *)r)->missed);
}

bool pc_rotor__overflowed_last_run(const struct pc_rotor *r, size_t event)
{
	const struct rotor_event *ev;

	if (event >= r->nr_events || r->events[event].set == (size_t)-1)
		return false;
	ev = &r->events[event];
	return ev->ovfl_run && ev->ovfl_run == r->sets[ev->set].stats.runs;
}

size_t pc_rotor__event_set(const struct pc_rotor *r, size_t event)
{
	if (event >= r->nr_events)
		return (size_t)-1;
	return r->events[event].set;
}
