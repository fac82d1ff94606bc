/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Process trees (perfctr/tree.h): a policy over the counter engine that
 * gives every task of a command's tree counters of its own.
 *
 * Why ptrace: a task's own counts must be exact, with any number of
 * concurrent children.  inherit_stat's PERF_RECORD_READ at each child's
 * exit gets lost with concurrent children (docs/kernel-notes.md 10), and the
 * sum of an inherited counter says nothing of who did what.  Under ptrace
 * with the fork/vfork/clone options the kernel stops each new task before
 * it runs an instruction of its own, so a counter opened then (pid = the
 * task, no inherit) sees all it does; PTRACE_O_TRACEEXIT stops it again
 * in do_exit, before its counters are torn down and while /proc still
 * shows its name and executable, where one read takes its final counts.
 *
 * Stops are collected with waitpid() on the tids we know (the root, and
 * every tid a fork/clone event announced), never waitpid(-1): the caller
 * may have children of its own.  A task announced by its parent's event
 * may stop before or after that event is seen; it is waited for once it
 * is known, so both orders work.
 *
 * The root's counters stay open until the tree is deleted, the others are
 * closed at their task's exit: closing the last fd of a tracepoint costs
 * tens of milliseconds (docs/kernel-notes.md 5), the root's keep it cheap.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/internal.h"
#include "core/engine.h"
#include "core/session-internal.h"
#include "core/target-internal.h"
#include "perfctr/tree.h"

#define TRACE_OPTIONS (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |	\
		       PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |	\
		       PTRACE_O_TRACEEXIT)

enum task_state {
	TASK_NEW,	/* announced, its first stop not seen yet */
	TASK_LIVE,	/* counters open (or failed to), running */
	TASK_EXITING,	/* read at its exit stop, not reaped yet */
	TASK_DEAD,	/* reaped or detached */
};

struct tree_task {
	pid_t tid;
	size_t proc;		/* (size_t)-1 until its first stop */
	size_t creator;		/* the task whose fork/clone made it, or -1 */
	enum task_state state;
	struct pc_engine *engine;
	struct perfctr_count *counts;	/* nr_events */
	uint64_t start_ns, end_ns;
	int exit_status;
	char comm[17];
	bool detached;		/* let go while still running */
};

struct tree_proc {
	pid_t pid, ppid;
	size_t parent;
	unsigned int depth;
	size_t *tasks, nr_tasks, live_tasks;
	size_t detached_tasks;	/* let go while still running */
	size_t *children, nr_children;
	char comm[17];
	char *exe;
	uint64_t start_ns, end_ns;
	int exit_status;
	struct perfctr_count *self, *subtree;	/* nr_events, cached */
};

struct tree_event {
	struct perf_event_attr attr;
	size_t leader;
	char *filter;
	int *cpus;
	size_t nr_cpus;
};

struct perfctr_tree {
	struct perfctr_target *target;
	pid_t root_tid;
	struct tree_event *events;
	size_t nr_events;

	struct tree_task *tasks;
	size_t nr_tasks, cap_tasks;
	size_t *watched;	/* tasks not dead: whom to wait for */
	size_t nr_watched, cap_watched;
	struct tree_proc *procs;
	size_t nr_procs, cap_procs;

	bool root_done;
	int root_status;
	bool sums_stale;
	/* Stops of new tasks seen before their creator's event named
	 * them: (tid, wait status), handled once they are named. */
	struct early_stop { pid_t tid; int status; } *early;
	size_t nr_early, cap_early;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

static void read_comm(pid_t tid, char *comm, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	if (pc_read_file(path, comm, size) < 0 && !comm[0])
		comm[0] = '\0';
}

static void read_exe(struct tree_proc *p, pid_t tid)
{
	char path[64], buf[PATH_MAX];
	ssize_t n;
	char *copy;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)tid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (p->exe && !strcmp(p->exe, buf))
		return;
	copy = strdup(buf);
	if (!copy)
		return;
	free(p->exe);
	p->exe = copy;
}

/* The thread group of @tid, from /proc (0 when it cannot be read). */
static pid_t read_tgid(pid_t tid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (pc_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "\nTgid:");
	return p ? (pid_t)strtol(p + 6, NULL, 10) : 0;
}

