/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The built-in generic metric table: src/lib/metric/generic.json, made
 * into C data at build time by scripts/gen-generic-metrics.
 */
#include "common/internal.h"
#include "metric/table.h"

const struct pc_generic_metric pc_generic_metrics[] = {
#include "metric-generic.inc"
};

const size_t pc_nr_generic_metrics = ARRAY_SIZE(pc_generic_metrics);
