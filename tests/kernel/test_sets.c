// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Event sets, rotation, notifications and sampling controls through the
 * public session API.  The exact cases monitor the calling thread: its
 * overflow signals are handled in this thread before its next system
 * call, so set switches happen at exact counts.
 */
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>

#include "perfctr/set.h"
#include "session_util.h"

static struct perfctr_session *two_sets(const char *a, const char *b, uint16_t id_b,
					unsigned int flags_b, uint64_t timeout)
{
	struct perfctr_session *s = session_with(a, 0);
	PERFCTR_OPTS(perfctr_set_desc, desc, .id = id_b, .flags = flags_b,
		     .timeout_ns = timeout);
	struct perfctr_parse_error err = { .sz = sizeof(err) };

	REQUIRE(perfctr_session__create_set(s, &desc) == 0);
	REQUIRE(perfctr_session__add_events_to_set(s, id_b, b, &err) == 1);
	return s;
}

static struct perfctr_set_info set_info(struct perfctr_session *s, uint16_t id)
{
	struct perfctr_set_info info = { .sz = sizeof(info) };

	REQUIRE(perfctr_session__set_info(s, id, &info) == 0);
	return info;
}

TEST(set_life_cycle)
{
	struct perfctr_session *s = session_with(TP_GETPPID, 0);
	struct perfctr_target *t = perfctr_target__new_self();
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	PERFCTR_OPTS(perfctr_set_desc, desc, .id = 9);

	REQUIRE(t);
	CHECK_EQ_U64(perfctr_session__nr_sets(s), 1);
	CHECK_EQ_INT(perfctr_session__set_id(s, 0), 0);
	CHECK_EQ_INT(perfctr_session__event_set(s, 0), 0);
	CHECK_EQ_INT(perfctr_session__add_events_to_set(s, 9, TP_GETPID, &err), -ENOENT);
	REQUIRE(perfctr_session__create_set(s, &desc) == 0);
	desc.id = 3;
	REQUIRE(perfctr_session__create_set(s, &desc) == 0);
	desc.id = 65535;
	REQUIRE(perfctr_session__create_set(s, &desc) == 0);
	/* Increasing order, whatever the order of creation. */
	CHECK_EQ_U64(perfctr_session__nr_sets(s), 4);
	CHECK_EQ_INT(perfctr_session__set_id(s, 1), 3);
	CHECK_EQ_INT(perfctr_session__set_id(s, 2), 9);
	CHECK_EQ_INT(perfctr_session__set_id(s, 3), 65535);
	CHECK_EQ_INT(perfctr_session__add_events_to_set(s, 9, TP_GETPID, &err), 1);
	CHECK_EQ_INT(perfctr_session__event_set(s, 1), 9);
	CHECK_EQ_INT(perfctr_session__delete_set(s, 0), -EINVAL);
	CHECK_EQ_INT(perfctr_session__delete_set(s, 9), -ENOTEMPTY);
	CHECK_EQ_INT(perfctr_session__delete_set(s, 4), -ENOENT);
	CHECK_EQ_INT(perfctr_session__delete_set(s, 65535), 0);
	CHECK_EQ_U64(perfctr_session__nr_sets(s), 3);
	/* A timeout flag needs a timeout. */
	desc.flags = PERFCTR_SET_SWITCH_TIMEOUT;
	CHECK_EQ_INT(perfctr_session__create_set(s, &desc), -EINVAL);
	/* No policy: both sets count together, no rotation. */
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_session__active_set(s), -ENOTCONN);
	CHECK_EQ_INT(perfctr_session__switch(s), -ENOTCONN);
	desc.flags = 0;
	CHECK_EQ_INT(perfctr_session__create_set(s, &desc), -EBUSY);
	CHECK_EQ_INT(perfctr_session__delete_set(s, 3), -EBUSY);
	REQUIRE(perfctr_session__start(s) == 0);
	do_getppid(100);
	do_getpid(50);
	REQUIRE(perfctr_session__stop(s) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), 100);
	CHECK_EQ_U64(value_of(s, 1), 50);
	{
		struct perfctr_estimate est = { .sz = sizeof(est) };

		REQUIRE(perfctr_session__estimate(s, 1, &est) == 0);
		CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_EXACT);
		CHECK(est.value == 50.0);
	}
	REQUIRE(perfctr_session__detach(s) == 0);
	CHECK_EQ_INT(perfctr_session__delete_set(s, 3), 0);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(switch_after_overflows_sums_exact)
{
	/* Two sets each counting getppid; each switches away after 3
	 * overflows of period 100: every run is exactly 300 calls. */
	struct perfctr_session *s = two_sets(TP_GETPPID, TP_GETPPID, 7, 0, 0);
	struct perfctr_target *t = perfctr_target__new_self();
	struct perfctr_set_info i0, i7;
	struct perfctr_count c0, c1;
	int fds_before = count_open_fds();

	REQUIRE(t);
	REQUIRE(perfctr_session__switch_after(s, 0, 100, 3) == 0);
	REQUIRE(perfctr_session__switch_after(s, 1, 100, 3) == 0);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_session__active_set(s), 0);
	REQUIRE(perfctr_session__start(s) == 0);
	do_getppid(3000 + 42);
	REQUIRE(perfctr_session__stop(s) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0) + value_of(s, 1), 3042);
	CHECK_EQ_U64(value_of(s, 0), 1542);
	CHECK_EQ_U64(value_of(s, 1), 1500);
	i0 = set_info(s, 0);
	i7 = set_info(s, 7);
	CHECK_EQ_U64(i0.runs, 6);
	CHECK_EQ_U64(i7.runs, 5);
	CHECK_EQ_U64(i0.overflows, 15);
	CHECK_EQ_U64(i7.overflows, 15);
	CHECK_EQ_U64(i7.last_ovfl_mask, 1u << 1);
	CHECK_EQ_U64(i0.nr_events, 1);
	CHECK(i0.flags & PERFCTR_SET_SWITCH_OVERFLOW);
	CHECK(i0.active_ns > 0 && i7.active_ns > 0);
	CHECK_EQ_U64(i0.missed_switches, 0);
	/* Each count knows it covered part of the whole time only. */
	REQUIRE(perfctr_session__count(s, 0, &c0) == 0);
	REQUIRE(perfctr_session__count(s, 1, &c1) == 0);
	CHECK(c0.time_running < c0.time_enabled);
	CHECK_EQ_U64(c0.time_enabled, c1.time_enabled);
	CHECK_EQ_U64(c0.time_running + c1.time_running, c0.time_enabled);
	/* Detach and re-attach: the sums and runs continue. */
	REQUIRE(perfctr_session__detach(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), 1542);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	do_getppid(300);
	REQUIRE(perfctr_session__stop(s) == 0);
	REQUIRE(perfctr_session__detach(s) == 0);
	CHECK_EQ_U64(value_of(s, 0) + value_of(s, 1), 3342);
	CHECK_EQ_U64(set_info(s, 0).runs, 7);
	CHECK_EQ_U64(set_info(s, 7).runs, 6);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
	/* Every fd the session opened is closed. */
	CHECK_EQ_INT(count_open_fds(), fds_before);
}

