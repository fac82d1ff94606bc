/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — sessions: the monitoring object of perfmon2, realised on
 * perf_event_open(2).
 *
 * Life cycle:  new → add events → attach (target) → start / stop / read …
 *              → detach (final values kept) → [attach elsewhere] → delete.
 *
 * Events are kept in groups exactly as the specification wrote them; each
 * group is read with one read() per unit of the target (PERF_FORMAT_GROUP
 * with ids and the enabled/running times), and started or stopped with one
 * ioctl on its leader.  An event the machine cannot count is kept in the
 * session as "not supported" (with the errno of the failed open) instead of
 * failing the whole session, unless PERFCTR_SESSION_STRICT is set; when a
 * group's leader is the one that cannot count, the next member that can
 * leads the rest of the group in its place.
 *
 * A target that exits keeps its final counts readable: the counters stay
 * open until detach.
 *
 * Thread safety: a session is not synchronised; use it from one thread at a
 * time.  perfctr_session__read() may be called from a signal handler only
 * if that handler cannot interrupt another call on the same session.
 */
#ifndef PERFCTR_SESSION_H
#define PERFCTR_SESSION_H

#include <stdbool.h>
#include <sys/types.h>

#include <perfctr/common.h>
#include <perfctr/count.h>
#include <perfctr/event.h>
#include <perfctr/target.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_session;

enum perfctr_session_flags {
	/* Fail attach when any event cannot be opened. */
	PERFCTR_SESSION_STRICT = 1u << 0,
	/* Count children and threads created after attach (default for
	 * command targets; process targets always inherit). */
	PERFCTR_SESSION_INHERIT = 1u << 1,
	/* Leave counting on from attach, instead of waiting for start (for a
	 * command target: from its exec). */
	PERFCTR_SESSION_ENABLE_ON_ATTACH = 1u << 2,
	/* Never ask the access broker (perfctrd(8)) to open an event the
	 * kernel refuses this user; PERFCTR_NO_BROKER=1 in the environment
	 * does the same for every open of the process. */
	PERFCTR_SESSION_NO_BROKER = 1u << 3,
};

struct perfctr_session_opts {
	size_t sz;
	unsigned int flags;	/* enum perfctr_session_flags */
	/* Roots passed to the event layer for specifications added by text. */
	const struct perfctr_parse_opts *parse_opts;
	size_t :0;
};

/** perfctr_session__new() - an empty, detached session.
 * @opts: flags and parse roots, NULL for none.
 * Return: NULL + errno (EINVAL for bad opts, ENOMEM). */
PERFCTR_API struct perfctr_session *
perfctr_session__new(const struct perfctr_session_opts *opts);

/** perfctr_session__delete() - detach if needed, close everything, free.
 * NULL is a no-op.  The target is the caller's and is not touched. */
PERFCTR_API void perfctr_session__delete(struct perfctr_session *session);

/**
 * perfctr_session__add_events() - parse @spec and add its events.
 * @err: filled on a parse failure when non-NULL (its sz set by the caller).
 * Only while detached (EBUSY otherwise).  Return: events added, or -errno
 * with @err filled.
 */
PERFCTR_API int perfctr_session__add_events(struct perfctr_session *session,
					    const char *spec,
					    struct perfctr_parse_error *err);

/** perfctr_session__add_evlist() - add copies of every event of @list, with
 * its groups.  Only while detached.  Return: events added, or -EBUSY,
 * -EINVAL, -ENOMEM (the session unchanged). */
PERFCTR_API int perfctr_session__add_evlist(struct perfctr_session *session,
					    const struct perfctr_evlist *list);

/**
 * perfctr_session__attach() - open the session's counters on @target.
 * The session keeps a reference to @target until detach; the caller keeps
 * ownership and must not delete it before.  Counting starts with
 * perfctr_session__start(), or at once with
 * PERFCTR_SESSION_ENABLE_ON_ATTACH.  A command target that has not been
 * started always counts from its exec (enable_on_exec), flag or not.
 * Process and command targets inherit to new threads and children; a
 * thread of a process target that ends before it is opened counts 0.
 *
 * "Unsupported" is ENOENT, EOPNOTSUPP, ENODEV, EINVAL, ENOSPC, E2BIG,
 * ENXIO or ENOSYS from perf_event_open: such events read as
 * PERFCTR_COUNT_NOT_SUPPORTED.  A tracepoint filter the kernel refuses
 * fails the attach.
 *
 * Return: 0; -EBUSY when already attached; -EINVAL without events; the
 * open's -errno when an event fails for a reason that is not "unsupported"
 * (EACCES, EPERM, ESRCH, EMFILE ...); with PERFCTR_SESSION_STRICT any
 * failure.  On failure nothing stays open and the session is as it was.
 */
PERFCTR_API int perfctr_session__attach(struct perfctr_session *session,
					struct perfctr_target *target);

/**
 * perfctr_session__attach_error() - why the last attach failed.
 * @session: the session.
 * @err:     filled; its sz set by the caller.
 *
 * For a message that names the event (perfctr_session__event_name() of
 * @err->event) and, when the access broker refused the open, its reason.
 * Thread-safety: as the session's other calls.
 * Return: 0; -EINVAL for a NULL argument or an @err->sz too small.
 */
PERFCTR_API int perfctr_session__attach_error(const struct perfctr_session *session,
					      struct perfctr_attach_error *err);

