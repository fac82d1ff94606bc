// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of the event layer: one table of {specification, fixture,
 * expected encoding or expected error}, run against the fixture sysfs and
 * tracefs trees in tests/fixtures (never the machine's).
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <stdlib.h>

#include "common/internal.h"
#include "perfctr/event.h"
#include "test.h"

enum fixture { VM, INTEL, ARM };

static const char *const fixture_dirs[] = {
	[VM] = "tests/fixtures/sysfs-vm",
	[INTEL] = "tests/fixtures/sysfs-intel",
	[ARM] = "tests/fixtures/sysfs-arm64",
};

/* Expected attr flags. */
#define EU	(1u << 0)	/* exclude_user */
#define EK	(1u << 1)	/* exclude_kernel */
#define EH	(1u << 2)	/* exclude_hv */
#define EHOST	(1u << 3)
#define EGUEST	(1u << 4)
#define PIN	(1u << 5)
#define SREAD	(1u << 6)	/* PERF_SAMPLE_READ in sample_type */
#define P(n)	((unsigned)(n) << 8)	/* precise_ip */

struct row {
	const char *spec;
	enum fixture fx;
	int nr;			/* events expected; 0 for an error row */
	uint32_t type;
	uint64_t config, config1, config2;
	unsigned flags;
	int errnum;
	int column;
	const char *msg;	/* substring of the message (or of the hint) */
};

#define OK(s, f, n, t, c, c1, c2, fl) \
	{ .spec = s, .fx = f, .nr = n, .type = t, .config = c, \
	  .config1 = c1, .config2 = c2, .flags = fl }
#define ERR(s, f, e, col, m) \
	{ .spec = s, .fx = f, .errnum = e, .column = col, .msg = m }

#define HWT PERF_TYPE_HARDWARE
#define SWT PERF_TYPE_SOFTWARE
#define CAT PERF_TYPE_HW_CACHE
#define TPT PERF_TYPE_TRACEPOINT
#define CACHE(c, op, res) (PERF_COUNT_HW_CACHE_##c | \
	PERF_COUNT_HW_CACHE_OP_##op << 8 | PERF_COUNT_HW_CACHE_RESULT_##res << 16)

static const struct row rows[] = {
	/* generic hardware */
	OK("cycles", VM, 1, HWT, PERF_COUNT_HW_CPU_CYCLES, 0, 0, 0),
	OK("cpu-cycles", VM, 1, HWT, PERF_COUNT_HW_CPU_CYCLES, 0, 0, 0),
	OK("instructions", VM, 1, HWT, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, 0),
	OK("cache-references", VM, 1, HWT, PERF_COUNT_HW_CACHE_REFERENCES, 0, 0, 0),
	OK("cache-misses", VM, 1, HWT, PERF_COUNT_HW_CACHE_MISSES, 0, 0, 0),
	OK("branches", VM, 1, HWT, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0, 0, 0),
	OK("branch-instructions", VM, 1, HWT, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0, 0, 0),
	OK("branch-misses", VM, 1, HWT, PERF_COUNT_HW_BRANCH_MISSES, 0, 0, 0),
	OK("bus-cycles", VM, 1, HWT, PERF_COUNT_HW_BUS_CYCLES, 0, 0, 0),
	OK("stalled-cycles-frontend", VM, 1, HWT, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 0, 0, 0),
	OK("idle-cycles-backend", VM, 1, HWT, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 0, 0, 0),
	OK("ref-cycles", VM, 1, HWT, PERF_COUNT_HW_REF_CPU_CYCLES, 0, 0, 0),
	/* software */
	OK("task-clock", VM, 1, SWT, PERF_COUNT_SW_TASK_CLOCK, 0, 0, 0),
	OK("cpu-clock", VM, 1, SWT, PERF_COUNT_SW_CPU_CLOCK, 0, 0, 0),
	OK("page-faults", VM, 1, SWT, PERF_COUNT_SW_PAGE_FAULTS, 0, 0, 0),
	OK("faults", VM, 1, SWT, PERF_COUNT_SW_PAGE_FAULTS, 0, 0, 0),
	OK("context-switches", VM, 1, SWT, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, 0),
	OK("cs", VM, 1, SWT, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, 0),
	OK("cpu-migrations", VM, 1, SWT, PERF_COUNT_SW_CPU_MIGRATIONS, 0, 0, 0),
	OK("migrations", VM, 1, SWT, PERF_COUNT_SW_CPU_MIGRATIONS, 0, 0, 0),
	OK("minor-faults", VM, 1, SWT, PERF_COUNT_SW_PAGE_FAULTS_MIN, 0, 0, 0),
	OK("major-faults", VM, 1, SWT, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 0, 0, 0),
	OK("alignment-faults", VM, 1, SWT, PERF_COUNT_SW_ALIGNMENT_FAULTS, 0, 0, 0),
	OK("emulation-faults", VM, 1, SWT, PERF_COUNT_SW_EMULATION_FAULTS, 0, 0, 0),
	OK("dummy", VM, 1, SWT, PERF_COUNT_SW_DUMMY, 0, 0, 0),
	OK("bpf-output", VM, 1, SWT, PERF_COUNT_SW_BPF_OUTPUT, 0, 0, 0),
	OK("cgroup-switches", VM, 1, SWT, PERF_COUNT_SW_CGROUP_SWITCHES, 0, 0, 0),
	/* generic cache events */
	OK("L1-dcache-loads", VM, 1, CAT, CACHE(L1D, READ, ACCESS), 0, 0, 0),
	OK("L1-dcache-load-misses", VM, 1, CAT, CACHE(L1D, READ, MISS), 0, 0, 0),
	OK("L1-dcache-stores", VM, 1, CAT, CACHE(L1D, WRITE, ACCESS), 0, 0, 0),
	OK("L1-dcache-prefetch-misses", VM, 1, CAT, CACHE(L1D, PREFETCH, MISS), 0, 0, 0),
	OK("L1-icache-load-misses", VM, 1, CAT, CACHE(L1I, READ, MISS), 0, 0, 0),
	OK("LLC-loads", VM, 1, CAT, CACHE(LL, READ, ACCESS), 0, 0, 0),
	OK("LLC-store-misses", VM, 1, CAT, CACHE(LL, WRITE, MISS), 0, 0, 0),
	OK("dTLB-load-misses", VM, 1, CAT, CACHE(DTLB, READ, MISS), 0, 0, 0),
	OK("iTLB-loads", VM, 1, CAT, CACHE(ITLB, READ, ACCESS), 0, 0, 0),
	OK("branch-loads", VM, 1, CAT, CACHE(BPU, READ, ACCESS), 0, 0, 0),
	OK("branch-load-misses", VM, 1, CAT, CACHE(BPU, READ, MISS), 0, 0, 0),
	OK("node-store-misses", VM, 1, CAT, CACHE(NODE, WRITE, MISS), 0, 0, 0),
	OK("l1d-misses", VM, 1, CAT, CACHE(L1D, READ, MISS), 0, 0, 0),
	OK("L1-dcache", VM, 1, CAT, CACHE(L1D, READ, ACCESS), 0, 0, 0),
	/* modifiers */
	OK("cycles:u", VM, 1, HWT, 0, 0, 0, EK | EH),
	OK("cycles:k", VM, 1, HWT, 0, 0, 0, EU | EH),
	OK("cycles:h", VM, 1, HWT, 0, 0, 0, EU | EK),
	OK("cycles:uk", VM, 1, HWT, 0, 0, 0, EH),
	OK("cycles:H", VM, 1, HWT, 0, 0, 0, EGUEST),
	OK("cycles:G", VM, 1, HWT, 0, 0, 0, EHOST),
	OK("cycles:GH", VM, 1, HWT, 0, 0, 0, 0),
	OK("cycles:p", VM, 1, HWT, 0, 0, 0, P(1)),
	OK("cycles:ppp", VM, 1, HWT, 0, 0, 0, P(3)),
	OK("cycles:upp", VM, 1, HWT, 0, 0, 0, EK | EH | P(2)),
	OK("cycles:S", VM, 1, HWT, 0, 0, 0, SREAD),
	OK("cycles:D", VM, 1, HWT, 0, 0, 0, PIN),
	OK("task-clock:u", VM, 1, SWT, PERF_COUNT_SW_TASK_CLOCK, 0, 0, EK | EH),
	OK("{cycles,instructions}:u", VM, 2, HWT, 0, 0, 0, EK | EH),
	OK("{cycles:k,instructions}:u", VM, 2, HWT, 0, 0, 0, EH),
	OK("{cycles,instructions}:D", VM, 2, HWT, 0, 0, 0, PIN),
	/* lists and groups */
	OK("cycles,instructions", VM, 2, HWT, 0, 0, 0, 0),
	OK("{cycles,instructions},task-clock", VM, 3, HWT, 0, 0, 0, 0),
	OK("task-clock,{cs,faults}", VM, 3, SWT, PERF_COUNT_SW_TASK_CLOCK, 0, 0, 0),
	/* raw */
	OK("r1a8", VM, 1, PERF_TYPE_RAW, 0x1a8, 0, 0, 0),
	OK("r01c2:u", VM, 1, PERF_TYPE_RAW, 0x1c2, 0, 0, EK | EH),
	/* tracepoints (fixture tracefs) */
	OK("syscalls:sys_enter_getppid", VM, 1, TPT, 1001, 0, 0, 0),
	OK("sched:sched_switch", VM, 1, TPT, 1007, 0, 0, 0),
	OK("sched:sched_switch:u", VM, 1, TPT, 1007, 0, 0, EK | EH),
	OK("syscalls:sys_*_getppid", VM, 2, TPT, 1001, 0, 0, 0),
	OK("syscalls:sys_enter_*", VM, 3, TPT, 1001, 0, 0, 0),
	OK("sched:*", VM, 4, TPT, 1009, 0, 0, 0),
	OK("*:sys_enter", VM, 1, TPT, 1011, 0, 0, 0),
	OK("raw_syscalls:sys_enter,sched:sched_switch", VM, 2, TPT, 1011, 0, 0, 0),
	OK("{syscalls:sys_enter_read,syscalls:sys_enter_write}", VM, 2, TPT, 1003, 0, 0, 0),
	/* errors */
	ERR("cyclez", VM, ENOENT, 0, "unknown event 'cyclez'"),
	ERR("cyclez", VM, ENOENT, 0, "did you mean 'cycles'?"),
	ERR("cycles,instructionz", VM, ENOENT, 7, "did you mean 'instructions'?"),
	ERR("task-clok", VM, ENOENT, 0, "did you mean 'task-clock'?"),
	ERR("L1-dcache-load-mises", VM, ENOENT, 0, "did you mean 'L1-dcache-load-misses'?"),
	ERR("", VM, EINVAL, 0, "empty event specification"),
	ERR("cycles,", VM, EINVAL, 7, "empty event"),
	ERR("cycles,,instructions", VM, EINVAL, 7, "empty event"),
	ERR("cycles:x", VM, EINVAL, 7, "invalid modifier 'x'"),
	ERR("cycles:uq", VM, EINVAL, 8, "invalid modifier 'q'"),
	ERR("cycles:", VM, EINVAL, 7, "empty modifier"),
	ERR("cycles:pppp", VM, EINVAL, 10, "at most :ppp"),
	ERR("{cycles,instructions", VM, EINVAL, 0, "missing '}'"),
	ERR("{}", VM, EINVAL, 0, "empty group"),
	ERR("{cycles,{instructions}}", VM, EINVAL, 8, "cannot be nested"),
	ERR("{cycles}:z", VM, EINVAL, 9, "invalid modifier 'z'"),
	ERR("cycles}", VM, EINVAL, 6, "unexpected '}'"),
	ERR("syscalls:sys_enter_getppidd", VM, ENOENT, 0, "did you mean 'syscalls:sys_enter_getppid'?"),
	ERR("sched:nothing_*", VM, ENOENT, 0, "no tracepoint matches 'sched:nothing_*'"),
	ERR("task-clock,sched:sched_swich", VM, ENOENT, 11, "unknown tracepoint 'sched:sched_swich'"),
};

static void check_flags(const struct perf_event_attr *a, unsigned flags,
			const char *spec)
{
	unsigned got = (a->exclude_user ? EU : 0) | (a->exclude_kernel ? EK : 0) |
		       (a->exclude_hv ? EH : 0) | (a->exclude_host ? EHOST : 0) |
		       (a->exclude_guest ? EGUEST : 0) | (a->pinned ? PIN : 0) |
		       (a->sample_type & PERF_SAMPLE_READ ? SREAD : 0) |
		       P(a->precise_ip);

	if (got != flags)
		test_fail(__FILE__, __LINE__, "'%s': flags %#x, expected %#x",
			  spec, got, flags);
}

static void run_row(const struct row *r)
{
	struct perfctr_evlist *list = perfctr_evlist__new();
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	PERFCTR_OPTS(perfctr_parse_opts, opts,
		     .sysfs_root = test_src_path(fixture_dirs[r->fx]),
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));
	const struct perf_event_attr *a;
	int ret;

	REQUIRE(list);
	ret = perfctr_evlist__parse(list, r->spec, &opts, &err);
	if (!r->nr) {
		if (ret != -r->errnum || err.errnum != r->errnum ||
		    err.column != r->column ||
		    (!strstr(err.message, r->msg) && !strstr(err.hint, r->msg)))
			test_fail(__FILE__, __LINE__,
				  "'%s': got %d col %d '%s' / '%s', expected %d col %d '%s'",
				  r->spec, ret, err.column, err.message, err.hint,
				  -r->errnum, r->column, r->msg);
		CHECK_EQ_U64(perfctr_evlist__nr_events(list), 0);
		perfctr_evlist__delete(list);
		return;
	}
	if (ret != r->nr) {
		test_fail(__FILE__, __LINE__, "'%s': %d events, expected %d (%s%s%s)",
			  r->spec, ret, r->nr, err.message,
			  err.hint[0] ? "; " : "", err.hint);
		perfctr_evlist__delete(list);
		return;
	}
	a = perfctr_evlist__attr(list, 0);
	if (a->type != r->type || a->config != r->config ||
	    a->config1 != r->config1 || a->config2 != r->config2)
		test_fail(__FILE__, __LINE__,
			  "'%s': type %u config %#llx/%#llx/%#llx, expected %u %#llx/%#llx/%#llx",
			  r->spec, a->type, (unsigned long long)a->config,
			  (unsigned long long)a->config1,
			  (unsigned long long)a->config2, r->type,
			  (unsigned long long)r->config,
			  (unsigned long long)r->config1,
			  (unsigned long long)r->config2);
	CHECK_EQ_U64(a->size, sizeof(*a));
	check_flags(a, r->flags, r->spec);
	perfctr_evlist__delete(list);
}

