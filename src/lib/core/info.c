// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr_info(): the seed's sys_perfctr_info() on perf_event_open.
 *
 * What the machine has is read from sysfs and procfs; what it can do is
 * probed by trying: each feature is one short perf_event_open (plus an
 * mmap, a trigger and a poll where delivery is the feature), on the
 * calling thread, user mode only so that the probes work at paranoid
 * level 2 as any user.  No kernel version is ever consulted.
 */
#include <dirent.h>
#include <linux/hw_breakpoint.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "perfctr/info.h"
#include "common/internal.h"
#include "sys/cpulist.h"
#include "sys/pmu.h"
#include "sys/sys.h"

_Static_assert(sizeof(struct perfctr_info_opts) == 32,
	       "perfctr_info_opts is ABI");

/* The generic hardware event id for a PMU of an extended type (hybrid). */
#define EXT_TYPE_SHIFT 32
/* Upper bound of the counter probe: no PMU we know has more. */
#define MAX_PROBE_COUNTERS 64

struct roots {
	const char *sys;
	const char *proc;
	bool probe;
};

static void roots_init(struct roots *r, const struct perfctr_info_opts *opts)
{
	r->sys = PC_OPTS_GET(opts, sysfs_root, NULL);
	r->proc = PC_OPTS_GET(opts, procfs_root, NULL);
	r->probe = !PC_OPTS_GET(opts, no_probe, false);
	if (!r->sys)
		r->sys = "/sys";
	if (!r->proc)
		r->proc = "/proc";
}

static int read_under(const char *root, const char *rel, char *buf, size_t size)
{
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	return pc_read_file(path, buf, size);
}

static int read_u64_under(const char *root, const char *rel, uint64_t *out)
{
	char buf[64];
	int n = read_under(root, rel, buf, sizeof(buf));

	if (n < 0)
		return n;
	return pc_parse_u64(buf, 10, out);
}

static uint32_t read_u32_or(const char *root, const char *rel, uint32_t def)
{
	uint64_t v;

	if (read_u64_under(root, rel, &v) < 0 || v > UINT32_MAX)
		return def;
	return (uint32_t)v;
}

/* ---- CPU lists ("0-3,8,10-11") ---- */

struct cpuset {
	uint32_t *words;
	uint32_t nrwords;
};

/* Highest CPU of @list + 1, or -EINVAL. */
static int cpulist_span(const char *list)
{
	int *cpus, n, span;

	n = pc_parse_cpulist(list, &cpus);
	if (n <= 0)
		return n < 0 ? n : -EINVAL;
	span = cpus[n - 1] + 1;	/* sorted */
	free(cpus);
	return span;
}

/* Add the CPUs of @list that fit in @set; an empty list adds none. */
static int cpulist_add(struct cpuset *set, const char *list)
{
	int *cpus, n, i;

	if (!*list)
		return 0;
	n = pc_parse_cpulist(list, &cpus);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if ((uint64_t)cpus[i] < set->nrwords * 32ull)
			set->words[cpus[i] / 32] |= 1u << (cpus[i] % 32);
	free(cpus);
	return 0;
}

/* ---- PMUs ---- */

struct pmu {
	char name[128];
	uint32_t type;
	uint32_t nr_events;
	uint32_t nr_counters;
	bool core;
	bool has_cpus;
	char cpus[1024];
	/* Bits to set for user-space counter reads (sysfs format/rdpmc). */
	uint64_t rdpmc_config[3];
};

static bool pmu_load(const struct roots *r, const char *name, struct pmu *out)
{
	const struct pc_pmu_format *rdpmc;
	struct pc_pmu *pmu;

	if (pc_pmu_load(r->sys, name, &pmu) < 0)
		return false;
	memset(out, 0, sizeof(*out));
	pc_strlcpy(out->name, name, sizeof(out->name));
	out->type = pmu->type;
	out->nr_events = (uint32_t)pmu->nr_events;
	out->core = pmu->core;
	out->has_cpus = pmu->cpus != NULL;
	if (pmu->cpus)
		pc_strlcpy(out->cpus, pmu->cpus, sizeof(out->cpus));
	/* The attr bits that ask for user-space counter reads (arm64's
	 * config1:1); absent on x86, where rdpmc is allowed by default. */
	rdpmc = pc_pmu_find_format(pmu, "rdpmc", 5);
	if (rdpmc && rdpmc->word <= PC_CONFIG2)
		out->rdpmc_config[rdpmc->word] = rdpmc->mask;
	pc_pmu_free(pmu);
	return true;
}

