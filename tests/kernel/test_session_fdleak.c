// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * No file descriptor leaks: 10,000 session life cycles in one process,
 * with successful attaches, failed strict attaches and command targets.
 * task-clock, a software event, keeps each cycle cheap (closing the last
 * fd of a tracepoint costs 30-50 ms, docs/kernel-notes.md 5).
 */
#include "session_util.h"

enum { CYCLES = 10000 };

TEST(ten_thousand_session_cycles)
{
	struct perfctr_evlist *list = perfctr_evlist__new();
	struct perfctr_target *self = perfctr_target__new_self();
	int before, after, failures = 0;

	REQUIRE(list && self);
	REQUIRE(perfctr_evlist__parse(list, "{task-clock,context-switches},page-faults",
				      NULL, NULL) == 3);
	before = count_open_fds();
	REQUIRE(before > 0);
	for (int i = 0; i < CYCLES; i++) {
		struct perfctr_session *s = perfctr_session__new(NULL);

		if (!s || perfctr_session__add_evlist(s, list) != 3 ||
		    perfctr_session__attach(s, self) ||
		    perfctr_session__start(s) || perfctr_session__read(s) ||
		    perfctr_session__detach(s))
			failures++;
		perfctr_session__delete(s);
	}
	after = count_open_fds();
	CHECK_EQ_INT(failures, 0);
	CHECK_EQ_INT(after, before);
	perfctr_evlist__delete(list);
	perfctr_target__delete(self);
}

TEST(delete_while_attached_closes_everything)
{
	struct perfctr_target *self = perfctr_target__new_self();
	int before;

	REQUIRE(self);
	before = count_open_fds();
	for (int i = 0; i < 1000; i++) {
		struct perfctr_session *s = perfctr_session__new(NULL);

		REQUIRE(s);
		REQUIRE(perfctr_session__add_events(s, "{task-clock,cpu-clock}", NULL) == 2);
		REQUIRE(perfctr_session__attach(s, self) == 0);
		perfctr_session__delete(s);	/* never detached */
	}
	CHECK_EQ_INT(count_open_fds(), before);
	perfctr_target__delete(self);
}

TEST(failed_attaches_leave_nothing_open)
{
	struct perfctr_target *gone;
	struct workload w;
	int before;

	workload_spawn(&w, NULL, NULL);
	gone = perfctr_target__new_thread(w.pid);
	REQUIRE(gone);
	CHECK_EQ_INT(workload_finish(&w), 0);
	before = count_open_fds();
	for (int i = 0; i < 1000; i++) {
		struct perfctr_session *s = perfctr_session__new(NULL);

		REQUIRE(s);
		REQUIRE(perfctr_session__add_events(s, "task-clock,{cpu-clock,page-faults}",
						    NULL) == 3);
		CHECK_EQ_INT(perfctr_session__attach(s, gone), -ESRCH);
		perfctr_session__delete(s);
	}
	CHECK_EQ_INT(count_open_fds(), before);
	perfctr_target__delete(gone);
}

TEST(command_targets_leave_nothing_open)
{
	char *argv[] = { (char *)test_build_path("tests/workload/pcwork"), "exit", "0",
			 NULL };
	int before = count_open_fds();

	/* 40: each one forks and execs; a leak shows after the first. */
	for (int i = 0; i < 40; i++) {
		struct perfctr_target *t = perfctr_target__new_command(argv, NULL);
		struct perfctr_session *s = perfctr_session__new(NULL);

		REQUIRE(t && s);
		REQUIRE(perfctr_session__add_events(s, "task-clock", NULL) == 1);
		REQUIRE(perfctr_session__attach(s, t) == 0);
		if (i % 2) {	/* every other one is never started */
			CHECK_EQ_INT(perfctr_target__start(t), 0);
			CHECK_EQ_INT(perfctr_target__wait(t, NULL), 0);
		}
		perfctr_session__delete(s);
		perfctr_target__delete(t);
	}
	CHECK_EQ_INT(count_open_fds(), before);
}

TEST_MAIN(TEST_CASE(ten_thousand_session_cycles),
	  TEST_CASE(delete_while_attached_closes_everything),
	  TEST_CASE(failed_attaches_leave_nothing_open),
	  TEST_CASE(command_targets_leave_nothing_open))
