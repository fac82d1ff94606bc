// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libtoplib.so — the library topwork dlopen()s while perfex top runs: its
 * hot function must be named from the samples on (tests/cli/test_top.py).
 */
#include <stdint.h>
#include <time.h>

uint64_t toplib_hot(long ms);

/* The thread's CPU time, not the wall clock: samples of cpu-clock follow
 * the CPU time a task gets, so a phase of MS ms of CPU time is the same
 * share of the samples whatever else the machine runs. */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

__attribute__((noinline)) uint64_t toplib_hot(long ms)
{
	uint64_t end = now_ms() + (uint64_t)ms, x = 3;

	do {
		for (int i = 0; i < 65536; i++)
			x = x * 2862933555777941757ull + 3037000493ull;
	} while (now_ms() < end);
	return x;
}
