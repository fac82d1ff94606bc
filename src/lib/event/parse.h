/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The parser's shared state, used by the files of the event layer: the
 * grammar (parse.c), tracepoints (tracepoint.c), PMU terms (pmu_terms.c),
 * breakpoints (breakpoint.c).  Not installed.
 */
#ifndef PERFCTR_EVENT_PARSE_H
#define PERFCTR_EVENT_PARSE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

#include "perfctr/event.h"
#include "sys/dirlist.h"

struct pc_pmu;

/* One event being built; pushed to the evlist when the whole spec parsed. */
struct pc_event {
	struct perf_event_attr attr;
	char name[320];
	const char *pmu;	/* static or owned by the parser's PMU cache */
	const char *unit;
	const char *cpus;
	double scale;
	size_t leader;		/* index into the parser's event vector */
	bool has_mods;		/* the name already carries ":mods" */
	bool priv_set;		/* u/k/h given (modifier or USR/OS bits) */
	bool gh_set;		/* H/G given */
};

struct pc_parse {
	const char *spec;
	struct perfctr_parse_error *err;
	const char *sysfs_root;
	const char *tracefs_opt;	/* NULL: the machine's */
	bool exclude_kernel;
	bool exclude_hv;

	struct pc_event *events;
	size_t nr_events;
	size_t cap_events;
	size_t group_first;	/* (size_t)-1 outside a {group} */

	struct pc_pmu **pmus;	/* loaded on first use */
	size_t nr_pmus;
	struct pc_dirlist pmu_names;
	int pmu_names_state;	/* 0 unread, 1 read, -errno */

	char tracefs[4096];
	int tracefs_state;	/* 0 unknown, 1 found, -errno */
};

/* Record an error at @at (NULL: not positional).  Return -@errnum. */
int pc_parse_fail(struct pc_parse *p, int errnum, const char *at,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Set the hint line of the error. */
void pc_parse_hint(struct pc_parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A zeroed event with the grammar's defaults; NULL + ENOMEM. */
struct pc_event *pc_parse_new_event(struct pc_parse *p);

/* Fill @name with [start, end) and the modifiers [mods, mods_end). */
void pc_event_set_name(struct pc_event *ev, const char *start, size_t len,
		       const char *mods, size_t mods_len);

/* Apply modifiers [mods, end) to @ev; errors point into the spec. */
int pc_parse_mods(struct pc_parse *p, struct pc_event *ev, const char *mods,
		  const char *end);

/* Tracepoints: [start, end) is "sys:name" (with wildcards).  Appends the
 * matching events; returns how many or a negative errno. */
int pc_parse_tracepoint(struct pc_parse *p, const char *start,
			const char *end, const char *mods, const char *mods_end);

/* Offer every tracepoint name to a suggestion (quietly nothing when
 * tracefs is absent). */
struct pc_suggest;
void pc_suggest_tracepoints(struct pc_parse *p, struct pc_suggest *s);

/* PMUs.  pc_parse_pmu() loads (once) the PMU named [name, name+len);
 * NULL when absent, with the error recorded at @at when @at is non-NULL. */
struct pc_pmu *pc_parse_pmu(struct pc_parse *p, const char *name, size_t len,
			    const char *at);
/* The machine's core PMU ("cpu", "cpu_core", "armv8_pmuv3_0"...), or NULL. */
struct pc_pmu *pc_parse_core_pmu(struct pc_parse *p);
/* Every PMU name, sorted (empty when sysfs has none). */
const struct pc_dirlist *pc_parse_pmu_names(struct pc_parse *p);
void pc_parse_release_pmus(struct pc_parse *p);

/* "pmu/terms/" at [start, end) (modifiers after the closing '/'). */
int pc_parse_pmu_event(struct pc_parse *p, const char *start, const char *end);
/* A bare name that is an events/ entry of one or more PMUs; -ENOENT
 * (nothing recorded) when no PMU has it. */
int pc_parse_pmu_alias(struct pc_parse *p, const char *name, size_t len,
		       const char *mods, const char *mods_end);
bool pc_parse_pmu_alias_exists(struct pc_parse *p, const char *name, size_t len);
/* Offer PMU event names (as "pmu/event/" and bare) to a suggestion. */
void pc_suggest_pmu_events(struct pc_parse *p, struct pc_suggest *s);
/* Validate a raw rNNNN event against the core PMU (x86 PerfEvtSel fields,
 * reserved bits); maps USR/OS to the exclude bits. */
int pc_parse_check_raw(struct pc_parse *p, struct pc_event *ev, const char *at);

/* mem:ADDR[/LEN][:rwx][:mods] at [start, end). */
int pc_parse_breakpoint(struct pc_parse *p, const char *start, const char *end);

/* The tracefs root for this parse, or NULL with the error recorded. */
const char *pc_parse_tracefs(struct pc_parse *p, const char *at);

#endif /* PERFCTR_EVENT_PARSE_H */
