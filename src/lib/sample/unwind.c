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
#include <sys/mman.h>
#include <unistd.h>

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

/* ---- the fast path: CFI rules cached by address ---- */

/*
 * libdwfl finds the CFI of every frame again for every sample: it looks
 * up the FDE, runs the CIE's and FDE's instructions up to the address,
 * allocates the resulting frame, and evaluates each register's rule as a
 * DWARF expression.  A recording has few distinct addresses (the same
 * return addresses in every chain), so the rules an address has are kept
 * here, reduced to what nearly all CFI is -- the CFA as a register plus an
 * offset, each register undefined, unchanged, saved at or computed from
 * the CFA, or copied from another -- and applied with a few loads.  The
 * steps are libdwfl's own (frame_unwind.c): the same registers come out
 * of a frame, the same reads of the stack copy are made, the chain ends
 * where it ends.  An address whose rules are more than that (an
 * expression, a signal frame) or that has no CFI at all (libdwfl then
 * tries the frame-pointer chain) sends the whole sample to libdwfl.
 */

/* Registers libdwfl keeps for an x86-64 frame (its ebl_frame_nregs). */
#define FAST_NREGS 17

enum rule_kind {
	RULE_UNSET,	/* left unset: an error libdwfl passes over */
	RULE_UNDEFINED,
	RULE_SAME,
	RULE_AT_CFA,	/* saved at CFA + off */
	RULE_CFA_PLUS,	/* the value CFA + off */
	RULE_REGISTER,	/* the value of register off */
};

struct cfi_rules {
	uint64_t generation;	/* of the maps; 0: empty slot */
	uint64_t pc;		/* the address looked up */
	bool slow;		/* libdwfl's to unwind */
	bool has_cfa;
	uint8_t cfa_reg;
	uint8_t ra;		/* the return address column */
	uint64_t cfa_off;
	uint8_t kind[FAST_NREGS];
	uint64_t off[FAST_NREGS];
};

#define RULES_BITS 12
#define RULES_CACHE (1u << RULES_BITS)

struct fast_state {
	uint64_t regs[FAST_NREGS];
	uint32_t set;		/* bit per register that has a value */
};

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

	struct cfi_rules *rules;	/* RULES_CACHE of them, or NULL */
	bool check;		/* PERFCTR_UNWIND_CHECK: both ways, compared */
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
	/* A test hook: every chain the fast path finds is found again by
	 * libdwfl, and a difference traps. */
	u->check = getenv("PERFCTR_UNWIND_CHECK") != NULL;
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
	/* A Dwfl made again has only the current maps' modules: what the
	 * old one found for an address may differ. */
	if (u->rules)
		memset(u->rules, 0, RULES_CACHE * sizeof(*u->rules));
}