/* Every PMU in name order; *@out is malloc'ed. */
static int pmus_load(const struct roots *r, struct pmu **out, size_t *nr_out)
{
	struct pc_dirlist names;
	struct pmu *pmus;
	size_t nr = 0, i;
	int ret;

	ret = pc_pmu_names(r->sys, &names);
	if (ret)
		return ret;
	pmus = calloc(names.nr ? names.nr : 1, sizeof(*pmus));
	if (!pmus) {
		pc_dirlist_free(&names);
		return -ENOMEM;
	}
	for (i = 0; i < names.nr; i++)
		if (pmu_load(r, names.names[i], &pmus[nr]))
			nr++;
	pc_dirlist_free(&names);
	*out = pmus;
	*nr_out = nr;
	return 0;
}

static size_t nr_core_pmus(const struct pmu *pmus, size_t nr)
{
	size_t i, n = 0;

	for (i = 0; i < nr; i++)
		n += pmus[i].core;
	return n;
}

/* ---- probes ---- */

static void probe_attr(struct perf_event_attr *attr, uint32_t type,
		       uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
	/* User mode only: allowed at every paranoid level up to 2. */
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

/* A generic hardware event on @pmu: plain on a machine with one core PMU,
 * with the PMU's type in the upper config bits on hybrid machines. */
static void hw_attr(struct perf_event_attr *attr, const struct pmu *pmu,
		    bool hybrid, uint64_t id)
{
	probe_attr(attr, PERF_TYPE_HARDWARE, id);
	if (hybrid && pmu)
		attr->config |= (uint64_t)pmu->type << EXT_TYPE_SHIFT;
}

static int try_open(struct perf_event_attr *attr, int group_fd)
{
	return sys_perf_event_open(attr, 0, -1, group_fd, 0);
}

static bool can_open(struct perf_event_attr *attr)
{
	int fd = try_open(attr, -1);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * The event the counter probe fills a group with: one that only the
 * programmable counters can count, so fixed counters (Intel's
 * instructions and cycles, arm's cycle counter) are not counted.  Branch
 * instructions are never on a fixed counter; where they do not exist,
 * instructions (programmable on arm and AMD).
 */
static bool counter_probe_event(const struct pmu *pmu, bool hybrid,
				uint64_t *id)
{
	static const uint64_t ids[] = {
		PERF_COUNT_HW_BRANCH_INSTRUCTIONS, PERF_COUNT_HW_INSTRUCTIONS,
	};
	struct perf_event_attr attr;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		hw_attr(&attr, pmu, hybrid, ids[i]);
		if (can_open(&attr)) {
			*id = ids[i];
			return true;
		}
	}
	return false;
}

/*
 * How many events fit in one group.  The kernel checks at open that a
 * group can be scheduled, counting only the members that are enabled, so
 * every member is opened enabled; the first that does not fit fails.
 */
static uint32_t probe_counters(const struct pmu *pmu, bool hybrid)
{
	struct perf_event_attr attr;
	int fds[MAX_PROBE_COUNTERS];
	uint32_t n = 0, i;
	uint64_t id;

	if (!counter_probe_event(pmu, hybrid, &id))
		return 0;
	while (n < MAX_PROBE_COUNTERS) {
		int fd;

		hw_attr(&attr, pmu, hybrid, id);
		fd = try_open(&attr, n ? fds[0] : -1);
		if (fd < 0)
			break;
		fds[n++] = fd;
	}
	for (i = n; i-- > 0;)
		close(fds[i]);
	return n;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin(unsigned long n)
{
	volatile unsigned long x = 0;

	while (n--)
		x += n;
}

/*
 * Kernel multiplexing: one event more than the counters, separately
 * opened, must all run part of the time once the kernel has rotated them.
 * Waits at most a few multiplexing intervals.
 */
static bool probe_multiplex(const struct roots *r, const struct pmu *pmu,
			    bool hybrid, uint32_t counters)
{
	struct perf_event_attr attr;
	int fds[MAX_PROBE_COUNTERS + 1];
	uint32_t n = 0, i, interval_ms;
	uint64_t id, deadline;
	bool rotated = false;
	char rel[512];

	if (!counters || counters >= MAX_PROBE_COUNTERS ||
	    !counter_probe_event(pmu, hybrid, &id))
		return false;
	snprintf(rel, sizeof(rel),
		 "bus/event_source/devices/%s/perf_event_mux_interval_ms",
		 pmu->name);
	interval_ms = read_u32_or(r->sys, rel, 4);
	if (interval_ms < 1)
		interval_ms = 1;
	if (interval_ms > 25)
		interval_ms = 25;
	for (i = 0; i <= counters; i++) {
		hw_attr(&attr, pmu, hybrid, id);
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				   PERF_FORMAT_TOTAL_TIME_RUNNING;
		fds[n] = try_open(&attr, -1);
		if (fds[n] < 0)
			goto out;
		n++;
	}
	deadline = now_ns() + 4ull * interval_ms * 1000000ull;
	while (!rotated && now_ns() < deadline) {
		bool all_ran = true, some_waited = false;

		spin(20000);
		for (i = 0; i < n; i++) {
			uint64_t v[3];

			if (sys_perf_read(fds[i], v, sizeof(v)) != sizeof(v))
				goto out;
			if (!v[2])
				all_ran = false;
			if (v[2] < v[1])
				some_waited = true;
		}
		rotated = all_ran && some_waited;
	}
out:
	for (i = n; i-- > 0;)
		close(fds[i]);
	return rotated;
}

/*
 * User-space counter reads: the event's page must say cap_user_rdpmc AND
 * give a counter index; the kernel sets the capability from the attr alone
 * (arm64 needs perf_user_access = 1 as well), so the index is the proof.
 */
static bool probe_rdpmc(const struct pmu *pmu, bool hybrid)
{
	volatile struct perf_event_mmap_page *page;
	struct perf_event_attr attr;
	bool usable = false;
	uint32_t seq;
	int fd, err;

	hw_attr(&attr, pmu, hybrid, PERF_COUNT_HW_CPU_CYCLES);
	if (pmu) {
		attr.config1 |= pmu->rdpmc_config[1];
		attr.config2 |= pmu->rdpmc_config[2];
	}
	fd = try_open(&attr, -1);
	if (fd < 0) {
		hw_attr(&attr, pmu, hybrid, PERF_COUNT_HW_INSTRUCTIONS);
		if (pmu) {
			attr.config1 |= pmu->rdpmc_config[1];
			attr.config2 |= pmu->rdpmc_config[2];
		}
		fd = try_open(&attr, -1);
	}
	if (fd < 0)
		return false;
	page = sys_perf_mmap(fd, 0, false, &err);
	if (page) {
		do {
			seq = __atomic_load_n(&page->lock, __ATOMIC_ACQUIRE);
			usable = page->cap_user_rdpmc && page->index;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
		} while (__atomic_load_n(&page->lock, __ATOMIC_RELAXED) != seq);
		sys_perf_munmap((void *)page, 0);
	}
	close(fd);
	return usable;
}

/*
 * Overflow interrupts and sampling, by trying: an event with a period,
 * woken at each sample, a ring of one data page, then something that makes
 * it overflow.  POLLIN is the overflow notification (the same wakeup that
 * sends an overflow signal); a sample record in the ring is sampling.
 * On a hardware PMU the event is cycles, otherwise page faults.
 */
static void probe_overflow(const struct pmu *core, bool hybrid, bool hw,
			   bool *pcint, bool *sampling)
{
	volatile struct perf_event_mmap_page *page;
	struct perf_event_attr attr;
	struct pollfd pfd;
	uint64_t deadline;
	int fd, err;

	*pcint = *sampling = false;
	if (hw) {
		hw_attr(&attr, core, hybrid, PERF_COUNT_HW_CPU_CYCLES);
		attr.sample_period = 10000;
	} else {
		probe_attr(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
		attr.sample_period = 1;
	}
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	attr.wakeup_events = 1;
	attr.disabled = 1;
	fd = try_open(&attr, -1);
	if (fd < 0)
		return;
	page = sys_perf_mmap(fd, 1, true, &err);
	if (!page) {
		close(fd);
		return;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	sys_perf_enable(fd, false);
	deadline = now_ns() + 50ull * 1000000ull;
	do {
		if (hw) {
			spin(10000);
		} else {
			/* A fresh anonymous page: one user-mode page fault. */
			char *p = mmap(NULL, sys_page_size(), PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p != MAP_FAILED) {
				*(volatile char *)p = 1;
				munmap(p, sys_page_size());
			}
		}
		pfd.revents = 0;
	} while (poll(&pfd, 1, 0) == 0 && now_ns() < deadline);
	sys_perf_disable(fd, false);
	*pcint = pfd.revents & POLLIN;
	*sampling = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE) > 0;
	sys_perf_munmap((void *)page, 1);
	close(fd);
}

static bool probe_breakpoint(void)
{
	static volatile uint64_t watched;
	struct perf_event_attr attr;

	probe_attr(&attr, PERF_TYPE_BREAKPOINT, 0);
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (uint64_t)(uintptr_t)&watched;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.disabled = 1;
	return can_open(&attr);
}

/* The msr PMU's tsc event: "event=0x00" in sysfs events/tsc. */
static bool probe_tsc(const struct pmu *pmus, size_t nr, const struct roots *r)
{
	struct perf_event_attr attr;
	char buf[64];
	uint64_t config;
	size_t i;

	for (i = 0; i < nr; i++)
		if (!strcmp(pmus[i].name, "msr"))
			break;
	if (i == nr)
		return false;
	if (read_under(r->sys, "bus/event_source/devices/msr/events/tsc",
		       buf, sizeof(buf)) < 0 ||
	    strncmp(buf, "event=", 6) || pc_parse_u64(buf + 6, 0, &config) < 0)
		return false;
	probe_attr(&attr, pmus[i].type, config);
	/* The msr PMU refuses every exclude bit, so this probe needs the
	 * permission to count in kernel mode (paranoid < 2, or CAP_PERFMON). */
	attr.exclude_kernel = 0;
	attr.exclude_hv = 0;
	attr.disabled = 1;
	return can_open(&attr);
}

/* ---- tracefs ---- */

/* The tracefs mount point from the mount table; the library never mounts
 * (and never looks under debugfs, where a lookup would automount it). */
static void find_tracefs(const struct roots *r, char *out, size_t size)
{
	char path[4096], line[4096], want[4096];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/self/mounts", r->proc);
	snprintf(want, sizeof(want), "%s/kernel/tracing", r->sys);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char dev[256], dir[2048], type[64];

		if (sscanf(line, "%255s %2047s %63s", dev, dir, type) != 3 ||
		    strcmp(type, "tracefs"))
			continue;
		/* Prefer the standard place; otherwise the first one. */
		if (!out[0] || !strcmp(dir, want))
			pc_strlcpy(out, dir, size);
	}
	fclose(f);
}

/* A tracepoint id can be read: tracepoint events can be opened.  Looks at
 * the first event of the first few subsystems only. */
static bool tracepoints_readable(const char *tracefs)
{
	char path[4096], buf[32];
	struct dirent *sub, *ev;
	DIR *events, *dir;
	bool found = false;
	int tries = 0;

	snprintf(path, sizeof(path), "%s/events", tracefs);
	events = opendir(path);
	if (!events)
		return false;
	while (!found && tries < 8 && (sub = readdir(events))) {
		if (sub->d_name[0] == '.' ||
		    (sub->d_type != DT_DIR && sub->d_type != DT_UNKNOWN))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", tracefs, sub->d_name);
		dir = opendir(path);
		if (!dir)
			continue;
		while ((ev = readdir(dir))) {
			if (ev->d_name[0] == '.' ||
			    (ev->d_type != DT_DIR && ev->d_type != DT_UNKNOWN))
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/%s/id",
				 tracefs, sub->d_name, ev->d_name);
			found = pc_read_file(path, buf, sizeof(buf)) > 0;
			tries++;
			break;
		}
		closedir(dir);
	}
	closedir(events);
	return found;
}

/* ---- CPU model ---- */

static void cpu_model(const struct roots *r, char *out, size_t size)
{
	static const char *const keys[] = {
		"model name", "Processor", "cpu model", "Hardware", "cpu",
	};
	char path[4096], line[512];
	char implementer[64] = "", part[64] = "";
	size_t k;
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/cpuinfo", r->proc);
	f = fopen(path, "re");
	if (!f)
		return;
	for (k = 0; k < ARRAY_SIZE(keys) && !out[0]; k++) {
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			size_t klen = strlen(keys[k]);
			char *v;

			if (strncmp(line, keys[k], klen) ||
			    (line[klen] != ' ' && line[klen] != '\t' && line[klen] != ':'))
				continue;
			v = strchr(line, ':');
			if (!v)
				continue;
			for (v++; *v == ' ' || *v == '\t'; v++)
				;
			v[strcspn(v, "\n")] = '\0';
			if (*v) {
				pc_strlcpy(out, v, size);
				break;
			}
		}
	}
	if (!out[0]) {
		/* arm64 names no model: its implementer and part numbers. */
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			char *v = strchr(line, ':');

			if (!v)
				continue;
			for (v++; *v == ' '; v++)
				;
			v[strcspn(v, "\n")] = '\0';
			if (!strncmp(line, "CPU implementer", 15) && !implementer[0])
				pc_strlcpy(implementer, v, sizeof(implementer));
			else if (!strncmp(line, "CPU part", 8) && !part[0])
				pc_strlcpy(part, v, sizeof(part));
		}
		if (implementer[0])
			snprintf(out, size, "implementer %s part %s", implementer,
				 part[0] ? part : "?");
	}
	fclose(f);
}

