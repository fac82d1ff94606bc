/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — virtual per-thread counters: the vperfctr API of the
 * original perfctr kernel driver, with its names and meanings, on
 * perf_event_open(2).
 *
 * A thread's state holds an optional TSC sum (the thread's virtual TSC:
 * TSC ticks while it ran, the msr PMU's `tsc` event) and up to
 * VPERFCTR_NR_PMCS counters: a-mode (accumulating) counters first, then
 * i-mode (interrupting) counters, which send the owner thread a signal when
 * they overflow and stay suspended until vperfctr_iresume().  Sums are
 * 64-bit.  The state outlives its thread: after the thread exits, reads
 * return its final sums.
 *
 *	struct vperfctr *v = vperfctr_open(0, 1);	(this thread, create)
 *	struct vperfctr_control c;
 *	memset(&c, 0, sizeof(c));
 *	c.sz = sizeof(c);
 *	c.cpu_control.tsc_on = 1;
 *	c.cpu_control.nractrs = 1;
 *	c.event[0] = "syscalls:sys_enter_getppid";
 *	vperfctr_control(v, &c);
 *	...
 *	vperfctr_read_fast(v, &sum);			(user space when it can)
 *
 * Differences from the kernel patch, all forced by building on perf_event:
 * hardware counters are assigned by the kernel (pmc_map is kept for the
 * ABI and otherwise ignored); ireset[] follows the x86 document (negative:
 * the counter overflows after -ireset events); the overflow signal's
 * si_code is POLL_IN, not SI_PMC_OVF, and the mask of overflown counters is
 * obtained from vperfctr_si_pmc_ovf_mask() instead of a siginfo field;
 * another thread's state is controlled under the kernel's ptrace-access
 * rule of perf_event_open (the target need not be stopped).
 *
 * Signals: a control with i-mode counters installs a handler for
 * si_signo (and says so at the debug log level), which suspends the
 * counters, records the overflow mask and then calls the handler that was
 * installed for si_signo before, if any.  Install yours before calling
 * vperfctr_control(); if you install it afterwards, call
 * vperfctr_si_pmc_ovf_mask() in it, which does the same work.  Use a
 * real-time signal (SIGRTMIN + n): ordinary signals do not queue.
 *
 * Thread safety: calls on one state are serialised by the state, except
 * the async-signal-safe ones (vperfctr_read_fast, vperfctr_read_pmc,
 * vperfctr_iresume, vperfctr_ovf_mask, vperfctr_si_pmc_ovf_mask), which
 * must not run concurrently with vperfctr_control() or vperfctr_unlink()
 * of the same state.  User-space reads are only done by the owner thread;
 * other threads get the same values through read(2).
 */
#ifndef PERFCTR_VPERFCTR_H
#define PERFCTR_VPERFCTR_H

#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>
#include <perfctr/count.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Counters per state: the original driver's x86 layout's 18. */
#define VPERFCTR_NR_PMCS 18

/* The original driver's sums: the TSC and one per counter, 64 bits each. */
struct perfctr_sum_ctrs {
	uint64_t tsc;
	uint64_t pmc[VPERFCTR_NR_PMCS];
};

/* The original driver's control data (x86 layout without the P4 part). */
struct perfctr_cpu_control {
	unsigned int tsc_on;	/* count the thread's virtual TSC */
	unsigned int nractrs;	/* a-mode counters: 0 .. nractrs-1 */
	unsigned int nrictrs;	/* i-mode counters: nractrs .. +nrictrs-1 */
	unsigned int pmc_map[VPERFCTR_NR_PMCS];	/* ignored: the kernel assigns */
	/* Raw hardware control words, for a counter given neither by
	 * vperfctr_control.attr[] nor .event[]: on x86 a P6-style PerfEvtSel
	 * (event 0-7, unit mask 8-15, USR 16, OS 17, E 18, INT 20, EN 22,
	 * INV 23, CMASK 24-31; EN and USR or OS required; INT set exactly for
	 * i-mode counters; bits 19 and 21 reserved); on arm64 a PMEVTYPER
	 * word (event 0-15, NSH 27, U 30, P 31; other bits reserved). */
	unsigned int evntsel[VPERFCTR_NR_PMCS];
	/* i-mode (re)start values, negative: the counter overflows after
	 * -ireset[i] events (its sample period). */
	int ireset[VPERFCTR_NR_PMCS];
};

struct vperfctr_control {
	size_t sz;		/* sizeof(struct vperfctr_control) */
	int si_signo;		/* overflow signal of i-mode counters */
	/* Counters whose sums are not reset by this control (bit i =
	 * counter i).  The TSC sum continues while tsc_on stays set and is
	 * reset when it is cleared. */
	unsigned int preserve;
	struct perfctr_cpu_control cpu_control;
	/* How counter i is chosen, first match wins: attr[i] (copied; its
	 * sample_period is the i-mode period when ireset[i] is 0), event[i]
	 * (one event specification, see perfctr/event.h, copied), else the
	 * raw cpu_control.evntsel[i]. */
	const char *event[VPERFCTR_NR_PMCS];
	const struct perf_event_attr *attr[VPERFCTR_NR_PMCS];
	size_t :0;
};

struct vperfctr;

