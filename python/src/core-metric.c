// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._core.Metrics and MetricPlan: the metric tables (the CPU
 * model's, the generic ones, the user's files) and the plans of `-M`
 * (include/perfctr/metric.h); generic_metrics(): the built-in metrics
 * shown beside counts (IPC, rates, CPUs utilised).
 *
 * Counts come in as rows (name, value, enabled, running, status, group):
 * the package builds them from a session's counts.
 */
#include "core.h"

#include <errno.h>
#include <string.h>

typedef struct {
	PyObject_HEAD
	struct perfctr_metrics *m;
	PyThread_type_lock lock;
} MetricsObject;

typedef struct {
	PyObject_HEAD
	struct perfctr_metric_plan *plan;
	PyObject *metrics;	/* the MetricsObject it uses */
} PlanObject;

/* Rows of counts as metric inputs; the names are borrowed from @rows,
 * which the caller keeps.  NULL + exception. */
static struct perfctr_metric_input *inputs_of(PyObject *rows, Py_ssize_t *n)
{
	struct perfctr_metric_input *in;

	*n = PySequence_Length(rows);
	if (*n < 0)
		return NULL;
	in = PyMem_Calloc(*n ? *n : 1, sizeof(*in));
	if (!in) {
		PyErr_NoMemory();
		return NULL;
	}
	for (Py_ssize_t i = 0; i < *n; i++) {
		PyObject *row = PySequence_GetItem(rows, i);
		unsigned long long value, enabled, running;
		Py_ssize_t group;
		const char *name;
		int status, ok;

		if (!row)
			goto fail;
		ok = PyArg_ParseTuple(row, "sKKKin;a count row is (name, value, "
				      "enabled, running, status, group)",
				      &name, &value, &enabled, &running,
				      &status, &group);
		Py_DECREF(row);	/* the name lives in the row, kept in @rows */
		if (!ok)
			goto fail;
		in[i].name = name;
		in[i].count.value = value;
		in[i].count.time_enabled = enabled;
		in[i].count.time_running = running;
		in[i].count.status = status;
		in[i].group = group;
	}
	return in;
fail:
	PyMem_Free(in);
	return NULL;
}

/* The arguments of a compute: (rows, wall_ns), the rows as inputs. */
static struct perfctr_metric_input *compute_args(PyObject *args, Py_ssize_t *n,
						 double *wall_ns)
{
	PyObject *rows;

	if (!PyArg_ParseTuple(args, "Od", &rows, wall_ns))
		return NULL;
	return inputs_of(rows, n);
}

static PyObject *generic_item(const void *values, size_t i)
{
	const struct perfctr_metric *v = &((const struct perfctr_metric *)values)[i];

	return Py_BuildValue("(ssdn)", v->name, v->unit, v->value,
			     (Py_ssize_t)v->event);
}

PyObject *pyc_generic_metrics(PyObject *module, PyObject *args)
{
	struct perfctr_metric_input *in;
	struct perfctr_metric *out;
	PyObject *list = NULL;
	double wall_ns;
	Py_ssize_t n;
	int nr;

	in = compute_args(args, &n, &wall_ns);
	if (!in)
		return NULL;
	nr = perfctr_metric__compute(in, n, wall_ns, NULL, 0);
	out = PyMem_Calloc(nr > 0 ? nr : 1, sizeof(*out));
	if (nr >= 0 && out) {
		perfctr_metric__compute(in, n, wall_ns, out, nr);
		list = pyc_list(nr, generic_item, out);
	} else if (!out) {
		PyErr_NoMemory();
	} else {
		pyc_raise(-nr, NULL, "cannot compute metrics: %s", strerror(-nr));
	}
	PyMem_Free(out);
	PyMem_Free(in);
	return list;
}

static PyObject *metrics_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	return PYC_NEW_LOCKED(type, MetricsObject);
}

