// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of profile aggregation: sort keys, rows, call graphs, folded
 * stacks and the flame graph, on synthetic samples with known answers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <perfctr/profile.h>

#include "test.h"

#define F(s, d) { .dso = d, .sym = s, .addr = 0, .kernel = false }
#define K(s) { .dso = "[kernel.kallsyms]", .sym = s, .addr = 0, .kernel = true }

static const struct perfctr_frame chain_a[] = {	/* leaf first */
	F("spin", "/bin/w"), F("work", "/bin/w"), F("main", "/bin/w"),
};
static const struct perfctr_frame chain_b[] = {
	F("spin", "/bin/w"), F("other", "/bin/w"), F("main", "/bin/w"),
};
static const struct perfctr_frame chain_k[] = {
	K("do_syscall_64"), F("getppid", "/lib/libc.so.6"), F("main", "/bin/w"),
};
static const struct perfctr_frame chain_unk[] = {
	{ .dso = NULL, .sym = NULL, .addr = 0x1234, .kernel = false },
};

static void add(struct perfctr_profile *p, const char *comm, int tid, int cpu,
		const struct perfctr_frame *f, size_t n, int times)
{
	struct perfctr_profile_sample s = {
		.sz = sizeof(s), .comm = comm, .pid = 100, .tid = tid,
		.cpu = cpu, .weight = 1, .frames = f, .nr_frames = n,
	};

	for (int i = 0; i < times; i++)
		CHECK_EQ_INT(perfctr_profile__add(p, &s), 0);
}

static struct perfctr_profile *fill(const enum perfctr_sort_key *keys,
				    size_t nr, enum perfctr_callgraph_order cg)
{
	PERFCTR_OPTS(perfctr_profile_opts, opts, .keys = keys, .nr_keys = nr,
		     .callgraph = cg);
	struct perfctr_profile *p = perfctr_profile__new(&opts);

	REQUIRE(p);
	add(p, "w", 101, 0, chain_a, 3, 6);
	add(p, "w", 102, 1, chain_b, 3, 2);
	add(p, "w", 101, 1, chain_k, 3, 1);
	add(p, "x", 103, 0, chain_unk, 1, 1);
	return p;
}

TEST(sort_keys_parse)
{
	static const struct {
		const char *spec;
		int ret;
		int bad_at;	/* offset of the bad key, -1 when none */
	} rows[] = {
		{ "comm,dso,sym", 3, -1 },
		{ "sym", 1, -1 },
		{ "pid,tid,cpu,comm,dso,sym", 6, -1 },
		{ "comm,bogus", -EINVAL, 5 },
		{ "sym,sym", -EINVAL, 4 },
		{ "", -EINVAL, 0 },
		{ "comm,", -EINVAL, 5 },
	};
	enum perfctr_sort_key keys[PERFCTR_SORT_NR];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *bad = NULL;
		int r = perfctr_sort_keys_parse(rows[i].spec, keys,
						PERFCTR_SORT_NR, &bad);

		CHECK_EQ_INT(r, rows[i].ret);
		if (rows[i].bad_at >= 0)
			CHECK_EQ_INT(bad - rows[i].spec, rows[i].bad_at);
	}
	CHECK_EQ_INT(perfctr_sort_keys_parse("comm,dso", keys, 1, NULL), -E2BIG);
	CHECK_STR(perfctr_sort_key_name(PERFCTR_SORT_TID), "tid");
}

