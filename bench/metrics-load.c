/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Start-up cost of the metric tables: perfctr_metrics__new() (this CPU's
 * identity, mapfile.csv, the model's JSON files, the generic table) and a
 * plan of one group, as perfex -M does it; the median and the minimum of
 * N repetitions, in milliseconds, and the first of them alone: the one a
 * perfex start pays, with the process's first page faults and cold
 * caches (bench/metrics takes the median of many fresh processes' first
 * loads; the CPU time beside it, which waiting for a CPU on a loaded
 * machine does not inflate).  The target is <= 5 ms.
 *
 *   metrics-load [N [GROUP]]   (PERFCTR_METRICS_PATH as for perfex)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <perfctr/metric.h>

static double clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
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
	double first_load = 0, first_plan = 0, first_cpu_load = 0, first_cpu_plan = 0;
	const char *model = NULL;
	size_t nr = 0;

	if (n < 1 || !load || !plan)
		return 2;
	for (int i = 0; i < n; i++) {
		double c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID), c1, c2;
		double t0 = clock_ms(CLOCK_MONOTONIC), t1, t2;
		struct perfctr_metrics *m = perfctr_metrics__new(NULL);
		struct perfctr_metric_plan *p = NULL;

		t1 = clock_ms(CLOCK_MONOTONIC);
		c1 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
		if (!m) {
			perror("perfctr_metrics__new");
			return 1;
		}
		if (group)
			p = perfctr_metric_plan__new(m, group, NULL);
		t2 = clock_ms(CLOCK_MONOTONIC);
		c2 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
		load[i] = t1 - t0;
		plan[i] = t2 - t1;
		if (!i) {
			first_load = load[i];
			first_plan = plan[i];
			first_cpu_load = c1 - c0;
			first_cpu_plan = c2 - c1;
		}
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
	printf("first:       load+select %.3f ms (CPU %.3f ms), plan %.3f ms "
	       "(CPU %.3f ms)\n", first_load, first_cpu_load, first_plan,
	       first_cpu_plan);
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
