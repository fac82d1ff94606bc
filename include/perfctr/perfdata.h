/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — perf.data files: a writer and a reader of perf's own file
 * format (magic "PERFILE2"), so that perf report / perf script read what we
 * write and we read what perf record writes.
 *
 * Layout written: the 104-byte header, each attr's id array and the attrs
 * section, the data section (records exactly as the rings delivered them,
 * plus synthesised ones), then the feature sections (build-id, hostname,
 * osrelease, version, arch, nrcpus, cpudesc, cmdline, event_desc, ...).
 *
 * Crash safety: the header and the attrs are written before the first
 * record, with no feature bits set (the file is "unfinished"), and every
 * flush of the records rewrites the header's data size.  Close adds the
 * features and sets their bits.  A writer killed at any moment (SIGKILL,
 * an OOM kill) therefore leaves a file the reader opens: for an unfinished
 * file it takes the records from the file itself, up to the first torn or
 * invalid one, and says so (perfctr_perfdata__recovered()).  The records
 * still in the writer's buffer are lost with the process; call
 * perfctr_perfdata_writer__flush() to bound that (a recorder does after
 * each pass over its rings).  perf 6.1 reads an unfinished file up to the
 * data size of the last flush, with a warning when that size is 0.  The
 * events keep their names in an unfinished file, and tracepoints their
 * formats: the data section opens with HEADER_TRACING_DATA and an
 * EVENT_UPDATE naming each event, until close moves it past them
 * (perfctr_perfdata(3)).
 *
 * A write error (ENOSPC, EIO) stops the writing: later records are
 * counted as dropped, and close leaves a finished file of the whole
 * records that reached the disk (with the features when they fit).
 *
 * For perf's tools: tracepoint events get HEADER_TRACING_DATA (their
 * formats from tracefs) written automatically; record them with
 * PERF_SAMPLE_RAW, as perf record does -- perf report 6.1 crashes on a
 * tracepoint sample without raw data.  Give events PERF_SAMPLE_IDENTIFIER
 * when there are several, and sample_id_all (the sampler does both).
 *
 * Thread safety: writers and readers are not synchronised; one thread
 * uses one at a time.  Nothing here is async-signal-safe.
 */
#ifndef PERFCTR_PERFDATA_H
#define PERFCTR_PERFDATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>
#include <perfctr/record.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Feature bits of the header's bitmap (perf's HEADER_* numbering). */
enum perfctr_perfdata_feature {
	PERFCTR_FEAT_TRACING_DATA = 1,
	PERFCTR_FEAT_BUILD_ID = 2,
	PERFCTR_FEAT_HOSTNAME = 3,
	PERFCTR_FEAT_OSRELEASE = 4,
	PERFCTR_FEAT_VERSION = 5,
	PERFCTR_FEAT_ARCH = 6,
	PERFCTR_FEAT_NRCPUS = 7,
	PERFCTR_FEAT_CPUDESC = 8,
	PERFCTR_FEAT_CPUID = 9,
	PERFCTR_FEAT_TOTAL_MEM = 10,
	PERFCTR_FEAT_CMDLINE = 11,
	PERFCTR_FEAT_EVENT_DESC = 12,
	PERFCTR_FEAT_CPU_TOPOLOGY = 13,
	PERFCTR_FEAT_NUMA_TOPOLOGY = 14,
	PERFCTR_FEAT_BRANCH_STACK = 15,
	PERFCTR_FEAT_PMU_MAPPINGS = 16,
	PERFCTR_FEAT_GROUP_DESC = 17,
	PERFCTR_FEAT_AUXTRACE = 18,
	PERFCTR_FEAT_STAT = 19,
	PERFCTR_FEAT_CACHE = 20,
	PERFCTR_FEAT_SAMPLE_TIME = 21,
	PERFCTR_FEAT_MEM_TOPOLOGY = 22,
	PERFCTR_FEAT_CLOCKID = 23,
	PERFCTR_FEAT_DIR_FORMAT = 24,
	PERFCTR_FEAT_BPF_PROG_INFO = 25,
	PERFCTR_FEAT_BPF_BTF = 26,
	PERFCTR_FEAT_COMPRESSED = 27,
	PERFCTR_FEAT_CPU_PMU_CAPS = 28,
	PERFCTR_FEAT_CLOCK_DATA = 29,
	PERFCTR_FEAT_HYBRID_TOPOLOGY = 30,
	PERFCTR_FEAT_PMU_CAPS = 31,
	PERFCTR_FEAT_MAX = 256,
};

