/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The perfctrd wire protocol (docs/perfctrd.8 describes it for admins).
 * One request or reply is one SOCK_SEQPACKET message: a 16-byte header, a
 * body of the type's exact layout, and the file descriptors the body
 * announces as SCM_RIGHTS.  All integers are in host byte order (the
 * socket never leaves the machine).
 *
 * Each type has exactly one version.  Version 2 added the batch open and
 * its reply; every other message is still version 1, so a client and a
 * daemon of different builds understand each other's version 1 messages,
 * and an older daemon refuses a batch as malformed (the client then opens
 * member by member).
 *
 * The decoders are strict: a message is refused unless every length adds
 * up to what was received, every reserved field is zero and the number of
 * descriptors is the one the body announces.  They make no system calls,
 * so the daemon, the library and the fuzzer share them.
 */
#ifndef PERFCTR_SYS_BROKER_WIRE_H
#define PERFCTR_SYS_BROKER_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Where perfctrd listens unless told otherwise (PERFCTR_BROKER_SOCKET). */
#define PC_BROKER_SOCKET	"/run/perfctr/perfctrd.sock"

#define PC_BROKER_MAGIC		0x44424350u	/* "PCBD" read as bytes */
#define PC_BROKER_VERSION	1
#define PC_BROKER_VERSION_BATCH	2	/* OPEN_BATCH and its reply */
/* No message is larger: a receiver whose buffer fills refuses it. */
#define PC_BROKER_MSG_MAX	65536
/* An attr of more bytes than this is refused before it is looked at. */
#define PC_BROKER_ATTR_MAX	512
#define PC_BROKER_NAME_MAX	256
#define PC_BROKER_RULE_MAX	64
#define PC_BROKER_FDS_MAX	2
/* Events in one batch: a batch's reply carries as many descriptors, which
 * stays far below the kernel's limit of a message (SCM_MAX_FD, 253). */
#define PC_BROKER_BATCH_MAX	64

enum pc_broker_type {
	PC_BROKER_OPEN = 1,	/* open an event; reply carries its fd */
	PC_BROKER_TP_ID,	/* "sys:name" -> id and format text */
	PC_BROKER_TP_LIST,	/* allowed tracepoints, paged */
	PC_BROKER_POLICY,	/* what the policy allows the caller, as text */
	PC_BROKER_OPEN_BATCH,	/* open N events on one target, N fds back */
	PC_BROKER_NR_TYPES,
	PC_BROKER_REPLY = 0x80,	/* or'ed into the request's type */
};

enum pc_broker_target {
	PC_BROKER_TARGET_PID = 1,	/* a pidfd of the thread or process */
	PC_BROKER_TARGET_CPU,		/* pid -1 on one CPU */
	PC_BROKER_TARGET_CGROUP,	/* a cgroup2 directory fd, one CPU */
};

/* Open request flags. */
enum pc_broker_open_flags {
	PC_BROKER_F_GROUP = 1u << 0,	/* the last fd is the group leader */
	PC_BROKER_F_NO_GROUP = 1u << 1,	/* PERF_FLAG_FD_NO_GROUP */
	PC_BROKER_F_KNOWN = (1u << 2) - 1,
	/* Batch only: the first event leads a group of the others (never
	 * with F_GROUP, which makes them all members of a given leader;
	 * without either, the events are independent). */
	PC_BROKER_F_LEAD = 1u << 2,
	PC_BROKER_F_BATCH_KNOWN = (1u << 3) - 1,
};

struct pc_broker_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len;		/* of the whole message, header included */
	uint32_t reserved;
};

/* PC_BROKER_OPEN body; the attr's bytes follow (attr_size of them). */
struct pc_broker_open_body {
	uint32_t target;	/* enum pc_broker_target */
	int32_t cpu;		/* -1 or a CPU */
	uint32_t flags;		/* enum pc_broker_open_flags */
	uint32_t attr_size;	/* equal to the attr's own size field */
};

/*
 * PC_BROKER_OPEN_BATCH body: @count events on one target, each a member
 * header and its attr's bytes (attr_size of them, a multiple of 8, so the
 * next member stays aligned).  The descriptors are those of an OPEN of
 * the same target and flags.  Granted, the reply's value is @count and
 * it carries the events' descriptors in the request's order; refused (any
 * member refused refuses them all), its value is the index of the member
 * at fault and it carries none.
 */
