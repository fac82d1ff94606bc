// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * annwork — the workload of perfex annotate's tests: one function whose
 * time goes to two source lines, each a multiplication and a division by
 * a constant, marked HOT-A and HOT-B (the tests find them by the marks).
 *
 *   annwork [N]   N turns of the loop (default 50000000)
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long hot(unsigned long n)
{
	unsigned long a = 1, b = 1;

	for (unsigned long i = 1; i < n; i++) {
		a = a * 2654435761u % 1000003;			/* HOT-A */
		b = b * 40503 % 65521 + (a & 7);		/* HOT-B */
	}
	return a + b;
}

int main(int argc, char **argv)
{
	unsigned long n = 50000000;
	char *end;

	if (argc > 1) {
		n = strtoul(argv[1], &end, 10);
		if (*end || end == argv[1]) {
			fprintf(stderr, "usage: annwork [N]\n");
			return 2;
		}
	}
	sink = hot(n);
	return 0;
}
