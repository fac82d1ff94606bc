// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Kernel tier: sampling through rings (the sampler and ring objects), on
 * the exact event
 * syscalls:sys_enter_getppid.  With period P over N calls the kernel
 * writes exactly N/P samples, the k-th with a READ value of k*P; the
 * tests check counts, tids, cpus and values exactly in each sampler mode,
 * lost-record accounting with a ring too small to hold them, and the
 * newest-first window of an overwrite ring.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfctr/sampler.h"
#include "sys/sys.h"
#include "test.h"

#define N 10000
#define PERIOD 100

static int getppid_id(void)
{
	long long id;

	test_require_tracefs();
	id = test_tracepoint_id("syscalls:sys_enter_getppid");
	if (id < 0)
		test_skip("no syscalls:sys_enter_getppid tracepoint");
	return (int)id;
}

/* One fd kept open on the tracepoint: closing the last one costs
 * 30-50 ms (docs/kernel-notes.md 5). */
static void keep_tracepoint_warm(void)
{
	static int fd = -1;
	struct perf_event_attr attr;

	if (fd >= 0)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)getppid_id();
	attr.disabled = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
}

static void tp_attr(struct perf_event_attr *attr, uint64_t period,
		    uint64_t sample_type, uint64_t read_format)
{
	keep_tracepoint_warm();
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = (uint64_t)getppid_id();
	attr->sample_period = period;
	attr->sample_type = sample_type;
	attr->read_format = read_format;
}


static bool pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

static void unpin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* The target of @o is made by the caller and deleted here, after the open
 * (the sampler keeps none). */
static struct perfctr_sampler *
open_filtered_or_skip(struct perfctr_sampler_opts *o,
		      struct perf_event_attr *attr, const char *filter)
{
	struct perfctr_sampler *s;
	int ret;

	REQUIRE(o->target);
	s = perfctr_sampler__new(o);
	REQUIRE(s);
	REQUIRE(perfctr_sampler__add_attr(s, attr, "syscalls:sys_enter_getppid") == 0);
	if (filter)
		REQUIRE(perfctr_sampler__set_filter(s, 0, filter) == 0);
	ret = perfctr_sampler__open(s);
	perfctr_target__delete((struct perfctr_target *)o->target);
	o->target = NULL;
	if (ret == -EACCES || ret == -EPERM) {
		perfctr_sampler__delete(s);
		test_skip("cannot open the sampling event: %s", strerror(-ret));
	}
	if (ret) {
		perfctr_sampler__delete(s);
		test_fail(__FILE__, __LINE__, "open: %s", strerror(-ret));
		test_abort();
	}
	return s;
}

static struct perfctr_sampler *open_or_skip(struct perfctr_sampler_opts *o,
					    struct perf_event_attr *attr)
{
	return open_filtered_or_skip(o, attr, NULL);
}

#define MAX_TIDS 8
struct tally {
	const struct perfctr_decoder *dec;
	struct perfctr_sampler *s;
	uint64_t samples, bad, other;
	uint64_t read_next;	/* expected next READ value per tid 0 */
	bool check_read;
	uint64_t wrong_read;
	int want_cpu;		/* -2: the ring's cpu; -1: any */
	uint64_t wrong_cpu;
	pid_t tids[MAX_TIDS];
	uint64_t per_tid[MAX_TIDS];
	uint64_t first_value, last_value;
	bool descending;
};

static int ring_cpu_of(struct tally *t, struct perfctr_ring *ring)
{
	size_t n = perfctr_sampler__nr_rings(t->s);
	struct perfctr_ring *const *rings = perfctr_sampler__rings(t->s);

	for (size_t i = 0; i < n; i++)
		if (rings[i] == ring)
			return perfctr_sampler__ring_cpu(t->s, i);
	return -3;
}

static int tally_cb(struct perfctr_ring *ring, const struct perf_event_header *hdr,
		    void *ctx)
{
	struct tally *t = ctx;
	PERFCTR_OPTS(perfctr_sample, s);
	size_t i;

	if (hdr->type != PERF_RECORD_SAMPLE) {
		t->other++;
		return 0;
	}
	if (perfctr_decoder__sample(t->dec, hdr, &s)) {
		t->bad++;
		return 0;
	}
	t->samples++;
	for (i = 0; i < MAX_TIDS; i++) {
		if (t->tids[i] == (pid_t)s.tid || !t->tids[i]) {
			t->tids[i] = (pid_t)s.tid;
			t->per_tid[i]++;
			break;
		}
	}
	if (t->want_cpu == -2 && (int)s.cpu != ring_cpu_of(t, ring))
		t->wrong_cpu++;
	if (t->want_cpu >= 0 && (int)s.cpu != t->want_cpu)
		t->wrong_cpu++;
	if (t->check_read && s.read.nr) {
		struct perfctr_read_value v;

		perfctr_read_format__value(&s.read, 0, &v);
		if (v.value != t->read_next)
			t->wrong_read++;
		t->read_next += PERIOD;
	}
	if (s.read.nr) {
		struct perfctr_read_value v;

		perfctr_read_format__value(&s.read, 0, &v);
		if (t->samples == 1)
			t->first_value = v.value;
		else if (v.value + 1 != t->last_value)
			t->descending = false;
		t->last_value = v.value;
	}
	return 0;
}

