/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The perf.data sample reader (see reader.h): the file's side-band records
 * model the recorded processes (comm per thread, maps per process, through
 * a symbols object) and every sample is handed over in time order with
 * its frames resolved.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfctr/reader.h"
#include "common/internal.h"
#include "sample/symbols-internal.h"
#include "sample/unwind.h"

#define WALK_MAX_FRAMES PERFCTR_READER_MAX_FRAMES

/* What the side-band records said of a thread so far. */
struct comm_slot {
	int32_t tid;		/* 0: empty (tid 0 is the idle task: kept apart) */
	int32_t pid;		/* 0: not known */
	int32_t ppid, ptid;	/* from its FORK record, when forked */
	bool forked;
	char comm[16];
};

/* Resolved addresses, direct-mapped: profiles hit the same few addresses
 * millions of times.  Emptied whenever an address space changes. */
#define RCACHE_SIZE 4096

struct rcache_slot {
	uint64_t ip;
	int32_t pid;
	bool kernel, used;
	struct perfctr_frame frame;
};

struct walk_order;

/* What the reader has counted. */
struct walk_stats {
	uint64_t records;
	uint64_t samples;
	uint64_t bad_samples;
	uint64_t lost;
	uint64_t lost_samples;
	uint64_t unwound;
	uint64_t truncated[PERFCTR_UNWIND_NR_STOPS];
	uint64_t *samples_per_attr;	/* nr_attrs entries */
	uint64_t *lost_per_attr;
};

/* Where the second pass stands. */
enum walk_state { WALK_READING, WALK_DRAINING, WALK_DONE };

struct perfctr_reader {
	bool callchain, dso_only;
	bool side_band;		/* hand over side-band records too */
	struct rcache_slot *rcache;
	struct perfctr_perfdata *pd;
	const struct perfctr_decoder *dec;
	struct perfctr_symbols *syms;
	bool shared_syms;		/* the caller's (opts.symbols) */
	struct pc_unwinder *unwinder;	/* made at the first stack copy */
	bool no_unwinder;		/* ... which could not be made */
	struct walk_stats stats;
	char **names;		/* per attr */
	size_t *time_off;	/* per attr: where a sample has its time */
	size_t nr_attrs;

	struct walk_order *order;
	enum walk_state state;
	int error;		/* sticky, once the second pass failed */
	void *handed;		/* the held record last handed over */

	struct comm_slot *comms;
	size_t comm_cap, nr_comms;
	char idle_comm[16];
};

static uint64_t tid_hash(int32_t tid)
{
	return (uint64_t)(uint32_t)tid * 0x9E3779B97F4A7C15ULL >> 17;
}

static struct comm_slot *comm_slot(struct perfctr_reader *w, int32_t tid, bool create)
{
	size_t h, mask;

	if (w->comm_cap) {
		mask = w->comm_cap - 1;
		for (h = tid_hash(tid) & mask; w->comms[h].tid; h = (h + 1) & mask)
			if (w->comms[h].tid == tid)
				return &w->comms[h];
	}
	if (!create)
		return NULL;
	if ((w->nr_comms + 1) * 2 > w->comm_cap) {
		size_t cap = w->comm_cap ? w->comm_cap * 2 : 256, i;
		struct comm_slot *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return NULL;
		for (i = 0; i < w->comm_cap; i++) {
			if (!w->comms[i].tid)
				continue;
			h = tid_hash(w->comms[i].tid) & (cap - 1);
			while (tab[h].tid)
				h = (h + 1) & (cap - 1);
			tab[h] = w->comms[i];
		}
		free(w->comms);
		w->comms = tab;
		w->comm_cap = cap;
	}
	mask = w->comm_cap - 1;
	for (h = tid_hash(tid) & mask; w->comms[h].tid; h = (h + 1) & mask)
		;
	w->comms[h].tid = tid;
	w->nr_comms++;
	return &w->comms[h];
}

static void set_comm(struct perfctr_reader *w, int32_t tid, const char *comm)
{
	struct comm_slot *slot;

	if (tid == 0) {
		snprintf(w->idle_comm, sizeof(w->idle_comm), "%s", comm);
		return;
	}
	slot = comm_slot(w, tid, true);
	if (slot)
		snprintf(slot->comm, sizeof(slot->comm), "%s", comm);
}

static const char *get_comm(struct perfctr_reader *w, int32_t tid)
{
	struct comm_slot *slot;

	if (tid == 0)
		return w->idle_comm[0] ? w->idle_comm : "swapper";
	slot = comm_slot(w, tid, false);
	return slot ? slot->comm : NULL;
}

