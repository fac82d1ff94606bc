// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Kernel tier: set rotation (core/rotate.h) on exact events, over a
 * counters view (core/counters.h) of plain fds.  The calling
 * thread is the target and switches sets itself, by hand or in the
 * overflow signal handler, which runs on the way back from the syscall
 * that overflowed and before the next one: so every count of every set,
 * the number of runs and the overflows per run are exact.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/overflow.h"
#include "core/rotate.h"
#include "sys/sys.h"
#include "test.h"

#define READ_FMT (PERF_FORMAT_GROUP | PERF_FORMAT_ID |			\
		  PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

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

/* Opened on the calling thread; a leader disabled, a member enabled. */
static int open_tp(const char *name, uint64_t period, int group_fd)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = tp_id(name);
	attr.sample_period = period;
	attr.disabled = group_fd < 0;
	attr.read_format = READ_FMT;
	fd = sys_perf_event_open(&attr, 0, -1, group_fd, 0);
	if (fd < 0)
		test_skip("cannot open syscalls:%s: %s", name, strerror(-fd));
	return fd;
}

/* Closing the last fd of a tracepoint costs 30-50 ms
 * (docs/kernel-notes.md 5). */
static void keep_warm(void)
{
	static int fds[2] = { -1, -1 };

	if (fds[0] < 0) {
		fds[0] = open_tp("sys_enter_getppid", 0, -1);
		fds[1] = open_tp("sys_enter_getpid", 0, -1);
	}
}

/*
 * The counters view (core/counters.h) over plain fds of this thread: one
 * unit, each group a leader fd and member fds, read with READ_FMT.
 */
struct fds_view {
	struct pc_counters c;
	int fd[8];			/* per event */
	uint64_t id[8];
	size_t group[8];		/* per event */
	size_t members[8][8];		/* per group */
	size_t nr_members[8];
	const size_t *member_ptr[8];
	pid_t tid;
	int cpu;
};

static int fv_toggle(void *ctx, size_t g, size_t u, bool on)
{
	struct fds_view *v = ctx;
	int fd = v->fd[v->members[g][0]];

	return on ? sys_perf_enable(fd, false) : sys_perf_disable(fd, false);
}

static int fv_read(void *ctx, size_t g, size_t u, struct pc_group_values *out)
{
	struct fds_view *v = ctx;
	uint64_t buf[3 + 2 * 8];
	ssize_t n = read(v->fd[v->members[g][0]], buf, sizeof(buf));

	if (n < 24)
		return -EIO;
	out->time_enabled = buf[1];
	out->time_running = buf[2];
	for (size_t m = 0; m < v->nr_members[g]; m++) {
		out->present[m] = false;
		for (uint64_t i = 0; i < buf[0]; i++)
			if (buf[4 + 2 * i] == v->id[v->members[g][m]]) {
				out->value[m] = buf[3 + 2 * i];
				out->present[m] = true;
			}
	}
	return 0;
}

static int fv_fd(void *ctx, size_t e, size_t u)
{
	return ((struct fds_view *)ctx)->fd[e];
}

static uint64_t fv_id(void *ctx, size_t e, size_t u)
{
	return ((struct fds_view *)ctx)->id[e];
}

static const struct pc_counters_ops fv_ops = {
	.toggle = fv_toggle, .read = fv_read, .fd = fv_fd, .id = fv_id,
};

/* Event e is fds[e]; group g holds the events with groups[e] == g. */
static void fds_view_init(struct fds_view *v, const int *fds,
			  const size_t *groups, size_t nr_events)
{
	size_t nr_groups = 0;

	memset(v, 0, sizeof(*v));
	v->tid = gettid();
	v->cpu = -1;
	for (size_t e = 0; e < nr_events; e++) {
		size_t g = groups[e];

		v->fd[e] = fds[e];
		REQUIRE(sys_perf_id(fds[e], &v->id[e]) == 0);
		v->group[e] = g;
		v->members[g][v->nr_members[g]++] = e;
		if (g + 1 > nr_groups)
			nr_groups = g + 1;
	}
	for (size_t g = 0; g < nr_groups; g++)
		v->member_ptr[g] = v->members[g];
	v->c = (struct pc_counters){
		.ops = &fv_ops, .ctx = v, .nr_events = nr_events,
		.nr_groups = nr_groups, .nr_units = 1,
		.unit_tid = &v->tid, .unit_cpu = &v->cpu,
		.event_group = v->group, .group_members = v->member_ptr,
		.group_nr_members = v->nr_members,
	};
}

