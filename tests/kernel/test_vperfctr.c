// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Kernel tier: the vperfctr API (perfctr/vperfctr.h) on exact events.
 * syscalls:sys_enter_getppid counts each syscall(SYS_getppid) exactly and
 * per thread; page-faults:u counts first touches of fresh anonymous pages
 * exactly (MADV_NOHUGEPAGE).  Overflow signals of these events arrive on
 * the way back to user space, before the next event, so the number of
 * signals and the count at which a suspended counter froze are exact.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfctr/perfctr.h"
#include "test.h"

#define GETPPID "syscalls:sys_enter_getppid"

static __attribute__((noinline)) void calls(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		syscall(SYS_getppid);
		test_signal_point();
	}
}

static void quiet(void)
{
	static bool done;

	if (!done) {
		perfctr_set_print(NULL);
		done = true;
	}
}

/* The tracepoint must exist; one extra event on it, held open for the
 * whole program, keeps closing the tests' events cheap
 * (docs/kernel-notes.md 5). */
static void require_getppid(void)
{
	static int warm_fd = -1;
	struct perfctr_evlist *list;
	struct perf_event_attr attr;
	int rc;

	quiet();
	test_require_tracefs();
	list = perfctr_evlist__new();
	REQUIRE(list);
	rc = perfctr_evlist__parse(list, GETPPID, NULL, NULL);
	if (rc != 1) {
		perfctr_evlist__delete(list);
		test_skip("cannot use %s: %s", GETPPID, strerror(-rc));
	}
	if (warm_fd < 0) {
		attr = *perfctr_evlist__attr(list, 0);
		attr.size = sizeof(attr);
		attr.disabled = 1;
		warm_fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	}
	perfctr_evlist__delete(list);
}

static void control_init(struct vperfctr_control *c)
{
	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
}

static bool have_tsc(void)
{
	return access("/sys/bus/event_source/devices/msr/events/tsc", R_OK) == 0;
}

TEST(counts_exactly)
{
	struct vperfctr_control c, got;
	struct perfctr_sum_ctrs s1, s2, s3;
	struct vperfctr *v;
	uint64_t one;

	require_getppid();
	v = vperfctr_open(0, 1);
	REQUIRE(v);
	control_init(&c);
	c.cpu_control.tsc_on = have_tsc();
	c.cpu_control.nractrs = 1;
	c.event[0] = GETPPID;
	REQUIRE(vperfctr_control(v, &c) == 0);
	calls(1000);
	REQUIRE(vperfctr_read(v, &s1, NULL) == 0);
	CHECK_EQ_U64(s1.pmc[0], 1000);
	/* A tracepoint cannot be read from its page: read() it is. */
	REQUIRE(vperfctr_read_fast(v, &s2) == 0);
	CHECK_EQ_U64(s2.pmc[0], 1000);
	REQUIRE(vperfctr_read_pmc(v, 0, &one) == 0);
	CHECK_EQ_U64(one, 1000);
	if (have_tsc()) {
		CHECK(s1.tsc > 0);
		CHECK(s2.tsc >= s1.tsc);
	}
	/* Stop: the counter's sum stays readable, the TSC's is reset. */
	control_init(&c);
	REQUIRE(vperfctr_control(v, &c) == 0);
	calls(10);
	REQUIRE(vperfctr_read(v, &s3, NULL) == 0);
	CHECK_EQ_U64(s3.pmc[0], 1000);
	CHECK_EQ_U64(s3.tsc, 0);
	got.sz = sizeof(got);
	REQUIRE(vperfctr_read(v, NULL, &got) == 0);
	CHECK_EQ_INT(got.cpu_control.nractrs, 0);
	REQUIRE(vperfctr_unlink(v) == 0);
	vperfctr_close(v);
}

/* A restart resets the sums unless preserved; the TSC continues while it
 * stays on. */