static ssize_t find_task(const struct perfctr_tree *t, pid_t tid)
{
	for (size_t i = 0; i < t->nr_watched; i++)
		if (t->tasks[t->watched[i]].tid == tid)
			return (ssize_t)t->watched[i];
	return -1;
}

static ssize_t find_live_proc(const struct perfctr_tree *t, pid_t pid)
{
	for (size_t i = 0; i < t->nr_watched; i++) {
		const struct tree_task *k = &t->tasks[t->watched[i]];

		if (k->proc != (size_t)-1 && t->procs[k->proc].pid == pid &&
		    t->procs[k->proc].live_tasks)
			return (ssize_t)k->proc;
	}
	return -1;
}

static void unwatch(struct perfctr_tree *t, size_t task)
{
	for (size_t i = 0; i < t->nr_watched; i++)
		if (t->watched[i] == task) {
			t->watched[i] = t->watched[--t->nr_watched];
			return;
		}
}

/* A new task record, watched.  Return its index or -ENOMEM. */
static ssize_t add_task(struct perfctr_tree *t, pid_t tid, size_t creator)
{
	struct tree_task *k;
	struct perfctr_count *counts;

	if (grow((void **)&t->tasks, &t->cap_tasks, t->nr_tasks + 1,
		 sizeof(*t->tasks)) ||
	    grow((void **)&t->watched, &t->cap_watched, t->nr_watched + 1,
		 sizeof(*t->watched)))
		return -ENOMEM;
	counts = calloc(t->nr_events, sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	for (size_t e = 0; e < t->nr_events; e++)
		counts[e].status = PERFCTR_COUNT_NOT_COUNTED;
	k = &t->tasks[t->nr_tasks];
	memset(k, 0, sizeof(*k));
	k->tid = tid;
	k->proc = (size_t)-1;
	k->creator = creator;
	k->state = TASK_NEW;
	k->counts = counts;
	k->exit_status = -1;
	t->watched[t->nr_watched++] = t->nr_tasks;
	t->sums_stale = true;
	return (ssize_t)t->nr_tasks++;
}

/* A new process record for @pid, child of @parent ((size_t)-1: root). */
static ssize_t add_proc(struct perfctr_tree *t, pid_t pid, size_t parent)
{
	struct tree_proc *p;

	if (grow((void **)&t->procs, &t->cap_procs, t->nr_procs + 1,
		 sizeof(*t->procs)))
		return -ENOMEM;
	p = &t->procs[t->nr_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->parent = parent;
	p->exit_status = -1;
	if (parent != (size_t)-1) {
		struct tree_proc *pp = &t->procs[parent];
		size_t *c = realloc(pp->children,
				    (pp->nr_children + 1) * sizeof(*c));

		if (!c)
			return -ENOMEM;
		c[pp->nr_children++] = t->nr_procs;
		pp->children = c;
		p->ppid = pp->pid;
		p->depth = pp->depth + 1;
	}
	return (ssize_t)t->nr_procs++;
}

static int join_proc(struct perfctr_tree *t, size_t task, size_t proc)
{
	struct tree_proc *p = &t->procs[proc];
	size_t *n = realloc(p->tasks, (p->nr_tasks + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	n[p->nr_tasks++] = task;
	p->tasks = n;
	p->live_tasks++;
	t->tasks[task].proc = proc;
	if (!p->start_ns)
		p->start_ns = t->tasks[task].start_ns;
	return 0;
}

/* Counters for task @task, opened now (it is stopped, or held before its
 * exec with @at_exec). */
static int open_counters(struct perfctr_tree *t, size_t task, bool at_exec)
{
	struct tree_task *k = &t->tasks[task];
	struct perfctr_target *one;
	struct pc_engine *engine;
	size_t e;
	int err;

	one = perfctr_target__new_thread(k->tid);
	if (!one)
		return -errno;
	engine = pc_engine__new(one);
	perfctr_target__delete(one);
	if (!engine)
		return -errno;
	for (e = 0; e < t->nr_events; e++) {
		struct tree_event *ev = &t->events[e];
		struct perf_event_attr attr = ev->attr;
		struct pc_engine_event desc = {
			.attr = &attr,
			.leader = ev->leader,
			.filter = ev->filter,
			.cpus = ev->cpus,
			.nr_cpus = ev->nr_cpus,
		};

		attr.enable_on_exec = at_exec && ev->leader == e;
		err = pc_engine__add(engine, &desc);
		if (err < 0)
			goto fail;
	}
	err = pc_engine__open(engine, at_exec ? 0 : PC_ENGINE_ENABLE);
	if (err)
		goto fail;
	k->engine = engine;
	return 0;
fail:
	pc_engine__delete(engine);
	return err;
}

static void read_counters(struct perfctr_tree *t, struct tree_task *k,
			  bool close)
{
	if (!k->engine)
		return;
	pc_engine__read(k->engine);
	for (size_t e = 0; e < t->nr_events; e++) {
		const struct pc_slot *s = pc_engine__slot(k->engine, e, 0);

		if (s)
			k->counts[e] = s->count;
	}
	t->sums_stale = true;
	if (close && k->tid != t->root_tid) {
		pc_engine__delete(k->engine);
		k->engine = NULL;
	}
}

/* Announced by its creator's event (the task exists, stopped or about
 * to stop): which process it belongs to.  Processes are numbered here,
 * so that siblings come in the order they were made. */
static int task_placed(struct perfctr_tree *t, size_t task)
{
	struct tree_task *k = &t->tasks[task];
	pid_t tgid = read_tgid(k->tid);
	ssize_t proc = -1;

	k->start_ns = now_ns();
	if (k->creator != (size_t)-1)
		memcpy(k->comm, t->tasks[k->creator].comm, sizeof(k->comm));
	if (tgid && tgid != k->tid)
		proc = find_live_proc(t, tgid);
	if (proc < 0) {
		size_t parent = k->creator != (size_t)-1 ?
				t->tasks[k->creator].proc : (size_t)-1;

		proc = add_proc(t, k->tid, parent);
		if (proc < 0)
			return (int)proc;
		memcpy(t->procs[proc].comm, k->comm, sizeof(k->comm));
	}
	return join_proc(t, task, (size_t)proc);
}

/* Its first stop, before its first instruction: its counters. */
static int task_begins(struct perfctr_tree *t, size_t task)
{
	struct tree_task *k = &t->tasks[task];
	int err;

	k->state = TASK_LIVE;
	err = open_counters(t, task, false);
	if (err) {
		/* The task runs uncounted; its rows say why. */
		for (size_t e = 0; e < t->nr_events; e++) {
			k->counts[e].status = PERFCTR_COUNT_NOT_SUPPORTED;
			k->counts[e].errnum = -err;
		}
		pr_warn("cannot count task %d: %s\n", (int)k->tid,
			strerror(-err));
	}
	return 0;
}

static void task_exits(struct perfctr_tree *t, size_t task, bool close)
{
	struct tree_task *k = &t->tasks[task];
	struct tree_proc *p = k->proc != (size_t)-1 ? &t->procs[k->proc] : NULL;
	unsigned long msg = 0;

	if (k->state == TASK_LIVE) {
		if (ptrace(PTRACE_GETEVENTMSG, k->tid, 0, &msg) == 0)
			k->exit_status = (int)msg;
		read_comm(k->tid, k->comm, sizeof(k->comm));
		if (p) {
			read_exe(p, k->tid);
			if (k->tid == p->pid)
				memcpy(p->comm, k->comm, sizeof(k->comm));
		}
		read_counters(t, k, close);
		k->end_ns = now_ns();
		k->state = TASK_EXITING;
	}
}

/* Reaped (or detached): the task is gone from our view. */
static void task_gone(struct perfctr_tree *t, size_t task, int status,
		      bool have_status)
{
	struct tree_task *k = &t->tasks[task];
	struct tree_proc *p = k->proc != (size_t)-1 ? &t->procs[k->proc] : NULL;

	if (k->state == TASK_LIVE) {
		/* No exit stop (SIGKILL skips it): its counters can still
		 * be read after it is gone. */
		read_counters(t, k, true);
		k->end_ns = now_ns();
	} else if (k->engine && k->tid != t->root_tid) {
		pc_engine__delete(k->engine);
		k->engine = NULL;
	}
	if (have_status)
		k->exit_status = status;
	if (p && k->state != TASK_DEAD) {
		p->live_tasks--;
		if (!p->live_tasks) {
			p->end_ns = k->end_ns;
			p->exit_status = k->exit_status;
		}
		if (have_status && k->tid == p->pid)
			p->exit_status = status;
	}
	k->state = TASK_DEAD;
	unwatch(t, task);
	t->sums_stale = true;
	if (k->tid == t->root_tid && have_status) {
		t->root_done = true;
		t->root_status = status;
		pc_target_set_reaped(t->target, status);
	}
}

/* PTRACE_EVENT_EXEC: a non-leader thread that exec'ed took the leader's
 * tid; its record takes the place of the leader's, which is gone. */
static void task_execs(struct perfctr_tree *t, size_t task)
{
	struct tree_task *k = &t->tasks[task];
	unsigned long former = 0;

	if (ptrace(PTRACE_GETEVENTMSG, k->tid, 0, &former) == 0 &&
	    (pid_t)former != k->tid) {
		ssize_t old = find_task(t, (pid_t)former);

		if (old >= 0) {
			/* Leader's record (k) ends; the exec'ing thread's
			 * record continues under the leader's tid. */
			task_exits(t, task, true);
			task_gone(t, task, 0, false);
			t->tasks[old].tid = k->tid;
			task = (size_t)old;
			k = &t->tasks[task];
		}
	}
	if (k->tid == t->root_tid && !t->procs[0].start_ns)
		t->procs[0].start_ns = k->start_ns = now_ns();
	read_comm(k->tid, k->comm, sizeof(k->comm));
	if (k->proc != (size_t)-1) {
		struct tree_proc *p = &t->procs[k->proc];

		memcpy(p->comm, k->comm, sizeof(k->comm));
		read_exe(p, k->tid);
	}
}

static void resume(pid_t tid, int sig)
{
	ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
}

static int handle_early(struct perfctr_tree *t, size_t task);

static int handle(struct perfctr_tree *t, size_t task, int st)
{
	struct tree_task *k = &t->tasks[task];
	pid_t tid = k->tid;
	unsigned long msg = 0;
	int sig, event, err = 0;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		task_gone(t, task, st, true);
		return 0;
	}
	if (!WIFSTOPPED(st))
		return 0;
	sig = WSTOPSIG(st);
	event = st >> 16;
	if (k->state == TASK_NEW) {
		err = task_begins(t, task);
		k = &t->tasks[task];
		if (event == PTRACE_EVENT_STOP) {
			resume(tid, 0);
			return err;
		}
	}
	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 &&
		    find_task(t, (pid_t)msg) < 0) {
			ssize_t n = add_task(t, (pid_t)msg, task);

			err = n < 0 ? (int)n : task_placed(t, (size_t)n);
			if (!err)
				err = handle_early(t, (size_t)n);
		}
		resume(tid, 0);
		break;
	case PTRACE_EVENT_EXEC:
		task_execs(t, task);
		resume(tid, 0);
		break;
	case PTRACE_EVENT_EXIT:
		task_exits(t, task, true);
		resume(tid, 0);
		break;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
		    sig == SIGTTOU)
			/* A group stop: stay stopped, without holding the
			 * task in a ptrace stop. */
			ptrace(PTRACE_LISTEN, tid, 0, 0);
		else
			resume(tid, 0);
		break;
	default:
		/* A signal on its way to the task: deliver it. */
		resume(tid, sig);
		break;
	}
	return err;
}

