/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libperfctr — targets: what a session counts.
 *
 * A target is the calling thread, one thread, a whole process (each of its
 * threads, optionally broken down), a command that perfctr forks and holds
 * before exec so that counters are attached when it starts, or a list of
 * CPUs (global mode: everything that runs there).
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
};

/** perfctr_target__new_self() - the calling thread.  NULL + errno. */
PERFCTR_API struct perfctr_target *perfctr_target__new_self(void);

/** perfctr_target__new_thread() - thread @tid (ESRCH when it does not exist). */
PERFCTR_API struct perfctr_target *perfctr_target__new_thread(pid_t tid);

/** perfctr_target__new_process() - every thread of @pid that exists now;
 * threads they create later are inherited into their creator's counts. */
PERFCTR_API struct perfctr_target *perfctr_target__new_process(pid_t pid);

/**
 * perfctr_target__new_cpus() - global mode on the CPUs of @cpulist
 * ("0-3,6"), NULL or "" for every online CPU.  EINVAL for a malformed
 * list, ENODEV for a CPU that is not online.
 */
PERFCTR_API struct perfctr_target *perfctr_target__new_cpus(const char *cpulist);

struct perfctr_command_opts {
	size_t sz;
	/* Environment for the command; NULL = the caller's. */
	char *const *envp;
	/* File descriptors for the command's stdin/out/err; -1 = inherit. */
	int stdin_fd;
	int stdout_fd;
	int stderr_fd;
	size_t :0;
};

/**
 * perfctr_target__new_command() - fork a child that waits, before exec,
 * until perfctr_target__start() releases it.  Counters attached to this
 * target start counting at the exec and inherit to children and threads.
 * @argv: NULL-terminated; argv[0] is looked up in PATH.
 *
 * Return: NULL + errno: ENOENT when the command does not exist, EACCES when
 * it cannot be executed (checked before forking so the message is exact).
 */
PERFCTR_API struct perfctr_target *
perfctr_target__new_command(char *const argv[],
			    const struct perfctr_command_opts *opts);

/**
 * perfctr_target__start() - let a command target exec.  Return: 0, or the
 * exec's failure as -errno (the child then has exited with 127).
 */
PERFCTR_API int perfctr_target__start(struct perfctr_target *target);

/**
 * perfctr_target__wait() - wait for a command (or process) target to end.
 * @status: the wait status (WIFEXITED / WIFSIGNALED) when non-NULL.
 * Return: 0, -EINTR when a signal interrupted the wait (call again),
 * -ECHILD for targets we did not fork.
 */
PERFCTR_API int perfctr_target__wait(struct perfctr_target *target, int *status);

/** perfctr_target__kill() - send @sig to a command target's child. */
PERFCTR_API int perfctr_target__kill(struct perfctr_target *target, int sig);

/** perfctr_target__delete() - free; a command child not yet started is killed. */
PERFCTR_API void perfctr_target__delete(struct perfctr_target *target);

PERFCTR_API enum perfctr_target_kind
perfctr_target__kind(const struct perfctr_target *target);

/** perfctr_target__pid() - the process id (command child, process), the tid
 * (thread, self) or -1 (CPUs). */
PERFCTR_API pid_t perfctr_target__pid(const struct perfctr_target *target);

/** perfctr_target__nr_units() - how many (thread, cpu) units. */
PERFCTR_API size_t perfctr_target__nr_units(const struct perfctr_target *target);

/** perfctr_target__unit() - the tid (or -1) and cpu (or -1) of unit @idx. */
PERFCTR_API int perfctr_target__unit(const struct perfctr_target *target,
				     size_t idx, pid_t *tid, int *cpu);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_TARGET_H */
