/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfctr._data: what its C files share.  data.c holds the module and the
 * Reader type, data_trace.c the tracepoint formats of a file, data_record.c
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

/* ---- the tracepoint formats of a file (data_trace.c) ---- */

struct data_trace;
struct data_tp;

/* The formats of @rd's file (its TRACING_DATA); NULL when it has none or
 * they cannot be read (then tracepoint samples have no fields). */
struct data_trace *data_trace_new(struct perfctr_reader *rd);
void data_trace_free(struct data_trace *t);

/* The format of tracepoint id @id, NULL when the file has none. */
const struct data_tp *data_trace_find(const struct data_trace *t, uint64_t id);

/* Its subsystem and name, as the handler name "sys__name" joins them. */
const char *data_tp_system(const struct data_tp *tp);
const char *data_tp_name(const struct data_tp *tp);

/* Its fields (not the common_* ones), in format order. */
size_t data_tp_nr_fields(const struct data_tp *tp);
const char *data_tp_field_name(const struct data_tp *tp, size_t i);

/* Field @i of payload @raw as a Python object, as perf's scripting
 * hands it over (new reference; NULL with an exception set). */
PyObject *data_tp_field(const struct data_tp *tp, size_t i,
			const void *raw, size_t size);

/* The payload's common_pid, -1 when the format has none or the payload
 * is too short. */
long data_tp_common_pid(const struct data_tp *tp, const void *raw, size_t size);

/* Common field @name ("common_flags", "common_preempt_count"...) as a
 * number, -1 when absent. */
long data_tp_common(const struct data_tp *tp, const char *name,
		    const void *raw, size_t size);

/* ---- the Reader type (data.c) ---- */

typedef struct {
	PyObject_HEAD
	struct perfctr_reader *rd;
	struct data_trace *trace;
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
const struct data_trace *reader_trace(ReaderObject *r);

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
