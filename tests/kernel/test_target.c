// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Targets on their own: units of each kind, CPU lists, the held command
 * (release, exit status, exec failures told apart).  Counting through
 * targets is in test_session*.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/target-internal.h"
#include "perfctr/target.h"
#include "test.h"

static const char *pcwork(void)
{
	return test_build_path("tests/workload/pcwork");
}

TEST(cpus_all_online)
{
	struct perfctr_target *t = perfctr_target__new_cpus(NULL);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t tid;
	int cpu;

	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__kind(t), PERFCTR_TARGET_CPUS);
	CHECK_EQ_INT(perfctr_target__pid(t), -1);
	CHECK_EQ_U64(perfctr_target__nr_units(t), online);
	for (size_t u = 0; u < perfctr_target__nr_units(t); u++) {
		CHECK_EQ_INT(perfctr_target__unit(t, u, &tid, &cpu), 0);
		CHECK_EQ_INT(tid, -1);
		CHECK(cpu >= 0);
	}
	CHECK_EQ_INT(perfctr_target__unit(t, online, &tid, &cpu), -EINVAL);
	perfctr_target__delete(t);

	t = perfctr_target__new_cpus("");
	REQUIRE(t);
	CHECK_EQ_U64(perfctr_target__nr_units(t), online);
	perfctr_target__delete(t);
}

TEST(cpus_list_and_errors)
{
	struct perfctr_target *t = perfctr_target__new_cpus("0");
	pid_t tid;
	int cpu;

	REQUIRE(t);
	CHECK_EQ_U64(perfctr_target__nr_units(t), 1);
	CHECK_EQ_INT(perfctr_target__unit(t, 0, &tid, &cpu), 0);
	CHECK_EQ_INT(cpu, 0);
	perfctr_target__delete(t);

	errno = 0;
	CHECK(!perfctr_target__new_cpus("0-"));
	CHECK_EQ_INT(errno, EINVAL);
	errno = 0;
	CHECK(!perfctr_target__new_cpus("4095"));	/* not online here */
	CHECK_EQ_INT(errno, ENODEV);
}

TEST(self_is_this_thread)
{
	struct perfctr_target *t = perfctr_target__new_self();
	pid_t tid;
	int cpu;

	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__kind(t), PERFCTR_TARGET_SELF);
	CHECK_EQ_INT(perfctr_target__pid(t), (pid_t)syscall(SYS_gettid));
	CHECK_EQ_U64(perfctr_target__nr_units(t), 1);
	CHECK_EQ_INT(perfctr_target__unit(t, 0, &tid, &cpu), 0);
	CHECK_EQ_INT(tid, (pid_t)syscall(SYS_gettid));
	CHECK_EQ_INT(cpu, -1);
	CHECK_EQ_INT(perfctr_target__wait(t, NULL), -ECHILD);
	perfctr_target__delete(t);
}

TEST(thread_missing_is_esrch)
{
	errno = 0;
	/* Beyond PID_MAX_LIMIT (2^22): no task can have this id. */
	CHECK(!perfctr_target__new_thread((1 << 22) + 12345));
	CHECK_EQ_INT(errno, ESRCH);
	errno = 0;
	CHECK(!perfctr_target__new_process((1 << 22) + 12345));
	CHECK_EQ_INT(errno, ESRCH);
	errno = 0;
	CHECK(!perfctr_target__new_thread(0));
	CHECK_EQ_INT(errno, EINVAL);
}

TEST(thread_on_cpus_units)
{
	pid_t me = (pid_t)syscall(SYS_gettid), tid;
	struct perfctr_target *t = perfctr_target__new_thread_on_cpus(me, "2,0");
	int cpu;

	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__kind(t), PERFCTR_TARGET_THREAD);
	CHECK_EQ_INT(perfctr_target__pid(t), me);
	REQUIRE(perfctr_target__nr_units(t) == 2);
	CHECK_EQ_INT(perfctr_target__unit(t, 0, &tid, &cpu), 0);
	CHECK_EQ_INT(tid, me);
	CHECK_EQ_INT(cpu, 0);
	CHECK_EQ_INT(perfctr_target__unit(t, 1, &tid, &cpu), 0);
	CHECK_EQ_INT(cpu, 2);
	perfctr_target__delete(t);
	errno = 0;
	CHECK(!perfctr_target__new_thread_on_cpus(me, "0-"));
	CHECK_EQ_INT(errno, EINVAL);
	errno = 0;
	CHECK(!perfctr_target__new_thread_on_cpus((1 << 22) + 12345, "0"));
	CHECK_EQ_INT(errno, ESRCH);
}

