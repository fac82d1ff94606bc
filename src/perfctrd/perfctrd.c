// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctrd: the access broker.  A root daemon on a SOCK_SEQPACKET unix
 * socket that opens perf events for users under a policy and hands them
 * the descriptors (docs/perfctrd.8, docs/perfctrd.conf.5).
 *
 * One thread, one poll loop: every request is answered before the next
 * is read, nothing blocks on a client (replies are sent non-blocking and
 * a client that cannot take one is dropped), every descriptor a client
 * sends is closed after its request whatever happens, and every decision
 * is logged.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"
#include "target.h"
#include "sys/broker-wire.h"
#include "sys/sys.h"
#include "sys/tracefs.h"

#define DEFAULT_CONFIG	"/etc/perfctr/perfctrd.conf"
#define MAX_CLIENTS	1024
#define MAX_CLIENTS_PER_UID 64
#define MAX_GROUPS	256

struct client {
	int fd;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	gid_t groups[MAX_GROUPS];
	size_t nr_groups;
	char user[64];
	unsigned int handed;	/* descriptors given on this connection */
};

struct tp_entry {
	uint64_t id;
	char *name;		/* "sys:name" */
};

static struct {
	const char *config;
	const char *socket_path;
	const char *sysfs_root;
	bool use_syslog;
	struct pd_policy *policy;
	struct client clients[MAX_CLIENTS];
	size_t nr_clients;
	char tracefs[4096];
	struct tp_entry *tps;
	size_t nr_tps;
	time_t tps_built;
	uint64_t msg[PC_BROKER_MSG_MAX / 8 + 1];
	uint64_t reply[PC_BROKER_MSG_MAX / 8];
} d;

static void logline(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logmsg(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Lines not yet written (stderr only): a request's decisions go out in
 * one write(2), so that a batch costs one system call of logging, and
 * lines from a restarted broker sharing the file do not interleave. */
static char logbuf[32768];
static size_t loglen;

static void logflush(void)
{
	/* A failed write has nowhere left to be told. */
	ssize_t written = loglen ? write(STDERR_FILENO, logbuf, loglen) : 0;

	(void)written;
	loglen = 0;
}

static void vlogline(int prio, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	if (d.use_syslog) {
		vsyslog(LOG_AUTHPRIV | prio, fmt, ap);
		return;
	}
	n = snprintf(line, sizeof(line), "perfctrd: ");
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (loglen + (size_t)n > sizeof(logbuf))
		logflush();
	memcpy(logbuf + loglen, line, (size_t)n);
	loglen += (size_t)n;
}

/* A line kept for the next logflush(). */
static void logline(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlogline(prio, fmt, ap);
	va_end(ap);
}

/* A line written now. */
static void logmsg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlogline(prio, fmt, ap);
	va_end(ap);
	logflush();
}

/* ---- tracepoint names ---------------------------------------------- */

static int tp_add(const char *sys, const char *name, void *ctx)
{
	struct tp_entry *tps;
	uint64_t id;
	char full[400];

	if (pc_tracefs_id(d.tracefs, sys, name, &id))
		return 0;
	tps = realloc(d.tps, (d.nr_tps + 1) * sizeof(*tps));
	if (!tps)
		return -ENOMEM;
	d.tps = tps;
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	d.tps[d.nr_tps].id = id;
	d.tps[d.nr_tps].name = strdup(full);
	if (!d.tps[d.nr_tps].name)
		return -ENOMEM;
	d.nr_tps++;
	return 0;
}

static void tp_free(void)
{
	size_t i;

	for (i = 0; i < d.nr_tps; i++)
		free(d.tps[i].name);
	free(d.tps);
	d.tps = NULL;
	d.nr_tps = 0;
}

/* The id -> name table, rebuilt when asked for an id it lacks (a module
 * may have added tracepoints), at most once a second. */
static int tp_build(void)
{
	time_t now = time(NULL);
	int ret;

	if (d.tps && now - d.tps_built < 1)
		return 0;
	ret = pc_tracefs_root(NULL, d.tracefs, sizeof(d.tracefs));
	if (ret)
		return ret;
	tp_free();
	d.tps_built = now;
	return pc_tracefs_walk(d.tracefs, NULL, NULL, tp_add, NULL);
}

static const char *tp_name(uint64_t id)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < d.nr_tps; i++)
			if (d.tps[i].id == id)
				return d.tps[i].name;
		if (pass == 0 && tp_build())
			return NULL;
	}
	return NULL;
}

