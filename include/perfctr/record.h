/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — typed records: decoding of the records a ring (or a
 * perf.data file) carries, PERF_RECORD_SAMPLE with every sample_type bit
 * and the side-band records with their sample_id_all trailers.
 *
 * Decoding never copies payloads: pointers in the decoded structs point
 * into the record, which must stay alive and be 8-byte aligned (records
 * from perfctr_ring__read_next() and perfctr_perfdata__next() are).
 * Malformed input never crashes: every length is bounds-checked against
 * hdr->size and a record that does not fit is -EINVAL.
 *
 * A decoder knows the attrs of a recording (with their sample ids) and
 * finds which attr a record belongs to: by PERF_SAMPLE_IDENTIFIER, by the
 * id at the common position when every attr puts it at the same place, or
 * trivially when there is one attr.
 *
 * Thread safety: decoding is pure and thread-safe; a decoder may be used
 * from many threads once no more attrs are added.
 */
#ifndef PERFCTR_RECORD_H
#define PERFCTR_RECORD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One value of a PERF_SAMPLE_READ or PERF_RECORD_READ read_format. */
struct perfctr_read_value {
	uint64_t value;
	uint64_t id;		/* PERF_FORMAT_ID, else 0 */
	uint64_t lost;		/* PERF_FORMAT_LOST, else 0 */
};

/* A read_format block as the kernel wrote it (decoded lazily). */
struct perfctr_read_format {
	uint64_t format;	/* the attr's read_format */
	uint64_t nr;		/* values: 1, or the group's size */
	uint64_t time_enabled;	/* PERF_FORMAT_TOTAL_TIME_ENABLED, else 0 */
	uint64_t time_running;	/* PERF_FORMAT_TOTAL_TIME_RUNNING, else 0 */
	const uint64_t *values;	/* raw: nr entries of 1 + id + lost words */
};

/**
 * perfctr_read_format__value() - value @idx of @rf.
 * Return: 0, or -EINVAL when @idx >= nr.
 */
PERFCTR_API int perfctr_read_format__value(const struct perfctr_read_format *rf,
					   uint64_t idx,
					   struct perfctr_read_value *out);

/* The sample_id_all trailer of side-band records (and the matching fields
 * of a sample).  `present` holds the PERF_SAMPLE_* bits found. */
struct perfctr_sample_id {
	uint64_t present;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu, res;
};

struct perfctr_regs {
	uint64_t abi;		/* PERF_SAMPLE_REGS_ABI_*, 0 = none */
	uint64_t mask;		/* the attr's sample_regs_* */
	uint64_t nr;		/* popcount(mask) when abi != 0, else 0 */
	const uint64_t *regs;	/* nr values, in bit order of mask */
};

/* Decoded in place: the caller sets sz only (the decoder clears the rest,
 * faster than an initialiser of the whole struct). */
struct perfctr_sample {
	size_t sz;
	uint64_t type;		/* the sample_type decoded with */
	size_t attr_idx;	/* the decoder's attr index (0 without one) */
	uint16_t misc;		/* the header's misc (cpumode, EXACT_IP, ...) */

	uint64_t id;		/* IDENTIFIER or ID */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu, res;
	/* PERF_SAMPLE_PERIOD, or the attr's fixed sample_period when the bit
	 * is absent and a decoder supplied the attr (period_from_attr set). */
	uint64_t period;
	bool period_from_attr;

	struct perfctr_read_format read;	/* nr == 0 when absent */

	uint64_t callchain_nr;
	const uint64_t *callchain;	/* with PERF_CONTEXT_* markers */

	uint32_t raw_size;
	const void *raw;

	uint64_t branch_nr;
	uint64_t branch_hw_idx;		/* PERF_SAMPLE_BRANCH_HW_INDEX, else -1 */
	const struct perf_branch_entry *branches;

	struct perfctr_regs regs_user;

