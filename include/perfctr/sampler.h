/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — samplers: sampling events opened on a target with their
 * rings, ready for perfctr_ring_poll() and a perf.data writer.
 *
 * What is sampled is a perfctr_target (its kinds are perf's ring modes):
 *  - a process (every thread it has now) or a command (held before its
 *    exec): with inherit, so that the threads and children it starts are
 *    sampled too; one event per thread, CPU and attr, one ring per online
 *    CPU.  Threads that the process starts between the making of the
 *    target and the open may be missed.  With opts.per_thread: each
 *    thread as it is now, no inherit, one ring per thread (cpu -1);
 *  - a thread (or the calling thread, perfctr_target__new_self()): no
 *    inherit; one ring (or one per CPU when the thread is followed only
 *    on a CPU list, perfctr_target__new_thread_on_cpus());
 *  - a CPU list: every task on those CPUs; one ring per CPU.
 * In general: the target's units are the positions, a unit of an
 * inheriting target that has no CPU is opened on every online CPU (the
 * kernel maps no ring of an inherited per-thread event), and the
 * positions on one CPU share that CPU's ring while a position without a
 * CPU has a ring of its own.  A new kind of target needs nothing here.
 *
 * Within one ring, every event of its position(s) is redirected into it
 * (SET_OUTPUT), so samples of all events arrive in one stream per CPU
 * (or thread), each identified by PERF_SAMPLE_IDENTIFIER.  A position is
 * a (thread or -1, CPU or -1) pair.
 *
 * The sampler adjusts the attrs it is given, and perfctr_sampler__attr()
 * returns what was actually opened (write that to perf.data):
 *  - sample_id_all = 1, and PERF_SAMPLE_IDENTIFIER when there are several
 *    attrs; disabled = 1 (enable_on_exec for a command target not yet
 *    started, or when asked);
 *  - inherit for process and command targets (not with opts.per_thread);
 *    PERF_SAMPLE_TID with inherit + SAMPLE_READ;
 *  - write_backward for overwrite rings;
 *  - with opts.tracking_ring, the side-band bits move to the tracking
 *    event, added by open as the last attr (named "dummy");
 *  - PERF_SAMPLE_PERIOD is removed from software and tracepoint events
 *    with a fixed period: the kernel then samples them on *every* event
 *    whatever the period (perf record is affected too).  The decoder fills
 *    sample.period from the attr instead.
 *
 * Thread safety: not synchronised; one thread uses a sampler at a time.
 */
#ifndef PERFCTR_SAMPLER_H
#define PERFCTR_SAMPLER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>
#include <perfctr/record.h>
#include <perfctr/ring.h>
#include <perfctr/target.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_sampler;

/*
 * The target replaces the mode, pid and CPU list of the first versions
 * of 0.1 (DEFAULT: a process target; PER_THREAD: a process target with
 * per_thread; THREAD: a thread or self target; CPUS and SYSTEM: a CPU-list
 * target).
 */
struct perfctr_sampler_opts {
	size_t sz;
	/* What to sample; NULL = the calling process.  Read by
	 * perfctr_sampler__add_attr() and perfctr_sampler__open(), so it
	 * must stay valid until the open returns; not kept after it.  A
	 * command target is started by the caller after the open. */
	const struct perfctr_target *target;
	/* Process and command targets: each thread as it is now with a
	 * ring of its own, no inherit.  Other targets: no effect. */
	bool per_thread;
	/* Data pages per ring, a power of two; 0 = 64. */
	size_t data_pages;
	/* Overwrite (flight-recorder) rings: write_backward, read-only. */
	bool overwrite;
	/* Wake up poll every N samples, or every N bytes when watermark is
	 * set; 0 = the kernel's default (one wake-up per page ... see
	 * perf_event_open(2)). */
	uint32_t wakeup_events;
	uint32_t wakeup_watermark;
	/* Start counting at the task's next exec; otherwise
	 * perfctr_sampler__enable() starts it.  Implied by a command target
	 * that is not started yet. */
	bool enable_on_exec;
	/* Keep PERF_SAMPLE_PERIOD even on the fixed-period software and
	 * tracepoint events it makes sample on every event (see above). */
	bool keep_sample_period;
	/* Carry the side-band records (the attrs' mmap, mmap2, comm,
	 * comm_exec, task, context_switch, ... bits) on a dummy software
	 * event with a forward ring of its own at each position, instead of
	 * on the sampling events: an overwrite ring then cannot write over
	 * the COMM and MMAP2 records its samples need.  See
	 * perfctr_sampler__tracking_rings(). */
	bool tracking_ring;
	size_t :0;
};

/**
 * perfctr_user_regs_mask() - the sample_regs_user mask that DWARF call
 * graphs need on this machine's architecture: every general register the
 * unwinder may start from (x86-64: all but the segment registers, as perf
 * asks; arm64: x0-x30, sp and pc).  Pure, thread-safe.
 * Return: the mask, or 0 where the library cannot unwind (then
 * PERF_SAMPLE_REGS_USER is of no use to perfctr_reader).
 */
PERFCTR_API uint64_t perfctr_user_regs_mask(void);

/** perfctr_sampler__new() - an empty sampler on @opts->target.
 * NULL + errno (EINVAL for bad @opts, ENOMEM). */
PERFCTR_API struct perfctr_sampler *
perfctr_sampler__new(const struct perfctr_sampler_opts *opts);

/** perfctr_sampler__delete() - close every fd, unmap every ring, free. */
PERFCTR_API void perfctr_sampler__delete(struct perfctr_sampler *s);

/**
 * perfctr_sampler__add_attr() - add an event given as an attr with its
 * sample settings (sample_period or freq + sample_freq, sample_type,
 * read_format, ...).  Only before open (EBUSY after).
 * @name: copied, may be NULL.
 * Return: the event's index, or -errno.
 */
PERFCTR_API int perfctr_sampler__add_attr(struct perfctr_sampler *s,
					  const struct perf_event_attr *attr,
					  const char *name);

/**
 * perfctr_sampler__set_filter() - a tracepoint filter ("common_pid == 42")
 * for event @idx, applied by perfctr_sampler__open() to each of its fds
 * before anything is enabled; NULL removes it.  The kernel checks a
 * filter only then: a bad one fails the open with -EINVAL.
 * Return: 0, -EBUSY after the open, -EINVAL out of range, -ENOMEM.
 */
PERFCTR_API int perfctr_sampler__set_filter(struct perfctr_sampler *s,
					    size_t idx, const char *filter);

/**
 * perfctr_sampler__set_cgroup() - sample event @idx in the tasks of
 * @cgroup's cgroup (and its descendants), on the CPUs of the sampler's
 * target, instead of in the target's (perf record -G per event).
 * @s:      the sampler; its target must be a CPU list or a cgroup (the
 *          open fails with -EINVAL otherwise).
 * @idx:    the event.
 * @cgroup: a cgroup target (perfctr_target__new_cgroup()), kept by the
 *          caller until perfctr_sampler__open() returns; NULL: the
 *          sampler's target again.
 * Thread-safety: as the sampler's other calls.
 * Return: 0, -EBUSY after the open, -EINVAL for an @idx out of range or a
 * target that is no cgroup.
 */
PERFCTR_API int perfctr_sampler__set_cgroup(struct perfctr_sampler *s,
					    size_t idx,
					    const struct perfctr_target *cgroup);

/**
 * perfctr_sampler__open() - open every event on every position of the
 * target and map the rings; a thread of a process target that ended
 * before the open is left out.  On failure everything opened is closed
 * again.
 * Return: 0 or -errno (ESRCH, EACCES, EINVAL from the kernel, EPERM over
 * the mlock limit, ...).
 */
PERFCTR_API int perfctr_sampler__open(struct perfctr_sampler *s);

/**
 * perfctr_sampler__open_error() - why the last perfctr_sampler__open()
 * failed: the event whose open failed (perfctr_sampler__name()), its
 * errno and the access broker's reason when the broker refused it.
 * @s:   the sampler.
 * @err: filled; its sz set by the caller.
 * Thread-safety: as the sampler's other calls.
 * Return: 0; -EINVAL for a NULL argument or an @err->sz too small.
 */
PERFCTR_API int perfctr_sampler__open_error(const struct perfctr_sampler *s,
					    struct perfctr_attach_error *err);

/** perfctr_sampler__enable() / __disable() - start / stop every event. */
PERFCTR_API int perfctr_sampler__enable(struct perfctr_sampler *s);
PERFCTR_API int perfctr_sampler__disable(struct perfctr_sampler *s);

/** perfctr_sampler__nr_attrs() - events added; after an open with
 * opts.tracking_ring, one more: the tracking event, last. */
PERFCTR_API size_t perfctr_sampler__nr_attrs(const struct perfctr_sampler *s);

/** perfctr_sampler__attr() - the attr of event @idx as opened (after open)
 * or as it will be opened. */
PERFCTR_API const struct perf_event_attr *
perfctr_sampler__attr(const struct perfctr_sampler *s, size_t idx);

/** perfctr_sampler__name() - the name given for event @idx, or NULL. */
PERFCTR_API const char *perfctr_sampler__name(const struct perfctr_sampler *s,
					      size_t idx);

/** perfctr_sampler__ids() - the sample ids of event @idx's fds (one per
 * open position: a thread of a process target that ended before the open
 * has none); returns how many. */
PERFCTR_API size_t perfctr_sampler__ids(const struct perfctr_sampler *s,
					size_t idx, const uint64_t **ids);

/** perfctr_sampler__nr_rings() - rings mapped (one per CPU or thread). */
PERFCTR_API size_t perfctr_sampler__nr_rings(const struct perfctr_sampler *s);

/** perfctr_sampler__rings() - the array of rings, for perfctr_ring_poll(). */
PERFCTR_API struct perfctr_ring *const *
perfctr_sampler__rings(const struct perfctr_sampler *s);

/**
 * perfctr_sampler__tracking_rings() - with opts.tracking_ring, after open:
 * the forward rings of the tracking event, one per position (as many as
 * perfctr_sampler__nr_rings(), in the same order), which carry the
 * side-band records.  Read them like any forward ring, all along: they
 * are small (8 pages).  perfctr_sampler__poll() drains them with the
 * others.  NULL without tracking rings.
 */
PERFCTR_API struct perfctr_ring *const *
perfctr_sampler__tracking_rings(const struct perfctr_sampler *s);

/** perfctr_sampler__ring_cpu() - the CPU of ring @idx (-1 per thread). */
PERFCTR_API int perfctr_sampler__ring_cpu(const struct perfctr_sampler *s,
					  size_t idx);

/** perfctr_sampler__ring_tid() - the thread of ring @idx (-1 per CPU). */
PERFCTR_API pid_t perfctr_sampler__ring_tid(const struct perfctr_sampler *s,
					    size_t idx);

/**
 * perfctr_sampler__fd() - the fd of event @idx at position @ring_idx
 * (for read(), ioctls), or -EINVAL.  Positions are the rings, except
 * where several share a CPU's ring (an inheriting target with several
 * threads; see perfctr_sampler__ids() for their number).
 */
PERFCTR_API int perfctr_sampler__fd(const struct perfctr_sampler *s,
				    size_t idx, size_t ring_idx);

/** perfctr_sampler__decoder() - a decoder of this sampler's records
 * (valid after open, owned by the sampler). */
PERFCTR_API const struct perfctr_decoder *
perfctr_sampler__decoder(const struct perfctr_sampler *s);

/**
 * perfctr_sampler__poll() - perfctr_ring_poll() over every ring (the
 * tracking rings too).
 * Return: as perfctr_ring_poll(): -ENODEV once every ring hung up.
 */
PERFCTR_API int64_t perfctr_sampler__poll(struct perfctr_sampler *s,
					  int timeout_ms,
					  perfctr_ring_record_cb_t cb, void *ctx);

/**
 * perfctr_sampler__stats() - lost data summed over every ring (the
 * tracking rings too)
 * (ring statistics, @stats->sz set by the caller) plus, in
 * @kernel_lost when non-NULL, what PERF_FORMAT_LOST reports for every fd
 * (what the kernel dropped, whether or not a LOST record reached us).
 * Return: 0 or -errno.
 */
PERFCTR_API int perfctr_sampler__stats(const struct perfctr_sampler *s,
				       struct perfctr_ring_stats *stats,
				       uint64_t *kernel_lost);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_SAMPLER_H */
