// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Perf map files (/tmp/perf-PID.map): see perfmap.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sample/perfmap.h"

struct perfmap_entry {
	uint64_t start;
	uint64_t end;		/* exclusive; == start for an empty entry */
	uint32_t name;		/* offset into names */
	uint32_t order;		/* line number among the entries */
};

struct pc_perfmap {
	struct perfmap_entry *entries;	/* by start, then order */
	size_t nr;
	uint64_t max_size;	/* the largest entry: how far back to look */
	char *names;
};

struct perfmap_file {
	pid_t pid;
	char *path;		/* "/tmp/perf-PID.map" as perf names it */
	struct pc_perfmap *map;	/* NULL: absent or not read */
	off_t size_read;	/* the file's size when read */
	ino_t ino;
	uint64_t read_ns;	/* when last looked at */
};

struct pc_perfmaps {
	char *root;
	struct perfmap_file *files;
	size_t nr, cap;
	/* Tables replaced by a new read: names handed out from them stay
	 * valid until __forget. */
	struct pc_perfmap **retired;
	size_t nr_retired, cap_retired;
};

bool pc_perfmap_is_anon(const char *f)
{
	return !strcmp(f, "//anon") || !strncmp(f, "/dev/zero", 9) ||
	       !strncmp(f, "/anon_hugepage", 14) ||
	       !strcmp(f, "[heap]") || !strncmp(f, "[stack", 6) ||
	       !strncmp(f, "/SYSV", 5);
}

/* ---- one file's table ---- */

static size_t parse_hex(const char *s, const char *end, uint64_t *v)
{
	const char *p = s;

	*v = 0;
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		*v = *v << 4 | (uint64_t)d;
	}
	return p > s && (p[-1] != 'x' && p[-1] != 'X') ? (size_t)(p - s) : 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct perfmap_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

void pc_perfmap__delete(struct pc_perfmap *map)
{
	if (!map)
		return;
	free(map->entries);
	free(map->names);
	free(map);
}

struct pc_perfmap *pc_perfmap__parse(const char *text, size_t len)
{
	struct pc_perfmap *map = calloc(1, sizeof(*map));
	const char *line = text, *end = text + len;
	size_t cap = 0, names_len = 0;

	if (!map)
		return NULL;
	/* Names are at most the text itself, with a NUL per line. */
	map->names = malloc(len + 1);
	if (!map->names)
		goto fail;
	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *p = line, *name;
		uint64_t start, size;
		size_t n;

		if (!eol)
			eol = end;
		n = parse_hex(p, eol, &start);
		if (!n || p + n >= eol || p[n] != ' ')
			goto next;
		p += n + 1;
		n = parse_hex(p, eol, &size);
		if (!n || p + n >= eol || p[n] != ' ' || start + size < start)
			goto next;
		name = p + n + 1;
		if (name >= eol)
			goto next;
		if (map->nr == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct perfmap_entry *e = realloc(map->entries,
							  ncap * sizeof(*e));

			if (!e)
				goto fail;
			map->entries = e;
			cap = ncap;
		}
		map->entries[map->nr].start = start;
		map->entries[map->nr].end = start + size;
		map->entries[map->nr].name = (uint32_t)names_len;
		map->entries[map->nr].order = (uint32_t)map->nr;
		map->nr++;
		if (size > map->max_size)
			map->max_size = size;
		memcpy(map->names + names_len, name, (size_t)(eol - name));
		names_len += (size_t)(eol - name);
		map->names[names_len++] = '\0';
next:
		line = eol + 1;
	}
	if (map->nr)
		qsort(map->entries, map->nr, sizeof(*map->entries), entry_cmp);
	return map;
fail:
	pc_perfmap__delete(map);
	errno = ENOMEM;
	return NULL;
}

size_t pc_perfmap__nr_entries(const struct pc_perfmap *map)
{
	return map ? map->nr : 0;
}

