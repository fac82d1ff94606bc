/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Off-CPU time: at every context switch, the task that leaves the CPU is
 * remembered with the time and its stacks (if it is profiled and left in
 * a state that is profiled), and the task that arrives, if remembered,
 * has its interval added to the sum of its (pid, tid, user stack, kernel
 * stack, state).  Maps and counters: offcpu.h.
 *
 * At sched_switch the leaving task is still current, so its stacks are
 * taken with bpf_get_stackid() on the current task, and its cgroup with
 * bpf_get_current_ancestor_cgroup_id().
 *
 * A task can be switched out twice without a switch-in seen between the
 * two (it happens here: one in 5-40 runs of 100 sleeps, and ftrace misses
 * the same switch).  Its interval is not dropped: the task got a CPU in
 * between, and sched_info.last_arrival says when, so the interval is
 * ended there ("recovered"); without that field it is counted as lost.
 * The loader reports both.
 *
 * The same code runs as tp_btf (where the kernel has BTF for it) or as
 * raw_tp; the loader picks the first that loads.  The kernel stack is
 * taken past the frames of the tracing itself (`kernel_skip`, set by the
 * loader), so that it starts in the scheduler.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "offcpu.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* max_entries of starts, sums, stacks, filter and cpus are set by the
 * loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pc_offcpu_start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct pc_offcpu_key);
	__type(value, struct pc_offcpu_sum);
} sums SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PC_OFFCPU_MAX_STACK * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PC_OFFCPU_MAX_STACK * sizeof(__u64));
} stacks2 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} long_ones SEC(".maps");

/* Set by the loader before the load. */
const volatile __u32 mode = PC_OFFCPU_ALL;
const volatile __u64 cgroup_id = 0;
const volatile bool runnable = false;	/* --off-cpu-runnable */
const volatile __u64 threshold_ns = 0;	/* 0: no long_ones */
const volatile __u32 kernel_skip = 0;
const volatile bool user_stacks = true;

/* Switched on and off by the loader (mmap'd .bss). */
bool enabled = false;
struct pc_offcpu_stats stats = {};

/* include/linux/sched.h: the task is a kernel thread. */
#define PF_KTHREAD 0x00200000

/* Cgroup levels looked at from the root for PC_OFFCPU_CGROUP. */
#define CGROUP_LEVELS 32

static bool profiled(__u32 pid, __u32 tid)
{
	__u32 cpu, level;
	__u8 *on;

	switch (mode) {
	case PC_OFFCPU_ALL:
		return true;
	case PC_OFFCPU_TGIDS:
		return bpf_map_lookup_elem(&filter, &pid) != NULL;
	case PC_OFFCPU_TIDS:
		return bpf_map_lookup_elem(&filter, &tid) != NULL;
	case PC_OFFCPU_CPUS:
		cpu = bpf_get_smp_processor_id();
		on = bpf_map_lookup_elem(&cpus, &cpu);
		return on && *on;
	case PC_OFFCPU_CGROUP:
		/* The cgroup itself or one below it, as a cgroup event
		 * counts its descendants. */
		for (level = 0; level < CGROUP_LEVELS; level++) {
			__u64 id = bpf_get_current_ancestor_cgroup_id(level);

			if (!id)
				return false;
			if (id == cgroup_id)
				return true;
		}
		return false;
	}
	return false;
}

static void add(const struct pc_offcpu_key *key, __u64 ns)
{
	struct pc_offcpu_sum *sum, zero = {};

	sum = bpf_map_lookup_elem(&sums, key);
	if (!sum) {
		/* Another CPU may add the same key meanwhile: NOEXIST
		 * keeps whichever came first, and both add to it. */
		if (bpf_map_update_elem(&sums, key, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&sums, key)) {
			__sync_fetch_and_add(&stats.no_sum, 1);
			return;
		}
		sum = bpf_map_lookup_elem(&sums, key);
		if (!sum) {
			__sync_fetch_and_add(&stats.no_sum, 1);
			return;
		}
	}
	__sync_fetch_and_add(&sum->total_ns, ns);
	__sync_fetch_and_add(&sum->count, 1);
}

/* An interval ended: summed, or written on its own when it is long. */
static void account(const struct pc_offcpu_start *st, __u64 end)
{
	struct pc_offcpu_interval *iv;
	__u64 ns = end > st->time ? end - st->time : 0;

	if (threshold_ns && ns >= threshold_ns) {
		iv = bpf_ringbuf_reserve(&long_ones, sizeof(*iv), 0);
		if (iv) {
			iv->start = st->time;
			iv->duration = ns;
			iv->cpu = bpf_get_smp_processor_id();
			iv->pad = 0;
			iv->key = st->key;
			bpf_ringbuf_submit(iv, 0);
			__sync_fetch_and_add(&stats.long_ones, 1);
			return;
		}
		__sync_fetch_and_add(&stats.long_full, 1);
	}
	add(&st->key, ns);
}

