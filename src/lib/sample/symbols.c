// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Symbolisation: per-process address spaces from mmap records, DSOs with
 * lazily loaded ELF symbol tables, the kernel from kallsyms.
 *
 * Lookups are binary searches over sorted arrays: one for the maps of a
 * process, one for the symbols of a DSO.  A report over millions of
 * samples resolves each address in well under a microsecond.
 *
 * C++ names are demangled lazily, the first time a symbol is returned:
 * a report touches a few hundred symbols of DSOs that have tens of
 * thousands.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifdef HAVE_LIBELF
#include <gelf.h>
#include <libelf.h>
#endif
#ifdef HAVE_LIBDW
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#endif

#include "perfctr/symbols.h"
#include "common/internal.h"
#include "sample/symbols-internal.h"
#include "sample/perfmap.h"

#define KERNEL_DSO "[kernel.kallsyms]"
#define VDSO_DSO "[vdso]"

/* sym.shown: the name as it is, no demangled form. */
#define SHOWN_AS_IS UINT32_MAX

struct sym {
	uint64_t start;
	uint64_t end;		/* exclusive */
	uint32_t name;		/* offset into the owner's name pool */
	uint32_t module;	/* kallsyms: index into modules + 1, or 0 */
	uint32_t rank;		/* among aliases, lower wins: global, weak, local */
	uint32_t shown;		/* 0: not looked at yet; 1 + index into
				 * demangled[]; SHOWN_AS_IS */
};

struct kspan {
	uint64_t lo, hi;	/* [lo, hi); lo > hi: no symbol */
};

struct symtab {
	struct sym *syms;
	size_t nr;
	char *names;
	size_t names_len, names_cap;
	/* names is a mapping of names_cap bytes (a whole kallsyms file read
	 * in place), not an allocation. */
	bool names_mapped;
	/* Demangled names, each its own allocation: the strings handed out
	 * must not move when more are added. */
	char **demangled;
	size_t nr_demangled, cap_demangled;
};

struct segment {		/* a PT_LOAD: file offset -> virtual address */
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

struct dso {
	char *path;
	uint64_t hits;
	bool kernel;
	bool vdso;
	bool loaded;		/* ELF read (or tried) */
	bool build_id_read;
	bool elf;		/* a readable ELF file */
	uint8_t build_id[20];
	uint32_t build_id_size;
	uint8_t recorded_id[20];	/* perfctr_symbols__set_build_id() */
	uint32_t recorded_id_size;
	struct segment *segs;
	size_t nr_segs;
	struct symtab symtab;
	/* The file as it was read, so that an object kept across readers
	 * (pc_symbols__forget_processes()) sees that it changed. */
	bool stat_ok;
	dev_t st_dev;
	ino_t st_ino;
	off_t st_size;
	struct timespec st_mtim;
#ifdef HAVE_LIBDW
	/* Line tables (perfctr_symbols__srcline()), opened on first use
	 * from the file or its debug file. */
	bool dwarf_tried;
	int dwarf_fd;
	Elf *dwarf_elf;
	Dwarf *dwarf;
#endif
};

struct map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	struct dso *dso;
};

struct mspace {
	pid_t pid;
	bool used;
	uint64_t generation;	/* pc_symbols__generation() */
	struct map *maps;	/* sorted by start, non-overlapping */
	size_t nr, cap;
};

struct perfctr_symbols {
	char *kallsyms_path;	/* NULL: no kernel symbols */
	char *root;
	char *osrelease;	/* of the recorded machine, NULL: unknown */
	bool demangle;
	bool kallsyms_loaded;
	struct symtab kallsyms;
	char **modules;		/* "[ext4]" ... */
	size_t nr_modules;
	/* Where the kernel (spans[0]) and each module (spans[m]) have text,
	 * as far as the table read knows: a kernel address outside them
	 * may be a module loaded since (kallsyms_renew()). */
	struct kspan *spans;
	/* What the table was read from (kallsyms_signature()), and whether
	 * it was looked at again since the last forget_processes. */
	uint64_t kallsyms_sig;
	bool kallsyms_checked;
	/* The table read before the last renewal: the names handed out
	 * from it stay valid until the next forget_processes. */
	struct symtab kallsyms_old;
	char **modules_old;
	size_t nr_modules_old;
	struct dso *kernel;

	struct dso **dsos;
	size_t nr_dsos, cap_dsos;
	struct dso **dso_hash;	/* open addressing by path */
	size_t dso_hash_cap;

	struct mspace *spaces;	/* open addressing by pid */
	size_t spaces_cap, nr_spaces;
	uint64_t generation;	/* the last one handed to an mspace */
	struct pc_perfmaps *perfmaps;	/* JIT code's names, made when hit */
};

/* Record (@fd or @path) what identifies @dso's file as read; or, when
 * already recorded, whether it is the same file still. */
static bool dso_stat(struct dso *dso, int fd, const char *path)
{
	struct stat st;

	if (fd >= 0 ? fstat(fd, &st) : stat(path, &st))
		return false;
	if (fd >= 0) {
		dso->stat_ok = true;
		dso->st_dev = st.st_dev;
		dso->st_ino = st.st_ino;
		dso->st_size = st.st_size;
		dso->st_mtim = st.st_mtim;
		return true;
	}
	return dso->stat_ok && st.st_dev == dso->st_dev &&
	       st.st_ino == dso->st_ino && st.st_size == dso->st_size &&
	       st.st_mtim.tv_sec == dso->st_mtim.tv_sec &&
	       st.st_mtim.tv_nsec == dso->st_mtim.tv_nsec;
}

static uint64_t hash_pid(pid_t pid)
{
	return (uint64_t)(uint32_t)pid * 0x9E3779B97F4A7C15ULL;
}

/* ---- symbol tables ---- */

/* Room for @more symbols beyond those of @tab, in one allocation when
 * the caller knows how many will come. */
static int symtab_reserve(struct symtab *tab, size_t *cap, size_t more)
{
	struct sym *n;
	size_t ncap;

	if (tab->nr + more <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 256;
	if (ncap < tab->nr + more)
		ncap = tab->nr + more;
	n = realloc(tab->syms, ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	tab->syms = n;
	*cap = ncap;
	return 0;
}

/* A symbol whose name is already in the pool, at offset @name. */
static int symtab_push(struct symtab *tab, size_t *cap, uint64_t start,
		       uint64_t size, uint32_t name, uint32_t module,
		       uint32_t rank)
{
	struct sym *s;

	if (symtab_reserve(tab, cap, 1))
		return -ENOMEM;
	s = &tab->syms[tab->nr++];
	s->start = start;
	s->end = start + size;
	s->name = name;
	s->module = module;
	s->rank = rank;
	s->shown = 0;
	return 0;
}

#ifdef HAVE_LIBELF	/* the ELF symbol tables' ways in */
/* @size bytes of names (a string table) into the pool at once, with a
 * NUL after them; *@base: where they start. */
static int symtab_add_names(struct symtab *tab, const void *names,
			    size_t size, uint32_t *base)
{
	size_t need = tab->names_len + size + 1;

	if (need > UINT32_MAX)
		return -ENOMEM;
	if (need > tab->names_cap) {
		size_t cap = tab->names_cap ? tab->names_cap * 2 : 4096;
		char *n;

		while (cap < need)
			cap *= 2;
		n = realloc(tab->names, cap);
		if (!n)
			return -ENOMEM;
		tab->names = n;
		tab->names_cap = cap;
	}
	memcpy(tab->names + tab->names_len, names, size);
	tab->names[tab->names_len + size] = '\0';
	*base = (uint32_t)tab->names_len;
	tab->names_len = need;
	return 0;
}

static int symtab_add(struct symtab *tab, size_t *cap, uint64_t start,
		      uint64_t size, const char *name, uint32_t module,
		      uint32_t rank)
{
	uint32_t off;

	if (symtab_add_names(tab, name, strlen(name), &off))
		return -ENOMEM;
	return symtab_push(tab, cap, start, size, off, module, rank);
}
#endif

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Among aliases, the sized one first: it knows where it ends. */
	if ((x->end > x->start) != (y->end > y->start))
		return x->end > x->start ? -1 : 1;
	/* Then the name a user would look for: global before weak before
	 * local (as perf chooses). */
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Sort, drop aliases, give size-less symbols the room up to the next one. */
static void symtab_finish(struct symtab *tab, uint64_t last_size)
{
	size_t i, out = 0;

	if (!tab->nr)
		return;
	/* kallsyms comes sorted by address: then only the aliases of an
	 * address need their order, and the big sort is saved. */
	for (i = 1; i < tab->nr; i++)
		if (tab->syms[i - 1].start > tab->syms[i].start)
			break;
	if (i < tab->nr) {
		qsort(tab->syms, tab->nr, sizeof(*tab->syms), sym_cmp);
	} else {
		size_t run;

		for (i = 0; i < tab->nr; i = run) {
			for (run = i + 1; run < tab->nr &&
			     tab->syms[run].start == tab->syms[i].start; run++)
				;
			if (run - i > 1)
				qsort(tab->syms + i, run - i,
				      sizeof(*tab->syms), sym_cmp);
		}
	}
	for (i = 0; i < tab->nr; i++) {
		if (out && tab->syms[out - 1].start == tab->syms[i].start)
			continue;
		tab->syms[out++] = tab->syms[i];
	}
	tab->nr = out;
	for (i = 0; i < tab->nr; i++) {
		struct sym *s = &tab->syms[i];

		if (s->end > s->start)
			continue;
		s->end = i + 1 < tab->nr ? tab->syms[i + 1].start
					 : s->start + last_size;
	}
}

static struct sym *symtab_find(const struct symtab *tab, uint64_t addr)
{
	size_t lo = 0, hi = tab->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tab->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr >= tab->syms[lo - 1].end)
		return NULL;
	return &tab->syms[lo - 1];
}

static void symtab_free(struct symtab *tab)
{
	size_t i;

	for (i = 0; i < tab->nr_demangled; i++)
		free(tab->demangled[i]);
	free(tab->demangled);
	free(tab->syms);
	if (tab->names_mapped)
		munmap(tab->names, tab->names_cap);
	else
		free(tab->names);
	memset(tab, 0, sizeof(*tab));
}

/* ---- C++ names ---- */

/* The C++ ABI's demangler: malloc'ed result, *status 0 on success. */
typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf,
				 size_t *len, int *status);

