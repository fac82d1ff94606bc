/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What the session needs to know about a target beyond its public
 * accessors.  Not installed.
 */
#ifndef PERFCTR_TARGET_INTERNAL_H
#define PERFCTR_TARGET_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "perfctr/target.h"

/* True for a command target whose child has not been released to exec
 * yet: its counters are opened with enable_on_exec, and a start before the
 * exec must not enable them early. */
bool pc_target_is_held(const struct perfctr_target *target);

/* True when counters on this target must inherit to new threads and
 * children whatever the session flags say (process and command). */
bool pc_target_inherits(const struct perfctr_target *target);

/* The flags perf_event_open(2) needs for this target's units, beside
 * PERF_FLAG_FD_CLOEXEC (a cgroup target's PERF_FLAG_PID_CGROUP, whose
 * units' tid is then the cgroup directory's fd), 0 for the others. */
unsigned long pc_target_open_flags(const struct perfctr_target *target);

/* True when a unit's thread may have ended between the listing of the
 * threads and the open (process targets): ESRCH then means "gone", not
 * failure. */
bool pc_target_units_may_vanish(const struct perfctr_target *target);

/* A cgroup target's BPF counters (perfctr_cgroup_opts), NULL when it
 * counts with cgroup events or is no cgroup target. */
struct perfctr_bpf_counters *pc_target_bpf(const struct perfctr_target *target);

/* A cgroup target's directory fd, -1 for other kinds. */
int pc_target_cgroup_fd(const struct perfctr_target *target);

/*
 * The threads of process @pid as they are now (/proc/PID/task): the main
 * thread first, the rest by tid.  Return their number, -ESRCH when the
 * process is gone (or a zombie), -errno; *@out is malloc'ed.
 */
int pc_list_threads(pid_t pid, pid_t **out);

/* A command target's child was waited for by someone else (the tracer
 * of a process tree, perfctr/tree.h): its wait status, so that
 * perfctr_target__wait() returns it instead of waiting. */
void pc_target_set_reaped(struct perfctr_target *target, int status);

#endif /* PERFCTR_TARGET_INTERNAL_H */
