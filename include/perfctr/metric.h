/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — derived metrics computed from counts the caller has read:
 * the generic ones (CPUs utilised, GHz, IPC and CPI, miss and stall
 * ratios: the built-in table, src/lib/metric/generic.json) beside each
 * event, rates per second, and the metrics of the CPU model's tables and
 * the user's files (perfctr_metrics, perfctr_metric_plan below).  Every
 * metric is an expression of perf's metric language, evaluated by one
 * evaluator.
 *
 * A metric is computed only from events that counted over the same time:
 * both members of one kernel group (they were on the PMU together), or
 * both on a counter for all of the time they were enabled.  An event that
 * was multiplexed against its partner gives no metric rather than a
 * misleading one.  Events pair by name and by modifier suffix:
 * "instructions:u" pairs with "cycles:u", never with "cycles:k".
 *
 * perfctr_metric__together() and perfctr_metric__compute() make no system
 * call.  The built-in table is compiled in (no JSON is read); each of its
 * expressions is parsed once per process, by the first
 * perfctr_metric__compute() given an event it belongs to, and kept (so
 * later calls allocate nothing for the events seen before).  Both are
 * thread-safe; neither is async-signal-safe.
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


/*
 * Metric tables: the metrics and events of the CPU model's pmu-events
 * tables (the kernel tree's tools/perf/pmu-events/arch, imported at build
 * time and installed as data under share/perfctr/pmu-events), the built-in
 * table of generic metrics, and metric files of the user's own, all in the
 * pmu-events JSON form.  The model's table is chosen as perf's mapfile.csv
 * says: on x86 by "vendor-family-model[-stepping]" against its regular
 * expressions, on arm64 by MIDR (variant and revision ignored).
 *
 * A metric named in several places is taken from the last one: the user's
 * files, then the model's table, then the generic table.
 *
 * Thread safety: a table object is used by one thread at a time; distinct
 * objects are independent.
 */
struct perfctr_metrics;

enum perfctr_metrics_flags {
	PERFCTR_METRICS_NO_ENV = 1 << 0,	/* ignore PERFCTR_METRICS_PATH and
						 * PERFCTR_CPUID */
	PERFCTR_METRICS_NO_MODEL = 1 << 1,	/* no CPU model table */
};

struct perfctr_metrics_opts {
	size_t sz;
	/* pmu-events tree (with <arch>/mapfile.csv); NULL: the first tree in
	 * PERFCTR_METRICS_PATH, else the installed one. */
	const char *data_dir;
	/* Prefix of /proc and /sys (a fixture tree), NULL for the host's. */
	const char *root;
	/* Select as if the CPU were this one ("AuthenticAMD-26-2-0" or an
	 * arm64 MIDR "0x00000000410fd0c0"); NULL: $PERFCTR_CPUID when set and
	 * not empty (unless PERFCTR_METRICS_NO_ENV), else the CPU's own. */
	const char *cpuid;
	/* Metric files of the user's own, added after the tables. */
	const char *const *files;
	size_t nr_files;
	unsigned int flags;	/* enum perfctr_metrics_flags */
};

#define PERFCTR_METRICS_OPTS_SIZE_V1 56
_Static_assert(sizeof(struct perfctr_metrics_opts) == PERFCTR_METRICS_OPTS_SIZE_V1,
	       "ABI: perfctr_metrics_opts");

/* One metric's definition, as its table gives it. */
struct perfctr_metric_def {
	const char *name;	/* MetricName */
	const char *expr;	/* MetricExpr */
	const char *groups;	/* MetricGroup, ';'-separated, "" when none */
	const char *desc;	/* BriefDescription, "" when none */
	const char *unit;	/* ScaleUnit without its factor ("%", "GHz") */
	double scale;		/* ScaleUnit's factor, 1 when none */
	const char *threshold;	/* MetricThreshold, NULL when none */
	const char *constraint;	/* MetricConstraint, NULL when none */
	const char *source;	/* "generic", the model ("x86/amdzen5") or the
				 * file it came from */
};

/* Where a parse or plan error is: which metric, which byte of its
 * expression (-1: none), and what. */
struct perfctr_metric_error {
	char metric[96];
	int pos;
	char msg[192];
};

/**
 * perfctr_metrics__new() - load the tables for this CPU (or opts->cpuid).
 * @opts: may be NULL.
 *
 * Only the selected model's files are parsed.  A missing data directory or
 * a CPU without a table is not an error: the object then has the generic
 * and the user's metrics, and perfctr_metrics__missing() says why there is
 * no model table.
 *
 * Return: the object, or NULL with errno: EINVAL (bad opts), ENOENT (a
 * user file that does not exist), EBADMSG (a file that is not pmu-events
 * JSON; a warning names it and the place), ENOTSUP (built without a JSON
 * library), ENOMEM.
 */
PERFCTR_API struct perfctr_metrics *
perfctr_metrics__new(const struct perfctr_metrics_opts *opts);

