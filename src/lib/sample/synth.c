/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Side-band records made from /proc (see perfctr/synth.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "perfctr/synth.h"

struct synth {
	const struct perf_event_attr *attr;
	uint64_t id;
	const char *proc;
	perfctr_synth_cb_t cb;
	void *ctx;
	int made;
	int stop;	/* the callback's non-zero return */
};

static int synth_init(struct synth *s, const struct perfctr_synth_opts *opts,
		      perfctr_synth_cb_t cb, void *ctx)
{
	if (!cb || !pc_opts_valid(opts, sizeof(*opts)))
		return pc_err(EINVAL);
	memset(s, 0, sizeof(*s));
	s->attr = PC_OPTS_GET(opts, attr, NULL);
	s->id = PC_OPTS_GET(opts, id, 0);
	s->proc = PC_OPTS_GET(opts, proc, NULL);
	if (!s->proc)
		s->proc = "/proc";
	s->cb = cb;
	s->ctx = ctx;
	return 0;
}

/* The sample_id_all trailer at @p, in the order the kernel writes it;
 * returns its size. */
static size_t put_trailer(const struct synth *s, uint64_t *p, pid_t pid,
			  pid_t tid)
{
	uint64_t type;
	size_t n = 0;

	if (!s->attr || !s->attr->sample_id_all)
		return 0;
	type = s->attr->sample_type;
	if (type & PERF_SAMPLE_TID)
		p[n++] = (uint64_t)(uint32_t)pid | (uint64_t)(uint32_t)tid << 32;
	if (type & PERF_SAMPLE_TIME)
		p[n++] = 0;
	if (type & PERF_SAMPLE_ID)
		p[n++] = s->id;
	if (type & PERF_SAMPLE_STREAM_ID)
		p[n++] = s->id;
	if (type & PERF_SAMPLE_CPU)
		p[n++] = 0;
	if (type & PERF_SAMPLE_IDENTIFIER)
		p[n++] = s->id;
	return n * 8;
}

static int emit(struct synth *s, const struct perf_event_header *hdr)
{
	int r = s->cb(hdr, s->ctx);

	if (r)
		s->stop = r;
	else
		s->made++;
	return r;
}

static int synth_comm(struct synth *s, pid_t pid, pid_t tid, const char *comm)
{
	uint64_t buf[64];
	struct perf_event_header *hdr = (void *)buf;
	char *p = (char *)(hdr + 1);
	size_t len = strlen(comm) + 1, size;

	memset(buf, 0, sizeof(buf));
	if (len > 16)
		len = 16;
	hdr->type = PERF_RECORD_COMM;
	memcpy(p, &pid, 4);
	memcpy(p + 4, &tid, 4);
	memcpy(p + 8, comm, len - 1);
	size = sizeof(*hdr) + 8 + ((len + 7) & ~(size_t)7);
	size += put_trailer(s, (uint64_t *)((char *)buf + size), pid, tid);
	hdr->size = (uint16_t)size;
	return emit(s, hdr);
}

static int synth_mmap(struct synth *s, uint32_t type, uint16_t misc,
		      pid_t pid, pid_t tid, uint64_t start, uint64_t len,
		      uint64_t pgoff, uint32_t maj, uint32_t min, uint64_t ino,
		      uint32_t prot, const char *filename)
{
	uint64_t buf[(4096 + 256) / 8];
	struct perf_event_header *hdr = (void *)buf;
	char *p = (char *)(hdr + 1);
	size_t flen = strlen(filename) + 1, size, off;
	uint32_t flags = 2 /* MAP_PRIVATE */;

	if (flen > 4096)
		return 0;
	memset(buf, 0, sizeof(buf));
	hdr->type = (uint16_t)type;
	hdr->misc = misc;
	memcpy(p, &pid, 4);
	memcpy(p + 4, &tid, 4);
	memcpy(p + 8, &start, 8);
	memcpy(p + 16, &len, 8);
	memcpy(p + 24, &pgoff, 8);
	off = 32;
	if (type == PERF_RECORD_MMAP2) {
		memcpy(p + off, &maj, 4);
		memcpy(p + off + 4, &min, 4);
		memcpy(p + off + 8, &ino, 8);
		/* ino_generation stays 0 */
		memcpy(p + off + 24, &prot, 4);
		memcpy(p + off + 28, &flags, 4);
		off += 32;
	}
	memcpy(p + off, filename, flen);
	size = sizeof(*hdr) + off + ((flen + 7) & ~(size_t)7);
	size += put_trailer(s, (uint64_t *)((char *)buf + size), pid, tid);
	hdr->size = (uint16_t)size;
	return emit(s, hdr);
}

/* Return: 0, -ENOENT (no such process), or non-zero with s->stop set. */
static int process(struct synth *s, pid_t pid)
{
	char path[PATH_MAX], comm[32], *line = NULL;
	size_t cap = 0;
	struct dirent *de;
	int r = 0;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/task", s->proc, (int)pid);
	dir = opendir(path);
	if (!dir)
		return -ENOENT;
	while (!r && (de = readdir(dir))) {
		char file[PATH_MAX + 64];
		long tid;
		char *end;

		tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		snprintf(file, sizeof(file), "%s/%ld/comm", path, tid);
		f = fopen(file, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			r = synth_comm(s, pid, (pid_t)tid, comm);
		}
		fclose(f);
	}
	closedir(dir);
	if (r)
		return r;

	snprintf(path, sizeof(path), "%s/%d/maps", s->proc, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!r && getline(&line, &cap, f) > 0) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[8];
		int name_at = 0;
		uint32_t prot = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end,
			   perms, &pgoff, &maj, &min, &ino, &name_at) < 7)
			continue;
		/* Only code matters to symbols. */
		if (perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = '\0';
		prot = (perms[0] == 'r' ? 1 : 0) | (perms[1] == 'w' ? 2 : 0) | 4;
		r = synth_mmap(s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, pid,
			       pid, start, end - start, pgoff, maj, min, ino,
			       prot, name_at && line[name_at] ? line + name_at
							      : "//anon");
	}
	free(line);
	fclose(f);
	return r;
}

