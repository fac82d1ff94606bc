// SPDX-License-Identifier: LGPL-2.1
/*
 * Hardware tier, perfex: the default events of `perfex -- command` count
 * cycles and instructions and give the IPC metric where a hardware PMU
 * exists.  The CLI tests (tests/cli/) cannot run in the PMU lane, which
 * runs kernel-tier programs only, so this one runs the built perfex itself
 * and reads its CSV.  Skips where there is no PMU.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw_lane.h"

#define LOOPS "1000000"

struct row {
	char value[64];
	char event[64];
	char metric_value[64];
	char metric_unit[64];
};

/* Field @idx of a CSV line (no quoting in perfex's output), into @out. */
static void field(const char *line, int idx, char *out, size_t size)
{
	const char *p = line, *end;

	for (; idx > 0 && p; idx--) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	out[0] = '\0';
	if (!p)
		return;
	end = strpbrk(p, ",\n");
	if (!end)
		end = p + strlen(p);
	snprintf(out, size, "%.*s", (int)(end - p), p);
}

/* Run perfex with @argv (NULL-terminated, after "perfex"), the CSV of -o
 * into @rows.  Return the number of rows, or -1. */
static int run_perfex(const char *const *argv, struct row *rows, int max)
{
	char out[] = "/tmp/perfex-hw-XXXXXX";
	const char *args[32];
	char line[512];
	int fd, n = 0, status, i = 0;
	FILE *f;
	pid_t pid;

	fd = mkstemp(out);
	if (fd < 0)
		return -1;
	close(fd);
	args[i++] = test_build_path("perfex");
	args[i++] = "-x,";
	args[i++] = "-o";
	args[i++] = out;
	for (; *argv && i < 31; argv++)
		args[i++] = *argv;
	args[i] = NULL;
	pid = fork();
	if (pid == 0) {
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		unlink(out);
		return -1;
	}
	f = fopen(out, "r");
	unlink(out);
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		field(line, 0, rows[n].value, sizeof(rows[n].value));
		field(line, 2, rows[n].event, sizeof(rows[n].event));
		field(line, 5, rows[n].metric_value, sizeof(rows[n].metric_value));
		field(line, 6, rows[n].metric_unit, sizeof(rows[n].metric_unit));
		n++;
	}
	fclose(f);
	return n;
}

static const struct row *find(const struct row *rows, int n, const char *event)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(rows[i].event, event))
			return &rows[i];
	return NULL;
}

TEST(default_events_count_cycles_and_instructions)
{
	const char *argv[] = { "--", test_build_path("tests/workload/pcwork"),
			       "insnloop", LOOPS, NULL };
	struct row rows[32];
	const struct row *cyc, *ins;
	double ipc;
	int n;

	hw_require_lane();
	n = run_perfex(argv, rows, 32);
	REQUIRE(n >= 8);
	cyc = find(rows, n, "cycles");
	ins = find(rows, n, "instructions");
	REQUIRE(cyc && ins);
	if (strstr(cyc->value, "not") || strstr(ins->value, "not"))
		test_fail(__FILE__, __LINE__, "cycles '%s', instructions '%s'",
			  cyc->value, ins->value);
	/* At least the loop's own instructions. */
	CHECK(strtoull(ins->value, NULL, 10) >= 4 * strtoull(LOOPS, NULL, 10));
	CHECK(strtoull(cyc->value, NULL, 10) > 0);
	CHECK_STR(ins->metric_unit, "insn per cycle");
	ipc = strtod(ins->metric_value, NULL);
	/* Under QEMU's -icount shift=0 one instruction is one cycle; on real
	 * hardware anything plausible. */
	CHECK(ipc > 0.05 && ipc < 10.0);
	CHECK_STR(cyc->metric_unit, "GHz");
}

TEST(group_gives_ipc)
{
	const char *argv[] = { "-e", "{cycles:u,instructions:u}", "--",
			       test_build_path("tests/workload/pcwork"),
			       "insnloop", LOOPS, NULL };
	struct row rows[8];
	const struct row *ins;
	int n;

	hw_require_lane();
	n = run_perfex(argv, rows, 8);
	REQUIRE(n == 2);
	ins = find(rows, n, "instructions:u");
	REQUIRE(ins);
	CHECK(strtoull(ins->value, NULL, 10) >= 4 * strtoull(LOOPS, NULL, 10));
	CHECK_STR(ins->metric_unit, "insn per cycle");
}

TEST_MAIN(TEST_CASE(default_events_count_cycles_and_instructions),
	  TEST_CASE(group_gives_ipc))
