// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * PMU events: "pmu/term=value,.../", "pmu/eventname/", bare names found in
 * a PMU's events/, and the validation of raw encodings.  Terms are placed
 * through the PMU's format/ files; on x86 core PMUs the PerfEvtSel fields
 * of the x86 counter study among the seed documents (docs/ARCHITECTURE.md)
 * are checked (reserved bits, EN, INT, INV without CMASK) and
 * USR/OS become exclude_user/exclude_kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "event/parse.h"
#include "event/suggest.h"
#include "sys/pmu.h"

/* PerfEvtSel bits that no format/ file describes (the P6 PerfEvtSel layout
 * of the x86 counter study, a seed document: docs/ARCHITECTURE.md). */
#define EVTSEL_USR (1ull << 16)
#define EVTSEL_OS  (1ull << 17)
#define EVTSEL_INT (1ull << 20)
#define EVTSEL_EN  (1ull << 22)

#define MAX_PENDING 8

struct terms {
	struct pc_parse *p;
	struct pc_pmu *pmu;
	struct pc_event *ev;
	bool x86;
	int usr, os;		/* -1 unset, else 0/1 */
	const struct pc_pmu_event *alias;
	const char *alias_at;
	const struct pc_pmu_format *pending[MAX_PENDING];
	size_t nr_pending;
	char custom_name[128];
};

static bool word_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && !memcmp(s, word, len);
}

static __u64 *config_word(struct perf_event_attr *a, enum pc_config_word w)
{
	switch (w) {
	case PC_CONFIG1:
		return &a->config1;
	case PC_CONFIG2:
		return &a->config2;
	default:
		return &a->config;
	}
}

/* Numbers as perf writes them: 0x... hexadecimal, otherwise decimal. */
static int parse_number(struct pc_parse *p, const char *s, size_t len,
			const char *at, uint64_t *out)
{
	char buf[32];
	int base = 10;

	if (len >= sizeof(buf) || !len)
		goto bad;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16;
	if (!pc_parse_u64(base == 16 ? buf + 2 : buf, base, out))
		return 0;
bad:
	return pc_parse_fail(p, EINVAL, at, "invalid number '%.*s'", (int)len, s);
}

static uint64_t config_format_bits(const struct pc_pmu *pmu)
{
	uint64_t bits = 0;
	size_t i;

	for (i = 0; i < pmu->nr_formats; i++)
		if (pmu->formats[i].word == PC_CONFIG)
			bits |= pmu->formats[i].mask;
	return bits;
}

static void hint_terms(struct terms *t)
{
	char buf[200];
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < t->pmu->nr_formats && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
				      i ? ", " : "", t->pmu->formats[i].name);
	pc_parse_hint(t->p, "pmu '%s' has the terms %s", t->pmu->name,
		      buf[0] ? buf : "(none)");
}

static int unknown_term(struct terms *t, const char *name, size_t len,
			const char *at)
{
	static const char *const builtin[] = { "config", "config1", "config2",
					       "name", "period", "freq" };
	struct pc_suggest sg;
	size_t i;

	pc_parse_fail(t->p, ENOENT, at, "unknown term '%.*s' for pmu '%s'",
		      (int)len, name, t->pmu->name);
	pc_suggest_init(&sg, name, len);
	for (i = 0; i < t->pmu->nr_formats; i++)
		pc_suggest_offer(&sg, t->pmu->formats[i].name);
	for (i = 0; i < t->pmu->nr_events; i++)
		pc_suggest_offer(&sg, t->pmu->events[i].name);
	for (i = 0; i < ARRAY_SIZE(builtin); i++)
		pc_suggest_offer(&sg, builtin[i]);
	if (sg.best[0])
		pc_parse_hint(t->p, "did you mean '%s'?", sg.best);
	else
		hint_terms(t);
	return -ENOENT;
}

static void drop_pending(struct terms *t, const struct pc_pmu_format *f)
{
	size_t i;

	for (i = 0; i < t->nr_pending; i++)
		if (t->pending[i] == f)
			t->pending[i] = t->pending[--t->nr_pending];
}

