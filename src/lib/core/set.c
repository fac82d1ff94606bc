/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Event sets in a session, their definitions: sets and their switch
 * policies, which events belong to which, notifications and sampling
 * controls per event, each checked when it is given.  What becomes of
 * them at attach is set-switch.c's; what they counted, set-read.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "core/notifier.h"
#include "core/session-internal.h"
#include "core/set-internal.h"
#include "core/set-state.h"
#include "perfctr/set.h"

static struct pc_sets *get_sets(struct perfctr_session *s)
{
	if (!s->sets) {
		s->sets = calloc(1, sizeof(*s->sets));
		if (!s->sets)
			return NULL;
		s->sets->defs = calloc(1, sizeof(*s->sets->defs));
		if (!s->sets->defs) {
			free(s->sets);
			s->sets = NULL;
			return NULL;
		}
		s->sets->nr_defs = 1;
		s->sets->clock.fd = -1;
	}
	return s->sets;
}

/* Grow the per-event array to the session's events (new ones: set 0). */
int pc_sets_sync_events(struct perfctr_session *s)
{
	struct pc_sets *sets = get_sets(s);
	struct event_ctl *ev;

	if (!sets)
		return -ENOMEM;
	if (sets->nr_ev >= s->nr_events)
		return 0;
	ev = realloc(sets->ev, s->nr_events * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	memset(ev + sets->nr_ev, 0, (s->nr_events - sets->nr_ev) * sizeof(*ev));
	sets->ev = ev;
	sets->nr_ev = s->nr_events;
	return 0;
}

uint16_t pc_sets_event_set(const struct perfctr_session *s, size_t e)
{
	return s->sets && e < s->sets->nr_ev ? s->sets->ev[e].set : 0;
}

int pc_sets_find_def(const struct pc_sets *sets, uint16_t id)
{
	for (size_t i = 0; sets && i < sets->nr_defs; i++)
		if (sets->defs[i].id == id)
			return (int)i;
	return id == 0 ? 0 : -1;
}

void pc_sets_free(struct pc_sets *sets)
{
	if (!sets)
		return;
	pc_notifier__delete(sets->notifier);
	perfctr_notify__delete(sets->queue);
	free(sets->defs);
	for (size_t e = 0; e < sets->nr_ev; e++)
		free(sets->ev[e].reset);
	free(sets->ev);
	free(sets);
}

int perfctr_session__create_set(struct perfctr_session *s,
				const struct perfctr_set_desc *desc)
{
	struct pc_sets *sets;
	struct set_def *defs;
	unsigned int flags;
	uint64_t timeout;
	size_t pos;
	int i;

	if (!s || !desc || !pc_opts_valid(desc, sizeof(*desc)) ||
	    desc->sz < offsetof(struct perfctr_set_desc, flags))
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	flags = PC_OPTS_GET(desc, flags, 0);
	timeout = PC_OPTS_GET(desc, timeout_ns, 0);
	if ((flags & ~(unsigned int)(PERFCTR_SET_SWITCH_TIMEOUT |
				     PERFCTR_SET_SWITCH_OVERFLOW)) ||
	    (!!(flags & PERFCTR_SET_SWITCH_TIMEOUT) != !!timeout))
		return pc_err(EINVAL);
	sets = get_sets(s);
	if (!sets)
		return pc_err(ENOMEM);
	i = pc_sets_find_def(sets, desc->id);
	if (i >= 0) {
		sets->defs[i].flags = flags;
		sets->defs[i].timeout_ns = timeout;
		return 0;
	}
	defs = realloc(sets->defs, (sets->nr_defs + 1) * sizeof(*defs));
	if (!defs)
		return pc_err(ENOMEM);
	sets->defs = defs;
	for (pos = 0; pos < sets->nr_defs && defs[pos].id < desc->id; pos++)
		;
	memmove(&defs[pos + 1], &defs[pos], (sets->nr_defs - pos) * sizeof(*defs));
	memset(&defs[pos], 0, sizeof(*defs));
	defs[pos].id = desc->id;
	defs[pos].flags = flags;
	defs[pos].timeout_ns = timeout;
	sets->nr_defs++;
	return 0;
}

int perfctr_session__delete_set(struct perfctr_session *s, uint16_t id)
{
	struct pc_sets *sets;
	int i;

	if (!s || id == 0)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	sets = s->sets;
	i = pc_sets_find_def(sets, id);
	if (i < 0)
		return pc_err(ENOENT);
	for (size_t e = 0; e < s->nr_events; e++)
		if (pc_sets_event_set(s, e) == id)
			return pc_err(ENOTEMPTY);
	memmove(&sets->defs[i], &sets->defs[i + 1],
		(sets->nr_defs - (size_t)i - 1) * sizeof(*sets->defs));
	sets->nr_defs--;
	return 0;
}

int perfctr_session__add_events_to_set(struct perfctr_session *s, uint16_t id,
				       const char *spec,
				       struct perfctr_parse_error *perr)
{
	size_t before;
	int n, err;

	if (!s || !spec)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	if (pc_sets_find_def(s->sets, id) < 0)
		return pc_err(ENOENT);
	err = pc_sets_sync_events(s);
	if (err)
		return pc_err(-err);
	before = s->nr_events;
	n = perfctr_session__add_events(s, spec, perr);
	if (n <= 0)
		return n;
	err = pc_sets_sync_events(s);
	if (err)
		return pc_err(-err);	/* the events stay, in set 0 */
	for (size_t e = before; e < s->nr_events; e++)
		s->sets->ev[e].set = id;
	return n;
}

int perfctr_session__event_set(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return pc_err(EINVAL);
	return pc_sets_event_set(s, idx);
}

size_t perfctr_session__nr_sets(const struct perfctr_session *s)
{
	return s && s->sets ? s->sets->nr_defs : 1;
}

int perfctr_session__set_id(const struct perfctr_session *s, size_t i)
{
	if (!s || i >= perfctr_session__nr_sets(s))
		return pc_err(EINVAL);
	return s->sets ? s->sets->defs[i].id : 0;
}

/* Make @idx an overflow counter with @period (detached). */
static int make_overflow_counter(struct perfctr_session *s, size_t idx,
				 uint64_t period)
{
	struct pc_event *ev = &s->events[idx];

	if (ev->attr.freq)
		return -EINVAL;
	ev->attr.sample_period = period;
	s->sets->ev[idx].period = period;
	return 0;
}

int perfctr_session__switch_after(struct perfctr_session *s, size_t idx,
				  uint64_t period, uint64_t n)
{
	int err, d;

	if (!s || idx >= s->nr_events || !period || !n)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	err = pc_sets_sync_events(s);
	if (!err)
		err = make_overflow_counter(s, idx, period);
	if (err)
		return pc_err(-err);
	s->sets->ev[idx].switch_after = n;
	d = pc_sets_find_def(s->sets, s->sets->ev[idx].set);
	if (d >= 0)
		s->sets->defs[d].flags |= PERFCTR_SET_SWITCH_OVERFLOW;
	return 0;
}

int perfctr_session__set_signal(struct perfctr_session *s, int signo, pid_t tid)
{
	struct pc_sets *sets;

	if (!s || signo < 0 || signo >= NSIG || signo == SIGKILL ||
	    signo == SIGSTOP || tid < 0)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	sets = get_sets(s);
	if (!sets)
		return pc_err(ENOMEM);
	sets->signo = signo;
	sets->owner_tid = tid;
	return 0;
}

/* The counters @idx resets at its overflows (@events, any index). */
static int set_reset(struct perfctr_session *s, size_t idx,
		     const size_t *events, size_t nr)
{
	struct event_ctl *ec = &s->sets->ev[idx];
	size_t *copy = NULL;

	if (nr) {
		copy = malloc(nr * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, events, nr * sizeof(*copy));
	}
	free(ec->reset);
	ec->reset = copy;
	ec->nr_reset = nr;
	return 0;
}

int perfctr_session__notify(struct perfctr_session *s, size_t idx,
			    uint64_t period, const struct perfctr_sampling *ctl)
{
	struct event_ctl *ec;
	int err;

	if (!s || idx >= s->nr_events || !period ||
	    !pc_opts_valid(ctl, sizeof(*ctl)))
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	err = pc_sets_sync_events(s);
	if (!err && !s->sets->notifier) {
		s->sets->notifier = pc_notifier__new();
		if (!s->sets->notifier)
			err = -ENOMEM;
	}
	if (!err)
		err = make_overflow_counter(s, idx, period);
	if (err)
		return pc_err(-err);
	ec = &s->sets->ev[idx];
	ec->notify = true;
	ec->has_sampling = ctl != NULL;
	memset(&ec->sampling, 0, sizeof(ec->sampling));
	if (ctl)
		memcpy(&ec->sampling, ctl,
		       ctl->sz < sizeof(ec->sampling) ? ctl->sz : sizeof(ec->sampling));
	ec->sampling.sz = sizeof(ec->sampling);
	ec->rng = ec->sampling.random_seed;
	free(ec->reset);
	ec->reset = NULL;
	ec->nr_reset = 0;
	if (ec->sampling.reset_mask) {
		size_t events[64], nr = 0;

		for (size_t j = 0; j < 64; j++)
			if ((ec->sampling.reset_mask & (1ull << j)) && j != idx &&
			    j < s->nr_events)
				events[nr++] = j;
		err = set_reset(s, idx, events, nr);
		if (err)
			return pc_err(-err);
	}
	/* What a message needs from each overflow; PERF_SAMPLE_PERIOD is
	 * left out: software and tracepoint events would write a sample
	 * for every event (docs/kernel-notes.md 2). */
	s->events[idx].attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
					  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
					  (pc_notifier__nr_record(s->sets->notifier, idx) ?
					   PERF_SAMPLE_READ : 0);
	s->events[idx].attr.wakeup_events = 1;
	return 0;
}

/* Record @events (@nr) with each message of notifying event @idx. */
static int set_record(struct perfctr_session *s, size_t idx,
		      const size_t *events, size_t nr)
{
	int err;

	if (!s || idx >= s->nr_events || !s->sets || idx >= s->sets->nr_ev ||
	    !s->sets->ev[idx].notify || (nr && !events))
		return pc_err(EINVAL);
	for (size_t k = 0; k < nr; k++)
		if (events[k] >= s->nr_events ||
		    s->events[events[k]].group != s->events[idx].group)
			return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	err = pc_notifier__set_record(s->sets->notifier, idx, events, nr);
	if (err)
		return pc_err(-err);
	/* The sample reads the whole group (the session's read_format has
	 * PERF_FORMAT_GROUP | PERF_FORMAT_ID); with inherit the kernel wants
	 * PERF_SAMPLE_TID too, which a notifying counter has. */
	if (nr)
		s->events[idx].attr.sample_type |= PERF_SAMPLE_READ;
	else
		s->events[idx].attr.sample_type &= ~(uint64_t)PERF_SAMPLE_READ;
	return 0;
}

int perfctr_session__notify_record(struct perfctr_session *s, size_t idx,
				   uint64_t mask)
{
	size_t events[64], nr = 0;

	for (size_t j = 0; j < 64; j++)
		if (mask & (1ull << j))
			events[nr++] = j;
	return set_record(s, idx, events, nr);
}

int perfctr_session__notify_record_events(struct perfctr_session *s, size_t idx,
					  const size_t *events, size_t nr)
{
	return set_record(s, idx, events, nr);
}

int perfctr_session__notify_reset(struct perfctr_session *s, size_t idx,
				  const size_t *events, size_t nr)
{
	int err;

	if (!s || idx >= s->nr_events || !s->sets || idx >= s->sets->nr_ev ||
	    !s->sets->ev[idx].notify || !s->sets->ev[idx].has_sampling ||
	    (nr && !events))
		return pc_err(EINVAL);
	for (size_t k = 0; k < nr; k++)
		if (events[k] >= s->nr_events || events[k] == idx)
			return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	err = set_reset(s, idx, events, nr);
	return err ? pc_err(-err) : 0;
}

int perfctr_session__msg_values(const struct perfctr_session *s,
				const struct perfctr_msg *msg,
				uint64_t *values, size_t n)
{
	int ret;

	if (!s || !msg || !s->sets)
		return pc_err(EINVAL);
	ret = pc_notifier__msg_values(s->sets->notifier, msg, values, n);
	return ret < 0 ? pc_err(-ret) : ret;
}

struct perfctr_notify *perfctr_session__notify_queue(struct perfctr_session *s,
						     const struct perfctr_notify_opts *opts)
{
	struct pc_sets *sets;

	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	sets = get_sets(s);
	if (!sets) {
		errno = ENOMEM;
		return NULL;
	}
	if (!sets->queue) {
		if (s->attached) {
			errno = EBUSY;
			return NULL;
		}
		sets->queue = perfctr_notify__new(opts);
	}
	return sets->queue;
}

int perfctr_session__restart(struct perfctr_session *s)
{
	if (!s)
		return pc_err(EINVAL);
	if (!s->sets || !s->sets->queue)
		return 0;
	return perfctr_notify__restart(s->sets->queue);
}
