// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex stat's session builders: the events of the -e's, the defaults and
 * the metrics' groups added to a run's session, its report rows made (or
 * checked on a later run), and the sessions of the other cgroups.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfex.h"
#include "stat.h"

/* The hardware part of the default set, added as one specification (one
 * parse), or event by event when the machine lacks some. */
const char stat_default_hardware[] = "cycles,instructions,branches,branch-misses";
const char stat_default_software[] =
	"task-clock,context-switches,cpu-migrations,page-faults";

struct build {
	struct stat_options *o;
	struct stat_report *r;
	struct perfctr_session *s;
	bool first;		/* the first run: make the rows */
	size_t row;		/* the next row */
	size_t *row_of;		/* session index -> row */
	int set;		/* the set being added, -1 without sets */
};

static struct stat_event *new_row(struct build *b)
{
	struct stat_report *r = b->r;
	struct stat_event *n = realloc(r->events, (r->nr_events + 1) * sizeof(*n));

	if (!n)
		return NULL;
	r->events = n;
	n += r->nr_events++;
	memset(n, 0, sizeof(*n));
	n->scale = 1.0;
	return n;
}

enum add_mode {
	ADD_STRICT,		/* any failure is reported */
	ADD_PLACEHOLDER,	/* what the machine lacks: a <not supported> row */
	ADD_TRY,		/* what the machine lacks: return ADD_LACKING */
};

#define ADD_LACKING (-2)

/*
 * Add @text to the session and make (or check) its rows.
 * Return -1 on success, ADD_LACKING (ADD_TRY), or perfex's exit status.
 */
static int add_to_session(struct build *b, const char *text, const char *filter,
			  enum add_mode mode)
{
	struct perfctr_parse_error err = { .sz = sizeof(err), .column = -1 };
	struct perfctr_session *s = b->s;
	size_t before = perfctr_session__nr_events(s), k;
	int ret = b->set < 0 ? perfctr_session__add_events(s, text, &err) :
		  stat_sets_add(s, &b->o->cfg, (uint16_t)b->set, text, &err);
	int errnum = err.errnum ? err.errnum : -ret;

	if (ret < 0 && mode == ADD_TRY && perfctr_errno_unsupported(errnum))
		return ADD_LACKING;
	if (ret < 0 && mode == ADD_PLACEHOLDER && perfctr_errno_unsupported(errnum)) {
		if (b->first) {
			struct stat_event *n = new_row(b);

			if (!n || !(n->name = strdup(text)))
				goto nomem;
			n->session_idx = STAT_NO_IDX;
			n->group = b->row;
			n->set = b->set;
			n->unsupported_errnum = errnum;
		}
		b->row++;
		return -1;
	}
	if (ret < 0)
		return perfex_event_error(text, &err, ret);
	for (k = before; k < perfctr_session__nr_events(s); k++) {
		size_t *m = realloc(b->row_of, (k + 1) * sizeof(*m));

		if (!m)
			goto nomem;
		b->row_of = m;
		m[k] = b->row;
		if (filter) {
			int fret = perfctr_session__set_filter(s, k, filter);

			if (fret < 0) {
				perfex_error("cannot set filter '%s' on '%s': %s",
					     filter, perfctr_session__event_name(s, k),
					     strerror(-fret));
				return PERFEX_EXIT_EVENT;
			}
		}
		if (b->first) {
			const struct perf_event_attr *attr =
				perfctr_session__event_attr(s, k);
			const char *unit = perfctr_session__event_unit(s, k);
			double scale = perfctr_session__event_scale(s, k);
			size_t leader = perfctr_session__event_leader(s, k);
			struct stat_event *n = new_row(b);

			if (!n || !(n->name = strdup(perfctr_session__event_name(s, k))))
				goto nomem;
			n->session_idx = k;
			n->set = b->set;
			n->group = leader < k ? b->row_of[leader] : b->row;
			n->is_clock = attr && attr->type == PERF_TYPE_SOFTWARE &&
				(attr->config == PERF_COUNT_SW_TASK_CLOCK ||
				 attr->config == PERF_COUNT_SW_CPU_CLOCK);
			snprintf(n->unit, sizeof(n->unit), "%s", unit ? unit : "");
			if (scale > 0)
				n->scale = scale;
		} else if (b->row >= b->r->nr_events ||
			   b->r->events[b->row].session_idx != k) {
			perfex_error("the events changed between runs");
			return PERFEX_EXIT_INTERNAL;
		}
		b->row++;
	}
	return -1;
nomem:
	perfex_error("out of memory");
	return PERFEX_EXIT_INTERNAL;
}

/* The hardware defaults one by one, each a placeholder where it fails. */
static int add_hardware_defaults(struct build *b)
{
	char list[sizeof(stat_default_hardware)], *save = NULL, *name;
	int ret = -1;

	memcpy(list, stat_default_hardware, sizeof(list));
	for (name = strtok_r(list, ",", &save); name && ret < 0;
	     name = strtok_r(NULL, ",", &save))
		ret = add_to_session(b, name, NULL, ADD_PLACEHOLDER);
	return ret;
}

