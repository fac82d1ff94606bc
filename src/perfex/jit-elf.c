// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The ELF file of one jitted function: see jit-elf.h.  The line table is
 * DWARF 4 (section 6.2 of the standard): a header naming the source
 * files, then a line program of standard opcodes only (set the file, the
 * column, advance the line, advance the address, append a row), which
 * every reader of DWARF 2 to 5 decodes the same.  A compile unit with
 * DW_AT_stmt_list, DW_AT_low_pc and DW_AT_high_pc makes the table
 * reachable: libdw finds the unit of an address by its range,
 * addr2line (which perf runs for srcline) by the line table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit-elf.h"

#ifdef HAVE_LIBELF
#include <gelf.h>
#include <libelf.h>

/* ---- a growing byte buffer ---- */

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool failed;		/* out of memory: everything after is lost */
};

static void put(struct buf *b, const void *v, size_t n)
{
	if (b->failed || !n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

static void put_u8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u16(struct buf *b, uint16_t v) { put(b, &v, 2); }
static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void put_str(struct buf *b, const char *s) { put(b, s, strlen(s) + 1); }

static void put_uleb(struct buf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		put_u8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

static void put_sleb(struct buf *b, int64_t v)
{
	for (;;) {
		uint8_t byte = v & 0x7f;

		v >>= 7;	/* arithmetic: gcc and clang sign-extend */
		if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) {
			put_u8(b, byte);
			return;
		}
		put_u8(b, byte | 0x80);
	}
}

/* Overwrite 4 bytes at @at (a length known only at the end). */
static void patch_u32(struct buf *b, size_t at, uint32_t v)
{
	if (!b->failed)
		memcpy(b->p + at, &v, 4);
}

/* ---- DWARF ---- */

enum {
	DW_TAG_compile_unit = 0x11,
	DW_AT_name = 0x03, DW_AT_stmt_list = 0x10, DW_AT_low_pc = 0x11,
	DW_AT_high_pc = 0x12,
	DW_FORM_addr = 0x01, DW_FORM_data8 = 0x07, DW_FORM_string = 0x08,
	DW_FORM_sec_offset = 0x17,
	DW_LNS_copy = 1, DW_LNS_advance_pc = 2, DW_LNS_advance_line = 3,
	DW_LNS_set_file = 4, DW_LNS_set_column = 5,
	DW_LNE_end_sequence = 1, DW_LNE_set_address = 2,
};

/* The operands of standard opcodes 1 to 12 (DWARF 4, 6.2.5.2). */
static const uint8_t standard_opcode_lengths[12] = {
	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1,
};

static void put_extended(struct buf *b, uint8_t op, const void *arg,
			 size_t size)
{
	put_u8(b, 0);
	put_uleb(b, 1 + size);
	put_u8(b, op);
	put(b, arg, size);
}

/*
 * .debug_line: one sequence from the first row's address to the end of
 * the code, so that the last row covers the rest of the function.
 */
static void debug_line(struct buf *b, const struct jit_lines *l,
		       uint64_t code_size)
{
	uint64_t addr = JIT_TEXT_OFFSET + l->rows[0].offset;
	uint64_t offset = l->rows[0].offset;
	uint32_t file = 0, column = 0;
	int64_t line = 1;		/* the registers' initial values */
	size_t unit, header, i;

	unit = b->len;
	put_u32(b, 0);			/* unit_length, patched */
	put_u16(b, 4);
	header = b->len;
	put_u32(b, 0);			/* header_length, patched */
	put_u8(b, 1);			/* minimum_instruction_length */
	put_u8(b, 1);			/* maximum_operations_per_instruction */
	put_u8(b, 1);			/* default_is_stmt */
	put_u8(b, (uint8_t)-5);		/* line_base: no special opcode used */
	put_u8(b, 14);			/* line_range */
	put_u8(b, 13);			/* opcode_base */
	put(b, standard_opcode_lengths, sizeof(standard_opcode_lengths));
	put_u8(b, 0);			/* no include_directories */
	for (i = 0; i < l->nr_files; i++) {
		put_str(b, l->files[i]);
		put_uleb(b, 0);		/* the compilation directory */
		put_uleb(b, 0);		/* no time */
		put_uleb(b, 0);		/* no size */
	}
	put_u8(b, 0);
	patch_u32(b, header, (uint32_t)(b->len - header - 4));

	put_extended(b, DW_LNE_set_address, &addr, 8);
	for (i = 0; i < l->nr_rows; i++) {
		const struct jit_line *r = &l->rows[i];

		if (r->file != file) {
			put_u8(b, DW_LNS_set_file);
			put_uleb(b, r->file + 1);	/* 1 is the first */
			file = r->file;
		}
		if (r->column != column) {
			put_u8(b, DW_LNS_set_column);
			put_uleb(b, r->column);
			column = r->column;
		}
		if (r->line != line) {
			put_u8(b, DW_LNS_advance_line);
			put_sleb(b, (int64_t)r->line - line);
			line = r->line;
		}
		if (r->offset != offset) {
			put_u8(b, DW_LNS_advance_pc);
			put_uleb(b, r->offset - offset);
			offset = r->offset;
		}
		put_u8(b, DW_LNS_copy);
	}
	if (code_size > offset) {
		put_u8(b, DW_LNS_advance_pc);
		put_uleb(b, code_size - offset);
	}
	put_extended(b, DW_LNE_end_sequence, NULL, 0);
	patch_u32(b, unit, (uint32_t)(b->len - unit - 4));
}

/* .debug_abbrev: the one abbreviation .debug_info uses. */
static void debug_abbrev(struct buf *b)
{
	put_uleb(b, 1);
	put_uleb(b, DW_TAG_compile_unit);
	put_u8(b, 0);			/* DW_CHILDREN_no */
	put_uleb(b, DW_AT_name);
	put_uleb(b, DW_FORM_string);
	put_uleb(b, DW_AT_stmt_list);
	put_uleb(b, DW_FORM_sec_offset);
	put_uleb(b, DW_AT_low_pc);
	put_uleb(b, DW_FORM_addr);
	put_uleb(b, DW_AT_high_pc);
	put_uleb(b, DW_FORM_data8);	/* DWARF 4: the length */
	put_uleb(b, 0);
	put_uleb(b, 0);
	put_uleb(b, 0);			/* end of the table */
}

/* .debug_info: a compile unit named by the first row's file, over the
 * code, whose lines are at offset 0 of .debug_line. */
static void debug_info(struct buf *b, const struct jit_lines *l,
		       uint64_t code_size)
{
	size_t unit = b->len;

	put_u32(b, 0);			/* unit_length, patched */
	put_u16(b, 4);
	put_u32(b, 0);			/* debug_abbrev_offset */
	put_u8(b, 8);			/* address_size */
	put_uleb(b, 1);
	put_str(b, l->files[l->rows[0].file]);
	put_u32(b, 0);
	put_u64(b, JIT_TEXT_OFFSET);
	put_u64(b, code_size);
	patch_u32(b, unit, (uint32_t)(b->len - unit - 4));
}

/* .debug_aranges: the unit's one range, by which libdw (0.188 and
 * others: dwarf_addrdie) finds the unit of an address. */
static void debug_aranges(struct buf *b, uint64_t code_size)
{
	size_t unit = b->len;

	put_u32(b, 0);			/* unit_length, patched */
	put_u16(b, 2);
	put_u32(b, 0);			/* the unit's offset in .debug_info */
	put_u8(b, 8);			/* address_size */
	put_u8(b, 0);			/* segment_selector_size */
	put_u32(b, 0);			/* to the tuples' 16-byte alignment */
	put_u64(b, JIT_TEXT_OFFSET);
	put_u64(b, code_size);
	put_u64(b, 0);
	put_u64(b, 0);
	patch_u32(b, unit, (uint32_t)(b->len - unit - 4));
}

/* ---- the ELF file ---- */

enum section {
	S_TEXT = 1, S_EH_FRAME, S_EH_FRAME_HDR, S_SHSTRTAB, S_SYMTAB,
	S_STRTAB, S_NOTE, S_DEBUG_LINE, S_DEBUG_INFO, S_DEBUG_ABBREV,
	S_DEBUG_ARANGES, S_NR,
};

static const char *const section_names[S_NR] = {
	[S_TEXT] = ".text", [S_EH_FRAME] = ".eh_frame",
	[S_EH_FRAME_HDR] = ".eh_frame_hdr", [S_SHSTRTAB] = ".shstrtab",
	[S_SYMTAB] = ".symtab", [S_STRTAB] = ".strtab",
	[S_NOTE] = ".note.gnu.build-id", [S_DEBUG_LINE] = ".debug_line",
	[S_DEBUG_INFO] = ".debug_info", [S_DEBUG_ABBREV] = ".debug_abbrev",
	[S_DEBUG_ARANGES] = ".debug_aranges",
};

struct elf_out {
	Elf *elf;
	uint64_t off;			/* the next free file offset */
	size_t index[S_NR];		/* section number of each (0: none) */
	size_t nr;			/* sections so far, with the null one */
	uint32_t name_at[S_NR];		/* offsets into .shstrtab */
};

/* Add section @s holding @buf: at file offset and address @addr when it
 * is loaded (sh_addr != 0), else at the next offset aligned to @align. */
static Elf_Scn *add_section(struct elf_out *w, enum section s, uint32_t type,
			    uint64_t flags, const void *buf, size_t size,
			    uint64_t addr, uint64_t align)
{
	Elf_Scn *scn = elf_newscn(w->elf);
	Elf_Data *d = scn ? elf_newdata(scn) : NULL;
	GElf_Shdr sh;

	if (!d || !gelf_getshdr(scn, &sh))
		return NULL;
	d->d_buf = (void *)buf;
	d->d_size = size;
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	sh.sh_name = w->name_at[s];
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_offset = addr ? addr : (w->off + align - 1) & ~(align - 1);
	sh.sh_addr = addr;
	sh.sh_size = size;
	sh.sh_addralign = align;
	sh.sh_entsize = 0;
	w->off = sh.sh_offset + size;
	w->index[s] = ++w->nr;
	return gelf_update_shdr(scn, &sh) ? scn : NULL;
}

/* A build-id that is the same for the same function, place, lines and
 * unwind tables: 20 bytes of FNV-1a over them, seeded three ways. */
static void make_build_id(uint8_t id[20], const struct jit_function *fn,
			  const struct buf *lines)
{
	uint64_t h[3] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull,
			  0x9e3779b97f4a7c15ull };
	const struct { const void *p; size_t n; } parts[] = {
		{ fn->name, strlen(fn->name) }, { &fn->addr, 8 },
		{ fn->code, fn->size }, { lines->p, lines->len },
		{ fn->unwind ? fn->unwind->eh_frame : NULL,
		  fn->unwind ? fn->unwind->eh_frame_size : 0 },
		{ fn->unwind ? fn->unwind->eh_frame_hdr : NULL,
		  fn->unwind ? fn->unwind->eh_frame_hdr_size : 0 },
	};
	size_t i, j, k;

	for (k = 0; k < 3; k++)
		for (j = 0; j < sizeof(parts) / sizeof(parts[0]); j++)
			for (i = 0; i < parts[j].n; i++)
				h[k] = (h[k] ^ ((const uint8_t *)parts[j].p)[i]) *
				       0x100000001b3ull;
	memcpy(id, h, 20);
}

/* The DWARF sections, in the order of enum section. */
struct dwarf_bufs {
	struct buf line, info, abbrev, aranges;
};

/* What the sections point at, alive until the file is written. */
struct elf_parts {
	Elf64_Sym syms[2];
	struct {
		Elf64_Nhdr nh;
		char owner[4];
		uint8_t id[20];
	} note;
	char *strtab;
	size_t strtab_size;
};

/* Place every section (the file's layout is ours: ELF_F_LAYOUT). */
static int add_sections(struct elf_out *w, const struct jit_function *fn,
			struct elf_parts *parts, const struct buf *shstrtab,
			const struct dwarf_bufs *dw)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	w->off = JIT_TEXT_OFFSET;
	if (!add_section(w, S_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
			 fn->code, fn->size, JIT_TEXT_OFFSET, 16))
		return -EIO;
	if (fn->unwind) {
		uint64_t at = (JIT_TEXT_OFFSET + fn->size + 7) & ~7ull;

		if (!add_section(w, S_EH_FRAME, SHT_PROGBITS, SHF_ALLOC,
				 fn->unwind->eh_frame, fn->unwind->eh_frame_size,
				 at, 8) ||
		    !add_section(w, S_EH_FRAME_HDR, SHT_PROGBITS, SHF_ALLOC,
				 fn->unwind->eh_frame_hdr,
				 fn->unwind->eh_frame_hdr_size,
				 at + fn->unwind->eh_frame_size, 4))
			return -EIO;
	}
	if (!add_section(w, S_SHSTRTAB, SHT_STRTAB, 0, shstrtab->p,
			 shstrtab->len, 0, 1))
		return -EIO;
	scn = add_section(w, S_SYMTAB, SHT_SYMTAB, 0, parts->syms,
			  sizeof(parts->syms), 0, 8);
	if (!scn || !gelf_getshdr(scn, &sh))
		return -EIO;
	sh.sh_link = (uint32_t)w->index[S_SYMTAB] + 1;	/* .strtab, next */
	sh.sh_info = 2;		/* the first non-local symbol: none */
	sh.sh_entsize = sizeof(Elf64_Sym);
	if (!gelf_update_shdr(scn, &sh))
		return -EIO;
	elf_getdata(scn, NULL)->d_type = ELF_T_SYM;
	/* The note is allocated as perf has it, though at address 0. */
	if (!add_section(w, S_STRTAB, SHT_STRTAB, 0, parts->strtab,
			 parts->strtab_size, 0, 1) ||
	    !add_section(w, S_NOTE, SHT_NOTE, SHF_ALLOC, &parts->note,
			 sizeof(parts->note), 0, 4))
		return -EIO;
	if (dw->line.len) {
		enum section sec = S_DEBUG_LINE;
		const struct buf *b;

		for (b = &dw->line; sec <= S_DEBUG_ARANGES; b++, sec++)
			if (!add_section(w, sec, SHT_PROGBITS, 0, b->p, b->len,
					 0, 1))
				return -EIO;
	}
	return 0;
}

