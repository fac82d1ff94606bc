/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The DWARF unwinder of the sample reader: the user frames of a sample
 * that carries the user registers and a copy of the top of the user stack
 * (perf record --call-graph dwarf), found with the CFI of the files the
 * process had mapped (a symbols object's model of it).
 */
#ifndef PC_SAMPLE_UNWIND_H
#define PC_SAMPLE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfctr/reader.h"
#include "perfctr/record.h"
#include "perfctr/symbols.h"

struct pc_unwinder;

/* An unwinder over @syms (kept, not owned) for a file recorded on @arch
 * (perf.data's HEADER_ARCH, "x86_64", "aarch64"; NULL: this machine's).
 * NULL + errno: ENOMEM. */
struct pc_unwinder *pc_unwinder__new(struct perfctr_symbols *syms,
				     const char *arch);
void pc_unwinder__delete(struct pc_unwinder *u);

/* Whether sample @s has what an unwind needs (user registers and stack). */
bool pc_unwinder__applies(const struct perfctr_sample *s);

/*
 * The user frames of sample @s, innermost first, into @ips (at most @max):
 * each frame's pc, a return address for every frame but those that are
 * where the thread was interrupted (@exact[i] set).  *@stop is how the
 * chain ended: -1 at the outermost frame, else an enum
 * perfctr_unwind_stop.
 * Return: the number of frames.
 */
size_t pc_unwinder__unwind(struct pc_unwinder *u,
			   const struct perfctr_sample *s, uint64_t *ips,
			   bool *exact, size_t max, int *stop);

#endif /* PC_SAMPLE_UNWIND_H */
