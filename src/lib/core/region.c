// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Region markers: see perfctr/region.h.
 *
 * Each thread has a table of its regions (fixed size, entries published
 * with a release store of the count, sums updated with relaxed atomics so
 * that a report written while other threads still run reads no torn
 * words) and a stack of open regions with the counts at their begin.
 * Tables are never freed: a thread's results outlive it until exit.
 *
 * What the markers do for the whole process (environment, the exit
 * report) is in region-runtime.c, with its contract.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/region-runtime.h"
#include "perfctr/event.h"
#include "perfctr/region.h"
#include "perfctr/vperfctr.h"
#include "sys/sys.h"

#define MAX_EVENTS 8
#define MAX_DEPTH 64
#define MAX_REGIONS 256
#define CALIBRATION_PAIRS 200
#define HEADER "perfctr-regions 1"

struct region {
	const char *name;	/* the caller's pointer, for the fast match */
	char *copy;
	_Atomic uint64_t calls;
	_Atomic uint64_t sum[MAX_EVENTS];
};

struct open_region {
	unsigned int idx;
	uint64_t start[MAX_EVENTS];
};

struct rthread {
	struct rthread *next;
	pid_t tid;
	struct vperfctr *v;
	bool counting;
	unsigned int depth;
	struct open_region stack[MAX_DEPTH];
	atomic_uint nr;
	struct region regions[MAX_REGIONS];
};

/* Process-wide: the events, the measured cost of an empty pair. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rthread *threads;
static unsigned int nr_events;
static struct perf_event_attr attrs[MAX_EVENTS];
static char event_names[MAX_EVENTS][64];
static double overhead[MAX_EVENTS];
static atomic_bool calibrating;
static pthread_key_t key;

static __thread struct rthread *self;

static void thread_gone(void *arg)
{
	struct rthread *t = arg;

	/* The counters go; the table stays for the report. */
	if (t && t->v) {
		vperfctr_unlink(t->v);
		vperfctr_close(t->v);
		t->v = NULL;
	}
}

static int parse_events(const char *spec)
{
	struct perfctr_evlist *list = perfctr_evlist__new();
	size_t i, n;
	int rc;

	if (!list)
		return -ENOMEM;
	rc = perfctr_evlist__parse(list, spec, NULL, NULL);
	n = perfctr_evlist__nr_events(list);
	if (rc >= 0 && (n == 0 || n > MAX_EVENTS))
		rc = -EINVAL;
	if (rc >= 0) {
		nr_events = (unsigned int)n;
		for (i = 0; i < n; i++) {
			attrs[i] = *perfctr_evlist__attr(list, i);
			pc_strlcpy(event_names[i], perfctr_evlist__name(list, i),
				   sizeof(event_names[i]));
		}
		rc = 0;
	}
	perfctr_evlist__delete(list);
	return rc;
}

/* The default set: hardware where a PMU counts instructions. */
static bool hardware_here(void)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void global_init(void)
{
	const char *spec;

	pthread_key_create(&key, thread_gone);
	spec = region_runtime_start();
	if (spec) {
		if (parse_events(spec) < 0) {
			pr_warn("regions: cannot use PERFCTR_EVENTS='%s': counting "
				"calls only\n", spec);
			nr_events = 0;
		}
		return;
	}
	if (parse_events(hardware_here() ? "instructions:u,cycles:u"
					 : "task-clock,page-faults") < 0)
		nr_events = 0;
}

static int read_now(struct rthread *t, uint64_t *out)
{
	struct perfctr_sum_ctrs sum;
	unsigned int i;

	if (!t->counting) {
		for (i = 0; i < nr_events; i++)
			out[i] = 0;
		return 0;
	}
	if (vperfctr_read_fast(t->v, &sum) < 0)
		return -EIO;
	for (i = 0; i < nr_events; i++)
		out[i] = sum.pmc[i];
	return 0;
}

/* The counts of an empty begin/end pair, measured with the real calls
 * on a region of its own, which is then dropped: the thread's first. */
