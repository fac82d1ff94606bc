// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * jitwork — a tiny "JIT" for the tests of perf maps and jitdump: it maps
 * anonymous executable memory, copies known machine code there (a
 * count-down loop: mov rax,rdi; 1: dec rax; jnz 1b; ret, 9 bytes padded
 * with int3 to 16) and runs it hot, describing it the way runtimes do.
 *
 *   jitwork map MS        /tmp/perf-PID.map; three phases of MS/3 ms:
 *                         jit_alpha (code+0x000) and jit_gamma_old
 *                         (code+0x200) listed and run; then jit_beta
 *                         (code+0x100) appended and run; then jit_gamma_new
 *                         appended for code+0x200 (same start and size) and
 *                         run there: a map that grows while recording
 *   jitwork dump DIR MS   DIR/jit-PID.dump (mapped PROT_EXEC so that the
 *                         recording names it), CLOCK_MONOTONIC times; in
 *                         three phases: DEBUG_INFO + UNWINDING_INFO + LOAD
 *                         of jit_alpha (index 1), run; DEBUG_INFO + LOAD of
 *                         jit_beta (index 2), run; jit_alpha moved to
 *                         code+0x300 (MOVE), run; CLOSE
 *
 * The pid is printed first, on a line of its own.  x86-64 only (exit 77
 * elsewhere).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FN_SIZE 16

