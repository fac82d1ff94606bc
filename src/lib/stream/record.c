// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Typed records: decoding of PERF_RECORD_SAMPLE (every sample_type bit,
 * in the order the kernel writes them) and of the side-band records with
 * their sample_id_all trailers.
 *
 * Every read goes through a cursor bounded by hdr->size; a field that
 * would cross the end makes the whole record -EINVAL.  Counts taken from
 * the record (callchain nr, branch nr, sizes) are checked by division
 * against the bytes left, so no multiplication can overflow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "stream/stream.h"

/* Newer than some uapi headers. */
#define SAMPLE_BRANCH_COUNTERS	(1ULL << 19)

struct cursor {
	const unsigned char *p;
	const unsigned char *end;
};

static bool cur_u64(struct cursor *c, uint64_t *v)
{
	if ((size_t)(c->end - c->p) < 8)
		return false;
	memcpy(v, c->p, 8);
	c->p += 8;
	return true;
}

static bool cur_u32x2(struct cursor *c, uint32_t *a, uint32_t *b)
{
	if ((size_t)(c->end - c->p) < 8)
		return false;
	memcpy(a, c->p, 4);
	memcpy(b, c->p + 4, 4);
	c->p += 8;
	return true;
}

/* Take @n words; returns their address or NULL. */
static const uint64_t *cur_words(struct cursor *c, uint64_t n)
{
	const uint64_t *w = (const void *)c->p;

	if (n > (uint64_t)(c->end - c->p) / 8)
		return NULL;
	c->p += n * 8;
	return w;
}

/* Take @len bytes padded to 8; returns their address or NULL. */
static const void *cur_bytes(struct cursor *c, uint64_t len)
{
	const void *b = c->p;
	uint64_t padded;

	if (len > (uint64_t)(c->end - c->p))
		return NULL;
	padded = (len + 7) & ~7ULL;
	if (padded > (uint64_t)(c->end - c->p))
		return NULL;
	c->p += padded;
	return b;
}

/*
 * Clearing a decode result: a memset of a few hundred bytes of known size
 * is inlined as `rep stos`, whose start-up cost on the build VM's CPUs
 * (70-90 ns) is most of a decode; the library's memset is 4x faster.  A
 * volatile pointer keeps the compiler from inlining it.
 */
static void *(*volatile clear_fn)(void *, int, size_t) = memset;

static void clear(void *p, size_t bytes)
{
	clear_fn(p, 0, bytes);
}

static bool aligned(const void *p)
{
	return !((uintptr_t)p & 7);
}

