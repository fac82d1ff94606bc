/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Unit tests of the side-band records made from /proc, on a procfs tree
 * made here: the COMM of each thread and the MMAP2 of each executable map
 * decode back to what the tree says, with the trailer of the attr given;
 * the kernel's text from kallsyms; a callback that stops the walk.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfctr/record.h"
#include "perfctr/synth.h"
#include "test.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "we");
	REQUIRE(f);
	fputs(text, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	REQUIRE(mkdir(path, 0755) == 0);
}

static void make_tree(void)
{
	snprintf(root, sizeof(root), "/tmp/pctest-synth-%d", (int)getpid());
	REQUIRE(mkdir(root, 0755) == 0);
	dir("42");
	dir("42/task");
	dir("42/task/42");
	dir("42/task/43");
	put("42/task/42/comm", "app\n");
	put("42/task/43/comm", "app-worker-with-a-long-name\n");
	put("42/maps",
	    "00400000-00452000 r-xp 00001000 08:01 1234 /usr/bin/app\n"
	    "00652000-00653000 rw-p 00052000 08:01 1234 /usr/bin/app\n"
	    "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
	    "7fff00000000-7fff00002000 r-xp 00000000 00:00 0 [vdso]\n");
	put("kallsyms",
	    "0000000000000000 A fixed_percpu_data\n"
	    "ffffffff81000000 T _stext\n"
	    "ffffffff81000000 T _text\n"
	    "ffffffff81001000 T do_syscall_64\n");
}

static void remove_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

struct got {
	struct perfctr_record rec[8];
	unsigned char raw[8][512];
	int nr;
	int stop_at;	/* stop with -EIO at this record; -1 never */
	const struct perf_event_attr *attr;	/* to decode with */
};

static const struct perf_event_attr attr = {
	.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
	.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		       PERF_SAMPLE_IP,
	.sample_id_all = 1,
};

static int collect(const struct perf_event_header *hdr, void *ctx)
{
	struct got *g = ctx;

	if (g->nr == g->stop_at)
		return -EIO;
	REQUIRE(g->nr < 8 && hdr->size <= sizeof(g->raw[0]));
	/* Decoded from a copy: the record lives during the call only. */
	memcpy(g->raw[g->nr], hdr, hdr->size);
	g->rec[g->nr].sz = sizeof(g->rec[0]);
	CHECK_EQ_INT(perfctr_record__parse(g->attr ? g->attr : &attr,
					   (void *)g->raw[g->nr],
					   &g->rec[g->nr]), 0);
	g->nr++;
	return 0;
}

