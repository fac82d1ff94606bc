/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The client side of the access broker (perfctrd): when the kernel refuses
 * an open to this user, sys_perf_event_open() asks the broker, which opens
 * the event under its policy and passes the descriptor back; tracefs
 * names that this user cannot read are resolved through it too.  One
 * connection per process, made at first use, requests serialised on it.
 */
#ifndef PERFCTR_SYS_BROKER_H
#define PERFCTR_SYS_BROKER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The socket: $PERFCTR_BROKER_SOCKET, else /run/perfctr/perfctrd.sock. */
const char *pc_broker_socket(void);

/* False when $PERFCTR_NO_BROKER is set (and not "0") or no socket exists. */
bool pc_broker_enabled(void);

/*
 * Ask the broker to open @attr for @pid (0: the calling thread) or on
 * @cpu, @flags as perf_event_open(2)'s.  Return the descriptor, or -errno:
 * the broker's refusal (EACCES, ESRCH, ...), or ENOENT / ECONNREFUSED when
 * no broker answers.  @why (may be NULL) gets the broker's reason.
 */
int pc_broker_open(const struct perf_event_attr *attr, pid_t pid, int cpu,
		   int group_fd, unsigned long flags, char *why,
		   size_t why_size);

/*
 * Ask the broker to open the @n events @attrs as one group, in one round
 * trip per PC_BROKER_BATCH_MAX of them: members of @group_fd when it is
 * one, else the first leads the others; the other parameters as for
 * pc_broker_open().  All or nothing: return 0 with @fds[0..n-1] set, or
 * -errno with none open (a member refused refuses the group; @why says
 * why).  -EPROTONOSUPPORT: the broker predates batches (then open the
 * events one by one).
 */
int pc_broker_open_group(const struct perf_event_attr *attrs, size_t n,
			 pid_t pid, int cpu, int group_fd,
			 unsigned long flags, int *fds, char *why,
			 size_t why_size);

/*
 * Ask the broker to open the @n independent events @attrs (each its own
 * group) on one target, in one round trip per PC_BROKER_BATCH_MAX of
 * them; the other parameters as for pc_broker_open().  All or nothing, as
 * pc_broker_open_group(): return 0 with @fds[0..n-1] set, or -errno with
 * none open (one event refused refuses them all: ask for them one by one
 * then, for each event's own verdict); -EPROTONOSUPPORT: the broker
 * predates batches.
 */
int pc_broker_open_many(const struct perf_event_attr *attrs, size_t n,
			pid_t pid, int cpu, unsigned long flags, int *fds,
			char *why, size_t why_size);

/*
 * The broker's reason for refusing this thread's last request, as
 * "REASON (rule 'NAME')", or "" when it was not asked since the last
 * pc_broker_forget_refusal() or did not answer.  sys_perf_event_open()
 * forgets it first, so after a failed open it is that open's.
 */
const char *pc_broker_refusal(void);
void pc_broker_forget_refusal(void);

/* The hint line under a refusal's message (perfex has its own copy). */
#define PC_BROKER_POLICY_HINT						\
	"the broker's policy file decides (/etc/perfctr/perfctrd.conf "	\
	"unless perfctrd -c names another; see perfctrd.conf(5))"

/* The id of tracepoint @sys:@name, if the policy lets this user name it. */
int pc_broker_tp_id(const char *sys, const char *name, uint64_t *id);

/* Call @cb with each tracepoint "sys:name" the policy allows, in tracefs
 * order; a non-zero return from @cb stops and is returned. */
int pc_broker_tp_list(int (*cb)(const char *full, void *ctx), void *ctx);

/* What the policy allows this user, as text, and the rule's name.
 * Return 0, -EACCES (no rule), or -errno when no broker answers. */
int pc_broker_policy(char *text, size_t size, char *rule, size_t rule_size);

#endif /* PERFCTR_SYS_BROKER_H */
