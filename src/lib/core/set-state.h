/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The state of event sets shared by set.c (definitions and their
 * validation), set-switch.c (the switch policies at attach: rotation,
 * overflow switching, period control, the timeout clock) and set-read.c
 * (what the sets counted).  Not installed.
 */
#ifndef PERFCTR_SET_STATE_H
#define PERFCTR_SET_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/counters.h"
#include "core/overflow.h"
#include "core/rotate.h"
#include "perfctr/notify.h"
#include "perfctr/set.h"

struct perfctr_session;
struct pc_engine;
struct pc_notifier;

/* Counters with an overflow role in one group (pc_ovf's limit). */
#define MAX_WATCHED PC_OVF_MAX_COUNTERS
/* Members of a group read on the stack of a signal handler. */
#define MAX_MEMBERS PC_COUNTERS_MAX_MEMBERS

struct set_def {
	uint16_t id;
	unsigned int flags;
	uint64_t timeout_ns;
	/* Accounting of earlier attaches. */
	struct pc_rotor_set_stats carried;
};

struct event_ctl {
	uint16_t set;
	uint64_t switch_after;		/* 0: not a switch counter */
	bool notify;
	bool has_sampling;
	struct perfctr_sampling sampling;
	/* Counters reset at its overflows: reset_mask's and those of
	 * perfctr_session__notify_reset(), any index. */
	size_t *reset;
	size_t nr_reset;
	uint64_t rng;
	uint64_t period;		/* the sample_period asked for */
	struct perfctr_slices carried;	/* slices of earlier attaches */
	bool carried_last_ovfl;		/* overflowed in its set's last run */
};

/* One overflow watch: the watched counters of one group on one unit. */
struct watch {
	struct pc_sets *sets;
	struct pc_ovf *ovf;
	size_t group, unit;
	size_t nr;
	size_t events[MAX_WATCHED];	/* counter i of the pc_ovf */
	uint64_t seen[MAX_WATCHED];	/* overflows already handled */
};

struct clock_watch {
	struct pc_sets *sets;
	struct pc_ovf *ovf;
	struct pc_engine *eng;		/* the clock's, which owns fd */
	int fd;
	uint64_t period;		/* 0: off for the active set */
};

struct pc_sets {
	struct set_def *defs;		/* sorted by id; defs[0].id == 0 */
	size_t nr_defs;
	struct event_ctl *ev;		/* per session event, grown lazily */
	size_t nr_ev;
	int signo;
	pid_t owner_tid;
	struct perfctr_notify *queue;
	struct pc_notifier *notifier;	/* with the first notifying event */
	uint64_t carried_missed;

	/* While attached. */
	struct pc_counters view;	/* the engine's counters */
	struct pc_rotor *rotor;
	size_t *rotor_set;		/* def index -> rotor set index */
	struct watch *watches;
	size_t nr_watches;
	struct clock_watch clock;
	bool rotated;			/* the last attach rotated */
	pid_t target_pid;
};

/* Grow the per-event array to the session's events (new ones: set 0).
 * Return: 0, -ENOMEM. */
int pc_sets_sync_events(struct perfctr_session *s);

/* The set of session event @e (0 for one never put in a set). */
uint16_t pc_sets_event_set(const struct perfctr_session *s, size_t e);

/* The index in sets->defs of set @id, -1 when there is none (set 0
 * always is). */
int pc_sets_find_def(const struct pc_sets *sets, uint16_t id);

/* The id of the set the rotor has active (while attached with a rotor). */
uint16_t pc_sets_active_id(const struct pc_sets *sets);

#endif /* PERFCTR_SET_STATE_H */
