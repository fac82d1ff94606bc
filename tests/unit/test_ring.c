// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unit tests of the ring consumer against synthetic buffers: the test
 * plays the kernel (writes records, moves data_head / aux_head) and
 * checks what the consumer hands out, including records that wrap the
 * end of the data area, backward (overwrite) rings, lost records and the
 * AUX area.
 */
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "stream/stream.h"
#include "test.h"

#define PAGE 4096

struct fake {
	unsigned char *mem;
	struct perf_event_mmap_page *page;
	unsigned char *data;
	size_t size;
	unsigned char *aux;
	size_t aux_size;
	struct perfctr_ring *ring;
};

static void fake_init(struct fake *f, size_t data_size, bool overwrite,
		      size_t aux_size, bool aux_overwrite)
{
	memset(f, 0, sizeof(*f));
	f->mem = aligned_alloc(PAGE, PAGE + (data_size + PAGE - 1) / PAGE * PAGE);
	REQUIRE(f->mem);
	memset(f->mem, 0, PAGE + data_size);
	f->page = (void *)f->mem;
	f->data = f->mem + PAGE;
	f->size = data_size;
	if (aux_size) {
		f->aux = calloc(1, aux_size);
		f->aux_size = aux_size;
	}
	f->ring = ring_new_synthetic(f->mem, PAGE, data_size, overwrite,
				     f->aux, aux_size, aux_overwrite);
	REQUIRE(f->ring);
}

static void fake_fini(struct fake *f)
{
	perfctr_ring__delete(f->ring);
	free(f->mem);
	free(f->aux);
}

static void put_bytes(struct fake *f, uint64_t pos, const void *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		f->data[(pos + i) & (f->size - 1)] = ((const unsigned char *)src)[i];
}

/* A record of @size bytes (multiple of 8) whose body words are seq, seq+1.. */
static void make_record(uint64_t *buf, uint32_t type, uint16_t size, uint64_t seq)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };

	memcpy(buf, &h, sizeof(h));
	for (size_t i = 1; i < size / 8u; i++)
		buf[i] = seq + i - 1;
}

/* The kernel's side, forward: write at head, then publish head. */
static bool kernel_write(struct fake *f, uint32_t type, uint16_t size, uint64_t seq)
{
	uint64_t buf[8192];
	uint64_t head = f->page->data_head, tail = f->page->data_tail;

	if (head + size - tail > f->size)
		return false;
	make_record(buf, type, size, seq);
	put_bytes(f, head, buf, size);
	__atomic_store_n(&f->page->data_head, head + size, __ATOMIC_RELEASE);
	return true;
}

/* The kernel's side, backward: head moves down, record below the last. */
static void kernel_write_backward(struct fake *f, uint32_t type, uint16_t size,
				  uint64_t seq)
{
	uint64_t buf[8192];
	uint64_t head = f->page->data_head - size;

	make_record(buf, type, size, seq);
	put_bytes(f, head, buf, size);
	__atomic_store_n(&f->page->data_head, head, __ATOMIC_RELEASE);
}

static uint64_t body_word(const struct perf_event_header *h, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)(h + 1) + 8 * i, 8);
	return v;
}

TEST(empty_ring)
{
	struct fake f;

	fake_init(&f, 4096, false, 0, false);
	CHECK_EQ_INT(perfctr_ring__read_begin(f.ring), 0);
	CHECK(perfctr_ring__read_next(f.ring) == NULL);
	CHECK_EQ_INT(perfctr_ring__read_end(f.ring), 0);
	fake_fini(&f);
}

/*
 * Records of varying sizes pushed through a small ring many times over,
 * so that every wrap offset occurs: each comes out whole, in order, with
 * its body intact, and data_tail follows.
 */
