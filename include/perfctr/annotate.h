/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — the annotation of one function: its machine code
 * disassembled in-process (libcapstone, x86-64), each instruction with its
 * bytes, its text as objdump spells it (jump and call targets named
 * "<sym+0xoff>"), its source line and the inlined function it belongs to
 * (from the DWARF line tables and scopes, libdw), and the samples and
 * period that landed on it, per event.  The source lines of the function
 * are a second list, each with the sum of its instructions.
 *
 * The caller adds the samples (DSO-relative addresses, as
 * perfctr_symbols__resolve() gives them in perfctr_symbol_loc.dso_addr):
 * the annotation does not read perf.data files, so that a recording, a
 * live ring or a test's synthetic samples annotate alike.  Percentages and
 * their layout are left to the tools (perfex annotate prints perf's).
 *
 * Thread safety: an annotation is not synchronised; use it from one thread
 * at a time.  It uses the symbols object it was given (see
 * perfctr_annotation__new()), which must then not be used by another
 * thread meanwhile.
 */
#ifndef PERFCTR_ANNOTATE_H
#define PERFCTR_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perfctr/common.h>
#include <perfctr/symbols.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_annotation;

struct perfctr_annotation_opts {
	size_t sz;
	/* Events counted apart (the columns of the samples); 0 means 1. */
	size_t nr_events;
	/* No line tables read: no source lines, no inlined functions. */
	bool no_source;
	size_t :0;
};

/* What landed on an instruction or a source line, for one event. */
struct perfctr_annotation_count {
	uint64_t samples;
	uint64_t period;
};
_Static_assert(sizeof(struct perfctr_annotation_count) == 16,
	       "perfctr_annotation_count is part of the ABI");

/**
 * perfctr_annotation__new() - disassemble a function of ELF file @dso.
 * @syms:   the symbols object whose tables to use (a reader's, from
 *          perfctr_reader__symbols(), which has read them already), or
 *          NULL for one of the annotation's own (no kernel symbols, no
 *          root prefix, names demangled).
 * @dso:    the file's path as the maps name it (the symbols object's root
 *          option, if any, is prepended to open it).
 * @addr:   an address inside the function, in the file's own terms
 *          (perfctr_symbol_loc.dso_addr or .sym_addr); used when @symbol
 *          is NULL.
 * @symbol: the function's name as the symbols object shows it (demangled
 *          or not, as it was made) or as the ELF file spells it; NULL to
 *          take the function at @addr.
 * Return: the annotation, or NULL with errno: ENOENT (no such function in
 * the file, or no readable ELF file at @dso: the kernel, "[vdso]" of
 * another machine, a file gone), ENOTSUP (a library built without
 * libcapstone or libelf), ENOEXEC (the function's bytes are not in the
 * file, or not x86-64 code), EINVAL, ENOMEM, or the errno of open(2) and
 * read(2).
 */
PERFCTR_API struct perfctr_annotation *
perfctr_annotation__new(struct perfctr_symbols *syms, const char *dso,
			uint64_t addr, const char *symbol,
			const struct perfctr_annotation_opts *opts);

/** perfctr_annotation__delete() - free everything (NULL: no-op). */
PERFCTR_API void perfctr_annotation__delete(struct perfctr_annotation *ann);

/**
 * perfctr_annotation__add() - a sample of event @event at @addr (the
 * file's terms) with weight @period, counted on the instruction that
 * holds @addr and on its source line.
 * Return: 0, -ERANGE (@addr outside the function), -EINVAL (@event out
 * of range).
 */
PERFCTR_API int perfctr_annotation__add(struct perfctr_annotation *ann,
					uint64_t addr, size_t event,
					uint64_t period);

struct perfctr_annotation_symbol {
	size_t sz;
	const char *name;	/* as the symbols object shows it */
	const char *dso;	/* as given */
	uint64_t start;		/* the file's terms */
	uint64_t end;		/* exclusive */
	size_t :0;
};

/** perfctr_annotation__symbol() - the function annotated; 0 or -EINVAL. */
PERFCTR_API int perfctr_annotation__symbol(const struct perfctr_annotation *ann,
					   struct perfctr_annotation_symbol *out);

/** perfctr_annotation__nr_events() - the columns of the counts. */
PERFCTR_API size_t perfctr_annotation__nr_events(const struct perfctr_annotation *ann);

/**
 * perfctr_annotation__total() - what the whole function got for @event.
 * Return: 0, -EINVAL (@event out of range).
 */
PERFCTR_API int perfctr_annotation__total(const struct perfctr_annotation *ann,
					  size_t event,
					  struct perfctr_annotation_count *out);

struct perfctr_annotation_insn {
	size_t sz;
	uint64_t addr;		/* the file's terms */
	const uint8_t *bytes;
	uint32_t size;
	/* objdump's spelling: "mov", "jne", "movq"; operands "%rdi,%r8",
	 * a jump's "1170 <hot+0x37>".  (bad) for bytes that decode to no
	 * instruction, as objdump says. */
	const char *mnemonic;
	const char *operands;
	/* A direct jump or call: where to, and the function there with the
	 * offset into it (target_sym NULL when no symbol covers it). */
	bool has_target;
	uint64_t target;
	const char *target_sym;
	uint64_t target_offset;
	/* The source line (file NULL, line 0 when unknown) and the
	 * innermost inlined function the instruction belongs to (NULL when
	 * it belongs to the function itself). */
	const char *file;
	uint32_t line;
	const char *inlined;
	/* nr_events counts, one per event. */
	const struct perfctr_annotation_count *counts;
	size_t :0;
};

/** perfctr_annotation__nr_insns() - instructions, in address order. */
PERFCTR_API size_t perfctr_annotation__nr_insns(const struct perfctr_annotation *ann);

/**
 * perfctr_annotation__insn() - instruction @idx.  The strings and counts
 * live as long as the annotation; the counts change with later
 * perfctr_annotation__add() calls.
 * Return: 0, -ERANGE (no instruction @idx), -EINVAL.
 */
PERFCTR_API int perfctr_annotation__insn(const struct perfctr_annotation *ann,
					 size_t idx,
					 struct perfctr_annotation_insn *out);

struct perfctr_annotation_line {
	size_t sz;
	const char *file;	/* as the line table names it */
	uint32_t line;
	/* The innermost inlined function of its first instruction; NULL: the
	 * function itself. */
	const char *inlined;
	/* Its instructions (not always contiguous). */
	size_t nr_insns;
	/* Sums over its instructions, nr_events counts. */
	const struct perfctr_annotation_count *counts;
	size_t :0;
};

/** perfctr_annotation__nr_lines() - distinct source lines, in the order of
 * their first instruction; 0 without line tables. */
PERFCTR_API size_t perfctr_annotation__nr_lines(const struct perfctr_annotation *ann);

/**
 * perfctr_annotation__line() - source line @idx (as for instructions: valid
 * as long as the annotation, counts updated by later additions).
 * Return: 0, -ERANGE, -EINVAL.
 */
PERFCTR_API int perfctr_annotation__line(const struct perfctr_annotation *ann,
					 size_t idx,
					 struct perfctr_annotation_line *out);

/** perfctr_annotation_have_disassembler() - false when built without
 * libcapstone (perfctr_annotation__new() then fails with ENOTSUP). */
PERFCTR_API bool perfctr_annotation_have_disassembler(void);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_ANNOTATE_H */
