/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex record's state: its options (some stored by their rows of the
 * option table, options.c) and the recording's objects (cmd-record.c).
 */
#ifndef PERFEX_RECORD_H
#define PERFEX_RECORD_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup-names.h"
#include "sample-events.h"

struct perfctr_decoder;
struct perfctr_offcpu;
struct perfctr_perfdata_writer;
struct perfctr_sampler;
struct perfctr_symbols;
struct perfctr_target;

struct record {
	struct sample_spec *specs;	/* the -e options, in order */
	size_t nr_specs;
	uint64_t period;
	uint64_t freq;
	int clockid;		/* -1: the kernel's perf clock */
	enum { CALLGRAPH_NONE, CALLGRAPH_FP, CALLGRAPH_DWARF } callgraph;
	uint32_t stack_size;	/* user stack bytes per sample (dwarf) */
	pid_t pid, tid;
	bool all_cpus;
	const char *cpus;
	const char *cgroup;	/* -G: of -a or -C, one for every event */
	/* -G lists after the -e (perf's rule, cgroup-names.h), and what
	 * they make of it: each event's cgroup target, NULL for none (the
	 * CPUs'). */
	struct cgroup_arg *cgroup_args;
	size_t nr_cgroup_args;
	struct cgroup_plan plan;
	struct perfctr_target **event_cgroups;
	size_t pages;
	const char *output;
	bool overwrite, snapshot, quiet;
	int kill_child;		/* --kill-child's signal, 0 = none */
	bool no_inherit;	/* --no-inherit: one ring per thread, cpu -1 */
	int targets;		/* of -p, -t, -a and -C */
	bool off_cpu, off_cpu_runnable;
	uint64_t off_cpu_thresh_ns;	/* --off-cpu-thresh, 0: none */
	char **command_argv;
	int command_argc;

	/* The command (held until the events are open), and what is
	 * sampled: the command's target or another. */
	struct perfctr_target *command;
	struct perfctr_target *target;
	struct perfctr_sampler *sampler;
	const struct perfctr_decoder *dec;
	struct perfctr_perfdata_writer *writer;
	int out_fd;		/* the writer's file, closed after it */
	struct perfctr_symbols *syms;
	pid_t child;		/* the command's, 0 when none or reaped */
	bool started;		/* the command was let go to its exec */
	int write_err;
	uint64_t samples;
	uint64_t first_time, last_time;
	uint64_t window_time;	/* snapshots: newest time already written */
	uint64_t trailer_id;	/* sample id for synthesised records */
	uint64_t kernel_start;
	size_t ip_word;		/* index of the IP in a sample's words */

	/* --off-cpu (record-offcpu.c): the program, the id of its event
	 * in the file, and the file's clock less CLOCK_MONOTONIC. */
	struct perfctr_offcpu *offcpu;
	uint64_t offcpu_id;
	int64_t offcpu_clock_delta;
	uint64_t offcpu_samples, offcpu_ns;

	/* Reader placement (see follow_target_cpus). */
	pid_t follow;		/* the task whose CPUs we follow, 0 = none */
	cpu_set_t own_cpus;	/* ours as we were started */
	cpu_set_t target_cpus;	/* the task's, as last seen */
	cpu_set_t reader_cpus;	/* ours as we last set them */
};

/* record-offcpu.c: --off-cpu. */
int offcpu_open(struct record *rec);
int offcpu_add_attr(struct record *rec);
void offcpu_enable(struct record *rec);
void offcpu_poll(struct record *rec);
void offcpu_finish(struct record *rec);

#endif /* PERFEX_RECORD_H */
