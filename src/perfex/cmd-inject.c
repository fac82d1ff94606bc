// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex inject: copy a perf.data file, adding what the recording could
 * not hold.  --jit: the code a JIT runtime described in its jitdump file
 * (jit-PID.dump, perf's format, tools/perf/Documentation/
 * jitdump-specification.txt in the kernel tree).  The runtime maps that
 * file executable, so the recording holds an MMAP naming it; for each
 * function loaded (JIT_CODE_LOAD) inject writes a small ELF file,
 * jitted-PID-INDEX.so beside the dump, holding its code and a symbol, and
 * an MMAP2 of that file at the code's address and time, as perf inject
 * --jit does, so that perfex report and perf report both name the
 * samples; the DEBUG_INFO and UNWINDING_INFO records before a load give
 * its file a line table and unwind tables (jit-elf.c).  A move
 * (JIT_CODE_MOVE) maps the same file at the new address.
 * The dump's times are CLOCK_MONOTONIC: the recording must be one too
 * (record -k mono) for the maps to fall between the right samples.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <perfctr/perfctr.h>
#include <perfctr/perfdata.h>
#include <perfctr/record.h>

#include "jit-elf.h"
#include "options.h"
#include "perfex.h"

#define JITDUMP_MAGIC 0x4A695444u	/* "JiTD" */
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define JITDUMP_FLAGS_ARCH_TIMESTAMP 1u

enum jit_record_type {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};

struct inject_opts {
	const char *input;
	const char *output;
	bool jit;
};

/* A record to add, with its time (the jitdump's). */
struct added {
	uint64_t time;
	size_t seq;		/* ties keep the dump's order */
	void *rec;
};

struct inject {
	struct inject_opts *o;
	struct perfctr_perfdata *in;
	struct perfctr_perfdata_writer *out;
	const struct perf_event_attr *attr;	/* the trailer's layout */
	uint64_t id;				/* its event's id */
	struct added *added;
	size_t nr_added, cap_added, next_added;
	size_t nr_functions, nr_moves, nr_lines, nr_unwinds;
	/* Functions whose map covers their unwind tables too. */
	struct mapped_tables {
		uint32_t pid;
		uint64_t index;
		uint64_t len;		/* of the map */
	} *tables;
	size_t nr_tables, cap_tables;
};

/* The DEBUG_INFO and UNWINDING_INFO records read since the last LOAD,
 * which they describe (checked whole when read). */
struct pending {
	const uint8_t *debug, *unwind;
	uint32_t debug_size, unwind_size;
};

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* ---- the records added ---- */

