// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Generic hardware, software and cache event names (see names.h). */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/internal.h"
#include "event/names.h"

#define HW(n, c, a, d) { n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c, a, d }
#define SW(n, c, a, d) { n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c, a, d }

const struct pc_symbol pc_hw_symbols[] = {
	HW("cpu-cycles", CPU_CYCLES, NULL, "CPU cycles"),
	HW("cycles", CPU_CYCLES, "cpu-cycles", "CPU cycles"),
	HW("instructions", INSTRUCTIONS, NULL, "instructions retired"),
	HW("cache-references", CACHE_REFERENCES, NULL,
	   "cache accesses (usually the last-level cache)"),
	HW("cache-misses", CACHE_MISSES, NULL,
	   "cache misses (usually the last-level cache)"),
	HW("branch-instructions", BRANCH_INSTRUCTIONS, NULL,
	   "branch instructions retired"),
	HW("branches", BRANCH_INSTRUCTIONS, "branch-instructions",
	   "branch instructions retired"),
	HW("branch-misses", BRANCH_MISSES, NULL, "mispredicted branches"),
	HW("bus-cycles", BUS_CYCLES, NULL, "bus cycles"),
	HW("stalled-cycles-frontend", STALLED_CYCLES_FRONTEND, NULL,
	   "cycles the front end issued nothing"),
	HW("idle-cycles-frontend", STALLED_CYCLES_FRONTEND,
	   "stalled-cycles-frontend", "cycles the front end issued nothing"),
	HW("stalled-cycles-backend", STALLED_CYCLES_BACKEND, NULL,
	   "cycles the back end retired nothing"),
	HW("idle-cycles-backend", STALLED_CYCLES_BACKEND,
	   "stalled-cycles-backend", "cycles the back end retired nothing"),
	HW("ref-cycles", REF_CPU_CYCLES, NULL,
	   "reference cycles, unaffected by frequency scaling"),
};
const size_t pc_nr_hw_symbols = ARRAY_SIZE(pc_hw_symbols);

const struct pc_symbol pc_sw_symbols[] = {
	SW("cpu-clock", CPU_CLOCK, NULL, "per-CPU high-resolution timer (ns)"),
	SW("task-clock", TASK_CLOCK, NULL, "time the task ran on a CPU (ns)"),
	SW("page-faults", PAGE_FAULTS, NULL, "page faults"),
	SW("faults", PAGE_FAULTS, "page-faults", "page faults"),
	SW("context-switches", CONTEXT_SWITCHES, NULL, "context switches"),
	SW("cs", CONTEXT_SWITCHES, "context-switches", "context switches"),
	SW("cpu-migrations", CPU_MIGRATIONS, NULL,
	   "moves of the task to another CPU"),
	SW("migrations", CPU_MIGRATIONS, "cpu-migrations",
	   "moves of the task to another CPU"),
	SW("minor-faults", PAGE_FAULTS_MIN, NULL,
	   "page faults served without I/O"),
	SW("major-faults", PAGE_FAULTS_MAJ, NULL, "page faults that needed I/O"),
	SW("alignment-faults", ALIGNMENT_FAULTS, NULL,
	   "unaligned accesses fixed up by the kernel"),
	SW("emulation-faults", EMULATION_FAULTS, NULL,
	   "instructions emulated by the kernel"),
	SW("dummy", DUMMY, NULL, "counts nothing (for side-band records)"),
	SW("bpf-output", BPF_OUTPUT, NULL, "output of BPF programs"),
	SW("cgroup-switches", CGROUP_SWITCHES, NULL,
	   "context switches to a task in another cgroup"),
};
const size_t pc_nr_sw_symbols = ARRAY_SIZE(pc_sw_symbols);

static const struct pc_symbol *find_in(const struct pc_symbol *tab, size_t n,
				       const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(tab[i].name) == len && !memcmp(tab[i].name, name, len))
			return &tab[i];
	return NULL;
}

const struct pc_symbol *pc_symbol_find(const char *name, size_t len)
{
	const struct pc_symbol *sym;

	sym = find_in(pc_hw_symbols, pc_nr_hw_symbols, name, len);
	if (!sym)
		sym = find_in(pc_sw_symbols, pc_nr_sw_symbols, name, len);
	return sym;
}

