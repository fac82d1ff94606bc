/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The perfctrd wire decoders (sys/broker-wire.h), by table: a valid message
 * of each kind, then one row per way of damaging it, each with the error
 * the decoder must give.  The daemon runs these decoders on whatever a user
 * sends, so every refusal is pinned here.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <string.h>

#include "sys/broker-wire.h"
#include "test.h"

static uint64_t buf[PC_BROKER_MSG_MAX / 8 + 2];

static int make_open(uint32_t target, int cpu, uint32_t flags)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	return pc_broker_encode_open(buf, sizeof(buf), target, cpu, flags,
				     &attr, sizeof(attr));
}

/* Byte offsets into an OPEN message. */
#define HDR		sizeof(struct pc_broker_hdr)
#define BODY(f)		(HDR + offsetof(struct pc_broker_open_body, f))
#define ATTR(f)		(HDR + sizeof(struct pc_broker_open_body) + \
			 offsetof(struct perf_event_attr, f))

static void put32(size_t off, uint32_t v)
{
	memcpy((char *)buf + off, &v, sizeof(v));
}

TEST(open_table)
{
	static const struct {
		const char *what;
		uint32_t target;
		int cpu;
		uint32_t flags;
		unsigned int nr_fds;
		long off;	/* -1: no change */
		uint32_t value;
		int len_delta;
		int rc;
	} rows[] = {
		{ "pid target, one pidfd", PC_BROKER_TARGET_PID, -1, 0, 1, -1, 0, 0, 0 },
		{ "cpu target, no fd", PC_BROKER_TARGET_CPU, 0, 0, 0, -1, 0, 0, 0 },
		{ "cgroup target, dir fd", PC_BROKER_TARGET_CGROUP, 1, 0, 1, -1, 0, 0, 0 },
		{ "group member", PC_BROKER_TARGET_PID, -1, PC_BROKER_F_GROUP, 2, -1, 0, 0, 0 },
		{ "pid target without pidfd", PC_BROKER_TARGET_PID, -1, 0, 0, -1, 0, 0, -EBADF },
		{ "cpu target with a stray fd", PC_BROKER_TARGET_CPU, 0, 0, 1, -1, 0, 0, -EBADF },
		{ "group without leader fd", PC_BROKER_TARGET_PID, -1, PC_BROKER_F_GROUP, 1, -1, 0, 0, -EBADF },
		{ "three fds", PC_BROKER_TARGET_PID, -1, PC_BROKER_F_GROUP, 3, -1, 0, 0, -EBADF },
		{ "cpu target on cpu -1", PC_BROKER_TARGET_CPU, -1, 0, 0, -1, 0, 0, -EINVAL },
		{ "pid target on cpu -2", PC_BROKER_TARGET_PID, -2, 0, 1, -1, 0, 0, -EINVAL },
		{ "unknown target", PC_BROKER_TARGET_CPU, 0, 0, 0, (long)BODY(target), 9, 0, -EINVAL },
		{ "target 0", PC_BROKER_TARGET_CPU, 0, 0, 0, (long)BODY(target), 0, 0, -EINVAL },
		{ "unknown flag", PC_BROKER_TARGET_CPU, 0, 0, 0, (long)BODY(flags), 1u << 7, 0, -EPROTO },
		{ "bad magic", PC_BROKER_TARGET_CPU, 0, 0, 0, 0, 0x12345678, 0, -EPROTO },
		{ "version 2", PC_BROKER_TARGET_CPU, 0, 0, 0, 4, 2 | (PC_BROKER_OPEN << 16), 0, -EPROTO },
		{ "unknown type", PC_BROKER_TARGET_CPU, 0, 0, 0, 4, 1 | (77u << 16), 0, -EPROTO },
		{ "reply type as request", PC_BROKER_TARGET_CPU, 0, 0, 0, 4, 1 | (0x81u << 16), 0, -EPROTO },
		{ "header reserved set", PC_BROKER_TARGET_CPU, 0, 0, 0, 12, 1, 0, -EPROTO },
		{ "header length short", PC_BROKER_TARGET_CPU, 0, 0, 0, 8, 100, 0, -EPROTO },
		{ "truncated by 8", PC_BROKER_TARGET_CPU, 0, 0, 0, -1, 0, -8, -EPROTO },
		{ "truncated to the header", PC_BROKER_TARGET_CPU, 0, 0, 0, -1, 0, -(int)(sizeof(struct perf_event_attr) + 16), -EPROTO },
		{ "truncated mid header", PC_BROKER_TARGET_CPU, 0, 0, 0, -1, 0, -(int)(sizeof(struct perf_event_attr) + 16 + 9), -EPROTO },
		{ "8 bytes too many", PC_BROKER_TARGET_CPU, 0, 0, 0, -1, 0, 8, -EPROTO },
		{ "attr_size beyond the cap", PC_BROKER_TARGET_CPU, 0, 0, 0, (long)BODY(attr_size), PC_BROKER_ATTR_MAX + 8, 0, -E2BIG },
		{ "attr_size huge", PC_BROKER_TARGET_CPU, 0, 0, 0, (long)BODY(attr_size), 0xfffffff8u, 0, -E2BIG },
		{ "attr_size not the body", PC_BROKER_TARGET_CPU, 0, 0, 0, (long)BODY(attr_size), 120, 0, -EPROTO },
		{ "attr.size not attr_size", PC_BROKER_TARGET_CPU, 0, 0, 0, (long)ATTR(size), 120, 0, -EINVAL },
		{ "attr.size 0", PC_BROKER_TARGET_CPU, 0, 0, 0, (long)ATTR(size), 0, 0, -EINVAL },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pc_broker_msg m;
		int len = make_open(rows[i].target, rows[i].cpu, rows[i].flags);
		int rc;

		REQUIRE(len > 0);
		if (rows[i].off >= 0)
			put32((size_t)rows[i].off, rows[i].value);
		len += rows[i].len_delta;
		if (rows[i].len_delta > 0) {
			/* the header says the longer length too */
			memset((char *)buf + len - rows[i].len_delta, 0,
			       (size_t)rows[i].len_delta);
			put32(8, (uint32_t)len);
		}
		rc = pc_broker_decode_request(buf, (size_t)len, rows[i].nr_fds,
					      &m);
		if (rc != rows[i].rc)
			test_fail(__FILE__, __LINE__, "%s: %d, expected %d",
				  rows[i].what, rc, rows[i].rc);
		if (!rc && m.open->target != rows[i].target)
			test_fail(__FILE__, __LINE__, "%s: target", rows[i].what);
	}
}

