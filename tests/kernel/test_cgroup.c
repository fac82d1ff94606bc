// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Cgroup targets: the cgroup2 mount found in the mount table, errors told
 * apart, and exact getppid counts per cgroup for workloads moved into
 * cgroups this test makes under the cgroup2 mount (two busy at once; a
 * parent counting its children's tasks).  The cgroups are new and empty,
 * so nothing but the workloads runs in them and no pid filter is needed.
 */
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>

#include "cgroup_util.h"

static struct perfctr_session *cgroup_session(const char *path,
					      struct perfctr_target **t)
{
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);

	*t = perfctr_target__new_cgroup(path, NULL);
	REQUIRE(*t);
	REQUIRE(perfctr_session__attach(s, *t) == 0);
	return s;
}

static uint64_t stop_and_value(struct perfctr_session *s)
{
	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	return value_of(s, 0);
}

TEST(mount_from_mountinfo)
{
	static const char *const lines =
		"22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
		"30 22 0:26 / /sys/fs/cgroup ro shared:9 - tmpfs tmpfs ro\n"
		"31 30 0:27 /sub /mnt/bound rw shared:10 - cgroup2 cgroup2 rw\n"
		"32 30 0:27 / /sys/fs/cgroup/uni\\040fied rw,nosuid shared:10 "
		"master:3 - cgroup2 cgroup2 rw,nsdelegate\n"
		"33 30 0:28 / /sys/fs/cgroup/cpu rw shared:11 - cgroup cgroup rw,cpu\n";
	char path[] = "/tmp/perfctr-mountinfo-XXXXXX", out[256];
	FILE *f;
	int fd;

	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	f = fdopen(fd, "w");
	REQUIRE(f);
	fputs(lines, f);
	fclose(f);
	/* The hierarchy's root wins over a bind mount of a sub-cgroup, and
	 * the octal escape of a space is undone. */
	CHECK_EQ_INT(pc_cgroup2_mount(path, out, sizeof(out)), 0);
	CHECK_STR(out, "/sys/fs/cgroup/uni fied");
	CHECK_EQ_INT(pc_cgroup2_mount(path, out, 8), -ENAMETOOLONG);

	f = fopen(path, "w");
	REQUIRE(f);
	fputs("22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
	      "33 22 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n", f);
	fclose(f);
	CHECK_EQ_INT(pc_cgroup2_mount(path, out, sizeof(out)), -ENOMEDIUM);
	unlink(path);
}

TEST(target_shape_and_errors)
{
	struct perfctr_target *t, *t2;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	char abs_path[4200], slash[600];
	pid_t tid;
	int cpu;

	require_cgroup2();
	t = perfctr_target__new_cgroup("/", NULL);
	REQUIRE(t);
	CHECK_EQ_INT(perfctr_target__kind(t), PERFCTR_TARGET_CGROUP);
	CHECK_EQ_INT(perfctr_target__pid(t), -1);
	CHECK_STR(perfctr_target__cgroup_path(t), mnt);
	CHECK_EQ_U64(perfctr_target__nr_units(t), online);
	for (size_t u = 0; u < perfctr_target__nr_units(t); u++) {
		CHECK_EQ_INT(perfctr_target__unit(t, u, &tid, &cpu), 0);
		/* The directory's fd, as perf_event_open takes it. */
		CHECK(tid >= 0 && fcntl(tid, F_GETFD) >= 0);
		CHECK(cpu >= 0);
	}
	perfctr_target__delete(t);
	CHECK(fcntl(tid, F_GETFD) < 0);	/* closed with the target */

	make_cgroup("perfctr-test-shape");
	t = perfctr_target__new_cgroup(cgroup_name("perfctr-test-shape"), "0");
	REQUIRE(t);
	CHECK_EQ_U64(perfctr_target__nr_units(t), 1);
	snprintf(abs_path, sizeof(abs_path), "%s/%s", mnt,
		 cgroup_name("perfctr-test-shape"));
	CHECK_STR(perfctr_target__cgroup_path(t), abs_path);
	/* The same cgroup by its absolute path and as /proc/PID/cgroup
	 * names it. */
	t2 = perfctr_target__new_cgroup(abs_path, "0");
	REQUIRE(t2);
	CHECK_STR(perfctr_target__cgroup_path(t2), abs_path);
	perfctr_target__delete(t2);
	snprintf(slash, sizeof(slash), "/%s",
		 cgroup_name("perfctr-test-shape"));
	t2 = perfctr_target__new_cgroup(slash, "0");
	REQUIRE(t2);
	CHECK_STR(perfctr_target__cgroup_path(t2), abs_path);
	perfctr_target__delete(t2);
	perfctr_target__delete(t);

	errno = 0;
	CHECK(!perfctr_target__new_cgroup(cgroup_name("perfctr-test-no-such"),
					  NULL));
	CHECK_EQ_INT(errno, ENOENT);
	CHECK(!perfctr_target__new_cgroup(
		cgroup_name("perfctr-test-shape/cgroup.procs"), NULL));
	CHECK_EQ_INT(errno, ENOTDIR);
	/* An absolute path elsewhere is not a cgroup: it is looked up under
	 * the mount, where it does not exist. */
	CHECK(!perfctr_target__new_cgroup("/tmp", NULL));
	CHECK_EQ_INT(errno, ENOENT);
	CHECK(!perfctr_target__new_cgroup("/", "0-"));
	CHECK_EQ_INT(errno, EINVAL);
	CHECK(!perfctr_target__new_cgroup("/", "100000"));
	CHECK_EQ_INT(errno, ENODEV);
	remove_made();
}

