/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The stream layer's internal interfaces (not installed).  The stream
 * layer is the kernel's data formats (the ring, records, read formats),
 * beneath the core objects that open counters and above sys.
 */
#ifndef PERFCTR_STREAM_INTERNAL_H
#define PERFCTR_STREAM_INTERNAL_H

#include "perfctr/record.h"
#include "perfctr/ring.h"

/*
 * A ring over caller-owned memory laid out as the kernel's mapping: one
 * user page of @page_size bytes followed by @data_size bytes of data (a
 * power of two), and optionally an AUX area.  No fd: pause is a no-op.
 * For unit tests and fuzzers that play the kernel's part.
 */
struct perfctr_ring *ring_new_synthetic(void *base, size_t page_size,
					size_t data_size, bool overwrite,
					void *aux, size_t aux_size,
					bool aux_overwrite);

/*
 * Reserve the bounce buffer that read_next() needs for a record that wraps
 * the end of the data area (as large as the area, at most 64 KiB): after
 * it a pass over a forward ring (read_begin, read_next, consume, read_end,
 * drain) allocates nothing and makes no system call, so it may run in a
 * signal handler.  Return: 0 or -ENOMEM.
 */
int pc_ring_reserve(struct perfctr_ring *ring);

/* PERF_RECORD_* types the kernel header of the build machine may lack. */
#ifndef PERF_RECORD_AUX_OUTPUT_HW_ID
#define PERF_RECORD_AUX_OUTPUT_HW_ID 21
#endif

#endif
