/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — targets: what a session counts.
 *
 * A target is the calling thread, one thread, a whole process (each of its
 * threads, optionally broken down), a command that perfctr forks and holds
 * before exec so that counters are attached when it starts, a list of
 * CPUs (global mode: everything that runs there), or a cgroup v2 on a list
 * of CPUs (what the cgroup's tasks do there, its descendants included).
 *
 * A target is made of *units*: one (thread, cpu) position that gets its own
 * kernel counters.  A thread target has one unit (tid, cpu -1); a CPU list
 * one unit per CPU (pid -1, cpu N); a process one unit per thread.
 *
 * Thread safety: not synchronised; one thread uses a target at a time.
 */
#ifndef PERFCTR_TARGET_H
#define PERFCTR_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_target;

enum perfctr_target_kind {
	PERFCTR_TARGET_SELF,
	PERFCTR_TARGET_THREAD,
	PERFCTR_TARGET_PROCESS,
	PERFCTR_TARGET_COMMAND,
	PERFCTR_TARGET_CPUS,
	PERFCTR_TARGET_CGROUP,
};

/** perfctr_target__new_self() - the calling thread (the thread that calls
 * this, whichever thread attaches later).  NULL + errno (ENOMEM). */
PERFCTR_API struct perfctr_target *perfctr_target__new_self(void);

/** perfctr_target__new_thread() - thread @tid, of this or another process.
 * NULL + errno: ESRCH when it does not exist, EINVAL for @tid <= 0. */
PERFCTR_API struct perfctr_target *perfctr_target__new_thread(pid_t tid);

/**
 * perfctr_target__new_thread_on_cpus() - thread @tid, counted only while
 * it runs on the CPUs of @cpulist ("0-3,6"): one unit per CPU.  Such a
 * counter is enabled whenever the thread runs but runs only on those
 * CPUs, so time_running < time_enabled: the unit counts tell where the
 * thread's events happened.  NULL + errno: ESRCH when the thread does not
 * exist, EINVAL for a malformed list or @tid <= 0.  Whether the CPUs exist
 * is checked at attach.
 */
PERFCTR_API struct perfctr_target *
perfctr_target__new_thread_on_cpus(pid_t tid, const char *cpulist);

/** perfctr_target__new_process() - every thread of @pid that exists now,
 * one unit each, the main thread first; threads they create later are
 * inherited into their creator's counts.  NULL + errno: ESRCH when @pid
 * does not exist (or is a zombie), EINVAL for @pid <= 0. */
PERFCTR_API struct perfctr_target *perfctr_target__new_process(pid_t pid);

/**
 * perfctr_target__new_cpus() - global mode on the CPUs of @cpulist
 * ("0-3,6"), NULL or "" for every online CPU.  EINVAL for a malformed
 * list, ENODEV for a CPU that is not online.
 */
PERFCTR_API struct perfctr_target *perfctr_target__new_cpus(const char *cpulist);

/**
 * perfctr_target__new_cgroup() - the tasks of cgroup v2 @path and of its
 * descendant cgroups, counted on the CPUs of @cpulist (NULL or "" for every
 * online CPU), one unit per CPU, as the kernel counts a cgroup: a counter
 * per CPU that runs only while a task of the cgroup runs there.
 * @path: an absolute path on a cgroup2 file system, or a path relative to
 *        the cgroup2 mount (found in /proc/self/mountinfo; leading slashes
 *        are ignored, so "/" is the root cgroup and "/a/b" the cgroup that
 *        /proc/PID/cgroup shows as "0::/a/b").
 *
 * The target holds the cgroup's directory open until it is deleted; its
 * units' tid (perfctr_target__unit()) is that directory's fd, which is what
 * perf_event_open(2) takes with PERF_FLAG_PID_CGROUP.  Needs a kernel with
 * CONFIG_CGROUP_PERF (else the open of the counters fails, EINVAL or
 * EBADF).  perfctr_target__pid() is -1.
 *
 * Return: NULL + errno: ENOMEDIUM when no cgroup2 file system is mounted,
 * ENOENT when there is no such cgroup, ENOTDIR, EACCES, EINVAL for a
 * malformed CPU list, ENODEV for a CPU that is not online, ENOMEM.
 */
PERFCTR_API struct perfctr_target *
perfctr_target__new_cgroup(const char *path, const char *cpulist);

/*
 * BPF cgroup counting.  The kernel's cgroup events (the default) are
 * switched out and in at every switch between tasks of different cgroups,
 * once per event and counted cgroup: a cost that grows with the cgroups
 * and falls on the tasks that switch most.  A perfctr_bpf_counters counts
 * each event once per CPU instead, and a BPF program at every context
 * switch adds the counters' progress to the outgoing task's cgroup and to
 * its counted ancestors.  Any number of cgroup targets (and the sessions
 * on them) share one; a session attached to such a target reads the same
 * per-CPU counts as with cgroup events, exact as of each read (the
 * program is run on each CPU first).  Events the kernel counts inside
 * the switch itself (context-switches, cgroup-switches, cpu-migrations)
 * land in the next task's cgroup.
 */
struct perfctr_bpf_counters;

struct perfctr_bpf_counters_opts {
	size_t sz;
	/* Cgroups counted at once, 0 for 65,536: a cap, not memory (the
	 * program's maps grow with the cgroups counted). */
	size_t max_cgroups;
	/* Events counted at once, 0 for 64 (the most): the kernel memory of
	 * each cgroup counted is 24 bytes an event and possible CPU. */
	size_t max_events;
	size_t :0;
};

/**
 * perfctr_bpf_counters__new() - load the cgroup counting BPF program and
 * attach it to sched_switch.  When it cannot be loaded (a library built
 * without BPF, no CAP_BPF + CAP_PERFMON, a kernel without BPF) the object
 * is still made: perfctr_bpf_counters__error() says why, and sessions on
 * targets that use it count with cgroup events instead.
 * @opts: NULL for the defaults.
 * Thread safety: one thread uses it, and the targets and sessions that
 * use it, at a time.
 * Return: NULL + errno: EINVAL for bad opts, ENOMEM.
 */
PERFCTR_API struct perfctr_bpf_counters *
perfctr_bpf_counters__new(const struct perfctr_bpf_counters_opts *opts);

/** perfctr_bpf_counters__delete() - unload the program, close its
 * counters; only once every session counting through it is detached.
 * NULL is a no-op. */
PERFCTR_API void perfctr_bpf_counters__delete(struct perfctr_bpf_counters *bc);

/** perfctr_bpf_counters__error() - 0 when the program is loaded, else the
 * -errno of the failed load (-EOPNOTSUPP: built without libbpf; -EPERM:
 * not privileged); -EINVAL for NULL. */
PERFCTR_API int
perfctr_bpf_counters__error(const struct perfctr_bpf_counters *bc);

/**
 * perfctr_bpf_counters__freeze() - run the program on every CPU once and
 * copy every cgroup's sums: until perfctr_bpf_counters__thaw(), reads of
 * the sessions counting through @bc give their counts as of this call,
 * without a run of the program and a map lookup each (what makes reading
 * thousands of cgroups cost milliseconds, not hundreds).  A start, stop
 * or reset of such a session thaws.
 * Return: 0, -EINVAL for NULL, -EOPNOTSUPP without a program, -ENOMEM,
 * the program run's or the map lookup's -errno (then not frozen).
 */
PERFCTR_API int perfctr_bpf_counters__freeze(struct perfctr_bpf_counters *bc);

/** perfctr_bpf_counters__thaw() - reads count live again (each one runs
 * the program first).  NULL is a no-op. */
PERFCTR_API void perfctr_bpf_counters__thaw(struct perfctr_bpf_counters *bc);

struct perfctr_cgroup_opts {
	size_t sz;
	/* Count through these BPF counters instead of cgroup events; not
	 * owned, must outlive the sessions attached to the target. */
	struct perfctr_bpf_counters *bpf;
	size_t :0;
};

/**
 * perfctr_target__new_cgroup_opts() - perfctr_target__new_cgroup() with
 * options: @opts->bpf makes sessions on the target count through BPF
 * (see above).  Return and errno: as perfctr_target__new_cgroup(), and
 * EINVAL for bad opts.
 */
PERFCTR_API struct perfctr_target *
perfctr_target__new_cgroup_opts(const char *path, const char *cpulist,
				const struct perfctr_cgroup_opts *opts);

/** perfctr_target__cgroup_path() - the full path of a cgroup target's
 * directory (as it was opened), NULL for other kinds. */
PERFCTR_API const char *
perfctr_target__cgroup_path(const struct perfctr_target *target);

struct perfctr_command_opts {
	size_t sz;
	/* Environment for the command; NULL = the caller's. */
	char *const *envp;
	/* File descriptors for the command's stdin/out/err; -1 = inherit.
	 * 0 also means inherit, so that a zeroed struct changes nothing
	 * (to give the command fd 0 as its stdout, pass a dup of it). */
	int stdin_fd;
	int stdout_fd;
	int stderr_fd;
	/* A signal the command gets when the thread that called
	 * perfctr_target__new_command() ends (PR_SET_PDEATHSIG, set in the
	 * child before its exec): so that it does not outlive a caller that
	 * is killed.  The kernel sends it when that *thread* exits, not the
	 * process: create the command from a thread that lives as long as
	 * the process (the main thread).  Only the command itself gets it
	 * (not the children it forks), and an exec of a set-user-ID or
	 * set-capability program clears it.  0 = none. */
	int parent_death_signal;
	size_t :0;
};

/**
 * perfctr_target__new_command() - fork a child that waits, before exec,
 * until perfctr_target__start() releases it.  Counters attached to this
 * target start counting at the exec and inherit to children and threads.
 * @argv: NULL-terminated; argv[0] is looked up in PATH.
 *
 * The child is forked here, so it inherits the caller's signal mask and
 * ignored signals as of this call, as fork and exec pass them on; handlers
 * the caller installs later do not concern it.
 *
 * Return: NULL + errno: ENOENT when the command does not exist, EACCES when
 * it cannot be executed (checked before forking so the message is exact),
 * EINVAL for a parent_death_signal that is not a signal number.
 */
PERFCTR_API struct perfctr_target *
perfctr_target__new_command(char *const argv[],
			    const struct perfctr_command_opts *opts);

/**
 * perfctr_target__start() - let a command target exec.
 * Return: 0 once the exec succeeded; the exec's failure as -errno (the
 * child then has exited with 127, collect it with perfctr_target__wait());
 * -EALREADY when started before; -EINVAL for other kinds of target.
 */
PERFCTR_API int perfctr_target__start(struct perfctr_target *target);

/**
 * perfctr_target__wait() - wait for a command (or process) target to end.
 * @status: the wait status (WIFEXITED / WIFSIGNALED) when non-NULL; for a
 *          process target, which we did not fork, it is not known and
 *          @status is left untouched.
 * Return: 0 (again, with the same status, after the first time), -EINTR
 * when a signal interrupted the wait (call again), -EINVAL for a command
 * not started yet, -ECHILD for thread, self and CPU targets.
 */
PERFCTR_API int perfctr_target__wait(struct perfctr_target *target, int *status);

/** perfctr_target__kill() - send @sig to a command target's child (or to a
 * process target).  Return: 0, -ESRCH once the child was waited for,
 * -EINVAL for other kinds of target, or kill(2)'s -errno. */
PERFCTR_API int perfctr_target__kill(struct perfctr_target *target, int sig);

/** perfctr_target__delete() - free; a command child not yet started is killed. */
PERFCTR_API void perfctr_target__delete(struct perfctr_target *target);

/** perfctr_target__kind() - which of the constructors made @target. */
PERFCTR_API enum perfctr_target_kind
perfctr_target__kind(const struct perfctr_target *target);

/** perfctr_target__pid() - the process id (command child, process), the tid
 * (thread, self) or -1 (CPUs, cgroup). */
PERFCTR_API pid_t perfctr_target__pid(const struct perfctr_target *target);

/** perfctr_target__nr_units() - how many (thread, cpu) units. */
PERFCTR_API size_t perfctr_target__nr_units(const struct perfctr_target *target);

/** perfctr_target__unit() - the tid (or -1) and cpu (or -1) of unit @idx;
 * either pointer may be NULL.  Return: 0, or -EINVAL out of range. */
PERFCTR_API int perfctr_target__unit(const struct perfctr_target *target,
				     size_t idx, pid_t *tid, int *cpu);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_TARGET_H */