/* The name= of an event spec ("cpu/event=0xc3,name=ex_ret_brn/"), or NULL. */
static char *spec_name(const char *spec, size_t len)
{
	const char *n = memmem(spec, len, "name=", 5);
	size_t k;

	if (!n || (n != spec && n[-1] != ',' && n[-1] != '/'))
		return NULL;
	n += 5;
	k = strcspn(n, ",/");
	if (n + k > spec + len)
		return NULL;
	return strndup(n, k);
}

/*
 * A metric group the machine cannot count as a whole: event by event, a
 * <not supported> row where one fails (its metrics then say why).  The
 * commas of a PMU event's terms are between its slashes.
 */
static int add_metric_events(struct build *b, const char *group)
{
	const char *s = group + (*group == '{');
	size_t len = strlen(s) - (*group == '{' && s[strlen(s) - 1] == '}');
	int ret = -1;

	while (len && ret < 0) {
		size_t k = 0, slashes = 0;
		char *one;

		while (k < len && (s[k] != ',' || slashes % 2)) {
			slashes += s[k] == '/';
			k++;
		}
		one = strndup(s, k);
		if (!one)
			return PERFEX_EXIT_INTERNAL;
		size_t before = b->r->nr_events;
		ret = add_to_session(b, one, NULL, ADD_PLACEHOLDER);
		if (ret < 0 && b->first && b->r->nr_events > before &&
		    b->r->events[before].session_idx == STAT_NO_IDX) {
			char *name = spec_name(one, k);

			if (name) {
				free(b->r->events[before].name);
				b->r->events[before].name = name;
			}
		}
		free(one);
		s += k;
		len -= k;
		if (len) {
			s++;
			len--;
		}
	}
	return ret;
}

/*
 * The session of one run.  On the first run (@r->events NULL) the event
 * rows are made from it; later runs must produce the same events.
 */
static int build_session_part(struct stat_options *o, struct stat_report *r,
			      const struct perfctr_parse_opts *popts,
			      struct perfctr_session **out, size_t part,
			      bool first, size_t row0)
{
	/*
	 * A command counts from its exec (enable-on-exec).  Other targets are
	 * opened disabled and started once everything is open: a tracepoint
	 * filter is set after the open, and an event enabled at its open
	 * would count everyone's events until then.
	 */
	bool command_target = !o->cfg.pid && !o->cfg.tid && !o->cfg.cpus;
	PERFCTR_OPTS(perfctr_session_opts, sopts,
		     .flags = PERFCTR_SESSION_INHERIT |
			      (command_target ? PERFCTR_SESSION_ENABLE_ON_ATTACH : 0),
		     .parse_opts = popts);
	struct build b = { .o = o, .r = r, .first = first, .row = row0,
			   .set = -1 };
	size_t i;
	int ret = -1;

	b.s = perfctr_session__new(&sopts);
	if (!b.s) {
		perfex_error("cannot create a session: %s", strerror(errno));
		return PERFEX_EXIT_INTERNAL;
	}
	for (i = 0; i < o->nr_specs && ret < 0; i++) {
		const struct spec *sp = &o->specs[i];

		if (o->cfg.cgroup_per_event && sp->part != part)
			continue;
		if (o->cfg.sets)
			b.set = (int)i;	/* each -e its own set */
		if (sp->is_metric) {
			ret = add_to_session(&b, sp->text, NULL, ADD_TRY);
			if (ret == ADD_LACKING)
				ret = add_metric_events(&b, sp->text);
		} else if (sp->is_default && sp->text == stat_default_hardware) {
			/* One parse for the four when the machine has them
			 * (the session keeps a failed parse out entirely). */
			ret = add_to_session(&b, sp->text, NULL, ADD_TRY);
			if (ret == ADD_LACKING)
				ret = add_hardware_defaults(&b);
		} else {
			ret = add_to_session(&b, sp->text, sp->filter, ADD_STRICT);
		}
	}
	free(b.row_of);
	if (ret < 0 && o->cfg.sets)
		ret = stat_sets_switch_after(b.s, &o->cfg);
	if (ret >= 0) {
		perfctr_session__delete(b.s);
		return ret;
	}
	*out = b.s;
	return -1;
}

int stat_build_session(struct stat_options *o, struct stat_report *r,
			 const struct perfctr_parse_opts *popts,
			 struct perfctr_session **out)
{
	return build_session_part(o, r, popts, out, 0, !r->events, 0);
}

/*
 * --for-each-cgroup: cgroup 0 counts in the run's session; each other
 * cgroup gets a session of the same events (checked row by row against
 * cgroup 0's) and a target of its own.  On the first run cgroup 0's rows
 * are copied for every cgroup, cgroup after cgroup.
 * Return -1 on success, or perfex's exit status.
 */
