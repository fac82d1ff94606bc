// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Tracepoint events "sys:name", with fnmatch wildcards in either part. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/internal.h"
#include "event/parse.h"
#include "event/suggest.h"
#include "sys/broker.h"
#include "sys/tracefs.h"

const char *pc_parse_tracefs(struct pc_parse *p, const char *at)
{
	int ret;

	if (p->tracefs_state == 0) {
		ret = pc_tracefs_root(p->tracefs_opt, p->tracefs,
				      sizeof(p->tracefs));
		p->tracefs_state = ret ? ret : 1;
	}
	if (p->tracefs_state == 1)
		return p->tracefs;
	if (!at)
		return NULL;
	if (p->tracefs_state == -EACCES) {
		pc_parse_fail(p, EACCES, at, "cannot read tracefs%s%s",
			      p->tracefs_opt ? " at " : "",
			      p->tracefs_opt ? p->tracefs_opt : "");
		pc_parse_hint(p, "tracefs is readable by root only here: run "
			      "as root, or mount it with a wider mode "
			      "(mount option mode=755)");
	} else {
		pc_parse_fail(p, ENOTDIR, at, "tracefs is not mounted%s%s",
			      p->tracefs_opt ? " at " : "",
			      p->tracefs_opt ? p->tracefs_opt : "");
		pc_parse_hint(p, "%s", PC_TRACEFS_MOUNT_HINT);
	}
	return NULL;
}

static int offer_one(const char *sys, const char *name, void *ctx)
{
	struct pc_suggest *sg = ctx;
	char full[330];

	snprintf(full, sizeof(full), "%s:%s", sys, name);
	pc_suggest_offer(sg, full);
	pc_suggest_offer_as(sg, name, full);
	return 0;
}

void pc_suggest_tracepoints(struct pc_parse *p, struct pc_suggest *sg)
{
	const char *root = pc_parse_tracefs(p, NULL);

	if (root)
		pc_tracefs_walk(root, NULL, NULL, offer_one, sg);
}

struct tp_walk {
	struct pc_parse *p;
	const char *root;
	const char *at;
	const char *mods;
	const char *mods_end;
	int added;
};

static int add_tracepoint(struct tp_walk *w, const char *sys, const char *name)
{
	struct pc_parse *p = w->p;
	struct pc_event *ev;
	char full[330];
	uint64_t id;
	int ret;

	ret = pc_tracefs_id(w->root, sys, name, &id);
	if (ret == -EACCES && !strcmp(w->root, PC_TRACEFS_BROKER) &&
	    pc_broker_refusal()[0]) {
		ret = pc_parse_fail(p, EACCES, w->at,
				    "cannot read the id of tracepoint '%s:%s': "
				    "the access broker refused it: %s", sys,
				    name, pc_broker_refusal());
		pc_parse_hint(p, PC_BROKER_POLICY_HINT);
		return ret;
	}
	if (ret == -EACCES)
		return pc_parse_fail(p, EACCES, w->at,
				     "cannot read the id of tracepoint '%s:%s'",
				     sys, name);
	if (ret)
		return ret;
	ev = pc_parse_new_event(p);
	if (!ev)
		return -ENOMEM;
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = id;
	ev->pmu = "tracepoint";
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	pc_event_set_name(ev, full, strlen(full), w->mods,
			  w->mods ? (size_t)(w->mods_end - w->mods) : 0);
	ret = pc_parse_mods(p, ev, w->mods, w->mods_end);
	if (ret)
		return ret;
	w->added++;
	return 0;
}

static int walk_cb(const char *sys, const char *name, void *ctx)
{
	int ret = add_tracepoint(ctx, sys, name);

	/* Directories without an id (e.g. "enable" is a file, but ftrace
	 * internals can be directories) are not tracepoints: skip them. */
	return ret == -ENOENT || ret == -EINVAL ? 0 : ret;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int unknown_tracepoint(struct pc_parse *p, const char *at,
			      const char *sys, const char *name)
{
	struct pc_suggest sg;
	char full[330];

	snprintf(full, sizeof(full), "%s:%s", sys, name);
	pc_parse_fail(p, ENOENT, at, "unknown tracepoint '%s'", full);
	pc_suggest_init(&sg, full, strlen(full));
	pc_suggest_tracepoints(p, &sg);
	if (sg.best[0])
		pc_parse_hint(p, "did you mean '%s'?", sg.best);
	return -ENOENT;
}

int pc_parse_tracepoint(struct pc_parse *p, const char *start,
			const char *end, const char *mods, const char *mods_end)
{
	const char *colon = memchr(start, ':', (size_t)(end - start));
	struct tp_walk w = { .p = p, .at = start, .mods = mods,
			     .mods_end = mods_end };
	char sys[128], name[192];
	int ret;

	if (!colon || colon == start || colon + 1 == end)
		return pc_parse_fail(p, EINVAL, start,
				     "tracepoint '%.*s' is not 'subsystem:name'",
				     (int)(end - start), start);
	if ((size_t)(colon - start) >= sizeof(sys) ||
	    (size_t)(end - colon - 1) >= sizeof(name))
		return pc_parse_fail(p, EINVAL, start, "tracepoint name too long");
	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - start), start);
	snprintf(name, sizeof(name), "%.*s", (int)(end - colon - 1), colon + 1);
	w.root = pc_parse_tracefs(p, start);
	if (!w.root)
		return -p->err->errnum;
	if (!has_glob(sys) && !has_glob(name)) {
		ret = add_tracepoint(&w, sys, name);
		if (ret == -ENOENT || ret == -EINVAL)
			return unknown_tracepoint(p, start, sys, name);
		return ret < 0 ? ret : w.added;
	}
	ret = pc_tracefs_walk(w.root, sys, name, walk_cb, &w);
	if (ret < 0)
		return p->err->errnum ? -p->err->errnum :
		       pc_parse_fail(p, -ret, start, "cannot read tracefs: %s",
				     strerror(-ret));
	if (!w.added)
		return pc_parse_fail(p, ENOENT, start,
				     "no tracepoint matches '%s:%s'", sys, name);
	return w.added;
}
