// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._data: profiles of a recording (perfctr_profile: flat rows by
 * sort keys, call graphs, the stack tree that folded stacks come from) and
 * its pprof export (perfctr_pprof).  The samples are read and aggregated
 * without the GIL; only the results become Python objects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

/* Every remaining sample of @r (of event @event, or all when < 0) into
 * @prof, without the GIL.  Return 0 or -errno (-EIO-like read errors are
 * the reader's). */
static int add_samples(ReaderObject *r, struct perfctr_profile *prof,
		       long event, bool *read_err)
{
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	int ret;

	*read_err = false;
	while ((ret = perfctr_reader__next(r->rd, &rs)) > 0) {
		PERFCTR_OPTS(perfctr_profile_sample, ps, .comm = rs.comm,
			     .pid = rs.pid, .tid = rs.tid,
			     .cpu = rs.sample->type & PERF_SAMPLE_CPU ?
				    (int32_t)rs.sample->cpu : -1,
			     .weight = rs.sample->period ? rs.sample->period : 1,
			     .frames = rs.frames, .nr_frames = rs.nr_frames);

		if (event >= 0 && rs.event_idx != (size_t)event)
			continue;
		ret = perfctr_profile__add(prof, &ps);
		if (ret < 0 && ret != -EINVAL)
			return ret;
	}
	if (ret < 0)
		*read_err = true;
	else
		r->done = true;
	r->have_cur = false;
	return ret < 0 ? ret : 0;
}

static int reader_ready(ReaderObject *r)
{
	if (!r->rd) {
		PyErr_SetString(PyExc_ValueError, "perfctr: the reader is closed");
		return -1;
	}
	if (r->done) {
		PyErr_SetString(PyExc_ValueError,
				"perfctr: the reader is at its end (open the file again)");
		return -1;
	}
	return 0;
}

/* Node @n and everything under it as (name, dso, total, self, children). */
static PyObject *node_tree(struct perfctr_profile *prof,
			   const struct perfctr_profile_node *n, int depth)
{
	PyObject *children = PyList_New(0), *res;

	if (!children)
		return NULL;
	for (size_t i = 0; depth < 1000 && i < n->nr_children; i++) {
		struct perfctr_profile_node c = { .sz = sizeof(c) };
		PyObject *sub;

		if (perfctr_profile__child(prof, n, i, &c)) {
			Py_DECREF(children);
			return PyErr_NoMemory();
		}
		sub = node_tree(prof, &c, depth + 1);
		if (!sub || PyList_Append(children, sub)) {
			Py_XDECREF(sub);
			Py_DECREF(children);
			return NULL;
		}
		Py_DECREF(sub);
	}
	res = Py_BuildValue("(NNKKN)", data_str_or_none(n->name),
			    data_str_or_none(n->dso),
			    (unsigned long long)n->total,
			    (unsigned long long)n->self, children);
	return res;
}

/* A profile of @r's remaining samples (of event @event, or all when < 0)
 * made with @opts, or NULL with an exception. */
