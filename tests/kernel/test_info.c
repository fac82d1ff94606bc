// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr_info() against the machine: every value is checked against
 * /proc and sysfs read here independently, every feature against a probe
 * written here (a direct perf_event_open), and the seed's mask protocol
 * (EOVERFLOW with the needed size written back) call by call.
 *
 * Runs on the PMU-less build VMs and in the PMU lane (arm64 under QEMU,
 * emulated PMUv3 with 6 programmable counters, docs/pmu-lane.md), where
 * the hardware features must be reported.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <perfctr/info.h>

#include "hw_lane.h"

#define MAX_WORDS 64

struct mask_buf {
	uint32_t nrwords;
	uint32_t mask[MAX_WORDS];
};

static int read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return (int)n;
}

static long read_long(const char *path)
{
	char buf[64];

	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* A CPU list ("0-3,6") into a bitmap; returns the highest CPU + 1. */
static int parse_list(const char *s, uint32_t *words, int nwords)
{
	int max = 0;

	memset(words, 0, sizeof(uint32_t) * (size_t)nwords);
	while (*s) {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo, c;

		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (c = lo; c <= hi && c < nwords * 32; c++)
			words[c / 32] |= 1u << (c % 32);
		if (hi + 1 > max)
			max = (int)hi + 1;
		s = *end == ',' ? end + 1 : end;
		if (!*end || *end != ',')
			break;
	}
	return max;
}

static void get_info(struct perfctr_info *info)
{
	memset(info, 0, sizeof(*info));
	info->sz = sizeof(*info);
	REQUIRE(perfctr_info(info, NULL, NULL) == 0);
}

TEST(values_match_proc_and_sysfs)
{
	struct perfctr_info info;
	uint32_t online[MAX_WORDS];
	char buf[256];
	struct utsname uts;
	unsigned cpus = 0;
	int i, n;
	DIR *dir;
	struct dirent *de;
	unsigned pmus = 0;

	get_info(&info);
	REQUIRE(read_text("/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0);
	n = parse_list(buf, online, MAX_WORDS);
	for (i = 0; i < (n + 31) / 32; i++)
		cpus += (unsigned)__builtin_popcount(online[i]);
	CHECK_EQ_INT(info.nr_cpus, cpus);
	CHECK_EQ_INT(info.nr_cpus, sysconf(_SC_NPROCESSORS_ONLN));
	CHECK_EQ_INT(info.paranoid, read_long("/proc/sys/kernel/perf_event_paranoid"));
	CHECK_EQ_INT(info.max_sample_rate,
		     read_long("/proc/sys/kernel/perf_event_max_sample_rate"));
	CHECK_EQ_INT(info.mlock_kb, read_long("/proc/sys/kernel/perf_event_mlock_kb"));
	CHECK_EQ_INT(info.max_stack, read_long("/proc/sys/kernel/perf_event_max_stack"));
	REQUIRE(uname(&uts) == 0);
	CHECK_STR(info.arch, uts.machine);
	dir = opendir("/sys/bus/event_source/devices");
	REQUIRE(dir);
	while ((de = readdir(dir)))
		pmus += de->d_name[0] != '.';
	closedir(dir);
	CHECK_EQ_INT(info.nr_pmus, pmus);
	CHECK(info.nr_pmus >= 3);	/* software, tracepoint, breakpoint */
	CHECK(info.cpu_model[0] != '\0');
}

/* The tracefs mount point from /proc/self/mounts, or "". */
static void tracefs_mount(char *out, size_t size)
{
	char line[1024], dev[256], dir[512], type[64];
	FILE *f = fopen("/proc/self/mounts", "r");

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %511s %63s", dev, dir, type) == 3 &&
		    !strcmp(type, "tracefs") &&
		    (!out[0] || !strcmp(dir, "/sys/kernel/tracing")))
			snprintf(out, size, "%s", dir);
	fclose(f);
}

TEST(tracefs_state)
{
	struct perfctr_info info;
	char mnt[512], path[600];

	get_info(&info);
	tracefs_mount(mnt, sizeof(mnt));
	CHECK_STR(info.tracefs, mnt);
	if (!mnt[0]) {
		CHECK(!(info.features & PERFCTR_FEATURE_TRACEPOINTS));
		test_skip("tracefs is not mounted (tests/run mounts it as root)");
	}
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_getppid/id", mnt);
	if (access(path, R_OK) == 0)
		CHECK(info.features & PERFCTR_FEATURE_TRACEPOINTS);
	else if (geteuid() != 0)
		CHECK(!(info.features & PERFCTR_FEATURE_TRACEPOINTS));
	else
		test_skip("no syscalls:sys_enter_getppid tracepoint to cross-check");
}

static int possible_words(void)
{
	uint32_t words[MAX_WORDS];
	char buf[256];
	int n;

	if (read_text("/sys/devices/system/cpu/possible", buf, sizeof(buf)) <= 0)
		return -1;
	n = parse_list(buf, words, MAX_WORDS);
	return (n + 31) / 32;
}

TEST(mask_protocol_eoverflow_then_right_size)
{
	struct perfctr_info info;
	struct mask_buf cpus, forbidden;
	uint32_t online[MAX_WORDS], possible[MAX_WORDS];
	char buf[256];
	int need = possible_words(), i;

	REQUIRE(need > 0 && need <= MAX_WORDS);
	/* Too small: -EOVERFLOW, the size written back, nothing else. */
	memset(&info, 0xa5, sizeof(info));
	info.sz = sizeof(info);
	memset(&cpus, 0xa5, sizeof(cpus));
	memset(&forbidden, 0xa5, sizeof(forbidden));
	cpus.nrwords = 0;
	forbidden.nrwords = 0;
	errno = 0;
	CHECK_EQ_INT(perfctr_info(&info, (struct perfctr_cpu_mask *)&cpus,
				  (struct perfctr_cpu_mask *)&forbidden), -EOVERFLOW);
	CHECK_EQ_INT(errno, EOVERFLOW);
	CHECK_EQ_INT(cpus.nrwords, need);
	CHECK_EQ_INT(forbidden.nrwords, need);
	CHECK_EQ_U64(cpus.mask[0], 0xa5a5a5a5u);
	CHECK_EQ_U64(info.nr_cpus, 0xa5a5a5a5u);

	/* Only one of the two too small: still -EOVERFLOW. */
	cpus.nrwords = (uint32_t)need;
	forbidden.nrwords = 0;
	CHECK_EQ_INT(perfctr_info(NULL, (struct perfctr_cpu_mask *)&cpus,
				  (struct perfctr_cpu_mask *)&forbidden), -EOVERFLOW);
	CHECK_EQ_INT(forbidden.nrwords, need);

	/* The size asked for: the masks. */
	cpus.nrwords = forbidden.nrwords = (uint32_t)need;
	CHECK_EQ_INT(perfctr_info(&info, (struct perfctr_cpu_mask *)&cpus,
				  (struct perfctr_cpu_mask *)&forbidden), 0);
	CHECK_EQ_INT(cpus.nrwords, need);
	REQUIRE(read_text("/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0);
	parse_list(buf, online, MAX_WORDS);
	REQUIRE(read_text("/sys/devices/system/cpu/possible", buf, sizeof(buf)) > 0);
	parse_list(buf, possible, MAX_WORDS);
	for (i = 0; i < need; i++) {
		CHECK_EQ_U64(cpus.mask[i], online[i]);
		/* Offline CPUs at least; more only with a core PMU that does
		 * not serve every CPU (hybrid parts). */
		CHECK_EQ_U64(forbidden.mask[i] & (possible[i] & ~online[i]),
			     possible[i] & ~online[i]);
		if (!info.core_pmu[0])
			CHECK_EQ_U64(forbidden.mask[i], possible[i] & ~online[i]);
	}

	/* Larger than needed: the needed size back, the extra words zeroed. */
	memset(&cpus, 0xff, sizeof(cpus));
	cpus.nrwords = MAX_WORDS;
	CHECK_EQ_INT(perfctr_info(NULL, (struct perfctr_cpu_mask *)&cpus, NULL), 0);
	CHECK_EQ_INT(cpus.nrwords, need);
	CHECK_EQ_U64(cpus.mask[0], online[0]);
	for (i = need; i < MAX_WORDS; i++)
		CHECK_EQ_U64(cpus.mask[i], 0);
}

TEST(older_and_newer_info_struct)
{
	struct perfctr_info info;
	struct {
		struct perfctr_info info;
		uint64_t future[4];
	} big;
	size_t old_sz = offsetof(struct perfctr_info, nr_pmus);

	/* An older caller's struct ends before nr_pmus: nothing past it is
	 * written. */
	memset(&info, 0xa5, sizeof(info));
	info.sz = old_sz;
	CHECK_EQ_INT(perfctr_info(&info, NULL, NULL), 0);
	CHECK(info.nr_cpus > 0 && info.nr_cpus != 0xa5a5a5a5u);
	CHECK_EQ_U64(info.nr_pmus, 0xa5a5a5a5u);
	/* A newer caller's: its unknown tail is zeroed. */
	memset(&big, 0xa5, sizeof(big));
	big.info.sz = sizeof(big);
	CHECK_EQ_INT(perfctr_info(&big.info, NULL, NULL), 0);
	CHECK_EQ_U64(big.future[3], 0);
	CHECK(big.info.nr_pmus > 0);
	info.sz = 4;
	CHECK_EQ_INT(perfctr_info(&info, NULL, NULL), -EINVAL);
}

static int open_self(struct perf_event_attr *attr)
{
	attr->size = sizeof(*attr);
	return (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
}

static bool can_open(struct perf_event_attr *attr)
{
	int fd = open_self(attr);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

TEST(features_agree_with_direct_probes)
{
	static volatile uint64_t watched;
	struct perf_event_attr attr;
	struct perfctr_info info;
	bool hw;

	get_info(&info);
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.exclude_kernel = attr.exclude_hv = 1;
	attr.disabled = 1;
	hw = can_open(&attr);
	CHECK_EQ_INT(!!(info.features & PERFCTR_FEATURE_HW_EVENTS), hw);

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (uint64_t)(uintptr_t)&watched;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.exclude_kernel = attr.exclude_hv = 1;
	attr.disabled = 1;
	CHECK_EQ_INT(!!(info.features & PERFCTR_FEATURE_BREAKPOINTS), can_open(&attr));
	/* Both kinds of our machines have breakpoints
	 * (docs/kernel-notes.md 16). */
	CHECK(info.features & PERFCTR_FEATURE_BREAKPOINTS);
	/* Overflow notification and sampling work on software events
	 * already; every machine of ours has them. */
	CHECK(info.features & PERFCTR_FEATURE_PCINT);
	CHECK(info.features & PERFCTR_FEATURE_SAMPLING);
	if (!hw) {
		CHECK(!(info.features & (PERFCTR_FEATURE_RDPMC |
					 PERFCTR_FEATURE_MULTIPLEX)));
		CHECK_EQ_INT(info.nr_hw_counters, 0);
	}

	/* TSC: the msr PMU's tsc event, where there is one. */
	{
		long type = read_long("/sys/bus/event_source/devices/msr/type");
		bool tsc = false;

		if (type > 0) {
			memset(&attr, 0, sizeof(attr));
			attr.type = (uint32_t)type;
			attr.config = 0;	/* msr/tsc/ is event=0x00 */
			attr.disabled = 1;
			tsc = can_open(&attr);
		}
		CHECK_EQ_INT(!!(info.features & PERFCTR_FEATURE_TSC), tsc);
	}
}

/* How many instruction events fit in one group, probed here independently
 * of the library (members opened enabled: the kernel validates only those). */
static int group_fits(int n)
{
	struct perf_event_attr attr;
	int fds[80], i, opened = 0;

	for (i = 0; i < n && i < 80; i++) {
		hw_attr(&attr, PERF_COUNT_HW_INSTRUCTIONS);
		attr.disabled = 0;
		fds[i] = hw_open(&attr, i ? fds[0] : -1);
		if (fds[i] < 0)
			break;
		opened++;
	}
	for (i = opened; i-- > 0;)
		close(fds[i]);
	return opened == n;
}

TEST(hardware_pmu_counters)
{
	struct perfctr_info info;

	test_require_hw_pmu();
	get_info(&info);
	CHECK(info.features & PERFCTR_FEATURE_HW_EVENTS);
	CHECK(info.core_pmu[0] != '\0');
	REQUIRE(info.nr_hw_counters > 0);
	CHECK(info.features & PERFCTR_FEATURE_MULTIPLEX);
#if defined(__aarch64__)
	/* The lane's emulated PMUv3 has 6 programmable counters; there the
	 * group probe is exact (the cycle counter takes no instructions). */
	if (hw_armv8_pmu_type() >= 0) {
		CHECK_EQ_INT(info.nr_hw_counters, 6);
		CHECK(group_fits((int)info.nr_hw_counters));
		CHECK(!group_fits((int)info.nr_hw_counters + 1));
	}
#else
	(void)group_fits;
#endif
}

struct walk {
	const struct perfctr_info *info;
	size_t seen;
	char last[128];
};

static int pmu_cb(const struct perfctr_pmu_desc *pmu, void *ctx)
{
	struct walk *w = ctx;
	const struct perfctr_info *info = w->info;
	char path[512];

	/* Name order, types as sysfs says. */
	if (w->last[0] && strcmp(w->last, pmu->name) >= 0)
		test_fail(__FILE__, __LINE__, "PMUs out of order: %s, %s",
			  w->last, pmu->name);
	snprintf(w->last, sizeof(w->last), "%s", pmu->name);
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu->name);
	CHECK_EQ_INT(pmu->type, read_long(path));
	if (!strcmp(pmu->name, "software"))
		CHECK_EQ_INT(pmu->type, PERF_TYPE_SOFTWARE);
	if (!strcmp(pmu->name, "tracepoint"))
		CHECK_EQ_INT(pmu->type, PERF_TYPE_TRACEPOINT);
	if (!strcmp(pmu->name, info->core_pmu))
		CHECK_EQ_INT(pmu->nr_counters, info->nr_hw_counters);
	if (!pmu->core)
		CHECK_EQ_INT(pmu->nr_counters, 0);
	w->seen++;
	return 0;
}

TEST(pmu_walk_agrees_with_info)
{
	struct perfctr_info info;
	struct walk w = { .info = &info };

	get_info(&info);
	REQUIRE(perfctr_info_pmus(NULL, pmu_cb, &w) == 0);
	CHECK_EQ_INT(w.seen, info.nr_pmus);
	CHECK_EQ_INT(perfctr_info_pmus(NULL, NULL, NULL), -EINVAL);
}

#define USER_ACCESS "/proc/sys/kernel/perf_user_access"

TEST(user_read_follows_perf_user_access)
{
	struct perfctr_info info;
	int saved;

	test_require_hw_pmu();
	test_require_root();
	saved = hw_sysctl_get(USER_ACCESS);
	if (saved < 0 || hw_armv8_pmu_type() < 0)
		test_skip("no perf_user_access sysctl or no armv8 PMU here");
	REQUIRE(hw_sysctl_set(USER_ACCESS, 0) == 0);
	get_info(&info);
	CHECK(!(info.features & PERFCTR_FEATURE_RDPMC));
	REQUIRE(hw_sysctl_set(USER_ACCESS, 1) == 0);
	get_info(&info);
	CHECK(info.features & PERFCTR_FEATURE_RDPMC);
	hw_sysctl_set(USER_ACCESS, saved);
}

/* The value after "key": in perfex's JSON, as text ("" when absent). */
static void json_field(const char *doc, const char *key, char *out, size_t size)
{
	char pat[128];
	const char *p;
	size_t n = 0;

	out[0] = '\0';
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(doc, pat);
	if (!p)
		return;
	p += strlen(pat);
	while (p[n] && p[n] != ',' && p[n] != '\n' && p[n] != '}' && n + 1 < size)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* perfex info -j says what perfctr_info() says; in the PMU lane this is
 * the only place perfex's hardware report is checked (no python there). */
TEST(perfex_info_json_agrees)
{
	static char doc[65536];
	const char *perfex = test_build_path("perfex");
	struct perfctr_info info;
	char cmd[4200], v[128];
	size_t n;
	FILE *p;
	int status;

	if (access(perfex, X_OK))
		test_skip("%s is not built", perfex);
	get_info(&info);
	snprintf(cmd, sizeof(cmd), "%s info -j", perfex);
	p = popen(cmd, "r");
	REQUIRE(p);
	n = fread(doc, 1, sizeof(doc) - 1, p);
	doc[n] = '\0';
	status = pclose(p);
	REQUIRE(status == 0);
	json_field(doc, "nr_hw_counters", v, sizeof(v));
	CHECK_EQ_INT(strtol(v, NULL, 10), info.nr_hw_counters);
	json_field(doc, "nr_online", v, sizeof(v));
	CHECK_EQ_INT(strtol(v, NULL, 10), info.nr_cpus);
	json_field(doc, "paranoid", v, sizeof(v));
	CHECK_EQ_INT(strtol(v, NULL, 10), info.paranoid);
	json_field(doc, "hardware_events", v, sizeof(v));
	CHECK_STR(v, info.features & PERFCTR_FEATURE_HW_EVENTS ? "true" : "false");
	json_field(doc, "multiplexing", v, sizeof(v));
	CHECK_STR(v, info.features & PERFCTR_FEATURE_MULTIPLEX ? "true" : "false");
	json_field(doc, "breakpoints", v, sizeof(v));
	CHECK_STR(v, "true");
	json_field(doc, "core_pmu", v, sizeof(v));
	if (info.core_pmu[0]) {
		char quoted[80];

		snprintf(quoted, sizeof(quoted), "\"%s\"", info.core_pmu);
		CHECK_STR(v, quoted);
	} else {
		CHECK_STR(v, "null");
	}
}

/* Run perfex with @args into @buf; its exit status. */
static int run_perfex(const char *args, char *buf, size_t size)
{
	const char *perfex = test_build_path("perfex");
	char cmd[4200];
	size_t n;
	FILE *p;

	if (access(perfex, X_OK))
		test_skip("%s is not built", perfex);
	snprintf(cmd, sizeof(cmd), "%s %s", perfex, args);
	p = popen(cmd, "r");
	REQUIRE(p);
	n = fread(buf, 1, size - 1, p);
	buf[n] = '\0';
	return pclose(p);
}

/* perfex list offers hardware events exactly where perfctr_info() finds
 * them; in the lane the PMU's generic and sysfs events are there. */
TEST(perfex_list_hardware_where_a_pmu_counts)
{
	static char out[1 << 20];
	struct perfctr_info info;

	get_info(&info);
	REQUIRE(run_perfex("list -j hw", out, sizeof(out)) == 0);
	if (info.features & PERFCTR_FEATURE_HW_EVENTS) {
		CHECK(strstr(out, "\"name\": \"cycles\", \"kind\": \"hardware\""));
		CHECK(strstr(out, "\"name\": \"instructions\", \"kind\": \"hardware\""));
	} else {
		CHECK(strstr(out, "\"events\": []"));
	}
	REQUIRE(run_perfex("list", out, sizeof(out)) == 0);
	CHECK(strstr(out, "Software events:\n  cpu-clock "));
	CHECK(!(info.features & PERFCTR_FEATURE_HW_EVENTS) ==
	      !strstr(out, "Hardware events:\n"));
	if (info.features & PERFCTR_FEATURE_TRACEPOINTS)
		CHECK(strstr(out, " syscalls:\n  syscalls:sys_enter_"));
	if (info.core_pmu[0]) {
		char heading[160];

		/* The core PMU's sysfs events, under its own heading. */
		snprintf(heading, sizeof(heading), "\n %s:\n  %s/", info.core_pmu,
			 info.core_pmu);
		CHECK(strstr(out, heading));
	}
}

TEST_MAIN(TEST_CASE(values_match_proc_and_sysfs),
	  TEST_CASE(tracefs_state),
	  TEST_CASE(mask_protocol_eoverflow_then_right_size),
	  TEST_CASE(older_and_newer_info_struct),
	  TEST_CASE(features_agree_with_direct_probes),
	  TEST_CASE(hardware_pmu_counters),
	  TEST_CASE(pmu_walk_agrees_with_info),
	  TEST_CASE(user_read_follows_perf_user_access),
	  TEST_CASE(perfex_info_json_agrees),
	  TEST_CASE(perfex_list_hardware_where_a_pmu_counts))
