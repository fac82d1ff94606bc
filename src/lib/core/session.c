// SPDX-License-Identifier: LGPL-2.1
/*
 * Sessions: groups of events opened on every unit of a target, read with
 * one read() per group and unit.  See session-internal.h for the model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/session-internal.h"
#include "core/set-internal.h"
#include "core/target-internal.h"
#include "sys/cpulist.h"
#include "sys/sys.h"

struct perfctr_session *perfctr_session__new(const struct perfctr_session_opts *opts)
{
	const struct perfctr_parse_opts *popts;
	struct perfctr_session *s;
	bool failed = false;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	popts = PC_OPTS_GET(opts, parse_opts, NULL);
	if (!pc_opts_valid(popts, sizeof(*popts))) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->flags = PC_OPTS_GET(opts, flags, 0);
	s->parse_opts.sz = sizeof(s->parse_opts);
	s->sysfs_root = pc_strdup_or_null(PC_OPTS_GET(popts, sysfs_root, NULL), &failed);
	s->tracefs_root = pc_strdup_or_null(PC_OPTS_GET(popts, tracefs_root, NULL), &failed);
	s->parse_opts.sysfs_root = s->sysfs_root;
	s->parse_opts.tracefs_root = s->tracefs_root;
	s->parse_opts.exclude_kernel = PC_OPTS_GET(popts, exclude_kernel, false);
	s->parse_opts.exclude_hv = PC_OPTS_GET(popts, exclude_hv, false);
	if (failed) {
		perfctr_session__delete(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static void close_slots(struct perfctr_session *s)
{
	size_t e, u;

	if (!s->slots)
		return;
	/* Members before leaders: closing a leader first would turn its
	 * members into singleton events for a moment. */
	for (e = 0; e < s->nr_events; e++) {
		for (u = 0; u < s->nr_units; u++) {
			struct pc_slot *slot = pc_slot(s, e, u);

			if (slot->fd >= 0 && slot->fd != *pc_group_fd(s, s->events[e].group, u)) {
				close(slot->fd);
				slot->fd = -1;
			}
		}
	}
	for (e = 0; e < s->nr_events; e++) {
		for (u = 0; u < s->nr_units; u++) {
			struct pc_slot *slot = pc_slot(s, e, u);

			if (slot->fd >= 0) {
				close(slot->fd);
				slot->fd = -1;
			}
		}
	}
	for (e = 0; e < s->nr_groups * s->nr_units; e++)
		s->group_fds[e] = -1;
}

void perfctr_session__delete(struct perfctr_session *s)
{
	size_t i;

	if (!s)
		return;
	if (s->attached)
		pc_sets_detach(s);	/* sets hook */
	close_slots(s);
	pc_sets_free(s->sets);		/* sets hook */
	for (i = 0; i < s->nr_events; i++) {
		free(s->events[i].name);
		free(s->events[i].pmu);
		free(s->events[i].unit);
		free(s->events[i].filter);
		free(s->events[i].cpus);
	}
	for (i = 0; i < s->nr_groups; i++)
		free(s->groups[i].members);
	free(s->events);
	free(s->groups);
	free(s->units);
	free(s->slots);
	free(s->group_fds);
	free(s->carried);
	free(s->has_carried);
	free(s->read_buf);
	free(s->sysfs_root);
	free(s->tracefs_root);
	free(s);
}

/* A fresh slot: not open, nothing counted yet. */
static void slot_init(struct pc_slot *slot)
{
	memset(slot, 0, sizeof(*slot));
	slot->fd = -1;
	slot->count.status = PERFCTR_COUNT_NOT_COUNTED;
}

/*
 * Grow every per-event and per-group array for @add_events more events
 * and @add_groups more groups, so that the additions cannot fail half-way.
 */
