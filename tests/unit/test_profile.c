// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of profile aggregation: sort keys, rows, and the trees (call
 * graphs, the stack tree) through their iterators, on synthetic samples
 * with known answers. */
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
		{ "symbol,dso", 2, -1 },
		{ "sym,symbol", -EINVAL, 4 },
		{ "srcline,pid,tid,cpu,comm,dso,sym", 7, -1 },
		{ "symbo", -EINVAL, 0 },
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
	CHECK_STR(perfctr_sort_key_name(PERFCTR_SORT_SRCLINE), "srcline");
	CHECK(perfctr_sort_keys_parse("symbol", keys, 1, NULL) == 1 &&
	      keys[0] == PERFCTR_SORT_SYM);
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

/* The comm key: the name, the last one reused across a run of samples
 * and looked up again after another; ":tid" for a task with no name. */
TEST(comm_key_from_name_or_tid)
{
	static const enum perfctr_sort_key keys[] = { PERFCTR_SORT_COMM };
	PERFCTR_OPTS(perfctr_profile_opts, opts, .keys = keys, .nr_keys = 1);
	struct perfctr_profile *p = perfctr_profile__new(&opts);
	struct perfctr_profile_entry e = { .sz = sizeof(e) };
	static const struct {
		const char *comm;
		uint64_t samples;
	} rows[] = { { ":104", 4 }, { "w", 3 }, { "x", 1 } };
	size_t i;

	REQUIRE(p);
	add(p, "w", 101, 0, chain_a, 3, 1);
	add(p, "x", 102, 0, chain_a, 3, 1);
	add(p, "w", 101, 0, chain_a, 3, 2);
	add(p, NULL, 104, 0, chain_a, 3, 4);
	REQUIRE(perfctr_profile__nr_entries(p) == 3);
	for (i = 0; i < 3; i++) {
		perfctr_profile__entry(p, i, &e);
		CHECK_STR(e.keys[0], rows[i].comm);
		CHECK_EQ_U64(e.samples, rows[i].samples);
	}
	CHECK_EQ_U64(perfctr_profile__samples(p), 8);
	perfctr_profile__delete(p);
}

TEST(srcline_key)
{
	static const enum perfctr_sort_key keys[] = {
		PERFCTR_SORT_SRCLINE, PERFCTR_SORT_SYM,
	};
	PERFCTR_OPTS(perfctr_profile_opts, opts, .keys = keys, .nr_keys = 2);
	struct perfctr_profile *p = perfctr_profile__new(&opts);
	struct perfctr_profile_entry e = { .sz = sizeof(e) };
	struct perfctr_profile_sample s = {
		.sz = sizeof(s), .comm = "w", .pid = 100, .tid = 107,
		.cpu = 0, .weight = 1, .frames = chain_a, .nr_frames = 3,
	};
	char line[32];
	int i;

	REQUIRE(p);
	/* Three samples at w.c:7, two at w.c:8 of the same function, one
	 * without a line: rows by line, then by symbol. */
	for (i = 0; i < 6; i++) {
		snprintf(line, sizeof(line), "w.c:%d", i < 3 ? 7 : 8);
		s.srcline = i == 5 ? NULL : line;
		CHECK_EQ_INT(perfctr_profile__add(p, &s), 0);
	}
	REQUIRE(perfctr_profile__nr_entries(p) == 3);
	perfctr_profile__entry(p, 0, &e);
	CHECK_STR(e.keys[0], "w.c:7");
	CHECK_STR(e.keys[1], "spin");
	CHECK_EQ_U64(e.samples, 3);
	CHECK_EQ_INT(e.pid, 100);
	CHECK_EQ_INT(e.tid, 107);
	perfctr_profile__entry(p, 1, &e);
	CHECK_STR(e.keys[0], "w.c:8");
	CHECK_EQ_U64(e.samples, 2);
	perfctr_profile__entry(p, 2, &e);
	CHECK_STR(e.keys[0], "??:0");
	CHECK_EQ_U64(e.samples, 1);
	perfctr_profile__delete(p);
}

#define NODE(n) struct perfctr_profile_node n = { .sz = sizeof(n) }

/* Child @i of @parent, checked against name, total and self. */
static struct perfctr_profile_node child(struct perfctr_profile *p,
					 const struct perfctr_profile_node *parent,
					 size_t i, const char *name,
					 uint64_t total, uint64_t self)
{
	NODE(n);

	CHECK_EQ_INT(perfctr_profile__child(p, parent, i, &n), 0);
	CHECK_STR(n.name, name);
	CHECK_EQ_U64(n.total, total);
	CHECK_EQ_U64(n.self, self);
	return n;
}

