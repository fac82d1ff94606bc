/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Counting cgroups with one counter per CPU and event (cgroup_counters.h
 * has the maps).  At every context switch the counters' progress since
 * the previous switch on this CPU belongs to the task that leaves: it is
 * added to that task's cgroup and to each of its ancestors that is being
 * counted, which is how the kernel's cgroup events count (a cgroup counts
 * its descendants' tasks).  The library also runs the program on each CPU
 * before it reads (BPF_PROG_TEST_RUN on that CPU), so that the slice of
 * the task running there now is in the sums: reads are exact.
 *
 * The program only calls helpers on the current task: at sched_switch the
 * outgoing task is still current, and in the library's run it is the task
 * the CPU was interrupted in.  So no kernel structure is read directly.
 *
 * This runs at every switch of every CPU, so it does little more there
 * than read the counters and add to the sums.  Which slots a cgroup's
 * counts go to is found by walking its ancestors once, and remembered per
 * CPU until the counted set changes (the walk is a helper call and a hash
 * lookup per level, at every switch).  What it touches is kept to a few
 * cache lines: the CPU's readings, the remembered cgroup and the sums.
 * Runs on one CPU never overlap: sched_switch runs with interrupts off,
 * and the library's run with preemption off, so the per-CPU state needs
 * no lock.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "cgroup_counters.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* max_entries of counters, cgroups and sums are set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pc_bpfcg_cpu);
} cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u32);
} cgroups SEC(".maps");

/* A chunk of the sums; its max_entries (PC_BPFCG_CHUNK_SLOTS * stride) is
 * set by the loader on this template and on every chunk it makes. */
struct sums_chunk {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pc_bpfcg_value);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__type(key, __u32);
	__array(values, struct sums_chunk);
} sums SEC(".maps");

/* Values per slot in a chunk: the events the program can count. */
const volatile __u32 stride = PC_BPFCG_MAX_EVENTS;

/* Events whose counters are in `counters`, set by the loader as it adds
 * them (an event's counters are in the array before it is counted). */
__u32 nr_events = 0;
/* Moved on by the loader after each change of `cgroups`. */
__u64 generation = 0;

/* What account() gets (on the stack, as bpf_loop() requires). */
struct switch_ctx {
	struct pc_bpfcg_cpu *st;
	struct pc_bpfcg_leaf *leaf;
	__u32 cpu;
};

/* One event: its counter's progress on this CPU since the last reading,
 * added to the sums of every slot of the leaving task's cgroup.  A
 * bpf_loop() callback, so that the verifier walks it once rather than
 * once per event. */
static long account(__u32 ev, void *data)
{
	struct switch_ctx *c = data;
	struct pc_bpfcg_cpu *st = c->st;
	struct pc_bpfcg_leaf *leaf = c->leaf;
	struct bpf_perf_event_value now;
	struct pc_bpfcg_value *last;
	__u64 d_counter, d_enabled, d_running, bit;
	__u32 i, nr;

	/* bpf_loop() runs it for ev < nr_events <= PC_BPFCG_MAX_EVENTS;
	 * the mask is the bound the verifier sees. */
	ev &= PC_BPFCG_MAX_EVENTS - 1;
	if (bpf_perf_event_read_value(&counters,
				      c->cpu * PC_BPFCG_MAX_EVENTS + ev,
				      &now, sizeof(now)))
		return 0;	/* cannot count on this CPU */
	last = &st->last[ev];
	bit = 1ULL << ev;
	if (!(st->valid & bit)) {
		/* New counter: its count so far is nobody's. */
		st->valid |= bit;
		last->counter = now.counter;
		last->enabled = now.enabled;
		last->running = now.running;
		return 0;
	}
	d_counter = now.counter - last->counter;
	d_enabled = now.enabled - last->enabled;
	d_running = now.running - last->running;
	last->counter = now.counter;
	last->enabled = now.enabled;
	last->running = now.running;
	nr = leaf->nr_slots;
	for (i = 0; i < PC_BPFCG_MAX_LEVELS && i < nr; i++) {
		__u32 slot = leaf->slots[i];
		__u32 chunk_key = slot / PC_BPFCG_CHUNK_SLOTS;
		__u32 key = (slot % PC_BPFCG_CHUNK_SLOTS) * stride + ev;
		struct pc_bpfcg_value *sum;
		void *chunk;

		/* Two array lookups, whatever the number of cgroups. */
		chunk = bpf_map_lookup_elem(&sums, &chunk_key);
		if (!chunk)
			continue;
		sum = bpf_map_lookup_elem(chunk, &key);
		if (!sum)
			continue;
		sum->counter += d_counter;
		sum->enabled += d_enabled;
		sum->running += d_running;
	}
	return 0;
}

/* The current task's cgroup and the slots its counts go to: as this CPU
 * remembers it when it was found since the counted set last changed,
 * else found now by walking the cgroup's ancestors. */
static struct pc_bpfcg_leaf *find_leaf(struct pc_bpfcg_cpu *st)
{
	__u64 id = bpf_get_current_cgroup_id();
	__u64 gen = *(volatile __u64 *)&generation;
	struct pc_bpfcg_leaf *l = &st->leaves[id & (PC_BPFCG_LEAVES - 1)];
	__u64 last_id = 0;
	__u32 level;

	if (l->id == id && l->gen == gen)
		return l;
	l->nr_slots = 0;
	/* The id of a level below the task's own is 0. */
	for (level = 0; level < PC_BPFCG_MAX_LEVELS; level++) {
		__u64 anc = bpf_get_current_ancestor_cgroup_id(level);
		__u32 *slot;

		if (!anc)
			break;
		last_id = anc;
		slot = bpf_map_lookup_elem(&cgroups, &anc);
		if (slot && l->nr_slots < PC_BPFCG_MAX_LEVELS)
			l->slots[l->nr_slots++] = *slot;
	}
	/* Remembered only if the walk reached the cgroup itself: not if
	 * the task moved to another cgroup in between, nor past the
	 * levels walked. */
	l->id = last_id == id ? id : 0;
	l->gen = gen;
	return l;
}

SEC("raw_tp/sched_switch")
int pc_bpfcg_switch(void *ctx)
{
	struct switch_ctx c;
	__u32 zero = 0, n;

	c.st = bpf_map_lookup_elem(&cpu, &zero);
	if (!c.st)
		return 0;
	c.leaf = find_leaf(c.st);
	c.cpu = bpf_get_smp_processor_id();
	/* Every counter is read even when no counted cgroup has the task:
	 * the readings must move on, or the next task would get its
	 * slice. */
	n = nr_events;
	if (n > PC_BPFCG_MAX_EVENTS)
		n = PC_BPFCG_MAX_EVENTS;
	bpf_loop(n, account, &c, 0);
	return 0;
}
