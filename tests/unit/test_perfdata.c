// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unit tests of the perf.data writer and reader: a file written with
 * fixed feature strings is checked byte by byte in its header, read back
 * field by field, and damaged in ways the reader must refuse.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/internal.h"
#include "perfctr/perfdata.h"
#include "test.h"

static char path[64];

static void tmp_path(void)
{
	snprintf(path, sizeof(path), "/tmp/pctest-perfdata-%d", (int)getpid());
}

static unsigned char *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	unsigned char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static uint64_t u64_at(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* Two attrs, a COMM and three samples, every feature we write. */
static size_t write_sample_file(uint64_t *records_out, size_t *nr_records)
{
	static char *argv[] = { "perfex", "record", "--", "pcwork", NULL };
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, o,
		     .hostname = "testhost", .osrelease = "6.1.0-test",
		     .arch = "x86_64", .cpudesc = "Test CPU @ 1GHz",
		     .version = "perfctr-test", .argc = 4, .argv = argv,
		     .nr_cpus_avail = 8, .nr_cpus_online = 4);
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID,
		.sample_id_all = 1 };
	struct perf_event_attr b = a;
	static const uint64_t ids_a[] = { 11, 12 }, ids_b[] = { 21 };
	static const uint8_t bid[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct perfctr_perfdata_writer *w;
	uint64_t *r = records_out;
	size_t n = 0;

	b.config = PERF_COUNT_SW_TASK_CLOCK;
	w = perfctr_perfdata_writer__open(path, &o);
	REQUIRE(w);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &a, "cpu-clock", ids_a, 2), 0);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &b, "task-clock", ids_b, 1), 1);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_ids(w, 1, ids_a, 0), 0);

	/* COMM: pid, tid, "pcwork\0\0", trailer: identifier 11. */
	{
		struct perf_event_header h = { PERF_RECORD_COMM, 0, 40 };

		memcpy(&r[n], &h, 8);
		r[n + 1] = 7 | (uint64_t)7 << 32;
		memcpy(&r[n + 2], "pcwork\0\0", 8);
		r[n + 3] = 0;
		r[n + 4] = 11;
		n += 5;
	}
	for (int i = 0; i < 3; i++) {
		struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 32 };

		memcpy(&r[n], &h, 8);
		r[n + 1] = i == 2 ? 21 : 12;		/* identifier */
		r[n + 2] = 0x400000 + (uint64_t)i;	/* ip */
		r[n + 3] = 7 | (uint64_t)7 << 32;	/* pid, tid */
		n += 4;
	}
	CHECK_EQ_INT(perfctr_perfdata_writer__write(w, r, n * 8), 0);
	/* A torn record is refused and not written. */
	CHECK_EQ_INT(perfctr_perfdata_writer__write(w, r, 12), -EINVAL);
	CHECK_EQ_U64(perfctr_perfdata_writer__data_size(w), n * 8);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_build_id(w, -1, PERF_RECORD_MISC_USER,
							   bid, 20, "/usr/bin/pcwork"), 0);
	perfctr_perfdata_writer__set_sample_time(w, 1000, 2000);
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
	*nr_records = 4;
	return n * 8;
}

TEST(header_bytes)
{
	uint64_t recs[64];
	size_t nr, data_size, len;
	unsigned char *f;
	uint64_t feats;

	tmp_path();
	data_size = write_sample_file(recs, &nr);
	f = slurp(path, &len);
	REQUIRE(f);
	REQUIRE(len > 104);
	CHECK(!memcmp(f, "PERFILE2", 8));
	CHECK_EQ_U64(u64_at(f, 8), 104);			/* header size */
	CHECK_EQ_U64(u64_at(f, 16), sizeof(struct perf_event_attr) + 16);
	CHECK_EQ_U64(u64_at(f, 40), 104);			/* data offset */
	CHECK_EQ_U64(u64_at(f, 48), data_size);		/* data size */
	CHECK_EQ_U64(u64_at(f, 32), 2 * (sizeof(struct perf_event_attr) + 16));
	CHECK(u64_at(f, 24) + u64_at(f, 32) <= len);		/* attrs inside */
	CHECK_EQ_U64(u64_at(f, 56), 0);			/* event_types */
	CHECK_EQ_U64(u64_at(f, 64), 0);
	/* build-id, hostname .. event_desc (2..12) minus cpuid when the
	 * host has none, and sample_time (21). */
	feats = u64_at(f, 72);
	CHECK_EQ_U64(feats & ~(1ULL << PERFCTR_FEAT_CPUID),
		     (0x1ffcULL & ~(1ULL << PERFCTR_FEAT_CPUID)) |
		     1ULL << PERFCTR_FEAT_SAMPLE_TIME);
	CHECK_EQ_U64(u64_at(f, 80), 0);
	CHECK_EQ_U64(u64_at(f, 88), 0);
	CHECK_EQ_U64(u64_at(f, 96), 0);
	/* The data section holds exactly what was written. */
	CHECK(!memcmp(f + 104, recs, data_size));
	/* The first feature section (build-id) begins right after the index. */
	{
		size_t nfeat = (size_t)__builtin_popcountll(feats);
		uint64_t off = 104 + data_size;

		CHECK_EQ_U64(u64_at(f, off), off + 16 * nfeat);
	}
	free(f);
	unlink(path);
}

