// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * count-self: a program that counts its own getppid() calls with
 * libperfctr, through the public API only.
 *
 *	count-self [N]		make N calls (default 1000) and print the count
 *
 * Needs tracefs mounted (mount -t tracefs nodev /sys/kernel/tracing) and
 * the permission to read tracepoints (root, or a permissive
 * perf_event_paranoid).  Exits 0 when the count is exactly N.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <perfctr/perfctr.h>

int main(int argc, char **argv)
{
	PERFCTR_OPTS(perfctr_session_opts, opts, .flags = PERFCTR_SESSION_STRICT);
	struct perfctr_parse_error perr = { .sz = sizeof(perr) };
	struct perfctr_session *session;
	struct perfctr_target *self;
	struct perfctr_count count;
	long n = 1000;
	int rc;

	if (argc > 1) {
		char *end;

		errno = 0;
		n = strtol(argv[1], &end, 10);
		if (errno || *end || n < 0) {
			fprintf(stderr, "usage: count-self [N]\n");
			return 2;
		}
	}

	session = perfctr_session__new(&opts);
	self = perfctr_target__new_self();
	if (!session || !self) {
		fprintf(stderr, "count-self: %s\n", strerror(errno));
		return 1;
	}
	rc = perfctr_session__add_events(session, "syscalls:sys_enter_getppid", &perr);
	if (rc < 0) {
		fprintf(stderr, "count-self: %s%s%s\n", perr.message,
			perr.hint[0] ? "\n  hint: " : "", perr.hint);
		return 1;
	}
	rc = perfctr_session__attach(session, self);
	if (rc < 0) {
		fprintf(stderr, "count-self: cannot attach: %s\n", strerror(-rc));
		return 1;
	}

	perfctr_session__start(session);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	perfctr_session__stop(session);

	perfctr_session__read(session);
	perfctr_session__count(session, 0, &count);
	printf("%s: %" PRIu64 " (ran %.0f%% of the time)\n",
	       perfctr_session__event_name(session, 0), count.value,
	       100.0 * perfctr_count__fraction(&count));

	perfctr_session__delete(session);
	perfctr_target__delete(self);
	return count.value == (uint64_t)n ? 0 : 1;
}
