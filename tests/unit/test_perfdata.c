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
#include <signal.h>
#include <sys/resource.h>
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
	uint64_t feats, data_off;

	tmp_path();
	data_size = write_sample_file(recs, &nr);
	f = slurp(path, &len);
	REQUIRE(f);
	REQUIRE(len > 104);
	CHECK(!memcmp(f, "PERFILE2", 8));
	CHECK_EQ_U64(u64_at(f, 8), 104);			/* header size */
	CHECK_EQ_U64(u64_at(f, 16), sizeof(struct perf_event_attr) + 16);
	/* The ids (3), the attrs, the writer's EVENT_UPDATE records naming
	 * the events (24 bytes and the name padded to 16, each), then the
	 * data: a finished file's data section starts after them. */
	data_off = 104 + 3 * 8 + 2 * (sizeof(struct perf_event_attr) + 16);
	CHECK_EQ_U64(u64_at(f, data_off), PERFCTR_RECORD_EVENT_UPDATE |
		     (uint64_t)40 << 48);
	CHECK_EQ_U64(u64_at(f, data_off + 8), 2);		/* NAME */
	CHECK_EQ_U64(u64_at(f, data_off + 16), 11);		/* first id */
	CHECK(!memcmp(f + data_off + 24, "cpu-clock\0\0\0\0\0\0\0", 16));
	CHECK_EQ_U64(u64_at(f, data_off + 40 + 16), 21);
	CHECK(!memcmp(f + data_off + 40 + 24, "task-clock\0", 11));
	data_off += 2 * 40;
	CHECK_EQ_U64(u64_at(f, 40), data_off);			/* data offset */
	CHECK_EQ_U64(u64_at(f, 48), data_size);		/* data size */
	CHECK_EQ_U64(u64_at(f, 24), 104 + 3 * 8);		/* attrs offset */
	CHECK_EQ_U64(u64_at(f, 32), 2 * (sizeof(struct perf_event_attr) + 16));
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
	CHECK(!memcmp(f + data_off, recs, data_size));
	/* The first feature section (build-id) begins right after the index. */
	{
		size_t nfeat = (size_t)__builtin_popcountll(feats);
		uint64_t off = data_off + data_size;

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

/*
 * A file whose writer never reached close (killed) is unfinished: the
 * reader recovers its records up to the first torn one, and says so.
 */
static struct perfctr_perfdata *open_copy(const char *src, size_t cut,
					  unsigned char **copy)
{
	size_t len;
	unsigned char *f = slurp(src, &len);

	if (!f || cut > len) {
		free(f);
		return NULL;
	}
	*copy = f;
	return perfctr_perfdata__open_mem(f, cut, NULL);
}

TEST(unfinished_file_is_recovered)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, o);
	struct perfctr_perfdata_recovery rec = { .sz = sizeof(rec) };
	struct perfctr_perfdata_writer *w;
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a), .sample_type = PERF_SAMPLE_IP };
	struct perfctr_perfdata *pd;
	unsigned char *copy = NULL;
	uint64_t rec16[2] = { 0, 0 }, cursor = 0, data_off;
	const struct perf_event_header *h;
	struct perf_event_header sh = { PERF_RECORD_SAMPLE, 0, 16 };
	size_t n = 0;
	int fd;

	tmp_path();
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	w = perfctr_perfdata_writer__open_fd(fd, &o);
	REQUIRE(w);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &a, "cpu-clock", NULL, 0), 0);
	memcpy(rec16, &sh, 8);
	for (int i = 0; i < 20000; i++) {	/* past the write buffer */
		rec16[1] = (uint64_t)i;
		CHECK_EQ_INT(perfctr_perfdata_writer__write(w, rec16, 16), 0);
	}
	/* Killed now: what was flushed (the full buffers) reads back. */
	pd = perfctr_perfdata__open(path, NULL);
	REQUIRE(pd);
	CHECK_EQ_INT(perfctr_perfdata__recovered(pd, &rec), 1);
	CHECK_EQ_U64(rec.bytes, 256 * 1024);
	CHECK_EQ_U64(rec.records, 256 * 1024 / 16);
	CHECK_EQ_U64(rec.flushed_bytes, 256 * 1024);
	CHECK_EQ_U64(rec.torn_bytes, 0);
	CHECK_EQ_U64(perfctr_perfdata__nr_attrs(pd), 1);
	CHECK_EQ_U64(perfctr_perfdata__data_size(pd), 256 * 1024);
	perfctr_perfdata__close(pd);
	/* After a flush, all of them. */
	CHECK_EQ_INT(perfctr_perfdata_writer__flush(w), 0);
	pd = perfctr_perfdata__open(path, NULL);
	REQUIRE(pd);
	CHECK_EQ_INT(perfctr_perfdata__recovered(pd, &rec), 1);
	CHECK_EQ_U64(rec.records, 20000);
	while (perfctr_perfdata__next(pd, &cursor, &h) == 1) {
		CHECK_EQ_U64(((const uint64_t *)h)[1], n);
		n++;
	}
	CHECK_EQ_U64(n, 20000);
	data_off = 104 + sizeof(a) + 16;
	perfctr_perfdata__close(pd);

	/* A torn last record, and a header that says 0 bytes (killed
	 * before the first flush): the walk finds the whole ones. */
	pd = open_copy(path, (size_t)(data_off + 20000 * 16 - 5), &copy);
	REQUIRE(pd);
	memset(copy + 48, 0, 8);
	perfctr_perfdata__close(pd);
	pd = perfctr_perfdata__open_mem(copy, (size_t)(data_off + 20000 * 16 - 5), NULL);
	REQUIRE(pd);
	CHECK_EQ_INT(perfctr_perfdata__recovered(pd, &rec), 1);
	CHECK_EQ_U64(rec.records, 19999);
	CHECK_EQ_U64(rec.flushed_bytes, 0);
	CHECK_EQ_U64(rec.torn_bytes, 11);
	perfctr_perfdata__close(pd);
	/* Zeros after the records (blocks allocated, never written). */
	memset(copy + data_off + 100 * 16, 0, 64);
	pd = perfctr_perfdata__open_mem(copy, (size_t)(data_off + 20000 * 16 - 5), NULL);
	REQUIRE(pd);
	CHECK_EQ_INT(perfctr_perfdata__recovered(pd, NULL), 1);
	CHECK_EQ_U64(perfctr_perfdata__data_size(pd), 100 * 16);
	perfctr_perfdata__close(pd);
	free(copy);

	/* Finalised now: finished, and the caller's fd stays open. */
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
	CHECK(fcntl(fd, F_GETFD) >= 0);
	close(fd);
	pd = perfctr_perfdata__open(path, NULL);
	REQUIRE(pd);
	CHECK_EQ_INT(perfctr_perfdata__recovered(pd, &rec), 0);
	CHECK_EQ_U64(rec.records, 0);
	CHECK_EQ_U64(perfctr_perfdata__data_size(pd), 20000 * 16);
	CHECK(perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_HOSTNAME));
	CHECK_STR(perfctr_perfdata__attr_name(pd, 0), "cpu-clock");
	perfctr_perfdata__close(pd);

	/*
	 * The same records as perf record leaves them when killed: its
	 * header has the feature bits but a data size of 0, and the file
	 * ends with the records.
	 */
	{
		uint64_t hdr_data[2], size0 = 0, end;
		size_t len;

		copy = slurp(path, &len);
		REQUIRE(copy);
		memcpy(hdr_data, copy + 40, 16);
		end = hdr_data[0] + hdr_data[1];
		CHECK_EQ_U64(hdr_data[1], 20000 * 16);
		memcpy(copy + 48, &size0, 8);
		pd = perfctr_perfdata__open_mem(copy, (size_t)end, NULL);
		REQUIRE(pd);
		CHECK_EQ_INT(perfctr_perfdata__recovered(pd, &rec), 1);
		CHECK_EQ_INT(rec.kind, PERFCTR_RECOVERED_NO_SIZE);
		CHECK_EQ_U64(rec.records, 20000);
		CHECK_EQ_U64(rec.torn_bytes, 0);
		CHECK_EQ_U64(perfctr_perfdata__data_size(pd), 20000 * 16);
		perfctr_perfdata__close(pd);
		/* ... killed inside a record. */
		pd = perfctr_perfdata__open_mem(copy, (size_t)end - 9, NULL);
		REQUIRE(pd);
		CHECK_EQ_INT(perfctr_perfdata__recovered(pd, &rec), 1);
		CHECK_EQ_U64(rec.records, 19999);
		CHECK_EQ_U64(rec.torn_bytes, 7);
		perfctr_perfdata__close(pd);

		/* A finished file cut inside its data section: truncated,
		 * the whole records and the names read back. */
		memcpy(copy + 48, &hdr_data[1], 8);
		pd = perfctr_perfdata__open_mem(copy, (size_t)(hdr_data[0] +
						 5000 * 16 + 3), NULL);
		REQUIRE(pd);
		CHECK_EQ_INT(perfctr_perfdata__recovered(pd, &rec), 1);
		CHECK_EQ_INT(rec.kind, PERFCTR_RECOVERED_TRUNCATED);
		CHECK_EQ_U64(rec.records, 5000);
		CHECK_EQ_U64(rec.torn_bytes, 3);
		CHECK_EQ_U64(rec.local_names, 0);
		perfctr_perfdata__close(pd);
		free(copy);
	}
	unlink(path);

	/* A finished file with no records (data size 0, the feature index
	 * right after the attrs) stays finished. */
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	w = perfctr_perfdata_writer__open_fd(fd, &o);
	REQUIRE(w);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &a, "cpu-clock", NULL, 0), 0);
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
	close(fd);
	pd = perfctr_perfdata__open(path, NULL);
	REQUIRE(pd);
	CHECK_EQ_INT(perfctr_perfdata__recovered(pd, NULL), 0);
	CHECK(perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_HOSTNAME));
	perfctr_perfdata__close(pd);
	unlink(path);
}

