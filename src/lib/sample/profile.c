// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Profiles: flat rows by sort keys, call-graph trees per row, and one
 * stack tree (comm, then frames from the outermost caller to the leaf)
 * that feeds both the folded output and the flame graph.
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

/* ---- interning ---- */

struct strtab {
	char **strs;
	uint64_t *hashes;
	size_t nr, cap;
	uint32_t *slots;	/* id + 1, 0 = empty */
	size_t nslots;
};

static uint64_t hash_bytes(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int strtab_grow(struct strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 256, i;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->nr; i++) {
		size_t h = t->hashes[i] & (n - 1);

		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

/* Intern @s; returns its id or -ENOMEM. */
static int64_t strtab_intern(struct strtab *t, const char *s)
{
	uint64_t hash = hash_bytes(s);
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

/* A frame: (name, dso, kernel) interned as one id. */
struct frame_rec {
	uint32_t name;
	uint32_t dso;
	uint32_t flame;		/* the name shown in stacks ("sym_[k]") */
	bool kernel;
};

/* ---- trees ---- */

struct node {
	uint32_t id;		/* frame id, or comm string id at depth 1 */
	uint32_t first_child;
	uint32_t next_sibling;
	uint32_t nr_children;
	uint64_t weight;	/* everything under and at this node */
	uint64_t self;		/* samples that ended here */
	uint64_t samples;
};

struct tree {
	struct node *nodes;
	size_t nr, cap;
};

static int64_t tree_new_node(struct tree *t, uint32_t id)
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
	n->first_child = n->next_sibling = NO_NODE;
	return (int64_t)t->nr++;
}

static int64_t tree_child(struct tree *t, uint32_t parent, uint32_t id)
{
	uint32_t c;
	int64_t n;

	for (c = t->nodes[parent].first_child; c != NO_NODE;
	     c = t->nodes[c].next_sibling)
		if (t->nodes[c].id == id)
			return c;
	n = tree_new_node(t, id);
	if (n < 0)
		return n;
	t->nodes[n].next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = (uint32_t)n;
	t->nodes[parent].nr_children++;
	return n;
}

/* ---- the profile ---- */

struct entry {
	uint32_t key[PERFCTR_SORT_NR];
	uint64_t samples;
	uint64_t weight;
	bool kernel;
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
	prof->last_comm_id = -1;
	prof->callgraph = PC_OPTS_GET(opts, callgraph, PERFCTR_CALLGRAPH_NONE);
	if (PC_OPTS_GET(opts, stable_strings, false)) {
		prof->fcache = calloc(FCACHE_SIZE, sizeof(*prof->fcache));
		if (!prof->fcache) {
			perfctr_profile__delete(prof);
			return NULL;
		}
	}
	prof->unknown_dso = strtab_intern(&prof->strs, "[unknown]");
	if (prof->unknown_dso < 0 || tree_new_node(&prof->stacks, 0) < 0) {
		perfctr_profile__delete(prof);
		errno = ENOMEM;
		return NULL;
	}
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
	free(prof->stacks.nodes);
	strtab_free(&prof->strs);
	free(prof);
}

static uint64_t frame_hash(uint32_t name, uint32_t dso, bool kernel)
{
	return mix64(((uint64_t)name << 32) ^ dso ^ ((uint64_t)kernel << 63));
}

static int frame_slots_grow(struct perfctr_profile *prof)
{
	size_t n = prof->frame_nslots ? prof->frame_nslots * 2 : 256, i;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < prof->nr_frames; i++) {
		const struct frame_rec *f = &prof->frames[i];
		size_t h = frame_hash(f->name, f->dso, f->kernel) & (n - 1);

		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = (uint32_t)i + 1;
	}
	free(prof->frame_slots);
	prof->frame_slots = slots;
	prof->frame_nslots = n;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
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
	int64_t name, dso, flame;
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
	/* The stack name: FlameGraph's conventions. */
	if (f->sym)
		snprintf(buf, sizeof(buf), "%s%s", f->sym, f->kernel ? "_[k]" : "");
	else
		snprintf(buf, sizeof(buf), "[%s]%s",
			 f->dso ? base_name(f->dso) : "unknown",
			 f->kernel ? "_[k]" : "");
	for (char *p = buf; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = ':';
	flame = strtab_intern(&prof->strs, buf);
	if (flame < 0)
		return -ENOMEM;
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
	rec->flame = (uint32_t)flame;
	rec->kernel = f->kernel;
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
	_Static_assert(PERFCTR_SORT_NR == 6, "key_hash takes the keys by pairs");
	uint64_t a = ((uint64_t)key[0] << 32 | key[1]) * 0x9e3779b97f4a7c15ULL;
	uint64_t b = ((uint64_t)key[2] << 32 | key[3]) * 0xc2b2ae3d27d4eb4fULL;
	uint64_t c = ((uint64_t)key[4] << 32 | key[5]) * 0x165667b19e3779f9ULL;

	return mix64(a + (b << 21 | b >> 43) + (c << 42 | c >> 22));
}

/* Key by key: the key was just written 4 bytes at a time, and a wider
 * load of it (an inlined memcmp) would wait for the stores to retire. */
static bool key_equal(const uint32_t *a, const uint32_t *b)
{
	for (size_t k = 0; k < PERFCTR_SORT_NR; k++)
		if (a[k] != b[k])
			return false;
	return true;
}

static int entry_slots_grow(struct perfctr_profile *prof)
{
	size_t n = prof->entry_nslots ? prof->entry_nslots * 2 : 256, i;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < prof->nr_entries; i++) {
		size_t h = key_hash(prof->entries[i].key) & (n - 1);

		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = (uint32_t)i + 1;
	}
	free(prof->entry_slots);
	prof->entry_slots = slots;
	prof->entry_nslots = n;
	return 0;
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

int perfctr_profile__add(struct perfctr_profile *prof,
			 const struct perfctr_profile_sample *sample)
{
	uint32_t key[PERFCTR_SORT_NR] = { 0 };
	uint32_t ids[MAX_FRAMES];
	size_t nr, i, k;
	int64_t comm, node;
	struct entry *e;
	char buf[32];

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
	if (sample->comm && prof->last_comm_id >= 0 &&
	    !strcmp(sample->comm, prof->last_comm)) {
		comm = prof->last_comm_id;
	} else if (sample->comm) {
		size_t len = strlen(sample->comm);

		comm = strtab_intern(&prof->strs, sample->comm);
		if (comm >= 0 && len < sizeof(prof->last_comm)) {
			memcpy(prof->last_comm, sample->comm, len + 1);
			prof->last_comm_id = comm;
		}
	} else {
		snprintf(buf, sizeof(buf), ":%d", (int)sample->tid);
		comm = strtab_intern(&prof->strs, buf);
	}
	if (comm < 0)
		return pc_err(ENOMEM);
	for (k = 0; k < prof->nr_keys; k++) {
		enum perfctr_sort_key sk = prof->keys[k];

		switch (sk) {
		case PERFCTR_SORT_COMM: key[sk] = (uint32_t)comm; break;
		case PERFCTR_SORT_DSO: key[sk] = prof->frames[ids[0]].dso; break;
		case PERFCTR_SORT_SYM: key[sk] = ids[0]; break;
		case PERFCTR_SORT_PID: key[sk] = (uint32_t)sample->pid; break;
		case PERFCTR_SORT_TID: key[sk] = (uint32_t)sample->tid; break;
		case PERFCTR_SORT_CPU: key[sk] = (uint32_t)sample->cpu; break;
		default: break;
		}
	}
	if (prof->last_entry &&
	    key_equal(prof->entries[prof->last_entry - 1].key, key)) {
		e = &prof->entries[prof->last_entry - 1];
	} else {
		e = find_entry(prof, key);
		if (!e)
			return pc_err(ENOMEM);
		prof->last_entry = (size_t)(e - prof->entries) + 1;
	}
	if (!e->samples) {
		/* The row's texts, made once. */
		for (k = 0; k < prof->nr_keys; k++) {
			enum perfctr_sort_key sk = prof->keys[k];
			const char *text;

			switch (sk) {
			case PERFCTR_SORT_COMM:
				text = prof->strs.strs[comm];
				break;
			case PERFCTR_SORT_DSO:
				text = prof->strs.strs[prof->frames[ids[0]].dso];
				break;
			case PERFCTR_SORT_SYM:
				text = prof->strs.strs[prof->frames[ids[0]].name];
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
				return pc_err(ENOMEM);
		}
		e->kernel = sample->frames[0].kernel;
	}
	e->samples++;
	e->weight += sample->weight;
	prof->samples++;
	prof->weight += sample->weight;
	prof->sorted = false;

	if (prof->callgraph != PERFCTR_CALLGRAPH_NONE) {
		if (e->graph_root == NO_NODE) {
			node = tree_new_node(&prof->graphs, 0);
			if (node < 0)
				return pc_err(ENOMEM);
			e->graph_root = (uint32_t)node;
		}
		node = e->graph_root;
		prof->graphs.nodes[node].weight += sample->weight;
		prof->graphs.nodes[node].samples++;
		for (i = 0; i < nr; i++) {
			uint32_t id = prof->callgraph == PERFCTR_CALLGRAPH_CALLEE ?
				      ids[i] : ids[nr - 1 - i];

			node = tree_child(&prof->graphs, (uint32_t)node, id);
			if (node < 0)
				return pc_err(ENOMEM);
			prof->graphs.nodes[node].weight += sample->weight;
			prof->graphs.nodes[node].samples++;
		}
	}

	/* The stack tree: all -> comm -> outermost ... leaf.  It counts
	 * samples, as FlameGraph's collapse of perf script does. */
	node = tree_child(&prof->stacks, 0, (uint32_t)comm);
	if (node < 0)
		return pc_err(ENOMEM);
	prof->stacks.nodes[0].weight++;
	prof->stacks.nodes[node].weight++;
	for (i = nr; i-- > 0;) {
		node = tree_child(&prof->stacks, (uint32_t)node, ids[i]);
		if (node < 0)
			return pc_err(ENOMEM);
		prof->stacks.nodes[node].weight++;
	}
	prof->stacks.nodes[node].self++;
	prof->stacks.nodes[node].samples++;
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

static const struct perfctr_profile *sort_prof;

static int order_cmp(const void *a, const void *b)
{
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
	/* qsort has no context argument in C11; the profile is not shared
	 * between threads (see the header), so a static is enough. */
	sort_prof = prof;
	qsort(order, prof->nr_entries, sizeof(*order), order_cmp);
	sort_prof = NULL;
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
	memcpy(entry, &out, entry->sz < sizeof(out) ? entry->sz : sizeof(out));
	return 0;
}

/* ---- call graph printing ---- */

static const char *frame_name(const struct perfctr_profile *prof, uint32_t id)
{
	return prof->strs.strs[prof->frames[id].name];
}

struct child_ref {
	uint32_t node;
	uint64_t weight;
	const char *name;
};

static int child_cmp(const void *a, const void *b)
{
	const struct child_ref *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Children of @node, heaviest first; caller frees.  NULL if none/ENOMEM. */
static struct child_ref *sorted_children(const struct perfctr_profile *prof,
					 const struct tree *t, uint32_t node,
					 size_t *nr, bool by_flame_name)
{
	struct child_ref *refs;
	size_t n = 0;
	uint32_t c;

	*nr = 0;
	if (!t->nodes[node].nr_children)
		return NULL;
	refs = malloc(t->nodes[node].nr_children * sizeof(*refs));
	if (!refs)
		return NULL;
	for (c = t->nodes[node].first_child; c != NO_NODE; c = t->nodes[c].next_sibling) {
		refs[n].node = c;
		refs[n].weight = by_flame_name ? 0 : t->nodes[c].weight;
		refs[n].name = by_flame_name && node == 0 ?
			prof->strs.strs[t->nodes[c].id] :
			by_flame_name ? prof->strs.strs[prof->frames[t->nodes[c].id].flame] :
			frame_name(prof, t->nodes[c].id);
		n++;
	}
	qsort(refs, n, sizeof(*refs), child_cmp);
	*nr = n;
	return refs;
}

static void print_graph(const struct perfctr_profile *prof, uint32_t node,
			uint64_t total, double min_percent, FILE *out,
			char *prefix, size_t plen, size_t pcap)
{
	const struct tree *t = &prof->graphs;
	struct child_ref *kids;
	size_t nr, i;

	for (;;) {
		kids = sorted_children(prof, t, node, &nr, false);
		if (!nr)
			return;
		/* A straight line: the child carries all of the parent. */
		if (nr == 1 && kids[0].weight == t->nodes[node].weight) {
			fprintf(out, "%.*s%s\n", (int)plen, prefix, kids[0].name);
			node = kids[0].node;
			free(kids);
			continue;
		}
		break;
	}
	for (i = 0; i < nr; i++) {
		double pct = total ? 100.0 * kids[i].weight / total : 0.0;
		bool last = i + 1 == nr;
		size_t add;

		if (pct < min_percent)
			continue;
		fprintf(out, "%.*s|\n", (int)plen, prefix);
		fprintf(out, "%.*s%s--%.2f%%--%s\n", (int)plen, prefix,
			last ? " " : "|", pct, kids[i].name);
		/* Children of this branch line up under its name. */
		add = 4 + (size_t)snprintf(NULL, 0, "%.2f%%", pct) + 2;
		if (plen + add + 1 < pcap) {
			prefix[plen] = last ? ' ' : '|';
			memset(prefix + plen + 1, ' ', add - 1);
			print_graph(prof, kids[i].node, total, min_percent, out,
				    prefix, plen + add, pcap);
		}
	}
	free(kids);
}

int perfctr_profile__print_callgraph(struct perfctr_profile *prof, size_t idx,
				     FILE *out, double min_percent)
{
	char prefix[1024];
	const struct entry *e;
	uint32_t root;
	const struct tree *t = &prof->graphs;
	size_t indent = 12;

	if (!prof || !out)
		return pc_err(EINVAL);
	if (prof->callgraph == PERFCTR_CALLGRAPH_NONE)
		return pc_err(EINVAL);
	if (profile_sort(prof))
		return pc_err(ENOMEM);
	if (idx >= prof->nr_entries)
		return pc_err(ERANGE);
	e = &prof->entries[prof->order[idx]];
	root = e->graph_root;
	if (root == NO_NODE || t->nodes[root].first_child == NO_NODE)
		return 0;
	memset(prefix, ' ', sizeof(prefix));
	fprintf(out, "%*s|\n", (int)indent, "");
	/* The first frame hangs off "---"; the rest lines up after it. */
	{
		struct child_ref *kids;
		size_t nr, i;

		kids = sorted_children(prof, t, root, &nr, false);
		for (i = 0; i < nr; i++) {
			double pct = prof->weight ? 100.0 * kids[i].weight / prof->weight : 0;

			if (nr > 1)
				fprintf(out, "%*s---%.2f%%--%s\n", (int)indent, "",
					pct, kids[i].name);
			else
				fprintf(out, "%*s---%s\n", (int)indent, "",
					kids[i].name);
			print_graph(prof, kids[i].node, prof->weight, min_percent,
				    out, prefix, indent + 3, sizeof(prefix));
		}
		free(kids);
	}
	fputc('\n', out);
	return ferror(out) ? pc_err(EIO) : 0;
}

/* ---- folded stacks ---- */

static int write_folded(const struct perfctr_profile *prof, uint32_t node,
			char **path, size_t len, size_t *cap, FILE *out, int *lines)
{
	const struct tree *t = &prof->stacks;
	struct child_ref *kids;
	size_t nr, i;
	int err = 0;

	if (t->nodes[node].self && len) {
		fprintf(out, "%.*s %" PRIu64 "\n", (int)len, *path,
			t->nodes[node].self);
		(*lines)++;
	}
	kids = sorted_children(prof, t, node, &nr, true);
	if (!kids && t->nodes[node].nr_children)
		return -ENOMEM;
	for (i = 0; i < nr && !err; i++) {
		size_t nlen = strlen(kids[i].name), need = len + 1 + nlen + 1;

		if (need > *cap) {
			size_t ncap = *cap * 2 > need ? *cap * 2 : need;
			char *p = realloc(*path, ncap);

			if (!p) {
				err = -ENOMEM;
				break;
			}
			*path = p;
			*cap = ncap;
		}
		if (len)
			(*path)[len] = ';';
		memcpy(*path + len + (len ? 1 : 0), kids[i].name, nlen);
		err = write_folded(prof, kids[i].node, path,
				   len + (len ? 1 : 0) + nlen, cap, out, lines);
	}
	free(kids);
	return err;
}

int perfctr_profile__write_folded(struct perfctr_profile *prof, FILE *out)
{
	size_t cap = 4096;
	char *path;
	int lines = 0, err;

	if (!prof || !out)
		return pc_err(EINVAL);
	path = malloc(cap);
	if (!path)
		return pc_err(ENOMEM);
	err = write_folded(prof, 0, &path, 0, &cap, out, &lines);
	free(path);
	if (err)
		return pc_err(-err);
	if (fflush(out) || ferror(out))
		return pc_err(EIO);
	return lines;
}

/* ---- flame graph ---- */

#define FRAME_HEIGHT 16
#define FONT_SIZE 12
#define PAD_TOP 60
#define PAD_BOTTOM 40
#define PAD_SIDE 10

static void xml_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			if ((unsigned char)*s < 0x20 && *s != '\t')
				fputc('?', out);
			else
				fputc(*s, out);
		}
	}
}

static size_t tree_depth(const struct tree *t, uint32_t node)
{
	size_t best = 0;
	uint32_t c;

	for (c = t->nodes[node].first_child; c != NO_NODE; c = t->nodes[c].next_sibling) {
		size_t d = tree_depth(t, c);

		if (d > best)
			best = d;
	}
	return best + 1;
}

/* Warm colours from the name, so a function keeps its colour across runs;
 * kernel frames a little more orange. */
static void frame_color(const char *name, char *buf, size_t size)
{
	uint64_t h = hash_bytes(name);
	bool kernel = strstr(name, "_[k]") != NULL;
	unsigned r = 205 + (unsigned)(h % 50);
	unsigned g = (kernel ? 120 : 60) + (unsigned)((h >> 8) % 130);
	unsigned b = (unsigned)((h >> 16) % 55);

	snprintf(buf, size, "rgb(%u,%u,%u)", r, g, b);
}

struct flame_ctx {
	const struct perfctr_profile *prof;
	FILE *out;
	double scale;		/* pixels per weight unit */
	uint64_t total;
	size_t depth;		/* rows */
	unsigned int height;
	const char *unit;
};

static void flame_frame(struct flame_ctx *c, uint32_t node, const char *name,
			uint64_t start, size_t depth)
{
	const struct tree *t = &c->prof->stacks;
	const struct node *n = &t->nodes[node];
	double x = PAD_SIDE + start * c->scale, w = n->weight * c->scale;
	double y = c->height - PAD_BOTTOM - (depth + 1) * (double)FRAME_HEIGHT;
	struct child_ref *kids;
	size_t nr, i, fit;
	uint64_t off = start;
	char color[32];

	/* Frames thinner than a tenth of a pixel vanish, with their children. */
	if (w < 0.1)
		return;
	frame_color(name, color, sizeof(color));
	fprintf(c->out, "<g class=\"f\" data-s=\"%" PRIu64 "\" data-e=\"%" PRIu64
		"\" data-d=\"%zu\"><title>", start, start + n->weight, depth);
	xml_escape(c->out, name);
	fprintf(c->out, " (%" PRIu64 " %s, %.2f%%)</title>", n->weight, c->unit,
		c->total ? 100.0 * n->weight / c->total : 0.0);
	fprintf(c->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\" ry=\"2\"/>", x, y, w, FRAME_HEIGHT - 1,
		color);
	fprintf(c->out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 4);
	/* About 7 pixels per character at this font size. */
	fit = w > 20 ? (size_t)((w - 6) / 7) : 0;
	if (fit >= strlen(name)) {
		xml_escape(c->out, name);
	} else if (fit > 2) {
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "%.*s..", (int)(fit - 2), name);
		xml_escape(c->out, tmp);
	}
	fputs("</text></g>\n", c->out);

	/* Children in name order, as FlameGraph draws them. */
	kids = sorted_children(c->prof, t, node, &nr, true);
	for (i = 0; i < nr; i++) {
		flame_frame(c, kids[i].node, kids[i].name, off, depth + 1);
		off += t->nodes[kids[i].node].weight;
	}
	free(kids);
}

static const char flame_script[] =
"var svg=document.documentElement,frames=[],total=0,zoomed=null,searching=null;\n"
"function attr(g,n){return parseFloat(g.getAttribute('data-'+n));}\n"
"function init(){var gs=document.getElementsByClassName('f');\n"
" for(var i=0;i<gs.length;i++){var g=gs[i];var r=g.getElementsByTagName('rect')[0];\n"
"  var t=g.getElementsByTagName('text')[0];\n"
"  frames.push({g:g,r:r,t:t,s:attr(g,'s'),e:attr(g,'e'),d:attr(g,'d'),\n"
"   name:g.getElementsByTagName('title')[0].textContent.replace(/ \\([^(]*\\)$/,'')});\n"
"  g.addEventListener('click',function(ev){zoom(this);},false);\n"
"  g.addEventListener('mouseover',function(){details(this);},false);\n"
"  g.addEventListener('mouseout',function(){details(null);},false);}\n"
" total=frames.length?frames[0].e:0;\n"
" document.getElementById('reset').addEventListener('click',function(){unzoom();});\n"
" document.getElementById('search').addEventListener('click',function(){search();});\n"
" window.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&e.keyCode===70){e.preventDefault();search();}},false);}\n"
"function find(g){for(var i=0;i<frames.length;i++)if(frames[i].g===g)return frames[i];return null;}\n"
"function details(g){var d=document.getElementById('details');\n"
" d.textContent=g?g.getElementsByTagName('title')[0].textContent:' ';}\n"
"function fit(f,w){var n=f.name,c=Math.floor((w-6)/7);\n"
" if(w<=20||c<3){f.t.textContent='';return;}\n"
" f.t.textContent=n.length<=c?n:n.substring(0,c-2)+'..';}\n"
"function place(f,x,w){f.r.setAttribute('x',x);f.r.setAttribute('width',w);\n"
" f.t.setAttribute('x',x+3);fit(f,w);f.g.style.display='';}\n"
"function zoom(g){var z=find(g);if(!z)return;zoomed=z;\n"
" var W=WIDTH-2*PAD,span=z.e-z.s;\n"
" for(var i=0;i<frames.length;i++){var f=frames[i];\n"
"  if(f.d<=z.d&&f.s<=z.s&&f.e>=z.e){place(f,PAD,W);f.g.style.opacity=f===z?'1':'0.6';}\n"
"  else if(f.d>z.d&&f.s>=z.s&&f.e<=z.e){place(f,PAD+(f.s-z.s)*W/span,(f.e-f.s)*W/span);f.g.style.opacity='1';}\n"
"  else f.g.style.display='none';}\n"
" document.getElementById('reset').style.opacity='1';}\n"
"function unzoom(){zoomed=null;var W=WIDTH-2*PAD;\n"
" for(var i=0;i<frames.length;i++){var f=frames[i];\n"
"  place(f,PAD+f.s*W/total,(f.e-f.s)*W/total);f.g.style.opacity='1';}\n"
" document.getElementById('reset').style.opacity='0.2';}\n"
"function search(){var term=window.prompt('Search for (regular expression):','');\n"
" var m=document.getElementById('matched');\n"
" for(var i=0;i<frames.length;i++){var f=frames[i];\n"
"  if(f.orig){f.r.setAttribute('fill',f.orig);f.orig=null;}}\n"
" if(!term){m.textContent=' ';return;}\n"
" var re;try{re=new RegExp(term);}catch(e){m.textContent='bad expression';return;}\n"
" var hit=[];for(var i=0;i<frames.length;i++){var f=frames[i];\n"
"  if(re.test(f.name)){f.orig=f.r.getAttribute('fill');f.r.setAttribute('fill','rgb(230,0,230)');hit.push(f);}}\n"
" hit.sort(function(a,b){return a.s-b.s||b.e-a.e;});\n"
" var covered=0,end=-1;for(var i=0;i<hit.length;i++){var f=hit[i];\n"
"  if(f.s>=end){covered+=f.e-f.s;end=f.e;}else if(f.e>end){covered+=f.e-end;end=f.e;}}\n"
" m.textContent='Matched: '+(total?(100*covered/total).toFixed(2):'0')+'%';}\n"
"window.addEventListener('load',init,false);\n";

int perfctr_profile__write_flame_svg(struct perfctr_profile *prof, FILE *out,
				     const struct perfctr_flame_opts *opts)
{
	struct flame_ctx c;
	const char *title, *subtitle;
	unsigned int width;

	if (!prof || !out || !pc_opts_valid(opts, sizeof(*opts)))
		return pc_err(EINVAL);
	title = PC_OPTS_GET(opts, title, NULL);
	subtitle = PC_OPTS_GET(opts, subtitle, NULL);
	width = PC_OPTS_GET(opts, width, 0);
	if (!title)
		title = "Flame Graph";
	if (width < 200)
		width = 1200;
	memset(&c, 0, sizeof(c));
	c.prof = prof;
	c.out = out;
	c.unit = PC_OPTS_GET(opts, unit, NULL);
	if (!c.unit)
		c.unit = "samples";
	c.total = prof->stacks.nodes[0].weight;
	c.depth = tree_depth(&prof->stacks, 0);
	c.height = (unsigned)(c.depth * FRAME_HEIGHT + PAD_TOP + PAD_BOTTOM);
	c.scale = c.total ? (double)(width - 2 * PAD_SIDE) / c.total : 0;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		width, c.height, width, c.height);
	fprintf(out, "<style type=\"text/css\">"
		"text{font-family:Verdana,sans-serif;font-size:%dpx;fill:rgb(0,0,0);}"
		".f:hover rect{stroke:black;stroke-width:0.5;cursor:pointer;}"
		"#title{font-size:17px;text-anchor:middle;}"
		"#subtitle{text-anchor:middle;fill:rgb(90,90,90);}"
		"#reset,#search{cursor:pointer;}"
		"</style>\n", FONT_SIZE);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\nvar WIDTH=%u,PAD=%d;\n%s]]></script>\n",
		width, PAD_SIDE, flame_script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"rgb(248,248,240)\"/>\n",
		width, c.height);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\">", width / 2);
	xml_escape(out, title);
	fputs("</text>\n", out);
	if (subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%u\" y=\"44\">", width / 2);
		xml_escape(out, subtitle);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"reset\" x=\"%d\" y=\"24\" style=\"opacity:0.2\">Reset Zoom</text>\n",
		PAD_SIDE);
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		width - PAD_SIDE);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		width - PAD_SIDE, c.height - 15);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		PAD_SIDE, c.height - 15);
	if (c.total)
		flame_frame(&c, 0, "all", 0, 0);
	fputs("</svg>\n", out);
	if (fflush(out) || ferror(out))
		return pc_err(EIO);
	return 0;
}
