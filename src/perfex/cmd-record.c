// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex record — sample a command (or running tasks, or CPUs) into a
 * perf.data file that perf report and perfex report both read.
 *
 * What is sampled is a library target: a command (held before exec until
 * the events are open with enable_on_exec, so counting starts exactly at
 * its exec), a process or thread (-p, -t) or a CPU list (-a, -C; a command
 * given with them is only run, its own target unsampled).  Tasks that
 * were already running get synthesised COMM and MMAP2 records from /proc,
 * as the kernel only reports what happens after the events are opened.
 *
 * Signals: SIGINT and SIGTERM stop the recording and finish a valid file;
 * with --snapshot, SIGUSR2 writes the current window of the overwrite
 * rings.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfctr/perfctr.h>
#include <perfctr/offcpu.h>
#include <perfctr/perfdata.h>
#include <perfctr/record.h>
#include <perfctr/ring.h>
#include <perfctr/sampler.h>
#include <perfctr/symbols.h>
#include <perfctr/synth.h>

#include "cgroup-names.h"
#include "options.h"
#include "perfex.h"
#include "record.h"
#include "sample-events.h"

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t snapshot_requests;
static volatile sig_atomic_t child_exited;

static void on_stop(int sig) { stop_signal = sig; }
static void on_usr2(int sig) { (void)sig; snapshot_requests++; }
static void on_chld(int sig) { (void)sig; child_exited = 1; }

/* ---- the command ---- */

/* True once the started command has ended (not reaped yet). */
static bool command_ended(const struct record *rec)
{
	siginfo_t si;

	if (!rec->started || rec->child <= 0)
		return false;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)rec->child, &si, WEXITED | WNOHANG | WNOWAIT))
		return errno == ECHILD;
	return si.si_pid == rec->child;
}

/* Reap the started command into @status; false when there is none. */
static bool command_wait(struct record *rec, int *status)
{
	int err;

	if (!rec->started || rec->child <= 0)
		return false;
	do
		err = perfctr_target__wait(rec->command, status);
	while (err == -EINTR);
	return err == 0;
}

/* ---- writing ---- */

static void out_write(struct record *rec, const void *buf, size_t len)
{
	int err;

	/* After a write error too: the writer counts what it drops. */
	err = perfctr_perfdata_writer__write(rec->writer, buf, len);
	if (err && !rec->write_err)
		rec->write_err = err;
}

