// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unit tests of the event layer: one table of {specification, fixture,
 * expected encoding or expected error}, run against the fixture sysfs and
 * tracefs trees in tests/fixtures (never the machine's).
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <stdlib.h>

#include "common/internal.h"
#include "perfctr/event.h"
#include "test.h"

enum fixture { VM, INTEL, ARM };

#ifdef HAVE_LIBPFM
/* libpfm4 reads this once, at its first use in the process: make it
 * encode for a Skylake core whatever this machine is. */
__attribute__((constructor)) static void force_libpfm_pmu(void)
{
	setenv("LIBPFM_FORCE_PMU", "skl", 1);
}
#endif

static const char *const fixture_dirs[] = {
	[VM] = "tests/fixtures/sysfs-vm",
	[INTEL] = "tests/fixtures/sysfs-intel",
	[ARM] = "tests/fixtures/sysfs-arm64",
};

/* Expected attr flags. */
#define EU	(1u << 0)	/* exclude_user */
#define EK	(1u << 1)	/* exclude_kernel */
#define EH	(1u << 2)	/* exclude_hv */
#define EHOST	(1u << 3)
#define EGUEST	(1u << 4)
#define PIN	(1u << 5)
#define SREAD	(1u << 6)	/* PERF_SAMPLE_READ in sample_type */
#define P(n)	((unsigned)(n) << 8)	/* precise_ip */

struct row {
	const char *spec;
	enum fixture fx;
	int nr;			/* events expected; 0 for an error row */
	uint32_t type;
	uint64_t config, config1, config2;	/* bp_addr, bp_len for mem: */
	unsigned flags;
	uint32_t bp_type;
	int errnum;
	int column;
	const char *msg;	/* substring of the message (or of the hint) */
};

#define OK(s, f, n, t, c, c1, c2, fl) \
	{ .spec = s, .fx = f, .nr = n, .type = t, .config = c, \
	  .config1 = c1, .config2 = c2, .flags = fl }
#define BP(s, n, addr, len, bpt, fl) \
	{ .spec = s, .fx = VM, .nr = n, .type = PERF_TYPE_BREAKPOINT, \
	  .config1 = addr, .config2 = len, .bp_type = bpt, .flags = fl }
#define ERR(s, f, e, col, m) \
	{ .spec = s, .fx = f, .errnum = e, .column = col, .msg = m }

#define HWT PERF_TYPE_HARDWARE
#define SWT PERF_TYPE_SOFTWARE
#define CAT PERF_TYPE_HW_CACHE
#define TPT PERF_TYPE_TRACEPOINT
#define CACHE(c, op, res) (PERF_COUNT_HW_CACHE_##c | \
	PERF_COUNT_HW_CACHE_OP_##op << 8 | PERF_COUNT_HW_CACHE_RESULT_##res << 16)

static const struct row rows[] = {
	/* generic hardware */
	OK("cycles", VM, 1, HWT, PERF_COUNT_HW_CPU_CYCLES, 0, 0, 0),
	OK("cpu-cycles", VM, 1, HWT, PERF_COUNT_HW_CPU_CYCLES, 0, 0, 0),
	OK("instructions", VM, 1, HWT, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, 0),
	OK("cache-references", VM, 1, HWT, PERF_COUNT_HW_CACHE_REFERENCES, 0, 0, 0),
	OK("cache-misses", VM, 1, HWT, PERF_COUNT_HW_CACHE_MISSES, 0, 0, 0),
	OK("branches", VM, 1, HWT, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0, 0, 0),
	OK("branch-instructions", VM, 1, HWT, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0, 0, 0),
	OK("branch-misses", VM, 1, HWT, PERF_COUNT_HW_BRANCH_MISSES, 0, 0, 0),
	OK("bus-cycles", VM, 1, HWT, PERF_COUNT_HW_BUS_CYCLES, 0, 0, 0),
	OK("stalled-cycles-frontend", VM, 1, HWT, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 0, 0, 0),
	OK("idle-cycles-backend", VM, 1, HWT, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 0, 0, 0),
	OK("ref-cycles", VM, 1, HWT, PERF_COUNT_HW_REF_CPU_CYCLES, 0, 0, 0),
	/* software */
	OK("task-clock", VM, 1, SWT, PERF_COUNT_SW_TASK_CLOCK, 0, 0, 0),
	OK("cpu-clock", VM, 1, SWT, PERF_COUNT_SW_CPU_CLOCK, 0, 0, 0),
	OK("page-faults", VM, 1, SWT, PERF_COUNT_SW_PAGE_FAULTS, 0, 0, 0),
	OK("faults", VM, 1, SWT, PERF_COUNT_SW_PAGE_FAULTS, 0, 0, 0),
	OK("context-switches", VM, 1, SWT, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, 0),
	OK("cs", VM, 1, SWT, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, 0),
	OK("cpu-migrations", VM, 1, SWT, PERF_COUNT_SW_CPU_MIGRATIONS, 0, 0, 0),
	OK("migrations", VM, 1, SWT, PERF_COUNT_SW_CPU_MIGRATIONS, 0, 0, 0),
	OK("minor-faults", VM, 1, SWT, PERF_COUNT_SW_PAGE_FAULTS_MIN, 0, 0, 0),
	OK("major-faults", VM, 1, SWT, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 0, 0, 0),
	OK("alignment-faults", VM, 1, SWT, PERF_COUNT_SW_ALIGNMENT_FAULTS, 0, 0, 0),
	OK("emulation-faults", VM, 1, SWT, PERF_COUNT_SW_EMULATION_FAULTS, 0, 0, 0),
	OK("dummy", VM, 1, SWT, PERF_COUNT_SW_DUMMY, 0, 0, 0),
	OK("bpf-output", VM, 1, SWT, PERF_COUNT_SW_BPF_OUTPUT, 0, 0, 0),
	OK("cgroup-switches", VM, 1, SWT, PERF_COUNT_SW_CGROUP_SWITCHES, 0, 0, 0),
	/* generic cache events */
	OK("L1-dcache-loads", VM, 1, CAT, CACHE(L1D, READ, ACCESS), 0, 0, 0),
	OK("L1-dcache-load-misses", VM, 1, CAT, CACHE(L1D, READ, MISS), 0, 0, 0),
	OK("L1-dcache-stores", VM, 1, CAT, CACHE(L1D, WRITE, ACCESS), 0, 0, 0),
	OK("L1-dcache-prefetch-misses", VM, 1, CAT, CACHE(L1D, PREFETCH, MISS), 0, 0, 0),
	OK("L1-icache-load-misses", VM, 1, CAT, CACHE(L1I, READ, MISS), 0, 0, 0),
	OK("LLC-loads", VM, 1, CAT, CACHE(LL, READ, ACCESS), 0, 0, 0),
	OK("LLC-store-misses", VM, 1, CAT, CACHE(LL, WRITE, MISS), 0, 0, 0),
	OK("dTLB-load-misses", VM, 1, CAT, CACHE(DTLB, READ, MISS), 0, 0, 0),
	OK("iTLB-loads", VM, 1, CAT, CACHE(ITLB, READ, ACCESS), 0, 0, 0),
	OK("branch-loads", VM, 1, CAT, CACHE(BPU, READ, ACCESS), 0, 0, 0),
	OK("branch-load-misses", VM, 1, CAT, CACHE(BPU, READ, MISS), 0, 0, 0),
	OK("node-store-misses", VM, 1, CAT, CACHE(NODE, WRITE, MISS), 0, 0, 0),
	OK("l1d-misses", VM, 1, CAT, CACHE(L1D, READ, MISS), 0, 0, 0),
	OK("L1-dcache", VM, 1, CAT, CACHE(L1D, READ, ACCESS), 0, 0, 0),
	/* modifiers */
	OK("cycles:u", VM, 1, HWT, 0, 0, 0, EK | EH),
	OK("cycles:k", VM, 1, HWT, 0, 0, 0, EU | EH),
	OK("cycles:h", VM, 1, HWT, 0, 0, 0, EU | EK),
	OK("cycles:uk", VM, 1, HWT, 0, 0, 0, EH),
	OK("cycles:H", VM, 1, HWT, 0, 0, 0, EGUEST),
	OK("cycles:G", VM, 1, HWT, 0, 0, 0, EHOST),
	OK("cycles:GH", VM, 1, HWT, 0, 0, 0, 0),
	OK("cycles:p", VM, 1, HWT, 0, 0, 0, P(1)),
	OK("cycles:ppp", VM, 1, HWT, 0, 0, 0, P(3)),
	OK("cycles:upp", VM, 1, HWT, 0, 0, 0, EK | EH | P(2)),
	OK("cycles:S", VM, 1, HWT, 0, 0, 0, SREAD),
	OK("cycles:D", VM, 1, HWT, 0, 0, 0, PIN),
	OK("task-clock:u", VM, 1, SWT, PERF_COUNT_SW_TASK_CLOCK, 0, 0, EK | EH),
	OK("{cycles,instructions}:u", VM, 2, HWT, 0, 0, 0, EK | EH),
	OK("{cycles:k,instructions}:u", VM, 2, HWT, 0, 0, 0, EH),
	OK("{cycles,instructions}:D", VM, 2, HWT, 0, 0, 0, PIN),
	/* lists and groups */
	OK("cycles,instructions", VM, 2, HWT, 0, 0, 0, 0),
	OK("{cycles,instructions},task-clock", VM, 3, HWT, 0, 0, 0, 0),
	OK("task-clock,{cs,faults}", VM, 3, SWT, PERF_COUNT_SW_TASK_CLOCK, 0, 0, 0),
	OK(" cycles , instructions ", VM, 2, HWT, 0, 0, 0, 0),
	OK("{ cycles:u, instructions }:k, cs", VM, 3, HWT, 0, 0, 0, EH),
	ERR("cycles, cyclez", VM, ENOENT, 8, "unknown event 'cyclez'"),
	ERR("{cycles}:", VM, EINVAL, 9, "empty modifier"),
	/* raw */
	OK("r1a8", VM, 1, PERF_TYPE_RAW, 0x1a8, 0, 0, 0),
	OK("r01c2:u", VM, 1, PERF_TYPE_RAW, 0x1c2, 0, 0, EK | EH),
	/* tracepoints (fixture tracefs) */
	OK("syscalls:sys_enter_getppid", VM, 1, TPT, 1001, 0, 0, 0),
	OK("sched:sched_switch", VM, 1, TPT, 1007, 0, 0, 0),
	OK("sched:sched_switch:u", VM, 1, TPT, 1007, 0, 0, EK | EH),
	OK("syscalls:sys_*_getppid", VM, 2, TPT, 1001, 0, 0, 0),
	OK("syscalls:sys_enter_*", VM, 3, TPT, 1001, 0, 0, 0),
	OK("sched:*", VM, 4, TPT, 1009, 0, 0, 0),
	OK("*:sys_enter", VM, 1, TPT, 1011, 0, 0, 0),
	OK("raw_syscalls:sys_enter,sched:sched_switch", VM, 2, TPT, 1011, 0, 0, 0),
	OK("{syscalls:sys_enter_read,syscalls:sys_enter_write}", VM, 2, TPT, 1003, 0, 0, 0),

	/* Intel cpu PMU (type 4) through its format/ files */
	OK("cpu/event=0x3c/", INTEL, 1, 4, 0x3c, 0, 0, 0),
	OK("cpu/event=0xc0,umask=0x01/", INTEL, 1, 4, 0x1c0, 0, 0, 0),
	OK("cpu/event=0x3c,umask=0x0,edge/", INTEL, 1, 4, 0x4003c, 0, 0, 0),
	OK("cpu/event=0xc2,umask=0x1,cmask=2,inv/", INTEL, 1, 4, 0x28001c2, 0, 0, 0),
	OK("cpu/event=0x3c,pc/", INTEL, 1, 4, 0x8003c, 0, 0, 0),
	OK("cpu/event=0x3c,any=1/", INTEL, 1, 4, 0x20003c, 0, 0, 0),
	OK("cpu/event=60,umask=1/", INTEL, 1, 4, 0x13c, 0, 0, 0),
	OK("cpu/event=0xb7,umask=0x1,offcore_rsp=0x10001/", INTEL, 1, 4, 0x1b7, 0x10001, 0, 0),
	OK("cpu/config=0x1c0/", INTEL, 1, 4, 0x1c0, 0, 0, 0),
	OK("cpu/config=0x1c0,config1=5,config2=7/", INTEL, 1, 4, 0x1c0, 5, 7, 0),
	OK("cpu/event=0x3c,in_tx,in_tx_cp/", INTEL, 1, 4, 0x30000003cull, 0, 0, 0),
	OK("cpu/cpu-cycles/", INTEL, 1, 4, 0x3c, 0, 0, 0),
	OK("cpu/ref-cycles/", INTEL, 1, 4, 0x300, 0, 0, 0),
	OK("cpu/mem-loads/", INTEL, 1, 4, 0x1cd, 3, 0, 0),
	OK("cpu/mem-loads,ldlat=30/", INTEL, 1, 4, 0x1cd, 30, 0, 0),
	ERR("cpu/mem-loads/pp", INTEL, EINVAL, 14, "unexpected 'p' after '/'"),
	OK("cpu/mem-loads/:pp", INTEL, 1, 4, 0x1cd, 3, 0, P(2)),
	OK("cpu/cycles-ct/", INTEL, 1, 4, 0x30000003cull, 0, 0, 0),
	OK("mem-loads", INTEL, 1, 4, 0x1cd, 3, 0, 0),
	OK("mem-loads:upp", INTEL, 1, 4, 0x1cd, 3, 0, EK | EH | P(2)),
	OK("cycles-t", INTEL, 1, 4, 0x10000003cull, 0, 0, 0),
	OK("topdown-recovery-bubbles", INTEL, 1, 4, 0x120030d, 0, 0, 0),
	OK("cpu/event=0x3c,usr/", INTEL, 1, 4, 0x3c, 0, 0, EK | EH),
	OK("cpu/event=0x3c,os=1/", INTEL, 1, 4, 0x3c, 0, 0, EU | EH),
	OK("cpu/event=0x3c,usr,os/", INTEL, 1, 4, 0x3c, 0, 0, EH),
	OK("cpu/event=0x3c,usr/:k", INTEL, 1, 4, 0x3c, 0, 0, EH),
	OK("cpu/event=0x3c/:u", INTEL, 1, 4, 0x3c, 0, 0, EK | EH),
	OK("cpu/event=0x3c,name=mycycles/", INTEL, 1, 4, 0x3c, 0, 0, 0),
	OK("{cpu/event=0x3c/,cpu/event=0xc0/}:u", INTEL, 2, 4, 0x3c, 0, 0, EK | EH),
	OK("cycles", INTEL, 1, HWT, PERF_COUNT_HW_CPU_CYCLES, 0, 0, 0),
	/* raw PerfEvtSel words on the Intel fixture: USR/OS mapped, rest checked */
	OK("r1c2", INTEL, 1, PERF_TYPE_RAW, 0x1c2, 0, 0, 0),
	OK("r0300c0", INTEL, 1, PERF_TYPE_RAW, 0xc0, 0, 0, EH),
	OK("r0100c0", INTEL, 1, PERF_TYPE_RAW, 0xc0, 0, 0, EK | EH),
	OK("r0200c0", INTEL, 1, PERF_TYPE_RAW, 0xc0, 0, 0, EU | EH),
	OK("r0100c0:k", INTEL, 1, PERF_TYPE_RAW, 0xc0, 0, 0, EH),
	OK("r28001c2", INTEL, 1, PERF_TYPE_RAW, 0x28001c2, 0, 0, 0),
	ERR("r4100c0", INTEL, EINVAL, 0, "EN (bit 22)"),
	ERR("r5300c0", INTEL, EINVAL, 0, "INT (bit 20)"),
	ERR("r1001c2", INTEL, EINVAL, 0, "INT (bit 20)"),
	ERR("r4000001c2", INTEL, EINVAL, 0, "config bit 34 is reserved on pmu 'cpu'"),
	ERR("r8001c2", INTEL, EINVAL, 0, "inv needs a non-zero cmask"),
	ERR("cycles,r4000c0", INTEL, EINVAL, 7, "EN (bit 22)"),
	/* and through terms */
	ERR("cpu/event=0x3c,inv/", INTEL, EINVAL, 4, "inv needs a non-zero cmask"),
	ERR("cpu/event=0x100/", INTEL, EINVAL, 4, "does not fit 'event' (8 bits: config:0-7)"),
	ERR("cpu/event=0x3c,umask=256/", INTEL, EINVAL, 15, "does not fit 'umask'"),
	ERR("cpu/event=0x3c,int=1/", INTEL, EINVAL, 15, "INT (bit 20)"),
	ERR("cpu/event=0x3c,en/", INTEL, EINVAL, 15, "EN (bit 22)"),
	ERR("cpu/event=0x3c,usr=0,os=0/", INTEL, EINVAL, 4, "count nothing"),
	ERR("cpu/event=0x3c,edge=2/", INTEL, EINVAL, 15, "does not fit 'edge' (1 bits"),
	ERR("cpu/config=0x40003c/", INTEL, EINVAL, 4, "EN (bit 22)"),
	ERR("cpu/evnt=0x3c/", INTEL, ENOENT, 4, "unknown term 'evnt' for pmu 'cpu'"),
	ERR("cpu/evnt=0x3c/", INTEL, ENOENT, 4, "did you mean 'event'?"),
	ERR("cpu/event=zz/", INTEL, EINVAL, 4, "invalid number 'zz'"),
	ERR("cpu/event=0x3c,/", INTEL, EINVAL, 15, "empty term"),
	ERR("cpu/config=/", INTEL, EINVAL, 4, "invalid number"),
	ERR("cpux/event=1/", INTEL, ENODEV, 0, "unknown pmu 'cpux'"),
	ERR("cpux/event=1/", INTEL, ENODEV, 0, "did you mean 'cpu'?"),
	ERR("cpu/event=1", INTEL, EINVAL, 3, "missing closing '/'"),
	ERR("cpu/event=0x3c/u", INTEL, EINVAL, 15, "unexpected 'u' after '/'"),
	ERR("mem-lods", INTEL, ENOENT, 0, "did you mean 'mem-loads'?"),
	ERR("mem-loads", VM, ENOENT, 0, "unknown event 'mem-loads'"),
	/* uncore, power, msr, uprobe: other sysfs PMUs */
	OK("uncore_imc_0/cas_count_read/", INTEL, 1, 12, 0x304, 0, 0, 0),
	OK("uncore_imc_1/event=0x04,umask=0x03/", INTEL, 1, 13, 0x304, 0, 0, 0),
	OK("uncore_imc/cas_count_read/", INTEL, 2, 12, 0x304, 0, 0, 0),
	OK("cas_count_write", INTEL, 2, 12, 0xc04, 0, 0, 0),
	OK("uncore_imc_0/thresh=3,event=1/", INTEL, 1, 12, 0x3000001, 0, 0, 0),
	OK("energy-pkg", INTEL, 1, 15, 2, 0, 0, 0),
	OK("power/energy-ram/", INTEL, 1, 15, 3, 0, 0, 0),
	OK("msr/tsc/", INTEL, 1, 16, 0, 0, 0, 0),
	OK("msr/aperf/", INTEL, 1, 16, 1, 0, 0, 0),
	OK("tsc", VM, 1, 9, 0, 0, 0, 0),
	OK("tsc:u", VM, 1, 9, 0, 0, 0, EK | EH),
	OK("uprobe/retprobe/", VM, 1, 7, 1, 0, 0, 0),
	OK("uprobe/config1=0x1000,config2=0x20/", VM, 1, 7, 0, 0x1000, 0x20, 0),
	ERR("uprobe/retprobe=2/", VM, EINVAL, 7, "does not fit 'retprobe'"),
	/* arm64 armv8_pmuv3_0 (type 8) */
	OK("armv8_pmuv3_0/event=0x11/", ARM, 1, 8, 0x11, 0, 0, 0),
	OK("armv8_pmuv3_0/cpu_cycles/", ARM, 1, 8, 0x11, 0, 0, 0),
	OK("armv8_pmuv3_0/event=0x11,long/", ARM, 1, 8, 0x11, 1, 0, 0),
	OK("armv8_pmuv3_0/event=0x11,long,rdpmc=1/", ARM, 1, 8, 0x11, 3, 0, 0),
	OK("armv8_pmuv3/event=0x8/", ARM, 1, 8, 0x8, 0, 0, 0),
	OK("inst_retired", ARM, 1, 8, 0x8, 0, 0, 0),
	OK("l1d_cache_refill:u", ARM, 1, 8, 0x3, 0, 0, EK | EH),
	OK("{cpu_cycles,inst_retired}:k", ARM, 2, 8, 0x11, 0, 0, EU | EH),
	OK("r11", ARM, 1, PERF_TYPE_RAW, 0x11, 0, 0, 0),
	ERR("r0100c0", ARM, EINVAL, 0, "config bit 16 is reserved"),
	ERR("r10011", ARM, EINVAL, 0, "config bit 16 is reserved on pmu 'armv8_pmuv3_0'"),
	ERR("armv8_pmuv3_0/event=0x10000/", ARM, EINVAL, 14, "does not fit 'event' (16 bits"),
	ERR("armv8_pmuv3_0/event=0x11,umask=1/", ARM, ENOENT, 25, "unknown term 'umask'"),
	ERR("l1d_cache_refil", ARM, ENOENT, 0, "did you mean 'l1d_cache_refill'?"),
	ERR("cpu/event=0x3c/", ARM, ENODEV, 0, "unknown pmu 'cpu'"),
	ERR("cpu/event=0x3c/", VM, ENODEV, 0,
	    "the PMUs here are breakpoint, msr, software, tracepoint, uprobe"),
	/* breakpoints */
	BP("mem:0x1000", 1, 0x1000, 4, HW_BREAKPOINT_RW, 0),
	BP("mem:0x1000:w", 1, 0x1000, 4, HW_BREAKPOINT_W, 0),
	BP("mem:4096/8:w", 1, 0x1000, 8, HW_BREAKPOINT_W, 0),
	BP("mem:0x1000/2:rw", 1, 0x1000, 2, HW_BREAKPOINT_RW, 0),
	BP("mem:0x1000/8:rw:u", 1, 0x1000, 8, HW_BREAKPOINT_RW, EK | EH),
	BP("mem:0x1000:u", 1, 0x1000, 4, HW_BREAKPOINT_RW, EK | EH),
#ifdef __aarch64__
	BP("mem:0x1000:x", 1, 0x1000, 4, HW_BREAKPOINT_X, 0),
#else
	BP("mem:0x1000:x", 1, 0x1000, sizeof(long), HW_BREAKPOINT_X, 0),
#endif
	BP("mem:0x1000:w,mem:0x2000:w", 2, 0x1000, 4, HW_BREAKPOINT_W, 0),
	BP("{mem:0x1000:w,task-clock}", 2, 0x1000, 4, HW_BREAKPOINT_W, 0),
	ERR("mem:0x1000/9:w", VM, EINVAL, 11, "breakpoint length 9"),
	ERR("mem:0x1000:rx", VM, EINVAL, 11, "execute breakpoint cannot also watch"),
	ERR("mem:zz", VM, EINVAL, 4, "invalid breakpoint address 'zz'"),
	ERR("mem:0x1000:ww", VM, EINVAL, 12, "'w' given twice"),
	ERR("mem:0x1000/x:w", VM, EINVAL, 11, "invalid breakpoint length 'x'"),
	ERR("mem:0x1000:w:q", VM, EINVAL, 13, "invalid modifier 'q'"),
#if defined(__x86_64__) || defined(__i386__)
	ERR("mem:0x1000:r", VM, EOPNOTSUPP, 11, "x86 cannot watch reads alone"),
	ERR("mem:0x1001/4:w", VM, EINVAL, 4, "not aligned to the length 4"),
	ERR("mem:0x1000/2:x", VM, EINVAL, 11, "an execute breakpoint is"),
	ERR("mem:0x1000/3:w", VM, EINVAL, 11, "must be 1, 2, 4 or 8"),
#else
	BP("mem:0x1000/3:w", 1, 0x1000, 3, HW_BREAKPOINT_W, 0),
	BP("mem:0x1001/2:w", 1, 0x1001, 2, HW_BREAKPOINT_W, 0),
	BP("mem:0x1000:r", 1, 0x1000, 4, HW_BREAKPOINT_R, 0),
#endif
	/* errors */
	ERR("cyclez", VM, ENOENT, 0, "unknown event 'cyclez'"),
	ERR("cyclez", VM, ENOENT, 0, "did you mean 'cycles'?"),
	ERR("cycles,instructionz", VM, ENOENT, 7, "did you mean 'instructions'?"),
	ERR("task-clok", VM, ENOENT, 0, "did you mean 'task-clock'?"),
	ERR("L1-dcache-load-mises", VM, ENOENT, 0, "did you mean 'L1-dcache-load-misses'?"),
	ERR("", VM, EINVAL, 0, "empty event specification"),
	ERR("cycles,", VM, EINVAL, 7, "empty event"),
	ERR("cycles,,instructions", VM, EINVAL, 7, "empty event"),
	ERR("cycles:x", VM, EINVAL, 7, "invalid modifier 'x'"),
	ERR("cycles:uq", VM, EINVAL, 8, "invalid modifier 'q'"),
	ERR("cycles:", VM, EINVAL, 7, "empty modifier"),
	ERR("cycles:pppp", VM, EINVAL, 10, "at most :ppp"),
	ERR("{cycles,instructions", VM, EINVAL, 0, "missing '}'"),
	ERR("{}", VM, EINVAL, 0, "empty group"),
	ERR(":u", VM, EINVAL, 0, "missing event name before ':'"),
	ERR("cycles,:", VM, EINVAL, 7, "missing event name"),
	ERR("{cycles,{instructions}}", VM, EINVAL, 8, "cannot be nested"),
	ERR("{cycles}:z", VM, EINVAL, 9, "invalid modifier 'z'"),
	ERR("cycles}", VM, EINVAL, 6, "unexpected '}'"),
	ERR("syscalls:sys_enter_getppidd", VM, ENOENT, 0, "did you mean 'syscalls:sys_enter_getppid'?"),
	ERR("sched:nothing_*", VM, ENOENT, 0, "no tracepoint matches 'sched:nothing_*'"),
	ERR("task-clock,sched:sched_swich", VM, ENOENT, 11, "unknown tracepoint 'sched:sched_swich'"),
};

static void check_flags(const struct perf_event_attr *a, unsigned flags,
			const char *spec)
{
	unsigned got = (a->exclude_user ? EU : 0) | (a->exclude_kernel ? EK : 0) |
		       (a->exclude_hv ? EH : 0) | (a->exclude_host ? EHOST : 0) |
		       (a->exclude_guest ? EGUEST : 0) | (a->pinned ? PIN : 0) |
		       (a->sample_type & PERF_SAMPLE_READ ? SREAD : 0) |
		       P(a->precise_ip);

	if (got != flags)
		test_fail(__FILE__, __LINE__, "'%s': flags %#x, expected %#x",
			  spec, got, flags);
}

static void run_row(const struct row *r)
{
	struct perfctr_evlist *list = perfctr_evlist__new();
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	PERFCTR_OPTS(perfctr_parse_opts, opts,
		     .sysfs_root = test_src_path(fixture_dirs[r->fx]),
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));
	const struct perf_event_attr *a;
	int ret;

	REQUIRE(list);
	ret = perfctr_evlist__parse(list, r->spec, &opts, &err);
	if (!r->nr) {
		if (ret != -r->errnum || err.errnum != r->errnum ||
		    err.column != r->column ||
		    (!strstr(err.message, r->msg) && !strstr(err.hint, r->msg)))
			test_fail(__FILE__, __LINE__,
				  "'%s': got %d col %d '%s' / '%s', expected %d col %d '%s'",
				  r->spec, ret, err.column, err.message, err.hint,
				  -r->errnum, r->column, r->msg);
		CHECK_EQ_U64(perfctr_evlist__nr_events(list), 0);
		perfctr_evlist__delete(list);
		return;
	}
	if (ret != r->nr) {
		test_fail(__FILE__, __LINE__, "'%s': %d events, expected %d (%s%s%s)",
			  r->spec, ret, r->nr, err.message,
			  err.hint[0] ? "; " : "", err.hint);
		perfctr_evlist__delete(list);
		return;
	}
	a = perfctr_evlist__attr(list, 0);
	if (a->type != r->type || a->config != r->config ||
	    a->config1 != r->config1 || a->config2 != r->config2)
		test_fail(__FILE__, __LINE__,
			  "'%s': type %u config %#llx/%#llx/%#llx, expected %u %#llx/%#llx/%#llx",
			  r->spec, a->type, (unsigned long long)a->config,
			  (unsigned long long)a->config1,
			  (unsigned long long)a->config2, r->type,
			  (unsigned long long)r->config,
			  (unsigned long long)r->config1,
			  (unsigned long long)r->config2);
	CHECK_EQ_U64(a->size, sizeof(*a));
	if (a->type == PERF_TYPE_BREAKPOINT && a->bp_type != r->bp_type)
		test_fail(__FILE__, __LINE__, "'%s': bp_type %u, expected %u",
			  r->spec, a->bp_type, r->bp_type);
	check_flags(a, r->flags, r->spec);
	perfctr_evlist__delete(list);
}

