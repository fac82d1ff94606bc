/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex serve's /debug/pprof/profile: a cpu-clock profile of the whole
 * machine, or of one cgroup (?cgroup=NAME), for ?seconds=N (default 30,
 * as Go's net/http/pprof), in pprof's format.  This is the endpoint that
 * Parca and Pyroscope scrape in pull mode.
 *
 * A profile is what `perfex record -F 99 -g -a [-G NAME]` followed by
 * `perfex report --pprof` makes, without a file on disk: the library's
 * sampler on a CPU or cgroup target, its records (and the side-band
 * records of the processes already running) written as perf.data into a
 * memfd, which the library's reader resolves and its pprof encoder
 * turns into the reply.
 *
 * ?type=off-cpu adds the time the target's tasks spend blocked (the
 * library's off-CPU program, as `perfex record --off-cpu`), the sample
 * type off_cpu/nanoseconds and the default; ?type=wall adds the same and
 * a wall/nanoseconds type, the default, where a stack weighs its on-CPU
 * and its off-CPU time: the names Pyroscope and Parca ask with.
 *
 * Each request runs in its connection's thread (http.c), so a profile of
 * 30 s holds up nothing else; one profile of a target at a time (409
 * Conflict for the second), as two samplers of one target would only
 * double the cost.  At shutdown the running profiles end within a second
 * (503).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <perfctr/offcpu.h>
#include <perfctr/perfctr.h>
#include <perfctr/perfdata.h>
#include <perfctr/pprof.h>
#include <perfctr/reader.h>
#include <perfctr/ring.h>
#include <perfctr/sampler.h>
#include <perfctr/symbols.h>
#include <perfctr/synth.h>
#include <perfctr/target.h>

#include "perfex.h"
#include "serve.h"

/* Go's CPU profiler's rate, and perf's advice for system-wide profiles
 * (a prime, so that no periodic work aliases with it). */
#define PROFILE_HZ 99
#define PROFILE_DEFAULT_SECONDS 30

/* How long the symbol tables read are kept for the next profiles: the
 * libraries' are read again anyway when their files change, the kernel's
 * when a sample lands outside the text it knows and the modules changed
 * (a module loaded since); dropping them all now and then is for what
 * neither sees. */
#define SYMBOLS_MAX_AGE_NS (3600 * 1000000000ull)

struct profiler {
	struct serve_exporter *ex;
	pthread_mutex_t lock;
	char **running;		/* targets being profiled: "" is the machine */
	size_t nr_running;
	atomic_bool stopping;
	/* The symbol tables of the libraries and the kernel, read once for
	 * every profile (their reading is most of a profile's cost); one
	 * encode at a time uses them. */
	pthread_mutex_t symbols_lock;
	struct perfctr_symbols *symbols;
	uint64_t symbols_born;
};

/* What ?type= asks for. */
enum profile_type { TYPE_CPU, TYPE_OFF_CPU, TYPE_WALL };

/* One profile in the making. */
struct run {
	enum profile_type type;
	struct perfctr_offcpu *offcpu;	/* off-cpu and wall */
	uint64_t offcpu_id;		/* its sample id in the file */
	struct perfctr_sampler *sampler;
	struct perfctr_perfdata_writer *writer;
	int fd;			/* the memfd holding the perf.data */
	int write_err;
	uint64_t trailer_id;
	uint64_t start_ns;	/* CLOCK_REALTIME at the enable */
	uint64_t duration_ns;	/* from the enable to the disable */
};

static void set_text(struct serve_reply *reply, unsigned int status,
		     const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_text(struct serve_reply *reply, unsigned int status,
		     const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	free(reply->body);
	reply->body = n < 0 ? NULL : text;
	reply->len = n < 0 ? 0 : (size_t)n;
	reply->status = status;
	reply->content_type = "text/plain; charset=utf-8";
}

/* ?seconds=N: digits only, 1 to @max.  Return N or 0 (reply set). */
static unsigned int parse_seconds(const char *arg, unsigned int max,
				  struct serve_reply *reply)
{
	unsigned long long v;
	char *end;

	if (!arg)
		return PROFILE_DEFAULT_SECONDS <= max ?
		       PROFILE_DEFAULT_SECONDS : max;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || arg[0] == '+' ||
	    arg[0] == ' ' || v == 0) {
		set_text(reply, 400, "bad seconds '%s': a whole number of "
			 "seconds from 1 to %u is wanted\n", arg, max);
		return 0;
	}
	if (v > max) {
		set_text(reply, 400, "bad seconds '%s': at most %u seconds "
			 "(profile-max-seconds of perfex-serve(1))\n", arg, max);
		return 0;
	}
	return (unsigned int)v;
}

/* Claim @key for this request.  Return false when a profile of it runs. */
static bool claim(struct profiler *pr, const char *key)
{
	bool ok = false;
	char **n;

	pthread_mutex_lock(&pr->lock);
	for (size_t i = 0; i < pr->nr_running; i++)
		if (!strcmp(pr->running[i], key))
			goto out;
	n = realloc(pr->running, (pr->nr_running + 1) * sizeof(*n));
	if (!n)
		goto out;
	pr->running = n;
	n[pr->nr_running] = strdup(key);
	if (n[pr->nr_running]) {
		pr->nr_running++;
		ok = true;
	}
out:
	pthread_mutex_unlock(&pr->lock);
	return ok;
}

static void release(struct profiler *pr, const char *key)
{
	pthread_mutex_lock(&pr->lock);
	for (size_t i = 0; i < pr->nr_running; i++) {
		if (strcmp(pr->running[i], key))
			continue;
		free(pr->running[i]);
		pr->running[i] = pr->running[--pr->nr_running];
		break;
	}
	pthread_mutex_unlock(&pr->lock);
}

static int on_record(struct perfctr_ring *ring,
		     const struct perf_event_header *hdr, void *ctx)
{
	struct run *run = ctx;
	int err;

	(void)ring;
	err = perfctr_perfdata_writer__write(run->writer, hdr, hdr->size);
	if (err && !run->write_err)
		run->write_err = err;
	return 0;
}

static int on_synth(const struct perf_event_header *hdr, void *ctx)
{
	return on_record(NULL, hdr, ctx);
}

/* cpu-clock at PROFILE_HZ with kernel and user call chains (frame
 * pointers), as `perfex record -F 99 -g`; the one event carries the
 * side-band records. */
static int open_sampler(struct run *run, const struct perfctr_target *target)
{
	PERFCTR_OPTS(perfctr_sampler_opts, sopts, .target = target,
		     .data_pages = 16);
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = PROFILE_HZ,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.sample_id_all = 1,
	};
	int err;

	/* Beside off-CPU samples: each says its event, and both kinds
	 * are timed by the off-CPU program's clock. */
	if (run->type != TYPE_CPU) {
		attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
	}

	/* 16 pages a CPU hold ~25 s of samples with deep stacks at 99 Hz:
	 * the ring is read each second (see profile()), so none is lost. */
	run->sampler = perfctr_sampler__new(&sopts);
	if (!run->sampler)
		return -errno;
	err = perfctr_sampler__add_attr(run->sampler, &attr, "cpu-clock");
	if (err < 0)
		return err;
	return perfctr_sampler__open(run->sampler);
}

