// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Profiles: flat rows by sort keys, call-graph trees per row, and one
 * stack tree (comm, then frames from the outermost caller to the leaf),
 * handed out through node iterators.  Drawing them (call-graph text,
 * folded stacks, flame graphs) is the tools' business.
 *
 * Strings and frames are interned into small integer ids so that rows
 * and tree nodes compare integers, not text.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfctr/profile.h"
#include "common/internal.h"

#define NO_NODE UINT32_MAX

/* A row's key: one slot per sort key, rounded up to pairs for key_hash. */
#define KEY_SLOTS 8
_Static_assert(PERFCTR_SORT_NR <= KEY_SLOTS, "a slot for every sort key");

/* ---- interning ---- */

struct strtab {
	char **strs;
	uint64_t *hashes;
	size_t nr, cap;
	uint32_t *slots;	/* id + 1, 0 = empty */
	size_t nslots;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t strtab_hash(const void *t, size_t i)
{
	return ((const struct strtab *)t)->hashes[i];
}

static int strtab_grow(struct strtab *t)
{
	return pc_slots_grow(&t->slots, &t->nslots, t->nr, strtab_hash, t);
}

/* Intern @s; returns its id or -ENOMEM. */
static int64_t strtab_intern(struct strtab *t, const char *s)
{
	uint64_t hash = pc_hash_str(s);
	size_t h;

	if (t->nslots) {
		for (h = hash & (t->nslots - 1); t->slots[h];
		     h = (h + 1) & (t->nslots - 1)) {
			uint32_t id = t->slots[h] - 1;

			if (t->hashes[id] == hash && !strcmp(t->strs[id], s))
				return id;
		}
	}
	if ((t->nr + 1) * 2 > t->nslots && strtab_grow(t))
		return -ENOMEM;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **strs = realloc(t->strs, cap * sizeof(*strs));
		uint64_t *hashes;

		if (!strs)
			return -ENOMEM;
		t->strs = strs;
		hashes = realloc(t->hashes, cap * sizeof(*hashes));
		if (!hashes)
			return -ENOMEM;
		t->hashes = hashes;
		t->cap = cap;
	}
	t->strs[t->nr] = strdup(s);
	if (!t->strs[t->nr])
		return -ENOMEM;
	t->hashes[t->nr] = hash;
	for (h = hash & (t->nslots - 1); t->slots[h]; h = (h + 1) & (t->nslots - 1))
		;
	t->slots[h] = (uint32_t)t->nr + 1;
	return (int64_t)t->nr++;
}

static void strtab_free(struct strtab *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->hashes);
	free(t->slots);
}

/* A frame: (name, dso, kernel) interned as one id.  What the first
 * sample of the frame said of it is kept for the iterators: whether the
 * name is a symbol, and whether it named a DSO at all. */
struct frame_rec {
	uint32_t name;
	uint32_t dso;
	bool kernel;
	bool resolved;
	bool has_dso;
};

/* ---- trees ---- */

enum node_kind { NODE_ROOT, NODE_COMM, NODE_FRAME };

struct node {
	uint32_t id;		/* frame id, or comm string id (NODE_COMM) */
	uint32_t first_child;
	uint32_t next_sibling;
	uint32_t nr_children;
	uint64_t weight;	/* everything under and at this node */
	uint64_t self;		/* samples that ended here */
	uint64_t samples;
	uint64_t first_seen;	/* samples added before the node's first */
	uint32_t parent;	/* NO_NODE for a tree's roots */
	uint8_t kind;		/* enum node_kind */
};

/*
 * The children of every node in iteration order, made on demand: node i's
 * children are kids[kid_start[i] .. kid_start[i + 1]).  Adding a sample
 * changes weights, hence orders: it marks the index stale.
 */
struct tree {
	struct node *nodes;
	size_t nr, cap;
	uint32_t *kid_start;
	uint32_t *kids;
	bool indexed;
	/* Every child by (parent, id), open addressing (node + 1, 0 free):
	 * a child is found in O(1), not by a walk of its siblings, which
	 * took most of a live profile's time once a comm had thousands of
	 * distinct functions under it. */
	uint32_t *child_slots;
	size_t nslots, nr_hashed;
};

static size_t child_slot(uint32_t parent, uint32_t id, size_t nslots)
{
	uint64_t k = ((uint64_t)parent << 32 | id) * 0x9e3779b97f4a7c15ull;

	return (size_t)(k ^ (k >> 31)) & (nslots - 1);
}

