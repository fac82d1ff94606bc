// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._data: the handler loop of `perfex script -s`, in C so that a
 * sample costs one handler call and the objects of its arguments.  The
 * protocol is perf script's Python one (perf-script-python(1)):
 *  - a tracepoint sample goes to `<system>__<event>(event_name, context,
 *    common_cpu, common_secs, common_nsecs, common_pid, common_comm,
 *    common_callchain, <fields>...)`, plus perf_sample_dict when the
 *    handler takes one more argument; without that handler to
 *    `trace_unhandled(event_name, context, fields_dict)` (the common_*
 *    values in the dict too), again with perf_sample_dict when it takes it;
 *  - any other sample goes to `process_event(perf_sample_dict)`.
 * Which handler each event has is decided by perfctr/script (the table
 * passed in); this file builds the arguments and calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

enum handler_kind {
	H_NONE = 0,
	H_TRACEPOINT = 1,
	H_UNHANDLED = 2,
	H_PROCESS = 3,
};

struct handler {
	enum handler_kind kind;
	PyObject *fn;		/* borrowed from the table */
	PyObject *name;		/* "sys__event", borrowed */
	bool sample_dict;
	const struct perfctr_tp_format *tp;
	PyObject **field_names;	/* interned str, per field */
};

static PyObject *key_ip, *key_sym, *key_name, *key_dso;

static PyObject *callchain_list(ReaderObject *r)
{
	const struct perfctr_reader_sample *rs = &r->cur;
	PyObject *l;

	if (!r->callchain || !rs->sample->callchain_nr)
		return PyList_New(0);
	l = PyList_New((Py_ssize_t)rs->nr_frames);
	for (size_t i = 0; l && i < rs->nr_frames; i++) {
		const struct perfctr_frame *f = &rs->frames[i];
		PyObject *d = PyDict_New(), *v;

		if (!d)
			goto fail;
		PyList_SET_ITEM(l, (Py_ssize_t)i, d);
		v = PyLong_FromUnsignedLongLong(rs->ips ? rs->ips[i] : f->addr);
		if (!v || PyDict_SetItem(d, key_ip, v))
			goto fail_v;
		Py_DECREF(v);
		if (f->sym) {
			v = Py_BuildValue("{ON}", key_name, data_str_or_none(f->sym));
			if (!v || PyDict_SetItem(d, key_sym, v))
				goto fail_v;
			Py_DECREF(v);
		}
		if (f->dso) {
			v = data_str_or_none(f->dso);
			if (!v || PyDict_SetItem(d, key_dso, v))
				goto fail_v;
			Py_DECREF(v);
		}
		continue;
fail_v:
		Py_XDECREF(v);
		goto fail;
	}
	return l;
fail:
	Py_XDECREF(l);
	return NULL;
}

