// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* perfctrd's policy file and checks (see policy.h, docs/perfctrd.conf.5). */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfctr/event.h"
#include "policy.h"

#define DEFAULT_MAX_FDS 1024
#define DEFAULT_SOCKET_MODE 0666

struct parser {
	const char *file;
	const char *sysfs_root;
	int line;
	char *err;
	size_t err_size;
	struct pd_policy *policy;
	struct pd_rule *rule;		/* the section being read */
	unsigned int seen;		/* keys seen in this section */
};

static int fail(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->err, p->err_size, "%s:%d: ", p->file, p->line);

	if (n < 0 || (size_t)n >= p->err_size)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static bool parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return false;
	return true;
}

static bool parse_u64(const char *v, int base, uint64_t *out)
{
	char *end;

	if (!*v || *v == '-' || isspace((unsigned char)*v))
		return false;
	errno = 0;
	*out = strtoull(v, &end, base);
	return !errno && !*end;
}

static void *grow(void *array, size_t nr, size_t elem)
{
	return realloc(array, (nr + 1) * elem);
}

static int add_uid(struct parser *p, const char *item)
{
	struct pd_rule *r = p->rule;
	struct passwd *pw;
	uid_t *uids;
	uint64_t v;

	if (parse_u64(item, 10, &v)) {
		if (v >= (uid_t)-1)
			return fail(p, "user id '%s' out of range", item);
	} else {
		pw = getpwnam(item);
		if (!pw)
			return fail(p, "unknown user '%s'", item);
		v = pw->pw_uid;
	}
	uids = grow(r->uids, r->nr_uids, sizeof(*uids));
	if (!uids)
		return -ENOMEM;
	r->uids = uids;
	r->uids[r->nr_uids++] = (uid_t)v;
	return 0;
}

static int lookup_gid(struct parser *p, const char *item, gid_t *gid)
{
	struct group *gr;
	uint64_t v;

	if (parse_u64(item, 10, &v)) {
		if (v >= (gid_t)-1)
			return fail(p, "group id '%s' out of range", item);
		*gid = (gid_t)v;
		return 0;
	}
	gr = getgrnam(item);
	if (!gr)
		return fail(p, "unknown group '%s'", item);
	*gid = gr->gr_gid;
	return 0;
}

static int add_gid(struct parser *p, const char *item)
{
	struct pd_rule *r = p->rule;
	gid_t *gids, gid;
	int ret = lookup_gid(p, item, &gid);

	if (ret)
		return ret;
	gids = grow(r->gids, r->nr_gids, sizeof(*gids));
	if (!gids)
		return -ENOMEM;
	r->gids = gids;
	r->gids[r->nr_gids++] = gid;
	return 0;
}

static int add_tracepoint(struct parser *p, const char *glob)
{
	struct pd_rule *r = p->rule;
	const char *colon = strchr(glob, ':');
	struct pd_tp_glob *tps, *tp;

	if (!*glob || colon == glob || strchr(glob, '/') ||
	    (colon && (!colon[1] || strchr(colon + 1, ':'))))
		return fail(p, "bad tracepoint pattern '%s' (want "
			    "tracepoint:SUBSYSTEM or tracepoint:SUBSYSTEM:NAME)",
			    glob);
	tps = grow(r->tps, r->nr_tps, sizeof(*tps));
	if (!tps)
		return -ENOMEM;
	r->tps = tps;
	tp = &r->tps[r->nr_tps];
	tp->sys = colon ? strndup(glob, (size_t)(colon - glob)) : strdup(glob);
	tp->name = colon ? strdup(colon + 1) : NULL;
	if (!tp->sys || (colon && !tp->name)) {
		free(tp->sys);
		free(tp->name);
		return -ENOMEM;
	}
	r->nr_tps++;
	return 0;
}