TEST(table)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		run_row(&rows[i]);
}

static struct perfctr_evlist *parse_fx(const char *spec, enum fixture fx)
{
	struct perfctr_evlist *list = perfctr_evlist__new();
	PERFCTR_OPTS(perfctr_parse_opts, opts,
		     .sysfs_root = test_src_path(fixture_dirs[fx]),
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));
	int ret;

	REQUIRE(list);
	ret = perfctr_evlist__parse(list, spec, &opts, NULL);
	if (ret <= 0)
		test_fail(__FILE__, __LINE__, "'%s': %d", spec, ret);
	return list;
}

static struct perfctr_evlist *parse_ok(const char *spec)
{
	return parse_fx(spec, VM);
}

TEST(groups_and_names)
{
	struct perfctr_evlist *l = parse_ok("task-clock,{cycles:u,instructions}:k,cs");

	REQUIRE(perfctr_evlist__nr_events(l) == 4);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 0), 0);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 1), 1);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 2), 1);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 3), 3);
	CHECK_STR(perfctr_evlist__name(l, 0), "task-clock");
	CHECK_STR(perfctr_evlist__name(l, 1), "cycles:uk");
	CHECK_STR(perfctr_evlist__name(l, 2), "instructions:k");
	CHECK_STR(perfctr_evlist__pmu(l, 0), "software");
	CHECK_STR(perfctr_evlist__unit(l, 0), "");
	CHECK(perfctr_evlist__scale(l, 0) == 1.0);
	CHECK(perfctr_evlist__cpus(l, 0) == NULL);
	CHECK(perfctr_evlist__attr(l, 4) == NULL);
	CHECK(perfctr_evlist__name(l, 4) == NULL);
	perfctr_evlist__delete(l);
}

