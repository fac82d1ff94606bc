/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex annotate's options (cmd-annotate.c); the option table (options.c)
 * stores them, and perfex report --annotate runs the same annotation.
 */
#ifndef PERFEX_ANNOTATE_H
#define PERFEX_ANNOTATE_H

#include <stdbool.h>

struct annotate_opts {
	const char *input;
	const char *symbol;	/* NULL: every function with samples */
	const char *percent_type;	/* perf's name; NULL: local-period */
	const char *kallsyms;
	bool stdio, stdio2, json;
	bool print_line;	/* -l: the summary per source line */
	bool no_demangle;
};

/* Annotate @opts->input's functions on stdout; the exit status. */
int annotate_run(const struct annotate_opts *opts);

#endif /* PERFEX_ANNOTATE_H */