/* Keep the machine model in step, for the build-ids of the DSOs hit. */
static void track(struct record *rec, const struct perf_event_header *hdr)
{
	if (hdr->type == PERF_RECORD_SAMPLE) {
		/* The hot path: every attr we open starts its samples with
		 * [IDENTIFIER] IP TID TIME, so read those three words in place
		 * instead of decoding the whole sample. */
		const uint64_t *w = (const uint64_t *)(hdr + 1) + rec->ip_word;
		struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
		uint64_t time;

		rec->samples++;
		if (hdr->size < sizeof(*hdr) + (rec->ip_word + 3) * 8)
			return;
		time = w[2];
		if (!rec->first_time || time < rec->first_time)
			rec->first_time = time;
		if (time > rec->last_time)
			rec->last_time = time;
		perfctr_symbols__resolve(rec->syms, (pid_t)(uint32_t)w[1], w[0],
			(hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			PERF_RECORD_MISC_KERNEL, PERFCTR_RESOLVE_DSO_ONLY, &loc);
	} else if (hdr->type == PERF_RECORD_MMAP2 || hdr->type == PERF_RECORD_MMAP) {
		struct perfctr_record r = { .sz = sizeof(r) };

		if (perfctr_decoder__record(rec->dec, hdr, &r) ||
		    (r.misc & PERF_RECORD_MISC_MMAP_DATA))
			return;
		perfctr_symbols__add_map(rec->syms, (pid_t)r.mmap.pid,
					 r.mmap.addr, r.mmap.len, r.mmap.pgoff,
					 r.mmap.filename);
	} else if (hdr->type == PERF_RECORD_FORK) {
		struct perfctr_record r = { .sz = sizeof(r) };

		if (!perfctr_decoder__record(rec->dec, hdr, &r))
			perfctr_symbols__fork(rec->syms, (pid_t)r.task.pid,
					      (pid_t)r.task.ppid);
	} else if (hdr->type == PERF_RECORD_COMM &&
		   (hdr->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		struct perfctr_record r = { .sz = sizeof(r) };

		if (!perfctr_decoder__record(rec->dec, hdr, &r))
			perfctr_symbols__exec(rec->syms, (pid_t)r.comm.pid);
	}
}

static int on_record(struct perfctr_ring *ring, const struct perf_event_header *hdr,
		     void *ctx)
{
	struct record *rec = ctx;

	(void)ring;
	out_write(rec, hdr, hdr->size);
	track(rec, hdr);
	return 0;
}

/* Processes and the kernel that were there before the recording: the
 * library's records from /proc, with attr 0's sample_id_all trailer. */
static int on_synth(const struct perf_event_header *hdr, void *ctx)
{
	return on_record(NULL, hdr, ctx);
}

#define SYNTH_OPTS(o, rec) \
	PERFCTR_OPTS(perfctr_synth_opts, o, \
		     .attr = perfctr_sampler__attr((rec)->sampler, 0), \
		     .id = (rec)->trailer_id)

/* COMM of every thread and MMAP2 of every executable map of @pid. */
static void synth_process(struct record *rec, pid_t pid)
{
	SYNTH_OPTS(o, rec);

	perfctr_synth_process(pid, &o, on_synth, rec);
}

static void synth_all_processes(struct record *rec)
{
	SYNTH_OPTS(o, rec);

	perfctr_synth_processes(&o, on_synth, rec);
}

static void synth_kernel(struct record *rec)
{
	SYNTH_OPTS(o, rec);
	uint64_t start;

	if (perfctr_synth_kernel(&o, on_synth, rec, &start) > 0)
		rec->kernel_start = start;
}

/* ---- overwrite windows ---- */

struct saved {
	uint64_t time;
	struct perf_event_header *hdr;
};

static uint64_t record_time(struct record *rec, const struct perf_event_header *hdr)
{
	if (hdr->type == PERF_RECORD_SAMPLE) {
		struct perfctr_sample s = { .sz = sizeof(s) };

		if (!perfctr_decoder__sample(rec->dec, hdr, &s) &&
		    (s.type & PERF_SAMPLE_TIME))
			return s.time;
	} else {
		struct perfctr_record r = { .sz = sizeof(r) };

		if (!perfctr_decoder__record(rec->dec, hdr, &r) &&
		    (r.sample_id.present & PERF_SAMPLE_TIME))
			return r.sample_id.time;
	}
	return 0;
}

static int saved_cmp(const void *a, const void *b)
{
	const struct saved *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * Write what the overwrite rings hold that is newer than the last window,
 * oldest first.  The side-band records come from the tracking rings (the
 * caller drains them first); without those, fresh COMM/MMAP2 records of
 * the target stand in for its own, which may have been overwritten.
 */
static int write_window(struct record *rec)
{
	struct perfctr_ring *const *rings = perfctr_sampler__rings(rec->sampler);
	size_t nr = perfctr_sampler__nr_rings(rec->sampler), i, n = 0, cap = 0;
	struct saved *saved = NULL;
	uint64_t newest = rec->window_time;
	int err = 0;

	for (i = 0; i < nr; i++) {
		const struct perf_event_header *hdr;

		if (perfctr_ring__read_begin(rings[i]) <= 0) {
			perfctr_ring__read_end(rings[i]);
			continue;
		}
		while ((hdr = perfctr_ring__read_next(rings[i]))) {
			uint64_t t = record_time(rec, hdr);

			if (rec->window_time && t <= rec->window_time)
				continue;
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 1024;
				struct saved *ns = realloc(saved, ncap * sizeof(*ns));

				if (!ns) {
					err = -ENOMEM;
					break;
				}
				saved = ns;
				cap = ncap;
			}
			saved[n].time = t;
			saved[n].hdr = malloc(hdr->size);
			if (!saved[n].hdr) {
				err = -ENOMEM;
				break;
			}
			memcpy(saved[n].hdr, hdr, hdr->size);
			n++;
			if (t > newest)
				newest = t;
		}
		perfctr_ring__read_end(rings[i]);
	}
	if (!err) {
		/* Without tracking rings, the target's own side-band records
		 * may have been overwritten: describe it as it is now. */
		if (perfctr_sampler__tracking_rings(rec->sampler))
			;
		else if (rec->child > 0)
			synth_process(rec, rec->child);
		else if (rec->pid > 0)
			synth_process(rec, rec->pid);
		else if (rec->tid > 0)
			synth_process(rec, rec->tid);
		qsort(saved, n, sizeof(*saved), saved_cmp);
		for (i = 0; i < n; i++)
			on_record(NULL, saved[i].hdr, rec);
		rec->window_time = newest;
	}
	for (i = 0; i < n; i++)
		free(saved[i].hdr);
	free(saved);
	return err;
}

/* ---- where the reader runs ---- */

/*
 * When the user pins the recorded task to some of our CPUs (`perfex record
 * -- taskset -c 0 prog`), the reader moves onto those CPUs too.  A reader
 * that shares the CPU whose ring fills keeps up with it: the task writes
 * samples only while it has the CPU, and the scheduler gives the reader,
 * which sleeps most of the time, its turn long before the task has run
 * for the three quarters of a ring the wake-up mark leaves free.  On
 * another CPU the reader waits behind unrelated tasks for whole ticks
 * while the task writes on: that is how samples were lost on a busy
 * machine (bench/README.md, record-overhead).  Only perfex's own affinity
 * changes, and only within the CPUs it was started with; when the task's
 * CPUs do not meet ours, or include them all, ours stay as they were.
 */
static void follow_init(struct record *rec, pid_t task)
{
	rec->follow = 0;
	if (task <= 0 ||
	    sched_getaffinity(0, sizeof(rec->own_cpus), &rec->own_cpus))
		return;		/* more CPUs than a cpu_set_t: leave it */
	rec->follow = task;
	rec->target_cpus = rec->own_cpus;
	rec->reader_cpus = rec->own_cpus;
}

static void follow_target_cpus(struct record *rec)
{
	cpu_set_t cpus, want;

	if (!rec->follow ||
	    sched_getaffinity(rec->follow, sizeof(cpus), &cpus))
		return;
	if (CPU_EQUAL(&cpus, &rec->target_cpus))
		return;
	rec->target_cpus = cpus;
	CPU_AND(&want, &cpus, &rec->own_cpus);
	if (!CPU_COUNT(&want))
		want = rec->own_cpus;
	if (CPU_EQUAL(&want, &rec->reader_cpus))
		return;
	if (!sched_setaffinity(0, sizeof(want), &want))
		rec->reader_cpus = want;
}

/* ---- setup ---- */

/*
 * -G lists after the -e: each event's name (perf's rule).  One name for
 * every event is rec->cgroup as before; names that differ make a cgroup
 * target per event on the CPUs of -a or -C.
 * Return -1, or perfex's exit status.
 */
static int plan_cgroups(struct record *rec)
{
	struct cgroup_plan *plan = &rec->plan;
	const char **texts;
	bool splits = false;
	int ret;

	if (!rec->nr_cgroup_args)
		return -1;
	texts = malloc(rec->nr_specs * sizeof(*texts));
	if (!texts) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	for (size_t i = 0; i < rec->nr_specs; i++)
		texts[i] = rec->specs[i].text;
	ret = cgroup_plan_make(plan, texts, rec->nr_specs, rec->cgroup_args,
			       rec->nr_cgroup_args, NULL);
	free(texts);
	if (ret >= 0)
		return ret;
	for (size_t e = 1; e < plan->nr_events; e++) {
		/* Names that differ, within an -e or between two. */
		const char *a = plan->names[e], *b = plan->names[0];

		splits |= a != b && (!a || !b || strcmp(a, b));
	}
	for (size_t i = 0; i < rec->nr_specs; i++) {
		/* What perfex stat refuses (a group across cgroups) is
		 * refused here too. */
		char **pieces, **names;
		size_t n;

		if (!cgroup_plan_splits(plan, i))
			continue;
		ret = cgroup_plan_split(plan, i, rec->specs[i].text, NULL,
					&pieces, &names, &n);
		if (ret >= 0)
			return ret;
		for (size_t k = 0; k < n; k++) {
			free(pieces[k]);
			free(names[k]);
		}
		free(pieces);
		free(names);
	}
	if (!splits) {
		rec->cgroup = plan->names[0];
		return -1;
	}
	rec->event_cgroups = calloc(plan->nr_events,
				    sizeof(*rec->event_cgroups));
	if (!rec->event_cgroups) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	for (size_t e = 0; e < plan->nr_events; e++) {
		if (!plan->names[e])
			continue;
		rec->event_cgroups[e] =
			perfctr_target__new_cgroup(plan->names[e], rec->cpus);
		if (rec->event_cgroups[e])
			continue;
		if (errno == ENOMEDIUM || errno == ENOENT || errno == ENOTDIR)
			return perfex_cgroup_error("sample", plan->names[e],
						   errno);
		perfex_error("cannot sample cgroup '%s': %s", plan->names[e],
			     strerror(errno));
		return PERFEX_EXIT_INTERNAL;
	}
	return -1;
}

/* What -p, -t, -a and -C name, or the command; errors as perfex stat's. */
static int make_target(struct record *rec)
{
	int ret = plan_cgroups(rec);

	if (ret >= 0)
		return ret;
	if (rec->cgroup)
		rec->target = perfctr_target__new_cgroup(rec->cgroup, rec->cpus);
	else if (rec->all_cpus || rec->cpus)
		rec->target = perfctr_target__new_cpus(rec->cpus);
	else if (rec->pid)
		rec->target = perfctr_target__new_process(rec->pid);
	else if (rec->tid)
		rec->target = perfctr_target__new_thread(rec->tid);
	else
		return 0;	/* the command's */
	if (rec->target)
		return 0;
	if (rec->pid || rec->tid) {
		perfex_error("cannot attach to %s %d: %s",
			     rec->pid ? "process" : "thread",
			     (int)(rec->pid ? rec->pid : rec->tid),
			     errno == ESRCH ? "no such process" : strerror(errno));
		return errno == ESRCH ? PERFEX_EXIT_TARGET : PERFEX_EXIT_INTERNAL;
	}
	if (rec->cgroup && (errno == ENOMEDIUM || errno == ENOENT ||
			    errno == ENOTDIR)) {
		return perfex_cgroup_error("sample", rec->cgroup, errno);
	}
	if (errno == EINVAL) {
		perfex_error("bad CPU list '%s'", rec->cpus);
		perfex_hint("a list looks like 0-3,6");
		return PERFEX_EXIT_USAGE;
	}
	perfex_error("cannot sample on CPUs '%s': %s",
		     rec->cpus ? rec->cpus : "all",
		     errno == ENODEV ? "a CPU is not online" : strerror(errno));
	return errno == ENODEV ? PERFEX_EXIT_TARGET : PERFEX_EXIT_INTERNAL;
}

/*
 * Add the events and open them.  Without -e: perf's choice, cycles where
 * the machine can count them, else cpu-clock; the open is the probe.
 */
static int open_events(struct record *rec)
{
	PERFCTR_OPTS(perfctr_sampler_opts, sopts,
		     .target = rec->target ? rec->target : rec->command,
		     .data_pages = rec->pages,
		     .overwrite = rec->overwrite);
	size_t pages = rec->pages ? rec->pages : 64;
	struct sample_events se = {
		.specs = rec->specs,
		.nr_specs = rec->nr_specs,
		.sampler = &rec->sampler,
		.sampler_opts = &sopts,
		.period = rec->period,
		.freq = rec->freq,
		.callchain = rec->callgraph != CALLGRAPH_NONE,
		.dwarf = rec->callgraph == CALLGRAPH_DWARF,
		.stack_size = rec->stack_size,
		.raw = true,
		/* The file holds offcpu-time too: every sample says its
		 * event. */
		.identifier = rec->off_cpu,
		.clockid = rec->clockid,
		.event_cgroups = rec->event_cgroups,
		.nr_event_cgroups = rec->plan.nr_events,
		.say_fallback = !rec->quiet,
	};

	/* Wake up when a quarter of the ring is full, not half (the
	 * kernel's default): more room left while we drain. */
	/* Overwrite rings keep only the newest window: the COMM and MMAP2
	 * records that its samples need come through forward rings of their
	 * own, read all along. */
	sopts.tracking_ring = rec->overwrite;
	if (!rec->overwrite)
		sopts.wakeup_watermark = (uint32_t)(pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	/* A process or command is sampled per CPU with inherit: the threads
	 * and children it starts after the attach are sampled too.  The
	 * kernel keeps a period's count in each of those per-CPU events
	 * (it maps no ring of an inherited event with CPU -1), so a task
	 * that runs on k CPUs leaves a remainder below the period on each:
	 * up to k - 1 samples fewer than calls / period.  --no-inherit opens
	 * one event per thread on any CPU, whose count follows the thread,
	 * and gives exactly calls / period, for those threads only. */
	sopts.per_thread = rec->no_inherit;
	return sample_events_open(&se);
}

/* -k: perf's names of the clocks, or a number. */
static int clockid_option(const struct perfex_parse *p, struct record *rec)
{
	static const struct {
		const char *name;
		int id;
	} clocks[] = {
		{ "mono", CLOCK_MONOTONIC }, { "monotonic", CLOCK_MONOTONIC },
		{ "raw", CLOCK_MONOTONIC_RAW },
		{ "monotonic_raw", CLOCK_MONOTONIC_RAW },
		{ "real", CLOCK_REALTIME }, { "realtime", CLOCK_REALTIME },
		{ "boot", CLOCK_BOOTTIME }, { "boottime", CLOCK_BOOTTIME },
		{ "tai", CLOCK_TAI },
	};
	const char *name = p->arg;
	unsigned long v;
	size_t i;

	if (!strncasecmp(name, "CLOCK_", 6))
		name += 6;
	for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (!strcasecmp(name, clocks[i].name)) {
			rec->clockid = clocks[i].id;
			return -1;
		}
	if (perfex_opt_ulong(p, 0, 63, "a clock name or number", &v) >= 0)
		return PERFEX_EXIT_USAGE;
	rec->clockid = (int)v;
	return -1;
}

static int parse_u64_arg(const struct perfex_parse *p, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(p->arg, &end, 0);
	if (errno || *end || end == p->arg || *p->arg == '-' || !v)
		return perfex_opt_error(p, "expects a positive number (not '%s')",
					p->arg);
	*out = v;
	return -1;
}

/* Larger copies do not fit the 16-bit size of a sample record. */
#define STACK_SIZE_MAX 65528u

/* -g, or --call-graph fp|dwarf[,SIZE] with perf's meaning and default. */
static int callgraph_option(const struct perfex_parse *p, struct record *rec)
{
	const char *arg = p->arg;
	unsigned long long size;
	char *end;

	if (!arg || !strcmp(arg, "fp")) {
		rec->callgraph = CALLGRAPH_FP;
		return -1;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ','))
		return perfex_opt_error(p, "expects fp or dwarf[,SIZE] (not '%s')",
					arg);
	if (!perfctr_user_regs_mask()) {
		perfex_error("--call-graph dwarf is not supported on this "
			     "architecture");
		perfex_hint("use --call-graph fp");
		return PERFEX_EXIT_USAGE;
	}
	size = 8192;
	if (arg[5]) {
		errno = 0;
		size = strtoull(arg + 6, &end, 0);
		if (errno || *end || end == arg + 6 || arg[6] == '-' || !size)
			return perfex_opt_error(p, "expects a stack size in bytes "
						"after 'dwarf,' (not '%s')", arg + 6);
		if (size > STACK_SIZE_MAX)
			return perfex_opt_error(p, "expects a stack size of at "
						"most %u bytes (not '%s')",
						STACK_SIZE_MAX, arg + 6);
		/* The kernel copies whole words. */
		size = (size + 7) & ~7ULL;
	}
	rec->callgraph = CALLGRAPH_DWARF;
	rec->stack_size = (uint32_t)size;
	return -1;
}

/* -p PID, -t TID: the process or the thread to sample. */
static perfex_result task_option(const struct perfex_parse *p,
				 struct record *rec)
{
	uint64_t v;
	int r;

	if ((r = parse_u64_arg(p, &v)) >= 0)
		return r;
	if (v > INT32_MAX)
		return perfex_opt_error(p, "expects a %s id (not '%s')",
					p->opt->id == OPT_PID ? "process" :
					"thread", p->arg);
	if (p->opt->id == OPT_PID)
		rec->pid = (pid_t)v;
	else
		rec->tid = (pid_t)v;
	rec->targets++;
	return PERFEX_GO_ON;
}

/*
 * -G NAMES: before the -e (perfex's, perf refuses it) one cgroup for
 * every event; after it, perf's rule (plan_cgroups()).
 */
static perfex_result cgroup_option(const struct perfex_parse *p,
				   struct record *rec)
{
	struct cgroup_arg *n;

	if (!rec->nr_specs) {
		if (!*p->arg || strchr(p->arg, ','))
			return perfex_opt_error(p, "before the -e takes one "
						"cgroup name (one cgroup for "
						"every event); a list needs "
						"its -e first");
		if (rec->cgroup)
			return perfex_opt_error(p, "is given once before the -e");
		rec->cgroup = p->arg;
		return PERFEX_GO_ON;
	}
	if (rec->cgroup)
		return perfex_opt_error(p, "cannot follow a -G given before "
					"the -e (one cgroup for every event)");
	n = realloc(rec->cgroup_args, (rec->nr_cgroup_args + 1) * sizeof(*n));
	if (!n)
		return PERFEX_EXIT_INTERNAL;
	rec->cgroup_args = n;
	n[rec->nr_cgroup_args++] = (struct cgroup_arg){ .names = p->arg,
							.nr_specs = rec->nr_specs };
	return PERFEX_GO_ON;
}

/* -e EVENTS: each -e adds its events, as perf's do. */
static perfex_result event_option(const struct perfex_parse *p,
				  struct record *rec)
{
	struct sample_spec *n = realloc(rec->specs,
					(rec->nr_specs + 1) * sizeof(*n));

	if (!n)
		return PERFEX_EXIT_INTERNAL;
	rec->specs = n;
	n[rec->nr_specs++] = (struct sample_spec){ .text = p->arg };
	return PERFEX_GO_ON;
}

/* -m PAGES: a power of two. */
static perfex_result pages_option(const struct perfex_parse *p,
				  struct record *rec)
{
	uint64_t v;
	int r;

	if ((r = parse_u64_arg(p, &v)) >= 0)
		return r;
	if (v & (v - 1) || v > (1u << 20))
		return perfex_opt_error(p, "expects a power of two number of "
					"pages (not '%s')", p->arg);
	rec->pages = (size_t)v;
	return PERFEX_GO_ON;
}

/* --off-cpu-thresh MS: milliseconds, as perf's. */
static perfex_result off_cpu_thresh_option(const struct perfex_parse *p,
					   struct record *rec)
{
	unsigned long ms;
	int r = perfex_opt_ulong(p, 1, 86400000, "a number of milliseconds",
				 &ms);

	if (r >= 0)
		return r;
	rec->off_cpu_thresh_ns = (uint64_t)ms * 1000000;
	return PERFEX_GO_ON;
}

/*
 * The options that need more than their row's store (-o, -q,
 * --overwrite and --no-inherit are rows that store themselves:
 * options.c).
 */
static perfex_result record_option(struct perfex_parse *p, void *ctx)
{
	struct record *rec = ctx;

	switch (p->opt->id) {
	case OPT_EVENT:
		return event_option(p, rec);
	case OPT_FILTER:
		if (!rec->nr_specs)
			return perfex_opt_error(p, "needs an -e before it");
		rec->specs[rec->nr_specs - 1].filter = p->arg;
		return PERFEX_GO_ON;
	case OPT_COUNT:
		return parse_u64_arg(p, &rec->period);
	case OPT_FREQ:
		return parse_u64_arg(p, &rec->freq);
	case OPT_CALL_GRAPH:
		return callgraph_option(p, rec);
	case OPT_CLOCKID:
		return clockid_option(p, rec);
	case OPT_PID:
	case OPT_TID:
		return task_option(p, rec);
	case OPT_ALL_CPUS:
		rec->all_cpus = true;
		rec->targets++;
		return PERFEX_GO_ON;
	case OPT_CPU:
		rec->cpus = p->arg;
		rec->targets++;
		return PERFEX_GO_ON;
	case OPT_CGROUP:
		return cgroup_option(p, rec);
	case OPT_MMAP_PAGES:
		return pages_option(p, rec);
	case OPT_SNAPSHOT:
		rec->snapshot = true;
		rec->overwrite = true;
		return PERFEX_GO_ON;
	case OPT_KILL_CHILD:
		return perfex_opt_signal(p, &rec->kill_child);
	case OPT_OFF_CPU_THRESH:
		return off_cpu_thresh_option(p, rec);
	default:
		return PERFEX_GO_ON;
	}
}

static int parse_args(struct record *rec, int argc, char **argv)
{
	struct perfex_parse p;
	int r;

	/* Options end at the command's name. */
	r = perfex_options_parse(&p, PERFEX_CMD_RECORD, argc, argv, true,
				 record_option, rec);
	if (r >= 0)
		return r == 0 ? -1 : r;
	if (rec->period && rec->freq) {
		perfex_error("-c and -F exclude each other");
		return PERFEX_EXIT_USAGE;
	}
	if (rec->targets > 1) {
		perfex_error("-p, -t, -a and -C exclude each other");
		return PERFEX_EXIT_USAGE;
	}
	if ((rec->cgroup || rec->nr_cgroup_args) && !rec->all_cpus &&
	    !rec->cpus) {
		perfex_error("option '-G' needs -a or -C");
		perfex_hint("a cgroup is sampled on CPUs: perfex record -a -G NAME");
		return PERFEX_EXIT_USAGE;
	}
	if ((rec->off_cpu_thresh_ns || rec->off_cpu_runnable) &&
	    !rec->off_cpu) {
		perfex_error("option '--%s' needs --off-cpu",
			     rec->off_cpu_runnable ? "off-cpu-runnable" :
			     "off-cpu-thresh");
		return PERFEX_EXIT_USAGE;
	}
	/* The BPF program's clock, so that the times of both kinds of
	 * samples compare. */
	if (rec->off_cpu && rec->clockid < 0)
		rec->clockid = CLOCK_MONOTONIC;
	rec->command_argv = argv + optind;
	rec->command_argc = argc - optind;
	if (!rec->command_argc && !rec->targets) {
		perfex_error("nothing to record: give a command, or -p, -t, -a or -C");
		perfex_hint("perfex record --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	if (rec->command_argc && (rec->pid || rec->tid)) {
		perfex_error("a command and -p/-t exclude each other");
		return PERFEX_EXIT_USAGE;
	}
	return 0;
}

static void report_open_error(const struct record *rec, int err)
{
	const char *filter = NULL;

	for (size_t i = 0; i < rec->nr_specs; i++)
		filter = rec->specs[i].filter ? rec->specs[i].filter : filter;
	if (err == EINVAL && filter) {
		/* The one the kernel refused is not known: name the last,
		 * which is the only one in the usual run. */
		perfex_error("cannot apply the tracepoint filter '%s': %s",
			     filter, strerror(err));
		perfex_hint("filters look like 'common_pid == 42 && arg1 > 0'; "
			    "the fields are in tracefs: events/SUBSYS/NAME/format");
		return;
	}
	if (rec->sampler) {
		struct perfctr_attach_error ae = { .sz = sizeof(ae) };

		if (!perfctr_sampler__open_error(rec->sampler, &ae) &&
		    ae.errnum && ae.broker[0]) {
			perfex_broker_refusal(&ae, perfctr_sampler__name(
						   rec->sampler, ae.event));
			return;
		}
	}
	perfex_error("cannot open the sampling events: %s", strerror(err));
	if (err == EACCES || err == EPERM)
		perfex_permission_hints(rec->pid || rec->tid ? 1 :
					rec->all_cpus || rec->cpus ? 0 : 2,
					rec->pid || rec->tid);
	else if (err == ESRCH)
		perfex_hint("no such process or thread %d", rec->pid ? rec->pid : rec->tid);
	else if (err == EINVAL && rec->freq)
		perfex_hint("is -F above /proc/sys/kernel/perf_event_max_sample_rate?");
	else if (err == ENOSYS)
		perfex_hint("this build of libperfctr has no sampler yet");
}

static int start_writer(struct record *rec, int argc, char **argv)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, wopts);
	size_t i, n = perfctr_sampler__nr_attrs(rec->sampler);
	char **cmdline = calloc((size_t)argc + 2, sizeof(*cmdline));

	/* HEADER_CMDLINE: the whole command line, "perfex record ...". */
	if (cmdline) {
		cmdline[0] = "perfex";
		memcpy(cmdline + 1, argv, (size_t)argc * sizeof(*argv));
		wopts.argc = argc + 1;
		wopts.argv = cmdline;
	}
	rec->out_fd = perfex_create_output(rec->output);
	if (rec->out_fd < 0) {
		free(cmdline);
		return PERFEX_EXIT_IO;
	}
	rec->writer = perfctr_perfdata_writer__open_fd(rec->out_fd, &wopts);
	free(cmdline);
	if (!rec->writer) {
		perfex_error("cannot write '%s': %s", rec->output, strerror(errno));
		return PERFEX_EXIT_IO;
	}
	for (i = 0; i < n; i++) {
		const uint64_t *ids = NULL;
		size_t nr = perfctr_sampler__ids(rec->sampler, i, &ids);
		int r;

		if (i == 0 && nr)
			rec->trailer_id = ids[0];
		r = perfctr_perfdata_writer__add_attr(rec->writer,
			perfctr_sampler__attr(rec->sampler, i),
			perfctr_sampler__name(rec->sampler, i), ids, nr);
		if (r < 0) {
			perfex_error("cannot write '%s': %s", rec->output, strerror(-r));
			return PERFEX_EXIT_IO;
		}
	}
	return offcpu_add_attr(rec);
}

static void add_build_ids(struct record *rec)
{
	size_t i, n = perfctr_symbols__nr_dsos(rec->syms);

	for (i = 0; i < n; i++) {
		struct perfctr_dso_info info = { .sz = sizeof(info) };

		if (perfctr_symbols__dso(rec->syms, i, &info) || !info.hits ||
		    !info.build_id_size)
			continue;
		perfctr_perfdata_writer__add_build_id(rec->writer, -1,
			info.kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
			info.build_id, info.build_id_size, info.path);
	}
}

static void install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: poll must return EINTR so the loop sees the flag. */
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
}