static int metrics_init(MetricsObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "files", "data_dir", "cpuid", "model", NULL };
	PERFCTR_OPTS(perfctr_metrics_opts, opts);
	PyObject *files = NULL, *keep = NULL;
	const char **paths = NULL;
	int model = 1, errnum;
	Py_ssize_t n = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Ozz$p", kwlist, &files,
					 &opts.data_dir, &opts.cpuid, &model))
		return -1;
	if (self->m) {
		PyErr_SetString(PyExc_RuntimeError, "Metrics already made");
		return -1;
	}
	if (files && files != Py_None) {
		if (PyUnicode_Check(files) || PyBytes_Check(files)) {
			PyErr_SetString(PyExc_TypeError, "files is a list of "
					"paths");
			return -1;
		}
		keep = PySequence_List(files);
		if (!keep)
			return -1;
		n = PyList_GET_SIZE(keep);
		paths = PyMem_Calloc(n ? n : 1, sizeof(*paths));
		if (!paths) {
			Py_DECREF(keep);
			PyErr_NoMemory();
			return -1;
		}
		for (Py_ssize_t i = 0; i < n; i++) {
			PyObject *b;

			if (!PyUnicode_FSConverter(PyList_GET_ITEM(keep, i), &b)) {
				Py_DECREF(keep);
				PyMem_Free(paths);
				return -1;
			}
			PyList_SetItem(keep, i, b);
			paths[i] = PyBytes_AS_STRING(b);
		}
	}
	opts.files = paths;
	opts.nr_files = n;
	opts.flags = model ? 0 : PERFCTR_METRICS_NO_MODEL;
	Py_BEGIN_ALLOW_THREADS
	self->m = perfctr_metrics__new(&opts);
	errnum = errno;
	Py_END_ALLOW_THREADS
	Py_XDECREF(keep);
	PyMem_Free(paths);
	if (self->m)
		return 0;
	if (errnum == ENOENT)
		pyc_raise_as(pyc_errors.error, errnum, NULL, "cannot read a "
			     "metrics file: no such file");
	else if (errnum == EBADMSG)
		pyc_raise_as(pyc_errors.error, errnum, "metric files are "
			     "pmu-events JSON: a list of objects with "
			     "MetricName and MetricExpr",
			     "a metrics file is not pmu-events JSON");
	else
		pyc_raise(errnum, NULL, "cannot load the metric tables: %s",
			  strerror(errnum));
	return -1;
}

static void metrics_dealloc(MetricsObject *self)
{
	perfctr_metrics__delete(self->m);
	pyc_free_locked((PyObject *)self, self->lock);
}

static PyObject *def_dict(const struct perfctr_metric_def *d)
{
	return Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:d,s:z,s:s}",
			     "name", d->name, "expr", d->expr,
			     "groups", d->groups, "desc", d->desc,
			     "unit", d->unit, "scale", d->scale,
			     "threshold", d->threshold, "source", d->source);
}

static PyObject *metric_item(const void *m, size_t i)
{
	struct perfctr_metric_def d;

	perfctr_metrics__def(m, i, &d);
	return def_dict(&d);
}

static PyObject *metrics_list(MetricsObject *self, PyObject *unused)
{
	PyObject *list;

	pyc_lock(self->lock);
	list = pyc_list(perfctr_metrics__nr(self->m), metric_item, self->m);
	PyThread_release_lock(self->lock);
	return list;
}

static PyObject *metrics_get_model(MetricsObject *self, void *unused)
{
	const char *model = perfctr_metrics__model(self->m);

	if (!model)
		Py_RETURN_NONE;
	return PyUnicode_FromString(model);
}

static PyObject *metrics_get_missing(MetricsObject *self, void *unused)
{
	const char *why = perfctr_metrics__missing(self->m);

	if (!why)
		Py_RETURN_NONE;
	return PyUnicode_FromString(why);
}

