// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex report — summarise a perf.data file (ours or perf's): a flat
 * profile per event with percentages of the event's total period, call
 * graphs from the callchains, folded stacks, an SVG flame graph, JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <perfctr/perfctr.h>
#include <perfctr/reader.h>

#include "annotate.h"
#include "json-out.h"
#include "options.h"
#include "perfex.h"
#include "report.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* A DSO as the table shows it: its base name; JIT code named by a perf
 * map ("/tmp/perf-PID.map") as perf shows it, "[JIT] tid PID". */
static const char *dso_shown(const char *path, char *buf, size_t size)
{
	int pid, end = 0;

	if (sscanf(path, "/tmp/perf-%d.map%n", &pid, &end) == 1 &&
	    end && !path[end]) {
		snprintf(buf, size, "[JIT] tid %d", pid);
		return buf;
	}
	return base_name(path);
}

/*
 * The srcline key's text of a sample, as perf report shows it: "file:line"
 * (the file's base name) from the line tables; without one the symbol and
 * the offset into it in decimal ("main+12"), or without a symbol the DSO
 * and the address in hex ("dash[6d56]").
 */
static const char *srcline_text(struct perfctr_reader *rd,
				const struct perfctr_reader_sample *rs,
				char *buf, size_t size)
{
	struct perfctr_symbols *syms = perfctr_reader__symbols(rd);
	struct perfctr_srcline line = { .sz = sizeof(line) };
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	bool kernel = rs->frames[0].kernel;
	uint64_t ip = rs->ips[0];

	if (perfctr_symbols__srcline(syms, rs->pid, ip, kernel, &line) > 0) {
		snprintf(buf, size, "%s:%u", base_name(line.file), line.line);
		return buf;
	}
	if (perfctr_symbols__resolve(syms, rs->pid, ip, kernel, 0, &loc) > 0)
		snprintf(buf, size, "%s+%" PRIu64, loc.sym,
			 loc.dso_addr - loc.sym_addr);
	else
		snprintf(buf, size, "%s[%" PRIx64 "]", base_name(loc.dso),
			 loc.file_addr);
	return buf;
}

/* perf's off-CPU event: its period is the time blocked, in ns. */
static bool offcpu_event(struct perfctr_reader *rd, size_t a)
{
	const char *name = a < perfctr_reader__nr_events(rd) ?
			   perfctr_reader__event_name(rd, a) : NULL;

	return name && !strcmp(name, OFFCPU_EVENT);
}

/* An event whose periods are nanoseconds of wall-clock time: the clocks
 * sampled on the CPU, and offcpu-time. */
static bool time_event(struct perfctr_reader *rd, size_t a)
{
	const struct perf_event_attr *attr = a < perfctr_reader__nr_events(rd) ?
		perfctr_reader__event_attr(rd, a) : NULL;

	return offcpu_event(rd, a) ||
	       (attr && attr->type == PERF_TYPE_SOFTWARE &&
		(attr->config == PERF_COUNT_SW_CPU_CLOCK ||
		 attr->config == PERF_COUNT_SW_TASK_CLOCK));
}

/* Profile @a's name: its event's, or the --wall profile's. */
static const char *profile_name(struct perfctr_reader *rd,
				const struct report *rep, size_t a)
{
	if (rep->wall && a == rep->nr_profiles - 1)
		return WALL_PROFILE;
	return perfctr_reader__event_name(rd, a);
}

/* Profile @a is shown: with --wall only the merged one. */
static bool profile_shown(const struct report *rep, size_t a)
{
	return !rep->wall || a == rep->nr_profiles - 1;
}

static int add_sample(struct report *rep, struct perfctr_reader *rd,
		      const struct perfctr_reader_sample *rs,
		      struct report_viewers *viewers)
{
	const struct perfctr_sample *s = rs->sample;
	char srcline[512];
	struct perfctr_profile_sample ps = {
		.sz = sizeof(ps),
		.comm = rs->comm,
		.pid = rs->pid,
		.tid = rs->tid,
		.cpu = (s->type & PERF_SAMPLE_CPU) ? (int32_t)s->cpu : -1,
		.weight = s->period ? s->period : 1,
		.frames = rs->frames,
		.nr_frames = rs->nr_frames,
	};

	if (rs->event_idx >= rep->nr_profiles)
		return 0;
	if (rep->srcline && rs->nr_frames)
		ps.srcline = srcline_text(rd, rs, srcline, sizeof(srcline));
	if (rs->nr_frames > 1)
		rep->saw_callchain = true;
	if (perfctr_profile__add(rep->profiles[rs->event_idx], &ps) ||
	    (viewers && report_viewers__add(viewers, rs, ps.weight)) ||
	    (rep->wall && time_event(rd, rs->event_idx) &&
	     perfctr_profile__add(rep->profiles[rep->nr_profiles - 1], &ps))) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	return 0;
}

/*
 * The table is laid out as perf report --stdio lays out its own, so that
 * tools and eyes used to perf's read ours: the same preamble, the same
 * column titles (report_key_title()), the same widths (perf's rules, data
 * dependent) and the same padding.
 */

/* The comm perf gives a row: its thread's, as the file last named it
 * (NULL when never named). */
static const char *thread_comm(struct perfctr_reader *rd, pid_t tid)
{
	struct perfctr_reader_thread t = { .sz = sizeof(t) };

	return perfctr_reader__thread(rd, tid, &t) ? NULL : t.comm;
}