/*
 * Read every forward ring to its end: the sampling rings, or with
 * overwrite rings the tracking rings.  Not through poll: a ring holding
 * less than its wake-up mark is not readable for poll(2), but its records
 * are there.
 */
static struct perfctr_ring *const *forward_rings(const struct record *rec)
{
	return rec->overwrite ? perfctr_sampler__tracking_rings(rec->sampler) :
				perfctr_sampler__rings(rec->sampler);
}

static int drain(struct record *rec)
{
	struct perfctr_ring *const *rings = forward_rings(rec);
	size_t nr = perfctr_sampler__nr_rings(rec->sampler), i;
	int64_t r;

	for (i = 0; rings && i < nr; i++) {
		do
			r = perfctr_ring__drain(rings[i], on_record, rec);
		while (r > 0);
		if (r < 0)
			return (int)r;
	}
	return 0;
}

/*
 * The recording begun: the target, the command (held before its exec),
 * the events opened, the file's header and the synthesised records of the
 * tasks already running, the events enabled and the command let go.
 * Return 0, or perfex's exit status.
 */
static int record_start(struct record *rec, int argc, char **argv)
{
	int ret, err, status;

	ret = make_target(rec);
	if (ret)
		return ret;
	if (rec->command_argc) {
		PERFCTR_OPTS(perfctr_command_opts, copts,
			     .parent_death_signal = rec->kill_child);

		rec->command = perfctr_target__new_command(rec->command_argv, &copts);
		if (!rec->command)
			return perfex_command_error(rec->command_argv, errno);
		rec->child = perfctr_target__pid(rec->command);
	}
	/* The command is held with our signal mask and handlers reset:
	 * from here a Ctrl-C stops the recording. */
	install_handlers();
	if (rec->off_cpu && rec->event_cgroups) {
		perfex_error("--off-cpu takes one cgroup: -G NAME before the -e");
		return PERFEX_EXIT_USAGE;
	}
	ret = offcpu_open(rec);
	if (ret)
		return ret;
	ret = open_events(rec);
	if (ret < 0) {
		report_open_error(rec, -ret);
		return perfex_exit_for_errno(-ret);
	}
	if (ret)
		return ret;
	rec->dec = perfctr_sampler__decoder(rec->sampler);
	rec->ip_word = perfctr_sampler__attr(rec->sampler, 0)->sample_type &
		       PERF_SAMPLE_IDENTIFIER ? 1 : 0;
	ret = start_writer(rec, argc, argv);
	if (ret)
		return ret;
	synth_kernel(rec);
	if (rec->pid || rec->tid)
		synth_process(rec, rec->pid ? rec->pid : rec->tid);
	else if (rec->all_cpus || rec->cpus)
		synth_all_processes(rec);
	/* The command's own target starts at its exec (enable_on_exec);
	 * any other now. */
	offcpu_enable(rec);
	if (rec->target) {
		err = perfctr_sampler__enable(rec->sampler);
		if (err) {
			perfex_error("cannot enable the events: %s", strerror(-err));
			return PERFEX_EXIT_INTERNAL;
		}
	}
	if (rec->command) {
		err = perfctr_target__start(rec->command);
		rec->started = true;
		if (err) {
			ret = perfex_command_error(rec->command_argv, -err);
			/* Its child has exited with 127: collect it. */
			command_wait(rec, &status);
			rec->child = 0;
			return ret;
		}
	}
	return 0;
}

