/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The cost of counting cgroups to the tasks that switch between them: a
 * byte ping-ponged over two pipes between a process in cgroup A and one
 * in cgroup B, both pinned to CPU 0, so that every round trip is two
 * switches between cgroups.  Prints the mean time of a round trip.
 *
 *   cgroup-pingpong ROUNDS MNT A B [MODE NCG PREFIX]
 *
 * MODE bare: nothing counted (also the workload that perf stat wraps);
 * bpf / events: NCG sessions of four events each, one on each cgroup
 * PREFIX000..PREFIX(NCG-1) (A and B among them), through one
 * perfctr_bpf_counters or through the kernel's cgroup events, open and
 * counting while the ping-pong runs, read once after it.  The count of
 * write(2) in A is checked against the truth: one a round trip, and the
 * byte that says A's process is ready (written from inside A).
 *
 * With PINGPONG_BPF_STATS=1 in the environment, the kernel keeps the run
 * time of BPF programs during the ping-pong (BPF_ENABLE_STATS, which ends
 * with this process), and the mean run of the programs this process holds
 * goes to standard error: in bpf mode, the counting program's own cost a
 * context switch, which the machine's load blurs less than the round
 * trips do.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <perfctr/perfctr.h>

#define EVENTS "cpu-clock,page-faults,syscalls:sys_enter_read," \
	       "syscalls:sys_enter_write"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The run time and runs of the BPF programs among this process's fds. */
static void prog_stats(unsigned long long *ns, unsigned long long *runs)
{
	DIR *d = opendir("/proc/self/fdinfo");
	struct dirent *e;

	*ns = *runs = 0;
	while (d && (e = readdir(d))) {
		unsigned long long t = 0, n = 0;
		char path[300], line[256];
		bool prog = false;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			prog |= !strncmp(line, "prog_type:", 10);
			sscanf(line, "run_time_ns: %llu", &t);
			sscanf(line, "run_cnt: %llu", &n);
		}
		fclose(f);
		if (prog) {
			*ns += t;
			*runs += n;
		}
	}
	if (d)
		closedir(d);
}

static int enable_bpf_stats(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	return (int)syscall(__NR_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr));
}

static void enter(const char *mnt, const char *cg)
{
	char path[4096];
	cpu_set_t set;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", mnt, cg);
	f = fopen(path, "w");
	if (!f || fprintf(f, "0\n") < 0 || fclose(f)) {
		perror(path);
		_exit(2);
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		_exit(2);
	}
}

/* One side: @first writes first.  Waits for the go byte on @go. */
static pid_t side(const char *mnt, const char *cg, long rounds, int in,
		  int out, bool first, int ready, int go)
{
	pid_t pid = fork();
	char c = 'x';

	if (pid)
		return pid;
	enter(mnt, cg);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(3);
	for (long i = 0; i < rounds; i++) {
		if (first && write(out, &c, 1) != 1)
			_exit(4);
		if (read(in, &c, 1) != 1)
			_exit(5);
		if (!first && write(out, &c, 1) != 1)
			_exit(4);
	}
	_exit(0);
}

static double pingpong(const char *mnt, const char *a, const char *b,
		       long rounds)
{
	int ab[2], ba[2], ready[2], go[2], status;
	pid_t pa, pb;
	double t0, t1;
	char c;

	if (pipe(ab) || pipe(ba) || pipe(ready) || pipe(go))
		return -1;
	pa = side(mnt, a, rounds, ba[0], ab[1], true, ready[1], go[0]);
	pb = side(mnt, b, rounds, ab[0], ba[1], false, ready[1], go[0]);
	if (read(ready[0], &c, 1) != 1 || read(ready[0], &c, 1) != 1)
		return -1;
	t0 = now();
	if (write(go[1], "gg", 2) != 2)
		return -1;
	waitpid(pa, &status, 0);
	waitpid(pb, &status, 0);
	t1 = now();
	return (t1 - t0) / rounds;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 5 ? argv[5] : "bare";
	struct perfctr_bpf_counters *bc = NULL;
	struct perfctr_session **s = NULL;
	struct perfctr_target **t = NULL;
	const char *stats = getenv("PINGPONG_BPF_STATS");
	unsigned long long ns0 = 0, runs0 = 0, ns1, runs1;
	long rounds, ncg = 0;
	int stats_fd = -1;
	double rt;

	if (argc < 5) {
		fprintf(stderr, "usage: %s ROUNDS MNT A B [MODE NCG PREFIX]\n",
			argv[0]);
		return 2;
	}
	rounds = atol(argv[1]);
	if (strcmp(mode, "bare")) {
		bool bpf = !strcmp(mode, "bpf");

		ncg = argc > 7 ? atol(argv[6]) : 0;
		if (ncg <= 0)
			return 2;
		if (bpf) {
			bc = perfctr_bpf_counters__new(NULL);
			if (!bc || perfctr_bpf_counters__error(bc)) {
				fprintf(stderr, "no BPF counters: %s\n",
					strerror(bc ? -perfctr_bpf_counters__error(bc)
						 : errno));
				return 1;
			}
		}
		s = calloc(ncg, sizeof(*s));
		t = calloc(ncg, sizeof(*t));
		for (long i = 0; i < ncg; i++) {
			PERFCTR_OPTS(perfctr_session_opts, so,
				     .flags = PERFCTR_SESSION_ENABLE_ON_ATTACH);
			PERFCTR_OPTS(perfctr_cgroup_opts, co, .bpf = bc);
			char name[256];

			snprintf(name, sizeof(name), "%s%03ld", argv[7], i);
			s[i] = perfctr_session__new(&so);
			t[i] = perfctr_target__new_cgroup_opts(name, NULL, &co);
			if (!s[i] || !t[i] ||
			    perfctr_session__add_events(s[i], EVENTS, NULL) != 4 ||
			    perfctr_session__attach(s[i], t[i])) {
				fprintf(stderr, "cannot count cgroup %s: %s\n",
					name, strerror(errno));
				return 1;
			}
			if (bpf && !perfctr_session__counts_by_bpf(s[i])) {
				fprintf(stderr, "%s: not through BPF\n", name);
				return 1;
			}
		}
	}
	if (stats && !strcmp(stats, "1")) {
		stats_fd = enable_bpf_stats();
		if (stats_fd < 0)
			perror("BPF_ENABLE_STATS");
		prog_stats(&ns0, &runs0);
	}
	rt = pingpong(argv[2], argv[3], argv[4], rounds);
	if (rt < 0) {
		perror("ping-pong");
		return 1;
	}
	printf("%.3f\n", rt * 1e6);
	if (stats_fd >= 0) {
		prog_stats(&ns1, &runs1);
		if (runs1 > runs0)
			fprintf(stderr, "BPF program: %.1f ns a run, %llu runs\n",
				(double)(ns1 - ns0) / (double)(runs1 - runs0),
				runs1 - runs0);
		close(stats_fd);
	}
	for (long i = 0; i < ncg; i++) {
		char name[256];
		struct perfctr_count c;

		snprintf(name, sizeof(name), "%s%03ld", argv[7], i);
		perfctr_session__read(s[i]);
		perfctr_session__count(s[i], 3, &c);
		if (!strcmp(name, argv[3]) && c.value != (uint64_t)rounds + 1)
			fprintf(stderr, "%s: %llu writes counted, %ld made\n",
				name, (unsigned long long)c.value, rounds + 1);
		perfctr_session__delete(s[i]);
		perfctr_target__delete(t[i]);
	}
	perfctr_bpf_counters__delete(bc);
	free(s);
	free(t);
	return 0;
}