TEST(read_back)
{
	uint64_t recs[64], cursor = 0;
	size_t nr, data_size, n = 0;
	struct perfctr_perfdata *pd;
	const struct perf_event_header *h;
	const uint64_t *ids;
	const char *const *argv;
	uint32_t avail, online;
	uint64_t first, last;
	struct perfctr_build_id bid;
	int ret;

	tmp_path();
	data_size = write_sample_file(recs, &nr);
	pd = perfctr_perfdata__open(path, NULL);
	REQUIRE(pd);
	CHECK_EQ_U64(perfctr_perfdata__nr_attrs(pd), 2);
	CHECK_EQ_U64(perfctr_perfdata__attr(pd, 0)->config, PERF_COUNT_SW_CPU_CLOCK);
	CHECK_EQ_U64(perfctr_perfdata__attr(pd, 1)->config, PERF_COUNT_SW_TASK_CLOCK);
	CHECK_EQ_U64(perfctr_perfdata__attr(pd, 1)->sample_period, 1000);
	CHECK(perfctr_perfdata__attr(pd, 2) == NULL);
	CHECK_STR(perfctr_perfdata__attr_name(pd, 0), "cpu-clock");
	CHECK_STR(perfctr_perfdata__attr_name(pd, 1), "task-clock");
	CHECK_EQ_U64(perfctr_perfdata__attr_ids(pd, 0, &ids), 2);
	CHECK_EQ_U64(ids[1], 12);
	CHECK_EQ_U64(perfctr_perfdata__attr_ids(pd, 1, &ids), 1);
	CHECK_EQ_U64(ids[0], 21);
	CHECK_STR(perfctr_perfdata__string(pd, PERFCTR_FEAT_HOSTNAME), "testhost");
	CHECK_STR(perfctr_perfdata__string(pd, PERFCTR_FEAT_OSRELEASE), "6.1.0-test");
	CHECK_STR(perfctr_perfdata__string(pd, PERFCTR_FEAT_ARCH), "x86_64");
	CHECK_STR(perfctr_perfdata__string(pd, PERFCTR_FEAT_VERSION), "perfctr-test");
	CHECK_STR(perfctr_perfdata__string(pd, PERFCTR_FEAT_CPUDESC), "Test CPU @ 1GHz");
	CHECK(perfctr_perfdata__string(pd, PERFCTR_FEAT_NRCPUS) == NULL);
	CHECK_EQ_INT(perfctr_perfdata__nr_cpus(pd, &avail, &online), 0);
	CHECK_EQ_U64(avail, 8);
	CHECK_EQ_U64(online, 4);
	CHECK_EQ_INT(perfctr_perfdata__cmdline(pd, &argv), 4);
	CHECK_STR(argv[0], "perfex");
	CHECK_STR(argv[3], "pcwork");
	CHECK(argv[4] == NULL);
	CHECK_EQ_INT(perfctr_perfdata__sample_time(pd, &first, &last), 0);
	CHECK_EQ_U64(first, 1000);
	CHECK_EQ_U64(last, 2000);
	CHECK_EQ_U64(perfctr_perfdata__nr_build_ids(pd), 1);
	CHECK_EQ_INT(perfctr_perfdata__build_id(pd, 0, &bid), 0);
	CHECK_EQ_INT(bid.pid, -1);
	CHECK_EQ_INT(bid.size, 20);
	CHECK_EQ_INT(bid.id[9], 10);
	CHECK_EQ_INT(bid.misc, PERF_RECORD_MISC_USER);
	CHECK_STR(bid.filename, "/usr/bin/pcwork");
	CHECK_EQ_INT(perfctr_perfdata__build_id(pd, 1, &bid), -EINVAL);
	CHECK(!perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_TRACING_DATA));
	CHECK_EQ_INT(perfctr_perfdata__feature(pd, PERFCTR_FEAT_TRACING_DATA, NULL, NULL),
		     -ENOENT);
	CHECK_EQ_U64(perfctr_perfdata__data_size(pd), data_size);

	/* Records come back identical, and the decoder tells the attrs. */
	while ((ret = perfctr_perfdata__next(pd, &cursor, &h)) == 1) {
		CHECK(!memcmp(h, (const char *)recs + (cursor - h->size), h->size));
		if (h->type == PERF_RECORD_SAMPLE) {
			PERFCTR_OPTS(perfctr_sample, s);

			CHECK_EQ_INT(perfctr_decoder__sample(perfctr_perfdata__decoder(pd),
							     h, &s), 0);
			CHECK_EQ_U64(s.attr_idx, s.id == 21 ? 1 : 0);
			CHECK_EQ_U64(s.period, 1000);
		} else {
			PERFCTR_OPTS(perfctr_record, r);

			CHECK_EQ_INT(perfctr_decoder__record(perfctr_perfdata__decoder(pd),
							     h, &r), 0);
			CHECK_STR(r.comm.comm, "pcwork");
			CHECK_EQ_U64(r.sample_id.id, 11);
		}
		n++;
	}
	CHECK_EQ_INT(ret, 0);
	CHECK_EQ_U64(n, nr);
	perfctr_perfdata__close(pd);
	unlink(path);
}

