// SPDX-License-Identifier: LGPL-2.1
/* Unit tests of symbolisation: kallsyms fixtures, maps, and this very
 * program's own ELF symbols through /proc/self/maps. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <perfctr/symbols.h>

#include "test.h"

/* A function whose address we resolve through our own ELF file. */
__attribute__((noinline, used)) int symbols_test_marker(int x);
int symbols_test_marker(int x)
{
	return x * 3 + 1;
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
	int fd = mkstemp(kallsyms_path);

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

TEST(maps_overlap_fork_exec)
{
	PERFCTR_OPTS(perfctr_symbols_opts, opts, .kallsyms = "");
	struct perfctr_symbols *syms = perfctr_symbols__new(&opts);
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };

	REQUIRE(syms);
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 10, 0x1000, 0x3000, 0, "//anon"), 0);
	/* The middle page is replaced: three pieces. */
	CHECK_EQ_INT(perfctr_symbols__add_map(syms, 10, 0x2000, 0x1000, 0x5000, "[vdso]"), 0);
	perfctr_symbols__resolve(syms, 10, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "//anon");
	CHECK_EQ_U64(loc.dso_addr, 0x800);
	perfctr_symbols__resolve(syms, 10, 0x2010, false, 0, &loc);
	CHECK_STR(loc.dso, "[vdso]");
	CHECK_EQ_U64(loc.dso_addr, 0x5010);
	perfctr_symbols__resolve(syms, 10, 0x3010, false, 0, &loc);
	CHECK_STR(loc.dso, "//anon");
	CHECK_EQ_U64(loc.dso_addr, 0x2010);	/* pgoff follows the split */
	perfctr_symbols__resolve(syms, 10, 0x4000, false, 0, &loc);
	CHECK_STR(loc.dso, "[unknown]");
	/* Another process sees nothing until it forks from 10. */
	perfctr_symbols__resolve(syms, 11, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "[unknown]");
	CHECK_EQ_INT(perfctr_symbols__fork(syms, 11, 10), 0);
	perfctr_symbols__resolve(syms, 11, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "//anon");
	perfctr_symbols__exec(syms, 11);
	perfctr_symbols__resolve(syms, 11, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "[unknown]");
	/* The parent keeps its maps. */
	perfctr_symbols__resolve(syms, 10, 0x1800, false, 0, &loc);
	CHECK_STR(loc.dso, "//anon");
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

TEST_MAIN(TEST_CASE(kallsyms_fixture), TEST_CASE(maps_overlap_fork_exec),
	  TEST_CASE(own_elf_symbols), TEST_CASE(dso_only_does_not_load))
