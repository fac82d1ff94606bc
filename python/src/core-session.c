// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._core.Session and Target: perfmon2's sessions (include/
 * perfctr/session.h, set.h) and what they count (target.h).
 *
 * A Session is also the context manager behind perfctr.count(): entering
 * it attaches it to the calling thread the first time (again when
 * another thread enters it), resets and starts it; leaving stops and
 * reads it.  Those are the library's start, stop and read, one ioctl or
 * read(2) per group, made without the GIL.
 */
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <structmember.h>

/* ------------------------------------------------------------ Target */

typedef struct {
	PyObject_HEAD
	struct perfctr_target *target;
	PyThread_type_lock lock;
	int status;		/* a command's wait status, -1 unknown */
} TargetObject;

struct perfctr_target *pyc_target_get(PyObject *obj)
{
	return ((TargetObject *)obj)->target;
}

/* argv as a NULL-terminated array of strings owned by @keep (a list of
 * bytes objects). */
static char **argv_of(PyObject *seq, PyObject **keep)
{
	Py_ssize_t n;
	char **argv;

	seq = PySequence_Fast(seq, "argv must be a sequence of str");
	if (!seq)
		return NULL;
	n = PySequence_Fast_GET_SIZE(seq);
	if (n == 0) {
		Py_DECREF(seq);
		PyErr_SetString(PyExc_ValueError, "argv is empty");
		return NULL;
	}
	*keep = PyList_New(n);
	argv = PyMem_Calloc(n + 1, sizeof(*argv));
	if (!*keep || !argv)
		goto fail;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *b;

		if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(seq, i), &b))
			goto fail;
		PyList_SET_ITEM(*keep, i, b);
		argv[i] = PyBytes_AS_STRING(b);
	}
	Py_DECREF(seq);
	return argv;
fail:
	Py_DECREF(seq);
	Py_CLEAR(*keep);
	PyMem_Free(argv);
	if (!PyErr_Occurred())
		PyErr_NoMemory();
	return NULL;
}

/* env (a mapping) as "K=V" strings owned by @keep, or NULL for none. */
static char **env_of(PyObject *env, PyObject **keep)
{
	PyObject *items, *list;
	char **envp;
	Py_ssize_t n;

	*keep = NULL;
	if (env == Py_None)
		return NULL;
	items = PyMapping_Items(env);
	if (!items)
		return NULL;
	n = PyList_GET_SIZE(items);
	list = PyList_New(0);
	for (Py_ssize_t i = 0; list && i < n; i++) {
		PyObject *kv = PyList_GET_ITEM(items, i);
		PyObject *s = PyUnicode_FromFormat("%S=%S", PyTuple_GET_ITEM(kv, 0),
						   PyTuple_GET_ITEM(kv, 1));

		if (!s || PyList_Append(list, s) < 0) {
			Py_XDECREF(s);
			Py_CLEAR(list);
			break;
		}
		Py_DECREF(s);
	}
	Py_DECREF(items);
	if (!list)
		return NULL;
	envp = argv_of(list, keep);
	Py_DECREF(list);
	return envp;
}

static int fd_of(PyObject *obj)
{
	int fd;

	if (obj == Py_None)
		return -1;
	fd = PyObject_AsFileDescriptor(obj);
	if (fd == 0)	/* 0 means "inherit" to the library */
		fd = dup(0);
	return fd;
}

/* A thread's or a process's target (@kind "thread" or "process"), on
 * @cpus for a thread when given; NULL with errno, or with an exception. */
static struct perfctr_target *id_target(const char *kind, PyObject *value,
					const char *cpus)
{
	struct perfctr_target *t;
	long id = PyLong_AsLong(value);

	if (id == -1 && PyErr_Occurred())
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	if (kind[0] == 'p')
		t = perfctr_target__new_process(id);
	else if (cpus)
		t = perfctr_target__new_thread_on_cpus(id, cpus);
	else
		t = perfctr_target__new_thread(id);
	Py_END_ALLOW_THREADS
	return t;
}

/* Cgroup @value's target, or NULL with an exception. */
static struct perfctr_target *cgroup_target(PyObject *value, const char *cpus)
{
	struct perfctr_target *t;
	PyObject *path;
	int errnum;

	if (!PyUnicode_FSConverter(value, &path))
		return NULL;
	t = perfctr_target__new_cgroup(PyBytes_AS_STRING(path), cpus);
	errnum = errno;
	Py_DECREF(path);
	if (!t)
		pyc_raise(errnum, errnum == ENOMEDIUM ?
				 "as root: mount -t cgroup2 none "
				 "/sys/fs/cgroup/unified" :
				 "a name relative to the cgroup2 "
				 "mount, as /proc/PID/cgroup shows it "
				 "after '0::'",
				 "cannot count cgroup '%s': %s",
				 PyUnicode_AsUTF8(value) ?: "?",
				 strerror(errnum));
	return t;
}

/* The target of command @value (argv) with environment @env and the
 * files @in, @out and @err (None: inherited), or NULL with an
 * exception. */
