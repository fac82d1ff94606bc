// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex stat — counting mode, the default: run a command (or watch a
 * process, a thread or CPUs) and report its counts, as the seeds' perfex
 * and pmcCount did; -r N repeats the run and reports mean, standard
 * deviation, minimum and maximum (pmcCount's SUM mode).
 *
 * Options, targets and the run loop live here; stat-print.c formats.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-names.h"
#include "options.h"
#include "perfex.h"
#include "stat.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

struct spec {
	const char *text;
	const char *filter;	/* --filter after this -e, or NULL */
	bool is_default;
	bool is_metric;		/* a group of -M's events */
	/* -G's cgroup for this event (perf's rule, see cgroup_parts()),
	 * NULL: none; and its part (the session of its cgroup) when the
	 * events have different cgroups (cfg.cgroup_per_event). */
	char *cgroup;
	size_t part;
	/* A piece of a -e whose events -G sent to different cgroups: the
	 * text, which is this spec's own. */
	char *piece;
};

struct stat_options {
	struct stat_config cfg;
	struct spec *specs;
	size_t nr_specs;
	const char *output;
	bool all_cpus;
	bool json_perf;			/* --json-format perf */
	int kill_child;			/* --kill-child's signal, 0 = none */
	struct perfex_parse parse;
	struct stat_metric_opts metrics;
	char *metric_list;		/* the -M lists, joined */
	const char **metric_files;	/* --metrics-file */
	/* -G: those given after events, and whether a -G came before any
	 * -e (one cgroup for every event). */
	struct cgroup_arg *cgroup_args;
	size_t nr_cgroup_args;
	bool cgroup_before_events;
	bool cgroup_given;
	/* The aggregation option given (-A, --per-thread, --per-core, ...)
	 * as spelled, for "exclude each other"; "" before one. */
	char aggr_opt[48];
};

static int add_spec(struct stat_options *o, const char *text, bool is_default)
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

static perfex_result stat_option(struct perfex_parse *p, void *ctx)
{
	struct stat_options *o = ctx;
	unsigned long v;
	int r;

	switch (p->opt->id) {
	case OPT_EVENT:
		if (add_spec(o, p->arg, false))
			return PERFEX_EXIT_INTERNAL;
		break;
	case OPT_FILTER:
		if (!o->nr_specs)
			return perfex_opt_error(p, "needs an -e before it");
		o->specs[o->nr_specs - 1].filter = p->arg;
		break;
	case OPT_PID:
	case OPT_TID:
		if ((r = perfex_opt_ulong(p, 1, INT_MAX, p->opt->id == OPT_PID ?
					  "a process id" : "a thread id", &v)) >= 0)
			return r;
		if (p->opt->id == OPT_PID)
			o->cfg.pid = (pid_t)v;
		else
			o->cfg.tid = (pid_t)v;
		break;
	case OPT_ALL_CPUS:
		o->all_cpus = true;
		break;
	case OPT_CPU:
		if (!*p->arg)
			return perfex_opt_error(p, "needs a CPU list (\"0-3,6\")");
		o->cfg.cpus = p->arg;
		break;
	case OPT_CGROUP:
		return cgroup_option(p, o);
	case OPT_FOR_EACH_CGROUP: {
		const char *name = p->arg;

		/* A list; given again, it goes on. */
		do {
			size_t len = strcspn(name, ",");
			char **list;

			if (!len)
				return perfex_opt_error(p, "takes cgroup names "
							"separated by commas "
							"(an empty one in '%s')",
							p->arg);
			list = realloc(o->cfg.cgroups, (o->cfg.nr_cgroups + 1) *
				       sizeof(*list));
			if (!list)
				return PERFEX_EXIT_INTERNAL;
			o->cfg.cgroups = list;
			list[o->cfg.nr_cgroups] = strndup(name, len);
			if (!list[o->cfg.nr_cgroups])
				return PERFEX_EXIT_INTERNAL;
			o->cfg.nr_cgroups++;
			name += len;
		} while (*name++);
		break;
	}
	case OPT_NO_AGGR:
	case OPT_PER_THREAD:
	case OPT_PER_SOCKET:
	case OPT_PER_DIE:
	case OPT_PER_CORE:
		return aggr_option(p, o);
	case OPT_TREE_LIMIT: {
		size_t len = strlen(p->arg);
		char num[32];
		char *end;
		double pc;

		if (len && p->arg[len - 1] == '%' && len < sizeof(num)) {
			memcpy(num, p->arg, len - 1);
			num[len - 1] = '\0';
			errno = 0;
			pc = strtod(num, &end);
			if (errno || end == num || *end || !(pc > 0 && pc <= 100))
				return perfex_opt_error(p, "expects N or a "
							"percentage P%% in "
							"(0, 100] (not '%s')",
							p->arg);
			o->cfg.tree_percent = pc;
		} else if ((r = perfex_opt_ulong(p, 1, ULONG_MAX,
						 "a count of rows or a "
						 "percentage P%", &v)) >= 0) {
			return r;
		} else {
			o->cfg.tree_limit = v;
		}
		break;
	}
	case OPT_INTERVAL:
		if ((r = perfex_opt_ulong(p, 10, 3600000,
					  "milliseconds, at least 10", &v)) >= 0)
			return r;
		o->cfg.interval_ms = (unsigned int)v;
		break;
	case OPT_REPEAT:
		if ((r = perfex_opt_ulong(p, 1, 1000000, "a count of 1 or more",
					  &v)) >= 0)
			return r;
		o->cfg.repeat = (unsigned int)v;
		break;
	case OPT_FIELD_SEP:
		if (!*p->arg)
			return perfex_opt_error(p, "needs a separator (not an "
						"empty string)");
		o->cfg.sep = p->arg;
		o->cfg.format = STAT_FORMAT_CSV;
		break;
	case OPT_JSON:
		o->cfg.format = STAT_FORMAT_JSON;
		break;
	case OPT_JSON_FORMAT:
		if (strcmp(p->arg, "perf") && strcmp(p->arg, "perfex"))
			return perfex_opt_error(p, "expects perf or perfex "
						"(not '%s')", p->arg);
		o->json_perf = !strcmp(p->arg, "perf");
		break;
	case OPT_OUTPUT:
		o->output = p->arg;
		break;
	case OPT_KILL_CHILD:
		return perfex_opt_signal(p, &o->kill_child);
	case OPT_SWITCH_INTERVAL:
		if ((r = perfex_opt_ulong(p, 1, 3600000,
					  "a positive number of milliseconds",
					  &v)) >= 0)
			return r;
		o->cfg.switch_interval_ms = (unsigned int)v;
		break;
	case OPT_SWITCH_AFTER:
		return parse_switch_after(p, &o->cfg);
	case OPT_METRICS: {
		size_t len = o->metric_list ? strlen(o->metric_list) : 0;
		char *list;

		/* Refused before the realloc, which may move the list: an
		 * error after it would leave o->metric_list freed. */
		if (!*p->arg)
			return perfex_opt_error(p, "needs metric or metric "
						"group names (perfex list metrics)");
		list = realloc(o->metric_list, len + strlen(p->arg) + 2);
		if (!list)
			return PERFEX_EXIT_INTERNAL;
		snprintf(list + len, strlen(p->arg) + 2, "%s%s", len ? "," : "",
			 p->arg);
		o->metric_list = list;
		o->metrics.list = list;
		break;
	}
	case OPT_METRIC_ONLY:
		o->metrics.only = true;
		break;
	case OPT_METRIC_NO_MERGE:
		o->metrics.no_merge = true;
		break;
	case OPT_METRIC_NO_GROUP:
		o->metrics.no_group = true;
		break;
	case OPT_METRICS_FILE: {
		const char **files = realloc(o->metric_files,
			(o->metrics.nr_files + 1) * sizeof(*files));

		if (!files)
			return PERFEX_EXIT_INTERNAL;
		files[o->metrics.nr_files++] = p->arg;
		o->metric_files = files;
		o->metrics.files = files;
		break;
	}
	case OPT_TOPDOWN:
		o->metrics.topdown = true;
		break;
	case OPT_TD_LEVEL:
		if ((r = perfex_opt_ulong(p, 1, 6, "a level of 1 to 6", &v)) >= 0)
			return r;
		o->metrics.td_level = (unsigned int)v;
		o->metrics.topdown = true;
		break;
	case OPT_VERSION:
		printf("perfex %s\n", perfctr_version());
		return 0;
	default:
		break;
	}
	return -1;
}

/* Return -1 to go on, or the exit status. */
static int parse_options(int argc, char **argv, struct stat_options *o)
{
	unsigned int modes;
	int ret;

	o->cfg.repeat = 1;
	o->cfg.sep = ",";
	ret = perfex_options_parse_into(&o->parse, PERFEX_CMD_STAT, argc, argv,
					true, stat_option, o, &o->cfg);
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

/* ------------------------------------------------------------ messages */

/* perf_event_paranoid, from the library's description of the machine
 * (procfs only, no probe); INT_MIN when it cannot tell. */
static int paranoid_level(void)
{
	PERFCTR_OPTS(perfctr_info_opts, iopts, .no_probe = true);
	struct perfctr_info info = { .sz = sizeof(info) };

	if (perfctr_info_ext(&iopts, &info, NULL, NULL) < 0)
		return INT_MIN;
	return info.paranoid;
}

static int permission_error(const struct stat_config *cfg, int err)
{
	int level = paranoid_level();
	int needed = (cfg->pid || cfg->tid) ? 1 : cfg->cpus ? 0 : 2;
	const char *what = cfg->pid ? "attach to the process" :
			   cfg->tid ? "attach to the thread" :
			   cfg->cpus ? "count on CPUs" : "count the command";

	perfex_error("cannot %s: %s", what, strerror(err));
	if (level == INT_MIN) {
		perfex_hint("run as root (perf_event_paranoid is unreadable)");
	} else if (level > needed) {
		perfex_hint("perf_event_paranoid is %d; this needs %d or lower "
			    "(or root / CAP_PERFMON)", level, needed);
		perfex_hint("as root: sysctl -w kernel.perf_event_paranoid=%d",
			    needed);
	} else if (cfg->pid || cfg->tid) {
		perfex_hint("only your own processes can be watched (ptrace "
			    "rules); run as root to watch others");
	} else {
		perfex_hint("perf_event_paranoid is %d; run as root or with "
			    "CAP_PERFMON", level);
	}
	return PERFEX_EXIT_PERM;
}

static int event_error(const char *spec, const struct perfctr_parse_error *err,
		       int ret)
{
	int errnum = err->errnum ? err->errnum : -ret;

	perfex_error("%s", err->message[0] ? err->message : strerror(errnum));
	if ((errnum == EINVAL || errnum == ENOENT) && err->column >= 0 &&
	    (size_t)err->column <= strlen(spec))
		fprintf(stderr, "    %s\n    %*s^\n", spec, err->column, "");
	if (err->hint[0])
		perfex_hint("%s", err->hint);
	if (errnum == ENOTDIR) {
		if (geteuid() != 0)
			perfex_hint("tracefs is readable by root only: run as root");
		else if (!err->hint[0])
			perfex_hint("as root: mount -t tracefs nodev /sys/kernel/tracing");
		return PERFEX_EXIT_TRACEFS;
	}
	if (errnum == EACCES) {
		if (!err->hint[0])
			perfex_hint("tracefs is readable by root only: run as root");
		return PERFEX_EXIT_TRACEFS;
	}
	if (errnum == ENOENT && !err->hint[0])
		perfex_hint("perfex list shows the events this machine offers");
	return PERFEX_EXIT_EVENT;
}

/* ------------------------------------------------------------- signals */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void on_child(int sig)
{
	(void)sig;
}

struct signal_state {
	sigset_t old_mask;
	sigset_t wait_mask;	/* what ppoll lets in */
	struct sigaction old[4];
};

static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };

/*
 * Called after the command is forked: the mask and the handlers must not be
 * inherited by it (a blocked SIGINT survives exec).  The signals are blocked
 * except inside ppoll(), so none is lost between a check and the wait.
 */
static void signals_take(struct signal_state *st)
{
	struct sigaction sa;
	sigset_t block;
	size_t i;

	sigemptyset(&block);
	for (i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++)
		sigaddset(&block, handled_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &st->old_mask);
	st->wait_mask = st->old_mask;
	for (i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++)
		sigdelset(&st->wait_mask, handled_signals[i]);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++) {
		sa.sa_handler = handled_signals[i] == SIGCHLD ? on_child : on_stop;
		sigaction(handled_signals[i], &sa, &st->old[i]);
	}
}

