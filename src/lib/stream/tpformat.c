/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The tracepoint formats of a recording (include/perfctr/tpformat.h):
 * the tracing-data section as perf lays it out, and the tracefs "format"
 * text of each event in it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <perfctr/tpformat.h>

struct perfctr_tp_format {
	uint64_t id;
	char *system, *name;
	char *text;		/* the format file, NUL-terminated */
	size_t text_len;
	struct perfctr_tp_field *fields;
	size_t nr_fields;
};

struct perfctr_tp_formats {
	struct perfctr_tp_format *events;
	size_t nr, cap;
	unsigned int long_size, page_size;
	char *header_page;
	size_t header_page_len;
};

/* A cursor over the section, every step bounded by its end. */
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
	const char *s = c->p;
	const char *nul = memchr(c->p, '\0', (size_t)(c->end - c->p));

	if (!nul)
		return NULL;
	c->p = nul + 1;
	return s;
}

/* A block sized by a u64 before it. */
static int take_block(struct cursor *c, const char **data, size_t *len)
{
	uint64_t n;

	if (take(c, &n, 8) || n > (uint64_t)(c->end - c->p))
		return -EINVAL;
	*data = c->p;
	*len = (size_t)n;
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

/* The decimal number after "KEY:" in [p, end), or -1. */
static long long key_number(const char *p, const char *end, const char *key)
{
	size_t klen = strlen(key);

	for (; (size_t)(end - p) > klen; p++) {
		if (!memcmp(p, key, klen)) {
			char *stop;
			long long v;

			errno = 0;
			v = strtoll(p + klen, &stop, 10);
			return stop == p + klen || errno || v < 0 ? -1 : v;
		}
	}
	return -1;
}

static bool has_word(const char *s, size_t n, const char *word)
{
	size_t w = strlen(word);

	for (size_t i = 0; i + w <= n; i++)
		if (!memcmp(s + i, word, w) &&
		    (i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_')) &&
		    (i + w == n || !(isalnum((unsigned char)s[i + w]) || s[i + w] == '_')))
			return true;
	return false;
}

static bool ident_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

/*
 * One line "\tfield:DECL;\toffset:N;\tsize:N;\tsigned:N;".  DECL ends with
 * the name, perhaps followed by "[N]" ("char prev_comm[16]"); a dynamic
 * array is declared "__data_loc char[] name" (or __rel_loc), its brackets
 * before the name.  The type is DECL without the name.
 */
static int parse_field(const char *line, const char *end,
		       struct perfctr_tp_field *f)
{
	const char *decl = line, *semi, *name, *name_end, *tail;
	long long offset, size, sign;
	size_t base_len, tail_len;
	char *type;

	while (decl < end && isspace((unsigned char)*decl))
		decl++;
	if ((size_t)(end - decl) < 6 || memcmp(decl, "field:", 6))
		return -EINVAL;
	decl += 6;
	semi = memchr(decl, ';', (size_t)(end - decl));
	if (!semi)
		return -EINVAL;
	offset = key_number(semi, end, "offset:");
	size = key_number(semi, end, "size:");
	sign = key_number(semi, end, "signed:");
	if (offset < 0 || size < 0 || offset > UINT32_MAX || size > UINT32_MAX)
		return -EINVAL;
	/* The brackets after the name, then the name. */
	tail = semi;
	while (tail > decl && isspace((unsigned char)tail[-1]))
		tail--;
	name_end = tail;
	while (name_end > decl && name_end[-1] == ']') {
		const char *open = name_end - 1;

		while (open > decl && *open != '[')
			open--;
		if (*open != '[')
			return -EINVAL;
		name_end = open;
	}
	while (name_end > decl && isspace((unsigned char)name_end[-1]))
		name_end--;
	name = name_end;
	while (name > decl && ident_char(name[-1]))
		name--;
	if (name == name_end)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	if (name_end < tail) {
		const char *n = memchr(name_end, '[', (size_t)(tail - name_end));
		long long elems = n ? strtoll(n + 1, NULL, 10) : 0;

		f->flags |= PERFCTR_TP_FIELD_ARRAY;
		f->nr_elems = elems > 0 && elems <= UINT32_MAX ? (uint32_t)elems : 0;
	}
	base_len = (size_t)(name - decl);
	while (base_len && isspace((unsigned char)decl[base_len - 1]))
		base_len--;
	tail_len = (size_t)(tail - name_end);
	type = malloc(base_len + tail_len + 1);
	f->name = dup_range(name, (size_t)(name_end - name));
	if (!type || !f->name) {
		free(type);
		free((char *)f->name);
		return -ENOMEM;
	}
	memcpy(type, decl, base_len);
	memcpy(type + base_len, name_end, tail_len);
	type[base_len + tail_len] = '\0';
	f->type = type;
	f->offset = (uint32_t)offset;
	f->size = (uint32_t)size;
	if (sign == 1)
		f->flags |= PERFCTR_TP_FIELD_SIGNED;
	if (has_word(decl, base_len, "__data_loc"))
		f->flags |= PERFCTR_TP_FIELD_DYNAMIC | PERFCTR_TP_FIELD_ARRAY;
	if (has_word(decl, base_len, "__rel_loc"))
		f->flags |= PERFCTR_TP_FIELD_DYNAMIC | PERFCTR_TP_FIELD_RELATIVE |
			    PERFCTR_TP_FIELD_ARRAY;
	if ((f->flags & PERFCTR_TP_FIELD_ARRAY) && has_word(decl, base_len, "char"))
		f->flags |= PERFCTR_TP_FIELD_STRING;
	if (!strncmp(f->name, "common_", 7))
		f->flags |= PERFCTR_TP_FIELD_COMMON;
	return 0;
}

static void format_clear(struct perfctr_tp_format *fmt)
{
	for (size_t i = 0; i < fmt->nr_fields; i++) {
		free((char *)fmt->fields[i].name);
		free((char *)fmt->fields[i].type);
	}
	free(fmt->fields);
	free(fmt->system);
	free(fmt->name);
	free(fmt->text);
}

static int add_field(struct perfctr_tp_format *fmt, size_t *cap,
		     const struct perfctr_tp_field *f)
{
	if (fmt->nr_fields == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		void *n = realloc(fmt->fields, ncap * sizeof(*f));

		if (!n)
			return -ENOMEM;
		fmt->fields = n;
		*cap = ncap;
	}
	fmt->fields[fmt->nr_fields++] = *f;
	return 0;
}

/*
 * One format file's text into @fmt.  Lines that are not understood are
 * passed over (a newer kernel's), a field line that cannot be parsed too:
 * the other fields stay readable.
 */
static int parse_format(struct perfctr_tp_format *fmt, const char *text,
			size_t len)
{
	const char *p = text, *end = text + len;
	bool have_id = false;
	size_t cap = 0;

	fmt->text = dup_range(text, len);
	if (!fmt->text)
		return -ENOMEM;
	fmt->text_len = len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *s = p;

		if (!eol)
			eol = end;
		while (s < eol && isspace((unsigned char)*s))
			s++;
		if ((size_t)(eol - s) > 5 && !memcmp(s, "name:", 5) &&
		    !fmt->name) {
			s += 5;
			while (s < eol && isspace((unsigned char)*s))
				s++;
			fmt->name = dup_range(s, (size_t)(eol - s));
			if (!fmt->name)
				return -ENOMEM;
		} else if ((size_t)(eol - s) > 3 && !memcmp(s, "ID:", 3)) {
			char *stop;

			errno = 0;
			fmt->id = strtoull(s + 3, &stop, 10);
			have_id = !errno && stop != s + 3;
		} else if ((size_t)(eol - s) > 6 && !memcmp(s, "field:", 6)) {
			struct perfctr_tp_field f;
			int err = parse_field(s, eol, &f);

			if (err == -ENOMEM)
				return err;
			if (!err && add_field(fmt, &cap, &f)) {
				free((char *)f.name);
				free((char *)f.type);
				return -ENOMEM;
			}
		} else if ((size_t)(eol - s) >= 10 && !memcmp(s, "print fmt:", 10)) {
			break;
		}
		p = eol + 1;
	}
	return fmt->name && have_id ? 0 : -EINVAL;
}

static int add_format(struct perfctr_tp_formats *f, const char *system,
		      const char *text, size_t len)
{
	struct perfctr_tp_format fmt = { 0 };
	int err;

	if (f->nr == f->cap) {
		size_t ncap = f->cap ? 2 * f->cap : 32;
		void *n = realloc(f->events, ncap * sizeof(fmt));

		if (!n)
			return -ENOMEM;
		f->events = n;
		f->cap = ncap;
	}
	fmt.system = strdup(system);
	err = fmt.system ? parse_format(&fmt, text, len) : -ENOMEM;
	if (err) {
		format_clear(&fmt);
		/* A format without a name or an ID is left out. */
		return err == -ENOMEM ? err : 0;
	}
	f->events[f->nr++] = fmt;
	return 0;
}

/*
 * The section: magic (10 bytes), version (a string), the byte order
 * (1: big-endian), sizeof(long), the page size, "header_page" and
 * "header_event" each with its text, the ftrace formats (a u32 count),
 * then a u32 count of subsystems, each a name, a u32 count and its
 * events' formats; every text a u64 size and its bytes.
 */
static int parse_section(struct perfctr_tp_formats *f, const void *data,
			 size_t size)
{
	struct cursor c = { data, (const char *)data + size };
	const char *name, *block;
	uint8_t big, long_size;
	uint32_t page_size, n, nsys;
	size_t len;
	int err;

	if (take(&c, NULL, 10) || !take_string(&c) || take(&c, &big, 1) ||
	    take(&c, &long_size, 1) || take(&c, &page_size, 4))
		return -EINVAL;
	if (big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		return -EOPNOTSUPP;
	f->long_size = long_size;
	f->page_size = page_size;
	name = take_string(&c);
	if (!name || strcmp(name, "header_page") || take_block(&c, &block, &len))
		return -EINVAL;
	f->header_page = dup_range(block, len);
	if (!f->header_page)
		return -ENOMEM;
	f->header_page_len = len;
	name = take_string(&c);
	if (!name || strcmp(name, "header_event") || take_block(&c, &block, &len))
		return -EINVAL;
	if (take(&c, &n, 4))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (take_block(&c, &block, &len))
			return -EINVAL;
		err = add_format(f, "ftrace", block, len);
		if (err)
			return err;
	}
	if (take(&c, &nsys, 4))
		return -EINVAL;
	for (uint32_t s = 0; s < nsys; s++) {
		const char *sys = take_string(&c);

		if (!sys || take(&c, &n, 4))
			return -EINVAL;
		for (uint32_t i = 0; i < n; i++) {
			if (take_block(&c, &block, &len))
				return -EINVAL;
			err = add_format(f, sys, block, len);
			if (err)
				return err;
		}
	}
	return 0;
}

struct perfctr_tp_formats *perfctr_tp_formats__new(const void *data,
						   size_t size)
{
	struct perfctr_tp_formats *f;
	int err;

	if (!data && size) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	err = parse_section(f, data, size);
	if (err) {
		perfctr_tp_formats__delete(f);
		errno = -err;
		return NULL;
	}
	return f;
}

void perfctr_tp_formats__delete(struct perfctr_tp_formats *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nr; i++)
		format_clear(&f->events[i]);
	free(f->events);
	free(f->header_page);
	free(f);
}

