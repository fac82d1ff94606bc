/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The inside of a session, for the code that builds on it (event sets,
 * rotation, notifications).  Not installed.
 *
 * The model:
 *   - events, in the order they were added, each knowing its group leader;
 *   - groups: the events that are opened as one perf group, the leader
 *     first;
 *   - units: the (tid, cpu) positions of the target, copied at attach;
 *   - slots: one event on one unit: its fd and its last values.
 *     Slots are stored event-major (slot(e, u) = slots[e * nr_units + u])
 *     so that events added while detached only append.
 *   - a group fd per (group, unit): the fd of the first member that could
 *     be opened on that unit.  That member led the perf group there, every
 *     other member was opened into it; it is the fd that is read (one
 *     read() per group and unit) and toggled by start and stop.
 *
 * Members are opened enabled and only the leader is toggled (flags 0):
 * ENABLE with PERF_IOC_FLAG_GROUP skips members of another PMU that are
 * disabled (kernel-facts.md, item 4), and the kernel checks whether a
 * hardware group fits the PMU against its enabled members only.  A member
 * cannot count while its leader is off, so the counts stay exact.
 */
#ifndef PERFCTR_SESSION_INTERNAL_H
#define PERFCTR_SESSION_INTERNAL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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

struct pc_unit {
	pid_t tid;		/* -1: any thread (CPU target) */
	int cpu;		/* -1: any CPU (thread targets) */
	/* A thread of a process target that ended between the listing of
	 * the threads and the attach: nothing open, left out of the sums. */
	bool gone;
};

struct pc_slot {
	int fd;			/* -1 when not open */
	int open_err;		/* errno of the failed open, 0 when opened */
	uint64_t id;		/* PERF_EVENT_IOC_ID of fd */
	struct perfctr_count count;	/* as of the last read */
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
	struct pc_unit *units;		/* the attached or last target's */
	size_t nr_units;
	struct pc_slot *slots;		/* nr_events * nr_units */
	int *group_fds;			/* nr_groups * nr_units, -1 = none */

	/* Sums of earlier attaches, per event: a re-attached session
	 * continues from them. */
	struct perfctr_count *carried;
	bool *has_carried;

	uint64_t *read_buf;		/* one group read */
	size_t read_buf_words;

	/* Event sets, rotation, notifications (set.c); NULL when unused. */
	struct pc_sets *sets;
};

static inline struct pc_slot *pc_slot(const struct perfctr_session *s,
				      size_t event, size_t unit)
{
	return &s->slots[event * s->nr_units + unit];
}

static inline int *pc_group_fd(const struct perfctr_session *s,
			       size_t group, size_t unit)
{
	return &s->group_fds[group * s->nr_units + unit];
}

/* Read one group on one unit into its slots.  0 or -errno (the slots then
 * keep their previous values). */
int pc_session_read_group(struct perfctr_session *s, size_t group,
			  size_t unit);

/* True when @err from perf_event_open means "this machine cannot count
 * this event" rather than a failure of the whole session. */
bool pc_open_err_is_unsupported(int err);

#endif /* PERFCTR_SESSION_INTERNAL_H */
