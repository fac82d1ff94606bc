/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — a perf.data file read sample by sample, as a tool wants it:
 * each sample with its event, its thread's comm and its frames resolved
 * to symbols and DSOs.  perfex report and perfex script are built on it.
 *
 * The reader models the recorded processes from the file's side-band
 * records (MMAP/MMAP2, COMM, FORK), so that a sample is resolved with the
 * maps its process had and named with the comm its thread had when the
 * sample was taken.  Records are taken in time order (equal times in file
 * order) although the file holds them ring by ring: the file is read
 * twice, keeping only the side-band records and the few samples that come
 * late (about one recorder wake-up's worth), never the whole file.
 *
 * Thread safety: a reader is not synchronised; use it from one thread at
 * a time.  Different readers are independent.
 */
#ifndef PERFCTR_READER_H
#define PERFCTR_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>
#include <perfctr/perfdata.h>
#include <perfctr/profile.h>
#include <perfctr/record.h>
#include <perfctr/symbols.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Frames resolved per sample at most; deeper callchains are cut. */
#define PERFCTR_READER_MAX_FRAMES 128

struct perfctr_reader_opts {
	size_t sz;
	/* Kernel symbols; NULL: /proc/kallsyms. */
	const char *kallsyms;
	/* Resolve the whole callchain (when the file has one), not only
	 * the sampled address.  Samples that carry the user registers and
	 * stack (DWARF call graphs) get their user frames unwound with the
	 * CFI of the mapped files (libdw), after the kernel's frames of their
	 * callchain, as perf merges them. */
	bool callchain;
	/* Name DSOs only: no ELF file (symbol table, CFI) or kallsyms is
	 * read, so no DWARF unwinding either. */
	bool dso_only;
	/* C++ names as the binaries spell them (mangled). */
	bool no_demangle;
	/* Prefix of every DSO path opened (a copy of the recorded machine's
	 * files, as perf's --symfs); NULL: none. */
	const char *root;
	/* A symbols object of the caller's to resolve with (NULL: a new one
	 * of the reader's own): the symbol tables it has read, of files not
	 * changed since (same inode, size and modification time) and of the
	 * kernel, serve this reader too, so that a program reading file
	 * after file of one machine (a profiler serving profile after
	 * profile) reads each library once.  The reader first makes it
	 * forget the processes it modelled (each file describes its own);
	 * the object's own kallsyms, root and demangling apply, not
	 * kallsyms, root and no_demangle above.  It stays the caller's,
	 * used by one reader at a time, and must outlive the reader. */
	struct perfctr_symbols *symbols;
	/* Hand over the side-band records too (COMM, FORK, EXIT, MMAP,
	 * MMAP2, LOST, LOST_SAMPLES), in time order among the samples,
	 * each after it took effect in the model: see
	 * perfctr_reader_sample.record. */
	bool side_band;
	size_t :0;
};

struct perfctr_reader_sample {
	size_t sz;
	/* The decoded record: pid, tid, time, cpu, period, callchain...
	 * as the event's sample_type has them. */
	const struct perfctr_sample *sample;
	/* The event: its index among perfctr_reader__nr_events() and its
	 * name (the file's, or one made from the attr). */
	size_t event_idx;
	const char *event;
	/* The thread's comm when the sample was taken; NULL when the file
	 * never named it (tid 0 is "swapper" unless named). */
	const char *comm;
	pid_t pid;
	pid_t tid;
	/* The sample was taken in the kernel (its cpumode). */
	bool kernel;
	/* frames[0] is where the sample hit, then its callers outwards
	 * (with opts.callchain and a callchain or a user stack copy in the
	 * file); at least one, however the chain was recorded.  A caller's
	 * frame is resolved at its return address minus one (the call), and
	 * its addr is the DSO-relative return address.  Ready for
	 * perfctr_profile__add().  ips[i] is frame i's address as recorded
	 * or unwound. */
	const struct perfctr_frame *frames;
	const uint64_t *ips;
	size_t nr_frames;
	/* With opts.side_band, a side-band record instead of a sample:
	 * sample, frames and ips are NULL; pid and tid are the record's
	 * sample_id's (-1 without one), comm that tid's after the record
	 * took effect, event_idx and event the event the sample_id names
	 * (0 without an id). */
	const struct perfctr_record *record;
	size_t :0;
};

struct perfctr_reader;

/**
 * perfctr_reader__open() - open perf.data file @path and read it once
 * through (the side-band records, the lost counts, how late samples come).
 * @opts: NULL for the defaults (only the sampled address resolved).
 * Return: the reader, or NULL with errno: EINVAL (not a perf.data file, or
 * a damaged header; also for bad @opts), EOPNOTSUPP (pipe-mode or
 * other-endian file), ENODATA (no events in the file), EBADMSG (a record
 * of the data section makes no sense), ENOMEM, or the errno of open(2)
 * and read(2).
 */
PERFCTR_API struct perfctr_reader *
perfctr_reader__open(const char *path, const struct perfctr_reader_opts *opts);

/** perfctr_reader__close() - close the file, free everything (NULL: no-op). */
PERFCTR_API void perfctr_reader__close(struct perfctr_reader *reader);

/**
 * perfctr_reader__next() - the next sample in time order.
 * @out: filled (its sz set by the caller); what it points to stays valid
 * until the next call or perfctr_reader__close().
 * Undecodable samples are skipped and counted (bad_samples).
 * Return: 1 with *@out filled, 0 after the last sample, or -errno:
 * -EBADMSG (a damaged record), -ENOMEM, -EINVAL (bad arguments), or the
 * errno of read(2).  After an error every call returns it again.
 */
PERFCTR_API int perfctr_reader__next(struct perfctr_reader *reader,
				     struct perfctr_reader_sample *out);

/** perfctr_reader__nr_events() - the events (attrs) of the file. */
PERFCTR_API size_t perfctr_reader__nr_events(const struct perfctr_reader *reader);

/** perfctr_reader__event_name() - event @idx's name; NULL out of range. */
PERFCTR_API const char *
perfctr_reader__event_name(const struct perfctr_reader *reader, size_t idx);

/** perfctr_reader__event_attr() - event @idx's attr; NULL out of range. */
PERFCTR_API const struct perf_event_attr *
perfctr_reader__event_attr(const struct perfctr_reader *reader, size_t idx);

/*
 * Why the user part of a DWARF call chain (perf record --call-graph dwarf,
 * perfex record --call-graph dwarf) ended before the outermost frame:
 * the chain is handed over as far as it got.
 */
enum perfctr_unwind_stop {
	/* A caller's frame lies beyond the stack copied into the sample:
	 * record with a larger SIZE (dwarf,SIZE). */
	PERFCTR_UNWIND_STACK,
	/* A return address in no file mapping the recording saw (JIT code,
	 * a file gone or changed since). */
	PERFCTR_UNWIND_NO_MAP,
	/* Code whose file has no CFI (.eh_frame, .debug_frame) for it. */
	PERFCTR_UNWIND_NO_CFI,
	/* PERFCTR_READER_MAX_FRAMES frames. */
	PERFCTR_UNWIND_DEPTH,
	/* Not unwound at all: a library built without libdw, a 32-bit task,
	 * or an architecture it cannot unwind (x86-64 and arm64 it can). */
	PERFCTR_UNWIND_UNSUPPORTED,
	PERFCTR_UNWIND_NR_STOPS
};

/**
 * perfctr_unwind_stop_str() - a reason of enum perfctr_unwind_stop in
 * words ("stack copy too small", ...); NULL out of range.  Thread-safe.
 */
PERFCTR_API const char *perfctr_unwind_stop_str(int stop);

struct perfctr_reader_stats {
	size_t sz;
	uint64_t records;	/* records handed over so far */
	uint64_t samples;	/* samples handed over so far */
	uint64_t bad_samples;	/* undecodable samples skipped so far */
	uint64_t lost;		/* PERF_RECORD_LOST: the whole file */
	uint64_t lost_samples;	/* PERF_RECORD_LOST_SAMPLES: the whole file */
	/* Samples whose user frames were unwound from their stack copy
	 * (with opts.callchain), and of those the chains that ended early,
	 * by enum perfctr_unwind_stop. */
	uint64_t unwound;
	uint64_t truncated[PERFCTR_UNWIND_NR_STOPS];
	size_t :0;
};

/**
 * perfctr_reader__stats() - counts of the file (@idx == SIZE_MAX) or of
 * event @idx (then records, bad_samples, unwound and truncated are 0).  The lost counts are
 * known from the open on; the others grow with perfctr_reader__next().
 * Return: 0, -EINVAL (bad arguments, no event @idx).
 */
PERFCTR_API int perfctr_reader__stats(const struct perfctr_reader *reader,
				      size_t idx,
				      struct perfctr_reader_stats *stats);

/**
 * perfctr_reader__perfdata() - the file, for its header and feature
 * sections (hostname, cmdline...).  Do not iterate its records: the
 * reader does.  Owned by the reader.
 */
PERFCTR_API struct perfctr_perfdata *
perfctr_reader__perfdata(struct perfctr_reader *reader);

/**
 * perfctr_reader__symbols() - the model of the recorded processes as it
 * stands at the sample last handed over: to resolve other addresses of
 * that sample (e.g. with their symbol offsets).  Owned by the reader.
 */
PERFCTR_API struct perfctr_symbols *
perfctr_reader__symbols(struct perfctr_reader *reader);

/* A thread as the file's side-band records (COMM, FORK) describe it. */
struct perfctr_reader_thread {
	size_t sz;
	pid_t pid;	/* its process; -1 when no record said */
	/* The parent process and thread, from the FORK record that made
	 * it; -1 when the file has none (it was there before the
	 * recording, or the recording did not follow forks). */
	pid_t ppid;
	pid_t ptid;
	/* Its comm; NULL when the file never named it. */
	const char *comm;
	size_t :0;
};

/**
 * perfctr_reader__thread() - what the file says of thread @tid, as far as
 * the reader has come: at the sample last handed over, its state then;
 * after perfctr_reader__next() returned 0, its last state in the file (its
 * last comm).  Strings stay valid until the next call of
 * perfctr_reader__next() or perfctr_reader__close().
 * @out: filled (its sz set by the caller).
 * Return: 0, -ENOENT (no COMM or FORK record named @tid so far),
 * -EINVAL (bad arguments).
 */
PERFCTR_API int perfctr_reader__thread(struct perfctr_reader *reader, pid_t tid,
				       struct perfctr_reader_thread *out);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_READER_H */