static int set_format(struct terms *t, const struct pc_pmu_format *f,
		      const char *val, size_t vlen, bool from_alias,
		      const char *at)
{
	uint64_t value = 1, bits;
	__u64 *word;

	/* An events/ entry's "ldlat=?" asks the user for the value. */
	if (val && from_alias && vlen == 1 && *val == '?') {
		if (t->nr_pending == MAX_PENDING)
			return pc_parse_fail(t->p, EINVAL, at, "too many '?' terms");
		t->pending[t->nr_pending++] = f;
		return 0;
	}
	if (val && parse_number(t->p, val, vlen, at, &value))
		return -EINVAL;
	if (pc_pmu_format_encode(f->mask, value, &bits)) {
		pc_parse_fail(t->p, EINVAL, at,
			      "value %#llx does not fit '%s' (%d bits: %s)",
			      (unsigned long long)value, f->name,
			      __builtin_popcountll(f->mask), f->text);
		return -EINVAL;
	}
	word = config_word(&t->ev->attr, f->word);
	*word = (*word & ~f->mask) | bits;
	drop_pending(t, f);
	return 0;
}

/* usr/os/int/en: the PerfEvtSel flags that are not format fields. */
static int set_evtsel_flag(struct terms *t, const char *name, size_t len,
			   const char *val, size_t vlen, const char *at,
			   bool *handled)
{
	uint64_t value = 1;

	*handled = false;
	if (!t->x86 || !(word_is(name, len, "usr") || word_is(name, len, "os") ||
			 word_is(name, len, "int") || word_is(name, len, "en")))
		return 0;
	*handled = true;
	if (val && parse_number(t->p, val, vlen, at, &value))
		return -EINVAL;
	if (value > 1)
		return pc_parse_fail(t->p, EINVAL, at, "'%.*s' is a flag: 0 or 1",
				     (int)len, name);
	if (word_is(name, len, "usr"))
		t->usr = (int)value;
	else if (word_is(name, len, "os"))
		t->os = (int)value;
	else if (value)
		return pc_parse_fail(t->p, EINVAL, at, word_is(name, len, "int") ?
			"PerfEvtSel INT (bit 20) is set by the kernel for sampling events" :
			"PerfEvtSel EN (bit 22) is set by the kernel when the event runs");
	return 0;
}

static int apply_terms(struct terms *t, const char *s, const char *end,
		       bool from_alias, const char *at);

static int apply_alias(struct terms *t, const struct pc_pmu_event *alias,
		       const char *at)
{
	t->alias = alias;
	t->alias_at = at;
	t->ev->unit = alias->unit;
	t->ev->scale = alias->scale;
	return apply_terms(t, alias->terms, alias->terms + strlen(alias->terms),
			   true, at);
}

static int set_builtin(struct terms *t, const char *name, size_t len,
		       const char *val, size_t vlen, const char *at,
		       bool *handled)
{
	struct perf_event_attr *a = &t->ev->attr;
	uint64_t value;

	*handled = true;
	if (word_is(name, len, "name")) {
		if (!val || !vlen)
			return pc_parse_fail(t->p, EINVAL, at, "'name' needs a value");
		snprintf(t->custom_name, sizeof(t->custom_name), "%.*s",
			 (int)vlen, val);
		return 0;
	}
	if (!word_is(name, len, "config") && !word_is(name, len, "config1") &&
	    !word_is(name, len, "config2") && !word_is(name, len, "period") &&
	    !word_is(name, len, "freq")) {
		*handled = false;
		return 0;
	}
	if (!val)
		return pc_parse_fail(t->p, EINVAL, at, "'%.*s' needs a value",
				     (int)len, name);
	if (parse_number(t->p, val, vlen, at, &value))
		return -EINVAL;
	if (word_is(name, len, "config"))
		a->config = value;
	else if (word_is(name, len, "config1"))
		a->config1 = value;
	else if (word_is(name, len, "config2"))
		a->config2 = value;
	else if (word_is(name, len, "period"))
		a->sample_period = value, a->freq = 0;
	else
		a->sample_freq = value, a->freq = 1;
	return 0;
}

static int apply_term(struct terms *t, const char *s, const char *end,
		      bool from_alias, const char *at)
{
	const char *eq = memchr(s, '=', (size_t)(end - s));
	const char *name_end = eq ? eq : end, *val = eq ? eq + 1 : NULL;
	size_t len = (size_t)(name_end - s), vlen = val ? (size_t)(end - val) : 0;
	const struct pc_pmu_format *f;
	const struct pc_pmu_event *alias;
	bool handled;
	int ret;

	if (!len)
		return pc_parse_fail(t->p, EINVAL, at, "empty term");
	ret = set_builtin(t, s, len, val, vlen, at, &handled);
	if (ret || handled)
		return ret;
	ret = set_evtsel_flag(t, s, len, val, vlen, at, &handled);
	if (ret || handled)
		return ret;
	f = pc_pmu_find_format(t->pmu, s, len);
	alias = val || from_alias ? NULL : pc_pmu_find_event(t->pmu, s, len);
	if (alias)
		return apply_alias(t, alias, at);
	if (f)
		return set_format(t, f, val, vlen, from_alias, at);
	return unknown_term(t, s, len, at);
}

