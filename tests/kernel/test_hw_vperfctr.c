// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hardware tier, the library's self-monitoring path for real: vperfctr
 * counters on the armv8 PMU, read in user space by vperfctr_read_fast()
 * (the library's own page reader and mrs instructions), compared with
 * read(2); the fallback when perf_user_access = 0; i-mode suspend and
 * iresume on the cycle counter (QEMU raises its overflow on time, unlike
 * the programmable counters', see docs/pmu-lane.md).  Runs in the PMU lane
 * and skips elsewhere.
 */
#include <signal.h>

#include "hw_lane.h"
#include "perfctr/perfctr.h"

#define N_LONG 1000000UL
#define PERIOD 100000UL

static struct vperfctr *open_with(const struct perf_event_attr *a0,
				  const struct perf_event_attr *a1)
{
	struct vperfctr_control c;
	struct vperfctr *v;

	perfctr_set_print(NULL);
	v = vperfctr_open(0, 1);
	REQUIRE(v);
	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.cpu_control.nractrs = a1 ? 2 : 1;
	c.attr[0] = a0;
	c.attr[1] = a1;
	if (vperfctr_control(v, &c) < 0) {
		int err = errno;

		vperfctr_unlink(v);
		vperfctr_close(v);
		HW_ABORT("control: %s", strerror(err));
	}
	return v;
}

static void close_v(struct vperfctr *v)
{
	vperfctr_unlink(v);
	vperfctr_close(v);
}

/* Loop between two library reads; never inlined, see hw_lane.h. */
static __attribute__((noinline)) uint64_t fast_count_loop(struct vperfctr *v,
							  unsigned int i,
							  unsigned long n,
							  int *how)
{
	struct perfctr_sum_ctrs a, b;
	int r1, r2;

	r1 = vperfctr_read_fast(v, &a);
	hw_loop(n);
	r2 = vperfctr_read_fast(v, &b);
	*how = r1 == r2 ? r1 : -1;
	return b.pmc[i] - a.pmc[i];
}

/* User-space reads bracket a read(), and count the loop exactly; @want_how
 * is 1 (user space) or 0 (read() fallback). */
static void check_counter(struct vperfctr *v, unsigned int i, int want_how)
{
	struct perfctr_sum_ctrs before, mid, after;
	uint64_t d1, d2;
	int how;

	CHECK_EQ_INT(vperfctr_read_fast(v, &before), want_how);
	REQUIRE(vperfctr_read(v, &mid, NULL) == 0);
	CHECK_EQ_INT(vperfctr_read_fast(v, &after), want_how);
	CHECK(before.pmc[i] <= mid.pmc[i]);
	CHECK(mid.pmc[i] <= after.pmc[i]);
	CHECK(after.pmc[i] - before.pmc[i] < 20000);
	fast_count_loop(v, i, 1, &how);		/* warm-up */
	d1 = fast_count_loop(v, i, 1, &how);
	CHECK_EQ_INT(how, want_how);
	d2 = fast_count_loop(v, i, N_LONG, &how);
	CHECK_EQ_INT(how, want_how);
	CHECK_EQ_U64(d2 - d1, HW_LOOP_INSNS * (N_LONG - 1));
}

TEST(fast_read_32bit_counter)
{
	struct perf_event_attr a;
	struct vperfctr *v;
	uint64_t one;

	hw_require_lane();
	hw_set_user_access(1);
	hw_armv8_attr(&a, ARMV8_INST_RETIRED, ARMV8_CONFIG1_RDPMC);
	v = open_with(&a, NULL);
	check_counter(v, 0, 1);
	CHECK_EQ_INT(vperfctr_read_pmc(v, 0, &one), 1);
	close_v(v);
	hw_restore_user_access();
}

TEST(fast_read_64bit_cycle_counter)
{
	struct perf_event_attr a;
	struct vperfctr *v;

	hw_require_lane();
	hw_set_user_access(1);
	hw_armv8_attr(&a, ARMV8_CPU_CYCLES, ARMV8_CONFIG1_RDPMC | ARMV8_CONFIG1_LONG);
	v = open_with(&a, NULL);
	check_counter(v, 0, 1);		/* -icount shift=0: a cycle per insn */
	close_v(v);
	hw_restore_user_access();
}

/* Both in one pass, and the counts with times (cap_user_time). */
TEST(fast_read_group)
{
	struct perf_event_attr a0, a1;
	struct perfctr_count counts[2];
	struct vperfctr *v;

	hw_require_lane();
	hw_set_user_access(1);
	hw_armv8_attr(&a0, ARMV8_INST_RETIRED, ARMV8_CONFIG1_RDPMC);
	hw_armv8_attr(&a1, ARMV8_CPU_CYCLES, ARMV8_CONFIG1_RDPMC | ARMV8_CONFIG1_LONG);
	v = open_with(&a0, &a1);
	check_counter(v, 0, 1);
	check_counter(v, 1, 1);
	CHECK_EQ_INT(vperfctr_read_counts(v, counts, 2), 2);
	CHECK(counts[0].time_enabled > 0);
	CHECK(counts[0].time_running == counts[0].time_enabled);
	CHECK(counts[1].value > counts[0].value / 2);
	close_v(v);
	hw_restore_user_access();
}

/* The event layer's generic name, with the rdpmc bit set by the library. */
TEST(fast_read_event_spec)
{
	struct vperfctr_control c;
	struct vperfctr *v;

	hw_require_lane();
	hw_set_user_access(1);
	perfctr_set_print(NULL);
	v = vperfctr_open(0, 1);
	REQUIRE(v);
	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.cpu_control.nractrs = 1;
	c.event[0] = "instructions:u";
	REQUIRE(vperfctr_control(v, &c) == 0);
	check_counter(v, 0, 1);
	close_v(v);
	hw_restore_user_access();
}

/* perf_user_access = 0: the page has index 0, the library falls back to
 * read() (a user-space read would trap) and still counts exactly. */
TEST(fallback_without_user_access)
{
	struct perf_event_attr a;
	struct vperfctr *v;

	hw_require_lane();
	hw_set_user_access(0);
	hw_armv8_attr(&a, ARMV8_INST_RETIRED, ARMV8_CONFIG1_RDPMC);
	v = open_with(&a, NULL);
	check_counter(v, 0, 0);
	close_v(v);
	hw_restore_user_access();
}

/* i-mode on the cycle counter. */
static struct vperfctr *ivp;
static volatile int nr_signals, resume;
static volatile unsigned int bad_mask;

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (vperfctr_si_pmc_ovf_mask(si) != 1)
		bad_mask++;
	nr_signals++;
	if (resume)
		vperfctr_iresume(ivp);
}

static void imode_cycles(bool do_resume, int *signals,
			 struct perfctr_sum_ctrs *s1, struct perfctr_sum_ctrs *s2)
{
	struct vperfctr_control c;
	struct perf_event_attr a;
	struct sigaction sa;
	int signo = SIGRTMIN + 1;

	hw_require_lane();
	perfctr_set_print(NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_overflow;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	REQUIRE(sigaction(signo, &sa, NULL) == 0);
	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES);
	a.disabled = 0;
	a.read_format = 0;
	ivp = vperfctr_open(0, 1);
	REQUIRE(ivp);
	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.si_signo = signo;
	c.cpu_control.nrictrs = 1;
	c.cpu_control.ireset[0] = -(int)PERIOD;
	c.attr[0] = &a;
	nr_signals = 0;
	bad_mask = 0;
	resume = do_resume;
	REQUIRE(vperfctr_control(ivp, &c) == 0);
	hw_loop(N_LONG);
	REQUIRE(vperfctr_read(ivp, s1, NULL) == 0);
	hw_loop(N_LONG);
	REQUIRE(vperfctr_read(ivp, s2, NULL) == 0);
	*signals = nr_signals;
	close_v(ivp);
	ivp = NULL;
	signal(signo, SIG_DFL);
}

TEST(imode_cycles_resumed_each_time)
{
	struct perfctr_sum_ctrs s1, s2;
	int signals;

	imode_cycles(true, &signals, &s1, &s2);
	/* 2 x 4 x 10^6 user cycles, plus the handlers' and the library's. */
	CHECK_EQ_U64(signals, s2.pmc[0] / PERIOD);
	CHECK_EQ_INT(signals, 2 * HW_LOOP_INSNS * N_LONG / PERIOD);
	CHECK_EQ_INT(bad_mask, 0);
}

TEST(imode_cycles_suspended_until_iresume)
{
	struct perfctr_sum_ctrs s1, s2;
	int signals;

	imode_cycles(false, &signals, &s1, &s2);
	CHECK_EQ_INT(signals, 1);
	/* Suspended at the overflow, give or take the user instructions of
	 * the signal delivery before the handler's DISABLE. */
	CHECK(s1.pmc[0] >= PERIOD);
	CHECK(s1.pmc[0] < PERIOD + 5000);
	CHECK_EQ_U64(s2.pmc[0], s1.pmc[0]);	/* frozen */
	CHECK_EQ_INT(bad_mask, 0);
}

TEST_MAIN(TEST_CASE(fast_read_32bit_counter),
	  TEST_CASE(fast_read_64bit_cycle_counter),
	  TEST_CASE(fast_read_group),
	  TEST_CASE(fast_read_event_spec),
	  TEST_CASE(fallback_without_user_access),
	  TEST_CASE(imode_cycles_resumed_each_time),
	  TEST_CASE(imode_cycles_suspended_until_iresume))