/* A write error (a full disk) stops the writing; the file keeps the whole
 * records that reached it and is finished at close. */
TEST(write_error_keeps_a_readable_file)
{
	struct perfctr_perfdata_writer_stats st = { .sz = sizeof(st) };
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a), .sample_type = PERF_SAMPLE_IP };
	struct perfctr_perfdata_writer *w;
	struct perfctr_perfdata *pd;
	struct rlimit old, lim;
	uint64_t rec16[2] = { 0, 0 }, limit = 300 * 1024 + 3;
	struct perf_event_header sh = { PERF_RECORD_SAMPLE, 0, 16 };
	int i, ret = 0;

	/* RLIMIT_FSIZE: writes past it fail with EFBIG (SIGXFSZ ignored). */
	tmp_path();
	REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
	signal(SIGXFSZ, SIG_IGN);
	w = perfctr_perfdata_writer__open(path, NULL);
	REQUIRE(w);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &a, "cpu-clock", NULL, 0), 0);
	lim = old;
	lim.rlim_cur = limit;
	REQUIRE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	memcpy(rec16, &sh, 8);
	for (i = 0; i < 40000 && !ret; i++)
		ret = perfctr_perfdata_writer__write(w, rec16, 16);
	CHECK_EQ_INT(ret, -EFBIG);
	CHECK_EQ_INT(perfctr_perfdata_writer__write(w, rec16, 16), -EFBIG);
	CHECK_EQ_INT(perfctr_perfdata_writer__stats(w, &st), 0);
	CHECK_EQ_INT(st.error, -EFBIG);
	CHECK_EQ_U64(st.records_written + st.records_dropped, (uint64_t)i + 1);
	CHECK_EQ_U64(st.samples_written, st.records_written);
	CHECK_EQ_U64(st.bytes_written, st.records_written * 16);
	CHECK(104 + sizeof(a) + 16 + st.bytes_written <= limit);
	CHECK(104 + sizeof(a) + 16 + st.bytes_written + 16 > limit);
	/* Close: the features do not fit under the limit, the file is
	 * finished without them. */
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), -EFBIG);
	REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
	signal(SIGXFSZ, SIG_DFL);
	pd = perfctr_perfdata__open(path, NULL);
	REQUIRE(pd);
	CHECK_EQ_U64(perfctr_perfdata__data_size(pd), st.bytes_written);
	CHECK_EQ_U64(perfctr_perfdata__nr_attrs(pd), 1);
	perfctr_perfdata__close(pd);
	unlink(path);
}

