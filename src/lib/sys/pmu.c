// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* PMU discovery from sysfs (see pmu.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "sys/pmu.h"

#define DEVICES "bus/event_source/devices"

static int pmu_path(char *buf, size_t size, const char *root, const char *pmu,
		    const char *rel)
{
	int n = snprintf(buf, size, "%s/" DEVICES "/%s%s%s", root, pmu,
			 rel ? "/" : "", rel ? rel : "");

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int pc_pmu_names(const char *sysfs_root, struct pc_dirlist *names)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/" DEVICES, sysfs_root);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return pc_dirlist_read(path, PC_DIRLIST_DIRS, names);
}

/* dir/name[suffix] into @buf; false when it does not fit. */
static bool path_join(char *buf, size_t size, const char *dir,
		      const char *name, const char *suffix)
{
	int n = snprintf(buf, size, "%s/%s%s", dir, name, suffix);

	return n > 0 && (size_t)n < size;
}

bool pc_pmu_has_event(const char *sysfs_root, const char *pmu,
		      const char *event)
{
	char path[4096];
	int n;

	if (!*pmu || !*event || strchr(pmu, '/') || strchr(event, '/'))
		return false;
	n = snprintf(path, sizeof(path), "%s/" DEVICES "/%s/events/%s",
		     sysfs_root, pmu, event);
	return n > 0 && (size_t)n < sizeof(path) && !access(path, R_OK);
}

int pc_pmu_format_parse(const char *text, enum pc_config_word *word,
			uint64_t *mask)
{
	static const char *const words[] = { "config", "config1", "config2" };
	const char *colon = strchr(text, ':'), *s;
	size_t i;

	if (!colon)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (strlen(words[i]) == (size_t)(colon - text) &&
		    !strncmp(text, words[i], (size_t)(colon - text)))
			break;
	if (i == ARRAY_SIZE(words))
		return -EINVAL;
	*word = (enum pc_config_word)i;
	*mask = 0;
	for (s = colon + 1; *s; ) {
		char *end;
		unsigned long lo, hi;

		lo = strtoul(s, &end, 10);
		if (end == s)
			return -EINVAL;
		hi = lo;
		if (*end == '-') {
			s = end + 1;
			hi = strtoul(s, &end, 10);
			if (end == s)
				return -EINVAL;
		}
		if (lo > hi || hi > 63)
			return -EINVAL;
		for (; lo <= hi; lo++)
			*mask |= 1ull << lo;
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		s = end;
	}
	return *mask ? 0 : -EINVAL;
}

int pc_pmu_format_encode(uint64_t mask, uint64_t value, uint64_t *bits)
{
	unsigned bit;

	*bits = 0;
	for (bit = 0; bit < 64 && value; bit++) {
		if (!(mask & (1ull << bit)))
			continue;
		if (value & 1)
			*bits |= 1ull << bit;
		value >>= 1;
	}
	return value ? -ERANGE : 0;
}

static char *read_string(const char *path)
{
	char buf[4096];

	if (pc_read_file(path, buf, sizeof(buf)) < 0)
		return NULL;
	return strdup(buf);
}

/* The text of file @name (and @suffix) of @dir; NULL when unreadable. */
static char *read_in(const char *dir, const char *name, const char *suffix)
{
	char path[4096];

	return path_join(path, sizeof(path), dir, name, suffix) ?
	       read_string(path) : NULL;
}

/*
 * The file names of @dir (a folder of a PMU: format, events, caps) and an
 * array of as many zeroed @size-byte entries for them.  Return the array,
 * or NULL with *@err: 0 when @dir is missing (nothing to load), else a
 * negative errno; @names is freed then.
 */
static void *list_files(const char *dir, struct pc_dirlist *names,
			size_t size, int *err)
{
	void *array;

	*err = pc_dirlist_read(dir, PC_DIRLIST_FILES, names);
	if (*err) {
		if (*err == -ENOENT)
			*err = 0;
		return NULL;
	}
	array = calloc(names->nr ? names->nr : 1, size);
	if (!array) {
		pc_dirlist_free(names);
		*err = -ENOMEM;
	}
	return array;
}

