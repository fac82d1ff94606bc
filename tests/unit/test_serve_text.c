/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex serve's text bodies and families (src/perfex/serve/text.c,
 * metrics.c), without an exporter: exact lines of the count families in
 * both formats, the health families from a made-up state, quoting, and
 * a gzip'd body of many chunks that decompresses to the plain one.
 */
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

#include "test.h"
#include "text.h"

static char *plain(struct serve_text *t, size_t *len)
{
	bool gz = true;
	char *body = serve_text_finish(t, len, &gz);

	REQUIRE(body);
	CHECK(!gz);
	CHECK_EQ_U64(strlen(body), *len);
	return body;
}

/* One scope of 2 events x 2 CPUs: labels and counts as the exporter
 * makes them. */
static char *labels[4] = {
	"cgroup=\"/a\",cpu=\"0\",event=\"task-clock\"",
	"cgroup=\"/a\",cpu=\"1\",event=\"task-clock\"",
	"cgroup=\"/a\",cpu=\"0\",event=\"cycles\"",
	"cgroup=\"/a\",cpu=\"1\",event=\"cycles\"",
};

static struct serve_series scope(struct perfctr_count *counts)
{
	static size_t lens[4];

	for (size_t i = 0; i < 4; i++)
		lens[i] = strlen(labels[i]);
	return (struct serve_series){ .nr = 4, .labels = labels,
				      .labels_len = lens, .counts = counts };
}

TEST(count_families_prometheus)
{
	struct perfctr_count c[4] = {
		{ .value = 12345, .time_enabled = 2000000001,
		  .time_running = 2000000001 },
		{ .value = 0, .time_enabled = 5, .time_running = 5 },
		/* multiplexed: half the time on a counter */
		{ .value = 100, .time_enabled = 1000, .time_running = 500 },
		{ .status = PERFCTR_COUNT_NOT_SUPPORTED },
	};
	struct serve_series s = scope(c);
	struct serve_text t;
	size_t len;
	char *body;

	REQUIRE(serve_text_init(&t, false) == 0);
	serve_metrics_counts(&t, SERVE_FORMAT_PROMETHEUS, &s, 1);
	body = plain(&t, &len);
	CHECK_STR(body,
		"# HELP perfex_events_total Events counted, raw: as the kernel summed them while the event ran on a counter (perfex_time_running_seconds).\n"
		"# TYPE perfex_events_total counter\n"
		"perfex_events_total{cgroup=\"/a\",cpu=\"0\",event=\"task-clock\"} 12345\n"
		"perfex_events_total{cgroup=\"/a\",cpu=\"1\",event=\"task-clock\"} 0\n"
		"perfex_events_total{cgroup=\"/a\",cpu=\"0\",event=\"cycles\"} 100\n"
		"# HELP perfex_events_scaled Events estimated for the whole enabled time: raw * enabled / running (equal to the raw count when the event was never multiplexed; an estimate, so it can fall slightly between scrapes).\n"
		"# TYPE perfex_events_scaled gauge\n"
		"perfex_events_scaled{cgroup=\"/a\",cpu=\"0\",event=\"task-clock\"} 12345\n"
		"perfex_events_scaled{cgroup=\"/a\",cpu=\"1\",event=\"task-clock\"} 0\n"
		"perfex_events_scaled{cgroup=\"/a\",cpu=\"0\",event=\"cycles\"} 200\n"
		"# HELP perfex_time_enabled_seconds_total Time the event was enabled.\n"
		"# TYPE perfex_time_enabled_seconds_total counter\n"
		"perfex_time_enabled_seconds_total{cgroup=\"/a\",cpu=\"0\",event=\"task-clock\"} 2.000000001\n"
		"perfex_time_enabled_seconds_total{cgroup=\"/a\",cpu=\"1\",event=\"task-clock\"} 0.000000005\n"
		"perfex_time_enabled_seconds_total{cgroup=\"/a\",cpu=\"0\",event=\"cycles\"} 0.000001000\n"
		"# HELP perfex_time_running_seconds_total Time the event was on a hardware or software counter (less than enabled: multiplexed).\n"
		"# TYPE perfex_time_running_seconds_total counter\n"
		"perfex_time_running_seconds_total{cgroup=\"/a\",cpu=\"0\",event=\"task-clock\"} 2.000000001\n"
		"perfex_time_running_seconds_total{cgroup=\"/a\",cpu=\"1\",event=\"task-clock\"} 0.000000005\n"
		"perfex_time_running_seconds_total{cgroup=\"/a\",cpu=\"0\",event=\"cycles\"} 0.000000500\n");
	free(body);
}

