// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The perfctrd wire protocol (see broker-wire.h). */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "sys/broker-wire.h"

_Static_assert(sizeof(struct pc_broker_hdr) == 16, "wire header is ABI");
_Static_assert(sizeof(struct pc_broker_open_body) == 16, "wire body is ABI");
_Static_assert(sizeof(struct pc_broker_query_body) == 8, "wire body is ABI");
_Static_assert(sizeof(struct pc_broker_reply_body) == 80, "wire body is ABI");

unsigned int pc_broker_open_nr_fds(uint32_t target, uint32_t flags)
{
	return (target != PC_BROKER_TARGET_CPU) +
	       !!(flags & PC_BROKER_F_GROUP);
}

static int check_hdr(const void *buf, size_t len, struct pc_broker_msg *out)
{
	const struct pc_broker_hdr *h = buf;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(*h) || len > PC_BROKER_MSG_MAX)
		return -EPROTO;
	if (h->magic != PC_BROKER_MAGIC || h->version != PC_BROKER_VERSION ||
	    h->reserved || h->len != len)
		return -EPROTO;
	out->type = h->type;
	return 0;
}

static int decode_open(const char *body, size_t blen, unsigned int nr_fds,
		       struct pc_broker_msg *out)
{
	const struct pc_broker_open_body *o = (const void *)body;
	struct perf_event_attr head;

	if (blen < sizeof(*o))
		return -EPROTO;
	if (o->attr_size > PC_BROKER_ATTR_MAX)
		return -E2BIG;
	if (blen != sizeof(*o) + o->attr_size)
		return -EPROTO;
	if (o->flags & ~(uint32_t)PC_BROKER_F_KNOWN)
		return -EPROTO;
	if (o->target < PC_BROKER_TARGET_PID ||
	    o->target > PC_BROKER_TARGET_CGROUP)
		return -EINVAL;
	if (nr_fds != pc_broker_open_nr_fds(o->target, o->flags))
		return -EBADF;
	/* A pid target follows its thread; the others name one CPU. */
	if (o->target == PC_BROKER_TARGET_PID ? o->cpu < -1 : o->cpu < 0)
		return -EINVAL;
	/* Sizes the kernel knows are multiples of 8 from its first one. */
	if (o->attr_size < PERF_ATTR_SIZE_VER0 || o->attr_size % 8)
		return -EINVAL;
	memcpy(&head, body + sizeof(*o), PERF_ATTR_SIZE_VER0);
	if (head.size != o->attr_size)
		return -EINVAL;
	out->open = o;
	out->attr = body + sizeof(*o);
	return 0;
}

int pc_broker_decode_request(const void *buf, size_t len,
			     unsigned int nr_fds, struct pc_broker_msg *out)
{
	const char *body = (const char *)buf + sizeof(struct pc_broker_hdr);
	const struct pc_broker_query_body *q = (const void *)body;
	size_t blen;
	int ret = check_hdr(buf, len, out);

	if (ret)
		return ret;
	out->nr_fds = nr_fds;
	blen = len - sizeof(struct pc_broker_hdr);
	switch (out->type) {
	case PC_BROKER_OPEN:
		return decode_open(body, blen, nr_fds, out);
	case PC_BROKER_TP_ID:
		if (blen < sizeof(*q) || q->reserved)
			return -EPROTO;
		if (q->arg > PC_BROKER_NAME_MAX)
			return -E2BIG;
		if (blen != sizeof(*q) + q->arg)
			return -EPROTO;
		if (nr_fds)
			return -EBADF;
		out->arg = q->arg;
		out->name = body + sizeof(*q);
		if (!q->arg || memchr(out->name, '\0', q->arg))
			return -EINVAL;
		return 0;
	case PC_BROKER_TP_LIST:
		if (blen != sizeof(*q) || q->reserved)
			return -EPROTO;
		if (nr_fds)
			return -EBADF;
		out->arg = q->arg;
		return 0;
	case PC_BROKER_POLICY:
		if (blen)
			return -EPROTO;
		return nr_fds ? -EBADF : 0;
	default:
		return -EPROTO;
	}
}

