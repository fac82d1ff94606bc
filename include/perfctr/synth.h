/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — side-band records made from /proc for what a recording
 * started too late to see: a COMM for every thread and an MMAP2 for every
 * executable map of processes already running, and the kernel's text as
 * one MMAP ("[kernel.kallsyms]_text", as perf writes it).  The records are
 * laid out as the kernel writes them, with the sample_id_all trailer of
 * the recording's attr, so that a perf.data reader (ours, perf's) models
 * the processes as if it had seen them start.
 *
 * Thread safety: the calls keep no state; any thread may call them.
 */
#ifndef PERFCTR_SYNTH_H
#define PERFCTR_SYNTH_H

#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Called with each record made; a non-zero return stops the walk and is
 * returned.  The record is valid during the call only. */
typedef int (*perfctr_synth_cb_t)(const struct perf_event_header *hdr,
				  void *ctx);

struct perfctr_synth_opts {
	size_t sz;
	/* The attr whose sample_id_all trailer the records carry (perf uses
	 * the recording's first); NULL or !sample_id_all: no trailer.  In
	 * the trailer TIME and CPU are 0, pid/tid the record's own. */
	const struct perf_event_attr *attr;
	/* The sample id of the trailer's ID, STREAM_ID and IDENTIFIER. */
	uint64_t id;
	/* Where procfs is mounted; NULL: "/proc". */
	const char *proc;
	size_t :0;
};

/**
 * perfctr_synth_process() - a COMM for each thread of process @pid (its
 * /proc/PID/task/TID/comm) then an MMAP2 for each executable map of its
 * /proc/PID/maps (anonymous ones as "//anon").  Threads or maps that go
 * away meanwhile are skipped.
 * Return: the number of records made, -ENOENT (no such process), -EINVAL
 * (bad @opts, NULL @cb), or @cb's non-zero return.
 */
PERFCTR_API int perfctr_synth_process(pid_t pid,
				      const struct perfctr_synth_opts *opts,
				      perfctr_synth_cb_t cb, void *ctx);

/**
 * perfctr_synth_processes() - perfctr_synth_process() for every process
 * of /proc, in its order.
 * Return: the number of records made, -errno when /proc cannot be read,
 * -EINVAL, or @cb's non-zero return.
 */
PERFCTR_API int perfctr_synth_processes(const struct perfctr_synth_opts *opts,
					perfctr_synth_cb_t cb, void *ctx);

/**
 * perfctr_synth_kernel() - the kernel's text as one MMAP (pid -1, from
 * _text, or _stext, to the top of the address space, misc KERNEL), found
 * in PROC/kallsyms.
 * @start: when non-NULL, the start address (0 when none was made).
 * Return: 1, 0 when kallsyms hides the addresses (kptr_restrict: there
 * are no kernel symbols to name anyway), -errno when it cannot be read,
 * -EINVAL, or @cb's non-zero return.
 */
PERFCTR_API int perfctr_synth_kernel(const struct perfctr_synth_opts *opts,
				     perfctr_synth_cb_t cb, void *ctx,
				     uint64_t *start);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_SYNTH_H */
