/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex top: live sampling of the whole machine (or of -p, -t, -u, -C),
 * each sample resolved as it arrives and added to a profile per event;
 * every -d seconds the profile of the shown event is drawn, on the
 * interactive screen (top-screen.c) or, in batch mode, as a table on
 * stdout.
 *
 * The processes are modelled as the rings describe them: their maps are
 * read from /proc on their first sample (for CPU targets, every running
 * process's at the start, through the library's synthesised records),
 * and every MMAP2, FORK and COMM record after it keeps the model in
 * step, so a library dlopen()ed while top runs is named from its first
 * samples on.  A sample whose user address lies in no known map (its
 * MMAP2 record may wait in another CPU's ring, read later in the pass)
 * has its process's maps read again from /proc, at most every 100 ms per
 * process, and is tried once more after the next pass over the rings
 * before it is counted as in no known map.
 *
 * Nothing is dropped on our side: every ring is drained at each wake-up
 * (a quarter full) and at each refresh, and what the kernel could not
 * write (LOST records, PERF_FORMAT_LOST) is in the header of every table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <perfctr/perfctr.h>
#include <perfctr/record.h>
#include <perfctr/ring.h>
#include <perfctr/sampler.h>
#include <perfctr/session.h>
#include <perfctr/symbols.h>
#include <perfctr/synth.h>
#include <perfctr/target.h>

#include "options.h"
#include "perfex.h"
#include "sample-events.h"
#include "top.h"

#define DEFAULT_DELAY_MS 2000
/* How often a process's maps may be read again for an unknown address. */
#define MAPS_REREAD_NS (100 * 1000000ull)

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t resized;

static void on_stop(int sig) { stop_signal = sig; }
static void on_winch(int sig) { (void)sig; resized = 1; }

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the model of the tasks ---- */

static struct top_task **bucket(struct top_task **table, pid_t id)
{
	return &table[(uint32_t)id % TOP_TASK_BUCKETS];
}

static struct top_task *task_find(struct top_task **table, pid_t id)
{
	for (struct top_task *k = *bucket(table, id); k; k = k->next)
		if (k->id == id)
			return k;
	return NULL;
}

static struct top_task *task_get(struct top_task **table, pid_t id)
{
	struct top_task *k = task_find(table, id), **b;

	if (k)
		return k;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	b = bucket(table, id);
	k->id = id;
	k->uid = -1;
	k->next = *b;
	*b = k;
	return k;
}

static void tasks_free(struct top_task **table)
{
	for (size_t i = 0; i < TOP_TASK_BUCKETS; i++) {
		while (table[i]) {
			struct top_task *k = table[i];

			table[i] = k->next;
			free(k);
		}
	}
}

/* Process @pid, its maps read from /proc the first time it is seen. */
static struct top_task *process(struct top *t, pid_t pid)
{
	struct top_task *k = task_get(t->procs, pid);

	if (k && !k->maps_read && pid > 0) {
		k->maps_read = true;
		perfctr_symbols__load_proc_maps(t->syms, pid);
	}
	return k;
}

const char *top_comm(struct top *t, pid_t tid)
{
	struct top_task *k = task_find(t->threads, tid);

	return k && k->comm[0] ? k->comm : NULL;
}

/* Thread @tid's comm: as its COMM record said, else from /proc. */
static const char *thread_comm(struct top *t, pid_t pid, pid_t tid)
{
	struct top_task *k = task_find(t->threads, tid);
	char path[64];
	ssize_t n;
	int fd;

	if (k)
		return k->comm[0] ? k->comm : NULL;
	k = task_get(t->threads, tid);
	if (!k)
		return NULL;
	if (tid == 0) {
		snprintf(k->comm, sizeof(k->comm), "swapper");
		return k->comm;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, k->comm, sizeof(k->comm) - 1);
	close(fd);
	if (n <= 0)
		n = 0;
	k->comm[n] = '\0';
	k->comm[strcspn(k->comm, "\n")] = '\0';
	return k->comm[0] ? k->comm : NULL;
}

/* -u: the owner of process @pid (of its /proc directory), -1 when gone. */
static long process_uid(struct top *t, pid_t pid)
{
	struct top_task *k = task_get(t->procs, pid);
	char path[32];
	struct stat st;

	if (!k)
		return -1;
	if (k->uid >= 0)
		return k->uid;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) == 0)
		k->uid = (long)st.st_uid;
	return k->uid;
}

