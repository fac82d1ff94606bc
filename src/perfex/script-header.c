/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex script --header: the block perf script --header prints before the
 * samples, from the header features the reader exposes (perfdata.h).
 * perf's lines about the file's layout (header version, data and feature
 * offsets) are not among them; docs/perfex-script.1 lists what differs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "script.h"

static const char *const feature_names[] = {
	[PERFCTR_FEAT_TRACING_DATA] = "TRACING_DATA",
	[PERFCTR_FEAT_BUILD_ID] = "BUILD_ID",
	[PERFCTR_FEAT_HOSTNAME] = "HOSTNAME",
	[PERFCTR_FEAT_OSRELEASE] = "OSRELEASE",
	[PERFCTR_FEAT_VERSION] = "VERSION",
	[PERFCTR_FEAT_ARCH] = "ARCH",
	[PERFCTR_FEAT_NRCPUS] = "NRCPUS",
	[PERFCTR_FEAT_CPUDESC] = "CPUDESC",
	[PERFCTR_FEAT_CPUID] = "CPUID",
	[PERFCTR_FEAT_TOTAL_MEM] = "TOTAL_MEM",
	[PERFCTR_FEAT_CMDLINE] = "CMDLINE",
	[PERFCTR_FEAT_EVENT_DESC] = "EVENT_DESC",
	[PERFCTR_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
	[PERFCTR_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
	[PERFCTR_FEAT_BRANCH_STACK] = "BRANCH_STACK",
	[PERFCTR_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
	[PERFCTR_FEAT_GROUP_DESC] = "GROUP_DESC",
	[PERFCTR_FEAT_AUXTRACE] = "AUXTRACE",
	[PERFCTR_FEAT_STAT] = "STAT",
	[PERFCTR_FEAT_CACHE] = "CACHE",
	[PERFCTR_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
	[PERFCTR_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
	[PERFCTR_FEAT_CLOCKID] = "CLOCKID",
	[PERFCTR_FEAT_DIR_FORMAT] = "DIR_FORMAT",
	[PERFCTR_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO",
	[PERFCTR_FEAT_BPF_BTF] = "BPF_BTF",
	[PERFCTR_FEAT_COMPRESSED] = "COMPRESSED",
	[PERFCTR_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
	[PERFCTR_FEAT_CLOCK_DATA] = "CLOCK_DATA",
	[PERFCTR_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
	[PERFCTR_FEAT_PMU_CAPS] = "PMU_CAPS",
};

#define NR_FEATURES (sizeof(feature_names) / sizeof(feature_names[0]))

static const char *const sample_type_names[] = {
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU",
	"PERIOD", "STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER",
	"STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER", "TRANSACTION",
	"REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP", "DATA_PAGE_SIZE",
	"CODE_PAGE_SIZE", "WEIGHT_STRUCT",
};

static const char *const read_format_names[] = {
	"TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST",
};

static void print_bits(FILE *out, uint64_t value, const char *const *names,
		       size_t nr)
{
	bool first = true;

	for (size_t i = 0; i < 64; i++) {
		if (!(value & (1ULL << i)))
			continue;
		if (i < nr)
			fprintf(out, "%s%s", first ? "" : "|", names[i]);
		else
			fprintf(out, "%s(unknown bit %zu)", first ? "" : "|", i);
		first = false;
	}
}

/* The attr's non-zero fields, in the order and the words of perf's
 * "# event :" lines. */
static void print_attr(FILE *out, const struct perf_event_attr *a)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} flags[] = {
		{ "disabled", 0 }, { "inherit", 1 }, { "pinned", 2 },
		{ "exclusive", 3 }, { "exclude_user", 4 },
		{ "exclude_kernel", 5 }, { "exclude_hv", 6 },
		{ "exclude_idle", 7 }, { "mmap", 8 }, { "comm", 9 },
		{ "freq", 10 }, { "inherit_stat", 11 },
		{ "enable_on_exec", 12 }, { "task", 13 }, { "watermark", 14 },
		{ "precise_ip", 15 }, { "mmap_data", 17 },
		{ "sample_id_all", 18 }, { "exclude_host", 19 },
		{ "exclude_guest", 20 }, { "exclude_callchain_kernel", 21 },
		{ "exclude_callchain_user", 22 }, { "mmap2", 23 },
		{ "comm_exec", 24 }, { "use_clockid", 25 },
		{ "context_switch", 26 }, { "write_backward", 27 },
		{ "namespaces", 28 }, { "ksymbol", 29 }, { "bpf_event", 30 },
		{ "aux_output", 31 }, { "cgroup", 32 }, { "text_poke", 33 },
		{ "build_id", 34 }, { "inherit_thread", 35 },
		{ "remove_on_exec", 36 }, { "sigtrap", 37 },
	};
	uint64_t bits;

	/* The flag bits follow read_format in the attr. */
	memcpy(&bits, (const char *)&a->read_format + sizeof(a->read_format),
	       sizeof(bits));
	fprintf(out, ", type = %" PRIu32 ", size = %" PRIu32, a->type, a->size);
	if (a->config)
		fprintf(out, ", config = %#" PRIx64, (uint64_t)a->config);
	if (a->sample_period)
		fprintf(out, ", { sample_period, sample_freq } = %" PRIu64,
			(uint64_t)a->sample_period);
	if (a->sample_type) {
		fprintf(out, ", sample_type = ");
		print_bits(out, a->sample_type, sample_type_names,
			   sizeof(sample_type_names) / sizeof(sample_type_names[0]));
	}
	if (a->read_format) {
		fprintf(out, ", read_format = ");
		print_bits(out, a->read_format, read_format_names,
			   sizeof(read_format_names) / sizeof(read_format_names[0]));
	}
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		/* precise_ip is two bits wide. */
		uint64_t v = flags[i].bit == 15 ? (bits >> 15) & 3 :
			     (bits >> flags[i].bit) & 1;

		if (v)
			fprintf(out, ", %s = %" PRIu64, flags[i].name, v);
	}
	if (a->wakeup_events)
		fprintf(out, ", { wakeup_events, wakeup_watermark } = %" PRIu32,
			a->wakeup_events);
	if (a->bp_type)
		fprintf(out, ", bp_type = %" PRIu32, a->bp_type);
	if (a->bp_addr)
		fprintf(out, ", { bp_addr, config1 } = %#" PRIx64,
			(uint64_t)a->bp_addr);
	if (a->bp_len)
		fprintf(out, ", { bp_len, config2 } = %#" PRIx64,
			(uint64_t)a->bp_len);
	if (a->branch_sample_type)
		fprintf(out, ", branch_sample_type = %#" PRIx64,
			(uint64_t)a->branch_sample_type);
	if (a->sample_regs_user)
		fprintf(out, ", sample_regs_user = %#" PRIx64,
			(uint64_t)a->sample_regs_user);
	if (a->sample_stack_user)
		fprintf(out, ", sample_stack_user = %" PRIu32,
			a->sample_stack_user);
	if (a->clockid)
		fprintf(out, ", clockid = %d", (int)a->clockid);
	if (a->sample_regs_intr)
		fprintf(out, ", sample_regs_intr = %#" PRIx64,
			(uint64_t)a->sample_regs_intr);
	if (a->aux_watermark)
		fprintf(out, ", aux_watermark = %" PRIu32, a->aux_watermark);
	if (a->sample_max_stack)
		fprintf(out, ", sample_max_stack = %u",
			(unsigned int)a->sample_max_stack);
}

/* HEADER_PMU_MAPPINGS: a count, then (type, string) pairs, each string
 * a 32-bit length and that many bytes (NUL-padded). */
static void print_pmu_mappings(FILE *out, const unsigned char *p, size_t size)
{
	uint32_t nr, type, len;
	size_t off = 4;

	if (size < 4)
		return;
	memcpy(&nr, p, 4);
	fprintf(out, "# pmu mappings: ");
	for (uint32_t i = 0; i < nr; i++) {
		if (off + 8 > size)
			break;
		memcpy(&type, p + off, 4);
		memcpy(&len, p + off + 4, 4);
		off += 8;
		if (len > size - off)
			break;
		fprintf(out, "%s%.*s = %" PRIu32, i ? ", " : "", (int)strnlen(
			(const char *)p + off, len), (const char *)p + off, type);
		off += len;
	}
	fprintf(out, "\n");
}

static void print_string(FILE *out, struct perfctr_perfdata *pd,
			 unsigned int feat, const char *label)
{
	const char *s = perfctr_perfdata__string(pd, feat);

	if (s)
		fprintf(out, "# %s : %s\n", label, s);
}

void script_print_header(struct perfctr_reader *rd, const char *path, FILE *out)
{
	struct perfctr_perfdata *pd = perfctr_reader__perfdata(rd);
	const char *const *argv;
	const void *data;
	uint32_t avail, online;
	uint64_t first, last, mem;
	size_t size, n;
	struct stat st;
	char when[64];
	int argc;

	fprintf(out, "# ========\n");
	if (!stat(path, &st) && ctime_r(&st.st_mtime, when))
		fprintf(out, "# captured on    : %s", when);
	print_string(out, pd, PERFCTR_FEAT_HOSTNAME, "hostname");
	print_string(out, pd, PERFCTR_FEAT_OSRELEASE, "os release");
	print_string(out, pd, PERFCTR_FEAT_VERSION, "perf version");
	print_string(out, pd, PERFCTR_FEAT_ARCH, "arch");
	if (!perfctr_perfdata__nr_cpus(pd, &avail, &online))
		fprintf(out, "# nrcpus online : %" PRIu32 "\n# nrcpus avail : %"
			PRIu32 "\n", online, avail);
	print_string(out, pd, PERFCTR_FEAT_CPUDESC, "cpudesc");
	print_string(out, pd, PERFCTR_FEAT_CPUID, "cpuid");
	if (!perfctr_perfdata__feature(pd, PERFCTR_FEAT_TOTAL_MEM, &data, &size) &&
	    size >= sizeof(mem)) {
		memcpy(&mem, data, sizeof(mem));
		fprintf(out, "# total memory : %" PRIu64 " kB\n", mem);
	}
	argc = perfctr_perfdata__cmdline(pd, &argv);
	if (argc >= 0) {
		fprintf(out, "# cmdline : ");
		for (int i = 0; i < argc; i++)
			fprintf(out, "%s ", argv[i]);
		fprintf(out, "\n");
	}
	n = perfctr_reader__nr_events(rd);
	for (size_t i = 0; i < n && perfctr_perfdata__has_feature(pd,
					PERFCTR_FEAT_EVENT_DESC); i++) {
		const struct perf_event_attr *attr = perfctr_perfdata__attr(pd, i);
		const uint64_t *ids;
		size_t nr_ids = perfctr_perfdata__attr_ids(pd, i, &ids);

		if (!attr)
			continue;
		fprintf(out, "# event : name = %s, ", perfctr_reader__event_name(rd, i));
		if (nr_ids) {
			fprintf(out, ", id = {");
			for (size_t k = 0; k < nr_ids; k++)
				fprintf(out, "%s %" PRIu64, k ? "," : "", ids[k]);
			fprintf(out, " }");
		}
		print_attr(out, attr);
		fprintf(out, "\n");
	}
	/* perf names these sections and shows them only with -I. */
	if (perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_CPU_TOPOLOGY))
		fprintf(out, "# CPU_TOPOLOGY info available, use -I to display\n");
	if (perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_NUMA_TOPOLOGY))
		fprintf(out, "# NUMA_TOPOLOGY info available, use -I to display\n");
	if (!perfctr_perfdata__feature(pd, PERFCTR_FEAT_PMU_MAPPINGS, &data, &size))
		print_pmu_mappings(out, data, size);
	if (perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_CACHE))
		fprintf(out, "# CACHE info available, use -I to display\n");
	if (!perfctr_perfdata__sample_time(pd, &first, &last)) {
		fprintf(out, "# time of first sample : %" PRIu64 ".%06" PRIu64 "\n",
			first / 1000000000, first % 1000000000 / 1000);
		fprintf(out, "# time of last sample : %" PRIu64 ".%06" PRIu64 "\n",
			last / 1000000000, last % 1000000000 / 1000);
		fprintf(out, "# sample duration : %10.3f ms\n",
			(double)(last - first) / 1e6);
	}
	if (perfctr_perfdata__has_feature(pd, PERFCTR_FEAT_MEM_TOPOLOGY))
		fprintf(out, "# MEM_TOPOLOGY info available, use -I to display\n");
	fprintf(out, "# missing features: ");
	for (size_t f = 1; f < NR_FEATURES; f++)
		if (!perfctr_perfdata__has_feature(pd, (unsigned int)f))
			fprintf(out, "%s ", feature_names[f]);
	fprintf(out, "\n# ========\n#\n");
}