static void calibrate(struct rthread *t)
{
	static const char cal[] = "(calibration)";
	struct region *r;
	unsigned int i, k;

	for (k = 0; k < CALIBRATION_PAIRS; k++) {
		perfctr_region_begin(cal);
		perfctr_region_end(cal);
	}
	r = &t->regions[0];
	for (i = 0; i < nr_events; i++)
		overhead[i] = (double)atomic_load(&r->sum[i]) / CALIBRATION_PAIRS;
	atomic_store(&t->nr, 0);
	free(r->copy);
	memset(r, 0, sizeof(*r));
}

static struct rthread *thread_init(void)
{
	struct vperfctr_control c;
	struct rthread *t;
	unsigned int i;

	pthread_once(&once, global_init);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = (pid_t)syscall(SYS_gettid);
	if (nr_events) {
		t->v = vperfctr_open(0, 1);
		if (!t->v) {
			pr_warn("regions: thread %d has a vperfctr state of its "
				"own: counting calls only\n", (int)t->tid);
		} else {
			memset(&c, 0, sizeof(c));
			c.sz = sizeof(c);
			c.cpu_control.nractrs = nr_events;
			for (i = 0; i < nr_events; i++)
				c.attr[i] = &attrs[i];
			if (vperfctr_control(t->v, &c) < 0) {
				pr_warn("regions: cannot count in thread %d: "
					"counting calls only\n", (int)t->tid);
				vperfctr_close(t->v);
				t->v = NULL;
			} else {
				t->counting = true;
			}
		}
	}
	pthread_setspecific(key, t);
	self = t;
	if (t->counting && !atomic_exchange(&calibrating, true))
		calibrate(t);
	pthread_mutex_lock(&lock);
	t->next = threads;
	threads = t;
	pthread_mutex_unlock(&lock);
	return t;
}

static int find_or_add(struct rthread *t, const char *name)
{
	unsigned int i, n = atomic_load_explicit(&t->nr, memory_order_relaxed);
	struct region *r;

	for (i = 0; i < n; i++)
		if (t->regions[i].name == name)
			return (int)i;
	for (i = 0; i < n; i++)
		if (!strcmp(t->regions[i].copy, name))
			return (int)i;
	if (n >= MAX_REGIONS)
		return -EINVAL;
	r = &t->regions[n];
	r->copy = strdup(name);
	if (!r->copy)
		return -ENOMEM;
	r->name = name;
	atomic_store_explicit(&t->nr, n + 1, memory_order_release);
	return (int)n;
}

int perfctr_region_begin(const char *name)
{
	struct rthread *t = self;
	struct open_region *o;
	int idx;

	if (!name)
		return pc_err(EINVAL);
	if (!t && !(t = thread_init()))
		return pc_err(ENOMEM);
	if (t->depth >= MAX_DEPTH)
		return pc_err(EINVAL);
	idx = find_or_add(t, name);
	if (idx < 0)
		return pc_err(-idx);
	o = &t->stack[t->depth++];
	o->idx = (unsigned int)idx;
	/* Last: the region's counts start after our own work. */
	read_now(t, o->start);
	return 0;
}

int perfctr_region_end(const char *name)
{
	uint64_t now[MAX_EVENTS];
	struct rthread *t = self;
	struct open_region *o;
	struct region *r;
	unsigned int i;

	/* First: the region's counts end before our own work. */
	if (t)
		read_now(t, now);
	if (!t || !name || !t->depth)
		return pc_err(EINVAL);
	o = &t->stack[t->depth - 1];
	r = &t->regions[o->idx];
	if (r->name != name && strcmp(r->copy, name)) {
		pr_warn("regions: end of '%s' while '%s' is the innermost\n",
			name, r->copy);
		return pc_err(EINVAL);
	}
	t->depth--;
	atomic_fetch_add_explicit(&r->calls, 1, memory_order_relaxed);
	for (i = 0; i < nr_events; i++)
		atomic_fetch_add_explicit(&r->sum[i], now[i] - o->start[i],
					  memory_order_relaxed);
	return 0;
}

