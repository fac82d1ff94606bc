// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr_annotation over this program's own file: a function of known
 * instructions (assembled below) disassembled and spelled as objdump
 * spells them, a C function's source lines, samples counted on the
 * instruction and line that hold them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <perfctr/annotate.h>

#include "test.h"

#if defined(__x86_64__)
/* Each row below is one of these instructions, in order. */
__asm__(".text\n"
	".globl pc_annotated_asm\n"
	".type pc_annotated_asm, @function\n"
	"pc_annotated_asm:\n"
	"	cmpq $1, %rdi\n"
	"	jbe 1f\n"
	"	movq 8(%rdi), %rax\n"
	"	leaq (%rdx,%rax), %rcx\n"
	"	addl $-1, %eax\n"
	"	shrq %rax\n"
	"	nopl (%rax)\n"
	/* nopl with a zero displacement byte (gas would leave it out) */
	"	.byte 0x0f, 0x1f, 0x40, 0x00\n"
	"	cmovneq %rax, %rcx\n"
	"	movq $0, 16(%rsp)\n"
	"1:	ret\n"
	".size pc_annotated_asm, .-pc_annotated_asm\n");
#endif

static const struct {
	const char *mnemonic;
	const char *operands;	/* %s: the function's own jump target */
} objdump_rows[] = {
	{ "cmp", "$0x1,%rdi" },
	{ "jbe", NULL },
	{ "mov", "0x8(%rdi),%rax" },
	{ "lea", "(%rdx,%rax,1),%rcx" },
	{ "add", "$0xffffffff,%eax" },
	{ "shr", "%rax" },
	{ "nopl", "(%rax)" },
	{ "nopl", "0x0(%rax)" },
	{ "cmovne", "%rax,%rcx" },
	{ "movq", "$0x0,0x10(%rsp)" },
	{ "ret", "" },
};

static inline __attribute__((always_inline)) int pc_inlined_square(int x)
{
	return x * x;
}

__attribute__((noinline)) int pc_annotated_c(int n);
__attribute__((noinline)) int pc_annotated_c(int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += pc_inlined_square(i);
	return sum;
}

static const char *self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0)
		test_skip("cannot read /proc/self/exe");
	buf[n] = '\0';
	return buf;
}

static struct perfctr_annotation *annotate(const char *symbol, size_t nr_events)
{
	struct perfctr_annotation_opts opts = { .sz = sizeof(opts),
						.nr_events = nr_events };
	struct perfctr_annotation *ann;
	char path[PATH_MAX];

	if (!perfctr_annotation_have_disassembler())
		test_skip("built without libcapstone or libelf: no disassembler");
	ann = perfctr_annotation__new(NULL, self_path(path, sizeof(path)), 0,
				      symbol, &opts);
	if (!ann)
		test_fail(__FILE__, __LINE__, "no annotation of %s: %s", symbol,
			  strerror(errno));
	return ann;
}

TEST(instructions_spelled_as_objdump)
{
#if defined(__x86_64__)
	struct perfctr_annotation_symbol sym = { .sz = sizeof(sym) };
	struct perfctr_annotation *ann = annotate("pc_annotated_asm", 1);
	size_t n = sizeof(objdump_rows) / sizeof(objdump_rows[0]);
	uint64_t next;

	REQUIRE(ann);
	CHECK_EQ_INT(perfctr_annotation__symbol(ann, &sym), 0);
	CHECK_STR(sym.name, "pc_annotated_asm");
	REQUIRE(perfctr_annotation__nr_insns(ann) == n);
	next = sym.start;
	for (size_t i = 0; i < n; i++) {
		struct perfctr_annotation_insn in = { .sz = sizeof(in) };
		char want[128];

		CHECK_EQ_INT(perfctr_annotation__insn(ann, i, &in), 0);
		CHECK_EQ_U64(in.addr, next);
		next += in.size;
		CHECK_STR(in.mnemonic, objdump_rows[i].mnemonic);
		if (objdump_rows[i].operands) {
			CHECK_STR(in.operands, objdump_rows[i].operands);
			continue;
		}
		/* The jump to the last instruction, named within the function. */
		CHECK(in.has_target);
		CHECK_EQ_U64(in.target, sym.end - 1);
		CHECK_STR(in.target_sym, "pc_annotated_asm");
		CHECK_EQ_U64(in.target_offset, sym.end - 1 - sym.start);
		snprintf(want, sizeof(want), "%llx <pc_annotated_asm+0x%llx>",
			 (unsigned long long)in.target,
			 (unsigned long long)in.target_offset);
		CHECK_STR(in.operands, want);
	}
	CHECK_EQ_U64(next, sym.end);
	perfctr_annotation__delete(ann);
#else
	test_skip("the function is x86-64 assembly");
#endif
}

