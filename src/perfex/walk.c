// SPDX-License-Identifier: GPL-2.0
/* The sample walk of `perfex report` and `perfex script` (see walk.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfex.h"
#include "walk.h"

struct comm_slot {
	int32_t tid;		/* 0: empty (tid 0 is the idle task: kept apart) */
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

struct walk {
	struct walk_opts opts;
	struct rcache_slot *rcache;
	struct perfctr_perfdata *pd;
	const struct perfctr_decoder *dec;
	struct perfctr_symbols *syms;
	struct walk_stats stats;
	char **names;		/* per attr */
	size_t nr_attrs;

	struct comm_slot *comms;
	size_t comm_cap, nr_comms;
	char idle_comm[16];
};

static uint64_t tid_hash(int32_t tid)
{
	return (uint64_t)(uint32_t)tid * 0x9E3779B97F4A7C15ULL >> 17;
}

static struct comm_slot *comm_slot(struct walk *w, int32_t tid, bool create)
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

static void set_comm(struct walk *w, int32_t tid, const char *comm)
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

static const char *get_comm(struct walk *w, int32_t tid)
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

struct walk *walk_open(const struct walk_opts *opts, int *exit_code)
{
	PERFCTR_OPTS(perfctr_symbols_opts, sopts, .kallsyms = opts->kallsyms,
		     .no_demangle = opts->no_demangle);
	struct walk *w = calloc(1, sizeof(*w));
	size_t i;

	*exit_code = PERFEX_EXIT_INTERNAL;
	if (!w)
		return NULL;
	w->opts = *opts;
	w->pd = perfctr_perfdata__open(opts->input, NULL);
	if (!w->pd) {
		int err = errno;

		*exit_code = PERFEX_EXIT_IO;
		if (err == EINVAL)
			perfex_error("'%s' is not a perf.data file (or it is damaged)",
				     opts->input);
		else if (err == EOPNOTSUPP)
			perfex_error("cannot read '%s': pipe-mode or foreign-endian perf.data is not supported",
				     opts->input);
		else
			perfex_error("cannot open '%s': %s", opts->input,
				     strerror(err));
		if (err == ENOENT)
			perfex_hint("record one with 'perfex record -- COMMAND', or name it with -i");
		free(w);
		return NULL;
	}
	w->dec = perfctr_perfdata__decoder(w->pd);
	w->nr_attrs = perfctr_perfdata__nr_attrs(w->pd);
	/* What the symbols need to know of the recorded machine: whether
	 * our vDSO is the one it had. */
	sopts.osrelease = perfctr_perfdata__string(w->pd, PERFCTR_FEAT_OSRELEASE);
	w->syms = perfctr_symbols__new(&sopts);
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
	w->rcache = calloc(RCACHE_SIZE, sizeof(*w->rcache));	/* optional */
	if (!w->dec || !w->syms || !w->names || !w->stats.samples_per_attr ||
	    !w->stats.lost_per_attr) {
		perfex_error("cannot read '%s': %s", opts->input,
			     w->dec ? strerror(ENOMEM) : "no events in the file");
		*exit_code = w->dec ? PERFEX_EXIT_INTERNAL : PERFEX_EXIT_IO;
		walk_close(w);
		return NULL;
	}
	for (i = 0; i < w->nr_attrs; i++) {
		const char *name = perfctr_perfdata__attr_name(w->pd, i);

		w->names[i] = name ? strdup(name) :
			      attr_fallback_name(perfctr_perfdata__attr(w->pd, i));
		if (!w->names[i]) {
			perfex_error("out of memory");
			walk_close(w);
			return NULL;
		}
	}
	*exit_code = 0;
	return w;
}

void walk_close(struct walk *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; w->names && i < w->nr_attrs; i++)
		free(w->names[i]);
	free(w->names);
	free(w->stats.samples_per_attr);
	free(w->stats.lost_per_attr);
	free(w->comms);
	free(w->rcache);
	perfctr_symbols__delete(w->syms);
	perfctr_perfdata__close(w->pd);
	free(w);
}

size_t walk_nr_attrs(const struct walk *w) { return w->nr_attrs; }
const char *walk_attr_name(const struct walk *w, size_t idx) { return w->names[idx]; }
const struct walk_stats *walk_stats(const struct walk *w) { return &w->stats; }
struct perfctr_perfdata *walk_file(struct walk *w) { return w->pd; }
struct perfctr_symbols *walk_symbols(struct walk *w) { return w->syms; }

const struct perf_event_attr *walk_attr(const struct walk *w, size_t idx)
{
	return perfctr_perfdata__attr(w->pd, idx);
}

static void resolve(struct walk *w, pid_t pid, uint64_t ip, bool kernel,
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
				 w->opts.symbols ? 0 : PERFCTR_RESOLVE_DSO_ONLY,
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

static void rcache_clear(struct walk *w)
{
	if (w->rcache)
		memset(w->rcache, 0, RCACHE_SIZE * sizeof(*w->rcache));
}

static void build_frames(struct walk *w, const struct perfctr_sample *s,
			 struct walk_sample *ws)
{
	uint16_t cpumode = s->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool kernel = cpumode == PERF_RECORD_MISC_KERNEL;
	uint64_t i;

	ws->kernel = kernel;
	ws->nr_frames = 0;
	if (w->opts.callchain && (s->type & PERF_SAMPLE_CALLCHAIN) &&
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
			/* Callers: a return address points after the call;
			 * the call itself is one byte before. */
			resolve(w, s->pid, ws->nr_frames ? ip - 1 : ip,
				ctx_kernel, &ws->frames[ws->nr_frames]);
			if (ws->nr_frames)
				ws->frames[ws->nr_frames].addr++;
			ws->nr_frames++;
		}
	}
	if (!ws->nr_frames) {
		resolve(w, s->pid, s->ip, kernel, &ws->frames[0]);
		ws->nr_frames = 1;
	}
}

