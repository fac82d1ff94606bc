/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Metric tables in the pmu-events JSON form (see include/perfctr/metric.h):
 * the model's tables chosen through mapfile.csv, the built-in generic
 * table, the user's files.  The JSON documents stay parsed for the life of
 * the object and the definitions point into them; the generic table's
 * entries are C data made from its JSON at build time (generic.c).
 * The model's files are not parsed at load time: a scan finds their
 * entries and the names they need to be found by, and an entry is parsed
 * when it is first used (perfex -M uses a handful of the hundreds a model
 * has; start-up would otherwise be mostly json-c's).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfctr/info.h"
#include "common/internal.h"
#include "event/names.h"
#include "metric/table.h"
#include "sys/cpulist.h"

#ifndef PERFCTR_DATADIR
#define PERFCTR_DATADIR "/usr/local/share/perfctr"
#endif

#ifdef HAVE_JSONC
#include <json-c/json.h>
#endif

/* Without json-c nothing loads: these are then unused. */
#define JSON_ONLY __attribute__((unused))

struct def_rec {
	struct perfctr_metric_def def;
	struct pc_mx *mx, *threshold;
	bool parsed, threshold_parsed;
	char unit[64];
	const char *text;	/* its JSON object while not parsed, else NULL:
				 * only name, groups and source are set */
	size_t len;
};

struct ev_rec {
	const char *name;
	const void *obj;	/* its JSON object */
	const void *std;	/* the arch standard event it refers to, or NULL */
	const char *text;	/* as for def_rec: obj is NULL until parsed */
	size_t len;
};

/* Storage of the names found by the scan, freed with the object. */
struct arena {
	struct arena *next;
	size_t used, size;
	char data[];
};

/* A file's text, NUL-terminated: mapped or on the heap. */
struct text {
	const char *p;		/* NULL once handed on */
	size_t len;
	enum { TEXT_HEAP, TEXT_MAPPED } kind;
};

struct perfctr_metrics {
	char root[PATH_MAX];
	char cpuid[96];
	char model[128];
	char missing[PATH_MAX + 160];
	void **docs;		/* parsed documents, released at delete */
	size_t nr_docs;
	struct def_rec *defs;
	size_t nr_defs;
	struct ev_rec *events;
	size_t nr_events;
	bool events_sorted;
	struct deferred {
		const char *path;	/* in the arena */
		struct text text;	/* read at the first lookup that
					 * misses; p NULL once scanned */
		bool done;		/* scanned, or unreadable */
	} *deferred;		/* event files, scanned when one of their
				 * events is looked up */
	size_t nr_deferred;
	char **sources;		/* names of the user's files */
	size_t nr_sources;
	struct text *texts;	/* files whose entries are parsed when used */
	size_t nr_texts;
	struct arena *arena;
	size_t nr_parsed;	/* entries parsed so far (for the tests) */
	void **std;		/* arm64's arch standard entries */
	size_t nr_std;
	/* literals, read once */
	bool have_topology;
	double num_cpus, num_cpus_online, num_cores, num_packages, num_dies;
	double smt_on, slots, tsc_freq;
};

/* ---- CPU identity ---- */

const char *pc_metrics_arch_of(const char *cpuid)
{
	return !strncmp(cpuid, "0x", 2) ? "arm64" : "x86";
}

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/*
 * This CPU's identity from the CPUID instruction, computed as the kernel
 * computes /proc/cpuinfo's fields (which take the kernel a while to
 * format, for every CPU, on each read).
 */
static JSON_ONLY bool host_cpuid(struct perfctr_metrics *m)
{
	unsigned int a, b, c, d, family, model;
	char vendor[13];

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return false;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return false;
	family = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family >= 6)
		model += ((a >> 16) & 0xf) << 4;
	snprintf(m->cpuid, sizeof(m->cpuid), "%s-%u-%X-%X", vendor, family,
		 model, a & 0xf);
	return true;
}
#else
static JSON_ONLY bool host_cpuid(struct perfctr_metrics *m)
{
	return false;
}
#endif

static JSON_ONLY void read_cpuid(struct perfctr_metrics *m)
{
	char path[PATH_MAX + 64], line[256], vendor[64] = "";
	unsigned int family = 0, model = 0, stepping = 0;
	bool have_family = false;
	FILE *f;

	if (!m->root[0] && host_cpuid(m))
		return;
	snprintf(path, sizeof(path),
		 "%s/sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
		 m->root);
	if (pc_read_file(path, line, sizeof(line)) > 0) {
		pc_strlcpy(m->cpuid, line, sizeof(m->cpuid));
		return;
	}
	snprintf(path, sizeof(path), "%s/proc/cpuinfo", m->root);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (!strncmp(line, "vendor_id", 9))
			sscanf(colon + 1, " %63s", vendor);
		else if (!strncmp(line, "cpu family", 10))
			have_family = sscanf(colon + 1, "%u", &family) == 1;
		else if (!strncmp(line, "model\t", 6) || !strncmp(line, "model ", 6))
			sscanf(colon + 1, "%u", &model);
		else if (!strncmp(line, "stepping", 8))
			sscanf(colon + 1, "%u", &stepping);
		else if (line[0] == '\n' && vendor[0])
			break;		/* the first processor is enough */
	}
	fclose(f);
	if (vendor[0] && have_family)
		snprintf(m->cpuid, sizeof(m->cpuid), "%s-%u-%X-%X", vendor,
			 family, model, stepping);
}

#define MIDR_IGNORED 0x00f0000fULL	/* variant [23:20], revision [3:0] */

/*
 * Whether the literal text @pattern starts with can begin @cpuid: most of
 * mapfile.csv's patterns are another vendor's or family's, and compiling
 * each as a regular expression was most of the cost of selecting a model.
 */
static bool prefix_may_match(const char *pattern, const char *cpuid)
{
	size_t n = strcspn(pattern, "\\.[]()|*+?{}^$"), depth = 0;
	const char *s;

	for (s = pattern; *s; s++)
		if (*s == '(')
			depth++;
		else if (*s == ')' && depth)
			depth--;
		else if (*s == '|' && !depth)
			return true;	/* alternatives of the whole pattern */
	/* a repetition makes the literal before it optional */
	if (n && pattern[n] && strchr("*?{", pattern[n]))
		n--;
	return !strncmp(pattern, cpuid, n);
}

/*
 * mapfile.csv's patterns are small extended regular expressions: literals,
 * '.', bracket expressions, groups of alternatives and the ?, * and +
 * repetitions.  They are matched here over the set of positions reached
 * in the identity (one bit each), as regcomp() would build an automaton
 * of some 70 KiB for each (a page fault a page, at start-up).  Anything
 * else in a pattern is left to regcomp().
 */
struct rx {
	const char *s;
	size_t len;
};

static const char *rx_class_end(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		if (p[0] == '[' && p[1] == ':') {
			const char *e = strstr(p + 2, ":]");

			if (!e)
				return NULL;
			p = e + 2;
		} else {
			p++;
		}
	}
	return *p ? p + 1 : NULL;
}

/* Whether @c is in the bracket expression from '[' @p to ']' @end; -1 for
 * a named class this matcher does not know. */
static int rx_class_has(const char *p, const char *end, char c)
{
	static const struct {
		const char *name;
		int (*is)(int);
	} named[] = {
		{ "[:xdigit:]", isxdigit }, { "[:digit:]", isdigit },
		{ "[:alpha:]", isalpha }, { "[:alnum:]", isalnum },
		{ "[:upper:]", isupper }, { "[:lower:]", islower },
	};
	bool neg = false, hit = false;
	size_t k;

	p++;
	if (*p == '^') {
		neg = true;
		p++;
	}
	while (p < end) {
		if (p[0] == '[' && p[1] == ':') {
			for (k = 0; k < ARRAY_SIZE(named); k++)
				if (!strncmp(p, named[k].name, strlen(named[k].name)))
					break;
			if (k == ARRAY_SIZE(named))
				return -1;
			hit |= named[k].is((unsigned char)c) != 0;
			p += strlen(named[k].name);
		} else if (p + 2 < end && p[1] == '-') {
			hit |= c >= p[0] && c <= p[2];
			p += 3;
		} else {
			hit |= *p++ == c;
		}
	}
	return hit != neg;
}