static uint64_t slice_count(struct pc_rotor *r, size_t event)
{
	return pc_rotor__slices(r, event)->count;
}

TEST(manual_switch_exact)
{
	/* Set 0: {getppid, getpid}; set 5: {getppid}. */
	static const uint16_t ids[] = { 0, 5 };
	static const size_t groups[] = { 0, 0, 1 };
	struct pc_rotor *r;
	struct pc_rotor_set_stats st0, st5;
	struct fds_view view;
	uint64_t want_ppid[2] = { 0 }, want_pid = 0;
	int a_lead, a_mem, b_lead;

	keep_warm();
	a_lead = open_tp("sys_enter_getppid", 0, -1);
	a_mem = open_tp("sys_enter_getpid", 0, a_lead);
	b_lead = open_tp("sys_enter_getppid", 0, -1);
	fds_view_init(&view, (int[]){ a_lead, a_mem, b_lead }, groups, 3);
	r = pc_rotor__new(2, ids, &view.c);
	REQUIRE(r);
	REQUIRE(pc_rotor__add_group(r, 0, 0) == 0);
	REQUIRE(pc_rotor__add_group(r, 1, 1) == 0);
	/* A group belongs to one set only. */
	CHECK_EQ_INT(pc_rotor__add_group(r, 0, 1), -EINVAL);
	CHECK_EQ_INT(pc_rotor__add_group(r, 0, 2), -EINVAL);
	CHECK_EQ_INT(pc_rotor__switch(r), -ENOTCONN);
	do_getppid(50);		/* nothing is enabled yet */
	REQUIRE(pc_rotor__start(r) == 0);
	for (long k = 1; k <= 7; k++) {
		size_t set = pc_rotor__active(r);

		CHECK_EQ_U64(set, (size_t)(k - 1) % 2);
		do_getppid(100 * k);
		do_getpid(10 * k);
		want_ppid[set] += 100 * k;
		if (set == 0)
			want_pid += 10 * k;
		if (k < 7)
			REQUIRE(pc_rotor__switch(r) == 0);
	}
	REQUIRE(pc_rotor__stop(r) == 0);
	do_getppid(50);		/* stopped: not counted */
	CHECK_EQ_U64(slice_count(r, 0), want_ppid[0]);
	CHECK_EQ_U64(slice_count(r, 1), want_pid);
	CHECK_EQ_U64(slice_count(r, 2), want_ppid[1]);
	REQUIRE(pc_rotor__set_stats(r, 0, &st0) == 0);
	REQUIRE(pc_rotor__set_stats(r, 1, &st5) == 0);
	CHECK_EQ_U64(st0.runs, 4);
	CHECK_EQ_U64(st5.runs, 3);
	CHECK_EQ_U64(st0.nr_events, 2);
	CHECK_EQ_U64(st5.nr_groups, 1);
	CHECK_EQ_U64(pc_rotor__slices(r, 0)->nr_slices, 4);
	CHECK_EQ_U64(pc_rotor__slices(r, 2)->nr_slices, 3);
	CHECK(st0.active_ns > 0 && st5.active_ns > 0);
	CHECK_EQ_U64(pc_rotor__total_ns(r), st0.unit_ns + st5.unit_ns);
	/* One unit: the longest unit is the only one. */
	CHECK_EQ_U64(st0.active_ns, st0.unit_ns);
	/* The sets' times tile the whole: each event ran only in its set. */
	CHECK_EQ_U64(pc_rotor__slices(r, 0)->time, st0.unit_ns);
	CHECK_EQ_U64(pc_rotor__slices(r, 2)->time, st5.unit_ns);
	CHECK_EQ_U64(pc_rotor__missed(r), 0);
	/* Start again: the set active at stop carries on. */
	REQUIRE(pc_rotor__start(r) == 0);
	do_getppid(30);
	REQUIRE(pc_rotor__stop(r) == 0);
	CHECK_EQ_U64(slice_count(r, 0), want_ppid[0] + 30);
	pc_rotor__delete(r);
	close(a_mem);
	close(a_lead);
	close(b_lead);
}

/* Overflow switching: the overflow module's signal handler calls back. */
struct ovf_ctx {
	struct pc_rotor *rotor;
	struct pc_ovf *ovf;
	size_t event;
	uint64_t seen;
};