/* ---- replies ------------------------------------------------------- */

static void drop_client(size_t i);

static int send_reply(struct client *c, uint16_t type, int status,
		      uint64_t value, const char *rule, const char *text,
		      size_t text_len, const int *fds, unsigned int nr_fds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * PC_BROKER_BATCH_MAX)];
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int len = pc_broker_encode_reply(d.reply, sizeof(d.reply), type, status,
					 value, rule, text, text_len);

	if (len < 0)
		return len;
	iov.iov_base = d.reply;
	iov.iov_len = (size_t)len;
	pc_broker_put_fds(&mh, cbuf, fds, nr_fds);
	if (sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != len)
		return -errno;
	return 0;
}

/* ---- checks on the request's descriptors --------------------------- */

/* Perf event descriptors the peer process holds now. */
static unsigned int count_perf_fds(pid_t pid)
{
	char link[64], dirpath[64];
	unsigned int n = 0;
	struct dirent *de;
	DIR *dir;

	snprintf(dirpath, sizeof(dirpath), "/proc/%d/fd", (int)pid);
	dir = opendir(dirpath);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		len = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		n += !strcmp(link, "anon_inode:[perf_event]");
	}
	closedir(dir);
	return n;
}

/*
 * Descriptors the user holds through us.  The running tally only grows;
 * at the limit it is replaced by what the users' processes still hold, so
 * closed descriptors are given back without the broker keeping any.
 */
static bool under_fd_limit(const struct client *c, unsigned int max_fds,
			   unsigned int more)
{
	unsigned int total = 0;
	size_t i;

	for (i = 0; i < d.nr_clients; i++)
		if (d.clients[i].uid == c->uid)
			total += d.clients[i].handed;
	if (total + more <= max_fds)
		return true;
	total = 0;
	for (i = 0; i < d.nr_clients; i++) {
		struct client *o = &d.clients[i];

		if (o->uid != c->uid)
			continue;
		o->handed = count_perf_fds(o->pid);
		total += o->handed;
	}
	return total + more <= max_fds;
}

/* ---- requests ------------------------------------------------------ */

static const char *target_name(uint32_t t)
{
	return t == PC_BROKER_TARGET_PID ? "pid" :
	       t == PC_BROKER_TARGET_CPU ? "cpu" : "cgroup";
}

static const struct pd_rule *rule_of(const struct client *c)
{
	return pd_policy_rule_for(d.policy, c->uid, c->groups, c->nr_groups);
}

/*
 * Close @n descriptors, all open and so all different: each run of
 * consecutive numbers with one close_range(2).  A request's pidfd and the
 * events opened after it usually are one run (each takes the lowest free
 * number), and a system call costs more than the closing here: a batch
 * of 8 would make 9.
 */
