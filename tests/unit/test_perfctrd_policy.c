/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfctrd's policy (src/perfctrd/policy.c): the parser's errors name the
 * line, by table; the attr sanitiser refuses what no policy grants; the
 * rule check refuses what the rule does not allow, row by row.
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "test.h"

#define HEAD "[rule r]\nusers = 0\ntargets = own\n"

TEST(parse_errors)
{
	static const struct {
		const char *text;
		const char *err;	/* NULL: valid */
	} rows[] = {
		{ HEAD "events = software\n", NULL },
		{ "# only a comment\n\n", NULL },
		{ "socket_mode = 0660\nsocket_group = 0\n" HEAD, NULL },
		{ HEAD "events = tracepoint:syscalls:sys_enter_*, tracepoint:sched\n", NULL },
		{ HEAD "events = pmu:software\nkernel = yes\nsampling = yes\n"
		  "max_sample_freq = 1000\nmin_sample_period = 10\nmax_fds = 8\n", NULL },
		{ HEAD "events = softwear\n", "t.conf:4: unknown event class 'softwear'" },
		{ HEAD "bogus = 1\n", "t.conf:4: unknown key 'bogus' in rule 'r'" },
		{ "bogus = 1\n", "t.conf:1: unknown key 'bogus' outside a rule" },
		{ HEAD "kernel = maybe\n", "t.conf:4: 'kernel' wants yes, count or no" },
		{ HEAD "events = software\nevents = raw\n", "t.conf:5: 'events' given twice" },
		{ "[rule a]\ntargets = own\nevents = raw\n", "t.conf:1: rule 'a' names no users" },
		{ "[rule a]\nusers = 0\n", "t.conf:1: rule 'a' allows no targets" },
		{ HEAD "[rule r]\n", "t.conf:4: rule 'r' defined twice (first on line 1)" },
		{ "[group x]\n", "t.conf:1: unknown section '[group x]'" },
		{ "[rule x\n", "t.conf:1: malformed section header" },
		{ HEAD "users\n", "t.conf:4: expected 'key = value'" },
		{ HEAD "max_fds =\n", "t.conf:4: 'max_fds' has no value" },
		{ HEAD "max_fds = -1\n", "t.conf:4: bad max_fds '-1'" },
		{ HEAD "max_sample_freq = 0\n", "t.conf:4: bad max_sample_freq" },
		{ HEAD "targets2 = own\n", "t.conf:4: unknown key 'targets2'" },
		{ "[rule r]\nusers = 0\ntargets = own, everything\n", "t.conf:3: unknown target 'everything'" },
		{ "[rule r]\nusers = no-such-user-here\ntargets = own\n", "t.conf:2: unknown user 'no-such-user-here'" },
		{ "[rule r]\ngroups = no-such-group-here\ntargets = own\n", "t.conf:2: unknown group" },
		{ HEAD "events = tracepoint:\n", "t.conf:4: bad tracepoint pattern" },
		{ HEAD "events = tracepoint:a:b:c\n", "t.conf:4: bad tracepoint pattern" },
		{ HEAD "events = tracepoint:a/b\n", "t.conf:4: bad tracepoint pattern" },
		{ HEAD "events = pmu:no-such-pmu\n", "t.conf:4: unknown PMU 'no-such-pmu'" },
		{ HEAD "events = pmu:../x\n", "t.conf:4: bad PMU name" },
		{ "socket_mode = 0999\n", "t.conf:1: bad socket_mode" },
		{ "socket_mode = 01777\n", "t.conf:1: bad socket_mode" },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char err[512];
		struct pd_policy *pol = pd_policy_parse(rows[i].text, "t.conf",
							NULL, err, sizeof(err));

		if (!rows[i].err && !pol)
			test_fail(__FILE__, __LINE__, "row %zu: refused: %s", i, err);
		if (rows[i].err && pol)
			test_fail(__FILE__, __LINE__, "row %zu: accepted", i);
		if (rows[i].err && !pol &&
		    strncmp(err, rows[i].err, strlen(rows[i].err)))
			test_fail(__FILE__, __LINE__, "row %zu: '%s', expected '%s'",
				  i, err, rows[i].err);
		pd_policy_free(pol);
	}
}

TEST(rule_lookup)
{
	char err[256];
	gid_t g[] = { 5, 77 };
	struct pd_policy *pol = pd_policy_parse(
		"[rule first]\nusers = 1000\ntargets = own\n"
		"[rule grp]\ngroups = 77\ntargets = cpu\n", "t", NULL, err,
		sizeof(err));

	REQUIRE(pol);
	CHECK_STR(pd_policy_rule_for(pol, 1000, g, 2)->name, "first");
	CHECK_STR(pd_policy_rule_for(pol, 1001, g, 2)->name, "grp");
	CHECK(!pd_policy_rule_for(pol, 1001, g, 1));
	CHECK_EQ_INT(pol->socket_mode, 0666);
	pd_policy_free(pol);
}