/*
 * killed_file_names_its_events' file at PATH, opened: recovered unless
 * FINISHED, its three events named, the tracepoint formats a feature
 * when FINISHED (before, records of the data section).
 */
static struct perfctr_perfdata *open_named(bool finished)
{
	struct perfctr_perfdata *pd = perfctr_perfdata__open(path, NULL);

	REQUIRE(pd);
	CHECK_EQ_INT(perfctr_perfdata__recovered(pd, NULL), !finished);
	CHECK_STR(perfctr_perfdata__attr_name(pd, 0), "syscalls:sys_enter_getppid");
	CHECK_STR(perfctr_perfdata__attr_name(pd, 1), "syscalls:sys_exit_getppid");
	CHECK_STR(perfctr_perfdata__attr_name(pd, 2), "task-clock:u");
	CHECK_EQ_INT(perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_TRACING_DATA),
		     finished);
	return pd;
}

/*
 * A killed writer's file names its events: the data section opens with
 * HEADER_TRACING_DATA (the tracepoint formats) and an EVENT_UPDATE per
 * named event, written before the first record.  An unnamed tracepoint
 * is named from its format, as perf names it.  Once finished, the data
 * section starts after them: the features say the same.
 */
TEST(killed_file_names_its_events)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, o,
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));
	struct perf_event_attr tp = { .type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(tp), .config = 1001,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_RAW };
	struct perf_event_attr tp2 = tp, sw = tp;
	static const uint64_t id_a = 5, id_b = 6, id_c = 7;
	uint64_t rec[2] = { 0, 0 }, cursor = 0;
	struct perf_event_header sh = { PERF_RECORD_SAMPLE, 0, 16 };
	const struct perf_event_header *h;
	struct perfctr_perfdata_writer *w;
	struct perfctr_perfdata *pd;
	const void *td;
	size_t td_size, types[3] = { 0 }, samples = 0;

	tp2.config = 1002;
	sw.type = PERF_TYPE_SOFTWARE;
	sw.config = PERF_COUNT_SW_TASK_CLOCK;
	tmp_path();
	w = perfctr_perfdata_writer__open(path, &o);
	REQUIRE(w);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &tp,
		     "syscalls:sys_enter_getppid", &id_a, 1), 0);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &tp2, NULL, &id_b, 1), 1);
	CHECK_EQ_INT(perfctr_perfdata_writer__add_attr(w, &sw, "task-clock:u",
		     &id_c, 1), 2);
	memcpy(rec, &sh, 8);
	for (int i = 0; i < 3; i++) {
		rec[1] = i == 2 ? id_c : id_a;
		CHECK_EQ_INT(perfctr_perfdata_writer__write(w, rec, 16), 0);
	}
	CHECK_EQ_INT(perfctr_perfdata_writer__flush(w), 0);

	/* Killed here. */
	pd = open_named(false);
	CHECK_EQ_INT(perfctr_perfdata__feature(pd, PERFCTR_FEAT_TRACING_DATA,
					       &td, &td_size), 0);
	CHECK(td_size > 10 && td_size % 8 == 0 &&
	      !memcmp(td, "\027\010Dtracing0.6", 14));
	/* The records: TRACING_DATA (its payload skipped), two names, then
	 * the samples. */
	while (perfctr_perfdata__next(pd, &cursor, &h) == 1) {
		if (h->type == PERFCTR_RECORD_HEADER_TRACING_DATA) {
			CHECK_EQ_INT(types[1] + samples, 0);
			types[0]++;
		} else if (h->type == PERFCTR_RECORD_EVENT_UPDATE) {
			CHECK_EQ_INT(samples, 0);
			types[1]++;
		} else if (h->type == PERF_RECORD_SAMPLE)
			samples++;
		else
			types[2]++;
	}
	CHECK_EQ_INT(types[0], 1);
	CHECK_EQ_INT(types[1], 2);
	CHECK_EQ_INT(types[2], 0);
	CHECK_EQ_INT(samples, 3);
	perfctr_perfdata__close(pd);

	/* Finished: the same names; the data section is the samples. */
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
	pd = open_named(true);
	CHECK_EQ_U64(perfctr_perfdata__data_size(pd), 3 * 16);
	cursor = 0;
	REQUIRE(perfctr_perfdata__next(pd, &cursor, &h) == 1);
	CHECK_EQ_INT(h->type, PERF_RECORD_SAMPLE);
	perfctr_perfdata__close(pd);
	unlink(path);
}

