/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Unit tests of the metric tables (metric/table.c): selection by CPU
 * identity as mapfile.csv says, posing as CPUs through fixture roots; the
 * generic table; user files; and, for every model of the imported
 * pmu-events data, that every metric parses and every name in it resolves
 * in that model's tables (skipped, with the reason, when the build has no
 * imported data).
 */
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <perfctr/metric.h>

#include "metric/table.h"
#include "test.h"

static char data_dir[PATH_MAX];
static char fixtures[PATH_MAX];

static void paths(void)
{
	const char *src = getenv("PERFCTR_SRC");
	const char *o = getenv("O");

	snprintf(data_dir, sizeof(data_dir), "%s/%s/share/perfctr/pmu-events",
		 src ? src : ".", o ? o : "build");
	snprintf(fixtures, sizeof(fixtures), "%s/tests/fixtures/metrics-cpu",
		 src ? src : ".");
}

static bool have_data(void)
{
	char path[PATH_MAX + 32];

	paths();
	snprintf(path, sizeof(path), "%s/x86/mapfile.csv", data_dir);
	return !access(path, R_OK);
}

#define REQUIRE_DATA()							\
	do {								\
		if (!have_data())					\
			test_skip("no imported pmu-events data in %s "	\
				  "(linux-source-6.12 not installed)",	\
				  data_dir);				\
	} while (0)

static const struct {
	const char *pattern;
	const char *cpuid;
	bool match;
} match_cases[] = {
	{ "AuthenticAMD-26-[[:xdigit:]]+", "AuthenticAMD-26-2-0", true },
	{ "AuthenticAMD-25-[[:xdigit:]]+", "AuthenticAMD-26-2-0", false },
	{ "AuthenticAMD-23-([12][0-9A-F]|[0-9A-F])", "AuthenticAMD-23-31-0", false },
	{ "AuthenticAMD-23-([12][0-9A-F]|[0-9A-F])", "AuthenticAMD-23-1A-0", true },
	{ "GenuineIntel-6-55-[56789ABCDEF]", "GenuineIntel-6-55-7", true },
	{ "GenuineIntel-6-55-[56789ABCDEF]", "GenuineIntel-6-55-4", false },
	{ "GenuineIntel-6-(97|9A|B7|BA|BF)", "GenuineIntel-6-9A-3", true },
	{ "GenuineIntel-6-8F", "GenuineIntel-6-8F-8", true },
	{ "GenuineIntel-6-8F", "GenuineIntel-6-8F0-8", false },
	{ "GenuineIntel-6-8F", "XGenuineIntel-6-8F-8", false },
	/* arm64: variant [23:20] and revision [3:0] do not matter */
	{ "0x00000000410fd0c0", "0x00000000413fd0c1", true },
	{ "0x00000000410fd0c0", "0x00000000410fd0d0", false },
	{ "0x00000000410fd0c0", "0x00000000420fd0c0", false },
	/* Left to regcomp(): repetitions of a repetition are no pattern
	 * (regcomp would take gigabytes for these; found by
	 * fuzz_metric_table), one repetition and brackets holding the
	 * operators are. */
	{ "GenuineIntel-6-(55|8F)-[[\356:xdigit:]]+x++++++++++++++++++++++++"
	  "++++++++++++++++++++++++++++e", "GenuineIntel-6-55-7", false },
	{ "GenuineIntel-6-5{2}(-x*{3})?", "GenuineIntel-6-55-7", false },
	{ "GenuineIntel-6-5{2}", "GenuineIntel-6-55-7", true },
	{ "GenuineIntel-6-[+*5]5", "GenuineIntel-6-55-7", true },
	{ "GenuineIntel-6-[]+*5]{2}", "GenuineIntel-6-55-7", true },
};

