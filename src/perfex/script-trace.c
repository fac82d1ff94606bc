/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex script — tracepoint payloads, printed from the formats the file
 * carries (HEADER_TRACING_DATA) by libtraceevent, the parser of the
 * kernel's print formats that perf's own output comes from: the same text
 * as perf script's trace field.  Without libtraceevent the payloads are
 * not printed (script_trace_available() says so).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "script.h"

#ifdef HAVE_TRACEEVENT
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

struct script_trace {
	struct tep_handle *tep;
};

/* A cursor over the section, every read bounded by its end. */
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

/* A block of @size bytes, sized by a u64 (or u32 when @size32). */
static int take_block(struct cursor *c, bool size32, const char **data,
		      size_t *size)
{
	uint64_t n64 = 0;
	uint32_t n32 = 0;

	if (size32 ? take(c, &n32, 4) : take(c, &n64, 8))
		return -EINVAL;
	*size = size32 ? n32 : n64;
	*data = c->p;
	return take(c, NULL, *size);
}

/*
 * The section as perf writes it (and perfdata.c): magic, version, file
 * endianness, sizeof(long), page size, header_page, header_event, the
 * ftrace formats, the event formats by subsystem, then kallsyms, printk
 * formats and saved cmdlines, which the payloads need no more of.  Only
 * files of this machine's byte order are read.
 */
static int parse(struct tep_handle *tep, const void *data, size_t size)
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
	tep_set_file_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, long_size);
	tep_set_page_size(tep, (int)page_size);
	name = take_string(&c);
	if (!name || strcmp(name, "header_page") ||
	    take_block(&c, false, &block, &len))
		return -EINVAL;
	tep_parse_header_page(tep, (char *)block, len, long_size);
	name = take_string(&c);
	if (!name || strcmp(name, "header_event") ||
	    take_block(&c, false, &block, &len))
		return -EINVAL;
	if (take(&c, &n, 4))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (take_block(&c, false, &block, &len))
			return -EINVAL;
		tep_parse_event(tep, block, len, "ftrace");
	}
	if (take(&c, &nsys, 4))
		return -EINVAL;
	for (uint32_t s = 0; s < nsys; s++) {
		const char *sys = take_string(&c);

		if (!sys || take(&c, &n, 4))
			return -EINVAL;
		for (uint32_t i = 0; i < n; i++) {
			if (take_block(&c, false, &block, &len))
				return -EINVAL;
			/* One format perf's parser cannot read leaves its
			 * event without a payload, as in perf. */
			tep_parse_event(tep, block, len, sys);
		}
	}
	return 0;
}

struct script_trace *script_trace_new(struct perfctr_reader *rd)
{
	struct perfctr_perfdata *pd = perfctr_reader__perfdata(rd);
	struct script_trace *t;
	const void *data;
	size_t size;

	if (!pd || perfctr_perfdata__feature(pd, PERFCTR_FEAT_TRACING_DATA,
					     &data, &size))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tep = tep_alloc();
	if (!t->tep || parse(t->tep, data, size)) {
		script_trace_free(t);
		return NULL;
	}
	return t;
}

void script_trace_free(struct script_trace *t)
{
	if (!t)
		return;
	if (t->tep)
		tep_free(t->tep);
	free(t);
}

void script_trace_print(struct script_trace *t,
			const struct perf_event_attr *attr,
			const struct perfctr_sample *s, FILE *out)
{
	struct tep_record rec = { 0 };
	struct trace_seq seq;

	if (!t || !s->raw || !s->raw_size ||
	    !tep_find_event(t->tep, (int)attr->config))
		return;
	rec.data = (void *)s->raw;
	rec.size = (int)s->raw_size;
	rec.cpu = (int)s->cpu;
	rec.ts = s->time;
	trace_seq_init(&seq);
	tep_print_event(t->tep, &seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&seq);
	fwrite(seq.buffer, 1, seq.len, out);
	trace_seq_destroy(&seq);
}

bool script_trace_available(void)
{
	return true;
}

#else /* !HAVE_TRACEEVENT */

struct script_trace *script_trace_new(struct perfctr_reader *rd)
{
	(void)rd;
	return NULL;
}

void script_trace_free(struct script_trace *t)
{
	(void)t;
}

void script_trace_print(struct script_trace *t,
			const struct perf_event_attr *attr,
			const struct perfctr_sample *s, FILE *out)
{
	(void)t;
	(void)attr;
	(void)s;
	(void)out;
}

bool script_trace_available(void)
{
	return false;
}

#endif