/* Where a record is, and when it happened, for the time-ordered pass. */
struct walk_ev {
	uint64_t time;
	uint64_t cursor;
};

static int ev_cmp(const void *a, const void *b)
{
	const struct walk_ev *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->cursor < y->cursor ? -1 : x->cursor > y->cursor;
}

static uint64_t hdr_time(struct walk *w, const struct perf_event_header *hdr)
{
	if (hdr->type == PERF_RECORD_SAMPLE) {
		struct perfctr_sample s = { .sz = sizeof(s) };

		if (!perfctr_decoder__sample(w->dec, hdr, &s) &&
		    (s.type & PERF_SAMPLE_TIME))
			return s.time;
	} else {
		struct perfctr_record r = { .sz = sizeof(r) };

		if (!perfctr_decoder__record(w->dec, hdr, &r) &&
		    (r.sample_id.present & PERF_SAMPLE_TIME))
			return r.sample_id.time;
	}
	return 0;
}

/*
 * Records come ring by ring, so a sample on one CPU may precede in the
 * file the MMAP2 (or COMM) that another CPU's ring saw first.  Like perf,
 * we process records in time order: a first pass notes each record's time
 * and place, and sorts only when the file is out of order.
 */
static int index_records(struct walk *w, struct walk_ev **out, size_t *nr)
{
	const struct perf_event_header *hdr;
	struct walk_ev *evs = NULL;
	size_t n = 0, cap = 0;
	uint64_t cursor = 0, at, last = 0;
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
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			struct walk_ev *ne = realloc(evs, ncap * sizeof(*ne));

			if (!ne) {
				free(evs);
				return -ENOMEM;
			}
			evs = ne;
			cap = ncap;
		}
		evs[n].time = hdr_time(w, hdr);
		evs[n].cursor = at;
		/* Untimed records (synthesised ones) keep their place. */
		if (!evs[n].time && n)
			evs[n].time = last;
		if (evs[n].time < last)
			sorted = false;
		else
			last = evs[n].time;
		n++;
	}
	if (r < 0) {
		free(evs);
		return -EINVAL;
	}
	if (!sorted)
		qsort(evs, n, sizeof(*evs), ev_cmp);
	*out = evs;
	*nr = n;
	return 0;
}

int walk_run(struct walk *w, walk_cb_t cb, void *ctx)
{
	const struct perf_event_header *hdr;
	struct perfctr_sample sample = { .sz = sizeof(sample) };
	struct perfctr_record rec = { .sz = sizeof(rec) };
	struct walk_sample *ws;
	struct walk_ev *evs = NULL;
	size_t nr = 0, i;
	uint64_t cursor = 0;
	int r, ret = 0;

	r = index_records(w, &evs, &nr);
	if (r == -ENOMEM) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	if (r < 0) {
		perfex_error("'%s' is damaged: a record of the data section makes no sense",
			     w->opts.input);
		return PERFEX_EXIT_IO;
	}
	ws = malloc(sizeof(*ws));
	if (!ws) {
		free(evs);
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	for (i = 0; i < nr; i++) {
		cursor = evs[i].cursor;
		if (perfctr_perfdata__next(w->pd, &cursor, &hdr) <= 0)
			continue;
		w->stats.records++;
		if (hdr->type == PERF_RECORD_SAMPLE) {
			if (perfctr_decoder__sample(w->dec, hdr, &sample)) {
				w->stats.bad_samples++;
				continue;
			}
			w->stats.samples++;
			if (sample.attr_idx < w->nr_attrs)
				w->stats.samples_per_attr[sample.attr_idx]++;
			if (!cb)
				continue;
			ws->sample = &sample;
			ws->attr_idx = sample.attr_idx;
			ws->event = sample.attr_idx < w->nr_attrs ?
				    w->names[sample.attr_idx] : "?";
			ws->comm = get_comm(w, (int32_t)sample.tid);
			build_frames(w, &sample, ws);
			ret = cb(w, ws, ctx);
			if (ret)
				break;
			continue;
		}
		if (perfctr_decoder__record(w->dec, hdr, &rec))
			continue;
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
			break;
		case PERF_RECORD_FORK: {
			const char *parent = get_comm(w, (int32_t)rec.task.ptid);

			if (parent && !get_comm(w, (int32_t)rec.task.tid)) {
				char copy[16];

				snprintf(copy, sizeof(copy), "%s", parent);
				set_comm(w, (int32_t)rec.task.tid, copy);
			}
			perfctr_symbols__fork(w->syms, (pid_t)rec.task.pid,
					      (pid_t)rec.task.ppid);
			rcache_clear(w);
			break;
		}
		case PERF_RECORD_LOST:
			w->stats.lost += rec.lost.lost;
			r = perfctr_decoder__find_attr(w->dec, hdr);
			if (r >= 0 && (size_t)r < w->nr_attrs)
				w->stats.lost_per_attr[r] += rec.lost.lost;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			w->stats.lost_samples += rec.lost_samples.lost;
			break;
		default:
			break;
		}
	}
	free(ws);
	free(evs);
	return ret;
}
