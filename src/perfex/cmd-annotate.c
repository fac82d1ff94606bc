// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex annotate — the instructions and source lines of the functions
 * that have samples in a perf.data file (ours or perf's), with the share
 * of the samples each got, laid out as perf annotate --stdio (or
 * --stdio2) lays them out, or as JSON.  The annotations are the
 * library's (perfctr/annotate.h): disassembled in-process, never through
 * objdump.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfctr/perfctr.h>
#include <perfctr/reader.h>

#include "annotate.h"
#include "json-out.h"
#include "options.h"
#include "perfex.h"

/* perf's --percent-type names, and how its header says them. */
static const struct {
	const char *name;
	const char *shown;
	bool global;
	bool hits;
} percent_types[] = {
	{ "local-period", "local period", false, false },
	{ "global-period", "global period", true, false },
	{ "local-hits", "local hits", false, true },
	{ "global-hits", "global hits", true, true },
};

/* Where the samples of one function landed. */
struct hit {
	uint64_t addr;
	uint64_t period;
	size_t event;
};

struct func {
	const char *dso;	/* the reader's strings: stable */
	const char *sym;
	bool kernel;
	struct hit *hits;
	size_t nr_hits, cap_hits;
	uint64_t *period;	/* per event */
	uint64_t *samples;
};

struct source_file {
	char *path;
	uint32_t max_shown;	/* the last line shown so far, of this function */
	char *text;		/* NULL: unreadable */
	char **lines;		/* lines[i]: line i + 1 */
	size_t nr_lines;
};

struct annotate {
	struct annotate_opts o;
	size_t percent_type;	/* into percent_types[] */
	struct perfctr_reader *rd;
	size_t nr_events;
	uint64_t *event_period;	/* the whole file's, per event */
	uint64_t *event_samples;
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	size_t *hash;		/* open addressing by (dso, sym): index + 1 */
	size_t hash_cap;
	struct source_file *files;
	size_t nr_files;
	size_t skipped;		/* functions with no file to disassemble */
	uint64_t kernel_samples;	/* of unnamed kernel functions */
	const char *skipped_name;
	bool json_first;
};

/* ---- gathering the samples ---- */

static size_t func_hash(const char *dso, const char *sym)
{
	uintptr_t h = (uintptr_t)dso * 0x9E3779B97F4A7C15ull ^ (uintptr_t)sym;

	return (size_t)(h ^ (h >> 29));
}

static int hash_grow(struct annotate *an)
{
	size_t cap = an->hash_cap ? an->hash_cap * 2 : 256;
	size_t *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < an->nr_funcs; i++) {
		const struct func *f = &an->funcs[i];
		size_t h;

		for (h = func_hash(f->dso, f->sym) & (cap - 1); tab[h];
		     h = (h + 1) & (cap - 1))
			;
		tab[h] = i + 1;
	}
	free(an->hash);
	an->hash = tab;
	an->hash_cap = cap;
	return 0;
}

/* The function (@dso, @sym): the strings are the reader's, one pointer
 * per name, so the pointers are the key. */
static size_t func_index(struct annotate *an, const char *dso, const char *sym,
			 bool kernel)
{
	struct func *f;
	size_t h;

	if ((an->nr_funcs + 1) * 2 > an->hash_cap && hash_grow(an))
		return SIZE_MAX;
	for (h = func_hash(dso, sym) & (an->hash_cap - 1); an->hash[h];
	     h = (h + 1) & (an->hash_cap - 1)) {
		f = &an->funcs[an->hash[h] - 1];
		if (f->dso == dso && f->sym == sym)
			return an->hash[h] - 1;
	}
	if (an->nr_funcs == an->cap_funcs) {
		size_t cap = an->cap_funcs ? an->cap_funcs * 2 : 64;
		struct func *n = realloc(an->funcs, cap * sizeof(*n));

		if (!n)
			return SIZE_MAX;
		an->funcs = n;
		an->cap_funcs = cap;
	}
	f = &an->funcs[an->nr_funcs];
	memset(f, 0, sizeof(*f));
	f->dso = dso;
	f->sym = sym;
	f->kernel = kernel;
	f->period = calloc(an->nr_events, sizeof(*f->period));
	f->samples = calloc(an->nr_events, sizeof(*f->samples));
	if (!f->period || !f->samples) {
		free(f->period);
		free(f->samples);
		return SIZE_MAX;
	}
	an->hash[h] = an->nr_funcs + 1;
	return an->nr_funcs++;
}

