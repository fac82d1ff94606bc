// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Estimates of partly counted events, with an error from the spread of the
 * per-slice rates.  The method, its assumptions and its limits are in
 * docs/estimates.md; this file is its implementation.
 */
#include <math.h>
#include <stddef.h>

#include "common/internal.h"
#include "core/estimate.h"
#include "perfctr/set.h"

/*
 * Weighted running mean and sum of squares (West 1979): each slice's rate
 * count/time enters with weight time.  The naive sums (sum c^2/t minus
 * (sum c)^2 / sum t) cancel catastrophically for the steady, high rates
 * that are the common case; this form does not.  No libm call here: the
 * update runs in signal handlers.
 */
void perfctr_slices__add(struct perfctr_slices *slices, uint64_t count,
			 uint64_t time)
{
	double weight, rate, delta;

	slices->count += count;
	if (!time)
		return;
	slices->nr_slices++;
	slices->time += time;
	weight = (double)time;
	rate = (double)count / weight;
	slices->weight_sq += weight * weight;
	delta = rate - slices->rate_mean;
	slices->rate_mean += delta * weight / (double)slices->time;
	slices->rate_m2 += weight * delta * (rate - slices->rate_mean);
}

/* The pairwise combination of two summaries (Chan et al.). */
void perfctr_slices__merge(struct perfctr_slices *into,
			   const struct perfctr_slices *from)
{
	double wa = (double)into->time, wb = (double)from->time, delta;

	into->count += from->count;
	if (!from->time)
		return;
	if (!into->time) {
		uint64_t count = into->count;

		*into = *from;
		into->count = count;
		return;
	}
	delta = from->rate_mean - into->rate_mean;
	into->rate_mean += delta * wb / (wa + wb);
	into->rate_m2 += from->rate_m2 + delta * delta * wa * wb / (wa + wb);
	into->weight_sq += from->weight_sq;
	into->nr_slices += from->nr_slices;
	into->time += from->time;
}

/* Unbiased variance of the rates with reliability weights, or -1. */
static double rate_variance(const struct perfctr_slices *slices)
{
	double weight = (double)slices->time, variance;

	if (slices->nr_slices < 2 || weight * weight <= slices->weight_sq)
		return -1.0;
	variance = slices->rate_m2 / (weight - slices->weight_sq / weight);
	return variance < 0.0 ? 0.0 : variance;
}

double perfctr_slices__shared_rel_var(const struct perfctr_slices *slices)
{
	double variance = rate_variance(slices), per_slice, excess;

	if (variance < 0.0 || slices->rate_mean <= 0.0 || !slices->count)
		return 0.0;
	per_slice = (double)slices->count / (double)slices->nr_slices;
	excess = variance / (slices->rate_mean * slices->rate_mean) - 1.0 / per_slice;
	return excess > 0.0 ? excess : 0.0;
}

int perfctr_slices__estimate(const struct perfctr_slices *slices,
			     uint64_t time_total, struct perfctr_estimate *out)
{
	return perfctr_slices__estimate_shared(slices, time_total, 0.0, out);
}

int perfctr_slices__estimate_shared(const struct perfctr_slices *slices,
				    uint64_t time_total, double shared_rel_var,
				    struct perfctr_estimate *out)
{
	struct perfctr_estimate est = { .sz = sizeof(est) };
	double weight, eff_slices, variance, fraction, se_rate;
	size_t size;

	if (!out || out->sz < offsetof(struct perfctr_estimate, error))
		return pc_err(EINVAL);

	est.counted = slices->count;
	est.time_counted = slices->time;
	est.nr_slices = slices->nr_slices;
	if (time_total < slices->time)
		time_total = slices->time;
	est.time_total = time_total;

	if (!slices->time) {
		est.status = PERFCTR_ESTIMATE_NOT_COUNTED;
		est.value = NAN;
		est.error = NAN;
		est.fraction = 0.0;
	} else if (slices->time == time_total) {
		est.status = PERFCTR_ESTIMATE_EXACT;
		est.value = (double)slices->count;
		est.error = 0.0;
		est.fraction = 1.0;
	} else {
		fraction = (double)slices->time / (double)time_total;
		est.fraction = fraction;
		/* The ratio estimator: the same as scaling by enabled/running. */
		est.value = (double)slices->count / fraction;
		weight = (double)slices->time;
		variance = rate_variance(slices);
		if (variance < 0.0) {
			est.status = PERFCTR_ESTIMATE_NO_ERROR;
			est.error = NAN;
		} else {
			double shared = shared_rel_var * slices->rate_mean *
					slices->rate_mean;

			if (shared > variance)
				variance = shared;
			/* The effective number of slices for unequal
			 * durations. */
			eff_slices = weight * weight / slices->weight_sq;
			se_rate = sqrt(variance / eff_slices);
			/* Finite population correction: the counted part of
			 * the time is known exactly, only the rest is
			 * extrapolated. */
			est.status = PERFCTR_ESTIMATE_SCALED;
			est.error = (double)time_total * se_rate *
				    sqrt(1.0 - fraction);
		}
	}

	size = out->sz < sizeof(est) ? out->sz : sizeof(est);
	est.sz = out->sz;
	memcpy(out, &est, size);
	return 0;
}

int pc_estimate_rotated(const struct perfctr_slices *slices, size_t nr,
			size_t idx, uint64_t total_ns,
			struct perfctr_estimate *out)
{
	double shared = 0.0;

	if (idx >= nr || !slices)
		return pc_err(EINVAL);
	for (size_t e = 0; e < nr; e++) {
		double v = perfctr_slices__shared_rel_var(&slices[e]);

		if (v > shared)
			shared = v;
	}
	return perfctr_slices__estimate_shared(&slices[idx], total_ns, shared, out);
}

int pc_estimate_multiplexed(uint64_t value, uint64_t running, uint64_t enabled,
			    struct perfctr_estimate *out)
{
	struct perfctr_slices one = { 0 };

	perfctr_slices__add(&one, value, running);
	return perfctr_slices__estimate(&one, enabled, out);
}