TEST(pinned_is_the_leaders)
{
	struct perfctr_evlist *l = parse_ok("{cycles,instructions}:D,"
					    "{cs,faults:D},task-clock:D");

	REQUIRE(perfctr_evlist__nr_events(l) == 5);
	CHECK(perfctr_evlist__attr(l, 0)->pinned);
	CHECK(!perfctr_evlist__attr(l, 1)->pinned);
	CHECK(perfctr_evlist__attr(l, 2)->pinned);
	CHECK(!perfctr_evlist__attr(l, 3)->pinned);
	CHECK(perfctr_evlist__attr(l, 4)->pinned);
	perfctr_evlist__delete(l);
}

TEST(wildcard_names_sorted)
{
	struct perfctr_evlist *l = parse_ok("sched:sched_*:k");

	REQUIRE(perfctr_evlist__nr_events(l) == 4);
	CHECK_STR(perfctr_evlist__name(l, 0), "sched:sched_process_exec:k");
	CHECK_STR(perfctr_evlist__name(l, 3), "sched:sched_wakeup:k");
	CHECK_STR(perfctr_evlist__pmu(l, 0), "tracepoint");
	/* Outside a group each expanded tracepoint leads itself. */
	CHECK_EQ_U64(perfctr_evlist__leader(l, 3), 3);
	perfctr_evlist__delete(l);
}

