// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of symbolisation: kallsyms fixtures, maps, this very
 * program's own ELF symbols through /proc/self/maps, its vDSO read in
 * memory, and C++ names. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <perfctr/symbols.h>

#include "sample/symbols-internal.h"
#include "test.h"

/* A function whose address we resolve through our own ELF file. */
__attribute__((noinline, used)) int symbols_test_marker(int x);
int symbols_test_marker(int x)
{
	return x * 3 + 1;
}

/* A C function under a C++ name: ns::Widget<long>::spin(long). */
__attribute__((noinline, used)) long mangled_marker(long n)
	__asm__("_ZN2ns6WidgetIlE4spinEl");
long mangled_marker(long n)
{
	return n * 5 + 2;
}

#ifdef __x86_64__
/*
 * Symbols at one address, as assembly code and libc's aliases make them,
 * for the choice among them (each group is 16 bytes of code, its
 * symbols sized unless said): weak against local, global against local,
 * leading underscores, name length, a size-less global beside a sized
 * local (ELF lists locals first: the global comes later, reaches to the
 * next group and so has a size when the aliases are compared), and
 * labels in a text section and out of one.
 */
__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.weak pc_fx_weak\n"
	"	.type pc_fx_weak,@function\n"
	"	.type __pc_fx_weak_local,@function\n"
	"pc_fx_weak:\n__pc_fx_weak_local:\n"
	"	.fill 16,1,0x90\n"
	"	.size pc_fx_weak,16\n	.size __pc_fx_weak_local,16\n"
	"	.globl ___pc_fx_glob\n"
	"	.type ___pc_fx_glob,@function\n"
	"	.type pc_fx_glob,@function\n"
	"pc_fx_glob:\n___pc_fx_glob:\n"
	"	.fill 16,1,0x90\n"
	"	.size pc_fx_glob,16\n	.size ___pc_fx_glob,16\n"
	"	.globl __pc_fx_us, _pc_fx_us\n"
	"	.type __pc_fx_us,@function\n"
	"	.type _pc_fx_us,@function\n"
	"__pc_fx_us:\n_pc_fx_us:\n"
	"	.fill 16,1,0x90\n"
	"	.size __pc_fx_us,16\n	.size _pc_fx_us,16\n"
	"	.globl pc_fx_len, pc_fx_len_longer\n"
	"	.type pc_fx_len,@function\n"
	"	.type pc_fx_len_longer,@function\n"
	"pc_fx_len:\npc_fx_len_longer:\n"
	"	.fill 16,1,0x90\n"
	"	.size pc_fx_len,16\n	.size pc_fx_len_longer,16\n"
	"	.globl pc_fx_zero\n"
	"	.type pc_fx_zero,@function\n"
	"	.type pc_fx_sized,@function\n"
	"pc_fx_sized:\npc_fx_zero:\n"
	"	.fill 8,1,0x90\n"
	"	.size pc_fx_sized,8\n"
	"	.fill 8,1,0x90\n"
	"	.globl pc_fx_label\n"
	"pc_fx_label:\n"
	"	.fill 16,1,0x90\n"
	"	.globl pc_fx_after\n"
	"	.type pc_fx_after,@function\n"
	"pc_fx_after:\n"
	"	ret\n"
	"	.size pc_fx_after,1\n"
	"	.section .pc_fx_code,\"ax\",@progbits\n"
	"	.globl pc_fx_not_text\n"
	"pc_fx_not_text:\n"
	"	.fill 16,1,0x90\n"
	"	.text\n");
extern char pc_fx_weak[], ___pc_fx_glob[], _pc_fx_us[], pc_fx_len[],
	pc_fx_zero[], pc_fx_label[], pc_fx_after[], pc_fx_not_text[];
#endif

/*
 * Which of several symbols at one address names it, and how far a
 * size-less one reaches: perf's rules (symbols.c, before
 * elf_sym_is_code()), on the fixture above in this test's own file.
 */
