// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Sessions: groups of events counted on every unit of a target, a policy
 * over the counter engine (what is opened how, when it counts, sums over
 * units and attaches).  See session-internal.h for the model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "core/bpfcg.h"
#include "core/session-internal.h"
#include "core/set-internal.h"
#include "core/target-internal.h"
#include "sys/cgroup.h"
#include "sys/cpulist.h"

static void drop_bpf(struct perfctr_session *s)
{
	pc_bpfcg__unbind(s->bpf);
	s->bpf = NULL;
	free(s->bpf_counts);
	s->bpf_counts = NULL;
	free(s->bpf_cpus);
	s->bpf_cpus = NULL;
}

struct perfctr_session *perfctr_session__new(const struct perfctr_session_opts *opts)
{
	const struct perfctr_parse_opts *popts;
	struct perfctr_session *s;
	bool failed = false;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	popts = PC_OPTS_GET(opts, parse_opts, NULL);
	if (!pc_opts_valid(popts, sizeof(*popts))) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->flags = PC_OPTS_GET(opts, flags, 0);
	s->parse_opts.sz = sizeof(s->parse_opts);
	s->sysfs_root = pc_strdup_or_null(PC_OPTS_GET(popts, sysfs_root, NULL), &failed);
	s->tracefs_root = pc_strdup_or_null(PC_OPTS_GET(popts, tracefs_root, NULL), &failed);
	s->parse_opts.sysfs_root = s->sysfs_root;
	s->parse_opts.tracefs_root = s->tracefs_root;
	s->parse_opts.exclude_kernel = PC_OPTS_GET(popts, exclude_kernel, false);
	s->parse_opts.exclude_hv = PC_OPTS_GET(popts, exclude_hv, false);
	if (failed) {
		perfctr_session__delete(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* What events [@from, @to) of @s own (strings, CPU list), freed. */
static void free_event_parts(struct perfctr_session *s, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++) {
		free(s->events[k].name);
		free(s->events[k].pmu);
		free(s->events[k].unit);
		free(s->events[k].filter);
		free(s->events[k].cpus);
	}
}

void perfctr_session__delete(struct perfctr_session *s)
{
	size_t i;

	if (!s)
		return;
	if (s->attached)
		pc_sets_detach(s);	/* sets hook */
	drop_bpf(s);
	pc_engine__delete(s->engine);
	pc_sets_free(s->sets);		/* sets hook */
	free_event_parts(s, 0, s->nr_events);
	for (i = 0; i < s->nr_groups; i++)
		free(s->groups[i].members);
	free(s->events);
	free(s->groups);
	free(s->carried);
	free(s->has_carried);
	free(s->sysfs_root);
	free(s->tracefs_root);
	free(s);
}

struct pc_slot *pc_session_no_slot(void)
{
	static struct pc_slot none;

	/* Whatever a caller did to the last one. */
	memset(&none, 0, sizeof(none));
	none.fd = -1;
	none.count.status = PERFCTR_COUNT_NOT_COUNTED;
	return &none;
}

/*
 * Grow every per-event and per-group array for @add_events more events
 * and @add_groups more groups, so that the additions cannot fail half-way.
 */
static int reserve(struct perfctr_session *s, size_t add_events, size_t add_groups)
{
	size_t ne = s->nr_events + add_events, ng = s->nr_groups + add_groups;
	size_t i;
	void *p;

	p = realloc(s->events, (ne ? ne : 1) * sizeof(*s->events));
	if (!p)
		return -ENOMEM;
	s->events = p;
	p = realloc(s->groups, (ng ? ng : 1) * sizeof(*s->groups));
	if (!p)
		return -ENOMEM;
	s->groups = p;
	p = realloc(s->carried, (ne ? ne : 1) * sizeof(*s->carried));
	if (!p)
		return -ENOMEM;
	s->carried = p;
	p = realloc(s->has_carried, (ne ? ne : 1) * sizeof(*s->has_carried));
	if (!p)
		return -ENOMEM;
	s->has_carried = p;
	for (i = s->nr_events; i < ne; i++)
		s->has_carried[i] = false;
	return 0;
}

static int parse_pmu_cpus(const char *list, int **cpus)
{
	int n;

	*cpus = NULL;
	if (!list || !*list)
		return 0;
	n = pc_parse_cpulist(list, cpus);
	/* A list we cannot read is no restriction: the kernel will say. */
	if (n == -EINVAL) {
		*cpus = NULL;
		return 0;
	}
	return n;
}

/* Event @i of @list into @ev, with copies of its strings and its PMU's
 * CPUs.  Return 0, -EINVAL (no attr) or -ENOMEM; what was made is in
 * @ev either way. */
static int copy_event(struct pc_event *ev, const struct perfctr_evlist *list,
		      size_t i)
{
	const struct perf_event_attr *attr = perfctr_evlist__attr(list, i);
	const char *unit = perfctr_evlist__unit(list, i);
	bool failed = false;
	int nr_cpus;

	memset(ev, 0, sizeof(*ev));
	if (attr)
		ev->attr = *attr;
	ev->attr.size = sizeof(ev->attr);
	ev->name = pc_strdup_or_null(perfctr_evlist__name(list, i), &failed);
	ev->pmu = pc_strdup_or_null(perfctr_evlist__pmu(list, i), &failed);
	ev->unit = pc_strdup_or_null(unit ? unit : "", &failed);
	ev->scale = perfctr_evlist__scale(list, i);
	nr_cpus = parse_pmu_cpus(perfctr_evlist__cpus(list, i), &ev->cpus);
	if (nr_cpus < 0)
		failed = true;
	ev->nr_cpus = nr_cpus > 0 ? nr_cpus : 0;
	if (failed || !attr || !ev->name)
		return attr ? -ENOMEM : -EINVAL;
	return 0;
}

/* The member arrays of the @new_groups groups that follow the session's,
 * of the @n events from @base (@group_of: each one's group), sized by a
 * first count, so no partial state.  Return 0 or -ENOMEM, the arrays
 * made freed. */
static int make_members(struct perfctr_session *s, const size_t *group_of,
			size_t n, size_t base, size_t new_groups)
{
	for (size_t g = s->nr_groups; g < s->nr_groups + new_groups; g++) {
		size_t cnt = 0, k = 0, i;

		for (i = 0; i < n; i++)
			cnt += group_of[i] == g;
		s->groups[g].members = malloc(cnt * sizeof(size_t));
		if (!s->groups[g].members) {
			for (size_t j = s->nr_groups; j < g; j++)
				free(s->groups[j].members);
			return -ENOMEM;
		}
		for (i = 0; i < n; i++)
			if (group_of[i] == g)
				s->groups[g].members[k++] = base + i;
		s->groups[g].nr_members = cnt;
	}
	return 0;
}

int perfctr_session__add_evlist(struct perfctr_session *s,
				const struct perfctr_evlist *list)
{
	size_t n, i, base, new_groups = 0, g;
	size_t *group_of = NULL;
	int err;

	if (!s || !list)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	n = perfctr_evlist__nr_events(list);
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		size_t leader = perfctr_evlist__leader(list, i);

		if (leader > i)
			return pc_err(EINVAL);
		if (leader == i)
			new_groups++;
	}
	group_of = calloc(n, sizeof(*group_of));
	if (!group_of)
		return pc_err(ENOMEM);
	err = reserve(s, n, new_groups);
	if (err)
		goto fail;

	base = s->nr_events;
	g = s->nr_groups;
	for (i = 0; i < n; i++) {
		struct pc_event *ev = &s->events[base + i];
		size_t leader = perfctr_evlist__leader(list, i);

		err = copy_event(ev, list, i);
		ev->leader = base + leader;
		if (leader == i) {
			group_of[i] = g;
			s->groups[g].members = NULL;
			s->groups[g].nr_members = 0;
			g++;
		} else {
			group_of[i] = group_of[leader];
		}
		ev->group = group_of[i];
		if (err) {
			/* Undo: free what this call made, keep the session. */
			free_event_parts(s, base, base + i + 1);
			goto fail;
		}
	}
	err = make_members(s, group_of, n, base, new_groups);
	if (err) {
		free_event_parts(s, base, base + n);
		goto fail;
	}
	s->nr_events += n;
	s->nr_groups += new_groups;
	free(group_of);
	return (int)n;
fail:
	free(group_of);
	return pc_err(-err);
}

int perfctr_session__add_events(struct perfctr_session *s, const char *spec,
				struct perfctr_parse_error *perr)
{
	struct perfctr_evlist *list;
	int n;