TEST(restart_and_preserve)
{
	struct vperfctr_control c, got;
	struct perfctr_sum_ctrs s;
	struct vperfctr *v;
	uint64_t tsc1;

	require_getppid();
	v = vperfctr_open(0, 1);
	REQUIRE(v);
	control_init(&c);
	c.cpu_control.tsc_on = have_tsc();
	c.cpu_control.nractrs = 2;
	c.event[0] = GETPPID;
	c.event[1] = GETPPID;
	REQUIRE(vperfctr_control(v, &c) == 0);
	calls(300);
	REQUIRE(vperfctr_read(v, &s, NULL) == 0);
	tsc1 = s.tsc;
	c.preserve = 1u << 1;		/* counter 1 continues, 0 restarts */
	control_init(&got);
	REQUIRE(vperfctr_control(v, &c) == 0);
	calls(200);
	REQUIRE(vperfctr_read(v, &s, &got) == 0);
	CHECK_EQ_U64(s.pmc[0], 200);
	CHECK_EQ_U64(s.pmc[1], 500);
	if (have_tsc())
		CHECK(s.tsc > tsc1);
	CHECK_STR(got.event[0], GETPPID);
	CHECK_STR(got.event[1], GETPPID);
	CHECK(got.event[2] == NULL && got.attr[0] == NULL);
	CHECK_EQ_INT(got.cpu_control.nractrs, 2);
	CHECK_EQ_INT(got.preserve, 2);
	CHECK_EQ_U64(got.sz, sizeof(got));

	/* Stop, then start the same counters: cheap restart, fresh sums. */
	control_init(&got);
	REQUIRE(vperfctr_control(v, &got) == 0);
	calls(50);
	c.preserve = 0;
	REQUIRE(vperfctr_control(v, &c) == 0);
	calls(70);
	REQUIRE(vperfctr_read_fast(v, &s) == 0);
	CHECK_EQ_U64(s.pmc[0], 70);
	CHECK_EQ_U64(s.pmc[1], 70);
	/* The control in force is the restart's, not the stop's. */
	control_init(&got);
	REQUIRE(vperfctr_read(v, NULL, &got) == 0);
	CHECK_EQ_INT(got.cpu_control.nractrs, 2);
	CHECK_EQ_INT(got.preserve, 0);
	CHECK_STR(got.event[1], GETPPID);

	/* Fewer counters: the sum of the one dropped stays readable. */
	c.cpu_control.nractrs = 1;
	c.cpu_control.tsc_on = 0;
	REQUIRE(vperfctr_control(v, &c) == 0);
	calls(5);
	REQUIRE(vperfctr_read(v, &s, NULL) == 0);
	CHECK_EQ_U64(s.pmc[0], 5);
	CHECK_EQ_U64(s.pmc[1], 70);
	CHECK_EQ_U64(s.tsc, 0);
	vperfctr_unlink(v);
	vperfctr_close(v);
}

TEST(open_rules)
{
	struct vperfctr *v, *again;

	quiet();
	v = vperfctr_open(0, 1);
	REQUIRE(v);
	errno = 0;
	CHECK(vperfctr_open(0, 1) == NULL && errno == EEXIST);
	again = vperfctr_open(0, 0);	/* the same state */
	CHECK(again != NULL);
	vperfctr_close(again);
	REQUIRE(vperfctr_unlink(v) == 0);
	CHECK_EQ_INT(vperfctr_unlink(v), 0);	/* already detached */
	errno = 0;
	CHECK(vperfctr_open(0, 0) == NULL && errno == ENOENT);
	vperfctr_close(v);
	errno = 0;
	CHECK(vperfctr_open(0x3fffffff, 1) == NULL && errno == ESRCH);
}

