/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex's option parse (src/perfex/options.c), without running perfex:
 * the numbers perfex_opt_ulong() takes and refuses, by table; the rows
 * that store their value themselves (no handler called for them); the
 * errors; and parses one after another in one process (getopt restarted).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "perfex.h"
#include "report.h"
#include "stat.h"
#include "test.h"

/* Messages and --help go to /dev/null while a case runs. */
static FILE *saved_out, *saved_err;

static void quiet(void)
{
	saved_out = stdout;
	saved_err = stderr;
	stdout = fopen("/dev/null", "w");
	stderr = fopen("/dev/null", "w");
	REQUIRE(stdout && stderr);
}

static void loud(void)
{
	fclose(stdout);
	fclose(stderr);
	stdout = saved_out;
	stderr = saved_err;
}

TEST(ulong_table)
{
	static const struct {
		const char *arg;
		unsigned long min, max;
		perfex_result ret;
		unsigned long value;
	} rows[] = {
		{ "0", 0, 10, PERFEX_GO_ON, 0 },
		{ "10", 0, 10, PERFEX_GO_ON, 10 },
		{ "007", 0, 10, PERFEX_GO_ON, 7 },
		{ "11", 0, 10, PERFEX_EXIT_USAGE, 0 },
		{ "0", 1, 10, PERFEX_EXIT_USAGE, 0 },
		{ "", 0, 10, PERFEX_EXIT_USAGE, 0 },
		{ NULL, 0, 10, PERFEX_EXIT_USAGE, 0 },
		{ "-1", 0, ULONG_MAX, PERFEX_EXIT_USAGE, 0 },	/* ULONG_MAX */
		{ "+1", 0, 10, PERFEX_EXIT_USAGE, 0 },
		{ " 1", 0, 10, PERFEX_EXIT_USAGE, 0 },
		{ "\t1", 0, 10, PERFEX_EXIT_USAGE, 0 },
		{ "1 ", 0, 10, PERFEX_EXIT_USAGE, 0 },
		{ "1x", 0, 10, PERFEX_EXIT_USAGE, 0 },
		{ "0x10", 0, 100, PERFEX_EXIT_USAGE, 0 },
		{ "1e3", 0, 10000, PERFEX_EXIT_USAGE, 0 },
		{ "18446744073709551615", 0, ULONG_MAX, PERFEX_GO_ON,
		  18446744073709551615ul },
		{ "18446744073709551616", 0, ULONG_MAX, PERFEX_EXIT_USAGE, 0 },
	};
	struct perfex_parse p = { .cmd = PERFEX_CMD_STAT };

	snprintf(p.name, sizeof(p.name), "-r");
	quiet();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned long v = 12345;
		perfex_result r;

		p.arg = rows[i].arg;
		r = perfex_opt_ulong(&p, rows[i].min, rows[i].max, "N", &v);
		if (r != rows[i].ret || (r == PERFEX_GO_ON && v != rows[i].value) ||
		    (r != PERFEX_GO_ON && v != 12345))
			test_fail(__FILE__, __LINE__, "row %zu '%s': %d %lu",
				  i, rows[i].arg ? rows[i].arg : "(null)", r, v);
		/* The same through the part-of-an-argument form. */
		v = 12345;
		p.arg = "unused";
		CHECK_EQ_INT(perfex_opt_ulong_of(&p, rows[i].arg, rows[i].min,
						 rows[i].max, "N", &v),
			     rows[i].ret);
	}
	loud();
}

struct calls {
	int n;
	enum perfex_opt_id ids[16];
};

static perfex_result record_calls(struct perfex_parse *p, void *ctx)
{
	struct calls *c = ctx;

	if (c->n < 16)
		c->ids[c->n] = p->opt->id;
	c->n++;
	return PERFEX_GO_ON;
}

TEST(report_rows_store_their_values)
{
	char *argv[] = { "report", "-n", "--folded", "--flame", "f.svg",
			 "--pprof=p.pb.gz", "--event", "cycles", "-j", "-s",
			 "comm", "--flame", "g.svg", NULL };
	struct report rep = { 0 };
	struct calls calls = { 0 };
	struct perfex_parse p;

	CHECK_EQ_INT(perfex_options_parse_into(&p, PERFEX_CMD_REPORT, 13, argv,
					       false, record_calls, &calls,
					       &rep), PERFEX_GO_ON);
	CHECK(rep.show_samples);
	CHECK(rep.folded);
	CHECK(rep.json);
	CHECK_STR(rep.flame, "g.svg");		/* the last one given */
	CHECK_STR(rep.pprof, "p.pb.gz");
	CHECK_STR(rep.event, "cycles");
	/* Only -s, which needs its case, reached the handler. */
	CHECK_EQ_INT(calls.n, 1);
	CHECK_EQ_INT(calls.ids[0], OPT_SORT);
	CHECK(perfex_option_given(&p, OPT_FOLDED));
	CHECK(!perfex_option_given(&p, OPT_STDIO));
}