/* ---- masks ---- */

static int put_mask(struct perfctr_cpu_mask *mask, const struct cpuset *set)
{
	uint32_t given = mask->nrwords, i;

	for (i = 0; i < given; i++)
		mask->mask[i] = i < set->nrwords ? set->words[i] : 0;
	mask->nrwords = set->nrwords;
	return 0;
}

/* ---- the calls ---- */

/* On hybrid x86 the big cores' PMU holds PERF_TYPE_RAW; elsewhere the
 * first core PMU in name order.  NULL when there is no core PMU. */
static struct pmu *pick_core_pmu(struct pmu *pmus, size_t nr_pmus)
{
	struct pmu *core = NULL;
	size_t i;

	for (i = 0; i < nr_pmus; i++)
		if (pmus[i].core && (!core || pmus[i].type == PERF_TYPE_RAW))
			if (!core || core->type != PERF_TYPE_RAW)
				core = &pmus[i];
	return core;
}

/* Forbidden: possible but offline, and CPUs the core PMU does not
 * serve (the other core type of a hybrid part). */
static int forbidden_cpus(struct cpuset *bad, const struct cpuset *possible,
			  const struct cpuset *online, const struct pmu *core)
{
	struct cpuset served = { .nrwords = online->nrwords };
	size_t i;

	for (i = 0; i < bad->nrwords; i++)
		bad->words[i] = possible->words[i] & ~online->words[i];
	if (!core || !core->has_cpus)
		return 0;
	served.words = calloc(served.nrwords, sizeof(uint32_t));
	if (!served.words)
		return -ENOMEM;
	if (cpulist_add(&served, core->cpus) == 0)
		for (i = 0; i < bad->nrwords; i++)
			bad->words[i] |= online->words[i] & ~served.words[i];
	free(served.words);
	return 0;
}