static struct perf_event_attr sw_attr(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	return a;
}

TEST(sanitise)
{
	unsigned char big[256];
	struct perf_event_attr a = sw_attr(), out;
	char why[256];
	uint64_t flags;

	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), 0);
	/* an older, smaller attr is zero-extended */
	CHECK_EQ_INT(pd_attr_sanitise(&a, PERF_ATTR_SIZE_VER0, &out, why,
				      sizeof(why)), 0);
	CHECK_EQ_INT(out.size, sizeof(out));
	/* a larger one: zero tail accepted, any other byte refused */
	memset(big, 0, sizeof(big));
	memcpy(big, &a, sizeof(a));
	CHECK_EQ_INT(pd_attr_sanitise(big, sizeof(big), &out, why, sizeof(why)), 0);
	big[sizeof(a) + 3] = 1;
	CHECK_EQ_INT(pd_attr_sanitise(big, sizeof(big), &out, why, sizeof(why)), -E2BIG);
	CHECK_EQ_INT(pd_attr_sanitise(big, 8192, &out, why, sizeof(why)), -E2BIG);
	CHECK_EQ_INT(pd_attr_sanitise(big, 32, &out, why, sizeof(why)), -E2BIG);
	/* reserved flag bits */
	a = sw_attr();
	memcpy(&flags, (char *)&a + 40, 8);
	flags |= 1ull << 50;
	memcpy((char *)&a + 40, &flags, 8);
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.aux_output = 1;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.sigtrap = 1; a.remove_on_exec = 1;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.sig_data = 1;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.aux_watermark = 4096;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.aux_sample_size = 64;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.__reserved_2 = 1;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.__reserved_3 = 1;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.sample_type = PERF_SAMPLE_AUX;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.sample_type = 1ull << 40;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
	a = sw_attr(); a.read_format = 1ull << 20;
	CHECK_EQ_INT(pd_attr_sanitise(&a, sizeof(a), &out, why, sizeof(why)), -EINVAL);
}