static void drain_all(struct perfctr_sampler *s, struct tally *t)
{
	struct perfctr_ring *const *rings = perfctr_sampler__rings(s);

	for (size_t i = 0; i < perfctr_sampler__nr_rings(s); i++)
		REQUIRE(perfctr_ring__drain(rings[i], tally_cb, t) >= 0);
}

/*
 * Per-thread mode: N calls at period 100 give exactly N/100 samples, all
 * with our tid and cpu, READ values 100, 200, ...  PERIOD is asked for
 * and dropped by the sampler (docs/kernel-notes.md 2); the decoder supplies the
 * attr's period instead.
 */
TEST(per_thread_exact)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o, .per_thread = true);
	struct perfctr_sampler *s;
	struct tally t;
	PERFCTR_OPTS(perfctr_sample, one);

	if (!pin_to_cpu(0))
		test_skip("cannot pin to CPU 0");
	tp_attr(&attr, PERIOD, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ,
		PERF_FORMAT_ID);
	o.target = perfctr_target__new_process(getpid());
	s = open_or_skip(&o, &attr);
	CHECK_EQ_U64(perfctr_sampler__nr_rings(s), 1);
	CHECK(!(perfctr_sampler__attr(s, 0)->sample_type & PERF_SAMPLE_PERIOD));
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = 0;
	t.check_read = true;
	t.read_next = PERIOD;
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(N);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	drain_all(s, &t);
	CHECK_EQ_U64(t.samples, N / PERIOD);
	CHECK_EQ_U64(t.bad, 0);
	CHECK_EQ_U64(t.tids[0], syscall(SYS_gettid));
	CHECK_EQ_U64(t.tids[1], 0);
	CHECK_EQ_U64(t.wrong_cpu, 0);
	CHECK_EQ_U64(t.wrong_read, 0);
	/* The decoder fills the period from the attr. */
	{
		uint64_t rec[64];
		struct perf_event_header *h = (void *)rec;
		const uint64_t *ids;

		CHECK_EQ_U64(perfctr_sampler__ids(s, 0, &ids), 1);
		/* A synthetic sample of this attr's layout: ip, tid, time,
		 * cpu, read {value, id, lost}. */
		memset(rec, 0, sizeof(rec));
		h->type = PERF_RECORD_SAMPLE;
		h->size = (uint16_t)perfctr_sample__fixed_size(perfctr_sampler__attr(s, 0));
		REQUIRE(perfctr_decoder__sample(t.dec, h, &one) == 0);
		CHECK_EQ_U64(one.period, PERIOD);
		CHECK(one.period_from_attr);
	}
	unpin();
	perfctr_sampler__delete(s);
}

/*
 * Default mode: per-CPU rings for a task and its children.  The child's
 * own child (on the last CPU), then the child (on CPU 0) each make N
 * calls: N/100 samples each, every sample in the ring of the CPU it
 * names.
 */
TEST(default_mode_inherit)
{
	struct perf_event_attr attr;
	int go[2], status;
	pid_t child;
	struct perfctr_sampler *s;
	struct tally t;
	char c = 0;
	int last_cpu;

	if (test_tsan())
		test_skip("ThreadSanitizer's background thread is a thread of the process, sharing the inherited counters' periods");

	tp_attr(&attr, PERIOD, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CPU, 0);
	last_cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	REQUIRE(pipe(go) == 0);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		pid_t g;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		/*
		 * One after the other, each on its own CPU: a task's
		 * per-CPU events keep per-CPU periods, and the kernel may
		 * swap the (equivalent) inherited contexts of parent and
		 * child when one replaces the other on a CPU, periods and
		 * all: interleaved, the split of samples is not exact.
		 */
		g = fork();
		if (!pin_to_cpu(g == 0 ? last_cpu : 0))
			_exit(3);
		if (g > 0)
			waitpid(g, NULL, 0);
		do_getppid(N);
		_exit(0);
	}
	close(go[0]);
	{
		PERFCTR_OPTS(perfctr_sampler_opts, o);

		o.target = perfctr_target__new_process(child);
		s = open_or_skip(&o, &attr);
	}
	/* One ring per online CPU. */
	CHECK_EQ_U64(perfctr_sampler__nr_rings(s), sysconf(_SC_NPROCESSORS_ONLN));
	for (size_t i = 0; i < perfctr_sampler__nr_rings(s); i++)
		CHECK_EQ_INT(perfctr_sampler__ring_tid(s, i), child);
	REQUIRE(perfctr_sampler__enable(s) == 0);
	REQUIRE(write(go[1], &c, 1) == 1);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = -2;
	/* Poll until every ring hangs up (the child exited). */
	for (int i = 0; i < 1000; i++) {
		int64_t n = perfctr_sampler__poll(s, 100, tally_cb, &t);

		if (n == -ENODEV)
			break;
		REQUIRE(n >= 0);
	}
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	drain_all(s, &t);
	close(go[1]);
	CHECK_EQ_U64(t.samples, 2 * N / PERIOD);
	CHECK_EQ_U64(t.per_tid[0], N / PERIOD);
	CHECK_EQ_U64(t.per_tid[1], N / PERIOD);
	CHECK(t.tids[0] == child || t.tids[1] == child);
	CHECK_EQ_U64(t.wrong_cpu, 0);
	CHECK_EQ_U64(t.bad, 0);
	perfctr_sampler__delete(s);
}