/* The kernel's perf_event limits, the CPU model and arch, tracefs. */
static void read_system(const struct roots *r, struct perfctr_info *out)
{
	char list[4096];
	struct utsname uts;

	if (read_under(r->proc, "sys/kernel/perf_event_paranoid", list, sizeof(list)) >= 0) {
		char *end;
		long level;

		errno = 0;
		level = strtol(list, &end, 10);
		out->paranoid = (errno || end == list) ? 0 : (int32_t)level;
	} else {
		/* No perf_event support at all. */
		out->paranoid = 0;
	}
	out->max_sample_rate = read_u32_or(r->proc, "sys/kernel/perf_event_max_sample_rate", 0);
	out->mlock_kb = read_u32_or(r->proc, "sys/kernel/perf_event_mlock_kb", 0);
	out->max_stack = read_u32_or(r->proc, "sys/kernel/perf_event_max_stack", 0);
	cpu_model(r, out->cpu_model, sizeof(out->cpu_model));
	if (uname(&uts) == 0)
		pc_strlcpy(out->arch, uts.machine, sizeof(out->arch));
	find_tracefs(r, out->tracefs, sizeof(out->tracefs));
	if (out->tracefs[0] && tracepoints_readable(out->tracefs))
		out->features |= PERFCTR_FEATURE_TRACEPOINTS;
}

