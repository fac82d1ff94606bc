/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Perf map files: the names a JIT runtime gives its code, written to
 * /tmp/perf-PID.map as lines of "START SIZE NAME" (hex, no 0x needed).
 * They name the addresses of a process's anonymous executable maps, where
 * no file holds symbols.  The symbols object owns one pc_perfmaps and asks
 * it about every address that falls in such a map.
 *
 * A file is read when its process is first looked up, so what a runtime
 * wrote until then counts (a report reads it after the recording: the
 * whole file).  When an address is not found and the file has grown since,
 * it is read again.  Where entries overlap, the first one in the file
 * names the address, as perf's lookup does for a start address listed
 * twice.
 */
#ifndef PC_SAMPLE_PERFMAP_H
#define PC_SAMPLE_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pc_perfmaps;

/* Whether @filename (of an executable map) is memory that perf looks up
 * in the perf map: anonymous ("//anon", /dev/zero, /anon_hugepage) or
 * without a file ("[heap]", "[stack...", /SYSV...).  Not named anonymous
 * memory ("[anon:NAME]", prctl PR_SET_VMA_ANON_NAME): perf 6.1 takes the
 * name for a file's, finds none and leaves its samples unnamed. */
bool pc_perfmap_is_anon(const char *filename);

/* Return: a new table, files read under @root (NULL: /), or NULL + errno. */
struct pc_perfmaps *pc_perfmaps__new(const char *root);
void pc_perfmaps__delete(struct pc_perfmaps *maps);

/* Forget what was read: the next lookup reads the files again. */
void pc_perfmaps__forget(struct pc_perfmaps *maps);

/*
 * @ip in process @pid's perf map.  *@dso is set to the map's path
 * ("/tmp/perf-PID.map", the name perf gives such code whether or not the
 * file exists), valid until __forget or __delete.
 * Return: the entry's name (valid as long as *@dso) with *@start set, or
 * NULL when no entry covers @ip (or the file is absent or unreadable).
 */
const char *pc_perfmaps__lookup(struct pc_perfmaps *maps, pid_t pid,
				uint64_t ip, const char **dso, uint64_t *start);

/*
 * Parse perf map text (@len bytes) into a lookup table, for the reader
 * above and the unit tests.  Lines that are not "START SIZE NAME" are
 * skipped.  Return: the table, or NULL + errno (ENOMEM).
 */
struct pc_perfmap;
struct pc_perfmap *pc_perfmap__parse(const char *text, size_t len);
const char *pc_perfmap__find(const struct pc_perfmap *map, uint64_t ip,
			     uint64_t *start);
size_t pc_perfmap__nr_entries(const struct pc_perfmap *map);
void pc_perfmap__delete(struct pc_perfmap *map);

#endif /* PC_SAMPLE_PERFMAP_H */