static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn demangler;

/*
 * A weak reference: a program that has the C++ runtime linked in (a C++
 * program, or the static perfex, which links libstdc++'s archive for this
 * because a static program must never load a shared library: it would
 * bring a second C library) provides the demangler itself.
 */
#pragma weak __cxa_demangle
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * Otherwise loaded at run time, so that neither libperfctr nor perfex
 * links the C++ runtime, which every C++ program's machine has anyway.
 * The handle stays open for the life of the process: the function is used
 * until then.
 */
static void demangler_load(void)
{
	void *lib;

	if (__cxa_demangle) {
		demangler = __cxa_demangle;
		return;
	}
	lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (!lib)
		return;
	demangler = (cxa_demangle_fn)dlsym(lib, "__cxa_demangle");
	if (!demangler)
		dlclose(lib);
}

bool perfctr_symbols_have_demangler(void)
{
	pthread_once(&demangler_once, demangler_load);
	return demangler != NULL;
}

static bool ends_with(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);

	return n >= t && !memcmp(s + n - t, tail, t);
}

void pc_demangled_short(char *s)
{
	static const char *const quals[] = { " const", " volatile", " &&",
					     " &", " noexcept" };
	size_t n = strlen(s), i, space = 0;
	bool again = true;
	int depth = 0;

	while (n && s[n - 1] == ']') {
		char *c = NULL, *p = s;

		while ((p = strstr(p, " [clone ")) && p < s + n) {
			c = p;
			p++;
		}
		if (!c)
			break;
		n = (size_t)(c - s);
	}
	while (again) {
		again = false;
		for (i = 0; i < sizeof(quals) / sizeof(quals[0]); i++)
			if (ends_with(s, n, quals[i])) {
				n -= strlen(quals[i]);
				again = true;
			}
	}
	if (!n || s[n - 1] != ')')
		return;
	for (i = n; i-- > 0;) {
		depth += s[i] == ')' ? 1 : s[i] == '(' ? -1 : 0;
		if (!depth)
			break;
	}
	if (depth || i == 0 || i == (size_t)-1)
		return;
	n = i;
	s[n] = '\0';
	if (s[n - 1] != '>')
		return;
	/* A template function's return type ends at the last space outside
	 * brackets ("operator new" is a name, not a type and a name). */
	depth = 0;
	for (i = 0; i < n; i++) {
		if (s[i] == '<' || s[i] == '(')
			depth++;
		else if ((s[i] == '>' || s[i] == ')') && depth > 0)
			depth--;
		else if (s[i] == ' ' && !depth)
			space = i;
	}
	if (space && !ends_with(s, space, "operator"))
		memmove(s, s + space + 1, n - space);
}

/* What sym.shown should be for @name: its demangled form kept in @tab. */
static uint32_t demangle_into(struct symtab *tab, const char *name)
{
	char *out;
	int status = -1;

	/* Itanium C++ ABI names start with _Z; anything else (C, the
	 * kernel) is shown as it is. */
	if (name[0] != '_' || name[1] != 'Z' || !perfctr_symbols_have_demangler())
		return SHOWN_AS_IS;
	out = demangler(name, NULL, NULL, &status);
	if (!out || status) {
		free(out);
		return SHOWN_AS_IS;
	}
	pc_demangled_short(out);
	if (tab->nr_demangled == tab->cap_demangled) {
		size_t cap = tab->cap_demangled ? tab->cap_demangled * 2 : 16;
		char **n = realloc(tab->demangled, cap * sizeof(*n));

		if (!n) {
			free(out);
			/* Not remembered: tried again next time. */
			return 0;
		}
		tab->demangled = n;
		tab->cap_demangled = cap;
	}
	tab->demangled[tab->nr_demangled++] = out;
	return (uint32_t)tab->nr_demangled;
}

static const char *sym_name(const struct perfctr_symbols *syms,
			    struct symtab *tab, struct sym *s)
{
	const char *name = tab->names + s->name;

	if (!syms->demangle)
		return name;
	if (!s->shown)
		s->shown = demangle_into(tab, name);
	if (!s->shown || s->shown == SHOWN_AS_IS)
		return name;
	return tab->demangled[s->shown - 1];
}

/* ---- kallsyms ---- */

static int kallsyms_module(struct perfctr_symbols *syms, const char *name,
			   size_t len, uint32_t *idx)
{
	char **n;
	char *s;
	size_t i;

	for (i = syms->nr_modules; i-- > 0;) {
		if (strlen(syms->modules[i]) == len + 2 &&
		    !strncmp(syms->modules[i] + 1, name, len)) {
			*idx = (uint32_t)i + 1;
			return 0;
		}
	}
	s = malloc(len + 3);
	n = realloc(syms->modules, (syms->nr_modules + 1) * sizeof(*n));
	if (!s || !n) {
		free(s);
		if (n)
			syms->modules = n;
		return -ENOMEM;
	}
	syms->modules = n;
	s[0] = '[';
	memcpy(s + 1, name, len);
	s[len + 1] = ']';
	s[len + 2] = '\0';
	syms->modules[syms->nr_modules++] = s;
	*idx = (uint32_t)syms->nr_modules;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* Beyond a module's or the kernel's last symbol: kallsyms has no sizes,
 * so the last function is given this much room, as it is by
 * symtab_finish(). */
#define KSPAN_TAIL 4096

/* The text spans of the kernel and of each module in the table read. */
static void kallsyms_spans(struct perfctr_symbols *syms)
{
	size_t n = syms->nr_modules + 1;

	free(syms->spans);
	syms->spans = malloc(n * sizeof(*syms->spans));
	if (!syms->spans)
		return;
	for (size_t m = 0; m < n; m++) {
		syms->spans[m].lo = UINT64_MAX;
		syms->spans[m].hi = 0;
	}
	for (size_t i = 0; i < syms->kallsyms.nr; i++) {
		const struct sym *sym = &syms->kallsyms.syms[i];
		struct kspan *sp = &syms->spans[sym->module];

		if (sym->start < sp->lo)
			sp->lo = sym->start;
		if (sym->start + KSPAN_TAIL > sp->hi)
			sp->hi = sym->start + KSPAN_TAIL;
	}
}

/* Whether the table read knows kernel address @ip: in the span of the
 * kernel's or of a module's text. */
static bool kallsyms_knows(const struct perfctr_symbols *syms, uint64_t ip)
{
	if (!syms->spans)
		return true;
	for (size_t m = 0; m <= syms->nr_modules; m++)
		if (ip >= syms->spans[m].lo && ip < syms->spans[m].hi)
			return true;
	return false;
}

static uint64_t fnv_bytes(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ULL;
	return h;
}

/*
 * What changes when the kernel's symbols do: a file's identity (a copy
 * of kallsyms), or for procfs, whose files have neither size nor time,
 * the modules beside it: each one's name, size and address in
 * /proc/modules (not its use count, which changes all the time); 0
 * where the kernel has no modules.
 */
static uint64_t kallsyms_signature(const struct perfctr_symbols *syms)
{
	uint64_t h = 1469598103934665603ULL;
	char path[4096], *slash, *line = NULL;
	size_t linecap = 0;
	struct stat st;
	FILE *f;

	if (!stat(syms->kallsyms_path, &st) && S_ISREG(st.st_mode) &&
	    st.st_size > 0) {
		uint64_t v[] = { st.st_dev, st.st_ino, (uint64_t)st.st_size,
				 (uint64_t)st.st_mtim.tv_sec,
				 (uint64_t)st.st_mtim.tv_nsec };

		return fnv_bytes(h, v, sizeof(v));
	}
	snprintf(path, sizeof(path), "%s", syms->kallsyms_path);
	slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path,
		 sizeof(path) - (size_t)(slash ? slash + 1 - path : 0),
		 "modules");
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* "name size refcount deps state address ..." */
	while (getline(&line, &linecap, f) > 0) {
		char *save = NULL, *tok = strtok_r(line, " \n", &save);

		for (int field = 0; tok; field++) {
			if (field == 0 || field == 1 || field == 5)
				h = fnv_bytes(h, tok, strlen(tok) + 1);
			tok = strtok_r(NULL, " \n", &save);
		}
	}
	free(line);
	fclose(f);
	return h;
}

static void kallsyms_free_old(struct perfctr_symbols *syms)
{
	for (size_t i = 0; i < syms->nr_modules_old; i++)
		free(syms->modules_old[i]);
	free(syms->modules_old);
	syms->modules_old = NULL;
	syms->nr_modules_old = 0;
	symtab_free(&syms->kallsyms_old);
}

