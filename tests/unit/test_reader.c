/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Unit tests of the perf.data sample reader on files written here: samples
 * handed over in time order although the file has them out of order, with
 * the comm their thread had at that time, frames with their recorded
 * addresses, per-event and file counts, and the errors of bad input; a
 * symbols object shared by reader after reader resolves as a fresh one,
 * also after a file it had read was replaced.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfctr/reader.h"
#include "perfctr/symbols.h"
#include "test.h"

#define ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static char path[64];

struct buf {
	uint64_t words[4096];
	size_t len;		/* in words */
};

static void rec_end(struct buf *b, uint64_t *start, size_t nwords,
		    uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {
		.type = type, .misc = misc, .size = (uint16_t)(nwords * 8),
	};

	memcpy(start, &h, sizeof(h));
	b->len += nwords;
}

/* A COMM (exec when @exec) at @time, with its sample_id_all trailer. */
static void comm(struct buf *b, uint32_t pid, uint32_t tid, const char *name,
		 bool exec, uint64_t time)
{
	uint64_t *r = &b->words[b->len];
	uint32_t ids[2] = { pid, tid };
	size_t n = 1;

	memcpy(&r[n++], ids, 8);
	memset(&r[n], 0, 16);
	snprintf((char *)&r[n], 16, "%s", name);
	n += 2;
	memcpy(&r[n++], ids, 8);
	r[n++] = time;
	rec_end(b, r, n, PERF_RECORD_COMM,
		exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
}

static void mmap2(struct buf *b, uint32_t pid, uint64_t addr, uint64_t len,
		  const char *file, uint64_t time)
{
	uint64_t *r = &b->words[b->len];
	uint32_t ids[2] = { pid, pid };
	size_t n = 1;

	memcpy(&r[n++], ids, 8);
	r[n++] = addr;
	r[n++] = len;
	r[n++] = 0;		/* pgoff */
	r[n++] = 0;		/* maj, min */
	r[n++] = 0;		/* ino */
	r[n++] = 0;		/* ino_generation */
	r[n++] = 5 | (uint64_t)2 << 32;	/* prot, flags */
	memset(&r[n], 0, 24);
	snprintf((char *)&r[n], 24, "%s", file);
	n += 3;
	memcpy(&r[n++], ids, 8);
	r[n++] = time;
	rec_end(b, r, n, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
}

static void sample(struct buf *b, uint32_t pid, uint32_t tid, uint64_t time,
		   const uint64_t *chain, size_t nr)
{
	uint64_t *r = &b->words[b->len];
	uint32_t ids[2] = { pid, tid };
	size_t n = 1;

	r[n++] = chain[1];		/* ip: after PERF_CONTEXT_USER */
	memcpy(&r[n++], ids, 8);
	r[n++] = time;
	r[n++] = 1000;			/* period */
	r[n++] = nr;
	memcpy(&r[n], chain, nr * 8);
	n += nr;
	rec_end(b, r, n, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
}

static void lost(struct buf *b, uint64_t count, uint64_t time)
{
	uint64_t *r = &b->words[b->len];
	uint32_t ids[2] = { 10, 10 };
	size_t n = 1;

	r[n++] = 0;	/* id */
	r[n++] = count;
	memcpy(&r[n++], ids, 8);
	r[n++] = time;
	rec_end(b, r, n, PERF_RECORD_LOST, 0);
}

/*
 * One process (pid 10, threads 10 and 11) mapping /nonexistent/app, then
 * exec'ing under a new name at time 250 (and mapping it again).  The samples come as two rings
 * would write them: times 100, 300, 200, 400.
 */
static void write_file(void)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, o, .no_features = true);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000,
		.sample_type = ST, .sample_id_all = 1, .mmap = 1, .comm = 1,
		.mmap2 = 1,
	};
	static const uint64_t chain[] = {
		PERF_CONTEXT_USER, 0x401010, 0x402020, 0x403030,
	};
	static struct buf b;
	struct perfctr_perfdata_writer *w;

	b.len = 0;
	snprintf(path, sizeof(path), "/tmp/pctest-reader-%d", (int)getpid());
	comm(&b, 10, 10, "first", false, 10);
	comm(&b, 10, 11, "first-worker", false, 11);
	mmap2(&b, 10, 0x400000, 0x10000, "/nonexistent/app", 12);
	sample(&b, 10, 10, 100, chain, 4);
	sample(&b, 10, 11, 300, chain, 4);
	comm(&b, 10, 10, "second", true, 250);
	mmap2(&b, 10, 0x400000, 0x10000, "/nonexistent/app", 251);
	lost(&b, 7, 260);
	sample(&b, 10, 10, 200, chain, 2);
	sample(&b, 10, 10, 400, chain, 3);
	w = perfctr_perfdata_writer__open(path, &o);
	REQUIRE(w);
	CHECK(perfctr_perfdata_writer__add_attr(w, &attr, "clock", NULL, 0) == 0);
	CHECK_EQ_INT(perfctr_perfdata_writer__write(w, b.words, b.len * 8), 0);
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
}

