/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex top's state: its options (some stored by their rows of the option
 * table, options.c), the live model of the sampled tasks and the profiles
 * (cmd-top.c), and what the screen shows (top-screen.c).
 */
#ifndef PERFEX_TOP_H
#define PERFEX_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <termios.h>

#include <perfctr/profile.h>

struct perfctr_decoder;
struct perfctr_sampler;
struct perfctr_symbols;
struct perfctr_target;
struct sample_spec;

/* A process (keyed by pid) or a thread (keyed by tid) seen in samples. */
struct top_task {
	struct top_task *next;
	pid_t id;
	/* process: its maps were read from /proc, when they were last read
	 * again for an address in no map (ns), its owner (-1: unknown) */
	bool maps_read;
	uint64_t maps_reread_ns;
	long uid;
	/* thread: its comm ("" when unknown) */
	char comm[16];
};

#define TOP_TASK_BUCKETS 4096

struct top {
	/* ---- options ---- */
	struct sample_spec *specs;	/* -e, in order */
	size_t nr_specs;
	uint64_t freq;		/* -F; 0: 4000 */
	uint64_t period;	/* -c */
	bool callgraph;		/* -g */
	pid_t pid, tid;
	bool all_cpus;
	const char *cpus;	/* -C */
	const char *user;	/* -u, as given */
	long uid;		/* -u's uid, -1 without */
	int targets;		/* of -p, -t, -u, -a and -C */
	const char *sort;	/* -s, as given */
	double percent_limit;	/* --percent-limit, F */
	uint64_t count_filter;	/* -f, f */
	bool hide_kernel;	/* -K, K */
	bool hide_user;		/* -U, U */
	bool zero;		/* -z, z */
	bool stdio;		/* --stdio */
	bool show_samples;	/* --show-nr-samples */
	unsigned int delay_ms;	/* -d; 0: 2 s */
	unsigned long iterations; /* -n; 0: until stopped */
	size_t entries;		/* -E, e; 0: the screen's lines (batch: all) */
	size_t pages;		/* -m; 0: 64 */

	/* ---- the sampling ---- */
	struct perfctr_target *target;
	struct perfctr_sampler *sampler;
	const struct perfctr_decoder *dec;
	struct perfctr_symbols *syms;
	bool *hup;		/* per ring: its task ended */
	size_t nr_events;
	bool ended;		/* every ring hung up: the tasks are gone */
	/* The records made from /proc at the start (CPU targets) are being
	 * taken in: their processes' maps need no reading. */
	bool synthesizing;
	/* Samples whose user address was in no map yet, tried again after
	 * the next pass over the rings (their MMAP2 may wait in a ring read
	 * later in the pass); records copied whole, 8-byte aligned. */
	uint64_t *pending;
	size_t pending_len, pending_cap;	/* in words */

	/* ---- the model ---- */
	struct top_task *procs[TOP_TASK_BUCKETS];
	struct top_task *threads[TOP_TASK_BUCKETS];

	/* ---- the profiles, one per event ---- */
	enum perfctr_sort_key keys[PERFCTR_SORT_NR];
	size_t nr_keys;
	bool srcline;		/* a srcline key */
	struct perfctr_profile **profiles;
	size_t shown;		/* the event shown (E) */

	/* ---- counts ---- */
	uint64_t samples;	/* every sample taken in */
	uint64_t interval_samples, interval_kernel;
	uint64_t unknown;	/* samples whose address was in no map */
	uint64_t bad;		/* undecodable samples */
	uint64_t filtered;	/* samples of other users (-u) */
	uint64_t interval_start_ns;
	unsigned long refreshes;
	double rate;		/* samples/s of the last interval */
	double kernel_pct;	/* of the last interval */
	uint64_t lost;		/* as last read */

	/* ---- the terminal ---- */
	bool tty;		/* the interactive screen, not batch mode */
	bool raw;		/* the terminal's modes are ours */
	struct termios saved;
	int rows, cols;
	char prompt_key;	/* 0: no prompt open */
	char prompt[64];
	size_t prompt_len;
	char status[160];	/* a message under the table until the next key */
};

/* cmd-top.c: the profiles made anew (after a sort change, at zeroing).
 * Return 0 or -ENOMEM. */
int top_reset_profiles(struct top *t);
/* The comm of thread @tid as last seen, NULL when unknown. */
const char *top_comm(struct top *t, pid_t tid);

/* top-screen.c */
/* The table of the shown event on @out: the header line, the columns and
 * the rows that pass the filters, at most @max_rows of them (0: no
 * limit), with call graphs under them (-g). */
void top_render(struct top *t, FILE *out, size_t max_rows);
/* Batch mode: a table per event on stdout.  Return 0 or -EIO. */
int top_print_batch(struct top *t);
/* The interactive screen. */
int top_screen_enter(struct top *t);
void top_screen_leave(struct top *t);
void top_screen_draw(struct top *t);
void top_screen_resize(struct top *t);
/* The keys typed: the settings they change applied.  Return true when
 * the screen is to be drawn again, and *@quit for q. */
bool top_screen_keys(struct top *t, bool *quit);

#endif /* PERFEX_TOP_H */
