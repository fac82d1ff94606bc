// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: perfex's command line.  The input is the arguments
 * after "perfex", each ended by a NUL byte (the seeds in
 * tests/fuzz/corpus/fuzz_argv/ are the tests' command lines, made by
 * tests/fuzz/argv-seeds.py, whose dictionary names every option of the
 * table).  perfex runs in its dry run (options.h): each subcommand
 * returns once its options are parsed and checked, so no command is run,
 * no event opened and no file read or written; what is fuzzed is the
 * dispatch, getopt over the option table, each subcommand's handlers and
 * the checks between options, under AddressSanitizer, UndefinedBehavior-
 * Sanitizer and LeakSanitizer.
 *
 * A run must end with a documented exit status of perfex's own (never
 * the shell's 126/127 or a signal's: no command ran).
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "options.h"
#include "perfex.h"
#include "serve/serve.h"

#define MAX_ARGS 256

static FILE *report;

/*
 * Checking -G against the events parses the events, and an unknown one
 * is compared with every tracepoint for "did you mean": over the
 * machine's tracefs that is most of the time of a run.  As root, a mount
 * namespace of the fuzzer's own puts the fixture tracefs there instead
 * (found as fuzz_event_spec finds its fixtures); else the real one.
 */
static void fixture_tracefs(void)
{
	const char *src = getenv("PERFCTR_SRC");
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/fixtures/tracefs",
		 src ? src : ".");
	if (geteuid() != 0 || access(path, R_OK) ||
	    unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return;
	if (mount(path, "/sys/kernel/tracing", NULL, MS_BIND, NULL) == 0)
		mount(path, "/sys/kernel/debug/tracing", NULL, MS_BIND, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fixture_tracefs();
	perfex_dry_run = true;
	report = fdopen(dup(2), "w");
	/* --help, --version and the messages: not the fuzzer's output.
	 * The sanitizers and libFuzzer write to the descriptor, not to the
	 * stream. */
	stdout = fopen("/dev/null", "w");
	stderr = fopen("/dev/null", "w");
	if (!stdout || !stderr || !report)
		abort();
	return 0;
}

static bool expected(int ret)
{
	switch (ret) {
	case 0:
	case PERFEX_EXIT_USAGE:
	case PERFEX_EXIT_EVENT:
	case PERFEX_EXIT_INTERNAL:	/* out of memory: -rss_limit_mb */
		return true;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2];
	int argc = 1, ret;
	size_t pos = 0;

	argv[0] = strdup("perfex");
	while (pos < size && argc <= MAX_ARGS) {
		const uint8_t *end = memchr(data + pos, '\0', size - pos);
		size_t len = end ? (size_t)(end - (data + pos)) : size - pos;

		/* A copy of its own: a read past an argument's end is seen. */
		argv[argc] = malloc(len + 1);
		if (!argv[argc])
			abort();
		memcpy(argv[argc], data + pos, len);
		argv[argc][len] = '\0';
		argc++;
		pos += len + 1;
	}
	argv[argc] = NULL;

	/* perfex serve is the program perfex-serve, which perfex executes:
	 * called here instead.  (`perfex help serve` would execute it.) */
	if (argc > 2 && !strcmp(argv[1], "help") && !strcmp(argv[2], "serve"))
		ret = 0;
	else if (argc > 1 && !strcmp(argv[1], "serve"))
		ret = perfex_serve_main(argc - 1, argv + 1);
	else
		ret = perfex_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	if (!expected(ret)) {
		fprintf(report, "fuzz_argv: exit status %d\n", ret);
		fflush(report);
		abort();
	}
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return 0;
}
