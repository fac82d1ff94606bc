/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — region markers: count named regions of a program, per
 * thread and per region, on the fast read path (what PAPI's high-level
 * API and likwid's markers do).
 *
 *	perfctr_region_begin("solve");
 *	...
 *	perfctr_region_end("solve");
 *
 * Regions nest (counts are inclusive) and may be entered any number of
 * times from any number of threads; each thread counts its own.  The
 * events come from the environment variable PERFCTR_EVENTS (an event
 * specification, e.g. "instructions:u,cycles:u", at most 8 events);
 * otherwise "instructions:u,cycles:u" where a hardware PMU exists, else
 * "task-clock,page-faults".  Each thread's counters are a vperfctr state
 * of that thread (perfctr/vperfctr.h), so a thread that has its own state
 * counts calls only.
 *
 * The cost of an empty begin/end pair is measured once, at the first
 * begin, and subtracted from every region (per call) in the reports;
 * the reports state it.  At exit the results are written to the file
 * named by PERFCTR_REGIONS_FILE (what `perfex --regions -- ./app` sets
 * and then prints), or printed to stderr when it is not set.
 *
 * Thread safety: begin and end are thread-safe and lock-free after a
 * thread's first call; a name is matched by pointer first, then by
 * content.  Not async-signal-safe.
 */
#ifndef PERFCTR_REGION_H
#define PERFCTR_REGION_H

#include <stdio.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * perfctr_region_begin() - enter region @name in the calling thread.
 * Return: 0, -EINVAL (NULL name, nesting deeper than 64, more than 256
 * regions in the thread) or -ENOMEM.  When the counters cannot be set up
 * the region still counts its calls (and the reason is logged once).
 */
PERFCTR_API int perfctr_region_begin(const char *name);

/**
 * perfctr_region_end() - leave region @name, which must be the innermost
 * open region of the thread.  Return: 0 or -EINVAL (not the innermost).
 */
PERFCTR_API int perfctr_region_end(const char *name);

/**
 * perfctr_region_write() - write the results so far to @path (NULL: the
 * PERFCTR_REGIONS_FILE file).  Done at exit anyway.  The format is text:
 * docs/regions.md.  Return: 0 or a negative errno.
 */
PERFCTR_API int perfctr_region_write(const char *path);

/**
 * perfctr_region_report() - print a results file as one table per region
 * (a row per thread and a total; counts with the measured cost of an
 * empty begin/end pair subtracted).  Return: the number of regions, or a
 * negative errno (-EINVAL: not a results file).
 */
PERFCTR_API int perfctr_region_report(const char *path, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_REGION_H */