int pc_broker_decode_reply(const void *buf, size_t len, unsigned int nr_fds,
			   uint16_t type, struct pc_broker_msg *out)
{
	const char *body = (const char *)buf + sizeof(struct pc_broker_hdr);
	const struct pc_broker_reply_body *r = (const void *)body;
	size_t rule_len, i;
	int ret = check_hdr(buf, len, out);

	if (ret)
		return ret;
	out->nr_fds = nr_fds;
	if (out->type != (type | PC_BROKER_REPLY))
		return -EPROTO;
	len -= sizeof(struct pc_broker_hdr);
	if (len < sizeof(*r) || len != sizeof(*r) + r->text_len)
		return -EPROTO;
	rule_len = strnlen(r->rule, sizeof(r->rule));
	if (rule_len == sizeof(r->rule))
		return -EPROTO;
	/* Padding after the NUL is zero: nothing travels unseen. */
	for (i = rule_len; i < sizeof(r->rule); i++)
		if (r->rule[i])
			return -EPROTO;
	if (r->status > 0 || r->status < -4095)
		return -EINVAL;
	/* Only a successful open carries a descriptor, and it must. */
	if (nr_fds != (type == PC_BROKER_OPEN && r->status == 0))
		return -EBADF;
	out->reply = r;
	out->text = body + sizeof(*r);
	if (memchr(out->text, '\0', r->text_len))
		return -EINVAL;
	return 0;
}

static void put_hdr(void *buf, uint16_t type, size_t len)
{
	struct pc_broker_hdr h = {
		.magic = PC_BROKER_MAGIC, .version = PC_BROKER_VERSION,
		.type = type, .len = (uint32_t)len,
	};

	memcpy(buf, &h, sizeof(h));
}

int pc_broker_encode_open(void *buf, size_t size, uint32_t target, int cpu,
			  uint32_t flags, const void *attr, uint32_t attr_size)
{
	struct pc_broker_open_body o = {
		.target = target, .cpu = cpu, .flags = flags,
		.attr_size = attr_size,
	};
	size_t len = sizeof(struct pc_broker_hdr) + sizeof(o) + attr_size;
	char *p = buf;

	if (len > size || len > PC_BROKER_MSG_MAX)
		return -EMSGSIZE;
	put_hdr(p, PC_BROKER_OPEN, len);
	memcpy(p + sizeof(struct pc_broker_hdr), &o, sizeof(o));
	memcpy(p + sizeof(struct pc_broker_hdr) + sizeof(o), attr, attr_size);
	return (int)len;
}

int pc_broker_encode_query(void *buf, size_t size, uint16_t type,
			   uint32_t arg, const char *name, size_t name_len)
{
	struct pc_broker_query_body q = { .arg = arg };
	size_t len = sizeof(struct pc_broker_hdr);
	char *p = buf;

	if (type != PC_BROKER_POLICY)
		len += sizeof(q) + name_len;
	if (len > size || len > PC_BROKER_MSG_MAX)
		return -EMSGSIZE;
	put_hdr(p, type, len);
	if (type != PC_BROKER_POLICY) {
		memcpy(p + sizeof(struct pc_broker_hdr), &q, sizeof(q));
		if (name_len)
			memcpy(p + sizeof(struct pc_broker_hdr) + sizeof(q),
			       name, name_len);
	}
	return (int)len;
}

int pc_broker_encode_reply(void *buf, size_t size, uint16_t request_type,
			   int status, uint64_t value, const char *rule,
			   const char *text, size_t text_len)
{
	struct pc_broker_reply_body r = {
		.status = status, .text_len = (uint32_t)text_len,
		.value = value,
	};
	size_t len = sizeof(struct pc_broker_hdr) + sizeof(r) + text_len;
	char *p = buf;

	if (len > size || len > PC_BROKER_MSG_MAX)
		return -EMSGSIZE;
	if (rule) {
		size_t n = strnlen(rule, sizeof(r.rule) - 1);

		memcpy(r.rule, rule, n);
	}
	put_hdr(p, request_type | PC_BROKER_REPLY, len);
	memcpy(p + sizeof(struct pc_broker_hdr), &r, sizeof(r));
	if (text_len)
		memcpy(p + sizeof(struct pc_broker_hdr) + sizeof(r), text,
		       text_len);
	return (int)len;
}
