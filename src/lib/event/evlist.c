// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The evlist object: an ordered list of attrs with names and groups. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "event/evlist.h"

struct perfctr_evlist *perfctr_evlist__new(void)
{
	struct perfctr_evlist *list = calloc(1, sizeof(*list));

	if (!list)
		errno = ENOMEM;
	return list;
}

static void evsel_free(struct pc_evsel *ev)
{
	free(ev->name);
	free(ev->pmu);
	free(ev->unit);
	free(ev->cpus);
}

void pc_evlist_truncate(struct perfctr_evlist *list, size_t nr)
{
	while (list->nr > nr)
		evsel_free(&list->events[--list->nr]);
}

void perfctr_evlist__delete(struct perfctr_evlist *list)
{
	if (!list)
		return;
	pc_evlist_truncate(list, 0);
	free(list->events);
	free(list);
}

static int grow(struct perfctr_evlist *list)
{
	struct pc_evsel *events;
	size_t cap;

	if (list->nr < list->cap)
		return 0;
	cap = list->cap ? list->cap * 2 : 8;
	events = realloc(list->events, cap * sizeof(*events));
	if (!events)
		return -ENOMEM;
	list->events = events;
	list->cap = cap;
	return 0;
}

/*
 * Groups are contiguous: a member may only join the group of the last
 * event, so consumers can open a group by walking forward from its leader.
 */
static bool leader_ok(const struct perfctr_evlist *list, size_t leader)
{
	if (leader == (size_t)-1)
		return true;
	return list->nr && leader < list->nr &&
	       list->events[list->nr - 1].leader == leader;
}

int pc_evlist_push(struct perfctr_evlist *list, const struct pc_evsel_desc *desc)
{
	struct pc_evsel ev;
	bool failed = false;

	if (!list || !desc->attr || !desc->name || !leader_ok(list, desc->leader))
		return pc_err(EINVAL);
	if (grow(list))
		return pc_err(ENOMEM);
	memset(&ev, 0, sizeof(ev));
	ev.attr = *desc->attr;
	ev.attr.size = sizeof(ev.attr);
	ev.name = pc_strdup_or_null(desc->name, &failed);
	ev.pmu = pc_strdup_or_null(desc->pmu ? desc->pmu : "", &failed);
	ev.unit = pc_strdup_or_null(desc->unit ? desc->unit : "", &failed);
	ev.cpus = pc_strdup_or_null(desc->cpus, &failed);
	ev.scale = desc->scale != 0.0 ? desc->scale : 1.0;
	ev.leader = desc->leader == (size_t)-1 ? list->nr : desc->leader;
	if (failed) {
		evsel_free(&ev);
		return pc_err(ENOMEM);
	}
	list->events[list->nr] = ev;
	return (int)list->nr++;
}

/* The PMU a ready-made attr belongs to, by its type (fixed types only). */
static const char *pmu_of_type(uint32_t type)
{
	switch (type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		return "cpu";
	case PERF_TYPE_SOFTWARE:
		return "software";
	case PERF_TYPE_TRACEPOINT:
		return "tracepoint";
	case PERF_TYPE_BREAKPOINT:
		return "breakpoint";
	default:
		return "";
	}
}

int perfctr_evlist__add_attr(struct perfctr_evlist *list,
			     const struct perf_event_attr *attr,
			     const char *name, size_t leader)
{
	struct pc_evsel_desc desc = {
		.attr = attr,
		.name = name,
		.leader = leader,
	};

	if (!attr)
		return pc_err(EINVAL);
	desc.pmu = pmu_of_type(attr->type);
	return pc_evlist_push(list, &desc);
}

size_t perfctr_evlist__nr_events(const struct perfctr_evlist *list)
{
	return list ? list->nr : 0;
}

static const struct pc_evsel *evsel(const struct perfctr_evlist *list,
				    size_t idx)
{
	return list && idx < list->nr ? &list->events[idx] : NULL;
}

const struct perf_event_attr *perfctr_evlist__attr(const struct perfctr_evlist *list,
						   size_t idx)
{
	const struct pc_evsel *ev = evsel(list, idx);

	return ev ? &ev->attr : NULL;
}

const char *perfctr_evlist__name(const struct perfctr_evlist *list, size_t idx)
{
	const struct pc_evsel *ev = evsel(list, idx);

	return ev ? ev->name : NULL;
}

const char *perfctr_evlist__pmu(const struct perfctr_evlist *list, size_t idx)
{
	const struct pc_evsel *ev = evsel(list, idx);

	return ev ? ev->pmu : NULL;
}

size_t perfctr_evlist__leader(const struct perfctr_evlist *list, size_t idx)
{
	const struct pc_evsel *ev = evsel(list, idx);

	return ev ? ev->leader : (size_t)-1;
}

double perfctr_evlist__scale(const struct perfctr_evlist *list, size_t idx)
{
	const struct pc_evsel *ev = evsel(list, idx);

	return ev ? ev->scale : 1.0;
}

const char *perfctr_evlist__unit(const struct perfctr_evlist *list, size_t idx)
{
	const struct pc_evsel *ev = evsel(list, idx);

	return ev ? ev->unit : NULL;
}

const char *perfctr_evlist__cpus(const struct perfctr_evlist *list, size_t idx)
{
	const struct pc_evsel *ev = evsel(list, idx);

	return ev ? ev->cpus : NULL;
}