/*
 * The estimates of a rotation (docs/estimates.md).  Statistical: the run
 * time of the slices varies with the machine's load.  An estimate is good
 * when it lies within 3 of its errors of the truth, plus one event a
 * slice (a switch falls between two calls of the loop, so a slice's time
 * may hold one call more or fewer than its count).  Nothing more: the
 * rotating sets are alike, each counts getppid with the same attributes
 * and the same timeout, so what counting costs the workload is the same
 * whichever set counts and biases neither estimate.  Sets counting
 * different calls are not alike: any CPU-wide counter another process
 * holds on one of the calls makes it dearer in one set only, and the
 * estimates miss by half the difference of speed (docs/estimates.md),
 * which no spread of the slices can show.
 *
 * The two estimates of a run share its slices and miss together, so the
 * run is the unit: 2 runs of 3 must have both estimates good.  Measured
 * (2026-11-27, 2 CPUs shared with other builds, alone and beside two CPU
 * hogs): no estimate beyond 3 errors in 1,200, 1 % beyond 2; a run misses
 * with p < 0.3 % (95 % confidence), the case fails with 3p^2 < 0.03 %.
 */
static bool estimate_good(const struct perfctr_estimate *est, double truth,
			  double *worst)
{
	double dev = fabs(est->value - truth);
	double bound = 3 * est->error + (double)est->nr_slices;

	if (dev / bound > *worst)
		*worst = dev / bound;
	if (dev <= bound)
		return true;
	fprintf(stderr, "estimate %.0f +- %.0f (%.1f %% counted, %" PRIu64
		" slices, bound %.0f), truth %.0f\n", est->value, est->error,
		100 * est->fraction, est->nr_slices, bound, truth);
	return false;
}

