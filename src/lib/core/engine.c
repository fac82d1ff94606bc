/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The counter engine: events x units of a target.  See engine.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfctr/session.h"

#include "common/internal.h"
#include "core/engine.h"
#include "core/fastread.h"
#include "core/target-internal.h"
#include "stream/readfmt.h"
#include "sys/broker.h"
#include "sys/cpulist.h"
#include "sys/sys.h"

struct eng_event {
	struct perf_event_attr attr;
	size_t leader;
	size_t group;
	char *filter;
	int *cpus;
	size_t nr_cpus;
	int cgroup_fd;		/* pc_engine_event.cgroup's, or -1 */
};

struct eng_group {
	size_t *members;	/* event indices, the first event first */
	size_t nr_members;
	uint64_t fmt;		/* the first event's read_format */
	size_t read_size;	/* bytes of its read(2), from open */
};

/* A group on a unit, as opened. */
struct eng_gu {
	/* The open members' slots in the order they joined: the first
	 * leads, and the kernel answers a group read in this order. */
	struct pc_slot **open;
	size_t nr_open;
	bool fast;		/* every open member has a user page */
};

struct pc_engine {
	struct pc_unit *units;
	size_t nr_units;
	unsigned long open_flags;	/* the target's, for every open */
	bool units_may_vanish;

	struct eng_event *events;
	size_t nr_events;
	struct eng_group *groups;
	size_t nr_groups;
	size_t max_members;

	unsigned int flags;		/* enum pc_engine_flags, of the open */
	bool opened;			/* pc_engine__open() succeeded once */
	struct pc_slot *slots;		/* nr_events * nr_units, from open */
	int *leader_fds;		/* nr_groups * nr_units */
	struct eng_gu *gu;		/* nr_groups * nr_units */
	struct pc_slot **open_pool;	/* the gu's open lists */
	/* Scratch of one open call (a group, or a run of groups of one
	 * event each), sized at open for all the events. */
	struct perf_event_attr *open_attrs;
	int *open_fds;
	size_t *open_evs;

	/* Scratch of one group read, sized at open for the largest. */
	void *read_buf;
	struct pc_readfmt_entry *entries;
	const volatile struct perf_event_mmap_page **pages;
	struct pc_page_value *values;
	struct pc_page_snap *snaps;

	/* The fast read's readers when not the machine's (tests). */
	pc_read_pmc_t read_pmc;
	pc_read_stamp_t read_stamp;
	uint64_t fast_reads;

	/* The open that failed the last pc_engine__open(). */
	struct pc_engine_failure failure;
};

/* ------------------------------------------------------------------ */

static __thread pid_t cached_tid;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forget_tid(void)
{
	cached_tid = 0;
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_tid);
}

pid_t pc_self_tid(void)
{
	if (!cached_tid) {
		pthread_once(&atfork_once, register_atfork);
		cached_tid = (pid_t)syscall(SYS_gettid);
	}
	return cached_tid;
}

bool pc_open_err_is_unsupported(int err)
{
	switch (err) {
	case ENOENT:		/* no such generic event on this PMU */
	case EOPNOTSUPP:	/* a feature the PMU lacks (sampling, exclude_*) */
	case ENODEV:		/* no such PMU, or not on this CPU */
	case EINVAL:		/* an encoding or group this PMU refuses */
	case ENOSPC:		/* breakpoint slots are full */
	case E2BIG:		/* attr too new for this kernel */
	case ENXIO:
	case ENOSYS:
		return true;
	default:
		return false;
	}
}

bool perfctr_errno_unsupported(int errnum)
{
	return pc_open_err_is_unsupported(errnum);
}

/* ------------------------------------------------------------------ */
/* Building. */

/* An engine on @nu units, filled by the caller; without @target, of
 * plain (thread, CPU) units. */
static struct pc_engine *engine_alloc(const struct perfctr_target *target,
				      size_t nu)
{
	struct pc_engine *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->units = calloc(nu, sizeof(*e->units));
	if (!e->units) {
		free(e);
		errno = ENOMEM;
		return NULL;
	}
	e->nr_units = nu;
	e->open_flags = target ? pc_target_open_flags(target) : 0;
	e->units_may_vanish = target && pc_target_units_may_vanish(target);
	return e;
}

struct pc_engine *pc_engine__new(const struct perfctr_target *target)
{
	struct pc_engine *e;
	size_t u, nu;

	if (!target) {
		errno = EINVAL;
		return NULL;
	}
	nu = perfctr_target__nr_units(target);
	if (!nu) {
		errno = ESRCH;
		return NULL;
	}
	e = engine_alloc(target, nu);
	if (!e)
		return NULL;
	for (u = 0; u < nu; u++)
		perfctr_target__unit(target, u, &e->units[u].tid,
				     &e->units[u].cpu);
	return e;
}

