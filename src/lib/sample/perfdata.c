// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perf.data: writer and reader of perf's file format (PERFILE2).
 *
 * File layout as we write it:
 *
 *	0	header (104 bytes)
 *	104	the id arrays of the attrs, then the attrs section (each
 *		entry: the attr, then the {offset, size} of its ids)
 *	...	data section: records
 *	...	feature index: one {offset, size} per feature bit set, in bit
 *		order -- perf looks for it right after the data section
 *	...	feature payloads
 *
 * Crash safety: the header and the attrs reach the file before the first
 * record, with the feature bitmap empty; each flush of the records then
 * rewrites the header's data size.  Close writes the features and, last,
 * the header with its bitmap.  So a writer killed at any moment leaves a
 * file whose header is valid and whose bitmap is empty ("unfinished"):
 * the reader then finds the records from the file itself, walking them
 * from the start of the data section to the first torn or invalid one.
 * perf record's killed files differ (feature bits set, data size 0, no
 * features) and a finished file cut short has a data size past its end:
 * both are walked the same way (recover()).  Attrs
 * or ids added after the first record are written at close, after the
 * features; a killed file has only the first ones.  The writer's own
 * records that name the events open the data section (w_put_meta), so a
 * killed file keeps the names and the tracepoint formats; close moves the
 * header's data section past them.
 *
 * The reader accepts any placement, checks every offset and size against
 * the file before use and never trusts a count it has not bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/internal.h"
#include "perfctr/perfdata.h"
#include "perfctr/tpformat.h"
#include "sys/tracefs.h"

#define PERF_MAGIC2	0x32454c4946524550ULL	/* "PERFILE2" little-endian */
#define PERF_MAGIC2_SW	0x50455246494c4532ULL	/* written on the other endian */
#define NAME_ALIGN	64
#define BUILD_ID_MAX	20
#define BUILD_ID_MISC_SIZE (1 << 15)	/* build-id entry carries its size */

struct file_section {
	uint64_t offset;
	uint64_t size;
};

struct file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct file_section attrs;
	struct file_section data;
	struct file_section event_types;
	uint64_t features[4];		/* 256 feature bits */
};

_Static_assert(sizeof(struct file_header) == 104, "perf.data header");

static void feat_set(uint64_t *bits, unsigned int f)
{
	bits[f / 64] |= 1ULL << (f % 64);
}

static bool feat_test(const uint64_t *bits, unsigned int f)
{
	return f < 256 && (bits[f / 64] >> (f % 64)) & 1;
}

/* ================================================================ writer */

struct w_attr {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct w_build_id {
	pid_t pid;
	uint16_t misc;
	uint8_t size;
	uint8_t id[BUILD_ID_MAX];
	char *filename;
};

struct perfctr_perfdata_writer {
	int fd;
	bool owns_fd;
	int err;		/* first error, sticky */
	uint64_t pos;		/* file offset of buf[0] */
	unsigned char *buf;
	size_t buf_len;

	/* The header and attrs are in the file, the records follow from
	 * data_offset; while in_data the buffer holds whole records only. */
	bool frozen, in_data, attrs_dirty;
	uint64_t data_offset;
	struct file_section frozen_attrs;
	uint64_t data_ok;	/* bytes of whole records that reached the file */
	uint64_t buf_records, buf_samples;	/* in buf */
	uint64_t records_written, samples_written;
	uint64_t records_dropped, samples_dropped;
	/* The writer's own records (w_put_meta) open the data section at
	 * data_offset; the caller's follow from records_offset, and a
	 * finished file's header starts its data section there. */
	uint64_t records_offset;
	uint64_t meta_tracing_size;

	struct w_attr *attrs;
	size_t nr_attrs;
	struct w_build_id *build_ids;
	size_t nr_build_ids;
	bool has_sample_time;
	uint64_t first_time, last_time;

