// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * synth-profile — write a perf.data file of made-up samples with the
 * library's writer: SAMPLES cpu-clock samples in kernel functions named
 * on the command line, each function drawn with the probability of its
 * weight from a pseudo-random sequence of SEED (the same SEED, the same
 * file).  The functions' addresses go to FILE.kallsyms, for
 * `perfex report --kallsyms FILE.kallsyms -i FILE`.
 *
 *   synth-profile [-b RUN] [-T] FILE SEED SAMPLES NAME=WEIGHT...
 *
 * -b RUN: bursts, each function drawn keeps the next RUN samples (as a
 * profile's samples come in runs that are not independent draws);
 * -T: no first and last sample time in the header (as old files).
 *
 * perfex's tests make same-workload pairs of profiles so (two seeds, the
 * same weights), where every difference is sampling noise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfctr/perfctr.h>
#include <perfctr/perfdata.h>

#define MAX_FUNCS 64
#define KERNEL_BASE 0xffffffff81000000ULL
#define FUNC_SIZE 0x1000

#define SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		     PERF_SAMPLE_PERIOD)

/* splitmix64: small, well mixed even for neighbouring seeds, and the
 * same sequence everywhere. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static int write_kallsyms(const char *file, char **names, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.kallsyms", file);
	f = fopen(path, "w");
	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%016" PRIx64 " T %s\n",
			(uint64_t)(KERNEL_BASE + i * FUNC_SIZE), names[i]);
	fprintf(f, "%016" PRIx64 " T _synth_end\n",
		(uint64_t)(KERNEL_BASE + n * FUNC_SIZE));
	return fclose(f);
}

int main(int argc, char **argv)
{
	PERFCTR_OPTS(perfctr_perfdata_writer_opts, wopts);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000,
		.sample_type = SAMPLE_TYPE,
	};
	char *names[MAX_FUNCS];
	uint64_t weights[MAX_FUNCS], sum = 0, seed, samples, state, run = 1;
	struct perfctr_perfdata_writer *w;
	bool no_time = false;
	size_t n = 0, f = 0;
	int c;

	while ((c = getopt(argc, argv, "+b:T")) != -1) {
		if (c == 'b' && !parse_u64(optarg, &run) && run)
			continue;
		if (c == 'T') {
			no_time = true;
			continue;
		}
		goto usage;
	}
	argc -= optind - 1;
	argv += optind - 1;
	if (argc < 5 || parse_u64(argv[2], &seed) ||
	    parse_u64(argv[3], &samples)) {
usage:
		fprintf(stderr, "usage: synth-profile [-b RUN] [-T] FILE SEED "
			"SAMPLES NAME=WEIGHT...\n");
		return 2;
	}
	for (int i = 4; i < argc && n < MAX_FUNCS; i++, n++) {
		char *eq = strchr(argv[i], '=');

		if (!eq || parse_u64(eq + 1, &weights[n]) || !weights[n]) {
			fprintf(stderr, "synth-profile: '%s' is not NAME=WEIGHT\n",
				argv[i]);
			return 2;
		}
		*eq = '\0';
		names[n] = argv[i];
		sum += weights[n];
	}
	if (write_kallsyms(argv[1], names, n)) {
		perror("synth-profile: FILE.kallsyms");
		return 1;
	}
	w = perfctr_perfdata_writer__open(argv[1], &wopts);
	if (!w || perfctr_perfdata_writer__add_attr(w, &attr, "cpu-clock",
						    NULL, 0) < 0) {
		perror("synth-profile: FILE");
		return 1;
	}
	state = seed;
	for (uint64_t s = 0; s < samples; s++) {
		struct {
			struct perf_event_header header;
			uint64_t ip;
			uint32_t pid, tid;
			uint64_t time;
			uint64_t period;
		} rec = {
			.header = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL,
				    sizeof(rec) },
			.pid = 1, .tid = 1,
			.time = 1000 + s * 1000000,
			.period = attr.sample_period,
		};
		if (s % run == 0) {
			uint64_t pick = next_random(&state) % sum;

			f = 0;
			while (pick >= weights[f])
				pick -= weights[f++];
		}
		rec.ip = KERNEL_BASE + f * FUNC_SIZE + 0x10;
		if (perfctr_perfdata_writer__write(w, &rec, sizeof(rec))) {
			perror("synth-profile: write");
			return 1;
		}
	}
	if (!no_time && samples)
		perfctr_perfdata_writer__set_sample_time(w, 1000,
							 1000 + (samples - 1) * 1000000);
	if (perfctr_perfdata_writer__close(w)) {
		perror("synth-profile: close");
		return 1;
	}
	return 0;
}
