/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * tracefs discovery: where it is mounted, tracepoint ids, and a sorted walk
 * over every tracepoint.  Reads files only; the library never mounts.
 * The root is a parameter so tests can use a fixture tree.
 */
#ifndef PERFCTR_SYS_TRACEFS_H
#define PERFCTR_SYS_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

/* The command that mounts tracefs, for hints. */
#define PC_TRACEFS_MOUNT_HINT "mount -t tracefs nodev /sys/kernel/tracing"

/*
 * The root that stands for "ask the access broker": tracefs is mounted but
 * this user cannot read it, and perfctrd listens (sys/broker.h).  The
 * functions below take it like a directory; its tracepoints are those the
 * broker's policy lets this user name.
 */
#define PC_TRACEFS_BROKER "perfctrd:"

/*
 * Resolve the tracefs root: @root when non-NULL, else /sys/kernel/tracing,
 * then /sys/kernel/debug/tracing, else (unreadable, with a broker there)
 * PC_TRACEFS_BROKER.  The chosen root is copied to @out.
 * Return: 0, -ENOTDIR when not mounted, -EACCES when unreadable,
 * -ENAMETOOLONG.
 */
int pc_tracefs_root(const char *root, char *out, size_t size);

/* The id of @sys:@name.  Return 0, -ENOENT, -EACCES or -EINVAL (bad id). */
int pc_tracefs_id(const char *root, const char *sys, const char *name,
		  uint64_t *id);

typedef int (*pc_tracepoint_cb)(const char *sys, const char *name, void *ctx);

/*
 * Call @cb for every tracepoint whose subsystem matches the fnmatch pattern
 * @sys_glob and whose name matches @name_glob (NULL: all), in sorted order.
 * A non-zero return from @cb stops the walk and is returned.
 * Return: 0, the callback's value, or a negative errno.
 */
int pc_tracefs_walk(const char *root, const char *sys_glob,
		    const char *name_glob, pc_tracepoint_cb cb, void *ctx);

#endif /* PERFCTR_SYS_TRACEFS_H */