static struct perfctr_target *command_target(PyObject *value, PyObject *env,
					     PyObject *in, PyObject *out,
					     PyObject *err)
{
	PERFCTR_OPTS(perfctr_command_opts, opts, .stdin_fd = -1,
		     .stdout_fd = -1, .stderr_fd = -1);
	PyObject *keep = NULL, *keep_env = NULL;
	struct perfctr_target *t = NULL;
	char **argv = argv_of(value, &keep);
	char **envp = NULL;
	int errnum = 0;

	if (!argv)
		return NULL;
	if (env != Py_None) {
		envp = env_of(env, &keep_env);
		if (!envp) {
			PyMem_Free(argv);
			Py_DECREF(keep);
			return NULL;
		}
	}
	opts.envp = envp;
	opts.stdin_fd = fd_of(in);
	opts.stdout_fd = fd_of(out);
	opts.stderr_fd = fd_of(err);
	if (!PyErr_Occurred()) {
		t = perfctr_target__new_command(argv, &opts);
		errnum = errno;
	}
	if (in != Py_None && opts.stdin_fd >= 0 &&
	    PyObject_AsFileDescriptor(in) == 0)
		close(opts.stdin_fd);
	if (!t && !PyErr_Occurred())
		pyc_raise_as(pyc_errors.target, errnum,
			     errnum == ENOENT && !strchr(argv[0], '/') ?
			     "it is looked up in PATH; give a path for "
			     "a file in this directory" : NULL,
			     "cannot run '%s': %s", argv[0],
			     errnum == ENOENT ? "command not found" :
			     strerror(errnum));
	PyMem_Free(argv);
	PyMem_Free(envp);
	Py_DECREF(keep);
	Py_XDECREF(keep_env);
	return t;
}

static int target_init(TargetObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "kind", "value", "cpus", "env", "stdin",
				  "stdout", "stderr", NULL };
	PyObject *value = Py_None, *env = Py_None;
	PyObject *in = Py_None, *out = Py_None, *err = Py_None;
	const char *kind, *cpus = NULL;
	struct perfctr_target *t;
	int errnum;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OzOOOO", kwlist,
					 &kind, &value, &cpus, &env, &in,
					 &out, &err))
		return -1;
	if (self->target) {
		PyErr_SetString(PyExc_RuntimeError, "Target already made");
		return -1;
	}
	if (!strcmp(kind, "self")) {
		t = perfctr_target__new_self();
	} else if (!strcmp(kind, "thread") || !strcmp(kind, "process")) {
		t = id_target(kind, value, cpus);
	} else if (!strcmp(kind, "cpus")) {
		t = perfctr_target__new_cpus(cpus);
	} else if (!strcmp(kind, "cgroup")) {
		t = cgroup_target(value, cpus);
	} else if (!strcmp(kind, "command")) {
		t = command_target(value, env, in, out, err);
	} else {
		PyErr_Format(PyExc_ValueError, "unknown target kind '%s' (self, "
			     "thread, process, cpus, cgroup or command)", kind);
		return -1;
	}
	if (!t) {
		errnum = errno;
		if (PyErr_Occurred())
			return -1;
		pyc_raise(errnum, NULL, "cannot make a %s target: %s", kind,
			  strerror(errnum));
		return -1;
	}
	self->target = t;
	return 0;
}

static PyObject *target_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	TargetObject *self = (TargetObject *)PYC_NEW_LOCKED(type, TargetObject);

	if (self)
		self->status = -1;
	return (PyObject *)self;
}

static void target_dealloc(TargetObject *self)
{
	perfctr_target__delete(self->target);
	pyc_free_locked((PyObject *)self, self->lock);
}

static bool target_ready(TargetObject *self)
{
	if (self->target)
		return true;
	PyErr_SetString(PyExc_ValueError, "Target was not made");
	return false;
}

static PyObject *target_start(TargetObject *self, PyObject *unused)
{
	int err;

	if (!target_ready(self))
		return NULL;
	pyc_lock(self->lock);
	Py_BEGIN_ALLOW_THREADS
	err = perfctr_target__start(self->target);
	Py_END_ALLOW_THREADS
	PyThread_release_lock(self->lock);
	if (err < 0)
		return pyc_raise_as(pyc_errors.target, -err, NULL,
				    "cannot start the command: %s",
				    strerror(-err));
	Py_RETURN_NONE;
}

static PyObject *target_wait(TargetObject *self, PyObject *unused)
{
	int err, status = -1;

	if (!target_ready(self))
		return NULL;
	pyc_lock(self->lock);
	for (;;) {
		Py_BEGIN_ALLOW_THREADS
		err = perfctr_target__wait(self->target, &status);
		Py_END_ALLOW_THREADS
		if (err != -EINTR)
			break;
		if (PyErr_CheckSignals() < 0) {
			PyThread_release_lock(self->lock);
			return NULL;
		}
	}
	PyThread_release_lock(self->lock);
	if (err < 0)
		return pyc_raise_as(pyc_errors.target, -err, NULL,
				    "cannot wait for the target: %s",
				    strerror(-err));
	self->status = status;
	return PyLong_FromLong(status);
}

