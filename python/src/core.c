// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._core: counting from Python over libperfctr's public API.  The
 * module, its errors and the raw count tuples; the types are in the
 * other core-*.c files (core.h says which).
 */
#include "core.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct pyc_errors pyc_errors;

PyObject *pyc_count_tuple(const struct perfctr_count *c)
{
	return Py_BuildValue("(KKKii)", (unsigned long long)c->value,
			     (unsigned long long)c->time_enabled,
			     (unsigned long long)c->time_running,
			     (int)c->status, (int)c->errnum);
}

PyObject *pyc_new_locked(PyTypeObject *type, size_t lock_offset)
{
	PyObject *self = type->tp_alloc(type, 0);
	PyThread_type_lock lock;

	if (!self)
		return NULL;
	lock = PyThread_allocate_lock();
	if (!lock) {
		Py_DECREF(self);
		return PyErr_NoMemory();
	}
	memcpy((char *)self + lock_offset, &lock, sizeof(lock));
	return self;
}

void pyc_free_locked(PyObject *self, PyThread_type_lock lock)
{
	if (lock)
		PyThread_free_lock(lock);
	Py_TYPE(self)->tp_free(self);
}

const char *pyc_events_text(PyObject *events, PyObject **keep)
{
	const char *text;

	*keep = NULL;
	if (PyUnicode_Check(events)) {
		Py_INCREF(events);
		*keep = events;
	} else if (PyList_Check(events) || PyTuple_Check(events)) {
		PyObject *comma = PyUnicode_FromString(",");

		if (!comma)
			return NULL;
		*keep = PyUnicode_Join(comma, events);
		Py_DECREF(comma);
	} else {
		PyErr_Format(PyExc_TypeError, "events must be a str or a list "
			     "of str, not %.100s", Py_TYPE(events)->tp_name);
	}
	if (!*keep)
		return NULL;
	text = PyUnicode_AsUTF8(*keep);
	if (!text)
		Py_CLEAR(*keep);
	return text;
}

struct perfctr_evlist *pyc_parse_events(PyObject *events, int *n)
{
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	struct perfctr_evlist *list;
	PyObject *keep;
	const char *text = pyc_events_text(events, &keep);

