/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — profiles: samples aggregated by sort keys (comm, dso, sym,
 * pid, tid, cpu), with call graphs from callchains, folded stacks in
 * FlameGraph's format ("a;b;c count") and a self-contained interactive
 * SVG flame graph.
 *
 * A profile knows nothing about files or symbol tables: the caller hands
 * it samples whose frames are already resolved (see symbols.h), so the
 * same code serves perf.data files, live rings and tests.
 *
 * Thread safety: a profile is not synchronised; use it from one thread.
 */
#ifndef PERFCTR_PROFILE_H
#define PERFCTR_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum perfctr_sort_key {
	PERFCTR_SORT_COMM,
	PERFCTR_SORT_DSO,
	PERFCTR_SORT_SYM,
	PERFCTR_SORT_PID,
	PERFCTR_SORT_TID,
	PERFCTR_SORT_CPU,
	PERFCTR_SORT_NR,
};

/**
 * perfctr_sort_keys_parse() - "comm,dso,sym" into @keys.
 * @max: room in @keys.
 * Return: the number of keys, -EINVAL for an unknown or repeated key
 * (@bad, when non-NULL, points at it in @spec), -E2BIG for too many.
 */
PERFCTR_API int perfctr_sort_keys_parse(const char *spec,
					enum perfctr_sort_key *keys,
					size_t max, const char **bad);

/** perfctr_sort_key_name() - "comm", "dso", ... (NULL out of range). */
PERFCTR_API const char *perfctr_sort_key_name(enum perfctr_sort_key key);

enum perfctr_callgraph_order {
	PERFCTR_CALLGRAPH_NONE,
	/* Under each entry, the callers of the sampled function, nearest
	 * first (perf's default "callee" order). */
	PERFCTR_CALLGRAPH_CALLEE,
	/* Under each entry, the paths from the outermost caller down to it. */
	PERFCTR_CALLGRAPH_CALLER,
};

struct perfctr_profile_opts {
	size_t sz;
	/* The sort keys, in order; NULL for comm,dso,sym. */
	const enum perfctr_sort_key *keys;
	size_t nr_keys;
	enum perfctr_callgraph_order callgraph;
	/* The caller promises that the strings of the frames it passes
	 * stay unchanged while the profile lives (e.g. they come from a
	 * symbols object): frames are then cached by address. */
	bool stable_strings;
	size_t :0;
};

/* One resolved frame.  Strings are copied (interned) by the profile. */
struct perfctr_frame {
	const char *dso;	/* NULL: "[unknown]" */
	const char *sym;	/* NULL: shown as the address */
	uint64_t addr;		/* dso-relative address, shown when sym is NULL */
	bool kernel;
};

struct perfctr_profile_sample {
	size_t sz;
	const char *comm;	/* NULL: ":<tid>" */
	pid_t pid;
	pid_t tid;
	int32_t cpu;		/* -1 when not recorded */
	/* Weight of the sample: its period (1 for "count samples"). */
	uint64_t weight;
	/* frames[0] is where the sample hit, then its callers outwards. */
	const struct perfctr_frame *frames;
	size_t nr_frames;
	size_t :0;
};

struct perfctr_profile;

/** perfctr_profile__new() - an empty profile.  NULL + errno (EINVAL, ENOMEM). */
PERFCTR_API struct perfctr_profile *
perfctr_profile__new(const struct perfctr_profile_opts *opts);

/** perfctr_profile__delete() - free (NULL is a no-op). */
PERFCTR_API void perfctr_profile__delete(struct perfctr_profile *prof);

/**
 * perfctr_profile__add() - account one sample.
 * Return: 0, -EINVAL (no frame), -ENOMEM.
 */
PERFCTR_API int perfctr_profile__add(struct perfctr_profile *prof,
				     const struct perfctr_profile_sample *sample);

/** perfctr_profile__samples() / __weight() - totals over every sample added. */
PERFCTR_API uint64_t perfctr_profile__samples(const struct perfctr_profile *prof);
PERFCTR_API uint64_t perfctr_profile__weight(const struct perfctr_profile *prof);

/**
 * perfctr_profile__nr_entries() - the flat profile's rows: one per distinct
 * combination of the sort keys, ordered by weight (heaviest first; ties by
 * key text).  Sorting happens on the first call after an add.
 */
PERFCTR_API size_t perfctr_profile__nr_entries(struct perfctr_profile *prof);

struct perfctr_profile_entry {
	size_t sz;
	uint64_t samples;
	uint64_t weight;
	/* The text of each sort key of the profile, in its order
	 * (keys[i] for opts.keys[i]); valid while the profile lives. */
	const char *keys[PERFCTR_SORT_NR];
	size_t nr_keys;
	bool kernel;		/* the sampled frame was in the kernel */
	size_t :0;
};

/** perfctr_profile__entry() - row @idx.  Return: 0, -ERANGE. */
PERFCTR_API int perfctr_profile__entry(struct perfctr_profile *prof, size_t idx,
				       struct perfctr_profile_entry *entry);

/**
 * perfctr_profile__print_callgraph() - the call graph of row @idx as an
 * indented tree on @out, each branch with its share of the row (percent
 * of the total weight when @absolute).  Branches under @min_percent are
 * folded away.  Return: 0, -ERANGE, -EINVAL when the profile has no
 * call graphs.
 */
PERFCTR_API int perfctr_profile__print_callgraph(struct perfctr_profile *prof,
						 size_t idx, FILE *out,
						 double min_percent);

/**
 * perfctr_profile__write_folded() - every distinct stack once, as
 * "comm;outermost;...;leaf samples" lines (FlameGraph's folded format;
 * counts are samples, not weights), in tree order with siblings sorted
 * by name.  Kernel frames carry a "_[k]" suffix; ';' in names becomes ':'.
 * Return: lines written, or -errno from the stream.
 */
PERFCTR_API int perfctr_profile__write_folded(struct perfctr_profile *prof,
					      FILE *out);

struct perfctr_flame_opts {
	size_t sz;
	const char *title;	/* NULL: "Flame Graph" */
	const char *subtitle;	/* NULL: none */
	unsigned int width;	/* pixels; 0: 1200 */
	const char *unit;	/* "samples" when NULL */
	size_t :0;
};

/**
 * perfctr_profile__write_flame_svg() - a self-contained SVG flame graph of
 * the sample counts (well-formed XML, inline script: click to zoom, Ctrl-F or the Search
 * button to highlight matches, Reset Zoom).
 * Return: 0 or -errno from the stream.
 */
PERFCTR_API int perfctr_profile__write_flame_svg(struct perfctr_profile *prof,
						 FILE *out,
						 const struct perfctr_flame_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_PROFILE_H */