TEST(table)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		run_row(&rows[i]);
}

static struct perfctr_evlist *parse_ok(const char *spec)
{
	struct perfctr_evlist *list = perfctr_evlist__new();
	PERFCTR_OPTS(perfctr_parse_opts, opts,
		     .sysfs_root = test_src_path("tests/fixtures/sysfs-vm"),
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));
	int ret;

	REQUIRE(list);
	ret = perfctr_evlist__parse(list, spec, &opts, NULL);
	if (ret <= 0)
		test_fail(__FILE__, __LINE__, "'%s': %d", spec, ret);
	return list;
}

TEST(groups_and_names)
{
	struct perfctr_evlist *l = parse_ok("task-clock,{cycles:u,instructions}:k,cs");

	REQUIRE(perfctr_evlist__nr_events(l) == 4);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 0), 0);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 1), 1);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 2), 1);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 3), 3);
	CHECK_STR(perfctr_evlist__name(l, 0), "task-clock");
	CHECK_STR(perfctr_evlist__name(l, 1), "cycles:uk");
	CHECK_STR(perfctr_evlist__name(l, 2), "instructions:k");
	CHECK_STR(perfctr_evlist__pmu(l, 0), "software");
	CHECK_STR(perfctr_evlist__unit(l, 0), "");
	CHECK(perfctr_evlist__scale(l, 0) == 1.0);
	CHECK(perfctr_evlist__cpus(l, 0) == NULL);
	CHECK(perfctr_evlist__attr(l, 4) == NULL);
	CHECK(perfctr_evlist__name(l, 4) == NULL);
	perfctr_evlist__delete(l);
}

