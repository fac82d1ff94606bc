/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex's messages in git's form (perfex.h), shared by perfex and the
 * perfex-serve program: every subcommand's refusals (permission, events,
 * tracefs, the access broker) are written here once.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <perfctr/perfctr.h>

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
		perfex_cgroup2_hint();
	else
		perfex_hint("a name relative to the cgroup2 mount "
			    "(see /proc/self/mountinfo), as "
			    "/proc/PID/cgroup shows it after '0::'");
	return PERFEX_EXIT_TARGET;
}

void perfex_cgroup2_hint(void)
{
	perfex_hint("as root: mount -t cgroup2 none /sys/fs/cgroup/unified");
}

/* Why an event that parsed cannot count here, in a few words (an errno
 * perfctr_errno_unsupported() accepts; others as strerror says). */
const char *perfex_unsupported_reason(int errnum)
{
	switch (errnum) {
	case ENOENT:
	case EOPNOTSUPP:
		return "no PMU of this machine counts it";
	case ENODEV:
		return "its PMU cannot count on these CPUs";
	case ENOSPC:
		return "no counter is free for it";
	default:
		return strerror(errnum);
	}
}

bool perfex_kernel_forbidden(void)
{
	return geteuid() != 0 && perfex_paranoid_level() > 1;
}

int perfex_exit_for_errno(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return PERFEX_EXIT_PERM;
	case ESRCH:
	case ENODEV:
		return PERFEX_EXIT_TARGET;
	case ENOENT:
	case EOPNOTSUPP:
	case EINVAL:
		return PERFEX_EXIT_EVENT;
	default:
		return PERFEX_EXIT_INTERNAL;
	}
}

int perfex_self_dir(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

int perfex_paranoid_level(void)
{
	PERFCTR_OPTS(perfctr_info_opts, iopts, .no_probe = true);
	struct perfctr_info info = { .sz = sizeof(info) };

	if (perfctr_info_ext(&iopts, &info, NULL, NULL) < 0)
		return INT_MIN;
	return info.paranoid;
}

void perfex_broker_cure(void)
{
	struct perfctr_broker_info b = { .sz = sizeof(b) };

	if (geteuid() == 0 || perfctr_broker_info(&b) < 0)
		return;
	/* Answered with a rule (its refusal is said apart), or not asked:
	 * the user chose. */
	if (b.status == 0 || b.status == -ECANCELED)
		return;
	if (b.status == -EACCES)
		perfex_hint("the access broker (perfctrd) answers but has no "
			    "rule for you: an administrator can add one "
			    "(perfctrd.conf(5))");
	else
		perfex_hint("without root: an administrator runs perfctrd, "
			    "the access broker, with a rule for you "
			    "(perfctrd(8))");
}

int perfex_permission_hints(int needed, bool task)
{
	int level = perfex_paranoid_level();

	if (level == INT_MIN) {
		perfex_hint("run as root (perf_event_paranoid is unreadable)");
	} else if (level > needed) {
		perfex_hint("perf_event_paranoid is %d; this needs %d or lower "
			    "(or root / CAP_PERFMON)", level, needed);
		perfex_hint("as root: sysctl -w kernel.perf_event_paranoid=%d",
			    needed);
	} else if (task) {
		perfex_hint("only your own processes can be watched (ptrace "
			    "rules); run as root to watch others");
	} else {
		perfex_hint("perf_event_paranoid is %d; run as root or with "
			    "CAP_PERFMON", level);
	}
	perfex_broker_cure();
	return PERFEX_EXIT_PERM;
}

int perfex_event_error(const char *spec, const struct perfctr_parse_error *err,
		       int ret)
{
	return perfex_event_error_at(NULL, spec, err, ret);
}

int perfex_event_error_at(const char *where, const char *spec,
			  const struct perfctr_parse_error *err, int ret)
{
	int errnum = err->errnum ? err->errnum : -ret;

	perfex_error("%s%s%s", where ? where : "", where ? ": " : "",
		     err->message[0] ? err->message : strerror(errnum));
	if ((errnum == EINVAL || errnum == ENOENT) && err->column >= 0 &&
	    (size_t)err->column <= strlen(spec))
		fprintf(stderr, "    %s\n    %*s^\n", spec, err->column, "");
	if (err->hint[0])
		perfex_hint("%s", err->hint);
	if (errnum == ENOTDIR) {
		if (geteuid() != 0)
			perfex_hint("tracefs is readable by root only: run as root");
		else if (!err->hint[0])
			perfex_hint("as root: mount -t tracefs nodev /sys/kernel/tracing");
		perfex_broker_cure();
		return PERFEX_EXIT_TRACEFS;
	}
	if (errnum == EACCES) {
		if (!err->hint[0])
			perfex_hint("tracefs is readable by root only: run as root");
		perfex_broker_cure();
		return PERFEX_EXIT_TRACEFS;
	}
	if (errnum == ENOENT && !err->hint[0])
		perfex_hint("perfex list shows the events this machine offers");
	return PERFEX_EXIT_EVENT;
}

int perfex_broker_refusal(const struct perfctr_attach_error *ae,
			  const char *name)
{
	perfex_error("cannot open event '%s': the access broker refused it: %s",
		     name ? name : "?", ae->broker);
	/* The library's hint under a tracepoint the broker would not
	 * name (sys/broker.h), word for word. */
	perfex_hint("the broker's policy file decides "
		    "(/etc/perfctr/perfctrd.conf unless perfctrd -c names "
		    "another; see perfctrd.conf(5))");
	perfex_hint("perfex info shows what it allows you");
	return ae->errnum == ESRCH ? PERFEX_EXIT_TARGET : PERFEX_EXIT_PERM;
}
