// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The access broker's client (see broker.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/internal.h"
#include "sys/broker-wire.h"
#include "sys/broker.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int conn_fd = -1;
static pid_t conn_pid;		/* a child after fork() connects anew */
static bool conn_no_batch;	/* the broker predates OPEN_BATCH */
static uint64_t msg[PC_BROKER_MSG_MAX / 8];
static _Thread_local char refusal[256];

const char *pc_broker_refusal(void)
{
	return refusal;
}

void pc_broker_forget_refusal(void)
{
	refusal[0] = '\0';
}

/* Keep a refusal's reason from the reply @m (lock held). */
static void note_refusal(const struct pc_broker_msg *m)
{
	if (m->reply->rule[0])
		snprintf(refusal, sizeof(refusal), "%.*s (rule '%s')",
			 (int)m->reply->text_len, m->text, m->reply->rule);
	else
		snprintf(refusal, sizeof(refusal), "%.*s",
			 (int)m->reply->text_len, m->text);
}

const char *pc_broker_socket(void)
{
	const char *path = getenv("PERFCTR_BROKER_SOCKET");

	return path && *path ? path : PC_BROKER_SOCKET;
}

bool pc_broker_enabled(void)
{
	const char *off = getenv("PERFCTR_NO_BROKER");

	if (off && *off && strcmp(off, "0"))
		return false;
	return access(pc_broker_socket(), F_OK) == 0;
}