/* The features found by opening events: counters, overflow, breakpoints,
 * the TSC. */
static void probe_features(struct roots *r, struct pmu *pmus, size_t nr_pmus,
			   struct pmu *core, bool hybrid,
			   struct perfctr_info *out)
{
	struct perf_event_attr attr;
	bool hw = false, pcint, sampling;

	hw_attr(&attr, core, hybrid, PERF_COUNT_HW_CPU_CYCLES);
	hw = can_open(&attr);
	if (!hw) {
		hw_attr(&attr, core, hybrid, PERF_COUNT_HW_INSTRUCTIONS);
		hw = can_open(&attr);
	}
	if (hw) {
		out->features |= PERFCTR_FEATURE_HW_EVENTS;
		if (core)
			out->nr_hw_counters = probe_counters(core, hybrid);
		if (core && probe_multiplex(r, core, hybrid, out->nr_hw_counters))
			out->features |= PERFCTR_FEATURE_MULTIPLEX;
		if (probe_rdpmc(core, hybrid))
			out->features |= PERFCTR_FEATURE_RDPMC;
	}
	probe_overflow(core, hybrid, hw, &pcint, &sampling);
	if (pcint)
		out->features |= PERFCTR_FEATURE_PCINT;
	if (sampling)
		out->features |= PERFCTR_FEATURE_SAMPLING;
	if (probe_breakpoint())
		out->features |= PERFCTR_FEATURE_BREAKPOINTS;
	if (probe_tsc(pmus, nr_pmus, r))
		out->features |= PERFCTR_FEATURE_TSC;
}

