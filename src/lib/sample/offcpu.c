/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Off-CPU time through BPF (see include/perfctr/offcpu.h and
 * src/bpf/offcpu.bpf.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/internal.h"
#include "perfctr/offcpu.h"
#include "perfctr/target.h"
#include "sys/cgroup.h"

#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"

void perfctr_offcpu_attr(const struct perf_event_attr *like,
			 struct perf_event_attr *out)
{
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->type = PERF_TYPE_SOFTWARE;
	out->config = PERF_COUNT_SW_BPF_OUTPUT;
	out->sample_period = 1;
	out->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			   PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			   PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	out->disabled = 1;
	if (like) {
		out->sample_id_all = like->sample_id_all;
		out->use_clockid = like->use_clockid;
		out->clockid = like->clockid;
		out->exclude_kernel = like->exclude_kernel;
	}
}

#define MAX_FRAMES 127

int perfctr_offcpu_encode(const struct perfctr_offcpu_sample *s, uint64_t id,
			  uint64_t time, uint64_t *buf, size_t words)
{
	size_t nk = s->nr_kernel < MAX_FRAMES ? s->nr_kernel : MAX_FRAMES;
	size_t nu = s->nr_user < MAX_FRAMES ? s->nr_user : MAX_FRAMES;
	struct perf_event_header *hdr = (struct perf_event_header *)buf;
	uint64_t *p = buf + 1, *ip, *nr;
	size_t i;

	/* header, 6 words, nr, the contexts, the frames, RAW */
	if (words < 1 + 6 + 1 + !!nk + nk + !!nu + nu + 1)
		return -ENOSPC;
	*p++ = id;
	ip = p++;
	*p++ = (uint64_t)(uint32_t)s->pid | (uint64_t)(uint32_t)s->tid << 32;
	*p++ = time;
	*p++ = s->cpu;
	*p++ = s->off_cpu_ns;
	nr = p++;
	*ip = 0;
	if (nk) {
		*p++ = PERF_CONTEXT_KERNEL;
		for (i = 0; i < nk; i++)
			*p++ = s->kernel[i];
		*ip = s->kernel[0];
	}
	if (nu) {
		*p++ = PERF_CONTEXT_USER;
		for (i = 0; i < nu; i++)
			*p++ = s->user[i];
		if (!nk)
			*ip = s->user[0];
	}
	*nr = (uint64_t)(p - nr - 1);
	/* RAW: its u32 size, then the state as a u32 (8 bytes in all, so
	 * the record stays 8-byte aligned). */
	*p++ = (uint64_t)4 | (uint64_t)(uint32_t)(unsigned char)s->state << 32;
	hdr->type = PERF_RECORD_SAMPLE;
	hdr->misc = nk ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	hdr->size = (uint16_t)((size_t)(p - buf) * sizeof(uint64_t));
	return hdr->size;
}

#ifdef HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "common/bpflog.h"

#include "offcpu.h"
#include "pc_offcpu.skel.h"

/*
 * Frames of the tracing itself at the top of a kernel stack taken in the
 * program, skipped so that stacks start in the scheduler (__schedule):
 * the program's own frame, its trampoline or raw tracepoint probe, and
 * bpf_trace_run4 (measured on 6.18, for both kinds; a frame more or less
 * changes where a stack starts, not the time it adds up to).
 */
#define KERNEL_SKIP 3

struct perfctr_offcpu {
	struct pc_offcpu *skel;
	const char *program;
	struct ring_buffer *ring;
	perfctr_offcpu_fn fn;		/* of the running read_long() */
	void *fn_ctx;
	int fn_ret;
	int given;
	uint64_t open;
	uint64_t stack[PC_OFFCPU_MAX_STACK];
	uint64_t stack2[PC_OFFCPU_MAX_STACK];
};

/* Where the target's tasks are named: the filter map, or the CPUs. */
static int fill_filter(struct perfctr_offcpu *oc,
		       const struct perfctr_target *target)
{
	__u8 one = 1;
	__u32 key;
	size_t u, n;
	int fd;

	switch (perfctr_target__kind(target)) {
	case PERFCTR_TARGET_PROCESS:
	case PERFCTR_TARGET_COMMAND:
	case PERFCTR_TARGET_THREAD:
		key = (__u32)perfctr_target__pid(target);
		fd = bpf_map__fd(oc->skel->maps.filter);
		return bpf_map_update_elem(fd, &key, &one, BPF_ANY) ? -errno : 0;
	case PERFCTR_TARGET_CPUS:
		fd = bpf_map__fd(oc->skel->maps.cpus);
		n = perfctr_target__nr_units(target);
		for (u = 0; u < n; u++) {
			int cpu;

			if (perfctr_target__unit(target, u, NULL, &cpu) ||
			    cpu < 0)
				continue;
			key = (__u32)cpu;
			if (bpf_map_update_elem(fd, &key, &one, BPF_ANY))
				return -errno;
		}
		return 0;
	default:
		return 0;
	}
}

/* The program's mode and cgroup for @target. */
static int target_mode(const struct perfctr_target *target, __u32 *mode,
		       __u64 *cgroup)
{
	const char *path;
	uint64_t id;
	int fd, err;

	switch (perfctr_target__kind(target)) {
	case PERFCTR_TARGET_PROCESS:
	case PERFCTR_TARGET_COMMAND:
		*mode = PC_OFFCPU_TGIDS;
		return 0;
	case PERFCTR_TARGET_THREAD:
		*mode = PC_OFFCPU_TIDS;
		return 0;
	case PERFCTR_TARGET_CPUS:
		*mode = PC_OFFCPU_CPUS;
		return 0;
	case PERFCTR_TARGET_CGROUP:
		path = perfctr_target__cgroup_path(target);
		fd = pc_cgroup2_open(path, NULL, 0);
		if (fd < 0)
			return fd;
		err = pc_cgroup2_id(fd, &id);
		close(fd);
		if (err)
			return err;
		*mode = PC_OFFCPU_CGROUP;
		*cgroup = id;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Open, size and load the program as @kind ("tp_btf" or "raw_tp"). */
static int load(struct perfctr_offcpu *oc, const struct perfctr_target *target,
		const struct perfctr_offcpu_opts *opts, bool btf)
{
	LIBBPF_OPTS(bpf_object_open_opts, oopts,
		    .btf_custom_path = PC_OPTS_GET(opts, btf_path, NULL));
	struct pc_offcpu *skel;
	__u32 mode = 0;
	__u64 cgroup = 0;
	uint32_t v;
	int err;

	skel = pc_offcpu__open_opts(&oopts);
	if (!skel)
		return -errno;
	oc->skel = skel;
	err = target_mode(target, &mode, &cgroup);
	if (err)
		return err;
	skel->rodata->mode = mode;
	skel->rodata->cgroup_id = cgroup;
	skel->rodata->runnable = PC_OPTS_GET(opts, runnable, false);
	skel->rodata->threshold_ns = PC_OPTS_GET(opts, threshold_ns, 0);
	skel->rodata->user_stacks = !PC_OPTS_GET(opts, no_user_stacks, false);
	skel->rodata->kernel_skip = KERNEL_SKIP;
	bpf_program__set_autoload(skel->progs.pc_offcpu_btf, btf);
	bpf_program__set_autoload(skel->progs.pc_offcpu_fork_btf, btf);
	bpf_program__set_autoload(skel->progs.pc_offcpu_raw, !btf);
	bpf_program__set_autoload(skel->progs.pc_offcpu_fork_raw, !btf);
	v = PC_OPTS_GET(opts, max_sums, 0);
	err = bpf_map__set_max_entries(skel->maps.sums, v ? v : 65536);
	v = PC_OPTS_GET(opts, max_stacks, 0);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.stacks,
					       v ? v : 16384);
	/* The stacks that collide in `stacks`: a few of them. */
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.stacks2,
					       (v ? v : 16384) / 8);
	v = PC_OPTS_GET(opts, max_tasks, 0);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.starts,
					       v ? v : 32768);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.filter, 32768);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cpus,
					       (__u32)libbpf_num_possible_cpus());
	if (!err)
		err = pc_offcpu__load(skel);
	if (!err && !skel->bss)
		err = -EOPNOTSUPP;	/* no mmap of global data */
	if (!err)
		err = fill_filter(oc, target);
	if (!err)
		err = pc_offcpu__attach(skel);
	if (err > 0)
		err = -EINVAL;
	return err;
}

