// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex script — one line per sample of a perf.data file:
 *
 *	comm  pid/tid [cpu] seconds: period event: ip symbol+off (dso)
 *
 * Fields the recording did not ask for print as '-'.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "perfex.h"
#include "walk.h"

struct script {
	bool callchain;
};

static void print_loc(struct walk *w, pid_t pid, uint64_t ip, bool kernel,
		      uint64_t shown_ip)
{
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };

	perfctr_symbols__resolve(walk_symbols(w), pid, ip, kernel, 0, &loc);
	printf("%16" PRIx64 " ", shown_ip);
	if (loc.sym)
		printf("%s+0x%" PRIx64, loc.sym,
		       loc.dso_addr - loc.sym_addr + (shown_ip - ip));
	else
		printf("[unknown]");
	printf(" (%s)\n", loc.dso);
}

static int print_sample(struct walk *w, const struct walk_sample *ws, void *ctx)
{
	const struct script *sc = ctx;
	const struct perfctr_sample *s = ws->sample;
	char comm[32];

	if (ws->comm)
		snprintf(comm, sizeof(comm), "%s", ws->comm);
	else
		snprintf(comm, sizeof(comm), ":%u", s->tid);
	printf("%16s ", comm);
	if (s->type & PERF_SAMPLE_TID)
		printf("%7u/%-7u ", s->pid, s->tid);
	else
		printf("%15s ", "-");
	if (s->type & PERF_SAMPLE_CPU)
		printf("[%03u] ", s->cpu);
	else
		printf("[---] ");
	if (s->type & PERF_SAMPLE_TIME)
		printf("%" PRIu64 ".%06" PRIu64 ": ", s->time / 1000000000,
		       s->time % 1000000000 / 1000);
	else
		printf("-: ");
	printf("%10" PRIu64 " %s: ", s->period, ws->event);
	if (s->type & PERF_SAMPLE_IP)
		print_loc(w, (pid_t)s->pid, s->ip, ws->kernel, s->ip);
	else
		printf("-\n");
	if (sc->callchain && (s->type & PERF_SAMPLE_CALLCHAIN)) {
		bool kernel = ws->kernel;
		uint64_t i;

		for (i = 0; i < s->callchain_nr; i++) {
			uint64_t ip = s->callchain[i];

			if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
				if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
					kernel = true;
				else if (ip == (uint64_t)PERF_CONTEXT_USER)
					kernel = false;
				continue;
			}
			printf("%24s", "");
			print_loc(w, (pid_t)s->pid, ip > 0 ? ip - 1 : ip, kernel, ip);
		}
		printf("\n");
	}
	return 0;
}

struct script_opts {
	struct script sc;
	struct walk_opts wopts;
};

static int script_option(struct perfex_parse *p, void *ctx)
{
	struct script_opts *so = ctx;

	switch (p->opt->id) {
	case OPT_INPUT:
		so->wopts.input = p->arg;
		break;
	case OPT_CALLCHAIN:
		so->sc.callchain = true;
		break;
	case OPT_KALLSYMS:
		so->wopts.kallsyms = p->arg;
		break;
	case OPT_NO_DEMANGLE:
		so->wopts.no_demangle = true;
		break;
	default:
		break;
	}
	return -1;
}

int cmd_script(int argc, char **argv)
{
	struct script_opts so = {
		.wopts = { .input = "perf.data", .symbols = true },
	};
	struct walk_opts wopts;
	struct script sc;
	struct perfex_parse p;
	struct walk *w;
	int ret;

	ret = perfex_options_parse(&p, PERFEX_CMD_SCRIPT, argc, argv, false,
				   script_option, &so);
	if (ret >= 0)
		return ret;
	wopts = so.wopts;
	sc = so.sc;
	if (optind < argc) {
		perfex_error("unexpected argument '%s'", argv[optind]);
		perfex_hint("perfex script --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	w = walk_open(&wopts, &ret);
	if (!w)
		return ret;
	ret = walk_run(w, print_sample, &sc);
	if (!ret && walk_stats(w)->lost + walk_stats(w)->lost_samples)
		fprintf(stderr, "perfex: %" PRIu64 " samples were lost while recording\n",
			walk_stats(w)->lost + walk_stats(w)->lost_samples);
	if (fflush(stdout) && !ret) {
		perfex_error("cannot write: %s", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
	walk_close(w);
	return ret;
}