int stat_build_more(struct stat_options *o, struct stat_report *r,
		      const struct perfctr_parse_opts *popts, struct run *run)
{
	const struct stat_config *cfg = &o->cfg;
	size_t n = cfg->nr_cgroups - 1, per, p, e;
	bool first = r->nr_events && !r->events[0].cgroup;
	int ret;

	run->more = calloc(n + 1, sizeof(*run->more));
	run->more_targets = calloc(n + 1, sizeof(*run->more_targets));
	if (!run->more || !run->more_targets)
		goto nomem;
	for (p = 0; p < n; p++) {
		ret = stat_build_session(o, r, popts, &run->more[p]);
		if (ret >= 0)
			return ret;
		run->nr_more++;
		run->more_targets[p] = stat_part_target(run, cfg, p + 1);
		if (!run->more_targets[p]) {
			if (errno == ENOMEDIUM || errno == ENOENT ||
			    errno == ENOTDIR)
				return perfex_cgroup_error("count",
						cfg->cgroups[p + 1], errno);
			return stat_target_error(cfg, errno);
		}
	}
	if (!first)
		return -1;
	per = r->nr_events;
	{
		struct stat_event *ev = realloc(r->events, per * cfg->nr_cgroups *
						sizeof(*ev));

		if (!ev)
			goto nomem;
		r->events = ev;
	}
	for (e = 0; e < per; e++)
		r->events[e].cgroup = cfg->cgroups[0];
	for (p = 1; p < cfg->nr_cgroups; p++) {
		for (e = 0; e < per; e++) {
			struct stat_event *d = &r->events[r->nr_events];

			*d = r->events[e];
			d->group += p * per;
			d->part = p;
			d->cgroup = cfg->cgroups[p];
			d->name = strdup(r->events[e].name);
			if (!d->name)
				goto nomem;
			r->nr_events++;
		}
	}
	return -1;
nomem:
	perfex_error("out of memory");
	return PERFEX_EXIT_INTERNAL;
}

/* The BPF counters of a list of cgroups (-G's parts, --for-each-cgroup):
 * a slot for each, past the library's default of 256. */
static struct perfctr_bpf_counters *list_bpf_counters(const struct stat_config *cfg)
{
	PERFCTR_OPTS(perfctr_bpf_counters_opts, opts,
		     .max_cgroups = cfg->nr_cgroups);

	return perfctr_bpf_counters__new(&opts);
}

/* The target of part @p of -G's cgroups, or of --for-each-cgroup's
 * cgroup @p: its cgroup (through BPF with --bpf-counters), or the CPUs
 * for the events without one. */
struct perfctr_target *stat_part_target(struct run *run,
					  const struct stat_config *cfg,
					  size_t p)
{
	PERFCTR_OPTS(perfctr_cgroup_opts, opts);

	if (!cfg->cgroups[p])
		return perfctr_target__new_cpus(cfg->cpus);
	if (cfg->bpf_counters && !run->bpf) {
		run->bpf = list_bpf_counters(cfg);
		if (!run->bpf)
			return NULL;
	}
	opts.bpf = cfg->bpf_counters ? run->bpf : NULL;
	return perfctr_target__new_cgroup_opts(cfg->cgroups[p], cfg->cpus,
					       &opts);
}

/*
 * -G with events in different cgroups: a session per part, each with the
 * events of its cgroup; their rows follow each other part by part (in
 * the order of each part's first event), labelled with their cgroup.
 * Part 0's session is the run's; its target is made by do_run().
 * Return -1 on success, or perfex's exit status.
 */
int stat_build_parts(struct stat_options *o, struct stat_report *r,
		       const struct perfctr_parse_opts *popts, struct run *run,
		       unsigned int nth)
{
	const struct stat_config *cfg = &o->cfg;
	size_t n = cfg->nr_cgroups;
	int ret;

	run->more = calloc(n, sizeof(*run->more));
	run->more_targets = calloc(n, sizeof(*run->more_targets));
	if (!run->more || !run->more_targets) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	for (size_t p = 0; p < n; p++) {
		size_t row0 = r->nr_events, e;

		if (nth)
			for (row0 = 0; row0 < r->nr_events &&
			     r->events[row0].part != p; row0++)
				;
		ret = build_session_part(o, r, popts, p ? &run->more[p - 1] :
					 &run->session, p, nth == 0, row0);
		if (ret >= 0)
			return ret;
		for (e = row0; nth == 0 && e < r->nr_events; e++) {
			r->events[e].part = p;
			r->events[e].cgroup = cfg->cgroups[p];
		}
		if (!p)
			continue;
		run->nr_more++;
		run->more_targets[p - 1] = stat_part_target(run, cfg, p);
		if (!run->more_targets[p - 1])
			return stat_target_error(cfg, errno);
	}
	return -1;
}
