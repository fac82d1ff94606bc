/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — event sets and honest estimates.
 *
 * An event that is counted only part of the time (because its set shares
 * the counters with other sets, or because the kernel multiplexed it) is
 * reported as an estimate of what it would have counted all the time,
 * together with an error derived from how its rate varied from one slice of
 * counting to the next.  The method and its assumptions are in
 * docs/estimates.md.
 *
 * Sets (perfmon2's event sets) live in a session: set 0 always exists;
 * more are created, and deleted, only while the session is detached;
 * they are numbered 0-65535, not necessarily contiguously, and rotate
 * round-robin in increasing order.  Each group of events belongs to one
 * set.  A set switches to the next on a timeout (per-thread targets: the
 * run time of the target's first thread on every CPU, measured by a
 * task-clock counter, also when the target is on a CPU list; CPU
 * targets: wall time, by a cpu-clock counter) and/or after
 * n overflows of a counter flagged for switching.  With no switch policy
 * on any set, every set counts all the time and the kernel multiplexes
 * them as it must (reported by time_enabled / time_running as usual).
 *
 * Rotation, switch counters, notifications and sampling controls are
 * driven by overflow signals (core/overflow: O_ASYNC, F_SETSIG and
 * F_SETOWN_EX on the counters) handled in a signal handler the library
 * installs for the session's signal (SIGIO unless
 * perfctr_session__set_signal() says otherwise).  For a self-monitoring
 * session the signal goes to the monitored thread itself, so a switch
 * happens before it runs on: counts are exact.  For another thread,
 * process or CPUs it goes to the thread that attached (or the one named),
 * and a switch lags the overflow by the signal's delivery.
 *
 * Events beyond 64: a session holds any number of events, and every call
 * here takes any event index.  The uint64_t masks (perfctr_set_info's
 * last_ovfl_mask, perfctr_msg's ovfl_mask, perfctr_sampling's reset_mask,
 * perfctr_session__notify_record()'s mask) are the compact form for the
 * first 64 events, kept because most sessions have fewer and they fit
 * fixed-size records; each has a counterpart that names events by index
 * without a limit, as PAPI does (an array of event indices, like
 * PAPI_get_overflow_event_index()), rather than perfmon2's fixed-width
 * bit vectors whose width would become ABI: perfctr_msg.event,
 * perfctr_session__set_last_overflows(), perfctr_session__notify_reset(),
 * perfctr_session__notify_record_events().
 *
 * Thread safety and signals: the estimate helpers are pure; the
 * accumulator is updated without allocation or locks and is
 * async-signal-safe (one writer at a time).  The session calls are not
 * synchronised, like the rest of the session.
 */
#ifndef PERFCTR_SET_H
#define PERFCTR_SET_H

#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>
#include <perfctr/event.h>
#include <perfctr/notify.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Per-event accumulator of counting slices: one slice is one stretch of
 * time during which the event was on a counter (one run of its set), with
 * the count it made and the time it ran.  Zero-initialise it.
 *
 * The rates count / time of the slices are summarised with a weighted
 * running mean and sum of squares (weights: the slice durations), which
 * stays exact in floating point however many slices there are.
 */
struct perfctr_slices {
	uint64_t nr_slices;	/* slices with time > 0 */
	uint64_t count;		/* sum of counts (exact) */
	uint64_t time;		/* sum of durations in ns (exact) */
	double weight_sq;	/* sum of squared durations (ns^2) */
	double rate_mean;	/* time-weighted mean rate, events per ns */
	double rate_m2;		/* time-weighted sum of squared deviations */
};

_Static_assert(sizeof(struct perfctr_slices) == 48, "ABI: perfctr_slices");

/**
 * perfctr_slices__add() - account one slice of @count events in @time ns.
 * A slice of zero duration carries no rate: its count is added, the rate
 * statistics are left alone.  Async-signal-safe.
 */
PERFCTR_API void perfctr_slices__add(struct perfctr_slices *slices,
				     uint64_t count, uint64_t time);

/** perfctr_slices__merge() - @into += @from (e.g. over the units of a target). */
PERFCTR_API void perfctr_slices__merge(struct perfctr_slices *into,
				       const struct perfctr_slices *from);

enum perfctr_estimate_status {
	/* Counted the whole time: value is exact, error 0. */
	PERFCTR_ESTIMATE_EXACT = 0,
	/* Extrapolated from part of the time, with an error. */
	PERFCTR_ESTIMATE_SCALED,
	/* Extrapolated from a single slice: no spread to derive an error
	 * from, error is NaN. */
	PERFCTR_ESTIMATE_NO_ERROR,
	/* Never counted: no estimate at all (value and error NaN). */
	PERFCTR_ESTIMATE_NOT_COUNTED,
};

struct perfctr_estimate {
	size_t sz;
	int status;		/* enum perfctr_estimate_status */
	double value;		/* estimated count over the whole time */
	double error;		/* one standard error of @value */
	double fraction;	/* time counted / whole time, in [0, 1] */
	uint64_t counted;	/* raw count (exact, never scaled) */
	uint64_t time_counted;	/* ns on a counter */
	uint64_t time_total;	/* ns the estimate extrapolates to */
	uint64_t nr_slices;
};

/**
 * perfctr_slices__estimate() - the estimate over @time_total ns.
 * @time_total: the whole time (for a set: the session's enabled time); a
 *              value below the counted time is taken as the counted time.
 * @out: filled; its sz is set by the caller (older, smaller structs are
 *       filled as far as they go).
 *
 * value = counted * time_total / time_counted, the usual scaling; error
 * = time_total * SE(rate) * sqrt(1 - fraction), where SE(rate) is the
 * standard error of the time-weighted mean rate of the slices.  Counting
 * all the time gives the exact count with error 0.
 *
 * Return: 0, or -EINVAL for a NULL or too small @out.
 */
PERFCTR_API int perfctr_slices__estimate(const struct perfctr_slices *slices,
					 uint64_t time_total,
					 struct perfctr_estimate *out);

/**
 * perfctr_slices__shared_rel_var() - the part of the slices' relative
 * rate variance (variance / mean^2) that counting noise does not explain
 * (a Poisson count of c per slice alone gives 1/c): the variation of the
 * workload's own speed, which every set rotating over the same time
 * shares.  0 when there is no such excess or fewer than 2 slices.
 */
PERFCTR_API double perfctr_slices__shared_rel_var(const struct perfctr_slices *slices);

/**
 * perfctr_slices__estimate_shared() - perfctr_slices__estimate() with the
 * rate variance raised to at least @shared_rel_var * mean^2: for sets that
 * rotate, a slowdown seen only by another set's slices is time this set
 * extrapolates into (docs/estimates.md).  Pass the largest
 * perfctr_slices__shared_rel_var() of the rotation.
 */
PERFCTR_API int perfctr_slices__estimate_shared(const struct perfctr_slices *slices,
						uint64_t time_total,
						double shared_rel_var,
						struct perfctr_estimate *out);

struct perfctr_session;

enum perfctr_set_flags {
	/* Switch after timeout_ns (run time per thread, wall time per CPU). */
	PERFCTR_SET_SWITCH_TIMEOUT = 1u << 0,
	/* Switch after the overflows set by perfctr_session__switch_after(). */
	PERFCTR_SET_SWITCH_OVERFLOW = 1u << 1,
};

struct perfctr_set_desc {
	size_t sz;
	uint16_t id;
	unsigned int flags;	/* enum perfctr_set_flags */
	uint64_t timeout_ns;	/* with PERFCTR_SET_SWITCH_TIMEOUT */
	size_t :0;
};

/**
 * perfctr_session__create_set() - create set @desc->id, or change the
 * flags and timeout of an existing one (its events stay).  Only while
 * detached.  Return: 0; -EBUSY attached; -EINVAL bad flags or a timeout
 * flag with timeout_ns 0; -ENOMEM.
 */
PERFCTR_API int perfctr_session__create_set(struct perfctr_session *session,
					    const struct perfctr_set_desc *desc);

/**
 * perfctr_session__delete_set() - delete set @id, which must hold no
 * events.  Only while detached.  Return: 0; -EBUSY attached; -EINVAL for
 * set 0; -ENOENT no such set; -ENOTEMPTY it has events.
 */
PERFCTR_API int perfctr_session__delete_set(struct perfctr_session *session,
					    uint16_t id);

/**
 * perfctr_session__add_events_to_set() - perfctr_session__add_events()
 * into set @id (which must exist).  Events added by
 * perfctr_session__add_events() go to set 0.
 * Return: events added, or -errno (-ENOENT no such set).
 */
PERFCTR_API int perfctr_session__add_events_to_set(struct perfctr_session *session,
						   uint16_t id, const char *spec,
						   struct perfctr_parse_error *err);

/** perfctr_session__event_set() - the set of event @idx, or -EINVAL. */
PERFCTR_API int perfctr_session__event_set(const struct perfctr_session *session,
					   size_t idx);

/** perfctr_session__nr_sets() - how many sets (at least 1). */
PERFCTR_API size_t perfctr_session__nr_sets(const struct perfctr_session *session);

/** perfctr_session__set_id() - the id of the @i-th set in increasing order,
 * or -EINVAL. */
PERFCTR_API int perfctr_session__set_id(const struct perfctr_session *session,
					size_t i);

/**
 * perfctr_session__switch_after() - make event @idx an overflow counter
 * with @period that switches its set away after @n overflows in one run
 * (the counter keeps sampling and notifying too).  Its set gets
 * PERFCTR_SET_SWITCH_OVERFLOW.  Only while detached.
 * Return: 0, -EBUSY attached, -EINVAL (@idx out of range, @period or @n
 * is 0).
 */
PERFCTR_API int perfctr_session__switch_after(struct perfctr_session *session,
					      size_t idx, uint64_t period,
					      uint64_t n);

/**
 * perfctr_session__set_signal() - the signal that carries overflows (0:
 * SIGIO) and the thread that receives it (0: the target thread for a
 * self-monitoring session, else the thread that attaches).  Only while
 * detached.  Return: 0, -EBUSY, -EINVAL (SIGKILL, SIGSTOP, out of range).
 */
PERFCTR_API int perfctr_session__set_signal(struct perfctr_session *session,
					    int signo, pid_t tid);

/**
 * perfctr_session__switch() - end the active set's run and start the next
 * set's, now.  Return: 0; -ENOTCONN not started or not rotating (no set
 * has a switch policy); -EBUSY a switch was in progress.
 */
PERFCTR_API int perfctr_session__switch(struct perfctr_session *session);

/** perfctr_session__active_set() - id of the set that counts now (or
 * counted last), or -ENOTCONN when the session is not rotating. */
PERFCTR_API int perfctr_session__active_set(const struct perfctr_session *session);

/* Per-set accounting, perfmon2's pfarg_setinfo. */
struct perfctr_set_info {
	size_t sz;
	uint16_t id;
	unsigned int flags;	/* enum perfctr_set_flags */
	uint64_t timeout_ns;
	uint64_t runs;		/* times the set became active */
	uint64_t active_ns;	/* time active: target run time (per thread),
				 * wall time (per CPU); longest unit per run */
	uint64_t last_ovfl_mask;/* events (bit i: event i < 64) that
				 * overflowed in the set's last run; any
				 * index: set_last_overflows() */
	uint64_t overflows;	/* overflows of its counters, all runs */
	uint64_t nr_events;	/* events (counters) the set holds */
	uint64_t nr_groups;
	uint64_t missed_switches;/* session-wide: switches dropped (busy) */
};

/**
 * perfctr_session__set_info() - accounting of set @id, across attaches.
 * Without rotation runs is 1 per start and active_ns the enabled time.
 * Return: 0, -ENOENT no such set, -EINVAL bad @info.
 */
PERFCTR_API int perfctr_session__set_info(const struct perfctr_session *session,
					  uint16_t id, struct perfctr_set_info *info);

/**
 * perfctr_session__set_last_overflows() - the events of set @id that
 * overflowed in its last run (last_ovfl_mask for any event index), in
 * increasing order; up to @n of them are stored in @events.
 * Return: how many there are (may exceed @n), -ENOENT no such set,
 * -EINVAL (@events NULL with @n > 0).
 */
PERFCTR_API int perfctr_session__set_last_overflows(const struct perfctr_session *session,
						    uint16_t id, size_t *events,
						    size_t n);

/**
 * perfctr_session__estimate() - event @idx as an estimate with its error
 * (docs/estimates.md), as of the last read, stop or detach.  With rotation
 * the slices are the set's runs and the whole time that of all sets; with
 * kernel multiplexing (one slice, no spread) status is NO_ERROR; counted
 * all the time it is EXACT.  Return: 0 or -EINVAL.
 */
PERFCTR_API int perfctr_session__estimate(const struct perfctr_session *session,
					  size_t idx, struct perfctr_estimate *est);

/**
 * perfctr_session__notify() - make event @idx an overflow counter with
 * @period whose every overflow queues a PERFCTR_MSG_OVFL message (with
 * pid, tid, cpu and ip of the overflow, taken from a one-page sample ring
 * of the counter) in the session's queue.  @ctl: sampling controls, NULL
 * for none.  Only while detached.
 * Return: 0, -EBUSY, -EINVAL (@idx out of range, @period 0).
 */
PERFCTR_API int perfctr_session__notify(struct perfctr_session *session,
					size_t idx, uint64_t period,
					const struct perfctr_sampling *ctl);

/**
 * perfctr_session__notify_record() - record, with each overflow message
 * of notifying event @idx, the values of the events in @mask (bit i:
 * session event i < 64, perfmon2's reg_smpl_pmds; any index:
 * perfctr_session__notify_record_events()).  Every event in @mask must
 * be in @idx's group (so in its set); @idx itself may be in it.  The
 * kernel reads the group at the overflow (PERF_SAMPLE_READ), so the
 * values are exact, taken at the overflowing event: the raw counts on the
 * unit that overflowed since attach.  @mask 0 records nothing.  Call
 * after perfctr_session__notify(), while detached.
 * Return: 0, -EBUSY attached, -EINVAL (@idx not notifying, an event of
 * @mask missing or outside the group).
 */
PERFCTR_API int perfctr_session__notify_record(struct perfctr_session *session,
					       size_t idx, uint64_t mask);

/**
 * perfctr_session__notify_record_events() - perfctr_session__notify_record()
 * by event index, without the mask's limit of 64: record the values of
 * @events[0..@nr) (session indices, each in @idx's group; @nr 0 records
 * nothing), returned by perfctr_session__msg_values() in this order.
 * Return: 0, -EBUSY attached, -EINVAL (as for the mask), -ENOMEM.
 */
PERFCTR_API int perfctr_session__notify_record_events(struct perfctr_session *session,
						      size_t idx,
						      const size_t *events,
						      size_t nr);

/**
 * perfctr_session__notify_reset() - the counters that notifying event @idx
 * zeroes (restarting their periods) at each of its overflows, by index:
 * replaces the reset_mask of the sampling controls given to
 * perfctr_session__notify(), which must have had controls.  @nr 0: none.
 * Only while detached.
 * Return: 0, -EBUSY attached, -EINVAL (@idx not notifying with controls,
 * an event out of range or @idx itself), -ENOMEM.
 */
PERFCTR_API int perfctr_session__notify_reset(struct perfctr_session *session,
					      size_t idx, const size_t *events,
					      size_t nr);

/**
 * perfctr_session__msg_values() - the values recorded with @msg (read
 * from the session's queue): value k is that of the k-th event recorded
 * (the k-th lowest of a record mask, the k-th of a list).  Fills up to @n values.  The
 * values of the last 1024 messages are kept (the queue's default
 * capacity); a message read later has lost them.
 * Return: the number of recorded values (may exceed @n); -ENOENT the
 * message has none (no record mask, not an overflow message, or from
 * another session); -ESTALE they were overwritten by later messages.
 */
PERFCTR_API int perfctr_session__msg_values(const struct perfctr_session *session,
					    const struct perfctr_msg *msg,
					    uint64_t *values, size_t n);

/**
 * perfctr_session__notify_queue() - the session's notification queue,
 * created with @opts at the first call (later calls return it and ignore
 * @opts; NULL + EBUSY when attached without one).  Owned by the session.
 */
PERFCTR_API struct perfctr_notify *
perfctr_session__notify_queue(struct perfctr_session *session,
			      const struct perfctr_notify_opts *opts);

/**
 * perfctr_session__restart() - after a notification in blocking mode: let
 * the stopped target go on.  Return: processes continued, or -errno.
 */
PERFCTR_API int perfctr_session__restart(struct perfctr_session *session);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_SET_H */
