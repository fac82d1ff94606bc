// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench/vperfctr-read: the cost of reading 1 and 4 counters of the
 * calling thread through the vperfctr API, against the raw system calls
 * measured in the same run (read(2) of one counter, one group read(2),
 * four separate reads), PAPI_read() when PAPI is there, and the getppid
 * floor (the cheapest system call); then start + stop: vperfctr_control()
 * twice against the raw ioctls it needs (RESET + ENABLE, DISABLE) and
 * PAPI_start + PAPI_stop.
 *
 * The counters are software events (this machine has no hardware PMU):
 * their pages cannot be read in user space, so vperfctr_read_fast() takes
 * its read(2) fallback here; that fallback is what is measured against
 * the raw group read.  Medians of 9 rounds, ns per operation.
 *
 * Built and run by bench/vperfctr-read, pinned to CPU 0.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfctr/perfctr.h"

#include <pthread.h>

#ifdef HAVE_PAPI
#include <papi.h>
#endif

#define ROUNDS 9
#define OPS 100000

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* The four software events, as perf_event attrs, as our event names and
 * as PAPI's (libpfm4's perf pseudo-PMU) names. */
static const uint64_t configs[4] = {
	PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES,
	PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_PAGE_FAULTS_MIN,
};
static const char *const names[4] = {
	"page-faults", "context-switches", "cpu-migrations", "minor-faults",
};
#ifdef HAVE_PAPI
static const char *const papi_names[4] = {
	"perf::PERF_COUNT_SW_PAGE_FAULTS", "perf::PERF_COUNT_SW_CONTEXT_SWITCHES",
	"perf::PERF_COUNT_SW_CPU_MIGRATIONS", "perf::PERF_COUNT_SW_PAGE_FAULTS_MIN",
};
#endif

static int open_sw(uint64_t config, int group_fd, uint64_t read_format)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = config;
	attr.disabled = group_fd < 0;
	attr.read_format = read_format;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, 0);
	if (fd < 0) {
		perror("vperfctr-read: perf_event_open");
		exit(1);
	}
	return fd;
}

enum op {
	OP_GETPPID,
	OP_RAW_READ1,		/* read() of one counter with times */
	OP_RAW_GROUP,		/* one group read() */
	OP_RAW_SEPARATE,	/* one read() per counter */
	OP_OURS_FAST,		/* vperfctr_read_fast */
	OP_OURS_READ,		/* vperfctr_read */
	OP_PAPI_READ,
	OP_RAW_STARTSTOP,	/* RESET+ENABLE, DISABLE of the leader */
	OP_OURS_STARTSTOP,	/* vperfctr_control start, stop */
	OP_PAPI_STARTSTOP,
};

struct ctx {
	int n;
	int single_fd;
	int group[4];
	int separate[4];
	struct vperfctr *v;
	struct vperfctr_control start, stop;
	int papi_set;
};