/*
 * Until the command ends, the tasks are gone or a signal stops us: the
 * rings read into the file, the snapshots asked for written.  *@status
 * and *@have_status: the command's end when it was collected.
 * Return 0, or perfex's exit status.
 */
static int record_loop(struct record *rec, int *status, bool *have_status)
{
	int ret = 0;

	if (rec->child > 0 && !rec->all_cpus && !rec->cpus)
		follow_init(rec, rec->child);
	else if (rec->pid || rec->tid)
		follow_init(rec, rec->pid ? rec->pid : rec->tid);
	for (;;) {
		int64_t r;

		follow_target_cpus(rec);
		offcpu_poll(rec);
		while (snapshot_requests > 0 && rec->snapshot) {
			snapshot_requests--;
			/* The side-band records up to now first. */
			drain(rec);
			if (write_window(rec)) {
				perfex_error("cannot take a snapshot: out of memory");
				break;
			}
		}
		/* After the snapshots: one asked for before the stop is
		 * written, though both signals came in the same pass. */
		if (stop_signal)
			break;
		/* What this pass read goes to the file now: a kill from here
		 * on loses at most what the rings hold. */
		if (!rec->write_err)
			rec->write_err = perfctr_perfdata_writer__flush(rec->writer);
		if (rec->write_err)
			break;	/* a full disk: stop, keep what is written */
		if (child_exited && command_ended(rec)) {
			*have_status = command_wait(rec, status);
			break;
		}
		/* 100 ms: a task pinned after its start (taskset execs the
		 * program) is followed soon even when it samples little.  With
		 * overwrite rings, only the tracking rings are read here: the
		 * kernel overwrites the others. */
		if (rec->overwrite)
			r = perfctr_ring_poll(forward_rings(rec),
					      perfctr_sampler__nr_rings(rec->sampler),
					      100, on_record, rec);
		else
			r = perfctr_sampler__poll(rec->sampler, 100, on_record, rec);
		if (r == -ENODEV) {
			/* Every ring hung up: the tasks are gone. */
			*have_status = command_wait(rec, status);
			break;
		}
		if (r < 0 && r != -EINTR) {
			perfex_error("reading the rings failed: %s", strerror((int)-r));
			ret = PERFEX_EXIT_INTERNAL;
			break;
		}
	}
	return ret;
}

