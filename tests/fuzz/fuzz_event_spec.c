// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: the event-specification parser, over the fixture sysfs
 * trees and over a tree whose PMU files come from the input.
 *
 * Input: the specification on the first line, then any number of files of
 * a PMU named "fz", each introduced by a line "@f NAME" (format/NAME) or
 * "@e NAME" (events/NAME, NAME.scale and NAME.unit included) or "@t" (its
 * type file), the file's bytes running to the next such line.  Each input
 * rewrites fz's files in a temporary tree that also links the Intel
 * fixture's PMUs (cpu, uncore_imc_0, msr, ...), so hostile format and
 * event files meet the real ones; the specification is also parsed
 * against one fixture tree as it is, and the events of the hostile tree
 * are listed when it has any.  Every event parsed is read back through the accessors.
 *
 * The fixtures are found under $PERFCTR_SRC/tests/fixtures, or
 * tests/fixtures from the working directory (make fuzz-run).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfctr/event.h"

static char fixtures[4096];
static char tree[4096];		/* sysfs root of the hostile tree */
static char pmu_dir[4600];	/* its fz PMU */

static void rm_files(const char *dir)
{
	char path[5200];
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	closedir(d);
}

static void setup(void)
{
	static const char *const linked[] = {
		"cpu", "uncore_imc_0", "uncore_imc_1", "msr", "breakpoint",
		"tracepoint", "uprobe",
	};
	const char *src = getenv("PERFCTR_SRC");
	char path[5200], target[5200];
	char *tmp;

	snprintf(fixtures, sizeof(fixtures), "%s/tests/fixtures",
		 src ? src : ".");
	if (!src) {
		char *abs = realpath("tests/fixtures", NULL);

		if (abs) {
			snprintf(fixtures, sizeof(fixtures), "%s", abs);
			free(abs);
		}
	}
	snprintf(tree, sizeof(tree), "%s/pcfuzz-XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	tmp = mkdtemp(tree);
	if (!tmp)
		abort();
	snprintf(path, sizeof(path), "%s/bus", tree);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/bus/event_source", tree);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", tree);
	mkdir(path, 0700);
	for (size_t i = 0; i < sizeof(linked) / sizeof(linked[0]); i++) {
		snprintf(target, sizeof(target),
			 "%s/sysfs-intel/bus/event_source/devices/%s", fixtures,
			 linked[i]);
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s",
			 tree, linked[i]);
		if (symlink(target, path))
			abort();
	}
	snprintf(pmu_dir, sizeof(pmu_dir), "%s/bus/event_source/devices/fz", tree);
	mkdir(pmu_dir, 0700);
	snprintf(path, sizeof(path), "%s/format", pmu_dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/events", pmu_dir);
	mkdir(path, 0700);
}

static void put_file(const char *kind, const char *name, size_t name_len,
		     const uint8_t *data, size_t len)
{
	char fname[32], path[5200];
	size_t k = 0;
	int fd;

	/* A name that stays inside the directory. */
	for (size_t i = 0; i < name_len && k < sizeof(fname) - 1; i++) {
		char c = (char)name[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '-')
			fname[k++] = c;
	}
	fname[k] = '\0';
	if (!k || !strcmp(fname, ".") || !strcmp(fname, ".."))
		return;
	if (kind)
		snprintf(path, sizeof(path), "%s/%s/%s", pmu_dir, kind, fname);
	else
		snprintf(path, sizeof(path), "%s/type", pmu_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, data, len) < 0)
		len = 0;
	close(fd);
}

static void consume(const struct perfctr_evlist *l)
{
	volatile size_t sink = 0;

	for (size_t i = 0; i < perfctr_evlist__nr_events(l); i++) {
		const struct perf_event_attr *a = perfctr_evlist__attr(l, i);
		const char *s;

		sink += a->config + a->config1 + a->config2 + a->type;
		sink += strlen(perfctr_evlist__name(l, i));
		if ((s = perfctr_evlist__pmu(l, i)))
			sink += strlen(s);
		if ((s = perfctr_evlist__unit(l, i)))
			sink += strlen(s);
		if ((s = perfctr_evlist__cpus(l, i)))
			sink += strlen(s);
		sink += perfctr_evlist__leader(l, i);
		sink += (size_t)perfctr_evlist__scale(l, i);
	}
	(void)sink;
}

