/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Unit tests of metric plans (metric/plan.c): which groups the events of
 * the metrics asked for are scheduled into, and the values computed from
 * synthetic counts: events shared between metrics as perf stat shares
 * them (and not, or ungrouped, on request), exact ratios, metrics of metrics, thresholds, counts
 * not measured together, events missing or not counted.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <perfctr/metric.h>

#include "test.h"

static char path[] = "/tmp/perfctr-plan-XXXXXX";

static const char table[] =
	"[\n"
	" { \"MetricName\": \"ppid_per_pid\", \"MetricGroup\": \"calls\",\n"
	"   \"MetricExpr\": \"syscalls:sys_enter_getppid / syscalls:sys_enter_getpid\" },\n"
	" { \"MetricName\": \"ppid_share\", \"MetricGroup\": \"calls;shares\",\n"
	"   \"MetricExpr\": \"d_ratio(syscalls:sys_enter_getppid, syscalls:sys_enter_getppid + syscalls:sys_enter_getpid)\",\n"
	"   \"ScaleUnit\": \"100%\", \"MetricThreshold\": \"ppid_share > 0.5\" },\n"
	" { \"MetricName\": \"ppid_rate\", \"MetricExpr\": \"syscalls:sys_enter_getppid / duration_time\",\n"
	"   \"ScaleUnit\": \"1calls/s\" },\n"
	" { \"MetricName\": \"twice_ratio\", \"MetricExpr\": \"2 * ppid_per_pid\" },\n"
	" { \"MetricName\": \"loose\", \"MetricExpr\": \"task\\\\-clock / syscalls:sys_enter_getpid\",\n"
	"   \"MetricConstraint\": \"NO_GROUP_EVENTS\" },\n"
	" { \"MetricName\": \"unknown_event\", \"MetricExpr\": \"no_such_event / cycles\" },\n"
	" { \"MetricName\": \"loop_a\", \"MetricExpr\": \"loop_b + 1\" },\n"
	" { \"MetricName\": \"loop_b\", \"MetricExpr\": \"loop_a + 1\" },\n"
	" { \"MetricName\": \"bad\", \"MetricExpr\": \"cycles +\" },\n"
	" { \"MetricName\": \"ppid_count\", \"MetricExpr\": \"syscalls:sys_enter_getppid\" },\n"
	" { \"MetricName\": \"ppid_and_tid\",\n"
	"   \"MetricExpr\": \"syscalls:sys_enter_getppid + syscalls:sys_enter_gettid\" }\n"
	"]\n";

static struct perfctr_metrics *tables(void)
{
	const char *files[] = { path };
	int fd = mkstemp(path);
	FILE *f;

	REQUIRE(fd >= 0);
	f = fdopen(fd, "w");
	REQUIRE(f);
	fputs(table, f);
	fclose(f);
	PERFCTR_OPTS(perfctr_metrics_opts, opts, .files = files, .nr_files = 1,
		     .flags = PERFCTR_METRICS_NO_ENV | PERFCTR_METRICS_NO_MODEL);
	struct perfctr_metrics *m = perfctr_metrics__new(&opts);

	unlink(path);
	snprintf(path, sizeof(path), "/tmp/perfctr-plan-XXXXXX");
	return m;
}

static struct perfctr_metric_input ev(const char *name, uint64_t value,
				      uint64_t running, size_t group)
{
	struct perfctr_metric_input in = {
		.name = name,
		.count = { .value = value, .time_enabled = 1000,
			   .time_running = running,
			   .status = running ? PERFCTR_COUNT_OK
					     : PERFCTR_COUNT_NOT_COUNTED },
		.group = group,
	};
	return in;
}

TEST(groups_share_events_and_respect_constraints)
{
	struct perfctr_metrics *m = tables();
	struct perfctr_metric_plan *p;

	REQUIRE(m);
	p = perfctr_metric_plan__new(m, "calls,ppid_rate,loose", NULL);
	REQUIRE(p);
	CHECK_EQ_U64(perfctr_metric_plan__nr_metrics(p), 4);
	/* ppid_share's events are ppid_per_pid's group; ppid_rate's one
	 * event is in it too; loose's are a list of their own */
	CHECK_EQ_U64(perfctr_metric_plan__nr_groups(p), 2);
	CHECK_STR(perfctr_metric_plan__group(p, 0),
		  "{syscalls:sys_enter_getppid,syscalls:sys_enter_getpid}");
	CHECK_STR(perfctr_metric_plan__group(p, 1),
		  "task-clock,syscalls:sys_enter_getpid");
	CHECK(perfctr_metric_plan__group(p, 2) == NULL);
	perfctr_metric_plan__delete(p);
	perfctr_metrics__delete(m);
}

static void check_groups(struct perfctr_metric_plan *p,
			 const char *const *want, size_t nr)
{
	REQUIRE(p);
	CHECK_EQ_U64(perfctr_metric_plan__nr_groups(p), nr);
	for (size_t g = 0; g < nr; g++)
		CHECK_STR(perfctr_metric_plan__group(p, g), want[g]);
	perfctr_metric_plan__delete(p);
}

