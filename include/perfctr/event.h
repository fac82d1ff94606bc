/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — event specifications.
 *
 * Translation of an event specification string ("cycles,{a,b}:u",
 * "cpu/event=0xc0,umask=0/", "syscalls:sys_enter_*", "mem:0x1000/8:w",
 * "r01c2") into perf_event_attr structures.  Pure: nothing here makes a
 * system call apart from reading sysfs and tracefs files, whose roots are
 * options so that fixture trees can stand in for the machine's.
 *
 * Thread safety: an evlist is not synchronised; distinct evlists may be
 * used from distinct threads.  perfctr_event_list() is thread-safe.
 */
#ifndef PERFCTR_EVENT_H
#define PERFCTR_EVENT_H

#include <linux/perf_event.h>
#include <stdbool.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_parse_opts {
	size_t sz;
	/* Root under which bus/event_source/devices/ is read; default "/sys". */
	const char *sysfs_root;
	/* tracefs mount point; default: /sys/kernel/tracing, then
	 * /sys/kernel/debug/tracing. */
	const char *tracefs_root;
	/* Default exclude_kernel/exclude_hv for events without a :u/:k
	 * modifier (set when the permission level forbids kernel counting). */
	bool exclude_kernel;
	bool exclude_hv;
	size_t :0;
};

/* What went wrong in a specification, for a message that says where. */
struct perfctr_parse_error {
	size_t sz;
	/* Byte offset into the specification, or -1 when not positional. */
	int column;
	/* errno-style class: ENOENT unknown name, EINVAL syntax or value,
	 * EOPNOTSUPP not on this machine, EACCES tracefs unreadable,
	 * ENODEV no such PMU, ENOTDIR tracefs not mounted. */
	int errnum;
	/* "unknown event 'cyclez'" — lowercase, no final full stop. */
	char message[256];
	/* "did you mean 'cycles'?", or the cure ("mount -t tracefs ..."),
	 * or "" when there is nothing to suggest. */
	char hint[256];
};

/* An ordered list of parsed events with their group structure. */
struct perfctr_evlist;

/** perfctr_evlist__new() - an empty list.  Return: NULL + errno on ENOMEM. */
PERFCTR_API struct perfctr_evlist *perfctr_evlist__new(void);

/** perfctr_evlist__delete() - free @list (NULL is a no-op). */
PERFCTR_API void perfctr_evlist__delete(struct perfctr_evlist *list);

/**
 * perfctr_evlist__parse() - parse @spec and append its events to @list.
 * @list: the list to append to; unchanged on failure.
 * @spec: comma-separated events and {groups}, with :modifiers.
 * @opts: roots and defaults, NULL for the machine's.
 * @err:  filled on failure when non-NULL (its sz set by the caller).
 *
 * Return: the number of events appended (a wildcard may add many), or a
 * negative errno (the same as @err->errnum).
 */
PERFCTR_API int perfctr_evlist__parse(struct perfctr_evlist *list,
				      const char *spec,
				      const struct perfctr_parse_opts *opts,
				      struct perfctr_parse_error *err);

/**
 * perfctr_evlist__add_attr() - append one event given as a ready attr (for
 * callers that build encodings themselves, e.g. raw evntsel words).
 * @attr:   copied; its size field is set by the list.
 * @name:   the name to report, copied.
 * @leader: index of an earlier event to join as a group member, or
 *          (size_t)-1 for a new group of its own.
 * Return: the new event's index, or -EINVAL / -ENOMEM.
 */
PERFCTR_API int perfctr_evlist__add_attr(struct perfctr_evlist *list,
					 const struct perf_event_attr *attr,
					 const char *name, size_t leader);

/** perfctr_evlist__nr_events() - how many events @list holds. */
PERFCTR_API size_t perfctr_evlist__nr_events(const struct perfctr_evlist *list);

/** perfctr_evlist__attr() - the attr of event @idx (NULL if out of range).
 * Fields the list does not decide (disabled, inherit, read_format, sample_*)
 * are zero: the consumer sets them.  Modifiers are the exception, as in
 * perf: :S sets PERF_SAMPLE_READ in sample_type, :D pinned (on the group's
 * leader only, as the kernel requires), :p precise_ip; a period= or freq=
 * term sets the sample period/frequency. */
PERFCTR_API const struct perf_event_attr *
perfctr_evlist__attr(const struct perfctr_evlist *list, size_t idx);

/** perfctr_evlist__name() - the event's canonical name, with modifiers as
 * written ("cycles:u", "syscalls:sys_enter_read"). */
PERFCTR_API const char *perfctr_evlist__name(const struct perfctr_evlist *list,
					     size_t idx);

/** perfctr_evlist__pmu() - the PMU's sysfs name ("cpu", "tracepoint",
 * "software", "breakpoint", "armv8_pmuv3_0", ...). */
PERFCTR_API const char *perfctr_evlist__pmu(const struct perfctr_evlist *list,
					    size_t idx);

/** perfctr_evlist__leader() - index of the group leader of event @idx; an
 * event outside any {group} is its own leader. */
PERFCTR_API size_t perfctr_evlist__leader(const struct perfctr_evlist *list,
					  size_t idx);

/** perfctr_evlist__scale() - multiplier from the PMU's events/<name>.scale
 * (1.0 when none). */
PERFCTR_API double perfctr_evlist__scale(const struct perfctr_evlist *list,
					 size_t idx);

/** perfctr_evlist__unit() - the unit from events/<name>.unit, or "" . */
PERFCTR_API const char *perfctr_evlist__unit(const struct perfctr_evlist *list,
					     size_t idx);

/** perfctr_evlist__cpus() - the PMU's own CPU list from sysfs (cpumask or
 * cpus: "0" for uncore-like PMUs, "0-7" for one hybrid core type), or NULL
 * when the PMU counts on every CPU. */
PERFCTR_API const char *perfctr_evlist__cpus(const struct perfctr_evlist *list,
					     size_t idx);

/* The event classes that perfctr_event_list() reports. */
enum perfctr_event_kind {
	PERFCTR_EVENT_HARDWARE,
	PERFCTR_EVENT_CACHE,
	PERFCTR_EVENT_SOFTWARE,
	PERFCTR_EVENT_TRACEPOINT,
	PERFCTR_EVENT_PMU,		/* named events of a sysfs PMU */
	PERFCTR_EVENT_BREAKPOINT,	/* the mem:ADDR syntax itself */
	PERFCTR_EVENT_RAW,		/* the rNNNN syntax itself */
};

struct perfctr_event_info {
	size_t sz;
	enum perfctr_event_kind kind;
	const char *name;	/* as it is written in a specification */
	const char *desc;	/* one line, may be "" */
	const char *pmu;	/* PMU name, or NULL */
	const char *topic;	/* tracepoint subsystem, or NULL */
};

typedef int (*perfctr_event_cb_t)(const struct perfctr_event_info *info,
				  void *ctx);

/**
 * perfctr_event_list() - every event this machine (or fixture) offers.
 * @opts: roots, NULL for the machine's.
 * @cb:   called once per event; a non-zero return stops the walk and is
 *        returned.
 *
 * Hardware and cache events are listed only where a PMU can count them.
 * Return: 0, the callback's non-zero value, or a negative errno.
 */
PERFCTR_API int perfctr_event_list(const struct perfctr_parse_opts *opts,
				   perfctr_event_cb_t cb, void *ctx);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_EVENT_H */
