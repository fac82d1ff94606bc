/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — rings: the perf mmap ring buffer of one event fd (and of
 * every fd redirected into it with SET_OUTPUT).
 *
 * The mapping is 1 + 2^n pages: the user page (struct perf_event_mmap_page,
 * with data_head / data_tail) and the data area.  The kernel produces at
 * data_head; we consume at data_tail:
 *
 *	head = load_acquire(&page->data_head);	  records up to head are whole
 *	... read records in [tail, head) ...
 *	store_release(&page->data_tail, tail);	  kernel may now overwrite them
 *
 * A record that wraps the end of the data area is copied into a bounce
 * buffer so that every record handed out is contiguous and 8-byte aligned.
 *
 * Read protocol (one reader per ring):
 *
 *	if (perfctr_ring__read_begin(ring) > 0) {
 *		while ((hdr = perfctr_ring__read_next(ring))) {
 *			use(hdr);			// valid until consume
 *			perfctr_ring__consume(ring);
 *		}
 *		perfctr_ring__read_end(ring);
 *	}
 *
 * Overwrite (backward) rings are mapped read-only: the kernel writes
 * newest-first and never waits for us.  read_begin pauses the output
 * (PAUSE_OUTPUT), read_next walks from the newest record to the oldest
 * still whole, read_end resumes the output.
 *
 * Lost data is always counted: PERF_RECORD_LOST / PERF_RECORD_LOST_SAMPLES
 * records that pass through read_next add to the ring's statistics.
 *
 * Thread safety: a ring is not synchronised; one thread reads it at a
 * time.  Nothing here is async-signal-safe.
 */
#ifndef PERFCTR_RING_H
#define PERFCTR_RING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_ring;

struct perfctr_ring_opts {
	size_t sz;
	/* Data pages: a power of two; 0 = 64 pages. */
	size_t data_pages;
	/* Map read-only: the event was opened with write_backward = 1, or the
	 * caller wants an overwrite (flight-recorder) ring. */
	bool overwrite;
	/* AUX area pages (a power of two), 0 = none.  Only PMUs with an AUX
	 * area (Intel PT, CoreSight, SPE) accept one. */
	size_t aux_pages;
	/* Map the AUX area read-only: snapshot mode, the PMU overwrites. */
	bool aux_overwrite;
	size_t :0;
};

/**
 * perfctr_ring__new() - map the ring of event @fd.
 * @fd:   a perf_event fd; the ring does not own it (it is not closed).
 * @opts: sizes and mode, NULL for 64 forward data pages, no AUX.
 *
 * Return: the ring, or NULL + errno: EINVAL (size not a power of two,
 * bad opts), EBUSY (@fd was redirected with SET_OUTPUT), EPERM (over
 * perf_event_mlock_kb), ENOMEM.
 */
PERFCTR_API struct perfctr_ring *
perfctr_ring__new(int fd, const struct perfctr_ring_opts *opts);

/** perfctr_ring__delete() - unmap and free (NULL is a no-op); fds stay open. */
PERFCTR_API void perfctr_ring__delete(struct perfctr_ring *ring);

/** perfctr_ring__fd() - the fd the ring was mapped from (its poll fd). */
PERFCTR_API int perfctr_ring__fd(const struct perfctr_ring *ring);

/**
 * perfctr_ring__add_fd() - redirect event @fd into this ring
 * (PERF_EVENT_IOC_SET_OUTPUT).  The kernel allows it only for an event of
 * the same task or the same CPU as the ring's own event (EINVAL otherwise).
 * Return: 0 or -errno.
 */
PERFCTR_API int perfctr_ring__add_fd(struct perfctr_ring *ring, int fd);

/** perfctr_ring__data_size() - bytes in the data area (pages * page size). */
PERFCTR_API size_t perfctr_ring__data_size(const struct perfctr_ring *ring);

/** perfctr_ring__user_page() - the mapped user page (read it, don't write). */
PERFCTR_API const struct perf_event_mmap_page *
perfctr_ring__user_page(const struct perfctr_ring *ring);

/**
 * perfctr_ring__read_begin() - start a read pass: snapshot data_head.
 * For an overwrite ring, pause the output until read_end.
 * Return: the number of bytes available (0: nothing new), or -errno.
 */
PERFCTR_API int64_t perfctr_ring__read_begin(struct perfctr_ring *ring);

/**
 * perfctr_ring__read_next() - the next whole record of this pass, or NULL
 * at its end (or on a corrupt header: see stats.corrupt).  The record is
 * contiguous and 8-byte aligned and stays valid until the next
 * read_next, consume or read_end.  Records of a forward ring handed out
 * but not consumed when the pass ends are handed out again by the next
 * pass (statistics count each record once).
 */
PERFCTR_API const struct perf_event_header *
perfctr_ring__read_next(struct perfctr_ring *ring);

/**
 * perfctr_ring__consume() - give every record handed out so far back to
 * the kernel (release store of data_tail).  A no-op for overwrite rings,
 * which the kernel never waits for.
 */
