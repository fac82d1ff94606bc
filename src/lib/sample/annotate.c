// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The annotation of one function (perfctr/annotate.h): its bytes read from
 * the ELF file through the symbols object (the same symbol table that
 * named the samples), disassembled with libcapstone, each instruction
 * given its source line and inlined function from the DWARF of the file
 * (libdw, through the same object), and the samples added by the caller
 * counted on it.
 *
 * Why libcapstone and not LLVM's C disassembler (LLVMCreateDisasm): it is
 * a small C library with a stable C API and an archive, so perfex stays one
 * static program; LLVM's disassembler comes with the whole of libLLVM
 * (about 100 MB, C++ runtime, global constructors run at every start),
 * which perfex would load for every `perfex stat` too.  Both print AT&T
 * syntax; capstone's spelling differs from objdump's in small ways that
 * insn_text() evens out, so that the rows read as perf annotate's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif
#ifdef HAVE_LIBDW
#include <dwarf.h>
#endif

#include "perfctr/annotate.h"
#include "common/internal.h"
#include "sample/symbols-internal.h"

/* Functions larger than this are cut (a symbol whose size is wrong, the
 * last one of a file stretched to its end). */
#define MAX_FUNC_BYTES (16u << 20)

struct insn {
	uint64_t addr;
	uint32_t size;
	uint32_t offset;	/* into code */
	char *mnemonic;
	char *operands;
	bool has_target;
	uint64_t target;
	const char *target_sym;
	uint64_t target_offset;
	const char *file;
	uint32_t line;
	const char *inlined;
	size_t line_idx;	/* SIZE_MAX: no line */
};

struct line {
	const char *file;
	uint32_t line;
	const char *inlined;
	size_t nr_insns;
};

struct perfctr_annotation {
	struct perfctr_symbols *syms;
	bool own_syms;
	char *dso;
	char *name;
	uint64_t start, end;
	uint8_t *code;
	size_t nr_events;
	struct insn *insns;
	size_t nr_insns;
	struct line *lines;
	size_t nr_lines;
	/* nr_events per instruction, per line, and for the function. */
	struct perfctr_annotation_count *insn_counts;
	struct perfctr_annotation_count *line_counts;
	struct perfctr_annotation_count *totals;
	/* Source file names made absolute (the line table's are relative
	 * to the compilation directory when the compiler was given them so). */
	char **paths;
	size_t nr_paths;
};

bool perfctr_annotation_have_disassembler(void)
{
#if defined(HAVE_CAPSTONE) && defined(HAVE_LIBELF)
	return true;
#else
	return false;
#endif
}

void perfctr_annotation__delete(struct perfctr_annotation *ann)
{
	size_t i;

	if (!ann)
		return;
	for (i = 0; i < ann->nr_insns; i++) {
		free(ann->insns[i].mnemonic);
		free(ann->insns[i].operands);
	}
	free(ann->insns);
	for (i = 0; i < ann->nr_paths; i++)
		free(ann->paths[i]);
	free(ann->paths);
	free(ann->lines);
	free(ann->insn_counts);
	free(ann->line_counts);
	free(ann->totals);
	free(ann->code);
	free(ann->name);
	free(ann->dso);
	if (ann->own_syms)
		perfctr_symbols__delete(ann->syms);
	free(ann);
}

#if defined(HAVE_CAPSTONE) && defined(HAVE_LIBELF)

/* The size suffix capstone always writes (AT&T) and objdump leaves out
 * where a register operand says the size: these mnemonics take it. */
static const char *const suffixed[] = {
	"adc", "add", "and", "bsf", "bsr", "bt", "btc", "btr", "bts",
	"cmp", "cmpxchg", "dec", "div", "idiv", "imul", "inc", "lea", "mov",
	"movabs", "mul", "neg", "not", "or", "rol", "ror", "sal", "sar",
	"sbb", "shl", "shr", "sub", "test", "xadd", "xchg", "xor",
};

/* And these lose it whatever their operands are. */
static const char *const always_plain[] = {
	"call", "jmp", "leave", "pop", "push", "ret",
};

static bool in_list(const char *const *list, size_t n, const char *s,
		    size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && !strncmp(list[i], s, len))
			return true;
	return false;
}

/* Whether an operand (top-level, comma-separated) is a register. */
static bool has_register_operand(const char *ops)
{
	int depth = 0;
	bool start = true;

	for (; *ops; ops++) {
		if (start && *ops == '%' && !depth)
			return true;
		if (*ops == '(')
			depth++;
		else if (*ops == ')')
			depth--;
		if (*ops == ',' && !depth)
			start = true;
		else if (*ops != ' ')
			start = false;
	}
	return false;
}

