/* SPDX-License-Identifier: LGPL-2.1 */
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
 * Thread safety and signals: the estimate helpers are pure; the
 * accumulator is updated without allocation or locks and is
 * async-signal-safe (one writer at a time).
 */
#ifndef PERFCTR_SET_H
#define PERFCTR_SET_H

#include <stdint.h>

#include <perfctr/common.h>

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

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_SET_H */
