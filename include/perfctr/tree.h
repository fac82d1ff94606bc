/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — process trees: who in a command's tree of processes spent
 * what, each process's own counts ("self") and those of it and all its
 * descendants ("subtree"), per thread on request.
 *
 * How: the command's child, held before its exec, is traced (ptrace with
 * the fork, vfork, clone, exec and exit options).  Every task the tree
 * creates is stopped by the kernel before its first instruction; its
 * counters are opened then, per task and without inherit, through the
 * counter engine, so nothing it does is missed.  At its exit stop, when
 * the task still exists and has done all it will do, its counters are read
 * and closed.  So every row is exact where the kernel's counts are, and
 * nothing rests on PERF_RECORD_READ (which the kernel may lose with
 * concurrent children).  The root's counters start at its exec, as a
 * command session's do.
 *
 * Costs and limits: each new task costs a few ptrace stops and the open
 * of its counters; a traced tree cannot be traced by anyone else (gdb,
 * strace inside it get EPERM); the calling thread is the tracer and must
 * pump the tree (perfctr_tree__poll() or perfctr_tree__wait()) until the
 * root ends, else the tree's tasks stay stopped.  Tasks still alive when
 * the root ends are read then, detached and marked running.
 *
 * Command and process targets: a command is traced from its exec (every
 * process of its tree from its creation); a running process is traced
 * from the call on, each of its threads counted from then, the processes
 * and threads it creates afterwards from their creation.
 *
 * Thread safety: none; every call on a tree must come from the thread that
 * made it (the kernel ties a tracee to its tracer thread).
 */
#ifndef PERFCTR_TREE_H
#define PERFCTR_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>
#include <perfctr/count.h>
#include <perfctr/session.h>
#include <perfctr/target.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_tree;

/* No parent (the root), for perfctr_tree_node.parent. */
#define PERFCTR_TREE_NONE ((size_t)-1)

struct perfctr_tree_opts {
	size_t sz;
	unsigned int flags;	/* none defined yet: 0 */
	size_t :0;
};

/**
 * perfctr_tree__new() - trace the tree of command or process @target,
 * counting the events of @events (their groups and tracepoint filters)
 * in each task.
 * @events: a session with events; it is only read here (the tree keeps
 *          copies), it need not be attached.
 * @target: a command target not started yet (the caller still starts it
 *          with perfctr_target__start(); perfctr_target__wait() then
 *          returns the status the tree collected), or a process target
 *          (its threads are traced and counted from this call on).  The
 *          caller keeps ownership; it must outlive the tree.
 * Return: NULL + errno: EINVAL (NULL, bad opts, a session without events,
 * another kind of target), EALREADY (a command already started), EPERM
 * (the kernel refuses to trace it: already traced, another user's,
 * Yama's ptrace_scope), ESRCH (the process is gone), ENOMEM, or the
 * counters' open errno.  On failure nothing stays traced.
 */
PERFCTR_API struct perfctr_tree *
perfctr_tree__new(const struct perfctr_session *events,
		  struct perfctr_target *target,
		  const struct perfctr_tree_opts *opts);

/** perfctr_tree__delete() - detach from tasks still traced, close their
 * counters, free.  NULL is a no-op. */
PERFCTR_API void perfctr_tree__delete(struct perfctr_tree *tree);

/**
 * perfctr_tree__poll() - handle every stop of the tree's tasks that is
 * pending now, without blocking: open counters for new tasks, read the
 * exiting ones, pass signals on.  The caller learns that something is
 * pending by SIGCHLD (sent to it at every stop) or by polling again.
 * Return: 1 once the root has ended (and was reaped: its status is known),
 * 0 while it runs, -errno (waitpid's; -EINVAL for a NULL tree).
 */
PERFCTR_API int perfctr_tree__poll(struct perfctr_tree *tree);

