/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Event sets at attach: their realisation over the session's counters,
 * seen through their view (core/counters.h): the rotor (rotate.c),
 * overflow signals (overflow.c) with overflow switching and period
 * control, the clock counter that times the sets, the notifier
 * (notify.c) for notification messages; start, stop and detach.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/counters.h"
#include "core/engine.h"
#include "core/notifier.h"
#include "core/overflow.h"
#include "core/rotate.h"
#include "core/sampctl.h"
#include "core/session-internal.h"
#include "core/set-internal.h"
#include "core/set-state.h"
#include "core/target-internal.h"
#include "perfctr/set.h"
#include "stream/readfmt.h"
#include "sys/sys.h"

/* ---- at attach ---------------------------------------------------- */

static bool def_has_policy(const struct set_def *d)
{
	return d->flags & (PERFCTR_SET_SWITCH_TIMEOUT | PERFCTR_SET_SWITCH_OVERFLOW);
}

/* Rotation needs two sets with events and a policy on one of them. */
static bool wants_rotation(const struct perfctr_session *s)
{
	const struct pc_sets *sets = s->sets;
	size_t used = 0;
	bool policy = false;

	if (!sets)
		return false;
	for (size_t d = 0; d < sets->nr_defs; d++) {
		bool has = false;

		for (size_t e = 0; e < s->nr_events && !has; e++)
			has = pc_sets_event_set(s, e) == sets->defs[d].id;
		if (has) {
			used++;
			policy |= def_has_policy(&sets->defs[d]);
		}
	}
	return used >= 2 && policy;
}

bool pc_sets_counts_at_exec(const struct perfctr_session *s, size_t event)
{
	const struct pc_sets *sets = s->sets;

	if (!sets || !wants_rotation(s))
		return true;
	/* The first set that has events. */
	for (size_t d = 0; d < sets->nr_defs; d++)
		for (size_t e = 0; e < s->nr_events; e++)
			if (pc_sets_event_set(s, e) == sets->defs[d].id)
				return pc_sets_event_set(s, event) == sets->defs[d].id;
	return true;
}

uint16_t pc_sets_active_id(const struct pc_sets *sets)
{
	size_t r = pc_rotor__active(sets->rotor);

	for (size_t d = 0; d < sets->nr_defs; d++)
		if (sets->rotor_set[d] == r)
			return sets->defs[d].id;
	return 0;
}

static const struct set_def *active_def(const struct pc_sets *sets)
{
	size_t r = pc_rotor__active(sets->rotor);

	for (size_t d = 0; d < sets->nr_defs; d++)
		if (sets->rotor_set[d] == r)
			return &sets->defs[d];
	return NULL;
}

/* ---- overflow switching and period control, over the view ----------- */

/* The fd a group is toggled and read by on @unit: its first member open
 * there (the perf group's leader). */
static int leader_fd(const struct pc_counters *c, size_t group, size_t unit)
{
	for (size_t m = 0; m < c->group_nr_members[group]; m++) {
		int fd = pc_counters_fd(c, c->group_members[group][m], unit);

		if (fd >= 0)
			return fd;
	}
	return -1;
}

/* The count of @event on @unit now, 0 when unknown.  Signal context. */
static uint64_t event_value(const struct pc_counters *c, size_t event,
			    size_t unit)
{
	size_t g = c->event_group[event], nr = c->group_nr_members[g];
	uint64_t value[MAX_MEMBERS];
	bool present[MAX_MEMBERS];
	struct pc_group_values gv = { .nr_members = MAX_MEMBERS,
				      .value = value, .present = present };

	if (nr > MAX_MEMBERS || pc_counters_read(c, g, unit, &gv))
		return 0;
	for (size_t m = 0; m < nr; m++)
		if (c->group_members[g][m] == event)
			return present[m] ? value[m] : 0;
	return 0;
}

/* Whether @event's set is the one counting now. */
static bool counts_now(const struct pc_sets *sets, size_t event)
{
	return !sets->rotor || pc_rotor__event_set(sets->rotor, event) ==
			       pc_rotor__active(sets->rotor);
}

/* Apply @event's sampling controls after its overflow on the watch's
 * unit (counter @i of the watch's pc_ovf).  Signal context. */