TEST(forward_wraparound)
{
	static const uint16_t sizes[] = { 8, 16, 24, 40, 56, 104, 200, 1000, 2048 };
	uint64_t written = 0, read = 0, seq_w = 0, seq_r = 0, wraps = 0;
	struct fake f;

	fake_init(&f, 4096, false, 0, false);
	for (int round = 0; round < 2000; round++) {
		const struct perf_event_header *h;
		int burst = 1 + round % 7;

		for (int i = 0; i < burst; i++) {
			uint16_t sz = sizes[(round + i) % ARRAY_SIZE(sizes)];

			if (!kernel_write(&f, PERF_RECORD_SAMPLE, sz, seq_w))
				break;
			seq_w += 1000;
			written++;
		}
		REQUIRE(perfctr_ring__read_begin(&*f.ring) >= 0);
		while ((h = perfctr_ring__read_next(f.ring))) {
			uint64_t pos = f.page->data_tail;

			CHECK_EQ_INT(h->type, PERF_RECORD_SAMPLE);
			CHECK(((uintptr_t)h & 7) == 0);
			if ((pos & 4095) + h->size > 4096)
				wraps++;
			for (size_t i = 0; i + 1 < h->size / 8u; i++)
				if (body_word(h, i) != seq_r + i) {
					CHECK_EQ_U64(body_word(h, i), seq_r + i);
					break;
				}
			seq_r += 1000;
			read++;
			perfctr_ring__consume(f.ring);
			CHECK_EQ_U64(f.page->data_tail, pos + h->size);
		}
		perfctr_ring__read_end(f.ring);
	}
	CHECK_EQ_U64(read, written);
	CHECK(wraps > 10);
	CHECK_EQ_U64(f.page->data_tail, f.page->data_head);
	{
		PERFCTR_OPTS(perfctr_ring_stats, st);

		CHECK_EQ_INT(perfctr_ring__stats(f.ring, &st), 0);
		CHECK_EQ_U64(st.records, written);
		CHECK_EQ_U64(st.samples, written);
		CHECK_EQ_U64(st.corrupt, 0);
	}
	fake_fini(&f);
}

/* Records not consumed come back in the next pass, counted once. */
TEST(unconsumed_are_seen_again)
{
	const struct perf_event_header *h;
	struct fake f;
	PERFCTR_OPTS(perfctr_ring_stats, st);

	fake_init(&f, 4096, false, 0, false);
	kernel_write(&f, PERF_RECORD_SAMPLE, 16, 1);
	kernel_write(&f, PERF_RECORD_SAMPLE, 16, 2);
	CHECK_EQ_INT(perfctr_ring__read_begin(f.ring), 32);
	h = perfctr_ring__read_next(f.ring);
	REQUIRE(h);
	CHECK_EQ_U64(body_word(h, 0), 1);
	perfctr_ring__consume(f.ring);
	h = perfctr_ring__read_next(f.ring);
	REQUIRE(h);
	CHECK_EQ_U64(body_word(h, 0), 2);
	perfctr_ring__read_end(f.ring);		/* second not consumed */
	CHECK_EQ_U64(f.page->data_tail, 16);

	CHECK_EQ_INT(perfctr_ring__read_begin(f.ring), 16);
	h = perfctr_ring__read_next(f.ring);
	REQUIRE(h);
	CHECK_EQ_U64(body_word(h, 0), 2);
	perfctr_ring__consume(f.ring);
	CHECK(perfctr_ring__read_next(f.ring) == NULL);
	perfctr_ring__read_end(f.ring);
	perfctr_ring__stats(f.ring, &st);
	CHECK_EQ_U64(st.records, 2);
	fake_fini(&f);
}

/* Headers that cannot be right stop the pass and are counted. */
TEST(corrupt_header)
{
	struct fake f;
	PERFCTR_OPTS(perfctr_ring_stats, st);

	fake_init(&f, 4096, false, 0, false);
	kernel_write(&f, PERF_RECORD_SAMPLE, 16, 1);
	/* A record claiming more bytes than were published. */
	{
		struct perf_event_header h = { .type = 9, .size = 64 };

		put_bytes(&f, 16, &h, sizeof(h));
		__atomic_store_n(&f.page->data_head, 32, __ATOMIC_RELEASE);
	}
	CHECK_EQ_INT(perfctr_ring__read_begin(f.ring), 32);
	CHECK(perfctr_ring__read_next(f.ring) != NULL);
	CHECK(perfctr_ring__read_next(f.ring) == NULL);
	perfctr_ring__read_end(f.ring);
	perfctr_ring__stats(f.ring, &st);
	CHECK_EQ_U64(st.corrupt, 1);
	/* A head beyond tail + size: refused, nothing read. */
	__atomic_store_n(&f.page->data_head, 100000, __ATOMIC_RELEASE);
	CHECK_EQ_INT(perfctr_ring__read_begin(f.ring), -EIO);
	fake_fini(&f);
}

