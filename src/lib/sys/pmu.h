/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * PMU discovery from sysfs: <root>/bus/event_source/devices/<pmu>/ with
 * its type, format/ fields, events/ (with .scale and .unit), cpumask or
 * cpus, and caps/.  Reads files only; the root is a parameter so tests can
 * use fixture trees.
 */
#ifndef PERFCTR_SYS_PMU_H
#define PERFCTR_SYS_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/dirlist.h"

/* Which attr word a format field lives in: config, config1, ... */
enum pc_config_word {
	PC_CONFIG,
	PC_CONFIG1,
	PC_CONFIG2,	/* config3 is left out: older uapi headers lack it */
};

/* A format/ field: "config:0-7,21" is word PC_CONFIG, bits 0-7 and 21. */
struct pc_pmu_format {
	char *name;
	enum pc_config_word word;
	uint64_t mask;
	char *text;		/* the file's content, for messages */
};

/* A named event from events/: its terms ("event=0xcd,umask=0x1"). */
struct pc_pmu_event {
	char *name;
	char *terms;
	char *unit;		/* "" when there is no .unit file */
	double scale;		/* 1.0 when there is no .scale file */
};

struct pc_pmu_cap {
	char *name;
	char *value;
};

struct pc_pmu {
	char *name;
	uint32_t type;
	struct pc_pmu_format *formats;
	size_t nr_formats;
	struct pc_pmu_event *events;	/* sorted by name */
	size_t nr_events;
	struct pc_pmu_cap *caps;
	size_t nr_caps;
	char *cpus;		/* cpumask or cpus; NULL: every CPU */
	bool core;		/* a core PMU: "cpu", "cpu_*" or one with cpus */
};

/* The names of every PMU under @sysfs_root, sorted.  Return 0 or -errno. */
int pc_pmu_names(const char *sysfs_root, struct pc_dirlist *names);

/* Load PMU @name.  Return 0, -ENODEV when it does not exist, -errno. */
/* Whether PMU @name can be a core PMU (cpu, cpu_*, or one with a `cpus`
 * file and no `cpumask`), without loading it. */
bool pc_pmu_may_be_core(const char *sysfs_root, const char *name);

int pc_pmu_load(const char *sysfs_root, const char *name, struct pc_pmu **out);
void pc_pmu_free(struct pc_pmu *pmu);

/* The event names of PMU @pmu (events/ without the .scale/.unit/...
 * companions), sorted, without reading their contents. */
int pc_pmu_event_names(const char *sysfs_root, const char *pmu,
		       struct pc_dirlist *names);

/* Does PMU @pmu have an events/@event entry?  (No full load.) */
bool pc_pmu_has_event(const char *sysfs_root, const char *pmu,
		      const char *event);

const struct pc_pmu_format *pc_pmu_find_format(const struct pc_pmu *pmu,
					       const char *name, size_t len);
const struct pc_pmu_event *pc_pmu_find_event(const struct pc_pmu *pmu,
					     const char *name, size_t len);
/* A caps/ value, or NULL. */
const char *pc_pmu_cap(const struct pc_pmu *pmu, const char *name);

/* Parse a format file's text.  Return 0 or -EINVAL. */
int pc_pmu_format_parse(const char *text, enum pc_config_word *word,
			uint64_t *mask);

/*
 * Scatter @value over the set bits of @mask, lowest first (the kernel's
 * format layout).  Return 0, or -ERANGE when @value has more bits.
 */
int pc_pmu_format_encode(uint64_t mask, uint64_t value, uint64_t *bits);

/* Is this a core PMU whose config is an x86 PerfEvtSel (event in bits
 * 0-7 and umask in 8-15 of config)? */
bool pc_pmu_is_x86_evntsel(const struct pc_pmu *pmu);

#endif /* PERFCTR_SYS_PMU_H */
