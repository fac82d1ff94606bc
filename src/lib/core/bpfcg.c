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

#define DEFAULT_MAX_CGROUPS 256

#ifdef HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

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
	struct bc_cgroup *cgroups;	/* by slot */
	size_t max_cgroups;
	struct pc_bpfcg_sums *buf;	/* one per-CPU lookup's answer */
};

struct pc_bpfcg_binding {
	struct perfctr_bpf_counters *bc;
	uint32_t slot;
	size_t nr;
	size_t *ev;			/* the program's index of each event */
	bool started;
	/* [i * nr_possible + cpu]: counted before the last start, and the
	 * sums at the last start. */
	struct pc_bpfcg_value *acc, *at_start;
};

/* libbpf's messages go to our log, not to stderr. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	pc_print(level == LIBBPF_WARN ? PERFCTR_INFO : PERFCTR_DEBUG,
		 "libperfctr: bpf: %s", msg);
	return 0;
}

static int load(struct perfctr_bpf_counters *bc)
{
	libbpf_print_fn_t old = libbpf_set_print(libbpf_log);
	struct pc_bpfcg *skel;
	int err;

	skel = pc_bpfcg__open();
	if (!skel) {
		err = -errno;
		goto out;
	}
	bc->skel = skel;
	err = bpf_map__set_max_entries(skel->maps.counters,
				       bc->nr_possible * PC_BPFCG_MAX_EVENTS);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cgroups,
					       bc->max_cgroups);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.sums,
					       bc->max_cgroups);
	if (!err)
		err = pc_bpfcg__load(skel);
	if (!err)
		err = pc_bpfcg__attach(skel);
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
	free(bc->cgroups);
	free(bc->buf);
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
	n = libbpf_num_possible_cpus();
	bc->cpus = perfctr_target__new_cpus(NULL);
	bc->cgroups = calloc(bc->max_cgroups, sizeof(*bc->cgroups));
	if (n > 0)
		bc->buf = calloc((size_t)n, sizeof(*bc->buf));
	if (n <= 0 || !bc->cpus || !bc->cgroups || !bc->buf) {
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

	if (bc->nr_events == PC_BPFCG_MAX_EVENTS)
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

static int zero_slot(struct perfctr_bpf_counters *bc, uint32_t slot)
{
	memset(bc->buf, 0, (size_t)bc->nr_possible * sizeof(*bc->buf));
	if (bpf_map_update_elem(bpf_map__fd(bc->skel->maps.sums), &slot,
				bc->buf, BPF_ANY))
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
	size_t i, free_slot = bc->max_cgroups;
	__u32 slot;
	int err;

	for (i = 0; i < bc->max_cgroups; i++) {
		if (bc->cgroups[i].refs && bc->cgroups[i].id == id) {
			bc->cgroups[i].refs++;
			*out = (uint32_t)i;
			return 0;
		}
		if (!bc->cgroups[i].refs && free_slot == bc->max_cgroups)
			free_slot = i;
	}
	if (free_slot == bc->max_cgroups)
		return -E2BIG;
	slot = (__u32)free_slot;
	err = zero_slot(bc, slot);
	if (err)
		return err;
	if (bpf_map_update_elem(bpf_map__fd(bc->skel->maps.cgroups), &id,
				&slot, BPF_ANY))
		return -errno;
	new_generation(bc);
	bc->cgroups[slot].id = id;
	bc->cgroups[slot].refs = 1;
	*out = slot;
	return 0;
}

static void drop_cgroup(struct perfctr_bpf_counters *bc, uint32_t slot)
{
	if (--bc->cgroups[slot].refs)
		return;
	bpf_map_delete_elem(bpf_map__fd(bc->skel->maps.cgroups),
			    &bc->cgroups[slot].id);
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

/* The sums of @b's slot on every possible CPU, into bc->buf. */
static int lookup(struct pc_bpfcg_binding *b)
{
	if (bpf_map_lookup_elem(bpf_map__fd(b->bc->skel->maps.sums), &b->slot,
				b->bc->buf))
		return -errno;
	return 0;
}

/* Event @i of @b on CPU @c in the last lookup(). */
static const struct pc_bpfcg_value *sum_of(struct pc_bpfcg_binding *b,
					   size_t i, size_t c)
{
	return &b->bc->buf[c].ev[b->ev[i]];
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

	if (b->started) {
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
