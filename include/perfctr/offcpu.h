/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — off-CPU time: where a target's tasks wait.
 *
 * A BPF program at the scheduler's context switch (built with the library
 * when libbpf, clang and bpftool are there) notes when a task of the
 * target leaves the CPU blocked, with its kernel stack and its user stack
 * (through frame pointers), and when it comes back adds the interval to
 * the sum of its (process, thread, user stack, kernel stack, state).  The
 * sums stay in the kernel until read: the cost is one hash update per
 * blocking switch, not a record.
 *
 * Intervals at or above a threshold can be kept one by one instead, with
 * their start time (CLOCK_MONOTONIC), for a timeline.
 *
 * An interval whose switch-in the tracepoint never reported (it happens)
 * ends at the task's next arrival on a CPU as the scheduler's sched_info
 * has it ("recovered"); where the kernel has no sched_info it is counted
 * as lost.  perfctr_offcpu__stats() has every such count: nothing is
 * dropped without one.
 *
 * Needs: the kernel's BTF (/sys/kernel/btf/vmlinux, or opts->btf_path)
 * and the right to load tracing BPF programs (root, or CAP_BPF with
 * CAP_PERFMON).
 *
 * Thread safety: none; one thread uses a perfctr_offcpu at a time.
 */
#ifndef PERFCTR_OFFCPU_H
#define PERFCTR_OFFCPU_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>
#include <perfctr/target.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_offcpu;

struct perfctr_offcpu_opts {
	size_t sz;
	/* Intervals of at least this many ns are kept one by one with
	 * their time (perfctr_offcpu__read_long()); 0: every one summed. */
	uint64_t threshold_ns;
	/* Time preempted while runnable (state 'R') counted too: waiting
	 * for a CPU is latency as well.  Default: sleeping ('S') and
	 * uninterruptible ('D') only. */
	bool runnable;
	/* No user stacks (kernel stacks only). */
	bool no_user_stacks;
	/* The kernel's BTF; NULL: /sys/kernel/btf/vmlinux. */
	const char *btf_path;
	/* Capacities: distinct sums, distinct stacks, tasks off the CPU at
	 * once (0: 65536, 16384, 32768).  What does not fit is counted in
	 * the stats, never dropped silently. */
	uint32_t max_sums;
	uint32_t max_stacks;
	uint32_t max_tasks;
	size_t :0;
};

/**
 * perfctr_offcpu__new() - load the off-CPU program for @target: a command
 * or a process (its threads and every process it forks from now on), a
 * thread, a CPU list (the tasks that leave those CPUs), a cgroup (its
 * tasks and its descendants'; the CPU list of a cgroup target is not
 * looked at).  A command target must not be started yet (its exec is
 * profiled); the program records nothing until perfctr_offcpu__enable().
 * Return: the object, or NULL + errno: EOPNOTSUPP when the library was
 * built without BPF, ENOENT when the BTF file is missing, EPERM or EACCES
 * when the caller may not load the program, EINVAL for bad @opts or a
 * self target, ENOMEM; other values from the kernel's refusal of the
 * program.
 */
PERFCTR_API struct perfctr_offcpu *
perfctr_offcpu__new(const struct perfctr_target *target,
		    const struct perfctr_offcpu_opts *opts);

/** perfctr_offcpu__delete() - unload the program.  NULL is a no-op. */
PERFCTR_API void perfctr_offcpu__delete(struct perfctr_offcpu *oc);

/** perfctr_offcpu__enable() / __disable() - start or stop noting
 * switches.  Intervals open at the disable end at the next read.
 * Return: 0. */
PERFCTR_API int perfctr_offcpu__enable(struct perfctr_offcpu *oc);
PERFCTR_API int perfctr_offcpu__disable(struct perfctr_offcpu *oc);

/** perfctr_offcpu__program() - how the program is attached: "tp_btf" or
 * "raw_tp" (the first the kernel takes). */
PERFCTR_API const char *
perfctr_offcpu__program(const struct perfctr_offcpu *oc);