TEST(aliases_chosen_as_perf_chooses)
{
#ifdef __x86_64__
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "");
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	struct perfctr_symbols *syms;
	static const struct {
		const char *at;		/* the group's address */
		size_t off;		/* how far into it */
		const char *sym;	/* NULL: not the label at @at */
	} rows[] = {
		/* Any non-weak symbol before a weak one. */
		{ pc_fx_weak, 3, "__pc_fx_weak_local" },
		/* A global before a local, underscores or not. */
		{ ___pc_fx_glob, 3, "___pc_fx_glob" },
		/* Fewer leading underscores. */
		{ _pc_fx_us, 3, "_pc_fx_us" },
		/* The longer name. */
		{ pc_fx_len, 15, "pc_fx_len_longer" },
		/* The size-less global reached to the label: the global
		 * wins, over the sized local's end too. */
		{ pc_fx_zero, 0, "pc_fx_zero" },
		{ pc_fx_zero, 12, "pc_fx_zero" },
		/* A label in .text, up to the next symbol. */
		{ pc_fx_label, 0, "pc_fx_label" },
		{ pc_fx_label, 15, "pc_fx_label" },
		{ pc_fx_after, 0, "pc_fx_after" },
		/* A label in a section not named text is no symbol. */
		{ pc_fx_not_text, 4, NULL },
	};
	size_t i;
	int r;

	if (!perfctr_symbols_have_elf())
		test_skip("built without libelf: no user-space symbols");
	syms = perfctr_symbols__new(&opts);
	REQUIRE(syms);
	REQUIRE(perfctr_symbols__load_proc_maps(syms, getpid()) >= 1);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t ip = (uint64_t)(uintptr_t)rows[i].at + rows[i].off;

		r = perfctr_symbols__resolve(syms, getpid(), ip, false, 0,
					     &loc);
		if (rows[i].sym) {
			CHECK_EQ_INT(r, 1);
			CHECK_STR(loc.sym, rows[i].sym);
			CHECK_EQ_U64(ip - loc.dso_addr + loc.sym_addr,
				     (uint64_t)(uintptr_t)rows[i].at);
		} else {
			CHECK(r >= 0);
			CHECK(!r || strcmp(loc.sym, "pc_fx_not_text"));
		}
	}
	perfctr_symbols__delete(syms);
#else
	test_skip("the fixture's aliases are x86-64 assembly");
#endif
}

static char kallsyms_path[] = "/tmp/pc-kallsyms-XXXXXX";

static const char *write_kallsyms(void)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T do_syscall_64\n"
		"ffffffff81000200 t helper_local\n"
		"ffffffff81000300 D some_data\n"
		"ffffffff81000400 T entry_SYSCALL_64\n"
		"ffffffffc0001000 t ext4_read\t[ext4]\n"
		"ffffffffc0001080 t ext4_write\t[ext4]\n";
	int fd;

	/* A fresh name for each test that asks. */
	memcpy(kallsyms_path + sizeof(kallsyms_path) - 7, "XXXXXX", 6);
	fd = mkstemp(kallsyms_path);
	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1))
		test_skip("cannot write a temporary file");
	close(fd);
	return kallsyms_path;
}

TEST(kallsyms_fixture)
{
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = write_kallsyms());
	struct perfctr_symbols *syms = perfctr_symbols__new(&opts);
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	static const struct {
		uint64_t ip;
		const char *sym;
		const char *dso;
	} rows[] = {
		{ 0xffffffff81000000, "_stext", "[kernel.kallsyms]" },
		{ 0xffffffff81000150, "do_syscall_64", "[kernel.kallsyms]" },
		{ 0xffffffff810002ff, "helper_local", "[kernel.kallsyms]" },
		/* Data symbols do not end a function. */
		{ 0xffffffff81000350, "helper_local", "[kernel.kallsyms]" },
		{ 0xffffffff81000401, "entry_SYSCALL_64", "[kernel.kallsyms]" },
		{ 0xffffffffc0001004, "ext4_read", "[ext4]" },
		{ 0xffffffffc0001090, "ext4_write", "[ext4]" },
		{ 0xffffffff80000000, NULL, "[kernel.kallsyms]" },
	};

	REQUIRE(syms);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int r = perfctr_symbols__resolve(syms, 1, rows[i].ip, true, 0, &loc);

		CHECK_EQ_INT(r, rows[i].sym ? 1 : 0);
		if (rows[i].sym)
			CHECK_STR(loc.sym, rows[i].sym);
		else
			CHECK(loc.sym == NULL);
		CHECK_STR(loc.dso, rows[i].dso);
		CHECK(loc.kernel);
	}
	perfctr_symbols__delete(syms);
	unlink(kallsyms_path);
}

/* @text over the kallsyms fixture at @path (made by write_kallsyms()). */
static void rewrite_kallsyms(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f || fputs(text, f) < 0 || fclose(f))
		test_skip("cannot write a temporary file");
}

