// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._data: the tracepoint formats a perf.data file carries (its
 * HEADER_TRACING_DATA section: the tracefs "format" file of every event
 * recorded), and the fields of a payload decoded by them into Python
 * objects as perf's Python scripting hands them to a handler:
 *  - numbers: int, signed or not as the format says;
 *  - char arrays (fixed or __data_loc/__rel_loc): str when the bytes up to
 *    a final NUL are all printable, else a bytearray of the whole array;
 *  - other arrays (unsigned long args[6]): bytearray.
 * Only files of this machine's byte order are read (as perfex script).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

struct data_field {
	char *name;
	unsigned int offset, size;
	bool is_signed;
	bool array;		/* name[N], or a dynamic array */
	bool dynamic;		/* __data_loc: u32 (len << 16 | offset) */
	bool relative;		/* __rel_loc: offset from the field's end */
	bool string;		/* an array of char */
};

struct data_tp {
	uint64_t id;
	char *system, *name;
	struct data_field *fields;	/* common ones first */
	size_t nr_fields, nr_common;
};

struct data_trace {
	struct data_tp *tps;
	size_t nr, cap;
};

struct cursor {
	const char *p, *end;
};

static int take(struct cursor *c, void *out, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -EINVAL;
	if (out)
		memcpy(out, c->p, n);
	c->p += n;
	return 0;
}

static const char *take_string(struct cursor *c)
{
	const char *s = c->p, *nul = memchr(c->p, '\0', (size_t)(c->end - c->p));

	if (!nul)
		return NULL;
	c->p = nul + 1;
	return s;
}

static int take_block(struct cursor *c, const char **data, size_t *size)
{
	uint64_t n;

	if (take(c, &n, 8) || n > (uint64_t)(c->end - c->p))
		return -EINVAL;
	*size = (size_t)n;
	*data = c->p;
	c->p += n;
	return 0;
}

static char *dup_range(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* The number after "@key:" in @line (up to its ';'), or -1. */
static long line_number(const char *line, const char *end, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = line; p + klen < end; p++) {
		if (!strncmp(p, key, klen)) {
			char *stop;
			long v = strtol(p + klen, &stop, 10);

			return stop == p + klen ? -1 : v;
		}
	}
	return -1;
}

/*
 * "\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;" into @f.  The
 * declaration's last word is the name ("args[6]": an array); "__data_loc"
 * or "__rel_loc" in the type make it a dynamic array.
 */
static int parse_field(const char *line, const char *end, struct data_field *f)
{
	const char *decl = line, *semi, *name, *bracket;
	long offset, size, sign;

	while (decl < end && isspace((unsigned char)*decl))
		decl++;
	if ((size_t)(end - decl) < 6 || strncmp(decl, "field:", 6))
		return -EINVAL;
	decl += 6;
	semi = memchr(decl, ';', (size_t)(end - decl));
	if (!semi)
		return -EINVAL;
	offset = line_number(semi, end, "offset:");
	size = line_number(semi, end, "size:");
	sign = line_number(semi, end, "signed:");
	if (offset < 0 || size < 0)
		return -EINVAL;
	bracket = memchr(decl, '[', (size_t)(semi - decl));
	name = bracket ? bracket : semi;
	while (name > decl && isspace((unsigned char)name[-1]))
		name--;
	{
		const char *name_end = name;

		while (name > decl && !isspace((unsigned char)name[-1]) &&
		       name[-1] != '*')
			name--;
		if (name == name_end)
			return -EINVAL;
		f->name = dup_range(name, (size_t)(name_end - name));
	}
	if (!f->name)
		return -ENOMEM;
	f->offset = (unsigned int)offset;
	f->size = (unsigned int)size;
	f->is_signed = sign == 1;
	f->dynamic = memmem(decl, (size_t)(semi - decl), "__data_loc", 10) != NULL;
	f->relative = memmem(decl, (size_t)(semi - decl), "__rel_loc", 9) != NULL;
	f->dynamic |= f->relative;
	f->array = f->dynamic || bracket != NULL;
	f->string = f->array && memmem(decl, (size_t)(name - decl), "char", 4);
	return 0;
}