static int load_formats(const char *dir, struct pc_pmu *pmu)
{
	struct pc_dirlist names;
	size_t i;
	int ret;

	pmu->formats = list_files(dir, &names, sizeof(*pmu->formats), &ret);
	if (!pmu->formats)
		return ret;
	for (i = 0; i < names.nr; i++) {
		struct pc_pmu_format *f = &pmu->formats[pmu->nr_formats];

		f->text = read_in(dir, names.names[i], "");
		/* A format we cannot read or understand is left out. */
		if (!f->text || pc_pmu_format_parse(f->text, &f->word, &f->mask)) {
			free(f->text);
			f->text = NULL;
			continue;
		}
		f->name = names.names[i];
		names.names[i] = NULL;
		pmu->nr_formats++;
	}
	pc_dirlist_free(&names);
	return 0;
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n > s && !strcmp(name + n - s, suffix);
}

/* events/<name>.scale and .unit beside each event. */
static void load_event_extras(const char *dir, struct pc_pmu_event *ev)
{
	char path[4096], buf[64];
	char *end;

	ev->scale = 1.0;
	if (path_join(path, sizeof(path), dir, ev->name, ".scale") &&
	    pc_read_file(path, buf, sizeof(buf)) > 0) {
		double v = strtod(buf, &end);

		if (end != buf && !*end && v > 0)
			ev->scale = v;
	}
	ev->unit = read_in(dir, ev->name, ".unit");
	if (!ev->unit)
		ev->unit = strdup("");
}

static bool is_extra(const char *name)
{
	return has_suffix(name, ".scale") || has_suffix(name, ".unit") ||
	       has_suffix(name, ".per-pkg") || has_suffix(name, ".snapshot");
}

int pc_pmu_event_names(const char *sysfs_root, const char *pmu,
		       struct pc_dirlist *names)
{
	char dir[4096];
	size_t i, kept = 0;
	int ret;

	ret = pmu_path(dir, sizeof(dir), sysfs_root, pmu, "events");
	if (!ret)
		ret = pc_dirlist_read(dir, PC_DIRLIST_FILES, names);
	if (ret)
		return ret;
	for (i = 0; i < names->nr; i++) {
		if (is_extra(names->names[i]))
			free(names->names[i]);
		else
			names->names[kept++] = names->names[i];
	}
	names->nr = kept;
	return 0;
}

static int load_events(const char *dir, struct pc_pmu *pmu)
{
	struct pc_dirlist names;
	size_t i;
	int ret;

	pmu->events = list_files(dir, &names, sizeof(*pmu->events), &ret);
	if (!pmu->events)
		return ret;
	for (i = 0; i < names.nr; i++) {
		struct pc_pmu_event *ev = &pmu->events[pmu->nr_events];

		if (is_extra(names.names[i]))
			continue;
		ev->terms = read_in(dir, names.names[i], "");
		if (!ev->terms)
			continue;
		ev->name = names.names[i];
		names.names[i] = NULL;
		load_event_extras(dir, ev);
		pmu->nr_events++;
		if (!ev->unit) {
			ret = -ENOMEM;
			break;
		}
	}
	pc_dirlist_free(&names);
	return ret;
}

static int load_caps(const char *dir, struct pc_pmu *pmu)
{
	struct pc_dirlist names;
	size_t i;
	int ret;

	pmu->caps = list_files(dir, &names, sizeof(*pmu->caps), &ret);
	if (!pmu->caps)
		return ret;
	for (i = 0; i < names.nr; i++) {
		struct pc_pmu_cap *cap = &pmu->caps[pmu->nr_caps];

		cap->value = read_in(dir, names.names[i], "");
		if (!cap->value)
			continue;
		cap->name = names.names[i];
		names.names[i] = NULL;
		pmu->nr_caps++;
	}
	pc_dirlist_free(&names);
	return 0;
}

static int load_type_and_cpus(const char *root, struct pc_pmu *pmu)
{
	char path[4096], buf[32];
	uint64_t type;
	int ret;

	ret = pmu_path(path, sizeof(path), root, pmu->name, "type");
	if (!ret)
		ret = pc_read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret == -ENOENT ? -ENODEV : ret;
	if (pc_parse_u64(buf, 10, &type) || type > UINT32_MAX)
		return -EINVAL;
	pmu->type = (uint32_t)type;
	pmu_path(path, sizeof(path), root, pmu->name, "cpumask");
	pmu->cpus = read_string(path);
	if (!pmu->cpus) {
		pmu_path(path, sizeof(path), root, pmu->name, "cpus");
		pmu->cpus = read_string(path);
		pmu->core = pmu->cpus != NULL;
	}
	if (!strcmp(pmu->name, "cpu") || !strncmp(pmu->name, "cpu_", 4))
		pmu->core = true;
	return 0;
}

