// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hardware tier, perfex: the default events of `perfex -- command` count
 * cycles and instructions and give the IPC metric where a hardware PMU
 * exists.  The CLI tests (tests/cli/) cannot run in the PMU lane, which
 * runs kernel-tier programs only, so this one runs the built perfex itself
 * and reads its CSV.  Skips where there is no PMU.
 */
#include <fcntl.h>
#include <limits.h>
#include <math.h>
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

/* The row of an event whose name contains @alias (any case) or is @raw. */
static const struct row *find_named(const struct row *rows, int n,
				    const char *alias, const char *raw)
{
	for (int i = 0; i < n; i++)
		if (rows[i].event[0] && (strcasestr(rows[i].event, alias) ||
					 !strcmp(rows[i].event, raw)))
			return &rows[i];
	return NULL;
}

/* A metric row of the CSV (no event) whose "unit name" field ends in
 * @name, or NULL. */
static const struct row *find_metric(const struct row *rows, int n,
				     const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < n; i++) {
		size_t l = strlen(rows[i].metric_unit);

		if (!rows[i].value[0] && !rows[i].event[0] && l >= len &&
		    !strcmp(rows[i].metric_unit + l - len, name))
			return &rows[i];
	}
	return NULL;
}

/* The imported Arm tables' ipc (arm/neoverse-n1's metrics.json:
 * INST_RETIRED / CPU_CYCLES, Armv8 common events 0x08 and 0x11 that every
 * PMUv3 has) of the loop equals the ratio of the counts perfex printed for
 * its two events.  QEMU's "max" CPU is in no mapfile, so the test poses as
 * an N1 through PERFCTR_CPUID; the tables are the build's import of
 * linux-source (skip when the build had none). */
TEST(arm_table_ipc_matches_its_counts)
{
	const char *argv[] = { "-M", "ipc", "--",
			       test_build_path("tests/workload/pcwork"),
			       "insnloop", LOOPS, NULL };
	const char *tables = test_build_path("share/perfctr/pmu-events");
	char mapfile[PATH_MAX];
	const struct row *ins, *cyc, *ipc;
	double want, got;
	struct row rows[16];
	int n;

	hw_require_lane();
	snprintf(mapfile, sizeof(mapfile), "%s/arm64/mapfile.csv", tables);
	if (access(mapfile, R_OK))
		test_skip("no imported pmu-events tables at %s (the build "
			  "imports them from linux-source-6.12)", tables);
	setenv("PERFCTR_METRICS_PATH", tables, 1);
	setenv("PERFCTR_CPUID", "0x00000000410fd0c0", 1);
	n = run_perfex(argv, rows, 16);
	unsetenv("PERFCTR_METRICS_PATH");
	unsetenv("PERFCTR_CPUID");
	REQUIRE(n >= 3);
	/* Named as the table's event resolved: through the PMU's sysfs
	 * aliases where they exist, else as raw codes. */
	ins = find_named(rows, n, "inst_retired", "r08");
	cyc = find_named(rows, n, "cpu_cycles", "r11");
	ipc = find_metric(rows, n, " ipc");
	if (!ins || !cyc || !ipc) {
		for (int i = 0; i < n; i++)
			fprintf(stderr, "row %d: '%s' '%s' '%s' '%s'\n", i,
				rows[i].value, rows[i].event,
				rows[i].metric_value, rows[i].metric_unit);
		test_fail(__FILE__, __LINE__, "no r08, r11 or ipc row in "
			  "%d rows (on stderr)", n);
		return;
	}
	CHECK(strtoull(ins->value, NULL, 10) >= 4 * strtoull(LOOPS, NULL, 10));
	REQUIRE(strtoull(cyc->value, NULL, 10) > 0);
	want = strtod(ins->value, NULL) / strtod(cyc->value, NULL);
	got = strtod(ipc->metric_value, NULL);
	/* %.6g in the CSV: six significant digits. */
	if (fabs(got - want) > 1e-5 * want)
		test_fail(__FILE__, __LINE__, "ipc %s, counts give %.9g",
			  ipc->metric_value, want);
}

/* Run perfex with @argv (after "perfex", NULL-terminated), its stdout
 * and stderr together into @buf.  Return its exit status, or -1. */
