/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Start-up cost of the metric tables: perfctr_metrics__new() (this CPU's
 * identity, mapfile.csv, the model's JSON files, the generic table) and a
 * plan of one group, as perfex -M does it; the median and the minimum of
 * N repetitions, in milliseconds.  The target is <= 5 ms.
 *
 *   metrics-load [N [GROUP]]   (PERFCTR_METRICS_PATH as for perfex)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <perfctr/metric.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	const char *group = argc > 2 ? argv[2] : NULL;
	double *load = calloc((size_t)n, sizeof(*load));
	double *plan = calloc((size_t)n, sizeof(*plan));
	const char *model = NULL;
	size_t nr = 0;

	if (n < 1 || !load || !plan)
		return 2;
	for (int i = 0; i < n; i++) {
		double t0 = now_ms(), t1, t2;
		struct perfctr_metrics *m = perfctr_metrics__new(NULL);
		struct perfctr_metric_plan *p = NULL;

		t1 = now_ms();
		if (!m) {
			perror("perfctr_metrics__new");
			return 1;
		}
		if (group)
			p = perfctr_metric_plan__new(m, group, NULL);
		t2 = now_ms();
		load[i] = t1 - t0;
		plan[i] = t2 - t1;
		nr = perfctr_metrics__nr(m);
		model = perfctr_metrics__model(m) ? "" : NULL;
		if (i == n - 1)
			printf("model %s, %zu metrics%s%s\n",
			       perfctr_metrics__model(m) ? perfctr_metrics__model(m) :
			       "none", nr, group ? ", plan of " : "",
			       group ? (p ? group : "(failed)") : "");
		perfctr_metric_plan__delete(p);
		perfctr_metrics__delete(m);
	}
	(void)model;
	qsort(load, (size_t)n, sizeof(*load), cmp);
	qsort(plan, (size_t)n, sizeof(*plan), cmp);
	printf("load+select: median %.3f ms, min %.3f ms (%d runs)\n",
	       load[n / 2], load[0], n);
	if (group)
		printf("plan:        median %.3f ms, min %.3f ms\n", plan[n / 2],
		       plan[0]);
	free(load);
	free(plan);
	return 0;
}