	uint64_t stack_user_size;	/* bytes copied (0 when none) */
	const void *stack_user;
	uint64_t stack_user_dyn_size;	/* bytes that were valid */

	/* WEIGHT: the whole u64 in weight.  WEIGHT_STRUCT: weight holds
	 * var1_dw, and the three parts are split out too. */
	uint64_t weight;
	uint32_t weight_var1;
	uint16_t weight_var2, weight_var3;

	uint64_t data_src;
	uint64_t transaction;
	struct perfctr_regs regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;

	uint64_t aux_size;
	const void *aux;
};

/*
 * Side-band records.  Strings point into the record (NUL-terminated: the
 * decoder checks that the terminator lies inside the record).
 */
struct perfctr_record {
	size_t sz;
	uint32_t type;		/* PERF_RECORD_* */
	uint16_t misc;
	uint16_t size;
	size_t attr_idx;	/* when the trailer identified it, else 0 */
	struct perfctr_sample_id sample_id;	/* present == 0 when none */
	union {
		struct {	/* MMAP, MMAP2 */
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			/* MMAP2 only: */
			uint32_t maj, min;	/* unless PERF_RECORD_MISC_MMAP_BUILD_ID */
			uint64_t ino, ino_generation;
			uint8_t build_id_size;	/* with PERF_RECORD_MISC_MMAP_BUILD_ID */
			const uint8_t *build_id;
			uint32_t prot, flags;
			const char *filename;
		} mmap;
		struct {	/* COMM */
			uint32_t pid, tid;
			const char *comm;
		} comm;
		struct {	/* FORK, EXIT */
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} task;
		struct {	/* LOST */
			uint64_t id, lost;
		} lost;
		struct {	/* LOST_SAMPLES */
			uint64_t lost;
		} lost_samples;
		struct {	/* THROTTLE, UNTHROTTLE */
			uint64_t time, id, stream_id;
		} throttle;
		struct {	/* SWITCH (no fields), SWITCH_CPU_WIDE */
			uint32_t next_prev_pid, next_prev_tid;
			bool out;		/* PERF_RECORD_MISC_SWITCH_OUT */
			bool preempt;		/* ..._SWITCH_OUT_PREEMPT */
		} context_switch;
		struct {	/* READ */
			uint32_t pid, tid;
			struct perfctr_read_format values;
		} read;
		struct {	/* AUX */
			uint64_t aux_offset, aux_size, flags;
		} aux;
		struct {	/* ITRACE_START */
			uint32_t pid, tid;
		} itrace_start;
		struct {	/* NAMESPACES */
			uint32_t pid, tid;
			uint64_t nr;
			const uint64_t *dev_ino;	/* nr pairs (dev, ino) */
		} namespaces;
		struct {	/* KSYMBOL */
			uint64_t addr;
			uint32_t len;
			uint16_t ksym_type, flags;
			const char *name;
		} ksymbol;
		struct {	/* BPF_EVENT */
			uint16_t bpf_type, flags;
			uint32_t id;
			const uint8_t *tag;	/* BPF_TAG_SIZE (8) bytes */
		} bpf_event;
		struct {	/* CGROUP */
			uint64_t id;
			const char *path;
		} cgroup;
		struct {	/* TEXT_POKE */
			uint64_t addr;
			uint16_t old_len, new_len;
			const uint8_t *old_bytes, *new_bytes;
		} text_poke;
		struct {	/* AUX_OUTPUT_HW_ID */
			uint64_t hw_id;
		} aux_output_hw_id;
		uint64_t reserved[16];
	};
};

/**
 * perfctr_sample__parse() - decode a PERF_RECORD_SAMPLE of an event
 * opened with @attr (sample_type, read_format, sample_regs_user/intr,
 * branch_sample_type are used).
 * @hdr: the record; hdr->size bytes must be readable, 8-byte aligned.
 * @out: filled; its sz set by the caller (on failure it may be left
 *       partly filled: check the return value).
 * Return: 0, or -EINVAL (truncated, inconsistent, not a sample).
 */