static void tp_clear(struct data_tp *tp)
{
	for (size_t i = 0; i < tp->nr_fields; i++)
		free(tp->fields[i].name);
	free(tp->fields);
	free(tp->system);
	free(tp->name);
}

/* One "format" file's text. */
static int parse_format(struct data_trace *t, const char *system,
			const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	struct data_tp tp = { .id = UINT64_MAX };
	size_t cap = 0;
	int err = 0;

	tp.system = strdup(system);
	if (!tp.system)
		return -ENOMEM;
	while (p < end && !err) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *s = p;

		if (!eol)
			eol = end;
		while (s < eol && isspace((unsigned char)*s))
			s++;
		if (!strncmp(s, "name:", 5) && !tp.name) {
			s += 5;
			while (s < eol && *s == ' ')
				s++;
			tp.name = dup_range(s, (size_t)(eol - s));
			if (!tp.name)
				err = -ENOMEM;
		} else if (!strncmp(s, "ID:", 3)) {
			tp.id = strtoull(s + 3, NULL, 10);
		} else if (!strncmp(s, "field:", 6)) {
			struct data_field f = { 0 };

			if (tp.nr_fields == cap) {
				size_t ncap = cap ? 2 * cap : 16;
				void *n = realloc(tp.fields, ncap * sizeof(f));

				if (!n) {
					err = -ENOMEM;
					break;
				}
				tp.fields = n;
				cap = ncap;
			}
			if (parse_field(p, eol, &f) == 0) {
				if (!strncmp(f.name, "common_", 7) &&
				    tp.nr_common == tp.nr_fields)
					tp.nr_common++;
				tp.fields[tp.nr_fields++] = f;
			}
		} else if (!strncmp(s, "print fmt:", 10)) {
			break;
		}
		p = eol + 1;
	}
	if (!err && (!tp.name || tp.id == UINT64_MAX))
		err = -EINVAL;
	if (!err && t->nr == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 64;
		void *n = realloc(t->tps, ncap * sizeof(tp));

		if (n) {
			t->tps = n;
			t->cap = ncap;
		} else {
			err = -ENOMEM;
		}
	}
	if (err) {
		tp_clear(&tp);
		return err == -ENOMEM ? err : 0;
	}
	t->tps[t->nr++] = tp;
	return 0;
}

/*
 * The section: magic, version, endianness, sizeof(long), page size,
 * header_page and header_event (not needed), the ftrace formats, then the
 * events' formats by subsystem; what follows (kallsyms, printk formats,
 * cmdlines) is not needed for the fields.
 */
static int parse_section(struct data_trace *t, const void *data, size_t size)
{
	struct cursor c = { data, (const char *)data + size };
	const char *name, *block;
	uint8_t big, long_size;
	uint32_t page_size, n, nsys;
	size_t len;

	if (take(&c, NULL, 10) || !take_string(&c) || take(&c, &big, 1) ||
	    take(&c, &long_size, 1) || take(&c, &page_size, 4))
		return -EINVAL;
	if (big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		return -ENOTSUP;
	for (int i = 0; i < 2; i++) {
		name = take_string(&c);
		if (!name || take_block(&c, &block, &len))
			return -EINVAL;
	}
	if (take(&c, &n, 4))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (take_block(&c, &block, &len))
			return -EINVAL;
	if (take(&c, &nsys, 4))
		return -EINVAL;
	for (uint32_t s = 0; s < nsys; s++) {
		const char *sys = take_string(&c);

		if (!sys || take(&c, &n, 4))
			return -EINVAL;
		for (uint32_t i = 0; i < n; i++) {
			int r;

			if (take_block(&c, &block, &len))
				return -EINVAL;
			r = parse_format(t, sys, block, len);
			if (r)
				return r;
		}
	}
	return 0;
}

struct data_trace *data_trace_new(struct perfctr_reader *rd)
{
	struct perfctr_perfdata *pd = perfctr_reader__perfdata(rd);
	struct data_trace *t;
	const void *data;
	size_t size;

	if (!pd || perfctr_perfdata__feature(pd, PERFCTR_FEAT_TRACING_DATA,
					     &data, &size))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t && parse_section(t, data, size)) {
		data_trace_free(t);
		return NULL;
	}
	return t;
}