static int parse_read_format(struct cursor *c, uint64_t format,
			     struct perfctr_read_format *rf)
{
	uint64_t te = !!(format & PERF_FORMAT_TOTAL_TIME_ENABLED);
	uint64_t tr = !!(format & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t per = 1 + !!(format & PERF_FORMAT_ID) + !!(format & PERF_FORMAT_LOST);

	memset(rf, 0, sizeof(*rf));
	rf->format = format;
	if (format & PERF_FORMAT_GROUP) {
		if (!cur_u64(c, &rf->nr))
			return -EINVAL;
		if (te && !cur_u64(c, &rf->time_enabled))
			return -EINVAL;
		if (tr && !cur_u64(c, &rf->time_running))
			return -EINVAL;
		if (rf->nr > (uint64_t)(c->end - c->p) / 8 / per)
			return -EINVAL;
		rf->values = cur_words(c, rf->nr * per);
		return rf->values ? 0 : -EINVAL;
	}
	/* value, [enabled], [running], [id], [lost]: values points at value
	 * and perfctr_read_format__value() skips the times. */
	rf->nr = 1;
	rf->values = cur_words(c, 1 + te + tr + per - 1);
	if (!rf->values)
		return -EINVAL;
	if (te)
		memcpy(&rf->time_enabled, &rf->values[1], 8);
	if (tr)
		memcpy(&rf->time_running, &rf->values[1 + te], 8);
	return 0;
}

int perfctr_read_format__value(const struct perfctr_read_format *rf,
			       uint64_t idx, struct perfctr_read_value *out)
{
	uint64_t f = rf->format;
	uint64_t has_id = !!(f & PERF_FORMAT_ID);
	uint64_t has_lost = !!(f & PERF_FORMAT_LOST);
	const uint64_t *v;

	if (!rf->values || idx >= rf->nr)
		return pc_err(EINVAL);
	memset(out, 0, sizeof(*out));
	if (f & PERF_FORMAT_GROUP) {
		v = rf->values + idx * (1 + has_id + has_lost);
		out->value = v[0];
		v++;
	} else {
		out->value = rf->values[0];
		v = rf->values + 1 + !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		    !!(f & PERF_FORMAT_TOTAL_TIME_RUNNING);
	}
	if (has_id)
		out->id = *v++;
	if (has_lost)
		out->lost = *v;
	return 0;
}

static int parse_regs(struct cursor *c, uint64_t mask, struct perfctr_regs *r)
{
	r->mask = mask;
	if (!cur_u64(c, &r->abi))
		return -EINVAL;
	r->nr = 0;
	r->regs = NULL;
	if (r->abi) {
		r->nr = (uint64_t)__builtin_popcountll(mask);
		r->regs = cur_words(c, r->nr);
		if (!r->regs)
			return -EINVAL;
	}
	return 0;
}

static int check_header(const struct perf_event_header *hdr)
{
	if (!hdr || !aligned(hdr) || hdr->size < sizeof(*hdr) || hdr->size % 8)
		return -EINVAL;
	return 0;
}

/* PERF_SAMPLE_RAW: u32 size, then data; the kernel pads size so that
 * the pair ends on an 8-byte boundary. */
static int parse_raw(struct cursor *c, struct perfctr_sample *sp)
{
	uint32_t size;

	if (c->end - c->p < 4)
		return -EINVAL;
	memcpy(&size, c->p, 4);
	if ((uint64_t)size + 4 > (uint64_t)(c->end - c->p))
		return -EINVAL;
	sp->raw_size = size;
	sp->raw = c->p + 4;
	if (!cur_bytes(c, (uint64_t)size + 4))
		return -EINVAL;
	return 0;
}

static int parse_branch_stack(struct cursor *c, uint64_t branch_sample_type,
			      struct perfctr_sample *sp)
{
	if (!cur_u64(c, &sp->branch_nr))
		return -EINVAL;
	if ((branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) &&
	    !cur_u64(c, &sp->branch_hw_idx))
		return -EINVAL;
	if (sp->branch_nr > (uint64_t)(c->end - c->p) / 24)
		return -EINVAL;
	sp->branches = (const void *)cur_words(c, sp->branch_nr * 3);
	if (!sp->branches)
		return -EINVAL;
	/* Per-branch event counters (6.8+): one word per branch. */
	if ((branch_sample_type & SAMPLE_BRANCH_COUNTERS) &&
	    !cur_words(c, sp->branch_nr))
		return -EINVAL;
	return 0;
}

static int parse_stack_user(struct cursor *c, struct perfctr_sample *sp)
{
	if (!cur_u64(c, &sp->stack_user_size) || sp->stack_user_size % 8)
		return -EINVAL;
	sp->stack_user = cur_bytes(c, sp->stack_user_size);
	if (!sp->stack_user)
		return -EINVAL;
	if (sp->stack_user_size) {
		if (!cur_u64(c, &sp->stack_user_dyn_size) ||
		    sp->stack_user_dyn_size > sp->stack_user_size)
			return -EINVAL;
	} else {
		sp->stack_user = NULL;
	}
	return 0;
}

/* PERF_SAMPLE_WEIGHT, or WEIGHT_STRUCT's three parts in one word. */
static int parse_weight(struct cursor *c, uint64_t sample_type,
			struct perfctr_sample *sp)
{
	uint64_t v;

