// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex diff — the profiles of two or more perf.data files side by side:
 * perf diff's table (its columns, compute modes, order and widths, rows
 * matched by their keys' names across files), and beyond it an estimate
 * of the sampling noise of each change, with a mark on the changes
 * outside it; JSON, the folded differences and a differential flame
 * graph (diff-stacks.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfctr/perfctr.h>
#include <perfctr/perfdata.h>
#include <perfctr/reader.h>
#include <perfctr/symbols.h>

#include "diff.h"
#include "json-out.h"
#include "options.h"
#include "perfex.h"
#include "report.h"

/* The time blocks of the noise estimate (batch means, see compute()):
 * the default number a file, the bounds of --noise-blocks, and the
 * samples a block needs on average, else the file's event falls back to
 * the binomial model. */
#define DEFAULT_BLOCKS 16
#define MIN_BLOCKS 4
#define MAX_BLOCKS 100
#define BLOCK_SAMPLES 50

/* One file: its reader (which owns the frames' strings) and a profile
 * per event; with the noise's time blocks, a profile per event and block
 * too (blocks[event * nr_blocks + block]; NULL where an event's samples
 * have no time). */
struct diff_file {
	const char *path;
	struct perfctr_reader *rd;
	struct perfctr_profile **profiles;
	size_t nr_profiles;
	struct perfctr_profile **blocks;
	size_t nr_blocks;		/* 0: no time range, binomial */
	uint64_t first, last;		/* the samples' time range */
};

/* A row of one event's table: the same keys in every file. */
struct diff_row {
	char *cell[PERFCTR_SORT_NR];	/* each key as shown, unpadded */
	char *sym_addr;		/* the address shown for UNRESOLVED */
	bool kernel;
	bool dummy;		/* not in the base (perf's "dummy" entry) */
	bool paired;		/* in the base and in some new file */
	uint64_t *period;	/* per file */
	uint64_t *samples;
	bool *present;
	double *value;		/* per new file: what -c computes */
	int64_t *wdiff;
	double *noise;		/* per new file: t * sigma, in percent */
	double *df;		/* per new file: its degrees of freedom */
	bool *changed;		/* per new file: |delta| > noise, min */
	uint64_t *block;	/* samples per file and block (f * B + b) */
};

struct diff_table {
	struct diff_row *rows;
	size_t nr, cap;
	size_t *slots;		/* hash of the keys' text: row index + 1 */
	size_t nr_slots;
	uint64_t *total;	/* per file: the event's period */
	uint64_t *samples;	/* per file: its samples */
	bool *matched;		/* per file: it has the event */
	double *z;		/* per new file: the normal critical value */
	uint64_t *block;	/* per file and block: its samples */
	size_t *nr_blocks;	/* per file: blocks of the event, 0: none */
};

struct diff {
	struct diff_options opt;
	struct diff_file *files;
	size_t nr_files;
	bool need_stacks;
	/* One machine's symbols for every file: the kernel's table and
	 * each library are read once (the files are of one machine, as
	 * perf diff assumes too). */
	struct perfctr_symbols *syms;
	char *osrelease;
};

/* The symbol cell of a DSO's addresses that no symbol covers. */
#define UNRESOLVED "0x"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* ---- options ---- */

static perfex_result parse_compute(struct perfex_parse *p, struct diff *d)
{
	const char *arg = p->arg;
	char *end;

	if (!strcmp(arg, "delta")) {
		d->opt.compute = DIFF_DELTA;
	} else if (!strcmp(arg, "delta-abs")) {
		d->opt.compute = DIFF_DELTA_ABS;
	} else if (!strcmp(arg, "ratio")) {
		d->opt.compute = DIFF_RATIO;
	} else if (!strncmp(arg, "wdiff:", 6)) {
		errno = 0;
		d->opt.w1 = strtol(arg + 6, &end, 10);
		if (errno || end == arg + 6 || *end != ',' || !d->opt.w1)
			goto bad_weights;
		arg = end + 1;
		d->opt.w2 = strtol(arg, &end, 10);
		if (errno || end == arg || *end || !d->opt.w2)
			goto bad_weights;
		d->opt.compute = DIFF_WDIFF;
	} else {
		return perfex_opt_error(p, "expects delta, delta-abs, ratio or "
					"wdiff:W1,W2 (not '%s')", p->arg);
	}
	return PERFEX_GO_ON;
bad_weights:
	return perfex_opt_error(p, "expects two non-zero weights, wdiff:W1,W2 "
				"(not '%s')", p->arg);
}

static perfex_result diff_option(struct perfex_parse *p, void *ctx)
{
	struct diff *d = ctx;
	int r;

	switch (p->opt->id) {
	case OPT_COMPUTE:
		return parse_compute(p, d);
	case OPT_ORDER:
		return perfex_opt_ulong(p, 0, 1000, "a file's number, 0 to "
					"the number of new files", &d->opt.order);
	case OPT_NOISE_BLOCKS:
		r = perfex_opt_ulong(p, 0, MAX_BLOCKS, "0 or a number of "
				     "blocks, 4 to 100", &d->opt.noise_blocks);
		if (r == PERFEX_GO_ON && d->opt.noise_blocks &&
		    d->opt.noise_blocks < MIN_BLOCKS)
			return perfex_opt_error(p, "expects 0 or a number of "
						"blocks, 4 to 100 (not '%s')",
						p->arg);
		return r;
	case OPT_MIN_CHANGE: {
		char *end;

		errno = 0;
		d->opt.min_change = strtod(p->arg, &end);
		if (errno || *end || end == p->arg || !(d->opt.min_change >= 0) ||
		    d->opt.min_change > 100)
			return perfex_opt_error(p, "expects percentage points, "
						"0 to 100 (not '%s')", p->arg);
		return PERFEX_GO_ON;
	}
	case OPT_SORT:
		r = report_sort_option(p, d->opt.keys, &d->opt.nr_keys, false);
		if (r != PERFEX_GO_ON)
			return r;
		for (size_t k = 0; k < d->opt.nr_keys; k++)
			if (d->opt.keys[k] == PERFCTR_SORT_SRCLINE)
				return perfex_opt_error(p, "does not take srcline "
							"(perfex report --sort srcline "
							"shows source lines)");
		return PERFEX_GO_ON;
	default:
		return PERFEX_GO_ON;
	}
}

/* ---- reading ---- */

/* The time range of @f's samples, from its header (perf and perfex
 * record write it): without it, no time blocks. */
static void time_range(struct diff *d, struct diff_file *f)
{
	struct perfctr_perfdata *pd;

	f->nr_blocks = 0;
	if (!d->opt.noise_blocks || d->opt.no_noise || d->opt.folded)
		return;
	pd = perfctr_perfdata__open(f->path, NULL);
	if (pd && !perfctr_perfdata__sample_time(pd, &f->first, &f->last) &&
	    f->last > f->first)
		f->nr_blocks = d->opt.noise_blocks;
	perfctr_perfdata__close(pd);
}

/* The block profiles of @f (a profile of each event and block, of the
 * sampled function alone); 0 or -ENOMEM. */
static int make_blocks(struct diff *d, struct diff_file *f)
{
	PERFCTR_OPTS(perfctr_profile_opts, popts, .keys = d->opt.keys,
		     .nr_keys = d->opt.nr_keys);
	size_t n = f->nr_profiles * f->nr_blocks;

	if (!n)
		return 0;
	f->blocks = calloc(n, sizeof(*f->blocks));
	if (!f->blocks)
		return -ENOMEM;
	for (size_t a = 0; a < f->nr_profiles; a++) {
		const struct perf_event_attr *attr =
			perfctr_reader__event_attr(f->rd, a);

		if (!attr || !(attr->sample_type & PERF_SAMPLE_TIME))
			continue;
		for (size_t b = 0; b < f->nr_blocks; b++)
			if (!(f->blocks[a * f->nr_blocks + b] =
			      perfctr_profile__new(&popts)))
				return -ENOMEM;
	}
	return 0;
}

/* The block of a sample at @time: the range cut in nr_blocks equal
 * parts (times outside it go to the nearest). */
static size_t block_of(const struct diff_file *f, uint64_t time)
{
	uint64_t span = f->last - f->first;

	if (time <= f->first)
		return 0;
	if (time >= f->last)
		return f->nr_blocks - 1;
	return (size_t)((double)(time - f->first) / (double)span *
			(double)f->nr_blocks);
}

static int read_file(struct diff *d, struct diff_file *f)
{
	PERFCTR_OPTS(perfctr_reader_opts, ropts, .callchain = d->need_stacks,
		     .symbols = d->syms);
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	int ret = 0, r;
	size_t a;

	time_range(d, f);
	f->rd = perfex_reader_open(f->path, &ropts, &ret);
	if (!f->rd)
		return ret;
	f->nr_profiles = perfctr_reader__nr_events(f->rd);
	f->profiles = calloc(f->nr_profiles + 1, sizeof(*f->profiles));
	for (a = 0; f->profiles && a < f->nr_profiles; a++) {
		/* The shared symbols renew names for the next file: the
		 * profile keeps copies. */
		PERFCTR_OPTS(perfctr_profile_opts, popts, .keys = d->opt.keys,
			     .nr_keys = d->opt.nr_keys);

		f->profiles[a] = perfctr_profile__new(&popts);
		if (!f->profiles[a])
			break;
	}
	if (!f->profiles || a < f->nr_profiles || make_blocks(d, f))
		goto nomem;
	while ((r = perfctr_reader__next(f->rd, &rs)) > 0) {
		const struct perfctr_sample *s = rs.sample;
		struct perfctr_profile_sample ps = {
			.sz = sizeof(ps),
			.comm = rs.comm,
			.pid = rs.pid,
			.tid = rs.tid,
			.cpu = (s->type & PERF_SAMPLE_CPU) ? (int32_t)s->cpu : -1,
			.weight = s->period ? s->period : 1,
			.frames = rs.frames,
			.nr_frames = rs.nr_frames,
		};

		if (rs.event_idx >= f->nr_profiles)
			continue;
		if (perfctr_profile__add(f->profiles[rs.event_idx], &ps))
			goto nomem;
		if (f->blocks && f->blocks[rs.event_idx * f->nr_blocks] &&
		    (s->type & PERF_SAMPLE_TIME)) {
			/* The flat rows need the sampled function only. */
			ps.nr_frames = ps.nr_frames ? 1 : 0;
			if (perfctr_profile__add(f->blocks[rs.event_idx *
					f->nr_blocks + block_of(f, s->time)], &ps))
				goto nomem;
		}
	}
	if (r < 0)
		return perfex_reader_error(f->path, r);
	return 0;
nomem:
	perfex_error("out of memory");
	return PERFEX_EXIT_INTERNAL;
}

/* The event of @f that perf diff pairs with @attr: the same type and
 * config; -1 when none. */
static ssize_t match_event(const struct diff_file *f,
			   const struct perf_event_attr *attr)
{
	for (size_t a = 0; a < f->nr_profiles; a++) {
		const struct perf_event_attr *o =
			perfctr_reader__event_attr(f->rd, a);

		if (o && o->type == attr->type && o->config == attr->config)
			return (ssize_t)a;
	}
	return -1;
}

/* A side-band-only event (the dummy event of overwrite and snapshot
 * recordings) with no samples: not shown, as perfex report does. */
static bool tracking_only(const struct diff_file *f, size_t a)
{
	const struct perf_event_attr *attr = perfctr_reader__event_attr(f->rd, a);

	return attr && attr->type == PERF_TYPE_SOFTWARE &&
	       attr->config == PERF_COUNT_SW_DUMMY &&
	       !perfctr_profile__samples(f->profiles[a]);
}

/* ---- the table's rows ---- */

/* Key @k of entry @e as the table shows it (without padding): the DSO by
 * its base name (perf matches DSOs by it), a perf map's JIT code as
 * "[JIT] tid PID", pid and tid with their comm. */
static void cell_text(struct diff *d, const struct diff_file *f,
		      const struct perfctr_profile_entry *e, size_t k,
		      char *buf, size_t size)
{
	struct perfctr_reader_thread t = { .sz = sizeof(t) };
	const char *text = e->keys[k];
	int pid, end = 0;
	pid_t id;

	switch (d->opt.keys[k]) {
	case PERFCTR_SORT_DSO:
		if (sscanf(text, "/tmp/perf-%d.map%n", &pid, &end) == 1 &&
		    end && !text[end])
			snprintf(buf, size, "[JIT] tid %d", pid);
		else
			snprintf(buf, size, "%s", base_name(text));
		return;
	case PERFCTR_SORT_PID:
	case PERFCTR_SORT_TID:
		id = d->opt.keys[k] == PERFCTR_SORT_PID ? e->pid : e->tid;
		snprintf(buf, size, "%d:%s", (int)id,
			 perfctr_reader__thread(f->rd, id, &t) ? "" : t.comm);
		return;
	default:
		snprintf(buf, size, "%s", text);
		return;
	}
}

static uint64_t hash_text(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* The keys of a row as one string, for matching: cells joined by \x1f. */
static void row_key(char cells[][512], size_t nr, char *key, size_t size)
{
	size_t len = 0;

	key[0] = '\0';
	for (size_t k = 0; k < nr && len < size; k++)
		len += (size_t)snprintf(key + len, size - len, "%s%s",
					k ? "\x1f" : "", cells[k]);
}

static void row_free(struct diff_row *r, size_t nr_keys)
{
	for (size_t k = 0; k < nr_keys; k++)
		free(r->cell[k]);
	free(r->sym_addr);
	free(r->period);
	free(r->samples);
	free(r->present);
	free(r->value);
	free(r->wdiff);
	free(r->noise);
	free(r->df);
	free(r->changed);
	free(r->block);
}

static void table_free(struct diff_table *t, size_t nr_keys)
{
	for (size_t i = 0; i < t->nr; i++)
		row_free(&t->rows[i], nr_keys);
	free(t->rows);
	free(t->slots);
	free(t->total);
	free(t->samples);
	free(t->matched);
	free(t->z);
	free(t->block);
	free(t->nr_blocks);
	memset(t, 0, sizeof(*t));
}

static int row_init(struct diff_row *r, char cells[][512], size_t nr_keys,
		    size_t nr_files, size_t nr_blocks)
{
	memset(r, 0, sizeof(*r));
	for (size_t k = 0; k < nr_keys; k++)
		if (!(r->cell[k] = strdup(cells[k])))
			return -ENOMEM;
	r->period = calloc(nr_files, sizeof(*r->period));
	r->samples = calloc(nr_files, sizeof(*r->samples));
	r->present = calloc(nr_files, sizeof(*r->present));
	r->value = calloc(nr_files, sizeof(*r->value));
	r->wdiff = calloc(nr_files, sizeof(*r->wdiff));
	r->noise = calloc(nr_files, sizeof(*r->noise));
	r->df = calloc(nr_files, sizeof(*r->df));
	r->changed = calloc(nr_files, sizeof(*r->changed));
	r->block = calloc(nr_files * (nr_blocks ? nr_blocks : 1),
			  sizeof(*r->block));
	if (!r->period || !r->samples || !r->present || !r->value ||
	    !r->wdiff || !r->noise || !r->df || !r->changed || !r->block)
		return -ENOMEM;
	return 0;
}

static int grow_slots(struct diff_table *t, size_t nr_keys)
{
	size_t n = t->nr_slots ? 2 * t->nr_slots : 256;
	size_t *slots = calloc(n, sizeof(*slots));
	char key[4096];

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr; i++) {
		size_t len = 0, s;

		key[0] = '\0';
		for (size_t k = 0; k < nr_keys && len < sizeof(key); k++)
			len += (size_t)snprintf(key + len, sizeof(key) - len,
						"%s%s", k ? "\x1f" : "",
						t->rows[i].cell[k]);
		s = hash_text(key) & (n - 1);
		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nr_slots = n;
	return 0;
}

static bool row_is(const struct diff_row *r, char cells[][512], size_t nr_keys)
{
	for (size_t k = 0; k < nr_keys; k++)
		if (strcmp(r->cell[k], cells[k]))
			return false;
	return true;
}

/* The row of these cells, made when new; NULL when out of memory. */
static struct diff_row *row_get(struct diff_table *t, char cells[][512],
				size_t nr_keys, size_t nr_files,
				size_t nr_blocks)
{
	char key[4096];
	size_t s, i;

	if (2 * (t->nr + 1) > t->nr_slots && grow_slots(t, nr_keys))
		return NULL;
	row_key(cells, nr_keys, key, sizeof(key));
	s = hash_text(key) & (t->nr_slots - 1);
	while ((i = t->slots[s])) {
		if (row_is(&t->rows[i - 1], cells, nr_keys))
			return &t->rows[i - 1];
		s = (s + 1) & (t->nr_slots - 1);
	}
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct diff_row *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return NULL;
		t->rows = rows;
		t->cap = cap;
	}
	if (row_init(&t->rows[t->nr], cells, nr_keys, nr_files, nr_blocks)) {
		row_free(&t->rows[t->nr], nr_keys);
		return NULL;
	}
	t->slots[s] = ++t->nr;
	return &t->rows[t->nr - 1];
}

static bool row_fresh(const struct diff_row *r, size_t nr_files)
{
	for (size_t f = 0; f < nr_files; f++)
		if (r->present[f])
			return false;
	return true;
}

/*
 * The entries of file @fi's profile into the table.  perf diff matches a
 * symbol by its name, and puts the addresses of one DSO that no symbol
 * covers into one entry: so do we, under the first one's address.  With
 * @block >= 0, @prof is that time block's and only the rows' block
 * counts grow (every row it has is in the whole file's profile).
 */
static int add_profile(struct diff *d, struct diff_table *t, size_t fi,
		       struct perfctr_profile *prof, ssize_t block)
{
	size_t n = perfctr_profile__nr_entries(prof), nk = d->opt.nr_keys;
	char cells[PERFCTR_SORT_NR][512], addr[64];

	for (size_t i = 0; i < n; i++) {
		struct perfctr_profile_entry e = { .sz = sizeof(e) };
		struct diff_row *r;
		bool unresolved = false;
		size_t k, sym = nk;

		perfctr_profile__entry(prof, i, &e);
		for (k = 0; k < nk; k++) {
			cell_text(d, &d->files[fi], &e, k, cells[k],
				  sizeof(cells[k]));
			if (d->opt.keys[k] == PERFCTR_SORT_SYM) {
				sym = k;
				unresolved = !strncmp(cells[k], "0x", 2);
			}
		}
		if (unresolved) {
			/* One row for the DSO's unresolved addresses. */
			snprintf(addr, sizeof(addr), "%s", cells[sym]);
			snprintf(cells[sym], sizeof(cells[sym]), "%s", UNRESOLVED);
		}
		r = row_get(t, cells, nk, d->nr_files, d->opt.noise_blocks);
		if (r && block >= 0) {
			r->block[fi * d->opt.noise_blocks + (size_t)block] +=
				e.samples;
			continue;
		}
		if (r && unresolved && !r->sym_addr)
			r->sym_addr = strdup(addr);
		if (!r || (unresolved && !r->sym_addr))
			return -ENOMEM;
		if (!r)
			return -ENOMEM;
		if (row_fresh(r, d->nr_files))
			r->kernel = e.kernel;
		r->present[fi] = true;
		r->period[fi] += e.weight;
		r->samples[fi] += e.samples;
	}
	return 0;
}

/* ---- what -c computes, and the noise ---- */

static double percent_of(uint64_t period, uint64_t total)
{
	return total ? period * 100.0 / total : 0.0;
}

/*
 * e^@x for @x <= 0, without libm's exp: the sanitizer builds link a
 * dynamic perfex against the static libm, whose exp needs the static C
 * library's CPU features.  Taylor's series at x / 2^n, squared n times:
 * about 1e-13 relative for the arguments here (down to -800).
 */
static double exp_neg(double x)
{
	double term = 1, sum = 1, y;
	int halvings = 0;

	while (x < -0.5) {
		x /= 2;
		halvings++;
	}
	for (int i = 1; i < 20; i++) {
		term *= x / i;
		sum += term;
	}
	y = sum;
	while (halvings--)
		y *= y;
	return y;
}

/* The upper tail of the standard normal distribution at @z >= 0
 * (Abramowitz and Stegun 26.2.17: within 7.5e-8). */
static double normal_tail(double z)
{
	static const double b[] = { 0.319381530, -0.356563782, 1.781477937,
				    -1.821255978, 1.330274429 };
	double t = 1 / (1 + 0.2316419 * z), poly = 0, tp = t;

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		poly += b[i] * tp;
		tp *= t;
	}
	return 0.3989422804014327 * exp_neg(-z * z / 2) * poly;
}

