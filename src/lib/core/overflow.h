/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Overflow signals for one counter group (internal to the library).
 *
 * The kernel sends a signal when a counter with a sample period overflows
 * (O_ASYNC + F_SETSIG + F_SETOWN_EX to a thread; si_code POLL_IN, si_fd =
 * the counter's fd).  This module turns that into the seeds' interrupt
 * mode:
 *
 *  - it registers the group's fds and routes the signals to one thread;
 *  - in the signal handler it *identifies* the overflown counters from the
 *    counts themselves (one group read(): counter i has overflown when its
 *    count reached its next multiple of the period), so two counters that
 *    overflow in the same kernel entry are both named by the first signal,
 *    and the second, now stale, signal is swallowed;
 *  - it suspends the group (DISABLE of the fds the owner gave) on overflow
 *    and records the mask of overflown counters until pc_ovf__resume().
 *    The suspension is ours because resuming after REFRESH is broken for
 *    tracepoints and breakpoints (docs/kernel-notes.md 3).
 *
 * The owner must keep the kernel's notion of the overflow points and ours
 * equal: counts start at 0 with a full period ahead (a fresh open, or
 * RESET + PERIOD while disabled, then pc_ovf__rearm()).
 *
 * Signal handling: the first pc_ovf on a signal number installs a handler
 * for it (SA_SIGINFO | SA_RESTART) and remembers the handler that was there
 * before.  Signals that are not ours go to that previous handler.  For ours,
 * when desc.chain is set, the previous handler is called after the
 * suspension (the seeds' "the owner thread gets the control's signal"); if
 * it was SIG_DFL or SIG_IGN nothing more happens.  If the application later
 * replaces our handler, its own handler must call pc_ovf__handle() (what the
 * public accessors do), which performs the same work once per overflow.
 *
 * Async-signal-safe: pc_ovf__handle, pc_ovf__mask, pc_ovf__resume,
 * pc_ovf__suspended.  The others take a mutex and allocate.
 */
#ifndef PERFCTR_CORE_OVERFLOW_H
#define PERFCTR_CORE_OVERFLOW_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PC_OVF_MAX_COUNTERS 64

struct pc_ovf;

struct pc_ovf_counter {
	int fd;			/* the counter's fd: signals name it in si_fd */
	uint64_t period;	/* its sample_period; 0 = not watched */
	/* Position of its value among the u64 words of a read() of
	 * read_fd (PERF_FORMAT_GROUP, with or without the times). */
	unsigned int value_pos;
};

/* Called in the signal handler (async-signal context) with the newly
 * overflown counters; must be async-signal-safe itself. */
typedef void (*pc_ovf_notify_t)(struct pc_ovf *ovf, uint64_t new_mask,
				const siginfo_t *si, void *ctx);

struct pc_ovf_desc {
	int read_fd;		/* group leader with PERF_FORMAT_GROUP */
	unsigned int read_words;/* u64 words a read() of read_fd returns */
	size_t nr_counters;	/* at most PC_OVF_MAX_COUNTERS */
	const struct pc_ovf_counter *counters;
	int signo;		/* signal for the watched fds */
	pid_t tid;		/* thread that receives them */
	/* DISABLEd (flags 0) on overflow, ENABLEd again by resume; none:
	 * overflows are only recorded. */
	const int *suspend_fds;
	size_t nr_suspend;
	/* After resume, DISABLE and ENABLE read_fd (the leader): a member
	 * re-enabled on its own is only scheduled with its leader's PMU at
	 * the next context switch when it is of another PMU than the leader
	 * (seen with msr + tracepoint); the toggle schedules the group now.
	 * For suspend fds that are members of a leader that keeps running. */
	bool kick_leader;
	bool chain;		/* call the signal's previous handler */
	pc_ovf_notify_t notify;	/* may be NULL */
	void *ctx;
};

/*
 * pc_ovf__new() - register a group: F_SETOWN_EX to desc->tid, F_SETSIG,
 * O_ASYNC on every watched fd, and the signal handler if not yet there.
 * Return: the object, or NULL + errno (EINVAL bad desc, EMFILE fd too
 * large for the table, or fcntl's / sigaction's errno).  On failure
 * nothing stays registered.
 */
struct pc_ovf *pc_ovf__new(const struct pc_ovf_desc *desc);

/* pc_ovf__delete() - unregister (O_ASYNC off) and free; NULL is a no-op.
 * Waits for handlers running in other threads to leave.  Signals still
 * queued for the fds are swallowed later. */
void pc_ovf__delete(struct pc_ovf *ovf);

/* pc_ovf__handle() - process one overflow signal: identify, record,
 * suspend.  Idempotent: a signal already processed adds nothing.
 * @out: when non-NULL, the pc_ovf the signal belongs to, or NULL.
 * Return: the counters that overflowed for the first time in this call. */
uint64_t pc_ovf__handle(const siginfo_t *si, struct pc_ovf **out);

/* pc_ovf__mask() - counters overflown since the last resume. */
uint64_t pc_ovf__mask(const struct pc_ovf *ovf);

/* pc_ovf__suspended() - true while an overflow has the group suspended. */
bool pc_ovf__suspended(const struct pc_ovf *ovf);

/* pc_ovf__resume() - clear the mask and, when suspended, ENABLE the
 * suspend fds again.  Return: 0 or the first ioctl's -errno. */
int pc_ovf__resume(struct pc_ovf *ovf);

/* pc_ovf__rearm() - after the owner reset the counts to 0 and the periods
 * (while disabled): the next overflow of counter i is at period i; clears
 * the mask and the suspension flag (the owner decides what is enabled). */
void pc_ovf__rearm(struct pc_ovf *ovf);

/* pc_ovf__overflows() - how many overflows counter @i has had since the
 * last rearm (from the counts seen by the handler). */
uint64_t pc_ovf__overflows(const struct pc_ovf *ovf, size_t i);

/* pc_ovf__set_next() - the count at which counter @i overflows next, for
 * an owner that changed its period (PERF_EVENT_IOC_PERIOD while disabled
 * makes the kernel count a whole new period from the current count).
 * Only from the notify callback, which runs with the object held. */
void pc_ovf__set_next(struct pc_ovf *ovf, size_t i, uint64_t next);

#endif /* PERFCTR_CORE_OVERFLOW_H */