static int on_long(void *ctx, void *data, size_t size);

struct perfctr_offcpu *
perfctr_offcpu__new(const struct perfctr_target *target,
		    const struct perfctr_offcpu_opts *opts)
{
	const char *btf_path = PC_OPTS_GET(opts, btf_path, NULL);
	libbpf_print_fn_t old;
	struct perfctr_offcpu *oc;
	int err;

	if (!pc_opts_valid(opts, sizeof(*opts)) || !target ||
	    perfctr_target__kind(target) == PERFCTR_TARGET_SELF) {
		errno = EINVAL;
		return NULL;
	}
	if (access(btf_path ? btf_path : DEFAULT_BTF, R_OK)) {
		/* Readable by root only on some systems: EACCES says so. */
		return NULL;
	}
	oc = calloc(1, sizeof(*oc));
	if (!oc)
		return NULL;
	old = libbpf_set_print(pc_libbpf_log);
	/* tp_btf where the kernel takes it (no probe read of the task's
	 * fields), raw_tp otherwise. */
	oc->program = "tp_btf";
	err = btf_path ? -EINVAL : load(oc, target, opts, true);
	if (err && err != -EPERM && err != -EACCES) {
		pc_offcpu__destroy(oc->skel);
		oc->skel = NULL;
		oc->program = "raw_tp";
		err = load(oc, target, opts, false);
	}
	if (!err) {
		oc->ring = ring_buffer__new(bpf_map__fd(oc->skel->maps.long_ones),
					    on_long, oc, NULL);
		if (!oc->ring)
			err = -errno;
	}
	libbpf_set_print(old);
	if (err) {
		pr_info("off-CPU program unavailable: %s\n", strerror(-err));
		perfctr_offcpu__delete(oc);
		errno = -err;
		return NULL;
	}
	return oc;
}