/* A name for an attr without an event_desc entry. */
static char *attr_fallback_name(const struct perf_event_attr *attr)
{
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output",
		"cgroup-switches",
	};
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
	};
	char buf[64];

	if (attr->type == PERF_TYPE_SOFTWARE &&
	    attr->config < sizeof(sw) / sizeof(sw[0]))
		return strdup(sw[attr->config]);
	if (attr->type == PERF_TYPE_HARDWARE &&
	    attr->config < sizeof(hw) / sizeof(hw[0]))
		return strdup(hw[attr->config]);
	snprintf(buf, sizeof(buf), "%s%u/config=0x%llx/",
		 attr->type == PERF_TYPE_TRACEPOINT ? "tracepoint" : "type",
		 attr->type, (unsigned long long)attr->config);
	return strdup(buf);
}

static size_t time_offset(const struct perf_event_attr *attr);

static void resolve(struct perfctr_reader *w, pid_t pid, uint64_t ip, bool kernel,
		    struct perfctr_frame *f)
{
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	struct rcache_slot *slot = NULL;

	if (w->rcache) {
		uint64_t h = (ip ^ (ip >> 12) ^ (uint64_t)(uint32_t)pid * 0x9E3779B1u) &
			     (RCACHE_SIZE - 1);

		slot = &w->rcache[h];
		if (slot->used && slot->ip == ip && slot->pid == pid &&
		    slot->kernel == kernel) {
			*f = slot->frame;
			return;
		}
	}

	perfctr_symbols__resolve(w->syms, pid, ip, kernel,
				 w->dso_only ? PERFCTR_RESOLVE_DSO_ONLY : 0,
				 &loc);
	f->dso = loc.dso;
	f->sym = loc.sym;
	f->addr = loc.dso_addr;
	f->kernel = kernel;
	if (slot) {
		slot->used = true;
		slot->ip = ip;
		slot->pid = pid;
		slot->kernel = kernel;
		slot->frame = *f;
	}
}

static void rcache_clear(struct perfctr_reader *w)
{
	if (w->rcache)
		memset(w->rcache, 0, RCACHE_SIZE * sizeof(*w->rcache));
}

/* The frames of a sample handed over. */
struct walk_sample {
	struct perfctr_frame frames[WALK_MAX_FRAMES];
	uint64_t ips[WALK_MAX_FRAMES];
	size_t nr_frames;
	bool kernel;
	/* The unwinder's output, before it is resolved. */
	uint64_t user_ips[WALK_MAX_FRAMES];
	bool user_exact[WALK_MAX_FRAMES];
};

/* Frame @ip at the end of @ws: @exact where the thread was (the sampled
 * address, the top of an unwound user stack), else a return address,
 * whose call is one byte before it. */
static void add_frame(struct perfctr_reader *w, pid_t pid,
		      struct walk_sample *ws, uint64_t ip, bool kernel,
		      bool exact)
{
	struct perfctr_frame *f = &ws->frames[ws->nr_frames];

	resolve(w, pid, exact ? ip : ip - 1, kernel, f);
	if (!exact)
		f->addr++;
	ws->ips[ws->nr_frames++] = ip;
}

/*
 * The user frames of a sample with a stack copy, after its kernel frames
 * (perf's merge: the kernel's callchain has no user part when the user
 * stack is recorded).
 */
static void add_unwound(struct perfctr_reader *w, const struct perfctr_sample *s,
			struct walk_sample *ws)
{
	size_t n, i;
	int stop;

	if (!w->unwinder && !w->no_unwinder) {
		w->unwinder = pc_unwinder__new(w->syms,
			perfctr_perfdata__string(w->pd, PERFCTR_FEAT_ARCH));
		w->no_unwinder = !w->unwinder;
	}
	w->stats.unwound++;
	if (!w->unwinder) {
		w->stats.truncated[PERFCTR_UNWIND_UNSUPPORTED]++;
		return;
	}
	n = pc_unwinder__unwind(w->unwinder, s, ws->user_ips, ws->user_exact,
				WALK_MAX_FRAMES - ws->nr_frames, &stop);
	if (stop >= 0 && stop < PERFCTR_UNWIND_NR_STOPS)
		w->stats.truncated[stop]++;
	for (i = 0; i < n; i++)
		add_frame(w, (pid_t)s->pid, ws, ws->user_ips[i], false,
			  ws->user_exact[i]);
}

static void build_frames(struct perfctr_reader *w, const struct perfctr_sample *s,
			 struct walk_sample *ws)
{
	uint16_t cpumode = s->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool kernel = cpumode == PERF_RECORD_MISC_KERNEL;
	bool unwind = w->callchain && !w->dso_only && pc_unwinder__applies(s);
	uint64_t i;