/* One look at every watched task: the slow way, for when some child of
 * the caller that is not ours has news pending.  Return how many stops
 * were handled, or -errno. */
static int scan(struct perfctr_tree *t)
{
	int handled = 0, err = 0;

	for (size_t i = 0; i < t->nr_watched; i++) {
		size_t task = t->watched[i];
		pid_t tid = t->tasks[task].tid;
		int st, rc;

		rc = waitpid(tid, &st, WNOHANG | __WALL);
		if (rc == 0)
			continue;
		if (rc < 0) {
			if (errno == EINTR) {
				i--;
				continue;
			}
			if (errno != ECHILD)
				return -errno;
			/* Not ours to wait for (any more): reaped elsewhere
			 * (the root by perfctr_target__start() after a
			 * failed exec). */
			if (tid == t->root_tid &&
			    perfctr_target__kind(t->target) ==
			    PERFCTR_TARGET_COMMAND) {
				int rst = 0;

				if (perfctr_target__wait(t->target, &rst) == 0) {
					task_gone(t, task, rst, true);
					i--;
					handled++;
					continue;
				}
			}
			task_gone(t, task, 0, false);
			i--;
			handled++;
			continue;
		}
		rc = handle(t, task, st);
		if (rc && !err)
			err = rc;
		handled++;
		/* The watched list may have changed under the index: look
		 * at this position again. */
		i = (size_t)-1;
	}
	return err ? err : handled;
}