/* Two sets each counting getppid, each with timeout @timeout. */
static struct perfctr_session *two_timed_sets(uint16_t id_b, uint64_t timeout)
{
	struct perfctr_session *s = two_sets(TP_GETPPID, TP_GETPPID, id_b,
					     PERFCTR_SET_SWITCH_TIMEOUT, timeout);
	PERFCTR_OPTS(perfctr_set_desc, d0, .id = 0, .flags = PERFCTR_SET_SWITCH_TIMEOUT,
		     .timeout_ns = timeout);

	REQUIRE(perfctr_session__create_set(s, &d0) == 0);
	return s;
}

/* One run of the manual case: how many of its two estimates are good. */
static int manual_run(double *worst)
{
	/* A long timeout makes a rotation that only switches when told: then
	 * the runs are exactly the switches. */
	struct perfctr_session *s = two_timed_sets(1, 3600ull * 1000000000);
	struct perfctr_target *t = perfctr_target__new_self();
	struct perfctr_estimate est = { .sz = sizeof(est) };
	int good = 0;

	REQUIRE(t);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	for (int k = 0; k < 20; k++) {
		CHECK_EQ_INT(perfctr_session__active_set(s), k % 2);
		do_getppid(10000);
		REQUIRE(perfctr_session__switch(s) == 0);
	}
	REQUIRE(perfctr_session__stop(s) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), 100000);
	CHECK_EQ_U64(value_of(s, 1), 100000);
	CHECK_EQ_U64(set_info(s, 0).runs, 11);	/* the 11th is empty */
	CHECK_EQ_U64(set_info(s, 1).runs, 10);
	for (size_t e = 0; e < 2; e++) {
		REQUIRE(perfctr_session__estimate(s, e, &est) == 0);
		CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_SCALED);
		CHECK_EQ_U64(est.counted, 100000);
		good += estimate_good(&est, 200000, worst);
	}
	perfctr_session__delete(s);
	perfctr_target__delete(t);
	return good;
}

TEST(manual_switch_and_estimates)
{
	/* Statistical: 2 good runs of 3 (see estimate_good). */
	double worst = 0;
	int good = 0;

	for (int run = 0; run < 3; run++)
		good += manual_run(&worst) == 2;
	fprintf(stderr, "manual_switch_and_estimates: %d of 3 runs good, worst |error| %.2f of its bound\n",
		good, worst);
	CHECK(good >= 2);
}

/* One run of the timeout case: how many of its two estimates are good. */
static int timeout_run(double *worst)
{
	struct perfctr_session *s = two_timed_sets(2, 1000000);
	struct perfctr_target *t = perfctr_target__new_self();
	const long calls = 600000;
	struct perfctr_set_info i0, i2;
	int good = 0;

	REQUIRE(t);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	do_getppid(calls);
	REQUIRE(perfctr_session__stop(s) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	i0 = set_info(s, 0);
	i2 = set_info(s, 2);
	CHECK(i0.runs >= 5);
	CHECK(i0.runs == i2.runs || i0.runs == i2.runs + 1);
	/* Each run lasts about one timeout of this thread's run time (time
	 * off the CPU does not count, so load does not stretch it): on
	 * average well under two. */
	CHECK(i0.active_ns / i0.runs < 2000000);
	CHECK_EQ_U64(value_of(s, 0) + value_of(s, 1), (uint64_t)calls);
	CHECK(value_of(s, 0) < (uint64_t)calls);
	for (size_t e = 0; e < 2; e++) {
		struct perfctr_estimate est = { .sz = sizeof(est) };

		REQUIRE(perfctr_session__estimate(s, e, &est) == 0);
		CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_SCALED);
		good += estimate_good(&est, (double)calls, worst);
	}
	perfctr_session__delete(s);
	perfctr_target__delete(t);
	return good;
}

TEST(timeout_switches_on_run_time)
{
	/*
	 * Two sets switched every 1 ms of this thread's run time, a loop of
	 * getppid calls that both count: runs alternate, and each estimate
	 * is good.  Statistical: 2 good runs of 3 (see estimate_good).
	 */
	double worst = 0;
	int good = 0;

	for (int run = 0; run < 3; run++)
		good += timeout_run(&worst) == 2;
	fprintf(stderr, "timeout_switches_on_run_time: %d of 3 runs good, worst |error| %.2f of its bound\n",
		good, worst);
	CHECK(good >= 2);
}

