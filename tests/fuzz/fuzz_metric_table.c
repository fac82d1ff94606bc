// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: the metric tables' loader, which scans a model's
 * files without a JSON parser and parses each entry when it is used, and
 * the matcher of mapfile.csv's patterns.
 *
 * Input: a mapfile pattern on the first line, matched against a few CPU
 * identities; the rest is a model's JSON file, written into a temporary
 * pmu-events tree and loaded as model x86/fz.  Every metric is then read
 * (definition, group membership), checked (its expression parsed and its
 * events looked up, which parses their entries) and planned by its first
 * group.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfctr/metric.h"
#include "metric/table.h"

static char tree[4096];
static char file[4200];

static void setup(void)
{
	char path[4200];
	FILE *f;

	snprintf(tree, sizeof(tree), "%s/pcfuzz-metric-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tree))
		abort();
	snprintf(path, sizeof(path), "%s/x86", tree);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/x86/fz", tree);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/x86/mapfile.csv", tree);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs("Family-model,Version,Filename,EventType\n"
	      "GenuineIntel-6-FF,v1,fz,core\n", f);
	fclose(f);
	snprintf(file, sizeof(file), "%s/x86/fz/fz.json", tree);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const cpuids[] = {
		"GenuineIntel-6-55-7", "AuthenticAMD-26-2-1", "GenuineIntel-6-8F",
		"", "-",
	};
	const uint8_t *nl = memchr(data, '\n', size);
	size_t plen = nl ? (size_t)(nl - data) : size;
	struct perfctr_metrics *m;
	char pattern[256];
	FILE *f;
	size_t i;

	if (!tree[0])
		setup();
	if (plen < sizeof(pattern)) {
		memcpy(pattern, data, plen);
		pattern[plen] = '\0';
		for (i = 0; i < sizeof(cpuids) / sizeof(cpuids[0]); i++)
			pc_metrics_cpuid_match(pattern, cpuids[i]);
	}
	if (!nl)
		return 0;
	f = fopen(file, "w");
	if (!f)
		abort();
	fwrite(nl + 1, 1, size - plen - 1, f);
	fclose(f);

	m = pc_metrics_new_model(tree, "x86/fz");
	if (!m)
		return 0;
	for (i = 0; i < perfctr_metrics__nr(m); i++) {
		struct perfctr_metric_def d;
		struct perfctr_metric_error err;
		char group[128];
		struct perfctr_metric_plan *p;

		if (perfctr_metrics__def(m, i, &d))
			abort();
		if (!d.name || !d.expr || !d.groups || !d.desc || !d.unit)
			abort();
		snprintf(group, sizeof(group), "%.*s", (int)strcspn(d.groups, ";"),
			 d.groups);
		if (perfctr_metrics__in_group(m, i, group) != (group[0] != '\0'))
			abort();
		perfctr_metrics__check(m, i, &err);
		p = perfctr_metric_plan__new(m, group[0] ? group : d.name, &err);
		perfctr_metric_plan__delete(p);
	}
	perfctr_metrics__delete(m);
	return 0;
}