static int start_writer(struct run *run)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, wopts);
	const uint64_t *ids = NULL;
	size_t nr;
	int err;

	run->fd = memfd_create("perfex-serve-profile", MFD_CLOEXEC);
	if (run->fd < 0)
		return -errno;
	run->writer = perfctr_perfdata_writer__open_fd(run->fd, &wopts);
	if (!run->writer)
		return -errno;
	nr = perfctr_sampler__ids(run->sampler, 0, &ids);
	if (nr)
		run->trailer_id = ids[0];
	err = perfctr_perfdata_writer__add_attr(run->writer,
			perfctr_sampler__attr(run->sampler, 0),
			perfctr_sampler__name(run->sampler, 0), ids, nr);
	if (err >= 0 && run->offcpu) {
		struct perf_event_attr attr;

		/* An id that no sampler fd has. */
		for (size_t i = 0; i < nr; i++)
			run->offcpu_id = ids[i] > run->offcpu_id ?
					 ids[i] : run->offcpu_id;
		run->offcpu_id++;
		perfctr_offcpu_attr(perfctr_sampler__attr(run->sampler, 0),
				    &attr);
		err = perfctr_perfdata_writer__add_attr(run->writer, &attr,
				PERFCTR_OFFCPU_EVENT, &run->offcpu_id, 1);
	}
	return err < 0 ? err : 0;
}

