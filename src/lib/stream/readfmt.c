/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The read format decoder: see readfmt.h for the layouts.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "stream/readfmt.h"

static size_t bit(uint64_t read_format, uint64_t flag)
{
	return (read_format & flag) ? 1 : 0;
}

size_t pc_readfmt_head_words(uint64_t read_format)
{
	/* A group's nr and times; a single counter's times (its value,
	 * first, is counted as part of its one entry). */
	size_t words = bit(read_format, PERF_FORMAT_TOTAL_TIME_ENABLED) +
		       bit(read_format, PERF_FORMAT_TOTAL_TIME_RUNNING);

	return (read_format & PERF_FORMAT_GROUP) ? 1 + words : words;
}

size_t pc_readfmt_entry_words(uint64_t read_format)
{
	return 1 + bit(read_format, PERF_FORMAT_ID) +
	       bit(read_format, PC_READFMT_LOST);
}

size_t pc_readfmt_size(uint64_t read_format, size_t nr)
{
	if (!(read_format & PERF_FORMAT_GROUP))
		nr = 1;
	return (pc_readfmt_head_words(read_format) +
		nr * pc_readfmt_entry_words(read_format)) * sizeof(uint64_t);
}

size_t pc_readfmt_value_word(uint64_t read_format, size_t i)
{
	if (!(read_format & PERF_FORMAT_GROUP))
		return 0;
	return pc_readfmt_head_words(read_format) +
	       i * pc_readfmt_entry_words(read_format);
}

static uint64_t word(const unsigned char *buf, size_t i)
{
	uint64_t v;

	memcpy(&v, buf + i * sizeof(v), sizeof(v));
	return v;
}

long pc_readfmt_length(uint64_t read_format, const void *buf, size_t len)
{
	size_t head = pc_readfmt_size(read_format, 0), want;
	uint64_t nr;

	if (len < head)
		return -EIO;
	if (!(read_format & PERF_FORMAT_GROUP))
		return (long)head;
	nr = word(buf, 0);
	/* Bounded before multiplying: nr comes from the data. */
	if (nr > len / sizeof(uint64_t))
		return -EIO;
	want = pc_readfmt_size(read_format, (size_t)nr);
	return len < want ? -EIO : (long)want;
}

int pc_readfmt_decode(uint64_t read_format, const void *buf, size_t len,
		      struct pc_readfmt *head, struct pc_readfmt_entry *entries,
		      size_t max)
{
	const unsigned char *p = buf;
	bool group = read_format & PERF_FORMAT_GROUP;
	bool te = read_format & PERF_FORMAT_TOTAL_TIME_ENABLED;
	bool tr = read_format & PERF_FORMAT_TOTAL_TIME_RUNNING;
	bool id = read_format & PERF_FORMAT_ID;
	bool lost = read_format & PC_READFMT_LOST;
	size_t head_words = (size_t)te + tr + group;
	size_t entry_words = 1 + (size_t)id + lost;
	size_t w, i, nr = 1;

	if (read_format & ~(uint64_t)PC_READFMT_KNOWN)
		return -EINVAL;
	if (!max || len < (head_words + (group ? 0 : entry_words)) * 8)
		return -EIO;
	if (group) {
		uint64_t n = word(p, 0);

		if (n > max || len < (head_words + n * entry_words) * 8)
			return -EIO;
		nr = (size_t)n;
	}
	/* The first word is the group's nr, or the single counter's value. */
	w = 1;
	head->nr = nr;
	head->time_enabled = te ? word(p, w++) : 0;
	head->time_running = tr ? word(p, w++) : 0;
	for (i = 0; i < nr; i++) {
		struct pc_readfmt_entry *e = &entries[i];

		/* A single counter's value came first, before the times. */
		e->value = group ? word(p, w++) : word(p, 0);
		e->id = id ? word(p, w++) : 0;
		e->lost = lost ? word(p, w++) : 0;
	}
	return (int)nr;
}