TEST(cpuid_matching)
{
	size_t i;

	for (i = 0; i < sizeof(match_cases) / sizeof(match_cases[0]); i++)
		if (pc_metrics_cpuid_match(match_cases[i].pattern,
					   match_cases[i].cpuid) !=
		    match_cases[i].match)
			test_fail(__FILE__, __LINE__, "'%s' vs '%s': want %s",
				  match_cases[i].pattern, match_cases[i].cpuid,
				  match_cases[i].match ? "match" : "no match");
}

/*
 * The loader matches mapfile.csv's patterns without regcomp(): for every
 * x86 pattern of the imported data and every identity of the families the
 * tables know (each model, three steppings), the answer must be
 * regexec()'s, with the stepping-less retry the loader makes.
 */
static bool reference_match(const regex_t *re, const char *cpuid)
{
	char no_stepping[128], *dash;

	if (!regexec(re, cpuid, 0, NULL, 0))
		return true;
	snprintf(no_stepping, sizeof(no_stepping), "%s", cpuid);
	dash = strrchr(no_stepping, '-');
	*dash = '\0';
	return !regexec(re, no_stepping, 0, NULL, 0);
}

TEST(mapfile_patterns_match_as_regexec_does)
{
	static const char *const vendors[] = { "GenuineIntel", "AuthenticAMD" };
	static const unsigned int families[] = { 6, 15, 23, 25, 26 };
	static const unsigned int steppings[] = { 0, 5, 11 };
	char path[PATH_MAX + 32], line[512], cpuid[64], anchored[600];
	size_t nr_patterns = 0, nr_matches = 0, v, f, s;
	unsigned int model;
	FILE *file;

	REQUIRE_DATA();
	snprintf(path, sizeof(path), "%s/x86/mapfile.csv", data_dir);
	file = fopen(path, "r");
	REQUIRE(file);
	while (fgets(line, sizeof(line), file)) {
		char *comma = strchr(line, ',');
		regex_t re;

		if (line[0] == '#' || !comma || !strncmp(line, "Family-model", 12))
			continue;
		*comma = '\0';
		snprintf(anchored, sizeof(anchored), "^(%s)$", line);
		CHECK(!regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB));
		nr_patterns++;
		for (v = 0; v < sizeof(vendors) / sizeof(vendors[0]); v++)
			for (f = 0; f < sizeof(families) / sizeof(families[0]); f++)
				for (model = 0; model < 256; model++)
					for (s = 0; s < sizeof(steppings) / sizeof(steppings[0]); s++) {
						bool want;

						snprintf(cpuid, sizeof(cpuid),
							 "%s-%u-%X-%X", vendors[v],
							 families[f], model,
							 steppings[s]);
						want = reference_match(&re, cpuid);
						nr_matches += want;
						if (pc_metrics_cpuid_match(line, cpuid) != want)
							test_fail(__FILE__, __LINE__,
								  "'%s' vs '%s': want %s",
								  line, cpuid, want ?
								  "match" : "no match");
					}
		regfree(&re);
	}
	fclose(file);
	printf("# %zu patterns, %zu matching identities\n", nr_patterns,
	       nr_matches);
	CHECK(nr_patterns > 30);
	CHECK(nr_matches > 1000);
}

static struct perfctr_metrics *pose_as(const char *fixture)
{
	char root[PATH_MAX + 64];

	snprintf(root, sizeof(root), "%s/%s", fixtures, fixture);
	PERFCTR_OPTS(perfctr_metrics_opts, opts, .data_dir = data_dir,
		     .root = root, .flags = PERFCTR_METRICS_NO_ENV);
	return perfctr_metrics__new(&opts);
}

/* The topology literals of perf's metric language, from the grouping of
 * perfex stat --per-*: 2 sockets x 2 cores x 2 threads, CPUs 0-7 online
 * of 0-8 possible (tests/fixtures/topology-2s). */