/* One off-CPU sum into the file, timed at the end. */
static int write_offcpu(const struct perfctr_offcpu_sample *s, void *ctx)
{
	uint64_t words[PERFCTR_OFFCPU_SAMPLE_WORDS];
	struct run *run = ctx;
	struct timespec ts;
	int size;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	size = perfctr_offcpu_encode(s, run->offcpu_id,
				     (uint64_t)ts.tv_sec * 1000000000u +
				     (uint64_t)ts.tv_nsec, words,
				     PERFCTR_OFFCPU_SAMPLE_WORDS);
	if (size > 0)
		on_record(NULL, (const struct perf_event_header *)words, run);
	return 0;
}

/* The processes and the kernel that ran before the profile started, so
 * that their samples resolve (the kernel reports only new ones). */
static void synth(struct run *run)
{
	PERFCTR_OPTS(perfctr_synth_opts, o,
		     .attr = perfctr_sampler__attr(run->sampler, 0),
		     .id = run->trailer_id);

	perfctr_synth_kernel(&o, on_synth, run, NULL);
	perfctr_synth_processes(&o, on_synth, run);
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sample for @seconds, or until the server stops.  Return 0, -ECANCELED
 * when stopped, or -errno. */
static int sample(struct profiler *pr, struct run *run, unsigned int seconds)
{
	struct perfctr_ring *const *rings;
	uint64_t end, t0;
	size_t nr;
	int err;

	run->start_ns = now_ns(CLOCK_REALTIME);
	t0 = now_ns(CLOCK_MONOTONIC);
	err = perfctr_sampler__enable(run->sampler);
	if (err)
		return err;
	if (run->offcpu)
		perfctr_offcpu__enable(run->offcpu);
	/* While sampling, so that the reply comes @seconds after the start
	 * and not later: these records carry time 0 and the reader takes
	 * them first. */
	end = t0 + seconds * 1000000000ull;
	synth(run);
	for (;;) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		uint64_t left_ms = now < end ? (end - now + 999999) / 1000000 : 0;
		int64_t r;

		if (atomic_load(&pr->stopping)) {
			err = -ECANCELED;
			break;
		}
		if (!left_ms)
			break;
		/* A wake-up a second at most: few enough to cost nothing,
		 * often enough to see a stop. */
		r = perfctr_sampler__poll(run->sampler,
					  left_ms > 1000 ? 1000 : (int)left_ms,
					  on_record, run);
		if (r < 0 && r != -EINTR) {
			err = (int)r;
			break;
		}
	}
	perfctr_sampler__disable(run->sampler);
	if (run->offcpu) {
		perfctr_offcpu__disable(run->offcpu);
		if (!err)
			err = perfctr_offcpu__read(run->offcpu, write_offcpu,
						   run);
	}
	run->duration_ns = now_ns(CLOCK_MONOTONIC) - t0;
	/* What is left under the wake-up mark. */
	rings = perfctr_sampler__rings(run->sampler);
	nr = perfctr_sampler__nr_rings(run->sampler);
	for (size_t i = 0; i < nr; i++)
		while (perfctr_ring__drain(rings[i], on_record, run) > 0)
			;
	return err;
}

/* The profiler's symbols, made anew when missing or too old; under
 * symbols_lock.  NULL (then the reader makes its own) on ENOMEM. */
static struct perfctr_symbols *symbols(struct profiler *pr)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (pr->symbols && now - pr->symbols_born > SYMBOLS_MAX_AGE_NS) {
		perfctr_symbols__delete(pr->symbols);
		pr->symbols = NULL;
	}
	if (!pr->symbols) {
		pr->symbols = perfctr_symbols__new(NULL);
		pr->symbols_born = now;
	}
	return pr->symbols;
}