static int pmu_type(struct parser *p, const char *name, uint32_t *type)
{
	char path[4096], buf[32];
	uint64_t v;
	FILE *f;

	if (!*name || strchr(name, '/') || name[0] == '.')
		return fail(p, "bad PMU name '%s'", name);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/type",
		 p->sysfs_root, name);
	f = fopen(path, "re");
	if (!f)
		return fail(p, "unknown PMU '%s' (no %s)", name, path);
	if (!fgets(buf, sizeof(buf), f) ||
	    !parse_u64(trim(buf), 10, &v) || v > UINT32_MAX) {
		fclose(f);
		return fail(p, "cannot read the type of PMU '%s'", name);
	}
	fclose(f);
	*type = (uint32_t)v;
	return 0;
}

static int add_pmu(struct parser *p, const char *text)
{
	struct pd_rule *r = p->rule;
	struct pd_pmu_event *pmus, ev = { 0 };
	const char *slash = strchr(text, '/');
	char name[256];
	int ret;

	if ((size_t)snprintf(name, sizeof(name), "%.*s",
			     (int)(slash ? (size_t)(slash - text) : strlen(text)),
			     text) >= sizeof(name))
		return fail(p, "PMU name too long in '%s'", text);
	ret = pmu_type(p, name, &ev.type);
	if (ret)
		return ret;
	ev.any = !slash;
	if (slash) {
		struct perfctr_parse_opts opts = {
			.sz = sizeof(opts), .sysfs_root = p->sysfs_root,
		};
		struct perfctr_parse_error perr = { .sz = sizeof(perr) };
		struct perfctr_evlist *list = perfctr_evlist__new();
		const struct perf_event_attr *attr;
		char spec[600];

		if (!list)
			return -ENOMEM;
		snprintf(spec, sizeof(spec), "%s/", text);
		ret = perfctr_evlist__parse(list, spec, &opts, &perr);
		if (ret < 0 || perfctr_evlist__nr_events(list) != 1) {
			perfctr_evlist__delete(list);
			return fail(p, "unknown PMU event '%s': %s", text,
				    ret < 0 ? perr.message : "not one event");
		}
		attr = perfctr_evlist__attr(list, 0);
		ev.type = attr->type;
		ev.config = attr->config;
		ev.config1 = attr->config1;
		ev.config2 = attr->config2;
		perfctr_evlist__delete(list);
	}
	ev.text = strdup(text);
	pmus = grow(r->pmus, r->nr_pmus, sizeof(*pmus));
	if (!ev.text || !pmus) {
		free(ev.text);
		if (pmus)
			r->pmus = pmus;
		return -ENOMEM;
	}
	r->pmus = pmus;
	r->pmus[r->nr_pmus++] = ev;
	return 0;
}

static int add_event(struct parser *p, const char *item)
{
	static const struct { const char *name; unsigned int bit; } classes[] = {
		{ "software", PD_EV_SOFTWARE }, { "hardware", PD_EV_HARDWARE },
		{ "breakpoint", PD_EV_BREAKPOINT }, { "raw", PD_EV_RAW },
	};
	size_t i;

	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strcmp(item, classes[i].name)) {
			p->rule->classes |= classes[i].bit;
			return 0;
		}
	if (!strncmp(item, "tracepoint:", 11))
		return add_tracepoint(p, item + 11);
	if (!strncmp(item, "pmu:", 4))
		return add_pmu(p, item + 4);
	return fail(p, "unknown event class '%s' (software, hardware, "
		    "breakpoint, raw, tracepoint:GLOB, pmu:NAME[/EVENT])", item);
}

static int add_target(struct parser *p, const char *item)
{
	if (!strcmp(item, "own"))
		p->rule->targets |= PD_T_OWN;
	else if (!strcmp(item, "cpu"))
		p->rule->targets |= PD_T_CPU;
	else if (!strcmp(item, "cgroup"))
		p->rule->targets |= PD_T_CGROUP;
	else
		return fail(p, "unknown target '%s' (own, cpu, cgroup)", item);
	return 0;
}

