// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex info — what this machine can count, and what to do about what it
 * cannot: the seed's sys_perfctr_info() for people (and, with -j, for
 * programs: docs/json-info.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfctr/perfctr.h>

#include "json-out.h"
#include "options.h"
#include "perfex.h"

#define INFO_SCHEMA_VERSION 1

struct feature {
	uint32_t bit;
	const char *key;	/* JSON */
	const char *name;	/* text */
	const char *enables;
};

static const struct feature features[] = {
	{ PERFCTR_FEATURE_HW_EVENTS, "hardware_events", "hardware events",
	  "cycles, instructions, cache and branch events (a hardware PMU)" },
	{ PERFCTR_FEATURE_RDPMC, "user_read", "user-space counter read",
	  "reading a counter without a system call (vperfctr_read_fast)" },
	{ PERFCTR_FEATURE_PCINT, "overflow_interrupts", "overflow interrupts",
	  "a signal or wake-up every N events (interrupt-mode counters)" },
	{ PERFCTR_FEATURE_SAMPLING, "sampling", "sampling",
	  "samples in a ring buffer (perfex record)" },
	{ PERFCTR_FEATURE_MULTIPLEX, "multiplexing", "multiplexing",
	  "more hardware events than counters, scaled by the kernel" },
	{ PERFCTR_FEATURE_TRACEPOINTS, "tracepoints", "tracepoints",
	  "exact counts of kernel events (syscalls:*, sched:*, ...)" },
	{ PERFCTR_FEATURE_BREAKPOINTS, "breakpoints", "breakpoints",
	  "counting reads, writes or calls of an address (mem:ADDR)" },
	{ PERFCTR_FEATURE_TSC, "tsc", "virtual TSC",
	  "per-thread time-stamp counts (msr/tsc/)" },
};

struct library {
	const char *key;
	const char *name;
	bool built_in;
	const char *without;
};

static const struct library libraries[] = {
	{ "libpfm", "libpfm4",
#ifdef HAVE_LIBPFM
	  true,
#else
	  false,
#endif
	  "no vendor event names beyond sysfs (pmu/event/ and raw codes still work)" },
	{ "libdw", "libdw",
#ifdef HAVE_LIBDW
	  true,
#else
	  false,
#endif
	  "no source lines or inlined functions in reports" },
	{ "libelf", "libelf",
#ifdef HAVE_LIBELF
	  true,
#else
	  false,
#endif
	  "no symbol names in reports (addresses only)" },
	{ "zlib", "zlib",
#ifdef HAVE_ZLIB
	  true,
#else
	  false,
#endif
	  "no compressed perf.data records" },
	{ "json-c", "json-c",
#ifdef HAVE_JSONC
	  true,
#else
	  false,
#endif
	  "no metrics at all (-M, the generic IPC and ratios)" },
	{ "protobuf-c", "protobuf-c",
#ifdef HAVE_PROTOBUFC
	  true,
#else
	  false,
#endif
	  "no pprof profiles (perfex report --pprof)" },
	{ "libbpf", "libbpf",
#ifdef HAVE_BPF
	  true,
#else
	  false,
#endif
	  "no --bpf-counters (cgroups are counted with cgroup events), no "
	  "--off-cpu" },
	{ "libtraceevent", "libtraceevent",
#ifdef HAVE_TRACEEVENT
	  true,
#else
	  false,
#endif
	  "no tracepoint payloads in perfex script (the trace field)" },
	{ "libcapstone", "libcapstone",
#ifdef HAVE_CAPSTONE
	  true,
#else
	  false,
#endif
	  "no perfex annotate (no disassembler)" },
};

struct pmu_row {
	char name[128];
	uint32_t type, counters, events;
	bool core;
	char cpus[256];
	bool has_cpus;
};

struct machine {
	struct perfctr_info info;
	struct perfctr_cpu_mask *cpus;
	struct perfctr_cpu_mask *forbidden;
	struct pmu_row *pmus;
	size_t nr_pmus;
	bool privileged;
	struct perfctr_broker_info broker;
};