/* Record types perf itself adds to files (beyond the kernel's). */
enum perfctr_perfdata_record {
	PERFCTR_RECORD_HEADER_ATTR = 64,
	PERFCTR_RECORD_HEADER_EVENT_TYPE = 65,
	PERFCTR_RECORD_HEADER_TRACING_DATA = 66,
	PERFCTR_RECORD_HEADER_BUILD_ID = 67,
	PERFCTR_RECORD_FINISHED_ROUND = 68,
	PERFCTR_RECORD_ID_INDEX = 69,
	PERFCTR_RECORD_AUXTRACE_INFO = 70,
	PERFCTR_RECORD_AUXTRACE = 71,
	PERFCTR_RECORD_AUXTRACE_ERROR = 72,
	PERFCTR_RECORD_THREAD_MAP = 73,
	PERFCTR_RECORD_CPU_MAP = 74,
	PERFCTR_RECORD_STAT_CONFIG = 75,
	PERFCTR_RECORD_STAT = 76,
	PERFCTR_RECORD_STAT_ROUND = 77,
	PERFCTR_RECORD_EVENT_UPDATE = 78,
	PERFCTR_RECORD_TIME_CONV = 79,
	PERFCTR_RECORD_HEADER_FEATURE = 80,
	PERFCTR_RECORD_COMPRESSED = 81,
	PERFCTR_RECORD_FINISHED_INIT = 82,
};

/* ---- writer ---- */

struct perfctr_perfdata_writer;

struct perfctr_perfdata_writer_opts {
	size_t sz;
	/* Feature strings; NULL = taken from this machine (uname, /proc). */
	const char *hostname;
	const char *osrelease;
	const char *arch;
	const char *cpudesc;
	/* The tool version written to HEADER_VERSION; NULL = "perfctr <ver>". */
	const char *version;
	/* The recording command line (HEADER_CMDLINE); NULL = none written. */
	int argc;
	char *const *argv;
	/* CPUs; 0 = this machine's. */
	uint32_t nr_cpus_avail;
	uint32_t nr_cpus_online;
	/* Write no feature sections at all (a bare file; readers take it
	 * for an unfinished one and recover its records). */
	bool no_features;
	/* Where tracepoint formats are read for HEADER_TRACING_DATA (perf
	 * needs it to open a file with tracepoint events); NULL = the
	 * mounted tracefs. */
	const char *tracefs_root;
	size_t :0;
};

/**
 * perfctr_perfdata_writer__open() - create (truncate) @path, mode 0600
 * (samples can reveal what a program does; perf uses 0600 too).  A
 * symbolic link at @path is not followed (ELOOP), and an existing file
 * that is not a regular one (a FIFO, a device) is refused (EINVAL).
 * Return: the writer, NULL + errno.
 */
PERFCTR_API struct perfctr_perfdata_writer *
perfctr_perfdata_writer__open(const char *path,
			      const struct perfctr_perfdata_writer_opts *opts);

/**
 * perfctr_perfdata_writer__open_fd() - write into @fd (a regular file,
 * positioned anywhere: the file starts at offset 0 and is truncated
 * first).  The writer does not close @fd.
 * Return: the writer, NULL + errno.
 */
PERFCTR_API struct perfctr_perfdata_writer *
perfctr_perfdata_writer__open_fd(int fd,
				 const struct perfctr_perfdata_writer_opts *opts);

/**
 * perfctr_perfdata_writer__add_attr() - declare an event: its attr (as
 * opened: sample_type, read_format, sample_id_all ...), name (for
 * event_desc; may be NULL) and the ids of its fds (PERF_EVENT_IOC_ID).
 * Attrs may be added at any time before close.
 * Return: its index, or -errno.
 */
PERFCTR_API int
perfctr_perfdata_writer__add_attr(struct perfctr_perfdata_writer *w,
				  const struct perf_event_attr *attr,
				  const char *name, const uint64_t *ids,
				  size_t nr_ids);