struct pc_engine *pc_engine__new_per_cpu(const struct perfctr_target *target,
					 const int *cpus, size_t nr_cpus)
{
	struct pc_engine *e = NULL;
	int *online = NULL;
	size_t u, nu, n = 0, i;
	char buf[4096];
	int err = 0;

	if (!target || (cpus && !nr_cpus)) {
		errno = EINVAL;
		return NULL;
	}
	nu = perfctr_target__nr_units(target);
	if (!nu) {
		errno = ESRCH;
		return NULL;
	}
	if (!cpus) {
		int rc = sys_online_cpus(buf, sizeof(buf));

		if (rc >= 0)
			rc = pc_parse_cpulist(buf, &online);
		if (rc < 0) {
			errno = -rc;
			return NULL;
		}
		cpus = online;
		nr_cpus = (size_t)rc;
	}
	for (u = 0; u < nu; u++) {
		int cpu;

		perfctr_target__unit(target, u, NULL, &cpu);
		n += cpu >= 0 ? 1 : nr_cpus;
	}
	e = engine_alloc(target, n);
	if (!e) {
		err = errno;
		goto out;
	}
	for (u = 0, n = 0; u < nu; u++) {
		pid_t tid;
		int cpu;

		perfctr_target__unit(target, u, &tid, &cpu);
		if (cpu >= 0) {
			e->units[n].tid = tid;
			e->units[n++].cpu = cpu;
			continue;
		}
		for (i = 0; i < nr_cpus; i++) {
			e->units[n].tid = tid;
			e->units[n++].cpu = cpus[i];
		}
	}
out:
	free(online);
	if (!e)
		errno = err;
	return e;
}

struct pc_engine *pc_engine__new_single(const struct perf_event_attr *attr,
				       pid_t tid, int cpu, int *fd)
{
	struct pc_engine_event ev = { .attr = attr };
	struct pc_engine *e;
	int rc;

	if (!attr || !fd) {
		errno = EINVAL;
		return NULL;
	}
	e = engine_alloc(NULL, 1);
	if (!e)
		return NULL;
	e->units[0].tid = tid;
	e->units[0].cpu = cpu;
	rc = pc_engine__add(e, &ev);
	if (rc >= 0)
		rc = pc_engine__open(e, PC_ENGINE_STRICT);
	if (rc < 0) {
		pc_engine__delete(e);
		errno = -rc;
		return NULL;
	}
	*fd = e->slots[0].fd;
	return e;
}

static void free_open_state(struct pc_engine *e);

void pc_engine__delete(struct pc_engine *e)
{
	size_t i;

	if (!e)
		return;
	pc_engine__close(e);
	for (i = 0; i < e->nr_events; i++) {
		free(e->events[i].filter);
		free(e->events[i].cpus);
	}
	for (i = 0; i < e->nr_groups; i++)
		free(e->groups[i].members);
	free(e->events);
	free(e->groups);
	free(e->units);
	free_open_state(e);
	free(e);
}

int pc_engine__add(struct pc_engine *e, const struct pc_engine_event *ev)
{
	size_t idx, g;
	struct eng_event *n;
	size_t *members;
	bool failed = false;
	void *p;

	if (!e || !ev || !ev->attr)
		return -EINVAL;
	if (e->opened)
		return -EBUSY;
	idx = e->nr_events;
	/* A cgroup of the event's own: only on CPU-wide units, and a
	 * group's members in their leader's (the kernel's rule). */
	if (ev->cgroup) {
		if (pc_target_cgroup_fd(ev->cgroup) < 0)
			return -EINVAL;
		for (size_t u = 0; u < e->nr_units; u++)
			if (e->units[u].cpu < 0 ||
			    (e->units[u].tid >= 0 &&
			     !(e->open_flags & PERF_FLAG_PID_CGROUP)))
				return -EINVAL;
	}
	if (ev->leader < idx &&
	    e->events[ev->leader].cgroup_fd != pc_target_cgroup_fd(ev->cgroup))
		return -EINVAL;
	if (ev->leader > idx ||
	    (ev->leader < idx && e->events[ev->leader].leader != ev->leader))
		return -EINVAL;
	p = realloc(e->events, (idx + 1) * sizeof(*e->events));
	if (!p)
		return -ENOMEM;
	e->events = p;
	if (ev->leader == idx) {
		p = realloc(e->groups, (e->nr_groups + 1) * sizeof(*e->groups));
		if (!p)
			return -ENOMEM;
		e->groups = p;
		g = e->nr_groups;
		e->groups[g].members = NULL;
		e->groups[g].nr_members = 0;
		e->groups[g].fmt = ev->attr->read_format;
		e->groups[g].read_size = 0;
	} else {
		g = e->events[ev->leader].group;
	}
	members = realloc(e->groups[g].members,
			  (e->groups[g].nr_members + 1) * sizeof(*members));
	if (!members)
		return -ENOMEM;	/* a new group is not counted yet */
	e->groups[g].members = members;

	n = &e->events[idx];
	memset(n, 0, sizeof(*n));
	n->attr = *ev->attr;
	n->attr.size = sizeof(n->attr);
	n->leader = ev->leader;
	n->group = g;
	n->filter = pc_strdup_or_null(ev->filter, &failed);
	n->cgroup_fd = pc_target_cgroup_fd(ev->cgroup);
	if (ev->cpus && ev->nr_cpus) {
		n->cpus = malloc(ev->nr_cpus * sizeof(*n->cpus));
		if (n->cpus) {
			memcpy(n->cpus, ev->cpus, ev->nr_cpus * sizeof(*n->cpus));
			n->nr_cpus = ev->nr_cpus;
		} else {
			failed = true;
		}
	}
	if (failed) {
		free(n->filter);
		free(n->cpus);
		if (g == e->nr_groups) {
			free(members);
			e->groups[g].members = NULL;
		}
		return -ENOMEM;
	}
	members[e->groups[g].nr_members++] = idx;
	if (g == e->nr_groups)
		e->nr_groups++;
	if (e->groups[g].nr_members > e->max_members)
		e->max_members = e->groups[g].nr_members;
	e->nr_events++;
	return (int)idx;
}

