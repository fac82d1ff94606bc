// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Counts: the raw value beside the kernel's enabled/running times, and the
 * arithmetic on them.  Pure functions, async-signal-safe.
 */
#include "perfctr/count.h"

double perfctr_count__scaled(const struct perfctr_count *count)
{
	if (!count->time_running)
		return 0.0;
	if (count->time_running >= count->time_enabled)
		return (double)count->value;
	/* In long double so value * enabled keeps its precision past 2^53
	 * before the division brings it back into range. */
	return (double)((long double)count->value *
			(long double)count->time_enabled /
			(long double)count->time_running);
}

double perfctr_count__fraction(const struct perfctr_count *count)
{
	if (!count->time_running || !count->time_enabled)
		return 0.0;
	if (count->time_running >= count->time_enabled)
		return 1.0;
	return (double)count->time_running / (double)count->time_enabled;
}

/* OK (0) beats NOT_COUNTED (1) beats NOT_SUPPORTED (2): the smaller wins. */
static int32_t stronger(int32_t a, int32_t b)
{
	return a < b ? a : b;
}

void perfctr_count__add(struct perfctr_count *sum,
			const struct perfctr_count *count)
{
	int32_t status = stronger(sum->status, count->status);

	sum->value += count->value;
	sum->time_enabled += count->time_enabled;
	sum->time_running += count->time_running;
	if (status == PERFCTR_COUNT_NOT_SUPPORTED)
		sum->errnum = sum->errnum ? sum->errnum : count->errnum;
	else
		sum->errnum = 0;
	sum->status = status;
}

void perfctr_count__delta(struct perfctr_count *out,
			  const struct perfctr_count *now,
			  const struct perfctr_count *before)
{
	struct perfctr_count d = *now;

	/* Between two reads of one attach the three numbers only grow; when
	 * one went back, the counters were reset in between and @now alone
	 * is what happened since. */
	if (now->value < before->value ||
	    now->time_enabled < before->time_enabled ||
	    now->time_running < before->time_running) {
		*out = d;
		return;
	}
	d.value = now->value - before->value;
	d.time_enabled = now->time_enabled - before->time_enabled;
	d.time_running = now->time_running - before->time_running;
	if (d.status == PERFCTR_COUNT_OK && !d.time_running)
		d.status = PERFCTR_COUNT_NOT_COUNTED;
	*out = d;
}
