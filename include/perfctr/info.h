/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libperfctr — perfctr_info(): what this machine can count, the modern
 * form of the seed's sys_perfctr_info().  Every feature is probed by
 * trying it (a short perf_event_open), never guessed from a kernel version.
 *
 * Thread safety: perfctr_info() is thread-safe.
 */
#ifndef PERFCTR_INFO_H
#define PERFCTR_INFO_H

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

/* The seed's perfctr_cpu_mask: a bitmap of 32-bit words. */
struct perfctr_cpu_mask {
	uint32_t nrwords;
	uint32_t mask[];
};

/**
 * perfctr_info() - describe the machine.
 * @info:      filled when non-NULL (sz set by the caller).
 * @cpus:      when non-NULL, the online CPUs, with the seed's protocol: the
 *             caller sets nrwords to the words allocated; the needed number
 *             is written back; if it is larger, -EOVERFLOW and no mask.
 * @forbidden: same protocol: CPUs on which events cannot count (offline, or
 *             without the core PMU on hybrid parts).
 * Return: 0 or a negative errno.
 */
PERFCTR_API int perfctr_info(struct perfctr_info *info,
			     struct perfctr_cpu_mask *cpus,
			     struct perfctr_cpu_mask *forbidden);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_INFO_H */