/* ------------------------------------------------------------------ */
/* Opening and closing. */

static void slot_init(struct pc_slot *slot)
{
	memset(slot, 0, sizeof(*slot));
	slot->fd = -1;
	slot->count.status = PERFCTR_COUNT_NOT_COUNTED;
}

static void slot_unsupported(struct pc_slot *slot, int err)
{
	slot->open_err = err;
	slot->count.status = PERFCTR_COUNT_NOT_SUPPORTED;
	slot->count.errnum = err;
}

static bool cpu_allowed(const struct eng_event *ev, int cpu)
{
	size_t i;

	if (!ev->cpus || cpu < 0)
		return true;
	for (i = 0; i < ev->nr_cpus; i++)
		if (ev->cpus[i] == cpu)
			return true;
	return false;
}

/* Only a page that can ever give a value is worth the mapping (and the
 * kernel's updates of it at every ioctl). */
static bool wants_page(const struct pc_engine *e, const struct eng_event *ev,
		       const struct pc_unit *unit)
{
	return (e->flags & PC_ENGINE_MMAP) && unit->cpu < 0 && unit->tid >= 0 &&
	       !ev->attr.inherit && ev->attr.type != PERF_TYPE_SOFTWARE &&
	       ev->attr.type != PERF_TYPE_TRACEPOINT &&
	       ev->attr.type != PERF_TYPE_BREAKPOINT;
}

static void close_slot(struct pc_slot *slot)
{
	if (slot->page && slot->page_mapped)
		sys_perf_munmap((void *)slot->page, 0);
	slot->page = NULL;
	slot->page_mapped = false;
	if (slot->fd >= 0) {
		close(slot->fd);
		slot->fd = -1;
	}
}

/* Close unit @u's fds, members before leaders: closing a leader first
 * would turn its members into singleton events for a moment. */
static void close_unit(struct pc_engine *e, size_t u)
{
	size_t ev, g;

	for (ev = 0; ev < e->nr_events; ev++) {
		struct pc_slot *slot = &e->slots[ev * e->nr_units + u];

		if (slot->fd >= 0 &&
		    slot->fd != e->leader_fds[e->events[ev].group * e->nr_units + u])
			close_slot(slot);
	}
	for (ev = 0; ev < e->nr_events; ev++)
		close_slot(&e->slots[ev * e->nr_units + u]);
	for (g = 0; g < e->nr_groups; g++) {
		e->leader_fds[g * e->nr_units + u] = -1;
		e->gu[g * e->nr_units + u].nr_open = 0;
		e->gu[g * e->nr_units + u].fast = false;
	}
}

void pc_engine__close(struct pc_engine *e)
{
	size_t u;

	if (!e || !e->slots || !e->leader_fds || !e->gu)
		return;
	for (u = 0; u < e->nr_units; u++)
		close_unit(e, u);
}

/* The attr an event is opened with on @unit; see engine.h. */
static void open_attr(const struct pc_engine *e, const struct eng_event *ev,
		      const struct pc_unit *unit, bool leads,
		      struct perf_event_attr *attr)
{
	*attr = ev->attr;
	attr->size = sizeof(*attr);
	if (unit->tid < 0 || (e->open_flags & PERF_FLAG_PID_CGROUP) ||
	    ev->cgroup_fd >= 0)
		attr->inherit = 0;
	if (leads) {
		attr->disabled = 1;
		attr->enable_on_exec =
			e->events[e->groups[ev->group].members[0]].attr.enable_on_exec;
	} else {
		attr->disabled = 0;
		attr->enable_on_exec = 0;
	}
}