	if (!s || !spec)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	list = perfctr_evlist__new();
	if (!list)
		return pc_err(ENOMEM);
	n = perfctr_evlist__parse(list, spec, &s->parse_opts, perr);
	if (n >= 0)
		n = perfctr_session__add_evlist(s, list);
	perfctr_evlist__delete(list);
	return n < 0 ? pc_err(-n) : n;
}

/* The attr an event is given to the engine with: the session decides
 * these fields; the engine then adapts them to who leads on each unit. */
static void open_attr(const struct perfctr_session *s, size_t e, bool held,
		      struct perf_event_attr *attr)
{
	const struct pc_event *ev = &s->events[e];
	bool leads = s->groups[ev->group].members[0] == e;

	*attr = ev->attr;
	attr->size = sizeof(*attr);
	attr->read_format = PC_READ_FORMAT;
	attr->inherit = (s->flags & PERFCTR_SESSION_INHERIT) ||
			pc_target_inherits(s->target);
	/* Leaders are always opened disabled, even with ENABLE_ON_ATTACH: a
	 * tracepoint filter can only be set on an open event, and until it
	 * is, the event would count everyone's calls.  The leaders are
	 * enabled once every counter is open and filtered, so that all
	 * groups also start together. */
	attr->disabled = leads;
	/* Sets hook: with rotation only the first set starts at exec. */
	attr->enable_on_exec = leads && held && pc_sets_counts_at_exec(s, e);
}

/* A new engine with the session's events on @s->target, opened. */
static int open_engine(struct perfctr_session *s, struct pc_engine **out)
{
	struct perfctr_target *t = s->target;
	bool held = pc_target_is_held(t);
	unsigned int flags = 0;
	struct pc_engine *engine;
	size_t e;
	int err;

	engine = pc_engine__new(t);
	if (!engine)
		return -errno;
	for (e = 0; e < s->nr_events; e++) {
		const struct pc_event *ev = &s->events[e];
		struct perf_event_attr attr;
		struct pc_engine_event desc = {
			.attr = &attr,
			.leader = ev->leader,
			.filter = ev->filter,
			.cpus = ev->cpus,
			.nr_cpus = (size_t)ev->nr_cpus,
		};

		open_attr(s, e, held, &attr);
		err = pc_engine__add(engine, &desc);
		if (err < 0)
			goto fail;
	}
	if (s->flags & PERFCTR_SESSION_STRICT)
		flags |= PC_ENGINE_STRICT;
	if (s->flags & PERFCTR_SESSION_NO_BROKER)
		flags |= PC_ENGINE_NO_BROKER;
	if ((s->flags & PERFCTR_SESSION_ENABLE_ON_ATTACH) && !held)
		flags |= PC_ENGINE_ENABLE;
	/* The fast read serves the thread that reads its own counters. */
	if (perfctr_target__kind(t) == PERFCTR_TARGET_SELF ||
	    (perfctr_target__kind(t) == PERFCTR_TARGET_THREAD &&
	     perfctr_target__pid(t) == pc_self_tid()))
		flags |= PC_ENGINE_MMAP;
	err = pc_engine__open(engine, flags);
	if (err) {
		s->attach_failure = *pc_engine__failure(engine);
		goto fail;
	}
	*out = engine;
	return 0;
fail:
	pc_engine__delete(engine);
	return err;
}

/*
 * Counting a cgroup target through its BPF counters: an engine with the
 * session's events and units but no fds, whose slots are filled from the
 * binding at each read.  Return: 0, or why not (the caller falls back to
 * cgroup events).
 */
static int open_bpf(struct perfctr_session *s, struct perfctr_bpf_counters *bc,
		    struct pc_engine **out)
{
	struct perfctr_target *t = s->target;
	struct pc_bpfcg_event *evs = NULL;
	struct perf_event_attr *attrs = NULL;
	struct pc_bpfcg_binding *b = NULL;
	struct pc_engine *engine = NULL;
	struct perfctr_count *counts = NULL;
	int *cpus = NULL;
	size_t e, u, nu;
	uint64_t id;
	int err;

