/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The drawings of a profile that `perfex report` makes, from the profile's
 * node iterators (perfctr/profile.h): call-graph text under a row, folded
 * stacks (FlameGraph's format) and an interactive SVG flame graph; and the
 * files of the browser viewers (speedscope, the Firefox Profiler), from
 * the samples in time order (viewers.c).
 */
#ifndef PERFEX_REPORT_H
#define PERFEX_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <perfctr/profile.h>
#include <perfctr/reader.h>

struct perfex_parse;

/* perf record --off-cpu's event, and the name of --wall's profile. */
#define OFFCPU_EVENT "offcpu-time"
#define WALL_PROFILE "wall-clock"

/* perfex report's options and state (cmd-report.c); the option table
 * (options.c) stores some of its fields. */
struct report {
	const char *input;
	enum perfctr_sort_key keys[PERFCTR_SORT_NR];
	size_t nr_keys;
	enum perfctr_callgraph_order callgraph;
	bool folded, json;
	const char *flame;
	const char *pprof;
	const char *speedscope;	/* --speedscope FILE */
	const char *gecko;	/* --gecko FILE */
	const char *event;	/* of the folded stacks and flame graph */
	/* --wall: one more profile, last, of the on-CPU clocks' and the
	 * off-CPU samples' time (WALL_PROFILE), shown alone. */
	bool wall;
	const char *kallsyms;
	const char *annotate;	/* --annotate SYMBOL */
	double percent_limit;
	bool no_demangle;
	bool show_samples;	/* -n: perf's Samples column */
	bool srcline;		/* a srcline key */
	/* The keys named perf's "symbol": perf report then adds a column
	 * of instructions per cycle from branch stacks, which we do not
	 * record: shown empty, as perf shows it without them. */
	bool ipc_column;
	struct perfctr_profile **profiles;	/* per attr */
	size_t nr_profiles;
	bool saw_callchain;
};


/* sort-keys.c, for perfex report, diff and top alike.  The title of
 * @key's column in perf's tables. */
const char *report_key_title(enum perfctr_sort_key key);
/* --sort's keys (@p's argument) into @keys and @nr_keys: PERFEX_GO_ON,
 * or PERFEX_EXIT_USAGE for a key unknown or repeated, said with the keys'
 * list (srcline in it when @srcline). */
int report_sort_option(const struct perfex_parse *p,
		       enum perfctr_sort_key *keys, size_t *nr_keys,
		       bool srcline);

/*
 * The call graph of row @idx of @prof as an indented tree on @out, each
 * branch with its percentage of the profile's total weight.  Branches
 * under @min_percent are left out.  Returns 0, -ERANGE (no such row),
 * -EINVAL (no call graphs), -ENOMEM, -EIO.
 */
int report_print_callgraph(struct perfctr_profile *prof, size_t idx,
			   FILE *out, double min_percent);

/*
 * Every distinct stack of @prof once, as "comm;outermost;...;leaf samples"
 * lines, in tree order with siblings sorted by name.  Kernel frames carry
 * a "_[k]" suffix; ';' in a frame's name becomes ':'.  Returns the number
 * of lines, -ENOMEM or -EIO.
 */
int report_write_folded(struct perfctr_profile *prof, FILE *out);

struct report_flame_opts {
	const char *title;	/* NULL: "Flame Graph" */
	const char *subtitle;	/* NULL: none */
	unsigned int width;	/* pixels; under 200: 1200 */
	const char *unit;	/* NULL: "samples" */
	/* NULL: warm colours from each frame's name.  Otherwise called for
	 * every frame drawn, parents before children, depth 0 the root
	 * ("all"), with the frame's name as drawn: it writes the fill
	 * ("rgb(r,g,b)") and may write a note for the frame's title ("" for
	 * none); perfex diff colours frames by their change so. */
	void (*paint)(void *arg, size_t depth, const char *name,
		      const struct perfctr_profile_node *node, char *fill,
		      size_t fill_size, char *note, size_t note_size);
	void *paint_arg;
};

/* The name of a stack-tree node as the folded stacks and the flame graph
 * show it: "comm", "sym", "[dso]" when unresolved, "_[k]" after a kernel
 * frame; ';' and newlines become ':'. */
void report_stack_name(const struct perfctr_profile_node *n, char *buf,
		       size_t size);

/*
 * A self-contained SVG flame graph of @prof's stack tree: well-formed XML
 * with an inline script (click to zoom, Ctrl-F or Search to highlight
 * matches, Reset Zoom).  Returns 0, -ENOMEM or -EIO.
 */
int report_write_flame_svg(struct perfctr_profile *prof, FILE *out,
			   const struct report_flame_opts *opts);

/*
 * The samples of a recording kept for the browser viewers: per event and
 * thread in the order they are added (the reader's time order), each
 * naming its stack, stacks and frames interned once.  Frames are told
 * apart by their text (symbol or address, DSO, kernel or user); their
 * strings must stay unchanged while the collector lives (the reader's
 * symbols object keeps them so).
 */
struct report_viewers;

struct report_viewers *report_viewers__new(void);
void report_viewers__delete(struct report_viewers *v);
/* One sample of weight @weight (the report's: its period).  A sample
 * without frames is left out.  Returns 0 or -ENOMEM. */
int report_viewers__add(struct report_viewers *v,
			const struct perfctr_reader_sample *rs, uint64_t weight);

/*
 * speedscope's file format (docs/viewers.md): the frames, then one
 * "sampled" profile per thread of @event (SIZE_MAX: of every event),
 * by event, heaviest first; weights are the periods, in nanoseconds
 * for cpu-clock and task-clock.  @name names the file in the app.
 * Returns 0, -ENOMEM or -EIO.
 */
int report_write_speedscope(struct report_viewers *v, struct perfctr_reader *rd,
			    size_t event, const char *name, FILE *out);

/*
 * The Gecko profile format of the Firefox Profiler (docs/viewers.md) for
 * the samples of @event: one thread each with its samples (stack, time
 * in ms since the first sample), its frame, stack and string tables, the
 * User and Kernel categories.  Returns 0, -ENOMEM or -EIO.
 */
int report_write_gecko(struct report_viewers *v, struct perfctr_reader *rd,
		       size_t event, FILE *out);

#endif /* PERFEX_REPORT_H */