static PyObject *target_kill(TargetObject *self, PyObject *args)
{
	int sig = SIGTERM, err;

	if (!PyArg_ParseTuple(args, "|i", &sig) || !target_ready(self))
		return NULL;
	err = perfctr_target__kill(self->target, sig);
	if (err < 0)
		return pyc_raise_as(pyc_errors.target, -err, NULL,
				    "cannot signal the target: %s",
				    strerror(-err));
	Py_RETURN_NONE;
}

static PyObject *target_get_pid(TargetObject *self, void *unused)
{
	if (!target_ready(self))
		return NULL;
	return PyLong_FromLong(perfctr_target__pid(self->target));
}

static PyObject *target_get_kind(TargetObject *self, void *unused)
{
	static const char *const kinds[] = {
		[PERFCTR_TARGET_SELF] = "self",
		[PERFCTR_TARGET_THREAD] = "thread",
		[PERFCTR_TARGET_PROCESS] = "process",
		[PERFCTR_TARGET_COMMAND] = "command",
		[PERFCTR_TARGET_CPUS] = "cpus",
		[PERFCTR_TARGET_CGROUP] = "cgroup",
	};

	if (!target_ready(self))
		return NULL;
	return PyUnicode_FromString(kinds[perfctr_target__kind(self->target)]);
}

static PyObject *unit_item(const void *target, size_t i)
{
	pid_t tid = -1;
	int cpu = -1;

	perfctr_target__unit(target, i, &tid, &cpu);
	return Py_BuildValue("(ii)", (int)tid, cpu);
}

static PyObject *target_get_units(TargetObject *self, void *unused)
{
	if (!target_ready(self))
		return NULL;
	return pyc_list(perfctr_target__nr_units(self->target), unit_item,
			self->target);
}

static PyMethodDef target_methods[] = {
	{ "start", (PyCFunction)target_start, METH_NOARGS,
	  "start()\n\nLet a command target exec (counters attached before "
	  "count from its exec)." },
	{ "wait", (PyCFunction)target_wait, METH_NOARGS,
	  "wait() -> int\n\nWait for a command target to end; its wait "
	  "status (os.waitstatus_to_exitcode() decodes it)." },
	{ "kill", (PyCFunction)target_kill, METH_VARARGS,
	  "kill(sig=SIGTERM)\n\nSignal a command or process target." },
	{ NULL },
};

static PyGetSetDef target_getset[] = {
	{ "pid", (getter)target_get_pid, NULL,
	  "process id (command, process), tid (thread, self) or -1", NULL },
	{ "kind", (getter)target_get_kind, NULL,
	  "self, thread, process, command, cpus or cgroup", NULL },
	{ "units", (getter)target_get_units, NULL,
	  "the (tid, cpu) positions counted, -1 for any", NULL },
	{ NULL },
};

PyTypeObject pyc_target_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfctr._core.Target",
	.tp_basicsize = sizeof(TargetObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "Target(kind, value=None, cpus=None, env=None, stdin=None, "
		  "stdout=None, stderr=None)\n\n"
		  "What a session counts: 'self' (the calling thread), "
		  "'thread' (value: a tid; cpus: only there), 'process' "
		  "(value: a pid), 'cpus' (a CPU list, None for all), "
		  "'cgroup' (value: a cgroup v2 path) or 'command' (value: "
		  "argv, forked now and held before its exec until start()).",
	.tp_new = target_new,
	.tp_init = (initproc)target_init,
	.tp_dealloc = (destructor)target_dealloc,
	.tp_methods = target_methods,
	.tp_getset = target_getset,
};

/* ----------------------------------------------------------- Session */

typedef struct {
	PyObject_HEAD
	struct perfctr_session *session;
	PyThread_type_lock lock;
	PyObject *target;		/* the Target attached to, or NULL */
	struct perfctr_target *own;	/* the calling thread, for __enter__ */
	pthread_t own_thread;
	bool attached_own;
	unsigned int flags;
	PyObject *names;		/* tuple of event names, or NULL */
	PyObject *weakrefs;
	struct timespec entered;	/* the last __enter__ */
	unsigned long long wall_ns;	/* of the last with block */
} SessionObject;

static PyStructSequence_Field estimate_fields[] = {
	{ "value", "the estimated count over the whole time" },
	{ "error", "one standard error of value (0 exact, nan unknown)" },
	{ "fraction", "time counted / whole time" },
	{ "status", "'exact', 'scaled', 'no-error' or 'not-counted'" },
	{ "counted", "the raw count" },
	{ "time_counted", "ns on a counter" },
	{ "time_total", "ns the estimate extrapolates to" },
	{ "slices", "stretches of counting the error derives from" },
	{ NULL },
};

static PyStructSequence_Desc estimate_desc = {
	"perfctr.Estimate",
	"An event's estimate with its error bound (docs/estimates.md).",
	estimate_fields, 8,
};