/* Two cgroups busy at once, each counted exactly, on every CPU. */
TEST(two_busy_cgroups_exact)
{
	struct perfctr_session *sa, *sb;
	struct perfctr_target *ta, *tb;
	struct member a, b;

	require_cgroup2();
	make_cgroup("perfctr-test-a");
	make_cgroup("perfctr-test-b");
	member_spawn(&a, made[0], 30000);
	member_spawn(&b, made[1], 50000);
	sa = cgroup_session(cgroup_name("perfctr-test-a"), &ta);
	sb = cgroup_session(made[1], &tb);
	member_release(&a);
	member_release(&b);
	member_wait(&a);
	member_wait(&b);
	CHECK_EQ_U64(stop_and_value(sa), 30000);
	CHECK_EQ_U64(stop_and_value(sb), 50000);
	perfctr_session__delete(sa);
	perfctr_session__delete(sb);
	perfctr_target__delete(ta);
	perfctr_target__delete(tb);
	remove_made();
}

/* A parent cgroup counts the tasks of its descendants and its own. */
TEST(nested_cgroups_exact)
{
	struct perfctr_session *sp, *s1, *s2;
	struct perfctr_target *tp, *t1, *t2;
	struct member p, c1, c2;

	require_cgroup2();
	make_cgroup("perfctr-test-p");
	make_cgroup("perfctr-test-p/c1");
	make_cgroup("perfctr-test-p/c1/deep");
	member_spawn(&p, made[0], 700);
	member_spawn(&c1, made[1], 11000);
	member_spawn(&c2, made[2], 23000);
	sp = cgroup_session(cgroup_name("perfctr-test-p"), &tp);
	s1 = cgroup_session(cgroup_name("perfctr-test-p/c1"), &t1);
	s2 = cgroup_session(cgroup_name("perfctr-test-p/c1/deep"), &t2);
	member_release(&p);
	member_release(&c1);
	member_release(&c2);
	member_wait(&p);
	member_wait(&c1);
	member_wait(&c2);
	CHECK_EQ_U64(stop_and_value(sp), 700 + 11000 + 23000);
	CHECK_EQ_U64(stop_and_value(s1), 11000 + 23000);
	CHECK_EQ_U64(stop_and_value(s2), 23000);
	perfctr_session__delete(sp);
	perfctr_session__delete(s1);
	perfctr_session__delete(s2);
	perfctr_target__delete(tp);
	perfctr_target__delete(t1);
	perfctr_target__delete(t2);
	remove_made();
}