static int reserve(struct perfctr_session *s, size_t add_events, size_t add_groups)
{
	size_t ne = s->nr_events + add_events, ng = s->nr_groups + add_groups;
	size_t i;
	void *p;

	p = realloc(s->events, (ne ? ne : 1) * sizeof(*s->events));
	if (!p)
		return -ENOMEM;
	s->events = p;
	p = realloc(s->groups, (ng ? ng : 1) * sizeof(*s->groups));
	if (!p)
		return -ENOMEM;
	s->groups = p;
	p = realloc(s->carried, (ne ? ne : 1) * sizeof(*s->carried));
	if (!p)
		return -ENOMEM;
	s->carried = p;
	p = realloc(s->has_carried, (ne ? ne : 1) * sizeof(*s->has_carried));
	if (!p)
		return -ENOMEM;
	s->has_carried = p;
	for (i = s->nr_events; i < ne; i++)
		s->has_carried[i] = false;
	if (s->nr_units) {
		p = realloc(s->slots, ne * s->nr_units * sizeof(*s->slots));
		if (!p)
			return -ENOMEM;
		s->slots = p;
		for (i = s->nr_events * s->nr_units; i < ne * s->nr_units; i++)
			slot_init(&s->slots[i]);
		p = realloc(s->group_fds, (ng ? ng : 1) * s->nr_units * sizeof(*s->group_fds));
		if (!p)
			return -ENOMEM;
		s->group_fds = p;
		for (i = s->nr_groups * s->nr_units; i < ng * s->nr_units; i++)
			s->group_fds[i] = -1;
	}
	return 0;
}

static int parse_pmu_cpus(const char *list, int **cpus)
{
	int n;

	*cpus = NULL;
	if (!list || !*list)
		return 0;
	n = pc_parse_cpulist(list, cpus);
	/* A list we cannot read is no restriction: the kernel will say. */
	if (n == -EINVAL) {
		*cpus = NULL;
		return 0;
	}
	return n;
}

int perfctr_session__add_evlist(struct perfctr_session *s,
				const struct perfctr_evlist *list)
{
	size_t n, i, base, new_groups = 0, g;
	size_t *group_of = NULL;
	int err;

	if (!s || !list)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	n = perfctr_evlist__nr_events(list);
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		size_t leader = perfctr_evlist__leader(list, i);

		if (leader > i)
			return pc_err(EINVAL);
		if (leader == i)
			new_groups++;
	}
	group_of = calloc(n, sizeof(*group_of));
	if (!group_of)
		return pc_err(ENOMEM);
	err = reserve(s, n, new_groups);
	if (err)
		goto fail;

	base = s->nr_events;
	g = s->nr_groups;
	for (i = 0; i < n; i++) {
		struct pc_event *ev = &s->events[base + i];
		size_t leader = perfctr_evlist__leader(list, i);
		const struct perf_event_attr *attr = perfctr_evlist__attr(list, i);
		const char *unit = perfctr_evlist__unit(list, i);
		bool failed = false;
		int nr_cpus;

		memset(ev, 0, sizeof(*ev));
		if (attr)
			ev->attr = *attr;
		ev->attr.size = sizeof(ev->attr);
		ev->name = pc_strdup_or_null(perfctr_evlist__name(list, i), &failed);
		ev->pmu = pc_strdup_or_null(perfctr_evlist__pmu(list, i), &failed);
		ev->unit = pc_strdup_or_null(unit ? unit : "", &failed);
		ev->scale = perfctr_evlist__scale(list, i);
		nr_cpus = parse_pmu_cpus(perfctr_evlist__cpus(list, i), &ev->cpus);
		if (nr_cpus < 0)
			failed = true;
		ev->nr_cpus = nr_cpus > 0 ? nr_cpus : 0;
		ev->leader = base + leader;
		if (leader == i) {
			group_of[i] = g;
			s->groups[g].members = NULL;
			s->groups[g].nr_members = 0;
			g++;
		} else {
			group_of[i] = group_of[leader];
		}
		ev->group = group_of[i];
		if (failed || !attr || !ev->name) {
			/* Undo: free what this call made, keep the session. */
			size_t k;

			for (k = 0; k <= i; k++) {
				free(s->events[base + k].name);
				free(s->events[base + k].pmu);
				free(s->events[base + k].unit);
				free(s->events[base + k].cpus);
			}
			err = attr ? -ENOMEM : -EINVAL;
			goto fail;
		}
	}
	/* Member arrays: sized by a first count, so no partial state. */
	for (g = s->nr_groups; g < s->nr_groups + new_groups; g++) {
		size_t cnt = 0, k = 0;

		for (i = 0; i < n; i++)
			cnt += group_of[i] == g;
		s->groups[g].members = malloc(cnt * sizeof(size_t));
		if (!s->groups[g].members) {
			size_t j;

			for (j = s->nr_groups; j < g; j++)
				free(s->groups[j].members);
			for (j = 0; j < n; j++) {
				free(s->events[base + j].name);
				free(s->events[base + j].pmu);
				free(s->events[base + j].unit);
				free(s->events[base + j].cpus);
			}
			err = -ENOMEM;
			goto fail;
		}
		for (i = 0; i < n; i++)
			if (group_of[i] == g)
				s->groups[g].members[k++] = base + i;
		s->groups[g].nr_members = cnt;
	}
	s->nr_events += n;
	s->nr_groups += new_groups;
	free(group_of);
	return (int)n;
