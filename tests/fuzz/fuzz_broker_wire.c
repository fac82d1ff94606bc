// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: the perfctrd wire decoders (src/lib/sys/broker-wire.c),
 * what the root daemon runs on every message a user sends.  The first
 * input byte says how many descriptors "arrived" (bits 0-1, and bits 5-7
 * as the high bits, so that a batch's reply can carry up to 31) and
 * whether the rest is a request or a reply to request type (bits 2-4);
 * the rest is the message.  Whatever decodes must re-encode to the same bytes, so no field
 * the decoder accepted can be lost or misread.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sys/broker-wire.h"

static uint64_t msg[PC_BROKER_MSG_MAX / 8 + 1];
static uint64_t again[PC_BROKER_MSG_MAX / 8 + 1];

static void reencode_request(const struct pc_broker_msg *m, size_t len)
{
	int n;

	switch (m->type) {
	case PC_BROKER_OPEN:
		n = pc_broker_encode_open(again, sizeof(again), m->open->target,
					  m->open->cpu, m->open->flags,
					  m->attr, m->open->attr_size);
		break;
	case PC_BROKER_OPEN_BATCH:
		n = pc_broker_encode_batch(again, sizeof(again), m->target,
					   m->cpu, m->flags, m->attrs,
					   m->attr_sizes, m->nr_attrs);
		break;
	case PC_BROKER_TP_ID:
		n = pc_broker_encode_query(again, sizeof(again), m->type,
					   m->arg, m->name, m->arg);
		break;
	default:
		n = pc_broker_encode_query(again, sizeof(again), m->type,
					   m->arg, NULL, 0);
	}
	if (n < 0 || (size_t)n != len || memcmp(again, msg, len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_broker_msg m;
	unsigned int nr_fds, kind;
	size_t len;

	if (size < 1 || size - 1 > sizeof(msg))
		return 0;
	nr_fds = (data[0] & 3u) | (unsigned int)(data[0] >> 5) << 2;
	kind = (data[0] >> 2) & 7;
	len = size - 1;
	memcpy(msg, data + 1, len);
	if (kind == 0 || kind >= PC_BROKER_NR_TYPES) {
		if (pc_broker_decode_request(msg, len, nr_fds, &m))
			return 0;
		if ((m.type == PC_BROKER_OPEN ||
		     m.type == PC_BROKER_OPEN_BATCH) &&
		    (nr_fds != pc_broker_open_nr_fds(m.target, m.flags) ||
		     !m.nr_attrs || m.nr_attrs > PC_BROKER_BATCH_MAX))
			abort();
		reencode_request(&m, len);
		return 0;
	}
	if (pc_broker_decode_reply(msg, len, nr_fds, (uint16_t)kind, &m))
		return 0;
	if (m.text + m.reply->text_len != (const char *)msg + len)
		abort();
	/* A granted batch is as many descriptors as its value says. */
	if (kind == PC_BROKER_OPEN_BATCH &&
	    nr_fds != (m.reply->status ? 0 : m.reply->value))
		abort();
	if (pc_broker_encode_reply(again, sizeof(again), (uint16_t)kind,
				   m.reply->status, m.reply->value,
				   m.reply->rule, m.text,
				   m.reply->text_len) != (int)len ||
	    memcmp(again, msg, len))
		abort();
	return 0;
}