/* The perf.data in run->fd as a gzip'd profile.proto. */
static int encode(struct profiler *pr, struct run *run, void **buf,
		  size_t *size)
{
	PERFCTR_OPTS(perfctr_reader_opts, ropts, .callchain = true);
	PERFCTR_OPTS(perfctr_pprof_opts, popts,
		     .time_nanos = (int64_t)run->start_ns,
		     .duration_nanos = (int64_t)run->duration_ns,
		     .period_type = "cpu", .period_unit = "nanoseconds",
		     .period = 1000000000 / PROFILE_HZ,
		     .wall = run->type == TYPE_WALL);
	struct perfctr_reader *rd;
	struct perfctr_pprof *pp;
	char path[64];
	int64_t n;
	int err;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", run->fd);
	pthread_mutex_lock(&pr->symbols_lock);
	ropts.symbols = symbols(pr);
	rd = perfctr_reader__open(path, &ropts);
	if (!rd) {
		err = -errno;
		goto out;
	}
	pp = perfctr_pprof__new(&popts);
	if (!pp) {
		err = -errno;
		perfctr_reader__close(rd);
		goto out;
	}
	n = perfctr_pprof__add_reader(pp, rd);
	/* off_cpu: after samples and cpu-clock (the file's events). */
	if (n >= 0 && run->type == TYPE_OFF_CPU)
		perfctr_pprof__set_default_sample_type(pp, 2);
	err = n < 0 ? (int)n : perfctr_pprof__encode(pp, buf, size);
	perfctr_pprof__delete(pp);
	perfctr_reader__close(rd);
out:
	pthread_mutex_unlock(&pr->symbols_lock);
	return err;
}

static void run_free(struct run *run)
{
	if (run->writer)
		perfctr_perfdata_writer__close(run->writer);
	if (run->fd >= 0)
		close(run->fd);
	perfctr_sampler__delete(run->sampler);
	perfctr_offcpu__delete(run->offcpu);
}

/* What a failed profile replies: the cause, and its cure when known. */
static void failed(struct serve_reply *reply, const char *what, int err)
{
	if (err == -ECANCELED) {
		set_text(reply, 503, "perfex serve is stopping: the profile "
			 "was cut short\n");
		return;
	}
	set_text(reply, 500, "cannot %s: %s%s\n", what, strerror(-err),
		 err == -EACCES || err == -EPERM ?
		 " (profiling every CPU needs root or CAP_PERFMON)" : "");
	serve_log("profile: cannot %s: %s", what, strerror(-err));
}

/* The off-CPU program for ?type=off-cpu and wall.  Return 0, or -1 with
 * the reply set. */
static int open_offcpu(struct run *run, const struct perfctr_target *target,
		       struct serve_reply *reply)
{
	int err;

	if (run->type == TYPE_CPU)
		return 0;
	run->offcpu = perfctr_offcpu__new(target, NULL);
	if (run->offcpu)
		return 0;
	err = errno;
	if (err == EOPNOTSUPP)
		set_text(reply, 501, "cannot profile off-CPU time: perfex was "
			 "built without BPF\n");
	else if (err == ENOENT)
		set_text(reply, 501, "cannot profile off-CPU time: no BTF for "
			 "this kernel (/sys/kernel/btf/vmlinux)\n");
	else
		failed(reply, "load the off-CPU program", -err);
	return -1;
}

static void profile(struct profiler *pr, const struct perfctr_target *target,
		    enum profile_type type, unsigned int seconds,
		    struct serve_reply *reply)
{
	struct run run = { .fd = -1, .type = type };
	void *buf = NULL;
	size_t size = 0;
	int err;

	if (open_offcpu(&run, target, reply))
		goto out;
	err = open_sampler(&run, target);
	if (err) {
		failed(reply, "open the sampling events", err);
		goto out;
	}
	err = start_writer(&run);
	if (err) {
		failed(reply, "keep the samples", err);
		goto out;
	}
	err = sample(pr, &run, seconds);
	if (!err)
		err = perfctr_perfdata_writer__close(run.writer);
	else
		perfctr_perfdata_writer__close(run.writer);
	run.writer = NULL;
	if (!err && run.write_err)
		err = run.write_err;
	if (err) {
		failed(reply, "take the profile", err);
		goto out;
	}
	err = encode(pr, &run, &buf, &size);
	if (err) {
		failed(reply, "encode the profile", err);
		goto out;
	}
	free(reply->body);
	reply->body = buf;
	reply->len = size;
	reply->status = 200;
	/* As Go serves it: a file to save, not to show. */
	reply->content_type = "application/octet-stream";
out:
	run_free(&run);
}

static enum serve_profile_result result_of(unsigned int status)
{
	return status == 200 ? SERVE_PROFILE_OK :
	       status == 409 ? SERVE_PROFILE_CONFLICT :
	       status == 400 || status == 404 ? SERVE_PROFILE_BAD_REQUEST :
	       SERVE_PROFILE_FAILED;
}