static PyObject *metrics_plan(MetricsObject *self, PyObject *args,
			      PyObject *kwargs)
{
	static char *kwlist[] = { "names", "no_merge", "no_group", NULL };
	PERFCTR_OPTS(perfctr_metric_plan_opts, opts);
	struct perfctr_metric_error err;
	int no_merge = 0, no_group = 0, errnum;
	PlanObject *plan;
	const char *names;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|$pp", kwlist, &names,
					 &no_merge, &no_group))
		return NULL;
	opts.flags = (no_merge ? PERFCTR_METRIC_PLAN_NO_MERGE : 0) |
		     (no_group ? PERFCTR_METRIC_PLAN_NO_GROUP : 0);
	plan = PyObject_New(PlanObject, &pyc_plan_type);
	if (!plan)
		return NULL;
	memset(&err, 0, sizeof(err));
	err.pos = -1;
	pyc_lock(self->lock);
	plan->plan = perfctr_metric_plan__new_opts(self->m, names, &opts, &err);
	errnum = errno;
	PyThread_release_lock(self->lock);
	Py_INCREF(self);
	plan->metrics = (PyObject *)self;
	if (plan->plan)
		return (PyObject *)plan;
	Py_DECREF(plan);
	if (errnum == ENOENT)
		return pyc_raise_as(pyc_errors.event, errnum,
				    "Metrics().list() shows the metrics and "
				    "their groups",
				    "unknown metric or metric group '%s'",
				    err.metric[0] ? err.metric : names);
	return pyc_raise_as(pyc_errors.event, errnum, NULL,
			    "cannot plan metric '%s': %s", err.metric,
			    err.msg[0] ? err.msg : strerror(errnum));
}

static PyMethodDef metrics_methods[] = {
	{ "list", (PyCFunction)metrics_list, METH_NOARGS,
	  "list() -> list of dict\n\nEvery metric's definition (name, expr, "
	  "groups, desc, unit, scale, threshold, source)." },
	{ "plan", (PyCFunction)(void (*)(void))metrics_plan,
	  METH_VARARGS | METH_KEYWORDS,
	  "plan(names, *, no_merge=False, no_group=False) -> MetricPlan\n\n"
	  "The metrics and metric groups of `perfex -M names`." },
	{ NULL },
};

static PyGetSetDef metrics_getset[] = {
	{ "model", (getter)metrics_get_model, NULL,
	  "the CPU model's table in use, or None", NULL },
	{ "missing", (getter)metrics_get_missing, NULL,
	  "why there is no model table, or None", NULL },
	{ NULL },
};

PyTypeObject pyc_metrics_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfctr.Metrics",
	.tp_basicsize = sizeof(MetricsObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Metrics(files=(), data_dir=None, cpuid=None, *, model=True)"
		  "\n\nThe metric tables: the CPU model's (the pmu-events data), "
		  "the generic ones and the user's files (pmu-events JSON).",
	.tp_new = metrics_new,
	.tp_init = (initproc)metrics_init,
	.tp_dealloc = (destructor)metrics_dealloc,
	.tp_methods = metrics_methods,
	.tp_getset = metrics_getset,
};

static void plan_dealloc(PlanObject *self)
{
	perfctr_metric_plan__delete(self->plan);
	Py_XDECREF(self->metrics);
	PyObject_Free(self);
}

static PyObject *group_item(const void *plan, size_t g)
{
	return PyUnicode_FromString(perfctr_metric_plan__group(plan, g));
}

static PyObject *plan_get_groups(PlanObject *self, void *unused)
{
	return pyc_list(perfctr_metric_plan__nr_groups(self->plan), group_item,
			self->plan);
}

/* A planned metric's definition, with why it cannot be computed. */
static PyObject *planned_item(const void *plan, size_t i)
{
	struct perfctr_metric_def d;
	const char *missing = perfctr_metric_plan__missing(plan, i);
	PyObject *row, *s;

	perfctr_metric_plan__def(plan, i, &d);
	row = def_dict(&d);
	if (!row || !missing)
		return row;
	s = PyUnicode_FromString(missing);
	if (!s || PyDict_SetItemString(row, "missing", s) < 0)
		Py_CLEAR(row);
	Py_XDECREF(s);
	return row;
}