TEST(topology_literals)
{
	static const struct {
		const char *name;
		double value;
	} want[] = {
		{ "num_cpus", 9 }, { "num_cpus_online", 8 },
		{ "num_packages", 2 }, { "num_dies", 2 }, { "num_cores", 4 },
	};
	char root[PATH_MAX + 64];
	struct perfctr_metrics *m;

	REQUIRE_DATA();
	snprintf(root, sizeof(root), "%s/../topology-2s", fixtures);
	PERFCTR_OPTS(perfctr_metrics_opts, opts, .data_dir = data_dir,
		     .root = root, .cpuid = "GenuineIntel-6-8F-8",
		     .flags = PERFCTR_METRICS_NO_ENV);
	m = perfctr_metrics__new(&opts);
	REQUIRE(m);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		double v = -1;

		CHECK_EQ_INT(pc_metrics_literal(m, want[i].name, &v), 0);
		if (v != want[i].value)
			test_fail(__FILE__, __LINE__, "%s: %g, want %g",
				  want[i].name, v, want[i].value);
	}
	perfctr_metrics__delete(m);
}

static const struct {
	const char *fixture;
	const char *cpuid;
	const char *model;
	const char *metric;	/* one metric of that model */
} select_cases[] = {
	{ "amd-epyc", "AuthenticAMD-26-2-0", "x86/amdzen5",
	  "branch_misprediction_rate" },
	{ "intel-spr", "GenuineIntel-6-8F-8", "x86/sapphirerapids",
	  "tma_frontend_bound" },
	{ "neoverse-n1", "0x00000000413fd0c1", "arm64/arm/neoverse-n1",
	  "branch_misprediction_ratio" },
};

TEST(selection_by_cpu_identity)
{
	size_t i;

	REQUIRE_DATA();
	for (i = 0; i < sizeof(select_cases) / sizeof(select_cases[0]); i++) {
		struct perfctr_metrics *m = pose_as(select_cases[i].fixture);
		struct perfctr_metric_def def;
		int idx;

		REQUIRE(m);
		CHECK_STR(perfctr_metrics__cpuid(m), select_cases[i].cpuid);
		REQUIRE(perfctr_metrics__model(m));
		CHECK_STR(perfctr_metrics__model(m), select_cases[i].model);
		CHECK(perfctr_metrics__missing(m) == NULL);
		idx = perfctr_metrics__find(m, select_cases[i].metric);
		CHECK(idx >= 0);
		if (idx >= 0) {
			CHECK_EQ_INT(perfctr_metrics__def(m, (size_t)idx, &def), 0);
			CHECK_STR(def.source, select_cases[i].model);
		}
		/* the generic table is always there */
		CHECK(perfctr_metrics__find(m, "ipc") >= 0);
		perfctr_metrics__delete(m);
	}
}

TEST(arm_std_events_and_metrics_resolve)
{
	struct perfctr_metrics *m;
	struct perfctr_metric_def def;
	struct pc_mevent ev;
	int idx;

	REQUIRE_DATA();
	m = pc_metrics_new_model(data_dir, "arm64/arm/neoverse-n2-v2");
	REQUIRE(m);
	/* an ArchStdEvent entry takes its code from the arch's own tables */
	REQUIRE(pc_metrics_event(m, "INST_RETIRED", &ev) == 0);
	CHECK_STR(ev.spec, "r08");
	REQUIRE(pc_metrics_event(m, "cpu_cycles", &ev) == 0);
	CHECK_STR(ev.spec, "r11");
	/* and a metric entry its expression (from sbsa.json) */
	idx = perfctr_metrics__find(m, "frontend_bound");
	REQUIRE(idx >= 0);
	CHECK_EQ_INT(perfctr_metrics__def(m, (size_t)idx, &def), 0);
	CHECK(strstr(def.expr, "STALL_SLOT_FRONTEND") != NULL);
	perfctr_metrics__delete(m);
}