TEST(wildcard_names_sorted)
{
	struct perfctr_evlist *l = parse_ok("sched:sched_*:k");

	REQUIRE(perfctr_evlist__nr_events(l) == 4);
	CHECK_STR(perfctr_evlist__name(l, 0), "sched:sched_process_exec:k");
	CHECK_STR(perfctr_evlist__name(l, 3), "sched:sched_wakeup:k");
	CHECK_STR(perfctr_evlist__pmu(l, 0), "tracepoint");
	/* Outside a group each expanded tracepoint leads itself. */
	CHECK_EQ_U64(perfctr_evlist__leader(l, 3), 3);
	perfctr_evlist__delete(l);
}

TEST(failed_parse_leaves_list_unchanged)
{
	struct perfctr_evlist *l = parse_ok("cycles");
	struct perfctr_parse_error err = { .sz = sizeof(err) };

	CHECK(perfctr_evlist__parse(l, "instructions,cyclez", NULL, &err) == -ENOENT);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK_EQ_U64(perfctr_evlist__nr_events(l), 1);
	CHECK_EQ_INT(perfctr_evlist__parse(l, "instructions", NULL, NULL), 1);
	CHECK_EQ_U64(perfctr_evlist__nr_events(l), 2);
	perfctr_evlist__delete(l);
}

