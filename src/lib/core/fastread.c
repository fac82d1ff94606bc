// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The machine's counter and timestamp readers for the fast read: see
 * fastread.h for the algorithm. */
#include "core/fastread.h"

#if defined(__x86_64__) || defined(__i386__)

uint64_t pc_arch_read_pmc(uint32_t hw_index)
{
	uint32_t lo, hi;

	/* ECX = the page's index - 1; bit 30 selects the fixed counters and
	 * is part of what the kernel put in the page. */
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(hw_index));
	return (uint64_t)hi << 32 | lo;
}

uint64_t pc_arch_read_stamp(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

bool pc_arch_has_user_read(void)
{
	return true;
}

#elif defined(__aarch64__)

/* mrs takes the register name, not a number: one case per counter. */
#define PMEVCNTR(n)							\
	case n:								\
		__asm__ volatile("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); \
		break

uint64_t pc_arch_read_pmc(uint32_t hw_index)
{
	uint64_t v = 0;

	switch (hw_index) {
	PMEVCNTR(0); PMEVCNTR(1); PMEVCNTR(2); PMEVCNTR(3);
	PMEVCNTR(4); PMEVCNTR(5); PMEVCNTR(6); PMEVCNTR(7);
	PMEVCNTR(8); PMEVCNTR(9); PMEVCNTR(10); PMEVCNTR(11);
	PMEVCNTR(12); PMEVCNTR(13); PMEVCNTR(14); PMEVCNTR(15);
	PMEVCNTR(16); PMEVCNTR(17); PMEVCNTR(18); PMEVCNTR(19);
	PMEVCNTR(20); PMEVCNTR(21); PMEVCNTR(22); PMEVCNTR(23);
	PMEVCNTR(24); PMEVCNTR(25); PMEVCNTR(26); PMEVCNTR(27);
	PMEVCNTR(28); PMEVCNTR(29); PMEVCNTR(30);
	case 31:	/* the cycle counter: the kernel's index 32 */
		__asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}

uint64_t pc_arch_read_stamp(void)
{
	uint64_t v;

	/* isb: the counter must not be read ahead of the page's fields. */
	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

bool pc_arch_has_user_read(void)
{
	return true;
}

#else

uint64_t pc_arch_read_pmc(uint32_t hw_index)
{
	(void)hw_index;
	return 0;
}

uint64_t pc_arch_read_stamp(void)
{
	return 0;
}

bool pc_arch_has_user_read(void)
{
	return false;
}

#endif

bool pc_fastread_page(const volatile struct perf_event_mmap_page *pc,
		      bool want_times, struct pc_page_value *out)
{
	if (!pc_arch_has_user_read())
		return false;
	return pc_fastread_page_with(pc, want_times, pc_arch_read_pmc,
				     pc_arch_read_stamp, out);
}

bool pc_fastread_pages(const volatile struct perf_event_mmap_page *const *pcs,
		       size_t n, bool want_times, struct pc_page_value *out)
{
	struct pc_page_snap snaps[64];

	if (!pc_arch_has_user_read() || n > 64)
		return false;
	return pc_fastread_pages_with(pcs, n, want_times, pc_arch_read_pmc,
				      pc_arch_read_stamp, snaps, out);
}