TEST(rule_check_table)
{
	static const char policy[] =
		"[rule user]\nusers = 0\ntargets = own\n"
		"events = software, breakpoint, tracepoint:syscalls:sys_enter_get*\n"
		"sampling = yes\nmax_sample_freq = 1000\nmin_sample_period = 10000\n"
		"[rule wide]\nusers = 1\ntargets = own, cpu\nkernel = count\n"
		"events = software, raw\nsampling = yes\n"
		"[rule counts]\nusers = 2\ntargets = own\nkernel = count\n"
		"events = software\nsampling = yes\n";
	enum { SW, TP, TP_OTHER, TP_UNKNOWN, HW, RAW, BP_USER, BP_KERNEL };
	static const struct {
		const char *what;
		int rule;	/* 0: user, 1: wide */
		int kind;
		unsigned int target;
		int kernel;	/* exclude_kernel = !kernel */
		int freq;	/* 1: freq sampling, 2: period */
		uint64_t rate;
		uint64_t sample_type;
		int rc;
	} rows[] = {
		{ "own software, user mode", 0, SW, PD_T_OWN, 0, 0, 0, 0, 0 },
		{ "own tracepoint in the glob", 0, TP, PD_T_OWN, 0, 0, 0, 0, 0 },
		{ "tracepoint outside the glob", 0, TP_OTHER, PD_T_OWN, 0, 0, 0, 0, -EACCES },
		{ "tracepoint id unknown", 0, TP_UNKNOWN, PD_T_OWN, 0, 0, 0, 0, -EACCES },
		{ "kernel mode refused", 0, SW, PD_T_OWN, 1, 0, 0, 0, -EACCES },
		{ "CPU-wide refused", 0, SW, PD_T_CPU, 0, 0, 0, 0, -EACCES },
		{ "cgroup refused", 0, SW, PD_T_CGROUP, 0, 0, 0, 0, -EACCES },
		{ "hardware not listed", 0, HW, PD_T_OWN, 0, 0, 0, 0, -EACCES },
		{ "raw not listed", 0, RAW, PD_T_OWN, 0, 0, 0, 0, -EACCES },
		{ "user breakpoint", 0, BP_USER, PD_T_OWN, 0, 0, 0, 0, 0 },
		{ "kernel breakpoint", 0, BP_KERNEL, PD_T_OWN, 0, 0, 0, 0, -EACCES },
		{ "freq at the limit", 0, SW, PD_T_OWN, 0, 1, 1000, 0, 0 },
		{ "freq above", 0, SW, PD_T_OWN, 0, 1, 1001, 0, -EACCES },
		{ "period at the floor", 0, SW, PD_T_OWN, 0, 2, 10000, 0, 0 },
		{ "period below", 0, SW, PD_T_OWN, 0, 2, 9999, 0, -EACCES },
		{ "kernel callchain", 0, SW, PD_T_OWN, 0, 2, 10000, PERF_SAMPLE_CALLCHAIN, -EACCES },
		{ "raw samples", 0, SW, PD_T_OWN, 0, 2, 10000, PERF_SAMPLE_RAW, -EACCES },
		{ "interrupt registers", 0, SW, PD_T_OWN, 0, 2, 10000, PERF_SAMPLE_REGS_INTR, -EACCES },
		{ "physical addresses", 0, SW, PD_T_OWN, 0, 2, 10000, PERF_SAMPLE_PHYS_ADDR, -EACCES },
		{ "wide: kernel, CPU", 1, SW, PD_T_CPU, 1, 0, 0, 0, 0 },
		{ "wide: raw event", 1, RAW, PD_T_OWN, 1, 0, 0, 0, 0 },
		{ "wide: kernel sampling", 1, SW, PD_T_OWN, 1, 2, 10000, 0, -EACCES },
		{ "wide: no tracepoints", 1, TP, PD_T_OWN, 1, 0, 0, 0, -EACCES },
		{ "wide: other users' stacks", 1, SW, PD_T_CPU, 0, 2, 10000, PERF_SAMPLE_STACK_USER, -EACCES },
		{ "wide: own stacks", 1, SW, PD_T_OWN, 0, 2, 10000, PERF_SAMPLE_STACK_USER, 0 },
		{ "count: kernel counting", 2, SW, PD_T_OWN, 1, 0, 0, 0, 0 },
		{ "count: user sampling", 2, SW, PD_T_OWN, 0, 2, 100, 0, 0 },
		{ "count: kernel sampling", 2, SW, PD_T_OWN, 1, 2, 100, 0, -EACCES },
		{ "count: kernel callchain", 2, SW, PD_T_OWN, 0, 2, 100, PERF_SAMPLE_CALLCHAIN, -EACCES },
	};
	char err[256], why[256];
	struct pd_policy *pol = pd_policy_parse(policy, "t", NULL, err, sizeof(err));
	size_t i;

	if (!pol)
		test_fail(__FILE__, __LINE__, "%s", err);
	REQUIRE(pol);
	REQUIRE(pol->nr_rules == 3);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct perf_event_attr a = sw_attr();
		const char *tp = NULL;
		int rc;

		switch (rows[i].kind) {
		case TP: a.type = PERF_TYPE_TRACEPOINT; a.config = 7;
			tp = "syscalls:sys_enter_getppid"; break;
		case TP_OTHER: a.type = PERF_TYPE_TRACEPOINT; a.config = 8;
			tp = "syscalls:sys_enter_read"; break;
		case TP_UNKNOWN: a.type = PERF_TYPE_TRACEPOINT; a.config = 9; break;
		case HW: a.type = PERF_TYPE_HARDWARE; a.config = 0; break;
		case RAW: a.type = PERF_TYPE_RAW; a.config = 0x3c; break;
		case BP_USER: a.type = PERF_TYPE_BREAKPOINT;
			a.bp_type = HW_BREAKPOINT_W; a.bp_addr = 0x601000;
			a.bp_len = 8; break;
		case BP_KERNEL: a.type = PERF_TYPE_BREAKPOINT;
			a.bp_type = HW_BREAKPOINT_W;
			a.bp_addr = 0xffffffff81000000ull; a.bp_len = 8; break;
		}
		a.exclude_kernel = !rows[i].kernel;
		if (rows[i].freq) {
			a.freq = rows[i].freq == 1;
			a.sample_period = rows[i].rate;
		}
		a.sample_type = rows[i].sample_type;
		rc = pd_rule_check(&pol->rules[rows[i].rule], &a, rows[i].target,
				   tp, why, sizeof(why));
		if (rc != rows[i].rc)
			test_fail(__FILE__, __LINE__, "%s: %d (%s), expected %d",
				  rows[i].what, rc, why, rows[i].rc);
	}
	pd_policy_free(pol);
}

TEST_MAIN(TEST_CASE(parse_errors), TEST_CASE(rule_lookup),
	  TEST_CASE(sanitise), TEST_CASE(rule_check_table))