static const char *resolved(struct perfctr_symbols *syms, uint64_t ip,
			    const char **dso)
{
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };

	perfctr_symbols__resolve(syms, 1, ip, true, 0, &loc);
	*dso = loc.dso;
	return loc.sym;
}

/*
 * A module loaded after the table was read: its first address, outside
 * the kernel's and the known modules' text, has the table read again
 * when the file changed; once per reader (forget_processes), and never
 * for an address the table knows.  Names handed out before stay valid.
 */
TEST(kallsyms_renewed_for_new_module)
{
	static const char more[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T do_syscall_64_renamed\n"
		"ffffffff81000400 T entry_SYSCALL_64\n"
		"ffffffffc0000100 t early_fn\t[early]\n"
		"ffffffffc0001000 t ext4_read\t[ext4]\n"
		"ffffffffc0001080 t ext4_write\t[ext4]\n"
		"ffffffffc0100000 t late_fn\t[late]\n";
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = write_kallsyms());
	struct perfctr_symbols *syms = perfctr_symbols__new(&opts);
	const char *old, *dso, *sym;

	REQUIRE(syms);
	old = resolved(syms, 0xffffffff81000150, &dso);
	CHECK_STR(old, "do_syscall_64");
	rewrite_kallsyms(kallsyms_path, more);
	/* Known addresses do not look at the file. */
	CHECK_STR(resolved(syms, 0xffffffff81000150, &dso), "do_syscall_64");
	CHECK_STR(resolved(syms, 0xffffffffc0001004, &dso), "ext4_read");
	/* Above the last module. */
	sym = resolved(syms, 0xffffffffc0100010, &dso);
	CHECK_STR(sym, "late_fn");
	CHECK_STR(dso, "[late]");
	CHECK_STR(resolved(syms, 0xffffffff81000150, &dso),
		  "do_syscall_64_renamed");
	/* Between the kernel and the first module known before. */
	CHECK_STR(resolved(syms, 0xffffffffc0000104, &dso), "early_fn");
	CHECK_STR(dso, "[early]");
	CHECK_STR(old, "do_syscall_64");

	/* Once per reader: a module loaded after the renewal waits for
	 * the next one. */
	rewrite_kallsyms(kallsyms_path, "ffffffff81000000 T _stext\n"
			 "ffffffffc0200000 t later_fn\t[later]\n");
	sym = resolved(syms, 0xffffffffc0200010, &dso);
	CHECK(!sym || strcmp(sym, "later_fn"));
	pc_symbols__forget_processes(syms);
	CHECK_STR(resolved(syms, 0xffffffffc0200010, &dso), "later_fn");
	CHECK_STR(dso, "[later]");
	/* An address no table knows, the file unchanged: no symbol. */
	pc_symbols__forget_processes(syms);
	CHECK(resolved(syms, 0xffffffffd0000000, &dso) == NULL);
	perfctr_symbols__delete(syms);
	unlink(kallsyms_path);
}

TEST(maps_overlap_fork_exec)
{
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "");
	struct perfctr_symbols *syms = perfctr_symbols__new(&opts);
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };

	REQUIRE(syms);
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 10, 0x1000, 0x3000, 0, "/no/such/lib.so"), 0);
	/* The middle page is replaced: three pieces. */
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 10, 0x2000, 0x1000, 0x5000, "[vdso]"), 0);
	perfctr_symbols__resolve(syms, 10, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "/no/such/lib.so");
	CHECK_EQ_U64(loc.dso_addr, 0x800);
	perfctr_symbols__resolve(syms, 10, 0x2010, false, 0, &loc);
	CHECK_STR(loc.dso, "[vdso]");
	CHECK_EQ_U64(loc.dso_addr, 0x5010);
	perfctr_symbols__resolve(syms, 10, 0x3010, false, 0, &loc);
	CHECK_STR(loc.dso, "/no/such/lib.so");
	CHECK_EQ_U64(loc.dso_addr, 0x2010);	/* pgoff follows the split */
	perfctr_symbols__resolve(syms, 10, 0x4000, false, 0, &loc);
	CHECK_STR(loc.dso, "[unknown]");
	/* Another process sees nothing until it forks from 10. */
	perfctr_symbols__resolve(syms, 11, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "[unknown]");
	CHECK_EQ_INT(perfctr_symbols__fork(syms, 11, 10), 0);
	perfctr_symbols__resolve(syms, 11, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "/no/such/lib.so");
	/* An exec keeps the old maps until new ones overlap them. */
	perfctr_symbols__exec(syms, 11);
	perfctr_symbols__resolve(syms, 11, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "/no/such/lib.so");
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 11, 0x1000, 0x1000, 0, "/no/such/new"), 0);
	perfctr_symbols__resolve(syms, 11, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "/no/such/new");
	perfctr_symbols__resolve(syms, 11, 0x3010, false, 0, &loc);
	CHECK_STR(loc.dso, "/no/such/lib.so");
	/* The parent keeps its maps. */
	perfctr_symbols__resolve(syms, 10, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "/no/such/lib.so");
	/* Kernel maps are accepted and ignored. */
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, -1, 0xffffffff81000000ULL,
					      0x1000000, 0, "[kernel.kallsyms]_text"), 0);
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 10, 0x1000, 0, 0, "x"), -EINVAL);
	perfctr_symbols__delete(syms);
}

