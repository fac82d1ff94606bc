// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Event sets in a session: the set definitions, switch policies,
 * notifications and sampling controls per event, and their realisation at
 * attach: the rotor (rotate.c), overflow signals (overflow.c), a clock
 * counter for timeouts, one-page sample rings for notification messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/overflow.h"
#include "core/rotate.h"
#include "core/sampctl.h"
#include "core/session-internal.h"
#include "core/set-internal.h"
#include "core/target-internal.h"
#include "perfctr/set.h"
#include "sys/sys.h"

#define MAX_WATCHED 64		/* events with an overflow role: index < 64 */
#define REC_SLOTS 1024		/* messages whose recorded values are kept */

/* The values recorded with one message (slot seq % REC_SLOTS). */
struct rec_slot {
	_Atomic uint32_t seq;	/* message number, 0: empty */
	uint32_t event;		/* the notifying event */
	uint32_t nr;		/* values in rec_values[slot * rec_width] */
};

struct set_def {
	uint16_t id;
	unsigned int flags;
	uint64_t timeout_ns;
	/* Accounting of earlier attaches. */
	struct pc_rotor_set_stats carried;
};

struct event_ctl {
	uint16_t set;
	uint64_t switch_after;		/* 0: not a switch counter */
	bool notify;
	bool has_sampling;
	uint64_t record_mask;		/* events recorded with each message */
	struct perfctr_sampling sampling;
	uint64_t rng;
	uint64_t period;		/* the sample_period asked for */
	struct perfctr_slices carried;	/* slices of earlier attaches */
};

/* A one-page sample ring of a notifying counter on one unit. */
struct note_ring {
	void *base;
	uint64_t tail;
};

/* One overflow watch: the watched counters of one group on one unit. */
struct watch {
	struct perfctr_session *s;
	struct pc_ovf *ovf;
	size_t group, unit;
	size_t nr;
	size_t events[MAX_WATCHED];	/* counter i of the pc_ovf */
	uint64_t seen[MAX_WATCHED];	/* overflows already handled */
};

struct clock_watch {
	struct perfctr_session *s;
	struct pc_ovf *ovf;
	int fd;
	uint64_t period;		/* 0: off for the active set */
};

struct pc_sets {
	struct set_def *defs;		/* sorted by id; defs[0].id == 0 */
	size_t nr_defs;
	struct event_ctl *ev;		/* per session event, grown lazily */
	size_t nr_ev;
	int signo;
	pid_t owner_tid;
	struct perfctr_notify *queue;
	uint64_t carried_missed;
	/* Message numbers and recorded values; kept after detach, for the
	 * messages still queued. */
	_Atomic uint32_t next_seq;
	struct rec_slot *rec_slots;
	uint64_t *rec_values;
	size_t rec_width;

	/* While attached. */
	struct pc_rotor *rotor;
	size_t *rotor_set;		/* def index -> rotor set index */
	struct watch *watches;
	size_t nr_watches;
	struct clock_watch clock;
	struct note_ring *rings;	/* per (event, unit), event-major */
	size_t ring_pages;
	/* Blocking mode: per (event, unit) a twin of each notifying counter
	 * whose overflow signal is SIGSTOP to the target thread itself, so
	 * the kernel stops it at the overflow, not when our handler gets to
	 * it (the target runs on meanwhile on another CPU).  -1: none. */
	int *twins;
	bool rotated;			/* the last attach rotated */
	pid_t target_pid;
};

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
static int sync_events(struct perfctr_session *s)
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

static uint16_t event_set(const struct perfctr_session *s, size_t e)
{
	return s->sets && e < s->sets->nr_ev ? s->sets->ev[e].set : 0;
}