static int add_record(struct inject *ij, uint64_t time, void *rec)
{
	if (ij->nr_added == ij->cap_added) {
		size_t cap = ij->cap_added ? ij->cap_added * 2 : 64;
		struct added *n = realloc(ij->added, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ij->added = n;
		ij->cap_added = cap;
	}
	ij->added[ij->nr_added].time = time;
	ij->added[ij->nr_added].seq = ij->nr_added;
	ij->added[ij->nr_added].rec = rec;
	ij->nr_added++;
	return 0;
}

/* The sample_id_all trailer of the file's first event, for @pid/@tid at
 * @time; returns its size (@buf: 48 bytes at least). */
static size_t trailer(const struct inject *ij, uint32_t pid, uint32_t tid,
		      uint64_t time, uint64_t *buf)
{
	uint64_t type = ij->attr->sample_type;
	size_t n = 0;

	if (!ij->attr->sample_id_all)
		return 0;
	if (type & PERF_SAMPLE_TID)
		buf[n++] = (uint64_t)tid << 32 | pid;
	if (type & PERF_SAMPLE_TIME)
		buf[n++] = time;
	if (type & PERF_SAMPLE_ID)
		buf[n++] = ij->id;
	if (type & PERF_SAMPLE_STREAM_ID)
		buf[n++] = ij->id;
	if (type & PERF_SAMPLE_CPU)
		buf[n++] = 0;
	if (type & PERF_SAMPLE_IDENTIFIER)
		buf[n++] = ij->id;
	return n * 8;
}

/* An MMAP2 of @path (stat'd) at @addr for @len bytes, at @time. */
static int add_mmap2(struct inject *ij, uint32_t pid, uint32_t tid,
		     uint64_t time, uint64_t addr, uint64_t len,
		     const char *path)
{
	size_t name_size = (strlen(path) + 1 + 7) & ~(size_t)7;
	uint64_t tail[8];
	size_t tail_size = trailer(ij, pid, tid, time, tail);
	struct perf_event_header *h;
	struct stat st;
	uint8_t *rec, *p;
	size_t size;

	if (stat(path, &st))
		return -errno;
	size = sizeof(*h) + 4 + 4 + 8 * 3 + 4 + 4 + 8 + 8 + 4 + 4 +
	       name_size + tail_size;
	rec = calloc(1, size);
	if (!rec)
		return -ENOMEM;
	h = (struct perf_event_header *)rec;
	h->type = PERF_RECORD_MMAP2;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)size;
	p = rec + sizeof(*h);
#define PUT(v) do { __typeof__(v) v_ = (v); memcpy(p, &v_, sizeof(v_)); p += sizeof(v_); } while (0)
	PUT(pid);
	PUT(tid);
	PUT(addr);
	PUT(len);
	PUT((uint64_t)JIT_TEXT_OFFSET);
	PUT((uint32_t)major(st.st_dev));
	PUT((uint32_t)minor(st.st_dev));
	PUT((uint64_t)st.st_ino);
	PUT((uint64_t)1);
	PUT((uint32_t)(PROT_READ | PROT_EXEC));
	PUT((uint32_t)MAP_SHARED);
#undef PUT
	memcpy(p, path, strlen(path));
	p += name_size;
	memcpy(p, tail, tail_size);
	return add_record(ij, time, rec);
}

/* ---- the jitdump ---- */

static const char *dump_type_name(uint32_t id)
{
	static const char *const names[] = {
		"JIT_CODE_LOAD", "JIT_CODE_MOVE", "JIT_CODE_DEBUG_INFO",
		"JIT_CODE_CLOSE", "JIT_CODE_UNWINDING_INFO",
	};

	return id < 5 ? names[id] : "unknown";
}

/* Whether DEBUG_INFO record @r (@size bytes) holds the entries it
 * counts: an address, a line, a column and a file name each. */
static bool debug_whole(const uint8_t *r, uint32_t size)
{
	const uint8_t *p = r + 32, *end = r + size, *nul;
	uint64_t i, n;

	if (size < 32)
		return false;
	n = rd64(r + 24);
	for (i = 0; i < n; i++) {
		if (end - p < 17 || !(nul = memchr(p + 16, '\0',
						   (size_t)(end - p - 16))))
			return false;
		/* "\xff" names the previous entry's file: not the first. */
		if (i == 0 && p[16] == 0xff && nul == p + 17)
			return false;
		p = nul + 1;
	}
	return true;
}

/* The unwinding data of UNWINDING_INFO record @r: .eh_frame, then
 * .eh_frame_hdr (as V8 and perf have them, whatever the
 * specification's prose says of their order). */
static bool unwind_parse(const uint8_t *r, uint32_t size, struct jit_unwind *u)
{
	uint64_t data_size, hdr_size;

	if (size < 40)
		return false;
	data_size = rd64(r + 16);
	hdr_size = rd64(r + 24);
	if (hdr_size > data_size || data_size > size - 40)
		return false;
	u->eh_frame = r + 40;
	u->eh_frame_size = data_size - hdr_size;
	u->eh_frame_hdr = r + 40 + u->eh_frame_size;
	u->eh_frame_hdr_size = hdr_size;
	u->mapped_size = rd64(r + 32);
	return true;
}