/* The z of a two-sided test at family-wise level @alpha over @tests
 * tests (Bonferroni): the upper alpha / (2 tests) quantile of the
 * normal distribution, by bisection. */
static double critical_z(double alpha, size_t tests)
{
	double tail = alpha / (2.0 * (tests ? tests : 1)), lo = 0, hi = 40;

	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (normal_tail(mid) > tail)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

#define NOISE_ALPHA 0.05

/*
 * The upper tail of Student's t distribution with @df degrees of freedom
 * (even) at @t >= 0: for even df the distribution function is a finite
 * sum in cos^2 = df / (df + t^2) (Abramowitz and Stegun 26.7.3), so no
 * libm function but sqrt is needed.
 */
static double t_tail(double t, unsigned df)
{
	double c2 = df / (df + t * t), term = 1, sum = 1;

	for (unsigned k = 1; k < df / 2; k++) {
		term *= c2 * (2.0 * k - 1) / (2.0 * k);
		sum += term;
	}
	return (1 - t / sqrt(df + t * t) * sum) / 2;
}

/* The largest degrees of freedom of the t quantiles: above, the normal's
 * (at 200 the t quantile of the tails here is within 1.5 % of it). */
#define MAX_DF 200

/* The upper @tail quantile of t with @df degrees of freedom (even, 2 to
 * MAX_DF; 0: the normal's), by bisection. */
static double t_quantile(double tail, unsigned df)
{
	double lo = 0, hi = 1e6;

	for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
		double mid = (lo + hi) / 2;

		if ((df ? t_tail(mid, df) : normal_tail(mid)) > tail)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* Sampling variance of a file's share of a row (a fraction), and the
 * degrees of freedom of its estimate (0: known, the binomial's). */
struct share_var {
	double var;
	double df;
};

/*
 * File @f's variance for row @r: the binomial variance of the share @p
 * in its @n samples, or the batch-means estimate from its time blocks
 * when that is larger.  With B blocks that have samples, n_b samples in
 * block b of which x_b in the row, X and N the sums, the file's share
 * X / N is a ratio of block sums, and its variance is estimated (as a
 * cluster sample's) by
 *	B / (B - 1) * sum_b (x_b - (X / N) n_b)^2 / N^2,
 * which is sum_b (share_b - share)^2 / (B (B - 1)), the variance of the
 * mean of B batch means, when the blocks are equal; its B - 1 degrees of
 * freedom go to the t quantile.
 */
static struct share_var share_var(const struct diff_table *t,
				  const struct diff_row *r, size_t f,
				  size_t nr_blocks, double p)
{
	struct share_var v = { .var = p * (1 - p) / (double)t->samples[f] };
	size_t bs = t->nr_blocks[f], used = 0;
	double share, sum = 0, n = 0;

	if (!bs)
		return v;
	for (size_t b = 0; b < bs; b++)
		n += (double)t->block[f * nr_blocks + b];
	if (!n)
		return v;
	share = (double)r->samples[f] / n;
	for (size_t b = 0; b < bs; b++) {
		double nb = (double)t->block[f * nr_blocks + b];
		double dev = (double)r->block[f * nr_blocks + b] - share * nb;

		used += nb > 0;
		sum += dev * dev;
	}
	if (used < 2)
		return v;
	sum *= (double)used / (double)(used - 1) / (n * n);
	if (sum > v.var) {
		v.var = sum;
		v.df = (double)(used - 1);
	}
	return v;
}

/*
 * Each row's value for each new file as perf diff computes it, and the
 * noise: how far a row's share moves between two recordings of one
 * workload by chance.
 *
 * Under "nothing changed", the difference of the two files' shares has
 * the variance v0 + v1, each file's its own: the binomial variance
 * p (1 - p) / N of the share p the two files pool (as if samples were
 * independent draws), or, where larger, the batch-means estimate of
 * share_var() from the file's time blocks.  Samples are not independent
 * draws: a burst of kernel work lands several in a row, and the machine's
 * load changes what shares a program's functions get from second to
 * second, and both show as the spread of the shares of blocks of time.
 * The change is compared with t sigma, t the two-sided quantile of
 * alpha / (2 m) of Student's t with the degrees of freedom of the
 * variance estimate (Welch-Satterthwaite: (v0 + v1)^2 / (v0^2 / d0 +
 * v1^2 / d1), a binomial variance counting as known; rounded down to an
 * even number; the normal quantile when both are binomial or above
 * MAX_DF), m the rows compared (Bonferroni): so that all rows of a table
 * together pass in 95 % of same-workload pairs.  A row is marked when its
 * change is beyond that noise and at least --min-change points: a kernel
 * row of 0.1 % that doubles is within the noise of a loaded machine more
 * often than the model can know, and no news either.
 */
static void compute(struct diff *d, struct diff_table *t)
{
	uint64_t n0 = t->samples[0];
	size_t nb = d->opt.noise_blocks;

	for (size_t f = 1; f < d->nr_files; f++) {
		uint64_t nf = t->samples[f];
		double quantile[MAX_DF / 2 + 1], tail;
		size_t tests = 0;

		for (size_t i = 0; i < t->nr; i++)
			tests += t->rows[i].present[0] || t->rows[i].present[f];
		tail = NOISE_ALPHA / (2.0 * (tests ? tests : 1));
		t->z[f] = critical_z(NOISE_ALPHA, tests);
		for (size_t k = 0; k <= MAX_DF / 2; k++)
			quantile[k] = 0;
		for (size_t i = 0; i < t->nr; i++) {
			struct diff_row *r = &t->rows[i];
			double old = percent_of(r->period[0], t->total[0]);
			double new = percent_of(r->period[f], t->total[f]);
			struct share_var v0, v1;
			double pooled, var, crit, den = 0;
			unsigned df = 0;

			r->value[f] = 0;
			if (r->present[f]) {
				switch (d->opt.compute) {
				case DIFF_DELTA:
				case DIFF_DELTA_ABS:
					r->value[f] = new - old;
					break;
				case DIFF_RATIO:
					r->value[f] = (double)r->period[f] /
						(double)(r->period[0] ? r->period[0] : 1);
					break;
				case DIFF_WDIFF:
					r->wdiff[f] = (int64_t)(r->period[f] * d->opt.w2 -
								r->period[0] * d->opt.w1);
					break;
				}
			}
			if (!n0 || !nf || !t->matched[f] ||
			    !(r->present[0] || r->present[f]))
				continue;
			pooled = (old * n0 + new * nf) / 100.0 / (double)(n0 + nf);
			v0 = share_var(t, r, 0, nb, pooled);
			v1 = share_var(t, r, f, nb, pooled);
			var = v0.var + v1.var;
			if (v0.df)
				den += v0.var * v0.var / v0.df;
			if (v1.df)
				den += v1.var * v1.var / v1.df;
			if (den > 0 && var * var / den < MAX_DF)
				df = 2 * (unsigned)(var * var / den / 2);
			if (den > 0 && df < 2)
				df = 2;
			r->df[f] = df;
			if (!df) {
				crit = t->z[f];
			} else {
				if (!quantile[df / 2])
					quantile[df / 2] = t_quantile(tail, df);
				crit = quantile[df / 2];
			}
			r->noise[f] = 100.0 * crit * sqrt(var);
			r->changed[f] = fabs(new - old) > r->noise[f] &&
					fabs(new - old) >= d->opt.min_change;
		}
	}
}

/* ---- perf diff's order ---- */

static const struct diff *sort_diff;

static int cmp_values(const struct diff_row *a, const struct diff_row *b,
		      size_t f)
{
	double x, y;

	if (sort_diff->opt.compute == DIFF_WDIFF) {
		if (a->wdiff[f] == b->wdiff[f])
			return 0;
		return a->wdiff[f] > b->wdiff[f] ? -1 : 1;
	}
	x = a->value[f];
	y = b->value[f];
	if (sort_diff->opt.compute == DIFF_DELTA_ABS) {
		x = fabs(x);
		y = fabs(y);
	}
	return x > y ? -1 : x < y;
}

/* perf's sort on the column of file @f: rows paired with anything
 * first, then those in file @f, then by value, largest first. */
static int cmp_column(const struct diff_row *a, const struct diff_row *b,
		      size_t f)
{
	bool pa = a->dummy || a->paired, pb = b->dummy || b->paired;

	if (pa != pb)
		return pa ? -1 : 1;
	if (!pa)
		return 0;
	if (a->present[f] != b->present[f])
		return a->present[f] ? -1 : 1;
	if (!a->present[f])
		return 0;
	return cmp_values(a, b, f);
}

/* The -o column's sort, first: rows in file @f first; for ratio and
 * wdiff, rows not in the base (no value) below the others. */
static int cmp_order(const struct diff_row *a, const struct diff_row *b,
		     size_t f)
{
	enum diff_compute c = sort_diff->opt.compute;

	if (a->present[f] != b->present[f])
		return a->present[f] ? -1 : 1;
	if (!a->present[f])
		return 0;
	if (c != DIFF_DELTA && c != DIFF_DELTA_ABS && a->dummy != b->dummy)
		return a->dummy ? 1 : -1;
	if (c != DIFF_DELTA && c != DIFF_DELTA_ABS && a->dummy)
		return 0;
	return cmp_values(a, b, f);
}

static int cmp_keys(const struct diff_row *a, const struct diff_row *b)
{
	for (size_t k = 0; k < sort_diff->opt.nr_keys; k++) {
		const char *x = a->cell[k], *y = b->cell[k];
		long u, v;
		int c;

		switch (sort_diff->opt.keys[k]) {
		case PERFCTR_SORT_PID:
		case PERFCTR_SORT_TID:
		case PERFCTR_SORT_CPU:
			u = strtol(x, NULL, 10);
			v = strtol(y, NULL, 10);
			if (u != v)
				return u < v ? -1 : 1;
			break;
		case PERFCTR_SORT_SYM: {
			/* Symbols before unresolved addresses. */
			bool ux = !strcmp(x, UNRESOLVED), uy = !strcmp(y, UNRESOLVED);

			if (ux != uy)
				return ux ? 1 : -1;
			c = strcmp(x, y);
			if (c)
				return c;
			break;
		}
		default:
			c = strcmp(x, y);
			if (c)
				return c;
		}
	}
	return 0;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	size_t order = sort_diff->opt.order;
	int c;

	if (order) {
		c = cmp_order(a, b, order);
		if (c)
			return c;
	}
	if (a->period[0] != b->period[0])
		return a->period[0] > b->period[0] ? -1 : 1;
	for (size_t f = 1; f < sort_diff->nr_files; f++) {
		c = cmp_column(a, b, f);
		if (c)
			return c;
	}
	return cmp_keys(a, b);
}

/* ---- the table ---- */

enum col_kind { COL_BASELINE, COL_BASE_PERIOD, COL_COMPUTE, COL_NOISE,
		COL_FORMULA, COL_PERIOD };

struct column {
	enum col_kind kind;
	size_t file;
	char title[48];
	int width;
};

static const char *compute_title(enum diff_compute c)
{
	switch (c) {
	case DIFF_DELTA: return "Delta";
	case DIFF_DELTA_ABS: return "Delta Abs";
	case DIFF_RATIO: return "Ratio";
	default: return "Weighted diff";
	}
}

static void add_column(const struct diff *d, struct column *cols, size_t *n,
		       enum col_kind kind, size_t file, const char *name,
		       int width)
{
	struct column *c = &cols[(*n)++];

	c->kind = kind;
	c->file = file;
	if (d->nr_files > 2)
		snprintf(c->title, sizeof(c->title), "%s/%zu", name, file);
	else
		snprintf(c->title, sizeof(c->title), "%s", name);
	c->width = (int)strlen(c->title) > width ? (int)strlen(c->title) : width;
}

/* perf diff's columns in its order (each file's computed value, its
 * formula, its period), with our noise after each computed value. */
static size_t columns(const struct diff *d, struct column *cols)
{
	size_t n = 0;
	int w = d->opt.compute == DIFF_DELTA || d->opt.compute == DIFF_DELTA_ABS ? 7 : 14;

	add_column(d, cols, &n, COL_BASELINE, 0, "Baseline", 0);
	if (d->opt.period)
		add_column(d, cols, &n, COL_BASE_PERIOD, 0, "Base period", 14);
	for (size_t f = 1; f < d->nr_files; f++) {
		add_column(d, cols, &n, COL_COMPUTE, f,
			   compute_title(d->opt.compute), w);
		if (!d->opt.no_noise)
			add_column(d, cols, &n, COL_NOISE, f, "Noise", 8);
		if (d->opt.formula)
			add_column(d, cols, &n, COL_FORMULA, f, "Formula", 70);
		if (d->opt.period)
			add_column(d, cols, &n, COL_PERIOD, f, "Period", 14);
	}
	return n;
}

static void formula(const struct diff *d, const struct diff_table *t,
		    const struct diff_row *r, size_t f, uint64_t base_total,
		    char *buf, size_t size)
{
	switch (d->opt.compute) {
	case DIFF_DELTA:
	case DIFF_DELTA_ABS:
		snprintf(buf, size, "(%" PRIu64 " * 100 / %" PRIu64 ") - (%"
			 PRIu64 " * 100 / %" PRIu64 ")", r->period[f],
			 t->total[f], r->period[0], base_total);
		break;
	case DIFF_RATIO:
		snprintf(buf, size, "%.0F / %.0F", (double)r->period[f],
			 (double)r->period[0]);
		break;
	case DIFF_WDIFF:
		snprintf(buf, size, "(%" PRIu64 " * %ld) - (%" PRIu64 " * %ld)",
			 r->period[f], d->opt.w2, r->period[0], d->opt.w1);
		break;
	}
}

static void diff_cell(const struct diff *d, const struct diff_table *t,
		      const struct diff_row *r, const struct column *c,
		      uint64_t base_total, char *buf, size_t size)
{
	size_t f = c->file;

	buf[0] = '\0';
	switch (c->kind) {
	case COL_BASELINE:
		if (!r->dummy)
			snprintf(buf, size, "%6.2f%%",
				 percent_of(r->period[0], base_total));
		break;
	case COL_BASE_PERIOD:
		snprintf(buf, size, "%" PRIu64, r->period[0]);
		break;
	case COL_COMPUTE:
		if (!r->present[f])
			break;
		if (d->opt.compute == DIFF_DELTA || d->opt.compute == DIFF_DELTA_ABS)
			snprintf(buf, size, "%+4.2F%%", r->value[f]);
		else if (r->dummy)
			snprintf(buf, size, "N/A");
		else if (d->opt.compute == DIFF_RATIO && r->value[f] > 0)
			snprintf(buf, size, "%14.6F", r->value[f]);
		else if (d->opt.compute == DIFF_WDIFF)
			snprintf(buf, size, "%14" PRId64, r->wdiff[f]);
		break;
	case COL_NOISE:
		if (t->matched[f] && t->samples[0] && t->samples[f] &&
		    (r->present[0] || r->present[f]))
			snprintf(buf, size, "%s%.2f%%", r->changed[f] ? "* " : "",
				 r->noise[f]);
		break;
	case COL_FORMULA:
		if (r->present[f])
			formula(d, t, r, f, base_total, buf, size);
		break;
	case COL_PERIOD:
		if (r->present[f])
			snprintf(buf, size, "%" PRIu64, r->period[f]);
		break;
	}
}

static bool wdiff_number(const struct diff *d, const struct column *c,
			 const char *cell)
{
	return c->kind == COL_COMPUTE && d->opt.compute == DIFF_WDIFF &&
	       cell[0] && strcmp(cell, "N/A");
}

struct key_layout {
	int width[PERFCTR_SORT_NR];
	int comm_width;
};

static const char *sym_text(const struct diff_row *r, size_t k)
{
	return !strcmp(r->cell[k], UNRESOLVED) && r->sym_addr ? r->sym_addr :
	       r->cell[k];
}

/* perf's widths of the key columns (as perfex report's), over @rows. */
static void key_layout(const struct diff *d, struct diff_row **rows,
		       size_t nr, struct key_layout *lay)
{
	bool unresolved = false;
	int comm = (int)strlen("Command");

	for (size_t k = 0; k < d->opt.nr_keys; k++)
		lay->width[k] = (int)strlen(report_key_title(d->opt.keys[k]));
	for (size_t i = 0; i < nr; i++) {
		for (size_t k = 0; k < d->opt.nr_keys; k++) {
			const char *text = rows[i]->cell[k];
			int len = (int)strlen(text);

			switch (d->opt.keys[k]) {
			case PERFCTR_SORT_SYM:
				len = (int)strlen(sym_text(rows[i], k)) + 4;
				unresolved |= !strcmp(text, UNRESOLVED);
				break;
			case PERFCTR_SORT_COMM:
				if (len > comm)
					comm = len;
				break;
			case PERFCTR_SORT_PID:
			case PERFCTR_SORT_TID: {
				const char *colon = strchr(text, ':');
				int cl = colon ? (int)strlen(colon + 1) : 0;

				if (cl > comm)
					comm = cl;
				len = 0;
				break;
			}
			default:
				break;
			}
			if (len > lay->width[k])
				lay->width[k] = len;
		}
	}
	lay->comm_width = comm;
	for (size_t k = 0; k < d->opt.nr_keys; k++) {
		switch (d->opt.keys[k]) {
		case PERFCTR_SORT_COMM:
			lay->width[k] = comm;
			break;
		case PERFCTR_SORT_PID:
		case PERFCTR_SORT_TID:
			lay->width[k] = comm + 8;
			break;
		case PERFCTR_SORT_DSO:
			if (unresolved && lay->width[k] < 16)
				lay->width[k] = 16;
			break;
		default:
			break;
		}
	}
}

static void key_cell(const struct diff *d, const struct key_layout *lay,
		     const struct diff_row *r, size_t k, char *buf, size_t size)
{
	const char *text = r->cell[k], *colon;

	switch (d->opt.keys[k]) {
	case PERFCTR_SORT_COMM:
		snprintf(buf, size, "%-*.*s", lay->comm_width, lay->comm_width,
			 text);
		return;
	case PERFCTR_SORT_DSO:
		/* perf pads it even as the last column. */
		snprintf(buf, size, "%-*s", lay->width[k], text);
		return;
	case PERFCTR_SORT_SYM:
		snprintf(buf, size, "[%c] %s", r->kernel ? 'k' : '.',
			 sym_text(r, k));
		return;
	case PERFCTR_SORT_PID:
	case PERFCTR_SORT_TID:
		colon = strchr(text, ':');
		snprintf(buf, size, "%7d:%-*.*s", (int)strtol(text, NULL, 10),
			 lay->comm_width, lay->comm_width, colon ? colon + 1 : "");
		return;
	case PERFCTR_SORT_CPU:
		snprintf(buf, size, "%*.*d", lay->width[k], lay->width[k],
			 (int)strtol(text, NULL, 10));
		return;
	default:
		snprintf(buf, size, "%s", text);
		return;
	}
}

static void print_dots(int n)
{
	while (n-- > 0)
		putchar('.');
}

static int print_table(struct diff *d, struct diff_table *t, size_t a,
		       struct diff_row **rows, size_t nr, bool first)
{
	struct column *cols = calloc(2 + 4 * d->nr_files, sizeof(*cols));
	struct key_layout lay;
	size_t nc, c, k;
	uint64_t base_total = 0;
	char buf[1024];

	if (!cols)
		return -ENOMEM;
	nc = columns(d, cols);

	/* The baseline's shares are of the rows shown (perf sums them
	 * again once -b took rows away). */
	for (size_t i = 0; i < nr; i++)
		base_total += rows[i]->period[0];
	key_layout(d, rows, nr, &lay);
	printf("%s# Event '%s'\n#\n", first ? "" : "\n",
	       perfctr_reader__event_name(d->files[0].rd, a));
	if (d->nr_files > 2) {
		printf("# Data files:\n");
		for (size_t f = 0; f < d->nr_files; f++)
			printf("#  [%zu] %s %s\n", f, d->files[f].path,
			       f ? "" : "(Baseline)");
		printf("#\n");
	}
	printf("#");
	for (c = 0; c < nc; c++)
		printf("%s%*s", c ? "  " : " ", cols[c].width, cols[c].title);
	for (k = 0; k < d->opt.nr_keys; k++) {
		bool right = d->opt.keys[k] == PERFCTR_SORT_PID ||
			     d->opt.keys[k] == PERFCTR_SORT_TID;

		printf(right ? "  %*s" : "  %-*s", lay.width[k],
		       report_key_title(d->opt.keys[k]));
	}
	printf("\n#");
	for (c = 0; c < nc; c++) {
		printf("%s", c ? "  " : " ");
		print_dots(cols[c].width);
	}
	for (k = 0; k < d->opt.nr_keys; k++) {
		printf("  ");
		print_dots(lay.width[k]);
	}
	printf("\n#\n");
	for (size_t i = 0; i < nr; i++) {
		const struct diff_row *r = rows[i];

		printf(" ");
		for (c = 0; c < nc; c++) {
			diff_cell(d, t, r, &cols[c], base_total, buf, sizeof(buf));
			/* perf prints a weighted diff 14 wide, left in a
			 * wider column (of three or more files). */
			printf(wdiff_number(d, &cols[c], buf) ? " %s%-*s" :
			       " %s%*s", c ? " " : "", cols[c].width, buf);
		}
		for (k = 0; k < d->opt.nr_keys; k++) {
			bool last = k + 1 == d->opt.nr_keys;

			key_cell(d, &lay, r, k, buf, sizeof(buf));
			printf("  %-*s", last ? 0 : lay.width[k], buf);
		}
		printf("\n");
	}
	free(cols);
	return 0;
}

/* ---- JSON ---- */

/* The Wilson score interval (95 %) of a share of @x in @n samples, in
 * percent. */
static void wilson(uint64_t x, uint64_t n, double *lo, double *hi)
{
	const double z = 1.959963984540054;
	double p, denom, centre, half;

	if (!n) {
		*lo = *hi = 0;
		return;
	}
	p = (double)x / n;
	denom = 1 + z * z / n;
	centre = (p + z * z / (2.0 * n)) / denom;
	half = z / denom * sqrt(p * (1 - p) / n + z * z / (4.0 * n * n));
	*lo = 100 * fmax(0, centre - half);
	*hi = 100 * fmin(1, centre + half);
}

static void json_row(const struct diff *d, const struct diff_table *t,
		     const struct diff_row *r, bool first)
{
	printf("%s\n   {", first ? "" : ",");
	for (size_t k = 0; k < d->opt.nr_keys; k++) {
		printf("%s\"%s\": ", k ? ", " : "",
		       perfctr_sort_key_name(d->opt.keys[k]));
		if (d->opt.keys[k] == PERFCTR_SORT_SYM)
			jout_str(stdout, sym_text(r, k));
		else
			jout_str(stdout, r->cell[k]);
	}
	printf(", \"kernel\": %s, \"files\": [", r->kernel ? "true" : "false");
	for (size_t f = 0; f < d->nr_files; f++) {
		double lo, hi;

		if (f)
			printf(", ");
		if (!r->present[f]) {
			printf("null");
			continue;
		}
		wilson(r->samples[f], t->samples[f], &lo, &hi);
		printf("{\"samples\": %" PRIu64 ", \"period\": %" PRIu64
		       ", \"share\": %.4f, \"sample_share\": %.4f"
		       ", \"interval\": [%.4f, %.4f]}", r->samples[f],
		       r->period[f], percent_of(r->period[f], t->total[f]),
		       percent_of(r->samples[f], t->samples[f]), lo, hi);
	}
	printf("], \"changes\": [null");
	for (size_t f = 1; f < d->nr_files; f++) {
		if (!t->matched[f] || !(r->present[0] || r->present[f])) {
			printf(", null");
			continue;
		}
		printf(", {\"delta\": %.4f",
		       percent_of(r->period[f], t->total[f]) -
		       percent_of(r->period[0], t->total[0]));
		if (r->present[0] && r->present[f])
			printf(", \"ratio\": %.6f",
			       (double)r->period[f] / (double)r->period[0]);
		else
			printf(", \"ratio\": null");
		if (d->opt.compute == DIFF_WDIFF)
			printf(", \"wdiff\": %" PRId64, (int64_t)(r->period[f] *
			       d->opt.w2 - r->period[0] * d->opt.w1));
		printf(", \"noise\": %.4f, \"df\": ", r->noise[f]);
		if (r->df[f])
			printf("%.0f", r->df[f]);
		else
			printf("null");
		printf(", \"changed\": %s}", r->changed[f] ? "true" : "false");
	}
	printf("]}");
}

static const char *compute_name(const struct diff *d)
{
	switch (d->opt.compute) {
	case DIFF_DELTA: return "delta";
	case DIFF_DELTA_ABS: return "delta-abs";
	case DIFF_RATIO: return "ratio";
	default: return "wdiff";
	}
}

static void json_head(const struct diff *d)
{
	printf("{\"files\": [");
	for (size_t f = 0; f < d->nr_files; f++) {
		printf("%s", f ? ", " : "");
		jout_str(stdout, d->files[f].path);
	}
	printf("], \"compute\": \"%s\"", compute_name(d));
	if (d->opt.compute == DIFF_WDIFF)
		printf(", \"weights\": [%ld, %ld]", d->opt.w1, d->opt.w2);
	printf(", \"sort\": [");
	for (size_t k = 0; k < d->opt.nr_keys; k++)
		printf("%s\"%s\"", k ? ", " : "",
		       perfctr_sort_key_name(d->opt.keys[k]));
	printf("], \"alpha\": %.2f, \"min_change\": %g, \"events\": [",
	       NOISE_ALPHA, d->opt.min_change);
}

static void json_event(struct diff *d, struct diff_table *t, size_t a,
		       struct diff_row **rows, size_t nr, bool first)
{
	printf("%s\n {\"event\": ", first ? "" : ",");
	jout_str(stdout, perfctr_reader__event_name(d->files[0].rd, a));
	printf(", \"files\": [");
	for (size_t f = 0; f < d->nr_files; f++) {
		printf("%s", f ? ", " : "");
		if (t->matched[f])
			printf("{\"samples\": %" PRIu64 ", \"period\": %" PRIu64
			       ", \"blocks\": %zu}", t->samples[f], t->total[f],
			       t->nr_blocks[f]);
		else
			printf("null");
	}
	printf("], \"z\": [null");
	for (size_t f = 1; f < d->nr_files; f++)
		printf(", %.4f", t->z[f]);
	printf("], \"rows\": [");
	for (size_t i = 0; i < nr; i++)
		json_row(d, t, rows[i], i == 0);
	printf("]}");
}

/* ---- one event ---- */

/* The time blocks of event @m of file @fi into the rows, when the file
 * has them: adjacent ones merged where the file has fewer than
 * BLOCK_SAMPLES samples a block, down to MIN_BLOCKS (else the binomial
 * model). */
static int add_blocks(struct diff *d, struct diff_table *t, size_t fi,
		      size_t m)
{
	const struct diff_file *file = &d->files[fi];
	size_t nb = file->nr_blocks, groups = t->samples[fi] / BLOCK_SAMPLES;

	if (!nb || !file->blocks[m * nb] || groups < MIN_BLOCKS)
		return 0;
	if (groups > nb)
		groups = nb;
	for (size_t b = 0; b < nb; b++) {
		struct perfctr_profile *prof = file->blocks[m * nb + b];
		size_t g = b * groups / nb;
		int err;

		t->block[fi * d->opt.noise_blocks + g] +=
			perfctr_profile__samples(prof);
		err = add_profile(d, t, fi, prof, (ssize_t)g);
		if (err)
			return err;
	}
	t->nr_blocks[fi] = groups;
	return 0;
}

static int diff_event(struct diff *d, size_t a, bool first)
{
	const struct perf_event_attr *attr =
		perfctr_reader__event_attr(d->files[0].rd, a);
	struct diff_table t = { 0 };
	struct diff_row **rows = NULL;
	size_t nr = 0, f;
	int err = -ENOMEM;

	t.total = calloc(d->nr_files, sizeof(*t.total));
	t.samples = calloc(d->nr_files, sizeof(*t.samples));
	t.matched = calloc(d->nr_files, sizeof(*t.matched));
	t.z = calloc(d->nr_files, sizeof(*t.z));
	t.nr_blocks = calloc(d->nr_files, sizeof(*t.nr_blocks));
	t.block = calloc(d->nr_files * (d->opt.noise_blocks ?
					d->opt.noise_blocks : 1),
			 sizeof(*t.block));
	if (!t.total || !t.samples || !t.matched || !t.z || !t.nr_blocks ||
	    !t.block)
		goto out;
	for (f = 0; f < d->nr_files; f++) {
		ssize_t m = f ? match_event(&d->files[f], attr) : (ssize_t)a;
		struct perfctr_profile *prof;

		if (m < 0)
			continue;
		prof = d->files[f].profiles[m];
		t.matched[f] = true;
		t.total[f] = perfctr_profile__weight(prof);
		t.samples[f] = perfctr_profile__samples(prof);
		err = add_profile(d, &t, f, prof, -1);
		if (err)
			goto out;
		err = add_blocks(d, &t, f, (size_t)m);
		if (err)
			goto out;
	}
	for (size_t i = 0; i < t.nr; i++) {
		struct diff_row *r = &t.rows[i];

		r->dummy = !r->present[0];
		for (f = 1; f < d->nr_files && !r->dummy; f++)
			r->paired |= r->present[f];
	}
	compute(d, &t);
	err = -ENOMEM;
	rows = malloc((t.nr ? t.nr : 1) * sizeof(*rows));
	if (!rows)
		goto out;
	for (size_t i = 0; i < t.nr; i++) {
		struct diff_row *r = &t.rows[i];

		/* -b: the base's rows that some new file has too. */
		if (d->opt.baseline_only && !r->paired)
			continue;
		rows[nr++] = r;
	}
	/* qsort() of pointers: sort by the rows they point at. */
	{
		struct diff_row *sorted = malloc((nr ? nr : 1) * sizeof(*sorted));

		if (!sorted)
			goto out;
		for (size_t i = 0; i < nr; i++)
			sorted[i] = *rows[i];
		sort_diff = d;
		qsort(sorted, nr, sizeof(*sorted), cmp_rows);
		for (size_t i = 0; i < nr; i++)
			rows[i] = &sorted[i];
		err = 0;
		if (d->opt.json)
			json_event(d, &t, a, rows, nr, first);
		else
			err = print_table(d, &t, a, rows, nr, first);
		free(sorted);
	}
out:
	free(rows);
	table_free(&t, d->opt.nr_keys);
	return err;
}

/* ---- stacks ---- */

/* The base event of the folded stacks and the flame graph: the first
 * with samples; its profile in the base and in file @f (NULL: none). */
static bool stack_profiles(struct diff *d, size_t f,
			   struct perfctr_profile **base,
			   struct perfctr_profile **new, size_t *event)
{
	for (size_t a = 0; a < d->files[0].nr_profiles; a++) {
		const struct perf_event_attr *attr =
			perfctr_reader__event_attr(d->files[0].rd, a);
		ssize_t m;

		if (!perfctr_profile__samples(d->files[0].profiles[a]))
			continue;
		m = match_event(&d->files[f], attr);
		*base = d->files[0].profiles[a];
		*new = m < 0 ? NULL : d->files[f].profiles[m];
		*event = a;
		return true;
	}
	return false;
}

static int write_stacks(struct diff *d)
{
	size_t f = d->opt.order ? d->opt.order : 1, event = 0;
	struct perfctr_profile *base = NULL, *new = NULL, *empty = NULL;
	struct diff_stacks *ds;
	char subtitle[1024];
	int err = 0;

	stack_profiles(d, f, &base, &new, &event);
	if (!new)
		new = empty = perfctr_profile__new(NULL);
	ds = new ? diff_stacks__new(base, new) : NULL;
	if (!ds) {
		perfctr_profile__delete(empty);
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	if (d->opt.flame) {
		FILE *out = fopen(d->opt.flame, "we");

		if (!out) {
			perfex_error("cannot create '%s': %s", d->opt.flame,
				     strerror(errno));
			err = PERFEX_EXIT_IO;
			goto out;
		}
		snprintf(subtitle, sizeof(subtitle),
			 "event '%s': %s against %s; red grew, blue shrank",
			 base ? perfctr_reader__event_name(d->files[0].rd, event) : "-",
			 d->files[f].path, d->files[0].path);
		err = diff_stacks__write_flame(ds, new, out, subtitle);
		if (fclose(out) || err) {
			perfex_error("cannot write '%s': %s", d->opt.flame,
				     strerror(err ? -err : errno));
			err = PERFEX_EXIT_IO;
			goto out;
		}
	}
	if (d->opt.folded) {
		err = diff_stacks__write_folded(ds, stdout);
		if (err < 0) {
			perfex_error("cannot write the folded stacks: %s",
				     strerror(-err));
			err = PERFEX_EXIT_IO;
			goto out;
		}
		err = 0;
	}
out:
	diff_stacks__delete(ds);
	perfctr_profile__delete(empty);
	return err;
}

/* ---- the command ---- */

static int check_options(struct diff *d, int argc, char **argv)
{
	static char *defaults[] = { "perf.data.old", "perf.data" };
	int nargs = argc - optind;

	if (d->opt.json + d->opt.folded > 1) {
		perfex_error("--json and --folded exclude each other");
		return PERFEX_EXIT_USAGE;
	}
	/* perf diff's files: none, perf.data.old and perf.data; one, the
	 * new file against perf.data.old; more, the base and new ones. */
	d->nr_files = nargs > 1 ? (size_t)nargs : 2;
	d->files = calloc(d->nr_files, sizeof(*d->files));
	if (!d->files) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	for (size_t f = 0; f < d->nr_files; f++)
		d->files[f].path = nargs > 1 ? argv[optind + f] :
				   f == 1 && nargs == 1 ? argv[optind] :
				   defaults[f];
	if (d->opt.order >= d->nr_files) {
		perfex_error("option '-o' names file %lu, but there %s only %zu "
			     "new file%s", d->opt.order,
			     d->nr_files == 2 ? "is" : "are", d->nr_files - 1,
			     d->nr_files == 2 ? "" : "s");
		perfex_hint("0 sorts by the baseline, 1 by the first new file");
		return PERFEX_EXIT_USAGE;
	}
	d->need_stacks = d->opt.folded || d->opt.flame;
	return PERFEX_GO_ON;
}

/* The symbols every file is read with, told the base's kernel release
 * (for the vDSO, as a reader of its own would be). */
static int make_symbols(struct diff *d)
{
	struct perfctr_perfdata *pd = perfctr_perfdata__open(d->files[0].path,
							     NULL);
	PERFCTR_OPTS(perfctr_symbols_opts, sopts, .kallsyms = d->opt.kallsyms,
		     .no_demangle = d->opt.no_demangle);
	const char *release;

	if (pd) {
		release = perfctr_perfdata__string(pd, PERFCTR_FEAT_OSRELEASE);
		d->osrelease = release ? strdup(release) : NULL;
		perfctr_perfdata__close(pd);
	}
	sopts.osrelease = d->osrelease;
	d->syms = perfctr_symbols__new(&sopts);
	if (!d->syms) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	return 0;
}

static void free_files(struct diff *d)
{
	for (size_t f = 0; d->files && f < d->nr_files; f++) {
		struct diff_file *file = &d->files[f];

		for (size_t a = 0; file->profiles && a < file->nr_profiles; a++)
			perfctr_profile__delete(file->profiles[a]);
		free(file->profiles);
		for (size_t b = 0; file->blocks &&
		     b < file->nr_profiles * file->nr_blocks; b++)
			perfctr_profile__delete(file->blocks[b]);
		free(file->blocks);
		perfctr_reader__close(file->rd);
	}
	free(d->files);
	perfctr_symbols__delete(d->syms);
	free(d->osrelease);
}

int cmd_diff(int argc, char **argv)
{
	struct diff d = {
		.opt = {
			.compute = DIFF_DELTA_ABS,
			.keys = { PERFCTR_SORT_DSO, PERFCTR_SORT_SYM },
			.nr_keys = 2,
			.order = 1,
			.noise_blocks = DEFAULT_BLOCKS,
			.min_change = 0.5,
		},
	};
	struct perfex_parse p;
	bool first = true;
	int ret, r;

	r = perfex_options_parse_into(&p, PERFEX_CMD_DIFF, argc, argv, false,
				      diff_option, &d, &d.opt);
	if (r >= 0)
		return r;
	ret = check_options(&d, argc, argv);
	if (ret != PERFEX_GO_ON || perfex_dry_run)
		goto out;
	ret = make_symbols(&d);
	if (ret)
		goto out;
	for (size_t f = 0; f < d.nr_files; f++) {
		ret = read_file(&d, &d.files[f]);
		if (ret)
			goto out;
	}
	if (d.opt.flame || d.opt.folded) {
		ret = write_stacks(&d);
		if (ret || d.opt.folded)
			goto out;
	}
	if (d.opt.json)
		json_head(&d);
	for (size_t a = 0; a < d.files[0].nr_profiles; a++) {
		if (tracking_only(&d.files[0], a))
			continue;
		if (diff_event(&d, a, first)) {
			perfex_error("out of memory");
			ret = PERFEX_EXIT_INTERNAL;
			goto out;
		}
		first = false;
	}
	if (d.opt.json)
		printf("\n]}\n");
out:
	if (ret == PERFEX_GO_ON)
		ret = 0;
	if (fflush(stdout) && !ret) {
		perfex_error("cannot write the differences: %s", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
	free_files(&d);
	return ret;
}