/*
 * Take every state change pending now.  waitid(WNOWAIT) names the child
 * with news without taking it: one of our tasks (taken and handled), a
 * new task whose creator's event has not been seen (only tracees report
 * stops here: taken and kept for when it is named), or a child of the
 * caller that is not ours (left alone; the watched tasks are then looked
 * at one by one).  Return how many were handled, or -errno.
 */
static int pass(struct perfctr_tree *t)
{
	int handled = 0, err = 0, rc;

	for (;;) {
		siginfo_t info;
		ssize_t task;
		int st;

		memset(&info, 0, sizeof(info));
		if (waitid(P_ALL, 0, &info, WEXITED | WSTOPPED | WNOHANG |
			   WNOWAIT | __WALL) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				break;
			return -errno;
		}
		if (!info.si_pid)
			return err ? err : handled;
		task = find_task(t, info.si_pid);
		if (task < 0 && (info.si_code == CLD_TRAPPED ||
				 info.si_code == CLD_STOPPED)) {
			if (waitpid(info.si_pid, &st, WNOHANG | __WALL) <= 0)
				continue;
			if (grow((void **)&t->early, &t->cap_early,
				 t->nr_early + 1, sizeof(*t->early)))
				return -ENOMEM;
			t->early[t->nr_early].tid = info.si_pid;
			t->early[t->nr_early++].status = st;
			continue;
		}
		if (task < 0)
			break;
		rc = waitpid(info.si_pid, &st, WNOHANG | __WALL);
		if (rc <= 0)
			continue;
		rc = handle(t, (size_t)task, st);
		if (rc && !err)
			err = rc;
		handled++;
	}
	rc = scan(t);
	if (rc < 0)
		return rc;
	return err ? err : handled + rc;
}

