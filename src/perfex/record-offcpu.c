// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex record --off-cpu: the time the recorded tasks spend blocked,
 * summed per stack by the library's BPF program (perfctr_offcpu, offcpu.h)
 * and written at the end as perf's `offcpu-time` event (its layout:
 * offcpu.h), so that perf report and perf script read it as they read
 * perf record --off-cpu's.
 *
 * A sum's sample is timed at the end of the recording (perf times them
 * past its end); an interval above --off-cpu-thresh at the moment the task
 * came back, in the recording's clock (CLOCK_MONOTONIC unless -k says
 * otherwise: the program's clock, converted when -k names another).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <perfctr/offcpu.h>
#include <perfctr/perfdata.h>
#include <perfctr/sampler.h>
#include <perfctr/symbols.h>

#include "perfex.h"
#include "record.h"


static int64_t clock_delta(int clockid)
{
	struct timespec a, m;

	if (clockid < 0 || clockid == CLOCK_MONOTONIC)
		return 0;
	clock_gettime((clockid_t)clockid, &a);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)a.tv_sec - m.tv_sec) * 1000000000 +
	       ((int64_t)a.tv_nsec - m.tv_nsec);
}

/* Load the program for the recording's target; before the command runs. */
int offcpu_open(struct record *rec)
{
	const char *btf = getenv("PERFCTR_BTF");
	PERFCTR_OPTS(perfctr_offcpu_opts, o,
		     .threshold_ns = rec->off_cpu_thresh_ns,
		     .runnable = rec->off_cpu_runnable,
		     .btf_path = btf && *btf ? btf : NULL);
	int err;

	if (!rec->off_cpu)
		return 0;
	rec->offcpu = perfctr_offcpu__new(rec->target ? rec->target :
					  rec->command, &o);
	if (rec->offcpu) {
		rec->offcpu_clock_delta = clock_delta(rec->clockid);
		return 0;
	}
	err = errno;
	switch (err) {
	case EOPNOTSUPP:
		perfex_error("cannot record off-CPU time: perfex was built "
			     "without BPF");
		perfex_hint("scripts/install-deps installs libbpf, clang and "
			    "bpftool; then rebuild");
		return PERFEX_EXIT_EVENT;
	case ENOENT:
		perfex_error("cannot record off-CPU time: no BTF for this "
			     "kernel ('%s' is missing)",
			     o.btf_path ? o.btf_path : "/sys/kernel/btf/vmlinux");
		perfex_hint("a kernel built with CONFIG_DEBUG_INFO_BTF=y has it; "
			    "PERFCTR_BTF names another file");
		return PERFEX_EXIT_EVENT;
	case EPERM:
	case EACCES:
		perfex_error("cannot record off-CPU time: loading its BPF "
			     "program needs root or CAP_BPF and CAP_PERFMON");
		perfex_hint("run perfex record --off-cpu as root");
		return PERFEX_EXIT_PERM;
	default:
		perfex_error("cannot record off-CPU time: the kernel refused "
			     "its BPF program: %s", strerror(err));
		return PERFEX_EXIT_EVENT;
	}
}

/* The offcpu-time event in the file: its clock, sample_id_all and
 * IDENTIFIER as the sampler's events, and an id none of theirs has. */
int offcpu_add_attr(struct record *rec)
{
	struct perf_event_attr attr;
	size_t i, k, n;
	uint64_t id = 0;
	int r;

	if (!rec->offcpu)
		return 0;
	n = perfctr_sampler__nr_attrs(rec->sampler);
	for (i = 0; i < n; i++) {
		const uint64_t *ids = NULL;
		size_t nr = perfctr_sampler__ids(rec->sampler, i, &ids);

		for (k = 0; k < nr; k++)
			id = ids[k] > id ? ids[k] : id;
	}
	rec->offcpu_id = id + 1;
	perfctr_offcpu_attr(perfctr_sampler__attr(rec->sampler, 0), &attr);
	r = perfctr_perfdata_writer__add_attr(rec->writer, &attr,
					      PERFCTR_OFFCPU_EVENT,
					      &rec->offcpu_id, 1);
	if (r < 0) {
		perfex_error("cannot write '%s': %s", rec->output, strerror(-r));
		return PERFEX_EXIT_IO;
	}
	return 0;
}

