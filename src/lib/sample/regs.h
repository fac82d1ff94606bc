/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The user registers of a sample (PERF_SAMPLE_REGS_USER) per architecture:
 * which perf register numbers a DWARF unwind starts from, and the DWARF
 * register number each one is.  Both tables are here whatever the host, so
 * a file recorded on the other architecture maps its registers too.
 */
#ifndef PC_SAMPLE_REGS_H
#define PC_SAMPLE_REGS_H

#include <stdint.h>

enum pc_regs_arch { PC_REGS_NONE, PC_REGS_X86_64, PC_REGS_ARM64 };

/*
 * x86-64 (arch/x86/include/uapi/asm/perf_regs.h): AX BX CX DX SI DI BP SP
 * IP FLAGS CS SS DS ES FS GS R8..R15 are 0..23.  perf leaves out the
 * segment registers DS ES FS GS (the kernel reports them as 0 for 64-bit
 * tasks), and so do we.
 */
#define PC_REGS_X86_64_MASK (((1ULL << 24) - 1) & ~(0xfULL << 12))
#define PC_REGS_X86_64_IP 8
#define PC_REGS_X86_64_SP 7

/* arm64 (arch/arm64/include/uapi/asm/perf_regs.h): X0..X30, SP, PC. */
#define PC_REGS_ARM64_MASK ((1ULL << 33) - 1)
#define PC_REGS_ARM64_IP 32
#define PC_REGS_ARM64_SP 31

/* The DWARF number of x86-64 perf register i (-1: none): rax rdx rcx rbx
 * rsi rdi rbp rsp r8..r15 are DWARF 0..15. */
static const int8_t pc_regs_x86_64_dwarf[24] = {
	[0] = 0, [1] = 3, [2] = 2, [3] = 1, [4] = 4, [5] = 5, [6] = 6,
	[7] = 7, [8] = -1, [9] = -1, [10] = -1, [11] = -1, [12] = -1,
	[13] = -1, [14] = -1, [15] = -1, [16] = 8, [17] = 9, [18] = 10,
	[19] = 11, [20] = 12, [21] = 13, [22] = 14, [23] = 15,
};

#if defined(__x86_64__)
#define PC_REGS_HOST PC_REGS_X86_64
#define PC_REGS_HOST_MASK PC_REGS_X86_64_MASK
#elif defined(__aarch64__)
#define PC_REGS_HOST PC_REGS_ARM64
#define PC_REGS_HOST_MASK PC_REGS_ARM64_MASK
#else
#define PC_REGS_HOST PC_REGS_NONE
#define PC_REGS_HOST_MASK 0ULL
#endif

/* Register @reg of a sample's user registers (@mask, @regs packed in bit
 * order); false when the sample does not have it. */
static inline int pc_regs_get(uint64_t mask, const uint64_t *regs,
			      uint64_t nr, unsigned int reg, uint64_t *val)
{
	unsigned int i;

	if (reg >= 64 || !(mask & (1ULL << reg)))
		return 0;
	i = (unsigned int)__builtin_popcountll(mask & ((1ULL << reg) - 1));
	if (i >= nr)
		return 0;
	*val = regs[i];
	return 1;
}

#endif /* PC_SAMPLE_REGS_H */
