/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What event sets counted: a rotated event's whole time, the sets'
 * accounting and the estimates of what each event would have counted
 * all the time.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "core/estimate.h"
#include "core/rotate.h"
#include "core/session-internal.h"
#include "core/set-internal.h"
#include "core/set-state.h"
#include "perfctr/set.h"

/* ---- results ------------------------------------------------------- */

/* The whole time of a rotated session on @unit (or summed over units):
 * the enabled time of every set's first group, as last read. */
static uint64_t whole_time(const struct perfctr_session *s, size_t unit)
{
	const struct pc_sets *sets = s->sets;
	uint64_t total = 0;

	for (size_t d = 0; d < sets->nr_defs; d++) {
		for (size_t g = 0; g < s->nr_groups; g++) {
			size_t lead = s->groups[g].members[0];

			if (pc_sets_event_set(s, lead) != sets->defs[d].id)
				continue;
			if (unit == PC_SETS_ALL_UNITS && s->has_carried[lead])
				total += s->carried[lead].time_enabled;
			for (size_t u = 0; u < s->nr_units; u++)
				if (unit == PC_SETS_ALL_UNITS || unit == u)
					total += pc_slot(s, lead, u)->count.time_enabled;
			break;
		}
	}
	return total;
}

void pc_sets_adjust_count(const struct perfctr_session *s, size_t idx,
			  struct perfctr_count *count, size_t unit)
{
	uint64_t whole;

	if (!s->sets || !(s->sets->rotated || s->sets->rotor))
		return;
	whole = whole_time(s, unit);
	count->time_enabled = pc_estimate_whole_time(count->time_enabled, whole);
}

int perfctr_session__set_info(const struct perfctr_session *s, uint16_t id,
			      struct perfctr_set_info *info)
{
	struct perfctr_set_info out;
	const struct set_def *d;
	struct pc_rotor_set_stats st = { 0 };
	int i;

	if (!s || !info || info->sz < offsetof(struct perfctr_set_info, runs))
		return pc_err(EINVAL);
	i = pc_sets_find_def(s->sets, id);
	if (i < 0)
		return pc_err(ENOENT);
	memset(&out, 0, sizeof(out));
	out.sz = info->sz;
	out.id = id;
	for (size_t e = 0; e < s->nr_events; e++) {
		if (pc_sets_event_set(s, e) != id)
			continue;
		out.nr_events++;
		if (s->events[e].leader == e)
			out.nr_groups++;
	}
	if (!s->sets) {
		memcpy(info, &out, info->sz < sizeof(out) ? info->sz : sizeof(out));
		return 0;
	}
	d = &s->sets->defs[i];
	out.flags = d->flags;
	out.timeout_ns = d->timeout_ns;
	st = d->carried;
	out.missed_switches = s->sets->carried_missed;
	if (s->sets->rotor && s->sets->rotor_set[i] != (size_t)-1) {
		struct pc_rotor_set_stats now;

		if (!pc_rotor__set_stats(s->sets->rotor, s->sets->rotor_set[i], &now)) {
			st.runs += now.runs;
			st.active_ns += now.active_ns;
			st.overflows += now.overflows;
			if (now.runs)
				st.last_ovfl_mask = now.last_ovfl_mask;
		}
		out.missed_switches += pc_rotor__missed(s->sets->rotor);
	}
	out.runs = st.runs;
	out.active_ns = st.active_ns;
	out.overflows = st.overflows;
	out.last_ovfl_mask = st.last_ovfl_mask;
	memcpy(info, &out, info->sz < sizeof(out) ? info->sz : sizeof(out));
	return 0;
}

int perfctr_session__set_last_overflows(const struct perfctr_session *s,
					uint16_t id, size_t *events, size_t n)
{
	const struct pc_sets *sets;
	size_t found = 0;
	bool now = false;
	int i;

	if (!s || (n && !events))
		return pc_err(EINVAL);
	sets = s->sets;
	i = pc_sets_find_def(sets, id);
	if (i < 0)
		return pc_err(ENOENT);
	if (!sets)
		return 0;
	/* This attach's runs when it made any, else the carried ones. */
	if (sets->rotor && sets->rotor_set[i] != (size_t)-1) {
		struct pc_rotor_set_stats st;

		now = !pc_rotor__set_stats(sets->rotor, sets->rotor_set[i], &st) &&
		      st.runs;
	}
	for (size_t e = 0; e < s->nr_events && e < sets->nr_ev; e++) {
		bool hit;

		if (pc_sets_event_set(s, e) != id)
			continue;
		hit = now ? pc_rotor__overflowed_last_run(sets->rotor, e)
			  : sets->ev[e].carried_last_ovfl;
		if (!hit)
			continue;
		if (found < n)
			events[found] = e;
		found++;
	}
	return found > INT_MAX ? INT_MAX : (int)found;
}

int perfctr_session__estimate(const struct perfctr_session *s, size_t idx,
			      struct perfctr_estimate *est)
{
	const struct pc_sets *sets;
	struct perfctr_slices *all;
	uint64_t total = 0;
	size_t nr;
	int ret;

	if (!s || idx >= s->nr_events || !est)
		return pc_err(EINVAL);
	sets = s->sets;
	if (!sets || !(sets->rotated || sets->rotor) || idx >= sets->nr_ev) {
		/* Not rotated: the kernel's times, one slice. */
		struct perfctr_count c;

		perfctr_session__count(s, idx, &c);
		return pc_estimate_multiplexed(c.value, c.time_running,
					       c.time_enabled, est);
	}
	nr = s->nr_events < sets->nr_ev ? s->nr_events : sets->nr_ev;
	all = calloc(nr, sizeof(*all));
	if (!all)
		return pc_err(ENOMEM);
	for (size_t e = 0; e < nr; e++) {
		all[e] = sets->ev[e].carried;
		if (sets->rotor)
			perfctr_slices__merge(&all[e], pc_rotor__slices(sets->rotor, e));
	}
	for (size_t d = 0; d < sets->nr_defs; d++) {
		total += sets->defs[d].carried.unit_ns;
		if (sets->rotor && sets->rotor_set[d] != (size_t)-1) {
			struct pc_rotor_set_stats st;

			if (!pc_rotor__set_stats(sets->rotor, sets->rotor_set[d], &st))
				total += st.unit_ns;
		}
	}
	ret = pc_estimate_rotated(all, nr, idx, total, est);
	free(all);
	return ret;
}
