// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex diff --folded and --flame: the stack trees of the base and the
 * new profile merged into one tree keyed by the frames' names as the
 * folded stacks print them, so that a path is the same path in both
 * recordings whatever addresses its functions had (perf diff matches
 * rows by name for the same reason).  Siblings that print alike (two
 * unresolved addresses of one DSO) are one node, as FlameGraph merges
 * them.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "report.h"

#define NODE_INIT { .sz = sizeof(struct perfctr_profile_node) }
#define NONE SIZE_MAX

struct snode {
	char *name;
	size_t parent;
	uint64_t total[2];	/* samples at and under it: base, new */
	uint64_t self[2];	/* samples that ended at it */
	size_t *kids;
	size_t nr_kids, cap_kids;
};

struct diff_stacks {
	struct snode *nodes;	/* [0] is the root */
	size_t nr, cap;
	size_t *slots;		/* hash of (parent, name): node index + 1 */
	size_t nr_slots;
	uint64_t samples[2];
	double max_change;	/* the largest |share change| of a frame */
	size_t *path;		/* the flame graph's frames being drawn */
	size_t path_cap;
};

static uint64_t hash_of(size_t parent, const char *name)
{
	uint64_t h = 1469598103934665603ULL ^ (parent * 0x9e3779b97f4a7c15ULL);

	while (*name)
		h = (h ^ (unsigned char)*name++) * 1099511628211ULL;
	return h;
}

static int grow_slots(struct diff_stacks *ds)
{
	size_t n = ds->nr_slots ? 2 * ds->nr_slots : 1024, i;
	size_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 1; i < ds->nr; i++) {
		size_t s = hash_of(ds->nodes[i].parent, ds->nodes[i].name) & (n - 1);

		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = i + 1;
	}
	free(ds->slots);
	ds->slots = slots;
	ds->nr_slots = n;
	return 0;
}

static size_t lookup(const struct diff_stacks *ds, size_t parent,
		     const char *name, size_t *slot)
{
	size_t s = hash_of(parent, name) & (ds->nr_slots - 1), i;

	while ((i = ds->slots[s])) {
		const struct snode *n = &ds->nodes[i - 1];

		if (n->parent == parent && !strcmp(n->name, name))
			return i - 1;
		s = (s + 1) & (ds->nr_slots - 1);
	}
	if (slot)
		*slot = s;
	return NONE;
}

