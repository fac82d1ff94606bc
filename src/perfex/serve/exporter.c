/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex serve's exporter: one counting session per scope (the whole
 * machine, and each cgroup counted), one unit per CPU, read at every
 * scrape and written in the Prometheus text format or OpenMetrics.
 *
 * Cgroups under a followed root are found by walking the cgroup2 tree; an
 * inotify watch on each directory of it wakes the main loop when one is
 * made or removed, so a new cgroup is counted within milliseconds of its
 * mkdir (not from the next scrape on), and a removed one stops being
 * served; each event changes its cgroup alone, so a node's churn costs a
 * walk of the cgroups that change, not of the tree.  A cgroup counts only
 * from the moment its session is attached: what its tasks did before is
 * not in its counts.  cgroup-depth, cgroup-include/-exclude and
 * max-series bound what is counted.
 *
 * Cgroups are counted through the library's BPF counters where the
 * program loads (one counter per CPU and event, a BPF program at each
 * context switch adding their progress to the cgroups): the kernel's
 * cgroup events would be switched out and in at every switch between
 * cgroups, a cost on the services that switch most.  Where BPF cannot load
 * (no BTF, no CAP_BPF + CAP_PERFMON) or is turned off, cgroup events count
 * instead, as the log and perfex_cgroup_counting_mode say.
 *
 * The label text of every series is made once, when a scope is attached,
 * so a scrape is reads plus copies: 2 CPUs x 100 cgroups x 4 events is
 * 3,200 lines (bench/serve-scrape measures it), 5,000 cgroups 160,000
 * (bench/serve-scale); the BPF counters are read for all cgroups at once
 * (a freeze).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <perfctr/perfctr.h>

#include "perfex.h"
#include "serve.h"
#include "text.h"

/* Cgroup trees deeper than this are not followed further (a loop guard;
 * real hierarchies are a handful of levels). */
#define MAX_DEPTH 32

/* Cgroups whose fallback to cgroup events is logged one by one; past
 * this, perfex_cgroup_counting_mode alone counts them. */
#define MAX_FALLBACK_LOGS 10

struct scope {
	char *cgroup;		/* "/a/b"; NULL: the whole machine */
	struct perfctr_target *target;
	struct perfctr_session *session;
	bool by_bpf;		/* counted through the BPF counters */
	size_t nr_units;
	char **series;		/* [event * nr_units + unit]: label text */
	size_t *series_len;	/* and its length */
	/* The counts of the last read, as the series: a scrape's four
	 * families format them without asking the session four times. */
	struct perfctr_count *counts;
	bool wanted;		/* seen by the rescan in progress */
};

struct unavailable {
	char *event;
	char *reason;
};

struct serve_exporter {
	pthread_mutex_t lock;
	struct serve_config *cfg;
	struct perfctr_evlist *events;	/* the events that parsed */
	struct unavailable *unavail;
	size_t nr_unavail;
	struct scope **scopes;		/* [0]: the whole machine */
	size_t nr_scopes;
	/* The cgroup scopes by path (open addressing, a power of 2 slots,
	 * at most half full), so that a rescan of thousands of cgroups
	 * finds each in O(1); and the cgroups a rescan found new. */
	struct scope **index;
	size_t index_size;
	char **pending;
	size_t nr_pending;
	/* max-series: the series of the cgroups left out now, and the
	 * cgroups, as logged last. */
	uint64_t dropped_series;
	size_t dropped_cgroups, logged_dropped;
	char mount[PATH_MAX];		/* cgroup2 mount, "" without */
	char *extra;			/* ",name=\"value\"" of cfg->labels */
	int inotify_fd;
	/* The cgroup ("/a/b", "/" for the mount) of each inotify watch, by
	 * its wd: an event names the directory it happened in by that. */
	char **wd_path;
	size_t nr_wd_path;
	bool fds_stale;			/* open_fds to count at the next scrape */
	/* The BPF counters of the cgroups, or NULL (then bpf_reason says
	 * why not, "" when no cgroup is counted). */
	struct perfctr_bpf_counters *bpf;
	char bpf_reason[160];
	uint64_t cgroup_errors, read_errors, reloads_ok, reloads_failed;
	size_t fallback_logs;		/* cgroups logged as fallen back */
	uint64_t profiles[SERVE_PROFILE_NR_RESULTS];
	unsigned int profiles_running;
	long open_fds;			/* as of the last change of scopes */
	bool last_reload_ok;
};

/* ---------------------------------------------------------------- log */