#define PPID "syscalls:sys_enter_getppid"
#define PID "syscalls:sys_enter_getpid"
#define TID "syscalls:sys_enter_gettid"

/* perf stat's rules (seen with perf 6.1 -v: "Events in 'a' fully
 * contained within 'b'"): the largest metric first, a metric whose events
 * an earlier one's group holds uses that group, whatever the order asked;
 * a partial overlap keeps two groups; ungrouped metrics share one list. */
TEST(shared_events_are_counted_once_as_perf_does)
{
	struct perfctr_metrics *m = tables();
	PERFCTR_OPTS(perfctr_metric_plan_opts, no_merge,
		     .flags = PERFCTR_METRIC_PLAN_NO_MERGE);
	PERFCTR_OPTS(perfctr_metric_plan_opts, no_group,
		     .flags = PERFCTR_METRIC_PLAN_NO_GROUP);
	PERFCTR_OPTS(perfctr_metric_plan_opts, neither,
		     .flags = PERFCTR_METRIC_PLAN_NO_GROUP |
			      PERFCTR_METRIC_PLAN_NO_MERGE);
	PERFCTR_OPTS(perfctr_metric_plan_opts, unknown, .flags = 1u << 7);
	const char *merged[] = { "{" PPID "," PID "}" };
	const char *own[] = { "{" PPID "," PID "}", PPID };
	const char *partial[] = { "{" PPID "," PID "}", "{" PPID "," TID "}" };
	const char *list[] = { PPID "," PID "," TID };
	const char *lists[] = { PPID "," PID, PPID "," TID };

	REQUIRE(m);
	check_groups(perfctr_metric_plan__new(m, "ppid_count,ppid_per_pid",
					      NULL), merged, 1);
	check_groups(perfctr_metric_plan__new_opts(m, "ppid_count,ppid_per_pid",
						   &no_merge, NULL), own, 2);
	check_groups(perfctr_metric_plan__new(m, "ppid_per_pid,ppid_and_tid",
					      NULL), partial, 2);
	check_groups(perfctr_metric_plan__new_opts(m, "ppid_per_pid,ppid_and_tid",
						   &no_group, NULL), list, 1);
	check_groups(perfctr_metric_plan__new_opts(m, "ppid_per_pid,ppid_and_tid",
						   &neither, NULL), lists, 2);
	errno = 0;
	CHECK(perfctr_metric_plan__new_opts(m, "ppid_count", &unknown,
					    NULL) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	perfctr_metrics__delete(m);
}

/* A metric given no group of its own is computed from the group that
 * holds its events: the same values as from groups of its own. */
TEST(merged_metrics_keep_their_values)
{
	struct perfctr_metrics *m = tables();
	struct perfctr_metric_plan *p;
	struct perfctr_metric_value v[2];
	struct perfctr_metric_input in[] = {
		ev(PPID, 3000, 1000, 0),
		ev(PID, 1000, 1000, 0),
	};

	REQUIRE(m);
	p = perfctr_metric_plan__new(m, "ppid_count,ppid_per_pid", NULL);
	REQUIRE(p);
	CHECK_EQ_INT(perfctr_metric_plan__compute(p, in, 2, 1e9, v, 2), 2);
	CHECK_EQ_INT(v[0].status, PERFCTR_METRIC_OK);
	CHECK(v[0].value == 3000.0);
	CHECK_EQ_INT(v[1].status, PERFCTR_METRIC_OK);
	CHECK(v[1].value == 3.0);
	perfctr_metric_plan__delete(p);
	perfctr_metrics__delete(m);
}

TEST(values_are_exact)
{
	struct perfctr_metrics *m = tables();
	struct perfctr_metric_plan *p;
	struct perfctr_metric_value v[8];
	struct perfctr_metric_def d;
	struct perfctr_metric_input in[] = {
		ev("syscalls:sys_enter_getppid", 3000, 1000, 0),
		ev("syscalls:sys_enter_getpid", 1000, 1000, 0),
	};

	REQUIRE(m);
	p = perfctr_metric_plan__new(m, "ppid_per_pid,ppid_share,ppid_rate,"
					"twice_ratio", NULL);
	REQUIRE(p);
	CHECK_EQ_INT(perfctr_metric_plan__compute(p, in, 2, 2e9, v, 8), 4);
	CHECK_EQ_INT(v[0].status, PERFCTR_METRIC_OK);
	CHECK(v[0].value == 3.0);
	CHECK_EQ_INT(v[0].threshold, -1);
	CHECK(!v[0].multiplexed);
	CHECK_EQ_INT(v[1].status, PERFCTR_METRIC_OK);
	CHECK(v[1].value == 75.0);		/* ScaleUnit 100% */
	CHECK_EQ_INT(v[1].threshold, 1);	/* 0.75 > 0.5, unscaled */
	CHECK_EQ_INT(perfctr_metric_plan__def(p, 1, &d), 0);
	CHECK_STR(d.unit, "%");
	CHECK(v[2].value == 1500.0);		/* per second of 2 s */
	CHECK(v[3].value == 6.0);		/* a metric of a metric */
	perfctr_metric_plan__delete(p);
	perfctr_metrics__delete(m);
}

TEST(counts_of_one_group_may_be_multiplexed)
{
	struct perfctr_metrics *m = tables();
	struct perfctr_metric_plan *p;
	struct perfctr_metric_value v[2];
	struct perfctr_metric_input in[] = {
		ev("syscalls:sys_enter_getppid", 300, 100, 4),
		ev("syscalls:sys_enter_getpid", 100, 100, 4),
	};

	REQUIRE(m);
	p = perfctr_metric_plan__new(m, "ppid_per_pid", NULL);
	REQUIRE(p);
	CHECK_EQ_INT(perfctr_metric_plan__compute(p, in, 2, 1e9, v, 2), 1);
	CHECK_EQ_INT(v[0].status, PERFCTR_METRIC_OK);
	CHECK(v[0].value == 3.0);
	CHECK(v[0].multiplexed);
	perfctr_metric_plan__delete(p);
	perfctr_metrics__delete(m);
}

TEST(counts_not_together_give_no_value)
{
	struct perfctr_metrics *m = tables();
	struct perfctr_metric_plan *p;
	struct perfctr_metric_value v[2];
	struct perfctr_metric_input in[] = {
		ev("syscalls:sys_enter_getppid", 300, 500, 0),
		ev("syscalls:sys_enter_getpid", 100, 500, 1),
	};

	REQUIRE(m);
	p = perfctr_metric_plan__new(m, "ppid_per_pid", NULL);
	REQUIRE(p);
	CHECK_EQ_INT(perfctr_metric_plan__compute(p, in, 2, 1e9, v, 2), 1);
	CHECK_EQ_INT(v[0].status, PERFCTR_METRIC_NOT_TOGETHER);
	/* each all of its time: together after all */
	in[0].count.time_running = in[1].count.time_running = 1000;
	CHECK_EQ_INT(perfctr_metric_plan__compute(p, in, 2, 1e9, v, 2), 1);
	CHECK_EQ_INT(v[0].status, PERFCTR_METRIC_OK);
	perfctr_metric_plan__delete(p);
	perfctr_metrics__delete(m);
}

TEST(missing_and_uncounted_events_are_named)
{
	struct perfctr_metrics *m = tables();
	struct perfctr_metric_plan *p;
	struct perfctr_metric_value v[3];
	struct perfctr_metric_input in[] = {
		ev("syscalls:sys_enter_getppid", 300, 1000, 0),
		ev("syscalls:sys_enter_getpid", 100, 0, 0),
	};

	REQUIRE(m);
	p = perfctr_metric_plan__new(m, "unknown_event,ppid_per_pid,"
					"ppid_rate", NULL);
	REQUIRE(p);
	REQUIRE(perfctr_metric_plan__missing(p, 0));
	CHECK(strstr(perfctr_metric_plan__missing(p, 0), "'no_such_event'"));
	CHECK(perfctr_metric_plan__missing(p, 1) == NULL);
	CHECK_EQ_INT(perfctr_metric_plan__compute(p, in, 2, 1e9, v, 3), 3);
	CHECK_EQ_INT(v[0].status, PERFCTR_METRIC_NO_EVENT);
	CHECK_STR(v[0].event, "no_such_event");
	CHECK_EQ_INT(v[1].status, PERFCTR_METRIC_NOT_COUNTED);
	CHECK_STR(v[1].event, "syscalls:sys_enter_getpid");
	/* the others still have their values */
	CHECK_EQ_INT(v[2].status, PERFCTR_METRIC_OK);
	CHECK(v[2].value == 300.0);
	perfctr_metric_plan__delete(p);
	perfctr_metrics__delete(m);
}

TEST(plan_errors_name_the_metric)
{
	struct perfctr_metrics *m = tables();
	struct perfctr_metric_error err;

	REQUIRE(m);
	CHECK(perfctr_metric_plan__new(m, "nonesuch", &err) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK_STR(err.metric, "nonesuch");
	CHECK(strstr(err.msg, "neither a metric nor a metric group"));
	CHECK(perfctr_metric_plan__new(m, "loop_a", &err) == NULL);
	CHECK_EQ_INT(errno, ELOOP);
	CHECK(perfctr_metric_plan__new(m, "bad", &err) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	CHECK_STR(err.metric, "bad");
	CHECK_EQ_INT(err.pos, 8);
	perfctr_metrics__delete(m);
}

TEST_MAIN(TEST_CASE(groups_share_events_and_respect_constraints),
	  TEST_CASE(shared_events_are_counted_once_as_perf_does),
	  TEST_CASE(merged_metrics_keep_their_values),
	  TEST_CASE(values_are_exact),
	  TEST_CASE(counts_of_one_group_may_be_multiplexed),
	  TEST_CASE(counts_not_together_give_no_value),
	  TEST_CASE(missing_and_uncounted_events_are_named),
	  TEST_CASE(plan_errors_name_the_metric))