/* A task just named by its creator may have stopped already. */
static int handle_early(struct perfctr_tree *t, size_t task)
{
	for (size_t i = 0; i < t->nr_early; i++)
		if (t->early[i].tid == t->tasks[task].tid) {
			int st = t->early[i].status;

			t->early[i] = t->early[--t->nr_early];
			return handle(t, task, st);
		}
	return 0;
}

/* The root has ended: take what the rest have counted so far and let
 * them go on untraced. */
static void finish(struct perfctr_tree *t)
{
	int guard = 0;

	while (t->nr_watched && guard++ < 100000) {
		size_t task = t->watched[0];
		struct tree_task *k = &t->tasks[task];
		int st, rc;

		if (k->state != TASK_NEW)
			ptrace(PTRACE_INTERRUPT, k->tid, 0, 0);
		do
			rc = waitpid(k->tid, &st, __WALL);
		while (rc < 0 && errno == EINTR);
		if (rc < 0) {
			task_gone(t, task, 0, false);
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			task_gone(t, task, st, true);
			continue;
		}
		if (WIFSTOPPED(st) && (st >> 16) != PTRACE_EVENT_STOP &&
		    (st >> 16) != PTRACE_EVENT_EXIT && (st >> 16) != 0) {
			/* A fork/clone/exec event: take the new task into
			 * the list (handle() does), then interrupt again. */
			handle(t, task, st);
			continue;
		}
		if (k->state == TASK_NEW)
			task_begins(t, task);
		k = &t->tasks[task];
		if (k->state == TASK_LIVE)
			read_counters(t, k, true);
		ptrace(PTRACE_DETACH, k->tid, 0,
		       (void *)(long)((st >> 16) == 0 ? WSTOPSIG(st) : 0));
		if (k->proc != (size_t)-1) {
			t->procs[k->proc].live_tasks--;
			t->procs[k->proc].detached_tasks++;
		}
		k->detached = true;
		k->state = TASK_DEAD;
		unwatch(t, task);
	}
	t->sums_stale = true;
}

int perfctr_tree__poll(struct perfctr_tree *t)
{
	int rc;

	if (!t)
		return pc_err(EINVAL);
	if (t->root_done && !t->nr_watched)
		return 1;
	do
		rc = pass(t);
	while (rc > 0 && !t->root_done);
	if (t->root_done) {
		finish(t);
		return 1;
	}
	return rc < 0 ? pc_err(-rc) : 0;
}