struct table_layout {
	size_t width[PERFCTR_SORT_NR];
	int comm_width;
	bool ipc;		/* perf's IPC column (see report_option) */
};

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* perf's widths: at least the title; comm as wide as the longest last
 * comm of the rows' threads (perf measures the thread, then cuts the
 * row's comm to it); pid and tid that plus "%7d:"; the DSO at least 16
 * when a row has no symbol (room for an address); a symbol its name
 * and "[.] ". */
static void layout(struct perfctr_reader *rd, const struct report *rep,
		   struct perfctr_profile *prof, struct table_layout *lay)
{
	size_t n = perfctr_profile__nr_entries(prof), i, k;
	size_t comm = strlen("Command");
	bool unresolved = false;

	for (k = 0; k < rep->nr_keys; k++)
		lay->width[k] = strlen(report_key_title(rep->keys[k]));
	for (i = 0; i < n; i++) {
		struct perfctr_profile_entry e = { .sz = sizeof(e) };
		const char *c;

		perfctr_profile__entry(prof, i, &e);
		c = thread_comm(rd, e.tid);
		if (c)
			comm = max_size(comm, strlen(c));
		for (k = 0; k < rep->nr_keys; k++) {
			const char *text = e.keys[k];

			switch (rep->keys[k]) {
			case PERFCTR_SORT_DSO: {
				char jit[64];

				lay->width[k] = max_size(lay->width[k],
					strlen(dso_shown(text, jit, sizeof(jit))));
				break;
			}
			case PERFCTR_SORT_SYM:
				lay->width[k] = max_size(lay->width[k],
							 strlen(text) + 4);
				unresolved |= !strncmp(text, "0x", 2);
				break;
			case PERFCTR_SORT_SRCLINE:
				lay->width[k] = max_size(lay->width[k], strlen(text));
				break;
			default:
				break;
			}
		}
	}
	lay->comm_width = (int)comm;
	for (k = 0; k < rep->nr_keys; k++) {
		switch (rep->keys[k]) {
		case PERFCTR_SORT_COMM:
			lay->width[k] = comm;
			break;
		case PERFCTR_SORT_PID:
		case PERFCTR_SORT_TID:
			lay->width[k] = comm + 8;
			break;
		case PERFCTR_SORT_DSO:
			if (unresolved)
				lay->width[k] = max_size(lay->width[k], 16);
			break;
		default:
			break;
		}
	}
	lay->ipc = rep->ipc_column;
}

/* The text of key @k of a row as the table shows it, unpadded. */
static const char *cell(struct perfctr_reader *rd, const struct report *rep,
			const struct table_layout *lay,
			const struct perfctr_profile_entry *e, size_t k,
			char *buf, size_t size)
{
	const char *comm;
	pid_t id;

	switch (rep->keys[k]) {
	case PERFCTR_SORT_COMM:
		snprintf(buf, size, "%-*.*s", lay->comm_width, lay->comm_width,
			 e->keys[k]);
		return buf;
	case PERFCTR_SORT_DSO: {
		char jit[64];

		snprintf(buf, size, "%-*s", (int)lay->width[k],
			 dso_shown(e->keys[k], jit, sizeof(jit)));
		return buf;
	}
	case PERFCTR_SORT_SYM:
		snprintf(buf, size, "[%c] %s", e->kernel ? 'k' : '.', e->keys[k]);
		return buf;
	case PERFCTR_SORT_PID:
	case PERFCTR_SORT_TID:
		id = rep->keys[k] == PERFCTR_SORT_PID ? e->pid : e->tid;
		comm = thread_comm(rd, id);
		snprintf(buf, size, "%7d:%-*.*s", (int)id, lay->comm_width,
			 lay->comm_width, comm ? comm : "");
		return buf;
	case PERFCTR_SORT_CPU:
		snprintf(buf, size, "%*.*d", (int)lay->width[k],
			 (int)lay->width[k], (int)strtol(e->keys[k], NULL, 10));
		return buf;
	default:
		return e->keys[k];
	}
}

/* perf's "10K": the number of samples cut to three digits and a unit. */
static void print_samples_line(uint64_t samples, const char *event)
{
	char unit = ' ';

	if (samples > 1000) {
		samples /= 1000;
		unit = 'K';
	}
	if (samples > 1000) {
		samples /= 1000;
		unit = 'M';
	}
	if (samples > 1000) {
		samples /= 1000;
		unit = 'G';
	}
	printf("# Samples: %" PRIu64 "%c of event '%s'\n", samples, unit, event);
}

static void print_header(struct perfctr_reader *rd, const struct report *rep)
{
	struct perfctr_reader_stats stats = { .sz = sizeof(stats) };
	const struct perfctr_reader_stats *st = &stats;
	char unwind[512];

	(void)rep;
	perfctr_reader__stats(rd, SIZE_MAX, &stats);
	printf("# To display the perf.data header info, please use "
	       "--header/--header-only options.\n#\n#\n");
	printf("# Total Lost Samples: %" PRIu64 "\n", st->lost_samples);
	/* Ours, not perf's: what else the file lost or we could not read. */
	if (st->lost)
		printf("# Lost records (PERF_RECORD_LOST): %" PRIu64 "\n",
		       st->lost);
	if (st->bad_samples)
		printf("# Undecodable samples skipped: %" PRIu64 "\n",
		       st->bad_samples);
	if (perfex_unwind_summary(st, unwind, sizeof(unwind)))
		printf("# DWARF call chains: %s\n", unwind);
	if (!perfctr_symbols_have_elf())
		printf("# note: built without libelf: user-space addresses are not symbolised\n");
	printf("#\n");
}

