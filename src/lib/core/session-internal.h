/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The inside of a session, for the code that builds on it (event sets,
 * rotation, notifications).  Not installed.
 *
 * A session is a policy over the counter engine (core/engine.h), which
 * owns the counters, opens the groups, toggles the leaders and reads:
 *   - events, in the order they were added, each knowing its group leader,
 *     and groups, the leader first: the session's own record of what was
 *     asked for, kept while detached and across attaches;
 *   - engine: the counters of the attached (or last) target, one made at
 *     each attach from the events as they are then; the units (the
 *     target's (tid, cpu) positions), the slots (one event on one unit:
 *     fd, id, last count) and the group fds (the fd leading each group on
 *     each unit) are the engine's, seen through units, group_fds,
 *     pc_slot() and pc_group_fd();
 *   - the sums carried over from earlier attaches, per event.
 */
#ifndef PERFCTR_SESSION_INTERNAL_H
#define PERFCTR_SESSION_INTERNAL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/engine.h"
#include "perfctr/session.h"

/* What a session asks the kernel for on every counter. */
#define PC_READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID |		\
			PERF_FORMAT_TOTAL_TIME_ENABLED |		\
			PERF_FORMAT_TOTAL_TIME_RUNNING)

struct pc_event {
	/* As the event list gave it; after an attach the fields the session
	 * decides (read_format, inherit, disabled, enable_on_exec) are those
	 * of the group's leader on the first unit. */
	struct perf_event_attr attr;
	char *name;
	char *pmu;
	char *unit;		/* sysfs unit, "" when none */
	double scale;		/* sysfs scale, 1.0 when none */
	size_t leader;		/* index of the group's first event */
	size_t group;		/* index into session->groups */
	char *filter;		/* tracepoint filter, or NULL */
	int *cpus;		/* the PMU's own CPUs (uncore, hybrid), or NULL */
	int nr_cpus;
};

struct pc_group {
	size_t *members;	/* event indices, the leader first */
	size_t nr_members;
};

struct perfctr_session {
	unsigned int flags;		/* enum perfctr_session_flags */
	struct perfctr_parse_opts parse_opts;
	char *sysfs_root;		/* owned copies of parse_opts' roots */
	char *tracefs_root;

	struct pc_event *events;
	size_t nr_events;
	struct pc_group *groups;
	size_t nr_groups;

	struct perfctr_target *target;	/* while attached, not owned */
	bool attached;
	struct pc_engine_failure attach_failure;	/* of the last attach */
	/* The attached or last target's counters, NULL before the first
	 * attach; units, nr_units and group_fds are its (engine.h). */
	struct pc_engine *engine;
	const struct pc_unit *units;
	size_t nr_units;
	int *group_fds;			/* [g * nr_units + u], -1 = none */

	/* Sums of earlier attaches, per event: a re-attached session
	 * continues from them. */
	struct perfctr_count *carried;
	bool *has_carried;

	/* Counting a cgroup through BPF (core/bpfcg.h) while attached, or
	 * NULL: the engine then opened nothing and its slots are filled
	 * from the binding, read as bpf_counts (event-major, per unit). */
	struct pc_bpfcg_binding *bpf;
	bool bpf_used;			/* the last attach counts through BPF */
	struct perfctr_count *bpf_counts;
	int *bpf_cpus;

	/* Event sets, rotation, notifications (set-state.h); NULL when
	 * unused. */
	struct pc_sets *sets;
};

/* A slot that is not open and never counted: the answer for an event
 * added after the last attach, which has no counters on its units. */
struct pc_slot *pc_session_no_slot(void);

static inline struct pc_slot *pc_slot(const struct perfctr_session *s,
				      size_t event, size_t unit)
{
	struct pc_slot *slot = pc_engine__slot(s->engine, event, unit);

	return slot ? slot : pc_session_no_slot();
}

/* The fd leading @group on @unit (-1 = none), as a pointer for the code
 * that used to own it. */
static inline int *pc_group_fd(const struct perfctr_session *s,
			       size_t group, size_t unit)
{
	static int none = -1;

	if (group >= pc_engine__nr_groups(s->engine) || unit >= s->nr_units) {
		none = -1;
		return &none;
	}
	return &s->group_fds[group * s->nr_units + unit];
}

#endif /* PERFCTR_SESSION_INTERNAL_H */
