// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Soak: sessions, samplers and vperfctr states opened, used and closed
 * over and over (up to 100,000 each) in one process, with no descriptor
 * and no memory left behind.  Bounded in time: each kind gets
 * SOAK_SECONDS / 3 of wall time (default 45 s in all) and the test says
 * how many cycles fit.  RSS is taken after a warm-up (allocator arenas,
 * caches of sysfs) and may grow by at most 2 MiB over the rest; a leak of
 * even 32 bytes a cycle shows over 100,000 cycles.  task-clock, a
 * software event, keeps cycles cheap (docs/kernel-notes.md 5).  With
 * SOAK_FULL=1 (make check-soak, a CI stage with a budget of its own) every
 * kind must reach all 100,000 cycles.  Under
 * AddressSanitizer the RSS is not checked: freed memory waits in its
 * quarantine (and LeakSanitizer reports real leaks at exit).
 */
#include <string.h>

#include "session_util.h"

enum { CYCLES = 100000, WARMUP = 100 };
#define RSS_SLACK_KB 2048

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static double budget(void)
{
	const char *s = getenv("SOAK_SECONDS");
	double total = s ? atof(s) : 45;

	return (total > 0 ? total : 45) / 3;
}

/* Run @cycle up to CYCLES times within the budget; check fds and RSS. */
static void soak(const char *what, int (*cycle)(void *), void *ctx)
{
	double end = now() + budget();
	long rss0 = 0, rss1;
	int fds0 = 0, fds1, failures = 0, i;

	for (i = 0; i < CYCLES; i++) {
		if (i == WARMUP) {
			fds0 = count_open_fds();
			rss0 = rss_kb();
		}
		if (cycle(ctx))
			failures++;
		if (i > WARMUP && (i & 15) == 0 && now() > end)
			break;
	}
	fds1 = count_open_fds();
	rss1 = rss_kb();
	printf("# %s: %d cycles in %.0f s; fds %d -> %d, RSS %ld -> %ld kB\n",
	       what, i, budget() - (end - now()), fds0, fds1, rss0, rss1);
	CHECK_EQ_INT(failures, 0);
	CHECK(i > WARMUP);
	if (getenv("SOAK_FULL") && atoi(getenv("SOAK_FULL")))
		CHECK_EQ_INT(i, CYCLES);
	CHECK_EQ_INT(fds1, fds0);
#ifndef __SANITIZE_ADDRESS__
	CHECK(rss1 - rss0 <= RSS_SLACK_KB);
#endif
}

static int session_cycle(void *ctx)
{
	struct perfctr_target *self = ctx;
	struct perfctr_session *s = perfctr_session__new(NULL);
	int bad;

	bad = !s || perfctr_session__add_events(s, "{task-clock,page-faults}",
						 NULL) != 2 ||
	      perfctr_session__attach(s, self) || perfctr_session__start(s) ||
	      perfctr_session__read(s) || perfctr_session__stop(s);
	perfctr_session__delete(s);
	return bad;
}

TEST(sessions)
{
	struct perfctr_target *self = perfctr_target__new_self();

	REQUIRE(self);
	soak("sessions", session_cycle, self);
	perfctr_target__delete(self);
}

static int sampler_cycle(void *ctx)
{
	PERFCTR_OPTS(perfctr_sampler_opts, o, .target = ctx, .data_pages = 1);
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK, .sample_period = 100000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID,
	};
	struct perfctr_sampler *s = perfctr_sampler__new(&o);
	int bad;

	bad = !s || perfctr_sampler__add_attr(s, &attr, "task-clock") < 0 ||
	      perfctr_sampler__open(s) || perfctr_sampler__enable(s) ||
	      perfctr_sampler__disable(s);
	perfctr_sampler__delete(s);
	return bad;
}

TEST(samplers)
{
	struct perfctr_target *self = perfctr_target__new_self();

	REQUIRE(self);
	soak("samplers", sampler_cycle, self);
	perfctr_target__delete(self);
}

static int vperfctr_cycle(void *ctx)
{
	struct vperfctr_control c;
	struct perfctr_sum_ctrs sum;
	struct vperfctr *v = vperfctr_open(0, 1);
	int bad;

	(void)ctx;
	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.cpu_control.nractrs = 2;
	c.event[0] = "task-clock";
	c.event[1] = "page-faults";
	bad = !v || vperfctr_control(v, &c) || vperfctr_read(v, &sum, NULL) ||
	      vperfctr_unlink(v);
	if (v)
		vperfctr_close(v);
	return bad;
}

TEST(vperfctr_states)
{
	soak("vperfctr states", vperfctr_cycle, NULL);
}

TEST_MAIN(
	TEST_CASE(sessions),
	TEST_CASE(samplers),
	TEST_CASE(vperfctr_states),
)