static int apply_terms(struct terms *t, const char *s, const char *end,
		       bool from_alias, const char *at)
{
	while (s < end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *term_end = comma ? comma : end;
		const char *b = s, *e = term_end;
		int ret;

		while (b < e && (*b == ' ' || *b == '\n'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\n'))
			e--;
		ret = apply_term(t, b, e, from_alias, from_alias ? at : b);
		if (ret)
			return ret;
		s = comma ? comma + 1 : end;
		if (comma && s == end)
			return pc_parse_fail(t->p, EINVAL, from_alias ? at : s,
					     "empty term");
	}
	return 0;
}

/* --- PerfEvtSel validation ------------------------------------------------ */

static const char *evtsel_bit_name(unsigned bit)
{
	switch (bit) {
	case 16: return " (USR)";
	case 17: return " (OS)";
	case 19: return " (PC)";
	case 20: return " (INT)";
	case 21: return " (ANY)";
	case 22: return " (EN)";
	default: return "";
	}
}

static int reserved_bit(struct terms *t, uint64_t bad, const char *at)
{
	unsigned bit = (unsigned)__builtin_ctzll(bad);

	if (t->x86 && bit == 20)
		pc_parse_fail(t->p, EINVAL, at, "PerfEvtSel INT (bit 20) is set "
			      "by the kernel for sampling events, not in the encoding");
	else if (t->x86 && bit == 22)
		pc_parse_fail(t->p, EINVAL, at, "PerfEvtSel EN (bit 22) is set "
			      "by the kernel when the event runs, not in the encoding");
	else
		pc_parse_fail(t->p, EINVAL, at, "config bit %u%s is reserved on pmu '%s'",
			      bit, t->x86 ? evtsel_bit_name(bit) : "",
			      t->pmu->name);
	if (t->x86 && (bit == 20))
		pc_parse_hint(t->p, "give the event a sample period instead");
	else if (!(t->x86 && bit == 22))
		hint_terms(t);
	return -EINVAL;
}

/* USR/OS (from bits 16/17 or usr=/os= terms) become the exclude bits. */
static int map_usr_os(struct terms *t, uint64_t allowed, const char *at)
{
	struct pc_event *ev = t->ev;
	__u64 *config = &ev->attr.config;

	if ((*config & EVTSEL_USR) && !(allowed & EVTSEL_USR))
		t->usr = 1;
	if ((*config & EVTSEL_OS) && !(allowed & EVTSEL_OS))
		t->os = 1;
	*config &= ~((EVTSEL_USR | EVTSEL_OS) & ~allowed);
	if (t->usr < 0 && t->os < 0)
		return 0;
	if (t->usr <= 0 && t->os <= 0)
		return pc_parse_fail(t->p, EINVAL, at, "usr=0 and os=0 count "
				     "nothing (PerfEvtSel USR and OS both clear)");
	ev->attr.exclude_user = t->usr != 1;
	ev->attr.exclude_kernel = t->os != 1;
	ev->attr.exclude_hv = 1;
	ev->priv_set = true;
	return 0;
}

static bool field_set(const struct terms *t, const char *name, bool *known)
{
	const struct pc_pmu_format *f = pc_pmu_find_format(t->pmu, name,
							   strlen(name));

	*known = f != NULL;
	return f && (*config_word((struct perf_event_attr *)&t->ev->attr,
				  f->word) & f->mask);
}

static int check_evtsel(struct terms *t, const char *at)
{
	uint64_t allowed = config_format_bits(t->pmu), bad;
	bool known_inv, known_cmask;
	bool inv, cmask;
	int ret;

	ret = map_usr_os(t, allowed, at);
	if (ret)
		return ret;
	bad = t->ev->attr.config & ~allowed;
	if (bad)
		return reserved_bit(t, bad, at);
	inv = field_set(t, "inv", &known_inv);
	cmask = field_set(t, "cmask", &known_cmask);
	if (inv && known_cmask && !cmask) {
		pc_parse_fail(t->p, EINVAL, at, "inv needs a non-zero cmask "
			      "(INV inverts the counter-mask comparison)");
		pc_parse_hint(t->p, "add cmask=1 to count cycles with no event");
		return -EINVAL;
	}
	return 0;
}

static int finish(struct terms *t, const char *at)
{
	if (t->nr_pending) {
		pc_parse_fail(t->p, EINVAL, t->alias_at, "event '%s' needs a value for '%s'",
			      t->alias ? t->alias->name : "", t->pending[0]->name);
		pc_parse_hint(t->p, "write %s/%s,%s=VALUE/", t->pmu->name,
			      t->alias ? t->alias->name : "", t->pending[0]->name);
		return -EINVAL;
	}
	if (t->x86)
		return check_evtsel(t, at);
	return 0;
}

static void terms_init(struct terms *t, struct pc_parse *p, struct pc_pmu *pmu,
		       struct pc_event *ev)
{
	memset(t, 0, sizeof(*t));
	t->p = p;
	t->pmu = pmu;
	t->ev = ev;
	t->x86 = pc_pmu_is_x86_evntsel(pmu);
	t->usr = t->os = -1;
	ev->attr.type = pmu->type;
	ev->pmu = pmu->name;
	ev->cpus = pmu->cpus;
}

/* --- raw events ----------------------------------------------------------- */

int pc_parse_check_raw(struct pc_parse *p, struct pc_event *ev, const char *at)
{
	struct pc_pmu *core = pc_parse_core_pmu(p);
	struct terms t;
	uint64_t bad;

	if (!core)
		return 0;
	ev->pmu = core->name;
	memset(&t, 0, sizeof(t));
	t.p = p;
	t.pmu = core;
	t.ev = ev;
	t.x86 = pc_pmu_is_x86_evntsel(core);
	t.usr = t.os = -1;
	if (t.x86)
		return check_evtsel(&t, at);
	bad = ev->attr.config & ~config_format_bits(core);
	return bad && core->nr_formats ? reserved_bit(&t, bad, at) : 0;
}

/* --- pmu/terms/ ------------------------------------------------------------- */

static int one_pmu_event(struct pc_parse *p, struct pc_pmu *pmu,
			 const char *start, const char *terms,
			 const char *close, const char *mods, const char *end,
			 bool instance)
{
	struct pc_event *ev = pc_parse_new_event(p);
	size_t mods_len = mods ? (size_t)(end - mods) : 0;
	struct terms t;
	char buf[300];
	int ret;

	if (!ev)
		return -ENOMEM;
	terms_init(&t, p, pmu, ev);
	ret = apply_terms(&t, terms, close, false, terms);
	if (!ret)
		ret = finish(&t, terms);
	if (ret)
		return ret;
	if (t.custom_name[0]) {
		pc_event_set_name(ev, t.custom_name, strlen(t.custom_name),
				  mods, mods_len);
	} else if (instance) {
		/* A prefix like "uncore_imc" matched: name the instance. */
		snprintf(buf, sizeof(buf), "%s/%.*s/", pmu->name,
			 (int)(close - terms), terms);
		pc_event_set_name(ev, buf, strlen(buf), mods, mods_len);
	} else {
		pc_event_set_name(ev, start, (size_t)(close + 1 - start), mods,
				  mods_len);
	}
	return pc_parse_mods(p, ev, mods, end);
}

/* "uncore_imc" names every "uncore_imc_<N>", as perf does. */
static bool instance_of(const char *pmu, const char *prefix, size_t len)
{
	const char *s;

	if (strncmp(pmu, prefix, len) || pmu[len] != '_' || !pmu[len + 1])
		return false;
	for (s = pmu + len + 1; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int pc_parse_pmu_event(struct pc_parse *p, const char *start, const char *end)
{
	const char *slash = memchr(start, '/', (size_t)(end - start));
	const char *close = memchr(slash + 1, '/', (size_t)(end - slash - 1));
	const char *mods = NULL;
	const struct pc_dirlist *names;
	struct pc_pmu *pmu;
	size_t len = (size_t)(slash - start), i;
	int added = 0, ret;

	if (close + 1 < end) {
		if (close[1] != ':')
			return pc_parse_fail(p, EINVAL, close + 1,
					     "unexpected '%c' after '/'", close[1]);
		mods = close + 2;
	}
	if (!len)
		return pc_parse_fail(p, EINVAL, start, "missing pmu name before '/'");
	pmu = pc_parse_pmu(p, start, len, NULL);
	if (pmu)
		return one_pmu_event(p, pmu, start, slash + 1, close, mods, end,
				     false) ? -p->err->errnum : 1;
	names = pc_parse_pmu_names(p);
	for (i = 0; i < names->nr; i++) {
		if (!instance_of(names->names[i], start, len))
			continue;
		pmu = pc_parse_pmu(p, names->names[i], strlen(names->names[i]),
				   start);
		if (!pmu)
			return -p->err->errnum;
		ret = one_pmu_event(p, pmu, start, slash + 1, close, mods, end,
				    true);
		if (ret)
			return ret;
		added++;
	}
	if (!added)
		return pc_parse_pmu(p, start, len, start) ? 0 : -p->err->errnum;
	return added;
}

/* --- bare names from events/ ------------------------------------------------ */

static bool copy_name(const char *name, size_t len, char *buf, size_t size)
{
	if (len >= size || memchr(name, '/', len))
		return false;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return true;
}

bool pc_parse_pmu_alias_exists(struct pc_parse *p, const char *name, size_t len)
{
	const struct pc_dirlist *names = pc_parse_pmu_names(p);
	char buf[256];
	size_t i;

	if (!copy_name(name, len, buf, sizeof(buf)))
		return false;
	for (i = 0; i < names->nr; i++)
		if (pc_pmu_has_event(p->sysfs_root, names->names[i], buf))
			return true;
	return false;
}

static int alias_event(struct pc_parse *p, struct pc_pmu *pmu,
		       const char *name, size_t len, bool qualify,
		       const char *mods, const char *mods_end)
{
	const struct pc_pmu_event *alias = pc_pmu_find_event(pmu, name, len);
	struct pc_event *ev;
	struct terms t;
	char buf[300];
	int ret;

	if (!alias)
		return 0;
	ev = pc_parse_new_event(p);
	if (!ev)
		return -ENOMEM;
	terms_init(&t, p, pmu, ev);
	ret = apply_alias(&t, alias, name);
	if (!ret)
		ret = finish(&t, name);
	if (ret)
		return ret;
	if (qualify)
		snprintf(buf, sizeof(buf), "%s/%.*s/", pmu->name, (int)len, name);
	else
		snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
	pc_event_set_name(ev, buf, strlen(buf), mods,
			  mods ? (size_t)(mods_end - mods) : 0);
	ret = pc_parse_mods(p, ev, mods, mods_end);
	return ret ? ret : 1;
}

int pc_parse_pmu_alias(struct pc_parse *p, const char *name, size_t len,
		       const char *mods, const char *mods_end)
{
	const struct pc_dirlist *names = pc_parse_pmu_names(p);
	char buf[256];
	size_t i, matches = 0;
	int added = 0, ret;

	if (!copy_name(name, len, buf, sizeof(buf)))
		return -ENOENT;
	for (i = 0; i < names->nr; i++)
		matches += pc_pmu_has_event(p->sysfs_root, names->names[i], buf);
	if (!matches)
		return -ENOENT;
	for (i = 0; i < names->nr; i++) {
		struct pc_pmu *pmu;

		if (!pc_pmu_has_event(p->sysfs_root, names->names[i], buf))
			continue;
		pmu = pc_parse_pmu(p, names->names[i], strlen(names->names[i]),
				   name);
		if (!pmu)
			return -p->err->errnum;
		ret = alias_event(p, pmu, name, len, matches > 1, mods, mods_end);
		if (ret < 0)
			return ret;
		added += ret;
	}
	return added;
}

void pc_suggest_pmu_events(struct pc_parse *p, struct pc_suggest *sg)
{
	const struct pc_dirlist *names = pc_parse_pmu_names(p);
	struct pc_dirlist events;
	char full[300];
	size_t i, j;

	for (i = 0; i < names->nr; i++) {
		if (pc_pmu_event_names(p->sysfs_root, names->names[i], &events))
			continue;
		for (j = 0; j < events.nr; j++) {
			snprintf(full, sizeof(full), "%s/%s/", names->names[i],
				 events.names[j]);
			pc_suggest_offer(sg, events.names[j]);
			pc_suggest_offer(sg, full);
		}
		pc_dirlist_free(&events);
	}
}