/* A file whose writer never reached close has a zero header: refused. */
TEST(unfinished_file_is_refused)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, o, .no_features = true);
	struct perfctr_perfdata_writer *w;
	int fd;

	tmp_path();
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	w = perfctr_perfdata_writer__open_fd(fd, &o);
	REQUIRE(w);
	{
		uint64_t rec[2] = { 0, 0 };
		struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 16 };

		memcpy(rec, &h, 8);
		for (int i = 0; i < 20000; i++)	/* past the write buffer */
			CHECK_EQ_INT(perfctr_perfdata_writer__write(w, rec, 16), 0);
	}
	errno = 0;
	CHECK(perfctr_perfdata__open(path, NULL) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	/* Finalised now: valid, and the caller's fd stays open. */
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
	CHECK(fcntl(fd, F_GETFD) >= 0);
	close(fd);
	{
		struct perfctr_perfdata *pd = perfctr_perfdata__open(path, NULL);

		REQUIRE(pd);
		CHECK_EQ_U64(perfctr_perfdata__data_size(pd), 20000 * 16);
		CHECK(!perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_HOSTNAME));
		perfctr_perfdata__close(pd);
	}
	unlink(path);
}

/* Damaged headers: each one refused with EINVAL (or EOPNOTSUPP). */
TEST(damaged_headers)
{
	static const struct {
		size_t off;
		uint64_t value;
		int err;
	} rows[] = {
		{ 0, 0x4c494646524550ULL, EINVAL },		/* magic */
		{ 0, 0x50455246494c4532ULL, EOPNOTSUPP },	/* other endian */
		{ 8, 16, EOPNOTSUPP },				/* pipe header */
		{ 8, 50, EINVAL },				/* header size */
		{ 16, 0, EINVAL },				/* attr_size */
		{ 16, 100000, EINVAL },
		{ 24, 1ULL << 40, EINVAL },			/* attrs offset */
		{ 32, 7, EINVAL },				/* attrs size */
		{ 40, 1ULL << 40, EINVAL },			/* data offset */
		{ 48, ~0ULL, EINVAL },				/* data size */
	};
	uint64_t recs[64];
	size_t nr, len;
	unsigned char *f;

	tmp_path();
	write_sample_file(recs, &nr);
	f = slurp(path, &len);
	REQUIRE(f);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		unsigned char *copy = malloc(len);
		struct perfctr_perfdata *pd;

		memcpy(copy, f, len);
		memcpy(copy + rows[i].off, &rows[i].value, 8);
		errno = 0;
		pd = perfctr_perfdata__open_mem(copy, len, NULL);
		if (pd) {
			test_fail(__FILE__, __LINE__, "row %zu accepted", i);
			perfctr_perfdata__close(pd);
		} else {
			CHECK_EQ_INT(errno, rows[i].err);
		}
		free(copy);
	}
	/* Every truncation of the file either opens or fails cleanly. */
	for (size_t cut = 0; cut < len; cut += 7) {
		struct perfctr_perfdata *pd = perfctr_perfdata__open_mem(f, cut, NULL);

		if (pd) {
			uint64_t cursor = 0;
			const struct perf_event_header *h;

			while (perfctr_perfdata__next(pd, &cursor, &h) == 1)
				;
			perfctr_perfdata__close(pd);
		}
	}
	free(f);
	unlink(path);
}