size_t perfctr_tp_formats__nr(const struct perfctr_tp_formats *f)
{
	return f->nr;
}

const struct perfctr_tp_format *
perfctr_tp_formats__at(const struct perfctr_tp_formats *f, size_t idx)
{
	return idx < f->nr ? &f->events[idx] : NULL;
}

const struct perfctr_tp_format *
perfctr_tp_formats__find(const struct perfctr_tp_formats *f, uint64_t id)
{
	for (size_t i = 0; i < f->nr; i++)
		if (f->events[i].id == id)
			return &f->events[i];
	errno = ENOENT;
	return NULL;
}

const struct perfctr_tp_format *
perfctr_tp_formats__find_name(const struct perfctr_tp_formats *f,
			      const char *system, const char *name)
{
	for (size_t i = 0; i < f->nr; i++)
		if (!strcmp(f->events[i].system, system) &&
		    !strcmp(f->events[i].name, name))
			return &f->events[i];
	errno = ENOENT;
	return NULL;
}

unsigned int perfctr_tp_formats__long_size(const struct perfctr_tp_formats *f)
{
	return f->long_size;
}

unsigned int perfctr_tp_formats__page_size(const struct perfctr_tp_formats *f)
{
	return f->page_size;
}

const char *perfctr_tp_formats__header_page(const struct perfctr_tp_formats *f,
					    size_t *len)
{
	if (len)
		*len = f->header_page_len;
	return f->header_page;
}