/* The child @name of @parent, made when new; NONE when out of memory. */
static size_t child_of(struct diff_stacks *ds, size_t parent, const char *name)
{
	size_t slot, i = lookup(ds, parent, name, &slot);
	struct snode *p, *n;

	if (i != NONE)
		return i;
	if (2 * (ds->nr + 1) > ds->nr_slots) {
		if (grow_slots(ds))
			return NONE;
		lookup(ds, parent, name, &slot);
	}
	if (ds->nr == ds->cap) {
		size_t cap = 2 * ds->cap;
		struct snode *nodes = realloc(ds->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return NONE;
		ds->nodes = nodes;
		ds->cap = cap;
	}
	p = &ds->nodes[parent];
	if (p->nr_kids == p->cap_kids) {
		size_t cap = p->cap_kids ? 2 * p->cap_kids : 4;
		size_t *kids = realloc(p->kids, cap * sizeof(*kids));

		if (!kids)
			return NONE;
		p->kids = kids;
		p->cap_kids = cap;
	}
	i = ds->nr;
	n = &ds->nodes[i];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	if (!n->name)
		return NONE;
	n->parent = parent;
	ds->nr++;
	p->kids[p->nr_kids++] = i;
	ds->slots[slot] = i + 1;
	return i;
}

static int add_tree(struct diff_stacks *ds, struct perfctr_profile *prof,
		    const struct perfctr_profile_node *node, size_t at, int side)
{
	struct perfctr_profile_node kid = NODE_INIT;
	char name[512];
	size_t i, k;
	int err;

	ds->nodes[at].total[side] += node->total;
	ds->nodes[at].self[side] += node->self;
	for (i = 0; i < node->nr_children; i++) {
		err = perfctr_profile__child(prof, node, i, &kid);
		if (err)
			return err;
		report_stack_name(&kid, name, sizeof(name));
		k = child_of(ds, at, name);
		if (k == NONE)
			return -ENOMEM;
		err = add_tree(ds, prof, &kid, k, side);
		if (err)
			return err;
	}
	return 0;
}

void diff_stacks__delete(struct diff_stacks *ds)
{
	if (!ds)
		return;
	for (size_t i = 0; i < ds->nr; i++) {
		free(ds->nodes[i].name);
		free(ds->nodes[i].kids);
	}
	free(ds->nodes);
	free(ds->slots);
	free(ds->path);
	free(ds);
}

/* The change of a share of all samples: of those at and under a node
 * (@self false), or of those that ended at it. */
static double change_of(const struct diff_stacks *ds, const struct snode *n,
			bool self)
{
	const uint64_t *count = self ? n->self : n->total;
	double base = ds->samples[0] ? (double)count[0] / ds->samples[0] : 0;
	double new = ds->samples[1] ? (double)count[1] / ds->samples[1] : 0;

	return new - base;
}

struct diff_stacks *diff_stacks__new(struct perfctr_profile *base,
				     struct perfctr_profile *new)
{
	struct perfctr_profile *profs[2] = { base, new };
	struct diff_stacks *ds = calloc(1, sizeof(*ds));
	int err = -ENOMEM;

	if (!ds)
		goto fail;
	ds->cap = 256;
	ds->nodes = calloc(ds->cap, sizeof(*ds->nodes));
	if (!ds->nodes || grow_slots(ds))
		goto fail;
	ds->nodes[0].name = strdup("all");
	ds->nodes[0].parent = NONE;
	if (!ds->nodes[0].name)
		goto fail;
	ds->nr = 1;
	for (int side = 0; side < 2; side++) {
		struct perfctr_profile_node root = NODE_INIT;

		if (!profs[side])
			continue;
		err = perfctr_profile__stack_root(profs[side], &root);
		if (!err)
			err = add_tree(ds, profs[side], &root, 0, side);
		if (err)
			goto fail;
		ds->samples[side] = root.total;
	}
	for (size_t i = 1; i < ds->nr; i++) {
		double c = fabs(change_of(ds, &ds->nodes[i], true));

		if (c > ds->max_change)
			ds->max_change = c;
	}
	return ds;
fail:
	diff_stacks__delete(ds);
	errno = -err;
	return NULL;
}

/* ---- folded differences ---- */

static const struct diff_stacks *sort_ds;

static int by_name(const void *a, const void *b)
{
	return strcmp(sort_ds->nodes[*(const size_t *)a].name,
		      sort_ds->nodes[*(const size_t *)b].name);
}

static int write_folded(struct diff_stacks *ds, size_t at, char **path,
			size_t len, size_t *cap, FILE *out, int *lines)
{
	struct snode *n = &ds->nodes[at];

	if (len && (n->self[0] || n->self[1])) {
		fprintf(out, "%.*s %" PRIu64 " %" PRIu64 "\n", (int)len, *path,
			n->self[0], n->self[1]);
		(*lines)++;
	}
	sort_ds = ds;
	if (n->nr_kids > 1)
		qsort(n->kids, n->nr_kids, sizeof(*n->kids), by_name);
	for (size_t i = 0; i < n->nr_kids; i++) {
		const char *name = ds->nodes[n->kids[i]].name;
		size_t nlen = strlen(name), at_len = len + (len ? 1 : 0);
		int err;

		if (at_len + nlen + 1 > *cap) {
			size_t ncap = 2 * (at_len + nlen + 1);
			char *p = realloc(*path, ncap);

			if (!p)
				return -ENOMEM;
			*path = p;
			*cap = ncap;
		}
		if (len)
			(*path)[len] = ';';
		memcpy(*path + at_len, name, nlen);
		err = write_folded(ds, n->kids[i], path, at_len + nlen, cap,
				   out, lines);
		if (err)
			return err;
	}
	return 0;
}

int diff_stacks__write_folded(struct diff_stacks *ds, FILE *out)
{
	size_t cap = 4096;
	char *path = malloc(cap);
	int lines = 0, err;

	if (!path)
		return -ENOMEM;
	err = write_folded(ds, 0, &path, 0, &cap, out, &lines);
	free(path);
	if (err)
		return err;
	if (fflush(out) || ferror(out))
		return -EIO;
	return lines;
}

/* ---- differential flame graph ---- */

/*
 * A frame's fill from the change of its own share (the samples that ended
 * in it, as FlameGraph's differential graphs colour): white when
 * unchanged, towards red as it grew and towards blue as it shrank, full
 * colour at the largest change of the graph.  A caller whose callees
 * changed stays white: the colour is where the time went.
 */
static void paint(void *arg, size_t depth, const char *name,
		  const struct perfctr_profile_node *node, char *fill,
		  size_t fill_size, char *note, size_t note_size)
{
	struct diff_stacks *ds = arg;
	size_t at = NONE;
	double change, t;
	unsigned int fade;

	(void)node;
	if (depth >= ds->path_cap) {
		size_t cap = 2 * depth + 64;
		size_t *p = realloc(ds->path, cap * sizeof(*p));

		if (!p) {
			snprintf(fill, fill_size, "rgb(220,220,220)");
			return;
		}
		ds->path = p;
		ds->path_cap = cap;
	}
	if (depth == 0)
		at = 0;
	else if (ds->path[depth - 1] != NONE)
		at = lookup(ds, ds->path[depth - 1], name, NULL);
	ds->path[depth] = at;
	if (at == NONE) {
		/* Drawn from the new profile, so in the tree; kept safe. */
		snprintf(fill, fill_size, "rgb(220,220,220)");
		return;
	}
	change = change_of(ds, &ds->nodes[at], true);
	t = ds->max_change > 0 ? fabs(change) / ds->max_change : 0;
	fade = 255 - (unsigned int)lround(t * 200);
	if (change > 0)
		snprintf(fill, fill_size, "rgb(255,%u,%u)", fade, fade);
	else if (change < 0)
		snprintf(fill, fill_size, "rgb(%u,%u,255)", fade, fade);
	else
		snprintf(fill, fill_size, "rgb(250,250,250)");
	if (depth == 0)
		return;
	if (!ds->nodes[at].total[0])
		snprintf(note, note_size, "not in the base, %+.2f%%; self %+.2f%%",
			 100 * change_of(ds, &ds->nodes[at], false), 100 * change);
	else
		snprintf(note, note_size, "base %.2f%%, %+.2f%%; self %+.2f%%",
			 100.0 * ds->nodes[at].total[0] / ds->samples[0],
			 100 * change_of(ds, &ds->nodes[at], false), 100 * change);
}

int diff_stacks__write_flame(struct diff_stacks *ds,
			     struct perfctr_profile *new, FILE *out,
			     const char *subtitle)
{
	struct report_flame_opts fopts = {
		.title = "Differential Flame Graph",
		.subtitle = subtitle,
		.paint = paint,
		.paint_arg = ds,
	};

	return report_write_flame_svg(new, out, &fopts);
}
