// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * pcwork — workloads whose events are known exactly, for tests, the demo
 * and benchmarks.  Commands run in order, so they compose:
 *
 *   pcwork getppid N          N x syscall(SYS_getppid)
 *   pcwork getpid N           N x syscall(SYS_getpid)
 *   pcwork counted FILE N     N x getppid; FILE (mapped shared) holds two
 *                             u64: the calls done so far, then the pid --
 *                             progress a test can read
 *   pcwork threads T N        T threads, each N x getppid (main thread: none)
 *   pcwork fork K N           K children, each N x getppid, reaped
 *   pcwork exec ARGS...       exec pcwork ARGS... (rest of the line)
 *   pcwork tree K N           K children at once (released together), child
 *                             c making N*(c+1) getppid; when c % 3 == 1 it
 *                             also forks a grandchild making N*(c+1)+1;
 *                             when c % 3 == 2 it execs `pcwork getppid
 *                             N*(c+1)+2` instead; the forked ones _exit
 *   pcwork spin MS            CPU-bound loop for MS milliseconds
 *   pcwork clockspin MS       clock_gettime(2) in a tight loop for MS
 *                             milliseconds (in the vDSO where the clock
 *                             source allows)
 *   pcwork loop N             N iterations of a fixed arithmetic loop
 *   pcwork faults N           touch N fresh anonymous pages
 *   pcwork sleeps N           N x nanosleep(1 us)
 *   pcwork write N            N writes to the variable `pcwork_target`
 *   pcwork addr               print &pcwork_target (for mem: breakpoints)
 *   pcwork sleep MS           sleep MS milliseconds
 *   pcwork cpu C              run on CPU C only from here on (the move is
 *                             done when the call returns)
 *   pcwork wait               block until a line arrives on stdin
 *   pcwork ready FILE         create FILE (a "started" flag for tests)
 *   pcwork pid                print the pid
 *   pcwork exit CODE          exit with CODE now
 *   pcwork kill SIG           kill itself with SIG
 *   pcwork insnloop N         N iterations of pcwork_insn_loop: on aarch64 4
 *                             instructions each, in assembly, so the
 *                             instruction count is exact (the PMU lane);
 *                             elsewhere the arithmetic loop of `loop`
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t pcwork_target;

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < 0) {
		fprintf(stderr, "pcwork: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void do_getppid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static void *thread_main(void *arg)
{
	do_getppid((long)arg);
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static uint64_t spin_loop(uint64_t n)
{
	volatile uint64_t acc = 1;

	for (uint64_t i = 0; i < n; i++)
		acc = acc * 2862933555777941757ULL + 3037000493ULL;
	return acc;
}

#if defined(__aarch64__)
/* A global symbol, so that profiles name it. */
void pcwork_insn_loop(unsigned long n);
__asm__(".text\n"
	".globl pcwork_insn_loop\n"
	".type pcwork_insn_loop, %function\n"
	".p2align 4\n"
	"pcwork_insn_loop:\n"
	"1:	add x1, x1, #1\n"
	"	nop\n"
	"	subs x0, x0, #1\n"
	"	b.ne 1b\n"
	"	ret\n"
	".size pcwork_insn_loop, .-pcwork_insn_loop\n");
#else
__attribute__((noinline)) void pcwork_insn_loop(unsigned long n);
void pcwork_insn_loop(unsigned long n)
{
	spin_loop(n);
}
#endif

static void need(int argc, int i, int n, const char *cmd)
{
	if (i + n >= argc) {
		fprintf(stderr, "pcwork: '%s' needs %d argument(s)\n", cmd, n);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *cmd = argv[i];

		if (!strcmp(cmd, "getppid")) {
			need(argc, i, 1, cmd);
			do_getppid(num(argv[++i]));
		} else if (!strcmp(cmd, "counted")) {
			need(argc, i, 2, cmd);
			int fd = open(argv[i + 1], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
			volatile uint64_t *shared;
			long n = num(argv[i + 2]);

			i += 2;
			if (fd < 0 || ftruncate(fd, 16) < 0) {
				perror("pcwork: counted");
				return 2;
			}
			shared = mmap(NULL, 16, PROT_READ | PROT_WRITE, MAP_SHARED,
				      fd, 0);
			close(fd);
			if (shared == MAP_FAILED) {
				perror("pcwork: counted");
				return 2;
			}
			shared[1] = (uint64_t)getpid();
			/* After the call: the count never runs ahead of the
			 * samples the kernel took. */
			for (long k = 0; k < n; k++) {
				syscall(SYS_getppid);
				__atomic_store_n(&shared[0], (uint64_t)k + 1,
						 __ATOMIC_RELEASE);
			}
		} else if (!strcmp(cmd, "getpid")) {
			need(argc, i, 1, cmd);
			for (long k = num(argv[++i]); k > 0; k--)
				syscall(SYS_getpid);
		} else if (!strcmp(cmd, "threads")) {
			need(argc, i, 2, cmd);
			long t = num(argv[i + 1]), n = num(argv[i + 2]);
			pthread_t tids[256];

			i += 2;
			if (t > 256)
				t = 256;
			for (long k = 0; k < t; k++)
				pthread_create(&tids[k], NULL, thread_main, (void *)n);
			for (long k = 0; k < t; k++)
				pthread_join(tids[k], NULL);
		} else if (!strcmp(cmd, "fork")) {
			need(argc, i, 2, cmd);
			long k = num(argv[i + 1]), n = num(argv[i + 2]);

			i += 2;
			for (long c = 0; c < k; c++) {
				pid_t pid = fork();

				if (pid == 0) {
					do_getppid(n);
					_exit(0);
				}
			}
			while (wait(NULL) > 0)
				;
		} else if (!strcmp(cmd, "tree")) {
			need(argc, i, 2, cmd);
			long k = num(argv[i + 1]), n = num(argv[i + 2]);
			int go[2];

			i += 2;
			if (pipe(go))
				return 1;
			for (long c = 0; c < k; c++) {
				long mine = n * (c + 1);
				char calls[32], self[] = "/proc/self/exe";
				char *args[] = { self, (char *)"getppid", calls, NULL };
				pid_t pid = fork();
				char b;

				if (pid)
					continue;
				close(go[1]);
				/* Wait for every sibling: they run at once. */
				if (read(go[0], &b, 1) < 0)
					_exit(1);
				if (c % 3 == 2) {
					snprintf(calls, sizeof(calls), "%ld",
						 mine + 2);
					execv(self, args);
					_exit(127);
				}
				if (c % 3 == 1 && fork() == 0) {
					do_getppid(mine + 1);
					_exit(0);
				}
				do_getppid(mine);
				while (wait(NULL) > 0)
					;
				_exit(0);
			}
			close(go[0]);
			close(go[1]);
			while (wait(NULL) > 0)
				;
		} else if (!strcmp(cmd, "exec")) {
			argv[i] = argv[0];
			execv("/proc/self/exe", &argv[i]);
			perror("pcwork: exec");
			return 127;
		} else if (!strcmp(cmd, "spin")) {
			need(argc, i, 1, cmd);
			double end = now_ms() + num(argv[++i]);

			while (now_ms() < end)
				spin_loop(10000);
		} else if (!strcmp(cmd, "clockspin")) {
			need(argc, i, 1, cmd);
			double end = now_ms() + num(argv[++i]);

			while (now_ms() < end)
				;
		} else if (!strcmp(cmd, "loop")) {
			need(argc, i, 1, cmd);
			spin_loop((uint64_t)num(argv[++i]));
		} else if (!strcmp(cmd, "faults")) {
			need(argc, i, 1, cmd);
			long n = num(argv[++i]);
			long page = sysconf(_SC_PAGESIZE);
			char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED) {
				perror("pcwork: mmap");
				return 1;
			}
			madvise(p, n * page, MADV_NOHUGEPAGE);
			for (long k = 0; k < n; k++)
				p[k * page] = 1;
			munmap(p, n * page);
		} else if (!strcmp(cmd, "sleeps")) {
			need(argc, i, 1, cmd);
			struct timespec ts = { 0, 1000 };

			for (long k = num(argv[++i]); k > 0; k--)
				nanosleep(&ts, NULL);
		} else if (!strcmp(cmd, "write")) {
			need(argc, i, 1, cmd);
			for (long k = num(argv[++i]); k > 0; k--)
				pcwork_target = (uint64_t)k;
		} else if (!strcmp(cmd, "addr")) {
			printf("%p\n", (void *)&pcwork_target);
			fflush(stdout);
		} else if (!strcmp(cmd, "sleep")) {
			need(argc, i, 1, cmd);
			usleep((useconds_t)num(argv[++i]) * 1000);
		} else if (!strcmp(cmd, "cpu")) {
			need(argc, i, 1, cmd);
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET((int)num(argv[++i]), &set);
			if (sched_setaffinity(0, sizeof(set), &set)) {
				perror("pcwork: cpu");
				return 2;
			}
		} else if (!strcmp(cmd, "wait")) {
			char line[64];

			if (!fgets(line, sizeof(line), stdin))
				return 3;
		} else if (!strcmp(cmd, "ready")) {
			need(argc, i, 1, cmd);
			int fd = open(argv[++i], O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

			if (fd >= 0)
				close(fd);
		} else if (!strcmp(cmd, "pid")) {
			printf("%d\n", (int)getpid());
			fflush(stdout);
		} else if (!strcmp(cmd, "exit")) {
			need(argc, i, 1, cmd);
			exit((int)num(argv[++i]));
		} else if (!strcmp(cmd, "kill")) {
			need(argc, i, 1, cmd);
			kill(getpid(), (int)num(argv[++i]));
			pause();
		} else if (!strcmp(cmd, "insnloop")) {
			need(argc, i, 1, cmd);
			pcwork_insn_loop((unsigned long)num(argv[++i]));
		} else {
			fprintf(stderr, "pcwork: unknown command '%s'\n", cmd);
			return 2;
		}
	}
	return 0;
}