	if (!cur_u64(c, &v))
		return -EINVAL;
	if (sample_type & PERF_SAMPLE_WEIGHT_STRUCT) {
		sp->weight_var1 = (uint32_t)v;
		sp->weight_var2 = (uint16_t)(v >> 32);
		sp->weight_var3 = (uint16_t)(v >> 48);
		sp->weight = sp->weight_var1;
	} else {
		sp->weight = v;
	}
	return 0;
}

static int parse_aux(struct cursor *c, struct perfctr_sample *sp)
{
	if (!cur_u64(c, &sp->aux_size))
		return -EINVAL;
	sp->aux = cur_bytes(c, sp->aux_size);
	if (!sp->aux)
		return -EINVAL;
	if (!sp->aux_size)
		sp->aux = NULL;
	return 0;
}

static int sample_parse(const struct perf_event_attr *attr,
			const struct perf_event_header *hdr,
			struct perfctr_sample *out)
{
	uint64_t t = attr->sample_type;
	struct cursor c;
	struct perfctr_sample local, *sp;
	size_t sz;

	if (check_header(hdr) || hdr->type != PERF_RECORD_SAMPLE)
		return -EINVAL;
	if (!out || out->sz < sizeof(size_t))
		return -EINVAL;
	/* Decode in place when the caller's struct is whole (the hot path:
	 * no copy); an older, smaller one goes through a full local copy. */
	sz = out->sz;
	sp = sz >= sizeof(local) ? out : &local;
	clear(sp, sizeof(*sp));
	sp->sz = sz;
	sp->type = t;
	sp->misc = hdr->misc;
	sp->branch_hw_idx = (uint64_t)-1;
	c.p = (const unsigned char *)(hdr + 1);
	c.end = (const unsigned char *)hdr + hdr->size;

	if ((t & PERF_SAMPLE_IDENTIFIER) && !cur_u64(&c, &sp->id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_IP) && !cur_u64(&c, &sp->ip))
		return -EINVAL;
	if ((t & PERF_SAMPLE_TID) && !cur_u32x2(&c, &sp->pid, &sp->tid))
		return -EINVAL;
	if ((t & PERF_SAMPLE_TIME) && !cur_u64(&c, &sp->time))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ADDR) && !cur_u64(&c, &sp->addr))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ID) && !cur_u64(&c, &sp->id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_STREAM_ID) && !cur_u64(&c, &sp->stream_id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_CPU) && !cur_u32x2(&c, &sp->cpu, &sp->res))
		return -EINVAL;
	if ((t & PERF_SAMPLE_PERIOD) && !cur_u64(&c, &sp->period))
		return -EINVAL;
	if ((t & PERF_SAMPLE_READ) &&
	    parse_read_format(&c, attr->read_format, &sp->read))
		return -EINVAL;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (!cur_u64(&c, &sp->callchain_nr))
			return -EINVAL;
		sp->callchain = cur_words(&c, sp->callchain_nr);
		if (!sp->callchain)
			return -EINVAL;
	}
	if ((t & PERF_SAMPLE_RAW) && parse_raw(&c, sp))
		return -EINVAL;
	if ((t & PERF_SAMPLE_BRANCH_STACK) &&
	    parse_branch_stack(&c, attr->branch_sample_type, sp))
		return -EINVAL;
	if ((t & PERF_SAMPLE_REGS_USER) &&
	    parse_regs(&c, attr->sample_regs_user, &sp->regs_user))
		return -EINVAL;
	if ((t & PERF_SAMPLE_STACK_USER) && parse_stack_user(&c, sp))
		return -EINVAL;
	if ((t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) &&
	    parse_weight(&c, t, sp))
		return -EINVAL;
	if ((t & PERF_SAMPLE_DATA_SRC) && !cur_u64(&c, &sp->data_src))
		return -EINVAL;
	if ((t & PERF_SAMPLE_TRANSACTION) && !cur_u64(&c, &sp->transaction))
		return -EINVAL;
	if ((t & PERF_SAMPLE_REGS_INTR) &&
	    parse_regs(&c, attr->sample_regs_intr, &sp->regs_intr))
		return -EINVAL;
	if ((t & PERF_SAMPLE_PHYS_ADDR) && !cur_u64(&c, &sp->phys_addr))
		return -EINVAL;
	if ((t & PERF_SAMPLE_CGROUP) && !cur_u64(&c, &sp->cgroup))
		return -EINVAL;
	if ((t & PERF_SAMPLE_DATA_PAGE_SIZE) && !cur_u64(&c, &sp->data_page_size))
		return -EINVAL;
	if ((t & PERF_SAMPLE_CODE_PAGE_SIZE) && !cur_u64(&c, &sp->code_page_size))
		return -EINVAL;
	if ((t & PERF_SAMPLE_AUX) && parse_aux(&c, sp))
		return -EINVAL;
	/* Trailing bytes are tolerated: a newer kernel may append. */
	if (sp == &local)
		memcpy(out, &local, sz);
	return 0;
}