TEST(x86_event_encodings)
{
	struct perfctr_metrics *m;
	struct pc_mevent ev;

	REQUIRE_DATA();
	m = pc_metrics_new_model(data_dir, "x86/amdzen5");
	REQUIRE(m);
	REQUIRE(pc_metrics_event(m, "ex_ret_brn_misp", &ev) == 0);
	CHECK_STR(ev.spec, "cpu/event=0xc3,name=ex_ret_brn_misp/");
	REQUIRE(pc_metrics_event(m, "LS_DISPATCH.ALL", &ev) == 0);
	CHECK_STR(ev.spec, "cpu/event=0x29,umask=0x07,name=ls_dispatch.all/");
	CHECK_EQ_INT(pc_metrics_event(m, "no_such_event", &ev), -ENOENT);
	perfctr_metrics__delete(m);
}

TEST(missing_data_is_explained)
{
	PERFCTR_OPTS(perfctr_metrics_opts, opts,
		     .data_dir = "/nonexistent/pmu-events",
		     .cpuid = "AuthenticAMD-26-2-0",
		     .flags = PERFCTR_METRICS_NO_ENV);
	struct perfctr_metrics *m = perfctr_metrics__new(&opts);

	REQUIRE(m);
	CHECK(perfctr_metrics__model(m) == NULL);
	REQUIRE(perfctr_metrics__missing(m));
	CHECK(strstr(perfctr_metrics__missing(m), "/nonexistent/pmu-events"));
	CHECK(strstr(perfctr_metrics__missing(m), "linux-source-6.12"));
	CHECK(perfctr_metrics__find(m, "ipc") >= 0);
	perfctr_metrics__delete(m);
}

TEST(unknown_cpu_is_explained)
{
	PERFCTR_OPTS(perfctr_metrics_opts, opts, .data_dir = data_dir,
		     .cpuid = "GenuineIntel-99-1-0",
		     .flags = PERFCTR_METRICS_NO_ENV);
	struct perfctr_metrics *m;

	REQUIRE_DATA();
	m = perfctr_metrics__new(&opts);
	REQUIRE(m);
	CHECK(perfctr_metrics__model(m) == NULL);
	REQUIRE(perfctr_metrics__missing(m));
	CHECK(strstr(perfctr_metrics__missing(m), "GenuineIntel-99-1-0"));
	perfctr_metrics__delete(m);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f);
	fputs(text, f);
	fclose(f);
}

TEST(user_file_overrides_and_adds)
{
	char path[] = "/tmp/perfctr-metrics-XXXXXX";
	int fd = mkstemp(path);
	const char *files[] = { path };
	struct perfctr_metrics *m;
	struct perfctr_metric_def def;
	int idx;

	REQUIRE(fd >= 0);
	close(fd);
	write_file(path,
		   "[ { \"MetricName\": \"ppid_per_pid\",\n"
		   "    \"MetricExpr\": \"syscalls:sys_enter_getppid / "
		   "syscalls:sys_enter_getpid\",\n"
		   "    \"MetricGroup\": \"mine\", \"ScaleUnit\": \"100%\",\n"
		   "    \"MetricThreshold\": \"ppid_per_pid > 2\" },\n"
		   "  { \"MetricName\": \"IPC\", \"MetricExpr\": \"1\" } ]\n");
	{
		PERFCTR_OPTS(perfctr_metrics_opts, opts, .files = files,
			     .nr_files = 1,
			     .flags = PERFCTR_METRICS_NO_ENV |
				      PERFCTR_METRICS_NO_MODEL);
		m = perfctr_metrics__new(&opts);
	}
	REQUIRE(m);
	idx = perfctr_metrics__find(m, "ppid_per_pid");
	REQUIRE(idx >= 0);
	CHECK_EQ_INT(perfctr_metrics__def(m, (size_t)idx, &def), 0);
	CHECK_STR(def.source, path);
	CHECK_STR(def.groups, "mine");
	CHECK_STR(def.unit, "%");
	CHECK(def.scale == 100);
	CHECK_STR(def.threshold, "ppid_per_pid > 2");
	CHECK_EQ_INT(perfctr_metrics__check(m, (size_t)idx, NULL), 0);
	/* the user's definition wins over the generic one */
	idx = perfctr_metrics__find(m, "ipc");
	REQUIRE(idx >= 0);
	CHECK_EQ_INT(perfctr_metrics__def(m, (size_t)idx, &def), 0);
	CHECK_STR(def.expr, "1");
	perfctr_metrics__delete(m);

	write_file(path, "[ { \"MetricName\": \"broken\", ");
	{
		PERFCTR_OPTS(perfctr_metrics_opts, opts, .files = files,
			     .nr_files = 1, .flags = PERFCTR_METRICS_NO_ENV);
		m = perfctr_metrics__new(&opts);
	}
	CHECK(m == NULL && errno == EBADMSG);
	perfctr_metrics__delete(m);
	unlink(path);
}