/*
 * The line table of the function at @code_addr (@size bytes) from
 * DEBUG_INFO record @r (debug_whole()): a row per entry inside the
 * function, sorted by address (entries at one address keep the dump's
 * order); the files are the names in the dump.  Return: 0 or -ENOMEM.
 */
static int lines_parse(const uint8_t *r, uint64_t code_addr, uint64_t size,
		       struct jit_lines *l)
{
	uint64_t i, n = rd64(r + 24);
	const uint8_t *p = r + 32;
	const char *file = NULL;
	size_t j;

	memset(l, 0, sizeof(*l));
	l->rows = calloc(n ? n : 1, sizeof(*l->rows));
	l->files = calloc(n ? n : 1, sizeof(*l->files));
	if (!l->rows || !l->files)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *name = (const char *)p + 16;
		struct jit_line row = {
			.offset = rd64(p) - code_addr,
			.line = rd32(p + 8),
			.column = rd32(p + 12),
		};

		if (!((uint8_t)name[0] == 0xff && !name[1]))
			file = name;
		p += 16 + strlen(name) + 1;
		/* Unsigned: an address before the code is far past it. */
		if (row.offset >= size)
			continue;
		for (j = 0; j < l->nr_files && strcmp(l->files[j], file); j++)
			;
		if (j == l->nr_files)
			l->files[l->nr_files++] = file;
		row.file = (uint32_t)j;
		/* Insertion: runtimes write the entries in order, nearly. */
		for (j = l->nr_rows; j > 0 && l->rows[j - 1].offset > row.offset; j--)
			l->rows[j] = l->rows[j - 1];
		l->rows[j] = row;
		l->nr_rows++;
	}
	return 0;
}

/*
 * The length of the map of a function's file: its code, and when the
 * runtime had the unwind tables in memory after it (mapped_size), those
 * too, from the code's end rounded up to 8 bytes -- perf's length, by
 * which its libunwind reads .eh_frame_hdr through the map.  Remembered
 * for the function's moves (perf maps a moved function's code only).
 */
static uint64_t map_len(struct inject *ij, uint32_t pid, uint64_t index,
			uint64_t code_size, const struct jit_unwind *u,
			bool move)
{
	uint64_t len = code_size;
	size_t i;

	if (u && u->mapped_size)
		len = ((code_size + 7) & ~7ull) + u->mapped_size;
	if (move) {
		for (i = 0; i < ij->nr_tables; i++)
			if (ij->tables[i].pid == pid &&
			    ij->tables[i].index == index)
				return ij->tables[i].len;
		return len;
	}
	if (len != code_size) {
		if (ij->nr_tables == ij->cap_tables) {
			size_t cap = ij->cap_tables ? ij->cap_tables * 2 : 16;
			struct mapped_tables *n = realloc(ij->tables,
							  cap * sizeof(*n));

			if (!n)
				return code_size;	/* unwinding then fails */
			ij->tables = n;
			ij->cap_tables = cap;
		}
		ij->tables[ij->nr_tables++] =
			(struct mapped_tables){ pid, index, len };
	}
	return len;
}