/** perfctr_perfdata_writer__add_ids() - more ids for attr @idx. */
PERFCTR_API int
perfctr_perfdata_writer__add_ids(struct perfctr_perfdata_writer *w,
				 size_t idx, const uint64_t *ids, size_t nr_ids);

/**
 * perfctr_perfdata_writer__write() - append whole records (@len bytes,
 * each record's header.size summing to @len) to the data section.  They
 * are buffered; a full buffer is written out (and the header's data size
 * with it).  The first failed write (-ENOSPC, -EIO...) is sticky: from
 * then on records are counted as dropped and nothing more is written.
 * Return: 0 or -errno (-EINVAL when @buf does not hold whole records,
 * nothing taken).
 */
PERFCTR_API int
perfctr_perfdata_writer__write(struct perfctr_perfdata_writer *w,
			       const void *buf, size_t len);

/**
 * perfctr_perfdata_writer__add_build_id() - a build-id for the
 * HEADER_BUILD_ID section.
 * @pid:  -1 for the kernel and user-space DSOs as perf writes them.
 * @misc: PERF_RECORD_MISC_KERNEL or PERF_RECORD_MISC_USER.
 * @id:   up to 20 bytes.
 * Return: 0 or -errno.
 */
PERFCTR_API int
perfctr_perfdata_writer__add_build_id(struct perfctr_perfdata_writer *w,
				      pid_t pid, uint16_t misc,
				      const uint8_t *id, size_t id_size,
				      const char *filename);

/**
 * perfctr_perfdata_writer__set_sample_time() - first and last sample time
 * (HEADER_SAMPLE_TIME), written when set.
 */
PERFCTR_API void
perfctr_perfdata_writer__set_sample_time(struct perfctr_perfdata_writer *w,
					 uint64_t first, uint64_t last);

/**
 * perfctr_perfdata_writer__flush() - write the buffered records out and
 * the header's data size, so that a crash from now on loses none of them.
 * The first call also writes the header and the attrs (as the first
 * __write() does).  Return: 0 or the sticky -errno.
 */
PERFCTR_API int
perfctr_perfdata_writer__flush(struct perfctr_perfdata_writer *w);

struct perfctr_perfdata_writer_stats {
	size_t sz;
	uint64_t records_written;	/* whole records in the file */
	uint64_t samples_written;	/* of which PERF_RECORD_SAMPLE */
	uint64_t bytes_written;		/* their bytes */
	uint64_t records_dropped;	/* taken by __write() but lost to an error */
	uint64_t samples_dropped;	/* of which PERF_RECORD_SAMPLE */
	int error;			/* the sticky -errno, 0 when none */
};

/**
 * perfctr_perfdata_writer__stats() - what reached the file and what was
 * dropped.  Records still in the buffer are in neither count: call
 * __flush() first for final figures.  Set @stats->sz (an older, smaller
 * struct gets the fields it has).  Return: 0 or -EINVAL.
 */
PERFCTR_API int
perfctr_perfdata_writer__stats(const struct perfctr_perfdata_writer *w,
			       struct perfctr_perfdata_writer_stats *stats);

/** perfctr_perfdata_writer__data_size() - bytes of records so far (in the
 * file or the buffer; dropped ones not counted). */
PERFCTR_API uint64_t
perfctr_perfdata_writer__data_size(const struct perfctr_perfdata_writer *w);

/**
 * perfctr_perfdata_writer__close() - write the buffered records, the
 * features and the header, and close the file (not a caller's fd).  After
 * a write error, the torn tail is cut and the file finished with the
 * records that reached it (without features when they do not fit).  The
 * writer is freed whatever the result.  Return: 0 or the first -errno met
 * while writing.
 */
PERFCTR_API int
perfctr_perfdata_writer__close(struct perfctr_perfdata_writer *w);

/* ---- reader ---- */

struct perfctr_perfdata;

struct perfctr_perfdata_opts {
	size_t sz;
	/* perfctr_perfdata__open(): bytes of the data section read at a
	 * time (0: 1 MiB; at least 64 KiB, so that any record fits). */
	size_t window_size;
	size_t :0;
};

