/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Applying sampling controls (struct perfctr_sampling) to open counters
 * after an overflow.  Internal.  Every function here is async-signal-safe:
 * they run in the overflow signal handler.
 */
#ifndef PERFCTR_CORE_SAMPCTL_H
#define PERFCTR_CORE_SAMPCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfctr/notify.h"

/*
 * pc_sampctl_set_period() - give @fd the period @period, counted from now:
 * DISABLE, PERIOD, ENABLE (when @enable; a counter of an inactive set
 * stays off).  PERIOD while disabled restarts the kernel's period count,
 * changed while running the old period would finish first.
 * Return: 0 or the first ioctl's -errno.
 */
int pc_sampctl_set_period(int fd, uint64_t period, bool enable);

/*
 * pc_sampctl_reset() - zero @fd's count and restart its period (@period,
 * 0 for a counting event).  Return: 0 or -errno.
 */
int pc_sampctl_reset(int fd, uint64_t period, bool enable);

#endif /* PERFCTR_CORE_SAMPCTL_H */
