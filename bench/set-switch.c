// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench/set-switch: what one set switch of our rotation costs, against one
 * raw DISABLE + ENABLE ioctl pair measured in the same run; and the
 * overhead of rotating every 1 ms and 10 ms of the thread's own run time
 * (a task-clock overflow, as the library does it) on a CPU-bound loop,
 * against the bare loop.
 *
 * Built and run by bench/set-switch.  Prints medians of several rounds.
 */
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfctr/target.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/counters.h"
#include "core/engine.h"
#include "core/overflow.h"
#include "core/rotate.h"
#include "sys/sys.h"

#define ROUNDS 7

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static const uint64_t sw_configs[] = {
	PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES,
	PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	PERF_COUNT_SW_PAGE_FAULTS_MAJ, PERF_COUNT_SW_ALIGNMENT_FAULTS,
	PERF_COUNT_SW_EMULATION_FAULTS, PERF_COUNT_SW_DUMMY,
};

static int open_sw(uint64_t config, int group_fd, uint64_t period)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = config;
	attr.sample_period = period;
	attr.disabled = group_fd < 0;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			   PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = sys_perf_event_open(&attr, 0, -1, group_fd, 0);
	if (fd < 0) {
		fprintf(stderr, "set-switch: cannot open a software event: %s\n",
			strerror(-fd));
		exit(1);
	}
	return fd;
}

/* Two sets of one group of @members software events each, opened by the
 * counter engine on the calling thread and rotated through the engine's
 * view of its counters: the path a session's sets take.  The engine is
 * kept until exit (a bench makes three). */
static struct pc_rotor *make_rotor(int members, int *leaders)
{
	static const uint16_t ids[] = { 0, 1 };
	struct perf_event_attr attrs[8];
	struct perfctr_target *t = perfctr_target__new_self();
	struct pc_engine *e = t ? pc_engine__new(t) : NULL;
	struct pc_counters *view = calloc(1, sizeof(*view));
	struct pc_rotor *r;

	if (!e || !view) {
		fprintf(stderr, "set-switch: cannot make an engine\n");
		exit(1);
	}
	for (int s = 0; s < 2; s++) {
		for (int m = 0; m < members; m++) {
			struct perf_event_attr *a = &attrs[s * members + m];
			struct pc_engine_event ev = { .attr = a,
				.leader = (size_t)(s * members) };

			memset(a, 0, sizeof(*a));
			a->size = sizeof(*a);
			a->type = PERF_TYPE_SOFTWARE;
			a->config = sw_configs[s * 4 + m];
			a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
					 PERF_FORMAT_TOTAL_TIME_ENABLED |
					 PERF_FORMAT_TOTAL_TIME_RUNNING;
			if (pc_engine__add(e, &ev) < 0) {
				fprintf(stderr, "set-switch: cannot add an event\n");
				exit(1);
			}
		}
	}
	if (pc_engine__open(e, PC_ENGINE_STRICT) < 0 ||
	    pc_counters__of_engine(view, e, 0) < 0) {
		fprintf(stderr, "set-switch: cannot open the software events\n");
		exit(1);
	}
	r = pc_rotor__new(2, ids, view);
	for (int s = 0; s < 2; s++) {
		pc_rotor__add_group(r, (size_t)s, (size_t)s);
		leaders[s] = pc_engine__leader_fd(e, (size_t)s, 0);
	}
	return r;
}

static double per_op(void (*op)(void *), void *arg, int n)
{
	double t[ROUNDS];

	for (int round = 0; round < ROUNDS; round++) {
		double t0 = now_ns();

		for (int i = 0; i < n; i++)
			op(arg);
		t[round] = (now_ns() - t0) / n;
	}
	return median(t, ROUNDS);
}

static void raw_pair(void *arg)
{
	int *fds = arg;

	sys_perf_disable(fds[0], false);
	sys_perf_enable(fds[1], false);
	sys_perf_disable(fds[1], false);
	sys_perf_enable(fds[0], false);
}

static void rotor_switch2(void *arg)
{
	pc_rotor__switch(arg);
	pc_rotor__switch(arg);
}

static __attribute__((noinline)) uint64_t spin(uint64_t n)
{
	volatile uint64_t acc = 1;

	for (uint64_t i = 0; i < n; i++)
		acc = acc * 2862933555777941757ULL + 3037000493ULL;
	return acc;
}

