/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The sys layer: the kernel interface and nothing else.  Thin wrappers
 * around perf_event_open(2), its ioctls and mmap; no policy.  Every
 * function returns >= 0 on success or a negative errno (errno set too).
 *
 * Discovery of PMUs (sysfs) and tracepoints (tracefs) lives in pmu.h and
 * tracefs.h beside this file; their roots are parameters so tests can point
 * them at fixture trees.
 */
#ifndef PERFCTR_SYS_H
#define PERFCTR_SYS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * perf_event_open(2).  Adds PERF_FLAG_FD_CLOEXEC always.  Returns fd or
 * -errno.  When the kernel refuses with EACCES or EPERM and an access
 * broker (perfctrd) listens, the broker is asked to open the event
 * instead (sys/broker.h), unless @flags has PC_SYS_NO_BROKER or the
 * environment has PERFCTR_NO_BROKER set.
 */
#define PC_SYS_NO_BROKER (1ul << 31)	/* no kernel flag is that high */
int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags);

/*
 * perf_event_open(2) of the @n events @attrs in order, as one group: the
 * first joins @group_fd when it is one, else leads the others.  The same
 * as @n calls of sys_perf_event_open(), but where the kernel refuses and
 * the broker is asked, the rest go to it in one round trip.  Return 0
 * (*@opened = @n), or the -errno of @attrs[*@opened], whose earlier
 * members are open in @fds (the caller's to use or close).
 */
int sys_perf_event_open_group(struct perf_event_attr *attrs, size_t n,
			      pid_t pid, int cpu, int group_fd,
			      unsigned long flags, int *fds, size_t *opened);

/*
 * perf_event_open(2) of the @n independent events @attrs, in order, each
 * its own group, all on one target (@pid or the cgroup fd of
 * PERF_FLAG_PID_CGROUP, @cpu).  The same as @n calls of
 * sys_perf_event_open() with no group fd, and as many system calls when
 * the kernel allows them all; where it refuses one and the broker is
 * asked, the rest go to it in one round trip.  Return 0 (*@opened = @n),
 * or the -errno of @attrs[*@opened], whose earlier events are open in
 * @fds (the caller's to use or close), and whose broker refusal, if any,
 * is pc_broker_refusal()'s.
 */
int sys_perf_event_open_many(struct perf_event_attr *attrs, size_t n,
			     pid_t pid, int cpu, unsigned long flags,
			     int *fds, size_t *opened);

int sys_perf_enable(int fd, bool group);
int sys_perf_disable(int fd, bool group);
int sys_perf_reset(int fd, bool group);
int sys_perf_refresh(int fd, int count);
int sys_perf_period(int fd, uint64_t period);
/* SET_OUTPUT: @target_fd -1 resets (the kernel needs a long -1, an int -1
 * is EBADF: docs/kernel-notes.md 7). */
int sys_perf_set_output(int fd, int target_fd);
int sys_perf_set_filter(int fd, const char *filter);
int sys_perf_id(int fd, uint64_t *id);
int sys_perf_pause_output(int fd, bool pause);
int sys_perf_modify_attributes(int fd, struct perf_event_attr *attr);

/* read(2) of a counter fd, retried on EINTR; -EIO on a short read. */
ssize_t sys_perf_read(int fd, void *buf, size_t size);

/* mmap of 1 + @data_pages pages (0 = user page only). */
void *sys_perf_mmap(int fd, size_t data_pages, bool writable, int *err);
int sys_perf_munmap(void *base, size_t data_pages);
/* mmap of the AUX area: @size bytes at file offset @offset (the values
 * written to the user page's aux_offset / aux_size first). */
void *sys_perf_mmap_aux(int fd, uint64_t offset, size_t size, bool writable,
			int *err);

size_t sys_page_size(void);

/* The running CPU count and the online CPU list ("0-3,5"). */
int sys_online_cpus(char *buf, size_t size);
int sys_nr_possible_cpus(void);

/* /proc/sys/kernel/perf_event_paranoid, or -errno. */
int sys_paranoid_level(int *level);

#endif /* PERFCTR_SYS_H */
