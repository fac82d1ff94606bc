// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Cgroups counted through BPF (perfctr_bpf_counters): one counter per CPU
 * and event, and a program at every context switch that adds each delta
 * to the outgoing task's cgroup and its counted ancestors.  The counts
 * must be the exact getppid truth and equal those of the kernel's cgroup
 * events, counted at the same time on the same cgroups: two busy cgroups
 * at once, nested cgroups, start/stop, and the fallback to cgroup events;
 * and the program's memory of which slots a cgroup counts in must follow
 * a task moved to another cgroup and cgroups counted or dropped after its
 * cgroup was met.  The maps grow with the cgroups counted, up to the cap.
 */
#include <sched.h>
#include <signal.h>

#include "cgroup_util.h"

static struct perfctr_bpf_counters *bc;

/* Cgroup names of this process (cgroup_name()): "perfctr-bpf" + suffix,
 * tagged with the pid. */
static const char *name(const char *suffix)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "perfctr-bpf%s", suffix);
	return cgroup_name(rel);
}

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

/* A child in cgroup @dir that makes calls[i] getppid calls at its i-th
 * release and says when each batch is done, so that a test can move it or
 * change what is counted between batches. */
struct phased {
	pid_t pid;
	int go_fd, done_fd;
};

static void phased_spawn(struct phased *m, const char *dir,
			 const long *calls, int n)
{
	int go[2], done[2];
	char path[4300], c;

	REQUIRE(pipe(go) == 0 && pipe(done) == 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	m->pid = fork();
	REQUIRE(m->pid >= 0);
	if (m->pid == 0) {
		int fd = open(path, O_WRONLY);

		close(go[1]);
		close(done[0]);
		if (fd < 0 || write(fd, "0\n", 2) != 2)
			_exit(2);
		close(fd);
		if (write(done[1], "r", 1) != 1)
			_exit(3);
		for (int i = 0; i < n; i++) {
			if (read(go[0], &c, 1) != 1)
				_exit(3);
			do_getppid(calls[i]);
			if (write(done[1], "d", 1) != 1)
				_exit(3);
		}
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	REQUIRE(read(done[0], &c, 1) == 1);
	m->go_fd = go[1];
	m->done_fd = done[0];
}

/* The next batch, and back when it is done (the child then waits). */
static void phased_run(struct phased *m)
{
	char c;

	CHECK(write(m->go_fd, "g", 1) == 1);
	REQUIRE(read(m->done_fd, &c, 1) == 1);
}

static void phased_wait(struct phased *m)
{
	int status = -1;

	close(m->go_fd);
	close(m->done_fd);
	REQUIRE(waitpid(m->pid, &status, 0) == m->pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Move process @pid into cgroup @dir, as an administrator would. */
static void move_to(pid_t pid, const char *dir)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "w");
	REQUIRE(f);
	fprintf(f, "%d\n", (int)pid);
	REQUIRE(fclose(f) == 0);
}

TEST(two_busy_cgroups_exact)
{
	struct perfctr_session *sa, *sb, *ea, *eb;
	struct perfctr_target *ta, *tb, *tea, *teb;
	struct member a, b;

	require_bpf();
	make_cgroup(name("-a"));
	make_cgroup(name("-b"));
	member_spawn(&a, made[0], 30000);
	member_spawn(&b, made[1], 50000);
	sa = open_cg(name("-a"), true, &ta);
	sb = open_cg(made[1], true, &tb);
	ea = open_cg(made[0], false, &tea);
	eb = open_cg(name("-b"), false, &teb);
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
	make_cgroup(name("-p"));
	make_cgroup(name("-p/c1"));
	make_cgroup(name("-p/c1/deep"));
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
	make_cgroup(name("-run"));
	member_spawn(&m1, made[0], 20000);
	member_spawn(&m2, made[0], 9000);
	s = open_cg(made[0], true, &t);
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

/* A task counted in one cgroup, then moved to another: each cgroup
 * counts what the task did while it was there. */
TEST(moved_task_counts_in_its_new_cgroup)
{
	static const long calls[2] = { 6000, 8000 };
	struct perfctr_session *sa, *sb, *ea, *eb;
	struct perfctr_target *ta, *tb, *tea, *teb;
	struct phased m;

	require_bpf();
	make_cgroup(name("-from"));
	make_cgroup(name("-to"));
	phased_spawn(&m, made[0], calls, 2);
	sa = open_cg(made[0], true, &ta);
	sb = open_cg(made[1], true, &tb);
	ea = open_cg(made[0], false, &tea);
	eb = open_cg(made[1], false, &teb);
	phased_run(&m);
	move_to(m.pid, made[1]);
	phased_run(&m);
	phased_wait(&m);
	CHECK_EQ_U64(stop_and_value(sa), 6000);
	CHECK_EQ_U64(stop_and_value(sb), 8000);
	CHECK_EQ_U64(stop_and_value(ea), 6000);
	CHECK_EQ_U64(stop_and_value(eb), 8000);
	close_cg(sa, ta);
	close_cg(sb, tb);
	close_cg(ea, tea);
	close_cg(eb, teb);
	remove_made();
}

/* The program remembers the counted slots of each cgroup it meets; a
 * parent counted after its child's cgroup was met counts from then on,
 * and a slot freed and given to another cgroup gets nothing more of
 * the child's. */
TEST(counted_set_changes_after_cgroups_were_met)
{
	static const long calls[3] = { 3000, 5000, 7000 };
	struct perfctr_session *sc, *sp, *sq;
	struct perfctr_target *tc, *tp, *tq;
	struct phased m;

	require_bpf();
	make_cgroup(name("-set"));
	make_cgroup(name("-set/c"));
	make_cgroup(name("-other"));
	phased_spawn(&m, made[1], calls, 3);
	sc = open_cg(made[1], true, &tc);
	phased_run(&m);
	sp = open_cg(made[0], true, &tp);
	phased_run(&m);
	CHECK_EQ_U64(stop_and_value(sp), 5000);
	/* The parent's slot is freed, and the next cgroup counted is
	 * given the first free slot: that one. */
	close_cg(sp, tp);
	sq = open_cg(made[2], true, &tq);
	phased_run(&m);
	phased_wait(&m);
	CHECK_EQ_U64(stop_and_value(sq), 0);
	CHECK_EQ_U64(stop_and_value(sc), 15000);
	close_cg(sq, tq);
	close_cg(sc, tc);
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
	make_cgroup(name("-sets"));
	member_spawn(&m, made[0], 4000);
	/* Event sets need the kernel's own counters. */
	s = session_with(TP_GETPPID, PERFCTR_SESSION_ENABLE_ON_ATTACH);
	REQUIRE(perfctr_session__create_set(s, &d1) == 0);
	REQUIRE(perfctr_session__add_events_to_set(s, 1, TP_GETPPID, &err) == 1);
	t = perfctr_target__new_cgroup_opts(made[0], NULL, &opts);
	REQUIRE(t);
	REQUIRE(perfctr_session__attach(s, t) == 0);
	CHECK(!perfctr_session__counts_by_bpf(s));
	member_release(&m);
	member_wait(&m);
	CHECK_EQ_U64(stop_and_value(s), 4000);
	close_cg(s, t);
	remove_made();
}

/* More cgroups than a chunk of the sums holds (256) grow the maps: all
 * of them count through BPF up to max_cgroups, exactly, in the second
 * chunk too; past the cap a session falls back to cgroup events (and
 * says so in counts_by_bpf).  A freeze reads them all as of one moment:
 * calls made while frozen appear after the thaw. */
#define MANY 514
TEST(maps_grow_past_a_chunk_and_freeze_reads_them)
{
	static const long calls[2] = { 4000, 1000 };
	PERFCTR_OPTS(perfctr_bpf_counters_opts, o, .max_cgroups = 512,
		     .max_events = 1);
	struct perfctr_bpf_counters *many;
	static struct perfctr_session *s[MANY];
	static struct perfctr_target *t[MANY];
	static char path[MANY][4300];
	const char *parent;
	struct phased in_bpf;
	struct member in_events;
	int i, nr = 0, by_bpf = 0;

	require_bpf();
	many = perfctr_bpf_counters__new(&o);
	REQUIRE(many && !perfctr_bpf_counters__error(many));
	parent = make_cgroup(name("-many"));
	for (i = 0; i < MANY; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/c%d", parent, i);
		REQUIRE(mkdir(path[i], 0755) == 0);
		nr++;
	}
	phased_spawn(&in_bpf, path[300], calls, 2);
	member_spawn(&in_events, path[MANY - 1], 2000);
	for (i = 0; i < MANY; i++) {
		PERFCTR_OPTS(perfctr_cgroup_opts, co, .bpf = many);

		s[i] = session_with(TP_GETPPID, PERFCTR_SESSION_ENABLE_ON_ATTACH);
		t[i] = perfctr_target__new_cgroup_opts(path[i], NULL, &co);
		REQUIRE(t[i]);
		REQUIRE(perfctr_session__attach(s[i], t[i]) == 0);
		by_bpf += perfctr_session__counts_by_bpf(s[i]);
	}
	CHECK_EQ_INT(by_bpf, 512);
	CHECK(perfctr_session__counts_by_bpf(s[511]));
	CHECK(!perfctr_session__counts_by_bpf(s[MANY - 1]));
	phased_run(&in_bpf);
	member_release(&in_events);
	member_wait(&in_events);
	REQUIRE(perfctr_bpf_counters__freeze(many) == 0);
	phased_run(&in_bpf);		/* while frozen: not in the reads */
	for (i = 0; i < MANY; i++)
		REQUIRE(perfctr_session__read(s[i]) == 0);
	CHECK_EQ_U64(value_of(s[300], 0), 4000);
	CHECK_EQ_U64(value_of(s[299], 0), 0);
	CHECK_EQ_U64(value_of(s[0], 0), 0);
	CHECK_EQ_U64(value_of(s[511], 0), 0);
	CHECK_EQ_U64(value_of(s[MANY - 1], 0), 2000);
	perfctr_bpf_counters__thaw(many);
	phased_wait(&in_bpf);
	REQUIRE(perfctr_session__read(s[300]) == 0);
	CHECK_EQ_U64(value_of(s[300], 0), 5000);
	CHECK_EQ_U64(stop_and_value(s[300]), 5000);
	CHECK_EQ_U64(stop_and_value(s[MANY - 1]), 2000);
	for (i = 0; i < MANY; i++)
		close_cg(s[i], t[i]);
	perfctr_bpf_counters__delete(many);
	while (nr > 0)
		rmdir(path[--nr]);
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
	  TEST_CASE(moved_task_counts_in_its_new_cgroup),
	  TEST_CASE(counted_set_changes_after_cgroups_were_met),
	  TEST_CASE(fallback_to_cgroup_events),
	  TEST_CASE(maps_grow_past_a_chunk_and_freeze_reads_them))
