/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Metric plans (see include/perfctr/metric.h): from the names asked for
 * to event groups, and from the counts read back to metric values.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/internal.h"
#include "metric/table.h"

#define MAX_DEPTH 32

struct plan_event {
	char *id;		/* as the expression names it */
	char *name;		/* as the session will name it */
	char *spec;		/* in the event syntax */
	const char *pmu;	/* NULL for the core PMU */
};

struct plan_metric {
	size_t def;		/* index in the tables */
	size_t *events;		/* indexes into plan->events */
	size_t nr_events;
	bool no_group;
	char missing[192];
	const char *missing_event;
};

struct group {
	size_t *events;
	size_t nr_events;
	bool grouped;
	char *text;
};

struct perfctr_metric_plan {
	struct perfctr_metrics *m;
	struct plan_metric *metrics;
	size_t nr_metrics;
	struct plan_event *events;
	size_t nr_events;
	struct group *groups;
	size_t nr_groups;
	char arm_pmu[64];
};

static void set_err(struct perfctr_metric_error *err, const char *metric,
		    int pos, const char *fmt, const char *arg)
{
	if (!err)
		return;
	pc_strlcpy(err->metric, metric ? metric : "", sizeof(err->metric));
	err->pos = pos;
	snprintf(err->msg, sizeof(err->msg), fmt, arg);
}

/* The kernel's name of the arm core PMU, whose raw codes the Arm tables
 * give: the first armv8/armv9 PMU in sysfs. */
static void find_arm_pmu(struct perfctr_metric_plan *p, const char *root)
{
	char path[4200];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices",
		 root ? root : "");
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "armv", 4) &&
		    strlen(de->d_name) < sizeof(p->arm_pmu) &&
		    (!p->arm_pmu[0] || strcmp(de->d_name, p->arm_pmu) < 0))
			pc_strlcpy(p->arm_pmu, de->d_name, sizeof(p->arm_pmu));
	closedir(d);
}

/* Index of event @id in the plan, added when new; -errno. */
static long add_event(struct perfctr_metric_plan *p, const char *id,
		      char *why, size_t why_size)
{
	struct plan_event *ev, *evs;
	struct pc_mevent mev;
	char base[256], spec[1024], name[256];
	const char *mods;
	size_t i;

	for (i = 0; i < p->nr_events; i++)
		if (!strcmp(p->events[i].id, id))
			return (long)i;
	pc_strlcpy(base, id, sizeof(base));
	pc_strlcpy(name, id, sizeof(name));
	pc_strlcpy(spec, id, sizeof(spec));
	mev.pmu = NULL;
	if (strchr(id, '@')) {
		/* cpu@event=0x3c\,umask=0x1@ is the tables' cpu/event=.../ */
		for (char *c = spec; *c; c++)
			if (*c == '@')
				*c = '/';
	} else if (!strchr(id, '/')) {
		mods = pc_metrics_strip_mods(base);
		if (!pc_metrics_event(p->m, base, &mev)) {
			pc_strlcpy(name, mev.name, sizeof(name));
			if (mev.spec[0] == 'r' && p->arm_pmu[0])
				snprintf(spec, sizeof(spec),
					 "%s/event=0x%s,name=%s/%s", p->arm_pmu,
					 mev.spec + 1, mev.name, mods);
			else if (*mods && mev.spec[strlen(mev.spec) - 1] == '/')
				snprintf(spec, sizeof(spec), "%s%s", mev.spec,
					 mods);
			else
				pc_strlcpy(spec, mev.spec, sizeof(spec));
			if (*mods) {
				size_t len = strlen(name);

				snprintf(name + len, sizeof(name) - len, ":%s",
					 mods);
			}
		} else if (!pc_metrics_generic_event(base) &&
			   !strchr(base, ':')) {
			snprintf(why, why_size,
				 "event '%s' is not in the tables%s%s", id,
				 perfctr_metrics__model(p->m) ? " of " : "",
				 perfctr_metrics__model(p->m) ?
				 perfctr_metrics__model(p->m) : "");
			return -ENOENT;
		}
	}
	evs = realloc(p->events, (p->nr_events + 1) * sizeof(*evs));
	if (!evs)
		return -ENOMEM;
	p->events = evs;
	ev = &p->events[p->nr_events];
	ev->id = strdup(id);
	ev->name = strdup(name);
	ev->spec = strdup(spec);
	ev->pmu = mev.pmu;
	if (!ev->id || !ev->name || !ev->spec) {
		free(ev->id);
		free(ev->name);
		free(ev->spec);
		return -ENOMEM;
	}
	return (long)p->nr_events++;
}