/* A smaller attr (an older caller) and a larger one within the cap decode;
 * their contents are the daemon's to judge. */
TEST(open_attr_sizes)
{
	static char attr[PC_BROKER_ATTR_MAX];
	struct perf_event_attr *a = (void *)attr;
	struct pc_broker_msg m;
	uint32_t sizes[] = { PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER5,
			     sizeof(*a) + 64, PC_BROKER_ATTR_MAX };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int len;

		memset(attr, 0, sizeof(attr));
		a->size = sizes[i];
		len = pc_broker_encode_open(buf, sizeof(buf),
					    PC_BROKER_TARGET_CPU, 0, 0, attr,
					    sizes[i]);
		REQUIRE(len > 0);
		CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 0, &m), 0);
	}
	a->size = 60;
	CHECK_EQ_INT(pc_broker_encode_open(buf, sizeof(buf), PC_BROKER_TARGET_CPU,
					   0, 0, attr, 60) > 0, 1);
	CHECK_EQ_INT(pc_broker_decode_request(buf, 16 + 16 + 60, 0, &m), -EINVAL);
}

TEST(queries)
{
	static const char name[] = "syscalls:sys_enter_getppid";
	struct pc_broker_msg m;
	int len;

	len = pc_broker_encode_query(buf, sizeof(buf), PC_BROKER_TP_ID,
				     sizeof(name) - 1, name, sizeof(name) - 1);
	REQUIRE(len > 0);
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 0, &m), 0);
	CHECK_EQ_INT(m.arg, sizeof(name) - 1);
	CHECK(!memcmp(m.name, name, m.arg));
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 1, &m), -EBADF);
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len - 1, 0, &m), -EPROTO);
	/* a NUL inside the name */
	((char *)buf)[HDR + 8 + 3] = '\0';
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 0, &m), -EINVAL);
	/* the name's length beyond the cap */
	put32(HDR, PC_BROKER_NAME_MAX + 1);
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 0, &m), -E2BIG);
	len = pc_broker_encode_query(buf, sizeof(buf), PC_BROKER_TP_ID, 0, "", 0);
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 0, &m), -EINVAL);

	len = pc_broker_encode_query(buf, sizeof(buf), PC_BROKER_TP_LIST, 42,
				     NULL, 0);
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 0, &m), 0);
	CHECK_EQ_INT(m.arg, 42);
	put32(HDR + 4, 1);
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 0, &m), -EPROTO);

	len = pc_broker_encode_query(buf, sizeof(buf), PC_BROKER_POLICY, 0,
				     NULL, 0);
	CHECK_EQ_INT(len, (int)HDR);
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 0, &m), 0);
	CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 2, &m), -EBADF);
	CHECK_EQ_INT(pc_broker_decode_request(buf, 0, 0, &m), -EPROTO);
	CHECK_EQ_INT(pc_broker_decode_request(buf, PC_BROKER_MSG_MAX + 1, 0, &m),
		     -EPROTO);
}

