/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The broker client's kept pidfd (sys/broker.c): a thread that asks the
 * broker to open events on itself keeps its own pidfd for its next
 * requests.  Against a perfctrd of the test's own with a policy for
 * root, the getppid tracepoint counts exactly: on the calling thread
 * with one pidfd kept however many opens; in a forked child, whose copy
 * names the parent's thread, the child's own calls; after the program
 * closed the kept descriptor and put a pipe under its number (the pipe
 * left alone); and a thread's pidfd is closed when the thread exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/broker.h"
#include "test.h"

static char dir[] = "/tmp/perfctr-broker-self-XXXXXX";
static pid_t broker_pid;
static uint64_t getppid_id;

static void stop_broker(void)
{
	char path[128];

	if (broker_pid > 0) {
		kill(broker_pid, SIGTERM);
		waitpid(broker_pid, NULL, 0);
	}
	snprintf(path, sizeof(path), "%s/perfctrd.conf", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/log", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sock", dir);
	unlink(path);
	rmdir(dir);
}

/* A broker of the test's own, started once. */
static void need_broker(void)
{
	static const char policy[] =
		"[rule root]\nusers = 0\n"
		"events = tracepoint:syscalls:sys_enter_getppid\n"
		"targets = own\nkernel = count\nmax_fds = 1000\n";
	char conf[128], sock[128], log[128];
	const char *perfctrd = test_build_path("perfctrd");
	long long id;
	FILE *f;
	int i;

	if (broker_pid)
		return;
	test_require_root();
	test_require_tracefs();
	if (access(perfctrd, X_OK))
		test_skip("%s is not built", perfctrd);
	id = test_tracepoint_id("syscalls:sys_enter_getppid");
	if (id < 0)
		test_skip("no syscalls:sys_enter_getppid tracepoint");
	getppid_id = (uint64_t)id;
	REQUIRE(mkdtemp(dir));
	atexit(stop_broker);
	snprintf(conf, sizeof(conf), "%s/perfctrd.conf", dir);
	snprintf(sock, sizeof(sock), "%s/sock", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	f = fopen(conf, "w");
	REQUIRE(f && fputs(policy, f) >= 0 && fclose(f) == 0);
	broker_pid = fork();
	REQUIRE(broker_pid >= 0);
	if (broker_pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		execl(perfctrd, "perfctrd", "-c", conf, "-s", sock, (char *)NULL);
		_exit(127);
	}
	/* The daemon's start (its own exec and policy load) waits for a
	 * loaded CPU too: up to 30 s. */
	for (i = 0; i < 3000 && access(sock, F_OK); i++)
		usleep(10000);
	REQUIRE(access(sock, F_OK) == 0);
	setenv("PERFCTR_BROKER_SOCKET", sock, 1);
}

/* The getppid tracepoint on the calling thread, through the broker. */
static int open_getppid(void)
{
	struct perf_event_attr attr;
	char why[256];
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = getppid_id;
	fd = pc_broker_open(&attr, 0, -1, -1, 0, why, sizeof(why));
	if (fd < 0)
		test_fail(__FILE__, __LINE__, "broker open: %s: %s",
			  strerror(-fd), why);
	return fd;
}

static uint64_t read_count(int fd)
{
	uint64_t v = ~0ull;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ull;
	return v;
}

/* How many of this process's descriptors read as @what. */
static int nr_fds_of(const char *what)
{
	char path[64], link[64];
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		n += !strncmp(link, what, strlen(what));
	}
	return n;
}

TEST(kept_pidfd_counts_exactly)
{
	int fds[5], i;

	need_broker();
	for (i = 0; i < 5; i++) {
		fds[i] = open_getppid();
		REQUIRE(fds[i] >= 0);
	}
	do_getppid(1000);
	for (i = 0; i < 5; i++) {
		CHECK_EQ_U64(read_count(fds[i]), 1000);
		close(fds[i]);
	}
	/* Five opens, one pidfd: kept, not leaked. */
	CHECK_EQ_INT(nr_fds_of("anon_inode:[pidfd]"), 1);
}

TEST(forked_child_counts_itself)
{
	int fd, status;
	pid_t child;

	need_broker();
	fd = open_getppid();	/* the parent's pidfd is kept */
	REQUIRE(fd >= 0);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		int cfd = open_getppid();
		bool ok;

		do_getppid(500);
		ok = cfd >= 0 && read_count(cfd) == 500 &&
		     nr_fds_of("anon_inode:[pidfd]") == 1;
		_exit(ok ? 0 : 1);
	}
	REQUIRE(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The child's calls were not the parent's. */
	CHECK_EQ_U64(read_count(fd), 0);
	close(fd);
}

/* The number of this process's pidfd, or -1. */
static int find_pidfd(void)
{
	char path[64], link[64];
	int fd;

	for (fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		if (!strcmp(link, "anon_inode:[pidfd]"))
			return fd;
	}
	return -1;
}

TEST(descriptor_reused_by_the_program)
{
	int fd, kept, p[2];
	struct stat st;

	need_broker();
	close(open_getppid());
	kept = find_pidfd();
	if (kept < 0)
		test_skip("no pidfd kept (pidfds are not on pidfs here)");
	REQUIRE(pipe(p) == 0);
	/* The program closes what it does not know, and the number comes
	 * back for a file of its own. */
	REQUIRE(dup2(p[0], kept) == kept);
	fd = open_getppid();
	REQUIRE(fd >= 0);
	do_getppid(300);
	CHECK_EQ_U64(read_count(fd), 300);
	close(fd);
	CHECK(fstat(kept, &st) == 0 && S_ISFIFO(st.st_mode));
	close(kept);
	close(p[0]);
	close(p[1]);
}

static void *thread_opens(void *arg)
{
	int fd = open_getppid();

	(void)arg;
	if (fd < 0)
		return (void *)1;
	do_getppid(200);
	if (read_count(fd) != 200)
		return (void *)1;
	close(fd);
	return NULL;
}

TEST(thread_exit_closes_its_pidfd)
{
	pthread_t t;
	void *ret;
	int before;

	need_broker();
	close(open_getppid());
	before = nr_fds_of("anon_inode:[pidfd]");
	REQUIRE(pthread_create(&t, NULL, thread_opens, NULL) == 0);
	REQUIRE(pthread_join(t, &ret) == 0);
	CHECK(ret == NULL);
	CHECK_EQ_INT(nr_fds_of("anon_inode:[pidfd]"), before);
}

TEST_MAIN(TEST_CASE(kept_pidfd_counts_exactly),
	  TEST_CASE(forked_child_counts_itself),
	  TEST_CASE(descriptor_reused_by_the_program),
	  TEST_CASE(thread_exit_closes_its_pidfd))
