/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Counting cgroups through BPF (see bpfcg.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/bpfcg.h"
#include "core/engine.h"
#include "perfctr/target.h"

/* A cap, not memory: the cgroups map is not preallocated and the sums
 * grow a chunk at a time (a node runs thousands of cgroups; the cap is
 * the kernel's own default of cgroup.max.descendants' order). */
#define DEFAULT_MAX_CGROUPS 65536

#ifdef HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "common/bpflog.h"
#include "cgroup_counters.h"
#include "pc_bpfcg.skel.h"

struct bc_event {
	struct perf_event_attr attr;	/* as compared: see same_event() */
	char *filter;
	struct pc_engine *engine;	/* its counter on each online CPU */
};

struct bc_cgroup {
	uint64_t id;
	unsigned int refs;		/* bindings; 0 = the slot is free */
};

struct perfctr_bpf_counters {
	int error;			/* why there is no program, or 0 */
	struct pc_bpfcg *skel;
	struct perfctr_target *cpus;	/* every online CPU */
	int nr_possible;		/* the kernel's per-CPU value count */
	struct bc_event events[PC_BPFCG_MAX_EVENTS];
	size_t nr_events;
	size_t stride;			/* events the program can count */
	struct bc_cgroup *cgroups;	/* by slot, nr_slots of them */
	size_t nr_slots, used_slots;
	size_t max_cgroups;
	int *chunks;			/* fds of the sums' chunks */
	size_t nr_chunks;
	/* One slot's sums as a lookup gives them: [event][cpu]. */
	struct pc_bpfcg_value *buf;
	__u32 *keys;			/* stride keys, for batch lookups */
	/* perfctr_bpf_counters__freeze(): every slot's sums as of then,
	 * [slot][event][cpu], read in place of a flush and a lookup each. */
	bool frozen;
	struct pc_bpfcg_value *snap;
	size_t snap_slots;
	__u32 *snap_keys;		/* a chunk's keys */
};

struct pc_bpfcg_binding {
	struct perfctr_bpf_counters *bc;
	uint32_t slot;
	size_t nr;
	/* The sums of the last lookup (bc->buf) or of the freeze: [ev][cpu]. */
	const struct pc_bpfcg_value *sums;
	size_t *ev;			/* the program's index of each event */
	bool started;
	/* [i * nr_possible + cpu]: counted before the last start, and the
	 * sums at the last start. */
	struct pc_bpfcg_value *acc, *at_start;
};

/* A chunk of the sums: PC_BPFCG_CHUNK_SLOTS slots of stride values on
 * each possible CPU, zeroed.  Return: its fd or -errno. */
static int make_chunk(const struct perfctr_bpf_counters *bc)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "pc_bpfcg_chunk",
				sizeof(__u32), sizeof(struct pc_bpfcg_value),
				(__u32)(PC_BPFCG_CHUNK_SLOTS * bc->stride),
				NULL);

	return fd < 0 ? -errno : fd;
}

/* Chunk @fd (owned from now on, closed on failure) in the program's
 * sums, for the slots from nr_slots on. */