const char *pc_perfmap__find(const struct pc_perfmap *map, uint64_t ip,
			     uint64_t *start)
{
	const struct perfmap_entry *best = NULL;
	size_t lo = 0, hi, i;

	if (!map || !map->nr)
		return NULL;
	/* The first entry starting above @ip ... */
	hi = map->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->entries[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ... and back over those that may cover it: none is longer than
	 * max_size.  Of those covering it, the earliest line wins. */
	for (i = lo; i-- > 0;) {
		const struct perfmap_entry *e = &map->entries[i];

		if (ip - e->start > map->max_size)
			break;
		if ((ip < e->end || (e->end == e->start && ip == e->start)) &&
		    (!best || e->order < best->order))
			best = e;
	}
	if (!best)
		return NULL;
	if (start)
		*start = best->start;
	return map->names + best->name;
}

/* ---- the files of every process ---- */

struct pc_perfmaps *pc_perfmaps__new(const char *root)
{
	struct pc_perfmaps *maps = calloc(1, sizeof(*maps));

	if (!maps)
		return NULL;
	if (root && *root) {
		maps->root = strdup(root);
		if (!maps->root) {
			free(maps);
			errno = ENOMEM;
			return NULL;
		}
	}
	return maps;
}

void pc_perfmaps__forget(struct pc_perfmaps *maps)
{
	size_t i;

	if (!maps)
		return;
	for (i = 0; i < maps->nr; i++) {
		pc_perfmap__delete(maps->files[i].map);
		free(maps->files[i].path);
	}
	maps->nr = 0;
	for (i = 0; i < maps->nr_retired; i++)
		pc_perfmap__delete(maps->retired[i]);
	maps->nr_retired = 0;
}

void pc_perfmaps__delete(struct pc_perfmaps *maps)
{
	if (!maps)
		return;
	pc_perfmaps__forget(maps);
	free(maps->files);
	free(maps->retired);
	free(maps->root);
	free(maps);
}

/* (Re)read @f when it is not read yet or has changed since. */
static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool retire(struct pc_perfmaps *maps, struct pc_perfmap *map)
{
	if (!map)
		return true;
	if (maps->nr_retired == maps->cap_retired) {
		size_t cap = maps->cap_retired ? maps->cap_retired * 2 : 8;
		struct pc_perfmap **n = realloc(maps->retired, cap * sizeof(*n));

		if (!n)
			return false;
		maps->retired = n;
		maps->cap_retired = cap;
	}
	maps->retired[maps->nr_retired++] = map;
	return true;
}

static void file_read(struct pc_perfmaps *maps, struct perfmap_file *f)
{
	struct pc_perfmap *map;
	char path[4096];
	struct stat st;
	char *text;
	ssize_t got;
	size_t len = 0;
	int fd;

	f->read_ns = coarse_ns();

	snprintf(path, sizeof(path), "%s%s", maps->root ? maps->root : "",
		 f->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (f->map && st.st_ino == f->ino && st.st_size == f->size_read)) {
		close(fd);
		return;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return;
	}
	/* A runtime may be appending: take what is there now, whole lines. */
	while (len < (size_t)st.st_size &&
	       (got = read(fd, text + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)got;
	close(fd);
	while (len && text[len - 1] != '\n')
		len--;
	map = pc_perfmap__parse(text, len);
	free(text);
	if (!map || !retire(maps, f->map)) {
		pc_perfmap__delete(map);
		return;
	}
	f->map = map;
	f->size_read = (off_t)len;
	f->ino = st.st_ino;
}

static struct perfmap_file *file_get(struct pc_perfmaps *maps, pid_t pid)
{
	struct perfmap_file *f;
	char path[64];
	size_t i;

	for (i = 0; i < maps->nr; i++)
		if (maps->files[i].pid == pid)
			return &maps->files[i];
	if (maps->nr == maps->cap) {
		size_t cap = maps->cap ? maps->cap * 2 : 8;
		struct perfmap_file *n = realloc(maps->files, cap * sizeof(*n));

		if (!n)
			return NULL;
		maps->files = n;
		maps->cap = cap;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	f = &maps->files[maps->nr];
	memset(f, 0, sizeof(*f));
	f->pid = pid;
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	maps->nr++;
	file_read(maps, f);
	return f;
}

const char *pc_perfmaps__lookup(struct pc_perfmaps *maps, pid_t pid,
				uint64_t ip, const char **dso, uint64_t *start)
{
	struct perfmap_file *f = maps ? file_get(maps, pid) : NULL;
	const char *name;

	if (!f)
		return NULL;
	*dso = f->path;
	name = pc_perfmap__find(f->map, ip, start);
	/* Written since it was read?  Looked at again at most every 50 ms:
	 * an address no entry covers must not cost a read each time. */
	if (!name && coarse_ns() - f->read_ns > 50000000u) {
		file_read(maps, f);
		name = pc_perfmap__find(f->map, ip, start);
	}
	return name;
}