/*
 * The built-in generic table is generic.json made into C data at build
 * time (scripts/gen-generic-metrics): each entry as json-c reads the JSON
 * file, loaded as a user's file beside it.
 */
TEST(generic_table_is_the_json)
{
	char path[PATH_MAX];
	const char *src = getenv("PERFCTR_SRC");
	const char *files[] = { path };
	struct perfctr_metrics *m;
	size_t i, k, from_file = 0, builtin = 0;

	snprintf(path, sizeof(path), "%s/src/lib/metric/generic.json",
		 src ? src : ".");
	if (access(path, R_OK))
		test_skip("%s not found (run from the source tree)", path);
	{
		PERFCTR_OPTS(perfctr_metrics_opts, opts, .files = files,
			     .nr_files = 1,
			     .flags = PERFCTR_METRICS_NO_ENV |
				      PERFCTR_METRICS_NO_MODEL);
		m = perfctr_metrics__new(&opts);
	}
	REQUIRE(m);
	CHECK(pc_nr_generic_metrics > 0);
	for (i = 0; i < perfctr_metrics__nr(m); i++) {
		struct perfctr_metric_def def;
		const struct pc_generic_metric *g = NULL;
		char unit[64];
		double scale;

		REQUIRE(perfctr_metrics__def(m, i, &def) == 0);
		if (!strcmp(def.source, "generic")) {
			builtin++;
			continue;
		}
		CHECK_STR(def.source, path);
		from_file++;
		for (k = 0; k < pc_nr_generic_metrics && !g; k++)
			if (!strcmp(pc_generic_metrics[k].name, def.name))
				g = &pc_generic_metrics[k];
		CHECK(g != NULL);
		if (!g)
			continue;
		CHECK_STR(g->expr, def.expr);
		CHECK_STR(g->groups, def.groups);
		CHECK_STR(g->desc, def.desc);
		scale = pc_metrics_scale_unit(g->scale_unit, unit, sizeof(unit));
		CHECK(scale == def.scale);
		CHECK_STR(unit, def.unit);
		CHECK(def.threshold == NULL);
		CHECK(def.constraint == NULL);
	}
	CHECK_EQ_U64(from_file, pc_nr_generic_metrics);
	CHECK_EQ_U64(builtin, pc_nr_generic_metrics);
	perfctr_metrics__delete(m);
}

TEST(check_names_the_metric_and_position)
{
	char path[] = "/tmp/perfctr-metrics-XXXXXX";
	int fd = mkstemp(path);
	const char *files[] = { path };
	struct perfctr_metric_error err;
	struct perfctr_metrics *m;

	REQUIRE(fd >= 0);
	close(fd);
	write_file(path,
		   "[ { \"MetricName\": \"bad_syntax\", \"MetricExpr\": \"a + * b\" },\n"
		   "  { \"MetricName\": \"bad_name\", \"MetricExpr\": \"cycles / nonesuch\" } ]\n");
	PERFCTR_OPTS(perfctr_metrics_opts, opts, .files = files, .nr_files = 1,
		     .flags = PERFCTR_METRICS_NO_ENV | PERFCTR_METRICS_NO_MODEL);
	m = perfctr_metrics__new(&opts);
	unlink(path);
	REQUIRE(m);
	CHECK_EQ_INT(perfctr_metrics__check(m, (size_t)perfctr_metrics__find(m, "bad_syntax"), &err), -EINVAL);
	CHECK_STR(err.metric, "bad_syntax");
	CHECK_EQ_INT(err.pos, 4);
	CHECK(strstr(err.msg, "expected a value") != NULL);
	CHECK_EQ_INT(perfctr_metrics__check(m, (size_t)perfctr_metrics__find(m, "bad_name"), &err), -ENOENT);
	CHECK_STR(err.metric, "bad_name");
	CHECK_EQ_INT(err.pos, 9);
	CHECK(strstr(err.msg, "'nonesuch'") != NULL);
	perfctr_metrics__delete(m);
}

