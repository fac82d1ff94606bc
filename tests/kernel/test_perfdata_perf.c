// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Kernel tier: perf.data interchange with perf itself.  A file we record
 * (getppid tracepoint, period 100, N calls: exactly N/100 samples) must
 * open in `perf report` and `perf script` with that sample count; a file
 * `perf record` writes must read here with the count perf script sees.
 * Skips where perf is not installed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfctr/perfdata.h"
#include "perfctr/sampler.h"
#include "sys/sys.h"
#include "test.h"

#define N 10000
#define PERIOD 100

static const char *perf_path(void)
{
	static const char *const paths[] = { "/usr/bin/perf", "/usr/local/bin/perf" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	test_skip("perf is not installed");
}

static int getppid_id(void)
{
	FILE *f;
	int id = -1;

	test_require_tracefs();
	f = fopen("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id", "r");
	if (!f)
		test_skip("no syscalls:sys_enter_getppid tracepoint");
	if (fscanf(f, "%d", &id) != 1)
		id = -1;
	fclose(f);
	if (id < 0)
		test_skip("unreadable tracepoint id");
	return id;
}

/* Run a shell command, return its first line of output as a number
 * after @key (or the line count when @key is NULL); -1 on failure. */
static long run_and_scan(const char *cmd, const char *key)
{
	FILE *p = popen(cmd, "r");
	char line[4096];
	long v = -1, lines = 0;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *at;

		lines++;
		if (key && v < 0 && (at = strstr(line, key)))
			v = strtol(at + strlen(key), NULL, 10);
	}
	if (pclose(p) != 0)
		return -1;
	return key ? v : lines;
}

static struct perfctr_perfdata_writer *writer;

static int write_cb(struct perfctr_ring *ring, const struct perf_event_header *h,
		    void *ctx)
{
	(void)ring;
	(void)ctx;
	return perfctr_perfdata_writer__write(writer, h, h->size);
}

TEST(perf_reads_our_file)
{
	const char *perf = perf_path();
	char file[64], cmd[512];
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o);
	struct perfctr_sampler *s;
	const uint64_t *ids;
	size_t nr_ids;
	long samples;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)getppid_id();
	attr.sample_period = PERIOD;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
	o.target = perfctr_target__new_self();
	REQUIRE(o.target);
	s = perfctr_sampler__new(&o);
	REQUIRE(s);
	REQUIRE(perfctr_sampler__add_attr(s, &attr, "syscalls:sys_enter_getppid") == 0);
	err = perfctr_sampler__open(s);
	perfctr_target__delete((struct perfctr_target *)o.target);
	if (err)
		test_skip("cannot open the tracepoint: %s", strerror(-err));
	snprintf(file, sizeof(file), "/tmp/pctest-ours-%d.data", (int)getpid());
	writer = perfctr_perfdata_writer__open(file, NULL);
	REQUIRE(writer);
	nr_ids = perfctr_sampler__ids(s, 0, &ids);
	REQUIRE(perfctr_perfdata_writer__add_attr(writer, perfctr_sampler__attr(s, 0),
						  "syscalls:sys_enter_getppid",
						  ids, nr_ids) == 0);
	REQUIRE(perfctr_sampler__enable(s) == 0);
	for (int i = 0; i < N; i++)
		syscall(SYS_getppid);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	REQUIRE(perfctr_sampler__poll(s, 0, write_cb, NULL) == N / PERIOD);
	REQUIRE(perfctr_perfdata_writer__close(writer) == 0);
	perfctr_sampler__delete(s);

	snprintf(cmd, sizeof(cmd), "%s report --stdio -i %s 2>/dev/null", perf, file);
	samples = run_and_scan(cmd, "# Samples: ");
	CHECK_EQ_INT(samples, N / PERIOD);
	snprintf(cmd, sizeof(cmd), "%s script -i %s 2>/dev/null", perf, file);
	samples = run_and_scan(cmd, NULL);
	CHECK_EQ_INT(samples, N / PERIOD);
	snprintf(cmd, sizeof(cmd), "%s report --stdio --header-only -i %s 2>/dev/null",
		 perf, file);
	CHECK(run_and_scan(cmd, "# nrcpus online : ") == sysconf(_SC_NPROCESSORS_ONLN));
	unlink(file);
}