static const char *rx_alt(const struct rx *r, const char *p, uint64_t in,
			  uint64_t *out);

/* One atom at @p from the positions @in: the positions after it. */
static const char *rx_atom(const struct rx *r, const char *p, uint64_t in,
			   uint64_t *out)
{
	const char *end = p + 1;
	uint64_t o = 0;
	size_t i;

	if (*p == '(') {
		p = rx_alt(r, p + 1, in, out);
		return p && *p == ')' ? p + 1 : NULL;
	}
	if (*p == '[' && !(end = rx_class_end(p)))
		return NULL;
	if (!*p || strchr("\\^${}*+?|)]", *p))
		return NULL;	/* not in the subset */
	for (i = 0; i < r->len; i++) {
		int has;

		if (!(in >> i & 1))
			continue;
		has = *p == '[' ? rx_class_has(p, end - 1, r->s[i]) :
		      *p == '.' || *p == r->s[i];
		if (has < 0)
			return NULL;
		if (has)
			o |= 1ULL << (i + 1);
	}
	*out = o;
	return end;
}

static const char *rx_seq(const struct rx *r, const char *p, uint64_t in,
			  uint64_t *out)
{
	while (*p && *p != '|' && *p != ')') {
		const char *atom = p;
		uint64_t o, acc, prev;

		if (!(p = rx_atom(r, atom, in, &o)))
			return NULL;
		if (*p == '?' || *p == '*' || *p == '+') {
			acc = *p == '+' ? o : (o | in);
			while (*p != '?') {
				prev = acc;
				rx_atom(r, atom, acc, &o);
				acc |= o;
				if (acc == prev)
					break;
			}
			o = acc;
			p++;
		}
		in = o;
	}
	*out = in;
	return p;
}

static const char *rx_alt(const struct rx *r, const char *p, uint64_t in,
			  uint64_t *out)
{
	uint64_t all = 0, o;

	for (;;) {
		if (!(p = rx_seq(r, p, in, &o)))
			return NULL;
		all |= o;
		if (*p != '|')
			return (*out = all, p);
		p++;
	}
}

/*
 * Whether @p repeats a repetition ("x++", "x*{2}") outside brackets: not
 * a pattern of POSIX EREs, and one that glibc's regcomp() answers by
 * copying the expression for each operator, so that a few dozen of them
 * (a hostile or damaged mapfile) take gigabytes.
 */
static bool stacked_repetition(const char *p)
{
	bool after = false;

	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			after = false;
		} else if (*p == '[') {
			/* A bracket expression: "]" first is a member, and
			 * [:class:], [.x.], [=x=] hold their own "]". */
			const char *q = p + 1;

			q += *q == '^';
			q += *q == ']';
			while (*q && *q != ']') {
				if (*q == '[' && (q[1] == ':' || q[1] == '.' ||
						  q[1] == '=')) {
					const char *e = strchr(q + 2, q[1]);

					while (e && e[1] != ']')
						e = strchr(e + 1, q[1]);
					q = e ? e + 2 : q + strlen(q);
				} else {
					q++;
				}
			}
			if (!*q)
				return false;	/* unbalanced: regcomp refuses it */
			p = q;
			after = false;
		} else if (*p == '+' || *p == '*' || *p == '?' || *p == '{') {
			if (after)
				return true;
			if (*p == '{') {
				const char *e = strchr(p, '}');

				if (!e)
					return false;
				p = e;
			}
			after = true;
		} else {
			after = false;
		}
	}
	return false;
}

/* Whether all of @s matches @pattern: 1 or 0. */
static int whole_match(const char *pattern, const char *s)
{
	struct rx r = { s, strlen(s) };
	uint64_t o;
	const char *end = r.len < 63 ? rx_alt(&r, pattern, 1, &o) : NULL;
	char *anchored;
	regex_t re;
	size_t len;
	int match;

	if (end && !*end)
		return (int)(o >> r.len & 1);
	if (stacked_repetition(pattern))
		return 0;
	len = strlen(pattern);
	anchored = malloc(len + 5);
	if (!anchored)
		return 0;
	snprintf(anchored, len + 5, "^(%s)$", pattern);
	match = !regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (!match)
		return 0;
	match = !regexec(&re, s, 0, NULL, 0);
	regfree(&re);
	return match;
}

bool pc_metrics_cpuid_match(const char *pattern, const char *cpuid)
{
	char no_stepping[128], *dash;
	bool match;

	if (!strncmp(cpuid, "0x", 2)) {
		unsigned long long a, b;
		char *end;

		errno = 0;
		a = strtoull(pattern, &end, 16);
		if (errno || *end)
			return false;
		b = strtoull(cpuid, &end, 16);
		if (errno || *end)
			return false;
		return (a & ~MIDR_IGNORED) == (b & ~MIDR_IGNORED);
	}
	if (!prefix_may_match(pattern, cpuid))
		return false;
	match = whole_match(pattern, cpuid);
	/* A pattern without a stepping matches every stepping. */
	if (!match && pc_strlcpy(no_stepping, cpuid, sizeof(no_stepping)) <
		      sizeof(no_stepping)) {
		dash = strrchr(no_stepping, '-');
		if (dash && strchr(no_stepping, '-') != dash) {
			*dash = '\0';
			match = whole_match(pattern, no_stepping);
		}
	}
	return match;
}

/* The model directory mapfile.csv gives for @cpuid, into @out. */
static JSON_ONLY int select_model(const char *tree, const char *cpuid, char *out,
			size_t size)
{
	char path[PATH_MAX], line[512];
	const char *arch = pc_metrics_arch_of(cpuid);
	int found = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/mapfile.csv", tree, arch);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		char *fields[4], *save = NULL, *tok;
		int n = 0;

		if (line[0] == '#' || !strncmp(line, "Family-model", 12))
			continue;
		line[strcspn(line, "\r\n")] = '\0';
		for (tok = strtok_r(line, ",", &save); tok && n < 4;
		     tok = strtok_r(NULL, ",", &save))
			fields[n++] = tok;
		if (n < 4 || strcmp(fields[3], "core"))
			continue;
		if (pc_metrics_cpuid_match(fields[0], cpuid)) {
			snprintf(out, size, "%s/%s", arch, fields[2]);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

double pc_metrics_scale_unit(const char *scale_unit, char *unit, size_t size)
{
	const char *su = scale_unit;
	char *end;
	double scale;

	if (size)
		unit[0] = '\0';
	if (!su || !*su)
		return 1.0;
	scale = strtod(su, &end);
	if (end == su)
		scale = 1.0;
	while (*end == ' ')
		end++;
	pc_strlcpy(unit, end, size);
	return scale;
}

static void free_text(struct text *t)
{
	if (t->p && t->kind == TEXT_MAPPED)
		munmap((void *)t->p, t->len);
	else if (t->kind == TEXT_HEAP)
		free((void *)t->p);
	t->p = NULL;
}

/* ---- JSON documents ---- */

#ifdef HAVE_JSONC

static const char *field(const void *obj, const char *key)
{
	struct json_object *v;

	if (!obj || !json_object_object_get_ex(obj, key, &v))
		return NULL;
	return json_object_get_string(v);
}

static int keep_doc(struct perfctr_metrics *m, struct json_object *doc)
{
	void **docs = realloc(m->docs, (m->nr_docs + 1) * sizeof(*docs));

	if (!docs) {
		json_object_put(doc);
		return -ENOMEM;
	}
	m->docs = docs;
	m->docs[m->nr_docs++] = doc;
	return 0;
}

static struct json_object *parse_text(const char *text, size_t len,
				      const char *what)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *doc;
	enum json_tokener_error jerr;

	if (!tok)
		return NULL;
	doc = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!doc || jerr != json_tokener_success) {
		if (jerr == json_tokener_continue)
			pr_warn("%s: not JSON (it ends inside a value)\n", what);
		else
			pr_warn("%s: not JSON (%s at byte %zu)\n", what,
				json_tokener_error_desc(jerr),
				(size_t)json_tokener_get_parse_end(tok));
		if (doc)
			json_object_put(doc);
		doc = NULL;
		errno = EBADMSG;
	}
	json_tokener_free(tok);
	return doc;
}