void perfctr_offcpu__delete(struct perfctr_offcpu *oc)
{
	if (!oc)
		return;
	ring_buffer__free(oc->ring);
	pc_offcpu__destroy(oc->skel);
	free(oc);
}

int perfctr_offcpu__enable(struct perfctr_offcpu *oc)
{
	__atomic_store_n(&oc->skel->bss->enabled, true, __ATOMIC_RELEASE);
	return 0;
}

int perfctr_offcpu__disable(struct perfctr_offcpu *oc)
{
	__atomic_store_n(&oc->skel->bss->enabled, false, __ATOMIC_RELEASE);
	return 0;
}

const char *perfctr_offcpu__program(const struct perfctr_offcpu *oc)
{
	return oc->program;
}

/* Stack @id into @buf: the number of frames, 0 when there is none. */
static size_t stack_of(struct perfctr_offcpu *oc, __s32 id, uint64_t *buf)
{
	struct bpf_map *map = oc->skel->maps.stacks;
	size_t n = 0;

	if (id < 0)
		return 0;
	if (id & PC_OFFCPU_STACKS2) {
		map = oc->skel->maps.stacks2;
		id &= ~PC_OFFCPU_STACKS2;
	}
	memset(buf, 0, PC_OFFCPU_MAX_STACK * sizeof(*buf));
	if (bpf_map_lookup_elem(bpf_map__fd(map), &id, buf))
		return 0;
	while (n < PC_OFFCPU_MAX_STACK && buf[n])
		n++;
	return n;
}