static int connect_broker(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = pc_broker_socket();
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static void disconnect(void)
{
	if (conn_fd >= 0)
		close(conn_fd);
	conn_fd = -1;
}

/* One request, one reply, under the lock.  Returns the reply's length
 * (in msg) with the descriptors it carried in @rfds (*nr_rfds of them, at
 * most @max_rfds, else the reply is refused), or -errno. */
static ssize_t exchange(const void *req, size_t len, const int *fds,
			unsigned int nr_fds, int *rfds, unsigned int max_rfds,
			unsigned int *nr_rfds)
{
	char sbuf[CMSG_SPACE(sizeof(int) * PC_BROKER_FDS_MAX)];
	/* Room for one more than a batch: too many is then seen, not cut. */
	char cbuf[CMSG_SPACE(sizeof(int) * (PC_BROKER_BATCH_MAX + 1))];
	struct iovec iov = { .iov_base = (void *)req, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	unsigned int got_fds = 0, k;
	bool too_many = false;
	int attempt;
	ssize_t n;

	*nr_rfds = 0;
	if (nr_fds > PC_BROKER_FDS_MAX)
		return -EINVAL;
	/* A forked child has its parent's connection: the replies to the
	 * two would cross, so the child makes its own. */
	if (conn_fd >= 0 && conn_pid != getpid())
		disconnect();
	for (attempt = 0; attempt < 2; attempt++) {
		if (conn_fd < 0) {
			int c = connect_broker();

			if (c < 0)
				return c;
			conn_fd = c;
			conn_pid = getpid();
			conn_no_batch = false;
		}
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		pc_broker_put_fds(&mh, sbuf, fds, nr_fds);
		if (sendmsg(conn_fd, &mh, MSG_NOSIGNAL) == (ssize_t)len)
			break;
		/* The broker restarted since we connected: once more. */
		disconnect();
		if (attempt)
			return -ECONNREFUSED;
	}
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = msg;
	iov.iov_len = sizeof(msg);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	do
		n = recvmsg(conn_fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		disconnect();
		return n < 0 ? -errno : -ECONNRESET;
	}
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t nr = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (k = 0; k < nr; k++) {
			int got;

			memcpy(&got, CMSG_DATA(cm) + k * sizeof(int), sizeof(got));
			if (got_fds < max_rfds)
				rfds[got_fds++] = got;
			else {	/* more than asked for: refused below */
				close(got);
				too_many = true;
			}
		}
	}
	if (too_many || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		for (k = 0; k < got_fds; k++)
			close(rfds[k]);
		disconnect();
		return -EPROTO;
	}
	*nr_rfds = got_fds;
	return n;
}

static void close_all(const int *fds, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		close(fds[k]);
}

static int pidfd_of(pid_t pid)
{
	long fd;

	if (pid == 0)
		pid = (pid_t)syscall(SYS_gettid);
	/* A thread's own pidfd where the kernel has them (6.9), so that
	 * a thread that is not the leader can be named. */
	fd = syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -errno : (int)fd;
}

/*
 * The calling thread's own pidfd, kept for its later requests: opening
 * and closing one costs more than the rest of the client's work on this
 * kind of machine.  Safe to keep, because a pidfd names its task for
 * good (it pins the struct pid: a pid reused after the task is gone is a
 * different one), and the task asking is alive.  Kept per thread (a
 * thread-local), so it names the thread using it; a child after fork()
 * has its parent's copy, which names the parent's thread: the process id
 * it was opened in tells (a child whose pid was once ours sends the pidfd
 * of a task that is gone, which the broker refuses as exited: then it is
 * opened anew).  Only on pidfs (6.9), where the inode number is the
 * task's own and never reused, so that fstat(2) can tell our pidfd from
 * whatever the program may have put under its number since (a program
 * that closes descriptors it does not know).
 */
static _Thread_local struct {
	bool valid;
	int fd;
	pid_t pid;
	dev_t dev;
	ino_t ino;
} self;
static pthread_key_t self_key;
static bool self_key_ok;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

#ifndef PID_FS_MAGIC
#define PID_FS_MAGIC	0x50494446
#endif

/* Whether self.fd is still the pidfd we opened. */
static bool self_is_ours(void)
{
	struct stat st;

	return !fstat(self.fd, &st) && st.st_dev == self.dev &&
	       st.st_ino == self.ino;
}

static void self_forget(void *unused)
{
	(void)unused;
	if (self.valid && self_is_ours())
		close(self.fd);
	self.valid = false;
}

static void self_key_init(void)
{
	/* Closes a thread's pidfd when it exits. */
	self_key_ok = !pthread_key_create(&self_key, self_forget);
}

/* This thread's pidfd (*@kept: ours to keep, not to close), or -errno. */
static int self_pidfd(bool *kept)
{
	pid_t me = getpid();
	struct statfs sfs;
	struct stat st;
	int fd;

	*kept = false;
	if (self.valid && self.pid == me && self_is_ours()) {
		*kept = true;
		return self.fd;
	}
	if (self.valid && self.pid != me)
		self_forget(NULL);	/* the parent's, in a forked child */
	self.valid = false;
	fd = pidfd_of(0);
	if (fd < 0)
		return fd;
	pthread_once(&self_once, self_key_init);
	if (!self_key_ok || fstatfs(fd, &sfs) || sfs.f_type != PID_FS_MAGIC ||
	    fstat(fd, &st) || pthread_setspecific(self_key, &self))
		return fd;
	self.fd = fd;
	self.pid = me;
	self.dev = st.st_dev;
	self.ino = st.st_ino;
	self.valid = true;
	*kept = true;
	return fd;
}

/* What a request says of its target: the kind and the descriptors
 * (a pidfd of ours to close after the request, or the caller's cgroup
 * directory), plus the group leader's when @group_fd is one. */
struct target {
	uint32_t kind;
	uint32_t flags;
	int fds[PC_BROKER_FDS_MAX];
	unsigned int nr_fds;
	int pidfd;
	bool kept;		/* pidfd is this thread's own, kept */
};

static int target_of(pid_t pid, int group_fd, unsigned long flags,
		     struct target *t)
{
	t->flags = 0;
	t->nr_fds = 0;
	t->pidfd = -1;
	t->kept = false;
	if (flags & PERF_FLAG_FD_OUTPUT)
		return -EINVAL;
	if (flags & PERF_FLAG_PID_CGROUP) {
		t->kind = PC_BROKER_TARGET_CGROUP;
		t->fds[t->nr_fds++] = pid;
	} else if (pid == -1) {
		t->kind = PC_BROKER_TARGET_CPU;
	} else {
		t->kind = PC_BROKER_TARGET_PID;
		t->pidfd = pid ? pidfd_of(pid) : self_pidfd(&t->kept);
		if (t->pidfd < 0)
			return t->pidfd;
		t->fds[t->nr_fds++] = t->pidfd;
	}
	if (group_fd >= 0) {
		t->flags |= PC_BROKER_F_GROUP;
		t->fds[t->nr_fds++] = group_fd;
	}
	if (flags & PERF_FLAG_FD_NO_GROUP)
		t->flags |= PC_BROKER_F_NO_GROUP;
	return 0;
}

static void target_done(struct target *t)
{
	if (t->pidfd >= 0 && !t->kept)
		close(t->pidfd);
}

/* A kept pidfd refused as exited names a task that is gone (see
 * self_pidfd()): forget it, for the request to be made once more. */
static bool retry_fresh(struct target *t, int ret)
{
	if (ret != -ESRCH || !t->kept)
		return false;
	self_forget(NULL);
	return true;
}

/* The reply's verdict, the refusal noted and the reason in @why. */
static void note_reply(const struct pc_broker_msg *m, char *why,
		       size_t why_size)
{
	if (m->reply->status)
		note_refusal(m);
	if (why_size)
		snprintf(why, why_size, "%.*s (rule '%s')",
			 (int)m->reply->text_len, m->text, m->reply->rule);
}

int pc_broker_open(const struct perf_event_attr *attr, pid_t pid, int cpu,
		   int group_fd, unsigned long flags, char *why,
		   size_t why_size)
{
	uint64_t req[(PC_BROKER_ATTR_MAX + 64) / 8];
	struct pc_broker_msg m;
	struct target t;
	int fd = -1, len, ret, attempt;
	unsigned int got;
	ssize_t n;

	if (why_size)
		why[0] = '\0';
	if (attr->size > PC_BROKER_ATTR_MAX)
		return -E2BIG;
	for (attempt = 0; attempt < 2; attempt++) {
		ret = target_of(pid, group_fd, flags, &t);
		if (ret)
			return ret;
		len = pc_broker_encode_open(req, sizeof(req), t.kind, cpu,
					    t.flags, attr, attr->size);
		if (len < 0) {
			target_done(&t);
			return len;
		}
		pthread_mutex_lock(&lock);
		n = exchange(req, (size_t)len, t.fds, t.nr_fds, &fd, 1, &got);
		if (n >= 0) {
			ret = pc_broker_decode_reply(msg, (size_t)n, got,
						     PC_BROKER_OPEN, &m);
			if (!ret) {
				ret = m.reply->status ? m.reply->status : fd;
				note_reply(&m, why, why_size);
			}
			if (ret < 0)
				close_all(&fd, got);
		} else {
			ret = (int)n;
		}
		pthread_mutex_unlock(&lock);
		target_done(&t);
		if (!retry_fresh(&t, ret))
			break;
	}
	return ret;
}

/* The type the last reply's header says (lock held). */
static uint16_t reply_type(void)
{
	struct pc_broker_hdr h;

	memcpy(&h, msg, sizeof(h));
	return h.type;
}

/* One batch of at most PC_BROKER_BATCH_MAX (lock held). */
static int open_batch(const struct perf_event_attr *attrs, unsigned int n,
		      const struct target *t, uint32_t flags, int cpu,
		      int *fds, char *why, size_t why_size)
{
	static uint64_t req[(sizeof(struct pc_broker_batch_body) + 16 +
			     PC_BROKER_BATCH_MAX *
			     (sizeof(struct pc_broker_batch_member) +
			      PC_BROKER_ATTR_MAX)) / 8];
	const void *ptrs[PC_BROKER_BATCH_MAX];
	uint32_t sizes[PC_BROKER_BATCH_MAX];
	struct pc_broker_msg m;
	unsigned int i, got;
	int len, ret;
	ssize_t r;

	for (i = 0; i < n; i++) {
		ptrs[i] = &attrs[i];
		sizes[i] = attrs[i].size;
	}
	len = pc_broker_encode_batch(req, sizeof(req), t->kind, cpu, flags,
				     ptrs, sizes, n);
	if (len < 0)
		return len;
	r = exchange(req, (size_t)len, t->fds, t->nr_fds, fds, n, &got);
	if (r < 0)
		return (int)r;
	ret = pc_broker_decode_reply(msg, (size_t)r, got, PC_BROKER_OPEN_BATCH,
				     &m);
	if (!ret && !m.reply->status && m.reply->value != n)
		ret = -EPROTO;
	if (!ret) {
		ret = m.reply->status;
		note_reply(&m, why, why_size);
	} else if (reply_type() == (PC_BROKER_OPEN | PC_BROKER_REPLY)) {
		/* An older broker answers a batch as a malformed open: do
		 * not ask it again on this connection. */
		conn_no_batch = true;
		ret = -EPROTONOSUPPORT;
	}
	if (ret)
		close_all(fds, got);
	return ret;
}

/* pc_broker_open_group() (@group) or pc_broker_open_many() with the
 * target made (its pidfd kept or not). */
static int open_set(const struct perf_event_attr *attrs, size_t n,
		    bool group, struct target *t, int cpu, int *fds, char *why,
		    size_t why_size)
{
	size_t done = 0, i;
	int ret = 0;

	pthread_mutex_lock(&lock);
	while (!ret && done < n) {
		unsigned int k = n - done > PC_BROKER_BATCH_MAX ?
				 PC_BROKER_BATCH_MAX : (unsigned int)(n - done);

		if (conn_no_batch) {
			ret = -EPROTONOSUPPORT;
			break;
		}
		/* The first batch's first event leads, unless a leader was
		 * given; later batches join whichever it is.  Independent
		 * events have neither flag. */
		if (group && done && !(t->flags & PC_BROKER_F_GROUP)) {
			t->flags |= PC_BROKER_F_GROUP;
			t->fds[t->nr_fds++] = fds[0];
		}
		ret = open_batch(&attrs[done], k, t,
				 !group || t->flags & PC_BROKER_F_GROUP ?
				 t->flags : t->flags | PC_BROKER_F_LEAD, cpu,
				 &fds[done], why, why_size);
		if (!ret)
			done += k;
	}
	pthread_mutex_unlock(&lock);
	if (ret) {
		for (i = done; i-- > 0;)
			close(fds[i]);
	}
	return ret;
}

/* The two batch opens' common part: @group_fd is -1 unless @group. */
static int open_batched(const struct perf_event_attr *attrs, size_t n,
			bool group, pid_t pid, int cpu, int group_fd,
			unsigned long flags, int *fds, char *why,
			size_t why_size)
{
	struct target t;
	int ret, attempt;
	size_t i;

	if (why_size)
		why[0] = '\0';
	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (attrs[i].size > PC_BROKER_ATTR_MAX ||
		    attrs[i].size > sizeof(attrs[i]))
			return -E2BIG;
	for (attempt = 0; attempt < 2; attempt++) {
		ret = target_of(pid, group_fd, flags, &t);
		if (ret)
			return ret;
		ret = open_set(attrs, n, group, &t, cpu, fds, why, why_size);
		target_done(&t);
		if (!retry_fresh(&t, ret))
			break;
	}
	return ret;
}

int pc_broker_open_group(const struct perf_event_attr *attrs, size_t n,
			 pid_t pid, int cpu, int group_fd,
			 unsigned long flags, int *fds, char *why,
			 size_t why_size)
{
	return open_batched(attrs, n, true, pid, cpu, group_fd, flags, fds,
			    why, why_size);
}

int pc_broker_open_many(const struct perf_event_attr *attrs, size_t n,
			pid_t pid, int cpu, unsigned long flags, int *fds,
			char *why, size_t why_size)
{
	return open_batched(attrs, n, false, pid, cpu, -1, flags, fds, why,
			    why_size);
}

/* A query without descriptors; the decoded reply in *m (pointing into
 * msg: call with the lock held). */
static int query(uint16_t type, uint32_t arg, const char *name, size_t name_len,
		 struct pc_broker_msg *m)
{
	uint64_t req[(PC_BROKER_NAME_MAX + 64) / 8];
	int len = pc_broker_encode_query(req, sizeof(req), type, arg, name,
					 name_len);
	unsigned int got;
	ssize_t n;
	int fd, ret;

	if (len < 0)
		return len;
	n = exchange(req, (size_t)len, NULL, 0, &fd, 1, &got);
	if (n < 0)
		return (int)n;
	ret = pc_broker_decode_reply(msg, (size_t)n, got, type, m);
	close_all(&fd, got);
	return ret ? ret : m->reply->status;
}

int pc_broker_tp_id(const char *sys, const char *name, uint64_t *id)
{
	char full[PC_BROKER_NAME_MAX + 1];
	struct pc_broker_msg m = { 0 };
	int n = snprintf(full, sizeof(full), "%s:%s", sys, name);
	int ret;

	if (n < 0 || (size_t)n >= sizeof(full))
		return -ENAMETOOLONG;
	pc_broker_forget_refusal();
	pthread_mutex_lock(&lock);
	ret = query(PC_BROKER_TP_ID, (uint32_t)n, full, (size_t)n, &m);
	if (!ret)
		*id = m.reply->value;
	else if (m.reply && m.reply->status == ret)	/* not a bad reply */
		note_refusal(&m);
	pthread_mutex_unlock(&lock);
	return ret;
}

int pc_broker_tp_list(int (*cb)(const char *full, void *ctx), void *ctx)
{
	struct pc_broker_msg m;
	uint32_t start = 0;
	char *page = NULL;
	int ret;

	do {
		size_t len;
		char *line, *nl;

		pthread_mutex_lock(&lock);
		ret = query(PC_BROKER_TP_LIST, start, NULL, 0, &m);
		if (!ret) {
			len = m.reply->text_len;
			page = malloc(len + 1);
			if (page) {
				memcpy(page, m.text, len);
				page[len] = '\0';
			}
			start = m.reply->value > UINT32_MAX ? 0 :
				(uint32_t)m.reply->value;
		}
		pthread_mutex_unlock(&lock);
		if (ret)
			break;
		if (!page)
			return -ENOMEM;
		/* Callbacks run without the lock: they may open events. */
		for (line = page; !ret && (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			ret = cb(line, ctx);
		}
		free(page);
		page = NULL;
	} while (!ret && start);
	return ret;
}

int pc_broker_policy(char *text, size_t size, char *rule, size_t rule_size)
{
	struct pc_broker_msg m = { 0 };
	int ret;

	if (size)
		text[0] = '\0';
	if (rule_size)
		rule[0] = '\0';
	pthread_mutex_lock(&lock);
	ret = query(PC_BROKER_POLICY, 0, NULL, 0, &m);
	if (m.reply) {
		if (size)
			snprintf(text, size, "%.*s", (int)m.reply->text_len,
				 m.text);
		if (rule_size)
			snprintf(rule, rule_size, "%s", m.reply->rule);
	}
	pthread_mutex_unlock(&lock);
	return ret;
}
