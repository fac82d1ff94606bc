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

/* The layout arrays the view points into. */
struct view_arrays {
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
	return pc_engine__toggle_group(ctx, group, unit,
				       on ? PC_ENGINE_OP_ENABLE : PC_ENGINE_OP_DISABLE);
}

/*
 * Async-signal-safe: a read(2) of the leader into the stack, decoded by
 * the one read-format decoder, entries matched to members by id.  Not
 * pc_engine__read_group(), whose buffer and slots the owner's own reads
 * use at the same time.
 */
static int view_read(void *ctx, size_t group, size_t unit,
		     struct pc_group_values *out)
{
	struct pc_engine *e = ctx;
	size_t nr = pc_engine__group_size(e, group);
	uint64_t buf[3 + 3 * PC_COUNTERS_MAX_MEMBERS];
	struct pc_readfmt_entry entries[PC_COUNTERS_MAX_MEMBERS];
	struct pc_readfmt head;
	int fd = pc_engine__leader_fd(e, group, unit), saved = errno, got;
	uint64_t format;
	ssize_t n;

	if (fd < 0)
		return -ENOENT;
	if (nr > PC_COUNTERS_MAX_MEMBERS || out->nr_members < nr)
		return -E2BIG;
	format = pc_engine__attr(e, pc_engine__group_member(e, group, 0))->read_format;
	n = read(fd, buf, pc_readfmt_size(format, nr));
	if (n < 0) {
		n = -errno;
		errno = saved;
		return (int)n;
	}
	got = pc_readfmt_decode(format, buf, (size_t)n, &head, entries,
				PC_COUNTERS_MAX_MEMBERS);
	if (got < 0)
		return got;
	out->time_enabled = head.time_enabled;
	out->time_running = head.time_running;
	for (size_t m = 0; m < nr; m++) {
		const struct pc_slot *slot =
			pc_engine__slot(e, pc_engine__group_member(e, group, m), unit);

		out->value[m] = 0;
		out->present[m] = false;
		for (int i = 0; slot && slot->fd >= 0 && i < got; i++)
			if (entries[i].id == slot->id) {
				out->value[m] = entries[i].value;
				out->present[m] = true;
				break;
			}
	}
	return 0;
}

static int view_fd(void *ctx, size_t event, size_t unit)
{
	return pc_engine__fd(ctx, event, unit);
}

static uint64_t view_id(void *ctx, size_t event, size_t unit)
{
	const struct pc_slot *slot = pc_engine__slot(ctx, event, unit);

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
	if (!a->event_group || !a->event_attr || !a->members ||
	    !a->group_members || !a->group_nr_members || !a->unit_tid ||
	    !a->unit_cpu) {
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
	c->ops = &engine_ops;
	c->ctx = e;
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