static void on_side_band(struct top *t, const struct perf_event_header *hdr)
{
	struct perfctr_record r = { .sz = sizeof(r) };
	struct top_task *k, *parent;

	if (perfctr_decoder__record(t->dec, hdr, &r))
		return;
	switch (hdr->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (r.misc & PERF_RECORD_MISC_MMAP_DATA)
			break;
		/* A process first seen here has its other maps read now:
		 * they came before the sampling.  Records made from /proc
		 * bring them all. */
		if ((int32_t)r.mmap.pid > 0 && t->synthesizing) {
			k = task_get(t->procs, (pid_t)r.mmap.pid);
			if (k)
				k->maps_read = true;
		} else if ((int32_t)r.mmap.pid > 0) {
			process(t, (pid_t)r.mmap.pid);
		}
		perfctr_symbols__add_map(t->syms, (pid_t)r.mmap.pid,
					 r.mmap.addr, r.mmap.len, r.mmap.pgoff,
					 r.mmap.filename);
		break;
	case PERF_RECORD_FORK:
		if (r.task.pid != r.task.ppid) {
			/* It starts with its parent's maps: the parent's
			 * read first when it was not seen yet. */
			if ((int32_t)r.task.ppid > 0)
				process(t, (pid_t)r.task.ppid);
			perfctr_symbols__fork(t->syms, (pid_t)r.task.pid,
					      (pid_t)r.task.ppid);
			/* Its name is its parent's until it execs. */
			parent = task_find(t->threads, (pid_t)r.task.ptid);
			k = parent && parent->comm[0] ?
			    task_get(t->threads, (pid_t)r.task.tid) : NULL;
			if (k)
				memcpy(k->comm, parent->comm, sizeof(k->comm));
			k = task_get(t->procs, (pid_t)r.task.pid);
			if (k)
				k->maps_read = true;
		}
		break;
	case PERF_RECORD_COMM:
		if (r.misc & PERF_RECORD_MISC_COMM_EXEC)
			perfctr_symbols__exec(t->syms, (pid_t)r.comm.pid);
		k = task_get(t->threads, (pid_t)r.comm.tid);
		if (k)
			snprintf(k->comm, sizeof(k->comm), "%s", r.comm.comm);
		break;
	case PERF_RECORD_EXIT:
		/* The thread's name stays: its rows still show it.  A tid
		 * used again is named anew by its FORK or COMM. */
		break;
	default:
		break;
	}
}

/* ---- samples into the profiles ---- */

static bool is_kernel(uint16_t misc)
{
	uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mode == PERF_RECORD_MISC_KERNEL ||
	       mode == PERF_RECORD_MISC_GUEST_KERNEL;
}

/* Where @ip of @pid is; a user address in no map has the process's maps
 * read again (at most every MAPS_REREAD_NS) and is tried once more. */
static void resolve(struct top *t, pid_t pid, uint64_t ip, bool kernel,
		    struct perfctr_symbol_loc *loc)
{
	struct top_task *k;
	uint64_t now;

	perfctr_symbols__resolve(t->syms, pid, ip, kernel, 0, loc);
	if (kernel || pid <= 0 || strcmp(loc->dso, "[unknown]"))
		return;
	k = task_find(t->procs, pid);
	now = now_ns();
	if (!k || now - k->maps_reread_ns < MAPS_REREAD_NS)
		return;
	k->maps_reread_ns = now;
	if (perfctr_symbols__load_proc_maps(t->syms, pid) > 0)
		perfctr_symbols__resolve(t->syms, pid, ip, kernel, 0, loc);
}

static void set_frame(struct perfctr_frame *f,
		      const struct perfctr_symbol_loc *loc, uint64_t addr)
{
	f->dso = strcmp(loc->dso, "[unknown]") ? loc->dso : NULL;
	f->sym = loc->sym;
	f->addr = addr;
	f->kernel = loc->kernel;
}

