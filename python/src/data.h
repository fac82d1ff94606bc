/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfctr._data: what its C files share.  data.c holds the module and the
 * Reader type, data_trace.c the fields of a tracepoint payload, data_record.c
 * perfctr.record(), data_profile.c the profiles and exports, data_script.c
 * the handler loop of `perfex script -s`.
 */
#ifndef PERFCTR_PY_DATA_H
#define PERFCTR_PY_DATA_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <perfctr/perfctr.h>
#include <perfctr/reader.h>

/* ---- errors ---- */

/* Raise OSError(err, "perfctr: <message>: strerror(err)") (Python maps the
 * errno to its subclass: FileNotFoundError, PermissionError...) and
 * return NULL. */
PyObject *data_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- the fields of a tracepoint payload (data_trace.c) ---- */

/* The format of tracepoint id @id in @t (a file's formats, NULL when it
 * has none), NULL when there is none. */
const struct perfctr_tp_format *data_trace_find(const struct perfctr_tp_formats *t,
						uint64_t id);

/* Its fields (not the common_* ones), in format order. */
size_t data_tp_nr_fields(const struct perfctr_tp_format *tp);
const char *data_tp_field_name(const struct perfctr_tp_format *tp, size_t i);

/* Field @i of payload @raw as a Python object, as perf's scripting
 * hands it over (new reference; NULL with an exception set). */
PyObject *data_tp_field(const struct perfctr_tp_format *tp, size_t i,
			const void *raw, size_t size);

/* The payload's common_pid, -1 when the format has none or the payload
 * is too short. */
long data_tp_common_pid(const struct perfctr_tp_format *tp, const void *raw,
			size_t size);

/* Common field @name ("common_flags", "common_preempt_count"...) as a
 * number, -1 when absent. */
long data_tp_common(const struct perfctr_tp_format *tp, const char *name,
		    const void *raw, size_t size);

/* ---- the Reader type (data.c) ---- */

typedef struct {
	PyObject_HEAD
	struct perfctr_reader *rd;
	const struct perfctr_tp_formats *trace;	/* the reader's */
	PyObject *path;		/* str */
	PyObject *event_names;	/* tuple of str */
	bool callchain;
	bool fields;
	bool done;
	/* The sample last handed over (valid until the next one). */
	struct perfctr_reader_sample cur;
	bool have_cur;
} ReaderObject;

extern PyTypeObject ReaderType;

/* The next sample of @r (1), 0 at the end, -1 with an exception set. */
int reader_next(ReaderObject *r);

/* The tracepoint formats of @r, read at the first call (NULL: none). */
const struct perfctr_tp_formats *reader_trace(ReaderObject *r);

/* "perfctr: cannot read 'PATH': ..." for a failed perfctr_reader__next(). */
PyObject *reader_error(ReaderObject *r, int err);

/* A str of @s, None for NULL (new reference). */
PyObject *data_str_or_none(const char *s);

/* ---- the other files' functions, methods of the module ---- */

PyObject *data_record(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *data_profile(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *data_folded(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *data_pprof(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *data_run_script(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *data_tracepoint_fields(PyObject *self, PyObject *args);
int data_script_init(PyObject *module);

#endif /* PERFCTR_PY_DATA_H */