TEST(own_elf_symbols)
{
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "");
	struct perfctr_symbols *syms;
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	struct perfctr_dso_info info = { .sz = sizeof(info) };
	uint64_t ip = (uint64_t)(uintptr_t)&symbols_test_marker + 1;
	char exe[4096];
	ssize_t n;
	uint8_t id[20];
	int r, len;
	size_t i;
	bool found = false;

	if (!perfctr_symbols_have_elf())
		test_skip("built without libelf: no user-space symbols");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	REQUIRE(n > 0);
	exe[n] = '\0';
	syms = perfctr_symbols__new(&opts);
	REQUIRE(syms);
	r = perfctr_symbols__load_proc_maps(syms, getpid());
	CHECK(r >= 1);
	r = perfctr_symbols__resolve(syms, getpid(), ip, false, 0, &loc);
	CHECK_EQ_INT(r, 1);
	CHECK_STR(loc.sym, "symbols_test_marker");
	CHECK_STR(loc.dso, exe);
	CHECK_EQ_U64(ip - loc.dso_addr + loc.sym_addr,
		     (uint64_t)(uintptr_t)&symbols_test_marker);
	/* A libc function, through libc's own tables. */
	r = perfctr_symbols__resolve(syms, getpid(), (uint64_t)(uintptr_t)&abort,
				     false, 0, &loc);
	CHECK_EQ_INT(r, 1);
	CHECK(loc.sym && strstr(loc.sym, "abort"));
	CHECK(loc.dso && strstr(loc.dso, "libc"));
	/* The DSOs hit carry the file's build-id. */
	len = perfctr_build_id_read(exe, id, sizeof(id));
	if (len == -ENOENT)
		test_skip("this test binary has no build-id note");
	CHECK_EQ_INT(len, 20);
	for (i = 0; i < perfctr_symbols__nr_dsos(syms); i++) {
		CHECK_EQ_INT(perfctr_symbols__dso(syms, i, &info), 0);
		if (strcmp(info.path, exe))
			continue;
		found = true;
		CHECK_EQ_U64(info.hits, 1);
		CHECK_EQ_INT(info.build_id_size, 20);
		CHECK(!memcmp(info.build_id, id, 20));
	}
	CHECK(found);
	CHECK_EQ_INT(perfctr_symbols__dso(syms, 9999, &info), -ERANGE);
	CHECK_EQ_INT(perfctr_build_id_read("/nonexistent/x", id, sizeof(id)), -ENOENT);
	perfctr_symbols__delete(syms);
}

TEST(dso_only_does_not_load)
{
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "");
	struct perfctr_symbols *syms = perfctr_symbols__new(&opts);
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };

	REQUIRE(syms);
	CHECK(perfctr_symbols__load_proc_maps(syms, getpid()) >= 1);
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, getpid(),
			(uint64_t)(uintptr_t)&symbols_test_marker, false,
			PERFCTR_RESOLVE_DSO_ONLY, &loc), 0);
	CHECK(loc.sym == NULL);
	CHECK(loc.dso && loc.dso[0] == '/');
	CHECK_EQ_INT(perfctr_symbols__load_proc_maps(syms, 999999999), -ESRCH);
	perfctr_symbols__delete(syms);
}

/*
 * Our vDSO as the dynamic linker sees it: its base, the size of its
 * mapping, the address of its clock_gettime (under the name the
 * architecture gives it) and its build-id, found through the linker's
 * tables and program headers, not through the code under test.
 */
