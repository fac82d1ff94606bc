// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The event layer against the kernel: specifications parsed from this
 * machine's own sysfs and tracefs (not fixtures) open with
 * perf_event_open(2) and count exactly where the workload makes counts
 * exact (docs/kernel-notes.md), and what the parser rejects the kernel rejects.
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/internal.h"
#include "perfctr/event.h"
#include "sys/sys.h"
#include "test.h"

static struct perfctr_evlist *parse_host(const char *spec)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	int ret;

	REQUIRE(l);
	ret = perfctr_evlist__parse(l, spec, NULL, &err);
	if (ret <= 0) {
		test_fail(__FILE__, __LINE__, "'%s': %d: %s (%s)", spec, ret,
			  err.message, err.hint);
		perfctr_evlist__delete(l);
		test_abort();
	}
	return l;
}

/*
 * Open every event of @l on the calling thread, group by group.  Members
 * are opened enabled and only leaders toggled (docs/kernel-notes.md 4).
 */
static void open_all(const struct perfctr_evlist *l, int *fds)
{
	size_t i, n = perfctr_evlist__nr_events(l);

	for (i = 0; i < n; i++) {
		struct perf_event_attr attr = *perfctr_evlist__attr(l, i);
		size_t leader = perfctr_evlist__leader(l, i);

		attr.disabled = leader == i;
		fds[i] = sys_perf_event_open(&attr, 0, -1,
					     leader == i ? -1 : fds[leader], 0);
		if (fds[i] < 0)
			test_fail(__FILE__, __LINE__, "open '%s': %s",
				  perfctr_evlist__name(l, i), strerror(-fds[i]));
	}
}

static void enable_leaders(const struct perfctr_evlist *l, const int *fds,
			   bool on)
{
	size_t i;

	for (i = 0; i < perfctr_evlist__nr_events(l); i++)
		if (perfctr_evlist__leader(l, i) == i && fds[i] >= 0)
			CHECK_EQ_INT(on ? sys_perf_enable(fds[i], true) :
				     sys_perf_disable(fds[i], true), 0);
}

static uint64_t count_of(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || sys_perf_read(fd, &v, sizeof(v)) != sizeof(v))
		return UINT64_MAX;
	return v;
}

