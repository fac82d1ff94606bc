// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Derived metrics from counts, computed only from events that counted over
 * the same time (see include/perfctr/metric.h).
 */
#include <stdint.h>
#include <string.h>

#include <perfctr/metric.h>

#include "common/internal.h"

#define NO_EVENT ((size_t)-1)

/* Letters of the event modifiers (":u", ":ppp", ...). */
static bool is_modifier_suffix(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("ukhHGpSDIWPe", *s))
			return false;
	return true;
}

/* perf's aliases, reduced to one spelling so that pairs are found. */
static const struct {
	const char *alias;
	const char *name;
} aliases[] = {
	{ "cpu-cycles", "cycles" },
	{ "branch-instructions", "branches" },
	{ "idle-cycles-frontend", "stalled-cycles-frontend" },
	{ "idle-cycles-backend", "stalled-cycles-backend" },
	{ "faults", "page-faults" },
	{ "cs", "context-switches" },
	{ "migrations", "cpu-migrations" },
};

struct name_parts {
	char base[128];
	const char *mods;	/* "" when none */
};

static void split_name(const char *name, struct name_parts *parts)
{
	const char *colon = name ? strrchr(name, ':') : NULL;
	size_t len;
	size_t i;

	if (!name)
		name = "";
	if (colon && is_modifier_suffix(colon + 1)) {
		len = (size_t)(colon - name);
		parts->mods = colon + 1;
	} else {
		len = strlen(name);
		parts->mods = "";
	}
	if (len >= sizeof(parts->base))
		len = sizeof(parts->base) - 1;
	memcpy(parts->base, name, len);
	parts->base[len] = '\0';
	for (i = 0; i < ARRAY_SIZE(aliases); i++)
		if (!strcmp(parts->base, aliases[i].alias)) {
			pc_strlcpy(parts->base, aliases[i].name, sizeof(parts->base));
			break;
		}
}

static bool counted(const struct perfctr_metric_input *e)
{
	return e->count.status == PERFCTR_COUNT_OK && e->count.time_running > 0;
}

static bool full_time(const struct perfctr_metric_input *e)
{
	return e->count.time_running >= e->count.time_enabled;
}

bool perfctr_metric__together(const struct perfctr_metric_input *a,
			      const struct perfctr_metric_input *b)
{
	if (!a || !b || !counted(a) || !counted(b))
		return false;
	if (a->group == b->group)
		return true;
	return full_time(a) && full_time(b);
}

static bool is_clock(const char *base)
{
	return !strcmp(base, "task-clock") || !strcmp(base, "cpu-clock");
}

/*
 * The partner of event @self named @base: the same modifiers (any, for the
 * clocks, which measure time whatever the privilege level), measured
 * together with @self; one of its own group first.
 */
static size_t find_partner(const struct perfctr_metric_input *in, size_t nr,
			   size_t self, const char *base, const char *mods)
{
	size_t best = NO_EVENT;
	size_t i;

	for (i = 0; i < nr; i++) {
		struct name_parts p;

		if (i == self)
			continue;
		split_name(in[i].name, &p);
		if (strcmp(p.base, base))
			continue;
		if (!is_clock(base) && strcmp(p.mods, mods))
			continue;
		if (!perfctr_metric__together(&in[self], &in[i]))
			continue;
		if (in[i].group == in[self].group)
			return i;
		if (best == NO_EVENT)
			best = i;
	}
	return best;
}

static size_t find_clock(const struct perfctr_metric_input *in, size_t nr,
			 size_t self)
{
	size_t i = find_partner(in, nr, self, "task-clock", "");

	return i != NO_EVENT ? i : find_partner(in, nr, self, "cpu-clock", "");
}

/* Miss and stall ratios: event, the event it is a fraction of, the unit. */
static const struct {
	const char *event;
	const char *of;
	const char *name;
	const char *unit;
	enum perfctr_metric_id id;
} ratios[] = {
	{ "branch-misses", "branches", "branch-miss-ratio",
	  "% of all branches", PERFCTR_METRIC_MISS_RATIO },
	{ "cache-misses", "cache-references", "cache-miss-ratio",
	  "% of all cache refs", PERFCTR_METRIC_MISS_RATIO },
	{ "L1-dcache-load-misses", "L1-dcache-loads", "l1d-miss-ratio",
	  "% of all L1-dcache accesses", PERFCTR_METRIC_MISS_RATIO },
	{ "L1-icache-load-misses", "L1-icache-loads", "l1i-miss-ratio",
	  "% of all L1-icache accesses", PERFCTR_METRIC_MISS_RATIO },
	{ "LLC-load-misses", "LLC-loads", "llc-miss-ratio",
	  "% of all LL-cache accesses", PERFCTR_METRIC_MISS_RATIO },
	{ "dTLB-load-misses", "dTLB-loads", "dtlb-miss-ratio",
	  "% of all dTLB cache accesses", PERFCTR_METRIC_MISS_RATIO },
	{ "iTLB-load-misses", "iTLB-loads", "itlb-miss-ratio",
	  "% of all iTLB cache accesses", PERFCTR_METRIC_MISS_RATIO },
	{ "stalled-cycles-frontend", "cycles", "frontend-stall-ratio",
	  "% frontend cycles idle", PERFCTR_METRIC_STALL_RATIO },
	{ "stalled-cycles-backend", "cycles", "backend-stall-ratio",
	  "% backend cycles idle", PERFCTR_METRIC_STALL_RATIO },
};