static const uint8_t countdown[FN_SIZE] = {
	0x48, 0x89, 0xf8,	/* mov %rdi,%rax */
	0x48, 0xff, 0xc8,	/* dec %rax */
	0x75, 0xfb,		/* jnz -5 */
	0xc3,			/* ret */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Not inlined: the JIT code's caller, which unwinding through the code's
 * CFI finds (a frame-pointer walk skips it: the code keeps no frame). */
__attribute__((noinline)) static void run(uint8_t *fn, long ms)
{
	long (*f)(long) = (long (*)(long))(void *)fn;
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000u;

	while (mono_ns() < end)
		f(200000);
}

static void map_line(FILE *map, uint8_t *fn, const char *name)
{
	fprintf(map, "%lx %x %s\n", (unsigned long)(uintptr_t)fn, FN_SIZE, name);
	fflush(map);
}

/* ---- jitdump ---- */

struct dump {
	FILE *f;
	uint32_t pid;
};

static void put(struct dump *d, const void *p, size_t n)
{
	if (fwrite(p, 1, n, d->f) != n) {
		perror("jitwork: write");
		exit(1);
	}
}

static void put32(struct dump *d, uint32_t v) { put(d, &v, 4); }
static void put64(struct dump *d, uint64_t v) { put(d, &v, 8); }

static void rec_head(struct dump *d, uint32_t id, uint32_t size)
{
	put32(d, id);
	put32(d, size);
	put64(d, mono_ns());
}

/* One debug entry: the line from @fn + @offset on. */
static void debug_entry(struct dump *d, uint8_t *fn, uint64_t offset,
			uint32_t line, const char *file)
{
	put64(d, (uintptr_t)fn + offset);
	put32(d, line);
	put32(d, 0);
	put(d, file, strlen(file) + 1);
}

/*
 * jit_alpha: jitwork.js line 10 from the first byte, line 11 from the
 * loop (offset 3).  jit_beta: jitbeta.js line 20, line 21 from the loop
 * (its file named "\xff": the previous entry's), jitwork.js line 30 from
 * the ret (offset 8).
 */
static void dump_debug(struct dump *d, uint8_t *fn, bool beta)
{
	uint32_t size = 16 + 16;

	if (!beta) {
		size += 2 * (16 + sizeof("jitwork.js"));
		rec_head(d, 2, size);
		put64(d, (uintptr_t)fn);
		put64(d, 2);
		debug_entry(d, fn, 0, 10, "jitwork.js");
		debug_entry(d, fn, 3, 11, "jitwork.js");
	} else {
		size += 16 + sizeof("jitbeta.js") + 16 + 2 +
			16 + sizeof("jitwork.js");
		rec_head(d, 2, size);
		put64(d, (uintptr_t)fn);
		put64(d, 3);
		debug_entry(d, fn, 0, 20, "jitbeta.js");
		debug_entry(d, fn, 3, 21, "\xff");
		debug_entry(d, fn, 8, 30, "jitwork.js");
	}
	fflush(d->f);
}

/*
 * The unwind tables of the count-down loop, a leaf that keeps no frame:
 * the CFA is %rsp + 8 and the return address is at CFA - 8 throughout.
 * Laid out as runtimes do and perf expects: .eh_frame at the code's end
 * rounded up to 8 bytes (FN_SIZE is), .eh_frame_hdr right after it; the
 * pc-relative fields are relative to that layout, wherever it is.
 */
#define EH_FRAME_SIZE 52
#define EH_FRAME_HDR_SIZE 20

static void put_le32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static void unwind_tables(uint8_t out[EH_FRAME_SIZE + EH_FRAME_HDR_SIZE])
{
	static const uint8_t cie[24] = {
		20, 0, 0, 0,		/* length */
		0, 0, 0, 0,		/* CIE id */
		1, 'z', 'R', 0,		/* version, augmentation */
		1, 0x78, 16,		/* code align 1, data align -8, ra r16 */
		1, 0x1b,		/* augmentation data: pcrel sdata4 */
		0x0c, 7, 8,		/* DW_CFA_def_cfa %rsp + 8 */
		0x90, 1,		/* DW_CFA_offset r16 at CFA - 8 */
		0, 0,			/* DW_CFA_nop */
	};
	/* Offsets from the code's first byte. */
	const int32_t eh = FN_SIZE, fde = eh + 24, hdr = eh + EH_FRAME_SIZE;
	uint8_t *p = out;

	memset(out, 0, EH_FRAME_SIZE + EH_FRAME_HDR_SIZE);
	memcpy(p, cie, sizeof(cie));
	p += 24;
	put_le32(p, 20);			/* FDE length */
	put_le32(p + 4, 28);			/* back to the CIE */
	put_le32(p + 8, (uint32_t)(0 - (fde + 8)));	/* pc_begin: the code */
	put_le32(p + 12, FN_SIZE);		/* pc_range */
	/* p[16]: no augmentation data; then DW_CFA_nop to the length;
	 * then a zero terminator. */
	p = out + EH_FRAME_SIZE;
	p[0] = 1;				/* version */
	p[1] = 0x1b;				/* eh_frame_ptr: pcrel sdata4 */
	p[2] = 0x03;				/* fde_count: udata4 */
	p[3] = 0x3b;				/* table: datarel sdata4 */
	put_le32(p + 4, (uint32_t)(eh - (hdr + 4)));
	put_le32(p + 8, 1);
	put_le32(p + 12, (uint32_t)(0 - hdr));	/* initial location */
	put_le32(p + 16, (uint32_t)(fde - hdr));/* its FDE */
}

static void dump_unwind(struct dump *d, uint8_t *fn)
{
	uint8_t tables[EH_FRAME_SIZE + EH_FRAME_HDR_SIZE];

	unwind_tables(tables);
	/* In memory after the code too, as a runtime would have them. */
	memcpy(fn + FN_SIZE, tables, sizeof(tables));
	rec_head(d, 4, 16 + 24 + sizeof(tables));
	put64(d, sizeof(tables));
	put64(d, EH_FRAME_HDR_SIZE);
	put64(d, sizeof(tables));
	put(d, tables, sizeof(tables));
	fflush(d->f);
}

static void dump_load(struct dump *d, uint8_t *fn, const char *name,
		      uint64_t index)
{
	uint32_t size = 16 + 4 + 4 + 8 * 4 + (uint32_t)strlen(name) + 1 + FN_SIZE;

	rec_head(d, 0, size);
	put32(d, d->pid);
	put32(d, (uint32_t)syscall(SYS_gettid));
	put64(d, (uintptr_t)fn);
	put64(d, (uintptr_t)fn);
	put64(d, FN_SIZE);
	put64(d, index);
	put(d, name, strlen(name) + 1);
	put(d, fn, FN_SIZE);
	fflush(d->f);
}

static void dump_move(struct dump *d, uint8_t *from, uint8_t *to,
		      uint64_t index)
{
	rec_head(d, 1, 16 + 4 + 4 + 8 * 5);
	put32(d, d->pid);
	put32(d, (uint32_t)syscall(SYS_gettid));
	put64(d, (uintptr_t)to);
	put64(d, (uintptr_t)from);
	put64(d, (uintptr_t)to);
	put64(d, FN_SIZE);
	put64(d, index);
	fflush(d->f);
}

static int do_dump(uint8_t *code, const char *dir, long ms)
{
	char path[4096];
	struct dump d = { .pid = (uint32_t)getpid() };
	int fd;
	void *marker;
	uint8_t *moved;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)d.pid);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0 || !(d.f = fdopen(fd, "w"))) {
		perror(path);
		return 1;
	}
	/* The runtime's mark in the recording: an executable map of the
	 * dump file, which the kernel reports with its name. */
	marker = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC,
		      MAP_PRIVATE, fd, 0);
	if (marker == MAP_FAILED) {
		perror("jitwork: mmap of the dump");
		return 1;
	}
	put32(&d, 0x4A695444);		/* "JiTD" */
	put32(&d, 1);
	put32(&d, 40);
	put32(&d, EM_X86_64);
	put32(&d, 0);
	put32(&d, d.pid);
	put64(&d, mono_ns());
	put64(&d, 0);

	memcpy(code, countdown, FN_SIZE);
	dump_debug(&d, code, false);
	dump_unwind(&d, code);
	dump_load(&d, code, "jit_alpha", 1);
	run(code, ms / 3);
	memcpy(code + 0x100, countdown, FN_SIZE);
	dump_debug(&d, code + 0x100, true);
	dump_load(&d, code + 0x100, "jit_beta", 2);
	run(code + 0x100, ms / 3);
	moved = code + 0x300;
	/* gcc's bounds check under AddressSanitizer takes the page for an
	 * object of no size: it must not see where @moved points. */
	__asm__("" : "+r"(moved));
	memcpy(moved, code, 0x100);
	memset(code, 0xcc, 0x100);
	dump_move(&d, code, code + 0x300, 1);
	run(code + 0x300, ms / 3);
	rec_head(&d, 3, 16);
	fclose(d.f);
	munmap(marker, (size_t)sysconf(_SC_PAGESIZE));
	return 0;
}