static int run_capture(const char *const *argv, char *buf, size_t size)
{
	char out[] = "/tmp/perfex-hw-out-XXXXXX";
	const char *args[32];
	int fd, status, i = 0;
	ssize_t n;
	pid_t pid;

	fd = mkstemp(out);
	if (fd < 0)
		return -1;
	unlink(out);
	args[i++] = test_build_path("perfex");
	for (; *argv && i < 31; argv++)
		args[i++] = *argv;
	args[i] = NULL;
	pid = fork();
	if (pid == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		close(fd);
		return -1;
	}
	n = pread(fd, buf, size - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return WEXITSTATUS(status);
}

/* `perfex record -e cycles:u -c P` of the fixed loop writes one sample per
 * P user-mode cycles of the whole command, as perfex counts them, and the
 * report puts the loop's program on top.  Under -icount shift=0 a cycle is
 * an instruction, so the count is reproducible; one sample of slack for the
 * couple of instructions a run may differ by (test_hw_count). */
TEST(record_cycles_sample_count_and_top)
{
	const char *stat_argv[] = { "-e", "cycles:u", "--",
				    test_build_path("tests/workload/pcwork"),
				    "insnloop", LOOPS, NULL };
	char file[64];	/* per run: two suites may run at once */
	const char *rec_argv[] = { "record", "-e", "cycles:u", "-c", "100000",
				   "-o", file, "--",
				   test_build_path("tests/workload/pcwork"),
				   "insnloop", LOOPS, NULL };
	const char *rep_argv[] = { "report", "-i", file, "--stdio", NULL };
	static char buf[65536];
	unsigned long long cycles, samples, expect;
	struct row rows[4];
	const char *p, *top;
	int n;

	hw_require_lane();
	snprintf(file, sizeof(file), "/tmp/perfex-hw-record-%d.data",
		 (int)getpid());
	n = run_perfex(stat_argv, rows, 4);
	REQUIRE(n == 1);
	cycles = strtoull(rows[0].value, NULL, 10);
	REQUIRE(cycles >= 4 * strtoull(LOOPS, NULL, 10));
	expect = cycles / 100000;

	REQUIRE(run_capture(rec_argv, buf, sizeof(buf)) == 0);
	p = strstr(buf, "perfex record: ");
	REQUIRE(p);
	samples = strtoull(p + strlen("perfex record: "), NULL, 10);
	CHECK(samples + 1 >= expect && samples <= expect + 1);
	CHECK(strstr(buf, "; 0 samples lost") != NULL);

	REQUIRE(run_capture(rep_argv, buf, sizeof(buf)) == 0);
	unlink(file);
	/* The first profile row: the first line that is not a comment. */
	for (top = buf; top && (*top == '#' || *top == '\n');
	     top = strchr(top, '\n'), top = top ? top + 1 : NULL)
		;
	REQUIRE(top);
	if (!strstr(top, "pcwork"))
		test_fail(__FILE__, __LINE__, "top row is not pcwork's: %.200s", top);
}

/* `perfex record --call-graph dwarf` samples the cycle counter with the
 * architecture's user registers and a copy of the user stack; `perfex
 * report --folded` unwinds each sample with libdw and the workload's CFI.
 * The loop is spin_loop(), a C function main calls (not inlined), so a
 * whole chain is ...;main;spin_loop.  Nearly all must be whole: a sample
 * in the few instructions of a prologue or an epilogue may lose a frame
 * in any unwinder. */
TEST(record_dwarf_call_graph_reaches_main)
{
	char file[64];	/* per run: two suites may run at once */
	const char *rec_argv[] = { "record", "-e", "cycles:u", "-c", "100000",
				   "--call-graph", "dwarf", "-o", file, "--",
				   test_build_path("tests/workload/pcwork"),
				   "loop", "2000000", NULL };
	const char *rep_argv[] = { "report", "-i", file, "--folded", NULL };
	static char buf[65536];
	unsigned long long in_loop = 0, whole = 0;
	char *line, *save = NULL;

	hw_require_lane();
	snprintf(file, sizeof(file), "/tmp/perfex-hw-dwarf-%d.data",
		 (int)getpid());
	if (run_capture(rec_argv, buf, sizeof(buf)) != 0) {
		unlink(file);
		test_fail(__FILE__, __LINE__, "perfex record: %.500s", buf);
		return;
	}
	REQUIRE(run_capture(rep_argv, buf, sizeof(buf)) == 0);
	unlink(file);
	if (strstr(buf, "perfex: note: DWARF call chains: ") &&
	    strstr(buf, "not unwound (no libdw"))
		test_skip("this perfex was built without libdw "
			  "(scripts/install-deps pmu)");
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *count = strrchr(line, ' ');
		unsigned long long n;

		if (!count)
			continue;
		*count++ = '\0';
		n = strtoull(count, NULL, 10);
		if (strlen(line) < strlen("spin_loop") ||
		    strcmp(line + strlen(line) - strlen("spin_loop"), "spin_loop"))
			continue;
		in_loop += n;
		if (strstr(line, ";main;spin_loop"))
			whole += n;
	}
	CHECK(in_loop > 50);
	if (whole * 100 < in_loop * 95)
		test_fail(__FILE__, __LINE__,
			  "%llu of %llu samples in spin_loop reach main", whole,
			  in_loop);
}

TEST_MAIN(TEST_CASE(default_events_count_cycles_and_instructions),
	  TEST_CASE(group_gives_ipc),
	  TEST_CASE(arm_table_ipc_matches_its_counts),
	  TEST_CASE(record_cycles_sample_count_and_top),
	  TEST_CASE(record_dwarf_call_graph_reaches_main))