TEST(stack_tree_iterators)
{
	struct perfctr_profile *p = fill(NULL, 0, PERFCTR_CALLGRAPH_NONE);
	struct perfctr_profile_node w, x, main_, k, u, work;
	NODE(root);

	CHECK_EQ_INT(perfctr_profile__stack_root(p, &root), 0);
	CHECK_EQ_INT(root.kind, PERFCTR_PROFILE_NODE_ROOT);
	CHECK(root.name == NULL);
	CHECK_EQ_U64(root.total, 10);
	REQUIRE(root.nr_children == 2);
	/* Heaviest first. */
	w = child(p, &root, 0, "w", 9, 0);
	CHECK_EQ_INT(w.kind, PERFCTR_PROFILE_NODE_COMM);
	x = child(p, &root, 1, "x", 1, 0);
	REQUIRE(w.nr_children == 1);
	main_ = child(p, &w, 0, "main", 9, 0);
	CHECK_EQ_INT(main_.kind, PERFCTR_PROFILE_NODE_FRAME);
	CHECK_STR(main_.dso, "/bin/w");
	CHECK(main_.resolved && !main_.kernel);
	REQUIRE(main_.nr_children == 3);
	work = child(p, &main_, 0, "work", 6, 0);
	child(p, &work, 0, "spin", 6, 6);
	child(p, &main_, 1, "other", 2, 0);
	k = child(p, &main_, 2, "getppid", 1, 0);
	k = child(p, &k, 0, "do_syscall_64", 1, 1);
	CHECK(k.kernel && k.resolved);
	CHECK_STR(k.dso, "[kernel.kallsyms]");
	CHECK_EQ_U64(k.nr_children, 0);
	/* An unresolved frame: its address, and no DSO named. */
	u = child(p, &x, 0, "0x0000000000001234", 1, 1);
	CHECK(!u.resolved && u.dso == NULL);
	CHECK_EQ_INT(perfctr_profile__child(p, &main_, 3, &u), -ERANGE);
	/* The tree's order follows later samples: "other" overtakes "work". */
	add(p, "w", 102, 1, chain_b, 3, 5);
	CHECK_EQ_INT(perfctr_profile__stack_root(p, &root), 0);
	w = child(p, &root, 0, "w", 14, 0);
	main_ = child(p, &w, 0, "main", 14, 0);
	child(p, &main_, 0, "other", 7, 0);
	child(p, &main_, 1, "work", 6, 0);
	perfctr_profile__delete(p);
}

/* Equal totals: by name, then the most recently made first. */
TEST(children_order_ties)
{
	static const struct perfctr_frame fa[] = { F("b", "/x"), F("top", "/x") };
	static const struct perfctr_frame fb[] = { F("a", "/x"), F("top", "/x") };
	static const struct perfctr_frame fc[] = { F("a", "/y"), F("top", "/x") };
	struct perfctr_profile_node c0, c1, c2, top, comm;
	struct perfctr_profile *p = perfctr_profile__new(NULL);
	NODE(root);

	REQUIRE(p);
	add(p, "t", 1, 0, fa, 2, 1);
	add(p, "t", 1, 0, fb, 2, 1);
	add(p, "t", 1, 0, fc, 2, 1);
	CHECK_EQ_INT(perfctr_profile__stack_root(p, &root), 0);
	comm = child(p, &root, 0, "t", 3, 0);
	top = child(p, &comm, 0, "top", 3, 0);
	c0 = child(p, &top, 0, "a", 1, 1);
	c1 = child(p, &top, 1, "a", 1, 1);
	c2 = child(p, &top, 2, "b", 1, 1);
	CHECK_STR(c0.dso, "/y");
	CHECK_STR(c1.dso, "/x");
	CHECK(c0.first_seen == 3 && c1.first_seen == 2 && c2.first_seen == 1);
	perfctr_profile__delete(p);
}

TEST(callgraph_callee_and_caller)
{
	static const enum perfctr_sort_key keys[] = { PERFCTR_SORT_SYM };
	struct perfctr_profile *p = fill(keys, 1, PERFCTR_CALLGRAPH_CALLEE);
	struct perfctr_profile_node spin, work;
	NODE(root);

	/* Row 0 is spin: 8 of 10; its callers 6 through work, 2 other. */
	CHECK_EQ_INT(perfctr_profile__callgraph_root(p, 0, &root), 0);
	CHECK_EQ_INT(root.kind, PERFCTR_PROFILE_NODE_ROOT);
	CHECK_EQ_U64(root.total, 8);
	REQUIRE(root.nr_children == 1);
	spin = child(p, &root, 0, "spin", 8, 0);
	REQUIRE(spin.nr_children == 2);
	work = child(p, &spin, 0, "work", 6, 0);
	child(p, &spin, 1, "other", 2, 0);
	/* The outermost caller is where callee-order samples end. */
	child(p, &work, 0, "main", 6, 6);
	CHECK_EQ_INT(perfctr_profile__callgraph_root(p, 9, &root), -ERANGE);
	perfctr_profile__delete(p);

	p = fill(keys, 1, PERFCTR_CALLGRAPH_CALLER);
	CHECK_EQ_INT(perfctr_profile__callgraph_root(p, 0, &root), 0);
	spin = child(p, &root, 0, "main", 8, 0);
	work = child(p, &spin, 0, "work", 6, 0);
	child(p, &work, 0, "spin", 6, 6);
	child(p, &spin, 1, "other", 2, 0);
	perfctr_profile__delete(p);

	p = fill(keys, 1, PERFCTR_CALLGRAPH_NONE);
	CHECK_EQ_INT(perfctr_profile__callgraph_root(p, 0, &root), -EINVAL);
	root.sz = 4;
	CHECK_EQ_INT(perfctr_profile__stack_root(p, &root), -EINVAL);
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

TEST_MAIN(TEST_CASE(sort_keys_parse), TEST_CASE(srcline_key),
	  TEST_CASE(comm_key_from_name_or_tid), TEST_CASE(flat_rows),
	  TEST_CASE(rows_follow_text_not_pointers),
	  TEST_CASE(tid_and_cpu_keys), TEST_CASE(stack_tree_iterators),
	  TEST_CASE(children_order_ties),
	  TEST_CASE(callgraph_callee_and_caller), TEST_CASE(bad_arguments))
