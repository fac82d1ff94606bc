/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The drawings of a profile that `perfex report` makes, from the profile's
 * node iterators (perfctr/profile.h): call-graph text under a row, folded
 * stacks (FlameGraph's format) and an interactive SVG flame graph.
 */
#ifndef PERFEX_REPORT_H
#define PERFEX_REPORT_H

#include <stdio.h>

#include <perfctr/profile.h>

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
