// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex counting mode — output: the human table (perf stat's layout), CSV
 * (-x SEP) and one JSON document (-j, docs/json.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "json-out.h"
#include "stat.h"

#define MAX_METRICS 8

void stat_stats_add(struct stat_stats *s, double x)
{
	double delta;

	if (!s->n || x < s->min)
		s->min = x;
	if (!s->n || x > s->max)
		s->max = x;
	s->n++;
	delta = x - s->mean;
	s->mean += delta / s->n;
	s->m2 += delta * (x - s->mean);
}

/* The sample standard deviation (n - 1), 0 for a single run. */
double stat_stats_stddev(const struct stat_stats *s)
{
	if (s->n < 2 || s->m2 <= 0)
		return 0.0;
	return sqrt(s->m2 / (s->n - 1));
}

static double stddev_percent(const struct stat_stats *s)
{
	return s->mean != 0 ? 100.0 * stat_stats_stddev(s) / fabs(s->mean) : 0.0;
}

static bool is_counted(const struct perfctr_count *c)
{
	return c->status == PERFCTR_COUNT_OK && c->time_running > 0;
}

static double fraction(const struct perfctr_count *c)
{
	if (!c->time_enabled || c->time_running >= c->time_enabled)
		return c->time_running ? 1.0 : 0.0;
	return (double)c->time_running / (double)c->time_enabled;
}

/* The estimate over the enabled time, with the PMU's sysfs scale. */
static double scaled_value(const struct stat_event *e,
			   const struct perfctr_count *c)
{
	return stat_scaled(c) * e->scale;
}

static const char *status_name(const struct perfctr_count *c)
{
	if (c->status == PERFCTR_COUNT_NOT_SUPPORTED)
		return "not supported";
	if (!is_counted(c))
		return "not counted";
	return "counted";
}

/*
 * Metrics of one column of counts (the aggregate, or one unit), between
 * the events of @set only (-1: all): events of different sets were never
 * counted together.
 */
static int part_metrics(const struct stat_report *r,
			const struct perfctr_count *counts, double duration_ns,
			int set, size_t part, struct perfctr_metric *out,
			size_t max_out)
{
	struct perfctr_metric_input in[r->nr_events ? r->nr_events : 1];
	size_t i;
	int n;

	for (i = 0; i < r->nr_events; i++) {
		in[i].name = r->events[i].name;
		in[i].count = counts[i];
		in[i].group = r->events[i].group;
		if (set >= 0 && r->events[i].set != set)
			in[i].count.time_running = 0;	/* not a partner */
		if (r->events[i].part != part)
			in[i].count.time_running = 0;	/* another cgroup */
	}
	n = perfctr_metric__compute(in, r->nr_events, duration_ns, out, max_out);
	if (n < 0)
		return 0;
	return (size_t)n > max_out ? (int)max_out : n;
}

/* ... and with --for-each-cgroup, cgroup by cgroup: the counts of one
 * cgroup are no partners of another's. */
static int view_metrics(const struct stat_report *r,
			const struct perfctr_count *counts, double duration_ns,
			int set, struct perfctr_metric *out, size_t max_out)
{
	size_t parts = r->cfg->nr_cgroups ? r->cfg->nr_cgroups : 1;
	int nr = 0;

	for (size_t p = 0; p < parts && (size_t)nr < max_out; p++)
		nr += part_metrics(r, counts, duration_ns, set, p, out + nr,
				   max_out - (size_t)nr);
	return nr;
}

static size_t metrics_of(const struct perfctr_metric *all, int nr, size_t event,
			 const struct perfctr_metric **out)
{
	size_t n = 0;

	for (int i = 0; i < nr && n < MAX_METRICS; i++)
		if (all[i].event == event)
			out[n++] = &all[i];
	return n;
}

static void unit_label(const struct stat_report *r, size_t u, char *buf,
		       size_t size)
{
	const struct stat_unit *unit = &r->units[u];

	if (r->cfg->aggr == STAT_AGGR_CPU)
		snprintf(buf, size, "CPU%d", unit->cpu);
	else if (r->cfg->aggr == STAT_AGGR_SOCKET)
		snprintf(buf, size, "S%d", unit->socket);
	else if (r->cfg->aggr == STAT_AGGR_DIE)
		snprintf(buf, size, "S%d-D%d", unit->socket, unit->die);
	else if (r->cfg->aggr == STAT_AGGR_CORE)
		snprintf(buf, size, "S%d-D%d-C%d", unit->socket, unit->die,
			 unit->core);
	else
		snprintf(buf, size, "%s-%d", unit->comm[0] ? unit->comm : "?",
			 (int)unit->tid);
}

/*
 * The label and CPU count of a group of CPUs, as perf lays them out: in
 * CSV "S0-D0-C1" SEP "2" SEP; in the table the last id left-aligned in 5
 * (socket) or 8 columns, the count in 4.
 */
static void group_prefix(const struct stat_report *r, size_t u,
			 const char *base, const char *csv_sep, char *buf,
			 size_t size)
{
	const struct stat_unit *g = &r->units[u];
	char label[64];

	if (csv_sep) {
		unit_label(r, u, label, sizeof(label));
		snprintf(buf, size, "%s%s%s%zu%s", base, label, csv_sep,
			 g->nr_cpus, csv_sep);
	} else if (r->cfg->aggr == STAT_AGGR_SOCKET) {
		snprintf(buf, size, "%sS%-5d %4zu ", base, g->socket,
			 g->nr_cpus);
	} else if (r->cfg->aggr == STAT_AGGR_DIE) {
		snprintf(buf, size, "%sS%d-D%-8d %4zu ", base, g->socket,
			 g->die, g->nr_cpus);
	} else {
		snprintf(buf, size, "%sS%d-D%d-C%-8d %4zu ", base, g->socket,
			 g->die, g->core, g->nr_cpus);
	}
}

/* ---------------------------------------------------------------- human */

static void format_value(const struct stat_event *e, double v, char *buf,
			 size_t size)
{
	if (e->is_clock)
		snprintf(buf, size, "%.2f", v / 1e6);
	else if (v >= 0 && v < 9.2e18 && v == floor(v))
		snprintf(buf, size, "%" PRIu64, (uint64_t)v);
	else
		snprintf(buf, size, "%.2f", v);
}

static void format_metric(const struct perfctr_metric *m, char *buf,
			  size_t size)
{
	double v = m->value;

	switch (m->id) {
	case PERFCTR_METRIC_RATE:
		if (v >= 1e9)
			snprintf(buf, size, "%8.3f G/sec", v / 1e9);
		else if (v >= 1e6)
			snprintf(buf, size, "%8.3f M/sec", v / 1e6);
		else if (v >= 1e3)
			snprintf(buf, size, "%8.3f K/sec", v / 1e3);
		else
			snprintf(buf, size, "%8.3f /sec", v);
		break;
	case PERFCTR_METRIC_IPC:
	case PERFCTR_METRIC_CPI:
		snprintf(buf, size, "%8.2f  %s", v, m->unit);
		break;
	default:
		if (m->unit[0] == '%')
			snprintf(buf, size, "%8.2f%s", v, m->unit);
		else
			snprintf(buf, size, "%8.3f %s", v, m->unit);
		break;
	}
}

/* Spaces that bring @s to @width columns. */
static int pad(const char *s, int width)
{
	int len = (int)strlen(s);

	return len < width ? width - len : 0;
}

/* An event set's estimate: the share counted and the error. */
static void human_error(FILE *out, const struct stat_event *e, double frac)
{
	const struct perfctr_estimate *est = &e->est;

	if (est->status == PERFCTR_ESTIMATE_SCALED && est->value > 0)
		fprintf(out, "  (%.2f%% counted, +- %.2f%%)", 100.0 * frac,
			100.0 * est->error / est->value);
	else if (est->status == PERFCTR_ESTIMATE_SCALED)
		fprintf(out, "  (%.2f%% counted, +- %.0f)", 100.0 * frac,
			est->error);
	else
		fprintf(out, "  (%.2f%% counted, +- ?)", 100.0 * frac);
}

static void human_row(const struct stat_report *r, const char *prefix,
		      const struct stat_event *e, const struct perfctr_count *c,
		      const struct perfctr_metric **metrics, size_t nr_metrics,
		      bool with_stats)
{
	FILE *out = r->cfg->out;
	char value[48], metric[96];
	const char *unit = e->is_clock ? "msec" : e->unit;
	double frac = fraction(c);
	char name[256];
	size_t i;

	/* With --for-each-cgroup the cgroup follows the event, as perf
	 * prints it. */
	if (e->cgroup && r->cfg->nr_cgroups)
		snprintf(name, sizeof(name), "%s %s", e->name, e->cgroup);
	else
		snprintf(name, sizeof(name), "%s", e->name);
	if (c->status == PERFCTR_COUNT_NOT_SUPPORTED)
		snprintf(value, sizeof(value), "<not supported>");
	else if (!is_counted(c))
		snprintf(value, sizeof(value), "<not counted>");
	else
		format_value(e, with_stats ? e->stats.mean : scaled_value(e, c),
			     value, sizeof(value));
	size_t first = r->metrics_beside && !nr_metrics ?
		stat_metrics_first(r, (size_t)(e - r->events)) : (size_t)-1;

	if (nr_metrics)
		format_metric(metrics[0], metric, sizeof(metric));
	else
		metric[0] = '\0';
	fprintf(out, "%s%18s %-4s %s", prefix, value, unit, name);
	if (metric[0] || first != (size_t)-1 ||
	    (is_counted(c) && (frac < 1.0 || with_stats)))
		fprintf(out, "%*s", pad(name, 32), "");
	if (metric[0])
		fprintf(out, " # %s", metric);
	else if (first != (size_t)-1) {
		/* The row's spread follows, so the metric's is left out. */
		fputs(" # ", out);
		stat_metrics_human(r, first, with_stats, false);
	}
	if (is_counted(c) && frac < 1.0 && e->set >= 0 && !with_stats &&
	    !r->cfg->interval_ms && !prefix[0])
		human_error(out, e, frac);
	else if (is_counted(c) && frac < 1.0)
		fprintf(out, "  (%.2f%%)", 100.0 * frac);
	if (with_stats && is_counted(c))
		fprintf(out, "  ( +- %5.2f%% )", stddev_percent(&e->stats));
	fputc('\n', out);
	for (i = 1; i < nr_metrics; i++) {
		format_metric(metrics[i], metric, sizeof(metric));
		fprintf(out, "%s%18s %-4s %-32s # %s\n", prefix, "", "", "", metric);
	}
}

static void human_target(const struct stat_report *r, FILE *out)
{
	const struct stat_config *cfg = r->cfg;

	if (cfg->pid)
		fprintf(out, "process id '%d'", (int)cfg->pid);
	else if (cfg->tid && cfg->cpus)
		fprintf(out, "thread id '%d' on CPU(s) %s", (int)cfg->tid, cfg->cpus);
	else if (cfg->tid)
		fprintf(out, "thread id '%d'", (int)cfg->tid);
	else if (cfg->cgroup)
		fprintf(out, "cgroup '%s' on %s%s", cfg->cgroup,
			cfg->cpus[0] ? "CPU(s) " : "every CPU", cfg->cpus);
	else if (cfg->nr_cgroups) {
		fprintf(out, "cgroups");
		for (size_t i = 0; i < cfg->nr_cgroups; i++)
			fprintf(out, cfg->cgroups[i] ? "%s'%s'" : "%s%s",
				i ? ", " : " ", cfg->cgroups[i] ?
				cfg->cgroups[i] : "all tasks");
		fprintf(out, " on %s%s", cfg->cpus[0] ? "CPU(s) " : "every CPU",
			cfg->cpus);
	}
	else if (cfg->cpus && cfg->cpus[0])
		fprintf(out, "'CPU(s) %s'", cfg->cpus);
	else if (cfg->cpus)
		fprintf(out, "'system wide'");
	else if (cfg->command) {
		fputc('\'', out);
		for (char *const *a = cfg->command; *a; a++)
			fprintf(out, "%s%s", a == cfg->command ? "" : " ", *a);
		fputc('\'', out);
	}
}

/* ------------------------------------------------------------------ CSV */

static void csv_row(const struct stat_report *r, const char *prefix,
		    const struct stat_event *e, const struct perfctr_count *c,
		    const struct perfctr_metric **metrics, size_t nr_metrics,
		    bool with_stats)
{
	FILE *out = r->cfg->out;
	const char *sep = r->cfg->sep;
	const char *unit = e->is_clock ? "msec" : e->unit;
	double v = with_stats ? e->stats.mean : scaled_value(e, c);

	fputs(prefix, out);
	if (c->status == PERFCTR_COUNT_NOT_SUPPORTED)
		fputs("<not supported>", out);
	else if (!is_counted(c))
		fputs("<not counted>", out);
	else if (e->is_clock)
		fprintf(out, "%.6f", v / 1e6);
	else if (v >= 0 && v < 9.2e18 && v == floor(v))
		fprintf(out, "%" PRIu64, (uint64_t)v);
	else
		fprintf(out, "%.2f", v);
	fprintf(out, "%s%s%s%s", sep, unit, sep, e->name);
	/* --for-each-cgroup: the cgroup is the field after the event, as
	 * in perf's CSV with cgroups. */
	if (r->cfg->nr_cgroups)
		fprintf(out, "%s%s", sep, e->cgroup ? e->cgroup : "");
	if (with_stats)
		fprintf(out, "%s%.2f", sep, stddev_percent(&e->stats));
	fprintf(out, "%s%" PRIu64 "%s%.2f", sep, c->time_running, sep,
		100.0 * fraction(c));
	if (nr_metrics)
		fprintf(out, "%s%.6g%s%s", sep, metrics[0]->value, sep,
			metrics[0]->unit);
	else
		fprintf(out, "%s%s", sep, sep);
	if (with_stats) {
		double sd = stat_stats_stddev(&e->stats);
		double mn = e->stats.min, mx = e->stats.max;

		if (e->is_clock) {
			sd /= 1e6;
			mn /= 1e6;
			mx /= 1e6;
		}
		fprintf(out, "%s%.6g%s%.15g%s%.15g", sep, sd, sep, mn, sep, mx);
	}
	if (e->set >= 0) {
		/* The set, and the estimate's error where one is known (the
		 * whole run, not an interval). */
		fprintf(out, "%s%d%s", sep, e->set, sep);
		if (!r->cfg->interval_ms && !prefix[0] && is_counted(c) &&
		    (e->est.status == PERFCTR_ESTIMATE_SCALED ||
		     e->est.status == PERFCTR_ESTIMATE_EXACT))
			fprintf(out, "%.6g", e->is_clock ? e->est.error / 1e6 :
				e->est.error * e->scale);
	}
	fputc('\n', out);
}

typedef void stat_row_fn(const struct stat_report *r, const char *prefix,
			 const struct stat_event *e,
			 const struct perfctr_count *c,
			 const struct perfctr_metric **metrics,
			 size_t nr_metrics, bool with_stats);

/* The sets to print in turn (set i has id i, cmd-stat.c), or without
 * sets one pseudo-set -1 of every event. */
static size_t nr_passes(const struct stat_report *r)
{
	int max = -1;

	for (size_t e = 0; e < r->nr_events; e++)
		if (r->events[e].set > max)
			max = r->events[e].set;
	return max < 0 ? 1 : (size_t)max + 1;
}

static int pass_set(const struct stat_report *r, size_t i)
{
	return r->cfg->sets ? (int)i : -1;
}

static bool in_set(const struct stat_event *e, int set)
{
	return set < 0 || e->set == set;
}

/*
 * One view as rows of @row_fn (human or CSV): one row per event, or per
 * event of each unit (CPU or thread) when the view is not aggregated; with
 * event sets, set by set (@set_header, if any, introduces each).  A
 * unit's rows begin with its label, then @unit_sep (the CSV separator) or,
 * when @unit_sep is NULL, the label padded to 16 columns and a space.
 */
static void rows_block(struct stat_report *r, const struct stat_view *v,
		       const char *time_prefix, bool with_stats,
		       stat_row_fn *row_fn, const char *unit_sep,
		       void (*set_header)(const struct stat_report *r, size_t i))
{
	struct perfctr_metric all[MAX_METRICS * (r->nr_events + 1)];
	const struct perfctr_metric *mine[MAX_METRICS];
	char prefix[200], set_prefix[112];
	size_t e, u, i;
	int nr;

	for (i = 0; i < nr_passes(r); i++) {
		int set = pass_set(r, i);
		const char *base = time_prefix;

		if (set >= 0 && set_header)
			set_header(r, i);
		/* Human intervals: the set in a column after the time. */
		if (set >= 0 && !set_header && !unit_sep) {
			snprintf(set_prefix, sizeof(set_prefix), "%sset %-3d ",
				 time_prefix, set);
			base = set_prefix;
		}
		if (!v->unit_counts) {
			bool csv = row_fn == csv_row;

			nr = view_metrics(r, v->counts, v->duration_ns, set, all,
					  sizeof(all) / sizeof(all[0]));
			stat_metrics_compute_view(r, v->counts, v->duration_ns);
			for (e = 0; e < r->nr_events; e++) {
				size_t n = metrics_of(all, nr, e, mine);

				if (!in_set(&r->events[e], set))
					continue;
				r->metrics_beside = !csv && !n;
				row_fn(r, base, &r->events[e], &v->counts[e],
				       mine, n, with_stats);
				r->metrics_beside = false;
				stat_metrics_rows(r, e, base, csv, with_stats,
						  !csv && !n);
			}
			stat_metrics_rows(r, (size_t)-1, base, csv, with_stats,
					  false);
			continue;
		}
		for (u = 0; u < r->nr_units; u++) {
			const struct perfctr_count *c =
				&v->unit_counts[u * r->nr_events];
			char label[64];

			unit_label(r, u, label, sizeof(label));
			if (stat_aggr_groups(r->cfg->aggr))
				group_prefix(r, u, base, unit_sep, prefix,
					     sizeof(prefix));
			else if (unit_sep)
				snprintf(prefix, sizeof(prefix), "%s%s%s",
					 base, label, unit_sep);
			else
				snprintf(prefix, sizeof(prefix), "%s%-16s ",
					 base, label);
			nr = view_metrics(r, c, v->duration_ns, set, all,
					  sizeof(all) / sizeof(all[0]));
			for (e = 0; e < r->nr_events; e++) {
				size_t n = metrics_of(all, nr, e, mine);

				if (in_set(&r->events[e], set))
					row_fn(r, prefix, &r->events[e], &c[e],
					       mine, n, false);
			}
		}
	}
}

/* " set 1: 12 runs, active 61.034 msec" */
static void human_set_header(const struct stat_report *r, size_t i)
{
	for (size_t k = 0; k < r->nr_sets; k++) {
		const struct stat_set *st = &r->sets[k];

		if (st->id == (int)i)
			fprintf(r->cfg->out, "%s set %d: %" PRIu64 " runs, "
				"active %.3f msec\n", i ? "\n" : "", st->id,
				st->runs, st->active_ns / 1e6);
	}
}

/* view_metrics() of every set, one after the other. */
static int all_metrics(const struct stat_report *r,
		       const struct perfctr_count *counts, double duration_ns,
		       struct perfctr_metric *out, size_t max_out)
{
	int nr = 0;

	for (size_t i = 0; i < nr_passes(r) && (size_t)nr < max_out; i++)
		nr += view_metrics(r, counts, duration_ns, pass_set(r, i),
				   out + nr, max_out - (size_t)nr);
	return nr;
}

static void human_block(struct stat_report *r, const struct stat_view *v,
			const char *time_prefix, bool with_stats)
{
	rows_block(r, v, time_prefix, with_stats, human_row, NULL,
		   time_prefix[0] ? NULL : human_set_header);
}

static void csv_block(struct stat_report *r, const struct stat_view *v,
		      const char *time_prefix, bool with_stats)
{
	rows_block(r, v, time_prefix, with_stats, csv_row, r->cfg->sep, NULL);
}

/* ----------------------------------------------------------------- JSON */

/* A string; NULL as "" (stat's documents have no null strings). */
static void json_str(FILE *out, const char *s)
{
	jout_str(out, s ? s : "");
}

/* Numbers as numbers; what is not a finite number is null. */
static void json_num(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.15g", v);
	else
		fputs("null", out);
}

static void json_count_fields(FILE *out, const struct stat_event *e,
			      const struct perfctr_count *c,
			      const struct perfctr_metric **metrics,
			      size_t nr_metrics,
			      const struct stat_report *r)
{
	size_t i;

	fprintf(out, "\"status\": ");
	json_str(out, status_name(c));
	if (c->status == PERFCTR_COUNT_NOT_SUPPORTED) {
		const char *name = c->errnum ? strerrorname_np(c->errnum) : NULL;

		fprintf(out, ", \"errno\": ");
		json_str(out, name ? name : "");
		fprintf(out, ", \"error\": ");
		json_str(out, c->errnum ? strerror(c->errnum) : "");
	}
	if (is_counted(c)) {
		fprintf(out, ", \"value\": %" PRIu64 ", \"scaled\": ", c->value);
		json_num(out, scaled_value(e, c));
	} else {
		fprintf(out, ", \"value\": null, \"scaled\": null");
	}
	fprintf(out, ", \"time_enabled\": %" PRIu64 ", \"time_running\": %"
		PRIu64 ", \"percent_counted\": ", c->time_enabled, c->time_running);
	json_num(out, 100.0 * fraction(c));
	fprintf(out, ", \"metrics\": [");
	for (i = 0; i < nr_metrics; i++) {
		const struct perfctr_metric *m = metrics[i];

		fprintf(out, "%s{\"name\": ", i ? ", " : "");
		json_str(out, m->name);
		fprintf(out, ", \"value\": ");
		json_num(out, m->value);
		fprintf(out, ", \"unit\": ");
		json_str(out, m->unit);
		fprintf(out, ", \"other\": ");
		if (m->other == (size_t)-1)
			json_str(out, "wall-time");
		else
			json_str(out, r->events[m->other].name);
		fputc('}', out);
	}
	fputc(']', out);
}

static void json_stats(FILE *out, const struct stat_event *e)
{
	const struct stat_stats *s = &e->stats;

	fprintf(out, ", \"stats\": {\"runs\": %u, \"mean\": ", s->n);
	json_num(out, s->mean);
	fprintf(out, ", \"stddev\": ");
	json_num(out, stat_stats_stddev(s));
	fprintf(out, ", \"min\": ");
	json_num(out, s->min);
	fprintf(out, ", \"max\": ");
	json_num(out, s->max);
	fprintf(out, ", \"values\": [");
	for (unsigned int i = 0; e->run_values && i < s->n; i++) {
		if (i)
			fputs(", ", out);
		json_num(out, e->run_values[i]);
	}
	fprintf(out, "]}");
}

static const char *estimate_status(int status)
{
	switch (status) {
	case PERFCTR_ESTIMATE_EXACT:		return "exact";
	case PERFCTR_ESTIMATE_SCALED:		return "scaled";
	case PERFCTR_ESTIMATE_NO_ERROR:		return "no-error";
	default:				return "not-counted";
	}
}

/* An event set's estimate of a whole run (docs/estimates.md), in the
 * fields of the former sets document. */
static void json_estimate(FILE *out, const struct stat_event *e)
{
	const struct perfctr_estimate *est = &e->est;

	fprintf(out, "\"value\": ");
	json_num(out, est->value);
	fprintf(out, ", \"error\": ");
	json_num(out, est->error);
	fprintf(out, ", \"counted\": %" PRIu64 ", \"time_counted_ns\": %" PRIu64
		", \"time_total_ns\": %" PRIu64 ", \"fraction\": ", est->counted,
		est->time_counted, est->time_total);
	json_num(out, est->fraction);
	fprintf(out, ", \"slices\": %" PRIu64 ", \"status\": \"%s\"",
		est->nr_slices, estimate_status(est->status));
}

/* "sets": each set's accounting and its events' estimates. */
static void json_sets(const struct stat_report *r, FILE *out)
{
	fprintf(out, ",\n  \"sets\": [");
	for (size_t i = 0; i < r->nr_sets; i++) {
		const struct stat_set *st = &r->sets[i];
		bool first = true;

		fprintf(out, "%s\n    {\"id\": %d, \"runs\": %" PRIu64
			", \"active_ns\": %" PRIu64 ", \"overflows\": %" PRIu64
			", \"events\": [", i ? "," : "", st->id, st->runs,
			st->active_ns, st->overflows);
		for (size_t e = 0; e < r->nr_events; e++) {
			const struct stat_event *ev = &r->events[e];

			if (ev->set != st->id)
				continue;
			fprintf(out, "%s\n      {\"name\": ", first ? "" : ",");
			json_str(out, ev->name);
			fprintf(out, ", ");
			json_estimate(out, ev);
			fputc('}', out);
			first = false;
		}
		fprintf(out, "]}");
	}
	fprintf(out, "\n  ]");
}

/* A group of CPUs: its label, ids and CPUs. */
static void json_group(FILE *out, const struct stat_report *r, size_t u)
{
	const struct stat_unit *g = &r->units[u];
	char label[64];

	unit_label(r, u, label, sizeof(label));
	fprintf(out, "\"label\": ");
	json_str(out, label);
	fprintf(out, ", \"socket\": %d, ", g->socket);
	if (g->die >= 0)
		fprintf(out, "\"die\": %d, ", g->die);
	if (g->core >= 0)
		fprintf(out, "\"core\": %d, ", g->core);
	fprintf(out, "\"cpus\": [");
	for (size_t i = 0; i < g->nr_cpus; i++)
		fprintf(out, "%s%d", i ? ", " : "", g->cpus[i]);
	fprintf(out, "], ");
}

static void json_events(struct stat_report *r, const struct stat_view *v,
			bool with_stats, const char *indent)
{
	FILE *out = r->cfg->out;
	struct perfctr_metric all[MAX_METRICS * (r->nr_events + 1)];
	struct perfctr_metric *unit_all = NULL;
	int *unit_nr = NULL;
	const struct perfctr_metric *mine[MAX_METRICS];
	size_t per_unit = MAX_METRICS * (r->nr_events + 1);
	size_t e, u;
	int nr;

	nr = all_metrics(r, v->counts, v->duration_ns, all, per_unit);
	if (v->unit_counts && r->nr_units) {
		unit_all = calloc(r->nr_units * per_unit, sizeof(*unit_all));
		unit_nr = calloc(r->nr_units, sizeof(*unit_nr));
		for (u = 0; unit_all && unit_nr && u < r->nr_units; u++)
			unit_nr[u] = all_metrics(r, &v->unit_counts[u * r->nr_events],
						  v->duration_ns,
						  &unit_all[u * per_unit], per_unit);
	}
	fputc('[', out);
	for (e = 0; e < r->nr_events; e++) {
		const struct stat_event *ev = &r->events[e];
		size_t n = metrics_of(all, nr, e, mine);

		fprintf(out, "%s\n%s  {\"name\": ", e ? "," : "", indent);
		json_str(out, ev->name);
		fprintf(out, ", \"group\": %zu, ", ev->group);
		if (r->cfg->nr_cgroups && ev->cgroup) {
			fprintf(out, "\"cgroup\": ");
			json_str(out, ev->cgroup);
			fprintf(out, ", ");
		}
		if (ev->set >= 0)
			fprintf(out, "\"set\": %d, ", ev->set);
		fprintf(out, "\"unit\": ");
		json_str(out, ev->is_clock ? "ns" : ev->unit);
		fprintf(out, ", ");
		json_count_fields(out, ev, &v->counts[e], mine, n, r);
		if (with_stats)
			json_stats(out, ev);
		if (unit_all && unit_nr) {
			fprintf(out, ", \"units\": [");
			for (u = 0; u < r->nr_units; u++) {
				const struct stat_unit *un = &r->units[u];

				n = metrics_of(&unit_all[u * per_unit], unit_nr[u],
					       e, mine);
				fprintf(out, "%s\n%s    {\"cpu\": %d, \"tid\": %d, \"comm\": ",
					u ? "," : "", indent, un->cpu, (int)un->tid);
				json_str(out, un->comm);
				fprintf(out, ", ");
				if (stat_aggr_groups(r->cfg->aggr))
					json_group(out, r, u);
				json_count_fields(out, ev,
						  &v->unit_counts[u * r->nr_events + e],
						  mine, n, r);
				fputc('}', out);
			}
			fputc(']', out);
		}
		fputc('}', out);
	}
	fprintf(out, "\n%s]", indent);
	free(unit_all);
	free(unit_nr);
}

static const char *aggr_name(enum stat_aggr aggr)
{
	switch (aggr) {
	case STAT_AGGR_CPU:
		return "per-cpu";
	case STAT_AGGR_THREAD:
		return "per-thread";
	case STAT_AGGR_SOCKET:
		return "per-socket";
	case STAT_AGGR_DIE:
		return "per-die";
	case STAT_AGGR_CORE:
		return "per-core";
	default:
		return "global";
	}
}

static void json_begin(struct stat_report *r)
{
	const struct stat_config *cfg = r->cfg;
	FILE *out = cfg->out;

	fprintf(out, "{\n  \"schema_version\": %d,\n  \"perfex_version\": ",
		STAT_JSON_SCHEMA_VERSION);
	json_str(out, perfctr_version());
	fprintf(out, ",\n  \"target\": {\"kind\": ");
	if (cfg->pid)
		fprintf(out, "\"process\", \"pid\": %d", (int)cfg->pid);
	else if (cfg->tid) {
		fprintf(out, "\"thread\", \"tid\": %d", (int)cfg->tid);
		if (cfg->cpus) {
			fprintf(out, ", \"cpus\": ");
			json_str(out, cfg->cpus);
		}
	}
	else if (cfg->cpus) {
		fprintf(out, "\"%s\", \"cpus\": ", cfg->cgroup ? "cgroup" :
			cfg->nr_cgroups ? "cgroups" : "cpus");
		json_str(out, cfg->cpus[0] ? cfg->cpus : "all");
		if (cfg->cgroup) {
			fprintf(out, ", \"cgroup\": ");
			json_str(out, cfg->cgroup);
		}
		if (cfg->nr_cgroups) {
			fprintf(out, ", \"cgroups\": [");
			/* null: -G's events without a cgroup. */
			for (size_t i = 0; i < cfg->nr_cgroups; i++) {
				fputs(i ? ", " : "", out);
				if (cfg->cgroups[i])
					json_str(out, cfg->cgroups[i]);
				else
					fputs("null", out);
			}
			fputc(']', out);
		}
	} else
		fprintf(out, "\"command\"");
	if (cfg->command) {
		fprintf(out, ", \"command\": [");
		for (char *const *a = cfg->command; *a; a++) {
			if (a != cfg->command)
				fputs(", ", out);
			json_str(out, *a);
		}
		fputc(']', out);
	}
	fprintf(out, "},\n  \"aggregation\": \"%s\",\n  \"repeat\": %u,\n"
		"  \"interval_ms\": %u", aggr_name(cfg->aggr), cfg->repeat,
		cfg->interval_ms);
	if (cfg->sets) {
		fprintf(out, ",\n  \"switch\": {\"interval_ms\": %u, \"after\": ",
			cfg->switch_interval_ms);
		if (cfg->switch_after_event) {
			fprintf(out, "{\"n\": %lu, \"event\": ", cfg->switch_after_n);
			json_str(out, cfg->switch_after_event);
			fputc('}', out);
		} else {
			fputs("null", out);
		}
		fputc('}', out);
	}
	if (cfg->interval_ms)
		fprintf(out, ",\n  \"intervals\": [");
}

/* ------------------------------------------------------ perf stat -j */

/*
 * --json-format perf: one object a line in perf stat -j's keys and order
 * (perf 6.1), for the tools that read those lines.  perf prints rates in
 * K/M/G per second, clocks in msec and counts as "%f" strings.
 */
static void perf_json_metric(FILE *out, const struct perfctr_metric *m)
{
	double v = m->value;
	const char *unit = m->unit;

	if (m->id == PERFCTR_METRIC_RATE) {
		unit = v >= 1e9 ? "G/sec" : v >= 1e6 ? "M/sec" :
		       v >= 1e3 ? "K/sec" : "/sec";
		v /= v >= 1e9 ? 1e9 : v >= 1e6 ? 1e6 : v >= 1e3 ? 1e3 : 1;
	}
	fprintf(out, "\"metric-value\" : %f, \"metric-unit\" : ",
		isfinite(v) ? v : 0.0);
	json_str(out, unit);
}

/* perf 6.1's key of the number of CPUs in a group. */
#define PERF_JSON_NR_CPUS "aggregate-number"

/* The keys before a line's own: the interval, if any, and the unit's
 * ("cpu" : "3" of -A, "thread" : "comm-tid" of --per-thread). */
static void perf_json_keys(const struct stat_report *r, const char *time,
			   size_t u)
{
	FILE *out = r->cfg->out;
	char label[64];

	fprintf(out, "{%s", time);
	if (u == (size_t)-1)
		return;
	if (r->cfg->aggr == STAT_AGGR_CPU) {
		fprintf(out, "\"cpu\" : \"%d\", ", r->units[u].cpu);
		return;
	}
	unit_label(r, u, label, sizeof(label));
	if (stat_aggr_groups(r->cfg->aggr)) {
		fprintf(out, "\"%s\" : \"%s\", \"" PERF_JSON_NR_CPUS "\" : %zu, ",
			r->cfg->aggr == STAT_AGGR_SOCKET ? "socket" :
			r->cfg->aggr == STAT_AGGR_DIE ? "die" : "core", label,
			r->units[u].nr_cpus);
		return;
	}
	fprintf(out, "\"thread\" : ");
	json_str(out, label);
	fputs(", ", out);
}

static void perf_json_row(const struct stat_report *r, const char *time,
			  size_t u, const struct stat_event *e,
			  const struct perfctr_count *c,
			  const struct perfctr_metric **metrics,
			  size_t nr_metrics, bool with_stats)
{
	FILE *out = r->cfg->out;
	double v = with_stats ? e->stats.mean : scaled_value(e, c);

	perf_json_keys(r, time, u);
	fprintf(out, "\"counter-value\" : ");
	if (c->status == PERFCTR_COUNT_NOT_SUPPORTED)
		fputs("\"<not supported>\"", out);
	else if (!is_counted(c))
		fputs("\"<not counted>\"", out);
	else
		fprintf(out, "\"%f\"", e->is_clock ? v / 1e6 : v);
	fprintf(out, ", \"unit\" : ");
	json_str(out, e->is_clock ? "msec" : e->unit);
	fprintf(out, ", \"event\" : ");
	json_str(out, e->name);
	/* With cgroups perf names the event's after it, as in CSV. */
	if (r->cfg->nr_cgroups) {
		fprintf(out, ", \"cgroup\" : ");
		json_str(out, e->cgroup ? e->cgroup : "");
	}
	if (with_stats)
		fprintf(out, ", \"variance\" : %.2f", stddev_percent(&e->stats));
	/* perf shows 100 for what did not run at all. */
	fprintf(out, ", \"event-runtime\" : %" PRIu64 ", \"pcnt-running\" : "
		"%.2f, ", is_counted(c) ? c->time_running : 0,
		is_counted(c) ? 100.0 * fraction(c) : 100.0);
	if (nr_metrics && is_counted(c))
		perf_json_metric(out, metrics[0]);
	else
		fprintf(out, "\"metric-value\" : %f, \"metric-unit\" : \"\"", 0.0);
	fputs("}\n", out);
	for (size_t i = 1; i < nr_metrics && is_counted(c); i++) {
		perf_json_keys(r, time, u);
		perf_json_metric(out, metrics[i]);
		fputs("}\n", out);
	}
}

/*
 * One view: every event in order and, without aggregation, each unit
 * under it (perf's order: event by event, unit by unit).  Events of
 * different sets get the metrics of their own set only.
 */
static void perf_json_block(struct stat_report *r, const struct stat_view *v,
			    const char *time, bool with_stats)
{
	struct perfctr_metric all[MAX_METRICS * (r->nr_events + 1)];
	const struct perfctr_metric *mine[MAX_METRICS];
	size_t per_unit = sizeof(all) / sizeof(all[0]);
	size_t e, u;
	int nr;

	if (!v->unit_counts) {
		nr = all_metrics(r, v->counts, v->duration_ns, all, per_unit);
		stat_metrics_compute_view(r, v->counts, v->duration_ns);
		for (e = 0; e < r->nr_events; e++) {
			size_t n = metrics_of(all, nr, e, mine);

			if (!stat_metrics_only(r->metrics))
				perf_json_row(r, time, (size_t)-1,
					      &r->events[e], &v->counts[e],
					      mine, n, with_stats);
			stat_metrics_perf_json(r, e, time, with_stats);
		}
		stat_metrics_perf_json(r, (size_t)-1, time, with_stats);
		return;
	}
	/* perf prints groups of CPUs group by group, CPUs and threads
	 * event by event. */
	if (stat_aggr_groups(r->cfg->aggr)) {
		for (u = 0; u < r->nr_units; u++) {
			const struct perfctr_count *c =
				&v->unit_counts[u * r->nr_events];

			nr = all_metrics(r, c, v->duration_ns, all, per_unit);
			for (e = 0; e < r->nr_events; e++)
				perf_json_row(r, time, u, &r->events[e], &c[e],
					      mine, metrics_of(all, nr, e, mine),
					      false);
		}
		return;
	}
	for (e = 0; e < r->nr_events; e++) {
		for (u = 0; u < r->nr_units; u++) {
			const struct perfctr_count *c =
				&v->unit_counts[u * r->nr_events];
			size_t n;

			nr = all_metrics(r, c, v->duration_ns, all, per_unit);
			n = metrics_of(all, nr, e, mine);
			perf_json_row(r, time, u, &r->events[e], &c[e], mine,
				      n, false);
		}
	}
}

/* --------------------------------------------------------------- public */

void stat_print_begin(struct stat_report *r)
{
	if (r->cfg->format == STAT_FORMAT_JSON)
		json_begin(r);
}

void stat_print_interval(struct stat_report *r, const struct stat_view *v)
{
	const struct stat_config *cfg = r->cfg;
	static bool printed_one;
	char prefix[48], col[48];

	switch (cfg->format) {
	case STAT_FORMAT_HUMAN:
		/* The unit's column as wide as its rows' prefix (less the
		 * space before the counts). */
		if (cfg->aggr == STAT_AGGR_SOCKET)
			snprintf(col, sizeof(col), "%-6s %4s", "socket", "cpus");
		else if (cfg->aggr == STAT_AGGR_DIE)
			snprintf(col, sizeof(col), "%-12s %4s", "die", "cpus");
		else if (cfg->aggr == STAT_AGGR_CORE)
			snprintf(col, sizeof(col), "%-15s %4s", "core", "cpus");
		else
			snprintf(col, sizeof(col), "%s",
				 cfg->aggr == STAT_AGGR_GLOBAL ? "" :
				 cfg->aggr == STAT_AGGR_CPU ? "CPU              " :
				 "thread           ");
		if (!printed_one)
			fprintf(cfg->out, "#%15s %s%s %18s %-4s %s\n", "time",
				cfg->sets ? "set     " : "", col,
				"counts", "unit", "events");
		snprintf(prefix, sizeof(prefix), "%16.9f ", v->timestamp);
		human_block(r, v, prefix, false);
		break;
	case STAT_FORMAT_CSV:
		snprintf(prefix, sizeof(prefix), "%.9f%s", v->timestamp, cfg->sep);
		csv_block(r, v, prefix, false);
		break;
	case STAT_FORMAT_JSON:
		fprintf(cfg->out, "%s\n    {\"time\": ", printed_one ? "," : "");
		json_num(cfg->out, v->timestamp);
		fprintf(cfg->out, ", \"duration_ns\": ");
		json_num(cfg->out, v->duration_ns);
		fprintf(cfg->out, ", \"events\": ");
		json_events(r, v, false, "    ");
		if (r->metrics) {
			stat_metrics_compute_view(r, v->counts, v->duration_ns);
			fprintf(cfg->out, ", \"metrics\": ");
			stat_metrics_json(r, false, "    ");
		}
		fputc('}', cfg->out);
		break;
	case STAT_FORMAT_PERF_JSON:
		snprintf(prefix, sizeof(prefix), "\"interval\" : %.9f, ",
			 v->timestamp);
		perf_json_block(r, v, prefix, false);
		break;
	}
	printed_one = true;
	fflush(cfg->out);
}

static void exit_fields(const struct stat_report *r, FILE *out)
{
	if (!r->have_status) {
		fprintf(out, ",\n  \"exit\": null");
		return;
	}
	fprintf(out, ",\n  \"exit\": {\"code\": %d, \"signal\": ", r->exit_code);
	if (WIFSIGNALED(r->wait_status))
		fprintf(out, "%d}", WTERMSIG(r->wait_status));
	else
		fprintf(out, "null}");
}

void stat_print_final(struct stat_report *r, const struct stat_view *v)
{
	const struct stat_config *cfg = r->cfg;
	FILE *out = cfg->out;
	bool with_stats = cfg->repeat > 1;

	switch (cfg->format) {
	case STAT_FORMAT_HUMAN:
		if (cfg->interval_ms)
			break;	/* the intervals said it all, as perf does */
		fprintf(out, "\n Performance counter stats for ");
		human_target(r, out);
		if (with_stats)
			fprintf(out, " (%u runs)", r->runs_done);
		if (cfg->sets)
			fprintf(out, " in %zu sets", nr_passes(r));
		fprintf(out, ":\n\n");
		if (stat_metrics_only(r->metrics)) {
			stat_metrics_compute_view(r, v->counts, v->duration_ns);
			stat_metrics_print_only(r, false, with_stats);
		} else {
			human_block(r, v, "", with_stats);
		}
		if (cfg->sets)
			fprintf(out, "\n Ratios are shown only between events of "
				"one set; events of different sets\n were never "
				"counted together.\n");
		fprintf(out, "\n %17.9f seconds time elapsed", r->elapsed_ns.mean / 1e9);
		if (with_stats)
			fprintf(out, "  ( +- %5.2f%% )", stddev_percent(&r->elapsed_ns));
		fprintf(out, "\n\n");
		if (r->have_rusage && !with_stats)
			fprintf(out, " %17.9f seconds user\n %17.9f seconds sys\n\n",
				r->user_ns / 1e9, r->sys_ns / 1e9);
		stat_print_tree(r);
		break;
	case STAT_FORMAT_CSV:
		if (cfg->interval_ms)
			break;
		if (stat_metrics_only(r->metrics)) {
			stat_metrics_compute_view(r, v->counts, v->duration_ns);
			stat_metrics_print_only(r, true, with_stats);
		} else {
			csv_block(r, v, "", with_stats);
		}
		stat_print_tree(r);
		break;
	case STAT_FORMAT_JSON:
		if (cfg->interval_ms)
			fprintf(out, "\n  ]");
		fprintf(out, ",\n  \"runs\": %u,\n  \"elapsed_ns\": ", r->runs_done);
		json_num(out, r->elapsed_ns.mean);
		if (with_stats) {
			fprintf(out, ",\n  \"elapsed_stats\": {\"stddev\": ");
			json_num(out, stat_stats_stddev(&r->elapsed_ns));
			fprintf(out, ", \"min\": ");
			json_num(out, r->elapsed_ns.min);
			fprintf(out, ", \"max\": ");
			json_num(out, r->elapsed_ns.max);
			fputc('}', out);
		}
		if (r->have_rusage) {
			fprintf(out, ",\n  \"user_ns\": ");
			json_num(out, r->user_ns);
			fprintf(out, ",\n  \"system_ns\": ");
			json_num(out, r->sys_ns);
		}
		exit_fields(r, out);
		if (cfg->sets)
			json_sets(r, out);
		fprintf(out, ",\n  \"events\": ");
		json_events(r, v, with_stats, "  ");
		if (r->metrics) {
			stat_metrics_compute_view(r, v->counts, v->duration_ns);
			fprintf(out, ",\n  \"metrics\": ");
			stat_metrics_json(r, with_stats, "  ");
		}
		stat_json_tree(r);
		fprintf(out, "\n}\n");
		break;
	case STAT_FORMAT_PERF_JSON:
		if (!cfg->interval_ms)
			perf_json_block(r, v, "", with_stats);
		break;
	}
	fflush(out);
}