static void close_fds(const int *fds, unsigned int n)
{
	int sorted[PC_BROKER_FDS_MAX + 8 + PC_BROKER_BATCH_MAX];
	unsigned int i, j, start;

	for (i = 0; i < n; i++) {
		int fd = fds[i];

		for (j = i; j > 0 && sorted[j - 1] > fd; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = fd;
	}
	for (start = 0; start < n; start = i) {
		for (i = start + 1; i < n && sorted[i] == sorted[i - 1] + 1; i++)
			;
		if (i - start == 1 ||
		    syscall(SYS_close_range, (unsigned int)sorted[start],
			    (unsigned int)sorted[i - 1], 0)) {
			for (j = start; j < i; j++)
				close(sorted[j]);
		}
	}
}

/* An event as the log names it. */
static void describe(const struct perf_event_attr *attr, const char *tpn,
		     char *what, size_t size)
{
	int n;

	if (tpn)
		n = snprintf(what, size, "tracepoint %s", tpn);
	else
		n = snprintf(what, size, "type %u config %#llx", attr->type,
			     (unsigned long long)attr->config);
	if (!attr->exclude_kernel && n >= 0 && (size_t)n < size)
		n += snprintf(what + n, size - (size_t)n, " with kernel mode");
	if ((attr->freq ? attr->sample_freq : attr->sample_period) &&
	    n >= 0 && (size_t)n < size)
		snprintf(what + n, size - (size_t)n, " sampling %s %llu",
			 attr->freq ? "freq" : "period",
			 (unsigned long long)attr->sample_period);
}

/* One OPEN or OPEN_BATCH request as handle_open works through it. */
struct open_req {
	const struct pc_broker_msg *m;
	const int *fds;
	const struct pd_rule *rule;
	struct perf_event_attr *attrs;	/* sanitised, m->nr_attrs of them */
	const char **tpns;	/* each tracepoint's name, NULL for others */
	unsigned int n;		/* events in the request */
	unsigned int at;	/* the event a refusal is about */
	unsigned int target;	/* PD_T_OWN, PD_T_CPU or PD_T_CGROUP */
	unsigned long flags;	/* for perf_event_open(2) */
	bool attr_ok;		/* every attr passed pd_attr_sanitise */
	struct pd_task creds;	/* the target task's, for PD_T_OWN */
	pid_t pid;		/* perf_event_open's pid argument */
	int group_fd;
	char why[256], tgt[128];
};

/* Each attr sanitised, and its tracepoint named. */
static int open_sanitise(struct open_req *q)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < q->n && !ret; i++) {
		q->at = i;
		ret = pd_attr_sanitise(q->m->attrs[i], q->m->attr_sizes[i],
				       &q->attrs[i], q->why, sizeof(q->why));
		q->tpns[i] = !ret && q->attrs[i].type == PERF_TYPE_TRACEPOINT ?
			     tp_name(q->attrs[i].config) : NULL;
	}
	if (ret) {
		q->attr_ok = false;
		snprintf(q->tgt, sizeof(q->tgt), "%s",
			 target_name(q->m->target));
		return ret;
	}
	q->at = 0;
	return 0;
}

/* A process target: the pidfd's task and its credentials. */
static int open_target_pid(struct open_req *q)
{
	int ret;

	q->target = PD_T_OWN;
	ret = pd_task_of(q->fds[0], &q->creds);
	if (!ret)
		q->pid = q->creds.pid;
	snprintf(q->tgt, sizeof(q->tgt), "pid %d cpu %d", (int)q->pid,
		 q->m->cpu);
	if (ret)
		snprintf(q->why, sizeof(q->why), "%s",
			 ret == -EBADF ? "not a pidfd" :
			 ret == -EPERM ? "target process is in a pid "
					 "namespace the broker cannot see" :
			 ret == -EIO ? "cannot read the target's ids" :
			 "target process exited");
	return ret;
}

