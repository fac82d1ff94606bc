/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex counting mode — the metrics of -M, --topdown and --metrics-file:
 * the tables loaded, the plan's event groups handed to the session, each
 * run's values (for -r's mean and spread), and their output beside the
 * counts (human and CSV), alone (--metric-only) and in JSON.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json-out.h"
#include "perfex.h"
#include "stat.h"

struct stat_metrics {
	struct perfctr_metrics *tables;
	struct perfctr_metric_plan *plan;
	size_t nr;
	bool only;
	struct stat_stats *stats;	/* per metric, over the runs */
	struct perfctr_metric_value *values;	/* scratch, one per metric */
	const struct perfctr_count *counts;	/* of the values */
};

/* The tables of a perfex run from its build tree (O/perfex beside
 * O/share/perfctr/pmu-events), else the installed ones. */
static const char *build_tree_tables(char *buf, size_t size)
{
	char exe[PATH_MAX];
	struct stat st;

	if (perfex_self_dir(exe, sizeof(exe)))
		return NULL;
	if (snprintf(buf, size, "%s/share/perfctr/pmu-events", exe) >= (int)size ||
	    stat(buf, &st) || !S_ISDIR(st.st_mode))
		return NULL;
	return buf;
}

struct perfctr_metrics *stat_metrics_tables(const char *const *files,
					    size_t nr_files)
{
	char dir[PATH_MAX];
	const char *data_dir = getenv("PERFCTR_METRICS_PATH") ? NULL :
			       build_tree_tables(dir, sizeof(dir));
	PERFCTR_OPTS(perfctr_metrics_opts, opts, .data_dir = data_dir,
		     .files = files, .nr_files = nr_files);
	struct perfctr_metrics *m = perfctr_metrics__new(&opts);

	if (!m && errno == ENOTSUP) {
		perfex_error("no metrics: perfex was built without json-c");
		perfex_hint("install libjson-c-dev (scripts/install-deps) and "
			    "rebuild");
	} else if (!m && nr_files) {
		perfex_error("cannot load the metrics file(s): %s",
			     strerror(errno));
	} else if (!m) {
		perfex_error("cannot load the metric tables: %s", strerror(errno));
	}
	return m;
}

/* The TopDown level's group: Intel's and Arm's TopdownL<N>, AMD's
 * PipelineL<N>. */
static int topdown_list(struct perfctr_metrics *m, unsigned int level,
			char *buf, size_t size)
{
	static const char *const names[] = { "TopdownL%u", "PipelineL%u" };
	size_t i, k;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		char group[32];

		snprintf(group, sizeof(group), names[k], level);
		for (i = 0; i < perfctr_metrics__nr(m); i++)
			if (perfctr_metrics__in_group(m, i, group) == 1) {
				snprintf(buf, size, "%s", group);
				return 0;
			}
	}
	return -ENOENT;
}