int perfctr_tree__wait(struct perfctr_tree *t, int *status)
{
	int rc;

	if (!t)
		return pc_err(EINVAL);
	while ((rc = perfctr_tree__poll(t)) == 0) {
		siginfo_t info;

		/* Block until some child changes state, without taking
		 * the news (the next pass does, for the tids it knows). */
		memset(&info, 0, sizeof(info));
		if (waitid(P_ALL, 0, &info, WEXITED | WSTOPPED | WNOWAIT |
			   __WALL) < 0) {
			if (errno == EINTR)
				return pc_err(EINTR);
			return pc_err(errno);
		}
		if (info.si_pid && find_task(t, info.si_pid) < 0) {
			/* Some other child of the caller: not ours to
			 * take; do not spin on it. */
			struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
		}
	}
	if (rc < 0)
		return rc;
	if (status)
		*status = t->root_status;
	return 0;
}

/* A process target: seize every thread it has now, and again the ones
 * a thread made before it was seized, until the list holds still. */
static int seize_process(struct perfctr_tree *t)
{
	size_t proc = 0;

	for (int round = 0; round < 100; round++) {
		pid_t *tids;
		int n = pc_list_threads(t->root_tid, &tids), added = 0;

		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			ssize_t task;
			int err;

			if (find_task(t, tids[i]) >= 0)
				continue;
			if (ptrace(PTRACE_SEIZE, tids[i], 0,
				   (void *)(long)TRACE_OPTIONS)) {
				err = errno;
				if (err == ESRCH)
					continue;	/* ended meanwhile */
				free(tids);
				return -err;
			}
			task = add_task(t, tids[i], (size_t)-1);
			if (task < 0) {
				free(tids);
				return (int)task;
			}
			t->tasks[task].state = TASK_LIVE;
			t->tasks[task].start_ns = now_ns();
			read_comm(tids[i], t->tasks[task].comm,
				  sizeof(t->tasks[task].comm));
			err = join_proc(t, (size_t)task, proc);
			if (!err)
				err = open_counters(t, (size_t)task, false);
			if (err) {
				free(tids);
				return err;
			}
			added++;
		}
		free(tids);
		if (!added)
			break;
	}
	memcpy(t->procs[proc].comm, t->tasks[0].comm, sizeof(t->procs[proc].comm));
	read_exe(&t->procs[proc], t->root_tid);
	return 0;
}

