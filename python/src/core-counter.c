// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._core.ThreadCounter: a thread's virtual counters, the original
 * perfctr's vperfctr API (include/perfctr/vperfctr.h) over one group of
 * events.  read_into() is the hot path: it fills a buffer the caller
 * allocated once (array.array('Q'), bytearray, a numpy uint64 array:
 * anything with the buffer protocol) and allocates nothing itself: the
 * sums land on the stack, are copied into the buffer, and the answer is
 * one of two interned strings saying how they were read.
 */
#include "core.h"

#include <errno.h>
#include <string.h>

typedef struct {
	PyObject_HEAD
	struct vperfctr *v;
	PyThread_type_lock lock;
	unsigned int n;			/* counters */
	bool tsc;
	bool running;
	/* A control or close runs without the GIL: readers then take the
	 * lock instead of reading at once (set and read under the GIL). */
	bool busy;
	PyObject *names;		/* tuple of str */
	struct perf_event_attr attr[VPERFCTR_NR_PMCS];
} CounterObject;

/* What read_into() returns: made once, at import. */
static PyObject *path_user, *path_syscall;

static PyObject *counter_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	return PYC_NEW_LOCKED(type, CounterObject);
}

/* Install the counters (all of them) with sums preserved or not. */
static int control(CounterObject *self, bool on, bool preserve)
{
	struct vperfctr_control c;
	int err;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	if (on) {
		c.cpu_control.tsc_on = self->tsc;
		c.cpu_control.nractrs = self->n;
		for (unsigned int i = 0; i < self->n; i++)
			c.attr[i] = &self->attr[i];
	}
	if (preserve)
		c.preserve = (1u << VPERFCTR_NR_PMCS) - 1;
	self->busy = true;
	Py_BEGIN_ALLOW_THREADS
	err = vperfctr_control(self->v, &c);
	Py_END_ALLOW_THREADS
	self->busy = false;
	if (err < 0) {
		pyc_raise(-err, -err == EOPNOTSUPP && self->tsc ?
			  "count without tsc=True here" : NULL,
			  "cannot program the thread's counters: %s",
			  strerror(-err));
		return -1;
	}
	self->running = on;
	return 0;
}

static PyObject *event_name(const void *list, size_t i)
{
	return PyUnicode_FromString(perfctr_evlist__name(list, i));
}

static int counter_init(CounterObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "events", "tid", "tsc", NULL };
	struct perfctr_evlist *list;
	PyObject *events;
	int tid = 0, tsc = 0, n, errnum;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i$p", kwlist,
					 &events, &tid, &tsc))
		return -1;
	if (self->v) {
		PyErr_SetString(PyExc_RuntimeError, "ThreadCounter already made");
		return -1;
	}
	list = pyc_parse_events(events, &n);
	if (!list)
		return -1;
	if (n == 0 || n > VPERFCTR_NR_PMCS) {
		PyErr_Format(PyExc_ValueError, "a ThreadCounter counts 1 to %d "
			     "events, not %d", VPERFCTR_NR_PMCS, n);
		goto fail;
	}
	self->n = n;
	self->tsc = tsc;
	for (int i = 0; i < n; i++)
		self->attr[i] = *perfctr_evlist__attr(list, i);
	self->names = pyc_tuple(n, event_name, list);
	if (!self->names)
		goto fail;
	self->v = vperfctr_open(tid, 1);
	errnum = errno;
	if (!self->v) {
		if (errnum == EEXIST)
			pyc_raise_as(pyc_errors.error, errnum, "close() the "
				     "thread's other ThreadCounter first",
				     "the thread has a ThreadCounter already");
		else
			pyc_raise(errnum, NULL, "cannot open thread %d's "
				  "counters: %s", tid, strerror(errnum));
		goto fail;
	}
	if (control(self, true, false) < 0) {
		vperfctr_unlink(self->v);
		vperfctr_close(self->v);
		self->v = NULL;
		goto fail;
	}
	perfctr_evlist__delete(list);
	return 0;
fail:
	perfctr_evlist__delete(list);
	return -1;
}

static void counter_close(CounterObject *self)
{
	struct vperfctr *v = self->v;

	if (!v)
		return;
	self->v = NULL;
	self->busy = true;
	Py_BEGIN_ALLOW_THREADS
	vperfctr_unlink(v);
	vperfctr_close(v);
	Py_END_ALLOW_THREADS
	self->busy = false;
}

static void counter_dealloc(CounterObject *self)
{
	counter_close(self);
	Py_CLEAR(self->names);
	pyc_free_locked((PyObject *)self, self->lock);
}