TEST(count_families_openmetrics_heads)
{
	struct perfctr_count c[4] = { { .value = UINT64_MAX, .time_enabled = 1,
					.time_running = 1 } };
	struct serve_series s = scope(c);
	struct serve_text t;
	size_t len;
	char *body;

	s.nr = 1;
	REQUIRE(serve_text_init(&t, false) == 0);
	serve_metrics_counts(&t, SERVE_FORMAT_OPENMETRICS, &s, 1);
	body = plain(&t, &len);
	/* OpenMetrics: the family without _total, its samples with it;
	 * a UNIT for the seconds. */
	CHECK(strstr(body, "# TYPE perfex_events counter\n"
		     "perfex_events_total{cgroup=\"/a\",cpu=\"0\",event=\"task-clock\"} 18446744073709551615\n"));
	CHECK(strstr(body, "# TYPE perfex_time_enabled_seconds counter\n"
		     "# UNIT perfex_time_enabled_seconds seconds\n"));
	CHECK(!strstr(body, "# UNIT perfex_events "));
	free(body);
}

TEST(health_families_from_a_state)
{
	const char *events[] = { "cycles" }, *reasons[] = { "no \"PMU\"\nhere" };
	struct serve_health h = {
		.extra = ",node=\"n1\"",
		.unavail_event = events, .unavail_reason = reasons,
		.nr_unavail = 1, .cgroups = 3, .counts_cgroups = true,
		.by_bpf = 2, .by_events = 1, .bpf_reason = "",
		.cgroup_errors = 4, .dropped_series = 5, .read_errors = 6,
		.open_fds = -1, .reloads_ok = 7, .reloads_failed = 8,
		.last_reload_ok = true, .profiles_running = 1,
		.profiles = { 9, 10, 11, 12 },
	};
	struct serve_text t;
	size_t len;
	char *body;

	REQUIRE(serve_text_init(&t, false) == 0);
	serve_metrics_health(&t, SERVE_FORMAT_PROMETHEUS, &h);
	body = plain(&t, &len);
	CHECK(strstr(body, "\nperfex_event_unavailable{event=\"cycles\",reason=\"no \\\"PMU\\\"\\nhere\",node=\"n1\"} 1\n"));
	CHECK(strstr(body, "\nperfex_cgroups{node=\"n1\"} 3\n"));
	CHECK(strstr(body, "\nperfex_cgroup_counting_mode{mode=\"bpf\",node=\"n1\"} 2\n"));
	CHECK(strstr(body, "\nperfex_cgroup_counting_mode{mode=\"cgroup-events\",reason=\"events or cgroups the BPF counters cannot take (the log names them)\",node=\"n1\"} 1\n"));
	CHECK(strstr(body, "# TYPE perfex_cgroup_errors_total counter\nperfex_cgroup_errors_total{node=\"n1\"} 4\n"));
	CHECK(strstr(body, "\nperfex_series_dropped{node=\"n1\"} 5\n"));
	CHECK(strstr(body, "\nperfex_read_errors_total{node=\"n1\"} 6\n"));
	CHECK(strstr(body, "\nperfex_open_fds{node=\"n1\"} -1\n"));
	CHECK(strstr(body, "\nperfex_config_reloads_total{result=\"success\",node=\"n1\"} 7\n"
		     "perfex_config_reloads_total{result=\"failure\",node=\"n1\"} 8\n"));
	CHECK(strstr(body, "\nperfex_config_last_reload_successful{node=\"n1\"} 1\n"));
	CHECK(strstr(body, "\nperfex_profiles_running{node=\"n1\"} 1\n"));
	CHECK(strstr(body, "\nperfex_profiles_total{result=\"ok\",node=\"n1\"} 9\n"
		     "perfex_profiles_total{result=\"conflict\",node=\"n1\"} 10\n"
		     "perfex_profiles_total{result=\"bad_request\",node=\"n1\"} 11\n"
		     "perfex_profiles_total{result=\"failed\",node=\"n1\"} 12\n"));
	/* Last, covering the rest. */
	{
		const char *d = strstr(body, "\nperfex_scrape_duration_seconds{node=\"n1\"} ");

		REQUIRE(d);
		CHECK(strchr(d + 1, '\n') == body + len - 1);
	}
	free(body);
}

TEST(health_without_cgroups_or_labels)
{
	struct serve_health h = { .bpf_reason = "", .open_fds = 12 };
	struct serve_text t;
	size_t len;
	char *body;

	REQUIRE(serve_text_init(&t, false) == 0);
	serve_metrics_health(&t, SERVE_FORMAT_OPENMETRICS, &h);
	body = plain(&t, &len);
	CHECK(!strstr(body, "perfex_cgroup_counting_mode"));
	CHECK(strstr(body, "\nperfex_cgroups 0\n"));
	CHECK(strstr(body, "\nperfex_open_fds 12\n"));
	CHECK(strstr(body, "# TYPE perfex_read_errors counter\nperfex_read_errors_total 0\n"));
	CHECK(strstr(body, "# UNIT perfex_scrape_duration_seconds seconds\n"));
	free(body);
}

