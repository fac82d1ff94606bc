// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench/ring-read: how fast our ring consumer drains records, against a
 * minimal raw consumer on the same ring in the same run.
 *
 * A getppid tracepoint samples every call (period 1, IP | TID | TIME,
 * 32-byte records) into a 512-page ring of the calling thread; with the
 * event disabled, the full ring is drained by
 *   raw:     acquire data_head, walk the headers (a record that wraps is
 *            only counted, not copied), release data_tail -- the least any
 *            consumer can do;
 *   ring:    perfctr_ring__drain() with a callback that counts;
 *   decode:  the same plus perfctr_decoder__sample() of each record.
 * The ring is refilled between passes (the kernel's part is not timed).
 * Printed: ns per record (median of the rounds) and ratios to raw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfctr/sampler.h"

#define PAGES 512
#define ROUNDS 15

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The least a consumer does: one pass over [tail, head). */
static uint64_t raw_drain(struct perf_event_mmap_page *page, size_t size,
			  uint64_t *sum)
{
	const unsigned char *data = (const unsigned char *)page + page->data_offset;
	uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = page->data_tail, n = 0;

	while (tail < head) {
		const struct perf_event_header *h =
			(const void *)(data + (tail & (size - 1)));

		*sum += h->type;
		tail += h->size;
		n++;
	}
	__atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

struct counter {
	const struct perfctr_decoder *dec;
	uint64_t n, sum;
	bool decode;
};

static int count_cb(struct perfctr_ring *ring, const struct perf_event_header *h,
		    void *ctx)
{
	struct counter *c = ctx;

	(void)ring;
	c->n++;
	if (c->decode) {
		struct perfctr_sample s;

		s.sz = sizeof(s);	/* the decoder clears the rest */
		if (perfctr_decoder__sample(c->dec, h, &s) == 0)
			c->sum += s.ip ^ s.tid;
	} else {
		c->sum += h->type;
	}
	return 0;
}

static void fill(struct perfctr_sampler *s, long calls)
{
	perfctr_sampler__enable(s);
	for (long i = 0; i < calls; i++)
		syscall(SYS_getppid);
	perfctr_sampler__disable(s);
}

int main(void)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o, .data_pages = PAGES);
	struct perfctr_sampler *s, *raw;
	struct perfctr_ring *ring;
	struct perf_event_mmap_page *page;
	uint64_t t_raw[ROUNDS], t_ring[ROUNDS], t_dec[ROUNDS];
	uint64_t recs = 0, sum = 0;
	long calls;
	FILE *f;
	int id = -1;

	f = fopen("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id", "r");
	if (!f || fscanf(f, "%d", &id) != 1) {
		fprintf(stderr, "ring-read: no getppid tracepoint (mount tracefs, run as root)\n");
		return 1;
	}
	fclose(f);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	/* Two samplers: the raw consumer moves data_tail behind the ring
	 * object's back, so it gets a ring of its own. */
	o.target = perfctr_target__new_self();
	s = perfctr_sampler__new(&o);
	raw = perfctr_sampler__new(&o);
	if (!o.target || !s || perfctr_sampler__add_attr(s, &attr, NULL) < 0 ||
	    perfctr_sampler__open(s) || !raw ||
	    perfctr_sampler__add_attr(raw, &attr, NULL) < 0 ||
	    perfctr_sampler__open(raw)) {
		perror("ring-read: sampler");
		return 1;
	}
	perfctr_target__delete((struct perfctr_target *)o.target);
	ring = perfctr_sampler__rings(s)[0];
	page = (void *)perfctr_ring__user_page(perfctr_sampler__rings(raw)[0]);
	/* Leave room: a full ring would lose records and make passes unequal. */
	calls = (long)(perfctr_ring__data_size(ring) / 32) - 64;

	for (int r = 0; r < ROUNDS; r++) {
		struct counter c = { .dec = perfctr_sampler__decoder(s) };
		uint64_t t0, n;

		fill(raw, calls);
		t0 = now_ns();
		n = raw_drain(page, perfctr_ring__data_size(ring), &sum);
		t_raw[r] = (now_ns() - t0) * 1000 / (n ? n : 1);
		recs = n;

		fill(s, calls);
		t0 = now_ns();
		perfctr_ring__drain(ring, count_cb, &c);
		t_ring[r] = (now_ns() - t0) * 1000 / (c.n ? c.n : 1);
		if (c.n != recs)
			printf( "ring-read: %lu records vs raw %lu\n",
				(unsigned long)c.n, (unsigned long)recs);

		fill(s, calls);
		c.n = 0;
		c.decode = true;
		t0 = now_ns();
		perfctr_ring__drain(ring, count_cb, &c);
		t_dec[r] = (now_ns() - t0) * 1000 / (c.n ? c.n : 1);
		sum += c.sum;
	}
	qsort(t_raw, ROUNDS, sizeof(uint64_t), cmp_u64);
	qsort(t_ring, ROUNDS, sizeof(uint64_t), cmp_u64);
	qsort(t_dec, ROUNDS, sizeof(uint64_t), cmp_u64);
	printf("records per pass: %lu (32 bytes each, %d-page ring), %d rounds, medians\n",
	       (unsigned long)recs, PAGES, ROUNDS);
	printf("%-34s %8.2f ns/record  %7.1f M records/s  ratio %.2f\n",
	       "raw consumer (walk headers only)", t_raw[ROUNDS / 2] / 1000.0,
	       1000.0 / (t_raw[ROUNDS / 2] / 1000.0), 1.0);
	printf("%-34s %8.2f ns/record  %7.1f M records/s  ratio %.2f\n",
	       "perfctr_ring__drain (count)", t_ring[ROUNDS / 2] / 1000.0,
	       1000.0 / (t_ring[ROUNDS / 2] / 1000.0),
	       (double)t_ring[ROUNDS / 2] / (double)t_raw[ROUNDS / 2]);
	printf("%-34s %8.2f ns/record  %7.1f M records/s  ratio %.2f\n",
	       "perfctr_ring__drain + decode", t_dec[ROUNDS / 2] / 1000.0,
	       1000.0 / (t_dec[ROUNDS / 2] / 1000.0),
	       (double)t_dec[ROUNDS / 2] / (double)t_raw[ROUNDS / 2]);
	if (!sum)
		printf("(no data)\n");
	perfctr_sampler__delete(s);
	perfctr_sampler__delete(raw);
	return 0;
}
