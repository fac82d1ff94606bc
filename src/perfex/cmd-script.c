// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex script — one line per sample of a perf.data file:
 *
 *	comm  pid/tid [cpu] seconds: period event: ip symbol+off (dso)
 *
 * Fields the recording did not ask for print as '-'.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <perfctr/perfctr.h>
#include <perfctr/reader.h>

#include "perfex.h"

static const char usage_text[] =
"usage: perfex script [options]\n"
"\n"
"  -i, --input FILE      the perf.data file to read (default: perf.data)\n"
"  -g, --callchain       print the callchain of each sample below it\n"
"      --kallsyms FILE   kernel symbols from FILE (default: /proc/kallsyms)\n"
"      --no-demangle     C++ names as the binaries spell them (mangled)\n"
"  -h, --help            this text\n"
"\n"
"Each line: comm pid/tid [cpu] time: period event: ip symbol+offset (dso)\n"
"Exit status: 0, 129 bad option, 134 missing, unreadable or damaged file.\n";

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

int cmd_script(int argc, char **argv)
{
	enum { OPT_KALLSYMS = 256, OPT_NO_DEMANGLE };
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "callchain", no_argument, NULL, 'g' },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	PERFCTR_OPTS(perfctr_reader_opts, ropts);
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	struct perfctr_reader_stats st = { .sz = sizeof(st) };
	const char *input = "perf.data";
	struct script sc = { 0 };
	struct perfctr_reader *rd;
	int c, ret, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:gh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'g':
			sc.callchain = true;
			break;
		case OPT_KALLSYMS:
			ropts.kallsyms = optarg;
			break;
		case OPT_NO_DEMANGLE:
			ropts.no_demangle = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:	/* ':' or an unknown option */
			return perfex_option_error(c, argv, usage_text);
		}
	}
	if (optind < argc) {
		perfex_error("unexpected argument '%s'", argv[optind]);
		fputs(usage_text, stderr);
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
