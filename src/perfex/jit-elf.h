/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The ELF file of one jitted function, as perf inject --jit writes it:
 * used by perfex inject (cmd-inject.c), which reads the jitdump.
 */
#ifndef PERFEX_JIT_ELF_H
#define PERFEX_JIT_ELF_H

#include <stddef.h>
#include <stdint.h>

/* Where the code lies in the file (offset and address), after the ELF
 * header and the one program header: perf's choice, kept so that the
 * MMAP2s' pgoff reads the same. */
#define JIT_TEXT_OFFSET 0x80

/* One row of a line table: from @offset (bytes into the function) on,
 * the code is line @line, column @column of files[@file]. */
struct jit_line {
	uint64_t offset;
	uint32_t line;
	uint32_t column;
	uint32_t file;
};

/* A JIT_CODE_DEBUG_INFO record's table, rows in address order. */
struct jit_lines {
	const char **files;
	size_t nr_files;
	struct jit_line *rows;
	size_t nr_rows;
};

/* A JIT_CODE_UNWINDING_INFO record's tables, as the runtime laid them
 * out after the code: .eh_frame at the code's end rounded up to 8 bytes,
 * .eh_frame_hdr right after it (their pc-relative fields count on it). */
struct jit_unwind {
	const uint8_t *eh_frame;
	uint64_t eh_frame_size;
	const uint8_t *eh_frame_hdr;
	uint64_t eh_frame_hdr_size;
	uint64_t mapped_size;	/* of both, in the runtime's memory; 0: none */
};

struct jit_function {
	uint16_t machine;		/* ELF e_machine, from the dump */
	const char *name;
	uint64_t addr;			/* where it ran (for the build-id) */
	const uint8_t *code;
	uint64_t size;
	const struct jit_lines *lines;	/* NULL: no line table */
	const struct jit_unwind *unwind;/* NULL: no unwind tables */
};

/*
 * Write @path: a shared object whose one PT_LOAD and .text hold the code
 * at JIT_TEXT_OFFSET, a FUNC symbol over it, a build-id note; with
 * @fn->lines a DWARF 4 line table (.debug_line) and the compile unit
 * that points at it and covers the code (.debug_info, .debug_abbrev);
 * with @fn->unwind .eh_frame and .eh_frame_hdr where the runtime had
 * them relative to the code.  Return: 0, -ENOTSUP without libelf, or
 * -errno (the file may be left half written).
 */
int jit_elf_write(const char *path, const struct jit_function *fn);

#endif
