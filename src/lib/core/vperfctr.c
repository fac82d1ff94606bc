// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Virtual per-thread counters: the seeds' vperfctr API on perf_event.
 *
 * One state per thread.  Its counters form one perf group opened on the
 * thread: the TSC (msr/tsc) as leader when tsc_on, else counter 0.  The
 * counter engine opens it (a one-group engine on a thread target, strict,
 * with the user pages mapped for vperfctr_read_fast()) and toggles the
 * leader only (engine.h says why).  The state keeps copies of the
 * engine's fds and pages for the reads, which must stay lock-free and
 * async-signal-safe (a seed's overflow handler reads its counters): one
 * read(2) of the leader into a buffer on the stack, decoded by the one
 * read-format decoder, gives every sum.
 *
 * Sums: counter i's sum is base[i] + the kernel's count since the group
 * was opened or last RESET; base[] carries preserved sums across
 * controls.  Sums of counters beyond the current control's are kept in
 * stale[] (the seed resets only the new control's counters).
 *
 * Restarting with the same counters keeps the events: RESET of the group,
 * PERIOD for the i-mode counters (so that the kernel's next overflow is a
 * full period away, as the overflow module assumes; a period changed
 * while counting applies only after the current one: docs/kernel-notes.md
 * 6), and
 * ENABLE; a stop is one DISABLE.
 *
 * i-mode: core/overflow.c suspends on overflow.  With the TSC as leader
 * the suspension disables each counter (the TSC keeps counting, as in the
 * seed); without it, it disables the leader.  Resuming members of a
 * running TSC leader needs a DISABLE + ENABLE of the leader to put them
 * back on at once (see overflow.h): the TSC misses the ticks of those two
 * ioctls.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/engine.h"
#include "core/evntsel.h"
#include "core/fastread.h"
#include "core/overflow.h"
#include "perfctr/event.h"
#include "perfctr/vperfctr.h"
#include "stream/readfmt.h"
#include "sys/sys.h"

#define N VPERFCTR_NR_PMCS
#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
		     PERF_FORMAT_TOTAL_TIME_RUNNING)
/*
 * A lone a-mode counter (no TSC, no i-mode) is opened without
 * PERF_FORMAT_GROUP: the kernel's single-event read path is about a third
 * cheaper than its group read (which allocates and walks the group each
 * time).
 */
#define SINGLE_FORMAT (READ_FORMAT & ~(uint64_t)PERF_FORMAT_GROUP)
/* The largest answer: the TSC and N counters. */
#define MAX_READ_WORDS (3 + N + 1)

struct vcfg {
	bool tsc;
	unsigned int nra, nri, n;
	struct perf_event_attr attr[N];
	uint64_t period[N];
	int signo;
};

struct vstate {
	pthread_mutex_t lock;
	unsigned int refs;
	pid_t tid;
	/* /proc/<tid> opened O_PATH while attached: lookups under it fail
	 * with ESRCH once that thread is gone, even when its id names a new
	 * thread (the fd holds the old thread's pid, not the number). */
	int proc_fd;
	bool attached;
	struct vstate *next;

	/* The open events (possibly stopped): the engine's, with copies of
	 * its fds and pages (owned by the engine) for the reads. */
	struct vcfg cfg;
	bool open;
	struct pc_engine *eng;
	int fd[N];
	volatile struct perf_event_mmap_page *page[N];
	int leader_fd;
	uint64_t read_format;	/* of the leader */
	size_t read_bytes;	/* of its answer */
	bool single;		/* one counter, read without the group format */
	unsigned int first;	/* entry of counter 0 in an answer (1 after the TSC) */
	struct pc_ovf *ovf;
	bool no_user_read;	/* some counter's page can never be read */
	bool copy_is_spec;	/* event_copy[i] equal to cfg_spec[i], i < cfg.n */
	/* The control in force is start_ctl with start_preserve (a restart
	 * by event names), not kept in `control`: vperfctr_read() makes it. */
	bool control_is_start;
	unsigned int start_preserve;

	/* What the current control counts. */
	unsigned int nr_active;
	bool tsc_active;
	uint64_t base[N];
	uint64_t tsc_base;
	uint64_t stale[N];
	uint64_t tsc_final;	/* after unlink */

	/* The control in force, with its own copies of strings and attrs. */
	struct vperfctr_control control;
	char *event_copy[N];
	/* The specifications the open events were made from, and the control
	 * that made them (events pointing to cfg_spec, attrs to start_attr):
	 * a restart with an equal control skips the translation. */
	char *cfg_spec[N];
	struct vperfctr_control start_ctl;
	struct perf_event_attr start_attr[N];
	struct perf_event_attr attr_copy[N];
};

struct vperfctr {
	struct vstate *st;
};

_Static_assert(sizeof(struct perfctr_sum_ctrs) == 8 * (1 + N),
	       "ABI: perfctr_sum_ctrs");

/*
 * Block copies and clears of a few hundred bytes of known size are inlined
 * as `rep movs` / `rep stos`, whose start-up cost on x86 CPUs of the build
 * VM (tens of ns each) was most of vperfctr_control()'s own time; the C
 * library's versions are several times faster.  Volatile pointers keep
 * the compiler from inlining them.
 */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;
static void *(*volatile clear_fn)(void *, int, size_t) = memset;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vstate *registry;

/* ------------------------------------------------------------------ */
/* Translation of a control into the events to open. */

/* The per-thread TSC: the msr PMU's tsc event (config from events/tsc). */
static int tsc_attr(struct perf_event_attr *attr)
{
	static const char *const base = "/sys/bus/event_source/devices/msr";
	char path[256], buf[64];
	uint64_t type, config = 0;
	const char *eq;

	snprintf(path, sizeof(path), "%s/type", base);
	if (pc_read_file(path, buf, sizeof(buf)) < 0 ||
	    pc_parse_u64(buf, 10, &type) < 0)
		return -EOPNOTSUPP;
	snprintf(path, sizeof(path), "%s/events/tsc", base);
	if (pc_read_file(path, buf, sizeof(buf)) < 0)
		return -EOPNOTSUPP;
	eq = strstr(buf, "event=");
	if (!eq || pc_parse_u64(eq + 6, 0, &config) < 0)
		return -EOPNOTSUPP;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = (uint32_t)type;
	attr->config = config;
	return 0;
}

static int translate_counter(const struct vperfctr_control *c, unsigned int i,
			     bool imode, const struct vstate *st,
			     struct perf_event_attr *attr)
{
	const struct perf_event_attr *given =
		PC_OPTS_HAS(c, attr) ? c->attr[i] : NULL;
	const char *spec = PC_OPTS_HAS(c, event) ? c->event[i] : NULL;
	char why[160];
	int rc;

	if (given) {
		size_t sz = given->size && given->size < sizeof(*attr) ?
			    given->size : sizeof(*attr);

		memset(attr, 0, sizeof(*attr));
		memcpy(attr, given, sz);
	} else if (spec && st && st->open && i < st->cfg.n &&
		   st->cfg_spec[i] && !strcmp(spec, st->cfg_spec[i])) {
		/* The specification in force: no parse (and no sysfs reads)
		 * on a restart. */
		*attr = st->cfg.attr[i];
		attr->sample_period = 0;
	} else if (spec) {
		struct perfctr_evlist *list = perfctr_evlist__new();
		struct perfctr_parse_error err;

		if (!list)
			return -ENOMEM;
		memset(&err, 0, sizeof(err));
		err.sz = sizeof(err);
		rc = perfctr_evlist__parse(list, spec, NULL, &err);
		if (rc >= 0 && perfctr_evlist__nr_events(list) != 1) {
			pr_warn("vperfctr: counter %u: '%s' is %zu events, not one\n",
				i, spec, perfctr_evlist__nr_events(list));
			rc = -EINVAL;
		} else if (rc < 0) {
			pr_warn("vperfctr: counter %u: %s%s%s\n", i, err.message,
				err.hint[0] ? "\nhint: " : "", err.hint);
		} else {
			*attr = *perfctr_evlist__attr(list, 0);
			rc = 0;
		}
		perfctr_evlist__delete(list);
		if (rc < 0)
			return rc;
	} else {
		rc = pc_evntsel_to_attr(pc_evntsel_host_arch(),
					c->cpu_control.evntsel[i], imode, attr,
					why, sizeof(why));
		if (rc < 0) {
			pr_warn("vperfctr: counter %u: %s\n", i, why);
			return rc;
		}
	}
	attr->size = sizeof(*attr);
	attr->disabled = 0;
	attr->inherit = 0;
	attr->read_format = READ_FORMAT;
	attr->sample_type = 0;
	attr->freq = 0;
	attr->enable_on_exec = 0;
	if (!imode)
		attr->sample_period = 0;
	return 0;
}

static int build_cfg(const struct vperfctr_control *c, const struct vstate *st,
		     struct vcfg *cfg)
{
	const struct perfctr_cpu_control *cc = &c->cpu_control;
	unsigned int i;
	int rc;

	/* Only the header: the counters' entries are all written below. */
	memset(cfg, 0, offsetof(struct vcfg, attr));
	if (cc->nractrs > N || cc->nrictrs > N || cc->nractrs + cc->nrictrs > N) {
		pr_warn("vperfctr: %u + %u counters, at most %u\n", cc->nractrs,
			cc->nrictrs, N);
		return -EINVAL;
	}
	cfg->tsc = cc->tsc_on != 0;
	cfg->nra = cc->nractrs;
	cfg->nri = cc->nrictrs;
	cfg->n = cfg->nra + cfg->nri;
	if (cfg->nri) {
		if (c->si_signo <= 0 || c->si_signo >= _NSIG ||
		    c->si_signo == SIGKILL || c->si_signo == SIGSTOP) {
			pr_warn("vperfctr: i-mode counters need a signal, not %d\n",
				c->si_signo);
			return -EINVAL;
		}
		cfg->signo = c->si_signo;
	}
	for (i = 0; i < cfg->n; i++) {
		bool imode = i >= cfg->nra;

		cfg->period[i] = 0;
		rc = translate_counter(c, i, imode, st, &cfg->attr[i]);
		if (rc < 0)
			return rc;
		if (!imode)
			continue;
		if (cc->ireset[i] < 0)
			cfg->period[i] = (uint64_t)(-(int64_t)cc->ireset[i]);
		else if (cc->ireset[i] == 0 && cfg->attr[i].sample_period)
			cfg->period[i] = cfg->attr[i].sample_period;
		else {
			pr_warn("vperfctr: i-mode counter %u: ireset %d, a negative "
				"(re)start value is needed\n", i, cc->ireset[i]);
			return -EINVAL;
		}
		cfg->attr[i].sample_period = cfg->period[i];
	}
	return 0;
}

static bool cfg_same(const struct vcfg *a, const struct vcfg *b)
{
	return a->tsc == b->tsc && a->nra == b->nra && a->nri == b->nri &&
	       a->signo == b->signo &&
	       !memcmp(a->attr, b->attr, a->n * sizeof(a->attr[0])) &&
	       !memcmp(a->period, b->period, a->n * sizeof(a->period[0]));
}

/* ------------------------------------------------------------------ */
/* The events. */

struct vgroup {
	struct pc_engine *eng;
	int leader_fd;
	int fd[N];
	volatile struct perf_event_mmap_page *page[N];
	uint64_t read_format;
	size_t read_bytes;
	bool single;
	unsigned int first;
	struct pc_ovf *ovf;
	bool no_user_read;
};

static void group_clear(struct vgroup *g)
{
	unsigned int i;

	memset(g, 0, sizeof(*g));
	g->leader_fd = -1;
	for (i = 0; i < N; i++)
		g->fd[i] = -1;
}

static void group_close(struct vgroup *g)
{
	pc_ovf__delete(g->ovf);
	pc_engine__delete(g->eng);
	group_clear(g);
}

/* The engine of @cfg's events on thread @tid, opened. */
static int engine_open(const struct vcfg *cfg, pid_t tid, bool single,
		       struct pc_engine **out)
{
	struct perfctr_target *target = perfctr_target__new_thread(tid);
	struct perf_event_attr tsc, attr;
	struct pc_engine_event ev;
	struct pc_engine *eng;
	unsigned int i;
	int rc;

	*out = NULL;
	if (!target)
		return -errno;
	eng = pc_engine__new(target);
	rc = eng ? 0 : -errno;
	perfctr_target__delete(target);
	if (rc < 0)
		return rc;
	memset(&ev, 0, sizeof(ev));
	if (cfg->tsc) {
		rc = tsc_attr(&tsc);
		if (rc < 0) {
			pr_warn("vperfctr: no per-thread TSC here (the msr PMU's "
				"tsc event is missing)\n");
			goto fail;
		}
		tsc.read_format = READ_FORMAT;
		ev.attr = &tsc;
		rc = pc_engine__add(eng, &ev);
		if (rc < 0)
			goto fail;
	}
	for (i = 0; i < cfg->n; i++) {
		attr = cfg->attr[i];
		if (single)
			attr.read_format = SINGLE_FORMAT;
		ev.attr = &attr;
		rc = pc_engine__add(eng, &ev);
		if (rc < 0)
			goto fail;
	}
	rc = pc_engine__open(eng, PC_ENGINE_STRICT | PC_ENGINE_MMAP);
	if (rc < 0) {
		pr_warn("vperfctr: cannot open %s%u counter%s for thread %d: %s\n",
			cfg->tsc ? "the TSC and " : "", cfg->n,
			cfg->n == 1 ? "" : "s", (int)tid, strerror(-rc));
		goto fail;
	}
	*out = eng;
	return 0;
fail:
	pc_engine__delete(eng);
	return rc;
}

static int group_open(const struct vcfg *cfg, pid_t tid, struct vgroup *g)
{
	unsigned int i;
	int rc;

	group_clear(g);
	g->single = !cfg->tsc && cfg->n == 1 && !cfg->nri;
	g->first = cfg->tsc ? 1 : 0;
	g->read_format = g->single ? SINGLE_FORMAT : READ_FORMAT;
	g->read_bytes = pc_readfmt_size(g->read_format, g->first + cfg->n);
	rc = engine_open(cfg, tid, g->single, &g->eng);
	if (rc < 0)
		return rc;
	g->leader_fd = pc_engine__leader_fd(g->eng, 0, 0);
	for (i = 0; i < cfg->n; i++) {
		const struct pc_slot *slot =
			pc_engine__slot(g->eng, g->first + i, 0);

		g->fd[i] = slot->fd;
		/* The engine maps no page where one can never be read
		 * (software, tracepoint and breakpoint counters: fastread.h
		 * says why); vperfctr_read_fast() then reads with read(2). */
		g->page[i] = slot->page;
		if (!g->page[i])
			g->no_user_read = true;
	}
	if (cfg->nri) {
		struct pc_ovf_counter oc[N];
		int suspend[N];
		struct pc_ovf_desc d;

		memset(&d, 0, sizeof(d));
		for (i = 0; i < cfg->n; i++) {
			oc[i].fd = g->fd[i];
			oc[i].period = cfg->period[i];
			oc[i].value_pos = (unsigned int)
				pc_readfmt_value_word(g->read_format, g->first + i);
			suspend[i] = g->fd[i];
		}
		d.read_fd = g->leader_fd;
		d.read_words = (unsigned int)(g->read_bytes / sizeof(uint64_t));
		d.nr_counters = cfg->n;
		d.counters = oc;
		d.signo = cfg->signo;
		d.tid = tid;
		/* The TSC keeps counting while the counters are suspended. */
		d.suspend_fds = cfg->tsc ? suspend : &g->leader_fd;
		d.nr_suspend = cfg->tsc ? cfg->n : 1;
		d.kick_leader = cfg->tsc;
		d.chain = true;
		g->ovf = pc_ovf__new(&d);
		if (!g->ovf) {
			rc = -errno;
			pr_warn("vperfctr: cannot route overflow signal %d to "
				"thread %d: %s\n", cfg->signo, (int)tid,
				strerror(errno));
			group_close(g);
			return rc;
		}
	}
	return 0;
}

static void state_take_group(struct vstate *st, struct vgroup *g)
{
	unsigned int i;

	st->eng = g->eng;
	st->leader_fd = g->leader_fd;
	st->read_format = g->read_format;
	st->read_bytes = g->read_bytes;
	st->single = g->single;
	st->first = g->first;
	st->no_user_read = g->no_user_read;
	for (i = 0; i < N; i++) {
		st->fd[i] = g->fd[i];
		st->page[i] = g->page[i];
	}
	st->ovf = g->ovf;
}

static void state_close_events(struct vstate *st)
{
	struct vgroup g;

	if (!st->open)
		return;
	pc_ovf__delete(st->ovf);
	pc_engine__delete(st->eng);
	group_clear(&g);
	state_take_group(st, &g);
	st->open = false;
}

/* The leader's answer; async-signal-safe (nothing of the engine's is
 * touched but the fd).  @ent has room for the TSC and N counters. */
static int group_read(const struct vstate *st, struct pc_readfmt *head,
		      struct pc_readfmt_entry *ent)
{
	uint64_t buf[MAX_READ_WORDS];
	ssize_t n = read(st->leader_fd, buf, st->read_bytes);
	int nr;

	if (n < 0)
		return -errno;
	nr = pc_readfmt_decode(st->read_format, buf, (size_t)n, head, ent,
			       N + 1);
	if (nr < 0 || (unsigned int)nr != st->first + st->cfg.n)
		return pc_err(EIO);
	return 0;
}

/* The sums from a group answer (@ent may be NULL when nothing is open). */
static void sums_from(const struct vstate *st,
		      const struct pc_readfmt_entry *ent,
		      struct perfctr_sum_ctrs *sum)
{
	unsigned int i, n = st->open && ent ? st->cfg.n : 0;

	for (i = 0; i < n; i++)
		sum->pmc[i] = st->base[i] + ent[st->first + i].value;
	if (n < N)
		copy_fn(&sum->pmc[n], &st->stale[n], (N - n) * sizeof(sum->pmc[0]));
	if (!st->attached)
		sum->tsc = st->tsc_final;
	else if (st->tsc_active && st->open && ent)
		sum->tsc = st->tsc_base + ent[0].value;
	else
		sum->tsc = 0;
}

static int sample(const struct vstate *st, struct perfctr_sum_ctrs *sum)
{
	struct pc_readfmt_entry ent[N + 1];
	struct pc_readfmt head;
	int rc;

	if (!st->open) {
		sums_from(st, NULL, sum);
		return 0;
	}
	rc = group_read(st, &head, ent);
	if (rc < 0)
		return rc;
	sums_from(st, ent, sum);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The API. */

static void state_free(struct vstate *st)
{
	unsigned int i;

	state_close_events(st);
	for (i = 0; i < N; i++) {
		free(st->event_copy[i]);
		free(st->cfg_spec[i]);
	}
	pthread_mutex_destroy(&st->lock);
	free(st);
}

static void detach_locked(struct vstate *st);

/* A handle on thread @tid itself, not on its id; -1 when /proc cannot
 * say (then a reused id goes unnoticed). */
static int thread_dir_open(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", (int)tid);
	return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* The state's thread has exited (its id may name another thread now). */
static bool thread_gone(const struct vstate *st)
{
	return st->proc_fd >= 0 && faccessat(st->proc_fd, "stat", F_OK, 0) < 0 &&
	       (errno == ESRCH || errno == ENOENT);
}

struct vperfctr *vperfctr_open(pid_t tid, int creat)
{
	struct vperfctr *h;
	struct vstate *st;
	unsigned int i;

	if (tid < 0) {
		errno = ESRCH;
		return NULL;
	}
	if (tid == 0)
		tid = pc_self_tid();
	else if (kill(tid, 0) < 0 && errno == ESRCH)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	pthread_mutex_lock(&registry_lock);
	for (st = registry; st; st = st->next)
		if (st->tid == tid)
			break;
	if (st && thread_gone(st)) {
		/* The state's thread exited and its id now names another: the
		 * old state is detached, as its thread is gone. */
		pthread_mutex_lock(&st->lock);
		detach_locked(st);
		pthread_mutex_unlock(&st->lock);
		if (!st->refs)
			state_free(st);
		st = NULL;
	}
	if (st && creat) {
		pthread_mutex_unlock(&registry_lock);
		free(h);
		errno = EEXIST;
		return NULL;
	}
	if (!st && !creat) {
		pthread_mutex_unlock(&registry_lock);
		free(h);
		errno = ENOENT;
		return NULL;
	}
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st) {
			pthread_mutex_unlock(&registry_lock);
			free(h);
			errno = ENOMEM;
			return NULL;
		}
		pthread_mutex_init(&st->lock, NULL);
		st->tid = tid;
		st->proc_fd = thread_dir_open(tid);
		st->attached = true;
		st->leader_fd = -1;
		for (i = 0; i < N; i++)
			st->fd[i] = -1;
		st->control.sz = sizeof(st->control);
		st->next = registry;
		registry = st;
	}
	st->refs++;
	pthread_mutex_unlock(&registry_lock);
	h->st = st;
	return h;
}

static void free_copies(char **copies, unsigned int made)
{
	while (made) {
		unsigned int i = (unsigned int)__builtin_ctz(made);

		free(copies[i]);
		made &= made - 1;
	}
}


/* Copies of the control's event strings that the state does not hold
 * yet, made before anything changes (and before counting starts: no
 * allocation inside the counted window).  Bit i of the result is set
 * where copies[i] was made; elsewhere the state's copy is the same string
 * and copies[i] is not set. */
static int copy_events(const struct vstate *st, const struct vperfctr_control *c,
		       char **copies, unsigned int *made)
{
	unsigned int i, n = c->cpu_control.nractrs + c->cpu_control.nrictrs;

	*made = 0;
	if (!PC_OPTS_HAS(c, event))
		return 0;
	for (i = 0; i < n && i < N; i++) {
		if (!c->event[i])
			continue;
		if (st->event_copy[i] && !strcmp(st->event_copy[i], c->event[i]))
			continue;
		copies[i] = strdup(c->event[i]);
		if (!copies[i]) {
			free_copies(copies, *made);
			*made = 0;
			return -ENOMEM;
		}
		*made |= 1u << i;
	}
	return 0;
}

/* Install the control as the one in force.  The state's string copies
 * are kept past a stop, so a restart with the same names allocates
 * nothing.  Takes the copies of @made. */
static void keep_control(struct vstate *st, const struct vperfctr_control *c,
			 char **copies, unsigned int made)
{
	size_t sz = c->sz < sizeof(st->control) ? c->sz : sizeof(st->control);
	unsigned int i, n = c->cpu_control.nractrs + c->cpu_control.nrictrs;
	bool has_event = PC_OPTS_HAS(c, event), has_attr = PC_OPTS_HAS(c, attr);

	if (n > N)
		n = N;
	copy_fn(&st->control, c, sz);
	if (sz < sizeof(st->control))
		clear_fn((char *)&st->control + sz, 0, sizeof(st->control) - sz);
	st->control.sz = sizeof(st->control);
	for (i = 0; i < n; i++) {
		if (made & (1u << i)) {
			free(st->event_copy[i]);
			st->event_copy[i] = copies[i];
		}
		st->control.event[i] = has_event && c->event[i] ?
				       st->event_copy[i] : NULL;
		st->control.attr[i] = NULL;
		if (has_attr && c->attr[i]) {
			st->attr_copy[i] = st->cfg.attr[i];
			st->control.attr[i] = &st->attr_copy[i];
		}
	}
	if (n < N) {
		clear_fn(&st->control.event[n], 0, (N - n) * sizeof(st->control.event[0]));
		clear_fn(&st->control.attr[n], 0, (N - n) * sizeof(st->control.attr[0]));
	}
}

/* The control that opened the events, again (preserve aside)?  *by_names
 * tells whether it chooses every counter by its event name (no attr). */
static bool same_as_start(const struct vstate *st, const struct vperfctr_control *c,
			  bool *by_names)
{
	const struct vperfctr_control *s = &st->start_ctl;
	unsigned int i, n;

	*by_names = true;

	if (!st->open || c->sz != sizeof(*c) || c->si_signo != s->si_signo ||
	    memcmp(&c->cpu_control, &s->cpu_control, sizeof(c->cpu_control)))
		return false;
	n = c->cpu_control.nractrs + c->cpu_control.nrictrs;
	if (n > N)
		return false;
	for (i = 0; i < n; i++) {
		if (!c->attr[i] != !s->attr[i])
			return false;
		if (c->attr[i]) {
			*by_names = false;
			if (memcmp(c->attr[i], s->attr[i], sizeof(*c->attr[i])))
				return false;
			continue;
		}
		if (!c->event[i] != !s->event[i])
			return false;
		if (c->event[i] && strcmp(c->event[i], s->event[i]))
			return false;
	}
	return true;
}

static void remember_start(struct vstate *st, const struct vperfctr_control *c)
{
	unsigned int i;

	memset(&st->start_ctl, 0, sizeof(st->start_ctl));
	memcpy(&st->start_ctl, c, c->sz < sizeof(*c) ? c->sz : sizeof(*c));
	st->start_ctl.sz = 0;	/* a smaller caller's struct never matches */
	if (c->sz == sizeof(*c))
		st->start_ctl.sz = sizeof(*c);
	for (i = 0; i < N; i++) {
		st->start_ctl.event[i] = st->cfg_spec[i];
		st->start_ctl.attr[i] = NULL;
		if (i < st->cfg.n && PC_OPTS_HAS(c, attr) && c->attr[i]) {
			st->start_attr[i] = *c->attr[i];
			st->start_ctl.attr[i] = &st->start_attr[i];
		}
	}
}

/* Make `control` the control in force after a restart by names: what
 * keep_control() would have kept of it (st->lock held). */
static void control_from_start(struct vstate *st)
{
	unsigned int i;

	copy_fn(&st->control, &st->start_ctl, sizeof(st->control));
	st->control.sz = sizeof(st->control);
	st->control.preserve = st->start_preserve;
	for (i = 0; i < N; i++) {
		st->control.event[i] = i < st->cfg.n && st->start_ctl.event[i] ?
				       st->event_copy[i] : NULL;
		st->control.attr[i] = NULL;
	}
	st->control_is_start = false;
}

/* Step 3 of a control of the events open: zeroed, their sampling periods set
 * again, overflow signals re-armed (st->lock held).  Return 0 or a
 * negative errno. */
static int restart_events(struct vstate *st)
{
	unsigned int i;
	int rc;

	if (st->ovf && pc_ovf__suspended(st->ovf) && st->cfg.tsc)
		for (i = 0; i < st->cfg.n; i++)
			sys_perf_enable(st->fd[i], false);
	rc = pc_engine__reset(st->eng);
	for (i = st->cfg.nra; !rc && i < st->cfg.n; i++)
		rc = sys_perf_period(st->fd[i], st->cfg.period[i]);
	if (rc < 0)
		return rc;
	if (st->ovf)
		pc_ovf__rearm(st->ovf);
	return 0;
}

/* Step 3 of a control of other events: @ncfg's group opened, then put in the
 * place of the old one, whose counters past the new ones keep their
 * sums (@old) for reads (st->lock held).  Return 0 or a negative errno,
 * the old events left as they were. */
static int reopen_events(struct vstate *st, const struct vcfg *ncfg,
			 const struct vperfctr_control *c,
			 const struct perfctr_sum_ctrs *old)
{
	struct vgroup g;
	unsigned int i;
	int rc = group_open(ncfg, st->tid, &g);

	if (rc < 0)
		return rc;
	for (i = ncfg->n; i < N; i++)
		st->stale[i] = old->pmc[i];
	state_close_events(st);
	state_take_group(st, &g);
	st->cfg = *ncfg;
	st->open = true;
	for (i = 0; i < N; i++) {
		free(st->cfg_spec[i]);
		st->cfg_spec[i] = i < ncfg->n && PC_OPTS_HAS(c, event) &&
				  c->event[i] ? strdup(c->event[i]) : NULL;
	}
	remember_start(st, c);
	return 0;
}

/* The control in force, as vperfctr_read() returns it, after @c: @c
 * with the event strings @copies (@made of them, now the state's), or,
 * on a restart by the opening control's names (@restart), that control
 * with @c's preserve mask, no copy made (st->lock held). */
static void set_control(struct vstate *st, const struct vperfctr_control *c,
			char **copies, unsigned int made, bool restart)
{
	if (restart) {
		st->control_is_start = true;
		st->start_preserve = c->preserve;
		return;
	}
	keep_control(st, c, copies, made);
	st->control_is_start = false;
}

/* Step 2 of a control: @old, the sums of the open events that the new
 * control @ncfg keeps (@keep: its preserve mask; @same: its events are
 * the open ones), sampled only where needed (st->lock held).  Return 0
 * or a negative errno. */
static int sums_kept(struct vstate *st, const struct vcfg *ncfg, bool same,
		     unsigned int keep, struct perfctr_sum_ctrs *old)
{
	bool empty = !ncfg->tsc && !ncfg->n;

	if (st->open && !empty &&
	    (!same || (ncfg->tsc && st->tsc_active) ||
	     (keep & ((1u << ncfg->n) - 1) & ((1u << st->cfg.n) - 1))))
		return sample(st, old);
	if (!same || keep)
		sums_from(st, NULL, old);	/* stale[] only */
	return 0;
}

/* Step 4: the new control's counters start from the sums it keeps of
 * @old, the others from zero (st->lock held). */
static void count_from(struct vstate *st, const struct vcfg *ncfg,
		       unsigned int keep, const struct perfctr_sum_ctrs *old)
{
	for (unsigned int i = 0; i < ncfg->n; i++)
		st->base[i] = (keep & (1u << i)) ? old->pmc[i] : 0;
	st->tsc_base = ncfg->tsc && st->tsc_active ? old->tsc : 0;
	st->nr_active = ncfg->n;
	st->tsc_active = ncfg->tsc;
}

int vperfctr_control(struct vperfctr *h, const struct vperfctr_control *c)
{
	struct vstate *st;
	struct perfctr_sum_ctrs old;
	struct vcfg cfg_buf;
	const struct vcfg *ncfg = &cfg_buf;
	char *copies[N];
	unsigned int made = 0;
	unsigned int keep;
	bool was_running, same, empty, reopened = false, by_names;
	int rc;

	if (!h || !c || c->sz < offsetof(struct vperfctr_control, event) ||
	    !pc_opts_valid(c, sizeof(*c)))
		return pc_err(EINVAL);
	st = h->st;
	pthread_mutex_lock(&st->lock);
	if (!st->attached) {
		rc = -ENXIO;
		goto unlock;
	}
	if (!c->cpu_control.tsc_on && !c->cpu_control.nractrs &&
	    !c->cpu_control.nrictrs) {
		/* A stop (nothing enabled): park, as below, without building
		 * or comparing a configuration; nothing to sample. */
		if (st->open && (st->nr_active || st->tsc_active))
			pc_engine__disable(st->eng);
		st->nr_active = 0;
		st->tsc_active = false;
		goto done;
	}
	same = same_as_start(st, c, &by_names);
	/* A restart whose strings the state holds already copies nothing
	 * (and compares them once, above). */
	if (!same || !st->copy_is_spec) {
		rc = copy_events(st, c, copies, &made);
		if (rc < 0)
			goto unlock;
	}
	if (made)
		st->copy_is_spec = false;
	if (same) {
		ncfg = &st->cfg;	/* a restart: nothing to translate */
	} else {
		rc = build_cfg(c, st, &cfg_buf);
		if (rc < 0)
			goto unlock;
		same = st->open && cfg_same(&st->cfg, &cfg_buf);
	}
	empty = !ncfg->tsc && !ncfg->n;
	was_running = st->open && (st->nr_active || st->tsc_active);
	keep = c->preserve;

	/* 1. Stop. */
	if (was_running)
		pc_engine__disable(st->eng);

	/* 2. Sample what the new control keeps. */
	rc = sums_kept(st, ncfg, same, keep, &old);
	if (rc < 0)
		goto restart_old;

	if (empty) {
		/* Park: the counters keep their (frozen) sums, the TSC's is
		 * reset; the events stay open for a cheap restart. */
		st->nr_active = 0;
		st->tsc_active = false;
		goto done;
	}

	/* 3. Restart the same events, or open the new ones. */
	rc = same ? restart_events(st) : reopen_events(st, ncfg, c, &old);
	if (rc < 0)
		goto restart_old;
	reopened = !same;
	count_from(st, ncfg, keep, &old);
	set_control(st, c, copies, made,
		    same && by_names && st->copy_is_spec && !made);
	made = 0;
	if (reopened)
		st->copy_is_spec = true;	/* both are c's strings now */
	rc = pc_engine__enable(st->eng);
	goto unlock;
done:
	set_control(st, c, copies, made, false);
	made = 0;
	rc = 0;
unlock:
	pthread_mutex_unlock(&st->lock);
	free_copies(copies, made);
	return rc < 0 ? pc_err(-rc) : 0;

restart_old:
	/* A failed control leaves the state as it was. */
	if (was_running)
		pc_engine__enable(st->eng);
	goto unlock;
}

int vperfctr_read(struct vperfctr *h, struct perfctr_sum_ctrs *sum,
		  struct vperfctr_control *control)
{
	struct vstate *st;
	int rc = 0;

	if (!h || (control && control->sz < sizeof(size_t)))
		return pc_err(EINVAL);
	st = h->st;
	pthread_mutex_lock(&st->lock);
	if (sum)
		rc = sample(st, sum);
	if (!rc && control) {
		size_t sz = control->sz < sizeof(st->control) ?
			    control->sz : sizeof(st->control);

		if (st->control_is_start)
			control_from_start(st);
		memcpy(control, &st->control, sz);
		control->sz = sz;
	}
	pthread_mutex_unlock(&st->lock);
	return rc < 0 ? pc_err(-rc) : 0;
}

/* User-space reads are possible for this caller now (the pages decide
 * the rest): the owner thread, counters only, every page mapped. */
static bool fast_possible(const struct vstate *st)
{
	return st->open && !st->no_user_read && !st->tsc_active &&
	       st->nr_active && st->attached && st->tid == pc_self_tid();
}

int vperfctr_read_fast(struct vperfctr *h, struct perfctr_sum_ctrs *sum)
{
	struct pc_page_value v[N];
	const struct vstate *st;
	unsigned int i;

	if (!h || !sum)
		return pc_err(EINVAL);
	st = h->st;
	if (fast_possible(st) &&
	    pc_fastread_pages((const volatile struct perf_event_mmap_page *const *)st->page,
			      st->cfg.n, false, v)) {
		for (i = 0; i < N; i++)
			sum->pmc[i] = i < st->cfg.n ? st->base[i] + v[i].value
						    : st->stale[i];
		sum->tsc = 0;
		return 1;
	}
	return sample(st, sum);
}

int vperfctr_read_pmc(struct vperfctr *h, unsigned int i, uint64_t *value)
{
	struct perfctr_sum_ctrs sum;
	struct pc_page_value v;
	const struct vstate *st;
	int rc;

	if (!h || !value || i >= N)
		return pc_err(EINVAL);
	st = h->st;
	if (i < st->cfg.n && fast_possible(st) &&
	    pc_fastread_page(st->page[i], false, &v)) {
		*value = st->base[i] + v.value;
		return 1;
	}
	rc = sample(st, &sum);
	if (rc < 0)
		return rc;
	*value = sum.pmc[i];
	return 0;
}

int vperfctr_read_counts(struct vperfctr *h, struct perfctr_count *counts,
			 unsigned int nr)
{
	struct pc_page_value v[N];
	struct pc_readfmt_entry ent[N + 1];
	struct pc_readfmt head;
	const struct vstate *st;
	unsigned int i, n;
	bool fast;
	int rc;

	if (!h || (!counts && nr))
		return pc_err(EINVAL);
	st = h->st;
	if (!st->open || !st->attached)
		return 0;
	n = nr < st->cfg.n ? nr : st->cfg.n;
	if (!n)
		return 0;
	fast = fast_possible(st) &&
	       pc_fastread_pages((const volatile struct perf_event_mmap_page *const *)st->page,
				 st->cfg.n, true, v);
	for (i = 0; fast && i < n; i++)
		fast = v[i].times;
	if (!fast) {
		rc = group_read(st, &head, ent);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < n; i++) {
		struct perfctr_count *c = &counts[i];

		memset(c, 0, sizeof(*c));
		if (fast) {
			c->value = st->base[i] + v[i].value;
			c->time_enabled = v[i].time_enabled;
			c->time_running = v[i].time_running;
		} else {
			c->value = st->base[i] + ent[st->first + i].value;
			c->time_enabled = head.time_enabled;
			c->time_running = head.time_running;
		}
		c->status = c->time_running ? PERFCTR_COUNT_OK
					    : PERFCTR_COUNT_NOT_COUNTED;
	}
	return (int)n;
}

/* Stop, sample, close, detach; registry_lock and st->lock held. */
static void detach_locked(struct vstate *st)
{
	struct perfctr_sum_ctrs sum;
	struct vstate **pp;
	unsigned int i;

	if (!st->attached)
		return;
	if (st->open)
		pc_engine__disable(st->eng);
	if (sample(st, &sum) < 0)
		sums_from(st, NULL, &sum);
	for (i = 0; i < N; i++)
		st->stale[i] = sum.pmc[i];
	st->tsc_final = sum.tsc;
	state_close_events(st);
	st->nr_active = 0;
	st->tsc_active = false;
	st->attached = false;
	if (st->proc_fd >= 0)
		close(st->proc_fd);
	st->proc_fd = -1;
	for (pp = &registry; *pp; pp = &(*pp)->next)
		if (*pp == st) {
			*pp = st->next;
			break;
		}
}

int vperfctr_unlink(struct vperfctr *h)
{
	struct vstate *st;

	if (!h)
		return pc_err(EINVAL);
	st = h->st;
	pthread_mutex_lock(&registry_lock);
	pthread_mutex_lock(&st->lock);
	detach_locked(st);
	pthread_mutex_unlock(&st->lock);
	pthread_mutex_unlock(&registry_lock);
	return 0;
}

int vperfctr_iresume(struct vperfctr *h)
{
	struct vstate *st;

	if (!h)
		return pc_err(EINVAL);
	st = h->st;
	if (!st->ovf || !st->nr_active)
		return pc_err(EINVAL);
	return pc_ovf__resume(st->ovf);
}

unsigned int vperfctr_ovf_mask(const struct vperfctr *h)
{
	return h ? (unsigned int)pc_ovf__mask(h->st->ovf) : 0;
}

unsigned int vperfctr_si_pmc_ovf_mask(const siginfo_t *si)
{
	struct pc_ovf *ovf = NULL;

	pc_ovf__handle(si, &ovf);
	return ovf ? (unsigned int)pc_ovf__mask(ovf) : 0;
}

void vperfctr_close(struct vperfctr *h)
{
	struct vstate *st;
	bool gone;

	if (!h)
		return;
	st = h->st;
	pthread_mutex_lock(&registry_lock);
	gone = --st->refs == 0 && !st->attached;
	pthread_mutex_unlock(&registry_lock);
	if (gone)
		state_free(st);
	free(h);
}