/* Slot @slot of @event has its descriptor @fd: its id, filter and page. */
static int setup_slot(struct pc_engine *e, const struct eng_event *event,
		      const struct pc_unit *unit, struct pc_slot *slot, int fd)
{
	int err;

	slot->fd = fd;
	err = sys_perf_id(fd, &slot->id);
	if (err)
		return err;
	if (event->filter) {
		err = sys_perf_set_filter(fd, event->filter);
		if (err)
			return err;
	}
	/* No page is no error: the read falls back to read(2). */
	if (wants_page(e, event, unit)) {
		slot->page = sys_perf_mmap(fd, 0, false, NULL);
		slot->page_mapped = slot->page != NULL;
	}
	return 0;
}

/* Event @m of an open of @nr groups from @g: member @m of group @g, or
 * the one event of group @g + @m when they are several. */
static size_t run_event(const struct pc_engine *e, size_t g, size_t nr,
			size_t m)
{
	return nr > 1 ? e->groups[g + m].members[0] : e->groups[g].members[m];
}

/*
 * How many groups from @g to open in one call on a unit: the run of
 * groups of one event each, on the same target (a cgroup of their own or
 * none: the same pid and flags), or 1.  The events of a run are
 * independent, so that when they go to the broker they go in one round
 * trip, as a group's members do.
 */
static size_t run_length(const struct pc_engine *e, size_t g)
{
	int cgroup_fd = e->events[e->groups[g].members[0]].cgroup_fd;
	size_t nr;

	for (nr = 0; g + nr < e->nr_groups; nr++)
		if (e->groups[g + nr].nr_members != 1 ||
		    e->events[e->groups[g + nr].members[0]].cgroup_fd !=
		    cgroup_fd)
			break;
	return nr ? nr : 1;
}

/*
 * Open group @g on unit @u, or the @nr groups of one event from @g (a run,
 * see run_length()).  Return 0, 1 when the unit's thread is gone, or
 * -errno.  The events that can count on the unit's CPU are opened in
 * one call, so that when they go to the broker they go in one round
 * trip; an event that fails as unsupported (when that is no failure) is
 * left out and the events after it are opened in the next call.
 */
/* The @opened events of the last open (e->open_evs) on unit @u: the
 * first of a group its leader, each fd its slot's.  Return 0, or
 * setup_slot()'s error with the fds not yet the slots' closed. */
static int take_opened(struct pc_engine *e, size_t u, size_t opened)
{
	for (size_t k = 0; k < opened; k++) {
		size_t ev = e->open_evs[k];
		int *lfd = &e->leader_fds[e->events[ev].group * e->nr_units + u];
		int ret;

		if (*lfd < 0)
			*lfd = e->open_fds[k];
		ret = setup_slot(e, &e->events[ev], &e->units[u],
				 &e->slots[ev * e->nr_units + u], e->open_fds[k]);
		if (ret) {
			/* The rest are not the slots' yet. */
			while (++k < opened)
				close(e->open_fds[k]);
			return ret;
		}
	}
	return 0;
}

/* The last open on unit @u stopped at its entry @opened with @err.
 * Return 1 when the unit's task is gone, @err when the attach fails (in
 * strict mode, or not for an event unsupported here: e->failure says
 * which), 0 when the event is only unsupported here: its slot says so
 * and the open goes on after it. */
static int open_failed(struct pc_engine *e, size_t u, size_t opened, int err)
{
	const struct pc_unit *unit = &e->units[u];
	size_t ev = e->open_evs[opened];
	const struct perf_event_attr *attr = &e->open_attrs[opened];

	if (err == -ESRCH && e->units_may_vanish)
		return 1;
	pr_debug("cannot open event %zu (type %u, config %#llx) "
		 "on tid %d cpu %d: %s\n", ev, attr->type,
		 (unsigned long long)attr->config,
		 (int)unit->tid, unit->cpu, strerror(-err));
	if ((e->flags & PC_ENGINE_STRICT) || !pc_open_err_is_unsupported(-err)) {
		e->failure.event = ev;
		e->failure.errnum = -err;
		pc_strlcpy(e->failure.broker, pc_broker_refusal(),
			   sizeof(e->failure.broker));
		return err;
	}
	slot_unsupported(&e->slots[ev * e->nr_units + u], -err);
	return 0;
}

