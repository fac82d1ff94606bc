/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Counting cgroups through BPF (internal; the public object is
 * struct perfctr_bpf_counters, target.h).
 *
 * The kernel's cgroup events are switched out and in at every switch
 * between tasks of different cgroups, per event and per cgroup counted.
 * Here each event is counted once per CPU instead (a CPU target of the
 * counter engine), and a BPF program at sched_switch adds each counter's
 * progress to the outgoing task's cgroup and to its counted ancestors
 * (src/bpf/cgroup_counters.bpf.c).  Any number of sessions and cgroups
 * share one program and one set of counters: a session binds its events
 * and its cgroup, which adds the events the program does not count yet
 * and gives the cgroup a slot in the sums.
 *
 * Reads first run the program on every CPU (pc_bpfcg__flush()) so that
 * the slice of the task running there now is counted: the sums are then
 * exact as of the read, as the cgroup events' would be.
 *
 * What differs from cgroup events: an event the kernel counts inside the
 * switch itself (context-switches, cgroup-switches, cpu-migrations)
 * lands in the next task's cgroup, as it is counted after the program's
 * reading; and a counter that the kernel multiplexes is scaled over the
 * cgroup's share of its time, not the cgroup's own time.
 *
 * Thread safety: none; one thread uses a perfctr_bpf_counters and its
 * bindings at a time.
 */
#ifndef PERFCTR_CORE_BPFCG_H
#define PERFCTR_CORE_BPFCG_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfctr/count.h"
#include "perfctr/target.h"

struct pc_bpfcg_binding;

/* One event of a binding: what pc_bpfcg__bind() takes. */
struct pc_bpfcg_event {
	const struct perf_event_attr *attr;
	const char *filter;	/* tracepoint filter, or NULL */
};

/*
 * pc_bpfcg__bind() - count @events (@nr of them) for cgroup @cgroup_id on
 * @bc's program: events it does not count yet are opened on every CPU
 * and added, and the cgroup gets a slot (shared with other bindings of
 * the same cgroup).  The binding's counts start at 0 and run from
 * pc_bpfcg__start().
 * Return: 0, -EOPNOTSUPP when @bc has no program (perfctr_bpf_counters__
 * error() says why), -E2BIG past the program's max_events events or its
 * max_cgroups cgroups, the counters' open -errno, -ENOMEM.
 */
int pc_bpfcg__bind(struct perfctr_bpf_counters *bc, uint64_t cgroup_id,
		   const struct pc_bpfcg_event *events, size_t nr,
		   struct pc_bpfcg_binding **out);

/* pc_bpfcg__unbind() - forget a binding (its cgroup's slot is freed with
 * its last binding).  NULL is a no-op. */
void pc_bpfcg__unbind(struct pc_bpfcg_binding *b);

/* pc_bpfcg__start() / __stop() - counting on or off for this binding
 * alone (the program counts on for the others).  __reset(): its counts
 * to 0.  Return: 0 or the flush's / map lookup's -errno. */
int pc_bpfcg__start(struct pc_bpfcg_binding *b);
int pc_bpfcg__stop(struct pc_bpfcg_binding *b);
int pc_bpfcg__reset(struct pc_bpfcg_binding *b);

/*
 * pc_bpfcg__read() - the binding's counts now, per event and CPU:
 * out[ev * nr_cpus + i] for CPU @cpus[i].  An event that cannot be
 * counted on a CPU is NOT_SUPPORTED with its open's errno; one that did
 * not run for the cgroup there is NOT_COUNTED.
 * Return: 0, or the flush's / map lookup's -errno.
 */
int pc_bpfcg__read(struct pc_bpfcg_binding *b, const int *cpus,
		   size_t nr_cpus, struct perfctr_count *out);

#endif /* PERFCTR_CORE_BPFCG_H */
