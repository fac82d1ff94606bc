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

/* PERF_RECORD_* types the kernel header of the build machine may lack. */
#ifndef PERF_RECORD_AUX_OUTPUT_HW_ID
#define PERF_RECORD_AUX_OUTPUT_HW_ID 21
#endif

#endif
