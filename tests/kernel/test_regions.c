// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Kernel tier: region markers (perfctr/region.h) with exact events.
 * PERFCTR_EVENTS is the getppid tracepoint, which the markers themselves
 * never trigger: the measured cost of an empty pair is exactly 0, and
 * every region's count is exactly the calls made inside it, per thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfctr/perfctr.h"
#include "test.h"

static void setup(void)
{
	static bool done;

	test_require_tracefs();
	if (access("/sys/kernel/tracing/events/syscalls/sys_enter_getppid", R_OK) &&
	    access("/sys/kernel/debug/tracing/events/syscalls/sys_enter_getppid", R_OK))
		test_skip("no syscalls:sys_enter_getppid tracepoint");
	if (!done) {
		perfctr_set_print(NULL);
		/* Read at the first begin of the process. */
		setenv("PERFCTR_EVENTS", "syscalls:sys_enter_getppid", 1);
		setenv("PERFCTR_REGIONS_FILE", "/dev/null", 1);
		done = true;
	}
}

static void calls(int n)
{
	int i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static void *other_thread(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 3; i++) {
		perfctr_region_begin("outer");
		calls(7);
		perfctr_region_end("outer");
	}
	return NULL;
}

/* The report as text. */
static char *report(void)
{
	char path[] = "/tmp/test-regions-XXXXXX";
	char *text = NULL;
	size_t size = 0;
	FILE *mem;
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	close(fd);
	REQUIRE(perfctr_region_write(path) == 0);
	mem = open_memstream(&text, &size);
	REQUIRE(mem);
	CHECK(perfctr_region_report(path, mem) >= 2);
	fclose(mem);
	unlink(path);
	return text;
}

TEST(nested_regions_count_exactly)
{
	char *text, want[256];
	pthread_t th;
	int i;

	setup();
	for (i = 0; i < 10; i++) {
		REQUIRE(perfctr_region_begin("outer") == 0);
		calls(100);
		REQUIRE(perfctr_region_begin("inner") == 0);
		calls(5);
		REQUIRE(perfctr_region_end("inner") == 0);
		REQUIRE(perfctr_region_end("outer") == 0);
	}
	REQUIRE(pthread_create(&th, NULL, other_thread, NULL) == 0);
	pthread_join(th, NULL);
	text = report();
	CHECK(strstr(text, "costs 0.0 syscalls:sys_enter_getppid") != NULL);
	/* outer: 10 calls of 105 here, 3 of 7 in the other thread. */
	snprintf(want, sizeof(want), "%-10d %12d %26d\n", (int)syscall(SYS_gettid),
		 10, 1050);
	CHECK(strstr(text, want) != NULL);
	snprintf(want, sizeof(want), "%-10s %12d %26d\n", "total", 13, 1071);
	if (!strstr(text, want))
		test_fail(__FILE__, __LINE__, "no '%s' in:\n%s", want, text);
	snprintf(want, sizeof(want), "%-10s %12d %26d\n", "total", 10, 50);
	CHECK(strstr(text, want) != NULL);
	free(text);
}

TEST(end_must_match_innermost)
{
	setup();
	REQUIRE(perfctr_region_begin("a") == 0);
	REQUIRE(perfctr_region_begin("b") == 0);
	CHECK_EQ_INT(perfctr_region_end("a"), -EINVAL);
	CHECK_EQ_INT(perfctr_region_end("b"), 0);
	CHECK_EQ_INT(perfctr_region_end("a"), 0);
	CHECK_EQ_INT(perfctr_region_end("a"), -EINVAL);	/* none open */
	CHECK_EQ_INT(perfctr_region_begin(NULL), -EINVAL);
}

TEST(report_rejects_other_files)
{
	CHECK_EQ_INT(perfctr_region_report("/etc/passwd", stdout), -EINVAL);
	CHECK(perfctr_region_report("/nonexistent/file", stdout) == -ENOENT);
}

TEST_MAIN(TEST_CASE(nested_regions_count_exactly),
	  TEST_CASE(end_must_match_innermost),
	  TEST_CASE(report_rejects_other_files))