/* A whole file, NUL-terminated, into *@text; its length or -errno. */
static long read_text(const char *path, char **text)
{
	struct stat st;
	FILE *f = fopen(path, "re");
	size_t got;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) || st.st_size > (64 << 20)) {
		fclose(f);
		return -EFBIG;
	}
	*text = malloc((size_t)st.st_size + 1);
	if (!*text) {
		fclose(f);
		return -ENOMEM;
	}
	got = fread(*text, 1, (size_t)st.st_size, f);
	fclose(f);
	(*text)[got] = '\0';
	return (long)got;
}

/*
 * A table file: mapped, so that its pages are the page cache's (reading
 * it into fresh memory costs a page fault a page, which on some virtual
 * machines is tens of microseconds); read when mapping would not leave a
 * NUL after it (a size that is a whole number of pages).
 */
static int map_text(const char *path, struct text *t)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	char *text;
	long len;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (!fstat(fd, &st) && st.st_size > 0 && st.st_size <= (64 << 20) &&
	    page > 0 && st.st_size % page) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			t->p = p;
			t->len = (size_t)st.st_size;
			t->kind = TEXT_MAPPED;
			return 0;
		}
	}
	close(fd);
	len = read_text(path, &text);
	if (len < 0)
		return (int)len;
	t->p = text;
	t->len = (size_t)len;
	t->kind = TEXT_HEAP;
	return 0;
}

/*
 * Whether file @path holds @needle: 1, 0 or -errno.  Read through a small
 * buffer: mapping or reading whole every file of a model only to look for
 * a word cost more than the search (a page fault a page).
 */
static int file_contains(const char *path, const char *needle)
{
	char buf[16384 + 64];
	size_t nlen = strlen(needle), keep = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	ssize_t got;

	if (fd < 0)
		return -errno;
	if (nlen >= 64) {
		close(fd);
		return -EINVAL;
	}
	while (!found && (got = read(fd, buf + keep, sizeof(buf) - keep)) > 0) {
		size_t len = keep + (size_t)got;

		found = memmem(buf, len, needle, nlen) != NULL;
		/* a match across two reads */
		keep = len < nlen - 1 ? len : nlen - 1;
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return found;
}

static struct json_object *parse_file(const char *path)
{
	struct json_object *doc;
	char *text;
	long len = read_text(path, &text);

	if (len < 0) {
		errno = (int)-len;
		return NULL;
	}
	doc = parse_text(text, (size_t)len, path);
	free(text);
	return doc;
}

static void parse_scale_unit(struct def_rec *d, const char *su)
{
	/* def.unit is set from d->unit when the definition is handed out:
	 * the records move as the array grows. */
	d->def.scale = pc_metrics_scale_unit(su, d->unit, sizeof(d->unit));
}

static const void *find_std(const struct perfctr_metrics *m, const char *name,
			    const char *key)
{
	size_t i;

	for (i = 0; i < m->nr_std; i++) {
		const char *n = field(m->std[i], key);

		if (n && !strcasecmp(n, name))
			return m->std[i];
	}
	return NULL;
}

static struct def_rec *new_def(struct perfctr_metrics *m)
{
	struct def_rec *defs, *d;

	if (m->nr_defs % 64 == 0) {
		defs = realloc(m->defs, (m->nr_defs + 64) * sizeof(*defs));
		if (!defs)
			return NULL;
		m->defs = defs;
	}
	d = &m->defs[m->nr_defs++];
	memset(d, 0, sizeof(*d));
	d->def.scale = 1.0;
	d->def.expr = "";
	d->def.groups = "";
	d->def.desc = "";
	return d;
}

/* The definition from its parsed entry @obj (and the arch standard entry
 * @std it refers to). */
static void fill_def(struct def_rec *d, const void *obj, const void *std,
		     const char *source)
{
	const char *v;

	/* v is the value of obj's field, else of std's */
#define GET(key) (v = field(obj, key) ? field(obj, key) : field(std, key))
	d->def.name = GET("MetricName");
	d->def.expr = GET("MetricExpr");
	d->def.groups = GET("MetricGroup") ? v : "";
	d->def.desc = GET("BriefDescription") ? v : "";
	d->def.threshold = GET("MetricThreshold");
	d->def.constraint = GET("MetricConstraint");
	d->def.source = source;
	parse_scale_unit(d, GET("ScaleUnit"));
#undef GET
}

static int add_def(struct perfctr_metrics *m, const void *obj, const void *std,
		   const char *source)
{
	struct def_rec *d;

	if ((!field(obj, "MetricName") && !field(std, "MetricName")) ||
	    (!field(obj, "MetricExpr") && !field(std, "MetricExpr")))
		return 0;
	if (!(d = new_def(m)))
		return -ENOMEM;
	fill_def(d, obj, std, source);
	return 0;
}

static struct ev_rec *new_event(struct perfctr_metrics *m, const char *name)
{
	struct ev_rec *evs, *e;

	if (m->nr_events % 256 == 0) {
		evs = realloc(m->events, (m->nr_events + 256) * sizeof(*evs));
		if (!evs)
			return NULL;
		m->events = evs;
	}
	e = &m->events[m->nr_events++];
	memset(e, 0, sizeof(*e));
	e->name = name;
	m->events_sorted = false;
	return e;
}

static int add_event(struct perfctr_metrics *m, const void *obj,
		     const void *std)
{
	const char *name = field(obj, "EventName");
	struct ev_rec *e;

	if (!name)
		name = field(std, "EventName");
	if (!name)
		return 0;
	if (!(e = new_event(m, name)))
		return -ENOMEM;
	e->obj = obj;
	e->std = std;
	return 0;
}

/* One parsed entry: a metric, an event, or arm64's reference to an arch
 * standard one. */
static int add_entry(struct perfctr_metrics *m, struct json_object *o,
		     const char *source)
{
	const char *ref = field(o, "ArchStdEvent");
	const void *std = NULL;
	int err;

	if (!json_object_is_type(o, json_type_object))
		return 0;
	if (ref) {
		std = find_std(m, ref, "EventName");
		if (!std)
			std = find_std(m, ref, "MetricName");
		if (!std) {
			pr_debug("%s: no arch standard entry '%s'\n", source,
				 ref);
			return 0;
		}
	}
	/* An entry may be both (an uncore event with its metric). */
	err = add_def(m, o, std, source);
	if (!err)
		err = add_event(m, o, std);
	return err;
}

/* Every entry of one parsed document. */
static int add_doc(struct perfctr_metrics *m, struct json_object *doc,
		   const char *source)
{
	size_t i, n;
	int err;

	if (!json_object_is_type(doc, json_type_array))
		return 0;	/* metricgroups.json: descriptions only */
	n = json_object_array_length(doc);
	for (i = 0; i < n; i++)
		if ((err = add_entry(m, json_object_array_get_idx(doc, i),
				     source)))
			return err;
	return 0;
}

/* ---- entries found without parsing ---- */

static const char *arena_strndup(struct perfctr_metrics *m, const char *s,
				 size_t len)
{
	struct arena *a = m->arena;
	char *out;

	if (!a || a->size - a->used < len + 1) {
		size_t size = len + 1 > 8192 ? len + 1 : 8192;

		a = malloc(sizeof(*a) + size);
		if (!a)
			return NULL;
		a->next = m->arena;
		a->used = 0;
		a->size = size;
		m->arena = a;
	}
	out = a->data + a->used;
	memcpy(out, s, len);
	out[len] = '\0';
	a->used += len + 1;
	return out;
}

/* The fields an entry is found by before it is parsed. */
enum { K_METRIC_NAME, K_METRIC_EXPR, K_METRIC_GROUP, K_EVENT_NAME,
       K_ARCH_STD, K__NR };
static const char *const scan_keys[K__NR] = {
	"MetricName", "MetricExpr", "MetricGroup", "EventName", "ArchStdEvent",
};

struct scanned {
	const char *start;	/* the entry, braces included */
	size_t len;
	const char *val[K__NR];	/* string values, unquoted, not terminated */
	size_t val_len[K__NR];
	bool parse_now;		/* one of them needs json-c (an escape, not
				 * a string) */
};

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	return s;
}