static int give(struct perfctr_offcpu *oc, const struct pc_offcpu_key *key,
		uint64_t time, uint32_t cpu, uint64_t ns, uint64_t count,
		perfctr_offcpu_fn fn, void *ctx)
{
	static const char letters[] = { 'R', 'S', 'D' };
	struct perfctr_offcpu_sample s = { .sz = sizeof(s) };

	s.pid = (pid_t)key->pid;
	s.tid = (pid_t)key->tid;
	s.state = key->state < sizeof(letters) ? letters[key->state] : '?';
	s.cpu = cpu;
	s.time = time;
	s.off_cpu_ns = ns;
	s.count = count;
	s.kernel = oc->stack;
	s.nr_kernel = stack_of(oc, key->kernel_stack, oc->stack);
	s.user = oc->stack2;
	s.nr_user = stack_of(oc, key->user_stack, oc->stack2);
	return fn(&s, ctx);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int perfctr_offcpu__read(struct perfctr_offcpu *oc, perfctr_offcpu_fn fn,
			 void *ctx)
{
	int sums = bpf_map__fd(oc->skel->maps.sums);
	int starts = bpf_map__fd(oc->skel->maps.starts);
	struct pc_offcpu_key key, prev;
	struct pc_offcpu_sum sum;
	struct pc_offcpu_start st;
	__u32 tid, prev_tid;
	uint64_t now;
	void *last = NULL;
	int ret;

	while (!bpf_map_get_next_key(sums, last, &key)) {
		prev = key;
		last = &prev;
		if (bpf_map_lookup_elem(sums, &key, &sum))
			continue;	/* deleted meanwhile: cannot be */
		ret = give(oc, &key, 0, 0, sum.total_ns, sum.count, fn, ctx);
		if (ret)
			return ret;
	}
	if (errno != ENOENT)
		return -errno;
	/* Tasks off the CPU now: up to now, and still open. */
	now = monotonic_ns();
	oc->open = 0;
	last = NULL;
	while (!bpf_map_get_next_key(starts, last, &tid)) {
		prev_tid = tid;
		last = &prev_tid;
		if (bpf_map_lookup_elem(starts, &tid, &st) || st.time >= now)
			continue;
		oc->open++;
		ret = give(oc, &st.key, 0, 0, now - st.time, 1, fn, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

static int on_long(void *ctx, void *data, size_t size)
{
	struct perfctr_offcpu *oc = ctx;
	const struct pc_offcpu_interval *iv = data;

	if (size < sizeof(*iv))
		return 0;
	oc->fn_ret = give(oc, &iv->key, iv->start, iv->cpu, iv->duration, 1,
			  oc->fn, oc->fn_ctx);
	oc->given++;
	/* A negative return stops libbpf's consume. */
	return oc->fn_ret ? -1 : 0;
}

int perfctr_offcpu__read_long(struct perfctr_offcpu *oc, perfctr_offcpu_fn fn,
			      void *ctx)
{
	int err;

	oc->fn = fn;
	oc->fn_ctx = ctx;
	oc->fn_ret = 0;
	oc->given = 0;
	err = ring_buffer__consume(oc->ring);
	if (oc->fn_ret)
		return oc->fn_ret;
	return err < 0 ? err : oc->given;
}

int perfctr_offcpu__stats(const struct perfctr_offcpu *oc,
			  struct perfctr_offcpu_stats *st)
{
	const struct pc_offcpu_stats *s = &oc->skel->bss->stats;
	struct perfctr_offcpu_stats out = { .sz = sizeof(out) };

	if (!st || st->sz < sizeof(size_t))
		return -EINVAL;
	out.intervals = __atomic_load_n(&s->intervals, __ATOMIC_RELAXED);
	out.recovered = __atomic_load_n(&s->recovered, __ATOMIC_RELAXED);
	out.lost = __atomic_load_n(&s->lost, __ATOMIC_RELAXED);
	out.dropped = __atomic_load_n(&s->no_start, __ATOMIC_RELAXED) +
		      __atomic_load_n(&s->no_sum, __ATOMIC_RELAXED);
	out.stack_errors = __atomic_load_n(&s->stack_errors, __ATOMIC_RELAXED);
	out.long_ones = __atomic_load_n(&s->long_ones, __ATOMIC_RELAXED);
	out.open = oc->open;
	memcpy(st, &out, st->sz < sizeof(out) ? st->sz : sizeof(out));
	st->sz = st->sz < sizeof(out) ? st->sz : sizeof(out);
	return 0;
}

#else /* !HAVE_BPF */

struct perfctr_offcpu *
perfctr_offcpu__new(const struct perfctr_target *target,
		    const struct perfctr_offcpu_opts *opts)
{
	(void)target;
	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	errno = EOPNOTSUPP;
	return NULL;
}

void perfctr_offcpu__delete(struct perfctr_offcpu *oc) { (void)oc; }

int perfctr_offcpu__enable(struct perfctr_offcpu *oc)
{
	(void)oc;
	return -EOPNOTSUPP;
}

int perfctr_offcpu__disable(struct perfctr_offcpu *oc)
{
	(void)oc;
	return -EOPNOTSUPP;
}

const char *perfctr_offcpu__program(const struct perfctr_offcpu *oc)
{
	(void)oc;
	return "";
}

int perfctr_offcpu__read(struct perfctr_offcpu *oc, perfctr_offcpu_fn fn,
			 void *ctx)
{
	(void)oc; (void)fn; (void)ctx;
	return -EOPNOTSUPP;
}

int perfctr_offcpu__read_long(struct perfctr_offcpu *oc, perfctr_offcpu_fn fn,
			      void *ctx)
{
	(void)oc; (void)fn; (void)ctx;
	return -EOPNOTSUPP;
}

int perfctr_offcpu__stats(const struct perfctr_offcpu *oc,
			  struct perfctr_offcpu_stats *st)
{
	(void)oc; (void)st;
	return -EOPNOTSUPP;
}

#endif /* HAVE_BPF */