struct vdso_truth {
	uint64_t base, size, fn;
	const char *name;
	uint8_t id[20];
	size_t id_size;
};

static int vdso_phdr_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct vdso_truth *t = ctx;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (info->dlpi_addr + ph->p_vaddr < t->base ||
		    info->dlpi_addr + ph->p_vaddr >= t->base + t->size)
			break;	/* not the vDSO */
		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const char *name = p + sizeof(*n);
			const char *desc = name + ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && n->n_descsz <= 20) {
				memcpy(t->id, desc, n->n_descsz);
				t->id_size = n->n_descsz;
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

static void vdso_truth(struct vdso_truth *t)
{
	static const char *const names[] = {
		"__vdso_clock_gettime",		/* x86 */
		"__kernel_clock_gettime",	/* arm64, ppc, s390 */
	};
	unsigned long long start, end;
	char line[512];
	void *lib;
	FILE *f;

	memset(t, 0, sizeof(*t));
	t->base = getauxval(AT_SYSINFO_EHDR);
	if (!t->base)
		test_skip("no vDSO in this process (AT_SYSINFO_EHDR is 0)");
	f = fopen("/proc/self/maps", "re");
	REQUIRE(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &start, &end) == 2 &&
		    start == t->base && strstr(line, "[vdso]"))
			t->size = end - start;
	fclose(f);
	REQUIRE(t->size);
	lib = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		test_skip("the dynamic linker does not know the vDSO: %s", dlerror());
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !t->fn; i++) {
		t->fn = (uint64_t)(uintptr_t)dlsym(lib, names[i]);
		t->name = names[i];
	}
	dlclose(lib);
	if (!t->fn)
		test_skip("the vDSO has no clock_gettime under a known name");
	dl_iterate_phdr(vdso_phdr_cb, t);
}

/* 1 and the symbol of @t's function, or 0 and none, per the syms' rules. */
static int resolve_vdso(const struct vdso_truth *t, uint64_t map_size,
			const char *osrelease, const uint8_t *id, size_t id_size,
			struct perfctr_symbol_loc *loc)
{
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "",
		     .osrelease = osrelease);
	struct perfctr_symbols *syms = perfctr_symbols__new(&opts);
	int r;

	REQUIRE(syms);
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 42, t->base, map_size, 0,
					      "[vdso]"), 0);
	if (id)
		CHECK_EQ_INT(perfctr_symbols__set_build_id(syms, "[vdso]", id,
							   id_size), 0);
	r = perfctr_symbols__resolve(syms, 42, t->fn + 2, false, 0, loc);
	CHECK_STR(loc->dso, "[vdso]");
	if (r == 1) {
		/* The strings live as long as the object: compare now. */
		CHECK_STR(loc->sym, t->name);
		CHECK_EQ_U64(loc->dso_addr - loc->sym_addr, 2);
	}
	perfctr_symbols__delete(syms);
	return r;
}

TEST(vdso_from_memory)
{
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	struct perfctr_dso_info info = { .sz = sizeof(info) };
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "");
	struct perfctr_symbols *syms;
	struct vdso_truth t;
	struct utsname u;
	uint8_t other[20];

	if (!perfctr_symbols_have_elf())
		test_skip("built without libelf: no user-space symbols");
	vdso_truth(&t);
	REQUIRE(uname(&u) == 0);

	/* Nothing known of the recording: our vDSO stands for it. */
	CHECK_EQ_INT(resolve_vdso(&t, t.size, NULL, NULL, 0, &loc), 1);
	/* The same kernel release, no build-id: the fallback. */
	CHECK_EQ_INT(resolve_vdso(&t, t.size, u.release, NULL, 0, &loc), 1);
	/* Another kernel: no symbols, the DSO stays known. */
	CHECK_EQ_INT(resolve_vdso(&t, t.size, "0.0.0-another-kernel", NULL, 0,
				  &loc), 0);
	CHECK(loc.sym == NULL);
	/* Another size of mapping: another vDSO. */
	CHECK_EQ_INT(resolve_vdso(&t, t.size + 4096, NULL, NULL, 0, &loc), 0);

	if (!t.id_size)
		test_skip("this kernel's vDSO has no build-id note");
	/* The recorded build-id decides, whatever the release says. */
	CHECK_EQ_INT(resolve_vdso(&t, t.size, "0.0.0-another-kernel", t.id,
				  t.id_size, &loc), 1);
	memcpy(other, t.id, t.id_size);
	other[t.id_size - 1] ^= 1;
	CHECK_EQ_INT(resolve_vdso(&t, t.size, u.release, other, t.id_size,
				  &loc), 0);

	/* What `perfex record` writes for the vDSO: our build-id. */
	syms = perfctr_symbols__new(&opts);
	REQUIRE(syms);
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 42, t.base, t.size, 0,
					      "[vdso]"), 0);
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, 42, t.fn, false,
			PERFCTR_RESOLVE_DSO_ONLY, &loc), 0);
	REQUIRE(perfctr_symbols__nr_dsos(syms) == 1);
	CHECK_EQ_INT(perfctr_symbols__dso(syms, 0, &info), 0);
	CHECK_STR(info.path, "[vdso]");
	CHECK_EQ_U64(info.hits, 1);
	CHECK_EQ_U64(info.build_id_size, t.id_size);
	CHECK(!memcmp(info.build_id, t.id, t.id_size));
	perfctr_symbols__delete(syms);
	CHECK_EQ_INT(perfctr_symbols__set_build_id(NULL, "[vdso]", t.id, 20),
		     -EINVAL);
}

