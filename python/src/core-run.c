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

static PyObject *tree_counts(const struct perfctr_tree *tree, size_t proc,
			     tree_count_fn fn)
{
	size_t n = perfctr_tree__nr_events(tree);
	PyObject *list = PyList_New(n);

	for (size_t e = 0; list && e < n; e++) {
		struct perfctr_count c;
		PyObject *t;

		fn(tree, proc, e, &c);
		t = pyc_count_tuple(&c);
		if (!t) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, e, t);
	}
	return list;
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

static PyObject *thread_rows(const struct perfctr_tree *tree, size_t p)
{
	size_t nt = perfctr_tree__nr_threads(tree, p);
	size_t ne = perfctr_tree__nr_events(tree);
	PyObject *list = PyList_New(nt);

	for (size_t t = 0; list && t < nt; t++) {
		struct perfctr_tree_node node = { .sz = sizeof(node) };
		PyObject *row, *counts = PyList_New(ne);

		for (size_t e = 0; counts && e < ne; e++) {
			struct perfctr_count c;

			perfctr_tree__thread_count(tree, p, t, e, &c);
			PyList_SET_ITEM(counts, e, pyc_count_tuple(&c));
		}
		perfctr_tree__thread(tree, p, t, &node);
		row = counts ? node_dict(&node) : NULL;
		if (!row || PyDict_SetItemString(row, "counts", counts) < 0) {
			Py_XDECREF(row);
			Py_XDECREF(counts);
			Py_CLEAR(list);
			break;
		}
		Py_DECREF(counts);
		PyList_SET_ITEM(list, t, row);
	}
	return list;
}

static PyObject *tree_rows(const struct perfctr_tree *tree)
{
	size_t np = perfctr_tree__nr_processes(tree);
	PyObject *list = PyList_New(np);

	for (size_t p = 0; list && p < np; p++) {
		struct perfctr_tree_node node = { .sz = sizeof(node) };
		PyObject *row, *self, *sub, *threads;

		perfctr_tree__process(tree, p, &node);
		row = node_dict(&node);
		self = tree_counts(tree, p, perfctr_tree__self);
		sub = tree_counts(tree, p, perfctr_tree__subtree);
		threads = thread_rows(tree, p);
		if (!row || !self || !sub || !threads ||
		    PyDict_SetItemString(row, "self", self) < 0 ||
		    PyDict_SetItemString(row, "subtree", sub) < 0 ||
		    PyDict_SetItemString(row, "threads", threads) < 0) {
			Py_XDECREF(row);
			Py_CLEAR(list);
		} else {
			PyList_SET_ITEM(list, p, row);
		}
		Py_XDECREF(self);
		Py_XDECREF(sub);
		Py_XDECREF(threads);
	}
	return list;
}

static PyObject *session_rows(const struct perfctr_session *s)
{
	size_t n = perfctr_session__nr_events(s);
	PyObject *list = PyList_New(n);

	for (size_t e = 0; list && e < n; e++) {
		struct perfctr_count c;

		perfctr_session__count(s, e, &c);
		PyList_SET_ITEM(list, e, Py_BuildValue(
			"(snN)", perfctr_session__event_name(s, e),
			(Py_ssize_t)perfctr_session__event_leader(s, e),
			pyc_count_tuple(&c)));
	}
	return list;
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
	PyObject *target, *events, *spec = NULL, *out = NULL;
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
	spec = pyc_spec(events);
	text = spec ? PyUnicode_AsUTF8(spec) : NULL;
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
	Py_XDECREF(spec);
	return out;
}
