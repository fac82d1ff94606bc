// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * pprof profiles: samples of resolved frames interned into pprof's
 * tables (strings, mappings, functions, locations) as they come, stacks
 * with equal labels merged, then encoded with protobuf-c from the schema
 * in profile.proto and gzip'd with zlib.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef HAVE_PROTOBUFC
#include "profile.pb-c.h"
#endif

#include "perfctr/offcpu.h"
#include "perfctr/pprof.h"
#include "common/internal.h"
#include "sample/symbols-internal.h"

bool perfctr_pprof_available(void)
{
#ifdef HAVE_PROTOBUFC
	return true;
#else
	return false;
#endif
}

/*
 * One interning table for every kind of key: a key is a run of bytes,
 * its id the order of first sight.  Keys live in one growing blob and
 * are referred to by offset, so the blob may move.
 */
struct itab {
	struct ient {
		uint64_t hash;
		size_t off, len;
	} *ents;
	size_t nr, cap;
	char *blob;
	size_t blob_len, blob_cap;
	uint32_t *slots;	/* id + 1; 0 is empty */
	size_t nslots;
};

static uint64_t hash_mem(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 1469598103934665603ULL;

	while (len--)
		h = (h ^ *p++) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static uint64_t itab_hash(const void *t, size_t i)
{
	return ((const struct itab *)t)->ents[i].hash;
}

static int itab_rehash(struct itab *t)
{
	return pc_slots_grow(&t->slots, &t->nslots, t->nr, itab_hash, t);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* The key's id, or -1 when absent. */
static int64_t itab_find(const struct itab *t, const void *key, size_t len,
			 uint64_t hash)
{
	size_t h;

	if (!t->nslots)
		return -1;
	for (h = hash & (t->nslots - 1); t->slots[h];
	     h = (h + 1) & (t->nslots - 1)) {
		const struct ient *e = &t->ents[t->slots[h] - 1];

		if (e->hash == hash && e->len == len &&
		    !memcmp(t->blob + e->off, key, len))
			return t->slots[h] - 1;
	}
	return -1;
}

/*
 * The id of @key, made when new (then *@added).  A NUL is stored after
 * every key, so string keys can be used as C strings.  -ENOMEM.
 */
static int64_t itab_intern(struct itab *t, const void *key, size_t len,
			   bool *added)
{
	uint64_t hash = hash_mem(key, len);
	int64_t id = itab_find(t, key, len, hash);
	size_t h;

	if (added)
		*added = false;
	if (id >= 0)
		return id;
	if (t->nr >= UINT32_MAX - 1)
		return -ENOMEM;
	if ((t->nr + 1) * 2 > t->nslots && itab_rehash(t))
		return -ENOMEM;
	if (grow((void **)&t->ents, &t->cap, t->nr + 1, sizeof(*t->ents)) ||
	    grow((void **)&t->blob, &t->blob_cap, t->blob_len + len + 8, 1))
		return -ENOMEM;
	memcpy(t->blob + t->blob_len, key, len);
	t->blob[t->blob_len + len] = '\0';
	t->ents[t->nr] = (struct ient){ .hash = hash, .off = t->blob_len,
					.len = len };
	/* Keys that are structs are read in place: keep them aligned. */
	t->blob_len = (t->blob_len + len + 1 + 7) & ~(size_t)7;
	for (h = hash & (t->nslots - 1); t->slots[h];
	     h = (h + 1) & (t->nslots - 1))
		;
	t->slots[h] = (uint32_t)t->nr + 1;
	if (added)
		*added = true;
	return (int64_t)t->nr++;
}

#ifdef HAVE_PROTOBUFC	/* only the encoder reads the keys back */
static const void *itab_key(const struct itab *t, size_t id)
{
	return t->blob + t->ents[id].off;
}
#endif

static void itab_free(struct itab *t)
{
	free(t->ents);
	free(t->blob);
	free(t->slots);
}

/* Keys of the tables below; all fields are string ids or pprof ids. */
struct mapping_key { int64_t dso; };
struct mapping_val { uint64_t lo, hi, leaves; bool kernel; };
struct function_key { int64_t name, dso; };
struct location_key { uint64_t mapping, address, function; };
/* A sample's key: its labels, then its location ids. */
struct sample_head { int64_t event, comm, pid, tid; };

struct perfctr_pprof {
	int64_t time_nanos, duration_nanos, period;
	int64_t period_type, period_unit, comment;	/* string ids */
	bool no_thread_labels;
	bool wall;

	struct itab strings;	/* id 0 is "" */
	struct itab mappings;	/* pprof id = index + 1 */
	struct mapping_val *mvals;
	size_t mvals_cap;
	struct itab functions;
	struct itab locations;
	struct itab samples;
	int64_t *values;	/* nr_types per sample */
	size_t values_cap;
	struct itab build_ids;	/* key: dso string id */
	int64_t *build_id_str;	/* per build_ids entry */
	size_t build_id_cap;

	int64_t *types, *units;	/* string ids per sample type */
	size_t nr_types, types_cap, units_cap;
	int64_t default_type;	/* index, -1: none */

	uint64_t *scratch;	/* a key being built */
	size_t scratch_cap;
};

static int64_t str_id(struct perfctr_pprof *pp, const char *s)
{
	if (!s || !*s)
		return 0;
	return itab_intern(&pp->strings, s, strlen(s), NULL);
}

struct perfctr_pprof *perfctr_pprof__new(const struct perfctr_pprof_opts *opts)
{
	struct perfctr_pprof *pp;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	if (!perfctr_pprof_available()) {
		errno = ENOTSUP;
		return NULL;
	}
	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return NULL;
	pp->default_type = -1;
	pp->time_nanos = PC_OPTS_GET(opts, time_nanos, 0);
	pp->duration_nanos = PC_OPTS_GET(opts, duration_nanos, 0);
	pp->period = PC_OPTS_GET(opts, period, 0);
	pp->no_thread_labels = PC_OPTS_GET(opts, no_thread_labels, false);
	pp->wall = PC_OPTS_GET(opts, wall, false);
	if (itab_intern(&pp->strings, "", 0, NULL) < 0 ||
	    (pp->period_type = str_id(pp, PC_OPTS_GET(opts, period_type, NULL))) < 0 ||
	    (pp->period_unit = str_id(pp, PC_OPTS_GET(opts, period_unit, NULL))) < 0 ||
	    (pp->comment = str_id(pp, PC_OPTS_GET(opts, comment, NULL))) < 0) {
		perfctr_pprof__delete(pp);
		errno = ENOMEM;
		return NULL;
	}
	return pp;
}

void perfctr_pprof__delete(struct perfctr_pprof *pp)
{
	if (!pp)
		return;
	itab_free(&pp->strings);
	itab_free(&pp->mappings);
	itab_free(&pp->functions);
	itab_free(&pp->locations);
	itab_free(&pp->samples);
	itab_free(&pp->build_ids);
	free(pp->mvals);
	free(pp->values);
	free(pp->build_id_str);
	free(pp->types);
	free(pp->units);
	free(pp->scratch);
	free(pp);
}

int perfctr_pprof__add_sample_type(struct perfctr_pprof *pp, const char *type,
				   const char *unit)
{
	int64_t t, u;

	if (!pp || !type || !unit)
		return pc_err(EINVAL);
	if (pp->samples.nr)
		return pc_err(EBUSY);
	if (pp->nr_types >= INT32_MAX ||
	    grow((void **)&pp->types, &pp->types_cap, pp->nr_types + 1,
		 sizeof(*pp->types)) ||
	    grow((void **)&pp->units, &pp->units_cap, pp->nr_types + 1,
		 sizeof(*pp->units)))
		return pc_err(ENOMEM);
	t = str_id(pp, type);
	u = str_id(pp, unit);
	if (t < 0 || u < 0)
		return pc_err(ENOMEM);
	pp->types[pp->nr_types] = t;
	pp->units[pp->nr_types] = u;
	return (int)pp->nr_types++;
}

int perfctr_pprof__set_default_sample_type(struct perfctr_pprof *pp, size_t idx)
{
	if (!pp)
		return pc_err(EINVAL);
	if (idx >= pp->nr_types)
		return pc_err(ERANGE);
	pp->default_type = (int64_t)idx;
	return 0;
}

int perfctr_pprof__set_build_id(struct perfctr_pprof *pp, const char *dso,
				const uint8_t *build_id, size_t size)
{
	char hex[2 * 64 + 1];
	int64_t dso_id, id, hex_id;
	size_t i;
	bool added;

	if (!pp || !dso || !build_id || !size || size > 64)
		return pc_err(EINVAL);
	for (i = 0; i < size; i++)
		snprintf(hex + 2 * i, 3, "%02x", build_id[i]);
	dso_id = str_id(pp, dso);
	hex_id = str_id(pp, hex);
	if (dso_id < 0 || hex_id < 0)
		return pc_err(ENOMEM);
	id = itab_intern(&pp->build_ids, &dso_id, sizeof(dso_id), &added);
	if (id < 0 || grow((void **)&pp->build_id_str, &pp->build_id_cap,
			   (size_t)id + 1, sizeof(*pp->build_id_str)))
		return pc_err(ENOMEM);
	pp->build_id_str[id] = hex_id;
	return 0;
}

/* The pprof id (from 1) of a frame's location; -ENOMEM. */
static int64_t location_of(struct perfctr_pprof *pp, const struct perfctr_frame *f,
			   bool leaf)
{
	struct location_key lk = { .address = f->addr };
	bool added;
	int64_t id;

	if (f->dso) {
		struct mapping_key mk = { .dso = str_id(pp, f->dso) };
		struct mapping_val *mv;

		if (mk.dso < 0)
			return -ENOMEM;
		id = itab_intern(&pp->mappings, &mk, sizeof(mk), &added);
		if (id < 0 || grow((void **)&pp->mvals, &pp->mvals_cap,
				   (size_t)id + 1, sizeof(*pp->mvals)))
			return -ENOMEM;
		mv = &pp->mvals[id];
		if (added)
			*mv = (struct mapping_val){ .lo = f->addr, .hi = f->addr,
						    .kernel = f->kernel };
		if (f->addr < mv->lo)
			mv->lo = f->addr;
		if (f->addr > mv->hi)
			mv->hi = f->addr;
		mv->leaves += leaf;
		lk.mapping = (uint64_t)id + 1;
	}
	if (f->sym) {
		struct function_key fk = { .name = str_id(pp, f->sym),
					   .dso = f->dso ? str_id(pp, f->dso) : 0 };

		if (fk.name < 0 || fk.dso < 0)
			return -ENOMEM;
		id = itab_intern(&pp->functions, &fk, sizeof(fk), NULL);
		if (id < 0)
			return -ENOMEM;
		lk.function = (uint64_t)id + 1;
	}
	id = itab_intern(&pp->locations, &lk, sizeof(lk), NULL);
	return id < 0 ? -ENOMEM : id + 1;
}

int perfctr_pprof__add(struct perfctr_pprof *pp,
		       const struct perfctr_pprof_sample *sample)
{
	const size_t head_words = sizeof(struct sample_head) / sizeof(uint64_t);
	struct sample_head head = { 0 };
	const char *event = NULL, *comm = NULL;
	pid_t pid = -1, tid = -1;
	size_t i, n;
	int64_t id, loc;
	bool added;

	if (!pp || !sample ||
	    sample->sz < offsetof(struct perfctr_pprof_sample, nr_frames) +
			 sizeof(sample->nr_frames) ||
	    !sample->frames || !sample->nr_frames || !pp->nr_types ||
	    sample->nr_values > pp->nr_types ||
	    (sample->nr_values && !sample->values))
		return pc_err(EINVAL);
	if (PC_OPTS_HAS(sample, comm) && !pp->no_thread_labels) {
		comm = sample->comm;
		pid = PC_OPTS_GET(sample, pid, -1);
		tid = PC_OPTS_GET(sample, tid, -1);
	}
	event = PC_OPTS_GET(sample, event, NULL);
	head.event = str_id(pp, event);
	head.comm = str_id(pp, comm);
	head.pid = pid;
	head.tid = tid;
	if (head.event < 0 || head.comm < 0)
		return pc_err(ENOMEM);
	n = head_words + sample->nr_frames;
	if (grow((void **)&pp->scratch, &pp->scratch_cap, n,
		 sizeof(*pp->scratch)))
		return pc_err(ENOMEM);
	memcpy(pp->scratch, &head, sizeof(head));
	for (i = 0; i < sample->nr_frames; i++) {
		loc = location_of(pp, &sample->frames[i], i == 0);
		if (loc < 0)
			return pc_err(ENOMEM);
		pp->scratch[head_words + i] = (uint64_t)loc;
	}
	id = itab_intern(&pp->samples, pp->scratch, n * sizeof(uint64_t),
			 &added);
	if (id < 0)
		return pc_err(ENOMEM);
	if (added) {
		if (grow((void **)&pp->values, &pp->values_cap,
			 ((size_t)id + 1) * pp->nr_types, sizeof(*pp->values)))
			return pc_err(ENOMEM);
		memset(pp->values + (size_t)id * pp->nr_types, 0,
		       pp->nr_types * sizeof(*pp->values));
	}
	for (i = 0; i < sample->nr_values; i++) {
		int64_t *v = &pp->values[(size_t)id * pp->nr_types + i];

		/* A sum past the int64 range stays at its limit rather
		 * than wrapping to the other sign. */
		if (__builtin_add_overflow(*v, sample->values[i], v))
			*v = sample->values[i] < 0 ? INT64_MIN : INT64_MAX;
	}
	return 0;
}

size_t perfctr_pprof__nr_samples(const struct perfctr_pprof *pp)
{
	return pp ? pp->samples.nr : 0;
}

static bool is_time_event(const struct perf_event_attr *attr)
{
	return attr && attr->type == PERF_TYPE_SOFTWARE &&
	       (attr->config == PERF_COUNT_SW_CPU_CLOCK ||
		attr->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* Event @i of @rd is the off-CPU time of perfctr_offcpu (offcpu.h). */
static bool is_offcpu_event(struct perfctr_reader *rd, size_t i)
{
	const char *name = perfctr_reader__event_name(rd, i);

	return name && !strcmp(name, PERFCTR_OFFCPU_EVENT);
}

static int reader_build_ids(struct perfctr_pprof *pp, struct perfctr_reader *rd)
{
	struct perfctr_symbols *syms = perfctr_reader__symbols(rd);
	struct perfctr_perfdata *pd = perfctr_reader__perfdata(rd);
	size_t i, n = syms ? perfctr_symbols__nr_dsos(syms) : 0;
	int err;

	for (i = 0; i < n; i++) {
		struct perfctr_dso_info info = { .sz = sizeof(info) };

		/* Before the build-id is read: a machine-wide recording
		 * maps hundreds of files that no sample lands in. */
		if (!pc_symbols__dso_hits(syms, i))
			continue;
		if (perfctr_symbols__dso(syms, i, &info) || !info.hits ||
		    !info.build_id_size || !info.path)
			continue;
		err = perfctr_pprof__set_build_id(pp, info.path, info.build_id,
						  info.build_id_size);
		if (err)
			return err;
	}
	/* The recording machine's ids win over those of the files here. */
	n = pd ? perfctr_perfdata__nr_build_ids(pd) : 0;
	for (i = 0; i < n; i++) {
		struct perfctr_build_id bid;

		if (perfctr_perfdata__build_id(pd, i, &bid) || !bid.size ||
		    !bid.filename)
			continue;
		err = perfctr_pprof__set_build_id(pp, bid.filename, bid.id,
						  bid.size);
		if (err)
			return err;
	}
	return 0;
}

/* The sample types of a first reader: "samples", one per event of @rd,
 * and with wall, "wall" (its column in *@wall_col, the default type).
 * Return 0 or a negative errno. */
static int add_reader_types(struct perfctr_pprof *pp, struct perfctr_reader *rd,
			    size_t *wall_col)
{
	size_t nr_events = perfctr_reader__nr_events(rd);
	int r;

	if (perfctr_pprof__add_sample_type(pp, "samples", "count") < 0)
		return pc_err(ENOMEM);
	for (size_t i = 0; i < nr_events; i++) {
		const struct perf_event_attr *attr =
			perfctr_reader__event_attr(rd, i);

		if (is_offcpu_event(rd, i))
			r = perfctr_pprof__add_sample_type(pp, "off_cpu",
							   "nanoseconds");
		else
			r = perfctr_pprof__add_sample_type(pp,
				perfctr_reader__event_name(rd, i),
				is_time_event(attr) ? "nanoseconds" : "count");
		if (r < 0)
			return r;
	}
	if (pp->wall) {
		r = perfctr_pprof__add_sample_type(pp, "wall", "nanoseconds");
		if (r < 0)
			return r;
		*wall_col = (size_t)r;
		pp->default_type = r;
	}
	return 0;
}

int64_t perfctr_pprof__add_reader(struct perfctr_pprof *pp,
				  struct perfctr_reader *rd)
{
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	size_t nr_events, i, first_typed, wall_col = 0;
	int64_t *values = NULL, count = 0;
	bool *seen = NULL;
	int r;

	if (!pp || !rd)
		return pc_err(EINVAL);
	nr_events = perfctr_reader__nr_events(rd);
	first_typed = pp->nr_types;
	if (!pp->nr_types) {
		r = add_reader_types(pp, rd, &wall_col);
		if (r < 0)
			return r;
	}
	values = calloc(pp->nr_types, sizeof(*values));
	seen = calloc(nr_events + 1, sizeof(*seen));
	if (!values || !seen) {
		r = pc_err(ENOMEM);
		goto out;
	}
	while ((r = perfctr_reader__next(rd, &rs)) > 0) {
		const struct perfctr_sample *s = rs.sample;
		size_t col = 1 + rs.event_idx;
		struct perfctr_pprof_sample ps = {
			.sz = sizeof(ps),
			.values = values,
			.nr_values = wall_col ? pp->nr_types :
				     col < pp->nr_types ? col + 1 : 1,
			.frames = rs.frames,
			.nr_frames = rs.nr_frames,
			.comm = rs.comm,
			.pid = rs.pid,
			.tid = rs.tid,
			.event = rs.event,
		};

		values[0] = 1;
		if (col < pp->nr_types)
			values[col] = s->period ? (int64_t)s->period : 1;
		if (wall_col && rs.event_idx < nr_events &&
		    (is_offcpu_event(rd, rs.event_idx) ||
		     is_time_event(perfctr_reader__event_attr(rd,
							      rs.event_idx))))
			values[wall_col] = (int64_t)s->period;
		r = perfctr_pprof__add(pp, &ps);
		if (col < pp->nr_types)
			values[col] = 0;
		values[wall_col] = 0;
		if (r < 0)
			goto out;
		if (rs.event_idx < nr_events)
			seen[rs.event_idx] = true;
		count++;
	}
	if (r < 0)
		goto out;
	if (!first_typed && nr_events == 1 && !pp->period_type) {
		const struct perf_event_attr *attr =
			perfctr_reader__event_attr(rd, 0);

		/* One event: its sampling period is the profile's (at a
		 * frequency, only a clock's period is known: 1 s / freq). */
		pp->period_type = pp->types[1];
		pp->period_unit = pp->units[1];
		if (attr && !attr->freq)
			pp->period = (int64_t)attr->sample_period;
		else if (attr && is_time_event(attr) && attr->sample_freq)
			pp->period = (int64_t)(1000000000ULL / attr->sample_freq);
	}
	if (!first_typed && pp->default_type < 0) {
		for (i = 0; i < nr_events; i++) {
			if (seen[i]) {
				pp->default_type = (int64_t)(1 + i);
				break;
			}
		}
	}
	r = reader_build_ids(pp, rd);
out:
	free(values);
	free(seen);
	return r < 0 ? r : count;
}

#ifdef HAVE_PROTOBUFC

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* Everything the message of one encoding points into, freed at once. */
struct msg {
	Profile prof;
	ValueType *types, period_type;
	ValueType **type_ptrs;
	Sample *samples;
	Sample **sample_ptrs;
	uint64_t *loc_ids;
	Label *labels;
	Label **label_ptrs;
	Mapping *mappings;
	Mapping **mapping_ptrs;
	Location *locations;
	Location **location_ptrs;
	Line *lines;
	Line **line_ptrs;
	Function *functions;
	Function **function_ptrs;
	char **strings;
	int64_t comment;
	size_t *map_order;	/* the mappings in the order written */
	uint64_t *map_id;	/* pprof id of each interned mapping */
};

/*
 * pprof takes the first mapping for the profiled program ("File:" of
 * go tool pprof): user-space DSOs come first, most samples first, so
 * that is the main binary of a command's profile.  qsort has no context
 * argument; encoding is not reentrant per object anyway, and the object
 * is used from one thread.
 */
static __thread const struct perfctr_pprof *sort_pp;

static int mapping_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct mapping_val *mx = &sort_pp->mvals[x], *my = &sort_pp->mvals[y];

	if (mx->kernel != my->kernel)
		return mx->kernel ? 1 : -1;
	if (mx->leaves != my->leaves)
		return mx->leaves > my->leaves ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void msg_free(struct msg *m)
{
	free(m->types);
	free(m->type_ptrs);
	free(m->samples);
	free(m->sample_ptrs);
	free(m->loc_ids);
	free(m->labels);
	free(m->label_ptrs);
	free(m->mappings);
	free(m->mapping_ptrs);
	free(m->locations);
	free(m->location_ptrs);
	free(m->lines);
	free(m->line_ptrs);
	free(m->functions);
	free(m->function_ptrs);
	free(m->strings);
	free(m->map_order);
	free(m->map_id);
}

/* Labels of a sample: event, comm, pid, tid (those it has). */
#define MAX_LABELS 4

/* String-table ids of the label keys, interned before the table is copied. */
struct label_keys {
	int64_t event, comm, pid, tid;
};

static const size_t sample_head_words =
	sizeof(struct sample_head) / sizeof(uint64_t);

/* The location ids of interned sample @i (its key after the head). */
static size_t sample_nr_locations(const struct perfctr_pprof *pp, size_t i)
{
	return pp->samples.ents[i].len / sizeof(uint64_t) - sample_head_words;
}

/* Every array of @m, sized after @pp (one spare entry each: no zero
 * size to calloc). */
static int msg_alloc(const struct perfctr_pprof *pp, struct msg *m)
{
	size_t i, nr_locs = 0;

	for (i = 0; i < pp->samples.nr; i++)
		nr_locs += sample_nr_locations(pp, i);
	m->types = calloc(pp->nr_types + 1, sizeof(*m->types));
	m->type_ptrs = calloc(pp->nr_types + 1, sizeof(*m->type_ptrs));
	m->samples = calloc(pp->samples.nr + 1, sizeof(*m->samples));
	m->sample_ptrs = calloc(pp->samples.nr + 1, sizeof(*m->sample_ptrs));
	m->loc_ids = calloc(nr_locs + 1, sizeof(*m->loc_ids));
	m->labels = calloc(MAX_LABELS * pp->samples.nr + 1, sizeof(*m->labels));
	m->label_ptrs = calloc(MAX_LABELS * pp->samples.nr + 1,
			       sizeof(*m->label_ptrs));
	m->mappings = calloc(pp->mappings.nr + 1, sizeof(*m->mappings));
	m->mapping_ptrs = calloc(pp->mappings.nr + 1, sizeof(*m->mapping_ptrs));
	m->locations = calloc(pp->locations.nr + 1, sizeof(*m->locations));
	m->location_ptrs = calloc(pp->locations.nr + 1,
				  sizeof(*m->location_ptrs));
	m->lines = calloc(pp->locations.nr + 1, sizeof(*m->lines));
	m->line_ptrs = calloc(pp->locations.nr + 1, sizeof(*m->line_ptrs));
	m->functions = calloc(pp->functions.nr + 1, sizeof(*m->functions));
	m->function_ptrs = calloc(pp->functions.nr + 1,
				  sizeof(*m->function_ptrs));
	m->strings = calloc(pp->strings.nr + 1, sizeof(*m->strings));
	m->map_order = calloc(pp->mappings.nr + 1, sizeof(*m->map_order));
	m->map_id = calloc(pp->mappings.nr + 1, sizeof(*m->map_id));
	if (!m->types || !m->type_ptrs || !m->samples || !m->sample_ptrs ||
	    !m->loc_ids || !m->labels || !m->label_ptrs || !m->mappings ||
	    !m->mapping_ptrs || !m->locations || !m->location_ptrs ||
	    !m->lines || !m->line_ptrs || !m->functions ||
	    !m->function_ptrs || !m->strings || !m->map_order || !m->map_id)
		return -ENOMEM;
	return 0;
}

static void msg_set_sample_types(const struct perfctr_pprof *pp,
				 struct msg *m)
{
	size_t i;

	for (i = 0; i < pp->nr_types; i++) {
		perftools__profiles__value_type__init(&m->types[i]);
		m->types[i].type = pp->types[i];
		m->types[i].unit = pp->units[i];
		m->type_ptrs[i] = &m->types[i];
	}
	m->prof.n_sample_type = pp->nr_types;
	m->prof.sample_type = m->type_ptrs;
}

/* The next free label of @m, keyed @key; the caller sets its value. */
static Label *msg_next_label(struct msg *m, size_t *nr_labels, int64_t key)
{
	Label *l = &m->labels[(*nr_labels)++];

	perftools__profiles__label__init(l);
	l->key = key;
	return l;
}

/* The labels of one sample from its head, those it has; returns how
 * many were added at m->labels[*nr_labels]. */
static size_t msg_add_labels(struct msg *m, size_t *nr_labels,
			     const struct label_keys *keys,
			     const struct sample_head *head)
{
	size_t first = *nr_labels;

	if (head->event)
		msg_next_label(m, nr_labels, keys->event)->str = head->event;
	if (head->comm)
		msg_next_label(m, nr_labels, keys->comm)->str = head->comm;
	if (head->pid >= 0)
		msg_next_label(m, nr_labels, keys->pid)->num = head->pid;
	if (head->tid >= 0)
		msg_next_label(m, nr_labels, keys->tid)->num = head->tid;
	return *nr_labels - first;
}

static void msg_set_samples(const struct perfctr_pprof *pp, struct msg *m,
			    const struct label_keys *keys)
{
	size_t i, nr_locs = 0, nr_labels = 0;

	for (i = 0; i < pp->samples.nr; i++) {
		const uint64_t *key = itab_key(&pp->samples, i);
		struct sample_head head;
		Sample *s = &m->samples[i];
		size_t n = sample_nr_locations(pp, i);
		size_t first_label = nr_labels;

		memcpy(&head, key, sizeof(head));
		perftools__profiles__sample__init(s);
		s->n_location_id = n;
		s->location_id = m->loc_ids + nr_locs;
		memcpy(s->location_id, key + sample_head_words,
		       n * sizeof(uint64_t));
		nr_locs += n;
		s->n_value = pp->nr_types;
		s->value = pp->values + i * pp->nr_types;
		s->n_label = msg_add_labels(m, &nr_labels, keys, &head);
		s->label = m->label_ptrs + first_label;
		while (first_label < nr_labels) {
			m->label_ptrs[first_label] = &m->labels[first_label];
			first_label++;
		}
		m->sample_ptrs[i] = s;
	}
	m->prof.n_sample = pp->samples.nr;
	m->prof.sample = m->sample_ptrs;
}

/* The mappings in the order of mapping_cmp, ids from 1 in that order;
 * m->map_id takes an interned mapping to its id. */
static void msg_set_mappings(struct perfctr_pprof *pp, struct msg *m)
{
	size_t i;

	for (i = 0; i < pp->mappings.nr; i++)
		m->map_order[i] = i;
	sort_pp = pp;
	qsort(m->map_order, pp->mappings.nr, sizeof(*m->map_order),
	      mapping_cmp);
	for (i = 0; i < pp->mappings.nr; i++)
		m->map_id[m->map_order[i]] = i + 1;
	for (i = 0; i < pp->mappings.nr; i++) {
		const struct mapping_key *mk = itab_key(&pp->mappings,
							m->map_order[i]);
		const struct mapping_val *mv = &pp->mvals[m->map_order[i]];
		Mapping *mp = &m->mappings[i];
		int64_t b = itab_find(&pp->build_ids, &mk->dso, sizeof(mk->dso),
				      hash_mem(&mk->dso, sizeof(mk->dso)));

		perftools__profiles__mapping__init(mp);
		mp->id = i + 1;
		mp->memory_start = mv->lo;
		mp->memory_limit = mv->hi + 1;
		mp->filename = mk->dso;
		mp->build_id = b >= 0 ? pp->build_id_str[b] : 0;
		/* Every location was resolved as far as it could be:
		 * viewers must not symbolise these addresses again. */
		mp->has_functions = true;
		m->mapping_ptrs[i] = mp;
	}
	m->prof.n_mapping = pp->mappings.nr;
	m->prof.mapping = m->mapping_ptrs;
}

/* Locations after msg_set_mappings (their mapping ids are its ids). */
static void msg_set_locations(const struct perfctr_pprof *pp, struct msg *m)
{
	size_t i;

	for (i = 0; i < pp->locations.nr; i++) {
		const struct location_key *lk = itab_key(&pp->locations, i);
		Location *loc = &m->locations[i];

		perftools__profiles__location__init(loc);
		loc->id = i + 1;
		loc->mapping_id = lk->mapping ? m->map_id[lk->mapping - 1] : 0;
		loc->address = lk->address;
		if (lk->function) {
			perftools__profiles__line__init(&m->lines[i]);
			m->lines[i].function_id = lk->function;
			m->line_ptrs[i] = &m->lines[i];
			loc->n_line = 1;
			loc->line = &m->line_ptrs[i];
		}
		m->location_ptrs[i] = loc;
	}
	m->prof.n_location = pp->locations.nr;
	m->prof.location = m->location_ptrs;
}

static void msg_set_functions(const struct perfctr_pprof *pp, struct msg *m)
{
	size_t i;

	for (i = 0; i < pp->functions.nr; i++) {
		const struct function_key *fk = itab_key(&pp->functions, i);
		Function *fn = &m->functions[i];

		perftools__profiles__function__init(fn);
		fn->id = i + 1;
		fn->name = fk->name;
		fn->system_name = fk->name;
		m->function_ptrs[i] = fn;
	}
	m->prof.n_function = pp->functions.nr;
	m->prof.function = m->function_ptrs;
}

static void msg_set_strings(const struct perfctr_pprof *pp, struct msg *m)
{
	size_t i;

	for (i = 0; i < pp->strings.nr; i++)
		m->strings[i] = (char *)itab_key(&pp->strings, i);
	m->prof.n_string_table = pp->strings.nr;
	m->prof.string_table = m->strings;
}

/* Times, period, comment and default sample type. */
static void msg_set_profile_fields(const struct perfctr_pprof *pp,
				   struct msg *m)
{
	m->prof.time_nanos = pp->time_nanos;
	m->prof.duration_nanos = pp->duration_nanos;
	if (pp->period_type || pp->period_unit) {
		perftools__profiles__value_type__init(&m->period_type);
		m->period_type.type = pp->period_type;
		m->period_type.unit = pp->period_unit;
		m->prof.period_type = &m->period_type;
	}
	m->prof.period = pp->period;
	if (pp->comment) {
		m->comment = pp->comment;
		m->prof.n_comment = 1;
		m->prof.comment = &m->comment;
	}
	if (pp->default_type >= 0)
		m->prof.default_sample_type = pp->types[pp->default_type];
}

static int msg_build(struct perfctr_pprof *pp, struct msg *m)
{
	struct label_keys keys;
	int r;

	/* Interned first: the string table copied below includes them. */
	keys.event = str_id(pp, "event");
	keys.comm = str_id(pp, "comm");
	keys.pid = str_id(pp, "pid");
	keys.tid = str_id(pp, "tid");
	if (keys.event < 0 || keys.comm < 0 || keys.pid < 0 || keys.tid < 0)
		return -ENOMEM;

	perftools__profiles__profile__init(&m->prof);
	r = msg_alloc(pp, m);
	if (r < 0)
		return r;
	msg_set_sample_types(pp, m);
	msg_set_samples(pp, m, &keys);
	msg_set_mappings(pp, m);
	msg_set_locations(pp, m);
	msg_set_functions(pp, m);
	msg_set_strings(pp, m);
	msg_set_profile_fields(pp, m);
	return 0;
}

/* @raw gzip'd into a buffer of malloc(3). */
static int gzip_buffer(const uint8_t *raw, size_t len, void **buf, size_t *size)
{
#ifdef HAVE_ZLIB
	z_stream z = { 0 };
	size_t cap;
	uint8_t *out;
	int zr;

	/* windowBits 15 + 16: a gzip wrapper, as pprof files have. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len) + 32;
	out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)raw;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (len > UINT32_MAX || cap > UINT32_MAX)
		zr = Z_BUF_ERROR;
	else
		zr = deflate(&z, Z_FINISH);
	if (zr != Z_STREAM_END) {
		deflateEnd(&z);
		free(out);
		return -EIO;
	}
	*size = z.total_out;
	deflateEnd(&z);
	*buf = out;
	return 0;
#else
	uint8_t *out = malloc(len ? len : 1);

	if (!out)
		return -ENOMEM;
	memcpy(out, raw, len);
	*buf = out;
	*size = len;
	return 0;
#endif
}

int perfctr_pprof__encode(struct perfctr_pprof *pp, void **buf, size_t *size)
{
	struct msg m;
	uint8_t *raw = NULL;
	size_t len;
	int err;

	if (!pp || !buf || !size)
		return pc_err(EINVAL);
	memset(&m, 0, sizeof(m));
	err = msg_build(pp, &m);
	if (!err) {
		len = protobuf_c_message_get_packed_size(&m.prof.base);
		raw = malloc(len ? len : 1);
		if (!raw)
			err = -ENOMEM;
	}
	if (!err) {
		protobuf_c_message_pack(&m.prof.base, raw);
		err = gzip_buffer(raw, len, buf, size);
	}
	free(raw);
	msg_free(&m);
	return err ? pc_err(-err) : 0;
}

#else /* !HAVE_PROTOBUFC */

int perfctr_pprof__encode(struct perfctr_pprof *pp, void **buf, size_t *size)
{
	/* No object can exist: perfctr_pprof__new() said ENOTSUP. */
	return pc_err(pp && buf && size ? ENOTSUP : EINVAL);
}

#endif /* HAVE_PROTOBUFC */

int perfctr_pprof__write(struct perfctr_pprof *pp, int fd)
{
	void *buf;
	size_t size, done = 0;
	int err = perfctr_pprof__encode(pp, &buf, &size);

	if (err)
		return err;
	while (done < size) {
		ssize_t n = write(fd, (char *)buf + done, size - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		done += (size_t)n;
	}
	free(buf);
	return err ? pc_err(-err) : 0;
}
