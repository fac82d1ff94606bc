/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The evlist object's private layout, shared by the files of the event
 * layer (the parser appends through pc_evlist_push()).  Not installed.
 */
#ifndef PERFCTR_EVENT_EVLIST_H
#define PERFCTR_EVENT_EVLIST_H

#include <linux/perf_event.h>
#include <stddef.h>

#include "perfctr/event.h"

struct pc_evsel {
	struct perf_event_attr attr;
	char *name;
	char *pmu;
	char *unit;		/* never NULL once pushed */
	char *cpus;		/* NULL: every CPU */
	double scale;
	size_t leader;
};

struct perfctr_evlist {
	struct pc_evsel *events;
	size_t nr;
	size_t cap;
};

/* What a parser hands to pc_evlist_push(); strings are copied. */
struct pc_evsel_desc {
	const struct perf_event_attr *attr;
	const char *name;
	const char *pmu;
	const char *unit;	/* NULL: "" */
	const char *cpus;	/* NULL: every CPU */
	double scale;		/* 0: 1.0 */
	size_t leader;		/* (size_t)-1: a group of its own */
};

/* Append one event.  Return its index or -EINVAL/-ENOMEM (list unchanged). */
int pc_evlist_push(struct perfctr_evlist *list, const struct pc_evsel_desc *desc);

/* Drop the events from index @nr on (rollback of a failed parse). */
void pc_evlist_truncate(struct perfctr_evlist *list, size_t nr);

#endif /* PERFCTR_EVENT_EVLIST_H */
