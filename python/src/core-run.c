// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._core.run(): what `perfex -e EVENTS -- argv` does, as data: the
 * command forked and held before its exec, a session attached to it
 * (children and threads inherited), optionally its process tree traced
 * (include/perfctr/tree.h: each process's own counts and its subtree's),
 * the command started and waited for without the GIL, the counts read.
 * perfctr.run() turns the dict it returns into objects.
 */
#include "core.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

typedef int (*tree_count_fn)(const struct perfctr_tree *, size_t, size_t,
			     struct perfctr_count *);

/* The counts of one process (self or subtree) or of one of its threads. */
struct tree_counts {
	const struct perfctr_tree *tree;
	size_t proc, thread;
	tree_count_fn fn;	/* NULL: thread's */
};

static PyObject *tree_count_item(const void *ctx, size_t e)
{
	const struct tree_counts *tc = ctx;
	struct perfctr_count c;

	if (tc->fn)
		tc->fn(tc->tree, tc->proc, e, &c);
	else
		perfctr_tree__thread_count(tc->tree, tc->proc, tc->thread, e, &c);
	return pyc_count_tuple(&c);
}

static PyObject *tree_counts(const struct tree_counts *tc)
{
	return pyc_list(perfctr_tree__nr_events(tc->tree), tree_count_item, tc);
}

static PyObject *node_dict(const struct perfctr_tree_node *n)
{
	return Py_BuildValue("{s:i,s:i,s:i,s:n,s:I,s:s,s:s,s:K,s:K,s:i,s:O}",
			     "pid", (int)n->pid, "ppid", (int)n->ppid,
			     "tid", (int)n->tid,
			     "parent", n->parent == PERFCTR_TREE_NONE ?
			     (Py_ssize_t)-1 : (Py_ssize_t)n->parent,
			     "depth", n->depth, "comm", n->comm, "exe", n->exe,
			     "start_ns", (unsigned long long)n->start_ns,
			     "end_ns", (unsigned long long)n->end_ns,
			     "exit_status", n->exit_status,
			     "running", n->running ? Py_True : Py_False);
}

/* @row (a new reference, or NULL) with @key set to @value (a new
 * reference, or NULL: then the row is dropped). */
static PyObject *with_item(PyObject *row, const char *key, PyObject *value)
{
	if (row && (!value || PyDict_SetItemString(row, key, value) < 0))
		Py_CLEAR(row);
	Py_XDECREF(value);
	return row;
}

static PyObject *thread_item(const void *ctx, size_t t)
{
	const struct tree_counts *proc = ctx;
	struct tree_counts tc = { proc->tree, proc->proc, t, NULL };
	struct perfctr_tree_node node = { .sz = sizeof(node) };

	perfctr_tree__thread(proc->tree, proc->proc, t, &node);
	return with_item(node_dict(&node), "counts", tree_counts(&tc));
}

static PyObject *process_item(const void *tree, size_t p)
{
	struct perfctr_tree_node node = { .sz = sizeof(node) };
	struct tree_counts self = { tree, p, 0, perfctr_tree__self };
	struct tree_counts sub = { tree, p, 0, perfctr_tree__subtree };
	PyObject *row;

	perfctr_tree__process(tree, p, &node);
	row = with_item(node_dict(&node), "self", tree_counts(&self));
	row = with_item(row, "subtree", tree_counts(&sub));
	return with_item(row, "threads",
			 pyc_list(perfctr_tree__nr_threads(tree, p),
				  thread_item, &self));
}

static PyObject *tree_rows(const struct perfctr_tree *tree)
{
	return pyc_list(perfctr_tree__nr_processes(tree), process_item, tree);
}

static PyObject *session_row(const void *s, size_t e)
{
	struct perfctr_count c;

	perfctr_session__count(s, e, &c);
	return Py_BuildValue("(snN)", perfctr_session__event_name(s, e),
			     (Py_ssize_t)perfctr_session__event_leader(s, e),
			     pyc_count_tuple(&c));
}