static int dump_load(struct inject *ij, const char *dir, uint16_t machine,
		     const uint8_t *r, uint32_t size, uint64_t time,
		     const struct pending *pending)
{
	const uint8_t *name = r + 56, *end = r + size, *nul;
	uint32_t pid = rd32(r + 16), tid = rd32(r + 20);
	uint64_t vma = rd64(r + 24), code_addr = rd64(r + 32);
	uint64_t code_size = rd64(r + 40), index = rd64(r + 48);
	struct jit_function fn = { .machine = machine, .addr = vma };
	struct jit_lines lines = { 0 };
	struct jit_unwind unwind;
	char path[4096];
	int err = 0;

	if (size < 56 || !(nul = memchr(name, '\0', (size_t)(end - name))) ||
	    code_size > (uint64_t)(end - nul - 1))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/jitted-%" PRIu32 "-%" PRIu64 ".so",
		 dir, pid, index);
	fn.name = (const char *)name;
	fn.code = nul + 1;
	fn.size = code_size;
	if (pending->debug) {
		err = lines_parse(pending->debug, code_addr, code_size, &lines);
		if (!err && lines.nr_rows) {
			fn.lines = &lines;
			ij->nr_lines++;
		}
	}
	if (pending->unwind &&
	    unwind_parse(pending->unwind, pending->unwind_size, &unwind)) {
		fn.unwind = &unwind;
		ij->nr_unwinds++;
	}
	if (!err)
		err = jit_elf_write(path, &fn);
	free(lines.rows);
	free(lines.files);
	if (err) {
		perfex_error("cannot write '%s': %s", path, strerror(-err));
		return err;
	}
	ij->nr_functions++;
	return add_mmap2(ij, pid, tid, time, vma,
			 map_len(ij, pid, index, code_size, fn.unwind, false),
			 path);
}

static int dump_move(struct inject *ij, const char *dir, const uint8_t *r,
		     uint32_t size, uint64_t time)
{
	char path[4096];

	if (size < 16 + 8 + 8 * 5)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/jitted-%" PRIu32 "-%" PRIu64 ".so",
		 dir, rd32(r + 16), rd64(r + 56));
	ij->nr_moves++;
	/* A move of a function never loaded: nothing to map. */
	if (access(path, F_OK))
		return 0;
	return add_mmap2(ij, rd32(r + 16), rd32(r + 20), time, rd64(r + 40),
			 map_len(ij, rd32(r + 16), rd64(r + 56), rd64(r + 48),
				 NULL, true),
			 path);
}

