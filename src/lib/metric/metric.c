// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Derived metrics from counts, computed only from events that counted over
 * the same time (see include/perfctr/metric.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <perfctr/metric.h>

#include "common/internal.h"
#include "metric/table.h"

#define NO_EVENT ((size_t)-1)

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
	if (colon && pc_metrics_is_modifiers(colon + 1)) {
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

/* The estimate over the whole enabled time.  Partners counted together
 * have the same running fraction, so their ratio is that of the raw
 * values; the clocks, software events, always run all of it. */
static double scaled(const struct perfctr_metric_input *e)
{
	if (!e->count.time_running || e->count.time_running >= e->count.time_enabled)
		return (double)e->count.value;
	return (double)e->count.value * (double)e->count.time_enabled /
	       (double)e->count.time_running;
}

/*
 * The generic metrics are the built-in table's entries (generic.json, C
 * data since the build), evaluated by the one expression evaluator.  A
 * metric belongs to the event its expression names first: that name is
 * found for each entry once per process, by the lexer alone, and an
 * expression is parsed the first time an event it belongs to is counted
 * (a count of task-clock alone parses one of the table's expressions).
 */
struct generic {
	const struct pc_generic_metric *def;
	char anchor[128];		/* base name of its first event, "" none */
	/* Set at its first use, under generic_lock, then only read: */
	bool parsed;
	struct pc_mx *mx;		/* NULL: it does not parse */
	enum perfctr_metric_id id;
	double scale;
	char unit[64];
};
static struct generic *generics;
static size_t nr_generics;
static pthread_once_t generic_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t generic_lock = PTHREAD_MUTEX_INITIALIZER;

/* The identifier of a generic metric, from its name and groups. */
static enum perfctr_metric_id generic_id(const struct pc_generic_metric *d)
{
	static const struct {
		const char *name;
		enum perfctr_metric_id id;
	} ids[] = {
		{ "cpus-utilized", PERFCTR_METRIC_CPUS_UTILIZED },
		{ "ghz", PERFCTR_METRIC_GHZ },
		{ "ipc", PERFCTR_METRIC_IPC },
		{ "cpi", PERFCTR_METRIC_CPI },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ids); i++)
		if (!strcmp(d->name, ids[i].name))
			return ids[i].id;
	if (strstr(d->groups, "generic_stall_ratio"))
		return PERFCTR_METRIC_STALL_RATIO;
	return PERFCTR_METRIC_MISS_RATIO;
}

static void load_generic(void)
{
	struct generic *g = calloc(pc_nr_generic_metrics, sizeof(*g));
	size_t i;

	if (!g)
		return;
	for (i = 0; i < pc_nr_generic_metrics; i++) {
		char first[sizeof(g[i].anchor)];
		struct name_parts parts;

		g[i].def = &pc_generic_metrics[i];
		if (!pc_mx_first_id(g[i].def->expr, 0, first, sizeof(first))) {
			split_name(first, &parts);
			pc_strlcpy(g[i].anchor, parts.base, sizeof(g[i].anchor));
		}
	}
	generics = g;
	nr_generics = pc_nr_generic_metrics;
}

/* Generic metric @g's expression, parsed on first use (with its unit). */
static const struct pc_mx *generic_expr(struct generic *g)
{
	struct pc_mx_error err;
	const struct pc_mx *mx;

	pthread_mutex_lock(&generic_lock);
	if (!g->parsed) {
		g->mx = pc_mx_parse(g->def->expr, 0, &err);
		g->id = generic_id(g->def);
		g->scale = pc_metrics_scale_unit(g->def->scale_unit, g->unit,
						 sizeof(g->unit));
		g->parsed = true;
	}
	mx = g->mx;
	pthread_mutex_unlock(&generic_lock);
	return mx;
}

struct bind_ctx {
	const struct perfctr_metric_input *in;
	size_t nr;
	size_t self;
	const char *mods;
	double wall_ns;
	size_t other;		/* the first partner bound */
};

/* An identifier of a generic metric: the event itself, a partner of the
 * same modifiers counted with it, or the wall time. */
static int bind_lookup(void *vctx, enum pc_mx_ref ref, const char *id,
		       double *v)
{
	struct bind_ctx *ctx = vctx;
	struct name_parts self, want;
	size_t j;

	if (ref != PC_MX_VALUE)
		return -ENOENT;
	if (!strcmp(id, "duration_time")) {
		if (ctx->wall_ns <= 0)
			return -ENODATA;
		*v = ctx->wall_ns * 1e-9;
		return 0;
	}
	split_name(ctx->in[ctx->self].name, &self);
	split_name(id, &want);
	if (!strcmp(self.base, want.base)) {
		*v = scaled(&ctx->in[ctx->self]);
		return 0;
	}
	j = find_partner(ctx->in, ctx->nr, ctx->self, want.base, ctx->mods);
	if (j == NO_EVENT)
		return -ENOENT;
	if (ctx->other == NO_EVENT)
		ctx->other = j;
	*v = scaled(&ctx->in[j]);
	return 0;
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
	for (k = 0; k < nr_generics; k++) {
		struct generic *g = &generics[k];
		const struct pc_mx *mx;
		struct bind_ctx ctx = { .in = in, .nr = nr, .self = i,
					.mods = p.mods, .wall_ns = wall_ns,
					.other = NO_EVENT };
		double v;

		/* a metric belongs to the event its expression names first */
		if (!g->anchor[0] || strcmp(g->anchor, p.base))
			continue;
		mx = generic_expr(g);
		if (!mx || pc_mx_eval(mx, bind_lookup, &ctx, &v) || !isfinite(v))
			continue;
		emit(em, g->id, g->def->name, g->unit, v * g->scale, i,
		     ctx.other);
	}
	/* Everything without a metric of its own gets its rate (a rate is
	 * per-event presentation, not a metric of the tables). */
	if (em->nr == before && strcmp(p.base, "cycles") && !is_clock(p.base)) {
		j = find_clock(in, nr, i);
		if (j != NO_EVENT && in[j].count.value)
			emit(em, PERFCTR_METRIC_RATE, "rate", "/sec",
			     (double)e->count.value * 1e9 /
			     (double)in[j].count.value, i, j);
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
	pthread_once(&generic_once, load_generic);
	for (i = 0; i < nr_in; i++)
		event_metrics(in, nr_in, i, wall_ns, &em);
	return em.nr > INT32_MAX ? INT32_MAX : (int)em.nr;
}