TEST(demangled_names_in_perfs_short_form)
{
	static const char *const cases[][2] = {
		{ "ns::Widget<long>::spin(long)", "ns::Widget<long>::spin" },
		{ "ns::Widget<long>::spin(long) const", "ns::Widget<long>::spin" },
		{ "__asan::Allocator::QuarantineChunk(__asan::AsanChunk*, void*, "
		  "__sanitizer::BufferedStackTrace*) [clone .isra.0]",
		  "__asan::Allocator::QuarantineChunk" },
		{ "f(int) [clone .cold] [clone .isra.0]", "f" },
		{ "a::b() &&", "a::b" },
		{ "void f<int>(int)", "f<int>" },
		{ "std::vector<int, std::allocator<int> > g<std::vector<int, "
		  "std::allocator<int> > >(int (*)(char))",
		  "g<std::vector<int, std::allocator<int> > >" },
		{ "X::operator()(int)", "X::operator()" },
		{ "(anonymous namespace)::h(long)", "(anonymous namespace)::h" },
		{ "main::{lambda(int)#1}::operator()(int) const",
		  "main::{lambda(int)#1}::operator()" },
		{ "operator new(unsigned long)", "operator new" },
		{ "std::string", "std::string" },		/* no function */
		{ "(int)", "(int)" },				/* no name */
		{ "f(int", "f(int" },				/* unbalanced */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256];

		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		pc_demangled_short(buf);
		CHECK_STR(buf, cases[i][1]);
	}
}

TEST(cxx_names_demangled)
{
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "");
	PERFCTR_OPTS(perfctr_symbols_opts, raw, .kallsyms = "",
		     .no_demangle = true);
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	uint64_t ip = (uint64_t)(uintptr_t)&mangled_marker + 1;
	struct perfctr_symbols *syms;

	if (!perfctr_symbols_have_elf())
		test_skip("built without libelf: no user-space symbols");
	syms = perfctr_symbols__new(&raw);
	REQUIRE(syms);
	CHECK(perfctr_symbols__load_proc_maps(syms, getpid()) >= 1);
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, getpid(), ip, false, 0, &loc), 1);
	CHECK_STR(loc.sym, "_ZN2ns6WidgetIlE4spinEl");
	/* C names are never touched. */
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, getpid(),
			(uint64_t)(uintptr_t)&symbols_test_marker, false, 0, &loc), 1);
	CHECK_STR(loc.sym, "symbols_test_marker");
	perfctr_symbols__delete(syms);

	if (!perfctr_symbols_have_demangler())
		test_skip("libstdc++.so.6 (__cxa_demangle) cannot be loaded here");
	syms = perfctr_symbols__new(&opts);
	REQUIRE(syms);
	CHECK(perfctr_symbols__load_proc_maps(syms, getpid()) >= 1);
	for (int i = 0; i < 2; i++) {	/* the second time from the cache */
		CHECK_EQ_INT(perfctr_symbols__resolve(syms, getpid(), ip, false,
						      0, &loc), 1);
		CHECK_STR(loc.sym, "ns::Widget<long>::spin");
		CHECK_EQ_U64(loc.dso_addr - loc.sym_addr, 1);
	}
	CHECK_EQ_INT(perfctr_symbols__resolve(syms, getpid(),
			(uint64_t)(uintptr_t)&symbols_test_marker, false, 0, &loc), 1);
	CHECK_STR(loc.sym, "symbols_test_marker");
	perfctr_symbols__delete(syms);
}