#define THREAD_CALLS 1000

static void *thread_calls(void *arg)
{
	int *go = arg;
	char c;

	if (go && read(go[0], &c, 1) != 1)
		return NULL;
	do_getppid(THREAD_CALLS);
	return NULL;
}

/*
 * Default mode on a task with a thread already running: events on every
 * thread it has at open and every CPU, one ring per CPU; a thread started
 * after the open inherits them.  The old and the new thread's calls give
 * one sample each (period 1: with a longer one the kernel's swaps of the
 * equivalent contexts of a thread and its parent, period counts and all,
 * make per-thread counts inexact), the main thread none.
 */
TEST(default_mode_threads_now_and_later)
{
	PERFCTR_OPTS(perfctr_sampler_opts, o);
	struct perf_event_attr attr;
	struct perfctr_sampler *s;
	pthread_t old, later;
	const uint64_t *ids;
	struct tally t;
	int go[2];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (test_tsan())
		test_skip("ThreadSanitizer's background thread is a thread of the process");

	if (!pin_to_cpu(0))
		test_skip("cannot run on CPU 0");
	tp_attr(&attr, 1, PERF_SAMPLE_TID, 0);
	REQUIRE(pipe(go) == 0);
	REQUIRE(pthread_create(&old, NULL, thread_calls, go) == 0);
	o.target = perfctr_target__new_process(getpid());
	s = open_or_skip(&o, &attr);
	CHECK_EQ_U64(perfctr_sampler__nr_rings(s), cpus);
	/* Two threads (this one and the old one) on every CPU. */
	CHECK_EQ_U64(perfctr_sampler__ids(s, 0, &ids), 2 * cpus);
	REQUIRE(perfctr_sampler__enable(s) == 0);
	REQUIRE(write(go[1], "g", 1) == 1);
	pthread_join(old, NULL);
	REQUIRE(pthread_create(&later, NULL, thread_calls, NULL) == 0);
	pthread_join(later, NULL);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	unpin();
	close(go[0]);
	close(go[1]);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = -1;
	drain_all(s, &t);
	CHECK_EQ_U64(t.samples, 2 * THREAD_CALLS);
	CHECK_EQ_U64(t.per_tid[0], THREAD_CALLS);
	CHECK_EQ_U64(t.per_tid[1], THREAD_CALLS);
	CHECK(t.tids[0] != getpid() && t.tids[1] != getpid() &&
	      t.tids[0] != t.tids[1]);
	CHECK_EQ_U64(t.bad, 0);
	perfctr_sampler__delete(s);
}

struct waiting_thread {
	int go[2];
	pid_t tid;
};

static void *thread_tid_calls(void *arg)
{
	struct waiting_thread *w = arg;
	char c;

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (read(w->go[0], &c, 1) != 1)
		return NULL;
	do_getppid(THREAD_CALLS);
	return NULL;
}

/*
 * Thread mode: only the thread named, not the other threads of its
 * process: its calls give one sample each (period 1), the calling
 * thread's as many calls none.
 */