static void signals_give_back(struct signal_state *st)
{
	const struct timespec zero = { 0, 0 };
	sigset_t ours;
	size_t i;

	/* A signal still pending (it came while ppoll() returned for the
	 * command's end) was meant for this count: consume it before the
	 * default action comes back, or it would kill perfex now. */
	sigemptyset(&ours);
	for (i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++)
		sigaddset(&ours, handled_signals[i]);
	while (sigtimedwait(&ours, NULL, &zero) > 0)
		;

	for (i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++)
		sigaction(handled_signals[i], &st->old[i], NULL);
	sigprocmask(SIG_SETMASK, &st->old_mask, NULL);
}

/* --------------------------------------------------------------- a run */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int pidfd_open_compat(pid_t pid, unsigned int flags)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, flags);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* Whether a process we did not fork has gone (or is a zombie). */
static bool foreign_gone(pid_t pid)
{
	char path[64], buf[256], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

struct run {
	struct stat_options *o;
	struct stat_report *report;
	struct perfctr_session *session;
	struct perfctr_target *watched;	/* what the session is attached to */
	/* --for-each-cgroup: the sessions of cgroups 1.. (cgroup 0's is
	 * session) and their targets. */
	struct perfctr_session **more;
	struct perfctr_target **more_targets;
	size_t nr_more;
	struct perfctr_target *command;	/* the command we run, if any */
	struct perfctr_bpf_counters *bpf;	/* --bpf-counters, or NULL */
	struct perfctr_tree *tree;	/* --per-process: the command's tree */
	struct perfctr_count *counts, *prev, *delta;
	struct perfctr_count *unit_counts, *unit_prev, *unit_delta;
	size_t nr_units;	/* the session's */
	/* --per-socket/-die/-core: the group (report unit) of each of the
	 * session's units. */
	size_t *unit_group;
	double t0, last_tick;
	int wait_status;
	bool have_status;
};

/* The counts of the report's units: the session's, or with --per-core
 * and the like each group's, the sum of its CPUs'. */
static void read_unit_counts(struct run *run, struct perfctr_session *s,
			     size_t idx, size_t e,
			     struct perfctr_count *unit_counts)
{
	size_t n = run->report->nr_events, u;

	if (!run->unit_group) {
		for (u = 0; u < run->nr_units; u++)
			perfctr_session__unit_count(s, idx, u,
						    &unit_counts[u * n + e]);
		return;
	}
	/* The weakest status, so that one counted CPU makes it counted. */
	for (u = 0; u < run->report->nr_units; u++)
		unit_counts[u * n + e] = (struct perfctr_count){
			.status = PERFCTR_COUNT_NOT_SUPPORTED };
	for (u = 0; u < run->nr_units; u++) {
		struct perfctr_count c;

		if (perfctr_session__unit_count(s, idx, u, &c) == 0)
			perfctr_count__add(&unit_counts[run->unit_group[u] * n + e],
					   &c);
	}
}

static void read_counts(struct run *run, struct perfctr_count *counts,
			struct perfctr_count *unit_counts)
{
	struct stat_report *r = run->report;
	struct perfctr_session *s;
	size_t e, u;

	for (e = 0; e < r->nr_events; e++) {
		struct perfctr_count *c = &counts[e];
		size_t idx = r->events[e].session_idx;

		memset(c, 0, sizeof(*c));
		if (idx == STAT_NO_IDX) {
			c->status = PERFCTR_COUNT_NOT_SUPPORTED;
			c->errnum = r->events[e].unsupported_errnum;
			continue;
		}
		s = r->events[e].part ? run->more[r->events[e].part - 1] :
					run->session;
		perfctr_session__count(s, idx, c);
		if (unit_counts)
			read_unit_counts(run, s, idx, e, unit_counts);
	}
	for (u = 0; unit_counts && u < r->nr_units; u++)
		for (e = 0; e < r->nr_events; e++)
			if (r->events[e].session_idx == STAT_NO_IDX)
				unit_counts[u * r->nr_events + e] = counts[e];
}

static void print_interval(struct run *run, double t)
{
	struct stat_report *r = run->report;
	size_t n = r->nr_events, i;
	struct stat_view v = {
		.counts = run->delta,
		.unit_counts = run->unit_counts ? run->unit_delta : NULL,
		.duration_ns = t - run->last_tick,
		.timestamp = (t - run->t0) / 1e9,
	};

	sigset_t rotation, old;

	/* The rotation of event sets switches in the handler of the
	 * session's signal (SIGIO): not in the middle of this read. */
	sigemptyset(&rotation);
	sigaddset(&rotation, SIGIO);
	sigprocmask(SIG_BLOCK, &rotation, &old);
	perfctr_session__read(run->session);
	for (size_t p = 0; p < run->nr_more; p++)
		perfctr_session__read(run->more[p]);
	read_counts(run, run->counts, run->unit_counts);
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < n; i++)
		perfctr_count__delta(&run->delta[i], &run->counts[i], &run->prev[i]);
	for (i = 0; run->unit_counts && i < n * run->nr_units; i++)
		perfctr_count__delta(&run->unit_delta[i], &run->unit_counts[i],
				     &run->unit_prev[i]);
	/* Not-supported placeholders keep their status through the delta. */
	for (i = 0; i < n; i++)
		if (run->counts[i].status != PERFCTR_COUNT_OK)
			run->delta[i] = run->counts[i];
	memcpy(run->prev, run->counts, n * sizeof(*run->prev));
	if (run->unit_counts)
		memcpy(run->unit_prev, run->unit_counts,
		       n * run->nr_units * sizeof(*run->unit_prev));
	run->last_tick = t;
	stat_print_interval(r, &v);
}