/* @s at a string's opening quote: past its closing quote, or NULL. */
static const char *skip_string(const char *s, const char *end, bool *escaped)
{
	for (s++; s < end; s++) {
		if (*s == '"')
			return s + 1;
		if (*s == '\\') {
			*escaped = true;
			s++;
		}
	}
	return NULL;
}

/* Past one value (a string, a scalar, a nested object or array), or NULL
 * when the text ends inside it.  What is inside is json-c's to check. */
static const char *skip_value(const char *s, const char *end)
{
	bool escaped = false;
	int depth = 0;

	if (s < end && *s == '"')
		return skip_string(s, end, &escaped);
	for (; s < end; s++) {
		char c = *s;

		if (c == '"') {
			if (!(s = skip_string(s, end, &escaped)))
				return NULL;
			s--;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (!depth)
				return s;
			if (!--depth)
				return s + 1;
		} else if (!depth && (c == ',' || c == ' ' || c == '\t' ||
				      c == '\n' || c == '\r')) {
			return s;
		}
	}
	return depth ? NULL : s;
}

/* @s at an entry's '{': @e filled, the text past its '}', or NULL. */
static const char *scan_entry(const char *s, const char *end,
			      struct scanned *e)
{
	memset(e, 0, sizeof(*e));
	e->start = s;
	s = skip_ws(s + 1, end);
	while (s < end && *s != '}') {
		const char *key, *v;
		bool escaped = false;
		size_t klen;
		int k;

		if (*s != '"')
			return NULL;
		key = s + 1;
		if (!(s = skip_string(s, end, &escaped)))
			return NULL;
		klen = (size_t)(s - 1 - key);
		e->parse_now |= escaped;
		s = skip_ws(s, end);
		if (s >= end || *s != ':')
			return NULL;
		v = s = skip_ws(s + 1, end);
		if (!(s = skip_value(s, end)) || s == v)
			return NULL;
		for (k = 0; k < K__NR; k++) {
			if (strlen(scan_keys[k]) != klen ||
			    memcmp(key, scan_keys[k], klen))
				continue;
			escaped = false;
			if (*v == '"' && k == K_METRIC_EXPR) {
				/* only its presence counts before it is parsed */
				e->val[k] = v;
			} else if (*v != '"' ||
				   (skip_string(v, end, &escaped), escaped)) {
				e->parse_now = true;
			} else {
				e->val[k] = v + 1;
				e->val_len[k] = (size_t)(s - v) - 2;
			}
			break;
		}
		s = skip_ws(s, end);
		if (s < end && *s == ',')
			s = skip_ws(s + 1, end);
		else if (s >= end || *s != '}')
			return NULL;
	}
	if (s >= end)
		return NULL;
	e->len = (size_t)(s + 1 - e->start);
	return s + 1;
}

/* One scanned entry: recorded to be parsed when used, or parsed now. */
static int add_scanned(struct perfctr_metrics *m, const struct scanned *e,
		       const char *source)
{
	struct json_object *o;
	int err;

	if (e->parse_now || e->val[K_ARCH_STD]) {
		if (!(o = parse_text(e->start, e->len, source)))
			return 0;	/* warned; the entry is skipped */
		if ((err = keep_doc(m, o)))
			return err;
		m->nr_parsed++;
		return add_entry(m, o, source);
	}
	if (e->val[K_METRIC_NAME] && e->val[K_METRIC_EXPR]) {
		struct def_rec *d = new_def(m);

		if (!d)
			return -ENOMEM;
		d->def.name = arena_strndup(m, e->val[K_METRIC_NAME],
					    e->val_len[K_METRIC_NAME]);
		if (e->val[K_METRIC_GROUP])
			d->def.groups = arena_strndup(m, e->val[K_METRIC_GROUP],
						      e->val_len[K_METRIC_GROUP]);
		if (!d->def.name || !d->def.groups) {
			m->nr_defs--;
			return -ENOMEM;
		}
		d->def.source = source;
		d->text = e->start;
		d->len = e->len;
	}
	if (e->val[K_EVENT_NAME]) {
		const char *name = arena_strndup(m, e->val[K_EVENT_NAME],
						 e->val_len[K_EVENT_NAME]);
		struct ev_rec *ev = name ? new_event(m, name) : NULL;

		if (!ev)
			return -ENOMEM;
		ev->text = e->start;
		ev->len = e->len;
	}
	return 0;
}

/*
 * The entries of file @t, which the object owns from here on: scanned,
 * else parsed as a whole by json-c, whose warning then says what is wrong
 * with it.
 */
static int add_text(struct perfctr_metrics *m, struct text *t,
		    const char *source)
{
	const char *text = t->p, *s = text, *end = text + t->len;
	size_t nr_defs = m->nr_defs, nr_events = m->nr_events, len = t->len;
	struct json_object *doc;
	struct scanned e;
	struct text *texts;
	int err = 0;

	texts = realloc(m->texts, (m->nr_texts + 1) * sizeof(*texts));
	if (!texts) {
		free_text(t);
		return -ENOMEM;
	}
	m->texts = texts;
	m->texts[m->nr_texts++] = *t;
	t->p = NULL;
	s = skip_ws(s, end);
	if (s >= end || *s != '[')
		goto parse;	/* metricgroups.json, or not JSON */
	s = skip_ws(s + 1, end);
	while (s < end && *s != ']') {
		if (*s == '{') {
			if (!(s = scan_entry(s, end, &e)))
				goto parse;
			if ((err = add_scanned(m, &e, source)))
				return err;
		} else {
			const char *v = s;

			if (!(s = skip_value(s, end)) || s == v)
				goto parse;
		}
		s = skip_ws(s, end);
		if (s < end && *s == ',')
			s = skip_ws(s + 1, end);
		else if (s >= end || *s != ']')
			goto parse;
	}
	if (s < end && skip_ws(s + 1, end) == end)
		return 0;
parse:
	m->nr_defs = nr_defs;
	m->nr_events = nr_events;
	doc = parse_text(text, len, source);
	if (!doc)
		return 0;	/* warned; the file is skipped */
	if ((err = keep_doc(m, doc)))
		return err;
	m->nr_parsed++;
	return add_doc(m, doc, source);
}

/* Parse a metric's entry on first use. */
static void def_load(struct perfctr_metrics *m, struct def_rec *d)
{
	struct json_object *o;

	if (!d->text)
		return;
	o = parse_text(d->text, d->len, d->def.source);
	d->text = NULL;
	m->nr_parsed++;
	if (o && !keep_doc(m, o))
		fill_def(d, o, NULL, d->def.source);
}

static void ev_load(struct perfctr_metrics *m, struct ev_rec *e)
{
	struct json_object *o;

	if (!e->text)
		return;
	o = parse_text(e->text, e->len, m->model);
	e->text = NULL;
	m->nr_parsed++;
	if (o && !keep_doc(m, o))
		e->obj = o;
}

static bool is_json_name(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && !strcmp(name + len - 5, ".json") && name[0] != '.';
}

static int str_ptr_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int sorted_json_files(const char *dir, char ***out, size_t *nr)
{
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char **more;

		if (!is_json_name(de->d_name))
			continue;
		more = realloc(names, (n + 1) * sizeof(*names));
		if (!more || !(more[n] = strdup(de->d_name))) {
			names = more ? more : names;
			while (n)
				free(names[--n]);
			free(names);
			closedir(d);
			return -ENOMEM;
		}
		names = more;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), str_ptr_cmp);
	*out = names;
	*nr = n;
	return 0;
}

