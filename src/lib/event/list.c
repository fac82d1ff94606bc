// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* perfctr_event_list(): every event a machine (or fixture tree) offers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/internal.h"
#include "event/names.h"
#include "event/parse.h"
#include "sys/pmu.h"
#include "sys/tracefs.h"

struct lister {
	perfctr_event_cb_t cb;
	void *ctx;
	bool stopped;		/* the callback asked to stop */
};

static int emit(struct lister *l, enum perfctr_event_kind kind,
		const char *name, const char *desc, const char *pmu,
		const char *topic)
{
	struct perfctr_event_info info = {
		.sz = sizeof(info),
		.kind = kind,
		.name = name,
		.desc = desc ? desc : "",
		.pmu = pmu,
		.topic = topic,
	};

	int ret = l->cb(&info, l->ctx);

	l->stopped = ret != 0;
	return ret;
}

static int list_symbols(struct lister *l, const struct pc_symbol *tab,
			size_t n, enum perfctr_event_kind kind, const char *pmu)
{
	char desc[160];
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		if (tab[i].alias_of)
			snprintf(desc, sizeof(desc), "%s (alias of %s)",
				 tab[i].desc, tab[i].alias_of);
		else
			pc_strlcpy(desc, tab[i].desc, sizeof(desc));
		ret = emit(l, kind, tab[i].name, desc, pmu, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

static int list_cache(struct lister *l, const char *pmu)
{
	char name[64];
	uint64_t config;
	size_t i;
	int ret;

	for (i = 0; pc_cache_name(i, name, sizeof(name), &config); i++) {
		ret = emit(l, PERFCTR_EVENT_CACHE, name, "generic cache event",
			   pmu, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

static int list_syntax(struct lister *l, bool core)
{
	int ret = 0;

	if (core)
		ret = emit(l, PERFCTR_EVENT_RAW, "rNNNN",
			   "raw event: the hexadecimal encoding of the core PMU",
			   NULL, NULL);
	if (!ret)
		ret = emit(l, PERFCTR_EVENT_BREAKPOINT, "mem:ADDR[/LEN][:rwx]",
			   "hardware breakpoint on an address", "breakpoint",
			   NULL);
	return ret;
}

static int pmu_event_desc(char *buf, size_t size, const struct pc_pmu_event *ev)
{
	if (ev->unit[0])
		return snprintf(buf, size, "%s (%s, scale %g)", ev->terms,
				ev->unit, ev->scale);
	return snprintf(buf, size, "%s", ev->terms);
}

static int list_pmu(struct lister *l, const struct pc_pmu *pmu)
{
	char name[320], desc[256];
	size_t i;
	int ret;

	for (i = 0; i < pmu->nr_events; i++) {
		const struct pc_pmu_event *ev = &pmu->events[i];

		snprintf(name, sizeof(name), "%s/%s/", pmu->name, ev->name);
		pmu_event_desc(desc, sizeof(desc), ev);
		ret = emit(l, PERFCTR_EVENT_PMU, name, desc, pmu->name, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

static int list_pmus(struct lister *l, struct pc_parse *p)
{
	const struct pc_dirlist *names = pc_parse_pmu_names(p);
	size_t i;
	int ret;

	for (i = 0; i < names->nr; i++) {
		const char *name = names->names[i];
		struct pc_pmu *pmu = pc_parse_pmu(p, name, strlen(name), NULL);

		/* A PMU that vanished or cannot be read is left out. */
		if (!pmu)
			continue;
		ret = list_pmu(l, pmu);
		if (ret)
			return ret;
	}
	return 0;
}

static int tracepoint_cb(const char *sys, const char *name, void *ctx)
{
	char full[330];

	snprintf(full, sizeof(full), "%s:%s", sys, name);
	return emit(ctx, PERFCTR_EVENT_TRACEPOINT, full, "", "tracepoint", sys);
}

static int list_all(struct lister *l, struct pc_parse *p)
{
	struct pc_pmu *core = pc_parse_core_pmu(p);
	const char *root;
	int ret = 0;

	if (core)
		ret = list_symbols(l, pc_hw_symbols, pc_nr_hw_symbols,
				   PERFCTR_EVENT_HARDWARE, core->name);
	if (!ret)
		ret = list_symbols(l, pc_sw_symbols, pc_nr_sw_symbols,
				   PERFCTR_EVENT_SOFTWARE, "software");
	if (!ret && core)
		ret = list_cache(l, core->name);
	if (!ret)
		ret = list_pmus(l, p);
	if (!ret)
		ret = list_syntax(l, core != NULL);
	root = ret ? NULL : pc_parse_tracefs(p, NULL);
	if (root) {
		ret = pc_tracefs_walk(root, NULL, NULL, tracepoint_cb, l);
		/* An unreadable tracefs lists no tracepoints; not an error. */
		if (!l->stopped && (ret == -EACCES || ret == -ENOENT))
			ret = 0;
	}
	return ret;
}

int perfctr_event_list(const struct perfctr_parse_opts *opts,
		       perfctr_event_cb_t cb, void *ctx)
{
	struct perfctr_parse_error err;
	struct lister l = { .cb = cb, .ctx = ctx };
	struct pc_parse p;
	int ret;

	if (!cb || !pc_opts_valid(opts, sizeof(*opts)))
		return pc_err(EINVAL);
	memset(&p, 0, sizeof(p));
	memset(&err, 0, sizeof(err));
	p.err = &err;
	p.sysfs_root = PC_OPTS_GET(opts, sysfs_root, NULL);
	if (!p.sysfs_root)
		p.sysfs_root = "/sys";
	p.tracefs_opt = PC_OPTS_GET(opts, tracefs_root, NULL);
	ret = list_all(&l, &p);
	pc_parse_release_pmus(&p);
	if (ret < 0 && !l.stopped)
		return pc_err(-ret);
	return ret;
}
