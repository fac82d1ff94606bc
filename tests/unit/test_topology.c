// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr_info_cpu_topology() and perfctr_info_cpu_groups() on a fixture
 * tree of 2 sockets x 2 cores x 2 threads (tests/fixtures/topology-2s:
 * CPU = 4 thread + 2 socket + core), the groups of perfex stat
 * --per-socket, --per-die and --per-core; and perf's fallbacks where a
 * file is missing.
 */
#include <errno.h>

#include <perfctr/info.h>

#include "test.h"

static void fixture_opts(struct perfctr_info_opts *opts)
{
	static char sys[4096];

	snprintf(sys, sizeof(sys), "%s",
		 test_src_path("tests/fixtures/topology-2s/sys"));
	memset(opts, 0, sizeof(*opts));
	opts->sz = sizeof(*opts);
	opts->sysfs_root = sys;
	opts->no_probe = true;
}

TEST(topology_of_each_cpu)
{
	struct perfctr_info_opts opts;
	int cpu;

	fixture_opts(&opts);
	for (cpu = 0; cpu < 8; cpu++) {
		struct perfctr_cpu_topology t = { .sz = sizeof(t) };

		REQUIRE(perfctr_info_cpu_topology(&opts, cpu, &t) == 0);
		CHECK_EQ_INT(t.sz, sizeof(t));
		CHECK_EQ_INT(t.cpu, cpu);
		CHECK_EQ_INT(t.socket, (cpu / 2) % 2);
		CHECK_EQ_INT(t.die, 0);
		CHECK_EQ_INT(t.core, cpu % 2);
	}
}

TEST(missing_files_fall_back)
{
	struct perfctr_info_opts opts;
	struct perfctr_cpu_topology t = { .sz = sizeof(t) };

	fixture_opts(&opts);
	/* CPU 8: a socket, die_id -1, no core_id. */
	REQUIRE(perfctr_info_cpu_topology(&opts, 8, &t) == 0);
	CHECK_EQ_INT(t.socket, 1);
	CHECK_EQ_INT(t.die, 0);
	CHECK_EQ_INT(t.core, 8);
	/* A CPU sysfs does not have at all. */
	REQUIRE(perfctr_info_cpu_topology(&opts, 12, &t) == 0);
	CHECK_EQ_INT(t.cpu, 12);
	CHECK_EQ_INT(t.socket, 0);
	CHECK_EQ_INT(t.die, 0);
	CHECK_EQ_INT(t.core, 12);
}

static void check_groups(enum perfctr_cpu_aggr aggr, const int *cpus,
			 size_t nr, int nr_groups, const size_t *want)
{
	struct perfctr_info_opts opts;
	size_t got[16];
	size_t i;

	fixture_opts(&opts);
	memset(got, 0xff, sizeof(got));
	CHECK_EQ_INT(perfctr_info_cpu_groups(&opts, aggr, cpus, nr, got),
		     nr_groups);
	for (i = 0; i < nr; i++)
		CHECK_EQ_INT(got[i], want[i]);
	/* Nothing written past @nr. */
	CHECK(got[nr] == (size_t)-1);
}

TEST(groups_of_eight_cpus)
{
	static const int all[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	/* S0-C0: 0,4  S0-C1: 1,5  S1-C0: 2,6  S1-C1: 3,7 */
	static const size_t by_core[] = { 0, 1, 2, 3, 0, 1, 2, 3 };
	static const size_t by_socket[] = { 0, 0, 1, 1, 0, 0, 1, 1 };

	check_groups(PERFCTR_CPU_AGGR_CORE, all, 8, 4, by_core);
	check_groups(PERFCTR_CPU_AGGR_DIE, all, 8, 2, by_socket);
	check_groups(PERFCTR_CPU_AGGR_SOCKET, all, 8, 2, by_socket);
}

TEST(groups_of_a_cpu_list)
{
	/* -C 7,2,5: in any order; the groups are numbered by their ids. */
	static const int some[] = { 7, 2, 5 };
	static const size_t by_core[] = { 2, 1, 0 };	/* S1-C1, S1-C0, S0-C1 */
	static const size_t by_socket[] = { 1, 1, 0 };
	/* The real machine's CPUs 0-1: one socket, two cores. */
	static const int two[] = { 0, 1 };
	static const size_t two_cores[] = { 0, 1 };
	static const size_t one_socket[] = { 0, 0 };
	/* CPU 8 has no core_id: a core of its own (core 8 of socket 1). */
	static const int odd[] = { 8, 3, 7 };
	static const size_t odd_cores[] = { 1, 0, 0 };

	check_groups(PERFCTR_CPU_AGGR_CORE, some, 3, 3, by_core);
	check_groups(PERFCTR_CPU_AGGR_SOCKET, some, 3, 2, by_socket);
	check_groups(PERFCTR_CPU_AGGR_CORE, two, 2, 2, two_cores);
	check_groups(PERFCTR_CPU_AGGR_SOCKET, two, 2, 1, one_socket);
	check_groups(PERFCTR_CPU_AGGR_CORE, odd, 3, 2, odd_cores);
}

TEST(bad_arguments)
{
	struct perfctr_info_opts opts;
	struct perfctr_cpu_topology t = { .sz = sizeof(t) };
	struct {
		struct perfctr_cpu_topology t;
		uint64_t future;
	} big;
	const int cpus[] = { 0, -1 };
	size_t group[2];

	fixture_opts(&opts);
	CHECK_EQ_INT(perfctr_info_cpu_topology(&opts, -1, &t), -EINVAL);
	CHECK_EQ_INT(perfctr_info_cpu_topology(&opts, 0, NULL), -EINVAL);
	t.sz = 8;
	CHECK_EQ_INT(perfctr_info_cpu_topology(&opts, 0, &t), -EINVAL);
	/* A newer, larger struct gets its tail zeroed. */
	memset(&big, 0xff, sizeof(big));
	big.t.sz = sizeof(big);
	REQUIRE(perfctr_info_cpu_topology(&opts, 3, &big.t) == 0);
	CHECK_EQ_INT(big.t.socket, 1);
	CHECK_EQ_INT(big.t.core, 1);
	CHECK(big.future == 0);
	CHECK_EQ_INT(perfctr_info_cpu_groups(&opts, 0, cpus, 1, group), -EINVAL);
	CHECK_EQ_INT(perfctr_info_cpu_groups(&opts, 4, cpus, 1, group), -EINVAL);
	CHECK_EQ_INT(perfctr_info_cpu_groups(&opts, PERFCTR_CPU_AGGR_CORE,
					     cpus, 2, group), -EINVAL);
	CHECK_EQ_INT(perfctr_info_cpu_groups(&opts, PERFCTR_CPU_AGGR_CORE,
					     NULL, 1, group), -EINVAL);
	CHECK_EQ_INT(perfctr_info_cpu_groups(&opts, PERFCTR_CPU_AGGR_CORE,
					     cpus, 0, NULL), 0);
}

TEST_MAIN(TEST_CASE(topology_of_each_cpu),
	  TEST_CASE(missing_files_fall_back),
	  TEST_CASE(groups_of_eight_cpus),
	  TEST_CASE(groups_of_a_cpu_list),
	  TEST_CASE(bad_arguments))
