/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The library's one CPU-list parser (sys/cpulist.h), by table: what sysfs
 * writes (trailing newline), what people type (spaces after commas), and
 * every malformed shape.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sys/cpulist.h"
#include "test.h"

TEST(cpulist_table)
{
	static const struct {
		const char *list;
		int rc;
		const char *cpus;
	} rows[] = {
		{ "0", 1, "0" },
		{ "3", 1, "3" },
		{ "0-3", 4, "0,1,2,3" },
		{ "0-3,5", 5, "0,1,2,3,5" },
		{ "5,0-1", 3, "0,1,5" },		/* sorted */
		{ "1,1,0-1", 2, "0,1" },		/* duplicates merged */
		{ "0-3,2-5", 6, "0,1,2,3,4,5" },	/* overlapping ranges */
		{ "2-2", 1, "2" },
		{ "10-12,7", 4, "7,10,11,12" },
		{ "007", 1, "7" },
		{ "0-3\n", 4, "0,1,2,3" },		/* sysfs */
		{ "0,2-3\n", 3, "0,2,3" },
		{ " 1 , 3 - 4 ", 3, "1,3,4" },
		{ "\t0,\n1", 2, "0,1" },
		{ "1048576", 1, "1048576" },		/* the largest */
		{ "", -EINVAL, NULL },
		{ "\n", -EINVAL, NULL },		/* sysfs's empty list */
		{ " ", -EINVAL, NULL },
		{ ",", -EINVAL, NULL },
		{ "0,", -EINVAL, NULL },
		{ ",0", -EINVAL, NULL },
		{ "0,,1", -EINVAL, NULL },
		{ "3-1", -EINVAL, NULL },
		{ "-1", -EINVAL, NULL },
		{ "0-", -EINVAL, NULL },
		{ "0--1", -EINVAL, NULL },
		{ "0-1-2", -EINVAL, NULL },
		{ "a", -EINVAL, NULL },
		{ "0a", -EINVAL, NULL },
		{ "0 1", -EINVAL, NULL },
		{ "0x1", -EINVAL, NULL },
		{ "+1", -EINVAL, NULL },
		{ "1048577", -EINVAL, NULL },
		{ "99999999999999999999", -EINVAL, NULL },
		{ "0-99999999", -EINVAL, NULL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int *cpus = NULL;
		int rc = pc_parse_cpulist(rows[i].list, &cpus);
		char got[256] = "";
		size_t len = 0;

		if (rc != rows[i].rc) {
			test_fail(__FILE__, __LINE__, "'%s': %d, want %d",
				  rows[i].list, rc, rows[i].rc);
			free(rc > 0 ? cpus : NULL);
			continue;
		}
		if (rc <= 0)
			continue;
		for (int k = 0; k < rc && len < sizeof(got); k++)
			len += (size_t)snprintf(got + len, sizeof(got) - len,
						"%s%d", k ? "," : "", cpus[k]);
		CHECK_STR(got, rows[i].cpus);
		free(cpus);
	}
}

TEST(cpulist_null_and_large_range)
{
	int *cpus = NULL;

	CHECK_EQ_INT(pc_parse_cpulist(NULL, &cpus), -EINVAL);
	CHECK_EQ_INT(pc_parse_cpulist("0-4095", &cpus), 4096);
	if (cpus) {
		CHECK_EQ_INT(cpus[0], 0);
		CHECK_EQ_INT(cpus[4095], 4095);
	}
	free(cpus);
}

TEST_MAIN(TEST_CASE(cpulist_table),
	  TEST_CASE(cpulist_null_and_large_range));