/* arm64's arch standard events and metrics: the arch directory's own
 * files, which models refer to by ArchStdEvent. */
static int load_std(struct perfctr_metrics *m, const char *archdir)
{
	char **names = NULL, path[PATH_MAX];
	size_t nr = 0, i, j;
	int err = sorted_json_files(archdir, &names, &nr);

	if (err)
		return err == -ENOENT ? 0 : err;
	for (i = 0; i < nr && !err; i++) {
		struct json_object *doc;

		if (snprintf(path, sizeof(path), "%s/%s", archdir, names[i]) >=
		    (int)sizeof(path))
			continue;
		doc = parse_file(path);
		if (!doc)
			continue;
		if ((err = keep_doc(m, doc)))
			break;
		if (!json_object_is_type(doc, json_type_array))
			continue;
		for (j = 0; j < json_object_array_length(doc); j++) {
			void **std = realloc(m->std, (m->nr_std + 1) * sizeof(*std));

			if (!std) {
				err = -ENOMEM;
				break;
			}
			m->std = std;
			m->std[m->nr_std++] = json_object_array_get_idx(doc, j);
		}
	}
	for (i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	return err;
}

static int load_model(struct perfctr_metrics *m, const char *tree)
{
	char dir[PATH_MAX + 160], path[PATH_MAX + 400];
	char **names = NULL;
	size_t nr = 0, i;
	int err;

	snprintf(dir, sizeof(dir), "%s/%s", tree, m->model);
	if (!strncmp(m->model, "arm64/", 6)) {
		snprintf(path, sizeof(path), "%s/arm64", tree);
		if ((err = load_std(m, path)))
			return err;
	}
	if ((err = sorted_json_files(dir, &names, &nr)))
		return err;
	for (i = 0; i < nr && !err; i++) {
		struct text t = { NULL, 0, TEXT_HEAP };
		struct deferred *more;
		int has;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		has = file_contains(path, "\"MetricName\"");
		if (has > 0 && (has = map_text(path, &t)) == 0)
			has = 1;
		if (has < 0) {
			pr_warn("cannot load '%s': %s\n", path, strerror(-has));
			continue;
		}
		/*
		 * Files of events only (the uncore ones are most of a server
		 * model's megabytes) are parsed when one of their events is
		 * first looked up: loading stays within a millisecond or two.
		 */
		if (!has) {
			more = realloc(m->deferred,
				       (m->nr_deferred + 1) * sizeof(*more));
			if (!more) {
				err = -ENOMEM;
				break;
			}
			m->deferred = more;
			more = &m->deferred[m->nr_deferred];
			memset(more, 0, sizeof(*more));
			more->path = arena_strndup(m, path, strlen(path));
			if (!more->path) {
				err = -ENOMEM;
				break;
			}
			m->nr_deferred++;
			continue;
		}
		err = add_text(m, &t, m->model);
	}
	for (i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	return err;
}

static int load_user_file(struct perfctr_metrics *m, const char *path)
{
	struct json_object *doc = parse_file(path);
	char *source, **sources;
	int err;

	if (!doc) {
		err = errno ? -errno : -EBADMSG;
		pr_warn("cannot load metrics file '%s': %s\n", path,
			strerror(-err));
		return err;
	}
	if (!json_object_is_type(doc, json_type_array)) {
		pr_warn("metrics file '%s': not a JSON array of pmu-events "
			"entries\n", path);
		json_object_put(doc);
		return -EBADMSG;
	}
	if ((err = keep_doc(m, doc)))
		return err;
	/* Definitions point at their source: it must outlive the call. */
	if (!(source = strdup(path)))
		return -ENOMEM;
	sources = realloc(m->sources, (m->nr_sources + 1) * sizeof(*sources));
	if (!sources) {
		free(source);
		return -ENOMEM;
	}
	m->sources = sources;
	m->sources[m->nr_sources++] = source;
	return add_doc(m, doc, source);
}

static int load_generic(struct perfctr_metrics *m)
{
	size_t i;

	for (i = 0; i < pc_nr_generic_metrics; i++) {
		const struct pc_generic_metric *g = &pc_generic_metrics[i];
		struct def_rec *d = new_def(m);

		if (!d)
			return -ENOMEM;
		d->def.name = g->name;
		d->def.expr = g->expr;
		d->def.groups = g->groups;
		d->def.desc = g->desc;
		d->def.source = "generic";
		parse_scale_unit(d, g->scale_unit);
	}
	return 0;
}

static void free_docs(struct perfctr_metrics *m)
{
	size_t i;

	for (i = 0; i < m->nr_docs; i++)
		json_object_put(m->docs[i]);
}

#else /* !HAVE_JSONC */

static const char *field(const void *obj, const char *key)
{
	return NULL;
}

static void def_load(struct perfctr_metrics *m, struct def_rec *d)
{
}

static void ev_load(struct perfctr_metrics *m, struct ev_rec *e)
{
}

static void free_docs(struct perfctr_metrics *m)
{
}

static const void *find_std(const struct perfctr_metrics *m, const char *name,
			    const char *key)
{
	return NULL;
}

#endif /* HAVE_JSONC */

/* A directory of PERFCTR_METRICS_PATH that is a pmu-events tree. */
static JSON_ONLY bool is_tree(const char *dir, const char *arch)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/mapfile.csv", dir, arch);
	return !access(path, R_OK);
}

#ifdef HAVE_JSONC
/* The pmu-events tree: @data_dir, else the first entry of @env
 * (PERFCTR_METRICS_PATH) that is a tree for the CPU's architecture, else
 * the installed one.  Return 0 or -ENOMEM. */
static int find_tree(const struct perfctr_metrics *m, const char *data_dir,
		     const char *env, char *tree, size_t size)
{
	char *env_copy = NULL, *save = NULL, *entry;
	int err = 0;

	tree[0] = '\0';
	if (data_dir)
		pc_strlcpy(tree, data_dir, size);
	if (env && !(env_copy = strdup(env)))
		err = -ENOMEM;
	for (entry = env_copy ? strtok_r(env_copy, ":", &save) : NULL;
	     entry && !tree[0]; entry = strtok_r(NULL, ":", &save))
		if (m->cpuid[0] && is_tree(entry, pc_metrics_arch_of(m->cpuid)))
			pc_strlcpy(tree, entry, size);
	if (!tree[0])
		pc_strlcpy(tree, PERFCTR_DATADIR "/pmu-events", size);
	free(env_copy);
	return err;
}

/* The CPU's own metrics, from its table in @tree; where there is none,
 * why in m->missing.  Return 0 or a negative errno. */
static int load_cpu_model(struct perfctr_metrics *m, const char *tree)
{
	struct stat st;
	int sel, err = 0;

	if (!m->cpuid[0])
		snprintf(m->missing, sizeof(m->missing),
			 "the CPU's identity is unknown (no vendor and "
			 "family in %s/proc/cpuinfo, no arm64 MIDR)",
			 m->root);
	else if (stat(tree, &st))
		snprintf(m->missing, sizeof(m->missing),
			 "no pmu-events tables in '%s' (the build imports "
			 "them from Debian's linux-source-6.12)", tree);
	else if ((sel = select_model(tree, m->cpuid, m->model,
				     sizeof(m->model))) < 0)
		snprintf(m->missing, sizeof(m->missing),
			 "no table for CPU '%s' in %s/%s/mapfile.csv%s",
			 m->cpuid, tree, pc_metrics_arch_of(m->cpuid),
			 sel == -ENOENT ? "" : " (cannot read it)");
	else
		err = load_model(m, tree);
	if (!m->model[0] || m->missing[0])
		m->model[0] = '\0';
	return err;
}

/* The metric files and directories of @env (PERFCTR_METRICS_PATH), but
 * for the pmu-events trees in it.  Return 0 or a negative errno. */
static int load_path(struct perfctr_metrics *m, const char *env)
{
	char *env_copy, *save = NULL, *entry;
	int err = 0;

	if (!env)
		return 0;
	env_copy = strdup(env);
	if (!env_copy)
		return -ENOMEM;
	for (entry = strtok_r(env_copy, ":", &save); entry && !err;
	     entry = strtok_r(NULL, ":", &save)) {
		struct stat st;

		if (stat(entry, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			char **names = NULL, path[PATH_MAX + 256];
			size_t nr = 0, j;

			if (m->cpuid[0] && is_tree(entry,
						   pc_metrics_arch_of(m->cpuid)))
				continue;
			if (sorted_json_files(entry, &names, &nr))
				continue;
			for (j = 0; j < nr; j++) {
				snprintf(path, sizeof(path), "%s/%s", entry,
					 names[j]);
				if (!err)
					err = load_user_file(m, path);
				free(names[j]);
			}
			free(names);
		} else {
			err = load_user_file(m, entry);
		}
	}
	free(env_copy);
	return err;
}
#endif

struct perfctr_metrics *perfctr_metrics__new(const struct perfctr_metrics_opts *opts)
{
#ifndef HAVE_JSONC
	(void)opts;
	errno = ENOTSUP;
	return NULL;
#else
	const char *data_dir = PC_OPTS_GET(opts, data_dir, NULL);
	const char *root = PC_OPTS_GET(opts, root, NULL);
	const char *cpuid = PC_OPTS_GET(opts, cpuid, NULL);
	const char *const *files = PC_OPTS_GET(opts, files, NULL);
	size_t nr_files = PC_OPTS_GET(opts, nr_files, 0);
	unsigned int flags = PC_OPTS_GET(opts, flags, 0);
	const char *env = flags & PERFCTR_METRICS_NO_ENV ? NULL :
			  getenv("PERFCTR_METRICS_PATH");
	char tree[PATH_MAX];
	struct perfctr_metrics *m;
	size_t i;
	int err;

	if (!pc_opts_valid(opts, sizeof(struct perfctr_metrics_opts)) ||
	    (nr_files && !files)) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	pc_strlcpy(m->root, root && strcmp(root, "/") ? root : "", sizeof(m->root));
	/* PERFCTR_CPUID poses as another CPU from outside a program, as for
	 * a machine whose identity its tables do not list yet. */
	if (!cpuid && !(flags & PERFCTR_METRICS_NO_ENV))
		cpuid = getenv("PERFCTR_CPUID");
	if (cpuid && *cpuid)
		pc_strlcpy(m->cpuid, cpuid, sizeof(m->cpuid));
	else
		read_cpuid(m);

	err = load_generic(m);
	if (!err)
		err = find_tree(m, data_dir, env, tree, sizeof(tree));
	if (!err && !(flags & PERFCTR_METRICS_NO_MODEL))
		err = load_cpu_model(m, tree);
	if (!err)
		err = load_path(m, env);
	for (i = 0; i < nr_files && !err; i++)
		err = load_user_file(m, files[i]);
	if (err) {
		perfctr_metrics__delete(m);
		errno = -err;
		return NULL;
	}
	return m;
#endif
}

struct perfctr_metrics *pc_metrics_new_model(const char *tree,
					     const char *model)
{
#ifndef HAVE_JSONC
	errno = ENOTSUP;
	return NULL;
#else
	struct perfctr_metrics *m = calloc(1, sizeof(*m));
	int err;

	if (!m)
		return NULL;
	pc_strlcpy(m->model, model, sizeof(m->model));
	err = load_generic(m);
	if (!err)
		err = load_model(m, tree);
	if (err) {
		perfctr_metrics__delete(m);
		errno = -err;
		return NULL;
	}
	return m;
#endif
}

void perfctr_metrics__delete(struct perfctr_metrics *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_defs; i++) {
		pc_mx_free(m->defs[i].mx);
		pc_mx_free(m->defs[i].threshold);
	}
	free_docs(m);
	free(m->docs);
	free(m->defs);
	free(m->events);
	free(m->std);
	for (i = 0; i < m->nr_sources; i++)
		free(m->sources[i]);
	free(m->sources);
	for (i = 0; i < m->nr_deferred; i++)
		free_text(&m->deferred[i].text);
	free(m->deferred);
	for (i = 0; i < m->nr_texts; i++)
		free_text(&m->texts[i]);
	free(m->texts);
	while (m->arena) {
		struct arena *next = m->arena->next;

		free(m->arena);
		m->arena = next;
	}
	free(m);
}

const char *perfctr_metrics__cpuid(const struct perfctr_metrics *m)
{
	return m ? m->cpuid : NULL;
}

const char *perfctr_metrics__model(const struct perfctr_metrics *m)
{
	return m && m->model[0] ? m->model : NULL;
}

const char *perfctr_metrics__missing(const struct perfctr_metrics *m)
{
	return m && m->missing[0] ? m->missing : NULL;
}

size_t perfctr_metrics__nr(const struct perfctr_metrics *m)
{
	return m ? m->nr_defs : 0;
}

int perfctr_metrics__def(const struct perfctr_metrics *m, size_t i,
			 struct perfctr_metric_def *def)
{
	if (!m || !def || i >= m->nr_defs)
		return pc_err(EINVAL);
	/* Parsing on first use changes no definition already handed out. */
	def_load((struct perfctr_metrics *)m, &((struct perfctr_metrics *)m)->defs[i]);
	*def = m->defs[i].def;
	def->unit = m->defs[i].unit;
	return 0;
}

const char *pc_metrics_root(const struct perfctr_metrics *m)
{
	return m->root;
}

const char *pc_metrics_name(const struct perfctr_metrics *m, size_t i)
{
	return i < m->nr_defs ? m->defs[i].def.name : "";
}

int perfctr_metrics__in_group(const struct perfctr_metrics *m, size_t i,
			      const char *group)
{
	size_t len;
	const char *s;

	if (!m || !group || i >= m->nr_defs)
		return pc_err(EINVAL);
	len = strlen(group);
	for (s = m->defs[i].def.groups; *s;) {
		size_t n = strcspn(s, ";");

		/* An empty member (";a" or "a;;b") names no group. */
		if (n && n == len && !strncasecmp(s, group, len))
			return 1;
		s += n;
		if (*s)
			s++;
	}
	return 0;
}

size_t pc_metrics_nr_parsed(const struct perfctr_metrics *m)
{
	return m->nr_parsed;
}

int perfctr_metrics__find(const struct perfctr_metrics *m, const char *name)
{
	size_t i;

	if (!m || !name)
		return pc_err(EINVAL);
	for (i = m->nr_defs; i-- > 0;)
		if (!strcasecmp(m->defs[i].def.name, name))
			return (int)i;
	return pc_err(ENOENT);
}

static void set_error(struct perfctr_metric_error *err, const char *metric,
		      int pos, const char *msg)
{
	if (!err)
		return;
	pc_strlcpy(err->metric, metric, sizeof(err->metric));
	err->pos = pos;
	pc_strlcpy(err->msg, msg, sizeof(err->msg));
}

const struct pc_mx *pc_metrics_expr(struct perfctr_metrics *m, size_t i,
				    struct perfctr_metric_error *err)
{
	struct def_rec *d = &m->defs[i];
	struct pc_mx_error perr;

	def_load(m, d);
	if (!d->parsed) {
		d->mx = pc_mx_parse(d->def.expr, 0, &perr);
		d->parsed = true;
		if (!d->mx)
			set_error(err, d->def.name, perr.pos, perr.msg);
		return d->mx;
	}
	if (!d->mx)
		set_error(err, d->def.name, -1, "its expression does not parse");
	return d->mx;
}

const struct pc_mx *pc_metrics_threshold(struct perfctr_metrics *m, size_t i,
					 struct perfctr_metric_error *err)
{
	struct def_rec *d = &m->defs[i];
	struct pc_mx_error perr;

	def_load(m, d);
	if (!d->def.threshold)
		return NULL;
	if (!d->threshold_parsed) {
		d->threshold = pc_mx_parse(d->def.threshold, 0, &perr);
		d->threshold_parsed = true;
		if (!d->threshold) {
			char msg[sizeof(perr.msg) + 32];

			snprintf(msg, sizeof(msg), "in its threshold: %s",
				 perr.msg);
			set_error(err, d->def.name, perr.pos, msg);
		}
	}
	return d->threshold;
}

static int ev_cmp(const void *a, const void *b)
{
	return strcasecmp(((const struct ev_rec *)a)->name,
			  ((const struct ev_rec *)b)->name);
}

static const char *ev_field(const struct ev_rec *e, const char *key)
{
	const char *v = field(e->obj, key);

	return v ? v : field(e->std, key);
}

/* The kernel's PMU names for the tables' Unit names of uncore PMUs. */
static const struct {
	const char *unit;
	const char *pmu;
} units[] = {
	{ "L3PMC", "amd_l3" }, { "DFPMC", "amd_df" }, { "UMCPMC", "amd_umc" },
	{ "cpu_core", "cpu_core" }, { "cpu_atom", "cpu_atom" },
	{ "cpu", NULL }, { "core", NULL },
};

static const char *unit_pmu(const char *unit)
{
	static __thread char buf[64];
	size_t i;

	if (!unit)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcasecmp(units[i].unit, unit))
			return units[i].pmu;
	/* Intel's uncore units are named as the kernel's PMUs, less a prefix
	 * ("CHA" is uncore_cha_0, uncore_cha_1...). */
	snprintf(buf, sizeof(buf), "uncore_%s", unit);
	for (char *c = buf; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return buf;
}

/* Append ",term=value" for a field that is present and non-zero. */
static void term(char *buf, size_t size, const char *term_name,
		 const char *value)
{
	size_t len = strlen(buf);

	if (!value || !*value || !strcmp(value, "0") || !strcmp(value, "0x0") ||
	    !strcmp(value, "0x00"))
		return;
	snprintf(buf + len, size - len, "%s%s=%s",
		 buf[len - 1] == '/' ? "" : ",", term_name, value);
}

/*
 * Events the kernel itself publishes in sysfs under these names, which the
 * x86 tables use without defining them.
 */
static const struct {
	const char *name;
	const char *spec;
} kernel_events[] = {
	{ "TSC", "msr/tsc/" }, { "APERF", "msr/aperf/" },
	{ "MPERF", "msr/mperf/" }, { "SMI", "msr/smi/" },
	{ "PPERF", "msr/pperf/" },
	{ "cycles-t", "cpu/cycles-t/" }, { "cycles-ct", "cpu/cycles-ct/" },
	{ "tx-start", "cpu/tx-start/" }, { "el-start", "cpu/el-start/" },
	{ "tx-commit", "cpu/tx-commit/" }, { "el-commit", "cpu/el-commit/" },
	{ "tx-abort", "cpu/tx-abort/" }, { "el-abort", "cpu/el-abort/" },
	{ "slots", "cpu/slots/" },
	{ "topdown-retiring", "cpu/topdown-retiring/" },
	{ "topdown-bad-spec", "cpu/topdown-bad-spec/" },
	{ "topdown-fe-bound", "cpu/topdown-fe-bound/" },
	{ "topdown-be-bound", "cpu/topdown-be-bound/" },
	{ "topdown-heavy-ops", "cpu/topdown-heavy-ops/" },
	{ "topdown-br-mispredict", "cpu/topdown-br-mispredict/" },
	{ "topdown-fetch-lat", "cpu/topdown-fetch-lat/" },
	{ "topdown-mem-bound", "cpu/topdown-mem-bound/" },
};

/* Parse the deferred files that name @name (quoted, any case); whether
 * any was. */
static bool load_deferred(struct perfctr_metrics *m, const char *name)
{
#ifdef HAVE_JSONC
	char quoted[300];
	bool loaded = false;
	size_t i;

	if (snprintf(quoted, sizeof(quoted), "\"%s\"", name) >= (int)sizeof(quoted))
		return false;
	/* Read once and kept: a model's tables may be searched for many
	 * names that are in none of them (generic events). */
	for (i = 0; i < m->nr_deferred; i++) {
		struct deferred *d = &m->deferred[i];

		if (d->done)
			continue;
		if (!d->text.p && map_text(d->path, &d->text)) {
			d->done = true;
			continue;
		}
		if (!strcasestr(d->text.p, quoted))
			continue;
		d->done = true;
		if (add_text(m, &d->text, m->model))
			continue;
		loaded = true;
	}
	return loaded;
#else
	return false;
#endif
}

int pc_metrics_event(struct perfctr_metrics *m, const char *name,
		     struct pc_mevent *ev)
{
	struct ev_rec key = { .name = name }, *e, std_rec;
	const char *code, *pmu, *msr_index;
	size_t i;
	bool arm;

	if (!m || !name)
		return pc_err(EINVAL);
	if (!m->events_sorted && m->nr_events) {
		qsort(m->events, m->nr_events, sizeof(*m->events), ev_cmp);
		m->events_sorted = true;
	}
	e = m->nr_events ? bsearch(&key, m->events, m->nr_events,
				   sizeof(*m->events), ev_cmp) : NULL;
	/* A tracepoint (sys:name) is in no table: no file is searched. */
	if (!e && !strchr(name, ':') && load_deferred(m, name) && m->nr_events) {
		qsort(m->events, m->nr_events, sizeof(*m->events), ev_cmp);
		m->events_sorted = true;
		e = bsearch(&key, m->events, m->nr_events, sizeof(*m->events),
			    ev_cmp);
	}
	arm = !strncmp(m->model, "arm64", 5);
	/* Arm's architected events are the PMU's own wherever it implements
	 * them (the kernel lists them in sysfs): a model need not repeat. */
	if (!e && arm && (std_rec.obj = find_std(m, name, "EventName")) &&
	    field(std_rec.obj, "EventCode")) {
		std_rec.name = field(std_rec.obj, "EventName");
		std_rec.std = NULL;
		std_rec.text = NULL;
		e = &std_rec;
	}
	if (e)
		ev_load(m, e);
	if (!e) {
		for (i = 0; i < ARRAY_SIZE(kernel_events); i++)
			if (!arm && !strcasecmp(kernel_events[i].name, name)) {
				ev->name = kernel_events[i].name;
				ev->pmu = NULL;
				pc_strlcpy(ev->spec, kernel_events[i].spec,
					   sizeof(ev->spec));
				return 0;
			}
		return pc_err(ENOENT);
	}
	ev->name = e->name;
	pmu = unit_pmu(ev_field(e, "Unit"));
	ev->pmu = pmu;
	code = ev_field(e, "EventCode");
	if (ev_field(e, "ConfigCode"))
		code = ev_field(e, "ConfigCode");
	if (arm && !pmu) {
		/* The arm PMU's name differs between machines; the raw code is
		 * the event number on every one of them. */
		snprintf(ev->spec, sizeof(ev->spec), "r%s",
			 code && !strncmp(code, "0x", 2) ? code + 2 : code ? code : "0");
		return 0;
	}
	snprintf(ev->spec, sizeof(ev->spec), "%s/", pmu ? pmu : "cpu");
	term(ev->spec, sizeof(ev->spec), "event", code ? code : "0");
	if (strlen(ev->spec) == strlen(pmu ? pmu : "cpu") + 1)
		term(ev->spec, sizeof(ev->spec), "event", "0x0");
	term(ev->spec, sizeof(ev->spec), "umask", ev_field(e, "UMask"));
	term(ev->spec, sizeof(ev->spec), "cmask", ev_field(e, "CounterMask"));
	term(ev->spec, sizeof(ev->spec), "inv", ev_field(e, "Invert"));
	term(ev->spec, sizeof(ev->spec), "edge", ev_field(e, "EdgeDetect"));
	term(ev->spec, sizeof(ev->spec), "any", ev_field(e, "AnyThread"));
	msr_index = ev_field(e, "MSRIndex");
	if (msr_index && ev_field(e, "MSRValue")) {
		if (!strcasecmp(msr_index, "0x3F6"))
			term(ev->spec, sizeof(ev->spec), "ldlat",
			     ev_field(e, "MSRValue"));
		else if (!strcasecmp(msr_index, "0x3F7"))
			term(ev->spec, sizeof(ev->spec), "frontend",
			     ev_field(e, "MSRValue"));
		else if (strcasecmp(msr_index, "0x00") && strcmp(msr_index, "0"))
			term(ev->spec, sizeof(ev->spec), "offcore_rsp",
			     ev_field(e, "MSRValue"));
	}
	snprintf(ev->spec + strlen(ev->spec), sizeof(ev->spec) - strlen(ev->spec),
		 ",name=%s/", e->name);
	return 0;
}

bool pc_metrics_generic_event(const char *name)
{
	uint64_t config;
	size_t len = strcspn(name, ":");

	return pc_symbol_find(name, len) || pc_cache_decode(name, len, &config);
}

bool pc_metrics_is_modifiers(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("ukhHGpSDIWPe", *s))
			return false;
	return true;
}

