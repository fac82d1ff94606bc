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
 *   last      PERCPU_ARRAY, key event: that CPU's counter at the last
 *             switch (valid 0 until the program has seen it once);
 *   cgroups   HASH, cgroup id -> slot: the cgroups being counted;
 *   sums      PERCPU_ARRAY, key slot * PC_BPFCG_MAX_EVENTS + event: what
 *             the tasks of the slot's cgroup and of its descendants did on
 *             each CPU.
 */
#ifndef PERFCTR_BPF_CGROUP_COUNTERS_H
#define PERFCTR_BPF_CGROUP_COUNTERS_H

/* Events one program counts; the index space of `counters` and `sums`. */
#define PC_BPFCG_MAX_EVENTS 64
/* cgroup levels walked from the root (the root is level 0): deeper
 * cgroups are counted through their ancestors down to this level only. */
#define PC_BPFCG_MAX_LEVELS 32

struct pc_bpfcg_value {
	__u64 counter;
	__u64 enabled;
	__u64 running;
	__u64 valid;		/* last: the three above are a reading */
};

#endif /* PERFCTR_BPF_CGROUP_COUNTERS_H */