void offcpu_enable(struct record *rec)
{
	if (rec->offcpu)
		perfctr_offcpu__enable(rec->offcpu);
}

struct writing {
	struct record *rec;
	uint64_t time;		/* sums' time; 0: each sample's own */
	uint64_t words[PERFCTR_OFFCPU_SAMPLE_WORDS];
};

/* One sample of offcpu-time into the file. */
static int write_sample(const struct perfctr_offcpu_sample *s, void *ctx)
{
	struct writing *w = ctx;
	struct record *rec = w->rec;
	uint64_t time = w->time;
	int size, err;

	if (!time)
		time = (uint64_t)((int64_t)(s->time + s->off_cpu_ns) +
				  rec->offcpu_clock_delta);
	size = perfctr_offcpu_encode(s, rec->offcpu_id, time, w->words,
				     PERFCTR_OFFCPU_SAMPLE_WORDS);
	if (size < 0)
		return 0;
	/* The DSOs hit get their build-id in the file. */
	for (size_t i = 0; i < s->nr_user; i++) {
		struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };

		perfctr_symbols__resolve(rec->syms, s->pid, s->user[i], false,
					 PERFCTR_RESOLVE_DSO_ONLY, &loc);
	}
	rec->offcpu_samples++;
	rec->offcpu_ns += s->off_cpu_ns;
	if (time > rec->last_time)
		rec->last_time = time;
	if (!rec->first_time || time < rec->first_time)
		rec->first_time = time;
	err = perfctr_perfdata_writer__write(rec->writer, w->words,
					     (size_t)size);
	if (err && !rec->write_err)
		rec->write_err = err;
	return 0;
}

/* The long intervals ended so far, into the file. */
void offcpu_poll(struct record *rec)
{
	struct writing *w;

	if (!rec->offcpu || !rec->off_cpu_thresh_ns)
		return;
	w = malloc(sizeof(*w));
	if (!w)
		return;
	w->rec = rec;
	w->time = 0;
	perfctr_offcpu__read_long(rec->offcpu, write_sample, w);
	free(w);
}

static uint64_t now_ns(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid < 0 ? CLOCK_MONOTONIC : (clockid_t)clockid, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The program stopped, its long intervals and sums written, and what it
 * counted said: the intervals recovered, and any lost or dropped (always,
 * even with -q: time missing from the profile is never silent).
 */
void offcpu_finish(struct record *rec)
{
	struct perfctr_offcpu_stats st = { .sz = sizeof(st) };
	struct writing *w;
	int err = -ENOMEM;

	if (!rec->offcpu)
		return;
	perfctr_offcpu__disable(rec->offcpu);
	w = malloc(sizeof(*w));
	if (w) {
		w->rec = rec;
		w->time = 0;
		err = perfctr_offcpu__read_long(rec->offcpu, write_sample, w);
		w->time = now_ns(rec->clockid);
		if (err >= 0)
			err = perfctr_offcpu__read(rec->offcpu, write_sample, w);
		free(w);
	}
	if (err < 0)
		perfex_error("cannot read the off-CPU sums: %s", strerror(-err));
	perfctr_offcpu__stats(rec->offcpu, &st);
	if (!rec->quiet)
		fprintf(stderr, "perfex record: off-CPU: %" PRIu64 " samples, "
			"%.3f s (%s; %" PRIu64 " intervals, %" PRIu64
			" recovered, %" PRIu64 " still off the CPU at the "
			"end)\n", rec->offcpu_samples, rec->offcpu_ns / 1e9,
			perfctr_offcpu__program(rec->offcpu),
			st.intervals + st.recovered, st.recovered,
			st.open);
	if (st.lost || st.dropped)
		fprintf(stderr, "perfex record: off-CPU: %" PRIu64 " intervals "
			"lost (no switch-in seen, no arrival known), %" PRIu64
			" dropped (the program's maps were full)\n", st.lost,
			st.dropped);
	if (st.stack_errors && !rec->quiet)
		fprintf(stderr, "perfex record: off-CPU: %" PRIu64 " stacks "
			"not taken (their time is kept without a stack)\n",
			st.stack_errors);
	perfctr_offcpu__delete(rec->offcpu);
	rec->offcpu = NULL;
}