const char *pc_metrics_strip_mods(char *name)
{
	char *colon = strrchr(name, ':');

	if (colon && pc_metrics_is_modifiers(colon + 1)) {
		*colon = '\0';
		return colon + 1;
	}
	return "";
}

/* ---- literals ---- */

/* How many CPUs a list of devices/system/cpu/ names (online, possible);
 * 0 when it cannot be read. */
static double sysfs_count(struct perfctr_metrics *m, const char *file)
{
	char path[PATH_MAX + 64], buf[4096];
	int *cpus, n;

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/%s", m->root,
		 file);
	if (pc_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	n = pc_parse_cpulist(buf, &cpus);
	if (n <= 0)
		return 0;
	free(cpus);
	return n;
}

/*
 * The groups of the online CPUs by socket, die or core, as the library
 * groups them for perfex stat --per-socket and the like: perf's
 * #num_packages, #num_dies (a die of a socket) and #num_cores (a core of
 * a die).  At least 1.
 */
static double topology_groups(struct perfctr_metrics *m,
			      enum perfctr_cpu_aggr aggr)
{
	char sys[PATH_MAX + 8], path[PATH_MAX + 64], buf[4096];
	PERFCTR_OPTS(perfctr_info_opts, opts, .sysfs_root = sys);
	size_t *group;
	int *cpus, n, groups = -ENOMEM;