static bool enter(CounterObject *self)
{
	pyc_lock(self->lock);
	if (self->v)
		return true;
	PyThread_release_lock(self->lock);
	PyErr_SetString(PyExc_ValueError, "the ThreadCounter is closed");
	return false;
}

/* Which formats read_into() takes: 8-byte unsigned integers, or bytes. */
static bool format_ok(const Py_buffer *b)
{
	const char *f = b->format;

	if (!f)
		return true;
	if (*f == '@' || *f == '=' || *f == '<')
		f++;
	if (!strcmp(f, "B") || !strcmp(f, "b") || !strcmp(f, "c"))
		return true;
	return b->itemsize == 8 && (!strcmp(f, "Q") || !strcmp(f, "L"));
}

static PyObject *counter_read_into(CounterObject *self, PyObject *arg)
{
	struct perfctr_sum_ctrs sum;
	Py_buffer buf;
	int rc;

	if (PyObject_GetBuffer(arg, &buf, PyBUF_WRITABLE | PyBUF_FORMAT |
			       PyBUF_C_CONTIGUOUS) < 0)
		return NULL;
	if (!format_ok(&buf)) {
		PyBuffer_Release(&buf);
		return PyErr_Format(PyExc_TypeError, "read_into() fills 64-bit "
				    "unsigned integers or bytes, not format "
				    "'%s'", buf.format);
	}
	if ((size_t)buf.len < self->n * sizeof(uint64_t)) {
		PyBuffer_Release(&buf);
		return PyErr_Format(PyExc_ValueError, "the buffer holds %zd "
				    "bytes; %u counters need %zu", buf.len,
				    self->n, self->n * sizeof(uint64_t));
	}
	/*
	 * No GIL release: the read is one read(2) of a perf fd at most
	 * (never blocks) or a few loads, cheaper than the GIL's handover.
	 * Holding the GIL throughout also keeps the other calls out, as
	 * they change the state only while they hold it or while busy is
	 * set; only then is the lock needed, to wait for them.
	 */
	if (self->busy) {
		if (!enter(self)) {
			PyBuffer_Release(&buf);
			return NULL;
		}
		PyThread_release_lock(self->lock);
	}
	if (!self->v) {
		PyBuffer_Release(&buf);
		PyErr_SetString(PyExc_ValueError, "the ThreadCounter is closed");
		return NULL;
	}
	rc = vperfctr_read_fast(self->v, &sum);
	if (rc >= 0)
		memcpy(buf.buf, sum.pmc, self->n * sizeof(uint64_t));
	PyBuffer_Release(&buf);
	if (rc < 0)
		return pyc_raise(-rc, NULL, "cannot read the thread's counters: "
				 "%s", strerror(-rc));
	if (rc == 1) {
		Py_INCREF(path_user);
		return path_user;
	}
	Py_INCREF(path_syscall);
	return path_syscall;
}

static PyObject *sum_item(const void *sums, size_t i)
{
	return PyLong_FromUnsignedLongLong(((const uint64_t *)sums)[i]);
}

static PyObject *counter_read(CounterObject *self, PyObject *unused)
{
	struct perfctr_sum_ctrs sum;
	int rc;

	if (!enter(self))
		return NULL;
	rc = vperfctr_read_fast(self->v, &sum);
	PyThread_release_lock(self->lock);
	if (rc < 0)
		return pyc_raise(-rc, NULL, "cannot read the thread's counters: "
				 "%s", strerror(-rc));
	return pyc_tuple(self->n, sum_item, sum.pmc);
}

static PyObject *counter_read_tsc(CounterObject *self, PyObject *unused)
{
	struct perfctr_sum_ctrs sum;
	int rc;

	if (!enter(self))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = vperfctr_read(self->v, &sum, NULL);
	Py_END_ALLOW_THREADS
	PyThread_release_lock(self->lock);
	if (rc < 0)
		return pyc_raise(-rc, NULL, "cannot read the thread's TSC: %s",
				 strerror(-rc));
	return PyLong_FromUnsignedLongLong(sum.tsc);
}

static PyObject *count_item(const void *counts, size_t i)
{
	return pyc_count_tuple(&((const struct perfctr_count *)counts)[i]);
}

static PyObject *counter_read_counts(CounterObject *self, PyObject *unused)
{
	struct perfctr_count c[VPERFCTR_NR_PMCS];
	int n;

	if (!enter(self))
		return NULL;
	n = vperfctr_read_counts(self->v, c, self->n);
	PyThread_release_lock(self->lock);
	if (n < 0)
		return pyc_raise(-n, NULL, "cannot read the thread's counters: "
				 "%s", strerror(-n));
	return pyc_list(n, count_item, c);
}

