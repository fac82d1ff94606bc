// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unit tests of the tracepoint formats (perfctr/tpformat.h): sections
 * built here byte by byte as perf lays them out, their field lines
 * parsed row by row, payloads read field by field, damaged sections
 * refused, and a perf.data file's formats through its reader.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfctr/perfdata.h"
#include "perfctr/tpformat.h"
#include "test.h"

/* A tracing-data section under construction. */
struct section {
	unsigned char buf[16384];
	size_t len;
};

static void put(struct section *s, const void *p, size_t n)
{
	REQUIRE(s->len + n <= sizeof(s->buf));
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void put_u32(struct section *s, uint32_t v)
{
	put(s, &v, 4);
}

static void put_text(struct section *s, const char *text)
{
	uint64_t n = strlen(text);

	put(s, &n, 8);
	put(s, text, n);
}

/*
 * The section's head: magic, version, this machine's byte order (or the
 * other one when @other_order), long size 8, page size 4096, header_page
 * and header_event, then one ftrace format.
 */
static void put_head(struct section *s, bool other_order)
{
	static const char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	unsigned char big = (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) ^ other_order;
	unsigned char long_size = 8;

	s->len = 0;
	put(s, magic, sizeof(magic));
	put(s, "0.6", 4);
	put(s, &big, 1);
	put(s, &long_size, 1);
	put_u32(s, 4096);
	put(s, "header_page", 12);
	put_text(s, "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n");
	put(s, "header_event", 13);
	put_text(s, "# compressed entry header\n");
	put_u32(s, 1);
	put_text(s, "name: function\nID: 1\nformat:\n"
		    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		    "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		    "\nprint fmt: \" %ps\", (void *)REC->ip\n");
}

#define COMMON \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char sched_switch[] =
	"name: sched_switch\nID: 316\nformat:\n" COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\nprint fmt: \"prev_comm=%s\", REC->prev_comm\n";

static const char sched_process_exec[] =
	"name: sched_process_exec\nID: 312\nformat:\n" COMMON
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\nprint fmt: \"filename=%s\", __get_str(filename)\n";

static const char sys_enter[] =
	"name: sys_enter\nID: 21\nformat:\n" COMMON
	"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"
	"\tfield:__rel_loc char[] msg;\toffset:64;\tsize:4;\tsigned:0;\n"
	"\tfield:const char * name;\toffset:72;\tsize:8;\tsigned:0;\n"
	"\tfield:s8 tiny;\toffset:80;\tsize:1;\tsigned:1;\n"
	"\tfield:s16 small;\toffset:82;\tsize:2;\tsigned:1;\n"
	"\tfield:u8 bytes[3];\toffset:84;\tsize:3;\tsigned:0;\n"
	"\tfield:broken\n"
	"\tfield:u32 odd;\toffset:88;\tsize:3;\tsigned:0;\n"
	"\nprint fmt: \"NR %ld\", REC->id\n";

/* The whole section: ftrace, then "sched" (2 events) and "raw_syscalls". */
static void put_all(struct section *s, bool other_order)
{
	put_head(s, other_order);
	put_u32(s, 2);
	put(s, "sched", 6);
	put_u32(s, 2);
	put_text(s, sched_switch);
	put_text(s, sched_process_exec);
	put(s, "raw_syscalls", 13);
	put_u32(s, 2);
	put_text(s, sys_enter);
	put_text(s, "name: no_id\nformat:\n");	/* left out */
	put_u32(s, 0);				/* kallsyms */
}

static struct perfctr_tp_formats *parse_all(void)
{
	static struct section s;
	struct perfctr_tp_formats *f;

	put_all(&s, false);
	f = perfctr_tp_formats__new(s.buf, s.len);
	REQUIRE(f);
	return f;
}

TEST(events_in_section_order)
{
	struct perfctr_tp_formats *f = parse_all();
	static const struct { uint64_t id; const char *sys, *name; size_t nr; }
	rows[] = {
		{ 1, "ftrace", "function", 2 },
		{ 316, "sched", "sched_switch", 11 },
		{ 312, "sched", "sched_process_exec", 7 },
		{ 21, "raw_syscalls", "sys_enter", 12 },
	};
	const char *header;
	size_t len;

	CHECK_EQ_U64(perfctr_tp_formats__nr(f), 4);
	for (size_t i = 0; i < 4; i++) {
		const struct perfctr_tp_format *fmt = perfctr_tp_formats__at(f, i);

		REQUIRE(fmt);
		CHECK_EQ_U64(perfctr_tp_format__id(fmt), rows[i].id);
		CHECK_STR(perfctr_tp_format__system(fmt), rows[i].sys);
		CHECK_STR(perfctr_tp_format__name(fmt), rows[i].name);
		CHECK_EQ_U64(perfctr_tp_format__nr_fields(fmt), rows[i].nr);
		CHECK(perfctr_tp_formats__find(f, rows[i].id) == fmt);
		CHECK(perfctr_tp_formats__find_name(f, rows[i].sys,
						    rows[i].name) == fmt);
		CHECK(perfctr_tp_format__field(fmt, rows[i].nr) == NULL);
	}
	CHECK(perfctr_tp_formats__at(f, 4) == NULL);
	errno = 0;
	CHECK(perfctr_tp_formats__find(f, 999) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	errno = 0;
	CHECK(perfctr_tp_formats__find_name(f, "sched", "no_id") == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK_EQ_INT(perfctr_tp_formats__long_size(f), 8);
	CHECK_EQ_INT(perfctr_tp_formats__page_size(f), 4096);
	header = perfctr_tp_formats__header_page(f, &len);
	CHECK_EQ_U64(len, 51);
	CHECK(!memcmp(header, "\tfield: u64 timestamp;", 22));
	/* The format text whole, print fmt and all. */
	{
		const struct perfctr_tp_format *fmt = perfctr_tp_formats__find(f, 316);
		const char *text = perfctr_tp_format__text(fmt, &len);

		CHECK_EQ_U64(len, strlen(sched_switch));
		CHECK_STR(text, sched_switch);
	}
	perfctr_tp_formats__delete(f);
}

#define SIGNED PERFCTR_TP_FIELD_SIGNED
#define ARRAY PERFCTR_TP_FIELD_ARRAY
#define DYN PERFCTR_TP_FIELD_DYNAMIC
#define REL PERFCTR_TP_FIELD_RELATIVE
#define STR PERFCTR_TP_FIELD_STRING
#define COM PERFCTR_TP_FIELD_COMMON

/* One row per field line: what the declaration comes to. */
TEST(field_lines)
{
	static const struct {
		uint64_t id;
		const char *name, *type;
		uint32_t offset, size, flags, nr_elems;
	} rows[] = {
		{ 316, "common_type", "unsigned short", 0, 2, COM, 0 },
		{ 316, "common_flags", "unsigned char", 2, 1, COM, 0 },
		{ 316, "common_pid", "int", 4, 4, COM | SIGNED, 0 },
		{ 316, "prev_comm", "char[16]", 8, 16, ARRAY | STR, 16 },
		{ 316, "prev_pid", "pid_t", 24, 4, SIGNED, 0 },
		{ 316, "prev_state", "long", 32, 8, SIGNED, 0 },
		{ 316, "next_prio", "int", 60, 4, SIGNED, 0 },
		{ 312, "filename", "__data_loc char[]", 8, 4,
		  ARRAY | DYN | STR, 0 },
		{ 312, "old_pid", "pid_t", 16, 4, SIGNED, 0 },
		{ 21, "id", "long", 8, 8, SIGNED, 0 },
		{ 21, "args", "unsigned long[6]", 16, 48, ARRAY, 6 },
		{ 21, "msg", "__rel_loc char[]", 64, 4,
		  ARRAY | DYN | REL | STR, 0 },
		{ 21, "name", "const char *", 72, 8, 0, 0 },
		{ 21, "tiny", "s8", 80, 1, SIGNED, 0 },
		{ 21, "small", "s16", 82, 2, SIGNED, 0 },
		{ 21, "bytes", "u8[3]", 84, 3, ARRAY, 3 },
		{ 21, "odd", "u32", 88, 3, 0, 0 },
		{ 1, "ip", "unsigned long", 8, 8, 0, 0 },
	};
	struct perfctr_tp_formats *f = parse_all();

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct perfctr_tp_format *fmt =
			perfctr_tp_formats__find(f, rows[i].id);
		const struct perfctr_tp_field *fl;

		REQUIRE(fmt);
		fl = perfctr_tp_format__field_by_name(fmt, rows[i].name);
		if (!fl) {
			CHECK(!"no such field");
			fprintf(stderr, "  row %zu: %s\n", i, rows[i].name);
			continue;
		}
		CHECK_STR(fl->type, rows[i].type);
		CHECK_EQ_INT(fl->offset, rows[i].offset);
		CHECK_EQ_INT(fl->size, rows[i].size);
		CHECK_EQ_INT(fl->flags, rows[i].flags);
		CHECK_EQ_INT(fl->nr_elems, rows[i].nr_elems);
	}
	/* A line that does not parse is passed over, the rest kept. */
	errno = 0;
	CHECK(perfctr_tp_format__field_by_name(perfctr_tp_formats__find(f, 21),
					       "broken") == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	/* The common fields come first. */
	CHECK_STR(perfctr_tp_format__field(perfctr_tp_formats__find(f, 316), 3)->name,
		  "common_pid");
	CHECK_STR(perfctr_tp_format__field(perfctr_tp_formats__find(f, 316), 4)->name,
		  "prev_comm");
	perfctr_tp_formats__delete(f);
}

static void put_at(unsigned char *p, size_t off, const void *v, size_t n)
{
	memcpy(p + off, v, n);
}

/* Numbers and arrays out of a raw_syscalls:sys_enter payload. */
TEST(payload_fields)
{
	struct perfctr_tp_formats *f = parse_all();
	const struct perfctr_tp_format *fmt = perfctr_tp_formats__find(f, 21);
	unsigned char raw[104] = { 0 };
	int32_t pid = -7;
	int64_t id = 39;
	uint64_t args[6] = { 1, 2, 3, 4, 5, 6 }, v;
	uint32_t rel = (6u << 16) | 24;	/* 68 + 24 = byte 92 */
	int8_t tiny = -2;
	int16_t small = -300;
	const void *data;
	size_t len;

#define FIELD(name) perfctr_tp_format__field_by_name(fmt, name)
	put_at(raw, 4, &pid, 4);
	put_at(raw, 8, &id, 8);
	put_at(raw, 16, args, 48);
	put_at(raw, 64, &rel, 4);
	put_at(raw, 80, &tiny, 1);
	put_at(raw, 82, &small, 2);
	put_at(raw, 92, "hello", 6);
	CHECK_EQ_INT(perfctr_tp_field__number(FIELD("common_pid"), raw,
					      sizeof(raw), &v), 0);
	CHECK_EQ_INT((int64_t)v, -7);
	CHECK_EQ_INT(perfctr_tp_field__number(FIELD("id"), raw, sizeof(raw), &v), 0);
	CHECK_EQ_U64(v, 39);
	CHECK_EQ_INT(perfctr_tp_field__number(FIELD("tiny"), raw, sizeof(raw), &v), 0);
	CHECK_EQ_INT((int64_t)v, -2);
	CHECK_EQ_INT(perfctr_tp_field__number(FIELD("small"), raw, sizeof(raw), &v), 0);
	CHECK_EQ_INT((int64_t)v, -300);
	CHECK_EQ_INT(perfctr_tp_field__number(FIELD("common_type"), raw,
					      sizeof(raw), &v), 0);
	CHECK_EQ_U64(v, 0);
	/* Arrays: fixed, and behind a __rel_loc word. */
	CHECK_EQ_INT(perfctr_tp_field__array(FIELD("args"), raw, sizeof(raw),
					     &data, &len), 0);
	CHECK(data == raw + 16 && len == 48);
	CHECK_EQ_INT(perfctr_tp_field__array(FIELD("msg"), raw, sizeof(raw),
					     &data, &len), 0);
	CHECK(data == raw + 92 && len == 6);
	CHECK_STR((const char *)data, "hello");
	/* The wrong kind, an odd size. */
	CHECK_EQ_INT(perfctr_tp_field__number(FIELD("args"), raw, sizeof(raw), &v),
		     -EINVAL);
	CHECK_EQ_INT(perfctr_tp_field__array(FIELD("id"), raw, sizeof(raw),
					     &data, &len), -EINVAL);
	CHECK_EQ_INT(perfctr_tp_field__number(FIELD("odd"), raw, sizeof(raw), &v),
		     -EINVAL);
	/* Past the payload's end: the field, the word, what it points at. */
	CHECK_EQ_INT(perfctr_tp_field__number(FIELD("id"), raw, 15, &v), -ERANGE);
	CHECK_EQ_INT(perfctr_tp_field__number(FIELD("id"), raw, 16, &v), 0);
	CHECK_EQ_INT(perfctr_tp_field__array(FIELD("args"), raw, 63, &data, &len),
		     -ERANGE);
	CHECK_EQ_INT(perfctr_tp_field__array(FIELD("msg"), raw, 66, &data, &len),
		     -ERANGE);
	CHECK_EQ_INT(perfctr_tp_field__array(FIELD("msg"), raw, 97, &data, &len),
		     -ERANGE);
	CHECK_EQ_INT(perfctr_tp_field__array(FIELD("msg"), raw, 98, &data, &len), 0);
#undef FIELD
	/* __data_loc: the offset from the payload's start. */
	fmt = perfctr_tp_formats__find(f, 312);
	memset(raw, 0, sizeof(raw));
	rel = (3u << 16) | 20;
	put_at(raw, 8, &rel, 4);
	put_at(raw, 20, "sh", 3);
	CHECK_EQ_INT(perfctr_tp_field__array(perfctr_tp_format__field_by_name(fmt,
		     "filename"), raw, 24, &data, &len), 0);
	CHECK(data == raw + 20 && len == 3);
	perfctr_tp_formats__delete(f);
}

/* Every cut of the section is refused, or parses what it holds. */
TEST(damaged_sections)
{
	static struct section s;
	size_t whole;

	put_all(&s, false);
	whole = s.len;
	for (size_t cut = 0; cut < whole - 4; cut++) {
		struct perfctr_tp_formats *f;

		errno = 0;
		f = perfctr_tp_formats__new(s.buf, cut);
		CHECK(f == NULL);
		CHECK_EQ_INT(errno, EINVAL);
		perfctr_tp_formats__delete(f);
	}
	/* What follows the events is not read. */
	perfctr_tp_formats__delete(perfctr_tp_formats__new(s.buf, whole - 4));
	/* A wrong block name. */
	s.buf[sizeof("\027\010Dtracing0.6") + 6] = 'X';
	errno = 0;
	CHECK(perfctr_tp_formats__new(s.buf, whole) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	/* The other byte order. */
	put_all(&s, true);
	errno = 0;
	CHECK(perfctr_tp_formats__new(s.buf, s.len) == NULL);
	CHECK_EQ_INT(errno, EOPNOTSUPP);
	errno = 0;
	CHECK(perfctr_tp_formats__new(NULL, 8) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	perfctr_tp_formats__delete(NULL);
}

/*
 * A perf.data file's formats through its reader: the writer takes them
 * from the fixture tracefs (names and IDs only), the reader parses them
 * once; a file with no tracepoint has none.
 */
TEST(perfdata_formats)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, o,
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));
	struct perf_event_attr tp = { .type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(tp), .config = 1001,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_RAW };
	struct perf_event_attr sw = tp;
	const struct perfctr_tp_formats *f;
	const struct perfctr_tp_format *fmt;
	struct perfctr_perfdata_writer *w;
	struct perfctr_perfdata *pd;
	static const uint64_t id = 5;
	char path[64];

	snprintf(path, sizeof(path), "/tmp/pctest-tpformat-%d", (int)getpid());
	w = perfctr_perfdata_writer__open(path, &o);
	REQUIRE(w);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &tp, NULL, &id, 1), 0);
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
	pd = perfctr_perfdata__open(path, NULL);
	REQUIRE(pd);
	f = perfctr_perfdata__tp_formats(pd);
	REQUIRE(f);
	CHECK(perfctr_perfdata__tp_formats(pd) == f);
	CHECK_EQ_U64(perfctr_tp_formats__nr(f), 1);
	fmt = perfctr_tp_formats__find(f, 1001);
	REQUIRE(fmt);
	CHECK_STR(perfctr_tp_format__system(fmt), "syscalls");
	CHECK_STR(perfctr_tp_format__name(fmt), "sys_enter_getppid");
	CHECK_EQ_U64(perfctr_tp_format__nr_fields(fmt), 0);
	/* The unnamed event is named from it. */
	CHECK_STR(perfctr_perfdata__attr_name(pd, 0), "syscalls:sys_enter_getppid");
	perfctr_perfdata__close(pd);

	sw.type = PERF_TYPE_SOFTWARE;
	sw.config = PERF_COUNT_SW_TASK_CLOCK;
	w = perfctr_perfdata_writer__open(path, &o);
	REQUIRE(w);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &sw, "task-clock", &id, 1), 0);
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
	pd = perfctr_perfdata__open(path, NULL);
	REQUIRE(pd);
	errno = 0;
	CHECK(perfctr_perfdata__tp_formats(pd) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	perfctr_perfdata__close(pd);
	unlink(path);
}

TEST_MAIN(
	TEST_CASE(events_in_section_order),
	TEST_CASE(field_lines),
	TEST_CASE(payload_fields),
	TEST_CASE(damaged_sections),
	TEST_CASE(perfdata_formats),
)
