// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The cost of opening a counter through the access broker (perfctrd)
 * against a direct perf_event_open(2), in one run: one event, a group of
 * 8, and 8 independent events (each its own group, as perfex -e a,b,c
 * makes them) in one request; then read(2) of a brokered and of a direct
 * counter, which must cost the same (the descriptor is the caller's
 * own).  Run as root by
 * bench/broker-open, which starts a broker on a socket of its own.
 * Medians of rounds; opens only are timed (closes are the same either way).
 * With $PERFCTRD_PID, also the broker's own CPU time per open (from its
 * schedstat), which a loaded machine inflates far less than the round
 * trip's wall time.  The event is task-clock, or with a tracepoint id as
 * the argument that tracepoint (with one descriptor of it held for the
 * run: closing a tracepoint's last descriptor costs tens of
 * milliseconds here, docs/kernel-notes.md 5).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sys/broker.h"
#include "sys/sys.h"

#define ROUNDS 15
#define PER_ROUND 200
#define READS 100000

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

/* The tracepoint's id when the run opens one, else 0: task-clock. */
static uint64_t tp_id;

/*
 * The event every open of the run opens: task-clock in user mode, the
 * cheapest open there is (so the hardest ratio), or a tracepoint in
 * kernel mode, which a user at perf_event_paranoid 2 cannot open alone
 * (most tracepoints fire in kernel mode), the broker's everyday request.
 */
static void the_event(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	if (tp_id) {
		attr->type = PERF_TYPE_TRACEPOINT;
		attr->config = tp_id;
		return;
	}
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_TASK_CLOCK;
	attr->exclude_kernel = 1;
}

static int open_one(bool broker, int group_fd)
{
	struct perf_event_attr attr;
	char why[256];

	the_event(&attr);
	if (broker)
		return pc_broker_open(&attr, 0, -1, group_fd, 0, why,
				      sizeof(why));
	return sys_perf_event_open(&attr, 0, -1, group_fd, PC_SYS_NO_BROKER);
}

/*
 * A group of @size through the broker in one request, as the library
 * opens a group that goes to the broker; 0, or -EPROTONOSUPPORT from a
 * broker that predates batches (then member by member, as it would).
 */
static int open_group(int size, int *fds)
{
	struct perf_event_attr attrs[8];
	char why[256];
	int k, ret;

	for (k = 0; k < size; k++)
		the_event(&attrs[k]);
	ret = pc_broker_open_group(attrs, (size_t)size, 0, -1, -1, 0, fds, why,
				   sizeof(why));
	if (ret && ret != -EPROTONOSUPPORT) {
		fprintf(stderr, "broker-open: open of a group: %s: %s\n",
			strerror(-ret), why);
		exit(1);
	}
	return ret;
}

/*
 * @size independent events (each its own group, as -e a,b,c makes them)
 * through the broker in one request, as the library opens them once the
 * kernel refuses the first; 0, or -EPROTONOSUPPORT as open_group().
 */
static int open_many(int size, int *fds)
{
	struct perf_event_attr attrs[8];
	char why[256];
	int k, ret;

	for (k = 0; k < size; k++)
		the_event(&attrs[k]);
	ret = pc_broker_open_many(attrs, (size_t)size, 0, -1, 0, fds, why,
				  sizeof(why));
	if (ret && ret != -EPROTONOSUPPORT) {
		fprintf(stderr, "broker-open: open of independent events: "
			"%s: %s\n", strerror(-ret), why);
		exit(1);
	}
	return ret;
}

enum how {
	ONE_EACH,	/* a group, one request (or open) per member */
	BATCH,		/* a group through the broker in one request */
	SINGLES,	/* independent events, one request (or open) each */
	SINGLES_BATCH,	/* independent events through the broker at once */
};

