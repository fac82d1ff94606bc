/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The counters as a policy over them sees them (internal).
 *
 * Set rotation (rotate.c), overflow switching and period control
 * (set-switch.c) and notifications (the notifier, notify.c) work on
 * counters someone else opened and owns: groups of events on positions
 * ("units": one thread or one CPU of the target).  They see them through
 * this view and nothing else: toggle a group on a unit, read a group on a
 * unit, the fd and kernel id of one event on one unit (to watch its
 * overflows, map its ring, change its period).  A policy never calls into
 * the owner beyond these operations, and the owner calls into the
 * policies, not the other way round.  The counter engine's view is
 * pc_counters__of_engine() (counters.c); a test may make its own over
 * plain fds.
 *
 * Events and groups are numbered by the owner (the engine's, which are the
 * session's event and group indices); members of a group are in group
 * order, the leader first.
 *
 * Async-signal-safety: toggle, read, fd and id are called from overflow
 * signal handlers (a set switch, a period change): an owner implements
 * them with ioctl(2) and read(2) on fds it does not change while a policy
 * is attached, and without locks or allocation.
 */
#ifndef PERFCTR_CORE_COUNTERS_H
#define PERFCTR_CORE_COUNTERS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Members of a group a view reads at most (on a signal handler's stack). */
#define PC_COUNTERS_MAX_MEMBERS 128

/* One group read on one unit, by member position. */
struct pc_group_values {
	uint64_t time_enabled;
	uint64_t time_running;
	size_t nr_members;	/* entries in value and present */
	uint64_t *value;	/* caller's array of nr_members */
	bool *present;		/* caller's: the member is open on the unit */
};

struct pc_counters_ops {
	/* Enable (@on) or disable group @group's leader on @unit (flags 0:
	 * members follow their leader).  0 when the group is not open on
	 * the unit.  Return: 0 or -errno.  Async-signal-safe. */
	int (*toggle)(void *ctx, size_t group, size_t unit, bool on);
	/* Read group @group on @unit into @out (its nr_members, value and
	 * present set by the caller).  Return: 0, -ENOENT when the group is
	 * not open on the unit, or -errno.  Async-signal-safe. */
	int (*read)(void *ctx, size_t group, size_t unit,
		    struct pc_group_values *out);
	/* The fd of event @event on @unit, -1 when it is not open there. */
	int (*fd)(void *ctx, size_t event, size_t unit);
	/* Its PERF_EVENT_IOC_ID (what a PERF_SAMPLE_READ names it by). */
	uint64_t (*id)(void *ctx, size_t event, size_t unit);
};

struct pc_counters {
	const struct pc_counters_ops *ops;
	void *ctx;
	size_t nr_events;
	size_t nr_groups;
	size_t nr_units;
	/* Per unit: the thread it counts (-1 for a CPU, and for a cgroup on
	 * a CPU) and the CPU (-1 for any CPU).  A unit without a thread has
	 * no thread to stop or run time to time: it runs on wall time. */
	const pid_t *unit_tid;
	const int *unit_cpu;
	/* Per event: its group, and the attr it was opened with (sample
	 * layout, read format: what its ring's records are decoded by). */
	const size_t *event_group;
	const struct perf_event_attr *const *event_attr;
	/* Per group: its members, the leader first. */
	const size_t *const *group_members;
	const size_t *group_nr_members;
	void *owned;		/* what the maker allocated for the above */
};

struct pc_engine;

/*
 * pc_counters__of_engine() - the view of engine @e's counters (its
 * events, groups and units as they are now; toggles and reads on its
 * fds).  Made after the engine's open: the view keeps what a toggle and
 * a read need (each group's leader fd, read format and members open on
 * each unit, in the kernel's order), so that they ask the engine nothing.
 * An engine is opened once; the engine must outlive the view and keep
 * its fds open while a policy uses it.  @open_flags: the target's perf_event_open flags
 * (pc_target_open_flags()): with PERF_FLAG_PID_CGROUP a unit's tid is a
 * cgroup's fd, not a thread, and the view says -1.
 * Return: 0, -EINVAL, -ENOMEM (@c then empty).
 */
int pc_counters__of_engine(struct pc_counters *c, struct pc_engine *e,
			   unsigned long open_flags);

/* pc_counters__release() - free what the view's maker allocated; @c
 * becomes empty.  Not while a policy may use it. */
void pc_counters__release(struct pc_counters *c);

static inline int pc_counters_toggle(const struct pc_counters *c, size_t group,
				     size_t unit, bool on)
{
	return c->ops->toggle(c->ctx, group, unit, on);
}

static inline int pc_counters_read(const struct pc_counters *c, size_t group,
				   size_t unit, struct pc_group_values *out)
{
	return c->ops->read(c->ctx, group, unit, out);
}

static inline int pc_counters_fd(const struct pc_counters *c, size_t event,
				 size_t unit)
{
	return c->ops->fd(c->ctx, event, unit);
}

static inline uint64_t pc_counters_id(const struct pc_counters *c, size_t event,
				      size_t unit)
{
	return c->ops->id(c->ctx, event, unit);
}

#endif /* PERFCTR_CORE_COUNTERS_H */