TEST(thread_mode_one_thread)
{
	struct waiting_thread w = { .tid = 0 };
	struct perf_event_attr attr;
	struct perfctr_sampler *s;
	pthread_t th;
	struct tally t;

	REQUIRE(pipe(w.go) == 0);
	REQUIRE(pthread_create(&th, NULL, thread_tid_calls, &w) == 0);
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	tp_attr(&attr, 1, PERF_SAMPLE_TID, 0);
	{
		PERFCTR_OPTS(perfctr_sampler_opts, o);

		o.target = perfctr_target__new_thread(w.tid);
		s = open_or_skip(&o, &attr);
	}
	CHECK_EQ_U64(perfctr_sampler__nr_rings(s), 1);
	CHECK_EQ_INT(perfctr_sampler__ring_tid(s, 0), w.tid);
	CHECK(!perfctr_sampler__attr(s, 0)->inherit);
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(THREAD_CALLS);
	REQUIRE(write(w.go[1], "g", 1) == 1);
	pthread_join(th, NULL);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	close(w.go[0]);
	close(w.go[1]);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = -1;
	drain_all(s, &t);
	CHECK_EQ_U64(t.samples, THREAD_CALLS);
	CHECK_EQ_INT(t.tids[0], w.tid);
	CHECK_EQ_U64(t.per_tid[0], THREAD_CALLS);
	CHECK_EQ_U64(t.bad, 0);
	perfctr_sampler__delete(s);
}

/*
 * CPU mode: every task on CPU 0, filtered to our pid (other processes
 * call getppid too, docs/kernel-notes.md 8); pinned there, N calls give N/100
 * samples, all with cpu 0 and our tid.
 */
TEST(cpu_mode_filtered)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o);
	struct perfctr_sampler *s;
	struct tally t;
	char filter[64];

	test_require_root();
	if (!pin_to_cpu(0))
		test_skip("cannot pin to CPU 0");
	tp_attr(&attr, PERIOD, PERF_SAMPLE_TID | PERF_SAMPLE_CPU, 0);
	o.target = perfctr_target__new_cpus("0");
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)getpid());
	s = open_filtered_or_skip(&o, &attr, filter);
	REQUIRE(perfctr_sampler__nr_rings(s) == 1);
	CHECK_EQ_INT(perfctr_sampler__ring_cpu(s, 0), 0);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = 0;
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(N);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	drain_all(s, &t);
	CHECK_EQ_U64(t.samples, N / PERIOD);
	CHECK_EQ_U64(t.tids[0], syscall(SYS_gettid));
	CHECK_EQ_U64(t.tids[1], 0);
	CHECK_EQ_U64(t.wrong_cpu, 0);
	unpin();
	perfctr_sampler__delete(s);
}

/*
 * A one-page ring and a consumer that does not read: the kernel keeps
 * what fits and drops the rest.  Every call is accounted for: samples
 * read + PERF_RECORD_LOST count == calls, and the LOST records say what
 * PERF_FORMAT_LOST says.  (The LOST record is written only once the
 * reader has freed space, at the next event: docs/kernel-notes.md 13.)
 */
TEST(tiny_ring_lost_accounting)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o, .per_thread = true, .data_pages = 1);
	PERFCTR_OPTS(perfctr_ring_stats, st);
	struct perfctr_sampler *s;
	struct tally t;
	uint64_t kernel_lost = 0;

	tp_attr(&attr, 1, PERF_SAMPLE_TID, 0);
	o.target = perfctr_target__new_process(getpid());
	s = open_or_skip(&o, &attr);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = -1;
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(N);
	drain_all(s, &t);
	do_getppid(1);		/* lets the kernel write its LOST record */
	REQUIRE(perfctr_sampler__disable(s) == 0);
	drain_all(s, &t);
	REQUIRE(perfctr_sampler__stats(s, &st, &kernel_lost) == 0);
	CHECK(t.samples < N);
	CHECK(st.lost > 0);
	CHECK_EQ_U64(st.lost_records, 1);
	CHECK_EQ_U64(t.samples + st.lost, N + 1);
	CHECK_EQ_U64(st.samples, t.samples);
	if (perfctr_sampler__attr(s, 0)->read_format & PERF_FORMAT_LOST)
		CHECK_EQ_U64(kernel_lost, st.lost);
	perfctr_sampler__delete(s);
}

/*
 * Overwrite ring: the kernel never waits; after N calls the reader
 * (output paused) sees the newest records first, READ values N, N-1,
 * ... down to what still fits, all whole.
 */
TEST(overwrite_ring_newest_first)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o, .per_thread = true, .data_pages = 1,
		     .overwrite = true);
	struct perfctr_sampler *s;
	struct tally t;

	tp_attr(&attr, 1, PERF_SAMPLE_TID | PERF_SAMPLE_READ, 0);
	o.target = perfctr_target__new_process(getpid());
	s = open_or_skip(&o, &attr);
	CHECK(perfctr_sampler__attr(s, 0)->write_backward);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = -1;
	t.descending = true;
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(N);
	drain_all(s, &t);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	/* 16 + 8 (+ 8 lost) bytes a sample: at least 100 fit in a page. */
	CHECK(t.samples >= 100);
	CHECK(t.samples < N);
	CHECK_EQ_U64(t.first_value, N);
	CHECK(t.descending);
	CHECK_EQ_U64(t.bad, 0);
	perfctr_sampler__delete(s);
}