static PyStructSequence_Field set_info_fields[] = {
	{ "id", NULL }, { "timeout_ns", NULL },
	{ "runs", "times the set became active" },
	{ "active_ns", "time it was active" },
	{ "overflows", "overflows of its counters" },
	{ "events", "events it holds" },
	{ "groups", "groups it holds" },
	{ "missed_switches", "switches dropped, session-wide" },
	{ NULL },
};

static PyStructSequence_Desc set_info_desc = {
	"perfctr.SetInfo", "An event set's accounting (perfmon2's setinfo).",
	set_info_fields, 8,
};

PyTypeObject pyc_estimate_type, pyc_set_info_type;

static PyObject *session_new(PyTypeObject *type, PyObject *args,
			     PyObject *kwargs)
{
	return PYC_NEW_LOCKED(type, SessionObject);
}

/* Add @events (str or list) to set @set; with the lock held. */
static int add_events(SessionObject *self, PyObject *events, int set)
{
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	PyObject *keep;
	const char *text = pyc_events_text(events, &keep);
	int n;

	if (!text)
		return -1;
	/* A parse reads sysfs and tracefs, and an unknown name's
	 * did-you-mean reads every tracepoint's: milliseconds. */
	Py_BEGIN_ALLOW_THREADS
	n = set ? perfctr_session__add_events_to_set(self->session, set, text, &err)
		: perfctr_session__add_events(self->session, text, &err);
	Py_END_ALLOW_THREADS
	if (n == -EBUSY) {
		PyErr_SetString(PyExc_RuntimeError,
				"events are added while the session is detached");
	} else if (n == -ENOENT && set) {
		PyErr_Format(PyExc_ValueError, "no event set %d (create_set() "
			     "makes it)", set);
	} else if (n < 0) {
		pyc_raise_parse(text, &err, n);
	}
	Py_DECREF(keep);
	Py_CLEAR(self->names);
	return n;
}

static int session_init(SessionObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "events", "inherit", "strict",
				  "enable_on_attach", "no_broker", NULL };
	PyObject *events = Py_None;
	int inherit = 0, strict = 0, on_attach = 0, no_broker = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$pppp", kwlist,
					 &events, &inherit, &strict,
					 &on_attach, &no_broker))
		return -1;
	if (self->session) {
		PyErr_SetString(PyExc_RuntimeError, "Session already made");
		return -1;
	}
	self->flags = (inherit ? PERFCTR_SESSION_INHERIT : 0) |
		      (strict ? PERFCTR_SESSION_STRICT : 0) |
		      (on_attach ? PERFCTR_SESSION_ENABLE_ON_ATTACH : 0) |
		      (no_broker ? PERFCTR_SESSION_NO_BROKER : 0);
	{
		PERFCTR_OPTS(perfctr_session_opts, opts, .flags = self->flags);

		self->session = perfctr_session__new(&opts);
	}
	if (!self->session) {
		PyErr_NoMemory();
		return -1;
	}
	if (events != Py_None && add_events(self, events, 0) < 0)
		return -1;
	return 0;
}

/* Detach (keeping the values) and drop the target; with the lock held. */
static int detach(SessionObject *self)
{
	int err;

	Py_BEGIN_ALLOW_THREADS
	err = perfctr_session__detach(self->session);
	Py_END_ALLOW_THREADS
	Py_CLEAR(self->target);
	self->attached_own = false;
	return err;
}

static void session_close(SessionObject *self)
{
	if (!self->session)
		return;
	Py_BEGIN_ALLOW_THREADS
	perfctr_session__delete(self->session);
	perfctr_target__delete(self->own);
	Py_END_ALLOW_THREADS
	self->session = NULL;
	self->own = NULL;
	self->attached_own = false;
	Py_CLEAR(self->target);
}

static void session_dealloc(SessionObject *self)
{
	if (self->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)self);
	session_close(self);
	Py_CLEAR(self->names);
	pyc_free_locked((PyObject *)self, self->lock);
}

/* Enter a call: the lock taken, the session open.  false + exception. */
static bool enter(SessionObject *self)
{
	if (!self->session) {
		PyErr_SetString(PyExc_ValueError, "the session is closed");
		return false;
	}
	pyc_lock(self->lock);
	if (!self->session) {
		PyThread_release_lock(self->lock);
		PyErr_SetString(PyExc_ValueError, "the session is closed");
		return false;
	}
	return true;
}

static void leave(SessionObject *self)
{
	PyThread_release_lock(self->lock);
}

static PyObject *session_add_events(SessionObject *self, PyObject *args,
				    PyObject *kwargs)
{
	static char *kwlist[] = { "events", "set", NULL };
	PyObject *events;
	int set = 0, n;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i", kwlist, &events,
					 &set) || !enter(self))
		return NULL;
	n = add_events(self, events, set);
	leave(self);
	return n < 0 ? NULL : PyLong_FromLong(n);
}