/* The table read is put aside (kallsyms_old) for a new one. */
static void kallsyms_retire(struct perfctr_symbols *syms)
{
	kallsyms_free_old(syms);
	syms->kallsyms_old = syms->kallsyms;
	syms->modules_old = syms->modules;
	syms->nr_modules_old = syms->nr_modules;
	memset(&syms->kallsyms, 0, sizeof(syms->kallsyms));
	syms->modules = NULL;
	syms->nr_modules = 0;
	free(syms->spans);
	syms->spans = NULL;
	syms->kallsyms_loaded = false;
}

static void load_kallsyms(struct perfctr_symbols *syms);

/*
 * A kernel address that the table read does not know: read the table
 * again when its source changed (a module loaded since), once per reader
 * at most (pc_symbols__forget_processes()), so that addresses no table
 * knows (a JIT's) cost one look and no more.  Return true when read
 * again.
 */
static bool kallsyms_renew(struct perfctr_symbols *syms, uint64_t ip)
{
	if (syms->kallsyms_checked || !syms->kallsyms_path ||
	    kallsyms_knows(syms, ip))
		return false;
	syms->kallsyms_checked = true;
	if (kallsyms_signature(syms) == syms->kallsyms_sig)
		return false;
	kallsyms_retire(syms);
	load_kallsyms(syms);
	return true;
}

/*
 * The whole of @fd in a private mapping of *@size bytes (the file's,
 * and a NUL after it in *@len + 1), grown by remapping: procfs gives no
 * size, and a kallsyms is megabytes, which realloc would copy on each
 * growth.  Read in large pieces: procfs says its block size is 1 KiB,
 * and a read per KiB of a 5 MB kallsyms costs more than twice the time
 * (0.26 s against 0.10 s with dd on a build VM).  NULL on failure.
 */
static char *map_whole(int fd, size_t *len, size_t *size)
{
	size_t cap = 8u << 20, n = 0;
	char *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		return NULL;
	/* Megabytes touched once: in huge pages where the kernel has them,
	 * a fault per 2 MiB instead of per 4 KiB. */
	madvise(buf, cap, MADV_HUGEPAGE);
	for (;;) {
		ssize_t r;

		if (cap - n < (64u << 10) + 1) {
			char *more = mremap(buf, cap, cap * 2, MREMAP_MAYMOVE);

			if (more == MAP_FAILED)
				goto fail;
			buf = more;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (!r)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	*size = cap;
	return buf;
fail:
	munmap(buf, cap);
	return NULL;
}

/*
 * kallsyms read whole into one buffer and parsed in place: the buffer is
 * the names' pool (each name cut at its end), the symbols' array is made
 * once for the number of lines.  By hand: strtoull's locale and base
 * handling cost more than the rest of a kallsyms line.
 */
/* The kallsyms file mapped whole as the names of the kernel's table
 * (*@len: its length), NULL when it cannot be read (said at info level).
 * Its signature is taken before the read: a change while it reads is
 * seen next time. */
static char *map_kallsyms(struct perfctr_symbols *syms, size_t *len)
{
	struct symtab *tab = &syms->kallsyms;
	size_t size;
	char *buf;
	int fd;

	syms->kallsyms_sig = kallsyms_signature(syms);
	fd = open(syms->kallsyms_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_info("cannot open '%s': %s\n", syms->kallsyms_path,
			strerror(errno));
		return NULL;
	}
	buf = map_whole(fd, len, &size);
	close(fd);
	if (!buf || *len >= UINT32_MAX) {
		pr_info("cannot read '%s': %s\n", syms->kallsyms_path,
			buf ? "too large" : strerror(errno));
		if (buf)
			munmap(buf, size);
		return NULL;
	}
	tab->names = buf;
	tab->names_len = *len + 1;
	tab->names_cap = size;
	tab->names_mapped = true;
	return buf;
}

/* The whole pages of [@start, @end) in huge pages where the kernel can:
 * megabytes touched once (see map_whole()). */
static void advise_huge(const void *start, const void *end)
{
	uintptr_t a = ((uintptr_t)start + 4095) & ~(uintptr_t)4095;
	uintptr_t b = (uintptr_t)end & ~(uintptr_t)4095;

	if (b > a)
		madvise((void *)a, b - a, MADV_HUGEPAGE);
}

static void load_kallsyms(struct perfctr_symbols *syms)
{
	struct symtab *tab = &syms->kallsyms;
	size_t cap = 0, len;
	uint32_t module = 0, last_idx = 0;
	const char *last_mod = NULL;
	size_t last_mod_len = 0;
	char *buf, *p, *end;

	syms->kallsyms_loaded = true;
	if (!syms->kallsyms_path)
		return;
	buf = map_kallsyms(syms, &len);
	if (!buf)
		return;
	/* No line is shorter than "0 t x\n": room for every symbol, of
	 * which only the pages used are touched. */
	if (symtab_reserve(tab, &cap, len / 6 + 1))
		goto done;
	advise_huge(tab->syms, tab->syms + cap);
	for (p = buf; p < buf + len; p = end + 1) {
		char *q, *name, *mod = NULL;
		uint64_t addr = 0;
		char type;

		for (q = p; q - p < 16 && hex_digit(*q) >= 0; q++)
			addr = addr << 4 | (unsigned int)hex_digit(*q);
		/* One pass to the line's end, seeing the module's tab. */
		for (end = q; *end && *end != '\n'; end++)
			if (*end == '\t' && !mod)
				mod = end;
		*end = '\0';
		if (q == p || *q != ' ')
			continue;
		type = q[1];
		if (!type || q[2] != ' ')
			continue;
		/* Text symbols only: data symbols would swallow code ranges. */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = q + 3;
		module = 0;
		if (mod && mod >= name) {
			*mod++ = '\0';
			/* Module symbols: "name\t[module]". */
			if (*mod == '[') {
				size_t mlen = strcspn(mod + 1, "]");

				/* A module's symbols come together. */
				if (last_mod && mlen == last_mod_len &&
				    !memcmp(mod + 1, last_mod, mlen)) {
					module = last_idx;
				} else {
					if (kallsyms_module(syms, mod + 1, mlen,
							    &module))
						break;
					last_idx = module;
					last_mod = syms->modules[module - 1] + 1;
					last_mod_len = mlen;
				}
			}
		}
		/* kptr_restrict shows every address as 0: useless. */
		if (!addr)
			continue;
		if (symtab_push(tab, &cap, addr, 0, (uint32_t)(name - buf),
				module, type == 'T' ? 0 :
				type == 'W' || type == 'w' ? 1 : 2))
			break;
	}
done:
	/* What the reserve left unused goes back (in place). */
	if (tab->nr && tab->nr < cap) {
		struct sym *fit = realloc(tab->syms, tab->nr * sizeof(*fit));

		if (fit)
			tab->syms = fit;
	}
	symtab_finish(tab, KSPAN_TAIL);
	kallsyms_spans(syms);
}

/* The running kernel's build-id, from the raw notes in /sys/kernel/notes. */
static void read_kernel_build_id(struct dso *dso)
{
	unsigned char buf[4096];
	ssize_t n;
	size_t off = 0;
	int fd;

	dso->build_id_read = true;
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	while (n > 0 && off + 12 <= (size_t)n) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		name_off = off + 12;
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > (size_t)n || namesz > 4096 || descsz > 4096)
			break;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
		    !memcmp(buf + name_off, "GNU", 4)) {
			dso->build_id_size = descsz > 20 ? 20 : descsz;
			memcpy(dso->build_id, buf + desc_off, dso->build_id_size);
			return;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
}

/* ---- ELF ---- */

bool perfctr_symbols_have_elf(void)
{
#ifdef HAVE_LIBELF
	return true;
#else
	return false;
#endif
}

#ifdef HAVE_LIBELF
static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static bool elf_ok;

static void elf_init(void)
{
	elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

/* Distinct symbols objects may be used from distinct threads. */
static bool elf_init_once(void)
{
	pthread_once(&elf_once, elf_init);
	return elf_ok;
}

static int elf_build_id(Elf *elf, uint8_t *buf, size_t size)
{
#ifdef HAVE_LIBDW
	const void *id;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &id);

	if (len <= 0)
		return -ENOENT;
	memcpy(buf, id, (size_t)len < size ? (size_t)len : size);
	return (int)len;
#else
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		GElf_Nhdr nhdr;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nhdr, &name_off,
					   &desc_off)) > 0) {
			if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + name_off, "GNU", 4)) {
				size_t len = nhdr.n_descsz;

				memcpy(buf, (char *)data->d_buf + desc_off,
				       len < size ? len : size);
				return (int)len;
			}
		}
	}
	return -ENOENT;
#endif
}

static int open_elf(const char *path, int *fdp, Elf **elfp)
{
	int fd;
	Elf *elf;

	if (!elf_init_once())
		return -ENOTSUP;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	*fdp = fd;
	*elfp = elf;
	return 0;
}

static void close_elf(int fd, Elf *elf)
{
	elf_end(elf);
	close(fd);
}

