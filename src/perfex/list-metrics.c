/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex list metrics | metricgroups: the metrics this CPU's tables, the
 * generic table and the user's files (PERFCTR_METRICS_PATH) define, as
 * text in perf list's layout or as JSON (docs/json-list.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json-out.h"
#include "perfex.h"
#include "stat.h"

struct group {
	char name[96];
	size_t nr;
};

static int cmp_def(const void *a, const void *b, void *m)
{
	struct perfctr_metric_def da, db;

	perfctr_metrics__def(m, *(const size_t *)a, &da);
	perfctr_metrics__def(m, *(const size_t *)b, &db);
	return strcasecmp(da.name, db.name);
}

static int cmp_group(const void *a, const void *b)
{
	return strcasecmp(((const struct group *)a)->name,
			  ((const struct group *)b)->name);
}

/* The metrics in force (the last definition of each name), sorted. */
static size_t *in_force(struct perfctr_metrics *m, size_t *nr)
{
	size_t *idx = calloc(perfctr_metrics__nr(m) + 1, sizeof(*idx));
	size_t i, n = 0;

	if (!idx)
		return NULL;
	for (i = 0; i < perfctr_metrics__nr(m); i++) {
		struct perfctr_metric_def d;

		perfctr_metrics__def(m, i, &d);
		if (perfctr_metrics__find(m, d.name) == (int)i)
			idx[n++] = i;
	}
	qsort_r(idx, n, sizeof(*idx), cmp_def, m);
	*nr = n;
	return idx;
}

static struct group *groups_of(struct perfctr_metrics *m, const size_t *idx,
			       size_t nr, size_t *nr_groups)
{
	struct group *g = NULL;
	size_t n = 0, i, k;

	for (i = 0; i < nr; i++) {
		struct perfctr_metric_def d;
		const char *s;

		perfctr_metrics__def(m, idx[i], &d);
		for (s = d.groups; *s;) {
			size_t len = strcspn(s, ";");

			for (k = 0; k < n; k++)
				if (strlen(g[k].name) == len &&
				    !strncasecmp(g[k].name, s, len))
					break;
			if (k == n && len && len < sizeof(g->name)) {
				struct group *more = realloc(g, (n + 1) * sizeof(*g));

				if (!more) {
					free(g);
					return NULL;
				}
				g = more;
				snprintf(g[n].name, sizeof(g[n].name), "%.*s",
					 (int)len, s);
				g[n++].nr = 0;
			}
			if (k < n)
				g[k].nr++;
			s += len;
			if (*s)
				s++;
		}
	}
	if (n)
		qsort(g, n, sizeof(*g), cmp_group);
	*nr_groups = n;
	return g ? g : calloc(1, sizeof(*g));
}

static void json_head(struct perfctr_metrics *m)
{
	printf("{\n  \"schema_version\": 1,\n  \"cpuid\": ");
	jout_str(stdout, perfctr_metrics__cpuid(m));
	printf(",\n  \"model\": ");
	jout_str(stdout, perfctr_metrics__model(m));
	printf(",\n  \"missing\": ");
	jout_str(stdout, perfctr_metrics__missing(m));
}

int list_metrics(bool json, bool groups)
{
	struct perfctr_metrics *m = stat_metrics_tables(NULL, 0);
	struct group *g = NULL;
	size_t *idx, nr = 0, nr_groups = 0, i;

	if (!m)
		return PERFEX_EXIT_INTERNAL;
	idx = in_force(m, &nr);
	if (idx && groups)
		g = groups_of(m, idx, nr, &nr_groups);
	if (!idx || (groups && !g)) {
		perfex_error("out of memory");
		free(idx);
		perfctr_metrics__delete(m);
		return PERFEX_EXIT_INTERNAL;
	}
	if (json) {
		json_head(m);
		printf(",\n  \"%s\": [", groups ? "metricgroups" : "metrics");
		for (i = 0; i < (groups ? nr_groups : nr); i++) {
			struct perfctr_metric_def d;

			printf("%s\n    {\"name\": ", i ? "," : "");
			if (groups) {
				jout_str(stdout, g[i].name);
				printf(", \"metrics\": %zu}", g[i].nr);
				continue;
			}
			perfctr_metrics__def(m, idx[i], &d);
			jout_str(stdout, d.name);
			printf(", \"groups\": ");
			jout_str(stdout, d.groups);
			printf(", \"desc\": ");
			jout_str(stdout, d.desc);
			printf(", \"expr\": ");
			jout_str(stdout, d.expr);
			printf(", \"unit\": ");
			jout_str(stdout, d.unit);
			printf(", \"scale\": %.17g, \"threshold\": ", d.scale);
			jout_str(stdout, d.threshold);
			printf(", \"source\": ");
			jout_str(stdout, d.source);
			putchar('}');
		}
		printf("%s]\n}\n", (groups ? nr_groups : nr) ? "\n  " : "");
	} else if (groups) {
		printf("\nMetric Groups:\n\n");
		for (i = 0; i < nr_groups; i++)
			printf("  %-40s (%zu metric%s)\n", g[i].name, g[i].nr,
			       g[i].nr == 1 ? "" : "s");
	} else {
		printf("\nMetrics:\n\n");
		for (i = 0; i < nr; i++) {
			struct perfctr_metric_def d;

			perfctr_metrics__def(m, idx[i], &d);
			printf("  %s\n", d.name);
			if (d.desc[0])
				printf("       [%s]\n", d.desc);
		}
	}
	if (!json && perfctr_metrics__missing(m))
		perfex_hint("only the generic and your own metrics: %s",
			    perfctr_metrics__missing(m));
	free(idx);
	free(g);
	perfctr_metrics__delete(m);
	return 0;
}
