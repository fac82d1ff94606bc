/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Raw hardware control words (the seeds' evntsel[]) validated and turned
 * into perf_event_attrs (internal).  Pure: the architecture is a
 * parameter so every rule is unit-tested on any host.
 */
#ifndef PERFCTR_CORE_EVNTSEL_H
#define PERFCTR_CORE_EVNTSEL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

enum pc_evntsel_arch {
	PC_EVNTSEL_NONE,	/* no raw words on this architecture */
	PC_EVNTSEL_X86,		/* P6-style PerfEvtSel */
	PC_EVNTSEL_ARM64,	/* PMEVTYPER<n>_EL0 */
};

/* The architecture this library was built for. */
enum pc_evntsel_arch pc_evntsel_host_arch(void);

/*
 * pc_evntsel_to_attr() - validate @evntsel for an a-mode (@imode false)
 * or i-mode counter and fill @attr (type PERF_TYPE_RAW, config, exclude
 * bits; everything else zero).
 * Return: 0, -EINVAL with the reason in @why, or -EOPNOTSUPP for
 * PC_EVNTSEL_NONE.
 */
int pc_evntsel_to_attr(enum pc_evntsel_arch arch, unsigned int evntsel,
		       bool imode, struct perf_event_attr *attr,
		       char *why, size_t why_size);

#endif /* PERFCTR_CORE_EVNTSEL_H */
