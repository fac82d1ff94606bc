// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * regions: region markers in a small threaded program.
 *
 *	regions [N]
 *
 * Two threads each run region "work" N times (default 100); inside it,
 * region "calls" makes 10 getppid() system calls and region "spin" a short
 * loop.  Run it under perfex to see the counts per region and thread:
 *
 *	perfex --regions -- ./regions
 *	perfex --regions -e syscalls:sys_enter_getppid -- ./regions 1000
 *
 * (the second needs tracefs mounted and the permission to read
 * tracepoints).  Run alone, it prints the same tables on stderr at exit.
 * The events come from PERFCTR_EVENTS, which perfex -e sets.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <perfctr/perfctr.h>
#include <perfctr/region.h>

static long n = 100;

static void *worker(void *arg)
{
	volatile unsigned long x = 0;
	long i;
	int k;

	(void)arg;
	for (i = 0; i < n; i++) {
		perfctr_region_begin("work");

		perfctr_region_begin("calls");
		for (k = 0; k < 10; k++)
			syscall(SYS_getppid);
		perfctr_region_end("calls");

		perfctr_region_begin("spin");
		for (k = 0; k < 1000; k++)
			x += (unsigned long)k;
		perfctr_region_end("spin");

		perfctr_region_end("work");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t other;

	if (argc > 1)
		n = strtol(argv[1], NULL, 10);
	if (n < 0) {
		fprintf(stderr, "usage: regions [N]\n");
		return 2;
	}
	if (pthread_create(&other, NULL, worker, NULL)) {
		perror("regions: pthread_create");
		return 1;
	}
	worker(NULL);
	pthread_join(other, NULL);
	return 0;
}
