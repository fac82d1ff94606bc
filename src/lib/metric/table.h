/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The metric tables' internals shared by table.c, plan.c and metric.c. */
#ifndef PERFCTR_METRIC_TABLE_H
#define PERFCTR_METRIC_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include <perfctr/metric.h>

#include "metric/expr.h"

/*
 * The built-in generic table (generic.json), as C data made at build time
 * (scripts/gen-generic-metrics): every table object has its entries, and
 * the metrics computed beside the counts (perfctr_metric__compute()) are
 * its expressions, without a table object or a JSON reader.
 */
struct pc_generic_metric {
	const char *name;		/* MetricName */
	const char *desc;		/* BriefDescription */
	const char *expr;		/* MetricExpr */
	const char *groups;		/* MetricGroup */
	const char *scale_unit;		/* ScaleUnit */
};
extern const struct pc_generic_metric pc_generic_metrics[];
extern const size_t pc_nr_generic_metrics;

/* A ScaleUnit ("100% of all branches", "1GHz"): its scale (1 when it
 * has none) and its unit into @unit ("" when none). */
double pc_metrics_scale_unit(const char *scale_unit, char *unit, size_t size);

/* The arch of a CPU identity: "x86" or "arm64". */
const char *pc_metrics_arch_of(const char *cpuid);

/* Whether x86 identity @cpuid matches mapfile pattern @pattern (an
 * extended regular expression over the whole identity, with or without
 * its stepping); for arm64, whether the MIDRs are equal once variant and
 * revision are masked off. */
bool pc_metrics_cpuid_match(const char *pattern, const char *cpuid);

/* The generic table and model @model ("x86/amdzen5") of pmu-events tree
 * @tree, whatever the CPU (the tests walk every model). */
struct perfctr_metrics *pc_metrics_new_model(const char *tree,
					     const char *model);

/* The (fixture) root /proc and /sys are read under, "" for the host's. */
const char *pc_metrics_root(const struct perfctr_metrics *m);
/* How many entries of the tables have been parsed by json-c: the scan
 * of the model's files parses none, and the generic table is not JSON
 * at run time. */
size_t pc_metrics_nr_parsed(const struct perfctr_metrics *m);
/* Name of metric @i. */
const char *pc_metrics_name(const struct perfctr_metrics *m, size_t i);

/* The parsed expression of metric @i (parsed on first use), or NULL with
 * @err filled. */
const struct pc_mx *pc_metrics_expr(struct perfctr_metrics *m, size_t i,
				    struct perfctr_metric_error *err);
/* Same for its MetricThreshold: NULL without an error when it has none. */
const struct pc_mx *pc_metrics_threshold(struct perfctr_metrics *m, size_t i,
					 struct perfctr_metric_error *err);

/* An event of the tables, by name (case insensitive). */
struct pc_mevent {
	const char *name;
	const char *pmu;	/* PMU it counts on ("cpu", "amd_l3"), from
				 * Unit; NULL for the core PMU */
	char spec[256];		/* in perfex's event syntax */
};
/* Return 0 with @ev filled, or -ENOENT. */
int pc_metrics_event(struct perfctr_metrics *m, const char *name,
		     struct pc_mevent *ev);

/* The value of literal @name (#smt_on...), from the (fixture) root. */
int pc_metrics_literal(struct perfctr_metrics *m, const char *name,
		       double *value);

/* Whether @s is a run of event modifier letters (the "u" of ":u", the
 * "ppp" of ":ppp"); false for "". */
bool pc_metrics_is_modifiers(const char *s);
/* Cut a modifier suffix (":u", ":ppp") off @name in place; return the
 * modifiers (pointing past the cut, in @name's storage), "" when none. */
const char *pc_metrics_strip_mods(char *name);

/* The generic events the kernel knows by name (cycles, instructions,
 * task-clock...): counted without any table. */
bool pc_metrics_generic_event(const char *name);

#endif /* PERFCTR_METRIC_TABLE_H */