static int find_def(const struct pc_sets *sets, uint16_t id)
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
	perfctr_notify__delete(sets->queue);
	free(sets->rec_slots);
	free(sets->rec_values);
	free(sets->defs);
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
	i = find_def(sets, desc->id);
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
	i = find_def(sets, id);
	if (i < 0)
		return pc_err(ENOENT);
	for (size_t e = 0; e < s->nr_events; e++)
		if (event_set(s, e) == id)
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
	if (find_def(s->sets, id) < 0)
		return pc_err(ENOENT);
	err = sync_events(s);
	if (err)
		return pc_err(-err);
	before = s->nr_events;
	n = perfctr_session__add_events(s, spec, perr);
	if (n <= 0)
		return n;
	err = sync_events(s);
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
	return event_set(s, idx);
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

	if (!s || idx >= s->nr_events || idx >= MAX_WATCHED || !period || !n)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	err = sync_events(s);
	if (!err)
		err = make_overflow_counter(s, idx, period);
	if (err)
		return pc_err(-err);
	s->sets->ev[idx].switch_after = n;
	d = find_def(s->sets, s->sets->ev[idx].set);
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

int perfctr_session__notify(struct perfctr_session *s, size_t idx,
			    uint64_t period, const struct perfctr_sampling *ctl)
{
	struct event_ctl *ec;
	int err;

	if (!s || idx >= s->nr_events || idx >= MAX_WATCHED || !period ||
	    !pc_opts_valid(ctl, sizeof(*ctl)))
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	err = sync_events(s);
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
	/* What a message needs from each overflow; PERF_SAMPLE_PERIOD is
	 * left out (kernel-facts 2). */
	s->events[idx].attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
					  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
					  (ec->record_mask ? PERF_SAMPLE_READ : 0);
	s->events[idx].attr.wakeup_events = 1;
	return 0;
}

int perfctr_session__notify_record(struct perfctr_session *s, size_t idx,
				   uint64_t mask)
{
	if (!s || idx >= s->nr_events || !s->sets || idx >= s->sets->nr_ev ||
	    !s->sets->ev[idx].notify)
		return pc_err(EINVAL);
	for (size_t j = 0; j < 64; j++)
		if ((mask & (1ull << j)) &&
		    (j >= s->nr_events || s->events[j].group != s->events[idx].group))
			return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	s->sets->ev[idx].record_mask = mask;
	/* The sample reads the whole group (the session's read_format has
	 * PERF_FORMAT_GROUP | PERF_FORMAT_ID); with inherit the kernel wants
	 * PERF_SAMPLE_TID too, which a notifying counter has. */
	if (mask)
		s->events[idx].attr.sample_type |= PERF_SAMPLE_READ;
	else
		s->events[idx].attr.sample_type &= ~(uint64_t)PERF_SAMPLE_READ;
	return 0;
}

int perfctr_session__msg_values(const struct perfctr_session *s,
				const struct perfctr_msg *msg,
				uint64_t *values, size_t n)
{
	const struct pc_sets *sets = s ? s->sets : NULL;
	struct rec_slot *slot;
	uint32_t nr, event;

	if (!sets || !msg)
		return pc_err(EINVAL);
	if (msg->type != PERFCTR_MSG_OVFL || !msg->seq || !sets->rec_slots ||
	    !msg->ovfl_mask)
		return pc_err(ENOENT);
	event = (uint32_t)__builtin_ctzll(msg->ovfl_mask);
	if (event >= sets->nr_ev || !sets->ev[event].record_mask)
		return pc_err(ENOENT);
	slot = &sets->rec_slots[msg->seq % REC_SLOTS];
	if (atomic_load_explicit(&slot->seq, memory_order_acquire) != msg->seq ||
	    slot->event != event)
		return pc_err(ESTALE);
	nr = slot->nr;
	for (size_t k = 0; k < n && k < nr; k++)
		values[k] = sets->rec_values[(msg->seq % REC_SLOTS) * sets->rec_width + k];
	/* A writer reuses the slot only REC_SLOTS messages later. */
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&slot->seq, memory_order_relaxed) != msg->seq)
		return pc_err(ESTALE);
	return (int)nr;
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
			has = event_set(s, e) == sets->defs[d].id;
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
			if (event_set(s, e) == sets->defs[d].id)
				return event_set(s, event) == sets->defs[d].id;
	return true;
}

static uint16_t active_id(const struct pc_sets *sets)
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

/* Copy @len bytes at ring offset @off (wrapping) out of the data area. */
static void ring_copy(const struct note_ring *ring, size_t data_size,
		      uint64_t off, void *dst, size_t len)
{
	const unsigned char *data = (const unsigned char *)ring->base + sys_page_size();
	unsigned char *out = dst;

	for (size_t i = 0; i < len; i++)
		out[i] = data[(off + i) & (data_size - 1)];
}

