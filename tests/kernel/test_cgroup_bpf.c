// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Cgroups counted through BPF (perfctr_bpf_counters): one counter per CPU
 * and event, and a program at every context switch that adds each delta
 * to the outgoing task's cgroup and its counted ancestors.  The counts
 * must be the exact getppid truth and equal those of the kernel's cgroup
 * events, counted at the same time on the same cgroups: two busy cgroups
 * at once, nested cgroups, start/stop, and the fallback to cgroup events.
 */
#include <sched.h>
#include <signal.h>

#include "cgroup_util.h"

static struct perfctr_bpf_counters *bc;

static void unload(void)
{
	perfctr_bpf_counters__delete(bc);
}

static void require_bpf(void)
{
	int err;

	require_cgroup2();
	if (!bc) {
		bc = perfctr_bpf_counters__new(NULL);
		REQUIRE(bc);
		atexit(unload);
	}
	err = perfctr_bpf_counters__error(bc);
	if (err == -EOPNOTSUPP)
		test_skip("libperfctr built without BPF (libbpf-dev, "
			  "bpftool, clang)");
	if (err)
		test_skip("the BPF program does not load here: %s",
			  strerror(-err));
}

/* A session counting getppid in cgroup @path, through BPF or not. */
static struct perfctr_session *open_cg(const char *path, bool bpf,
				       struct perfctr_target **t)
{
	struct perfctr_session *s = session_with(TP_GETPPID,
						 PERFCTR_SESSION_ENABLE_ON_ATTACH);
	PERFCTR_OPTS(perfctr_cgroup_opts, opts, .bpf = bpf ? bc : NULL);

	*t = perfctr_target__new_cgroup_opts(path, NULL, &opts);
	REQUIRE(*t);
	REQUIRE(perfctr_session__attach(s, *t) == 0);
	CHECK(perfctr_session__counts_by_bpf(s) == bpf);
	return s;
}

static uint64_t stop_and_value(struct perfctr_session *s)
{
	struct perfctr_count c, sum = { 0 };

	CHECK_EQ_INT(perfctr_session__stop(s), 0);
	CHECK_EQ_INT(perfctr_session__read(s), 0);
	/* The per-CPU units add up to the total. */
	for (size_t u = 0; u < perfctr_session__nr_units(s); u++) {
		REQUIRE(perfctr_session__unit_count(s, 0, u, &c) == 0);
		sum.value += c.value;
	}
	CHECK_EQ_U64(sum.value, value_of(s, 0));
	return value_of(s, 0);
}

static void close_cg(struct perfctr_session *s, struct perfctr_target *t)
{
	perfctr_session__delete(s);
	perfctr_target__delete(t);
}

TEST(two_busy_cgroups_exact)
{
	struct perfctr_session *sa, *sb, *ea, *eb;
	struct perfctr_target *ta, *tb, *tea, *teb;
	struct member a, b;

	require_bpf();
	make_cgroup("perfctr-bpf-a");
	make_cgroup("perfctr-bpf-b");
	member_spawn(&a, made[0], 30000);
	member_spawn(&b, made[1], 50000);
	sa = open_cg("perfctr-bpf-a", true, &ta);
	sb = open_cg(made[1], true, &tb);
	ea = open_cg("perfctr-bpf-a", false, &tea);
	eb = open_cg("perfctr-bpf-b", false, &teb);
	member_release(&a);
	member_release(&b);
	member_wait(&a);
	member_wait(&b);
	CHECK_EQ_U64(stop_and_value(sa), 30000);
	CHECK_EQ_U64(stop_and_value(sb), 50000);
	CHECK_EQ_U64(stop_and_value(ea), 30000);
	CHECK_EQ_U64(stop_and_value(eb), 50000);
	close_cg(sa, ta);
	close_cg(sb, tb);
	close_cg(ea, tea);
	close_cg(eb, teb);
	remove_made();
}