static pthread_barrier_t barrier;

static void *parked(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&barrier);	/* listed */
	pthread_barrier_wait(&barrier);	/* may go */
	return NULL;
}

TEST(process_has_a_unit_per_thread)
{
	enum { T = 3 };
	pthread_t th[T];
	struct perfctr_target *t;
	pid_t tid, seen[T + 1];
	int cpu, i;

	pthread_barrier_init(&barrier, NULL, T + 1);
	for (i = 0; i < T; i++)
		REQUIRE(pthread_create(&th[i], NULL, parked, NULL) == 0);
	pthread_barrier_wait(&barrier);
	t = perfctr_target__new_process(getpid());
	pthread_barrier_wait(&barrier);
	for (i = 0; i < T; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);
	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__kind(t), PERFCTR_TARGET_PROCESS);
	CHECK_EQ_INT(perfctr_target__pid(t), getpid());
	REQUIRE(perfctr_target__nr_units(t) == T + 1);
	for (i = 0; i <= T; i++) {
		CHECK_EQ_INT(perfctr_target__unit(t, i, &tid, &cpu), 0);
		CHECK_EQ_INT(cpu, -1);
		seen[i] = tid;
		for (int k = 0; k < i; k++)
			CHECK(seen[k] != tid);
	}
	CHECK_EQ_INT(seen[0], getpid());	/* the main thread first */
	perfctr_target__delete(t);
}

TEST(command_exit_status_passes_through)
{
	char *argv[] = { (char *)pcwork(), "exit", "7", NULL };
	struct perfctr_target *t = perfctr_target__new_command(argv, NULL);
	int status = -1;

	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__kind(t), PERFCTR_TARGET_COMMAND);
	CHECK(perfctr_target__pid(t) > 0);
	CHECK_EQ_U64(perfctr_target__nr_units(t), 1);
	/* Held: waiting now would never return. */
	CHECK_EQ_INT(perfctr_target__wait(t, &status), -EINVAL);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	CHECK_EQ_INT(perfctr_target__start(t), -EALREADY);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ_INT(WEXITSTATUS(status), 7);
	/* A second wait gives the same status. */
	status = -1;
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK_EQ_INT(WEXITSTATUS(status), 7);
	perfctr_target__delete(t);
}

TEST(command_killed_by_signal)
{
	char *argv[] = { (char *)pcwork(), "kill", "15", NULL };
	struct perfctr_target *t = perfctr_target__new_command(argv, NULL);
	int status = 0;

	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ_INT(WTERMSIG(status), SIGTERM);
	perfctr_target__delete(t);
}

TEST(command_found_in_path)
{
	char *argv[] = { "sh", "-c", "exit 3", NULL };
	struct perfctr_target *t = perfctr_target__new_command(argv, NULL);
	int status = 0;

	if (!t && errno == ENOENT)
		test_skip("no 'sh' in PATH");
	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ_INT(WEXITSTATUS(status), 3);
	perfctr_target__delete(t);
}

TEST(command_not_found_and_not_executable)
{
	char *missing[] = { "perfctr-no-such-command-here", NULL };
	char *missing_path[] = { "/nonexistent/dir/prog", NULL };
	char path[] = "/tmp/perfctr-noexec-XXXXXX";
	char *noexec[] = { path, NULL };
	char *dir[] = { "/tmp", NULL };
	int fd;

	errno = 0;
	CHECK(!perfctr_target__new_command(missing, NULL));
	CHECK_EQ_INT(errno, ENOENT);
	errno = 0;
	CHECK(!perfctr_target__new_command(missing_path, NULL));
	CHECK_EQ_INT(errno, ENOENT);

	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	chmod(path, 0644);
	errno = 0;
	/* root may read anything, but execute only what has an x bit */
	CHECK(!perfctr_target__new_command(noexec, NULL));
	CHECK_EQ_INT(errno, EACCES);
	unlink(path);

	errno = 0;
	CHECK(!perfctr_target__new_command(dir, NULL));
	CHECK_EQ_INT(errno, EACCES);
}

