/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex counting mode — what cmd-stat.c (targets, the run loop),
 * stat-options.c, stat-session.c and stat-print.c (human, CSV and JSON
 * output) share.
 */
#ifndef PERFEX_STAT_H
#define PERFEX_STAT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <perfctr/perfctr.h>
#include <perfctr/set.h>

#include "options.h"

/* Version of the JSON document of `perfex -j` (docs/json.md). */
#define STAT_JSON_SCHEMA_VERSION 1

enum stat_aggr {
	STAT_AGGR_GLOBAL,	/* one value per event */
	STAT_AGGR_CPU,		/* -A: one per CPU */
	STAT_AGGR_THREAD,	/* --per-thread: one per thread */
	/* --per-socket, --per-die, --per-core: one per group of CPUs, the
	 * sum of its CPUs' counts */
	STAT_AGGR_SOCKET,
	STAT_AGGR_DIE,
	STAT_AGGR_CORE,
};

/* The library's estimate over the enabled time (perfctr_count__scaled());
 * a count that never ran keeps its raw value (a placeholder's 0). */
static inline double stat_scaled(const struct perfctr_count *c)
{
	return c->time_running ? perfctr_count__scaled(c) : (double)c->value;
}

/* Whether @aggr sums CPUs into groups (--per-socket/-die/-core). */
static inline bool stat_aggr_groups(enum stat_aggr aggr)
{
	return aggr >= STAT_AGGR_SOCKET;
}

enum stat_format {
	STAT_FORMAT_HUMAN,
	STAT_FORMAT_CSV,
	STAT_FORMAT_JSON,
	STAT_FORMAT_PERF_JSON,	/* -j --json-format perf: perf stat -j's lines */
};

struct stat_config {
	enum stat_format format;
	enum stat_aggr aggr;
	const char *sep;	/* -x */
	unsigned int interval_ms; /* -I, 0 = none */
	unsigned int repeat;	/* -r, >= 1 */
	FILE *out;
	/* What is counted, for the header line and the JSON target. */
	char *const *command;	/* argv of the command, or NULL */
	pid_t pid, tid;		/* -p / -t, or 0 */
	const char *cpus;	/* -C list, "" for -a, NULL for neither */
	const char *cgroup;	/* -G, with cpus; or NULL */
	/* --for-each-cgroup, with cpus: every event counted once per
	 * cgroup, the rows cgroup after cgroup; or NULL / 0. */
	char **cgroups;
	size_t nr_cgroups;
	/* -G with events in different cgroups (perf's rule): cgroups are
	 * the parts, NULL for the events without one; each event counts in
	 * its own cgroup's part only. */
	bool cgroup_per_event;
	bool bpf_counters;	/* --bpf-counters, with cgroup */
	/* Event sets: each -e one set, taking turns. */
	bool sets;
	unsigned int switch_interval_ms;	/* --switch-interval, or 0 */
	unsigned long switch_after_n;		/* --switch-after N:EVENT */
	const char *switch_after_event;		/* or NULL */
	/* --per-process (--per-thread with a command): the process tree,
	 * cut to the tree_limit largest rows or to tree_percent of the
	 * whole (0: all). */
	bool tree;
	bool tree_threads;
	unsigned long tree_limit;
	double tree_percent;
};

/* Running statistics over the runs of -r (Welford's method). */
struct stat_stats {
	unsigned int n;
	double mean, m2, min, max;
};

void stat_stats_add(struct stat_stats *s, double x);
double stat_stats_stddev(const struct stat_stats *s);

/* One event row of the output. */
struct stat_event {
	char *name;
	size_t session_idx;	/* index in the run's session, or NO_IDX */
	size_t group;		/* row of its group leader */
	bool is_clock;		/* task-clock / cpu-clock: ns, shown in msec */
	char unit[32];		/* from the PMU's sysfs, or "" */
	double scale;		/* from the PMU's sysfs, 1.0 when none */
	int unsupported_errnum;	/* placeholder rows: the parse's errno */
	struct stat_stats stats; /* of the scaled value, over the runs */
	double *run_values;	/* each run's scaled value (-r, for JSON) */
	/* Sums over the counted runs, for the mean count that -r reports and
	 * computes its metrics from. */
	double raw_sum, enabled_sum, running_sum;
	int set;		/* its event set, -1 without sets */
	/* --for-each-cgroup: the cgroup it counts (its index in
	 * cfg->cgroups, whose session it is in); 0 / NULL otherwise. */
	size_t part;
	const char *cgroup;
	struct perfctr_estimate est; /* with sets: of the last run */
};

