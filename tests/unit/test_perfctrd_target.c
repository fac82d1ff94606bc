/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfctrd's reading of a request's target (src/perfctrd/target.c): the
 * pidfd's own answer and the /proc one agree for the process itself, a
 * thread of it and a child of another user; a reaped child's pidfd is
 * refused as exited whatever its pid names now; what is not a pidfd is
 * refused; the ownership check wants all three ids of each kind, and a
 * process that is not dumpable is the caller's only to count itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target.h"
#include "test.h"

static int pidfd_open(pid_t pid, unsigned int flags)
{
	long fd = syscall(SYS_pidfd_open, pid, flags);

	if (fd < 0 && errno == ENOSYS)
		test_skip("no pidfd_open(2) in this kernel");
	return (int)fd;
}

/* Both ways of reading @pidfd, which must agree; the first in @t. */
static int both(int pidfd, struct pd_task *t)
{
	struct pd_task p;
	int a = pd_task_of(pidfd, t), b = pd_task_of_proc(pidfd, &p);

	CHECK_EQ_INT(a, b);
	if (!a && !b) {
		CHECK_EQ_INT(t->pid, p.pid);
		CHECK_EQ_INT(t->tgid, p.tgid);
		/* /proc cannot tell for root (see target.h). */
		if (t->uid[1] != 0)
			CHECK_EQ_INT(t->dumpable, p.dumpable);
		CHECK(!memcmp(t->uid, p.uid, sizeof(p.uid)));
		CHECK(!memcmp(t->gid, p.gid, sizeof(p.gid)));
	}
	return a;
}

TEST(self)
{
	struct pd_task t;
	char why[128] = "";
	int fd = pidfd_open(getpid(), 0);

	REQUIRE(fd >= 0);
	CHECK_EQ_INT(both(fd, &t), 0);
	CHECK_EQ_INT(t.pid, getpid());
	CHECK_EQ_INT(t.uid[0], getuid());
	CHECK_EQ_INT(t.uid[1], geteuid());
	CHECK_EQ_INT(t.gid[0], getgid());
	CHECK_EQ_INT(pd_task_check_own(&t, getuid(), getgid(), -1,
				       why, sizeof(why)), 0);
	CHECK_EQ_INT(pd_task_check_own(&t, getuid() + 1, getgid(), -1,
				       why, sizeof(why)), -EACCES);
	CHECK(strstr(why, "is not the caller's") != NULL);
	CHECK_EQ_INT(pd_task_check_own(&t, getuid(), getgid() + 1, -1,
				       why, sizeof(why)), -EACCES);
	CHECK(pd_pidfd_alive(fd));
	close(fd);
}

struct sleeper {
	int wait_fd, ready_fd;
	pid_t tid;
};

static void *sleeper(void *arg)
{
	struct sleeper *sl = arg;
	char c;

	sl->tid = (pid_t)syscall(SYS_gettid);
	if (write(sl->ready_fd, "x", 1) == 1 && read(sl->wait_fd, &c, 1) < 0)
		return NULL;
	return NULL;
}

/* A thread's own pidfd (PIDFD_THREAD, Linux 6.9) names that thread. */
TEST(thread)
{
	int wake[2], ready[2], fd;
	struct sleeper sl;
	struct pd_task t;
	pthread_t th;
	char c;

	REQUIRE(pipe(wake) == 0 && pipe(ready) == 0);
	sl = (struct sleeper){ .wait_fd = wake[0], .ready_fd = ready[1] };
	REQUIRE(pthread_create(&th, NULL, sleeper, &sl) == 0);
	REQUIRE(read(ready[0], &c, 1) == 1);
	fd = pidfd_open(sl.tid, O_EXCL);
	if (fd >= 0) {
		CHECK_EQ_INT(both(fd, &t), 0);
		CHECK_EQ_INT(t.pid, sl.tid);
		CHECK(t.pid != getpid());
		close(fd);
	}
	CHECK(write(wake[1], "x", 1) == 1);
	pthread_join(th, NULL);
	if (fd < 0)
		test_skip("no thread pidfds (PIDFD_THREAD) here");
}