static struct perfctr_profile *profile_of(ReaderObject *r,
					  const struct perfctr_profile_opts *opts,
					  long event)
{
	struct perfctr_profile *prof = perfctr_profile__new(opts);
	bool read_err;
	int ret;

	if (!prof) {
		data_error(errno, "cannot make a profile");
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	ret = add_samples(r, prof, event, &read_err);
	Py_END_ALLOW_THREADS
	if (ret < 0) {
		if (read_err)
			reader_error(r, -ret);
		else
			data_error(-ret, "cannot add a sample to the profile");
		perfctr_profile__delete(prof);
		return NULL;
	}
	return prof;
}

/* @callgraph (None, "callee" or "caller") into @mode.  Return 0, or -1
 * with an exception. */
static int callgraph_mode(const char *callgraph,
			  enum perfctr_callgraph_order *mode)
{
	if (!callgraph)
		*mode = PERFCTR_CALLGRAPH_NONE;
	else if (!strcmp(callgraph, "callee"))
		*mode = PERFCTR_CALLGRAPH_CALLEE;
	else if (!strcmp(callgraph, "caller"))
		*mode = PERFCTR_CALLGRAPH_CALLER;
	else {
		PyErr_Format(PyExc_ValueError,
			     "perfctr: callgraph is 'callee', 'caller' or None, "
			     "not '%s'", callgraph);
		return -1;
	}
	return 0;
}

/* The sort-key values of @e as a tuple (None for an unknown one). */
static PyObject *entry_keys(const struct perfctr_profile_entry *e)
{
	PyObject *k = PyTuple_New((Py_ssize_t)e->nr_keys);

	for (size_t j = 0; k && j < e->nr_keys; j++) {
		PyObject *s = data_str_or_none(e->keys[j]);

		if (!s) {
			Py_CLEAR(k);
			break;
		}
		PyTuple_SET_ITEM(k, (Py_ssize_t)j, s);
	}
	return k;
}

/* Entry @i's call graph as node_tree() gives it, or None. */
static PyObject *entry_callgraph(struct perfctr_profile *prof, size_t i,
				 bool callgraph)
{
	struct perfctr_profile_node root = { .sz = sizeof(root) };

	if (!callgraph || perfctr_profile__callgraph_root(prof, i, &root))
		Py_RETURN_NONE;
	return node_tree(prof, &root, 0);
}

/* Entry @i as (samples, weight, keys, kernel, pid, tid, callgraph); NULL
 * with an exception, or with none when the profile has no entry @i. */
static PyObject *entry_row(struct perfctr_profile *prof, size_t i,
			   bool callgraph)
{
	struct perfctr_profile_entry e = { .sz = sizeof(e) };
	PyObject *k, *cg;

	if (perfctr_profile__entry(prof, i, &e))
		return NULL;
	k = entry_keys(&e);
	if (!k)
		return NULL;
	cg = entry_callgraph(prof, i, callgraph);
	if (!cg) {
		Py_DECREF(k);
		return NULL;
	}
	return Py_BuildValue("(KKNNiiN)", (unsigned long long)e.samples,
			     (unsigned long long)e.weight, k,
			     PyBool_FromLong(e.kernel), (int)e.pid, (int)e.tid,
			     cg);
}

/* The rows of @prof as a list of entry_row()s, or NULL with an exception. */
static PyObject *profile_rows(struct perfctr_profile *prof, bool callgraph)
{
	PyObject *rows = PyList_New(0);

	for (size_t i = 0; rows && i < perfctr_profile__nr_entries(prof); i++) {
		PyObject *row = entry_row(prof, i, callgraph);

		if (!row && !PyErr_Occurred())
			break;
		if (!row || PyList_Append(rows, row))
			Py_CLEAR(rows);
		Py_XDECREF(row);
	}
	return rows;
}

/* profile()'s result: its sort keys' names, totals and @rows. */
static PyObject *profile_result(struct perfctr_profile *prof,
				const enum perfctr_sort_key *keys, int nkeys,
				PyObject *rows)
{
	PyObject *names = PyTuple_New(nkeys);

	for (int j = 0; names && j < nkeys; j++)
		PyTuple_SET_ITEM(names, j,
				 PyUnicode_FromString(perfctr_sort_key_name(keys[j])));
	return Py_BuildValue("{sNsKsKsO}", "keys", names,
			     "samples", (unsigned long long)perfctr_profile__samples(prof),
			     "weight", (unsigned long long)perfctr_profile__weight(prof),
			     "rows", rows);
}

PyObject *data_profile(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "reader", "sort", "callgraph", "event", NULL };
	enum perfctr_sort_key keys[PERFCTR_SORT_NR];
	const char *sort = "comm,dso,sym", *callgraph = NULL, *bad = NULL;
	PERFCTR_OPTS(perfctr_profile_opts, opts);
	struct perfctr_profile *prof;
	ReaderObject *r;
	PyObject *rows, *res = NULL;
	long event = -1;
	int nkeys;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|szl", kwlist,
					 &ReaderType, &r, &sort, &callgraph,
					 &event) || reader_ready(r))
		return NULL;
	nkeys = perfctr_sort_keys_parse(sort, keys, PERFCTR_SORT_NR, &bad);
	if (nkeys <= 0) {
		PyErr_Format(PyExc_ValueError, "perfctr: unknown sort key in '%s'",
			     sort);
		return NULL;
	}
	opts.keys = keys;
	opts.nr_keys = (size_t)nkeys;
	if (callgraph_mode(callgraph, &opts.callgraph))
		return NULL;
	prof = profile_of(r, &opts, event);
	if (!prof)
		return NULL;
	rows = profile_rows(prof, opts.callgraph != PERFCTR_CALLGRAPH_NONE);
	if (rows)
		res = profile_result(prof, keys, nkeys, rows);
	Py_XDECREF(rows);
	perfctr_profile__delete(prof);
	return res;
}