TEST(sets_on_a_cgroup_switch_on_wall_time)
{
	/* A cgroup is counted per CPU: its sets switch on wall time, also
	 * while nothing of it runs, and count its calls. */
	struct perfctr_session *s;
	struct perfctr_target *t;
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	struct perfctr_set_info i0 = { .sz = sizeof(i0) }, i1 = { .sz = sizeof(i1) };
	PERFCTR_OPTS(perfctr_set_desc, d0, .id = 0, .flags = PERFCTR_SET_SWITCH_TIMEOUT,
		     .timeout_ns = 2000000);
	PERFCTR_OPTS(perfctr_set_desc, d1, .id = 1, .flags = PERFCTR_SET_SWITCH_TIMEOUT,
		     .timeout_ns = 2000000);
	struct member m;
	struct timespec nap = { 0, 10000000 };
	long calls = 0;

	require_cgroup2();
	make_cgroup("perfctr-test-sets");
	member_spawn(&m, made[0], 30000);
	s = session_with(TP_GETPPID, 0);
	REQUIRE(perfctr_session__create_set(s, &d0) == 0);
	REQUIRE(perfctr_session__create_set(s, &d1) == 0);
	REQUIRE(perfctr_session__add_events_to_set(s, 1, TP_GETPPID, &err) == 1);
	REQUIRE(perfctr_session__set_signal(s, SIGRTMIN + 6, 0) == 0);
	t = perfctr_target__new_cgroup(cgroup_name("perfctr-test-sets"), NULL);
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	REQUIRE(perfctr_session__start(s) == 0);
	/* Asleep until 10 runs: 20 ms of wall time at 2 ms a run on a quiet
	 * machine, longer when the timeout's signals wait for a loaded CPU.
	 * Waiting for the runs, not for a fixed time, keeps the case free of
	 * the load (deadline 10 s). */
	for (int naps = 0; naps < 1000; naps++) {
		struct timespec left = nap;

		REQUIRE(perfctr_session__set_info(s, 0, &i0) == 0);
		REQUIRE(perfctr_session__set_info(s, 1, &i1) == 0);
		if (i0.runs + i1.runs >= 10)
			break;
		while (nanosleep(&left, &left) && errno == EINTR)
			;
	}
	/* Members of 30,000 calls (5 ms on a quiet machine, over two runs),
	 * one after another until each set has counted some: a loaded CPU
	 * may hold the switches back for the whole of one member's calls,
	 * not for a hundred (deadline: 100 members). */
	for (int k = 0; k < 100; k++) {
		if (k)
			member_spawn(&m, made[0], 30000);
		member_release(&m);
		member_wait(&m);
		calls += 30000;
		REQUIRE(perfctr_session__read(s) == 0);
		if (value_of(s, 0) && value_of(s, 1))
			break;
	}
	REQUIRE(perfctr_session__stop(s) == 0);
	REQUIRE(perfctr_session__read(s) == 0);
	REQUIRE(perfctr_session__set_info(s, 0, &i0) == 0);
	REQUIRE(perfctr_session__set_info(s, 1, &i1) == 0);
	CHECK(i0.runs + i1.runs >= 10);
	/* Calls made while a switch ran belong to no set. */
	CHECK(value_of(s, 0) + value_of(s, 1) <= (uint64_t)calls);
	if (!value_of(s, 0) || !value_of(s, 1))
		test_fail(__FILE__, __LINE__, "a set counted none of the calls: %" PRIu64
			  " and %" PRIu64 " in %" PRIu64 " and %" PRIu64 " runs, %ld calls",
			  value_of(s, 0), value_of(s, 1), i0.runs, i1.runs, calls);
	perfctr_session__delete(s);
	perfctr_target__delete(t);
	remove_made();
}

/* Samples of a sampler's events told apart by their ids. */
struct per_event {
	const struct perfctr_decoder *dec;
	const uint64_t *ids[2];
	size_t nr_ids[2];
	uint64_t samples[2];
	uint64_t other;
};

static int per_event_cb(struct perfctr_ring *ring,
			const struct perf_event_header *hdr, void *ctx)
{
	struct per_event *pe = ctx;
	PERFCTR_OPTS(perfctr_sample, s);

	(void)ring;
	if (hdr->type != PERF_RECORD_SAMPLE ||
	    perfctr_decoder__sample(pe->dec, hdr, &s))
		return 0;
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < pe->nr_ids[e]; i++)
			if (s.id == pe->ids[e][i]) {
				pe->samples[e]++;
				return 0;
			}
	pe->other++;
	return 0;
}

