// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of the notification queue (core/notify.c): no perf events,
 * messages pushed by hand. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/internal.h"
#include "perfctr/notify.h"
#include "test.h"

#define MSG_SIZE sizeof(struct perfctr_msg)

static struct perfctr_notify *new_queue(unsigned int flags, int sig, pid_t tid)
{
	PERFCTR_OPTS(perfctr_notify_opts, opts, .flags = flags, .signal = sig,
		     .signal_tid = tid);
	struct perfctr_notify *q = perfctr_notify__new(&opts);

	REQUIRE(q);
	return q;
}

static struct perfctr_msg msg_n(uint32_t n)
{
	struct perfctr_msg m = {
		.type = PERFCTR_MSG_OVFL, .pid = 1000 + n, .tid = 2000 + n,
		.cpu = (int32_t)n, .active_set = (uint16_t)n, .ip = 0x400000 + n,
		.ovfl_mask = 1ull << (n % 64), .time = n,
	};

	return m;
}

static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

TEST(whole_messages_in_order)
{
	struct perfctr_notify *q = new_queue(PERFCTR_NOTIFY_NONBLOCK, 0, 0);
	struct perfctr_msg buf[5], m;

	for (uint32_t i = 0; i < 3; i++) {
		m = msg_n(i);
		CHECK_EQ_INT(perfctr_notify__push(q, &m), 0);
	}
	CHECK_EQ_INT(perfctr_notify__read(q, buf, 2 * MSG_SIZE), 2 * MSG_SIZE);
	CHECK_EQ_U64(buf[0].tid, 2000);
	CHECK_EQ_U64(buf[1].ovfl_mask, 2);
	/* Asking for more than there is returns what there is. */
	CHECK_EQ_INT(perfctr_notify__read(q, buf, 5 * MSG_SIZE), MSG_SIZE);
	m = msg_n(2);
	CHECK(!memcmp(&buf[0], &m, MSG_SIZE));
	CHECK_EQ_INT(perfctr_notify__read(q, buf, MSG_SIZE), -EAGAIN);
	CHECK_EQ_U64(perfctr_notify__lost(q), 0);
	perfctr_notify__delete(q);
}

TEST(partial_sizes_are_einval)
{
	struct perfctr_notify *q = new_queue(PERFCTR_NOTIFY_NONBLOCK, 0, 0);
	struct perfctr_msg buf[3], m = msg_n(7);
	static const size_t sizes[] = { 0, 1, MSG_SIZE - 1, MSG_SIZE + 1,
					2 * MSG_SIZE - 8, 3 * MSG_SIZE - 1 };

	CHECK_EQ_INT(perfctr_notify__push(q, &m), 0);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		CHECK_EQ_INT(perfctr_notify__read(q, buf, sizes[i]), -EINVAL);
		CHECK_EQ_INT(errno, EINVAL);
	}
	/* Nothing was consumed by the refused reads. */
	CHECK(readable(perfctr_notify__fd(q)));
	CHECK_EQ_INT(perfctr_notify__read(q, buf, 3 * MSG_SIZE), MSG_SIZE);
	CHECK_EQ_U64(buf[0].ip, 0x400007);
	/* read(2) on the fd itself also sees whole messages. */
	CHECK_EQ_INT(perfctr_notify__push(q, &m), 0);
	CHECK_EQ_INT(perfctr_notify__push(q, &m), 0);
	CHECK_EQ_INT(read(perfctr_notify__fd(q), buf, 3 * MSG_SIZE), 2 * MSG_SIZE);
	perfctr_notify__delete(q);
}

