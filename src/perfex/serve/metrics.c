/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The families perfex serve writes (text.h): the four count families of
 * every series, and the exporter's health, one row of a table each.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "text.h"

/* ------------------------------------------------------------- counts */

enum value_kind { V_RAW, V_SCALED, V_ENABLED, V_RUNNING };

static const struct count_family {
	struct serve_family f;
	enum value_kind kind;
} count_families[] = {
	{ { "perfex_events", true, NULL,
	    "Events counted, raw: as the kernel summed them while the event "
	    "ran on a counter (perfex_time_running_seconds)." }, V_RAW },
	{ { "perfex_events_scaled", false, NULL,
	    "Events estimated for the whole enabled time: raw * enabled / "
	    "running (equal to the raw count when the event was never "
	    "multiplexed; an estimate, so it can fall slightly between "
	    "scrapes)." }, V_SCALED },
	{ { "perfex_time_enabled_seconds", true, "seconds",
	    "Time the event was enabled." }, V_ENABLED },
	{ { "perfex_time_running_seconds", true, "seconds",
	    "Time the event was on a hardware or software counter (less "
	    "than enabled: multiplexed)." }, V_RUNNING },
};

/* The longest value a line ends with: 20 digits, or a scaled estimate's
 * %.17g (24), or 20 digits of seconds and 10 of fraction; then "\n". */
#define VALUE_MAX 32

static void count_lines(struct serve_text *t, const struct count_family *cf,
			const struct serve_series *s, const char *name,
			size_t name_len)
{
	for (size_t k = 0; k < s->nr; k++) {
		const struct perfctr_count *c = &s->counts[k];
		size_t need = name_len + s->labels_len[k] + 2 + VALUE_MAX;
		char *w;

		if (c->status == PERFCTR_COUNT_NOT_SUPPORTED)
			continue;
		if (cf->kind == V_SCALED && !c->time_running)
			continue;
		/* One check for the line, then writes in place: a node's
		 * scrape is hundreds of thousands of lines. */
		if (!(w = serve_text_room(t, need)))
			return;
		memcpy(w, name, name_len);
		w += name_len;
		memcpy(w, s->labels[k], s->labels_len[k]);
		w += s->labels_len[k];
		*w++ = '}';
		*w++ = ' ';
		switch (cf->kind) {
		case V_RAW:
			w = serve_text_u64_at(w, c->value);
			break;
		case V_SCALED:
			if (c->time_running == c->time_enabled)
				w = serve_text_u64_at(w, c->value);
			else
				w += snprintf(w, VALUE_MAX, "%.17g",
					      perfctr_count__scaled(c));
			break;
		case V_ENABLED:
			w = serve_text_seconds_at(w, c->time_enabled);
			break;
		case V_RUNNING:
			w = serve_text_seconds_at(w, c->time_running);
			break;
		}
		*w++ = '\n';
		t->len = (size_t)(w - t->p);
	}
}

void serve_metrics_counts(struct serve_text *t, enum serve_format fmt,
			  const struct serve_series *scopes, size_t nr)
{
	if (!nr)
		return;
	for (size_t i = 0; i < sizeof(count_families) /
			       sizeof(count_families[0]); i++) {
		const struct count_family *cf = &count_families[i];
		char name[96];
		int name_len;

		serve_text_head(t, &cf->f, fmt);
		/* "name_total{" once for all lines. */
		name_len = snprintf(name, sizeof(name), "%s%s{", cf->f.name,
				    cf->f.counter ? "_total" : "");
		if (name_len < 0 || (size_t)name_len >= sizeof(name))
			return;
		for (size_t s = 0; s < nr; s++)
			count_lines(t, cf, &scopes[s], name, (size_t)name_len);
	}
}

/* ------------------------------------------------------------- health */

/*
 * A health family: one sample of a number in struct serve_health (at
 * @offset, of @type), or one written by @write (several samples, or
 * labels of its own).
 */
enum field_type { F_U64, F_I64, F_BOOL };

struct health_row {
	struct serve_family f;
	void (*write)(struct serve_text *t, const struct serve_family *f,
		      const struct serve_health *h);
	size_t offset;
	enum field_type type;
	bool only_with_cgroups;
};

static void write_unavailable(struct serve_text *t,
			      const struct serve_family *f,
			      const struct serve_health *h)
{
	for (size_t i = 0; i < h->nr_unavail; i++) {
		serve_text_puts(t, f->name);
		serve_text_puts(t, "{event=");
		serve_text_quoted(t, h->unavail_event[i]);
		serve_text_puts(t, ",reason=");
		serve_text_quoted(t, h->unavail_reason[i]);
		if (h->extra)
			serve_text_puts(t, h->extra);
		serve_text_puts(t, "} 1\n");
	}
}

static void write_u64(struct serve_text *t, const struct serve_family *f,
		      const char *labels, const struct serve_health *h,
		      uint64_t v)
{
	char value[24];

	snprintf(value, sizeof(value), "%" PRIu64, v);
	serve_text_sample(t, f, labels, h->extra, value);
}