	ws->kernel = kernel;
	ws->nr_frames = 0;
	if (w->callchain && (s->type & PERF_SAMPLE_CALLCHAIN) &&
	    s->callchain_nr) {
		bool ctx_kernel = kernel;

		for (i = 0; i < s->callchain_nr &&
			    ws->nr_frames < WALK_MAX_FRAMES; i++) {
			uint64_t ip = s->callchain[i];

			if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
				if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
					ctx_kernel = true;
				else if (ip == (uint64_t)PERF_CONTEXT_USER)
					ctx_kernel = false;
				continue;
			}
			/* The stack copy has the user frames. */
			if (unwind && !ctx_kernel)
				break;
			add_frame(w, s->pid, ws, ip, ctx_kernel, !ws->nr_frames);
		}
	}
	if (unwind && ws->nr_frames < WALK_MAX_FRAMES)
		add_unwound(w, s, ws);
	if (!ws->nr_frames)
		add_frame(w, s->pid, ws, s->ip, kernel, true);
}

/*
 * Time order without holding the file.
 *
 * Records come ring by ring, so a sample on one CPU may precede in the
 * file the MMAP2 (or COMM) that another CPU's ring saw first.  Like perf,
 * we process records in time order (equal times in file order), yet
 * without an index of every record: two streaming passes.
 *
 * The first pass keeps a copy of each side-band record that changes the
 * model (MMAP, MMAP2, COMM, FORK: few, however many samples there are),
 * counts the lost ones, and measures how late samples come: the largest
 * gap between a sample's time and the latest sample time read before it.
 * The side-band copies are then sorted by time.
 *
 * The second pass reads the samples again, in file order.  With a lateness
 * of L, no sample still unread can be older than (latest time read - L),
 * so a sample that old or older is handed over now, after every side-band
 * record that precedes it in time; a younger one waits in a heap.  Files
 * already in order (L = 0, one busy CPU) hold nothing back; a recorder that
 * drains every ring on each wake-up (ours, perf's) gives an L of one wake-up
 * interval, so the heap holds about one interval's samples.
 */

/* The time a record is ordered by: untimed records (synthesised ones) keep
 * their place after the latest time read before them. */
struct walk_clock {
	uint64_t last;		/* latest time of any record */
	uint64_t last_sample;	/* latest time of a sample */
	bool started;
};

/* A side-band record kept from the first pass. */
struct walk_side {
	uint64_t time;
	uint64_t cursor;
	size_t off;		/* into side_buf */
};

/* A sample held back until nothing unread can come before it. */
struct walk_held {
	uint64_t time;
	uint64_t cursor;
	struct perf_event_header *rec;	/* a copy */
};

struct walk_order {
	struct walk_side *side;
	size_t nr_side, side_cap, next_side;
	unsigned char *side_buf;
	size_t side_len, side_buf_cap;
	uint64_t lateness;
	struct walk_held *held;		/* a min-heap by (time, cursor) */
	size_t nr_held, held_cap;
	struct perfctr_sample sample;
	struct walk_sample ws;
	struct perfctr_record side_rec;	/* the side-band record handed over */
	/* The second pass. */
	uint64_t cursor;
	uint64_t ripe;		/* nothing unread is older than this */
	struct walk_clock clock;
};

static bool key_before(uint64_t t1, uint64_t c1, uint64_t t2, uint64_t c2)
{
	return t1 != t2 ? t1 < t2 : c1 < c2;
}

static int side_cmp(const void *a, const void *b)
{
	const struct walk_side *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->cursor < y->cursor ? -1 : x->cursor > y->cursor;
}

/* Byte offset of PERF_SAMPLE_TIME in a sample of @attr, 0 when absent:
 * it follows IDENTIFIER, IP and TID, all fixed-size. */
static size_t time_offset(const struct perf_event_attr *attr)
{
	uint64_t st = attr->sample_type;

	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	return sizeof(struct perf_event_header) +
	       8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
		    !!(st & PERF_SAMPLE_TID));
}

/* A record's time, 0 when it has none (or cannot be decoded).  Both passes
 * must compute exactly the same: this is the only place that does. */
static uint64_t record_time(struct perfctr_reader *w, const struct perf_event_header *hdr)
{
	uint64_t time = 0;

	if (hdr->type == PERF_RECORD_SAMPLE) {
		int idx = perfctr_decoder__find_attr(w->dec, hdr);
		size_t off;

		if (idx < 0 || (size_t)idx >= w->nr_attrs)
			return 0;
		off = w->time_off[idx];
		if (off && off + 8 <= hdr->size)
			memcpy(&time, (const unsigned char *)hdr + off, 8);
	} else {
		struct perfctr_record r = { .sz = sizeof(r) };

		if (!perfctr_decoder__record(w->dec, hdr, &r) &&
		    (r.sample_id.present & PERF_SAMPLE_TIME))
			time = r.sample_id.time;
	}
	return time;
}