void data_trace_free(struct data_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr; i++)
		tp_clear(&t->tps[i]);
	free(t->tps);
	free(t);
}

const struct data_tp *data_trace_find(const struct data_trace *t, uint64_t id)
{
	for (size_t i = 0; t && i < t->nr; i++)
		if (t->tps[i].id == id)
			return &t->tps[i];
	return NULL;
}

const char *data_tp_system(const struct data_tp *tp)
{
	return tp->system;
}

const char *data_tp_name(const struct data_tp *tp)
{
	return tp->name;
}

size_t data_tp_nr_fields(const struct data_tp *tp)
{
	return tp->nr_fields - tp->nr_common;
}

const char *data_tp_field_name(const struct data_tp *tp, size_t i)
{
	return tp->fields[tp->nr_common + i].name;
}

static bool read_number(const struct data_field *f, const unsigned char *raw,
			size_t size, uint64_t *out)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	if ((size_t)f->offset + f->size > size)
		return false;
	switch (f->size) {
	case 1:
		memcpy(&u8, raw + f->offset, 1);
		*out = f->is_signed ? (uint64_t)(int64_t)(int8_t)u8 : u8;
		return true;
	case 2:
		memcpy(&u16, raw + f->offset, 2);
		*out = f->is_signed ? (uint64_t)(int64_t)(int16_t)u16 : u16;
		return true;
	case 4:
		memcpy(&u32, raw + f->offset, 4);
		*out = f->is_signed ? (uint64_t)(int64_t)(int32_t)u32 : u32;
		return true;
	case 8:
		memcpy(&u64, raw + f->offset, 8);
		*out = u64;
		return true;
	default:
		return false;
	}
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

PyObject *data_tp_field(const struct data_tp *tp, size_t i,
			const void *raw, size_t size)
{
	const struct data_field *f = &tp->fields[tp->nr_common + i];
	const unsigned char *bytes = raw;
	size_t offset = f->offset, len = f->size;
	uint64_t v;

	if (!f->array) {
		if (!read_number(f, bytes, size, &v))
			Py_RETURN_NONE;
		return f->is_signed ? PyLong_FromLongLong((long long)v) :
				      PyLong_FromUnsignedLongLong(v);
	}
	if (f->dynamic) {
		uint32_t loc;

		if ((size_t)f->offset + 4 > size)
			Py_RETURN_NONE;
		memcpy(&loc, bytes + f->offset, 4);
		offset = loc & 0xffff;
		len = loc >> 16;
		if (f->relative)
			offset += f->offset + f->size;
	}
	if (offset > size || len > size - offset)
		Py_RETURN_NONE;
	if (f->string && printable(bytes + offset, len))
		return PyUnicode_DecodeUTF8((const char *)bytes + offset,
					    (Py_ssize_t)len - 1, "replace");
	return PyByteArray_FromStringAndSize((const char *)bytes + offset,
					     (Py_ssize_t)len);
}

long data_tp_common(const struct data_tp *tp, const char *name,
		    const void *raw, size_t size)
{
	uint64_t v;

	for (size_t i = 0; i < tp->nr_common; i++)
		if (!strcmp(tp->fields[i].name, name))
			return read_number(&tp->fields[i], raw, size, &v) ?
			       (long)v : -1;
	return -1;
}

long data_tp_common_pid(const struct data_tp *tp, const void *raw, size_t size)
{
	return data_tp_common(tp, "common_pid", raw, size);
}