int perfctr_sample__parse(const struct perf_event_attr *attr,
			  const struct perf_event_header *hdr,
			  struct perfctr_sample *out)
{
	int ret;

	if (!attr)
		return pc_err(EINVAL);
	ret = sample_parse(attr, hdr, out);
	return ret ? pc_err(-ret) : 0;
}

size_t perfctr_sample__fixed_size(const struct perf_event_attr *attr)
{
	static const uint64_t one_word = PERF_SAMPLE_IDENTIFIER |
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
		PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
		PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
		PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT |
		PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
		PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR |
		PERF_SAMPLE_AUX | PERF_SAMPLE_CGROUP |
		PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE;
	uint64_t t = attr->sample_type;
	size_t size = sizeof(struct perf_event_header);

	size += 8 * (size_t)__builtin_popcountll(t & one_word);
	if ((t & PERF_SAMPLE_WEIGHT_STRUCT) && !(t & PERF_SAMPLE_WEIGHT))
		size += 8;
	if (t & PERF_SAMPLE_RAW)
		size += 8;
	if (t & PERF_SAMPLE_READ) {
		uint64_t f = attr->read_format;
		size_t words = !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			       !!(f & PERF_FORMAT_TOTAL_TIME_RUNNING);

		if (f & PERF_FORMAT_GROUP)
			words += 1;
		else
			words += 1 + !!(f & PERF_FORMAT_ID) + !!(f & PERF_FORMAT_LOST);
		size += 8 * words;
	}
	return size;
}

/* The sample_id_all trailer: bits present and its size in bytes. */
static uint64_t id_bits(uint64_t t)
{
	return t & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
		    PERF_SAMPLE_IDENTIFIER);
}

static size_t trailer_size(const struct perf_event_attr *attr)
{
	if (!attr || !attr->sample_id_all)
		return 0;
	return 8 * (size_t)__builtin_popcountll(id_bits(attr->sample_type));
}

static int parse_trailer(const struct perf_event_attr *attr,
			 const unsigned char *p, const unsigned char *end,
			 struct perfctr_sample_id *sid)
{
	uint64_t t = attr->sample_type;
	struct cursor c = { p, end };

	memset(sid, 0, sizeof(*sid));
	sid->present = id_bits(t);
	if ((t & PERF_SAMPLE_TID) && !cur_u32x2(&c, &sid->pid, &sid->tid))
		return -EINVAL;
	if ((t & PERF_SAMPLE_TIME) && !cur_u64(&c, &sid->time))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ID) && !cur_u64(&c, &sid->id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_STREAM_ID) && !cur_u64(&c, &sid->stream_id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_CPU) && !cur_u32x2(&c, &sid->cpu, &sid->res))
		return -EINVAL;
	if ((t & PERF_SAMPLE_IDENTIFIER) && !cur_u64(&c, &sid->id))
		return -EINVAL;
	return 0;
}

/* A NUL-terminated string starting at @p, inside [p, end). */
static const char *take_string(struct cursor *c)
{
	const char *s = (const char *)c->p;
	const void *nul;

	if (c->p >= c->end)
		return NULL;
	nul = memchr(c->p, '\0', (size_t)(c->end - c->p));
	if (!nul)
		return NULL;
	c->p = c->end;		/* strings fill the rest of the body */
	return s;
}