PERFCTR_API void perfctr_ring__consume(struct perfctr_ring *ring);

/**
 * perfctr_ring__read_end() - end the pass; resume an overwrite ring.
 * Return: 0 or -errno.
 */
PERFCTR_API int perfctr_ring__read_end(struct perfctr_ring *ring);

/**
 * perfctr_ring__pause() - stop (or restart) the kernel writing into the
 * ring (PERF_EVENT_IOC_PAUSE_OUTPUT): events that happen meanwhile are
 * lost and counted as lost by the kernel.  Return: 0 or -errno.
 */
PERFCTR_API int perfctr_ring__pause(struct perfctr_ring *ring, bool pause);

/* Called once per record: return 0 to go on, a negative value to stop
 * (the value is passed back; the record that stopped is not consumed). */
typedef int (*perfctr_ring_record_cb_t)(struct perfctr_ring *ring,
					const struct perf_event_header *hdr,
					void *ctx);

/**
 * perfctr_ring__drain() - read and consume every available record,
 * calling @cb for each (a full begin/next/consume/end pass).
 * Return: the number of records delivered, the callback's negative
 * return, or -errno.
 */
PERFCTR_API int64_t perfctr_ring__drain(struct perfctr_ring *ring,
					perfctr_ring_record_cb_t cb, void *ctx);

/**
 * perfctr_ring_poll() - one poll(2) over @nr rings, then drain every ring
 * through @cb (ready or not: a ring below its wake-up mark may hold
 * records too, and an empty ring costs one load).
 * @timeout_ms: as poll(2): -1 waits for ever, 0 does not wait.
 *
 * A ring whose fd reported POLLHUP (its task exited) is drained and then
 * marked hung up (perfctr_ring__hup()); it is not polled again.
 * Return: records delivered (0 on timeout), -ENODEV when every ring has
 * hung up and nothing was left, -EINTR when a signal came first, the
 * callback's negative return, or -errno.
 */
PERFCTR_API int64_t perfctr_ring_poll(struct perfctr_ring *const *rings,
				      size_t nr, int timeout_ms,
				      perfctr_ring_record_cb_t cb, void *ctx);

/** perfctr_ring__hup() - true once poll saw POLLHUP on the ring's fd. */
PERFCTR_API bool perfctr_ring__hup(const struct perfctr_ring *ring);

struct perfctr_ring_stats {
	size_t sz;
	uint64_t records;	/* records handed out by read_next (consumed) */
	uint64_t bytes;		/* their bytes */
	uint64_t samples;	/* of which PERF_RECORD_SAMPLE */
	uint64_t lost;		/* sum of PERF_RECORD_LOST.lost */
	uint64_t lost_records;	/* number of PERF_RECORD_LOST records */
	uint64_t lost_samples;	/* sum of PERF_RECORD_LOST_SAMPLES.lost */
	uint64_t corrupt;	/* headers that made no sense (pass stopped) */
	uint64_t overwritten;	/* overwrite rings: bytes the kernel wrote
				 * over before we read them (estimate) */
};

/** perfctr_ring__stats() - counters since the ring was made.  @stats->sz
 * is set by the caller.  Return: 0 or -EINVAL. */
PERFCTR_API int perfctr_ring__stats(const struct perfctr_ring *ring,
				    struct perfctr_ring_stats *stats);

/*
 * The AUX area: a second buffer for hardware trace data, with its own
 * head and tail (aux_head / aux_tail in the user page) and no record
 * structure: PERF_RECORD_AUX records in the data area say which bytes
 * were written.
 */
struct perfctr_aux_window {
	size_t sz;
	uint64_t offset;	/* stream position of data[0][0] */
	const void *data[2];	/* two parts when the window wraps */
	size_t len[2];
};

/** perfctr_ring__aux_size() - bytes in the AUX area, 0 when none. */
PERFCTR_API size_t perfctr_ring__aux_size(const struct perfctr_ring *ring);

/**
 * perfctr_ring__aux_begin() - the AUX bytes between aux_tail and aux_head
 * (acquire load of aux_head).  Return: bytes available, or -ENODATA
 * when the ring has no AUX area, -errno.
 */
PERFCTR_API int64_t perfctr_ring__aux_begin(struct perfctr_ring *ring,
					    struct perfctr_aux_window *win);

/**
 * perfctr_ring__aux_end() - release @bytes (at most what aux_begin
 * returned) back to the PMU (release store of aux_tail).
 */
PERFCTR_API int perfctr_ring__aux_end(struct perfctr_ring *ring,
				      uint64_t bytes);

/**
 * perfctr_ring__aux_snapshot() - copy the newest AUX bytes (up to @size,
 * at most the area's size) into @buf, oldest first: the snapshot read of
 * an overwriting AUX area.  Call it while the event is disabled or paused.
 * Return: bytes copied, or -ENODATA / -errno.
 */
PERFCTR_API int64_t perfctr_ring__aux_snapshot(struct perfctr_ring *ring,
					       void *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_RING_H */