static double run(struct ctx *c, enum op op)
{
	uint64_t buf[16];
	struct perfctr_sum_ctrs sum;
	double t0, t1;
	int i, k;
#ifdef HAVE_PAPI
	long long pv[4];
#endif

	t0 = now_ns();
	for (i = 0; i < OPS; i++) {
		switch (op) {
		case OP_GETPPID:
			syscall(SYS_getppid);
			break;
		case OP_RAW_READ1:
			if (read(c->single_fd, buf, 24) != 24)
				exit(1);
			break;
		case OP_RAW_GROUP:
			if (read(c->group[0], buf, (size_t)(3 + c->n) * 8) <= 0)
				exit(1);
			break;
		case OP_RAW_SEPARATE:
			for (k = 0; k < c->n; k++)
				if (read(c->separate[k], buf, 24) != 24)
					exit(1);
			break;
		case OP_OURS_FAST:
			if (vperfctr_read_fast(c->v, &sum) < 0)
				exit(1);
			break;
		case OP_OURS_READ:
			if (vperfctr_read(c->v, &sum, NULL) < 0)
				exit(1);
			break;
		case OP_RAW_STARTSTOP:
			ioctl(c->group[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
			ioctl(c->group[0], PERF_EVENT_IOC_ENABLE, 0);
			ioctl(c->group[0], PERF_EVENT_IOC_DISABLE, 0);
			break;
		case OP_OURS_STARTSTOP:
			if (vperfctr_control(c->v, &c->start) < 0 ||
			    vperfctr_control(c->v, &c->stop) < 0)
				exit(1);
			break;
#ifdef HAVE_PAPI
		case OP_PAPI_READ:
			if (PAPI_read(c->papi_set, pv) != PAPI_OK)
				exit(1);
			break;
		case OP_PAPI_STARTSTOP:
			if (PAPI_start(c->papi_set) != PAPI_OK ||
			    PAPI_stop(c->papi_set, pv) != PAPI_OK)
				exit(1);
			break;
#else
		default:
			break;
#endif
		}
	}
	t1 = now_ns();
	return (t1 - t0) / OPS;
}

/* Round-robin: every operation once per round, so that the machine's
 * drift hits them all alike; medians of the rounds. */
static void measure_all(struct ctx *c, const enum op *ops, int nr, double *out)
{
	double v[16][ROUNDS];
	int r, k;

	for (k = 0; k < nr; k++)
		run(c, ops[k]);		/* warm-up */
	for (r = 0; r < ROUNDS; r++)
		for (k = 0; k < nr; k++)
			v[k][r] = run(c, ops[k]);
	for (k = 0; k < nr; k++)
		out[k] = median(v[k], ROUNDS);
}

#ifdef HAVE_PAPI
/* Why PAPI is left out of the comparison, or NULL. */
static const char *papi_why;
static char papi_why_buf[256];

static const char *papi_component_state(void)
{
	int i, n = PAPI_num_components();

	for (i = 0; i < n; i++) {
		const PAPI_component_info_t *ci = PAPI_get_component_info(i);

		if (ci && !strcmp(ci->name, "perf_event"))
			return ci->disabled ? ci->disabled_reason : "enabled";
	}
	return "absent";
}
#endif

static void setup(struct ctx *c, int n)
{
	int k;

	memset(c, 0, sizeof(*c));
	c->n = n;
	c->single_fd = open_sw(configs[0], -1,
			       PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING);
	ioctl(c->single_fd, PERF_EVENT_IOC_ENABLE, 0);
	for (k = 0; k < n; k++) {
		c->group[k] = open_sw(configs[k], k ? c->group[0] : -1,
				      PERF_FORMAT_GROUP |
				      PERF_FORMAT_TOTAL_TIME_ENABLED |
				      PERF_FORMAT_TOTAL_TIME_RUNNING);
		c->separate[k] = open_sw(configs[k], -1,
					 PERF_FORMAT_TOTAL_TIME_ENABLED |
					 PERF_FORMAT_TOTAL_TIME_RUNNING);
		ioctl(c->separate[k], PERF_EVENT_IOC_ENABLE, 0);
	}
	ioctl(c->group[0], PERF_EVENT_IOC_ENABLE, 0);

	c->v = vperfctr_open(0, 1);
	if (!c->v) {
		perror("vperfctr-read: vperfctr_open");
		exit(1);
	}
	memset(&c->start, 0, sizeof(c->start));
	c->start.sz = sizeof(c->start);
	c->start.cpu_control.nractrs = (unsigned int)n;
	for (k = 0; k < n; k++)
		c->start.event[k] = names[k];
	c->stop = c->start;
	c->stop.cpu_control.nractrs = 0;
	if (vperfctr_control(c->v, &c->start) < 0) {
		perror("vperfctr-read: vperfctr_control");
		exit(1);
	}
#ifdef HAVE_PAPI
	c->papi_set = PAPI_NULL;
	if (PAPI_create_eventset(&c->papi_set) != PAPI_OK)
		exit(1);
	for (k = 0; k < n && !papi_why; k++) {
		int err = PAPI_add_named_event(c->papi_set, papi_names[k]);

		/* PAPI's perf_event component needs libpfm4 to know the
		 * CPU's own PMU even for software events: a libpfm4 older
		 * than the CPU leaves it disabled.  Then the comparison is
		 * left out, saying why, and the rest is measured. */
		if (err != PAPI_OK)
			snprintf(papi_why_buf, sizeof(papi_why_buf),
				 "PAPI cannot add %s here (%s; its perf_event "
				 "component: %s)", papi_names[k],
				 PAPI_strerror(err), papi_component_state());
		if (err != PAPI_OK)
			papi_why = papi_why_buf;
	}
	if (papi_why) {
		PAPI_cleanup_eventset(c->papi_set);
		PAPI_destroy_eventset(&c->papi_set);
	} else if (PAPI_start(c->papi_set) != PAPI_OK) {
		exit(1);
	}
#endif
}

static void teardown(struct ctx *c)
{
	int k;

#ifdef HAVE_PAPI
	long long pv[4];

	if (!papi_why) {
		PAPI_stop(c->papi_set, pv);
		PAPI_cleanup_eventset(c->papi_set);
		PAPI_destroy_eventset(&c->papi_set);
	}
#endif
	vperfctr_unlink(c->v);
	vperfctr_close(c->v);
	close(c->single_fd);
	for (k = 0; k < c->n; k++) {
		close(c->separate[k]);
	}
	for (k = c->n - 1; k >= 0; k--)
		close(c->group[k]);
}

static void line(const char *what, double ns, double ref)
{
	printf("  %-44s %8.0f ns  %5.2f\n", what, ns, ns / ref);
}

/* Region markers: an empty begin/end pair against two raw group reads
 * of the same events (what a pair needs), in a thread of its own (the
 * markers give each thread its own vperfctr state). */
static void *regions_bench(void *arg)
{
	double pair[ROUNDS], raw[ROUNDS], t0;
	uint64_t buf[8];
	int fd[4], i, k, r;

	(void)arg;
	setenv("PERFCTR_EVENTS", "page-faults,context-switches", 1);
	setenv("PERFCTR_REGIONS_FILE", "/dev/null", 1);
	perfctr_region_begin("warm-up");
	perfctr_region_end("warm-up");
	for (k = 0; k < 2; k++)
		fd[k] = open_sw(configs[k], k ? fd[0] : -1,
				PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING);
	ioctl(fd[0], PERF_EVENT_IOC_ENABLE, 0);
	for (r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < OPS; i++) {
			if (read(fd[0], buf, 5 * 8) <= 0 || read(fd[0], buf, 5 * 8) <= 0)
				exit(1);
		}
		raw[r] = (now_ns() - t0) / OPS;
		t0 = now_ns();
		for (i = 0; i < OPS; i++) {
			perfctr_region_begin("empty");
			perfctr_region_end("empty");
		}
		pair[r] = (now_ns() - t0) / OPS;
	}
	printf("region markers, 2 software events (ratio to 2 raw group reads)\n");
	line("2 raw group read()s", median(raw, ROUNDS), median(raw, ROUNDS));
	line("perfctr_region_begin + _end, empty", median(pair, ROUNDS),
	     median(raw, ROUNDS));
	close(fd[1]);
	close(fd[0]);
	return NULL;
}

int main(void)
{
	static const enum op read_ops[] = {
		OP_GETPPID, OP_RAW_READ1, OP_RAW_SEPARATE, OP_RAW_GROUP,
		OP_OURS_FAST, OP_OURS_READ,
#ifdef HAVE_PAPI
		OP_PAPI_READ,
#endif
	};
	static const enum op ss_ops[] = {
		OP_RAW_STARTSTOP, OP_OURS_STARTSTOP,
#ifdef HAVE_PAPI
		OP_PAPI_STARTSTOP,
#endif
	};
	double r[16], ss[16];
	struct ctx c;
	int n, nr_read = sizeof(read_ops) / sizeof(read_ops[0]);
	int nr_ss = sizeof(ss_ops) / sizeof(ss_ops[0]);

#ifdef HAVE_PAPI
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		fprintf(stderr, "vperfctr-read: PAPI_library_init failed\n");
		return 1;
	}
#endif
	perfctr_set_print(NULL);
	for (n = 1; n <= 4; n += 3) {
		setup(&c, n);
#ifdef HAVE_PAPI
		if (papi_why) {		/* the PAPI ops are the last ones */
			nr_read = sizeof(read_ops) / sizeof(read_ops[0]) - 1;
			nr_ss = sizeof(ss_ops) / sizeof(ss_ops[0]) - 1;
		}
#endif
		measure_all(&c, read_ops, nr_read, r);
		printf("read of %d counter%s (ratio to the raw group read)\n", n,
		       n > 1 ? "s" : "");
		line("getppid (the system-call floor)", r[0], r[3]);
		line("raw read() of one counter", r[1], r[3]);
		line(n > 1 ? "raw read() of each counter" : "raw read() of each (one)",
		     r[2], r[3]);
		line("raw group read()", r[3], r[3]);
		line("vperfctr_read_fast (read() fallback here)", r[4], r[3]);
		line("vperfctr_read", r[5], r[3]);
#ifdef HAVE_PAPI
		if (papi_why) {
			printf("  PAPI_read: %s\n", papi_why);
		} else {
			long long pv[4];

			line("PAPI_read", r[6], r[3]);
			PAPI_stop(c.papi_set, pv);
		}
#else
		printf("  PAPI_read: PAPI not built in (libpapi-dev missing)\n");
#endif
		ioctl(c.group[0], PERF_EVENT_IOC_DISABLE, 0);
		vperfctr_control(c.v, &c.stop);
		measure_all(&c, ss_ops, nr_ss, ss);
		printf("start + stop of %d counter%s (ratio to the raw ioctls)\n", n,
		       n > 1 ? "s" : "");
		line("raw ioctls RESET+ENABLE, DISABLE", ss[0], ss[0]);
		line("vperfctr_control start, stop", ss[1], ss[0]);
#ifdef HAVE_PAPI
		if (papi_why) {
			printf("  PAPI_start, PAPI_stop: left out (see above)\n");
		} else {
			line("PAPI_start, PAPI_stop", ss[2], ss[0]);
			PAPI_start(c.papi_set);
		}
#endif
		teardown(&c);
	}
	{
		pthread_t th;

		if (pthread_create(&th, NULL, regions_bench, NULL) == 0)
			pthread_join(th, NULL);
	}
	return 0;
}
