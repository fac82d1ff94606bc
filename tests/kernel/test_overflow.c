// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Kernel tier: the internal overflow module (core/overflow.h) on exact
 * events.  syscalls:sys_enter_getppid counts each syscall(SYS_getppid)
 * exactly, and a signal for a tracepoint overflow is delivered on the way
 * back to user space, before the next call: so both the number of signals
 * and the count at which a suspended group froze are exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/overflow.h"
#include "test.h"

#define N 10000
#define PERIOD 1000

static int getppid_id(void)
{
	long long id;

	test_require_tracefs();
	id = test_tracepoint_id("syscalls:sys_enter_getppid");
	if (id < 0)
		test_skip("no syscalls:sys_enter_getppid tracepoint");
	return (int)id;
}

static int open_tp(uint64_t period, int group_fd, int disabled)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)getppid_id();
	attr.sample_period = period;
	attr.disabled = disabled;
	attr.read_format = PERF_FORMAT_GROUP;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, 0);
	if (fd < 0)
		test_skip("cannot open the getppid tracepoint: %s",
			  strerror(errno));
	return fd;
}

/* One fd held open on the tracepoint for the whole program: closing the
 * last one costs 30-50 ms (docs/kernel-notes.md 5). */
static void keep_tracepoint_warm(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open_tp(0, -1, 1);
}

static struct pc_ovf *current;
static volatile int nr_signals, resume_in_handler;
static volatile uint64_t last_mask;

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	nr_signals++;
	pc_ovf__handle(si, NULL);	/* idempotent after our own handler */
	last_mask = pc_ovf__mask(current);
	if (resume_in_handler)
		pc_ovf__resume(current);
}

static void install(int signo)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_overflow;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	REQUIRE(sigaction(signo, &sa, NULL) == 0);
}


static uint64_t read_value(int fd, size_t idx)
{
	uint64_t buf[8] = { 0 };

	REQUIRE(read(fd, buf, sizeof(buf)) > 0);
	return buf[1 + idx];
}

static void run_single(bool resume, int *signals, uint64_t *count)
{
	struct pc_ovf_counter c;
	struct pc_ovf_desc d;
	int fd, signo = SIGRTMIN + 2;

	keep_tracepoint_warm();
	install(signo);
	fd = open_tp(PERIOD, -1, 1);
	c = (struct pc_ovf_counter){ .fd = fd, .period = PERIOD,
				     .value_pos = 1 };
	memset(&d, 0, sizeof(d));
	d.read_fd = fd;
	d.read_words = 2;
	d.nr_counters = 1;
	d.counters = &c;
	d.signo = signo;
	d.tid = (pid_t)syscall(SYS_gettid);
	d.suspend_fds = &fd;
	d.nr_suspend = 1;
	d.chain = true;
	current = pc_ovf__new(&d);
	REQUIRE(current);
	nr_signals = 0;
	resume_in_handler = resume;
	REQUIRE(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0);
	do_getppid(N);
	REQUIRE(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) == 0);
	*signals = nr_signals;
	*count = read_value(fd, 0);
	CHECK_EQ_U64(last_mask, 1);
	CHECK_EQ_U64(pc_ovf__overflows(current, 0), *signals);
	pc_ovf__delete(current);
	current = NULL;
	close(fd);
	signal(signo, SIG_DFL);
}

TEST(resumed_each_time)
{
	int signals;
	uint64_t count;

	run_single(true, &signals, &count);
	CHECK_EQ_INT(signals, N / PERIOD);
	CHECK_EQ_U64(count, N);
}

TEST(suspended_until_resume)
{
	int signals;
	uint64_t count;

	run_single(false, &signals, &count);
	CHECK_EQ_INT(signals, 1);
	CHECK_EQ_U64(count, PERIOD);	/* frozen at the overflow */
}

/* Two watched counters in one group, periods 1000 and 2500: each signal
 * names exactly the counters whose multiple was reached, also when both
 * overflow in the same system call (at 5000 and 10000): then the first
 * signal names both and the second, stale one is swallowed. */
TEST(mask_names_counters)
{
	struct pc_ovf_counter c[2];
	struct pc_ovf_desc d;
	int lead, member, signo = SIGRTMIN + 3, i;
	uint64_t masks[16], want;

	keep_tracepoint_warm();
	install(signo);
	lead = open_tp(1000, -1, 1);
	member = open_tp(2500, lead, 0);	/* members open enabled */
	c[0] = (struct pc_ovf_counter){ lead, 1000, 1 };
	c[1] = (struct pc_ovf_counter){ member, 2500, 2 };
	memset(&d, 0, sizeof(d));
	d.read_fd = lead;
	d.read_words = 3;
	d.nr_counters = 2;
	d.counters = c;
	d.signo = signo;
	d.tid = (pid_t)syscall(SYS_gettid);
	d.suspend_fds = &lead;
	d.nr_suspend = 1;
	d.chain = true;
	current = pc_ovf__new(&d);
	REQUIRE(current);
	nr_signals = 0;
	resume_in_handler = 1;
	REQUIRE(ioctl(lead, PERF_EVENT_IOC_ENABLE, 0) == 0);
	/* One call at a time, noting the mask each signal left. */
	memset(masks, 0, sizeof(masks));
	for (i = 1; i <= N; i++) {
		int before = nr_signals;

		syscall(SYS_getppid);
		test_signal_point();
		if (nr_signals != before && nr_signals < (int)(sizeof(masks) / sizeof(masks[0])))
			masks[nr_signals] = last_mask | ((uint64_t)i << 8);
	}
	ioctl(lead, PERF_EVENT_IOC_DISABLE, 0);
	/* Overflow points: every 1000 (counter 0) and every 2500 (counter
	 * 1): 12 distinct calls, both at once at 5000 and 10000. */
	CHECK_EQ_INT(nr_signals, 12);
	{
		int k = 0, at;

		for (at = 500; at <= N; at += 500) {
			want = (at % 1000 == 0 ? 1 : 0) | (at % 2500 == 0 ? 2 : 0);
			if (!want)
				continue;
			k++;
			if (k < (int)(sizeof(masks) / sizeof(masks[0])))
				CHECK_EQ_U64(masks[k], want | ((uint64_t)at << 8));
		}
	}
	CHECK_EQ_U64(pc_ovf__overflows(current, 0), 10);
	CHECK_EQ_U64(pc_ovf__overflows(current, 1), 4);
	CHECK_EQ_U64(read_value(lead, 0), N);
	CHECK_EQ_U64(read_value(lead, 1), N);
	pc_ovf__delete(current);
	current = NULL;
	close(member);
	close(lead);
	signal(signo, SIG_DFL);
}

TEST(bad_descriptions)
{
	struct pc_ovf_counter c = { 0, 10, 5 };
	struct pc_ovf_desc d;

	memset(&d, 0, sizeof(d));
	d.read_fd = 0;
	d.read_words = 2;
	d.nr_counters = 1;
	d.counters = &c;
	d.signo = SIGKILL;
	d.tid = getpid();
	errno = 0;
	CHECK(pc_ovf__new(&d) == NULL && errno == EINVAL);
	d.signo = SIGRTMIN;
	errno = 0;	/* value_pos beyond the read */
	CHECK(pc_ovf__new(&d) == NULL && errno == EINVAL);
}

TEST_MAIN(TEST_CASE(resumed_each_time), TEST_CASE(suspended_until_resume),
	  TEST_CASE(mask_names_counters), TEST_CASE(bad_descriptions))
