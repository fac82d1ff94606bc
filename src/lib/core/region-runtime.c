/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The process-global runtime of the region markers (perfctr/region.h).
 *
 * The markers are the one part of the library that acts for the whole
 * process without being asked call by call.  All of that is here, and
 * this is its whole contract:
 *
 * - Environment: PERFCTR_EVENTS is read once, by region_runtime_start(),
 *   at the process's first region call; PERFCTR_REGIONS_FILE is read each
 *   time results are written without a path (at exit, or
 *   perfctr_region_write(NULL)).  Nothing else is read, nothing written.
 * - Exit: region_runtime_start() registers one atexit() handler.  At
 *   exit(3) (not _exit(2), not a fatal signal) it writes the results to
 *   PERFCTR_REGIONS_FILE, or prints them as tables on stderr when that is
 *   unset or empty: the only output the library makes on its own
 *   (warnings go through perfctr_set_print()).  It holds the regions' lock
 *   while it reads the tables, as perfctr_region_write() does.
 * - File descriptors: every fd opened here or by the markers is
 *   close-on-exec (perf_event fds through the sys layer, files with "e"),
 *   and the exit report is made in memory, without a temporary file.  A
 *   program that forks and execs while it counts regions hands nothing of
 *   ours to the new program.
 * - Nothing else: no signal handler, no thread, no fork.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/region-runtime.h"
#include "perfctr/region.h"

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

const char *region_runtime_results_path(void)
{
	return env("PERFCTR_REGIONS_FILE");
}

static void at_exit(void)
{
	const char *path = region_runtime_results_path();
	char *buf = NULL;
	size_t len = 0;
	FILE *mem, *in;
	int rc;

	if (path) {
		perfctr_region_write(path);
		return;
	}
	/* Not under perfex: the tables on stderr, made from the results
	 * written to memory (the same text perfex reads from the file). */
	mem = open_memstream(&buf, &len);
	if (!mem)
		return;
	rc = region_results_write(mem);
	if (fclose(mem) || rc < 0) {
		free(buf);
		return;
	}
	in = fmemopen(buf, len, "r");
	if (in) {
		region_results_report(in, stderr);
		fclose(in);
	}
	free(buf);
}

const char *region_runtime_start(void)
{
	atexit(at_exit);
	return env("PERFCTR_EVENTS");
}
