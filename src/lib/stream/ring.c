// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The ring: consumer side of the perf mmap ring buffer (as the perf
 * ring-buffer document among the seeds describes it: docs/ARCHITECTURE.md).
 *
 * Ordering (the seed's barrier table, user-space half):
 *  - data_head is loaded with acquire: the record bytes below head, which
 *    the kernel stored before publishing head, are visible after it;
 *  - data_tail is stored with release: our reads of the records below the
 *    new tail are complete before the kernel may reuse their space.
 * Positions are free-running 64-bit byte counts; a position's offset in
 * the data area is pos & mask.
 *
 * Backward (write_backward) rings: the kernel moves data_head *down*
 * (head = -bytes written, as u64) and writes each record below the last,
 * so reading upwards from head meets the newest record first.  The ring
 * is mapped read-only (data_tail is not ours to set) and the kernel
 * overwrites the oldest data freely; we pause the output while reading.
 */
#include <errno.h>
#include <poll.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "stream/stream.h"
#include "sys/sys.h"

struct perfctr_ring {
	int fd;
	bool owns_map;
	void *base;
	size_t data_pages;
	struct perf_event_mmap_page *page;
	unsigned char *data;
	uint64_t size;
	uint64_t mask;
	bool overwrite;
	bool hup;

	/* The current pass. */
	bool in_pass;
	bool paused_by_us;
	uint64_t start;		/* where the pass began */
	uint64_t cursor;	/* next record */
	uint64_t end;		/* pass limit */
	uint64_t tail;		/* forward: what we have released */
	uint64_t counted;	/* forward: records below are in the stats */
	uint64_t prev_head;	/* backward: head at the previous pass */
	bool prev_valid;

	void *bounce;
	size_t bounce_cap;

	void *aux;
	uint64_t aux_size;
	bool aux_overwrite;
	bool owns_aux;
	uint64_t aux_tail;

	struct perfctr_ring_stats stats;
};

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static uint64_t load_acquire_u64(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_release_u64(__u64 *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static struct perfctr_ring *ring_alloc(void)
{
	struct perfctr_ring *ring = calloc(1, sizeof(*ring));

	if (!ring) {
		errno = ENOMEM;
		return NULL;
	}
	ring->fd = -1;
	ring->stats.sz = sizeof(ring->stats);
	return ring;
}

struct perfctr_ring *perfctr_ring__new(int fd,
				       const struct perfctr_ring_opts *opts)
{
	size_t data_pages, aux_pages, ps = sys_page_size();
	struct perfctr_ring *ring;
	int err = 0;

	if (!pc_opts_valid(opts, sizeof(struct perfctr_ring_opts)) || fd < 0) {
		errno = EINVAL;
		return NULL;
	}
	data_pages = PC_OPTS_GET(opts, data_pages, 0);
	if (!data_pages)
		data_pages = 64;
	aux_pages = PC_OPTS_GET(opts, aux_pages, 0);
	if (!is_pow2(data_pages) || (aux_pages && !is_pow2(aux_pages))) {
		errno = EINVAL;
		return NULL;
	}
	ring = ring_alloc();
	if (!ring)
		return NULL;
	ring->fd = fd;
	ring->overwrite = PC_OPTS_GET(opts, overwrite, false);
	ring->aux_overwrite = PC_OPTS_GET(opts, aux_overwrite, false);
	ring->base = sys_perf_mmap(fd, data_pages, !ring->overwrite, &err);
	if (!ring->base) {
		free(ring);
		errno = -err;
		return NULL;
	}
	ring->owns_map = true;
	ring->data_pages = data_pages;
	ring->page = ring->base;
	ring->data = (unsigned char *)ring->base + ps;
	ring->size = (uint64_t)data_pages * ps;
	ring->mask = ring->size - 1;
	ring->tail = ring->page->data_tail;
	ring->counted = ring->tail;

	if (aux_pages) {
		/* The AUX area is placed after the data area and announced
		 * through the user page before it is mapped; the user page
		 * is writable only for a forward ring, so an overwrite ring
		 * cannot have one (the kernel's rule, too). */
		if (ring->overwrite) {
			err = -EINVAL;
			goto fail;
		}
		ring->page->aux_offset = (uint64_t)(1 + data_pages) * ps;
		ring->page->aux_size = (uint64_t)aux_pages * ps;
		ring->aux = sys_perf_mmap_aux(fd, ring->page->aux_offset,
					      aux_pages * ps,
					      !ring->aux_overwrite, &err);
		if (!ring->aux)
			goto fail;
		ring->owns_aux = true;
		ring->aux_size = (uint64_t)aux_pages * ps;
		ring->aux_tail = ring->page->aux_tail;
	}
	return ring;
fail:
	sys_perf_munmap(ring->base, data_pages);
	free(ring);
	errno = -err;
	return NULL;
}

struct perfctr_ring *ring_new_synthetic(void *base, size_t page_size,
					size_t data_size, bool overwrite,
					void *aux, size_t aux_size,
					bool aux_overwrite)
{
	struct perfctr_ring *ring;

	if (!base || !is_pow2(data_size) || data_size < 8 ||
	    page_size < sizeof(struct perf_event_mmap_page) ||
	    (aux && !is_pow2(aux_size))) {
		errno = EINVAL;
		return NULL;
	}
	ring = ring_alloc();
	if (!ring)
		return NULL;
	ring->base = base;
	ring->page = base;
	ring->data = (unsigned char *)base + page_size;
	ring->size = data_size;
	ring->mask = data_size - 1;
	ring->overwrite = overwrite;
	ring->tail = ring->page->data_tail;
	ring->counted = ring->tail;
	ring->aux = aux;
	ring->aux_size = aux ? aux_size : 0;
	ring->aux_overwrite = aux_overwrite;
	ring->aux_tail = ring->page->aux_tail;
	return ring;
}

void perfctr_ring__delete(struct perfctr_ring *ring)
{
	if (!ring)
		return;
	if (ring->paused_by_us)
		sys_perf_pause_output(ring->fd, false);
	if (ring->owns_aux)
		munmap(ring->aux, ring->aux_size);
	if (ring->owns_map)
		sys_perf_munmap(ring->base, ring->data_pages);
	free(ring->bounce);
	free(ring);
}

int perfctr_ring__fd(const struct perfctr_ring *ring)
{
	return ring->fd;
}

int perfctr_ring__add_fd(struct perfctr_ring *ring, int fd)
{
	if (ring->fd < 0 || fd < 0)
		return pc_err(EINVAL);
	if (fd == ring->fd)
		return 0;
	return sys_perf_set_output(fd, ring->fd);
}

size_t perfctr_ring__data_size(const struct perfctr_ring *ring)
{
	return ring->size;
}

const struct perf_event_mmap_page *
perfctr_ring__user_page(const struct perfctr_ring *ring)
{
	return ring->page;
}

int perfctr_ring__pause(struct perfctr_ring *ring, bool pause)
{
	if (ring->fd < 0)
		return 0;
	return sys_perf_pause_output(ring->fd, pause);
}

int pc_ring_reserve(struct perfctr_ring *ring)
{
	size_t want = ring->size < 65536 ? (size_t)ring->size : 65536;
	void *nb;

	if (ring->bounce_cap >= want)
		return 0;
	nb = realloc(ring->bounce, want);
	if (!nb)
		return -ENOMEM;
	ring->bounce = nb;
	ring->bounce_cap = want;
	return 0;
}

/* Copy @len bytes at ring position @pos out of the data area. */
static void ring_copy(const struct perfctr_ring *ring, void *dst,
		      uint64_t pos, size_t len)
{
	uint64_t off = pos & ring->mask;
	size_t first = ring->size - off;

	if (first >= len) {
		memcpy(dst, ring->data + off, len);
	} else {
		memcpy(dst, ring->data + off, first);
		memcpy((unsigned char *)dst + first, ring->data, len - first);
	}
}

/*
 * Backward ring: find how far from @head the whole records reach.  The
 * newest record starts at head; walk their headers upwards and stop at
 * @limit, at a never-written (zero) header, or before a record that
 * would cross the limit (its beginning was overwritten).
 */
static uint64_t backward_end(const struct perfctr_ring *ring, uint64_t head,
			     uint64_t limit)
{
	uint64_t pos = head;

	while (pos != limit) {
		struct perf_event_header h;

		if (limit - pos < sizeof(h))
			break;
		ring_copy(ring, &h, pos, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > limit - pos)
			break;
		pos += h.size;
	}
	return pos;
}

int64_t perfctr_ring__read_begin(struct perfctr_ring *ring)
{
	uint64_t head;

	if (ring->in_pass)
		perfctr_ring__read_end(ring);

	if (!ring->overwrite) {
		head = load_acquire_u64(&ring->page->data_head);
		if (head - ring->tail > ring->size) {
			/* The kernel never runs past our tail: a corrupt
			 * or foreign page.  Refuse rather than read junk. */
			ring->stats.corrupt++;
			return pc_err(EIO);
		}
		ring->start = ring->cursor = ring->tail;
		ring->end = head;
		ring->in_pass = true;
		return (int64_t)(head - ring->tail);
	}

	/* Stop the kernel while we walk: the window is then stable. */
	if (ring->fd >= 0 && !ring->paused_by_us) {
		int ret = sys_perf_pause_output(ring->fd, true);

		if (ret < 0)
			return ret;
		ring->paused_by_us = true;
	}
	head = load_acquire_u64(&ring->page->data_head);
	{
		uint64_t limit = head + ring->size;	/* the oldest byte */

		if (ring->prev_valid) {
			uint64_t fresh = ring->prev_head - head;

			if (fresh <= ring->size) {
				limit = ring->prev_head;
			} else {
				ring->stats.overwritten += fresh - ring->size;
			}
		}
		ring->start = ring->cursor = head;
		ring->end = backward_end(ring, head, limit);
	}
	ring->in_pass = true;
	return (int64_t)(ring->end - ring->start);
}

const struct perf_event_header *perfctr_ring__read_next(struct perfctr_ring *ring)
{
	struct perf_event_header h;
	uint64_t left, off;
	const struct perf_event_header *rec;

	if (!ring->in_pass || ring->cursor == ring->end)
		return NULL;
	left = ring->end - ring->cursor;
	if (left < sizeof(h)) {
		ring->stats.corrupt++;
		ring->cursor = ring->end;
		return NULL;
	}
	ring_copy(ring, &h, ring->cursor, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8 || h.size > left) {
		ring->stats.corrupt++;
		ring->cursor = ring->end;
		return NULL;
	}
	off = ring->cursor & ring->mask;
	if (off + h.size <= ring->size) {
		rec = (const void *)(ring->data + off);
	} else {
		/* Wraps the end of the area: make it contiguous. */
		if (ring->bounce_cap < h.size) {
			void *nb = realloc(ring->bounce, 65536);

			if (!nb)
				return NULL;
			ring->bounce = nb;
			ring->bounce_cap = 65536;
		}
		ring_copy(ring, ring->bounce, ring->cursor, h.size);
		rec = ring->bounce;
	}

	if (ring->overwrite || (int64_t)(ring->cursor - ring->counted) >= 0) {
		ring->stats.records++;
		ring->stats.bytes += h.size;
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			ring->stats.samples++;
			break;
		case PERF_RECORD_LOST:
			if (h.size >= sizeof(h) + 16) {
				uint64_t lost;

				memcpy(&lost, (const char *)rec + sizeof(h) + 8,
				       sizeof(lost));
				ring->stats.lost += lost;
			}
			ring->stats.lost_records++;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			if (h.size >= sizeof(h) + 8) {
				uint64_t lost;

				memcpy(&lost, (const char *)rec + sizeof(h),
				       sizeof(lost));
				ring->stats.lost_samples += lost;
			}
			break;
		}
		if (!ring->overwrite)
			ring->counted = ring->cursor + h.size;
	}
	ring->cursor += h.size;
	return rec;
}

void perfctr_ring__consume(struct perfctr_ring *ring)
{
	if (!ring->in_pass || ring->overwrite)
		return;
	ring->tail = ring->cursor;
	store_release_u64(&ring->page->data_tail, ring->tail);
}

int perfctr_ring__read_end(struct perfctr_ring *ring)
{
	int ret = 0;

	if (!ring->in_pass)
		return 0;
	ring->in_pass = false;
	if (ring->overwrite) {
		ring->prev_head = ring->start;
		ring->prev_valid = true;
		if (ring->paused_by_us) {
			ret = sys_perf_pause_output(ring->fd, false);
			ring->paused_by_us = false;
		}
	}
	return ret;
}

int64_t perfctr_ring__drain(struct perfctr_ring *ring,
			    perfctr_ring_record_cb_t cb, void *ctx)
{
	const struct perf_event_header *hdr;
	int64_t n = 0, avail;
	int ret;

	avail = perfctr_ring__read_begin(ring);
	if (avail <= 0)
		return avail < 0 ? avail : 0;
	while ((hdr = perfctr_ring__read_next(ring))) {
		ret = cb ? cb(ring, hdr, ctx) : 0;
		if (ret < 0) {
			/* Release what came before the stopping record. */
			ring->cursor -= hdr->size;
			perfctr_ring__consume(ring);
			perfctr_ring__read_end(ring);
			return ret;
		}
		n++;
		/* Space goes back to the kernel a sixteenth of the ring at a
		 * time, not after every record: a store to the shared page
		 * per record costs more than reading the record, while a
		 * slow callback (a write to disk) still frees space as it
		 * goes. */
		if (ring->cursor - ring->tail >= (ring->size >> 4))
			perfctr_ring__consume(ring);
	}
	perfctr_ring__consume(ring);
	ret = perfctr_ring__read_end(ring);
	return ret < 0 ? ret : n;
}

bool perfctr_ring__hup(const struct perfctr_ring *ring)
{
	return ring->hup;
}

int64_t perfctr_ring_poll(struct perfctr_ring *const *rings, size_t nr,
			  int timeout_ms, perfctr_ring_record_cb_t cb, void *ctx)
{
	struct pollfd stack_fds[64], *fds = stack_fds;
	size_t i, live = 0;
	int64_t total = 0;
	int ret;

	if (nr > ARRAY_SIZE(stack_fds)) {
		fds = calloc(nr, sizeof(*fds));
		if (!fds)
			return pc_err(ENOMEM);
	}
	for (i = 0; i < nr; i++) {
		fds[i].fd = rings[i]->hup ? -1 : rings[i]->fd;
		fds[i].events = POLLIN;
		fds[i].revents = 0;
		if (!rings[i]->hup)
			live++;
	}
	ret = 0;
	if (live)
		ret = poll(fds, nr, timeout_ms);
	if (ret < 0) {
		ret = -errno;
		goto out;
	}
	/* Drain every ring, ready or not: a ring may hold records below
	 * its wake-up mark, and draining early keeps the kernel from
	 * losing any.  Hung-up rings are drained one last time. */
	for (i = 0; i < nr; i++) {
		int64_t n = perfctr_ring__drain(rings[i], cb, ctx);

		if (n < 0) {
			ret = (int)n;
			goto out;
		}
		total += n;
		if (fds[i].revents & (POLLHUP | POLLERR | POLLNVAL))
			rings[i]->hup = true;
	}
	ret = 0;
	if (!total) {
		for (i = 0; i < nr; i++)
			if (!rings[i]->hup)
				break;
		if (i == nr && nr)
			ret = -ENODEV;
	}
out:
	if (fds != stack_fds)
		free(fds);
	if (ret < 0)
		return pc_err(-ret);
	return total;
}

int perfctr_ring__stats(const struct perfctr_ring *ring,
			struct perfctr_ring_stats *stats)
{
	size_t sz;

	if (!stats || stats->sz < sizeof(size_t))
		return pc_err(EINVAL);
	sz = stats->sz < sizeof(*stats) ? stats->sz : sizeof(*stats);
	memcpy((char *)stats + sizeof(size_t),
	       (const char *)&ring->stats + sizeof(size_t), sz - sizeof(size_t));
	return 0;
}

size_t perfctr_ring__aux_size(const struct perfctr_ring *ring)
{
	return ring->aux_size;
}

int64_t perfctr_ring__aux_begin(struct perfctr_ring *ring,
				struct perfctr_aux_window *win)
{
	uint64_t head, avail, off;

	if (!ring->aux)
		return pc_err(ENODATA);
	if (!win || win->sz < sizeof(*win))
		return pc_err(EINVAL);
	head = load_acquire_u64(&ring->page->aux_head);
	avail = head - ring->aux_tail;
	if (avail > ring->aux_size) {
		/* Overwritten (snapshot mode) or corrupt: only the newest
		 * aux_size bytes are whole. */
		ring->aux_tail = head - ring->aux_size;
		avail = ring->aux_size;
	}
	off = ring->aux_tail & (ring->aux_size - 1);
	win->offset = ring->aux_tail;
	win->data[0] = (const unsigned char *)ring->aux + off;
	win->len[0] = avail < ring->aux_size - off ? avail : ring->aux_size - off;
	win->data[1] = win->len[0] < avail ? ring->aux : NULL;
	win->len[1] = avail - win->len[0];
	return (int64_t)avail;
}

int perfctr_ring__aux_end(struct perfctr_ring *ring, uint64_t bytes)
{
	uint64_t head;

	if (!ring->aux)
		return pc_err(ENODATA);
	head = load_acquire_u64(&ring->page->aux_head);
	if (bytes > head - ring->aux_tail)
		return pc_err(EINVAL);
	ring->aux_tail += bytes;
	if (!ring->aux_overwrite)
		store_release_u64(&ring->page->aux_tail, ring->aux_tail);
	return 0;
}

int64_t perfctr_ring__aux_snapshot(struct perfctr_ring *ring, void *buf,
				   size_t size)
{
	uint64_t head, n, start, off, first;

	if (!ring->aux)
		return pc_err(ENODATA);
	head = load_acquire_u64(&ring->page->aux_head);
	n = head < ring->aux_size ? head : ring->aux_size;
	if (n > size)
		n = size;
	start = head - n;
	off = start & (ring->aux_size - 1);
	first = ring->aux_size - off;
	if (first >= n) {
		memcpy(buf, (const unsigned char *)ring->aux + off, n);
	} else {
		memcpy(buf, (const unsigned char *)ring->aux + off, first);
		memcpy((unsigned char *)buf + first, ring->aux, n - first);
	}
	return (int64_t)n;
}