struct perfctr_tree *perfctr_tree__new(const struct perfctr_session *s,
				       struct perfctr_target *target,
				       const struct perfctr_tree_opts *opts)
{
	struct perfctr_tree *t;
	enum perfctr_target_kind kind;
	ssize_t task, proc;
	int err;

	if (!s || !target || !s->nr_events || !pc_opts_valid(opts, sizeof(*opts)) ||
	    PC_OPTS_GET(opts, flags, 0)) {
		errno = EINVAL;
		return NULL;
	}
	kind = perfctr_target__kind(target);
	if (kind != PERFCTR_TARGET_COMMAND && kind != PERFCTR_TARGET_PROCESS) {
		errno = EINVAL;
		return NULL;
	}
	if (kind == PERFCTR_TARGET_COMMAND && !pc_target_is_held(target)) {
		errno = EALREADY;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->target = target;
	t->root_tid = perfctr_target__pid(target);
	t->events = calloc(s->nr_events, sizeof(*t->events));
	if (!t->events)
		goto fail_errno;
	t->nr_events = s->nr_events;
	for (size_t e = 0; e < s->nr_events; e++) {
		const struct pc_event *ev = &s->events[e];
		struct tree_event *te = &t->events[e];

		te->attr = ev->attr;
		te->attr.size = sizeof(te->attr);
		te->attr.read_format = PC_READ_FORMAT;
		/* Each task has its own counters: nothing to inherit. */
		te->attr.inherit = 0;
		te->attr.inherit_stat = 0;
		te->attr.enable_on_exec = 0;
		te->leader = ev->leader;
		if (ev->filter && !(te->filter = strdup(ev->filter)))
			goto fail_errno;
		if (ev->cpus && ev->nr_cpus > 0) {
			te->cpus = malloc((size_t)ev->nr_cpus * sizeof(int));
			if (!te->cpus)
				goto fail_errno;
			memcpy(te->cpus, ev->cpus, (size_t)ev->nr_cpus * sizeof(int));
			te->nr_cpus = (size_t)ev->nr_cpus;
		}
	}
	if (kind == PERFCTR_TARGET_PROCESS) {
		if (add_proc(t, t->root_tid, (size_t)-1) < 0) {
			errno = ENOMEM;
			goto fail_errno;
		}
		err = seize_process(t);
		if (err) {
			errno = -err;
			goto fail_errno;
		}
		return t;
	}
	task = add_task(t, t->root_tid, (size_t)-1);
	if (task < 0 || (proc = add_proc(t, t->root_tid, (size_t)-1)) < 0) {
		errno = ENOMEM;
		goto fail_errno;
	}
	/* Held before its exec, blocked on a read: seizing does not stop
	 * it, and every task it makes from now on is ours to see. */
	if (ptrace(PTRACE_SEIZE, t->root_tid, 0, (void *)(long)TRACE_OPTIONS))
		goto fail_errno;
	t->tasks[task].state = TASK_LIVE;
	err = join_proc(t, (size_t)task, (size_t)proc);
	if (!err)
		err = open_counters(t, (size_t)task, true);
	if (err) {
		errno = -err;
		goto fail_errno;
	}
	return t;

fail_errno:
	err = errno;
	perfctr_tree__delete(t);
	errno = err;
	return NULL;
}

int perfctr_tree__detach(struct perfctr_tree *t)
{
	if (!t)
		return pc_err(EINVAL);
	if (t->nr_watched) {
		t->root_done = true;
		finish(t);
	}
	return 0;
}

void perfctr_tree__delete(struct perfctr_tree *t)
{
	if (!t)
		return;
	/* Tasks still traced must not wait for us for ever. */
	if (t->nr_watched) {
		t->root_done = true;
		finish(t);
	}
	for (size_t i = 0; i < t->nr_tasks; i++) {
		pc_engine__delete(t->tasks[i].engine);
		free(t->tasks[i].counts);
	}
	for (size_t i = 0; i < t->nr_procs; i++) {
		free(t->procs[i].tasks);
		free(t->procs[i].children);
		free(t->procs[i].exe);
		free(t->procs[i].self);
		free(t->procs[i].subtree);
	}
	for (size_t e = 0; e < t->nr_events; e++) {
		free(t->events[e].filter);
		free(t->events[e].cpus);
	}
	free(t->events);
	free(t->tasks);
	free(t->watched);
	free(t->procs);
	free(t->early);
	free(t);
}

/* Self and subtree sums of every process; children come after their
 * parent, so one backward walk adds each subtree into its parent's. */
static int update_sums(struct perfctr_tree *t)
{
	size_t n = t->nr_events;

	if (!t->sums_stale)
		return 0;
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct tree_proc *p = &t->procs[i];

		if (!p->self)
			p->self = calloc(n, sizeof(*p->self));
		if (!p->subtree)
			p->subtree = calloc(n, sizeof(*p->subtree));
		if (!p->self || !p->subtree)
			return -ENOMEM;
		for (size_t e = 0; e < n; e++) {
			memset(&p->self[e], 0, sizeof(p->self[e]));
			p->self[e].status = PERFCTR_COUNT_NOT_SUPPORTED;
			for (size_t k = 0; k < p->nr_tasks; k++)
				perfctr_count__add(&p->self[e],
						   &t->tasks[p->tasks[k]].counts[e]);
			p->subtree[e] = p->self[e];
		}
	}
	for (size_t i = t->nr_procs; i-- > 1;) {
		struct tree_proc *p = &t->procs[i];

		if (p->parent == (size_t)-1)
			continue;
		for (size_t e = 0; e < n; e++)
			perfctr_count__add(&t->procs[p->parent].subtree[e],
					   &p->subtree[e]);
	}
	t->sums_stale = false;
	return 0;
}

size_t perfctr_tree__nr_events(const struct perfctr_tree *t)
{
	return t ? t->nr_events : 0;
}

size_t perfctr_tree__nr_processes(const struct perfctr_tree *t)
{
	return t ? t->nr_procs : 0;
}

