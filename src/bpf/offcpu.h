/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What the off-CPU BPF program (offcpu.bpf.c) and its loader
 * (src/lib/sample/offcpu.c) agree on.  Included on both sides: the BPF
 * side has the kernel's types from vmlinux.h, the user side from
 * <linux/types.h>.
 *
 * Maps:
 *   starts   HASH, tid -> struct pc_offcpu_start: the tasks profiled that
 *            are off the CPU now, since when and where;
 *   sums     HASH, struct pc_offcpu_key -> struct pc_offcpu_sum: blocked
 *            time summed per thread, stacks and state;
 *   stacks   STACK_TRACE: the user and kernel stacks the keys name;
 *   stacks2  STACK_TRACE: the stacks whose bucket in `stacks` holds
 *            another stack (a stack map keeps one stack a hash bucket);
 *            their ids have PC_OFFCPU_STACKS2 set;
 *   filter   HASH, a tgid (or a tid) -> 1: the tasks profiled, when the
 *            target is tasks;
 *   cpus     ARRAY, cpu -> 1: the CPUs profiled, when the target is CPUs;
 *   long_ones RINGBUF of struct pc_offcpu_interval: intervals at or above
 *            the threshold, each with its own time.
 */
#ifndef PERFCTR_BPF_OFFCPU_H
#define PERFCTR_BPF_OFFCPU_H

/* Whom the program profiles (its read-only `mode`). */
enum pc_offcpu_mode {
	PC_OFFCPU_ALL = 0,	/* every task */
	PC_OFFCPU_TGIDS = 1,	/* the processes in `filter`, and their forks */
	PC_OFFCPU_TIDS = 2,	/* the threads in `filter` */
	PC_OFFCPU_CGROUP = 3,	/* the tasks of cgroup `cgroup_id` and below */
	PC_OFFCPU_CPUS = 4,	/* tasks switched out on the CPUs in `cpus` */
};

/* The state a task left the CPU in (perf's letters for them). */
enum pc_offcpu_state {
	PC_OFFCPU_RUNNABLE = 0,	/* 'R': preempted, waiting for a CPU */
	PC_OFFCPU_SLEEPING = 1,	/* 'S': interruptible sleep */
	PC_OFFCPU_DISK = 2,	/* 'D': uninterruptible sleep */
};

/* A stack id of `stacks2`. */
#define PC_OFFCPU_STACKS2 (1 << 30)

/* The deepest stack kept (the kernel's perf_event_max_stack default). */
#define PC_OFFCPU_MAX_STACK 127

struct pc_offcpu_key {
	__u32 pid;		/* tgid */
	__u32 tid;
	__s32 user_stack;	/* stack ids; negative: none (the errno) */
	__s32 kernel_stack;
	__u32 state;		/* enum pc_offcpu_state */
	__u32 pad;
};

struct pc_offcpu_sum {
	__u64 total_ns;
	__u64 count;		/* intervals */
};

struct pc_offcpu_start {
	__u64 time;		/* bpf_ktime_get_ns() at the switch-out */
	struct pc_offcpu_key key;
};

struct pc_offcpu_interval {
	__u64 start;		/* CLOCK_MONOTONIC ns */
	__u64 duration;
	__u32 cpu;		/* where it was switched back in */
	__u32 pad;
	struct pc_offcpu_key key;
};

/* The program's counters (its .bss `stats`): nothing it sees is dropped
 * without one of these counting it. */
struct pc_offcpu_stats {
	__u64 intervals;	/* paired switch-out and switch-in */
	__u64 recovered;	/* no switch-in seen: ended at the task's
				 * next arrival on a CPU (sched_info) */
	__u64 lost;		/* no switch-in seen and no arrival known */
	__u64 no_start;		/* a switch-out not kept (starts full) */
	__u64 no_sum;		/* an interval not summed (sums full) */
	__u64 stack_errors;	/* a stack not taken (its key says -errno) */
	__u64 long_ones;	/* written to long_ones */
	__u64 long_full;	/* long_ones full: summed instead */
};

#endif /* PERFCTR_BPF_OFFCPU_H */
