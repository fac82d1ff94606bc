/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What the unwinder needs of a symbols object beyond the public API: the
 * ELF files mapped into a process and where, and a number that changes
 * whenever that process's maps do.
 */
#ifndef PC_SAMPLE_SYMBOLS_INTERNAL_H
#define PC_SAMPLE_SYMBOLS_INTERNAL_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "perfctr/symbols.h"

/* Changes whenever @pid's maps change (a map added, fork, exec); 0 when
 * the process has none. */
uint64_t pc_symbols__generation(struct perfctr_symbols *syms, pid_t pid);

/*
 * @fn for each ELF file mapped executable into @pid, once per file: @path
 * to open (the root option applied) and @bias, what its load added to the
 * file's virtual addresses.  The vDSO has no file: when the recorded one
 * is this process's own (as its symbols are found), @path is "[vdso]" and
 * @image, @image_size a copy of it, valid during the call; else @image is
 * NULL.  Files that cannot be read as ELF are left out.  Stops at the
 * first non-zero return of @fn and returns it.
 */
int pc_symbols__for_each_elf(struct perfctr_symbols *syms, pid_t pid,
			     int (*fn)(void *ctx, const char *path,
				       uint64_t bias, const void *image,
				       size_t image_size),
			     void *ctx);

/*
 * For an object that serves reader after reader (perfctr_reader_opts.
 * symbols): forget the processes (maps), the recorded build-ids and the
 * hits, which each file describes anew, but keep the symbol tables read,
 * except those of files changed since they were read (another inode, size
 * or modification time), which are read again when hit.
 */
void pc_symbols__forget_processes(struct perfctr_symbols *syms);

/* The hits of DSO @idx (perfctr_symbols__dso()'s), without reading
 * anything of its file: 0 when out of range. */
uint64_t pc_symbols__dso_hits(const struct perfctr_symbols *syms, size_t idx);

/*
 * A demangled C++ name cut in place to the form perf shows by default:
 * without its parameter list, the qualifiers after it, " [clone ...]"
 * suffixes and a template function's return type
 * ("ns::Widget<long>::spin(long) const" -> "ns::Widget<long>::spin").
 */
void pc_demangled_short(char *name);

/*
 * For annotations: a function of ELF file @path (as the maps name it; the
 * root option applied to open it), read through the same tables as the
 * samples' symbols.
 */
struct pc_file_func {
	const char *name;	/* as resolve() shows it */
	uint64_t start, end;	/* the file's virtual addresses, end exclusive */
};

/* The function named @name (as the file spells it, or as shown), or when
 * @name is NULL the one at @addr.  Return: 1 found, 0 not, -ENOENT when
 * @path is no readable ELF file. */
int pc_symbols__file_func(struct perfctr_symbols *syms, const char *path,
			  uint64_t addr, const char *name,
			  struct pc_file_func *out);

/* Up to @len bytes of @path's loaded image at virtual address @addr (cut
 * at the end of its segment).  Return: the bytes read, -ENOENT (no ELF
 * file), -ENOEXEC (@addr in no segment with file contents), -errno. */
ssize_t pc_symbols__file_read(struct perfctr_symbols *syms, const char *path,
			      uint64_t addr, void *buf, size_t len);

#ifdef HAVE_LIBDW
#include <elfutils/libdw.h>
/* @path's DWARF (its debug file's by build-id first), owned by @syms;
 * NULL when it has none. */
Dwarf *pc_symbols__file_dwarf(struct perfctr_symbols *syms, const char *path);
#endif

#endif /* PC_SAMPLE_SYMBOLS_INTERNAL_H */
