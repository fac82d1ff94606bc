/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — derived metrics: CPUs utilised, rates per second, IPC and
 * CPI, miss ratios, computed from counts the caller has read.
 *
 * A metric is computed only from events that counted over the same time:
 * both members of one kernel group (they were on the PMU together), or
 * both on a counter for all of the time they were enabled.  An event that
 * was multiplexed against its partner gives no metric rather than a
 * misleading one.  Events pair by name and by modifier suffix:
 * "instructions:u" pairs with "cycles:u", never with "cycles:k".
 *
 * Pure: no system calls, no allocation.  Thread safety: every call here is
 * thread-safe and async-signal-safe.
 */
#ifndef PERFCTR_METRIC_H
#define PERFCTR_METRIC_H

#include <stdbool.h>
#include <stddef.h>

#include <perfctr/common.h>
#include <perfctr/count.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One counted event, as the caller read it. */
struct perfctr_metric_input {
	const char *name;		/* canonical event name ("cycles:u") */
	struct perfctr_count count;	/* as read, or a mean over runs */
	size_t group;			/* equal for members of one group */
};

_Static_assert(sizeof(struct perfctr_metric_input) == 48,
	       "ABI: perfctr_metric_input");

/* Identifiers of struct perfctr_metric.id; stable (JSON and CSV use them). */
enum perfctr_metric_id {
	PERFCTR_METRIC_CPUS_UTILIZED,	/* task-clock / wall time */
	PERFCTR_METRIC_RATE,		/* events per second of task-clock */
	PERFCTR_METRIC_GHZ,		/* cycles per nanosecond of task-clock */
	PERFCTR_METRIC_IPC,		/* instructions per cycle */
	PERFCTR_METRIC_CPI,		/* cycles per instruction */
	PERFCTR_METRIC_MISS_RATIO,	/* misses per access, in percent */
	PERFCTR_METRIC_STALL_RATIO,	/* stalled cycles per cycle, in percent */
	PERFCTR_METRIC__COUNT,
};

struct perfctr_metric {
	enum perfctr_metric_id id;
	const char *name;	/* "ipc", "cpi", "branch-miss-ratio", ... */
	const char *unit;	/* "insn per cycle", "% of all branches", "/sec" */
	double value;		/* in @unit */
	size_t event;		/* input the metric belongs to (shown beside it) */
	size_t other;		/* the second input used, or (size_t)-1 when the
				 * other operand is the wall time */
};

/**
 * perfctr_metric__together() - whether @a and @b counted over the same
 * time: both were counted (status OK, some running time) and either they
 * share a group or both ran for all of the time they were enabled.
 */
PERFCTR_API bool perfctr_metric__together(const struct perfctr_metric_input *a,
					  const struct perfctr_metric_input *b);

/**
 * perfctr_metric__compute() - every metric the inputs allow.
 * @in:      the events, in display order.
 * @nr_in:   how many.
 * @wall_ns: wall-clock time of the measurement (for CPUs utilised), or 0
 *           when unknown.
 * @out:     filled with up to @max_out metrics, ordered by event.
 * @max_out: capacity of @out (0 to ask for the number only).
 *
 * Return: the number of metrics available (which may exceed @max_out: only
 * the first @max_out are written), or -EINVAL when @in is NULL with a
 * non-zero @nr_in or @out is NULL with a non-zero @max_out.
 */
PERFCTR_API int perfctr_metric__compute(const struct perfctr_metric_input *in,
					size_t nr_in, double wall_ns,
					struct perfctr_metric *out,
					size_t max_out);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_METRIC_H */