static void period_control(struct pc_sets *sets, struct pc_ovf *ovf,
			   const struct watch *w, size_t i, size_t e)
{
	const struct pc_counters *c = &sets->view;
	struct event_ctl *ec = &sets->ev[e];
	const struct perfctr_sampling *ctl = &ec->sampling;
	int fd = pc_counters_fd(c, e, w->unit);
	bool on = counts_now(sets, e);
	uint64_t period = perfctr_sampling__next_period(ctl, &ec->rng, ec->notify,
							ec->period);

	if (period != ec->period || ctl->short_period || ctl->long_period ||
	    ctl->random_mask) {
		/* A leader of a set that does not count stays off. */
		pc_sampctl_set_period(fd, period,
				      fd != leader_fd(c, w->group, w->unit) || on);
		pc_notifier__set_twin_period(sets->notifier, e, w->unit, period, on);
		pc_ovf__set_next(ovf, i, event_value(c, e, w->unit) + period);
	}
	for (size_t k = 0; k < ec->nr_reset; k++) {
		size_t j = ec->reset[k];
		int ofd;

		if (j >= c->nr_events)
			continue;
		ofd = pc_counters_fd(c, j, w->unit);
		if (ofd >= 0)
			pc_sampctl_reset(ofd, sets->ev[j].period,
					 ofd != leader_fd(c, c->event_group[j], w->unit) ||
					 on);
	}
}

/* The overflow callback of one group on one unit.  Signal context: only
 * async-signal-safe calls (the view's, the notifier's drain, ioctls). */
static void on_overflow(struct pc_ovf *ovf, uint64_t new_mask,
			const siginfo_t *si, void *arg)
{
	struct watch *w = arg;
	struct pc_sets *sets = w->sets;

	for (size_t i = 0; i < w->nr; i++) {
		size_t e = w->events[i];
		struct event_ctl *ec = &sets->ev[e];
		uint64_t total = pc_ovf__overflows(ovf, i), times = total - w->seen[i];

		if (!times)
			continue;
		w->seen[i] = total;
		if (ec->notify)
			pc_notifier__drain(sets->notifier, e, w->unit,
					   sets->rotor ? pc_sets_active_id(sets) : ec->set);
		if (ec->has_sampling)
			period_control(sets, ovf, w, i, e);
		if (sets->rotor)
			pc_rotor__overflow(sets->rotor, e, times);
	}
}

/* The clock counter's callback: the active set's timeout ran out. */
static void on_clock(struct pc_ovf *ovf, uint64_t new_mask,
		     const siginfo_t *si, void *arg)
{
	struct clock_watch *cw = arg;

	pc_rotor__switch(cw->sets->rotor);
}

/* The clock's count now (its own fd, read as PERF_FORMAT_GROUP). */
static uint64_t clock_value(int fd)
{
	uint64_t buf[2];
	struct pc_readfmt head;
	struct pc_readfmt_entry entry;
	int saved = errno;
	ssize_t n = read(fd, buf, sizeof(buf));

	errno = saved;
	if (n < 0 || pc_readfmt_decode(PERF_FORMAT_GROUP, buf, (size_t)n, &head,
				       &entry, 1) != 1)
		return 0;
	return entry.value;
}

/* Twins count when their counter's set counts.  Signal context too. */
static void twins_follow(struct pc_sets *sets, bool on)
{
	if (!sets->notifier || !pc_notifier__attached(sets->notifier))
		return;
	for (size_t e = 0; e < sets->view.nr_events && e < sets->nr_ev; e++)
		if (sets->ev[e].notify)
			pc_notifier__enable_twins(sets->notifier, e,
						  on && counts_now(sets, e));
}

/* After every switch: give the clock the new set's timeout, counted from
 * now, or turn it off for a set without one.  Signal context. */
static void after_switch(void *arg)
{
	struct pc_sets *sets = arg;
	const struct set_def *d = active_def(sets);
	uint64_t period = d && (d->flags & PERFCTR_SET_SWITCH_TIMEOUT) ? d->timeout_ns : 0;
	struct clock_watch *cw = &sets->clock;

	twins_follow(sets, true);
	if (cw->fd < 0)
		return;
	if (!period) {
		sys_perf_disable(cw->fd, false);
		cw->period = 0;
		return;
	}
	pc_sampctl_set_period(cw->fd, period, true);
	pc_ovf__set_next(cw->ovf, 0, clock_value(cw->fd) + period);
	cw->period = period;
}

