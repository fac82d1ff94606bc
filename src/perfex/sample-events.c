// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The sampled events of perfex record and perfex top: one way to turn the
 * -e's into attrs, so that a sample means the same in a file and on the
 * screen.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include <perfctr/event.h>
#include <perfctr/sampler.h>
#include <perfctr/session.h>

#include "perfex.h"
#include "sample-events.h"

/* Without -c or -F, for a counter that is not exact: perf's default. */
#define DEFAULT_FREQ 4000

/*
 * How often the event samples.  A period= or freq= of the event's own
 * text first, as perf takes it (over -c, -F and the default: one event
 * of a list can sample at its own rate); then -c, then -F; with none,
 * every event where the count is exact (a tracepoint, a breakpoint, a
 * uprobe: each one is something that happened), else DEFAULT_FREQ per
 * second.  The rate is whole either way: a period, or a frequency.
 */
static void set_rate(const struct sample_events *se,
		     struct perf_event_attr *attr, const char *pmu)
{
	bool exact = attr->type == PERF_TYPE_TRACEPOINT ||
		     attr->type == PERF_TYPE_BREAKPOINT ||
		     (pmu && !strcmp(pmu, "uprobe"));

	/* sample_freq shares sample_period's place: set by either term. */
	if (attr->sample_period)
		return;
	attr->freq = 0;
	attr->sample_period = 0;
	if (se->period) {
		attr->sample_period = se->period;
	} else if (se->freq || !exact) {
		attr->freq = 1;
		attr->sample_freq = se->freq ? se->freq : DEFAULT_FREQ;
	} else {
		attr->sample_period = 1;
	}
}

/* What each sample holds, and which records the first event carries. */
static void set_fields(const struct sample_events *se,
		       struct perf_event_attr *attr, bool first)
{
	/* PERIOD is dropped by the sampler where it would make every
	 * event a sample (docs/kernel-notes.md 2). */
	attr->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			     PERF_SAMPLE_PERIOD;
	/* DWARF as perf records it: the kernel's callchain for the kernel
	 * frames only, the user frames unwound later from a copy of the
	 * registers and the top of the stack. */
	if (se->callchain)
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (se->dwarf) {
		attr->sample_type |= PERF_SAMPLE_REGS_USER |
				     PERF_SAMPLE_STACK_USER;
		attr->sample_regs_user = perfctr_user_regs_mask();
		attr->sample_stack_user = se->stack_size;
		attr->exclude_callchain_user = 1;
	}
	/* The tracepoint's fields, as perf records them: perf report sorts
	 * tracepoint-only files by them by default. */
	if (se->raw && attr->type == PERF_TYPE_TRACEPOINT)
		attr->sample_type |= PERF_SAMPLE_RAW;
	if (first) {
		/* One event carries the side-band records. */
		attr->mmap = 1;
		attr->mmap2 = 1;
		attr->comm = 1;
		attr->comm_exec = 1;
		attr->task = 1;
		/* Unwinders find a binary's CFI index (.eh_frame_hdr) in
		 * its read-only mapping, not the executable one. */
		attr->mmap_data = se->dwarf;
	}
	attr->sample_id_all = 1;
	if (se->identifier)
		attr->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (se->clockid >= 0) {
		attr->use_clockid = 1;
		attr->clockid = se->clockid;
	}
}

/* Event @i of @list (expanded event @e of all) added to the sampler, with
 * its filter and cgroup.  Return the sampler's index or a negative errno. */
static int add_event(const struct sample_events *se,
		     const struct perfctr_evlist *list, size_t i, size_t e,
		     const char *filter)
{
	struct perfctr_sampler *sampler = *se->sampler;
	struct perf_event_attr attr = *perfctr_evlist__attr(list, i);
	int r;

	set_rate(se, &attr, perfctr_evlist__pmu(list, i));
	set_fields(se, &attr, e == 0);
	r = perfctr_sampler__add_attr(sampler, &attr,
				      perfctr_evlist__name(list, i));
	if (r >= 0 && filter)
		r = perfctr_sampler__set_filter(sampler, (size_t)r, filter);
	if (r >= 0 && se->event_cgroups && e < se->nr_event_cgroups)
		r = perfctr_sampler__set_cgroup(sampler, (size_t)r,
						se->event_cgroups[e]);
	return r;
}

/*
 * Add the events of @spec (and its @filter) to the sampler, made at the
 * first call; @index counts the events added so far, of every -e.
 */
static int add_events(const struct sample_events *se, const char *spec,
		      const char *filter, size_t *index)
{
	PERFCTR_OPTS(perfctr_parse_opts, popts,
		     .exclude_kernel = perfex_kernel_forbidden());
	struct perfctr_parse_error perr = { .sz = sizeof(perr), .column = -1 };
	struct perfctr_evlist *list = perfctr_evlist__new();
	size_t n;
	int r;

	if (!list) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	r = perfctr_evlist__parse(list, spec, &popts, &perr);
	if (r < 0) {
		perfctr_evlist__delete(list);
		return perfex_event_error(spec, &perr, r);
	}
	/* The events are valid: now the sampler that will open them. */
	if (!*se->sampler &&
	    !(*se->sampler = perfctr_sampler__new(se->sampler_opts))) {
		perfex_error("cannot set up sampling: %s", strerror(errno));
		perfctr_evlist__delete(list);
		return PERFEX_EXIT_INTERNAL;
	}
	n = perfctr_evlist__nr_events(list);
	for (size_t i = 0; i < n; i++) {
		r = add_event(se, list, i, *index + i, filter);
		if (r < 0) {
			perfex_error("cannot add event '%s': %s",
				     perfctr_evlist__name(list, i), strerror(-r));
			perfctr_evlist__delete(list);
			return PERFEX_EXIT_EVENT;
		}
	}
	*index += n;
	perfctr_evlist__delete(list);
	return 0;
}

int sample_events_open(const struct sample_events *se)
{
	size_t index = 0;
	int r, err;

	for (size_t i = 0; i < se->nr_specs; i++) {
		r = add_events(se, se->specs[i].text, se->specs[i].filter,
			       &index);
		if (r)
			return r;
	}
	if (!se->nr_specs && (r = add_events(se, "cycles", NULL, &index)))
		return r;
	err = perfctr_sampler__open(*se->sampler);
	if (!se->nr_specs && err < 0 && perfctr_errno_unsupported(-err)) {
		perfctr_sampler__delete(*se->sampler);
		*se->sampler = NULL;
		if (se->say_fallback)
			fprintf(stderr, "perfex: no hardware 'cycles' event here; sampling 'cpu-clock' instead\n");
		index = 0;
		r = add_events(se, "cpu-clock", NULL, &index);
		if (r)
			return r;
		err = perfctr_sampler__open(*se->sampler);
	}
	return err;
}