static int pmu_cb(const struct perfctr_pmu_desc *pmu, void *ctx)
{
	struct machine *m = ctx;
	struct pmu_row *rows, *row;

	rows = realloc(m->pmus, (m->nr_pmus + 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	m->pmus = rows;
	row = &rows[m->nr_pmus++];
	memset(row, 0, sizeof(*row));
	snprintf(row->name, sizeof(row->name), "%s", pmu->name);
	row->type = pmu->type;
	row->events = pmu->nr_events;
	row->core = pmu->core;
	row->counters = pmu->nr_counters;
	row->has_cpus = pmu->cpus != NULL;
	if (pmu->cpus)
		snprintf(row->cpus, sizeof(row->cpus), "%s", pmu->cpus);
	return 0;
}

/* CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in the effective set: the
 * paranoid level does not apply. */
static bool privileged(void)
{
	char line[256];
	FILE *f;
	bool yes = geteuid() == 0;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return yes;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long caps;

		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			yes = (caps >> 38 & 1) || (caps >> 21 & 1);
			break;
		}
	}
	fclose(f);
	return yes;
}

static int load(struct machine *m)
{
	PERFCTR_OPTS(perfctr_info_opts, no_probe, .no_probe = true);
	struct perfctr_cpu_mask probe = { .nrwords = 0 };
	size_t bytes, i, cores = 0;
	int err;

	memset(m, 0, sizeof(*m));
	m->info.sz = sizeof(m->info);
	/* The seed's protocol: ask with no room, get the size, allocate. */
	err = perfctr_info(NULL, &probe, NULL);
	if (err != -EOVERFLOW && err != 0)
		return err;
	bytes = sizeof(struct perfctr_cpu_mask) + probe.nrwords * sizeof(uint32_t);
	m->cpus = calloc(1, bytes);
	m->forbidden = calloc(1, bytes);
	if (!m->cpus || !m->forbidden)
		return -ENOMEM;
	m->cpus->nrwords = m->forbidden->nrwords = probe.nrwords;
	err = perfctr_info(&m->info, m->cpus, m->forbidden);
	if (err)
		return err;
	/* perfctr_info() probed the core PMU's counters already; only the
	 * other core PMUs of a hybrid part need probing in the walk. */
	err = perfctr_info_pmus(&no_probe, pmu_cb, m);
	if (err && err != -ENOENT)
		return err;
	for (i = 0; i < m->nr_pmus; i++)
		cores += m->pmus[i].core;
	if (cores > 1) {
		m->nr_pmus = 0;
		err = perfctr_info_pmus(NULL, pmu_cb, m);
		if (err)
			return err;
	}
	for (i = 0; i < m->nr_pmus; i++)
		if (!strcmp(m->pmus[i].name, m->info.core_pmu))
			m->pmus[i].counters = m->info.nr_hw_counters;
	m->privileged = privileged();
	m->broker.sz = sizeof(m->broker);
	return perfctr_broker_info(&m->broker);
}

static void unload(struct machine *m)
{
	free(m->cpus);
	free(m->forbidden);
	free(m->pmus);
}

static bool mask_test(const struct perfctr_cpu_mask *mask, uint32_t cpu)
{
	return cpu / 32 < mask->nrwords && (mask->mask[cpu / 32] >> (cpu % 32) & 1);
}

/* "0-3,8" from a mask; "none" when empty. */
static void mask_list(const struct perfctr_cpu_mask *mask, char *buf, size_t size)
{
	uint32_t cpu, end = mask->nrwords * 32;
	size_t len = 0;

	buf[0] = '\0';
	for (cpu = 0; cpu < end; cpu++) {
		uint32_t last = cpu;

		if (!mask_test(mask, cpu))
			continue;
		while (last + 1 < end && mask_test(mask, last + 1))
			last++;
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%u", len ? "," : "", cpu);
		if (last > cpu && len < size)
			len += (size_t)snprintf(buf + len, size - len, "-%u", last);
		cpu = last;
	}
	if (!buf[0])
		snprintf(buf, size, "none");
}

/* What perf_event_paranoid allows an unprivileged user. */
static const char *paranoid_allows(int level)
{
	if (level <= -1)
		return "everything: CPU-wide events, kernel profiling and raw tracepoint data for every user";
	if (level == 0)
		return "CPU-wide events and kernel profiling, but no raw tracepoint data, for every user";
	if (level == 1)
		return "user and kernel counts of your own processes; no CPU-wide events (-a, -C)";
	if (level == 2)
		return "user-space counts of your own processes only: add :u to hardware events, no -a/-C";
	return "no perf_event_open at all for unprivileged users (a distribution patch)";
}