/* perf's perf_sample_dict: the event, the sample's values, its symbol. */
static PyObject *sample_dict(ReaderObject *r, PyObject *callchain)
{
	const struct perfctr_reader_sample *rs = &r->cur;
	const struct perfctr_sample *s = rs->sample;
	const struct perf_event_attr *attr =
		perfctr_reader__event_attr(r->rd, rs->event_idx);
	PyObject *d, *sd, *v;

	sd = Py_BuildValue("{sKsKsisisisKsKsKsKsKsKsKsi}",
		"id", (unsigned long long)s->id,
		"stream_id", (unsigned long long)s->stream_id,
		"pid", (int)rs->pid, "tid", (int)rs->tid,
		"cpu", s->type & PERF_SAMPLE_CPU ? (int)s->cpu : -1,
		"ip", (unsigned long long)s->ip,
		"time", (unsigned long long)s->time,
		"period", (unsigned long long)s->period,
		"phys_addr", (unsigned long long)s->phys_addr,
		"addr", (unsigned long long)s->addr,
		"weight", (unsigned long long)s->weight,
		"transaction", (unsigned long long)s->transaction,
		"cpumode", (int)(s->misc & PERF_RECORD_MISC_CPUMODE_MASK));
	if (!sd)
		return NULL;
	d = Py_BuildValue("{sOsNsNsNsOsN}",
		"ev_name", PyTuple_GET_ITEM(r->event_names, (Py_ssize_t)rs->event_idx),
		"attr", PyBytes_FromStringAndSize((const char *)attr,
						  attr ? (Py_ssize_t)sizeof(*attr) : 0),
		"sample", sd,
		"raw_buf", PyBytes_FromStringAndSize(s->raw ? s->raw : "",
						     (Py_ssize_t)s->raw_size),
		"callchain", callchain,
		"comm", data_str_or_none(rs->comm ? rs->comm : ":-1"));
	if (!d)
		return NULL;
	if (rs->nr_frames && rs->frames[0].dso) {
		v = data_str_or_none(rs->frames[0].dso);
		if (!v || PyDict_SetItemString(d, "dso", v))
			goto fail;
		Py_DECREF(v);
	}
	if (rs->nr_frames && rs->frames[0].sym) {
		v = data_str_or_none(rs->frames[0].sym);
		if (!v || PyDict_SetItemString(d, "symbol", v))
			goto fail;
		Py_DECREF(v);
	}
	return d;
fail:
	Py_XDECREF(v);
	Py_DECREF(d);
	return NULL;
}

static int set_str(PyObject *d, const char *key, PyObject *v)
{
	int r = v ? PyDict_SetItemString(d, key, v) : -1;

	Py_XDECREF(v);
	return r;
}

/* The arguments of a tracepoint handler or of trace_unhandled. */
static PyObject *trace_args(ReaderObject *r, const struct handler *h)
{
	const struct perfctr_reader_sample *rs = &r->cur;
	const struct perfctr_sample *s = rs->sample;
	size_t nf = h->tp ? data_tp_nr_fields(h->tp) : 0;
	bool unhandled = h->kind == H_UNHANDLED;
	Py_ssize_t n = unhandled ? 3 : 8 + (Py_ssize_t)nf, k = 0;
	long pid = h->tp ? data_tp_common_pid(h->tp, s->raw, s->raw_size) : -1;
	PyObject *t, *callchain, *cpu, *secs, *nsecs, *pyp, *comm, *d = NULL;

	if (pid < 0)
		pid = rs->tid;
	t = PyTuple_New(n + h->sample_dict);
	if (!t)
		return NULL;
	callchain = callchain_list(r);
	cpu = PyLong_FromLong(s->type & PERF_SAMPLE_CPU ? (long)s->cpu : -1);
	secs = PyLong_FromUnsignedLongLong(s->time / 1000000000ull);
	nsecs = PyLong_FromUnsignedLongLong(s->time % 1000000000ull);
	pyp = PyLong_FromLong(pid);
	comm = data_str_or_none(rs->comm ? rs->comm : ":-1");
	Py_INCREF(h->name);
	PyTuple_SET_ITEM(t, k++, h->name);
	Py_INCREF((PyObject *)r);
	PyTuple_SET_ITEM(t, k++, (PyObject *)r);
	if (!callchain || !cpu || !secs || !nsecs || !pyp || !comm)
		goto fail;
	if (h->sample_dict) {
		PyObject *sd = sample_dict(r, callchain);

		if (!sd)
			goto fail;
		PyTuple_SET_ITEM(t, n, sd);
	}
	if (unhandled) {
		d = PyDict_New();
		if (!d || set_str(d, "common_cpu", cpu) ||
		    set_str(d, "common_s", secs) || set_str(d, "common_ns", nsecs) ||
		    set_str(d, "common_pid", pyp) ||
		    set_str(d, "common_comm", comm) ||
		    set_str(d, "common_callchain", callchain)) {
			cpu = secs = nsecs = pyp = comm = callchain = NULL;
			goto fail;
		}
		PyTuple_SET_ITEM(t, k++, d);
	} else {
		PyTuple_SET_ITEM(t, k++, cpu);
		PyTuple_SET_ITEM(t, k++, secs);
		PyTuple_SET_ITEM(t, k++, nsecs);
		PyTuple_SET_ITEM(t, k++, pyp);
		PyTuple_SET_ITEM(t, k++, comm);
		PyTuple_SET_ITEM(t, k++, callchain);
	}
	cpu = secs = nsecs = pyp = comm = callchain = NULL;
	for (size_t i = 0; i < nf; i++) {
		PyObject *v = data_tp_field(h->tp, i, s->raw, s->raw_size);

		if (!v)
			goto fail;
		if (unhandled) {
			int e = PyDict_SetItem(d, h->field_names[i], v);

			Py_DECREF(v);
			if (e)
				goto fail;
		} else {
			PyTuple_SET_ITEM(t, k++, v);
		}
	}
	return t;
fail:
	Py_XDECREF(callchain);
	Py_XDECREF(cpu);
	Py_XDECREF(secs);
	Py_XDECREF(nsecs);
	Py_XDECREF(pyp);
	Py_XDECREF(comm);
	Py_DECREF(t);
	return NULL;
}

