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
	__uint(max_entries, PC_BPFCG_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct pc_bpfcg_value);
} last SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, __u32);
} cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct pc_bpfcg_value);
} sums SEC(".maps");

/* Events whose counters are in `counters`, set by the loader as it adds
 * them (an event's counters are in the array before it is counted). */
__u32 nr_events = 0;

struct switch_ctx {
	__u32 slots[PC_BPFCG_MAX_LEVELS];
	__u32 nr_slots;
	__u32 cpu;
};

/* One event: its counter's progress on this CPU since the last reading,
 * added to the sums of every slot of @c.  A bpf_loop() callback, so that
 * the verifier walks it once rather than once per event. */
static long account(__u32 ev, void *data)
{
	struct switch_ctx *c = data;
	struct bpf_perf_event_value now;
	struct pc_bpfcg_value *prev;
	__u64 d_counter, d_enabled, d_running;
	__u32 i, key = ev;

	if (ev >= PC_BPFCG_MAX_EVENTS)
		return 1;
	prev = bpf_map_lookup_elem(&last, &key);
	if (!prev)
		return 0;
	if (bpf_perf_event_read_value(&counters,
				      c->cpu * PC_BPFCG_MAX_EVENTS + ev,
				      &now, sizeof(now)))
		return 0;	/* cannot count on this CPU */
	if (!prev->valid) {
		/* New counter: its count so far is nobody's. */
		prev->counter = now.counter;
		prev->enabled = now.enabled;
		prev->running = now.running;
		prev->valid = 1;
		return 0;
	}
	d_counter = now.counter - prev->counter;
	d_enabled = now.enabled - prev->enabled;
	d_running = now.running - prev->running;
	prev->counter = now.counter;
	prev->enabled = now.enabled;
	prev->running = now.running;
	for (i = 0; i < PC_BPFCG_MAX_LEVELS && i < c->nr_slots; i++) {
		struct pc_bpfcg_value *sum;

		key = c->slots[i] * PC_BPFCG_MAX_EVENTS + ev;
		sum = bpf_map_lookup_elem(&sums, &key);
		if (!sum)
			continue;
		sum->counter += d_counter;
		sum->enabled += d_enabled;
		sum->running += d_running;
	}
	return 0;
}

SEC("raw_tp/sched_switch")
int pc_bpfcg_switch(void *ctx)
{
	struct switch_ctx c;
	__u32 level, n;

	c.nr_slots = 0;
	c.cpu = bpf_get_smp_processor_id();
	/* The counted cgroups among the current task's cgroup and its
	 * ancestors; the id of a level below the task's own is 0. */
	for (level = 0; level < PC_BPFCG_MAX_LEVELS; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);
		__u32 *slot;

		if (!id)
			break;
		slot = bpf_map_lookup_elem(&cgroups, &id);
		if (slot && c.nr_slots < PC_BPFCG_MAX_LEVELS)
			c.slots[c.nr_slots++] = *slot;
	}
	/* The counters' progress goes nowhere when no cgroup counts the
	 * task, but the readings must still move on. */
	n = nr_events;
	if (n > PC_BPFCG_MAX_EVENTS)
		n = PC_BPFCG_MAX_EVENTS;
	bpf_loop(n, account, &c, 0);
	return 0;
}