/*
 * The frames of sample @s: where it hit, then (-g) its callers from the
 * callchain, each resolved at its return address minus one (the call).
 * Return how many.
 */
static size_t sample_frames(struct top *t, const struct perfctr_sample *s,
			    bool kernel, struct perfctr_frame *frames,
			    size_t max)
{
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	size_t n = 0;
	bool in_kernel = kernel;

	if (!t->callgraph || !s->callchain_nr) {
		resolve(t, (pid_t)s->pid, s->ip, kernel, &loc);
		set_frame(&frames[0], &loc, loc.dso_addr);
		return 1;
	}
	for (uint64_t i = 0; i < s->callchain_nr && n < max; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= PERF_CONTEXT_MAX) {
			in_kernel = ip == PERF_CONTEXT_KERNEL ||
				    ip == PERF_CONTEXT_GUEST_KERNEL;
			continue;
		}
		resolve(t, (pid_t)s->pid, n ? ip - 1 : ip, in_kernel, &loc);
		set_frame(&frames[n], &loc, loc.dso_addr + (n ? 1 : 0));
		n++;
	}
	if (!n) {
		resolve(t, (pid_t)s->pid, s->ip, kernel, &loc);
		set_frame(&frames[0], &loc, loc.dso_addr);
		n = 1;
	}
	return n;
}

/* The srcline key's text, as perf report shows it: "file:line" (the
 * file's base name), else "??:0". */
static const char *srcline_of(struct top *t, pid_t pid, uint64_t ip,
			      bool kernel, char *buf, size_t size)
{
	struct perfctr_srcline line = { .sz = sizeof(line) };
	const char *slash;

	if (perfctr_symbols__srcline(t->syms, pid, ip, kernel, &line) <= 0 ||
	    !line.file)
		return NULL;
	slash = strrchr(line.file, '/');
	snprintf(buf, size, "%s:%u", slash ? slash + 1 : line.file, line.line);
	return buf;
}

/* Keep sample @hdr to be tried again after the next pass. */
static void defer(struct top *t, const struct perf_event_header *hdr)
{
	size_t words = (hdr->size + 7) / 8;

	if (t->pending_len + words > t->pending_cap) {
		size_t cap = (t->pending_len + words) * 2 + 512;
		uint64_t *p = realloc(t->pending, cap * sizeof(*p));

		if (!p)
			return;
		t->pending = p;
		t->pending_cap = cap;
	}
	memcpy(t->pending + t->pending_len, hdr, hdr->size);
	t->pending_len += words;
}

/* @retry: the sample was deferred once; it is counted now, resolved or
 * not. */
static void on_sample(struct top *t, const struct perf_event_header *hdr,
		      bool retry)
{
	struct perfctr_frame frames[PERFCTR_READER_MAX_FRAMES];
	struct perfctr_sample s = { .sz = sizeof(s) };
	PERFCTR_OPTS(perfctr_profile_sample, ps);
	char srcline[256];
	bool kernel;

	if (perfctr_decoder__sample(t->dec, hdr, &s)) {
		t->bad++;
		return;
	}
	if (t->uid >= 0 && process_uid(t, (pid_t)s.pid) != t->uid) {
		t->filtered++;
		return;
	}
	kernel = is_kernel(s.misc);
	if ((int32_t)s.pid > 0)
		process(t, (pid_t)s.pid);
	ps.nr_frames = sample_frames(t, &s, kernel, frames,
				     PERFCTR_READER_MAX_FRAMES);
	if (!retry && !frames[0].dso && !frames[0].kernel &&
	    (int32_t)s.pid > 0 && hdr->size >= sizeof(*hdr)) {
		defer(t, hdr);
		return;
	}
	ps.frames = frames;
	ps.comm = thread_comm(t, (pid_t)s.pid, (pid_t)s.tid);
	ps.pid = (pid_t)s.pid;
	ps.tid = (pid_t)s.tid;
	ps.cpu = s.type & PERF_SAMPLE_CPU ? (int32_t)s.cpu : -1;
	ps.weight = s.period ? s.period : 1;
	if (t->srcline)
		ps.srcline = srcline_of(t, (pid_t)s.pid, s.ip, kernel, srcline,
					sizeof(srcline));
	t->samples++;
	t->interval_samples++;
	t->interval_kernel += kernel;
	t->unknown += !frames[0].dso && !frames[0].kernel;
	if (s.attr_idx < t->nr_events)
		perfctr_profile__add(t->profiles[s.attr_idx], &ps);
}