TEST(failed_parse_leaves_list_unchanged)
{
	struct perfctr_evlist *l = parse_ok("cycles");
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	PERFCTR_OPTS(perfctr_parse_opts, opts,
		     .sysfs_root = test_src_path(fixture_dirs[VM]),
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));

	CHECK(perfctr_evlist__parse(l, "instructions,cyclez", &opts, &err) == -ENOENT);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK_EQ_U64(perfctr_evlist__nr_events(l), 1);
	CHECK_EQ_INT(perfctr_evlist__parse(l, "instructions", &opts, NULL), 1);
	CHECK_EQ_U64(perfctr_evlist__nr_events(l), 2);
	perfctr_evlist__delete(l);
}

TEST(default_excludes)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	PERFCTR_OPTS(perfctr_parse_opts, opts, .exclude_kernel = true,
		     .exclude_hv = true,
		     .sysfs_root = test_src_path("tests/fixtures/sysfs-vm"));
	const struct perf_event_attr *a;

	REQUIRE(perfctr_evlist__parse(l, "cycles,cycles:k,cycles:u", &opts, NULL) == 3);
	a = perfctr_evlist__attr(l, 0);
	CHECK(a->exclude_kernel && a->exclude_hv && !a->exclude_user);
	a = perfctr_evlist__attr(l, 1);
	CHECK(!a->exclude_kernel && a->exclude_hv && a->exclude_user);
	a = perfctr_evlist__attr(l, 2);
	CHECK(a->exclude_kernel && a->exclude_hv && !a->exclude_user);
	perfctr_evlist__delete(l);
}