TEST(samples_in_time_order_with_their_comm)
{
	PERFCTR_OPTS(perfctr_reader_opts, o, .callchain = true,
		     .dso_only = true, .kallsyms = "/nonexistent");
	static const struct {
		uint64_t time;
		int tid;
		const char *comm;
		size_t nr_frames;
	} want[] = {
		{ 100, 10, "first", 3 },
		{ 200, 10, "first", 1 },
		/* After the exec at 250; thread 11 keeps its own name. */
		{ 300, 11, "first-worker", 3 },
		{ 400, 10, "second", 2 },
	};
	struct perfctr_reader_sample s = { .sz = sizeof(s) };
	struct perfctr_reader_stats st = { .sz = sizeof(st) };
	struct perfctr_reader *r;
	size_t i;

	write_file();
	r = perfctr_reader__open(path, &o);
	REQUIRE(r);
	CHECK_EQ_U64(perfctr_reader__nr_events(r), 1);
	/* No event_desc section: a name made from the attr. */
	CHECK_STR(perfctr_reader__event_name(r, 0), "cpu-clock");
	CHECK(perfctr_reader__event_name(r, 1) == NULL);
	CHECK_EQ_U64(perfctr_reader__event_attr(r, 0)->sample_type, ST);
	/* The lost counts are known before the first sample. */
	CHECK_EQ_INT(perfctr_reader__stats(r, SIZE_MAX, &st), 0);
	CHECK_EQ_U64(st.lost, 7);
	CHECK_EQ_U64(st.samples, 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		REQUIRE(perfctr_reader__next(r, &s) == 1);
		CHECK_EQ_U64(s.sample->time, want[i].time);
		CHECK_EQ_INT(s.tid, want[i].tid);
		CHECK_EQ_INT(s.pid, 10);
		CHECK_STR(s.comm, want[i].comm);
		CHECK_STR(s.event, "cpu-clock");
		CHECK_EQ_U64(s.event_idx, 0);
		CHECK(!s.kernel);
		REQUIRE(s.nr_frames == want[i].nr_frames);
		CHECK_STR(s.frames[0].dso, "/nonexistent/app");
		CHECK(s.frames[0].sym == NULL);
		CHECK_EQ_U64(s.ips[0], 0x401010);
		/* A file without ELF: DSO-relative means the file offset. */
		CHECK_EQ_U64(s.frames[0].addr, 0x1010);
		if (s.nr_frames > 1) {
			CHECK_EQ_U64(s.ips[1], 0x402020);
			CHECK_EQ_U64(s.frames[1].addr, 0x2020);
		}
	}
	CHECK_EQ_INT(perfctr_reader__next(r, &s), 0);
	CHECK_EQ_INT(perfctr_reader__next(r, &s), 0);
	CHECK_EQ_INT(perfctr_reader__stats(r, SIZE_MAX, &st), 0);
	CHECK_EQ_U64(st.samples, 4);
	CHECK_EQ_U64(st.records, 10);
	CHECK_EQ_U64(st.bad_samples, 0);
	CHECK_EQ_INT(perfctr_reader__stats(r, 0, &st), 0);
	CHECK_EQ_U64(st.samples, 4);
	CHECK_EQ_INT(perfctr_reader__stats(r, 1, &st), -EINVAL);
	perfctr_reader__close(r);
	unlink(path);
}

/* With side_band, the COMM, MMAP2 and LOST records come out among the
 * samples, in time order; the thread table answers for every thread. */