static PyObject *session_rows(const struct perfctr_session *s)
{
	return pyc_list(perfctr_session__nr_events(s), session_row, s);
}

/* Wait for the command (through the tree when there is one), letting
 * Python's signal handlers run between waits.  0 or -1 + exception. */
static int wait_for(PyObject *target, struct perfctr_target *t,
		    struct perfctr_tree *tree, int *status)
{
	int err;

	for (;;) {
		Py_BEGIN_ALLOW_THREADS
		err = tree ? perfctr_tree__wait(tree, status)
			   : perfctr_target__wait(t, status);
		Py_END_ALLOW_THREADS
		if (err != -EINTR)
			break;
		if (PyErr_CheckSignals() < 0) {
			perfctr_target__kill(t, SIGKILL);
			return -1;
		}
	}
	if (err < 0) {
		pyc_raise_as(pyc_errors.target, -err, NULL,
			     "cannot wait for the command: %s", strerror(-err));
		return -1;
	}
	return 0;
}

PyObject *pyc_run(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "target", "events", "tree", NULL };
	PyObject *target, *events, *keep = NULL, *out = NULL;
	struct perfctr_parse_error perr = { .sz = sizeof(perr) };
	struct perfctr_session *s = NULL;
	struct perfctr_tree *tree = NULL;
	struct perfctr_target *t;
	const char *text;
	uint64_t start, end;
	int want_tree = 0, status = -1, err;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O|p", kwlist,
					 &pyc_target_type, &target, &events,
					 &want_tree))
		return NULL;
	t = pyc_target_get(target);
	if (!t || perfctr_target__kind(t) != PERFCTR_TARGET_COMMAND)
		return PyErr_Format(PyExc_ValueError, "run() needs a command "
				    "target not started yet");
	text = pyc_events_text(events, &keep);
	if (!text)
		goto out;
	s = perfctr_session__new(NULL);
	if (!s) {
		PyErr_NoMemory();
		goto out;
	}
	err = perfctr_session__add_events(s, text, &perr);
	if (err < 0) {
		pyc_raise_parse(text, &perr, err);
		goto out;
	}
	Py_BEGIN_ALLOW_THREADS
	err = perfctr_session__attach(s, t);
	Py_END_ALLOW_THREADS
	if (err < 0) {
		pyc_raise_attach(s, err);
		goto out;
	}
	if (want_tree) {
		tree = perfctr_tree__new(s, t, NULL);
		if (!tree) {
			err = errno;
			pyc_raise(err, err == EPERM ? "a traced command cannot "
				  "be traced again (gdb, strace)" : NULL,
				  "cannot trace the command's processes: %s",
				  strerror(err));
			goto out;
		}
	}
	start = now_ns();
	Py_BEGIN_ALLOW_THREADS
	err = perfctr_target__start(t);
	Py_END_ALLOW_THREADS
	if (err < 0 && err != -EALREADY) {
		pyc_raise_as(pyc_errors.target, -err, NULL,
			     "cannot run the command: %s", strerror(-err));
		perfctr_target__wait(t, NULL);
		goto out;
	}
	if (wait_for(target, t, tree, &status) < 0)
		goto out;
	end = now_ns();
	Py_BEGIN_ALLOW_THREADS
	perfctr_session__detach(s);
	Py_END_ALLOW_THREADS
	out = Py_BuildValue("{s:i,s:K,s:N}", "status", status,
			    "wall_ns", (unsigned long long)(end - start),
			    "counts", session_rows(s));
	if (out && tree) {
		PyObject *rows = tree_rows(tree);

		if (!rows || PyDict_SetItemString(out, "processes", rows) < 0)
			Py_CLEAR(out);
		Py_XDECREF(rows);
	}
out:
	Py_BEGIN_ALLOW_THREADS
	perfctr_tree__delete(tree);
	perfctr_session__delete(s);
	Py_END_ALLOW_THREADS
	Py_XDECREF(keep);
	return out;
}
