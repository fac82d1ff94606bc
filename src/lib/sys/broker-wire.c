// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The perfctrd wire protocol (see broker-wire.h). */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "sys/broker-wire.h"

_Static_assert(sizeof(struct pc_broker_hdr) == 16, "wire header is ABI");
_Static_assert(sizeof(struct pc_broker_open_body) == 16, "wire body is ABI");
_Static_assert(sizeof(struct pc_broker_query_body) == 8, "wire body is ABI");
_Static_assert(sizeof(struct pc_broker_batch_body) == 16, "wire body is ABI");
_Static_assert(sizeof(struct pc_broker_batch_member) == 8, "wire body is ABI");
_Static_assert(sizeof(struct pc_broker_reply_body) == 80, "wire body is ABI");

unsigned int pc_broker_open_nr_fds(uint32_t target, uint32_t flags)
{
	return (target != PC_BROKER_TARGET_CPU) +
	       !!(flags & PC_BROKER_F_GROUP);
}

/* The one version a message of @type (without PC_BROKER_REPLY) has. */
static uint16_t version_of(uint16_t type)
{
	type &= (uint16_t)~PC_BROKER_REPLY;
	return type == PC_BROKER_OPEN_BATCH ? PC_BROKER_VERSION_BATCH :
					      PC_BROKER_VERSION;
}

static int check_hdr(const void *buf, size_t len, struct pc_broker_msg *out)
{
	const struct pc_broker_hdr *h = buf;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(*h) || len > PC_BROKER_MSG_MAX)
		return -EPROTO;
	if (h->magic != PC_BROKER_MAGIC || h->version != version_of(h->type) ||
	    h->reserved || h->len != len)
		return -EPROTO;
	out->type = h->type;
	return 0;
}

/* The target, CPU and flags an OPEN or OPEN_BATCH shares; @known: the
 * flags this type knows. */
static int check_target(uint32_t target, int32_t cpu, uint32_t flags,
			uint32_t known, unsigned int nr_fds,
			struct pc_broker_msg *out)
{
	if (flags & ~known)
		return -EPROTO;
	if (target < PC_BROKER_TARGET_PID || target > PC_BROKER_TARGET_CGROUP)
		return -EINVAL;
	if ((flags & PC_BROKER_F_LEAD) && (flags & PC_BROKER_F_GROUP))
		return -EINVAL;
	if (nr_fds != pc_broker_open_nr_fds(target, flags))
		return -EBADF;
	/* A pid target follows its thread; the others name one CPU. */
	if (target == PC_BROKER_TARGET_PID ? cpu < -1 : cpu < 0)
		return -EINVAL;
	out->target = target;
	out->cpu = cpu;
	out->flags = flags;
	return 0;
}

/* One attr of @size bytes at @attr, as the @i-th of the message. */
static int check_attr(const char *attr, uint32_t size, unsigned int i,
		      struct pc_broker_msg *out)
{
	struct perf_event_attr head;

	/* Sizes the kernel knows are multiples of 8 from its first one. */
	if (size < PERF_ATTR_SIZE_VER0 || size % 8)
		return -EINVAL;
	memcpy(&head, attr, PERF_ATTR_SIZE_VER0);
	if (head.size != size)
		return -EINVAL;
	out->attrs[i] = attr;
	out->attr_sizes[i] = size;
	return 0;
}

static int decode_open(const char *body, size_t blen, unsigned int nr_fds,
		       struct pc_broker_msg *out)
{
	const struct pc_broker_open_body *o = (const void *)body;
	int ret;

	if (blen < sizeof(*o))
		return -EPROTO;
	if (o->attr_size > PC_BROKER_ATTR_MAX)
		return -E2BIG;
	if (blen != sizeof(*o) + o->attr_size)
		return -EPROTO;
	ret = check_target(o->target, o->cpu, o->flags, PC_BROKER_F_KNOWN,
			   nr_fds, out);
	if (!ret)
		ret = check_attr(body + sizeof(*o), o->attr_size, 0, out);
	if (ret)
		return ret;
	out->nr_attrs = 1;
	out->open = o;
	out->attr = out->attrs[0];
	return 0;
}

