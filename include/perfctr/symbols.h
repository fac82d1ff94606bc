/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — symbolisation: instruction addresses of sampled processes
 * and of the kernel turned into "DSO + offset + symbol".
 *
 * A symbols object models one machine as a recording saw it: the address
 * space of each process, built from PERF_RECORD_MMAP / MMAP2 records (or
 * /proc/PID/maps), FORK and exec COMM records, and the kernel's symbol
 * table from /proc/kallsyms (or any file in that format), read on the
 * first kernel address; an address outside the kernel's and the modules'
 * text that it knows has it read again if it changed since (for procfs:
 * if /proc/modules did; a module loaded meanwhile), once per recording
 * read at most.  User-space
 * symbols come from the ELF files themselves (.symtab, else .dynsym, also
 * from a separate debug file found by build-id under /usr/lib/debug),
 * read with libelf when the library was built with it; x86-64 PLT stubs
 * (.plt, .plt.sec) are named "function@plt" from the .rela.plt
 * relocations, as perf names them.  Without libelf
 * user addresses resolve to DSO + offset only; perfctr_symbols_have_elf()
 * says which.
 *
 * ELF files are opened lazily, on the first address that falls into them.
 *
 * The vDSO ("[vdso]" maps) has no file: its symbols come from this
 * process's own vDSO image, read in memory, when it is the recorded one
 * (see perfctr_symbols__set_build_id() and the osrelease option).
 *
 * C++ names are shown demangled, by the C++ runtime's __cxa_demangle()
 * from libstdc++.so.6, loaded with dlopen() on the first mangled name
 * (libperfctr does not link the C++ runtime); without it names stay as
 * the ELF files spell them, see perfctr_symbols_have_demangler().
 *
 * Thread safety: a symbols object is not synchronised; distinct objects
 * may be used from distinct threads.  The strings returned in a
 * perfctr_symbol_loc live as long as the object.
 */
#ifndef PERFCTR_SYMBOLS_H
#define PERFCTR_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_symbols;

struct perfctr_symbols_opts {
	size_t sz;
	/* Kernel symbol table in /proc/kallsyms format; NULL for
	 * /proc/kallsyms, "" for none (kernel addresses stay addresses). */
	const char *kallsyms;
	/* Prefix prepended to every DSO path before it is opened (a sysroot
	 * or a copy of the recorded machine's files); NULL for none. */
	const char *root;
	/* The kernel release of the recorded machine (`uname -r`, the
	 * OSRELEASE feature of perf.data); NULL when unknown.  Only used for
	 * the vDSO, when the recording gave it no build-id. */
	const char *osrelease;
	/* Show symbol names as the ELF files spell them (C++ names mangled). */
	bool no_demangle;
	size_t :0;
};

/** perfctr_symbols__new() - an empty machine.  NULL + errno (ENOMEM, EINVAL). */
PERFCTR_API struct perfctr_symbols *
perfctr_symbols__new(const struct perfctr_symbols_opts *opts);

/** perfctr_symbols__delete() - free everything (NULL is a no-op). */
PERFCTR_API void perfctr_symbols__delete(struct perfctr_symbols *syms);

/**
 * perfctr_symbols__add_map() - a PERF_RECORD_MMAP/MMAP2: process @pid maps
 * @len bytes of @filename at offset @pgoff to @start.
 * A new map replaces the parts of older ones it overlaps, as mmap does.
 * Kernel maps (pid -1, "[kernel.kallsyms]...") are accepted and ignored:
 * kernel addresses are resolved through the kallsyms table.
 * Return: 0, -EINVAL (zero length), -ENOMEM.
 */
PERFCTR_API int perfctr_symbols__add_map(struct perfctr_symbols *syms,
					 pid_t pid, uint64_t start,
					 uint64_t len, uint64_t pgoff,
					 const char *filename);

/**
 * perfctr_symbols__fork() - a PERF_RECORD_FORK: @pid starts as a copy of
 * @ppid's address space (nothing to do for a thread, pid == ppid).
 * Return: 0 or -ENOMEM.
 */
PERFCTR_API int perfctr_symbols__fork(struct perfctr_symbols *syms,
				      pid_t pid, pid_t ppid);

/** perfctr_symbols__exec() - @pid exec'ed (COMM with PERF_RECORD_MISC_COMM_EXEC):
 * its old maps stay until maps added after it overlap them (as perf keeps
 * them), so that samples taken inside execve() resolve in the old image. */
PERFCTR_API void perfctr_symbols__exec(struct perfctr_symbols *syms, pid_t pid);

/**
 * perfctr_symbols__load_proc_maps() - read /proc/@pid/maps into @pid's
 * address space (for processes that were running before the recording).
 * Return: the number of file-backed maps added, or -errno (-ESRCH when
 * the process is gone).
 */
PERFCTR_API int perfctr_symbols__load_proc_maps(struct perfctr_symbols *syms,
						pid_t pid);