TEST(side_band_records_in_time_order)
{
	PERFCTR_OPTS(perfctr_reader_opts, o, .dso_only = true,
		     .kallsyms = "/nonexistent", .side_band = true);
	static const struct {
		uint32_t type;		/* 0: a sample */
		uint64_t time;
		const char *comm;
	} want[] = {
		{ PERF_RECORD_COMM, 10, "first" },
		{ PERF_RECORD_COMM, 11, "first-worker" },
		{ PERF_RECORD_MMAP2, 12, "first" },
		{ 0, 100, "first" },
		{ 0, 200, "first" },
		{ PERF_RECORD_COMM, 250, "second" },
		{ PERF_RECORD_MMAP2, 251, "second" },
		{ PERF_RECORD_LOST, 260, "second" },
		{ 0, 300, "first-worker" },
		{ 0, 400, "second" },
	};
	struct perfctr_reader_sample s = { .sz = sizeof(s) };
	struct perfctr_reader_thread th = { .sz = sizeof(th) };
	struct perfctr_reader *r;
	size_t i;

	write_file();
	r = perfctr_reader__open(path, &o);
	REQUIRE(r);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		REQUIRE(perfctr_reader__next(r, &s) == 1);
		if (!want[i].type) {
			REQUIRE(s.sample && !s.record);
			CHECK_EQ_U64(s.sample->time, want[i].time);
		} else {
			REQUIRE(s.record && !s.sample);
			CHECK_EQ_INT(s.record->type, want[i].type);
			CHECK_EQ_U64(s.record->sample_id.time, want[i].time);
			CHECK(s.frames == NULL && s.ips == NULL);
		}
		CHECK_STR(s.comm, want[i].comm);
	}
	CHECK_EQ_INT(perfctr_reader__next(r, &s), 0);
	CHECK_EQ_INT(perfctr_reader__thread(r, 11, &th), 0);
	CHECK_EQ_INT(th.pid, 10);
	CHECK_EQ_INT(th.ppid, -1);
	CHECK_STR(th.comm, "first-worker");
	CHECK_EQ_INT(perfctr_reader__thread(r, 10, &th), 0);
	CHECK_STR(th.comm, "second");
	CHECK_EQ_INT(perfctr_reader__thread(r, 99, &th), -ENOENT);
	perfctr_reader__close(r);
	unlink(path);
}

TEST(only_the_sampled_address_without_callchain)
{
	PERFCTR_OPTS(perfctr_reader_opts, o, .dso_only = true,
		     .kallsyms = "/nonexistent");
	struct perfctr_reader_sample s = { .sz = sizeof(s) };
	struct perfctr_reader *r;
	int n = 0;

	write_file();
	r = perfctr_reader__open(path, &o);
	REQUIRE(r);
	while (perfctr_reader__next(r, &s) == 1) {
		CHECK_EQ_U64(s.nr_frames, 1);
		CHECK_EQ_U64(s.ips[0], 0x401010);
		n++;
	}
	CHECK_EQ_INT(n, 4);
	perfctr_reader__close(r);
	unlink(path);
}

TEST(bad_input)
{
	struct perfctr_reader_sample s = { .sz = 8 };
	struct perfctr_reader *r;
	int fd;

	errno = 0;
	CHECK(perfctr_reader__open("/nonexistent/perf.data", NULL) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	snprintf(path, sizeof(path), "/tmp/pctest-reader-%d", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	REQUIRE(fd >= 0);
	CHECK(write(fd, "not a perf.data file, not at all, no.........."
			"................................................"
			"................................................", 140) == 140);
	close(fd);
	CHECK(perfctr_reader__open(path, NULL) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	unlink(path);

	write_file();
	r = perfctr_reader__open(path, NULL);
	REQUIRE(r);
	CHECK_EQ_INT(perfctr_reader__next(r, &s), -EINVAL);
	CHECK_EQ_INT(perfctr_reader__next(NULL, &s), -EINVAL);
	perfctr_reader__close(r);
	perfctr_reader__close(NULL);
	unlink(path);
}

/* A function of this program to find by its name in a copy of it. */
__attribute__((noinline)) void pctest_reader_marker(void);
__attribute__((noinline)) void pctest_reader_marker(void)
{
	__asm__ volatile("");
}

/* One sample of pid 20 at offset @off of ELF file @elf mapped whole. */
static void write_elf_file(const char *elf, uint64_t off)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, o, .no_features = true);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000,
		.sample_type = ST, .sample_id_all = 1, .mmap = 1, .comm = 1,
		.mmap2 = 1,
	};
	const uint64_t chain[] = { PERF_CONTEXT_USER, 0x400000 + off };
	static struct buf b;
	struct perfctr_perfdata_writer *w;

	b.len = 0;
	snprintf(path, sizeof(path), "/tmp/pctest-reader-%d", (int)getpid());
	comm(&b, 20, 20, "elfy", false, 10);
	mmap2(&b, 20, 0x400000, 0x10000000, elf, 11);
	sample(&b, 20, 20, 100, chain, 2);
	w = perfctr_perfdata_writer__open(path, &o);
	REQUIRE(w);
	CHECK(perfctr_perfdata_writer__add_attr(w, &attr, "clock", NULL, 0) == 0);
	CHECK_EQ_INT(perfctr_perfdata_writer__write(w, b.words, b.len * 8), 0);
	CHECK_EQ_INT(perfctr_perfdata_writer__close(w), 0);
}

