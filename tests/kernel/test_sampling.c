// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Kernel tier: sampling controls (core/sampctl.h, perfctr_sampling) on
 * exact events.  The calling thread overflows a getppid tracepoint; the
 * overflow module's callback runs before the next call, applies the next
 * period and records the count at which the kernel overflowed: so the
 * observed periods are the kernel's, and exact.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/overflow.h"
#include "core/sampctl.h"
#include "perfctr/notify.h"
#include "sys/sys.h"
#include "test.h"

#define READ_FMT (PERF_FORMAT_GROUP | PERF_FORMAT_ID |			\
		  PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define MAX_OVF 4096

static uint64_t tp_id(const char *name)
{
	char spec[128];
	long long id;

	test_require_tracefs();
	snprintf(spec, sizeof(spec), "syscalls:%s", name);
	id = test_tracepoint_id(spec);
	if (id < 0)
		test_skip("no syscalls:%s tracepoint", name);
	return (uint64_t)id;
}

static int open_tp(const char *name, uint64_t period, int group_fd)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = tp_id(name);
	attr.sample_period = period;
	attr.read_format = READ_FMT;
	fd = sys_perf_event_open(&attr, 0, -1, group_fd, 0);
	if (fd < 0)
		test_skip("cannot open syscalls:%s: %s", name, strerror(-fd));
	return fd;
}

static void keep_warm(void)
{
	static int fds[2] = { -1, -1 };

	if (fds[0] < 0) {
		fds[0] = open_tp("sys_enter_getppid", 0, -1);
		fds[1] = open_tp("sys_enter_getpid", 0, -1);
	}
}

static uint64_t value_of(int fd)
{
	uint64_t buf[5] = { 0 };

	if (read(fd, buf, sizeof(buf)) != sizeof(buf))
		return 0;
	return buf[3];
}

struct run {
	struct perfctr_sampling ctl;
	uint64_t rng;
	uint64_t base;
	int fd;
	int reset_fd;		/* -1 or a counter reset on each overflow */
	bool alternate_notified;
	size_t nr;
	uint64_t at[MAX_OVF];	/* count at each overflow */
	uint64_t applied[MAX_OVF];
};

static void on_overflow(struct pc_ovf *ovf, uint64_t new_mask,
			const siginfo_t *si, void *arg)
{
	struct run *run = arg;
	uint64_t count = value_of(run->fd), period;
	bool notified = run->alternate_notified && (run->nr % 2 == 1);

	period = perfctr_sampling__next_period(&run->ctl, &run->rng, notified,
					       run->base);
	pc_sampctl_set_period(run->fd, period, true);
	pc_ovf__set_next(ovf, 0, count + period);
	if (run->reset_fd >= 0)
		pc_sampctl_reset(run->reset_fd, 0, true);
	if (run->nr < MAX_OVF) {
		run->at[run->nr] = count;
		run->applied[run->nr] = period;
	}
	run->nr++;
}

static void run_calls(struct run *run, long calls, long getpid_each)
{
	struct pc_ovf_counter c = { .fd = run->fd, .period = run->base, .value_pos = 3 };
	struct pc_ovf_desc d = {
		.read_fd = run->fd, .read_words = 5, .nr_counters = 1, .counters = &c,
		.signo = SIGRTMIN + 4, .tid = gettid(),
		.notify = on_overflow, .ctx = run,
	};
	struct pc_ovf *ovf = pc_ovf__new(&d);

	REQUIRE(ovf);
	for (long i = 0; i < calls; i++) {
		if (getpid_each) {
			syscall(SYS_getpid);
			test_signal_point();
		}
		syscall(SYS_getppid);
		test_signal_point();
	}
	pc_ovf__delete(ovf);
}