/* Attach to @target (a Target) or, for NULL, the calling thread. */
static int attach(SessionObject *self, PyObject *target)
{
	struct perfctr_target *t;
	int err;

	if (target) {
		t = pyc_target_get(target);
	} else {
		if (!self->own) {
			self->own = perfctr_target__new_self();
			if (!self->own) {
				PyErr_NoMemory();
				return -1;
			}
			self->own_thread = pthread_self();
		}
		t = self->own;
	}
	Py_BEGIN_ALLOW_THREADS
	err = perfctr_session__attach(self->session, t);
	Py_END_ALLOW_THREADS
	if (err == -EBUSY) {
		PyErr_SetString(PyExc_RuntimeError, "the session is attached "
				"already (detach() first)");
		return -1;
	}
	if (err < 0) {
		pyc_raise_attach(self->session, err);
		return -1;
	}
	if (target) {
		Py_INCREF(target);
		self->target = target;
	} else {
		self->attached_own = true;
	}
	return 0;
}

static PyObject *session_attach(SessionObject *self, PyObject *args)
{
	PyObject *target = Py_None;
	int err;

	if (!PyArg_ParseTuple(args, "|O", &target))
		return NULL;
	if (target != Py_None && !PyObject_TypeCheck(target, &pyc_target_type))
		return PyErr_Format(PyExc_TypeError, "attach() takes a Target "
				    "or None (the calling thread)");
	if (!enter(self))
		return NULL;
	err = attach(self, target == Py_None ? NULL : target);
	leave(self);
	if (err < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *session_detach(SessionObject *self, PyObject *unused)
{
	int err;

	if (!enter(self))
		return NULL;
	err = detach(self);
	leave(self);
	if (err == -ENOTCONN)
		return PyErr_Format(PyExc_RuntimeError, "the session is not "
				    "attached");
	if (err < 0)
		return pyc_raise(-err, NULL, "cannot read the final values: %s",
				 strerror(-err));
	Py_RETURN_NONE;
}

typedef int (*session_call_t)(struct perfctr_session *);

static PyObject *call(SessionObject *self, session_call_t fn, const char *what)
{
	int err;

	if (!enter(self))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	err = fn(self->session);
	Py_END_ALLOW_THREADS
	leave(self);
	if (err == -ENOTCONN)
		return PyErr_Format(PyExc_RuntimeError, "cannot %s: the session "
				    "is not attached", what);
	if (err < 0)
		return pyc_raise(-err, NULL, "cannot %s the counters: %s", what,
				 strerror(-err));
	Py_RETURN_NONE;
}

static PyObject *session_start(SessionObject *self, PyObject *unused)
{
	return call(self, perfctr_session__start, "start");
}

static PyObject *session_stop(SessionObject *self, PyObject *unused)
{
	return call(self, perfctr_session__stop, "stop");
}

static PyObject *session_reset(SessionObject *self, PyObject *unused)
{
	return call(self, perfctr_session__reset, "reset");
}

static PyObject *session_read(SessionObject *self, PyObject *unused)
{
	return call(self, perfctr_session__read, "read");
}

static PyObject *session_switch(SessionObject *self, PyObject *unused)
{
	return call(self, perfctr_session__switch, "switch");
}

/*
 * The context manager: attach to the calling thread when not attached
 * (or attached to another thread by an earlier enter), then reset and
 * start; the exit stops and reads.  Attached to a Target by attach(),
 * it counts that target.
 */
static PyObject *session_enter(SessionObject *self, PyObject *unused)
{
	int err;

	if (!enter(self))
		return NULL;
	if (self->attached_own &&
	    !pthread_equal(self->own_thread, pthread_self())) {
		detach(self);
		perfctr_target__delete(self->own);
		self->own = NULL;
	}
	if (!self->attached_own && !self->target && attach(self, NULL) < 0) {
		leave(self);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	err = perfctr_session__reset(self->session);
	if (err >= 0)
		err = perfctr_session__start(self->session);
	clock_gettime(CLOCK_MONOTONIC, &self->entered);
	Py_END_ALLOW_THREADS
	leave(self);
	if (err < 0)
		return pyc_raise(-err, NULL, "cannot start the counters: %s",
				 strerror(-err));
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *session_exit(SessionObject *self, PyObject *args)
{
	struct timespec now;
	int err;

	if (!enter(self))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	err = perfctr_session__stop(self->session);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (err >= 0)
		err = perfctr_session__read(self->session);
	Py_END_ALLOW_THREADS
	self->wall_ns = (now.tv_sec - self->entered.tv_sec) * 1000000000ull +
			now.tv_nsec - self->entered.tv_nsec;
	leave(self);
	if (err < 0)
		return pyc_raise(-err, NULL, "cannot stop the counters: %s",
				 strerror(-err));
	Py_RETURN_FALSE;
}

static PyObject *session_close_m(SessionObject *self, PyObject *unused)
{
	if (self->session) {
		pyc_lock(self->lock);
		session_close(self);
		leave(self);
	}
	Py_RETURN_NONE;
}

static bool event_index(SessionObject *self, PyObject *arg, size_t *idx)
{
	size_t n = perfctr_session__nr_events(self->session);

	if (PyLong_Check(arg)) {
		Py_ssize_t i = PyLong_AsSsize_t(arg);

		if (i < 0 && !PyErr_Occurred())
			i += n;
		if (i >= 0 && (size_t)i < n) {
			*idx = i;
			return true;
		}
		if (!PyErr_Occurred())
			PyErr_Format(PyExc_IndexError, "no event %zd", i);
		return false;
	}
	if (PyUnicode_Check(arg)) {
		const char *name = PyUnicode_AsUTF8(arg);

		if (!name)
			return false;
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(perfctr_session__event_name(self->session, i),
				    name)) {
				*idx = i;
				return true;
			}
		}
		PyErr_Format(PyExc_KeyError, "%R", arg);
		return false;
	}
	PyErr_SetString(PyExc_TypeError, "an event is its name or its index");
	return false;
}

/* Enter a call on event @arg (its name or index), *@idx set.  false +
 * exception, the lock not held. */
static bool enter_event(SessionObject *self, PyObject *arg, size_t *idx)
{
	if (!enter(self))
		return false;
	if (event_index(self, arg, idx))
		return true;
	leave(self);
	return false;
}

static PyObject *session_count(SessionObject *self, PyObject *arg)
{
	struct perfctr_count c;
	size_t idx;

	if (!enter_event(self, arg, &idx))
		return NULL;
	perfctr_session__count(self->session, idx, &c);
	leave(self);
	return pyc_count_tuple(&c);
}

static PyObject *count_item(const void *session, size_t i)
{
	struct perfctr_count c;

	perfctr_session__count(session, i, &c);
	return pyc_count_tuple(&c);
}

static PyObject *session_counts(SessionObject *self, PyObject *unused)
{
	PyObject *list;

	if (!enter(self))
		return NULL;
	list = pyc_list(perfctr_session__nr_events(self->session), count_item,
			self->session);
	leave(self);
	return list;
}

/* An event's count on each unit. */
struct unit_counts {
	const struct perfctr_session *session;
	size_t event;
};

static PyObject *unit_count_item(const void *ctx, size_t u)
{
	const struct unit_counts *uc = ctx;
	struct perfctr_count c;
	pid_t tid = -1;
	int cpu = -1;

	perfctr_session__unit(uc->session, u, &tid, &cpu);
	perfctr_session__unit_count(uc->session, uc->event, u, &c);
	return Py_BuildValue("(iiN)", (int)tid, cpu, pyc_count_tuple(&c));
}

static PyObject *session_unit_counts(SessionObject *self, PyObject *arg)
{
	PyObject *list;
	size_t idx;

	if (!enter_event(self, arg, &idx))
		return NULL;
	list = pyc_list(perfctr_session__nr_units(self->session),
			unit_count_item,
			&(struct unit_counts){ self->session, idx });
	leave(self);
	return list;
}

static PyObject *session_estimate(SessionObject *self, PyObject *arg)
{
	static const char *const status[] = {
		[PERFCTR_ESTIMATE_EXACT] = "exact",
		[PERFCTR_ESTIMATE_SCALED] = "scaled",
		[PERFCTR_ESTIMATE_NO_ERROR] = "no-error",
		[PERFCTR_ESTIMATE_NOT_COUNTED] = "not-counted",
	};
	struct perfctr_estimate est = { .sz = sizeof(est) };
	size_t idx;

	if (!enter_event(self, arg, &idx))
		return NULL;
	perfctr_session__estimate(self->session, idx, &est);
	leave(self);
	return pyc_struct_seq(&pyc_estimate_type, "dddsKKKK", est.value,
			      est.error, est.fraction,
			      (unsigned)est.status <= PERFCTR_ESTIMATE_NOT_COUNTED ?
			      status[est.status] : "?",
			      (unsigned long long)est.counted,
			      (unsigned long long)est.time_counted,
			      (unsigned long long)est.time_total,
			      (unsigned long long)est.nr_slices);
}

static PyObject *session_create_set(SessionObject *self, PyObject *args,
				    PyObject *kwargs)
{
	static char *kwlist[] = { "id", "timeout_ns", "on_overflow", NULL };
	PERFCTR_OPTS(perfctr_set_desc, desc);
	unsigned long long timeout = 0;
	int id, overflow = 0, err;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|K$p", kwlist, &id,
					 &timeout, &overflow))
		return NULL;
	if (id < 0 || id > 65535)
		return PyErr_Format(PyExc_ValueError, "set ids are 0-65535, "
				    "not %d", id);
	desc.id = id;
	desc.timeout_ns = timeout;
	desc.flags = (timeout ? PERFCTR_SET_SWITCH_TIMEOUT : 0) |
		     (overflow ? PERFCTR_SET_SWITCH_OVERFLOW : 0);
	if (!enter(self))
		return NULL;
	err = perfctr_session__create_set(self->session, &desc);
	leave(self);
	if (err == -EBUSY)
		return PyErr_Format(PyExc_RuntimeError, "sets are made while "
				    "the session is detached");
	if (err < 0)
		return pyc_raise(-err, NULL, "cannot create set %d: %s", id,
				 strerror(-err));
	Py_RETURN_NONE;
}