static int add_hit(struct annotate *an, const struct perfctr_reader_sample *rs)
{
	const struct perfctr_frame *fr = &rs->frames[0];
	uint64_t period = rs->sample->period ? rs->sample->period : 1;
	struct func *f;
	size_t idx;

	an->event_period[rs->event_idx] += period;
	an->event_samples[rs->event_idx]++;
	if (fr->kernel && !fr->sym)
		an->kernel_samples++;
	if (!fr->dso || !fr->sym)
		return 0;
	idx = func_index(an, fr->dso, fr->sym, fr->kernel);
	if (idx == SIZE_MAX)
		return -ENOMEM;
	f = &an->funcs[idx];
	if (f->nr_hits == f->cap_hits) {
		size_t cap = f->cap_hits ? f->cap_hits * 2 : 16;
		struct hit *n = realloc(f->hits, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->hits = n;
		f->cap_hits = cap;
	}
	f->hits[f->nr_hits++] = (struct hit){ fr->addr, period, rs->event_idx };
	f->period[rs->event_idx] += period;
	f->samples[rs->event_idx]++;
	return 0;
}

static int gather(struct annotate *an)
{
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	int r;

	an->nr_events = perfctr_reader__nr_events(an->rd);
	an->event_period = calloc(an->nr_events, sizeof(uint64_t));
	an->event_samples = calloc(an->nr_events, sizeof(uint64_t));
	if (!an->event_period || !an->event_samples) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	while ((r = perfctr_reader__next(an->rd, &rs)) > 0) {
		if (add_hit(an, &rs)) {
			perfex_error("out of memory");
			return PERFEX_EXIT_INTERNAL;
		}
	}
	if (r < 0)
		return perfex_reader_error(an->o.input, r);
	return PERFEX_GO_ON;
}

/* ---- source text ---- */

static struct source_file *source_file(struct annotate *an, const char *path)
{
	struct source_file *sf, *n;
	FILE *in;
	size_t len = 0, cap = 0;

	for (size_t i = 0; i < an->nr_files; i++)
		if (!strcmp(an->files[i].path, path))
			return &an->files[i];
	n = realloc(an->files, (an->nr_files + 1) * sizeof(*n));
	if (!n)
		return NULL;
	an->files = n;
	sf = &an->files[an->nr_files];
	memset(sf, 0, sizeof(*sf));
	sf->path = strdup(path);
	if (!sf->path)
		return NULL;
	an->nr_files++;
	in = fopen(path, "r");
	if (!in)
		return sf;
	sf->text = NULL;
	if (getdelim(&sf->text, &cap, '\0', in) < 0) {
		free(sf->text);
		sf->text = NULL;
	}
	fclose(in);
	if (!sf->text)
		return sf;
	for (char *p = sf->text; *p; len++) {
		char *nl = strchr(p, '\n');
		char **lines;

		if (len == sf->nr_lines) {
			lines = realloc(sf->lines, (len * 2 + 64) * sizeof(*lines));
			if (!lines)
				break;
			sf->lines = lines;
			sf->nr_lines = len * 2 + 64;
		}
		sf->lines[len] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	sf->nr_lines = len;
	return sf;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Line @line of @file without its indentation, as perf shows it; the
 * file's name and the number when the file cannot be read. */
static const char *source_text(struct annotate *an, const char *file,
			       uint32_t line, char *buf, size_t size)
{
	struct source_file *sf = source_file(an, file);
	const char *s;

	if (!sf || !sf->text || !line || line > sf->nr_lines) {
		snprintf(buf, size, "%s:%u", base_name(file), line);
		return buf;
	}
	s = sf->lines[line - 1];
	while (*s == ' ' || *s == '\t')
		s++;
	snprintf(buf, size, "%s", s);
	/* perf strips the line's end too (objdump keeps it; \r of DOS). */
	for (size_t n = strlen(buf); n && (buf[n - 1] == ' ' ||
					    buf[n - 1] == '\t' ||
					    buf[n - 1] == '\r');)
		buf[--n] = '\0';
	return buf;
}

/* ---- percentages ---- */

static double percent_of(const struct annotate *an,
			 const struct perfctr_annotation_count *c,
			 const struct perfctr_annotation_count *total,
			 size_t event)
{
	bool hits = percent_types[an->percent_type].hits;
	double part = hits ? (double)c->samples : (double)c->period;
	double whole;

	if (percent_types[an->percent_type].global)
		whole = hits ? (double)an->event_samples[event]
			     : (double)an->event_period[event];
	else
		whole = hits ? (double)total->samples : (double)total->period;
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* ---- --stdio ---- */

/* objdump's "addr:<tab>" with the tab expanded from the address's start,
 * as perf prints it. */
static void print_addr_field(uint64_t addr)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRIx64 ":", addr);

	printf("%s%*s", buf, 8 - n % 8, "");
}

static void print_insn_text(const struct perfctr_annotation_insn *in)
{
	if (in->operands[0])
		printf("%-6s %s\n", in->mnemonic, in->operands);
	else
		printf("%s\n", in->mnemonic);
}

/*
 * -l: perf's summary of the source lines: the share of each line from its
 * instructions that got more than 0.5 % (perf leaves the others out),
 * largest first, equal ones in the order of their names.
 */
struct line_sum {
	char name[512];
	double percent;
};

static int line_sum_cmp(const void *a, const void *b)
{
	const struct line_sum *x = a, *y = b;

	if (x->percent != y->percent)
		return x->percent > y->percent ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void print_line_summary(struct annotate *an,
			       const struct perfctr_annotation *ann,
			       size_t event, const char *dso)
{
	size_t nr = perfctr_annotation__nr_insns(ann), n = 0;
	struct perfctr_annotation_count total;
	struct line_sum *sums = calloc(nr ? nr : 1, sizeof(*sums));

	printf("\nSorted summary for file %s\n", dso);
	printf("----------------------------------------------\n\n");
	perfctr_annotation__total(ann, event, &total);
	for (size_t i = 0; sums && i < nr; i++) {
		struct perfctr_annotation_insn in = { .sz = sizeof(in) };
		char name[512];
		double pct;
		size_t j;

		perfctr_annotation__insn(ann, i, &in);
		pct = percent_of(an, &in.counts[event], &total, event);
		if (pct <= 0.5)
			continue;
		if (in.file)
			snprintf(name, sizeof(name), "%s:%u", base_name(in.file),
				 in.line);
		else
			snprintf(name, sizeof(name), "??:0");
		for (j = 0; j < n && strcmp(sums[j].name, name); j++)
			;
		if (j == n)
			snprintf(sums[n++].name, sizeof(sums->name), "%s", name);
		sums[j].percent += pct;
	}
	if (!n)
		printf(" Nothing higher than %1.1f%%\n", 0.5);
	qsort(sums, n, sizeof(*sums), line_sum_cmp);
	for (size_t j = 0; j < n; j++)
		printf(" %7.2f %s\n", sums[j].percent, sums[j].name);
	free(sums);
}

/*
 * The source before an instruction whose line changed, as objdump -S
 * shows it: going forward in a file, the lines skipped since the last one
 * shown too (the first time, up to four lines before), going back only the
 * line itself.
 */
static void print_source(struct annotate *an, const char *file, uint32_t line)
{
	struct source_file *sf = source_file(an, file);
	uint32_t from = line;
	char text[1024];

	if (sf && sf->text && line > sf->max_shown) {
		from = sf->max_shown ? sf->max_shown + 1
				     : (line > 4 ? line - 4 : 1);
		sf->max_shown = line;
	}
	for (uint32_t l = from; l <= line; l++) {
		const char *t = source_text(an, file, l, text, sizeof(text));

		/* An empty line is an empty row, as perf shows it. */
		if (*t)
			printf("         : %-4u %s\n", l, t);
		else
			printf("         :\n");
	}
}

static void print_stdio(struct annotate *an, const struct perfctr_annotation *ann,
			const struct func *f, size_t event)
{
	struct perfctr_annotation_symbol sym = { .sz = sizeof(sym) };
	struct perfctr_annotation_count total;
	const char *last_file = NULL, *last_inlined = NULL;
	uint32_t last_line = 0;
	int len;

	perfctr_annotation__symbol(ann, &sym);
	perfctr_annotation__total(ann, event, &total);
	for (size_t i = 0; i < an->nr_files; i++)
		an->files[i].max_shown = 0;
	if (an->o.print_line)
		print_line_summary(an, ann, event, f->dso);
	len = printf(" Percent |\tSource code & Disassembly of %s for %s "
		     "(%" PRIu64 " samples, percent: %s)\n", base_name(f->dso),
		     perfctr_reader__event_name(an->rd, event), total.samples,
		     percent_types[an->percent_type].shown);
	for (int i = 0; i < len + 4; i++)
		putchar('-');
	putchar('\n');
	printf("         :\n         :\n         :\n");
	printf("         : 3    Disassembly of section .text:\n         :\n");
	printf("         : 5    %016" PRIx64 " <%s>:\n", sym.start, sym.name);
	if (perfctr_annotation__nr_lines(ann))
		printf("         :      %s():\n         :\n", sym.name);
	for (size_t i = 0; i < perfctr_annotation__nr_insns(ann); i++) {
		struct perfctr_annotation_insn in = { .sz = sizeof(in) };

		perfctr_annotation__insn(ann, i, &in);
		if (in.inlined && in.inlined != last_inlined)
			printf("         :      %s():\n", in.inlined);
		last_inlined = in.inlined;
		if (in.file && (in.line != last_line || in.file != last_file))
			print_source(an, in.file, in.line);
		last_file = in.file;
		last_line = in.line;
		printf("%8.2f :   ", percent_of(an, &in.counts[event], &total,
					       event));
		print_addr_field(in.addr);
		print_insn_text(&in);
	}
}

/* ---- --stdio2 ---- */

static int hex_width(uint64_t v)
{
	int w = 1;

	while (v >>= 4)
		w++;
	return w;
}

static void print_stdio2(struct annotate *an, const struct perfctr_annotation *ann,
			 const struct func *f, size_t event)
{
	struct perfctr_annotation_symbol sym = { .sz = sizeof(sym) };
	struct perfctr_annotation_count total;
	size_t nr = perfctr_annotation__nr_insns(ann);
	const char *last_file = NULL;
	uint32_t last_line = 0;
	bool *label = calloc(nr ? nr : 1, sizeof(*label));
	const struct perf_event_attr *attr;
	char text[1024], count[32];
	int width;

	perfctr_annotation__symbol(ann, &sym);
	perfctr_annotation__total(ann, event, &total);
	width = hex_width(sym.end - sym.start);
	/* The targets of the function's own jumps are labelled with their
	 * offset, as perf's browser does. */
	for (size_t i = 0; label && i < nr; i++) {
		struct perfctr_annotation_insn in = { .sz = sizeof(in) };

		perfctr_annotation__insn(ann, i, &in);
		if (!in.has_target || in.target < sym.start || in.target >= sym.end)
			continue;
		for (size_t j = 0; j < nr; j++) {
			struct perfctr_annotation_insn t = { .sz = sizeof(t) };

			perfctr_annotation__insn(ann, j, &t);
			if (t.addr == in.target)
				label[j] = true;
		}
	}
	attr = perfctr_reader__event_attr(an->rd, event);
	/* perf's short count: 1030 is "1K". */
	if (total.samples < 1000)
		snprintf(count, sizeof(count), "%" PRIu64, total.samples);
	else if (total.samples < 1000000)
		snprintf(count, sizeof(count), "%" PRIu64 "K",
			 total.samples / 1000);
	else
		snprintf(count, sizeof(count), "%" PRIu64 "M",
			 total.samples / 1000000);
	printf("Samples: %s of event '%s'", count,
	       perfctr_reader__event_name(an->rd, event));
	if (attr && attr->freq)
		printf(", %" PRIu64 " Hz", (uint64_t)attr->sample_freq);
	printf(", Event count (approx.): %" PRIu64 ", [percent: %s]\n",
	       total.period, percent_types[an->percent_type].shown);
	printf("%s() %s\n", sym.name, f->dso);
	printf("Percent\n");
	for (size_t i = 0; i < nr; i++) {
		struct perfctr_annotation_insn in = { .sz = sizeof(in) };
		double pct;
		const char *arrow = NULL;

		perfctr_annotation__insn(ann, i, &in);
		if (in.file && (in.line != last_line || in.file != last_file))
			printf("%*s%s\n", width + 10, "",
			       source_text(an, in.file, in.line, text,
					   sizeof(text)));
		last_file = in.file;
		last_line = in.line;
		pct = percent_of(an, &in.counts[event], &total, event);
		if (in.counts[event].samples)
			printf("%6.2f  ", pct);
		else
			printf("%8s", "");
		if (!strncmp(in.mnemonic, "ret", 3))
			arrow = "\xe2\x86\x90";			/* ← */
		else if (in.has_target && in.target >= sym.start &&
			 in.target < sym.end)
			arrow = in.target > in.addr ? "\xe2\x86\x93"	/* ↓ */
						    : "\xe2\x86\x91";	/* ↑ */
		else if (in.has_target)
			arrow = "\xe2\x86\x92";			/* → */
		if (arrow)
			printf("%*s%s ", width + 2, "", arrow);
		else if (label && label[i])
			printf("%*" PRIx64 ":   ", width,
			       in.addr - sym.start);
		else
			printf("%*s", width + 4, "");
		if (in.has_target && in.target >= sym.start && in.target < sym.end)
			printf("%-6s %" PRIx64 "\n", in.mnemonic,
			       in.target - sym.start);
		else if (in.has_target && in.target_sym)
			printf("%-6s %s\n", in.mnemonic, in.target_sym);
		else
			print_insn_text(&in);
	}
	free(label);
}

/* ---- -j ---- */

static void json_count(FILE *out, const struct annotate *an,
		       const struct perfctr_annotation_count *c,
		       const struct perfctr_annotation_count *total,
		       size_t event)
{
	fprintf(out, ", \"samples\": %" PRIu64 ", \"period\": %" PRIu64
		", \"percent\": %.4f", c->samples, c->period,
		percent_of(an, c, total, event));
}

static void print_json(struct annotate *an, const struct perfctr_annotation *ann,
		       const struct func *f, size_t event)
{
	struct perfctr_annotation_symbol sym = { .sz = sizeof(sym) };
	struct perfctr_annotation_count total;
	FILE *out = stdout;

	perfctr_annotation__symbol(ann, &sym);
	perfctr_annotation__total(ann, event, &total);
	fprintf(out, "%s\n    {\"symbol\": ", an->json_first ? "" : ",");
	an->json_first = false;
	jout_str(out, sym.name);
	fprintf(out, ", \"dso\": ");
	jout_str(out, f->dso);
	fprintf(out, ", \"event\": ");
	jout_str(out, perfctr_reader__event_name(an->rd, event));
	fprintf(out, ",\n     \"start\": %" PRIu64 ", \"end\": %" PRIu64,
		sym.start, sym.end);
	json_count(out, an, &total, &total, event);
	fprintf(out, ",\n     \"instructions\": [");
	for (size_t i = 0; i < perfctr_annotation__nr_insns(ann); i++) {
		struct perfctr_annotation_insn in = { .sz = sizeof(in) };

		perfctr_annotation__insn(ann, i, &in);
		fprintf(out, "%s\n      {\"addr\": %" PRIu64 ", \"bytes\": \"",
			i ? "," : "", in.addr);
		for (uint32_t b = 0; b < in.size; b++)
			fprintf(out, "%s%02x", b ? " " : "", in.bytes[b]);
		fprintf(out, "\", \"mnemonic\": ");
		jout_str(out, in.mnemonic);
		fprintf(out, ", \"operands\": ");
		jout_str(out, in.operands);
		if (in.has_target) {
			fprintf(out, ", \"target\": %" PRIu64 ", \"target_symbol\": ",
				in.target);
			jout_str(out, in.target_sym);
			fprintf(out, ", \"target_offset\": %" PRIu64,
				in.target_offset);
		}
		fprintf(out, ", \"file\": ");
		jout_str(out, in.file);
		fprintf(out, ", \"line\": %u, \"inlined\": ", in.line);
		jout_str(out, in.inlined);
		json_count(out, an, &in.counts[event], &total, event);
		fputc('}', out);
	}
	fprintf(out, "\n     ],\n     \"lines\": [");
	for (size_t i = 0; i < perfctr_annotation__nr_lines(ann); i++) {
		struct perfctr_annotation_line l = { .sz = sizeof(l) };

		perfctr_annotation__line(ann, i, &l);
		fprintf(out, "%s\n      {\"file\": ", i ? "," : "");
		jout_str(out, l.file);
		fprintf(out, ", \"line\": %u, \"inlined\": ", l.line);
		jout_str(out, l.inlined);
		fprintf(out, ", \"instructions\": %zu", l.nr_insns);
		json_count(out, an, &l.counts[event], &total, event);
		fputc('}', out);
	}
	fprintf(out, "\n     ]}");
}

/* ---- which functions, in which order ---- */

static size_t sort_event;

static int func_cmp(const void *a, const void *b)
{
	const struct func *x = *(const struct func *const *)a;
	const struct func *y = *(const struct func *const *)b;
	int r;

	if (x->period[sort_event] != y->period[sort_event])
		return x->period[sort_event] > y->period[sort_event] ? -1 : 1;
	r = strcmp(x->sym, y->sym);
	return r ? r : strcmp(x->dso, y->dso);
}

static bool wanted(const struct annotate *an, const struct func *f)
{
	return !an->o.symbol || !strcmp(f->sym, an->o.symbol);
}

static int annotate_func(struct annotate *an, struct func *f, size_t event)
{
	PERFCTR_OPTS(perfctr_annotation_opts, aopts, .nr_events = an->nr_events);
	struct perfctr_annotation *ann;

	if (f->kernel) {
		errno = ENOENT;
		ann = NULL;
	} else {
		ann = perfctr_annotation__new(perfctr_reader__symbols(an->rd),
					      f->dso, f->hits[0].addr, NULL,
					      &aopts);
	}
	if (!ann) {
		if (errno == ENOMEM) {
			perfex_error("out of memory");
			return PERFEX_EXIT_INTERNAL;
		}
		/* As perf: the others are annotated all the same. */
		an->skipped++;
		an->skipped_name = f->sym;
		if (an->o.symbol)
			perfex_error("cannot annotate '%s' in '%s': %s", f->sym,
				     f->dso, f->kernel ? "no kernel image to disassemble (vmlinux)"
						       : strerror(errno));
		return 0;
	}
	for (size_t i = 0; i < f->nr_hits; i++)
		perfctr_annotation__add(ann, f->hits[i].addr, f->hits[i].event,
					f->hits[i].period);
	if (an->o.json)
		print_json(an, ann, f, event);
	else if (an->o.stdio2)
		print_stdio2(an, ann, f, event);
	else
		print_stdio(an, ann, f, event);
	perfctr_annotation__delete(ann);
	return 0;
}

static int annotate_all(struct annotate *an)
{
	struct func **order = calloc(an->nr_funcs + 1, sizeof(*order));
	size_t found = 0, annotated;
	int ret = 0;

	if (!order) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	if (an->o.json) {
		printf("{\n  \"schema_version\": 1,\n  \"input\": ");
		jout_str(stdout, an->o.input);
		printf(",\n  \"percent_type\": \"%s\",\n  \"annotations\": [",
		       percent_types[an->percent_type].name);
		an->json_first = true;
	}
	for (size_t e = 0; e < an->nr_events && !ret; e++) {
		size_t n = 0;

		for (size_t i = 0; i < an->nr_funcs; i++)
			if (an->funcs[i].samples[e] && wanted(an, &an->funcs[i]))
				order[n++] = &an->funcs[i];
		sort_event = e;
		qsort(order, n, sizeof(*order), func_cmp);
		found += n;
		for (size_t i = 0; i < n && !ret; i++)
			ret = annotate_func(an, order[i], e);
	}
	free(order);
	if (an->o.json)
		printf("\n  ]\n}\n");
	if (ret)
		return ret;
	annotated = found - an->skipped;
	if (an->o.symbol && !found) {
		perfex_error("no samples of '%s' in '%s'", an->o.symbol,
			     an->o.input);
		perfex_hint("perfex report -i %s lists the symbols that have samples",
			    an->o.input);
		return PERFEX_EXIT_TARGET;
	}
	if (!an->o.symbol && an->skipped)
		fprintf(stderr, "perfex: note: %zu of %zu functions not annotated "
			"(no file to disassemble: the kernel, JIT code), e.g. '%s'\n",
			an->skipped, found, an->skipped_name);
	if (!an->o.symbol && an->kernel_samples)
		fprintf(stderr, "perfex: note: %" PRIu64 " samples in the kernel "
			"not annotated (no vmlinux to disassemble)\n",
			an->kernel_samples);
	if (found && !annotated)
		return an->o.symbol ? PERFEX_EXIT_TARGET : 0;
	return 0;
}

static void annotate_free(struct annotate *an)
{
	for (size_t i = 0; an->funcs && i < an->nr_funcs; i++) {
		free(an->funcs[i].hits);
		free(an->funcs[i].period);
		free(an->funcs[i].samples);
	}
	for (size_t i = 0; i < an->nr_files; i++) {
		free(an->files[i].path);
		free(an->files[i].text);
		free(an->files[i].lines);
	}
	free(an->files);
	free(an->funcs);
	free(an->hash);
	free(an->event_period);
	free(an->event_samples);
	perfctr_reader__close(an->rd);
}

int annotate_run(const struct annotate_opts *opts)
{
	PERFCTR_OPTS(perfctr_reader_opts, ropts);
	struct annotate an = { .o = *opts };
	int ret;

	for (an.percent_type = 0; an.o.percent_type &&
	     an.percent_type < sizeof(percent_types) / sizeof(percent_types[0]);
	     an.percent_type++)
		if (!strcmp(percent_types[an.percent_type].name, an.o.percent_type))
			break;
	if (!perfctr_annotation_have_disassembler()) {
		perfex_error("cannot annotate: perfex was built without libcapstone");
		perfex_hint("install libcapstone-dev (scripts/install-deps), then rebuild");
		return PERFEX_EXIT_INTERNAL;
	}
	/* Kernel functions cannot be annotated (no vmlinux to disassemble):
	 * their names are read only when asked for, to say which were left
	 * out; /proc/kallsyms alone takes longer to read than a function of
	 * libLLVM to annotate. */
	ropts.kallsyms = an.o.kallsyms ? an.o.kallsyms : "";
	ropts.no_demangle = an.o.no_demangle;
	an.rd = perfex_reader_open(an.o.input, &ropts, &ret);
	if (!an.rd)
		return ret;
	ret = gather(&an);
	if (ret == PERFEX_GO_ON)
		ret = annotate_all(&an);
	if (fflush(stdout) && !ret) {
		perfex_error("cannot write the annotation: %s", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
	annotate_free(&an);
	return ret;
}

/* ---- the command line ---- */

static perfex_result annotate_option(struct perfex_parse *p, void *ctx)
{
	struct annotate_opts *o = ctx;

	switch (p->opt->id) {
	case OPT_PERCENT_TYPE:
		for (size_t i = 0; i < sizeof(percent_types) / sizeof(percent_types[0]); i++)
			if (!strcmp(p->arg, percent_types[i].name)) {
				o->percent_type = p->arg;
				return PERFEX_GO_ON;
			}
		return perfex_opt_error(p, "expects local-period, global-period, "
					"local-hits or global-hits (not '%s')",
					p->arg);
	default:
		break;
	}
	return PERFEX_GO_ON;
}

int cmd_annotate(int argc, char **argv)
{
	struct annotate_opts o = { .input = "perf.data" };
	struct perfex_parse p;
	int r;

	r = perfex_options_parse(&p, PERFEX_CMD_ANNOTATE, argc, argv, false,
				 annotate_option, &o);
	if (r >= 0)
		return r;
	if (optind < argc) {
		if (o.symbol || optind + 1 < argc) {
			perfex_error("unexpected argument '%s'",
				     argv[o.symbol ? optind : optind + 1]);
			perfex_hint("perfex annotate takes one symbol (or -s SYMBOL)");
			return PERFEX_EXIT_USAGE;
		}
		o.symbol = argv[optind];
	}
	if (o.json + o.stdio2 > 1 || (o.json && o.print_line)) {
		perfex_error("--json excludes --stdio2 and --print-line");
		return PERFEX_EXIT_USAGE;
	}
	if (perfex_dry_run)
		return 0;
	return annotate_run(&o);
}
