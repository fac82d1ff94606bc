/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex serve's text bodies and the Prometheus / OpenMetrics text formats
 * (text.c), and the families the exporter serves (metrics.c).
 *
 * A body is written into a chunk.  Plain, the chunk grows into the whole
 * body.  Gzip'd, each full chunk is handed to a compressor thread, which
 * deflates it while the next is formatted: a node's exposition (15 MB at
 * 5,000 cgroups) is never held whole, and formatting and compressing,
 * each about half of a scrape's work, run side by side.
 */
#ifndef PERFEX_SERVE_TEXT_H
#define PERFEX_SERVE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perfctr/perfctr.h>

#include "serve.h"

struct serve_gzip;

struct serve_text {
	char *p;		/* the chunk being written */
	size_t len, cap;
	bool failed;		/* out of memory: the body is lost */
	struct serve_gzip *gz;	/* NULL: plain */
};

/* Start a body; @gzip: compressed as it is written (without zlib, plain:
 * serve_text_finish() says which).  A plain body grows from nothing
 * (serve_text_grow() reserves ahead).  Return 0 or -ENOMEM. */
int serve_text_init(struct serve_text *t, bool gzip);
/* The body, malloc'd and NUL-terminated (plain), its length in *@len,
 * *@gzipped whether it is gzip'd; NULL (errno ENOMEM) when any write
 * failed.  @t is then empty. */
char *serve_text_finish(struct serve_text *t, size_t *len, bool *gzipped);
/* Drop a body being written. */
void serve_text_discard(struct serve_text *t);

/* Room for @n more bytes at t->p + t->len, or NULL (t->failed). */
char *serve_text_grow(struct serve_text *t, size_t n);
static inline char *serve_text_room(struct serve_text *t, size_t n)
{
	if (t->len + n <= t->cap)
		return t->p + t->len;
	return serve_text_grow(t, n);
}

void serve_text_put(struct serve_text *t, const char *s, size_t len);
void serve_text_puts(struct serve_text *t, const char *s);
void serve_text_printf(struct serve_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A label value as the text formats quote it: \\, \" and \n escaped. */
void serve_text_quoted(struct serve_text *t, const char *s);
/* Decimal digits of @v at @w (20 bytes at most); the end. */
char *serve_text_u64_at(char *w, uint64_t v);
/* Nanoseconds as seconds, exactly ("12.000000345") at @w (31 bytes at
 * most); the end. */
char *serve_text_seconds_at(char *w, uint64_t ns);

/* A whole buffer gzip'd (level 1), for replies made whole; false when
 * zlib is missing or fails. */
bool serve_gzip_buffer(const char *in, size_t len, char **out,
		       size_t *out_len);

/* ----------------------------------------------------------- families */

struct serve_family {
	const char *name;	/* without _total */
	bool counter;		/* else a gauge */
	const char *unit;	/* OpenMetrics UNIT, or NULL */
	const char *help;
};

/* # HELP, # TYPE (and # UNIT) of @f: Prometheus text names a counter's
 * family with _total, OpenMetrics without. */
void serve_text_head(struct serve_text *t, const struct serve_family *f,
		     enum serve_format fmt);
/* A sample of @f: its name, {@labels@extra} (either may be NULL or "";
 * @extra starts with a comma), @value. */
void serve_text_sample(struct serve_text *t, const struct serve_family *f,
		       const char *labels, const char *extra,
		       const char *value);

/* The series of one scope (metrics.c): for each event and unit, its label
 * text (made once) and the counts of the last read. */
struct serve_series {
	size_t nr;				/* events x units */
	char *const *labels;
	const size_t *labels_len;
	const struct perfctr_count *counts;
};

/* The four count families over @nr scopes (perfex_events,
 * perfex_events_scaled, perfex_time_enabled_seconds,
 * perfex_time_running_seconds). */
void serve_metrics_counts(struct serve_text *t, enum serve_format fmt,
			  const struct serve_series *scopes, size_t nr);

/* The exporter's own state, as of one scrape, for the health families. */
struct serve_health {
	const char *extra;		/* ",name=\"value\"" labels, or NULL */
	const char *const *unavail_event, *const *unavail_reason;
	size_t nr_unavail;
	uint64_t cgroups;
	bool counts_cgroups;		/* cgroups are configured */
	uint64_t by_bpf, by_events;
	const char *bpf_reason;		/* "" when none */
	uint64_t cgroup_errors, dropped_series, read_errors;
	int64_t open_fds;
	uint64_t reloads_ok, reloads_failed;
	bool last_reload_ok;
	uint64_t profiles_running;
	uint64_t profiles[SERVE_PROFILE_NR_RESULTS];
	uint64_t start_ns;		/* the scrape's start (monotonic) */
};

void serve_metrics_health(struct serve_text *t, enum serve_format fmt,
			  const struct serve_health *h);

#endif
