/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — notification queues: overflow messages behind a pollable
 * file descriptor (perfmon2's notification messages).
 *
 * A queue holds fixed-size messages (struct perfctr_msg, 64 bytes).  Its
 * fd works with poll, select and epoll: readable exactly while messages
 * are queued.  perfctr_notify__read() returns whole messages only; read(2)
 * on the fd with a multiple of the message size does the same (a message
 * is written atomically), a size that is not a multiple is the caller's
 * mistake that perfctr_notify__read() refuses with EINVAL.
 *
 * Options: a signal (SIGIO or another) delivered, with si_fd the queue's
 * fd and si_code POLL_IN, when messages arrive; and blocking mode, in
 * which the process that caused a message is stopped (SIGSTOP) when the
 * message is queued, until perfctr_notify__restart() lets it go on
 * (perfmon2's PFM_FL_NOTIFY_BLOCK, without ptrace).
 *
 * Thread safety and signals: perfctr_notify__push() is async-signal-safe
 * and may be called from several threads at once (a message is one
 * write(2) of at most PIPE_BUF bytes).  The other calls are not
 * synchronised with each other.
 */
#ifndef PERFCTR_NOTIFY_H
#define PERFCTR_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum perfctr_msg_type {
	PERFCTR_MSG_OVFL = 1,	/* one or more counters overflowed */
	PERFCTR_MSG_END = 2,	/* the monitored target ended */
};

struct perfctr_msg {
	uint32_t type;		/* enum perfctr_msg_type */
	uint32_t pid;		/* process of the monitored thread */
	uint32_t tid;		/* thread that overflowed */
	int32_t cpu;		/* CPU it ran on, -1 when unknown */
	uint16_t active_set;	/* the set that was active */
	uint16_t reserved1;
	/* Number of the message among the session's overflow messages,
	 * from 1 (0: none); names the values recorded with it, see
	 * perfctr_session__msg_values(). */
	uint32_t seq;
	uint64_t ip;		/* instruction pointer at the overflow, 0 if unknown */
	/* Bit i: session event i overflowed.  Only events 0-63 have a bit;
	 * @event names the counter whatever its index. */
	uint64_t ovfl_mask;
	uint64_t time;		/* CLOCK_MONOTONIC ns of the overflow */
	/* PERFCTR_MSG_OVFL: session index of the counter that overflowed
	 * (one message per overflow, so one counter per message). */
	uint32_t event;
	uint32_t reserved2;
	uint64_t reserved3;
};

_Static_assert(sizeof(struct perfctr_msg) == 64, "ABI: perfctr_msg");

enum perfctr_notify_flags {
	/* Stop the process named in each message until restart. */
	PERFCTR_NOTIFY_BLOCK = 1u << 0,
	/* perfctr_notify__read() returns -EAGAIN instead of waiting. */
	PERFCTR_NOTIFY_NONBLOCK = 1u << 1,
};

struct perfctr_notify_opts {
	size_t sz;
	unsigned int flags;	/* enum perfctr_notify_flags */
	/* Signal on arrival of messages (0: none).  Sent to @signal_tid, or
	 * to the process when @signal_tid is 0. */
	int signal;
	pid_t signal_tid;
	/* Messages the queue holds before it drops (and counts) new ones;
	 * 0 for the default of 1024.  Rounded up by the kernel's pipe sizes. */
	size_t capacity;
	size_t :0;
};

struct perfctr_notify;

/** perfctr_notify__new() - an empty queue.  NULL + errno (EINVAL, EMFILE...). */
PERFCTR_API struct perfctr_notify *
perfctr_notify__new(const struct perfctr_notify_opts *opts);

/** perfctr_notify__delete() - close the fd, continue any stopped process, free. */
PERFCTR_API void perfctr_notify__delete(struct perfctr_notify *queue);

/** perfctr_notify__fd() - the fd to poll; readable while messages wait. */
PERFCTR_API int perfctr_notify__fd(const struct perfctr_notify *queue);

/**
 * perfctr_notify__read() - take up to @size / sizeof(struct perfctr_msg)
 * messages.  Waits for the first one unless the queue is non-blocking.
 * Return: bytes read (a multiple of the message size); -EINVAL when @size
 * is not a positive multiple of the message size; -EAGAIN when
 * non-blocking and empty; -EINTR when a signal interrupted the wait.
 */
PERFCTR_API ssize_t perfctr_notify__read(struct perfctr_notify *queue,
					 void *buf, size_t size);

/**
 * perfctr_notify__push() - queue @msg.  In blocking mode, then stop
 * @msg->pid (never the calling process).  Async-signal-safe.
 * Return: 0; -EAGAIN when the queue is full (the message is dropped and
 * counted, see perfctr_notify__lost()).
 */
PERFCTR_API int perfctr_notify__push(struct perfctr_notify *queue,
				     const struct perfctr_msg *msg);

/** perfctr_notify__flags() - the flags the queue was created with. */
PERFCTR_API unsigned int perfctr_notify__flags(const struct perfctr_notify *queue);

/** perfctr_notify__lost() - messages dropped because the queue was full. */
PERFCTR_API uint64_t perfctr_notify__lost(const struct perfctr_notify *queue);

/**
 * perfctr_notify__restart() - let every process stopped by blocking mode
 * continue.  Return: how many were continued, or -errno.
 */
PERFCTR_API int perfctr_notify__restart(struct perfctr_notify *queue);

/*
 * Sampling controls of one overflow counter (perfmon2's pfarg_pmd reset
 * fields).  A period is a number of events between overflows; a new one is
 * applied with PERF_EVENT_IOC_PERIOD while the counter is briefly disabled,
 * which makes the kernel count a whole new period from there (changed
 * while running, the old period would finish first).
 */
struct perfctr_sampling {
	size_t sz;
	/* Period after an overflow ("short reset"); 0: the event's own. */
	uint64_t short_period;
	/* Period after an overflow that sent a notification ("long
	 * reset"); 0: the short one. */
	uint64_t long_period;
	/* After every overflow the new period is the reset period plus
	 * (random & random_mask): periods stay in [reset, reset + mask]. */
	uint64_t random_mask;
	uint64_t random_seed;	/* 0: a fixed default seed */
	/* Other counters (bit i: session event i < 64) zeroed, with their
	 * periods restarted, when this one overflows; for any index see
	 * perfctr_session__notify_reset(). */
	uint64_t reset_mask;
	size_t :0;
};

/**
 * perfctr_sampling__next_period() - the period to apply after an
 * overflow of a counter with controls @ctl; @rng is the caller's random
 * state (start it with the seed, or 0 for the default), @notified whether
 * the overflow sent a notification, @base the counter's own period.
 * Pure and async-signal-safe.
 */
PERFCTR_API uint64_t perfctr_sampling__next_period(const struct perfctr_sampling *ctl,
						   uint64_t *rng, bool notified,
						   uint64_t base);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_NOTIFY_H */