/* perf's spellings; the first of each row is the canonical one. */
static const char *const cache_names[][5] = {
	[PERF_COUNT_HW_CACHE_L1D] = { "L1-dcache", "l1-d", "l1d", "L1-data" },
	[PERF_COUNT_HW_CACHE_L1I] = { "L1-icache", "l1-i", "l1i", "L1-instruction" },
	[PERF_COUNT_HW_CACHE_LL] = { "LLC", "L2" },
	[PERF_COUNT_HW_CACHE_DTLB] = { "dTLB", "d-tlb", "Data-TLB" },
	[PERF_COUNT_HW_CACHE_ITLB] = { "iTLB", "i-tlb", "Instruction-TLB" },
	[PERF_COUNT_HW_CACHE_BPU] = { "branch", "branches", "bpu", "btb", "bpc" },
	[PERF_COUNT_HW_CACHE_NODE] = { "node" },
};

static const char *const cache_ops[][5] = {
	[PERF_COUNT_HW_CACHE_OP_READ] = { "load", "loads", "read" },
	[PERF_COUNT_HW_CACHE_OP_WRITE] = { "store", "stores", "write" },
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = { "prefetch", "prefetches",
					      "speculative-read",
					      "speculative-load" },
};

static const char *const cache_results[][5] = {
	[PERF_COUNT_HW_CACHE_RESULT_ACCESS] = { "refs", "Reference", "ops", "access" },
	[PERF_COUNT_HW_CACHE_RESULT_MISS] = { "misses", "miss" },
};

/* Which operations each cache supports, as perf lists them. */
static const unsigned cache_valid_ops[] = {
	[PERF_COUNT_HW_CACHE_L1D] = 7,
	[PERF_COUNT_HW_CACHE_L1I] = 5,
	[PERF_COUNT_HW_CACHE_LL] = 7,
	[PERF_COUNT_HW_CACHE_DTLB] = 7,
	[PERF_COUNT_HW_CACHE_ITLB] = 1,
	[PERF_COUNT_HW_CACHE_BPU] = 1,
	[PERF_COUNT_HW_CACHE_NODE] = 7,
};

/*
 * Match one of @row's spellings at the start of [*s, end), followed by '-'
 * or the end; advance past it (and the '-').  Return its row index or -1.
 */
static int match_word(const char *const (*rows)[5], size_t nr_rows,
		      const char **s, const char *end)
{
	size_t r, a;

	for (r = 0; r < nr_rows; r++) {
		for (a = 0; a < 5 && rows[r][a]; a++) {
			size_t n = strlen(rows[r][a]);

			if (n > (size_t)(end - *s) || strncasecmp(*s, rows[r][a], n))
				continue;
			if (*s + n != end && (*s)[n] != '-')
				continue;
			*s += n + (*s + n != end);
			return (int)r;
		}
	}
	return -1;
}

bool pc_cache_decode(const char *name, size_t len, uint64_t *config)
{
	const char *s = name, *end = name + len;
	int cache, op = -1, result = -1, w;

	cache = match_word(cache_names, ARRAY_SIZE(cache_names), &s, end);
	if (cache < 0)
		return false;
	while (s < end) {
		w = match_word(cache_ops, ARRAY_SIZE(cache_ops), &s, end);
		if (w >= 0 && op < 0) {
			op = w;
			continue;
		}
		if (w >= 0)
			return false;
		w = match_word(cache_results, ARRAY_SIZE(cache_results), &s, end);
		if (w < 0 || result >= 0)
			return false;
		result = w;
	}
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (result < 0)
		result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	*config = (uint64_t)cache | (uint64_t)op << 8 | (uint64_t)result << 16;
	return true;
}

bool pc_cache_name(size_t idx, char *buf, size_t size, uint64_t *config)
{
	static const char *const plural[] = { "loads", "stores", "prefetches" };
	size_t cache, op, result;

	for (cache = 0; cache < ARRAY_SIZE(cache_names); cache++)
		for (op = 0; op < ARRAY_SIZE(cache_ops); op++) {
			if (!(cache_valid_ops[cache] & (1u << op)))
				continue;
			for (result = 0; result < 2; result++) {
				if (idx--)
					continue;
				if (result)
					snprintf(buf, size, "%s-%s-misses",
						 cache_names[cache][0],
						 cache_ops[op][0]);
				else
					snprintf(buf, size, "%s-%s",
						 cache_names[cache][0], plural[op]);
				*config = cache | op << 8 | result << 16;
				return true;
			}
		}
	return false;
}
