/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex's option table and the parse built from it (options.h).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "options.h"
#include "perfex.h"
#include "diff.h"
#include "record.h"
#include "annotate.h"
#include "report.h"
#include "stat.h"
#include "top.h"

#define STAT (1u << PERFEX_CMD_STAT)
#define RECORD (1u << PERFEX_CMD_RECORD)
#define REPORT (1u << PERFEX_CMD_REPORT)
#define SCRIPT (1u << PERFEX_CMD_SCRIPT)
#define LIST (1u << PERFEX_CMD_LIST)
#define INFO (1u << PERFEX_CMD_INFO)
#define REGIONS (1u << PERFEX_CMD_REGIONS)
#define SERVE (1u << PERFEX_CMD_SERVE)
#define INJECT (1u << PERFEX_CMD_INJECT)
#define DIFF (1u << PERFEX_CMD_DIFF)
#define ANNOTATE (1u << PERFEX_CMD_ANNOTATE)
#define TOP (1u << PERFEX_CMD_TOP)
#define ALL (STAT | RECORD | REPORT | SCRIPT | LIST | INFO | REGIONS | \
	     SERVE | INJECT | DIFF | ANNOTATE | TOP)

/*
 * A row that stores its value: the offset of @field in @type (the
 * subcommand's values), which must be of C type @want.
 */