/* Read jitdump @path (named by the recording) into ij->added. */
static int read_dump(struct inject *ij, const char *path)
{
	char *dir_copy = strdup(path), *dir;
	const uint8_t *buf = NULL, *p, *end;
	struct pending pending = { 0 };
	uint32_t header_size;
	struct stat st;
	uint16_t machine;
	int fd, err = 0;

	if (!dir_copy)
		return -ENOMEM;
	dir = dirname(dir_copy);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		perfex_error("cannot read jitdump '%s': %s", path, strerror(errno));
		perfex_hint("inject reads the dump where the runtime wrote it: run it on the machine recorded, before the file is removed");
		goto out;
	}
	if (st.st_size < 40 || (buf = mmap(NULL, (size_t)st.st_size, PROT_READ,
					   MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		buf = NULL;
		err = -EINVAL;
		perfex_error("'%s' is not a jitdump file: too short", path);
		goto out;
	}
	if (rd32(buf) != JITDUMP_MAGIC) {
		err = -EINVAL;
		perfex_error(rd32(buf) == JITDUMP_MAGIC_SWAPPED ?
			     "jitdump '%s' is of the other byte order: not supported" :
			     "'%s' is not a jitdump file: bad magic", path);
		goto out;
	}
	header_size = rd32(buf + 8);
	machine = (uint16_t)rd32(buf + 12);
	if (rd64(buf + 32) & JITDUMP_FLAGS_ARCH_TIMESTAMP) {
		err = -ENOTSUP;
		perfex_error("jitdump '%s' has times from the CPU's own clock: not supported",
			     path);
		perfex_hint("have the runtime use CLOCK_MONOTONIC (the jitdump default)");
		goto out;
	}
	if (header_size < 40 || header_size > st.st_size) {
		err = -EINVAL;
		perfex_error("'%s' is not a jitdump file: header size %" PRIu32,
			     path, header_size);
		goto out;
	}
	end = buf + st.st_size;
	for (p = buf + header_size; end - p >= 16;) {
		uint32_t id = rd32(p), size = rd32(p + 4);
		uint64_t time = rd64(p + 8);

		/* A torn last record (the runtime was killed): the end. */
		if (size < 16 || size > (uint64_t)(end - p))
			break;
		/* DEBUG_INFO and UNWINDING_INFO describe the next LOAD;
		 * unknown types are skipped by their size, as the format
		 * allows. */
		if (id == JIT_CODE_LOAD) {
			err = dump_load(ij, dir, machine, p, size, time,
					&pending);
			memset(&pending, 0, sizeof(pending));
		} else if (id == JIT_CODE_MOVE) {
			err = dump_move(ij, dir, p, size, time);
		} else if (id == JIT_CODE_DEBUG_INFO) {
			pending.debug = p;
			pending.debug_size = size;
			err = debug_whole(p, size) ? 0 : -EINVAL;
		} else if (id == JIT_CODE_UNWINDING_INFO) {
			struct jit_unwind u;

			pending.unwind = p;
			pending.unwind_size = size;
			err = unwind_parse(p, size, &u) ? 0 : -EINVAL;
		} else if (id == JIT_CODE_CLOSE) {
			break;
		}
		if (err == -EINVAL)
			perfex_error("malformed %s record at offset %td of '%s'",
				     dump_type_name(id), p - buf, path);
		if (err)
			goto out;
		p += size;
	}
out:
	if (buf)
		munmap((void *)buf, (size_t)st.st_size);
	if (fd >= 0)
		close(fd);
	free(dir_copy);
	return err;
}

/* Whether @filename names a jitdump: "jit-PID.dump". */
static bool is_jitdump(const char *filename)
{
	const char *base = strrchr(filename, '/');
	int pid, end = 0;

	base = base ? base + 1 : filename;
	return sscanf(base, "jit-%d.dump%n", &pid, &end) == 1 && end &&
	       !base[end];
}

/* ---- the copy ---- */

static int cmp_added(const void *a, const void *b)
{
	const struct added *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Write the added records due before @time (all: UINT64_MAX). */
static int flush_added(struct inject *ij, uint64_t time)
{
	while (ij->next_added < ij->nr_added &&
	       ij->added[ij->next_added].time <= time) {
		const struct perf_event_header *h = ij->added[ij->next_added].rec;
		int err = perfctr_perfdata_writer__write(ij->out, h, h->size);

		if (err)
			return err;
		ij->next_added++;
	}
	return 0;
}

/* A record's time, or 0 when it has none. */
static uint64_t record_time(const struct perfctr_decoder *dec,
			    const struct perf_event_header *h)
{
	if (h->type == PERF_RECORD_SAMPLE) {
		struct perfctr_sample s = { .sz = sizeof(s) };

		return perfctr_decoder__sample(dec, h, &s) ? 0 : s.time;
	}
	if (h->type < PERF_RECORD_MAX) {
		struct perfctr_record r = { .sz = sizeof(r) };

		if (!perfctr_decoder__record(dec, h, &r) &&
		    (r.sample_id.present & PERF_SAMPLE_TIME))
			return r.sample_id.time;
	}
	return 0;
}

/* Handle one input record: a jitdump's MMAP is replaced by the maps of
 * its functions; every other record is copied. */
static int copy_record(struct inject *ij, const struct perf_event_header *h)
{
	const struct perfctr_decoder *dec = perfctr_perfdata__decoder(ij->in);
	uint64_t time;
	int err;

	if (ij->o->jit && (h->type == PERF_RECORD_MMAP ||
			   h->type == PERF_RECORD_MMAP2)) {
		struct perfctr_record r = { .sz = sizeof(r) };

		if (!perfctr_decoder__record(dec, h, &r) &&
		    is_jitdump(r.mmap.filename)) {
			/* read_dump() says what failed. */
			if (read_dump(ij, r.mmap.filename))
				return -ECANCELED;
			qsort(ij->added + ij->next_added,
			      ij->nr_added - ij->next_added,
			      sizeof(*ij->added), cmp_added);
			return 0;
		}
	}
	time = record_time(dec, h);
	if (time && (err = flush_added(ij, time)))
		return err;
	return perfctr_perfdata_writer__write(ij->out, h, h->size);
}

static int open_output(struct inject *ij)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, wopts);
	const char *const *argv = NULL;
	uint32_t avail = 0, online = 0;
	size_t i, n = perfctr_perfdata__nr_attrs(ij->in);
	int argc, fd;

	wopts.hostname = perfctr_perfdata__string(ij->in, PERFCTR_FEAT_HOSTNAME);
	wopts.osrelease = perfctr_perfdata__string(ij->in, PERFCTR_FEAT_OSRELEASE);
	wopts.arch = perfctr_perfdata__string(ij->in, PERFCTR_FEAT_ARCH);
	wopts.cpudesc = perfctr_perfdata__string(ij->in, PERFCTR_FEAT_CPUDESC);
	wopts.version = perfctr_perfdata__string(ij->in, PERFCTR_FEAT_VERSION);
	argc = perfctr_perfdata__cmdline(ij->in, &argv);
	if (argc > 0) {
		wopts.argc = argc;
		wopts.argv = (char *const *)argv;
	}
	if (!perfctr_perfdata__nr_cpus(ij->in, &avail, &online)) {
		wopts.nr_cpus_avail = avail;
		wopts.nr_cpus_online = online;
	}
	fd = perfex_create_output(ij->o->output);
	if (fd < 0)
		return PERFEX_EXIT_IO;
	ij->out = perfctr_perfdata_writer__open_fd(fd, &wopts);
	if (!ij->out) {
		perfex_error("cannot write '%s': %s", ij->o->output,
			     strerror(errno));
		close(fd);
		return PERFEX_EXIT_IO;
	}
	for (i = 0; i < n; i++) {
		const uint64_t *ids;
		size_t nr = perfctr_perfdata__attr_ids(ij->in, i, &ids);

		if (perfctr_perfdata_writer__add_attr(ij->out,
				perfctr_perfdata__attr(ij->in, i),
				perfctr_perfdata__attr_name(ij->in, i),
				ids, nr) < 0)
			return PERFEX_EXIT_INTERNAL;
		if (i == 0)
			ij->id = nr ? ids[0] : 0;
	}
	for (i = 0; i < perfctr_perfdata__nr_build_ids(ij->in); i++) {
		struct perfctr_build_id b;

		if (!perfctr_perfdata__build_id(ij->in, i, &b))
			perfctr_perfdata_writer__add_build_id(ij->out, b.pid,
					b.misc, b.id, b.size, b.filename);
	}
	{
		uint64_t first, last;

		if (!perfctr_perfdata__sample_time(ij->in, &first, &last))
			perfctr_perfdata_writer__set_sample_time(ij->out,
								 first, last);
	}
	return -1;
}