size_t perfctr_tree__nr_threads(const struct perfctr_tree *t, size_t proc)
{
	return t && proc < t->nr_procs ? t->procs[proc].nr_tasks : 0;
}

size_t perfctr_tree__child(const struct perfctr_tree *t, size_t proc,
			   size_t nth)
{
	if (!t || proc >= t->nr_procs || nth >= t->procs[proc].nr_children)
		return PERFCTR_TREE_NONE;
	return t->procs[proc].children[nth];
}

static void fill_node(struct perfctr_tree_node *node,
		      const struct perfctr_tree_node *full)
{
	size_t sz = node->sz < sizeof(*full) ? node->sz : sizeof(*full);

	memcpy((char *)node + sizeof(node->sz), (const char *)full + sizeof(full->sz),
	       sz - sizeof(node->sz));
}

int perfctr_tree__process(const struct perfctr_tree *t, size_t proc,
			  struct perfctr_tree_node *node)
{
	const struct tree_proc *p;
	struct perfctr_tree_node full = { 0 };

	if (!t || !node || node->sz < sizeof(node->sz) || proc >= t->nr_procs)
		return pc_err(EINVAL);
	p = &t->procs[proc];
	full.pid = p->pid;
	full.ppid = p->ppid;
	full.tid = p->pid;
	full.parent = p->parent;
	full.depth = p->depth;
	full.nr_threads = p->nr_tasks;
	full.nr_children = p->nr_children;
	full.comm = p->comm;
	full.exe = p->exe ? p->exe : "";
	full.start_ns = p->start_ns;
	full.running = p->live_tasks > 0 || p->detached_tasks > 0;
	full.end_ns = full.running ? 0 : p->end_ns;
	full.exit_status = full.running ? -1 : p->exit_status;
	fill_node(node, &full);
	return 0;
}

int perfctr_tree__thread(const struct perfctr_tree *t, size_t proc,
			 size_t thread, struct perfctr_tree_node *node)
{
	const struct tree_proc *p;
	const struct tree_task *k;
	struct perfctr_tree_node full = { 0 };

	if (!t || !node || node->sz < sizeof(node->sz) || proc >= t->nr_procs ||
	    thread >= t->procs[proc].nr_tasks)
		return pc_err(EINVAL);
	p = &t->procs[proc];
	k = &t->tasks[p->tasks[thread]];
	full.pid = p->pid;
	full.ppid = p->ppid;
	full.tid = k->tid;
	full.parent = p->parent;
	full.depth = p->depth;
	full.nr_threads = 1;
	full.comm = k->comm;
	full.exe = p->exe ? p->exe : "";
	full.start_ns = k->start_ns;
	full.running = k->state == TASK_LIVE || k->detached;
	full.end_ns = full.running ? 0 : k->end_ns;
	full.exit_status = full.running ? -1 : k->exit_status;
	fill_node(node, &full);
	return 0;
}

static int proc_count(const struct perfctr_tree *ct, size_t proc, size_t ev,
		      struct perfctr_count *count, bool subtree)
{
	/* The sums are a cache: refreshing them changes no visible state. */
	struct perfctr_tree *t = (struct perfctr_tree *)ct;
	int err;

	if (!t || !count || proc >= t->nr_procs || ev >= t->nr_events)
		return pc_err(EINVAL);
	err = update_sums(t);
	if (err)
		return pc_err(-err);
	*count = subtree ? t->procs[proc].subtree[ev] : t->procs[proc].self[ev];
	return 0;
}

int perfctr_tree__self(const struct perfctr_tree *t, size_t proc, size_t ev,
		       struct perfctr_count *count)
{
	return proc_count(t, proc, ev, count, false);
}

int perfctr_tree__subtree(const struct perfctr_tree *t, size_t proc,
			  size_t ev, struct perfctr_count *count)
{
	return proc_count(t, proc, ev, count, true);
}

int perfctr_tree__thread_count(const struct perfctr_tree *t, size_t proc,
			       size_t thread, size_t ev,
			       struct perfctr_count *count)
{
	if (!t || !count || proc >= t->nr_procs ||
	    thread >= t->procs[proc].nr_tasks || ev >= t->nr_events)
		return pc_err(EINVAL);
	*count = t->tasks[t->procs[proc].tasks[thread]].counts[ev];
	return 0;
}
