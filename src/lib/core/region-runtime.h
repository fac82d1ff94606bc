/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The region markers' process-global runtime (environment, exit handler,
 * the report on stderr): its contract is in region-runtime.c.  Not
 * installed.
 */
#ifndef PERFCTR_REGION_RUNTIME_H
#define PERFCTR_REGION_RUNTIME_H

#include <stdio.h>

/*
 * Once per process, at the first region call: arms the exit handler and
 * returns PERFCTR_EVENTS (NULL when unset or empty).
 */
const char *region_runtime_start(void);

/* PERFCTR_REGIONS_FILE now, NULL when unset or empty. */
const char *region_runtime_results_path(void);

/* From region.c: the results as the file holds them, written to @f
 * (0 or -errno), and the tables of results read from @in printed on @out
 * (the number of regions, or -errno). */
int region_results_write(FILE *f);
int region_results_report(FILE *in, FILE *out);

#endif /* PERFCTR_REGION_RUNTIME_H */