static void print_dots(size_t n)
{
	while (n--)
		putchar('.');
}

static void print_table(struct perfctr_reader *rd, struct report *rep, size_t idx)
{
	static const char ipc_title[] = "IPC   [IPC Coverage]";
	struct perfctr_profile *prof = rep->profiles[idx];
	size_t n = perfctr_profile__nr_entries(prof), i, k;
	uint64_t total = perfctr_profile__weight(prof);
	struct table_layout lay = { .comm_width = 0 };
	char buf[1024];

	layout(rd, rep, prof, &lay);
	print_samples_line(perfctr_profile__samples(prof),
			   profile_name(rd, rep, idx));
	printf("# Event count (approx.): %" PRIu64 "\n#\n", total);
	printf("# Overhead%s", rep->show_samples ? "       Samples" : "");
	for (k = 0; k < rep->nr_keys; k++) {
		/* perf right-aligns the titles of pid:comm columns. */
		bool right = rep->keys[k] == PERFCTR_SORT_PID ||
			     rep->keys[k] == PERFCTR_SORT_TID;

		printf(right ? "  %*s" : "  %-*s", (int)lay.width[k],
		       report_key_title(rep->keys[k]));
	}
	if (lay.ipc)
		printf("  %s", ipc_title);
	printf("\n# ........");
	if (rep->show_samples)
		printf("  ............");
	for (k = 0; k < rep->nr_keys; k++) {
		printf("  ");
		print_dots(lay.width[k]);
	}
	if (lay.ipc) {
		printf("  ");
		print_dots(strlen(ipc_title));
	}
	printf("\n#\n");
	for (i = 0; i < n; i++) {
		struct perfctr_profile_entry e = { .sz = sizeof(e) };
		double pct;

		perfctr_profile__entry(prof, i, &e);
		pct = total ? 100.0 * e.weight / total : 0.0;
		if (pct < rep->percent_limit)
			continue;
		printf("%9.2f%%", pct);
		if (rep->show_samples)
			printf("  %12" PRIu64, e.samples);
		for (k = 0; k < rep->nr_keys; k++) {
			/* perf pads every column but the last; some of its
			 * cells pad themselves (cell() does as they do). */
			bool last = k + 1 == rep->nr_keys && !lay.ipc;

			printf("  %-*s", last ? 0 : (int)lay.width[k],
			       cell(rd, rep, &lay, &e, k, buf, sizeof(buf)));
		}
		if (lay.ipc)
			printf("  %-*s", (int)strlen(ipc_title), "-      -");
		printf("\n");
		if (rep->callgraph != PERFCTR_CALLGRAPH_NONE)
			report_print_callgraph(prof, i, stdout,
					       rep->percent_limit);
	}
	printf("\n\n");
}

/*
 * --sort pid alone: the processes as a tree, the shape perfex
 * --per-process prints for counts.  A process's parent is the one its
 * FORK record names; a process whose parent the file does not know is a
 * root.  Processes without samples stay in as the ancestors of those with
 * samples, so that every sample is under its process's real parent.
 */
struct proc {
	pid_t pid, ppid;
	const char *comm;
	uint64_t samples, weight;		/* its own */
	uint64_t sub_samples, sub_weight;	/* and its descendants' */
	size_t parent;				/* index, or NO_PARENT */
	size_t *kids;
	size_t nr_kids;
};

#define NO_PARENT SIZE_MAX

struct proc_tree {
	struct proc *procs;
	size_t nr, cap;
};

static size_t proc_find(const struct proc_tree *t, pid_t pid)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->procs[i].pid == pid)
			return i;
	return NO_PARENT;
}

/* Process @pid's index, added with what the file says of it. */
static size_t proc_get(struct perfctr_reader *rd, struct proc_tree *t,
		       pid_t pid)
{
	struct perfctr_reader_thread th = { .sz = sizeof(th) };
	size_t i = proc_find(t, pid);

	if (i != NO_PARENT)
		return i;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct proc *n = realloc(t->procs, cap * sizeof(*n));

		if (!n)
			return NO_PARENT;
		t->procs = n;
		t->cap = cap;
	}
	i = t->nr++;
	memset(&t->procs[i], 0, sizeof(t->procs[i]));
	t->procs[i].pid = pid;
	t->procs[i].ppid = -1;
	t->procs[i].parent = NO_PARENT;
	if (!perfctr_reader__thread(rd, pid, &th)) {
		/* A thread's FORK names its own process as the parent. */
		if (th.ppid != pid)
			t->procs[i].ppid = th.ppid;
		t->procs[i].comm = th.comm;
	}
	return i;
}

static void proc_tree_free(struct proc_tree *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->procs[i].kids);
	free(t->procs);
}

static const struct proc_tree *sort_tree;