/* ns per open of @size events (1: a single event), opened @how. */
static double bench_open(bool broker, int size, enum how how)
{
	bool independent = how == SINGLES || how == SINGLES_BATCH;
	double rounds[ROUNDS];
	int fds[8], r, i, k;

	for (r = 0; r < ROUNDS; r++) {
		double t = 0;

		for (i = 0; i < PER_ROUND / size; i++) {
			double t0 = now_ns();

			if ((how == BATCH && open_group(size, fds) == 0) ||
			    (how == SINGLES_BATCH && open_many(size, fds) == 0))
				k = size;
			else
				k = 0;
			for (; k < size; k++) {
				fds[k] = open_one(broker, k && !independent ?
						  fds[0] : -1);
				if (fds[k] < 0) {
					fprintf(stderr, "broker-open: open: %s\n",
						strerror(-fds[k]));
					exit(1);
				}
			}
			t += now_ns() - t0;
			for (k = size; k-- > 0;)
				close(fds[k]);
		}
		rounds[r] = t / (PER_ROUND / size);
	}
	return median(rounds, ROUNDS);
}

/* ns the process @pid has run on a CPU, or -1. */
static double cpu_ns(const char *pid)
{
	char path[64];
	double ns = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/schedstat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lf", &ns) != 1)
		ns = -1;
	fclose(f);
	return ns;
}

static double bench_read(bool broker)
{
	double rounds[ROUNDS];
	uint64_t v;
	int fd = open_one(broker, -1), r, i;

	for (r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();

		for (i = 0; i < READS / ROUNDS; i++)
			if (read(fd, &v, sizeof(v)) != sizeof(v))
				exit(1);
		rounds[r] = (now_ns() - t0) / (READS / ROUNDS);
	}
	close(fd);
	return median(rounds, ROUNDS);
}

/*
 * A round trip of a small message between this process and a child that
 * echoes it, on a SOCK_SEQPACKET socket pair as the broker's, both on one
 * CPU: what any broker costs before it does anything, the floor of a
 * brokered open.
 */
static double bench_round_trip(void)
{
	double rounds[ROUNDS];
	char buf[64] = "";
	int sv[2], r, i;
	pid_t child;

	cpu_set_t was, here;

	/* Both on this CPU: the cheapest round trip there is (across
	 * CPUs a wakeup of an idle CPU comes on top). */
	if (sched_getaffinity(0, sizeof(was), &was))
		return -1;
	CPU_ZERO(&here);
	CPU_SET(sched_getcpu(), &here);
	sched_setaffinity(0, sizeof(here), &here);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return -1;
	child = fork();
	if (child == 0) {
		close(sv[0]);
		while (recv(sv[1], buf, sizeof(buf), 0) > 0)
			if (send(sv[1], buf, 16, 0) != 16)
				break;
		_exit(0);
	}
	close(sv[1]);
	for (r = 0; r < ROUNDS + 1; r++) {
		double t0 = now_ns();

		for (i = 0; i < PER_ROUND; i++)
			if (send(sv[0], buf, 16, 0) != 16 ||
			    recv(sv[0], buf, sizeof(buf), 0) != 16)
				exit(1);
		/* The first round warms both sides up. */
		if (r)
			rounds[r - 1] = (now_ns() - t0) / PER_ROUND;
	}
	close(sv[0]);
	waitpid(child, NULL, 0);
	sched_setaffinity(0, sizeof(was), &was);
	return median(rounds, ROUNDS);
}