static void undo_attach(struct pc_sets *sets)
{
	for (size_t i = 0; i < sets->nr_watches; i++)
		pc_ovf__delete(sets->watches[i].ovf);
	free(sets->watches);
	sets->watches = NULL;
	sets->nr_watches = 0;
	if (sets->clock.ovf)
		pc_ovf__delete(sets->clock.ovf);
	sets->clock.ovf = NULL;
	pc_engine__delete(sets->clock.eng);
	sets->clock.eng = NULL;
	sets->clock.fd = -1;
	if (sets->notifier)
		pc_notifier__detach(sets->notifier);
	pc_rotor__delete(sets->rotor);
	sets->rotor = NULL;
	free(sets->rotor_set);
	sets->rotor_set = NULL;
	pc_counters__release(&sets->view);
}

static int build_rotor(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;
	uint16_t *used_ids;
	size_t nr_used = 0;
	int err = 0;

	used_ids = calloc(sets->nr_defs, sizeof(*used_ids));
	sets->rotor_set = calloc(sets->nr_defs, sizeof(*sets->rotor_set));
	if (!used_ids || !sets->rotor_set) {
		free(used_ids);
		return -ENOMEM;
	}
	for (size_t d = 0; d < sets->nr_defs; d++) {
		bool has = false;

		for (size_t e = 0; e < s->nr_events && !has; e++)
			has = pc_sets_event_set(s, e) == sets->defs[d].id;
		sets->rotor_set[d] = has ? nr_used : (size_t)-1;
		if (has)
			used_ids[nr_used++] = sets->defs[d].id;
	}
	sets->rotor = pc_rotor__new(nr_used, used_ids, &sets->view);
	free(used_ids);
	if (!sets->rotor)
		return -errno;
	for (size_t g = 0; g < s->nr_groups && !err; g++) {
		int d = pc_sets_find_def(sets, pc_sets_event_set(s, s->groups[g].members[0]));

		err = pc_rotor__add_group(sets->rotor, sets->rotor_set[d], g);
	}
	for (size_t e = 0; e < s->nr_events && !err; e++)
		if (sets->ev[e].switch_after)
			err = pc_rotor__switch_after(sets->rotor, e,
						     sets->ev[e].switch_after);
	if (!err)
		pc_rotor__on_switch(sets->rotor, after_switch, sets);
	return err;
}

/*
 * A counter that ticks every timeout: of the run time of the target's
 * first thread (task-clock) for thread targets, of wall time (cpu-clock)
 * for CPU targets, as perfmon2 has it (per-thread: virtual time; per-CPU:
 * wall-clock time).  The thread's clock follows it on every CPU, also
 * when its counters are on a CPU list (whose first CPU it may never run
 * on); a CPU target's is on its first CPU.
 */
static int open_clock(struct pc_sets *sets, pid_t owner)
{
	const struct pc_counters *c = &sets->view;
	struct perf_event_attr attr;
	uint64_t first = 0;
	struct pc_ovf_counter oc;
	struct pc_ovf_desc desc;

	for (size_t d = 0; d < sets->nr_defs; d++)
		if ((sets->defs[d].flags & PERFCTR_SET_SWITCH_TIMEOUT) &&
		    sets->rotor_set[d] != (size_t)-1 && !first)
			first = sets->defs[d].timeout_ns;
	if (!first)
		return 0;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = c->unit_tid[0] >= 0 ? PERF_COUNT_SW_TASK_CLOCK
					  : PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = first;
	attr.disabled = 1;
	attr.read_format = PERF_FORMAT_GROUP;
	sets->clock.eng = pc_engine__new_single(&attr, c->unit_tid[0],
						c->unit_tid[0] >= 0 ? -1 : c->unit_cpu[0],
						&sets->clock.fd);
	if (!sets->clock.eng) {
		sets->clock.fd = -1;
		return -errno;
	}
	sets->clock.sets = sets;
	sets->clock.period = first;
	oc = (struct pc_ovf_counter){
		.fd = sets->clock.fd, .period = first,
		.value_pos = (unsigned int)pc_readfmt_value_word(attr.read_format, 0) };
	memset(&desc, 0, sizeof(desc));
	desc.read_fd = sets->clock.fd;
	desc.read_words = (unsigned int)(pc_readfmt_size(attr.read_format, 1) /
					 sizeof(uint64_t));
	desc.nr_counters = 1;
	desc.counters = &oc;
	desc.signo = sets->signo ? sets->signo : SIGIO;
	desc.tid = owner;
	desc.notify = on_clock;
	desc.ctx = &sets->clock;
	sets->clock.ovf = pc_ovf__new(&desc);
	return sets->clock.ovf ? 0 : -errno;
}

