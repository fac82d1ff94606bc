/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The session's hooks into sets, rotation and notifications (set.c,
 * set-switch.c, set-read.c).  The session calls these at the points of
 * its life cycle; each is a no-op for a session that uses none of it.
 * Not installed.
 */
#ifndef PERFCTR_SET_INTERNAL_H
#define PERFCTR_SET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "perfctr/count.h"

struct perfctr_session;
struct pc_sets;

/* Free everything sets hold (delete). */
void pc_sets_free(struct pc_sets *sets);

/* After the counters are open (attach): signals, rings, the rotor.
 * 0 or -errno; on failure the hook has undone its own part. */
int pc_sets_attach(struct perfctr_session *s);

/* Before the counters are closed (detach): stop, fold the accounting. */
void pc_sets_detach(struct perfctr_session *s);

/* False for the leader @event of a set that must not count from a command's
 * exec (with rotation only the first set counts at first). */
bool pc_sets_counts_at_exec(const struct perfctr_session *s, size_t event);

/* True when start and stop belong to the rotation. */
bool pc_sets_rotating(const struct perfctr_session *s);
int pc_sets_start(struct perfctr_session *s);
int pc_sets_stop(struct perfctr_session *s);

/* Give a rotated event's count the whole time as time_enabled, so that
 * scaling and "counted together" checks see the truth (count, unit_count). */
void pc_sets_adjust_count(const struct perfctr_session *s, size_t idx,
			  struct perfctr_count *count, size_t unit);
#define PC_SETS_ALL_UNITS ((size_t)-1)

#endif /* PERFCTR_SET_INTERNAL_H */
