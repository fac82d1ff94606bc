/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The drawings of a profile that `perfex report` makes, from the profile's
 * node iterators (perfctr/profile.h): call-graph text under a row, folded
 * stacks (FlameGraph's format) and an interactive SVG flame graph.
 */
#ifndef PERFEX_REPORT_H
#define PERFEX_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <perfctr/profile.h>

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
	const char *event;	/* of the folded stacks and flame graph */
	/* --wall: one more profile, last, of the on-CPU clocks' and the
	 * off-CPU samples' time (WALL_PROFILE), shown alone. */
	bool wall;
	const char *kallsyms;
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
};

/*
 * A self-contained SVG flame graph of @prof's stack tree: well-formed XML
 * with an inline script (click to zoom, Ctrl-F or Search to highlight
 * matches, Reset Zoom).  Returns 0, -ENOMEM or -EIO.
 */
int report_write_flame_svg(struct perfctr_profile *prof, FILE *out,
			   const struct report_flame_opts *opts);

#endif /* PERFEX_REPORT_H */
