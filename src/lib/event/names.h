/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The symbolic event names perf users know: generic hardware, software and
 * generic cache events, spelled and aliased as perf spells them.
 */
#ifndef PERFCTR_EVENT_NAMES_H
#define PERFCTR_EVENT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pc_symbol {
	const char *name;
	uint32_t type;		/* PERF_TYPE_HARDWARE or PERF_TYPE_SOFTWARE */
	uint64_t config;
	const char *alias_of;	/* NULL for the canonical spelling */
	const char *desc;
};

/* The tables, canonical spellings before their aliases. */
extern const struct pc_symbol pc_hw_symbols[];
extern const size_t pc_nr_hw_symbols;
extern const struct pc_symbol pc_sw_symbols[];
extern const size_t pc_nr_sw_symbols;

/* Hardware or software name of @len bytes at @name, or NULL. */
const struct pc_symbol *pc_symbol_find(const char *name, size_t len);

/*
 * Decode a generic cache event name ("L1-dcache-load-misses", "LLC-loads",
 * "dTLB-store-misses", case-insensitive, perf's aliases) into its
 * PERF_TYPE_HW_CACHE config.  Return true when it is one.
 */
bool pc_cache_decode(const char *name, size_t len, uint64_t *config);

/*
 * The canonical cache names, valid combinations only, one per call:
 * @idx from 0 until it returns false.  @buf receives the name.
 */
bool pc_cache_name(size_t idx, char *buf, size_t size, uint64_t *config);

#endif /* PERFCTR_EVENT_NAMES_H */