int stat_metrics_open(struct stat_metrics **out, const struct stat_metric_opts *mo)
{
	struct stat_metrics *sm = calloc(1, sizeof(*sm));
	struct perfctr_metric_error err;
	char list[4096];
	size_t i;

	*out = NULL;
	if (!sm) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	sm->only = mo->only;
	sm->tables = stat_metrics_tables(mo->files, mo->nr_files);
	if (!sm->tables)
		goto fail_usage;
	list[0] = '\0';
	if (mo->list)
		snprintf(list, sizeof(list), "%s", mo->list);
	if (mo->topdown) {
		size_t len = strlen(list);
		char group[32];

		if (topdown_list(sm->tables, mo->td_level, group, sizeof(group))) {
			perfex_error("no TopDown level %u metrics for this CPU",
				     mo->td_level);
			if (perfctr_metrics__missing(sm->tables))
				perfex_hint("%s", perfctr_metrics__missing(sm->tables));
			else
				perfex_hint("the tables of %s have no TopdownL%u "
					    "or PipelineL%u group",
					    perfctr_metrics__model(sm->tables),
					    mo->td_level, mo->td_level);
			goto fail_usage;
		}
		snprintf(list + len, sizeof(list) - len, "%s%s", len ? "," : "",
			 group);
	}
	PERFCTR_OPTS(perfctr_metric_plan_opts, popts,
		     .flags = (mo->no_merge ? PERFCTR_METRIC_PLAN_NO_MERGE : 0) |
			      (mo->no_group ? PERFCTR_METRIC_PLAN_NO_GROUP : 0));
	sm->plan = perfctr_metric_plan__new_opts(sm->tables, list, &popts, &err);
	if (!sm->plan) {
		if (errno == ENOENT)
			perfex_error("unknown metric '%s': %s", err.metric,
				     "no metric or metric group of that name");
		else if (err.pos >= 0)
			perfex_error("cannot parse metric '%s' at column %d: %s",
				     err.metric, err.pos + 1, err.msg);
		else
			perfex_error("cannot use metric '%s': %s", err.metric,
				     err.msg[0] ? err.msg : strerror(errno));
		if (errno == ENOENT && perfctr_metrics__missing(sm->tables))
			perfex_hint("only the generic and your own metrics are "
				    "known: %s", perfctr_metrics__missing(sm->tables));
		else if (errno == ENOENT)
			perfex_hint("perfex list metrics; perfex list metricgroups");
		goto fail_usage;
	}
	sm->nr = perfctr_metric_plan__nr_metrics(sm->plan);
	sm->stats = calloc(sm->nr ? sm->nr : 1, sizeof(*sm->stats));
	sm->values = calloc(sm->nr ? sm->nr : 1, sizeof(*sm->values));
	if (!sm->stats || !sm->values) {
		stat_metrics_free(sm);
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	for (i = 0; i < sm->nr; i++)
		sm->values[i].status = PERFCTR_METRIC_NOT_COUNTED;
	*out = sm;
	return -1;
fail_usage:
	stat_metrics_free(sm);
	return PERFEX_EXIT_USAGE;
}

void stat_metrics_free(struct stat_metrics *sm)
{
	if (!sm)
		return;
	perfctr_metric_plan__delete(sm->plan);
	perfctr_metrics__delete(sm->tables);
	free(sm->stats);
	free(sm->values);
	free(sm);
}

size_t stat_metrics_nr_groups(const struct stat_metrics *sm)
{
	return sm ? perfctr_metric_plan__nr_groups(sm->plan) : 0;
}

const char *stat_metrics_group(const struct stat_metrics *sm, size_t g)
{
	return perfctr_metric_plan__group(sm->plan, g);
}

bool stat_metrics_only(const struct stat_metrics *sm)
{
	return sm && sm->only;
}

/* The plan's values from one column of counts, into sm->values. */
static void compute(const struct stat_report *r,
		    const struct perfctr_count *counts, double wall_ns)
{
	struct stat_metrics *sm = r->metrics;
	struct perfctr_metric_input *in = calloc(r->nr_events ? r->nr_events : 1,
						 sizeof(*in));
	size_t e;

	if (!in)
		return;
	sm->counts = counts;
	for (e = 0; e < r->nr_events; e++) {
		in[e].name = r->events[e].name;
		in[e].count = counts[e];
		in[e].group = r->events[e].group;
	}
	perfctr_metric_plan__compute(sm->plan, in, r->nr_events, wall_ns,
				     sm->values, sm->nr);
	free(in);
}

void stat_metrics_run(struct stat_report *r, const struct perfctr_count *counts,
		      double wall_ns)
{
	struct stat_metrics *sm = r->metrics;
	size_t i;

	if (!sm)
		return;
	compute(r, counts, wall_ns);
	for (i = 0; i < sm->nr; i++)
		if (sm->values[i].status == PERFCTR_METRIC_OK)
			stat_stats_add(&sm->stats[i], sm->values[i].value);
}

/* Why metric @i has no value, in a few words. */
static const char *reason(const struct stat_report *r, size_t i, char *buf,
			  size_t size)
{
	const struct stat_metrics *sm = r->metrics;
	const struct perfctr_metric_value *v = &sm->values[i];
	size_t e;
	const char *missing = perfctr_metric_plan__missing(sm->plan, i);

	switch (v->status) {
	case PERFCTR_METRIC_NO_EVENT:
		if (missing)
			snprintf(buf, size, "%s", missing);
		else
			snprintf(buf, size, "'%s' is unknown here",
				 v->event ? v->event : "?");
		break;
	case PERFCTR_METRIC_NOT_COUNTED:
		for (e = 0; v->event && sm->counts && e < r->nr_events; e++)
			if (!strcasecmp(r->events[e].name, v->event) &&
			    sm->counts[e].status == PERFCTR_COUNT_NOT_SUPPORTED) {
				snprintf(buf, size, "event '%s' cannot be counted "
					 "here (%s)", v->event,
					 sm->counts[e].errnum ?
					 strerror(sm->counts[e].errnum) :
					 "not supported");
				return buf;
			}
		snprintf(buf, size, "event '%s' was not counted%s",
			 v->event ? v->event : "?",
			 perfctr_metrics__model(sm->tables) ? "" :
			 " (no CPU model table)");
		break;
	case PERFCTR_METRIC_NOT_TOGETHER:
		snprintf(buf, size, "its events were not counted together");
		break;
	case PERFCTR_METRIC_UNDEFINED:
		snprintf(buf, size, "undefined (a division by zero)");
		break;
	default:
		buf[0] = '\0';
	}
	return buf;
}

static bool with_runs(const struct stat_metrics *sm, size_t i, bool with_stats)
{
	return with_stats && sm->stats[i].n > 0;
}

static double shown_value(const struct stat_metrics *sm, size_t i,
			  bool with_stats)
{
	return with_runs(sm, i, with_stats) ? sm->stats[i].mean :
	       sm->values[i].value;
}

static bool has_value(const struct stat_metrics *sm, size_t i, bool with_stats)
{
	return sm->values[i].status == PERFCTR_METRIC_OK ||
	       with_runs(sm, i, with_stats);
}

static double spread_percent(const struct stat_stats *s)
{
	return s->mean != 0 ? 100.0 * stat_stats_stddev(s) / fabs(s->mean) : 0;
}

static void format_number(double v, char *buf, size_t size)
{
	if (v != 0 && (fabs(v) < 0.01 || fabs(v) >= 1e9))
		snprintf(buf, size, "%8.3g", v);
	else
		snprintf(buf, size, "%8.2f", v);
}

/* "   3.00 ppid_per_pid" with its marks, or why it has none. */
void stat_metrics_human(const struct stat_report *r, size_t i,
			bool with_stats, bool spread)
{
	struct stat_metrics *sm = r->metrics;
	const struct perfctr_metric_value *v = &sm->values[i];
	struct perfctr_metric_def d;
	FILE *out = r->cfg->out;
	char num[48], why[256];

	perfctr_metric_plan__def(sm->plan, i, &d);
	if (!has_value(sm, i, with_stats)) {
		fprintf(out, "%8s %s: %s", "", d.name, reason(r, i, why,
							       sizeof(why)));
		return;
	}
	format_number(shown_value(sm, i, with_stats), num, sizeof(num));
	fprintf(out, "%s %s%s%s", num, d.unit, d.unit[0] ? "  " : "", d.name);
	if (v->threshold == 1)
		fprintf(out, "  (!)");
	if (v->multiplexed)
		fprintf(out, "  (multiplexed)");
	if (spread && with_runs(sm, i, with_stats))
		fprintf(out, "  ( +- %5.2f%% )", spread_percent(&sm->stats[i]));
}

static void csv_metric(const struct stat_report *r, const char *prefix,
		       size_t i, bool with_stats)
{
	struct stat_metrics *sm = r->metrics;
	struct perfctr_metric_def d;
	const char *sep = r->cfg->sep;
	FILE *out = r->cfg->out;
	char why[256];

	perfctr_metric_plan__def(sm->plan, i, &d);
	fprintf(out, "%s%s%s%s%s%s", prefix, sep, sep, sep, sep, sep);
	if (!has_value(sm, i, with_stats)) {
		fprintf(out, "%s%s%s%s\n", sep, d.name, sep,
			reason(r, i, why, sizeof(why)));
		return;
	}
	fprintf(out, "%.6g%s%s%s%s%s%s", shown_value(sm, i, with_stats), sep,
		d.unit, d.unit[0] ? " " : "", d.name, sep,
		sm->values[i].threshold == 1 ? "over-threshold" : "");
	if (with_runs(sm, i, with_stats))
		fprintf(out, "%s%.2f", sep, spread_percent(&sm->stats[i]));
	fputc('\n', out);
}

/* Row of the event metric @i is shown beside, or (size_t)-1. */
static size_t anchor_row(const struct stat_report *r, size_t i)
{
	const char *name = perfctr_metric_plan__event(r->metrics->plan, i);
	size_t e;

	for (e = 0; name && e < r->nr_events; e++)
		if (!strcasecmp(r->events[e].name, name))
			return e;
	return (size_t)-1;
}

size_t stat_metrics_first(const struct stat_report *r, size_t row)
{
	size_t i;

	for (i = 0; r->metrics && i < r->metrics->nr; i++)
		if (anchor_row(r, i) == row)
			return i;
	return (size_t)-1;
}

void stat_metrics_compute_view(struct stat_report *r,
			       const struct perfctr_count *counts,
			       double wall_ns)
{
	if (r->metrics)
		compute(r, counts, wall_ns);
}

void stat_metrics_rows(const struct stat_report *r, size_t row,
		       const char *prefix, bool csv, bool with_stats,
		       bool first_shown)
{
	struct stat_metrics *sm = r->metrics;
	size_t i, first;

	if (!sm)
		return;
	first = first_shown && !csv ? stat_metrics_first(r, row) : (size_t)-1;
	for (i = 0; i < sm->nr; i++) {
		size_t a = anchor_row(r, i);

		if (row == (size_t)-1 ? a != (size_t)-1 : a != row)
			continue;
		if (csv) {
			csv_metric(r, prefix, i, with_stats);
			continue;
		}
		if (i == first)
			continue;
		fprintf(r->cfg->out, "%s%18s %-4s %-32s # ", prefix, "", "", "");
		stat_metrics_human(r, i, with_stats, true);
		fputc('\n', r->cfg->out);
	}
}

void stat_metrics_print_only(const struct stat_report *r, bool csv,
			     bool with_stats)
{
	struct stat_metrics *sm = r->metrics;
	size_t i;

	for (i = 0; i < sm->nr; i++) {
		if (csv) {
			csv_metric(r, "", i, with_stats);
			continue;
		}
		fputs("  ", r->cfg->out);
		stat_metrics_human(r, i, with_stats, true);
		fputc('\n', r->cfg->out);
	}
}

static const char *status_word(enum perfctr_metric_status s)
{
	switch (s) {
	case PERFCTR_METRIC_OK: return "ok";
	case PERFCTR_METRIC_NO_EVENT: return "no-event";
	case PERFCTR_METRIC_NOT_COUNTED: return "not-counted";
	case PERFCTR_METRIC_NOT_TOGETHER: return "not-together";
	case PERFCTR_METRIC_UNDEFINED: return "undefined";
	}
	return "?";
}

static void json_number(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.17g", v);
	else
		fputs("null", out);
}

void stat_metrics_json(const struct stat_report *r, bool with_stats,
		       const char *indent)
{
	struct stat_metrics *sm = r->metrics;
	FILE *out = r->cfg->out;
	size_t i;

	fputc('[', out);
	for (i = 0; sm && i < sm->nr; i++) {
		const struct perfctr_metric_value *v = &sm->values[i];
		struct perfctr_metric_def d;
		char why[256];

		perfctr_metric_plan__def(sm->plan, i, &d);
		fprintf(out, "%s\n%s  {\"name\": ", i ? "," : "", indent);
		jout_str(out, d.name);
		fprintf(out, ", \"groups\": ");
		jout_str(out, d.groups);
		fprintf(out, ", \"source\": ");
		jout_str(out, d.source);
		fprintf(out, ", \"unit\": ");
		jout_str(out, d.unit);
		fprintf(out, ", \"status\": \"%s\", \"value\": ",
			has_value(sm, i, with_stats) ? "ok" :
			status_word(v->status));
		if (has_value(sm, i, with_stats))
			json_number(out, shown_value(sm, i, with_stats));
		else
			fputs("null", out);
		fprintf(out, ", \"reason\": ");
		if (has_value(sm, i, with_stats))
			fputs("null", out);
		else
			jout_str(out, reason(r, i, why, sizeof(why)));
		fprintf(out, ", \"threshold\": %s, \"multiplexed\": %s",
			v->threshold < 0 ? "null" :
			v->threshold ? "\"out\"" : "\"within\"",
			v->multiplexed ? "true" : "false");
		if (with_stats) {
			const struct stat_stats *s = &sm->stats[i];

			fprintf(out, ", \"runs\": %u, \"stddev\": ", s->n);
			json_number(out, s->n ? stat_stats_stddev(s) : NAN);
			fprintf(out, ", \"min\": ");
			json_number(out, s->n ? s->min : NAN);
			fprintf(out, ", \"max\": ");
			json_number(out, s->n ? s->max : NAN);
		}
		fputc('}', out);
	}
	if (sm && sm->nr)
		fprintf(out, "\n%s", indent);
	fputc(']', out);
}

void stat_metrics_perf_json(const struct stat_report *r, size_t row,
			    const char *prefix, bool with_stats)
{
	struct stat_metrics *sm = r->metrics;
	FILE *out = r->cfg->out;
	size_t i;

	for (i = 0; sm && i < sm->nr; i++) {
		struct perfctr_metric_def d;
		char unit[256];

		if (anchor_row(r, i) != row)
			continue;
		perfctr_metric_plan__def(sm->plan, i, &d);
		snprintf(unit, sizeof(unit), "%s%s%s", d.unit,
			 d.unit[0] ? " " : "", d.name);
		/* perf's line for a metric it cannot compute has the keys
		 * with 0 and no unit. */
		fprintf(out, "{%s\"metric-value\" : %f, \"metric-unit\" : ",
			prefix, has_value(sm, i, with_stats) ?
			shown_value(sm, i, with_stats) : 0.0);
		jout_str(out, has_value(sm, i, with_stats) ? unit : "");
		fputs("}\n", out);
	}
}
