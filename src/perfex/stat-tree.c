/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex --per-process: the command's process tree after the totals —
 * each process's own counts and its children's (its descendants'), the
 * tree indented, siblings by the first event, cut by --tree-limit; CSV and
 * JSON carry every row (docs/perfex.1, docs/json.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "json-out.h"
#include "stat.h"

struct tree_view {
	const struct stat_report *r;
	const struct perfctr_tree *tree;
	size_t nr;
	size_t sort_ev;		/* tree event of the first row, or NO_IDX */
	bool *shown;
	size_t hidden;
};

static struct perfctr_count sub_of(const struct perfctr_tree *t, size_t p,
				   size_t ev)
{
	struct perfctr_count c = { 0 };

	if (ev != STAT_NO_IDX)
		perfctr_tree__subtree(t, p, ev, &c);
	return c;
}

/* Children: subtree minus self, times too. */
static void split(const struct perfctr_tree *t, size_t p, size_t ev,
		  struct perfctr_count *self, struct perfctr_count *children)
{
	struct perfctr_count sub = sub_of(t, p, ev);

	memset(self, 0, sizeof(*self));
	self->status = PERFCTR_COUNT_NOT_SUPPORTED;
	if (ev != STAT_NO_IDX)
		perfctr_tree__self(t, p, ev, self);
	*children = sub;
	children->value = sub.value - self->value;
	children->time_enabled = sub.time_enabled - self->time_enabled;
	children->time_running = sub.time_running - self->time_running;
	if (perfctr_tree__child(t, p, 0) == PERFCTR_TREE_NONE)
		children->status = PERFCTR_COUNT_NOT_COUNTED;
}

/* Thread @k of process @p: its count of event @ev (not supported for
 * an event the tree does not count). */
static struct perfctr_count thread_of(const struct perfctr_tree *t, size_t p,
				      size_t k, const struct stat_event *ev)
{
	struct perfctr_count c = { .status = PERFCTR_COUNT_NOT_SUPPORTED };

	if (ev->session_idx != STAT_NO_IDX)
		perfctr_tree__thread_count(t, p, k, ev->session_idx, &c);
	return c;
}

static const struct tree_view *sort_view;

static int by_first_event(const void *a, const void *b)
{
	size_t pa = *(const size_t *)a, pb = *(const size_t *)b;
	uint64_t va = sub_of(sort_view->tree, pa, sort_view->sort_ev).value;
	uint64_t vb = sub_of(sort_view->tree, pb, sort_view->sort_ev).value;

	if (va != vb)
		return va > vb ? -1 : 1;
	return pa < pb ? -1 : pa > pb;
}

/* Which rows --tree-limit keeps: the N largest subtrees of the first
 * event, or those of at least P% of the whole; always their ancestors. */
static int choose_rows(struct tree_view *v)
{
	const struct stat_config *cfg = v->r->cfg;
	size_t *order;

	v->shown = calloc(v->nr ? v->nr : 1, sizeof(*v->shown));
	if (!v->shown)
		return -ENOMEM;
	if (!cfg->tree_limit && !cfg->tree_percent) {
		for (size_t p = 0; p < v->nr; p++)
			v->shown[p] = true;
		return 0;
	}
	if (cfg->tree_percent) {
		double whole = (double)sub_of(v->tree, 0, v->sort_ev).value;

		for (size_t p = 0; p < v->nr; p++)
			v->shown[p] = (double)sub_of(v->tree, p, v->sort_ev).value
				      >= whole * cfg->tree_percent / 100.0;
	} else {
		order = malloc(v->nr * sizeof(*order));
		if (!order)
			return -ENOMEM;
		for (size_t p = 0; p < v->nr; p++)
			order[p] = p;
		sort_view = v;
		qsort(order, v->nr, sizeof(*order), by_first_event);
		for (size_t i = 0; i < v->nr && i < cfg->tree_limit; i++)
			v->shown[order[i]] = true;
		free(order);
	}
	/* Parents come before their children: one backward walk. */
	for (size_t p = v->nr; p-- > 1;) {
		struct perfctr_tree_node n = { .sz = sizeof(n) };

		if (v->shown[p] && !perfctr_tree__process(v->tree, p, &n) &&
		    n.parent != PERFCTR_TREE_NONE)
			v->shown[n.parent] = true;
	}
	v->shown[0] = true;
	for (size_t p = 0; p < v->nr; p++)
		v->hidden += !v->shown[p];
	return 0;
}

static void human_value(FILE *out, const struct stat_event *e,
			const struct perfctr_count *c)
{
	if (c->status == PERFCTR_COUNT_NOT_SUPPORTED)
		fprintf(out, " %13s", "<n/s>");
	else if (c->status != PERFCTR_COUNT_OK)
		fprintf(out, " %13s", "-");
	else if (e->is_clock)
		fprintf(out, " %13.2f", (double)c->value / 1e6);
	else
		fprintf(out, " %13" PRIu64, c->value);
}

static void exit_text(const struct perfctr_tree_node *n, char *buf,
		      size_t size)
{
	if (n->running)
		snprintf(buf, size, "run");
	else if (n->exit_status < 0)
		snprintf(buf, size, "?");
	else if (WIFSIGNALED(n->exit_status))
		snprintf(buf, size, "sig%d", WTERMSIG(n->exit_status));
	else
		snprintf(buf, size, "%d", WEXITSTATUS(n->exit_status));
}

static void human_proc(const struct tree_view *v, size_t p)
{
	const struct stat_report *r = v->r;
	FILE *out = r->cfg->out;
	struct perfctr_tree_node n = { .sz = sizeof(n) };
	size_t nc = 0, *kids;
	char status[16];

	if (perfctr_tree__process(v->tree, p, &n))
		return;
	exit_text(&n, status, sizeof(status));
	for (size_t e = 0; e < r->nr_events; e++) {
		struct perfctr_count self, children;

		split(v->tree, p, r->events[e].session_idx, &self, &children);
		human_value(out, &r->events[e], &self);
		human_value(out, &r->events[e], &children);
	}
	fprintf(out, " %8d %5s  %*s%s\n", (int)n.pid, status,
		(int)(2 * n.depth), "", n.comm);
	if (r->cfg->tree_threads && n.nr_threads > 1) {
		for (size_t k = 0; k < n.nr_threads; k++) {
			struct perfctr_tree_node th = { .sz = sizeof(th) };

			if (perfctr_tree__thread(v->tree, p, k, &th))
				continue;
			exit_text(&th, status, sizeof(status));
			for (size_t e = 0; e < r->nr_events; e++) {
				struct perfctr_count c =
					thread_of(v->tree, p, k, &r->events[e]);

				human_value(out, &r->events[e], &c);
				fprintf(out, " %13s", "");
			}
			fprintf(out, " %8d %5s  %*s[%s]\n", (int)th.tid, status,
				(int)(2 * n.depth + 2), "", th.comm);
		}
	}
	kids = malloc((n.nr_children ? n.nr_children : 1) * sizeof(*kids));
	if (!kids)
		return;
	for (size_t c = 0; c < n.nr_children; c++) {
		size_t k = perfctr_tree__child(v->tree, p, c);

		if (k != PERFCTR_TREE_NONE && v->shown[k])
			kids[nc++] = k;
	}
	sort_view = v;
	qsort(kids, nc, sizeof(*kids), by_first_event);
	for (size_t c = 0; c < nc; c++)
		human_proc(v, kids[c]);
	free(kids);
}

static void csv_count(FILE *out, const char *sep,
		      const struct perfctr_count *c)
{
	if (c->status == PERFCTR_COUNT_NOT_SUPPORTED)
		fprintf(out, "%s<not supported>", sep);
	else if (c->status != PERFCTR_COUNT_OK)
		fprintf(out, "%s<not counted>", sep);
	else
		fprintf(out, "%s%" PRIu64, sep, c->value);
}

static void csv_rows(const struct tree_view *v)
{
	const struct stat_report *r = v->r;
	const char *sep = r->cfg->sep;
	FILE *out = r->cfg->out;

	for (size_t p = 0; p < v->nr; p++) {
		struct perfctr_tree_node n = { .sz = sizeof(n) };

		if (perfctr_tree__process(v->tree, p, &n))
			continue;
		for (size_t e = 0; e < r->nr_events; e++) {
			struct perfctr_count self, children;

			split(v->tree, p, r->events[e].session_idx, &self,
			      &children);
			fprintf(out, "process%s%d%s%d%s%d%s%u%s%s%s%s",
				sep, (int)n.pid, sep, (int)n.ppid, sep,
				(int)n.tid, sep, n.depth, sep, n.comm, sep,
				r->events[e].name);
			csv_count(out, sep, &self);
			csv_count(out, sep, &children);
			fprintf(out, "%s%" PRIu64 "%s%" PRIu64 "\n", sep,
				self.time_enabled, sep, self.time_running);
		}
		for (size_t k = 0; r->cfg->tree_threads && k < n.nr_threads; k++) {
			struct perfctr_tree_node th = { .sz = sizeof(th) };

			if (perfctr_tree__thread(v->tree, p, k, &th))
				continue;
			for (size_t e = 0; e < r->nr_events; e++) {
				struct perfctr_count c =
					thread_of(v->tree, p, k, &r->events[e]);

				fprintf(out, "thread%s%d%s%d%s%d%s%u%s%s%s%s",
					sep, (int)th.pid, sep, (int)th.ppid, sep,
					(int)th.tid, sep, th.depth, sep, th.comm,
					sep, r->events[e].name);
				csv_count(out, sep, &c);
				fprintf(out, "%s%s%" PRIu64 "%s%" PRIu64 "\n",
					sep, sep, c.time_enabled, sep,
					c.time_running);
			}
		}
	}
}

void stat_print_tree(const struct stat_report *r)
{
	struct tree_view v = { .r = r, .tree = r->tree };
	FILE *out = r->cfg->out;

	if (!r->tree)
		return;
	v.nr = perfctr_tree__nr_processes(r->tree);
	v.sort_ev = r->nr_events ? r->events[0].session_idx : STAT_NO_IDX;
	if (!v.nr || choose_rows(&v))
		return;
	if (r->cfg->format == STAT_FORMAT_CSV) {
		csv_rows(&v);
	} else {
		fprintf(out, " Process tree (%zu processes), self and children,"
			" by %s:\n\n", v.nr, r->nr_events ?
			r->events[0].name : "-");
		for (size_t e = 0; e < r->nr_events; e++) {
			const char *name = r->events[e].name;
			size_t len = strlen(name);

			fprintf(out, " %27.27s", len > 27 ? name + len - 27 : name);
		}
		fprintf(out, "\n");
		for (size_t e = 0; e < r->nr_events; e++)
			fprintf(out, " %13s %13s", r->events[e].is_clock ?
				"self msec" : "self", "children");
		fprintf(out, " %8s %5s  %s\n", "pid", "exit", "command");
		human_proc(&v, 0);
		if (v.hidden)
			fprintf(out, " (%zu more processes below --tree-limit)\n",
				v.hidden);
		fprintf(out, "\n");
	}
	free(v.shown);
}

static const char *status_text(const struct perfctr_count *c)
{
	return c->status == PERFCTR_COUNT_OK ? "counted" :
	       c->status == PERFCTR_COUNT_NOT_COUNTED ? "not counted" :
	       "not supported";
}

static void json_count(FILE *out, const struct perfctr_count *c)
{
	fprintf(out, "{\"status\": \"%s\", \"value\": ", status_text(c));
	if (c->status == PERFCTR_COUNT_NOT_SUPPORTED)
		fprintf(out, "null");
	else
		fprintf(out, "%" PRIu64, c->value);
	fprintf(out, ", \"time_enabled\": %" PRIu64 ", \"time_running\": %"
		PRIu64 "}", c->time_enabled, c->time_running);
}

static void json_node(FILE *out, const struct perfctr_tree_node *n)
{
	fprintf(out, "\"pid\": %d, \"ppid\": %d, \"tid\": %d, \"comm\": ",
		(int)n->pid, (int)n->ppid, (int)n->tid);
	jout_str(out, n->comm);
	fprintf(out, ", \"start_ns\": %" PRIu64 ", \"end_ns\": ", n->start_ns);
	if (n->running)
		fprintf(out, "null");
	else
		fprintf(out, "%" PRIu64, n->end_ns);
	fprintf(out, ", \"running\": %s, \"exit\": ", n->running ? "true" : "false");
	if (n->running || n->exit_status < 0)
		fprintf(out, "null");
	else if (WIFSIGNALED(n->exit_status))
		fprintf(out, "{\"code\": %d, \"signal\": %d}",
			128 + WTERMSIG(n->exit_status), WTERMSIG(n->exit_status));
	else
		fprintf(out, "{\"code\": %d, \"signal\": null}",
			WEXITSTATUS(n->exit_status));
}

void stat_json_tree(const struct stat_report *r)
{
	const struct perfctr_tree *t = r->tree;
	FILE *out = r->cfg->out;
	size_t nr;

	if (!t)
		return;
	nr = perfctr_tree__nr_processes(t);
	fprintf(out, ",\n  \"processes\": [");
	for (size_t p = 0; p < nr; p++) {
		struct perfctr_tree_node n = { .sz = sizeof(n) };

		if (perfctr_tree__process(t, p, &n))
			continue;
		fprintf(out, "%s\n    {\"index\": %zu, \"parent\": ", p ? "," : "", p);
		if (n.parent == PERFCTR_TREE_NONE)
			fprintf(out, "null");
		else
			fprintf(out, "%zu", n.parent);
		fprintf(out, ", \"depth\": %u, ", n.depth);
		json_node(out, &n);
		fprintf(out, ", \"exe\": ");
		jout_str(out, n.exe);
		fprintf(out, ",\n     \"events\": [");
		for (size_t e = 0; e < r->nr_events; e++) {
			struct perfctr_count self, children;

			split(t, p, r->events[e].session_idx, &self, &children);
			fprintf(out, "%s\n      {\"name\": ", e ? "," : "");
			jout_str(out, r->events[e].name);
			fprintf(out, ", \"self\": ");
			json_count(out, &self);
			fprintf(out, ", \"children\": ");
			json_count(out, &children);
			fputc('}', out);
		}
		fputc(']', out);
		if (r->cfg->tree_threads) {
			fprintf(out, ",\n     \"threads\": [");
			for (size_t k = 0; k < n.nr_threads; k++) {
				struct perfctr_tree_node th = { .sz = sizeof(th) };

				if (perfctr_tree__thread(t, p, k, &th))
					continue;
				fprintf(out, "%s\n      {", k ? "," : "");
				json_node(out, &th);
				fprintf(out, ", \"events\": [");
				for (size_t e = 0; e < r->nr_events; e++) {
					struct perfctr_count c =
						thread_of(t, p, k, &r->events[e]);

					fprintf(out, "%s{\"name\": ", e ? ", " : "");
					jout_str(out, r->events[e].name);
					fprintf(out, ", \"self\": ");
					json_count(out, &c);
					fputc('}', out);
				}
				fprintf(out, "]}");
			}
			fputc(']', out);
		}
		fputc('}', out);
	}
	fprintf(out, "\n  ]");
}
