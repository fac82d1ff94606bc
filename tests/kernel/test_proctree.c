// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Process trees (perfctr/tree.h): every process's own getppid calls and
 * its subtree's, exact, with concurrent children that fork and exec; the
 * root's subtree equals the inherited whole-tree count of a session on the
 * same run; threads that end early keep their counts; 1,000 short-lived
 * processes all appear.  A pcwork that exits normally makes a few getppid
 * calls of its own under the sanitizers (their leak check): measured
 * first and added, as test_session_command.c does.  The leak checker
 * makes them from a helper task it creates with CLONE_UNTRACED, which no
 * tracer sees: they are in the inherited whole-tree count and in no row
 * (helper_calls, 0 in a plain build).
 */
#include <sys/ptrace.h>

#include "session_util.h"

static const char *pcwork(void)
{
	return test_build_path("tests/workload/pcwork");
}

struct run {
	struct perfctr_session *whole;
	struct perfctr_target *target;
	struct perfctr_tree *tree;
	int status;
};

static void run_tree(struct run *r, char **argv)
{
	r->whole = session_with(TP_GETPPID, 0);
	r->target = perfctr_target__new_command(argv, NULL);
	REQUIRE(r->target);
	r->tree = perfctr_tree__new(r->whole, r->target, NULL);
	if (!r->tree && (errno == EPERM || errno == EACCES))
		test_skip("ptrace is not allowed here: %s", strerror(errno));
	REQUIRE(r->tree);
	REQUIRE(perfctr_session__attach(r->whole, r->target) == 0);
	REQUIRE(perfctr_target__start(r->target) == 0);
	r->status = -1;
	int rc;
	while ((rc = perfctr_tree__wait(r->tree, &r->status)) == -EINTR)
		;
	REQUIRE(rc == 0);
	REQUIRE(perfctr_session__read(r->whole) == 0);
}

static void run_free(struct run *r)
{
	perfctr_tree__delete(r->tree);
	perfctr_session__delete(r->whole);
	perfctr_target__delete(r->target);
}

static uint64_t self_of(struct perfctr_tree *t, size_t p)
{
	struct perfctr_count c;

	REQUIRE(perfctr_tree__self(t, p, 0, &c) == 0);
	return c.value;
}

static uint64_t subtree_of(struct perfctr_tree *t, size_t p)
{
	struct perfctr_count c;

	REQUIRE(perfctr_tree__subtree(t, p, 0, &c) == 0);
	return c.value;
}

static uint64_t helper_calls = UINT64_MAX;

/* getppid calls of a pcwork that only exits normally, in its row; and
 * those of untraced helpers (helper_calls). */
static uint64_t baseline(void)
{
	static uint64_t calls = UINT64_MAX;

	if (calls == UINT64_MAX) {
		char *argv[] = { (char *)pcwork(), "getppid", "0", NULL };
		struct run r;

		run_tree(&r, argv);
		calls = self_of(r.tree, 0);
		REQUIRE(value_of(r.whole, 0) >= calls);
		helper_calls = value_of(r.whole, 0) - calls;
		CHECK_EQ_INT(perfctr_tree__nr_processes(r.tree), 1);
		run_free(&r);
	}
	return calls;
}

TEST(concurrent_children_exact_20_runs)
{
	enum { K = 8, N = 1000 };
	char *argv[] = { (char *)pcwork(), "tree", "8", "1000", NULL };
	uint64_t b;

	require_tracepoints();
	b = baseline();
	for (int run = 0; run < 20 && !test_failed(); run++) {
		struct run r;
		struct perfctr_tree_node node = { .sz = sizeof(node) };
		uint64_t sum = 0;
		size_t nr;

		run_tree(&r, argv);
		CHECK_EQ_INT(r.status, 0);
		nr = perfctr_tree__nr_processes(r.tree);
		/* root, 8 children, 3 grandchildren */
		CHECK_EQ_INT(nr, 1 + K + 3);
		CHECK_EQ_U64(self_of(r.tree, 0), b);
		CHECK_EQ_INT(perfctr_tree__process(r.tree, 0, &node), 0);
		CHECK_EQ_INT(node.parent, PERFCTR_TREE_NONE);
		CHECK_EQ_INT(node.nr_children, K);
		for (size_t c = 0; c < K; c++) {
			size_t p = perfctr_tree__child(r.tree, 0, c);
			uint64_t mine = (uint64_t)N * (c + 1), self, sub;

			REQUIRE(p != PERFCTR_TREE_NONE);
			REQUIRE(perfctr_tree__process(r.tree, p, &node) == 0);
			CHECK_EQ_INT(node.ppid, perfctr_target__pid(r.target));
			CHECK_EQ_INT(node.depth, 1);
			CHECK(!node.running && node.end_ns >= node.start_ns);
			CHECK(WIFEXITED(node.exit_status) &&
			      WEXITSTATUS(node.exit_status) == 0);
			self = mine;
			sub = mine;
			if (c % 3 == 2) {
				self = sub = mine + 2 + b;
				/* exec of /proc/self/exe: comm is "exe" */
				CHECK_STR(node.comm, "exe");
				CHECK(strstr(node.exe, "pcwork") != NULL);
			}
			if (c % 3 == 1) {
				size_t g = perfctr_tree__child(r.tree, p, 0);

				REQUIRE(g != PERFCTR_TREE_NONE);
				CHECK_EQ_U64(self_of(r.tree, g), mine + 1);
				CHECK_EQ_U64(subtree_of(r.tree, g), mine + 1);
				sub += mine + 1;
			}
			CHECK_EQ_U64(self_of(r.tree, p), self);
			CHECK_EQ_U64(subtree_of(r.tree, p), sub);
			sum += sub;
		}
		CHECK_EQ_U64(subtree_of(r.tree, 0), sum + b);
		/* The same run counted whole, by inheritance (three
		 * normal exits: the root and the two exec'ed). */
		CHECK_EQ_U64(subtree_of(r.tree, 0) + 3 * helper_calls,
			     value_of(r.whole, 0));
		run_free(&r);
	}
}