static bool has_pmu(const struct machine *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nr_pmus; i++)
		if (!strcmp(m->pmus[i].name, name))
			return true;
	return false;
}

static long read_sysctl(const char *path)
{
	char buf[32];
	FILE *f = fopen(path, "re");
	long v = -1;

	if (f && fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* Why a feature is missing and the cure where we know one; NULL when the
 * feature is present or we know nothing useful. */
static const char *feature_hint(const struct machine *m, uint32_t bit)
{
	const struct perfctr_info *info = &m->info;
	bool hw = info->features & PERFCTR_FEATURE_HW_EVENTS;

	if (info->features & bit)
		return NULL;
	switch (bit) {
	case PERFCTR_FEATURE_HW_EVENTS:
		if (info->core_pmu[0])
			return "the core PMU exists but refused: check the permission level below";
		return "no hardware PMU driver (a virtual machine without a virtual PMU?)";
	case PERFCTR_FEATURE_RDPMC:
		if (!hw)
			return "needs a hardware PMU";
		if (read_sysctl("/proc/sys/kernel/perf_user_access") == 0)
			return "enable it (as root): sysctl -w kernel.perf_user_access=1";
		if (read_sysctl("/sys/bus/event_source/devices/cpu/rdpmc") == 0)
			return "enable it (as root): echo 1 > /sys/bus/event_source/devices/cpu/rdpmc";
		return "this PMU does not offer it; read() is used instead";
	case PERFCTR_FEATURE_MULTIPLEX:
		return hw ? "the kernel did not rotate events in the probe" :
			    "needs a hardware PMU (software events never need it)";
	case PERFCTR_FEATURE_PCINT:
	case PERFCTR_FEATURE_SAMPLING:
		return "the probe event did not overflow: check the permission level";
	case PERFCTR_FEATURE_TRACEPOINTS:
		if (!info->tracefs[0])
			return "tracefs is not mounted (see tracefs below)";
		return "tracepoint ids are not readable by you (run as root)";
	case PERFCTR_FEATURE_BREAKPOINTS:
		return "the kernel has no hardware breakpoint support";
	case PERFCTR_FEATURE_TSC:
		if (!has_pmu(m, "msr"))
			return "no msr PMU (not x86, or a kernel without it)";
		return "msr events count in kernel mode too: needs perf_event_paranoid <= 1, "
		       "CAP_PERFMON or root";
	}
	return NULL;
}

/* Whether an access broker answers, and what its policy gives us. */
static void print_broker(const struct perfctr_broker_info *b)
{
	const char *line, *nl;

	printf("\nAccess broker (perfctrd)\n");
	switch (-b->status) {
	case 0:
		printf("  %s: rule '%s' for you, used when the kernel refuses "
		       "an open\n", b->socket, b->rule);
		for (line = b->policy; *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl)
				nl = line + strlen(line) - 1;
			if (strncmp(line, "rule ", 5))
				printf("    %.*s\n", (int)(nl - line), line);
			if (!nl[0])
				break;
		}
		break;
	case EACCES:
		printf("  %s: answers, but its policy has no rule for you\n",
		       b->socket);
		break;
	case ECANCELED:
		printf("  not asked: PERFCTR_NO_BROKER is set\n");
		break;
	case ENOENT:
		printf("  none (no socket at %s): the kernel's permission "
		       "level is all there is\n", b->socket);
		break;
	default:
		printf("  %s does not answer: %s\n", b->socket,
		       strerror(-b->status));
	}
}

static void print_pmus(const struct machine *m)
{
	const struct perfctr_info *info = &m->info;

	printf("\nPMUs (%zu)\n", m->nr_pmus);
	printf("  %-20s %6s %9s %7s  %s\n", "name", "type", "counters", "events", "cpus");
	for (size_t i = 0; i < m->nr_pmus; i++) {
		const struct pmu_row *p = &m->pmus[i];
		char counters[16];

		if (p->core)
			snprintf(counters, sizeof(counters), "%u", p->counters);
		else
			snprintf(counters, sizeof(counters), "-");
		printf("  %-20s %6u %9s %7u  %s%s\n", p->name, p->type, counters,
		       p->events, p->has_cpus ? p->cpus : "all",
		       p->core ? "  (core)" : "");
	}
	if (info->core_pmu[0])
		printf("  core PMU: %s, %u programmable counters in one group\n",
		       info->core_pmu, info->nr_hw_counters);
	else
		printf("  core PMU: none (no hardware counters: software, tracepoint and\n"
		       "  breakpoint events count; cycles and instructions do not)\n");
}

static void print_libraries(void)
{
	printf("\nOptional libraries\n");
	for (size_t i = 0; i < sizeof(libraries) / sizeof(libraries[0]); i++) {
		const struct library *l = &libraries[i];

		printf("  %-3s %-9s %s\n", l->built_in ? "yes" : "no", l->name,
		       l->built_in ? "built in" : l->without);
	}
	/* Linked into a static perfex, else looked for at run time, as
	 * reports do. */
	printf("  %-3s %-9s %s\n", perfctr_symbols_have_demangler() ? "yes" : "no",
	       "libstdc++", !perfctr_symbols_have_demangler() ?
	       "libstdc++.so.6 not found: C++ names stay mangled in reports" :
#ifdef PERFEX_LINKS_DEMANGLER
	       "its demangler built in: C++ names demangled in reports"
#else
	       "found at run time: C++ names demangled in reports"
#endif
	       );
}

static void print_text(const struct machine *m)
{
	const struct perfctr_info *info = &m->info;
	char list[1024];
	size_t i;
	bool any_forbidden = false;

	printf("CPU\n");
	printf("  model             %s\n", info->cpu_model[0] ? info->cpu_model : "(unknown)");
	printf("  architecture      %s\n", info->arch);
	mask_list(m->cpus, list, sizeof(list));
	printf("  online CPUs       %u (%s)\n", info->nr_cpus, list);
	for (i = 0; i < m->forbidden->nrwords; i++)
		any_forbidden |= m->forbidden->mask[i] != 0;
	mask_list(m->forbidden, list, sizeof(list));
	printf("  cannot count on   %s%s\n", list,
	       any_forbidden ? " (offline, or not served by the core PMU)" : "");

	print_pmus(m);

	printf("\nFeatures\n");
	for (i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		const struct feature *f = &features[i];
		bool yes = info->features & f->bit;

		printf("  %-3s %-24s %s", yes ? "yes" : "no", f->name, f->enables);
		if (yes && (f->bit == PERFCTR_FEATURE_PCINT ||
			    f->bit == PERFCTR_FEATURE_SAMPLING) &&
		    !(info->features & PERFCTR_FEATURE_HW_EVENTS))
			printf(" [software events]");
		putchar('\n');
		if (feature_hint(m, f->bit))
			printf("      %-24s -> %s\n", "", feature_hint(m, f->bit));
	}

	printf("\nPermission\n");
	printf("  perf_event_paranoid  %d: %s\n", info->paranoid,
	       paranoid_allows(info->paranoid));
	if (m->privileged)
		printf("  you are privileged (root, CAP_PERFMON or CAP_SYS_ADMIN): "
		       "the level does not restrict you\n");
	printf("  to change it (as root): sysctl -w kernel.perf_event_paranoid=N\n"
	       "    (-1 everything, 0 CPU-wide and kernel, 1 kernel, 2 user space only)\n");

	print_broker(&m->broker);

	printf("\ntracefs\n");
	if (!info->tracefs[0])
		printf("  not mounted: tracepoint events cannot be used\n"
		       "  to mount it (as root): mount -t tracefs nodev /sys/kernel/tracing\n");
	else if (info->features & PERFCTR_FEATURE_TRACEPOINTS)
		printf("  mounted at %s, tracepoints readable\n", info->tracefs);
	else
		printf("  mounted at %s, but tracepoint ids are not readable by you\n"
		       "  (run as root, or: chmod -R go+rX %s/events)\n",
		       info->tracefs, info->tracefs);

	printf("\nLimits\n");
	printf("  max sample rate   %u Hz (kernel.perf_event_max_sample_rate)\n",
	       info->max_sample_rate);
	printf("  locked memory     %u kB per user for ring buffers (kernel.perf_event_mlock_kb)\n",
	       info->mlock_kb);
	printf("  max stack         %u frames in call chains (kernel.perf_event_max_stack)\n",
	       info->max_stack);

	print_libraries();
}

/* Why no broker answers, or NULL when one does. */
static const char *broker_unreachable(const struct perfctr_broker_info *b)
{
	switch (-b->status) {
	case 0:
	case EACCES:
		return NULL;
	case ECANCELED:
		return "PERFCTR_NO_BROKER is set";
	case ENOENT:
		return "no socket";
	case ECONNREFUSED:
		return "nobody listens on the socket";
	default:
		return strerror(-b->status);
	}
}

/*
 * The broker's "allows" object, from its description of the rule: lines
 * of a key and values (perfctrd's pd_rule_describe()).  Lists stay lists,
 * numbers numbers; "sampling yes KEY N ..." gives sampling and each limit.
 */
static void json_broker_allows(FILE *out, const char *text)
{
	static const char *const lists[] = { "events", "targets" };
	const char *line = text;
	bool first = true;

	fputc('{', out);
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[2048], *save = NULL, *key, *word;
		bool list = false;
		size_t i;

		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line += len + (nl != NULL);
		key = strtok_r(buf, " ", &save);
		if (!key || !strcmp(key, "rule"))
			continue;
		for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
			list |= !strcmp(key, lists[i]);
		jout_key(out, 6, first, key);
		first = false;
		word = strtok_r(NULL, " ", &save);
		if (list) {
			bool first_word = true;

			fputc('[', out);
			for (; word; word = strtok_r(NULL, " ", &save)) {
				fputs(first_word ? "" : ", ", out);
				jout_str(out, word);
				first_word = false;
			}
			fputc(']', out);
		} else if (!strcmp(key, "sampling")) {
			fputs(word && !strcmp(word, "yes") ? "true" : "false", out);
			while ((word = strtok_r(NULL, " ", &save))) {
				const char *value = strtok_r(NULL, " ", &save);

				jout_key(out, 6, false, word);
				fputs(value ? value : "null", out);
			}
		} else if (!strcmp(key, "max_fds")) {
			fputs(word ? word : "null", out);
		} else {
			jout_str(out, word);
		}
	}
	fputs(first ? "}" : "\n    }", out);
}