static int open_groups(struct pc_engine *e, size_t g, size_t nr, size_t u)
{
	const struct eng_group *grp = &e->groups[g];
	const struct pc_unit *unit = &e->units[u];
	size_t total = nr > 1 ? nr : grp->nr_members;
	bool strict = e->flags & PC_ENGINE_STRICT;
	/* A group of its own cgroup: on the unit's CPU, with the cgroup's
	 * fd in place of the unit's (pc_engine__add()); a run shares it. */
	int cgroup_fd = e->events[grp->members[0]].cgroup_fd;
	pid_t pid = cgroup_fd >= 0 ? cgroup_fd : unit->tid;
	unsigned long flags = (cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP :
			       e->open_flags) |
			      (e->flags & PC_ENGINE_NO_BROKER ?
			       PC_SYS_NO_BROKER : 0);
	size_t m = 0, n, opened;
	int err, ret;

	while (m < total) {
		for (n = 0; m < total; m++) {
			size_t ev = run_event(e, g, nr, m);
			const struct eng_event *event = &e->events[ev];
			struct perf_event_attr *attr = &e->open_attrs[n];
			const int *lfd =
				&e->leader_fds[event->group * e->nr_units + u];

			if (!cpu_allowed(event, unit->cpu)) {
				slot_unsupported(&e->slots[ev * e->nr_units + u],
						 ENODEV);
				if (strict)
					return -ENODEV;
				continue;
			}
			/* Of a group, the first of the call leads when no
			 * member is open yet and the others join it; each
			 * of a run leads its own. */
			open_attr(e, event, unit, *lfd < 0 && (nr > 1 || !n),
				  attr);
#if defined(__aarch64__)
			/* The armv8 PMU's rdpmc format bit (config1:1):
			 * without it the kernel gives the page no counter
			 * index. */
			if (wants_page(e, event, unit) &&
			    (attr->type == PERF_TYPE_HARDWARE ||
			     attr->type == PERF_TYPE_HW_CACHE ||
			     attr->type == PERF_TYPE_RAW))
				attr->config1 |= 0x2;
#endif
			e->open_evs[n++] = ev;
		}
		if (!n)
			break;
		if (nr > 1)
			err = sys_perf_event_open_many(e->open_attrs, n, pid,
						       unit->cpu, flags,
						       e->open_fds, &opened);
		else
			err = sys_perf_event_open_group(e->open_attrs, n, pid,
					unit->cpu, e->leader_fds[g * e->nr_units + u],
					flags, e->open_fds, &opened);
		ret = take_opened(e, u, opened);
		if (ret)
			return ret;
		if (!err)
			break;
		ret = open_failed(e, u, opened, err);
		if (ret)
			return ret;
		/* On after the event that failed. */
		for (m = 0; run_event(e, g, nr, m) != e->open_evs[opened]; m++)
			;
		m++;
	}
	return 0;
}

static int alloc_open_state(struct pc_engine *e)
{
	size_t n = e->nr_events * e->nr_units, ngu = e->nr_groups * e->nr_units;
	size_t bytes = pc_readfmt_size(PERF_FORMAT_GROUP | PC_READFMT_KNOWN,
				       e->max_members);
	size_t i, g;

	e->slots = malloc(n * sizeof(*e->slots));
	e->leader_fds = malloc(ngu * sizeof(*e->leader_fds));
	e->gu = calloc(ngu, sizeof(*e->gu));
	e->open_pool = malloc(n * sizeof(*e->open_pool));
	/* A run of groups of one event each may be all of the events. */
	e->open_attrs = malloc(e->nr_events * sizeof(*e->open_attrs));
	e->open_fds = malloc(e->nr_events * sizeof(*e->open_fds));
	e->open_evs = malloc(e->nr_events * sizeof(*e->open_evs));
	e->read_buf = malloc(bytes);
	e->entries = malloc(e->max_members * sizeof(*e->entries));
	e->pages = malloc(e->max_members * sizeof(*e->pages));
	e->values = malloc(e->max_members * sizeof(*e->values));
	e->snaps = malloc(e->max_members * sizeof(*e->snaps));
	if (!e->slots || !e->leader_fds || !e->gu || !e->open_pool ||
	    !e->open_attrs || !e->open_fds || !e->open_evs ||
	    !e->read_buf || !e->entries || !e->pages || !e->values ||
	    !e->snaps)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		slot_init(&e->slots[i]);
	for (i = 0; i < ngu; i++)
		e->leader_fds[i] = -1;
	for (g = 0; g < e->nr_groups; g++)
		e->groups[g].read_size = pc_readfmt_size(e->groups[g].fmt,
							 e->groups[g].nr_members);
	return 0;
}

