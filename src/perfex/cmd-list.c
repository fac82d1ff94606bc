// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex list — the events this machine offers, from perfctr_event_list():
 * generic hardware and cache events (where a PMU counts them), software
 * events, tracepoints grouped by subsystem, the named events of sysfs PMUs,
 * and the raw and breakpoint syntaxes.  A FILTER keeps the events whose
 * name (or description) contains it, or whose name matches it as a glob.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <perfctr/perfctr.h>

#include "json-out.h"
#include "options.h"
#include "perfex.h"

#define LIST_SCHEMA_VERSION 1

struct kind_desc {
	enum perfctr_event_kind kind;
	const char *key;	/* JSON */
	/* The words that select the class as a FILTER, or NULL: "raw" and
	 * "bp" stay substrings (raw_syscalls:*). */
	const char *filter, *alias;
	const char *title;	/* text heading */
	const char *tag;	/* text column */
};

/* The order of the text report. */
static const struct kind_desc kinds[] = {
	{ PERFCTR_EVENT_HARDWARE, "hardware", "hardware", "hw", "Hardware events", "hardware event" },
	{ PERFCTR_EVENT_CACHE, "cache", "cache", "cache", "Hardware cache events", "cache event" },
	{ PERFCTR_EVENT_SOFTWARE, "software", "software", "sw", "Software events", "software event" },
	{ PERFCTR_EVENT_TRACEPOINT, "tracepoint", "tracepoint", "tracepoints", "Tracepoints", "tracepoint" },
	{ PERFCTR_EVENT_PMU, "pmu", "pmu", "pmu", "PMU events", NULL },
	{ PERFCTR_EVENT_RAW, "raw", NULL, NULL, "Raw events", "raw event" },
	{ PERFCTR_EVENT_BREAKPOINT, "breakpoint", NULL, NULL, "Breakpoints", "breakpoint" },
};

static const struct kind_desc *kind_of(enum perfctr_event_kind kind)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == kind)
			return &kinds[i];
	return NULL;
}

struct entry {
	size_t seq;		/* the library's order */
	enum perfctr_event_kind kind;
	char *name, *desc, *pmu, *topic;
};

struct listing {
	struct entry *entries;
	size_t nr, alloc;
	const char *filter;
	const struct kind_desc *only;	/* a class filter */
	bool glob;
	const char *tracefs;	/* mount point */
	int err;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static bool matches(const struct listing *l, const struct perfctr_event_info *ev)
{
	if (l->only)
		return ev->kind == l->only->kind;
	if (!l->filter)
		return true;
	if (l->glob)
		return fnmatch(l->filter, ev->name, 0) == 0;
	return strcasestr(ev->name, l->filter) ||
	       (ev->desc && strcasestr(ev->desc, l->filter)) ||
	       (ev->pmu && !strcasecmp(ev->pmu, l->filter)) ||
	       (ev->topic && !strcasecmp(ev->topic, l->filter));
}

static int collect(const struct perfctr_event_info *ev, void *ctx)
{
	struct listing *l = ctx;
	struct entry *e;

	if (!ev->name || !kind_of(ev->kind) || !matches(l, ev))
		return 0;
	/* Most of tracefs's ftrace/ are the tracer's own record formats: they
	 * have no id and cannot be opened (function and print can). */
	if (ev->kind == PERFCTR_EVENT_TRACEPOINT && !strncmp(ev->name, "ftrace:", 7)) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/events/ftrace/%s/id",
			 l->tracefs, ev->name + 7);
		if (access(path, F_OK))
			return 0;
	}
	if (l->nr == l->alloc) {
		size_t alloc = l->alloc ? 2 * l->alloc : 512;
		struct entry *grown = realloc(l->entries, alloc * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		l->entries = grown;
		l->alloc = alloc;
	}
	e = &l->entries[l->nr];
	e->seq = l->nr;
	e->kind = ev->kind;
	e->name = strdup(ev->name);
	e->desc = dup_or_null(ev->desc && *ev->desc ? ev->desc : NULL);
	e->pmu = dup_or_null(ev->pmu);
	e->topic = dup_or_null(ev->topic);
	if (!e->name || (ev->desc && *ev->desc && !e->desc) ||
	    (ev->pmu && !e->pmu) || (ev->topic && !e->topic)) {
		free(e->name);
		free(e->desc);
		free(e->pmu);
		free(e->topic);
		return -ENOMEM;
	}
	l->nr++;
	return 0;
}

static int kind_rank(enum perfctr_event_kind kind)
{
	return (int)(kind_of(kind) - kinds);
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

/* Class, then the group (subsystem or PMU), then the name.  Hardware,
 * cache and software events keep the library's order (perf's). */
static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int d = kind_rank(a->kind) - kind_rank(b->kind);

	if (d)
		return d;
	if (a->kind == PERFCTR_EVENT_TRACEPOINT && (d = cmp_str(a->topic, b->topic)))
		return d;
	if (a->kind == PERFCTR_EVENT_PMU && (d = cmp_str(a->pmu, b->pmu)))
		return d;
	if (a->kind == PERFCTR_EVENT_TRACEPOINT || a->kind == PERFCTR_EVENT_PMU)
		return strcmp(a->name, b->name);
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static void free_listing(struct listing *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++) {
		free(l->entries[i].name);
		free(l->entries[i].desc);
		free(l->entries[i].pmu);
		free(l->entries[i].topic);
	}
	free(l->entries);
}