/**
 * perfctr_perfdata__open() - open and check a perf.data file.  The
 * metadata (header, attrs, feature sections) is mapped read-only; the
 * records of the data section are read in windows of opts->window_size
 * bytes, so memory use does not grow with the file.  The file stays open
 * until perfctr_perfdata__close().
 * Return: NULL + errno: EINVAL (not perf.data, or a
 * malformed header), EOPNOTSUPP (pipe-mode or other-endian file), ENOENT...
 */
PERFCTR_API struct perfctr_perfdata *
perfctr_perfdata__open(const char *path, const struct perfctr_perfdata_opts *opts);

/**
 * perfctr_perfdata__open_mem() - the same over @size bytes at @buf, which
 * must outlive the reader (not copied).
 */
PERFCTR_API struct perfctr_perfdata *
perfctr_perfdata__open_mem(const void *buf, size_t size,
			   const struct perfctr_perfdata_opts *opts);

/** perfctr_perfdata__close() - free (NULL is a no-op). */
PERFCTR_API void perfctr_perfdata__close(struct perfctr_perfdata *pd);

/** perfctr_perfdata__nr_attrs() - events in the file. */
PERFCTR_API size_t perfctr_perfdata__nr_attrs(const struct perfctr_perfdata *pd);

/** perfctr_perfdata__attr() - attr @idx (copied into a full-size struct,
 * zero-extended when the file's attr_size is smaller), NULL if out of range. */
PERFCTR_API const struct perf_event_attr *
perfctr_perfdata__attr(const struct perfctr_perfdata *pd, size_t idx);

/** perfctr_perfdata__attr_name() - the name from event_desc, or else from
 * an EVENT_UPDATE record at the start of the data section, or for a
 * tracepoint "sys:name" from the file's tracing data; NULL when none. */
PERFCTR_API const char *
perfctr_perfdata__attr_name(const struct perfctr_perfdata *pd, size_t idx);

/** perfctr_perfdata__attr_ids() - the ids of attr @idx; returns how many. */
PERFCTR_API size_t
perfctr_perfdata__attr_ids(const struct perfctr_perfdata *pd, size_t idx,
			   const uint64_t **ids);

/** perfctr_perfdata__decoder() - a decoder holding the file's attrs and
 * ids, owned by the reader. */
PERFCTR_API const struct perfctr_decoder *
perfctr_perfdata__decoder(const struct perfctr_perfdata *pd);

/** perfctr_perfdata__has_feature() - true when bit @feat is set. */
PERFCTR_API bool perfctr_perfdata__has_feature(const struct perfctr_perfdata *pd,
					       unsigned int feat);

/**
 * perfctr_perfdata__feature() - the raw bytes of feature section @feat;
 * for TRACING_DATA without a section, the payload of a HEADER_TRACING_DATA
 * record at the start of the data section (an unfinished file's).
 * Return: 0, -ENOENT when absent, -EINVAL when its section is out of
 * the file.
 */
PERFCTR_API int perfctr_perfdata__feature(const struct perfctr_perfdata *pd,
					  unsigned int feat, const void **data,
					  size_t *size);

struct perfctr_tp_formats;

/**
 * perfctr_perfdata__tp_formats() - the tracepoint formats of the file:
 * its tracing data (perfctr_perfdata__feature()'s TRACING_DATA) parsed
 * on the first call into events and fields (perfctr_tpformat(3)), owned
 * by the reader until perfctr_perfdata__close().
 * Return: the formats, or NULL + errno: ENOENT (the file has no tracing
 * data), EINVAL (malformed), EOPNOTSUPP (another byte order), ENOMEM.
 */
PERFCTR_API const struct perfctr_tp_formats *
perfctr_perfdata__tp_formats(struct perfctr_perfdata *pd);

/**
 * perfctr_perfdata__string() - a string feature (HOSTNAME, OSRELEASE,
 * VERSION, ARCH, CPUDESC, CPUID), NULL when absent or malformed.
 */
PERFCTR_API const char *perfctr_perfdata__string(const struct perfctr_perfdata *pd,
						 unsigned int feat);

/** perfctr_perfdata__nr_cpus() - HEADER_NRCPUS; -ENOENT when absent. */
PERFCTR_API int perfctr_perfdata__nr_cpus(const struct perfctr_perfdata *pd,
					  uint32_t *avail, uint32_t *online);