static void free_open_state(struct pc_engine *e)
{
	free(e->slots);
	free(e->leader_fds);
	free(e->gu);
	free(e->open_pool);
	free(e->open_attrs);
	free(e->open_fds);
	free(e->open_evs);
	e->open_attrs = NULL;
	e->open_fds = NULL;
	e->open_evs = NULL;
	free(e->read_buf);
	free(e->entries);
	free(e->pages);
	free(e->values);
	free(e->snaps);
	e->snaps = NULL;
	e->slots = NULL;
	e->leader_fds = NULL;
	e->gu = NULL;
	e->open_pool = NULL;
	e->read_buf = NULL;
	e->entries = NULL;
	e->pages = NULL;
	e->values = NULL;
}

/* The open lists of every group on every unit, once all is open. */
static void list_open(struct pc_engine *e)
{
	struct pc_slot **pool = e->open_pool;
	size_t g, u, m;

	for (g = 0; g < e->nr_groups; g++) {
		const struct eng_group *grp = &e->groups[g];

		for (u = 0; u < e->nr_units; u++) {
			struct eng_gu *gu = &e->gu[g * e->nr_units + u];
			bool pages = true;

			gu->open = pool;
			gu->nr_open = 0;
			for (m = 0; m < grp->nr_members; m++) {
				struct pc_slot *slot =
					&e->slots[grp->members[m] * e->nr_units + u];

				if (slot->fd < 0)
					continue;
				gu->open[gu->nr_open++] = slot;
				if (!slot->page)
					pages = false;
			}
			gu->fast = pages && gu->nr_open;
			pool += gu->nr_open;
		}
	}
}

int pc_engine__open(struct pc_engine *e, unsigned int flags)
{
	size_t u, g, nr, alive = 0;
	int err;

	if (!e || !e->nr_events)
		return -EINVAL;
	if (e->opened)
		return -EBUSY;
	memset(&e->failure, 0, sizeof(e->failure));
	e->flags = flags;
	err = alloc_open_state(e);
	if (err)
		goto fail;
	if (flags & PC_ENGINE_NO_FDS) {
		list_open(e);
		e->opened = true;
		return 0;
	}
	for (u = 0; u < e->nr_units; u++) {
		int rc = 0;

		for (g = 0; g < e->nr_groups && !rc; g += nr) {
			nr = run_length(e, g);
			rc = open_groups(e, g, nr, u);
		}
		if (rc < 0) {
			err = rc;
			goto fail;
		}
		if (rc > 0) {
			size_t ev;

			close_unit(e, u);
			for (ev = 0; ev < e->nr_events; ev++)
				slot_init(&e->slots[ev * e->nr_units + u]);
			e->units[u].gone = true;
			continue;
		}
		alive++;
	}
	if (!alive) {
		err = -ESRCH;
		goto fail;
	}
	list_open(e);
	if (flags & PC_ENGINE_ENABLE) {
		err = pc_engine__enable(e);
		if (err)
			goto fail;
	}
	e->opened = true;
	return 0;
fail:
	if (e->slots && e->leader_fds && e->gu)
		pc_engine__close(e);
	free_open_state(e);
	for (u = 0; u < e->nr_units; u++)
		e->units[u].gone = false;
	return err;
}

const struct pc_engine_failure *pc_engine__failure(const struct pc_engine *e)
{
	return &e->failure;
}

/* ------------------------------------------------------------------ */
/* Shape. */

size_t pc_engine__nr_events(const struct pc_engine *e)
{
	return e ? e->nr_events : 0;
}

size_t pc_engine__nr_units(const struct pc_engine *e)
{
	return e ? e->nr_units : 0;
}

size_t pc_engine__nr_groups(const struct pc_engine *e)
{
	return e ? e->nr_groups : 0;
}

const struct pc_unit *pc_engine__unit(const struct pc_engine *e, size_t u)
{
	return e && u < e->nr_units ? &e->units[u] : NULL;
}

const struct pc_unit *pc_engine__units(const struct pc_engine *e)
{
	return e ? e->units : NULL;
}

size_t pc_engine__group_of(const struct pc_engine *e, size_t ev)
{
	return e && ev < e->nr_events ? e->events[ev].group : (size_t)-1;
}

size_t pc_engine__group_size(const struct pc_engine *e, size_t g)
{
	return e && g < e->nr_groups ? e->groups[g].nr_members : 0;
}

size_t pc_engine__group_member(const struct pc_engine *e, size_t g, size_t m)
{
	if (!e || g >= e->nr_groups || m >= e->groups[g].nr_members)
		return (size_t)-1;
	return e->groups[g].members[m];
}

const struct perf_event_attr *pc_engine__attr(const struct pc_engine *e,
					      size_t ev)
{
	return e && ev < e->nr_events ? &e->events[ev].attr : NULL;
}

struct pc_slot *pc_engine__slot(const struct pc_engine *e, size_t ev, size_t u)
{
	if (!e || !e->slots || ev >= e->nr_events || u >= e->nr_units)
		return NULL;
	return &e->slots[ev * e->nr_units + u];
}