uint64_t perfctr_tp_format__id(const struct perfctr_tp_format *fmt)
{
	return fmt->id;
}

const char *perfctr_tp_format__system(const struct perfctr_tp_format *fmt)
{
	return fmt->system;
}

const char *perfctr_tp_format__name(const struct perfctr_tp_format *fmt)
{
	return fmt->name;
}

const char *perfctr_tp_format__text(const struct perfctr_tp_format *fmt,
				    size_t *len)
{
	if (len)
		*len = fmt->text_len;
	return fmt->text;
}

size_t perfctr_tp_format__nr_fields(const struct perfctr_tp_format *fmt)
{
	return fmt->nr_fields;
}

const struct perfctr_tp_field *
perfctr_tp_format__field(const struct perfctr_tp_format *fmt, size_t idx)
{
	return idx < fmt->nr_fields ? &fmt->fields[idx] : NULL;
}

const struct perfctr_tp_field *
perfctr_tp_format__field_by_name(const struct perfctr_tp_format *fmt,
				 const char *name)
{
	for (size_t i = 0; i < fmt->nr_fields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return &fmt->fields[i];
	errno = ENOENT;
	return NULL;
}

int perfctr_tp_field__number(const struct perfctr_tp_field *field,
			     const void *raw, size_t size, uint64_t *value)
{
	const unsigned char *p = (const unsigned char *)raw + field->offset;
	bool sign = field->flags & PERFCTR_TP_FIELD_SIGNED;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;

	if (field->flags & PERFCTR_TP_FIELD_ARRAY)
		return -EINVAL;
	if (field->size != 1 && field->size != 2 && field->size != 4 &&
	    field->size != 8)
		return -EINVAL;
	if (field->offset > size || field->size > size - field->offset)
		return -ERANGE;
	switch (field->size) {
	case 1:
		memcpy(&u8, p, 1);
		*value = sign ? (uint64_t)(int64_t)(int8_t)u8 : u8;
		break;
	case 2:
		memcpy(&u16, p, 2);
		*value = sign ? (uint64_t)(int64_t)(int16_t)u16 : u16;
		break;
	case 4:
		memcpy(&u32, p, 4);
		*value = sign ? (uint64_t)(int64_t)(int32_t)u32 : u32;
		break;
	default:
		memcpy(value, p, 8);
		break;
	}
	return 0;
}

int perfctr_tp_field__array(const struct perfctr_tp_field *field,
			    const void *raw, size_t size,
			    const void **data, size_t *len)
{
	size_t offset = field->offset, n = field->size;

	if (!(field->flags & PERFCTR_TP_FIELD_ARRAY))
		return -EINVAL;
	if (field->flags & PERFCTR_TP_FIELD_DYNAMIC) {
		uint32_t loc;

		if (field->offset > size || size - field->offset < 4)
			return -ERANGE;
		memcpy(&loc, (const char *)raw + field->offset, 4);
		offset = loc & 0xffff;
		n = loc >> 16;
		if (field->flags & PERFCTR_TP_FIELD_RELATIVE)
			offset += (size_t)field->offset + field->size;
	}
	if (offset > size || n > size - offset)
		return -ERANGE;
	*data = (const char *)raw + offset;
	*len = n;
	return 0;
}
