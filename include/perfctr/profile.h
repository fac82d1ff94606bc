/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — profiles: samples aggregated by sort keys (comm, dso, sym,
 * pid, tid, cpu, srcline), with call graphs from callchains and a tree of every
 * distinct stack, walked through node iterators.  Drawing them (call-graph
 * text, folded stacks, flame graphs) is left to the tools: perfex report
 * has all three.
 *
 * A profile knows nothing about files or symbol tables: the caller hands
 * it samples whose frames are already resolved (see symbols.h), so the
 * same code serves perf.data files, live rings and tests.
 *
 * Thread safety: a profile is not synchronised; use it from one thread at
 * a time.  Different profiles may be used from different threads.
 */
#ifndef PERFCTR_PROFILE_H
#define PERFCTR_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
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
	/* The source line of the sampled address, as the caller names it
	 * (perfctr_profile_sample.srcline). */
	PERFCTR_SORT_SRCLINE,
	PERFCTR_SORT_NR,
};

/**
 * perfctr_sort_keys_parse() - "comm,dso,sym" into @keys.
 * Keys are spelled as perfctr_sort_key_name() spells them; perf report's
 * "symbol" is accepted for sym.
 * @max: room in @keys.
 * Return: the number of keys, -EINVAL for an unknown or repeated key
 * (@bad, when non-NULL, points at it in @spec), -E2BIG for too many.
 */
PERFCTR_API int perfctr_sort_keys_parse(const char *spec,
					enum perfctr_sort_key *keys,
					size_t max, const char **bad);

/** perfctr_sort_key_name() - "comm", "dso", "sym", "pid", "tid", "cpu",
 * "srcline" (NULL out of range).  Thread-safe. */
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
	/* The stack tree (folded stacks, flame graphs) adds the samples'
	 * weights, not their number: for profiles whose samples are
	 * amounts (off-CPU time, wall-clock time). */
	bool stacks_by_weight;
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
	/* The source line of frames[0], for PERFCTR_SORT_SRCLINE ("file:line"
	 * or whatever the caller shows when there is none); NULL: "??:0". */
	const char *srcline;
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
	/* The process and thread of the row's first sample (a tool that
	 * names a row by its thread, as perf report does). */
	pid_t pid;
	pid_t tid;
	size_t :0;
};

/** perfctr_profile__entry() - row @idx.  Return: 0, -ERANGE. */
PERFCTR_API int perfctr_profile__entry(struct perfctr_profile *prof, size_t idx,
				       struct perfctr_profile_entry *entry);

/*
 * The trees of a profile, walked node by node.
 *
 * A profile keeps two kinds of tree:
 *
 * - the stack tree (perfctr_profile__stack_root()): a root, under it one
 *   node per comm, under each comm the outermost callers, and so on down
 *   to the sampled frames.  Its weights count samples (not periods), as
 *   FlameGraph's folded stacks do, or add periods (stacks_by_weight);
 *   every profile has one.
 * - one call graph per row of the flat profile
 *   (perfctr_profile__callgraph_root()), when the profile was made with a
 *   call-graph order: under the row's root, the sampled frame and its
 *   callers (PERFCTR_CALLGRAPH_CALLEE) or the outermost caller and the
 *   frames it called down to the sampled one (PERFCTR_CALLGRAPH_CALLER).
 *   Its weights are the samples' weights (periods).
 *
 * Children come in one documented order: heaviest first (total), equal
 * totals by name (strcmp), then the most recently made first (the larger
 * first_seen).  A tool that draws in another order (FlameGraph sorts by
 * name) sorts the children itself; first_seen makes its ties stable.
 *
 * Nodes are values: a struct perfctr_profile_node is filled by the calls
 * below and handed back to perfctr_profile__child().  Its handle stays
 * valid while the profile lives; its other fields are a snapshot, which an
 * add after the call makes stale (fetch the node again).  Iterating
 * orders the children of a whole tree at the first call after an add
 * (O(n log n) in the tree's nodes), then each call is O(1).
 */
enum perfctr_profile_node_kind {
	PERFCTR_PROFILE_NODE_ROOT,	/* a tree's root: no name */
	PERFCTR_PROFILE_NODE_COMM,	/* stack tree, depth 1: a comm */
	PERFCTR_PROFILE_NODE_FRAME,	/* a frame of a stack */
};

struct perfctr_profile_node {
	size_t sz;
	/* Where the node is, for perfctr_profile__child(); opaque. */
	uint64_t handle;
	enum perfctr_profile_node_kind kind;
	/* ROOT: NULL.  COMM: the comm (":<tid>" when the sample had none).
	 * FRAME: the symbol, or when unresolved the DSO-relative address as
	 * "0x%016" PRIx64.  Valid while the profile lives. */
	const char *name;
	/* FRAME: the DSO as the sample named it, NULL when it named none
	 * (then the flat profile shows "[unknown]").  Otherwise NULL. */
	const char *dso;
	/* Weight at and under the node, and of the samples that ended at
	 * it (stack tree: sample counts, or weights with the profile's
	 * stacks_by_weight; call graphs: weights). */
	uint64_t total;
	uint64_t self;
	/* The ordinal (from 1) of the first sample that reached the node
	 * (0 for the stack tree's root).  Unique among siblings. */
	uint64_t first_seen;
	size_t nr_children;
	bool resolved;		/* FRAME: name is a symbol */
	bool kernel;		/* FRAME: a kernel frame */
	size_t :0;
};

/**
 * perfctr_profile__stack_root() - the root of the stack tree.
 * @root: filled; @root->sz set by the caller (PERFCTR_OPTS style).
 * Its total is the number of samples added.
 * Return: 0, -EINVAL (NULL argument, @root->sz too small for the handle).
 */
PERFCTR_API int perfctr_profile__stack_root(struct perfctr_profile *prof,
					    struct perfctr_profile_node *root);

/**
 * perfctr_profile__callgraph_root() - the root of row @idx's call graph
 * (rows as perfctr_profile__entry() numbers them).  Its total is the
 * row's weight.
 * Return: 0, -EINVAL (the profile has no call graphs, or a NULL
 * argument), -ERANGE (no row @idx), -ENOMEM (sorting the rows).
 */
PERFCTR_API int perfctr_profile__callgraph_root(struct perfctr_profile *prof,
						size_t idx,
						struct perfctr_profile_node *root);

/**
 * perfctr_profile__child() - child @i of @parent, in the order above.
 * @parent: a node filled by one of these calls on the same profile.
 * @child: filled; @child->sz set by the caller.  May be @parent.
 * Return: 0, -ERANGE (@i >= the number of children), -EINVAL (a NULL
 * argument or a handle of no node), -ENOMEM (ordering the tree).
 */
PERFCTR_API int perfctr_profile__child(struct perfctr_profile *prof,
				       const struct perfctr_profile_node *parent,
				       size_t i,
				       struct perfctr_profile_node *child);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_PROFILE_H */
