/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — performance-monitoring counters for Linux.
 * The umbrella header: include this one.
 */
#ifndef PERFCTR_PERFCTR_H
#define PERFCTR_PERFCTR_H

#include <perfctr/common.h>
#include <perfctr/count.h>
#include <perfctr/event.h>
#include <perfctr/target.h>
#include <perfctr/session.h>
#include <perfctr/notify.h>
#include <perfctr/set.h>
#include <perfctr/info.h>
#include <perfctr/vperfctr.h>
#include <perfctr/region.h>
#include <perfctr/metric.h>
#include <perfctr/symbols.h>
#include <perfctr/profile.h>
#include <perfctr/ring.h>
#include <perfctr/record.h>
#include <perfctr/perfdata.h>
#include <perfctr/tpformat.h>
#include <perfctr/sampler.h>
#include <perfctr/reader.h>
#include <perfctr/synth.h>
#include <perfctr/pprof.h>
#include <perfctr/tree.h>
#include <perfctr/annotate.h>
#include <perfctr/offcpu.h>

#endif /* PERFCTR_PERFCTR_H */
