/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * sys_perf_event_open_many() against a broker of the test's own that
 * counts the requests it gets: independent events that the kernel refuses
 * go to the broker in one request without a group flag, and count the
 * getppid calls exactly, each its own group; a batch with one refused
 * event is asked for again event by event, the events before it open and
 * the refusal its own; a broker that predates batches (it answers a batch
 * as a malformed open, as such a broker does) is asked event by event,
 * and not sent a batch again on that connection; PC_SYS_NO_BROKER asks
 * nothing.  The engine opens a run of groups of one event each with one
 * such call (a group between two runs with its own), skips an event the
 * broker's kernel cannot count (ENOENT: an answer of the broker, not its
 * absence) and opens the rest of the run at once, fails on it in strict
 * mode, names a refused event with the broker's reason, and keeps a run
 * to one target (events of a cgroup of their own apart from the others,
 * on a CPU-wide engine).  The kernel's refusal is made by a seccomp
 * filter on the test's main thread (perf_event_open(2) fails with EACCES
 * there), so the test runs as root at any perf_event_paranoid; the
 * broker thread, started before the filter, opens the events for real.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <perfctr/target.h>

#include "core/engine.h"
#include "sys/broker-wire.h"
#include "sys/cgroup.h"
#include "sys/broker.h"
#include "sys/sys.h"
#include "test.h"

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* The broker's policy: cpu-migrations is refused, alignment-faults
 * is one the kernel "cannot count here" (ENOENT), all else opened. */
#define REFUSED_CONFIG PERF_COUNT_SW_CPU_MIGRATIONS
#define MISSING_CONFIG PERF_COUNT_SW_ALIGNMENT_FAULTS
#define MAX_LOG 16

static struct {
	char dir[64];
	char path[96];		/* fits sun_path */
	int listen_fd;
	int conn;		/* the client's connection, or -1 */
	bool old;		/* answer batches as a broker without them */
	/* What it was asked (read and reset by the test): requests of one
	 * event, requests of several (batches) and their events. */
	unsigned int opens, batches, batch_events;
	uint32_t batch_flags;	/* the last batch's */
	/* Each batch's flags, size and target kind, in order. */
	uint32_t log_flags[MAX_LOG];
	unsigned int log_size[MAX_LOG];
	uint32_t log_target[MAX_LOG];
} fake = { .listen_fd = -1, .conn = -1 };

static uint64_t getppid_id;
static bool filtered;

static unsigned int fake_count(unsigned int *what)
{
	return __atomic_load_n(what, __ATOMIC_SEQ_CST);
}

