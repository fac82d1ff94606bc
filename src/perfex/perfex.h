/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex — shared declarations of the subcommands.  Each subcommand lives
 * in its own file (cmd-<name>.c) and uses the public libperfctr API only.
 */
#ifndef PERFEX_H
#define PERFEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Exit statuses (docs/perfex.1, EXIT STATUS).  The command's status passes
 * through; as the shell and perf: 126 it cannot be executed, 127 it is not
 * found, 128 + N signal N killed it (N up to SIGRTMAX, 64: 129-192).
 * perfex's own failures are a block above all of those, so that a script
 * cannot take a refused event for a Ctrl-C (they were 129-135 before,
 * which are SIGHUP..SIGBUS's).  tests/cli/pctest.py has the same table.
 */
enum perfex_exit {
	PERFEX_EXIT_NOEXEC = 126,	/* command not executable (as the shell) */
	PERFEX_EXIT_NOCMD = 127,	/* command not found (as the shell) */
	PERFEX_EXIT_USAGE = 200,	/* bad option or argument */
	PERFEX_EXIT_EVENT = 201,	/* unknown or invalid event specification */
	PERFEX_EXIT_PERM = 202,		/* permission (perf_event_paranoid, root) */
	PERFEX_EXIT_TRACEFS = 203,	/* tracefs not mounted / not readable */
	PERFEX_EXIT_TARGET = 204,	/* no such pid/tid/cpu */
	PERFEX_EXIT_IO = 205,		/* output file or I/O failure */
	PERFEX_EXIT_INTERNAL = 206,	/* anything else from the library */
};

/*
 * What option handlers and the steps of a subcommand return: PERFEX_GO_ON
 * to go on, or the exit status (>= 0, enum perfex_exit or 0) that the
 * subcommand ends with at once.
 */
typedef int perfex_result;
#define PERFEX_GO_ON (-1)

/* perfex's command line (perfex.c): the process exit status. */
int perfex_main(int argc, char **argv);

/* Each returns the process exit status. */
int cmd_stat(int argc, char **argv);	/* counting mode (the default) */
int cmd_list(int argc, char **argv);
int list_metrics(bool json, bool groups);	/* perfex list metrics|metricgroups */
int cmd_info(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_regions(int argc, char **argv);	/* perfex --regions -- cmd */

/* "perfex: <msg>" on stderr, git style: lowercase, no final full stop. */
void perfex_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "hint: <msg>" on stderr: the cure, when we know it. */
void perfex_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A command that cannot run (perfctr_target__new_command()'s or
 * __start()'s errno @err): the message, a hint, and the shell's exit
 * status (127 not found, 126 not executable). */
int perfex_command_error(char *const *argv, int err);
/* A cgroup that cannot be a target (ENOMEDIUM: no cgroup2 mounted,
 * ENOENT, ENOTDIR): "cannot @verb cgroup '@cgroup': why", the hint, and
 * PERFEX_EXIT_TARGET. */
int perfex_cgroup_error(const char *verb, const char *cgroup, int err);

/* The folder of the running perfex (/proc/self/exe's) in @buf: what it
 * finds beside itself (perfex-serve, a build tree's python/ and share/).
 * Return 0 or a negative errno. */
int perfex_self_dir(char *buf, size_t size);
/* perf_event_paranoid, from the library's description of the machine
 * (procfs only, no probe); INT_MIN when it cannot tell. */
int perfex_paranoid_level(void);
/* Whether counting in kernel mode is refused here: not root, and a
 * paranoid level above 1 (root, CAP_PERFMON or 1 or lower may). */
bool perfex_kernel_forbidden(void);
/* perfex's exit status for an errno of opening a sampler or a session:
 * permission, target, event, or internal. */
int perfex_exit_for_errno(int err);
/* For a user other than root whom no access broker serves: the hint that
 * names perfctrd, the administrator's cure (perfex info describes it). */
void perfex_broker_cure(void);
/*
 * The hints under a refusal of the kernel (EACCES, EPERM) to count what
 * needs perf_event_paranoid @needed or lower (2 a user's own command, 1
 * a task, 0 CPUs); @task: another's task (ptrace rules).  Then
 * perfex_broker_cure().  Return PERFEX_EXIT_PERM.
 */
int perfex_permission_hints(int needed, bool task);
/* The hint under ENOMEDIUM: no cgroup2 file system mounted. */
void perfex_cgroup2_hint(void);
/* Why an event that parsed cannot count here (an errno of
 * perfctr_errno_unsupported()), in a few words. */
const char *perfex_unsupported_reason(int errnum);
struct perfctr_parse_error;
/*
 * An event specification the library refused (@ret, @err): its message, a
 * caret under the column of @spec, the library's hint or perfex's (perfex
 * list, mounting tracefs), the broker for unreadable tracefs.
 * Return PERFEX_EXIT_TRACEFS or PERFEX_EXIT_EVENT.
 */
int perfex_event_error(const char *spec, const struct perfctr_parse_error *err,
		       int ret);
/* The same, the message after "@where: " (a configuration file's line). */
int perfex_event_error_at(const char *where, const char *spec,
			  const struct perfctr_parse_error *err, int ret);
struct perfctr_attach_error;
/* An open the access broker refused (@ae; @name the event's, or NULL):
 * its reason and where its policy is.  Return PERFEX_EXIT_TARGET (the
 * task is gone) or PERFEX_EXIT_PERM. */
int perfex_broker_refusal(const struct perfctr_attach_error *ae,
			  const char *name);

struct perfctr_reader;
struct perfctr_reader_opts;
/* perfctr_reader__open() of @input that says why it failed: NULL with
 * *@exit_code set (0 on success). */
struct perfctr_reader *perfex_reader_open(const char *input,
					  const struct perfctr_reader_opts *opts,
					  int *exit_code);
/* Say what perfctr_reader__next()'s error @err (< 0) means; returns the
 * exit status. */
int perfex_reader_error(const char *input, int err);

struct perfctr_reader_stats;

/* The DWARF unwinding of @st in words, "3 truncated of 100 unwound: 2
 * stack copy too small, 1 no CFI for the code", into @buf; false when no
 * sample was unwound. */
bool perfex_unwind_summary(const struct perfctr_reader_stats *st, char *buf,
			   size_t size);
/*
 * Create the output file @path anew (mode 0600), moving what was there to
 * PATH.old; never through a symbolic link, never into a FIFO or a device
 * (outfile.c says how).  Prints the error; returns the fd or -1.
 */
int perfex_create_output(const char *path);

#endif /* PERFEX_H */