	bool no_features;
	char *tracefs_root;
	char *hostname, *osrelease, *arch, *cpudesc, *version;
	char **argv;
	int argc;
	uint32_t nr_cpus_avail, nr_cpus_online;
};

#define WBUF_SIZE (256 * 1024)

/* The header's data size at its place in the file. */
#define HDR_DATA_SIZE_OFF	48

/*
 * Records of the buffer that a failed write left out: those wholly in
 * its first @done bytes reached the file, the others are dropped.
 */
static void w_account_short(struct perfctr_perfdata_writer *w, size_t done)
{
	size_t off = 0;

	while (off < w->buf_len) {
		struct perf_event_header h;

		memcpy(&h, w->buf + off, sizeof(h));
		if (off + h.size <= done) {
			w->data_ok += h.size;
			w->records_written++;
			w->samples_written += h.type == PERF_RECORD_SAMPLE;
		} else {
			w->records_dropped++;
			w->samples_dropped += h.type == PERF_RECORD_SAMPLE;
		}
		off += h.size;
	}
}

static int w_flush(struct perfctr_perfdata_writer *w)
{
	size_t done = 0;
	int err = 0;

	while (!w->err && done < w->buf_len) {
		ssize_t n = pwrite(w->fd, w->buf + done, w->buf_len - done,
				   (off_t)(w->pos + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	if (w->in_data) {
		if (err || w->err) {
			w_account_short(w, w->err ? 0 : done);
		} else {
			w->data_ok += w->buf_len;
			w->records_written += w->buf_records;
			w->samples_written += w->buf_samples;
		}
		w->buf_records = w->buf_samples = 0;
		/* The records are in the file: now say so in the header, so
		 * that a reader (perf's included) finds them after a crash. */
		uint64_t size = w->records_offset - w->data_offset + w->data_ok;

		errno = 0;
		if (!err && !w->err && w->buf_len &&
		    pwrite(w->fd, &size, sizeof(size),
			   HDR_DATA_SIZE_OFF) != (ssize_t)sizeof(size))
			err = errno ? -errno : -EIO;
	}
	if (err && !w->err)
		w->err = err;
	w->pos += w->buf_len;
	w->buf_len = 0;
	return w->err;
}

static int w_put(struct perfctr_perfdata_writer *w, const void *src, size_t len)
{
	const unsigned char *p = src;

	while (len) {
		size_t n = WBUF_SIZE - w->buf_len;

		if (n > len)
			n = len;
		memcpy(w->buf + w->buf_len, p, n);
		w->buf_len += n;
		p += n;
		len -= n;
		if (w->buf_len == WBUF_SIZE && w_flush(w))
			return w->err;
	}
	return w->err;
}

static uint64_t w_tell(const struct perfctr_perfdata_writer *w)
{
	return w->pos + w->buf_len;
}

static void w_put_u32(struct perfctr_perfdata_writer *w, uint32_t v)
{
	w_put(w, &v, sizeof(v));
}

static void w_put_u64(struct perfctr_perfdata_writer *w, uint64_t v)
{
	w_put(w, &v, sizeof(v));
}

static void w_zeros(struct perfctr_perfdata_writer *w, size_t n)
{
	static const unsigned char z[64];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		w_put(w, z, k);
		n -= k;
	}
}

/* perf's string: u32 len (NUL included, padded to 64), bytes, zeros. */
static void w_put_string(struct perfctr_perfdata_writer *w, const char *s)
{
	size_t olen = strlen(s) + 1;
	size_t len = (olen + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;

	w_put_u32(w, (uint32_t)len);
	w_put(w, s, olen);
	w_zeros(w, len - olen);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *cpuinfo_field(const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	size_t klen = strlen(key);
	char *out = NULL;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *colon;

		if (strncmp(line, key, klen))
			continue;
		colon = strchr(line, ':');
		if (!colon)
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		out = strdup(colon);
		break;
	}
	fclose(f);
	return out;
}

/* x86: "GenuineIntel,6,85,4" as perf writes HEADER_CPUID. */
static char *x86_cpuid(void)
{
	char *vendor = cpuinfo_field("vendor_id");
	char *family = cpuinfo_field("cpu family");
	char *model = cpuinfo_field("model\t");
	char *stepping = cpuinfo_field("stepping");
	char *out = NULL;

	if (vendor && family && model && stepping) {
		size_t n = strlen(vendor) + strlen(family) + strlen(model) +
			   strlen(stepping) + 4;

		out = malloc(n);
		if (out)
			snprintf(out, n, "%s,%s,%s,%s", vendor, family, model,
				 stepping);
	}
	free(vendor);
	free(family);
	free(model);
	free(stepping);
	return out;
}

static uint64_t total_mem_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void writer_free(struct perfctr_perfdata_writer *w)
{
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	for (size_t i = 0; i < w->nr_build_ids; i++)
		free(w->build_ids[i].filename);
	free(w->build_ids);
	free(w->tracefs_root);
	free(w->hostname);
	free(w->osrelease);
	free(w->arch);
	free(w->cpudesc);
	free(w->version);
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	free(w->buf);
	free(w);
}

struct perfctr_perfdata_writer *
perfctr_perfdata_writer__open_fd(int fd,
				 const struct perfctr_perfdata_writer_opts *opts)
{
	struct perfctr_perfdata_writer *w;
	struct file_header hdr;
	struct utsname uts;
	int argc;

	if (fd < 0 || !pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		goto nomem;
	w->fd = fd;
	w->buf = malloc(WBUF_SIZE);
	if (!w->buf)
		goto nomem;
	w->no_features = PC_OPTS_GET(opts, no_features, false);
	if (PC_OPTS_GET(opts, tracefs_root, NULL)) {
		w->tracefs_root = strdup(opts->tracefs_root);
		if (!w->tracefs_root)
			goto nomem;
	}
	if (uname(&uts) < 0)
		memset(&uts, 0, sizeof(uts));
	w->hostname = strdup(PC_OPTS_GET(opts, hostname, NULL) ?: uts.nodename);
	w->osrelease = strdup(PC_OPTS_GET(opts, osrelease, NULL) ?: uts.release);
	w->arch = strdup(PC_OPTS_GET(opts, arch, NULL) ?: uts.machine);
	w->cpudesc = dup_or_null(PC_OPTS_GET(opts, cpudesc, NULL));
	if (!w->cpudesc)
		w->cpudesc = cpuinfo_field("model name");
	if (!w->cpudesc)
		w->cpudesc = strdup(uts.machine);
	w->version = dup_or_null(PC_OPTS_GET(opts, version, NULL));
	if (!w->version)
		w->version = strdup("perfctr " PERFCTR_VERSION);
	if (!w->hostname || !w->osrelease || !w->arch || !w->cpudesc ||
	    !w->version)
		goto nomem;
	argc = PC_OPTS_GET(opts, argc, 0);
	if (argc > 0 && PC_OPTS_GET(opts, argv, NULL)) {
		char *const *argv = opts->argv;

		w->argv = calloc((size_t)argc, sizeof(char *));
		if (!w->argv)
			goto nomem;
		for (; w->argc < argc; w->argc++) {
			w->argv[w->argc] = strdup(argv[w->argc] ? argv[w->argc] : "");
			if (!w->argv[w->argc])
				goto nomem;
		}
	}
	w->nr_cpus_avail = PC_OPTS_GET(opts, nr_cpus_avail, 0);
	if (!w->nr_cpus_avail)
		w->nr_cpus_avail = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	w->nr_cpus_online = PC_OPTS_GET(opts, nr_cpus_online, 0);
	if (!w->nr_cpus_online)
		w->nr_cpus_online = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);

	/* Nothing of an earlier file may follow our records: a reader that
	 * recovers a killed recording would take its records for ours. */
	if (ftruncate(fd, 0) < 0)
		w->err = -errno;
	/* A placeholder: the real header goes in with the attrs, before
	 * the first record (w_freeze). */
	memset(&hdr, 0, sizeof(hdr));
	w_put(w, &hdr, sizeof(hdr));
	if (w->err) {
		errno = -w->err;
		writer_free(w);
		return NULL;
	}
	return w;
nomem:
	if (w)
		writer_free(w);
	errno = ENOMEM;
	return NULL;
}

struct perfctr_perfdata_writer *
perfctr_perfdata_writer__open(const char *path,
			      const struct perfctr_perfdata_writer_opts *opts)
{
	struct perfctr_perfdata_writer *w;
	struct stat st = { 0 };
	int fd;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	/* Not through a symbolic link, and not into a FIFO or a device:
	 * O_NONBLOCK so that opening one cannot hang (it is refused next). */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    fcntl(fd, F_SETFL, 0) < 0) {
		int e = S_ISREG(st.st_mode) ? errno : EINVAL;

		close(fd);
		errno = e;
		return NULL;
	}
	w = perfctr_perfdata_writer__open_fd(fd, opts);
	if (!w) {
		int e = errno;

		close(fd);
		unlink(path);
		errno = e;
		return NULL;
	}
	w->owns_fd = true;
	return w;
}

int perfctr_perfdata_writer__add_ids(struct perfctr_perfdata_writer *w,
				     size_t idx, const uint64_t *ids, size_t nr)
{
	struct w_attr *a;
	uint64_t *n;

	if (!w || idx >= w->nr_attrs || (nr && !ids))
		return pc_err(EINVAL);
	if (!nr)
		return 0;
	a = &w->attrs[idx];
	n = realloc(a->ids, (a->nr_ids + nr) * sizeof(*n));
	if (!n)
		return pc_err(ENOMEM);
	memcpy(n + a->nr_ids, ids, nr * sizeof(*n));
	a->ids = n;
	a->nr_ids += nr;
	w->attrs_dirty |= w->frozen;
	return 0;
}

int perfctr_perfdata_writer__add_attr(struct perfctr_perfdata_writer *w,
				      const struct perf_event_attr *attr,
				      const char *name, const uint64_t *ids,
				      size_t nr_ids)
{
	struct w_attr *n;
	size_t copy;

	if (!w || !attr)
		return pc_err(EINVAL);
	n = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*n));
	if (!n)
		return pc_err(ENOMEM);
	w->attrs = n;
	n = &w->attrs[w->nr_attrs];
	memset(n, 0, sizeof(*n));
	copy = attr->size && attr->size < sizeof(*attr) ? attr->size : sizeof(*attr);
	memcpy(&n->attr, attr, copy);
	/* Every attr in the file has the same size: ours. */
	n->attr.size = sizeof(n->attr);
	if (name) {
		n->name = strdup(name);
		if (!n->name)
			return pc_err(ENOMEM);
	}
	w->nr_attrs++;
	if (perfctr_perfdata_writer__add_ids(w, w->nr_attrs - 1, ids, nr_ids)) {
		w->nr_attrs--;
		free(n->name);
		return pc_err(ENOMEM);
	}
	w->attrs_dirty |= w->frozen;
	return (int)(w->nr_attrs - 1);
}

static void header_init(struct file_header *hdr)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->magic = PERF_MAGIC2;
	hdr->size = sizeof(*hdr);
	hdr->attr_size = sizeof(struct perf_event_attr) + sizeof(struct file_section);
}

/* The id arrays, then the attrs that point at them; returns the attrs
 * section. */
static struct file_section w_put_attrs(struct perfctr_perfdata_writer *w)
{
	struct file_section attrs;
	uint64_t off = w_tell(w);

	for (size_t i = 0; i < w->nr_attrs; i++)
		w_put(w, w->attrs[i].ids, w->attrs[i].nr_ids * sizeof(uint64_t));
	attrs.offset = w_tell(w);
	attrs.size = w->nr_attrs * (sizeof(struct perf_event_attr) +
				    sizeof(struct file_section));
	for (size_t i = 0; i < w->nr_attrs; i++) {
		struct file_section s = {
			.offset = off,
			.size = w->attrs[i].nr_ids * sizeof(uint64_t),
		};

		w_put(w, &w->attrs[i].attr, sizeof(w->attrs[i].attr));
		w_put(w, &s, sizeof(s));
		off += s.size;
	}
	return attrs;
}

static bool has_tracepoints(const struct perfctr_perfdata_writer *w);
static void write_tracing_data(struct perfctr_perfdata_writer *w);

/* perf's PERF_EVENT_UPDATE__NAME: an EVENT_UPDATE record naming an id. */
#define EVENT_UPDATE_NAME	2

/*
 * The first records of the data section: what names the events and
 * decodes their payloads, for a file that never gets its features (a
 * killed writer), in the records perf writes for it in pipe mode and
 * reads in files too -- HEADER_TRACING_DATA (a 16-byte record followed by
 * the tracepoint formats, padded to 8 bytes, outside its header.size) and
 * one EVENT_UPDATE of type NAME per named event, keyed by its first id.
 * While the file is unfinished its header's data section begins with
 * them; at close it begins after them (the features say it all then, and
 * perf 6.1 cannot read tracing data twice: its reader's byte count runs
 * on from the feature section's into the record's, whose size check then
 * fails).
 * Return: the file offset of the tracing data's size field, or 0 when
 * there is none (its size is known only once it is written).
 */
static uint64_t w_put_meta(struct perfctr_perfdata_writer *w)
{
	uint64_t size_at = 0;

	if (has_tracepoints(w)) {
		struct perf_event_header h = {
			.type = PERFCTR_RECORD_HEADER_TRACING_DATA, .size = 16,
		};
		uint64_t start;

		w_put(w, &h, sizeof(h));
		size_at = w_tell(w);
		w_put_u64(w, 0);	/* u32 size, u32 padding */
		start = w_tell(w);
		write_tracing_data(w);
		w_zeros(w, (8 - (w_tell(w) - start) % 8) % 8);
		w->meta_tracing_size = w_tell(w) - start;
	}
	for (size_t i = 0; i < w->nr_attrs; i++) {
		const struct w_attr *a = &w->attrs[i];
		size_t len = a->name ? strlen(a->name) + 1 : 0;
		size_t padded = (len + 7) / 8 * 8;
		struct perf_event_header h = {
			.type = PERFCTR_RECORD_EVENT_UPDATE,
			.size = (uint16_t)(24 + padded),
		};

		/* Without an id no reader can tell whose name it is. */
		if (!len || !a->nr_ids || 24 + padded > UINT16_MAX)
			continue;
		w_put(w, &h, sizeof(h));
		w_put_u64(w, EVENT_UPDATE_NAME);
		w_put_u64(w, a->ids[0]);
		w_put(w, a->name, len);
		w_zeros(w, padded - len);
	}
	return size_at;
}

