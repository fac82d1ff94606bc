/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The sampled events of perfex record and perfex top (sample-events.c):
 * the -e's parsed, each event's attr made and added to the subcommand's
 * sampler, and the sampler opened.  What the two differ in is a field of
 * struct sample_events; the sample's fields and the side-band records
 * are the same for both.
 */
#ifndef PERFEX_SAMPLE_EVENTS_H
#define PERFEX_SAMPLE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfctr_sampler;
struct perfctr_sampler_opts;
struct perfctr_target;

/* One -e: its events and the --filter that followed it (NULL: none). */
struct sample_spec {
	const char *text;
	const char *filter;
};

struct sample_events {
	/* The -e's in order; none: cycles, else cpu-clock (perf's choice). */
	const struct sample_spec *specs;
	size_t nr_specs;
	/* The subcommand's sampler, made with @sampler_opts once the first
	 * -e has parsed, so that a bad event is said before any failure of
	 * the sampler's. */
	struct perfctr_sampler **sampler;
	const struct perfctr_sampler_opts *sampler_opts;
	uint64_t period;	/* -c; 0: none */
	uint64_t freq;		/* -F; 0: none */
	bool callchain;		/* the kernel's callchain in each sample */
	bool dwarf;		/* and the user registers and stack, to unwind */
	uint32_t stack_size;	/* user stack bytes per sample (dwarf) */
	bool raw;		/* a tracepoint's fields in its samples */
	bool identifier;	/* each sample says its event (a file holds
				 * other events too) */
	int clockid;		/* -1: the kernel's perf clock */
	/* Expanded event e counts in event_cgroups[e] (e < nr_event_cgroups;
	 * NULL: the target's), none when NULL. */
	struct perfctr_target *const *event_cgroups;
	size_t nr_event_cgroups;
	bool say_fallback;	/* a line on stderr when cpu-clock replaces cycles */
};

/*
 * Add the events of every -e to the sampler (made at the first) and open
 * it.  Return 0, an exit status (an event's error, said), or the
 * negative errno of perfctr_sampler__open() for the caller to explain.
 */
int sample_events_open(const struct sample_events *se);

#endif
