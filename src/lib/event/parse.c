// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The grammar of event specifications:
 *
 *	spec   := item (',' item)*
 *	item   := event | '{' event (',' event)* '}' [':' mods]
 *	event  := symbolic [':' mods] | sys ':' name [':' mods]
 *	        | pmu '/' terms '/' [':' mods] | 'mem:' addr ['/' len] [':' rwx] [':' mods]
 *	        | 'r' hex [':' mods]
 *
 * Events are built in a vector and pushed to the evlist only when the
 * whole specification parsed, so a failed parse leaves the list as it was.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "event/evlist.h"
#include "event/names.h"
#include "event/native.h"
#include "event/parse.h"
#include "event/suggest.h"
#include "sys/pmu.h"

#define NO_GROUP ((size_t)-1)

int pc_parse_fail(struct pc_parse *p, int errnum, const char *at,
		  const char *fmt, ...)
{
	va_list ap;

	/* The first error is the one that explains the others. */
	if (p->err->errnum)
		return -p->err->errnum;
	p->err->errnum = errnum;
	p->err->column = at ? (int)(at - p->spec) : -1;
	va_start(ap, fmt);
	vsnprintf(p->err->message, sizeof(p->err->message), fmt, ap);
	va_end(ap);
	return -errnum;
}

void pc_parse_hint(struct pc_parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err->hint, sizeof(p->err->hint), fmt, ap);
	va_end(ap);
}

struct pc_event *pc_parse_new_event(struct pc_parse *p)
{
	struct pc_event *ev;

	if (p->nr_events == p->cap_events) {
		size_t cap = p->cap_events ? p->cap_events * 2 : 8;
		struct pc_event *events = realloc(p->events, cap * sizeof(*events));

		if (!events) {
			pc_parse_fail(p, ENOMEM, NULL, "out of memory");
			return NULL;
		}
		p->events = events;
		p->cap_events = cap;
	}
	ev = &p->events[p->nr_events];
	memset(ev, 0, sizeof(*ev));
	ev->attr.size = sizeof(ev->attr);
	ev->scale = 1.0;
	if (p->group_first == NO_GROUP || p->group_first == p->nr_events)
		ev->leader = p->nr_events;
	else
		ev->leader = p->group_first;
	p->nr_events++;
	return ev;
}

void pc_event_set_name(struct pc_event *ev, const char *start, size_t len,
		       const char *mods, size_t mods_len)
{
	if (mods && mods_len) {
		snprintf(ev->name, sizeof(ev->name), "%.*s:%.*s", (int)len,
			 start, (int)mods_len, mods);
		ev->has_mods = true;
	} else {
		snprintf(ev->name, sizeof(ev->name), "%.*s", (int)len, start);
	}
}

/* --- modifiers ---------------------------------------------------------- */

struct mods {
	bool u, k, h, H, G, S, D;
	int precise;
};