static char *mnemonic_text(const char *m, const char *ops)
{
	size_t len = strlen(m);

	if (len > 1 && strchr("bwlq", m[len - 1])) {
		if ((len > 5 && !strncmp(m, "cmov", 4) &&
		     has_register_operand(ops)) ||
		    in_list(always_plain, sizeof(always_plain) /
			    sizeof(always_plain[0]), m, len - 1) ||
		    (has_register_operand(ops) &&
		     in_list(suffixed, sizeof(suffixed) / sizeof(suffixed[0]),
			     m, len - 1)))
			return strndup(m, len - 1);
	}
	return strdup(m);
}

/*
 * capstone's operands as objdump spells them: no space after a comma,
 * numbers in hex ("$0x1", "0x8(%rdi)", not "$1", "8(%rdi)"), a negative
 * immediate as the unsigned value of its @imm_size bytes
 * ("$0xffffffff"), the scale of an index always written
 * ("(%rdx,%rax,1)").
 */
static char *operands_text(const char *in, unsigned int imm_size)
{
	size_t cap = strlen(in) * 4 + 64, n = 0;
	char *out = malloc(cap);
	int depth = 0, commas = 0;
	bool start = true;

	if (!out)
		return NULL;
	while (*in && n + 40 < cap) {
		bool imm = *in == '$';
		const char *num = in + imm;

		if (*in == ',' && in[1] == ' ') {
			out[n++] = ',';
			in += 2;
			if (depth)
				commas++;
			start = true;
			continue;
		}
		if (((start && !depth) || imm) && (*num == '-' || (*num >= '0' && *num <= '9'))) {
			bool neg = *num == '-';
			char *end;
			unsigned long long v;

			v = strtoull(num + neg, &end, 0);
			if (imm && neg) {
				if (imm_size && imm_size < 8)
					v = (0 - v) & ((1ull << (imm_size * 8)) - 1);
				else
					v = 0 - v;
				neg = false;
			}
			n += (size_t)snprintf(out + n, cap - n, "%s%s0x%llx",
					      imm ? "$" : "", neg ? "-" : "", v);
			in = end;
			start = false;
			continue;
		}
		start = false;
		if (*in == '(') {
			depth++;
			commas = 0;
		} else if (*in == ')' && depth) {
			depth--;
			if (commas == 1)
				n += (size_t)snprintf(out + n, cap - n, ",1");
		}
		out[n++] = *in++;
	}
	out[n] = '\0';
	return out;
}

/* A shift or rotate by one (opcodes D0, D1): objdump names no count. */
static bool shift_by_one(const uint8_t *b, size_t size)
{
	size_t i = 0;

	while (i < size && (b[i] == 0x66 || (b[i] & 0xf0) == 0x40))
		i++;
	return i < size && (b[i] == 0xd0 || b[i] == 0xd1);
}

/*
 * What objdump adds to a memory operand: a displacement of zero that the
 * encoding holds (ModRM mod 1 or 2) written "0x0(...)", and after a
 * %rip-relative one the address it reaches, "        # 4010 <sym+0x8>".
 * Takes @ops (freed) and returns the new text, NULL without memory.
 */
static char *memory_operand(struct perfctr_annotation *ann, const cs_insn *ci,
			    char *ops)
{
	const cs_x86 *x86 = &ci->detail->x86;
	const cs_x86_op *mem = NULL;
	size_t len = strlen(ops) + 160;
	char *out, *paren;

	for (int i = 0; i < x86->op_count && !mem; i++)
		if (x86->operands[i].type == X86_OP_MEM)
			mem = &x86->operands[i];
	if (!mem)
		return ops;
	out = malloc(len);
	if (!out) {
		free(ops);
		return NULL;
	}
	paren = strchr(ops, '(');
	if (mem->mem.disp == 0 && mem->mem.base != X86_REG_RIP &&
	    ((x86->modrm >> 6) == 1 || (x86->modrm >> 6) == 2) && paren &&
	    (paren == ops || paren[-1] == ',' || paren[-1] == '*'))
		snprintf(out, len, "%.*s0x0%s", (int)(paren - ops), ops, paren);
	else
		snprintf(out, len, "%s", ops);
	if (mem->mem.base == X86_REG_RIP) {
		uint64_t to = ci->address + ci->size + (uint64_t)mem->mem.disp;
		struct pc_file_func fn;
		size_t n = strlen(out);

		n += (size_t)snprintf(out + n, len - n, "        # %" PRIx64, to);
		if (pc_symbols__file_func(ann->syms, ann->dso, to, NULL, &fn) > 0) {
			size_t more = strlen(fn.name) + 32;
			char *longer = realloc(out, n + more);

			if (longer) {
				out = longer;
				if (to == fn.start)
					snprintf(out + n, more, " <%s>", fn.name);
				else
					snprintf(out + n, more, " <%s+0x%" PRIx64 ">",
						 fn.name, to - fn.start);
			}
		}
	}
	free(ops);
	return out;
}