/* Hash child @n (a power-of-two table, at most half full). */
static int tree_hash_child(struct tree *t, uint32_t n)
{
	size_t h;

	if ((t->nr_hashed + 1) * 2 > t->nslots) {
		size_t nslots = t->nslots ? t->nslots * 2 : 256;
		uint32_t *slots = calloc(nslots, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (size_t i = 0; i < t->nslots; i++) {
			uint32_t c = t->child_slots[i];

			if (!c)
				continue;
			h = child_slot(t->nodes[c - 1].parent,
				       t->nodes[c - 1].id, nslots);
			while (slots[h])
				h = (h + 1) & (nslots - 1);
			slots[h] = c;
		}
		free(t->child_slots);
		t->child_slots = slots;
		t->nslots = nslots;
	}
	h = child_slot(t->nodes[n].parent, t->nodes[n].id, t->nslots);
	while (t->child_slots[h])
		h = (h + 1) & (t->nslots - 1);
	t->child_slots[h] = n + 1;
	t->nr_hashed++;
	return 0;
}

/* @seen: the number of samples added before the one making the node. */
static int64_t tree_new_node(struct tree *t, uint32_t id, uint64_t seen)
{
	struct node *n;

	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;

		n = realloc(t->nodes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->nodes = n;
		t->cap = cap;
	}
	n = &t->nodes[t->nr];
	memset(n, 0, sizeof(*n));
	n->id = id;
	n->first_child = n->next_sibling = n->parent = NO_NODE;
	n->first_seen = seen;
	n->kind = NODE_FRAME;
	return (int64_t)t->nr++;
}

static int64_t tree_child(struct tree *t, uint32_t parent, uint32_t id,
			  uint64_t seen)
{
	uint32_t c;
	int64_t n;

	for (size_t h = t->nslots ? child_slot(parent, id, t->nslots) : 0;
	     t->nslots && (c = t->child_slots[h]); h = (h + 1) & (t->nslots - 1))
		if (t->nodes[c - 1].id == id && t->nodes[c - 1].parent == parent)
			return c - 1;
	n = tree_new_node(t, id, seen);
	if (n < 0)
		return n;
	t->nodes[n].parent = parent;
	if (tree_hash_child(t, (uint32_t)n)) {
		t->nr--;	/* not linked anywhere yet */
		return -ENOMEM;
	}
	t->indexed = false;
	t->nodes[n].next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = (uint32_t)n;
	t->nodes[parent].nr_children++;
	return n;
}

/* ---- the profile ---- */

struct entry {
	uint32_t key[KEY_SLOTS];
	uint64_t samples;
	uint64_t weight;
	bool kernel;
	pid_t pid, tid;		/* of the first sample */
	uint32_t graph_root;	/* node in prof->graphs, NO_NODE without */
	char *text[PERFCTR_SORT_NR];
};

/* Frames interned by the addresses of their strings (stable_strings). */
#define FCACHE_SIZE 4096

struct fcache_slot {
	const char *sym, *dso;
	uint64_t addr;
	bool kernel, used;
	uint32_t id;
};

struct perfctr_profile {
	struct fcache_slot *fcache;	/* NULL unless stable_strings */
	enum perfctr_sort_key keys[PERFCTR_SORT_NR];
	size_t nr_keys;
	bool srcline_key;		/* PERFCTR_SORT_SRCLINE is one of them */
	bool stacks_by_weight;
	enum perfctr_callgraph_order callgraph;

	struct strtab strs;
	struct frame_rec *frames;
	size_t nr_frames, cap_frames;
	uint32_t *frame_slots;	/* id + 1 */
	size_t frame_nslots;

	struct entry *entries;
	size_t nr_entries, cap_entries;
	uint32_t *entry_slots;	/* index + 1 */
	size_t entry_nslots;
	uint32_t *order;	/* entries sorted */
	bool sorted;

	struct tree graphs;	/* per-entry call graphs */
	struct tree stacks;	/* node 0: all; then comm; then frames */

	uint64_t samples;
	uint64_t weight;
	int64_t unknown_dso;

	/* Consecutive samples mostly share their comm and their row. */
	char last_comm[32];
	int64_t last_comm_id;		/* -1: none */
	size_t last_entry;		/* index + 1; 0: none */
};

static const char *const key_names[PERFCTR_SORT_NR] = {
	[PERFCTR_SORT_COMM] = "comm",
	[PERFCTR_SORT_DSO] = "dso",
	[PERFCTR_SORT_SYM] = "sym",
	[PERFCTR_SORT_PID] = "pid",
	[PERFCTR_SORT_TID] = "tid",
	[PERFCTR_SORT_CPU] = "cpu",
	[PERFCTR_SORT_SRCLINE] = "srcline",
};

/* Other names of keys: perf report's. */
static const struct {
	const char *name;
	enum perfctr_sort_key key;
} key_aliases[] = {
	{ "symbol", PERFCTR_SORT_SYM },
};

const char *perfctr_sort_key_name(enum perfctr_sort_key key)
{
	return (unsigned)key < PERFCTR_SORT_NR ? key_names[key] : NULL;
}

int perfctr_sort_keys_parse(const char *spec, enum perfctr_sort_key *keys,
			    size_t max, const char **bad)
{
	const char *p = spec;
	size_t n = 0;

	if (!spec || !keys)
		return pc_err(EINVAL);
	while (*p) {
		size_t len = strcspn(p, ","), k, i;

		for (k = 0; k < PERFCTR_SORT_NR; k++)
			if (strlen(key_names[k]) == len &&
			    !strncmp(key_names[k], p, len))
				break;
		for (i = 0; k == PERFCTR_SORT_NR && i < ARRAY_SIZE(key_aliases); i++)
			if (strlen(key_aliases[i].name) == len &&
			    !strncmp(key_aliases[i].name, p, len))
				k = key_aliases[i].key;
		if (k == PERFCTR_SORT_NR)
			goto bad_key;
		for (i = 0; i < n; i++)
			if (keys[i] == (enum perfctr_sort_key)k)
				goto bad_key;
		if (n == max)
			return pc_err(E2BIG);
		keys[n++] = (enum perfctr_sort_key)k;
		p += len;
		if (*p == ',') {
			p++;
			if (!*p)
				goto bad_key;
		}
	}
	if (!n)
		goto bad_key;
	return (int)n;
bad_key:
	if (bad)
		*bad = p;
	return pc_err(EINVAL);
}

struct perfctr_profile *perfctr_profile__new(const struct perfctr_profile_opts *opts)
{
	static const enum perfctr_sort_key def[] = {
		PERFCTR_SORT_COMM, PERFCTR_SORT_DSO, PERFCTR_SORT_SYM,
	};
	const enum perfctr_sort_key *keys;
	struct perfctr_profile *prof;
	size_t nr, i, j;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	keys = PC_OPTS_GET(opts, keys, NULL);
	nr = PC_OPTS_GET(opts, nr_keys, 0);
	if (!keys) {
		keys = def;
		nr = ARRAY_SIZE(def);
	}
	if (!nr || nr > PERFCTR_SORT_NR) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < nr; i++) {
		if ((unsigned)keys[i] >= PERFCTR_SORT_NR) {
			errno = EINVAL;
			return NULL;
		}
		for (j = 0; j < i; j++)
			if (keys[j] == keys[i]) {
				errno = EINVAL;
				return NULL;
			}
	}
	prof = calloc(1, sizeof(*prof));
	if (!prof)
		return NULL;
	memcpy(prof->keys, keys, nr * sizeof(*keys));
	prof->nr_keys = nr;
	for (i = 0; i < nr; i++)
		prof->srcline_key |= keys[i] == PERFCTR_SORT_SRCLINE;
	prof->last_comm_id = -1;
	prof->callgraph = PC_OPTS_GET(opts, callgraph, PERFCTR_CALLGRAPH_NONE);
	prof->stacks_by_weight = PC_OPTS_GET(opts, stacks_by_weight, false);
	if (PC_OPTS_GET(opts, stable_strings, false)) {
		prof->fcache = calloc(FCACHE_SIZE, sizeof(*prof->fcache));
		if (!prof->fcache) {
			perfctr_profile__delete(prof);
			return NULL;
		}
	}
	prof->unknown_dso = strtab_intern(&prof->strs, "[unknown]");
	if (prof->unknown_dso < 0 || tree_new_node(&prof->stacks, 0, 0) < 0) {
		perfctr_profile__delete(prof);
		errno = ENOMEM;
		return NULL;
	}
	prof->stacks.nodes[0].kind = NODE_ROOT;
	return prof;
}