/* One event set (each -e with --switch-*), as of the last run. */
struct stat_set {
	int id;
	uint64_t runs;		/* times it became active */
	uint64_t active_ns;	/* time active */
	uint64_t overflows;	/* of its counters */
};

#define STAT_NO_IDX ((size_t)-1)

/* One unit of -A / --per-thread / --per-socket|die|core output. */
struct stat_unit {
	pid_t tid;		/* -1 for a CPU unit or a group */
	int cpu;		/* -1 for a thread unit or a group */
	char comm[32];
	/* A group of CPUs: its ids (those of the aggregation; the others
	 * -1) and its CPUs, ascending. */
	int socket, die, core;
	int *cpus;
	size_t nr_cpus;
};

/*
 * One block of counts to print: the final totals, or one interval.
 * counts[e] aggregated; unit_counts[u * nr_events + e] when per-unit.
 */
struct stat_view {
	const struct perfctr_count *counts;
	const struct perfctr_count *unit_counts;
	double duration_ns;	/* time this block covers (CPUs utilised) */
	double timestamp;	/* seconds since the start, for intervals */
};

struct stat_metrics;

struct stat_report {
	const struct stat_config *cfg;
	struct stat_event *events;
	size_t nr_events;
	struct stat_unit *units;
	size_t nr_units;
	struct stat_set *sets;	/* with --switch-*, else NULL */
	size_t nr_sets;
	/* Final results (of the last run; with -r the stats are in events). */
	struct stat_stats elapsed_ns;
	double user_ns, sys_ns;
	bool have_rusage;
	bool have_status;
	int wait_status;
	int exit_code;
	unsigned int runs_done;
	struct stat_metrics *metrics;	/* -M, --topdown; NULL without */
	/* While a whole-target row without a built-in ratio prints: its first
	 * -M metric goes on its line (per-unit rows have no -M metrics). */
	bool metrics_beside;
	struct perfctr_tree *tree;	/* --per-process, or NULL */
};

/* stat-print.c */
void stat_print_begin(struct stat_report *r);
void stat_print_interval(struct stat_report *r, const struct stat_view *v);
void stat_print_final(struct stat_report *r, const struct stat_view *v);

/* stat-tree.c: the process tree of --per-process, after the totals. */
void stat_print_tree(const struct stat_report *r);
void stat_json_tree(const struct stat_report *r);

/* stat-sets.c: event sets on the session (each -e one set, taking turns
 * by --switch-interval / --switch-after) and their accounting. */
struct perfctr_parse_error;
int stat_sets_add(struct perfctr_session *s, const struct stat_config *cfg,
		  uint16_t set, const char *spec, struct perfctr_parse_error *err);
int stat_sets_switch_after(struct perfctr_session *s,
			   const struct stat_config *cfg);
int stat_sets_collect(struct perfctr_session *s, struct stat_report *r);

/* stat-metrics.c: the metrics of -M NAME|GROUP, --topdown, --metrics-file. */
struct stat_metric_opts {
	const char *list;		/* -M, or NULL */
	bool topdown;
	unsigned int td_level;		/* 1 unless --td-level */
	bool only;			/* --metric-only */
	bool no_merge;			/* --metric-no-merge */
	bool no_group;			/* --metric-no-group */
	const char *const *files;	/* --metrics-file */
	size_t nr_files;
};

/* The tables (with the user's files): the build tree's when perfex runs
 * from it, else PERFCTR_METRICS_PATH's or the installed ones.  NULL after
 * the error is reported. */
struct perfctr_metrics *stat_metrics_tables(const char *const *files,
					    size_t nr_files);
/* Return -1 with *@out set, or perfex's exit status (reported). */
int stat_metrics_open(struct stat_metrics **out, const struct stat_metric_opts *mo);
void stat_metrics_free(struct stat_metrics *sm);
size_t stat_metrics_nr_groups(const struct stat_metrics *sm);
const char *stat_metrics_group(const struct stat_metrics *sm, size_t g);
bool stat_metrics_only(const struct stat_metrics *sm);
/* One run's counts: the values for -r's mean and spread. */
void stat_metrics_run(struct stat_report *r, const struct perfctr_count *counts,
		      double wall_ns);
/* The values of the view about to be printed. */
void stat_metrics_compute_view(struct stat_report *r,
			       const struct perfctr_count *counts, double wall_ns);
/* Index of the first metric shown beside row @row, or (size_t)-1.  As in
 * perf's layout, a row without a built-in ratio of its own shows it on its
 * own line, and the others follow on lines below. */