TEST(add_attr)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE,
					 .config = PERF_COUNT_SW_DUMMY };

	REQUIRE(l);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "a", (size_t)-1), 0);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "b", 0), 1);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "c", (size_t)-1), 2);
	/* Groups are contiguous: 'd' cannot join the finished group of 'a'. */
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "d", 0), -EINVAL);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, &attr, "d", 7), -EINVAL);
	CHECK_EQ_INT(perfctr_evlist__add_attr(l, NULL, "d", 0), -EINVAL);
	CHECK_EQ_U64(perfctr_evlist__nr_events(l), 3);
	CHECK_EQ_U64(perfctr_evlist__leader(l, 1), 0);
	CHECK_STR(perfctr_evlist__name(l, 1), "b");
	CHECK_STR(perfctr_evlist__pmu(l, 1), "software");
	CHECK_EQ_U64(perfctr_evlist__attr(l, 2)->size, sizeof(attr));
	perfctr_evlist__delete(l);
	perfctr_evlist__delete(NULL);
}

TEST(tracefs_missing)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	PERFCTR_OPTS(perfctr_parse_opts, opts, .tracefs_root = "/nonexistent",
		     .sysfs_root = test_src_path(fixture_dirs[VM]));

	REQUIRE(l);
	CHECK_EQ_INT(perfctr_evlist__parse(l, "cycles,sched:sched_switch", &opts, &err),
		     -ENOTDIR);
	CHECK_EQ_INT(err.column, 7);
	CHECK(strstr(err.message, "tracefs is not mounted") != NULL);
	CHECK_STR(err.hint, "mount -t tracefs nodev /sys/kernel/tracing");
	perfctr_evlist__delete(l);
}