/* An older caller gets the fields it knows; a newer one zeros for the
 * fields we do not. */
static void copy_info(struct perfctr_info *info, const struct perfctr_info *out)
{
	size_t sz = info->sz < sizeof(*out) ? info->sz : sizeof(*out);

	memcpy((char *)info + sizeof(size_t), (const char *)out + sizeof(size_t),
	       sz - sizeof(size_t));
	if (info->sz > sizeof(*out))
		memset((char *)info + sizeof(*out), 0, info->sz - sizeof(*out));
}

int perfctr_info_ext(const struct perfctr_info_opts *opts,
		     struct perfctr_info *info,
		     struct perfctr_cpu_mask *cpus,
		     struct perfctr_cpu_mask *forbidden)
{
	struct cpuset online = { 0 }, bad = { 0 }, possible = { 0 };
	struct perfctr_info out;
	struct pmu *pmus = NULL, *core = NULL;
	size_t nr_pmus = 0, i;
	char list[4096];
	struct roots r;
	int span, err = 0;
	bool hybrid, overflow = false;

	if (!pc_opts_valid(opts, sizeof(*opts)))
		return pc_err(EINVAL);
	if (info && info->sz < offsetof(struct perfctr_info, features) +
			       sizeof(info->features))
		return pc_err(EINVAL);
	roots_init(&r, opts);

	/* The mask size: every possible CPU, so hotplug does not change it. */
	if (read_under(r.sys, "devices/system/cpu/possible", list, sizeof(list)) < 0 &&
	    read_under(r.sys, "devices/system/cpu/present", list, sizeof(list)) < 0)
		snprintf(list, sizeof(list), "0-%d", sys_nr_possible_cpus() - 1);
	span = cpulist_span(list);
	if (span <= 0)
		return pc_err(EINVAL);
	online.nrwords = bad.nrwords = possible.nrwords = ((uint32_t)span + 31) / 32;
	if (cpus && cpus->nrwords < online.nrwords)
		overflow = true;
	if (forbidden && forbidden->nrwords < online.nrwords)
		overflow = true;
	if (overflow) {
		if (cpus)
			cpus->nrwords = online.nrwords;
		if (forbidden)
			forbidden->nrwords = online.nrwords;
		return pc_err(EOVERFLOW);
	}

