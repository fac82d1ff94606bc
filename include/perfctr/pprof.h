/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — profiles in pprof's format (profile.proto, gzip'd), the one
 * that go tool pprof, Pyroscope and Parca read.
 *
 * A pprof object collects samples — each a stack of resolved frames
 * (struct perfctr_frame, as the sample reader and the profile take them)
 * and one value per sample type — and encodes them.  Identical stacks with
 * identical labels are merged (their values summed); frames become
 * locations, functions and mappings, each once.
 *
 * Addresses: a location's address is the frame's DSO-relative address
 * (perfctr_frame.addr: the ELF virtual address for ELF files, the address
 * itself for the kernel), so one mapping per DSO serves every process of
 * a system-wide profile.  Frames are already symbolised: mappings say
 * has_functions, and viewers do not symbolise them again.
 *
 * perfctr_pprof__add_reader() turns a whole perf.data file into a
 * profile: this is what `perfex report --pprof` does.
 *
 * The encoder uses protobuf-c; without it (perfctr_pprof_available()
 * false) perfctr_pprof__new() fails with ENOTSUP.  Without zlib the
 * profile is written uncompressed (pprof readers accept both).
 *
 * Thread safety: a pprof object is not synchronised; use it from one
 * thread at a time.  Distinct objects are independent.
 */
#ifndef PERFCTR_PPROF_H
#define PERFCTR_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>
#include <perfctr/profile.h>
#include <perfctr/reader.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_pprof;

struct perfctr_pprof_opts {
	size_t sz;
	/* When the profile was taken (ns since the epoch) and for how
	 * long; 0 when unknown. */
	int64_t time_nanos;
	int64_t duration_nanos;
	/* The sampling period: what it counts ("cpu", "nanoseconds") and
	 * how many; NULL/0 when none applies. */
	const char *period_type;
	const char *period_unit;
	int64_t period;
	/* A note shown by viewers (go tool pprof -comments); NULL: none. */
	const char *comment;
	/* Label samples with neither comm, pid nor tid (smaller profiles,
	 * one stack per call path across all threads). */
	bool no_thread_labels;
	/* perfctr_pprof__add_reader() adds a sample type "wall"
	 * (nanoseconds) after the events', the default: the time of every
	 * sample of cpu-clock, task-clock and off-CPU time (its period),
	 * so that one view shows where wall-clock time went. */
	bool wall;
	size_t :0;
};

/**
 * perfctr_pprof__new() - an empty profile with no sample types yet.
 * @opts: NULL for the defaults.
 * Return: the object, or NULL with errno: EINVAL (bad @opts), ENOMEM,
 * ENOTSUP (libperfctr was built without protobuf-c).
 */
PERFCTR_API struct perfctr_pprof *
perfctr_pprof__new(const struct perfctr_pprof_opts *opts);

/** perfctr_pprof__delete() - free everything (NULL is a no-op). */
PERFCTR_API void perfctr_pprof__delete(struct perfctr_pprof *pp);

/**
 * perfctr_pprof__add_sample_type() - one more value of every sample:
 * what it measures (@type: "samples", "cpu", an event name) and in which
 * unit (@unit: "count", "nanoseconds"...).  All sample types come before
 * the first sample.
 * Return: the value's index in perfctr_pprof_sample.values, or -EINVAL
 * (NULL argument), -EBUSY (samples were added already), -ENOMEM.
 */
PERFCTR_API int perfctr_pprof__add_sample_type(struct perfctr_pprof *pp,
					       const char *type,
					       const char *unit);

/**
 * perfctr_pprof__set_default_sample_type() - the sample type a viewer
 * shows first (without it, pprof shows the last one).
 * Return: 0, -ERANGE (no sample type @idx), -EINVAL.
 */
PERFCTR_API int perfctr_pprof__set_default_sample_type(struct perfctr_pprof *pp,
						       size_t idx);

/**
 * perfctr_pprof__set_build_id() - the build-id of DSO @dso (as frames
 * name it), @size bytes, written with its mapping as lower-case hex.
 * Return: 0, -EINVAL (NULL argument, @size 0 or above 64), -ENOMEM.
 */
PERFCTR_API int perfctr_pprof__set_build_id(struct perfctr_pprof *pp,
					    const char *dso,
					    const uint8_t *build_id,
					    size_t size);

struct perfctr_pprof_sample {
	size_t sz;
	/* One value per sample type, in their order; values beyond
	 * nr_values are 0. */
	const int64_t *values;
	size_t nr_values;
	/* frames[0] is where the sample hit, then its callers outwards. */
	const struct perfctr_frame *frames;
	size_t nr_frames;
	/* Labels: the thread's comm (NULL: none), pid and tid (< 0: none),
	 * and the event's name (NULL: none). */
	const char *comm;
	pid_t pid;
	pid_t tid;
	const char *event;
	size_t :0;
};

/**
 * perfctr_pprof__add() - account one sample (strings are copied).
 * Samples with the same frames and labels are summed; a sum beyond the
 * int64 range stays at INT64_MAX (or INT64_MIN).
 * Return: 0, -EINVAL (NULL argument, no frame, no sample type, more
 * values than sample types), -ENOMEM.
 */
PERFCTR_API int perfctr_pprof__add(struct perfctr_pprof *pp,
				   const struct perfctr_pprof_sample *sample);

/**
 * perfctr_pprof__add_reader() - every remaining sample of @rd.
 *
 * When @pp has no sample types yet, they are made from the file: first
 * "samples" (count: one per sample, any event), then one per event of the
 * file, named as the file names it, with the samples' periods (unit
 * "nanoseconds" for cpu-clock and task-clock, "count" otherwise; the
 * off-CPU event PERFCTR_OFFCPU_EVENT is "off_cpu" in nanoseconds; a sample
 * without a period weighs 1, as perfex report counts it); the default is
 * the first event that had samples.  Each sample is labelled with its
 * event.  Otherwise (types made by the caller), each sample adds 1 to
 * value 0 and its period to value 1 + its event index, when there are
 * such values.  Build-ids come from the DSOs' files.
 * @rd must have been opened with opts.callchain for call stacks.
 * Return: the number of samples added, or -errno: those of
 * perfctr_reader__next() and perfctr_pprof__add().
 */
PERFCTR_API int64_t perfctr_pprof__add_reader(struct perfctr_pprof *pp,
					      struct perfctr_reader *rd);

/** perfctr_pprof__nr_samples() - distinct samples so far (after merging). */
PERFCTR_API size_t perfctr_pprof__nr_samples(const struct perfctr_pprof *pp);

/**
 * perfctr_pprof__encode() - the profile, gzip'd profile.proto, in a buffer
 * of malloc(3) that the caller frees.  The object stays usable (more
 * samples, another encode).
 * Return: 0 with *@buf and *@size set, -EINVAL, -ENOMEM, -EIO (the
 * compressor failed).
 */
PERFCTR_API int perfctr_pprof__encode(struct perfctr_pprof *pp, void **buf,
				      size_t *size);

/**
 * perfctr_pprof__write() - perfctr_pprof__encode() and write it all to @fd.
 * Return: 0, or the errors of perfctr_pprof__encode() and write(2).
 */
PERFCTR_API int perfctr_pprof__write(struct perfctr_pprof *pp, int fd);

/** perfctr_pprof_available() - false when built without protobuf-c. */
PERFCTR_API bool perfctr_pprof_available(void);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_PPROF_H */
