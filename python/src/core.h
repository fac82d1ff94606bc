/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfctr._core: what its files share.  core.c holds the module, the
 * errors and the count tuples; core-session.c the Session and Target
 * types; core-counter.c the per-thread ThreadCounter (the vperfctr API);
 * core-run.c run() and its process tree; core-metric.c the metric tables.
 *
 * Every object carries a lock: the library's objects are not
 * synchronised, and the calls that may block run without the GIL, so
 * without it two Python threads could be inside one object at once.
 */
#ifndef PERFCTR_PY_CORE_H
#define PERFCTR_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <perfctr/perfctr.h>

/* The exception classes of perfctr._errors, set at import. */
struct pyc_errors {
	PyObject *error;	/* perfctr.Error */
	PyObject *event;	/* perfctr.EventError */
	PyObject *unsupported;	/* perfctr.NotSupportedError */
	PyObject *permission;	/* perfctr.PermissionError */
	PyObject *tracefs;	/* perfctr.TracefsError */
	PyObject *target;	/* perfctr.TargetError */
};

extern struct pyc_errors pyc_errors;

/* Raise the class that fits @errnum (a positive errno) with perfctr's
 * @message and a @hint (NULL or "" for none): a permission error gets
 * the cure for this machine (perf_event_paranoid, perfctrd).  Return
 * NULL, for `return pyc_raise(...)`. */
PyObject *pyc_raise(int errnum, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same with the class given. */
PyObject *pyc_raise_as(PyObject *cls, int errnum, const char *hint,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A failed parse of @spec, as perfex reports it. */
PyObject *pyc_raise_parse(const char *spec,
			  const struct perfctr_parse_error *err, int ret);
/* A failed attach of @session: the event, the errno, the broker. */
PyObject *pyc_raise_attach(const struct perfctr_session *session, int ret);

/* (value, time_enabled, time_running, status, errnum): the raw form of a
 * count, which the package's Count is made from. */
PyObject *pyc_count_tuple(const struct perfctr_count *count);

/* Lock @lock without holding the GIL while waiting for it. */
static inline void pyc_lock(PyThread_type_lock lock)
{
	if (!PyThread_acquire_lock(lock, NOWAIT_LOCK)) {
		Py_BEGIN_ALLOW_THREADS
		PyThread_acquire_lock(lock, WAIT_LOCK);
		Py_END_ALLOW_THREADS
	}
}

/* ---- what the types' methods share (core.c) ---- */

/* A new object of @type whose lock (at @lock_offset in its struct) is
 * made: every type here has one.  NULL + MemoryError. */
PyObject *pyc_new_locked(PyTypeObject *type, size_t lock_offset);
#define PYC_NEW_LOCKED(type, TYPE) pyc_new_locked(type, offsetof(TYPE, lock))
/* Free @self (a tp_dealloc's last step) and @lock when it was made. */
void pyc_free_locked(PyObject *self, PyThread_type_lock lock);

/* The events argument of a call as perfex's event syntax: a str "a,b",
 * or a list or tuple of str joined with commas.  *@keep is set to the
 * str that owns the text (Py_XDECREF it when done, also after a
 * failure).  NULL + TypeError (or UnicodeError). */
const char *pyc_events_text(PyObject *events, PyObject **keep);

/* The events argument parsed into a new event list (without the GIL:
 * a parse reads sysfs and tracefs), *@n its events.  NULL with the
 * parse's error raised as perfex reports it. */
struct perfctr_evlist *pyc_parse_events(PyObject *events, int *n);

/* A list or tuple of @n items, item i made by @item(@ctx, i) (a new
 * reference, or NULL with an exception set: then the whole is dropped).
 * NULL + exception. */
typedef PyObject *(*pyc_item_fn)(const void *ctx, size_t i);
PyObject *pyc_list(size_t n, pyc_item_fn item, const void *ctx);
PyObject *pyc_tuple(size_t n, pyc_item_fn item, const void *ctx);

/* A struct sequence of @type, its fields in order from Py_BuildValue's
 * @fmt (one format unit per field, no parentheses).  NULL + exception. */
PyObject *pyc_struct_seq(PyTypeObject *type, const char *fmt, ...);

extern PyTypeObject pyc_session_type;
extern PyTypeObject pyc_target_type;
extern PyTypeObject pyc_counter_type;
extern PyTypeObject pyc_metrics_type;
extern PyTypeObject pyc_plan_type;
extern PyTypeObject pyc_estimate_type;
extern PyTypeObject pyc_set_info_type;

int pyc_session_init_types(PyObject *module);
int pyc_counter_init_types(PyObject *module);
int pyc_metric_init_types(PyObject *module);

PyObject *pyc_run(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *pyc_generic_metrics(PyObject *module, PyObject *args);

/* A Target object's library target (borrowed). */
struct perfctr_target *pyc_target_get(PyObject *target);

#endif /* PERFCTR_PY_CORE_H */