/* Everything is validated before anything changes. */
TEST(bad_controls_change_nothing)
{
	struct vperfctr_control c, bad;
	struct perfctr_sum_ctrs s;
	struct vperfctr *v;

	require_getppid();
	v = vperfctr_open(0, 1);
	REQUIRE(v);
	control_init(&c);
	c.cpu_control.nractrs = 1;
	c.event[0] = GETPPID;
	REQUIRE(vperfctr_control(v, &c) == 0);
	calls(100);

	bad = c;
	bad.event[0] = GETPPID "," GETPPID;		/* two events */
	CHECK_EQ_INT(vperfctr_control(v, &bad), -EINVAL);
	bad = c;
	bad.event[0] = NULL;
	bad.cpu_control.evntsel[0] = 0x00200000;	/* reserved bit, no EN */
	CHECK_EQ_INT(vperfctr_control(v, &bad), -EINVAL);
	bad = c;
	bad.cpu_control.nractrs = 0;
	bad.cpu_control.nrictrs = 1;			/* no signal */
	bad.cpu_control.ireset[0] = -10;
	CHECK_EQ_INT(vperfctr_control(v, &bad), -EINVAL);
	bad.si_signo = SIGRTMIN;
	bad.cpu_control.ireset[0] = 10;			/* not negative */
	CHECK_EQ_INT(vperfctr_control(v, &bad), -EINVAL);
	bad = c;
	bad.cpu_control.nractrs = VPERFCTR_NR_PMCS + 1;
	CHECK_EQ_INT(vperfctr_control(v, &bad), -EINVAL);
	bad = c;
	bad.event[0] = "no_such_event_anywhere";
	CHECK(vperfctr_control(v, &bad) < 0);
	CHECK_EQ_INT(vperfctr_iresume(v), -EINVAL);	/* no i-mode */

	calls(100);
	REQUIRE(vperfctr_read(v, &s, NULL) == 0);
	CHECK_EQ_U64(s.pmc[0], 200);
	vperfctr_unlink(v);
	vperfctr_close(v);
}

/* The state outlives its thread: the sums after exit are its final ones. */
static void *counting_thread(void *arg)
{
	struct vperfctr_control c;
	struct vperfctr *v = vperfctr_open(0, 1);

	if (v) {
		control_init(&c);
		c.cpu_control.tsc_on = have_tsc();
		c.cpu_control.nractrs = 1;
		c.event[0] = GETPPID;
		if (vperfctr_control(v, &c) < 0) {
			vperfctr_close(v);
			v = NULL;
		}
	}
	calls(777);
	*(struct vperfctr **)arg = v;
	return NULL;
}

TEST(state_outlives_thread)
{
	struct perfctr_sum_ctrs s;
	struct vperfctr *v = NULL;
	pthread_t th;

	require_getppid();
	REQUIRE(pthread_create(&th, NULL, counting_thread, &v) == 0);
	pthread_join(th, NULL);
	REQUIRE(v);
	calls(100);			/* this thread's calls are not its */
	REQUIRE(vperfctr_read(v, &s, NULL) == 0);
	CHECK_EQ_U64(s.pmc[0], 777);
	if (have_tsc())
		CHECK(s.tsc > 0);
	REQUIRE(vperfctr_read_fast(v, &s) == 0);	/* falls back */
	CHECK_EQ_U64(s.pmc[0], 777);
	REQUIRE(vperfctr_unlink(v) == 0);
	REQUIRE(vperfctr_read(v, &s, NULL) == 0);
	CHECK_EQ_U64(s.pmc[0], 777);
	vperfctr_close(v);
}

/* Another thread's state, controlled and read from here. */
struct remote {
	pthread_barrier_t go, done;
	pid_t tid;
};

static void *remote_thread(void *arg)
{
	struct remote *r = arg;

	r->tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&r->go);	/* tid published */
	pthread_barrier_wait(&r->go);	/* counters set up */
	calls(4321);
	pthread_barrier_wait(&r->done);
	return NULL;
}

TEST(remote_thread_state)
{
	struct vperfctr_control c;
	struct perfctr_sum_ctrs s;
	struct remote r;
	struct vperfctr *v;
	pthread_t th;

	require_getppid();
	pthread_barrier_init(&r.go, NULL, 2);
	pthread_barrier_init(&r.done, NULL, 2);
	REQUIRE(pthread_create(&th, NULL, remote_thread, &r) == 0);
	pthread_barrier_wait(&r.go);
	v = vperfctr_open(r.tid, 1);
	REQUIRE(v);
	control_init(&c);
	c.cpu_control.nractrs = 1;
	c.event[0] = GETPPID;
	REQUIRE(vperfctr_control(v, &c) == 0);
	pthread_barrier_wait(&r.go);
	calls(1000);			/* not counted: another thread */
	pthread_barrier_wait(&r.done);
	pthread_join(th, NULL);
	REQUIRE(vperfctr_read_fast(v, &s) == 0);	/* not ours: read() */
	CHECK_EQ_U64(s.pmc[0], 4321);
	vperfctr_unlink(v);
	vperfctr_close(v);
	pthread_barrier_destroy(&r.go);
	pthread_barrier_destroy(&r.done);
}