/* Heaviest subtree first (self + children), then by pid. */
static int by_subtree(const void *a, const void *b)
{
	const struct proc *x = &sort_tree->procs[*(const size_t *)a];
	const struct proc *y = &sort_tree->procs[*(const size_t *)b];

	if (x->sub_weight != y->sub_weight)
		return x->sub_weight > y->sub_weight ? -1 : 1;
	if (x->sub_samples != y->sub_samples)
		return x->sub_samples > y->sub_samples ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int proc_tree_build(struct perfctr_reader *rd, struct perfctr_profile *prof,
			   struct proc_tree *t)
{
	size_t n = perfctr_profile__nr_entries(prof), i, p;

	for (i = 0; i < n; i++) {
		struct perfctr_profile_entry e = { .sz = sizeof(e) };

		perfctr_profile__entry(prof, i, &e);
		p = proc_get(rd, t, e.pid);
		if (p == NO_PARENT)
			return -ENOMEM;
		t->procs[p].samples += e.samples;
		t->procs[p].weight += e.weight;
	}
	/* Parents, grandparents...: each process known to the file is added
	 * once, so this ends (t->nr grows only with new pids). */
	for (i = 0; i < t->nr; i++) {
		pid_t ppid = t->procs[i].ppid;

		if (ppid < 0 || ppid == t->procs[i].pid)
			continue;
		{
			struct perfctr_reader_thread th = { .sz = sizeof(th) };

			if (proc_find(t, ppid) == NO_PARENT &&
			    perfctr_reader__thread(rd, ppid, &th))
				continue;
		}
		p = proc_get(rd, t, ppid);
		if (p == NO_PARENT)
			return -ENOMEM;
		t->procs[i].parent = p;
	}
	for (i = 0; i < t->nr; i++) {
		size_t up, depth = 0;

		/* A parent loop (pids reused within the file) is cut. */
		for (up = t->procs[i].parent; up != NO_PARENT && depth <= t->nr;
		     up = t->procs[up].parent)
			depth++;
		if (depth > t->nr)
			t->procs[i].parent = NO_PARENT;
	}
	for (i = 0; i < t->nr; i++) {
		struct proc *pr = &t->procs[i];

		for (p = i; p != NO_PARENT; p = t->procs[p].parent) {
			t->procs[p].sub_samples += pr->samples;
			t->procs[p].sub_weight += pr->weight;
		}
		if (pr->parent != NO_PARENT) {
			struct proc *par = &t->procs[pr->parent];
			size_t *k = realloc(par->kids, (par->nr_kids + 1) * sizeof(*k));

			if (!k)
				return -ENOMEM;
			par->kids = k;
			par->kids[par->nr_kids++] = i;
		}
	}
	sort_tree = t;
	for (i = 0; i < t->nr; i++)
		if (t->procs[i].nr_kids > 1)
			qsort(t->procs[i].kids, t->procs[i].nr_kids,
			      sizeof(size_t), by_subtree);
	return 0;
}

static void print_proc(const struct report *rep, const struct proc_tree *t,
		       size_t i, int depth, uint64_t total)
{
	const struct proc *pr = &t->procs[i];
	double self = total ? 100.0 * pr->weight / total : 0.0;
	double kids = total ? 100.0 * (pr->sub_weight - pr->weight) / total : 0.0;
	char comm[32];

	if (total && 100.0 * pr->sub_weight / total < rep->percent_limit)
		return;
	if (pr->comm)
		snprintf(comm, sizeof(comm), "%s", pr->comm);
	else
		snprintf(comm, sizeof(comm), ":%d", (int)pr->pid);
	printf("%9.2f%%  %9.2f%%  %12" PRIu64 "  %13" PRIu64 "  %7d  %*s%s\n",
	       self, kids, pr->samples, pr->sub_samples - pr->samples,
	       (int)pr->pid, 2 * depth, "", comm);
	for (size_t k = 0; k < pr->nr_kids; k++)
		print_proc(rep, t, pr->kids[k], depth + 1, total);
}

static int print_proc_tree(struct perfctr_reader *rd, struct report *rep,
			   size_t idx)
{
	struct perfctr_profile *prof = rep->profiles[idx];
	uint64_t total = perfctr_profile__weight(prof);
	struct proc_tree t = { 0 };
	size_t *roots = NULL, nr_roots = 0, i;

	if (proc_tree_build(rd, prof, &t))
		goto nomem;
	roots = malloc((t.nr ? t.nr : 1) * sizeof(*roots));
	if (!roots)
		goto nomem;
	for (i = 0; i < t.nr; i++)
		if (t.procs[i].parent == NO_PARENT)
			roots[nr_roots++] = i;
	sort_tree = &t;
	qsort(roots, nr_roots, sizeof(*roots), by_subtree);
	print_samples_line(perfctr_profile__samples(prof),
			   profile_name(rd, rep, idx));
	printf("# Event count (approx.): %" PRIu64 "\n#\n", total);
	printf("# Process tree (%zu processes): self and children (descendants)\n#\n",
	       t.nr);
	printf("#     Self    Children       Samples  Child samples      Pid  Command\n");
	printf("# ........  ..........  ............  .............  .......  .......\n#\n");
	for (i = 0; i < nr_roots; i++)
		print_proc(rep, &t, roots[i], 0, total);
	printf("\n\n");
	free(roots);
	proc_tree_free(&t);
	return 0;
nomem:
	free(roots);
	proc_tree_free(&t);
	perfex_error("out of memory");
	return PERFEX_EXIT_INTERNAL;
}

/* Only the pid key: the rows are processes, shown as their tree. */
static bool tree_mode(const struct report *rep)
{
	return rep->nr_keys == 1 && rep->keys[0] == PERFCTR_SORT_PID;
}

/* A side-band-only event (the dummy event that overwrite and snapshot
 * recording read COMM/MMAP records through) with no samples: not shown,
 * as it is no event the user asked for. */
static bool tracking_only(struct perfctr_reader *rd, const struct report *rep, size_t a)
{
	const struct perf_event_attr *attr = a < perfctr_reader__nr_events(rd) ?
		perfctr_reader__event_attr(rd, a) : NULL;

	return attr && attr->type == PERF_TYPE_SOFTWARE &&
	       attr->config == PERF_COUNT_SW_DUMMY &&
	       !perfctr_profile__samples(rep->profiles[a]);
}

/* The parent process of @pid from its FORK record; null when the file
 * has none. */
static void json_ppid(struct perfctr_reader *rd, pid_t pid)
{
	struct perfctr_reader_thread th = { .sz = sizeof(th) };

	if (!perfctr_reader__thread(rd, pid, &th) && th.ppid >= 0 &&
	    th.ppid != pid)
		printf(", \"ppid\": %d", (int)th.ppid);
	else
		printf(", \"ppid\": null");
}

static int json_proc(const struct proc_tree *t, size_t i, int depth,
		     uint64_t total, bool first)
{
	const struct proc *pr = &t->procs[i];

	printf("%s\n  {\"overhead\": %.4f, \"samples\": %" PRIu64
	       ", \"period\": %" PRIu64 ", \"pid\": \"%d\", \"comm\": ",
	       first ? "" : ",", total ? 100.0 * pr->weight / total : 0.0,
	       pr->samples, pr->weight, (int)pr->pid);
	if (pr->comm)
		jout_str(stdout, pr->comm);
	else
		printf("null");
	if (pr->ppid >= 0)
		printf(", \"ppid\": %d", (int)pr->ppid);
	else
		printf(", \"ppid\": null");
	printf(", \"depth\": %d, \"children_samples\": %" PRIu64
	       ", \"children_period\": %" PRIu64 "}", depth,
	       pr->sub_samples - pr->samples, pr->sub_weight - pr->weight);
	for (size_t k = 0; k < pr->nr_kids; k++)
		json_proc(t, pr->kids[k], depth + 1, total, false);
	return 0;
}

/* The rows of --sort pid: every process of the tree, parents before
 * their children, in the order the table shows them. */
static int json_proc_tree(struct perfctr_reader *rd, struct perfctr_profile *prof)
{
	uint64_t total = perfctr_profile__weight(prof);
	struct proc_tree t = { 0 };
	size_t *roots = NULL, nr_roots = 0, i;

	if (proc_tree_build(rd, prof, &t) ||
	    !(roots = malloc((t.nr ? t.nr : 1) * sizeof(*roots)))) {
		proc_tree_free(&t);
		perfex_error("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < t.nr; i++)
		if (t.procs[i].parent == NO_PARENT)
			roots[nr_roots++] = i;
	sort_tree = &t;
	qsort(roots, nr_roots, sizeof(*roots), by_subtree);
	for (i = 0; i < nr_roots; i++)
		json_proc(&t, roots[i], 0, total, i == 0);
	free(roots);
	proc_tree_free(&t);
	return 0;
}

static int print_json(struct perfctr_reader *rd, struct report *rep)
{
	struct perfctr_reader_stats stats = { .sz = sizeof(stats) };
	struct perfctr_reader_stats ev = { .sz = sizeof(ev) };
	const struct perfctr_reader_stats *st = &stats;
	size_t a, i, k, shown;
	bool has_pid = false;

	for (k = 0; k < rep->nr_keys; k++)
		has_pid |= rep->keys[k] == PERFCTR_SORT_PID;
	perfctr_reader__stats(rd, SIZE_MAX, &stats);
	printf("{\"input\": ");
	jout_str(stdout, rep->input);
	printf(", \"samples\": %" PRIu64 ", \"lost\": %" PRIu64
	       ", \"lost_samples\": %" PRIu64, st->samples, st->lost,
	       st->lost_samples);
	if (st->unwound) {
		printf(", \"unwound\": %" PRIu64 ", \"truncated\": {",
		       st->unwound);
		for (i = 0, shown = 0; i < PERFCTR_UNWIND_NR_STOPS; i++) {
			if (!st->truncated[i])
				continue;
			printf("%s", shown++ ? ", " : "");
			jout_str(stdout, perfctr_unwind_stop_str((int)i));
			printf(": %" PRIu64, st->truncated[i]);
		}
		printf("}");
	}
	printf(", \"sort\": [");
	for (k = 0; k < rep->nr_keys; k++)
		printf("%s\"%s\"", k ? ", " : "", perfctr_sort_key_name(rep->keys[k]));
	printf("], \"events\": [");
	for (a = 0, shown = 0; a < rep->nr_profiles; a++) {
		struct perfctr_profile *prof = rep->profiles[a];
		uint64_t total = perfctr_profile__weight(prof);
		size_t n = perfctr_profile__nr_entries(prof);

		if (tracking_only(rd, rep, a) || !profile_shown(rep, a))
			continue;
		ev.lost = 0;
		if (a < perfctr_reader__nr_events(rd))
			perfctr_reader__stats(rd, a, &ev);
		printf("%s\n {\"event\": ", shown++ ? "," : "");
		jout_str(stdout, profile_name(rd, rep, a));
		printf(", \"samples\": %" PRIu64 ", \"period\": %" PRIu64
		       ", \"lost\": %" PRIu64 ", \"rows\": [",
		       perfctr_profile__samples(prof), total, ev.lost);
		if (tree_mode(rep)) {
			if (json_proc_tree(rd, prof))
				return PERFEX_EXIT_INTERNAL;
			printf("]}");
			continue;
		}
		for (i = 0; i < n; i++) {
			struct perfctr_profile_entry e = { .sz = sizeof(e) };

			perfctr_profile__entry(prof, i, &e);
			printf("%s\n  {\"overhead\": %.4f, \"samples\": %" PRIu64
			       ", \"period\": %" PRIu64, i ? "," : "",
			       total ? 100.0 * e.weight / total : 0.0,
			       e.samples, e.weight);
			for (k = 0; k < rep->nr_keys; k++) {
				printf(", \"%s\": ", perfctr_sort_key_name(rep->keys[k]));
				jout_str(stdout, e.keys[k]);
			}
			if (has_pid)
				json_ppid(rd, e.pid);
			printf(", \"kernel\": %s}", e.kernel ? "true" : "false");
		}
		printf("]}");
	}
	printf("\n]}\n");
	return 0;
}

/* The profile of the folded stacks and the flame graph: the event
 * --event names, or the first that has samples (NULL: none has). */
static struct perfctr_profile *chosen_profile(struct perfctr_reader *rd, struct report *rep,
					      size_t *idx)
{
	size_t a;

	for (a = 0; a < rep->nr_profiles; a++) {
		if (!profile_shown(rep, a))
			continue;
		if (rep->event ? !strcmp(perfctr_reader__event_name(rd, a), rep->event)
			       : perfctr_profile__samples(rep->profiles[a]) > 0) {
			*idx = a;
			return rep->profiles[a];
		}
	}
	return NULL;
}

/* --event names an event of the file?  Otherwise say which there are. */
static int check_event(struct perfctr_reader *rd, const struct report *rep)
{
	char names[512];
	size_t a, n = 0;

	if (!rep->event)
		return 0;
	names[0] = '\0';
	for (a = 0; a < rep->nr_profiles; a++) {
		if (!strcmp(perfctr_reader__event_name(rd, a), rep->event))
			return 0;
		if (n < sizeof(names))
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s'%s'",
					      a ? ", " : "", perfctr_reader__event_name(rd, a));
	}
	perfex_error("no event '%s' in '%s'", rep->event, rep->input);
	perfex_hint("the events there are %s", names);
	return PERFEX_EXIT_USAGE;
}

/* --wall: the file has time to merge. */
static int check_wall(struct perfctr_reader *rd, const struct report *rep)
{
	size_t a;

	if (!rep->wall)
		return 0;
	for (a = 0; a < perfctr_reader__nr_events(rd); a++)
		if (time_event(rd, a))
			return 0;
	perfex_error("--wall: no cpu-clock, task-clock or offcpu-time "
		     "samples in '%s'", rep->input);
	perfex_hint("record them with perfex record --off-cpu -e cpu-clock");
	return PERFEX_EXIT_USAGE;
}

static int write_flame(struct perfctr_reader *rd, struct report *rep)
{
	char subtitle[512];
	struct perfctr_profile *prof;
	size_t idx = 0;
	FILE *f;
	int err;

	prof = chosen_profile(rd, rep, &idx);
	f = fopen(rep->flame, "we");
	if (!f) {
		perfex_error("cannot create '%s': %s", rep->flame, strerror(errno));
		return PERFEX_EXIT_IO;
	}
	snprintf(subtitle, sizeof(subtitle), "event '%s' in %s",
		 prof ? profile_name(rd, rep, idx) : "-", rep->input);
	{
		/* Off-CPU and wall-clock profiles weigh time. */
		struct report_flame_opts fopts = {
			.subtitle = subtitle,
			.unit = prof && (rep->wall || offcpu_event(rd, idx)) ?
				"ns" : NULL,
		};
		struct perfctr_profile *empty = NULL;

		if (!prof)
			prof = empty = perfctr_profile__new(NULL);
		err = prof ? report_write_flame_svg(prof, f, &fopts) : -ENOMEM;
		perfctr_profile__delete(empty);
	}
	if (fclose(f) || err) {
		perfex_error("cannot write '%s': %s", rep->flame,
			     strerror(err ? -err : errno));
		return PERFEX_EXIT_IO;
	}
	return 0;
}

/* --speedscope and --gecko: each viewer's file of the samples collected
 * (speedscope: every event unless --event names one; Gecko: the event of
 * the flame graph). */
static int write_viewer(struct perfctr_reader *rd, struct report *rep,
			struct report_viewers *viewers, const char *path,
			bool gecko)
{
	size_t idx = SIZE_MAX;
	FILE *f;
	int err;

	if ((gecko || rep->event) && !chosen_profile(rd, rep, &idx))
		idx = SIZE_MAX - 1;	/* no samples: no thread */
	f = fopen(path, "we");
	if (!f) {
		perfex_error("cannot create '%s': %s", path, strerror(errno));
		return PERFEX_EXIT_IO;
	}
	err = gecko ? report_write_gecko(viewers, rd, idx, f) :
		      report_write_speedscope(viewers, rd, idx, rep->input, f);
	if (fclose(f) && !err)
		err = -errno;
	if (err == -ENOMEM) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	if (err) {
		perfex_error("cannot write '%s': %s", path, strerror(-err));
		return PERFEX_EXIT_IO;
	}
	return 0;
}

/* The whole file as one pprof profile (the table's samples and periods,
 * one value column per event; see perfctr_pprof__add_reader()). */
static int write_pprof(struct perfctr_reader *rd, const struct report *rep)
{
	struct perfctr_perfdata *pd = perfctr_reader__perfdata(rd);
	const char *host = perfctr_perfdata__string(pd, PERFCTR_FEAT_HOSTNAME);
	uint64_t first, last;
	char comment[512];
	PERFCTR_OPTS(perfctr_pprof_opts, opts, .comment = comment,
		     .wall = rep->wall);
	struct perfctr_pprof *pp;
	bool to_stdout = !strcmp(rep->pprof, "-");
	int64_t n;
	int fd = -1, err;

	snprintf(comment, sizeof(comment), "perfex report of '%s'%s%s",
		 rep->input, host ? ", recorded on " : "", host ? host : "");
	if (perfctr_perfdata__sample_time(pd, &first, &last) == 0 &&
	    last >= first)
		opts.duration_nanos = (int64_t)(last - first);
	pp = perfctr_pprof__new(&opts);
	if (!pp) {
		perfex_error("cannot make a pprof profile: %s", strerror(errno));
		return PERFEX_EXIT_INTERNAL;
	}
	n = perfctr_pprof__add_reader(pp, rd);
	if (n < 0) {
		perfctr_pprof__delete(pp);
		if (n == -ENOMEM) {
			perfex_error("out of memory");
			return PERFEX_EXIT_INTERNAL;
		}
		return perfex_reader_error(rep->input, (int)n);
	}
	fd = to_stdout ? STDOUT_FILENO :
	     open(rep->pprof, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perfex_error("cannot create '%s': %s", rep->pprof, strerror(errno));
		perfctr_pprof__delete(pp);
		return PERFEX_EXIT_IO;
	}
	err = perfctr_pprof__write(pp, fd);
	if (!to_stdout && close(fd) && !err)
		err = -errno;
	perfctr_pprof__delete(pp);
	if (err) {
		perfex_error("cannot write '%s': %s", rep->pprof, strerror(-err));
		return PERFEX_EXIT_IO;
	}
	if (!n)
		fprintf(stderr, "perfex: note: '%s' has no samples: '%s' is an empty profile\n",
			rep->input, rep->pprof);
	return 0;
}

/* @word is one of the comma-separated items of @list. */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);

	while (*list) {
		size_t n = strcspn(list, ",");

		if (n == len && !strncmp(list, word, len))
			return true;
		list += n;
		if (*list)
			list++;
	}
	return false;
}

