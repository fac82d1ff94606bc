// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex — one binary, a dispatch table of subcommands.  Without a
 * subcommand perfex counts (`perfex [options] -- command`), like the
 * original perfex and pmcCount.  `perfex CMD --help` equals
 * `perfex help CMD`.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <perfctr/perfctr.h>

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
	{ "script", cmd_script, "print the samples of a perf.data file" },
};

void perfex_error(const char *fmt, ...)
{
	va_list ap;

	fputs("perfex: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int perfex_command_error(char *const *argv, int err)
{
	if (err == ENOENT) {
		perfex_error("cannot run '%s': command not found", argv[0]);
		if (!strchr(argv[0], '/'))
			perfex_hint("it is looked up in PATH; give a path "
				    "(./%s) for a file in this directory", argv[0]);
		return PERFEX_EXIT_NOCMD;
	}
	if (err == EACCES || err == ENOEXEC || err == EISDIR) {
		perfex_error("cannot run '%s': %s", argv[0], strerror(err));
		perfex_hint("check that it is an executable file (chmod +x '%s')",
			    argv[0]);
		return PERFEX_EXIT_NOEXEC;
	}
	perfex_error("cannot run '%s': %s", argv[0], strerror(err));
	return PERFEX_EXIT_INTERNAL;
}

void perfex_hint(const char *fmt, ...)
{
	va_list ap;

	fputs("hint: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
		fprintf(out, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
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

int main(int argc, char **argv)
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
