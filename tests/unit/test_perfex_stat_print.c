/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex stat's printing (src/perfex/stat-print.c), without counting: a
 * report made by hand (events, counts, elapsed time) printed in the human
 * layout, CSV and JSON into memory, compared line by line with the
 * layouts docs/perfex.1 describes (perf stat's columns): the value
 * column, msec for clocks, the generic metrics beside their rows,
 * <not supported>, the share of the time a multiplexed event ran, -r's
 * spread.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat.h"
#include "test.h"

struct printed {
	char *text;
	size_t len;
	FILE *f;
};

/* Four rows: a clock, a plain count, a multiplexed count (half its time
 * on a counter), one this machine lacks. */
static struct stat_event events[4];
static struct perfctr_count counts[4];

static void setup(void)
{
	static char *names[4] = { "task-clock", "page-faults", "cycles",
				  "branch-misses" };

	memset(events, 0, sizeof(events));
	memset(counts, 0, sizeof(counts));
	for (size_t i = 0; i < 4; i++) {
		events[i].name = names[i];
		events[i].session_idx = i;
		events[i].group = i;
		events[i].scale = 1.0;
		events[i].set = -1;
	}
	events[0].is_clock = true;
	counts[0] = (struct perfctr_count){ .value = 1234567,
		.time_enabled = 1234567, .time_running = 1234567 };
	counts[1] = (struct perfctr_count){ .value = 42,
		.time_enabled = 1000, .time_running = 1000 };
	counts[2] = (struct perfctr_count){ .value = 1000000,
		.time_enabled = 2000, .time_running = 1000 };
	counts[3] = (struct perfctr_count){
		.status = PERFCTR_COUNT_NOT_SUPPORTED, .errnum = ENOENT };
	events[3].unsupported_errnum = 2;
}

static char *command[] = { "./work", "arg", NULL };

static void report(struct stat_report *r, struct stat_config *cfg,
		   struct printed *p, enum stat_format format)
{
	memset(cfg, 0, sizeof(*cfg));
	memset(r, 0, sizeof(*r));
	memset(p, 0, sizeof(*p));
	p->f = open_memstream(&p->text, &p->len);
	REQUIRE(p->f);
	cfg->format = format;
	cfg->out = p->f;
	cfg->sep = ",";
	cfg->repeat = 1;
	cfg->command = command;
	r->cfg = cfg;
	r->events = events;
	r->nr_events = 4;
	r->runs_done = 1;
	stat_stats_add(&r->elapsed_ns, 2500000000.0);
}

static char *done(struct printed *p)
{
	fclose(p->f);
	REQUIRE(p->text);
	return p->text;
}

TEST(human_rows)
{
	struct stat_report r;
	struct stat_config cfg;
	struct stat_view v = { .counts = counts, .duration_ns = 2.5e9 };
	struct printed p;

	setup();
	report(&r, &cfg, &p, STAT_FORMAT_HUMAN);
	stat_print_begin(&r);
	stat_print_final(&r, &v);
	CHECK_STR(done(&p),
		"\n"
		" Performance counter stats for './work arg':\n"
		"\n"
		"              1.23 msec task-clock                       #    0.000 CPUs utilized\n"
		"                42      page-faults                      #   34.020 K/sec\n"
		"           2000000      cycles                            (50.00%)\n"
		"   <not supported>      branch-misses\n"
		"\n"
		"       2.500000000 seconds time elapsed\n"
		"\n");
	free(p.text);
}

TEST(human_spread_of_runs)
{
	struct stat_report r;
	struct stat_config cfg;
	struct stat_view v = { .counts = counts, .duration_ns = 2.5e9 };
	struct printed p;

	setup();
	report(&r, &cfg, &p, STAT_FORMAT_HUMAN);
	cfg.repeat = 3;
	r.runs_done = 3;
	r.nr_events = 2;
	/* page-faults 40, 42, 44 over the runs: mean 42, sample standard
	 * deviation 2, relative 2/42 = 4.76 % (perfex(1): the relative
	 * standard deviation of the runs). */
	stat_stats_add(&events[1].stats, 40);
	stat_stats_add(&events[1].stats, 42);
	stat_stats_add(&events[1].stats, 44);
	stat_stats_add(&events[0].stats, 1234567);
	stat_stats_add(&events[0].stats, 1234567);
	stat_stats_add(&events[0].stats, 1234567);
	stat_stats_add(&r.elapsed_ns, 2500000000.0);
	stat_stats_add(&r.elapsed_ns, 2500000000.0);
	stat_print_final(&r, &v);
	done(&p);
	CHECK(strstr(p.text, " Performance counter stats for './work arg' (3 runs):\n"));
	CHECK(strstr(p.text, "\n                42      page-faults                      #   34.020 K/sec  ( +-  4.76% )\n"));
	CHECK(strstr(p.text, "\n              1.23 msec task-clock                       #    0.000 CPUs utilized  ( +-  0.00% )\n"));
	CHECK(strstr(p.text, "\n       2.500000000 seconds time elapsed  ( +-  0.00% )\n"));
	free(p.text);
}

TEST(csv_rows)
{
	struct stat_report r;
	struct stat_config cfg;
	struct stat_view v = { .counts = counts, .duration_ns = 2.5e9 };
	struct printed p;

	setup();
	report(&r, &cfg, &p, STAT_FORMAT_CSV);
	stat_print_final(&r, &v);
	/* perf stat -x,'s fields: value, unit, event, run time, percent
	 * of the enabled time, the first metric's value and unit (rates
	 * per second unscaled: 42 / 1.234567 ms = 34020.4 /sec). */
	CHECK_STR(done(&p),
		"1.234567,msec,task-clock,1234567,100.00,0.000493827,CPUs utilized\n"
		"42,,page-faults,1000,100.00,34020,/sec\n"
		"2000000,,cycles,1000,50.00,,\n"
		"<not supported>,,branch-misses,0,0.00,,\n");
	free(p.text);
}

TEST(json_events)
{
	struct stat_report r;
	struct stat_config cfg;
	struct stat_view v = { .counts = counts, .duration_ns = 2.5e9 };
	struct printed p;

	setup();
	report(&r, &cfg, &p, STAT_FORMAT_JSON);
	stat_print_begin(&r);
	stat_print_final(&r, &v);
	done(&p);
	CHECK(strstr(p.text, "\"runs\": 1"));
	CHECK(strstr(p.text, "\"elapsed_ns\": 2500000000"));
	CHECK(strstr(p.text, "\"name\": \"cycles\""));
	CHECK(strstr(p.text, "{\"name\": \"cycles\", \"group\": 2, \"unit\": \"\", "
		     "\"status\": \"counted\", \"value\": 1000000, \"scaled\": 2000000, "
		     "\"time_enabled\": 2000, \"time_running\": 1000, "
		     "\"percent_counted\": 50, "));
	CHECK(strstr(p.text, "{\"name\": \"branch-misses\", \"group\": 3, \"unit\": \"\", "
		     "\"status\": \"not supported\", \"errno\": \"ENOENT\", "
		     "\"error\": \"No such file or directory\", \"value\": null, "
		     "\"scaled\": null, "));
	free(p.text);
}

TEST(stats_welford)
{
	struct stat_stats s = { 0 };

	stat_stats_add(&s, 2);
	stat_stats_add(&s, 4);
	stat_stats_add(&s, 4);
	stat_stats_add(&s, 4);
	stat_stats_add(&s, 5);
	stat_stats_add(&s, 5);
	stat_stats_add(&s, 7);
	stat_stats_add(&s, 9);
	CHECK_EQ_INT(s.n, 8);
	CHECK(s.mean == 5.0);
	CHECK(s.min == 2.0 && s.max == 9.0);
	/* The sample standard deviation (n - 1): sqrt(32 / 7). */
	CHECK(fabs(stat_stats_stddev(&s) - sqrt(32.0 / 7.0)) < 1e-12);
}

TEST_MAIN(TEST_CASE(human_rows),
	  TEST_CASE(human_spread_of_runs),
	  TEST_CASE(csv_rows),
	  TEST_CASE(json_events),
	  TEST_CASE(stats_welford))