/**
 * vperfctr_open() - a handle on a thread's state.
 * @tid:   a thread id, or 0 for the calling thread.
 * @creat: non-zero to create the state (inactive, all sums zero).
 *
 * Another thread can be given when the caller may ptrace it (checked by
 * the kernel when counters are opened).  Opening without @creat gives a
 * new handle on the state created earlier in this process.
 * Return: the handle, or NULL with errno: EEXIST (@creat and a state
 * exists), ENOENT (no state and no @creat), ESRCH (no such thread),
 * ENOMEM.
 */
PERFCTR_API struct vperfctr *vperfctr_open(pid_t tid, int creat);

/**
 * vperfctr_control() - stop and sample the counters, install @control,
 * restart them if it enables anything.
 *
 * Sums are reset unless preserved (see struct vperfctr_control); a control
 * with neither tsc_on nor counters stops everything and keeps the counters'
 * sums readable.  Validation is complete before anything changes: on
 * failure the state is as it was.  Restarting with the same counters as
 * before costs two or three ioctls; changing them reopens the events.
 * Return: 0, or -EINVAL (bad control: more than VPERFCTR_NR_PMCS or
 * PC_OVF limits, a bad evntsel word, an event specification that is not
 * exactly one event, i-mode without a period or signal), -EOPNOTSUPP (no
 * per-thread TSC here, or raw evntsel words on an unknown architecture),
 * -ENXIO (the state was unlinked), or the kernel's error for an event
 * (-ENOENT, -EACCES, ...), with errno set.
 */
PERFCTR_API int vperfctr_control(struct vperfctr *vperfctr,
				 const struct vperfctr_control *control);

/**
 * vperfctr_read() - the sums and/or the control in force.
 * @sum:     NULL, or filled with the current sums (one read(2)).
 * @control: NULL, or filled with the last control (up to its sz; the
 *           event strings and attrs point into the state).
 * Return: 0 or a negative errno.
 */
PERFCTR_API int vperfctr_read(struct vperfctr *vperfctr,
			      struct perfctr_sum_ctrs *sum,
			      struct vperfctr_control *control);

/**
 * vperfctr_read_fast() - the sums, computed in user space from the
 * counters' mmap'd pages when every counter allows it (a hardware counter
 * of the calling thread, scheduled now, with user access enabled), else
 * with one read(2) of the group.  The TSC sum always needs the read(2).
 * Async-signal-safe.
 * Return: 1 when computed in user space, 0 when read with read(2), or a
 * negative errno.
 */
PERFCTR_API int vperfctr_read_fast(struct vperfctr *vperfctr,
				   struct perfctr_sum_ctrs *sum);

/**
 * vperfctr_read_pmc() - one counter's sum, the fast way (see
 * vperfctr_read_fast()).  Async-signal-safe.
 * Return: 1 (user space) or 0 (read(2)), -EINVAL for a counter index of
 * VPERFCTR_NR_PMCS or more, or a negative errno.
 */
PERFCTR_API int vperfctr_read_pmc(struct vperfctr *vperfctr, unsigned int i,
				  uint64_t *value);

/**
 * vperfctr_read_counts() - the group variant with the times for scaling:
 * counts[i] for the counters 0 .. min(@nr, counters) - 1, each with its
 * sum, time enabled and time running, read from the pages in one pass
 * when possible, else with one read(2).
 * Return: the number of counts filled, or a negative errno.
 */
PERFCTR_API int vperfctr_read_counts(struct vperfctr *vperfctr,
				     struct perfctr_count *counts,
				     unsigned int nr);

/**
 * vperfctr_unlink() - stop and sample the counters and detach the state
 * from its thread (a new state can then be created for it).  Reads keep
 * returning the final sums.  Return: 0 (also when already detached).
 */
PERFCTR_API int vperfctr_unlink(struct vperfctr *vperfctr);

/**
 * vperfctr_iresume() - resume the counters suspended by an i-mode
 * overflow, and clear the overflow mask.  Async-signal-safe (call it from
 * the signal handler).  Return: 0, or -EINVAL when the control has no
 * i-mode counters.
 */
PERFCTR_API int vperfctr_iresume(struct vperfctr *vperfctr);

/**
 * vperfctr_ovf_mask() - the counters that overflowed since the last
 * control or iresume (bit i = counter i).  Async-signal-safe.
 */
PERFCTR_API unsigned int vperfctr_ovf_mask(const struct vperfctr *vperfctr);

/**
 * vperfctr_si_pmc_ovf_mask() - the original driver's si_pmc_ovf_mask: for
 * a signal handler's siginfo, the overflow mask of the state whose
 * counter sent it (0 when the signal is not a vperfctr overflow).
 * Processes the overflow (suspension included) if the library's handler
 * did not.
 * Async-signal-safe.
 */
PERFCTR_API unsigned int vperfctr_si_pmc_ovf_mask(const siginfo_t *si);

/**
 * vperfctr_close() - release the handle.  The state lives on while it is
 * attached to its thread (vperfctr_open(tid, 0) finds it again) and is
 * freed with the last handle once unlinked.  NULL is a no-op.
 */
PERFCTR_API void vperfctr_close(struct vperfctr *vperfctr);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_VPERFCTR_H */
