// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hardware tier, overflow: signals, i-mode suspend and resume, and
 * sampling, with exact counts.  All on the cycle counter: under QEMU an
 * overflow of a programmable counter (instructions, or cycles placed on
 * one) is noticed only at the next kernel entry, so most of its
 * interrupts are lost; the dedicated cycle counter's overflow is raised
 * on time.  Under -icount shift=0 one instruction is one cycle, so the
 * loop's cycle count is as exact as its instruction count.
 */
#include <signal.h>
#include <sys/mman.h>

#include "hw_lane.h"

#define N_LONG 1000000UL
#define PERIOD 100000UL
/* 4 x 10^6 (+ a few) user-mode cycles at period 10^5. */
#define EXPECTED (HW_LOOP_INSNS * N_LONG / PERIOD)

static volatile sig_atomic_t sig_in, sig_hup, sig_other, sig_wrong_fd;
static volatile int sig_fd;

static void on_sigio(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_fd != sig_fd)
		sig_wrong_fd++;
	else if (si->si_code == POLL_IN)
		sig_in++;
	else if (si->si_code == POLL_HUP)
		sig_hup++;
	else
		sig_other++;
}

static int open_cycles_sampler(uint64_t sample_type, int group_fd)
{
	struct perf_event_attr attr;

	hw_attr(&attr, PERF_COUNT_HW_CPU_CYCLES);
	attr.sample_period = PERIOD;
	attr.sample_type = sample_type;
	attr.wakeup_events = 1;
	return hw_open(&attr, group_fd);
}

/* Overflow signals to this thread, carrying the fd (F_SETSIG). */
static void arm_signals(int fd)
{
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigio;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGIO, &sa, NULL);
	sig_fd = fd;
	sig_in = sig_hup = sig_other = sig_wrong_fd = 0;
	REQUIRE(fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) == 0);
	REQUIRE(fcntl(fd, F_SETSIG, SIGIO) == 0);
	REQUIRE(fcntl(fd, F_SETOWN_EX, &owner) == 0);
}

TEST(overflow_signals_cycles)
{
	struct hw_value v;
	int fd;

	hw_require_lane();
	fd = open_cycles_sampler(PERF_SAMPLE_IP, -1);
	REQUIRE(fd >= 0);
	arm_signals(fd);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	hw_loop(N_LONG);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	REQUIRE(hw_read(fd, &v) == 0);
	CHECK_EQ_U64(sig_in, v.value / PERIOD);
	CHECK_EQ_U64(sig_in, EXPECTED);
	CHECK_EQ_INT(sig_hup + sig_other + sig_wrong_fd, 0);
	close(fd);
}

/* REFRESH(k): k overflows, the last one disables the event and says
 * POLL_HUP. */
TEST(refresh_limits_overflows)
{
	struct hw_value v;
	int fd;

	hw_require_lane();
	fd = open_cycles_sampler(PERF_SAMPLE_IP, -1);
	REQUIRE(fd >= 0);
	arm_signals(fd);
	REQUIRE(ioctl(fd, PERF_EVENT_IOC_REFRESH, 3) == 0);
	hw_loop(N_LONG);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	REQUIRE(hw_read(fd, &v) == 0);
	CHECK_EQ_INT(sig_in, 2);
	CHECK_EQ_INT(sig_hup, 1);
	CHECK_EQ_INT(sig_other + sig_wrong_fd, 0);
	/* Stopped at the third overflow, give or take the instructions
	 * between the interrupt and the disable. */
	CHECK(v.value >= 3 * PERIOD);
	CHECK(v.value < 3 * PERIOD + 1000);
	close(fd);
}

/* The seeds' i-mode counter: it suspends on overflow and the owner
 * resumes it (iresume).  Here a one-shot REFRESH suspends, the next one
 * resumes; while suspended nothing is counted. */