static int insn_text(struct perfctr_annotation *ann, csh cs,
		     const cs_insn *ci, struct insn *in)
{
	const cs_x86 *x86 = &ci->detail->x86;
	const char *ops = ci->op_str;
	unsigned int imm_size = 0;

	for (int i = 0; i < x86->op_count; i++)
		if (x86->operands[i].type == X86_OP_IMM)
			imm_size = x86->operands[i].size;

	in->mnemonic = mnemonic_text(ci->mnemonic, ops);
	if ((cs_insn_group(cs, ci, CS_GRP_JUMP) ||
	     cs_insn_group(cs, ci, CS_GRP_CALL)) &&
	    x86->op_count == 1 && x86->operands[0].type == X86_OP_IMM) {
		struct pc_file_func fn;
		char buf[64];

		in->has_target = true;
		in->target = (uint64_t)x86->operands[0].imm;
		if (in->target >= ann->start && in->target < ann->end) {
			in->target_sym = ann->name;
			in->target_offset = in->target - ann->start;
		} else if (pc_symbols__file_func(ann->syms, ann->dso,
						 in->target, NULL, &fn) > 0) {
			in->target_sym = fn.name;
			in->target_offset = in->target - fn.start;
		}
		if (!in->target_sym)
			snprintf(buf, sizeof(buf), "%" PRIx64, in->target);
		else if (in->target_offset)
			snprintf(buf, sizeof(buf), "%" PRIx64 " <%%s+0x%" PRIx64 ">",
				 in->target, in->target_offset);
		else
			snprintf(buf, sizeof(buf), "%" PRIx64 " <%%s>", in->target);
		if (in->target_sym) {
			size_t len = strlen(buf) + strlen(in->target_sym);

			in->operands = malloc(len);
			if (in->operands)
				snprintf(in->operands, len, buf, in->target_sym);
		} else {
			in->operands = strdup(buf);
		}
	} else if (shift_by_one(ci->bytes, ci->size) && !strncmp(ops, "$1, ", 4)) {
		in->operands = operands_text(ops + 4, imm_size);
	} else {
		in->operands = operands_text(ops, imm_size);
		if (in->operands)
			in->operands = memory_operand(ann, ci, in->operands);
	}
	return in->mnemonic && in->operands ? 0 : -ENOMEM;
}

static int disassemble(struct perfctr_annotation *ann, size_t len)
{
	const uint8_t *code = ann->code;
	uint64_t addr = ann->start;
	size_t cap = len / 3 + 16, left = len;
	cs_insn *ci;
	csh cs;
	int err = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOTSUP;
	cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	ci = cs_malloc(cs);
	ann->insns = calloc(cap, sizeof(*ann->insns));
	if (!ci || !ann->insns) {
		err = -ENOMEM;
		goto out;
	}
	while (left) {
		struct insn *in;
		const uint8_t *at = code;

		if (ann->nr_insns == cap) {
			struct insn *n = realloc(ann->insns, 2 * cap * sizeof(*n));

			if (!n) {
				err = -ENOMEM;
				goto out;
			}
			memset(n + cap, 0, cap * sizeof(*n));
			ann->insns = n;
			cap *= 2;
		}
		in = &ann->insns[ann->nr_insns++];
		in->line_idx = SIZE_MAX;
		in->addr = addr;
		in->offset = (uint32_t)(at - ann->code);
		if (cs_disasm_iter(cs, &code, &left, &addr, ci)) {
			in->size = ci->size;
			err = insn_text(ann, cs, ci, in);
		} else {
			/* As objdump: one byte it cannot decode, then on. */
			in->size = 1;
			in->mnemonic = strdup("(bad)");
			in->operands = strdup("");
			if (!in->mnemonic || !in->operands)
				err = -ENOMEM;
			code++;
			left--;
			addr++;
		}
		if (err)
			goto out;
	}
out:
	if (ci)
		cs_free(ci, 1);
	cs_close(&cs);
	return err;
}