TEST(stat_rows_store_into_the_options)
{
	char *argv[] = { "perfex", "--bpf-counters", "-a", "--per-process",
			 "-o", "x.txt", "--metric-only", "--topdown",
			 "-e", "task-clock", "--", "true", NULL };
	struct stat_options o = { 0 };
	struct calls calls = { 0 };
	struct perfex_parse p;

	CHECK_EQ_INT(perfex_options_parse_into(&p, PERFEX_CMD_STAT, 12, argv,
					       true, record_calls, &calls,
					       &o), PERFEX_GO_ON);
	CHECK(o.cfg.bpf_counters);
	CHECK(o.cfg.tree);
	CHECK(o.all_cpus);
	CHECK_STR(o.output, "x.txt");
	CHECK(o.metrics.only);
	CHECK(o.metrics.topdown);
	CHECK(!o.metrics.no_merge);
	/* Only -e, which needs its case, reached the handler. */
	CHECK_EQ_INT(calls.n, 1);
	CHECK_EQ_INT(calls.ids[0], OPT_EVENT);
	CHECK_STR(argv[optind], "true");
	/* Modes: --bpf-counters needs -a or -C. */
	quiet();
	CHECK_EQ_INT(perfex_options_check_modes(&p, MODE_COMMAND),
		     PERFEX_EXIT_USAGE);
	loud();
	CHECK_EQ_INT(perfex_options_check_modes(&p, MODE_COMMAND | MODE_CPUS),
		     PERFEX_GO_ON);
}

TEST(errors_by_table)
{
	static const struct {
		enum perfex_cmd cmd;
		const char *args[4];
		perfex_result ret;
	} rows[] = {
		{ PERFEX_CMD_STAT, { "-Z" }, PERFEX_EXIT_USAGE },
		{ PERFEX_CMD_STAT, { "--no-such" }, PERFEX_EXIT_USAGE },
		{ PERFEX_CMD_STAT, { "-e" }, PERFEX_EXIT_USAGE },
		{ PERFEX_CMD_STAT, { "--event" }, PERFEX_EXIT_USAGE },
		{ PERFEX_CMD_STAT, { "--json=x" }, PERFEX_EXIT_USAGE },
		{ PERFEX_CMD_STAT, { "-n" }, PERFEX_EXIT_USAGE }, /* report's */
		{ PERFEX_CMD_REPORT, { "--bpf-counters" }, PERFEX_EXIT_USAGE },
		{ PERFEX_CMD_REPORT, { "--folded=1" }, PERFEX_EXIT_USAGE },
		{ PERFEX_CMD_REPORT, { "--flame" }, PERFEX_EXIT_USAGE },
		{ PERFEX_CMD_STAT, { "--help" }, 0 },
		{ PERFEX_CMD_REPORT, { "-n", "-h" }, 0 },
		{ PERFEX_CMD_LIST, { "--", "-j" }, PERFEX_GO_ON },
	};

	quiet();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *argv[6] = { "perfex" };
		struct report rep = { 0 };
		struct calls calls = { 0 };
		struct perfex_parse p;
		int argc = 1;

		for (int a = 0; a < 4 && rows[i].args[a]; a++)
			argv[argc++] = (char *)rows[i].args[a];
		if (perfex_options_parse_into(&p, rows[i].cmd, argc, argv,
					      false, record_calls, &calls,
					      &rep) != rows[i].ret)
			test_fail(__FILE__, __LINE__, "row %zu", i);
	}
	loud();
}

/*
 * Parses one after another (perfex-serve's reload, the argv fuzzer): one
 * that stopped inside "-aZ" and one that stops at the command leave
 * nothing for the next, which permutes.
 */
TEST(parse_after_parse)
{
	char *bad[] = { "perfex", "-aZ", NULL };
	char *cmd[] = { "perfex", "-a", "sleep", "-n", NULL };
	char *rep_argv[] = { "report", "x", "-n", NULL };
	struct stat_options o = { 0 };
	struct report rep = { 0 };
	struct calls calls = { 0 };
	struct perfex_parse p;

	quiet();
	CHECK_EQ_INT(perfex_options_parse_into(&p, PERFEX_CMD_STAT, 2, bad, true,
					       record_calls, &calls, &o),
		     PERFEX_EXIT_USAGE);
	loud();
	o.all_cpus = false;
	CHECK_EQ_INT(perfex_options_parse_into(&p, PERFEX_CMD_STAT, 4, cmd, true,
					       record_calls, &calls, &o),
		     PERFEX_GO_ON);
	CHECK(o.all_cpus);
	CHECK_EQ_INT(calls.n, 0);
	CHECK_STR(cmd[optind], "sleep");
	/* report permutes: -n after the argument is an option. */
	CHECK_EQ_INT(perfex_options_parse_into(&p, PERFEX_CMD_REPORT, 3,
					       rep_argv, false, record_calls,
					       &calls, &rep), PERFEX_GO_ON);
	CHECK(rep.show_samples);
	CHECK_EQ_INT(optind, 2);
	CHECK_STR(rep_argv[optind], "x");
}

TEST_MAIN(TEST_CASE(ulong_table), TEST_CASE(report_rows_store_their_values),
	  TEST_CASE(stat_rows_store_into_the_options),
	  TEST_CASE(errors_by_table), TEST_CASE(parse_after_parse))
