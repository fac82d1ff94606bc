// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex report --speedscope and --gecko: the recording for the profile
 * viewers people open in a browser, speedscope (its "sampled" file format,
 * whose JSON schema the speedscope package ships) and the Firefox Profiler
 * (the Gecko profile format, with the fields perf's gecko script writes).
 *
 * Both want what the profile's stack tree (perfctr/profile.h) has given
 * up: the samples of each thread in time order, each naming its whole
 * stack.  So the samples are collected here as they are read, every stack
 * interned once as (its callers' stack, its innermost frame) — the shape
 * of the Gecko format's stack table — and each viewer's file is written
 * from that: speedscope's shared frames and one profile per thread, or
 * Gecko's per-thread string, frame and stack tables.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <perfctr/perfctr.h>
#include <perfctr/reader.h>

#include "json-out.h"
#include "report.h"

#define NO_STACK UINT32_MAX
#define FCACHE_SIZE 4096

/* A frame as the viewers name it: the symbol (or the address when it has
 * none, spelt as the report's sym column spells it), the DSO, the ring. */
struct vframe {
	const char *sym;	/* NULL: unresolved, named by addr */
	const char *dso;	/* NULL: "[unknown]" */
	uint64_t addr;
	bool kernel;
};

/* A stack: its innermost frame and the stack of its callers. */
struct vstack {
	uint32_t prefix;	/* NO_STACK for an outermost frame */
	uint32_t frame;
};

struct vsample {
	uint64_t time;		/* ns, the recording's clock */
	uint64_t weight;	/* the period, as the report weighs it */
	uint32_t stack;
};

/* The samples of one event in one thread, in time order. */
struct vthread {
	size_t event;
	pid_t pid, tid;
	char *comm;		/* the latest; NULL when never named */
	struct vsample *samples;
	size_t nr, cap;
	uint64_t weight;
};

struct fcache_slot {
	const char *sym, *dso;
	uint64_t addr;
	uint32_t id;
	bool kernel, used;
};

/* An open-addressing table of ids + 1 (0: empty slot). */
struct idtab {
	uint32_t *slots;
	size_t nslots;
};

struct report_viewers {
	struct vframe *frames;
	size_t nr_frames, cap_frames;
	struct idtab frame_tab;
	struct fcache_slot *fcache;
	struct vstack *stacks;
	size_t nr_stacks, cap_stacks;
	struct idtab stack_tab;
	struct vthread *threads;
	size_t nr_threads, cap_threads;
	struct idtab thread_tab;
	size_t last_thread;	/* the previous sample's, SIZE_MAX: none */
	uint64_t ordinal;	/* samples added (their time when untimed) */
	/* The previous sample's frames from the outermost in, and the
	 * stack each depth made: consecutive samples share their outer
	 * frames, which are then not looked up again. */
	struct vframe prev[PERFCTR_READER_MAX_FRAMES];
	uint32_t prev_stack[PERFCTR_READER_MAX_FRAMES];
	size_t nr_prev;
	uint32_t chain[PERFCTR_READER_MAX_FRAMES];
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t str_hash(const char *s, uint64_t h)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Grows a table that holds @nr ids to keep it at most half full,
 * rehashing with @hash(ctx, id).  Returns 0 or -ENOMEM. */
static int idtab_reserve(struct idtab *t, size_t nr,
			 uint64_t (*hash)(const void *, uint32_t),
			 const void *ctx)
{
	size_t n = t->nslots ? t->nslots : 1024, i, h;
	uint32_t *slots;

	if ((nr + 1) * 2 <= t->nslots)
		return 0;
	while ((nr + 1) * 2 > n)
		n *= 2;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->nslots; i++) {
		if (!t->slots[i])
			continue;
		for (h = hash(ctx, t->slots[i] - 1) & (n - 1); slots[h];
		     h = (h + 1) & (n - 1))
			;
		slots[h] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

static int grow(void **array, size_t *cap, size_t size)
{
	size_t n = *cap ? *cap * 2 : 256;
	void *p = realloc(*array, n * size);

	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = n;
	return 0;
}

static uint64_t frame_hash_of(const struct vframe *f)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	h = f->sym ? str_hash(f->sym, h) : mix64(h ^ f->addr);
	h = str_hash(f->dso, h * 31 + 1);
	return mix64(h + f->kernel);
}

static uint64_t frame_hash(const void *ctx, uint32_t id)
{
	const struct report_viewers *v = ctx;

	return frame_hash_of(&v->frames[id]);
}

static bool frame_eq(const struct vframe *a, const struct perfctr_frame *b)
{
	if (a->kernel != b->kernel || !str_eq(a->dso, b->dso))
		return false;
	return b->sym ? str_eq(a->sym, b->sym) : !a->sym && a->addr == b->addr;
}

/* Frames are the same when they print the same (symbol or address, DSO,
 * ring), whatever the addresses of their strings.  A cache by those
 * addresses comes first: the reader's strings stay put (they belong to
 * its symbols object), so most frames are found without a string
 * compare. */
static int64_t intern_frame(struct report_viewers *v,
			    const struct perfctr_frame *f)
{
	struct vframe key = { .sym = f->sym, .dso = f->dso,
			      .addr = f->sym ? 0 : f->addr,
			      .kernel = f->kernel };
	uint64_t ckey = (uint64_t)(uintptr_t)f->sym * 31 +
			(uint64_t)(uintptr_t)f->dso + key.addr + f->kernel;
	struct fcache_slot *slot = &v->fcache[mix64(ckey) & (FCACHE_SIZE - 1)];
	size_t h, mask;
	uint32_t id;

	if (slot->used && slot->sym == f->sym && slot->dso == f->dso &&
	    slot->kernel == f->kernel && slot->addr == key.addr)
		return slot->id;
	if (idtab_reserve(&v->frame_tab, v->nr_frames, frame_hash, v))
		return -ENOMEM;
	mask = v->frame_tab.nslots - 1;
	for (h = frame_hash_of(&key) & mask; v->frame_tab.slots[h];
	     h = (h + 1) & mask) {
		id = v->frame_tab.slots[h] - 1;
		if (frame_eq(&v->frames[id], f))
			goto found;
	}
	if (v->nr_frames == v->cap_frames &&
	    grow((void **)&v->frames, &v->cap_frames, sizeof(*v->frames)))
		return -ENOMEM;
	id = (uint32_t)v->nr_frames++;
	v->frames[id] = key;
	v->frame_tab.slots[h] = id + 1;
found:
	*slot = (struct fcache_slot){ .sym = f->sym, .dso = f->dso,
				      .addr = key.addr, .id = id,
				      .kernel = f->kernel, .used = true };
	return id;
}

static uint64_t stack_hash_of(uint32_t prefix, uint32_t frame)
{
	return mix64((uint64_t)prefix << 32 | frame);
}

static uint64_t stack_hash(const void *ctx, uint32_t id)
{
	const struct report_viewers *v = ctx;

	return stack_hash_of(v->stacks[id].prefix, v->stacks[id].frame);
}

static int64_t intern_stack(struct report_viewers *v, uint32_t prefix,
			    uint32_t frame)
{
	size_t h, mask;
	uint32_t id;

	if (idtab_reserve(&v->stack_tab, v->nr_stacks, stack_hash, v))
		return -ENOMEM;
	mask = v->stack_tab.nslots - 1;
	for (h = stack_hash_of(prefix, frame) & mask; v->stack_tab.slots[h];
	     h = (h + 1) & mask) {
		id = v->stack_tab.slots[h] - 1;
		if (v->stacks[id].prefix == prefix &&
		    v->stacks[id].frame == frame)
			return id;
	}
	if (v->nr_stacks >= NO_STACK - 1)
		return -ENOMEM;
	if (v->nr_stacks == v->cap_stacks &&
	    grow((void **)&v->stacks, &v->cap_stacks, sizeof(*v->stacks)))
		return -ENOMEM;
	id = (uint32_t)v->nr_stacks++;
	v->stacks[id] = (struct vstack){ .prefix = prefix, .frame = frame };
	v->stack_tab.slots[h] = id + 1;
	return id;
}

static uint64_t thread_hash_of(size_t event, pid_t tid)
{
	return mix64((uint64_t)event << 32 ^ (uint32_t)tid);
}

static uint64_t thread_hash(const void *ctx, uint32_t id)
{
	const struct report_viewers *v = ctx;

	return thread_hash_of(v->threads[id].event, v->threads[id].tid);
}

static struct vthread *get_thread(struct report_viewers *v, size_t event,
				  pid_t pid, pid_t tid)
{
	struct vthread *t;
	size_t h, mask;

	if (v->last_thread != SIZE_MAX) {
		t = &v->threads[v->last_thread];
		if (t->event == event && t->tid == tid)
			return t;
	}
	if (idtab_reserve(&v->thread_tab, v->nr_threads, thread_hash, v))
		return NULL;
	mask = v->thread_tab.nslots - 1;
	for (h = thread_hash_of(event, tid) & mask; v->thread_tab.slots[h];
	     h = (h + 1) & mask) {
		t = &v->threads[v->thread_tab.slots[h] - 1];
		if (t->event == event && t->tid == tid) {
			v->last_thread = v->thread_tab.slots[h] - 1;
			return t;
		}
	}
	if (v->nr_threads == v->cap_threads &&
	    grow((void **)&v->threads, &v->cap_threads, sizeof(*v->threads)))
		return NULL;
	v->last_thread = v->nr_threads++;
	v->thread_tab.slots[h] = (uint32_t)v->last_thread + 1;
	t = &v->threads[v->last_thread];
	*t = (struct vthread){ .event = event, .pid = pid, .tid = tid };
	return t;
}

struct report_viewers *report_viewers__new(void)
{
	struct report_viewers *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->fcache = calloc(FCACHE_SIZE, sizeof(*v->fcache));
	if (!v->fcache) {
		free(v);
		return NULL;
	}
	v->last_thread = SIZE_MAX;
	return v;
}

void report_viewers__delete(struct report_viewers *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nr_threads; i++) {
		free(v->threads[i].samples);
		free(v->threads[i].comm);
	}
	free(v->threads);
	free(v->thread_tab.slots);
	free(v->stacks);
	free(v->stack_tab.slots);
	free(v->frames);
	free(v->frame_tab.slots);
	free(v->fcache);
	free(v);
}

int report_viewers__add(struct report_viewers *v,
			const struct perfctr_reader_sample *rs, uint64_t weight)
{
	const struct perfctr_sample *s = rs->sample;
	uint32_t prefix = NO_STACK;
	struct vthread *t;
	size_t i;

	if (!rs->nr_frames)
		return 0;
	t = get_thread(v, rs->event_idx, rs->pid, rs->tid);
	if (!t)
		return -ENOMEM;
	/* The comm the thread had last, as the viewers name a thread once. */
	if (rs->comm && !str_eq(t->comm, rs->comm)) {
		char *comm = strdup(rs->comm);

		if (!comm)
			return -ENOMEM;
		free(t->comm);
		t->comm = comm;
	}
	for (i = 0; i < rs->nr_frames && i < PERFCTR_READER_MAX_FRAMES; i++) {
		const struct perfctr_frame *f = &rs->frames[rs->nr_frames - 1 - i];
		struct vframe *same = &v->prev[i];
		int64_t frame, stack;

		/* The same strings (the reader's) and address: the same
		 * frame under the same callers, so the same stack. */
		if (i < v->nr_prev && same->sym == f->sym &&
		    same->dso == f->dso && same->kernel == f->kernel &&
		    (f->sym || same->addr == f->addr)) {
			prefix = v->prev_stack[i];
			continue;
		}
		v->nr_prev = i;
		frame = intern_frame(v, f);
		stack = frame < 0 ? frame : intern_stack(v, prefix, (uint32_t)frame);
		if (stack < 0)
			return -ENOMEM;
		prefix = (uint32_t)stack;
		*same = (struct vframe){ .sym = f->sym, .dso = f->dso,
					 .addr = f->addr, .kernel = f->kernel };
		v->prev_stack[i] = prefix;
	}
	v->nr_prev = i;
	if (t->nr == t->cap &&
	    grow((void **)&t->samples, &t->cap, sizeof(*t->samples)))
		return -ENOMEM;
	t->samples[t->nr++] = (struct vsample){
		/* A file without times: the samples a millisecond apart. */
		.time = (s->type & PERF_SAMPLE_TIME) ? s->time :
			v->ordinal * 1000000,
		.weight = weight,
		.stack = prefix,
	};
	t->weight += weight;
	v->ordinal++;
	return 0;
}

/* ------------------------------------------------------------ output */

/* The millions of numbers of the sample arrays go through a buffer of
 * our own: a stdio call per number costs as much as the rest of the
 * export. */
struct obuf {
	FILE *out;
	size_t len;
	char buf[1 << 16];
};

static struct obuf *ob_new(FILE *out)
{
	struct obuf *ob = malloc(sizeof(*ob));

	if (ob) {
		ob->out = out;
		ob->len = 0;
	}
	return ob;
}

static void ob_flush(struct obuf *ob)
{
	fwrite(ob->buf, 1, ob->len, ob->out);
	ob->len = 0;
}

/* Room for @n more bytes (n <= the buffer). */
static char *ob_room(struct obuf *ob, size_t n)
{
	if (ob->len + n > sizeof(ob->buf))
		ob_flush(ob);
	return ob->buf + ob->len;
}

static void ob_str(struct obuf *ob, const char *s)
{
	size_t n = strlen(s);

	memcpy(ob_room(ob, n), s, n);
	ob->len += n;
}

static void ob_char(struct obuf *ob, char c)
{
	*ob_room(ob, 1) = c;
	ob->len++;
}

static void ob_u64(struct obuf *ob, uint64_t x)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	size_t n;

	do
		*--p = (char)('0' + x % 10);
	while (x /= 10);
	n = (size_t)(tmp + sizeof(tmp) - p);
	memcpy(ob_room(ob, n), p, n);
	ob->len += n;
}

/* @ns as milliseconds with three decimals (microseconds, as perf's gecko
 * script rounds them). */
static void ob_ms(struct obuf *ob, uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned frac = (unsigned)(us % 1000);
	char *p;

	ob_u64(ob, us / 1000);
	p = ob_room(ob, 4);
	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	p[2] = (char)('0' + frac / 10 % 10);
	p[3] = (char)('0' + frac % 10);
	ob->len += 4;
}

static const char *frame_name(const struct vframe *f, char *buf, size_t size)
{
	if (f->sym)
		return f->sym;
	snprintf(buf, size, "0x%016" PRIx64, f->addr);
	return buf;
}

static const struct report_viewers *sort_ctx;

static int by_event_weight(const void *a, const void *b)
{
	const struct vthread *x = &sort_ctx->threads[*(const size_t *)a];
	const struct vthread *y = &sort_ctx->threads[*(const size_t *)b];

	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The threads of @event (SIZE_MAX: every event), by event, then heaviest
 * first, then by tid: the order of speedscope's profiles and of Gecko's
 * threads.  NULL on ENOMEM; *@nr set. */
static size_t *threads_of(const struct report_viewers *v, size_t event,
			  size_t *nr)
{
	size_t *order = malloc((v->nr_threads + 1) * sizeof(*order)), i;

	*nr = 0;
	if (!order)
		return NULL;
	for (i = 0; i < v->nr_threads; i++)
		if (event == SIZE_MAX || v->threads[i].event == event)
			order[(*nr)++] = i;
	sort_ctx = v;
	qsort(order, *nr, sizeof(*order), by_event_weight);
	return order;
}

/* cpu-clock and task-clock periods are nanoseconds; other events count
 * occurrences (speedscope shows "none" as plain numbers). */
static const char *speedscope_unit(struct perfctr_reader *rd, size_t event)
{
	const struct perf_event_attr *attr = perfctr_reader__event_attr(rd, event);

	if (attr && attr->type == PERF_TYPE_SOFTWARE &&
	    (attr->config == PERF_COUNT_SW_CPU_CLOCK ||
	     attr->config == PERF_COUNT_SW_TASK_CLOCK))
		return "nanoseconds";
	return "none";
}

static void thread_title(FILE *out, struct perfctr_reader *rd,
			 const struct vthread *t)
{
	char title[512];

	snprintf(title, sizeof(title), "%s (pid %d, tid %d) '%s'",
		 t->comm ? t->comm : "[unknown]", (int)t->pid, (int)t->tid,
		 perfctr_reader__event_name(rd, t->event));
	jout_str(out, title);
}

/* A sample's frames from the outermost in: @stack's chain backwards. */
static void put_stack_frames(struct obuf *ob, const struct report_viewers *v,
			     uint32_t stack, uint32_t *buf)
{
	size_t n = 0;

	for (; stack != NO_STACK && n < PERFCTR_READER_MAX_FRAMES;
	     stack = v->stacks[stack].prefix)
		buf[n++] = v->stacks[stack].frame;
	ob_char(ob, '[');
	while (n--) {
		ob_u64(ob, buf[n]);
		if (n)
			ob_char(ob, ',');
	}
	ob_char(ob, ']');
}

/* Speedscope draws consecutive samples of one stack as one: so are they
 * written, their weights added (the views are the same, the file
 * smaller).  @weights: the weights, or the stacks. */
static void put_speedscope_samples(struct obuf *ob, struct report_viewers *v,
				   const struct vthread *t, bool weights)
{
	size_t i = 0, j, shown = 0;

	while (i < t->nr) {
		uint64_t w = 0;

		for (j = i; j < t->nr && t->samples[j].stack == t->samples[i].stack; j++)
			w += t->samples[j].weight;
		if (shown++)
			ob_str(ob, weights ? "," : ",\n    ");
		if (weights)
			ob_u64(ob, w);
		else
			put_stack_frames(ob, v, t->samples[i].stack, v->chain);
		i = j;
	}
}

int report_write_speedscope(struct report_viewers *v, struct perfctr_reader *rd,
			    size_t event, const char *name, FILE *out)
{
	struct obuf *ob = ob_new(out);
	char buf[64];
	size_t *order, nr, i;
	int err;

	order = ob ? threads_of(v, event, &nr) : NULL;
	if (!order) {
		free(ob);
		return -ENOMEM;
	}
	fputs("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
	      " \"exporter\": \"perfex " PERFCTR_VERSION "\",\n \"name\": ", out);
	jout_str(out, name);
	fputs(",\n \"activeProfileIndex\": 0,\n \"shared\": {\"frames\": [", out);
	for (i = 0; i < v->nr_frames; i++) {
		const struct vframe *f = &v->frames[i];

		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
		jout_str(out, frame_name(f, buf, sizeof(buf)));
		if (f->dso) {
			fputs(", \"file\": ", out);
			jout_str(out, f->dso);
		}
		fputc('}', out);
	}
	fputs("]},\n \"profiles\": [", out);
	for (i = 0; i < nr; i++) {
		const struct vthread *t = &v->threads[order[i]];

		fputs(i ? ",\n  {" : "\n  {", out);
		fputs("\"type\": \"sampled\", \"name\": ", out);
		thread_title(out, rd, t);
		fprintf(out, ", \"unit\": \"%s\", \"startValue\": 0, "
			"\"endValue\": ", speedscope_unit(rd, t->event));
		fprintf(out, "%" PRIu64, t->weight);
		fputs(",\n   \"samples\": [\n    ", out);
		put_speedscope_samples(ob, v, t, false);
		ob_str(ob, "],\n   \"weights\": [");
		put_speedscope_samples(ob, v, t, true);
		ob_str(ob, "]}");
		ob_flush(ob);
	}
	fputs("]}\n", out);
	err = ferror(out) ? -EIO : 0;
	free(order);
	free(ob);
	return err;
}

/* ------------------------------------------------------------- Gecko */

/* A thread's own tables: the Gecko format gives each thread its string,
 * frame and stack tables, so the shared ids are renumbered per thread
 * (local[id] + 1, 0 for "not yet in this thread"). */
struct gecko_ids {
	uint32_t *stack_local, *frame_local;
	uint32_t *stacks;	/* the thread's stacks, by local id: global ids */
	uint32_t *frames;	/* the thread's frames, by local id */
	size_t nr_stacks, nr_frames;
};

static uint32_t gecko_frame(struct gecko_ids *g, uint32_t frame)
{
	if (!g->frame_local[frame]) {
		g->frames[g->nr_frames] = frame;
		g->frame_local[frame] = (uint32_t)++g->nr_frames;
	}
	return g->frame_local[frame] - 1;
}

/* @stack's local id, its callers' stacks numbered first (the format
 * wants a prefix before the stacks that name it). */
static uint32_t gecko_stack(struct gecko_ids *g, const struct report_viewers *v,
			    uint32_t stack, uint32_t *chain)
{
	size_t n = 0;

	for (uint32_t s = stack; s != NO_STACK && !g->stack_local[s];
	     s = v->stacks[s].prefix)
		chain[n++] = s;
	while (n--) {
		uint32_t s = chain[n];

		gecko_frame(g, v->stacks[s].frame);
		g->stacks[g->nr_stacks] = s;
		g->stack_local[s] = (uint32_t)++g->nr_stacks;
	}
	return g->stack_local[stack] - 1;
}

static void gecko_thread(struct obuf *ob, struct report_viewers *v,
			 const struct vthread *t,
			 struct gecko_ids *g, uint32_t *local, uint64_t t0)
{
	FILE *out = ob->out;
	size_t i;
	char buf[64];

	g->nr_stacks = g->nr_frames = 0;
	for (i = 0; i < t->nr; i++)
		local[i] = gecko_stack(g, v, t->samples[i].stack, v->chain);
	fprintf(out, "  {\"tid\": %d, \"pid\": %d, \"name\": ",
		(int)t->tid, (int)t->pid);
	jout_str(out, t->comm ? t->comm : "[unknown]");
	fputs(", \"processType\": \"default\", \"registerTime\": 0, "
	      "\"unregisterTime\": null,\n"
	      "   \"markers\": {\"schema\": {\"name\": 0, \"startTime\": 1, "
	      "\"endTime\": 2, \"phase\": 3, \"category\": 4, \"data\": 5}, "
	      "\"data\": []},\n"
	      "   \"samples\": {\"schema\": {\"stack\": 0, \"time\": 1, "
	      "\"responsiveness\": 2}, \"data\": [", out);
	for (i = 0; i < t->nr; i++) {
		ob_str(ob, i ? ",\n    [" : "\n    [");
		ob_u64(ob, local[i]);
		ob_char(ob, ',');
		ob_ms(ob, t->samples[i].time - t0);
		ob_str(ob, ",0]");
	}
	ob_str(ob, "]},\n   \"frameTable\": {\"schema\": {\"location\": 0, "
	       "\"relevantForJS\": 1, \"innerWindowID\": 2, "
	       "\"implementation\": 3, \"optimizations\": 4, \"line\": 5, "
	       "\"column\": 6, \"category\": 7, \"subcategory\": 8}, "
	       "\"data\": [");
	/* One string per frame: string i names frame i. */
	for (i = 0; i < g->nr_frames; i++) {
		ob_str(ob, i ? ",\n    [" : "\n    [");
		ob_u64(ob, i);
		ob_str(ob, v->frames[g->frames[i]].kernel ?
		       ",false,0,null,null,null,null,1,0]" :
		       ",false,0,null,null,null,null,0,0]");
	}
	ob_str(ob, "]},\n   \"stackTable\": {\"schema\": {\"prefix\": 0, "
	       "\"frame\": 1}, \"data\": [");
	for (i = 0; i < g->nr_stacks; i++) {
		const struct vstack *s = &v->stacks[g->stacks[i]];

		ob_str(ob, i ? ",\n    [" : "\n    [");
		if (s->prefix == NO_STACK)
			ob_str(ob, "null");
		else
			ob_u64(ob, g->stack_local[s->prefix] - 1);
		ob_char(ob, ',');
		ob_u64(ob, g->frame_local[s->frame] - 1);
		ob_char(ob, ']');
	}
	ob_str(ob, "]},\n   \"stringTable\": [");
	ob_flush(ob);
	for (i = 0; i < g->nr_frames; i++) {
		const struct vframe *f = &v->frames[g->frames[i]];
		char text[1024];

		/* perf's gecko script's frame names: "sym (in dso)". */
		snprintf(text, sizeof(text), "%s (in %s)",
			 frame_name(f, buf, sizeof(buf)),
			 f->dso ? f->dso : "[unknown]");
		fputs(i ? ",\n    " : "\n    ", out);
		jout_str(out, text);
	}
	fputs("]}", out);
	/* The next thread starts from empty tables. */
	for (i = 0; i < g->nr_stacks; i++)
		g->stack_local[g->stacks[i]] = 0;
	for (i = 0; i < g->nr_frames; i++)
		g->frame_local[g->frames[i]] = 0;
}

/* The time between samples in ms: the event's frequency when it was
 * sampled by one, the period of a clock event (nanoseconds of the
 * task's or CPU's time), else the mean of what the samples show (1 for
 * one sample). */
static double gecko_interval(struct perfctr_reader *rd, size_t event,
			     uint64_t first, uint64_t last, uint64_t nr)
{
	const struct perf_event_attr *attr = perfctr_reader__event_attr(rd, event);

	if (attr && attr->freq && attr->sample_freq)
		return 1000.0 / (double)attr->sample_freq;
	if (attr && !attr->freq && attr->sample_period &&
	    !strcmp(speedscope_unit(rd, event), "nanoseconds"))
		return (double)attr->sample_period / 1e6;
	if (nr > 1 && last > first)
		return (double)(last - first) / 1e6 / (double)(nr - 1);
	return 1.0;
}

int report_write_gecko(struct report_viewers *v, struct perfctr_reader *rd,
		       size_t event, FILE *out)
{
	struct gecko_ids g = { 0 };
	struct obuf *ob = ob_new(out);
	uint32_t *local = NULL;
	uint64_t first = UINT64_MAX, last = 0, nr_samples = 0;
	size_t *order, nr, i, most = 1;
	int err = -ENOMEM;

	order = threads_of(v, event, &nr);
	if (!order)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		const struct vthread *t = &v->threads[order[i]];

		for (size_t k = 0; k < t->nr; k++) {
			uint64_t time = t->samples[k].time;

			first = time < first ? time : first;
			last = time > last ? time : last;
		}
		most = t->nr > most ? t->nr : most;
		nr_samples += t->nr;
	}
	if (first == UINT64_MAX)
		first = 0;
	g.stack_local = calloc(v->nr_stacks + 1, sizeof(*g.stack_local));
	g.frame_local = calloc(v->nr_frames + 1, sizeof(*g.frame_local));
	g.stacks = malloc((v->nr_stacks + 1) * sizeof(*g.stacks));
	g.frames = malloc((v->nr_frames + 1) * sizeof(*g.frames));
	local = malloc(most * sizeof(*local));
	if (!g.stack_local || !g.frame_local || !g.stacks || !g.frames ||
	    !local || !ob)
		goto out;
	fprintf(out, "{\"meta\": {\"interval\": %.6g, \"processType\": 0, "
		"\"product\": \"perfex " PERFCTR_VERSION "\", \"stackwalk\": 1, "
		"\"debug\": 0, \"gcpoison\": 0, \"asyncstack\": 1, "
		"\"startTime\": ",
		gecko_interval(rd, event, first, last, nr_samples));
	ob_ms(ob, first);
	ob_flush(ob);
	fputs(", \"shutdownTime\": null, \"version\": 24, "
	      "\"presymbolicated\": true,\n"
	      "  \"categories\": [{\"name\": \"User\", \"color\": \"yellow\", "
	      "\"subcategories\": [\"Other\"]}, {\"name\": \"Kernel\", "
	      "\"color\": \"orange\", \"subcategories\": [\"Other\"]}],\n"
	      "  \"markerSchema\": []},\n"
	      " \"libs\": [],\n \"threads\": [\n", out);
	for (i = 0; i < nr; i++) {
		if (i)
			fputs(",\n", out);
		gecko_thread(ob, v, &v->threads[order[i]], &g, local, first);
	}
	fputs("],\n \"processes\": [],\n \"pausedRanges\": []}\n", out);
	err = ferror(out) ? -EIO : 0;
out:
	free(g.stack_local);
	free(g.frame_local);
	free(g.stacks);
	free(g.frames);
	free(local);
	free(order);
	free(ob);
	return err;
}
