// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * tp-fields — the tracepoint samples of a perf.data file, one line each:
 * the event, the thread's comm and tid, then every field of the payload
 * (the common_* ones left out) as NAME=VALUE, taken apart with the
 * formats the file carries (perfctr_tpformat(3)).  Numbers print in
 * decimal, strings quoted, other arrays as hex bytes.
 *
 *   tp-fields FILE
 *
 *   sched:sched_process_exec pcwork 4242 filename="/bin/pcwork" pid=4242 old_pid=4242
 *   syscalls:sys_enter_getppid pcwork 4242 __syscall_nr=110
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <perfctr/perfctr.h>

/* A char array that holds text up to its NUL. */
static bool is_text(const unsigned char *p, size_t len)
{
	if (!len || memchr(p, '\0', len) == NULL)
		return false;
	for (size_t i = 0; i < len && p[i]; i++)
		if (!isprint(p[i]))
			return false;
	return true;
}

static void print_field(const struct perfctr_tp_field *f, const void *raw,
			size_t size)
{
	const unsigned char *bytes;
	const void *data;
	uint64_t v;
	size_t len;

	printf(" %s=", f->name);
	if (!(f->flags & PERFCTR_TP_FIELD_ARRAY)) {
		if (perfctr_tp_field__number(f, raw, size, &v))
			printf("?");
		else if (f->flags & PERFCTR_TP_FIELD_SIGNED)
			printf("%" PRId64, (int64_t)v);
		else
			printf("%" PRIu64, v);
		return;
	}
	if (perfctr_tp_field__array(f, raw, size, &data, &len)) {
		printf("?");
		return;
	}
	bytes = data;
	if ((f->flags & PERFCTR_TP_FIELD_STRING) && is_text(bytes, len)) {
		printf("\"%s\"", (const char *)bytes);
		return;
	}
	for (size_t i = 0; i < len; i++)
		printf("%02x", bytes[i]);
}

int main(int argc, char **argv)
{
	PERFCTR_OPTS(perfctr_reader_opts, ro, .dso_only = true);
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	const struct perfctr_tp_formats *formats;
	struct perfctr_reader *rd;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: tp-fields FILE\n");
		return 2;
	}
	rd = perfctr_reader__open(argv[1], &ro);
	if (!rd) {
		fprintf(stderr, "tp-fields: cannot read '%s': %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	formats = perfctr_perfdata__tp_formats(perfctr_reader__perfdata(rd));
	if (!formats) {
		fprintf(stderr, "tp-fields: no tracepoint formats in '%s': %s\n",
			argv[1], strerror(errno));
		perfctr_reader__close(rd);
		return 1;
	}
	while ((ret = perfctr_reader__next(rd, &rs)) == 1) {
		const struct perf_event_attr *attr =
			perfctr_reader__event_attr(rd, rs.event_idx);
		const struct perfctr_tp_format *fmt;

		if (!attr || attr->type != PERF_TYPE_TRACEPOINT ||
		    !rs.sample->raw)
			continue;
		fmt = perfctr_tp_formats__find(formats, attr->config);
		if (!fmt)
			continue;
		printf("%s:%s %s %d", perfctr_tp_format__system(fmt),
		       perfctr_tp_format__name(fmt), rs.comm ? rs.comm : "?",
		       (int)rs.sample->tid);
		for (size_t i = 0; i < perfctr_tp_format__nr_fields(fmt); i++) {
			const struct perfctr_tp_field *f =
				perfctr_tp_format__field(fmt, i);

			if (!(f->flags & PERFCTR_TP_FIELD_COMMON))
				print_field(f, rs.sample->raw,
					    rs.sample->raw_size);
		}
		putchar('\n');
	}
	perfctr_reader__close(rd);
	if (ret < 0) {
		fprintf(stderr, "tp-fields: cannot read '%s': %s\n", argv[1],
			strerror(-ret));
		return 1;
	}
	return 0;
}
