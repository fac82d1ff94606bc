// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Raw evntsel words: see evntsel.h, and among the seed documents
 * (docs/ARCHITECTURE.md) perfctr's x86 driver notes (the rules) and the x86
 * counter study (the P6 PerfEvtSel layout). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/evntsel.h"

/* P6 PerfEvtSel fields. */
#define X86_EVENT	0x000000ffu
#define X86_UMASK	0x0000ff00u
#define X86_USR		(1u << 16)
#define X86_OS		(1u << 17)
#define X86_EDGE	(1u << 18)
#define X86_PC		(1u << 19)
#define X86_INT		(1u << 20)
#define X86_RSVD21	(1u << 21)
#define X86_EN		(1u << 22)
#define X86_INV		(1u << 23)
#define X86_CMASK	0xff000000u

/* PMEVTYPER<n>_EL0 fields. */
#define ARM_EVENT	0x0000ffffu
#define ARM_NSH		(1u << 27)
#define ARM_U		(1u << 30)
#define ARM_P		(1u << 31)

enum pc_evntsel_arch pc_evntsel_host_arch(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return PC_EVNTSEL_X86;
#elif defined(__aarch64__)
	return PC_EVNTSEL_ARM64;
#else
	return PC_EVNTSEL_NONE;
#endif
}

static int bad(char *why, size_t size, const char *fmt, unsigned int word)
{
	if (why && size)
		snprintf(why, size, fmt, word);
	return -EINVAL;
}

static int x86_to_attr(unsigned int w, bool imode, struct perf_event_attr *attr,
		       char *why, size_t size)
{
	if (w & (X86_PC | X86_RSVD21))
		return bad(why, size, "evntsel %#x: reserved bits 19 and 21 must be clear", w);
	if (!(w & X86_EN))
		return bad(why, size, "evntsel %#x: the enable bit (22) must be set", w);
	if (!(w & (X86_USR | X86_OS)))
		return bad(why, size, "evntsel %#x: counts nothing, set USR (16) or OS (17)", w);
	if (imode && !(w & X86_INT))
		return bad(why, size, "evntsel %#x: an i-mode counter needs the INT bit (20)", w);
	if (!imode && (w & X86_INT))
		return bad(why, size, "evntsel %#x: the INT bit (20) is for i-mode counters only", w);
	attr->type = PERF_TYPE_RAW;
	/* perf's x86 raw config has the PerfEvtSel layout; the kernel owns
	 * USR/OS (exclude bits), INT and EN. */
	attr->config = w & (X86_EVENT | X86_UMASK | X86_EDGE | X86_INV | X86_CMASK);
	attr->exclude_user = !(w & X86_USR);
	attr->exclude_kernel = !(w & X86_OS);
	attr->exclude_hv = 1;
	return 0;
}

static int arm64_to_attr(unsigned int w, bool imode, struct perf_event_attr *attr,
			 char *why, size_t size)
{
	(void)imode;	/* the overflow interrupt is enabled elsewhere */
	if (w & ~(ARM_EVENT | ARM_NSH | ARM_U | ARM_P))
		return bad(why, size, "evntsel %#x: reserved PMEVTYPER bits set", w);
	if ((w & ARM_U) && (w & ARM_P) && !(w & ARM_NSH))
		return bad(why, size, "evntsel %#x: counts nothing, U (30) and P (31) both exclude", w);
	attr->type = PERF_TYPE_RAW;
	attr->config = w & ARM_EVENT;
	attr->exclude_user = !!(w & ARM_U);
	attr->exclude_kernel = !!(w & ARM_P);
	attr->exclude_hv = !(w & ARM_NSH);
	return 0;
}

int pc_evntsel_to_attr(enum pc_evntsel_arch arch, unsigned int evntsel,
		       bool imode, struct perf_event_attr *attr,
		       char *why, size_t why_size)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	if (why && why_size)
		why[0] = '\0';
	switch (arch) {
	case PC_EVNTSEL_X86:
		return x86_to_attr(evntsel, imode, attr, why, why_size);
	case PC_EVNTSEL_ARM64:
		return arm64_to_attr(evntsel, imode, attr, why, why_size);
	default:
		if (why && why_size)
			snprintf(why, why_size,
				 "raw evntsel words are not known for this architecture");
		return -EOPNOTSUPP;
	}
}