static void json_broker(FILE *out, const struct perfctr_broker_info *b)
{
	const char *why_not = broker_unreachable(b);

	fputc('{', out);
	jout_key(out, 4, true, "socket");
	jout_str(out, b->socket);
	jout_key(out, 4, false, "reachable");
	fputs(why_not ? "false" : "true", out);
	jout_key(out, 4, false, "why_not");
	jout_str(out, why_not);
	jout_key(out, 4, false, "rule");
	jout_str(out, b->status == 0 ? b->rule : NULL);
	jout_key(out, 4, false, "allows");
	if (b->status == 0)
		json_broker_allows(out, b->policy);
	else
		fputs("null", out);
	fputs("\n  }", out);
}

static void json_cpu_array(FILE *out, const struct perfctr_cpu_mask *mask)
{
	uint32_t cpu;
	bool first = true;

	fputc('[', out);
	for (cpu = 0; cpu < mask->nrwords * 32; cpu++)
		if (mask_test(mask, cpu)) {
			fprintf(out, "%s%u", first ? "" : ", ", cpu);
			first = false;
		}
	fputc(']', out);
}

static void json_pmus(FILE *out, const struct machine *m)
{
	fputc('[', out);
	for (size_t i = 0; i < m->nr_pmus; i++) {
		const struct pmu_row *p = &m->pmus[i];

		fprintf(out, "%s\n    {", i ? "," : "");
		jout_str(out, "name");
		fputs(": ", out);
		jout_str(out, p->name);
		fprintf(out, ", \"type\": %u, \"core\": %s, \"counters\": %u, \"events\": %u, \"cpus\": ",
			p->type, p->core ? "true" : "false", p->counters, p->events);
		jout_str(out, p->has_cpus ? p->cpus : NULL);
		fputc('}', out);
	}
	fputs(m->nr_pmus ? "\n  ]" : "]", out);
}