/* The writer follows no symbolic link and writes into no FIFO. */
TEST(writer_refuses_links_and_fifos)
{
	char link_path[sizeof(path) + 8], target[sizeof(path) + 8];
	struct stat st;

	tmp_path();
	snprintf(target, sizeof(target), "%s.tgt", path);
	snprintf(link_path, sizeof(link_path), "%s.lnk", path);
	REQUIRE(close(open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == 0);
	REQUIRE(symlink(target, link_path) == 0);
	errno = 0;
	CHECK(perfctr_perfdata_writer__open(link_path, NULL) == NULL);
	CHECK_EQ_INT(errno, ELOOP);
	REQUIRE(stat(target, &st) == 0);
	CHECK_EQ_U64(st.st_size, 0);
	unlink(link_path);
	REQUIRE(mkfifo(link_path, 0600) == 0);
	errno = 0;
	CHECK(perfctr_perfdata_writer__open(link_path, NULL) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	unlink(link_path);
	unlink(target);
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
	/* A data size past the end of the file: cut short, its records
	 * recovered. */
	{
		unsigned char *copy = malloc(len);
		struct perfctr_perfdata_recovery rec = { .sz = sizeof(rec) };
		struct perfctr_perfdata *pd;
		uint64_t huge = ~0ULL;

		REQUIRE(copy);
		memcpy(copy, f, len);
		memcpy(copy + 48, &huge, 8);
		pd = perfctr_perfdata__open_mem(copy, len, NULL);
		REQUIRE(pd);
		CHECK_EQ_INT(perfctr_perfdata__recovered(pd, &rec), 1);
		CHECK_EQ_INT(rec.kind, PERFCTR_RECOVERED_TRUNCATED);
		CHECK_EQ_U64(rec.records, nr);
		perfctr_perfdata__close(pd);
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
	/* With features: a bare file is unfinished, and the recovery walk
	 * stops at the first misaligned record. */
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, o);
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
	TEST_CASE(unfinished_file_is_recovered),
	TEST_CASE(killed_file_names_its_events),
	TEST_CASE(write_error_keeps_a_readable_file),
	TEST_CASE(writer_refuses_links_and_fifos),
	TEST_CASE(damaged_headers),
	TEST_CASE(windows_read_every_record),
)