TEST(default_excludes)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	PERFCTR_OPTS(perfctr_parse_opts, opts, .exclude_kernel = true,
		     .exclude_hv = true,
		     .sysfs_root = test_src_path("tests/fixtures/sysfs-vm"));
	const struct perf_event_attr *a;

	REQUIRE(perfctr_evlist__parse(l, "cycles,cycles:k,cycles:u", &opts, NULL) == 3);
	a = perfctr_evlist__attr(l, 0);
	CHECK(a->exclude_kernel && a->exclude_hv && !a->exclude_user);
	a = perfctr_evlist__attr(l, 1);
	CHECK(!a->exclude_kernel && a->exclude_hv && a->exclude_user);
	a = perfctr_evlist__attr(l, 2);
	CHECK(a->exclude_kernel && a->exclude_hv && !a->exclude_user);
	perfctr_evlist__delete(l);
}

TEST(add_attr)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE,
					 .config = PERF_COUNT_SW_DUMMY };

	REQUIRE(l);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "a", (size_t)-1), 0);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "b", 0), 1);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "c", (size_t)-1), 2);
	/* Groups are contiguous: 'd' cannot join the finished group of 'a'. */
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "d", 0), -EINVAL);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "d", 7), -EINVAL);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, NULL, "d", 0), -EINVAL);
	CHECK_EQ_U64(perfctr_evlist__nr_events(l), 3);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 1), 0);
	CHECK_STR(perfctr_evlist__name(l, 1), "b");
	CHECK_STR(perfctr_evlist__pmu(l, 1), "software");
	CHECK_EQ_U64(perfctr_evlist__attr(l, 2)->size, sizeof(attr));
	perfctr_evlist__delete(l);
	perfctr_evlist__delete(NULL);
}

TEST(tracefs_missing)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	PERFCTR_OPTS(perfctr_parse_opts, opts, .tracefs_root = "/nonexistent");

	REQUIRE(l);
	CHECK_EQ_INT(perfctr_evlist__parse(l, "cycles,sched:sched_switch", &opts, &err),
		     -ENOTDIR);
	CHECK_EQ_INT(err.column, 7);
	CHECK(strstr(err.message, "tracefs is not mounted") != NULL);
	CHECK_STR(err.hint, "mount -t tracefs nodev /sys/kernel/tracing");
	perfctr_evlist__delete(l);
}

TEST_MAIN(TEST_CASE(table), TEST_CASE(groups_and_names),
	  TEST_CASE(wildcard_names_sorted),
	  TEST_CASE(failed_parse_leaves_list_unchanged),
	  TEST_CASE(default_excludes), TEST_CASE(add_attr),
	  TEST_CASE(tracefs_missing))