static PyObject *session_delete_set(SessionObject *self, PyObject *args)
{
	int id, err;

	if (!PyArg_ParseTuple(args, "i", &id) || !enter(self))
		return NULL;
	err = perfctr_session__delete_set(self->session, id);
	leave(self);
	if (err < 0)
		return pyc_raise_as(pyc_errors.error, -err, NULL,
				    "cannot delete set %d: %s", id,
				    strerror(-err));
	Py_RETURN_NONE;
}

static PyObject *session_switch_after(SessionObject *self, PyObject *args)
{
	unsigned long long period, n;
	PyObject *ev;
	size_t idx;
	int err;

	if (!PyArg_ParseTuple(args, "OKK", &ev, &period, &n) ||
	    !enter_event(self, ev, &idx))
		return NULL;
	err = perfctr_session__switch_after(self->session, idx, period, n);
	leave(self);
	if (err < 0)
		return pyc_raise_as(pyc_errors.error, -err, NULL,
				    "cannot switch after overflows: %s",
				    strerror(-err));
	Py_RETURN_NONE;
}

static PyObject *session_set_filter(SessionObject *self, PyObject *args)
{
	const char *filter;
	PyObject *ev;
	size_t idx;
	int err;

	if (!PyArg_ParseTuple(args, "Oz", &ev, &filter) ||
	    !enter_event(self, ev, &idx))
		return NULL;
	err = perfctr_session__set_filter(self->session, idx, filter);
	leave(self);
	if (err < 0)
		return pyc_raise_as(pyc_errors.error, -err, NULL,
				    "cannot set the filter: %s", strerror(-err));
	Py_RETURN_NONE;
}