TEST(replies)
{
	struct pc_broker_msg m;
	int len;

	len = pc_broker_encode_reply(buf, sizeof(buf), PC_BROKER_OPEN, 0, 0,
				     "own-tracepoints", NULL, 0);
	REQUIRE(len > 0);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 1, PC_BROKER_OPEN, &m), 0);
	CHECK_STR(m.reply->rule, "own-tracepoints");
	/* a successful open without its fd, or with two */
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_OPEN, &m), -EBADF);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 2, PC_BROKER_OPEN, &m), -EBADF);
	/* the reply to another request */
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 1, PC_BROKER_TP_ID, &m), -EPROTO);
	/* a refusal carries no fd */
	len = pc_broker_encode_reply(buf, sizeof(buf), PC_BROKER_OPEN, -EACCES,
				     0, "r", "kernel mode", 11);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_OPEN, &m), 0);
	CHECK_EQ_INT(m.reply->status, -EACCES);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 1, PC_BROKER_OPEN, &m), -EBADF);
	/* a positive status, an unterminated rule, padding after the rule */
	put32(HDR, 5);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_OPEN, &m), -EINVAL);
	put32(HDR, (uint32_t)-EACCES);
	memset((char *)buf + HDR + 16, 'x', PC_BROKER_RULE_MAX);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_OPEN, &m), -EPROTO);
	memset((char *)buf + HDR + 16, 0, PC_BROKER_RULE_MAX);
	((char *)buf)[HDR + 16 + 10] = 'x';
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_OPEN, &m), -EPROTO);
	/* text length past the end */
	len = pc_broker_encode_reply(buf, sizeof(buf), PC_BROKER_TP_ID, 0, 7,
				     "", "abc", 3);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_TP_ID, &m), 0);
	CHECK_EQ_U64(m.reply->value, 7);
	put32(HDR + 4, 4);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_TP_ID, &m), -EPROTO);
	/* encoders refuse what does not fit */
	CHECK_EQ_INT(pc_broker_encode_reply(buf, 50, PC_BROKER_TP_ID, 0, 0, "",
					    NULL, 0), -EMSGSIZE);
}

/* A batch of @count task-clock attrs into buf; its length. */
static int make_batch(uint32_t target, int cpu, uint32_t flags,
		      unsigned int count)
{
	static struct perf_event_attr attrs[PC_BROKER_BATCH_MAX + 1];
	const void *ptrs[PC_BROKER_BATCH_MAX + 1];
	uint32_t sizes[PC_BROKER_BATCH_MAX + 1];
	unsigned int i;

	for (i = 0; i < count; i++) {
		memset(&attrs[i], 0, sizeof(attrs[i]));
		attrs[i].type = PERF_TYPE_SOFTWARE;
		attrs[i].size = sizeof(attrs[i]);
		attrs[i].config = PERF_COUNT_SW_TASK_CLOCK;
		ptrs[i] = &attrs[i];
		sizes[i] = sizeof(attrs[i]);
	}
	return pc_broker_encode_batch(buf, sizeof(buf), target, cpu, flags,
				      ptrs, sizes, count);
}

/* Byte offsets into a batch: its body, member @i's header and attr. */
#define BBODY(f)	(HDR + offsetof(struct pc_broker_batch_body, f))
#define MEMBER(i)	(HDR + sizeof(struct pc_broker_batch_body) + \
			 (i) * (sizeof(struct pc_broker_batch_member) + \
				sizeof(struct perf_event_attr)))
#define MATTR(i, f)	(MEMBER(i) + sizeof(struct pc_broker_batch_member) + \
			 offsetof(struct perf_event_attr, f))