void perfctr_profile__delete(struct perfctr_profile *prof)
{
	size_t i, k;

	if (!prof)
		return;
	for (i = 0; i < prof->nr_entries; i++)
		for (k = 0; k < PERFCTR_SORT_NR; k++)
			free(prof->entries[i].text[k]);
	free(prof->entries);
	free(prof->entry_slots);
	free(prof->order);
	free(prof->frames);
	free(prof->frame_slots);
	free(prof->fcache);
	free(prof->graphs.nodes);
	free(prof->graphs.child_slots);
	free(prof->stacks.child_slots);
	free(prof->graphs.kid_start);
	free(prof->graphs.kids);
	free(prof->stacks.nodes);
	free(prof->stacks.kid_start);
	free(prof->stacks.kids);
	strtab_free(&prof->strs);
	free(prof);
}

static uint64_t frame_hash(uint32_t name, uint32_t dso, bool kernel)
{
	return mix64(((uint64_t)name << 32) ^ dso ^ ((uint64_t)kernel << 63));
}

static uint64_t frame_rec_hash(const void *prof, size_t i)
{
	const struct frame_rec *f = &((const struct perfctr_profile *)prof)->frames[i];

	return frame_hash(f->name, f->dso, f->kernel);
}

static int frame_slots_grow(struct perfctr_profile *prof)
{
	return pc_slots_grow(&prof->frame_slots, &prof->frame_nslots,
			     prof->nr_frames, frame_rec_hash, prof);
}