/* A cgroup target: a cgroup2 directory's descriptor, named by its path. */
static int open_target_cgroup(struct open_req *q)
{
	struct statfs sfs;
	char link[200];
	ssize_t r;

	q->target = PD_T_CGROUP;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", q->fds[0]);
	r = readlink(link, q->tgt, sizeof(q->tgt) - 1);
	q->tgt[r > 0 ? r : 0] = '\0';
	snprintf(link, sizeof(link), "%s", q->tgt);
	snprintf(q->tgt, sizeof(q->tgt), "cgroup %.100s cpu %d", link,
		 q->m->cpu);
	if (fstatfs(q->fds[0], &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(q->why, sizeof(q->why), "not a cgroup2 directory");
		return -EBADF;
	}
	q->pid = q->fds[0];
	q->flags |= PERF_FLAG_PID_CGROUP;
	return 0;
}

static int open_target(struct open_req *q)
{
	switch (q->m->target) {
	case PC_BROKER_TARGET_PID:
		return open_target_pid(q);
	case PC_BROKER_TARGET_CPU:
		q->target = PD_T_CPU;
		snprintf(q->tgt, sizeof(q->tgt), "cpu %d", q->m->cpu);
		return 0;
	default:
		return open_target_cgroup(q);
	}
}

/* The checks before any open: the user's rule for each event, the
 * task's owner, the group leader, the user's descriptor limit. */
static int open_check(const struct client *c, struct open_req *q)
{
	const struct pd_rule *rule = q->rule;
	unsigned int i;
	int ret;

	if (!rule) {
		snprintf(q->why, sizeof(q->why), "no rule for this user");
		return -EACCES;
	}
	for (i = 0; i < q->n; i++) {
		q->at = i;
		ret = pd_rule_check(rule, &q->attrs[i], q->target, q->tpns[i],
				    q->why, sizeof(q->why));
		if (ret)
			return ret;
	}
	q->at = 0;
	if (q->target == PD_T_OWN) {
		ret = pd_task_check_own(&q->creds, c->uid, c->gid, c->fd,
					q->why, sizeof(q->why));
		if (ret)
			return ret;
	}
	if (q->m->flags & PC_BROKER_F_GROUP) {
		q->group_fd = q->fds[pc_broker_open_nr_fds(q->m->target, 0)];
		if (!pd_fd_is(q->group_fd, "anon_inode:[perf_event]")) {
			snprintf(q->why, sizeof(q->why), "group leader is not "
				 "a perf event");
			return -EBADF;
		}
	}
	if (q->m->flags & PC_BROKER_F_NO_GROUP)
		q->flags |= PERF_FLAG_FD_NO_GROUP;
	if (!under_fd_limit(c, rule->max_fds, q->n)) {
		snprintf(q->why, sizeof(q->why), "the user holds %u "
			 "descriptors (max_fds)", rule->max_fds);
		return -EMFILE;
	}
	return 0;
}

/* The opens, into @opened (*nr_open of them, even on a failure). */
static int open_events(struct open_req *q, int *opened,
		       unsigned int *nr_open)
{
	unsigned int i;

	for (i = 0; i < q->n; i++) {
		int fd;

		q->at = i;
		fd = sys_perf_event_open(&q->attrs[i], q->pid, q->m->cpu,
					 (q->m->flags & PC_BROKER_F_LEAD) && i ?
					 opened[0] : q->group_fd, q->flags);
		if (fd < 0) {
			snprintf(q->why, sizeof(q->why),
				 "the kernel refused: %s", strerror(-fd));
			return fd;
		}
		opened[(*nr_open)++] = fd;
	}
	q->at = 0;
	/* The pidfd's process was alive at the check; if it still is, the
	 * pid cannot have been reused in between, so the events are on it. */
	if (q->target == PD_T_OWN && !pd_pidfd_alive(q->fds[0])) {
		snprintf(q->why, sizeof(q->why),
			 "target exited during the open");
		return -ESRCH;
	}
	return 0;
}

/* A log line for each granted event, or for the event at fault. */
static void open_log(const struct client *c, const struct open_req *q,
		     int ret)
{
	bool batch = q->m->type == PC_BROKER_OPEN_BATCH;
	char what[512];
	unsigned int i;

	for (i = ret ? q->at : 0; i < (ret ? q->at + 1 : q->n); i++) {
		char of[64] = "";

		if (q->attr_ok)
			describe(&q->attrs[i], q->tpns[i], what, sizeof(what));
		else
			snprintf(what, sizeof(what), "attr of %u bytes",
				 q->m->attr_sizes[i]);
		if (batch)
			snprintf(of, sizeof(of), " (event %u of %u%s)", i + 1,
				 q->n, ret ? "; the batch is refused" : "");
		logline(ret ? LOG_NOTICE : LOG_INFO,
			"%s: uid %u (%s) pid %d: open %s on %s: rule '%s'%s%s%s",
			ret ? "denied" : "allowed", (unsigned int)c->uid,
			c->user, (int)c->pid, what, q->tgt,
			q->rule ? q->rule->name : "", q->why[0] ? ": " : "",
			q->why, of);
	}
	logflush();
}

/*
 * An OPEN (one event) or an OPEN_BATCH (several on one target): every
 * check of every event before any is opened, then the opens; one refusal
 * refuses them all, and nothing is handed out unless all are open.  Each
 * granted event is a line of the log, a refusal the line of the event at
 * fault.  The events opened are left in @opened for the caller to close
 * after the reply; return their number.
 */
static unsigned int handle_open(struct client *c,
				const struct pc_broker_msg *m, const int *fds,
				int *opened)
{
	static struct perf_event_attr attrs[PC_BROKER_BATCH_MAX];
	static const char *tpns[PC_BROKER_BATCH_MAX];
	struct open_req q = {
		.m = m, .fds = fds, .rule = rule_of(c), .attrs = attrs,
		.tpns = tpns, .n = m->nr_attrs, .flags = PC_SYS_NO_BROKER,
		.attr_ok = true, .pid = -1, .group_fd = -1,
	};
	bool batch = m->type == PC_BROKER_OPEN_BATCH;
	unsigned int nr_open = 0;
	int ret;

	ret = open_sanitise(&q);
	if (!ret)
		ret = open_target(&q);
	if (!ret)
		ret = open_check(c, &q);
	if (!ret)
		ret = open_events(&q, opened, &nr_open);
	open_log(c, &q, ret);
	if (send_reply(c, m->type, ret, batch ? (ret ? q.at : q.n) : 0,
		       q.rule ? q.rule->name : "", q.why, strlen(q.why),
		       opened, ret ? 0 : nr_open) == 0 && !ret)
		c->handed += nr_open;
	/* The caller closes them, with the request's own. */
	return nr_open;
}

static void handle_tp_id(struct client *c, const struct pc_broker_msg *m)
{
	const struct pd_rule *rule = rule_of(c);
	char name[PC_BROKER_NAME_MAX + 1], path[4600], *colon;
	static char format[PC_BROKER_MSG_MAX / 2];
	uint64_t id = 0;
	int ret, n = 0;
	const char *why = "";

	memcpy(name, m->name, m->arg);
	name[m->arg] = '\0';
	colon = strchr(name, ':');
	if (!colon || strchr(colon + 1, ':')) {
		ret = -EINVAL;
		why = "not sys:name";
		goto out;
	}
	*colon = '\0';
	if (!rule || !pd_rule_allows_tracepoint(rule, name, colon + 1)) {
		ret = -EACCES;
		why = rule ? "tracepoint not in the rule" : "no rule for this user";
		goto out;
	}
	ret = pc_tracefs_root(NULL, d.tracefs, sizeof(d.tracefs));
	if (!ret)
		ret = pc_tracefs_id(d.tracefs, name, colon + 1, &id);
	if (ret) {
		why = "no such tracepoint";
		goto out;
	}
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", d.tracefs,
		 name, colon + 1);
	{
		int ffd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t r;

		while (ffd >= 0 && (size_t)n < sizeof(format) &&
		       (r = read(ffd, format + n, sizeof(format) - (size_t)n)) > 0)
			n += (int)r;
		if (ffd >= 0)
			close(ffd);
	}
out:
	if (colon)
		*colon = ':';
	logmsg(ret ? LOG_NOTICE : LOG_DEBUG,
	       "%s: uid %u (%s) pid %d: tracepoint id of %s: rule '%s'%s%s",
	       ret ? "denied" : "allowed", (unsigned int)c->uid, c->user,
	       (int)c->pid, name, rule ? rule->name : "", *why ? ": " : "",
	       why);
	if (ret)
		send_reply(c, PC_BROKER_TP_ID, ret, 0, rule ? rule->name : "",
			   why, strlen(why), NULL, 0);
	else
		send_reply(c, PC_BROKER_TP_ID, 0, id, rule->name, format,
			   (size_t)n, NULL, 0);
}

