// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hardware tier, the fast read path: a counter read from user space
 * through the event's mmap'd page (offset + the hardware counter, under
 * the page's sequence lock) must agree with read().  On arm64 this needs
 * /proc/sys/kernel/perf_user_access = 1 and the rdpmc bit in config1;
 * without either the page says cap_user_rdpmc = 0 and a reader must use
 * read().  Raw perf_event_open and a reader written here, so these prove
 * the lane; they run in the PMU lane and skip elsewhere.
 */
#include <sys/mman.h>

#include "hw_lane.h"

#define N_LONG 1000000UL

#if defined(__aarch64__)
/* The page's index is the hardware counter + 1; 32 is the cycle counter. */
static uint64_t read_pmc(uint32_t index)
{
	uint64_t v = 0;

	switch (index) {
	case 32: __asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v)); break;
	case 1: __asm__ volatile("mrs %0, pmevcntr0_el0" : "=r"(v)); break;
	case 2: __asm__ volatile("mrs %0, pmevcntr1_el0" : "=r"(v)); break;
	case 3: __asm__ volatile("mrs %0, pmevcntr2_el0" : "=r"(v)); break;
	case 4: __asm__ volatile("mrs %0, pmevcntr3_el0" : "=r"(v)); break;
	case 5: __asm__ volatile("mrs %0, pmevcntr4_el0" : "=r"(v)); break;
	case 6: __asm__ volatile("mrs %0, pmevcntr5_el0" : "=r"(v)); break;
	}
	return v;
}
#else
static uint64_t read_pmc(uint32_t index) { (void)index; return 0; }
#endif

/* 0 and the count, or -1 when the page says user reads are not possible
 * (the caller falls back to read()). */
static int page_read(volatile struct perf_event_mmap_page *pc, uint64_t *out)
{
	uint32_t seq, index;
	uint64_t count;
	int usable;

	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		index = pc->index;
		count = pc->offset;
		usable = pc->cap_user_rdpmc && index;
		if (usable) {
			unsigned shift = 64 - pc->pmc_width;
			int64_t pmc = (int64_t)(read_pmc(index) << shift) >> shift;

			count += (uint64_t)pmc;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq);
	*out = count;
	return usable ? 0 : -1;
}

static __attribute__((noinline)) uint64_t page_count_loop(
	volatile struct perf_event_mmap_page *pc, unsigned long n)
{
	uint64_t a = 0, b = 0;

	page_read(pc, &a);
	hw_loop(n);
	page_read(pc, &b);
	return b - a;
}

struct mapped {
	int fd;
	volatile struct perf_event_mmap_page *pc;
};

static struct mapped open_mapped(uint64_t event, uint64_t config1)
{
	struct perf_event_attr attr;
	struct mapped m;
	void *p;

	hw_attr(&attr, event);
	attr.type = (uint32_t)hw_armv8_pmu_type();
	attr.config1 = config1;
	attr.disabled = 0;
	m.fd = hw_open(&attr, -1);
	if (m.fd < 0)
		HW_ABORT("open event 0x%" PRIx64 ": %s", event, strerror(errno));
	p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
		 m.fd, 0);
	if (p == MAP_FAILED)
		HW_ABORT("mmap: %s", strerror(errno));
	m.pc = p;
	return m;
}

static void close_mapped(struct mapped *m)
{
	munmap((void *)m->pc, (size_t)sysconf(_SC_PAGESIZE));
	close(m->fd);
}

/* Page reads bracket a read(), and count the loop exactly. */
static void check_agrees(struct mapped *m)
{
	uint64_t before, after, d1, d2;
	struct hw_value v;

	REQUIRE(page_read(m->pc, &before) == 0);
	REQUIRE(hw_read(m->fd, &v) == 0);
	REQUIRE(page_read(m->pc, &after) == 0);
	CHECK(before <= v.value);
	CHECK(v.value <= after);
	/* Only the user-mode instructions of read()'s wrapper lie between. */
	CHECK(after - before < 10000);
	page_count_loop(m->pc, 1);	/* warm-up, see hw_lane.h */
	d1 = page_count_loop(m->pc, 1);
	d2 = page_count_loop(m->pc, N_LONG);
	CHECK_EQ_U64(d2 - d1, HW_LOOP_INSNS * (N_LONG - 1));
}

TEST(user_read_instructions_32bit)
{
	struct mapped m;

	hw_require_lane();
	hw_set_user_access(1);
	m = open_mapped(ARMV8_INST_RETIRED, ARMV8_CONFIG1_RDPMC);
	CHECK_EQ_INT(m.pc->cap_user_rdpmc, 1);
	/* A programmable counter: pmevcntr<n>_el0, 32 bits wide.  The kernel
	 * starts counting events half-way to overflow, so every read here
	 * depends on the sign extension of pmc_width bits. */
	CHECK(m.pc->index >= 1 && m.pc->index <= 6);
	CHECK_EQ_INT(m.pc->pmc_width, 32);
	if (!test_failed())
		check_agrees(&m);
	close_mapped(&m);
	hw_restore_user_access();
}

TEST(user_read_cycles_64bit)
{
	struct mapped m;

	hw_require_lane();
	hw_set_user_access(1);
	m = open_mapped(ARMV8_CPU_CYCLES,
			ARMV8_CONFIG1_RDPMC | ARMV8_CONFIG1_LONG);
	CHECK_EQ_INT(m.pc->cap_user_rdpmc, 1);
	CHECK_EQ_INT(m.pc->index, 32);	/* pmccntr_el0 */
	CHECK_EQ_INT(m.pc->pmc_width, 64);
	if (!test_failed())
		check_agrees(&m);
	close_mapped(&m);
	hw_restore_user_access();
}

TEST(user_read_needs_rdpmc_bit)
{
	struct mapped m;
	uint64_t v;

	hw_require_lane();
	hw_set_user_access(1);
	m = open_mapped(ARMV8_INST_RETIRED, 0);
	CHECK_EQ_INT(m.pc->cap_user_rdpmc, 0);
	CHECK_EQ_INT(page_read(m.pc, &v), -1);
	close_mapped(&m);
	hw_restore_user_access();
}

/* With perf_user_access = 0 the kernel refuses EL0 reads (mrs traps with
 * SIGILL): the page must say so, and read() still counts exactly.  A
 * reader must look at the index, not only at cap_user_rdpmc. */
TEST(user_access_off_falls_back_to_read)
{
	struct mapped m;
	uint64_t v, c1, c2;

	hw_require_lane();
	hw_set_user_access(0);
	m = open_mapped(ARMV8_INST_RETIRED, ARMV8_CONFIG1_RDPMC);
	/* The kernel sets cap_user_rdpmc from config1 alone; it is the
	 * index of 0 that says "no counter to read from user space now". */
	CHECK_EQ_INT(m.pc->index, 0);
	CHECK_EQ_INT(page_read(m.pc, &v), -1);
	hw_count_loop(m.fd, 1);		/* warm-up, see hw_lane.h */
	c1 = hw_count_loop(m.fd, 1);
	c2 = hw_count_loop(m.fd, N_LONG);
	CHECK_EQ_U64(c2 - c1, HW_LOOP_INSNS * (N_LONG - 1));
	close_mapped(&m);
	hw_restore_user_access();
}

TEST_MAIN(TEST_CASE(user_read_instructions_32bit),
	  TEST_CASE(user_read_cycles_64bit),
	  TEST_CASE(user_read_needs_rdpmc_bit),
	  TEST_CASE(user_access_off_falls_back_to_read))