static int attach_notifier(struct pc_sets *sets)
{
	const struct pc_counters *c = &sets->view;
	bool *notifying;
	bool any = false;
	int err;

	if (!sets->notifier || !sets->queue)
		return 0;
	notifying = calloc(c->nr_events ? c->nr_events : 1, sizeof(*notifying));
	if (!notifying)
		return -ENOMEM;
	for (size_t e = 0; e < c->nr_events && e < sets->nr_ev; e++)
		any |= notifying[e] = sets->ev[e].notify;
	err = any ? pc_notifier__attach(sets->notifier, c, notifying, sets->queue) : 0;
	free(notifying);
	return err;
}

/* One pc_ovf per group and unit with counters that switch or notify. */
static int watch_groups(struct pc_sets *sets, pid_t owner)
{
	const struct pc_counters *c = &sets->view;
	size_t max = c->nr_groups * c->nr_units;

	sets->watches = calloc(max ? max : 1, sizeof(*sets->watches));
	if (!sets->watches)
		return -ENOMEM;
	for (size_t g = 0; g < c->nr_groups; g++) {
		for (size_t u = 0; u < c->nr_units; u++) {
			struct pc_ovf_counter counters[MAX_WATCHED];
			struct watch *w = &sets->watches[sets->nr_watches];
			struct pc_ovf_desc desc;
			int gfd = leader_fd(c, g, u);
			uint64_t format = c->event_attr[c->group_members[g][0]]->read_format;
			size_t k = 0;

			if (gfd < 0)
				continue;
			memset(w, 0, sizeof(*w));
			for (size_t m = 0; m < c->group_nr_members[g]; m++) {
				size_t e = c->group_members[g][m];
				const struct event_ctl *ec = &sets->ev[e];
				int fd = pc_counters_fd(c, e, u);

				if (fd < 0)
					continue;
				if (ec->notify || ec->switch_after) {
					if (w->nr == MAX_WATCHED)
						return -E2BIG;
					/* Where the group read has its value. */
					counters[w->nr] = (struct pc_ovf_counter){
						.fd = fd, .period = ec->period,
						.value_pos = (unsigned int)
							pc_readfmt_value_word(format, k) };
					w->events[w->nr++] = e;
				}
				k++;
			}
			if (!w->nr)
				continue;
			w->sets = sets;
			w->group = g;
			w->unit = u;
			memset(&desc, 0, sizeof(desc));
			desc.read_fd = gfd;
			desc.read_words = (unsigned int)
				(pc_readfmt_size(format, k) / sizeof(uint64_t));
			desc.nr_counters = w->nr;
			desc.counters = counters;
			desc.signo = sets->signo ? sets->signo : SIGIO;
			desc.tid = owner;
			desc.notify = on_overflow;
			desc.ctx = w;
			w->ovf = pc_ovf__new(&desc);
			if (!w->ovf)
				return -errno;
			sets->nr_watches++;
		}
	}
	return 0;
}

int pc_sets_attach(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;
	pid_t owner;
	int err;

	if (!sets)
		return 0;
	err = pc_sets_sync_events(s);
	if (!err)
		err = pc_counters__of_engine(&sets->view, s->engine,
					     pc_target_open_flags(s->target));
	if (err)
		return err;
	sets->target_pid = perfctr_target__pid(s->target);
	owner = sets->owner_tid;
	if (!owner)
		owner = perfctr_target__kind(s->target) == PERFCTR_TARGET_SELF ?
			perfctr_target__pid(s->target) : (pid_t)syscall(SYS_gettid);
	sets->rotated = wants_rotation(s);
	if (sets->rotated) {
		err = build_rotor(s);
		if (!err)
			err = open_clock(sets, owner);
	}
	if (!err)
		err = attach_notifier(sets);
	if (!err)
		err = watch_groups(sets, owner);
	if (err)
		undo_attach(sets);
	return err;
}

