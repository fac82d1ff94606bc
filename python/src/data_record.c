// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._data.record(): a recording made from Python with the library's
 * sampler and perf.data writer, as perfex record makes it: the events
 * sample IP, TID, TIME, CPU and PERIOD (and CALLCHAIN, RAW for
 * tracepoints), the first carries the side-band records, the kernel's map
 * and (for a running process) its threads and maps are synthesised first.
 * The rings are read without the GIL; Python's signals are looked at
 * between two polls, so that Ctrl-C stops the recording with its file
 * finished.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "data.h"

struct rec {
	struct perfctr_sampler *sampler;
	struct perfctr_perfdata_writer *writer;
	struct perfctr_target *target;
	uint64_t trailer_id;
	uint64_t samples;
	uint64_t first_time, last_time;
	int write_err;
};

static int on_record(struct perfctr_ring *ring,
		     const struct perf_event_header *hdr, void *ctx)
{
	struct rec *rec = ctx;

	if (hdr->type == PERF_RECORD_SAMPLE)
		rec->samples++;
	if (!rec->write_err)
		rec->write_err = perfctr_perfdata_writer__write(rec->writer, hdr,
								hdr->size);
	return 0;
}

static int on_synth(const struct perf_event_header *hdr, void *ctx)
{
	struct rec *rec = ctx;

	if (!rec->write_err)
		rec->write_err = perfctr_perfdata_writer__write(rec->writer, hdr,
								hdr->size);
	return 0;
}

static void drain(struct rec *rec)
{
	struct perfctr_ring *const *rings = perfctr_sampler__rings(rec->sampler);
	size_t nr = perfctr_sampler__nr_rings(rec->sampler);

	for (size_t i = 0; rings && i < nr; i++) {
		int64_t r;

		do
			r = perfctr_ring__drain(rings[i], on_record, rec);
		while (r > 0);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The events of @spec with perfex record's sampling bits. */
static int add_events(struct rec *rec, const char *spec, unsigned long long period,
		      unsigned long long freq, bool callgraph)
{
	PERFCTR_OPTS(perfctr_parse_error, perr);
	struct perfctr_evlist *list = perfctr_evlist__new();
	size_t n;
	int r;

	if (!list) {
		PyErr_NoMemory();
		return -1;
	}
	r = perfctr_evlist__parse(list, spec, NULL, &perr);
	if (r < 0) {
		data_error(perr.errnum ? perr.errnum : -r, "%s%s%s", perr.message,
			   perr.hint[0] ? "\nhint: " : "", perr.hint);
		perfctr_evlist__delete(list);
		return -1;
	}
	n = perfctr_evlist__nr_events(list);
	for (size_t i = 0; i < n; i++) {
		struct perf_event_attr attr = *perfctr_evlist__attr(list, i);
		const char *pmu = perfctr_evlist__pmu(list, i);
		bool exact = attr.type == PERF_TYPE_TRACEPOINT ||
			     attr.type == PERF_TYPE_BREAKPOINT ||
			     (pmu && !strcmp(pmu, "uprobe"));

		/* As perfex record: every event of the exact kinds, else
		 * 4000 Hz, unless a period or frequency is given. */
		if (period) {
			attr.sample_period = period;
		} else if (freq) {
			attr.freq = 1;
			attr.sample_freq = freq;
		} else if (exact) {
			attr.sample_period = 1;
		} else {
			attr.freq = 1;
			attr.sample_freq = 4000;
		}
		attr.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
				    PERF_SAMPLE_PERIOD;
		if (callgraph)
			attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		if (attr.type == PERF_TYPE_TRACEPOINT)
			attr.sample_type |= PERF_SAMPLE_RAW;
		if (i == 0) {
			attr.mmap = 1;
			attr.mmap2 = 1;
			attr.comm = 1;
			attr.comm_exec = 1;
			attr.task = 1;
		}
		attr.sample_id_all = 1;
		r = perfctr_sampler__add_attr(rec->sampler, &attr,
					      perfctr_evlist__name(list, i));
		if (r < 0) {
			data_error(-r, "cannot add event '%s'",
				   perfctr_evlist__name(list, i));
			perfctr_evlist__delete(list);
			return -1;
		}
	}
	perfctr_evlist__delete(list);
	return 0;
}

static int open_file(struct rec *rec, const char *output)
{
	size_t n = perfctr_sampler__nr_attrs(rec->sampler);

	rec->writer = perfctr_perfdata_writer__open(output, NULL);
	if (!rec->writer) {
		data_error(errno, "cannot write '%s'", output);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const uint64_t *ids = NULL;
		size_t nr = perfctr_sampler__ids(rec->sampler, i, &ids);
		int r;

		if (i == 0 && nr)
			rec->trailer_id = ids[0];
		r = perfctr_perfdata_writer__add_attr(rec->writer,
			perfctr_sampler__attr(rec->sampler, i),
			perfctr_sampler__name(rec->sampler, i), ids, nr);
		if (r < 0) {
			data_error(-r, "cannot write '%s'", output);
			return -1;
		}
	}
	return 0;
}

static void synthesise(struct rec *rec, pid_t pid)
{
	PERFCTR_OPTS(perfctr_synth_opts, o,
		     .attr = perfctr_sampler__attr(rec->sampler, 0),
		     .id = rec->trailer_id);

	perfctr_synth_kernel(&o, on_synth, rec, NULL);
	if (pid > 0)
		perfctr_synth_process(pid, &o, on_synth, rec);
}

/* Whether the command ended (not reaped: perfctr_target__wait() does). */
static bool command_ended(pid_t pid)
{
	siginfo_t si = { 0 };

	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == pid;
}

/* Poll until the command ends, the duration is over, the process is gone
 * or a Python signal handler raised.  Return 0, or -1 with an exception. */
static int loop(struct rec *rec, bool command, pid_t pid, double duration)
{
	double end = duration > 0 ? now() + duration : 0;
	int64_t r;

	for (;;) {
		if (PyErr_CheckSignals())
			return -1;
		Py_BEGIN_ALLOW_THREADS
		r = perfctr_sampler__poll(rec->sampler, 100, on_record, rec);
		if (!rec->write_err)
			rec->write_err = perfctr_perfdata_writer__flush(rec->writer);
		Py_END_ALLOW_THREADS
		if (rec->write_err || r == -ENODEV)
			return 0;
		if (r < 0 && r != -EINTR) {
			data_error((int)-r, "reading the rings failed");
			return -1;
		}
		if (command && command_ended(pid))
			return 0;
		if (!command && kill(pid, 0) && errno == ESRCH)
			return 0;
		if (end && now() >= end)
			return 0;
	}
}

static void rec_free(struct rec *rec)
{
	perfctr_sampler__delete(rec->sampler);
	perfctr_target__delete(rec->target);
}

static void argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* @obj (a sequence of str) as a NULL-terminated array of copies, or NULL
 * with an exception. */
static char **argv_of(PyObject *obj)
{
	PyObject *seq = PySequence_Fast(obj, "perfctr: argv: a list of str");
	Py_ssize_t n = seq ? PySequence_Fast_GET_SIZE(seq) : 0;
	char **argv;

	if (!seq)
		return NULL;
	argv = calloc((size_t)n + 1, sizeof(*argv));
	for (Py_ssize_t i = 0; argv && i < n; i++) {
		const char *a = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));

		if (!a || !(argv[i] = strdup(a))) {
			Py_DECREF(seq);
			if (!PyErr_Occurred())
				PyErr_NoMemory();
			argv_free(argv);
			return NULL;
		}
	}
	Py_DECREF(seq);
	if (!argv || !n) {
		PyErr_SetString(PyExc_ValueError, "perfctr: record: an empty argv");
		argv_free(argv);
		return NULL;
	}
	return argv;
}

