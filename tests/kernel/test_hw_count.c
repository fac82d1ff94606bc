// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hardware tier, counting: exact instruction counts, cycles, events the
 * PMU lacks, kernel multiplexing with scaling, and a group larger than the
 * PMU.  Raw perf_event_open, so these prove the lane itself.  They run in
 * the PMU lane (scripts/pmu-lane/run) and skip where there is no PMU.
 */
#include <sys/wait.h>

#include "hw_lane.h"

#define N_LONG 1000000UL

TEST(instructions_exact_loop)
{
	struct perf_event_attr attr;
	uint64_t c1, c2, c1b, c2b;
	int fd;

	hw_require_lane();
	hw_attr(&attr, PERF_COUNT_HW_INSTRUCTIONS);
	fd = hw_open(&attr, -1);
	REQUIRE(fd >= 0);
	hw_count_loop(fd, 1);		/* warm-up, see hw_lane.h */
	c1 = hw_count_loop(fd, 1);
	c2 = hw_count_loop(fd, N_LONG);
	c1b = hw_count_loop(fd, 1);
	c2b = hw_count_loop(fd, N_LONG);
	close(fd);
	CHECK_EQ_U64(c2 - c1, HW_LOOP_INSNS * (N_LONG - 1));
	CHECK_EQ_U64(c2b - c1b, HW_LOOP_INSNS * (N_LONG - 1));
	/* Under -icount every run counts the same, not just the difference. */
	CHECK_EQ_U64(c1b, c1);
	CHECK_EQ_U64(c2b, c2);
}

TEST(cycles_equal_instructions)
{
	struct perf_event_attr attr;
	uint64_t c1, c2;
	int fd;

	hw_require_lane();
	hw_attr(&attr, PERF_COUNT_HW_CPU_CYCLES);
	fd = hw_open(&attr, -1);
	REQUIRE(fd >= 0);
	hw_count_loop(fd, 1);		/* warm-up, see hw_lane.h */
	c1 = hw_count_loop(fd, 1);
	c2 = hw_count_loop(fd, N_LONG);
	close(fd);
	/* QEMU's -icount shift=0 makes one instruction one cycle. */
	CHECK_EQ_U64(c2 - c1, HW_LOOP_INSNS * (N_LONG - 1));
}

TEST(cycles_and_instructions_in_one_group)
{
	struct perf_event_attr attr;
	struct { uint64_t nr, ena, run, v[2]; } g;
	int leader, member;

	hw_require_lane();
	hw_attr(&attr, PERF_COUNT_HW_CPU_CYCLES);
	attr.read_format |= PERF_FORMAT_GROUP;
	leader = hw_open(&attr, -1);
	REQUIRE(leader >= 0);
	hw_attr(&attr, PERF_COUNT_HW_INSTRUCTIONS);
	attr.disabled = 0;
	member = hw_open(&attr, leader);
	REQUIRE(member >= 0);
	ioctl(leader, PERF_EVENT_IOC_ENABLE, 0);
	hw_loop(N_LONG);
	ioctl(leader, PERF_EVENT_IOC_DISABLE, 0);
	REQUIRE(read(leader, &g, sizeof(g)) == (ssize_t)sizeof(g));
	CHECK_EQ_U64(g.nr, 2);
	CHECK_EQ_U64(g.ena, g.run);
	CHECK(g.v[1] >= HW_LOOP_INSNS * N_LONG);
	CHECK(g.v[1] < HW_LOOP_INSNS * N_LONG + 1000);
	CHECK_EQ_U64(g.v[0], g.v[1]);
	close(member);
	close(leader);
}