/* The build-ids of the files written, so that perf finds them as its
 * own inject leaves them. */
static void add_build_ids(struct inject *ij)
{
	char seen[4096] = "";
	size_t i;

	for (i = 0; i < ij->nr_added; i++) {
		const uint8_t *rec = ij->added[i].rec;
		const char *path = (const char *)rec + sizeof(struct perf_event_header) + 64;
		uint8_t id[20];

		if (!strcmp(seen, path))
			continue;
		if (perfctr_build_id_read(path, id, sizeof(id)) == 20)
			perfctr_perfdata_writer__add_build_id(ij->out, -1,
					PERF_RECORD_MISC_USER, id, 20, path);
		snprintf(seen, sizeof(seen), "%s", path);
	}
}

/* perf inject's rule: jitdump times are CLOCK_MONOTONIC; so must the
 * samples' be. */
static bool monotonic_recording(const struct perfctr_perfdata *in)
{
	size_t i;

	for (i = 0; i < perfctr_perfdata__nr_attrs(in); i++) {
		const struct perf_event_attr *a = perfctr_perfdata__attr(in, i);

		if (!a->use_clockid || a->clockid != CLOCK_MONOTONIC)
			return false;
	}
	return true;
}

static int run_inject(struct inject *ij)
{
	const struct perf_event_header *h;
	uint64_t cursor = 0;
	int r, ret;

	ij->in = perfctr_perfdata__open(ij->o->input, NULL);
	if (!ij->in) {
		perfex_error("cannot read '%s': %s", ij->o->input,
			     strerror(errno));
		return PERFEX_EXIT_IO;
	}
	if (!perfctr_perfdata__nr_attrs(ij->in)) {
		perfex_error("'%s' has no events", ij->o->input);
		return PERFEX_EXIT_IO;
	}
	ij->attr = perfctr_perfdata__attr(ij->in, 0);
	if (ij->o->jit && !monotonic_recording(ij->in)) {
		perfex_error("'%s' was not recorded with CLOCK_MONOTONIC times, which jitdump files use",
			     ij->o->input);
		perfex_hint("record with perfex record -k mono (perf record -k 1)");
		return PERFEX_EXIT_USAGE;
	}
	ret = open_output(ij);
	if (ret >= 0)
		return ret;
	while ((r = perfctr_perfdata__next(ij->in, &cursor, &h)) > 0)
		if ((r = copy_record(ij, h)) < 0)
			break;
	if (r == 0)
		r = flush_added(ij, UINT64_MAX);
	if (r < 0) {
		if (r != -ECANCELED)
			perfex_error("cannot inject into '%s': %s",
				     ij->o->output, strerror(-r));
		perfctr_perfdata_writer__close(ij->out);
		return r == -ENOMEM ? PERFEX_EXIT_INTERNAL : PERFEX_EXIT_IO;
	}
	add_build_ids(ij);
	if (perfctr_perfdata_writer__close(ij->out)) {
		perfex_error("cannot write '%s': %s", ij->o->output,
			     strerror(errno));
		return PERFEX_EXIT_IO;
	}
	if (ij->o->jit)
		fprintf(stderr, "perfex inject: %zu jitted functions, %zu moves, %zu line tables, %zu unwind tables, written to '%s'\n",
			ij->nr_functions, ij->nr_moves, ij->nr_lines,
			ij->nr_unwinds, ij->o->output);
	return 0;
}