static int64_t intern_frame_slow(struct perfctr_profile *prof,
				 const struct perfctr_frame *f);

static int64_t intern_frame(struct perfctr_profile *prof,
			    const struct perfctr_frame *f)
{
	struct fcache_slot *slot;
	uint64_t key;
	int64_t id;

	if (!prof->fcache)
		return intern_frame_slow(prof, f);
	key = (uint64_t)(uintptr_t)f->sym * 31 + (uint64_t)(uintptr_t)f->dso +
	      (f->sym ? 0 : f->addr) + f->kernel;
	slot = &prof->fcache[mix64(key) & (FCACHE_SIZE - 1)];
	if (slot->used && slot->sym == f->sym && slot->dso == f->dso &&
	    slot->kernel == f->kernel && (f->sym || slot->addr == f->addr))
		return slot->id;
	id = intern_frame_slow(prof, f);
	if (id >= 0) {
		slot->used = true;
		slot->sym = f->sym;
		slot->dso = f->dso;
		slot->addr = f->addr;
		slot->kernel = f->kernel;
		slot->id = (uint32_t)id;
	}
	return id;
}

static int64_t intern_frame_slow(struct perfctr_profile *prof,
				 const struct perfctr_frame *f)
{
	char buf[512];
	int64_t name, dso;
	struct frame_rec *rec;
	size_t h;

	if (f->sym) {
		name = strtab_intern(&prof->strs, f->sym);
	} else {
		snprintf(buf, sizeof(buf), "0x%016" PRIx64, f->addr);
		name = strtab_intern(&prof->strs, buf);
	}
	dso = f->dso ? strtab_intern(&prof->strs, f->dso) : prof->unknown_dso;
	if (name < 0 || dso < 0)
		return -ENOMEM;
	if (prof->frame_nslots) {
		for (h = frame_hash(name, dso, f->kernel) & (prof->frame_nslots - 1);
		     prof->frame_slots[h]; h = (h + 1) & (prof->frame_nslots - 1)) {
			rec = &prof->frames[prof->frame_slots[h] - 1];
			if (rec->name == name && rec->dso == dso &&
			    rec->kernel == f->kernel)
				return prof->frame_slots[h] - 1;
		}
	}
	if ((prof->nr_frames + 1) * 2 > prof->frame_nslots &&
	    frame_slots_grow(prof))
		return -ENOMEM;
	if (prof->nr_frames == prof->cap_frames) {
		size_t cap = prof->cap_frames ? prof->cap_frames * 2 : 256;
		struct frame_rec *n = realloc(prof->frames, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		prof->frames = n;
		prof->cap_frames = cap;
	}
	rec = &prof->frames[prof->nr_frames];
	rec->name = (uint32_t)name;
	rec->dso = (uint32_t)dso;
	rec->kernel = f->kernel;
	rec->resolved = f->sym != NULL;
	rec->has_dso = f->dso != NULL;
	for (h = frame_hash(name, dso, f->kernel) & (prof->frame_nslots - 1);
	     prof->frame_slots[h]; h = (h + 1) & (prof->frame_nslots - 1))
		;
	prof->frame_slots[h] = (uint32_t)prof->nr_frames + 1;
	return (int64_t)prof->nr_frames++;
}

/* Every sample hashes its key: three independent multiplies (each one a
 * bijection of a pair of keys) and one mix, not a chain of six mixes. */
static uint64_t key_hash(const uint32_t *key)
{
	_Static_assert(KEY_SLOTS == 8, "key_hash takes the keys by pairs");
	uint64_t a = ((uint64_t)key[0] << 32 | key[1]) * 0x9e3779b97f4a7c15ULL;
	uint64_t b = ((uint64_t)key[2] << 32 | key[3]) * 0xc2b2ae3d27d4eb4fULL;
	uint64_t c = ((uint64_t)key[4] << 32 | key[5]) * 0x165667b19e3779f9ULL;
	uint64_t d = ((uint64_t)key[6] << 32 | key[7]) * 0xd6e8feb86659fd93ULL;

	return mix64(a + (b << 21 | b >> 43) + (c << 42 | c >> 22) +
		     (d << 11 | d >> 53));
}

/* Key by key: the key was just written 4 bytes at a time, and a wider
 * load of it (an inlined memcmp) would wait for the stores to retire.
 * Only the slots of the profile's keys: the others are 0 in every key. */
static bool key_equal(const struct perfctr_profile *prof, const uint32_t *a,
		      const uint32_t *b)
{
	for (size_t k = 0; k < prof->nr_keys; k++)
		if (a[prof->keys[k]] != b[prof->keys[k]])
			return false;
	return true;
}

static uint64_t entry_hash(const void *prof, size_t i)
{
	return key_hash(((const struct perfctr_profile *)prof)->entries[i].key);
}

static int entry_slots_grow(struct perfctr_profile *prof)
{
	return pc_slots_grow(&prof->entry_slots, &prof->entry_nslots,
			     prof->nr_entries, entry_hash, prof);
}

static struct entry *find_entry(struct perfctr_profile *prof, const uint32_t *key)
{
	struct entry *e;
	size_t h;

	if (prof->entry_nslots) {
		for (h = key_hash(key) & (prof->entry_nslots - 1);
		     prof->entry_slots[h]; h = (h + 1) & (prof->entry_nslots - 1)) {
			e = &prof->entries[prof->entry_slots[h] - 1];
			if (!memcmp(e->key, key, sizeof(e->key)))
				return e;
		}
	}
	if ((prof->nr_entries + 1) * 2 > prof->entry_nslots &&
	    entry_slots_grow(prof))
		return NULL;
	if (prof->nr_entries == prof->cap_entries) {
		size_t cap = prof->cap_entries ? prof->cap_entries * 2 : 64;
		struct entry *n = realloc(prof->entries, cap * sizeof(*n));

		if (!n)
			return NULL;
		prof->entries = n;
		prof->cap_entries = cap;
	}
	e = &prof->entries[prof->nr_entries];
	memset(e, 0, sizeof(*e));
	memcpy(e->key, key, sizeof(e->key));
	e->graph_root = NO_NODE;
	for (h = key_hash(key) & (prof->entry_nslots - 1); prof->entry_slots[h];
	     h = (h + 1) & (prof->entry_nslots - 1))
		;
	prof->entry_slots[h] = (uint32_t)prof->nr_entries + 1;
	prof->nr_entries++;
	return e;
}

#define MAX_FRAMES 256

/* The string id of the sample's command name, or ":tid" without one;
 * the last name is remembered, as samples come in runs of one task. */
static int64_t intern_comm(struct perfctr_profile *prof,
			   const struct perfctr_profile_sample *sample)
{
	char buf[32];
	int64_t comm;
	size_t len;

	if (!sample->comm) {
		snprintf(buf, sizeof(buf), ":%d", (int)sample->tid);
		return strtab_intern(&prof->strs, buf);
	}
	if (prof->last_comm_id >= 0 && !strcmp(sample->comm, prof->last_comm))
		return prof->last_comm_id;
	len = strlen(sample->comm);
	comm = strtab_intern(&prof->strs, sample->comm);
	if (comm >= 0 && len < sizeof(prof->last_comm)) {
		memcpy(prof->last_comm, sample->comm, len + 1);
		prof->last_comm_id = comm;
	}
	return comm;
}

/* What a sample's row is made of, once its strings are interned. */
struct row_parts {
	const struct perfctr_profile_sample *sample;
	const uint32_t *ids;	/* frame ids, the sampled frame first */
	int64_t comm, srcline;
};

/* The row key of a sample: one slot per sort key, the rest zero. */
static void row_key(const struct perfctr_profile *prof,
		    const struct row_parts *row, uint32_t key[KEY_SLOTS])
{
	const struct perfctr_profile_sample *sample = row->sample;
	size_t k;

	for (k = 0; k < prof->nr_keys; k++) {
		enum perfctr_sort_key sk = prof->keys[k];

		switch (sk) {
		case PERFCTR_SORT_COMM: key[sk] = (uint32_t)row->comm; break;
		case PERFCTR_SORT_DSO: key[sk] = prof->frames[row->ids[0]].dso; break;
		case PERFCTR_SORT_SYM: key[sk] = row->ids[0]; break;
		case PERFCTR_SORT_PID: key[sk] = (uint32_t)sample->pid; break;
		case PERFCTR_SORT_TID: key[sk] = (uint32_t)sample->tid; break;
		case PERFCTR_SORT_CPU: key[sk] = (uint32_t)sample->cpu; break;
		case PERFCTR_SORT_SRCLINE: key[sk] = (uint32_t)row->srcline; break;
		default: break;
		}
	}
}

/* The entry of @key, the last one used when it is the same. */
static struct entry *entry_of_key(struct perfctr_profile *prof,
				  const uint32_t *key)
{
	struct entry *e;

	if (prof->last_entry &&
	    key_equal(prof, prof->entries[prof->last_entry - 1].key, key))
		return &prof->entries[prof->last_entry - 1];
	e = find_entry(prof, key);
	if (e)
		prof->last_entry = (size_t)(e - prof->entries) + 1;
	return e;
}

/* The texts of a new row, one per sort key, made once. */
static int entry_set_texts(const struct perfctr_profile *prof, struct entry *e,
			   const struct row_parts *row)
{
	const struct perfctr_profile_sample *sample = row->sample;
	char buf[32];
	size_t k;

	for (k = 0; k < prof->nr_keys; k++) {
		enum perfctr_sort_key sk = prof->keys[k];
		const char *text;

		switch (sk) {
		case PERFCTR_SORT_COMM:
			text = prof->strs.strs[row->comm];
			break;
		case PERFCTR_SORT_DSO:
			text = prof->strs.strs[prof->frames[row->ids[0]].dso];
			break;
		case PERFCTR_SORT_SYM:
			text = prof->strs.strs[prof->frames[row->ids[0]].name];
			break;
		case PERFCTR_SORT_SRCLINE:
			text = prof->strs.strs[row->srcline];
			break;
		default:
			snprintf(buf, sizeof(buf), "%d",
				 sk == PERFCTR_SORT_PID ? (int)sample->pid :
				 sk == PERFCTR_SORT_TID ? (int)sample->tid :
				 (int)sample->cpu);
			text = buf;
			break;
		}
		e->text[k] = strdup(text);
		if (!e->text[k])
			return -ENOMEM;
	}
	e->kernel = sample->frames[0].kernel;
	e->pid = sample->pid;
	e->tid = sample->tid;
	return 0;
}

/* The row's call graph: root, then the frames callee first or caller
 * first as prof->callgraph says. */
static int callgraph_add(struct perfctr_profile *prof, struct entry *e,
			 const uint32_t *ids, size_t nr, uint64_t weight)
{
	int64_t node;
	size_t i;

	if (e->graph_root == NO_NODE) {
		node = tree_new_node(&prof->graphs, 0, prof->samples);
		if (node < 0)
			return -ENOMEM;
		prof->graphs.nodes[node].kind = NODE_ROOT;
		e->graph_root = (uint32_t)node;
	}
	node = e->graph_root;
	prof->graphs.nodes[node].weight += weight;
	prof->graphs.nodes[node].samples++;
	for (i = 0; i < nr; i++) {
		uint32_t id = prof->callgraph == PERFCTR_CALLGRAPH_CALLEE ?
			      ids[i] : ids[nr - 1 - i];

		node = tree_child(&prof->graphs, (uint32_t)node, id,
				  prof->samples);
		if (node < 0)
			return -ENOMEM;
		prof->graphs.nodes[node].weight += weight;
		prof->graphs.nodes[node].samples++;
	}
	return 0;
}

/* The stack tree: all -> comm -> outermost ... leaf.  It counts
 * samples, as FlameGraph's collapse of perf script does, or adds their
 * weights (stacks_by_weight). */
static int stacks_add(struct perfctr_profile *prof, int64_t comm,
		      const uint32_t *ids, size_t nr, uint64_t weight)
{
	uint64_t w = prof->stacks_by_weight ? weight : 1;
	int64_t node;
	size_t i;

	node = tree_child(&prof->stacks, 0, (uint32_t)comm, prof->samples);
	if (node < 0)
		return -ENOMEM;
	prof->stacks.nodes[node].kind = NODE_COMM;
	prof->stacks.nodes[0].weight += w;
	prof->stacks.nodes[node].weight += w;
	for (i = nr; i-- > 0;) {
		node = tree_child(&prof->stacks, (uint32_t)node, ids[i],
				  prof->samples);
		if (node < 0)
			return -ENOMEM;
		prof->stacks.nodes[node].weight += w;
	}
	prof->stacks.nodes[node].self += w;
	prof->stacks.nodes[node].samples++;
	return 0;
}

int perfctr_profile__add(struct perfctr_profile *prof,
			 const struct perfctr_profile_sample *sample)
{
	uint32_t key[KEY_SLOTS] = { 0 };
	uint32_t ids[MAX_FRAMES];
	struct row_parts row = { .sample = sample, .ids = ids, .srcline = -1 };
	size_t nr, i;
	struct entry *e;

	if (!prof || !sample || !sample->frames || !sample->nr_frames ||
	    sample->sz < offsetof(struct perfctr_profile_sample, nr_frames) +
			 sizeof(size_t))
		return pc_err(EINVAL);
	nr = sample->nr_frames < MAX_FRAMES ? sample->nr_frames : MAX_FRAMES;
	/* Only the sampled frame when nothing needs the callers. */
	for (i = 0; i < nr; i++) {
		int64_t id = intern_frame(prof, &sample->frames[i]);

		if (id < 0)
			return pc_err(ENOMEM);
		ids[i] = (uint32_t)id;
	}
	row.comm = intern_comm(prof, sample);
	if (row.comm < 0)
		return pc_err(ENOMEM);
	if (prof->srcline_key) {
		row.srcline = strtab_intern(&prof->strs,
			sample->sz > offsetof(struct perfctr_profile_sample, srcline) &&
			sample->srcline ? sample->srcline : "??:0");
		if (row.srcline < 0)
			return pc_err(ENOMEM);
	}
	row_key(prof, &row, key);
	e = entry_of_key(prof, key);
	if (!e)
		return pc_err(ENOMEM);
	if (!e->samples && entry_set_texts(prof, e, &row))
		return pc_err(ENOMEM);
	e->samples++;
	e->weight += sample->weight;
	prof->samples++;
	prof->weight += sample->weight;
	prof->sorted = false;
	prof->graphs.indexed = false;
	prof->stacks.indexed = false;

	if (prof->callgraph != PERFCTR_CALLGRAPH_NONE &&
	    callgraph_add(prof, e, ids, nr, sample->weight))
		return pc_err(ENOMEM);
	if (stacks_add(prof, row.comm, ids, nr, sample->weight))
		return pc_err(ENOMEM);
	return 0;
}

uint64_t perfctr_profile__samples(const struct perfctr_profile *prof)
{
	return prof ? prof->samples : 0;
}

uint64_t perfctr_profile__weight(const struct perfctr_profile *prof)
{
	return prof ? prof->weight : 0;
}

static int entry_text_cmp(const struct perfctr_profile *prof,
			  const struct entry *a, const struct entry *b)
{
	size_t k;

	for (k = 0; k < prof->nr_keys; k++) {
		int c = strcmp(a->text[k], b->text[k]);

		if (c)
			return c;
	}
	return 0;
}

static int order_cmp(const void *a, const void *b, void *ctx)
{
	const struct perfctr_profile *sort_prof = ctx;
	const struct entry *x = &sort_prof->entries[*(const uint32_t *)a];
	const struct entry *y = &sort_prof->entries[*(const uint32_t *)b];

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return entry_text_cmp(sort_prof, x, y);
}

static int profile_sort(struct perfctr_profile *prof)
{
	uint32_t *order;
	size_t i;

	if (prof->sorted)
		return 0;
	order = realloc(prof->order, (prof->nr_entries + 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	prof->order = order;
	for (i = 0; i < prof->nr_entries; i++)
		order[i] = (uint32_t)i;
	/* qsort_r (GNU, also in musl): two profiles may sort at once in
	 * two threads. */
	qsort_r(order, prof->nr_entries, sizeof(*order), order_cmp, prof);
	prof->sorted = true;
	return 0;
}

size_t perfctr_profile__nr_entries(struct perfctr_profile *prof)
{
	if (!prof || profile_sort(prof))
		return 0;
	return prof->nr_entries;
}

int perfctr_profile__entry(struct perfctr_profile *prof, size_t idx,
			   struct perfctr_profile_entry *entry)
{
	struct perfctr_profile_entry out;
	const struct entry *e;
	size_t k;

	if (!prof || !entry)
		return pc_err(EINVAL);
	if (profile_sort(prof))
		return pc_err(ENOMEM);
	if (idx >= prof->nr_entries)
		return pc_err(ERANGE);
	e = &prof->entries[prof->order[idx]];
	memset(&out, 0, sizeof(out));
	out.sz = entry->sz;
	out.samples = e->samples;
	out.weight = e->weight;
	out.nr_keys = prof->nr_keys;
	for (k = 0; k < prof->nr_keys; k++)
		out.keys[k] = e->text[k];
	out.kernel = e->kernel;
	out.pid = e->pid;
	out.tid = e->tid;
	memcpy(entry, &out, entry->sz < sizeof(out) ? entry->sz : sizeof(out));
	return 0;
}


/* ---- tree iterators ---- */

/* The handle of a node: which tree (bit 32) and the node's index. */
#define HANDLE_STACKS (1ULL << 32)

struct kid_ref {
	uint32_t node;
	uint64_t weight;
	uint64_t first_seen;
	const char *name;
};

/* The order documented in profile.h: heaviest first, then by name, then
 * the most recent first (siblings never share first_seen: one sample
 * makes at most one node per depth). */
static int kid_cmp(const void *a, const void *b)
{
	const struct kid_ref *x = a, *y = b;
	int c;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->first_seen > y->first_seen ? -1 : x->first_seen < y->first_seen;
}

static const char *node_name(const struct perfctr_profile *prof,
			     const struct node *n)
{
	switch (n->kind) {
	case NODE_COMM:
		return prof->strs.strs[n->id];
	case NODE_FRAME:
		return prof->strs.strs[prof->frames[n->id].name];
	default:
		return NULL;
	}
}

static int tree_index(const struct perfctr_profile *prof, struct tree *t)
{
	uint32_t *start, *kids, c;
	struct kid_ref *refs = NULL;
	size_t i, pos = 0, cap = 0, n;

	if (t->indexed)
		return 0;
	start = realloc(t->kid_start, (t->nr + 1) * sizeof(*start));
	if (!start)
		return -ENOMEM;
	t->kid_start = start;
	kids = realloc(t->kids, (t->nr + 1) * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	t->kids = kids;
	for (i = 0; i < t->nr; i++) {
		start[i] = (uint32_t)pos;
		n = t->nodes[i].nr_children;
		if (!n)
			continue;
		if (n > cap) {
			struct kid_ref *r = realloc(refs, n * sizeof(*r));

			if (!r) {
				free(refs);
				return -ENOMEM;
			}
			refs = r;
			cap = n;
		}
		n = 0;
		for (c = t->nodes[i].first_child; c != NO_NODE;
		     c = t->nodes[c].next_sibling) {
			refs[n].node = c;
			refs[n].weight = t->nodes[c].weight;
			refs[n].first_seen = t->nodes[c].first_seen;
			refs[n].name = node_name(prof, &t->nodes[c]);
			n++;
		}
		qsort(refs, n, sizeof(*refs), kid_cmp);
		while (n--)
			kids[pos + n] = refs[n].node;
		pos += t->nodes[i].nr_children;
	}
	start[t->nr] = (uint32_t)pos;
	free(refs);
	t->indexed = true;
	return 0;
}

static void fill_node(struct perfctr_profile *prof, bool stacks, uint32_t idx,
		      struct perfctr_profile_node *node)
{
	struct tree *t = stacks ? &prof->stacks : &prof->graphs;
	const struct node *n = &t->nodes[idx];
	struct perfctr_profile_node out;
	uint64_t under = 0;
	uint32_t c;

	memset(&out, 0, sizeof(out));
	out.sz = node->sz;
	out.handle = (stacks ? HANDLE_STACKS : 0) | idx;
	out.kind = n->kind == NODE_ROOT ? PERFCTR_PROFILE_NODE_ROOT :
		   n->kind == NODE_COMM ? PERFCTR_PROFILE_NODE_COMM :
		   PERFCTR_PROFILE_NODE_FRAME;
	out.name = node_name(prof, n);
	if (n->kind == NODE_FRAME) {
		const struct frame_rec *f = &prof->frames[n->id];

		out.dso = f->has_dso ? prof->strs.strs[f->dso] : NULL;
		out.resolved = f->resolved;
		out.kernel = f->kernel;
	}
	out.total = n->weight;
	if (stacks) {
		out.self = n->self;
	} else {
		/* Call graphs keep no self weight: it is what the children
		 * do not carry. */
		for (c = n->first_child; c != NO_NODE; c = t->nodes[c].next_sibling)
			under += t->nodes[c].weight;
		out.self = n->weight - under;
	}
	out.first_seen = n->first_seen;
	out.nr_children = n->nr_children;
	memcpy(node, &out, node->sz < sizeof(out) ? node->sz : sizeof(out));
}

#define NODE_SZ_MIN (offsetof(struct perfctr_profile_node, handle) + \
		     sizeof(uint64_t))

int perfctr_profile__stack_root(struct perfctr_profile *prof,
				struct perfctr_profile_node *root)
{
	if (!prof || !root || root->sz < NODE_SZ_MIN)
		return pc_err(EINVAL);
	fill_node(prof, true, 0, root);
	return 0;
}

int perfctr_profile__callgraph_root(struct perfctr_profile *prof, size_t idx,
				    struct perfctr_profile_node *root)
{
	const struct entry *e;

	if (!prof || !root || root->sz < NODE_SZ_MIN ||
	    prof->callgraph == PERFCTR_CALLGRAPH_NONE)
		return pc_err(EINVAL);
	if (profile_sort(prof))
		return pc_err(ENOMEM);
	if (idx >= prof->nr_entries)
		return pc_err(ERANGE);
	e = &prof->entries[prof->order[idx]];
	/* Every row of a call-graph profile has its root: the sample that
	 * made the row made it. */
	fill_node(prof, false, e->graph_root, root);
	return 0;
}

int perfctr_profile__child(struct perfctr_profile *prof,
			   const struct perfctr_profile_node *parent, size_t i,
			   struct perfctr_profile_node *child)
{
	bool stacks;
	struct tree *t;
	uint64_t idx;

	if (!prof || !parent || !child || parent->sz < NODE_SZ_MIN ||
	    child->sz < NODE_SZ_MIN)
		return pc_err(EINVAL);
	stacks = parent->handle & HANDLE_STACKS;
	idx = parent->handle & ~HANDLE_STACKS;
	t = stacks ? &prof->stacks : &prof->graphs;
	if (idx >= t->nr)
		return pc_err(EINVAL);
	if (tree_index(prof, t))
		return pc_err(ENOMEM);
	if (i >= (size_t)(t->kid_start[idx + 1] - t->kid_start[idx]))
		return pc_err(ERANGE);
	fill_node(prof, stacks, t->kids[t->kid_start[idx] + i], child);
	return 0;
}