/*
 * perfctr_sampler__set_cgroup(): two events of one sampler on every CPU,
 * each in a cgroup of its own, into the same rings: a sample per call of
 * each cgroup's workload, none of the other's.
 */
TEST(sampler_event_per_cgroup)
{
	PERFCTR_OPTS(perfctr_sampler_opts, o, .data_pages = 256);
	struct perfctr_target *cpus, *ta, *tb, *proc;
	struct perfctr_ring *const *rings;
	struct perf_event_attr attr;
	struct perfctr_sampler *s;
	struct per_event pe;
	struct member a, b;

	require_cgroup2();
	require_tracepoints();
	make_cgroup("perfctr-test-sa");
	make_cgroup("perfctr-test-sb");
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)test_tracepoint_id(TP_GETPPID);
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID;
	cpus = perfctr_target__new_cpus(NULL);
	ta = perfctr_target__new_cgroup(cgroup_name("perfctr-test-sa"), NULL);
	tb = perfctr_target__new_cgroup(made[1], NULL);
	REQUIRE(cpus && ta && tb);

	/* Only CPU-wide units can take a cgroup of the event's own. */
	proc = perfctr_target__new_process(getpid());
	REQUIRE(proc);
	o.target = proc;
	s = perfctr_sampler__new(&o);
	REQUIRE(s);
	REQUIRE(perfctr_sampler__add_attr(s, &attr, "a") == 0);
	CHECK_EQ_INT(perfctr_sampler__set_cgroup(s, 0, cpus), -EINVAL);
	CHECK_EQ_INT(perfctr_sampler__set_cgroup(s, 1, ta), -EINVAL);
	REQUIRE(perfctr_sampler__set_cgroup(s, 0, ta) == 0);
	CHECK_EQ_INT(perfctr_sampler__open(s), -EINVAL);
	perfctr_sampler__delete(s);
	perfctr_target__delete(proc);

	member_spawn(&a, made[0], 3000);
	member_spawn(&b, made[1], 5000);
	o.target = cpus;
	s = perfctr_sampler__new(&o);
	REQUIRE(s);
	REQUIRE(perfctr_sampler__add_attr(s, &attr, "a") == 0);
	REQUIRE(perfctr_sampler__add_attr(s, &attr, "b") == 1);
	REQUIRE(perfctr_sampler__set_cgroup(s, 0, ta) == 0);
	REQUIRE(perfctr_sampler__set_cgroup(s, 1, tb) == 0);
	REQUIRE(perfctr_sampler__open(s) == 0);
	CHECK_EQ_INT(perfctr_sampler__set_cgroup(s, 0, tb), -EBUSY);
	REQUIRE(perfctr_sampler__enable(s) == 0);
	member_release(&a);
	member_release(&b);
	member_wait(&a);
	member_wait(&b);
	REQUIRE(perfctr_sampler__disable(s) == 0);
	memset(&pe, 0, sizeof(pe));
	pe.dec = perfctr_sampler__decoder(s);
	for (int e = 0; e < 2; e++)
		pe.nr_ids[e] = perfctr_sampler__ids(s, (size_t)e, &pe.ids[e]);
	rings = perfctr_sampler__rings(s);
	for (size_t i = 0; i < perfctr_sampler__nr_rings(s); i++)
		REQUIRE(perfctr_ring__drain(rings[i], per_event_cb, &pe) >= 0);
	CHECK_EQ_U64(perfctr_sampler__nr_rings(s),
		     (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	CHECK_EQ_U64(pe.samples[0], 3000);
	CHECK_EQ_U64(pe.samples[1], 5000);
	CHECK_EQ_U64(pe.other, 0);
	perfctr_sampler__delete(s);
	perfctr_target__delete(cpus);
	perfctr_target__delete(ta);
	perfctr_target__delete(tb);
	remove_made();
}

TEST_MAIN(TEST_CASE(mount_from_mountinfo),
	  TEST_CASE(target_shape_and_errors),
	  TEST_CASE(two_busy_cgroups_exact),
	  TEST_CASE(nested_cgroups_exact),
	  TEST_CASE(sets_on_a_cgroup_switch_on_wall_time),
	  TEST_CASE(sampler_event_per_cgroup))