/*
 * Wait until the command ends (or, without one, the watched process ends
 * or a signal asks us to stop), printing intervals on the way.
 */
static int wait_loop(struct run *run, const struct signal_state *sig)
{
	const struct stat_config *cfg = &run->o->cfg;
	struct perfctr_target *waited = run->command;
	double interval = cfg->interval_ms * 1e6;
	double next_tick = run->t0 + interval;
	struct pollfd pfd = { .fd = -1, .events = POLLIN };
	pid_t foreign = 0;
	int err = 0;

	if (run->tree && run->watched == run->command) {
		/* The tree's tasks stop for us at every fork and exit: we
		 * hear of it by SIGCHLD (which ends the ppoll) and take the
		 * stops before anything else. */
	} else if (waited) {
		pfd.fd = pidfd_open_compat(perfctr_target__pid(waited), 0);
	} else if (run->tree) {
		/* -p with --per-process: as above, its end comes as a stop. */
		foreign = cfg->pid;
	} else if (cfg->pid || cfg->tid) {
		foreign = cfg->pid ? cfg->pid : cfg->tid;
		pfd.fd = pidfd_open_compat(foreign, cfg->tid ? PIDFD_THREAD : 0);
		if (pfd.fd < 0 && cfg->tid)
			pfd.fd = pidfd_open_compat(foreign, 0);
	}
	for (;;) {
		struct timespec ts, *tsp = NULL;
		double now = now_ns(), wait_ns = -1;
		int ret;

		if (run->tree) {
			ret = perfctr_tree__poll(run->tree);
			if (ret < 0) {
				err = ret;
				break;
			}
			if (ret == 1)
				break;
		}
		if (interval > 0)
			wait_ns = next_tick > now ? next_tick - now : 0;
		/* Without a pidfd: look again every 100 ms. */
		if (pfd.fd < 0 && (foreign || waited) &&
		    (wait_ns < 0 || wait_ns > 100e6))
			wait_ns = 100e6;
		if (wait_ns >= 0) {
			ts.tv_sec = (time_t)(wait_ns / 1e9);
			ts.tv_nsec = (long)(wait_ns - ts.tv_sec * 1e9);
			tsp = &ts;
		}
		ret = ppoll(&pfd, pfd.fd >= 0 ? 1 : 0, tsp, &sig->wait_mask);
		if (ret > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			break;
		if (pfd.fd < 0 && waited && ret < 0 && errno == EINTR &&
		    !stop_signal && !run->tree)
			break;	/* SIGCHLD: reap below */
		if (pfd.fd < 0 && foreign && !run->tree && foreign_gone(foreign))
			break;
		if (!waited && stop_signal)
			break;
		now = now_ns();
		if (interval > 0 && now >= next_tick) {
			print_interval(run, now);
			next_tick += interval;
			if (next_tick < now)
				next_tick = now + interval;
		}
	}
	/* Stopped before the tree ended (Ctrl-C, the timing command):
	 * what is still traced is read and let go. */
	if (run->tree)
		perfctr_tree__detach(run->tree);
	if (waited && !err) {
		do
			err = perfctr_target__wait(waited, &run->wait_status);
		while (err == -EINTR);
		run->have_status = !err;
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
	return err;
}

static int tree_error(const struct stat_config *cfg, int err)
{
	if (cfg->pid)
		perfex_error("cannot trace process %d: %s", (int)cfg->pid,
			     err == ESRCH ? "no such process" : strerror(err));
	else
		perfex_error("cannot trace the tree of '%s': %s",
			     cfg->command[0], strerror(err));
	if (err == EPERM)
		perfex_hint("--per-process traces the command (ptrace); it "
			    "cannot while perfex itself is traced (gdb, "
			    "strace) or ptrace is restricted "
			    "(/proc/sys/kernel/yama/ptrace_scope)");
	return PERFEX_EXIT_TARGET;
}

static int target_error(const struct stat_config *cfg, int err)
{
	if (err == EACCES || err == EPERM)
		return permission_error(cfg, err);
	if (cfg->pid || cfg->tid) {
		perfex_error("cannot attach to %s %d: %s",
			     cfg->pid ? "process" : "thread",
			     (int)(cfg->pid ? cfg->pid : cfg->tid),
			     err == ESRCH ? "no such process" : strerror(err));
		return err == ESRCH ? PERFEX_EXIT_TARGET : PERFEX_EXIT_INTERNAL;
	}
	if ((cfg->cgroup || cfg->nr_cgroups) &&
	    (err == ENOMEDIUM || err == ENOENT || err == ENOTDIR))
		return perfex_cgroup_error("count",
					   cfg->cgroup ? cfg->cgroup :
					   cfg->cgroups[0] ? cfg->cgroups[0] :
					   cfg->cgroups[cfg->nr_cgroups - 1],
					   err);
	if (cfg->cpus) {
		if (err == EINVAL) {
			perfex_error("bad CPU list '%s'", cfg->cpus);
			perfex_hint("a list looks like 0-3,6");
			return PERFEX_EXIT_USAGE;
		}
		perfex_error("cannot count on CPUs '%s': %s",
			     cfg->cpus[0] ? cfg->cpus : "all",
			     err == ENODEV ? "a CPU is not online" : strerror(err));
		return err == ENODEV ? PERFEX_EXIT_TARGET : PERFEX_EXIT_INTERNAL;
	}
	perfex_error("cannot count: %s", strerror(err));
	return PERFEX_EXIT_INTERNAL;
}

/*
 * An attach that failed because the access broker refused an open: its
 * reason, naming the event.  Return the exit code, or 0 when the broker
 * did not refuse (the kernel's answer is all there is).
 */
static int broker_refusal(const struct perfctr_session *s)
{
	struct perfctr_attach_error ae = { .sz = sizeof(ae) };
	const char *name;

	if (perfctr_session__attach_error(s, &ae) || !ae.errnum ||
	    !ae.broker[0])
		return 0;
	name = perfctr_session__event_name(s, ae.event);
	perfex_error("cannot open event '%s': the access broker refused it: %s",
		     name ? name : "?", ae.broker);
	/* The library's hint under a tracepoint the broker would not
	 * name (sys/broker.h), word for word. */
	perfex_hint("the broker's policy file decides "
		    "(/etc/perfctr/perfctrd.conf unless perfctrd -c names "
		    "another; see perfctrd.conf(5))");
	perfex_hint("perfex info shows what it allows you");
	return ae.errnum == ESRCH ? PERFEX_EXIT_TARGET : PERFEX_EXIT_PERM;
}

static int attach_error(const struct stat_config *cfg,
			const struct perfctr_session *s, int err)
{
	int ret = broker_refusal(s);

	return ret ? ret : target_error(cfg, err);
}

/* The hardware part of the default set, added as one specification (one
 * parse), or event by event when the machine lacks some. */
static const char default_hardware[] = "cycles,instructions,branches,branch-misses";
static const char default_software[] =
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

static bool unsupported(int errnum)
{
	return errnum == ENOENT || errnum == EOPNOTSUPP || errnum == ENODEV;
}

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

	if (ret < 0 && mode == ADD_TRY && unsupported(errnum))
		return ADD_LACKING;
	if (ret < 0 && mode == ADD_PLACEHOLDER && unsupported(errnum)) {
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
		return event_error(text, &err, ret);
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
	char list[sizeof(default_hardware)], *save = NULL, *name;
	int ret = -1;

	memcpy(list, default_hardware, sizeof(list));
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
		} else if (sp->is_default && sp->text == default_hardware) {
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

static int build_session(struct stat_options *o, struct stat_report *r,
			 const struct perfctr_parse_opts *popts,
			 struct perfctr_session **out)
{
	return build_session_part(o, r, popts, out, 0, !r->events, 0);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void free_units(struct stat_report *r)
{
	for (size_t u = 0; u < r->nr_units; u++)
		free(r->units[u].cpus);
	free(r->units);
	r->units = NULL;
	r->nr_units = 0;
}

/*
 * --per-socket, --per-die, --per-core: the session's units are CPUs; each
 * report unit is a group of them (run->unit_group maps one to the other),
 * in the order the library numbers the groups, perf's.
 * Return 0 or -errno.
 */
static int fill_groups(struct run *run)
{
	static const enum perfctr_cpu_aggr of[] = {
		[STAT_AGGR_SOCKET] = PERFCTR_CPU_AGGR_SOCKET,
		[STAT_AGGR_DIE] = PERFCTR_CPU_AGGR_DIE,
		[STAT_AGGR_CORE] = PERFCTR_CPU_AGGR_CORE,
	};
	enum stat_aggr aggr = run->o->cfg.aggr;
	struct stat_report *r = run->report;
	size_t n = run->nr_units, u;
	int *cpus = calloc(n ? n : 1, sizeof(*cpus));
	int nr_groups, err = 0;

	free(run->unit_group);
	run->unit_group = calloc(n ? n : 1, sizeof(*run->unit_group));
	if (!cpus || !run->unit_group) {
		free(cpus);
		return -ENOMEM;
	}
	for (u = 0; u < n; u++) {
		pid_t tid;

		perfctr_session__unit(run->session, u, &tid, &cpus[u]);
		if (cpus[u] < 0) {
			free(cpus);
			return -EINVAL;	/* a target without CPUs */
		}
	}
	nr_groups = perfctr_info_cpu_groups(NULL, of[aggr], cpus, n,
					    run->unit_group);
	if (nr_groups < 0) {
		free(cpus);
		return nr_groups;
	}
	r->units = calloc(nr_groups ? (size_t)nr_groups : 1, sizeof(*r->units));
	if (!r->units) {
		free(cpus);
		return -ENOMEM;
	}
	r->nr_units = (size_t)nr_groups;
	for (u = 0; u < r->nr_units; u++) {
		r->units[u].tid = -1;
		r->units[u].cpu = -1;
		r->units[u].cpus = calloc(n, sizeof(int));
		if (!r->units[u].cpus)
			err = -ENOMEM;
	}
	/* The session's CPUs ascend: so do each group's. */
	for (u = 0; u < n && !err; u++) {
		struct stat_unit *g = &r->units[run->unit_group[u]];

		if (!g->nr_cpus) {
			PERFCTR_OPTS(perfctr_cpu_topology, topo);

			perfctr_info_cpu_topology(NULL, cpus[u], &topo);
			g->socket = topo.socket;
			g->die = aggr >= STAT_AGGR_DIE ? topo.die : -1;
			g->core = aggr >= STAT_AGGR_CORE ? topo.core : -1;
		}
		g->cpus[g->nr_cpus++] = cpus[u];
	}
	for (u = 0; u < r->nr_units && !err; u++)
		qsort(r->units[u].cpus, r->units[u].nr_cpus, sizeof(int),
		      cmp_int);
	free(cpus);
	return err;
}

/* Return 0 or -errno. */
static int fill_units(struct run *run)
{
	struct stat_report *r = run->report;
	size_t u;

	run->nr_units = perfctr_session__nr_units(run->session);
	free_units(r);
	if (stat_aggr_groups(run->o->cfg.aggr))
		return fill_groups(run);
	r->units = calloc(run->nr_units ? run->nr_units : 1, sizeof(*r->units));
	r->nr_units = r->units ? run->nr_units : 0;
	for (u = 0; u < r->nr_units; u++) {
		struct stat_unit *un = &r->units[u];
		char path[64];
		int fd;
		ssize_t n;

		perfctr_session__unit(run->session, u, &un->tid, &un->cpu);
		/* A name is shown only beside a unit's own counts (and a held
		 * command's would be ours, before its exec). */
		if (un->tid <= 0 || run->o->cfg.aggr == STAT_AGGR_GLOBAL)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)un->tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, un->comm, sizeof(un->comm) - 1);
		close(fd);
		if (n > 0 && un->comm[n - 1] == '\n')
			n--;
		un->comm[n > 0 ? n : 0] = '\0';
	}
	return r->units ? 0 : -ENOMEM;
}

static int alloc_counts(struct run *run)
{
	size_t n = run->report->nr_events ? run->report->nr_events : 1;
	size_t nu = n * (run->nr_units ? run->nr_units : 1);

	run->counts = calloc(n, sizeof(*run->counts));
	run->prev = calloc(n, sizeof(*run->prev));
	run->delta = calloc(n, sizeof(*run->delta));
	if (!run->counts || !run->prev || !run->delta)
		return -ENOMEM;
	if (run->o->cfg.aggr != STAT_AGGR_GLOBAL) {
		run->unit_counts = calloc(nu, sizeof(*run->unit_counts));
		run->unit_prev = calloc(nu, sizeof(*run->unit_prev));
		run->unit_delta = calloc(nu, sizeof(*run->unit_delta));
		if (!run->unit_counts || !run->unit_prev || !run->unit_delta)
			return -ENOMEM;
	}
	return 0;
}

/* -G with --bpf-counters: the cgroup target counted through BPF.  When
 * the program cannot load, the session counts with cgroup events (said
 * after the attach). */
static struct perfctr_target *bpf_cgroup_target(struct run *run,
						const struct stat_config *cfg)
{
	PERFCTR_OPTS(perfctr_cgroup_opts, opts);

	run->bpf = perfctr_bpf_counters__new(NULL);
	if (!run->bpf)
		return NULL;
	opts.bpf = run->bpf;
	return perfctr_target__new_cgroup_opts(cfg->cgroup, cfg->cpus, &opts);
}

static void free_run(struct run *run)
{
	/* Before the target: tasks still traced are let go first. */
	perfctr_tree__delete(run->tree);
	if (run->report && run->report->tree == run->tree)
		run->report->tree = NULL;
	if (run->session)
		perfctr_session__delete(run->session);
	for (size_t p = 0; p < run->nr_more; p++) {
		perfctr_session__delete(run->more[p]);
		perfctr_target__delete(run->more_targets[p]);
	}
	free(run->more);
	free(run->more_targets);
	if (run->command && run->command != run->watched)
		perfctr_target__delete(run->command);
	if (run->watched)
		perfctr_target__delete(run->watched);
	perfctr_bpf_counters__delete(run->bpf);
	free(run->counts);
	free(run->prev);
	free(run->delta);
	free(run->unit_counts);
	free(run->unit_prev);
	free(run->unit_delta);
	free(run->unit_group);
	memset(run, 0, sizeof(*run));
}

/*
 * With -r: each event's count averaged over the runs in which it counted
 * (the status of the last run otherwise), so that the metrics are those of
 * the means.  Written over @counts.
 */
static struct perfctr_count *mean_counts(struct stat_report *r,
					 struct perfctr_count *counts)
{
	size_t e;

	for (e = 0; e < r->nr_events; e++) {
		const struct stat_event *ev = &r->events[e];
		unsigned int n = ev->stats.n;

		if (!n)
			continue;
		counts[e].status = PERFCTR_COUNT_OK;
		counts[e].value = (uint64_t)llround(ev->raw_sum / n);
		counts[e].time_enabled = (uint64_t)llround(ev->enabled_sum / n);
		counts[e].time_running = (uint64_t)llround(ev->running_sum / n);
		if (!counts[e].time_running)
			counts[e].time_running = 1;
	}
	return counts;
}

static double tv_ns(const struct timeval *tv)
{
	return tv->tv_sec * 1e9 + tv->tv_usec * 1e3;
}

static bool has_filter(const struct stat_options *o)
{
	for (size_t i = 0; i < o->nr_specs; i++)
		if (o->specs[i].filter)
			return true;
	return false;
}

static struct perfctr_target *part_target(struct run *run,
					  const struct stat_config *cfg,
					  size_t p);

/*
 * --for-each-cgroup: cgroup 0 counts in the run's session; each other
 * cgroup gets a session of the same events (checked row by row against
 * cgroup 0's) and a target of its own.  On the first run cgroup 0's rows
 * are copied for every cgroup, cgroup after cgroup.
 * Return -1 on success, or perfex's exit status.
 */
static int build_more(struct stat_options *o, struct stat_report *r,
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
		ret = build_session(o, r, popts, &run->more[p]);
		if (ret >= 0)
			return ret;
		run->nr_more++;
		run->more_targets[p] = part_target(run, cfg, p + 1);
		if (!run->more_targets[p]) {
			if (errno == ENOMEDIUM || errno == ENOENT ||
			    errno == ENOTDIR)
				return perfex_cgroup_error("count",
						cfg->cgroups[p + 1], errno);
			return target_error(cfg, errno);
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
static struct perfctr_target *part_target(struct run *run,
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
static int build_parts(struct stat_options *o, struct stat_report *r,
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
		run->more_targets[p - 1] = part_target(run, cfg, p);
		if (!run->more_targets[p - 1])
			return target_error(cfg, errno);
	}
	return -1;
}

/* --bpf-counters: a note on stderr when some cgroup (session) is counted
 * with cgroup events after all, and why when it is known. */
static void bpf_note(const struct run *run)
{
	int err = perfctr_bpf_counters__error(run->bpf);
	size_t n = 0, events = 0;

	for (size_t p = 0; p <= run->nr_more; p++) {
		const struct perfctr_session *s = p ? run->more[p - 1] :
						      run->session;
		const struct perfctr_target *t = p ? run->more_targets[p - 1] :
						     run->watched;

		/* -G's part of the events without a cgroup counts CPUs. */
		if (!perfctr_target__cgroup_path(t))
			continue;
		n++;
		events += !perfctr_session__counts_by_bpf(s);
	}
	if (!events)
		return;
	fprintf(stderr, "perfex: note: --bpf-counters: counting ");
	if (events < n)
		fprintf(stderr, "%zu of %zu cgroups ", events, n);
	fprintf(stderr, "with cgroup events: %s\n",
		err ? strerror(-err) : run->o->cfg.sets ?
		"event sets need the kernel's cgroup counters" :
		"the BPF counters could not take them");
}

/* One run: returns -1 when it went well, or perfex's exit status. */
static int do_run(struct stat_options *o, struct stat_report *r,
		  const struct perfctr_parse_opts *popts, unsigned int nth)
{
	struct stat_config *cfg = &o->cfg;
	struct run run = { .o = o, .report = r };
	struct signal_state sig;
	bool have_signals = false;
	struct rusage ru0, ru1;
	double t1;
	int ret, err;
	size_t e;

	if (cfg->cgroup_per_event) {
		ret = build_parts(o, r, popts, &run, nth);
		if (ret >= 0)
			goto out;
	} else if ((ret = build_session(o, r, popts, &run.session)) >= 0) {
		return ret;
	} else if (cfg->nr_cgroups > 1) {
		ret = build_more(o, r, popts, &run);
		if (ret >= 0)
			goto out;
	} else if (cfg->nr_cgroups && nth == 0) {
		for (e = 0; e < r->nr_events; e++)
			r->events[e].cgroup = cfg->cgroups[0];
	}
	for (e = 0; nth == 0 && cfg->repeat > 1 && e < r->nr_events; e++)
		r->events[e].run_values = calloc(cfg->repeat, sizeof(double));

	if (cfg->command) {
		PERFCTR_OPTS(perfctr_command_opts, copts,
			     .parent_death_signal = o->kill_child);

		run.command = perfctr_target__new_command(cfg->command, &copts);
		if (!run.command) {
			ret = perfex_command_error(cfg->command, errno);
			goto out;
		}
	}
	if (cfg->pid)
		run.watched = perfctr_target__new_process(cfg->pid);
	else if (cfg->tid && cfg->cpus)
		run.watched = perfctr_target__new_thread_on_cpus(cfg->tid, cfg->cpus);
	else if (cfg->tid)
		run.watched = perfctr_target__new_thread(cfg->tid);
	else if (cfg->cgroup_per_event)
		run.watched = part_target(&run, cfg, 0);
	else if (cfg->cgroup && cfg->bpf_counters)
		run.watched = bpf_cgroup_target(&run, cfg);
	else if (cfg->cgroup)
		run.watched = perfctr_target__new_cgroup(cfg->cgroup, cfg->cpus);
	else if (cfg->nr_cgroups)
		run.watched = part_target(&run, cfg, 0);
	else if (cfg->cpus)
		run.watched = perfctr_target__new_cpus(cfg->cpus);
	else
		run.watched = run.command;
	if (!run.watched) {
		ret = target_error(cfg, errno);
		goto out;
	}
	if (cfg->tree) {
		/* -p PID -- cmd: the process's tree, the command times it. */
		run.tree = perfctr_tree__new(run.session, run.watched, NULL);
		if (!run.tree) {
			ret = tree_error(cfg, errno);
			goto out;
		}
		r->tree = run.tree;
	}
	/* The command is forked (and held before its exec): from here on a
	 * Ctrl-C is for it, and for us only a reason to stop a count that has
	 * no command. */
	signals_take(&sig);
	have_signals = true;
	stop_signal = 0;
	err = perfctr_session__attach(run.session, run.watched);
	if (err == -EINVAL && has_filter(o)) {
		/* The kernel checks a filter only when it is applied. */
		perfex_error("cannot apply the tracepoint filter: %s", strerror(-err));
		perfex_hint("filters look like 'common_pid == 42 && arg1 > 0'; "
			    "the fields are in tracefs: events/SUBSYS/NAME/format");
		ret = PERFEX_EXIT_EVENT;
		goto out;
	}
	if (err < 0) {
		ret = attach_error(cfg, run.session, -err);
		goto out;
	}
	for (size_t p = 0; p < run.nr_more; p++) {
		err = perfctr_session__attach(run.more[p], run.more_targets[p]);
		if (err < 0) {
			ret = attach_error(cfg, run.more[p], -err);
			goto out;
		}
	}
	if (run.bpf)
		bpf_note(&run);
	if (run.watched != run.command) {
		err = perfctr_session__start(run.session);
		for (size_t p = 0; p < run.nr_more && err >= 0; p++)
			err = perfctr_session__start(run.more[p]);
		if (err < 0) {
			ret = target_error(cfg, -err);
			goto out;
		}
	}
	err = fill_units(&run);
	if (err == -EINVAL) {
		perfex_error("option '%s' needs counters on CPUs",
			     o->aggr_opt);
		ret = PERFEX_EXIT_USAGE;
		goto out;
	}
	if (err < 0 || alloc_counts(&run)) {
		perfex_error("out of memory");
		ret = PERFEX_EXIT_INTERNAL;
		goto out;
	}
	if (nth == 0)
		stat_print_begin(r);

	getrusage(RUSAGE_CHILDREN, &ru0);
	run.t0 = run.last_tick = now_ns();
	if (run.command) {
		err = perfctr_target__start(run.command);
		if (err < 0) {
			ret = perfex_command_error(cfg->command, -err);
			goto out;
		}
		/* The first set started at the exec; the rotation starts
		 * now. */
		if (cfg->sets && run.watched == run.command) {
			err = perfctr_session__start(run.session);
			if (err < 0) {
				ret = target_error(cfg, -err);
				goto out;
			}
		}
	}
	err = wait_loop(&run, &sig);
	t1 = now_ns();
	if (err < 0 && run.command) {
		perfex_error("cannot wait for '%s': %s", cfg->command[0],
			     strerror(-err));
		ret = PERFEX_EXIT_INTERNAL;
		goto out;
	}
	getrusage(RUSAGE_CHILDREN, &ru1);

	/* Detaching reads the final values, which stay readable. */
	perfctr_session__read(run.session);
	perfctr_session__detach(run.session);
	for (size_t p = 0; p < run.nr_more; p++) {
		perfctr_session__read(run.more[p]);
		perfctr_session__detach(run.more[p]);
	}
	if (cfg->sets && stat_sets_collect(run.session, r)) {
		perfex_error("out of memory");
		ret = PERFEX_EXIT_INTERNAL;
		goto out;
	}
	if (cfg->interval_ms)
		print_interval(&run, t1);
	else
		read_counts(&run, run.counts, run.unit_counts);
	if (!cfg->interval_ms)
		stat_metrics_run(r, run.counts, t1 - run.t0);

	stat_stats_add(&r->elapsed_ns, t1 - run.t0);
	r->user_ns = tv_ns(&ru1.ru_utime) - tv_ns(&ru0.ru_utime);
	r->sys_ns = tv_ns(&ru1.ru_stime) - tv_ns(&ru0.ru_stime);
	r->have_rusage = run.command != NULL;
	r->have_status = run.have_status;
	r->wait_status = run.wait_status;
	if (run.have_status)
		r->exit_code = WIFSIGNALED(run.wait_status) ?
			128 + WTERMSIG(run.wait_status) : WEXITSTATUS(run.wait_status);
	for (e = 0; e < r->nr_events; e++) {
		struct stat_event *ev = &r->events[e];
		const struct perfctr_count *c = &run.counts[e];
		double v = (double)c->value;

		if (c->time_running && c->time_running < c->time_enabled)
			v = v * (double)c->time_enabled / (double)c->time_running;
		v *= ev->scale;
		if (c->status == PERFCTR_COUNT_OK && c->time_running) {
			if (ev->run_values)
				ev->run_values[ev->stats.n] = v;
			stat_stats_add(&ev->stats, v);
			ev->raw_sum += (double)c->value;
			ev->enabled_sum += (double)c->time_enabled;
			ev->running_sum += (double)c->time_running;
		}
	}
	r->runs_done++;
	if (nth + 1 == cfg->repeat) {
		struct stat_view v = {
			.counts = cfg->repeat > 1 ? mean_counts(r, run.counts) :
				  run.counts,
			.unit_counts = run.unit_counts,
			.duration_ns = r->elapsed_ns.mean,
		};
		stat_print_final(r, &v);
	}
	ret = -1;
out:
	free_run(&run);
	if (have_signals)
		signals_give_back(&sig);
	return ret;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_options o = { 0 };
	struct stat_report r = { .cfg = &o.cfg };
	PERFCTR_OPTS(perfctr_parse_opts, popts);
	unsigned int i;
	size_t e;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0 || perfex_dry_run) {
		ret = ret >= 0 ? ret : 0;
		goto out;
	}
	if (o.metrics.list || o.metrics.topdown) {
		ret = stat_metrics_open(&r.metrics, &o.metrics);
		if (ret >= 0)
			goto out;
		/* The run's task time first (perf shows its duration), which
		 * also keeps the session countable where the machine can
		 * count none of the metrics' events. */
		if (!o.nr_specs && add_spec(&o, "task-clock", false)) {
			ret = PERFEX_EXIT_INTERNAL;
			goto out;
		}
		for (size_t g = 0; g < stat_metrics_nr_groups(r.metrics); g++) {
			if (add_spec(&o, stat_metrics_group(r.metrics, g), false)) {
				ret = PERFEX_EXIT_INTERNAL;
				goto out;
			}
			o.specs[o.nr_specs - 1].is_metric = true;
		}
	}
	if (!o.nr_specs && (add_spec(&o, default_software, true) ||
			    add_spec(&o, default_hardware, true))) {
		ret = PERFEX_EXIT_INTERNAL;
		goto out;
	}

	/* As perf does: a user whose level forbids kernel counting gets
	 * user-space counts rather than a refusal. */
	if (geteuid() != 0 && paranoid_level() >= 2)
		popts.exclude_kernel = popts.exclude_hv = true;

	/* Standard error is unbuffered: counts written through it would take
	 * a write() per field.  A buffered stream of our own on the same file
	 * writes each block at once. */
	o.cfg.out = stderr;
	if (!o.output) {
		int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

		if (f)
			o.cfg.out = f;
		else if (fd >= 0)
			close(fd);
	}
	if (o.output) {
		o.cfg.out = fopen(o.output, "we");
		if (!o.cfg.out) {
			perfex_error("cannot open '%s' for writing: %s", o.output,
				     strerror(errno));
			ret = PERFEX_EXIT_IO;
			goto out;
		}
	}
	for (i = 0; i < o.cfg.repeat; i++) {
		ret = do_run(&o, &r, &popts, i);
		if (ret >= 0)
			goto out;
	}
	ret = r.have_status ? r.exit_code : 0;
	if (o.cfg.out && ferror(o.cfg.out)) {
		perfex_error("cannot write the counts: %s", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
out:
	if (o.cfg.out && o.cfg.out != stderr && fclose(o.cfg.out) && ret == 0) {
		perfex_error("cannot write '%s': %s",
			     o.output ? o.output : "standard error", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
	for (e = 0; e < r.nr_events; e++) {
		free(r.events[e].name);
		free(r.events[e].run_values);
	}
	free(r.events);
	free_units(&r);
	free(r.sets);
	for (size_t k = 0; k < o.nr_specs; k++) {
		free(o.specs[k].cgroup);
		free(o.specs[k].piece);
	}
	free(o.specs);
	free(o.cgroup_args);
	for (size_t c = 0; c < o.cfg.nr_cgroups; c++)
		free(o.cfg.cgroups[c]);
	free(o.cfg.cgroups);
	stat_metrics_free(r.metrics);
	free(o.metric_list);
	free(o.metric_files);
	return ret;
}