struct timer_ctx {
	struct pc_rotor *rotor;
};

static void on_tick(struct pc_ovf *ovf, uint64_t mask, const siginfo_t *si,
		    void *arg)
{
	struct timer_ctx *ctx = arg;

	pc_rotor__switch(ctx->rotor);
}

/* Wall time of the spin loop, rotating every @interval_ns of the
 * thread's run time (0: bare loop, no counters). */
static double spin_time(uint64_t iters, uint64_t interval_ns, uint64_t *runs)
{
	struct timer_ctx ctx = { 0 };
	struct pc_ovf *ovf = NULL;
	int leaders[2], clock_fd = -1;
	double t0, t;

	if (interval_ns) {
		struct perf_event_attr attr;
		struct pc_ovf_counter c;
		struct pc_ovf_desc d;

		ctx.rotor = make_rotor(2, leaders);
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_TASK_CLOCK;
		attr.sample_period = interval_ns;
		attr.read_format = PERF_FORMAT_GROUP;
		clock_fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
		c = (struct pc_ovf_counter){ .fd = clock_fd, .period = interval_ns,
					     .value_pos = 1 };
		d = (struct pc_ovf_desc){ .read_fd = clock_fd, .read_words = 2,
			.nr_counters = 1, .counters = &c, .signo = SIGRTMIN + 5,
			.tid = (pid_t)syscall(SYS_gettid), .notify = on_tick,
			.ctx = &ctx };
		ovf = pc_ovf__new(&d);
		pc_rotor__start(ctx.rotor);
	}
	t0 = now_ns();
	spin(iters);
	t = now_ns() - t0;
	if (interval_ns) {
		struct pc_rotor_set_stats a, b;

		pc_rotor__stop(ctx.rotor);
		pc_rotor__set_stats(ctx.rotor, 0, &a);
		pc_rotor__set_stats(ctx.rotor, 1, &b);
		*runs = a.runs + b.runs;
		pc_ovf__delete(ovf);
		close(clock_fd);
		pc_rotor__delete(ctx.rotor);	/* its engine: kept until exit */
	}
	return t;
}

int main(void)
{
	int raw_fds[2], leaders[2];
	struct pc_rotor *r1, *r4;
	double raw, sw1, sw4, bare[ROUNDS], rot1[ROUNDS], rot10[ROUNDS];
	uint64_t iters = 150000000, runs1 = 0, runs10 = 0;

	raw_fds[0] = open_sw(PERF_COUNT_SW_PAGE_FAULTS, -1, 0);
	raw_fds[1] = open_sw(PERF_COUNT_SW_CONTEXT_SWITCHES, -1, 0);
	sys_perf_enable(raw_fds[0], false);
	raw = per_op(raw_pair, raw_fds, 20000) / 2;

	r1 = make_rotor(1, leaders);
	pc_rotor__start(r1);
	sw1 = per_op(rotor_switch2, r1, 20000) / 2;
	pc_rotor__stop(r1);

	r4 = make_rotor(4, leaders);
	pc_rotor__start(r4);
	sw4 = per_op(rotor_switch2, r4, 20000) / 2;
	pc_rotor__stop(r4);

	printf("one raw ioctl pair (DISABLE a + ENABLE b)   %8.0f ns   1.00\n", raw);
	printf("set switch, 2 sets of 1 event               %8.0f ns   %.2f\n", sw1, sw1 / raw);
	printf("set switch, 2 sets of a 4-event group       %8.0f ns   %.2f\n", sw4, sw4 / raw);

	for (int round = 0; round < ROUNDS; round++) {
		bare[round] = spin_time(iters, 0, NULL);
		rot1[round] = spin_time(iters, 1000000, &runs1);
		rot10[round] = spin_time(iters, 10000000, &runs10);
	}
	{
		double b = median(bare, ROUNDS), o1 = median(rot1, ROUNDS),
		       o10 = median(rot10, ROUNDS);

		printf("cpu-bound loop, unmonitored                 %8.1f ms   1.000\n", b / 1e6);
		printf("rotating every 10 ms of run time            %8.1f ms   %.3f  (%lu runs)\n",
		       o10 / 1e6, o10 / b, (unsigned long)runs10);
		printf("rotating every 1 ms of run time             %8.1f ms   %.3f  (%lu runs)\n",
		       o1 / 1e6, o1 / b, (unsigned long)runs1);
	}
	return 0;
}
