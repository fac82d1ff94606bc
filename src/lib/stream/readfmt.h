/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The read format (internal): the one decoder of what read(2) on a
 * counter returns, and of the PERF_SAMPLE_READ part of a sample, which
 * has the same layout.  Pure: no system calls, no allocation.
 *
 * perf_event_open(2) lays the answer out from attr.read_format:
 *
 *   without PERF_FORMAT_GROUP      with PERF_FORMAT_GROUP
 *     value                          nr
 *     [time_enabled]                 [time_enabled]
 *     [time_running]                 [time_running]
 *     [id]                           nr x { value, [id], [lost] }
 *     [lost]
 *
 * each field a u64, the bracketed ones present when their format bit
 * (TOTAL_TIME_ENABLED, TOTAL_TIME_RUNNING, ID, LOST) is set.  A group
 * answer of nr members with every bit set is thus 3 + 3 * nr words, the
 * usual GROUP | ID | TOTAL_TIME_* one 3 + 2 * nr: nobody outside this
 * file should know either number.
 *
 * Thread safety: every function is pure and async-signal-safe.
 */
#ifndef PERFCTR_STREAM_READFMT_H
#define PERFCTR_STREAM_READFMT_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* PERF_FORMAT_LOST (Linux 6.0), which older uapi headers lack. */
#define PC_READFMT_LOST (1U << 4)

/* The bits this decoder knows; an answer for any other bit is refused. */
#define PC_READFMT_KNOWN (PERF_FORMAT_TOTAL_TIME_ENABLED |		\
			  PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |	\
			  PERF_FORMAT_GROUP | PC_READFMT_LOST)

/* What the whole answer says (times: 0 when not in the format). */
struct pc_readfmt {
	uint64_t nr;		/* entries in the answer; 1 without GROUP */
	uint64_t time_enabled;
	uint64_t time_running;
};

/* One counter of the answer (id, lost: 0 when not in the format). */
struct pc_readfmt_entry {
	uint64_t value;
	uint64_t id;
	uint64_t lost;
};

/* Words (u64) of the fields that are not an entry's: nr and the times
 * with GROUP, the times alone without (the single counter's value, id and
 * lost make its one entry, although its value comes first). */
size_t pc_readfmt_head_words(uint64_t read_format);

/* Words of one entry: value plus id and lost when asked for. */
size_t pc_readfmt_entry_words(uint64_t read_format);

/* Bytes of an answer with @nr entries (@nr is taken as 1 without GROUP):
 * the buffer size to give read(2) or to skip in a sample. */
size_t pc_readfmt_size(uint64_t read_format, size_t nr);

/* Word index of entry @i's value in an answer (entry 0 without GROUP):
 * where an overflow handler picks one member out of a raw group read. */
size_t pc_readfmt_value_word(uint64_t read_format, size_t i);

/* Bytes of the answer that starts at @buf (a group's nr is read from
 * it), for a decoder walking a record: -EIO when @len is shorter. */
long pc_readfmt_length(uint64_t read_format, const void *buf, size_t len);

/*
 * pc_readfmt_decode() - decode the @len bytes at @buf (u64-aligned or
 * not: fields are copied out) in @read_format.
 * @head: the header fields.
 * @entries: room for @max entries, filled in the kernel's order.
 * Return: the number of entries (head->nr), or -EIO when the answer is
 * malformed (shorter than its layout, nr larger than @max, @max 0) and
 * -EINVAL for a read_format with unknown bits.  On error nothing is
 * written.  Bytes past the answer are ignored.
 */
int pc_readfmt_decode(uint64_t read_format, const void *buf, size_t len,
		      struct pc_readfmt *head, struct pc_readfmt_entry *entries,
		      size_t max);

#endif /* PERFCTR_STREAM_READFMT_H */