static int add_chunk(struct perfctr_bpf_counters *bc, int fd)
{
	__u32 key = (__u32)bc->nr_chunks;
	struct bc_cgroup *cg;
	int *chunks, err = -ENOMEM;

	if (bc->nr_slots + PC_BPFCG_CHUNK_SLOTS > bc->max_cgroups) {
		err = -E2BIG;
		goto fail;
	}
	chunks = realloc(bc->chunks, (bc->nr_chunks + 1) * sizeof(*chunks));
	if (!chunks)
		goto fail;
	bc->chunks = chunks;
	cg = realloc(bc->cgroups, (bc->nr_slots + PC_BPFCG_CHUNK_SLOTS) *
		     sizeof(*cg));
	if (!cg)
		goto fail;
	bc->cgroups = cg;
	if (bpf_map_update_elem(bpf_map__fd(bc->skel->maps.sums), &key, &fd,
				BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	memset(cg + bc->nr_slots, 0, PC_BPFCG_CHUNK_SLOTS * sizeof(*cg));
	bc->chunks[bc->nr_chunks++] = fd;
	bc->nr_slots += PC_BPFCG_CHUNK_SLOTS;
	return 0;
fail:
	close(fd);
	return err;
}

/* The cgroups outgrew the slots: one chunk more. */
static int grow(struct perfctr_bpf_counters *bc)
{
	int fd;

	if (bc->nr_slots + PC_BPFCG_CHUNK_SLOTS > bc->max_cgroups)
		return -E2BIG;
	fd = make_chunk(bc);
	return fd < 0 ? fd : add_chunk(bc, fd);
}

static int load(struct perfctr_bpf_counters *bc)
{
	libbpf_print_fn_t old = libbpf_set_print(pc_libbpf_log);
	struct pc_bpfcg *skel;
	int err, first = -1;

	skel = pc_bpfcg__open();
	if (!skel) {
		err = -errno;
		goto out;
	}
	bc->skel = skel;
	skel->rodata->stride = (__u32)bc->stride;
	err = bpf_map__set_max_entries(skel->maps.counters,
				       bc->nr_possible * PC_BPFCG_MAX_EVENTS);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cgroups,
					       bc->max_cgroups);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.sums,
					       bc->max_cgroups /
					       PC_BPFCG_CHUNK_SLOTS);
	/* The first chunk is the template of the others: the loader does
	 * not size the template that the program's text declares. */
	if (!err && (first = make_chunk(bc)) < 0)
		err = first;
	if (!err)
		err = bpf_map__set_inner_map_fd(skel->maps.sums, first);
	if (!err)
		err = pc_bpfcg__load(skel);
	if (!err) {
		err = add_chunk(bc, first);
		first = -1;
	}
	if (!err)
		err = pc_bpfcg__attach(skel);
	if (first >= 0)
		close(first);
	if (!err && !skel->bss)
		err = -EOPNOTSUPP;	/* no mmap of global data */
out:
	libbpf_set_print(old);
	return err < 0 ? err : (err ? -EINVAL : 0);
}

static void free_bc(struct perfctr_bpf_counters *bc)
{
	size_t i;

	if (bc->skel)
		pc_bpfcg__destroy(bc->skel);
	for (i = 0; i < bc->nr_events; i++) {
		pc_engine__delete(bc->events[i].engine);
		free(bc->events[i].filter);
	}
	perfctr_target__delete(bc->cpus);
	for (i = 0; i < bc->nr_chunks; i++)
		close(bc->chunks[i]);
	free(bc->chunks);
	free(bc->cgroups);
	free(bc->buf);
	free(bc->keys);
	free(bc->snap);
	free(bc->snap_keys);
	free(bc);
}

struct perfctr_bpf_counters *
perfctr_bpf_counters__new(const struct perfctr_bpf_counters_opts *opts)
{
	struct perfctr_bpf_counters *bc;
	int n;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	bc = calloc(1, sizeof(*bc));
	if (!bc)
		return NULL;
	bc->max_cgroups = PC_OPTS_GET(opts, max_cgroups, 0);
	if (!bc->max_cgroups)
		bc->max_cgroups = DEFAULT_MAX_CGROUPS;
	/* Whole chunks. */
	bc->max_cgroups = (bc->max_cgroups + PC_BPFCG_CHUNK_SLOTS - 1) /
			  PC_BPFCG_CHUNK_SLOTS * PC_BPFCG_CHUNK_SLOTS;
	bc->stride = PC_OPTS_GET(opts, max_events, 0);
	if (!bc->stride || bc->stride > PC_BPFCG_MAX_EVENTS)
		bc->stride = PC_BPFCG_MAX_EVENTS;
	n = libbpf_num_possible_cpus();
	bc->cpus = perfctr_target__new_cpus(NULL);
	bc->keys = calloc(bc->stride, sizeof(*bc->keys));
	if (n > 0)
		bc->buf = calloc((size_t)n * bc->stride, sizeof(*bc->buf));
	if (n <= 0 || !bc->cpus || !bc->keys || !bc->buf) {
		n = n <= 0 ? -n : errno;
		free_bc(bc);
		errno = n;
		return NULL;
	}
	bc->nr_possible = n;
	bc->error = load(bc);
	if (bc->error) {
		pr_info("BPF cgroup counters unavailable: %s\n",
			strerror(-bc->error));
		if (bc->skel)
			pc_bpfcg__destroy(bc->skel);
		bc->skel = NULL;
	}
	return bc;
}

/* Run the program on every online CPU: each CPU's running task gets its
 * slice so far, so the sums are current. */
