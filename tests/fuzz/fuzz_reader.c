/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libFuzzer target: the sample reader over any perf.data file, as perfex
 * report uses it: every sample handed over (callchains resolved against
 * the file's maps, DSOs only: no ELF file named by the input is opened)
 * goes into a profile with call graphs, whose trees are then walked.
 *
 * Then the DWARF unwinder: the file is read again with ELF files opened,
 * but under a root directory that holds one file, bin/w (this fuzzer's own
 * executable), so that the registers and stack bytes of the input's
 * samples are unwound with real CFI wherever the input maps /bin/w
 * (the seed unwind.data does).  Inputs naming a path with ".." are not
 * read this way: they could leave the root.  PERFCTR_UNWIND_CHECK is set:
 * every chain the unwinder finds with its cached CFI rules is found again
 * by libdwfl, and any difference traps.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfctr/profile.h"
#include "perfctr/reader.h"

static uint64_t walk(struct perfctr_profile *prof,
		     const struct perfctr_profile_node *node, int depth)
{
	struct perfctr_profile_node kid = { .sz = sizeof(kid) };
	uint64_t sum = 0;

	if (depth > 300)
		return 0;
	for (size_t i = 0; i < node->nr_children; i++) {
		if (perfctr_profile__child(prof, node, i, &kid))
			__builtin_trap();
		if (kid.total > node->total)
			__builtin_trap();	/* a child outweighs its parent */
		sum += kid.total + walk(prof, &kid, depth + 1);
	}
	return sum;
}

/* The root of the unwinding pass: a directory with bin/w -> ourselves. */
static const char *unwind_root(void)
{
	static char root[64];
	char link[96];

	if (root[0])
		return root;
	snprintf(root, sizeof(root), "/tmp/fuzz_reader.XXXXXX");
	if (!mkdtemp(root))
		return NULL;
	snprintf(link, sizeof(link), "%s/bin", root);
	mkdir(link, 0700);
	snprintf(link, sizeof(link), "%s/bin/w", root);
	if (symlink("/proc/self/exe", link))
		return NULL;
	return root;
}

/* Every sample again, unwound with ELF files opened under the root. */
static void unwind_pass(const char *path)
{
	PERFCTR_OPTS(perfctr_reader_opts, o, .callchain = true,
		     .kallsyms = "/nonexistent", .root = unwind_root());
	struct perfctr_reader_stats st = { .sz = sizeof(st) };
	struct perfctr_reader_sample s = { .sz = sizeof(s) };
	volatile uint64_t sink = 0;
	struct perfctr_reader *r;
	uint64_t truncated = 0;
	int n = 0;

	if (!o.root)
		return;
	setenv("PERFCTR_UNWIND_CHECK", "1", 1);
	r = perfctr_reader__open(path, &o);
	if (!r)
		return;
	while (n++ < 100000 && perfctr_reader__next(r, &s) == 1) {
		if (!s.nr_frames || s.nr_frames > PERFCTR_READER_MAX_FRAMES)
			__builtin_trap();
		for (size_t i = 0; i < s.nr_frames; i++)
			sink += s.ips[i] + (s.frames[i].sym ? 1 : 0);
	}
	if (perfctr_reader__stats(r, SIZE_MAX, &st))
		__builtin_trap();
	for (int i = 0; i < PERFCTR_UNWIND_NR_STOPS; i++)
		truncated += st.truncated[i];
	if (truncated > st.unwound || st.unwound > st.samples)
		__builtin_trap();
	perfctr_reader__close(r);
}

/* Every sample and side-band record, as perfex script --show-*-events
 * reads them, and the threads the records named. */
static void side_band_pass(const char *path)
{
	PERFCTR_OPTS(perfctr_reader_opts, o, .dso_only = true,
		     .kallsyms = "/nonexistent", .side_band = true);
	struct perfctr_reader_sample s = { .sz = sizeof(s) };
	struct perfctr_reader_thread th = { .sz = sizeof(th) };
	volatile uint64_t sink = 0;
	struct perfctr_reader *r;
	int n = 0;

	r = perfctr_reader__open(path, &o);
	if (!r)
		return;
	while (n++ < 100000 && perfctr_reader__next(r, &s) == 1) {
		if (!s.record == !s.sample)
			__builtin_trap();
		if (s.record) {
			sink += s.record->type + (s.comm ? 1 : 0);
			if (s.tid >= 0 &&
			    !perfctr_reader__thread(r, s.tid, &th) && th.comm)
				sink += strlen(th.comm);
		} else if (!s.nr_frames) {
			__builtin_trap();
		}
	}
	perfctr_reader__close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PERFCTR_OPTS(perfctr_reader_opts, o, .callchain = true,
		     .dso_only = true, .kallsyms = "/nonexistent");
	PERFCTR_OPTS(perfctr_profile_opts, po,
		     .callgraph = PERFCTR_CALLGRAPH_CALLEE, .stable_strings = true);
	struct perfctr_reader_sample s = { .sz = sizeof(s) };
	struct perfctr_profile_node root = { .sz = sizeof(root) };
	struct perfctr_profile *prof;
	struct perfctr_reader *r;
	volatile uint64_t sink = 0;
	char path[64];
	int fd, n = 0;

	fd = memfd_create("fuzz_reader", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!memmem(data, size, "..", 2))
		unwind_pass(path);
	side_band_pass(path);
	r = perfctr_reader__open(path, &o);
	close(fd);
	if (!r)
		return 0;
	prof = perfctr_profile__new(&po);
	while (prof && n++ < 100000 && perfctr_reader__next(r, &s) == 1) {
		struct perfctr_profile_sample ps = {
			.sz = sizeof(ps), .comm = s.comm, .pid = s.pid,
			.tid = s.tid, .weight = 1, .frames = s.frames,
			.nr_frames = s.nr_frames,
		};

		if (!s.nr_frames || s.nr_frames > PERFCTR_READER_MAX_FRAMES)
			__builtin_trap();
		sink += s.ips[s.nr_frames - 1];
		if (s.event)
			sink += strlen(s.event);
		perfctr_profile__add(prof, &ps);
	}
	if (prof && !perfctr_profile__stack_root(prof, &root))
		sink += walk(prof, &root, 0);
	for (size_t i = 0; prof && i < perfctr_profile__nr_entries(prof); i++)
		if (!perfctr_profile__callgraph_root(prof, i, &root))
			sink += walk(prof, &root, 0);
	perfctr_profile__delete(prof);
	perfctr_reader__close(r);
	return 0;
}
