// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex stat's options: the handler of the option table's rows, the -G
 * rule (which cgroup each -e counts in) and the checks once all are read.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-names.h"
#include "options.h"
#include "perfex.h"
#include "stat.h"

int stat_add_spec(struct stat_options *o, const char *text, bool is_default)
{
	struct spec *n = realloc(o->specs, (o->nr_specs + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	o->specs = n;
	n[o->nr_specs++] = (struct spec){ .text = text, .is_default = is_default };
	return 0;
}

static int usage_error(const char *msg)
{
	perfex_error("%s", msg);
	perfex_hint("perfex --help lists the options");
	return PERFEX_EXIT_USAGE;
}

/*
 * -G NAMES: before any -e (perfex's, perf refuses it) one cgroup for
 * every event; after events, perf's rule, applied once the -e's are
 * expanded (cgroup_parts()).
 */
static perfex_result cgroup_option(struct perfex_parse *p,
				   struct stat_options *o)
{
	struct cgroup_arg *n;

	if (!o->nr_specs) {
		if (!*p->arg || strchr(p->arg, ','))
			return perfex_opt_error(p, "before any -e takes one cgroup "
						"name (one cgroup for every "
						"event); a list needs its -e "
						"first");
		if (o->cgroup_given)
			return perfex_opt_error(p, "is given once before the "
						"events");
		o->cgroup_before_events = true;
		o->cgroup_given = true;
		o->cfg.cgroup = p->arg;
		return -1;
	}
	if (o->cgroup_before_events)
		return perfex_opt_error(p, "cannot follow a -G given before "
					"the events (one cgroup for every "
					"event)");
	o->cgroup_given = true;
	n = realloc(o->cgroup_args, (o->nr_cgroup_args + 1) * sizeof(*n));
	if (!n)
		return PERFEX_EXIT_INTERNAL;
	o->cgroup_args = n;
	n[o->nr_cgroup_args++] = (struct cgroup_arg){ .names = p->arg,
						      .nr_specs = o->nr_specs };
	return -1;
}

/*
 * The -G names given after events, to the -e's: a -e whose events all
 * go to one cgroup keeps it whole, one whose events go to several is cut
 * into its events (and groups), each a -e of its own.
 * Return -1 or perfex's exit status.
 */
static int assign_cgroups(struct stat_options *o)
{
	struct cgroup_plan plan;
	struct spec *specs = NULL;
	const char **texts;
	size_t nr = 0;
	int ret;

	texts = malloc(o->nr_specs * sizeof(*texts));
	if (!texts)
		return PERFEX_EXIT_INTERNAL;
	for (size_t i = 0; i < o->nr_specs; i++)
		texts[i] = o->specs[i].text;
	ret = cgroup_plan_make(&plan, texts, o->nr_specs, o->cgroup_args,
			       o->nr_cgroup_args, NULL);
	free(texts);
	for (size_t i = 0; i < o->nr_specs && ret < 0; i++) {
		const char *name = plan.names[plan.first[i]];
		char **pieces = NULL, **names = NULL;
		size_t nr_pieces = 1;
		struct spec *n;

		if (cgroup_plan_splits(&plan, i)) {
			ret = cgroup_plan_split(&plan, i, o->specs[i].text, NULL,
						&pieces, &names, &nr_pieces);
			if (ret >= 0)
				break;
		}
		n = realloc(specs, (nr + nr_pieces) * sizeof(*n));
		if (n)
			specs = n;
		else
			ret = PERFEX_EXIT_INTERNAL;
		for (size_t k = 0; k < nr_pieces; k++) {
			struct spec *sp = n ? &specs[nr++] : NULL;

			if (!sp) {
				if (pieces) {
					free(pieces[k]);
					free(names[k]);
				}
				continue;
			}
			*sp = o->specs[i];
			if (pieces) {
				sp->piece = pieces[k];
				sp->text = pieces[k];
				sp->cgroup = names[k];
				continue;
			}
			sp->cgroup = name ? strdup(name) : NULL;
			if (name && !sp->cgroup)
				ret = PERFEX_EXIT_INTERNAL;
		}
		free(pieces);
		free(names);
	}
	cgroup_plan_free(&plan);
	if (ret >= 0) {
		for (size_t i = 0; i < nr; i++) {
			free(specs[i].cgroup);
			free(specs[i].piece);
		}
		free(specs);
		return ret;
	}
	free(o->specs);
	o->specs = specs;
	o->nr_specs = nr;
	return -1;
}

/*
 * After the options: the events' cgroups as the counting needs them.  One
 * cgroup for all: cfg.cgroup, as before; none: the CPUs; else each
 * cgroup (and "none") a part of its own, in the order of its first event.
 * Return -1 or perfex's exit status.
 */
static int cgroup_parts(struct stat_options *o)
{
	struct stat_config *cfg = &o->cfg;
	bool same = true, any = false;
	int ret;

	if (!o->cgroup_given || o->cgroup_before_events)
		return -1;
	if ((ret = assign_cgroups(o)) >= 0)
		return ret;
	for (size_t i = 0; i < o->nr_specs; i++) {
		const char *a = o->specs[i].cgroup, *b = o->specs[0].cgroup;

		any |= a != NULL;
		if ((a == NULL) != (b == NULL) || (a && strcmp(a, b)))
			same = false;
	}
	if (!any)
		return -1;
	if (same) {
		cfg->cgroup = o->specs[0].cgroup;
		return -1;
	}
	for (size_t i = 0; i < o->nr_specs; i++) {
		struct spec *sp = &o->specs[i];
		size_t p;

		for (p = 0; p < cfg->nr_cgroups; p++) {
			const char *c = cfg->cgroups[p];

			if ((!c && !sp->cgroup) ||
			    (c && sp->cgroup && !strcmp(c, sp->cgroup)))
				break;
		}
		if (p == cfg->nr_cgroups) {
			char **list = realloc(cfg->cgroups,
					      (p + 1) * sizeof(*list));

			if (!list)
				return PERFEX_EXIT_INTERNAL;
			cfg->cgroups = list;
			list[p] = sp->cgroup ? strdup(sp->cgroup) : NULL;
			if (sp->cgroup && !list[p])
				return PERFEX_EXIT_INTERNAL;
			cfg->nr_cgroups++;
		}
		sp->part = p;
	}
	cfg->cgroup_per_event = true;
	return -1;
}

/* --switch-after N:EVENT */
static perfex_result parse_switch_after(struct perfex_parse *p,
					struct stat_config *cfg)
{
	const char *colon = strchr(p->arg, ':');
	unsigned long v;
	char n[24];
	perfex_result r;

	if (!colon || colon == p->arg || !colon[1])
		return perfex_opt_error(p, "expects N:EVENT, e.g. "
					"10000:syscalls:sys_enter_read (not '%s')",
					p->arg);
	snprintf(n, sizeof(n), "%.*s", (int)(colon - p->arg), p->arg);
	if ((size_t)(colon - p->arg) >= sizeof(n))	/* cut: too long */
		return perfex_opt_error(p, "expects a positive count before "
					"the ':' (not '%s')", n);
	r = perfex_opt_ulong_of(p, n, 1, ULONG_MAX,
				"a positive count before the ':'", &v);
	if (r != PERFEX_GO_ON)
		return r;
	cfg->switch_after_n = v;
	cfg->switch_after_event = colon + 1;
	return -1;
}

/*
 * -A, --per-thread, --per-socket, --per-die, --per-core: one way to split
 * the counts.  A group of CPUs with any other split is refused (-A with
 * --per-thread stays as it was: the later one).
 */
static perfex_result aggr_option(struct perfex_parse *p,
				 struct stat_options *o)
{
	static const enum stat_aggr of[] = {
		[OPT_NO_AGGR] = STAT_AGGR_CPU,
		[OPT_PER_THREAD] = STAT_AGGR_THREAD,
		[OPT_PER_SOCKET] = STAT_AGGR_SOCKET,
		[OPT_PER_DIE] = STAT_AGGR_DIE,
		[OPT_PER_CORE] = STAT_AGGR_CORE,
	};
	enum stat_aggr aggr = of[p->opt->id];

	if (o->aggr_opt[0] && strcmp(o->aggr_opt, p->name) &&
	    (stat_aggr_groups(aggr) || stat_aggr_groups(o->cfg.aggr)))
		return perfex_opt_error(p, "and '%s' exclude each other: one "
					"line per CPU, thread, socket, die or "
					"core", o->aggr_opt);
	snprintf(o->aggr_opt, sizeof(o->aggr_opt), "%s", p->name);
	o->cfg.aggr = aggr;
	/* --per-thread with a command: the tree with its threads (decided
	 * once the target is known). */
	if (aggr == STAT_AGGR_THREAD)
		o->cfg.tree_threads = true;
	return -1;
}

/* -p PID, -t TID: the process or the thread to count. */
static perfex_result task_option(struct perfex_parse *p, struct stat_options *o)
{
	bool pid = p->opt->id == OPT_PID;
	unsigned long v;
	perfex_result r;

	r = perfex_opt_ulong(p, 1, INT_MAX, pid ? "a process id" :
			     "a thread id", &v);
	if (r != PERFEX_GO_ON)
		return r;
	if (pid)
		o->cfg.pid = (pid_t)v;
	else
		o->cfg.tid = (pid_t)v;
	return PERFEX_GO_ON;
}

/* --for-each-cgroup NAMES: a list; given again, it goes on. */
static perfex_result for_each_cgroup_option(struct perfex_parse *p,
					    struct stat_config *cfg)
{
	const char *name = p->arg;

	do {
		size_t len = strcspn(name, ",");
		char **list;

		if (!len)
			return perfex_opt_error(p, "takes cgroup names "
						"separated by commas "
						"(an empty one in '%s')",
						p->arg);
		list = realloc(cfg->cgroups, (cfg->nr_cgroups + 1) *
			       sizeof(*list));
		if (!list)
			return PERFEX_EXIT_INTERNAL;
		cfg->cgroups = list;
		list[cfg->nr_cgroups] = strndup(name, len);
		if (!list[cfg->nr_cgroups])
			return PERFEX_EXIT_INTERNAL;
		cfg->nr_cgroups++;
		name += len;
	} while (*name++);
	return PERFEX_GO_ON;
}

/* --tree-limit N or P%: the rows of the process tree shown. */
static perfex_result tree_limit_option(struct perfex_parse *p,
				       struct stat_config *cfg)
{
	size_t len = strlen(p->arg);
	unsigned long v;
	perfex_result r;
	char num[32];
	char *end;
	double pc;

	if (len && p->arg[len - 1] == '%' && len < sizeof(num)) {
		memcpy(num, p->arg, len - 1);
		num[len - 1] = '\0';
		errno = 0;
		pc = strtod(num, &end);
		if (errno || end == num || *end || !(pc > 0 && pc <= 100))
			return perfex_opt_error(p, "expects N or a percentage "
						"P%% in (0, 100] (not '%s')",
						p->arg);
		cfg->tree_percent = pc;
		return PERFEX_GO_ON;
	}
	r = perfex_opt_ulong(p, 1, ULONG_MAX, "a count of rows or a "
			     "percentage P%", &v);
	if (r == PERFEX_GO_ON)
		cfg->tree_limit = v;
	return r;
}

/* A number in [@min, @max] (perfex_opt_ulong()) into @out. */
static perfex_result uint_option(struct perfex_parse *p, unsigned long min,
				 unsigned long max, const char *what,
				 unsigned int *out)
{
	unsigned long v;
	perfex_result r = perfex_opt_ulong(p, min, max, what, &v);

	if (r == PERFEX_GO_ON)
		*out = (unsigned int)v;
	return r;
}

/* -M NAMES: the lists given, joined by commas. */
static perfex_result metrics_option(struct perfex_parse *p,
				    struct stat_options *o)
{
	size_t len = o->metric_list ? strlen(o->metric_list) : 0;
	char *list;

	/* Refused before the realloc, which may move the list: an error
	 * after it would leave o->metric_list freed. */
	if (!*p->arg)
		return perfex_opt_error(p, "needs metric or metric group names "
					"(perfex list metrics)");
	list = realloc(o->metric_list, len + strlen(p->arg) + 2);
	if (!list)
		return PERFEX_EXIT_INTERNAL;
	snprintf(list + len, strlen(p->arg) + 2, "%s%s", len ? "," : "",
		 p->arg);
	o->metric_list = list;
	o->metrics.list = list;
	return PERFEX_GO_ON;
}

/* --metrics-file FILE: may be repeated. */
static perfex_result metrics_file_option(struct perfex_parse *p,
					 struct stat_options *o)
{
	const char **files = realloc(o->metric_files,
				     (o->metrics.nr_files + 1) * sizeof(*files));

	if (!files)
		return PERFEX_EXIT_INTERNAL;
	files[o->metrics.nr_files++] = p->arg;
	o->metric_files = files;
	o->metrics.files = files;
	return PERFEX_GO_ON;
}

/*
 * The options that need more than their row's store (-a, -o, --metric-only
 * and the like are rows that store themselves: options.c).
 */
static perfex_result stat_option(struct perfex_parse *p, void *ctx)
{
	struct stat_options *o = ctx;
	perfex_result r;

	switch (p->opt->id) {
	case OPT_EVENT:
		return stat_add_spec(o, p->arg, false) ? PERFEX_EXIT_INTERNAL :
							 PERFEX_GO_ON;
	case OPT_FILTER:
		if (!o->nr_specs)
			return perfex_opt_error(p, "needs an -e before it");
		o->specs[o->nr_specs - 1].filter = p->arg;
		return PERFEX_GO_ON;
	case OPT_PID:
	case OPT_TID:
		return task_option(p, o);
	case OPT_CPU:
		if (!*p->arg)
			return perfex_opt_error(p, "needs a CPU list (\"0-3,6\")");
		o->cfg.cpus = p->arg;
		return PERFEX_GO_ON;
	case OPT_CGROUP:
		return cgroup_option(p, o);
	case OPT_FOR_EACH_CGROUP:
		return for_each_cgroup_option(p, &o->cfg);
	case OPT_NO_AGGR:
	case OPT_PER_THREAD:
	case OPT_PER_SOCKET:
	case OPT_PER_DIE:
	case OPT_PER_CORE:
		return aggr_option(p, o);
	case OPT_TREE_LIMIT:
		return tree_limit_option(p, &o->cfg);
	case OPT_INTERVAL:
		return uint_option(p, 10, 3600000, "milliseconds, at least 10",
				   &o->cfg.interval_ms);
	case OPT_REPEAT:
		return uint_option(p, 1, 1000000, "a count of 1 or more",
				   &o->cfg.repeat);
	case OPT_FIELD_SEP:
		if (!*p->arg)
			return perfex_opt_error(p, "needs a separator (not an "
						"empty string)");
		o->cfg.sep = p->arg;
		o->cfg.format = STAT_FORMAT_CSV;
		return PERFEX_GO_ON;
	case OPT_JSON:
		o->cfg.format = STAT_FORMAT_JSON;
		return PERFEX_GO_ON;
	case OPT_JSON_FORMAT:
		if (strcmp(p->arg, "perf") && strcmp(p->arg, "perfex"))
			return perfex_opt_error(p, "expects perf or perfex "
						"(not '%s')", p->arg);
		o->json_perf = !strcmp(p->arg, "perf");
		return PERFEX_GO_ON;
	case OPT_KILL_CHILD:
		return perfex_opt_signal(p, &o->kill_child);
	case OPT_SWITCH_INTERVAL:
		return uint_option(p, 1, 3600000,
				   "a positive number of milliseconds",
				   &o->cfg.switch_interval_ms);
	case OPT_SWITCH_AFTER:
		return parse_switch_after(p, &o->cfg);
	case OPT_METRICS:
		return metrics_option(p, o);
	case OPT_METRICS_FILE:
		return metrics_file_option(p, o);
	case OPT_TD_LEVEL:
		r = uint_option(p, 1, 6, "a level of 1 to 6", &o->metrics.td_level);
		if (r == PERFEX_GO_ON)
			o->metrics.topdown = true;
		return r;
	case OPT_VERSION:
		printf("perfex %s\n", perfctr_version());
		return 0;
	default:
		return PERFEX_GO_ON;
	}
}

/*
 * After the parse: the cgroups' parts, and what -G, --for-each-cgroup,
 * -r, the aggregations, event sets and metrics exclude of each other.
 * Return -1 to go on, or the exit status.
 */
static int check_cgroups_and_metrics(struct stat_options *o)
{
	int ret;

	if (o->cfg.nr_cgroups && o->cgroup_given)
		return usage_error("--for-each-cgroup and -G exclude each other");
	if ((ret = cgroup_parts(o)) >= 0)
		return ret;
	/* Each cgroup's events are a session of their own: what pairs
	 * events of one session (sets, metrics, the tree) is not for
	 * them yet. */
	if (o->cfg.nr_cgroups && (o->cfg.sets || o->metrics.list ||
				  o->metrics.topdown))
		return usage_error(o->cfg.cgroup_per_event ?
				   "-G with events in different cgroups cannot "
				   "be combined with event sets, -M or --topdown" :
				   "--for-each-cgroup cannot be combined with "
				   "event sets, -M or --topdown");
	if (o->cfg.bpf_counters && !o->cfg.cgroup && !o->cfg.nr_cgroups)
		return usage_error("--bpf-counters counts cgroups: it goes "
				   "with -G or --for-each-cgroup");
	if (o->cfg.repeat > 1 && o->cfg.interval_ms)
		return usage_error("-r and -I cannot be combined");
	if (o->cfg.repeat > 1 && stat_aggr_groups(o->cfg.aggr)) {
		perfex_error("option '-r' cannot be combined with '%s' (the "
			     "spread of each group over the runs is not kept)",
			     o->aggr_opt);
		perfex_hint("perfex --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	if (o->cfg.repeat > 1 && o->cfg.aggr != STAT_AGGR_GLOBAL)
		return usage_error("-r cannot be combined with -A or --per-thread");
	if (o->cfg.sets && o->nr_specs < 2)
		return usage_error("event sets need two -e or more (one per set)");
	if (!o->metrics.td_level)
		o->metrics.td_level = 1;
	if ((o->metrics.only || o->metrics.nr_files || o->metrics.no_merge ||
	     o->metrics.no_group) && !o->metrics.list && !o->metrics.topdown)
		return usage_error("--metric-only, --metrics-file, "
				   "--metric-no-merge and --metric-no-group go "
				   "with -M or --topdown");
	if ((o->metrics.list || o->metrics.topdown) && o->cfg.sets)
		return usage_error("metrics cannot be computed from event sets "
				   "(their events are never counted together)");
	return -1;
}

/* Return -1 to go on, or the exit status. */
int stat_parse_options(int argc, char **argv, struct stat_options *o)
{
	unsigned int modes;
	int ret;

	o->cfg.repeat = 1;
	o->cfg.sep = ",";
	ret = perfex_options_parse(&o->parse, PERFEX_CMD_STAT, argc, argv, true,
				   stat_option, o);
	if (ret >= 0)
		return ret;
	if (optind < argc)
		o->cfg.command = &argv[optind];
	if (o->all_cpus && !o->cfg.cpus)
		o->cfg.cpus = "";
	if (perfex_option_given(&o->parse, OPT_JSON_FORMAT) &&
	    o->cfg.format != STAT_FORMAT_JSON)
		return usage_error("--json-format goes with -j");
	if (o->json_perf)
		o->cfg.format = STAT_FORMAT_PERF_JSON;
	o->cfg.sets = o->cfg.switch_interval_ms || o->cfg.switch_after_event;

	/* -t with -C: the thread only while it runs on those CPUs. */
	if ((o->cfg.pid != 0) + (o->cfg.tid != 0) + (o->cfg.cpus != NULL) > 1 &&
	    !(o->cfg.tid && o->cfg.cpus && o->cfg.cpus[0] && !o->cfg.pid))
		return usage_error("choose one target: -p, -t (with or without "
				   "-C), or -a/-C");
	if (!o->cfg.command && !o->cfg.pid && !o->cfg.tid && !o->cfg.cpus) {
		perfex_error("no command to run");
		perfex_hint("perfex [options] -- command [args]; perfex --help");
		return PERFEX_EXIT_USAGE;
	}
	/* --per-thread of a command without -p/-t: its tree, by thread. */
	if (o->cfg.tree_threads && o->cfg.command && !o->cfg.pid &&
	    !o->cfg.tid && !o->cfg.cpus)
		o->cfg.tree = true;
	else
		o->cfg.tree_threads = o->cfg.tree_threads && o->cfg.tree;
	if (o->cfg.tree)
		o->cfg.aggr = STAT_AGGR_GLOBAL;
	if (perfex_option_given(&o->parse, OPT_TREE_LIMIT) && !o->cfg.tree)
		return usage_error("option '--tree-limit' goes with "
				   "--per-process");
	if (o->cfg.tree && (o->cfg.tid || o->cfg.cpus))
		return usage_error("--per-process traces the tree of a command "
				   "or of -p: not with -t, -a or -C");
	if (o->cfg.tree && (o->cfg.repeat > 1 || o->cfg.interval_ms))
		return usage_error("--per-process cannot be combined with "
				   "-r or -I");
	if (o->cfg.tree && o->cfg.format == STAT_FORMAT_PERF_JSON)
		return usage_error("perf stat -j's lines have no form for a "
				   "process tree (--per-process, --per-thread "
				   "of a command)");
	modes = (o->cfg.command ? MODE_COMMAND : 0) |
		(o->cfg.cpus ? MODE_CPUS : 0) |
		(o->cfg.pid || o->cfg.tid ? MODE_THREADS : 0) |
		(o->cfg.sets ? MODE_SETS : 0);
	ret = perfex_options_check_modes(&o->parse, modes);
	if (ret >= 0)
		return ret;
	return check_cgroups_and_metrics(o);
}