static void write_mode(struct serve_text *t, const struct serve_family *f,
		       const struct serve_health *h)
{
	write_u64(t, f, "mode=\"bpf\"", h, h->by_bpf);
	/* Sessions fall back one by one for what the BPF counters cannot
	 * count (event sets, too many events or cgroups). */
	serve_text_puts(t, f->name);
	serve_text_puts(t, "{mode=\"cgroup-events\",reason=");
	serve_text_quoted(t, h->bpf_reason[0] ? h->bpf_reason :
			  h->by_events ? "events or cgroups the BPF counters "
			  "cannot take (the log names them)" : "");
	serve_text_printf(t, "%s} %" PRIu64 "\n", h->extra ? h->extra : "",
			  h->by_events);
}

static void write_reloads(struct serve_text *t, const struct serve_family *f,
			  const struct serve_health *h)
{
	write_u64(t, f, "result=\"success\"", h, h->reloads_ok);
	write_u64(t, f, "result=\"failure\"", h, h->reloads_failed);
}

static void write_profiles(struct serve_text *t, const struct serve_family *f,
			   const struct serve_health *h)
{
	static const char *const results[SERVE_PROFILE_NR_RESULTS] = {
		[SERVE_PROFILE_OK] = "result=\"ok\"",
		[SERVE_PROFILE_CONFLICT] = "result=\"conflict\"",
		[SERVE_PROFILE_BAD_REQUEST] = "result=\"bad_request\"",
		[SERVE_PROFILE_FAILED] = "result=\"failed\"",
	};

	for (size_t i = 0; i < SERVE_PROFILE_NR_RESULTS; i++)
		write_u64(t, f, results[i], h, h->profiles[i]);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Last, so that it covers the rest of the scrape. */
static void write_duration(struct serve_text *t, const struct serve_family *f,
			   const struct serve_health *h)
{
	char value[32];

	snprintf(value, sizeof(value), "%.9f",
		 (double)(now_ns() - h->start_ns) / 1e9);
	serve_text_sample(t, f, NULL, h->extra, value);
}

#define FIELD(name, type) NULL, offsetof(struct serve_health, name), type

static const struct health_row health_rows[] = {
	{ { "perfex_event_unavailable", false, NULL,
	    "1 for each event this machine cannot count, with the reason; "
	    "the other events are served." }, write_unavailable },
	{ { "perfex_cgroups", false, NULL, "Cgroups counted now." },
	  FIELD(cgroups, F_U64) },
	{ { "perfex_cgroup_counting_mode", false, NULL,
	    "Cgroups counted through the BPF counters (mode=\"bpf\") and "
	    "with the kernel's cgroup events (mode=\"cgroup-events\", "
	    "reason: why not through BPF)." }, write_mode, 0, 0, true },
	{ { "perfex_cgroup_errors", true, NULL,
	    "Cgroups that could not be counted (the log says why)." },
	  FIELD(cgroup_errors, F_U64) },
	{ { "perfex_series_dropped", false, NULL,
	    "Series not served now because of max-series: those of the "
	    "cgroups left uncounted (4 per event and CPU of each)." },
	  FIELD(dropped_series, F_U64) },
	{ { "perfex_read_errors", true, NULL, "Failed reads of counters." },
	  FIELD(read_errors, F_U64) },
	{ { "perfex_open_fds", false, NULL,
	    "File descriptors the exporter holds open (one per event, CPU "
	    "and cgroup, and its own), as of the last change of cgroups." },
	  FIELD(open_fds, F_I64) },
	{ { "perfex_config_reloads", true, NULL,
	    "Configuration reloads (SIGHUP), by result." }, write_reloads },
	{ { "perfex_config_last_reload_successful", false, NULL,
	    "1 when the last reload succeeded (or there was none)." },
	  FIELD(last_reload_ok, F_BOOL) },
	{ { "perfex_profiles_running", false, NULL,
	    "Profiles of /debug/pprof/profile being taken now." },
	  FIELD(profiles_running, F_U64) },
	{ { "perfex_profiles", true, NULL,
	    "Requests of /debug/pprof/profile, by result: ok, conflict (one "
	    "of the target was running), bad_request, failed." },
	  write_profiles },
	{ { "perfex_scrape_duration_seconds", false, "seconds",
	    "Time this scrape took to read the counters and format them "
	    "(gzip'd: and to compress all but the last part)." },
	  write_duration },
};

void serve_metrics_health(struct serve_text *t, enum serve_format fmt,
			  const struct serve_health *h)
{
	for (size_t i = 0; i < sizeof(health_rows) / sizeof(health_rows[0]);
	     i++) {
		const struct health_row *r = &health_rows[i];
		const char *field = (const char *)h + r->offset;
		char value[24];

		if (r->only_with_cgroups && !h->counts_cgroups)
			continue;
		serve_text_head(t, &r->f, fmt);
		if (r->write) {
			r->write(t, &r->f, h);
			continue;
		}
		switch (r->type) {
		case F_U64:
			snprintf(value, sizeof(value), "%" PRIu64,
				 *(const uint64_t *)field);
			break;
		case F_I64:
			snprintf(value, sizeof(value), "%" PRId64,
				 *(const int64_t *)field);
			break;
		case F_BOOL:
			snprintf(value, sizeof(value), "%d",
				 *(const bool *)field);
			break;
		}
		serve_text_sample(t, &r->f, NULL, h->extra, value);
	}
}