TEST(nested_cgroups_exact)
{
	struct perfctr_session *s[3], *e[3];
	struct perfctr_target *ts[3], *te[3];
	static const uint64_t want[3] = { 700 + 11000 + 23000, 11000 + 23000,
					  23000 };
	struct member p, c1, c2;
	int i;

	require_bpf();
	make_cgroup("perfctr-bpf-p");
	make_cgroup("perfctr-bpf-p/c1");
	make_cgroup("perfctr-bpf-p/c1/deep");
	member_spawn(&p, made[0], 700);
	member_spawn(&c1, made[1], 11000);
	member_spawn(&c2, made[2], 23000);
	for (i = 0; i < 3; i++) {
		s[i] = open_cg(made[i], true, &ts[i]);
		e[i] = open_cg(made[i], false, &te[i]);
	}
	member_release(&p);
	member_release(&c1);
	member_release(&c2);
	member_wait(&p);
	member_wait(&c1);
	member_wait(&c2);
	for (i = 0; i < 3; i++) {
		CHECK_EQ_U64(stop_and_value(s[i]), want[i]);
		CHECK_EQ_U64(stop_and_value(e[i]), want[i]);
		close_cg(s[i], ts[i]);
		close_cg(e[i], te[i]);
	}
	remove_made();
}

/* Reads while the cgroup's task runs are exact too (the program is run
 * on each CPU before the read), and calls made while the session is
 * stopped are not counted. */
TEST(reads_while_running_and_stop)
{
	struct perfctr_session *s;
	struct perfctr_target *t;
	struct member m1, m2;

	require_bpf();
	make_cgroup("perfctr-bpf-run");
	member_spawn(&m1, made[0], 20000);
	member_spawn(&m2, made[0], 9000);
	s = open_cg("perfctr-bpf-run", true, &t);
	member_release(&m1);
	member_wait(&m1);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), 20000);
	REQUIRE(perfctr_session__stop(s) == 0);
	member_release(&m2);
	member_wait(&m2);
	REQUIRE(perfctr_session__read(s) == 0);
	CHECK_EQ_U64(value_of(s, 0), 20000);
	REQUIRE(perfctr_session__start(s) == 0);
	REQUIRE(perfctr_session__reset(s) == 0);
	CHECK_EQ_U64(stop_and_value(s), 0);
	close_cg(s, t);
	remove_made();
}

/* What BPF cannot do falls back to cgroup events, exactly. */
TEST(fallback_to_cgroup_events)
{
	struct perfctr_session *s;
	struct perfctr_target *t;
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	PERFCTR_OPTS(perfctr_set_desc, d1, .id = 1);
	PERFCTR_OPTS(perfctr_cgroup_opts, opts, .bpf = bc);
	struct member m;

	require_bpf();
	make_cgroup("perfctr-bpf-sets");
	member_spawn(&m, made[0], 4000);
	/* Event sets need the kernel's own counters. */
	s = session_with(TP_GETPPID, PERFCTR_SESSION_ENABLE_ON_ATTACH);
	REQUIRE(perfctr_session__create_set(s, &d1) == 0);
	REQUIRE(perfctr_session__add_events_to_set(s, 1, TP_GETPPID, &err) == 1);
	t = perfctr_target__new_cgroup_opts("perfctr-bpf-sets", NULL, &opts);
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK(!perfctr_session__counts_by_bpf(s));
	member_release(&m);
	member_wait(&m);
	CHECK_EQ_U64(stop_and_value(s), 4000);
	close_cg(s, t);
	remove_made();
}

TEST(opts_checked)
{
	struct { struct perfctr_cgroup_opts o; char more[8]; } big;

	require_cgroup2();
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.more[3] = 1;
	errno = 0;
	CHECK(!perfctr_target__new_cgroup_opts("/", NULL, &big.o));
	CHECK_EQ_INT(errno, EINVAL);
	CHECK_EQ_INT(perfctr_bpf_counters__error(NULL), -EINVAL);
}

TEST_MAIN(TEST_CASE(opts_checked),
	  TEST_CASE(two_busy_cgroups_exact),
	  TEST_CASE(nested_cgroups_exact),
	  TEST_CASE(reads_while_running_and_stop),
	  TEST_CASE(fallback_to_cgroup_events))
