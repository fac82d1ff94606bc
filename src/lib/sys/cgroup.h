/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * cgroup v2 discovery: where the unified hierarchy is mounted (read from
 * the mount table, never assumed: it is /sys/fs/cgroup on pure v2 systems
 * and /sys/fs/cgroup/unified on hybrid ones) and opening a cgroup's
 * directory, the handle perf_event_open(2) takes with PERF_FLAG_PID_CGROUP.
 */
#ifndef PERFCTR_SYS_CGROUP_H
#define PERFCTR_SYS_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* For hints: how a cgroup2 hierarchy is mounted on a hybrid system. */
#define PC_CGROUP2_MOUNT_HINT \
	"mount -t cgroup2 none /sys/fs/cgroup/unified"

/*
 * The mount point of the first cgroup2 file system in @mountinfo (a file
 * in the format of /proc/self/mountinfo; NULL for that one), one whose root
 * is the hierarchy's root preferred, copied to @out.
 * Return: 0, -ENOMEDIUM when no cgroup2 is mounted, -ENAMETOOLONG, or the
 * open's -errno.
 */
int pc_cgroup2_mount(const char *mountinfo, char *out, size_t size);

/*
 * Open cgroup @path read-only as a directory (O_CLOEXEC): an absolute path
 * that is on a cgroup2 file system as it is, anything else relative to the
 * cgroup2 mount (leading slashes ignored, so "/" and "" are the root
 * cgroup and "/a/b" is the cgroup /proc/PID/cgroup calls "0::/a/b").  The
 * directory's full path is copied to @out when @out is non-NULL.
 * Return: the fd, -ENOMEDIUM without cgroup2, -ENOENT when there is no
 * such cgroup, -ENOTDIR, -EACCES, -ENAMETOOLONG.
 */
int pc_cgroup2_open(const char *path, char *out, size_t size);

/*
 * The id of the cgroup whose directory is open as @fd: the one the
 * kernel's BPF helpers (bpf_get_current_cgroup_id()) name it by.
 * Return: 0, or fstat's -errno.
 */
int pc_cgroup2_id(int fd, uint64_t *id);

#endif /* PERFCTR_SYS_CGROUP_H */
