/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex serve's text bodies (text.h): a chunk written in place, grown
 * into the body (plain) or handed to a compressor thread (gzip).
 *
 * The compressor takes one chunk at a time: the writer fills chunk A
 * while the thread deflates chunk B, then they swap.  The thread is
 * started at the first full chunk, so a small body (a /metrics of a few
 * cgroups) is compressed in the caller's thread, at its end, with no
 * thread at all.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

#include "text.h"

/* A gzip'd body is handed on in chunks of this size (large enough that a hand-over, a lock and a wake-up, is rare;
 * small enough to stay in the caches of both CPUs). */
#define CHUNK (256 * 1024)

#ifdef HAVE_ZLIB
struct serve_gzip {
	z_stream z;
	bool z_ready;
	char *out;		/* the compressed body so far */
	size_t out_len, out_cap;
	bool failed;
	/* The compressor thread, once a chunk filled. */
	bool threaded;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *in;		/* the chunk handed over, or NULL */
	size_t in_len;
	char *spare;		/* a chunk the thread is done with */
	bool finish;		/* no chunk will follow */
};

/* Deflate @len bytes into the body; @flush Z_NO_FLUSH or Z_FINISH. */
static void deflate_into(struct serve_gzip *gz, const char *p, size_t len,
			 int flush)
{
	int ret;

	gz->z.next_in = (Bytef *)p;
	gz->z.avail_in = (uInt)len;
	do {
		if (gz->out_cap - gz->out_len < 64 * 1024) {
			size_t cap = gz->out_cap ? gz->out_cap * 2 : CHUNK;
			char *n = realloc(gz->out, cap);

			if (!n) {
				gz->failed = true;
				return;
			}
			gz->out = n;
			gz->out_cap = cap;
		}
		gz->z.next_out = (Bytef *)gz->out + gz->out_len;
		gz->z.avail_out = (uInt)(gz->out_cap - gz->out_len);
		ret = deflate(&gz->z, flush);
		gz->out_len = gz->out_cap - gz->z.avail_out;
		if (ret == Z_STREAM_ERROR) {
			gz->failed = true;
			return;
		}
	} while (gz->z.avail_in || (flush == Z_FINISH && ret != Z_STREAM_END));
}

static void *compressor(void *arg)
{
	struct serve_gzip *gz = arg;

	pthread_mutex_lock(&gz->lock);
	for (;;) {
		char *in;
		size_t len;

		while (!gz->in && !gz->finish)
			pthread_cond_wait(&gz->cond, &gz->lock);
		if (!gz->in)
			break;
		in = gz->in;
		len = gz->in_len;
		pthread_mutex_unlock(&gz->lock);
		if (!gz->failed)
			deflate_into(gz, in, len, Z_NO_FLUSH);
		pthread_mutex_lock(&gz->lock);
		gz->in = NULL;
		gz->spare = in;
		pthread_cond_broadcast(&gz->cond);
	}
	pthread_mutex_unlock(&gz->lock);
	return NULL;
}

/* Hand the full chunk of @t over; @t gets the spare one back. */
static int hand_over(struct serve_text *t)
{
	struct serve_gzip *gz = t->gz;
	char *next;

	if (!gz->threaded) {
		if (pthread_create(&gz->thread, NULL, compressor, gz)) {
			/* No thread: compressed here, as it comes. */
			deflate_into(gz, t->p, t->len, Z_NO_FLUSH);
			t->len = 0;
			return gz->failed ? -ENOMEM : 0;
		}
		gz->threaded = true;
	}
	pthread_mutex_lock(&gz->lock);
	while (gz->in)
		pthread_cond_wait(&gz->cond, &gz->lock);
	next = gz->spare;
	gz->spare = NULL;
	if (next || (next = malloc(CHUNK))) {
		gz->in = t->p;
		gz->in_len = t->len;
		pthread_cond_broadcast(&gz->cond);
	}
	pthread_mutex_unlock(&gz->lock);
	if (!next)
		return -ENOMEM;
	t->p = next;
	t->len = 0;
	t->cap = CHUNK;
	return 0;
}

/* The thread's last chunk done, the thread gone. */
static void join(struct serve_gzip *gz)
{
	if (!gz->threaded)
		return;
	pthread_mutex_lock(&gz->lock);
	gz->finish = true;
	pthread_cond_broadcast(&gz->cond);
	pthread_mutex_unlock(&gz->lock);
	pthread_join(gz->thread, NULL);
	gz->threaded = false;
	free(gz->spare);
	gz->spare = NULL;
}

static void gzip_free(struct serve_gzip *gz)
{
	if (!gz)
		return;
	join(gz);
	if (gz->z_ready)
		deflateEnd(&gz->z);
	pthread_mutex_destroy(&gz->lock);
	pthread_cond_destroy(&gz->cond);
	free(gz->out);
	free(gz);
}

static struct serve_gzip *gzip_new(void)
{
	struct serve_gzip *gz = calloc(1, sizeof(*gz));

