/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Cgroups for kernel tests: made under the cgroup2 mount (removed at exit
 * and before each case), and members: children that move themselves into
 * a cgroup and make a known number of getppid calls once released.
 * Include once per test program.
 */
#ifndef PERFCTR_TESTS_CGROUP_UTIL_H
#define PERFCTR_TESTS_CGROUP_UTIL_H

#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session_util.h"
#include "sys/cgroup.h"

static char mnt[4096];
static char made[8][4200];
static int nr_made;
/* Members spawned and not waited for yet: a failed case leaves them
 * blocked in their cgroup, which they would keep busy. */
static pid_t spawned[16];
static int nr_spawned;

static void remove_made(void);

static void require_cgroup2(void)
{
	int err;

	remove_made();	/* what an aborted case left */
	test_require_root();
	err = pc_cgroup2_mount(NULL, mnt, sizeof(mnt));
	if (err)
		test_skip("no cgroup2 file system mounted: %s", strerror(-err));
}

static void remove_made(void)
{
	while (nr_spawned > 0) {
		pid_t pid = spawned[--nr_spawned];

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	/* Children before parents: they were made parents first. */
	while (nr_made > 0)
		rmdir(made[--nr_made]);
}

/*
 * @rel with this process's pid on its first component: "perfctr-test-p/c"
 * is "perfctr-test-p-PID/c".  Two runs of the suite at once (two work
 * trees, make check beside make check-stress) then never share a cgroup,
 * where the other's members made the counts wrong and rmdir fail with
 * EBUSY.  A name already tagged is returned as it is.  The result lives
 * until 16 more calls.
 */
static const char *cgroup_name(const char *rel)
{
	static char buf[16][512];
	static unsigned int next;
	char *b = buf[next++ % 16], tag[24];
	size_t first = strcspn(rel, "/"), n;

	n = (size_t)snprintf(tag, sizeof(tag), "-%d", (int)getpid());
	if (first >= n && !memcmp(rel + first - n, tag, n)) {
		snprintf(b, sizeof(buf[0]), "%s", rel);
		return b;
	}
	snprintf(b, sizeof(buf[0]), "%.*s%s%s", (int)first, rel, tag,
		 rel + first);
	return b;
}

/* Make cgroup cgroup_name(@rel) (under the mount) and return its full
 * path; it is removed at exit, and before the next case if this one
 * aborts. */
static const char *make_cgroup(const char *rel)
{
	static bool registered;
	char *path;

	REQUIRE(nr_made < 8);
	path = made[nr_made];
	snprintf(path, sizeof(made[0]), "%s/%s", mnt, cgroup_name(rel));
	rmdir(path);	/* left by a dead run that had our pid */
	if (mkdir(path, 0755)) {
		if (errno == EROFS || errno == EACCES || errno == EPERM)
			test_skip("cannot create a cgroup under %s: %s", mnt,
				  strerror(errno));
		test_fail(__FILE__, __LINE__, "mkdir %s: %s", path,
			  strerror(errno));
		test_abort();
	}
	nr_made++;
	if (!registered) {
		atexit(remove_made);
		registered = true;
	}
	return path;
}

struct member {
	pid_t pid;
	int go_fd;
};

/*
 * A child that moves itself into cgroup @dir (through cgroup.procs, where
 * "0" means the writer) and, once released, makes @calls getppid calls.
 * It is in the cgroup and idle when this returns.
 */
static void member_spawn(struct member *m, const char *dir, long calls)
{
	int go[2], ready[2];
	char path[4300], c;

	REQUIRE(pipe(go) == 0 && pipe(ready) == 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	m->pid = fork();
	REQUIRE(m->pid >= 0);
	if (m->pid == 0) {
		int fd = open(path, O_WRONLY);

		close(go[1]);
		close(ready[0]);
		if (fd < 0 || write(fd, "0\n", 2) != 2)
			_exit(2);
		close(fd);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		do_getppid(calls);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	if (nr_spawned < 16)
		spawned[nr_spawned++] = m->pid;
	REQUIRE(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	m->go_fd = go[1];
}

static void member_release(struct member *m)
{
	CHECK(write(m->go_fd, "g", 1) == 1);
	close(m->go_fd);
}

static void member_wait(struct member *m)
{
	int status = -1;

	for (int i = 0; i < nr_spawned; i++)
		if (spawned[i] == m->pid)
			spawned[i] = spawned[--nr_spawned];
	REQUIRE(waitpid(m->pid, &status, 0) == m->pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#endif /* PERFCTR_TESTS_CGROUP_UTIL_H */
