// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Notification queues.  The queue is a pipe: each message is one write of
 * 64 bytes, which the kernel keeps whole (writes up to PIPE_BUF are
 * atomic), so the pipe always holds a whole number of messages, its read
 * end is readable exactly while messages wait, and producers in signal
 * handlers need nothing but write(2).  The optional signal is the pipe's
 * own O_ASYNC notification (F_SETSIG, F_SETOWN_EX): si_fd is the queue's
 * fd, and no code of ours runs to send it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/engine.h"
#include "core/notifier.h"
#include "core/sampctl.h"
#include "perfctr/notify.h"
#include "perfctr/record.h"
#include "perfctr/ring.h"
#include "stream/stream.h"
#include "sys/sys.h"

_Static_assert(sizeof(struct perfctr_msg) <= PIPE_BUF,
	       "a message must be one atomic pipe write");

#define NOTIFY_DEFAULT_CAPACITY	1024
#define NOTIFY_MAX_STOPPED	64

struct perfctr_notify {
	int read_fd;
	int write_fd;
	unsigned int flags;
	pid_t self;
	_Atomic uint64_t lost;
	/* Processes stopped by blocking mode, 0 = free slot. */
	_Atomic pid_t stopped[NOTIFY_MAX_STOPPED];
};

static int setup_signal(int fd, int sig, pid_t tid)
{
	struct f_owner_ex owner = {
		.type = tid ? F_OWNER_TID : F_OWNER_PID,
		.pid = tid ? tid : getpid(),
	};
	int flags;

	if (fcntl(fd, F_SETSIG, sig) < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0)
		return -errno;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_ASYNC) < 0)
		return -errno;
	return 0;
}

struct perfctr_notify *perfctr_notify__new(const struct perfctr_notify_opts *opts)
{
	struct perfctr_notify *q;
	size_t capacity;
	int fds[2], sig, err;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	sig = PC_OPTS_GET(opts, signal, 0);
	capacity = PC_OPTS_GET(opts, capacity, 0);
	if (!capacity)
		capacity = NOTIFY_DEFAULT_CAPACITY;
	if (sig < 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP ||
	    capacity > INT_MAX / sizeof(struct perfctr_msg) ||
	    (PC_OPTS_GET(opts, flags, 0) &
	     ~(unsigned int)(PERFCTR_NOTIFY_BLOCK | PERFCTR_NOTIFY_NONBLOCK))) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->flags = PC_OPTS_GET(opts, flags, 0);
	q->self = getpid();
	/* Both ends non-blocking: a full queue drops instead of hanging a
	 * signal handler; waiting readers wait in poll(). */
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		err = errno;
		free(q);
		errno = err;
		return NULL;
	}
	q->read_fd = fds[0];
	q->write_fd = fds[1];
	/* The kernel rounds up to a power-of-two number of pages; a request
	 * above pipe-max-size (EPERM for non-root) keeps the default. */
	if (capacity != NOTIFY_DEFAULT_CAPACITY)
		(void)fcntl(q->write_fd, F_SETPIPE_SZ,
			    (int)(capacity * sizeof(struct perfctr_msg)));
	if (sig) {
		err = setup_signal(q->read_fd, sig, PC_OPTS_GET(opts, signal_tid, 0));
		if (err) {
			perfctr_notify__delete(q);
			errno = -err;
			return NULL;
		}
	}
	return q;
}

void perfctr_notify__delete(struct perfctr_notify *q)
{
	if (!q)
		return;
	perfctr_notify__restart(q);
	close(q->read_fd);
	close(q->write_fd);
	free(q);
}

int perfctr_notify__fd(const struct perfctr_notify *q)
{
	return q->read_fd;
}

