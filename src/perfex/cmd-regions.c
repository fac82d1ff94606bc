// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex --regions [-e EVENTS] [-o FILE] [--] command [args]
 *
 * Runs a program that uses libperfctr's region markers
 * (perfctr_region_begin/end) and prints one table per region: calls and
 * counts per thread and in total, with the measured cost of an empty
 * begin/end pair subtracted.  -e sets the events (PERFCTR_EVENTS for the
 * program); -o keeps the results file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfctr/perfctr.h>
#include <perfctr/region.h>

#include "options.h"
#include "perfex.h"

struct regions_opts {
	const char *events, *keep;
};

static perfex_result regions_option(struct perfex_parse *p, void *ctx)
{
	struct regions_opts *o = ctx;

	/* The program would read an empty PERFCTR_EVENTS as its default
	 * events, an empty -o as no file at all. */
	if (!*p->arg)
		return perfex_opt_error(p, "needs %s (not an empty string)",
					p->opt->id == OPT_EVENT ? "events" :
					"a file name");
	if (p->opt->id == OPT_EVENT)
		o->events = p->arg;
	else if (p->opt->id == OPT_OUTPUT)
		o->keep = p->arg;
	return -1;
}

int cmd_regions(int argc, char **argv)
{
	const char *events, *keep;
	char tmp[] = "/tmp/perfex-regions-XXXXXX";
	const char *path;
	int i, status, rc, fd;
	pid_t pid;
	struct regions_opts o = { 0 };
	struct perfex_parse p;

	rc = perfex_options_parse(&p, PERFEX_CMD_REGIONS, argc, argv, true,
				  regions_option, &o);
	if (rc >= 0)
		return rc;
	events = o.events;
	keep = o.keep;
	i = optind;
	if (i >= argc) {
		perfex_error("--regions needs a command to run");
		perfex_hint("perfex --regions --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	if (perfex_dry_run)
		return 0;
	if (keep) {
		path = keep;
	} else {
		fd = mkstemp(tmp);
		if (fd < 0) {
			perfex_error("cannot create a results file in /tmp: %s",
				     strerror(errno));
			return PERFEX_EXIT_IO;
		}
		close(fd);
		path = tmp;
	}
	/* An empty file until the program writes it: "no regions" is then
	 * told apart from a program that never linked the markers. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perfex_error("cannot fork: %s", strerror(errno));
		return PERFEX_EXIT_INTERNAL;
	}
	if (pid == 0) {
		setenv("PERFCTR_REGIONS_FILE", path, 1);
		if (events)
			setenv("PERFCTR_EVENTS", events, 1);
		execvp(argv[i], argv + i);
		perfex_error("cannot run '%s': %s", argv[i], strerror(errno));
		_exit(errno == ENOENT ? PERFEX_EXIT_NOCMD : PERFEX_EXIT_NOEXEC);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	rc = perfctr_region_report(path, stdout);
	if (rc == -EINVAL)
		perfex_error("'%s' wrote no region results (does it use "
			     "perfctr_region_begin/end?)", argv[i]);
	else if (rc < 0)
		perfex_error("cannot read the region results: %s", strerror(-rc));
	if (!keep)
		unlink(path);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	if (WEXITSTATUS(status) == PERFEX_EXIT_NOCMD ||
	    WEXITSTATUS(status) == PERFEX_EXIT_NOEXEC)
		return WEXITSTATUS(status);
	return rc < 0 ? PERFEX_EXIT_INTERNAL : WEXITSTATUS(status);
}