/*
 * A state belongs to its thread, not to its thread id.  Thread A counts
 * 100 calls on its own state and exits; thread B is then given A's id
 * (ns_last_pid, as root).  B must not see A's state: opening without
 * creat is ENOENT, creating works and starts from zero, and the old
 * handle keeps A's final sums.  The case is tried until A and B started
 * in the same clock tick (/proc's start time cannot tell them apart
 * then), which happens in most tries here.
 */
struct reuse {
	pthread_barrier_t go;
	pid_t tid;
	unsigned long long start;	/* /proc/<tid>/stat field 22 */
	struct vperfctr *v;
};

static unsigned long long start_ticks(pid_t tid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	FILE *f;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &v) != 1)
		return 0;
	return v;
}

static void *old_owner(void *arg)
{
	struct reuse *r = arg;
	struct vperfctr_control c;

	r->tid = (pid_t)syscall(SYS_gettid);
	r->start = start_ticks(r->tid);
	r->v = vperfctr_open(0, 1);
	if (r->v) {
		control_init(&c);
		c.cpu_control.nractrs = 1;
		c.event[0] = GETPPID;
		if (vperfctr_control(r->v, &c) < 0) {
			vperfctr_close(r->v);
			r->v = NULL;
		}
	}
	calls(100);
	return NULL;
}

static void *new_owner(void *arg)
{
	struct reuse *r = arg;

	r->tid = (pid_t)syscall(SYS_gettid);
	r->start = start_ticks(r->tid);
	pthread_barrier_wait(&r->go);	/* tid published */
	pthread_barrier_wait(&r->go);	/* counters set up */
	calls(50);
	pthread_barrier_wait(&r->go);
	return NULL;
}

static bool set_last_pid(pid_t pid)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	bool ok;

	if (!f)
		return false;
	ok = fprintf(f, "%d", (int)(pid - 1)) > 0;
	return fclose(f) == 0 && ok;
}

TEST(reused_tid_is_a_new_thread)
{
	struct vperfctr_control c, got;
	struct perfctr_sum_ctrs s;
	struct reuse a, b;
	struct vperfctr *v;
	pthread_t th;
	int tries, wait, reused = 0, same_tick = 0;
	char task[64];

	require_getppid();
	test_require_root();
	if (access("/proc/sys/kernel/ns_last_pid", W_OK) < 0)
		test_skip("cannot choose the next thread id: "
			  "/proc/sys/kernel/ns_last_pid: %s", strerror(errno));
	memset(&b, 0, sizeof(b));
	pthread_barrier_init(&b.go, NULL, 2);
	for (tries = 0; tries < 40; tries++) {
		memset(&a, 0, sizeof(a));
		REQUIRE(pthread_create(&th, NULL, old_owner, &a) == 0);
		pthread_join(th, NULL);
		REQUIRE(a.v);
		/* pthread_join() returns when the kernel cleared the thread's
		 * tid word, before the id is free: wait until the thread is
		 * gone from /proc, and a little more (the kernel frees the id
		 * just after). */
		snprintf(task, sizeof(task), "/proc/self/task/%d", (int)a.tid);
		for (wait = 0; wait < 2000 && access(task, F_OK) == 0; wait++)
			usleep(100);
		usleep(300);
		/* Another process may take the id first: try again. */
		REQUIRE(set_last_pid(a.tid));
		REQUIRE(pthread_create(&th, NULL, new_owner, &b) == 0);
		pthread_barrier_wait(&b.go);
		if (b.tid == a.tid) {
			reused++;
			if (b.start == a.start || tries == 39)
				break;
		}
		/* Not the case wanted: let B finish, drop A's state. */
		pthread_barrier_wait(&b.go);
		pthread_barrier_wait(&b.go);
		pthread_join(th, NULL);
		vperfctr_unlink(a.v);
		vperfctr_close(a.v);
	}
	if (tries == 40) {
		pthread_barrier_destroy(&b.go);
		test_skip("no thread id was given again in %d tries (other "
			  "processes took them)", tries);
	}
	same_tick = b.start == a.start;

	/* B has no state: A's is not B's. */
	errno = 0;
	v = vperfctr_open(b.tid, 0);
	CHECK(v == NULL && errno == ENOENT);
	if (v)
		vperfctr_close(v);
	v = vperfctr_open(b.tid, 1);
	CHECK(v != NULL);
	if (v) {
		REQUIRE(vperfctr_read(v, &s, NULL) == 0);
		CHECK_EQ_U64(s.pmc[0], 0);
		control_init(&got);
		REQUIRE(vperfctr_read(v, NULL, &got) == 0);
		CHECK_EQ_INT(got.cpu_control.nractrs, 0);
		control_init(&c);
		c.cpu_control.nractrs = 1;
		c.event[0] = GETPPID;
		CHECK_EQ_INT(vperfctr_control(v, &c), 0);
	}
	pthread_barrier_wait(&b.go);		/* B calls 50 times */
	pthread_barrier_wait(&b.go);
	pthread_join(th, NULL);
	if (v) {
		REQUIRE(vperfctr_read(v, &s, NULL) == 0);
		CHECK_EQ_U64(s.pmc[0], 50);
		vperfctr_unlink(v);
		vperfctr_close(v);
	}

	/* A's handle: its final sums, and it was unlinked from the id. */
	REQUIRE(vperfctr_read(a.v, &s, NULL) == 0);
	CHECK_EQ_U64(s.pmc[0], 100);
	control_init(&c);
	CHECK_EQ_INT(vperfctr_control(a.v, &c), -ENXIO);
	vperfctr_close(a.v);
	pthread_barrier_destroy(&b.go);
	printf("# thread id %d given again %d times in %d tries; the checked "
	       "pair started in %s clock tick\n", (int)a.tid, reused, tries + 1,
	       same_tick ? "the same" : "different ticks, not the same");
}