static void on_overflow(struct pc_ovf *ovf, uint64_t new_mask,
			const siginfo_t *si, void *arg)
{
	struct ovf_ctx *ctx = arg;
	uint64_t total = pc_ovf__overflows(ovf, 0);

	pc_rotor__overflow(ctx->rotor, ctx->event, total - ctx->seen);
	ctx->seen = total;
}

static struct pc_ovf *watch(int fd, uint64_t period, struct ovf_ctx *ctx)
{
	struct pc_ovf_counter c = { .fd = fd, .period = period, .value_pos = 3 };
	struct pc_ovf_desc d = {
		.read_fd = fd, .read_words = 5, .nr_counters = 1, .counters = &c,
		.signo = SIGRTMIN + 3, .tid = gettid(),
		.notify = on_overflow, .ctx = ctx,
	};
	struct pc_ovf *ovf = pc_ovf__new(&d);

	REQUIRE(ovf);
	return ovf;
}

TEST(switch_after_overflows_exact)
{
	enum { P = 100, NOVF = 3, ROUNDS = 5 };
	static const uint16_t ids[] = { 1, 2 };
	static const size_t groups[] = { 0, 1 };
	struct ovf_ctx ctx[2] = { { 0 } };
	struct pc_rotor_set_stats st[2];
	struct fds_view view;
	struct pc_rotor *r;
	int fds[2];

	keep_warm();
	for (size_t i = 0; i < 2; i++)
		fds[i] = open_tp("sys_enter_getppid", P, -1);
	fds_view_init(&view, fds, groups, 2);
	r = pc_rotor__new(2, ids, &view.c);
	REQUIRE(r);
	for (size_t i = 0; i < 2; i++) {
		REQUIRE(pc_rotor__add_group(r, i, i) == 0);
		REQUIRE(pc_rotor__switch_after(r, i, NOVF) == 0);
		ctx[i].rotor = r;
		ctx[i].event = i;
		ctx[i].ovf = watch(fds[i], P, &ctx[i]);
	}
	REQUIRE(pc_rotor__start(r) == 0);
	/* 2 sets x ROUNDS runs x NOVF overflows x P calls. */
	do_getppid(2L * ROUNDS * NOVF * P + 7);
	REQUIRE(pc_rotor__stop(r) == 0);
	for (size_t i = 0; i < 2; i++)
		REQUIRE(pc_rotor__set_stats(r, i, &st[i]) == 0);
	/* Exactly NOVF overflows per run: 10 switches, the 11th run of
	 * set 1 has only the last 7 calls. */
	CHECK_EQ_U64(slice_count(r, 0), (uint64_t)ROUNDS * NOVF * P + 7);
	CHECK_EQ_U64(slice_count(r, 1), (uint64_t)ROUNDS * NOVF * P);
	CHECK_EQ_U64(st[0].runs, ROUNDS + 1);
	CHECK_EQ_U64(st[1].runs, ROUNDS);
	CHECK_EQ_U64(st[0].overflows, ROUNDS * NOVF);
	CHECK_EQ_U64(st[1].overflows, ROUNDS * NOVF);
	CHECK_EQ_U64(st[1].last_ovfl_mask, 1u << 1);
	/* The 6th run of set 1 has not overflowed yet. */
	CHECK_EQ_U64(st[0].last_ovfl_mask, 0);
	CHECK_EQ_U64(pc_rotor__missed(r), 0);
	for (size_t i = 0; i < 2; i++) {
		pc_ovf__delete(ctx[i].ovf);
		close(fds[i]);
	}
	pc_rotor__delete(r);
}

/*
 * The bound of a rotation's estimate (docs/estimates.md, "What the error
 * cannot show"), in events.  The error is one standard error of the
 * extrapolation; 3 of them, plus one event per slice: a switch falls
 * between two calls of the loop, so a slice's time may hold one call more
 * or fewer than its count.  Nothing else: the two sets are alike (below),
 * so what counting costs the workload is the same in both and biases
 * neither.
 */
static double rotation_bound(const struct perfctr_estimate *est)
{
	return 3 * est->error + (double)est->nr_slices;
}

/*
 * One rotation of two sets that each count getppid, over a loop of
 * getppid calls; each set switches away after P of its own events.  Both
 * sets count the same tracepoint with the same attributes, so the
 * workload runs at one speed whichever set counts.  Sets counting
 * different system calls would not: any CPU-wide counter another process
 * holds on one of them makes that call dearer in one set only, and the
 * estimates then miss by half the difference of speed (6 % beside one
 * such counter: docs/estimates.md), which no spread of the slices shows.
 * Return how many of the two estimates are within their bound, and the
 * worst deviation against its bound in *@worst.
 */
