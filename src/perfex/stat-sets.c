// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex stat with event sets: each -e is one set, taking turns by
 * --switch-interval MS (run time of a thread target, wall time of CPUs)
 * and/or --switch-after N:EVENT (after N occurrences of EVENT, which a set
 * must count).  The sets are ordinary configuration of the one stat
 * session (cmd-stat.c): every target, aggregation and output mode works
 * with them.  Here: making the sets, and reading back their accounting and
 * each event's estimate with its error (docs/estimates.md) for the output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <perfctr/perfctr.h>
#include <perfctr/set.h>

#include "perfex.h"
#include "stat.h"

/* Add @spec to the session as set @set, made with the switch policy. */
int stat_sets_add(struct perfctr_session *s, const struct stat_config *cfg,
		  uint16_t set, const char *spec, struct perfctr_parse_error *err)
{
	PERFCTR_OPTS(perfctr_set_desc, desc, .id = set);
	int ret;

	if (cfg->switch_interval_ms) {
		desc.flags = PERFCTR_SET_SWITCH_TIMEOUT;
		desc.timeout_ns = (uint64_t)cfg->switch_interval_ms * 1000000;
	}
	ret = perfctr_session__create_set(s, &desc);
	if (ret < 0)
		return ret;
	return perfctr_session__add_events_to_set(s, set, spec, err);
}

/*
 * --switch-after N:EVENT: every event of that name switches its set away
 * after N occurrences.  Return: -1, or perfex's exit status.
 */
int stat_sets_switch_after(struct perfctr_session *s,
			   const struct stat_config *cfg)
{
	int switchers = 0, err;

	if (!cfg->switch_after_event)
		return -1;
	for (size_t e = 0; e < perfctr_session__nr_events(s); e++) {
		if (strcmp(perfctr_session__event_name(s, e),
			   cfg->switch_after_event))
			continue;
		err = perfctr_session__switch_after(s, e, cfg->switch_after_n, 1);
		if (err) {
			perfex_error("option '--switch-after': cannot switch "
				     "after '%s': %s", cfg->switch_after_event,
				     strerror(-err));
			return PERFEX_EXIT_USAGE;
		}
		switchers++;
	}
	if (!switchers) {
		perfex_error("option '--switch-after': no set counts '%s'",
			     cfg->switch_after_event);
		perfex_hint("name an event of one of the -e, as perfex prints it");
		return PERFEX_EXIT_USAGE;
	}
	return -1;
}

/*
 * After a run: each set's accounting and each row's estimate.
 * Return: 0 or -ENOMEM.
 */
int stat_sets_collect(struct perfctr_session *s, struct stat_report *r)
{
	size_t n = perfctr_session__nr_sets(s);
	struct stat_set *sets = calloc(n ? n : 1, sizeof(*sets));
	size_t k = 0;

	if (!sets)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct perfctr_set_info info = { .sz = sizeof(info) };
		int id = perfctr_session__set_id(s, i);

		if (id < 0 || perfctr_session__set_info(s, (uint16_t)id, &info) ||
		    !info.nr_events)
			continue;
		sets[k++] = (struct stat_set){
			.id = id,
			.runs = info.runs,
			.active_ns = info.active_ns,
			.overflows = info.overflows,
		};
	}
	free(r->sets);
	r->sets = sets;
	r->nr_sets = k;
	for (size_t e = 0; e < r->nr_events; e++) {
		struct stat_event *ev = &r->events[e];

		memset(&ev->est, 0, sizeof(ev->est));
		ev->est.sz = sizeof(ev->est);
		ev->est.status = PERFCTR_ESTIMATE_NOT_COUNTED;
		if (ev->session_idx != STAT_NO_IDX)
			perfctr_session__estimate(s, ev->session_idx, &ev->est);
	}
	return 0;
}