TEST(command_exec_failure_reported_by_start)
{
	char path[] = "/tmp/perfctr-badinterp-XXXXXX";
	char *argv[] = { path, NULL };
	static const char script[] = "#!/nonexistent/interpreter\n";
	struct perfctr_target *t;
	int fd, status = 0;

	/* Executable, so the checks before fork pass; execve() itself
	 * fails (ENOENT: the interpreter is missing) in the child. */
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, script, sizeof(script) - 1) == sizeof(script) - 1);
	close(fd);
	chmod(path, 0755);
	t = perfctr_target__new_command(argv, NULL);
	unlink(path);
	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__start(t), -ENOENT);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ_INT(WEXITSTATUS(status), 127);
	perfctr_target__delete(t);
}

TEST(command_stdout_redirected)
{
	char *argv[] = { (char *)pcwork(), "pid", NULL };
	struct perfctr_command_opts opts = { .sz = sizeof(opts), .stdin_fd = -1,
					     .stdout_fd = -1, .stderr_fd = -1 };
	struct perfctr_target *t;
	char buf[64] = "";
	int out[2], status = 0;
	ssize_t n;

	REQUIRE(pipe(out) == 0);
	opts.stdout_fd = out[1];
	t = perfctr_target__new_command(argv, &opts);
	close(out[1]);
	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	n = read(out[0], buf, sizeof(buf) - 1);
	close(out[0]);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	REQUIRE(n > 0);
	buf[n] = '\0';
	CHECK_EQ_INT(strtol(buf, NULL, 10), perfctr_target__pid(t));
	perfctr_target__delete(t);
}

TEST(command_zeroed_opts_inherit_stdio)
{
	/* A zeroed opts struct (PERFCTR_OPTS with nothing set) must not send
	 * the command's stdout to fd 0. */
	PERFCTR_OPTS(perfctr_command_opts, opts);
	char *argv[] = { (char *)pcwork(), "exit", "0", NULL };
	struct perfctr_target *t = perfctr_target__new_command(argv, &opts);
	int status = -1;

	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK_EQ_INT(status, 0);
	perfctr_target__delete(t);
}

TEST(command_deleted_while_held_never_runs)
{
	char path[] = "/tmp/perfctr-held-XXXXXX";
	char *argv[] = { (char *)pcwork(), "ready", path, NULL };
	struct perfctr_target *t;
	pid_t pid;
	int fd;

	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	unlink(path);
	t = perfctr_target__new_command(argv, NULL);
	REQUIRE(t);
	pid = perfctr_target__pid(t);
	perfctr_target__delete(t);
	/* Killed and reaped: the pid is gone and the workload never ran. */
	CHECK_EQ_INT(kill(pid, 0), -1);
	CHECK_EQ_INT(errno, ESRCH);
	CHECK(access(path, F_OK) != 0);
}

TEST(command_kill)
{
	char *argv[] = { (char *)pcwork(), "sleep", "10000", NULL };
	struct perfctr_target *t = perfctr_target__new_command(argv, NULL);
	int status = 0;

	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	CHECK_EQ_INT(perfctr_target__kill(t, SIGKILL), 0);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ_INT(WTERMSIG(status), SIGKILL);
	CHECK_EQ_INT(perfctr_target__kill(t, SIGKILL), -ESRCH);
	perfctr_target__delete(t);
}

/* The held child reads its command when it is released: what it runs is
 * what new_command() was given, whatever the caller did since (a fork
 * kept a copy; a child sharing our memory must have its own). */
