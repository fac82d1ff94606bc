// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The counters view (core/counters.h) of a counter engine (core/engine.h):
 * what the policies over counters (set rotation, overflow switching and
 * period control, notifications) see of the engine that owns them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/counters.h"
#include "core/engine.h"
#include "stream/readfmt.h"
#include "sys/sys.h"

/*
 * What one group read on one unit needs, cached when the view is made:
 * the engine is opened once and keeps its fds until it is closed, which
 * no policy outlives (a new attach makes a new engine and a new view), so
 * a read is one read(2) and a decode, without asking the engine anything.
 */
struct view_gu {
	int fd;			/* the leader's, -1: nothing open there */
	uint64_t format;	/* the group's read_format */
	size_t read_size;	/* bytes of the read(2) */
	size_t nr_open;		/* entries of the answer */
	size_t *member;		/* entry k's member position in the group */
	uint64_t *id;		/* entry k's kernel id */
};

/* The view's context and the layout arrays it points into. */
struct view_arrays {
	struct pc_engine *engine;
	size_t nr_units;
	struct view_gu *gu;		/* group-major, [g * nr_units + u] */
	size_t *gu_member;		/* every gu's member and id lists */
	uint64_t *gu_id;
	size_t *event_group;
	const struct perf_event_attr **event_attr;
	size_t *members;		/* every group's, group after group */
	const size_t **group_members;
	size_t *group_nr_members;
	pid_t *unit_tid;
	int *unit_cpu;
};

/* Async-signal-safe: one ioctl on the leader fd. */
static int view_toggle(void *ctx, size_t group, size_t unit, bool on)
{
	const struct view_arrays *a = ctx;
	int fd = a->gu[group * a->nr_units + unit].fd;

	if (fd < 0)
		return 0;
	return on ? sys_perf_enable(fd, false) : sys_perf_disable(fd, false);
}

/* Entry @k of the answer: its member position, by the cached order (the
 * kernel answers in the order the members joined), by id when the id
 * says otherwise; -1 for an id nobody has. */
static long entry_member(const struct view_gu *gu, size_t k, uint64_t id,
			 bool ids)
{
	if (!ids || gu->id[k] == id)
		return (long)gu->member[k];
	for (size_t j = 0; j < gu->nr_open; j++)
		if (gu->id[j] == id)
			return (long)gu->member[j];
	return -1;
}

/*
 * Async-signal-safe: a read(2) of the leader into the stack, decoded by
 * the one read-format decoder.  Not pc_engine__read_group(), whose buffer
 * and slots the owner's own reads use at the same time.
 */
static int view_read(void *ctx, size_t group, size_t unit,
		     struct pc_group_values *out)
{
	const struct view_arrays *a = ctx;
	const struct view_gu *gu = &a->gu[group * a->nr_units + unit];
	size_t nr = a->group_nr_members[group];
	uint64_t buf[3 + 3 * PC_COUNTERS_MAX_MEMBERS];
	struct pc_readfmt_entry entries[PC_COUNTERS_MAX_MEMBERS];
	struct pc_readfmt head;
	ssize_t n;
	int got;

	if (gu->fd < 0)
		return -ENOENT;
	if (nr > PC_COUNTERS_MAX_MEMBERS || out->nr_members < nr)
		return -E2BIG;
	/* errno: a signal handler that calls this saves its own. */
	n = sys_perf_read(gu->fd, buf, gu->read_size);
	if (n < 0)
		return (int)n;
	got = pc_readfmt_decode(gu->format, buf, (size_t)n, &head, entries,
				gu->nr_open);
	if (got < 0)
		return got;
	out->time_enabled = head.time_enabled;
	out->time_running = head.time_running;
	for (size_t m = 0; m < nr; m++) {
		out->value[m] = 0;
		out->present[m] = false;
	}
	for (int k = 0; k < got; k++) {
		long m = entry_member(gu, (size_t)k, entries[k].id,
				      gu->format & PERF_FORMAT_ID);

		if (m >= 0) {
			out->value[m] = entries[k].value;
			out->present[m] = true;
		}
	}
	return 0;
}

static int view_fd(void *ctx, size_t event, size_t unit)
{
	const struct view_arrays *a = ctx;

	return pc_engine__fd(a->engine, event, unit);
}

static uint64_t view_id(void *ctx, size_t event, size_t unit)
{
	const struct view_arrays *a = ctx;
	const struct pc_slot *slot = pc_engine__slot(a->engine, event, unit);

	return slot ? slot->id : 0;
}

static const struct pc_counters_ops engine_ops = {
	.toggle = view_toggle,
	.read = view_read,
	.fd = view_fd,
	.id = view_id,
};