static uint64_t clock_tick(struct walk_clock *c, uint64_t time)
{
	if (!time && c->started)
		time = c->last;
	c->started = true;
	if (time > c->last)
		c->last = time;
	return time;
}

static int keep_side(struct walk_order *o, const struct perf_event_header *hdr,
		     uint64_t time, uint64_t cursor)
{
	size_t len = (hdr->size + 7u) & ~(size_t)7;

	if (o->nr_side == o->side_cap) {
		size_t cap = o->side_cap ? o->side_cap * 2 : 256;
		struct walk_side *n = realloc(o->side, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		o->side = n;
		o->side_cap = cap;
	}
	if (len > o->side_buf_cap - o->side_len) {
		size_t cap = o->side_buf_cap ? o->side_buf_cap : 16384;
		unsigned char *n;

		while (len > cap - o->side_len)
			cap *= 2;
		n = realloc(o->side_buf, cap);
		if (!n)
			return -ENOMEM;
		o->side_buf = n;
		o->side_buf_cap = cap;
	}
	memcpy(o->side_buf + o->side_len, hdr, hdr->size);
	o->side[o->nr_side].time = time;
	o->side[o->nr_side].cursor = cursor;
	o->side[o->nr_side].off = o->side_len;
	o->nr_side++;
	o->side_len += len;
	return 0;
}

static void count_lost(struct perfctr_reader *w, const struct perf_event_header *hdr)
{
	struct perfctr_record rec = { .sz = sizeof(rec) };
	int r;

	if (perfctr_decoder__record(w->dec, hdr, &rec))
		return;
	if (rec.type == PERF_RECORD_LOST) {
		w->stats.lost += rec.lost.lost;
		r = perfctr_decoder__find_attr(w->dec, hdr);
		if (r >= 0 && (size_t)r < w->nr_attrs)
			w->stats.lost_per_attr[r] += rec.lost.lost;
	} else if (rec.type == PERF_RECORD_LOST_SAMPLES) {
		w->stats.lost_samples += rec.lost_samples.lost;
	}
}

/* The first pass.  Return: 0, -ENOMEM, -EINVAL (a malformed record). */
static int scan(struct perfctr_reader *w, struct walk_order *o)
{
	const struct perf_event_header *hdr;
	struct walk_clock clock = { 0 };
	uint64_t cursor = 0, at, time;
	bool sorted = true;
	int r;

	for (;;) {
		at = cursor;
		r = perfctr_perfdata__next(w->pd, &cursor, &hdr);
		if (r <= 0)
			break;
		/* perf's own bookkeeping records carry nothing we use. */
		if (hdr->type >= PERF_RECORD_MAX)
			continue;
		time = clock_tick(&clock, record_time(w, hdr));
		switch (hdr->type) {
		case PERF_RECORD_SAMPLE:
			if (time >= clock.last_sample)
				clock.last_sample = time;
			else if (clock.last_sample - time > o->lateness)
				o->lateness = clock.last_sample - time;
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK:
			if (o->nr_side && time < o->side[o->nr_side - 1].time)
				sorted = false;
			if (keep_side(o, hdr, time, at))
				return -ENOMEM;
			break;
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
			count_lost(w, hdr);
			/* Handed over as side-band records too. */
			__attribute__((fallthrough));
		case PERF_RECORD_EXIT:
			if (!w->side_band)
				break;
			if (o->nr_side && time < o->side[o->nr_side - 1].time)
				sorted = false;
			if (keep_side(o, hdr, time, at))
				return -ENOMEM;
			break;
		default:
			break;
		}
	}
	if (r < 0)
		return r == -ENOMEM ? -ENOMEM : -EINVAL;
	if (!sorted)
		qsort(o->side, o->nr_side, sizeof(*o->side), side_cmp);
	return 0;
}

/* Side-band record @s changes the model of the recorded processes. */
static void apply_side(struct perfctr_reader *w, struct walk_order *o,
		       const struct walk_side *s)
{
	const struct perf_event_header *hdr = (const void *)(o->side_buf + s->off);
	struct perfctr_record rec = { .sz = sizeof(rec) };
	struct comm_slot *slot;

	if (perfctr_decoder__record(w->dec, hdr, &rec))
		return;
	switch (rec.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		/* Only code matters for symbols. */
		if (rec.misc & PERF_RECORD_MISC_MMAP_DATA)
			break;
		if ((rec.misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
		    PERF_RECORD_MISC_KERNEL)
			break;
		perfctr_symbols__add_map(w->syms, (pid_t)rec.mmap.pid,
					 rec.mmap.addr, rec.mmap.len,
					 rec.mmap.pgoff, rec.mmap.filename);
		rcache_clear(w);
		break;
	case PERF_RECORD_COMM:
		if (rec.misc & PERF_RECORD_MISC_COMM_EXEC) {
			perfctr_symbols__exec(w->syms, (pid_t)rec.comm.pid);
			rcache_clear(w);
		}
		set_comm(w, (int32_t)rec.comm.tid, rec.comm.comm);
		if (rec.comm.tid && (slot = comm_slot(w, (int32_t)rec.comm.tid, false)))
			slot->pid = (int32_t)rec.comm.pid;
		break;
	case PERF_RECORD_FORK: {
		const char *parent = get_comm(w, (int32_t)rec.task.ptid);

		if (parent && !get_comm(w, (int32_t)rec.task.tid)) {
			char copy[16];

			snprintf(copy, sizeof(copy), "%s", parent);
			set_comm(w, (int32_t)rec.task.tid, copy);
		}
		slot = rec.task.tid ? comm_slot(w, (int32_t)rec.task.tid, true) : NULL;
		if (slot) {
			slot->pid = (int32_t)rec.task.pid;
			slot->ppid = (int32_t)rec.task.ppid;
			slot->ptid = (int32_t)rec.task.ptid;
			slot->forked = true;
		}
		perfctr_symbols__fork(w->syms, (pid_t)rec.task.pid,
				      (pid_t)rec.task.ppid);
		rcache_clear(w);
		break;
	}
	default:
		break;
	}
}

/* Sample @hdr, ordered at (@time, @cursor): the side-band records before
 * it take effect, then it is decoded (@decoded: 1 when o->sample holds
 * @hdr decoded already, -1 when its decoding failed, 0 to decode it now)
 * and its frames resolved.  Return: 1, or 0 when it is undecodable. */
static int emit(struct perfctr_reader *w, struct walk_order *o,
		const struct perf_event_header *hdr, int decoded, uint64_t time,
		uint64_t cursor)
{
	struct perfctr_sample *sample = &o->sample;

	while (o->next_side < o->nr_side &&
	       key_before(o->side[o->next_side].time,
			  o->side[o->next_side].cursor, time, cursor))
		apply_side(w, o, &o->side[o->next_side++]);
	if (!decoded)
		decoded = perfctr_decoder__sample(w->dec, hdr, sample) ? -1 : 1;
	if (decoded < 0) {
		w->stats.bad_samples++;
		return 0;
	}
	w->stats.samples++;
	if (sample->attr_idx < w->nr_attrs)
		w->stats.samples_per_attr[sample->attr_idx]++;
	build_frames(w, sample, &o->ws);
	return 1;
}

static bool held_before(const struct walk_held *a, const struct walk_held *b)
{
	return key_before(a->time, a->cursor, b->time, b->cursor);
}

static int hold(struct walk_order *o, const struct perf_event_header *hdr,
		uint64_t time, uint64_t cursor)
{
	struct walk_held h = { time, cursor, malloc(hdr->size) };
	size_t i;

	if (!h.rec)
		return -ENOMEM;
	if (o->nr_held == o->held_cap) {
		size_t cap = o->held_cap ? o->held_cap * 2 : 1024;
		struct walk_held *n = realloc(o->held, cap * sizeof(*n));

		if (!n) {
			free(h.rec);
			return -ENOMEM;
		}
		o->held = n;
		o->held_cap = cap;
	}
	memcpy(h.rec, hdr, hdr->size);
	for (i = o->nr_held++; i; i = (i - 1) / 2) {
		if (!held_before(&h, &o->held[(i - 1) / 2]))
			break;
		o->held[i] = o->held[(i - 1) / 2];
	}
	o->held[i] = h;
	return 0;
}

/* Hand over the oldest held sample: emit()'s return.  Its record stays
 * in w->handed until the next call, as the sample points into it. */
static int emit_held(struct perfctr_reader *w, struct walk_order *o)
{
	struct walk_held top = o->held[0], last = o->held[--o->nr_held];
	size_t i = 0, child;

	while ((child = 2 * i + 1) < o->nr_held) {
		if (child + 1 < o->nr_held &&
		    held_before(&o->held[child + 1], &o->held[child]))
			child++;
		if (!held_before(&o->held[child], &last))
			break;
		o->held[i] = o->held[child];
		i = child;
	}
	if (o->nr_held)
		o->held[i] = last;
	w->handed = top.rec;
	return emit(w, o, top.rec, 0, top.time, top.cursor);
}

static void order_free(struct walk_order *o)
{
	size_t i;

	if (!o)
		return;
	for (i = 0; i < o->nr_held; i++)
		free(o->held[i].rec);
	free(o->held);
	free(o->side);
	free(o->side_buf);
	free(o);
}

/* With opts.side_band: does a side-band record come before the sample at
 * (@time, @cursor)?  Then it is handed over first. */
static bool side_first(const struct perfctr_reader *w, const struct walk_order *o,
		       uint64_t time, uint64_t cursor)
{
	return w->side_band && o->next_side < o->nr_side &&
	       key_before(o->side[o->next_side].time,
			  o->side[o->next_side].cursor, time, cursor);
}

/* The next side-band record takes effect and is handed over: 2, or 0
 * when it cannot be decoded (it is skipped). */
static int hand_side(struct perfctr_reader *w, struct walk_order *o)
{
	const struct walk_side *side = &o->side[o->next_side++];
	const struct perf_event_header *hdr =
		(const void *)(o->side_buf + side->off);

	apply_side(w, o, side);
	memset(&o->side_rec, 0, sizeof(o->side_rec));
	o->side_rec.sz = sizeof(o->side_rec);
	return perfctr_decoder__record(w->dec, hdr, &o->side_rec) ? 0 : 2;
}

/*
 * The second pass, one sample per call: a sample read is handed over at
 * once when nothing older can still come, otherwise held; held samples go
 * out, oldest first, as soon as they are ripe; at the end of the file the
 * rest go out, then the side-band records after the last sample apply.
 * With opts.side_band the side-band records come out too, each when the
 * sample after it would.
 * Return: 1 (o->sample and o->ws hold the sample), 2 (o->side_rec holds a
 * side-band record), 0 at the end, -ENOMEM, -EBADMSG, or -errno of the
 * file.
 */
static int replay_next(struct perfctr_reader *w, struct walk_order *o)
{
	const struct perf_event_header *hdr;
	uint64_t at, time;
	int r, decoded;

	while (w->state == WALK_READING) {
		if (o->nr_held && o->held[0].time <= o->ripe) {
			if (side_first(w, o, o->held[0].time, o->held[0].cursor)) {
				if (hand_side(w, o))
					return 2;
				continue;
			}
			if (emit_held(w, o))
				return 1;
			free(w->handed);
			w->handed = NULL;
			continue;
		}
		at = o->cursor;
		r = perfctr_perfdata__next(w->pd, &o->cursor, &hdr);
		if (r < 0)
			return r == -ENOMEM ? -ENOMEM :
			       r == -EINVAL ? -EBADMSG : r;
		if (!r) {
			w->state = WALK_DRAINING;
			break;
		}
		if (hdr->type >= PERF_RECORD_MAX)
			continue;
		w->stats.records++;
		if (hdr->type != PERF_RECORD_SAMPLE) {
			clock_tick(&o->clock, record_time(w, hdr));
			continue;
		}
		/* Decoded once, for its time and to hand it over; a decoded
		 * sample's time is the one record_time() reads. */
		decoded = perfctr_decoder__sample(w->dec, hdr, &o->sample) ? -1 : 1;
		if (decoded > 0)
			time = o->sample.type & PERF_SAMPLE_TIME ? o->sample.time : 0;
		else
			time = record_time(w, hdr);
		time = clock_tick(&o->clock, time);
		if (time > o->clock.last_sample)
			o->clock.last_sample = time;
		/* Every sample still unread is at least this old. */
		o->ripe = o->clock.last_sample >= o->lateness ?
			  o->clock.last_sample - o->lateness : 0;
		if (!o->nr_held && time <= o->ripe &&
		    !side_first(w, o, time, at)) {
			if (emit(w, o, hdr, decoded, time, at))
				return 1;
		} else if (hold(o, hdr, time, at)) {
			return -ENOMEM;
		}
	}
	while (w->state == WALK_DRAINING) {
		if (o->nr_held &&
		    side_first(w, o, o->held[0].time, o->held[0].cursor)) {
			if (hand_side(w, o))
				return 2;
			continue;
		}
		if (o->nr_held) {
			if (emit_held(w, o))
				return 1;
			free(w->handed);
			w->handed = NULL;
			continue;
		}
		if (w->side_band && o->next_side < o->nr_side) {
			if (hand_side(w, o))
				return 2;
			continue;
		}
		while (o->next_side < o->nr_side)
			apply_side(w, o, &o->side[o->next_side++]);
		w->state = WALK_DONE;
	}
	return 0;
}

int perfctr_reader__next(struct perfctr_reader *w,
			 struct perfctr_reader_sample *out)
{
	struct perfctr_reader_sample s, *d;
	struct walk_order *o;
	size_t sz;
	int r;

	if (!w || !out || out->sz < offsetof(struct perfctr_reader_sample, nr_frames) +
				    sizeof(size_t))
		return pc_err(EINVAL);
	if (w->error)
		return pc_err(w->error);
	if (w->handed) {
		free(w->handed);
		w->handed = NULL;
	}
	o = w->order;
	r = replay_next(w, o);
	if (r < 0) {
		w->error = -r;
		return pc_err(-r);
	}
	if (!r)
		return 0;
	/* Filled in place when the caller's struct is whole (a copy of it
	 * for every sample was a tenth of a flat report's reading). */
	sz = out->sz;
	d = sz >= sizeof(s) ? out : &s;
	memset(d, 0, sizeof(s));
	d->sz = sz;
	if (r == 2) {
		const struct perfctr_sample_id *id = &o->side_rec.sample_id;

		d->record = &o->side_rec;
		d->event_idx = o->side_rec.attr_idx;
		d->event = d->event_idx < w->nr_attrs ? w->names[d->event_idx] : "?";
		d->pid = id->present & PERF_SAMPLE_TID ? (pid_t)id->pid : -1;
		d->tid = id->present & PERF_SAMPLE_TID ? (pid_t)id->tid : -1;
		d->comm = d->tid >= 0 ? get_comm(w, (int32_t)d->tid) : NULL;
	} else {
		d->sample = &o->sample;
		d->event_idx = o->sample.attr_idx;
		d->event = o->sample.attr_idx < w->nr_attrs ?
			   w->names[o->sample.attr_idx] : "?";
		d->comm = get_comm(w, (int32_t)o->sample.tid);
		d->pid = (pid_t)o->sample.pid;
		d->tid = (pid_t)o->sample.tid;
		d->kernel = o->ws.kernel;
		d->frames = o->ws.frames;
		d->ips = o->ws.ips;
		d->nr_frames = o->ws.nr_frames;
	}
	if (d != out)
		memcpy(out, &s, sz);
	return 1;
}

/* ---- the reader object ---- */

struct perfctr_reader *perfctr_reader__open(const char *path,
					    const struct perfctr_reader_opts *opts)
{
	PERFCTR_OPTS(perfctr_symbols_opts, sopts);
	struct perfctr_reader *w;
	size_t i;
	int err;

	if (!path || !pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->callchain = PC_OPTS_GET(opts, callchain, false);
	w->dso_only = PC_OPTS_GET(opts, dso_only, false);
	w->side_band = PC_OPTS_GET(opts, side_band, false);
	sopts.kallsyms = PC_OPTS_GET(opts, kallsyms, NULL);
	sopts.no_demangle = PC_OPTS_GET(opts, no_demangle, false);
	sopts.root = PC_OPTS_GET(opts, root, NULL);
	w->pd = perfctr_perfdata__open(path, NULL);
	if (!w->pd) {
		err = errno;
		goto fail;
	}
	w->dec = perfctr_perfdata__decoder(w->pd);
	w->nr_attrs = perfctr_perfdata__nr_attrs(w->pd);
	if (!w->dec) {
		err = ENODATA;
		goto fail;
	}
	/* What the symbols need to know of the recorded machine: whether
	 * our vDSO is the one it had. */
	sopts.osrelease = perfctr_perfdata__string(w->pd, PERFCTR_FEAT_OSRELEASE);
	w->syms = PC_OPTS_GET(opts, symbols, NULL);
	if (w->syms) {
		pc_symbols__forget_processes(w->syms);
		w->shared_syms = true;
	} else {
		w->syms = perfctr_symbols__new(&sopts);
	}
	for (i = 0; w->syms && i < perfctr_perfdata__nr_build_ids(w->pd); i++) {
		struct perfctr_build_id bid;

		if (!perfctr_perfdata__build_id(w->pd, i, &bid) && bid.size &&
		    bid.filename)
			perfctr_symbols__set_build_id(w->syms, bid.filename,
						      bid.id, bid.size);
	}
	w->names = calloc(w->nr_attrs + 1, sizeof(*w->names));
	w->stats.samples_per_attr = calloc(w->nr_attrs + 1, sizeof(uint64_t));
	w->stats.lost_per_attr = calloc(w->nr_attrs + 1, sizeof(uint64_t));
	w->time_off = calloc(w->nr_attrs + 1, sizeof(*w->time_off));
	w->rcache = calloc(RCACHE_SIZE, sizeof(*w->rcache));	/* optional */
	w->order = calloc(1, sizeof(*w->order));
	err = ENOMEM;
	if (!w->syms || !w->names || !w->stats.samples_per_attr ||
	    !w->stats.lost_per_attr || !w->time_off || !w->order)
		goto fail;
	for (i = 0; i < w->nr_attrs; i++) {
		const char *name = perfctr_perfdata__attr_name(w->pd, i);

		w->names[i] = name ? strdup(name) :
			      attr_fallback_name(perfctr_perfdata__attr(w->pd, i));
		if (!w->names[i])
			goto fail;
		w->time_off[i] = time_offset(perfctr_perfdata__attr(w->pd, i));
	}
	w->order->sample.sz = sizeof(w->order->sample);
	err = -scan(w, w->order);
	if (err) {
		err = err == ENOMEM ? ENOMEM : EBADMSG;
		goto fail;
	}
	return w;
fail:
	perfctr_reader__close(w);
	errno = err;
	return NULL;
}

void perfctr_reader__close(struct perfctr_reader *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; w->names && i < w->nr_attrs; i++)
		free(w->names[i]);
	free(w->names);
	free(w->time_off);
	free(w->stats.samples_per_attr);
	free(w->stats.lost_per_attr);
	free(w->comms);
	free(w->rcache);
	free(w->handed);
	order_free(w->order);
	pc_unwinder__delete(w->unwinder);
	if (!w->shared_syms)
		perfctr_symbols__delete(w->syms);
	perfctr_perfdata__close(w->pd);
	free(w);
}

size_t perfctr_reader__nr_events(const struct perfctr_reader *w)
{
	return w ? w->nr_attrs : 0;
}

const char *perfctr_reader__event_name(const struct perfctr_reader *w,
				       size_t idx)
{
	return w && idx < w->nr_attrs ? w->names[idx] : NULL;
}

const struct perf_event_attr *
perfctr_reader__event_attr(const struct perfctr_reader *w, size_t idx)
{
	return w && idx < w->nr_attrs ? perfctr_perfdata__attr(w->pd, idx) : NULL;
}

int perfctr_reader__stats(const struct perfctr_reader *w, size_t idx,
			  struct perfctr_reader_stats *stats)
{
	struct perfctr_reader_stats st;

	if (!w || !stats || (idx != SIZE_MAX && idx >= w->nr_attrs))
		return pc_err(EINVAL);
	memset(&st, 0, sizeof(st));
	st.sz = stats->sz;
	if (idx == SIZE_MAX) {
		st.records = w->stats.records;
		st.samples = w->stats.samples;
		st.bad_samples = w->stats.bad_samples;
		st.lost = w->stats.lost;
		st.lost_samples = w->stats.lost_samples;
		st.unwound = w->stats.unwound;
		memcpy(st.truncated, w->stats.truncated, sizeof(st.truncated));
	} else {
		st.samples = w->stats.samples_per_attr[idx];
		st.lost = w->stats.lost_per_attr[idx];
	}
	memcpy(stats, &st, stats->sz < sizeof(st) ? stats->sz : sizeof(st));
	return 0;
}

struct perfctr_perfdata *perfctr_reader__perfdata(struct perfctr_reader *w)
{
	return w ? w->pd : NULL;
}

struct perfctr_symbols *perfctr_reader__symbols(struct perfctr_reader *w)
{
	return w ? w->syms : NULL;
}

const char *perfctr_unwind_stop_str(int stop)
{
	static const char *const names[PERFCTR_UNWIND_NR_STOPS] = {
		[PERFCTR_UNWIND_STACK] = "stack copy too small",
		[PERFCTR_UNWIND_NO_MAP] = "address in no mapped file",
		[PERFCTR_UNWIND_NO_CFI] = "no CFI for the code",
		[PERFCTR_UNWIND_DEPTH] = "too many frames",
		[PERFCTR_UNWIND_UNSUPPORTED] = "not unwound (no libdw, 32-bit "
					       "task or unknown architecture)",
	};

	return stop >= 0 && stop < PERFCTR_UNWIND_NR_STOPS ? names[stop] : NULL;
}

int perfctr_reader__thread(struct perfctr_reader *w, pid_t tid,
			   struct perfctr_reader_thread *out)
{
	struct perfctr_reader_thread t;
	const struct comm_slot *slot;

	if (!w || !out || out->sz < offsetof(struct perfctr_reader_thread, comm) +
				    sizeof(t.comm))
		return pc_err(EINVAL);
	memset(&t, 0, sizeof(t));
	t.sz = out->sz;
	t.pid = t.ppid = t.ptid = -1;
	if (tid == 0) {
		t.pid = 0;
		t.comm = get_comm(w, 0);
	} else {
		slot = comm_slot(w, (int32_t)tid, false);
		if (!slot)
			return pc_err(ENOENT);
		if (slot->pid)
			t.pid = slot->pid;
		if (slot->forked) {
			t.ppid = slot->ppid;
			t.ptid = slot->ptid;
		}
		t.comm = slot->comm[0] ? slot->comm : NULL;
	}
	memcpy(out, &t, out->sz < sizeof(t) ? out->sz : sizeof(t));
	return 0;
}
