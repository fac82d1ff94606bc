// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._data: recordings from Python over libperfctr's public API.
 * The Reader type (a perf.data file read sample by sample, perfex's or
 * perf's, through perfctr_reader), its columns filled in C without a Python
 * object per sample, and the module table; the other data*.c files hold
 * recording, profiles and the script handler loop (data.h).
 *
 * Thread safety: a Reader is used by one thread at a time (the library's
 * reader is not synchronised); calls that read the whole file (columns,
 * profiles, exports) release the GIL while they read.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

PyObject *data_error(int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	PyObject *args;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	args = Py_BuildValue("(is)", err, msg);
	if (args) {
		PyErr_SetObject(PyExc_OSError, args);
		Py_DECREF(args);
	}
	return NULL;
}

PyObject *data_str_or_none(const char *s)
{
	if (!s)
		Py_RETURN_NONE;
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* What the library's reader errors mean, in perfex's words. */
static const char *open_reason(int err)
{
	switch (err) {
	case EINVAL:
		return "not a perf.data file, or a damaged header";
	case EOPNOTSUPP:
		return "a pipe-mode or other-endian file";
	case ENODATA:
		return "no events in the file";
	case EBADMSG:
		return "a damaged record";
	default:
		return strerror(err);
	}
}

PyObject *reader_error(ReaderObject *r, int err)
{
	const char *path = r->path ? PyUnicode_AsUTF8(r->path) : NULL;

	PyErr_Clear();
	return data_error(err, "cannot read '%s': %s", path ? path : "?",
			  open_reason(err));
}

/* ---- Sample: a struct sequence ---- */

static PyStructSequence_Field sample_fields[] = {
	{ "event", "the event's name, as the file names it" },
	{ "event_idx", "the event's index in Reader.events" },
	{ "comm", "the thread's comm when the sample was taken (None: unnamed)" },
	{ "pid", "process id" },
	{ "tid", "thread id" },
	{ "cpu", "CPU (-1 when not recorded)" },
	{ "time", "timestamp, ns (0 when not recorded)" },
	{ "period", "the sample's period (weight)" },
	{ "ip", "the sampled address" },
	{ "symbol", "the symbol of ip (None: unresolved)" },
	{ "dso", "the file of ip (None: unknown)" },
	{ "kernel", "True when taken in the kernel" },
	{ "callchain", "tuple of (ip, symbol, dso) frames, the sampled one "
		       "first (Reader(callchain=True)), else None" },
	{ "fields", "dict of a tracepoint's fields (Reader(fields=True)), "
		    "else None" },
	{ NULL, NULL },
};

static PyStructSequence_Desc sample_desc = {
	"perfctr.Sample",
	"One sample of a perf.data file (see perfctr.Reader).",
	sample_fields, 14,
};

static PyTypeObject *SampleType;

static PyObject *frames_tuple(const struct perfctr_reader_sample *rs)
{
	PyObject *t = PyTuple_New((Py_ssize_t)rs->nr_frames);

	for (size_t i = 0; t && i < rs->nr_frames; i++) {
		PyObject *f = Py_BuildValue("(KNN)",
			(unsigned long long)(rs->ips ? rs->ips[i] : rs->frames[i].addr),
			data_str_or_none(rs->frames[i].sym),
			data_str_or_none(rs->frames[i].dso));

		if (!f) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, f);
	}
	return t;
}

static PyObject *fields_dict(ReaderObject *r, const struct perfctr_reader_sample *rs)
{
	const struct perf_event_attr *attr =
		perfctr_reader__event_attr(r->rd, rs->event_idx);
	const struct perfctr_tp_format *tp;
	PyObject *d;

	if (!attr || attr->type != PERF_TYPE_TRACEPOINT || !rs->sample->raw)
		Py_RETURN_NONE;
	tp = data_trace_find(reader_trace(r), attr->config);
	if (!tp)
		Py_RETURN_NONE;
	d = PyDict_New();
	for (size_t i = 0; d && i < data_tp_nr_fields(tp); i++) {
		PyObject *v = data_tp_field(tp, i, rs->sample->raw,
					    rs->sample->raw_size);

		if (!v || PyDict_SetItemString(d, data_tp_field_name(tp, i), v)) {
			Py_XDECREF(v);
			Py_DECREF(d);
			return NULL;
		}
		Py_DECREF(v);
	}
	return d;
}

static PyObject *make_sample(ReaderObject *r)
{
	const struct perfctr_reader_sample *rs = &r->cur;
	const struct perfctr_sample *s = rs->sample;
	PyObject *o = PyStructSequence_New(SampleType);
	PyObject *v[14];
	int i;

	if (!o)
		return NULL;
	v[0] = PyTuple_GET_ITEM(r->event_names, (Py_ssize_t)rs->event_idx);
	Py_INCREF(v[0]);
	v[1] = PyLong_FromSize_t(rs->event_idx);
	v[2] = data_str_or_none(rs->comm);
	v[3] = PyLong_FromLong(rs->pid);
	v[4] = PyLong_FromLong(rs->tid);
	v[5] = PyLong_FromLong(s->type & PERF_SAMPLE_CPU ? (long)s->cpu : -1);
	v[6] = PyLong_FromUnsignedLongLong(s->time);
	v[7] = PyLong_FromUnsignedLongLong(s->period);
	v[8] = PyLong_FromUnsignedLongLong(s->ip);
	v[9] = data_str_or_none(rs->nr_frames ? rs->frames[0].sym : NULL);
	v[10] = data_str_or_none(rs->nr_frames ? rs->frames[0].dso : NULL);
	v[11] = PyBool_FromLong(rs->kernel);
	if (r->callchain) {
		v[12] = frames_tuple(rs);
	} else {
		v[12] = Py_None;
		Py_INCREF(Py_None);
	}
	if (r->fields) {
		v[13] = fields_dict(r, rs);
	} else {
		v[13] = Py_None;
		Py_INCREF(Py_None);
	}
	for (i = 0; i < 14; i++) {
		if (!v[i]) {
			for (int k = 0; k < 14; k++)
				Py_XDECREF(k < i ? NULL : v[k]);
			Py_DECREF(o);
			return NULL;
		}
		PyStructSequence_SET_ITEM(o, i, v[i]);
	}
	return o;
}

/* ---- Reader ---- */

const struct perfctr_tp_formats *reader_trace(ReaderObject *r)
{
	if (!r->trace && r->rd)
		r->trace = perfctr_perfdata__tp_formats(perfctr_reader__perfdata(r->rd));
	return r->trace;
}

int reader_next(ReaderObject *r)
{
	int ret;

	if (!r->rd) {
		PyErr_SetString(PyExc_ValueError, "perfctr: the reader is closed");
		return -1;
	}
	if (r->done)
		return 0;
	r->cur.sz = sizeof(r->cur);
	ret = perfctr_reader__next(r->rd, &r->cur);
	if (ret < 0) {
		reader_error(r, -ret);
		return -1;
	}
	if (ret == 0)
		r->done = true;
	r->have_cur = ret > 0;
	return ret;
}

static int reader_init(ReaderObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "path", "callchain", "symbols", "fields",
				  "kallsyms", "root", "demangle", NULL };
	PERFCTR_OPTS(perfctr_reader_opts, opts);
	PyObject *path_obj;
	int callchain = 0, symbols = 1, fields = 1, demangle = 1;
	const char *kallsyms = NULL, *root = NULL, *path;
	struct perfctr_reader *rd;
	size_t n;
	int err;

	if (self->rd) {
		PyErr_SetString(PyExc_RuntimeError, "perfctr: Reader opened twice");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|pppzzp", kwlist,
					 PyUnicode_FSConverter, &path_obj,
					 &callchain, &symbols, &fields,
					 &kallsyms, &root, &demangle))
		return -1;
	path = PyBytes_AS_STRING(path_obj);
	opts.callchain = callchain;
	opts.dso_only = !symbols;
	opts.kallsyms = kallsyms;
	opts.root = root;
	opts.no_demangle = !demangle;
	Py_BEGIN_ALLOW_THREADS
	rd = perfctr_reader__open(path, &opts);
	err = errno;
	Py_END_ALLOW_THREADS
	self->path = PyUnicode_DecodeFSDefault(path);
	Py_DECREF(path_obj);
	if (!self->path) {
		perfctr_reader__close(rd);
		return -1;
	}
	if (!rd) {
		reader_error(self, err);
		return -1;
	}
	self->rd = rd;
	self->callchain = callchain;
	self->fields = fields;
	n = perfctr_reader__nr_events(rd);
	self->event_names = PyTuple_New((Py_ssize_t)n);
	if (!self->event_names)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *name = perfctr_reader__event_name(rd, i);
		PyObject *s = data_str_or_none(name ? name : "");

		if (!s)
			return -1;
		PyTuple_SET_ITEM(self->event_names, (Py_ssize_t)i, s);
	}
	return 0;
}