static PyObject *toggle(CounterObject *self, bool on, bool preserve)
{
	int err;

	if (!enter(self))
		return NULL;
	err = control(self, on, preserve);
	PyThread_release_lock(self->lock);
	if (err < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *counter_stop(CounterObject *self, PyObject *unused)
{
	return toggle(self, false, true);
}

static PyObject *counter_resume(CounterObject *self, PyObject *unused)
{
	return toggle(self, true, true);
}

static PyObject *counter_reset(CounterObject *self, PyObject *unused)
{
	return toggle(self, true, false);
}

static PyObject *counter_close_m(CounterObject *self, PyObject *unused)
{
	pyc_lock(self->lock);
	counter_close(self);
	PyThread_release_lock(self->lock);
	Py_RETURN_NONE;
}

static PyObject *counter_enter(CounterObject *self, PyObject *unused)
{
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *counter_exit(CounterObject *self, PyObject *args)
{
	Py_DECREF(counter_close_m(self, NULL));
	Py_RETURN_FALSE;
}

static PyObject *counter_get_events(CounterObject *self, void *unused)
{
	Py_INCREF(self->names);
	return self->names;
}

static PyObject *counter_get_running(CounterObject *self, void *unused)
{
	return PyBool_FromLong(self->v && self->running);
}

static PyMethodDef counter_methods[] = {
	{ "read_into", (PyCFunction)counter_read_into, METH_O,
	  "read_into(buffer) -> 'user' or 'read(2)'\n\n"
	  "Write the sums, one 64-bit unsigned integer per event, into the "
	  "start of a writable buffer (array.array('Q'), bytearray, numpy "
	  "uint64 array, memoryview) without allocating anything.  Returns "
	  "how they were read: 'user' from the counters' mmap'd pages in "
	  "user space (hardware counters of the calling thread), else "
	  "'read(2)'." },
	{ "read", (PyCFunction)counter_read, METH_NOARGS,
	  "read() -> tuple of int\n\nThe sums, in event order." },
	{ "read_counts", (PyCFunction)counter_read_counts, METH_NOARGS,
	  "read_counts() -> list of raw counts\n\nThe sums with time "
	  "enabled and running (for scaling)." },
	{ "read_tsc", (PyCFunction)counter_read_tsc, METH_NOARGS,
	  "read_tsc() -> int\n\nThe thread's virtual TSC (with tsc=True)." },
	{ "stop", (PyCFunction)counter_stop, METH_NOARGS,
	  "stop()\n\nStop counting; the sums stay readable." },
	{ "resume", (PyCFunction)counter_resume, METH_NOARGS,
	  "resume()\n\nCount again, adding to the sums." },
	{ "reset", (PyCFunction)counter_reset, METH_NOARGS,
	  "reset()\n\nZero the sums and count." },
	{ "close", (PyCFunction)counter_close_m, METH_NOARGS,
	  "close()\n\nStop and release the thread's counters." },
	{ "__enter__", (PyCFunction)counter_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)counter_exit, METH_VARARGS, NULL },
	{ NULL },
};

static PyGetSetDef counter_getset[] = {
	{ "events", (getter)counter_get_events, NULL, "the events' names",
	  NULL },
	{ "running", (getter)counter_get_running, NULL, "counting now", NULL },
	{ NULL },
};

PyTypeObject pyc_counter_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfctr.ThreadCounter",
	.tp_basicsize = sizeof(CounterObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "ThreadCounter(events, tid=0, *, tsc=False)\n\n"
		  "A thread's virtual counters (the original perfctr's vperfctr "
		  "state): one group of up to 18 events, counting from now.  "
		  "tid 0 is the calling thread; one ThreadCounter per thread.  "
		  "Calls on one object are serialised; read_into() from the "
		  "counted thread itself is the cheapest read there is.",
	.tp_new = counter_new,
	.tp_init = (initproc)counter_init,
	.tp_dealloc = (destructor)counter_dealloc,
	.tp_methods = counter_methods,
	.tp_getset = counter_getset,
};

int pyc_counter_init_types(PyObject *m)
{
	path_user = PyUnicode_InternFromString("user");
	path_syscall = PyUnicode_InternFromString("read(2)");
	if (!path_user || !path_syscall || PyType_Ready(&pyc_counter_type) < 0)
		return -1;
	Py_INCREF(&pyc_counter_type);
	if (PyModule_AddObject(m, "ThreadCounter", (PyObject *)&pyc_counter_type) < 0)
		return -1;
	return 0;
}
