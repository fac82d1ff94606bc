// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The sampler: sampling events opened on the positions of a target (its
 * units, each spread over the online CPUs when the target inherits), one
 * ring per CPU or per thread with every event of its positions
 * redirected into it (SET_OUTPUT).  The events are opened, toggled and
 * read by the counter engine (core/engine.h), each attr a group of its
 * own on the engine's units, which are the sampler's positions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/engine.h"
#include "core/target-internal.h"
#include "perfctr/sampler.h"
#include "sample/regs.h"
#include "sys/sys.h"

struct s_attr {
	struct perf_event_attr attr;
	char *name;
	char *filter;		/* tracepoint filter, or NULL */
	/* perfctr_sampler__set_cgroup(): the caller's, until the open. */
	const struct perfctr_target *cgroup;
	uint64_t *ids;		/* one per open position, after open */
	size_t nr_ids;
	bool tracking;		/* the dummy event of opts.tracking_ring */
};

/* Data pages of a tracking ring: side-band records are few and small,
 * and the ring is drained all along. */
#define TRACKING_PAGES 8

struct position {
	pid_t tid;
	int cpu;
	size_t ring;		/* the ring its events write into, or
				 * NO_RING once its thread is gone */
};

#define NO_RING ((size_t)-1)

struct perfctr_sampler {
	struct perfctr_sampler_opts opts;
	struct s_attr *attrs;
	size_t nr_attrs;
	struct position *pos;
	size_t nr_pos;
	size_t nr_rings;	/* one per CPU, or per position without one */
	struct pc_engine *engine;	/* event i is group i, unit p position p */
	struct perfctr_ring **rings;	/* [ring], then [nr_rings + ring] tracking */
	struct perfctr_decoder *decoder;
	bool opened;
	struct pc_engine_failure open_failure;	/* of the last open */
	/* opts.tracking_ring: the side-band bits the caller's attrs asked
	 * for, which the tracking event carries instead of them. */
	struct perf_event_attr sideband;
};

struct perfctr_sampler *perfctr_sampler__new(const struct perfctr_sampler_opts *opts)
{
	struct perfctr_sampler *s;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		memcpy(&s->opts, opts,
		       opts->sz < sizeof(s->opts) ? opts->sz : sizeof(s->opts));
	s->opts.sz = sizeof(s->opts);
	if (s->opts.data_pages & (s->opts.data_pages - 1)) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	return s;
}

static size_t nr_ring_slots(const struct perfctr_sampler *s)
{
	return s->opts.tracking_ring ? 2 * s->nr_rings : s->nr_rings;
}

static void close_all(struct perfctr_sampler *s)
{
	/* The rings first: their mappings are of the engine's fds. */
	if (s->rings)
		for (size_t p = 0; p < nr_ring_slots(s); p++)
			perfctr_ring__delete(s->rings[p]);
	free(s->rings);
	s->rings = NULL;
	pc_engine__delete(s->engine);
	s->engine = NULL;
	for (size_t i = 0; i < s->nr_attrs; i++) {
		free(s->attrs[i].ids);
		s->attrs[i].ids = NULL;
		s->attrs[i].nr_ids = 0;
	}
	perfctr_decoder__delete(s->decoder);
	s->decoder = NULL;
	free(s->pos);
	s->pos = NULL;
	s->nr_pos = 0;
	s->nr_rings = 0;
	s->opened = false;
}

void perfctr_sampler__delete(struct perfctr_sampler *s)
{
	if (!s)
		return;
	close_all(s);
	for (size_t i = 0; i < s->nr_attrs; i++) {
		free(s->attrs[i].name);
		free(s->attrs[i].filter);
	}
	free(s->attrs);
	free(s);
}

static bool fixed_period_sw(const struct perf_event_attr *a)
{
	return !a->freq && (a->type == PERF_TYPE_SOFTWARE ||
			    a->type == PERF_TYPE_TRACEPOINT);
}

/*
 * The side-band records an attr asks for (mmap, comm, task, ...): with a
 * tracking ring they move from the sampling events to the dummy event.
 */
static void sideband_move(struct perf_event_attr *to,
			  struct perf_event_attr *from, bool clear)
{
#define MOVE(f) do { to->f |= from->f; if (clear) from->f = 0; } while (0)
	MOVE(mmap);
	MOVE(mmap2);
	MOVE(mmap_data);
	MOVE(comm);
	MOVE(comm_exec);
	MOVE(task);
	MOVE(context_switch);
	MOVE(namespaces);
	MOVE(ksymbol);
	MOVE(bpf_event);
	MOVE(cgroup);
	MOVE(text_poke);
	MOVE(build_id);
#undef MOVE
}