static PyObject *session_set_info(SessionObject *self, PyObject *args)
{
	struct perfctr_set_info info = { .sz = sizeof(info) };
	int id, err;

	if (!PyArg_ParseTuple(args, "i", &id) || !enter(self))
		return NULL;
	err = perfctr_session__set_info(self->session, id, &info);
	leave(self);
	if (err < 0)
		return PyErr_Format(PyExc_ValueError, "no event set %d", id);
	return pyc_struct_seq(&pyc_set_info_type, "lKKKKKKK", (long)info.id,
			      (unsigned long long)info.timeout_ns,
			      (unsigned long long)info.runs,
			      (unsigned long long)info.active_ns,
			      (unsigned long long)info.overflows,
			      (unsigned long long)info.nr_events,
			      (unsigned long long)info.nr_groups,
			      (unsigned long long)info.missed_switches);
}

static PyObject *name_item(const void *session, size_t i)
{
	return PyUnicode_FromString(perfctr_session__event_name(session, i));
}

static PyObject *session_get_events(SessionObject *self, void *unused)
{
	if (!enter(self))
		return NULL;
	if (!self->names)
		self->names = pyc_tuple(perfctr_session__nr_events(self->session),
					name_item, self->session);
	leave(self);
	Py_XINCREF(self->names);
	return self->names;
}

static PyObject *layout_item(const void *session, size_t i)
{
	return Py_BuildValue("(nisd)",
			     (Py_ssize_t)perfctr_session__event_leader(session, i),
			     perfctr_session__event_set(session, i),
			     perfctr_session__event_unit(session, i),
			     perfctr_session__event_scale(session, i));
}

static PyObject *session_get_layout(SessionObject *self, void *unused)
{
	PyObject *list;

	if (!enter(self))
		return NULL;
	list = pyc_list(perfctr_session__nr_events(self->session), layout_item,
			self->session);
	leave(self);
	return list;
}

static PyObject *set_item(const void *session, size_t i)
{
	return PyLong_FromLong(perfctr_session__set_id(session, i));
}

static PyObject *session_get_sets(SessionObject *self, void *unused)
{
	PyObject *list;

	if (!enter(self))
		return NULL;
	list = pyc_list(perfctr_session__nr_sets(self->session), set_item,
			self->session);
	leave(self);
	return list;
}

static PyObject *session_get_active_set(SessionObject *self, void *unused)
{
	int id;

	if (!enter(self))
		return NULL;
	id = perfctr_session__active_set(self->session);
	leave(self);
	if (id < 0)
		Py_RETURN_NONE;
	return PyLong_FromLong(id);
}

static PyObject *session_get_attached(SessionObject *self, void *unused)
{
	return PyBool_FromLong(self->attached_own || self->target);
}

static PyObject *session_get_target(SessionObject *self, void *unused)
{
	PyObject *t = self->target ? self->target : Py_None;

	Py_INCREF(t);
	return t;
}