/* @prev leaves the CPU while an interval of its own is still open: it
 * arrived on a CPU without a switch-in seen.  The interval ends at that
 * arrival when the kernel keeps it (sched_info), else it is lost. */
static void unpaired(struct task_struct *prev, struct pc_offcpu_start *st)
{
	__u64 arrival = 0;

	if (bpf_core_field_exists(prev->sched_info))
		arrival = BPF_CORE_READ(prev, sched_info.last_arrival);
	if (arrival > st->time) {
		account(st, arrival);
		__sync_fetch_and_add(&stats.recovered, 1);
	} else {
		__sync_fetch_and_add(&stats.lost, 1);
	}
}

/*
 * The current task's stack id.  A stack map keeps one stack per hash
 * bucket and refuses (EEXIST) a stack whose bucket holds another: such a
 * stack goes to `stacks2`, whose buckets hold only those, so that both
 * must collide for a stack to be lost (then counted in stack_errors).
 */
static __s32 stack_id(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &stacks, flags);

	if (id == -17 /* EEXIST */) {
		id = bpf_get_stackid(ctx, &stacks2, flags);
		if (id >= 0)
			id |= PC_OFFCPU_STACKS2;
	}
	return (__s32)id;
}

static __u32 state_of(bool preempt, unsigned int prev_state)
{
	/* TASK_INTERRUPTIBLE 1, TASK_UNINTERRUPTIBLE 2 (TASK_IDLE has
	 * both bits and TASK_NOLOAD: counted as D, as ps shows it). */
	if (preempt || !(prev_state & 3))
		return PC_OFFCPU_RUNNABLE;
	return prev_state & 2 ? PC_OFFCPU_DISK : PC_OFFCPU_SLEEPING;
}

static int on_switch(void *ctx, bool preempt, struct task_struct *prev,
		     struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid, pid, next_tid;
	struct pc_offcpu_start *st, start;

	if (!enabled)
		return 0;
	tid = BPF_CORE_READ(prev, pid);
	pid = BPF_CORE_READ(prev, tgid);
	if (tid && profiled(pid, tid)) {
		__u32 state = state_of(preempt, prev_state);

		st = bpf_map_lookup_elem(&starts, &tid);
		if (st) {
			unpaired(prev, st);
			bpf_map_delete_elem(&starts, &tid);
		}
		if (state != PC_OFFCPU_RUNNABLE || runnable) {
			start.time = now;
			start.key.pid = pid;
			start.key.tid = tid;
			start.key.state = state;
			start.key.pad = 0;
			/* Kernel threads have no user stack to take. */
			bool user = user_stacks &&
				!(BPF_CORE_READ(prev, flags) & PF_KTHREAD);

			start.key.kernel_stack = stack_id(ctx, kernel_skip);
			start.key.user_stack = user ?
				stack_id(ctx, BPF_F_USER_STACK) :
				-2 /* ENOENT */;
			if (start.key.kernel_stack < 0 ||
			    (user && start.key.user_stack < 0))
				__sync_fetch_and_add(&stats.stack_errors, 1);
			if (bpf_map_update_elem(&starts, &tid, &start,
						BPF_ANY))
				__sync_fetch_and_add(&stats.no_start, 1);
		}
	}
	next_tid = BPF_CORE_READ(next, pid);
	st = bpf_map_lookup_elem(&starts, &next_tid);
	if (st) {
		account(st, now);
		__sync_fetch_and_add(&stats.intervals, 1);
		bpf_map_delete_elem(&starts, &next_tid);
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(pc_offcpu_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	return on_switch(ctx, preempt, prev, next, prev_state);
}

SEC("raw_tp/sched_switch")
int pc_offcpu_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return on_switch(ctx, (bool)ctx->args[0],
			 (struct task_struct *)ctx->args[1],
			 (struct task_struct *)ctx->args[2],
			 (unsigned int)ctx->args[3]);
}

/* A process profiled forks: the child is profiled too (threads share
 * their tgid and need nothing). */
static int on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid, pid;
	__u8 one = 1;

	if (mode != PC_OFFCPU_TGIDS)
		return 0;
	ppid = BPF_CORE_READ(parent, tgid);
	pid = BPF_CORE_READ(child, tgid);
	if (pid != ppid && bpf_map_lookup_elem(&filter, &ppid))
		bpf_map_update_elem(&filter, &pid, &one, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(pc_offcpu_fork_btf, struct task_struct *parent,
	     struct task_struct *child)
{
	return on_fork(parent, child);
}

SEC("raw_tp/sched_process_fork")
int pc_offcpu_fork_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return on_fork((struct task_struct *)ctx->args[0],
		       (struct task_struct *)ctx->args[1]);
}