TEST(flat_rows)
{
	static const enum perfctr_sort_key keys[] = {
		PERFCTR_SORT_COMM, PERFCTR_SORT_DSO, PERFCTR_SORT_SYM,
	};
	struct perfctr_profile *p = fill(keys, 3, PERFCTR_CALLGRAPH_NONE);
	struct perfctr_profile_entry e = { .sz = sizeof(e) };

	CHECK_EQ_U64(perfctr_profile__samples(p), 10);
	CHECK_EQ_U64(perfctr_profile__weight(p), 10);
	REQUIRE(perfctr_profile__nr_entries(p) == 3);
	CHECK_EQ_INT(perfctr_profile__entry(p, 0, &e), 0);
	CHECK_EQ_U64(e.samples, 8);
	CHECK_STR(e.keys[0], "w");
	CHECK_STR(e.keys[1], "/bin/w");
	CHECK_STR(e.keys[2], "spin");
	CHECK(!e.kernel);
	/* Ties (1 sample each) in key order: "w" < "x". */
	CHECK_EQ_INT(perfctr_profile__entry(p, 1, &e), 0);
	CHECK_STR(e.keys[2], "do_syscall_64");
	CHECK_STR(e.keys[1], "[kernel.kallsyms]");
	CHECK(e.kernel);
	CHECK_EQ_INT(perfctr_profile__entry(p, 2, &e), 0);
	CHECK_STR(e.keys[1], "[unknown]");
	CHECK_STR(e.keys[2], "0x0000000000001234");
	CHECK_EQ_INT(perfctr_profile__entry(p, 3, &e), -ERANGE);
	perfctr_profile__delete(p);
}

/* One comm buffer rewritten between samples (as a walk's comm table is on
 * a COMM record), rows alternating, a comm too long for the profile's
 * cache: every sample lands in its own row all the same. */
TEST(rows_follow_text_not_pointers)
{
	static const enum perfctr_sort_key keys[] = { PERFCTR_SORT_COMM };
	static const char *const seq[] = {
		"a", "b", "a", "a", "long-comm-name-longer-than-32-bytes", "b",
		"long-comm-name-longer-than-32-bytes", "a",
	};
	PERFCTR_OPTS(perfctr_profile_opts, opts, .keys = keys, .nr_keys = 1);
	struct perfctr_profile *p = perfctr_profile__new(&opts);
	struct perfctr_profile_entry e = { .sz = sizeof(e) };
	char comm[64];

	REQUIRE(p);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		snprintf(comm, sizeof(comm), "%s", seq[i]);
		add(p, comm, 101, 0, chain_a, 3, 1);
	}
	snprintf(comm, sizeof(comm), "gone");
	REQUIRE(perfctr_profile__nr_entries(p) == 3);
	CHECK_EQ_INT(perfctr_profile__entry(p, 0, &e), 0);
	CHECK_STR(e.keys[0], "a");
	CHECK_EQ_U64(e.samples, 4);
	CHECK_EQ_INT(perfctr_profile__entry(p, 1, &e), 0);
	CHECK_STR(e.keys[0], "b");
	CHECK_EQ_U64(e.samples, 2);
	CHECK_EQ_INT(perfctr_profile__entry(p, 2, &e), 0);
	CHECK_STR(e.keys[0], "long-comm-name-longer-than-32-bytes");
	CHECK_EQ_U64(e.samples, 2);
	perfctr_profile__delete(p);
}

TEST(tid_and_cpu_keys)
{
	static const enum perfctr_sort_key keys[] = { PERFCTR_SORT_TID, PERFCTR_SORT_CPU };
	struct perfctr_profile *p = fill(keys, 2, PERFCTR_CALLGRAPH_NONE);
	struct perfctr_profile_entry e = { .sz = sizeof(e) };

	/* (101,0)x6 (102,1)x2 (101,1)x1 (103,0)x1 */
	REQUIRE(perfctr_profile__nr_entries(p) == 4);
	perfctr_profile__entry(p, 0, &e);
	CHECK_STR(e.keys[0], "101");
	CHECK_STR(e.keys[1], "0");
	CHECK_EQ_U64(e.samples, 6);
	perfctr_profile__entry(p, 1, &e);
	CHECK_STR(e.keys[0], "102");
	CHECK_EQ_U64(e.samples, 2);
	perfctr_profile__delete(p);
}

static char *capture(void (*fn)(struct perfctr_profile *, FILE *),
		     struct perfctr_profile *p)
{
	/* Static: GCC's dangling-pointer check misreads open_memstream. */
	static char *buf;
	static size_t len;
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &len);

	REQUIRE(f);
	fn(p, f);
	fclose(f);
	return buf;
}

static void do_folded(struct perfctr_profile *p, FILE *f)
{
	CHECK_EQ_INT(perfctr_profile__write_folded(p, f), 4);
}