/* The name of the file's one sample, through @syms (NULL: the reader's
 * own); malloc'd, "-" when unresolved. */
static char *sampled_name(struct perfctr_symbols *syms)
{
	PERFCTR_OPTS(perfctr_reader_opts, o, .kallsyms = "/nonexistent",
		     .symbols = syms);
	struct perfctr_reader_sample s = { .sz = sizeof(s) };
	struct perfctr_reader *r = perfctr_reader__open(path, &o);
	char *name = NULL;

	if (r && perfctr_reader__next(r, &s) == 1 && s.nr_frames)
		name = strdup(s.frames[0].sym ? s.frames[0].sym : "-");
	perfctr_reader__close(r);
	return name ? name : strdup("(no sample)");
}

/* Copy @from to @to through a new file renamed over it (a new inode, as
 * a package upgrade makes). */
static int copy_file(const char *from, const char *to)
{
	char tmp[96], buf[65536];
	int in, out;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.new", to);
	in = open(from, O_RDONLY | O_CLOEXEC);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	close(in);
	close(out);
	return n < 0 ? -1 : rename(tmp, to);
}

TEST(shared_symbols_match_a_fresh_reader)
{
	PERFCTR_OPTS(perfctr_symbols_opts, so, .kallsyms = "/nonexistent");
	struct perfctr_symbols *syms;
	char elf[24], *fresh, *shared;
	Dl_info info;

	if (!perfctr_symbols_have_elf())
		test_skip("libperfctr was built without libelf: no symbols to share");
	REQUIRE(dladdr((void *)pctest_reader_marker, &info) && info.dli_fbase);
	snprintf(elf, sizeof(elf), "/tmp/pcrd-%d", (int)getpid());
	REQUIRE(copy_file("/proc/self/exe", elf) == 0);
	write_elf_file(elf, (uint64_t)((uintptr_t)pctest_reader_marker -
				       (uintptr_t)info.dli_fbase));
	syms = perfctr_symbols__new(&so);
	REQUIRE(syms);
	fresh = sampled_name(NULL);
	CHECK_STR(fresh, "pctest_reader_marker");
	/* Read, then kept: the same name from the second reader on. */
	for (int i = 0; i < 2; i++) {
		shared = sampled_name(syms);
		CHECK_STR(shared, fresh);
		free(shared);
	}
	free(fresh);
	/* Another program at that path: read again, as a fresh reader. */
	REQUIRE(copy_file("/bin/true", elf) == 0);
	fresh = sampled_name(NULL);
	CHECK(strcmp(fresh, "pctest_reader_marker") != 0);
	shared = sampled_name(syms);
	CHECK_STR(shared, fresh);
	free(shared);
	free(fresh);
	perfctr_symbols__delete(syms);
	unlink(elf);
	unlink(path);
}

TEST_MAIN(TEST_CASE(samples_in_time_order_with_their_comm),
	  TEST_CASE(side_band_records_in_time_order),
	  TEST_CASE(only_the_sampled_address_without_callchain),
	  TEST_CASE(bad_input),
	  TEST_CASE(shared_symbols_match_a_fresh_reader))