/* The distinct model directories of one arch's mapfile.csv. */
static size_t models_of(const char *arch, char models[][128], size_t max)
{
	char path[PATH_MAX + 32], line[512];
	size_t n = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/mapfile.csv", data_dir, arch);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < max) {
		char *a = strchr(line, ','), *b, *c;

		if (line[0] == '#' || !a || !(b = strchr(a + 1, ',')) ||
		    !(c = strchr(b + 1, ',')) || strncmp(c + 1, "core", 4))
			continue;
		*c = '\0';
		snprintf(models[n], 128, "%s/%s", arch, b + 1);
		for (i = 0; i < n; i++)
			if (!strcmp(models[i], models[n]))
				break;
		if (i == n)
			n++;
	}
	fclose(f);
	return n;
}

/*
 * Names the 6.12 tables use without defining them anywhere, so that no
 * encoding is known (perf resolves them only on a machine whose PMU
 * publishes them in sysfs).
 */
static const struct {
	const char *model, *metric, *name;
} table_defects[] = {
	/* Arm's architected L2I_CACHE (0x27) is missing from
	 * common-and-microarch.json and from hip08's own files */
	{ "arm64/hisilicon/hip08", "idle_by_icache_miss", "'L2I_CACHE'" },
};

static bool known_defect(const char *model, const struct perfctr_metric_error *err)
{
	size_t i;

	for (i = 0; i < sizeof(table_defects) / sizeof(table_defects[0]); i++)
		if (!strcmp(model, table_defects[i].model) &&
		    !strcmp(err->metric, table_defects[i].metric) &&
		    strstr(err->msg, table_defects[i].name))
			return true;
	return false;
}

TEST(every_metric_of_every_model_parses_and_resolves)
{
	static char models[256][128];
	size_t nr = 0, i, j, total = 0, nr_models = 0;

	REQUIRE_DATA();
	nr = models_of("x86", models, 256);
	nr += models_of("arm64", models + nr, 256 - nr);
	REQUIRE(nr > 40);
	for (i = 0; i < nr; i++) {
		struct perfctr_metrics *m = pc_metrics_new_model(data_dir,
								 models[i]);

		if (!m) {
			test_fail(__FILE__, __LINE__, "%s: %s", models[i],
				  strerror(errno));
			continue;
		}
		nr_models++;
		for (j = 0; j < perfctr_metrics__nr(m); j++) {
			struct perfctr_metric_error err;

			total++;
			if (perfctr_metrics__check(m, j, &err) &&
			    !known_defect(models[i], &err))
				test_fail(__FILE__, __LINE__,
					  "%s: metric '%s' at %d: %s",
					  models[i], err.metric, err.pos,
					  err.msg);
		}
		perfctr_metrics__delete(m);
	}
	printf("# %zu metrics of %zu models\n", total, nr_models);
	CHECK(total > 3000);
}

/* Start-up cost: loading and selecting this host's table (the figure the
 * issue asks for is 5 ms; bench/metrics measures it on a quiet machine,
 * here a generous bound catches a loader that parses every model).  The
 * time is this process's CPU time, not the wall clock: a loaded machine
 * stretches the wall time by whatever else runs, the CPU time barely
 * (caches), so 200 ms is 40 times the figure whatever the load.  The
 * next case checks the same property exactly. */