static void handle_tp_list(struct client *c, const struct pc_broker_msg *m)
{
	const struct pd_rule *rule = rule_of(c);
	static char text[PC_BROKER_MSG_MAX - 256];
	size_t i, n = 0, seen = 0;
	uint64_t next = 0;
	int ret = rule ? tp_build() : -EACCES;

	for (i = 0; !ret && i < d.nr_tps; i++) {
		const char *name = d.tps[i].name, *colon = strchr(name, ':');
		char sys[128];
		size_t len = strlen(name);

		snprintf(sys, sizeof(sys), "%.*s", (int)(colon - name), name);
		if (!pd_rule_allows_tracepoint(rule, sys, colon + 1))
			continue;
		if (seen++ < m->arg)
			continue;
		if (n + len + 1 > sizeof(text)) {
			next = seen - 1;
			break;
		}
		memcpy(text + n, name, len);
		text[n + len] = '\n';
		n += len + 1;
	}
	send_reply(c, PC_BROKER_TP_LIST, ret, next, rule ? rule->name : "",
		   text, ret ? 0 : n, NULL, 0);
}

static void handle_policy(struct client *c)
{
	const struct pd_rule *rule = rule_of(c);
	char text[4096];
	int n = rule ? pd_rule_describe(rule, text, sizeof(text)) : 0;

	send_reply(c, PC_BROKER_POLICY, rule ? 0 : -EACCES, 0,
		   rule ? rule->name : "", text, (size_t)n, NULL, 0);
}