int pc_engine__fd(const struct pc_engine *e, size_t ev, size_t u)
{
	const struct pc_slot *slot = pc_engine__slot(e, ev, u);

	return slot ? slot->fd : -1;
}

int pc_engine__leader_fd(const struct pc_engine *e, size_t g, size_t u)
{
	if (!e || !e->leader_fds || g >= e->nr_groups || u >= e->nr_units)
		return -1;
	return e->leader_fds[g * e->nr_units + u];
}

int *pc_engine__leader_fds(const struct pc_engine *e)
{
	return e ? e->leader_fds : NULL;
}

/* ------------------------------------------------------------------ */
/* Toggling. */

static int op_fd(int fd, enum pc_engine_op op)
{
	switch (op) {
	case PC_ENGINE_OP_ENABLE:
		return sys_perf_enable(fd, false);
	case PC_ENGINE_OP_DISABLE:
		return sys_perf_disable(fd, false);
	case PC_ENGINE_OP_RESET:
		/* RESET with the group flag does reach members of other
		 * PMUs (unlike ENABLE). */
		return sys_perf_reset(fd, true);
	}
	return -EINVAL;
}

static int for_each_leader(struct pc_engine *e, enum pc_engine_op op)
{
	size_t i;
	int err = 0;

	if (!e)
		return -EINVAL;
	if (!e->leader_fds)
		return 0;
	for (i = 0; i < e->nr_groups * e->nr_units; i++) {
		int rc;

		if (e->leader_fds[i] < 0)
			continue;
		rc = op_fd(e->leader_fds[i], op);
		if (rc && !err)
			err = rc;
	}
	return err;
}

int pc_engine__enable(struct pc_engine *e)
{
	return for_each_leader(e, PC_ENGINE_OP_ENABLE);
}

int pc_engine__disable(struct pc_engine *e)
{
	return for_each_leader(e, PC_ENGINE_OP_DISABLE);
}

int pc_engine__reset(struct pc_engine *e)
{
	return for_each_leader(e, PC_ENGINE_OP_RESET);
}

int pc_engine__toggle_group(struct pc_engine *e, size_t g, size_t u,
			    enum pc_engine_op op)
{
	size_t first, last, i;
	int err = 0;

