/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex's option table: every option of every subcommand is one row of
 * the table in options.c (names, argument, help, which subcommands and
 * modes accept it).  The table drives the parsing (getopt_long built from
 * it), each subcommand's --help and tests/cli/test_options.py (every row
 * documented in its man page and used by a test).
 *
 * Adding an option (docs/ARCHITECTURE.md): a row in options.c, an id
 * below, a .TP item in its man page and a test.  A flag or a string the
 * row stores itself (PERFEX_STORE_*) needs nothing more; an option whose
 * value needs more work is a case in the subcommand's handler.
 */
#ifndef PERFEX_OPTIONS_H
#define PERFEX_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "perfex.h"

enum perfex_cmd {
	PERFEX_CMD_STAT,
	PERFEX_CMD_RECORD,
	PERFEX_CMD_REPORT,
	PERFEX_CMD_SCRIPT,
	PERFEX_CMD_LIST,
	PERFEX_CMD_INFO,
	PERFEX_CMD_REGIONS,
	PERFEX_CMD_SERVE,
	PERFEX_CMD_INJECT,
	PERFEX_CMD_DIFF,
	PERFEX_CMD_ANNOTATE,
	PERFEX_CMD_TOP,
	PERFEX_CMD_NR
};

/* What a subcommand's handler switches on; one id may name rows of several
 * subcommands (-o of stat and of record). */
enum perfex_opt_id {
	OPT_HELP = 1,
	OPT_VERSION,
	OPT_EVENT,
	OPT_FILTER,
	OPT_PID,
	OPT_TID,
	OPT_ALL_CPUS,
	OPT_CPU,
	OPT_NO_AGGR,
	OPT_PER_THREAD,
	OPT_CGROUP,
	OPT_FOR_EACH_CGROUP,
	OPT_INTERVAL,
	OPT_REPEAT,
	OPT_FIELD_SEP,
	OPT_JSON,
	OPT_JSON_FORMAT,
	OPT_OUTPUT,
	OPT_SWITCH_INTERVAL,
	OPT_SWITCH_AFTER,
	OPT_COUNT,
	OPT_FREQ,
	OPT_CALL_GRAPH,
	OPT_MMAP_PAGES,
	OPT_OVERWRITE,
	OPT_SNAPSHOT,
	OPT_QUIET,
	OPT_NO_INHERIT,
	OPT_INPUT,
	OPT_SORT,
	OPT_STDIO,
	OPT_SHOW_NR_SAMPLES,
	OPT_FOLDED,
	OPT_FLAME,
	OPT_PPROF,
	OPT_SPEEDSCOPE,
	OPT_GECKO,
	OPT_PERCENT_LIMIT,
	OPT_KALLSYMS,
	OPT_NO_DEMANGLE,
	OPT_CALLCHAIN,
	OPT_NO_CALLCHAIN,
	OPT_FIELDS,
	OPT_HEADER,
	OPT_SHOW_TASK_EVENTS,
	OPT_SHOW_MMAP_EVENTS,
	OPT_SHOW_LOST_EVENTS,
	OPT_METRICS,
	OPT_METRIC_ONLY,
	OPT_METRICS_FILE,
	OPT_METRIC_NO_MERGE,
	OPT_METRIC_NO_GROUP,
	OPT_TOPDOWN,
	OPT_TD_LEVEL,
	OPT_CONFIG,
	OPT_LISTEN,
	OPT_CGROUP_ROOT,
	OPT_LABEL,
	OPT_ONCE,
	OPT_PROFILE_MAX,
	OPT_NO_BPF_COUNTERS,
	OPT_CGROUP_DEPTH,
	OPT_CGROUP_INCLUDE,
	OPT_CGROUP_EXCLUDE,
	OPT_MAX_SERIES,
	OPT_BPF_COUNTERS,
	OPT_PER_PROCESS,
	OPT_TREE_LIMIT,
	OPT_PER_SOCKET,
	OPT_PER_DIE,
	OPT_PER_CORE,
	OPT_CLOCKID,
	OPT_JIT,
	OPT_KILL_CHILD,
	OPT_COMPUTE,
	OPT_ORDER,
	OPT_PERIOD,
	OPT_FORMULA,
	OPT_BASELINE_ONLY,
	OPT_NO_NOISE,
	OPT_NOISE_BLOCKS,
	OPT_MIN_CHANGE,
	OPT_SCRIPT,
	OPT_GEN_SCRIPT,
	OPT_SYMBOL,
	OPT_STDIO2,
	OPT_PRINT_LINE,
	OPT_PERCENT_TYPE,
	OPT_ANNOTATE,
	OPT_UID,
	OPT_DELAY,
	OPT_ITERATIONS,
	OPT_ENTRIES,
	OPT_COUNT_FILTER,
	OPT_HIDE_KERNEL,
	OPT_HIDE_USER,
	OPT_ZERO,
	OPT_OFF_CPU,
	OPT_OFF_CPU_THRESH,
	OPT_OFF_CPU_RUNNABLE,
	OPT_WALL,
};

/*
 * Modes: what a run of a subcommand is, known once its options are read;
 * a row whose modes are not 0 is accepted only in one of them (the parse
 * checks it: "option '-A' needs -a or -C").
 */
enum perfex_mode {
	MODE_COMMAND = 1u << 0,	/* stat: a command is run */
	MODE_CPUS = 1u << 1,	/* stat: -a or -C */
	MODE_THREADS = 1u << 2,	/* stat: -p or -t */
	MODE_SETS = 1u << 3,	/* stat: --switch-interval / --switch-after */
	MODE_NR_BITS = 4
};