TEST(we_read_perf_record_file)
{
	const char *perf = perf_path();
	const char *work = test_build_path("tests/workload/pcwork");
	char file[64], cmd[1024];
	struct perfctr_perfdata *pd;
	const struct perf_event_header *h;
	uint64_t cursor = 0, samples = 0, comms = 0, main_tid = 0, lost = 0;
	uint64_t throttles = 0;
	/* Samples per tid, to count the workload's once its COMM is seen
	 * (the rings are written CPU by CPU, so a sample may come first). */
	struct { uint32_t tid; uint64_t n; } per_tid[64];
	size_t nr_tids = 0;
	uint32_t tid = 0;
	long perf_samples;
	int ret;

	getppid_id();
	snprintf(file, sizeof(file), "/tmp/pctest-perf-%d.data", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "%s record -q -m 1024 -e syscalls:sys_enter_getppid -c %d -o %s -- %s getppid %d"
		 " >/dev/null 2>&1", perf, PERIOD, file, work, N);
	if (system(cmd) != 0)
		test_skip("perf record failed here");
	pd = perfctr_perfdata__open(file, NULL);
	REQUIRE(pd);
	CHECK(perfctr_perfdata__nr_attrs(pd) >= 1);
	CHECK_STR(perfctr_perfdata__attr_name(pd, 0), "syscalls:sys_enter_getppid");
	CHECK(perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_TRACING_DATA));
	CHECK(perfctr_perfdata__string(pd, PERFCTR_FEAT_HOSTNAME) != NULL);
	while ((ret = perfctr_perfdata__next(pd, &cursor, &h)) == 1) {
		if (h->type == PERF_RECORD_SAMPLE) {
			PERFCTR_OPTS(perfctr_sample, s);

			if (perfctr_decoder__sample(perfctr_perfdata__decoder(pd), h, &s)) {
				test_fail(__FILE__, __LINE__, "undecodable sample");
				break;
			}
			size_t i = 0;

			while (i < nr_tids && per_tid[i].tid != s.tid)
				i++;
			if (i == nr_tids && nr_tids < sizeof(per_tid) / sizeof(per_tid[0]))
				per_tid[nr_tids++] = (typeof(per_tid[0])){ s.tid, 0 };
			if (i < nr_tids)
				per_tid[i].n++;
			samples++;
		} else if (h->type == PERF_RECORD_COMM) {
			PERFCTR_OPTS(perfctr_record, r);

			CHECK_EQ_INT(perfctr_decoder__record(perfctr_perfdata__decoder(pd),
							     h, &r), 0);
			/* The workload's exec: its main thread is the one
			 * that calls getppid N times. */
			if (r.comm.comm && !strcmp(r.comm.comm, "pcwork") &&
			    r.comm.pid == r.comm.tid)
				tid = r.comm.tid;
			comms++;
		} else if (h->type == PERF_RECORD_LOST) {
			PERFCTR_OPTS(perfctr_record, r);

			CHECK_EQ_INT(perfctr_decoder__record(perfctr_perfdata__decoder(pd),
							     h, &r), 0);
			lost += r.lost.lost;
		} else if (h->type == PERF_RECORD_THROTTLE) {
			throttles++;
		}
	}
	for (size_t i = 0; i < nr_tids; i++)
		if (per_tid[i].tid == tid)
			main_tid = per_tid[i].n;
	CHECK_EQ_INT(ret, 0);
	CHECK(comms >= 1);
	perfctr_perfdata__close(pd);

	/* Whatever perf recorded, we count the same. */
	snprintf(cmd, sizeof(cmd), "%s script -i %s 2>/dev/null", perf, file);
	perf_samples = run_and_scan(cmd, NULL);
	CHECK_EQ_U64(samples, (uint64_t)perf_samples);
	/* perf's attr samples every call (PERIOD: docs/kernel-notes.md 2),
	 * so at this rate the kernel may throttle or the ring overflow: at most N
	 * from the workload's thread, and none only when the file says
	 * samples were lost or throttled.  (Under the sanitizers
	 * LeakSanitizer's tracer thread adds a few getppid calls of its own
	 * at exit, under another tid.) */
	CHECK(tid != 0);
	if (!(main_tid <= N && (main_tid > 0 || lost || throttles)))
		test_fail(__FILE__, __LINE__, "%" PRIu64 " samples of tid %u "
			  "(pcwork's COMM), want 1..%d; %" PRIu64 " samples in "
			  "all, %" PRIu64 " comms, %" PRIu64 " lost, %" PRIu64
			  " throttles", main_tid, tid, N, samples, comms, lost,
			  throttles);
	unlink(file);
}

TEST_MAIN(
	TEST_CASE(perf_reads_our_file),
	TEST_CASE(we_read_perf_record_file),
)