static perfex_result report_option(struct perfex_parse *p, void *ctx)
{
	struct report *rep = ctx;
	int r;

	switch (p->opt->id) {
	case OPT_INPUT:
		rep->input = p->arg;
		break;
	case OPT_SORT:
		r = report_sort_option(p, rep->keys, &rep->nr_keys, true);
		if (r != PERFEX_GO_ON)
			return r;
		rep->ipc_column = has_word(p->arg, "symbol");
		break;
	case OPT_CALL_GRAPH:
		if (!strcmp(p->arg, "caller"))
			rep->callgraph = PERFCTR_CALLGRAPH_CALLER;
		else if (!strcmp(p->arg, "callee"))
			rep->callgraph = PERFCTR_CALLGRAPH_CALLEE;
		else
			return perfex_opt_error(p, "expects caller or callee "
						"(not '%s')", p->arg);
		break;
	case OPT_STDIO:
		break;
	case OPT_KALLSYMS:
		rep->kallsyms = p->arg;
		break;
	case OPT_NO_DEMANGLE:
		rep->no_demangle = true;
		break;
	case OPT_PERCENT_LIMIT: {
		char *end;

		errno = 0;
		rep->percent_limit = strtod(p->arg, &end);
		if (errno || *end || end == p->arg || rep->percent_limit < 0 ||
		    rep->percent_limit > 100)
			return perfex_opt_error(p, "expects a percentage, 0 to "
						"100 (not '%s')", p->arg);
		break;
	}
	default:
		break;
	}
	return -1;
}