size_t stat_metrics_first(const struct stat_report *r, size_t row);
/* Metric @i in the human layout ("   3.00 name" with its marks); @spread
 * adds its spread over the runs. */
void stat_metrics_human(const struct stat_report *r, size_t i,
			bool with_stats, bool spread);
/* The metric lines shown beside row @row ((size_t)-1: those beside no
 * row), human or CSV; @first_shown: the row's first one is already on the
 * row's line. */
void stat_metrics_rows(const struct stat_report *r, size_t row,
		       const char *prefix, bool csv, bool with_stats,
		       bool first_shown);
void stat_metrics_print_only(const struct stat_report *r, bool csv,
			     bool with_stats);
void stat_metrics_json(const struct stat_report *r, bool with_stats,
		       const char *indent);
/* The metric lines beside row @row as perf stat -j's lines, each opened
 * by @prefix (its interval and unit keys). */
void stat_metrics_perf_json(const struct stat_report *r, size_t row,
			    const char *prefix, bool with_stats);

/*
 * Between the files of perfex stat: cmd-stat.c (the command, the targets
 * and the run), stat-options.c (the options) and stat-session.c (the
 * sessions of a run).
 */
struct spec {
	const char *text;
	const char *filter;	/* --filter after this -e, or NULL */
	bool is_default;
	bool is_metric;		/* a group of -M's events */
	/* -G's cgroup for this event (perf's rule, see cgroup_parts()),
	 * NULL: none; and its part (the session of its cgroup) when the
	 * events have different cgroups (cfg.cgroup_per_event). */
	char *cgroup;
	size_t part;
	/* A piece of a -e whose events -G sent to different cgroups: the
	 * text, which is this spec's own. */
	char *piece;
};

struct stat_options {
	struct stat_config cfg;
	struct spec *specs;
	size_t nr_specs;
	const char *output;
	bool all_cpus;
	bool json_perf;			/* --json-format perf */
	int kill_child;			/* --kill-child's signal, 0 = none */
	struct perfex_parse parse;
	struct stat_metric_opts metrics;
	char *metric_list;		/* the -M lists, joined */
	const char **metric_files;	/* --metrics-file */
	/* -G: those given after events, and whether a -G came before any
	 * -e (one cgroup for every event). */
	struct cgroup_arg *cgroup_args;
	size_t nr_cgroup_args;
	bool cgroup_before_events;
	bool cgroup_given;
	/* The aggregation option given (-A, --per-thread, --per-core, ...)
	 * as spelled, for "exclude each other"; "" before one. */
	char aggr_opt[48];
};

struct run {
	struct stat_options *o;
	struct stat_report *report;
	struct perfctr_session *session;
	struct perfctr_target *watched;	/* what the session is attached to */
	/* --for-each-cgroup: the sessions of cgroups 1.. (cgroup 0's is
	 * session) and their targets. */
	struct perfctr_session **more;
	struct perfctr_target **more_targets;
	size_t nr_more;
	struct perfctr_target *command;	/* the command we run, if any */
	struct perfctr_bpf_counters *bpf;	/* --bpf-counters, or NULL */
	struct perfctr_tree *tree;	/* --per-process: the command's tree */
	struct perfctr_count *counts, *prev, *delta;
	struct perfctr_count *unit_counts, *unit_prev, *unit_delta;
	size_t nr_units;	/* the session's */
	/* --per-socket/-die/-core: the group (report unit) of each of the
	 * session's units. */
	size_t *unit_group;
	double t0, last_tick;
	int wait_status;
	bool have_status;
};

/* stat-options.c.  Return -1 to go on, or the exit status. */
int stat_add_spec(struct stat_options *o, const char *text, bool is_default);
int stat_parse_options(int argc, char **argv, struct stat_options *o);

/* stat-session.c: the default events, and the sessions of one run.
 * Return -1 on success, or perfex's exit status (reported). */
extern const char stat_default_hardware[];
extern const char stat_default_software[];
int stat_build_session(struct stat_options *o, struct stat_report *r,
		       const struct perfctr_parse_opts *popts,
		       struct perfctr_session **out);
int stat_build_more(struct stat_options *o, struct stat_report *r,
		    const struct perfctr_parse_opts *popts, struct run *run);
int stat_build_parts(struct stat_options *o, struct stat_report *r,
		     const struct perfctr_parse_opts *popts, struct run *run,
		     unsigned int nth);
struct perfctr_target *stat_part_target(struct run *run,
					const struct stat_config *cfg,
					size_t p);

/* cmd-stat.c: the message of a failed attach; perfex's exit status. */
int stat_target_error(const struct stat_config *cfg, int err);

#endif /* PERFEX_STAT_H */