static int read_mods(struct pc_parse *p, const char *s, const char *end,
		     struct mods *m)
{
	memset(m, 0, sizeof(*m));
	if (s == end)
		return pc_parse_fail(p, EINVAL, s, "empty modifier after ':'");
	for (; s < end; s++) {
		switch (*s) {
		case 'u': m->u = true; break;
		case 'k': m->k = true; break;
		case 'h': m->h = true; break;
		case 'H': m->H = true; break;
		case 'G': m->G = true; break;
		case 'S': m->S = true; break;
		case 'D': m->D = true; break;
		case 'p':
			if (++m->precise > 3)
				return pc_parse_fail(p, EINVAL, s,
					"too many 'p' modifiers (at most :ppp)");
			break;
		default:
			pc_parse_fail(p, EINVAL, s, "invalid modifier '%c'", *s);
			pc_parse_hint(p, "modifiers are u k h H G p pp ppp S D");
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * As perf: the first of u/k/h excludes all three privilege levels, then
 * each one named is counted again; likewise H/G for host and guest.
 */
static void apply_mods(struct pc_event *ev, const struct mods *m)
{
	struct perf_event_attr *a = &ev->attr;

	if (m->u || m->k || m->h) {
		if (!ev->priv_set)
			a->exclude_user = a->exclude_kernel = a->exclude_hv = 1;
		a->exclude_user &= !m->u;
		a->exclude_kernel &= !m->k;
		a->exclude_hv &= !m->h;
		ev->priv_set = true;
	}
	if (m->H || m->G) {
		if (!ev->gh_set)
			a->exclude_host = a->exclude_guest = 1;
		a->exclude_host &= !m->H;
		a->exclude_guest &= !m->G;
		ev->gh_set = true;
	}
	if (m->precise > (int)a->precise_ip)
		a->precise_ip = m->precise;
	/* :S — sample with the whole group's counts, as perf stores it. */
	if (m->S)
		a->sample_type |= PERF_SAMPLE_READ;
	if (m->D)
		a->pinned = 1;
}

int pc_parse_mods(struct pc_parse *p, struct pc_event *ev, const char *mods,
		  const char *end)
{
	struct mods m;
	int ret;

	if (!mods)
		return 0;
	ret = read_mods(p, mods, end, &m);
	if (!ret)
		apply_mods(ev, &m);
	return ret;
}

/* Could [s, end) be a modifier string (so "x:u" is x with :u)? */
static bool looks_like_mods(const char *s, const char *end)
{
	if (s == end)
		return false;
	for (; s < end; s++)
		if (!strchr("ukhHGpSD", *s))
			return false;
	return true;
}

/* --- symbolic names ------------------------------------------------------ */

static bool is_raw(const char *s, size_t len)
{
	size_t i;

	if (len < 2 || len > 17 || s[0] != 'r')
		return false;
	for (i = 1; i < len; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	return true;
}

/* Does a symbolic name (not a tracepoint) of this spelling exist? */
static bool symbolic_exists(struct pc_parse *p, const char *s, size_t len)
{
	uint64_t config;

	return pc_symbol_find(s, len) || pc_cache_decode(s, len, &config) ||
	       is_raw(s, len) || pc_parse_pmu_alias_exists(p, s, len);
}

static void suggest_symbolic(struct pc_parse *p, struct pc_suggest *sg)
{
	char buf[64];
	uint64_t config;
	size_t i;

	for (i = 0; i < pc_nr_hw_symbols; i++)
		pc_suggest_offer(sg, pc_hw_symbols[i].name);
	for (i = 0; i < pc_nr_sw_symbols; i++)
		pc_suggest_offer(sg, pc_sw_symbols[i].name);
	for (i = 0; pc_cache_name(i, buf, sizeof(buf), &config); i++)
		pc_suggest_offer(sg, buf);
}

static const char *core_pmu_name(struct pc_parse *p);

static int unknown_event(struct pc_parse *p, const char *s, size_t len)
{
	struct pc_suggest sg;

	pc_parse_fail(p, ENOENT, s, "unknown event '%.*s'", (int)len, s);
	pc_suggest_init(&sg, s, len);
	suggest_symbolic(p, &sg);
	pc_suggest_pmu_events(p, &sg);
	pc_suggest_tracepoints(p, &sg);
	if (sg.best[0])
		pc_parse_hint(p, "did you mean '%s'?", sg.best);
	else if (!pc_native_available())
		pc_parse_hint(p, "native event names need libpfm4, which this "
			      "build of libperfctr lacks");
	return -ENOENT;
}

/*
 * A native name through libpfm4; -ENOENT (nothing recorded) when libpfm4
 * does not know it.  Its own modifiers (":u", ":k") are part of the name.
 */
static int parse_native(struct pc_parse *p, const char *s, size_t len,
			const char *mods, const char *mods_end)
{
	struct pc_event *ev;
	struct perf_event_attr attr;
	const char *why = "";
	int ret;

	memset(&attr, 0, sizeof(attr));
	ret = pc_native_encode(s, len, &attr, &why);
	if (ret == -EINVAL)
		return pc_parse_fail(p, EINVAL, s, "invalid native event '%.*s': %s",
				     (int)len, s, why);
	if (ret)
		return ret;
	ev = pc_parse_new_event(p);
	if (!ev)
		return -ENOMEM;
	attr.size = sizeof(attr);
	ev->attr = attr;
	ev->priv_set = attr.exclude_user || attr.exclude_kernel;
	ev->pmu = attr.type == PERF_TYPE_SOFTWARE ? "software" : core_pmu_name(p);
	pc_event_set_name(ev, s, len, mods, mods ? (size_t)(mods_end - mods) : 0);
	ret = pc_parse_mods(p, ev, mods, mods_end);
	return ret ? ret : 1;
}

static int unknown_native(struct pc_parse *p, const char *s, size_t len)
{
	pc_parse_fail(p, ENOENT, s, "unknown event '%.*s'", (int)len, s);
	if (pc_native_available())
		pc_parse_hint(p, "libpfm4 knows no such event for this "
			      "machine's PMU");
	else
		pc_parse_hint(p, "native event names need libpfm4, which this "
			      "build of libperfctr lacks");
	return -ENOENT;
}

static int parse_raw(struct pc_parse *p, struct pc_event *ev, const char *s,
		     size_t len)
{
	char hex[20];
	uint64_t config;

	snprintf(hex, sizeof(hex), "%.*s", (int)len - 1, s + 1);
	if (pc_parse_u64(hex, 16, &config))
		return pc_parse_fail(p, EINVAL, s, "invalid raw event '%.*s'",
				     (int)len, s);
	ev->attr.type = PERF_TYPE_RAW;
	ev->attr.config = config;
	return pc_parse_check_raw(p, ev, s);
}

/* Hardware, cache and raw events belong to the core PMU, when sysfs has one. */
static const char *core_pmu_name(struct pc_parse *p)
{
	struct pc_pmu *core = pc_parse_core_pmu(p);

	return core ? core->name : "cpu";
}

static int parse_symbolic(struct pc_parse *p, const char *s, size_t len,
			  const char *mods, const char *mods_end)
{
	const struct pc_symbol *sym = pc_symbol_find(s, len);
	struct pc_event *ev;
	uint64_t config;
	bool cache = !sym && pc_cache_decode(s, len, &config);
	int ret;

	if (!sym && !cache && !is_raw(s, len)) {
		ret = pc_parse_pmu_alias(p, s, len, mods, mods_end);
		if (ret == -ENOENT)
			ret = parse_native(p, s, len, mods, mods_end);
		return ret == -ENOENT ? unknown_event(p, s, len) : ret;
	}
	ev = pc_parse_new_event(p);
	if (!ev)
		return -ENOMEM;
	ev->pmu = "software";
	if (sym) {
		ev->attr.type = sym->type;
		ev->attr.config = sym->config;
		if (sym->type == PERF_TYPE_HARDWARE)
			ev->pmu = core_pmu_name(p);
	} else if (cache) {
		ev->attr.type = PERF_TYPE_HW_CACHE;
		ev->attr.config = config;
		ev->pmu = core_pmu_name(p);
	} else {
		ev->pmu = "cpu";
		ret = parse_raw(p, ev, s, len);
		if (ret)
			return ret;
	}
	pc_event_set_name(ev, s, len, mods, mods ? (size_t)(mods_end - mods) : 0);
	if (pc_parse_mods(p, ev, mods, mods_end))
		return -p->err->errnum;
	return 1;
}

/* --- the grammar ---------------------------------------------------------- */

/* The end of the event starting at @s: a ',', '{' or '}' outside a
 * pmu/terms/ section, or the end of the string. */
static int event_end(struct pc_parse *p, const char *s, const char **end)
{
	size_t n;

	if (!strncmp(s, "mem:", 4)) {
		*end = s + strcspn(s, ",{}");
		return 0;
	}
	n = strcspn(s, "/,{}:");
	if (s[n] == '/') {
		const char *close = strchr(s + n + 1, '/');

		if (!close)
			return pc_parse_fail(p, EINVAL, s + n,
					     "missing closing '/' after '%.*s'",
					     (int)n, s);
		s = close + 1;
		n = 0;
	}
	*end = s + n + strcspn(s + n, ",{}");
	return 0;
}

static int parse_event(struct pc_parse *p, const char *s, const char *end)
{
	const char *colon, *slash, *second, *second_end;
	size_t len = (size_t)(end - s);

	if (!len)
		return pc_parse_fail(p, EINVAL, s, "empty event");
	if (len >= 4 && !strncmp(s, "mem:", 4))
		return pc_parse_breakpoint(p, s, end);
	colon = memchr(s, ':', len);
	slash = memchr(s, '/', len);
	if (slash && (!colon || slash < colon))
		return pc_parse_pmu_event(p, s, end);
	if (!colon)
		return parse_symbolic(p, s, len, NULL, NULL);
	if (colon == s)
		return pc_parse_fail(p, EINVAL, s, "missing event name before ':'");
	/* Vendor names are upper case ("INST_RETIRED:ANY_P", "skl::..."). */
	if ((*s >= 'A' && *s <= 'Z') || memmem(s, len, "::", 2)) {
		int ret = parse_native(p, s, len, NULL, NULL);

		return ret == -ENOENT ? unknown_native(p, s, len) : ret;
	}
	second = colon + 1;
	second_end = memchr(second, ':', (size_t)(end - second));
	if (!second_end)
		second_end = end;
	if (symbolic_exists(p, s, (size_t)(colon - s)) ||
	    (second_end == end && looks_like_mods(second, end)))
		return parse_symbolic(p, s, (size_t)(colon - s), second, end);
	return pc_parse_tracepoint(p, s, second_end,
				   second_end < end ? second_end + 1 : NULL, end);
}

/* Blanks around events are allowed ("cycles, instructions"). */
static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int parse_one(struct pc_parse *p, const char **cur)
{
	const char *end = NULL, *last;
	int ret;

	*cur = skip_blanks(*cur);
	ret = event_end(p, *cur, &end);
	if (ret)
		return ret;
	for (last = end; last > *cur && (last[-1] == ' ' || last[-1] == '\t');)
		last--;
	ret = parse_event(p, *cur, last);
	*cur = end;
	return ret;
}

static void name_group_member(struct pc_event *ev, const char *mods, size_t len)
{
	size_t n = strlen(ev->name);

	snprintf(ev->name + n, sizeof(ev->name) - n, "%s%.*s",
		 ev->has_mods ? "" : ":", (int)len, mods);
	ev->has_mods = true;
}

static int group_mods(struct pc_parse *p, size_t first, const char **cur)
{
	const char *mods = *cur + 1, *end = mods + strcspn(mods, ",{} \t");
	struct mods m;
	size_t i;
	int ret;

	ret = read_mods(p, mods, end, &m);
	if (ret)
		return ret;
	for (i = first; i < p->nr_events; i++) {
		apply_mods(&p->events[i], &m);
		name_group_member(&p->events[i], mods, (size_t)(end - mods));
	}
	*cur = end;
	return 0;
}

static int parse_group(struct pc_parse *p, const char **cur)
{
	const char *open = *cur;
	size_t first = p->nr_events;
	int ret;

	(*cur)++;
	if (**cur == '}')
		return pc_parse_fail(p, EINVAL, open, "empty group");
	p->group_first = first;
	for (;;) {
		if (**cur == '{')
			return pc_parse_fail(p, EINVAL, *cur,
					     "groups cannot be nested");
		ret = parse_one(p, cur);
		if (ret < 0)
			return ret;
		if (**cur == ',') {
			(*cur)++;
			continue;
		}
		if (**cur == '}')
			break;
		return pc_parse_fail(p, EINVAL, open,
				     "unterminated group: missing '}'");
	}
	p->group_first = NO_GROUP;
	(*cur)++;
	if (**cur == ':')
		return group_mods(p, first, cur);
	return 0;
}

static int parse_spec(struct pc_parse *p)
{
	const char *cur = p->spec;
	int ret;

	if (!*cur)
		return pc_parse_fail(p, EINVAL, cur, "empty event specification");
	for (;;) {
		cur = skip_blanks(cur);
		ret = *cur == '{' ? parse_group(p, &cur) : parse_one(p, &cur);
		if (ret < 0)
			return ret;
		cur = skip_blanks(cur);
		if (*cur == ',') {
			cur++;
			continue;
		}
		if (!*cur)
			return 0;
		return pc_parse_fail(p, EINVAL, cur, "unexpected '%c'", *cur);
	}
}

/* --- the public entry ------------------------------------------------------ */

static void apply_defaults(struct pc_parse *p)
{
	size_t i;

	for (i = 0; i < p->nr_events; i++) {
		struct pc_event *ev = &p->events[i];

		/* The kernel pins whole groups: pinned on a member is EINVAL,
		 * so :D on any member pins its leader. */
		if (ev->attr.pinned && ev->leader != i) {
			p->events[ev->leader].attr.pinned = 1;
			ev->attr.pinned = 0;
		}

		if (ev->priv_set)
			continue;
		ev->attr.exclude_kernel = p->exclude_kernel;
		ev->attr.exclude_hv = p->exclude_hv;
	}
}

static int push_all(struct pc_parse *p, struct perfctr_evlist *list)
{
	size_t base = list->nr, i;

	for (i = 0; i < p->nr_events; i++) {
		const struct pc_event *ev = &p->events[i];
		struct pc_evsel_desc desc = {
			.attr = &ev->attr,
			.name = ev->name,
			.pmu = ev->pmu,
			.unit = ev->unit,
			.cpus = ev->cpus,
			.scale = ev->scale,
			.leader = ev->leader == i ? (size_t)-1 : base + ev->leader,
		};
		int ret = pc_evlist_push(list, &desc);

		if (ret < 0) {
			pc_evlist_truncate(list, base);
			return pc_parse_fail(p, -ret, NULL, "cannot add event '%s'",
					     ev->name);
		}
	}
	return (int)p->nr_events;
}

static void parse_release(struct pc_parse *p)
{
	free(p->events);
	p->events = NULL;
	p->nr_events = 0;
	pc_parse_release_pmus(p);
}

int perfctr_evlist__parse(struct perfctr_evlist *list, const char *spec,
			  const struct perfctr_parse_opts *opts,
			  struct perfctr_parse_error *err)
{
	struct perfctr_parse_error local;
	struct pc_parse p;
	int ret;

	memset(&local, 0, sizeof(local));
	memset(&p, 0, sizeof(p));
	p.err = &local;
	p.spec = spec;
	p.group_first = NO_GROUP;
	if (!list || !spec || !pc_opts_valid(opts, sizeof(*opts)))
		ret = pc_parse_fail(&p, EINVAL, NULL, "invalid arguments");
	else {
		p.sysfs_root = PC_OPTS_GET(opts, sysfs_root, NULL);
		p.tracefs_opt = PC_OPTS_GET(opts, tracefs_root, NULL);
		p.exclude_kernel = PC_OPTS_GET(opts, exclude_kernel, false);
		p.exclude_hv = PC_OPTS_GET(opts, exclude_hv, false);
		if (!p.sysfs_root)
			p.sysfs_root = "/sys";
		ret = parse_spec(&p);
		if (ret >= 0) {
			apply_defaults(&p);
			ret = push_all(&p, list);
		}
	}
	parse_release(&p);
	if (ret < 0 && err && err->sz >= sizeof(err->sz)) {
		size_t sz = err->sz < sizeof(local) ? err->sz : sizeof(local);

		local.sz = err->sz;
		memcpy(err, &local, sz);
	}
	return ret < 0 ? pc_err(-ret) : ret;
}