	err = perfctr_bpf_counters__error(bc);
	if (err)
		return err;
	/* Set rotation, overflow signals and rings need the kernel's own
	 * counters of the cgroup; so does a PMU of only some CPUs. */
	if (s->sets)
		return -EOPNOTSUPP;
	for (e = 0; e < s->nr_events; e++)
		if (s->events[e].cpus)
			return -EOPNOTSUPP;
	err = pc_cgroup2_id(pc_target_cgroup_fd(t), &id);
	if (err)
		return err;
	evs = calloc(s->nr_events, sizeof(*evs));
	attrs = calloc(s->nr_events, sizeof(*attrs));
	engine = pc_engine__new(t);
	if (!evs || !attrs || !engine) {
		err = -ENOMEM;
		goto out;
	}
	for (e = 0; e < s->nr_events; e++) {
		struct pc_engine_event desc = {
			.attr = &attrs[e],
			.leader = s->events[e].leader,
			.filter = s->events[e].filter,
		};

		open_attr(s, e, false, &attrs[e]);
		evs[e].attr = &attrs[e];
		evs[e].filter = s->events[e].filter;
		err = pc_engine__add(engine, &desc);
		if (err < 0)
			goto out;
	}
	err = pc_engine__open(engine, PC_ENGINE_NO_FDS);
	if (err)
		goto out;
	nu = pc_engine__nr_units(engine);
	counts = calloc(s->nr_events * nu, sizeof(*counts));
	cpus = calloc(nu, sizeof(*cpus));
	if (!counts || !cpus) {
		err = -ENOMEM;
		goto out;
	}
	for (u = 0; u < nu; u++)
		cpus[u] = pc_engine__unit(engine, u)->cpu;
	err = pc_bpfcg__bind(bc, id, evs, s->nr_events, &b);
	if (!err && (s->flags & PERFCTR_SESSION_ENABLE_ON_ATTACH))
		err = pc_bpfcg__start(b);
out:
	free(evs);
	free(attrs);
	if (err) {
		pc_bpfcg__unbind(b);
		pc_engine__delete(engine);
		free(counts);
		free(cpus);
		return err;
	}
	drop_bpf(s);
	s->bpf = b;
	s->bpf_counts = counts;
	s->bpf_cpus = cpus;
	*out = engine;
	return 0;
}

static void carry(struct perfctr_session *s, size_t e, const struct perfctr_count *c)
{
	if (!s->has_carried[e]) {
		s->carried[e] = *c;
		s->has_carried[e] = true;
	} else {
		perfctr_count__add(&s->carried[e], c);
	}
}

int perfctr_session__attach(struct perfctr_session *s, struct perfctr_target *target)
{
	struct pc_engine *engine = NULL;
	size_t e, u;
	int err;

	if (!s || !target)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	if (!s->nr_events)
		return pc_err(EINVAL);
	if (!perfctr_target__nr_units(target))
		return pc_err(ESRCH);
	memset(&s->attach_failure, 0, sizeof(s->attach_failure));
	s->target = target;
	err = -EOPNOTSUPP;
	if (pc_target_bpf(target)) {
		err = open_bpf(s, pc_target_bpf(target), &engine);
		if (err)
			pr_info("cgroup '%s': counted with cgroup events, not "
				"BPF: %s\n", perfctr_target__cgroup_path(target),
				strerror(-err));
	}
	s->bpf_used = !err;
	if (err)
		err = open_engine(s, &engine);
	if (err) {
		s->target = NULL;
		return pc_err(-err);
	}

	/* Committed: the last attach's counts join the carried sums. */
	for (e = 0; e < s->nr_events; e++)
		for (u = 0; u < s->nr_units; u++)
			if (!s->units[u].gone)
				carry(s, e, &pc_slot(s, e, u)->count);
	pc_engine__delete(s->engine);
	s->engine = engine;
	s->units = pc_engine__units(engine);
	s->nr_units = pc_engine__nr_units(engine);
	s->group_fds = pc_engine__leader_fds(engine);
	s->attached = true;
	for (e = 0; e < s->nr_events; e++) {
		open_attr(s, e, pc_target_is_held(target), &s->events[e].attr);
		/* As opened on the first unit. */
		if (s->units[0].tid < 0)
			s->events[e].attr.inherit = 0;
	}
	/* Sets hook: rotation, overflow signals, notification rings. */
	err = pc_sets_attach(s);
	if (err) {
		pc_engine__close(engine);
		s->attached = false;
		s->target = NULL;
		return pc_err(-err);
	}
	return 0;
}

static int read_bpf(struct perfctr_session *s)
{
	size_t e, u;
	int err;

	err = pc_bpfcg__read(s->bpf, s->bpf_cpus, s->nr_units, s->bpf_counts);
	if (err)
		return err;
	for (e = 0; e < s->nr_events; e++)
		for (u = 0; u < s->nr_units; u++)
			pc_slot(s, e, u)->count =
				s->bpf_counts[e * s->nr_units + u];
	return 0;
}

int perfctr_session__read(struct perfctr_session *s)
{
	int err;

	if (!s)
		return pc_err(EINVAL);
	if (!s->attached)
		return 0;
	if (s->bpf)
		err = read_bpf(s);
	else
		err = pc_engine__read(s->engine);
	return err ? pc_err(-err) : 0;
}

int perfctr_session__start(struct perfctr_session *s)
{
	int err;

	if (!s)
		return pc_err(EINVAL);
	if (!s->attached)
		return pc_err(ENOTCONN);
	/* A held command starts counting at its exec (enable_on_exec):
	 * enabling now would count the wait and the exec itself. */
	if (pc_target_is_held(s->target))
		return 0;
	if (s->bpf)
		err = pc_bpfcg__start(s->bpf);
	else if (pc_sets_rotating(s))	/* sets hook: only the active set */
		err = pc_sets_start(s);
	else
		err = pc_engine__enable(s->engine);
	return err ? pc_err(-err) : 0;
}

int perfctr_session__stop(struct perfctr_session *s)
{
	int err;

	if (!s)
		return pc_err(EINVAL);
	if (!s->attached)
		return pc_err(ENOTCONN);
	if (s->bpf)
		err = pc_bpfcg__stop(s->bpf);
	else if (pc_sets_rotating(s))	/* sets hook: closes the run's slice */
		err = pc_sets_stop(s);
	else
		err = pc_engine__disable(s->engine);
	return err ? pc_err(-err) : 0;
}

static void zero_count(struct perfctr_count *c)
{
	c->value = 0;
	c->time_enabled = 0;
	c->time_running = 0;
}

int perfctr_session__reset(struct perfctr_session *s)
{
	size_t i, u;
	int err = 0;

	if (!s)
		return pc_err(EINVAL);
	if (s->attached && s->bpf)
		err = pc_bpfcg__reset(s->bpf);
	else if (s->attached)
		err = pc_engine__reset(s->engine);
	for (i = 0; i < s->nr_events; i++)
		for (u = 0; u < s->nr_units; u++)
			zero_count(&pc_slot(s, i, u)->count);
	for (i = 0; i < s->nr_events; i++)
		s->has_carried[i] = false;
	return err ? pc_err(-err) : 0;
}

int perfctr_session__attach_error(const struct perfctr_session *s,
				  struct perfctr_attach_error *err)
{
	const struct pc_engine_failure *f;

