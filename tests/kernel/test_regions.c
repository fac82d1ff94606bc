// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Kernel tier: region markers (perfctr/region.h) with exact events.
 * PERFCTR_EVENTS is the getppid tracepoint, which the markers themselves
 * never trigger: the measured cost of an empty pair is exactly 0, and
 * every region's count is exactly the calls made inside it, per thread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfctr/perfctr.h"
#include "test.h"

static void setup(void)
{
	static bool done;

	test_require_tracefs();
	if (access("/sys/kernel/tracing/events/syscalls/sys_enter_getppid", R_OK) &&
	    access("/sys/kernel/debug/tracing/events/syscalls/sys_enter_getppid", R_OK))
		test_skip("no syscalls:sys_enter_getppid tracepoint");
	if (!done) {
		perfctr_set_print(NULL);
		/* Read at the first begin of the process. */
		setenv("PERFCTR_EVENTS", "syscalls:sys_enter_getppid", 1);
		setenv("PERFCTR_REGIONS_FILE", "/dev/null", 1);
		done = true;
	}
}

static void calls(int n)
{
	int i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static void *other_thread(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 3; i++) {
		perfctr_region_begin("outer");
		calls(7);
		perfctr_region_end("outer");
	}
	return NULL;
}

/* The report as text. */
static char *report(void)
{
	char path[] = "/tmp/test-regions-XXXXXX";
	char *text = NULL;
	size_t size = 0;
	FILE *mem;
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	close(fd);
	REQUIRE(perfctr_region_write(path) == 0);
	mem = open_memstream(&text, &size);
	REQUIRE(mem);
	CHECK(perfctr_region_report(path, mem) >= 2);
	fclose(mem);
	unlink(path);
	return text;
}

TEST(nested_regions_count_exactly)
{
	char *text, want[256];
	pthread_t th;
	int i;

	setup();
	for (i = 0; i < 10; i++) {
		REQUIRE(perfctr_region_begin("outer") == 0);
		calls(100);
		REQUIRE(perfctr_region_begin("inner") == 0);
		calls(5);
		REQUIRE(perfctr_region_end("inner") == 0);
		REQUIRE(perfctr_region_end("outer") == 0);
	}
	REQUIRE(pthread_create(&th, NULL, other_thread, NULL) == 0);
	pthread_join(th, NULL);
	text = report();
	CHECK(strstr(text, "costs 0.0 syscalls:sys_enter_getppid") != NULL);
	/* outer: 10 calls of 105 here, 3 of 7 in the other thread. */
	snprintf(want, sizeof(want), "%-10d %12d %26d\n", (int)syscall(SYS_gettid),
		 10, 1050);
	CHECK(strstr(text, want) != NULL);
	snprintf(want, sizeof(want), "%-10s %12d %26d\n", "total", 13, 1071);
	if (!strstr(text, want))
		test_fail(__FILE__, __LINE__, "no '%s' in:\n%s", want, text);
	snprintf(want, sizeof(want), "%-10s %12d %26d\n", "total", 10, 50);
	CHECK(strstr(text, want) != NULL);
	free(text);
}

TEST(end_must_match_innermost)
{
	setup();
	REQUIRE(perfctr_region_begin("a") == 0);
	REQUIRE(perfctr_region_begin("b") == 0);
	CHECK_EQ_INT(perfctr_region_end("a"), -EINVAL);
	CHECK_EQ_INT(perfctr_region_end("b"), 0);
	CHECK_EQ_INT(perfctr_region_end("a"), 0);
	CHECK_EQ_INT(perfctr_region_end("a"), -EINVAL);	/* none open */
	CHECK_EQ_INT(perfctr_region_begin(NULL), -EINVAL);
}

TEST(report_rejects_other_files)
{
	CHECK_EQ_INT(perfctr_region_report("/etc/passwd", stdout), -EINVAL);
	CHECK(perfctr_region_report("/nonexistent/file", stdout) == -ENOENT);
}

/* The fds of this process that point at a perf_event, in @fds (at most
 * @max); each checked for FD_CLOEXEC. */
static int perf_fds(int *fds, int max)
{
	char link[300], target[128];
	struct dirent *de;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	REQUIRE(dir);
	while ((de = readdir(dir))) {
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (strstr(target, "perf_event") && n < max)
			fds[n++] = atoi(de->d_name);
	}
	closedir(dir);
	return n;
}

/*
 * A program that counts regions, writes its results and then runs another
 * program: the new program holds no fd of ours.  Its fds are listed by
 * ls(1) itself, through a pipe that becomes its stdout.
 */
TEST(exec_inherits_no_fd_of_ours)
{
	char out[16384], path[] = "/tmp/test-regions-XXXXXX", self_dir[32];
	int fds[64], nr, i, status, pipefd[2], fd;
	size_t len = 0;
	ssize_t r;
	pid_t pid;

	setup();
	REQUIRE(perfctr_region_begin("exec") == 0);
	calls(3);
	/* The thread's counters are open: the test can fail. */
	nr = perf_fds(fds, 64);
	if (!nr)
		test_skip("the regions count no event here (no perf_event fd open)");
	for (i = 0; i < nr; i++)
		CHECK(fcntl(fds[i], F_GETFD) & FD_CLOEXEC);
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	CHECK_EQ_INT(perfctr_region_write(path), 0);
	REQUIRE(pipe2(pipefd, O_CLOEXEC) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (!pid) {
		/* dup2() leaves the new stdout without close-on-exec. */
		if (dup2(pipefd[1], 1) < 0)
			_exit(126);
		execl("/bin/ls", "ls", "-l", "/proc/self/fd", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while ((r = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = '\0';
	close(pipefd[0]);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(strstr(out, " 0 -> ") != NULL);	/* ls listed its fds */
	snprintf(self_dir, sizeof(self_dir), "/proc/%d/", (int)getpid());
	if (strstr(out, "perf_event") || strstr(out, path) ||
	    strstr(out, self_dir))
		test_fail(__FILE__, __LINE__, "the exec'ed program holds fds of ours:\n%s",
			  out);
	CHECK_EQ_INT(perfctr_region_end("exec"), 0);
	unlink(path);
}

/* Without PERFCTR_REGIONS_FILE, the tables go to stderr at exit(3). */
TEST(exit_prints_the_tables_on_stderr)
{
	char out[16384], want[128];
	int pipefd[2], status;
	size_t len = 0;
	ssize_t r;
	pid_t pid;

	setup();
	REQUIRE(perfctr_region_begin("at-exit") == 0);
	calls(4);
	REQUIRE(perfctr_region_end("at-exit") == 0);
	REQUIRE(pipe2(pipefd, O_CLOEXEC) == 0);
	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0);
	if (!pid) {
		if (dup2(pipefd[1], 2) < 0)
			_exit(126);
		unsetenv("PERFCTR_REGIONS_FILE");
		exit(0);
	}
	close(pipefd[1]);
	while ((r = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = '\0';
	close(pipefd[0]);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(want, sizeof(want), "%-10s %12d %26d\n", "total", 1, 4);
	if (!strstr(out, "\nregion 'at-exit'\n") || !strstr(out, want))
		test_fail(__FILE__, __LINE__, "no table of 'at-exit' in:\n%s", out);
}

TEST_MAIN(TEST_CASE(nested_regions_count_exactly),
	  TEST_CASE(end_must_match_innermost),
	  TEST_CASE(report_rejects_other_files),
	  TEST_CASE(exec_inherits_no_fd_of_ours),
	  TEST_CASE(exit_prints_the_tables_on_stderr))