	online.words = calloc(online.nrwords, sizeof(uint32_t));
	bad.words = calloc(bad.nrwords, sizeof(uint32_t));
	possible.words = calloc(possible.nrwords, sizeof(uint32_t));
	if (!online.words || !bad.words || !possible.words) {
		err = -ENOMEM;
		goto out;
	}
	cpulist_add(&possible, list);
	if (read_under(r.sys, "devices/system/cpu/online", list, sizeof(list)) < 0)
		pc_strlcpy(list, "0", sizeof(list));
	if (cpulist_add(&online, list) < 0) {
		err = -EINVAL;
		goto out;
	}

	memset(&out, 0, sizeof(out));
	out.sz = sizeof(out);
	for (i = 0; i < online.nrwords; i++)
		out.nr_cpus += (uint32_t)__builtin_popcount(online.words[i]);

	err = pmus_load(&r, &pmus, &nr_pmus);
	if (err == -ENOENT)
		err = 0;	/* no perf_event sysfs at all: no PMU */
	if (err)
		goto out;
	out.nr_pmus = (uint32_t)nr_pmus;
	hybrid = nr_core_pmus(pmus, nr_pmus) > 1;
	core = pick_core_pmu(pmus, nr_pmus);
	if (core)
		pc_strlcpy(out.core_pmu, core->name, sizeof(out.core_pmu));

	err = forbidden_cpus(&bad, &possible, &online, core);
	if (err)
		goto out;
	read_system(&r, &out);
	if (r.probe)
		probe_features(&r, pmus, nr_pmus, core, hybrid, &out);

	if (cpus)
		put_mask(cpus, &online);
	if (forbidden)
		put_mask(forbidden, &bad);
	if (info)
		copy_info(info, &out);
out:
	free(possible.words);
	free(pmus);
	free(online.words);
	free(bad.words);
	return err ? pc_err(-err) : 0;
}

int perfctr_info(struct perfctr_info *info, struct perfctr_cpu_mask *cpus,
		 struct perfctr_cpu_mask *forbidden)
{
	return perfctr_info_ext(NULL, info, cpus, forbidden);
}

int perfctr_info_pmus(const struct perfctr_info_opts *opts,
		      perfctr_pmu_cb_t cb, void *ctx)
{
	struct perfctr_pmu_desc desc;
	struct pmu *pmus = NULL;
	size_t nr = 0, i;
	struct roots r;
	bool hybrid;
	int ret;

	if (!cb || !pc_opts_valid(opts, sizeof(*opts)))
		return pc_err(EINVAL);
	roots_init(&r, opts);
	ret = pmus_load(&r, &pmus, &nr);
	if (ret)
		return pc_err(-ret);
	hybrid = nr_core_pmus(pmus, nr) > 1;
	for (i = 0; i < nr && !ret; i++) {
		memset(&desc, 0, sizeof(desc));
		desc.sz = sizeof(desc);
		desc.name = pmus[i].name;
		desc.type = pmus[i].type;
		desc.nr_events = pmus[i].nr_events;
		desc.core = pmus[i].core;
		desc.cpus = pmus[i].has_cpus ? pmus[i].cpus : NULL;
		if (r.probe && pmus[i].core)
			desc.nr_counters = probe_counters(&pmus[i], hybrid);
		ret = cb(&desc, ctx);
	}
	free(pmus);
	return ret;
}

/* ---- topology ---- */

/* One topology/ id of @cpu, or -1 when sysfs has none (or -1 itself). */
static int32_t topology_id(const char *root, int cpu, const char *file)
{
	char rel[96], buf[32];
	long long v;
	char *end;

	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/%s",
		 cpu, file);
	if (read_under(root, rel, buf, sizeof(buf)) <= 0)
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || *end || v < 0 || v > INT32_MAX)
		return -1;
	return (int32_t)v;
}