	snprintf(sys, sizeof(sys), "%s/sys", m->root);
	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", sys);
	if (pc_read_file(path, buf, sizeof(buf)) <= 0)
		return 1;
	n = pc_parse_cpulist(buf, &cpus);
	if (n <= 0)
		return 1;
	group = calloc((size_t)n, sizeof(*group));
	if (group)
		groups = perfctr_info_cpu_groups(&opts, aggr, cpus, (size_t)n,
						 group);
	free(group);
	free(cpus);
	return groups > 0 ? groups : 1;
}

static void read_topology(struct perfctr_metrics *m)
{
	char path[PATH_MAX + 64], buf[64];

	m->have_topology = true;
	m->num_cpus = sysfs_count(m, "possible");
	m->num_cpus_online = sysfs_count(m, "online");
	if (!m->num_cpus_online)
		m->num_cpus_online = 1;
	if (!m->num_cpus)
		m->num_cpus = m->num_cpus_online;
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/smt/active",
		 m->root);
	m->smt_on = pc_read_file(path, buf, sizeof(buf)) > 0 && buf[0] == '1';
	m->num_packages = topology_groups(m, PERFCTR_CPU_AGGR_SOCKET);
	m->num_dies = topology_groups(m, PERFCTR_CPU_AGGR_DIE);
	m->num_cores = topology_groups(m, PERFCTR_CPU_AGGR_CORE);
	snprintf(path, sizeof(path),
		 "%s/sys/bus/event_source/devices/cpu/caps/slots", m->root);
	m->slots = pc_read_file(path, buf, sizeof(buf)) > 0 ? strtod(buf, NULL) : 0;
	if (!m->slots) {
		snprintf(path, sizeof(path),
			 "%s/sys/bus/event_source/devices/cpu_core/caps/slots",
			 m->root);
		m->slots = pc_read_file(path, buf, sizeof(buf)) > 0 ?
			   strtod(buf, NULL) : 0;
	}
	snprintf(path, sizeof(path),
		 "%s/sys/devices/system/cpu/cpu0/cpufreq/base_frequency", m->root);
	m->tsc_freq = pc_read_file(path, buf, sizeof(buf)) > 0 ?
		      strtod(buf, NULL) * 1e3 : 0;
}