static int inject_option(struct perfex_parse *p, void *ctx)
{
	struct inject_opts *o = ctx;

	switch (p->opt->id) {
	case OPT_INPUT:
		o->input = p->arg;
		break;
	case OPT_OUTPUT:
		o->output = p->arg;
		break;
	case OPT_JIT:
		o->jit = true;
		break;
	default:
		break;
	}
	return -1;
}

int cmd_inject(int argc, char **argv)
{
	struct inject_opts o = { .input = "perf.data" };
	struct perfex_parse p;
	struct inject ij = { .o = &o };
	size_t i;
	int ret;

	ret = perfex_options_parse(&p, PERFEX_CMD_INJECT, argc, argv, false,
				   inject_option, &o);
	if (ret >= 0)
		return ret;
	if (optind < argc) {
		perfex_error("unexpected argument '%s'", argv[optind]);
		perfex_hint("perfex inject --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	if (!o.output) {
		perfex_error("no output file: inject needs -o FILE");
		perfex_hint("perfex inject --jit -i perf.data -o jit.data");
		return PERFEX_EXIT_USAGE;
	}
	if (!strcmp(o.output, o.input)) {
		perfex_error("the output '%s' is the input", o.output);
		return PERFEX_EXIT_USAGE;
	}
	if (perfex_dry_run)
		return 0;
	ret = run_inject(&ij);
	for (i = 0; i < ij.nr_added; i++)
		free(ij.added[i].rec);
	free(ij.added);
	free(ij.tables);
	perfctr_perfdata__close(ij.in);
	return ret;
}
