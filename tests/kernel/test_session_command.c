// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Sessions on other processes: a command held before exec (counting from
 * its exec, inherited over fork, threads and exec), a running process
 * attached to (counting from the attach on), and final counts that stay
 * readable after the target has exited.  Every count is exact: the
 * workload's own getppid calls (none in a plain build; the sanitizers'
 * exit-time leak check makes some) are measured first and added.
 */
#include "session_util.h"

static const char *pcwork(void)
{
	return test_build_path("tests/workload/pcwork");
}

/* getppid calls of a pcwork process that does nothing but exit normally. */
static uint64_t measure_baseline(void)
{
	char *argv[] = { (char *)pcwork(), "getppid", "0", NULL };
	struct perfctr_session *s = session_with(TP_GETPPID, 0);
	struct perfctr_target *t = perfctr_target__new_command(argv, NULL);
	int status = -1;
	uint64_t calls;

	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_target__start(t) == 0);
	REQUIRE(perfctr_target__wait(t, &status) == 0 && status == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	calls = value_of(s, 0);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
	return calls;
}

static uint64_t baseline(void)
{
	static uint64_t calls = UINT64_MAX;

	if (calls == UINT64_MAX) {
		calls = measure_baseline();
		/* Stable, or nothing here can be exact. */
		REQUIRE(measure_baseline() == calls);
	}
	return calls;
}