struct pc_broker_batch_body {
	uint32_t target;	/* enum pc_broker_target */
	int32_t cpu;		/* -1 or a CPU */
	uint32_t flags;		/* enum pc_broker_open_flags */
	uint32_t count;		/* 1 .. PC_BROKER_BATCH_MAX */
};

struct pc_broker_batch_member {
	uint32_t attr_size;	/* equal to the attr's own size field */
	uint32_t reserved;
};

/* PC_BROKER_TP_ID (name_len bytes of "sys:name" follow, no NUL) and
 * PC_BROKER_TP_LIST (start is the index to list from). */
struct pc_broker_query_body {
	uint32_t arg;		/* TP_ID: name length; TP_LIST: start index */
	uint32_t reserved;
};

/* Every reply; text_len bytes of text follow (no NUL). */
struct pc_broker_reply_body {
	int32_t status;		/* >= 0, or -errno */
	uint32_t text_len;
	uint64_t value;		/* TP_ID: the id; TP_LIST: next start, 0 = end */
	char rule[PC_BROKER_RULE_MAX];	/* NUL-terminated, "" for none */
};

/* A decoded message: pointers into the received buffer. */
struct pc_broker_msg {
	uint16_t type;			/* with PC_BROKER_REPLY for replies */
	unsigned int nr_fds;
	/* OPEN */
	const struct pc_broker_open_body *open;
	const void *attr;		/* attr_size bytes */
	/* OPEN and OPEN_BATCH alike: the target, the flags, the attrs */
	uint32_t target;
	int32_t cpu;
	uint32_t flags;
	unsigned int nr_attrs;
	const void *attrs[PC_BROKER_BATCH_MAX];
	uint32_t attr_sizes[PC_BROKER_BATCH_MAX];
	/* TP_ID / TP_LIST */
	uint32_t arg;
	const char *name;		/* TP_ID: arg bytes, no NUL */
	/* replies */
	const struct pc_broker_reply_body *reply;
	const char *text;		/* reply->text_len bytes, no NUL */
};

/*
 * Decode a request of @len bytes that arrived with @nr_fds descriptors.
 * The buffer must be 8-byte aligned (the body is read in place).
 * Return: 0, -EPROTO (bad magic, version, reserved bits, lengths, type),
 * -E2BIG (attr larger than PC_BROKER_ATTR_MAX), -EBADF (wrong fd count),
 * -EINVAL (bad field values).
 */
int pc_broker_decode_request(const void *buf, size_t len,
			     unsigned int nr_fds, struct pc_broker_msg *out);

/* Decode a reply to a request of @type; the same errors. */
int pc_broker_decode_reply(const void *buf, size_t len, unsigned int nr_fds,
			   uint16_t type, struct pc_broker_msg *out);

/* The number of descriptors an OPEN or OPEN_BATCH request of @target and
 * @flags carries. */
unsigned int pc_broker_open_nr_fds(uint32_t target, uint32_t flags);

/*
 * Encoders: write the message to @buf (@size bytes, 8-byte aligned).
 * Return its length, or -EMSGSIZE when it does not fit.
 */
int pc_broker_encode_open(void *buf, size_t size, uint32_t target, int cpu,
			  uint32_t flags, const void *attr, uint32_t attr_size);
/* A batch of @count attrs, @attrs[i] of @sizes[i] bytes. */
int pc_broker_encode_batch(void *buf, size_t size, uint32_t target, int cpu,
			   uint32_t flags, const void *const *attrs,
			   const uint32_t *sizes, unsigned int count);
/*
 * Attach @n descriptors to @mh as one SCM_RIGHTS message built in @cbuf
 * (CMSG_SPACE(@n * sizeof(int)) bytes at least); with @n 0, @mh is left
 * without control data.
 */
void pc_broker_put_fds(struct msghdr *mh, void *cbuf, const int *fds,
		       unsigned int n);
int pc_broker_encode_query(void *buf, size_t size, uint16_t type,
			   uint32_t arg, const char *name, size_t name_len);
int pc_broker_encode_reply(void *buf, size_t size, uint16_t request_type,
			   int status, uint64_t value, const char *rule,
			   const char *text, size_t text_len);

#endif /* PERFCTR_SYS_BROKER_WIRE_H */