static PyMethodDef session_methods[] = {
	{ "add_events", (PyCFunction)(void (*)(void))session_add_events,
	  METH_VARARGS | METH_KEYWORDS,
	  "add_events(events, set=0) -> int\n\nParse events (perfex's "
	  "syntax: 'a,{b,c}:u') into event set `set`, while detached; "
	  "returns how many were added." },
	{ "attach", (PyCFunction)session_attach, METH_VARARGS,
	  "attach(target=None)\n\nOpen the counters on a Target (None: the "
	  "calling thread).  Counting starts with start()." },
	{ "detach", (PyCFunction)session_detach, METH_NOARGS,
	  "detach()\n\nRead the final values and close the counters; the "
	  "values stay readable and a later attach adds to them." },
	{ "start", (PyCFunction)session_start, METH_NOARGS, "start()" },
	{ "stop", (PyCFunction)session_stop, METH_NOARGS, "stop()" },
	{ "reset", (PyCFunction)session_reset, METH_NOARGS,
	  "reset()\n\nZero every count (the times run on)." },
	{ "read", (PyCFunction)session_read, METH_NOARGS,
	  "read()\n\nFetch fresh values from the kernel." },
	{ "switch", (PyCFunction)session_switch, METH_NOARGS,
	  "switch()\n\nEnd the active event set's run, start the next one's." },
	{ "close", (PyCFunction)session_close_m, METH_NOARGS,
	  "close()\n\nDetach and free everything now (also done when the "
	  "object goes)." },
	{ "raw_count", (PyCFunction)session_count, METH_O,
	  "raw_count(event) -> (value, enabled, running, status, errno)" },
	{ "raw_counts", (PyCFunction)session_counts, METH_NOARGS,
	  "raw_counts() -> list of raw counts, in event order" },
	{ "raw_unit_counts", (PyCFunction)session_unit_counts, METH_O,
	  "raw_unit_counts(event) -> list of (tid, cpu, raw count)" },
	{ "estimate", (PyCFunction)session_estimate, METH_O,
	  "estimate(event) -> Estimate\n\nThe event's count over the whole "
	  "time with its error bound, as of the last read." },
	{ "create_set", (PyCFunction)(void (*)(void))session_create_set,
	  METH_VARARGS | METH_KEYWORDS,
	  "create_set(id, timeout_ns=0, *, on_overflow=False)\n\nCreate event "
	  "set `id` (or change it); a timeout makes the sets rotate." },
	{ "delete_set", (PyCFunction)session_delete_set, METH_VARARGS,
	  "delete_set(id)" },
	{ "switch_after", (PyCFunction)session_switch_after, METH_VARARGS,
	  "switch_after(event, period, n)\n\nSwitch the event's set away "
	  "after n overflows of period events." },
	{ "set_filter", (PyCFunction)session_set_filter, METH_VARARGS,
	  "set_filter(event, filter)\n\nA tracepoint filter, applied at "
	  "attach." },
	{ "set_info", (PyCFunction)session_set_info, METH_VARARGS,
	  "set_info(id) -> SetInfo" },
	{ "__enter__", (PyCFunction)session_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)session_exit, METH_VARARGS, NULL },
	{ NULL },
};

static PyMemberDef session_members[] = {
	{ "wall_ns", T_ULONGLONG, offsetof(SessionObject, wall_ns), READONLY,
	  "wall-clock time of the last with block (or decorated call)" },
	{ NULL },
};

static PyGetSetDef session_getset[] = {
	{ "events", (getter)session_get_events, NULL,
	  "the events' names, in order", NULL },
	{ "layout", (getter)session_get_layout, NULL,
	  "per event: (leader index, set, unit, scale)", NULL },
	{ "sets", (getter)session_get_sets, NULL, "the event set ids", NULL },
	{ "active_set", (getter)session_get_active_set, NULL,
	  "the set counting now while sets rotate, else None", NULL },
	{ "attached", (getter)session_get_attached, NULL, NULL, NULL },
	{ "target", (getter)session_get_target, NULL,
	  "the Target attached to by attach(), or None", NULL },
	{ NULL },
};

PyTypeObject pyc_session_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfctr._core.Session",
	.tp_basicsize = sizeof(SessionObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "Session(events=None, *, inherit=False, strict=False, "
		  "enable_on_attach=False, no_broker=False)\n\n"
		  "perfmon2's session over libperfctr (use perfctr.Session).",
	.tp_new = session_new,
	.tp_init = (initproc)session_init,
	.tp_dealloc = (destructor)session_dealloc,
	.tp_methods = session_methods,
	.tp_getset = session_getset,
	.tp_members = session_members,
	.tp_weaklistoffset = offsetof(SessionObject, weakrefs),
};

int pyc_session_init_types(PyObject *m)
{
	if (PyStructSequence_InitType2(&pyc_estimate_type, &estimate_desc) < 0 ||
	    PyStructSequence_InitType2(&pyc_set_info_type, &set_info_desc) < 0 ||
	    PyType_Ready(&pyc_target_type) < 0 ||
	    PyType_Ready(&pyc_session_type) < 0)
		return -1;
	Py_INCREF(&pyc_estimate_type);
	Py_INCREF(&pyc_set_info_type);
	Py_INCREF(&pyc_target_type);
	Py_INCREF(&pyc_session_type);
	if (PyModule_AddObject(m, "Estimate", (PyObject *)&pyc_estimate_type) < 0 ||
	    PyModule_AddObject(m, "SetInfo", (PyObject *)&pyc_set_info_type) < 0 ||
	    PyModule_AddObject(m, "Target", (PyObject *)&pyc_target_type) < 0 ||
	    PyModule_AddObject(m, "Session", (PyObject *)&pyc_session_type) < 0)
		return -1;
	return 0;
}