/*
 * Before the first record: the attrs, the records that name the events
 * (w_put_meta), then a valid header that points at them, with an empty
 * feature bitmap ("unfinished") and a data size that each flush brings up
 * to date.
 */
static int w_freeze(struct perfctr_perfdata_writer *w)
{
	struct file_header hdr;
	uint64_t size_at;

	if (w->frozen)
		return w->err;
	w->frozen = true;
	w->frozen_attrs = w_put_attrs(w);
	w->data_offset = w_tell(w);
	size_at = w_put_meta(w);
	w_flush(w);
	errno = 0;
	if (!w->err && size_at) {
		uint32_t size = (uint32_t)w->meta_tracing_size;

		if (pwrite(w->fd, &size, sizeof(size), (off_t)size_at) !=
		    (ssize_t)sizeof(size))
			w->err = errno ? -errno : -EIO;
	}
	w->records_offset = w->pos;
	header_init(&hdr);
	hdr.attrs = w->frozen_attrs;
	hdr.data.offset = w->data_offset;
	hdr.data.size = w->records_offset - w->data_offset;
	errno = 0;
	if (!w->err && pwrite(w->fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		w->err = errno ? -errno : -EIO;
	w->in_data = true;
	return w->err;
}

/* Records of @buf that will not reach the file. */
static void w_drop(struct perfctr_perfdata_writer *w, const unsigned char *p,
		   size_t len)
{
	size_t off = 0;

	while (off < len) {
		struct perf_event_header h;

		memcpy(&h, p + off, sizeof(h));
		w->records_dropped++;
		w->samples_dropped += h.type == PERF_RECORD_SAMPLE;
		off += h.size;
	}
}

int perfctr_perfdata_writer__write(struct perfctr_perfdata_writer *w,
				   const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t off = 0;

	if (!w || (len && !buf))
		return pc_err(EINVAL);
	/* Whole records only: a torn record would misalign every reader. */
	while (off < len) {
		struct perf_event_header h;

		if (len - off < sizeof(h))
			return pc_err(EINVAL);
		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			return pc_err(EINVAL);
		off += h.size;
	}
	if (!w->frozen)
		w_freeze(w);
	/*
	 * Into the buffer a whole number of records at a time, so that the
	 * buffer always ends on a record's end: a write that fails part-way
	 * (a full disk) then leaves the file's records countable and its
	 * data size known.
	 */
	off = 0;
	while (!w->err && off < len) {
		size_t chunk = 0;
		uint64_t recs = 0, samples = 0;

		while (off + chunk < len) {
			struct perf_event_header h;

			memcpy(&h, p + off + chunk, sizeof(h));
			if (w->buf_len + chunk + h.size > WBUF_SIZE)
				break;
			chunk += h.size;
			recs++;
			samples += h.type == PERF_RECORD_SAMPLE;
		}
		if (!chunk) {
			w_flush(w);
			continue;
		}
		memcpy(w->buf + w->buf_len, p + off, chunk);
		w->buf_len += chunk;
		w->buf_records += recs;
		w->buf_samples += samples;
		off += chunk;
	}
	if (w->err) {
		w_drop(w, p + off, len - off);
		return pc_err(-w->err);
	}
	return 0;
}

int perfctr_perfdata_writer__flush(struct perfctr_perfdata_writer *w)
{
	if (!w)
		return pc_err(EINVAL);
	if (!w->frozen)
		w_freeze(w);
	if (w->in_data)
		w_flush(w);
	return w->err ? pc_err(-w->err) : 0;
}

int perfctr_perfdata_writer__stats(const struct perfctr_perfdata_writer *w,
				   struct perfctr_perfdata_writer_stats *stats)
{
	struct perfctr_perfdata_writer_stats st = { .sz = sizeof(st) };
	size_t sz;

	if (!w || !stats || stats->sz < sizeof(size_t))
		return pc_err(EINVAL);
	sz = stats->sz < sizeof(st) ? stats->sz : sizeof(st);
	st.records_written = w->records_written;
	st.samples_written = w->samples_written;
	st.bytes_written = w->data_ok;
	st.records_dropped = w->records_dropped;
	st.samples_dropped = w->samples_dropped;
	st.error = w->err;
	memcpy((char *)stats + sizeof(size_t), (const char *)&st + sizeof(size_t),
	       sz - sizeof(size_t));
	return 0;
}

int perfctr_perfdata_writer__add_build_id(struct perfctr_perfdata_writer *w,
					  pid_t pid, uint16_t misc,
					  const uint8_t *id, size_t id_size,
					  const char *filename)
{
	struct w_build_id *n, *b;

	if (!w || !id || !id_size || id_size > BUILD_ID_MAX || !filename)
		return pc_err(EINVAL);
	n = realloc(w->build_ids, (w->nr_build_ids + 1) * sizeof(*n));
	if (!n)
		return pc_err(ENOMEM);
	w->build_ids = n;
	b = &n[w->nr_build_ids];
	memset(b, 0, sizeof(*b));
	b->pid = pid;
	b->misc = misc;
	b->size = (uint8_t)id_size;
	memcpy(b->id, id, id_size);
	b->filename = strdup(filename);
	if (!b->filename)
		return pc_err(ENOMEM);
	w->nr_build_ids++;
	return 0;
}

void perfctr_perfdata_writer__set_sample_time(struct perfctr_perfdata_writer *w,
					      uint64_t first, uint64_t last)
{
	w->has_sample_time = true;
	w->first_time = first;
	w->last_time = last;
}

uint64_t perfctr_perfdata_writer__data_size(const struct perfctr_perfdata_writer *w)
{
	return w->data_ok + (w->in_data ? w->buf_len : 0);
}

/* A whole tracefs file (they report size 0: read to EOF). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t got;

		if (n == cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 8192);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (!got)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

struct tp_name {
	char sys[128];
	char name[128];
};

struct tp_find {
	const char *root;
	uint64_t id;
	struct tp_name *out;
};

static int tp_find_cb(const char *sys, const char *name, void *ctx)
{
	struct tp_find *f = ctx;
	uint64_t id;

	if (pc_tracefs_id(f->root, sys, name, &id) == 0 && id == f->id) {
		pc_strlcpy(f->out->sys, sys, sizeof(f->out->sys));
		pc_strlcpy(f->out->name, name, sizeof(f->out->name));
		return 1;
	}
	return 0;
}

/* The sys:name of tracepoint attr @a, from its name when that is right,
 * else by a walk over tracefs. */
static int tp_lookup(const char *root, const struct w_attr *a, struct tp_name *out)
{
	struct tp_find f = { root, a->attr.config, out };
	const char *colon = a->name ? strchr(a->name, ':') : NULL;
	uint64_t id;

	if (colon && (size_t)(colon - a->name) < sizeof(out->sys)) {
		memcpy(out->sys, a->name, (size_t)(colon - a->name));
		out->sys[colon - a->name] = '\0';
		pc_strlcpy(out->name, colon + 1, sizeof(out->name));
		out->name[strcspn(out->name, ":/")] = '\0';
		if (pc_tracefs_id(root, out->sys, out->name, &id) == 0 &&
		    id == a->attr.config)
			return 0;
	}
	return pc_tracefs_walk(root, NULL, NULL, tp_find_cb, &f) == 1 ? 0 : -ENOENT;
}

static bool has_tracepoints(const struct perfctr_perfdata_writer *w)
{
	for (size_t i = 0; i < w->nr_attrs; i++)
		if (w->attrs[i].attr.type == PERF_TYPE_TRACEPOINT)
			return true;
	return false;
}

/* Where tracing data goes: the writer's file, or a buffer of the
 * reader's (the formats of a file that has none, from this machine). */
struct td_out {
	struct perfctr_perfdata_writer *w;	/* NULL: into buf */
	unsigned char *buf;
	size_t len, cap;
	bool oom;
};

static void td_put(struct td_out *o, const void *p, size_t n)
{
	if (o->w) {
		w_put(o->w, p, n);
		return;
	}
	if (o->oom)
		return;
	if (n > o->cap - o->len) {
		size_t cap = o->cap ? o->cap : 8192;
		unsigned char *nb;

		while (n > cap - o->len)
			cap *= 2;
		nb = realloc(o->buf, cap);
		if (!nb) {
			o->oom = true;
			return;
		}
		o->buf = nb;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static void td_put_u32(struct td_out *o, uint32_t v)
{
	td_put(o, &v, sizeof(v));
}

static void td_put_u64(struct td_out *o, uint64_t v)
{
	td_put(o, &v, sizeof(v));
}

/* A tracefs file, after its u64 size. */
static void td_put_file(struct td_out *o, const char *path)
{
	size_t len = 0;
	char *buf = slurp(path, &len);

	td_put_u64(o, len);
	if (buf)
		td_put(o, buf, len);
	free(buf);
}

/*
 * HEADER_TRACING_DATA, the layout perf's trace-event reader expects:
 * magic "\027\010\104tracing", version "0.6", endianness, sizeof(long),
 * page size, header_page and header_event, ftrace formats (none), the
 * event formats by subsystem (of the @nr distinct @tps under tracefs
 * @root), kallsyms and printk formats (empty), saved cmdlines (empty).
 */
static void put_tracing_data(struct td_out *o, const char *root,
			     const struct tp_name *tps, size_t nr)
{
	static const char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	char path[4600];
	unsigned char c;
	uint32_t nsys = 0;

	td_put(o, magic, sizeof(magic));
	td_put(o, "0.6", 4);
	c = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	td_put(o, &c, 1);
	c = sizeof(long);
	td_put(o, &c, 1);
	td_put_u32(o, (uint32_t)sysconf(_SC_PAGESIZE));
	td_put(o, "header_page", 12);
	snprintf(path, sizeof(path), "%s/events/header_page", root);
	td_put_file(o, path);
	td_put(o, "header_event", 13);
	snprintf(path, sizeof(path), "%s/events/header_event", root);
	td_put_file(o, path);
	td_put_u32(o, 0);		/* ftrace formats */

	/* Subsystems, each with its events. */
	for (size_t i = 0; i < nr; i++) {
		size_t j;

		for (j = 0; j < i; j++)
			if (!strcmp(tps[j].sys, tps[i].sys))
				break;
		if (j == i)
			nsys++;
	}
	td_put_u32(o, nsys);
	for (size_t i = 0; i < nr; i++) {
		uint32_t count = 0;
		size_t j;

		for (j = 0; j < i; j++)
			if (!strcmp(tps[j].sys, tps[i].sys))
				break;
		if (j < i)
			continue;
		td_put(o, tps[i].sys, strlen(tps[i].sys) + 1);
		for (j = i; j < nr; j++)
			count += !strcmp(tps[j].sys, tps[i].sys);
		td_put_u32(o, count);
		for (j = i; j < nr; j++) {
			if (strcmp(tps[j].sys, tps[i].sys))
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/%s/format",
				 root, tps[j].sys, tps[j].name);
			td_put_file(o, path);
		}
	}
	td_put_u32(o, 0);		/* kallsyms */
	td_put_u32(o, 0);		/* ftrace_printk */
	td_put_u64(o, 0);		/* saved cmdlines */
}

static void write_tracing_data(struct perfctr_perfdata_writer *w)
{
	struct td_out o = { .w = w };
	char root[4096];
	struct tp_name *tps;
	size_t nr = 0;

	if (pc_tracefs_root(w->tracefs_root, root, sizeof(root)))
		root[0] = '\0';
	tps = calloc(w->nr_attrs ? w->nr_attrs : 1, sizeof(*tps));
	if (!tps) {
		w->err = w->err ?: -ENOMEM;
		return;
	}
	for (size_t i = 0; root[0] && i < w->nr_attrs; i++) {
		struct tp_name t;
		size_t j;

		if (w->attrs[i].attr.type != PERF_TYPE_TRACEPOINT ||
		    tp_lookup(root, &w->attrs[i], &t))
			continue;
		for (j = 0; j < nr; j++)
			if (!strcmp(tps[j].sys, t.sys) && !strcmp(tps[j].name, t.name))
				break;
		if (j == nr)
			tps[nr++] = t;
	}
	put_tracing_data(&o, root, tps, nr);
	free(tps);
}

static void write_feature(struct perfctr_perfdata_writer *w, unsigned int feat)
{
	switch (feat) {
	case PERFCTR_FEAT_TRACING_DATA:
		write_tracing_data(w);
		break;
	case PERFCTR_FEAT_BUILD_ID:
		for (size_t i = 0; i < w->nr_build_ids; i++) {
			const struct w_build_id *b = &w->build_ids[i];
			size_t olen = strlen(b->filename) + 1;
			size_t flen = (olen + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
			/* header, pid, build_id[20] + size + pad (24 bytes) */
			struct perf_event_header h = {
				.type = PERFCTR_RECORD_HEADER_BUILD_ID,
				.misc = (uint16_t)(b->misc | BUILD_ID_MISC_SIZE),
				.size = (uint16_t)(8 + 4 + 24 + flen),
			};
			unsigned char idbuf[24] = { 0 };
			int32_t pid = b->pid;

			memcpy(idbuf, b->id, b->size);
			idbuf[20] = b->size;
			w_put(w, &h, sizeof(h));
			w_put(w, &pid, sizeof(pid));
			w_put(w, idbuf, sizeof(idbuf));
			w_put(w, b->filename, olen);
			w_zeros(w, flen - olen);
		}
		break;
	case PERFCTR_FEAT_HOSTNAME:
		w_put_string(w, w->hostname);
		break;
	case PERFCTR_FEAT_OSRELEASE:
		w_put_string(w, w->osrelease);
		break;
	case PERFCTR_FEAT_VERSION:
		w_put_string(w, w->version);
		break;
	case PERFCTR_FEAT_ARCH:
		w_put_string(w, w->arch);
		break;
	case PERFCTR_FEAT_NRCPUS:
		w_put_u32(w, w->nr_cpus_avail);
		w_put_u32(w, w->nr_cpus_online);
		break;
	case PERFCTR_FEAT_CPUDESC:
		w_put_string(w, w->cpudesc);
		break;
	case PERFCTR_FEAT_CPUID: {
		char *id = x86_cpuid();

		w_put_string(w, id ? id : "");
		free(id);
		break;
	}
	case PERFCTR_FEAT_TOTAL_MEM:
		w_put_u64(w, total_mem_kb());
		break;
	case PERFCTR_FEAT_CMDLINE:
		w_put_u32(w, (uint32_t)w->argc);
		for (int i = 0; i < w->argc; i++)
			w_put_string(w, w->argv[i]);
		break;
	case PERFCTR_FEAT_EVENT_DESC:
		w_put_u32(w, (uint32_t)w->nr_attrs);
		w_put_u32(w, (uint32_t)sizeof(struct perf_event_attr));
		for (size_t i = 0; i < w->nr_attrs; i++) {
			const struct w_attr *a = &w->attrs[i];

			w_put(w, &a->attr, sizeof(a->attr));
			w_put_u32(w, (uint32_t)a->nr_ids);
			w_put_string(w, a->name ? a->name : "");
			w_put(w, a->ids, a->nr_ids * sizeof(uint64_t));
		}
		break;
	case PERFCTR_FEAT_SAMPLE_TIME:
		w_put_u64(w, w->first_time);
		w_put_u64(w, w->last_time);
		break;
	}
}

/* The features, the attrs when they changed after the first record, and
 * last the header with its bitmap.  Return: 0 or -errno. */
static int w_finish(struct perfctr_perfdata_writer *w)
{
	struct file_header hdr;
	struct file_section *index = NULL;
	unsigned int feats[PERFCTR_FEAT_MAX];
	size_t nr_feats = 0, i;
	uint64_t index_off;

	header_init(&hdr);
	hdr.attrs = w->frozen_attrs;
	hdr.data.offset = w->records_offset;
	hdr.data.size = w->data_ok;

	if (!w->no_features) {
		static const unsigned int order[] = {
			PERFCTR_FEAT_TRACING_DATA, PERFCTR_FEAT_BUILD_ID, PERFCTR_FEAT_HOSTNAME,
			PERFCTR_FEAT_OSRELEASE, PERFCTR_FEAT_VERSION,
			PERFCTR_FEAT_ARCH, PERFCTR_FEAT_NRCPUS,
			PERFCTR_FEAT_CPUDESC, PERFCTR_FEAT_CPUID,
			PERFCTR_FEAT_TOTAL_MEM, PERFCTR_FEAT_CMDLINE,
			PERFCTR_FEAT_EVENT_DESC, PERFCTR_FEAT_SAMPLE_TIME,
		};
		char *cpuid = x86_cpuid();

		for (i = 0; i < ARRAY_SIZE(order); i++) {
			unsigned int f = order[i];

			if (f == PERFCTR_FEAT_TRACING_DATA && !has_tracepoints(w))
				continue;
			if (f == PERFCTR_FEAT_BUILD_ID && !w->nr_build_ids)
				continue;
			if (f == PERFCTR_FEAT_CMDLINE && !w->argc)
				continue;
			if (f == PERFCTR_FEAT_SAMPLE_TIME && !w->has_sample_time)
				continue;
			if (f == PERFCTR_FEAT_CPUID && !cpuid)
				continue;
			feats[nr_feats++] = f;
			feat_set(hdr.features, f);
		}
		free(cpuid);
	}

	/* Feature index right after the data, then the payloads. */
	index_off = w_tell(w);
	index = calloc(nr_feats ? nr_feats : 1, sizeof(*index));
	if (!index)
		return -ENOMEM;
	w_zeros(w, nr_feats * sizeof(*index));
	for (i = 0; i < nr_feats; i++) {
		index[i].offset = w_tell(w);
		write_feature(w, feats[i]);
		index[i].size = w_tell(w) - index[i].offset;
	}
	if (w->attrs_dirty)
		hdr.attrs = w_put_attrs(w);
	w_flush(w);
	errno = 0;
	if (!w->err && nr_feats &&
	    pwrite(w->fd, index, nr_feats * sizeof(*index), (off_t)index_off) !=
	    (ssize_t)(nr_feats * sizeof(*index)))
		w->err = errno ? -errno : -EIO;
	free(index);
	/* Trim anything a longer earlier file left behind, then the header:
	 * the last write turns the file finished. */
	if (!w->err && ftruncate(w->fd, (off_t)w->pos) < 0)
		w->err = -errno;
	errno = 0;
	if (!w->err && pwrite(w->fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		w->err = errno ? -errno : -EIO;
	return w->err;
}

int perfctr_perfdata_writer__close(struct perfctr_perfdata_writer *w)
{
	int first_err, ret;

	if (!w)
		return pc_err(EINVAL);
	if (!w->frozen)
		w_freeze(w);
	if (w->in_data)
		w_flush(w);
	w->in_data = false;
	first_err = w->err;
	if (first_err) {
		/* Keep the whole records that reached the file; cutting the
		 * torn rest also gives back room for the features. */
		w->err = 0;
		w->buf_len = 0;
		w->pos = w->records_offset + w->data_ok;
		if (ftruncate(w->fd, (off_t)w->pos) < 0)
			w->err = -errno;
	}
	ret = w->err ? w->err : w_finish(w);
	if (ret && w->data_offset) {
		/* Not even the features fit: header, attrs and records (ours
		 * too: they name the events), a file without features. */
		struct file_header hdr;

		header_init(&hdr);
		hdr.attrs = w->frozen_attrs;
		hdr.data.offset = w->data_offset;
		hdr.data.size = w->records_offset - w->data_offset + w->data_ok;
		if (ftruncate(w->fd, (off_t)(w->records_offset + w->data_ok)) == 0 &&
		    pwrite(w->fd, &hdr, sizeof(hdr), 0) < 0)
			ret = ret ? ret : -errno;
	}
	if (first_err)
		ret = first_err;
	if (w->owns_fd && close(w->fd) < 0 && !ret)
		ret = -errno;
	writer_free(w);
	return ret ? pc_err(-ret) : 0;
}

/* ================================================================ reader */

struct r_attr {
	struct perf_event_attr attr;
	const uint64_t *ids;	/* into the file (copied if misaligned) */
	uint64_t *ids_copy;
	size_t nr_ids;
	char *name;
};

/*
 * A file opened by path is mapped for its metadata (header, attrs, ids,
 * feature sections: read in place, a few pages), but its data section --
 * nearly all of the file -- is never touched through the map: it is read
 * with pread() in windows of win_cap bytes.  Pages read that way are
 * page cache, not the process's: a report of a file of any size runs in
 * the memory of one window.
 */
#define WINDOW_DEFAULT	(1024 * 1024)
#define WINDOW_MIN	(64 * 1024)	/* more than the largest record */

struct perfctr_perfdata {
	const unsigned char *base;
	size_t size;
	bool mapped;
	int fd;			/* -1: the data section is read from base */
	unsigned char *win;	/* [win_start, win_start + win_len) of data */
	size_t win_cap, win_len;
	uint64_t win_start;
	struct file_header hdr;
	struct file_section feat[256];	/* by feature bit, size 0 = absent */
	struct r_attr *attrs;
	size_t nr_attrs;
	struct perfctr_decoder *decoder;
	struct perfctr_build_id *build_ids;
	size_t nr_build_ids;
	char **cmdline;
	int cmdline_argc;
	bool cmdline_parsed;
	char *strings[256];
	uint64_t *bounce;	/* for misaligned records */
	bool recovered;
	uint64_t rec_records, rec_flushed, rec_torn;
	int rec_kind;		/* PERFCTR_RECOVERED_* */
	uint32_t rec_local_names;	/* tracepoints named from this machine */
	/* Their formats, from this machine's tracefs (local_tracing). */
	struct td_out local_tracing;
	/* The payload of a HEADER_TRACING_DATA record at the start of the
	 * data section (see w_put_meta), size 0 = none. */
	struct file_section meta_tracing;
	/* The tracing data parsed, once it was asked for. */
	struct perfctr_tp_formats *tp_formats;
};

static bool in_file(const struct perfctr_perfdata *pd, uint64_t off, uint64_t len)
{
	return off <= pd->size && len <= pd->size - off;
}

/* A perf string at [*off, end): u32 len then len bytes, NUL inside. */
static const char *r_string(const struct perfctr_perfdata *pd, uint64_t *off,
			    uint64_t end)
{
	uint32_t len;
	const char *s;

	if (*off > end || end - *off < 4)
		return NULL;
	memcpy(&len, pd->base + *off, 4);
	if (len > end - *off - 4)
		return NULL;
	s = (const char *)pd->base + *off + 4;
	if (!len || !memchr(s, '\0', len))
		return NULL;
	*off += 4 + (uint64_t)len;
	return s;
}

static int parse_event_desc(struct perfctr_perfdata *pd)
{
	const struct file_section *s = &pd->feat[PERFCTR_FEAT_EVENT_DESC];
	uint64_t off = s->offset, end = s->offset + s->size;
	uint32_t nr, attr_size;

	if (!s->size)
		return 0;
	if (end - off < 8)
		return -EINVAL;
	memcpy(&nr, pd->base + off, 4);
	memcpy(&attr_size, pd->base + off + 4, 4);
	off += 8;
	if (attr_size < PERF_ATTR_SIZE_VER0)
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nr_ids;
		const char *name;

		if (end - off < (uint64_t)attr_size + 4)
			return -EINVAL;
		off += attr_size;
		memcpy(&nr_ids, pd->base + off, 4);
		off += 4;
		name = r_string(pd, &off, end);
		if (!name)
			return -EINVAL;
		if ((uint64_t)nr_ids > (end - off) / 8)
			return -EINVAL;
		off += (uint64_t)nr_ids * 8;
		if (i < pd->nr_attrs && !pd->attrs[i].name && *name) {
			pd->attrs[i].name = strdup(name);
			if (!pd->attrs[i].name)
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Bytes that follow record @h (at @p, h->size bytes readable) outside its
 * header.size: HEADER_TRACING_DATA is followed by its payload, whose
 * size (padded to 8) is the u32 after the header.  0 for other records.
 */
static uint64_t record_payload(const struct perf_event_header *h,
			       const unsigned char *p)
{
	uint32_t size;

	if (h->type != PERFCTR_RECORD_HEADER_TRACING_DATA || h->size < 12)
		return 0;
	memcpy(&size, p + 8, sizeof(size));
	return size;
}

static int set_name(struct r_attr *a, const char *name, size_t len)
{
	if (a->name || !len)
		return 0;
	a->name = strndup(name, len);
	return a->name ? 0 : -ENOMEM;
}

/*
 * The records at the start of the data section that describe the events
 * (w_put_meta; perf's pipe-mode files converted by perf inject have them
 * too): the tracing data of HEADER_TRACING_DATA, the names of EVENT_UPDATE
 * records, for the events that EVENT_DESC did not name.  The walk ends at
 * the first record of the kernel's.
 */
static int parse_meta(struct perfctr_perfdata *pd)
{
	const struct file_header *h = &pd->hdr;
	uint64_t off = h->data.offset, end = h->data.offset + h->data.size;

	/* A finished file of ours has them between the attrs and its data
	 * section; they matter when it was cut short (no features). */
	if (pd->rec_kind == PERFCTR_RECOVERED_TRUNCATED &&
	    h->attrs.offset + h->attrs.size < h->data.offset)
		off = h->attrs.offset + h->attrs.size;

	while (end - off >= sizeof(struct perf_event_header)) {
		const unsigned char *p = pd->base + off;
		struct perf_event_header rh;
		uint64_t payload, type, id;

		memcpy(&rh, p, sizeof(rh));
		if (rh.size < sizeof(rh) || rh.size > end - off ||
		    rh.type < PERFCTR_RECORD_HEADER_ATTR)
			break;
		payload = record_payload(&rh, p);
		if (payload > end - off - rh.size)
			break;
		if (rh.type == PERFCTR_RECORD_HEADER_TRACING_DATA && payload &&
		    !pd->meta_tracing.size) {
			pd->meta_tracing.offset = off + rh.size;
			pd->meta_tracing.size = payload;
		}
		if (rh.type == PERFCTR_RECORD_EVENT_UPDATE && rh.size > 24) {
			memcpy(&type, p + 8, 8);
			memcpy(&id, p + 16, 8);
			for (size_t i = 0; type == EVENT_UPDATE_NAME &&
			     i < pd->nr_attrs; i++) {
				const struct r_attr *a = &pd->attrs[i];

				for (size_t k = 0; k < a->nr_ids; k++) {
					if (a->ids[k] != id)
						continue;
					if (set_name(&pd->attrs[i], (const char *)p + 24,
						     strnlen((const char *)p + 24,
							     rh.size - 24u)))
						return -ENOMEM;
					break;
				}
			}
		}
		off += rh.size + payload;
	}
	return 0;
}

/*
 * Tracepoints without a name are named as perf names them: "sys:name" of
 * the format whose ID is their config, from the file's tracing data (the
 * feature section, or the record at the start of the data section).
 */
static int name_tracepoints(struct perfctr_perfdata *pd)
{
	const struct perfctr_tp_formats *f;
	bool unnamed = false;

	for (size_t i = 0; i < pd->nr_attrs; i++)
		unnamed |= pd->attrs[i].attr.type == PERF_TYPE_TRACEPOINT &&
			   !pd->attrs[i].name;
	if (!unnamed)
		return 0;
	f = perfctr_perfdata__tp_formats(pd);
	if (!f)
		return errno == ENOMEM ? -ENOMEM : 0;
	for (size_t i = 0; i < pd->nr_attrs; i++) {
		struct r_attr *a = &pd->attrs[i];
		const struct perfctr_tp_format *fmt;
		char full[512];

		if (a->attr.type != PERF_TYPE_TRACEPOINT || a->name)
			continue;
		fmt = perfctr_tp_formats__find(f, a->attr.config);
		if (!fmt)
			continue;
		snprintf(full, sizeof(full), "%s:%s",
			 perfctr_tp_format__system(fmt),
			 perfctr_tp_format__name(fmt));
		if (set_name(a, full, strlen(full)))
			return -ENOMEM;
	}
	return 0;
}

static int parse_build_ids(struct perfctr_perfdata *pd)
{
	const struct file_section *s = &pd->feat[PERFCTR_FEAT_BUILD_ID];
	uint64_t off = s->offset, end = s->offset + s->size;

	while (s->size && end - off >= 8 + 4 + 24) {
		struct perf_event_header h;
		struct perfctr_build_id *n, *b;
		const char *fname;
		size_t flen;
		int32_t pid;

		memcpy(&h, pd->base + off, sizeof(h));
		if (h.size < 8 + 4 + 24 || h.size > end - off)
			return -EINVAL;
		fname = (const char *)pd->base + off + 36;
		flen = h.size - 36u;
		if (!memchr(fname, '\0', flen))
			return -EINVAL;
		n = realloc(pd->build_ids, (pd->nr_build_ids + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		pd->build_ids = n;
		b = &n[pd->nr_build_ids];
		memset(b, 0, sizeof(*b));
		memcpy(&pid, pd->base + off + 8, 4);
		b->pid = pid;
		b->misc = h.misc & (uint16_t)~BUILD_ID_MISC_SIZE;
		memcpy(b->id, pd->base + off + 12, BUILD_ID_MAX);
		b->size = BUILD_ID_MAX;
		if (h.misc & BUILD_ID_MISC_SIZE) {
			b->size = pd->base[off + 12 + 20];
			if (b->size > BUILD_ID_MAX)
				return -EINVAL;
		}
		b->filename = strdup(fname);
		if (!b->filename)
			return -ENOMEM;
		pd->nr_build_ids++;
		off += h.size;
	}
	return 0;
}

void perfctr_perfdata__close(struct perfctr_perfdata *pd)
{
	if (!pd)
		return;
	for (size_t i = 0; i < pd->nr_attrs; i++) {
		free(pd->attrs[i].ids_copy);
		free(pd->attrs[i].name);
	}
	free(pd->attrs);
	perfctr_decoder__delete(pd->decoder);
	for (size_t i = 0; i < pd->nr_build_ids; i++)
		free((char *)pd->build_ids[i].filename);
	free(pd->build_ids);
	for (int i = 0; i < pd->cmdline_argc; i++)
		free(pd->cmdline[i]);
	free(pd->cmdline);
	for (size_t i = 0; i < ARRAY_SIZE(pd->strings); i++)
		free(pd->strings[i]);
	free(pd->bounce);
	free(pd->win);
	free(pd->local_tracing.buf);
	perfctr_tp_formats__delete(pd->tp_formats);
	if (pd->fd >= 0)
		close(pd->fd);
	if (pd->mapped)
		munmap((void *)pd->base, pd->size);
	free(pd);
}

/* A record header that a writer could have written whole. */
static bool plausible_record(const struct perf_event_header *h, uint64_t left)
{
	return h->size >= sizeof(*h) && h->size % 8 == 0 && h->size <= left &&
	       h->type != 0 && h->type < 128;
}

/*
 * An unfinished file (see the top of the file): no feature bits.  (A
 * writer killed right after a flush leaves a data size that is right:
 * only the empty bitmap tells.)  The records are walked from the start of
 * the data section up to the end of the file or the first metadata
 * section after the data (ids and attrs written at close by an older
 * writer), and stop at the first one that is torn or makes no sense; that
 * is the data section, or the header's when that reaches further.
 */
/*
 * Whether the feature index that a finished file has right after its data
 * section is there: whole in the file, its first entry pointing past it.
 * perf record writes its header at the start with the feature bits it
 * means to write but a data size of 0, and the features only at the end:
 * killed, its file has records where the index should be (their headers
 * read as offsets beyond any file).
 */
static bool index_whole(const struct perfctr_perfdata *pd)
{
	const struct file_header *h = &pd->hdr;
	uint64_t index_off = h->data.offset + h->data.size, nr = 0;
	struct file_section s;

	for (unsigned int f = 1; f < 256; f++)
		nr += feat_test(h->features, f);
	if (!nr)
		return true;
	if (!in_file(pd, index_off, nr * sizeof(s)))
		return false;
	memcpy(&s, pd->base + index_off, sizeof(s));
	return in_file(pd, s.offset, s.size) &&
	       s.offset >= index_off + nr * sizeof(s);
}

static int recover(struct perfctr_perfdata *pd)
{
	struct file_header *h = &pd->hdr;
	uint64_t limit = pd->size, off, end;

	if (h->features[0] | h->features[1] | h->features[2] | h->features[3]) {
		/* Feature bits: a finished file, unless its data section
		 * ends past the end of the file (cut short: "truncated") or
		 * it is perf record's killed file (data size 0, records
		 * where the feature index belongs). */
		if (in_file(pd, h->data.offset, h->data.size)) {
			if (h->data.size || index_whole(pd))
				return 0;
			pd->rec_kind = PERFCTR_RECOVERED_NO_SIZE;
		} else {
			pd->rec_kind = PERFCTR_RECOVERED_TRUNCATED;
		}
	}
	if (h->attrs.offset >= h->data.offset && h->attrs.offset < limit)
		limit = h->attrs.offset;
	for (size_t i = 0; i < pd->nr_attrs; i++) {
		uint64_t o = (uint64_t)((const unsigned char *)pd->attrs[i].ids - pd->base);

		if (pd->attrs[i].ids_copy) {
			struct file_section ids;

			memcpy(&ids, pd->base + h->attrs.offset + i * h->attr_size +
			       h->attr_size - sizeof(ids), sizeof(ids));
			o = ids.offset;
		}
		if (pd->attrs[i].nr_ids && o >= h->data.offset && o < limit)
			limit = o;
	}
	if (h->data.offset > limit)
		return -EINVAL;
	off = h->data.offset;
	end = limit;
	while (end - off >= sizeof(struct perf_event_header)) {
		struct perf_event_header rh;

		uint64_t payload;

		memcpy(&rh, pd->base + off, sizeof(rh));
		if (!plausible_record(&rh, end - off))
			break;
		payload = record_payload(&rh, pd->base + off);
		if (payload > end - off - rh.size || payload % 8)
			break;
		off += rh.size + payload;
		pd->rec_records++;
	}
	pd->recovered = true;
	pd->rec_torn = end - off;
	pd->rec_flushed = h->data.size;
	/* What the header vouches for stays: those records were written
	 * before it, so a bad one among them is damage, which the reader
	 * reports when it gets there. */
	if (in_file(pd, h->data.offset, h->data.size) &&
	    h->data.offset + h->data.size > off) {
		pd->rec_torn = 0;
		return 0;
	}
	h->data.size = off - h->data.offset;
	return 0;
}

int perfctr_perfdata__recovered(const struct perfctr_perfdata *pd,
				struct perfctr_perfdata_recovery *rec)
{
	struct perfctr_perfdata_recovery r = { .sz = sizeof(r) };

	if (!pd || (rec && rec->sz < sizeof(size_t)))
		return pc_err(EINVAL);
	if (rec) {
		size_t sz = rec->sz < sizeof(r) ? rec->sz : sizeof(r);

		if (pd->recovered) {
			r.records = pd->rec_records;
			r.bytes = pd->hdr.data.size;
			r.flushed_bytes = pd->rec_flushed;
			r.torn_bytes = pd->rec_torn;
			r.kind = pd->rec_kind;
			r.local_names = pd->rec_local_names;
		}
		memcpy((char *)rec + sizeof(size_t), (const char *)&r + sizeof(size_t),
		       sz - sizeof(size_t));
	}
	return pd->recovered;
}

/* Tracepoint events of a recovered file that nothing in it names. */
struct tp_local {
	struct perfctr_perfdata *pd;
	const char *root;
	size_t unnamed;
	struct tp_name *tps;	/* found, for their formats */
	size_t nr_tps;
	int err;
};

static int tp_local_cb(const char *sys, const char *name, void *ctx)
{
	struct tp_local *l = ctx;
	char full[300];
	uint64_t id;
	bool found = false;

	if (pc_tracefs_id(l->root, sys, name, &id))
		return 0;
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	for (size_t i = 0; i < l->pd->nr_attrs; i++) {
		struct r_attr *a = &l->pd->attrs[i];

		if (a->attr.type != PERF_TYPE_TRACEPOINT || a->name ||
		    a->attr.config != id)
			continue;
		if (set_name(a, full, strlen(full))) {
			l->err = -ENOMEM;
			return 1;
		}
		l->pd->rec_local_names++;
		l->unnamed--;
		found = true;
	}
	if (found) {
		pc_strlcpy(l->tps[l->nr_tps].sys, sys, sizeof(l->tps->sys));
		pc_strlcpy(l->tps[l->nr_tps].name, name, sizeof(l->tps->name));
		l->nr_tps++;
	}
	return l->unnamed ? 0 : 1;
}

/*
 * A killed perf record leaves neither names nor tracepoint formats (they
 * are features, written at the end): the tracepoint ids are looked up in
 * this machine's tracefs, which names them right when the file was
 * recorded on this machine since its boot (dynamic events get new ids);
 * the caller warns (perfctr_perfdata__recovered()'s local_names).
 */
static int local_tracepoints(struct perfctr_perfdata *pd)
{
	struct tp_local l = { .pd = pd };
	char root[4096];

	for (size_t i = 0; i < pd->nr_attrs; i++)
		l.unnamed += pd->attrs[i].attr.type == PERF_TYPE_TRACEPOINT &&
			     !pd->attrs[i].name;
	if (!l.unnamed || pc_tracefs_root(NULL, root, sizeof(root)))
		return 0;
	l.root = root;
	l.tps = calloc(l.unnamed, sizeof(*l.tps));
	if (!l.tps)
		return -ENOMEM;
	pc_tracefs_walk(root, NULL, NULL, tp_local_cb, &l);
	/* Their formats, unless the file has some. */
	if (!l.err && l.nr_tps &&
	    perfctr_perfdata__feature(pd, PERFCTR_FEAT_TRACING_DATA, NULL, NULL)) {
		put_tracing_data(&pd->local_tracing, root, l.tps, l.nr_tps);
		if (pd->local_tracing.oom)
			l.err = -ENOMEM;
	}
	free(l.tps);
	return l.err;
}

static int reader_init(struct perfctr_perfdata *pd)
{
	struct file_header *h = &pd->hdr;
	uint64_t attr_file_size, nr, index_off;
	size_t nr_feats = 0;
	int ret;

	if (pd->size < 16)
		return -EINVAL;
	memcpy(&h->magic, pd->base, 8);
	if (h->magic == PERF_MAGIC2_SW)
		return -EOPNOTSUPP;
	if (h->magic != PERF_MAGIC2)
		return -EINVAL;
	memcpy(&h->size, pd->base + 8, 8);
	if (h->size == 16)
		return -EOPNOTSUPP;	/* pipe mode: records carry the attrs */
	if (h->size < sizeof(*h) || pd->size < sizeof(*h))
		return -EINVAL;
	memcpy(h, pd->base, sizeof(*h));
	if (h->attr_size <= sizeof(struct file_section) + PERF_ATTR_SIZE_VER0 - 1 ||
	    h->attr_size > 4096)
		return -EINVAL;
	if (!in_file(pd, h->attrs.offset, h->attrs.size) ||
	    !in_file(pd, h->data.offset, 0) || h->attrs.size % h->attr_size)
		return -EINVAL;
	/* A data size past the end: the file is unfinished or truncated,
	 * and recover() finds the records that are there. */
	attr_file_size = h->attr_size - sizeof(struct file_section);
	nr = h->attrs.size / h->attr_size;
	pd->decoder = perfctr_decoder__new();
	if (!pd->decoder)
		return -ENOMEM;
	pd->attrs = calloc(nr ? nr : 1, sizeof(*pd->attrs));
	if (!pd->attrs)
		return -ENOMEM;
	for (uint64_t i = 0; i < nr; i++) {
		const unsigned char *e = pd->base + h->attrs.offset + i * h->attr_size;
		struct r_attr *a = &pd->attrs[i];
		struct file_section ids;
		size_t copy = attr_file_size < sizeof(a->attr) ?
			      attr_file_size : sizeof(a->attr);

		memcpy(&a->attr, e, copy);
		a->attr.size = (uint32_t)copy;
		memcpy(&ids, e + attr_file_size, sizeof(ids));
		if (!in_file(pd, ids.offset, ids.size) || ids.size % 8)
			return -EINVAL;
		a->nr_ids = ids.size / 8;
		if (((uintptr_t)(pd->base + ids.offset)) % 8) {
			a->ids_copy = malloc(ids.size ? ids.size : 1);
			if (!a->ids_copy)
				return -ENOMEM;
			memcpy(a->ids_copy, pd->base + ids.offset, ids.size);
			a->ids = a->ids_copy;
		} else {
			a->ids = (const void *)(pd->base + ids.offset);
		}
		pd->nr_attrs++;
		ret = perfctr_decoder__add_attr(pd->decoder, &a->attr, a->ids,
						a->nr_ids);
		if (ret < 0)
			return ret;
	}

	ret = recover(pd);
	if (ret)
		return ret;

	/* The feature index follows the data section. */
	for (unsigned int f = 1; f < 256; f++)
		if (feat_test(h->features, f))
			nr_feats++;
	index_off = h->data.offset + h->data.size;
	if (nr_feats && in_file(pd, index_off, nr_feats * sizeof(struct file_section))) {
		size_t k = 0;

		for (unsigned int f = 1; f < 256; f++) {
			struct file_section s;

			if (!feat_test(h->features, f))
				continue;
			memcpy(&s, pd->base + index_off + k++ * sizeof(s), sizeof(s));
			/* perf record killed while it wrote them: the whole
			 * ones count, after the index. */
			if (pd->recovered &&
			    s.offset < index_off + nr_feats * sizeof(s))
				continue;
			if (in_file(pd, s.offset, s.size))
				pd->feat[f] = s;
		}
	}
	/* Malformed optional sections are ignored, as perf does. */
	if (parse_event_desc(pd) == -ENOMEM || parse_build_ids(pd) == -ENOMEM ||
	    parse_meta(pd) || name_tracepoints(pd) ||
	    (pd->recovered && local_tracepoints(pd)))
		return -ENOMEM;
	return 0;
}

struct perfctr_perfdata *
perfctr_perfdata__open_mem(const void *buf, size_t size,
			   const struct perfctr_perfdata_opts *opts)
{
	struct perfctr_perfdata *pd;
	int ret;

	if (!buf || !pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->base = buf;
	pd->size = size;
	pd->fd = -1;
	ret = reader_init(pd);
	if (ret) {
		perfctr_perfdata__close(pd);
		errno = -ret;
		return NULL;
	}
	return pd;
}

struct perfctr_perfdata *
perfctr_perfdata__open(const char *path, const struct perfctr_perfdata_opts *opts)
{
	struct perfctr_perfdata *pd;
	struct stat st;
	void *map;
	int fd, e;

	if (!path || !pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if (st.st_size < (off_t)sizeof(struct file_header)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	pd = perfctr_perfdata__open_mem(map, (size_t)st.st_size, opts);
	if (!pd) {
		e = errno;
		munmap(map, (size_t)st.st_size);
		close(fd);
		errno = e;
		return NULL;
	}
	pd->mapped = true;
	pd->fd = fd;
	pd->win_cap = PC_OPTS_GET(opts, window_size, 0);
	if (!pd->win_cap)
		pd->win_cap = WINDOW_DEFAULT;
	if (pd->win_cap < WINDOW_MIN)
		pd->win_cap = WINDOW_MIN;
	/* No record is longer than the data section. */
	if (pd->win_cap > pd->hdr.data.size)
		pd->win_cap = pd->hdr.data.size ? (size_t)pd->hdr.data.size : 1;
	pd->win = malloc(pd->win_cap);
	if (!pd->win) {
		perfctr_perfdata__close(pd);
		errno = ENOMEM;
		return NULL;
	}
	/* One pass front to back is the common use: read ahead for it. */
	posix_fadvise(fd, (off_t)pd->hdr.data.offset, (off_t)pd->hdr.data.size,
		      POSIX_FADV_SEQUENTIAL);
	return pd;
}

size_t perfctr_perfdata__nr_attrs(const struct perfctr_perfdata *pd)
{
	return pd->nr_attrs;
}

const struct perf_event_attr *
perfctr_perfdata__attr(const struct perfctr_perfdata *pd, size_t idx)
{
	return idx < pd->nr_attrs ? &pd->attrs[idx].attr : NULL;
}

const char *perfctr_perfdata__attr_name(const struct perfctr_perfdata *pd,
					size_t idx)
{
	return idx < pd->nr_attrs ? pd->attrs[idx].name : NULL;
}

size_t perfctr_perfdata__attr_ids(const struct perfctr_perfdata *pd, size_t idx,
				  const uint64_t **ids)
{
	if (idx >= pd->nr_attrs) {
		if (ids)
			*ids = NULL;
		return 0;
	}
	if (ids)
		*ids = pd->attrs[idx].ids;
	return pd->attrs[idx].nr_ids;
}

const struct perfctr_decoder *
perfctr_perfdata__decoder(const struct perfctr_perfdata *pd)
{
	return pd->decoder;
}

bool perfctr_perfdata__has_feature(const struct perfctr_perfdata *pd,
				   unsigned int feat)
{
	return feat_test(pd->hdr.features, feat);
}

int perfctr_perfdata__feature(const struct perfctr_perfdata *pd,
			      unsigned int feat, const void **data, size_t *size)
{
	if (feat == PERFCTR_FEAT_TRACING_DATA && pd->meta_tracing.size &&
	    !(feat_test(pd->hdr.features, feat) && pd->feat[feat].size)) {
		if (data)
			*data = pd->base + pd->meta_tracing.offset;
		if (size)
			*size = pd->meta_tracing.size;
		return 0;
	}
	if (feat == PERFCTR_FEAT_TRACING_DATA && pd->local_tracing.len &&
	    !pd->meta_tracing.size && !pd->feat[feat].size) {
		if (data)
			*data = pd->local_tracing.buf;
		if (size)
			*size = pd->local_tracing.len;
		return 0;
	}
	if (!feat_test(pd->hdr.features, feat))
		return pc_err(ENOENT);
	if (!pd->feat[feat].size && !pd->feat[feat].offset)
		return pc_err(EINVAL);
	if (data)
		*data = pd->base + pd->feat[feat].offset;
	if (size)
		*size = pd->feat[feat].size;
	return 0;
}

const struct perfctr_tp_formats *
perfctr_perfdata__tp_formats(struct perfctr_perfdata *pd)
{
	const void *data;
	size_t size;
	int err;

	/* A failure is not kept: an unfinished file's formats may come
	 * from this machine's tracefs later in its open. */
	if (pd->tp_formats)
		return pd->tp_formats;
	err = perfctr_perfdata__feature(pd, PERFCTR_FEAT_TRACING_DATA, &data,
					&size);
	if (err < 0) {
		errno = -err;
		return NULL;
	}
	pd->tp_formats = perfctr_tp_formats__new(data, size);
	return pd->tp_formats;
}

const char *perfctr_perfdata__string(const struct perfctr_perfdata *pd,
				     unsigned int feat)
{
	struct perfctr_perfdata *mpd = (struct perfctr_perfdata *)pd;
	const struct file_section *s;
	uint64_t off;
	const char *str;

	switch (feat) {
	case PERFCTR_FEAT_HOSTNAME: case PERFCTR_FEAT_OSRELEASE:
	case PERFCTR_FEAT_VERSION: case PERFCTR_FEAT_ARCH:
	case PERFCTR_FEAT_CPUDESC: case PERFCTR_FEAT_CPUID:
		break;
	default:
		return NULL;
	}
	if (pd->strings[feat])
		return pd->strings[feat];
	s = &pd->feat[feat];
	if (!s->size)
		return NULL;
	off = s->offset;
	str = r_string(pd, &off, s->offset + s->size);
	if (!str)
		return NULL;
	/* Cached as a copy: the reader's strings outlive nothing else. */
	mpd->strings[feat] = strdup(str);
	return mpd->strings[feat];
}

int perfctr_perfdata__nr_cpus(const struct perfctr_perfdata *pd,
			      uint32_t *avail, uint32_t *online)
{
	const struct file_section *s = &pd->feat[PERFCTR_FEAT_NRCPUS];
	uint32_t v[2];

	if (s->size < 8)
		return pc_err(ENOENT);
	memcpy(v, pd->base + s->offset, 8);
	if (avail)
		*avail = v[0];
	if (online)
		*online = v[1];
	return 0;
}

int perfctr_perfdata__cmdline(const struct perfctr_perfdata *pd,
			      const char *const **argv)
{
	struct perfctr_perfdata *mpd = (struct perfctr_perfdata *)pd;
	const struct file_section *s = &pd->feat[PERFCTR_FEAT_CMDLINE];

	if (!pd->cmdline_parsed) {
		uint64_t off = s->offset, end = s->offset + s->size;
		uint32_t nr;

		mpd->cmdline_parsed = true;
		if (s->size < 4)
			return pc_err(ENOENT);
		memcpy(&nr, pd->base + off, 4);
		off += 4;
		if (nr > (end - off) / 4)
			return pc_err(EINVAL);
		mpd->cmdline = calloc((size_t)nr + 1, sizeof(char *));
		if (!mpd->cmdline)
			return pc_err(ENOMEM);
		for (uint32_t i = 0; i < nr; i++) {
			const char *a = r_string(pd, &off, end);

			if (!a)
				break;
			mpd->cmdline[mpd->cmdline_argc] = strdup(a);
			if (!mpd->cmdline[mpd->cmdline_argc])
				break;
			mpd->cmdline_argc++;
		}
	}
	if (!pd->cmdline)
		return pc_err(ENOENT);
	if (argv)
		*argv = (const char *const *)pd->cmdline;
	return pd->cmdline_argc;
}

size_t perfctr_perfdata__nr_build_ids(const struct perfctr_perfdata *pd)
{
	return pd->nr_build_ids;
}

int perfctr_perfdata__build_id(const struct perfctr_perfdata *pd, size_t idx,
			       struct perfctr_build_id *out)
{
	if (idx >= pd->nr_build_ids || !out)
		return pc_err(EINVAL);
	*out = pd->build_ids[idx];
	return 0;
}

int perfctr_perfdata__sample_time(const struct perfctr_perfdata *pd,
				  uint64_t *first, uint64_t *last)
{
	const struct file_section *s = &pd->feat[PERFCTR_FEAT_SAMPLE_TIME];

	if (s->size < 16)
		return pc_err(ENOENT);
	if (first)
		memcpy(first, pd->base + s->offset, 8);
	if (last)
		memcpy(last, pd->base + s->offset + 8, 8);
	return 0;
}

uint64_t perfctr_perfdata__data_size(const struct perfctr_perfdata *pd)
{
	return pd->hdr.data.size;
}

/* Read the window that starts at data offset @cursor. */
static int window_fill(struct perfctr_perfdata *pd, uint64_t cursor)
{
	uint64_t left = pd->hdr.data.size - cursor;
	size_t want = left < pd->win_cap ? (size_t)left : pd->win_cap;
	size_t got = 0;

	pd->win_len = 0;
	while (got < want) {
		ssize_t n = pread(pd->fd, pd->win + got, want - got,
				  (off_t)(pd->hdr.data.offset + cursor + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* the file shrank under us */
		got += (size_t)n;
	}
	pd->win_start = cursor;
	pd->win_len = got;
	return 0;
}

/* @len bytes of the data section at @cursor, from the window. */
static const unsigned char *window_at(struct perfctr_perfdata *pd,
				      uint64_t cursor, size_t len, int *err)
{
	if (cursor < pd->win_start || cursor - pd->win_start > pd->win_len ||
	    len > pd->win_len - (cursor - pd->win_start)) {
		*err = window_fill(pd, cursor);
		if (*err)
			return NULL;
		if (len > pd->win_len) {
			*err = -EINVAL;
			return NULL;
		}
	}
	return pd->win + (cursor - pd->win_start);
}

int perfctr_perfdata__next(struct perfctr_perfdata *pd, uint64_t *cursor,
			   const struct perf_event_header **hdr)
{
	struct perf_event_header h;
	const unsigned char *p;
	uint64_t left;
	int err = 0;

	if (!cursor || !hdr)
		return pc_err(EINVAL);
	if (*cursor >= pd->hdr.data.size)
		return 0;
	left = pd->hdr.data.size - *cursor;
	if (left < sizeof(h))
		return pc_err(EINVAL);
	if (pd->fd >= 0) {
		p = window_at(pd, *cursor, sizeof(h), &err);
		if (!p)
			return pc_err(-err);
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) || h.size > left)
			return pc_err(EINVAL);
		p = window_at(pd, *cursor, h.size, &err);
		if (!p)
			return pc_err(-err);
	} else {
		p = pd->base + pd->hdr.data.offset + *cursor;
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) || h.size > left)
			return pc_err(EINVAL);
	}
	/* A payload outside the record is metadata, read at open. */
	if (record_payload(&h, p) > left - h.size)
		return pc_err(EINVAL);
	*cursor += record_payload(&h, p);
	if ((uintptr_t)p % 8) {
		if (!pd->bounce) {
			pd->bounce = malloc(65536);
			if (!pd->bounce)
				return pc_err(ENOMEM);
		}
		memcpy(pd->bounce, p, h.size);
		p = (const unsigned char *)pd->bounce;
	}
	*hdr = (const void *)p;
	*cursor += h.size;
	return 1;
}