TEST(command_inherits_fork_threads_exec)
{
	char *argv[] = { (char *)pcwork(), "getppid", "1000", "threads", "3", "1000",
			 "fork", "2", "1000", "exec", "getppid", "1000", NULL };
	struct perfctr_session *s = session_with(TP_GETPPID "," TP_EXECVE, 0);
	struct perfctr_target *t = perfctr_target__new_command(argv, NULL);
	int status = -1;

	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	/* Held: a start now must not count the wait or the exec itself. */
	CHECK_EQ_INT(perfctr_session__start(s), 0);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	/* main + 3 threads + 2 children + after the exec */
	CHECK_EQ_U64(value_of(s, 0), 7000 + baseline());
	/* Counting starts at the first exec: only pcwork's own counts. */
	CHECK_EQ_U64(value_of(s, 1), 1);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(command_exit_keeps_final_counts)
{
	char *argv[] = { (char *)pcwork(), "getppid", "2500", "exit", "3", NULL };
	struct perfctr_session *s = session_with("{task-clock," TP_GETPPID "}", 0);
	struct perfctr_target *t = perfctr_target__new_command(argv, NULL);
	struct perfctr_count c;
	int status = -1;

	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK_EQ_INT(WEXITSTATUS(status), 3);
	/* Reaped: the counters are still open and readable. */
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 1), 2500 + baseline());
	CHECK_EQ_INT(perfctr_session__count(s, 0, &c), 0);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_OK);
	CHECK(c.value > 0);
	/* Start and stop on an exited target do not break anything. */
	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	CHECK_EQ_INT(perfctr_session__start(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 1), 2500 + baseline());
	CHECK_EQ_INT(perfctr_session__detach(s), 0);
	CHECK_EQ_U64(value_of(s, 1), 2500 + baseline());
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(command_stop_and_start_after_exec)
{
	/* The session can pause a running command: nothing is counted
	 * between stop and start.  pcwork waits for a line between its two
	 * phases, and a third phase runs after the session is stopped. */
	char *argv[] = { (char *)pcwork(), "getppid", "100", "ready", NULL, "wait",
			 "getppid", "20", NULL };
	char flag[] = "/tmp/perfctr-cmd-XXXXXX";
	PERFCTR_OPTS(perfctr_command_opts, opts);
	struct perfctr_session *s = session_with(TP_GETPPID, 0);
	struct perfctr_target *t;
	int in[2], fd, status = -1;

	fd = mkstemp(flag);
	REQUIRE(fd >= 0);
	close(fd);
	unlink(flag);
	argv[4] = flag;
	REQUIRE(pipe(in) == 0);
	opts.stdin_fd = in[0];
	t = perfctr_target__new_command(argv, &opts);
	close(in[0]);
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	for (int i = 0; i < 10000 && access(flag, F_OK); i++)
		usleep(1000);
	unlink(flag);
	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 100);
	(void)!write(in[1], "go\n", 3);
	close(in[1]);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK_EQ_INT(status, 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 100);	/* the last 20 were not counted */
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(command_enable_on_attach_counts_from_exec)
{
	char *argv[] = { (char *)pcwork(), "getppid", "31", NULL };
	struct perfctr_session *s = session_with(TP_GETPPID "," TP_EXECVE,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_target *t = perfctr_target__new_command(argv, NULL);

	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	CHECK_EQ_INT(perfctr_target__wait(t, NULL), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 31 + baseline());
	CHECK_EQ_U64(value_of(s, 1), 0);	/* its own execve is before */
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(attach_to_running_process_counts_from_attach)
{
	char *pre[] = { "getppid", "500", NULL };
	char *post[] = { "getppid", "1000", "threads", "2", "1000", "fork", "2", "1000",
			 "exec", "getppid", "1000", NULL };
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	struct perfctr_target *t;
	struct workload w;
	int status;

	workload_spawn(&w, pre, post);
	t = perfctr_target__new_process(w.pid);
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ_U64(perfctr_target__nr_units(t), 1);
		CHECK_EQ_INT(perfctr_session__attach(s, t), 0);
	}
	status = workload_finish(&w);
	CHECK_EQ_INT(status, 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	/* not the 500 before the attach; the rest, inherited, exactly */
	CHECK_EQ_U64(value_of(s, 0), 6000 + baseline());
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(attach_to_process_that_is_gone)
{
	struct perfctr_session *s = session_with(TP_GETPPID, 0);
	struct perfctr_target *t;
	struct workload w;

	workload_spawn(&w, NULL, NULL);
	t = perfctr_target__new_process(w.pid);
	REQUIRE(t);
	CHECK_EQ_INT(workload_finish(&w), 0);	/* exited and reaped */
	CHECK_EQ_INT(perfctr_session__attach(s, t), -ESRCH);
	CHECK_EQ_U64(perfctr_session__nr_units(s), 0);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(attach_again_to_another_target)
{
	char *a1[] = { (char *)pcwork(), "getppid", "300", NULL };
	char *a2[] = { (char *)pcwork(), "getppid", "45", NULL };
	struct perfctr_session *s = session_with(TP_GETPPID, 0);
	struct perfctr_target *t1 = perfctr_target__new_command(a1, NULL);
	struct perfctr_target *t2 = perfctr_target__new_command(a2, NULL);

	REQUIRE(t1 && t2);
	REQUIRE(perfctr_session__attach(s, t1) == 0);
	CHECK_EQ_INT(perfctr_target__start(t1), 0);
	CHECK_EQ_INT(perfctr_target__wait(t1, NULL), 0);
	CHECK_EQ_INT(perfctr_session__detach(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 300 + baseline());
	REQUIRE(perfctr_session__attach(s, t2) == 0);
	CHECK_EQ_INT(perfctr_target__start(t2), 0);
	CHECK_EQ_INT(perfctr_target__wait(t2, NULL), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	CHECK_EQ_U64(value_of(s, 0), 345 + 2 * baseline());
	CHECK_EQ_U64(unit_value_of(s, 0, 0), 45 + baseline());
	perfctr_session__delete(s);	/* detaches */
	perfctr_target__delete(t1);
	perfctr_target__delete(t2);
}

/* The example program of the public API counts its own calls exactly
 * (it exits 0 only then) and says so. */
TEST(example_count_self)
{
	const char *example = test_build_path("examples/count-self");
	char *argv[] = { (char *)example, "4242", NULL };
	char buf[256] = "";
	struct perfctr_target *t;
	int out[2], status = -1;
	ssize_t n, len = 0;

	require_tracepoints();
	if (access(example, X_OK))
		test_skip("examples/count-self is not built here");
	REQUIRE(pipe(out) == 0);
	{
		PERFCTR_OPTS(perfctr_command_opts, opts, .stdout_fd = out[1]);

		t = perfctr_target__new_command(argv, &opts);
	}
	close(out[1]);
	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	while ((n = read(out[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(out[0]);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK_EQ_INT(status, 0);
	buf[len] = '\0';
	CHECK_STR(buf, "syscalls:sys_enter_getppid: 4242 (ran 100% of the time)\n");
	perfctr_target__delete(t);
}

TEST_MAIN(TEST_CASE(command_inherits_fork_threads_exec),
	  TEST_CASE(command_exit_keeps_final_counts),
	  TEST_CASE(command_stop_and_start_after_exec),
	  TEST_CASE(command_enable_on_attach_counts_from_exec),
	  TEST_CASE(attach_to_running_process_counts_from_attach),
	  TEST_CASE(attach_to_process_that_is_gone),
	  TEST_CASE(attach_again_to_another_target),
	  TEST_CASE(example_count_self))
