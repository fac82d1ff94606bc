/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Shared pieces of the hardware-tier tests (tests/kernel/test_hw_*.c).
 * They run for real in the PMU lane (arm64 kernel under QEMU, emulated
 * PMUv3, scripts/pmu-lane/run) and skip with their reason elsewhere.
 *
 * hw_loop(n) is a loop written in assembly so that its instruction count
 * is fixed: n iterations of HW_LOOP_INSNS instructions, plus a constant.
 * Only the difference between two loop lengths is asserted, so the
 * constant (call, return, the ioctl wrappers' user-mode instructions)
 * cancels out.
 *
 * The first run in a process counts a few instructions more (19 or 29
 * instead of 18 for n = 1, seen in the lane): the first-touch page faults
 * taken inside the counting window are not accounted exactly at the
 * user/kernel boundary by the emulated PMU.  Exact tests run the measured
 * code once before measuring.
 */
#ifndef PERFCTR_HW_LANE_H
#define PERFCTR_HW_LANE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test.h"

#define HW_LOOP_INSNS 4

/* Event numbers of the Armv8 PMUv3 (the sysfs names cpu_cycles and
 * inst_retired); the lane's PMU has these and the stall events only. */
#define ARMV8_CPU_CYCLES   0x11
#define ARMV8_INST_RETIRED 0x08
/* Format bits in config1 of the armv8_pmuv3 PMU (sysfs format/). */
#define ARMV8_CONFIG1_LONG  0x1
#define ARMV8_CONFIG1_RDPMC 0x2

#if defined(__aarch64__)
void hw_loop(unsigned long n);
extern const char hw_loop_end[];
__asm__(".text\n"
	".globl hw_loop\n"
	".type hw_loop, %function\n"
	".p2align 4\n"
	"hw_loop:\n"
	"1:	add x1, x1, #1\n"
	"	nop\n"
	"	subs x0, x0, #1\n"
	"	b.ne 1b\n"
	".globl hw_loop_end\n"
	"hw_loop_end:\n"
	"	ret\n"
	".size hw_loop, .-hw_loop\n");
#define HW_HAVE_LOOP 1
static inline const void *hw_loop_addr(void) { return (const void *)hw_loop; }
static inline const void *hw_loop_end_addr(void) { return hw_loop_end; }
#else
#define HW_HAVE_LOOP 0
static inline void hw_loop(unsigned long n) { (void)n; }
static inline const void *hw_loop_addr(void) { return NULL; }
static inline const void *hw_loop_end_addr(void) { return NULL; }
#endif

/* A hardware PMU, and the fixed-length loop for this architecture. */
static inline void hw_require_lane(void)
{
	test_require_hw_pmu();
	if (!HW_HAVE_LOOP)
		test_skip("the fixed-length loop is written for aarch64 only");
}

static inline int hw_open(struct perf_event_attr *attr, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, attr, 0, -1, group_fd, 0);
}

/* A user-mode-only counting attr of a generic hardware event. */
static inline void hw_attr(struct perf_event_attr *attr, uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_HARDWARE;
	attr->config = config;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING;
}

/* The dynamic type of the PMU that has an inst_retired event in sysfs
 * (the armv8_pmuv3 PMU), or -1. */
static inline int hw_armv8_pmu_type(void)
{
	const char *base = "/sys/bus/event_source/devices";
	DIR *dir = opendir(base);
	struct dirent *de;
	int type = -1;

	if (!dir)
		return -1;
	while (type < 0 && (de = readdir(dir))) {
		char path[512], buf[32];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/events/inst_retired",
			 base, de->d_name);
		if (access(path, R_OK))
			continue;
		snprintf(path, sizeof(path), "%s/%s/type", base, de->d_name);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f))
			type = (int)strtol(buf, NULL, 10);
		if (f)
			fclose(f);
	}
	closedir(dir);
	return type;
}

struct hw_value {
	uint64_t value, enabled, running;
};

static inline int hw_read(int fd, struct hw_value *v)
{
	return read(fd, v, sizeof(*v)) == (ssize_t)sizeof(*v) ? 0 : -1;
}

/* User-mode count of one run of hw_loop(n) between ENABLE and DISABLE.
 * Never inlined: the instructions around the loop must be the same code
 * for every n, or the difference between two lengths is not exact. */
static __attribute__((noinline, unused)) uint64_t hw_count_loop(int fd, unsigned long n)
{
	struct hw_value v;

	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	hw_loop(n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (hw_read(fd, &v))
		return UINT64_MAX;
	return v.value;
}

/* Read or write a small sysctl; -1 when it does not exist. */
static inline int hw_sysctl_get(const char *path)
{
	char buf[32];
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f && fgets(buf, sizeof(buf), f))
		v = (int)strtol(buf, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static inline int hw_sysctl_set(const char *path, int value)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return -1;
	rc = fprintf(f, "%d\n", value) > 0 ? 0 : -1;
	if (fclose(f))
		rc = -1;
	return rc;
}

/* The sysctl that lets user space read the armv8 PMU's counters. */
#define HW_USER_ACCESS "/proc/sys/kernel/perf_user_access"

/* Its value before the test changed it, -1 until then. */
static int hw_saved_access = -1;

/* Allow (1) or forbid (0) user-space counter reads, as root on a machine
 * with an armv8 PMU; skips the test elsewhere.  The first call saves the
 * value for hw_restore_user_access(). */
static inline void hw_set_user_access(int on)
{
	test_require_root();
	if (hw_armv8_pmu_type() < 0 || access(HW_USER_ACCESS, W_OK))
		test_skip("no armv8 PMU with " HW_USER_ACCESS " here");
	if (hw_saved_access < 0)
		hw_saved_access = hw_sysctl_get(HW_USER_ACCESS);
	REQUIRE(hw_sysctl_set(HW_USER_ACCESS, on) == 0);
}

static inline void hw_restore_user_access(void)
{
	if (hw_saved_access >= 0)
		hw_sysctl_set(HW_USER_ACCESS, hw_saved_access);
}

/* A set-up that failed: report it, put the sysctl back, end the case. */
#define HW_ABORT(...)							\
	do {								\
		test_fail(__FILE__, __LINE__, __VA_ARGS__);		\
		hw_restore_user_access();				\
		test_abort();						\
	} while (0)

/* A user-mode-only attr of armv8 PMU event @event with @config1 (its
 * format bits: ARMV8_CONFIG1_*), enabled. */
static inline void hw_armv8_attr(struct perf_event_attr *attr, uint64_t event,
				 uint64_t config1)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = (uint32_t)hw_armv8_pmu_type();
	attr->config = event;
	attr->config1 = config1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

#endif /* PERFCTR_HW_LANE_H */
