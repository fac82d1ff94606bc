/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex script's parts: cmd-script.c (the lines) and script-trace.c
 * (tracepoint payloads).
 */
#ifndef PERFEX_SCRIPT_H
#define PERFEX_SCRIPT_H

#include <stdbool.h>
#include <stdio.h>

#include <perfctr/perfctr.h>
#include <perfctr/reader.h>

struct script_trace;

/* The payload printer of the file's tracepoints, or NULL when the file
 * has no formats (or perfex was built without libtraceevent). */
struct script_trace *script_trace_new(struct perfctr_reader *rd);
void script_trace_free(struct script_trace *t);
/* Sample @s's payload as perf script's trace field prints it; nothing
 * when its format is unknown. */
void script_trace_print(struct script_trace *t,
			const struct perf_event_attr *attr,
			const struct perfctr_sample *s, FILE *out);
/* The header block of perf script --header, from the file's features
 * (script-header.c); @path: the file, for its time. */
void script_print_header(struct perfctr_reader *rd, const char *path,
			 FILE *out);
/* Whether perfex was built with libtraceevent. */
bool script_trace_available(void);

#endif /* PERFEX_SCRIPT_H */