/* One sum, or one long interval. */
struct perfctr_offcpu_sample {
	size_t sz;
	pid_t pid;
	pid_t tid;
	char state;		/* 'S', 'D' or 'R' */
	uint32_t cpu;		/* long intervals: where it ended; sums: 0 */
	uint64_t time;		/* long intervals: its start, CLOCK_MONOTONIC
				 * ns; sums: 0 */
	uint64_t off_cpu_ns;	/* the time off the CPU */
	uint64_t count;		/* the intervals summed (1 for long ones) */
	/* Innermost first; kernel and user addresses apart.  Empty when
	 * the stack could not be taken (stats: stack_errors). */
	const uint64_t *kernel;
	size_t nr_kernel;
	const uint64_t *user;
	size_t nr_user;
};

/* Called once per sample; a non-zero return stops the read and is its
 * return value. */
typedef int (*perfctr_offcpu_fn)(const struct perfctr_offcpu_sample *s,
				 void *ctx);

/**
 * perfctr_offcpu__read() - every sum so far, by @fn.  Intervals still
 * open (tasks off the CPU now) are included up to now and stay open.
 * Return: 0, @fn's non-zero return, or a map lookup's -errno.
 */
PERFCTR_API int perfctr_offcpu__read(struct perfctr_offcpu *oc,
				     perfctr_offcpu_fn fn, void *ctx);

/**
 * perfctr_offcpu__read_long() - the long intervals (opts->threshold_ns)
 * ended since the last call, oldest first, by @fn; each is given once.
 * Return: the number given, @fn's non-zero return, or -errno.
 */
PERFCTR_API int perfctr_offcpu__read_long(struct perfctr_offcpu *oc,
					  perfctr_offcpu_fn fn, void *ctx);

struct perfctr_offcpu_stats {
	size_t sz;
	uint64_t intervals;	/* switch-out and switch-in paired */
	uint64_t recovered;	/* no switch-in seen: ended at the task's
				 * next arrival on a CPU */
	uint64_t lost;		/* no switch-in seen, no arrival known */
	uint64_t dropped;	/* did not fit the maps */
	uint64_t stack_errors;	/* a stack not taken (the time is kept) */
	uint64_t long_ones;	/* kept one by one */
	uint64_t open;		/* off the CPU at the last read */
	size_t :0;
};

/** perfctr_offcpu__stats() - the program's counts so far.  Return: 0,
 * -EINVAL for bad @st. */
PERFCTR_API int perfctr_offcpu__stats(const struct perfctr_offcpu *oc,
				      struct perfctr_offcpu_stats *st);

/*
 * In perf.data, off-CPU time is perf record --off-cpu's event: a software
 * event (PERF_COUNT_SW_BPF_OUTPUT) named PERFCTR_OFFCPU_EVENT whose samples
 * are IDENTIFIER IP TID TIME CPU PERIOD CALLCHAIN RAW: the period is the
 * time off the CPU in ns; the callchain the kernel stack after
 * PERF_CONTEXT_KERNEL, then the user stack after PERF_CONTEXT_USER; the IP
 * its first frame; RAW a u32, the state's letter.  perf report and perf
 * script read them as perf's own.
 */
#define PERFCTR_OFFCPU_EVENT "offcpu-time"

/* The words of the longest sample perfctr_offcpu_encode() writes. */
#define PERFCTR_OFFCPU_SAMPLE_WORDS (11 + 2 * 127)

/**
 * perfctr_offcpu_attr() - the off-CPU event's attr for a file whose other
 * events are like @like (its clock, sample_id_all, exclude_kernel are
 * copied; NULL: none), into @out.  Pure.
 */
PERFCTR_API void perfctr_offcpu_attr(const struct perf_event_attr *like,
				     struct perf_event_attr *out);

/**
 * perfctr_offcpu_encode() - @s as a PERF_RECORD_SAMPLE of the off-CPU
 * event with sample id @id at @time (in the file's clock), into @buf of
 * @words 64-bit words (PERFCTR_OFFCPU_SAMPLE_WORDS fit any).  Stacks
 * deeper than 127 frames are cut.  Pure.
 * Return: the record's size in bytes, or -ENOSPC when @buf is too small.
 */
PERFCTR_API int perfctr_offcpu_encode(const struct perfctr_offcpu_sample *s,
				      uint64_t id, uint64_t time,
				      uint64_t *buf, size_t words);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_OFFCPU_H */
