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
	size_t *events;		/* leader first */
	size_t nr_members;
	int *leader_fds;	/* per unit */
	uint64_t *ids;		/* member-major */
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
	uint64_t slice_count;	/* scratch while a slice is closed */
	uint64_t slice_time;
	struct perfctr_slices slices;
};

struct pc_rotor {
	size_t nr_sets, nr_events, nr_units, nr_groups;
	struct rotor_set *sets;
	struct rotor_event *events;
	struct rotor_group *groups;
	uint64_t *last_value;	/* event-major: [e * nr_units + u] */
	uint64_t *read_buf;	/* the largest group read */
	size_t read_words;
	size_t active;
	bool started;		/* between start and stop */
	bool ever_started;
	atomic_flag busy;
	_Atomic uint64_t missed;
	void (*on_switch)(void *arg);
	void *on_switch_arg;
};

struct pc_rotor *pc_rotor__new(size_t nr_sets, const uint16_t *set_ids,
			       size_t nr_events, size_t nr_units)
{
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
		free(r->groups[g].events);
		free(r->groups[g].leader_fds);
		free(r->groups[g].ids);
		free(r->groups[g].last_enabled);
		free(r->groups[g].last_running);
	}
	free(r->groups);
	free(r->sets);
	free(r->events);
	free(r->last_value);
	free(r->read_buf);
	free(r);
}

int pc_rotor__add_group(struct pc_rotor *r, size_t set, const size_t *events,
			size_t nr_members, const int *leader_fds,
			const uint64_t *ids)
{
	struct rotor_group *groups, *grp;
	size_t i, words = 3 + 2 * nr_members;

	if (set >= r->nr_sets || !nr_members || !events || !leader_fds || !ids)
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
	grp->nr_members = nr_members;
	grp->events = malloc(nr_members * sizeof(*grp->events));
	grp->leader_fds = malloc(r->nr_units * sizeof(*grp->leader_fds));
	grp->ids = malloc(nr_members * r->nr_units * sizeof(*grp->ids));
	grp->last_enabled = calloc(r->nr_units, sizeof(uint64_t));
	grp->last_running = calloc(r->nr_units, sizeof(uint64_t));
	if (words > r->read_words) {
		uint64_t *buf = realloc(r->read_buf, words * sizeof(*buf));

		if (buf) {
			r->read_buf = buf;
			r->read_words = words;
		}
	}
	if (!grp->events || !grp->leader_fds || !grp->ids ||
	    !grp->last_enabled || !grp->last_running || r->read_words < words) {
		free(grp->events);
		free(grp->leader_fds);
		free(grp->ids);
		free(grp->last_enabled);
		free(grp->last_running);
		return pc_err(ENOMEM);
	}
	memcpy(grp->events, events, nr_members * sizeof(*events));
	memcpy(grp->leader_fds, leader_fds, r->nr_units * sizeof(*leader_fds));
	memcpy(grp->ids, ids, nr_members * r->nr_units * sizeof(*ids));
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
		const struct rotor_group *grp = &r->groups[g];

		if (grp->set != set)
			continue;
		for (size_t u = 0; u < r->nr_units; u++) {
			int rc;

			if (grp->leader_fds[u] < 0)
				continue;
			rc = enable ? sys_perf_enable(grp->leader_fds[u], false)
				    : sys_perf_disable(grp->leader_fds[u], false);
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
			size_t want = (3 + 2 * grp->nr_members) * sizeof(uint64_t);
			uint64_t *buf = r->read_buf, nr, d_enabled, d_running;
			ssize_t n;

			if (grp->leader_fds[u] < 0)
				continue;
			n = read(grp->leader_fds[u], buf, want);
			if (n < (ssize_t)(3 * sizeof(uint64_t)))
				continue;
			nr = buf[0];
			if (nr > grp->nr_members ||
			    (size_t)n < (3 + 2 * nr) * sizeof(uint64_t))
				continue;
			d_enabled = buf[1] - grp->last_enabled[u];
			d_running = buf[2] - grp->last_running[u];
			grp->last_enabled[u] = buf[1];
			grp->last_running[u] = buf[2];
			/* The set's time is that of its first group. */
			if (!timed) {
				unit_sum += d_enabled;
				if (d_enabled > longest)
					longest = d_enabled;
			}
			for (uint64_t i = 0; i < nr; i++) {
				uint64_t value = buf[3 + 2 * i], id = buf[4 + 2 * i];

				for (size_t m = 0; m < grp->nr_members; m++) {
					size_t e = grp->events[m];
					uint64_t *last;

					if (grp->ids[m * r->nr_units + u] != id)
						continue;
					last = &r->last_value[e * r->nr_units + u];
					/* Lower than last time: a sampling
					 * control reset it to 0 since. */
					r->events[e].slice_count += value >= *last ?
								    value - *last : value;
					r->events[e].slice_time += d_running;
					*last = value;
					break;
				}
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

size_t pc_rotor__event_set(const struct pc_rotor *r, size_t event)
{
	if (event >= r->nr_events)
		return (size_t)-1;
	return r->events[event].set;
}