	if (!gz)
		return NULL;
	pthread_mutex_init(&gz->lock, NULL);
	pthread_cond_init(&gz->cond, NULL);
	/* Level 1: a node's exposition (megabytes of near-identical label
	 * text) shrinks 20 to 30 times even so. */
	if (deflateInit2(&gz->z, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		gzip_free(gz);
		return NULL;
	}
	gz->z_ready = true;
	return gz;
}

bool serve_gzip_buffer(const char *in, size_t len, char **out,
		       size_t *out_len)
{
	struct serve_gzip *gz = gzip_new();

	if (!gz)
		return false;
	deflate_into(gz, in, len, Z_FINISH);
	if (gz->failed) {
		gzip_free(gz);
		return false;
	}
	*out = gz->out;
	*out_len = gz->out_len;
	gz->out = NULL;
	gzip_free(gz);
	return true;
}
#else
struct serve_gzip {
	int unused;
};

static int hand_over(struct serve_text *t)
{
	return -ENOTSUP;
}

static void gzip_free(struct serve_gzip *gz)
{
}

bool serve_gzip_buffer(const char *in, size_t len, char **out,
		       size_t *out_len)
{
	return false;
}
#endif

int serve_text_init(struct serve_text *t, bool gzip)
{
	memset(t, 0, sizeof(*t));
#ifdef HAVE_ZLIB
	if (gzip) {
		if (!(t->gz = gzip_new()))
			return -ENOMEM;
		t->p = malloc(CHUNK);
		if (!t->p) {
			gzip_free(t->gz);
			t->gz = NULL;
			return -ENOMEM;
		}
		t->cap = CHUNK;
	}
#endif
	return 0;
}

char *serve_text_grow(struct serve_text *t, size_t n)
{
	size_t cap;
	char *p;

	if (t->failed)
		return NULL;
	/* Gzip'd: a chunk is handed on once full (n fits an empty one:
	 * lines are far shorter than a chunk, and the rest grows it). */
	if (t->gz && t->len && hand_over(t) < 0) {
		t->failed = true;
		return NULL;
	}
	if (t->len + n <= t->cap)
		return t->p + t->len;
	cap = t->cap ? t->cap : 64;
	while (cap < t->len + n)
		cap *= 2;
	p = realloc(t->p, cap);
	if (!p) {
		t->failed = true;
		return NULL;
	}
	t->p = p;
	t->cap = cap;
	return t->p + t->len;
}

void serve_text_discard(struct serve_text *t)
{
	gzip_free(t->gz);
	free(t->p);
	memset(t, 0, sizeof(*t));
}

char *serve_text_finish(struct serve_text *t, size_t *len, bool *gzipped)
{
	char *body = NULL;

	*gzipped = false;
	if (!t->failed && !t->gz && serve_text_room(t, 1)) {
		t->p[t->len] = '\0';
		body = t->p;
		*len = t->len;
		t->p = NULL;
	}
#ifdef HAVE_ZLIB
	if (!t->failed && t->gz) {
		struct serve_gzip *gz = t->gz;

		join(gz);
		if (!gz->failed)
			deflate_into(gz, t->p, t->len, Z_FINISH);
		if (!gz->failed) {
			body = gz->out;
			*len = gz->out_len;
			*gzipped = true;
			gz->out = NULL;
		}
	}
#endif
	serve_text_discard(t);
	if (!body)
		errno = ENOMEM;
	return body;
}

void serve_text_put(struct serve_text *t, const char *s, size_t len)
{
	char *w = serve_text_room(t, len);

	if (!w)
		return;
	memcpy(w, s, len);
	t->len += len;
}

void serve_text_puts(struct serve_text *t, const char *s)
{
	serve_text_put(t, s, strlen(s));
}

void serve_text_printf(struct serve_text *t, const char *fmt, ...)
{
	va_list ap;
	char *w;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(w = serve_text_room(t, (size_t)n + 1)))
		return;
	va_start(ap, fmt);
	vsnprintf(w, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

void serve_text_quoted(struct serve_text *t, const char *s)
{
	/* Each byte two at most, and the quotes. */
	char *w = serve_text_room(t, 2 * strlen(s) + 2);

	if (!w)
		return;
	*w++ = '"';
	for (; *s; s++) {
		if (*s == '\\' || *s == '"') {
			*w++ = '\\';
			*w++ = *s;
		} else if (*s == '\n') {
			*w++ = '\\';
			*w++ = 'n';
		} else {
			*w++ = *s;
		}
	}
	*w++ = '"';
	t->len = (size_t)(w - t->p);
}

char *serve_text_u64_at(char *w, uint64_t v)
{
	char tmp[20];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(w, tmp + i, sizeof(tmp) - i);
	return w + sizeof(tmp) - i;
}

char *serve_text_seconds_at(char *w, uint64_t ns)
{
	uint64_t f = ns % 1000000000u;

	w = serve_text_u64_at(w, ns / 1000000000u);
	*w = '.';
	for (int i = 9; i >= 1; i--) {
		w[i] = (char)('0' + f % 10);
		f /= 10;
	}
	return w + 10;
}

/* ----------------------------------------------------------- families */

void serve_text_head(struct serve_text *t, const struct serve_family *f,
		     enum serve_format fmt)
{
	bool om = fmt == SERVE_FORMAT_OPENMETRICS;
	const char *suffix = f->counter && !om ? "_total" : "";
	const char *type = f->counter ? "counter" : "gauge";

	serve_text_printf(t, "# HELP %s%s %s\n# TYPE %s%s %s\n", f->name,
			  suffix, f->help, f->name, suffix, type);
	if (om && f->unit)
		serve_text_printf(t, "# UNIT %s %s\n", f->name, f->unit);
}

void serve_text_sample(struct serve_text *t, const struct serve_family *f,
		       const char *labels, const char *extra,
		       const char *value)
{
	bool l = labels && *labels, x = extra && *extra;

	serve_text_puts(t, f->name);
	if (f->counter)
		serve_text_put(t, "_total", 6);
	if (l || x) {
		serve_text_put(t, "{", 1);
		if (l)
			serve_text_puts(t, labels);
		/* @extra's comma leads only after other labels. */
		if (x)
			serve_text_puts(t, l ? extra : extra + 1);
		serve_text_put(t, "}", 1);
	}
	serve_text_put(t, " ", 1);
	serve_text_puts(t, value);
	serve_text_put(t, "\n", 1);
}