/* Whether a message that did not decode says it is a batch. */
static bool batch_hdr(const void *buf, size_t len)
{
	const struct pc_broker_hdr *h = buf;

	return len >= sizeof(*h) && h->magic == PC_BROKER_MAGIC &&
	       h->version == PC_BROKER_VERSION_BATCH &&
	       h->type == PC_BROKER_OPEN_BATCH;
}

/* Read one message; 0 to keep the client, -1 to drop it.  @hangup:
 * poll said the client has shut its end. */
static int handle_client(struct client *c, bool hangup)
{
	char cbuf[CMSG_SPACE(sizeof(int) * (PC_BROKER_FDS_MAX + 1))];
	/* The request's descriptors, then the events handed out. */
	int fds[PC_BROKER_FDS_MAX + 8 + PC_BROKER_BATCH_MAX];
	unsigned int nr_fds = 0, nr_close, i;
	bool bad_cmsg = false;
	struct iovec iov = { .iov_base = d.msg, .iov_len = sizeof(d.msg) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct pc_broker_msg m;
	struct cmsghdr *cm;
	ssize_t n;
	int ret;

	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k, nr;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
			bad_cmsg = true;
			continue;
		}
		nr = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nr; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(fd));
			if (nr_fds < PC_BROKER_FDS_MAX + 8)
				fds[nr_fds++] = fd;
			else
				close(fd);
		}
	}
	/*
	 * 0 bytes is the end of the connection, or a message of no bytes
	 * (with descriptors, or while the client has not hung up), which
	 * has no reply to wait for: the client is dropped either way, its
	 * descriptors closed, and only the message is logged.
	 */
	if (n == 0) {
		if (nr_fds || !hangup)
			logmsg(LOG_NOTICE, "denied: uid %u (%s) pid %d: "
			       "malformed message of 0 bytes with %u "
			       "descriptors: connection closed",
			       (unsigned int)c->uid, c->user, (int)c->pid,
			       nr_fds);
		for (i = 0; i < nr_fds; i++)
			close(fds[i]);
		return -1;
	}
	/* More descriptors than fit are closed by the kernel (MSG_CTRUNC);
	 * a message longer than the buffer is cut (MSG_TRUNC). */
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC) || bad_cmsg)
		ret = mh.msg_flags & MSG_TRUNC ? -EMSGSIZE : -EBADF;
	else
		ret = pc_broker_decode_request(d.msg, (size_t)n, nr_fds, &m);
	if (ret) {
		logmsg(LOG_NOTICE, "denied: uid %u (%s) pid %d: malformed "
		       "message of %zd bytes with %u descriptors%s: %s",
		       (unsigned int)c->uid, c->user, (int)c->pid, n, nr_fds,
		       mh.msg_flags & MSG_CTRUNC ? " (and more)" : "",
		       strerror(-ret));
		/* The type is unknown: answer as to an open, which the
		 * library's decoder refuses unless it asked one; a batch by
		 * its header is answered as a batch, so that its sender
		 * does not take the broker for one that has none. */
		send_reply(c, batch_hdr(d.msg, (size_t)n) ?
			   PC_BROKER_OPEN_BATCH : PC_BROKER_OPEN, ret, 0, "",
			   "malformed request", 17, NULL, 0);
	}
	nr_close = nr_fds;
	if (!ret) {
		switch (m.type) {
		case PC_BROKER_OPEN:
		case PC_BROKER_OPEN_BATCH:
			nr_close += handle_open(c, &m, fds, fds + nr_fds);
			break;
		case PC_BROKER_TP_ID:
			handle_tp_id(c, &m);
			break;
		case PC_BROKER_TP_LIST:
			handle_tp_list(c, &m);
			break;
		default:
			handle_policy(c);
		}
	}
	close_fds(fds, nr_close);
	return 0;
}

