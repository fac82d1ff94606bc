/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — perfctr_info(): what this machine can count, the modern
 * form of the original perfctr driver's sys_perfctr_info().  Every
 * feature is probed by trying it (a short perf_event_open), never guessed
 * from a kernel version.
 *
 * Thread safety: every function here is thread-safe.
 */
#ifndef PERFCTR_INFO_H
#define PERFCTR_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Feature bits of perfctr_info.features. */
#define PERFCTR_FEATURE_RDPMC		(1u << 0) /* user-space counter reads */
#define PERFCTR_FEATURE_PCINT		(1u << 1) /* overflow interrupts (signals) */
#define PERFCTR_FEATURE_SAMPLING	(1u << 2) /* ring-buffer sampling */
#define PERFCTR_FEATURE_MULTIPLEX	(1u << 3) /* hardware multiplexing exists */
#define PERFCTR_FEATURE_HW_EVENTS	(1u << 4) /* a hardware PMU counts cycles */
#define PERFCTR_FEATURE_TRACEPOINTS	(1u << 5) /* tracefs readable */
#define PERFCTR_FEATURE_BREAKPOINTS	(1u << 6)
#define PERFCTR_FEATURE_TSC		(1u << 7) /* per-thread virtual TSC (msr/tsc) */

struct perfctr_info {
	size_t sz;
	uint32_t features;		/* PERFCTR_FEATURE_* */
	int32_t paranoid;		/* perf_event_paranoid */
	uint32_t nr_cpus;		/* online CPUs */
	uint32_t nr_pmus;		/* sysfs PMUs */
	uint32_t nr_hw_counters;	/* programmable counters of the core PMU, 0 if none */
	uint32_t max_sample_rate;	/* perf_event_max_sample_rate */
	uint32_t mlock_kb;		/* perf_event_mlock_kb */
	uint32_t max_stack;		/* perf_event_max_stack */
	char cpu_model[128];		/* /proc/cpuinfo "model name" or equivalent */
	char arch[32];			/* uname machine */
	char core_pmu[64];		/* "cpu", "armv8_pmuv3_0", or "" */
	char tracefs[128];		/* mount point, or "" when not mounted */
	size_t :0;
};

/* The original driver's perfctr_cpu_mask: a bitmap of 32-bit words. */
struct perfctr_cpu_mask {
	uint32_t nrwords;
	uint32_t mask[];
};

/*
 * Where perfctr_info_ext() and perfctr_info_pmus() look, and how much they
 * try.  NULL opts: the machine's /sys and /proc, every probe.
 */
struct perfctr_info_opts {
	size_t sz;
	/* Root under which bus/event_source/devices/ and devices/system/cpu/
	 * are read; default "/sys". */
	const char *sysfs_root;
	/* Root under which sys/kernel/perf_event_*, cpuinfo and self/mounts
	 * are read; default "/proc". */
	const char *procfs_root;
	/* Do not call perf_event_open: features and counter counts are left
	 * 0 (for fixture trees, whose PMUs are not the running kernel's). */
	bool no_probe;
	size_t :0;
};

/**
 * perfctr_info() - describe the machine.
 * @info:      filled when non-NULL (sz set by the caller).
 * @cpus:      when non-NULL, the online CPUs, with the original driver's
 *             protocol: the caller sets nrwords to the words allocated;
 *             the needed number is written back; if it is larger,
 *             -EOVERFLOW and no mask.
 * @forbidden: same protocol: CPUs on which events cannot count (offline, or
 *             without the core PMU on hybrid parts).
 *
 * The needed size is the same for both masks: enough words for every
 * possible CPU (sysfs devices/system/cpu/possible), so it does not change
 * with hotplug.  A caller may ask with nrwords = 0 first, then allocate.
 * On -EOVERFLOW @info and the masks are left as they were; words beyond
 * the needed number are zeroed.
 *
 * Features are probed with short perf_event_opens on the calling thread
 * (each a few microseconds; with a hardware PMU the multiplexing probe
 * waits up to a few multiplexing intervals).  Overflow interrupts and
 * sampling are probed on a hardware event when the machine has one,
 * otherwise on a software event.
 * Return: 0 or a negative errno.
 */
PERFCTR_API int perfctr_info(struct perfctr_info *info,
			     struct perfctr_cpu_mask *cpus,
			     struct perfctr_cpu_mask *forbidden);

/**
 * perfctr_info_ext() - perfctr_info() with explicit roots and probing.
 * @opts: NULL for the machine's (then the same as perfctr_info()).
 * Return: 0, -EOVERFLOW as perfctr_info(), -EINVAL for a bad @opts or
 * @info->sz, or another negative errno.
 */
PERFCTR_API int perfctr_info_ext(const struct perfctr_info_opts *opts,
				 struct perfctr_info *info,
				 struct perfctr_cpu_mask *cpus,
				 struct perfctr_cpu_mask *forbidden);

/* One PMU of the machine, as perfctr_info_pmus() reports it.  The strings
 * live until the callback returns. */
