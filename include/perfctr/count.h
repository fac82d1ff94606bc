/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — counts: a raw 64-bit value with the time the event was
 * enabled and the time it actually ran on a counter, kept apart from the
 * scaled estimate so both stay available.
 *
 * Thread safety and signals: the helpers here are pure and
 * async-signal-safe.
 */
#ifndef PERFCTR_COUNT_H
#define PERFCTR_COUNT_H

#include <stdint.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum perfctr_count_status {
	PERFCTR_COUNT_OK = 0,		/* counted (perhaps only part of the time) */
	PERFCTR_COUNT_NOT_COUNTED,	/* opened, but never ran: time_running == 0 */
	PERFCTR_COUNT_NOT_SUPPORTED,	/* the machine cannot count it; see errnum */
};

struct perfctr_count {
	uint64_t value;		/* raw, as the kernel summed it */
	uint64_t time_enabled;	/* ns the event was enabled */
	uint64_t time_running;	/* ns it was on a counter */
	int32_t status;		/* enum perfctr_count_status */
	int32_t errnum;		/* for NOT_SUPPORTED: the open's errno */
};

_Static_assert(sizeof(struct perfctr_count) == 32, "ABI: perfctr_count");

/**
 * perfctr_count__scaled() - the estimate value * enabled / running.
 * Return: the raw value when the event ran all the time, 0.0 when it never
 * ran (check status: that is "not counted", not zero).
 */
PERFCTR_API double perfctr_count__scaled(const struct perfctr_count *count);

/**
 * perfctr_count__fraction() - running / enabled in [0, 1]; 1.0 when the
 * event ran all the time, 0.0 when never.  Return: the fraction.
 */
PERFCTR_API double perfctr_count__fraction(const struct perfctr_count *count);

/**
 * perfctr_count__add() - @sum += @count: values and times add; a status of
 * OK wins over NOT_COUNTED, which wins over NOT_SUPPORTED.  errnum is kept
 * only for a NOT_SUPPORTED sum (the first one seen).
 */
PERFCTR_API void perfctr_count__add(struct perfctr_count *sum,
				    const struct perfctr_count *count);

/**
 * perfctr_count__delta() - @out = @now - @before (for interval reads).
 * Status and errnum are @now's, except that an interval in which the event
 * never ran is NOT_COUNTED.  When any of the three numbers went back (the
 * counters were reset in between), @out is @now.  @out may alias either.
 */
PERFCTR_API void perfctr_count__delta(struct perfctr_count *out,
				      const struct perfctr_count *now,
				      const struct perfctr_count *before);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_COUNT_H */