void pc_counters__release(struct pc_counters *c)
{
	struct view_arrays *a = c->owned;

	if (a) {
		free(a->gu);
		free(a->gu_member);
		free(a->gu_id);
		free(a->event_group);
		free(a->event_attr);
		free(a->members);
		free(a->group_members);
		free(a->group_nr_members);
		free(a->unit_tid);
		free(a->unit_cpu);
		free(a);
	}
	memset(c, 0, sizeof(*c));
}

/* Each group's read on each unit as the engine opened it: the members
 * open there, in the order they joined the leader (the kernel's order of
 * a group read's entries), with their ids. */
static void cache_reads(struct view_arrays *a, struct pc_engine *e)
{
	size_t ng = pc_engine__nr_groups(e), nu = a->nr_units, k = 0;

	for (size_t g = 0; g < ng; g++) {
		const size_t *members = a->group_members[g];
		size_t nr = a->group_nr_members[g];
		uint64_t format = nr ? pc_engine__attr(e, members[0])->read_format : 0;

		for (size_t u = 0; u < nu; u++) {
			struct view_gu *gu = &a->gu[g * nu + u];

			gu->fd = pc_engine__leader_fd(e, g, u);
			gu->format = format;
			gu->member = &a->gu_member[k];
			gu->id = &a->gu_id[k];
			for (size_t m = 0; m < nr; m++) {
				const struct pc_slot *slot =
					pc_engine__slot(e, members[m], u);

				if (!slot || slot->fd < 0)
					continue;
				gu->member[gu->nr_open] = m;
				gu->id[gu->nr_open++] = slot->id;
			}
			k += gu->nr_open;
			gu->read_size = pc_readfmt_size(format, gu->nr_open);
		}
	}
}

int pc_counters__of_engine(struct pc_counters *c, struct pc_engine *e,
			   unsigned long open_flags)
{
	size_t ne = pc_engine__nr_events(e), ng = pc_engine__nr_groups(e);
	size_t nu = pc_engine__nr_units(e);
	const struct pc_unit *units = pc_engine__units(e);
	struct view_arrays *a;
	size_t k = 0;

	memset(c, 0, sizeof(*c));
	if (!e)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	c->owned = a;
	a->event_group = calloc(ne + 1, sizeof(*a->event_group));
	a->event_attr = calloc(ne + 1, sizeof(*a->event_attr));
	a->members = calloc(ne + 1, sizeof(*a->members));
	a->group_members = calloc(ng + 1, sizeof(*a->group_members));
	a->group_nr_members = calloc(ng + 1, sizeof(*a->group_nr_members));
	a->unit_tid = calloc(nu + 1, sizeof(*a->unit_tid));
	a->unit_cpu = calloc(nu + 1, sizeof(*a->unit_cpu));
	a->gu = calloc(ng * nu + 1, sizeof(*a->gu));
	a->gu_member = calloc(ne * nu + 1, sizeof(*a->gu_member));
	a->gu_id = calloc(ne * nu + 1, sizeof(*a->gu_id));
	if (!a->event_group || !a->event_attr || !a->members ||
	    !a->group_members || !a->group_nr_members || !a->unit_tid ||
	    !a->unit_cpu || !a->gu || !a->gu_member || !a->gu_id) {
		pc_counters__release(c);
		return -ENOMEM;
	}
	for (size_t ev = 0; ev < ne; ev++) {
		a->event_group[ev] = pc_engine__group_of(e, ev);
		a->event_attr[ev] = pc_engine__attr(e, ev);
	}
	for (size_t g = 0; g < ng; g++) {
		a->group_members[g] = &a->members[k];
		a->group_nr_members[g] = pc_engine__group_size(e, g);
		for (size_t m = 0; m < a->group_nr_members[g] && k < ne; m++)
			a->members[k++] = pc_engine__group_member(e, g, m);
	}
	for (size_t u = 0; u < nu; u++) {
		a->unit_tid[u] = (open_flags & PERF_FLAG_PID_CGROUP) ? -1
								 : units[u].tid;
		a->unit_cpu[u] = units[u].cpu;
	}
	a->engine = e;
	a->nr_units = nu;
	cache_reads(a, e);
	c->ops = &engine_ops;
	c->ctx = a;
	c->nr_events = ne;
	c->nr_groups = ng;
	c->nr_units = nu;
	c->unit_tid = a->unit_tid;
	c->unit_cpu = a->unit_cpu;
	c->event_group = a->event_group;
	c->event_attr = a->event_attr;
	c->group_members = a->group_members;
	c->group_nr_members = a->group_nr_members;
	return 0;
}