TEST(random_periods_in_range)
{
	static struct run run;
	size_t distinct = 0;
	uint64_t prev = 0;

	keep_warm();
	memset(&run, 0, sizeof(run));
	run.ctl = (struct perfctr_sampling){ .sz = sizeof(run.ctl),
		.random_mask = 255, .random_seed = 42 };
	run.rng = run.ctl.random_seed;
	run.base = 1000;
	run.reset_fd = -1;
	run.fd = open_tp("sys_enter_getppid", run.base, -1);
	run_calls(&run, 200000, 0);
	REQUIRE(run.nr > 100 && run.nr < MAX_OVF);
	/* Each overflow came exactly one applied period after the last. */
	CHECK_EQ_U64(run.at[0], 1000);
	for (size_t k = 1; k < run.nr; k++) {
		uint64_t observed = run.at[k] - run.at[k - 1];

		if (observed != run.applied[k - 1] || observed < 1000 || observed > 1255) {
			test_fail(__FILE__, __LINE__, "overflow %zu: period %" PRIu64
				  ", applied %" PRIu64, k, observed, run.applied[k - 1]);
			break;
		}
		if (observed != prev)
			distinct++;
		prev = observed;
	}
	/* Periods differ from one another (255 values possible). */
	CHECK(distinct > run.nr / 2);
	/* And the total is what the periods add up to. */
	CHECK_EQ_U64(value_of(run.fd), 200000);
	close(run.fd);
}

TEST(short_and_long_reset)
{
	static struct run run;

	keep_warm();
	memset(&run, 0, sizeof(run));
	run.ctl = (struct perfctr_sampling){ .sz = sizeof(run.ctl),
		.short_period = 300, .long_period = 700 };
	run.base = 100;
	run.reset_fd = -1;
	run.alternate_notified = true;
	run.fd = open_tp("sys_enter_getppid", run.base, -1);
	/* 100, then 300 (plain), 700 (notified), 300, 700, ... */
	run_calls(&run, 100 + 5 * 1000 + 300, 0);
	CHECK_EQ_U64(run.nr, 1 + 5 * 2 + 1);
	CHECK_EQ_U64(run.at[0], 100);
	for (size_t k = 1; k < run.nr && k < MAX_OVF; k++)
		CHECK_EQ_U64(run.at[k] - run.at[k - 1], k % 2 ? 300 : 700);
	close(run.fd);
}

TEST(reset_other_counters)
{
	static struct run run;
	int other;

	keep_warm();
	memset(&run, 0, sizeof(run));
	run.ctl = (struct perfctr_sampling){ .sz = sizeof(run.ctl), .reset_mask = 2 };
	run.base = 100;
	run.fd = open_tp("sys_enter_getppid", run.base, -1);
	other = open_tp("sys_enter_getpid", 0, -1);
	run.reset_fd = other;
	/* getpid, getppid x 1050: the getpid counter is zeroed at each
	 * 100th getppid and holds the 50 calls after the last. */
	run_calls(&run, 1050, 1);
	CHECK_EQ_U64(run.nr, 10);
	CHECK_EQ_U64(value_of(other), 50);
	close(other);
	close(run.fd);
}

TEST(next_period_rules)
{
	struct perfctr_sampling ctl = { .sz = sizeof(ctl) };
	uint64_t rng = 7, rng2 = 7;

	CHECK_EQ_U64(perfctr_sampling__next_period(NULL, &rng, false, 50), 50);
	CHECK_EQ_U64(perfctr_sampling__next_period(&ctl, &rng, true, 50), 50);
	ctl.short_period = 10;
	CHECK_EQ_U64(perfctr_sampling__next_period(&ctl, &rng, true, 50), 10);
	ctl.long_period = 20;
	CHECK_EQ_U64(perfctr_sampling__next_period(&ctl, &rng, true, 50), 20);
	CHECK_EQ_U64(perfctr_sampling__next_period(&ctl, &rng, false, 50), 10);
	/* The same seed gives the same periods. */
	ctl.random_mask = 0xff;
	for (int i = 0; i < 100; i++)
		CHECK_EQ_U64(perfctr_sampling__next_period(&ctl, &rng, false, 50),
			     perfctr_sampling__next_period(&ctl, &rng2, false, 50));
	/* An older struct without the random fields gets no jitter. */
	ctl.sz = offsetof(struct perfctr_sampling, random_mask);
	CHECK_EQ_U64(perfctr_sampling__next_period(&ctl, &rng, false, 50), 10);
}

TEST_MAIN(TEST_CASE(random_periods_in_range),
	  TEST_CASE(short_and_long_reset),
	  TEST_CASE(reset_other_counters),
	  TEST_CASE(next_period_rules))