/* Call @fn for each comma- or space-separated item of @value. */
static int each_item(struct parser *p, char *value,
		     int (*fn)(struct parser *, const char *))
{
	char *save = NULL, *item;
	int ret, n = 0;

	for (item = strtok_r(value, ", \t", &save); item;
	     item = strtok_r(NULL, ", \t", &save), n++) {
		ret = fn(p, item);
		if (ret)
			return ret;
	}
	return n ? 0 : fail(p, "empty list");
}

enum rule_key {
	K_USERS, K_GROUPS, K_EVENTS, K_TARGETS, K_KERNEL, K_SAMPLING,
	K_MAX_FREQ, K_MIN_PERIOD, K_MAX_FDS, K_NR,
};

static const char *const rule_keys[K_NR] = {
	"users", "groups", "events", "targets", "kernel", "sampling",
	"max_sample_freq", "min_sample_period", "max_fds",
};

static int rule_key(struct parser *p, const char *key, char *value)
{
	struct pd_rule *r = p->rule;
	uint64_t v;
	int k;

	for (k = 0; k < K_NR; k++)
		if (!strcmp(key, rule_keys[k]))
			break;
	if (k == K_NR)
		return fail(p, "unknown key '%s' in rule '%s'", key, r->name);
	if (p->seen & (1u << k))
		return fail(p, "'%s' given twice in rule '%s'", key, r->name);
	p->seen |= 1u << k;
	switch (k) {
	case K_USERS:
		return each_item(p, value, add_uid);
	case K_GROUPS:
		return each_item(p, value, add_gid);
	case K_EVENTS:
		return each_item(p, value, add_event);
	case K_TARGETS:
		return each_item(p, value, add_target);
	case K_KERNEL:
		/* "count": kernel-mode counts, but no samples of kernel
		 * state (addresses, callchains, registers). */
		if (!strcmp(value, "count")) {
			r->kernel = true;
			return 0;
		}
		if (!parse_bool(value, &r->kernel))
			return fail(p, "'kernel' wants yes, count or no, not "
				    "'%s'", value);
		r->kernel_sampling = r->kernel;
		return 0;
	case K_SAMPLING:
		return parse_bool(value, &r->sampling) ? 0 :
		       fail(p, "'sampling' wants yes or no, not '%s'", value);
	case K_MAX_FREQ:
		if (!parse_u64(value, 10, &v) || !v)
			return fail(p, "bad max_sample_freq '%s'", value);
		r->max_sample_freq = v;
		return 0;
	case K_MIN_PERIOD:
		if (!parse_u64(value, 10, &v) || !v)
			return fail(p, "bad min_sample_period '%s'", value);
		r->min_sample_period = v;
		return 0;
	default:
		if (!parse_u64(value, 10, &v) || !v || v > INT_MAX)
			return fail(p, "bad max_fds '%s'", value);
		r->max_fds = (unsigned int)v;
		return 0;
	}
}

static int global_key(struct parser *p, const char *key, char *value)
{
	struct pd_policy *pol = p->policy;
	uint64_t v;

	if (!strcmp(key, "socket_mode")) {
		if (!parse_u64(value, 8, &v) || v > 0777)
			return fail(p, "bad socket_mode '%s' (octal, e.g. 0660)",
				    value);
		pol->socket_mode = (unsigned int)v;
		return 0;
	}
	if (!strcmp(key, "socket_group")) {
		pol->has_socket_group = true;
		return lookup_gid(p, value, &pol->socket_group);
	}
	return fail(p, "unknown key '%s' outside a rule", key);
}

/* A finished section must name someone, or it is a rule for nobody. */
static int end_rule(struct parser *p)
{
	struct pd_rule *r = p->rule;
	int line = p->line;
	int ret = 0;

	if (r && !r->nr_uids && !r->nr_gids) {
		p->line = r->line;
		ret = fail(p, "rule '%s' names no users and no groups", r->name);
		p->line = line;
	} else if (r && !r->targets) {
		p->line = r->line;
		ret = fail(p, "rule '%s' allows no targets", r->name);
		p->line = line;
	}
	return ret;
}