struct perfctr_pmu_desc {
	size_t sz;
	const char *name;	/* sysfs name: "cpu", "software", "msr", ... */
	uint32_t type;		/* perf_event_attr.type */
	/* Programmable counters that fit in one group, probed (core PMUs
	 * only, 0 otherwise or when probing is off). */
	uint32_t nr_counters;
	uint32_t nr_events;	/* named events in sysfs events/ */
	bool core;		/* serves the generic hardware events */
	/* The PMU's CPUs from sysfs "cpus" (core PMUs of hybrid parts) or
	 * "cpumask" (uncore-like PMUs), or NULL when it counts everywhere. */
	const char *cpus;
};

typedef int (*perfctr_pmu_cb_t)(const struct perfctr_pmu_desc *pmu, void *ctx);

/**
 * perfctr_info_pmus() - every PMU under sysfs bus/event_source/devices, in
 * name order.
 * @opts: roots and probing, NULL for the machine's.
 * @cb:   called once per PMU; a non-zero return stops the walk and is
 *        returned.
 * Return: 0, the callback's value, or a negative errno (-ENOENT when the
 * sysfs directory is missing).
 */
PERFCTR_API int perfctr_info_pmus(const struct perfctr_info_opts *opts,
				  perfctr_pmu_cb_t cb, void *ctx);

/* Where a CPU sits: its socket, die and core, as sysfs
 * devices/system/cpu/cpuN/topology/ gives them. */
struct perfctr_cpu_topology {
	size_t sz;
	int32_t cpu;
	int32_t socket;		/* physical_package_id; 0 when unknown */
	int32_t die;		/* die_id within the socket; 0 when unknown */
	int32_t core;		/* core_id within the die; the CPU's own
				 * number when unknown */
	size_t :0;
};

/**
 * perfctr_info_cpu_topology() - the socket, die and core of one CPU.
 * @opts: its sysfs_root is read (NULL: /sys); probing plays no part.
 * @cpu:  the CPU number.
 * @topo: filled (its sz set by the caller; an older, smaller struct
 *        receives the fields it has).
 *
 * A missing or unreadable file (an older kernel without die_id, a CPU
 * whose topology/ directory is absent, a negative id) gives the value perf
 * uses in its place: socket 0, die 0, core = @cpu.  So a CPU is never
 * refused for its topology; the ids are those sysfs has, not renumbered.
 * Thread-safe.
 * Return: 0, or -EINVAL for a negative @cpu, NULL @topo, a bad @opts or
 * @topo->sz.
 */
PERFCTR_API int perfctr_info_cpu_topology(const struct perfctr_info_opts *opts,
					  int cpu,
					  struct perfctr_cpu_topology *topo);

/* How perfctr_info_cpu_groups() groups CPUs. */
enum perfctr_cpu_aggr {
	PERFCTR_CPU_AGGR_SOCKET = 1,	/* one group per socket */
	PERFCTR_CPU_AGGR_DIE,		/* per die of a socket */
	PERFCTR_CPU_AGGR_CORE,		/* per core of a die (its SMT threads) */
};

/**
 * perfctr_info_cpu_groups() - group CPUs by socket, die or core, as
 * perf stat --per-socket, --per-die and --per-core do.
 * @opts:  its sysfs_root is read (NULL: /sys).
 * @aggr:  PERFCTR_CPU_AGGR_*.
 * @cpus:  @nr CPU numbers, in any order.
 * @group: receives @nr group indices: @group[i] is the group of @cpus[i].
 *         Groups are numbered from 0 in the order of their (socket, die,
 *         core) ids, the order in which perf prints them; a group's ids
 *         are those of any of its CPUs (perfctr_info_cpu_topology()).
 *
 * Thread-safe.
 * Return: the number of groups (0 when @nr is 0), or -EINVAL (a bad
 * @aggr or @opts, a negative CPU, NULL arrays with @nr > 0), -ENOMEM.
 */
PERFCTR_API int perfctr_info_cpu_groups(const struct perfctr_info_opts *opts,
					enum perfctr_cpu_aggr aggr,
					const int *cpus, size_t nr,
					size_t *group);

/* What the access broker (perfctrd(8)) grants the calling user. */
struct perfctr_broker_info {
	size_t sz;
	/* 0: a broker answers and a rule names this user; -EACCES: it
	 * answers, no rule does; -ECANCELED: PERFCTR_NO_BROKER is set;
	 * -ENOENT: no socket; -ECONNREFUSED: nobody listens on it. */
	int32_t status;
	char socket[108];	/* the socket asked */
	char rule[64];		/* the rule's name, "" without one */
	/* What the rule allows, lines of "key values" (events, targets,
	 * kernel, sampling, max_fds); "" without a rule. */
	char policy[2048];
	size_t :0;
};

/**
 * perfctr_broker_info() - ask the access broker what it allows this user.
 * @info: filled (its sz set by the caller); @info->status says whether a
 *        broker answered and whether a rule names the caller.
 *
 * When the kernel refuses an open with EACCES or EPERM, the library asks
 * this broker to open the event (unless PERFCTR_NO_BROKER is set or the
 * session has PERFCTR_SESSION_NO_BROKER).  The socket is
 * $PERFCTR_BROKER_SOCKET, else /run/perfctr/perfctrd.sock.
 * Thread-safe.
 * Return: 0 (whatever the broker's answer), -EINVAL for NULL or a bad
 * @info->sz.
 */
PERFCTR_API int perfctr_broker_info(struct perfctr_broker_info *info);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_INFO_H */