/* Store the values of @event's record mask from the group read at ring
 * offset @off (nr, time enabled, time running, {value, id}...) in the
 * slot of message @seq.  Signal context. */
static void record_values(struct perfctr_session *s, struct note_ring *ring,
			  size_t data_size, uint64_t off, uint64_t end,
			  size_t event, size_t unit, uint32_t seq)
{
	struct pc_sets *sets = s->sets;
	struct rec_slot *slot = &sets->rec_slots[seq % REC_SLOTS];
	uint64_t *out = &sets->rec_values[(seq % REC_SLOTS) * sets->rec_width];
	uint64_t mask = sets->ev[event].record_mask, nr = 0;
	uint32_t k = 0;

	atomic_store_explicit(&slot->seq, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	if (off + sizeof(nr) <= end)
		ring_copy(ring, data_size, off, &nr, sizeof(nr));
	for (size_t j = 0; j < 64 && k < sets->rec_width; j++) {
		uint64_t id = pc_slot(s, j, unit)->id, entry[2];

		if (!(mask & (1ull << j)))
			continue;
		out[k] = 0;	/* not open on this unit: 0 */
		for (uint64_t m = 0; m < nr && off + 24 + 16 * (m + 1) <= end; m++) {
			ring_copy(ring, data_size, off + 24 + 16 * m, entry, sizeof(entry));
			if (entry[1] == id && pc_slot(s, j, unit)->fd >= 0) {
				out[k] = entry[0];
				break;
			}
		}
		k++;
	}
	slot->event = (uint32_t)event;
	slot->nr = k;
	atomic_store_explicit(&slot->seq, seq, memory_order_release);
}

/* Queue one message per sample in @ring.  Signal context. */
static void drain_ring(struct perfctr_session *s, struct note_ring *ring,
		       size_t event, size_t unit, uint16_t set_id)
{
	struct pc_sets *sets = s->sets;
	struct perf_event_mmap_page *page = ring->base;
	size_t data_size = sys_page_size() * sets->ring_pages;
	uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ring->tail;

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header hdr;
		/* ip, pid, tid, time, cpu, res */
		struct { uint64_t ip; uint32_t pid, tid; uint64_t time; uint32_t cpu, res; } body;

		ring_copy(ring, data_size, tail, &hdr, sizeof(hdr));
		if (!hdr.size || tail + hdr.size > head)
			break;
		if (hdr.type == PERF_RECORD_SAMPLE &&
		    hdr.size >= sizeof(hdr) + sizeof(body) && sets->queue) {
			struct perfctr_msg msg;

			ring_copy(ring, data_size, tail + sizeof(hdr), &body, sizeof(body));
			memset(&msg, 0, sizeof(msg));
			msg.type = PERFCTR_MSG_OVFL;
			msg.pid = body.pid;
			msg.tid = body.tid;
			msg.cpu = (int32_t)body.cpu;
			msg.ip = body.ip;
			msg.time = body.time;
			msg.active_set = set_id;
			msg.ovfl_mask = 1ull << event;
			msg.seq = atomic_fetch_add(&sets->next_seq, 1) + 1;
			if (!msg.seq)	/* 0 is "none": skip it on wrap */
				msg.seq = atomic_fetch_add(&sets->next_seq, 1) + 1;
			if (sets->ev[event].record_mask && sets->rec_slots)
				record_values(s, ring, data_size,
					      tail + sizeof(hdr) + sizeof(body),
					      tail + hdr.size, event, unit, msg.seq);
			perfctr_notify__push(sets->queue, &msg);
		}
		tail += hdr.size;
	}
	ring->tail = tail;
	__atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
}

static uint64_t group_value(int fd, size_t words, size_t pos)
{
	uint64_t buf[3 + 2 * (MAX_WATCHED + 8)];
	ssize_t n;

	if (words > sizeof(buf) / sizeof(buf[0]))
		return 0;
	n = read(fd, buf, words * sizeof(uint64_t));
	if (n < (ssize_t)((pos + 1) * sizeof(uint64_t)))
		return 0;
	return buf[pos];
}