/*
 * Which of an ELF file's symbols name its code, and which of several at
 * one address is shown: perf's choice, so that report, script and the
 * folded outputs put a sample in the frame perf puts it in.
 *
 * Taken: functions (FUNC, IFUNC), and labels (NOTYPE, as assembly code
 * defines entry points such as ld.so's _dl_start_user) in a section
 * whose name has "text" in it.  A symbol without a size reaches to the
 * next one in address order, the file's table order among aliases, so
 * that only the last of a run of aliases reaches past the address; the
 * last of the file to the end of the page after its own.  Then of the
 * symbols at one address one stays, by these rules in turn: one that
 * has a size; global over local over weak (ELF_RANK_*); fewer leading
 * underscores ("munmap" over "__munmap" over "__GI___munmap"); the
 * longer name ("mmap64" over "mmap"); the first in the table.
 */
enum {
	ELF_RANK_GLOBAL,
	ELF_RANK_LOCAL,		/* any other binding that is not weak */
	ELF_RANK_WEAK,
	ELF_RANK_STUB,		/* a PLT stub's synthesised name: the last */
};

static uint32_t elf_sym_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return ELF_RANK_GLOBAL;
	case STB_WEAK:
		return ELF_RANK_WEAK;
	default:
		return ELF_RANK_LOCAL;
	}
}

/* Whether each section of @elf may hold labels (*@nr of them): NULL
 * when there are none or no memory. */
static bool *elf_text_sections(Elf *elf, size_t *nr)
{
	size_t shstrndx, i;
	bool *text;

	if (elf_getshdrnum(elf, nr) || !*nr || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	text = calloc(*nr, sizeof(*text));
	for (i = 1; text && i < *nr; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		const char *name;
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		text[i] = name && strstr(name, "text");
	}
	return text;
}

static bool elf_sym_is_code(const GElf_Sym *sym, const bool *text,
			    size_t nr_text)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (sym->st_shndx == SHN_UNDEF || !sym->st_value || !sym->st_name)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	return type == STT_NOTYPE && text && sym->st_shndx < nr_text &&
	       text[sym->st_shndx];
}

/* By address, then in the order the file lists them (sym.shown, not
 * used before a symbol is first returned, holds that order meanwhile). */
static int elf_sym_order(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->shown < y->shown ? -1 : x->shown > y->shown;
}

static void elf_sort(struct symtab *tab)
{
	size_t i;

	for (i = 0; i < tab->nr; i++)
		tab->syms[i].shown = (uint32_t)i;
	qsort(tab->syms, tab->nr, sizeof(*tab->syms), elf_sym_order);
	for (i = 0; i < tab->nr; i++)
		tab->syms[i].shown = 0;
}

#define PAGE_4K 4096ULL

static void elf_stretch_sizeless(struct symtab *tab)
{
	size_t i;

	for (i = 0; i < tab->nr; i++) {
		struct sym *s = &tab->syms[i];

		if (s->end != s->start)
			continue;
		s->end = i + 1 < tab->nr ? tab->syms[i + 1].start :
			 (s->start + PAGE_4K - 1) / PAGE_4K * PAGE_4K + PAGE_4K;
	}
}

static size_t leading_underscores(const char *name)
{
	size_t n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

/* Whether @b, later in the table than @a at the same address, is the
 * one to show. */
static bool elf_sym_better(const struct symtab *tab, const struct sym *a,
			   const struct sym *b)
{
	const char *na = tab->names + a->name, *nb = tab->names + b->name;
	size_t ua, ub, la, lb;

	if ((a->end > a->start) != (b->end > b->start))
		return b->end > b->start;
	if (a->rank != b->rank)
		return b->rank < a->rank;
	ua = leading_underscores(na);
	ub = leading_underscores(nb);
	if (ua != ub)
		return ub < ua;
	la = strlen(na);
	lb = strlen(nb);
	return lb > la;
}

static void elf_keep_one_alias(struct symtab *tab)
{
	size_t i, out = 0;

	for (i = 0; i < tab->nr; i++) {
		struct sym *s = &tab->syms[i];

		if (out && tab->syms[out - 1].start == s->start) {
			if (elf_sym_better(tab, &tab->syms[out - 1], s))
				tab->syms[out - 1] = *s;
			continue;
		}
		tab->syms[out++] = *s;
	}
	tab->nr = out;
}

static void symtab_finish_elf(struct symtab *tab)
{
	elf_sort(tab);
	elf_stretch_sizeless(tab);
	elf_keep_one_alias(tab);
}

/*
 * The code symbols (elf_sym_is_code()) of the first section of type
 * @type; returns how many.  Its string table goes into the pool whole,
 * in one copy, and the symbols' names are offsets into it: no copy of
 * each name, and no growth of the symbol array but one.
 */
static size_t elf_read_syms(Elf *elf, Elf64_Word type, struct symtab *tab,
			    size_t *cap)
{
	Elf_Scn *scn = NULL;
	size_t added = 0, nr_text = 0;
	bool *text = elf_text_sections(elf, &nr_text);

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Scn *strscn;
		Elf_Data *data, *strs;
		GElf_Shdr shdr;
		uint32_t base;
		size_t i, n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type ||
		    !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		strscn = elf_getscn(elf, shdr.sh_link);
		strs = strscn ? elf_getdata(strscn, NULL) : NULL;
		if (!data || !strs || !strs->d_buf || !strs->d_size)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		if (symtab_reserve(tab, cap, n) ||
		    symtab_add_names(tab, strs->d_buf, strs->d_size, &base))
			break;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    !elf_sym_is_code(&sym, text, nr_text))
				continue;
			if (sym.st_name >= strs->d_size ||
			    !tab->names[base + sym.st_name])
				continue;
			if (symtab_push(tab, cap, sym.st_value, sym.st_size,
					base + sym.st_name, 0,
					elf_sym_rank(&sym)))
				break;
			added++;
		}
		break;
	}
	free(text);
	return added;
}

static bool elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

/*
 * PLT stubs have no symbols of their own; name each "name@plt" after the
 * function it jumps to, as perf and objdump do, so that a sample in a
 * stub is not put in the symbol before the PLT (_init).  An x86-64 stub
 * of .plt, .plt.sec or .plt.got jumps through a GOT slot ("jmp
 * *slot(%rip)", after an endbr64 or a bnd prefix when built for IBT or
 * MPX), and the dynamic relocation of that slot names the function:
 * JUMP_SLOT in .rela.plt, GLOB_DAT in .rela.dyn for .plt.got's.  Decoding
 * the jump, not counting stubs, keeps the names right whatever the
 * order of the relocations; the lazy binder's entries (the resolver at
 * the head of .plt, .plt's push-and-jump entries beside a .plt.sec) jump
 * through no relocated slot and stay unnamed.  IRELATIVE slots name no
 * symbol, only the IFUNC resolver (the addend): their stubs are
 * "*ABS*+0xADDEND@plt" as objdump names them (perf 6.1 pairs stubs and
 * relocations by position, and names these plain "@plt" or after another
 * slot's function).
 */
struct plt_slot {
	uint64_t got;		/* the slot's address */
	const char *name;	/* the function, NULL for an IRELATIVE slot */
	uint64_t addend;	/* an IRELATIVE slot's resolver */
};

static int plt_slot_cmp(const void *a, const void *b)
{
	const struct plt_slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* The slots that the relocations of @scn (SHT_RELA) fill with a
 * function's address, appended to *@slots. */
static int plt_slots_of(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			struct plt_slot **slots, size_t *nr)
{
	Elf_Scn *dynsym = elf_getscn(elf, sh->sh_link);
	Elf_Data *rel_data = elf_getdata(scn, NULL), *sym_data;
	GElf_Shdr dyn_sh;
	size_t i, n = sh->sh_size / sh->sh_entsize;
	struct plt_slot *grown;

	if (!dynsym || !gelf_getshdr(dynsym, &dyn_sh) || !rel_data)
		return 0;
	sym_data = elf_getdata(dynsym, NULL);
	grown = realloc(*slots, (*nr + n) * sizeof(**slots));
	if (!sym_data || !grown)
		return grown ? 0 : -ENOMEM;
	*slots = grown;
	for (i = 0; i < n; i++) {
		uint32_t type, index;
		const char *fn = NULL;
		GElf_Rela r;
		GElf_Sym sym;

		if (!gelf_getrela(rel_data, (int)i, &r))
			continue;
		type = (uint32_t)GELF_R_TYPE(r.r_info);
		index = (uint32_t)GELF_R_SYM(r.r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
		    type != R_X86_64_IRELATIVE)
			continue;
		if (index) {
			if (!gelf_getsym(sym_data, (int)index, &sym))
				continue;
			fn = elf_strptr(elf, dyn_sh.sh_link, sym.st_name);
			if (!fn || !*fn)
				continue;
		}
		(*slots)[*nr].got = r.r_offset;
		(*slots)[*nr].name = fn;
		(*slots)[*nr].addend = (uint64_t)r.r_addend;
		(*nr)++;
	}
	return 0;
}

/* Where the stub at @off of @code (@size bytes at @addr) jumps through:
 * the slot of its first "jmp *disp32(%rip)" (ff 25) that starts in the
 * stub's @entsize bytes; 0 when it has none. */
static uint64_t plt_stub_slot(const uint8_t *code, size_t size, uint64_t addr,
			      size_t off, size_t entsize)
{
	size_t i;

	for (i = off; i < off + entsize && i + 6 <= size; i++) {
		int32_t disp;

		if (code[i] != 0xff || code[i + 1] != 0x25)
			continue;
		memcpy(&disp, code + i + 2, sizeof(disp));
		return addr + i + 6 + (uint64_t)(int64_t)disp;
	}
	return 0;
}

/* "name@plt" for each stub of @scn whose slot is one of @slots (sorted). */
static int plt_name_stubs(Elf_Scn *scn, const GElf_Shdr *sh, size_t entsize,
			  const struct plt_slot *slots, size_t nr,
			  struct symtab *tab, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	char name[512];
	size_t off;

	if (!data || !data->d_buf || data->d_size < sh->sh_size)
		return 0;
	for (off = 0; off + entsize <= sh->sh_size; off += entsize) {
		struct plt_slot key = {
			.got = plt_stub_slot(data->d_buf, sh->sh_size,
					     sh->sh_addr, off, entsize),
		};
		const struct plt_slot *hit;

		hit = key.got ? bsearch(&key, slots, nr, sizeof(*slots),
					plt_slot_cmp) : NULL;
		if (!hit)
			continue;
		if (hit->name)
			snprintf(name, sizeof(name), "%s@plt", hit->name);
		else
			snprintf(name, sizeof(name), "*ABS*+0x%" PRIx64 "@plt",
				 hit->addend);
		if (symtab_add(tab, cap, sh->sh_addr + off, entsize, name, 0,
			       ELF_RANK_STUB))
			return -ENOMEM;
	}
	return 0;
}

/* The stub sections' entries: 16 bytes, 8 in .plt.got without IBT (its
 * sh_entsize says which). */
static size_t plt_entry_size(const char *sname, const GElf_Shdr *sh)
{
	if (!strcmp(sname, ".plt") || !strcmp(sname, ".plt.sec") ||
	    !strcmp(sname, ".plt.got"))
		return sh->sh_entsize ? sh->sh_entsize :
		       !strcmp(sname, ".plt.got") ? 8 : 16;
	return 0;
}

static void elf_add_plt_syms(Elf *elf, struct symtab *tab, size_t *cap)
{
	struct plt_slot *slots = NULL;
	size_t shstrndx, nr = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA &&
		    sh.sh_entsize && plt_slots_of(elf, scn, &sh, &slots, &nr))
			goto out;
	if (!nr)
		goto out;
	qsort(slots, nr, sizeof(*slots), plt_slot_cmp);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;
		size_t entsize;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		entsize = sname ? plt_entry_size(sname, &sh) : 0;
		if (entsize && plt_name_stubs(scn, &sh, entsize, slots, nr,
					      tab, cap))
			break;
	}
