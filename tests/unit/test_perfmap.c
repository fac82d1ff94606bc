// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Perf map files (/tmp/perf-PID.map): the parser, the lookup rules, and
 * their use by the symbols object for anonymous executable maps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <perfctr/symbols.h>

#include "sample/perfmap.h"
#include "test.h"

static const char text[] =
	"1000 10 LazyCompile:*hot file.js:1:19\n"	/* spaces in names */
	"0x2000 0x20 prefixed\n"
	"2100 0 empty\n"
	"3000 100 outer\n"
	"3040 10 inner\n"			/* overlaps: outer came first */
	"4000 10 first\n"
	"4000 10 second\n"			/* same start: the first wins */
	"nonsense line\n"
	"5000 10\n"				/* no name */
	"6000\n"
	"7000 zz name\n"
	"8000 10 last-no-newline";

static const struct {
	uint64_t ip;
	const char *name;	/* NULL: none */
	uint64_t start;
} finds[] = {
	{ 0x0fff, NULL, 0 },
	{ 0x1000, "LazyCompile:*hot file.js:1:19", 0x1000 },
	{ 0x100f, "LazyCompile:*hot file.js:1:19", 0x1000 },
	{ 0x1010, NULL, 0 },
	{ 0x2000, "prefixed", 0x2000 },
	{ 0x201f, "prefixed", 0x2000 },
	{ 0x2100, "empty", 0x2100 },
	{ 0x2101, NULL, 0 },
	{ 0x3000, "outer", 0x3000 },
	{ 0x3045, "outer", 0x3000 },
	{ 0x30ff, "outer", 0x3000 },
	{ 0x4005, "first", 0x4000 },
	{ 0x5005, NULL, 0 },
	{ 0x6000, NULL, 0 },
	{ 0x7000, NULL, 0 },
	{ 0x8005, "last-no-newline", 0x8000 },
};

TEST(parse_and_find)
{
	struct pc_perfmap *map = pc_perfmap__parse(text, sizeof(text) - 1);
	size_t i;

	REQUIRE(map);
	CHECK_EQ_U64(pc_perfmap__nr_entries(map), 8);
	for (i = 0; i < sizeof(finds) / sizeof(finds[0]); i++) {
		uint64_t start = 0;
		const char *name = pc_perfmap__find(map, finds[i].ip, &start);

		if (!finds[i].name) {
			CHECK(name == NULL);
			continue;
		}
		REQUIRE(name);
		CHECK_STR(name, finds[i].name);
		CHECK_EQ_U64(start, finds[i].start);
	}
	pc_perfmap__delete(map);
	map = pc_perfmap__parse("", 0);
	REQUIRE(map);
	CHECK(pc_perfmap__find(map, 0x1000, NULL) == NULL);
	pc_perfmap__delete(map);
}

TEST(anon_names)
{
	static const struct {
		const char *file;
		bool anon;
	} rows[] = {
		{ "//anon", true },
		/* nor named anonymous memory: its name is taken for a file's */
		{ "[anon:v8]", false },
		{ "/dev/zero (deleted)", true },
		{ "/anon_hugepage (deleted)", true },
		{ "[heap]", true },
		{ "[stack]", true },
		{ "/SYSV00000000 (deleted)", true },
		/* perf 6.1 looks no memfd up in the perf map */
		{ "/memfd:jit (deleted)", false },
		{ "/usr/bin/node", false },
		{ "[vdso]", false },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		CHECK(pc_perfmap_is_anon(rows[i].file) == rows[i].anon);
}

static char root[] = "/tmp/test_perfmap.XXXXXX";

static void write_map(const char *body, const char *mode)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tmp/perf-10.map", root);
	f = fopen(path, mode);
	if (!f)
		return;
	fputs(body, f);
	fclose(f);
}

TEST(symbols_resolve)
{
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	struct perfctr_symbols *syms;
	char dir[128];

	REQUIRE(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/tmp", root);
	REQUIRE(mkdir(dir, 0700) == 0);
	write_map("7f0000001000 40 jit_one\n", "w");
	{
		PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "",
			     .root = root);
		syms = perfctr_symbols__new(&opts);
	}
	REQUIRE(syms);
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 10, 0x7f0000000000ULL,
					      0x10000, 0, "//anon"), 0);
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 10, 0x7f0000010000ULL,
					      0x1000, 0, "/memfd:x (deleted)"), 0);
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, 10, 0x7f0000001010ULL,
					      false, 0, &loc), 1);
	CHECK_STR(loc.sym, "jit_one");
	CHECK_STR(loc.dso, "/tmp/perf-10.map");
	CHECK_EQ_U64(loc.sym_addr, 0x7f0000001000ULL);
	CHECK_EQ_U64(loc.dso_addr, 0x7f0000001010ULL);
	/* Not in the map: the map's DSO all the same, as perf names it. */
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, 10, 0x7f0000002000ULL,
					      false, 0, &loc), 0);
	CHECK(loc.sym == NULL);
	CHECK_STR(loc.dso, "/tmp/perf-10.map");
	/* The map grows; the new entry is found once 50 ms have passed. */
	write_map("7f0000002000 40 jit_two\n", "a");
	usleep(120000);
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, 10, 0x7f0000002000ULL,
					      false, 0, &loc), 1);
	CHECK_STR(loc.sym, "jit_two");
	/* The first entry's name is still valid after the read. */
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, 10, 0x7f0000001000ULL,
					      false, 0, &loc), 1);
	CHECK_STR(loc.sym, "jit_one");
	/* A memfd is not looked up (perf 6.1 does not). */
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, 10, 0x7f0000010000ULL,
					      false, 0, &loc), 0);
	CHECK_STR(loc.dso, "/memfd:x (deleted)");
	/* Another process without a map file. */
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 11, 0x7f0000000000ULL,
					      0x10000, 0, "//anon"), 0);
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, 11, 0x7f0000001010ULL,
					      false, 0, &loc), 0);
	CHECK_STR(loc.dso, "/tmp/perf-11.map");
	perfctr_symbols__delete(syms);
	snprintf(dir, sizeof(dir), "%s/tmp/perf-10.map", root);
	unlink(dir);
	snprintf(dir, sizeof(dir), "%s/tmp", root);
	rmdir(dir);
	rmdir(root);
}

TEST_MAIN(TEST_CASE(parse_and_find), TEST_CASE(anon_names),
	  TEST_CASE(symbols_resolve))