TEST(notifications_self)
{
	struct perfctr_session *s = two_sets(TP_GETPPID, TP_GETPID, 4, 0, 0);
	struct perfctr_target *t = perfctr_target__new_self();
	PERFCTR_OPTS(perfctr_notify_opts, qopts, .flags = PERFCTR_NOTIFY_NONBLOCK);
	struct perfctr_notify *q;
	struct perfctr_msg msgs[16];
	struct pollfd pfd;
	int ep, n;
	struct epoll_event ev = { .events = EPOLLIN }, out;

	REQUIRE(t);
	REQUIRE(perfctr_session__notify(s, 0, 100, NULL) == 0);
	REQUIRE(perfctr_session__notify(s, 1, 40, NULL) == 0);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	q = perfctr_session__notify_queue(s, &qopts);
	REQUIRE(q);
	ep = epoll_create1(EPOLL_CLOEXEC);
	REQUIRE(epoll_ctl(ep, EPOLL_CTL_ADD, perfctr_notify__fd(q), &ev) == 0);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	pfd = (struct pollfd){ .fd = perfctr_notify__fd(q), .events = POLLIN };
	CHECK_EQ_INT(poll(&pfd, 1, 0), 0);
	do_getppid(1000);		/* 10 overflows of event 0 */
	do_getpid(200);			/* 5 of event 1 */
	REQUIRE(perfctr_session__stop(s) == 0);
	CHECK_EQ_INT(poll(&pfd, 1, 0), 1);
	CHECK_EQ_INT(epoll_wait(ep, &out, 1, 0), 1);
	CHECK_EQ_INT(perfctr_notify__read(q, msgs, sizeof(msgs[0]) - 1), -EINVAL);
	n = (int)perfctr_notify__read(q, msgs, sizeof(msgs));
	REQUIRE(n > 0);
	n /= (int)sizeof(msgs[0]);
	CHECK_EQ_INT(n, 15);
	for (int i = 0; i < n && i < 16; i++) {
		bool first = i < 10;

		CHECK_EQ_U64(msgs[i].type, PERFCTR_MSG_OVFL);
		CHECK_EQ_U64(msgs[i].pid, getpid());
		CHECK_EQ_U64(msgs[i].tid, gettid());
		CHECK_EQ_U64(msgs[i].ovfl_mask, first ? 1 : 2);
		CHECK_EQ_U64(msgs[i].active_set, first ? 0 : 4);
		CHECK(msgs[i].ip != 0);
		CHECK(msgs[i].cpu >= 0);
		if (i)
			CHECK(msgs[i].time >= msgs[i - 1].time);
	}
	CHECK_EQ_INT(epoll_wait(ep, &out, 1, 0), 0);
	CHECK_EQ_U64(perfctr_notify__lost(q), 0);
	close(ep);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}


