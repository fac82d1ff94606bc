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

#include <perfctr/perfctr.h>
#include <perfctr/reader.h>

#include "options.h"
#include "perfex.h"

struct script {
	bool callchain;
};

static void print_loc(struct perfctr_reader *rd, pid_t pid, uint64_t ip, bool kernel,
		      uint64_t shown_ip)
{
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };

	perfctr_symbols__resolve(perfctr_reader__symbols(rd), pid, ip, kernel, 0, &loc);
	printf("%16" PRIx64 " ", shown_ip);
	if (loc.sym)
		printf("%s+0x%" PRIx64, loc.sym,
		       loc.dso_addr - loc.sym_addr + (shown_ip - ip));
	else
		printf("[unknown]");
	printf(" (%s)\n", loc.dso);
}

static void print_sample(struct perfctr_reader *rd, const struct script *sc,
			 const struct perfctr_reader_sample *ws)
{
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
		print_loc(rd, (pid_t)s->pid, s->ip, ws->kernel, s->ip);
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
			print_loc(rd, (pid_t)s->pid, ip > 0 ? ip - 1 : ip, kernel, ip);
		}
		printf("\n");
	}
}

struct script_opts {
	struct script sc;
	const char *input;
	struct perfctr_reader_opts *ropts;
};

static int script_option(struct perfex_parse *p, void *ctx)
{
	struct script_opts *so = ctx;

	switch (p->opt->id) {
	case OPT_INPUT:
		so->input = p->arg;
		break;
	case OPT_CALLCHAIN:
		so->sc.callchain = true;
		break;
	case OPT_KALLSYMS:
		so->ropts->kallsyms = p->arg;
		break;
	case OPT_NO_DEMANGLE:
		so->ropts->no_demangle = true;
		break;
	default:
		break;
	}
	return -1;
}

int cmd_script(int argc, char **argv)
{
	PERFCTR_OPTS(perfctr_reader_opts, ropts);
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	struct perfctr_reader_stats st = { .sz = sizeof(st) };
	struct script_opts so = { .input = "perf.data", .ropts = &ropts };
	const char *input;
	struct script sc;
	struct perfctr_reader *rd;
	struct perfex_parse p;
	int ret, r;

	ret = perfex_options_parse(&p, PERFEX_CMD_SCRIPT, argc, argv, false,
				   script_option, &so);
	if (ret >= 0)
		return ret;
	input = so.input;
	sc = so.sc;
	if (optind < argc) {
		perfex_error("unexpected argument '%s'", argv[optind]);
		perfex_hint("perfex script --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	rd = perfex_reader_open(input, &ropts, &ret);
	if (!rd)
		return ret;
	while ((r = perfctr_reader__next(rd, &rs)) > 0)
		print_sample(rd, &sc, &rs);
	if (r < 0)
		ret = perfex_reader_error(input, r);
	perfctr_reader__stats(rd, SIZE_MAX, &st);
	if (!ret && st.lost + st.lost_samples)
		fprintf(stderr, "perfex: %" PRIu64 " samples were lost while recording\n",
			st.lost + st.lost_samples);
	if (fflush(stdout) && !ret) {
		perfex_error("cannot write: %s", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
	perfctr_reader__close(rd);
	return ret;
}