/* The outputs asked for go together.  Return -1, or an exit status. */
static int check_outputs(const struct report *rep)
{
	if (rep->wall && rep->event) {
		perfex_error("--wall and --event exclude each other");
		perfex_hint("--wall merges the clocks and offcpu-time; --event "
			    "shows one event");
		return PERFEX_EXIT_USAGE;
	}
	if (rep->folded + rep->json + !!rep->pprof > 1) {
		perfex_error("--folded, --json and --pprof exclude each other");
		return PERFEX_EXIT_USAGE;
	}
	if (rep->pprof && (rep->speedscope || rep->gecko)) {
		perfex_error("--pprof excludes --speedscope and --gecko");
		perfex_hint("run perfex report once for each");
		return PERFEX_EXIT_USAGE;
	}
	if (rep->pprof && !perfctr_pprof_available()) {
		perfex_error("cannot write '%s': perfex was built without protobuf-c",
			     rep->pprof);
		perfex_hint("install libprotobuf-c-dev and protobuf-c-compiler (scripts/install-deps), then rebuild");
		return PERFEX_EXIT_INTERNAL;
	}
	if (rep->annotate && (rep->folded || rep->json || rep->pprof || rep->flame)) {
		perfex_error("--annotate excludes --folded, --json, --pprof and --flame");
		return PERFEX_EXIT_USAGE;
	}
	return -1;
}