static void close_all(const struct perfctr_evlist *l, const int *fds)
{
	size_t i;

	for (i = 0; i < perfctr_evlist__nr_events(l); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

TEST(tracepoints_count_exactly)
{
	struct perfctr_evlist *l;
	int fds[2], i;

	test_require_tracefs();
	l = parse_host("syscalls:sys_enter_getppid,syscalls:sys_exit_getpp*");
	REQUIRE(perfctr_evlist__nr_events(l) == 2);
	CHECK_STR(perfctr_evlist__name(l, 1), "syscalls:sys_exit_getppid");
	open_all(l, fds);
	enable_leaders(l, fds, true);
	for (i = 0; i < 1000; i++)
		syscall(SYS_getppid);
	enable_leaders(l, fds, false);
	CHECK_EQ_U64(count_of(fds[0]), 1000);
	CHECK_EQ_U64(count_of(fds[1]), 1000);
	close_all(l, fds);
	perfctr_evlist__delete(l);
}

static volatile long watched;

TEST(breakpoint_counts_writes)
{
	struct perfctr_evlist *l;
	char spec[64];
	int fd, i;

	test_require_breakpoints_fire();
	snprintf(spec, sizeof(spec), "mem:%p/%zu:w", (void *)&watched,
		 sizeof(watched));
	l = parse_host(spec);
	open_all(l, &fd);
	if (fd < 0) {
		perfctr_evlist__delete(l);
		test_abort();
	}
	enable_leaders(l, &fd, true);
	for (i = 0; i < 100; i++)
		watched = i;
	enable_leaders(l, &fd, false);
	CHECK_EQ_U64(count_of(fd), 100);
	close_all(l, &fd);
	perfctr_evlist__delete(l);
}

/* What breakpoint.c rejects before the kernel sees it, the kernel rejects. */
TEST(kernel_agrees_on_breakpoint_rules)
{
	struct perf_event_attr attr;
	struct perfctr_evlist *l = perfctr_evlist__new();
	char spec[64];
	int fd;

	REQUIRE(l);
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.bp_addr = (uintptr_t)&watched;
	attr.bp_len = 9;
	attr.bp_type = HW_BREAKPOINT_W;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	CHECK_EQ_INT(fd, -EINVAL);
	snprintf(spec, sizeof(spec), "mem:%p/9:w", (void *)&watched);
	CHECK_EQ_INT(perfctr_evlist__parse(l, spec, NULL, NULL), -EINVAL);
	/* A 3-byte watch: x86 refuses it, arm64 takes it; so does the parser. */
	attr.bp_len = 3;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	snprintf(spec, sizeof(spec), "mem:%p/3:w", (void *)&watched);
	CHECK_EQ_INT(perfctr_evlist__parse(l, spec, NULL, NULL),
		     fd >= 0 ? 1 : -EINVAL);
	if (fd >= 0)
		close(fd);
	else
		CHECK_EQ_INT(fd, -EINVAL);
#if defined(__x86_64__) || defined(__i386__)
	attr.bp_addr = (uintptr_t)&watched + 1;
	attr.bp_len = 4;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	CHECK_EQ_INT(fd, -EINVAL);
	snprintf(spec, sizeof(spec), "mem:%p/4:w", (void *)((char *)&watched + 1));
	CHECK_EQ_INT(perfctr_evlist__parse(l, spec, NULL, NULL), -EINVAL);
	attr.bp_len = 4;
	attr.bp_addr = (uintptr_t)&watched;
	attr.bp_type = HW_BREAKPOINT_R;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	CHECK_EQ_INT(fd, -EINVAL);
	snprintf(spec, sizeof(spec), "mem:%p/4:r", (void *)&watched);
	CHECK_EQ_INT(perfctr_evlist__parse(l, spec, NULL, NULL), -EOPNOTSUPP);
#endif
	if (fd >= 0)
		close(fd);
	perfctr_evlist__delete(l);
}

/* Uninstrumented: ASan's shadow reads would fault pages of their own. */
__attribute__((no_sanitize_address, noinline))
static void touch_pages(char *mem, size_t pages, long page)
{
	size_t i;

	for (i = 0; i < pages; i++)
		((volatile char *)mem)[i * page] = 1;
}

TEST(software_group_with_modifiers)
{
	struct perfctr_evlist *l = parse_host("{task-clock,page-faults,"
					      "minor-faults}:uD");
	long page = sysconf(_SC_PAGESIZE);
	const size_t pages = 64;
	char *mem;
	int fds[3];

	REQUIRE(perfctr_evlist__nr_events(l) == 3);
	CHECK(perfctr_evlist__attr(l, 1)->exclude_kernel);
	/* :D pins the group: the kernel takes pinned on the leader only. */
	CHECK(perfctr_evlist__attr(l, 0)->pinned);
	mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(mem != MAP_FAILED);
	madvise(mem, pages * page, MADV_NOHUGEPAGE);
	open_all(l, fds);
	enable_leaders(l, fds, true);
	touch_pages(mem, pages, page);
	enable_leaders(l, fds, false);
	CHECK(count_of(fds[0]) > 0);
	CHECK_EQ_U64(count_of(fds[1]), pages);
	CHECK_EQ_U64(count_of(fds[2]), pages);
	close_all(l, fds);
	munmap(mem, pages * page);
	perfctr_evlist__delete(l);
}

/* Named events read from the machine's sysfs open on their PMU. */
TEST(sysfs_pmu_events_open)
{
	static const char *const specs[] = {
		"msr/tsc/", "inst_retired", "cpu_cycles", "cpu/cpu-cycles/",
	};
	PERFCTR_OPTS(perfctr_parse_opts, opts, .tracefs_root = "/nonexistent");
	size_t i, opened = 0;

	for (i = 0; i < ARRAY_SIZE(specs); i++) {
		struct perfctr_evlist *l = perfctr_evlist__new();
		int fd, ret;

		REQUIRE(l);
		ret = perfctr_evlist__parse(l, specs[i], &opts, NULL);
		if (ret == 1) {
			open_all(l, &fd);
			if (fd >= 0) {
				opened++;
				close(fd);
			}
		} else {
			/* Absent here: the parser must say so, not invent. */
			CHECK(ret == -ENOENT || ret == -ENODEV);
		}
		perfctr_evlist__delete(l);
	}
	if (!opened)
		test_skip("no msr or core PMU with named events in sysfs here");
}

/* An unprivileged caller is told tracefs is unreadable, not unmounted. */
TEST(tracefs_unreadable_is_eacces)
{
	int status, pipefd[2];
	pid_t pid;
	char buf[600];
	ssize_t n;

	test_require_root();
	test_require_tracefs();
	if (access("/sys/kernel/tracing/events", F_OK))
		test_skip("tracefs is not at /sys/kernel/tracing");
	REQUIRE(pipe(pipefd) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct perfctr_evlist *l = perfctr_evlist__new();
		struct perfctr_parse_error err = { .sz = sizeof(err) };
		int ret;

		close(pipefd[0]);
		if (setgid(65534) || setuid(65534))
			_exit(2);
		ret = perfctr_evlist__parse(l, "syscalls:sys_enter_getppid",
					    NULL, &err);
		n = snprintf(buf, sizeof(buf), "%d|%s|%s", ret, err.message,
			     err.hint);
		if (write(pipefd[1], buf, (size_t)n) != n)
			_exit(3);
		perfctr_evlist__delete(l);
		_exit(0);
	}
	close(pipefd[1]);
	n = read(pipefd[0], buf, sizeof(buf) - 1);
	close(pipefd[0]);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	REQUIRE(n > 0);
	buf[n] = '\0';
	/* Where tracefs is world-readable the parse succeeds: say so. */
	if (!strncmp(buf, "1|", 2))
		test_skip("tracefs is readable by unprivileged users here");
	if (strncmp(buf, "-13|", 4) || !strstr(buf, "cannot read tracefs") ||
	    !strstr(buf, "mode=755"))
		test_fail(__FILE__, __LINE__, "unprivileged parse: %s", buf);
}

TEST_MAIN(TEST_CASE(tracepoints_count_exactly),
	  TEST_CASE(tracefs_unreadable_is_eacces),
	  TEST_CASE(breakpoint_counts_writes),
	  TEST_CASE(kernel_agrees_on_breakpoint_rules),
	  TEST_CASE(software_group_with_modifiers),
	  TEST_CASE(sysfs_pmu_events_open))