bool pc_pmu_may_be_core(const char *sysfs_root, const char *name)
{
	char path[4096];

	if (!strcmp(name, "cpu") || !strncmp(name, "cpu_", 4))
		return true;
	/* The rule of load_type_and_cpus(), from two stat()s: a core PMU
	 * lists its CPUs in `cpus`; an uncore one names one in `cpumask`. */
	if (pmu_path(path, sizeof(path), sysfs_root, name, "cpumask") ||
	    access(path, F_OK) == 0)
		return false;
	return !pmu_path(path, sizeof(path), sysfs_root, name, "cpus") &&
	       access(path, F_OK) == 0;
}

int pc_pmu_load(const char *sysfs_root, const char *name, struct pc_pmu **out)
{
	char dir[4096];
	struct pc_pmu *pmu;
	int ret;

	*out = NULL;
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -ENODEV;
	pmu = calloc(1, sizeof(*pmu));
	if (!pmu)
		return -ENOMEM;
	pmu->name = strdup(name);
	ret = pmu->name ? load_type_and_cpus(sysfs_root, pmu) : -ENOMEM;
	if (!ret && !(ret = pmu_path(dir, sizeof(dir), sysfs_root, name, "format")))
		ret = load_formats(dir, pmu);
	if (!ret && !(ret = pmu_path(dir, sizeof(dir), sysfs_root, name, "events")))
		ret = load_events(dir, pmu);
	if (!ret && !(ret = pmu_path(dir, sizeof(dir), sysfs_root, name, "caps")))
		ret = load_caps(dir, pmu);
	if (ret) {
		pc_pmu_free(pmu);
		return ret;
	}
	*out = pmu;
	return 0;
}

void pc_pmu_free(struct pc_pmu *pmu)
{
	size_t i;

	if (!pmu)
		return;
	for (i = 0; i < pmu->nr_formats; i++) {
		free(pmu->formats[i].name);
		free(pmu->formats[i].text);
	}
	for (i = 0; i < pmu->nr_events; i++) {
		free(pmu->events[i].name);
		free(pmu->events[i].terms);
		free(pmu->events[i].unit);
	}
	for (i = 0; i < pmu->nr_caps; i++) {
		free(pmu->caps[i].name);
		free(pmu->caps[i].value);
	}
	free(pmu->formats);
	free(pmu->events);
	free(pmu->caps);
	free(pmu->cpus);
	free(pmu->name);
	free(pmu);
}

const struct pc_pmu_format *pc_pmu_find_format(const struct pc_pmu *pmu,
					       const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < pmu->nr_formats; i++)
		if (strlen(pmu->formats[i].name) == len &&
		    !memcmp(pmu->formats[i].name, name, len))
			return &pmu->formats[i];
	return NULL;
}

const struct pc_pmu_event *pc_pmu_find_event(const struct pc_pmu *pmu,
					     const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < pmu->nr_events; i++)
		if (strlen(pmu->events[i].name) == len &&
		    !memcmp(pmu->events[i].name, name, len))
			return &pmu->events[i];
	return NULL;
}

const char *pc_pmu_cap(const struct pc_pmu *pmu, const char *name)
{
	size_t i;

	for (i = 0; i < pmu->nr_caps; i++)
		if (!strcmp(pmu->caps[i].name, name))
			return pmu->caps[i].value;
	return NULL;
}

bool pc_pmu_is_x86_evntsel(const struct pc_pmu *pmu)
{
	const struct pc_pmu_format *event, *umask;

	if (!pmu->core)
		return false;
	event = pc_pmu_find_format(pmu, "event", 5);
	umask = pc_pmu_find_format(pmu, "umask", 5);
	return event && umask && event->word == PC_CONFIG &&
	       umask->word == PC_CONFIG && (event->mask & 0xffff) == 0xff &&
	       (umask->mask & 0xffff) == 0xff00;
}
