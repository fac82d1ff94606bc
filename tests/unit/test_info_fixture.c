// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr_info_ext() on a fixture tree of a hybrid machine (an Intel part
 * with cpu_core on CPUs 0-15 and cpu_atom on 16-39, CPUs 4-7 offline, an
 * uncore PMU with a cpumask): the mask sizes, the forbidden CPUs (offline,
 * and those the core PMU does not serve), the core PMU, limits and model.
 * No perf_event_open: the fixture's PMUs are not the running kernel's.
 */
#include <errno.h>

#include <perfctr/info.h>

#include "test.h"

struct mask2 {
	uint32_t nrwords;
	uint32_t mask[2];
};

static void fixture_opts(struct perfctr_info_opts *opts)
{
	static char sys[4096], proc[4096];

	snprintf(sys, sizeof(sys), "%s", test_src_path("tests/fixtures/info-hybrid/sys"));
	snprintf(proc, sizeof(proc), "%s", test_src_path("tests/fixtures/info-hybrid/proc"));
	memset(opts, 0, sizeof(*opts));
	opts->sz = sizeof(*opts);
	opts->sysfs_root = sys;
	opts->procfs_root = proc;
	opts->no_probe = true;
}

TEST(hybrid_info_values)
{
	struct perfctr_info_opts opts;
	struct perfctr_info info = { .sz = sizeof(info) };

	fixture_opts(&opts);
	REQUIRE(perfctr_info_ext(&opts, &info, NULL, NULL) == 0);
	CHECK_EQ_INT(info.nr_cpus, 36);
	CHECK_EQ_INT(info.nr_pmus, 6);
	CHECK_STR(info.core_pmu, "cpu_core");	/* type PERF_TYPE_RAW */
	CHECK_EQ_INT(info.paranoid, 1);
	CHECK_EQ_INT(info.max_sample_rate, 50000);
	CHECK_EQ_INT(info.mlock_kb, 1024);
	CHECK_EQ_INT(info.max_stack, 64);
	CHECK_STR(info.cpu_model, "13th Gen Intel(R) Core(TM) i9-13900K");
	/* Two tracefs mounts, neither at <sysfs>/kernel/tracing: the first. */
	CHECK_STR(info.tracefs, "/mnt/other-tracing");
	/* Nothing probed; the fixture's tracefs is not there to read. */
	CHECK_EQ_INT(info.features, 0);
	CHECK_EQ_INT(info.nr_hw_counters, 0);
}

TEST(hybrid_masks)
{
	struct perfctr_info_opts opts;
	struct mask2 cpus = { .nrwords = 1 }, forbidden = { .nrwords = 2 };

	fixture_opts(&opts);
	/* 40 possible CPUs need 2 words; one is too few. */
	CHECK_EQ_INT(perfctr_info_ext(&opts, NULL, (struct perfctr_cpu_mask *)&cpus,
				      (struct perfctr_cpu_mask *)&forbidden), -EOVERFLOW);
	CHECK_EQ_INT(cpus.nrwords, 2);
	REQUIRE(perfctr_info_ext(&opts, NULL, (struct perfctr_cpu_mask *)&cpus,
				 (struct perfctr_cpu_mask *)&forbidden) == 0);
	/* online 0-3,8-39 */
	CHECK_EQ_U64(cpus.mask[0], 0xffffff0fu);
	CHECK_EQ_U64(cpus.mask[1], 0xffu);
	/* offline 4-7, and 16-39 where cpu_core does not count */
	CHECK_EQ_U64(forbidden.mask[0], 0xffff00f0u);
	CHECK_EQ_U64(forbidden.mask[1], 0xffu);
}

struct walk {
	int n;
	char names[8][64];
	const char *cpus[8];
	char cpus_buf[8][64];
	bool core[8];
	uint32_t type[8], events[8];
};

static int walk_cb(const struct perfctr_pmu_desc *pmu, void *ctx)
{
	struct walk *w = ctx;

	if (w->n >= 8)
		return -E2BIG;
	snprintf(w->names[w->n], sizeof(w->names[0]), "%s", pmu->name);
	w->cpus[w->n] = pmu->cpus ? w->cpus_buf[w->n] : NULL;
	if (pmu->cpus)
		snprintf(w->cpus_buf[w->n], sizeof(w->cpus_buf[0]), "%s", pmu->cpus);
	w->core[w->n] = pmu->core;
	w->type[w->n] = pmu->type;
	w->events[w->n] = pmu->nr_events;
	w->n++;
	return 0;
}

static int stop_cb(const struct perfctr_pmu_desc *pmu, void *ctx)
{
	(void)pmu;
	return ++*(int *)ctx == 2 ? 42 : 0;
}

TEST(hybrid_pmu_walk)
{
	struct perfctr_info_opts opts;
	struct walk w;
	int calls = 0;

	memset(&w, 0, sizeof(w));
	fixture_opts(&opts);
	REQUIRE(perfctr_info_pmus(&opts, walk_cb, &w) == 0);
	REQUIRE(w.n == 6);
	CHECK_STR(w.names[0], "cpu_atom");
	CHECK(w.core[0]);
	CHECK_STR(w.cpus[0], "16-39");
	CHECK_EQ_INT(w.type[0], 10);
	CHECK_STR(w.names[1], "cpu_core");
	CHECK(w.core[1]);
	CHECK_EQ_INT(w.events[1], 3);
	CHECK_STR(w.names[2], "msr");
	CHECK(!w.core[2]);
	CHECK(w.cpus[2] == NULL);
	CHECK_STR(w.names[5], "uncore_imc_0");
	CHECK(!w.core[5]);
	CHECK_STR(w.cpus[5], "0,20");
	/* .scale and .unit describe an event, they are not events. */
	CHECK_EQ_INT(w.events[5], 1);
	/* A non-zero callback value stops the walk and is returned. */
	CHECK_EQ_INT(perfctr_info_pmus(&opts, stop_cb, &calls), 42);
	CHECK_EQ_INT(calls, 2);
}

TEST(bad_arguments)
{
	struct perfctr_info_opts opts;
	struct {
		struct perfctr_info_opts opts;
		uint64_t future;
	} big;

	fixture_opts(&opts);
	opts.sysfs_root = "/nonexistent";
	CHECK_EQ_INT(perfctr_info_pmus(&opts, walk_cb, NULL), -ENOENT);
	memset(&big, 0, sizeof(big));
	fixture_opts(&big.opts);
	big.opts.sz = sizeof(big);
	big.future = 1;
	CHECK_EQ_INT(perfctr_info_ext(&big.opts, NULL, NULL, NULL), -EINVAL);
	big.future = 0;
	CHECK_EQ_INT(perfctr_info_ext(&big.opts, NULL, NULL, NULL), 0);
}

TEST_MAIN(TEST_CASE(hybrid_info_values),
	  TEST_CASE(hybrid_masks),
	  TEST_CASE(hybrid_pmu_walk),
	  TEST_CASE(bad_arguments))
