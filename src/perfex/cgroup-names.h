/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * -G NAME[,NAME...] after events, perf's rule, for perfex stat and perfex
 * record alike: which cgroup each event counts in.
 */
#ifndef PERFEX_CGROUP_NAMES_H
#define PERFEX_CGROUP_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include <perfctr/event.h>

/* One -G given after events. */
struct cgroup_arg {
	const char *names;	/* the option's argument, a comma list */
	size_t nr_specs;	/* the -e given before it */
};

/* Where each event of the -e's goes: names[e] for expanded event e (in
 * the order of the -e's and of their expansion), NULL for none. */
struct cgroup_plan {
	char **names;
	size_t nr_events;
	size_t *first;		/* first[i]: -e i's first event; first[nr] */
	size_t nr_specs;
};

/*
 * Give the events of @specs (the -e texts, @nr_specs of them) the names
 * of the -G options @args, perf's way: every name, empty ones included,
 * goes to the next event in the order of the expanded events (an empty
 * name leaves its event without a cgroup), and only to an event given
 * before its -G; when the first -G has a single name, it goes to every
 * event given before it.  @popts: how the -e's are parsed (NULL for the
 * machine's).  Fills @plan (cgroup_plan_free() it).
 * Return: -1, or perfex's exit status with the message printed.
 */
int cgroup_plan_make(struct cgroup_plan *plan, const char *const *specs,
		     size_t nr_specs, const struct cgroup_arg *args,
		     size_t nr_args, const struct perfctr_parse_opts *popts);

void cgroup_plan_free(struct cgroup_plan *plan);

/* True when the events of -e @spec do not all have one cgroup. */
bool cgroup_plan_splits(const struct cgroup_plan *plan, size_t spec);

/*
 * -e @spec cut into the pieces that have one cgroup each: its events and
 * groups as written (commas outside groups and outside a PMU's terms),
 * *@pieces malloc'ed texts with *@cgroups their names (NULL: none).
 * Refused with a message when a group or a wildcard would be cut: the
 * kernel counts a group's members in the group's cgroup.
 * Return: -1, or perfex's exit status.
 */
int cgroup_plan_split(const struct cgroup_plan *plan, size_t spec,
		      const char *text, const struct perfctr_parse_opts *popts,
		      char ***pieces, char ***cgroups, size_t *nr_pieces);

#endif /* PERFEX_CGROUP_NAMES_H */