static void cpu_topology(const char *root, int cpu,
			 struct perfctr_cpu_topology *t)
{
	int32_t socket = topology_id(root, cpu, "physical_package_id");
	int32_t die = topology_id(root, cpu, "die_id");
	int32_t core = topology_id(root, cpu, "core_id");

	memset(t, 0, sizeof(*t));
	t->sz = sizeof(*t);
	t->cpu = cpu;
	t->socket = socket < 0 ? 0 : socket;
	t->die = die < 0 ? 0 : die;
	t->core = core < 0 ? cpu : core;
}

int perfctr_info_cpu_topology(const struct perfctr_info_opts *opts, int cpu,
			      struct perfctr_cpu_topology *topo)
{
	struct perfctr_cpu_topology out;
	struct roots r;
	size_t sz;

	if (cpu < 0 || !topo || !pc_opts_valid(opts, sizeof(*opts)) ||
	    topo->sz < offsetof(struct perfctr_cpu_topology, core) +
		       sizeof(topo->core))
		return pc_err(EINVAL);
	roots_init(&r, opts);
	cpu_topology(r.sys, cpu, &out);
	sz = topo->sz < sizeof(out) ? topo->sz : sizeof(out);
	memcpy((char *)topo + sizeof(topo->sz), (char *)&out + sizeof(out.sz),
	       sz - sizeof(out.sz));
	if (topo->sz > sizeof(out))
		memset((char *)topo + sizeof(out), 0, topo->sz - sizeof(out));
	return 0;
}

struct grouped_cpu {
	struct perfctr_cpu_topology t;
	size_t index;		/* in the caller's @cpus */
	/* qsort() passes no context: each element carries the aggregation. */
	enum perfctr_cpu_aggr aggr;
};

/* By the ids the aggregation keeps, then by CPU: a group's members are
 * contiguous and the groups in perf's order. */
static int cmp_grouped(const void *a, const void *b)
{
	const struct perfctr_cpu_topology *x = &((const struct grouped_cpu *)a)->t;
	const struct perfctr_cpu_topology *y = &((const struct grouped_cpu *)b)->t;
	enum perfctr_cpu_aggr aggr = ((const struct grouped_cpu *)a)->aggr;

	if (x->socket != y->socket)
		return x->socket < y->socket ? -1 : 1;
	if (aggr >= PERFCTR_CPU_AGGR_DIE && x->die != y->die)
		return x->die < y->die ? -1 : 1;
	if (aggr >= PERFCTR_CPU_AGGR_CORE && x->core != y->core)
		return x->core < y->core ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static bool same_group(const struct perfctr_cpu_topology *x,
		       const struct perfctr_cpu_topology *y,
		       enum perfctr_cpu_aggr aggr)
{
	return x->socket == y->socket &&
	       (aggr < PERFCTR_CPU_AGGR_DIE || x->die == y->die) &&
	       (aggr < PERFCTR_CPU_AGGR_CORE || x->core == y->core);
}

int perfctr_info_cpu_groups(const struct perfctr_info_opts *opts,
			    enum perfctr_cpu_aggr aggr, const int *cpus,
			    size_t nr, size_t *group)
{
	struct grouped_cpu *all;
	struct roots r;
	size_t i, n = 0;

	if (aggr < PERFCTR_CPU_AGGR_SOCKET || aggr > PERFCTR_CPU_AGGR_CORE ||
	    !pc_opts_valid(opts, sizeof(*opts)) || (nr && (!cpus || !group)))
		return pc_err(EINVAL);
	if (!nr)
		return 0;
	if (nr > INT32_MAX)
		return pc_err(EINVAL);
	for (i = 0; i < nr; i++)
		if (cpus[i] < 0)
			return pc_err(EINVAL);
	all = calloc(nr, sizeof(*all));
	if (!all)
		return pc_err(ENOMEM);
	roots_init(&r, opts);
	for (i = 0; i < nr; i++) {
		cpu_topology(r.sys, cpus[i], &all[i].t);
		all[i].index = i;
		all[i].aggr = aggr;
	}
	qsort(all, nr, sizeof(*all), cmp_grouped);
	for (i = 0; i < nr; i++) {
		if (i && !same_group(&all[i - 1].t, &all[i].t, aggr))
			n++;
		group[all[i].index] = n;
	}
	free(all);
	return (int)n + 1;
}