static void parse_in(const char *sysfs, const char *spec)
{
	char tracefs[4200];
	PERFCTR_OPTS(perfctr_parse_opts, o, .sysfs_root = sysfs,
		     .tracefs_root = tracefs);
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	struct perfctr_evlist *l = perfctr_evlist__new();

	snprintf(tracefs, sizeof(tracefs), "%s/tracefs", fixtures);
	if (!l)
		return;
	if (perfctr_evlist__parse(l, spec, &o, &err) >= 0)
		consume(l);
	else if (!memchr(err.message, '\0', sizeof(err.message)) ||
		 !memchr(err.hint, '\0', sizeof(err.hint)))
		abort();	/* messages are always terminated */
	perfctr_evlist__delete(l);
}

static int count_cb(const struct perfctr_event_info *info, void *ctx)
{
	*(size_t *)ctx += strlen(info->name) + strlen(info->desc);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const trees[] = {
		"sysfs-intel", "sysfs-arm64", "sysfs-vm",
	};
	const uint8_t *end = data + size, *p, *nl;
	char *spec, path[4200];
	size_t n = 0;
	bool has_events = false;

	if (!tree[0])
		setup();
	nl = memchr(data, '\n', size);
	p = nl ? nl + 1 : end;
	spec = strndup((const char *)data, (size_t)((nl ? nl : end) - data));
	if (!spec)
		return 0;

	snprintf(path, sizeof(path), "%s/format", pmu_dir);
	rm_files(path);
	snprintf(path, sizeof(path), "%s/events", pmu_dir);
	rm_files(path);
	snprintf(path, sizeof(path), "%s/type", pmu_dir);
	unlink(path);
	/* "@f NAME\n" / "@e NAME\n" / "@t\n", then the bytes to the next. */
	while (p + 2 <= end && p[0] == '@' && n < 16) {
		const uint8_t *name = p + 2, *line_end, *body, *next;
		const char *kind = p[1] == 'f' ? "format" :
				   p[1] == 'e' ? "events" : NULL;

		line_end = memchr(p, '\n', (size_t)(end - p));
		if (!line_end)
			line_end = end;
		body = line_end < end ? line_end + 1 : end;
		next = memmem(body, (size_t)(end - body), "\n@", 2);
		if (p[1] == 't')
			put_file(NULL, "type", 4, body,
				 (size_t)((next ? next : end) - body));
		else if (kind && name < line_end) {
			has_events |= p[1] == 'e';
			put_file(kind, (const char *)name,
				 (size_t)(line_end - name), body,
				 (size_t)((next ? next : end) - body));
		}
		p = next ? next + 1 : end;
		n++;
	}
	if (!n)
		put_file(NULL, "type", 4, (const uint8_t *)"77\n", 3);

	parse_in(tree, spec);
	/* One fixture tree per input (each parse reads its tree): the
	 * specification's length picks it. */
	snprintf(path, sizeof(path), "%s/%s", fixtures,
		 trees[strlen(spec) % (sizeof(trees) / sizeof(trees[0]))]);
	parse_in(path, spec);
	/* The listing walks the fixture's tracefs too: only when the input
	 * gave the hostile PMU events to list. */
	if (has_events) {
		char tracefs[4200];
		PERFCTR_OPTS(perfctr_parse_opts, o, .sysfs_root = tree,
			     .tracefs_root = tracefs);
		size_t sum = 0;

		snprintf(tracefs, sizeof(tracefs), "%s/tracefs", fixtures);
		perfctr_event_list(&o, count_cb, &sum);
	}
	free(spec);
	return 0;
}