/* The subsystem of a tracepoint: its topic, or what precedes the ':'. */
static const char *tp_topic(const struct entry *e, char *buf, size_t size)
{
	const char *colon;

	if (e->topic)
		return e->topic;
	colon = strchr(e->name, ':');
	snprintf(buf, size, "%.*s", colon ? (int)(colon - e->name) : 0, e->name);
	return buf;
}

static void print_text(const struct listing *l)
{
	char topic_buf[256], prev_group[256] = "";
	const struct kind_desc *prev_kind = NULL;
	size_t i;

	for (i = 0; i < l->nr; i++) {
		const struct entry *e = &l->entries[i];
		const struct kind_desc *k = kind_of(e->kind);
		const char *group = NULL;
		char tag[160];

		if (k != prev_kind) {
			printf("%s%s:\n", prev_kind ? "\n" : "", k->title);
			prev_kind = k;
			prev_group[0] = '\0';
		}
		if (e->kind == PERFCTR_EVENT_TRACEPOINT)
			group = tp_topic(e, topic_buf, sizeof(topic_buf));
		else if (e->kind == PERFCTR_EVENT_PMU)
			group = e->pmu ? e->pmu : "";
		if (group && strcmp(group, prev_group)) {
			printf(" %s:\n", group);
			snprintf(prev_group, sizeof(prev_group), "%s", group);
		}
		if (k->tag)
			snprintf(tag, sizeof(tag), "[%s]", k->tag);
		else
			snprintf(tag, sizeof(tag), "[%s event]", e->pmu ? e->pmu : "PMU");
		if (e->desc)
			printf("  %-46s %-18s %s\n", e->name, tag, e->desc);
		else
			printf("  %-46s %s\n", e->name, tag);
	}
}

static void print_json(const struct listing *l, const struct perfctr_info *info)
{
	FILE *out = stdout;
	size_t i;

	fputc('{', out);
	jout_key(out, 2, true, "schema_version");
	fprintf(out, "%d", LIST_SCHEMA_VERSION);
	jout_key(out, 2, false, "filter");
	jout_str(out, l->filter);
	jout_key(out, 2, false, "tracefs");
	fprintf(out, "{\"mounted\": %s, \"readable\": %s}",
		info->tracefs[0] ? "true" : "false",
		info->features & PERFCTR_FEATURE_TRACEPOINTS ? "true" : "false");
	jout_key(out, 2, false, "events");
	fputc('[', out);
	for (i = 0; i < l->nr; i++) {
		const struct entry *e = &l->entries[i];

		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		jout_str(out, e->name);
		fputs(", \"kind\": ", out);
		jout_str(out, kind_of(e->kind)->key);
		fputs(", \"pmu\": ", out);
		jout_str(out, e->pmu);
		fputs(", \"topic\": ", out);
		jout_str(out, e->topic);
		fputs(", \"desc\": ", out);
		jout_str(out, e->desc ? e->desc : "");
		fputc('}', out);
	}
	fputs(l->nr ? "\n  ]\n}\n" : "]\n}\n", out);
}

int cmd_list(int argc, char **argv)
{
	PERFCTR_OPTS(perfctr_info_opts, info_opts, .no_probe = true);
	struct perfctr_info info = { .sz = sizeof(info) };
	struct listing l;
	bool json;
	size_t i;
	int status, err;

	memset(&l, 0, sizeof(l));
	status = perfex_json_options(PERFEX_CMD_LIST, argc, argv, &json);
	if (status >= 0)
		return status;
	if (argc - optind > 1) {
		perfex_error("unexpected argument '%s' (one FILTER at most)",
			     argv[optind + 1]);
		perfex_hint("perfex list --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	if (perfex_dry_run)
		return 0;
	if (optind < argc && (!strcmp(argv[optind], "metrics") ||
			      !strcmp(argv[optind], "metricgroups")))
		return list_metrics(json, !strcmp(argv[optind], "metricgroups"));
	if (optind < argc) {
		l.filter = argv[optind];
		l.glob = strpbrk(l.filter, "*?[") != NULL;
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (kinds[i].filter && (!strcmp(l.filter, kinds[i].filter) ||
						!strcmp(l.filter, kinds[i].alias)))
				l.only = &kinds[i];
	}

	/* Only the tracefs state: no probes, so listing stays fast. */
	if (perfctr_info_ext(&info_opts, &info, NULL, NULL) < 0)
		memset(&info, 0, sizeof(info));

	l.tracefs = info.tracefs;
	err = perfctr_event_list(NULL, collect, &l);
	if (err < 0) {
		perfex_error("cannot list the events: %s", strerror(-err));
		free_listing(&l);
		return PERFEX_EXIT_INTERNAL;
	}
	if (l.nr)
		qsort(l.entries, l.nr, sizeof(*l.entries), cmp_entry);

	if (json) {
		print_json(&l, &info);
	} else {
		print_text(&l);
		if (!l.nr && l.filter)
			perfex_error("no event matches '%s'", l.filter);
		if (!info.tracefs[0]) {
			perfex_hint("tracefs is not mounted: no tracepoints listed");
			perfex_hint("to mount it (as root): mount -t tracefs nodev /sys/kernel/tracing");
		} else if (!(info.features & PERFCTR_FEATURE_TRACEPOINTS)) {
			perfex_hint("tracepoints under %s are not readable by you: "
				    "none listed (run as root)", info.tracefs);
		}
	}
	free_listing(&l);
	if (fflush(stdout) || ferror(stdout)) {
		perfex_error("cannot write the output: %s", strerror(errno));
		return PERFEX_EXIT_IO;
	}
	return 0;
}