/* The overflow callback of one group on one unit.  Signal context. */
static void on_overflow(struct pc_ovf *ovf, uint64_t new_mask,
			const siginfo_t *si, void *arg)
{
	struct watch *w = arg;
	struct perfctr_session *s = w->s;
	struct pc_sets *sets = s->sets;
	size_t words = 3 + 2 * s->groups[w->group].nr_members;
	int gfd = *pc_group_fd(s, w->group, w->unit);

	for (size_t i = 0; i < w->nr; i++) {
		size_t e = w->events[i];
		struct event_ctl *ec = &sets->ev[e];
		uint64_t total = pc_ovf__overflows(ovf, i), times = total - w->seen[i];
		uint16_t set_id = sets->rotor ? active_id(sets) : ec->set;

		if (!times)
			continue;
		w->seen[i] = total;
		if (ec->notify && sets->rings && sets->queue)
			drain_ring(s, &sets->rings[e * s->nr_units + w->unit], e,
				   w->unit, set_id);
		if (ec->has_sampling) {
			const struct perfctr_sampling *ctl = &ec->sampling;
			int fd = pc_slot(s, e, w->unit)->fd;
			bool leader = fd == gfd;
			bool on = !sets->rotor ||
				  pc_rotor__event_set(sets->rotor, e) ==
				  pc_rotor__active(sets->rotor);
			uint64_t period = perfctr_sampling__next_period(ctl, &ec->rng,
									ec->notify,
									ec->period);
			size_t pos = 0;

			/* Where this counter's value sits in the group read. */
			for (size_t m = 0, k = 0; m < s->groups[w->group].nr_members; m++) {
				size_t me = s->groups[w->group].members[m];

				if (pc_slot(s, me, w->unit)->fd < 0)
					continue;
				if (me == e)
					pos = 3 + 2 * k;
				k++;
			}
			if (period != ec->period || ctl->short_period ||
			    ctl->long_period || ctl->random_mask) {
				pc_sampctl_set_period(fd, period, !leader || on);
				if (sets->twins && sets->twins[e * s->nr_units + w->unit] >= 0)
					pc_sampctl_set_period(sets->twins[e * s->nr_units + w->unit],
							      period, on);
				pc_ovf__set_next(ovf, i, group_value(gfd, words, pos) + period);
			}
			for (size_t j = 0; j < s->nr_events && j < 64; j++) {
				int ofd;

				if (!(ctl->reset_mask & (1ull << j)) || j == e)
					continue;
				ofd = pc_slot(s, j, w->unit)->fd;
				if (ofd >= 0)
					pc_sampctl_reset(ofd, sets->ev[j].period,
							 ofd != *pc_group_fd(s, s->events[j].group, w->unit) || on);
			}
		}
		if (sets->rotor)
			pc_rotor__overflow(sets->rotor, e, times);
	}
}

/* The clock counter's callback: the active set's timeout ran out. */
static void on_clock(struct pc_ovf *ovf, uint64_t new_mask,
		     const siginfo_t *si, void *arg)
{
	struct clock_watch *cw = arg;

	pc_rotor__switch(cw->s->sets->rotor);
}

static void toggle_twins(struct perfctr_session *s, bool on);

/* After every switch: give the clock the new set's timeout, counted from
 * now, or turn it off for a set without one.  Signal context. */
static void after_switch(void *arg)
{
	struct perfctr_session *s = arg;
	struct pc_sets *sets = s->sets;
	const struct set_def *d = active_def(sets);
	uint64_t period = d && (d->flags & PERFCTR_SET_SWITCH_TIMEOUT) ? d->timeout_ns : 0;
	struct clock_watch *cw = &sets->clock;

	toggle_twins(s, true);
	if (cw->fd < 0)
		return;
	if (!period) {
		sys_perf_disable(cw->fd, false);
		cw->period = 0;
		return;
	}
	pc_sampctl_set_period(cw->fd, period, true);
	pc_ovf__set_next(cw->ovf, 0, group_value(cw->fd, 2, 1) + period);
	cw->period = period;
}