TEST(loading_parses_only_the_selected_model)
{
	struct timespec a, b;
	struct perfctr_metrics *m;
	double ms;

	REQUIRE_DATA();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	m = pose_as("amd-epyc");
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	REQUIRE(m);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 +
	     (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	printf("# amdzen5 loaded in %.2f ms of CPU time, %zu metrics\n", ms,
	       perfctr_metrics__nr(m));
	CHECK(ms < 200);
	perfctr_metrics__delete(m);
}

/*
 * Loading parses no entry of the model's files: names and groups come
 * from a scan, and planning a group parses its metrics and their events
 * only.  Each metric's name and groups as scanned are those of its parsed
 * entry, in every model (an entry the scan cannot read is parsed at
 * load time, so nothing is lost).
 */
TEST(entries_are_parsed_when_used)
{
	static char models[256][128];
	struct perfctr_metric_plan *p;
	struct perfctr_metrics *m;
	size_t nr, i, j, parsed, total = 0;

	REQUIRE_DATA();
	m = pose_as("amd-epyc");
	REQUIRE(m);
	CHECK_EQ_U64(pc_metrics_nr_parsed(m), 0);
	REQUIRE(perfctr_metrics__nr(m) > 50);
	p = perfctr_metric_plan__new(m, "PipelineL1", NULL);
	CHECK(p);
	parsed = pc_metrics_nr_parsed(m);
	printf("# PipelineL1: %zu metrics planned, %zu entries parsed of "
	       "%zu metrics\n", p ? perfctr_metric_plan__nr_metrics(p) : 0,
	       parsed, perfctr_metrics__nr(m));
	CHECK(p && parsed >= perfctr_metric_plan__nr_metrics(p));
	CHECK(parsed < perfctr_metrics__nr(m) / 2);
	perfctr_metric_plan__delete(p);
	perfctr_metrics__delete(m);

	nr = models_of("x86", models, 256);
	nr += models_of("arm64", models + nr, 256 - nr);
	for (i = 0; i < nr; i++) {
		m = pc_metrics_new_model(data_dir, models[i]);
		if (!m)
			continue;
		for (j = 0; j < perfctr_metrics__nr(m); j++) {
			char name[128], groups[512];
			struct perfctr_metric_def d;

			snprintf(name, sizeof(name), "%s", pc_metrics_name(m, j));
			perfctr_metrics__def(m, j, &d);
			snprintf(groups, sizeof(groups), "%s", d.groups);
			total++;
			if (strcmp(name, d.name))
				test_fail(__FILE__, __LINE__, "%s: scanned '%s', "
					  "parsed '%s'", models[i], name, d.name);
			/* in_group() reads what the scan found */
			if (*groups && perfctr_metrics__in_group(m, j,
					strtok(groups, ";")) != 1)
				test_fail(__FILE__, __LINE__, "%s: '%s' not in "
					  "its group '%s'", models[i], name,
					  d.groups);
		}
		perfctr_metrics__delete(m);
	}
	CHECK(total > 3000);
}

TEST_MAIN(TEST_CASE(cpuid_matching),
	  TEST_CASE(mapfile_patterns_match_as_regexec_does),
	  TEST_CASE(selection_by_cpu_identity),
	  TEST_CASE(arm_std_events_and_metrics_resolve),
	  TEST_CASE(x86_event_encodings),
	  TEST_CASE(missing_data_is_explained),
	  TEST_CASE(unknown_cpu_is_explained),
	  TEST_CASE(user_file_overrides_and_adds),
	  TEST_CASE(generic_table_is_the_json),
	  TEST_CASE(check_names_the_metric_and_position),
	  TEST_CASE(every_metric_of_every_model_parses_and_resolves),
	  TEST_CASE(loading_parses_only_the_selected_model),
	  TEST_CASE(entries_are_parsed_when_used),
	  TEST_CASE(topology_literals))
