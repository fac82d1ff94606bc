// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* perfctrd: whom a request's target process belongs to (see target.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "target.h"

#ifndef PID_FS_MAGIC
#define PID_FS_MAGIC	0x50494446
#endif
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77
#endif

/* The device of pidfs, 0 until a pidfd on it was seen (the daemon has
 * one thread). */
static dev_t pidfs_dev;

bool pd_fd_is(int fd, const char *what)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, what);
}

bool pd_pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

/* The start of a /proc file in one read, enough for fdinfo and for the
 * ids near the top of status: its length, NUL-terminated, or -errno. */
static ssize_t read_proc(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

/* The numbers after "\n@key" in a /proc status text; false unless all
 * @nr of them are there. */
static bool status_ids(const char *text, const char *key, unsigned int *ids,
		       int nr)
{
	const char *p = strstr(text, key);
	char *end;
	int i;

	if (!p)
		return false;
	p += strlen(key);
	for (i = 0; i < nr; i++) {
		unsigned long v;

		errno = 0;
		v = strtoul(p, &end, 10);
		if (end == p || errno || v > UINT_MAX)
			return false;
		ids[i] = (unsigned int)v;
		p = end;
	}
	return true;
}

/*
 * PIDFD_GET_INFO (Linux 6.13): the pid and every id of the pidfd's own
 * process in one call, with no pid to look up in /proc in between; the
 * second version of its struct (6.16) adds the dumpability of a live
 * task.  A kernel that knows only the first refuses this size, and the
 * /proc way is taken.
 */
struct pidfd_info_v1 {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid;
	uint32_t ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
	uint32_t coredump_mask;
	uint32_t spare;
};
_Static_assert(sizeof(struct pidfd_info_v1) == 72, "PIDFD_INFO_SIZE_VER1");
#define PIDFD_GET_INFO_V1	_IOWR(0xFF, 11, struct pidfd_info_v1)
#define PIDFD_INFO_PID_BIT	(1ull << 0)
#define PIDFD_INFO_CREDS_BIT	(1ull << 1)
#define PIDFD_INFO_DUMP_BIT	(1ull << 4)
#define PIDFD_DUMP_USER		(1u << 2)	/* SUID_DUMP_USER */

/* Whether @fd is a pidfd on pidfs.  Checked before the ioctl: a file of
 * the caller's choosing (a FUSE file answers ioctls of a known size) could
 * otherwise fill in the ids it likes. */
static bool on_pidfs(int fd)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(fd, &st))
		return false;
	if (pidfs_dev)
		return st.st_dev == pidfs_dev;
	if (fstatfs(fd, &sfs) || sfs.f_type != PID_FS_MAGIC)
		return false;
	pidfs_dev = st.st_dev;
	return true;
}

/* 1: filled from the pidfd; 0: this kernel cannot say (ask /proc);
 * -ESRCH: the process has exited. */
static int creds_from_pidfd(int pidfd, struct pd_task *t)
{
	const uint64_t want = PIDFD_INFO_PID_BIT | PIDFD_INFO_CREDS_BIT |
			      PIDFD_INFO_DUMP_BIT;
	struct pidfd_info_v1 info = { .mask = want };

	if (!on_pidfs(pidfd))
		return 0;
	if (ioctl(pidfd, PIDFD_GET_INFO_V1, &info))
		return errno == ESRCH ? -ESRCH : 0;
	if ((info.mask & want) != want)
		return 0;
	t->pid = (pid_t)info.pid;
	t->tgid = (pid_t)info.tgid;
	t->dumpable = info.coredump_mask & PIDFD_DUMP_USER;
	t->uid[0] = info.ruid;
	t->uid[1] = info.euid;
	t->uid[2] = info.suid;
	t->gid[0] = info.rgid;
	t->gid[1] = info.egid;
	t->gid[2] = info.sgid;
	return 1;
}

/*
 * The same through /proc, for kernels without PIDFD_GET_INFO: the pid
 * from the pidfd's fdinfo, then the ids from a /proc directory opened
 * while the pidfd's process was alive, so the files are that process's
 * and no later one's.  The files in it (not the directory) belong to
 * root while the process is not dumpable.
 */
int pd_task_of_proc(int pidfd, struct pd_task *t)
{
	char path[64], text[4096];
	unsigned int ids[4];
	struct stat st;
	const char *p;
	int dirfd;
	long v;

	if (!pd_fd_is(pidfd, "anon_inode:[pidfd]"))
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if (read_proc(AT_FDCWD, path, text, sizeof(text)) < 0)
		return -EBADF;
	p = strstr(text, "\nPid:\t");
	if (!p)
		return -EBADF;
	v = strtol(p + 6, NULL, 10);
	/* -1: exited; 0: in a pid namespace we cannot see. */
	if (v <= 0)
		return v < 0 ? -ESRCH : -EPERM;
	t->pid = (pid_t)v;
	snprintf(path, sizeof(path), "/proc/%d", (int)t->pid);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -ESRCH;
	if (!pd_pidfd_alive(pidfd) ||
	    read_proc(dirfd, "status", text, sizeof(text)) < 0 ||
	    fstatat(dirfd, "status", &st, 0)) {
		close(dirfd);
		return -ESRCH;
	}
	close(dirfd);
	if (!status_ids(text, "\nTgid:", ids, 1))
		return -EIO;
	t->tgid = (pid_t)ids[0];
	if (!status_ids(text, "\nUid:", ids, 3))
		return -EIO;
	memcpy(t->uid, ids, sizeof(t->uid));
	if (!status_ids(text, "\nGid:", ids, 3))
		return -EIO;
	memcpy(t->gid, ids, sizeof(t->gid));
	t->dumpable = st.st_uid == t->uid[1] && st.st_gid == t->gid[1];
	return 0;
}

int pd_task_of(int pidfd, struct pd_task *t)
{
	int ret = creds_from_pidfd(pidfd, t);

	if (ret == 0)
		return pd_task_of_proc(pidfd, t);
	if (ret < 0)
		return ret;
	return t->pid > 0 ? 0 : -EPERM;
}

/* Whether the process that connected @sock is alive and is @tgid: then
 * no other process can have that pid. */
static bool peer_is(int sock, pid_t tgid)
{
	socklen_t len = sizeof(int);
	struct pd_task peer;
	int pidfd, ret;

	if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len))
		return false;
	ret = pd_task_of(pidfd, &peer);
	close(pidfd);
	return !ret && peer.pid == tgid;
}

int pd_task_check_own(const struct pd_task *t, uid_t uid, gid_t gid,
		      int peer_sock, char *why, size_t size)
{
	int i;

	for (i = 0; i < 3; i++)
		if (t->uid[i] != uid || t->gid[i] != gid) {
			snprintf(why, size, "process %d is not the caller's",
				 (int)t->pid);
			return -EACCES;
		}
	/* A process made itself undumpable (or crossed a security boundary
	 * at exec) so that its owner's other processes cannot look into it;
	 * the kernel still lets it count itself. */
	if (!t->dumpable && !peer_is(peer_sock, t->tgid)) {
		snprintf(why, size, "process %d is not dumpable: only it may "
			 "count itself", (int)t->pid);
		return -EACCES;
	}
	return 0;
}