static void make_parts(struct elf_parts *parts, const struct jit_function *fn,
		       const struct buf *line)
{
	memset(parts->syms, 0, sizeof(parts->syms));
	parts->syms[1].st_name = 1;
	parts->syms[1].st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC);
	parts->syms[1].st_shndx = 1;		/* .text */
	parts->syms[1].st_value = JIT_TEXT_OFFSET;
	parts->syms[1].st_size = fn->size;
	parts->note.nh.n_namesz = 4;
	parts->note.nh.n_descsz = 20;
	parts->note.nh.n_type = NT_GNU_BUILD_ID;
	memcpy(parts->note.owner, "GNU", 4);
	make_build_id(parts->note.id, fn, line);
}

/* Write the file to @fd: headers, then sections, then the section
 * headers after the last one. */
static int write_file(int fd, const struct jit_function *fn,
		      struct elf_parts *parts, const struct buf *shstrtab,
		      const struct dwarf_bufs *dw)
{
	struct elf_out w = { .nr = 0 };
	GElf_Ehdr eh;
	GElf_Phdr ph;
	uint32_t at;
	int s, err = -EIO;

	/* .shstrtab holds the names in section_names' order. */
	for (s = 1, at = 1; s < S_NR; s++) {
		w.name_at[s] = at;
		at += (uint32_t)strlen(section_names[s]) + 1;
	}
	if (elf_version(EV_CURRENT) == EV_NONE ||
	    !(w.elf = elf_begin(fd, ELF_C_WRITE, NULL)) ||
	    !gelf_newehdr(w.elf, ELFCLASS64) || !gelf_newphdr(w.elf, 1))
		goto out;
	/* Our layout, so that the code is where the MMAP2's pgoff says. */
	elf_flagelf(w.elf, ELF_C_SET, ELF_F_LAYOUT);
	err = add_sections(&w, fn, parts, shstrtab, dw);
	if (err)
		goto out;
	err = -EIO;
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_offset = JIT_TEXT_OFFSET;
	ph.p_vaddr = ph.p_paddr = JIT_TEXT_OFFSET;
	ph.p_filesz = ph.p_memsz = fn->size;
	ph.p_align = 8;
	if (!gelf_update_phdr(w.elf, 0, &ph) || !gelf_getehdr(w.elf, &eh))
		goto out;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_DYN;
	eh.e_machine = fn->machine;
	eh.e_version = EV_CURRENT;
	eh.e_entry = JIT_TEXT_OFFSET;
	eh.e_phoff = sizeof(Elf64_Ehdr);
	eh.e_shoff = (w.off + 7) & ~7ull;
	eh.e_shstrndx = (uint16_t)w.index[S_SHSTRTAB];
	if (gelf_update_ehdr(w.elf, &eh) && elf_update(w.elf, ELF_C_WRITE) >= 0)
		err = 0;
out:
	if (w.elf)
		elf_end(w.elf);
	return err;
}