TEST(numbers_and_quoting)
{
	struct serve_text t;
	char num[40], *w;
	size_t len;
	char *body;

	w = serve_text_u64_at(num, 0);
	CHECK_EQ_U64(w - num, 1);
	CHECK(!memcmp(num, "0", 1));
	w = serve_text_seconds_at(num, 12000000345ull);
	*w = 0;
	CHECK_STR(num, "12.000000345");
	w = serve_text_seconds_at(num, UINT64_MAX);
	*w = 0;
	CHECK_STR(num, "18446744073.709551615");
	REQUIRE(serve_text_init(&t, false) == 0);
	serve_text_quoted(&t, "a\\b\"c\nd");
	serve_text_quoted(&t, "");
	body = plain(&t, &len);
	CHECK_STR(body, "\"a\\\\b\\\"c\\nd\"\"\"");
	free(body);
}

#ifdef HAVE_ZLIB
/* The same 40,000 series written plain and gzip'd (chunks handed to the
 * compressor thread many times over): the gzip'd body inflates to the
 * plain one, byte for byte. */
TEST(gzip_body_of_many_chunks_inflates_to_the_plain_one)
{
	enum { NR = 40000 };
	char **lab = calloc(NR, sizeof(*lab));
	size_t *lens = calloc(NR, sizeof(*lens));
	struct perfctr_count *c = calloc(NR, sizeof(*c));
	struct serve_series s = { .nr = NR, .labels = lab, .labels_len = lens,
				  .counts = c };
	struct serve_text t;
	char *p, *g, *out;
	size_t plen, glen;
	bool gz;
	z_stream z = { 0 };

	REQUIRE(lab && lens && c);
	for (size_t i = 0; i < NR; i++) {
		REQUIRE(asprintf(&lab[i], "cgroup=\"/kubepods.slice/pod%04zu/c%zu\",cpu=\"%zu\",event=\"e%zu\"",
				 i / 8, i % 3, i % 2, i % 4) > 0);
		lens[i] = strlen(lab[i]);
		c[i] = (struct perfctr_count){ .value = i * 7919,
			.time_enabled = i * 1000003, .time_running = i * 1000003 };
	}
	REQUIRE(serve_text_init(&t, false) == 0);
	serve_metrics_counts(&t, SERVE_FORMAT_OPENMETRICS, &s, 1);
	p = plain(&t, &plen);
	CHECK(plen > 4 * 1024 * 1024);
	REQUIRE(serve_text_init(&t, true) == 0);
	serve_metrics_counts(&t, SERVE_FORMAT_OPENMETRICS, &s, 1);
	g = serve_text_finish(&t, &glen, &gz);
	REQUIRE(g);
	CHECK(gz);
	/* Label text repeats, numbers do not: 4 times smaller at least. */
	CHECK(glen < plen / 4);
	out = malloc(plen + 1);
	REQUIRE(out);
	REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = (Bytef *)g;
	z.avail_in = (uInt)glen;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)plen + 1;
	CHECK_EQ_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
	CHECK_EQ_U64(z.total_out, plen);
	CHECK(!memcmp(out, p, plen));
	inflateEnd(&z);
	for (size_t i = 0; i < NR; i++)
		free(lab[i]);
	free(lab);
	free(lens);
	free(c);
	free(p);
	free(g);
	free(out);
}

/* A small body is gzip'd too (in the caller's thread, at the end). */
TEST(gzip_small_body)
{
	struct serve_text t;
	char *g;
	size_t glen;
	bool gz;

	REQUIRE(serve_text_init(&t, true) == 0);
	serve_text_puts(&t, "# EOF\n");
	g = serve_text_finish(&t, &glen, &gz);
	REQUIRE(g);
	CHECK(gz);
	CHECK(glen > 18 && (unsigned char)g[0] == 0x1f &&
	      (unsigned char)g[1] == 0x8b);
	free(g);
}
#endif

/* A body dropped half written leaves nothing behind (ASan's leak check). */
TEST(discard)
{
	struct serve_text t;

	REQUIRE(serve_text_init(&t, true) == 0);
	for (int i = 0; i < 20000; i++)
		serve_text_printf(&t, "line %d of a body nobody will send\n", i);
	serve_text_discard(&t);
	CHECK(!t.p && !t.gz);
}

TEST_MAIN(TEST_CASE(count_families_prometheus),
	  TEST_CASE(count_families_openmetrics_heads),
	  TEST_CASE(health_families_from_a_state),
	  TEST_CASE(health_without_cgroups_or_labels),
	  TEST_CASE(numbers_and_quoting),
#ifdef HAVE_ZLIB
	  TEST_CASE(gzip_body_of_many_chunks_inflates_to_the_plain_one),
	  TEST_CASE(gzip_small_body),
#endif
	  TEST_CASE(discard))