/* Side-band records of the tracking ring, counted by kind. */
struct sideband {
	const struct perfctr_decoder *dec;
	uint64_t comm_named, mmap_self, samples, other;
	size_t attr_idx;
	bool wrong_attr;
};

static int sideband_cb(struct perfctr_ring *ring,
		       const struct perf_event_header *hdr, void *ctx)
{
	struct sideband *sb = ctx;
	PERFCTR_OPTS(perfctr_record, r);

	(void)ring;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		sb->samples++;
		return 0;
	}
	if (perfctr_decoder__record(sb->dec, hdr, &r)) {
		sb->other++;
		return 0;
	}
	if (r.attr_idx != sb->attr_idx)
		sb->wrong_attr = true;
	if (r.type == PERF_RECORD_COMM && !strcmp(r.comm.comm, "pctrack") &&
	    r.comm.tid == (uint32_t)syscall(SYS_gettid))
		sb->comm_named++;
	else if (r.type == PERF_RECORD_MMAP2 && strstr(r.mmap.filename, "test_ring_sampling"))
		sb->mmap_self++;
	else
		sb->other++;
	return 0;
}

/*
 * opts.tracking_ring: the side-band bits move from the sampling event to
 * a dummy event with a forward ring of its own.  A COMM (prctl) and an
 * executable MMAP2 made before N samples wrap the one-page overwrite ring
 * are still there, each exactly once, in the tracking ring, identified as
 * the dummy's; the overwrite ring holds samples only.
 */
TEST(tracking_ring_keeps_side_band)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o, .data_pages = 1,
		     .overwrite = true, .tracking_ring = true);
	const struct perf_event_attr *a0, *a1;
	struct perfctr_sampler *s;
	struct perfctr_ring *const *track;
	struct sideband sb;
	struct tally t;
	char old_name[32] = "";
	void *map;
	int fd;

	tp_attr(&attr, 1, PERF_SAMPLE_TID | PERF_SAMPLE_TIME, 0);
	attr.comm = attr.mmap = attr.mmap2 = attr.task = 1;
	o.target = perfctr_target__new_self();
	s = open_or_skip(&o, &attr);
	REQUIRE(perfctr_sampler__nr_attrs(s) == 2);
	a0 = perfctr_sampler__attr(s, 0);
	a1 = perfctr_sampler__attr(s, 1);
	CHECK(a0->write_backward && !a0->comm && !a0->mmap && !a0->mmap2 && !a0->task);
	CHECK(a1->type == PERF_TYPE_SOFTWARE && a1->config == PERF_COUNT_SW_DUMMY);
	CHECK(!a1->write_backward && a1->comm && a1->mmap && a1->mmap2 && a1->task);
	CHECK(!strcmp(perfctr_sampler__name(s, 1), "dummy"));
	CHECK((a0->sample_type & PERF_SAMPLE_IDENTIFIER) &&
	      (a1->sample_type & PERF_SAMPLE_IDENTIFIER));
	track = perfctr_sampler__tracking_rings(s);
	REQUIRE(track);

	prctl(PR_GET_NAME, old_name);
	REQUIRE(perfctr_sampler__enable(s) == 0);
	prctl(PR_SET_NAME, "pctrack");
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	REQUIRE(map != MAP_FAILED);
	do_getppid(N);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	munmap(map, 4096);
	close(fd);
	prctl(PR_SET_NAME, old_name);

	memset(&sb, 0, sizeof(sb));
	sb.dec = perfctr_sampler__decoder(s);
	sb.attr_idx = 1;
	for (size_t i = 0; i < perfctr_sampler__nr_rings(s); i++)
		REQUIRE(perfctr_ring__drain(track[i], sideband_cb, &sb) >= 0);
	CHECK_EQ_U64(sb.comm_named, 1);
	CHECK_EQ_U64(sb.mmap_self, 1);
	CHECK_EQ_U64(sb.samples, 0);

	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = -1;
	drain_all(s, &t);
	CHECK(t.samples >= 100 && t.samples < N);
	CHECK_EQ_U64(t.other, 0);
	CHECK_EQ_U64(t.bad, 0);
	perfctr_sampler__delete(s);
}

/*
 * Two events redirected into one ring (SET_OUTPUT): getppid and getpid
 * samples arrive in one stream, told apart by PERF_SAMPLE_IDENTIFIER,
 * each exactly calls / period.
 */