/* MMAP and MMAP2: MMAP2 has device and inode, or a build id. */
static int parse_mmap(struct cursor *c, const struct perf_event_header *hdr,
		      struct perfctr_record *r)
{
	if (!cur_u32x2(c, &r->mmap.pid, &r->mmap.tid) ||
	    !cur_u64(c, &r->mmap.addr) || !cur_u64(c, &r->mmap.len) ||
	    !cur_u64(c, &r->mmap.pgoff))
		return -EINVAL;
	if (hdr->type == PERF_RECORD_MMAP2) {
		const unsigned char *u = c->p;

		if (!cur_words(c, 3))
			return -EINVAL;
		if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			r->mmap.build_id_size = u[0];
			if (r->mmap.build_id_size > 20)
				return -EINVAL;
			r->mmap.build_id = u + 4;
		} else {
			memcpy(&r->mmap.maj, u, 4);
			memcpy(&r->mmap.min, u + 4, 4);
			memcpy(&r->mmap.ino, u + 8, 8);
			memcpy(&r->mmap.ino_generation, u + 16, 8);
		}
		if (!cur_u32x2(c, &r->mmap.prot, &r->mmap.flags))
			return -EINVAL;
	}
	r->mmap.filename = take_string(c);
	if (!r->mmap.filename)
		return -EINVAL;
	return 0;
}

static int parse_namespaces(struct cursor *c, struct perfctr_record *r)
{
	if (!cur_u32x2(c, &r->namespaces.pid, &r->namespaces.tid) ||
	    !cur_u64(c, &r->namespaces.nr))
		return -EINVAL;
	if (r->namespaces.nr > (uint64_t)(c->end - c->p) / 16)
		return -EINVAL;
	r->namespaces.dev_ino = cur_words(c, r->namespaces.nr * 2);
	if (!r->namespaces.dev_ino)
		return -EINVAL;
	return 0;
}

static int parse_ksymbol(struct cursor *c, struct perfctr_record *r)
{
	uint64_t v;

	if (!cur_u64(c, &r->ksymbol.addr) || !cur_u64(c, &v))
		return -EINVAL;
	r->ksymbol.len = (uint32_t)v;
	r->ksymbol.ksym_type = (uint16_t)(v >> 32);
	r->ksymbol.flags = (uint16_t)(v >> 48);
	r->ksymbol.name = take_string(c);
	if (!r->ksymbol.name)
		return -EINVAL;
	return 0;
}

static int parse_bpf_event(struct cursor *c, struct perfctr_record *r)
{
	uint64_t v;

	if (!cur_u64(c, &v))
		return -EINVAL;
	r->bpf_event.bpf_type = (uint16_t)v;
	r->bpf_event.flags = (uint16_t)(v >> 16);
	r->bpf_event.id = (uint32_t)(v >> 32);
	r->bpf_event.tag = c->p;
	if (!cur_words(c, 1))
		return -EINVAL;
	return 0;
}

static int parse_text_poke(struct cursor *c, struct perfctr_record *r)
{
	if (!cur_u64(c, &r->text_poke.addr) || c->end - c->p < 4)
		return -EINVAL;
	memcpy(&r->text_poke.old_len, c->p, 2);
	memcpy(&r->text_poke.new_len, c->p + 2, 2);
	c->p += 4;
	if ((size_t)r->text_poke.old_len + r->text_poke.new_len >
	    (size_t)(c->end - c->p))
		return -EINVAL;
	r->text_poke.old_bytes = c->p;
	r->text_poke.new_bytes = c->p + r->text_poke.old_len;
	return 0;
}