static PyObject *plan_get_metrics(PlanObject *self, void *unused)
{
	return pyc_list(perfctr_metric_plan__nr_metrics(self->plan),
			planned_item, self->plan);
}

struct computed {
	const struct perfctr_metric_plan *plan;
	const struct perfctr_metric_value *values;
};

static PyObject *computed_item(const void *ctx, size_t i)
{
	static const char *const status[] = {
		[PERFCTR_METRIC_OK] = "ok",
		[PERFCTR_METRIC_NO_EVENT] = "no-event",
		[PERFCTR_METRIC_NOT_COUNTED] = "not-counted",
		[PERFCTR_METRIC_NOT_TOGETHER] = "not-together",
		[PERFCTR_METRIC_UNDEFINED] = "undefined",
	};
	const struct computed *c = ctx;
	const struct perfctr_metric_value *v = &c->values[i];
	struct perfctr_metric_def d;

	perfctr_metric_plan__def(c->plan, v->metric, &d);
	return Py_BuildValue("(ssdsiOz)", d.name,
			     (unsigned)v->status <= PERFCTR_METRIC_UNDEFINED ?
			     status[v->status] : "?", v->value, d.unit,
			     v->threshold, v->multiplexed ? Py_True : Py_False,
			     v->event);
}

static PyObject *plan_compute(PlanObject *self, PyObject *args)
{
	struct perfctr_metric_input *in;
	struct perfctr_metric_value *out;
	MetricsObject *m = (MetricsObject *)self->metrics;
	size_t nr = perfctr_metric_plan__nr_metrics(self->plan);
	PyObject *list;
	double wall_ns;
	Py_ssize_t n;

	in = compute_args(args, &n, &wall_ns);
	if (!in)
		return NULL;
	out = PyMem_Calloc(nr ? nr : 1, sizeof(*out));
	if (!out) {
		PyMem_Free(in);
		return PyErr_NoMemory();
	}
	pyc_lock(m->lock);
	perfctr_metric_plan__compute(self->plan, in, n, wall_ns, out, nr);
	PyThread_release_lock(m->lock);
	list = pyc_list(nr, computed_item,
			&(struct computed){ self->plan, out });
	PyMem_Free(out);
	PyMem_Free(in);
	return list;
}

static PyMethodDef plan_methods[] = {
	{ "compute", (PyCFunction)plan_compute, METH_VARARGS,
	  "compute(rows, wall_ns) -> list of (name, status, value, unit, "
	  "threshold, multiplexed, event)" },
	{ NULL },
};

static PyGetSetDef plan_getset[] = {
	{ "groups", (getter)plan_get_groups, NULL,
	  "the event groups to count, in perfctr's event syntax", NULL },
	{ "metrics", (getter)plan_get_metrics, NULL,
	  "the planned metrics' definitions", NULL },
	{ NULL },
};

PyTypeObject pyc_plan_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfctr.MetricPlan",
	.tp_basicsize = sizeof(PlanObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The metrics asked for, their event groups, their values "
		  "(Metrics.plan() makes one).",
	.tp_dealloc = (destructor)plan_dealloc,
	.tp_methods = plan_methods,
	.tp_getset = plan_getset,
};

int pyc_metric_init_types(PyObject *m)
{
	if (PyType_Ready(&pyc_metrics_type) < 0 ||
	    PyType_Ready(&pyc_plan_type) < 0)
		return -1;
	Py_INCREF(&pyc_metrics_type);
	Py_INCREF(&pyc_plan_type);
	if (PyModule_AddObject(m, "Metrics", (PyObject *)&pyc_metrics_type) < 0 ||
	    PyModule_AddObject(m, "MetricPlan", (PyObject *)&pyc_plan_type) < 0)
		return -1;
	return 0;
}