TEST(shared_ring_two_events)
{
	struct perf_event_attr a, b;
	PERFCTR_OPTS(perfctr_sampler_opts, o, .per_thread = true);
	struct perfctr_sampler *s;
	struct tally t;
	uint64_t per_attr[2] = { 0, 0 };
	const struct perf_event_header *h;
	struct perfctr_ring *ring;
	uint64_t getpid_id;
	int ret;

	if (test_tsan())
		test_skip("ThreadSanitizer's background thread is a thread of the process");

	test_require_tracefs();
	{
		FILE *f = fopen("/sys/kernel/tracing/events/syscalls/sys_enter_getpid/id", "r");
		int id = -1;

		if (!f)
			test_skip("no syscalls:sys_enter_getpid tracepoint");
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
		if (id < 0)
			test_skip("unreadable tracepoint id");
		getpid_id = (uint64_t)id;
	}
	tp_attr(&a, PERIOD, PERF_SAMPLE_TID, 0);
	b = a;
	b.config = getpid_id;
	b.sample_period = 10;
	o.target = perfctr_target__new_process(getpid());
	s = perfctr_sampler__new(&o);
	REQUIRE(s);
	REQUIRE(perfctr_sampler__add_attr(s, &a, "syscalls:sys_enter_getppid") == 0);
	REQUIRE(perfctr_sampler__add_attr(s, &b, "syscalls:sys_enter_getpid") == 1);
	ret = perfctr_sampler__open(s);
	perfctr_target__delete((struct perfctr_target *)o.target);
	REQUIRE(ret == 0);
	CHECK(perfctr_sampler__attr(s, 0)->sample_type & PERF_SAMPLE_IDENTIFIER);
	CHECK_EQ_U64(perfctr_sampler__nr_rings(s), 1);
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(N);
	do_getpid(1000);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	ring = perfctr_sampler__rings(s)[0];
	REQUIRE(perfctr_ring__read_begin(ring) > 0);
	while ((h = perfctr_ring__read_next(ring))) {
		int idx = perfctr_decoder__find_attr(t.dec, h);

		if (h->type == PERF_RECORD_SAMPLE && idx >= 0 && idx < 2)
			per_attr[idx]++;
		else
			t.bad++;
		perfctr_ring__consume(ring);
	}
	perfctr_ring__read_end(ring);
	CHECK_EQ_U64(per_attr[0], N / PERIOD);
	CHECK_EQ_U64(per_attr[1], 1000 / 10);
	CHECK_EQ_U64(t.bad, 0);
	perfctr_sampler__delete(s);
}

/*
 * wakeup_events = K: the ring's fd polls readable exactly at the K-th
 * sample (docs/kernel-notes.md 13), and the poll helper then delivers them all.
 */
TEST(wakeup_events_poll)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o, .per_thread = true, .wakeup_events = 10);
	struct perfctr_sampler *s;
	struct pollfd pfd;
	struct tally t;

	tp_attr(&attr, 1, PERF_SAMPLE_TID, 0);
	o.target = perfctr_target__new_process(getpid());
	s = open_or_skip(&o, &attr);
	pfd.fd = perfctr_ring__fd(perfctr_sampler__rings(s)[0]);
	pfd.events = POLLIN;
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(9);
	pfd.revents = 0;
	CHECK_EQ_INT(poll(&pfd, 1, 0), 0);
	do_getppid(1);
	pfd.revents = 0;
	CHECK_EQ_INT(poll(&pfd, 1, 0), 1);
	CHECK(pfd.revents & POLLIN);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = -1;
	CHECK_EQ_INT(perfctr_sampler__poll(s, 0, tally_cb, &t), 10);
	CHECK_EQ_U64(t.samples, 10);
	/* Nothing left: a second poll delivers nothing. */
	CHECK_EQ_INT(perfctr_sampler__poll(s, 0, tally_cb, &t), 0);
	perfctr_sampler__delete(s);
}

/*
 * System-wide mode: every task on every online CPU, one ring per CPU,
 * filtered to our pid (docs/kernel-notes.md 8); pinned to CPU 0, N calls give
 * N/100 samples, all in CPU 0's ring.
 */
TEST(system_wide_filtered)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o);
	struct perfctr_sampler *s;
	struct tally t;
	char filter[64];

	test_require_root();
	if (!pin_to_cpu(0))
		test_skip("cannot pin to CPU 0");
	tp_attr(&attr, PERIOD, PERF_SAMPLE_TID | PERF_SAMPLE_CPU, 0);
	o.target = perfctr_target__new_cpus(NULL);
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)getpid());
	s = open_filtered_or_skip(&o, &attr, filter);
	CHECK_EQ_U64(perfctr_sampler__nr_rings(s), sysconf(_SC_NPROCESSORS_ONLN));
	for (size_t i = 0; i < perfctr_sampler__nr_rings(s); i++)
		CHECK_EQ_INT(perfctr_sampler__ring_tid(s, i), -1);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = 0;
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(N);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	drain_all(s, &t);
	CHECK_EQ_U64(t.samples, N / PERIOD);
	CHECK_EQ_U64(t.tids[0], syscall(SYS_gettid));
	CHECK_EQ_U64(t.tids[1], 0);
	CHECK_EQ_U64(t.wrong_cpu, 0);
	unpin();
	perfctr_sampler__delete(s);
}

