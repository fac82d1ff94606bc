// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hardware tier: event specifications parsed from the machine's own sysfs
 * (named events of the core PMU, pmu/term/ syntax through its format/
 * files, raw codes, generic names) count a fixed-length loop exactly.
 * Runs in the PMU lane (arm64, emulated PMUv3); skips elsewhere.
 */
#include "common/internal.h"
#include "hw_lane.h"
#include "perfctr/event.h"

#define LOOP_LONG 100000ul

static void check_spec(const char *spec)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	struct perf_event_attr attr;
	uint64_t c1, cn;
	int fd;

	REQUIRE(l);
	if (perfctr_evlist__parse(l, spec, NULL, &err) != 1) {
		test_fail(__FILE__, __LINE__, "'%s': %s (%s)", spec, err.message,
			  err.hint);
		perfctr_evlist__delete(l);
		return;
	}
	attr = *perfctr_evlist__attr(l, 0);
	attr.disabled = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = hw_open(&attr, -1);
	if (fd < 0) {
		test_fail(__FILE__, __LINE__, "open '%s' (type %u config %#llx): %s",
			  spec, attr.type, (unsigned long long)attr.config,
			  strerror(errno));
		perfctr_evlist__delete(l);
		return;
	}
	hw_count_loop(fd, 1);	/* the first run counts first-touch extras */
	c1 = hw_count_loop(fd, 1);
	cn = hw_count_loop(fd, LOOP_LONG);
	if (cn - c1 != HW_LOOP_INSNS * (LOOP_LONG - 1))
		test_fail(__FILE__, __LINE__, "'%s': %" PRIu64 " - %" PRIu64
			  " != %lu", spec, cn, c1, HW_LOOP_INSNS * (LOOP_LONG - 1));
	close(fd);
	perfctr_evlist__delete(l);
}

TEST(sysfs_named_event_exact)
{
	hw_require_lane();
	if (hw_armv8_pmu_type() < 0)
		test_skip("no PMU with an inst_retired event in sysfs");
	check_spec("inst_retired:u");
}

TEST(sysfs_format_terms_exact)
{
	struct perfctr_evlist *l;
	char spec[128];
	const char *pmu;

	hw_require_lane();
	l = perfctr_evlist__new();
	REQUIRE(l);
	if (perfctr_evlist__parse(l, "inst_retired", NULL, NULL) != 1) {
		perfctr_evlist__delete(l);
		test_skip("no PMU with an inst_retired event in sysfs");
	}
	pmu = perfctr_evlist__pmu(l, 0);
	CHECK_EQ_INT(perfctr_evlist__attr(l, 0)->type, hw_armv8_pmu_type());
	snprintf(spec, sizeof(spec), "%s/event=0x%x/:u", pmu, ARMV8_INST_RETIRED);
	check_spec(spec);
	snprintf(spec, sizeof(spec), "%s/inst_retired,long/:u", pmu);
	check_spec(spec);
	perfctr_evlist__delete(l);
}

TEST(raw_and_generic_exact)
{
	char spec[32];

	hw_require_lane();
	snprintf(spec, sizeof(spec), "r%x:u", ARMV8_INST_RETIRED);
	check_spec(spec);
	check_spec("instructions:u");
	/* Under -icount shift=0 a cycle is an instruction. */
	check_spec("cycles:u");
}

TEST_MAIN(TEST_CASE(sysfs_named_event_exact),
	  TEST_CASE(sysfs_format_terms_exact),
	  TEST_CASE(raw_and_generic_exact))