TEST(blocking_notifications_stop_the_target)
{
	/* Another process, blocking mode: at each of its 5 overflows it is
	 * stopped until we restart it. */
	char *pre[] = { NULL };
	char *post[] = { "getppid", "500", NULL };
	struct workload w;
	struct perfctr_session *s = session_with(TP_GETPPID, 0);
	PERFCTR_OPTS(perfctr_notify_opts, qopts, .flags = PERFCTR_NOTIFY_BLOCK);
	struct perfctr_target *t;
	struct perfctr_notify *q;
	int msgs = 0, stopped = 0, status;

	REQUIRE(perfctr_session__notify(s, 0, 100, NULL) == 0);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	q = perfctr_session__notify_queue(s, &qopts);
	REQUIRE(q);
	workload_spawn(&w, pre, post);
	t = perfctr_target__new_thread(w.pid);
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	(void)!write(w.stdin_fd, "go\n", 3);
	for (int waits = 0; msgs < 5 && waits < 100; waits++) {
		struct pollfd pfd = { .fd = perfctr_notify__fd(q), .events = POLLIN };
		struct perfctr_msg m;
		int rc = poll(&pfd, 1, 5000);

		/* Our own overflow signals interrupt the wait. */
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			break;
		if (perfctr_notify__read(q, &m, sizeof(m)) != sizeof(m))
			continue;
		msgs++;
		CHECK_EQ_U64(m.pid, w.pid);
		CHECK_EQ_U64(m.tid, w.pid);
		CHECK_EQ_U64(m.ovfl_mask, 1);
		for (int i = 0; i < 2000 && test_proc_state(w.pid) != 'T'; i++)
			usleep(500);
		stopped += test_proc_state(w.pid) == 'T';
		CHECK_EQ_INT(perfctr_session__restart(s), 1);
	}
	CHECK_EQ_INT(msgs, 5);
	CHECK_EQ_INT(stopped, 5);
	perfctr_session__restart(s);
	if (msgs != 5)
		kill(w.pid, SIGKILL);
	close(w.stdin_fd);
	waitpid(w.pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), 500);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(sampling_controls_through_session)
{
	/* Long reset after each notified overflow: 100 first, then 300. */
	struct perfctr_session *s = session_with(TP_GETPPID, 0);
	struct perfctr_target *t = perfctr_target__new_self();
	PERFCTR_OPTS(perfctr_notify_opts, qopts, .flags = PERFCTR_NOTIFY_NONBLOCK);
	struct perfctr_sampling ctl = { .sz = sizeof(ctl), .long_period = 300 };
	struct perfctr_msg msgs[8];

	REQUIRE(t);
	REQUIRE(perfctr_session__notify(s, 0, 100, &ctl) == 0);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	REQUIRE(perfctr_session__notify_queue(s, &qopts));
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	do_getppid(100 + 3 * 300 + 299);
	REQUIRE(perfctr_session__stop(s) == 0);
	CHECK_EQ_INT(perfctr_notify__read(perfctr_session__notify_queue(s, NULL),
					  msgs, sizeof(msgs)), 4 * sizeof(msgs[0]));
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), 1299);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(notify_records_group_values)
{
	/* getppid notifies every 100 calls and records itself and getpid
	 * (same group); the thread makes two getpid calls before each
	 * getppid, so at the k-th overflow the values are 100k and 200k. */
	struct perfctr_session *s = session_with("{" TP_GETPPID "," TP_GETPID "},"
						 TP_GETPID, 0);
	struct perfctr_target *t = perfctr_target__new_self();
	PERFCTR_OPTS(perfctr_notify_opts, qopts, .flags = PERFCTR_NOTIFY_NONBLOCK);
	struct perfctr_msg msgs[16];
	uint64_t values[3];
	int n;

	REQUIRE(t);
	CHECK_EQ_INT(perfctr_session__notify_record(s, 0, 3), -EINVAL);
	REQUIRE(perfctr_session__notify(s, 0, 100, NULL) == 0);
	CHECK_EQ_INT(perfctr_session__notify_record(s, 0, 1u << 2), -EINVAL);
	CHECK_EQ_INT(perfctr_session__notify_record(s, 0, 1u << 3), -EINVAL);
	CHECK_EQ_INT(perfctr_session__notify_record(s, 1, 1), -EINVAL);
	REQUIRE(perfctr_session__notify_record(s, 0, 3) == 0);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	REQUIRE(perfctr_session__notify_queue(s, &qopts));
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK_EQ_INT(perfctr_session__notify_record(s, 0, 1), -EBUSY);
	REQUIRE(perfctr_session__start(s) == 0);
	for (int i = 0; i < 1050; i++) {
		do_getpid(2);
		do_getppid(1);
	}
	REQUIRE(perfctr_session__stop(s) == 0);
	n = (int)perfctr_notify__read(perfctr_session__notify_queue(s, NULL),
				      msgs, sizeof(msgs));
	REQUIRE(n > 0);
	n /= (int)sizeof(msgs[0]);
	CHECK_EQ_INT(n, 10);
	for (int k = 1; k <= n && k <= 16; k++) {
		const struct perfctr_msg *m = &msgs[k - 1];

		CHECK_EQ_U64(m->ovfl_mask, 1);
		CHECK(m->seq != 0);
		if (k > 1)
			CHECK_EQ_U64(m->seq, msgs[k - 2].seq + 1);
		values[0] = values[1] = values[2] = 0;
		CHECK_EQ_INT(perfctr_session__msg_values(s, m, values, 3), 2);
		CHECK_EQ_U64(values[0], 100 * (uint64_t)k);
		CHECK_EQ_U64(values[1], 200 * (uint64_t)k);
		CHECK_EQ_U64(values[2], 0);
		/* Too small a buffer: the count, and only what fits. */
		values[1] = 7;
		CHECK_EQ_INT(perfctr_session__msg_values(s, m, values, 1), 2);
		CHECK_EQ_U64(values[1], 7);
	}
	/* A message without recorded values. */
	msgs[0].seq = 0;
	CHECK_EQ_INT(perfctr_session__msg_values(s, &msgs[0], values, 3), -ENOENT);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), 1050);
	CHECK_EQ_U64(value_of(s, 1), 2100);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

