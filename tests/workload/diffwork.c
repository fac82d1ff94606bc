// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * diffwork — the workload of perfex diff's noise tests: four functions
 * that take turns, round after round, each round giving each function a
 * fixed number of units of the same arithmetic loop, so that their shares
 * of the time are known and steady over the run (no phases):
 * alpha 40, beta 30, kappa 20, delta 10 units a round by default.
 *
 *   diffwork ROUNDS [NAME=UNITS...]   e.g. diffwork 2000 beta=33 (beta
 *                                     10 % slower)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Iterations of a unit: a round of 100 units takes about 1 ms. */
#define UNIT 2500

static volatile unsigned long sink;

static unsigned long spin(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 2654435761u % 1000003 + i;
	return x;
}

__attribute__((noinline)) static void alpha(unsigned long n) { sink = spin(n, sink); }
__attribute__((noinline)) static void beta(unsigned long n) { sink = spin(n, sink); }
__attribute__((noinline)) static void kappa(unsigned long n) { sink = spin(n, sink); }
__attribute__((noinline)) static void delta(unsigned long n) { sink = spin(n, sink); }

static const struct {
	const char *name;
	void (*fn)(unsigned long);
	unsigned long units;
} funcs[] = {
	{ "alpha", alpha, 40 },
	{ "beta", beta, 30 },
	{ "kappa", kappa, 20 },
	{ "delta", delta, 10 },
};
#define NR_FUNCS (sizeof(funcs) / sizeof(funcs[0]))

static int usage(void)
{
	fprintf(stderr, "usage: diffwork ROUNDS [NAME=UNITS...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long units[NR_FUNCS], rounds;
	char *end;

	if (argc < 2)
		return usage();
	rounds = strtoul(argv[1], &end, 10);
	if (*end || end == argv[1])
		return usage();
	for (size_t f = 0; f < NR_FUNCS; f++)
		units[f] = funcs[f].units;
	for (int i = 2; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t f;

		for (f = 0; eq && f < NR_FUNCS; f++)
			if (strlen(funcs[f].name) == (size_t)(eq - argv[i]) &&
			    !strncmp(funcs[f].name, argv[i], (size_t)(eq - argv[i])))
				break;
		if (!eq || f == NR_FUNCS)
			return usage();
		units[f] = strtoul(eq + 1, &end, 10);
		if (*end || end == eq + 1)
			return usage();
	}
	for (unsigned long r = 0; r < rounds; r++)
		for (size_t f = 0; f < NR_FUNCS; f++)
			funcs[f].fn(units[f] * UNIT);
	return 0;
}