TEST(imode_suspend_and_iresume)
{
	struct hw_value v1, v2, v3;
	int fd;

	hw_require_lane();
	fd = open_cycles_sampler(PERF_SAMPLE_IP, -1);
	REQUIRE(fd >= 0);
	arm_signals(fd);
	REQUIRE(ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) == 0);
	hw_loop(N_LONG);
	REQUIRE(hw_read(fd, &v1) == 0);
	CHECK_EQ_INT(sig_hup, 1);
	CHECK(v1.value >= PERIOD && v1.value < PERIOD + 1000);
	hw_loop(N_LONG);		/* suspended: not counted */
	REQUIRE(hw_read(fd, &v2) == 0);
	CHECK_EQ_U64(v2.value, v1.value);
	REQUIRE(ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) == 0);	/* iresume */
	hw_loop(N_LONG);
	REQUIRE(hw_read(fd, &v3) == 0);
	CHECK_EQ_INT(sig_hup, 2);
	CHECK(v3.value >= 2 * PERIOD && v3.value < 2 * PERIOD + 2000);
	CHECK_EQ_INT(sig_in + sig_other + sig_wrong_fd, 0);
	close(fd);
}

struct ring {
	void *base;
	size_t size;
};

static int count_samples(struct ring *r, int *outside, uint64_t *tid_bad)
{
	struct perf_event_mmap_page *pc = r->base;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const unsigned char *data = (const unsigned char *)r->base + page;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pc->data_tail, mask = r->size - page - 1;
	uint64_t lo = (uint64_t)(uintptr_t)hw_loop_addr();
	uint64_t hi = (uint64_t)(uintptr_t)hw_loop_end_addr() + 4;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int samples = 0;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t ip, pidtid;
		size_t off = tail & mask;

		/* Records never straddle the end here: few and 8-aligned in
		 * a 32 KiB ring. */
		memcpy(&h, data + off, sizeof(h));
		if (h.type == PERF_RECORD_SAMPLE) {
			memcpy(&ip, data + off + sizeof(h), 8);
			memcpy(&pidtid, data + off + sizeof(h) + 8, 8);
			samples++;
			if (ip < lo || ip > hi)
				(*outside)++;
			if ((pid_t)(pidtid >> 32) != tid)
				(*tid_bad)++;
		}
		tail += h.size;
		if (!h.size)
			break;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
	return samples;
}

static void sample_loop(int members)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	struct ring r = { NULL, page * 9 };
	uint64_t tid_bad = 0;
	int leader, fd[6], i, outside = 0, n;

	hw_require_lane();
	leader = open_cycles_sampler(PERF_SAMPLE_IP | PERF_SAMPLE_TID, -1);
	REQUIRE(leader >= 0);
	for (i = 0; i < members; i++) {
		hw_attr(&attr, PERF_COUNT_HW_INSTRUCTIONS);
		attr.disabled = 0;
		fd[i] = hw_open(&attr, leader);
		REQUIRE(fd[i] >= 0);
	}
	r.base = mmap(NULL, r.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      leader, 0);
	REQUIRE(r.base != MAP_FAILED);
	ioctl(leader, PERF_EVENT_IOC_ENABLE, 0);
	hw_loop(N_LONG);
	ioctl(leader, PERF_EVENT_IOC_DISABLE, 0);
	n = count_samples(&r, &outside, &tid_bad);
	CHECK_EQ_INT(n, EXPECTED);
	CHECK_EQ_INT(outside, 0);
	CHECK_EQ_U64(tid_bad, 0);
	munmap(r.base, r.size);
	for (i = 0; i < members; i++)
		close(fd[i]);
	close(leader);
}

TEST(sampling_cycles_exact)
{
	sample_loop(0);
}

TEST(sampling_cycles_with_six_counting_members)
{
	sample_loop(6);
}

TEST_MAIN(TEST_CASE(overflow_signals_cycles),
	  TEST_CASE(refresh_limits_overflows),
	  TEST_CASE(imode_suspend_and_iresume),
	  TEST_CASE(sampling_cycles_exact),
	  TEST_CASE(sampling_cycles_with_six_counting_members))
