/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Native (vendor) event names through libpfm4, when the build has it:
 * "INST_RETIRED:ANY_P", "inst_retired.any_p", "skl::UOPS_ISSUED:ANY:u".
 * A fallback for names the other tables do not know.
 */
#ifndef PERFCTR_EVENT_NATIVE_H
#define PERFCTR_EVENT_NATIVE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

/* Is libpfm4 compiled in? */
bool pc_native_available(void);

/*
 * Encode [name, name+len) with libpfm4.  On success fills @attr's type,
 * config words, exclude bits and precise_ip.
 * Return: 0, -ENOENT (unknown, or no libpfm4), or -EINVAL with @why set to
 * libpfm's reason (an event it knows with a bad unit mask or attribute).
 */
int pc_native_encode(const char *name, size_t len, struct perf_event_attr *attr,
		     const char **why);

#endif /* PERFCTR_EVENT_NATIVE_H */