static void reader_close_now(ReaderObject *self)
{
	self->trace = NULL;
	perfctr_reader__close(self->rd);
	self->rd = NULL;
	self->have_cur = false;
}

static void reader_dealloc(ReaderObject *self)
{
	reader_close_now(self);
	Py_XDECREF(self->path);
	Py_XDECREF(self->event_names);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *reader_close(ReaderObject *self, PyObject *unused)
{
	reader_close_now(self);
	Py_RETURN_NONE;
}

static PyObject *reader_iternext(ReaderObject *self)
{
	int r = reader_next(self);

	return r > 0 ? make_sample(self) : NULL;
}

static PyObject *reader_events(ReaderObject *self, void *unused)
{
	if (!self->event_names)
		return PyTuple_New(0);
	Py_INCREF(self->event_names);
	return self->event_names;
}

static PyObject *reader_get_path(ReaderObject *self, void *unused)
{
	if (!self->path)
		Py_RETURN_NONE;
	Py_INCREF(self->path);
	return self->path;
}

static int check_open(ReaderObject *self)
{
	if (self->rd)
		return 0;
	PyErr_SetString(PyExc_ValueError, "perfctr: the reader is closed");
	return -1;
}

static PyObject *reader_attr(ReaderObject *self, PyObject *arg)
{
	const struct perf_event_attr *a;
	Py_ssize_t idx = PyLong_AsSsize_t(arg);

	if (idx == -1 && PyErr_Occurred())
		return NULL;
	if (check_open(self))
		return NULL;
	a = idx < 0 ? NULL : perfctr_reader__event_attr(self->rd, (size_t)idx);
	if (!a) {
		PyErr_Format(PyExc_IndexError, "perfctr: no event %zd", idx);
		return NULL;
	}
	return Py_BuildValue("{sIsKsKsKsKsKsIsNsN}",
		"type", a->type, "config", (unsigned long long)a->config,
		"sample_type", (unsigned long long)a->sample_type,
		"sample_period", (unsigned long long)a->sample_period,
		"read_format", (unsigned long long)a->read_format,
		"config1", (unsigned long long)a->config1,
		"size", a->size,
		"freq", PyBool_FromLong(a->freq),
		"raw", PyBytes_FromStringAndSize((const char *)a,
						 (Py_ssize_t)sizeof(*a)));
}

static PyObject *reader_stats(ReaderObject *self, PyObject *args)
{
	struct perfctr_reader_stats st = { .sz = sizeof(st) };
	Py_ssize_t idx = -1;
	int r;

	if (!PyArg_ParseTuple(args, "|n", &idx) || check_open(self))
		return NULL;
	r = perfctr_reader__stats(self->rd, idx < 0 ? SIZE_MAX : (size_t)idx, &st);
	if (r < 0) {
		PyErr_Format(PyExc_IndexError, "perfctr: no event %zd", idx);
		return NULL;
	}
	return Py_BuildValue("{sKsKsKsKsKsK}",
		"records", (unsigned long long)st.records,
		"samples", (unsigned long long)st.samples,
		"bad_samples", (unsigned long long)st.bad_samples,
		"lost", (unsigned long long)st.lost,
		"lost_samples", (unsigned long long)st.lost_samples,
		"unwound", (unsigned long long)st.unwound);
}

static PyObject *reader_header(ReaderObject *self, PyObject *unused)
{
	struct perfctr_perfdata *pd;
	const char *const *argv;
	PyObject *d, *cmd;
	uint32_t avail = 0, online = 0;
	int argc;

	if (check_open(self))
		return NULL;
	pd = perfctr_reader__perfdata(self->rd);
	argc = perfctr_perfdata__cmdline(pd, &argv);
	cmd = PyList_New(0);
	for (int i = 0; cmd && i < argc; i++) {
		PyObject *s = data_str_or_none(argv[i]);

		if (!s || PyList_Append(cmd, s)) {
			Py_XDECREF(s);
			Py_CLEAR(cmd);
		}
		Py_XDECREF(s);
	}
	if (!cmd)
		return NULL;
	perfctr_perfdata__nr_cpus(pd, &avail, &online);
	d = Py_BuildValue("{sNsNsNsNsIsIsN}",
		"hostname", data_str_or_none(perfctr_perfdata__string(pd, PERFCTR_FEAT_HOSTNAME)),
		"os_release", data_str_or_none(perfctr_perfdata__string(pd, PERFCTR_FEAT_OSRELEASE)),
		"arch", data_str_or_none(perfctr_perfdata__string(pd, PERFCTR_FEAT_ARCH)),
		"perf_version", data_str_or_none(perfctr_perfdata__string(pd, PERFCTR_FEAT_VERSION)),
		"nr_cpus_available", avail, "nr_cpus_online", online,
		"cmdline", cmd);
	return d;
}

/* ---- columns: a buffer filled in C, viewed by numpy.frombuffer ---- */

typedef struct {
	PyObject_HEAD
	char *data;
	Py_ssize_t size;
	Py_ssize_t exports;
} BufferObject;

static int buffer_getbuffer(BufferObject *self, Py_buffer *view, int flags)
{
	int r = PyBuffer_FillInfo(view, (PyObject *)self, self->data,
				  self->size, 1, flags);

	if (!r)
		self->exports++;
	return r;
}

static void buffer_releasebuffer(BufferObject *self, Py_buffer *view)
{
	self->exports--;
}

static void buffer_dealloc(BufferObject *self)
{
	free(self->data);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyBufferProcs buffer_procs = {
	.bf_getbuffer = (getbufferproc)buffer_getbuffer,
	.bf_releasebuffer = (releasebufferproc)buffer_releasebuffer,
};

static PyTypeObject BufferType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfctr._data.Buffer",
	.tp_doc = "Read-only bytes filled in C (the rows of Reader.columns()).",
	.tp_basicsize = sizeof(BufferObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_dealloc = (destructor)buffer_dealloc,
	.tp_as_buffer = &buffer_procs,
};

/* Strings of a column, each once: codes into a table (open addressing). */
struct intern {
	char **strings;
	size_t nr, cap;
	int32_t *slots;		/* code + 1, 0: empty */
	size_t nr_slots;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int intern_grow(struct intern *in)
{
	size_t n = in->nr_slots ? 2 * in->nr_slots : 256;
	int32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < in->nr; i++) {
		size_t k = hash_str(in->strings[i]) & (n - 1);

		while (slots[k])
			k = (k + 1) & (n - 1);
		slots[k] = (int32_t)i + 1;
	}
	free(in->slots);
	in->slots = slots;
	in->nr_slots = n;
	return 0;
}

/* The code of @s (-1 for NULL), -2 when out of memory. */
static int32_t intern_code(struct intern *in, const char *s)
{
	size_t k;

	if (!s)
		return -1;
	if (2 * (in->nr + 1) > in->nr_slots && intern_grow(in))
		return -2;
	k = hash_str(s) & (in->nr_slots - 1);
	while (in->slots[k]) {
		int32_t code = in->slots[k] - 1;

		if (!strcmp(in->strings[code], s))
			return code;
		k = (k + 1) & (in->nr_slots - 1);
	}
	if (in->nr == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 64;
		char **n = realloc(in->strings, cap * sizeof(*n));

		if (!n)
			return -2;
		in->strings = n;
		in->cap = cap;
	}
	in->strings[in->nr] = strdup(s);
	if (!in->strings[in->nr])
		return -2;
	in->slots[k] = (int32_t)in->nr + 1;
	return (int32_t)in->nr++;
}

static void intern_free(struct intern *in)
{
	for (size_t i = 0; i < in->nr; i++)
		free(in->strings[i]);
	free(in->strings);
	free(in->slots);
}

static PyObject *intern_list(const struct intern *in)
{
	PyObject *l = PyList_New((Py_ssize_t)in->nr);

	for (size_t i = 0; l && i < in->nr; i++) {
		PyObject *s = data_str_or_none(in->strings[i]);

		if (!s) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, s);
	}
	return l;
}

enum column {
	COL_IP, COL_PID, COL_TID, COL_CPU, COL_TIME, COL_PERIOD, COL_EVENT,
	COL_ADDR, COL_KERNEL, COL_COMM, COL_SYMBOL, COL_DSO, COL_NR
};

static const struct {
	const char *name;
	char code;		/* 'Q' u64, 'i' i32, 'b' bool (u8) */
} columns[COL_NR] = {
	[COL_IP] = { "ip", 'Q' }, [COL_PID] = { "pid", 'i' },
	[COL_TID] = { "tid", 'i' }, [COL_CPU] = { "cpu", 'i' },
	[COL_TIME] = { "time", 'Q' }, [COL_PERIOD] = { "period", 'Q' },
	[COL_EVENT] = { "event", 'i' }, [COL_ADDR] = { "addr", 'Q' },
	[COL_KERNEL] = { "kernel", 'b' }, [COL_COMM] = { "comm", 'i' },
	[COL_SYMBOL] = { "symbol", 'i' }, [COL_DSO] = { "dso", 'i' },
};

static size_t column_size(char code)
{
	return code == 'Q' ? 8 : code == 'i' ? 4 : 1;
}

struct fill {
	enum column cols[COL_NR];
	size_t nr_cols, row_size;
	long event;		/* only this event's samples; -1: all */
	struct intern strings[3];	/* comm, symbol, dso */
	char *data;
	size_t rows, cap;
	int err;		/* positive errno */
	bool read_err;
};

static int fill_row(struct fill *f, const struct perfctr_reader_sample *rs)
{
	const struct perfctr_sample *s = rs->sample;
	char *row;

	if (f->rows == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 4096;
		char *n = realloc(f->data, cap * f->row_size);

		if (!n)
			return -ENOMEM;
		f->data = n;
		f->cap = cap;
	}
	row = f->data + f->rows * f->row_size;
	for (size_t c = 0; c < f->nr_cols; c++) {
		uint64_t q = 0;
		int32_t i = 0;
		uint8_t b;

		switch (f->cols[c]) {
		case COL_IP: q = s->ip; break;
		case COL_TIME: q = s->time; break;
		case COL_PERIOD: q = s->period; break;
		case COL_ADDR: q = s->addr; break;
		case COL_PID: i = rs->pid; break;
		case COL_TID: i = rs->tid; break;
		case COL_CPU: i = s->type & PERF_SAMPLE_CPU ? (int32_t)s->cpu : -1; break;
		case COL_EVENT: i = (int32_t)rs->event_idx; break;
		case COL_COMM: i = intern_code(&f->strings[0], rs->comm); break;
		case COL_SYMBOL:
			i = intern_code(&f->strings[1],
					rs->nr_frames ? rs->frames[0].sym : NULL);
			break;
		case COL_DSO:
			i = intern_code(&f->strings[2],
					rs->nr_frames ? rs->frames[0].dso : NULL);
			break;
		case COL_KERNEL:
			b = rs->kernel;
			memcpy(row, &b, 1);
			row += 1;
			continue;
		default:
			break;
		}
		if (i == -2)
			return -ENOMEM;
		if (columns[f->cols[c]].code == 'Q') {
			memcpy(row, &q, 8);
			row += 8;
		} else {
			memcpy(row, &i, 4);
			row += 4;
		}
	}
	f->rows++;
	return 0;
}

/* Every remaining sample into rows: runs without the GIL. */
static void fill_rows(ReaderObject *r, struct fill *f)
{
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	int ret;

	while ((ret = perfctr_reader__next(r->rd, &rs)) > 0) {
		if (f->event >= 0 && rs.event_idx != (size_t)f->event)
			continue;
		ret = fill_row(f, &rs);
		if (ret < 0)
			break;
	}
	if (ret < 0) {
		f->err = -ret;
		f->read_err = ret != -ENOMEM;
	} else {
		r->done = true;
	}
	r->have_cur = false;
}

/*
 * The fast path of the numeric columns: the samples decoded straight from
 * the file's records (no process model, no symbols), then put in the
 * reader's order, time order with equal times in file order, by a stable
 * sort when the file is not in that order already (one ring's file is).
 * Taken only for columns that need nothing of the model and files whose
 * events all record TID and TIME; -ENOTSUP otherwise (the reader then
 * fills them).  Runs without the GIL.
 */
struct keyed {
	uint64_t time;
	uint64_t seq;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool fast_columns(const struct fill *f)
{
	for (size_t c = 0; c < f->nr_cols; c++)
		if (f->cols[c] == COL_COMM || f->cols[c] == COL_SYMBOL ||
		    f->cols[c] == COL_DSO)
			return false;
	return true;
}

static int fill_fast(const char *path, struct fill *f)
{
	struct perfctr_perfdata *pd = perfctr_perfdata__open(path, NULL);
	const struct perfctr_decoder *dec;
	const struct perf_event_header *hdr;
	struct perfctr_sample s;
	struct perfctr_reader_sample rs = { .sz = sizeof(rs), .sample = &s };
	uint64_t cursor = 0, last = 0, *times = NULL;
	size_t tcap = 0;
	bool sorted = true;
	int ret = 0;

	if (!pd)
		return -errno;
	dec = perfctr_perfdata__decoder(pd);
	for (size_t i = 0; i < perfctr_perfdata__nr_attrs(pd); i++) {
		const struct perf_event_attr *a = perfctr_perfdata__attr(pd, i);

		if (!a || (a->sample_type & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)) !=
			  (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)) {
			perfctr_perfdata__close(pd);
			return -ENOTSUP;
		}
	}
	while ((ret = perfctr_perfdata__next(pd, &cursor, &hdr)) > 0) {
		uint16_t mode;

		if (hdr->type != PERF_RECORD_SAMPLE)
			continue;
		s.sz = sizeof(s);
		if (perfctr_decoder__sample(dec, hdr, &s))
			continue;	/* undecodable: the reader skips it too */
		if (f->event >= 0 && s.attr_idx != (size_t)f->event)
			continue;
		rs.event_idx = s.attr_idx;
		rs.pid = (pid_t)s.pid;
		rs.tid = (pid_t)s.tid;
		mode = s.misc & PERF_RECORD_MISC_CPUMODE_MASK;
		rs.kernel = mode == PERF_RECORD_MISC_KERNEL ||
			    mode == PERF_RECORD_MISC_GUEST_KERNEL;
		if (f->rows == tcap) {
			size_t ncap = tcap ? 2 * tcap : 4096;
			uint64_t *n = realloc(times, ncap * sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			times = n;
			tcap = ncap;
		}
		times[f->rows] = s.time;
		if (s.time < last)
			sorted = false;
		last = s.time;
		ret = fill_row(f, &rs);
		if (ret < 0)
			break;
	}
	perfctr_perfdata__close(pd);
	if (ret == 0 && !sorted) {
		struct keyed *keys = malloc(f->rows * sizeof(*keys));
		char *rows = malloc(f->rows * f->row_size);

		if (keys && rows) {
			for (size_t i = 0; i < f->rows; i++)
				keys[i] = (struct keyed){ times[i], i };
			qsort(keys, f->rows, sizeof(*keys), keyed_cmp);
			for (size_t i = 0; i < f->rows; i++)
				memcpy(rows + i * f->row_size,
				       f->data + keys[i].seq * f->row_size,
				       f->row_size);
			free(f->data);
			f->data = rows;
			f->cap = f->rows;
			rows = NULL;
		} else {
			ret = -ENOMEM;
		}
		free(keys);
		free(rows);
	}
	free(times);
	return ret;
}

static PyObject *reader_columns(ReaderObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "names", "event", NULL };
	struct fill f = { .event = -1 };
	struct perfctr_reader_stats st = { .sz = sizeof(st) };
	PyObject *names, *seq, *dtype = NULL, *cats = NULL, *res = NULL;
	const char *path;
	int fast = -ENOTSUP;
	BufferObject *buf;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|l", kwlist, &names,
					 &f.event) || check_open(self))
		return NULL;
	if (self->done) {
		PyErr_SetString(PyExc_ValueError,
				"perfctr: the reader is at its end (open the file again)");
		return NULL;
	}
	seq = PySequence_Fast(names, "perfctr: columns: a sequence of names");
	if (!seq)
		return NULL;
	dtype = PyList_New(0);
	for (Py_ssize_t i = 0; dtype && i < PySequence_Fast_GET_SIZE(seq); i++) {
		const char *name = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
		int c;

		if (!name)
			goto out;
		for (c = 0; c < COL_NR && strcmp(columns[c].name, name); c++)
			;
		if (c == COL_NR || f.nr_cols == COL_NR) {
			PyErr_Format(PyExc_ValueError,
				     "perfctr: unknown or repeated column '%s'", name);
			goto out;
		}
		f.cols[f.nr_cols++] = (enum column)c;
		f.row_size += column_size(columns[c].code);
		PyObject *item = Py_BuildValue("(sC)", name, columns[c].code);
		if (!item || PyList_Append(dtype, item)) {
			Py_XDECREF(item);
			goto out;
		}
		Py_DECREF(item);
	}
	if (!dtype || !f.nr_cols) {
		if (dtype)
			PyErr_SetString(PyExc_ValueError, "perfctr: no column asked for");
		goto out;
	}
	path = PyUnicode_AsUTF8(self->path);
	if (!path)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	/* Untouched readers only: the fast path reads the file from its
	 * start. */
	if (fast_columns(&f) && !self->have_cur &&
	    perfctr_reader__stats(self->rd, SIZE_MAX, &st) == 0 && !st.samples) {
		fast = fill_fast(path, &f);
		if (fast == 0) {
			self->done = true;
		} else if (fast == -ENOTSUP) {
			f.rows = 0;
		} else {
			f.err = -fast;
			f.read_err = fast != -ENOMEM;
		}
	}
	if (fast == -ENOTSUP)
		fill_rows(self, &f);
	Py_END_ALLOW_THREADS
	if (f.err) {
		if (f.read_err)
			reader_error(self, f.err);
		else
			PyErr_NoMemory();
		goto out;
	}
	cats = Py_BuildValue("{sNsNsN}", "comm", intern_list(&f.strings[0]),
			     "symbol", intern_list(&f.strings[1]),
			     "dso", intern_list(&f.strings[2]));
	if (!cats)
		goto out;
	buf = PyObject_New(BufferObject, &BufferType);
	if (!buf)
		goto out;
	buf->data = f.data;
	buf->size = (Py_ssize_t)(f.rows * f.row_size);
	buf->exports = 0;
	f.data = NULL;
	res = Py_BuildValue("(NnOO)", (PyObject *)buf, (Py_ssize_t)f.rows,
			    dtype, cats);