#ifdef HAVE_LIBDW
/* Where code of an inlined function lies, @depth levels of inlining in. */
struct inline_range {
	uint64_t lo, hi;
	int depth;
	const char *name;
};

struct inlines {
	struct inline_range *v;
	size_t nr, cap;
};

static const char *inline_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_abstract_origin, &attr) &&
	    dwarf_formref_die(&attr, &origin))
		name = dwarf_diename(&origin);
	return name ? name : dwarf_diename(die);
}

/*
 * The inlined functions under @die (a function's DIE), with their
 * address ranges: one walk of the function's own DIEs, instead of a
 * search of the compilation unit's tree for each instruction
 * (dwarf_getscopes()), which costs as much as the unit is large.
 */
static int collect_inlines(Dwarf_Die *die, int depth, struct inlines *in)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_inlined_subroutine) {
			const char *name = inline_name(&child);
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (in->nr == in->cap) {
					size_t cap = in->cap ? in->cap * 2 : 32;
					struct inline_range *v =
						realloc(in->v, cap * sizeof(*v));

					if (!v)
						return -ENOMEM;
					in->v = v;
					in->cap = cap;
				}
				in->v[in->nr++] = (struct inline_range){
					lo, hi, depth, name };
			}
			if (collect_inlines(&child, depth + 1, in))
				return -ENOMEM;
		} else if (tag == DW_TAG_lexical_block) {
			if (collect_inlines(&child, depth, in))
				return -ENOMEM;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The function's DIE (the subprogram that holds @addr) in @cu. */
static bool function_die(Dwarf_Die *cu, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, addr, &scopes);
	bool found = false;

	for (int i = 0; i < n && !found; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*out = scopes[i];
			found = true;
		}
	}
	free(scopes);
	return found;
}

/* The innermost inlined function at @addr, or NULL. */
static const char *inlined_at(const struct inlines *in, uint64_t addr)
{
	const struct inline_range *best = NULL;

	for (size_t i = 0; i < in->nr; i++)
		if (addr >= in->v[i].lo && addr < in->v[i].hi &&
		    (!best || in->v[i].depth > best->depth))
			best = &in->v[i];
	return best ? best->name : NULL;
}

static int add_line(struct perfctr_annotation *ann, struct insn *in,
		    size_t *cap)
{
	size_t i;

	for (i = ann->nr_lines; i-- > 0;) {
		const struct line *l = &ann->lines[i];

		if (l->line == in->line && (l->file == in->file ||
					    !strcmp(l->file, in->file)))
			break;
	}
	if (i == SIZE_MAX) {
		if (ann->nr_lines == *cap) {
			size_t c = *cap ? *cap * 2 : 32;
			struct line *n = realloc(ann->lines, c * sizeof(*n));

			if (!n)
				return -ENOMEM;
			ann->lines = n;
			*cap = c;
		}
		i = ann->nr_lines++;
		ann->lines[i] = (struct line){ in->file, in->line, in->inlined, 0 };
	}
	ann->lines[i].nr_insns++;
	in->line_idx = i;
	return 0;
}

/* @file of @cu as a full path: the compilation directory before a
 * relative name, as objdump and addr2line show it.  NULL: no memory. */
static const char *full_path(struct perfctr_annotation *ann, Dwarf_Die *cu,
			     const char *file)
{
	Dwarf_Attribute attr;
	const char *dir;
	char **paths, *path;
	size_t i, len;

	if (file[0] == '/' ||
	    !(dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr))))
		return file;
	len = strlen(dir) + strlen(file) + 2;
	for (i = 0; i < ann->nr_paths; i++)
		if (!strncmp(ann->paths[i], dir, strlen(dir)) &&
		    ann->paths[i][strlen(dir)] == '/' &&
		    !strcmp(ann->paths[i] + strlen(dir) + 1, file))
			return ann->paths[i];
	path = malloc(len);
	paths = realloc(ann->paths, (ann->nr_paths + 1) * sizeof(*paths));
	if (!path || !paths) {
		free(path);
		if (paths)
			ann->paths = paths;
		return NULL;
	}
	snprintf(path, len, "%s/%s", dir, file);
	ann->paths = paths;
	ann->paths[ann->nr_paths++] = path;
	return path;
}