static void fold_accounting(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;

	if (!sets->rotor)
		return;
	for (size_t d = 0; d < sets->nr_defs; d++) {
		struct pc_rotor_set_stats st;
		struct pc_rotor_set_stats *c = &sets->defs[d].carried;

		if (sets->rotor_set[d] == (size_t)-1 ||
		    pc_rotor__set_stats(sets->rotor, sets->rotor_set[d], &st))
			continue;
		c->runs += st.runs;
		c->active_ns += st.active_ns;
		c->unit_ns += st.unit_ns;
		c->overflows += st.overflows;
		if (st.runs)
			c->last_ovfl_mask = st.last_ovfl_mask;
	}
	for (size_t e = 0; e < s->nr_events && e < sets->nr_ev; e++) {
		size_t r = pc_rotor__event_set(sets->rotor, e);
		struct pc_rotor_set_stats st;

		perfctr_slices__merge(&sets->ev[e].carried,
				      pc_rotor__slices(sets->rotor, e));
		if (r != (size_t)-1 && !pc_rotor__set_stats(sets->rotor, r, &st) &&
		    st.runs)
			sets->ev[e].carried_last_ovfl =
				pc_rotor__overflowed_last_run(sets->rotor, e);
	}
	sets->carried_missed += pc_rotor__missed(sets->rotor);
}

void pc_sets_detach(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;

	if (!sets)
		return;
	if (sets->rotor)
		pc_rotor__stop(sets->rotor);
	if (sets->clock.fd >= 0)
		sys_perf_disable(sets->clock.fd, false);
	/* Messages of the last overflows before the signals stop. */
	if (pc_notifier__attached(sets->notifier))
		for (size_t e = 0; e < sets->view.nr_events && e < sets->nr_ev; e++)
			for (size_t u = 0; sets->ev[e].notify && u < sets->view.nr_units; u++)
				pc_notifier__drain(sets->notifier, e, u,
						   sets->rotor ? pc_sets_active_id(sets)
							       : sets->ev[e].set);
	fold_accounting(s);
	undo_attach(sets);
}

bool pc_sets_rotating(const struct perfctr_session *s)
{
	return s->sets && (s->sets->rotor ||
			   pc_notifier__has_twins(s->sets->notifier));
}

static int toggle_all(struct pc_sets *sets, bool on)
{
	const struct pc_counters *c = &sets->view;
	int err = 0;

	for (size_t g = 0; g < c->nr_groups; g++)
		for (size_t u = 0; u < c->nr_units; u++) {
			int rc = pc_counters_toggle(c, g, u, on);

			if (rc && !err)
				err = rc;
		}
	return err;
}

int pc_sets_start(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;
	int err;

	if (!sets->rotor) {
		twins_follow(sets, true);
		return toggle_all(sets, true);
	}
	err = pc_rotor__start(sets->rotor);
	if (!err)
		after_switch(sets);
	return err;
}

int pc_sets_stop(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;

	twins_follow(sets, false);
	if (!sets->rotor)
		return toggle_all(sets, false);
	if (sets->clock.fd >= 0)
		sys_perf_disable(sets->clock.fd, false);
	return pc_rotor__stop(sets->rotor);
}

int perfctr_session__switch(struct perfctr_session *s)
{
	int err;

	if (!s)
		return pc_err(EINVAL);
	if (!s->sets || !s->sets->rotor)
		return pc_err(ENOTCONN);
	err = pc_rotor__switch(s->sets->rotor);
	return err ? pc_err(-err) : 0;
}

int perfctr_session__active_set(const struct perfctr_session *s)
{
	if (!s)
		return pc_err(EINVAL);
	if (!s->sets || !s->sets->rotor)
		return pc_err(ENOTCONN);
	return pc_sets_active_id(s->sets);
}