/** perfctr_perfdata__cmdline() - HEADER_CMDLINE as argc / argv (owned by
 * the reader, NULL-terminated).  Return: argc, or -ENOENT. */
PERFCTR_API int perfctr_perfdata__cmdline(const struct perfctr_perfdata *pd,
					  const char *const **argv);

struct perfctr_build_id {
	pid_t pid;
	uint16_t misc;
	uint8_t size;		/* bytes of id used */
	uint8_t id[20];
	const char *filename;	/* owned by the reader */
};

/** perfctr_perfdata__nr_build_ids() - entries of HEADER_BUILD_ID. */
PERFCTR_API size_t perfctr_perfdata__nr_build_ids(const struct perfctr_perfdata *pd);

/** perfctr_perfdata__build_id() - entry @idx.  Return: 0 or -EINVAL. */
PERFCTR_API int perfctr_perfdata__build_id(const struct perfctr_perfdata *pd,
					   size_t idx,
					   struct perfctr_build_id *out);

/** perfctr_perfdata__sample_time() - HEADER_SAMPLE_TIME; -ENOENT if absent. */
PERFCTR_API int perfctr_perfdata__sample_time(const struct perfctr_perfdata *pd,
					      uint64_t *first, uint64_t *last);

/* What kind of file the records were recovered from. */
enum perfctr_recovery_kind {
	/* No feature bits: perfctr's writer killed before close (or its
	 * opts said no_features). */
	PERFCTR_RECOVERED_NO_FEATURES = 0,
	/* Feature bits but a data size of 0 and no feature index after the
	 * data: perf record killed before it finished the file. */
	PERFCTR_RECOVERED_NO_SIZE = 1,
	/* A finished file whose data section runs past the end of the
	 * file: cut short (a full disk, an interrupted copy). */
	PERFCTR_RECOVERED_TRUNCATED = 2,
};

struct perfctr_perfdata_recovery {
	size_t sz;
	uint64_t records;	/* whole records recovered */
	uint64_t bytes;		/* their bytes: the data section as read */
	uint64_t flushed_bytes;	/* of which the header's data size vouched for */
	uint64_t torn_bytes;	/* bytes after the last whole record, ignored */
	int kind;		/* enum perfctr_recovery_kind */
	/* Tracepoint events that the file does not name (perf's killed
	 * files have neither names nor formats), named with their formats
	 * from this machine's tracefs by their ids. */
	uint32_t local_names;
};

/**
 * perfctr_perfdata__recovered() - whether the file's records had to be
 * recovered: the file is unfinished (its writer was killed before it
 * finished the file: perfctr's, or perf record's) or truncated (see enum
 * perfctr_recovery_kind).  The reader then took the records from the file,
 * up to the first torn or invalid one (a size that is 0, not a multiple
 * of 8 or past the end; a type of 0 or above 127), and @rec (when not
 * NULL; set its sz) says how much.  Event names come from the file when it
 * has them (perfctr's writer puts them at the start of the data section);
 * tracepoint events it does not name are looked up by id in this
 * machine's tracefs, their names and formats taken from there, and
 * counted in @rec->local_names.
 * Return: 1 (recovered), 0 (a finished file), -EINVAL (bad arguments).
 */
PERFCTR_API int
perfctr_perfdata__recovered(const struct perfctr_perfdata *pd,
			    struct perfctr_perfdata_recovery *rec);

/** perfctr_perfdata__data_size() - bytes in the data section (recovered
 * ones included). */
PERFCTR_API uint64_t perfctr_perfdata__data_size(const struct perfctr_perfdata *pd);

/**
 * perfctr_perfdata__next() - iterate over the records of the data
 * section.  @cursor starts at 0 and is advanced by the reader; any value
 * it had after an earlier call may be passed again to read that record
 * once more (reading front to back is the fast way).  The record is
 * 8-byte aligned (copied when the file's is not) and stays valid until
 * the next call on @pd.
 * Return: 1 with *@hdr set, 0 at the end, -EINVAL on a malformed record
 * (size 0 or past the section), -EIO or another -errno when the file
 * cannot be read (it shrank since it was opened...).
 */
PERFCTR_API int perfctr_perfdata__next(struct perfctr_perfdata *pd,
				       uint64_t *cursor,
				       const struct perf_event_header **hdr);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_PERFDATA_H */