static bool has(const size_t *set, size_t n, size_t x)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == x)
			return true;
	return false;
}

static int push(size_t **set, size_t *n, size_t x)
{
	size_t *more;

	if (has(*set, *n, x))
		return 0;
	more = realloc(*set, (*n + 1) * sizeof(**set));
	if (!more)
		return -ENOMEM;
	*set = more;
	(*set)[(*n)++] = x;
	return 0;
}

/* The metric an identifier refers to, or -1 for an event. */
static int metric_ref(struct perfctr_metrics *m, const char *id, size_t self)
{
	int i;

	if (strchr(id, '@') || strchr(id, '/') || strchr(id, ':'))
		return -1;
	i = perfctr_metrics__find(m, id);
	return i >= 0 && (size_t)i != self ? i : -1;
}

/* The events of metric @def and of the metrics it refers to. */
static int collect(struct perfctr_metric_plan *p, struct plan_metric *pm,
		   size_t def, size_t *stack, int depth,
		   struct perfctr_metric_error *err)
{
	struct perfctr_metric_def d;
	const struct pc_mx *mx;
	size_t k;
	int rc;

	perfctr_metrics__def(p->m, def, &d);
	if (depth >= MAX_DEPTH || has(stack, (size_t)depth, def)) {
		set_err(err, d.name, -1, "metric '%s' refers to itself", d.name);
		return -ELOOP;
	}
	stack[depth] = def;
	mx = pc_metrics_expr(p->m, def, err);
	if (!mx)
		return -EINVAL;
	for (k = 0; k < pc_mx_nr_ids(mx); k++) {
		const char *id = pc_mx_id(mx, k);
		int ref = metric_ref(p->m, id, def);
		long ev;

		if (!strcmp(id, "duration_time"))
			continue;
		if (ref >= 0) {
			rc = collect(p, pm, (size_t)ref, stack, depth + 1, err);
			if (rc)
				return rc;
			continue;
		}
		ev = add_event(p, id, pm->missing, sizeof(pm->missing));
		if (ev == -ENOENT) {
			if (!pm->missing_event)
				pm->missing_event = id;
			continue;
		}
		if (ev < 0)
			return (int)ev;
		if ((rc = push(&pm->events, &pm->nr_events, (size_t)ev)))
			return rc;
	}
	return 0;
}

static int add_metric(struct perfctr_metric_plan *p, size_t def,
		      struct perfctr_metric_error *err)
{
	struct perfctr_metric_def d;
	struct plan_metric *pm, *more;
	size_t stack[MAX_DEPTH];
	size_t i;
	int rc;