int pc_metrics_literal(struct perfctr_metrics *m, const char *name,
		       double *value)
{
	if (!m->have_topology)
		read_topology(m);
	if (!strcmp(name, "smt_on"))
		*value = m->smt_on;
	else if (!strcmp(name, "num_cpus"))
		*value = m->num_cpus;
	else if (!strcmp(name, "num_cpus_online"))
		*value = m->num_cpus_online;
	else if (!strcmp(name, "num_cores"))
		*value = m->num_cores;
	else if (!strcmp(name, "num_dies"))
		*value = m->num_dies;
	else if (!strcmp(name, "num_packages"))
		*value = m->num_packages;
	else if (!strcmp(name, "slots"))
		*value = m->slots;
	else if (!strcmp(name, "system_tsc_freq"))
		*value = m->tsc_freq;
	else if (!strcmp(name, "core_wide"))
		/* Counts of one thread stand for its core only without SMT. */
		*value = !m->smt_on;
	else
		return pc_err(ENOENT);
	return 0;
}

/* ---- checking ---- */

struct check_ctx {
	struct perfctr_metrics *m;
	size_t self;
	const char *missing;	/* the first name that resolves to nothing */
	int depth;
};

static int check_lookup(void *ctxp, enum pc_mx_ref ref, const char *id,
			double *value)
{
	struct check_ctx *ctx = ctxp;
	struct pc_mevent ev;
	char base[256];

	*value = 1;
	if (ref == PC_MX_LITERAL)
		return pc_metrics_literal(ctx->m, id, value) ? -ENOENT : 0;
	if (ref == PC_MX_CPUID || ref == PC_MX_HAS_EVENT)
		return 0;
	if (!strcmp(id, "duration_time"))
		return 0;
	pc_strlcpy(base, id, sizeof(base));
	if (strchr(base, '@') || strchr(base, '/'))
		return 0;	/* a PMU event spelled out: the event layer's */
	pc_metrics_strip_mods(base);
	if (strchr(base, ':'))
		return 0;	/* a tracepoint: tracefs says at open time */
	if (perfctr_metrics__find(ctx->m, base) >= 0 ||
	    !pc_metrics_event(ctx->m, base, &ev) ||
	    pc_metrics_generic_event(base))
		return 0;
	ctx->missing = id;
	return -ENOENT;
}

int perfctr_metrics__check(struct perfctr_metrics *m, size_t i,
			   struct perfctr_metric_error *err)
{
	const struct pc_mx *mx;
	size_t k;

	if (!m || i >= m->nr_defs)
		return pc_err(EINVAL);
	mx = pc_metrics_expr(m, i, err);
	if (!mx)
		return pc_err(EINVAL);
	if (m->defs[i].def.threshold && !pc_metrics_threshold(m, i, err))
		return pc_err(EINVAL);
	for (k = 0; k < pc_mx_nr_ids(mx); k++) {
		struct check_ctx ctx = { .m = m, .self = i };
		double v;
		char msg[sizeof(err->msg)];

		if (check_lookup(&ctx, PC_MX_VALUE, pc_mx_id(mx, k), &v) < 0) {
			snprintf(msg, sizeof(msg),
				 "'%s' is neither a metric nor an event of %s",
				 pc_mx_id(mx, k),
				 m->model[0] ? m->model : "the generic table");
			set_error(err, m->defs[i].def.name, pc_mx_id_pos(mx, k),
				  msg);
			return pc_err(ENOENT);
		}
	}
	return 0;
}