TEST(missing_generic_events_not_supported)
{
	static const struct { uint32_t type; uint64_t config; const char *name; } rows[] = {
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "cache-references" },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache-misses" },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches" },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "branch-misses" },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus-cycles" },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "ref-cycles" },
		{ PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D |
		  (PERF_COUNT_HW_CACHE_OP_READ << 8) |
		  (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16), "L1-dcache-loads" },
	};
	struct perf_event_attr attr;
	size_t i;

	hw_require_lane();
	if (hw_armv8_pmu_type() < 0)
		test_skip("the table of missing events is the lane's emulated PMUv3");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int fd;

		hw_attr(&attr, rows[i].config);
		attr.type = rows[i].type;
		fd = hw_open(&attr, -1);
		if (fd >= 0) {
			test_fail(__FILE__, __LINE__, "%s opened on a PMU without it",
				  rows[i].name);
			close(fd);
			continue;
		}
		if (errno != ENOENT && errno != EOPNOTSUPP)
			test_fail(__FILE__, __LINE__, "%s: %s, not ENOENT/EOPNOTSUPP",
				  rows[i].name, strerror(errno));
	}
}

/* More instruction events than counters: the kernel rotates them, each
 * runs part of the time, and value * enabled / running estimates the
 * truth.  The 1 % bound is the kernel's sampling error over ~100 rotations
 * (the lane sees under 0.1 %). */
TEST(kernel_multiplexing_scales)
{
	enum { NEV = 10 };
	const unsigned long n = 25000000UL;
	const double truth = (double)HW_LOOP_INSNS * n;
	struct perf_event_attr attr;
	struct hw_value v;
	int fd[NEV], i, rotated = 0;

	hw_require_lane();
	for (i = 0; i < NEV; i++) {
		hw_attr(&attr, PERF_COUNT_HW_INSTRUCTIONS);
		fd[i] = hw_open(&attr, -1);
		REQUIRE(fd[i] >= 0);
	}
	for (i = 0; i < NEV; i++)
		ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0);
	hw_loop(n);
	for (i = 0; i < NEV; i++)
		ioctl(fd[i], PERF_EVENT_IOC_DISABLE, 0);
	for (i = 0; i < NEV; i++) {
		double scaled, err;

		REQUIRE(hw_read(fd[i], &v) == 0);
		REQUIRE(v.running > 0);
		if (v.running < v.enabled)
			rotated++;
		scaled = (double)v.value * (double)v.enabled / (double)v.running;
		err = (scaled - truth) / truth;
		if (err > 0.01 || err < -0.01)
			test_fail(__FILE__, __LINE__,
				  "event %d: scaled %.0f vs %.0f (%+.3f %%, ran %.1f %%)",
				  i, scaled, truth, err * 100,
				  100.0 * (double)v.running / (double)v.enabled);
		close(fd[i]);
	}
	/* At most 6 programmable counters can count instructions. */
	CHECK(rotated >= NEV - 6);
}

/* The lane's PMU has 6 programmable counters plus the cycle counter: a
 * cycles leader and 6 instruction members fit, a 7th member cannot and
 * the kernel says so at open.  The kernel checks the group only against
 * members that are enabled (or enable_on_exec): disabled members are not
 * counted at open and the group would simply never be scheduled.  So the
 * members are opened enabled and only the leader is toggled. */
