/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfctrd's policy: the file format of docs/perfctrd.conf.5, parsed into
 * rules, and the checks of a request's attr against the rule of its user.
 * No sockets here: every function is pure apart from name lookups (users,
 * groups, PMU types), so the unit tests drive it directly.
 */
#ifndef PERFCTRD_POLICY_H
#define PERFCTRD_POLICY_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum pd_class {
	PD_EV_SOFTWARE = 1u << 0,
	PD_EV_HARDWARE = 1u << 1,	/* generic hardware and cache events */
	PD_EV_BREAKPOINT = 1u << 2,
	PD_EV_RAW = 1u << 3,		/* PERF_TYPE_RAW and PERF_SAMPLE_RAW */
};

enum pd_target {
	PD_T_OWN = 1u << 0,	/* processes the user may ptrace */
	PD_T_CPU = 1u << 1,	/* CPU-wide */
	PD_T_CGROUP = 1u << 2,	/* a cgroup on one CPU */
};

struct pd_tp_glob {
	char *sys;
	char *name;		/* NULL: every tracepoint of the subsystem */
};

/* pmu:NAME (any event of the PMU) or pmu:NAME/EVENT (that encoding). */
struct pd_pmu_event {
	char *text;
	uint32_t type;
	bool any;
	uint64_t config, config1, config2;
};

struct pd_rule {
	char *name;
	int line;
	uid_t *uids;
	size_t nr_uids;
	gid_t *gids;
	size_t nr_gids;
	unsigned int classes;		/* enum pd_class */
	struct pd_tp_glob *tps;
	size_t nr_tps;
	struct pd_pmu_event *pmus;
	size_t nr_pmus;
	unsigned int targets;		/* enum pd_target */
	bool kernel;			/* kernel-mode counting */
	bool kernel_sampling;		/* kernel-mode sampling too */
	bool sampling;
	uint64_t max_sample_freq;	/* 0: no limit beyond the kernel's */
	uint64_t min_sample_period;	/* 0: no limit */
	unsigned int max_fds;
};

struct pd_policy {
	unsigned int socket_mode;
	bool has_socket_group;
	gid_t socket_group;
	struct pd_rule *rules;
	size_t nr_rules;
};

/*
 * Parse policy @text; @file names it in messages ("FILE:LINE: what").
 * @sysfs_root: where PMUs are looked up (NULL: /sys).
 * Return: the policy, or NULL with @err filled (and errno EINVAL/ENOMEM).
 */
struct pd_policy *pd_policy_parse(const char *text, const char *file,
				  const char *sysfs_root, char *err,
				  size_t err_size);
/* Read and parse the file at @path (same contract). */
struct pd_policy *pd_policy_load(const char *path, const char *sysfs_root,
				 char *err, size_t err_size);
void pd_policy_free(struct pd_policy *policy);

/* The first rule naming @uid or one of @groups, or NULL. */
const struct pd_rule *pd_policy_rule_for(const struct pd_policy *policy,
					 uid_t uid, const gid_t *groups,
					 size_t nr_groups);

/*
 * Copy the @size bytes of a caller's attr into @attr, refusing what no
 * policy may grant: bytes beyond the attr this build knows that are not
 * zero, reserved bits and fields, AUX and sigtrap fields, unknown
 * sample_type or read_format bits.  Return 0 or -EINVAL/-E2BIG with @why.
 */
int pd_attr_sanitise(const void *bytes, size_t size,
		     struct perf_event_attr *attr, char *why, size_t why_size);

/*
 * Does @rule allow @attr on @target (enum pd_target)?  @tp_name is the
 * "sys:name" of a tracepoint attr (NULL when unknown).
 * Return: 0, or -EACCES with @why filled.  Never changes @attr: what is
 * not allowed is refused, never narrowed or widened.
 */
int pd_rule_check(const struct pd_rule *rule,
		  const struct perf_event_attr *attr, unsigned int target,
		  const char *tp_name, char *why, size_t why_size);

/* Whether @rule lets a tracepoint "sys:name" be named at all. */
bool pd_rule_allows_tracepoint(const struct pd_rule *rule, const char *sys,
			       const char *name);

/* A human summary of @rule for `perfex info`, into @buf.  Return length. */
int pd_rule_describe(const struct pd_rule *rule, char *buf, size_t size);

#endif /* PERFCTRD_POLICY_H */