/* The body of a record other than a sample, at @c, into @r. */
static int record_body_parse(const struct perf_event_attr *attr,
			     const struct perf_event_header *hdr,
			     struct cursor *c, struct perfctr_record *r)
{
	switch (hdr->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (parse_mmap(c, hdr, r))
			return -EINVAL;
		break;
	case PERF_RECORD_COMM:
		if (!cur_u32x2(c, &r->comm.pid, &r->comm.tid))
			return -EINVAL;
		r->comm.comm = take_string(c);
		if (!r->comm.comm)
			return -EINVAL;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (!cur_u32x2(c, &r->task.pid, &r->task.ppid) ||
		    !cur_u32x2(c, &r->task.tid, &r->task.ptid) ||
		    !cur_u64(c, &r->task.time))
			return -EINVAL;
		break;
	case PERF_RECORD_LOST:
		if (!cur_u64(c, &r->lost.id) || !cur_u64(c, &r->lost.lost))
			return -EINVAL;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (!cur_u64(c, &r->lost_samples.lost))
			return -EINVAL;
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (!cur_u64(c, &r->throttle.time) ||
		    !cur_u64(c, &r->throttle.id) ||
		    !cur_u64(c, &r->throttle.stream_id))
			return -EINVAL;
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (hdr->type == PERF_RECORD_SWITCH_CPU_WIDE &&
		    !cur_u32x2(c, &r->context_switch.next_prev_pid,
			       &r->context_switch.next_prev_tid))
			return -EINVAL;
		r->context_switch.out =
			!!(hdr->misc & PERF_RECORD_MISC_SWITCH_OUT);
		r->context_switch.preempt =
			!!(hdr->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		break;
	case PERF_RECORD_READ:
		if (!cur_u32x2(c, &r->read.pid, &r->read.tid) ||
		    parse_read_format(c, attr ? attr->read_format : 0,
				      &r->read.values))
			return -EINVAL;
		break;
	case PERF_RECORD_AUX:
		if (!cur_u64(c, &r->aux.aux_offset) ||
		    !cur_u64(c, &r->aux.aux_size) || !cur_u64(c, &r->aux.flags))
			return -EINVAL;
		break;
	case PERF_RECORD_ITRACE_START:
		if (!cur_u32x2(c, &r->itrace_start.pid, &r->itrace_start.tid))
			return -EINVAL;
		break;
	case PERF_RECORD_NAMESPACES:
		if (parse_namespaces(c, r))
			return -EINVAL;
		break;
	case PERF_RECORD_KSYMBOL:
		if (parse_ksymbol(c, r))
			return -EINVAL;
		break;
	case PERF_RECORD_BPF_EVENT:
		if (parse_bpf_event(c, r))
			return -EINVAL;
		break;
	case PERF_RECORD_CGROUP:
		if (!cur_u64(c, &r->cgroup.id))
			return -EINVAL;
		r->cgroup.path = take_string(c);
		if (!r->cgroup.path)
			return -EINVAL;
		break;
	case PERF_RECORD_TEXT_POKE:
		if (parse_text_poke(c, r))
			return -EINVAL;
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		if (!cur_u64(c, &r->aux_output_hw_id.hw_id))
			return -EINVAL;
		break;
	default:
		/* Unknown or user-space type: the header is all we know. */
		break;
	}
	return 0;
}

static int record_parse(const struct perf_event_attr *attr,
			const struct perf_event_header *hdr,
			struct perfctr_record *out)
{
	struct perfctr_record r;
	struct cursor c;
	size_t tsize;

	if (check_header(hdr) || hdr->type == PERF_RECORD_SAMPLE)
		return -EINVAL;
	if (!out || out->sz < sizeof(size_t))
		return -EINVAL;
	clear(&r, sizeof(r));
	r.sz = out->sz;
	r.type = hdr->type;
	r.misc = hdr->misc;
	r.size = hdr->size;
	c.p = (const unsigned char *)(hdr + 1);
	c.end = (const unsigned char *)hdr + hdr->size;

	/* The kernel's own records carry the trailer; perf's synthesised
	 * (user) types >= 64 do not. */
	tsize = hdr->type < 64 ? trailer_size(attr) : 0;
	if (tsize) {
		if ((size_t)(c.end - c.p) < tsize)
			return -EINVAL;
		c.end -= tsize;
		if (parse_trailer(attr, c.end, c.end + tsize, &r.sample_id))
			return -EINVAL;
	}

	if (record_body_parse(attr, hdr, &c, &r))
		return -EINVAL;
	memcpy(out, &r, out->sz < sizeof(r) ? out->sz : sizeof(r));
	return 0;
}

int perfctr_record__parse(const struct perf_event_attr *attr,
			  const struct perf_event_header *hdr,
			  struct perfctr_record *out)
{
	int ret = record_parse(attr, hdr, out);