out:
	free(slots);
}

/* Where the separate debug file of @dso (known build-id) would be. */
static void debug_file_path(const struct perfctr_symbols *syms,
			    const struct dso *dso, char *buf, size_t size)
{
	size_t i;
	int n;

	n = snprintf(buf, size, "%s/usr/lib/debug/.build-id/%02x/",
		     syms->root ? syms->root : "", dso->build_id[0]);
	for (i = 1; i < dso->build_id_size && n < (int)size - 3; i++)
		n += snprintf(buf + n, size - n, "%02x", dso->build_id[i]);
	snprintf(buf + n, size - n, ".debug");
}

/* Segments, build-id and function symbols of @dso from @elf. */
static void dso_read_elf(struct perfctr_symbols *syms, struct dso *dso,
			 Elf *elf)
{
	size_t cap = 0, i, nphdr;
	int len;

	dso->elf = true;
	if (!dso->build_id_read) {
		len = elf_build_id(elf, dso->build_id, sizeof(dso->build_id));
		if (len > 0)
			dso->build_id_size = len > 20 ? 20 : (uint32_t)len;
		dso->build_id_read = true;
	}
	if (!elf_getphdrnum(elf, &nphdr) && nphdr) {
		dso->segs = calloc(nphdr, sizeof(*dso->segs));
		for (i = 0; dso->segs && i < nphdr; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			dso->segs[dso->nr_segs].offset = ph.p_offset;
			dso->segs[dso->nr_segs].vaddr = ph.p_vaddr;
			dso->segs[dso->nr_segs].filesz = ph.p_filesz;
			dso->nr_segs++;
		}
	}
	/* A stripped file: its full symbol table may be in a debug file
	 * named by build-id. */
	if (!elf_has_symtab(elf) && dso->build_id_size) {
		char dbg[4096];
		int dfd;
		Elf *delf;

		debug_file_path(syms, dso, dbg, sizeof(dbg));
		if (!open_elf(dbg, &dfd, &delf)) {
			elf_read_syms(delf, SHT_SYMTAB, &dso->symtab, &cap);
			close_elf(dfd, delf);
		}
	}
	if (!dso->symtab.nr)
		elf_read_syms(elf, SHT_SYMTAB, &dso->symtab, &cap);
	if (!dso->symtab.nr)
		elf_read_syms(elf, SHT_DYNSYM, &dso->symtab, &cap);
	/* The stubs are in the file itself, never in its debug file. */
	elf_add_plt_syms(elf, &dso->symtab, &cap);
	symtab_finish_elf(&dso->symtab);
}

static void dso_load_elf(struct perfctr_symbols *syms, struct dso *dso)
{
	char path[4096];
	int fd;
	Elf *elf;

	snprintf(path, sizeof(path), "%s%s", syms->root ? syms->root : "",
		 dso->path);
	if (open_elf(path, &fd, &elf))
		return;
	dso_stat(dso, fd, NULL);
	dso_read_elf(syms, dso, elf);
	close_elf(fd, elf);
}

/*
 * This process's vDSO: a copy of its ELF image (the kernel maps the whole
 * file, section headers included) and the size of its mapping.  A copy,
 * because libelf may write to the image it reads, and the vDSO is
 * read-only.  NULL when there is none.
 */
static void *self_vdso_copy(size_t *size)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	unsigned long long start, end;
	char line[512];
	void *copy = NULL;
	FILE *f;

	if (!base)
		return NULL;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx", &start, &end) != 2 || start != base)
			continue;
		if (strstr(line, VDSO_DSO) && end > start) {
			*size = (size_t)(end - start);
			copy = malloc(*size);
			if (copy)
				memcpy(copy, (const void *)base, *size);
		}
		break;
	}
	fclose(f);
	return copy;
}

/*
 * Symbols of a "[vdso]" map of @len bytes, from our own vDSO when it is
 * the recorded one: the same mapping size, and the same build-id when the
 * recording gave one.  `perfex record` writes the vDSO's build-id (that
 * of its own vDSO, which the recorded processes share with it); files
 * without one, older or from elsewhere, fall back to the kernel release
 * the file names (a kernel's vDSO is part of its image).  A 32-bit
 * process's vDSO is another image under the same name, and record gives
 * it our build-id: only a different size tells it from ours, so its
 * samples may be misnamed when the sizes agree.
 */
static void dso_load_vdso(struct perfctr_symbols *syms, struct dso *dso,
			  uint64_t len)
{
	uint8_t id[20];
	size_t size = 0;
	void *image;
	Elf *elf;
	int id_len;

	if (!elf_init_once())
		return;
	image = self_vdso_copy(&size);
	if (!image)
		return;
	elf = elf_memory(image, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || len != size)
		goto out;
	id_len = elf_build_id(elf, id, sizeof(id));
	if (dso->recorded_id_size) {
		if (id_len <= 0 || (uint32_t)id_len != dso->recorded_id_size ||
		    memcmp(id, dso->recorded_id, dso->recorded_id_size))
			goto out;
	} else if (syms->osrelease) {
		struct utsname u;

		if (uname(&u) || strcmp(u.release, syms->osrelease))
			goto out;
	}
	dso_read_elf(syms, dso, elf);
out:
	if (elf)
		elf_end(elf);
	free(image);
}

int perfctr_build_id_read(const char *path, uint8_t *buf, size_t size)
{
	int fd, err;
	Elf *elf;

	if (!path || (!buf && size))
		return pc_err(EINVAL);
	err = open_elf(path, &fd, &elf);
	if (err)
		return pc_err(-err);
	err = elf_build_id(elf, buf, size);
	close_elf(fd, elf);
	return err < 0 ? pc_err(-err) : err;
}
#else /* !HAVE_LIBELF */
static void dso_load_elf(struct perfctr_symbols *syms, struct dso *dso)
{
	(void)syms;
	(void)dso;
}

static void dso_load_vdso(struct perfctr_symbols *syms, struct dso *dso,
			  uint64_t len)
{
	(void)syms;
	(void)dso;
	(void)len;
}

int perfctr_build_id_read(const char *path, uint8_t *buf, size_t size)
{
	(void)path;
	(void)buf;
	(void)size;
	return pc_err(ENOTSUP);
}
#endif

static bool path_is_file(const char *path)
{
	/* "[vdso]", "[heap]", "//anon", "anon_inode:...": nothing to open. */
	return path[0] == '/' && path[1] != '/';
}

/* @len: the size of the map that hit @dso first. */
static void dso_load(struct perfctr_symbols *syms, struct dso *dso,
		     uint64_t len)
{
	dso->loaded = true;
	if (dso->vdso)
		dso_load_vdso(syms, dso, len);
	else if (!dso->kernel && path_is_file(dso->path))
		dso_load_elf(syms, dso);
}

/* ---- DSO table ---- */

static int dso_hash_grow(struct perfctr_symbols *syms)
{
	size_t cap = syms->dso_hash_cap ? syms->dso_hash_cap * 2 : 64, i;
	struct dso **tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < syms->nr_dsos; i++) {
		size_t h = pc_hash_str(syms->dsos[i]->path) & (cap - 1);

		while (tab[h])
			h = (h + 1) & (cap - 1);
		tab[h] = syms->dsos[i];
	}
	free(syms->dso_hash);
	syms->dso_hash = tab;
	syms->dso_hash_cap = cap;
	return 0;
}