/* A profile per event of the file (and the --wall one).  Return 0, or an
 * exit status; rep->profiles is freed by the caller either way. */
static int make_profiles(struct perfctr_reader *rd, struct report *rep)
{
	size_t a;

	rep->nr_profiles = perfctr_reader__nr_events(rd) + rep->wall;
	rep->profiles = calloc(rep->nr_profiles + 1, sizeof(*rep->profiles));
	for (a = 0; rep->profiles && a < rep->nr_profiles; a++) {
		/* Frame strings come from the reader's symbols object:
		 * they stay put while the profiles live.  The stacks of
		 * time (off-CPU, wall-clock) add up their periods. */
		PERFCTR_OPTS(perfctr_profile_opts, popts, .keys = rep->keys,
			     .nr_keys = rep->nr_keys, .callgraph = rep->callgraph,
			     .stable_strings = true,
			     .stacks_by_weight = offcpu_event(rd, a) ||
						 (rep->wall &&
						  a == rep->nr_profiles - 1));

		rep->profiles[a] = perfctr_profile__new(&popts);
		if (!rep->profiles[a])
			break;
	}
	if (!rep->profiles || a < rep->nr_profiles) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	return 0;
}

/*
 * The outputs asked for, from the profiles made (@samples of them): the
 * files first (flame graph, viewers), then stdout's one (the folded
 * stacks, the JSON, or the tables).  Return 0 or an exit status.
 */