/** perfctr_metrics__delete() - free @m (NULL is ignored). */
PERFCTR_API void perfctr_metrics__delete(struct perfctr_metrics *m);

/** perfctr_metrics__cpuid() - the identity the table was selected by. */
PERFCTR_API const char *perfctr_metrics__cpuid(const struct perfctr_metrics *m);

/** perfctr_metrics__model() - the model's table ("x86/amdzen5"), or NULL. */
PERFCTR_API const char *perfctr_metrics__model(const struct perfctr_metrics *m);

/**
 * perfctr_metrics__missing() - why there is no model table (a sentence
 * naming the data directory or the CPU), or NULL when there is one.
 */
PERFCTR_API const char *perfctr_metrics__missing(const struct perfctr_metrics *m);

/** perfctr_metrics__nr() - how many metrics there are. */
PERFCTR_API size_t perfctr_metrics__nr(const struct perfctr_metrics *m);

/**
 * perfctr_metrics__def() - the definition of metric @i (0 <= @i < nr).
 * The strings stay valid as long as @m.
 * Return: 0, or -EINVAL (NULL argument, @i out of range).
 */
PERFCTR_API int perfctr_metrics__def(const struct perfctr_metrics *m, size_t i,
				     struct perfctr_metric_def *def);

/**
 * perfctr_metrics__find() - the index of the metric named @name (case
 * insensitive), or -ENOENT.
 */
PERFCTR_API int perfctr_metrics__find(const struct perfctr_metrics *m,
				      const char *name);

/**
 * perfctr_metrics__in_group() - whether metric @i (0 <= @i < nr) is in
 * metric group @group (one of its MetricGroup names, case insensitive).
 * Unlike perfctr_metrics__def(), this parses nothing: finding a group's
 * metrics costs no more than scanning their names.
 * Return: 1 or 0, or -EINVAL (NULL argument, @i out of range).
 */
PERFCTR_API int perfctr_metrics__in_group(const struct perfctr_metrics *m,
					  size_t i, const char *group);

/**
 * perfctr_metrics__check() - parse metric @i's expression (and its
 * threshold) and resolve every name in it: a metric, duration_time, or an
 * event of the tables or this machine's generic events.
 * @err: filled on failure (may be NULL).
 * Return: 0, -EINVAL (does not parse), -ENOENT (a name that resolves to
 * nothing; @err names it and its position).
 */
PERFCTR_API int perfctr_metrics__check(struct perfctr_metrics *m, size_t i,
				       struct perfctr_metric_error *err);


/*
 * Metric plans: the metrics a user asked for ("-M NAME|GROUP[,...]"), the
 * events they need scheduled into groups, and their values computed from
 * the counts read.
 *
 * Each metric's events are counted in one group, so that they are
 * measured over the same time.  Events are shared between metrics as perf
 * stat shares them: the metrics with the most events are scheduled first,
 * and a metric whose events an earlier metric's groups already hold all
 * of is computed from those groups, not given its own (a metric that
 * shares only some of its events with another has groups of its own, so
 * that its events stay together: the shared ones are then counted in
 * both).  A metric whose MetricConstraint is one of the NO_GROUP_EVENTS
 * kinds has its events left ungrouped, in one list with the other
 * ungrouped metrics' where each event is counted once (they are then
 * used only when each was counted all of the time).  Events of different
 * PMUs never share a group.  Metrics that other metrics refer to are
 * computed from the same counts, not scheduled again.
 *
 * Thread safety: a plan is used by one thread at a time, and with its
 * table object (which it uses and must outlive it).
 */
struct perfctr_metric_plan;

/**
 * perfctr_metric_plan__new() - plan the metrics and metric groups named
 * in @list (comma-separated, case-insensitive; a name that is both is the
 * metric).
 * @m:    the tables.
 * @list: "ipc,PipelineL1".
 * @err:  on failure, which metric (or name) and what (may be NULL).
 *
 * Return: the plan, or NULL with errno: EINVAL (bad argument, or an
 * expression that does not parse), ENOENT (a name that is no metric nor
 * group), ELOOP (metrics that refer to each other in a circle), ENOMEM.
 * A metric naming an event this machine's tables do not know is planned
 * all the same, without that event: perfctr_metric_plan__missing() says so.
 */
PERFCTR_API struct perfctr_metric_plan *
perfctr_metric_plan__new(struct perfctr_metrics *m, const char *list,
			 struct perfctr_metric_error *err);

enum perfctr_metric_plan_flags {
	/* Every metric its own groups (or list): events shared between
	 * metrics are counted once for each (perf's --metric-no-merge). */
	PERFCTR_METRIC_PLAN_NO_MERGE = 1u << 0,
	/* Every metric's events ungrouped, as if each had the
	 * NO_GROUP_EVENTS constraint (perf's --metric-no-group). */
	PERFCTR_METRIC_PLAN_NO_GROUP = 1u << 1,
};