ssize_t perfctr_notify__read(struct perfctr_notify *q, void *buf, size_t size)
{
	ssize_t got;

	if (!size || size % sizeof(struct perfctr_msg))
		return pc_err(EINVAL);
	if (size > SSIZE_MAX)
		size = SSIZE_MAX - SSIZE_MAX % sizeof(struct perfctr_msg);
	for (;;) {
		struct pollfd pfd = { .fd = q->read_fd, .events = POLLIN };

		got = read(q->read_fd, buf, size);
		if (got >= 0)
			break;
		if (errno != EAGAIN || (q->flags & PERFCTR_NOTIFY_NONBLOCK))
			return -errno;
		if (poll(&pfd, 1, -1) < 0)
			return -errno;
	}
	/* Every write is one whole message and the size asked for is a
	 * multiple of it: a partial message here is a broken invariant. */
	if (got % (ssize_t)sizeof(struct perfctr_msg))
		return pc_err(EIO);
	return got;
}

static void remember_stopped(struct perfctr_notify *q, pid_t pid)
{
	for (int i = 0; i < NOTIFY_MAX_STOPPED; i++)
		if (atomic_load(&q->stopped[i]) == pid)
			return;
	for (int i = 0; i < NOTIFY_MAX_STOPPED; i++) {
		pid_t expected = 0;

		if (atomic_compare_exchange_strong(&q->stopped[i], &expected, pid))
			return;
	}
}

static void forget_stopped(struct perfctr_notify *q, pid_t pid)
{
	for (int i = 0; i < NOTIFY_MAX_STOPPED; i++) {
		pid_t expected = pid;

		if (atomic_compare_exchange_strong(&q->stopped[i], &expected, 0))
			return;
	}
}

int perfctr_notify__push(struct perfctr_notify *q, const struct perfctr_msg *msg)
{
	int saved_errno = errno, ret = 0;
	bool block = (q->flags & PERFCTR_NOTIFY_BLOCK) && msg->pid &&
		     (pid_t)msg->pid != q->self;
	ssize_t n;

	/* Stop before queueing: a reader that sees the message and restarts
	 * at once must find the process already stopped and remembered. */
	if (block) {
		kill((pid_t)msg->pid, SIGSTOP);
		remember_stopped(q, (pid_t)msg->pid);
	}
	do
		n = write(q->write_fd, msg, sizeof(*msg));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*msg)) {
		atomic_fetch_add(&q->lost, 1);
		ret = -EAGAIN;
		/* Nobody will hear of this stop: undo it. */
		if (block) {
			forget_stopped(q, (pid_t)msg->pid);
			kill((pid_t)msg->pid, SIGCONT);
		}
	}
	errno = saved_errno;
	return ret;
}

unsigned int perfctr_notify__flags(const struct perfctr_notify *q)
{
	return q->flags;
}

uint64_t perfctr_notify__lost(const struct perfctr_notify *q)
{
	return atomic_load(&((struct perfctr_notify *)q)->lost);
}

int perfctr_notify__restart(struct perfctr_notify *q)
{
	int continued = 0;

	for (int i = 0; i < NOTIFY_MAX_STOPPED; i++) {
		pid_t pid = atomic_exchange(&q->stopped[i], 0);

		if (pid && kill(pid, SIGCONT) == 0)
			continued++;
	}
	return continued;
}

/* ---- the notifier: overflow records of counters to messages ---------- */

#define REC_SLOTS 1024		/* messages whose recorded values are kept */

/* The values recorded with one message (slot seq % REC_SLOTS). */
struct rec_slot {
	_Atomic uint32_t seq;	/* message number, 0: empty */
	uint32_t event;		/* the notifying event */
	uint32_t nr;		/* values in values[slot * width] */
};

struct rec_list {
	size_t *events;
	size_t nr;
};

/* The ring of one notifying counter on one unit. */
struct note_ring {
	struct perfctr_ring *ring;
	atomic_flag busy;	/* a drain is running */
};

struct pc_notifier {
	struct rec_list *record;	/* per event, grown on demand */
	size_t nr_record;
	/* Message numbers and recorded values: kept across detaches. */
	_Atomic uint32_t next_seq;
	struct rec_slot *slots;
	uint64_t *values;
	size_t width;