TEST(process_threads_and_code_maps)
{
	PERFCTR_OPTS(perfctr_synth_opts, o, .attr = &attr, .id = 77,
		     .proc = root);
	struct got g = { .stop_at = -1 };
	int i, comms = 0;

	make_tree();
	CHECK_EQ_INT(perfctr_synth_process(42, &o, collect, &g), 5);
	REQUIRE(g.nr == 5);
	/* Threads in directory order: find them by tid. */
	for (i = 0; i < 2; i++) {
		const struct perfctr_record *r = &g.rec[i];

		REQUIRE(r->type == PERF_RECORD_COMM);
		CHECK_EQ_INT(r->comm.pid, 42);
		CHECK_STR(r->comm.comm, r->comm.tid == 42 ? "app" : "app-worker-with");
		CHECK(r->comm.tid == 42 || r->comm.tid == 43);
		CHECK(r->sample_id.present & PERF_SAMPLE_ID);
		CHECK_EQ_U64(r->sample_id.id, 77);
		CHECK_EQ_INT(r->sample_id.tid, r->comm.tid);
		comms += r->comm.tid;
	}
	CHECK_EQ_INT(comms, 85);
	/* The executable maps only, in file order. */
	CHECK_EQ_INT(g.rec[2].type, PERF_RECORD_MMAP2);
	CHECK_EQ_U64(g.rec[2].mmap.addr, 0x400000);
	CHECK_EQ_U64(g.rec[2].mmap.len, 0x52000);
	CHECK_EQ_U64(g.rec[2].mmap.pgoff, 0x1000);
	CHECK_EQ_INT(g.rec[2].mmap.maj, 8);
	CHECK_EQ_INT(g.rec[2].mmap.min, 1);
	CHECK_EQ_U64(g.rec[2].mmap.ino, 1234);
	CHECK_EQ_INT(g.rec[2].mmap.prot, 5);
	CHECK_STR(g.rec[2].mmap.filename, "/usr/bin/app");
	CHECK_EQ_INT(g.rec[2].misc & PERF_RECORD_MISC_CPUMODE_MASK,
		     PERF_RECORD_MISC_USER);
	CHECK_STR(g.rec[3].mmap.filename, "//anon");
	CHECK_STR(g.rec[4].mmap.filename, "[vdso]");
	CHECK_EQ_INT(g.rec[4].mmap.pid, 42);

	/* A callback that says stop is obeyed and its value returned. */
	memset(&g, 0, sizeof(g));
	g.stop_at = 3;
	CHECK_EQ_INT(perfctr_synth_process(42, &o, collect, &g), -EIO);
	CHECK_EQ_INT(g.nr, 3);
	g.nr = 0;
	g.stop_at = 1;
	CHECK_EQ_INT(perfctr_synth_processes(&o, collect, &g), -EIO);

	g.stop_at = -1;
	CHECK_EQ_INT(perfctr_synth_process(4242, &o, collect, &g), -ENOENT);
	CHECK_EQ_INT(perfctr_synth_process(42, &o, NULL, &g), -EINVAL);
	remove_tree();
}

TEST(every_process)
{
	static const struct perf_event_attr plain = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(plain),
	};
	PERFCTR_OPTS(perfctr_synth_opts, o, .proc = root);
	struct got g = { .stop_at = -1, .attr = &plain };

	make_tree();
	CHECK_EQ_INT(perfctr_synth_processes(&o, collect, &g), 5);
	/* No attr: no trailer. */
	CHECK_EQ_U64(g.rec[0].sample_id.present, 0);
	remove_tree();
}

TEST(kernel_text)
{
	PERFCTR_OPTS(perfctr_synth_opts, o, .attr = &attr, .proc = root);
	struct got g = { .stop_at = -1 };
	uint64_t start = 1;

	make_tree();
	CHECK_EQ_INT(perfctr_synth_kernel(&o, collect, &g, &start), 1);
	CHECK_EQ_U64(start, 0xffffffff81000000ULL);
	REQUIRE(g.nr == 1);
	CHECK_EQ_INT(g.rec[0].type, PERF_RECORD_MMAP);
	CHECK_EQ_INT(g.rec[0].misc & PERF_RECORD_MISC_CPUMODE_MASK,
		     PERF_RECORD_MISC_KERNEL);
	CHECK_EQ_U64(g.rec[0].mmap.addr, 0xffffffff81000000ULL);
	CHECK_EQ_U64(g.rec[0].mmap.pgoff, 0xffffffff81000000ULL);
	CHECK_EQ_U64(g.rec[0].mmap.addr + g.rec[0].mmap.len, ~0ULL);
	CHECK_STR(g.rec[0].mmap.filename, "[kernel.kallsyms]_text");
	/* kptr_restrict: every address 0, no record. */
	put("kallsyms", "0000000000000000 T _stext\n0000000000000000 T _text\n");
	g.nr = 0;
	CHECK_EQ_INT(perfctr_synth_kernel(&o, collect, &g, &start), 0);
	CHECK_EQ_U64(start, 0);
	CHECK_EQ_INT(g.nr, 0);
	remove_tree();
}

TEST_MAIN(TEST_CASE(process_threads_and_code_maps), TEST_CASE(every_process),
	  TEST_CASE(kernel_text))