/* The file closed (its close reports what a server refused late) and the
 * summary line.  Return 0, or PERFEX_EXIT_IO. */
static int close_file(struct record *rec, const struct perfctr_ring_stats *stats,
		      uint64_t kernel_lost)
{
	struct perfctr_perfdata_writer_stats wst = { .sz = sizeof(wst) };
	uint64_t bytes, lost;
	int err, ret = 0;

	err = perfctr_perfdata_writer__flush(rec->writer);
	perfctr_perfdata_writer__stats(rec->writer, &wst);
	bytes = wst.bytes_written;
	if (!rec->write_err)
		rec->write_err = err;
	err = perfctr_perfdata_writer__close(rec->writer);
	rec->writer = NULL;
	/* close(2) reports what an NFS server refused late. */
	if (close(rec->out_fd) < 0 && !err)
		err = -errno;
	rec->out_fd = -1;
	if (rec->write_err || err) {
		perfex_error("cannot write '%s': %s", rec->output,
			     strerror(-(rec->write_err ? rec->write_err : err)));
		ret = PERFEX_EXIT_IO;
	}
	if (rec->write_err)
		/* The file is finished with what reached it. */
		fprintf(stderr, "perfex record: writing stopped: %" PRIu64
			" samples kept in '%s' (%" PRIu64 " bytes), %" PRIu64
			" dropped\n", wst.samples_written, rec->output, bytes,
			wst.samples_dropped);
	lost = stats->lost + stats->lost_samples;
	if (kernel_lost > lost)
		lost = kernel_lost;
	if (!rec->quiet && !rec->write_err)
		fprintf(stderr, "perfex record: %" PRIu64 " samples, %" PRIu64
			" bytes written to '%s'; %" PRIu64 " samples lost%s\n",
			rec->samples, bytes, rec->output, lost,
			stop_signal ? " (interrupted)" : "");
	else if (lost)
		fprintf(stderr, "perfex record: %" PRIu64 " samples lost\n", lost);
	return ret;
}