/* ------------------------------------------------------------------ */
/* i-mode. */

static struct vperfctr *ivp;
static volatile int nr_signals, resume;
static volatile unsigned int masks[32];

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	unsigned int mask = vperfctr_si_pmc_ovf_mask(si);

	(void)sig;
	(void)uc;
	if (nr_signals < 32)
		masks[nr_signals] = mask;
	nr_signals++;
	if (resume)
		vperfctr_iresume(ivp);
}

static void handler_for(int signo)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_overflow;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	REQUIRE(sigaction(signo, &sa, NULL) == 0);
	nr_signals = 0;
	memset((void *)masks, 0, sizeof(masks));
}

static void imode_getppid(bool do_resume, bool tsc, int *signals,
			  struct perfctr_sum_ctrs *s)
{
	struct vperfctr_control c;
	int signo = SIGRTMIN + 4;

	require_getppid();
	handler_for(signo);		/* before the control: chained */
	ivp = vperfctr_open(0, 1);
	REQUIRE(ivp);
	resume = do_resume;
	control_init(&c);
	c.si_signo = signo;
	c.cpu_control.tsc_on = tsc;
	c.cpu_control.nractrs = 1;	/* an a-mode counter beside it */
	c.cpu_control.nrictrs = 1;
	c.event[0] = GETPPID;
	c.event[1] = GETPPID;
	c.cpu_control.ireset[1] = -1000;
	REQUIRE(vperfctr_control(ivp, &c) == 0);
	calls(10000);
	*signals = nr_signals;
	REQUIRE(vperfctr_read(ivp, s, NULL) == 0);
	vperfctr_unlink(ivp);
	vperfctr_close(ivp);
	ivp = NULL;
	signal(signo, SIG_DFL);
}

TEST(imode_resumed_each_time)
{
	struct perfctr_sum_ctrs s;
	int signals, i;

	imode_getppid(true, false, &signals, &s);
	CHECK_EQ_INT(signals, 10);
	CHECK_EQ_U64(s.pmc[0], 10000);
	CHECK_EQ_U64(s.pmc[1], 10000);
	for (i = 0; i < 10; i++)
		CHECK_EQ_INT(masks[i], 1u << 1);
}