static void handlers_free(struct handler *hs, size_t n)
{
	for (size_t i = 0; hs && i < n; i++) {
		if (hs[i].field_names) {
			for (size_t k = 0; k < data_tp_nr_fields(hs[i].tp); k++)
				Py_XDECREF(hs[i].field_names[k]);
			free(hs[i].field_names);
		}
	}
	free(hs);
}

/* The table: one (kind, handler, takes_sample_dict, name) per event. */
static struct handler *handlers_new(ReaderObject *r, PyObject *table, size_t *nr)
{
	size_t n = perfctr_reader__nr_events(r->rd);
	struct handler *hs;

	if (!PyList_Check(table) || (size_t)PyList_GET_SIZE(table) != n) {
		PyErr_SetString(PyExc_TypeError,
				"perfctr: run_script: a list of one entry per event");
		return NULL;
	}
	hs = calloc(n ? n : 1, sizeof(*hs));
	if (!hs) {
		PyErr_NoMemory();
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		PyObject *e = PyList_GET_ITEM(table, (Py_ssize_t)i);
		const struct perf_event_attr *attr =
			perfctr_reader__event_attr(r->rd, i);
		int kind, sd;

		if (!PyArg_ParseTuple(e, "iOpO", &kind, &hs[i].fn, &sd, &hs[i].name))
			goto fail;
		hs[i].kind = (enum handler_kind)kind;
		hs[i].sample_dict = sd;
		if (attr && attr->type == PERF_TYPE_TRACEPOINT)
			hs[i].tp = data_trace_find(reader_trace(r), attr->config);
		if (!hs[i].tp)
			continue;
		hs[i].field_names = calloc(data_tp_nr_fields(hs[i].tp) + 1,
					   sizeof(PyObject *));
		if (!hs[i].field_names) {
			PyErr_NoMemory();
			goto fail;
		}
		for (size_t k = 0; k < data_tp_nr_fields(hs[i].tp); k++) {
			hs[i].field_names[k] =
				PyUnicode_InternFromString(data_tp_field_name(hs[i].tp, k));
			if (!hs[i].field_names[k])
				goto fail;
		}
	}
	*nr = n;
	return hs;
fail:
	handlers_free(hs, n);
	return NULL;
}

