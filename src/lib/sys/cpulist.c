/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The kernel's CPU-list format: see cpulist.h. */
#include <errno.h>
#include <stdlib.h>

#include "sys/cpulist.h"

/* Far beyond any CONFIG_NR_CPUS; bounds both the digits and a range. */
#define CPU_MAX (1 << 20)

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static int parse_cpu(const char **s, int *cpu)
{
	const char *p = skip_space(*s);
	long v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v > CPU_MAX)
			return -EINVAL;
		p++;
	}
	*s = skip_space(p);
	*cpu = (int)v;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

int pc_parse_cpulist(const char *list, int **cpus)
{
	const char *p = list;
	int *out = NULL, *grown;
	size_t n = 0, cap = 0, i, j;

	if (!list)
		return -EINVAL;
	for (;;) {
		int first, last, c;

		if (parse_cpu(&p, &first))
			goto inval;
		last = first;
		if (*p == '-') {
			p++;
			if (parse_cpu(&p, &last) || last < first)
				goto inval;
		}
		for (c = first; c <= last; c++) {
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				grown = realloc(out, cap * sizeof(*out));
				if (!grown) {
					free(out);
					return -ENOMEM;
				}
				out = grown;
			}
			out[n++] = c;
		}
		if (!*p)
			break;
		if (*p != ',')
			goto inval;
		p++;
	}
	qsort(out, n, sizeof(*out), cmp_int);
	for (i = j = 0; i < n; i++)
		if (!j || out[j - 1] != out[i])
			out[j++] = out[i];
	*cpus = out;
	return (int)j;
inval:
	free(out);
	return -EINVAL;
}