static int decode_batch(const char *body, size_t blen, unsigned int nr_fds,
			struct pc_broker_msg *out)
{
	const struct pc_broker_batch_body *b = (const void *)body;
	size_t off = sizeof(*b);
	unsigned int i;
	int ret;

	if (blen < sizeof(*b))
		return -EPROTO;
	if (b->count > PC_BROKER_BATCH_MAX)
		return -E2BIG;
	if (!b->count)
		return -EINVAL;
	ret = check_target(b->target, b->cpu, b->flags,
			   PC_BROKER_F_BATCH_KNOWN, nr_fds, out);
	if (ret)
		return ret;
	for (i = 0; i < b->count; i++) {
		const struct pc_broker_batch_member *mb;

		if (blen - off < sizeof(*mb))
			return -EPROTO;
		mb = (const void *)(body + off);
		off += sizeof(*mb);
		if (mb->reserved)
			return -EPROTO;
		if (mb->attr_size > PC_BROKER_ATTR_MAX)
			return -E2BIG;
		if (blen - off < mb->attr_size)
			return -EPROTO;
		ret = check_attr(body + off, mb->attr_size, i, out);
		if (ret)
			return ret;
		off += mb->attr_size;
	}
	/* Not a byte more than the members: nothing travels unseen. */
	if (off != blen)
		return -EPROTO;
	out->nr_attrs = b->count;
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
	case PC_BROKER_OPEN_BATCH:
		return decode_batch(body, blen, nr_fds, out);
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
	if (type == PC_BROKER_OPEN_BATCH) {
		/* Granted: the value is the count of descriptors, all
		 * there; refused: the member at fault, and none. */
		if (r->value > PC_BROKER_BATCH_MAX ||
		    (r->status == 0 && r->value == 0) ||
		    (r->status < 0 && r->value == PC_BROKER_BATCH_MAX))
			return -EINVAL;
		if (nr_fds != (r->status == 0 ? r->value : 0))
			return -EBADF;
	} else if (nr_fds != (type == PC_BROKER_OPEN && r->status == 0)) {
		/* Only a successful open carries a descriptor, and it must. */
		return -EBADF;
	}
	out->reply = r;
	out->text = body + sizeof(*r);
	if (memchr(out->text, '\0', r->text_len))
		return -EINVAL;
	return 0;
}

static void put_hdr(void *buf, uint16_t type, size_t len)
{
	struct pc_broker_hdr h = {
		.magic = PC_BROKER_MAGIC, .version = version_of(type),
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

int pc_broker_encode_batch(void *buf, size_t size, uint32_t target, int cpu,
			   uint32_t flags, const void *const *attrs,
			   const uint32_t *sizes, unsigned int count)
{
	struct pc_broker_batch_body b = {
		.target = target, .cpu = cpu, .flags = flags, .count = count,
	};
	size_t len = sizeof(struct pc_broker_hdr) + sizeof(b), off;
	char *p = buf;
	unsigned int i;

	for (i = 0; i < count; i++)
		len += sizeof(struct pc_broker_batch_member) + sizes[i];
	if (len > size || len > PC_BROKER_MSG_MAX)
		return -EMSGSIZE;
	put_hdr(p, PC_BROKER_OPEN_BATCH, len);
	off = sizeof(struct pc_broker_hdr);
	memcpy(p + off, &b, sizeof(b));
	off += sizeof(b);
	for (i = 0; i < count; i++) {
		struct pc_broker_batch_member mb = { .attr_size = sizes[i] };

		memcpy(p + off, &mb, sizeof(mb));
		off += sizeof(mb);
		memcpy(p + off, attrs[i], sizes[i]);
		off += sizes[i];
	}
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

void pc_broker_put_fds(struct msghdr *mh, void *cbuf, const int *fds,
		       unsigned int n)
{
	struct cmsghdr *cm;

	if (!n)
		return;
	memset(cbuf, 0, CMSG_SPACE(sizeof(int) * n));
	mh->msg_control = cbuf;
	mh->msg_controllen = CMSG_SPACE(sizeof(int) * n);
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
}
