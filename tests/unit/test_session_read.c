// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The session's group read, fed through a pipe instead of a counter: the
 * PERF_FORMAT_GROUP|ID|TOTAL_TIME_* layout is matched to events by id
 * (whatever their order), times go to every member, and malformed
 * answers (short, more entries than members) are refused and leave the
 * last values in place.  No kernel counters are involved.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/session-internal.h"
#include "perfctr/perfctr.h"
#include "test.h"

struct fake {
	struct perfctr_session *s;
	int pipe[2];
};

/* A session with one group of three events on one unit, whose group fd is
 * the read end of a pipe. */
static void fake_setup(struct fake *f)
{
	struct perfctr_evlist *list = perfctr_evlist__new();
	struct perf_event_attr attr;
	static const char *const names[] = { "a", "b", "c" };

	f->s = perfctr_session__new(NULL);
	REQUIRE(f->s && list);
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	for (int i = 0; i < 3; i++)
		REQUIRE(perfctr_evlist__add_attr(list, &attr, names[i],
						 i ? 0 : (size_t)-1) == i);
	REQUIRE(perfctr_session__add_evlist(f->s, list) == 3);
	perfctr_evlist__delete(list);
	REQUIRE(pipe(f->pipe) == 0);

	f->s->nr_units = 1;
	f->s->units = calloc(1, sizeof(*f->s->units));
	f->s->slots = calloc(3, sizeof(*f->s->slots));
	f->s->group_fds = calloc(1, sizeof(*f->s->group_fds));
	f->s->read_buf_words = 3 + 2 * 3;
	f->s->read_buf = calloc(f->s->read_buf_words, sizeof(uint64_t));
	REQUIRE(f->s->units && f->s->slots && f->s->group_fds && f->s->read_buf);
	for (int i = 0; i < 3; i++) {
		f->s->slots[i].fd = 1000 + i;	/* "open"; never used as an fd */
		f->s->slots[i].id = 10 * (i + 1);
		f->s->slots[i].count.status = PERFCTR_COUNT_NOT_COUNTED;
	}
	f->s->group_fds[0] = f->pipe[0];
}

static void fake_teardown(struct fake *f)
{
	for (int i = 0; i < 3; i++)
		f->s->slots[i].fd = -1;
	f->s->group_fds[0] = -1;
	perfctr_session__delete(f->s);
	close(f->pipe[0]);
	close(f->pipe[1]);
}

static uint64_t unit_value(struct fake *f, size_t idx)
{
	struct perfctr_count c;

	if (perfctr_session__unit_count(f->s, idx, 0, &c))
		return UINT64_MAX;
	return c.value;
}

static void feed(struct fake *f, const uint64_t *words, size_t n)
{
	REQUIRE(write(f->pipe[1], words, n * sizeof(*words)) ==
		(ssize_t)(n * sizeof(*words)));
}

TEST(values_matched_by_id)
{
	struct fake f;
	struct perfctr_count c;
	/* nr, enabled, running, then { value, id } in the kernel's order */
	const uint64_t answer[] = { 3, 1000, 400, 7, 30, 5, 10, 6, 20 };

	fake_setup(&f);
	feed(&f, answer, 9);
	CHECK_EQ_INT(pc_session_read_group(f.s, 0, 0), 0);
	CHECK_EQ_U64(unit_value(&f, 0), 5);
	CHECK_EQ_U64(unit_value(&f, 1), 6);
	CHECK_EQ_U64(unit_value(&f, 2), 7);
	CHECK_EQ_INT(perfctr_session__unit_count(f.s, 2, 0, &c), 0);
	CHECK_EQ_U64(c.time_enabled, 1000);
	CHECK_EQ_U64(c.time_running, 400);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_OK);
	CHECK(perfctr_count__scaled(&c) == 17.5);
	fake_teardown(&f);
}

TEST(never_ran_is_not_counted)
{
	struct fake f;
	struct perfctr_count c;
	const uint64_t answer[] = { 3, 1000, 0, 0, 10, 0, 20, 0, 30 };

	fake_setup(&f);
	feed(&f, answer, 9);
	CHECK_EQ_INT(pc_session_read_group(f.s, 0, 0), 0);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_INT(perfctr_session__unit_count(f.s, i, 0, &c), 0);
		CHECK_EQ_INT(c.status, PERFCTR_COUNT_NOT_COUNTED);
		CHECK_EQ_U64(c.time_enabled, 1000);
	}
	fake_teardown(&f);
}

TEST(member_not_open_is_skipped)
{
	/* A member that could not be opened is not in the kernel's answer;
	 * an id nobody has is ignored. */
	struct fake f;
	struct perfctr_count c;
	const uint64_t answer[] = { 3, 50, 50, 1, 10, 2, 99, 3, 30 };

	fake_setup(&f);
	f.s->slots[1].fd = -1;
	f.s->slots[1].open_err = ENOENT;
	f.s->slots[1].count.status = PERFCTR_COUNT_NOT_SUPPORTED;
	f.s->slots[1].count.errnum = ENOENT;
	feed(&f, answer, 9);
	CHECK_EQ_INT(pc_session_read_group(f.s, 0, 0), 0);
	CHECK_EQ_U64(unit_value(&f, 0), 1);
	CHECK_EQ_U64(unit_value(&f, 2), 3);
	CHECK_EQ_INT(perfctr_session__unit_count(f.s, 1, 0, &c), 0);
	CHECK_EQ_INT(c.status, PERFCTR_COUNT_NOT_SUPPORTED);
	CHECK_EQ_INT(c.errnum, ENOENT);
	CHECK_EQ_U64(c.value, 0);
	fake_teardown(&f);
}

TEST(malformed_answers_refused)
{
	struct fake f;
	const uint64_t good[] = { 3, 10, 10, 1, 10, 2, 20, 3, 30 };
	const uint64_t too_many[] = { 4, 10, 10, 9, 10, 9, 20, 9, 30 };
	const uint64_t short_answer[] = { 3, 10, 10, 9, 10 };

	fake_setup(&f);
	feed(&f, good, 9);
	CHECK_EQ_INT(pc_session_read_group(f.s, 0, 0), 0);
	feed(&f, too_many, 9);
	CHECK_EQ_INT(pc_session_read_group(f.s, 0, 0), -EIO);
	feed(&f, short_answer, 5);
	CHECK_EQ_INT(pc_session_read_group(f.s, 0, 0), -EIO);
	/* the last good values stay */
	CHECK_EQ_U64(unit_value(&f, 0), 1);
	CHECK_EQ_U64(unit_value(&f, 1), 2);
	CHECK_EQ_U64(unit_value(&f, 2), 3);
	fake_teardown(&f);
}

TEST_MAIN(TEST_CASE(values_matched_by_id),
	  TEST_CASE(never_ran_is_not_counted),
	  TEST_CASE(member_not_open_is_skipped),
	  TEST_CASE(malformed_answers_refused))
