// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The parser's view of sysfs PMUs: loaded once per parse, by name. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "event/parse.h"
#include "event/suggest.h"
#include "sys/pmu.h"

const struct pc_dirlist *pc_parse_pmu_names(struct pc_parse *p)
{
	if (p->pmu_names_state == 0) {
		int ret = pc_pmu_names(p->sysfs_root, &p->pmu_names);

		p->pmu_names_state = ret ? ret : 1;
	}
	return &p->pmu_names;
}

static struct pc_pmu *cached(struct pc_parse *p, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < p->nr_pmus; i++)
		if (strlen(p->pmus[i]->name) == len &&
		    !memcmp(p->pmus[i]->name, name, len))
			return p->pmus[i];
	return NULL;
}

/* "the PMUs here are breakpoint, msr, software, ..." */
static void hint_pmu_names(struct pc_parse *p, const struct pc_dirlist *names)
{
	char buf[200];
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < names->nr && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
				      i ? ", " : "", names->names[i]);
	if (n >= sizeof(buf))
		memcpy(buf + sizeof(buf) - 4, "...", 4);
	if (names->nr)
		pc_parse_hint(p, "the PMUs here are %s", buf);
	else
		pc_parse_hint(p, "no PMU is listed under %s/bus/event_source/devices",
			      p->sysfs_root);
}

static void unknown_pmu(struct pc_parse *p, const char *name, size_t len,
			const char *at)
{
	const struct pc_dirlist *names = pc_parse_pmu_names(p);
	struct pc_suggest sg;
	size_t i;

	pc_parse_fail(p, ENODEV, at, "unknown pmu '%.*s'", (int)len, name);
	pc_suggest_init(&sg, name, len);
	for (i = 0; i < names->nr; i++)
		pc_suggest_offer(&sg, names->names[i]);
	if (sg.best[0])
		pc_parse_hint(p, "did you mean '%s'?", sg.best);
	else
		hint_pmu_names(p, names);
}

struct pc_pmu *pc_parse_pmu(struct pc_parse *p, const char *name, size_t len,
			    const char *at)
{
	struct pc_pmu *pmu = cached(p, name, len), **pmus;
	char buf[256];
	int ret;

	if (pmu)
		return pmu;
	if (len >= sizeof(buf)) {
		if (at)
			unknown_pmu(p, name, len, at);
		return NULL;
	}
	memcpy(buf, name, len);
	buf[len] = '\0';
	ret = pc_pmu_load(p->sysfs_root, buf, &pmu);
	if (ret) {
		if (at && ret == -ENODEV)
			unknown_pmu(p, name, len, at);
		else if (at)
			pc_parse_fail(p, -ret, at, "cannot read pmu '%s': %s",
				      buf, strerror(-ret));
		return NULL;
	}
	pmus = realloc(p->pmus, (p->nr_pmus + 1) * sizeof(*pmus));
	if (!pmus) {
		pc_pmu_free(pmu);
		if (at)
			pc_parse_fail(p, ENOMEM, at, "out of memory");
		return NULL;
	}
	p->pmus = pmus;
	p->pmus[p->nr_pmus++] = pmu;
	return pmu;
}

/*
 * Which PMU is the core one (or that there is none), remembered per sysfs
 * root for the life of the process: each parse of a hardware name asks,
 * and a tool parses several (perfex's default events, one by one when the
 * machine lacks them), each time with the same sysfs walk otherwise.
 * Core PMUs are registered at boot, not by later module loads.
 */
static pthread_mutex_t core_memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool known;
	char root[256];
	char name[64];		/* "" for "no core PMU" */
} core_memo;

static bool core_memo_get(const char *root, char *name, size_t size)
{
	bool hit;

	pthread_mutex_lock(&core_memo_lock);
	hit = core_memo.known && !strcmp(core_memo.root, root);
	if (hit)
		snprintf(name, size, "%s", core_memo.name);
	pthread_mutex_unlock(&core_memo_lock);
	return hit;
}

static void core_memo_set(const char *root, const char *name)
{
	if (strlen(root) >= sizeof(core_memo.root) ||
	    strlen(name) >= sizeof(core_memo.name))
		return;
	pthread_mutex_lock(&core_memo_lock);
	core_memo.known = true;
	strcpy(core_memo.root, root);
	strcpy(core_memo.name, name);
	pthread_mutex_unlock(&core_memo_lock);
}

static struct pc_pmu *find_core_pmu(struct pc_parse *p);

struct pc_pmu *pc_parse_core_pmu(struct pc_parse *p)
{
	char name[64];
	struct pc_pmu *pmu;

	if (core_memo_get(p->sysfs_root, name, sizeof(name))) {
		if (!name[0])
			return NULL;
		pmu = pc_parse_pmu(p, name, strlen(name), NULL);
		if (pmu && pmu->core)
			return pmu;
	}
	pmu = find_core_pmu(p);
	core_memo_set(p->sysfs_root, pmu ? pmu->name : "");
	return pmu;
}

static struct pc_pmu *find_core_pmu(struct pc_parse *p)
{
	static const char *const preferred[] = { "cpu", "cpu_core" };
	const struct pc_dirlist *names;
	struct pc_pmu *pmu;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(preferred); i++) {
		pmu = pc_parse_pmu(p, preferred[i], strlen(preferred[i]), NULL);
		if (pmu)
			return pmu;
	}
#if defined(__x86_64__) || defined(__i386__)
	/* x86 kernels name their core PMU cpu, or cpu_core and cpu_atom on
	 * hybrid parts: on this host's own tree, none of them means no core
	 * PMU (a VM without one), and the walk below (a stat and two access()
	 * calls a PMU: 17 system calls of every start that names a hardware
	 * event on such a VM) is for other architectures and fixture trees. */
	if (!strcmp(p->sysfs_root, "/sys"))
		return pc_parse_pmu(p, "cpu_atom", strlen("cpu_atom"), NULL);
#endif
	/* Otherwise the first PMU that says which CPUs it serves (arm64). */
	names = pc_parse_pmu_names(p);
	for (i = 0; i < names->nr; i++) {
		/* Loading a PMU reads all its format/ and events/ files: only
		 * the candidates are worth it (a hardware name's parse walked
		 * every PMU here, 0.4 ms on a VM with five of them). */
		if (!pc_pmu_may_be_core(p->sysfs_root, names->names[i]))
			continue;
		pmu = pc_parse_pmu(p, names->names[i], strlen(names->names[i]),
				   NULL);
		if (pmu && pmu->core)
			return pmu;
	}
	return NULL;
}

void pc_parse_release_pmus(struct pc_parse *p)
{
	size_t i;

	for (i = 0; i < p->nr_pmus; i++)
		pc_pmu_free(p->pmus[i]);
	free(p->pmus);
	p->pmus = NULL;
	p->nr_pmus = 0;
	if (p->pmu_names_state == 1)
		pc_dirlist_free(&p->pmu_names);
	p->pmu_names_state = 0;
}