TEST(pmu_scale_unit_cpus)
{
	struct perfctr_evlist *l = parse_fx("cas_count_read,energy-pkg:u,"
					    "cpu/mem-loads/,cycles", INTEL);

	REQUIRE(perfctr_evlist__nr_events(l) == 5);
	/* Two uncore instances have the event: each is named by its PMU. */
	CHECK_STR(perfctr_evlist__name(l, 0), "uncore_imc_0/cas_count_read/");
	CHECK_STR(perfctr_evlist__name(l, 1), "uncore_imc_1/cas_count_read/");
	CHECK_STR(perfctr_evlist__pmu(l, 1), "uncore_imc_1");
	CHECK_STR(perfctr_evlist__unit(l, 0), "MiB");
	CHECK(perfctr_evlist__scale(l, 0) == 6.103515625e-5);
	CHECK_STR(perfctr_evlist__cpus(l, 0), "0");
	CHECK_STR(perfctr_evlist__name(l, 2), "energy-pkg:u");
	CHECK_STR(perfctr_evlist__unit(l, 2), "Joules");
	CHECK(perfctr_evlist__scale(l, 2) == 2.3283064365386962890625e-10);
	CHECK_STR(perfctr_evlist__name(l, 3), "cpu/mem-loads/");
	CHECK_STR(perfctr_evlist__pmu(l, 3), "cpu");
	CHECK_STR(perfctr_evlist__unit(l, 3), "loads");
	CHECK(perfctr_evlist__cpus(l, 3) == NULL);
	CHECK_STR(perfctr_evlist__pmu(l, 4), "cpu");
	perfctr_evlist__delete(l);

	l = parse_fx("cpu_cycles,cycles,sw_incr", ARM);
	REQUIRE(perfctr_evlist__nr_events(l) == 3);
	CHECK_STR(perfctr_evlist__cpus(l, 0), "0-3");
	CHECK_STR(perfctr_evlist__pmu(l, 0), "armv8_pmuv3_0");
	CHECK_STR(perfctr_evlist__pmu(l, 1), "armv8_pmuv3_0");
	CHECK_EQ_U64(perfctr_evlist__attr(l, 2)->config, 0);
	perfctr_evlist__delete(l);
}