/* ---- connections --------------------------------------------------- */

static void drop_client(size_t i)
{
	close(d.clients[i].fd);
	d.clients[i] = d.clients[--d.nr_clients];
}

static void accept_client(int lfd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *c;
	struct passwd *pw;
	size_t i, same = 0;
	int fd, ng;

	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		close(fd);
		return;
	}
	for (i = 0; i < d.nr_clients; i++)
		same += d.clients[i].uid == cred.uid;
	if (d.nr_clients == MAX_CLIENTS || same >= MAX_CLIENTS_PER_UID) {
		logmsg(LOG_WARNING, "denied: uid %u pid %d: too many "
		       "connections", (unsigned int)cred.uid, (int)cred.pid);
		close(fd);
		return;
	}
	c = &d.clients[d.nr_clients];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->pid = cred.pid;
	pw = getpwuid(cred.uid);
	snprintf(c->user, sizeof(c->user), "%s", pw ? pw->pw_name : "?");
	ng = MAX_GROUPS;
	if (!pw || getgrouplist(pw->pw_name, cred.gid, c->groups, &ng) < 0) {
		c->groups[0] = cred.gid;
		ng = 1;
	}
	c->nr_groups = (size_t)ng;
	d.nr_clients++;
}

/* ---- setup --------------------------------------------------------- */

static int make_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *env_fds = getenv("LISTEN_FDS");
	const char *env_pid = getenv("LISTEN_PID");
	struct stat st;
	char dir[sizeof(sa.sun_path)], *slash;
	int fd;

	/* systemd socket activation: the socket is fd 3, set up by the
	 * .socket unit (whose mode and group the admin sets there). */
	if (env_fds && env_pid && atoi(env_pid) == (int)getpid() &&
	    !strcmp(env_fds, "1"))
		return 3;
	/* Bound under a name of its own and renamed into place once it
	 * listens, with its mode and group set: a client never finds the
	 * path before a connect can succeed (ECONNREFUSED between bind and
	 * listen otherwise) nor with the umask's mode. */
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.%d.new",
		     d.socket_path, (int)getpid()) >= (int)sizeof(sa.sun_path)) {
		logmsg(LOG_ERR, "socket path too long: %s", d.socket_path);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", d.socket_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			logmsg(LOG_ERR, "cannot create %s: %s", dir,
			       strerror(errno));
			return -1;
		}
	}
	/* Only a stale socket is removed: never a file put there. */
	if (!lstat(d.socket_path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			logmsg(LOG_ERR, "%s exists and is not a socket",
			       d.socket_path);
			return -1;
		}
		unlink(d.socket_path);
	}
	unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, d.policy->socket_mode) ||
	    (d.policy->has_socket_group &&
	     chown(sa.sun_path, 0, d.policy->socket_group)) ||
	    listen(fd, 64) || rename(sa.sun_path, d.socket_path)) {
		logmsg(LOG_ERR, "cannot listen on %s: %s", d.socket_path,
		       strerror(errno));
		if (fd >= 0) {
			unlink(sa.sun_path);
			close(fd);
		}
		return -1;
	}
	return fd;
}

static struct pd_policy *load_policy(void)
{
	char err[512];
	struct pd_policy *pol = pd_policy_load(d.config, d.sysfs_root, err,
					       sizeof(err));

	if (!pol)
		logmsg(LOG_ERR, "%s", err);
	return pol;
}