static int write_outputs(struct perfctr_reader *rd, struct report *rep,
			 struct report_viewers *viewers, uint64_t samples)
{
	int ret = 0, r;

	if (rep->flame && (ret = write_flame(rd, rep)))
		return ret;
	if (rep->speedscope &&
	    (ret = write_viewer(rd, rep, viewers, rep->speedscope, false)))
		return ret;
	if (rep->gecko && (ret = write_viewer(rd, rep, viewers, rep->gecko, true)))
		return ret;
	if (rep->folded) {
		size_t idx;
		struct perfctr_profile *prof = chosen_profile(rd, rep, &idx);

		r = prof ? report_write_folded(prof, stdout) : 0;
		if (r < 0) {
			perfex_error("cannot write the folded stacks: %s",
				     strerror(-r));
			return PERFEX_EXIT_IO;
		}
		return 0;
	}
	if (rep->json)
		return print_json(rd, rep);
	print_header(rd, rep);
	for (size_t a = 0; a < rep->nr_profiles && !ret; a++) {
		if (tracking_only(rd, rep, a) || !profile_shown(rep, a))
			continue;
		if (tree_mode(rep))
			ret = print_proc_tree(rd, rep, a);
		else
			print_table(rd, rep, a);
	}
	if (!samples)
		printf("# no samples\n");
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report rep = {
		.input = "perf.data",
		.keys = { PERFCTR_SORT_COMM, PERFCTR_SORT_DSO, PERFCTR_SORT_SYM },
		.nr_keys = 3,
	};
	PERFCTR_OPTS(perfctr_reader_opts, ropts, .callchain = true);
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	struct perfctr_reader_stats stats = { .sz = sizeof(stats) };
	struct report_viewers *viewers = NULL;
	struct perfctr_reader *rd;
	struct perfex_parse p;
	char unwind[512];
	int ret = 0, r;
	size_t a;

	r = perfex_options_parse(&p, PERFEX_CMD_REPORT, argc, argv, false,
				 report_option, &rep);
	if (r >= 0)
		return r;
	ropts.no_demangle = rep.no_demangle;
	if (optind < argc) {
		perfex_error("unexpected argument '%s'", argv[optind]);
		perfex_hint("perfex report --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	r = check_outputs(&rep);
	if (r >= 0)
		return r;
	if (perfex_dry_run)
		return 0;
	if (rep.annotate) {
		struct annotate_opts ao = {
			.input = rep.input, .symbol = rep.annotate,
			.kallsyms = rep.kallsyms, .no_demangle = rep.no_demangle,
		};

		return annotate_run(&ao);
	}

	ropts.kallsyms = rep.kallsyms;
	for (a = 0; a < rep.nr_keys; a++)
		rep.srcline |= rep.keys[a] == PERFCTR_SORT_SRCLINE;
	rd = perfex_reader_open(rep.input, &ropts, &ret);
	if (!rd)
		return ret;
	if (rep.pprof) {
		ret = write_pprof(rd, &rep);
		perfctr_reader__close(rd);
		return ret;
	}
	ret = make_profiles(rd, &rep);
	if (ret)
		goto out;
	ret = check_event(rd, &rep);
	if (!ret)
		ret = check_wall(rd, &rep);
	if (ret)
		goto out;
	if ((rep.speedscope || rep.gecko) && !(viewers = report_viewers__new())) {
		perfex_error("out of memory");
		ret = PERFEX_EXIT_INTERNAL;
		goto out;
	}
	while ((r = perfctr_reader__next(rd, &rs)) > 0) {
		ret = add_sample(&rep, rd, &rs, viewers);
		if (ret)
			goto out;
	}
	if (r < 0) {
		ret = perfex_reader_error(rep.input, r);
		goto out;
	}
	perfctr_reader__stats(rd, SIZE_MAX, &stats);
	/* The table's header and the JSON say it; the others have no room. */
	if ((rep.folded || rep.flame) &&
	    perfex_unwind_summary(&stats, unwind, sizeof(unwind)) &&
	    strncmp(unwind, "0 ", 2))
		fprintf(stderr, "perfex: note: DWARF call chains: %s\n", unwind);
	if (rep.callgraph != PERFCTR_CALLGRAPH_NONE && !rep.saw_callchain &&
	    stats.samples)
		fprintf(stderr, "perfex: note: '%s' has no callchains (record with -g)\n",
			rep.input);
	ret = write_outputs(rd, &rep, viewers, stats.samples);
out:
	if (fflush(stdout) && !ret) {
		perfex_error("cannot write the report: %s", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
	for (a = 0; rep.profiles && a < rep.nr_profiles; a++)
		perfctr_profile__delete(rep.profiles[a]);
	free(rep.profiles);
	report_viewers__delete(viewers);
	perfctr_reader__close(rd);
	return ret;
}