TEST(threads_that_end_early_keep_their_counts)
{
	char *argv[] = { (char *)pcwork(), "threads", "3", "500",
			 "getppid", "7", "sleep", "20", NULL };
	struct perfctr_tree_node node = { .sz = sizeof(node) };
	struct run r;
	uint64_t b, sum = 0;
	size_t n;

	require_tracepoints();
	b = baseline();
	run_tree(&r, argv);
	CHECK_EQ_INT(perfctr_tree__nr_processes(r.tree), 1);
	n = perfctr_tree__nr_threads(r.tree, 0);
	CHECK_EQ_INT(n, 4);
	for (size_t k = 0; k < n; k++) {
		struct perfctr_count c;

		REQUIRE(perfctr_tree__thread_count(r.tree, 0, k, 0, &c) == 0);
		REQUIRE(perfctr_tree__thread(r.tree, 0, k, &node) == 0);
		CHECK_EQ_INT(node.pid, perfctr_target__pid(r.target));
		/* The main thread first; the others ended before it. */
		CHECK_EQ_U64(c.value, k == 0 ? 7 + b : 500);
		if (k)
			CHECK(node.tid != node.pid && node.end_ns > 0);
		sum += c.value;
	}
	CHECK_EQ_U64(self_of(r.tree, 0), sum);
	CHECK_EQ_U64(value_of(r.whole, 0), sum + helper_calls);
	run_free(&r);
}

TEST(thousand_short_processes)
{
	/* pcwork fork 1000: each child makes 3 calls and _exits. */
	char *argv[] = { (char *)pcwork(), "fork", "1000", "3", NULL };
	struct run r;
	uint64_t b;
	size_t nr;

	require_tracepoints();
	b = baseline();
	run_tree(&r, argv);
	nr = perfctr_tree__nr_processes(r.tree);
	CHECK_EQ_INT(nr, 1001);
	for (size_t p = 1; p < nr; p++)
		if (self_of(r.tree, p) != 3) {
			CHECK_EQ_U64(self_of(r.tree, p), 3);
			break;
		}
	CHECK_EQ_U64(subtree_of(r.tree, 0), 3000 + b);
	CHECK_EQ_U64(value_of(r.whole, 0), 3000 + b + helper_calls);
	run_free(&r);
}

TEST(exit_status_and_signals_pass_through)
{
	char *argv[] = { (char *)pcwork(), "kill", "15", NULL };
	struct perfctr_tree_node node = { .sz = sizeof(node) };
	struct run r;
	int st = -1;

	require_tracepoints();
	run_tree(&r, argv);
	CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == 15);
	/* perfctr_target__wait() answers with what the tree reaped. */
	CHECK_EQ_INT(perfctr_target__wait(r.target, &st), 0);
	CHECK_EQ_INT(st, r.status);
	REQUIRE(perfctr_tree__process(r.tree, 0, &node) == 0);
	CHECK(WIFSIGNALED(node.exit_status));
	run_free(&r);
}

TEST(bad_arguments)
{
	struct perfctr_session *s = session_with("task-clock", 0);
	struct perfctr_target *self = perfctr_target__new_self();

	CHECK(perfctr_tree__new(NULL, self, NULL) == NULL && errno == EINVAL);
	CHECK(perfctr_tree__new(s, self, NULL) == NULL && errno == EINVAL);
	CHECK_EQ_INT(perfctr_tree__poll(NULL), -EINVAL);
	CHECK_EQ_INT(perfctr_tree__nr_processes(NULL), 0);
	perfctr_target__delete(self);
	perfctr_session__delete(s);
}

/*
 * LeakSanitizer cannot run in a traced task (its checker stops the world
 * with ptrace, which the tree holds): the workloads of a sanitizer build
 * leave it off.  This program read its own options at start, so its own
 * leak check stays on.
 */
__attribute__((constructor)) static void workloads_without_lsan(void)
{
	const char *old = getenv("ASAN_OPTIONS");
	char opts[1024];

	snprintf(opts, sizeof(opts), "%s%sdetect_leaks=0", old ? old : "",
		 old && *old ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
}

TEST_MAIN(TEST_CASE(concurrent_children_exact_20_runs),
	  TEST_CASE(threads_that_end_early_keep_their_counts),
	  TEST_CASE(thousand_short_processes),
	  TEST_CASE(exit_status_and_signals_pass_through),
	  TEST_CASE(bad_arguments))
