// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._data: the fields of a tracepoint payload, decoded by the
 * file's formats (the library's perfctr_perfdata__tp_formats()) into
 * Python objects as perf's Python scripting hands them to a handler:
 *  - numbers: int, signed or not as the format says;
 *  - char arrays (fixed or __data_loc/__rel_loc): str when the bytes up to
 *    a final NUL are all printable, else a bytearray of the whole array;
 *  - other arrays (unsigned long args[6]): bytearray.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "data.h"

const struct perfctr_tp_format *data_trace_find(const struct perfctr_tp_formats *t,
						uint64_t id)
{
	return t ? perfctr_tp_formats__find(t, id) : NULL;
}

/* The common_* fields come first in every format. */
static size_t nr_common(const struct perfctr_tp_format *tp)
{
	size_t i = 0, n = perfctr_tp_format__nr_fields(tp);

	while (i < n && (perfctr_tp_format__field(tp, i)->flags &
			 PERFCTR_TP_FIELD_COMMON))
		i++;
	return i;
}

static const struct perfctr_tp_field *own_field(const struct perfctr_tp_format *tp,
						size_t i)
{
	return perfctr_tp_format__field(tp, nr_common(tp) + i);
}

size_t data_tp_nr_fields(const struct perfctr_tp_format *tp)
{
	return perfctr_tp_format__nr_fields(tp) - nr_common(tp);
}

const char *data_tp_field_name(const struct perfctr_tp_format *tp, size_t i)
{
	return own_field(tp, i)->name;
}

/* Printable text ending in its only NUL, as perf's scripting tests. */
static bool printable(const unsigned char *p, size_t len)
{
	if (!len || p[len - 1])
		return false;
	for (size_t i = 0; i + 1 < len; i++)
		if (!isprint(p[i]) && !isspace(p[i]))
			return false;
	return true;
}

PyObject *data_tp_field(const struct perfctr_tp_format *tp, size_t i,
			const void *raw, size_t size)
{
	const struct perfctr_tp_field *f = own_field(tp, i);
	const void *data;
	size_t len;
	uint64_t v;

	if (!(f->flags & PERFCTR_TP_FIELD_ARRAY)) {
		if (perfctr_tp_field__number(f, raw, size, &v))
			Py_RETURN_NONE;
		return f->flags & PERFCTR_TP_FIELD_SIGNED ?
		       PyLong_FromLongLong((long long)v) :
		       PyLong_FromUnsignedLongLong(v);
	}
	if (perfctr_tp_field__array(f, raw, size, &data, &len))
		Py_RETURN_NONE;
	if ((f->flags & PERFCTR_TP_FIELD_STRING) && printable(data, len))
		return PyUnicode_DecodeUTF8(data, (Py_ssize_t)len - 1, "replace");
	return PyByteArray_FromStringAndSize(data, (Py_ssize_t)len);
}

long data_tp_common(const struct perfctr_tp_format *tp, const char *name,
		    const void *raw, size_t size)
{
	const struct perfctr_tp_field *f =
		perfctr_tp_format__field_by_name(tp, name);
	uint64_t v;

	if (!f || !(f->flags & PERFCTR_TP_FIELD_COMMON) ||
	    perfctr_tp_field__number(f, raw, size, &v))
		return -1;
	return (long)v;
}

long data_tp_common_pid(const struct perfctr_tp_format *tp, const void *raw,
			size_t size)
{
	return data_tp_common(tp, "common_pid", raw, size);
}