/* The target: the command @argv (not started yet), else process @pid.
 * Return 0, or -1 with an exception. */
static int make_target(struct rec *rec, char **argv, int pid)
{
	PERFCTR_OPTS(perfctr_command_opts, copts);

	if (argv) {
		rec->target = perfctr_target__new_command(argv, &copts);
		if (!rec->target) {
			data_error(errno, "cannot run '%s'", argv[0]);
			return -1;
		}
	} else {
		rec->target = perfctr_target__new_process(pid);
		if (!rec->target) {
			data_error(errno, "cannot sample process %d", pid);
			return -1;
		}
	}
	return 0;
}

/* The sampler on the target with the events of @spec, opened.  Return 0,
 * or -1 with an exception. */
static int open_sampler(struct rec *rec, const char *spec,
			unsigned long long period, unsigned long long freq,
			bool callgraph, Py_ssize_t mmap_pages)
{
	PERFCTR_OPTS(perfctr_sampler_opts, sopts, .target = rec->target,
		     .data_pages = (size_t)mmap_pages);
	struct perfctr_attach_error aerr = { .sz = sizeof(aerr) };
	const char *name;
	int r;

	rec->sampler = perfctr_sampler__new(&sopts);
	if (!rec->sampler) {
		data_error(errno, "cannot make a sampler");
		return -1;
	}
	if (add_events(rec, spec, period, freq, callgraph))
		return -1;
	Py_BEGIN_ALLOW_THREADS
	r = perfctr_sampler__open(rec->sampler);
	Py_END_ALLOW_THREADS
	if (r >= 0)
		return 0;
	perfctr_sampler__open_error(rec->sampler, &aerr);
	name = perfctr_sampler__name(rec->sampler, aerr.event);
	data_error(aerr.errnum ? aerr.errnum : -r, "cannot open event '%s'%s%s",
		   name ? name : "?",
		   aerr.errnum == EACCES || aerr.errnum == EPERM ?
		   "\nhint: lower /proc/sys/kernel/perf_event_paranoid, "
		   "or ask perfctrd (perfctrd(8))" : "", "");
	return -1;
}