/* Names go into a tab-separated file: no tabs or newlines in them. */
static void put_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

int region_results_write(FILE *f)
{
	struct rthread *t;
	unsigned int i, k, n;

	pthread_once(&once, global_init);
	pthread_mutex_lock(&lock);
	fprintf(f, "%s\nevents\t%u", HEADER, nr_events);
	for (i = 0; i < nr_events; i++)
		fprintf(f, "\t%s", event_names[i]);
	fprintf(f, "\noverhead");
	for (i = 0; i < nr_events; i++)
		fprintf(f, "\t%.3f", overhead[i]);
	fputc('\n', f);
	for (t = threads; t; t = t->next) {
		n = atomic_load_explicit(&t->nr, memory_order_acquire);
		for (k = 0; k < n; k++) {
			struct region *r = &t->regions[k];

			fputs("region\t", f);
			put_name(f, r->copy);
			fprintf(f, "\t%d\t%llu", (int)t->tid,
				(unsigned long long)atomic_load(&r->calls));
			for (i = 0; i < nr_events; i++)
				fprintf(f, "\t%llu",
					(unsigned long long)atomic_load(&r->sum[i]));
			fputc('\n', f);
		}
	}
	pthread_mutex_unlock(&lock);
	return ferror(f) ? -EIO : 0;
}

int perfctr_region_write(const char *path)
{
	FILE *f;
	int rc;

	if (!path)
		path = region_runtime_results_path();
	if (!path || !*path)
		return pc_err(EINVAL);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	rc = region_results_write(f);
	if (fclose(f) && !rc)
		rc = -errno;
	return rc < 0 ? pc_err(-rc) : 0;
}

/* ------------------------------------------------------------------ */
/* The report. */

struct row {
	char name[128];
	int tid;
	uint64_t calls;
	uint64_t sum[MAX_EVENTS];
};

static char *next_field(char **s)
{
	char *f = *s, *tab;

	if (!f)
		return NULL;
	tab = strchr(f, '\t');
	if (tab) {
		*tab = '\0';
		*s = tab + 1;
	} else {
		*s = NULL;
	}
	return f;
}

static double corrected(uint64_t sum, uint64_t calls, double per_pair)
{
	double v = (double)sum - per_pair * (double)calls;

	return v > 0 ? v : 0;
}

int perfctr_region_report(const char *path, FILE *out)
{
	FILE *f = fopen(path, "re");
	int rc;

	if (!f)
		return -errno;
	rc = region_results_report(f, out);
	fclose(f);
	return rc;
}

/* A results file as read: its events, their cost per empty pair, and a
 * row per region and thread. */
struct results {
	char names[MAX_EVENTS][64];
	int width[MAX_EVENTS];		/* of the events' columns */
	double per_pair[MAX_EVENTS];
	unsigned int nev;
	struct row *rows;
	size_t nr_rows, cap;
};

/* A "region" line's fields (after its kind) at @s into a new row.
 * Return 0 or -EINVAL (a bad field, or no memory for the row). */
static int add_row(struct results *r, char *s)
{
	struct row *row;
	uint64_t v;
	char *fld;

	if (r->nr_rows == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct row *grow = realloc(r->rows, cap * sizeof(*grow));

		if (!grow)
			return -EINVAL;
		r->rows = grow;
		r->cap = cap;
	}
	row = &r->rows[r->nr_rows];
	memset(row, 0, sizeof(*row));
	fld = next_field(&s);
	pc_strlcpy(row->name, fld ? fld : "?", sizeof(row->name));
	fld = next_field(&s);
	if (!fld || pc_parse_u64(fld, 10, &v) < 0)
		return -EINVAL;
	row->tid = (int)v;
	fld = next_field(&s);
	if (!fld || pc_parse_u64(fld, 10, &row->calls) < 0)
		return -EINVAL;
	for (unsigned int e = 0; e < r->nev; e++) {
		fld = next_field(&s);
		if (!fld || pc_parse_u64(fld, 10, &row->sum[e]) < 0)
			return -EINVAL;
	}
	r->nr_rows++;
	return 0;
}