PyObject *data_run_script(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "reader", "table", NULL };
	ReaderObject *r;
	PyObject *table;
	struct handler *hs;
	size_t nr = 0;
	long long handled = 0;
	int ret;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O", kwlist,
					 &ReaderType, &r, &table))
		return NULL;
	if (!r->rd) {
		PyErr_SetString(PyExc_ValueError, "perfctr: the reader is closed");
		return NULL;
	}
	hs = handlers_new(r, table, &nr);
	if (!hs)
		return NULL;
	while ((ret = reader_next(r)) > 0) {
		const struct handler *h = &hs[r->cur.event_idx];
		PyObject *a, *res;

		if (h->kind == H_NONE)
			continue;
		if (h->kind == H_PROCESS) {
			PyObject *cc = callchain_list(r);
			PyObject *sd = cc ? sample_dict(r, cc) : NULL;

			Py_XDECREF(cc);
			a = sd ? PyTuple_Pack(1, sd) : NULL;
			Py_XDECREF(sd);
		} else {
			a = trace_args(r, h);
		}
		if (!a)
			break;
		res = PyObject_Call(h->fn, a, NULL);
		Py_DECREF(a);
		if (!res) {
			ret = -1;
			break;
		}
		Py_DECREF(res);
		handled++;
	}
	handlers_free(hs, nr);
	if (ret < 0 || PyErr_Occurred())
		return NULL;
	return PyLong_FromLongLong(handled);
}

PyObject *data_tracepoint_fields(PyObject *self, PyObject *args)
{
	ReaderObject *r;
	Py_ssize_t idx;
	const struct perf_event_attr *attr;
	const struct perfctr_tp_format *tp;
	PyObject *names;

	if (!PyArg_ParseTuple(args, "O!n", &ReaderType, &r, &idx))
		return NULL;
	if (!r->rd || idx < 0)
		Py_RETURN_NONE;
	attr = perfctr_reader__event_attr(r->rd, (size_t)idx);
	if (!attr || attr->type != PERF_TYPE_TRACEPOINT)
		Py_RETURN_NONE;
	tp = data_trace_find(reader_trace(r), attr->config);
	if (!tp)
		Py_RETURN_NONE;
	names = PyTuple_New((Py_ssize_t)data_tp_nr_fields(tp));
	for (size_t i = 0; names && i < data_tp_nr_fields(tp); i++) {
		PyObject *s = PyUnicode_FromString(data_tp_field_name(tp, i));

		if (!s) {
			Py_CLEAR(names);
			break;
		}
		PyTuple_SET_ITEM(names, (Py_ssize_t)i, s);
	}
	if (!names)
		return NULL;
	return Py_BuildValue("(ssN)", perfctr_tp_format__system(tp),
			     perfctr_tp_format__name(tp), names);
}

/* perf_trace_context's common_pc() etc.: a common field of the payload of
 * the sample being handled (context is the reader). */
static PyObject *data_context_common(PyObject *self, PyObject *args)
{
	ReaderObject *r;
	const char *name;
	const struct perf_event_attr *attr;
	const struct perfctr_tp_format *tp;

	if (!PyArg_ParseTuple(args, "O!s", &ReaderType, &r, &name))
		return NULL;
	if (!r->rd || !r->have_cur)
		Py_RETURN_NONE;
	attr = perfctr_reader__event_attr(r->rd, r->cur.event_idx);
	tp = attr && attr->type == PERF_TYPE_TRACEPOINT ?
	     data_trace_find(reader_trace(r), attr->config) : NULL;
	if (!tp)
		Py_RETURN_NONE;
	return PyLong_FromLong(data_tp_common(tp, name, r->cur.sample->raw,
					      r->cur.sample->raw_size));
}

static PyMethodDef script_methods[] = {
	{ "context_common", data_context_common, METH_VARARGS,
	  "context_common(context, name) -> int or None\n\nCommon field name "
	  "(common_flags, common_preempt_count...) of the tracepoint sample "
	  "being handled." },
	{ NULL, NULL, 0, NULL },
};

int data_script_init(PyObject *module)
{
	key_ip = PyUnicode_InternFromString("ip");
	key_sym = PyUnicode_InternFromString("sym");
	key_name = PyUnicode_InternFromString("name");
	key_dso = PyUnicode_InternFromString("dso");
	if (!key_ip || !key_sym || !key_name || !key_dso)
		return -1;
	return PyModule_AddFunctions(module, script_methods);
}