/* The pid a pidfd names, from its fdinfo. */
static pid_t pid_of_pidfd(int pidfd)
{
	char path[64], line[128];
	pid_t pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid:\t%d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

static void reply(int conn, uint16_t type, int status, uint64_t value,
		  const char *text, const int *fds, unsigned int nr_fds)
{
	static uint64_t buf[1024];
	char cbuf[CMSG_SPACE(sizeof(int) * PC_BROKER_BATCH_MAX)];
	struct iovec iov = { .iov_base = buf };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int len = pc_broker_encode_reply(buf, sizeof(buf), type, status, value,
					 "fake", text, strlen(text));

	if (len < 0)
		return;
	iov.iov_len = (size_t)len;
	pc_broker_put_fds(&mh, cbuf, fds, nr_fds);
	if (sendmsg(conn, &mh, MSG_NOSIGNAL) != len)
		perror("fake broker: sendmsg");
}

static bool refused(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_SOFTWARE &&
	       attr->config == REFUSED_CONFIG;
}

/* One request on @conn; false when the client has gone. */
static bool serve_one(int conn)
{
	static uint64_t buf[PC_BROKER_MSG_MAX / 8];
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct perf_event_attr attrs[PC_BROKER_BATCH_MAX];
	int in[4], out[PC_BROKER_BATCH_MAX];
	unsigned int nr_in = 0, nr_out = 0, i;
	struct pc_broker_msg m;
	struct cmsghdr *cm;
	ssize_t n;
	pid_t pid;

	n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n < 0 && errno == EINTR;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k, nr = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (k = 0; k < nr && nr_in < 4; k++)
			memcpy(&in[nr_in++], CMSG_DATA(cm) + k * sizeof(int),
			       sizeof(int));
	}
	if (pc_broker_decode_request(buf, (size_t)n, nr_in, &m) ||
	    (m.type != PC_BROKER_OPEN && m.type != PC_BROKER_OPEN_BATCH)) {
		reply(conn, PC_BROKER_OPEN, -EPROTO, 0, "malformed", NULL, 0);
		goto out;
	}
	if (m.type == PC_BROKER_OPEN_BATCH && fake.old) {
		/* What a broker of wire version 1 answers to a batch: a
		 * malformed open.  Counted as a batch whatever its size: the
		 * library sends none after it on this connection. */
		__atomic_add_fetch(&fake.batches, 1, __ATOMIC_SEQ_CST);
		reply(conn, PC_BROKER_OPEN, -EPROTO, 0, "malformed request",
		      NULL, 0);
		goto out;
	}
	for (i = 0; i < m.nr_attrs; i++) {
		memset(&attrs[i], 0, sizeof(attrs[i]));
		memcpy(&attrs[i], m.attrs[i], m.attr_sizes[i]);
	}
	if (m.type == PC_BROKER_OPEN) {
		__atomic_add_fetch(&fake.opens, 1, __ATOMIC_SEQ_CST);
	} else {
		unsigned int at = fake_count(&fake.batches);

		if (at < MAX_LOG) {
			fake.log_flags[at] = m.flags;
			fake.log_size[at] = m.nr_attrs;
			fake.log_target[at] = m.target;
		}
		__atomic_store_n(&fake.batch_flags, m.flags, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&fake.batch_events, m.nr_attrs,
				   __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&fake.batches, 1, __ATOMIC_SEQ_CST);
	}
	for (i = 0; i < m.nr_attrs; i++)
		if (refused(&attrs[i])) {
			reply(conn, m.type, -EACCES, m.type == PC_BROKER_OPEN ?
			      0 : i, "cpu-migrations", NULL, 0);
			goto out;
		}
	for (i = 0; i < m.nr_attrs; i++)
		if (attrs[i].type == PERF_TYPE_SOFTWARE &&
		    attrs[i].config == MISSING_CONFIG) {
			reply(conn, m.type, -ENOENT, m.type == PC_BROKER_OPEN ?
			      0 : i, "the kernel refused: No such file or "
			      "directory", NULL, 0);
			goto out;
		}
	pid = m.target == PC_BROKER_TARGET_PID ? pid_of_pidfd(in[0]) :
	      m.target == PC_BROKER_TARGET_CGROUP ? in[0] : -1;
	for (i = 0; i < m.nr_attrs; i++) {
		int group = m.flags & PC_BROKER_F_GROUP ? in[nr_in - 1] :
			    m.flags & PC_BROKER_F_LEAD && i ? out[0] : -1;
		long fd = syscall(SYS_perf_event_open, &attrs[i], pid, m.cpu,
				  group, PERF_FLAG_FD_CLOEXEC |
				  (m.target == PC_BROKER_TARGET_CGROUP ?
				   PERF_FLAG_PID_CGROUP : 0));

		if (fd < 0) {
			reply(conn, m.type, -errno, m.type == PC_BROKER_OPEN ?
			      0 : i, "the kernel refused", NULL, 0);
			goto out;
		}
		out[nr_out++] = (int)fd;
	}
	reply(conn, m.type, 0, m.type == PC_BROKER_OPEN ? 0 : nr_out, "", out,
	      nr_out);
out:
	for (i = 0; i < nr_out; i++)
		close(out[i]);
	for (i = 0; i < nr_in; i++)
		close(in[i]);
	return true;
}

