// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex stat — counting mode, the default: run a command (or watch a
 * process, a thread or CPUs) and report its counts, as the seeds' perfex
 * and pmcCount did; -r N repeats the run and reports mean, standard
 * deviation, minimum and maximum (pmcCount's SUM mode).
 *
 * Targets, messages and the run loop live here; stat-options.c reads the
 * options, stat-session.c builds a run's sessions, stat-print.c formats.
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

/* ------------------------------------------------------------ messages */

/* The kernel refused the count: what was refused, and the cure. */
static int permission_error(const struct stat_config *cfg, int err)
{
	int needed = (cfg->pid || cfg->tid) ? 1 : cfg->cpus ? 0 : 2;
	const char *what = cfg->pid ? "attach to the process" :
			   cfg->tid ? "attach to the thread" :
			   cfg->cpus ? "count on CPUs" : "count the command";

	perfex_error("cannot %s: %s", what, strerror(err));
	return perfex_permission_hints(needed, cfg->pid || cfg->tid);
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

int stat_target_error(const struct stat_config *cfg, int err)
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

	if (perfctr_session__attach_error(s, &ae) || !ae.errnum ||
	    !ae.broker[0])
		return 0;
	return perfex_broker_refusal(&ae, perfctr_session__event_name(s, ae.event));
}

static int attach_error(const struct stat_config *cfg,
			const struct perfctr_session *s, int err)
{
	int ret = broker_refusal(s);

	return ret ? ret : stat_target_error(cfg, err);
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

/*
 * The sessions of run @nth (their rows made on the first run): the run's
 * session and, for cgroups counted apart, run->more.
 * Return -1 on success, or perfex's exit status.
 */
static int run_sessions(struct run *run, const struct perfctr_parse_opts *popts,
			unsigned int nth)
{
	struct stat_options *o = run->o;
	struct stat_report *r = run->report;
	const struct stat_config *cfg = &o->cfg;
	size_t e;
	int ret;

	if (cfg->cgroup_per_event) {
		ret = stat_build_parts(o, r, popts, run, nth);
		if (ret >= 0)
			return ret;
	} else if ((ret = stat_build_session(o, r, popts, &run->session)) >= 0) {
		return ret;
	} else if (cfg->nr_cgroups > 1) {
		ret = stat_build_more(o, r, popts, run);
		if (ret >= 0)
			return ret;
	} else if (cfg->nr_cgroups && nth == 0) {
		for (e = 0; e < r->nr_events; e++)
			r->events[e].cgroup = cfg->cgroups[0];
	}
	for (e = 0; nth == 0 && cfg->repeat > 1 && e < r->nr_events; e++)
		r->events[e].run_values = calloc(cfg->repeat, sizeof(double));
	return -1;
}

/*
 * The target: the command to run (forked, held before its exec) and what
 * the run's session attaches to, with --per-process the tree it traces.
 * Return -1 on success, or perfex's exit status.
 */
static int run_target(struct run *run)
{
	const struct stat_config *cfg = &run->o->cfg;

	if (cfg->command) {
		PERFCTR_OPTS(perfctr_command_opts, copts,
			     .parent_death_signal = run->o->kill_child);

		run->command = perfctr_target__new_command(cfg->command, &copts);
		if (!run->command)
			return perfex_command_error(cfg->command, errno);
	}
	if (cfg->pid)
		run->watched = perfctr_target__new_process(cfg->pid);
	else if (cfg->tid && cfg->cpus)
		run->watched = perfctr_target__new_thread_on_cpus(cfg->tid, cfg->cpus);
	else if (cfg->tid)
		run->watched = perfctr_target__new_thread(cfg->tid);
	else if (cfg->cgroup_per_event)
		run->watched = stat_part_target(run, cfg, 0);
	else if (cfg->cgroup && cfg->bpf_counters)
		run->watched = bpf_cgroup_target(run, cfg);
	else if (cfg->cgroup)
		run->watched = perfctr_target__new_cgroup(cfg->cgroup, cfg->cpus);
	else if (cfg->nr_cgroups)
		run->watched = stat_part_target(run, cfg, 0);
	else if (cfg->cpus)
		run->watched = perfctr_target__new_cpus(cfg->cpus);
	else
		run->watched = run->command;
	if (!run->watched)
		return stat_target_error(cfg, errno);
	if (cfg->tree) {
		/* -p PID -- cmd: the process's tree, the command times it. */
		run->tree = perfctr_tree__new(run->session, run->watched, NULL);
		if (!run->tree)
			return tree_error(cfg, errno);
		run->report->tree = run->tree;
	}
	return -1;
}

/*
 * Attach the sessions to their targets and start those that do not wait
 * for the command's exec; then the report's units and the counts' room.
 * Return -1 on success, or perfex's exit status.
 */
static int run_attach(struct run *run)
{
	const struct stat_config *cfg = &run->o->cfg;
	int err;

	err = perfctr_session__attach(run->session, run->watched);
	if (err == -EINVAL && has_filter(run->o)) {
		/* The kernel checks a filter only when it is applied. */
		perfex_error("cannot apply the tracepoint filter: %s", strerror(-err));
		perfex_hint("filters look like 'common_pid == 42 && arg1 > 0'; "
			    "the fields are in tracefs: events/SUBSYS/NAME/format");
		return PERFEX_EXIT_EVENT;
	}
	if (err < 0)
		return attach_error(cfg, run->session, -err);
	for (size_t p = 0; p < run->nr_more; p++) {
		err = perfctr_session__attach(run->more[p], run->more_targets[p]);
		if (err < 0)
			return attach_error(cfg, run->more[p], -err);
	}
	if (run->bpf)
		bpf_note(run);
	if (run->watched != run->command) {
		err = perfctr_session__start(run->session);
		for (size_t p = 0; p < run->nr_more && err >= 0; p++)
			err = perfctr_session__start(run->more[p]);
		if (err < 0)
			return stat_target_error(cfg, -err);
	}
	err = fill_units(run);
	if (err == -EINVAL) {
		perfex_error("option '%s' needs counters on CPUs",
			     run->o->aggr_opt);
		return PERFEX_EXIT_USAGE;
	}
	if (err < 0 || alloc_counts(run)) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	return -1;
}

/* The times of a count: its wall-clock start and end, and the children's
 * CPU times around it. */
struct run_times {
	double t1;
	struct rusage ru0, ru1;
};

/*
 * The count: start the command and wait for the end (the command's, the
 * watched task's, or a signal), printing the intervals on the way.
 * Return -1 on success, or perfex's exit status.
 */
static int run_count(struct run *run, const struct signal_state *sig,
		     struct run_times *tm)
{
	const struct stat_config *cfg = &run->o->cfg;
	int err;

	getrusage(RUSAGE_CHILDREN, &tm->ru0);
	run->t0 = run->last_tick = now_ns();
	if (run->command) {
		err = perfctr_target__start(run->command);
		if (err < 0)
			return perfex_command_error(cfg->command, -err);
		/* The first set started at the exec; the rotation starts
		 * now. */
		if (cfg->sets && run->watched == run->command) {
			err = perfctr_session__start(run->session);
			if (err < 0)
				return stat_target_error(cfg, -err);
		}
	}
	err = wait_loop(run, sig);
	tm->t1 = now_ns();
	if (err < 0 && run->command) {
		perfex_error("cannot wait for '%s': %s", cfg->command[0],
			     strerror(-err));
		return PERFEX_EXIT_INTERNAL;
	}
	getrusage(RUSAGE_CHILDREN, &tm->ru1);
	return -1;
}

/* Each event's value of this run, into its spread over the runs (-r). */
static void add_run_values(struct run *run)
{
	struct stat_report *r = run->report;

	for (size_t e = 0; e < r->nr_events; e++) {
		struct stat_event *ev = &r->events[e];
		const struct perfctr_count *c = &run->counts[e];
		double v = stat_scaled(c) * ev->scale;

		if (c->status == PERFCTR_COUNT_OK && c->time_running) {
			if (ev->run_values)
				ev->run_values[ev->stats.n] = v;
			stat_stats_add(&ev->stats, v);
			ev->raw_sum += (double)c->value;
			ev->enabled_sum += (double)c->time_enabled;
			ev->running_sum += (double)c->time_running;
		}
	}
}

/*
 * After the count: the final values read, the run's figures added to the
 * report, and after the last run the report printed.
 * Return -1 on success, or perfex's exit status.
 */
static int run_summarise(struct run *run, unsigned int nth,
			 const struct run_times *tm)
{
	const struct stat_config *cfg = &run->o->cfg;
	struct stat_report *r = run->report;

	/* Detaching reads the final values, which stay readable. */
	perfctr_session__read(run->session);
	perfctr_session__detach(run->session);
	for (size_t p = 0; p < run->nr_more; p++) {
		perfctr_session__read(run->more[p]);
		perfctr_session__detach(run->more[p]);
	}
	if (cfg->sets && stat_sets_collect(run->session, r)) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	if (cfg->interval_ms)
		print_interval(run, tm->t1);
	else
		read_counts(run, run->counts, run->unit_counts);
	if (!cfg->interval_ms)
		stat_metrics_run(r, run->counts, tm->t1 - run->t0);

	stat_stats_add(&r->elapsed_ns, tm->t1 - run->t0);
	r->user_ns = tv_ns(&tm->ru1.ru_utime) - tv_ns(&tm->ru0.ru_utime);
	r->sys_ns = tv_ns(&tm->ru1.ru_stime) - tv_ns(&tm->ru0.ru_stime);
	r->have_rusage = run->command != NULL;
	r->have_status = run->have_status;
	r->wait_status = run->wait_status;
	if (run->have_status)
		r->exit_code = WIFSIGNALED(run->wait_status) ?
			128 + WTERMSIG(run->wait_status) :
			WEXITSTATUS(run->wait_status);
	add_run_values(run);
	r->runs_done++;
	if (nth + 1 == cfg->repeat) {
		struct stat_view v = {
			.counts = cfg->repeat > 1 ? mean_counts(r, run->counts) :
				  run->counts,
			.unit_counts = run->unit_counts,
			.duration_ns = r->elapsed_ns.mean,
		};
		stat_print_final(r, &v);
	}
	return -1;
}

/* One run: returns -1 when it went well, or perfex's exit status. */
static int do_run(struct stat_options *o, struct stat_report *r,
		  const struct perfctr_parse_opts *popts, unsigned int nth)
{
	struct run run = { .o = o, .report = r };
	struct signal_state sig;
	bool have_signals = false;
	struct run_times tm;
	int ret;

	if ((ret = run_sessions(&run, popts, nth)) >= 0 ||
	    (ret = run_target(&run)) >= 0)
		goto out;
	/* The command is forked (and held before its exec): from here on a
	 * Ctrl-C is for it, and for us only a reason to stop a count that has
	 * no command. */
	signals_take(&sig);
	have_signals = true;
	stop_signal = 0;
	if ((ret = run_attach(&run)) >= 0)
		goto out;
	if (nth == 0)
		stat_print_begin(r);
	if ((ret = run_count(&run, &sig, &tm)) >= 0)
		goto out;
	ret = run_summarise(&run, nth, &tm);
out:
	free_run(&run);
	if (have_signals)
		signals_give_back(&sig);
	return ret;
}

/*
 * The events of -M and --topdown (each metric group a -e of its own), or
 * without any -e the default set.  Return -1, or perfex's exit status.
 */
static int add_implied_specs(struct stat_options *o, struct stat_report *r)
{
	int ret;

	if (o->metrics.list || o->metrics.topdown) {
		ret = stat_metrics_open(&r->metrics, &o->metrics);
		if (ret >= 0)
			return ret;
		/* The run's task time first (perf shows its duration), which
		 * also keeps the session countable where the machine can
		 * count none of the metrics' events. */
		if (!o->nr_specs && stat_add_spec(o, "task-clock", false))
			return PERFEX_EXIT_INTERNAL;
		for (size_t g = 0; g < stat_metrics_nr_groups(r->metrics); g++) {
			if (stat_add_spec(o, stat_metrics_group(r->metrics, g), false))
				return PERFEX_EXIT_INTERNAL;
			o->specs[o->nr_specs - 1].is_metric = true;
		}
	}
	if (!o->nr_specs && (stat_add_spec(o, stat_default_software, true) ||
			     stat_add_spec(o, stat_default_hardware, true)))
		return PERFEX_EXIT_INTERNAL;
	return -1;
}

/*
 * Where the counts go: -o's file, else standard error.  Standard error is
 * unbuffered: counts written through it would take a write() per field.
 * A buffered stream of our own on the same file writes each block at once.
 * Return -1, or perfex's exit status.
 */
static int open_output(struct stat_options *o)
{
	o->cfg.out = stderr;
	if (!o->output) {
		int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

		if (f)
			o->cfg.out = f;
		else if (fd >= 0)
			close(fd);
	}
	if (o->output) {
		o->cfg.out = fopen(o->output, "we");
		if (!o->cfg.out) {
			perfex_error("cannot open '%s' for writing: %s", o->output,
				     strerror(errno));
			return PERFEX_EXIT_IO;
		}
	}
	return -1;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_options o = { 0 };
	struct stat_report r = { .cfg = &o.cfg };
	PERFCTR_OPTS(perfctr_parse_opts, popts);
	unsigned int i;
	size_t e;
	int ret;

	ret = stat_parse_options(argc, argv, &o);
	if (ret >= 0 || perfex_dry_run) {
		ret = ret >= 0 ? ret : 0;
		goto out;
	}
	if ((ret = add_implied_specs(&o, &r)) >= 0)
		goto out;

	/* As perf does: a user whose level forbids kernel counting gets
	 * user-space counts rather than a refusal. */
	if (geteuid() != 0 && perfex_paranoid_level() >= 2)
		popts.exclude_kernel = popts.exclude_hv = true;

	if ((ret = open_output(&o)) >= 0)
		goto out;
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