TEST(folded_stacks)
{
	struct perfctr_profile *p = fill(NULL, 0, PERFCTR_CALLGRAPH_NONE);
	char *out = capture(do_folded, p);

	CHECK_STR(out,
		  "w;main;getppid;do_syscall_64_[k] 1\n"
		  "w;main;other;spin 2\n"
		  "w;main;work;spin 6\n"
		  "x;[unknown] 1\n");
	free(out);
	perfctr_profile__delete(p);
}

static void do_graph(struct perfctr_profile *p, FILE *f)
{
	CHECK_EQ_INT(perfctr_profile__print_callgraph(p, 0, f, 0.0), 0);
}

TEST(callgraph_callee_and_caller)
{
	static const enum perfctr_sort_key keys[] = { PERFCTR_SORT_SYM };
	struct perfctr_profile *p = fill(keys, 1, PERFCTR_CALLGRAPH_CALLEE);
	char *out = capture(do_graph, p);

	/* spin: 80% of all, 60% through work, 20% through other. */
	CHECK(strstr(out, "---spin\n") != NULL);
	CHECK(strstr(out, "|--60.00%--work\n") != NULL);
	CHECK(strstr(out, " --20.00%--other\n") != NULL);
	CHECK(strstr(out, "main") != NULL);
	CHECK(strstr(out, "work") < strstr(out, "other"));
	free(out);
	perfctr_profile__delete(p);

	p = fill(keys, 1, PERFCTR_CALLGRAPH_CALLER);
	out = capture(do_graph, p);
	/* Caller order starts from main. */
	CHECK(strstr(out, "---main\n") != NULL);
	CHECK(strstr(out, "|--60.00%--work\n") != NULL);
	free(out);
	perfctr_profile__delete(p);

	p = fill(keys, 1, PERFCTR_CALLGRAPH_NONE);
	CHECK_EQ_INT(perfctr_profile__print_callgraph(p, 0, stdout, 0), -EINVAL);
	perfctr_profile__delete(p);
}

static void do_svg(struct perfctr_profile *p, FILE *f)
{
	PERFCTR_OPTS(perfctr_flame_opts, opts, .title = "t <&> \"q\"");

	CHECK_EQ_INT(perfctr_profile__write_flame_svg(p, f, &opts), 0);
}

TEST(flame_svg)
{
	struct perfctr_profile *p = fill(NULL, 0, PERFCTR_CALLGRAPH_NONE);
	char *out = capture(do_svg, p);

	CHECK(!strncmp(out, "<?xml", 5));
	CHECK(strstr(out, "</svg>\n") != NULL);
	CHECK(strstr(out, "t &lt;&amp;&gt; &quot;q&quot;") != NULL);
	CHECK(strstr(out, "<title>all (10 samples, 100.00%)</title>") != NULL);
	CHECK(strstr(out, "<title>spin (6 samples, 60.00%)</title>") != NULL);
	CHECK(strstr(out, "<title>do_syscall_64_[k] (1 samples, 10.00%)</title>") != NULL);
	CHECK(strstr(out, "<![CDATA[") != NULL);
	free(out);
	perfctr_profile__delete(p);
}

TEST(bad_arguments)
{
	static const enum perfctr_sort_key dup[] = { PERFCTR_SORT_SYM, PERFCTR_SORT_SYM };
	PERFCTR_OPTS(perfctr_profile_opts, opts, .keys = dup, .nr_keys = 2);
	struct perfctr_profile_sample s = { .sz = sizeof(s) };
	struct perfctr_profile *p;

	CHECK(perfctr_profile__new(&opts) == NULL && errno == EINVAL);
	p = perfctr_profile__new(NULL);
	REQUIRE(p);
	CHECK_EQ_INT(perfctr_profile__add(p, &s), -EINVAL);
	CHECK_EQ_U64(perfctr_profile__nr_entries(p), 0);
	perfctr_profile__delete(p);
}

TEST_MAIN(TEST_CASE(sort_keys_parse), TEST_CASE(flat_rows),
	  TEST_CASE(rows_follow_text_not_pointers),
	  TEST_CASE(tid_and_cpu_keys), TEST_CASE(folded_stacks),
	  TEST_CASE(callgraph_callee_and_caller), TEST_CASE(flame_svg),
	  TEST_CASE(bad_arguments))