static struct dso *dso_find_or_add(struct perfctr_symbols *syms,
				   const char *path, bool kernel)
{
	struct dso *dso;
	size_t h;

	if (syms->dso_hash_cap) {
		h = pc_hash_str(path) & (syms->dso_hash_cap - 1);
		while (syms->dso_hash[h]) {
			if (!strcmp(syms->dso_hash[h]->path, path))
				return syms->dso_hash[h];
			h = (h + 1) & (syms->dso_hash_cap - 1);
		}
	}
	if ((syms->nr_dsos + 1) * 2 > syms->dso_hash_cap &&
	    dso_hash_grow(syms))
		return NULL;
	if (syms->nr_dsos == syms->cap_dsos) {
		size_t cap = syms->cap_dsos ? syms->cap_dsos * 2 : 16;
		struct dso **n = realloc(syms->dsos, cap * sizeof(*n));

		if (!n)
			return NULL;
		syms->dsos = n;
		syms->cap_dsos = cap;
	}
	dso = calloc(1, sizeof(*dso));
	if (!dso)
		return NULL;
	dso->path = strdup(path);
	if (!dso->path) {
		free(dso);
		return NULL;
	}
	dso->kernel = kernel;
	dso->vdso = !kernel && !strcmp(path, VDSO_DSO);
	syms->dsos[syms->nr_dsos++] = dso;
	h = pc_hash_str(path) & (syms->dso_hash_cap - 1);
	while (syms->dso_hash[h])
		h = (h + 1) & (syms->dso_hash_cap - 1);
	syms->dso_hash[h] = dso;
	return dso;
}

/* Back to not read: what was read of the file is dropped. */
static void dso_unload(struct dso *dso)
{
#ifdef HAVE_LIBDW
	if (dso->dwarf)
		dwarf_end(dso->dwarf);
	if (dso->dwarf_elf)
		close_elf(dso->dwarf_fd, dso->dwarf_elf);
	dso->dwarf = NULL;
	dso->dwarf_elf = NULL;
	dso->dwarf_tried = false;
#endif
	free(dso->segs);
	dso->segs = NULL;
	dso->nr_segs = 0;
	symtab_free(&dso->symtab);
	memset(&dso->symtab, 0, sizeof(dso->symtab));
	dso->loaded = false;
	dso->elf = false;
	dso->build_id_read = false;
	dso->build_id_size = 0;
	dso->stat_ok = false;
}

static void dso_free(struct dso *dso)
{
	dso_unload(dso);
	free(dso->path);
	free(dso);
}

/* ---- address spaces ---- */

static struct mspace *mspace_get(struct perfctr_symbols *syms, pid_t pid,
				 bool create)
{
	size_t h, mask;

	if (syms->spaces_cap) {
		mask = syms->spaces_cap - 1;
		for (h = hash_pid(pid) & mask; syms->spaces[h].used;
		     h = (h + 1) & mask)
			if (syms->spaces[h].pid == pid)
				return &syms->spaces[h];
	}
	if (!create)
		return NULL;
	if ((syms->nr_spaces + 1) * 2 > syms->spaces_cap) {
		size_t cap = syms->spaces_cap ? syms->spaces_cap * 2 : 64, i;
		struct mspace *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return NULL;
		for (i = 0; i < syms->spaces_cap; i++) {
			if (!syms->spaces[i].used)
				continue;
			h = hash_pid(syms->spaces[i].pid) & (cap - 1);
			while (tab[h].used)
				h = (h + 1) & (cap - 1);
			tab[h] = syms->spaces[i];
		}
		free(syms->spaces);
		syms->spaces = tab;
		syms->spaces_cap = cap;
	}
	mask = syms->spaces_cap - 1;
	h = hash_pid(pid) & mask;
	while (syms->spaces[h].used)
		h = (h + 1) & mask;
	syms->spaces[h].used = true;
	syms->spaces[h].pid = pid;
	syms->nr_spaces++;
	return &syms->spaces[h];
}