/**
 * perfctr_tree__wait() - handle stops until the root ends.
 * @status: the root's wait status when non-NULL.
 * Return: 0, -EINTR when a signal interrupted the wait (call again), or
 * waitpid's -errno.
 */
PERFCTR_API int perfctr_tree__wait(struct perfctr_tree *tree, int *status);

/**
 * perfctr_tree__detach() - stop following the tree before its root ends
 * (a process watched until Ctrl-C): every task still traced is read and
 * let go, and reads as running.  Return: 0, -EINVAL for NULL.
 */
PERFCTR_API int perfctr_tree__detach(struct perfctr_tree *tree);

/** perfctr_tree__nr_events() - the events counted, as in the session. */
PERFCTR_API size_t perfctr_tree__nr_events(const struct perfctr_tree *tree);

/** perfctr_tree__nr_processes() - processes seen so far, the root first,
 * each after its parent (creation order). */
PERFCTR_API size_t perfctr_tree__nr_processes(const struct perfctr_tree *tree);

/** perfctr_tree__nr_threads() - tasks of process @proc, its first task
 * first; 0 out of range. */
PERFCTR_API size_t perfctr_tree__nr_threads(const struct perfctr_tree *tree,
					    size_t proc);

struct perfctr_tree_node {
	size_t sz;
	pid_t pid;		/* process id */
	pid_t ppid;		/* the creating process (0 for the root) */
	pid_t tid;		/* thread id; a process row: pid */
	size_t parent;		/* the parent's process index, or NONE */
	unsigned int depth;	/* 0 for the root */
	size_t nr_threads;	/* a process row: its tasks; a thread row: 1 */
	size_t nr_children;	/* processes it created (a thread row: 0) */
	const char *comm;	/* last name seen (exec, exit), "" if none */
	const char *exe;	/* executable at exit or last exec, "" if none */
	uint64_t start_ns;	/* CLOCK_MONOTONIC: first stop */
	uint64_t end_ns;	/* CLOCK_MONOTONIC: exit; 0 while running */
	int exit_status;	/* wait status (WIFEXITED ...), -1 unknown */
	bool running;		/* still alive when last looked at */
	size_t :0;
};

/**
 * perfctr_tree__process() / __thread() - a process, or thread @thread of
 * process @proc.  @node: filled up to its sz (set by the caller); its
 * strings belong to the tree and live as long as it does.
 * Return: 0, -EINVAL (NULL, out of range, sz 0).
 */
PERFCTR_API int perfctr_tree__process(const struct perfctr_tree *tree,
				      size_t proc,
				      struct perfctr_tree_node *node);
PERFCTR_API int perfctr_tree__thread(const struct perfctr_tree *tree,
				     size_t proc, size_t thread,
				     struct perfctr_tree_node *node);

/** perfctr_tree__child() - the process index of @proc's @nth child
 * process (creation order); PERFCTR_TREE_NONE out of range. */
PERFCTR_API size_t perfctr_tree__child(const struct perfctr_tree *tree,
				       size_t proc, size_t nth);

/**
 * perfctr_tree__self() - event @ev of process @proc: its threads' counts
 * summed (perfctr_count__add()); times add over threads.
 * perfctr_tree__subtree() - the same over @proc and every descendant.
 * perfctr_tree__thread_count() - event @ev of one thread of @proc.
 * Counts of live tasks are as of their last read (their exit, or the end
 * of the tree).  Return: 0, -EINVAL out of range.
 */
PERFCTR_API int perfctr_tree__self(const struct perfctr_tree *tree,
				   size_t proc, size_t ev,
				   struct perfctr_count *count);
PERFCTR_API int perfctr_tree__subtree(const struct perfctr_tree *tree,
				      size_t proc, size_t ev,
				      struct perfctr_count *count);
PERFCTR_API int perfctr_tree__thread_count(const struct perfctr_tree *tree,
					   size_t proc, size_t thread,
					   size_t ev,
					   struct perfctr_count *count);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_TREE_H */