TEST(imode_suspended_until_iresume)
{
	struct perfctr_sum_ctrs s;
	int signals;

	imode_getppid(false, have_tsc(), &signals, &s);
	CHECK_EQ_INT(signals, 1);
	/* Frozen at the overflow, the a-mode counter with it. */
	CHECK_EQ_U64(s.pmc[1], 1000);
	CHECK_EQ_U64(s.pmc[0], 1000);
	CHECK_EQ_INT(masks[0], 1u << 1);
}

/* Suspended, the TSC counts on; iresume resumes exactly where it was. */
TEST(imode_iresume_later)
{
	struct vperfctr_control c;
	struct perfctr_sum_ctrs s1, s2;
	int signo = SIGRTMIN + 5;

	require_getppid();
	handler_for(signo);
	ivp = vperfctr_open(0, 1);
	REQUIRE(ivp);
	resume = 0;
	control_init(&c);
	c.si_signo = signo;
	c.cpu_control.tsc_on = have_tsc();
	c.cpu_control.nrictrs = 1;
	c.event[0] = GETPPID;
	c.cpu_control.ireset[0] = -1000;
	REQUIRE(vperfctr_control(ivp, &c) == 0);
	calls(2500);
	REQUIRE(vperfctr_read(ivp, &s1, NULL) == 0);
	CHECK_EQ_U64(s1.pmc[0], 1000);
	CHECK_EQ_INT(vperfctr_ovf_mask(ivp), 1);
	calls(100);
	REQUIRE(vperfctr_read(ivp, &s2, NULL) == 0);
	CHECK_EQ_U64(s2.pmc[0], 1000);
	if (have_tsc())
		CHECK(s2.tsc > s1.tsc);
	REQUIRE(vperfctr_iresume(ivp) == 0);
	CHECK_EQ_INT(vperfctr_ovf_mask(ivp), 0);
	calls(999);
	REQUIRE(vperfctr_read(ivp, &s2, NULL) == 0);
	CHECK_EQ_U64(s2.pmc[0], 1999);
	CHECK_EQ_INT(nr_signals, 1);
	calls(1);
	CHECK_EQ_INT(nr_signals, 2);
	/* A new control rearms: a full period from 0 again. */
	REQUIRE(vperfctr_control(ivp, &c) == 0);
	calls(999);
	CHECK_EQ_INT(nr_signals, 2);
	calls(1);
	CHECK_EQ_INT(nr_signals, 3);
	vperfctr_unlink(ivp);
	vperfctr_close(ivp);
	ivp = NULL;
	signal(signo, SIG_DFL);
}

/* Page faults: N fresh pages touched, period P. */
#define PAGES 1000
#define PF_PERIOD 100

/* Not instrumented: ASan's checks would fault in shadow pages too. */
static __attribute__((noinline, no_sanitize_address)) void
touch_pages(volatile char *mem, size_t page, int n)
{
	int i;

	for (i = 0; i < n; i++)
		mem[(size_t)i * page] = 1;
}

static void fault_run(bool do_resume, int *signals, uint64_t *count)
{
	struct vperfctr_control c;
	struct perfctr_sum_ctrs s;
	int signo = SIGRTMIN + 6;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *mem;

	quiet();
	mem = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(mem != MAP_FAILED);
	madvise((void *)mem, PAGES * page, MADV_NOHUGEPAGE);
	handler_for(signo);
	ivp = vperfctr_open(0, 1);
	REQUIRE(ivp);
	resume = do_resume;
	control_init(&c);
	c.si_signo = signo;
	c.cpu_control.nrictrs = 1;
	c.event[0] = "page-faults:u";
	c.cpu_control.ireset[0] = -PF_PERIOD;
	if (vperfctr_control(ivp, &c) < 0) {
		vperfctr_close(ivp);
		test_skip("cannot count page-faults here");
	}
	touch_pages(mem, page, PAGES);
	*signals = nr_signals;
	REQUIRE(vperfctr_read(ivp, &s, NULL) == 0);
	*count = s.pmc[0];
	vperfctr_unlink(ivp);
	vperfctr_close(ivp);
	ivp = NULL;
	munmap((void *)mem, PAGES * page);
	signal(signo, SIG_DFL);
}

/* The first run also faults in the pages the handler and its signal
 * frames use (and, under ASan, their shadow): measure the second. */