	/* While attached. */
	const struct pc_counters *counters;
	struct perfctr_notify *queue;
	struct note_ring *rings;	/* event-major: [e * nr_units + u] */
	int *twins;			/* same layout, -1: none */
	struct pc_engine **twin_engs;	/* same layout: the twins' owners */
	size_t nr_events, nr_units;
};

struct pc_notifier *pc_notifier__new(void)
{
	return calloc(1, sizeof(struct pc_notifier));
}

void pc_notifier__delete(struct pc_notifier *n)
{
	if (!n)
		return;
	pc_notifier__detach(n);
	for (size_t e = 0; e < n->nr_record; e++)
		free(n->record[e].events);
	free(n->record);
	free(n->slots);
	free(n->values);
	free(n);
}

int pc_notifier__set_record(struct pc_notifier *n, size_t event,
			    const size_t *events, size_t nr)
{
	size_t *copy = NULL;

	if (event >= n->nr_record) {
		struct rec_list *r = realloc(n->record, (event + 1) * sizeof(*r));

		if (!r)
			return -ENOMEM;
		memset(r + n->nr_record, 0, (event + 1 - n->nr_record) * sizeof(*r));
		n->record = r;
		n->nr_record = event + 1;
	}
	if (nr) {
		copy = malloc(nr * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, events, nr * sizeof(*copy));
	}
	free(n->record[event].events);
	n->record[event].events = copy;
	n->record[event].nr = nr;
	return 0;
}

size_t pc_notifier__nr_record(const struct pc_notifier *n, size_t event)
{
	return event < n->nr_record ? n->record[event].nr : 0;
}

bool pc_notifier__attached(const struct pc_notifier *n)
{
	return n && n->counters;
}

bool pc_notifier__has_twins(const struct pc_notifier *n)
{
	return n && n->twins;
}

void pc_notifier__detach(struct pc_notifier *n)
{
	size_t nr = n->nr_events * n->nr_units;

	for (size_t i = 0; n->rings && i < nr; i++)
		perfctr_ring__delete(n->rings[i].ring);
	free(n->rings);
	n->rings = NULL;
	for (size_t i = 0; n->twin_engs && i < nr; i++)
		pc_engine__delete(n->twin_engs[i]);
	free(n->twins);
	free(n->twin_engs);
	n->twins = NULL;
	n->twin_engs = NULL;
	n->counters = NULL;
	n->queue = NULL;
	n->nr_events = n->nr_units = 0;
}

/* Room for the widest record list; only while nothing drains. */
static int size_slots(struct pc_notifier *n, const bool *notifying,
		      size_t nr_events)
{
	size_t width = n->width;

	for (size_t e = 0; e < nr_events; e++)
		if (notifying[e] && pc_notifier__nr_record(n, e) > width)
			width = pc_notifier__nr_record(n, e);
	if (width > n->width) {
		uint64_t *values = calloc(REC_SLOTS * width, sizeof(*values));

		if (!values)
			return -ENOMEM;
		free(n->values);
		n->values = values;
		n->width = width;
		/* Slots of the old width name values that are gone. */
		free(n->slots);
		n->slots = NULL;
	}
	if (n->width && !n->slots) {
		n->slots = calloc(REC_SLOTS, sizeof(*n->slots));
		if (!n->slots)
			return -ENOMEM;
	}
	return 0;
}

static int open_twin(struct pc_notifier *n, size_t e, size_t u)
{
	const struct pc_counters *c = n->counters;
	struct f_owner_ex owner = { F_OWNER_TID, c->unit_tid[u] };
	struct perf_event_attr attr = *c->event_attr[e];
	int fd, flags;

	attr.sample_type = 0;
	attr.read_format = 0;
	attr.wakeup_events = 0;
	attr.disabled = 1;
	attr.enable_on_exec = 0;
	n->twin_engs[e * n->nr_units + u] =
		pc_engine__new_single(&attr, c->unit_tid[u], c->unit_cpu[u], &fd);
	if (!n->twin_engs[e * n->nr_units + u])
		return -errno;
	n->twins[e * n->nr_units + u] = fd;
	if (fcntl(fd, F_SETSIG, SIGSTOP) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) < 0 ||
	    (flags = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, flags | O_ASYNC) < 0)
		return -errno;
	return 0;
}