TEST(poll_and_epoll_readiness)
{
	struct perfctr_notify *q = new_queue(PERFCTR_NOTIFY_NONBLOCK, 0, 0);
	int fd = perfctr_notify__fd(q), ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct perfctr_msg m = msg_n(1), buf[2];
	fd_set set;
	struct timeval tv = { 0, 0 };

	REQUIRE(ep >= 0);
	REQUIRE(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
	CHECK(!readable(fd));
	CHECK_EQ_INT(epoll_wait(ep, &out, 1, 0), 0);
	CHECK_EQ_INT(perfctr_notify__push(q, &m), 0);
	CHECK_EQ_INT(perfctr_notify__push(q, &m), 0);
	CHECK(readable(fd));
	CHECK_EQ_INT(epoll_wait(ep, &out, 1, 0), 1);
	FD_ZERO(&set);
	FD_SET(fd, &set);
	CHECK_EQ_INT(select(fd + 1, &set, NULL, NULL, &tv), 1);
	/* Level-triggered: still readable while one message is left. */
	CHECK_EQ_INT(perfctr_notify__read(q, buf, MSG_SIZE), MSG_SIZE);
	CHECK(readable(fd));
	CHECK_EQ_INT(epoll_wait(ep, &out, 1, 0), 1);
	CHECK_EQ_INT(perfctr_notify__read(q, buf, MSG_SIZE), MSG_SIZE);
	CHECK(!readable(fd));
	CHECK_EQ_INT(epoll_wait(ep, &out, 1, 0), 0);
	close(ep);
	perfctr_notify__delete(q);
}

static void *push_later(void *arg)
{
	struct perfctr_notify *q = arg;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct perfctr_msg m = msg_n(9);

	nanosleep(&ts, NULL);
	perfctr_notify__push(q, &m);
	return NULL;
}

TEST(blocking_read_waits)
{
	struct perfctr_notify *q = new_queue(0, 0, 0);
	struct perfctr_msg buf[4];
	pthread_t thread;

	REQUIRE(pthread_create(&thread, NULL, push_later, q) == 0);
	CHECK_EQ_INT(perfctr_notify__read(q, buf, sizeof(buf)), MSG_SIZE);
	CHECK_EQ_U64(buf[0].tid, 2009);
	pthread_join(thread, NULL);
	perfctr_notify__delete(q);
}

TEST(full_queue_counts_lost)
{
	struct perfctr_notify *q = new_queue(PERFCTR_NOTIFY_NONBLOCK, 0, 0);
	struct perfctr_msg m = msg_n(3), buf[64];
	int pushed = 0, ret;
	long total = 0;

	while ((ret = perfctr_notify__push(q, &m)) == 0 && pushed < 1000000)
		pushed++;
	CHECK_EQ_INT(ret, -EAGAIN);
	/* The default capacity holds at least 1024 messages. */
	CHECK(pushed >= 1024);
	CHECK_EQ_U64(perfctr_notify__lost(q), 1);
	CHECK_EQ_INT(perfctr_notify__push(q, &m), -EAGAIN);
	CHECK_EQ_U64(perfctr_notify__lost(q), 2);
	while ((ret = (int)perfctr_notify__read(q, buf, sizeof(buf))) > 0)
		total += ret;
	CHECK_EQ_INT(total, (long)pushed * (long)MSG_SIZE);
	perfctr_notify__delete(q);
}

static volatile sig_atomic_t sig_count, sig_fd, sig_code;

static void on_signal(int sig, siginfo_t *info, void *uc)
{
	sig_count++;
	sig_fd = info->si_fd;
	sig_code = info->si_code;
}

TEST(signal_on_arrival)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO }, old;
	struct perfctr_notify *q;
	struct perfctr_msg m = msg_n(4), buf[1];

	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGRTMIN + 1, &sa, &old) == 0);
	q = new_queue(PERFCTR_NOTIFY_NONBLOCK, SIGRTMIN + 1, gettid());
	sig_count = 0;
	CHECK_EQ_INT(perfctr_notify__push(q, &m), 0);
	CHECK(sig_count >= 1);
	CHECK_EQ_INT(sig_fd, perfctr_notify__fd(q));
	CHECK_EQ_INT(sig_code, POLL_IN);
	CHECK_EQ_INT(perfctr_notify__read(q, buf, MSG_SIZE), MSG_SIZE);
	perfctr_notify__delete(q);
	sigaction(SIGRTMIN + 1, &old, NULL);

	/* SIGKILL cannot be a notification signal. */
	{
		PERFCTR_OPTS(perfctr_notify_opts, opts, .signal = SIGKILL);

		CHECK(!perfctr_notify__new(&opts) && errno == EINVAL);
	}
}

TEST(block_mode_stops_until_restart)
{
	struct perfctr_notify *q = new_queue(PERFCTR_NOTIFY_BLOCK | PERFCTR_NOTIFY_NONBLOCK, 0, 0);
	struct perfctr_msg m = msg_n(5), buf[2];
	int status;
	pid_t child = fork();

	REQUIRE(child >= 0);
	if (child == 0) {
		for (;;)
			pause();
	}
	m.pid = (uint32_t)child;
	CHECK_EQ_INT(perfctr_notify__push(q, &m), 0);
	/* The child is stopped by the time the message can be read. */
	CHECK_EQ_INT(waitpid(child, &status, WUNTRACED), child);
	CHECK(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
	CHECK_EQ_INT(perfctr_notify__read(q, buf, sizeof(buf)), MSG_SIZE);
	CHECK_EQ_INT(perfctr_notify__restart(q), 1);
	CHECK_EQ_INT(waitpid(child, &status, WCONTINUED), child);
	CHECK(WIFCONTINUED(status));
	/* Nothing left to restart. */
	CHECK_EQ_INT(perfctr_notify__restart(q), 0);

	/* The calling process itself is never stopped. */
	m.pid = (uint32_t)getpid();
	CHECK_EQ_INT(perfctr_notify__push(q, &m), 0);
	CHECK_EQ_INT(perfctr_notify__restart(q), 0);

	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	perfctr_notify__delete(q);
}

TEST(bad_options)
{
	PERFCTR_OPTS(perfctr_notify_opts, opts, .flags = 1u << 20);

	CHECK(!perfctr_notify__new(&opts) && errno == EINVAL);
	opts.flags = 0;
	opts.signal = -1;
	CHECK(!perfctr_notify__new(&opts) && errno == EINVAL);
}

TEST_MAIN(TEST_CASE(whole_messages_in_order),
	  TEST_CASE(partial_sizes_are_einval),
	  TEST_CASE(poll_and_epoll_readiness),
	  TEST_CASE(blocking_read_waits),
	  TEST_CASE(full_queue_counts_lost),
	  TEST_CASE(signal_on_arrival),
	  TEST_CASE(block_mode_stops_until_restart),
	  TEST_CASE(bad_options))
