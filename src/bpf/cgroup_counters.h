/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What the cgroup counting BPF program (cgroup_counters.bpf.c) and the
 * library's loader (src/lib/core/bpfcg.c) agree on.  Included on both
 * sides: the BPF side has the kernel's types from vmlinux.h, the user side
 * from <linux/types.h>.
 *
 * Maps:
 *   counters  PERF_EVENT_ARRAY, key cpu * PC_BPFCG_MAX_EVENTS + event: the
 *             per-CPU counters, opened by the library's counter engine;
 *   cpu       PERCPU_ARRAY of one struct pc_bpfcg_cpu: that CPU's readings
 *             at the last switch, and the counted slots of the cgroups
 *             whose tasks it ran lately;
 *   cgroups   HASH, cgroup id -> slot: the cgroups being counted (not
 *             preallocated: its max_entries is a cap, not memory);
 *   sums      ARRAY_OF_MAPS, key slot / PC_BPFCG_CHUNK_SLOTS: chunks of
 *             the sums, each a PERCPU_ARRAY of struct pc_bpfcg_value with
 *             key (slot % PC_BPFCG_CHUNK_SLOTS) * stride + event: what the
 *             tasks of the slot's cgroup and of its descendants did on each
 *             CPU.  The loader adds a chunk when the cgroups outgrow the
 *             ones there, so the sums' memory follows the cgroups counted
 *             and nothing is reloaded as they grow.
 *
 * `stride` (read-only, set before the load) is the number of events the
 * program counts at most: each slot's sums are that many values.
 *
 * The loader moves the program's `generation` on after every change of
 * `cgroups`: the slots each CPU remembers from before are then stale.
 */
#ifndef PERFCTR_BPF_CGROUP_COUNTERS_H
#define PERFCTR_BPF_CGROUP_COUNTERS_H

/* Events one program counts; a bit each in pc_bpfcg_cpu.valid. */
#define PC_BPFCG_MAX_EVENTS 64
/* cgroup levels walked from the root (the root is level 0): deeper
 * cgroups are counted through their ancestors down to this level only. */
#define PC_BPFCG_MAX_LEVELS 32
/* cgroups whose counted slots each CPU remembers, by their id's low bits
 * (a power of 2). */
#define PC_BPFCG_LEAVES 64

struct pc_bpfcg_value {
	__u64 counter;
	__u64 enabled;
	__u64 running;
};

/* Slots of one chunk of `sums` (a power of 2). */
#define PC_BPFCG_CHUNK_SLOTS 256

/* A cgroup a task ran in, and the slots its counts go to: its own and
 * its ancestors' that are counted. */
struct pc_bpfcg_leaf {
	__u64 id;			/* 0: nothing remembered */
	__u64 gen;			/* `generation` when it was found */
	__u32 nr_slots;
	__u32 slots[PC_BPFCG_MAX_LEVELS];
};

struct pc_bpfcg_cpu {
	__u64 valid;			/* bit ev: last[ev] is a reading */
	struct pc_bpfcg_value last[PC_BPFCG_MAX_EVENTS];
	struct pc_bpfcg_leaf leaves[PC_BPFCG_LEAVES];
};

#endif /* PERFCTR_BPF_CGROUP_COUNTERS_H */