TEST(pmu_terms_name_period)
{
	struct perfctr_evlist *l = parse_fx("cpu/event=0x3c,name=mycycles/:u,"
					    "cpu/event=0xc0,period=1000/,"
					    "cpu/instructions,freq=99/", INTEL);
	const struct perf_event_attr *a;

	REQUIRE(perfctr_evlist__nr_events(l) == 3);
	CHECK_STR(perfctr_evlist__name(l, 0), "mycycles:u");
	a = perfctr_evlist__attr(l, 1);
	CHECK_EQ_U64(a->sample_period, 1000);
	CHECK(!a->freq);
	a = perfctr_evlist__attr(l, 2);
	CHECK_EQ_U64(a->config, 0xc0);
	CHECK_EQ_U64(a->sample_freq, 99);
	CHECK(a->freq);
	CHECK_STR(perfctr_evlist__name(l, 2), "cpu/instructions,freq=99/");
	perfctr_evlist__delete(l);
}

TEST(error_struct_size_respected)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	struct {
		struct perfctr_parse_error err;
		char canary[8];
	} small;

	/* An older caller's struct: only sz, column and errnum are written. */
	memset(&small, 0x5a, sizeof(small));
	small.err.sz = offsetof(struct perfctr_parse_error, message);
	PERFCTR_OPTS(perfctr_parse_opts, opts,
		     .sysfs_root = test_src_path(fixture_dirs[VM]),
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));

	CHECK_EQ_INT(perfctr_evlist__parse(l, "cyclez", &opts, &small.err), -ENOENT);
	CHECK_EQ_INT(small.err.errnum, ENOENT);
	CHECK_EQ_INT(small.err.column, 0);
	CHECK_EQ_INT((unsigned char)small.err.message[0], 0x5a);
	perfctr_evlist__delete(l);
}

struct list_count {
	size_t kinds[PERFCTR_EVENT_RAW + 1];
	size_t total;
	size_t stop_after;
	bool saw_mem_loads, saw_getppid, saw_cas_unit, saw_alias;
};

static int count_cb(const struct perfctr_event_info *info, void *ctx)
{
	struct list_count *c = ctx;

	c->kinds[info->kind]++;
	c->total++;
	if (!strcmp(info->name, "cpu/mem-loads/"))
		c->saw_mem_loads = !strcmp(info->pmu, "cpu") &&
				   strstr(info->desc, "ldlat=3");
	if (!strcmp(info->name, "syscalls:sys_enter_getppid"))
		c->saw_getppid = info->topic && !strcmp(info->topic, "syscalls");
	if (!strcmp(info->name, "uncore_imc_1/cas_count_read/"))
		c->saw_cas_unit = strstr(info->desc, "MiB") != NULL;
	if (!strcmp(info->name, "cycles"))
		c->saw_alias = strstr(info->desc, "alias of cpu-cycles") != NULL;
	return c->stop_after && c->total == c->stop_after ? 42 : 0;
}

static void list_fixture(enum fixture fx, struct list_count *c)
{
	PERFCTR_OPTS(perfctr_parse_opts, opts,
		     .sysfs_root = test_src_path(fixture_dirs[fx]),
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));

	CHECK_EQ_INT(perfctr_event_list(&opts, count_cb, c),
		     c->stop_after ? 42 : 0);
}

TEST(event_list)
{
	struct list_count c;

	memset(&c, 0, sizeof(c));
	list_fixture(INTEL, &c);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_HARDWARE], 14);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_CACHE], 32);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_SOFTWARE], 15);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_TRACEPOINT], 13);
	/* cpu 17, 2 x uncore_imc 3, power 3, msr 3 */
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_PMU], 17 + 6 + 3 + 3);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_RAW], 1);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_BREAKPOINT], 1);
	CHECK(c.saw_mem_loads);
	CHECK(c.saw_getppid);
	CHECK(c.saw_cas_unit);
	CHECK(c.saw_alias);

	/* No core PMU: no hardware, cache or raw events. */
	memset(&c, 0, sizeof(c));
	list_fixture(VM, &c);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_HARDWARE], 0);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_CACHE], 0);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_RAW], 0);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_SOFTWARE], 15);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_PMU], 1);

	memset(&c, 0, sizeof(c));
	list_fixture(ARM, &c);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_HARDWARE], 14);
	CHECK_EQ_U64(c.kinds[PERFCTR_EVENT_PMU], 24);

	/* A non-zero callback return stops the walk and is returned. */
	memset(&c, 0, sizeof(c));
	c.stop_after = 3;
	list_fixture(INTEL, &c);
	CHECK_EQ_U64(c.total, 3);
	CHECK_EQ_INT(perfctr_event_list(NULL, NULL, NULL), -EINVAL);
}

