/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * DWARF unwinding of sampled user stacks with libdw's unwinder.
 *
 * perf builds a Dwfl for every sample: it re-reports every module and
 * re-reads their ELF headers and CFI each time.  Here a process keeps its
 * Dwfl from one sample to the next, so each object's ELF file is opened
 * and its CFI indexed once per process; the Dwfl is re-reported only when
 * the process's maps changed (libdwfl keeps the modules reported again
 * unchanged, with what they have cached).  The thread callbacks read the
 * current sample: its registers start the unwind, its stack copy is the
 * only memory there is (anything else reads as unreadable, which ends the
 * chain).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "sample/regs.h"
#include "sample/symbols-internal.h"
#include "sample/unwind.h"

bool pc_unwinder__applies(const struct perfctr_sample *s)
{
	return (s->type & PERF_SAMPLE_REGS_USER) &&
	       (s->type & PERF_SAMPLE_STACK_USER) && s->regs_user.abi &&
	       s->regs_user.nr;
}

#ifdef HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdwfl.h>

/* A process's Dwfl, valid for its maps of generation gen. */
struct space {
	pid_t pid;
	bool used;
	bool attached;
	uint64_t generation;
	Dwfl *dwfl;
	struct reported *files;
	size_t nr_files, cap_files;
	bool fresh;		/* being reported into a new Dwfl */
};

/* More processes than this, and every Dwfl goes (a fork-heavy recording
 * must not keep thousands of them). */
#define MAX_SPACES 256

struct pc_unwinder {
	struct perfctr_symbols *syms;
	enum pc_regs_arch arch;
	struct space *spaces;	/* open addressing by pid */
	size_t cap, nr;

	/* The unwind under way. */
	const struct perfctr_sample *sample;
	uint64_t stack_start, stack_end;
	const unsigned char *stack;
	bool read_outside;	/* a read missed the stack copy */
	uint64_t *ips;
	bool *exact;
	size_t nr_ips, max_ips;
	uint64_t last_pc;	/* where the next step looks for CFI */
	bool too_deep;
	bool outermost;		/* a zero return address: the chain's end */
};

static const Dwfl_Callbacks report_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	/* .debug_frame of a stripped file: its build-id debug file under
	 * /usr/lib/debug, as the symbols find it, or its debuglink. */
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static enum pc_regs_arch arch_of(const char *arch)
{
	if (!arch)
		return PC_REGS_HOST;
	if (!strcmp(arch, "x86_64"))
		return PC_REGS_X86_64;
	if (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64"))
		return PC_REGS_ARM64;
	return PC_REGS_NONE;
}

struct pc_unwinder *pc_unwinder__new(struct perfctr_symbols *syms,
				     const char *arch)
{
	struct pc_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->syms = syms;
	u->arch = arch_of(arch);
	return u;
}

static void space_reset(struct space *sp);

static void spaces_clear(struct pc_unwinder *u)
{
	size_t i;

	for (i = 0; i < u->cap; i++)
		if (u->spaces[i].used)
			space_reset(&u->spaces[i]);
	free(u->spaces);
	u->spaces = NULL;
	u->cap = u->nr = 0;
}

void pc_unwinder__delete(struct pc_unwinder *u)
{
	if (!u)
		return;
	spaces_clear(u);
	free(u);
}

static struct space *space_get(struct pc_unwinder *u, pid_t pid)
{
	size_t h, mask;

	if (u->nr >= MAX_SPACES)
		spaces_clear(u);
	if (!u->cap) {
		u->spaces = calloc(2 * MAX_SPACES, sizeof(*u->spaces));
		if (!u->spaces)
			return NULL;
		u->cap = 2 * MAX_SPACES;
	}
	mask = u->cap - 1;
	for (h = ((uint32_t)pid * 0x9E3779B1u) & mask; u->spaces[h].used;
	     h = (h + 1) & mask)
		if (u->spaces[h].pid == pid)
			return &u->spaces[h];
	u->spaces[h].used = true;
	u->spaces[h].pid = pid;
	u->nr++;
	return &u->spaces[h];
}

/* ---- the thread callbacks: the current sample ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	/* One thread: the sample's. */
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return dwfl_pid(dwfl);
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	struct pc_unwinder *u = arg;

	(void)dwfl;
	if (addr >= u->stack_start && addr < u->stack_end &&
	    u->stack_end - addr >= sizeof(*result)) {
		memcpy(result, u->stack + (addr - u->stack_start), sizeof(*result));
		return true;
	}
	u->read_outside = true;
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct pc_unwinder *u = arg;
	const struct perfctr_regs *r = &u->sample->regs_user;
	Dwarf_Word val;
	uint64_t v;
	unsigned int i;

	switch (u->arch) {
	case PC_REGS_X86_64:
		for (i = 0; i < 24; i++) {
			if (pc_regs_x86_64_dwarf[i] < 0 ||
			    !pc_regs_get(r->mask, r->regs, r->nr, i, &v))
				continue;
			val = v;
			if (!dwfl_thread_state_registers(thread,
					pc_regs_x86_64_dwarf[i], 1, &val))
				return false;
		}
		if (!pc_regs_get(r->mask, r->regs, r->nr, PC_REGS_X86_64_IP, &v))
			return false;
		/* DWARF 16 is the return address column. */
		val = v;
		if (!dwfl_thread_state_registers(thread, 16, 1, &val))
			return false;
		dwfl_thread_state_register_pc(thread, v);
		return true;
	case PC_REGS_ARM64:
		/* x0-x30 and sp are DWARF 0-31, perf's order too. */
		for (i = 0; i <= PC_REGS_ARM64_SP; i++) {
			if (!pc_regs_get(r->mask, r->regs, r->nr, i, &v))
				continue;
			val = v;
			if (!dwfl_thread_state_registers(thread, (int)i, 1, &val))
				return false;
		}
		if (!pc_regs_get(r->mask, r->regs, r->nr, PC_REGS_ARM64_IP, &v))
			return false;
		dwfl_thread_state_register_pc(thread, v);
		return true;
	default:
		return false;
	}
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct pc_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* The outermost frame's return address, where CFI says nothing. */
	if (!pc) {
		u->outermost = true;
		return DWARF_CB_ABORT;
	}
	if (u->nr_ips == u->max_ips) {
		u->too_deep = true;
		return DWARF_CB_ABORT;
	}
	u->ips[u->nr_ips] = pc;
	u->exact[u->nr_ips] = activation;
	u->nr_ips++;
	u->last_pc = activation ? pc : pc - 1;
	return DWARF_CB_OK;
}

