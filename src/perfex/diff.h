/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex diff (cmd-diff.c): its options and the stacks of two profiles
 * side by side (diff-stacks.c), for the folded differences and the
 * differential flame graph.
 */
#ifndef PERFEX_DIFF_H
#define PERFEX_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <perfctr/profile.h>

enum diff_compute {
	DIFF_DELTA,		/* new % - base % */
	DIFF_DELTA_ABS,		/* the same, sorted by its absolute value */
	DIFF_RATIO,		/* new period / base period */
	DIFF_WDIFF,		/* new period * w2 - base period * w1 */
};

/* perfex diff's options; the option table (options.c) stores some. */
struct diff_options {
	enum diff_compute compute;
	long w1, w2;			/* of wdiff:W1,W2 */
	enum perfctr_sort_key keys[PERFCTR_SORT_NR];
	size_t nr_keys;
	unsigned long order;		/* -o: the file whose column sorts */
	bool json;
	bool folded;
	bool period;			/* -p: the periods beside */
	bool formula;			/* -F: how each value was computed */
	bool baseline_only;		/* -b */
	bool no_noise;			/* perf's columns only */
	unsigned long noise_blocks;	/* time blocks a file; 0: binomial */
	double min_change;		/* points a mark needs at least */
	bool no_demangle;
	const char *flame;
	const char *kallsyms;
};

/*
 * The stack trees of a base and a new profile merged by frame names, as
 * FlameGraph's folded stacks name frames (report_stack_name()): one node
 * per distinct path, with the samples of each profile at and under it.
 */
struct diff_stacks;

/* The merged tree of @base and @new (either may be NULL: no samples).
 * NULL + errno (ENOMEM). */
struct diff_stacks *diff_stacks__new(struct perfctr_profile *base,
				     struct perfctr_profile *new);
void diff_stacks__delete(struct diff_stacks *ds);

/*
 * Every path that ends a sample of either profile once, "comm;a;b BASE
 * NEW" (the samples that ended there in each; FlameGraph's difffolded
 * form), siblings by name.  Returns the number of lines, -ENOMEM or -EIO.
 */
int diff_stacks__write_folded(struct diff_stacks *ds, FILE *out);

/*
 * A differential flame graph: @new's stack tree drawn as perfex report
 * --flame draws it (widths are the new samples), each frame coloured by
 * how its own share of all samples (of the samples that ended in it)
 * changed from @ds's base: red grew, blue shrank, the stronger the more;
 * titles give the base share and both changes, frames the base lacks
 * are said so.  Returns 0, -ENOMEM or -EIO.
 */
int diff_stacks__write_flame(struct diff_stacks *ds,
			     struct perfctr_profile *new, FILE *out,
			     const char *subtitle);

#endif /* PERFEX_DIFF_H */
