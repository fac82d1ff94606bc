/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex script — tracepoint payloads, printed from the formats the file
 * carries (HEADER_TRACING_DATA, parsed by the library:
 * perfctr_perfdata__tp_formats()) by libtraceevent, the parser of the
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

/*
 * The formats as the library parsed them, handed to libtraceevent with
 * the recording machine's long size, page size and byte order (the
 * library reads only this machine's).  A format libtraceevent cannot
 * parse leaves its event without a payload, as in perf.
 */
static void load(struct tep_handle *tep, const struct perfctr_tp_formats *f)
{
	bool big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	unsigned int long_size = perfctr_tp_formats__long_size(f);
	const char *header_page;
	size_t len;

	tep_set_file_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, (int)long_size);
	tep_set_page_size(tep, (int)perfctr_tp_formats__page_size(f));
	header_page = perfctr_tp_formats__header_page(f, &len);
	tep_parse_header_page(tep, (char *)header_page, (unsigned long)len,
			      (int)long_size);
	for (size_t i = 0; i < perfctr_tp_formats__nr(f); i++) {
		const struct perfctr_tp_format *fmt = perfctr_tp_formats__at(f, i);
		const char *text = perfctr_tp_format__text(fmt, &len);

		tep_parse_event(tep, text, len, perfctr_tp_format__system(fmt));
	}
}

struct script_trace *script_trace_new(struct perfctr_reader *rd)
{
	struct perfctr_perfdata *pd = perfctr_reader__perfdata(rd);
	const struct perfctr_tp_formats *f;
	struct script_trace *t;

	f = pd ? perfctr_perfdata__tp_formats(pd) : NULL;
	if (!f)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tep = tep_alloc();
	if (!t->tep) {
		script_trace_free(t);
		return NULL;
	}
	load(t->tep, f);
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