static void reload(void)
{
	struct pd_policy *pol = load_policy();

	if (!pol) {
		logmsg(LOG_ERR, "reload failed: keeping the policy loaded before");
		return;
	}
	pd_policy_free(d.policy);
	d.policy = pol;
	/* The socket keeps its mode: a reload cannot widen who connects
	 * without a restart, which the log says. */
	logmsg(LOG_INFO, "policy reloaded from %s: %zu rules", d.config,
	       pol->nr_rules);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: perfctrd [-c FILE] [-s SOCKET] [--syslog] [--check]\n"
		"  -c, --config FILE   policy file (default " DEFAULT_CONFIG ")\n"
		"  -s, --socket PATH   socket (default " PC_BROKER_SOCKET ")\n"
		"      --syslog        log to syslog (authpriv) instead of stderr\n"
		"      --check         validate the policy file and exit\n");
}

/* Serve until a signal other than SIGHUP (which reloads the policy):
 * the signals on @sfd, clients connecting on @lfd and their requests.
 * Return 0, or 1 when poll() fails. */
static int serve(int lfd, int sfd)
{
	struct pollfd pfds[MAX_CLIENTS + 2];
	size_t i;

	for (;;) {
		size_t nfds = 0;

		pfds[nfds++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfds[nfds++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < d.nr_clients; i++)
			pfds[nfds++] = (struct pollfd){
				.fd = d.clients[i].fd,
				.events = POLLIN | POLLRDHUP };
		if (poll(pfds, nfds, -1) < 0) {
			if (errno == EINTR)
				continue;
			logmsg(LOG_ERR, "poll: %s", strerror(errno));
			return 1;
		}
		if (pfds[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					reload();
				} else {
					logmsg(LOG_INFO, "exiting on signal %u",
					       si.ssi_signo);
					return 0;
				}
			}
		}
		/* Clients from the end, so a dropped one's slot (refilled
		 * from the end) is not skipped. */
		for (i = nfds; i-- > 2;) {
			size_t ci = i - 2;

			if (!pfds[i].revents || ci >= d.nr_clients ||
			    d.clients[ci].fd != pfds[i].fd)
				continue;
			if ((pfds[i].revents & (POLLERR | POLLNVAL)) ||
			    handle_client(&d.clients[ci], pfds[i].revents &
					  (POLLHUP | POLLRDHUP)))
				drop_client(ci);
		}
		if (pfds[1].revents & POLLIN)
			accept_client(lfd);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "syslog", no_argument, NULL, 'l' },
		{ "check", no_argument, NULL, 'k' },
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool check_only = false;
	sigset_t mask;
	int opt, lfd, sfd;
	size_t i;

	d.config = DEFAULT_CONFIG;
	d.socket_path = PC_BROKER_SOCKET;
	while ((opt = getopt_long(argc, argv, "c:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': d.config = optarg; break;
		case 's': d.socket_path = optarg; break;
		case 'l': d.use_syslog = true; break;
		case 'k': check_only = true; break;
		case 'r': d.sysfs_root = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (d.use_syslog)
		openlog("perfctrd", LOG_PID, LOG_AUTHPRIV);
	/* The broker's own opens must never ask a broker. */
	setenv("PERFCTR_NO_BROKER", "1", 1);
	d.policy = load_policy();
	if (!d.policy)
		return 1;
	if (check_only) {
		printf("%s: %zu rules, valid\n", d.config, d.policy->nr_rules);
		return 0;
	}
	if (geteuid() != 0)
		logmsg(LOG_WARNING, "not running as root: opens get only this "
		       "user's rights");
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	lfd = make_socket();
	if (lfd < 0 || sfd < 0)
		return 1;
	logmsg(LOG_INFO, "listening on %s, policy %s: %zu rules",
	       d.socket_path, d.config, d.policy->nr_rules);
	if (serve(lfd, sfd))
		return 1;
	if (lfd != 3)
		unlink(d.socket_path);
	for (i = d.nr_clients; i-- > 0;)
		drop_client(i);
	tp_free();
	pd_policy_free(d.policy);
	return 0;
}