/* No target is the calling process, whose target is made at open. */
static bool inherits(const struct perfctr_sampler *s)
{
	if (s->opts.per_thread)
		return false;
	return !s->opts.target || pc_target_inherits(s->opts.target);
}

/* The attr as it will be opened (see sampler.h for the rules). */
static void adjust_attr(struct perfctr_sampler *s, struct s_attr *sa)
{
	const struct perfctr_sampler_opts *o = &s->opts;
	struct perf_event_attr *a = &sa->attr;

	a->size = sizeof(*a);
	a->disabled = 1;
	a->enable_on_exec = o->enable_on_exec ||
			    (o->target && pc_target_is_held(o->target));
	a->sample_id_all = 1;
	a->inherit = inherits(s);
	if (s->nr_attrs > 1 || o->tracking_ring)
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (a->inherit && (a->sample_type & PERF_SAMPLE_READ))
		a->sample_type |= PERF_SAMPLE_TID;
	if (sa->tracking) {
		/* A forward ring, woken at a quarter full. */
		a->write_backward = 0;
		a->watermark = 1;
		a->wakeup_watermark = (uint32_t)(TRACKING_PAGES * sys_page_size() / 4);
		return;
	}
	if (o->tracking_ring)
		sideband_move(&s->sideband, a, true);
	a->write_backward = o->overwrite;
	if (o->wakeup_watermark) {
		a->watermark = 1;
		a->wakeup_watermark = o->wakeup_watermark;
	} else if (o->wakeup_events) {
		a->watermark = 0;
		a->wakeup_events = o->wakeup_events;
	}
	/* Kernel-facts item 2: with PERIOD in sample_type, software and
	 * tracepoint events sample on every event whatever the period. */
	if (!o->keep_sample_period && fixed_period_sw(a))
		a->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
}

/*
 * The tracking event: a dummy software event (it never samples) that
 * carries the side-band records into a forward ring of its own, so an
 * overwrite ring cannot write over them.  Its sample_id layout and clock
 * are those of the first event, so that every record's trailer reads the
 * same way.
 */