#define PERFEX_OPT_ARG_OPTIONAL 1u	/* --name[=ARG]; short form none */

/*
 * What a row stores itself, at its offset in the subcommand's values (the
 * @values of perfex_options_parse_into()); its handler is then not called.
 */
enum perfex_opt_store {
	PERFEX_STORE_NONE = 0,	/* the handler's case does it */
	PERFEX_STORE_TRUE,	/* bool: true */
	PERFEX_STORE_STRING,	/* const char *: the argument (the last given) */
};

struct perfex_option {
	unsigned int cmds;	/* 1u << PERFEX_CMD_x of each that takes it */
	enum perfex_opt_id id;
	char short_name;	/* 0: none */
	const char *long_name;	/* without "--"; NULL: none */
	const char *arg;	/* the argument's name in --help; NULL: none */
	unsigned int flags;	/* PERFEX_OPT_* */
	unsigned int modes;	/* enum perfex_mode bits; 0: every mode */
	const char *help;	/* lines separated by '\n' */
	enum perfex_opt_store store;	/* PERFEX_STORE_NONE: the handler */
	size_t offset;		/* of the stored field in the values */
};

/* The state of one parse, seen by the handler. */
struct perfex_parse {
	enum perfex_cmd cmd;
	const struct perfex_option *opt;	/* the option being handled */
	char name[48];		/* as given: "-I" or "--interval-print" */
	const char *arg;	/* its argument, or NULL */
	unsigned char given[256]; /* per row: 0, or 1 + its spelling */
};

/* Handle p->opt (with p->arg): PERFEX_GO_ON, or the exit status. */
typedef perfex_result perfex_opt_fn(struct perfex_parse *p, void *ctx);

/*
 * Parse @argv[1..] for subcommand @cmd, calling @fn for each option of the
 * table; --help (every subcommand has it) prints the help on stdout.
 * Options end at "--" and, when @stop_at_arg, at the first non-option
 * (the command to run); else options and arguments may mix (getopt
 * permutes).  optind is then the first argument.  The rows that store
 * their value (PERFEX_STORE_*) store it in @ctx.
 * Return: PERFEX_GO_ON, 0 after --help, or PERFEX_EXIT_USAGE (reported).
 */
perfex_result perfex_options_parse(struct perfex_parse *p, enum perfex_cmd cmd,
				   int argc, char **argv, bool stop_at_arg,
				   perfex_opt_fn *fn, void *ctx);

/* The same, with the stored values in @values instead of @ctx (a
 * subcommand whose storing rows point into a part of its context). */
perfex_result perfex_options_parse_into(struct perfex_parse *p,
					enum perfex_cmd cmd, int argc,
					char **argv, bool stop_at_arg,
					perfex_opt_fn *fn, void *ctx,
					void *values);

/*
 * After the parse: check each given option against the run's @modes (its
 * mode bits).  Return: PERFEX_GO_ON, or PERFEX_EXIT_USAGE after "perfex:
 * option '-A' needs -a or -C".
 */
perfex_result perfex_options_check_modes(const struct perfex_parse *p, unsigned int modes);

/* Whether an option of @id was given. */
bool perfex_option_given(const struct perfex_parse *p, enum perfex_opt_id id);

/* "perfex: option 'NAME' <fmt>" and the help hint; PERFEX_EXIT_USAGE. */
int perfex_opt_error(const struct perfex_parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * p->arg as a decimal number in [@min, @max], else the error "option
 * 'NAME' expects @what (not 'ARG')".  No sign, no space, no base prefix.
 * Return: PERFEX_GO_ON or PERFEX_EXIT_USAGE.
 */
perfex_result perfex_opt_ulong(const struct perfex_parse *p, unsigned long min,
			       unsigned long max, const char *what,
			       unsigned long *out);
/* The same for @s, a part of p->arg ("N" of --switch-after N:EVENT). */
perfex_result perfex_opt_ulong_of(const struct perfex_parse *p, const char *s,
				  unsigned long min, unsigned long max,
				  const char *what, unsigned long *out);

/* The signal of an optional argument: a number, or a name with or without
 * SIG (KILL, SIGTERM); SIGKILL when none is given.  Returns as
 * perfex_opt_ulong(). */
int perfex_opt_signal(const struct perfex_parse *p, int *out);

/*
 * The options of a subcommand that takes only --json (-j) and --help (-h):
 * sets *@json.  Returns as perfex_options_parse().
 */
int perfex_json_options(enum perfex_cmd cmd, int argc, char **argv, bool *json);

/* The help of @cmd (usage, text, options from the table, trailer). */
void perfex_options_help(enum perfex_cmd cmd, FILE *out);

/*
 * For the programs generated from the table (scripts/gen-completion.c,
 * the bash completion): its rows (*@nr of them), and how @cmd's help is
 * asked for ("perfex record --help"), which names the subcommand.
 */
const struct perfex_option *perfex_options_table(size_t *nr);
const char *perfex_options_help_hint(enum perfex_cmd cmd);

/*
 * The dry run of the argv fuzzer (tests/fuzz/fuzz_argv.c) and of the
 * tests: each subcommand returns 0 as soon as its options are parsed and
 * checked, before it reads a file, opens an event or starts a command.
 * Not for users: perfex's and perfex-serve's main() set it when the
 * environment has PERFEX_DRY_RUN=1 (perfex_dry_run_from_env()).
 */
extern bool perfex_dry_run;
void perfex_dry_run_from_env(void);

#endif /* PERFEX_OPTIONS_H */