int jit_elf_write(const char *path, const struct jit_function *fn)
{
	struct buf shstrtab = { 0 };
	struct dwarf_bufs dw = { { 0 } };
	struct elf_parts parts;
	size_t name_len = strlen(fn->name);
	int s, fd, err;

	for (s = 0; s < S_NR; s++)
		put_str(&shstrtab, s ? section_names[s] : "");
	if (fn->lines && fn->lines->nr_rows) {
		debug_line(&dw.line, fn->lines, fn->size);
		debug_info(&dw.info, fn->lines, fn->size);
		debug_abbrev(&dw.abbrev);
		debug_aranges(&dw.aranges, fn->size);
	}
	parts.strtab_size = name_len + 2;
	parts.strtab = calloc(1, parts.strtab_size);
	if (!parts.strtab || shstrtab.failed || dw.line.failed ||
	    dw.info.failed || dw.abbrev.failed || dw.aranges.failed) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(parts.strtab + 1, fn->name, name_len);
	make_parts(&parts, fn, &dw.line);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_file(fd, fn, &parts, &shstrtab, &dw);
	if (close(fd) && !err)
		err = -errno;
out:
	free(parts.strtab);
	free(shstrtab.p);
	free(dw.line.p);
	free(dw.info.p);
	free(dw.abbrev.p);
	free(dw.aranges.p);
	return err;
}
#else
int jit_elf_write(const char *path, const struct jit_function *fn)
{
	(void)path;
	(void)fn;
	return -ENOTSUP;
}
#endif /* HAVE_LIBELF */