static void handle(struct profiler *pr, const struct serve_request *req,
		   struct serve_reply *reply)
{
	const char *cgroup = serve_request_arg(req, "cgroup");
	const char *type_arg = serve_request_arg(req, "type");
	enum profile_type type = TYPE_CPU;
	unsigned int max = serve_exporter_profile_max_seconds(pr->ex);
	unsigned int seconds = parse_seconds(serve_request_arg(req, "seconds"),
					     max, reply);
	struct perfctr_target *target;
	const char *key;

	if (!seconds)
		return;
	if (type_arg && !strcmp(type_arg, "off-cpu")) {
		type = TYPE_OFF_CPU;
	} else if (type_arg && !strcmp(type_arg, "wall")) {
		type = TYPE_WALL;
	} else if (type_arg && strcmp(type_arg, "cpu")) {
		set_text(reply, 400, "bad type '%s': cpu, off-cpu or wall is "
			 "wanted\n", type_arg);
		return;
	}
	if (!perfctr_pprof_available()) {
		set_text(reply, 501, "cannot make profiles: perfex was built "
			 "without protobuf-c\n");
		return;
	}
	if (cgroup && !*cgroup) {
		set_text(reply, 400, "bad cgroup '': a cgroup v2 name is "
			 "wanted (relative to the cgroup2 mount)\n");
		return;
	}
	target = cgroup ? perfctr_target__new_cgroup(cgroup, NULL) :
			  perfctr_target__new_cpus(NULL);
	if (!target) {
		int err = errno;

		if (cgroup && (err == ENOENT || err == ENOTDIR))
			set_text(reply, 404, "no cgroup '%s' under the cgroup2 "
				 "mount\n", cgroup);
		else if (cgroup && err == ENOMEDIUM)
			set_text(reply, 404, "no cgroup2 file system is "
				 "mounted\n");
		else if (err == EINVAL)
			set_text(reply, 400, "bad cgroup '%s'\n", cgroup ?
				 cgroup : "");
		else
			failed(reply, "make the target", -err);
		return;
	}
	/* The cgroup's full path: "a" and "/a" are one target. */
	key = cgroup ? perfctr_target__cgroup_path(target) : "";
	if (!claim(pr, key)) {
		if (cgroup)
			set_text(reply, 409, "a profile of cgroup '%s' is "
				 "running: one at a time per target; ask again "
				 "when it ends\n", cgroup);
		else
			set_text(reply, 409, "a profile of the whole machine "
				 "is running: one at a time per target; ask "
				 "again when it ends\n");
		perfctr_target__delete(target);
		return;
	}
	serve_exporter_count_profile(pr->ex, 1, SERVE_PROFILE_NR_RESULTS);
	profile(pr, target, type, seconds, reply);
	serve_exporter_count_profile(pr->ex, -1, SERVE_PROFILE_NR_RESULTS);
	release(pr, key);
	perfctr_target__delete(target);
}

static void profile_handler(const struct serve_request *req,
			    struct serve_reply *reply, void *arg)
{
	struct profiler *pr = arg;

	handle(pr, req, reply);
	serve_exporter_count_profile(pr->ex, 0, result_of(reply->status));
}

int serve_profile_init(struct serve_http *http, struct serve_exporter *ex,
		       void **state)
{
	struct profiler *pr = calloc(1, sizeof(*pr));
	int err;

	if (!pr)
		return -ENOMEM;
	pr->ex = ex;
	pthread_mutex_init(&pr->lock, NULL);
	pthread_mutex_init(&pr->symbols_lock, NULL);
	atomic_init(&pr->stopping, false);
	err = serve_http_handle(http, "/debug/pprof/profile", "a cpu-clock "
				"profile in pprof's format (?seconds=N, "
				"?cgroup=NAME)", profile_handler, pr);
	if (err < 0) {
		serve_profile_free(pr);
		return err;
	}
	*state = pr;
	return 0;
}

void serve_profile_stop(void *state)
{
	struct profiler *pr = state;

	if (pr)
		atomic_store(&pr->stopping, true);
}

void serve_profile_free(void *state)
{
	struct profiler *pr = state;

	if (!pr)
		return;
	for (size_t i = 0; i < pr->nr_running; i++)
		free(pr->running[i]);
	free(pr->running);
	perfctr_symbols__delete(pr->symbols);
	pthread_mutex_destroy(&pr->symbols_lock);
	pthread_mutex_destroy(&pr->lock);
	free(pr);
}