	if (!s || !err || err->sz < sizeof(*err))
		return pc_err(EINVAL);
	f = &s->attach_failure;
	err->errnum = f->errnum;
	err->event = (uint32_t)f->event;
	pc_strlcpy(err->broker, f->broker, sizeof(err->broker));
	return 0;
}

int perfctr_session__detach(struct perfctr_session *s)
{
	int err;

	if (!s)
		return pc_err(EINVAL);
	if (!s->attached)
		return pc_err(ENOTCONN);
	pc_sets_detach(s);		/* sets hook: stop, fold accounting */
	err = perfctr_session__read(s);
	drop_bpf(s);
	pc_engine__close(s->engine);
	s->attached = false;
	s->target = NULL;
	return err;
}

size_t perfctr_session__nr_events(const struct perfctr_session *s)
{
	return s ? s->nr_events : 0;
}

const char *perfctr_session__event_name(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return NULL;
	return s->events[idx].name;
}

size_t perfctr_session__event_leader(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return (size_t)-1;
	return s->events[idx].leader;
}

const struct perf_event_attr *
perfctr_session__event_attr(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return NULL;
	return &s->events[idx].attr;
}

const char *perfctr_session__event_unit(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return NULL;
	return s->events[idx].unit;
}

double perfctr_session__event_scale(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return 0.0;
	return s->events[idx].scale;
}

size_t perfctr_session__nr_units(const struct perfctr_session *s)
{
	return s ? s->nr_units : 0;
}

int perfctr_session__unit(const struct perfctr_session *s, size_t idx,
			  pid_t *tid, int *cpu)
{
	if (!s || idx >= s->nr_units)
		return pc_err(EINVAL);
	if (tid)
		*tid = s->units[idx].tid;
	if (cpu)
		*cpu = s->units[idx].cpu;
	return 0;
}

int perfctr_session__count(const struct perfctr_session *s, size_t idx,
			   struct perfctr_count *count)
{
	struct perfctr_count sum;
	bool any = false;
	size_t u;

