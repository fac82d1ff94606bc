// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/internal.h"
#include "sys/broker.h"
#include "sys/sys.h"

static int open_direct(struct perf_event_attr *attr, pid_t pid, int cpu,
		       int group_fd, unsigned long flags)
{
	long fd;

	if (!attr->size)
		attr->size = sizeof(*attr);
	fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
		     (flags & ~PC_SYS_NO_BROKER) | PERF_FLAG_FD_CLOEXEC);
	return fd >= 0 ? (int)fd : -errno;
}

/* Whether the broker is to be asked after the kernel said @err. */
static bool broker_may_help(int err, unsigned long flags)
{
	return (err == -EACCES || err == -EPERM) &&
	       !(flags & PC_SYS_NO_BROKER) && pc_broker_enabled();
}

/* The kernel refused the open with @err: the broker's descriptor, or the
 * error that stands. */
static int open_brokered(struct perf_event_attr *attr, pid_t pid, int cpu,
			 int group_fd, unsigned long flags, int err)
{
	char why[256];
	int bfd;

	if (!broker_may_help(err, flags))
		return err;
	bfd = pc_broker_open(attr, pid, cpu, group_fd,
			     flags & ~PC_SYS_NO_BROKER, why, sizeof(why));
	if (bfd >= 0)
		return bfd;
	pr_debug("perfctrd refused the open: %s: %s\n", strerror(-bfd), why);
	/* No broker listening (no socket, or nobody on it): the kernel's
	 * answer stands.  A broker that answered gave its reason, and its
	 * ENOENT is its kernel's (no such event), to be reported as such. */
	return why[0] || (bfd != -ENOENT && bfd != -ECONNREFUSED) ? bfd : err;
}

int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags)
{
	int fd;

	pc_broker_forget_refusal();
	fd = open_direct(attr, pid, cpu, group_fd, flags);
	if (fd < 0)
		fd = open_brokered(attr, pid, cpu, group_fd, flags, fd);
	if (fd < 0)
		errno = -fd;
	return fd;
}

/*
 * @n opens in order, each tried directly first: once the kernel refuses
 * one and the broker may help, the rest go to the broker in one round
 * trip.  @group: the events make a group (the first joins @group_fd when
 * it is one, else leads), else they are independent.  Refused, they are
 * asked for one by one, as without batches, so that the events the kernel
 * or the broker allows are open and the refusal is the failing event's
 * own.
 */
static int open_set(struct perf_event_attr *attrs, size_t n, pid_t pid,
		    int cpu, bool group, int group_fd, unsigned long flags,
		    int *fds, size_t *opened)
{
	bool batch = true;
	size_t i;

	*opened = 0;
	for (i = 0; i < n; i++) {
		int leader = !group ? -1 : group_fd >= 0 ? group_fd :
			     i ? fds[0] : -1;
		int fd;

		pc_broker_forget_refusal();
		fd = open_direct(&attrs[i], pid, cpu, leader, flags);
		if (fd < 0 && batch && n - i > 1 &&
		    broker_may_help(fd, flags)) {
			unsigned long bflags = flags & ~PC_SYS_NO_BROKER;
			char why[256];
			size_t k;
			int ret;

			for (k = i + 1; k < n; k++)
				if (!attrs[k].size)
					attrs[k].size = sizeof(attrs[k]);
			ret = group ?
			      pc_broker_open_group(&attrs[i], n - i, pid, cpu,
						   leader, bflags, &fds[i], why,
						   sizeof(why)) :
			      pc_broker_open_many(&attrs[i], n - i, pid, cpu,
						  bflags, &fds[i], why,
						  sizeof(why));
			if (!ret) {
				*opened = n;
				return 0;
			}
			pr_debug("perfctrd refused the %s: %s\n",
				 group ? "group" : "events", why);
			batch = false;
			pc_broker_forget_refusal();
		}
		if (fd < 0)
			fd = open_brokered(&attrs[i], pid, cpu, leader, flags,
					   fd);
		if (fd < 0) {
			errno = -fd;
			return fd;
		}
		fds[i] = fd;
		*opened = i + 1;
	}
	return 0;
}

int sys_perf_event_open_group(struct perf_event_attr *attrs, size_t n,
			      pid_t pid, int cpu, int group_fd,
			      unsigned long flags, int *fds, size_t *opened)
{
	return open_set(attrs, n, pid, cpu, true, group_fd, flags, fds,
			opened);
}

int sys_perf_event_open_many(struct perf_event_attr *attrs, size_t n,
			     pid_t pid, int cpu, unsigned long flags,
			     int *fds, size_t *opened)
{
	return open_set(attrs, n, pid, cpu, false, -1, flags, fds, opened);
}

static int perf_ioctl(int fd, unsigned long request, unsigned long arg)
{
	if (ioctl(fd, request, arg) < 0)
		return -errno;
	return 0;
}

int sys_perf_enable(int fd, bool group)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_ENABLE, group ? PERF_IOC_FLAG_GROUP : 0);
}

int sys_perf_disable(int fd, bool group)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_DISABLE, group ? PERF_IOC_FLAG_GROUP : 0);
}

int sys_perf_reset(int fd, bool group)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_RESET, group ? PERF_IOC_FLAG_GROUP : 0);
}

int sys_perf_refresh(int fd, int count)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_REFRESH, (unsigned long)count);
}

int sys_perf_period(int fd, uint64_t period)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_PERIOD, (unsigned long)&period);
}

int sys_perf_set_output(int fd, int target_fd)
{
	/* The argument is read as a long: int -1 would be EBADF. */
	long target = target_fd;

	return perf_ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)target);
}

int sys_perf_set_filter(int fd, const char *filter)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_SET_FILTER, (unsigned long)filter);
}

int sys_perf_id(int fd, uint64_t *id)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_ID, (unsigned long)id);
}

int sys_perf_pause_output(int fd, bool pause)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, pause ? 1 : 0);
}

int sys_perf_modify_attributes(int fd, struct perf_event_attr *attr)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, (unsigned long)attr);
}

ssize_t sys_perf_read(int fd, void *buf, size_t size)
{
	ssize_t n;

	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != size && n == 0)
		return pc_err(EIO);
	return n;
}

size_t sys_page_size(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

void *sys_perf_mmap(int fd, size_t data_pages, bool writable, int *err)
{
	size_t len = (1 + data_pages) * sys_page_size();
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	void *base = mmap(NULL, len, prot, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED) {
		if (err)
			*err = -errno;
		return NULL;
	}
	if (err)
		*err = 0;
	return base;
}

void *sys_perf_mmap_aux(int fd, uint64_t offset, size_t size, bool writable,
			int *err)
{
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	void *base = mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)offset);

	if (base == MAP_FAILED) {
		if (err)
			*err = -errno;
		return NULL;
	}
	if (err)
		*err = 0;
	return base;
}

int sys_perf_munmap(void *base, size_t data_pages)
{
	if (munmap(base, (1 + data_pages) * sys_page_size()) < 0)
		return -errno;
	return 0;
}

int sys_online_cpus(char *buf, size_t size)
{
	return pc_read_file("/sys/devices/system/cpu/online", buf, size);
}

int sys_nr_possible_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (int)n : 1;
}

int sys_paranoid_level(int *level)
{
	char buf[32];
	char *end;
	long v;
	int n = pc_read_file("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf));

	if (n < 0)
		return n;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*level = (int)v;
	return 0;
}