/* Both events of a two-set session count only this thread's calls. */
static void filter_own_calls(struct perfctr_session *s, pid_t tid)
{
	char filter[64];

	snprintf(filter, sizeof(filter), "common_pid == %d", (int)tid);
	for (size_t e = 0; e < perfctr_session__nr_events(s); e++)
		REQUIRE(perfctr_session__set_filter(s, e, filter) == 0);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

TEST(cpu_target_switches_on_wall_time_exact_sums)
{
	/*
	 * Every CPU, two sets counting getppid of this thread only, each
	 * switched away after 2 ms of wall time.  The timeout's signal comes
	 * to this thread, the one that attached and makes the calls: a
	 * switch happens between two calls, so the sets' counts add up to
	 * the calls exactly.  While the thread sleeps no task of the target
	 * runs, yet the sets go on switching: per-CPU sets switch on wall
	 * time, not on anybody's run time.
	 */
	struct perfctr_session *s = two_sets(TP_GETPPID, TP_GETPPID, 3,
					     PERFCTR_SET_SWITCH_TIMEOUT, 2000000);
	PERFCTR_OPTS(perfctr_set_desc, d0, .id = 0, .flags = PERFCTR_SET_SWITCH_TIMEOUT,
		     .timeout_ns = 2000000);
	struct perfctr_target *t;
	struct perfctr_set_info i0, i3;
	uint64_t runs_before;
	long calls = 0;

	test_require_root();
	REQUIRE(perfctr_session__create_set(s, &d0) == 0);
	filter_own_calls(s, gettid());
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	t = perfctr_target__new_cpus(NULL);
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	for (int k = 0; k < 20; k++) {
		do_getppid(2000 + k);
		calls += 2000 + k;
	}
	REQUIRE(perfctr_session__read(s) == 0);
	runs_before = set_info(s, 0).runs + set_info(s, 3).runs;
	/* Asleep until 5 more runs: 10 ms of wall time on a quiet machine
	 * (30 naps of 2 ms timeouts in 60 ms), longer when the signals wait
	 * for a loaded CPU; a thread's run time would make none at all.
	 * Waiting for the runs, not for a fixed time, keeps the case free of
	 * the load (deadline 10 s). */
	for (int nap = 0; nap < 1000 && set_info(s, 0).runs + set_info(s, 3).runs <
					  runs_before + 5; nap++)
		sleep_ms(10);
	do_getppid(777);
	calls += 777;
	REQUIRE(perfctr_session__stop(s) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0) + value_of(s, 1), (uint64_t)calls);
	i0 = set_info(s, 0);
	i3 = set_info(s, 3);
	CHECK(i0.runs + i3.runs >= runs_before + 5);
	CHECK(i0.runs == i3.runs || i0.runs == i3.runs + 1);
	/* Each run is about one timeout of wall time (longest CPU).  The
	 * clock ticks every 2 ms whenever the signal is handled (a late
	 * handler shortens the run it starts and lengthens the one it ends),
	 * so the runs but the last add up to at least 2 ms each, less only
	 * the switches' own time: half of that is a bound no load reaches. */
	CHECK(i0.active_ns >= (i0.runs - 1) * 1000000);
	CHECK_EQ_U64(i0.missed_switches, 0);
	/* Counted on the CPUs it ran on, nothing elsewhere. */
	{
		uint64_t sum = 0;

		for (size_t u = 0; u < perfctr_session__nr_units(s); u++)
			sum += unit_value_of(s, 0, u) + unit_value_of(s, 1, u);
		CHECK_EQ_U64(sum, (uint64_t)calls);
	}
	for (size_t e = 0; e < 2; e++) {
		struct perfctr_estimate est = { .sz = sizeof(est) };

		REQUIRE(perfctr_session__estimate(s, e, &est) == 0);
		CHECK(est.status == PERFCTR_ESTIMATE_SCALED ||
		      est.status == PERFCTR_ESTIMATE_NO_ERROR);
		CHECK(est.fraction > 0.0 && est.fraction < 1.0);
	}
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(cpu_list_target_manual_switch_exact_per_set)
{
	/* A CPU list, sets switched by hand between phases of this
	 * thread's calls: each set holds exactly the calls of its phases. */
	struct perfctr_session *s = two_sets(TP_GETPPID, TP_GETPPID, 1,
					     PERFCTR_SET_SWITCH_TIMEOUT,
					     3600ull * 1000000000);
	struct perfctr_target *t;
	uint64_t want[2] = { 0, 0 };
	char cpus[32];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	test_require_root();
	filter_own_calls(s, gettid());
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	snprintf(cpus, sizeof(cpus), ncpu > 1 ? "0-%ld" : "0", ncpu - 1);
	t = perfctr_target__new_cpus(cpus);
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	for (int k = 0; k < 7; k++) {
		int active = perfctr_session__active_set(s);

		CHECK_EQ_INT(active, k % 2);
		do_getppid(100 * (k + 1));
		want[k % 2] += 100 * (k + 1);
		if (k < 6)
			REQUIRE(perfctr_session__switch(s) == 0);
	}
	REQUIRE(perfctr_session__stop(s) == 0);
	do_getppid(50);			/* stopped: not counted */
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), want[0]);
	CHECK_EQ_U64(value_of(s, 1), want[1]);
	CHECK_EQ_U64(set_info(s, 0).runs, 4);
	CHECK_EQ_U64(set_info(s, 1).runs, 3);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