#define FIELD(type, field, want)					\
	(offsetof(type, field) + 0 * sizeof(struct {			\
		_Static_assert(__builtin_types_compatible_p(		\
			__typeof__(((type *)0)->field), want),		\
			#type "." #field " is not " #want);		\
		int unused;						\
	}))
#define STORE_TRUE(type, field)						\
	.store = PERFEX_STORE_TRUE, .offset = FIELD(type, field, bool)
#define STORE_STRING(type, field)					\
	.store = PERFEX_STORE_STRING,					\
	.offset = FIELD(type, field, const char *)

/*
 * One row per option and subcommand wording; in each subcommand's --help
 * in this order.  A row that ends with STORE_TRUE() or STORE_STRING()
 * sets its field itself, with no case in the subcommand's handler.
 */
static const struct perfex_option table[] = {
	/* ---------------------------------------------------------- stat */
	{ STAT, OPT_EVENT, 'e', "event", "SPEC", 0, 0,
	  "events to count: names, pmu/terms/, rNNNN,\n"
	  "subsys:tracepoint, mem:ADDR; comma lists and\n"
	  "{groups}; may be repeated (perfex list)" },
	{ STAT, OPT_FILTER, 0, "filter", "EXPR", 0, 0,
	  "tracepoint filter for the events of the\n"
	  "preceding -e (\"common_pid == 42\")" },
	{ STAT, OPT_PID, 'p', "pid", "PID", 0, 0,
	  "count process PID (all its threads) until it\n"
	  "exits, Ctrl-C, or the command ends" },
	{ STAT, OPT_TID, 't', "tid", "TID", 0, 0,
	  "count thread TID (with -C: only on those CPUs)" },
	{ STAT, OPT_ALL_CPUS, 'a', "all-cpus", NULL, 0, 0,
	  "count everything on every CPU",
	  STORE_TRUE(struct stat_options, all_cpus) },
	{ STAT, OPT_CPU, 'C', "cpu", "CPUS", 0, 0,
	  "count everything on CPUS (\"0-3,6\")" },
	{ STAT, OPT_CGROUP, 'G', "cgroup", "NAMES", 0, MODE_CPUS,
	  "with -a or -C: only the tasks of cgroup v2 NAME\n"
	  "(and its descendants), relative to the cgroup2\n"
	  "mount or absolute; perf's rule: each name of a\n"
	  "list, and of each later -G, to the next event\n"
	  "given before it, a -e list's events one by one\n"
	  "(an empty one skips it); one name first: every\n"
	  "event before it; before any -e: all" },
	{ STAT, OPT_FOR_EACH_CGROUP, 0, "for-each-cgroup", "NAMES", 0, MODE_CPUS,
	  "with -a or -C: every event once for each cgroup\n"
	  "v2 of the comma list (with its descendants), a\n"
	  "row per event and cgroup" },
	{ STAT, OPT_BPF_COUNTERS, 0, "bpf-counters", NULL, 0, MODE_CPUS,
	  "with -G or --for-each-cgroup: count cgroups\n"
	  "through BPF at context switches (one counter per\n"
	  "CPU and event), not cgroup events that are\n"
	  "switched at each one",
	  STORE_TRUE(struct stat_options, cfg.bpf_counters) },
	{ STAT, OPT_NO_AGGR, 'A', "no-aggr", NULL, 0, MODE_CPUS,
	  "one line per CPU (with -a or -C)" },
	{ STAT, OPT_PER_SOCKET, 0, "per-socket", NULL, 0, MODE_CPUS,
	  "with -a or -C: one line per socket, the sum of\n"
	  "its CPUs (S0), and how many CPUs it has" },
	{ STAT, OPT_PER_DIE, 0, "per-die", NULL, 0, MODE_CPUS,
	  "with -a or -C: one line per die of a socket\n"
	  "(S0-D0)" },
	{ STAT, OPT_PER_CORE, 0, "per-core", NULL, 0, MODE_CPUS,
	  "with -a or -C: one line per core (S0-D0-C1),\n"
	  "the sum of its SMT threads" },
	{ STAT, OPT_PER_THREAD, 0, "per-thread", NULL, 0,
	  MODE_THREADS | MODE_COMMAND,
	  "one line per thread (with -p or -t); with a\n"
	  "command: --per-process with its threads" },
	{ STAT, OPT_PER_PROCESS, 0, "per-process", NULL, 0,
	  MODE_COMMAND | MODE_THREADS,
	  "the process tree of the command (or of -p):\n"
	  "each process's own counts and its children's",
	  STORE_TRUE(struct stat_options, cfg.tree) },
	{ STAT, OPT_TREE_LIMIT, 0, "tree-limit", "N|P%", 0,
	  MODE_COMMAND | MODE_THREADS,
	  "with --per-process: the N processes with the\n"
	  "largest counts of the first event, or those\n"
	  "with at least P% of the whole tree's" },
	{ STAT, OPT_INTERVAL, 'I', "interval-print", "MS", 0, 0,
	  "print the counts of every MS milliseconds" },
	{ STAT, OPT_REPEAT, 'r', "repeat", "N", 0, MODE_COMMAND,
	  "run the command N times: mean, stddev, min, max" },
	{ STAT, OPT_FIELD_SEP, 'x', "field-separator", "S", 0, 0,
	  "CSV output with separator S" },
	{ STAT, OPT_JSON, 'j', "json", NULL, 0, 0,
	  "one JSON document (docs/json.md)" },
	{ STAT, OPT_JSON_FORMAT, 0, "json-format", "FMT", 0, 0,
	  "the form of -j: perfex (one document, the\n"
	  "default) or perf (perf stat -j's JSON lines)" },
	{ STAT, OPT_OUTPUT, 'o', "output", "FILE", 0, 0,
	  "write the counts to FILE instead of stderr",
	  STORE_STRING(struct stat_options, output) },
	{ STAT, OPT_METRICS, 'M', "metrics", "LIST", 0, 0,
	  "metrics and metric groups to compute from the\n"
	  "CPU's tables (perfex list metrics); repeatable" },
	{ STAT, OPT_METRIC_ONLY, 0, "metric-only", NULL, 0, 0,
	  "print the metrics, not the counts",
	  STORE_TRUE(struct stat_options, metrics.only) },
	{ STAT, OPT_METRICS_FILE, 0, "metrics-file", "FILE", 0, 0,
	  "more metrics, in the pmu-events JSON form;\n"
	  "repeatable (also PERFCTR_METRICS_PATH)" },
	{ STAT, OPT_METRIC_NO_MERGE, 0, "metric-no-merge", NULL, 0, 0,
	  "count the events of each metric in groups of its\n"
	  "own, also those another metric's group holds",
	  STORE_TRUE(struct stat_options, metrics.no_merge) },
	{ STAT, OPT_METRIC_NO_GROUP, 0, "metric-no-group", NULL, 0, 0,
	  "count the metrics' events ungrouped (each used\n"
	  "only when it ran all of its time), each once",
	  STORE_TRUE(struct stat_options, metrics.no_group) },
	{ STAT, OPT_TOPDOWN, 0, "topdown", NULL, 0, 0,
	  "the TopDown metrics of this CPU (level 1)",
	  STORE_TRUE(struct stat_options, metrics.topdown) },
	{ STAT, OPT_TD_LEVEL, 0, "td-level", "N", 0, 0,
	  "the TopDown metrics of level N" },
	{ STAT, OPT_SWITCH_INTERVAL, 0, "switch-interval", "MS", 0, 0,
	  "each -e is an event set; the sets take turns\n"
	  "every MS ms (run time of a thread, wall time\n"
	  "of CPUs): estimates +- error" },
	{ STAT, OPT_SWITCH_AFTER, 0, "switch-after", "N:EV", 0, 0,
	  "event sets taking turns after N events EV" },
	{ STAT, OPT_VERSION, 0, "version", NULL, 0, 0,
	  "perfex's version" },

	/* -------------------------------------------------------- record */
	{ RECORD, OPT_EVENT, 'e', "event", "EVENTS", 0, 0,
	  "events to sample (default: cycles where a hardware\n"
	  "PMU exists, else cpu-clock)" },
	{ RECORD, OPT_FILTER, 0, "filter", "EXPR", 0, 0,
	  "tracepoint filter for the events of the -e before\n"
	  "it (\"common_pid == 42\")" },
	{ RECORD, OPT_COUNT, 'c', "count", "PERIOD", 0, 0,
	  "one sample every PERIOD events" },
	{ RECORD, OPT_FREQ, 'F', "freq", "HZ", 0, 0,
	  "about HZ samples per second (default 4000; tracepoints\n"
	  "and breakpoints default to -c 1)" },
	{ RECORD, OPT_CALL_GRAPH, 'g', NULL, NULL, 0, 0,
	  "record callchains with frame pointers (the same\n"
	  "as --call-graph fp)" },
	{ RECORD, OPT_CALL_GRAPH, 0, "call-graph", "MODE", 0, 0,
	  "record callchains: fp (frame pointers) or\n"
	  "dwarf[,SIZE] (SIZE bytes of user stack and the\n"
	  "user registers per sample, unwound with the\n"
	  "binaries' CFI when read; default 8192)" },
	{ RECORD, OPT_PID, 'p', "pid", "PID", 0, 0,
	  "sample the running process PID, its threads and\n"
	  "the threads and children it starts" },
	{ RECORD, OPT_TID, 't', "tid", "TID", 0, 0,
	  "sample the running thread TID" },
	{ RECORD, OPT_ALL_CPUS, 'a', "all-cpus", NULL, 0, 0,
	  "sample every task on every CPU" },
	{ RECORD, OPT_CPU, 'C', "cpu", "CPUS", 0, 0,
	  "sample every task on the CPUs of the list (0-3,6)" },
	{ RECORD, OPT_CGROUP, 'G', "cgroup", "NAMES", 0, 0,
	  "with -a or -C: only the tasks of cgroup v2 NAME\n"
	  "(and its descendants), relative to the cgroup2\n"
	  "mount or absolute; after -e, perf's rule: each\n"
	  "name of the list to the next event of the -e;\n"
	  "before it: one name, for every event" },
	{ RECORD, OPT_MMAP_PAGES, 'm', "mmap-pages", "N", 0, 0,
	  "data pages per ring, a power of two (default 64)" },
	{ RECORD, OPT_OUTPUT, 'o', "output", "FILE", 0, 0,
	  "the file to write (default: perf.data)",
	  STORE_STRING(struct record, output) },
	{ RECORD, OPT_OVERWRITE, 0, "overwrite", NULL, 0, 0,
	  "overwrite (flight-recorder) rings: the newest\n"
	  "window is written at the end",
	  STORE_TRUE(struct record, overwrite) },
	{ RECORD, OPT_SNAPSHOT, 0, "snapshot", NULL, 0, 0,
	  "overwrite rings; each SIGUSR2 writes the window\n"
	  "recorded since the previous one" },
	{ RECORD, OPT_CLOCKID, 'k', "clockid", "CLOCK", 0, 0,
	  "sample times from CLOCK: mono, raw, realtime,\n"
	  "boottime, tai or a clockid_t number (mono for\n"
	  "perfex inject: jitdump files use it)" },
	{ RECORD, OPT_QUIET, 'q', "quiet", NULL, 0, 0,
	  "no summary on stderr",
	  STORE_TRUE(struct record, quiet) },
	{ STAT | RECORD, OPT_KILL_CHILD, 0, "kill-child", "SIGNAL",
	  PERFEX_OPT_ARG_OPTIONAL, 0,
	  "the command gets SIGNAL (default KILL) when\n"
	  "perfex ends, even killed by SIGKILL" },
	{ RECORD, OPT_NO_INHERIT, 0, "no-inherit", NULL, 0, 0,
	  "sample the command's (or -p's) threads as they are,\n"
	  "not the threads and children they start; a\n"
	  "period (-c) then counts per thread, not per CPU",
	  STORE_TRUE(struct record, no_inherit) },
	{ RECORD, OPT_OFF_CPU, 0, "off-cpu", NULL, 0, 0,
	  "also the time the tasks spend blocked, per stack\n"
	  "(a BPF program at each context switch), written\n"
	  "as perf's offcpu-time event",
	  STORE_TRUE(struct record, off_cpu) },
	{ RECORD, OPT_OFF_CPU_THRESH, 0, "off-cpu-thresh", "MS", 0, 0,
	  "with --off-cpu: blocked intervals of MS ms or more\n"
	  "written one by one with their time (the others\n"
	  "summed)" },
	{ RECORD, OPT_OFF_CPU_RUNNABLE, 0, "off-cpu-runnable", NULL, 0, 0,
	  "with --off-cpu: the time preempted while runnable\n"
	  "too (state R), not only sleeping (S, D)",
	  STORE_TRUE(struct record, off_cpu_runnable) },

	/* -------------------------------------------------------- report */
	{ REPORT | SCRIPT, OPT_INPUT, 'i', "input", "FILE", 0, 0,
	  "the perf.data file to read (default: perf.data)" },
	{ REPORT, OPT_SORT, 's', "sort", "KEYS", 0, 0,
	  "sort keys, comma-separated, among comm, dso, sym\n"
	  "(or symbol), pid, tid, cpu, srcline (default:\n"
	  "comm,dso,sym)" },
	{ REPORT, OPT_CALL_GRAPH, 'g', "call-graph", "ORDER", 0, 0,
	  "call graphs under each row: callee (the sampled\n"
	  "function's callers) or caller (from the outermost\n"
	  "caller down)" },
	{ REPORT, OPT_STDIO, 0, "stdio", NULL, 0, 0,
	  "text output (the default)" },
	{ REPORT, OPT_SHOW_NR_SAMPLES, 'n', "show-nr-samples", NULL, 0, 0,
	  "a column of sample counts in the table",
	  STORE_TRUE(struct report, show_samples) },
	{ REPORT, OPT_FOLDED, 0, "folded", NULL, 0, 0,
	  "folded stacks (FlameGraph's format) instead of the\n"
	  "table", STORE_TRUE(struct report, folded) },
	{ REPORT, OPT_FLAME, 0, "flame", "FILE", 0, 0,
	  "write an interactive SVG flame graph to FILE",
	  STORE_STRING(struct report, flame) },
	{ REPORT, OPT_PPROF, 0, "pprof", "FILE", 0, 0,
	  "write the profile in pprof's format (gzip'd\n"
	  "profile.proto) to FILE instead of the table:\n"
	  "every event, call stacks when recorded",
	  STORE_STRING(struct report, pprof) },
	{ REPORT, OPT_SPEEDSCOPE, 0, "speedscope", "FILE", 0, 0,
	  "write the samples in speedscope's file format to\n"
	  "FILE: one profile per thread, in time order",
	  STORE_STRING(struct report, speedscope) },
	{ REPORT, OPT_GECKO, 0, "gecko", "FILE", 0, 0,
	  "write the samples of one event (--event) in the\n"
	  "Firefox Profiler's Gecko format to FILE",
	  STORE_STRING(struct report, gecko) },
	{ REPORT, OPT_EVENT, 0, "event", "NAME", 0, 0,
	  "the event of the folded stacks, the flame graph and\n"
	  "the viewers' files (default: the first event that\n"
	  "has samples; speedscope: every event)",
	  STORE_STRING(struct report, event) },
	{ REPORT, OPT_WALL, 0, "wall", NULL, 0, 0,
	  "one wall-clock profile: each stack weighs its\n"
	  "on-CPU time (cpu-clock or task-clock samples times\n"
	  "their period) plus its off-CPU time (offcpu-time,\n"
	  "perfex record --off-cpu), in ns",
	  STORE_TRUE(struct report, wall) },
	{ REPORT, OPT_JSON, 'j', "json", NULL, 0, 0,
	  "JSON output", STORE_TRUE(struct report, json) },
	{ REPORT, OPT_PERCENT_LIMIT, 0, "percent-limit", "P", 0, 0,
	  "hide rows under P percent (default: 0)" },
	{ REPORT, OPT_ANNOTATE, 0, "annotate", "SYMBOL", 0, 0,
	  "annotate SYMBOL instead of the table (as perfex\n"
	  "annotate SYMBOL does)", STORE_STRING(struct report, annotate) },

	/* -------------------------------------------------------- script */
	{ SCRIPT, OPT_FIELDS, 'F', "fields", "FIELDS", 0, 0,
	  "the fields, as perf script names them: a list,\n"
	  "[type:]f1,f2 or +f / -f to add to or take from\n"
	  "the defaults (perfex-script(1))" },
	{ SCRIPT, OPT_CALLCHAIN, 'g', "callchain", NULL, 0, 0,
	  "call chains below the samples that have them\n"
	  "(the default)" },
	{ SCRIPT, OPT_NO_CALLCHAIN, 'G', "hide-call-graph", NULL, 0, 0,
	  "no call chains: one line per sample" },
	{ SCRIPT, OPT_NO_CALLCHAIN, 0, "no-callchain", NULL, 0, 0,
	  "the same as -G" },
	{ SCRIPT, OPT_HEADER, 0, "header", NULL, 0, 0,
	  "the file's header first, as perf script prints it" },
	{ SCRIPT, OPT_SHOW_TASK_EVENTS, 0, "show-task-events", NULL, 0, 0,
	  "the COMM, FORK and EXIT records too" },
	{ SCRIPT, OPT_SHOW_MMAP_EVENTS, 0, "show-mmap-events", NULL, 0, 0,
	  "the MMAP and MMAP2 records too" },
	{ SCRIPT, OPT_SHOW_LOST_EVENTS, 0, "show-lost-events", NULL, 0, 0,
	  "the LOST records too" },
	{ SCRIPT, OPT_SCRIPT, 's', "script", "SCRIPT.py", 0, 0,
	  "run perf's Python script SCRIPT.py on the samples\n"
	  "(its handlers: perfex-script(1)); the arguments\n"
	  "after the options are the script's" },
	{ SCRIPT, OPT_GEN_SCRIPT, 0, "gen-script", "LANG", 0, 0,
	  "write a starting script perf-script.py for the\n"
	  "file's events (LANG: python; -g python too)" },
	{ REPORT | SCRIPT, OPT_KALLSYMS, 0, "kallsyms", "FILE", 0, 0,
	  "kernel symbols from FILE (default: /proc/kallsyms)" },
	{ REPORT | SCRIPT, OPT_NO_DEMANGLE, 0, "no-demangle", NULL, 0, 0,
	  "C++ names as the binaries spell them (mangled)" },

	/* ------------------------------------------------- list and info */
	{ LIST, OPT_JSON, 'j', "json", NULL, 0, 0,
	  "one JSON document (fields in docs/json-list.md)" },
	{ INFO, OPT_JSON, 'j', "json", NULL, 0, 0,
	  "one JSON document (fields in docs/json-info.md)" },

	/* ------------------------------------------------------- regions */
	{ REGIONS, OPT_EVENT, 'e', "event", "EVENTS", 0, 0,
	  "events to count in each region (default: instructions:u,\n"
	  "cycles:u with a hardware PMU, else task-clock,page-faults)" },
	{ REGIONS, OPT_OUTPUT, 'o', "output", "FILE", 0, 0,
	  "keep the results file (text, docs/regions.md)" },

	/* --------------------------------------------------------- serve */
	{ SERVE, OPT_CONFIG, 'c', "config", "FILE", 0, 0,
	  "read events, cgroups, labels and the address\n"
	  "from FILE (perfex-serve(1)); SIGHUP reads it again" },
	{ SERVE, OPT_LISTEN, 'l', "listen", "ADDR:PORT", 0, 0,
	  "the address to serve on (default 127.0.0.1:9717;\n"
	  "port 0 picks a free one, the log says which)" },
	{ SERVE, OPT_EVENT, 'e', "event", "SPEC", 0, 0,
	  "events to count, as perfex -e; repeatable (default:\n"
	  "the default events of perfex stat)" },
	{ SERVE, OPT_CGROUP, 'G', "cgroup", "NAMES", 0, 0,
	  "also count cgroup v2 NAMES (a comma list, relative\n"
	  "to the cgroup2 mount); repeatable" },
	{ SERVE, OPT_CGROUP_ROOT, 0, "cgroup-root", "DIR", 0, 0,
	  "count DIR and every cgroup below it, following the\n"
	  "ones made and removed later; repeatable" },
	{ SERVE, OPT_CGROUP_DEPTH, 0, "cgroup-depth", "N", 0, 0,
	  "count cgroups at most N levels below a --cgroup-root\n"
	  "(0: the root alone)" },
	{ SERVE, OPT_CGROUP_INCLUDE, 0, "cgroup-include", "PATTERN", 0, 0,
	  "count only the cgroups under a root whose path\n"
	  "(\"/a/b\") matches a PATTERN (shell glob); repeatable" },
	{ SERVE, OPT_CGROUP_EXCLUDE, 0, "cgroup-exclude", "PATTERN", 0, 0,
	  "count no cgroup under a root whose path matches\n"
	  "PATTERN (it wins over --cgroup-include); repeatable" },
	{ SERVE, OPT_MAX_SERIES, 0, "max-series", "N", 0, 0,
	  "serve at most N series of counts: cgroups past it are\n"
	  "not counted (perfex_series_dropped)" },
	{ SERVE, OPT_CPU, 'C', "cpu", "CPUS", 0, 0,
	  "count on CPUS (\"0-3,6\"; default: every online CPU)" },
	{ SERVE, OPT_LABEL, 0, "label", "NAME=VALUE", 0, 0,
	  "a label added to every series; repeatable" },
	{ SERVE, OPT_ONCE, 0, "once", NULL, 0, 0,
	  "print one scrape (Prometheus text) on stdout and\n"
	  "exit, without a server" },
	{ SERVE, OPT_NO_BPF_COUNTERS, 0, "no-bpf-counters", NULL, 0, 0,
	  "count cgroups with the kernel's cgroup events, not\n"
	  "through the BPF counters (the default where BPF loads)" },
	{ SERVE, OPT_PROFILE_MAX, 0, "profile-max-seconds", "N", 0, 0,
	  "the longest profile /debug/pprof/profile takes\n"
	  "(default 300; longer requests get 400)" },

	/* -------------------------------------------------------- inject */
	{ INJECT, OPT_INPUT, 'i', "input", "FILE", 0, 0,
	  "the perf.data file to read (default: perf.data)" },
	{ INJECT, OPT_OUTPUT, 'o', "output", "FILE", 0, 0,
	  "the perf.data file to write (required)" },
	{ INJECT, OPT_JIT, 'j', "jit", NULL, 0, 0,
	  "JIT code from the runtimes' jitdump files: an ELF\n"
	  "file per function beside the dump and its MMAP2\n"
	  "(record with -k mono)" },

	/* ---------------------------------------------------------- diff */
	{ DIFF, OPT_COMPUTE, 'c', "compute", "HOW", 0, 0,
	  "the column of each new file: delta (its share\n"
	  "minus the base's), delta-abs (the same, sorted by\n"
	  "size; the default), ratio (of periods) or\n"
	  "wdiff:W1,W2 (new period * W2 - base period * W1)" },
	{ DIFF, OPT_SORT, 's', "sort", "KEYS", 0, 0,
	  "the keys rows are matched and shown by, among\n"
	  "comm, dso, sym (or symbol), pid, tid, cpu\n"
	  "(default: dso,sym)" },
	{ DIFF, OPT_ORDER, 'o', "order", "N", 0, 0,
	  "sort by the column of new file N (default 1); 0:\n"
	  "by the baseline's share" },
	{ DIFF, OPT_BASELINE_ONLY, 'b', "baseline-only", NULL, 0, 0,
	  "only the base's rows that a new file has too",
	  STORE_TRUE(struct diff_options, baseline_only) },
	{ DIFF, OPT_PERIOD, 'p', "period", NULL, 0, 0,
	  "the periods of each file beside",
	  STORE_TRUE(struct diff_options, period) },
	{ DIFF, OPT_FORMULA, 'F', "formula", NULL, 0, 0,
	  "how each value was computed, beside it",
	  STORE_TRUE(struct diff_options, formula) },
	{ DIFF, OPT_NO_NOISE, 0, "no-noise", NULL, 0, 0,
	  "no Noise column: perf diff's columns only",
	  STORE_TRUE(struct diff_options, no_noise) },
	{ DIFF, OPT_NOISE_BLOCKS, 0, "noise-blocks", "N", 0, 0,
	  "time blocks a file's noise is estimated from\n"
	  "(batch means; default 16, 4 to 100); 0: binomial\n"
	  "shares alone" },
	{ DIFF, OPT_MIN_CHANGE, 0, "min-change", "POINTS", 0, 0,
	  "mark only changes of at least POINTS percentage\n"
	  "points beyond the noise (default 0.5; 0: any)" },
	{ DIFF, OPT_JSON, 'j', "json", NULL, 0, 0,
	  "JSON output, with each share's interval\n"
	  "(docs/json.md)", STORE_TRUE(struct diff_options, json) },
	{ DIFF, OPT_FOLDED, 0, "folded", NULL, 0, 0,
	  "the folded stacks of the base and a new file\n"
	  "(-o), each line with both counts, instead of the\n"
	  "table", STORE_TRUE(struct diff_options, folded) },
	{ DIFF, OPT_FLAME, 0, "flame", "FILE", 0, 0,
	  "write a differential SVG flame graph to FILE:\n"
	  "widths from the new file, colours from the change",
	  STORE_STRING(struct diff_options, flame) },
	{ DIFF, OPT_KALLSYMS, 0, "kallsyms", "FILE", 0, 0,
	  "kernel symbols from FILE (default: /proc/kallsyms)",
	  STORE_STRING(struct diff_options, kallsyms) },
	{ DIFF, OPT_NO_DEMANGLE, 0, "no-demangle", NULL, 0, 0,
	  "C++ names as the binaries spell them (mangled)",
	  STORE_TRUE(struct diff_options, no_demangle) },
	/* ------------------------------------------------------ annotate */
	{ ANNOTATE, OPT_INPUT, 'i', "input", "FILE", 0, 0,
	  "the perf.data file to read (default: perf.data)",
	  STORE_STRING(struct annotate_opts, input) },
	{ ANNOTATE, OPT_SYMBOL, 's', "symbol", "SYMBOL", 0, 0,
	  "annotate this function only (as the argument)",
	  STORE_STRING(struct annotate_opts, symbol) },
	{ ANNOTATE, OPT_STDIO, 0, "stdio", NULL, 0, 0,
	  "perf annotate --stdio's layout (the default)",
	  STORE_TRUE(struct annotate_opts, stdio) },
	{ ANNOTATE, OPT_STDIO2, 0, "stdio2", NULL, 0, 0,
	  "perf annotate --stdio2's layout: jumps as arrows\n"
	  "to labelled offsets, percentages only where hit",
	  STORE_TRUE(struct annotate_opts, stdio2) },
	{ ANNOTATE, OPT_PRINT_LINE, 'l', "print-line", NULL, 0, 0,
	  "first a summary of the percentage per source line",
	  STORE_TRUE(struct annotate_opts, print_line) },
	{ ANNOTATE, OPT_PERCENT_TYPE, 0, "percent-type", "TYPE", 0, 0,
	  "local-period (the default), global-period,\n"
	  "local-hits or global-hits: of the function's or\n"
	  "the whole file's period or samples" },
	{ ANNOTATE, OPT_JSON, 'j', "json", NULL, 0, 0,
	  "one JSON document (fields in docs/json.md)",
	  STORE_TRUE(struct annotate_opts, json) },
	{ ANNOTATE, OPT_KALLSYMS, 0, "kallsyms", "FILE", 0, 0,
	  "kernel symbols from FILE, to name the kernel\n"
	  "functions left out (default: none read)",
	  STORE_STRING(struct annotate_opts, kallsyms) },
	{ ANNOTATE, OPT_NO_DEMANGLE, 0, "no-demangle", NULL, 0, 0,
	  "C++ names as the binaries spell them (mangled)",
	  STORE_TRUE(struct annotate_opts, no_demangle) },
	/* ----------------------------------------------------------- top */
	{ TOP, OPT_EVENT, 'e', "event", "EVENTS", 0, 0,
	  "events to sample; may be repeated, E on the screen\n"
	  "shows the next (default: cycles where a hardware\n"
	  "PMU exists, else cpu-clock)" },
	{ TOP, OPT_FREQ, 'F', "freq", "HZ", 0, 0,
	  "about HZ samples per second (default 4000;\n"
	  "tracepoints and breakpoints default to -c 1)" },
	{ TOP, OPT_COUNT, 'c', "count", "PERIOD", 0, 0,
	  "one sample every PERIOD events" },
	{ TOP, OPT_CALL_GRAPH, 'g', NULL, NULL, 0, 0,
	  "call chains (frame pointers): each row's callers\n"
	  "under it" },
	{ TOP, OPT_PID, 'p', "pid", "PID", 0, 0,
	  "sample process PID, its threads and the threads\n"
	  "and children it starts" },
	{ TOP, OPT_TID, 't', "tid", "TID", 0, 0,
	  "sample thread TID" },
	{ TOP, OPT_UID, 'u', "uid", "USER", 0, 0,
	  "sample every CPU, keep the samples of USER's\n"
	  "processes (a name or a uid)" },
	{ TOP, OPT_ALL_CPUS, 'a', "all-cpus", NULL, 0, 0,
	  "sample every task on every CPU (the default)" },
	{ TOP, OPT_CPU, 'C', "cpu", "CPUS", 0, 0,
	  "sample every task on the CPUs of the list (0-3,6)" },
	{ TOP, OPT_SORT, 's', "sort", "KEYS", 0, 0,
	  "row keys among comm, dso, sym (or symbol), pid,\n"
	  "tid, cpu, srcline (default: dso,sym); s on the\n"
	  "screen asks for others",
	  STORE_STRING(struct top, sort) },
	{ TOP, OPT_PERCENT_LIMIT, 0, "percent-limit", "P", 0, 0,
	  "hide rows under P percent (F on the screen)" },
	{ TOP, OPT_COUNT_FILTER, 'f', "count-filter", "N", 0, 0,
	  "hide rows of fewer than N samples (f)" },
	{ TOP, OPT_HIDE_KERNEL, 'K', "hide-kernel-symbols", NULL, 0, 0,
	  "hide kernel rows (K toggles)",
	  STORE_TRUE(struct top, hide_kernel) },
	{ TOP, OPT_HIDE_USER, 'U', "hide-user-symbols", NULL, 0, 0,
	  "hide user rows (U toggles)",
	  STORE_TRUE(struct top, hide_user) },
	{ TOP, OPT_ZERO, 'z', "zero", NULL, 0, 0,
	  "start the counts afresh at every refresh (z\n"
	  "toggles)", STORE_TRUE(struct top, zero) },
	{ TOP, OPT_DELAY, 'd', "delay", "SECS", 0, 0,
	  "seconds between refreshes, decimals allowed\n"
	  "(default 2; d on the screen)" },
	{ TOP, OPT_ENTRIES, 'E', "entries", "N", 0, 0,
	  "show at most N rows (default: as many as the\n"
	  "screen has lines; in batch mode all; e)" },
	{ TOP, OPT_ITERATIONS, 'n', "iterations", "N", 0, 0,
	  "stop after N refreshes" },
	{ TOP, OPT_STDIO, 0, "stdio", NULL, 0, 0,
	  "batch mode: a table on stdout at each refresh\n"
	  "(also whenever stdout is not a terminal)",
	  STORE_TRUE(struct top, stdio) },
	{ TOP, OPT_SHOW_NR_SAMPLES, 0, "show-nr-samples", NULL, 0, 0,
	  "a column of sample counts",
	  STORE_TRUE(struct top, show_samples) },
	{ TOP, OPT_MMAP_PAGES, 'm', "mmap-pages", "N", 0, 0,
	  "data pages per ring, a power of two (default 64)" },

	/* ---------------------------------------------------- everywhere */
	{ ALL, OPT_HELP, 'h', "help", NULL, 0, 0,
	  "this text" },
};

#define NR_ROWS (sizeof(table) / sizeof(table[0]))

_Static_assert(NR_ROWS <= sizeof(((struct perfex_parse *)0)->given),
	       "options.h: perfex_parse.given needs more room");

/* What a mode is, for "option '-A' needs -a or -C". */
static const char *const mode_names[MODE_NR_BITS] = {
	"a command to run",
	"-a or -C",
	"-p or -t",
	"--switch-interval or --switch-after",
};

struct cmd_help {
	const char *hint;	/* how to get the help, for error hints */
	const char *usage;	/* before the options */
	const char *trailer;	/* after them, or NULL */
	int width;		/* of the option column */
};

static const struct cmd_help cmd_help[PERFEX_CMD_NR] = {
	[PERFEX_CMD_STAT] = { "perfex --help",
"usage: perfex [options] [--] command [args]\n"
"       perfex stat [options] [--] command [args]\n"
"       perfex stat [options] {-p PID | -t TID | -a | -C CPUS} [-- command]\n"
"\n"
"Runs the command and reports its counts (on stderr, or -o FILE).  The\n"
"exit status is the command's (128 + N when signal N killed it).\n",
"Default events: task-clock, context-switches, cpu-migrations, page-faults,\n"
"cycles, instructions, branches, branch-misses.\n"
"Exit codes of perfex's own failures: 126 not executable, 127 not found,\n"
"200 usage, 201 event, 202 permission, 203 tracefs, 204 no such target,\n"
"205 output, 206 other.  See perfex(1).\n", 27 },
	[PERFEX_CMD_RECORD] = { "perfex record --help",
"usage: perfex record [options] [--] [command [args]]\n",
"Without a command, -p/-t/-a/-C record until SIGINT (or until the tasks end).\n"
"Exit status: the command's, or 126/127 when it cannot run, 200 bad option,\n"
"201 bad event, 202 permission, 204 no such task or CPU, 205 output failure,\n"
"206 other failures.\n", 25 },
	[PERFEX_CMD_REPORT] = { "perfex report --help",
"usage: perfex report [options]\n",
"Folded stacks and the flame graph cover one event, as FlameGraph's\n"
"stackcollapse does: the first that has samples, or the one --event names.\n"
"Exit status: 0, 200 bad option, 205 missing, unreadable or damaged file.\n",
	  26 },
	[PERFEX_CMD_SCRIPT] = { "perfex script --help",
"usage: perfex script [options]\n"
"       perfex script [-i FILE] -s SCRIPT.py [ARGS...]\n",
"Laid out as perf script: comm tid [cpu] time: period event: ip sym+off (dso)\n"
"Exit status: 0, 200 bad option, 205 missing, unreadable or damaged file.\n",
	  24 },
	[PERFEX_CMD_LIST] = { "perfex list --help",
"usage: perfex list [-j] [FILTER]\n"
"\n"
"List the events this machine offers: generic hardware and cache events\n"
"(where a PMU counts them), software events, tracepoints grouped by\n"
"subsystem, the named events of sysfs PMUs with their descriptions, and\n"
"the raw (rNNNN) and breakpoint (mem:ADDR) syntaxes.\n"
"\n"
"FILTER keeps the events whose name or description contains it (case\n"
"ignored), or, when it has * ? or [, whose name matches it as a glob\n"
"(syscalls:sys_enter_*).  A class name alone keeps a class: hw, cache,\n"
"sw, tracepoint, pmu (or hardware, software, tracepoints).\n", NULL, 15 },
	[PERFEX_CMD_INFO] = { "perfex info --help",
"usage: perfex info [-j]\n"
"\n"
"Describe what this machine can count: the CPU, the PMUs and their\n"
"counters, the features probed by trying them, the permission level and\n"
"what it allows, the CPUs where events cannot count, tracefs, the\n"
"kernel's limits and the optional libraries perfex was built with.\n",
	  NULL, 15 },
	[PERFEX_CMD_REGIONS] = { "perfex --regions --help",
"usage: perfex --regions [-e EVENTS] [-o FILE] [--] command [args]\n",
"The command marks its regions with perfctr_region_begin() and\n"
"perfctr_region_end() (perfctr/region.h).\n", 24 },
	[PERFEX_CMD_SERVE] = { "perfex serve --help",
"usage: perfex serve [options]\n"
"\n"
"Count events per CPU, for the whole machine and for each cgroup asked\n"
"for, and serve the counts over HTTP at /metrics in the Prometheus text\n"
"format or OpenMetrics (as the Accept header asks).  SIGHUP reloads the\n"
"configuration file, SIGTERM and SIGINT stop.\n",
"Events the machine cannot count are reported in perfex_event_unavailable\n"
"and the log; the others are served.\n"
"Exit status: 0 after SIGTERM or SIGINT, 200 bad option or configuration,\n"
"201 bad event, 202 permission, 203 tracefs, 204 no such cgroup or CPU,\n"
"205 the address cannot be served, 206 other failures.\n", 27 },
	[PERFEX_CMD_INJECT] = { "perfex inject --help",
"usage: perfex inject --jit [-i perf.data] -o FILE\n"
"\n"
"Copy a recording, adding what it could not hold: with --jit, the code\n"
"that JIT runtimes described in their jitdump files (jit-PID.dump).\n",
"Exit status: 0, 200 bad option or a recording without -k mono,\n"
"205 unreadable input, jitdump or output, 206 other failures.\n", 20 },
	[PERFEX_CMD_DIFF] = { "perfex diff --help",
"usage: perfex diff [options] [BASE] NEW...\n"
"\n"
"Compare the profiles of perf.data files, as perf diff does: rows matched\n"
"by their keys' names, the base's share of each, and for each new file\n"
"the value -c computes.  Without files: perf.data.old and perf.data; one\n"
"file: perf.data.old against it.\n",
"Noise: the change a same-workload pair shows by chance, from the spread\n"
"of each file's shares over time blocks (never below two binomial\n"
"shares); 95 % for the table as a whole.  '*' marks a change beyond it\n"
"and of at least --min-change points.  See perfex-diff(1).\n"
"Exit status: 0, 200 bad option, 205 missing, unreadable or damaged file,\n"
"206 other failures.\n", 24 },
	[PERFEX_CMD_ANNOTATE] = { "perfex annotate --help",
"usage: perfex annotate [options] [SYMBOL]\n"
"\n"
"Show the instructions and source lines of the functions that have samples\n"
"(or of SYMBOL), each with its share of the samples, as perf annotate.\n",
"Exit status: 0, 200 bad option, 204 no samples of SYMBOL (or nothing to\n"
"disassemble), 205 missing, unreadable or damaged file, 206 other failures.\n",
	  22 },
	[PERFEX_CMD_TOP] = { "perfex top --help",
"usage: perfex top [options]\n"
"\n"
"Sample the whole machine (or -p, -t, -u, -C) and show the hottest\n"
"functions, refreshed every -d seconds: on the terminal, with perf top's\n"
"keys, or in batch mode (--stdio, or stdout not a terminal) as a table\n"
"on stdout at each refresh.\n",
"Keys: d delay, e rows, E next event, f min samples, F min percent,\n"
"s sort keys, K hide kernel, U hide user, z zeroing, q quit.\n"
"Exit status: 0 (q, -n, SIGINT, the target ended), 200 bad option,\n"
"201 bad event, 202 permission, 204 no such task or CPU, 205 output\n"
"failure, 206 other failures.\n", 29 },
};

bool perfex_dry_run;

void perfex_dry_run_from_env(void)
{
	const char *v = getenv("PERFEX_DRY_RUN");

	perfex_dry_run = v && !strcmp(v, "1");
}

static bool row_of(const struct perfex_option *o, enum perfex_cmd cmd)
{
	return o->cmds & (1u << cmd);
}

void perfex_options_help(enum perfex_cmd cmd, FILE *out)
{
	const struct cmd_help *h = &cmd_help[cmd];

	fputs(h->usage, out);
	fputc('\n', out);
	for (size_t i = 0; i < NR_ROWS; i++) {
		const struct perfex_option *o = &table[i];
		const char *text = o->help;
		char head[96];
		int n;

		if (!row_of(o, cmd))
			continue;
		n = snprintf(head, sizeof(head), "  %c%c%s%s%s%s%s%s",
			     o->short_name ? '-' : ' ',
			     o->short_name ? o->short_name : ' ',
			     o->short_name && o->long_name ? "," : " ",
			     o->long_name ? " --" : "", o->long_name ? o->long_name : "",
			     o->arg ? (o->flags & PERFEX_OPT_ARG_OPTIONAL ? "[=" : " ")
				    : "",
			     o->arg ? o->arg : "",
			     o->arg && (o->flags & PERFEX_OPT_ARG_OPTIONAL) ? "]" : "");
		/* A head too wide for the column gets the text below it. */
		if (n + 1 > h->width)
			fprintf(out, "%s\n%*s", head, h->width, "");
		else
			fprintf(out, "%-*s", h->width, head);
		for (;;) {
			size_t len = strcspn(text, "\n");

			fprintf(out, "%.*s\n", (int)len, text);
			if (!text[len])
				break;
			text += len + 1;
			fprintf(out, "%*s", h->width, "");
		}
	}
	if (h->trailer) {
		fputc('\n', out);
		fputs(h->trailer, out);
	}
}

static void hint_help(enum perfex_cmd cmd)
{
	perfex_hint("%s lists the options", cmd_help[cmd].hint);
}

int perfex_opt_error(const struct perfex_parse *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perfex: option '%s' ", p->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	hint_help(p->cmd);
	return PERFEX_EXIT_USAGE;
}

perfex_result perfex_opt_ulong_of(const struct perfex_parse *p, const char *s,
				  unsigned long min, unsigned long max,
				  const char *what, unsigned long *out)
{
	unsigned long v;
	char *end;

	s = s ? s : "";
	errno = 0;
	v = strtoul(s, &end, 10);
	/* strtoul() takes leading space and a sign ("-1" is ULONG_MAX). */
	if (*s < '0' || *s > '9' || errno || *end || v < min || v > max)
		return perfex_opt_error(p, "expects %s (not '%s')", what, s);
	*out = v;
	return PERFEX_GO_ON;
}

perfex_result perfex_opt_ulong(const struct perfex_parse *p, unsigned long min,
			       unsigned long max, const char *what,
			       unsigned long *out)
{
	return perfex_opt_ulong_of(p, p->arg, min, max, what, out);
}

/* A row's own store into @values (PERFEX_STORE_*). */
static void store(const struct perfex_parse *p, void *values)
{
	char *field = (char *)values + p->opt->offset;

	switch (p->opt->store) {
	case PERFEX_STORE_TRUE:
		*(bool *)field = true;
		break;
	case PERFEX_STORE_STRING:
		*(const char **)field = p->arg;
		break;
	case PERFEX_STORE_NONE:
		break;
	}
}

int perfex_opt_signal(const struct perfex_parse *p, int *out)
{
	const char *s = p->arg, *name;
	unsigned long v;
	char *end;

	if (!s) {
		*out = SIGKILL;
		return -1;
	}
	name = strncasecmp(s, "SIG", 3) ? s : s + 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);

		if (abbrev && !strcasecmp(name, abbrev)) {
			*out = sig;
			return -1;
		}
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *s < '0' || *s > '9' || errno || *end || !v ||
	    v > (unsigned long)SIGRTMAX)
		return perfex_opt_error(p, "expects a signal name or number "
					"(not '%s')", s);
	*out = (int)v;
	return -1;
}