int pc_notifier__attach(struct pc_notifier *n, const struct pc_counters *c,
			const bool *notifying, struct perfctr_notify *queue)
{
	PERFCTR_OPTS(perfctr_ring_opts, ropts, .data_pages = 1);
	size_t nr = c->nr_events * c->nr_units;
	bool block = queue && (perfctr_notify__flags(queue) & PERFCTR_NOTIFY_BLOCK);
	int err;

	if (n->counters)
		return pc_err(EBUSY);
	if (!queue)
		return 0;
	err = size_slots(n, notifying, c->nr_events);
	if (err)
		return err;
	n->counters = c;
	n->queue = queue;
	n->nr_events = c->nr_events;
	n->nr_units = c->nr_units;
	n->rings = calloc(nr ? nr : 1, sizeof(*n->rings));
	n->twins = block ? malloc((nr ? nr : 1) * sizeof(*n->twins)) : NULL;
	n->twin_engs = block ? calloc(nr ? nr : 1, sizeof(*n->twin_engs)) : NULL;
	if (!n->rings || (block && (!n->twins || !n->twin_engs))) {
		pc_notifier__detach(n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		atomic_flag_clear(&n->rings[i].busy);
		if (n->twins)
			n->twins[i] = -1;
	}
	for (size_t e = 0; e < c->nr_events; e++) {
		if (!notifying[e])
			continue;
		for (size_t u = 0; u < c->nr_units; u++) {
			struct note_ring *r = &n->rings[e * c->nr_units + u];
			int fd = pc_counters_fd(c, e, u);

			if (fd < 0)
				continue;
			r->ring = perfctr_ring__new(fd, &ropts);
			if (!r->ring || pc_ring_reserve(r->ring)) {
				err = r->ring ? -ENOMEM : -errno;
				pc_notifier__detach(n);
				return err;
			}
			/* A CPU has no thread to stop. */
			if (n->twins && c->unit_tid[u] > 0) {
				err = open_twin(n, e, u);
				if (err) {
					pc_notifier__detach(n);
					return err;
				}
			}
		}
	}
	return 0;
}

/* Store the values of @event's record list, read by the kernel at the
 * overflow (@smp->read), in the slot of message @seq.  Signal context. */
static void record_values(struct pc_notifier *n, const struct perfctr_sample *smp,
			  size_t event, size_t unit, uint32_t seq)
{
	const struct rec_list *rec = &n->record[event];
	struct rec_slot *slot = &n->slots[seq % REC_SLOTS];
	uint64_t *out = &n->values[(seq % REC_SLOTS) * n->width];
	uint32_t k = 0;

	atomic_store_explicit(&slot->seq, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (size_t i = 0; i < rec->nr && k < n->width; i++, k++) {
		size_t j = rec->events[i];
		uint64_t id;

		out[k] = 0;	/* not open on this unit: 0 */
		if (pc_counters_fd(n->counters, j, unit) < 0)
			continue;
		id = pc_counters_id(n->counters, j, unit);
		for (uint64_t m = 0; m < smp->read.nr; m++) {
			struct perfctr_read_value v;

			if (!perfctr_read_format__value(&smp->read, m, &v) &&
			    v.id == id) {
				out[k] = v.value;
				break;
			}
		}
	}
	slot->event = (uint32_t)event;
	slot->nr = k;
	atomic_store_explicit(&slot->seq, seq, memory_order_release);
}

struct drain_ctx {
	struct pc_notifier *n;
	size_t event, unit;
	uint16_t active_set;
};

/* One record of a notifying counter's ring.  Signal context. */
static int note_record(struct perfctr_ring *ring,
		       const struct perf_event_header *hdr, void *arg)
{
	struct drain_ctx *d = arg;
	struct pc_notifier *n = d->n;
	struct perfctr_sample smp = { .sz = sizeof(smp) };
	struct perfctr_msg msg;

	if (hdr->type != PERF_RECORD_SAMPLE ||
	    perfctr_sample__parse(n->counters->event_attr[d->event], hdr, &smp))
		return 0;
	memset(&msg, 0, sizeof(msg));
	msg.type = PERFCTR_MSG_OVFL;
	msg.pid = smp.pid;
	msg.tid = smp.tid;
	msg.cpu = (int32_t)smp.cpu;
	msg.ip = smp.ip;
	msg.time = smp.time;
	msg.active_set = d->active_set;
	msg.event = (uint32_t)d->event;
	msg.ovfl_mask = d->event < 64 ? 1ull << d->event : 0;
	msg.seq = atomic_fetch_add(&n->next_seq, 1) + 1;
	if (!msg.seq)	/* 0 is "none": skip it on wrap */
		msg.seq = atomic_fetch_add(&n->next_seq, 1) + 1;
	if (pc_notifier__nr_record(n, d->event) && n->slots)
		record_values(n, &smp, d->event, d->unit, msg.seq);
	perfctr_notify__push(n->queue, &msg);
	return 0;
}

void pc_notifier__drain(struct pc_notifier *n, size_t event, size_t unit,
			uint16_t active_set)
{
	struct drain_ctx d = { n, event, unit, active_set };
	struct note_ring *r;

	if (!n || !n->rings || event >= n->nr_events || unit >= n->nr_units)
		return;
	r = &n->rings[event * n->nr_units + unit];
	if (!r->ring || atomic_flag_test_and_set(&r->busy))
		return;
	/* A forward ring with its bounce buffer reserved: no allocation. */
	perfctr_ring__drain(r->ring, note_record, &d);
	atomic_flag_clear(&r->busy);
}

void pc_notifier__enable_twins(struct pc_notifier *n, size_t event, bool on)
{
	if (!n || !n->twins)
		return;
	for (size_t e = 0; e < n->nr_events; e++) {
		if (event != (size_t)-1 && e != event)
			continue;
		for (size_t u = 0; u < n->nr_units; u++) {
			int fd = n->twins[e * n->nr_units + u];

			if (fd < 0)
				continue;
			if (on)
				sys_perf_enable(fd, false);
			else
				sys_perf_disable(fd, false);
		}
	}
}

void pc_notifier__set_twin_period(struct pc_notifier *n, size_t event,
				  size_t unit, uint64_t period, bool enable)
{
	int fd;

	if (!n || !n->twins || event >= n->nr_events || unit >= n->nr_units)
		return;
	fd = n->twins[event * n->nr_units + unit];
	if (fd >= 0)
		pc_sampctl_set_period(fd, period, enable);
}

int pc_notifier__msg_values(const struct pc_notifier *n,
			    const struct perfctr_msg *msg, uint64_t *values,
			    size_t nr)
{
	struct rec_slot *slot;
	uint32_t got;

	if (!n || msg->type != PERFCTR_MSG_OVFL || !msg->seq || !n->slots ||
	    !pc_notifier__nr_record(n, msg->event))
		return -ENOENT;
	slot = &n->slots[msg->seq % REC_SLOTS];
	if (atomic_load_explicit(&slot->seq, memory_order_acquire) != msg->seq ||
	    slot->event != msg->event)
		return -ESTALE;
	got = slot->nr;
	for (size_t k = 0; k < nr && k < got; k++)
		values[k] = n->values[(msg->seq % REC_SLOTS) * n->width + k];
	/* A writer reuses the slot only REC_SLOTS messages later. */
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&slot->seq, memory_order_relaxed) != msg->seq)
		return -ESTALE;
	return (int)got;
}