/* Wait until event @idx of @s has counted @want (the workload runs on). */
static bool wait_for_count(struct perfctr_session *s, size_t idx, uint64_t want)
{
	for (int i = 0; i < 5000; i++) {
		if (perfctr_session__read(s) == 0 && value_of(s, idx) >= want)
			return value_of(s, idx) == want;
		usleep(1000);
	}
	return false;
}

TEST(process_target_manual_switch_exact_per_set)
{
	/* Another process (-p): sets switched by hand while it waits between
	 * phases of calls, so each set holds exactly its phases' calls.  It
	 * waits once more before it exits, and the session stops first: a
	 * sanitizer's runtime makes calls of its own at exit. */
	char *pre[] = { NULL };
	char *post[] = { "getppid", "100", "wait", "getppid", "200", "wait",
			 "getppid", "300", "wait", "getppid", "400", "wait", NULL };
	struct perfctr_session *s = two_sets(TP_GETPPID, TP_GETPPID, 2,
					     PERFCTR_SET_SWITCH_TIMEOUT,
					     3600ull * 1000000000);
	struct perfctr_target *t;
	struct workload w;
	uint64_t want[2] = { 0, 0 };
	int status;

	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	workload_spawn(&w, pre, post);
	t = perfctr_target__new_process(w.pid);
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	for (int k = 0; k < 4; k++) {
		size_t set = (size_t)k % 2;

		CHECK_EQ_INT(perfctr_session__active_set(s), set ? 2 : 0);
		(void)!write(w.stdin_fd, "go\n", 3);
		want[set] += 100 * (k + 1);
		CHECK(wait_for_count(s, set, want[set]));
		if (k < 3)
			REQUIRE(perfctr_session__switch(s) == 0);
	}
	REQUIRE(perfctr_session__stop(s) == 0);
	status = workload_finish(&w);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), 400);
	CHECK_EQ_U64(value_of(s, 1), 600);
	CHECK_EQ_U64(set_info(s, 0).runs, 2);
	CHECK_EQ_U64(set_info(s, 2).runs, 2);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

/* "syscalls:sys_enter_getpid" @n times, then @tail. */
static char *many_getpid(int n, const char *tail)
{
	size_t len = (size_t)n * (sizeof(TP_GETPID) + 1) + strlen(tail) + 1;
	char *spec = malloc(len);

	REQUIRE(spec);
	spec[0] = 0;
	for (int i = 0; i < n; i++)
		strcat(strcat(spec, TP_GETPID), ",");
	strcat(spec, tail);
	return spec;
}

