// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test.h"

static jmp_buf case_jmp;
static bool case_failed;
static char skip_reason[512];
static const char *prog_name;
static const char *case_name;

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	/* Only the first failure of a case is the one that counts; the rest
	 * go to stderr so they are not lost. */
	if (!case_failed)
		printf("FAIL %s/%s: %s:%d: ", prog_name, case_name, file, line);
	else
		fprintf(stderr, "  also %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(case_failed ? stderr : stdout, fmt, ap);
	va_end(ap);
	fputc('\n', case_failed ? stderr : stdout);
	fflush(stdout);
	case_failed = true;
}

bool test_failed(void)
{
	return case_failed;
}

void test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
	longjmp(case_jmp, 2);
}

void test_abort(void)
{
	longjmp(case_jmp, 1);
}

/* setjmp lives in its own frame so no local of the caller can be clobbered. */
static int run_case(const struct test_case *tc)
{
	int jumped = setjmp(case_jmp);

	if (!jumped)
		tc->fn();
	return jumped;
}

static bool wanted(int argc, char **argv, const char *name)
{
	int a;

	if (argc <= 1)
		return true;
	for (a = 1; a < argc; a++)
		if (!strcmp(argv[a], name))
			return true;
	return false;
}

int test_main(int argc, char **argv, const struct test_case *cases, size_t n)
{
	int failures = 0;
	size_t i;

	prog_name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < n; i++) {
		int jumped;

		if (!wanted(argc, argv, cases[i].name))
			continue;
		case_name = cases[i].name;
		case_failed = false;
		skip_reason[0] = '\0';
		jumped = run_case(&cases[i]);
		if (jumped == 2 && !case_failed)
			printf("skip %s/%s: %s\n", prog_name, case_name, skip_reason);
		else if (case_failed)
			failures++;
		else
			printf("ok %s/%s\n", prog_name, case_name);
	}
	return failures ? 1 : 0;
}

void test_require_root(void)
{
	if (geteuid() != 0)
		test_skip("needs root (euid is %d)", (int)geteuid());
}

void test_require_tracefs(void)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events",
	};
	size_t i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (access(roots[i], R_OK) == 0)
			return;
	test_skip("tracefs is not mounted or not readable "
		  "(mount -t tracefs nodev /sys/kernel/tracing as root)");
}

void test_require_hw_pmu(void)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		test_skip("no hardware PMU here (instructions: %s)", strerror(errno));
	close((int)fd);
}

static volatile long breakpoint_probe;

void test_require_breakpoints_fire(void)
{
	struct perf_event_attr attr;
	uint64_t count = 0;
	long fd;
	int i;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (uintptr_t)&breakpoint_probe;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		test_skip("no hardware breakpoints here (%s)", strerror(errno));
	ioctl((int)fd, PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < 10; i++)
		breakpoint_probe = i;
	ioctl((int)fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read((int)fd, &count, sizeof(count)) != sizeof(count))
		count = 0;
	close((int)fd);
	if (count != 10)
		test_skip("hardware breakpoints open but do not fire here "
			  "(10 watched writes counted %llu; perf stat -e mem:ADDR:w "
			  "counts 0 too)", (unsigned long long)count);
}

long long test_tracepoint_id(const char *subsys_event)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events",
	};
	const char *sep = strchr(subsys_event, ':');
	char path[512], buf[32], *end;
	long long id;
	size_t i;
	FILE *f;

	if (!sep)
		return -1;
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/%.*s/%s/id", roots[i],
			 (int)(sep - subsys_event), subsys_event, sep + 1);
		f = fopen(path, "r");
		if (!f)
			continue;
		id = -1;
		if (fgets(buf, sizeof(buf), f)) {
			errno = 0;
			id = strtoll(buf, &end, 10);
			if (errno || end == buf || id < 0)
				id = -1;
		}
		fclose(f);
		if (id >= 0)
			return id;
	}
	return -1;
}

#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif

bool test_tsan(void)
{
#ifdef TEST_TSAN
	return true;
#else
	return false;
#endif
}

void test_signal_point(void)
{
#ifdef TEST_TSAN
	sigset_t mask;

	sigprocmask(SIG_BLOCK, NULL, &mask);
#endif
}

void do_getppid(long n)
{
	for (long i = 0; i < n; i++) {
		syscall(SYS_getppid);
		test_signal_point();
	}
}

void do_getpid(long n)
{
	for (long i = 0; i < n; i++) {
		syscall(SYS_getpid);
		test_signal_point();
	}
}

char test_proc_state(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* The command name may hold spaces and ')': the state follows the
	 * last ')'. */
	if (!p || !(p = strrchr(buf, ')')) || !p[1])
		return '?';
	return p[2];
}

static const char *join(const char *base, const char *rel)
{
	/* A small ring of buffers so a caller may hold a few paths at once. */
	static char bufs[8][4096];
	static unsigned next;
	char *buf = bufs[next++ % 8];

	snprintf(buf, sizeof(bufs[0]), "%s/%s", base, rel);
	return buf;
}

const char *test_build_path(const char *rel)
{
	const char *o = getenv("O");

	return join(o && *o ? o : "build", rel);
}

const char *test_src_path(const char *rel)
{
	const char *top = getenv("PERFCTR_SRC");

	return join(top && *top ? top : ".", rel);
}