/* "features", and "hints": why each missing feature is missing, and the
 * cure when known. */
static void json_features(FILE *out, const struct machine *m)
{
	bool first = true;
	size_t i;

	jout_key(out, 2, false, "features");
	fputc('{', out);
	for (i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		jout_key(out, 4, i == 0, features[i].key);
		fputs(m->info.features & features[i].bit ? "true" : "false", out);
	}
	fputs("\n  }", out);

	jout_key(out, 2, false, "hints");
	fputc('{', out);
	for (i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		const char *hint = feature_hint(m, features[i].bit);

		if (!hint)
			continue;
		jout_key(out, 4, first, features[i].key);
		jout_str(out, hint);
		first = false;
	}
	fputs(first ? "}" : "\n  }", out);
}

static void print_json(const struct machine *m)
{
	const struct perfctr_info *info = &m->info;
	FILE *out = stdout;
	size_t i;

	fputc('{', out);
	jout_key(out, 2, true, "schema_version");
	fprintf(out, "%d", INFO_SCHEMA_VERSION);
	jout_key(out, 2, false, "version");
	jout_str(out, perfctr_version());

	jout_key(out, 2, false, "cpu");
	fputc('{', out);
	jout_key(out, 4, true, "model");
	jout_str(out, info->cpu_model);
	jout_key(out, 4, false, "arch");
	jout_str(out, info->arch);
	jout_key(out, 4, false, "nr_online");
	fprintf(out, "%u", info->nr_cpus);
	jout_key(out, 4, false, "online");
	json_cpu_array(out, m->cpus);
	jout_key(out, 4, false, "forbidden");
	json_cpu_array(out, m->forbidden);
	fputs("\n  }", out);

	jout_key(out, 2, false, "core_pmu");
	jout_str(out, info->core_pmu[0] ? info->core_pmu : NULL);
	jout_key(out, 2, false, "nr_hw_counters");
	fprintf(out, "%u", info->nr_hw_counters);
	jout_key(out, 2, false, "pmus");
	json_pmus(out, m);
	json_features(out, m);

	jout_key(out, 2, false, "permission");
	fputc('{', out);
	jout_key(out, 4, true, "paranoid");
	fprintf(out, "%d", info->paranoid);
	jout_key(out, 4, false, "privileged");
	fputs(m->privileged ? "true" : "false", out);
	jout_key(out, 4, false, "allows");
	jout_str(out, paranoid_allows(info->paranoid));
	fputs("\n  }", out);

	jout_key(out, 2, false, "tracefs");
	fputc('{', out);
	jout_key(out, 4, true, "mounted");
	fputs(info->tracefs[0] ? "true" : "false", out);
	jout_key(out, 4, false, "path");
	jout_str(out, info->tracefs[0] ? info->tracefs : NULL);
	jout_key(out, 4, false, "readable");
	fputs(info->features & PERFCTR_FEATURE_TRACEPOINTS ? "true" : "false", out);
	fputs("\n  }", out);

	jout_key(out, 2, false, "limits");
	fputc('{', out);
	jout_key(out, 4, true, "max_sample_rate");
	fprintf(out, "%u", info->max_sample_rate);
	jout_key(out, 4, false, "mlock_kb");
	fprintf(out, "%u", info->mlock_kb);
	jout_key(out, 4, false, "max_stack");
	fprintf(out, "%u", info->max_stack);
	fputs("\n  }", out);

	jout_key(out, 2, false, "libraries");
	fputc('{', out);
	for (i = 0; i < sizeof(libraries) / sizeof(libraries[0]); i++) {
		jout_key(out, 4, i == 0, libraries[i].key);
		fputs(libraries[i].built_in ? "true" : "false", out);
	}
	jout_key(out, 4, false, "libstdcxx");
	fputs(perfctr_symbols_have_demangler() ? "true" : "false", out);
	fputs("\n  }", out);

	jout_key(out, 2, false, "broker");
	json_broker(out, &m->broker);
	fputs("\n}\n", out);
}

int cmd_info(int argc, char **argv)
{
	struct machine m;
	bool json;
	int status, err;

	status = perfex_json_options(PERFEX_CMD_INFO, argc, argv, &json);
	if (status >= 0)
		return status;
	if (optind < argc) {
		perfex_error("unexpected argument '%s'", argv[optind]);
		perfex_hint("perfex info --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	if (perfex_dry_run)
		return 0;
	err = load(&m);
	if (err) {
		perfex_error("cannot describe this machine: %s", strerror(-err));
		unload(&m);
		return PERFEX_EXIT_INTERNAL;
	}
	if (json)
		print_json(&m);
	else
		print_text(&m);
	unload(&m);
	if (fflush(stdout) || ferror(stdout)) {
		perfex_error("cannot write the output: %s", strerror(errno));
		return PERFEX_EXIT_IO;
	}
	return 0;
}
