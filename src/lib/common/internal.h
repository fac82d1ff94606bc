/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Helpers shared by every layer of the library; not installed. */
#ifndef PERFCTR_INTERNAL_H
#define PERFCTR_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfctr/common.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void pc_print(enum perfctr_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_warn(fmt, ...)  pc_print(PERFCTR_WARN, "libperfctr: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)  pc_print(PERFCTR_INFO, "libperfctr: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) pc_print(PERFCTR_DEBUG, "libperfctr: " fmt, ##__VA_ARGS__)

/* Return -err with errno set, the library's error convention. */
static inline int pc_err(int err)
{
	errno = err;
	return -err;
}

/*
 * The opts convention (see PERFCTR_OPTS): true when @opts is NULL or valid.
 * A larger struct than we know is accepted only if its tail is zero.
 */
bool pc_opts_valid(const void *opts, size_t known_size);

/* The field of @opts, or @def when the caller's struct is too old to have it. */
#define PC_OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))
#define PC_OPTS_GET(opts, field, def) \
	(PC_OPTS_HAS(opts, field) ? (opts)->field : (def))

/* Bounded string helpers: never overflow, always terminate. */
size_t pc_strlcpy(char *dst, const char *src, size_t size);
/*
 * A copy of @s, or NULL for NULL.  When the copy fails, sets *@failed and
 * returns NULL, so a constructor can copy several strings and check once.
 */
char *pc_strdup_or_null(const char *s, bool *failed);

/*
 * Read a whole small file (sysfs, procfs, tracefs) into @buf, NUL
 * terminated, trailing newline removed.  Return its length or -errno.
 */
int pc_read_file(const char *path, char *buf, size_t size);

/* Parse an unsigned integer with full checks (base 0: 0x.., 0.., decimal). */
int pc_parse_u64(const char *s, int base, uint64_t *out);

/* FNV-1a of the string @s: the hash of the library's string tables
 * (inline: it is on their lookup paths). */
static inline uint64_t pc_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/*
 * Grow an open-addressing slot table (linear probing; a slot holds an
 * entry's id + 1, 0 when empty) to twice its size, 256 at first, and put
 * the @nr entries back, entry i at @hash(@arg, i).  Return 0, or -ENOMEM
 * with the table as it was.
 */
int pc_slots_grow(uint32_t **slots, size_t *nslots, size_t nr,
		  uint64_t (*hash)(const void *arg, size_t i), const void *arg);

#endif /* PERFCTR_INTERNAL_H */