static int flush(struct perfctr_bpf_counters *bc)
{
	int prog = bpf_program__fd(bc->skel->progs.pc_bpfcg_switch);
	size_t u, n = perfctr_target__nr_units(bc->cpus);

	for (u = 0; u < n; u++) {
		LIBBPF_OPTS(bpf_test_run_opts, run,
			    .flags = BPF_F_TEST_RUN_ON_CPU);
		int cpu;

		perfctr_target__unit(bc->cpus, u, NULL, &cpu);
		run.cpu = (__u32)cpu;
		if (bpf_prog_test_run_opts(prog, &run))
			return -errno;
	}
	return 0;
}

/* The fields that make two events count the same thing. */
static void comparable(struct perf_event_attr *out,
		       const struct perf_event_attr *attr)
{
	memset(out, 0, sizeof(*out));
	memcpy(out, attr, attr->size && attr->size < sizeof(*out) ?
	       attr->size : sizeof(*out));
	out->size = sizeof(*out);
	out->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	out->disabled = 0;
	out->inherit = 0;
	out->enable_on_exec = 0;
	out->inherit_stat = 0;
	out->pinned = 0;
	out->exclusive = 0;
}

static int find_event(struct perfctr_bpf_counters *bc,
		      const struct pc_bpfcg_event *ev)
{
	struct perf_event_attr want;
	size_t i;

	comparable(&want, ev->attr);
	for (i = 0; i < bc->nr_events; i++)
		if (!memcmp(&bc->events[i].attr, &want, sizeof(want)) &&
		    !strcmp(bc->events[i].filter ? bc->events[i].filter : "",
			    ev->filter ? ev->filter : ""))
			return (int)i;
	return -ENOENT;
}

/* Open @ev on every online CPU and hand the counters to the program. */
static int add_event(struct perfctr_bpf_counters *bc,
		     const struct pc_bpfcg_event *ev)
{
	struct bc_event *be = &bc->events[bc->nr_events];
	struct pc_engine_event desc = { .attr = &be->attr, .leader = 0,
					.filter = ev->filter };
	int map = bpf_map__fd(bc->skel->maps.counters);
	size_t u;
	int err;

	if (bc->nr_events == bc->stride)
		return -E2BIG;
	comparable(&be->attr, ev->attr);
	be->filter = ev->filter ? strdup(ev->filter) : NULL;
	be->engine = pc_engine__new(bc->cpus);
	if ((ev->filter && !be->filter) || !be->engine) {
		err = -ENOMEM;
		goto fail;
	}
	err = pc_engine__add(be->engine, &desc);
	if (err >= 0)
		err = pc_engine__open(be->engine, PC_ENGINE_ENABLE);
	if (err < 0)
		goto fail;
	for (u = 0; u < pc_engine__nr_units(be->engine); u++) {
		int fd = pc_engine__fd(be->engine, 0, u);
		__u32 key;

		if (fd < 0)
			continue;
		key = (__u32)(pc_engine__unit(be->engine, u)->cpu *
			      PC_BPFCG_MAX_EVENTS + bc->nr_events);
		if (bpf_map_update_elem(map, &key, &fd, BPF_ANY)) {
			err = -errno;
			goto fail;
		}
	}
	bc->nr_events++;
	/* The program reads the new counters from its next run on. */
	__atomic_store_n(&bc->skel->bss->nr_events, (__u32)bc->nr_events,
			 __ATOMIC_RELEASE);
	return (int)bc->nr_events - 1;
fail:
	pc_engine__delete(be->engine);
	free(be->filter);
	memset(be, 0, sizeof(*be));
	return err;
}

/* The chunk of @slot's sums and the key of its first value there. */
static int chunk_of(const struct perfctr_bpf_counters *bc, uint32_t slot,
		    __u32 *key)
{
	*key = (__u32)((slot % PC_BPFCG_CHUNK_SLOTS) * bc->stride);
	return bc->chunks[slot / PC_BPFCG_CHUNK_SLOTS];
}