/* The lines of @f after its header.  Return 0 or -EINVAL. */
static int read_results(FILE *f, struct results *r)
{
	char line[4096];
	unsigned int e;

	while (fgets(line, sizeof(line), f)) {
		char *s = line, *kind;

		line[strcspn(line, "\n")] = '\0';
		kind = next_field(&s);
		if (!strcmp(kind, "events")) {
			uint64_t v = 0;
			char *fld = next_field(&s);

			if (!fld || pc_parse_u64(fld, 10, &v) < 0 || v > MAX_EVENTS)
				return -EINVAL;
			r->nev = (unsigned int)v;
			for (e = 0; e < r->nev; e++) {
				fld = next_field(&s);
				pc_strlcpy(r->names[e], fld ? fld : "?",
					   sizeof(r->names[e]));
			}
		} else if (!strcmp(kind, "overhead")) {
			for (e = 0; e < r->nev; e++) {
				char *fld = next_field(&s);

				r->per_pair[e] = fld ? strtod(fld, NULL) : 0;
			}
		} else if (!strcmp(kind, "region") && add_row(r, s)) {
			return -EINVAL;
		}
	}
	for (e = 0; e < r->nev; e++) {
		r->width[e] = (int)strlen(r->names[e]);
		if (r->width[e] < 16)
			r->width[e] = 16;
	}
	return 0;
}

/* The table of the region of row @i: a line per thread, then the total. */
static void print_region(FILE *out, const struct results *r, size_t i)
{
	const struct row *rows = r->rows;
	double total[MAX_EVENTS] = { 0 };
	uint64_t calls = 0;
	unsigned int e;

	fprintf(out, "\nregion '%s'\n  %-10s %12s", rows[i].name,
		"thread", "calls");
	for (e = 0; e < r->nev; e++)
		fprintf(out, " %*s", r->width[e], r->names[e]);
	fputc('\n', out);
	for (size_t j = i; j < r->nr_rows; j++) {
		if (strcmp(rows[j].name, rows[i].name))
			continue;
		fprintf(out, "  %-10d %12llu", rows[j].tid,
			(unsigned long long)rows[j].calls);
		calls += rows[j].calls;
		for (e = 0; e < r->nev; e++) {
			double v = corrected(rows[j].sum[e], rows[j].calls,
					     r->per_pair[e]);

			total[e] += v;
			fprintf(out, " %*.0f", r->width[e], v);
		}
		fputc('\n', out);
	}
	fprintf(out, "  %-10s %12llu", "total", (unsigned long long)calls);
	for (e = 0; e < r->nev; e++)
		fprintf(out, " %*.0f", r->width[e], total[e]);
	fputc('\n', out);
}

int region_results_report(FILE *f, FILE *out)
{
	struct results r = { .nev = 0 };
	char line[4096];
	size_t i, j;
	unsigned int e;
	int nr_regions = 0;

	if (!fgets(line, sizeof(line), f) || strncmp(line, HEADER, strlen(HEADER)))
		return pc_err(EINVAL);
	if (read_results(f, &r)) {
		free(r.rows);
		return pc_err(EINVAL);
	}
	fprintf(out, "regions (an empty begin/end pair costs");
	for (e = 0; e < r.nev; e++)
		fprintf(out, "%s %.1f %s", e ? "," : "", r.per_pair[e],
			r.names[e]);
	fprintf(out, "%s; subtracted per call)\n", r.nev ? "" : " nothing measured");
	/* One table per region, in order of first appearance. */
	for (i = 0; i < r.nr_rows; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(r.rows[j].name, r.rows[i].name))
				break;
		if (j < i)
			continue;
		nr_regions++;
		print_region(out, &r, i);
	}
	free(r.rows);
	return nr_regions;
}