/*
 * wakeup_watermark: POLLIN only once that many bytes are in the ring.
 * 16-byte samples, a 4096-byte watermark: not readable at 100 samples,
 * readable at 300.
 */
TEST(watermark_poll)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o, .per_thread = true, .data_pages = 4,
		     .wakeup_watermark = 4096);
	struct perfctr_sampler *s;
	struct pollfd pfd;
	struct tally t;

	tp_attr(&attr, 1, PERF_SAMPLE_TID, 0);
	o.target = perfctr_target__new_process(getpid());
	s = open_or_skip(&o, &attr);
	CHECK(perfctr_sampler__attr(s, 0)->watermark);
	pfd.fd = perfctr_ring__fd(perfctr_sampler__rings(s)[0]);
	pfd.events = POLLIN;
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(100);
	pfd.revents = 0;
	CHECK_EQ_INT(poll(&pfd, 1, 0), 0);
	do_getppid(200);
	pfd.revents = 0;
	CHECK_EQ_INT(poll(&pfd, 1, 0), 1);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = -1;
	CHECK_EQ_INT(perfctr_sampler__poll(s, 0, tally_cb, &t), 300);
	perfctr_sampler__delete(s);
}

/*
 * An AUX area on an event whose PMU has none: the kernel refuses the
 * mapping, the ring is not made, and the data mapping is undone (the
 * same fd maps again afterwards).
 */
TEST(aux_refused_without_aux_pmu)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_ring_opts, ro, .data_pages = 1, .aux_pages = 1);
	PERFCTR_OPTS(perfctr_ring_opts, plain, .data_pages = 1);
	struct perfctr_ring *ring;
	int fd;

	tp_attr(&attr, 1, PERF_SAMPLE_TID, 0);
	attr.disabled = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0)
		test_skip("cannot open the tracepoint: %s", strerror(-fd));
	errno = 0;
	ring = perfctr_ring__new(fd, &ro);
	CHECK(ring == NULL);
	CHECK(errno != 0);
	ring = perfctr_ring__new(fd, &plain);
	CHECK(ring != NULL);
	if (ring)
		CHECK_EQ_U64(perfctr_ring__aux_size(ring), 0);
	perfctr_ring__delete(ring);
	close(fd);
}

/*
 * A command target: held before its exec, its events open with
 * enable_on_exec and inherit (one ring per CPU), nothing counted before
 * the start.  Every call a sample (-c 1): exact whatever CPUs it uses.
 */
TEST(command_target_from_exec)
{
	char *argv[] = { (char *)test_build_path("tests/workload/pcwork"),
			 "threads", "2", "300", "getppid", "400", NULL };
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o);
	struct perfctr_target *cmd;
	struct perfctr_sampler *s;
	struct tally t;
	int status = -1, err;

	tp_attr(&attr, 1, PERF_SAMPLE_TID | PERF_SAMPLE_CPU, 0);
	cmd = perfctr_target__new_command(argv, NULL);
	REQUIRE(cmd);
	o.target = cmd;
	s = perfctr_sampler__new(&o);
	REQUIRE(s);
	REQUIRE(perfctr_sampler__add_attr(s, &attr, "syscalls:sys_enter_getppid") == 0);
	CHECK(perfctr_sampler__attr(s, 0)->enable_on_exec);
	CHECK(perfctr_sampler__attr(s, 0)->inherit);
	err = perfctr_sampler__open(s);
	if (err) {
		perfctr_sampler__delete(s);
		perfctr_target__delete(cmd);
		if (err == -EACCES || err == -EPERM)
			test_skip("cannot open the sampling event: %s", strerror(-err));
		test_fail(__FILE__, __LINE__, "open: %s", strerror(-err));
		test_abort();
	}
	CHECK_EQ_U64(perfctr_sampler__nr_rings(s), sysconf(_SC_NPROCESSORS_ONLN));
	do_getppid(100);	/* ours: not sampled */
	REQUIRE(perfctr_target__start(cmd) == 0);
	do
		err = perfctr_target__wait(cmd, &status);
	while (err == -EINTR);
	CHECK_EQ_INT(err, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = -2;
	drain_all(s, &t);
	/* Two threads of 300 and the main thread's 400; a sanitizer
	 * runtime may add a helper of its own that calls getppid too. */
	{
		int n300 = 0, n400 = 0;

		for (int i = 0; i < MAX_TIDS; i++) {
			CHECK(t.tids[i] != getpid());
			n300 += t.per_tid[i] == 300;
			n400 += t.per_tid[i] == 400;
		}
		CHECK_EQ_INT(n300, 2);
		CHECK_EQ_INT(n400, 1);
		CHECK(t.samples >= 2 * 300 + 400);
	}
	CHECK_EQ_U64(t.bad, 0);
	CHECK_EQ_U64(t.wrong_cpu, 0);
	perfctr_sampler__delete(s);
	perfctr_target__delete(cmd);
}