static int do_map(uint8_t *code, long ms)
{
	char path[64];
	FILE *map;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "we");
	if (!map) {
		perror(path);
		return 1;
	}
	memcpy(code, countdown, FN_SIZE);
	memcpy(code + 0x100, countdown, FN_SIZE);
	memcpy(code + 0x200, countdown, FN_SIZE);
	map_line(map, code, "jit_alpha");
	map_line(map, code + 0x200, "jit_gamma_old");
	run(code, ms / 6);
	run(code + 0x200, ms / 6);
	map_line(map, code + 0x100, "jit_beta");
	run(code + 0x100, ms / 3);
	map_line(map, code + 0x200, "jit_gamma_new");
	run(code + 0x200, ms / 3);
	fclose(map);
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t *code;

#ifndef __x86_64__
	fprintf(stderr, "jitwork: x86-64 machine code only\n");
	return 77;
#endif
	if (argc < 3 || (strcmp(argv[1], "map") && strcmp(argv[1], "dump")) ||
	    (!strcmp(argv[1], "dump") && argc < 4)) {
		fprintf(stderr, "usage: jitwork map MS | jitwork dump DIR MS\n");
		return 2;
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	if (getenv("JITWORK_MEMFD")) {
		int mfd = memfd_create("jitcode", MFD_CLOEXEC);

		if (mfd < 0 || ftruncate(mfd, 4096))
			return 1;
		code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_SHARED, mfd, 0);
	} else {
		code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (code == MAP_FAILED) {
		perror("jitwork: mmap");
		return 1;
	}
	memset(code, 0xcc, 4096);
	if (!strcmp(argv[1], "map"))
		return do_map(code, strtol(argv[2], NULL, 10));
	return do_dump(code, argv[2], strtol(argv[3], NULL, 10));
}