static int add_tracking(struct perfctr_sampler *s)
{
	const struct perf_event_attr first = s->attrs[0].attr;
	struct s_attr *n;
	struct perf_event_attr *a;

	n = realloc(s->attrs, (s->nr_attrs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->attrs = n;
	n = &s->attrs[s->nr_attrs];
	memset(n, 0, sizeof(*n));
	n->name = strdup("dummy");
	if (!n->name)
		return -ENOMEM;
	n->tracking = true;
	a = &n->attr;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_period = 1;
	a->sample_type = first.sample_type &
		(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
		 PERF_SAMPLE_IDENTIFIER);
	a->exclude_kernel = first.exclude_kernel;
	a->exclude_hv = first.exclude_hv;
	a->use_clockid = first.use_clockid;
	a->clockid = first.clockid;
	/* The union stays in s->sideband for a reopen after a failure. */
	sideband_move(a, &s->sideband, false);
	s->nr_attrs++;
	adjust_attr(s, n);
	return 0;
}

static void drop_tracking(struct perfctr_sampler *s)
{
	if (s->nr_attrs && s->attrs[s->nr_attrs - 1].tracking) {
		s->nr_attrs--;
		free(s->attrs[s->nr_attrs].name);
		free(s->attrs[s->nr_attrs].ids);
	}
}

int perfctr_sampler__add_attr(struct perfctr_sampler *s,
			      const struct perf_event_attr *attr,
			      const char *name)
{
	struct s_attr *n;
	size_t copy;

	if (!s || !attr)
		return pc_err(EINVAL);
	if (s->opened)
		return pc_err(EBUSY);
	n = realloc(s->attrs, (s->nr_attrs + 1) * sizeof(*n));
	if (!n)
		return pc_err(ENOMEM);
	s->attrs = n;
	n = &s->attrs[s->nr_attrs];
	memset(n, 0, sizeof(*n));
	copy = attr->size && attr->size < sizeof(n->attr) ? attr->size : sizeof(n->attr);
	memcpy(&n->attr, attr, copy);
	if (name) {
		n->name = strdup(name);
		if (!n->name)
			return pc_err(ENOMEM);
	}
	s->nr_attrs++;
	/* IDENTIFIER depends on the number of attrs: redo them all. */
	for (size_t i = 0; i < s->nr_attrs; i++)
		adjust_attr(s, &s->attrs[i]);
	return (int)(s->nr_attrs - 1);
}

/* The ring of a position: the CPU's (shared), or one of its own. */
static size_t ring_for(const struct perfctr_sampler *s, int cpu)
{
	if (cpu >= 0)
		for (size_t p = 0; p < s->nr_pos; p++)
			if (s->pos[p].cpu == cpu)
				return s->pos[p].ring;
	return s->nr_rings;
}

int perfctr_sampler__set_filter(struct perfctr_sampler *s, size_t idx,
				const char *filter)
{
	char *copy = NULL;

	if (!s || idx >= s->nr_attrs)
		return pc_err(EINVAL);
	if (s->opened)
		return pc_err(EBUSY);
	if (filter) {
		copy = strdup(filter);
		if (!copy)
			return pc_err(ENOMEM);
	}
	free(s->attrs[idx].filter);
	s->attrs[idx].filter = copy;
	return 0;
}

int perfctr_sampler__set_cgroup(struct perfctr_sampler *s, size_t idx,
				const struct perfctr_target *cgroup)
{
	if (!s || idx >= s->nr_attrs ||
	    (cgroup && !perfctr_target__cgroup_path(cgroup)))
		return pc_err(EINVAL);
	if (s->opened)
		return pc_err(EBUSY);
	s->attrs[idx].cgroup = cgroup;
	return 0;
}

static int add_pos(struct perfctr_sampler *s, pid_t tid, int cpu)
{
	size_t ring = ring_for(s, cpu);
	struct position *n = realloc(s->pos, (s->nr_pos + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	s->pos = n;
	n[s->nr_pos].tid = tid;
	n[s->nr_pos].cpu = cpu;
	n[s->nr_pos].ring = ring;
	s->nr_pos++;
	if (ring >= s->nr_rings)
		s->nr_rings = ring + 1;
	return 0;
}

/*
 * The target's units are the positions, except that a unit without a CPU
 * of an inheriting target is opened on every online CPU: the kernel maps
 * no ring of an inherited event that follows a thread on any CPU.
 */
/*
 * The engine on the target's units, each unit without a CPU of an
 * inheriting target on every online CPU (the kernel maps no ring of an
 * inherited event that follows a thread anywhere); its units are the
 * positions, and each attr is a group of its own.
 */
static int make_engine(struct perfctr_sampler *s,
		       const struct perfctr_target *t)
{
	int ret = 0;

	s->engine = inherits(s) ? pc_engine__new_per_cpu(t, NULL, 0) :
				  pc_engine__new(t);
	if (!s->engine)
		return -errno;
	free(s->pos);
	s->pos = NULL;
	s->nr_pos = 0;
	s->nr_rings = 0;
	for (size_t u = 0; u < pc_engine__nr_units(s->engine) && !ret; u++) {
		const struct pc_unit *unit = pc_engine__unit(s->engine, u);

		ret = add_pos(s, unit->tid, unit->cpu);
	}
	for (size_t i = 0; i < s->nr_attrs && ret >= 0; i++) {
		struct pc_engine_event ev = {
			.attr = &s->attrs[i].attr,
			.leader = i,
			.filter = s->attrs[i].filter,
			.cgroup = s->attrs[i].cgroup,
		};

		ret = pc_engine__add(s->engine, &ev);
	}
	return ret < 0 ? ret : 0;
}

static bool asks_lost(const struct perfctr_sampler *s)
{
	for (size_t i = 0; i < s->nr_attrs; i++)
		if (s->attrs[i].attr.read_format & PERF_FORMAT_LOST)
			return true;
	return false;
}

/*
 * Open the events on every position.  PERF_FORMAT_LOST is asked for (the
 * kernel's own count of what it dropped) and left out again for kernels
 * before 6.0, which refuse it.
 */
static int open_engine(struct perfctr_sampler *s,
		       const struct perfctr_target *t)
{
	int ret;

	for (size_t i = 0; i < s->nr_attrs; i++)
		s->attrs[i].attr.read_format |= PERF_FORMAT_LOST;
	for (;;) {
		ret = make_engine(s, t);
		if (!ret)
			ret = pc_engine__open(s->engine, PC_ENGINE_STRICT);
		memset(&s->open_failure, 0, sizeof(s->open_failure));
		if (ret && s->engine)
			s->open_failure = *pc_engine__failure(s->engine);
		if (ret != -EINVAL || !asks_lost(s))
			return ret;
		pc_engine__delete(s->engine);
		s->engine = NULL;
		for (size_t i = 0; i < s->nr_attrs; i++)
			s->attrs[i].attr.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
	}
}

/* Rings are numbered again over the positions that are open: a thread
 * of a process that ended before the open has none. */
static int renumber_rings(struct perfctr_sampler *s)
{
	size_t *map = malloc((s->nr_rings ? s->nr_rings : 1) * sizeof(*map));
	size_t n = 0;

	if (!map)
		return -ENOMEM;
	for (size_t r = 0; r < s->nr_rings; r++)
		map[r] = NO_RING;
	for (size_t p = 0; p < s->nr_pos; p++) {
		size_t *r = &s->pos[p].ring;

		if (pc_engine__unit(s->engine, p)->gone) {
			*r = NO_RING;
			continue;
		}
		if (map[*r] == NO_RING)
			map[*r] = n++;
		*r = map[*r];
	}
	free(map);
	s->nr_rings = n;
	return 0;
}

int perfctr_sampler__open_error(const struct perfctr_sampler *s,
				struct perfctr_attach_error *err)
{
	const struct pc_engine_failure *f;

	if (!s || !err || err->sz < sizeof(*err))
		return pc_err(EINVAL);
	f = &s->open_failure;
	err->errnum = f->errnum;
	err->event = (uint32_t)f->event;
	pc_strlcpy(err->broker, f->broker, sizeof(err->broker));
	return 0;
}

int perfctr_sampler__open(struct perfctr_sampler *s)
{
	PERFCTR_OPTS(perfctr_ring_opts, ropts);
	PERFCTR_OPTS(perfctr_ring_opts, topts, .data_pages = TRACKING_PAGES);
	const struct perfctr_target *t;
	struct perfctr_target *own = NULL;
	int ret;

	if (!s || !s->nr_attrs)
		return pc_err(EINVAL);
	if (s->opened)
		return pc_err(EBUSY);
	t = s->opts.target;
	if (!t) {
		own = perfctr_target__new_process(getpid());
		if (!own)
			return pc_err(errno);
		t = own;
	}
	if (s->opts.tracking_ring) {
		ret = add_tracking(s);
		if (ret)
			goto fail;
	}
	ret = open_engine(s, t);
	if (!ret)
		ret = renumber_rings(s);
	if (ret)
		goto fail;
	s->rings = calloc(nr_ring_slots(s), sizeof(*s->rings));
	s->decoder = perfctr_decoder__new();
	if (!s->rings || !s->decoder) {
		ret = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < s->nr_attrs; i++) {
		s->attrs[i].ids = calloc(s->nr_pos, sizeof(uint64_t));
		if (!s->attrs[i].ids) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	ropts.data_pages = s->opts.data_pages;
	ropts.overwrite = s->opts.overwrite;
	for (size_t p = 0; p < s->nr_pos; p++) {
		size_t r = s->pos[p].ring;

		if (r == NO_RING)
			continue;
		for (size_t i = 0; i < s->nr_attrs; i++) {
			const struct pc_slot *slot = pc_engine__slot(s->engine, i, p);
			struct s_attr *sa = &s->attrs[i];
			struct perfctr_ring **ring = sa->tracking ?
				&s->rings[s->nr_rings + r] : &s->rings[r];

			sa->ids[sa->nr_ids++] = slot->id;
			if (!*ring) {
				*ring = perfctr_ring__new(slot->fd, sa->tracking ?
							  &topts : &ropts);
				if (!*ring) {
					ret = -errno;
					goto fail;
				}
			} else {
				ret = perfctr_ring__add_fd(*ring, slot->fd);
				if (ret)
					goto fail;
			}
		}
	}
	for (size_t i = 0; i < s->nr_attrs; i++) {
		ret = perfctr_decoder__add_attr(s->decoder, &s->attrs[i].attr,
						s->attrs[i].ids, s->attrs[i].nr_ids);
		if (ret < 0)
			goto fail;
	}
	perfctr_target__delete(own);
	s->opened = true;
	return 0;
fail:
	close_all(s);
	drop_tracking(s);
	for (size_t i = 0; i < s->nr_attrs; i++)
		adjust_attr(s, &s->attrs[i]);
	perfctr_target__delete(own);
	return pc_err(-ret);
}

int perfctr_sampler__enable(struct perfctr_sampler *s)
{
	if (!s->opened)
		return pc_err(EINVAL);
	return pc_engine__enable(s->engine);
}

int perfctr_sampler__disable(struct perfctr_sampler *s)
{
	if (!s->opened)
		return pc_err(EINVAL);
	return pc_engine__disable(s->engine);
}

size_t perfctr_sampler__nr_attrs(const struct perfctr_sampler *s)
{
	return s->nr_attrs;
}

const struct perf_event_attr *
perfctr_sampler__attr(const struct perfctr_sampler *s, size_t idx)
{
	return idx < s->nr_attrs ? &s->attrs[idx].attr : NULL;
}

const char *perfctr_sampler__name(const struct perfctr_sampler *s, size_t idx)
{
	return idx < s->nr_attrs ? s->attrs[idx].name : NULL;
}

size_t perfctr_sampler__ids(const struct perfctr_sampler *s, size_t idx,
			    const uint64_t **ids)
{
	if (idx >= s->nr_attrs || !s->opened) {
		if (ids)
			*ids = NULL;
		return 0;
	}
	if (ids)
		*ids = s->attrs[idx].ids;
	return s->attrs[idx].nr_ids;
}

size_t perfctr_sampler__nr_rings(const struct perfctr_sampler *s)
{
	return s->opened ? s->nr_rings : 0;
}

struct perfctr_ring *const *perfctr_sampler__rings(const struct perfctr_sampler *s)
{
	return s->opened ? s->rings : NULL;
}

struct perfctr_ring *const *
perfctr_sampler__tracking_rings(const struct perfctr_sampler *s)
{
	return s->opened && s->opts.tracking_ring ? s->rings + s->nr_rings : NULL;
}

/* The first position of ring @idx: the one whose fd the ring maps. */
static const struct position *ring_pos(const struct perfctr_sampler *s,
				       size_t idx)
{
	for (size_t p = 0; p < s->nr_pos; p++)
		if (s->pos[p].ring == idx)
			return &s->pos[p];
	return NULL;
}

int perfctr_sampler__ring_cpu(const struct perfctr_sampler *s, size_t idx)
{
	const struct position *pos = ring_pos(s, idx);

	return pos ? pos->cpu : -1;
}

pid_t perfctr_sampler__ring_tid(const struct perfctr_sampler *s, size_t idx)
{
	const struct position *pos = ring_pos(s, idx);

	return pos ? pos->tid : -1;
}

int perfctr_sampler__fd(const struct perfctr_sampler *s, size_t idx,
			size_t ring_idx)
{
	if (!s->opened || idx >= s->nr_attrs || ring_idx >= s->nr_pos)
		return pc_err(EINVAL);
	return pc_engine__fd(s->engine, idx, ring_idx);
}

const struct perfctr_decoder *perfctr_sampler__decoder(const struct perfctr_sampler *s)
{
	return s->decoder;
}

int64_t perfctr_sampler__poll(struct perfctr_sampler *s, int timeout_ms,
			      perfctr_ring_record_cb_t cb, void *ctx)
{
	if (!s->opened)
		return pc_err(EINVAL);
	return perfctr_ring_poll(s->rings, nr_ring_slots(s), timeout_ms, cb, ctx);
}

int perfctr_sampler__stats(const struct perfctr_sampler *s,
			   struct perfctr_ring_stats *stats,
			   uint64_t *kernel_lost)
{
	struct perfctr_ring_stats sum, one;

	if (!s || !stats || stats->sz < sizeof(size_t))
		return pc_err(EINVAL);
	memset(&sum, 0, sizeof(sum));
	for (size_t p = 0; s->opened && p < nr_ring_slots(s); p++) {
		memset(&one, 0, sizeof(one));
		one.sz = sizeof(one);
		perfctr_ring__stats(s->rings[p], &one);
		sum.records += one.records;
		sum.bytes += one.bytes;
		sum.samples += one.samples;
		sum.lost += one.lost;
		sum.lost_records += one.lost_records;
		sum.lost_samples += one.lost_samples;
		sum.corrupt += one.corrupt;
		sum.overwritten += one.overwritten;
	}
	memcpy((char *)stats + sizeof(size_t), (char *)&sum + sizeof(size_t),
	       (stats->sz < sizeof(sum) ? stats->sz : sizeof(sum)) - sizeof(size_t));
	if (kernel_lost) {
		*kernel_lost = 0;
		for (size_t i = 0; s->opened && i < s->nr_attrs; i++) {
			if (!(s->attrs[i].attr.read_format & PERF_FORMAT_LOST))
				continue;
			for (size_t p = 0; p < s->nr_pos; p++) {
				int ret = pc_engine__read_group(s->engine, i, p);

				if (ret)
					return ret;
				*kernel_lost += pc_engine__slot(s->engine, i, p)->lost;
			}
		}
	}
	return 0;
}

uint64_t perfctr_user_regs_mask(void)
{
	return PC_REGS_HOST_MASK;
}