	return ret ? pc_err(-ret) : 0;
}

const char *perfctr_record__type_name(uint32_t type)
{
	static const char *const names[] = {
		[PERF_RECORD_MMAP] = "MMAP",
		[PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM",
		[PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE",
		[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK",
		[PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE",
		[PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX",
		[PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES",
		[PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
		[PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	};
	static const char *const user[] = {
		"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA",
		"HEADER_BUILD_ID", "FINISHED_ROUND", "ID_INDEX",
		"AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR", "THREAD_MAP",
		"CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE",
		"TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT",
	};

	if (type < ARRAY_SIZE(names))
		return names[type];
	if (type >= 64 && type - 64 < ARRAY_SIZE(user))
		return user[type - 64];
	return NULL;
}

/* ---- decoder ---- */

struct dec_attr {
	struct perf_event_attr attr;
	uint64_t *ids;
	size_t nr_ids;
};

struct id_entry {
	uint64_t id;
	size_t attr_idx;
};

struct perfctr_decoder {
	struct dec_attr *attrs;
	size_t nr_attrs;
	struct id_entry *ids;	/* sorted by id */
	size_t nr_ids;
	/* Word positions of the id, common to every attr, or -1. */
	int id_pos;		/* in a sample, counted from after the header */
	int is_pos;		/* in a trailer, counted back from the end */
};

struct perfctr_decoder *perfctr_decoder__new(void)
{
	struct perfctr_decoder *dec = calloc(1, sizeof(*dec));

	if (!dec) {
		errno = ENOMEM;
		return NULL;
	}
	dec->id_pos = dec->is_pos = -1;
	return dec;
}

void perfctr_decoder__delete(struct perfctr_decoder *dec)
{
	if (!dec)
		return;
	for (size_t i = 0; i < dec->nr_attrs; i++)
		free(dec->attrs[i].ids);
	free(dec->attrs);
	free(dec->ids);
	free(dec);
}

/* Where the sample id is: word index after the header, or -1. */
static int sample_id_pos(uint64_t t)
{
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return __builtin_popcountll(t & (PERF_SAMPLE_IP | PERF_SAMPLE_TID |
					 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR));
}

/* Where the id is in a trailer: words back from the end (1 = last). */
static int trailer_id_pos(const struct perf_event_attr *a)
{
	uint64_t t = a->sample_type;

	if (!a->sample_id_all)
		return -1;
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return 1 + __builtin_popcountll(t & (PERF_SAMPLE_STREAM_ID |
					     PERF_SAMPLE_CPU));
}

static void recompute_pos(struct perfctr_decoder *dec)
{
	dec->id_pos = sample_id_pos(dec->attrs[0].attr.sample_type);
	dec->is_pos = trailer_id_pos(&dec->attrs[0].attr);
	for (size_t i = 1; i < dec->nr_attrs; i++) {
		if (sample_id_pos(dec->attrs[i].attr.sample_type) != dec->id_pos)
			dec->id_pos = -1;
		if (trailer_id_pos(&dec->attrs[i].attr) != dec->is_pos)
			dec->is_pos = -1;
	}
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int add_ids(struct perfctr_decoder *dec, size_t idx,
		   const uint64_t *ids, size_t nr)
{
	struct dec_attr *a = &dec->attrs[idx];
	uint64_t *na;
	struct id_entry *ne;

	if (!nr)
		return 0;
	if (!ids || nr > SIZE_MAX / sizeof(*ne) - dec->nr_ids)
		return -EINVAL;
	na = realloc(a->ids, (a->nr_ids + nr) * sizeof(*na));
	if (!na)
		return -ENOMEM;
	a->ids = na;
	ne = realloc(dec->ids, (dec->nr_ids + nr) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	dec->ids = ne;
	for (size_t i = 0; i < nr; i++) {
		a->ids[a->nr_ids++] = ids[i];
		dec->ids[dec->nr_ids].id = ids[i];
		dec->ids[dec->nr_ids].attr_idx = idx;
		dec->nr_ids++;
	}
	qsort(dec->ids, dec->nr_ids, sizeof(*dec->ids), cmp_id);
	return 0;
}

int perfctr_decoder__add_attr(struct perfctr_decoder *dec,
			      const struct perf_event_attr *attr,
			      const uint64_t *ids, size_t nr_ids)
{
	struct dec_attr *na;
	int ret;

	if (!dec || !attr)
		return pc_err(EINVAL);
	na = realloc(dec->attrs, (dec->nr_attrs + 1) * sizeof(*na));
	if (!na)
		return pc_err(ENOMEM);
	dec->attrs = na;
	memset(&na[dec->nr_attrs], 0, sizeof(*na));
	memcpy(&na[dec->nr_attrs].attr, attr,
	       attr->size && attr->size < sizeof(*attr) ? attr->size : sizeof(*attr));
	dec->nr_attrs++;
	ret = add_ids(dec, dec->nr_attrs - 1, ids, nr_ids);
	if (ret) {
		dec->nr_attrs--;
		return pc_err(-ret);
	}
	recompute_pos(dec);
	return (int)(dec->nr_attrs - 1);
}

int perfctr_decoder__add_ids(struct perfctr_decoder *dec, size_t idx,
			     const uint64_t *ids, size_t nr_ids)
{
	int ret;

	if (!dec || idx >= dec->nr_attrs)
		return pc_err(EINVAL);
	ret = add_ids(dec, idx, ids, nr_ids);
	return ret ? pc_err(-ret) : 0;
}

size_t perfctr_decoder__nr_attrs(const struct perfctr_decoder *dec)
{
	return dec ? dec->nr_attrs : 0;
}

const struct perf_event_attr *
perfctr_decoder__attr(const struct perfctr_decoder *dec, size_t idx)
{
	if (!dec || idx >= dec->nr_attrs)
		return NULL;
	return &dec->attrs[idx].attr;
}

static int lookup_id(const struct perfctr_decoder *dec, uint64_t id)
{
	size_t lo = 0, hi = dec->nr_ids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dec->ids[mid].id == id)
			return (int)dec->ids[mid].attr_idx;
		if (dec->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

static int find_attr(const struct perfctr_decoder *dec,
		     const struct perf_event_header *hdr)
{
	size_t words;
	uint64_t id;

	if (!dec || !dec->nr_attrs || check_header(hdr))
		return -EINVAL;
	if (dec->nr_attrs == 1)
		return 0;
	words = (hdr->size - sizeof(*hdr)) / 8;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		if (dec->id_pos < 0)
			return -ENOENT;
		if ((size_t)dec->id_pos >= words)
			return -EINVAL;
		memcpy(&id, (const uint64_t *)(hdr + 1) + dec->id_pos, 8);
	} else {
		if (hdr->type >= 64 || dec->is_pos < 0)
			return 0;
		if ((size_t)dec->is_pos > words)
			return -EINVAL;
		memcpy(&id, (const uint64_t *)(hdr + 1) + words - dec->is_pos, 8);
	}
	return lookup_id(dec, id);
}

int perfctr_decoder__find_attr(const struct perfctr_decoder *dec,
			       const struct perf_event_header *hdr)
{
	int ret = find_attr(dec, hdr);

	return ret < 0 ? pc_err(-ret) : ret;
}

int perfctr_decoder__sample(const struct perfctr_decoder *dec,
			    const struct perf_event_header *hdr,
			    struct perfctr_sample *out)
{
	const struct perf_event_attr *attr;
	int idx = find_attr(dec, hdr), ret;

	if (idx < 0)
		return pc_err(-idx);
	attr = &dec->attrs[idx].attr;
	ret = sample_parse(attr, hdr, out);
	if (ret)
		return pc_err(-ret);
	if (out->sz >= offsetof(struct perfctr_sample, period_from_attr) +
		       sizeof(out->period_from_attr)) {
		out->attr_idx = (size_t)idx;
		if (!(attr->sample_type & PERF_SAMPLE_PERIOD) && !attr->freq) {
			out->period = attr->sample_period;
			out->period_from_attr = true;
		}
	}
	return 0;
}

int perfctr_decoder__record(const struct perfctr_decoder *dec,
			    const struct perf_event_header *hdr,
			    struct perfctr_record *out)
{
	int idx = find_attr(dec, hdr), ret;

	if (idx == -EINVAL)
		return pc_err(EINVAL);
	if (idx < 0)
		idx = 0;	/* unknown id: lay out the trailer as attr 0 */
	ret = record_parse(&dec->attrs[idx].attr, hdr, out);
	if (ret)
		return pc_err(-ret);
	if (out->sz >= offsetof(struct perfctr_record, attr_idx) +
		       sizeof(out->attr_idx))
		out->attr_idx = (size_t)idx;
	return 0;
}