/*
 * After the loop (which returned @ret): the rings' rest, the window of
 * overwrite rings, the build ids and the file finished.
 * Return @ret, or the exit status of a later failure.
 */
static int record_finish(struct record *rec, int ret)
{
	struct perfctr_ring_stats stats = { .sz = sizeof(stats) };
	uint64_t kernel_lost = 0;
	int err;

	perfctr_sampler__disable(rec->sampler);
	err = drain(rec);
	if (err && !ret) {
		perfex_error("reading the rings failed: %s", strerror(-err));
		ret = PERFEX_EXIT_INTERNAL;
	}
	if (rec->overwrite && !rec->snapshot) {
		if (write_window(rec))
			perfex_error("cannot write the window: out of memory");
	}
	perfctr_sampler__stats(rec->sampler, &stats, &kernel_lost);
	offcpu_finish(rec);
	add_build_ids(rec);
	if (rec->first_time)
		perfctr_perfdata_writer__set_sample_time(rec->writer, rec->first_time,
							 rec->last_time);
	err = close_file(rec, &stats, kernel_lost);
	return err ? err : ret;
}

/* Everything let go; the exit status: @ret, else the command's. */
static int record_end(struct record *rec, int ret, int status, bool have_status)
{
	if (rec->writer)
		perfctr_perfdata_writer__close(rec->writer);
	if (rec->out_fd >= 0)
		close(rec->out_fd);
	/* A command never started is killed by the delete. */
	if (rec->started && rec->child > 0 && !have_status) {
		if (stop_signal)
			perfctr_target__kill(rec->command, SIGTERM);
		have_status = command_wait(rec, &status);
	}
	perfctr_offcpu__delete(rec->offcpu);
	perfctr_sampler__delete(rec->sampler);
	for (size_t e = 0; rec->event_cgroups && e < rec->plan.nr_events; e++)
		perfctr_target__delete(rec->event_cgroups[e]);
	free(rec->event_cgroups);
	cgroup_plan_free(&rec->plan);
	free(rec->cgroup_args);
	free(rec->specs);
	perfctr_target__delete(rec->target);
	perfctr_target__delete(rec->command);
	perfctr_symbols__delete(rec->syms);
	if (!ret && have_status && !stop_signal) {
		if (WIFEXITED(status))
			ret = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			ret = 128 + WTERMSIG(status);
	}
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct record rec = { .output = "perf.data", .out_fd = -1,
			      .clockid = -1 };
	int ret, status = 0;
	bool have_status = false;

	ret = parse_args(&rec, argc, argv);
	if (ret || perfex_dry_run) {
		free(rec.cgroup_args);
		free(rec.specs);
		return ret < 0 ? 0 : ret;
	}
	rec.syms = perfctr_symbols__new(NULL);
	if (!rec.syms) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	ret = record_start(&rec, argc, argv);
	if (!ret)
		ret = record_finish(&rec, record_loop(&rec, &status, &have_status));
	return record_end(&rec, ret, status, have_status);
}