/* A slot used before: its sums back to 0 (a new chunk is zeroed). */
static int zero_slot(struct perfctr_bpf_counters *bc, uint32_t slot)
{
	size_t i;
	__u32 key;
	int fd = chunk_of(bc, slot, &key);
	__u32 count = (__u32)bc->stride;

	memset(bc->buf, 0, (size_t)bc->nr_possible * bc->stride *
	       sizeof(*bc->buf));
	for (i = 0; i < bc->stride; i++)
		bc->keys[i] = key + (__u32)i;
	if (bpf_map_update_batch(fd, bc->keys, bc->buf, &count, NULL))
		return -errno;
	return 0;
}

/* The counted set changed: the slots that each CPU remembers per cgroup
 * are stale from the program's next run on. */
static void new_generation(struct perfctr_bpf_counters *bc)
{
	__atomic_add_fetch(&bc->skel->bss->generation, 1, __ATOMIC_RELEASE);
}

static int add_cgroup(struct perfctr_bpf_counters *bc, uint64_t id,
		      uint32_t *out)
{
	size_t i, free_slot = bc->nr_slots;
	bool used;
	__u32 slot;
	int err;

	for (i = 0; i < bc->nr_slots; i++) {
		if (bc->cgroups[i].refs && bc->cgroups[i].id == id) {
			bc->cgroups[i].refs++;
			*out = (uint32_t)i;
			return 0;
		}
		if (!bc->cgroups[i].refs && free_slot == bc->nr_slots)
			free_slot = i;
	}
	if (free_slot == bc->nr_slots) {
		err = grow(bc);
		if (err)
			return err;
	}
	slot = (__u32)free_slot;
	/* A slot that counted before (its id is set) starts from 0. */
	used = bc->cgroups[slot].id != 0;
	if (used && (err = zero_slot(bc, slot)))
		return err;
	if (bpf_map_update_elem(bpf_map__fd(bc->skel->maps.cgroups), &id,
				&slot, BPF_NOEXIST))
		return -errno;
	new_generation(bc);
	bc->cgroups[slot].id = id;
	bc->cgroups[slot].refs = 1;
	bc->used_slots++;
	*out = slot;
	return 0;
}

static void drop_cgroup(struct perfctr_bpf_counters *bc, uint32_t slot)
{
	if (--bc->cgroups[slot].refs)
		return;
	bpf_map_delete_elem(bpf_map__fd(bc->skel->maps.cgroups),
			    &bc->cgroups[slot].id);
	bc->used_slots--;
	new_generation(bc);
}

int pc_bpfcg__bind(struct perfctr_bpf_counters *bc, uint64_t cgroup_id,
		   const struct pc_bpfcg_event *events, size_t nr,
		   struct pc_bpfcg_binding **out)
{
	struct pc_bpfcg_binding *b;
	size_t i, per = 0;
	int err;

	if (!bc || !events || !nr || !out)
		return -EINVAL;
	if (bc->error)
		return -EOPNOTSUPP;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->bc = bc;
	b->nr = nr;
	per = nr * (size_t)bc->nr_possible;
	b->ev = calloc(nr, sizeof(*b->ev));
	b->acc = calloc(per, sizeof(*b->acc));
	b->at_start = calloc(per, sizeof(*b->at_start));
	if (!b->ev || !b->acc || !b->at_start) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < nr; i++) {
		err = find_event(bc, &events[i]);
		if (err < 0)
			err = add_event(bc, &events[i]);
		if (err < 0)
			goto fail;
		b->ev[i] = (size_t)err;
	}
	/* What ran so far belongs to the cgroups counted so far: the new
	 * slot starts from here (and new events' readings start). */
	err = flush(bc);
	if (!err)
		err = add_cgroup(bc, cgroup_id, &b->slot);
	if (err)
		goto fail;
	*out = b;
	return 0;
fail:
	free(b->ev);
	free(b->acc);
	free(b->at_start);
	free(b);
	return err;
}

void pc_bpfcg__unbind(struct pc_bpfcg_binding *b)
{
	if (!b)
		return;
	drop_cgroup(b->bc, b->slot);
	free(b->ev);
	free(b->acc);
	free(b->at_start);
	free(b);
}

/* The sums of @b's slot, each event the program counts on every
 * possible CPU, into bc->buf: one batch lookup. */