static int rotation_run(double *worst)
{
	enum { P = 1000, CALLS = 80000 };
	int good = 0;
	static const uint16_t ids[] = { 0, 1 };
	static const size_t groups[] = { 0, 1 };
	struct ovf_ctx ctx[2] = { { 0 } };
	struct pc_rotor_set_stats st[2];
	struct fds_view view;
	struct pc_rotor *r;
	double shared = 0;
	int fds[2];

	keep_warm();
	for (size_t i = 0; i < 2; i++)
		fds[i] = open_tp("sys_enter_getppid", P, -1);
	fds_view_init(&view, fds, groups, 2);
	r = pc_rotor__new(2, ids, &view.c);
	REQUIRE(r);
	for (size_t i = 0; i < 2; i++) {
		REQUIRE(pc_rotor__add_group(r, i, i) == 0);
		REQUIRE(pc_rotor__switch_after(r, i, 1) == 0);
		ctx[i].rotor = r;
		ctx[i].event = i;
		ctx[i].ovf = watch(fds[i], P, &ctx[i]);
	}
	REQUIRE(pc_rotor__start(r) == 0);
	do_getppid(CALLS);
	REQUIRE(pc_rotor__stop(r) == 0);
	/* Every call counted once, by one set or the other. */
	CHECK_EQ_U64(slice_count(r, 0) + slice_count(r, 1), CALLS);
	/* A slowdown of the machine (steal time on a VM) seen by one set is
	 * time the other set extrapolates into: share the spread. */
	for (size_t i = 0; i < 2; i++) {
		double v = perfctr_slices__shared_rel_var(pc_rotor__slices(r, i));

		if (v > shared)
			shared = v;
	}
	for (size_t i = 0; i < 2; i++) {
		struct perfctr_estimate est = { .sz = sizeof(est) };
		double dev, bound;

		REQUIRE(pc_rotor__set_stats(r, i, &st[i]) == 0);
		REQUIRE(perfctr_slices__estimate_shared(pc_rotor__slices(r, i),
							pc_rotor__total_ns(r),
							shared, &est) == 0);
		CHECK_EQ_INT(est.status, PERFCTR_ESTIMATE_SCALED);
		CHECK(est.fraction > 0.3 && est.fraction < 0.7);
		dev = fabs(est.value - CALLS);
		bound = rotation_bound(&est);
		if (dev / bound > *worst)
			*worst = dev / bound;
		if (dev > bound)
			fprintf(stderr, "set %zu: estimate %.0f +- %.0f (bound %.0f), truth %d\n",
				i, est.value, est.error, bound, CALLS);
		else
			good++;
	}
	/* Exactly P per run: one run per switch, plus the first. */
	CHECK_EQ_U64(st[0].runs + st[1].runs, CALLS / P + 1);
	CHECK_EQ_U64(st[0].overflows, st[0].runs - (pc_rotor__active(r) == 0));
	for (size_t i = 0; i < 2; i++) {
		pc_ovf__delete(ctx[i].ovf);
		close(fds[i]);
	}
	pc_rotor__delete(r);
	return good;
}

TEST(estimates_from_rotation)
{
	/*
	 * Statistical (the run time of the slices varies with the machine's
	 * load): each estimate must lie within 3 errors (+ 1 event a slice)
	 * of the truth.  The two estimates of a run share its slices and miss
	 * together, so the run is the unit: 2 of 3 runs must have both within
	 * their bound.  Measured (2026-11-27, 2 CPUs shared with other
	 * builds, alone and beside two CPU hogs): no estimate beyond 3 errors
	 * in 1,200, 1 % beyond 2; so a run misses with p < 0.3 % (95 %
	 * confidence) and the case fails with 3p^2 < 0.03 %.  Errors that were
	 * too small would miss in most runs.
	 */
	int good = 0;
	double worst = 0;

	for (int run = 0; run < 3; run++)
		good += rotation_run(&worst) == 2;
	fprintf(stderr, "estimates_from_rotation: %d of 3 runs good, worst |error| %.2f of its bound\n",
		good, worst);
	CHECK(good >= 2);
}

TEST_MAIN(TEST_CASE(manual_switch_exact),
	  TEST_CASE(switch_after_overflows_exact),
	  TEST_CASE(estimates_from_rotation))