/**
 * perfctr_symbols__set_build_id() - the build-id that the recording gave
 * DSO @path (perf.data's HEADER_BUILD_ID), @size bytes of @build_id (at
 * most 20 are kept).
 *
 * It decides whether this process's vDSO may stand for the recorded one:
 * a "[vdso]" map is symbolised from our own vDSO only when it has our
 * vDSO's size and, when the recording gave a build-id, the same
 * build-id; without one, the same kernel release as the osrelease
 * option when that is given.  For files the recorded build-id is kept
 * but not checked: their symbols come from the files as they are.
 * Return: 0, -EINVAL, -ENOMEM.
 */
PERFCTR_API int perfctr_symbols__set_build_id(struct perfctr_symbols *syms,
					      const char *path,
					      const uint8_t *build_id,
					      size_t size);

/* Flags of perfctr_symbols__resolve(). */
enum perfctr_resolve_flags {
	/* Find the DSO only; do not open ELF files or kallsyms. */
	PERFCTR_RESOLVE_DSO_ONLY = 1u << 0,
};

struct perfctr_symbol_loc {
	size_t sz;
	/* "/usr/bin/prog", "[kernel.kallsyms]", "[vdso]", "[unknown]" ... */
	const char *dso;
	/* The function's name, or NULL when unknown. */
	const char *sym;
	/* The address in the DSO's own terms: the ELF virtual address for
	 * ELF files, the file offset otherwise, the address itself for the
	 * kernel and for addresses outside every map. */
	uint64_t dso_addr;
	/* Start address of the symbol (same terms as dso_addr), 0 if none. */
	uint64_t sym_addr;
	bool kernel;
	/* The offset in the mapped file (the address minus its map's start
	 * plus the map's file offset), as perf script shows frames; the
	 * address itself for the kernel and outside every map. */
	uint64_t file_addr;
	size_t :0;
};

/**
 * perfctr_symbols__resolve() - where @ip of process @pid is.
 * @kernel: the sample's cpumode said kernel (PERF_RECORD_MISC_KERNEL).
 * @flags:  enum perfctr_resolve_flags.
 * @loc:    filled (its sz set by the caller); never left half-filled.
 *
 * Every DSO that resolves an address counts one hit (see
 * perfctr_symbols__dso()).
 * Return: 1 when a symbol was found, 0 when only the DSO (or nothing) is
 * known, -EINVAL on bad arguments.
 */
PERFCTR_API int perfctr_symbols__resolve(struct perfctr_symbols *syms,
					 pid_t pid, uint64_t ip, bool kernel,
					 unsigned int flags,
					 struct perfctr_symbol_loc *loc);

struct perfctr_srcline {
	size_t sz;
	/* The source file as the line table names it (often a full path),
	 * NULL when unknown.  Lives as long as the symbols object. */
	const char *file;
	uint32_t line;		/* 0 when unknown */
	size_t :0;
};

/**
 * perfctr_symbols__srcline() - the source line of @ip in process @pid,
 * from the DWARF line table of the file mapped there (or of its debug
 * file under /usr/lib/debug/.build-id, which is tried first).
 * @kernel: the address is a kernel one (never resolved: no vmlinux).
 * @line:   filled (its sz set by the caller).
 * Return: 1 when the line is known, 0 when not (no map, no line table,
 * a library built without libdw), -EINVAL on bad arguments.
 */
PERFCTR_API int perfctr_symbols__srcline(struct perfctr_symbols *syms,
					 pid_t pid, uint64_t ip, bool kernel,
					 struct perfctr_srcline *line);

struct perfctr_dso_info {
	size_t sz;
	const char *path;	/* as the maps named it */
	uint64_t hits;		/* addresses resolved into it */
	uint8_t build_id[20];
	uint32_t build_id_size;	/* 0 when the file has none or is unreadable */
	bool kernel;
	size_t :0;
};

/** perfctr_symbols__nr_dsos() - DSOs known so far (mapped ones, plus the kernel). */
PERFCTR_API size_t perfctr_symbols__nr_dsos(const struct perfctr_symbols *syms);

/**
 * perfctr_symbols__dso() - DSO @idx: its path, hits and build-id (read from
 * the file's note section on the first call that asks for it; for
 * "[vdso]", from this process's vDSO).
 * Return: 0, -ERANGE when @idx is out of range.
 */
PERFCTR_API int perfctr_symbols__dso(struct perfctr_symbols *syms, size_t idx,
				     struct perfctr_dso_info *info);

/**
 * perfctr_build_id_read() - the GNU build-id of ELF file @path.
 * Return: its size in bytes (copied up to @size), -ENOENT when the file
 * has no build-id note, -ENOTSUP without libelf, other -errno on I/O.
 */
PERFCTR_API int perfctr_build_id_read(const char *path, uint8_t *buf,
				      size_t size);

/** perfctr_symbols_have_elf() - false when built without libelf (no user symbols). */
PERFCTR_API bool perfctr_symbols_have_elf(void);

/**
 * perfctr_symbols_have_demangler() - whether C++ names can be demangled:
 * libstdc++.so.6 and its __cxa_demangle() were found (this loads them,
 * once per process).  Thread-safe.
 */
PERFCTR_API bool perfctr_symbols_have_demangler(void);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_SYMBOLS_H */