TEST(command_arguments_and_environment_are_kept)
{
	char *script = strdup("exit $PCTEST_CODE");
	char *argv[] = { "sh", "-c", script, NULL };
	struct perfctr_target *t;
	int status = -1;

	REQUIRE(script);
	setenv("PCTEST_CODE", "5", 1);
	t = perfctr_target__new_command(argv, NULL);
	if (!t && errno == ENOENT)
		test_skip("no 'sh' in PATH");
	REQUIRE(t);
	memset(script, 'x', strlen(script));
	free(script);
	argv[2] = "exit 9";
	setenv("PCTEST_CODE", "9", 1);
	CHECK_EQ_INT(perfctr_target__start(t), 0);
	CHECK_EQ_INT(perfctr_target__wait(t, &status), 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ_INT(WEXITSTATUS(status), 5);
	perfctr_target__delete(t);
	unsetenv("PCTEST_CODE");
}

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

/* A signal to the held child takes its default action there: a handler
 * of ours never runs in the child (it would run in our memory). */
TEST(command_held_child_runs_no_handler_of_ours)
{
	char *argv[] = { (char *)pcwork(), "exit", "0", NULL };
	struct sigaction sa, old;
	struct perfctr_target *t;
	char state = 0;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR1, &sa, &old) == 0);
	usr1_seen = 0;
	t = perfctr_target__new_command(argv, NULL);
	REQUIRE(t);
	CHECK_EQ_INT(kill(perfctr_target__pid(t), SIGUSR1), 0);
	/* SIGUSR1's default action ends the child: a zombie until reaped.
	 * It must run to die, which a loaded machine may delay: up to 10 s. */
	for (i = 0; i < 2000; i++) {
		state = test_proc_state((int)perfctr_target__pid(t));
		if (state == 'Z' || state == '?')
			break;
		usleep(5000);
	}
	CHECK(state == 'Z');
	CHECK_EQ_INT(usr1_seen, 0);
	CHECK_EQ_INT(perfctr_target__start(t), -ECHILD);
	perfctr_target__delete(t);
	sigaction(SIGUSR1, &old, NULL);
}

/* Running or sleeping: neither gone nor a zombie waiting to be reaped. */
static bool task_alive(pid_t pid)
{
	char state = test_proc_state((int)pid);

	return state != '?' && state != 'Z' && state != 'X';
}

TEST(process_wait_for_a_process_we_did_not_fork)
{
	struct perfctr_target *t;
	int pipefd[2];
	pid_t child, grandchild = 0;

	/* A grandchild is not ours to reap: wait() must still see it end. */
	REQUIRE(pipe(pipefd) == 0);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		pid_t g = fork();

		if (g == 0) {
			usleep(50 * 1000);
			_exit(0);
		}
		(void)!write(pipefd[1], &g, sizeof(g));
		_exit(0);
	}
	REQUIRE(read(pipefd[0], &grandchild, sizeof(grandchild)) == sizeof(grandchild));
	waitpid(child, NULL, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	t = perfctr_target__new_process(grandchild);
	if (!t)	/* it may be gone already on a slow machine */
		test_skip("the grandchild ended before the target was made");
	CHECK_EQ_INT(perfctr_target__wait(t, NULL), 0);
	CHECK(!task_alive(grandchild));
	perfctr_target__delete(t);
}

TEST_MAIN(TEST_CASE(cpus_all_online),
	  TEST_CASE(cpus_list_and_errors),
	  TEST_CASE(self_is_this_thread),
	  TEST_CASE(thread_missing_is_esrch),
	  TEST_CASE(thread_on_cpus_units),
	  TEST_CASE(process_has_a_unit_per_thread),
	  TEST_CASE(command_exit_status_passes_through),
	  TEST_CASE(command_killed_by_signal),
	  TEST_CASE(command_found_in_path),
	  TEST_CASE(command_not_found_and_not_executable),
	  TEST_CASE(command_exec_failure_reported_by_start),
	  TEST_CASE(command_stdout_redirected),
	  TEST_CASE(command_zeroed_opts_inherit_stdio),
	  TEST_CASE(command_deleted_while_held_never_runs),
	  TEST_CASE(command_kill),
	  TEST_CASE(command_arguments_and_environment_are_kept),
	  TEST_CASE(command_held_child_runs_no_handler_of_ours),
	  TEST_CASE(process_wait_for_a_process_we_did_not_fork))
