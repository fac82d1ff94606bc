/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The sample walk shared by `perfex report` and `perfex script`: open a
 * perf.data file, follow its side-band records (MMAP/MMAP2, COMM, FORK,
 * EXIT, LOST) to model the recorded processes, and hand each sample over
 * with its comm, event name and resolved frames.
 */
#ifndef PERFEX_WALK_H
#define PERFEX_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include <perfctr/perfctr.h>
#include <perfctr/perfdata.h>
#include <perfctr/profile.h>
#include <perfctr/record.h>
#include <perfctr/symbols.h>

#define WALK_MAX_FRAMES 128

struct walk_sample {
	const struct perfctr_sample *sample;
	size_t attr_idx;
	const char *event;		/* the event's name */
	const char *comm;		/* NULL when never seen */
	bool kernel;			/* the sampled ip was in the kernel */
	struct perfctr_frame frames[WALK_MAX_FRAMES];
	size_t nr_frames;		/* >= 1: frames[0] is the ip */
};

struct walk_stats {
	uint64_t records;
	uint64_t samples;
	uint64_t bad_samples;		/* undecodable: skipped, counted */
	uint64_t lost;			/* PERF_RECORD_LOST */
	uint64_t lost_samples;		/* PERF_RECORD_LOST_SAMPLES */
	uint64_t *samples_per_attr;	/* nr_attrs entries */
	uint64_t *lost_per_attr;
};

struct walk_opts {
	const char *input;
	const char *kallsyms;		/* NULL: /proc/kallsyms */
	bool callchain;			/* resolve the callchain too */
	bool symbols;			/* false: DSO only, no ELF reads */
	bool no_demangle;		/* C++ names as the ELF files spell them */
};

struct walk;

typedef int (*walk_cb_t)(struct walk *w, const struct walk_sample *s, void *ctx);

/*
 * Open the file (prints the error and returns NULL with *exit_code set).
 */
struct walk *walk_open(const struct walk_opts *opts, int *exit_code);
/* Every record in time order (equal times in file order), cb for each
 * sample.  Memory: a read window, the side-band records and the samples
 * held back for the ordering (see walk.c), not the file.  Returns 0, cb's
 * non-zero value, or an exit code (the error printed). */
int walk_run(struct walk *w, walk_cb_t cb, void *ctx);
void walk_close(struct walk *w);

size_t walk_nr_attrs(const struct walk *w);
const char *walk_attr_name(const struct walk *w, size_t idx);
const struct perf_event_attr *walk_attr(const struct walk *w, size_t idx);
const struct walk_stats *walk_stats(const struct walk *w);
struct perfctr_perfdata *walk_file(struct walk *w);
struct perfctr_symbols *walk_symbols(struct walk *w);

#endif /* PERFEX_WALK_H */