static void imode_faults(bool do_resume, int *signals, uint64_t *count)
{
	if (test_tsan())
		test_skip("ThreadSanitizer takes page faults of its own on its shadow memory");
	fault_run(do_resume, signals, count);
	fault_run(do_resume, signals, count);
}

TEST(imode_page_faults_resumed)
{
	int signals;
	uint64_t count;

	imode_faults(true, &signals, &count);
	CHECK_EQ_INT(signals, PAGES / PF_PERIOD);
	CHECK_EQ_U64(count, PAGES);
}

TEST(imode_page_faults_suspended)
{
	int signals;
	uint64_t count;

	imode_faults(false, &signals, &count);
	CHECK_EQ_INT(signals, 1);
	CHECK_EQ_U64(count, PF_PERIOD);
}

/* Two i-mode counters at different rates (1000 and 2500 calls): each
 * signal's mask names exactly the counters whose period ended, both at
 * once at 5000 and 10000 (one signal then, not two). */
TEST(imode_mask_two_counters)
{
	struct vperfctr_control c;
	struct perfctr_sum_ctrs s;
	int signo = SIGRTMIN + 7, k = 0, at;

	require_getppid();
	handler_for(signo);
	ivp = vperfctr_open(0, 1);
	REQUIRE(ivp);
	resume = 1;
	control_init(&c);
	c.si_signo = signo;
	c.cpu_control.nrictrs = 2;
	c.event[0] = GETPPID;
	c.event[1] = GETPPID;
	c.cpu_control.ireset[0] = -1000;
	c.cpu_control.ireset[1] = -2500;
	REQUIRE(vperfctr_control(ivp, &c) == 0);
	calls(10000);
	REQUIRE(vperfctr_read(ivp, &s, NULL) == 0);
	CHECK_EQ_U64(s.pmc[0], 10000);
	CHECK_EQ_U64(s.pmc[1], 10000);
	CHECK_EQ_INT(nr_signals, 12);
	for (at = 500; at <= 10000; at += 500) {
		unsigned int want = (at % 1000 == 0 ? 1u : 0) |
				    (at % 2500 == 0 ? 2u : 0);

		if (!want)
			continue;
		if (k < 32 && masks[k] != want)
			test_fail(__FILE__, __LINE__,
				  "signal %d (call %d): mask %#x, want %#x", k,
				  at, masks[k], want);
		k++;
	}
	vperfctr_unlink(ivp);
	vperfctr_close(ivp);
	ivp = NULL;
	signal(signo, SIG_DFL);
}

/* Without a handler of the application's the suspension still happens;
 * the mask can be polled. */
TEST(imode_without_handler)
{
	struct vperfctr_control c;
	struct perfctr_sum_ctrs s;
	int signo = SIGRTMIN + 8;

	require_getppid();
	signal(signo, SIG_DFL);
	ivp = vperfctr_open(0, 1);
	REQUIRE(ivp);
	control_init(&c);
	c.si_signo = signo;
	c.cpu_control.nrictrs = 1;
	c.event[0] = GETPPID;
	c.cpu_control.ireset[0] = -100;
	REQUIRE(vperfctr_control(ivp, &c) == 0);
	calls(1000);
	REQUIRE(vperfctr_read(ivp, &s, NULL) == 0);
	CHECK_EQ_U64(s.pmc[0], 100);
	CHECK_EQ_INT(vperfctr_ovf_mask(ivp), 1);
	vperfctr_unlink(ivp);
	vperfctr_close(ivp);
	ivp = NULL;
}

TEST_MAIN(TEST_CASE(counts_exactly), TEST_CASE(restart_and_preserve),
	  TEST_CASE(open_rules), TEST_CASE(bad_controls_change_nothing),
	  TEST_CASE(state_outlives_thread), TEST_CASE(remote_thread_state),
	  TEST_CASE(reused_tid_is_a_new_thread),
	  TEST_CASE(imode_resumed_each_time),
	  TEST_CASE(imode_suspended_until_iresume),
	  TEST_CASE(imode_iresume_later),
	  TEST_CASE(imode_page_faults_resumed),
	  TEST_CASE(imode_page_faults_suspended),
	  TEST_CASE(imode_mask_two_counters),
	  TEST_CASE(imode_without_handler))