/* Start the command (or enable the events on the process), record until
 * loop() stops, then stop, drain the rings and reap the command into
 * @status (killed first when the recording failed).  Return 0, or -1 with
 * an exception. */
static int run(struct rec *rec, char **argv, pid_t pid, double duration,
	       int *status)
{
	int failed = 0, r;

	if (argv) {
		r = perfctr_target__start(rec->target);
		if (r < 0) {
			data_error(-r, "cannot run '%s'", argv[0]);
			failed = 1;
		}
	} else {
		perfctr_sampler__enable(rec->sampler);
	}
	if (!failed && loop(rec, argv != NULL, pid, duration))
		failed = 1;
	perfctr_sampler__disable(rec->sampler);
	drain(rec);
	if (argv) {
		if (failed)
			perfctr_target__kill(rec->target, SIGKILL);
		Py_BEGIN_ALLOW_THREADS
		while (perfctr_target__wait(rec->target, status) == -EINTR)
			;
		Py_END_ALLOW_THREADS
	}
	return failed ? -1 : 0;
}

/* Close the file.  Return 0, or -errno of the first write that failed. */
static int close_file(struct rec *rec)
{
	int r = perfctr_perfdata_writer__close(rec->writer);

	rec->writer = NULL;
	return r ? r : rec->write_err;
}

/* record()'s result: samples, lost, and the command's exit status or
 * signal (None for a process, or the one that does not apply). */
static PyObject *record_result(struct rec *rec, bool command, int status)
{
	uint64_t kernel_lost = 0;
	struct perfctr_ring_stats rst = { 0 };
	PyObject *ex, *sig;

	perfctr_sampler__stats(rec->sampler, &rst, &kernel_lost);
	ex = command && status >= 0 && WIFEXITED(status) ?
	     PyLong_FromLong(WEXITSTATUS(status)) : (Py_INCREF(Py_None), Py_None);
	sig = command && status >= 0 && WIFSIGNALED(status) ?
	      PyLong_FromLong(WTERMSIG(status)) : (Py_INCREF(Py_None), Py_None);
	return Py_BuildValue("{sKsKsNsN}",
			     "samples", (unsigned long long)rec->samples,
			     "lost", (unsigned long long)kernel_lost,
			     "exit_status", ex, "signal", sig);
}

/* Record into @output until run() stops; the result, or NULL with an
 * exception. */
static PyObject *record(struct rec *rec, const char *output, char **argv,
			double duration)
{
	pid_t pid = perfctr_target__pid(rec->target);
	int status = -1, failed, r;

	if (open_file(rec, output))
		return NULL;
	synthesise(rec, argv ? 0 : pid);
	failed = run(rec, argv, pid, duration, &status);
	r = close_file(rec);
	if (failed)
		return NULL;
	if (r < 0)
		return data_error(-r, "cannot write '%s'", output);
	return record_result(rec, argv != NULL, status);
}

PyObject *data_record(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "output", "argv", "pid", "events", "period",
				  "freq", "callgraph", "duration", "mmap_pages",
				  NULL };
	const char *events = "cpu-clock";
	PyObject *argv_obj = Py_None, *output_obj, *res = NULL;
	unsigned long long period = 0, freq = 0;
	int pid = 0, callgraph = 0;
	double duration = 0;
	Py_ssize_t mmap_pages = 0;
	struct rec rec = { 0 };
	char **argv = NULL;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|OisKKpdn", kwlist,
					 PyUnicode_FSConverter, &output_obj,
					 &argv_obj, &pid, &events, &period,
					 &freq, &callgraph, &duration,
					 &mmap_pages))
		return NULL;
	if ((argv_obj == Py_None) == (pid <= 0)) {
		PyErr_SetString(PyExc_ValueError,
				"perfctr: record: give a command (argv) or a pid");
		goto out;
	}
	if (argv_obj != Py_None && !(argv = argv_of(argv_obj)))
		goto out;
	if (make_target(&rec, argv, pid) ||
	    open_sampler(&rec, events, period, freq, callgraph, mmap_pages))
		goto out;
	res = record(&rec, PyBytes_AS_STRING(output_obj), argv, duration);
out:
	if (rec.writer)
		perfctr_perfdata_writer__close(rec.writer);
	rec_free(&rec);
	argv_free(argv);
	Py_DECREF(output_obj);
	return res;
}