void serve_log(const char *fmt, ...)
{
	va_list ap;

	fputs("perfex serve: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ------------------------------------------------------------- events */

/*
 * What a parse error means for a configured event: the library's
 * "cannot count here" errnos (perfctr_errno_unsupported()) but two, which
 * at parse time say the text is wrong (an unknown name, bad syntax), a
 * mistake of the configuration; the others (no such PMU on this machine)
 * leave the event out and serve the rest, so one configuration serves
 * unlike nodes.
 */
static bool lacking(int errnum)
{
	return errnum != ENOENT && errnum != EINVAL &&
	       perfctr_errno_unsupported(errnum);
}

static void note_unavailable(struct serve_exporter *ex, const char *event,
			     const char *reason)
{
	struct unavailable *n;

	for (size_t i = 0; i < ex->nr_unavail; i++)
		if (!strcmp(ex->unavail[i].event, event) &&
		    !strcmp(ex->unavail[i].reason, reason))
			return;
	n = realloc(ex->unavail, (ex->nr_unavail + 1) * sizeof(*n));
	if (!n)
		return;
	ex->unavail = n;
	n += ex->nr_unavail;
	n->event = strdup(event);
	n->reason = strdup(reason);
	if (!n->event || !n->reason) {
		free(n->event);
		free(n->reason);
		return;
	}
	ex->nr_unavail++;
	serve_log("event '%s' cannot count: %s (reported in "
		  "perfex_event_unavailable; the others are served)",
		  event, reason);
}

static void free_unavailable(struct unavailable *u, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(u[i].event);
		free(u[i].reason);
	}
	free(u);
}

/* The events perfex stat counts by default, one at a time so that a
 * machine without cycles still counts the rest. */
static const char *const default_events[] = {
	"cycles", "instructions", "task-clock", "context-switches",
	"cpu-migrations", "page-faults",
};

static int parse_one(struct serve_exporter *ex, const struct serve_config *cfg,
		     const char *spec, size_t line)
{
	struct perfctr_parse_error err = { .sz = sizeof(err), .column = -1 };
	int ret = perfctr_evlist__parse(ex->events, spec, NULL, &err);
	int errnum = err.errnum ? err.errnum : -ret;

	if (ret >= 0)
		return -1;
	if (lacking(errnum)) {
		note_unavailable(ex, spec, err.message[0] ? err.message :
				 strerror(errnum));
		return -1;
	}
	if (line) {
		char where[PATH_MAX + 32];

		snprintf(where, sizeof(where), "config '%s' line %zu",
			 cfg->file, line);
		return perfex_event_error_at(where, spec, &err, ret);
	}
	return perfex_event_error(spec, &err, ret);
}

static int parse_events(struct serve_exporter *ex, const struct serve_config *cfg)
{
	int ret;

	ex->events = perfctr_evlist__new();
	if (!ex->events)
		return PERFEX_EXIT_INTERNAL;
	if (!cfg->nr_events) {
		for (size_t i = 0; i < sizeof(default_events) /
				       sizeof(default_events[0]); i++)
			if ((ret = parse_one(ex, cfg, default_events[i], 0)) >= 0)
				return ret;
		return -1;
	}
	for (size_t i = 0; i < cfg->nr_events; i++)
		if ((ret = parse_one(ex, cfg, cfg->events[i],
				     cfg->event_lines[i])) >= 0)
			return ret;
	return -1;
}

/* ------------------------------------------------------------- scopes */

static void scope_delete(struct scope *s, size_t nr_events)
{
	if (!s)
		return;
	perfctr_session__delete(s->session);
	perfctr_target__delete(s->target);
	if (s->series)
		for (size_t i = 0; i < nr_events * s->nr_units; i++)
			free(s->series[i]);
	free(s->series);
	free(s->series_len);
	free(s->counts);
	free(s->cgroup);
	free(s);
}

static size_t nr_events(const struct serve_exporter *ex)
{
	return perfctr_evlist__nr_events(ex->events);
}

/* The label text of each (event, unit) of @s. */
static int make_series(struct serve_exporter *ex, struct scope *s)
{
	size_t n = nr_events(ex);

	s->series = calloc(n * s->nr_units + 1, sizeof(*s->series));
	s->series_len = calloc(n * s->nr_units + 1, sizeof(*s->series_len));
	s->counts = calloc(n * s->nr_units + 1, sizeof(*s->counts));
	if (!s->series || !s->series_len || !s->counts)
		return -ENOMEM;
	for (size_t e = 0; e < n; e++) {
		for (size_t u = 0; u < s->nr_units; u++) {
			struct serve_text t;
			bool gz;
			int cpu = -1;

			perfctr_session__unit(s->session, u, NULL, &cpu);
			serve_text_init(&t, false);
			if (s->cgroup) {
				serve_text_puts(&t, "cgroup=");
				serve_text_quoted(&t, s->cgroup);
				serve_text_puts(&t, ",");
			}
			serve_text_printf(&t, "cpu=\"%d\",event=", cpu);
			serve_text_quoted(&t, perfctr_session__event_name(s->session, e));
			if (ex->extra)
				serve_text_puts(&t, ex->extra);
			s->series[e * s->nr_units + u] =
				serve_text_finish(&t, &s->series_len[e * s->nr_units + u], &gz);
			if (!s->series[e * s->nr_units + u])
				return -ENOMEM;
		}
	}
	return 0;
}

static struct scope *scope_new(struct serve_exporter *ex, const char *cgroup)
{
	const struct perfctr_session_opts opts = {
		.sz = sizeof(opts),
		.flags = PERFCTR_SESSION_ENABLE_ON_ATTACH,
	};
	struct scope *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	if (cgroup) {
		PERFCTR_OPTS(perfctr_cgroup_opts, copts, .bpf = ex->bpf);

		s->cgroup = strdup(cgroup);
		if (!s->cgroup)
			goto fail_errno;
		s->target = perfctr_target__new_cgroup_opts(cgroup, ex->cfg->cpus,
							    &copts);
	} else {
		s->target = perfctr_target__new_cpus(ex->cfg->cpus);
	}
	if (!s->target)
		goto fail_errno;
	s->session = perfctr_session__new(&opts);
	if (!s->session)
		goto fail_errno;
	err = perfctr_session__add_evlist(s->session, ex->events);
	if (err < 0)
		goto fail;
	err = perfctr_session__attach(s->session, s->target);
	if (err < 0)
		goto fail;
	s->nr_units = perfctr_session__nr_units(s->session);
	s->by_bpf = perfctr_session__counts_by_bpf(s->session);
	if (cgroup && ex->bpf && !perfctr_bpf_counters__error(ex->bpf) &&
	    !s->by_bpf && ex->fallback_logs++ < MAX_FALLBACK_LOGS)
		serve_log("cgroup '%s' is counted with cgroup events, not "
			  "through the BPF counters (which refused it)%s",
			  cgroup, ex->fallback_logs == MAX_FALLBACK_LOGS ?
			  "; more are counted in perfex_cgroup_counting_mode, "
			  "not logged" : "");
	for (size_t e = 0; e < nr_events(ex); e++) {
		struct perfctr_count c;

		if (perfctr_session__count(s->session, e, &c) == 0 &&
		    c.status == PERFCTR_COUNT_NOT_SUPPORTED)
			note_unavailable(ex, perfctr_session__event_name(s->session, e),
					 perfex_unsupported_reason(c.errnum));
	}
	err = make_series(ex, s);
	if (err < 0)
		goto fail;
	return s;
fail_errno:
	err = -errno;
fail:
	scope_delete(s, nr_events(ex));
	errno = -err;
	return NULL;
}

/* ------------------------------------------------------ cgroup follow */

/* @path ("a/b", "/a/b" or absolute under the mount) as "/a/b". */
static char *normalise(const struct serve_exporter *ex, const char *path)
{
	size_t mlen = strlen(ex->mount), len;
	char *out;

	if (mlen && !strncmp(path, ex->mount, mlen) &&
	    (path[mlen] == '/' || !path[mlen]))
		path += mlen;
	while (*path == '/')
		path++;
	len = strlen(path);
	while (len && path[len - 1] == '/')
		len--;
	out = malloc(len + 2);
	if (!out)
		return NULL;
	out[0] = '/';
	memcpy(out + 1, path, len);
	out[len + 1] = '\0';
	return out;
}

static void watch(struct serve_exporter *ex, const char *full)
{
	const char *cgroup = full + strlen(ex->mount);
	int wd;

	if (ex->inotify_fd < 0)
		return;
	wd = inotify_add_watch(ex->inotify_fd, full,
			       IN_CREATE | IN_DELETE | IN_MOVED_FROM |
			       IN_MOVED_TO | IN_ONLYDIR);
	if (wd < 0)
		return;
	if ((size_t)wd >= ex->nr_wd_path) {
		size_t nr = ex->nr_wd_path ? ex->nr_wd_path : 64;
		char **n;

		while (nr <= (size_t)wd)
			nr *= 2;
		n = realloc(ex->wd_path, nr * sizeof(*n));
		if (!n)
			return;		/* its events make full rescans */
		memset(n + ex->nr_wd_path, 0,
		       (nr - ex->nr_wd_path) * sizeof(*n));
		ex->wd_path = n;
		ex->nr_wd_path = nr;
	}
	free(ex->wd_path[wd]);
	ex->wd_path[wd] = strdup(*cgroup ? cgroup : "/");
}

static void forget_watches(struct serve_exporter *ex)
{
	for (size_t i = 0; i < ex->nr_wd_path; i++)
		free(ex->wd_path[i]);
	free(ex->wd_path);
	ex->wd_path = NULL;
	ex->nr_wd_path = 0;
}

static size_t hash_path(const char *p)
{
	size_t h = 14695981039346656037ULL;	/* FNV-1a */

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

/* The index of the cgroup scopes made anew (after a rescan's changes). */
static void reindex(struct serve_exporter *ex)
{
	size_t size = 64;

	while (size < 2 * ex->nr_scopes)
		size *= 2;
	if (size != ex->index_size) {
		struct scope **n = calloc(size, sizeof(*n));

		if (!n) {		/* find_scope() then searches */
			free(ex->index);
			ex->index = NULL;
			ex->index_size = 0;
			return;
		}
		free(ex->index);
		ex->index = n;
		ex->index_size = size;
	} else {
		memset(ex->index, 0, size * sizeof(*ex->index));
	}
	for (size_t i = 1; i < ex->nr_scopes; i++) {
		size_t k = hash_path(ex->scopes[i]->cgroup) & (size - 1);

		while (ex->index[k])
			k = (k + 1) & (size - 1);
		ex->index[k] = ex->scopes[i];
	}
}

static struct scope *find_scope(struct serve_exporter *ex, const char *cgroup)
{
	if (!ex->index) {
		for (size_t i = 1; i < ex->nr_scopes; i++)
			if (!strcmp(ex->scopes[i]->cgroup, cgroup))
				return ex->scopes[i];
		return NULL;
	}
	for (size_t k = hash_path(cgroup) & (ex->index_size - 1); ex->index[k];
	     k = (k + 1) & (ex->index_size - 1))
		if (!strcmp(ex->index[k]->cgroup, cgroup))
			return ex->index[k];
	return NULL;
}

/* Whether a cgroup found under a root passes cgroup-include and
 * cgroup-exclude. */
static bool selected(const struct serve_config *cfg, const char *cgroup)
{
	bool in = !cfg->nr_includes;

	for (size_t i = 0; i < cfg->nr_excludes; i++)
		if (!fnmatch(cfg->excludes[i], cgroup, 0))
			return false;
	for (size_t i = 0; i < cfg->nr_includes && !in; i++)
		in = !fnmatch(cfg->includes[i], cgroup, 0);
	return in;
}

/* A cgroup the rescan found: kept if counted, else opened after the
 * sweep (so that the cgroups gone make room under max-series first). */
static void want(struct serve_exporter *ex, const char *cgroup)
{
	struct scope *s = find_scope(ex, cgroup);
	char **n;

	if (s) {
		s->wanted = true;
		return;
	}
	n = realloc(ex->pending, (ex->nr_pending + 1) * sizeof(*n));
	if (!n || !(n[ex->nr_pending] = strdup(cgroup))) {
		if (n)
			ex->pending = n;
		ex->cgroup_errors++;
		return;
	}
	ex->pending = n;
	ex->nr_pending++;
}

/* The series of the count families a scope of @units units serves. */
static uint64_t series_of(const struct serve_exporter *ex, size_t units)
{
	return 4 * (uint64_t)nr_events(ex) * units;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Open the cgroups the rescan found new, in the order of their paths (a
 * parent before its children), up to max-series. */
static void open_pending(struct serve_exporter *ex)
{
	uint64_t series = 0, per;
	struct scope **n;

	/* Sorted, a cgroup found twice (named and under a root, or under
	 * two roots) is opened once. */
	if (ex->nr_pending)
		qsort(ex->pending, ex->nr_pending, sizeof(*ex->pending),
		      cmp_path);

	/* A cgroup counts on the CPUs the machine's scope counts on. */
	per = series_of(ex, ex->scopes[0]->nr_units);
	for (size_t i = 0; i < ex->nr_scopes; i++)
		series += series_of(ex, ex->scopes[i]->nr_units);
	ex->dropped_series = 0;
	ex->dropped_cgroups = 0;
	for (size_t i = 0; i < ex->nr_pending; i++) {
		const char *cgroup = ex->pending[i];
		struct scope *s;

		if (i && !strcmp(cgroup, ex->pending[i - 1]))
			continue;
		if (ex->cfg->max_series && series + per > ex->cfg->max_series) {
			ex->dropped_series += per;
			ex->dropped_cgroups++;
			continue;
		}
		s = scope_new(ex, cgroup);
		if (!s) {
			/* Gone between the walk and the open: not an error. */
			if (errno != ENOENT) {
				ex->cgroup_errors++;
				serve_log("cannot count cgroup '%s': %s", cgroup,
					  strerror(errno));
			}
			continue;
		}
		n = realloc(ex->scopes, (ex->nr_scopes + 1) * sizeof(*n));
		if (!n) {
			scope_delete(s, nr_events(ex));
			ex->cgroup_errors++;
			continue;
		}
		ex->scopes = n;
		s->wanted = true;
		n[ex->nr_scopes++] = s;
		series += series_of(ex, s->nr_units);
	}
	for (size_t i = 0; i < ex->nr_pending; i++)
		free(ex->pending[i]);
	ex->nr_pending = 0;
	if (ex->dropped_cgroups != ex->logged_dropped) {
		serve_log("max-series %llu: %zu cgroups (%llu series) not "
			  "counted (perfex_series_dropped)",
			  ex->cfg->max_series, ex->dropped_cgroups,
			  (unsigned long long)ex->dropped_series);
		ex->logged_dropped = ex->dropped_cgroups;
	}
}

/* Watch the nearest existing ancestor of cgroup @full (a path under the
 * mount) that does not exist (yet), so that its making is seen. */
static void watch_ancestor(struct serve_exporter *ex, char *full)
{
	size_t mlen = strlen(ex->mount);
	struct stat st;
	char *slash;

	while (stat(full, &st) != 0 && (slash = strrchr(full, '/')) &&
	       slash >= full + mlen)
		*slash = '\0';
	if (!full[0])
		snprintf(full, PATH_MAX, "%s", ex->mount);
	watch(ex, full);
}

static void walk(struct serve_exporter *ex, const char *cgroup, int depth)
{
	char full[PATH_MAX];
	struct dirent *d;
	DIR *dir;

	if (snprintf(full, sizeof(full), "%s%s", ex->mount, cgroup) >=
	    (int)sizeof(full))
		return;
	dir = opendir(full);
	if (!dir) {
		if (!depth)
			watch_ancestor(ex, full);
		return;
	}
	watch(ex, full);
	/* A root's removal is an event of its parent's. */
	if (!depth && cgroup[1]) {
		char parent[PATH_MAX];
		char *slash;

		memcpy(parent, full, strlen(full) + 1);
		slash = strrchr(parent, '/');
		if (slash && slash > parent + strlen(ex->mount))
			*slash = '\0';
		else
			snprintf(parent, sizeof(parent), "%s", ex->mount);
		watch(ex, parent);
	}
	if (selected(ex->cfg, cgroup))
		want(ex, cgroup);
	while (depth < MAX_DEPTH &&
	       (!ex->cfg->has_depth || depth < (int)ex->cfg->depth) &&
	       (d = readdir(dir))) {
		char child[PATH_MAX];

		if (d->d_type != DT_DIR || d->d_name[0] == '.')
			continue;
		if (snprintf(child, sizeof(child), "%s%s%s", cgroup,
			     cgroup[1] ? "/" : "", d->d_name) >= (int)sizeof(child))
			continue;
		walk(ex, child, depth + 1);
	}
	closedir(dir);
}

/* A cgroup counted by name: counted while it exists; its parent (or the
 * nearest ancestor that exists) is watched for its making and removal. */
static void want_named(struct serve_exporter *ex, const char *cgroup)
{
	char full[PATH_MAX];
	struct stat st;
	char *slash;

	if (snprintf(full, sizeof(full), "%s%s", ex->mount, cgroup) >=
	    (int)sizeof(full))
		return;
	if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
		want(ex, cgroup);
		if ((slash = strrchr(full, '/')) && slash > full + strlen(ex->mount))
			*slash = '\0';
		else
			snprintf(full, sizeof(full), "%s", ex->mount);
	}
	watch_ancestor(ex, full);
}

static long open_fds(void);

static void rescan_locked(struct serve_exporter *ex)
{
	size_t kept = 1;

	if (!ex->mount[0] || !nr_events(ex)) {
		ex->fds_stale = true;
		return;
	}
	for (size_t i = 1; i < ex->nr_scopes; i++)
		ex->scopes[i]->wanted = false;
	for (size_t i = 0; i < ex->cfg->nr_cgroups; i++) {
		char *c = normalise(ex, ex->cfg->cgroups[i]);

		if (c)
			want_named(ex, c);
		free(c);
	}
	for (size_t i = 0; i < ex->cfg->nr_roots; i++) {
		char *c = normalise(ex, ex->cfg->roots[i]);

		if (c)
			walk(ex, c, 0);
		free(c);
	}
	for (size_t i = 1; i < ex->nr_scopes; i++) {
		if (ex->scopes[i]->wanted)
			ex->scopes[kept++] = ex->scopes[i];
		else
			scope_delete(ex->scopes[i], nr_events(ex));
	}
	ex->nr_scopes = kept;
	open_pending(ex);
	reindex(ex);
	ex->fds_stale = true;
}

/* The level of @cgroup below the followed root it is under, or -1. */
static int depth_under_root(const struct serve_exporter *ex,
			    const char *cgroup)
{
	for (size_t i = 0; i < ex->cfg->nr_roots; i++) {
		char *root = normalise(ex, ex->cfg->roots[i]);
		size_t len = root ? strlen(root) : 0;
		int depth = 0;

		/* The root "/" is the mount's: every cgroup is below it. */
		if (len == 1)
			len = 0;
		if (root && !strncmp(cgroup, root, len) && cgroup[len] == '/') {
			for (const char *p = cgroup + len; *p; p++)
				depth += *p == '/';
			free(root);
			return depth;
		}
		free(root);
	}
	return -1;
}

/* Whether @cgroup is a cgroup counted by name or an ancestor of one
 * (whose making or removal only a full rescan follows). */
static bool names_a_named(const struct serve_exporter *ex, const char *cgroup)
{
	size_t len = strlen(cgroup);

	for (size_t i = 0; i < ex->cfg->nr_cgroups; i++) {
		char *c = normalise(ex, ex->cfg->cgroups[i]);
		bool hit = c && !strncmp(c, cgroup, len) &&
			   (!c[len] || c[len] == '/');

		free(c);
		if (hit)
			return true;
	}
	return false;
}

/* Whether @cgroup is a followed root or an ancestor of one. */
static bool is_root_or_above(const struct serve_exporter *ex,
			     const char *cgroup)
{
	size_t len = strlen(cgroup);

	for (size_t i = 0; i < ex->cfg->nr_roots; i++) {
		char *r = normalise(ex, ex->cfg->roots[i]);
		bool hit = r && !strncmp(r, cgroup, len) &&
			   (!r[len] || r[len] == '/');

		free(r);
		if (hit)
			return true;
	}
	return false;
}

/* A cgroup made under a followed root: counted with what is below it
 * (made before its watch was set).  False when only a full rescan can
 * tell (not under a root, or a cgroup counted by name). */
static bool made(struct serve_exporter *ex, const char *cgroup)
{
	int depth = depth_under_root(ex, cgroup);

	if (names_a_named(ex, cgroup) || is_root_or_above(ex, cgroup))
		return false;
	if (depth < 0)
		return true;	/* a sibling of a root's: not ours */
	if (depth > MAX_DEPTH ||
	    (ex->cfg->has_depth && depth > (int)ex->cfg->depth))
		return true;
	walk(ex, cgroup, depth);
	return true;
}

/* A cgroup removed: its scope goes (a cgroup has no children when it is
 * removed). */
static bool removed(struct serve_exporter *ex, const char *cgroup)
{
	size_t kept = 1;

	if (names_a_named(ex, cgroup) || is_root_or_above(ex, cgroup))
		return false;
	for (size_t i = 1; i < ex->nr_scopes; i++) {
		struct scope *s = ex->scopes[i];
		size_t len = strlen(cgroup);

		if (!strncmp(s->cgroup, cgroup, len) &&
		    (!s->cgroup[len] || s->cgroup[len] == '/'))
			scope_delete(s, nr_events(ex));
		else
			ex->scopes[kept++] = s;
	}
	ex->nr_scopes = kept;
	return true;
}

/*
 * What the watches saw: a cgroup made or removed in a watched directory
 * under a followed root changes that cgroup alone (so a node making and
 * removing a thousand cgroups a minute costs a walk of each, not of the
 * tree each time); anything else (a move, a lost event, a cgroup counted
 * by name, the max-series cap, which decides among all) rescans the
 * tree.
 */
void serve_exporter_rescan(struct serve_exporter *ex)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool full = ex->inotify_fd < 0, changed = false;
	ssize_t n;

	pthread_mutex_lock(&ex->lock);
	full |= ex->cfg->max_series != 0;
	while (ex->inotify_fd >= 0 &&
	       (n = read(ex->inotify_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const void *)p;
			const char *dir = e->wd >= 0 &&
					  (size_t)e->wd < ex->nr_wd_path ?
					  ex->wd_path[e->wd] : NULL;
			char cgroup[PATH_MAX];

			p += sizeof(*e) + e->len;
			if (e->mask & IN_IGNORED) {
				/* A watched directory is gone: a root
				 * removed is watched for anew from its
				 * nearest ancestor by a rescan. */
				if (dir && !full && depth_under_root(ex, dir) < 0)
					full = true;
				if (dir) {
					free(ex->wd_path[e->wd]);
					ex->wd_path[e->wd] = NULL;
				}
				continue;
			}
			if (full)
				continue;
			if (!dir || !e->len || !(e->mask & IN_ISDIR) ||
			    !(e->mask & (IN_CREATE | IN_DELETE)) ||
			    snprintf(cgroup, sizeof(cgroup), "%s/%s",
				     strcmp(dir, "/") ? dir : "", e->name) >=
			    (int)sizeof(cgroup)) {
				full = true;
				continue;
			}
			full = !(e->mask & IN_CREATE ? made(ex, cgroup) :
				 removed(ex, cgroup));
			changed = true;
		}
	}
	if (full) {
		rescan_locked(ex);
	} else if (changed) {
		open_pending(ex);
		reindex(ex);
		ex->fds_stale = true;
	}
	pthread_mutex_unlock(&ex->lock);
}

int serve_exporter_watch_fd(const struct serve_exporter *ex)
{
	return ex->inotify_fd;
}

/* ------------------------------------------------------------- set up */

static void drop_scopes(struct serve_exporter *ex)
{
	for (size_t i = 0; i < ex->nr_scopes; i++)
		scope_delete(ex->scopes[i], nr_events(ex));
	free(ex->scopes);
	ex->scopes = NULL;
	ex->nr_scopes = 0;
	free(ex->index);
	ex->index = NULL;
	ex->index_size = 0;
}

static char *label_text(const struct serve_config *cfg)
{
	struct serve_text t;
	size_t len;
	bool gz;

	if (!cfg->nr_labels)
		return NULL;
	serve_text_init(&t, false);
	for (size_t i = 0; i < cfg->nr_labels; i++) {
		serve_text_printf(&t, ",%s=", cfg->labels[i].name);
		serve_text_quoted(&t, cfg->labels[i].value);
	}
	return serve_text_finish(&t, &len, &gz);
}

static int target_error(const char *what, int err)
{
	perfex_error("cannot count %s: %s", what, strerror(err));
	if (err == ENOMEDIUM) {
		perfex_cgroup2_hint();
		return PERFEX_EXIT_TARGET;
	}
	if (err == EACCES || err == EPERM)
		return perfex_permission_hints(0, false);
	if (err == EINVAL || err == ENODEV)
		return PERFEX_EXIT_TARGET;
	return PERFEX_EXIT_INTERNAL;
}

/*
 * The BPF counters for the cgroups of the running configuration: loaded
 * when it counts cgroups and does not turn them off, unloaded when it
 * does (no scope is attached then: called between the scopes' drop and
 * the rescan).  A failed load is said once in the log.
 */
static void bpf_setup(struct serve_exporter *ex)
{
	const struct serve_config *cfg = ex->cfg;
	bool want = (cfg->nr_cgroups || cfg->nr_roots) && nr_events(ex);
	int err;

	ex->bpf_reason[0] = '\0';
	ex->fallback_logs = 0;
	/* Made anew for each configuration: its program counts this one's
	 * events, and its maps are sized for them. */
	perfctr_bpf_counters__delete(ex->bpf);
	ex->bpf = NULL;
	if (!want || cfg->no_bpf) {
		if (want) {
			snprintf(ex->bpf_reason, sizeof(ex->bpf_reason),
				 "turned off (--no-bpf-counters or "
				 "bpf-counters no)");
			serve_log("cgroups are counted with cgroup events: "
				  "the BPF counters are %s", ex->bpf_reason);
		}
		return;
	}
	{
		/* No cap on the cgroups but the library's (65,536): its
		 * maps grow with the cgroups counted. */
		PERFCTR_OPTS(perfctr_bpf_counters_opts, o,
			     .max_events = nr_events(ex));

		ex->bpf = perfctr_bpf_counters__new(&o);
	}
	if (!ex->bpf) {
		snprintf(ex->bpf_reason, sizeof(ex->bpf_reason),
			 "cannot set up the BPF counters: %s", strerror(errno));
		serve_log("cgroups are counted with cgroup events: %s",
			  ex->bpf_reason);
		return;
	}
	err = perfctr_bpf_counters__error(ex->bpf);
	if (err) {
		snprintf(ex->bpf_reason, sizeof(ex->bpf_reason),
			 "the BPF program cannot load: %s%s",
			 strerror(-err), err == -EPERM ?
			 " (it needs CAP_BPF and CAP_PERFMON)" :
			 err == -EOPNOTSUPP ? " (perfex was built "
			 "without libbpf)" : "");
		serve_log("cgroups are counted with cgroup events: %s",
			  ex->bpf_reason);
		return;
	}
	serve_log("cgroups are counted through the BPF counters");
}

/* Build the state of @cfg into @ex (events, the machine's scope, the
 * cgroup2 mount).  Return -1 or the exit status. */
static int build(struct serve_exporter *ex, struct serve_config *cfg)
{
	struct scope *machine;
	int ret;

	ex->cfg = cfg;
	ex->extra = label_text(cfg);
	if (cfg->nr_labels && !ex->extra)
		return PERFEX_EXIT_INTERNAL;
	if ((ret = parse_events(ex, cfg)) >= 0)
		return ret;
	ex->mount[0] = '\0';
	if (cfg->nr_cgroups || cfg->nr_roots) {
		struct perfctr_target *root = perfctr_target__new_cgroup("/", NULL);

		if (!root)
			return target_error("cgroups", errno);
		snprintf(ex->mount, sizeof(ex->mount), "%s",
			 perfctr_target__cgroup_path(root));
		perfctr_target__delete(root);
		/* "/sys/fs/cgroup/unified/" as "/sys/fs/cgroup/unified". */
		for (size_t l = strlen(ex->mount); l > 1 && ex->mount[l - 1] == '/';)
			ex->mount[--l] = '\0';
	}
	ex->scopes = calloc(1, sizeof(*ex->scopes));
	if (!ex->scopes)
		return PERFEX_EXIT_INTERNAL;
	if (!nr_events(ex)) {
		serve_log("no event can count here: serving the exporter's "
			  "own metrics only");
		return -1;
	}
	machine = scope_new(ex, NULL);
	if (!machine)
		return target_error(cfg->cpus ? "the CPUs" : "every CPU", errno);
	ex->scopes[0] = machine;
	ex->nr_scopes = 1;
	return -1;
}

static void unbuild(struct serve_exporter *ex)
{
	drop_scopes(ex);
	perfctr_evlist__delete(ex->events);
	ex->events = NULL;
	free_unavailable(ex->unavail, ex->nr_unavail);
	ex->unavail = NULL;
	ex->nr_unavail = 0;
	free(ex->extra);
	ex->extra = NULL;
	serve_config_free(ex->cfg);
	free(ex->cfg);
	ex->cfg = NULL;
}

struct serve_exporter *serve_exporter_new(struct serve_config *cfg,
					  int *exit_code)
{
	struct serve_exporter *ex = calloc(1, sizeof(*ex));
	int ret;

	if (!ex) {
		serve_config_free(cfg);
		free(cfg);
		*exit_code = PERFEX_EXIT_INTERNAL;
		return NULL;
	}
	pthread_mutex_init(&ex->lock, NULL);
	ex->last_reload_ok = true;
	ex->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ret = build(ex, cfg);
	if (ret >= 0) {
		*exit_code = ret;
		serve_exporter_delete(ex);
		return NULL;
	}
	bpf_setup(ex);
	rescan_locked(ex);
	*exit_code = 0;
	return ex;
}

void serve_exporter_delete(struct serve_exporter *ex)
{
	if (!ex)
		return;
	unbuild(ex);
	/* After every session counting through it is gone. */
	perfctr_bpf_counters__delete(ex->bpf);
	free(ex->pending);
	forget_watches(ex);
	if (ex->inotify_fd >= 0)
		close(ex->inotify_fd);
	pthread_mutex_destroy(&ex->lock);
	free(ex);
}

int serve_exporter_reload(struct serve_exporter *ex, struct serve_config *cfg)
{
	struct serve_exporter next = { 0 };
	int ret;

	/* The new state is built beside the old one, so a configuration
	 * that fails leaves the running one untouched. */
	next.inotify_fd = -1;
	ret = build(&next, cfg);
	pthread_mutex_lock(&ex->lock);
	if (ret >= 0) {
		unbuild(&next);
		ex->reloads_failed++;
		ex->last_reload_ok = false;
		pthread_mutex_unlock(&ex->lock);
		serve_log("reload failed: the configuration in use is kept");
		return -1;
	}
	unbuild(ex);
	ex->cfg = next.cfg;
	ex->events = next.events;
	ex->unavail = next.unavail;
	ex->nr_unavail = next.nr_unavail;
	ex->scopes = next.scopes;
	ex->nr_scopes = next.nr_scopes;
	ex->extra = next.extra;
	memcpy(ex->mount, next.mount, sizeof(ex->mount));
	/* Old watches name directories no longer followed: start anew. */
	if (ex->inotify_fd >= 0) {
		close(ex->inotify_fd);
		forget_watches(ex);
		ex->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	}
	bpf_setup(ex);
	rescan_locked(ex);
	ex->reloads_ok++;
	ex->last_reload_ok = true;
	pthread_mutex_unlock(&ex->lock);
	serve_log("configuration reloaded: %zu events, %zu cgroups",
		  nr_events(ex), ex->nr_scopes ? ex->nr_scopes - 1 : 0);
	return 0;
}

void serve_exporter_reload_failed(struct serve_exporter *ex)
{
	pthread_mutex_lock(&ex->lock);
	ex->reloads_failed++;
	ex->last_reload_ok = false;
	pthread_mutex_unlock(&ex->lock);
	serve_log("reload failed: the configuration in use is kept");
}

const char *serve_exporter_listen(const struct serve_exporter *ex)
{
	return ex->cfg->listen ? ex->cfg->listen : SERVE_DEFAULT_LISTEN;
}

void serve_exporter_count_profile(struct serve_exporter *ex, int running,
				  enum serve_profile_result result)
{
	pthread_mutex_lock(&ex->lock);
	ex->profiles_running += (unsigned int)running;
	if (result < SERVE_PROFILE_NR_RESULTS)
		ex->profiles[result]++;
	pthread_mutex_unlock(&ex->lock);
}

unsigned int serve_exporter_profile_max_seconds(struct serve_exporter *ex)
{
	unsigned int max;

	pthread_mutex_lock(&ex->lock);
	max = ex->cfg->profile_max_seconds ? ex->cfg->profile_max_seconds :
	      SERVE_DEFAULT_PROFILE_MAX;
	pthread_mutex_unlock(&ex->lock);
	return max;
}

/* ------------------------------------------------------------- scrape */

static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;		/* the directory's own fd */
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Read every scope's counters into its counts.  Under the lock. */
static void read_counts(struct serve_exporter *ex)
{
	/* One run of the BPF program and one copy of the sums for every
	 * cgroup, not one each (else reads that fail are counted). */
	if (ex->bpf && ex->nr_scopes > 1 &&
	    perfctr_bpf_counters__freeze(ex->bpf) < 0)
		ex->read_errors++;
	for (size_t i = 0; i < ex->nr_scopes; i++) {
		struct scope *s = ex->scopes[i];

		if (perfctr_session__read(s->session) < 0)
			ex->read_errors++;
		for (size_t e = 0; e < nr_events(ex); e++)
			for (size_t u = 0; u < s->nr_units; u++) {
				struct perfctr_count *c =
					&s->counts[e * s->nr_units + u];

				if (perfctr_session__unit_count(s->session, e,
								u, c))
					c->status = PERFCTR_COUNT_NOT_SUPPORTED;
			}
	}
	perfctr_bpf_counters__thaw(ex->bpf);
}

/* The four count families of every scope.  Under the lock. */
static void write_counts(struct serve_exporter *ex, struct serve_text *t,
			 enum serve_format fmt)
{
	struct serve_series *series = calloc(ex->nr_scopes + 1,
					     sizeof(*series));

	if (!series) {
		t->failed = true;
		return;
	}
	for (size_t i = 0; i < ex->nr_scopes; i++) {
		const struct scope *s = ex->scopes[i];

		series[i] = (struct serve_series){
			.nr = nr_events(ex) * s->nr_units,
			.labels = s->series,
			.labels_len = s->series_len,
			.counts = s->counts,
		};
	}
	serve_metrics_counts(t, fmt, series, ex->nr_scopes);
	free(series);
}

/* The health families.  Under the lock. */
static void write_health(struct serve_exporter *ex, struct serve_text *t,
			 enum serve_format fmt, uint64_t start)
{
	const char **events = calloc(ex->nr_unavail + 1, sizeof(*events));
	const char **reasons = calloc(ex->nr_unavail + 1, sizeof(*reasons));
	struct serve_health h = {
		.extra = ex->extra,
		.unavail_event = events,
		.unavail_reason = reasons,
		.nr_unavail = ex->nr_unavail,
		.cgroups = ex->nr_scopes ? ex->nr_scopes - 1 : 0,
		.counts_cgroups = ex->cfg->nr_cgroups || ex->cfg->nr_roots,
		.bpf_reason = ex->bpf_reason,
		.cgroup_errors = ex->cgroup_errors,
		.dropped_series = ex->dropped_series,
		.read_errors = ex->read_errors,
		.open_fds = ex->open_fds,
		.reloads_ok = ex->reloads_ok,
		.reloads_failed = ex->reloads_failed,
		.last_reload_ok = ex->last_reload_ok,
		.profiles_running = ex->profiles_running,
		.start_ns = start,
	};

	if (!events || !reasons) {
		free(events);
		free(reasons);
		t->failed = true;
		return;
	}
	for (size_t i = 0; i < ex->nr_unavail; i++) {
		events[i] = ex->unavail[i].event;
		reasons[i] = ex->unavail[i].reason;
	}
	for (size_t i = 1; i < ex->nr_scopes; i++)
		*(ex->scopes[i]->by_bpf ? &h.by_bpf : &h.by_events) += 1;
	for (size_t i = 0; i < SERVE_PROFILE_NR_RESULTS; i++)
		h.profiles[i] = ex->profiles[i];
	serve_metrics_health(t, fmt, &h);
	free(events);
	free(reasons);
}

char *serve_exporter_scrape(struct serve_exporter *ex, enum serve_format fmt,
			    bool gzip, size_t *len, bool *gzipped)
{
	uint64_t start = now_ns();
	struct serve_text t;

	if (serve_text_init(&t, gzip) < 0)
		return NULL;
	pthread_mutex_lock(&ex->lock);
	if (ex->inotify_fd < 0)
		rescan_locked(ex);
	/* Counted when counters were opened or closed since the last
	 * scrape, not at each change: listing /proc/self/fd instantiates an
	 * inode per fd, which with thousands of fds costs more than a
	 * change, and cgroups change many times a second on a busy node. */
	if (ex->fds_stale) {
		ex->open_fds = open_fds();
		ex->fds_stale = false;
	}
	read_counts(ex);
	if (!gzip)
		serve_text_grow(&t, 256 * 1024);
	write_counts(ex, &t, fmt);
	write_health(ex, &t, fmt, start);
	pthread_mutex_unlock(&ex->lock);
	if (fmt == SERVE_FORMAT_OPENMETRICS)
		serve_text_puts(&t, "# EOF\n");
	return serve_text_finish(&t, len, gzipped);
}