static void undo_attach(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;

	if (!sets)
		return;
	for (size_t i = 0; i < sets->nr_watches; i++)
		pc_ovf__delete(sets->watches[i].ovf);
	free(sets->watches);
	sets->watches = NULL;
	sets->nr_watches = 0;
	if (sets->clock.ovf)
		pc_ovf__delete(sets->clock.ovf);
	sets->clock.ovf = NULL;
	if (sets->clock.fd >= 0)
		close(sets->clock.fd);
	sets->clock.fd = -1;
	if (sets->twins) {
		for (size_t i = 0; i < s->nr_events * s->nr_units; i++)
			if (sets->twins[i] >= 0)
				close(sets->twins[i]);
		free(sets->twins);
		sets->twins = NULL;
	}
	if (sets->rings) {
		for (size_t i = 0; i < s->nr_events * s->nr_units; i++)
			if (sets->rings[i].base)
				sys_perf_munmap(sets->rings[i].base, sets->ring_pages);
		free(sets->rings);
		sets->rings = NULL;
	}
	pc_rotor__delete(sets->rotor);
	sets->rotor = NULL;
	free(sets->rotor_set);
	sets->rotor_set = NULL;
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
			has = event_set(s, e) == sets->defs[d].id;
		sets->rotor_set[d] = has ? nr_used : (size_t)-1;
		if (has)
			used_ids[nr_used++] = sets->defs[d].id;
	}
	sets->rotor = pc_rotor__new(nr_used, used_ids, s->nr_events, s->nr_units);
	free(used_ids);
	if (!sets->rotor)
		return -errno;
	for (size_t g = 0; g < s->nr_groups && !err; g++) {
		const struct pc_group *grp = &s->groups[g];
		uint64_t *idv = calloc(grp->nr_members * s->nr_units, sizeof(*idv));
		int *fds = malloc(s->nr_units * sizeof(*fds));
		int d = find_def(sets, event_set(s, grp->members[0]));

		if (!idv || !fds) {
			err = -ENOMEM;
		} else {
			for (size_t u = 0; u < s->nr_units; u++) {
				fds[u] = *pc_group_fd(s, g, u);
				for (size_t m = 0; m < grp->nr_members; m++)
					idv[m * s->nr_units + u] =
						pc_slot(s, grp->members[m], u)->id;
			}
			err = pc_rotor__add_group(sets->rotor, sets->rotor_set[d],
						  grp->members, grp->nr_members,
						  fds, idv);
		}
		free(idv);
		free(fds);
	}
	for (size_t e = 0; e < s->nr_events && !err; e++)
		if (sets->ev[e].switch_after)
			err = pc_rotor__switch_after(sets->rotor, e,
						     sets->ev[e].switch_after);
	if (!err)
		pc_rotor__on_switch(sets->rotor, after_switch, s);
	return err;
}

/* A counter that ticks every timeout of the target's run time (threads)
 * or of wall time (CPUs), on the first unit. */
static int open_clock(struct perfctr_session *s, pid_t owner)
{
	struct pc_sets *sets = s->sets;
	struct perf_event_attr attr;
	const struct pc_unit *unit = &s->units[0];
	uint64_t first = 0;
	struct pc_ovf_counter c;
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
	attr.config = unit->tid >= 0 ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = first;
	attr.disabled = 1;
	attr.read_format = PERF_FORMAT_GROUP;
	sets->clock.fd = sys_perf_event_open(&attr, unit->tid, unit->cpu, -1, 0);
	if (sets->clock.fd < 0) {
		int err = sets->clock.fd;

		sets->clock.fd = -1;
		return err;
	}
	sets->clock.s = s;
	sets->clock.period = first;
	c = (struct pc_ovf_counter){ .fd = sets->clock.fd, .period = first, .value_pos = 1 };
	memset(&desc, 0, sizeof(desc));
	desc.read_fd = sets->clock.fd;
	desc.read_words = 2;
	desc.nr_counters = 1;
	desc.counters = &c;
	desc.signo = sets->signo ? sets->signo : SIGIO;
	desc.tid = owner;
	desc.notify = on_clock;
	desc.ctx = &sets->clock;
	sets->clock.ovf = pc_ovf__new(&desc);
	return sets->clock.ovf ? 0 : -errno;
}

