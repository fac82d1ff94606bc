/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The library's BPF programs (HAVE_BPF): libbpf's messages. */
#ifndef PERFCTR_BPFLOG_H
#define PERFCTR_BPFLOG_H

#include <stdarg.h>

#include <bpf/libbpf.h>

/* libbpf's messages to the library's log, not to stderr: warnings at
 * info level, the rest at debug (log.c).  The callback of the
 * libbpf_set_print() put around the loading of a program. */
int pc_libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap);

#endif /* PERFCTR_BPFLOG_H */