TEST(batch_table)
{
	static const struct {
		const char *what;
		uint32_t target;
		uint32_t flags;
		unsigned int count;
		unsigned int nr_fds;
		long off;	/* -1: no change */
		uint32_t value;
		int len_delta;
		int rc;
	} rows[] = {
		{ "group of 8, first leads", PC_BROKER_TARGET_PID, PC_BROKER_F_LEAD, 8, 1, -1, 0, 0, 0 },
		{ "8 joining a leader", PC_BROKER_TARGET_PID, PC_BROKER_F_GROUP, 8, 2, -1, 0, 0, 0 },
		{ "8 independent on a CPU", PC_BROKER_TARGET_CPU, 0, 8, 0, -1, 0, 0, 0 },
		{ "one", PC_BROKER_TARGET_PID, PC_BROKER_F_LEAD, 1, 1, -1, 0, 0, 0 },
		{ "the most", PC_BROKER_TARGET_PID, PC_BROKER_F_LEAD, PC_BROKER_BATCH_MAX, 1, -1, 0, 0, 0 },
		{ "one more than the most", PC_BROKER_TARGET_PID, PC_BROKER_F_LEAD, PC_BROKER_BATCH_MAX + 1, 1, -1, 0, 0, -E2BIG },
		{ "count 0", PC_BROKER_TARGET_PID, 0, 0, 1, -1, 0, 0, -EINVAL },
		{ "count beyond the members", PC_BROKER_TARGET_PID, 0, 8, 1, (long)BBODY(count), 9, 0, -EPROTO },
		{ "count short of the members", PC_BROKER_TARGET_PID, 0, 8, 1, (long)BBODY(count), 7, 0, -EPROTO },
		{ "count forged huge", PC_BROKER_TARGET_PID, 0, 8, 1, (long)BBODY(count), 0xffffffffu, 0, -E2BIG },
		{ "last member cut", PC_BROKER_TARGET_PID, 0, 8, 1, -1, 0, -8, -EPROTO },
		{ "last member's header only", PC_BROKER_TARGET_PID, 0, 8, 1, -1, 0, -(int)sizeof(struct perf_event_attr), -EPROTO },
		{ "bytes after the members", PC_BROKER_TARGET_PID, 0, 8, 1, -1, 0, 8, -EPROTO },
		{ "member reserved set", PC_BROKER_TARGET_PID, 0, 8, 1, (long)MEMBER(3) + 4, 1, 0, -EPROTO },
		{ "member size beyond the cap", PC_BROKER_TARGET_PID, 0, 8, 1, (long)MEMBER(5), PC_BROKER_ATTR_MAX + 8, 0, -E2BIG },
		{ "member size past the end", PC_BROKER_TARGET_PID, 0, 8, 1, (long)MEMBER(7), PC_BROKER_ATTR_MAX, 0, -EPROTO },
		{ "member size shifts the next", PC_BROKER_TARGET_PID, 0, 8, 1, (long)MEMBER(2), 120, 0, -EINVAL },
		{ "member attr.size not its size", PC_BROKER_TARGET_PID, 0, 8, 1, (long)MATTR(6, size), 120, 0, -EINVAL },
		{ "lead and group", PC_BROKER_TARGET_PID, PC_BROKER_F_LEAD | PC_BROKER_F_GROUP, 8, 2, -1, 0, 0, -EINVAL },
		{ "unknown flag", PC_BROKER_TARGET_PID, 1u << 3, 8, 1, -1, 0, 0, -EPROTO },
		{ "no pidfd", PC_BROKER_TARGET_PID, 0, 8, 0, -1, 0, 0, -EBADF },
		{ "leader's fd missing", PC_BROKER_TARGET_PID, PC_BROKER_F_GROUP, 8, 1, -1, 0, 0, -EBADF },
		{ "fds for the members", PC_BROKER_TARGET_PID, 0, 8, 8, -1, 0, 0, -EBADF },
		{ "version 1", PC_BROKER_TARGET_PID, 0, 8, 1, 4, 1 | (PC_BROKER_OPEN_BATCH << 16), 0, -EPROTO },
		{ "an open's version", PC_BROKER_TARGET_PID, 0, 8, 1, 4, PC_BROKER_VERSION_BATCH | (PC_BROKER_OPEN << 16), 0, -EPROTO },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pc_broker_msg m;
		int len = make_batch(rows[i].target,
				     rows[i].target == PC_BROKER_TARGET_CPU ? 0 : -1,
				     rows[i].flags, rows[i].count);
		int rc;

		REQUIRE(len > 0);
		if (rows[i].off >= 0)
			put32((size_t)rows[i].off, rows[i].value);
		len += rows[i].len_delta;
		if (rows[i].len_delta) {
			if (rows[i].len_delta > 0)
				memset((char *)buf + len - rows[i].len_delta, 0,
				       (size_t)rows[i].len_delta);
			put32(8, (uint32_t)len);
		}
		rc = pc_broker_decode_request(buf, (size_t)len, rows[i].nr_fds,
					      &m);
		if (rc != rows[i].rc)
			test_fail(__FILE__, __LINE__, "%s: %d, expected %d",
				  rows[i].what, rc, rows[i].rc);
		if (!rc && (m.nr_attrs != rows[i].count ||
			    m.attr_sizes[rows[i].count - 1] !=
			    sizeof(struct perf_event_attr) ||
			    m.flags != rows[i].flags))
			test_fail(__FILE__, __LINE__, "%s: decoded wrong",
				  rows[i].what);
	}
	/* An OPEN knows no F_LEAD: a single event leads nothing. */
	{
		struct pc_broker_msg m;
		int len = make_open(PC_BROKER_TARGET_PID, -1, PC_BROKER_F_LEAD);

		REQUIRE(len > 0);
		CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 1, &m),
			     -EPROTO);
		len = make_open(PC_BROKER_TARGET_PID, -1, 0);
		CHECK_EQ_INT(pc_broker_decode_request(buf, (size_t)len, 1, &m), 0);
		CHECK_EQ_INT(m.nr_attrs, 1);
		CHECK(m.attrs[0] == m.attr);
	}
}

