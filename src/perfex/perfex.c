// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex — one binary, a dispatch table of subcommands.  Without a
 * subcommand perfex counts (`perfex [options] -- command`), like the
 * original perfex and pmcCount.  `perfex CMD --help` equals
 * `perfex help CMD`.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <perfctr/perfctr.h>

#include "options.h"
#include "perfex.h"

#ifdef PERFEX_LINKS_DEMANGLER
/*
 * A static perfex cannot load the C++ runtime to demangle C++ names: the
 * Makefile links its demangler in from libstdc++'s archive, and this
 * reference keeps it; the library's weak reference then finds it.
 */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
char *(*const perfex_linked_demangler)(const char *, char *, size_t *, int *) =
	__cxa_demangle;
#endif

static int cmd_serve(int argc, char **argv);

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "stat",   cmd_stat,   "run a command (or watch a target) and report its counts" },
	{ "list",   cmd_list,   "list the events this machine offers" },
	{ "info",   cmd_info,   "describe the machine's counters, features and limits" },
	{ "record", cmd_record, "sample a command into a perf.data file" },
	{ "report", cmd_report, "summarise a perf.data file" },
	{ "diff",   cmd_diff,   "compare the profiles of perf.data files" },
	{ "script", cmd_script, "print the samples of a perf.data file" },
	{ "annotate", cmd_annotate, "the instructions and source lines of the sampled functions" },
	{ "inject", cmd_inject, "add JIT code's maps and files to a perf.data file" },
	{ "top",    cmd_top,    "show the hottest functions, live" },
	{ "serve",  cmd_serve,  "export counts to Prometheus over HTTP" },
};

/*
 * `perfex serve` is the program perfex-serve beside perfex, as git runs
 * git-<cmd>: the HTTP server library it links is shared-only (its TLS
 * dependencies have no archives), and linking it here would make perfex a
 * dynamic program, giving back the start-up cost its static link saves on
 * every counting run (Makefile).
 */
static int cmd_serve(int argc, char **argv)
{
	char self[PATH_MAX], prog[PATH_MAX + 16];
	int err = perfex_self_dir(self, sizeof(self));

	if (err) {
		perfex_error("cannot find perfex-serve: /proc/self/exe: %s",
			     strerror(-err));
		return PERFEX_EXIT_INTERNAL;
	}
	snprintf(prog, sizeof(prog), "%s/perfex-serve", self);
	argv[0] = prog;
	execv(prog, argv);
	perfex_error("cannot run '%s': %s", prog, strerror(errno));
	perfex_hint("perfex serve is the program perfex-serve, installed "
		    "beside perfex (make install puts both in BINDIR)");
	return errno == ENOENT ? PERFEX_EXIT_NOCMD : PERFEX_EXIT_NOEXEC;
}

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: perfex [options] [--] command [args]   count a command\n"
		"       perfex <subcommand> [options]\n"
		"       perfex --regions [-e EVENTS] [-o FILE] [--] command [args]\n"
		"                                    count the regions it marks\n"
		"       perfex help <subcommand>\n\n"
		"subcommands:\n");
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  %-9s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(out, "\nperfex --help shows the counting options; "
		     "perfex <subcommand> --help the others.\n");
}

static const struct subcommand *find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(subcommands[i].name, name))
			return &subcommands[i];
	return NULL;
}

int perfex_main(int argc, char **argv)
{
	const struct subcommand *sub;

	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("perfex %s\n", perfctr_version());
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "help")) {
		char *help_argv[] = { argv[2], "--help", NULL };

		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		sub = find(argv[2]);
		if (!sub) {
			perfex_error("unknown subcommand '%s'", argv[2]);
			usage(stderr);
			return PERFEX_EXIT_USAGE;
		}
		return sub->fn(2, help_argv);
	}
	if (argc > 1 && !strcmp(argv[1], "--regions"))
		return cmd_regions(argc - 1, argv + 1);
	if (argc > 1 && (sub = find(argv[1])))
		return sub->fn(argc - 1, argv + 1);
	/* No subcommand: counting mode, with argv[0] as its name. */
	return cmd_stat(argc, argv);
}

/* The argv fuzzer (tests/fuzz/fuzz_argv.c) has a main of its own and calls
 * perfex_main(). */
#ifndef PERFEX_NO_MAIN
int main(int argc, char **argv)
{
	perfex_dry_run_from_env();
	return perfex_main(argc, argv);
}
#endif