static int on_record(struct perfctr_ring *ring,
		     const struct perf_event_header *hdr, void *ctx)
{
	(void)ring;
	if (hdr->type == PERF_RECORD_SAMPLE)
		on_sample(ctx, hdr, false);
	else
		on_side_band(ctx, hdr);
	return 0;
}

/* The deferred samples of the first @words words counted now. */
static void retry_pending(struct top *t, size_t words)
{
	size_t at = 0;

	if (!words)
		return;		/* pending may be NULL: no memmove of it */
	while (at < words) {
		const struct perf_event_header *hdr =
			(const struct perf_event_header *)(t->pending + at);

		on_sample(t, hdr, true);
		at += (hdr->size + 7) / 8;
	}
	memmove(t->pending, t->pending + words,
		(t->pending_len - words) * sizeof(*t->pending));
	t->pending_len -= words;
}

/* Records made from /proc for the processes running before the start
 * (CPU targets): a process that ends before its first sample is read
 * would have its samples in no known map. */
static int on_synth(const struct perf_event_header *hdr, void *ctx)
{
	on_side_band(ctx, hdr);
	return 0;
}

static void synth_processes(struct top *t)
{
	const uint64_t *ids = NULL;
	size_t nr = perfctr_sampler__ids(t->sampler, 0, &ids);
	PERFCTR_OPTS(perfctr_synth_opts, o,
		     .attr = perfctr_sampler__attr(t->sampler, 0),
		     .id = nr ? ids[0] : 0);

	t->synthesizing = true;
	perfctr_synth_processes(&o, on_synth, t);
	t->synthesizing = false;
}

int top_reset_profiles(struct top *t)
{
	PERFCTR_OPTS(perfctr_profile_opts, popts, .keys = t->keys,
		     .nr_keys = t->nr_keys, .stable_strings = true,
		     .callgraph = t->callgraph ? PERFCTR_CALLGRAPH_CALLEE :
						 PERFCTR_CALLGRAPH_NONE);

	t->srcline = false;
	for (size_t k = 0; k < t->nr_keys; k++)
		t->srcline |= t->keys[k] == PERFCTR_SORT_SRCLINE;
	for (size_t i = 0; i < t->nr_events; i++) {
		struct perfctr_profile *p = perfctr_profile__new(&popts);

		if (!p)
			return -ENOMEM;
		perfctr_profile__delete(t->profiles[i]);
		t->profiles[i] = p;
	}
	return 0;
}

/* ---- the events ---- */

/* Without -e: cycles where the machine counts them, else cpu-clock, as
 * perf top chooses; the open is the probe. */