TEST(group_larger_than_pmu_fails_at_open)
{
	enum { MEMBERS = 7 };
	struct perf_event_attr attr;
	int leader, fd[MEMBERS], i, ok = 0, err = 0;

	hw_require_lane();
	if (hw_armv8_pmu_type() < 0)
		test_skip("the counter count (6 + 1) is the lane's emulated PMUv3");
	hw_attr(&attr, PERF_COUNT_HW_CPU_CYCLES);
	leader = hw_open(&attr, -1);
	REQUIRE(leader >= 0);
	for (i = 0; i < MEMBERS; i++) {
		hw_attr(&attr, PERF_COUNT_HW_INSTRUCTIONS);
		attr.disabled = 0;
		fd[i] = hw_open(&attr, leader);
		if (fd[i] >= 0)
			ok++;
		else
			err = errno;
	}
	CHECK_EQ_INT(ok, 6);
	CHECK(fd[MEMBERS - 1] < 0);
	CHECK_EQ_INT(err, EINVAL);
	/* The group that opened is schedulable: all of it runs all the time. */
	ioctl(leader, PERF_EVENT_IOC_ENABLE, 0);
	hw_loop(N_LONG);
	ioctl(leader, PERF_EVENT_IOC_DISABLE, 0);
	for (i = 0; i < MEMBERS; i++) {
		struct hw_value v;

		if (fd[i] < 0)
			continue;
		REQUIRE(hw_read(fd[i], &v) == 0);
		CHECK(v.running > 0);
		CHECK_EQ_U64(v.running, v.enabled);
		CHECK(v.value >= HW_LOOP_INSNS * N_LONG);
		CHECK(v.value < HW_LOOP_INSNS * N_LONG + 1000);
	}
	for (i = 0; i < MEMBERS; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	close(leader);
}

/* User-mode instructions of a whole `pcwork insnloop n` process, counted
 * from its exec; UINT64_MAX on failure. */
static uint64_t count_pcwork(unsigned long n)
{
	struct perf_event_attr attr;
	char arg[32];
	int go[2], fd, status;
	struct hw_value v;
	pid_t pid;

	snprintf(arg, sizeof(arg), "%lu", n);
	if (pipe(go))
		return UINT64_MAX;
	pid = fork();
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execl(test_build_path("tests/workload/pcwork"), "pcwork",
		      "insnloop", arg, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	hw_attr(&attr, PERF_COUNT_HW_INSTRUCTIONS);
	attr.enable_on_exec = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
	if (write(go[1], "g", 1) != 1 || fd < 0) {
		close(go[1]);
		waitpid(pid, &status, 0);
		return UINT64_MAX;
	}
	close(go[1]);
	waitpid(pid, &status, 0);
	if (hw_read(fd, &v) || !WIFEXITED(status) || WEXITSTATUS(status))
		v.value = UINT64_MAX;
	close(fd);
	return v.value;
}

/* The fewest instructions of @runs runs of pcwork insnloop @n, and how
 * many runs counted exactly that. */
static uint64_t count_pcwork_min(unsigned long n, int runs, int *at_min)
{
	uint64_t c[5], min = UINT64_MAX;
	int i;

	for (i = 0; i < runs; i++) {
		c[i] = count_pcwork(n);
		if (c[i] < min)
			min = c[i];
	}
	*at_min = 0;
	for (i = 0; i < runs; i++)
		if (c[i] == min)
			(*at_min)++;
		else if (c[i] - min > 16)
			test_fail(__FILE__, __LINE__, "insnloop %lu: run %d counted "
				  "%" PRIu64 ", %" PRIu64 " more than the fewest",
				  n, i, c[i], c[i] - min);
	return min;
}

/* The workload other tiers use (perfex, record) counts exactly too: the
 * whole process, from exec to exit, differs by exactly the loop.  The two
 * lengths have as many digits, because the process's own instructions
 * (argument parsing, start-up) depend on the length of its arguments.
 * A whole process is not quite repeatable to the instruction, though: an
 * interrupt that lands inside one of libc's load-/store-exclusive loops
 * (start-up, stdio and exit take locks) makes it go round again, a few
 * instructions more (the lane saw +2 about once in 150 runs).  So each
 * length runs 3 times: the fewest is the count without a retry, and the
 * difference of the fewest is exact; most runs count exactly the fewest,
 * and none more than a few retries' worth. */
TEST(workload_process_exact)
{
	uint64_t c1, c2;
	int at1, at2;

	hw_require_lane();
	c1 = count_pcwork_min(N_LONG, 3, &at1);
	c2 = count_pcwork_min(2 * N_LONG, 3, &at2);
	REQUIRE(c1 != UINT64_MAX && c2 != UINT64_MAX);
	CHECK_EQ_U64(c2 - c1, HW_LOOP_INSNS * N_LONG);
	CHECK(at1 >= 2);
	CHECK(at2 >= 2);
}

TEST_MAIN(TEST_CASE(instructions_exact_loop),
	  TEST_CASE(cycles_equal_instructions),
	  TEST_CASE(cycles_and_instructions_in_one_group),
	  TEST_CASE(missing_generic_events_not_supported),
	  TEST_CASE(kernel_multiplexing_scales),
	  TEST_CASE(group_larger_than_pmu_fails_at_open),
	  TEST_CASE(workload_process_exact))