static void set_name(struct perfex_parse *p, const struct perfex_option *o,
		     bool as_long)
{
	if (as_long)
		snprintf(p->name, sizeof(p->name), "--%s", o->long_name);
	else
		snprintf(p->name, sizeof(p->name), "-%c", o->short_name);
}

static const struct perfex_option *by_short(enum perfex_cmd cmd, int c)
{
	for (size_t i = 0; i < NR_ROWS; i++)
		if (row_of(&table[i], cmd) && table[i].short_name == c)
			return &table[i];
	return NULL;
}

/* getopt_long's val of row @i (above every char). */
#define LONG_VAL(i) (256 + (int)(i))

perfex_result perfex_options_parse(struct perfex_parse *p, enum perfex_cmd cmd,
				   int argc, char **argv, bool stop_at_arg,
				   perfex_opt_fn *fn, void *ctx)
{
	return perfex_options_parse_into(p, cmd, argc, argv, stop_at_arg, fn,
					 ctx, ctx);
}

perfex_result perfex_options_parse_into(struct perfex_parse *p,
					enum perfex_cmd cmd, int argc,
					char **argv, bool stop_at_arg,
					perfex_opt_fn *fn, void *ctx,
					void *values)
{
	struct option longopts[NR_ROWS + 1];
	char shorts[3 + 3 * NR_ROWS + 1];
	size_t nl = 0, ns = 0;
	perfex_result ret;
	int c;

	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	if (stop_at_arg)
		shorts[ns++] = '+';
	shorts[ns++] = ':';
	for (size_t i = 0; i < NR_ROWS; i++) {
		const struct perfex_option *o = &table[i];
		int has_arg = !o->arg ? no_argument :
			      o->flags & PERFEX_OPT_ARG_OPTIONAL ?
			      optional_argument : required_argument;

		if (!row_of(o, cmd))
			continue;
		if (o->long_name)
			longopts[nl++] = (struct option){ o->long_name, has_arg,
							  NULL, LONG_VAL(i) };
		if (o->short_name) {
			shorts[ns++] = o->short_name;
			if (has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	longopts[nl] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns] = '\0';

	/* 0, not 1: glibc's getopt then starts afresh, with this call's
	 * ordering ('+') and no position left inside an earlier argv (a
	 * parse that returned in the middle of "-ab"). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		const struct perfex_option *o = NULL;
		bool as_long = c >= 256;

		if (c == ':' || c == '?') {
			/* glibc: optopt is the short option, or the long
			 * option's val, or 0 for an unknown long option. */
			as_long = optopt >= 256;
			o = as_long ? &table[optopt - 256] :
			    optopt ? by_short(cmd, optopt) : NULL;
			if (o) {
				set_name(p, o, as_long);
				return perfex_opt_error(p, c == ':' ?
							"needs an argument" :
							"takes no argument");
			}
			if (optopt)
				perfex_error("unknown option '-%c'", optopt);
			else
				perfex_error("unknown option '%s'", argv[optind - 1]);
			hint_help(cmd);
			return PERFEX_EXIT_USAGE;
		}
		o = as_long ? &table[c - 256] : by_short(cmd, c);
		if (!o) {
			perfex_error("unknown option '-%c'", c);
			hint_help(cmd);
			return PERFEX_EXIT_USAGE;
		}
		set_name(p, o, as_long);
		p->opt = o;
		p->arg = o->arg ? optarg : NULL;
		p->given[o - table] = as_long ? 2 : 1;
		if (o->id == OPT_HELP) {
			perfex_options_help(cmd, stdout);
			return 0;
		}
		if (o->store) {
			store(p, values);
			continue;
		}
		ret = fn(p, ctx);
		if (ret != PERFEX_GO_ON)
			return ret;
	}
	p->opt = NULL;
	p->arg = NULL;
	return PERFEX_GO_ON;
}

