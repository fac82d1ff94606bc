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
	       bit(read_format, PERF_FORMAT_LOST);
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

int pc_readfmt_decode(uint64_t read_format, const void *buf, size_t len,
		      struct pc_readfmt *head, struct pc_readfmt_entry *entries,
		      size_t max)
{
	const unsigned char *p = buf;
	bool group = read_format & PERF_FORMAT_GROUP;
	size_t w, i, nr;
	uint64_t enabled = 0, running = 0;

	if (read_format & ~(uint64_t)PC_READFMT_KNOWN)
		return -EINVAL;
	if (!max || len < pc_readfmt_size(read_format, 0))
		return -EIO;
	/* The first word is the group's nr, or the single counter's value. */
	w = 1;
	nr = 1;
	if (group) {
		uint64_t n = word(p, 0);

		if (n > max || len < pc_readfmt_size(read_format, n))
			return -EIO;
		nr = (size_t)n;
	}
	if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
		enabled = word(p, w++);
	if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
		running = word(p, w++);
	for (i = 0; i < nr; i++) {
		struct pc_readfmt_entry *e = &entries[i];

		/* A single counter's value came first, before the times. */
		e->value = group ? word(p, w++) : word(p, 0);
		e->id = (read_format & PERF_FORMAT_ID) ? word(p, w++) : 0;
		e->lost = (read_format & PERF_FORMAT_LOST) ? word(p, w++) : 0;
	}
	head->nr = nr;
	head->time_enabled = enabled;
	head->time_running = running;
	return (int)nr;
}