/*
 * The PLT stubs of this test binary (.plt, .plt.sec, .plt.got) are
 * named "name@plt", at the addresses and with the names objdump gives
 * them (binutils reads the relocations as perf does).
 */
/* Each stub objdump names in @path (loaded at @bias) resolves to that
 * name; the number compared (*@irelative: of IRELATIVE stubs). */
static size_t check_plt_names(struct perfctr_symbols *syms, const char *path,
			      uint64_t bias, size_t *irelative)
{
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	char cmd[4200], line[512], name[256];
	unsigned long long vaddr;
	size_t checked = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	REQUIRE(f);
	while (fgets(line, sizeof(line), f)) {
		/* "0000000000002030 <abort@plt>:", an IRELATIVE stub's
		 * "<*ABS*+0x9f550@plt>:"; not the resolver's "<x@plt-0x10>". */
		if (sscanf(line, "%llx <%255[^>]>:", &vaddr, name) != 2 ||
		    !strstr(name, "@plt") || strstr(name, "@plt-"))
			continue;
		CHECK_EQ_INT(perfctr_symbols__resolve(syms, getpid(),
				vaddr + bias + 4, false, 0, &loc), 1);
		CHECK_STR(loc.sym, name);
		CHECK_EQ_U64(loc.sym_addr, vaddr);
		CHECK_STR(loc.dso, path);
		checked++;
		*irelative += name[0] == '*';
	}
	pclose(f);
	return checked;
}

struct libc_where {
	char path[4096];
	uint64_t bias;
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct libc_where *w = ctx;

	(void)size;
	if (!strstr(info->dlpi_name, "/libc.so"))
		return 0;
	if (!realpath(info->dlpi_name, w->path))
		return 0;
	w->bias = info->dlpi_addr;
	return 1;
}

TEST(plt_stubs_named_as_objdump_names_them)
{
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "");
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };
	struct perfctr_symbols *syms;
	struct libc_where libc = { .bias = 0 };
	size_t irelative = 0;
	char exe[4096];
	ssize_t n;

	if (!perfctr_symbols_have_elf())
		test_skip("built without libelf: no user-space symbols");
	if (access("/usr/bin/objdump", X_OK))
		test_skip("no /usr/bin/objdump (binutils) to compare with");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	REQUIRE(n > 0);
	exe[n] = '\0';
	syms = perfctr_symbols__new(&opts);
	REQUIRE(syms);
	REQUIRE(perfctr_symbols__load_proc_maps(syms, getpid()) >= 1);
	REQUIRE(perfctr_symbols__resolve(syms, getpid(),
			(uint64_t)(uintptr_t)&symbols_test_marker, false, 0,
			&loc) == 1);
	/* The test calls libc through its PLT: there are stubs.  (Where
	 * the file's virtual addresses were loaded: the marker's.) */
	CHECK(check_plt_names(syms, exe, (uint64_t)(uintptr_t)&symbols_test_marker -
			      loc.sym_addr, &irelative) >= 5);
	/* glibc calls its own IFUNCs (strlen, memcpy, ...) through
	 * IRELATIVE stubs, which objdump names "*ABS*+0xADDEND@plt". */
	if (dl_iterate_phdr(find_libc, &libc)) {
		CHECK(check_plt_names(syms, libc.path, libc.bias, &irelative) >= 1);
		/* glibc 2.26 on has them (Debian 12's: 39). */
		CHECK(irelative >= 1);
	}
	perfctr_symbols__delete(syms);
}

TEST_MAIN(TEST_CASE(kallsyms_fixture),
	  TEST_CASE(kallsyms_renewed_for_new_module),
	  TEST_CASE(maps_overlap_fork_exec),
	  TEST_CASE(own_elf_symbols), TEST_CASE(dso_only_does_not_load),
	  TEST_CASE(vdso_from_memory), TEST_CASE(cxx_names_demangled),
	  TEST_CASE(demangled_names_in_perfs_short_form),
	  TEST_CASE(plt_stubs_named_as_objdump_names_them),
	  TEST_CASE(aliases_chosen_as_perf_chooses))