static int map_rings(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;
	bool any = false;

	for (size_t e = 0; e < s->nr_events; e++)
		any |= sets->ev[e].notify;
	if (!any || !sets->queue)
		return 0;
	for (size_t e = 0; e < s->nr_events; e++) {
		size_t width = (size_t)__builtin_popcountll(sets->ev[e].record_mask);

		if (!sets->ev[e].notify || width <= sets->rec_width)
			continue;
		/* Detached, so no handler writes the slots now. */
		free(sets->rec_values);
		sets->rec_values = calloc(REC_SLOTS * width, sizeof(uint64_t));
		if (!sets->rec_values) {
			sets->rec_width = 0;
			return -ENOMEM;
		}
		sets->rec_width = width;
		free(sets->rec_slots);
		sets->rec_slots = NULL;
	}
	if (sets->rec_width && !sets->rec_slots) {
		sets->rec_slots = calloc(REC_SLOTS, sizeof(*sets->rec_slots));
		if (!sets->rec_slots)
			return -ENOMEM;
	}
	sets->ring_pages = 1;
	sets->rings = calloc(s->nr_events * s->nr_units, sizeof(*sets->rings));
	if (!sets->rings)
		return -ENOMEM;
	for (size_t e = 0; e < s->nr_events; e++) {
		if (!sets->ev[e].notify)
			continue;
		for (size_t u = 0; u < s->nr_units; u++) {
			int fd = pc_slot(s, e, u)->fd, err = 0;

			if (fd < 0)
				continue;
			sets->rings[e * s->nr_units + u].base =
				sys_perf_mmap(fd, sets->ring_pages, true, &err);
			if (!sets->rings[e * s->nr_units + u].base)
				return err ? err : -ENOMEM;
		}
	}
	return 0;
}

static int open_twins(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;
	size_t n = s->nr_events * s->nr_units;

	if (!sets->queue || !(perfctr_notify__flags(sets->queue) & PERFCTR_NOTIFY_BLOCK))
		return 0;
	sets->twins = malloc((n ? n : 1) * sizeof(*sets->twins));
	if (!sets->twins)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		sets->twins[i] = -1;
	for (size_t e = 0; e < s->nr_events; e++) {
		if (!sets->ev[e].notify)
			continue;
		for (size_t u = 0; u < s->nr_units; u++) {
			const struct pc_unit *unit = &s->units[u];
			struct f_owner_ex owner = { F_OWNER_TID, unit->tid };
			struct perf_event_attr attr = s->events[e].attr;
			int fd, flags;

			/* A CPU has no thread to stop. */
			if (unit->tid <= 0 || pc_slot(s, e, u)->fd < 0)
				continue;
			attr.sample_type = 0;
			attr.read_format = 0;
			attr.wakeup_events = 0;
			attr.disabled = 1;
			attr.enable_on_exec = 0;
			fd = sys_perf_event_open(&attr, unit->tid, unit->cpu, -1, 0);
			if (fd < 0)
				return fd;
			sets->twins[e * s->nr_units + u] = fd;
			if (fcntl(fd, F_SETSIG, SIGSTOP) < 0 ||
			    fcntl(fd, F_SETOWN_EX, &owner) < 0 ||
			    (flags = fcntl(fd, F_GETFL)) < 0 ||
			    fcntl(fd, F_SETFL, flags | O_ASYNC) < 0)
				return -errno;
		}
	}
	return 0;
}

/* Twins count when their counter's set counts.  Signal context too. */
static void toggle_twins(struct perfctr_session *s, bool on)
{
	struct pc_sets *sets = s->sets;

	if (!sets->twins)
		return;
	for (size_t e = 0; e < s->nr_events; e++) {
		bool active = on && (!sets->rotor ||
				     pc_rotor__event_set(sets->rotor, e) ==
				     pc_rotor__active(sets->rotor));

		for (size_t u = 0; u < s->nr_units; u++) {
			int fd = sets->twins[e * s->nr_units + u];

			if (fd < 0)
				continue;
			if (active)
				sys_perf_enable(fd, false);
			else
				sys_perf_disable(fd, false);
		}
	}
}