int perfctr_synth_process(pid_t pid, const struct perfctr_synth_opts *opts,
			  perfctr_synth_cb_t cb, void *ctx)
{
	struct synth s;
	int r;

	if (synth_init(&s, opts, cb, ctx) || pid <= 0)
		return pc_err(EINVAL);
	r = process(&s, pid);
	if (s.stop)
		return s.stop;
	if (r < 0)
		return pc_err(-r);
	return s.made;
}

int perfctr_synth_processes(const struct perfctr_synth_opts *opts,
			    perfctr_synth_cb_t cb, void *ctx)
{
	struct dirent *de;
	struct synth s;
	DIR *dir;

	if (synth_init(&s, opts, cb, ctx))
		return pc_err(EINVAL);
	dir = opendir(s.proc);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		/* A process that exits meanwhile is no error. */
		process(&s, (pid_t)pid);
		if (s.stop)
			break;
	}
	closedir(dir);
	return s.stop ? s.stop : s.made;
}

int perfctr_synth_kernel(const struct perfctr_synth_opts *opts,
			 perfctr_synth_cb_t cb, void *ctx, uint64_t *start)
{
	char path[PATH_MAX], *line = NULL;
	unsigned long long addr = 0;
	struct synth s;
	size_t cap = 0;
	FILE *f;
	int r;

	if (start)
		*start = 0;
	if (synth_init(&s, opts, cb, ctx))
		return pc_err(EINVAL);
	snprintf(path, sizeof(path), "%s/kallsyms", s.proc);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char type, name[64];
		unsigned long long a;

		if (sscanf(line, "%llx %c %63s", &a, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text") || (!addr && !strcmp(name, "_stext"))) {
			addr = a;
			if (!strcmp(name, "_text"))
				break;
		}
	}
	free(line);
	fclose(f);
	if (!addr)
		return 0;
	if (start)
		*start = addr;
	r = synth_mmap(&s, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, -1, 0,
		       addr, ~0ULL - addr, addr, 0, 0, 0, 0,
		       "[kernel.kallsyms]_text");
	return r ? r : 1;
}