	if (!e || g >= e->nr_groups ||
	    (u != PC_ENGINE_ALL_UNITS && u >= e->nr_units))
		return -EINVAL;
	if (!e->leader_fds)
		return 0;
	first = u == PC_ENGINE_ALL_UNITS ? 0 : u;
	last = u == PC_ENGINE_ALL_UNITS ? e->nr_units : u + 1;
	for (i = first; i < last; i++) {
		int fd = e->leader_fds[g * e->nr_units + i], rc;

		if (fd < 0)
			continue;
		rc = op_fd(fd, op);
		if (rc && !err)
			err = rc;
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Reading. */

/* @counted: the answer has no running time (a format without it); a
 * counter that answered counted, then. */
static void set_count(struct pc_slot *slot, uint64_t value, uint64_t enabled,
		      uint64_t running, bool counted, uint64_t lost)
{
	slot->count.value = value;
	slot->count.time_enabled = enabled;
	slot->count.time_running = running;
	slot->count.status = running || counted ? PERFCTR_COUNT_OK :
			     PERFCTR_COUNT_NOT_COUNTED;
	slot->count.errnum = 0;
	slot->lost = lost;
}

static bool no_running(uint64_t fmt)
{
	return !(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING);
}

/* A group answer into the open members' slots. */
static int decode_gu(struct pc_engine *e, const struct eng_group *grp,
		     const struct eng_gu *gu, const void *buf, size_t len)
{
	bool ids = grp->fmt & PERF_FORMAT_ID;
	struct pc_readfmt head;
	size_t i, m;
	int n;

	if (!gu->nr_open)
		return 0;
	n = pc_readfmt_decode(grp->fmt, buf, len, &head, e->entries, gu->nr_open);
	if (n < 0)
		return n;
	/* The kernel answers in the order the members joined; by id when
	 * it did not (an id nobody has is ignored). */
	for (i = 0; i < (size_t)n; i++) {
		const struct pc_readfmt_entry *ent = &e->entries[i];
		struct pc_slot *hit = gu->open[i];

		for (m = 0; ids && hit && hit->id != ent->id; m++)
			hit = m < gu->nr_open ? gu->open[m] : NULL;
		if (hit)
			set_count(hit, ent->value, head.time_enabled,
				  head.time_running, no_running(grp->fmt),
				  ent->lost);
	}
	return 0;
}

int pc_engine__decode_group(struct pc_engine *e, size_t g, size_t u,
			    const void *buf, size_t len)
{
	if (!e || !e->gu || g >= e->nr_groups || u >= e->nr_units)
		return -EINVAL;
	if (!(e->groups[g].fmt & PERF_FORMAT_GROUP))
		return -EINVAL;
	return decode_gu(e, &e->groups[g], &e->gu[g * e->nr_units + u], buf, len);
}

/* Each open member read on its own (a format without GROUP). */
static int read_each(struct pc_engine *e, const struct eng_group *grp,
		     const struct eng_gu *gu)
{
	size_t m;
	int err = 0;

	for (m = 0; m < gu->nr_open; m++) {
		struct pc_slot *slot = gu->open[m];
		struct pc_readfmt head;
		struct pc_readfmt_entry ent;
		ssize_t len;
		int n;

		len = sys_perf_read(slot->fd, e->read_buf, grp->read_size);
		n = len < 0 ? (int)len :
		    pc_readfmt_decode(grp->fmt, e->read_buf, (size_t)len,
				      &head, &ent, 1);
		if (n < 0) {
			if (!err)
				err = n;
			continue;
		}
		set_count(slot, ent.value, head.time_enabled, head.time_running,
			  no_running(grp->fmt), ent.lost);
	}
	return err;
}

/* The fast read of a group on the unit of thread @tid.  True when every
 * member's page gave a value and current times. */
static bool read_fast(struct pc_engine *e, const struct eng_gu *gu, pid_t tid)
{
	const volatile struct perf_event_mmap_page *const *pages;
	size_t i;
	bool ok;

	if (tid != pc_self_tid())
		return false;
	for (i = 0; i < gu->nr_open; i++)
		e->pages[i] = gu->open[i]->page;
	pages = (const volatile struct perf_event_mmap_page *const *)e->pages;
	if (e->read_pmc)
		ok = pc_fastread_pages_with(pages, gu->nr_open, true, e->read_pmc,
					    e->read_stamp, e->snaps, e->values);
	else
		ok = pc_fastread_pages(pages, gu->nr_open, true, e->values);
	if (!ok)
		return false;
	for (i = 0; i < gu->nr_open; i++)
		if (!e->values[i].times)
			return false;
	for (i = 0; i < gu->nr_open; i++)
		set_count(gu->open[i], e->values[i].value,
			  e->values[i].time_enabled, e->values[i].time_running,
			  false, 0);
	e->fast_reads++;
	return true;
}

static int read_gu(struct pc_engine *e, size_t g, size_t u)
{
	const struct eng_group *grp = &e->groups[g];
	const struct eng_gu *gu = &e->gu[g * e->nr_units + u];
	ssize_t len;

	if (!gu->nr_open)
		return 0;
	if (gu->fast && read_fast(e, gu, e->units[u].tid))
		return 0;
	if (!(grp->fmt & PERF_FORMAT_GROUP))
		return read_each(e, grp, gu);
	/* The first open member leads: its fd answers for the group. */
	len = sys_perf_read(gu->open[0]->fd, e->read_buf, grp->read_size);
	if (len < 0)
		return (int)len;
	return decode_gu(e, grp, gu, e->read_buf, (size_t)len);
}

int pc_engine__read_group(struct pc_engine *e, size_t g, size_t u)
{
	if (!e || g >= e->nr_groups || u >= e->nr_units)
		return -EINVAL;
	if (!e->gu)
		return 0;
	return read_gu(e, g, u);
}

int pc_engine__read(struct pc_engine *e)
{
	size_t g, u;
	int err = 0;

	if (!e)
		return -EINVAL;
	if (!e->gu)
		return 0;
	for (u = 0; u < e->nr_units; u++) {
		for (g = 0; g < e->nr_groups; g++) {
			int rc = read_gu(e, g, u);

			/* A CPU that went offline: keep its last values. */
			if (rc && rc != -ENODEV && !err)
				err = rc;
		}
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Test seams. */

void pc_engine__set_readers(struct pc_engine *e, pc_read_pmc_t read_pmc,
			    pc_read_stamp_t read_stamp)
{
	if (!e)
		return;
	e->read_pmc = read_pmc && read_stamp ? read_pmc : NULL;
	e->read_stamp = read_pmc && read_stamp ? read_stamp : NULL;
}

int pc_engine__set_page(struct pc_engine *e, size_t ev, size_t u,
			volatile struct perf_event_mmap_page *page)
{
	struct pc_slot *slot = pc_engine__slot(e, ev, u);

	if (!slot || slot->fd < 0)
		return -EINVAL;
	if (slot->page && slot->page_mapped)
		sys_perf_munmap((void *)slot->page, 0);
	slot->page = page;
	slot->page_mapped = false;
	list_open(e);
	return 0;
}

uint64_t pc_engine__fast_reads(const struct pc_engine *e)
{
	return e ? e->fast_reads : 0;
}