void pc_unwinder__delete(struct pc_unwinder *u)
{
	if (!u)
		return;
	spaces_clear(u);
	free(u->rules);
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

static bool read_word(struct pc_unwinder *u, uint64_t addr, uint64_t *result)
{
	if (addr >= u->stack_start && addr < u->stack_end &&
	    u->stack_end - addr >= sizeof(*result)) {
		memcpy(result, u->stack + (addr - u->stack_start), sizeof(*result));
		return true;
	}
	u->read_outside = true;
	return false;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	uint64_t v;

	(void)dwfl;
	if (!read_word(arg, addr, &v))
		return false;
	*result = v;
	return true;
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

/* An fd libdwfl can read @size bytes of @image from (it takes the fd). */
static int image_fd(const void *image, size_t size)
{
	int fd = memfd_create("perfctr-vdso", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t n = write(fd, (const char *)image + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	return fd;
}

/* Report a file the Dwfl does not have yet.  A file that cannot be
 * reported into a new Dwfl (gone, not ELF) only leaves its frames without
 * CFI; into an older one, it may overlap a module reported before (the
 * process unmapped it, or exec'ed): then a new Dwfl is made.  The vDSO
 * comes as an @image: its CFI lets chains through it go on where its
 * frame pointers would not (in its prologues, say). */
static int report_one(void *ctx, const char *path, uint64_t bias,
		      const void *image, size_t image_size)
{
	struct space *sp = ctx;
	struct reported *n;
	Dwfl_Module *mod;
	size_t i;
	int fd = -1;

	for (i = 0; i < sp->nr_files; i++)
		if (sp->files[i].bias == bias && !strcmp(sp->files[i].path, path))
			return 0;
	if (image) {
		fd = image_fd(image, image_size);
		if (fd < 0)
			return 0;
	}
	mod = dwfl_report_elf(sp->dwfl, path, path, fd, bias, true);
	if (!mod && fd >= 0)
		close(fd);
	/* libdwfl does not say why a report failed: a new Dwfl tells. */
	if (!mod && !sp->fresh)
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

/* @pid's Dwfl with its current maps (of generation *@genp), attached;
 * NULL when it has none. */
static Dwfl *space_dwfl(struct pc_unwinder *u, pid_t pid, uint64_t *genp)
{
	uint64_t gen = pc_symbols__generation(u->syms, pid);
	struct space *sp;
	int r;

	*genp = gen;
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

/* ---- the fast path ---- */

/* @frame's rules as a struct cfi_rules; false when they are more than
 * it holds. */
static bool rules_reduce(Dwarf_Frame *frame, struct cfi_rules *r)
{
	Dwarf_Op mem[3], *ops;
	Dwarf_Addr start, end;
	size_t nops, i;
	bool signal;
	int ra = dwarf_frame_info(frame, &start, &end, &signal);

	/* A signal frame's caller is an activation: libdwfl's to say. */
	if (ra < 0 || ra >= FAST_NREGS || signal)
		return false;
	r->ra = (uint8_t)ra;
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops != 1 ||
	    ops[0].atom != DW_OP_bregx || ops[0].number >= FAST_NREGS)
		return false;
	r->has_cfa = true;
	r->cfa_reg = (uint8_t)ops[0].number;
	r->cfa_off = ops[0].number2;
	for (i = 0; i < FAST_NREGS; i++) {
		r->off[i] = 0;
		if (dwarf_frame_register(frame, (int)i, mem, &ops, &nops)) {
			r->kind[i] = RULE_UNSET;
		} else if (!nops) {
			r->kind[i] = ops == mem ? RULE_UNDEFINED :
				     !ops ? RULE_SAME : RULE_UNSET;
		} else if (ops[0].atom == DW_OP_call_frame_cfa) {
			size_t k = 1;

			if (k < nops && ops[k].atom == DW_OP_plus_uconst)
				r->off[i] = ops[k++].number;
			r->kind[i] = RULE_AT_CFA;
			if (k < nops && ops[k].atom == DW_OP_stack_value) {
				r->kind[i] = RULE_CFA_PLUS;
				k++;
			}
			if (k != nops)
				return false;
		} else if (nops == 1 && ops[0].atom == DW_OP_regx) {
			/* A register libdwfl does not keep reads as unset. */
			r->kind[i] = ops[0].number < FAST_NREGS ? RULE_REGISTER :
				     RULE_UNSET;
			r->off[i] = ops[0].number;
		} else {
			return false;
		}
	}
	return true;
}

/* The rules at @pc (where libdwfl looks: the pc of an activation, else
 * the byte before the return address), found as libdwfl finds them:
 * the module's .eh_frame, then its .debug_frame. */
static const struct cfi_rules *rules_at(struct pc_unwinder *u, Dwfl *dwfl,
					uint64_t generation, uint64_t pc)
{
	uint64_t h = (pc ^ (generation * 0x9E3779B97F4A7C15ull)) *
		     0x9E3779B97F4A7C15ull;
	struct cfi_rules *r = &u->rules[h >> (64 - RULES_BITS)];
	Dwarf_Frame *frame = NULL;
	Dwfl_Module *mod;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;

	if (r->generation == generation && r->pc == pc)
		return r;
	r->generation = generation;
	r->pc = pc;
	r->slow = true;
	mod = dwfl_addrmodule(dwfl, pc);
	if (!mod)
		return r;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame)) {
		frame = NULL;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame))
			return r;
	}
	r->slow = !rules_reduce(frame, r);
	free(frame);
	return r;
}

/* Registers of the caller of the frame in @cur, by @r (libdwfl's
 * handle_cfi, register by register in the same order, so that the same
 * reads miss the stack copy).  Return: the caller's pc, 0 where the
 * chain ends. */
static uint64_t fast_step(struct pc_unwinder *u, const struct cfi_rules *r,
			  const struct fast_state *cur, struct fast_state *next)
{
	bool has_cfa = cur->set & (1u << r->cfa_reg);
	uint64_t cfa = cur->regs[r->cfa_reg] + r->cfa_off, v;
	unsigned int i;

	next->set = 0;
	for (i = 0; i < FAST_NREGS; i++) {
		switch (r->kind[i]) {
		case RULE_UNDEFINED:
			if (i == r->ra)
				return 0;
			continue;
		case RULE_SAME:
			if (!(cur->set & (1u << i)))
				continue;
			v = cur->regs[i];
			break;
		case RULE_AT_CFA:
			if (!has_cfa || !read_word(u, cfa + r->off[i], &v))
				continue;
			break;
		case RULE_CFA_PLUS:
			if (!has_cfa)
				continue;
			v = cfa + r->off[i];
			break;
		case RULE_REGISTER:
			if (!(cur->set & (1u << r->off[i])))
				continue;
			v = cur->regs[r->off[i]];
			break;
		default:
			continue;
		}
		next->regs[i] = v;
		next->set |= 1u << i;
	}
	/* An unreadable return address ends the chain as well (the read
	 * that missed says it was cut). */
	return next->set & (1u << r->ra) ? next->regs[r->ra] : 0;
}

/*
 * The chain of the current sample with cached rules.  Return: false when
 * it needs libdwfl (then nothing it found counts), else true with *@r
 * what dwfl_getthread_frames() would have returned.
 */
static bool fast_unwind(struct pc_unwinder *u, Dwfl *dwfl,
			uint64_t generation, int *r)
{
	const struct perfctr_regs *regs = &u->sample->regs_user;
	struct fast_state state[2];
	unsigned int cur = 0, i;
	bool initial = true;
	uint64_t pc, v;

	if (!u->rules) {
		u->rules = calloc(RULES_CACHE, sizeof(*u->rules));
		if (!u->rules)
			return false;
	}
	/* set_initial_registers(), for x86-64. */
	state[0].set = 0;
	for (i = 0; i < 24; i++) {
		int d = pc_regs_x86_64_dwarf[i];

		if (d < 0 || !pc_regs_get(regs->mask, regs->regs, regs->nr, i, &v))
			continue;
		state[0].regs[d] = v;
		state[0].set |= 1u << d;
	}
	if (!pc_regs_get(regs->mask, regs->regs, regs->nr, PC_REGS_X86_64_IP,
			 &pc) || !pc)
		return false;
	state[0].regs[16] = pc;
	state[0].set |= 1u << 16;
	for (;;) {
		uint64_t at = initial ? pc : pc - 1;
		const struct cfi_rules *rules = rules_at(u, dwfl, generation, at);

		if (rules->slow)
			return false;
		if (u->nr_ips == u->max_ips) {
			u->too_deep = true;
			*r = DWARF_CB_ABORT;
			return true;
		}
		u->ips[u->nr_ips] = pc;
		u->exact[u->nr_ips] = initial;
		u->nr_ips++;
		u->last_pc = at;
		pc = fast_step(u, rules, &state[cur], &state[!cur]);
		if (!pc) {
			*r = 0;
			return true;
		}
		cur = !cur;
		initial = false;
	}
}

/* A new chain: nothing found, nothing missed. */
static void unwind_start(struct pc_unwinder *u)
{
	u->read_outside = false;
	u->too_deep = false;
	u->outermost = false;
	u->nr_ips = 0;
	u->last_pc = 0;
}

/* PERFCTR_UNWIND_CHECK: the chain the fast path found (and @fast_r, what
 * it says dwfl_getthread_frames() returns) found again by libdwfl; any
 * difference traps.  @u is left as the fast path left it. */
static void check_fast(struct pc_unwinder *u, Dwfl *dwfl, int fast_r)
{
	struct pc_unwinder fast = *u;
	size_t n = u->max_ips ? u->max_ips : 1;
	uint64_t *ips = calloc(n, sizeof(*ips));
	bool *exact = calloc(n, sizeof(*exact));
	int r;

	if (ips && exact) {
		u->ips = ips;
		u->exact = exact;
		unwind_start(u);
		r = dwfl_getthread_frames(dwfl, (pid_t)u->sample->tid, frame_cb,
					  u);
		if (u->nr_ips != fast.nr_ips ||
		    memcmp(ips, fast.ips, u->nr_ips * sizeof(*ips)) ||
		    memcmp(exact, fast.exact, u->nr_ips * sizeof(*exact)) ||
		    u->read_outside != fast.read_outside ||
		    u->too_deep != fast.too_deep ||
		    u->last_pc != fast.last_pc ||
		    (r == 0 || u->outermost) != (fast_r == 0))
			__builtin_trap();
	}
	free(ips);
	free(exact);
	*u = fast;
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
	uint64_t sp_value, generation;
	unsigned int sp_reg;
	bool fast;
	Dwfl *dwfl;
	int r = 0;

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
	dwfl = space_dwfl(u, (pid_t)s->pid, &generation);
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
	u->ips = ips;
	u->exact = exact;
	u->max_ips = max;
	unwind_start(u);
	fast = u->arch == PC_REGS_X86_64 && fast_unwind(u, dwfl, generation, &r);
	if (fast && u->check)
		check_fast(u, dwfl, r);
	if (!fast) {
		unwind_start(u);
		r = dwfl_getthread_frames(dwfl, (pid_t)s->tid, frame_cb, u);
	}
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
