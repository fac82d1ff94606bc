// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The sort keys of perfex report, diff and top: --sort's parse and each
 * key's column title, as perf's tables have them.
 */
#include <string.h>

#include "options.h"
#include "perfex.h"
#include "report.h"

const char *report_key_title(enum perfctr_sort_key key)
{
	switch (key) {
	case PERFCTR_SORT_COMM: return "Command";
	case PERFCTR_SORT_DSO: return "Shared Object";
	case PERFCTR_SORT_SYM: return "Symbol";
	case PERFCTR_SORT_PID: return "Pid:Command";
	case PERFCTR_SORT_TID: return "Tid:Command";
	case PERFCTR_SORT_CPU: return "CPU";
	case PERFCTR_SORT_SRCLINE: return "Source:Line";
	default: return "?";
	}
}

int report_sort_option(const struct perfex_parse *p,
		       enum perfctr_sort_key *keys, size_t *nr_keys,
		       bool srcline)
{
	const char *bad = NULL;
	int r = perfctr_sort_keys_parse(p->arg, keys, PERFCTR_SORT_NR, &bad);

	if (r < 0) {
		perfex_error("option '%s': unknown or repeated sort key "
			     "'%.*s' in '%s'", p->name,
			     bad ? (int)strcspn(bad, ",") : 0,
			     bad ? bad : "", p->arg);
		perfex_hint("sort keys are comm, dso, sym (symbol), pid, tid, cpu%s",
			    srcline ? ", srcline" : "");
		return PERFEX_EXIT_USAGE;
	}
	*nr_keys = (size_t)r;
	return PERFEX_GO_ON;
}