struct perfctr_metric_plan_opts {
	size_t sz;
	unsigned int flags;	/* enum perfctr_metric_plan_flags */
};

#define PERFCTR_METRIC_PLAN_OPTS_SIZE_V1 16
_Static_assert(sizeof(struct perfctr_metric_plan_opts) ==
	       PERFCTR_METRIC_PLAN_OPTS_SIZE_V1, "ABI: perfctr_metric_plan_opts");

/**
 * perfctr_metric_plan__new_opts() - perfctr_metric_plan__new() with
 * options (@opts may be NULL: the defaults, as perfctr_metric_plan__new()).
 *
 * Return: as perfctr_metric_plan__new(); EINVAL also for invalid @opts
 * (unknown flags, unknown non-zero bytes of a larger struct).
 */
PERFCTR_API struct perfctr_metric_plan *
perfctr_metric_plan__new_opts(struct perfctr_metrics *m, const char *list,
			      const struct perfctr_metric_plan_opts *opts,
			      struct perfctr_metric_error *err);

/** perfctr_metric_plan__delete() - free @plan (NULL is ignored). */
PERFCTR_API void perfctr_metric_plan__delete(struct perfctr_metric_plan *plan);

/** perfctr_metric_plan__nr_metrics() - metrics planned, in the order asked. */
PERFCTR_API size_t
perfctr_metric_plan__nr_metrics(const struct perfctr_metric_plan *plan);

/** perfctr_metric_plan__def() - definition of planned metric @i.
 * Return: 0 or -EINVAL. */
PERFCTR_API int perfctr_metric_plan__def(const struct perfctr_metric_plan *plan,
					 size_t i, struct perfctr_metric_def *def);

/**
 * perfctr_metric_plan__missing() - why metric @i cannot be computed on
 * this machine before anything is counted ("event 'x' is not in the tables
 * of x86/amdzen5"), or NULL.
 */
PERFCTR_API const char *
perfctr_metric_plan__missing(const struct perfctr_metric_plan *plan, size_t i);

/**
 * perfctr_metric_plan__event() - the name of the first event metric @i
 * uses (the row a metric is shown beside), or NULL when it uses none.
 */
PERFCTR_API const char *
perfctr_metric_plan__event(const struct perfctr_metric_plan *plan, size_t i);

/** perfctr_metric_plan__nr_groups() - event groups to count. */
PERFCTR_API size_t
perfctr_metric_plan__nr_groups(const struct perfctr_metric_plan *plan);

/**
 * perfctr_metric_plan__group() - group @g as an event list in perfctr's
 * event syntax ("{cycles,instructions}", or "a,b" for ungrouped events),
 * for perfctr_session__add_events(); NULL out of range.  The events are
 * named as the metric tables name them (name=...), which is how
 * perfctr_metric_plan__compute() finds their counts.
 */
PERFCTR_API const char *
perfctr_metric_plan__group(const struct perfctr_metric_plan *plan, size_t g);

/* How a metric's value came out. */
enum perfctr_metric_status {
	PERFCTR_METRIC_OK,		/* @value is the metric */
	PERFCTR_METRIC_NO_EVENT,	/* an event is unknown here (see
					 * perfctr_metric_plan__missing()) */
	PERFCTR_METRIC_NOT_COUNTED,	/* an event was not counted (not
					 * supported, never scheduled) */
	PERFCTR_METRIC_NOT_TOGETHER,	/* its events were not counted over
					 * the same time */
	PERFCTR_METRIC_UNDEFINED,	/* a division by zero: no value */
};

struct perfctr_metric_value {
	size_t metric;			/* index in the plan */
	enum perfctr_metric_status status;
	double value;			/* scaled by ScaleUnit, in def.unit */
	int threshold;			/* 1: out of its healthy range
					 * (MetricThreshold holds), 0: within,
					 * -1: no threshold or no value */
	bool multiplexed;		/* from counts that ran part of the time
					 * (scaled; the ratio is exact) */
	const char *event;		/* the event behind a NO_EVENT or
					 * NOT_COUNTED status, or NULL */
};

/**
 * perfctr_metric_plan__compute() - the value of every planned metric.
 * @in:      counts, named as perfctr_metric_plan__group() names the events
 *           (other events may be among them); @in[i].group equal for the
 *           members of one group.
 * @nr_in:   how many.
 * @wall_ns: wall-clock time of the measurement (duration_time).
 * @out:     one value per planned metric, in plan order.
 * @max_out: capacity of @out.
 *
 * Return: the number of planned metrics (only the first @max_out are
 * written), or -EINVAL.
 */
PERFCTR_API int
perfctr_metric_plan__compute(struct perfctr_metric_plan *plan,
			     const struct perfctr_metric_input *in,
			     size_t nr_in, double wall_ns,
			     struct perfctr_metric_value *out, size_t max_out);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_METRIC_H */
