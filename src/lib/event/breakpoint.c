// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hardware breakpoints: mem:ADDR[/LEN][:rwx][:mods].  Checked here as the
 * kernel would check them: on x86 (docs/kernel-notes.md 16) lengths
 * 1/2/4/8, aligned,
 * no read-only watch, execute breakpoints sizeof(long) long; arm64 takes
 * any length from 1 to 8, unaligned (checked in the PMU lane).
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <string.h>

#include "common/internal.h"
#include "event/parse.h"

static int parse_u64_span(struct pc_parse *p, const char *s, const char *end,
			  const char *what, uint64_t *out)
{
	char buf[32];
	size_t len = (size_t)(end - s);

	if (!len || len >= sizeof(buf))
		goto bad;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!pc_parse_u64(buf, 0, out))
		return 0;
bad:
	return pc_parse_fail(p, EINVAL, s, "invalid breakpoint %s '%.*s'", what,
			     (int)len, s);
}

static int parse_access(struct pc_parse *p, const char *s, const char *end,
			uint32_t *type)
{
	const char *c;

	*type = 0;
	for (c = s; c < end; c++) {
		uint32_t bit = *c == 'r' ? HW_BREAKPOINT_R :
			       *c == 'w' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;

		if (*type & bit)
			return pc_parse_fail(p, EINVAL, c, "'%c' given twice", *c);
		*type |= bit;
	}
	if ((*type & HW_BREAKPOINT_X) && (*type & HW_BREAKPOINT_RW))
		return pc_parse_fail(p, EINVAL, s, "an execute breakpoint cannot "
				     "also watch reads or writes");
#if defined(__x86_64__) || defined(__i386__)
	/* x86 debug registers have no read-only condition (kernel: EINVAL). */
	if (*type == HW_BREAKPOINT_R) {
		pc_parse_fail(p, EOPNOTSUPP, s,
			      "x86 cannot watch reads alone");
		pc_parse_hint(p, "watch reads and writes with :rw");
		return -EOPNOTSUPP;
	}
#endif
	return 0;
}

static bool is_access(const char *s, const char *end)
{
	if (s == end)
		return false;
	for (; s < end; s++)
		if (*s != 'r' && *s != 'w' && *s != 'x')
			return false;
	return true;
}

#if defined(__x86_64__) || defined(__i386__)
#define X86 1
#else
#define X86 0
#endif

/* An execute breakpoint covers one instruction: a word on x86, as perf
 * writes it; arm64 instructions are 4 bytes. */
#ifdef __aarch64__
#define EXEC_LEN 4
#else
#define EXEC_LEN sizeof(long)
#endif

static int check_len(struct pc_parse *p, struct perf_event_attr *a,
		     const char *len_at, const char *at)
{
	/* x86 watches 1, 2, 4 or 8 bytes; arm64 selects any 1 to 8. */
	if (X86 ? a->bp_len != 1 && a->bp_len != 2 && a->bp_len != 4 &&
		  a->bp_len != 8 : a->bp_len < 1 || a->bp_len > 8)
		return pc_parse_fail(p, EINVAL, len_at, "breakpoint length %llu: "
				     "must be %s", (unsigned long long)a->bp_len,
				     X86 ? "1, 2, 4 or 8" : "1 to 8");
	if (X86 && a->bp_type == HW_BREAKPOINT_X && a->bp_len != EXEC_LEN)
		return pc_parse_fail(p, EINVAL, len_at, "an execute breakpoint "
				     "is %zu bytes long", (size_t)EXEC_LEN);
	/* x86 debug registers watch naturally aligned ranges only; arm64
	 * selects bytes within a doubleword and takes unaligned ones. */
	if (X86 && a->bp_addr % a->bp_len)
		return pc_parse_fail(p, EINVAL, at, "address %#llx is not aligned "
				     "to the length %llu",
				     (unsigned long long)a->bp_addr,
				     (unsigned long long)a->bp_len);
	return 0;
}

int pc_parse_breakpoint(struct pc_parse *p, const char *start, const char *end)
{
	const char *addr = start + 4, *addr_end, *len_at = NULL, *c;
	const char *mods = NULL, *name_end;
	struct pc_event *ev = pc_parse_new_event(p);
	uint32_t type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
	uint64_t len = 0, bp_addr = 0;
	int ret;

	if (!ev)
		return -ENOMEM;
	addr_end = addr + strcspn(addr, "/:,{}");
	if (addr_end > end)
		addr_end = end;
	ret = parse_u64_span(p, addr, addr_end, "address", &bp_addr);
	ev->attr.bp_addr = bp_addr;
	c = addr_end;
	if (!ret && c < end && *c == '/') {
		len_at = c + 1;
		c = len_at + strcspn(len_at, ":,{}");
		if (c > end)
			c = end;
		ret = parse_u64_span(p, len_at, c, "length", &len);
	}
	name_end = c;
	if (!ret && c < end) {
		const char *part = c + 1, *part_end = memchr(part, ':', (size_t)(end - part));

		if (!part_end)
			part_end = end;
		if (is_access(part, part_end)) {
			ret = parse_access(p, part, part_end, &type);
			name_end = part_end;
			mods = part_end < end ? part_end + 1 : NULL;
		} else {
			mods = part;
		}
	}
	if (ret)
		return ret;
	ev->attr.type = PERF_TYPE_BREAKPOINT;
	ev->attr.bp_type = type;
	ev->attr.bp_len = len ? len : type == HW_BREAKPOINT_X ? EXEC_LEN :
			  HW_BREAKPOINT_LEN_4;
	ev->pmu = "breakpoint";
	ret = check_len(p, &ev->attr, len_at ? len_at : addr, addr);
	if (ret)
		return ret;
	pc_event_set_name(ev, start, (size_t)(name_end - start), mods,
			  mods ? (size_t)(end - mods) : 0);
	ret = pc_parse_mods(p, ev, mods, end);
	return ret ? ret : 1;
}