static void *fake_main(void *unused)
{
	(void)unused;
	for (;;) {
		int conn = accept4(fake.listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (conn < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		__atomic_store_n(&fake.conn, conn, __ATOMIC_SEQ_CST);
		while (serve_one(conn))
			;
		__atomic_store_n(&fake.conn, -1, __ATOMIC_SEQ_CST);
		close(conn);
	}
}

static void remove_socket(void)
{
	unlink(fake.path);
	rmdir(fake.dir);
}

/* perf_event_open(2) fails with EACCES on this thread from now on. */
static void refuse_perf_event_open(void)
{
#ifdef TEST_AUDIT_ARCH
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(code) / sizeof(code[0]), .filter = code,
	};

	/* Without TSYNC the filter is this thread's: not the broker's. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		test_skip("no seccomp filter: %s", strerror(errno));
#else
	test_skip("no seccomp architecture number for this build");
#endif
}

/* The broker, started once; this thread's opens refused from then on. */
static void need_fake(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	pthread_t t;
	long long id;

	if (filtered)
		return;
	test_require_root();
	test_require_tracefs();
	id = test_tracepoint_id("syscalls:sys_enter_getppid");
	if (id < 0)
		test_skip("no syscalls:sys_enter_getppid tracepoint");
	getppid_id = (uint64_t)id;
	snprintf(fake.dir, sizeof(fake.dir), "/tmp/perfctr-many-XXXXXX");
	REQUIRE(mkdtemp(fake.dir));
	snprintf(fake.path, sizeof(fake.path), "%s/sock", fake.dir);
	memcpy(sa.sun_path, fake.path, sizeof(fake.path));
	fake.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	REQUIRE(fake.listen_fd >= 0);
	REQUIRE(bind(fake.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	atexit(remove_socket);
	REQUIRE(listen(fake.listen_fd, 4) == 0);
	REQUIRE(pthread_create(&t, NULL, fake_main, NULL) == 0);
	pthread_detach(t);
	setenv("PERFCTR_BROKER_SOCKET", fake.path, 1);
	unsetenv("PERFCTR_NO_BROKER");
	refuse_perf_event_open();
	filtered = true;
}

/*
 * A fresh start: the counts zeroed, the mode set, and the client's
 * connection dropped, so that the library connects anew (and forgets
 * what it learnt of the last broker).  No request is in flight.
 */
static void fake_reset(bool old)
{
	int conn = __atomic_load_n(&fake.conn, __ATOMIC_SEQ_CST);

	if (conn >= 0)
		shutdown(conn, SHUT_RDWR);
	/* The fake broker's thread must run to see the shutdown, which a
	 * loaded machine may delay: up to 10 s. */
	for (int i = 0; i < 5000 && __atomic_load_n(&fake.conn,
						    __ATOMIC_SEQ_CST) >= 0; i++)
		usleep(2000);
	fake.old = old;
	/* The library learns the broker went away when it next sends: a
	 * query now, so that what it learnt of the last one (no batches)
	 * is forgotten before the case's requests. */
	if (conn >= 0)
		pc_broker_policy(NULL, 0, NULL, 0);
	__atomic_store_n(&fake.opens, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fake.batches, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fake.batch_events, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fake.batch_flags, ~0u, __ATOMIC_SEQ_CST);
}

static void getppid_attr(struct perf_event_attr *attr, bool disabled)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->size = sizeof(*attr);
	attr->config = getppid_id;
	attr->disabled = disabled;
}


static uint64_t read_count(int fd)
{
	uint64_t v = ~0ull;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ull;
	return v;
}

TEST(independent_events_in_one_request)
{
	struct perf_event_attr attrs[4];
	int fds[4], i, err;
	size_t opened = 99;

	need_fake();
	fake_reset(false);
	for (i = 0; i < 4; i++)
		getppid_attr(&attrs[i], true);
	err = sys_perf_event_open_many(attrs, 4, 0, -1, 0, fds, &opened);
	REQUIRE(err == 0);
	CHECK_EQ_INT(opened, 4);
	CHECK_EQ_INT(fake_count(&fake.batches), 1);
	CHECK_EQ_INT(fake_count(&fake.batch_events), 4);
	CHECK_EQ_INT(fake_count(&fake.opens), 0);
	/* Neither a leader nor a group to join: independent events. */
	CHECK_EQ_INT(fake_count(&fake.batch_flags), 0);
	/* Each its own group: enabling the third alone counts with it
	 * alone (a member of a disabled leader would count nothing). */
	REQUIRE(sys_perf_enable(fds[2], false) == 0);
	do_getppid(1000);
	REQUIRE(sys_perf_enable(fds[0], false) == 0);
	do_getppid(500);
	CHECK_EQ_U64(read_count(fds[0]), 500);
	CHECK_EQ_U64(read_count(fds[1]), 0);
	CHECK_EQ_U64(read_count(fds[2]), 1500);
	CHECK_EQ_U64(read_count(fds[3]), 0);
	for (i = 0; i < 4; i++)
		close(fds[i]);
}

TEST(refused_batch_is_asked_event_by_event)
{
	struct perf_event_attr attrs[4];
	int fds[4], i, err;
	size_t opened = 99;

	need_fake();
	fake_reset(false);
	for (i = 0; i < 4; i++)
		getppid_attr(&attrs[i], false);
	attrs[2].type = PERF_TYPE_SOFTWARE;
	attrs[2].config = REFUSED_CONFIG;
	err = sys_perf_event_open_many(attrs, 4, 0, -1, 0, fds, &opened);
	CHECK_EQ_INT(err, -EACCES);
	CHECK_EQ_INT(errno, EACCES);
	REQUIRE(opened == 2);
	/* The batch, then the first two and the refused one alone; the
	 * one after it is not asked for. */
	CHECK_EQ_INT(fake_count(&fake.batches), 1);
	CHECK_EQ_INT(fake_count(&fake.batch_events), 4);
	CHECK_EQ_INT(fake_count(&fake.opens), 3);
	CHECK_STR(pc_broker_refusal(), "cpu-migrations (rule 'fake')");
	do_getppid(700);
	CHECK_EQ_U64(read_count(fds[0]), 700);
	CHECK_EQ_U64(read_count(fds[1]), 700);
	close(fds[0]);
	close(fds[1]);
	/* The rest, as the engine opens them after a refusal it skips:
	 * one event left is asked for alone. */
	fake_reset(false);
	err = sys_perf_event_open_many(&attrs[3], 1, 0, -1, 0, fds, &opened);
	REQUIRE(err == 0);
	CHECK_EQ_INT(fake_count(&fake.batches), 0);
	CHECK_EQ_INT(fake_count(&fake.opens), 1);
	CHECK_STR(pc_broker_refusal(), "");
	close(fds[0]);
}

TEST(broker_without_batches_is_asked_event_by_event)
{
	struct perf_event_attr attrs[3];
	int fds[3], i, round, err;
	size_t opened = 99;

	need_fake();
	fake_reset(true);
	for (i = 0; i < 3; i++)
		getppid_attr(&attrs[i], false);
	for (round = 0; round < 2; round++) {
		err = sys_perf_event_open_many(attrs, 3, 0, -1, 0, fds,
					       &opened);
		REQUIRE(err == 0);
		CHECK_EQ_INT(opened, 3);
		do_getppid(300);
		for (i = 0; i < 3; i++) {
			CHECK_EQ_U64(read_count(fds[i]), 300);
			close(fds[i]);
		}
	}
	/* One batch tried, answered as malformed: not tried again on
	 * that connection. */
	CHECK_EQ_INT(fake_count(&fake.batches), 1);
	CHECK_EQ_INT(fake_count(&fake.opens), 6);
}

TEST(no_broker_flag_asks_nothing)
{
	struct perf_event_attr attrs[3];
	int fds[3], i, err;
	size_t opened = 99;

	need_fake();
	fake_reset(false);
	for (i = 0; i < 3; i++)
		getppid_attr(&attrs[i], false);
	err = sys_perf_event_open_many(attrs, 3, 0, -1, PC_SYS_NO_BROKER, fds,
				       &opened);
	CHECK_EQ_INT(err, -EACCES);
	CHECK_EQ_INT(opened, 0);
	CHECK_EQ_INT(fake_count(&fake.batches), 0);
	CHECK_EQ_INT(fake_count(&fake.opens), 0);
}

/* An engine on the calling thread of the @n events @attrs, @leaders[i]
 * the leader of event i. */
static struct pc_engine *engine_of(struct perfctr_target **t,
				   const struct perf_event_attr *attrs,
				   const size_t *leaders, size_t n)
{
	struct pc_engine *e;
	size_t i;

	*t = perfctr_target__new_self();
	REQUIRE(*t);
	e = pc_engine__new(*t);
	REQUIRE(e);
	for (i = 0; i < n; i++) {
		struct pc_engine_event ev = {
			.attr = &attrs[i], .leader = leaders[i],
		};

		REQUIRE(pc_engine__add(e, &ev) == (int)i);
	}
	return e;
}

static uint64_t engine_count(struct pc_engine *e, size_t ev)
{
	const struct pc_slot *slot = pc_engine__slot(e, ev, 0);

	return slot && slot->count.status == PERFCTR_COUNT_OK ?
	       slot->count.value : ~0ull;
}

static void sw_attr(struct perf_event_attr *attr, uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_SOFTWARE;
	attr->size = sizeof(*attr);
	attr->config = config;
}

TEST(engine_opens_a_run_of_single_groups_at_once)
{
	/* a, b, {c, d}, e, f: two runs of two around a group of two. */
	static const size_t leaders[] = { 0, 1, 2, 2, 4, 5 };
	struct perf_event_attr attrs[6];
	struct perfctr_target *t;
	struct pc_engine *e;
	size_t i;

	need_fake();
	fake_reset(false);
	for (i = 0; i < 6; i++)
		getppid_attr(&attrs[i], false);
	e = engine_of(&t, attrs, leaders, 6);
	REQUIRE(pc_engine__open(e, PC_ENGINE_ENABLE) == 0);
	do_getppid(2000);
	REQUIRE(pc_engine__disable(e) == 0);
	REQUIRE(pc_engine__read(e) == 0);
	for (i = 0; i < 6; i++)
		CHECK_EQ_U64(engine_count(e, i), 2000);
	CHECK_EQ_INT(fake_count(&fake.opens), 0);
	REQUIRE(fake_count(&fake.batches) == 3);
	CHECK_EQ_INT(fake.log_flags[0], 0);
	CHECK_EQ_INT(fake.log_size[0], 2);
	CHECK_EQ_INT(fake.log_flags[1], PC_BROKER_F_LEAD);
	CHECK_EQ_INT(fake.log_size[1], 2);
	CHECK_EQ_INT(fake.log_flags[2], 0);
	CHECK_EQ_INT(fake.log_size[2], 2);
	/* Each of a run leads its own group. */
	CHECK_EQ_INT(pc_engine__leader_fd(e, 0, 0), pc_engine__fd(e, 0, 0));
	CHECK_EQ_INT(pc_engine__leader_fd(e, 1, 0), pc_engine__fd(e, 1, 0));
	CHECK_EQ_INT(pc_engine__leader_fd(e, 2, 0), pc_engine__fd(e, 2, 0));
	CHECK_EQ_INT(pc_engine__leader_fd(e, 3, 0), pc_engine__fd(e, 4, 0));
	CHECK_EQ_INT(pc_engine__leader_fd(e, 4, 0), pc_engine__fd(e, 5, 0));
	pc_engine__delete(e);
	perfctr_target__delete(t);
}

TEST(engine_skips_an_unsupported_event_of_a_run)
{
	static const size_t leaders[] = { 0, 1, 2, 3 };
	struct perf_event_attr attrs[4];
	struct perfctr_target *t;
	const struct pc_slot *slot;
	struct pc_engine *e;
	size_t i;

	need_fake();
	fake_reset(false);
	for (i = 0; i < 4; i++)
		getppid_attr(&attrs[i], false);
	sw_attr(&attrs[1], MISSING_CONFIG);
	e = engine_of(&t, attrs, leaders, 4);
	REQUIRE(pc_engine__open(e, PC_ENGINE_ENABLE) == 0);
	do_getppid(800);
	REQUIRE(pc_engine__disable(e) == 0);
	REQUIRE(pc_engine__read(e) == 0);
	CHECK_EQ_U64(engine_count(e, 0), 800);
	CHECK_EQ_U64(engine_count(e, 2), 800);
	CHECK_EQ_U64(engine_count(e, 3), 800);
	slot = pc_engine__slot(e, 1, 0);
	REQUIRE(slot);
	CHECK_EQ_INT(slot->count.status, PERFCTR_COUNT_NOT_SUPPORTED);
	CHECK_EQ_INT(slot->count.errnum, ENOENT);
	CHECK_EQ_INT(slot->fd, -1);
	/* The four at once (refused at the second), the first two alone,
	 * then the two after the one skipped at once. */
	CHECK_EQ_INT(fake_count(&fake.batches), 2);
	CHECK_EQ_INT(fake_count(&fake.batch_events), 6);
	CHECK_EQ_INT(fake_count(&fake.opens), 2);
	pc_engine__delete(e);
	perfctr_target__delete(t);

	/* Strict: the open fails at that event, nothing left open. */
	fake_reset(false);
	e = engine_of(&t, attrs, leaders, 4);
	CHECK_EQ_INT(pc_engine__open(e, PC_ENGINE_STRICT), -ENOENT);
	CHECK_EQ_INT(pc_engine__failure(e)->event, 1);
	CHECK_EQ_INT(pc_engine__failure(e)->errnum, ENOENT);
	for (i = 0; i < 4; i++)
		CHECK_EQ_INT(pc_engine__fd(e, i, 0), -1);
	pc_engine__delete(e);
	perfctr_target__delete(t);
}

TEST(engine_names_the_refused_event_of_a_run)
{
	static const size_t leaders[] = { 0, 1, 2 };
	struct perf_event_attr attrs[3];
	struct perfctr_target *t;
	struct pc_engine *e;
	size_t i;

	need_fake();
	fake_reset(false);
	for (i = 0; i < 3; i++)
		getppid_attr(&attrs[i], false);
	sw_attr(&attrs[2], REFUSED_CONFIG);
	e = engine_of(&t, attrs, leaders, 3);
	CHECK_EQ_INT(pc_engine__open(e, 0), -EACCES);
	CHECK_EQ_INT(pc_engine__failure(e)->event, 2);
	CHECK_EQ_INT(pc_engine__failure(e)->errnum, EACCES);
	CHECK_STR(pc_engine__failure(e)->broker,
		  "cpu-migrations (rule 'fake')");
	for (i = 0; i < 3; i++)
		CHECK_EQ_INT(pc_engine__fd(e, i, 0), -1);
	pc_engine__delete(e);
	perfctr_target__delete(t);
}

static char cgroup_paths[2][4200];

static void remove_cgroups(void)
{
	rmdir(cgroup_paths[0]);
	rmdir(cgroup_paths[1]);
}

TEST(engine_runs_keep_to_one_target)
{
	/* On CPU 0: two events of cgroup A, one of cgroup B, two of the
	 * CPU: three runs, each on its own target. */
	struct perf_event_attr attr;
	struct perfctr_target *cpu0, *cg[2];
	struct pc_engine *e;
	char mnt[4096];
	size_t i;
	int err;

	need_fake();
	err = pc_cgroup2_mount(NULL, mnt, sizeof(mnt));
	if (err)
		test_skip("no cgroup2 file system mounted: %s", strerror(-err));
	for (i = 0; i < 2; i++) {
		snprintf(cgroup_paths[i], sizeof(cgroup_paths[i]),
			 "%s/perfctr-many-%zu-%d", mnt, i, (int)getpid());
		if (mkdir(cgroup_paths[i], 0755))
			test_skip("cannot create a cgroup under %s: %s", mnt,
				  strerror(errno));
	}
	atexit(remove_cgroups);
	fake_reset(false);
	sw_attr(&attr, PERF_COUNT_SW_TASK_CLOCK);
	cpu0 = perfctr_target__new_cpus("0");
	cg[0] = perfctr_target__new_cgroup(cgroup_paths[0], "0");
	cg[1] = perfctr_target__new_cgroup(cgroup_paths[1], "0");
	REQUIRE(cpu0 && cg[0] && cg[1]);
	e = pc_engine__new(cpu0);
	REQUIRE(e);
	for (i = 0; i < 5; i++) {
		struct pc_engine_event ev = {
			.attr = &attr, .leader = i,
			.cgroup = i < 2 ? cg[0] : i == 2 ? cg[1] : NULL,
		};

		REQUIRE(pc_engine__add(e, &ev) == (int)i);
	}
	REQUIRE(pc_engine__open(e, 0) == 0);
	for (i = 0; i < 5; i++)
		CHECK(pc_engine__fd(e, i, 0) >= 0);
	CHECK_EQ_INT(fake_count(&fake.opens), 1);
	REQUIRE(fake_count(&fake.batches) == 2);
	CHECK_EQ_INT(fake.log_target[0], PC_BROKER_TARGET_CGROUP);
	CHECK_EQ_INT(fake.log_size[0], 2);
	CHECK_EQ_INT(fake.log_flags[0], 0);
	CHECK_EQ_INT(fake.log_target[1], PC_BROKER_TARGET_CPU);
	CHECK_EQ_INT(fake.log_size[1], 2);
	CHECK_EQ_INT(fake.log_flags[1], 0);
	pc_engine__delete(e);
	for (i = 0; i < 2; i++)
		perfctr_target__delete(cg[i]);
	perfctr_target__delete(cpu0);
}

TEST_MAIN(TEST_CASE(independent_events_in_one_request),
	  TEST_CASE(refused_batch_is_asked_event_by_event),
	  TEST_CASE(broker_without_batches_is_asked_event_by_event),
	  TEST_CASE(no_broker_flag_asks_nothing),
	  TEST_CASE(engine_opens_a_run_of_single_groups_at_once),
	  TEST_CASE(engine_skips_an_unsupported_event_of_a_run),
	  TEST_CASE(engine_names_the_refused_event_of_a_run),
	  TEST_CASE(engine_runs_keep_to_one_target))