out:
	Py_XDECREF(cats);
	Py_XDECREF(dtype);
	Py_DECREF(seq);
	free(f.data);
	for (int i = 0; i < 3; i++)
		intern_free(&f.strings[i]);
	return res;
}

static PyObject *reader_enter(ReaderObject *self, PyObject *unused)
{
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *reader_exit(ReaderObject *self, PyObject *args)
{
	reader_close_now(self);
	Py_RETURN_FALSE;
}

static PyMethodDef reader_methods[] = {
	{ "close", (PyCFunction)reader_close, METH_NOARGS,
	  "close()\n\nClose the file and free what the reader holds." },
	{ "attr", (PyCFunction)reader_attr, METH_O,
	  "attr(idx) -> dict\n\nEvent idx's perf_event_attr: type, config, "
	  "sample_type, sample_period, read_format, config1, size, freq and "
	  "the raw struct as bytes." },
	{ "stats", (PyCFunction)reader_stats, METH_VARARGS,
	  "stats(idx=-1) -> dict\n\nCounts of the file (or of event idx): "
	  "records, samples and bad_samples handed over so far, lost and "
	  "lost_samples of the whole file, unwound." },
	{ "header", (PyCFunction)reader_header, METH_NOARGS,
	  "header() -> dict\n\nThe file's header features: hostname, "
	  "os_release, arch, perf_version, nr_cpus_available, nr_cpus_online, "
	  "cmdline." },
	{ "columns", (PyCFunction)(void (*)(void))reader_columns,
	  METH_VARARGS | METH_KEYWORDS,
	  "columns(names, event=-1) -> (buffer, rows, dtype, categories)\n\n"
	  "Read every remaining sample (of event index `event`, or all) into "
	  "packed rows of the named columns, in C and without the GIL: "
	  "ip, pid, tid, cpu, time, period, event, addr, kernel, and comm, "
	  "symbol, dso as codes into categories[name] (-1: none).  dtype is "
	  "a list of (name, struct code) for numpy.  perfctr.Reader.to_numpy() "
	  "is the convenient form." },
	{ "__enter__", (PyCFunction)reader_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)reader_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef reader_getset[] = {
	{ "events", (getter)reader_events, NULL,
	  "The events of the file, by index (tuple of str).", NULL },
	{ "path", (getter)reader_get_path, NULL, "The file's path.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject ReaderType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfctr._data.Reader",
	.tp_doc = "Reader(path, callchain=False, symbols=True, fields=True, "
		  "kallsyms=None, root=None, demangle=True)\n\n"
		  "A perf.data file (perfex's or perf's) read sample by sample "
		  "in time order; iterating yields perfctr.Sample.  callchain: "
		  "resolve every frame of the call chains (DWARF ones unwound); "
		  "symbols=False: name DSOs only (faster); fields: decode "
		  "tracepoint fields into Sample.fields.  Raises OSError with "
		  "the errno when the file cannot be read.",
	.tp_basicsize = sizeof(ReaderObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)reader_init,
	.tp_dealloc = (destructor)reader_dealloc,
	.tp_iter = PyObject_SelfIter,
	.tp_iternext = (iternextfunc)reader_iternext,
	.tp_methods = reader_methods,
	.tp_getset = reader_getset,
};

/* ---- module ---- */

static PyMethodDef data_methods[] = {
	{ "record", (PyCFunction)(void (*)(void))data_record,
	  METH_VARARGS | METH_KEYWORDS,
	  "record(output, argv=None, pid=None, events='cpu-clock', period=0, "
	  "freq=0, callgraph=False, duration=None, mmap_pages=0) -> dict\n\n"
	  "Sample a command (argv, run to its end) or a process (pid, for "
	  "duration seconds) into perf.data file output; see "
	  "perfctr.record()." },
	{ "profile", (PyCFunction)(void (*)(void))data_profile,
	  METH_VARARGS | METH_KEYWORDS,
	  "profile(reader, sort='comm,dso,sym', callgraph=None, event=-1) -> "
	  "dict\n\nThe remaining samples aggregated; see perfctr.profile()." },
	{ "folded", (PyCFunction)(void (*)(void))data_folded,
	  METH_VARARGS | METH_KEYWORDS,
	  "folded(reader, event=-1) -> list of (stack, count)\n\n"
	  "Folded stacks (FlameGraph's input) of the remaining samples." },
	{ "pprof", (PyCFunction)(void (*)(void))data_pprof,
	  METH_VARARGS | METH_KEYWORDS,
	  "pprof(reader) -> bytes\n\nThe remaining samples as a gzip'd "
	  "pprof profile (profile.proto)." },
	{ "run_script", (PyCFunction)(void (*)(void))data_run_script,
	  METH_VARARGS | METH_KEYWORDS,
	  "run_script(reader, table, context) -> int\n\nHand every remaining "
	  "sample to its handler as perf script -s does (used by "
	  "perfctr.script)." },
	{ "tracepoint_fields", (PyCFunction)data_tracepoint_fields, METH_VARARGS,
	  "tracepoint_fields(reader, idx) -> (system, name, fields) or None\n\n"
	  "Event idx's tracepoint format from the file: its subsystem, name and "
	  "field names." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef data_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "perfctr._data",
	.m_doc = "Recordings (perf.data files) over libperfctr: use the "
		 "perfctr package.",
	.m_size = -1,
	.m_methods = data_methods,
};

PyMODINIT_FUNC PyInit__data(void)
{
	PyObject *m;

	if (PyType_Ready(&ReaderType) || PyType_Ready(&BufferType))
		return NULL;
	SampleType = PyStructSequence_NewType(&sample_desc);
	if (!SampleType)
		return NULL;
	m = PyModule_Create(&data_module);
	if (!m)
		return NULL;
	Py_INCREF(&ReaderType);
	Py_INCREF(SampleType);
	if (PyModule_AddObject(m, "Reader", (PyObject *)&ReaderType) ||
	    PyModule_AddObject(m, "Sample", (PyObject *)SampleType) ||
	    PyModule_AddIntConstant(m, "pprof_available",
				    perfctr_pprof_available()) ||
	    data_script_init(m)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