	for (i = 0; i < p->nr_metrics; i++)
		if (p->metrics[i].def == def)
			return 0;
	more = realloc(p->metrics, (p->nr_metrics + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	p->metrics = more;
	pm = &p->metrics[p->nr_metrics++];
	memset(pm, 0, sizeof(*pm));
	pm->def = def;
	perfctr_metrics__def(p->m, def, &d);
	pm->no_group = d.constraint && strstr(d.constraint, "NO_GROUP_EVENTS");
	rc = collect(p, pm, def, stack, 0, err);
	if (rc == -EINVAL && err && !err->metric[0])
		pc_strlcpy(err->metric, d.name, sizeof(err->metric));
	return rc;
}

static int append_group(struct perfctr_metric_plan *p, struct group *g)
{
	struct group *more = realloc(p->groups,
				     (p->nr_groups + 1) * sizeof(*more));

	if (!more)
		return -ENOMEM;
	p->groups = more;
	p->groups[p->nr_groups++] = *g;
	g->events = NULL;
	return 0;
}

/* The groups of grouped metric @pm: one per PMU among its events, the
 * core's (NULL) first. */
static int make_groups(struct perfctr_metric_plan *p,
		       const struct plan_metric *pm)
{
	const char *pmus[8];
	size_t nr_pmus = 0, j, k;
	int rc = 0;

	for (j = 0; j < pm->nr_events; j++) {
		const char *pmu = p->events[pm->events[j]].pmu;

		for (k = 0; k < nr_pmus; k++)
			if (pmus[k] == pmu ||
			    (pmus[k] && pmu && !strcmp(pmus[k], pmu)))
				break;
		if (k == nr_pmus && nr_pmus < 8)
			pmus[nr_pmus++] = pmu;
	}
	for (k = 0; k < nr_pmus && !rc; k++) {
		struct group g = { .grouped = true };

		for (j = 0; j < pm->nr_events && !rc; j++) {
			const char *pmu = p->events[pm->events[j]].pmu;

			if (pmu == pmus[k] ||
			    (pmu && pmus[k] && !strcmp(pmu, pmus[k])))
				rc = push(&g.events, &g.nr_events,
					  pm->events[j]);
		}
		if (!rc && g.nr_events)
			rc = append_group(p, &g);
		free(g.events);
	}
	return rc;
}

static bool subset(const struct plan_metric *a, const struct plan_metric *b)
{
	for (size_t j = 0; j < a->nr_events; j++)
		if (!has(b->events, b->nr_events, a->events[j]))
			return false;
	return true;
}

/*
 * The groups, as perf stat schedules metrics: the metrics with the most
 * events first (a stable order), each grouped metric in groups of its
 * own unless an earlier one that has its own holds all of its events
 * (then it is computed from those); the events of ungrouped metrics in
 * one list, each event once, after the groups.  PERFCTR_METRIC_PLAN_NO_MERGE
 * gives every metric groups (or a list) of its own, shared events
 * counted again; PERFCTR_METRIC_PLAN_NO_GROUP leaves every metric's
 * events ungrouped.
 */
static int schedule(struct perfctr_metric_plan *p, unsigned int flags)
{
	bool no_merge = flags & PERFCTR_METRIC_PLAN_NO_MERGE;
	struct group loose = { .grouped = false };
	size_t *order, *owners, nr_owners = 0, i, j;
	int rc = 0;

	order = calloc(p->nr_metrics + 1, sizeof(*order));
	owners = calloc(p->nr_metrics + 1, sizeof(*owners));
	if (!order || !owners) {
		free(order);
		free(owners);
		return -ENOMEM;
	}
	/* insertion sort: stable, and plans are short */
	for (i = 0; i < p->nr_metrics; i++) {
		for (j = i; j > 0 && p->metrics[order[j - 1]].nr_events <
				     p->metrics[i].nr_events; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (i = 0; i < p->nr_metrics && !rc; i++) {
		struct plan_metric *pm = &p->metrics[order[i]];

		if (pm->no_group || (flags & PERFCTR_METRIC_PLAN_NO_GROUP)) {
			for (j = 0; j < pm->nr_events && !rc; j++)
				rc = push(&loose.events, &loose.nr_events,
					  pm->events[j]);
			if (no_merge && !rc && loose.nr_events)
				rc = append_group(p, &loose);
			if (no_merge) {
				free(loose.events);
				loose.events = NULL;
				loose.nr_events = 0;
			}
			continue;
		}
		for (j = 0; j < nr_owners && !no_merge; j++)
			if (subset(pm, &p->metrics[owners[j]]))
				break;
		if (j < nr_owners && !no_merge)
			continue;	/* counted by an earlier metric's groups */
		owners[nr_owners++] = order[i];
		rc = make_groups(p, pm);
	}
	if (!rc && loose.nr_events)
		rc = append_group(p, &loose);
	free(loose.events);
	free(order);
	free(owners);
	if (rc)
		return rc;
	/* their texts */
	for (i = 0; i < p->nr_groups; i++) {
		struct group *g = &p->groups[i];
		size_t len = 3;

		for (j = 0; j < g->nr_events; j++)
			len += strlen(p->events[g->events[j]].spec) + 1;
		g->text = malloc(len);
		if (!g->text)
			return -ENOMEM;
		g->text[0] = '\0';
		if (g->grouped && g->nr_events > 1)
			strcat(g->text, "{");
		for (j = 0; j < g->nr_events; j++) {
			if (j)
				strcat(g->text, ",");
			strcat(g->text, p->events[g->events[j]].spec);
		}
		if (g->grouped && g->nr_events > 1)
			strcat(g->text, "}");
	}
	return rc;
}

struct perfctr_metric_plan *
perfctr_metric_plan__new(struct perfctr_metrics *m, const char *list,
			 struct perfctr_metric_error *err)
{
	return perfctr_metric_plan__new_opts(m, list, NULL, err);
}

struct perfctr_metric_plan *
perfctr_metric_plan__new_opts(struct perfctr_metrics *m, const char *list,
			      const struct perfctr_metric_plan_opts *opts,
			      struct perfctr_metric_error *err)
{
	unsigned int flags = PC_OPTS_GET(opts, flags, 0);
	struct perfctr_metric_plan *p;
	char *copy, *save = NULL, *item;
	int rc = 0;

	if (err) {
		err->metric[0] = '\0';
		err->pos = -1;
		err->msg[0] = '\0';
	}
	if (!m || !list ||
	    !pc_opts_valid(opts, sizeof(struct perfctr_metric_plan_opts)) ||
	    (flags & ~(unsigned int)(PERFCTR_METRIC_PLAN_NO_MERGE |
				     PERFCTR_METRIC_PLAN_NO_GROUP))) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	copy = strdup(list);
	if (!p || !copy) {
		free(p);
		free(copy);
		errno = ENOMEM;
		return NULL;
	}
	p->m = m;
	if (perfctr_metrics__model(m) &&
	    !strncmp(perfctr_metrics__model(m), "arm64/", 6))
		find_arm_pmu(p, pc_metrics_root(m));
	for (item = strtok_r(copy, ",", &save); item && !rc;
	     item = strtok_r(NULL, ",", &save)) {
		int idx = perfctr_metrics__find(m, item);
		bool found = false;
		size_t i;

		if (idx >= 0) {
			rc = add_metric(p, (size_t)idx, err);
			continue;
		}
		for (i = 0; i < perfctr_metrics__nr(m) && !rc; i++) {
			/* the last definition of a name is the one in force */
			if (perfctr_metrics__in_group(m, i, item) == 1 &&
			    perfctr_metrics__find(m, pc_metrics_name(m, i)) ==
			    (int)i) {
				found = true;
				rc = add_metric(p, i, err);
			}
		}
		if (!found && !rc) {
			set_err(err, item, -1,
				"'%s' is neither a metric nor a metric group",
				item);
			rc = -ENOENT;
		}
	}
	free(copy);
	if (!rc)
		rc = schedule(p, flags);
	if (rc) {
		perfctr_metric_plan__delete(p);
		errno = -rc;
		return NULL;
	}
	return p;
}

void perfctr_metric_plan__delete(struct perfctr_metric_plan *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr_metrics; i++)
		free(p->metrics[i].events);
	for (i = 0; i < p->nr_events; i++) {
		free(p->events[i].id);
		free(p->events[i].name);
		free(p->events[i].spec);
	}
	for (i = 0; i < p->nr_groups; i++) {
		free(p->groups[i].events);
		free(p->groups[i].text);
	}
	free(p->metrics);
	free(p->events);
	free(p->groups);
	free(p);
}

size_t perfctr_metric_plan__nr_metrics(const struct perfctr_metric_plan *p)
{
	return p ? p->nr_metrics : 0;
}

int perfctr_metric_plan__def(const struct perfctr_metric_plan *p, size_t i,
			     struct perfctr_metric_def *def)
{
	if (!p || i >= p->nr_metrics || !def)
		return pc_err(EINVAL);
	return perfctr_metrics__def(p->m, p->metrics[i].def, def);
}

const char *perfctr_metric_plan__missing(const struct perfctr_metric_plan *p,
					 size_t i)
{
	if (!p || i >= p->nr_metrics || !p->metrics[i].missing[0])
		return NULL;
	return p->metrics[i].missing;
}

const char *perfctr_metric_plan__event(const struct perfctr_metric_plan *p,
				       size_t i)
{
	if (!p || i >= p->nr_metrics || !p->metrics[i].nr_events)
		return NULL;
	return p->events[p->metrics[i].events[0]].name;
}

size_t perfctr_metric_plan__nr_groups(const struct perfctr_metric_plan *p)
{
	return p ? p->nr_groups : 0;
}

const char *perfctr_metric_plan__group(const struct perfctr_metric_plan *p,
				       size_t g)
{
	return p && g < p->nr_groups ? p->groups[g].text : NULL;
}

/* ---- computing ---- */

struct eval_ctx {
	struct perfctr_metric_plan *p;
	const struct perfctr_metric_input *in;
	size_t nr_in;
	double wall_ns;
	const size_t *bound;	/* plan event -> input index, or NONE */
	size_t self;		/* the metric's def */
	int depth;
	enum perfctr_metric_status status;
	const char *event;
	bool multiplexed;
	bool in_threshold;
	double self_value;
};

#define NONE ((size_t)-1)

static double scaled_value(const struct perfctr_metric_input *e, bool *mux)
{
	const struct perfctr_count *c = &e->count;

	if (c->time_running && c->time_running < c->time_enabled) {
		*mux = true;
		return (double)c->value * (double)c->time_enabled /
		       (double)c->time_running;
	}
	return (double)c->value;
}

static bool counted(const struct perfctr_metric_input *e)
{
	return e->count.status == PERFCTR_COUNT_OK && e->count.time_running;
}

static int eval_metric(struct eval_ctx *ctx, size_t def, double *out);

static int lookup(void *vctx, enum pc_mx_ref ref, const char *id, double *v)
{
	struct eval_ctx *ctx = vctx;
	struct perfctr_metric_plan *p = ctx->p;
	struct pc_mevent mev;
	char base[256];
	size_t i;
	int mref;

	switch (ref) {
	case PC_MX_LITERAL:
		if (pc_metrics_literal(p->m, id, v)) {
			ctx->status = PERFCTR_METRIC_NO_EVENT;
			ctx->event = id;
			return -ENOENT;
		}
		return 0;
	case PC_MX_SOURCE_COUNT:
		*v = 1;		/* counts are summed over units before this */
		return 0;
	case PC_MX_HAS_EVENT:
		pc_strlcpy(base, id, sizeof(base));
		pc_metrics_strip_mods(base);
		*v = !pc_metrics_event(p->m, base, &mev) ||
		     pc_metrics_generic_event(base);
		return 0;
	case PC_MX_CPUID:
		*v = pc_metrics_cpuid_match(id, perfctr_metrics__cpuid(p->m));
		return 0;
	case PC_MX_VALUE:
		break;
	}
	if (!strcmp(id, "duration_time")) {
		*v = ctx->wall_ns * 1e-9;
		return 0;
	}
	mref = metric_ref(p->m, id, ctx->self);
	if (ctx->in_threshold && mref < 0 &&
	    !strcasecmp(id, pc_metrics_name(p->m, ctx->self))) {
		*v = ctx->self_value;
		return 0;
	}
	if (mref >= 0)
		return eval_metric(ctx, (size_t)mref, v);
	for (i = 0; i < p->nr_events; i++)
		if (!strcmp(p->events[i].id, id))
			break;
	if (i == p->nr_events) {
		ctx->status = PERFCTR_METRIC_NO_EVENT;
		ctx->event = id;
		return -ENOENT;
	}
	if (ctx->bound[i] == NONE) {
		ctx->status = PERFCTR_METRIC_NOT_COUNTED;
		ctx->event = p->events[i].name;
		return -ENODATA;
	}
	if (!counted(&ctx->in[ctx->bound[i]])) {
		ctx->status = PERFCTR_METRIC_NOT_COUNTED;
		ctx->event = p->events[i].name;
		return -ENODATA;
	}
	*v = scaled_value(&ctx->in[ctx->bound[i]], &ctx->multiplexed);
	return 0;
}

static int eval_metric(struct eval_ctx *ctx, size_t def, double *out)
{
	const struct pc_mx *mx = pc_metrics_expr(ctx->p->m, def, NULL);
	size_t self = ctx->self;
	bool in_threshold = ctx->in_threshold;
	int rc;

	if (!mx || ctx->depth >= MAX_DEPTH)
		return -EINVAL;
	ctx->depth++;
	ctx->self = def;
	ctx->in_threshold = false;
	rc = pc_mx_eval(mx, lookup, ctx, out);
	ctx->self = self;
	ctx->in_threshold = in_threshold;
	ctx->depth--;
	return rc;
}

/* Inputs for the metric's events: all from one group when one holds them
 * all (measured together by construction), else each counted all of its
 * enabled time. */
static bool bind(struct perfctr_metric_plan *p, const struct plan_metric *pm,
		 const struct perfctr_metric_input *in, size_t nr_in,
		 size_t *bound, const char **not_counted)
{
	size_t i, j, first = NONE;

	for (i = 0; i < p->nr_events; i++)
		bound[i] = NONE;
	if (!pm->nr_events)
		return true;
	/* candidate groups: those of the first event's inputs */
	for (j = 0; j < nr_in; j++) {
		size_t k;

		if (!in[j].name ||
		    strcasecmp(in[j].name, p->events[pm->events[0]].name))
			continue;
		if (first == NONE)
			first = j;
		for (k = 0; k < pm->nr_events; k++) {
			size_t x;

			for (x = 0; x < nr_in; x++)
				if (in[x].group == in[j].group && in[x].name &&
				    !strcasecmp(in[x].name,
						p->events[pm->events[k]].name))
					break;
			if (x == nr_in)
				break;
			bound[pm->events[k]] = x;
		}
		if (k == pm->nr_events && !pm->no_group)
			return true;
	}
	/* any inputs of those names, if each ran all of its time */
	for (i = 0; i < p->nr_events; i++)
		bound[i] = NONE;
	for (i = 0; i < pm->nr_events; i++) {
		const char *name = p->events[pm->events[i]].name;

		for (j = 0; j < nr_in; j++)
			if (in[j].name && !strcasecmp(in[j].name, name))
				break;
		if (j == nr_in)
			continue;
		bound[pm->events[i]] = j;
		if (!counted(&in[j])) {
			*not_counted = name;
			return true;	/* reported as not counted */
		}
		if (in[j].count.time_running < in[j].count.time_enabled)
			return false;
	}
	return true;
}

int perfctr_metric_plan__compute(struct perfctr_metric_plan *p,
				 const struct perfctr_metric_input *in,
				 size_t nr_in, double wall_ns,
				 struct perfctr_metric_value *out,
				 size_t max_out)
{
	size_t *bound;
	size_t i;

	if (!p || (!in && nr_in) || (!out && max_out))
		return pc_err(EINVAL);
	bound = calloc(p->nr_events ? p->nr_events : 1, sizeof(*bound));
	if (!bound)
		return pc_err(ENOMEM);
	for (i = 0; i < p->nr_metrics && i < max_out; i++) {
		struct plan_metric *pm = &p->metrics[i];
		struct perfctr_metric_value *o = &out[i];
		struct eval_ctx ctx = {
			.p = p, .in = in, .nr_in = nr_in, .wall_ns = wall_ns,
			.bound = bound, .self = pm->def,
			.status = PERFCTR_METRIC_OK,
		};
		const char *not_counted = NULL;
		const struct pc_mx *th;
		struct perfctr_metric_def d;
		double v = NAN, t;

		memset(o, 0, sizeof(*o));
		o->metric = i;
		o->threshold = -1;
		perfctr_metrics__def(p->m, pm->def, &d);
		if (pm->missing_event) {
			o->status = PERFCTR_METRIC_NO_EVENT;
			o->event = pm->missing_event;
			continue;
		}
		if (!bind(p, pm, in, nr_in, bound, &not_counted)) {
			o->status = PERFCTR_METRIC_NOT_TOGETHER;
			continue;
		}
		if (eval_metric(&ctx, pm->def, &v)) {
			o->status = ctx.status == PERFCTR_METRIC_OK ?
				    PERFCTR_METRIC_UNDEFINED : ctx.status;
			o->event = ctx.event;
			continue;
		}
		o->multiplexed = ctx.multiplexed;
		if (isnan(v)) {
			o->status = PERFCTR_METRIC_UNDEFINED;
			continue;
		}
		o->value = v * d.scale;
		th = pc_metrics_threshold(p->m, pm->def, NULL);
		if (th) {
			ctx.in_threshold = true;
			ctx.self_value = v;
			if (!pc_mx_eval(th, lookup, &ctx, &t) && !isnan(t))
				o->threshold = t != 0;
		}
	}
	free(bound);
	return p->nr_metrics > INT32_MAX ? INT32_MAX : (int)p->nr_metrics;
}