TEST(native_events)
{
	struct perfctr_evlist *l = perfctr_evlist__new();
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	PERFCTR_OPTS(perfctr_parse_opts, opts,
		     .sysfs_root = test_src_path(fixture_dirs[INTEL]),
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));
	const struct perf_event_attr *a;
	int ret;

	REQUIRE(l);
#ifdef HAVE_LIBPFM
	ret = perfctr_evlist__parse(l, "INST_RETIRED:ANY_P", &opts, &err);
	if (ret == -ENOENT) {
		perfctr_evlist__delete(l);
		test_skip("libpfm4 has no Skylake table on this architecture");
	}
	CHECK_EQ_INT(ret, 1);
	CHECK_EQ_INT(perfctr_evlist__parse(l, "INST_RETIRED:ANY_P:u,"
					   "mem_load_retired.l1_miss:k", &opts, &err), 2);
	REQUIRE(perfctr_evlist__nr_events(l) == 3);
	a = perfctr_evlist__attr(l, 0);
	CHECK_EQ_U64(a->type, PERF_TYPE_RAW);
	CHECK_EQ_U64(a->config, 0xc0);
	CHECK(!a->exclude_user && !a->exclude_kernel);
	a = perfctr_evlist__attr(l, 1);
	CHECK(!a->exclude_user && a->exclude_kernel);
	a = perfctr_evlist__attr(l, 2);
	CHECK_EQ_U64(a->config, 0x8d1);
	CHECK(a->exclude_user && !a->exclude_kernel);
	CHECK_STR(perfctr_evlist__name(l, 2), "mem_load_retired.l1_miss:k");
	CHECK_EQ_INT(perfctr_evlist__parse(l, "cycles,INST_RETIRED:BOGUS", &opts, &err),
		     -EINVAL);
	CHECK_EQ_INT(err.column, 7);
	CHECK(strstr(err.message, "invalid native event 'INST_RETIRED:BOGUS'") != NULL);
	CHECK_EQ_INT(perfctr_evlist__parse(l, "NO_SUCH_EVENT:X", &opts, &err), -ENOENT);
	CHECK(strstr(err.hint, "libpfm4 knows no such event") != NULL);
#else
	(void)a;
	ret = perfctr_evlist__parse(l, "INST_RETIRED:ANY_P", &opts, &err);
	CHECK_EQ_INT(ret, -ENOENT);
	CHECK(strstr(err.hint, "need libpfm4") != NULL);
#endif
	perfctr_evlist__delete(l);
}

/* A round count from the environment (PERFCTR_FUZZ_ROUNDS), 2000 if bad. */
static int rounds_from_env(const char *s)
{
	uint64_t v;

	return pc_parse_u64(s, 10, &v) || v > 10000000 ? 2000 : (int)v;
}

/*
 * Random specifications built from the grammar's pieces: whatever the
 * input, the parser returns a count or an error whose column lies inside
 * the string, and a failure leaves the list as it was.  (Under ASan this
 * is also a memory-safety check.)
 */
TEST(random_specs_hold_invariants)
{
	static const char *const pieces[] = {
		"cycles", "cpu", "/", "event=", "0x3c", ",", "{", "}", ":", "u",
		"pp", "mem:", "0x1000", "w", "sched", "sched_*", "*", "=", "r1c2",
		"mem-loads", "ldlat=", "umask", "inv", "cmask=1", " ", "?",
		"uncore_imc", "cas_count_read", "name=x", "L1-dcache-loads", "",
	};
	PERFCTR_OPTS(perfctr_parse_opts, opts,
		     .sysfs_root = test_src_path(fixture_dirs[INTEL]),
		     .tracefs_root = test_src_path("tests/fixtures/tracefs"));
	struct perfctr_evlist *l = perfctr_evlist__new();
	const char *env = getenv("PERFCTR_FUZZ_ROUNDS");
	int round, rounds = env ? rounds_from_env(env) : 2000;
	unsigned seed = 12345;

	REQUIRE(l);
	for (round = 0; round < rounds; round++) {
		struct perfctr_parse_error err = { .sz = sizeof(err) };
		char spec[160];
		size_t len = 0, before = perfctr_evlist__nr_events(l);
		int n = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 8;
		int ret;

		spec[0] = '\0';
		while (n--) {
			const char *piece;

			seed = seed * 1103515245 + 12345;
			piece = pieces[(seed >> 16) % ARRAY_SIZE(pieces)];
			len += (size_t)snprintf(spec + len, sizeof(spec) - len,
						"%s", piece);
		}
		ret = perfctr_evlist__parse(l, spec, &opts, &err);
		if (ret < 0) {
			if (err.column < -1 || err.column > (int)strlen(spec) ||
			    !err.message[0] || err.errnum != -ret ||
			    perfctr_evlist__nr_events(l) != before)
				test_fail(__FILE__, __LINE__,
					  "'%s': %d col %d '%s'", spec, ret,
					  err.column, err.message);
		} else if (ret == 0 ||
			   perfctr_evlist__nr_events(l) != before + (size_t)ret) {
			test_fail(__FILE__, __LINE__, "'%s': %d events", spec, ret);
		}
		if (perfctr_evlist__nr_events(l) > 1000) {
			perfctr_evlist__delete(l);
			l = perfctr_evlist__new();
			REQUIRE(l);
		}
	}
	perfctr_evlist__delete(l);
}

TEST_MAIN(TEST_CASE(table), TEST_CASE(random_specs_hold_invariants), TEST_CASE(event_list), TEST_CASE(native_events), TEST_CASE(pmu_scale_unit_cpus),
	  TEST_CASE(pmu_terms_name_period), TEST_CASE(error_struct_size_respected), TEST_CASE(groups_and_names),
	  TEST_CASE(wildcard_names_sorted), TEST_CASE(pinned_is_the_leaders),
	  TEST_CASE(failed_parse_leaves_list_unchanged),
	  TEST_CASE(default_excludes), TEST_CASE(add_attr),
	  TEST_CASE(tracefs_missing))
