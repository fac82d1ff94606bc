// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * offwork — blocking whose off-CPU time is known, each in a function of
 * its own (frame pointers on, so that stacks show them), for the off-CPU
 * tests and benchmark:
 *
 *   offwork sleeps N MS   sleep_loop: N x nanosleep(MS ms)
 *   offwork pipe MS       pipe_wait: a read that waits MS ms for a
 *                         child to write (the child sleeps in
 *                         pipe_child)
 *   offwork mutex MS      mutex_wait: a mutex that another thread holds
 *                         MS ms from the moment this one asks for it (the
 *                         holder sleeps in mutex_holder)
 *   offwork all           sleeps 100 10, pipe 500, mutex 200
 *
 * Commands run in order.  Each function says on stderr how long its
 * blocking calls took ("offwork: sleep_loop 1.0213"), CLOCK_MONOTONIC
 * around them: the truth an off-CPU profile is held to.
 *
 * Each blocking call is made in a helper of its own (block_in_*): a
 * frame-pointer unwind that starts inside a C library function without
 * a frame of its own skips that function's caller, so the helper is the
 * frame lost and the named function stays in the stack.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < 0) {
		fprintf(stderr, "offwork: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const char *function, double seconds)
{
	dprintf(2, "offwork: %s %.6f\n", function, seconds);
}

__attribute__((noinline)) static void block_in_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

__attribute__((noinline)) static void sleep_loop(long n, long ms)
{
	double spent = 0;

	for (long i = 0; i < n; i++) {
		double t = now();

		block_in_sleep(ms);
		spent += now() - t;
	}
	say("sleep_loop", spent);
}

__attribute__((noinline)) static void pipe_child(int fd, long ms)
{
	double t = now();

	block_in_sleep(ms);
	say("pipe_child", now() - t);
	if (write(fd, "x", 1) != 1)
		_exit(1);
	_exit(0);
}

__attribute__((noinline)) static ssize_t block_in_read(int fd, char *c)
{
	return read(fd, c, 1);
}

__attribute__((noinline)) static void pipe_wait(long ms)
{
	int fds[2];
	pid_t pid;
	double t;
	char c;

	if (pipe(fds)) {
		perror("offwork: pipe");
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		perror("offwork: fork");
		exit(1);
	}
	if (pid == 0) {
		close(fds[0]);
		pipe_child(fds[1], ms);
	}
	close(fds[1]);
	t = now();
	if (block_in_read(fds[0], &c) != 1)
		fprintf(stderr, "offwork: the child wrote nothing\n");
	say("pipe_wait", now() - t);
	close(fds[0]);
	waitpid(pid, NULL, 0);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t held;

__attribute__((noinline)) static void *mutex_holder(void *arg)
{
	double t;

	pthread_mutex_lock(&lock);
	sem_post(&held);
	t = now();
	block_in_sleep((long)arg);
	say("mutex_holder", now() - t);
	pthread_mutex_unlock(&lock);
	return NULL;
}

__attribute__((noinline)) static void block_in_lock(void)
{
	pthread_mutex_lock(&lock);
}

__attribute__((noinline)) static void mutex_wait(long ms)
{
	pthread_t t;
	double t0;

	sem_init(&held, 0, 0);
	if (pthread_create(&t, NULL, mutex_holder, (void *)ms)) {
		fprintf(stderr, "offwork: cannot start a thread\n");
		exit(1);
	}
	while (sem_wait(&held) && errno == EINTR)
		;
	t0 = now();
	block_in_lock();
	say("mutex_wait", now() - t0);
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	int i = 1;

	while (i < argc) {
		const char *cmd = argv[i++];

		if (!strcmp(cmd, "sleeps") && i + 1 < argc) {
			sleep_loop(num(argv[i]), num(argv[i + 1]));
			i += 2;
		} else if (!strcmp(cmd, "pipe") && i < argc) {
			pipe_wait(num(argv[i++]));
		} else if (!strcmp(cmd, "mutex") && i < argc) {
			mutex_wait(num(argv[i++]));
		} else if (!strcmp(cmd, "all")) {
			sleep_loop(100, 10);
			pipe_wait(500);
			mutex_wait(200);
		} else {
			fprintf(stderr, "offwork: bad command '%s'\n", cmd);
			return 2;
		}
	}
	return 0;
}