static int lookup(struct pc_bpfcg_binding *b)
{
	struct perfctr_bpf_counters *bc = b->bc;
	__u32 key, count = (__u32)bc->nr_events, prev;
	int fd = chunk_of(bc, b->slot, &key);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	/* An array's batch starts after the key given (none: at 0). */
	prev = key - 1;
	if (bpf_map_lookup_batch(fd, key ? &prev : NULL, &prev, bc->keys,
				 bc->buf, &count, &opts) && errno != ENOENT)
		return -errno;
	b->sums = bc->buf;
	return count == bc->nr_events ? 0 : -EIO;
}

/* Event @i of @b on CPU @c in the last lookup(). */
static const struct pc_bpfcg_value *sum_of(struct pc_bpfcg_binding *b,
					   size_t i, size_t c)
{
	return &b->sums[b->ev[i] * (size_t)b->bc->nr_possible + c];
}

static void value_sub(struct pc_bpfcg_value *out,
		      const struct pc_bpfcg_value *a,
		      const struct pc_bpfcg_value *b)
{
	out->counter = a->counter - b->counter;
	out->enabled = a->enabled - b->enabled;
	out->running = a->running - b->running;
}

static void value_add(struct pc_bpfcg_value *out,
		      const struct pc_bpfcg_value *a)
{
	out->counter += a->counter;
	out->enabled += a->enabled;
	out->running += a->running;
}

/* Start (@on) or stop: snapshot the sums, or fold them into acc. */
static int toggle(struct pc_bpfcg_binding *b, bool on)
{
	size_t np = (size_t)b->bc->nr_possible, i, c;
	int err;

	if (b->started == on)
		return 0;
	b->bc->frozen = false;
	err = flush(b->bc);
	if (!err)
		err = lookup(b);
	for (i = 0; i < b->nr && !err; i++) {
		for (c = 0; c < np; c++) {
			struct pc_bpfcg_value d;

			if (on) {
				b->at_start[i * np + c] = *sum_of(b, i, c);
				continue;
			}
			value_sub(&d, sum_of(b, i, c), &b->at_start[i * np + c]);
			value_add(&b->acc[i * np + c], &d);
		}
	}
	if (!err)
		b->started = on;
	return err;
}

int pc_bpfcg__start(struct pc_bpfcg_binding *b)
{
	return toggle(b, true);
}

int pc_bpfcg__stop(struct pc_bpfcg_binding *b)
{
	return toggle(b, false);
}

int pc_bpfcg__reset(struct pc_bpfcg_binding *b)
{
	size_t np = (size_t)b->bc->nr_possible, i, c;
	int err = 0;

	memset(b->acc, 0, b->nr * np * sizeof(*b->acc));
	if (!b->started)
		return 0;
	b->bc->frozen = false;
	err = flush(b->bc);
	if (!err)
		err = lookup(b);
	for (i = 0; i < b->nr && !err; i++)
		for (c = 0; c < np; c++)
			b->at_start[i * np + c] = *sum_of(b, i, c);
	return err;
}

/* Why event @ev of the program cannot count on @cpu, or 0. */
static int open_err(const struct perfctr_bpf_counters *bc, size_t ev, int cpu)
{
	struct pc_engine *e = bc->events[ev].engine;
	size_t u;

	for (u = 0; u < pc_engine__nr_units(e); u++)
		if (pc_engine__unit(e, u)->cpu == cpu)
			return pc_engine__fd(e, 0, u) >= 0 ? 0 :
			       pc_engine__slot(e, 0, u)->open_err ?: ENODEV;
	return ENODEV;		/* not online when the event was added */
}

int pc_bpfcg__read(struct pc_bpfcg_binding *b, const int *cpus,
		   size_t nr_cpus, struct perfctr_count *out)
{
	size_t np = (size_t)b->bc->nr_possible, i, k;
	int err;

	if (b->started && b->bc->frozen) {
		b->sums = b->bc->snap + (size_t)b->slot * b->bc->stride * np;
	} else if (b->started) {
		err = flush(b->bc);
		if (!err)
			err = lookup(b);
		if (err)
			return err;
	}
	for (i = 0; i < b->nr; i++) {
		for (k = 0; k < nr_cpus; k++) {
			struct perfctr_count *c = &out[i * nr_cpus + k];
			struct pc_bpfcg_value v = { 0 }, d;
			size_t cpu = (size_t)cpus[k];
			int why;

			memset(c, 0, sizeof(*c));
			why = open_err(b->bc, b->ev[i], cpus[k]);
			if (why || cpu >= np) {
				c->status = PERFCTR_COUNT_NOT_SUPPORTED;
				c->errnum = why ? why : ENODEV;
				continue;
			}
			v = b->acc[i * np + cpu];
			if (b->started) {
				value_sub(&d, sum_of(b, i, cpu),
					  &b->at_start[i * np + cpu]);
				value_add(&v, &d);
			}
			c->value = v.counter;
			c->time_enabled = v.enabled;
			c->time_running = v.running;
			c->status = v.running || v.counter ?
				    PERFCTR_COUNT_OK : PERFCTR_COUNT_NOT_COUNTED;
		}
	}
	return 0;
}