struct emitter {
	struct perfctr_metric *out;
	size_t max_out;
	size_t nr;
};

static void emit(struct emitter *em, enum perfctr_metric_id id,
		 const char *name, const char *unit, double value,
		 size_t event, size_t other)
{
	if (em->nr < em->max_out) {
		struct perfctr_metric *m = &em->out[em->nr];

		m->id = id;
		m->name = name;
		m->unit = unit;
		m->value = value;
		m->event = event;
		m->other = other;
	}
	em->nr++;
}

/* The estimate over the whole enabled time (the clocks, which are software
 * events, always run all of it; this keeps the layer free of the core). */
static double scaled(const struct perfctr_metric_input *e)
{
	if (!e->count.time_running || e->count.time_running >= e->count.time_enabled)
		return (double)e->count.value;
	return (double)e->count.value * (double)e->count.time_enabled /
	       (double)e->count.time_running;
}

/* Raw values: partners counted over the same time, so their ratio needs no
 * scaling (and scaling both would cancel out anyway). */
static double raw(const struct perfctr_metric_input *e)
{
	return (double)e->count.value;
}

static void event_metrics(const struct perfctr_metric_input *in, size_t nr,
			  size_t i, double wall_ns, struct emitter *em)
{
	const struct perfctr_metric_input *e = &in[i];
	size_t before = em->nr;
	struct name_parts p;
	size_t j, k;

	if (!counted(e))
		return;
	split_name(e->name, &p);

	if (is_clock(p.base)) {
		if (wall_ns > 0)
			emit(em, PERFCTR_METRIC_CPUS_UTILIZED, "cpus-utilized",
			     "CPUs utilized", scaled(e) / wall_ns,
			     i, NO_EVENT);
		return;
	}
	if (!strcmp(p.base, "cycles")) {
		j = find_clock(in, nr, i);
		if (j != NO_EVENT && in[j].count.value)
			emit(em, PERFCTR_METRIC_GHZ, "ghz", "GHz",
			     raw(e) / raw(&in[j]), i, j);
	}
	if (!strcmp(p.base, "instructions")) {
		j = find_partner(in, nr, i, "cycles", p.mods);
		if (j != NO_EVENT && in[j].count.value)
			emit(em, PERFCTR_METRIC_IPC, "ipc", "insn per cycle",
			     raw(e) / raw(&in[j]), i, j);
		if (j != NO_EVENT && e->count.value)
			emit(em, PERFCTR_METRIC_CPI, "cpi", "cycles per insn",
			     raw(&in[j]) / raw(e), i, j);
	}
	for (k = 0; k < ARRAY_SIZE(ratios); k++) {
		if (strcmp(p.base, ratios[k].event))
			continue;
		j = find_partner(in, nr, i, ratios[k].of, p.mods);
		if (j != NO_EVENT && in[j].count.value)
			emit(em, ratios[k].id, ratios[k].name, ratios[k].unit,
			     100.0 * raw(e) / raw(&in[j]), i, j);
	}
	/* Everything without a metric of its own gets its rate. */
	if (em->nr == before && strcmp(p.base, "cycles")) {
		j = find_clock(in, nr, i);
		if (j != NO_EVENT && in[j].count.value)
			emit(em, PERFCTR_METRIC_RATE, "rate", "/sec",
			     raw(e) * 1e9 / raw(&in[j]), i, j);
	}
}

int perfctr_metric__compute(const struct perfctr_metric_input *in,
			    size_t nr_in, double wall_ns,
			    struct perfctr_metric *out, size_t max_out)
{
	struct emitter em = { .out = out, .max_out = max_out };
	size_t i;

	if ((!in && nr_in) || (!out && max_out))
		return pc_err(EINVAL);
	for (i = 0; i < nr_in; i++)
		event_metrics(in, nr_in, i, wall_ns, &em);
	return em.nr > INT32_MAX ? INT32_MAX : (int)em.nr;
}