static int open_events(struct top *t)
{
	size_t pages = t->pages ? t->pages : 64;
	PERFCTR_OPTS(perfctr_sampler_opts, sopts, .target = t->target,
		     .data_pages = pages);
	struct sample_events se = {
		.specs = t->specs,
		.nr_specs = t->nr_specs,
		.sampler = &t->sampler,
		.sampler_opts = &sopts,
		.period = t->period,
		.freq = t->freq,
		.callchain = t->callgraph,
		.clockid = -1,
	};

	/* Wake up when a quarter of a ring is full (not half, the kernel's
	 * default): room left while the others are drained. */
	sopts.wakeup_watermark =
		(uint32_t)(pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	return sample_events_open(&se);
}

static void report_open_error(const struct top *t, int err)
{
	if (t->sampler) {
		struct perfctr_attach_error ae = { .sz = sizeof(ae) };

		if (!perfctr_sampler__open_error(t->sampler, &ae) &&
		    ae.errnum && ae.broker[0]) {
			perfex_broker_refusal(&ae, perfctr_sampler__name(
						   t->sampler, ae.event));
			return;
		}
	}
	perfex_error("cannot open the sampling events: %s", strerror(err));
	if (err == EACCES || err == EPERM)
		perfex_permission_hints(t->pid || t->tid ? 1 : 0,
					t->pid || t->tid);
	else if (err == ESRCH)
		perfex_hint("no such process or thread %d",
			    t->pid ? t->pid : t->tid);
	else if (err == EINVAL && t->freq)
		perfex_hint("is -F above /proc/sys/kernel/perf_event_max_sample_rate?");
}

/* What -p, -t, -C name, else every CPU (-a, -u, the default). */
static int make_target(struct top *t)
{
	if (t->pid)
		t->target = perfctr_target__new_process(t->pid);
	else if (t->tid)
		t->target = perfctr_target__new_thread(t->tid);
	else
		t->target = perfctr_target__new_cpus(t->cpus);
	if (t->target)
		return 0;
	if (t->pid || t->tid) {
		perfex_error("cannot attach to %s %d: %s",
			     t->pid ? "process" : "thread",
			     (int)(t->pid ? t->pid : t->tid),
			     errno == ESRCH ? "no such process" : strerror(errno));
		return errno == ESRCH ? PERFEX_EXIT_TARGET : PERFEX_EXIT_INTERNAL;
	}
	if (errno == EINVAL) {
		perfex_error("bad CPU list '%s'", t->cpus);
		perfex_hint("a list looks like 0-3,6");
		return PERFEX_EXIT_USAGE;
	}
	perfex_error("cannot sample on CPUs '%s': %s",
		     t->cpus ? t->cpus : "all",
		     errno == ENODEV ? "a CPU is not online" : strerror(errno));
	return errno == ENODEV ? PERFEX_EXIT_TARGET : PERFEX_EXIT_INTERNAL;
}

/* ---- options ---- */

static perfex_result id_option(const struct perfex_parse *p, pid_t *out,
			       struct top *t)
{
	unsigned long v;
	int r = perfex_opt_ulong(p, 1, INT32_MAX, p->opt->id == OPT_PID ?
				 "a process id" : "a thread id", &v);

	if (r != PERFEX_GO_ON)
		return r;
	*out = (pid_t)v;
	t->targets++;
	return PERFEX_GO_ON;
}

/*
 * The uid of user @name from /etc/passwd, -1 when none: read directly, as
 * getpwnam() in a static perfex would need glibc's NSS modules of the
 * version it was linked with at run time.
 */
static long passwd_uid(const char *name)
{
	FILE *f = fopen("/etc/passwd", "re");
	size_t len = strlen(name);
	char line[1024];
	long uid = -1;

	if (!f)
		return -1;
	while (uid < 0 && fgets(line, sizeof(line), f)) {
		char *field = line + len + 1, *end;
		unsigned long v;

		if (strncmp(line, name, len) || line[len] != ':')
			continue;
		/* name:password:uid: */
		field = strchr(field, ':');
		if (!field)
			continue;
		errno = 0;
		v = strtoul(field + 1, &end, 10);
		if (!errno && end != field + 1 && *end == ':' && v <= INT32_MAX)
			uid = (long)v;
	}
	fclose(f);
	return uid;
}

/* -u USER: a name or a uid. */
static perfex_result user_option(const struct perfex_parse *p, struct top *t)
{
	long uid = *p->arg ? passwd_uid(p->arg) : -1;
	unsigned long v;
	char *end;

	t->targets++;
	t->user = p->arg;
	if (uid >= 0) {
		t->uid = uid;
		return PERFEX_GO_ON;
	}
	errno = 0;
	v = strtoul(p->arg, &end, 10);
	if (*p->arg >= '0' && *p->arg <= '9' && !errno && !*end &&
	    v <= INT32_MAX) {
		t->uid = (long)v;
		return PERFEX_GO_ON;
	}
	return perfex_opt_error(p, "expects a user name or uid (no user '%s')",
				p->arg);
}

/* A number of seconds (-d), a percentage (--percent-limit): decimal. */
static perfex_result double_option(const struct perfex_parse *p, double min,
				   double max, const char *what, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(p->arg, &end);
	if (!*p->arg || *end || errno || !isfinite(v) || v < min || v > max ||
	    (*p->arg != '.' && (*p->arg < '0' || *p->arg > '9')))
		return perfex_opt_error(p, "expects %s (not '%s')", what, p->arg);
	*out = v;
	return PERFEX_GO_ON;
}

static perfex_result top_option(struct perfex_parse *p, void *ctx)
{
	struct top *t = ctx;
	unsigned long v = 0;
	double d;
	int r;

	switch (p->opt->id) {
	case OPT_EVENT: {
		struct sample_spec *n = realloc(t->specs,
						(t->nr_specs + 1) * sizeof(*n));

		if (!n)
			return PERFEX_EXIT_INTERNAL;
		t->specs = n;
		n[t->nr_specs++] = (struct sample_spec){ .text = p->arg };
		return PERFEX_GO_ON;
	}
	case OPT_FREQ:
		r = perfex_opt_ulong(p, 1, 1000000, "a frequency in Hz", &v);
		t->freq = v;
		return r;
	case OPT_COUNT:
		r = perfex_opt_ulong(p, 1, ULONG_MAX, "a period", &v);
		t->period = v;
		return r;
	case OPT_CALL_GRAPH:
		t->callgraph = true;
		return PERFEX_GO_ON;
	case OPT_PID:
		return id_option(p, &t->pid, t);
	case OPT_TID:
		return id_option(p, &t->tid, t);
	case OPT_ALL_CPUS:
		t->all_cpus = true;
		t->targets++;
		return PERFEX_GO_ON;
	case OPT_CPU:
		t->cpus = p->arg;
		t->targets++;
		return PERFEX_GO_ON;
	case OPT_UID:
		return user_option(p, t);
	case OPT_DELAY:
		r = double_option(p, 0.1, 3600, "a number of seconds from 0.1 "
				  "to 3600", &d);
		t->delay_ms = (unsigned int)lround(d * 1000);
		return r;
	case OPT_ITERATIONS:
		r = perfex_opt_ulong(p, 1, ULONG_MAX, "a number of refreshes",
				     &v);
		t->iterations = v;
		return r;
	case OPT_ENTRIES:
		r = perfex_opt_ulong(p, 1, 1000000, "a number of rows", &v);
		t->entries = v;
		return r;
	case OPT_COUNT_FILTER:
		r = perfex_opt_ulong(p, 0, ULONG_MAX, "a number of samples", &v);
		t->count_filter = v;
		return r;
	case OPT_PERCENT_LIMIT:
		return double_option(p, 0, 100, "a percentage from 0 to 100",
				     &t->percent_limit);
	case OPT_MMAP_PAGES:
		r = perfex_opt_ulong(p, 1, 1u << 20, "a power of two number "
				     "of pages", &v);
		if (r == PERFEX_GO_ON && (v & (v - 1)))
			return perfex_opt_error(p, "expects a power of two "
						"number of pages (not '%s')",
						p->arg);
		t->pages = v;
		return r;
	default:
		return PERFEX_GO_ON;
	}
}

/* Return PERFEX_GO_ON, or the exit status (0 after --help). */
static perfex_result parse_args(struct top *t, int argc, char **argv)
{
	struct perfex_parse p;
	const char *bad = NULL;
	int r;

	r = perfex_options_parse(&p, PERFEX_CMD_TOP, argc, argv, false,
				 top_option, t);
	if (r != PERFEX_GO_ON)
		return r;	/* 0 after --help */
	if (optind < argc) {
		perfex_error("unexpected argument '%s'", argv[optind]);
		perfex_hint("perfex top watches -p, -t, -u, -C or the whole "
			    "machine; it runs no command");
		return PERFEX_EXIT_USAGE;
	}
	if (t->targets > 1) {
		perfex_error("-p, -t, -u, -a and -C exclude each other");
		perfex_hint("perfex top --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	if (t->freq && t->period) {
		perfex_error("-F and -c exclude each other");
		return PERFEX_EXIT_USAGE;
	}
	r = perfctr_sort_keys_parse(t->sort ? t->sort : "dso,sym", t->keys,
				    PERFCTR_SORT_NR, &bad);
	if (r < 0) {
		perfex_error("bad sort key '%.*s'",
			     bad ? (int)strcspn(bad, ",") : 0, bad ? bad : "");
		perfex_hint("sort keys are comm, dso, sym (symbol), pid, tid, "
			    "cpu, srcline");
		return PERFEX_EXIT_USAGE;
	}
	t->nr_keys = (size_t)r;
	return PERFEX_GO_ON;
}

/* ---- the loop ---- */

static void install_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	/* No SA_RESTART: poll() returns at once. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
}

/*
 * One pass over each ring: what it held when the pass began.  Not until
 * it is empty: a ring filled as fast as it is read (top watching itself
 * at a high rate) would keep the loop from its refreshes and keys.
 */
static int drain(struct top *t)
{
	struct perfctr_ring *const *rings = perfctr_sampler__rings(t->sampler);
	size_t nr = perfctr_sampler__nr_rings(t->sampler);
	size_t deferred = t->pending_len;

	for (size_t i = 0; i < nr; i++) {
		int64_t r = perfctr_ring__drain(rings[i], on_record, t);

		if (r < 0)
			return (int)r;
	}
	/* Those deferred before this pass have had their chance. */
	retry_pending(t, deferred);
	return 0;
}

/* The interval closed: its rate, its kernel share, the lost count. */
static void close_interval(struct top *t)
{
	struct perfctr_ring_stats st = { .sz = sizeof(st) };
	uint64_t now = now_ns(), kernel_lost = 0, lost;
	double secs = (double)(now - t->interval_start_ns) / 1e9;

	t->rate = secs > 0 ? (double)t->interval_samples / secs : 0;
	t->kernel_pct = t->interval_samples ?
		100.0 * (double)t->interval_kernel / (double)t->interval_samples :
		0;
	t->interval_samples = 0;
	t->interval_kernel = 0;
	t->interval_start_ns = now;
	if (!perfctr_sampler__stats(t->sampler, &st, &kernel_lost)) {
		lost = st.lost + st.lost_samples;
		t->lost = lost > kernel_lost ? lost : kernel_lost;
	}
	t->refreshes++;
}

/* Draw (or print) the table; with -z, start the profiles afresh.  @last:
 * no more passes will come, the deferred samples are counted now. */
static int refresh(struct top *t, bool last)
{
	int err = 0;

	if (last)
		retry_pending(t, t->pending_len);
	close_interval(t);
	if (t->tty)
		top_screen_draw(t);
	else
		err = top_print_batch(t);
	if (!err && t->zero && top_reset_profiles(t))
		err = -ENOMEM;
	return err;
}

/* Wait for a ring (or a key) until @deadline; return the poll's result:
 * -1 with errno, or how many are ready. */
static int wait_rings(struct top *t, uint64_t deadline, bool *all_hup)
{
	struct perfctr_ring *const *rings = perfctr_sampler__rings(t->sampler);
	size_t nr = perfctr_sampler__nr_rings(t->sampler), n = 0, live = 0;
	struct pollfd fds[nr + 1];
	size_t idx[nr + 1];
	uint64_t now = now_ns();
	int timeout = deadline > now ?
		      (int)((deadline - now + 999999) / 1000000) : 0;
	int r;

	for (size_t i = 0; i < nr; i++) {
		if (t->hup[i])
			continue;
		idx[n] = i;
		fds[n++] = (struct pollfd){ .fd = perfctr_ring__fd(rings[i]),
					    .events = POLLIN };
		live++;
	}
	if (t->tty) {
		idx[n] = SIZE_MAX;
		fds[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
	}
	*all_hup = nr && !live;
	r = poll(fds, n, timeout);
	for (size_t i = 0; r > 0 && i < n; i++)
		if (idx[i] != SIZE_MAX && (fds[i].revents & (POLLHUP | POLLERR)))
			t->hup[idx[i]] = true;
	return r;
}

static int top_loop(struct top *t)
{
	unsigned int delay = t->delay_ms ? t->delay_ms : DEFAULT_DELAY_MS;
	uint64_t next = now_ns() + (uint64_t)delay * 1000000ull;
	int err;

	t->interval_start_ns = now_ns();
	if (t->tty)
		top_screen_draw(t);
	for (;;) {
		bool all_hup = false, quit = false;
		int r;

		if (stop_signal)
			return 0;
		if (resized) {
			resized = 0;
			top_screen_resize(t);
			top_screen_draw(t);
		}
		r = wait_rings(t, next, &all_hup);
		if (r < 0 && errno != EINTR) {
			perfex_error("waiting for samples failed: %s",
				     strerror(errno));
			return PERFEX_EXIT_INTERNAL;
		}
		err = drain(t);
		if (err) {
			perfex_error("reading the rings failed: %s",
				     strerror(-err));
			return PERFEX_EXIT_INTERNAL;
		}
		if (t->tty && top_screen_keys(t, &quit))
			top_screen_draw(t);
		if (quit)
			return 0;
		/* A key may have changed the delay. */
		delay = t->delay_ms ? t->delay_ms : DEFAULT_DELAY_MS;
		if (now_ns() >= next || (all_hup && !t->ended)) {
			bool last = all_hup ||
				    (t->iterations &&
				     t->refreshes + 1 >= t->iterations);

			if (refresh(t, last)) {
				if (!t->tty)
					return PERFEX_EXIT_IO;
				perfex_error("out of memory");
				return PERFEX_EXIT_INTERNAL;
			}
			next = now_ns() + (uint64_t)delay * 1000000ull;
			if (t->iterations && t->refreshes >= t->iterations)
				return 0;
			/* The tasks are gone: their last table is printed,
			 * or stays on the screen until q. */
			if (all_hup && !t->tty)
				return 0;
			if (all_hup && !t->ended) {
				t->ended = true;
				snprintf(t->status, sizeof(t->status),
					 "the sampled tasks have ended; q quits");
				top_screen_draw(t);
			}
		}
	}
}

static int top_start(struct top *t)
{
	PERFCTR_OPTS(perfctr_symbols_opts, yopts);
	int ret, err;

	ret = make_target(t);
	if (ret)
		return ret;
	ret = open_events(t);
	if (ret < 0) {
		report_open_error(t, -ret);
		return perfex_exit_for_errno(-ret);
	}
	if (ret)
		return ret;
	t->dec = perfctr_sampler__decoder(t->sampler);
	t->nr_events = perfctr_sampler__nr_attrs(t->sampler);
	t->profiles = calloc(t->nr_events, sizeof(*t->profiles));
	t->hup = calloc(perfctr_sampler__nr_rings(t->sampler) + 1,
			sizeof(*t->hup));
	t->syms = perfctr_symbols__new(&yopts);
	if (!t->profiles || !t->hup || !t->syms || top_reset_profiles(t)) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	if (t->pid)
		process(t, t->pid);
	install_handlers();
	err = perfctr_sampler__enable(t->sampler);
	if (err) {
		perfex_error("cannot enable the events: %s", strerror(-err));
		return PERFEX_EXIT_INTERNAL;
	}
	/* After the enable: a process started meanwhile is in the rings. */
	if (!t->pid && !t->tid)
		synth_processes(t);
	return 0;
}

static void top_end(struct top *t)
{
	if (t->raw)
		top_screen_leave(t);
	for (size_t i = 0; t->profiles && i < t->nr_events; i++)
		perfctr_profile__delete(t->profiles[i]);
	free(t->profiles);
	free(t->hup);
	perfctr_sampler__delete(t->sampler);
	perfctr_target__delete(t->target);
	perfctr_symbols__delete(t->syms);
	tasks_free(t->procs);
	tasks_free(t->threads);
	free(t->pending);
	free(t->specs);
}

int cmd_top(int argc, char **argv)
{
	struct top *t = calloc(1, sizeof(*t));
	int ret;

	if (!t) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	t->uid = -1;
	ret = parse_args(t, argc, argv);
	if (ret != PERFEX_GO_ON || perfex_dry_run) {
		ret = ret == PERFEX_GO_ON ? 0 : ret;
		goto out;
	}
	/* Batch mode unless both ends are a terminal: the screen is drawn
	 * on stdout and the keys come from stdin. */
	t->tty = !t->stdio && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
	ret = top_start(t);
	if (ret)
		goto out;
	if (t->tty && top_screen_enter(t)) {
		perfex_error("cannot set up the terminal: %s", strerror(errno));
		perfex_hint("perfex top --stdio prints tables instead");
		ret = PERFEX_EXIT_IO;
		goto out;
	}
	ret = top_loop(t);
out:
	top_end(t);
	free(t);
	return ret;
}