	if (!text)
		return NULL;
	list = perfctr_evlist__new();
	if (!list) {
		Py_DECREF(keep);
		PyErr_NoMemory();
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	*n = perfctr_evlist__parse(list, text, NULL, &err);
	Py_END_ALLOW_THREADS
	if (*n < 0) {
		pyc_raise_parse(text, &err, *n);
		perfctr_evlist__delete(list);
		list = NULL;
	}
	Py_DECREF(keep);
	return list;
}

static PyObject *sequence(bool tuple, size_t n, pyc_item_fn item,
			  const void *ctx)
{
	PyObject *seq = tuple ? PyTuple_New(n) : PyList_New(n);

	for (size_t i = 0; seq && i < n; i++) {
		PyObject *v = item(ctx, i);

		if (!v) {
			Py_CLEAR(seq);
			break;
		}
		if (tuple)
			PyTuple_SET_ITEM(seq, i, v);
		else
			PyList_SET_ITEM(seq, i, v);
	}
	return seq;
}

PyObject *pyc_list(size_t n, pyc_item_fn item, const void *ctx)
{
	return sequence(false, n, item, ctx);
}

PyObject *pyc_tuple(size_t n, pyc_item_fn item, const void *ctx)
{
	return sequence(true, n, item, ctx);
}

PyObject *pyc_struct_seq(PyTypeObject *type, const char *fmt, ...)
{
	char tuple_fmt[64];
	PyObject *values, *out;
	va_list ap;

	snprintf(tuple_fmt, sizeof(tuple_fmt), "(%s)", fmt);
	va_start(ap, fmt);
	values = Py_VaBuildValue(tuple_fmt, ap);
	va_end(ap);
	if (!values)
		return NULL;
	out = PyStructSequence_New(type);
	for (Py_ssize_t i = 0; out && i < PyTuple_GET_SIZE(values); i++) {
		PyObject *v = PyTuple_GET_ITEM(values, i);

		Py_INCREF(v);
		PyStructSequence_SET_ITEM(out, i, v);
	}
	Py_DECREF(values);
	return out;
}

static PyObject *raise_v(PyObject *cls, int errnum, const char *hint,
			 const char *fmt, va_list ap)
{
	char message[640];
	PyObject *exc;

	vsnprintf(message, sizeof(message), fmt, ap);
	exc = PyObject_CallFunction(cls, "sis", message, errnum,
				    hint ? hint : "");
	if (exc) {
		PyErr_SetObject(cls, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

PyObject *pyc_raise_as(PyObject *cls, int errnum, const char *hint,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	raise_v(cls, errnum, hint, fmt, ap);
	va_end(ap);
	return NULL;
}

/* What cures a refusal here: the paranoid level, root, the broker.  The
 * wording is perfex's (src/perfex/messages.c), so that a user meets one
 * explanation whichever way they count. */
static void permission_hint(char *hint, size_t size)
{
	PERFCTR_OPTS(perfctr_info_opts, opts, .no_probe = true);
	struct perfctr_info info = { .sz = sizeof(info) };
	struct perfctr_broker_info broker = { .sz = sizeof(broker) };
	size_t len;

	if (perfctr_info_ext(&opts, &info, NULL, NULL) < 0)
		len = snprintf(hint, size, "run as root (perf_event_paranoid "
			       "is unreadable)");
	else if (info.paranoid > 1)
		len = snprintf(hint, size, "perf_event_paranoid is %d; this "
			       "may need 1 or lower (or root / CAP_PERFMON)\n"
			       "hint: as root: sysctl -w "
			       "kernel.perf_event_paranoid=1", info.paranoid);
	else
		len = snprintf(hint, size, "perf_event_paranoid is %d; run as "
			       "root or with CAP_PERFMON; only your own "
			       "processes can be watched", info.paranoid);
	if (len >= size || geteuid() == 0 || perfctr_broker_info(&broker) < 0)
		return;
	if (broker.status == 0 || broker.status == -ECANCELED)
		return;
	snprintf(hint + len, size - len, "\nhint: %s",
		 broker.status == -EACCES ?
		 "the access broker (perfctrd) answers but has no rule for "
		 "you: an administrator can add one (perfctrd.conf(5))" :
		 "without root: an administrator runs perfctrd, the access "
		 "broker, with a rule for you (perfctrd(8))");
}

static PyObject *class_of(int errnum)
{
	switch (errnum) {
	case EACCES:
	case EPERM:
		return pyc_errors.permission;
	case ESRCH:
	case ECHILD:
		return pyc_errors.target;
	default:
		return perfctr_errno_unsupported(errnum) ?
			pyc_errors.unsupported : pyc_errors.error;
	}
}

PyObject *pyc_raise(int errnum, const char *hint, const char *fmt, ...)
{
	PyObject *cls = class_of(errnum);
	char cure[768];
	va_list ap;

	if (errnum == ENOMEM)
		return PyErr_NoMemory();
	if (cls == pyc_errors.permission && !(hint && *hint)) {
		permission_hint(cure, sizeof(cure));
		hint = cure;
	}
	va_start(ap, fmt);
	raise_v(cls, errnum, hint, fmt, ap);
	va_end(ap);
	return NULL;
}

PyObject *pyc_raise_parse(const char *spec,
			  const struct perfctr_parse_error *err, int ret)
{
	int errnum = err->errnum ? err->errnum : -ret;
	const char *message = err->message[0] ? err->message : strerror(errnum);
	char hint[512];
	PyObject *cls;

	snprintf(hint, sizeof(hint), "%s", err->hint);
	switch (errnum) {
	case EACCES:
		cls = pyc_errors.permission;
		if (!hint[0])
			snprintf(hint, sizeof(hint), "tracefs is readable by "
				 "root only: run as root");
		break;
	case ENOTDIR:
		cls = pyc_errors.tracefs;
		if (!hint[0])
			snprintf(hint, sizeof(hint), geteuid() ?
				 "tracefs is readable by root only: run as root" :
				 "as root: mount -t tracefs nodev "
				 "/sys/kernel/tracing");
		break;
	case EOPNOTSUPP:
	case ENODEV:
		cls = pyc_errors.unsupported;
		break;
	case ENOMEM:
		return PyErr_NoMemory();
	default:
		cls = pyc_errors.event;
		if (errnum == ENOENT && !hint[0])
			snprintf(hint, sizeof(hint), "perfctr.events() lists "
				 "the events this machine offers");
	}
	pyc_raise_as(cls, errnum, hint, "%s", message);
	if (err->column >= 0 && (size_t)err->column <= strlen(spec)) {
		PyObject *type, *value, *tb;

		PyErr_Fetch(&type, &value, &tb);
		PyErr_NormalizeException(&type, &value, &tb);
		if (value) {
			PyObject *col = PyLong_FromLong(err->column);

			if (col) {
				PyObject_SetAttrString(value, "column", col);
				Py_DECREF(col);
			}
		}
		PyErr_Restore(type, value, tb);
	}
	return NULL;
}

PyObject *pyc_raise_attach(const struct perfctr_session *session, int ret)
{
	struct perfctr_attach_error ae = { .sz = sizeof(ae) };
	const char *name = NULL;
	int errnum = -ret;

	if (perfctr_session__attach_error(session, &ae) == 0 && ae.errnum) {
		errnum = ae.errnum;
		name = perfctr_session__event_name(session, ae.event);
	}
	if (ae.broker[0])
		return pyc_raise_as(pyc_errors.permission, errnum,
				    "the broker's policy file decides "
				    "(/etc/perfctr/perfctrd.conf unless "
				    "perfctrd -c names another; see "
				    "perfctrd.conf(5))",
				    "cannot open event '%s': the access broker "
				    "refused it: %s", name ? name : "?",
				    ae.broker);
	if (errnum == ESRCH)
		return pyc_raise(errnum, "the target has ended, or never "
				 "existed", "cannot attach: %s",
				 strerror(errnum));
	if (errnum == EINVAL && !name)
		return pyc_raise_as(pyc_errors.error, errnum,
				    "add events before attaching",
				    "cannot attach: %s", strerror(errnum));
	if (name)
		return pyc_raise(errnum, NULL, "cannot open event '%s': %s",
				 name, strerror(errnum));
	return pyc_raise(errnum, NULL, "cannot attach: %s", strerror(errnum));
}

static PyObject *core_library_version(PyObject *self, PyObject *unused)
{
	return PyUnicode_FromString(perfctr_version());
}

static int list_one(const struct perfctr_event_info *info, void *ctx)
{
	static const char *const kinds[] = {
		[PERFCTR_EVENT_HARDWARE] = "hardware",
		[PERFCTR_EVENT_CACHE] = "cache",
		[PERFCTR_EVENT_SOFTWARE] = "software",
		[PERFCTR_EVENT_TRACEPOINT] = "tracepoint",
		[PERFCTR_EVENT_PMU] = "pmu",
		[PERFCTR_EVENT_BREAKPOINT] = "breakpoint",
		[PERFCTR_EVENT_RAW] = "raw",
	};
	PyObject *row;
	int err;

	row = Py_BuildValue("(sss)", info->name,
			    (unsigned)info->kind < PERFCTR_EVENT_RAW + 1 ?
			    kinds[info->kind] : "?",
			    info->desc ? info->desc : "");
	if (!row)
		return -ENOMEM;
	err = PyList_Append(ctx, row);
	Py_DECREF(row);
	return err ? -ENOMEM : 0;
}

static PyObject *core_events(PyObject *self, PyObject *unused)
{
	PyObject *list = PyList_New(0);
	int err;

	if (!list)
		return NULL;
	err = perfctr_event_list(NULL, list_one, list);
	if (err < 0) {
		Py_DECREF(list);
		if (PyErr_Occurred())
			return NULL;
		return pyc_raise(-err, NULL, "cannot list events: %s",
				 strerror(-err));
	}
	return list;
}

static PyObject *core_info(PyObject *self, PyObject *unused)
{
	struct perfctr_info info = { .sz = sizeof(info) };
	int err;

	Py_BEGIN_ALLOW_THREADS
	err = perfctr_info(&info, NULL, NULL);
	Py_END_ALLOW_THREADS
	if (err < 0)
		return pyc_raise(-err, NULL, "cannot describe the machine: %s",
				 strerror(-err));
	return Py_BuildValue(
		"{s:O,s:O,s:O,s:O,s:O,s:O,s:i,s:I,s:I,s:s,s:s,s:s,s:s}",
		"hardware_events",
		info.features & PERFCTR_FEATURE_HW_EVENTS ? Py_True : Py_False,
		"user_read", info.features & PERFCTR_FEATURE_RDPMC ? Py_True : Py_False,
		"overflow_signals", info.features & PERFCTR_FEATURE_PCINT ? Py_True : Py_False,
		"sampling", info.features & PERFCTR_FEATURE_SAMPLING ? Py_True : Py_False,
		"tracepoints", info.features & PERFCTR_FEATURE_TRACEPOINTS ? Py_True : Py_False,
		"multiplexing", info.features & PERFCTR_FEATURE_MULTIPLEX ? Py_True : Py_False,
		"paranoid", info.paranoid, "nr_cpus", info.nr_cpus,
		"nr_hw_counters", info.nr_hw_counters,
		"cpu_model", info.cpu_model, "arch", info.arch,
		"core_pmu", info.core_pmu, "tracefs", info.tracefs);
}

static PyObject *parsed_event(const void *list, size_t i)
{
	return Py_BuildValue("(ssn)", perfctr_evlist__name(list, i),
			     perfctr_evlist__pmu(list, i),
			     (Py_ssize_t)perfctr_evlist__leader(list, i));
}

static PyObject *core_parse(PyObject *self, PyObject *arg)
{
	struct perfctr_evlist *list;
	PyObject *out;
	int n;

	list = pyc_parse_events(arg, &n);
	if (!list)
		return NULL;
	out = pyc_list(n, parsed_event, list);
	perfctr_evlist__delete(list);
	return out;
}

static PyMethodDef core_methods[] = {
	{ "library_version", core_library_version, METH_NOARGS,
	  "library_version() -> str\n\nThe version of the libperfctr in use." },
	{ "events", core_events, METH_NOARGS,
	  "events() -> list of (name, kind, description)\n\n"
	  "Every event this machine offers, as `perfex list` shows them." },
	{ "info", core_info, METH_NOARGS,
	  "info() -> dict\n\nWhat this machine can count (perfctr_info())." },
	{ "parse", core_parse, METH_O,
	  "parse(events) -> list of (name, pmu, leader index)\n\n"
	  "The events of a specification as perfex reads it, without opening "
	  "anything; raises EventError as counting would." },
	{ "run", (PyCFunction)(void (*)(void))pyc_run,
	  METH_VARARGS | METH_KEYWORDS,
	  "run(argv, events, tree=False, env=None) -> dict\n\n"
	  "The raw form of perfctr.run() (use that)." },
	{ "generic_metrics", pyc_generic_metrics, METH_VARARGS,
	  "generic_metrics(inputs, wall_ns) -> list\n\n"
	  "The built-in metrics (IPC, rates, ...) of raw counts." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef core_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "perfctr._core",
	.m_doc = "Counting over libperfctr (use the perfctr package).",
	.m_size = -1,
	.m_methods = core_methods,
};

static int load_errors(void)
{
	PyObject *mod = PyImport_ImportModule("perfctr._errors");
	static const struct {
		const char *name;
		PyObject **slot;
	} classes[] = {
		{ "Error", &pyc_errors.error },
		{ "EventError", &pyc_errors.event },
		{ "NotSupportedError", &pyc_errors.unsupported },
		{ "PermissionError", &pyc_errors.permission },
		{ "TracefsError", &pyc_errors.tracefs },
		{ "TargetError", &pyc_errors.target },
	};

	if (!mod)
		return -1;
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		*classes[i].slot = PyObject_GetAttrString(mod, classes[i].name);
		if (!*classes[i].slot) {
			Py_DECREF(mod);
			return -1;
		}
	}
	Py_DECREF(mod);
	return 0;
}

PyMODINIT_FUNC PyInit__core(void)
{
	PyObject *m;

	if (load_errors() < 0)
		return NULL;
	m = PyModule_Create(&core_module);
	if (!m)
		return NULL;
	if (pyc_session_init_types(m) < 0 || pyc_counter_init_types(m) < 0 ||
	    pyc_metric_init_types(m) < 0 ||
	    PyModule_AddIntConstant(m, "COUNT_OK", PERFCTR_COUNT_OK) < 0 ||
	    PyModule_AddIntConstant(m, "COUNT_NOT_COUNTED",
				    PERFCTR_COUNT_NOT_COUNTED) < 0 ||
	    PyModule_AddIntConstant(m, "COUNT_NOT_SUPPORTED",
				    PERFCTR_COUNT_NOT_SUPPORTED) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
