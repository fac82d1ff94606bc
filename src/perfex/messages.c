/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex's messages in git's form (perfex.h), shared by perfex and the
 * perfex-serve program.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "perfex.h"

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

int perfex_cgroup_error(const char *verb, const char *cgroup, int err)
{
	perfex_error("cannot %s cgroup '%s': %s", verb, cgroup,
		     err == ENOMEDIUM ? "no cgroup v2 file system is "
		     "mounted" : err == ENOENT ? "no such cgroup" :
		     "not a cgroup v2 directory");
	if (err == ENOMEDIUM)
		perfex_hint("as root: mount -t cgroup2 none "
			    "/sys/fs/cgroup/unified");
	else
		perfex_hint("a name relative to the cgroup2 mount "
			    "(see /proc/self/mountinfo), as "
			    "/proc/PID/cgroup shows it after '0::'");
	return PERFEX_EXIT_TARGET;
}