static int mspace_reserve(struct mspace *ms, size_t extra)
{
	if (ms->nr + extra > ms->cap) {
		size_t cap = ms->cap ? ms->cap * 2 : 16;
		struct map *n;

		while (cap < ms->nr + extra)
			cap *= 2;
		n = realloc(ms->maps, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		ms->maps = n;
		ms->cap = cap;
	}
	return 0;
}

/* Index of the first map with end > addr. */
static size_t mspace_lower(const struct mspace *ms, uint64_t addr)
{
	size_t lo = 0, hi = ms->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ms->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The map of pid's address space that holds @addr, or NULL. */
static struct map *mspace_find(struct perfctr_symbols *syms, pid_t pid,
			       uint64_t addr)
{
	struct mspace *ms = mspace_get(syms, pid, false);
	size_t i;

	if (!ms)
		return NULL;
	i = mspace_lower(ms, addr);
	if (i == ms->nr || ms->maps[i].start > addr)
		return NULL;
	return &ms->maps[i];
}

static int mspace_insert(struct mspace *ms, const struct map *m)
{
	size_t first, last, keep_tail = 0;
	struct map head = { 0 }, tail = { 0 };
	bool has_head = false, has_tail = false;

	/* Up to two extra pieces when the new map splits an old one. */
	if (mspace_reserve(ms, 2))
		return -ENOMEM;
	first = mspace_lower(ms, m->start);
	last = first;
	while (last < ms->nr && ms->maps[last].start < m->end)
		last++;
	/* maps[first, last) overlap the new one. */
	if (first < last && ms->maps[first].start < m->start) {
		head = ms->maps[first];
		head.end = m->start;
		has_head = true;
	}
	if (first < last && ms->maps[last - 1].end > m->end) {
		tail = ms->maps[last - 1];
		tail.pgoff += m->end - tail.start;
		tail.start = m->end;
		has_tail = true;
	}
	keep_tail = ms->nr - last;
	{
		size_t nnew = (has_head ? 1 : 0) + 1 + (has_tail ? 1 : 0);
		size_t pos = first;

		memmove(&ms->maps[first + nnew], &ms->maps[last],
			keep_tail * sizeof(*ms->maps));
		if (has_head)
			ms->maps[pos++] = head;
		ms->maps[pos++] = *m;
		if (has_tail)
			ms->maps[pos++] = tail;
		ms->nr = first + nnew + keep_tail;
	}
	return 0;
}

struct perfctr_symbols *perfctr_symbols__new(const struct perfctr_symbols_opts *opts)
{
	struct perfctr_symbols *syms;
	const char *kallsyms, *root, *osrelease;

	if (!pc_opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	kallsyms = PC_OPTS_GET(opts, kallsyms, NULL);
	root = PC_OPTS_GET(opts, root, NULL);
	osrelease = PC_OPTS_GET(opts, osrelease, NULL);
	syms = calloc(1, sizeof(*syms));
	if (!syms)
		return NULL;
	syms->demangle = !PC_OPTS_GET(opts, no_demangle, false);
	if (!kallsyms)
		kallsyms = "/proc/kallsyms";
	if (*kallsyms)
		syms->kallsyms_path = strdup(kallsyms);
	if (root && *root)
		syms->root = strdup(root);
	if (osrelease)
		syms->osrelease = strdup(osrelease);
	if ((*kallsyms && !syms->kallsyms_path) || (root && *root && !syms->root) ||
	    (osrelease && !syms->osrelease)) {
		perfctr_symbols__delete(syms);
		errno = ENOMEM;
		return NULL;
	}
	return syms;
}

void perfctr_symbols__delete(struct perfctr_symbols *syms)
{
	size_t i;

	if (!syms)
		return;
	for (i = 0; i < syms->nr_dsos; i++)
		dso_free(syms->dsos[i]);
	free(syms->dsos);
	free(syms->dso_hash);
	for (i = 0; i < syms->spaces_cap; i++)
		free(syms->spaces[i].maps);
	free(syms->spaces);
	kallsyms_retire(syms);
	kallsyms_free_old(syms);
	pc_perfmaps__delete(syms->perfmaps);
	free(syms->kallsyms_path);
	free(syms->root);
	free(syms->osrelease);
	free(syms);
}

void pc_symbols__forget_processes(struct perfctr_symbols *syms)
{
	char path[4096];
	size_t i;

	for (i = 0; i < syms->spaces_cap; i++)
		free(syms->spaces[i].maps);
	if (syms->spaces_cap)
		memset(syms->spaces, 0, syms->spaces_cap * sizeof(*syms->spaces));
	syms->nr_spaces = 0;
	syms->kallsyms_checked = false;
	kallsyms_free_old(syms);
	pc_perfmaps__forget(syms->perfmaps);
	for (i = 0; i < syms->nr_dsos; i++) {
		struct dso *dso = syms->dsos[i];

		dso->hits = 0;
		dso->recorded_id_size = 0;
		if (!dso->loaded || dso->kernel || dso->vdso)
			continue;
		snprintf(path, sizeof(path), "%s%s",
			 syms->root ? syms->root : "", dso->path);
		/* Upgraded, rebuilt or gone: read again when hit. */
		if (!dso_stat(dso, -1, path))
			dso_unload(dso);
	}
}

int perfctr_symbols__set_build_id(struct perfctr_symbols *syms,
				  const char *path, const uint8_t *build_id,
				  size_t size)
{
	struct dso *dso;

	if (!syms || !path || !build_id || !size)
		return pc_err(EINVAL);
	dso = dso_find_or_add(syms, path, !strncmp(path, KERNEL_DSO,
						    strlen(KERNEL_DSO)));
	if (!dso)
		return pc_err(ENOMEM);
	dso->recorded_id_size = size > sizeof(dso->recorded_id) ?
				sizeof(dso->recorded_id) : (uint32_t)size;
	memcpy(dso->recorded_id, build_id, dso->recorded_id_size);
	return 0;
}

int perfctr_symbols__add_map(struct perfctr_symbols *syms, pid_t pid,
			     uint64_t start, uint64_t len, uint64_t pgoff,
			     const char *filename)
{
	struct mspace *ms;
	struct map m;

	if (!syms || !filename || !len || start + len < start)
		return pc_err(EINVAL);
	if (pid == -1 || !strncmp(filename, KERNEL_DSO, strlen(KERNEL_DSO) - 1))
		return 0;
	ms = mspace_get(syms, pid, true);
	if (!ms)
		return pc_err(ENOMEM);
	m.start = start;
	m.end = start + len;
	m.pgoff = pgoff;
	m.dso = dso_find_or_add(syms, filename, false);
	if (!m.dso)
		return pc_err(ENOMEM);
	if (mspace_insert(ms, &m))
		return pc_err(ENOMEM);
	ms->generation = ++syms->generation;
	return 0;
}

int perfctr_symbols__fork(struct perfctr_symbols *syms, pid_t pid, pid_t ppid)
{
	struct mspace *parent, *child;
	struct map *copy;

	if (!syms)
		return pc_err(EINVAL);
	if (pid == ppid)
		return 0;
	parent = mspace_get(syms, ppid, false);
	if (!parent || !parent->nr)
		return 0;
	copy = malloc(parent->nr * sizeof(*copy));
	if (!copy)
		return pc_err(ENOMEM);
	memcpy(copy, parent->maps, parent->nr * sizeof(*copy));
	/* Creating the child may move the table: look the parent up anew. */
	child = mspace_get(syms, pid, true);
	if (!child) {
		free(copy);
		return pc_err(ENOMEM);
	}
	parent = mspace_get(syms, ppid, false);
	free(child->maps);
	child->maps = copy;
	child->nr = child->cap = parent->nr;
	child->generation = ++syms->generation;
	return 0;
}

/*
 * The old maps stay until the new image's overlap them, as in perf: the
 * kernel writes the COMM record (and the new image's MMAPs) before the
 * exec ends, and until it ends a sample still has the old image's user
 * registers (__GI___execve in the old libc), which only the old maps
 * name.  The new generation makes the unwinder report the maps anew.
 */
void perfctr_symbols__exec(struct perfctr_symbols *syms, pid_t pid)
{
	struct mspace *ms = syms ? mspace_get(syms, pid, false) : NULL;

	if (ms)
		ms->generation = ++syms->generation;
}

int perfctr_symbols__load_proc_maps(struct perfctr_symbols *syms, pid_t pid)
{
	char path[64], *line = NULL;
	size_t linecap = 0;
	int added = 0, err = 0;
	FILE *f;

	if (!syms)
		return pc_err(EINVAL);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pc_err(errno == ENOENT ? ESRCH : errno);
	while (getline(&line, &linecap, f) > 0) {
		unsigned long long start, end, pgoff, ino;
		char perms[8];
		int name_at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &start,
			   &end, perms, &pgoff, &ino, &name_at) < 5 || !name_at)
			continue;
		/* Executable maps only, as the kernel's PERF_RECORD_MMAP2. */
		if (perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (!line[name_at])
			continue;
		err = perfctr_symbols__add_map(syms, pid, start, end - start,
					       pgoff, line + name_at);
		if (err)
			break;
		added++;
	}
	free(line);
	fclose(f);
	return err ? err : added;
}

/*
 * Anonymous executable memory is JIT code: named, as perf does, by the
 * process's perf map, whose path is then the DSO's name; addresses in it
 * are the process's own.
 */
static void resolve_perfmap(struct perfctr_symbols *syms, pid_t pid,
			    uint64_t ip, unsigned int flags,
			    struct perfctr_symbol_loc *out)
{
	const char *dso = NULL;

	out->dso_addr = ip;
	out->file_addr = ip;
	if (!syms->perfmaps)
		syms->perfmaps = pc_perfmaps__new(syms->root);
	out->sym = pc_perfmaps__lookup(syms->perfmaps, pid, ip, &dso,
				       &out->sym_addr);
	if (dso)
		out->dso = dso;
	if (flags & PERFCTR_RESOLVE_DSO_ONLY)
		out->sym = NULL;
}

static void fill_unknown(struct perfctr_symbol_loc *loc, uint64_t ip, bool kernel)
{
	loc->dso = kernel ? KERNEL_DSO : "[unknown]";
	loc->sym = NULL;
	loc->dso_addr = ip;
	loc->file_addr = ip;
	loc->sym_addr = 0;
	loc->kernel = kernel;
}

int perfctr_symbols__resolve(struct perfctr_symbols *syms, pid_t pid,
			     uint64_t ip, bool kernel, unsigned int flags,
			     struct perfctr_symbol_loc *loc)
{
	struct perfctr_symbol_loc out;
	const struct sym *s;
	struct sym *us;
	struct map *m;
	struct dso *dso;
	size_t i;

	if (!syms || !loc || loc->sz < offsetof(struct perfctr_symbol_loc, kernel))
		return pc_err(EINVAL);
	memset(&out, 0, sizeof(out));
	fill_unknown(&out, ip, kernel);
	if (kernel) {
		if (!syms->kernel) {
			syms->kernel = dso_find_or_add(syms, KERNEL_DSO, true);
			if (!syms->kernel)
				return pc_err(ENOMEM);
		}
		syms->kernel->hits++;
		if (flags & PERFCTR_RESOLVE_DSO_ONLY)
			goto done;
		if (!syms->kallsyms_loaded)
			load_kallsyms(syms);
		kallsyms_renew(syms, ip);
		s = symtab_find(&syms->kallsyms, ip);
		if (s) {
			out.sym = syms->kallsyms.names + s->name;
			out.sym_addr = s->start;
			if (s->module)
				out.dso = syms->modules[s->module - 1];
		}
		goto done;
	}
	m = mspace_find(syms, pid, ip);
	if (!m)
		goto done;
	dso = m->dso;
	dso->hits++;
	if (pc_perfmap_is_anon(dso->path)) {
		resolve_perfmap(syms, pid, ip, flags, &out);
		goto done;
	}
	out.dso = dso->path;
	out.dso_addr = ip - m->start + m->pgoff;
	out.file_addr = out.dso_addr;
	if (flags & PERFCTR_RESOLVE_DSO_ONLY)
		goto done;
	if (!dso->loaded)
		dso_load(syms, dso, m->end - m->start);
	/* File offset to the ELF virtual address its symbols use. */
	for (i = 0; i < dso->nr_segs; i++) {
		const struct segment *seg = &dso->segs[i];

		if (out.dso_addr >= seg->offset &&
		    out.dso_addr < seg->offset + seg->filesz) {
			out.dso_addr = out.dso_addr - seg->offset + seg->vaddr;
			break;
		}
	}
	us = symtab_find(&dso->symtab, out.dso_addr);
	if (us) {
		out.sym = sym_name(syms, &dso->symtab, us);
		out.sym_addr = us->start;
	}
done:
	out.sz = loc->sz;
	memcpy(loc, &out, loc->sz < sizeof(out) ? loc->sz : sizeof(out));
	return out.sym ? 1 : 0;
}

size_t perfctr_symbols__nr_dsos(const struct perfctr_symbols *syms)
{
	return syms ? syms->nr_dsos : 0;
}

uint64_t pc_symbols__dso_hits(const struct perfctr_symbols *syms, size_t idx)
{
	return syms && idx < syms->nr_dsos ? syms->dsos[idx]->hits : 0;
}

int perfctr_symbols__dso(struct perfctr_symbols *syms, size_t idx,
			 struct perfctr_dso_info *info)
{
	struct perfctr_dso_info out;
	struct dso *dso;

	if (!syms || !info)
		return pc_err(EINVAL);
	if (idx >= syms->nr_dsos)
		return pc_err(ERANGE);
	dso = syms->dsos[idx];
	if (!dso->build_id_read) {
		if (dso->kernel) {
			read_kernel_build_id(dso);
		} else if (dso->vdso) {
#ifdef HAVE_LIBELF
			size_t size;
			void *image = elf_init_once() ? self_vdso_copy(&size) : NULL;
			Elf *elf = image ? elf_memory(image, size) : NULL;
			int len = elf ? elf_build_id(elf, dso->build_id,
						     sizeof(dso->build_id)) : -1;

			if (len > 0)
				dso->build_id_size = len > 20 ? 20 : (uint32_t)len;
			if (elf)
				elf_end(elf);
			free(image);
#endif
			dso->build_id_read = true;
		} else if (path_is_file(dso->path)) {
#ifdef HAVE_LIBELF
			char path[4096];
			int len;

			snprintf(path, sizeof(path), "%s%s",
				 syms->root ? syms->root : "", dso->path);
			len = perfctr_build_id_read(path, dso->build_id,
						    sizeof(dso->build_id));
			if (len > 0)
				dso->build_id_size = len > 20 ? 20 : (uint32_t)len;
#endif
			dso->build_id_read = true;
		}
	}
	memset(&out, 0, sizeof(out));
	out.sz = info->sz;
	out.path = dso->path;
	out.hits = dso->hits;
	out.kernel = dso->kernel;
	memcpy(out.build_id, dso->build_id, sizeof(out.build_id));
	out.build_id_size = dso->build_id_size;
	memcpy(info, &out, info->sz < sizeof(out) ? info->sz : sizeof(out));
	return 0;
}

/* ---- for the unwinder ---- */

uint64_t pc_symbols__generation(struct perfctr_symbols *syms, pid_t pid)
{
	struct mspace *ms = syms ? mspace_get(syms, pid, false) : NULL;

	return ms ? ms->generation : 0;
}

/* The bias of a loaded file's map: its address less the link-time
 * address, through the segment that holds the map's offset. */
static bool map_bias(const struct map *m, uint64_t *bias)
{
	const struct dso *dso = m->dso;
	size_t j;

	for (j = 0; j < dso->nr_segs; j++) {
		const struct segment *seg = &dso->segs[j];

		if (m->pgoff >= seg->offset &&
		    m->pgoff < seg->offset + seg->filesz) {
			*bias = m->start - m->pgoff + seg->offset - seg->vaddr;
			return true;
		}
	}
	return false;
}

int pc_symbols__for_each_elf(struct perfctr_symbols *syms, pid_t pid,
			     int (*fn)(void *ctx, const char *path,
				       uint64_t bias, const void *image,
				       size_t image_size),
			     void *ctx)
{
	struct mspace *ms = syms ? mspace_get(syms, pid, false) : NULL;
	char path[4096];
	size_t i, k;
	int r;

	for (i = 0; ms && i < ms->nr; i++) {
		const struct map *m = &ms->maps[i];
		struct dso *dso = m->dso;
		bool seen = false;
		uint64_t bias, other;

		if (dso->kernel || (!dso->vdso && !path_is_file(dso->path)))
			continue;
		if (!dso->loaded)
			dso_load(syms, dso, m->end - m->start);
		/* A vDSO is ELF here only when it is ours (dso_load_vdso). */
		if (!dso->elf || !map_bias(m, &bias))
			continue;
		/* Once per file and bias: a file mapped in pieces has one,
		 * a file mapped twice (a JIT's moved function, the same
		 * jitted .so at another address) has one per copy. */
		for (k = 0; k < i && !seen; k++)
			seen = ms->maps[k].dso == dso &&
			       map_bias(&ms->maps[k], &other) && other == bias;
		if (seen)
			continue;
		if (dso->vdso) {
#ifdef HAVE_LIBELF
			size_t size = 0;
			void *image = self_vdso_copy(&size);

			if (!image)
				continue;
			r = fn(ctx, VDSO_DSO, bias, image, size);
			free(image);
#else
			continue;
#endif
		} else {
			snprintf(path, sizeof(path), "%s%s",
				 syms->root ? syms->root : "", dso->path);
			r = fn(ctx, path, bias, NULL, 0);
		}
		if (r)
			return r;
	}
	return 0;
}

/* ---- source lines ---- */

#ifdef HAVE_LIBDW
/* @path's DWARF into @dso: 0, or -1 when it has none. */
static int open_dwarf(const char *path, struct dso *dso)
{
	Dwarf *dw;
	Elf *elf;
	int fd;

	if (open_elf(path, &fd, &elf))
		return -1;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		close_elf(fd, elf);
		return -1;
	}
	dso->dwarf = dw;
	dso->dwarf_elf = elf;
	dso->dwarf_fd = fd;
	return 0;
}

static Dwarf *dso_dwarf(struct perfctr_symbols *syms, struct dso *dso)
{
	char path[4096];

	if (dso->dwarf_tried)
		return dso->dwarf;
	dso->dwarf_tried = true;
	/* Distributions ship the line tables in the debug file; a binary
	 * built here with -g has them itself. */
	if (dso->build_id_size) {
		debug_file_path(syms, dso, path, sizeof(path));
		if (!open_dwarf(path, dso))
			return dso->dwarf;
	}
	snprintf(path, sizeof(path), "%s%s", syms->root ? syms->root : "",
		 dso->path);
	open_dwarf(path, dso);
	return dso->dwarf;
}
#endif

int perfctr_symbols__srcline(struct perfctr_symbols *syms, pid_t pid,
			     uint64_t ip, bool kernel,
			     struct perfctr_srcline *line)
{
	struct perfctr_srcline out;
#ifdef HAVE_LIBDW
	struct map *m;
	struct dso *dso;
	uint64_t addr;
	Dwarf_Die cu;
	Dwarf_Line *row;
	int lineno;
	size_t i;
#endif

	if (!syms || !line || line->sz < offsetof(struct perfctr_srcline, line) +
					 sizeof(line->line))
		return pc_err(EINVAL);
	memset(&out, 0, sizeof(out));
	out.sz = line->sz;
#ifdef HAVE_LIBDW
	/* The kernel's line tables would be in a vmlinux we do not look for. */
	m = kernel ? NULL : mspace_find(syms, pid, ip);
	if (!m)
		goto done;
	dso = m->dso;
	if (!dso->loaded)
		dso_load(syms, dso, m->end - m->start);
	if (!dso->elf || !dso_dwarf(syms, dso))
		goto done;
	addr = ip - m->start + m->pgoff;
	for (i = 0; i < dso->nr_segs; i++) {
		const struct segment *seg = &dso->segs[i];

		if (addr >= seg->offset && addr < seg->offset + seg->filesz) {
			addr = addr - seg->offset + seg->vaddr;
			break;
		}
	}
	if (!dwarf_addrdie(dso->dwarf, addr, &cu))
		goto done;
	row = dwarf_getsrc_die(&cu, addr);
	if (!row || dwarf_lineno(row, &lineno) || lineno <= 0)
		goto done;
	out.file = dwarf_linesrc(row, NULL, NULL);
	out.line = out.file ? (uint32_t)lineno : 0;
done:
#else
	(void)pid;
	(void)ip;
	(void)kernel;
#endif
	memcpy(line, &out, line->sz < sizeof(out) ? line->sz : sizeof(out));
	return out.file ? 1 : 0;
}

/* ---- a function of a file, for annotations ---- */

/* The file @path's entry, read (symbols, segments); NULL when it is not a
 * readable ELF file. */
static struct dso *file_dso(struct perfctr_symbols *syms, const char *path)
{
	struct dso *dso;

	if (!path_is_file(path))
		return NULL;
	dso = dso_find_or_add(syms, path, false);
	if (!dso)
		return NULL;
	if (!dso->loaded)
		dso_load(syms, dso, 0);
	return dso->elf ? dso : NULL;
}

static void file_func_fill(struct perfctr_symbols *syms, struct dso *dso,
			   struct sym *s, struct pc_file_func *out)
{
	out->name = sym_name(syms, &dso->symtab, s);
	out->start = s->start;
	out->end = s->end;
}

int pc_symbols__file_func(struct perfctr_symbols *syms, const char *path,
			  uint64_t addr, const char *name,
			  struct pc_file_func *out)
{
	struct dso *dso = file_dso(syms, path);
	struct sym *s;
	size_t i;

	if (!dso)
		return -ENOENT;
	if (!name) {
		s = symtab_find(&dso->symtab, addr);
		if (!s)
			return 0;
		file_func_fill(syms, dso, s, out);
		return 1;
	}
	/* The name as the file spells it first: no demangling needed. */
	for (i = 0; i < dso->symtab.nr; i++) {
		s = &dso->symtab.syms[i];
		if (!strcmp(dso->symtab.names + s->name, name)) {
			file_func_fill(syms, dso, s, out);
			return 1;
		}
	}
	for (i = 0; syms->demangle && i < dso->symtab.nr; i++) {
		s = &dso->symtab.syms[i];
		if (!strcmp(sym_name(syms, &dso->symtab, s), name)) {
			file_func_fill(syms, dso, s, out);
			return 1;
		}
	}
	return 0;
}

ssize_t pc_symbols__file_read(struct perfctr_symbols *syms, const char *path,
			      uint64_t addr, void *buf, size_t len)
{
	struct dso *dso = file_dso(syms, path);
	char file[4096];
	ssize_t n;
	size_t i;
	int fd;

	if (!dso)
		return -ENOENT;
	for (i = 0; i < dso->nr_segs; i++) {
		const struct segment *seg = &dso->segs[i];

		if (addr >= seg->vaddr && addr < seg->vaddr + seg->filesz)
			break;
	}
	if (i == dso->nr_segs)
		return -ENOEXEC;
	if (addr + len > dso->segs[i].vaddr + dso->segs[i].filesz)
		len = dso->segs[i].vaddr + dso->segs[i].filesz - addr;
	snprintf(file, sizeof(file), "%s%s", syms->root ? syms->root : "",
		 dso->path);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len,
		  (off_t)(addr - dso->segs[i].vaddr + dso->segs[i].offset));
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

#ifdef HAVE_LIBDW
Dwarf *pc_symbols__file_dwarf(struct perfctr_symbols *syms, const char *path)
{
	struct dso *dso = file_dso(syms, path);

	return dso ? dso_dwarf(syms, dso) : NULL;
}
#endif