/* A thread followed on a CPU list: one ring per CPU of the list, with
 * the thread's tid, its samples exact. */
TEST(thread_on_cpus_target)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o);
	struct perfctr_sampler *s;
	struct tally t;

	if (!pin_to_cpu(0))
		test_skip("cannot pin to CPU 0");
	tp_attr(&attr, PERIOD, PERF_SAMPLE_TID | PERF_SAMPLE_CPU, 0);
	o.target = perfctr_target__new_thread_on_cpus((pid_t)syscall(SYS_gettid),
						      "0");
	s = open_or_skip(&o, &attr);
	REQUIRE(perfctr_sampler__nr_rings(s) == 1);
	CHECK_EQ_INT(perfctr_sampler__ring_cpu(s, 0), 0);
	CHECK_EQ_INT(perfctr_sampler__ring_tid(s, 0), (pid_t)syscall(SYS_gettid));
	CHECK(!perfctr_sampler__attr(s, 0)->inherit);
	memset(&t, 0, sizeof(t));
	t.dec = perfctr_sampler__decoder(s);
	t.s = s;
	t.want_cpu = 0;
	REQUIRE(perfctr_sampler__enable(s) == 0);
	do_getppid(N);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	drain_all(s, &t);
	CHECK_EQ_U64(t.samples, N / PERIOD);
	CHECK_EQ_U64(t.tids[0], syscall(SYS_gettid));
	CHECK_EQ_U64(t.tids[1], 0);
	unpin();
	perfctr_sampler__delete(s);
}

/* Filters: kept until the open, refused by the kernel there when bad. */
TEST(filter_errors)
{
	struct perf_event_attr attr;
	PERFCTR_OPTS(perfctr_sampler_opts, o);
	struct perfctr_sampler *s;
	int err;

	tp_attr(&attr, 1, PERF_SAMPLE_TID, 0);
	o.target = perfctr_target__new_self();
	REQUIRE(o.target);
	s = perfctr_sampler__new(&o);
	REQUIRE(s);
	CHECK_EQ_INT(perfctr_sampler__set_filter(s, 0, "common_pid == 1"), -EINVAL);
	REQUIRE(perfctr_sampler__add_attr(s, &attr, NULL) == 0);
	CHECK_EQ_INT(perfctr_sampler__set_filter(s, 1, "common_pid == 1"), -EINVAL);
	CHECK_EQ_INT(perfctr_sampler__set_filter(s, 0, "no_such_field == 1"), 0);
	err = perfctr_sampler__open(s);
	if (err == -EACCES || err == -EPERM) {
		perfctr_sampler__delete(s);
		perfctr_target__delete((struct perfctr_target *)o.target);
		test_skip("cannot open the sampling event: %s", strerror(-err));
	}
	CHECK_EQ_INT(err, -EINVAL);
	CHECK_EQ_INT(perfctr_sampler__set_filter(s, 0, NULL), 0);
	CHECK_EQ_INT(perfctr_sampler__open(s), 0);
	CHECK_EQ_INT(perfctr_sampler__set_filter(s, 0, "common_pid == 1"), -EBUSY);
	perfctr_sampler__delete(s);
	perfctr_target__delete((struct perfctr_target *)o.target);
}

TEST_MAIN(
	TEST_CASE(per_thread_exact),
	TEST_CASE(default_mode_inherit),
	TEST_CASE(default_mode_threads_now_and_later),
	TEST_CASE(thread_mode_one_thread),
	TEST_CASE(cpu_mode_filtered),
	TEST_CASE(tiny_ring_lost_accounting),
	TEST_CASE(overwrite_ring_newest_first),
	TEST_CASE(tracking_ring_keeps_side_band),
	TEST_CASE(shared_ring_two_events),
	TEST_CASE(wakeup_events_poll),
	TEST_CASE(system_wide_filtered),
	TEST_CASE(watermark_poll),
	TEST_CASE(aux_refused_without_aux_pmu),
	TEST_CASE(command_target_from_exec),
	TEST_CASE(thread_on_cpus_target),
	TEST_CASE(filter_errors),
)