TEST(samples_counted_on_instruction_and_line)
{
	struct perfctr_annotation_symbol sym = { .sz = sizeof(sym) };
	struct perfctr_annotation_insn in = { .sz = sizeof(in) };
	struct perfctr_annotation_count total;
	struct perfctr_annotation *ann = annotate("pc_annotated_c", 2);
	uint64_t line_samples = 0, line_period = 0;
	bool inlined = false;
	size_t last;

	REQUIRE(ann);
	CHECK_EQ_INT(perfctr_annotation__symbol(ann, &sym), 0);
	last = perfctr_annotation__nr_insns(ann) - 1;
	REQUIRE(perfctr_annotation__insn(ann, last, &in) == 0);
	/* Inside an instruction counts for it, as at its start. */
	CHECK_EQ_INT(perfctr_annotation__add(ann, in.addr + in.size - 1, 1, 7), 0);
	CHECK_EQ_INT(perfctr_annotation__add(ann, sym.start, 0, 5), 0);
	CHECK_EQ_INT(perfctr_annotation__add(ann, sym.start, 1, 3), 0);
	CHECK_EQ_INT(perfctr_annotation__add(ann, sym.end, 0, 1), -ERANGE);
	CHECK_EQ_INT(perfctr_annotation__add(ann, sym.start, 2, 1), -EINVAL);
	CHECK_EQ_INT(perfctr_annotation__total(ann, 1, &total), 0);
	CHECK_EQ_U64(total.samples, 2);
	CHECK_EQ_U64(total.period, 10);
	REQUIRE(perfctr_annotation__insn(ann, last, &in) == 0);
	CHECK_EQ_U64(in.counts[1].samples, 1);
	CHECK_EQ_U64(in.counts[1].period, 7);
	CHECK_EQ_U64(in.counts[0].samples, 0);
	CHECK_EQ_INT(perfctr_annotation__insn(ann, last + 1, &in), -ERANGE);
	if (!perfctr_annotation__nr_lines(ann)) {
		perfctr_annotation__delete(ann);
		test_skip("no line tables (built without libdw or -g)");
	}
	for (size_t i = 0; i < perfctr_annotation__nr_lines(ann); i++) {
		struct perfctr_annotation_line l = { .sz = sizeof(l) };

		CHECK_EQ_INT(perfctr_annotation__line(ann, i, &l), 0);
		CHECK(l.file && strstr(l.file, "/tests/unit/test_annotate.c"));
		CHECK(l.nr_insns > 0);
		line_samples += l.counts[1].samples;
		line_period += l.counts[1].period;
		inlined |= l.inlined && !strcmp(l.inlined, "pc_inlined_square");
	}
	/* The square's multiplication is named as the inlined function's. */
	CHECK(inlined);
	/* Every instruction of a C function has a line: the lines sum it all. */
	CHECK_EQ_U64(line_samples, 2);
	CHECK_EQ_U64(line_period, 10);
	perfctr_annotation__delete(ann);
}

TEST(missing_function_and_file)
{
	char path[PATH_MAX];

	if (!perfctr_annotation_have_disassembler())
		test_skip("built without libcapstone or libelf: no disassembler");
	errno = 0;
	CHECK(!perfctr_annotation__new(NULL, self_path(path, sizeof(path)), 0,
				       "pc_no_such_function", NULL));
	CHECK_EQ_INT(errno, ENOENT);
	errno = 0;
	CHECK(!perfctr_annotation__new(NULL, "/nonexistent/file", 0, NULL, NULL));
	CHECK_EQ_INT(errno, ENOENT);
	errno = 0;
	CHECK(!perfctr_annotation__new(NULL, "[kernel.kallsyms]", 0, NULL, NULL));
	CHECK_EQ_INT(errno, ENOENT);
	errno = 0;
	CHECK(!perfctr_annotation__new(NULL, NULL, 0, NULL, NULL));
	CHECK_EQ_INT(errno, EINVAL);
}

TEST_MAIN(TEST_CASE(instructions_spelled_as_objdump),
	  TEST_CASE(samples_counted_on_instruction_and_line),
	  TEST_CASE(missing_function_and_file))