TEST(notifications_beyond_64_events)
{
	/* Events 0-63 count getpid; 64 and 65 are the group {getppid,
	 * getpid}.  Event 64 notifies every 100 calls and records 65 and
	 * itself, in that order: at the k-th overflow 200k and 100k. */
	char *spec = many_getpid(64, "{" TP_GETPPID "," TP_GETPID "}");
	struct perfctr_session *s = session_with(spec, 0);
	struct perfctr_target *t = perfctr_target__new_self();
	PERFCTR_OPTS(perfctr_notify_opts, qopts, .flags = PERFCTR_NOTIFY_NONBLOCK);
	struct perfctr_msg msgs[16];
	uint64_t values[2];
	int n;

	free(spec);
	REQUIRE(t);
	REQUIRE(perfctr_session__nr_events(s) == 66);
	REQUIRE(perfctr_session__notify(s, 64, 100, NULL) == 0);
	/* Not in its group; itself without controls has nothing to reset. */
	CHECK_EQ_INT(perfctr_session__notify_record_events(s, 64, (size_t[]){ 3 }, 1),
		     -EINVAL);
	CHECK_EQ_INT(perfctr_session__notify_reset(s, 64, (size_t[]){ 65 }, 1), -EINVAL);
	REQUIRE(perfctr_session__notify_record_events(s, 64, (size_t[]){ 65, 64 }, 2) == 0);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	REQUIRE(perfctr_session__notify_queue(s, &qopts));
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	for (int i = 0; i < 1050; i++) {
		do_getpid(2);
		do_getppid(1);
	}
	REQUIRE(perfctr_session__stop(s) == 0);
	n = (int)perfctr_notify__read(perfctr_session__notify_queue(s, NULL),
				      msgs, sizeof(msgs));
	REQUIRE(n > 0);
	n /= (int)sizeof(msgs[0]);
	CHECK_EQ_INT(n, 10);
	for (int k = 1; k <= n && k <= 16; k++) {
		const struct perfctr_msg *m = &msgs[k - 1];

		CHECK_EQ_U64(m->event, 64);
		CHECK_EQ_U64(m->ovfl_mask, 0);	/* no bit for event 64 */
		CHECK_EQ_INT(perfctr_session__msg_values(s, m, values, 2), 2);
		CHECK_EQ_U64(values[0], 200 * (uint64_t)k);
		CHECK_EQ_U64(values[1], 100 * (uint64_t)k);
	}
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 63), 2100);
	CHECK_EQ_U64(value_of(s, 64), 1050);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(switching_beyond_64_events)
{
	/* Set 0: 64 getpid counters and getppid (event 64); set 7: getppid
	 * (event 65).  Each getppid switches its set away after 3 overflows
	 * of period 100: runs of exactly 300 calls, as with few events. */
	char *spec = many_getpid(64, TP_GETPPID);
	struct perfctr_session *s = two_sets(spec, TP_GETPPID, 7, 0, 0);
	struct perfctr_target *t = perfctr_target__new_self();
	size_t ev[4];

	free(spec);
	REQUIRE(t);
	REQUIRE(perfctr_session__switch_after(s, 64, 100, 3) == 0);
	REQUIRE(perfctr_session__switch_after(s, 65, 100, 3) == 0);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	do_getppid(3000 + 42);
	REQUIRE(perfctr_session__stop(s) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 64), 1542);
	CHECK_EQ_U64(value_of(s, 65), 1500);
	CHECK_EQ_U64(set_info(s, 0).runs, 6);
	CHECK_EQ_U64(set_info(s, 7).runs, 5);
	CHECK_EQ_U64(set_info(s, 7).overflows, 15);
	/* Set 7's last run overflowed (event 65, which has no mask bit);
	 * set 0's last run, the 42 calls, did not. */
	CHECK_EQ_U64(set_info(s, 7).last_ovfl_mask, 0);
	CHECK_EQ_INT(perfctr_session__set_last_overflows(s, 7, ev, 4), 1);
	CHECK_EQ_U64(ev[0], 65);
	CHECK_EQ_INT(perfctr_session__set_last_overflows(s, 0, ev, 4), 0);
	CHECK_EQ_INT(perfctr_session__set_last_overflows(s, 9, ev, 4), -ENOENT);
	/* Kept across a detach. */
	REQUIRE(perfctr_session__detach(s) == 0);
	CHECK_EQ_INT(perfctr_session__set_last_overflows(s, 7, NULL, 0), 1);
	CHECK_EQ_INT(perfctr_session__set_last_overflows(s, 0, NULL, 0), 0);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST_MAIN(TEST_CASE(set_life_cycle),
	  TEST_CASE(switch_after_overflows_sums_exact),
	  TEST_CASE(manual_switch_and_estimates),
	  TEST_CASE(timeout_switches_on_run_time),
	  TEST_CASE(notifications_self),
	  TEST_CASE(blocking_notifications_stop_the_target),
	  TEST_CASE(sampling_controls_through_session),
	  TEST_CASE(notify_records_group_values),
	  TEST_CASE(cpu_target_switches_on_wall_time_exact_sums),
	  TEST_CASE(cpu_list_target_manual_switch_exact_per_set),
	  TEST_CASE(process_target_manual_switch_exact_per_set),
	  TEST_CASE(notifications_beyond_64_events),
	  TEST_CASE(switching_beyond_64_events))
