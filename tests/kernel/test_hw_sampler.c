// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hardware tier: the sampler and ring on the cycle counter, in the PMU
 * lane (arm64 guest, -icount shift=0: one instruction is one cycle, so the
 * fixed-length loop's user-mode cycle count is exact).  hw_loop(10^6) at
 * period 10^5 gives exactly 40 samples, each with an IP inside the loop,
 * our tid, and PERF_SAMPLE_PERIOD kept (docs/kernel-notes.md 2 is about
 * software and tracepoint events only).  Skips without a hardware PMU.
 */
#include "hw_lane.h"
#include "perfctr/sampler.h"

#define N_LONG 1000000UL
#define PERIOD 100000UL
#define EXPECTED (HW_LOOP_INSNS * N_LONG / PERIOD)

struct tally {
	const struct perfctr_decoder *dec;
	uint64_t samples, outside, wrong_tid, wrong_period, bad;
	pid_t tid;
};

static int tally_cb(struct perfctr_ring *ring, const struct perf_event_header *h,
		    void *ctx)
{
	struct tally *t = ctx;
	struct perfctr_sample s;

	(void)ring;
	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	s.sz = sizeof(s);
	if (perfctr_decoder__sample(t->dec, h, &s)) {
		t->bad++;
		return 0;
	}
	t->samples++;
	if (s.ip < (uint64_t)(uintptr_t)hw_loop_addr() ||
	    s.ip > (uint64_t)(uintptr_t)hw_loop_end_addr())
		t->outside++;
	if ((pid_t)s.tid != t->tid)
		t->wrong_tid++;
	if (s.period != PERIOD || s.period_from_attr)
		t->wrong_period++;
	return 0;
}

static void cycles_attr(struct perf_event_attr *attr)
{
	hw_attr(attr, PERF_COUNT_HW_CPU_CYCLES);
	attr->read_format = 0;
	attr->sample_period = PERIOD;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
}

/* A process target: one ring per thread (@per_thread), or per CPU with
 * inherit. */
static void sample_process(bool per_thread)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o, .per_thread = per_thread,
		     .data_pages = 8);
	struct perfctr_sampler *s;
	struct tally t;
	int ret;

	hw_require_lane();
	cycles_attr(&attr);
	o.target = perfctr_target__new_process(getpid());
	REQUIRE(o.target);
	s = perfctr_sampler__new(&o);
	REQUIRE(s);
	REQUIRE(perfctr_sampler__add_attr(s, &attr, "cycles:u") == 0);
	ret = perfctr_sampler__open(s);
	perfctr_target__delete((struct perfctr_target *)o.target);
	if (ret) {
		perfctr_sampler__delete(s);
		test_skip("cannot open cycles: %s", strerror(-ret));
	}
	CHECK(perfctr_sampler__attr(s, 0)->sample_type & PERF_SAMPLE_PERIOD);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.tid = (pid_t)syscall(SYS_gettid);
	hw_loop(1000);		/* first-touch faults outside the window */
	REQUIRE(perfctr_sampler__enable(s) == 0);
	hw_loop(N_LONG);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	CHECK(perfctr_sampler__poll(s, 0, tally_cb, &t) >= 0);
	CHECK_EQ_U64(t.samples, EXPECTED);
	CHECK_EQ_U64(t.outside, 0);
	CHECK_EQ_U64(t.wrong_tid, 0);
	CHECK_EQ_U64(t.wrong_period, 0);
	CHECK_EQ_U64(t.bad, 0);
	perfctr_sampler__delete(s);
}

TEST(per_thread_cycles_exact)
{
	sample_process(true);
}

TEST(default_mode_cycles_exact)
{
	sample_process(false);
}

TEST_MAIN(TEST_CASE(per_thread_cycles_exact),
	  TEST_CASE(default_mode_cycles_exact))
