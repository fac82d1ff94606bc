// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Notification queues.  The queue is a pipe: each message is one write of
 * 64 bytes, which the kernel keeps whole (writes up to PIPE_BUF are
 * atomic), so the pipe always holds a whole number of messages, its read
 * end is readable exactly while messages wait, and producers in signal
 * handlers need nothing but write(2).  The optional signal is the pipe's
 * own O_ASYNC notification (F_SETSIG, F_SETOWN_EX): si_fd is the queue's
 * fd, and no code of ours runs to send it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/internal.h"
#include "perfctr/notify.h"

_Static_assert(sizeof(struct perfctr_msg) <= PIPE_BUF,
	       "a message must be one atomic pipe write");

#define NOTIFY_DEFAULT_CAPACITY	1024
#define NOTIFY_MAX_STOPPED	64

struct perfctr_notify {
	int read_fd;
	int write_fd;
	unsigned int flags;
	pid_t self;
	_Atomic uint64_t lost;
	/* Processes stopped by blocking mode, 0 = free slot. */
	_Atomic pid_t stopped[NOTIFY_MAX_STOPPED];
};

static int setup_signal(int fd, int sig, pid_t tid)
{
	struct f_owner_ex owner = {
		.type = tid ? F_OWNER_TID : F_OWNER_PID,
		.pid = tid ? tid : getpid(),
	};
	int flags;

	if (fcntl(fd, F_SETSIG, sig) < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0)
		return -errno;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_ASYNC) < 0)
		return -errno;
	return 0;
}

struct perfctr_notify *perfctr_notify__new(const struct perfctr_notify_opts *opts)
{
	struct perfctr_notify *q;
	size_t capacity;
	int fds[2], sig, err;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	sig = PC_OPTS_GET(opts, signal, 0);
	capacity = PC_OPTS_GET(opts, capacity, 0);
	if (!capacity)
		capacity = NOTIFY_DEFAULT_CAPACITY;
	if (sig < 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP ||
	    capacity > INT_MAX / sizeof(struct perfctr_msg) ||
	    (PC_OPTS_GET(opts, flags, 0) &
	     ~(unsigned int)(PERFCTR_NOTIFY_BLOCK | PERFCTR_NOTIFY_NONBLOCK))) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->flags = PC_OPTS_GET(opts, flags, 0);
	q->self = getpid();
	/* Both ends non-blocking: a full queue drops instead of hanging a
	 * signal handler; waiting readers wait in poll(). */
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		err = errno;
		free(q);
		errno = err;
		return NULL;
	}
	q->read_fd = fds[0];
	q->write_fd = fds[1];
	/* The kernel rounds up to a power-of-two number of pages; a request
	 * above pipe-max-size (EPERM for non-root) keeps the default. */
	if (capacity != NOTIFY_DEFAULT_CAPACITY)
		(void)fcntl(q->write_fd, F_SETPIPE_SZ,
			    (int)(capacity * sizeof(struct perfctr_msg)));
	if (sig) {
		err = setup_signal(q->read_fd, sig, PC_OPTS_GET(opts, signal_tid, 0));
		if (err) {
			perfctr_notify__delete(q);
			errno = -err;
			return NULL;
		}
	}
	return q;
}

void perfctr_notify__delete(struct perfctr_notify *q)
{
	if (!q)
		return;
	perfctr_notify__restart(q);
	close(q->read_fd);
	close(q->write_fd);
	free(q);
}

int perfctr_notify__fd(const struct perfctr_notify *q)
{
	return q->read_fd;
}

ssize_t perfctr_notify__read(struct perfctr_notify *q, void *buf, size_t size)
{
	ssize_t got;

	if (!size || size % sizeof(struct perfctr_msg))
		return pc_err(EINVAL);
	if (size > SSIZE_MAX)
		size = SSIZE_MAX - SSIZE_MAX % sizeof(struct perfctr_msg);
	for (;;) {
		struct pollfd pfd = { .fd = q->read_fd, .events = POLLIN };

		got = read(q->read_fd, buf, size);
		if (got >= 0)
			break;
		if (errno != EAGAIN || (q->flags & PERFCTR_NOTIFY_NONBLOCK))
			return -errno;
		if (poll(&pfd, 1, -1) < 0)
			return -errno;
	}
	/* Every write is one whole message and the size asked for is a
	 * multiple of it: a partial message here is a broken invariant. */
	if (got % (ssize_t)sizeof(struct perfctr_msg))
		return pc_err(EIO);
	return got;
}

static void remember_stopped(struct perfctr_notify *q, pid_t pid)
{
	for (int i = 0; i < NOTIFY_MAX_STOPPED; i++)
		if (atomic_load(&q->stopped[i]) == pid)
			return;
	for (int i = 0; i < NOTIFY_MAX_STOPPED; i++) {
		pid_t expected = 0;

		if (atomic_compare_exchange_strong(&q->stopped[i], &expected, pid))
			return;
	}
}

static void forget_stopped(struct perfctr_notify *q, pid_t pid)
{
	for (int i = 0; i < NOTIFY_MAX_STOPPED; i++) {
		pid_t expected = pid;

		if (atomic_compare_exchange_strong(&q->stopped[i], &expected, 0))
			return;
	}
}

int perfctr_notify__push(struct perfctr_notify *q, const struct perfctr_msg *msg)
{
	int saved_errno = errno, ret = 0;
	bool block = (q->flags & PERFCTR_NOTIFY_BLOCK) && msg->pid &&
		     (pid_t)msg->pid != q->self;
	ssize_t n;

	/* Stop before queueing: a reader that sees the message and restarts
	 * at once must find the process already stopped and remembered. */
	if (block) {
		kill((pid_t)msg->pid, SIGSTOP);
		remember_stopped(q, (pid_t)msg->pid);
	}
	do
		n = write(q->write_fd, msg, sizeof(*msg));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*msg)) {
		atomic_fetch_add(&q->lost, 1);
		ret = -EAGAIN;
		/* Nobody will hear of this stop: undo it. */
		if (block) {
			forget_stopped(q, (pid_t)msg->pid);
			kill((pid_t)msg->pid, SIGCONT);
		}
	}
	errno = saved_errno;
	return ret;
}

unsigned int perfctr_notify__flags(const struct perfctr_notify *q)
{
	return q->flags;
}

uint64_t perfctr_notify__lost(const struct perfctr_notify *q)
{
	return atomic_load(&((struct perfctr_notify *)q)->lost);
}

int perfctr_notify__restart(struct perfctr_notify *q)
{
	int continued = 0;

	for (int i = 0; i < NOTIFY_MAX_STOPPED; i++) {
		pid_t pid = atomic_exchange(&q->stopped[i], 0);

		if (pid && kill(pid, SIGCONT) == 0)
			continued++;
	}
	return continued;
}
