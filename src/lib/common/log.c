// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The library's only global: the print hook. */
#include <stdio.h>

#include "perfctr/common.h"
#include "common/internal.h"
#ifdef HAVE_BPF
#include "common/bpflog.h"
#endif

static int default_print(enum perfctr_print_level level, const char *fmt,
			 va_list ap)
{
	if (level > PERFCTR_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static perfctr_print_fn_t print_fn = default_print;

perfctr_print_fn_t perfctr_set_print(perfctr_print_fn_t fn)
{
	perfctr_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void pc_print(enum perfctr_print_level level, const char *fmt, ...)
{
	va_list ap;

	if (!print_fn)
		return;
	va_start(ap, fmt);
	print_fn(level, fmt, ap);
	va_end(ap);
}

#ifdef HAVE_BPF
int pc_libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	pc_print(level == LIBBPF_WARN ? PERFCTR_INFO : PERFCTR_DEBUG,
		 "libperfctr: bpf: %s", msg);
	return 0;
}
#endif

const char *perfctr_version(void)
{
	return PERFCTR_VERSION;
}