TEST(batch_replies)
{
	struct pc_broker_msg m;
	int len;

	/* Granted: as many descriptors as the value says. */
	len = pc_broker_encode_reply(buf, sizeof(buf), PC_BROKER_OPEN_BATCH, 0,
				     8, "r", NULL, 0);
	REQUIRE(len > 0);
	{
		struct pc_broker_hdr h;

		memcpy(&h, buf, sizeof(h));
		CHECK_EQ_INT(h.version, PC_BROKER_VERSION_BATCH);
	}
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 8, PC_BROKER_OPEN_BATCH, &m), 0);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 7, PC_BROKER_OPEN_BATCH, &m), -EBADF);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 9, PC_BROKER_OPEN_BATCH, &m), -EBADF);
	/* the reply to a batch is not an open's */
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 8, PC_BROKER_OPEN, &m), -EPROTO);
	len = pc_broker_encode_reply(buf, sizeof(buf), PC_BROKER_OPEN_BATCH, 0,
				     0, "r", NULL, 0);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_OPEN_BATCH, &m), -EINVAL);
	len = pc_broker_encode_reply(buf, sizeof(buf), PC_BROKER_OPEN_BATCH, 0,
				     PC_BROKER_BATCH_MAX + 1, "r", NULL, 0);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, PC_BROKER_BATCH_MAX + 1, PC_BROKER_OPEN_BATCH, &m), -EINVAL);
	/* Refused: the member at fault, and no descriptor. */
	len = pc_broker_encode_reply(buf, sizeof(buf), PC_BROKER_OPEN_BATCH,
				     -EACCES, 3, "r", "raw events", 10);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_OPEN_BATCH, &m), 0);
	CHECK_EQ_U64(m.reply->value, 3);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 3, PC_BROKER_OPEN_BATCH, &m), -EBADF);
	len = pc_broker_encode_reply(buf, sizeof(buf), PC_BROKER_OPEN_BATCH,
				     -EACCES, PC_BROKER_BATCH_MAX, "r", NULL, 0);
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_OPEN_BATCH, &m), -EINVAL);
	/* a batch's reply as version 1 */
	len = pc_broker_encode_reply(buf, sizeof(buf), PC_BROKER_OPEN_BATCH,
				     -EACCES, 3, "r", NULL, 0);
	put32(4, 1 | ((PC_BROKER_OPEN_BATCH | PC_BROKER_REPLY) << 16));
	CHECK_EQ_INT(pc_broker_decode_reply(buf, (size_t)len, 0, PC_BROKER_OPEN_BATCH, &m), -EPROTO);
}

TEST_MAIN(TEST_CASE(open_table), TEST_CASE(open_attr_sizes),
	  TEST_CASE(queries), TEST_CASE(replies), TEST_CASE(batch_table),
	  TEST_CASE(batch_replies))