/* A child that gave up its ids for another user's: not the caller's,
 * read either way; once reaped, exited, whoever has its pid now. */
TEST(other_user_and_reaped)
{
	int go[2], done[2], fd;
	struct pd_task t;
	char why[128], c;
	pid_t child;

	test_require_root();
	REQUIRE(pipe(go) == 0 && pipe(done) == 0);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) ||
		    prctl(PR_SET_DUMPABLE, 1))
			_exit(1);
		if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	REQUIRE(read(done[0], &c, 1) == 1);
	fd = pidfd_open(child, 0);
	REQUIRE(fd >= 0);
	CHECK_EQ_INT(both(fd, &t), 0);
	CHECK_EQ_INT(t.pid, child);
	CHECK_EQ_INT(t.uid[2], 65534);
	CHECK_EQ_INT(pd_task_check_own(&t, 0, 0, -1, why, sizeof(why)), -EACCES);
	CHECK_EQ_INT(pd_task_check_own(&t, 65534, 65534, -1, why,
				       sizeof(why)), 0);
	CHECK(write(go[1], "x", 1) == 1);
	REQUIRE(waitpid(child, NULL, 0) == child);
	CHECK(!pd_pidfd_alive(fd));
	CHECK_EQ_INT(both(fd, &t), -ESRCH);
	close(fd);
}

TEST(not_a_pidfd)
{
	struct pd_task t;
	int p[2];

	REQUIRE(pipe(p) == 0);
	CHECK_EQ_INT(both(p[0], &t), -EBADF);
	CHECK(!pd_pidfd_alive(p[0]));
	CHECK(pd_fd_is(p[0], "anon_inode:[pidfd]") == false);
	close(p[0]);
	close(p[1]);
	CHECK_EQ_INT(both(p[0], &t), -EBADF);
}

/*
 * Not dumpable: this process counts itself (it is the peer of its own
 * socketpair), but a child of its, same ids, is refused to it.  A peer
 * that is not a socket is no one.  As root, in a child with another
 * user's ids, since /proc cannot tell a root process's dumpability.
 */
static void not_dumpable_here(void)
{
	int sv[2], go[2], self, kid;
	struct pd_task t;
	char why[128], c;
	pid_t child;

	REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
	REQUIRE(pipe(go) == 0);
	REQUIRE(prctl(PR_SET_DUMPABLE, 0) == 0);
	child = fork();
	if (child == 0) {
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	self = pidfd_open(getpid(), 0);
	kid = child > 0 ? pidfd_open(child, 0) : -1;
	REQUIRE(self >= 0 && kid >= 0);
	CHECK_EQ_INT(both(self, &t), 0);
	CHECK(!t.dumpable);
	CHECK_EQ_INT(t.tgid, getpid());
	CHECK_EQ_INT(pd_task_check_own(&t, getuid(), getgid(), sv[0], why,
				       sizeof(why)), 0);
	CHECK_EQ_INT(pd_task_check_own(&t, getuid(), getgid(), go[0], why,
				       sizeof(why)), -EACCES);
	CHECK_EQ_INT(both(kid, &t), 0);
	CHECK(!t.dumpable);
	CHECK_EQ_INT(pd_task_check_own(&t, getuid(), getgid(), sv[0], why,
				       sizeof(why)), -EACCES);
	CHECK(strstr(why, "is not dumpable") != NULL);
	REQUIRE(prctl(PR_SET_DUMPABLE, 1) == 0);
	CHECK_EQ_INT(both(self, &t), 0);
	CHECK(t.dumpable);
	CHECK(write(go[1], "x", 1) == 1);
	waitpid(child, NULL, 0);
	close(self);
	close(kid);
	close(sv[0]);
	close(sv[1]);
}

TEST(not_dumpable)
{
	pid_t child;
	int status;

	if (geteuid() != 0) {
		not_dumpable_here();
		return;
	}
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		not_dumpable_here();
		_exit(test_failed());
	}
	REQUIRE(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_MAIN(TEST_CASE(self), TEST_CASE(thread),
	  TEST_CASE(other_user_and_reaped), TEST_CASE(not_a_pidfd),
	  TEST_CASE(not_dumpable))