static int source_lines(struct perfctr_annotation *ann)
{
	Dwarf *dw = pc_symbols__file_dwarf(ann->syms, ann->dso);
	struct inlines inl = { 0 };
	Dwarf_Die cu, fn;
	size_t cap = 0;
	int err = 0;

	if (!dw || !dwarf_addrdie(dw, ann->start, &cu))
		return 0;
	if (function_die(&cu, ann->start, &fn) &&
	    collect_inlines(&fn, 0, &inl)) {
		free(inl.v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ann->nr_insns; i++) {
		struct insn *in = &ann->insns[i];
		Dwarf_Line *row = dwarf_getsrc_die(&cu, in->addr);
		int lineno;

		if (!row || dwarf_lineno(row, &lineno) || lineno <= 0)
			continue;
		in->file = dwarf_linesrc(row, NULL, NULL);
		if (!in->file)
			continue;
		in->file = full_path(ann, &cu, in->file);
		in->line = (uint32_t)lineno;
		in->inlined = inlined_at(&inl, in->addr);
		if (!in->file || add_line(ann, in, &cap)) {
			err = -ENOMEM;
			break;
		}
	}
	free(inl.v);
	return err;
}
#endif

static int find_func(struct perfctr_annotation *ann, uint64_t addr,
		     const char *symbol)
{
	struct pc_file_func fn;
	int r = pc_symbols__file_func(ann->syms, ann->dso, addr, symbol, &fn);

	if (r <= 0)
		return -ENOENT;
	ann->name = strdup(fn.name);
	if (!ann->name)
		return -ENOMEM;
	ann->start = fn.start;
	ann->end = fn.end;
	if (ann->end <= ann->start)
		return -ENOEXEC;
	if (ann->end - ann->start > MAX_FUNC_BYTES)
		ann->end = ann->start + MAX_FUNC_BYTES;
	return 0;
}

static int build(struct perfctr_annotation *ann, uint64_t addr,
		 const char *symbol, bool no_source)
{
	size_t len;
	ssize_t n;
	int err;

	err = find_func(ann, addr, symbol);
	if (err)
		return err;
	len = (size_t)(ann->end - ann->start);
	ann->code = malloc(len);
	if (!ann->code)
		return -ENOMEM;
	n = pc_symbols__file_read(ann->syms, ann->dso, ann->start, ann->code,
				  len);
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ENOEXEC;
	ann->end = ann->start + (uint64_t)n;
	err = disassemble(ann, (size_t)n);
	if (err)
		return err;
	ann->insn_counts = calloc(ann->nr_insns * ann->nr_events,
				  sizeof(*ann->insn_counts));
	ann->totals = calloc(ann->nr_events, sizeof(*ann->totals));
	if (!ann->insn_counts || !ann->totals)
		return -ENOMEM;
#ifdef HAVE_LIBDW
	if (!no_source && source_lines(ann))
		return -ENOMEM;
#else
	(void)no_source;
#endif
	if (ann->nr_lines) {
		ann->line_counts = calloc(ann->nr_lines * ann->nr_events,
					  sizeof(*ann->line_counts));
		if (!ann->line_counts)
			return -ENOMEM;
	}
	return 0;
}
#endif

static struct perfctr_annotation *annotation_fail(int err)
{
	errno = err;
	return NULL;
}

struct perfctr_annotation *
perfctr_annotation__new(struct perfctr_symbols *syms, const char *dso,
			uint64_t addr, const char *symbol,
			const struct perfctr_annotation_opts *opts)
{
	size_t nr_events = PC_OPTS_GET(opts, nr_events, 0);
	bool no_source = PC_OPTS_GET(opts, no_source, false);
	struct perfctr_annotation *ann;
	int err;

	if (!dso || !pc_opts_valid(opts, sizeof(*opts)))
		return annotation_fail(EINVAL);
	if (!perfctr_annotation_have_disassembler())
		return annotation_fail(ENOTSUP);
	ann = calloc(1, sizeof(*ann));
	if (!ann)
		return annotation_fail(ENOMEM);
	ann->nr_events = nr_events ? nr_events : 1;
	ann->syms = syms;
	if (!syms) {
		struct perfctr_symbols_opts so = { .sz = sizeof(so), .kallsyms = "" };

		ann->syms = perfctr_symbols__new(&so);
		ann->own_syms = true;
	}
	ann->dso = strdup(dso);
	if (!ann->syms || !ann->dso) {
		err = -ENOMEM;
		goto fail;
	}
#if defined(HAVE_CAPSTONE) && defined(HAVE_LIBELF)
	err = build(ann, addr, symbol, no_source);
#else
	(void)addr;
	(void)symbol;
	(void)no_source;
	err = -ENOTSUP;
#endif
	if (!err)
		return ann;
fail:
	perfctr_annotation__delete(ann);
	return annotation_fail(-err);
}

/* The instruction holding @addr. */
static struct insn *insn_at(const struct perfctr_annotation *ann,
			    uint64_t addr)
{
	size_t lo = 0, hi = ann->nr_insns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ann->insns[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr >= ann->insns[lo - 1].addr + ann->insns[lo - 1].size)
		return NULL;
	return &ann->insns[lo - 1];
}

int perfctr_annotation__add(struct perfctr_annotation *ann, uint64_t addr,
			    size_t event, uint64_t period)
{
	struct perfctr_annotation_count *c;
	struct insn *in;
	size_t idx;

	if (!ann || event >= ann->nr_events)
		return pc_err(EINVAL);
	in = insn_at(ann, addr);
	if (!in)
		return pc_err(ERANGE);
	idx = (size_t)(in - ann->insns);
	c = &ann->insn_counts[idx * ann->nr_events + event];
	c->samples++;
	c->period += period;
	ann->totals[event].samples++;
	ann->totals[event].period += period;
	if (in->line_idx != SIZE_MAX) {
		c = &ann->line_counts[in->line_idx * ann->nr_events + event];
		c->samples++;
		c->period += period;
	}
	return 0;
}

int perfctr_annotation__symbol(const struct perfctr_annotation *ann,
			       struct perfctr_annotation_symbol *out)
{
	struct perfctr_annotation_symbol s;

	if (!ann || !out || out->sz < sizeof(size_t))
		return pc_err(EINVAL);
	s = (struct perfctr_annotation_symbol){
		.sz = out->sz, .name = ann->name, .dso = ann->dso,
		.start = ann->start, .end = ann->end,
	};
	memcpy(out, &s, out->sz < sizeof(s) ? out->sz : sizeof(s));
	return 0;
}

size_t perfctr_annotation__nr_events(const struct perfctr_annotation *ann)
{
	return ann ? ann->nr_events : 0;
}

int perfctr_annotation__total(const struct perfctr_annotation *ann,
			      size_t event,
			      struct perfctr_annotation_count *out)
{
	if (!ann || !out || event >= ann->nr_events)
		return pc_err(EINVAL);
	*out = ann->totals[event];
	return 0;
}

size_t perfctr_annotation__nr_insns(const struct perfctr_annotation *ann)
{
	return ann ? ann->nr_insns : 0;
}

int perfctr_annotation__insn(const struct perfctr_annotation *ann, size_t idx,
			     struct perfctr_annotation_insn *out)
{
	struct perfctr_annotation_insn o;
	const struct insn *in;

	if (!ann || !out || out->sz < sizeof(size_t))
		return pc_err(EINVAL);
	if (idx >= ann->nr_insns)
		return pc_err(ERANGE);
	in = &ann->insns[idx];
	o = (struct perfctr_annotation_insn){
		.sz = out->sz,
		.addr = in->addr,
		.bytes = ann->code + in->offset,
		.size = in->size,
		.mnemonic = in->mnemonic,
		.operands = in->operands,
		.has_target = in->has_target,
		.target = in->target,
		.target_sym = in->target_sym,
		.target_offset = in->target_offset,
		.file = in->file,
		.line = in->line,
		.inlined = in->inlined,
		.counts = &ann->insn_counts[idx * ann->nr_events],
	};
	memcpy(out, &o, out->sz < sizeof(o) ? out->sz : sizeof(o));
	return 0;
}

size_t perfctr_annotation__nr_lines(const struct perfctr_annotation *ann)
{
	return ann ? ann->nr_lines : 0;
}

int perfctr_annotation__line(const struct perfctr_annotation *ann, size_t idx,
			     struct perfctr_annotation_line *out)
{
	struct perfctr_annotation_line o;
	const struct line *l;

	if (!ann || !out || out->sz < sizeof(size_t))
		return pc_err(EINVAL);
	if (idx >= ann->nr_lines)
		return pc_err(ERANGE);
	l = &ann->lines[idx];
	o = (struct perfctr_annotation_line){
		.sz = out->sz,
		.file = l->file,
		.line = l->line,
		.inlined = l->inlined,
		.nr_insns = l->nr_insns,
		.counts = &ann->line_counts[idx * ann->nr_events],
	};
	memcpy(out, &o, out->sz < sizeof(o) ? out->sz : sizeof(o));
	return 0;
}