static int watch_groups(struct perfctr_session *s, pid_t owner)
{
	struct pc_sets *sets = s->sets;
	size_t max = s->nr_groups * s->nr_units;

	sets->watches = calloc(max ? max : 1, sizeof(*sets->watches));
	if (!sets->watches)
		return -ENOMEM;
	for (size_t g = 0; g < s->nr_groups; g++) {
		const struct pc_group *grp = &s->groups[g];

		for (size_t u = 0; u < s->nr_units; u++) {
			struct pc_ovf_counter counters[MAX_WATCHED];
			struct watch *w = &sets->watches[sets->nr_watches];
			struct pc_ovf_desc desc;
			int gfd = *pc_group_fd(s, g, u);
			size_t k = 0;

			if (gfd < 0)
				continue;
			memset(w, 0, sizeof(*w));
			for (size_t m = 0; m < grp->nr_members; m++) {
				size_t e = grp->members[m];
				const struct event_ctl *ec = &sets->ev[e];
				int fd = pc_slot(s, e, u)->fd;

				if (fd < 0)
					continue;
				if ((ec->notify || ec->switch_after) && w->nr < MAX_WATCHED) {
					counters[w->nr] = (struct pc_ovf_counter){
						.fd = fd, .period = ec->period,
						.value_pos = (unsigned int)(3 + 2 * k) };
					w->events[w->nr++] = e;
				}
				k++;
			}
			if (!w->nr)
				continue;
			w->s = s;
			w->group = g;
			w->unit = u;
			memset(&desc, 0, sizeof(desc));
			desc.read_fd = gfd;
			desc.read_words = (unsigned int)(3 + 2 * k);
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
	err = sync_events(s);
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
			err = open_clock(s, owner);
	}
	if (!err)
		err = map_rings(s);
	if (!err)
		err = open_twins(s);
	if (!err)
		err = watch_groups(s, owner);
	if (err)
		undo_attach(s);
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
	for (size_t e = 0; e < s->nr_events && e < sets->nr_ev; e++)
		perfctr_slices__merge(&sets->ev[e].carried,
				      pc_rotor__slices(sets->rotor, e));
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
	if (sets->rings && sets->queue)
		for (size_t e = 0; e < s->nr_events; e++)
			for (size_t u = 0; e < sets->nr_ev && sets->ev[e].notify &&
					   u < s->nr_units; u++)
				if (sets->rings[e * s->nr_units + u].base)
					drain_ring(s, &sets->rings[e * s->nr_units + u], e, u,
						   sets->rotor ? active_id(sets) : sets->ev[e].set);
	fold_accounting(s);
	undo_attach(s);
}

bool pc_sets_rotating(const struct perfctr_session *s)
{
	return s->sets && (s->sets->rotor || s->sets->twins);
}

static int toggle_leaders(struct perfctr_session *s, bool on)
{
	int err = 0;

	for (size_t i = 0; i < s->nr_groups * s->nr_units; i++) {
		int rc;

		if (s->group_fds[i] < 0)
			continue;
		rc = on ? sys_perf_enable(s->group_fds[i], false)
			: sys_perf_disable(s->group_fds[i], false);
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
		toggle_twins(s, true);
		return toggle_leaders(s, true);
	}
	err = pc_rotor__start(sets->rotor);
	if (!err)
		after_switch(s);
	return err;
}

int pc_sets_stop(struct perfctr_session *s)
{
	struct pc_sets *sets = s->sets;

	toggle_twins(s, false);
	if (!sets->rotor)
		return toggle_leaders(s, false);
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
	return active_id(s->sets);
}

/* ---- results ------------------------------------------------------- */

/* The whole time of a rotated session on @unit (or summed over units):
 * the enabled time of every set's first group, as last read. */
static uint64_t whole_time(const struct perfctr_session *s, size_t unit)
{
	const struct pc_sets *sets = s->sets;
	uint64_t total = 0;

	for (size_t d = 0; d < sets->nr_defs; d++) {
		for (size_t g = 0; g < s->nr_groups; g++) {
			size_t lead = s->groups[g].members[0];

			if (event_set(s, lead) != sets->defs[d].id)
				continue;
			if (unit == PC_SETS_ALL_UNITS && s->has_carried[lead])
				total += s->carried[lead].time_enabled;
			for (size_t u = 0; u < s->nr_units; u++)
				if (unit == PC_SETS_ALL_UNITS || unit == u)
					total += pc_slot(s, lead, u)->count.time_enabled;
			break;
		}
	}
	return total;
}

void pc_sets_adjust_count(const struct perfctr_session *s, size_t idx,
			  struct perfctr_count *count, size_t unit)
{
	uint64_t whole;

	if (!s->sets || !(s->sets->rotated || s->sets->rotor))
		return;
	whole = whole_time(s, unit);
	if (whole > count->time_enabled)
		count->time_enabled = whole;
}

int perfctr_session__set_info(const struct perfctr_session *s, uint16_t id,
			      struct perfctr_set_info *info)
{
	struct perfctr_set_info out;
	const struct set_def *d;
	struct pc_rotor_set_stats st = { 0 };
	int i;

	if (!s || !info || info->sz < offsetof(struct perfctr_set_info, runs))
		return pc_err(EINVAL);
	i = find_def(s->sets, id);
	if (i < 0)
		return pc_err(ENOENT);
	memset(&out, 0, sizeof(out));
	out.sz = info->sz;
	out.id = id;
	for (size_t e = 0; e < s->nr_events; e++) {
		if (event_set(s, e) != id)
			continue;
		out.nr_events++;
		if (s->events[e].leader == e)
			out.nr_groups++;
	}
	if (!s->sets) {
		memcpy(info, &out, info->sz < sizeof(out) ? info->sz : sizeof(out));
		return 0;
	}
	d = &s->sets->defs[i];
	out.flags = d->flags;
	out.timeout_ns = d->timeout_ns;
	st = d->carried;
	out.missed_switches = s->sets->carried_missed;
	if (s->sets->rotor && s->sets->rotor_set[i] != (size_t)-1) {
		struct pc_rotor_set_stats now;

		if (!pc_rotor__set_stats(s->sets->rotor, s->sets->rotor_set[i], &now)) {
			st.runs += now.runs;
			st.active_ns += now.active_ns;
			st.overflows += now.overflows;
			if (now.runs)
				st.last_ovfl_mask = now.last_ovfl_mask;
		}
		out.missed_switches += pc_rotor__missed(s->sets->rotor);
	}
	out.runs = st.runs;
	out.active_ns = st.active_ns;
	out.overflows = st.overflows;
	out.last_ovfl_mask = st.last_ovfl_mask;
	memcpy(info, &out, info->sz < sizeof(out) ? info->sz : sizeof(out));
	return 0;
}

int perfctr_session__estimate(const struct perfctr_session *s, size_t idx,
			      struct perfctr_estimate *est)
{
	const struct pc_sets *sets;
	struct perfctr_slices slices;
	double shared = 0.0;
	uint64_t total = 0;

	if (!s || idx >= s->nr_events || !est)
		return pc_err(EINVAL);
	sets = s->sets;
	if (!sets || !(sets->rotated || sets->rotor) || idx >= sets->nr_ev) {
		/* Not rotated: the kernel's times, one slice. */
		struct perfctr_count c;

		perfctr_session__count(s, idx, &c);
		memset(&slices, 0, sizeof(slices));
		perfctr_slices__add(&slices, c.value, c.time_running);
		return perfctr_slices__estimate(&slices, c.time_enabled, est);
	}
	for (size_t e = 0; e < s->nr_events && e < sets->nr_ev; e++) {
		struct perfctr_slices all = sets->ev[e].carried;
		double v;

		if (sets->rotor)
			perfctr_slices__merge(&all, pc_rotor__slices(sets->rotor, e));
		v = perfctr_slices__shared_rel_var(&all);
		if (v > shared)
			shared = v;
		if (e == idx)
			slices = all;
	}
	for (size_t d = 0; d < sets->nr_defs; d++) {
		total += sets->defs[d].carried.unit_ns;
		if (sets->rotor && sets->rotor_set[d] != (size_t)-1) {
			struct pc_rotor_set_stats st;

			if (!pc_rotor__set_stats(sets->rotor, sets->rotor_set[d], &st))
				total += st.unit_ns;
		}
	}
	return perfctr_slices__estimate_shared(&slices, total, shared, est);
}