/* Record @i of the windows test: its size and a byte pattern that tells
 * every record and offset apart. */
static uint16_t window_rec_size(size_t i)
{
	if (i % 97 == 50)
		return 65528;		/* near the largest a header can say */
	if (i % 31 == 7)
		return 12;		/* misaligns the records after it */
	return (uint16_t)(8 + (i * 40) % 2048);
}

static void window_rec(size_t i, unsigned char *buf)
{
	struct perf_event_header h = { (uint32_t)(1 + i % 20), 0,
				       window_rec_size(i) };

	memcpy(buf, &h, sizeof(h));
	for (size_t k = sizeof(h); k < h.size; k++)
		buf[k] = (unsigned char)(i * 7 + k);
}

static bool window_rec_ok(size_t i, const struct perf_event_header *h)
{
	static unsigned char want[65536];

	window_rec(i, want);
	return h->size == window_rec_size(i) && !memcmp(h, want, h->size) &&
	       (uintptr_t)h % 8 == 0;
}

/*
 * A data section much larger than the reader's window, records of every
 * size (some misaligned, some nearly 64 KiB) straddling window ends: each
 * comes back whole and aligned, read in order or again at a saved cursor;
 * a file that shrinks while open gives an error, not a crash.
 */
TEST(windows_read_every_record)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, o, .no_features = true);
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
		.sample_type = PERF_SAMPLE_IP };
	static const size_t windows[] = { 0, 1, 64 * 1024, 100000 };
	enum { NR = 3000 };
	static unsigned char buf[65536];
	static uint64_t cursors[NR + 1];
	struct perfctr_perfdata_writer *w;
	uint64_t total = 0;

	tmp_path();
	w = perfctr_perfdata_writer__open(path, &o);
	REQUIRE(w);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &a, NULL, NULL, 0), 0);
	for (size_t i = 0; i < NR; i++) {
		window_rec(i, buf);
		CHECK_EQ_INT(perfctr_perfdata_writer__write(w, buf, window_rec_size(i)), 0);
		total += window_rec_size(i);
	}
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
	CHECK(total > 20 * 64 * 1024);

	for (size_t k = 0; k < ARRAY_SIZE(windows); k++) {
		PERFCTR_OPTS(perfctr_perfdata_opts, ro, .window_size = windows[k]);
		struct perfctr_perfdata *pd = perfctr_perfdata__open(path, &ro);
		const struct perf_event_header *h;
		uint64_t cursor = 0;
		size_t n = 0, bad = 0;
		int ret;

		REQUIRE(pd);
		CHECK_EQ_U64(perfctr_perfdata__data_size(pd), total);
		while (cursors[n] = cursor,
		       (ret = perfctr_perfdata__next(pd, &cursor, &h)) == 1) {
			if (n >= NR || !window_rec_ok(n, h))
				bad++;
			n++;
		}
		CHECK_EQ_INT(ret, 0);
		CHECK_EQ_U64(n, NR);
		CHECK_EQ_U64(bad, 0);
		/* Back to front: every read is out of the current window. */
		for (size_t i = NR; i-- > 0;) {
			cursor = cursors[i];
			if (perfctr_perfdata__next(pd, &cursor, &h) != 1 ||
			    !window_rec_ok(i, h) || cursor != cursors[i + 1])
				bad++;
		}
		CHECK_EQ_U64(bad, 0);
		perfctr_perfdata__close(pd);
	}

	/* The file loses its second half while a reader has it open. */
	{
		struct perfctr_perfdata *pd = perfctr_perfdata__open(path, NULL);
		const struct perf_event_header *h;
		uint64_t cursor = 0;
		int ret;

		REQUIRE(pd);
		CHECK_EQ_INT(truncate(path, (off_t)(total / 2)), 0);
		while ((ret = perfctr_perfdata__next(pd, &cursor, &h)) == 1)
			;
		CHECK_EQ_INT(ret, -EIO);
		CHECK(cursor < total / 2);
		perfctr_perfdata__close(pd);
	}
	unlink(path);
}

TEST_MAIN(
	TEST_CASE(header_bytes),
	TEST_CASE(read_back),
	TEST_CASE(unfinished_file_is_refused),
	TEST_CASE(damaged_headers),
	TEST_CASE(windows_read_every_record),
)