/**
 * perfctr_errno_unsupported() - whether @errnum, an errno of
 * perf_event_open(2) or of the parse of an event, means that this machine
 * cannot count the event here (ENOENT, EOPNOTSUPP, ENODEV, EINVAL, ENOSPC,
 * E2BIG, ENXIO, ENOSYS) rather than a refusal or a failure of the whole
 * open: the errnos for which a session keeps an event as
 * PERFCTR_COUNT_NOT_SUPPORTED.  Pure, async-signal-safe.
 * Return: true or false.
 */
PERFCTR_API bool perfctr_errno_unsupported(int errnum);

/**
 * perfctr_session__detach() - read the final values, close the counters.
 * The values stay readable (the units too); the session can be attached
 * again, and its sums then continue from these values, while the per-unit
 * counts start again with the new target's units.
 * Return: 0, -ENOTCONN when not attached, or the final read's -errno (the
 * counters are closed all the same).
 */
PERFCTR_API int perfctr_session__detach(struct perfctr_session *session);

/**
 * perfctr_session__start() / __stop() - one ioctl per group leader and unit.
 * Only the leader is toggled: members are opened enabled and cannot count
 * while their leader is off (a group ioctl would skip disabled members of
 * another PMU).  start on a command target not started yet does nothing:
 * it counts from its exec.
 * Return: 0, -ENOTCONN when detached, or the first ioctl's -errno (the
 * other leaders are still toggled).
 */
PERFCTR_API int perfctr_session__start(struct perfctr_session *session);
PERFCTR_API int perfctr_session__stop(struct perfctr_session *session);

/** perfctr_session__reset() - zero every counter: the kernel's values (one
 * group ioctl per leader), the kept per-unit values and the sums carried
 * from earlier attaches.  The kernel does not reset enabled/running times.
 * Works detached too.  Return: 0 or the first ioctl's -errno. */
PERFCTR_API int perfctr_session__reset(struct perfctr_session *session);

/**
 * perfctr_session__read() - fetch fresh values from the kernel, one read()
 * per group and unit; for the calling thread's own hardware counters, from
 * their mmap'd pages in user space when every page of the group allows it
 * (same values).  While detached it is a no-op returning 0.
 * A unit whose thread has exited keeps its last values.
 * Return: 0 or the first failed read's -errno (the others are still read;
 * a CPU gone offline, ENODEV, is not an error).
 */
PERFCTR_API int perfctr_session__read(struct perfctr_session *session);

/** perfctr_session__nr_events() - events in the session (all sets); 0 for
 * a NULL session. */
PERFCTR_API size_t perfctr_session__nr_events(const struct perfctr_session *session);

/** perfctr_session__event_name() - the canonical name of event @idx, or
 * NULL out of range. */
PERFCTR_API const char *perfctr_session__event_name(const struct perfctr_session *session,
						    size_t idx);

/** perfctr_session__event_leader() - index of @idx's group leader as
 * specified (the first event of its group), or (size_t)-1 out of range. */
PERFCTR_API size_t perfctr_session__event_leader(const struct perfctr_session *session,
						 size_t idx);

/** perfctr_session__event_attr() - the attr as opened on the first unit
 * after an attach (read_format, inherit, disabled, enable_on_exec set by
 * the session), as added before; NULL out of range. */
PERFCTR_API const struct perf_event_attr *
perfctr_session__event_attr(const struct perfctr_session *session, size_t idx);

/** perfctr_session__event_unit() / __event_scale() - from the PMU's sysfs:
 * "" and 1.0 when it has none; NULL and 0.0 out of range. */
PERFCTR_API const char *perfctr_session__event_unit(const struct perfctr_session *session,
						    size_t idx);
PERFCTR_API double perfctr_session__event_scale(const struct perfctr_session *session,
						size_t idx);

/** perfctr_session__nr_units() - units of the attached (or last) target;
 * 0 before the first attach. */
PERFCTR_API size_t perfctr_session__nr_units(const struct perfctr_session *session);

/** perfctr_session__unit() - tid and cpu of unit @idx (-1 for "any"); either
 * pointer may be NULL.  Return: 0, or -EINVAL out of range. */
PERFCTR_API int perfctr_session__unit(const struct perfctr_session *session,
				      size_t idx, pid_t *tid, int *cpu);

/**
 * perfctr_session__count() - event @idx summed over every unit (and the
 * sums carried from earlier attaches), as of the last read; statuses
 * combine as perfctr_count__add() says.  Before any attach the count is
 * 0 and NOT_COUNTED.  Return: 0, or -EINVAL when @idx is out of range.
 */
PERFCTR_API int perfctr_session__count(const struct perfctr_session *session,
				       size_t idx, struct perfctr_count *count);

/** perfctr_session__unit_count() - event @idx on unit @unit alone, for
 * this attach only.  Return: 0, or -EINVAL out of range. */
PERFCTR_API int perfctr_session__unit_count(const struct perfctr_session *session,
					    size_t idx, size_t unit,
					    struct perfctr_count *count);

/**
 * perfctr_session__set_filter() - a tracepoint filter ("common_pid == 42")
 * for event @idx, applied at attach to each of its counters; NULL removes
 * it.  Return: 0, -EBUSY while attached, -EINVAL out of range, -ENOMEM.
 */
PERFCTR_API int perfctr_session__set_filter(struct perfctr_session *session,
					    size_t idx, const char *filter);

/**
 * perfctr_session__counts_by_bpf() - true when the last attach counts
 * through the BPF counters of its cgroup target (perfctr_cgroup_opts);
 * false when it counts with the kernel's own counters, also for a target
 * that asked for BPF when that could not be used (no program, event sets,
 * a PMU of only some CPUs): the library's log says why, at info level.
 */
PERFCTR_API bool
perfctr_session__counts_by_bpf(const struct perfctr_session *session);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_SESSION_H */