fail:
	free(group_of);
	return pc_err(-err);
}

int perfctr_session__add_events(struct perfctr_session *s, const char *spec,
				struct perfctr_parse_error *perr)
{
	struct perfctr_evlist *list;
	int n;

	if (!s || !spec)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	list = perfctr_evlist__new();
	if (!list)
		return pc_err(ENOMEM);
	n = perfctr_evlist__parse(list, spec, &s->parse_opts, perr);
	if (n >= 0)
		n = perfctr_session__add_evlist(s, list);
	perfctr_evlist__delete(list);
	return n < 0 ? pc_err(-n) : n;
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

static bool cpu_allowed(const struct pc_event *ev, int cpu)
{
	int i;

	if (!ev->cpus || cpu < 0)
		return true;
	for (i = 0; i < ev->nr_cpus; i++)
		if (ev->cpus[i] == cpu)
			return true;
	return false;
}

/* The attr a slot is opened with: the session decides these fields. */
static void open_attr(const struct perfctr_session *s, const struct pc_event *ev,
		      const struct pc_unit *unit, bool leads, bool held,
		      struct perf_event_attr *attr)
{
	bool inherit = (s->flags & PERFCTR_SESSION_INHERIT) ||
		       pc_target_inherits(s->target);

	*attr = ev->attr;
	attr->size = sizeof(*attr);
	attr->read_format = PC_READ_FORMAT;
	/* inherit only means something for a task; the kernel refuses it
	 * with some PMUs in CPU-wide mode. */
	attr->inherit = inherit && unit->tid >= 0;
	if (leads) {
		/* Always opened disabled, even with ENABLE_ON_ATTACH: a
		 * tracepoint filter can only be set on an open event, and
		 * until it is, the event would count everyone's calls.  The
		 * leaders are enabled once every counter is open and
		 * filtered, so that all groups also start together. */
		attr->disabled = 1;
		attr->enable_on_exec = held;
		/* Sets hook: with rotation only the first set starts at exec. */
		if (held && !pc_sets_counts_at_exec(s, (size_t)(ev - s->events)))
			attr->enable_on_exec = 0;
	} else {
		attr->disabled = 0;
		attr->enable_on_exec = 0;
	}
}

/*
 * Open every slot of the session on the units in @units, into the arrays
 * @slots and @group_fds (laid out for @nr_units).  On failure everything
 * opened is closed and -errno returned.
 */
static int open_all(struct perfctr_session *s, struct pc_unit *units,
		    size_t nr_units, struct pc_slot *slots, int *group_fds)
{
	bool held = pc_target_is_held(s->target);
	bool process = perfctr_target__kind(s->target) == PERFCTR_TARGET_PROCESS;
	bool strict = s->flags & PERFCTR_SESSION_STRICT;
	size_t g, u, m, alive = 0;
	int err = 0;

	for (u = 0; u < nr_units; u++) {
		bool gone = false;

		for (g = 0; g < s->nr_groups && !gone; g++) {
			const struct pc_group *grp = &s->groups[g];
			int *gfd = &group_fds[g * nr_units + u];

			for (m = 0; m < grp->nr_members; m++) {
				size_t e = grp->members[m];
				struct pc_event *ev = &s->events[e];
				struct pc_slot *slot = &slots[e * nr_units + u];
				struct perf_event_attr attr;
				int fd;

				if (!cpu_allowed(ev, units[u].cpu)) {
					slot->open_err = ENODEV;
					slot->count.status = PERFCTR_COUNT_NOT_SUPPORTED;
					slot->count.errnum = ENODEV;
					if (strict) {
						err = -ENODEV;
						goto fail;
					}
					continue;
				}
				open_attr(s, ev, &units[u], *gfd < 0, held, &attr);
				fd = sys_perf_event_open(&attr, units[u].tid,
							 units[u].cpu, *gfd, 0);
				if (fd == -ESRCH && process) {
					/* This thread ended between the listing
					 * and now: nothing of it to count. */
					gone = true;
					break;
				}
				if (fd < 0) {
					if (strict || !pc_open_err_is_unsupported(-fd)) {
						err = fd;
						pr_debug("cannot open '%s' on tid %d cpu %d: %s\n",
							 ev->name, (int)units[u].tid,
							 units[u].cpu, strerror(-fd));
						goto fail;
					}
					slot->open_err = -fd;
					slot->count.status = PERFCTR_COUNT_NOT_SUPPORTED;
					slot->count.errnum = -fd;
					continue;
				}
				slot->fd = fd;
				if (*gfd < 0)
					*gfd = fd;
				err = sys_perf_id(fd, &slot->id);
				if (err)
					goto fail;
				if (ev->filter) {
					err = sys_perf_set_filter(fd, ev->filter);
					if (err)
						goto fail;
				}
			}
		}
		if (gone) {
			size_t e;

			units[u].gone = true;
			for (e = 0; e < s->nr_events; e++) {
				struct pc_slot *slot = &slots[e * nr_units + u];

				if (slot->fd >= 0)
					close(slot->fd);
				slot_init(slot);
			}
			for (g = 0; g < s->nr_groups; g++)
				group_fds[g * nr_units + u] = -1;
		} else {
			alive++;
		}
	}
	if (!alive) {
		err = -ESRCH;
		goto fail;
	}
	return 0;
fail:
	for (u = 0; u < s->nr_events * nr_units; u++) {
		if (slots[u].fd >= 0) {
			close(slots[u].fd);
			slots[u].fd = -1;
		}
	}
	return err;
}

static int grow_read_buf(struct perfctr_session *s)
{
	size_t g, words = 0;
	uint64_t *buf;

	for (g = 0; g < s->nr_groups; g++)
		if (3 + 2 * s->groups[g].nr_members > words)
			words = 3 + 2 * s->groups[g].nr_members;
	if (words <= s->read_buf_words)
		return 0;
	buf = realloc(s->read_buf, words * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	s->read_buf = buf;
	s->read_buf_words = words;
	return 0;
}

static void carry(struct perfctr_session *s, size_t e, const struct perfctr_count *c)
{
	if (!s->has_carried[e]) {
		s->carried[e] = *c;
		s->has_carried[e] = true;
	} else {
		perfctr_count__add(&s->carried[e], c);
	}
}

int perfctr_session__attach(struct perfctr_session *s, struct perfctr_target *target)
{
	struct pc_unit *units = NULL;
	struct pc_slot *slots = NULL;
	int *group_fds = NULL;
	size_t nu, i, e, u;
	int err;

	if (!s || !target)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	if (!s->nr_events)
		return pc_err(EINVAL);
	nu = perfctr_target__nr_units(target);
	if (!nu)
		return pc_err(ESRCH);
	err = grow_read_buf(s);
	if (err)
		return pc_err(-err);
	units = calloc(nu, sizeof(*units));
	slots = calloc(s->nr_events * nu, sizeof(*slots));
	group_fds = malloc(s->nr_groups * nu * sizeof(*group_fds));
	if (!units || !slots || !group_fds) {
		err = -ENOMEM;
		goto fail;
	}
	for (u = 0; u < nu; u++)
		perfctr_target__unit(target, u, &units[u].tid, &units[u].cpu);
	for (i = 0; i < s->nr_events * nu; i++)
		slot_init(&slots[i]);
	for (i = 0; i < s->nr_groups * nu; i++)
		group_fds[i] = -1;

	s->target = target;
	err = open_all(s, units, nu, slots, group_fds);
	if (!err && (s->flags & PERFCTR_SESSION_ENABLE_ON_ATTACH) &&
	    !pc_target_is_held(target)) {
		for (i = 0; i < s->nr_groups * nu && !err; i++)
			if (group_fds[i] >= 0)
				err = sys_perf_enable(group_fds[i], false);
		if (err) {
			for (i = 0; i < s->nr_events * nu; i++)
				if (slots[i].fd >= 0)
					close(slots[i].fd);
		}
	}
	if (err) {
		s->target = NULL;
		goto fail;
	}

	/* Committed: the last attach's counts join the carried sums. */
	for (e = 0; e < s->nr_events; e++)
		for (u = 0; u < s->nr_units; u++)
			if (!s->units[u].gone)
				carry(s, e, &pc_slot(s, e, u)->count);
	free(s->units);
	free(s->slots);
	free(s->group_fds);
	s->units = units;
	s->slots = slots;
	s->group_fds = group_fds;
	s->nr_units = nu;
	s->attached = true;
	for (e = 0; e < s->nr_events; e++) {
		struct pc_event *ev = &s->events[e];
		bool leads = s->groups[ev->group].members[0] == e;

		open_attr(s, ev, &units[0], leads, pc_target_is_held(target),
			  &ev->attr);
	}
	/* Sets hook: rotation, overflow signals, notification rings. */
	err = pc_sets_attach(s);
	if (err) {
		close_slots(s);
		s->attached = false;
		s->target = NULL;
		return pc_err(-err);
	}
	return 0;
fail:
	free(units);
	free(slots);
	free(group_fds);
	return pc_err(-err);
}

int pc_session_read_group(struct perfctr_session *s, size_t g, size_t u)
{
	const struct pc_group *grp = &s->groups[g];
	int fd = *pc_group_fd(s, g, u);
	uint64_t *buf = s->read_buf;
	uint64_t nr, enabled, running, i;
	ssize_t n;

	if (fd < 0)
		return 0;
	n = sys_perf_read(fd, buf, (3 + 2 * grp->nr_members) * sizeof(*buf));
	if (n < 0)
		return (int)n;
	/* { nr, time_enabled, time_running, { value, id }[nr] } */
	nr = buf[0];
	if ((size_t)n < 3 * sizeof(*buf) || nr > grp->nr_members ||
	    (size_t)n < (3 + 2 * nr) * sizeof(*buf))
		return -EIO;
	enabled = buf[1];
	running = buf[2];
	for (i = 0; i < nr; i++) {
		uint64_t value = buf[3 + 2 * i], id = buf[4 + 2 * i];
		size_t m;

		for (m = 0; m < grp->nr_members; m++) {
			struct pc_slot *slot = pc_slot(s, grp->members[m], u);

			if (slot->fd < 0 || slot->id != id)
				continue;
			slot->count.value = value;
			slot->count.time_enabled = enabled;
			slot->count.time_running = running;
			slot->count.status = running ? PERFCTR_COUNT_OK :
					     PERFCTR_COUNT_NOT_COUNTED;
			slot->count.errnum = 0;
			break;
		}
	}
	return 0;
}

int perfctr_session__read(struct perfctr_session *s)
{
	size_t g, u;
	int err = 0;

	if (!s)
		return pc_err(EINVAL);
	if (!s->attached)
		return 0;
	for (u = 0; u < s->nr_units; u++) {
		for (g = 0; g < s->nr_groups; g++) {
			int rc = pc_session_read_group(s, g, u);

			/* A CPU that went offline: keep its last values. */
			if (rc && rc != -ENODEV && !err)
				err = rc;
		}
	}
	return err ? pc_err(-err) : 0;
}

/* One ioctl per group leader and unit; the first error is returned, the
 * other leaders are still done. */
static int for_each_leader(struct perfctr_session *s, int (*op)(int fd, bool group),
			   bool group)
{
	size_t i;
	int err = 0;

	for (i = 0; i < s->nr_groups * s->nr_units; i++) {
		int rc;

		if (s->group_fds[i] < 0)
			continue;
		rc = op(s->group_fds[i], group);
		if (rc && !err)
			err = rc;
	}
	return err;
}

int perfctr_session__start(struct perfctr_session *s)
{
	int err;

	if (!s)
		return pc_err(EINVAL);
	if (!s->attached)
		return pc_err(ENOTCONN);
	/* A held command starts counting at its exec (enable_on_exec):
	 * enabling now would count the wait and the exec itself. */
	if (pc_target_is_held(s->target))
		return 0;
	if (pc_sets_rotating(s))	/* sets hook: only the active set */
		err = pc_sets_start(s);
	else
		err = for_each_leader(s, sys_perf_enable, false);
	return err ? pc_err(-err) : 0;
}

int perfctr_session__stop(struct perfctr_session *s)
{
	int err;

	if (!s)
		return pc_err(EINVAL);
	if (!s->attached)
		return pc_err(ENOTCONN);
	if (pc_sets_rotating(s))	/* sets hook: closes the run's slice */
		err = pc_sets_stop(s);
	else
		err = for_each_leader(s, sys_perf_disable, false);
	return err ? pc_err(-err) : 0;
}

static void zero_count(struct perfctr_count *c)
{
	c->value = 0;
	c->time_enabled = 0;
	c->time_running = 0;
}

int perfctr_session__reset(struct perfctr_session *s)
{
	size_t i;
	int err = 0;

	if (!s)
		return pc_err(EINVAL);
	/* RESET with the group flag does reach members of other PMUs. */
	if (s->attached)
		err = for_each_leader(s, sys_perf_reset, true);
	for (i = 0; i < s->nr_events * s->nr_units; i++)
		zero_count(&s->slots[i].count);
	for (i = 0; i < s->nr_events; i++)
		s->has_carried[i] = false;
	return err ? pc_err(-err) : 0;
}

int perfctr_session__detach(struct perfctr_session *s)
{
	int err;

	if (!s)
		return pc_err(EINVAL);
	if (!s->attached)
		return pc_err(ENOTCONN);
	pc_sets_detach(s);		/* sets hook: stop, fold accounting */
	err = perfctr_session__read(s);
	close_slots(s);
	s->attached = false;
	s->target = NULL;
	return err;
}

size_t perfctr_session__nr_events(const struct perfctr_session *s)
{
	return s ? s->nr_events : 0;
}

const char *perfctr_session__event_name(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return NULL;
	return s->events[idx].name;
}

size_t perfctr_session__event_leader(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return (size_t)-1;
	return s->events[idx].leader;
}

const struct perf_event_attr *
perfctr_session__event_attr(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return NULL;
	return &s->events[idx].attr;
}

const char *perfctr_session__event_unit(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return NULL;
	return s->events[idx].unit;
}

double perfctr_session__event_scale(const struct perfctr_session *s, size_t idx)
{
	if (!s || idx >= s->nr_events)
		return 0.0;
	return s->events[idx].scale;
}

size_t perfctr_session__nr_units(const struct perfctr_session *s)
{
	return s ? s->nr_units : 0;
}

int perfctr_session__unit(const struct perfctr_session *s, size_t idx,
			  pid_t *tid, int *cpu)
{
	if (!s || idx >= s->nr_units)
		return pc_err(EINVAL);
	if (tid)
		*tid = s->units[idx].tid;
	if (cpu)
		*cpu = s->units[idx].cpu;
	return 0;
}

int perfctr_session__count(const struct perfctr_session *s, size_t idx,
			   struct perfctr_count *count)
{
	struct perfctr_count sum;
	bool any = false;
	size_t u;

	if (!s || !count || idx >= s->nr_events)
		return pc_err(EINVAL);
	if (s->has_carried[idx]) {
		sum = s->carried[idx];
		any = true;
	}
	for (u = 0; u < s->nr_units; u++) {
		const struct perfctr_count *c = &pc_slot(s, idx, u)->count;

		if (s->units[u].gone)
			continue;
		if (!any) {
			sum = *c;
			any = true;
		} else {
			perfctr_count__add(&sum, c);
		}
	}
	if (!any) {
		memset(&sum, 0, sizeof(sum));
		sum.status = PERFCTR_COUNT_NOT_COUNTED;
	}
	pc_sets_adjust_count(s, idx, &sum, PC_SETS_ALL_UNITS);	/* sets hook */
	*count = sum;
	return 0;
}

int perfctr_session__unit_count(const struct perfctr_session *s, size_t idx,
				size_t unit, struct perfctr_count *count)
{
	if (!s || !count || idx >= s->nr_events || unit >= s->nr_units)
		return pc_err(EINVAL);
	*count = pc_slot(s, idx, unit)->count;
	pc_sets_adjust_count(s, idx, count, unit);		/* sets hook */
	return 0;
}

int perfctr_session__set_filter(struct perfctr_session *s, size_t idx,
				const char *filter)
{
	char *copy = NULL;

	if (!s || idx >= s->nr_events)
		return pc_err(EINVAL);
	if (s->attached)
		return pc_err(EBUSY);
	if (filter) {
		copy = strdup(filter);
		if (!copy)
			return pc_err(ENOMEM);
	}
	free(s->events[idx].filter);
	s->events[idx].filter = copy;
	return 0;
}
