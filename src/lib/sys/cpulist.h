/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The kernel's CPU-list format ("0-3,8,10-11", as sysfs writes it in
 * devices/system/cpu/online and a PMU's cpus/cpumask, and as users give
 * it to -C): the one parser of the library.  Not installed.
 */
#ifndef PERFCTR_SYS_CPULIST_H
#define PERFCTR_SYS_CPULIST_H

/*
 * Parse @list into a sorted, duplicate-free array of CPU numbers.
 * Whitespace around the list and around its ',' and '-' separators is
 * ignored (sysfs ends its lists with a newline; people type "0, 2"); a
 * number is decimal digits only.  A list naming no CPU is malformed.
 * Return the number of CPUs (> 0) with *@cpus malloc'ed, -EINVAL when
 * @list is NULL or malformed (a range backwards, a CPU beyond 2^20),
 * -ENOMEM.  Thread-safe.
 */
int pc_parse_cpulist(const char *list, int **cpus);

#endif /* PERFCTR_SYS_CPULIST_H */