static int start_rule(struct parser *p, char *head)
{
	struct pd_policy *pol = p->policy;
	struct pd_rule *rules;
	char *name;
	size_t i;
	int ret = end_rule(p);

	if (ret)
		return ret;
	if (strncmp(head, "rule", 4) || !isspace((unsigned char)head[4]))
		return fail(p, "unknown section '[%s]' (want [rule NAME])", head);
	name = trim(head + 4);
	if (!*name || strlen(name) >= 64 || strpbrk(name, " \t"))
		return fail(p, "bad rule name '%s'", name);
	for (i = 0; i < pol->nr_rules; i++)
		if (!strcmp(pol->rules[i].name, name))
			return fail(p, "rule '%s' defined twice (first on line "
				    "%d)", name, pol->rules[i].line);
	rules = grow(pol->rules, pol->nr_rules, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	pol->rules = rules;
	p->rule = &rules[pol->nr_rules];
	memset(p->rule, 0, sizeof(*p->rule));
	p->rule->name = strdup(name);
	if (!p->rule->name)
		return -ENOMEM;
	p->rule->line = p->line;
	p->rule->max_fds = DEFAULT_MAX_FDS;
	pol->nr_rules++;
	p->seen = 0;
	return 0;
}

static int parse_line(struct parser *p, char *line)
{
	char *hash = strchr(line, '#'), *eq, *key, *value, *end;

	if (hash)
		*hash = '\0';
	line = trim(line);
	if (!*line)
		return 0;
	if (*line == '[') {
		end = strchr(line, ']');
		if (!end || trim(end + 1)[0])
			return fail(p, "malformed section header");
		*end = '\0';
		return start_rule(p, trim(line + 1));
	}
	eq = strchr(line, '=');
	if (!eq)
		return fail(p, "expected 'key = value'");
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (!*value)
		return fail(p, "'%s' has no value", key);
	return p->rule ? rule_key(p, key, value) : global_key(p, key, value);
}

struct pd_policy *pd_policy_parse(const char *text, const char *file,
				  const char *sysfs_root, char *err,
				  size_t err_size)
{
	struct parser p = {
		.file = file, .sysfs_root = sysfs_root ? sysfs_root : "/sys",
		.err = err, .err_size = err_size,
	};
	char *copy = strdup(text), *line, *next;
	int ret = 0;

	if (err_size)
		err[0] = '\0';
	p.policy = calloc(1, sizeof(*p.policy));
	if (!copy || !p.policy) {
		free(copy);
		free(p.policy);
		snprintf(err, err_size, "%s: out of memory", file);
		errno = ENOMEM;
		return NULL;
	}
	p.policy->socket_mode = DEFAULT_SOCKET_MODE;
	for (line = copy; line && !ret; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		p.line++;
		ret = parse_line(&p, line);
	}
	if (!ret)
		ret = end_rule(&p);
	free(copy);
	if (ret) {
		if (ret == -ENOMEM)
			snprintf(err, err_size, "%s:%d: out of memory", file,
				 p.line);
		pd_policy_free(p.policy);
		errno = -ret;
		return NULL;
	}
	return p.policy;
}

struct pd_policy *pd_policy_load(const char *path, const char *sysfs_root,
				 char *err, size_t err_size)
{
	struct pd_policy *pol;
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		int e = errno;

		snprintf(err, err_size, "%s: %s", path, strerror(e));
		errno = e;
		return NULL;
	}
	for (;;) {
		size_t n;

		if (cap - len < 4096) {
			char *t;

			/* A policy is a page or two: 1 MiB is no policy. */
			if (cap > (1u << 20)) {
				snprintf(err, err_size, "%s: file too large", path);
				free(text);
				fclose(f);
				errno = EFBIG;
				return NULL;
			}
			t = realloc(text, cap + 8192);
			if (!t) {
				free(text);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			text = t;
			cap += 8192;
		}
		n = fread(text + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	text[len] = '\0';
	if (strlen(text) != len) {
		snprintf(err, err_size, "%s: contains a NUL byte", path);
		free(text);
		errno = EINVAL;
		return NULL;
	}
	pol = pd_policy_parse(text, path, sysfs_root, err, err_size);
	free(text);
	return pol;
}

void pd_policy_free(struct pd_policy *pol)
{
	size_t i, j;

	if (!pol)
		return;
	for (i = 0; i < pol->nr_rules; i++) {
		struct pd_rule *r = &pol->rules[i];

		free(r->name);
		free(r->uids);
		free(r->gids);
		for (j = 0; j < r->nr_tps; j++) {
			free(r->tps[j].sys);
			free(r->tps[j].name);
		}
		free(r->tps);
		for (j = 0; j < r->nr_pmus; j++)
			free(r->pmus[j].text);
		free(r->pmus);
	}
	free(pol->rules);
	free(pol);
}

const struct pd_rule *pd_policy_rule_for(const struct pd_policy *pol,
					 uid_t uid, const gid_t *groups,
					 size_t nr_groups)
{
	size_t i, j, k;

	for (i = 0; i < pol->nr_rules; i++) {
		const struct pd_rule *r = &pol->rules[i];

		for (j = 0; j < r->nr_uids; j++)
			if (r->uids[j] == uid)
				return r;
		for (j = 0; j < r->nr_gids; j++)
			for (k = 0; k < nr_groups; k++)
				if (r->gids[j] == groups[k])
					return r;
	}
	return NULL;
}

static int why_fail(char *why, size_t size, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int why_fail(char *why, size_t size, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -err;
}

/* The flag bits of the attr this build knows: up to and with sigtrap. */
#define KNOWN_ATTR_FLAGS ((1ull << 38) - 1)
#define FLAGS_OFFSET (offsetof(struct perf_event_attr, read_format) + 8)
#define BIT_AUX_OUTPUT (1ull << 31)
#define BIT_SIGTRAP (1ull << 37)

int pd_attr_sanitise(const void *bytes, size_t size,
		     struct perf_event_attr *attr, char *why, size_t why_size)
{
	const unsigned char *b = bytes;
	uint64_t flags;
	size_t i;

	if (size < PERF_ATTR_SIZE_VER0 || size > 4096)
		return why_fail(why, why_size, E2BIG, "attr size %zu", size);
	/* The kernel's own rule for a larger attr than it knows. */
	for (i = sizeof(*attr); i < size; i++)
		if (b[i])
			return why_fail(why, why_size, E2BIG,
					"attr byte %zu beyond the %zu this "
					"broker knows is not zero", i,
					sizeof(*attr));
	memset(attr, 0, sizeof(*attr));
	memcpy(attr, bytes, size < sizeof(*attr) ? size : sizeof(*attr));
	attr->size = sizeof(*attr);
	memcpy(&flags, (const char *)attr + FLAGS_OFFSET, sizeof(flags));
	if (flags & ~KNOWN_ATTR_FLAGS)
		return why_fail(why, why_size, EINVAL,
				"reserved attr flag bits %#llx",
				(unsigned long long)(flags & ~KNOWN_ATTR_FLAGS));
	if (flags & BIT_AUX_OUTPUT)
		return why_fail(why, why_size, EINVAL, "aux_output");
	if ((flags & BIT_SIGTRAP) || attr->sig_data)
		return why_fail(why, why_size, EINVAL,
				"sigtrap and sig_data are not brokered");
	if (attr->aux_watermark || attr->aux_sample_size)
		return why_fail(why, why_size, EINVAL, "AUX fields");
	if (attr->__reserved_2 || attr->__reserved_3)
		return why_fail(why, why_size, EINVAL, "reserved attr fields");
	if (attr->sample_type & ~(PERF_SAMPLE_MAX - 1))
		return why_fail(why, why_size, EINVAL,
				"unknown sample_type bits %#llx",
				(unsigned long long)attr->sample_type);
	if (attr->sample_type & PERF_SAMPLE_AUX)
		return why_fail(why, why_size, EINVAL, "PERF_SAMPLE_AUX");
	if (attr->read_format & ~((PERF_FORMAT_MAX) - 1))
		return why_fail(why, why_size, EINVAL,
				"unknown read_format bits %#llx",
				(unsigned long long)attr->read_format);
	if (attr->branch_sample_type & ~((PERF_SAMPLE_BRANCH_MAX) - 1))
		return why_fail(why, why_size, EINVAL,
				"unknown branch_sample_type bits");
	return 0;
}

bool pd_rule_allows_tracepoint(const struct pd_rule *rule, const char *sys,
			       const char *name)
{
	size_t i;

	for (i = 0; i < rule->nr_tps; i++)
		if (!fnmatch(rule->tps[i].sys, sys, 0) &&
		    (!rule->tps[i].name || !fnmatch(rule->tps[i].name, name, 0)))
			return true;
	return false;
}

static bool pmu_allows(const struct pd_rule *rule,
		       const struct perf_event_attr *attr)
{
	size_t i;

	for (i = 0; i < rule->nr_pmus; i++) {
		const struct pd_pmu_event *e = &rule->pmus[i];

		if (e->type != attr->type)
			continue;
		if (e->any || (e->config == attr->config &&
			       e->config1 == attr->config1 &&
			       e->config2 == attr->config2))
			return true;
	}
	return false;
}

static int check_event(const struct pd_rule *r,
		       const struct perf_event_attr *attr, const char *tp_name,
		       char *why, size_t size)
{
	char sys[128];
	const char *colon;

	if (pmu_allows(r, attr))
		return 0;
	switch (attr->type) {
	case PERF_TYPE_SOFTWARE:
		if (attr->config >= PERF_COUNT_SW_MAX)
			return why_fail(why, size, EACCES,
					"unknown software event %llu",
					(unsigned long long)attr->config);
		if (r->classes & PD_EV_SOFTWARE)
			return 0;
		return why_fail(why, size, EACCES, "software events");
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
		if (r->classes & PD_EV_HARDWARE)
			return 0;
		return why_fail(why, size, EACCES, "hardware events");
	case PERF_TYPE_BREAKPOINT:
		if (!(r->classes & PD_EV_BREAKPOINT))
			return why_fail(why, size, EACCES, "breakpoints");
		/* Kernel addresses have the top bit set on every 64-bit
		 * architecture we build for. */
		if (!r->kernel && (attr->bp_addr >> 63))
			return why_fail(why, size, EACCES,
					"a breakpoint on a kernel address");
		return 0;
	case PERF_TYPE_RAW:
		if (r->classes & PD_EV_RAW)
			return 0;
		return why_fail(why, size, EACCES, "raw events");
	case PERF_TYPE_TRACEPOINT:
		if (!tp_name)
			return why_fail(why, size, EACCES,
					"unknown tracepoint id %llu",
					(unsigned long long)attr->config);
		colon = strchr(tp_name, ':');
		if (!colon || (size_t)(colon - tp_name) >= sizeof(sys))
			return why_fail(why, size, EACCES, "tracepoint %s",
					tp_name);
		snprintf(sys, sizeof(sys), "%.*s", (int)(colon - tp_name),
			 tp_name);
		if (pd_rule_allows_tracepoint(r, sys, colon + 1))
			return 0;
		return why_fail(why, size, EACCES, "tracepoint %s", tp_name);
	default:
		return why_fail(why, size, EACCES, "events of PMU type %u",
				attr->type);
	}
}

/* Sample fields that show kernel state. */
#define KERNEL_SAMPLE_BITS (PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | \
			    PERF_SAMPLE_DATA_PAGE_SIZE)
#define KERNEL_BRANCHES (PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_HV)

int pd_rule_check(const struct pd_rule *r, const struct perf_event_attr *attr,
		  unsigned int target, const char *tp_name, char *why,
		  size_t size)
{
	bool sampling = attr->freq ? attr->sample_freq : attr->sample_period;
	int ret;

	if (!(r->targets & target))
		return why_fail(why, size, EACCES, "%s targets",
				target == PD_T_OWN ? "process" :
				target == PD_T_CPU ? "CPU-wide" : "cgroup");
	ret = check_event(r, attr, tp_name, why, size);
	if (ret)
		return ret;
	if (!r->kernel && !attr->exclude_kernel)
		return why_fail(why, size, EACCES,
				"kernel mode (set exclude_kernel)");
	if (sampling && !r->kernel_sampling && !attr->exclude_kernel)
		return why_fail(why, size, EACCES, "kernel-mode sampling");
	if (!r->kernel_sampling) {
		if ((attr->sample_type & PERF_SAMPLE_CALLCHAIN) &&
		    !attr->exclude_callchain_kernel)
			return why_fail(why, size, EACCES, "kernel callchains");
		if (attr->sample_type & KERNEL_SAMPLE_BITS)
			return why_fail(why, size, EACCES,
					"kernel sample fields");
		if ((attr->sample_type & PERF_SAMPLE_BRANCH_STACK) &&
		    (attr->branch_sample_type & KERNEL_BRANCHES))
			return why_fail(why, size, EACCES, "kernel branches");
		if (attr->ksymbol || attr->bpf_event || attr->text_poke)
			return why_fail(why, size, EACCES,
					"kernel symbol, BPF or text poke records");
	}
	/* Samples on a CPU or cgroup catch other users' processes: their
	 * stacks and registers are not what counting them grants. */
	if (target != PD_T_OWN && !r->kernel_sampling &&
	    (attr->sample_type & (PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER)))
		return why_fail(why, size, EACCES,
				"user stacks and registers of other processes");
	if ((attr->sample_type & PERF_SAMPLE_RAW) && !(r->classes & PD_EV_RAW))
		return why_fail(why, size, EACCES, "raw samples");
	if (sampling) {
		if (!r->sampling)
			return why_fail(why, size, EACCES, "sampling");
		if (attr->freq && r->max_sample_freq &&
		    attr->sample_freq > r->max_sample_freq)
			return why_fail(why, size, EACCES,
					"sample frequency %llu above %llu",
					(unsigned long long)attr->sample_freq,
					(unsigned long long)r->max_sample_freq);
		if (!attr->freq && r->min_sample_period &&
		    attr->sample_period < r->min_sample_period)
			return why_fail(why, size, EACCES,
					"sample period %llu below %llu",
					(unsigned long long)attr->sample_period,
					(unsigned long long)r->min_sample_period);
	}
	return 0;
}

int pd_rule_describe(const struct pd_rule *r, char *buf, size_t size)
{
	static const char *const cls[] = {
		"software", "hardware", "breakpoint", "raw",
	};
	size_t n = 0, i;

#define PUT(...) do {							\
		int k_ = snprintf(buf + n, n < size ? size - n : 0,	\
				  __VA_ARGS__);				\
		if (k_ > 0)						\
			n += (size_t)k_;				\
	} while (0)
	PUT("rule %s\nevents", r->name);
	for (i = 0; i < 4; i++)
		if (r->classes & (1u << i))
			PUT(" %s", cls[i]);
	for (i = 0; i < r->nr_tps; i++)
		PUT(" tracepoint:%s%s%s", r->tps[i].sys,
		    r->tps[i].name ? ":" : "",
		    r->tps[i].name ? r->tps[i].name : "");
	for (i = 0; i < r->nr_pmus; i++)
		PUT(" pmu:%s", r->pmus[i].text);
	PUT("\ntargets%s%s%s\n", r->targets & PD_T_OWN ? " own" : "",
	    r->targets & PD_T_CPU ? " cpu" : "",
	    r->targets & PD_T_CGROUP ? " cgroup" : "");
	PUT("kernel %s\n", r->kernel_sampling ? "yes" : r->kernel ? "count" :
	    "no");
	if (!r->sampling)
		PUT("sampling no\n");
	else
		PUT("sampling yes max_sample_freq %llu min_sample_period %llu\n",
		    (unsigned long long)r->max_sample_freq,
		    (unsigned long long)r->min_sample_period);
	PUT("max_fds %u\n", r->max_fds);
#undef PUT
	return (int)(n < size ? n : size - 1);
}
