// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench/python-count: the C side of bench/python, the reference the
 * Python module is measured against in the same run.  For one group of
 * four software events on the calling thread it prints, in ns per
 * operation over OPS operations:
 *
 *   with   perfctr_session__reset + __start, then __stop + __read: what
 *          `with perfctr.count(...)` does on entry and exit of a block
 *          (the session attached once, as the Python object keeps it)
 *   once   the whole life of such a count: __new, __add_events, target,
 *          __attach, reset, start, stop, read, __delete
 *   read   vperfctr_read_fast() of the same four events: what
 *          ThreadCounter.read_into() calls
 *
 * Built as a shared object over the tree's libperfctr.so, the library the
 * module uses, and called through ctypes from the Python side of the
 * benchmark (bench/python-count.py) in batches interleaved with the
 * Python ones: the same process, the same moment, the same library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfctr/perfctr.h"

#define EVENTS "{task-clock,context-switches,page-faults,cpu-migrations}"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static struct perfctr_session *attached(struct perfctr_target **target)
{
	struct perfctr_session *s = perfctr_session__new(NULL);

	*target = perfctr_target__new_self();
	if (!s || !*target || perfctr_session__add_events(s, EVENTS, NULL) != 4 ||
	    perfctr_session__attach(s, *target) < 0) {
		fprintf(stderr, "python-count: cannot count %s\n", EVENTS);
		exit(1);
	}
	return s;
}

double bench_with(long ops)
{
	struct perfctr_target *target;
	struct perfctr_session *s = attached(&target);
	double t0 = now_ns();

	for (long i = 0; i < ops; i++) {
		perfctr_session__reset(s);
		perfctr_session__start(s);
		perfctr_session__stop(s);
		perfctr_session__read(s);
	}
	t0 = (now_ns() - t0) / ops;
	perfctr_session__delete(s);
	perfctr_target__delete(target);
	return t0;
}

double bench_once(long ops)
{
	double t0 = now_ns();

	for (long i = 0; i < ops; i++) {
		struct perfctr_target *target;
		struct perfctr_session *s = attached(&target);

		perfctr_session__reset(s);
		perfctr_session__start(s);
		perfctr_session__stop(s);
		perfctr_session__read(s);
		perfctr_session__delete(s);
		perfctr_target__delete(target);
	}
	return (now_ns() - t0) / ops;
}

double bench_read(long ops)
{
	static const char *const names[] = { "task-clock", "context-switches",
					     "page-faults", "cpu-migrations" };
	struct vperfctr_control c;
	struct perfctr_sum_ctrs sum;
	struct vperfctr *v = vperfctr_open(0, 1);
	double t0;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.cpu_control.nractrs = 4;
	for (int i = 0; i < 4; i++)
		c.event[i] = names[i];
	if (!v || vperfctr_control(v, &c) < 0) {
		fprintf(stderr, "python-count: cannot open the vperfctr state\n");
		return -1;
	}
	t0 = now_ns();
	for (long i = 0; i < ops; i++)
		vperfctr_read_fast(v, &sum);
	t0 = (now_ns() - t0) / ops;
	vperfctr_unlink(v);
	vperfctr_close(v);
	return t0;
}