/* The stacks under @n: "comm;outer;...;inner" with the samples that
 * ended at each node. */
static int folded_walk(struct perfctr_profile *prof,
		       const struct perfctr_profile_node *n,
		       char *path, size_t len, size_t cap, PyObject *out,
		       int depth)
{
	size_t at = len;

	if (n->kind != PERFCTR_PROFILE_NODE_ROOT) {
		const char *name = n->name ? n->name : "[unknown]";
		int w = snprintf(path + len, cap - len, "%s%s",
				 len ? ";" : "", name);

		if (w < 0 || (size_t)w >= cap - len)
			return 0;	/* too deep for the buffer: cut */
		at = len + (size_t)w;
		for (size_t i = len + (len ? 1 : 0); i < at; i++)
			if (path[i] == ';')
				path[i] = ':';
		if (n->self) {
			PyObject *t = Py_BuildValue("(s#K)", path, (Py_ssize_t)at,
						    (unsigned long long)n->self);

			if (!t || PyList_Append(out, t)) {
				Py_XDECREF(t);
				return -1;
			}
			Py_DECREF(t);
		}
	}
	for (size_t i = 0; depth < 1000 && i < n->nr_children; i++) {
		struct perfctr_profile_node c = { .sz = sizeof(c) };

		if (perfctr_profile__child(prof, n, i, &c)) {
			PyErr_NoMemory();
			return -1;
		}
		if (folded_walk(prof, &c, path, at, cap, out, depth + 1))
			return -1;
	}
	return 0;
}

PyObject *data_folded(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "reader", "event", NULL };
	PERFCTR_OPTS(perfctr_profile_opts, opts);
	struct perfctr_profile_node root = { .sz = sizeof(root) };
	struct perfctr_profile *prof;
	ReaderObject *r;
	PyObject *out = NULL;
	long event = -1;
	char *path;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|l", kwlist,
					 &ReaderType, &r, &event) ||
	    reader_ready(r))
		return NULL;
	prof = profile_of(r, &opts, event);
	if (!prof)
		return NULL;
	path = malloc(1 << 16);
	out = PyList_New(0);
	if (!path || !out || perfctr_profile__stack_root(prof, &root) ||
	    folded_walk(prof, &root, path, 0, 1 << 16, out, 0)) {
		if (!PyErr_Occurred())
			PyErr_NoMemory();
		Py_CLEAR(out);
	}
	free(path);
	perfctr_profile__delete(prof);
	return out;
}

PyObject *data_pprof(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "reader", NULL };
	struct perfctr_pprof *pp;
	ReaderObject *r;
	void *buf = NULL;
	size_t size = 0;
	int64_t added;
	int ret = 0;
	PyObject *res;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!", kwlist,
					 &ReaderType, &r) || reader_ready(r))
		return NULL;
	pp = perfctr_pprof__new(NULL);
	if (!pp)
		return data_error(errno, "cannot make a pprof profile%s",
				  errno == ENOTSUP ?
				  " (libperfctr was built without protobuf-c)" : "");
	Py_BEGIN_ALLOW_THREADS
	added = perfctr_pprof__add_reader(pp, r->rd);
	if (added >= 0)
		ret = perfctr_pprof__encode(pp, &buf, &size);
	Py_END_ALLOW_THREADS
	r->done = true;
	r->have_cur = false;
	perfctr_pprof__delete(pp);
	if (added < 0)
		return reader_error(r, (int)-added);
	if (ret < 0)
		return data_error(-ret, "cannot encode the pprof profile");
	res = PyBytes_FromStringAndSize(buf, (Py_ssize_t)size);
	free(buf);
	return res;
}