perfex_result perfex_options_check_modes(const struct perfex_parse *p,
					 unsigned int modes)
{
	for (size_t i = 0; i < NR_ROWS; i++) {
		const struct perfex_option *o = &table[i];
		char name[48];
		bool first = true;

		if (!p->given[i] || !o->modes || (o->modes & modes))
			continue;
		if (p->given[i] == 2)
			snprintf(name, sizeof(name), "--%s", o->long_name);
		else
			snprintf(name, sizeof(name), "-%c", o->short_name);
		fprintf(stderr, "perfex: option '%s' needs ", name);
		for (unsigned int b = 0; b < MODE_NR_BITS; b++) {
			if (!(o->modes & (1u << b)))
				continue;
			fprintf(stderr, "%s%s", first ? "" : " or ", mode_names[b]);
			first = false;
		}
		fputc('\n', stderr);
		hint_help(p->cmd);
		return PERFEX_EXIT_USAGE;
	}
	return PERFEX_GO_ON;
}

bool perfex_option_given(const struct perfex_parse *p, enum perfex_opt_id id)
{
	for (size_t i = 0; i < NR_ROWS; i++)
		if (p->given[i] && table[i].id == id && row_of(&table[i], p->cmd))
			return true;
	return false;
}

static perfex_result json_option(struct perfex_parse *p, void *ctx)
{
	if (p->opt->id == OPT_JSON)
		*(bool *)ctx = true;
	return PERFEX_GO_ON;
}

int perfex_json_options(enum perfex_cmd cmd, int argc, char **argv, bool *json)
{
	struct perfex_parse p;

	*json = false;
	return perfex_options_parse(&p, cmd, argc, argv, false, json_option,
				    json);
}

const struct perfex_option *perfex_options_table(size_t *nr)
{
	*nr = NR_ROWS;
	return table;
}

const char *perfex_options_help_hint(enum perfex_cmd cmd)
{
	return cmd_help[cmd].hint;
}