int main(int argc, char **argv)
{
	const char *broker_pid = getenv("PERFCTRD_PID");
	double d1, b1, d8, b8, s8, di8, bi8, dr, br, rt;
	double cpu0 = -1, cpu1 = -1, cpu2, cpu3;
	double own0, own1, own2, own3, dself0, dself1;

	const char *what = "task-clock";
	int held = -1;

	if (argc > 1) {
		struct perf_event_attr attr;

		tp_id = strtoull(argv[1], NULL, 0);
		what = argc > 2 ? argv[2] : "tracepoint";
		the_event(&attr);
		held = sys_perf_event_open(&attr, 0, -1, -1, PC_SYS_NO_BROKER);
		if (held < 0) {
			fprintf(stderr, "broker-open: tracepoint %s: %s\n",
				argv[1], strerror(-held));
			return 1;
		}
	}
	if (!pc_broker_enabled()) {
		fprintf(stderr, "broker-open: no broker at %s\n",
			pc_broker_socket());
		return 1;
	}
	/* Warm both paths (first opens fault in code and the broker's
	 * connection). */
	bench_open(true, 1, ONE_EACH);
	bench_open(false, 1, ONE_EACH);
	dself0 = cpu_ns("self");
	d1 = bench_open(false, 1, ONE_EACH);
	dself1 = cpu_ns("self");
	if (broker_pid)
		cpu0 = cpu_ns(broker_pid);
	own0 = cpu_ns("self");
	b1 = bench_open(true, 1, ONE_EACH);
	own1 = cpu_ns("self");
	if (broker_pid)
		cpu1 = cpu_ns(broker_pid);
	d8 = bench_open(false, 8, ONE_EACH);
	cpu2 = broker_pid ? cpu_ns(broker_pid) : -1;
	own2 = cpu_ns("self");
	b8 = bench_open(true, 8, BATCH);
	own3 = cpu_ns("self");
	cpu3 = broker_pid ? cpu_ns(broker_pid) : -1;
	s8 = bench_open(true, 8, ONE_EACH);
	di8 = bench_open(false, 8, SINGLES);
	bi8 = bench_open(true, 8, SINGLES_BATCH);
	dr = bench_read(false);
	br = bench_read(true);
	rt = bench_round_trip();
	printf("== %s\n", what);
	printf("open of one event:            direct %8.0f ns, broker %8.0f ns, "
	       "ratio %.2f (target <= 3)\n", d1, b1, b1 / d1);
	printf("open of a group of 8:         direct %8.0f ns, broker %8.0f ns, "
	       "ratio %.2f (target <= 3)\n", d8, b8, b8 / d8);
	printf("  the 8 one request each:     direct %8.0f ns, broker %8.0f ns, "
	       "ratio %.2f\n", d8, s8, s8 / d8);
	printf("8 independent events, one request: direct %8.0f ns, broker "
	       "%8.0f ns, ratio %.2f (target <= 3)\n", di8, bi8, bi8 / di8);
	printf("read(2) of the counter:       direct %8.0f ns, broker %8.0f ns, "
	       "ratio %.2f (same descriptor kind: 1)\n", dr, br, br / dr);
	printf("bare round trip between two processes: %8.0f ns = %.2f direct "
	       "opens (the floor of any broker)\n", rt, rt / d1);
	/* CPU time is what a loaded machine inflates least; the direct
	 * figure includes the closes, as the others do. */
	printf("caller's CPU time per open: direct %8.0f ns, broker %8.0f ns, "
	       "per group of 8 through the broker %8.0f ns\n",
	       (dself1 - dself0) / (ROUNDS * PER_ROUND),
	       (own1 - own0) / (ROUNDS * PER_ROUND),
	       (own3 - own2) / (ROUNDS * PER_ROUND / 8));
	if (cpu0 >= 0 && cpu1 >= cpu0)
		printf("broker's own CPU time per open: %8.0f ns (%.2f direct "
		       "opens)\n", (cpu1 - cpu0) / (ROUNDS * PER_ROUND),
		       (cpu1 - cpu0) / (ROUNDS * PER_ROUND) / d1);
	if (cpu2 >= 0 && cpu3 >= cpu2)
		printf("broker's own CPU time per group of 8: %8.0f ns (%.2f "
		       "direct groups)\n", (cpu3 - cpu2) / (ROUNDS * PER_ROUND / 8),
		       (cpu3 - cpu2) / (ROUNDS * PER_ROUND / 8) / d8);
	if (held >= 0)
		close(held);
	return 0;
}
