/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfctrd's view of a request's target process: who it belongs to, read
 * through the pidfd the client sent, so that a pid reused by another
 * process cannot be confused with it.  No sockets here; the unit tests
 * drive both ways of reading (the pidfd's own ioctl and /proc) directly.
 */
#ifndef PERFCTRD_TARGET_H
#define PERFCTRD_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pd_task {
	pid_t pid;		/* in the broker's pid namespace */
	pid_t tgid;		/* its process's */
	unsigned int uid[3];	/* real, effective, saved */
	unsigned int gid[3];
	/*
	 * Its owner may ptrace it (the kernel's SUID_DUMP_USER).  Read from
	 * /proc, a root process that is not is taken as one that is: only
	 * root could count it, and root passes the kernel's rule anyway.
	 */
	bool dumpable;
};

/*
 * The process (or thread) @pidfd names.  Through PIDFD_GET_INFO where the
 * kernel has it with the dumpability of a live task (6.16), else through
 * the pidfd's fdinfo and /proc.
 * Return: 0, -EBADF (not a pidfd), -ESRCH (exited), -EPERM (in a pid
 * namespace the broker cannot see), -EIO (its ids are unreadable).
 */
int pd_task_of(int pidfd, struct pd_task *t);

/* The same, through /proc only (what older kernels get). */
int pd_task_of_proc(int pidfd, struct pd_task *t);

/*
 * The kernel's ptrace read-access rule for an unprivileged caller of @uid
 * and @gid, which perf_event_open(2) applies to a task it is not: the
 * target's real, effective and saved ids all equal the caller's, and the
 * target is dumpable unless it is the caller's own process.  The caller
 * is the peer of the unix socket @peer_sock, as it connected (its pidfd
 * from SO_PEERPIDFD, Linux 6.5; without it a target that is not dumpable
 * is refused).  Return 0, or -EACCES with @why.
 */
int pd_task_check_own(const struct pd_task *t, uid_t uid, gid_t gid,
		      int peer_sock, char *why, size_t why_size);

/* Whether the process @pidfd names has not exited: checked after an
 * open by pid, so that the pid cannot have been reused in between. */
bool pd_pidfd_alive(int pidfd);

/* Whether @fd's /proc/self/fd link reads @what ("anon_inode:[...]"). */
bool pd_fd_is(int fd, const char *what);

#endif /* PERFCTRD_TARGET_H */