	if (!s || !count || idx >= s->nr_events)
		return pc_err(EINVAL);
	if (s->has_carried[idx]) {
		sum = s->carried[idx];
		any = true;
	}
	for (u = 0; u < s->nr_units; u++) {
		const struct perfctr_count *c = &pc_slot(s, idx, u)->count;

		if (s->units[u].gone)
			continue;
		if (!any) {
			sum = *c;
			any = true;
		} else {
			perfctr_count__add(&sum, c);
		}
	}
	if (!any) {
		memset(&sum, 0, sizeof(sum));
		sum.status = PERFCTR_COUNT_NOT_COUNTED;
	}
	pc_sets_adjust_count(s, idx, &sum, PC_SETS_ALL_UNITS);	/* sets hook */
	*count = sum;
	return 0;
}

int perfctr_session__unit_count(const struct perfctr_session *s, size_t idx,
				size_t unit, struct perfctr_count *count)
{
	if (!s || !count || idx >= s->nr_events || unit >= s->nr_units)
		return pc_err(EINVAL);
	*count = pc_slot(s, idx, unit)->count;
	pc_sets_adjust_count(s, idx, count, unit);		/* sets hook */
	return 0;
}

int perfctr_session__set_filter(struct perfctr_session *s, size_t idx,
				const char *filter)
{
	char *copy = NULL;

	if (!s || idx >= s->nr_events)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	if (filter) {
		copy = strdup(filter);
		if (!copy)
			return pc_err(ENOMEM);
	}
	free(s->events[idx].filter);
	s->events[idx].filter = copy;
	return 0;
}

bool perfctr_session__counts_by_bpf(const struct perfctr_session *s)
{
	return s && s->bpf_used;
}
