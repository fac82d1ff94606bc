/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The estimate maths of sets and rotation (internal): pure functions over
 * slices (struct perfctr_slices, perfctr/set.h), implemented in
 * estimate.c with the public perfctr_slices__* helpers, unit-tested in
 * tests/unit/test_estimate.c.  The method is docs/estimates.md.
 *
 * Pure: no system calls, no allocation, no state.
 */
#ifndef PERFCTR_CORE_ESTIMATE_H
#define PERFCTR_CORE_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "perfctr/set.h"

/*
 * pc_estimate_rotated() - the estimate of event @idx of a rotation whose
 * events made the slices @slices[0..@nr) over the whole time @total_ns
 * (all sets' time): the rate spread the workload itself shows, the
 * largest perfctr_slices__shared_rel_var() over every event, is time each
 * set extrapolates into, so it raises every event's error.
 * Return: 0, -EINVAL (@idx >= @nr, bad @out).
 */
int pc_estimate_rotated(const struct perfctr_slices *slices, size_t nr,
			size_t idx, uint64_t total_ns,
			struct perfctr_estimate *out);

/*
 * pc_estimate_multiplexed() - the estimate of a count the kernel made
 * over @running of @enabled ns (multiplexed by the kernel, or counted
 * all the time when they are equal): one slice, so EXACT or NO_ERROR.
 * Return: 0, -EINVAL (bad @out).
 */
int pc_estimate_multiplexed(uint64_t value, uint64_t running, uint64_t enabled,
			    struct perfctr_estimate *out);

/*
 * pc_estimate_whole_time() - the time_enabled a rotated event's count
 * reports: the whole time of the rotation (@whole_ns) when that exceeds
 * its own @enabled, so that scaling by enabled / running is the
 * rotation's estimate and "counted all the time" checks see that it was
 * not.
 */
static inline uint64_t pc_estimate_whole_time(uint64_t enabled, uint64_t whole_ns)
{
	return whole_ns > enabled ? whole_ns : enabled;
}

#endif /* PERFCTR_CORE_ESTIMATE_H */
