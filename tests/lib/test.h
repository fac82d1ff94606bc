/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The test harness of the C test programs.  A program lists its cases;
 * each case passes, fails (with file:line and a message) or skips with its
 * reason.  Output, one line per case, read by tests/run:
 *
 *	ok <program>/<case>
 *	FAIL <program>/<case>: <file>:<line>: <message>
 *	skip <program>/<case>: <reason>
 *
 * A program may be run with case names as arguments to run only those.
 */
#ifndef PERFCTR_TEST_H
#define PERFCTR_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

#define TEST(name) static void name(void)
#define TEST_CASE(name) { #name, name }

int test_main(int argc, char **argv, const struct test_case *cases, size_t n);
#define TEST_MAIN(...)							\
	int main(int argc, char **argv)					\
	{								\
		static const struct test_case cases[] = { __VA_ARGS__ };	\
		return test_main(argc, argv, cases,			\
				 sizeof(cases) / sizeof(cases[0]));	\
	}

/* Record a failure and continue the case. */
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Skip the rest of the case, with its reason. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Stop the case here (after a failure that makes the rest meaningless). */
void test_abort(void) __attribute__((noreturn));
bool test_failed(void);

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			test_fail(__FILE__, __LINE__, "%s", #cond);	\
	} while (0)

#define REQUIRE(cond)							\
	do {								\
		if (!(cond)) {						\
			test_fail(__FILE__, __LINE__, "%s", #cond);	\
			test_abort();					\
		}							\
	} while (0)

#define CHECK_EQ_U64(a, b)						\
	do {								\
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);	\
		if (a_ != b_)						\
			test_fail(__FILE__, __LINE__, "%s == %s: %" PRIu64 " != %" PRIu64, \
				  #a, #b, a_, b_);			\
	} while (0)

#define CHECK_EQ_INT(a, b)						\
	do {								\
		long long a_ = (long long)(a), b_ = (long long)(b);	\
		if (a_ != b_)						\
			test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", \
				  #a, #b, a_, b_);			\
	} while (0)

#define CHECK_STR(a, b)							\
	do {								\
		const char *a_ = (a), *b_ = (b);			\
		if (!a_ || !b_ || strcmp(a_, b_))			\
			test_fail(__FILE__, __LINE__, "%s == %s: '%s' != '%s'", \
				  #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} while (0)

/* Prerequisites: each skips the case with the reason when unmet. */
void test_require_root(void);
/* tracefs mounted and readable (tests/run mounts it as root). */
void test_require_tracefs(void);
/* An event of this kind can be opened here (e.g. a hardware PMU). */
void test_require_hw_pmu(void);
/*
 * Hardware breakpoints open *and count* here: a write watch on a probe
 * variable counts its writes.  Some VMs accept breakpoint events at open
 * but never fire them (the debug registers are not given to the guest):
 * perf stat counts 0 there too, so the case skips with that reason.
 */
void test_require_breakpoints_fire(void);

/*
 * The id of tracepoint @subsys_event ("syscalls:sys_enter_getppid") read
 * from tracefs at either mount point, or -1 when it cannot be read.
 */
long long test_tracepoint_id(const char *subsys_event);

/*
 * @n getppid(2) (getpid(2)) system calls: each is counted exactly once by
 * syscalls:sys_enter_getppid (sys_enter_getpid), see docs/kernel-notes.md.
 */
void do_getppid(long n);
void do_getpid(long n);

/*
 * Where a test's workload lets a pending asynchronous signal in.  Without
 * ThreadSanitizer it does nothing: the kernel delivers an overflow signal
 * on the way back from the system call that caused it.  ThreadSanitizer
 * holds such a signal until the thread next enters a C library function it
 * intercepts, and merges signals of one number that arrive meanwhile; in
 * a TSan build this enters one (sigprocmask), so that each signal is
 * handled before the next system call as it is without TSan, and the
 * exact signal tests stay exact.  do_getppid() and do_getpid() call it
 * after every call; a test's own loop of raw system calls calls it too.
 */
void test_signal_point(void);

/*
 * Whether this is a ThreadSanitizer build.  A test whose truth TSan
 * itself changes skips with the reason: TSan runs a background thread of
 * its own (a thread of the process, with inherited counters like any
 * other) and takes page faults on its shadow memory.
 */
bool test_tsan(void);

/*
 * The state letter of task @pid from /proc/PID/stat ('R', 'S', 'T', 'Z',
 * ...), or '?' when the task is gone or the file cannot be read.
 */
char test_proc_state(int pid);

/* Path of a built helper, e.g. test_build_path("tests/workload/pcwork"). */
const char *test_build_path(const char *rel);
/* Path of a source-tree file, e.g. test_src_path("tests/fixtures/sysfs-intel"). */
const char *test_src_path(const char *rel);

#endif /* PERFCTR_TEST_H */
