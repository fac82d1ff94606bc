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

#include "options.h"
#include "perfex.h"
#include "report.h"

struct report {
	const char *input;
	enum perfctr_sort_key keys[PERFCTR_SORT_NR];
	size_t nr_keys;
	enum perfctr_callgraph_order callgraph;
	bool folded, json;
	const char *flame;
	const char *pprof;
	const char *event;	/* of the folded stacks and flame graph */
	const char *kallsyms;
	double percent_limit;
	bool no_demangle;
	struct perfctr_profile **profiles;	/* per attr */
	size_t nr_profiles;
	bool saw_callchain;
};

static int add_sample(struct report *rep, const struct perfctr_reader_sample *rs)
{
	const struct perfctr_sample *s = rs->sample;
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
	if (rs->nr_frames > 1)
		rep->saw_callchain = true;
	if (perfctr_profile__add(rep->profiles[rs->event_idx], &ps)) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static const char *column_title(enum perfctr_sort_key key)
{
	switch (key) {
	case PERFCTR_SORT_COMM: return "Command";
	case PERFCTR_SORT_DSO: return "Shared Object";
	case PERFCTR_SORT_SYM: return "Symbol";
	case PERFCTR_SORT_PID: return "Pid";
	case PERFCTR_SORT_TID: return "Tid";
	case PERFCTR_SORT_CPU: return "CPU";
	default: return "?";
	}
}

/* The text of key @k of a row as the table shows it. */
static const char *cell(const struct report *rep,
			const struct perfctr_profile_entry *e, size_t k,
			char *buf, size_t size)
{
	switch (rep->keys[k]) {
	case PERFCTR_SORT_DSO:
		return base_name(e->keys[k]);
	case PERFCTR_SORT_SYM:
		snprintf(buf, size, "[%c] %s", e->kernel ? 'k' : '.', e->keys[k]);
		return buf;
	default:
		return e->keys[k];
	}
}

static void print_header(struct perfctr_reader *rd, const struct report *rep)
{
	struct perfctr_perfdata *pd = perfctr_reader__perfdata(rd);
	struct perfctr_reader_stats stats = { .sz = sizeof(stats) };
	const struct perfctr_reader_stats *st = &stats;
	const char *host = perfctr_perfdata__string(pd, PERFCTR_FEAT_HOSTNAME);
	const char *os = perfctr_perfdata__string(pd, PERFCTR_FEAT_OSRELEASE);
	const char *const *argv;
	int argc = perfctr_perfdata__cmdline(pd, &argv), i;
	char unwind[512];

	perfctr_reader__stats(rd, SIZE_MAX, &stats);
	printf("# perfex report of '%s'\n", rep->input);
	if (host || os)
		printf("# recorded on %s, Linux %s\n", host ? host : "?",
		       os ? os : "?");
	if (argc > 0) {
		printf("# cmdline:");
		for (i = 0; i < argc; i++)
			printf(" %s", argv[i]);
		printf("\n");
	}
	printf("# Lost samples: %" PRIu64 " (PERF_RECORD_LOST %" PRIu64
	       ", PERF_RECORD_LOST_SAMPLES %" PRIu64 ")\n",
	       st->lost + st->lost_samples, st->lost, st->lost_samples);
	if (st->bad_samples)
		printf("# Undecodable samples skipped: %" PRIu64 "\n",
		       st->bad_samples);
	if (perfex_unwind_summary(st, unwind, sizeof(unwind)))
		printf("# DWARF call chains: %s\n", unwind);
	if (!perfctr_symbols_have_elf())
		printf("# note: built without libelf: user-space addresses are not symbolised\n");
	printf("#\n");
}

static void print_table(struct perfctr_reader *rd, struct report *rep, size_t idx)
{
	struct perfctr_profile *prof = rep->profiles[idx];
	size_t n = perfctr_profile__nr_entries(prof), i, k;
	size_t width[PERFCTR_SORT_NR];
	uint64_t total = perfctr_profile__weight(prof);
	struct perfctr_reader_stats st = { .sz = sizeof(st) };
	char buf[1024];

	perfctr_reader__stats(rd, idx, &st);
	printf("# Samples: %" PRIu64 " of event '%s'\n",
	       perfctr_profile__samples(prof), perfctr_reader__event_name(rd, idx));
	printf("# Event count (approx.): %" PRIu64 "\n", total);
	if (st.lost)
		printf("# Lost: %" PRIu64 "\n", st.lost);
	printf("#\n");
	for (k = 0; k < rep->nr_keys; k++)
		width[k] = strlen(column_title(rep->keys[k]));
	for (i = 0; i < n; i++) {
		struct perfctr_profile_entry e = { .sz = sizeof(e) };

		perfctr_profile__entry(prof, i, &e);
		for (k = 0; k + 1 < rep->nr_keys; k++) {
			size_t len = strlen(cell(rep, &e, k, buf, sizeof(buf)));

			if (len > width[k])
				width[k] = len;
		}
	}
	printf("# Overhead   Samples");
	for (k = 0; k < rep->nr_keys; k++)
		printf("  %-*s", (int)(k + 1 < rep->nr_keys ? width[k] : 0),
		       column_title(rep->keys[k]));
	printf("\n# ........  ........");
	for (k = 0; k < rep->nr_keys; k++) {
		size_t dots = k + 1 < rep->nr_keys ? width[k] :
			      strlen(column_title(rep->keys[k]));

		printf("  ");
		while (dots--)
			putchar('.');
	}
	printf("\n#\n");
	for (i = 0; i < n; i++) {
		struct perfctr_profile_entry e = { .sz = sizeof(e) };
		double pct;

		perfctr_profile__entry(prof, i, &e);
		pct = total ? 100.0 * e.weight / total : 0.0;
		if (pct < rep->percent_limit)
			continue;
		printf("%9.2f%%  %8" PRIu64, pct, e.samples);
		for (k = 0; k < rep->nr_keys; k++)
			printf("  %-*s", (int)(k + 1 < rep->nr_keys ? width[k] : 0),
			       cell(rep, &e, k, buf, sizeof(buf)));
		printf("\n");
		if (rep->callgraph != PERFCTR_CALLGRAPH_NONE)
			report_print_callgraph(prof, i, stdout,
					       rep->percent_limit);
	}
	printf("\n");
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* A side-band-only event (the dummy event that overwrite and snapshot
 * recording read COMM/MMAP records through) with no samples: not shown,
 * as it is no event the user asked for. */
static bool tracking_only(struct perfctr_reader *rd, const struct report *rep, size_t a)
{
	const struct perf_event_attr *attr = perfctr_reader__event_attr(rd, a);

	return attr && attr->type == PERF_TYPE_SOFTWARE &&
	       attr->config == PERF_COUNT_SW_DUMMY &&
	       !perfctr_profile__samples(rep->profiles[a]);
}

static void print_json(struct perfctr_reader *rd, struct report *rep)
{
	struct perfctr_reader_stats stats = { .sz = sizeof(stats) };
	struct perfctr_reader_stats ev = { .sz = sizeof(ev) };
	const struct perfctr_reader_stats *st = &stats;
	size_t a, i, k, shown;

	perfctr_reader__stats(rd, SIZE_MAX, &stats);
	printf("{\"input\": ");
	json_string(rep->input);
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
			json_string(perfctr_unwind_stop_str((int)i));
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

		if (tracking_only(rd, rep, a))
			continue;
		perfctr_reader__stats(rd, a, &ev);
		printf("%s\n {\"event\": ", shown++ ? "," : "");
		json_string(perfctr_reader__event_name(rd, a));
		printf(", \"samples\": %" PRIu64 ", \"period\": %" PRIu64
		       ", \"lost\": %" PRIu64 ", \"rows\": [",
		       perfctr_profile__samples(prof), total, ev.lost);
		for (i = 0; i < n; i++) {
			struct perfctr_profile_entry e = { .sz = sizeof(e) };

			perfctr_profile__entry(prof, i, &e);
			printf("%s\n  {\"overhead\": %.4f, \"samples\": %" PRIu64
			       ", \"period\": %" PRIu64, i ? "," : "",
			       total ? 100.0 * e.weight / total : 0.0,
			       e.samples, e.weight);
			for (k = 0; k < rep->nr_keys; k++) {
				printf(", \"%s\": ", perfctr_sort_key_name(rep->keys[k]));
				json_string(e.keys[k]);
			}
			printf(", \"kernel\": %s}", e.kernel ? "true" : "false");
		}
		printf("]}");
	}
	printf("\n]}\n");
}

/* The profile of the folded stacks and the flame graph: the event
 * --event names, or the first that has samples (NULL: none has). */
static struct perfctr_profile *chosen_profile(struct perfctr_reader *rd, struct report *rep,
					      size_t *idx)
{
	size_t a;

	for (a = 0; a < rep->nr_profiles; a++) {
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
		 prof ? perfctr_reader__event_name(rd, idx) : "-", rep->input);
	{
		struct report_flame_opts fopts = { .subtitle = subtitle };
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

/* The whole file as one pprof profile (the table's samples and periods,
 * one value column per event; see perfctr_pprof__add_reader()). */
static int write_pprof(struct perfctr_reader *rd, const struct report *rep)
{
	struct perfctr_perfdata *pd = perfctr_reader__perfdata(rd);
	const char *host = perfctr_perfdata__string(pd, PERFCTR_FEAT_HOSTNAME);
	uint64_t first, last;
	char comment[512];
	PERFCTR_OPTS(perfctr_pprof_opts, opts, .comment = comment);
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

static int report_option(struct perfex_parse *p, void *ctx)
{
	struct report *rep = ctx;
	int r;

	switch (p->opt->id) {
	case OPT_INPUT:
		rep->input = p->arg;
		break;
	case OPT_SORT: {
		const char *bad = NULL;

		r = perfctr_sort_keys_parse(p->arg, rep->keys, PERFCTR_SORT_NR,
					    &bad);
		if (r < 0) {
			perfex_error("option '%s': unknown or repeated sort key "
				     "'%.*s' in '%s'", p->name,
				     bad ? (int)strcspn(bad, ",") : 0,
				     bad ? bad : "", p->arg);
			perfex_hint("sort keys are comm, dso, sym, pid, tid, cpu");
			return PERFEX_EXIT_USAGE;
		}
		rep->nr_keys = (size_t)r;
		break;
	}
	case OPT_CALL_GRAPH:
		if (!strcmp(p->arg, "caller"))
			rep->callgraph = PERFCTR_CALLGRAPH_CALLER;
		else if (!strcmp(p->arg, "callee"))
			rep->callgraph = PERFCTR_CALLGRAPH_CALLEE;
		else
			return perfex_opt_error(p, "expects caller or callee "
						"(not '%s')", p->arg);
		break;
	case OPT_JSON:
		rep->json = true;
		break;
	case OPT_STDIO:
		break;
	case OPT_FOLDED:
		rep->folded = true;
		break;
	case OPT_FLAME:
		rep->flame = p->arg;
		break;
	case OPT_PPROF:
		rep->pprof = p->arg;
		break;
	case OPT_EVENT:
		rep->event = p->arg;
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
	if (rep.folded + rep.json + !!rep.pprof > 1) {
		perfex_error("--folded, --json and --pprof exclude each other");
		return PERFEX_EXIT_USAGE;
	}
	if (rep.pprof && !perfctr_pprof_available()) {
		perfex_error("cannot write '%s': perfex was built without protobuf-c",
			     rep.pprof);
		perfex_hint("install libprotobuf-c-dev and protobuf-c-compiler (scripts/install-deps), then rebuild");
		return PERFEX_EXIT_INTERNAL;
	}

	ropts.kallsyms = rep.kallsyms;
	rd = perfex_reader_open(rep.input, &ropts, &ret);
	if (!rd)
		return ret;
	if (rep.pprof) {
		ret = write_pprof(rd, &rep);
		perfctr_reader__close(rd);
		return ret;
	}
	rep.nr_profiles = perfctr_reader__nr_events(rd);
	rep.profiles = calloc(rep.nr_profiles + 1, sizeof(*rep.profiles));
	for (a = 0; rep.profiles && a < rep.nr_profiles; a++) {
		/* Frame strings come from the reader's symbols object:
		 * they stay put while the profiles live. */
		PERFCTR_OPTS(perfctr_profile_opts, popts, .keys = rep.keys,
			     .nr_keys = rep.nr_keys, .callgraph = rep.callgraph,
			     .stable_strings = true);

		rep.profiles[a] = perfctr_profile__new(&popts);
		if (!rep.profiles[a])
			break;
	}
	if (!rep.profiles || a < rep.nr_profiles) {
		perfex_error("out of memory");
		ret = PERFEX_EXIT_INTERNAL;
		goto out;
	}
	ret = check_event(rd, &rep);
	if (ret)
		goto out;
	while ((r = perfctr_reader__next(rd, &rs)) > 0) {
		ret = add_sample(&rep, &rs);
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
	if (rep.flame) {
		ret = write_flame(rd, &rep);
		if (ret)
			goto out;
	}
	if (rep.folded) {
		size_t idx;
		struct perfctr_profile *prof = chosen_profile(rd, &rep, &idx);

		r = prof ? report_write_folded(prof, stdout) : 0;
		if (r < 0) {
			perfex_error("cannot write the folded stacks: %s",
				     strerror(-r));
			ret = PERFEX_EXIT_IO;
		}
		goto out;
	}
	if (rep.json) {
		print_json(rd, &rep);
		goto out;
	}
	print_header(rd, &rep);
	for (a = 0; a < rep.nr_profiles; a++)
		if (!tracking_only(rd, &rep, a))
			print_table(rd, &rep, a);
	if (!stats.samples)
		printf("# no samples\n");
out:
	if (fflush(stdout) && !ret) {
		perfex_error("cannot write the report: %s", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
	for (a = 0; rep.profiles && a < rep.nr_profiles; a++)
		perfctr_profile__delete(rep.profiles[a]);
	free(rep.profiles);
	perfctr_reader__close(rd);
	return ret;
}