/* PERF_RECORD_LOST and LOST_SAMPLES are summed in the statistics. */
TEST(lost_accounting)
{
	struct fake f;
	PERFCTR_OPTS(perfctr_ring_stats, st);
	uint64_t rec[4];

	fake_init(&f, 4096, false, 0, false);
	kernel_write(&f, PERF_RECORD_SAMPLE, 16, 0);
	/* LOST: id, lost */
	rec[0] = 0;
	{
		struct perf_event_header h = { .type = PERF_RECORD_LOST, .size = 24 };

		memcpy(rec, &h, 8);
		rec[1] = 77;	/* id */
		rec[2] = 1234;	/* lost */
		put_bytes(&f, 16, rec, 24);
	}
	{
		struct perf_event_header h = { .type = PERF_RECORD_LOST_SAMPLES, .size = 16 };

		memcpy(rec, &h, 8);
		rec[1] = 5;
		put_bytes(&f, 40, rec, 16);
	}
	__atomic_store_n(&f.page->data_head, 56, __ATOMIC_RELEASE);
	CHECK_EQ_INT(perfctr_ring__drain(f.ring, NULL, NULL), 3);
	perfctr_ring__stats(f.ring, &st);
	CHECK_EQ_U64(st.lost, 1234);
	CHECK_EQ_U64(st.lost_records, 1);
	CHECK_EQ_U64(st.lost_samples, 5);
	CHECK_EQ_U64(st.samples, 1);
	CHECK_EQ_U64(st.bytes, 56);
	fake_fini(&f);
}

struct collect {
	uint64_t seqs[4096];
	size_t n;
	int stop_after;
};

static int collect_cb(struct perfctr_ring *ring,
		      const struct perf_event_header *hdr, void *ctx)
{
	struct collect *c = ctx;

	(void)ring;
	if (c->stop_after && (int)c->n == c->stop_after)
		return -ECANCELED;
	if (c->n < ARRAY_SIZE(c->seqs))
		c->seqs[c->n++] = body_word(hdr, 0);
	return 0;
}

/* The callback can stop a drain; the stopping record is not consumed. */
TEST(drain_stops_on_callback)
{
	static struct collect c;
	struct fake f;

	fake_init(&f, 4096, false, 0, false);
	for (int i = 0; i < 5; i++)
		kernel_write(&f, PERF_RECORD_SAMPLE, 16, (uint64_t)i);
	memset(&c, 0, sizeof(c));
	c.stop_after = 2;
	CHECK_EQ_INT(perfctr_ring__drain(f.ring, collect_cb, &c), -ECANCELED);
	CHECK_EQ_U64(f.page->data_tail, 32);
	c.stop_after = 0;
	CHECK_EQ_INT(perfctr_ring__drain(f.ring, collect_cb, &c), 3);
	CHECK_EQ_U64(c.n, 5);
	for (size_t i = 0; i < c.n; i++)
		CHECK_EQ_U64(c.seqs[i], i);
	fake_fini(&f);
}

/*
 * Backward ring: the kernel writes 1000 records of 24 bytes into 1 KiB;
 * the reader gets the newest ones, newest first, only whole records, and
 * a second pass gets only what is new since.
 */
TEST(backward_newest_first)
{
	static struct collect c;
	struct fake f;
	uint64_t n = 1000;

	fake_init(&f, 1024, true, 0, false);
	for (uint64_t i = 0; i < n; i++)
		kernel_write_backward(&f, PERF_RECORD_SAMPLE, 24, i);
	memset(&c, 0, sizeof(c));
	CHECK_EQ_INT(perfctr_ring__drain(f.ring, collect_cb, &c), 1024 / 24);
	for (size_t i = 0; i < c.n; i++)
		CHECK_EQ_U64(c.seqs[i], n - 1 - i);
	/* The read-only mapping's tail is never written. */
	CHECK_EQ_U64(f.page->data_tail, 0);

	for (uint64_t i = n; i < n + 3; i++)
		kernel_write_backward(&f, PERF_RECORD_SAMPLE, 24, i);
	memset(&c, 0, sizeof(c));
	CHECK_EQ_INT(perfctr_ring__drain(f.ring, collect_cb, &c), 3);
	CHECK_EQ_U64(c.seqs[0], n + 2);
	CHECK_EQ_U64(c.seqs[2], n);

	/* 100 more (2400 bytes) into 1 KiB between passes: the reader gets
	 * the newest whole ones and counts the bytes it never saw. */
	for (uint64_t i = n + 3; i < n + 103; i++)
		kernel_write_backward(&f, PERF_RECORD_SAMPLE, 24, i);
	memset(&c, 0, sizeof(c));
	CHECK_EQ_INT(perfctr_ring__drain(f.ring, collect_cb, &c), 1024 / 24);
	CHECK_EQ_U64(c.seqs[0], n + 102);
	{
		PERFCTR_OPTS(perfctr_ring_stats, st);

		perfctr_ring__stats(f.ring, &st);
		CHECK_EQ_U64(st.overwritten, 100 * 24 - 1024);
	}
	fake_fini(&f);
}

/* A backward ring not yet full: the reader stops at the zero header. */
TEST(backward_partial)
{
	static struct collect c;
	struct fake f;

	fake_init(&f, 4096, true, 0, false);
	for (uint64_t i = 0; i < 10; i++)
		kernel_write_backward(&f, PERF_RECORD_SAMPLE, 32, i);
	memset(&c, 0, sizeof(c));
	CHECK_EQ_INT(perfctr_ring__drain(f.ring, collect_cb, &c), 10);
	CHECK_EQ_U64(c.seqs[0], 9);
	CHECK_EQ_U64(c.seqs[9], 0);
	fake_fini(&f);
}