/* ---- the process's Dwfl ---- */

/* A file reported into a space's Dwfl. */
struct reported {
	char *path;
	uint64_t bias;
};

static void space_reset(struct space *sp)
{
	size_t i;

	if (sp->dwfl)
		dwfl_end(sp->dwfl);
	sp->dwfl = NULL;
	sp->attached = false;
	for (i = 0; i < sp->nr_files; i++)
		free(sp->files[i].path);
	free(sp->files);
	sp->files = NULL;
	sp->nr_files = sp->cap_files = 0;
}

/* Report a file the Dwfl does not have yet.  A file that cannot be
 * reported into a new Dwfl (gone, not ELF) only leaves its frames without
 * CFI; into an older one, it may overlap a module reported before (the
 * process unmapped it, or exec'ed): then a new Dwfl is made. */
static int report_one(void *ctx, const char *path, uint64_t bias)
{
	struct space *sp = ctx;
	struct reported *n;
	size_t i;

	for (i = 0; i < sp->nr_files; i++)
		if (sp->files[i].bias == bias && !strcmp(sp->files[i].path, path))
			return 0;
	/* libdwfl does not say why a report failed: a new Dwfl tells. */
	if (!dwfl_report_elf(sp->dwfl, path, path, -1, bias, true) &&
	    !sp->fresh)
		return -EEXIST;
	if (sp->nr_files == sp->cap_files) {
		size_t cap = sp->cap_files ? 2 * sp->cap_files : 16;

		n = realloc(sp->files, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		sp->files = n;
		sp->cap_files = cap;
	}
	sp->files[sp->nr_files].path = strdup(path);
	if (!sp->files[sp->nr_files].path)
		return -ENOMEM;
	sp->files[sp->nr_files++].bias = bias;
	return 0;
}

/* Report @pid's files into the space's Dwfl (a new one when @fresh). */
static int space_report(struct pc_unwinder *u, struct space *sp, pid_t pid,
			bool fresh)
{
	int r;

	if (fresh)
		space_reset(sp);
	sp->fresh = !sp->dwfl;
	if (!sp->dwfl) {
		sp->dwfl = dwfl_begin(&report_callbacks);
		if (!sp->dwfl)
			return -ENOMEM;
	}
	/* Added to what is there: modules keep what they cached. */
	dwfl_report_begin_add(sp->dwfl);
	r = pc_symbols__for_each_elf(u->syms, pid, report_one, sp);
	dwfl_report_end(sp->dwfl, NULL, NULL);
	return r;
}

/* @pid's Dwfl with its current maps, attached; NULL when it has none. */
static Dwfl *space_dwfl(struct pc_unwinder *u, pid_t pid)
{
	uint64_t gen = pc_symbols__generation(u->syms, pid);
	struct space *sp;
	int r;

	if (!gen)
		return NULL;
	sp = space_get(u, pid);
	if (!sp)
		return NULL;
	if (sp->dwfl && sp->generation == gen)
		return sp->attached ? sp->dwfl : NULL;
	sp->generation = gen;
	r = space_report(u, sp, pid, false);
	if (r == -EEXIST)
		r = space_report(u, sp, pid, true);
	if (r) {
		space_reset(sp);
		return NULL;
	}
	if (!sp->attached)
		sp->attached = dwfl_attach_state(sp->dwfl, NULL, pid,
						 &thread_callbacks, u);
	return sp->attached ? sp->dwfl : NULL;
}

/* Why the unwind of the last step failed. */
static int stop_reason(struct pc_unwinder *u, Dwfl *dwfl)
{
	Dwfl_Module *mod;
	Dwarf_Addr bias;

	if (u->too_deep)
		return PERFCTR_UNWIND_DEPTH;
	if (u->read_outside)
		return PERFCTR_UNWIND_STACK;
	mod = dwfl_addrmodule(dwfl, u->last_pc);
	if (!mod)
		return PERFCTR_UNWIND_NO_MAP;
	if (!dwfl_module_eh_cfi(mod, &bias) && !dwfl_module_dwarf_cfi(mod, &bias))
		return PERFCTR_UNWIND_NO_CFI;
	/* CFI that has no entry for the address, or that does not say how
	 * to find the caller. */
	return PERFCTR_UNWIND_NO_CFI;
}

size_t pc_unwinder__unwind(struct pc_unwinder *u,
			   const struct perfctr_sample *s, uint64_t *ips,
			   bool *exact, size_t max, int *stop)
{
	uint64_t sp_value;
	unsigned int sp_reg;
	Dwfl *dwfl;
	int r;

	*stop = PERFCTR_UNWIND_UNSUPPORTED;
	if (!pc_unwinder__applies(s) ||
	    s->regs_user.abi != PERF_SAMPLE_REGS_ABI_64)
		return 0;
	switch (u->arch) {
	case PC_REGS_X86_64:
		sp_reg = PC_REGS_X86_64_SP;
		break;
	case PC_REGS_ARM64:
		sp_reg = PC_REGS_ARM64_SP;
		break;
	default:
		return 0;
	}
	if (!pc_regs_get(s->regs_user.mask, s->regs_user.regs, s->regs_user.nr,
			 sp_reg, &sp_value))
		return 0;
	dwfl = space_dwfl(u, (pid_t)s->pid);
	if (!dwfl) {
		*stop = PERFCTR_UNWIND_NO_MAP;
		return 0;
	}
	u->sample = s;
	/* The kernel copied dyn_size bytes from the user sp up. */
	u->stack = s->stack_user;
	u->stack_start = sp_value;
	u->stack_end = s->stack_user ? sp_value + s->stack_user_dyn_size : sp_value;
	if (u->stack_end < u->stack_start)
		u->stack_end = u->stack_start;
	u->read_outside = false;
	u->too_deep = false;
	u->outermost = false;
	u->ips = ips;
	u->exact = exact;
	u->nr_ips = 0;
	u->max_ips = max;
	u->last_pc = 0;
	r = dwfl_getthread_frames(dwfl, (pid_t)s->tid, frame_cb, u);
	/* libdwfl ends a chain without an error when a return address
	 * cannot be read: a read outside the copy is a truncation. */
	if ((r == 0 || u->outermost) && !u->read_outside)
		*stop = -1;
	else
		*stop = stop_reason(u, dwfl);
	u->sample = NULL;
	u->stack = NULL;
	return u->nr_ips;
}

#else /* !HAVE_LIBDW */

struct pc_unwinder {
	int unused;
};

struct pc_unwinder *pc_unwinder__new(struct perfctr_symbols *syms,
				     const char *arch)
{
	(void)syms;
	(void)arch;
	return calloc(1, sizeof(struct pc_unwinder));
}

void pc_unwinder__delete(struct pc_unwinder *u)
{
	free(u);
}

size_t pc_unwinder__unwind(struct pc_unwinder *u,
			   const struct perfctr_sample *s, uint64_t *ips,
			   bool *exact, size_t max, int *stop)
{
	(void)u;
	(void)s;
	(void)ips;
	(void)exact;
	(void)max;
	*stop = PERFCTR_UNWIND_UNSUPPORTED;
	return 0;
}

#endif /* HAVE_LIBDW */