int perfctr_bpf_counters__freeze(struct perfctr_bpf_counters *bc)
{
	size_t np, per_chunk, c;
	int err;

	if (!bc)
		return pc_err(EINVAL);
	if (bc->error)
		return pc_err(EOPNOTSUPP);
	np = (size_t)bc->nr_possible;
	per_chunk = PC_BPFCG_CHUNK_SLOTS * bc->stride;
	bc->frozen = false;
	if (bc->snap_slots < bc->nr_slots) {
		struct pc_bpfcg_value *n = realloc(bc->snap, bc->nr_slots *
						   bc->stride * np *
						   sizeof(*n));

		if (!n)
			return pc_err(ENOMEM);
		bc->snap = n;
		bc->snap_slots = bc->nr_slots;
	}
	if (!bc->snap_keys) {
		bc->snap_keys = calloc(per_chunk, sizeof(*bc->snap_keys));
		if (!bc->snap_keys)
			return pc_err(ENOMEM);
	}
	err = flush(bc);
	for (c = 0; c < bc->nr_chunks && !err; c++) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		__u32 count = (__u32)per_chunk, out;

		/* A whole chunk in one call. */
		if (bpf_map_lookup_batch(bc->chunks[c], NULL, &out,
					 bc->snap_keys,
					 bc->snap + c * per_chunk * np,
					 &count, &opts) && errno != ENOENT)
			err = -errno;
		else if (count != per_chunk)
			err = -EIO;
	}
	if (err)
		return pc_err(-err);
	bc->frozen = true;
	return 0;
}

void perfctr_bpf_counters__thaw(struct perfctr_bpf_counters *bc)
{
	if (bc && !bc->error)
		bc->frozen = false;
}

#else /* !HAVE_BPF */

struct perfctr_bpf_counters {
	int error;
};

struct perfctr_bpf_counters *
perfctr_bpf_counters__new(const struct perfctr_bpf_counters_opts *opts)
{
	struct perfctr_bpf_counters *bc;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	bc = calloc(1, sizeof(*bc));
	if (bc)
		bc->error = -EOPNOTSUPP;
	return bc;
}

static void free_bc(struct perfctr_bpf_counters *bc)
{
	free(bc);
}

int pc_bpfcg__bind(struct perfctr_bpf_counters *bc, uint64_t cgroup_id,
		   const struct pc_bpfcg_event *events, size_t nr,
		   struct pc_bpfcg_binding **out)
{
	return -EOPNOTSUPP;
}

void pc_bpfcg__unbind(struct pc_bpfcg_binding *b)
{
}

int pc_bpfcg__start(struct pc_bpfcg_binding *b)
{
	return -EOPNOTSUPP;
}

int pc_bpfcg__stop(struct pc_bpfcg_binding *b)
{
	return -EOPNOTSUPP;
}

int pc_bpfcg__reset(struct pc_bpfcg_binding *b)
{
	return -EOPNOTSUPP;
}

int pc_bpfcg__read(struct pc_bpfcg_binding *b, const int *cpus,
		   size_t nr_cpus, struct perfctr_count *out)
{
	return -EOPNOTSUPP;
}

int perfctr_bpf_counters__freeze(struct perfctr_bpf_counters *bc)
{
	return pc_err(bc ? EOPNOTSUPP : EINVAL);
}

void perfctr_bpf_counters__thaw(struct perfctr_bpf_counters *bc)
{
}

#endif /* HAVE_BPF */

void perfctr_bpf_counters__delete(struct perfctr_bpf_counters *bc)
{
	if (bc)
		free_bc(bc);
}

int perfctr_bpf_counters__error(const struct perfctr_bpf_counters *bc)
{
	return bc ? bc->error : -EINVAL;
}
