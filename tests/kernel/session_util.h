/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Helpers of the session tests (tests/kernel/test_session*.c): sessions
 * built from a specification, exact tracepoint counts, a running workload
 * to attach to, and the open-fd count of this process.
 */
#ifndef PERFCTR_SESSION_UTIL_H
#define PERFCTR_SESSION_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfctr/perfctr.h"
#include "test.h"

#define TP_GETPPID "syscalls:sys_enter_getppid"
#define TP_GETPID  "syscalls:sys_enter_getpid"
#define TP_EXECVE  "syscalls:sys_enter_execve"

/*
 * Closing the last fd of a tracepoint costs 30-50 ms (docs/kernel-notes.md
 * 5): hold one disabled fd on each tracepoint the tests use, for the
 * life of the program, so that sessions open and close cheaply.
 */
static inline void keep_tracepoint(const char *subsys_event)
{
	struct perf_event_attr attr;
	long long id = test_tracepoint_id(subsys_event);

	if (id < 0)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	attr.disabled = 1;
	/* Deliberately never closed. */
	(void)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
		      PERF_FLAG_FD_CLOEXEC);
}

static inline void require_tracepoints(void)
{
	static bool kept;

	test_require_tracefs();
	if (!kept) {
		keep_tracepoint(TP_GETPPID);
		keep_tracepoint(TP_GETPID);
		keep_tracepoint(TP_EXECVE);
		kept = true;
	}
}

/* A detached session with the events of @spec; the case stops on failure. */
static inline struct perfctr_session *session_with(const char *spec,
						   unsigned int flags)
{
	PERFCTR_OPTS(perfctr_session_opts, opts, .flags = flags);
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	struct perfctr_session *s;
	int n;

	if (strstr(spec, "syscalls:"))
		require_tracepoints();
	s = perfctr_session__new(&opts);
	REQUIRE(s);
	n = perfctr_session__add_events(s, spec, &err);
	if (n <= 0) {
		test_fail(__FILE__, __LINE__, "'%s': %d: %s", spec, n, err.message);
		perfctr_session__delete(s);
		test_abort();
	}
	return s;
}

/* The value of event @idx summed over units, after a read. */
static inline uint64_t value_of(struct perfctr_session *s, size_t idx)
{
	struct perfctr_count c;

	if (perfctr_session__count(s, idx, &c))
		return UINT64_MAX;
	return c.value;
}

static inline uint64_t unit_value_of(struct perfctr_session *s, size_t idx,
				     size_t unit)
{
	struct perfctr_count c;

	if (perfctr_session__unit_count(s, idx, unit, &c))
		return UINT64_MAX;
	return c.value;
}

static inline int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

/*
 * A running pcwork whose stdin is a pipe: it runs `@pre... ready FLAG
 * wait @post...`, so it has done @pre once wait_ready() returns and does
 * @post once release() writes its line.
 */
struct workload {
	pid_t pid;
	int stdin_fd;
	char flag[64];
};

static inline void workload_spawn(struct workload *w, char *const pre[],
				  char *const post[])
{
	char *argv[64];
	int in[2], n = 0, fd;

	snprintf(w->flag, sizeof(w->flag), "/tmp/perfctr-ready-XXXXXX");
	fd = mkstemp(w->flag);
	REQUIRE(fd >= 0);
	close(fd);
	unlink(w->flag);
	REQUIRE(pipe(in) == 0);
	argv[n++] = (char *)test_build_path("tests/workload/pcwork");
	for (int i = 0; pre && pre[i] && n < 50; i++)
		argv[n++] = pre[i];
	argv[n++] = "ready";
	argv[n++] = w->flag;
	argv[n++] = "wait";
	for (int i = 0; post && post[i] && n < 62; i++)
		argv[n++] = post[i];
	argv[n] = NULL;
	w->pid = fork();
	REQUIRE(w->pid >= 0);
	if (w->pid == 0) {
		dup2(in[0], 0);
		close(in[0]);
		close(in[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	w->stdin_fd = in[1];
	for (int i = 0; i < 10000 && access(w->flag, F_OK); i++)
		usleep(1000);
	REQUIRE(access(w->flag, F_OK) == 0);
	unlink(w->flag);
}

static inline int workload_finish(struct workload *w)
{
	int status = -1;

	(void)!write(w->stdin_fd, "go\n", 3);
	close(w->stdin_fd);
	waitpid(w->pid, &status, 0);
	return status;
}

#endif /* PERFCTR_SESSION_UTIL_H */