/* AUX area: a window that wraps comes in two parts; aux_tail follows. */
TEST(aux_window)
{
	struct fake f;
	PERFCTR_OPTS(perfctr_aux_window, win);
	unsigned char got[4096];

	fake_init(&f, 4096, false, 1024, false);
	CHECK_EQ_U64(perfctr_ring__aux_size(f.ring), 1024);
	/* The PMU writes bytes 0..899 (value = position & 0xff). */
	for (int i = 0; i < 900; i++)
		f.aux[i % 1024] = (unsigned char)i;
	__atomic_store_n(&f.page->aux_head, 900, __ATOMIC_RELEASE);
	CHECK_EQ_INT(perfctr_ring__aux_begin(f.ring, &win), 900);
	CHECK_EQ_U64(win.len[0], 900);
	CHECK_EQ_U64(win.len[1], 0);
	CHECK_EQ_INT(perfctr_ring__aux_end(f.ring, 800), 0);
	CHECK_EQ_U64(f.page->aux_tail, 800);

	/* 500 more: positions 900..1399 wrap at 1024. */
	for (int i = 900; i < 1400; i++)
		f.aux[i % 1024] = (unsigned char)i;
	__atomic_store_n(&f.page->aux_head, 1400, __ATOMIC_RELEASE);
	CHECK_EQ_INT(perfctr_ring__aux_begin(f.ring, &win), 600);
	CHECK_EQ_U64(win.offset, 800);
	CHECK_EQ_U64(win.len[0], 224);
	CHECK_EQ_U64(win.len[1], 376);
	memcpy(got, win.data[0], win.len[0]);
	memcpy(got + win.len[0], win.data[1], win.len[1]);
	for (int i = 0; i < 600; i++)
		if (got[i] != (unsigned char)(800 + i)) {
			CHECK_EQ_INT(got[i], (unsigned char)(800 + i));
			break;
		}
	CHECK_EQ_INT(perfctr_ring__aux_end(f.ring, 601), -EINVAL);
	CHECK_EQ_INT(perfctr_ring__aux_end(f.ring, 600), 0);
	CHECK_EQ_U64(f.page->aux_tail, 1400);
	fake_fini(&f);
}

/* Snapshot of an overwriting AUX area: the newest bytes, oldest first. */
TEST(aux_snapshot)
{
	struct fake f;
	unsigned char got[2048];

	fake_init(&f, 4096, false, 1024, true);
	for (int i = 0; i < 5000; i++)
		f.aux[i % 1024] = (unsigned char)(i * 7);
	__atomic_store_n(&f.page->aux_head, 5000, __ATOMIC_RELEASE);
	CHECK_EQ_INT(perfctr_ring__aux_snapshot(f.ring, got, sizeof(got)), 1024);
	for (int i = 0; i < 1024; i++)
		if (got[i] != (unsigned char)((5000 - 1024 + i) * 7)) {
			CHECK_EQ_INT(got[i], (unsigned char)((5000 - 1024 + i) * 7));
			break;
		}
	/* A smaller buffer gets the newest bytes only. */
	CHECK_EQ_INT(perfctr_ring__aux_snapshot(f.ring, got, 100), 100);
	CHECK_EQ_INT(got[99], (unsigned char)(4999 * 7));
	/* A snapshot reader never moves aux_tail. */
	CHECK_EQ_U64(f.page->aux_tail, 0);
	fake_fini(&f);
}

TEST(no_aux_area)
{
	struct fake f;
	PERFCTR_OPTS(perfctr_aux_window, win);
	char b[8];

	fake_init(&f, 4096, false, 0, false);
	CHECK_EQ_INT(perfctr_ring__aux_begin(f.ring, &win), -ENODATA);
	CHECK_EQ_INT(perfctr_ring__aux_snapshot(f.ring, b, sizeof(b)), -ENODATA);
	fake_fini(&f);
}

TEST_MAIN(
	TEST_CASE(empty_ring),
	TEST_CASE(forward_wraparound),
	TEST_CASE(unconsumed_are_seen_again),
	TEST_CASE(corrupt_header),
	TEST_CASE(lost_accounting),
	TEST_CASE(drain_stops_on_callback),
	TEST_CASE(backward_newest_first),
	TEST_CASE(backward_partial),
	TEST_CASE(aux_window),
	TEST_CASE(aux_snapshot),
	TEST_CASE(no_aux_area),
)