PERFCTR_API int perfctr_sample__parse(const struct perf_event_attr *attr,
				      const struct perf_event_header *hdr,
				      struct perfctr_sample *out);

/**
 * perfctr_record__parse() - decode a side-band record (any type but
 * SAMPLE; unknown types decode only the header) with the sample_id_all
 * trailer laid out by @attr (NULL: no trailer).
 * Return: 0, or -EINVAL (truncated, string unterminated, or a SAMPLE).
 */
PERFCTR_API int perfctr_record__parse(const struct perf_event_attr *attr,
				      const struct perf_event_header *hdr,
				      struct perfctr_record *out);

/** perfctr_record__type_name() - "SAMPLE", "MMAP2", ... or NULL. */
PERFCTR_API const char *perfctr_record__type_name(uint32_t type);

/** perfctr_sample__fixed_size() - bytes a sample of @attr's layout takes without
 * its variable parts (callchain, raw, ...): the fixed-size minimum.
 * Return: bytes including the header. */
PERFCTR_API size_t perfctr_sample__fixed_size(const struct perf_event_attr *attr);

/* ---- decoder: many attrs in one stream ---- */

struct perfctr_decoder;

/** perfctr_decoder__new() - an empty decoder.  NULL + errno (ENOMEM). */
PERFCTR_API struct perfctr_decoder *perfctr_decoder__new(void);

/** perfctr_decoder__delete() - free (NULL is a no-op). */
PERFCTR_API void perfctr_decoder__delete(struct perfctr_decoder *dec);

/**
 * perfctr_decoder__add_attr() - add an attr (copied) and the sample ids
 * of its fds (copied; may be none with a single attr).
 * Return: its index, or -EINVAL / -ENOMEM.
 */
PERFCTR_API int perfctr_decoder__add_attr(struct perfctr_decoder *dec,
					  const struct perf_event_attr *attr,
					  const uint64_t *ids, size_t nr_ids);

/** perfctr_decoder__add_ids() - more ids for attr @idx (e.g. a new CPU). */
PERFCTR_API int perfctr_decoder__add_ids(struct perfctr_decoder *dec,
					 size_t idx, const uint64_t *ids,
					 size_t nr_ids);

/** perfctr_decoder__nr_attrs() - how many attrs. */
PERFCTR_API size_t perfctr_decoder__nr_attrs(const struct perfctr_decoder *dec);

/** perfctr_decoder__attr() - attr @idx, NULL when out of range. */
PERFCTR_API const struct perf_event_attr *
perfctr_decoder__attr(const struct perfctr_decoder *dec, size_t idx);

/**
 * perfctr_decoder__find_attr() - the attr index of record @hdr (sample or
 * side-band).  Return: the index, -ENOENT when its id is unknown, -EINVAL
 * when the record is too short to hold the id.
 */
PERFCTR_API int perfctr_decoder__find_attr(const struct perfctr_decoder *dec,
					   const struct perf_event_header *hdr);

/**
 * perfctr_decoder__sample() - find the attr of sample @hdr and decode it
 * (out->attr_idx says which).  Fills period from the attr when the
 * PERIOD bit is absent and the attr samples with a fixed period.
 * Return: 0, -ENOENT (unknown id), -EINVAL.
 */
PERFCTR_API int perfctr_decoder__sample(const struct perfctr_decoder *dec,
					const struct perf_event_header *hdr,
					struct perfctr_sample *out);

/**
 * perfctr_decoder__record() - decode side-band record @hdr, its trailer
 * laid out by its attr (the first attr when the trailer cannot say).
 * Return: 0, -EINVAL.
 */
PERFCTR_API int perfctr_decoder__record(const struct perfctr_decoder *dec,
					const struct perf_event_header *hdr,
					struct perfctr_record *out);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_RECORD_H */
