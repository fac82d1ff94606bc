// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * topwork — a process with a known hot function, for perfex top's tests
 * and benchmark.  Commands run in order:
 *
 *   topwork hot MS            MS milliseconds in topwork_hot()
 *   topwork dlopen LIB MS     dlopen() LIB (not mapped before), then MS
 *                             milliseconds of CPU time in its toplib_hot()
 *   topwork ready FILE        create FILE (the test knows it runs)
 *   topwork wait              block until a line arrives on stdin
 *
 * The hot loops read the clock only every 2^16 iterations, so nearly all
 * of their samples land in the named function itself.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "topwork: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

__attribute__((noinline)) uint64_t topwork_hot(long ms)
{
	uint64_t end = now_ms() + (uint64_t)ms, x = 1;

	do {
		for (int i = 0; i < 65536; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (now_ms() < end);
	return x;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *cmd = argv[i];

		if (!strcmp(cmd, "hot") && i + 1 < argc) {
			volatile uint64_t sink = topwork_hot(num(argv[++i]));

			(void)sink;
		} else if (!strcmp(cmd, "dlopen") && i + 2 < argc) {
			void *lib = dlopen(argv[i + 1], RTLD_NOW);
			uint64_t (*hot)(long);

			if (!lib) {
				fprintf(stderr, "topwork: %s\n", dlerror());
				return 2;
			}
			*(void **)&hot = dlsym(lib, "toplib_hot");
			if (!hot) {
				fprintf(stderr, "topwork: no toplib_hot in %s\n",
					argv[i + 1]);
				return 2;
			}
			hot(num(argv[i + 2]));
			i += 2;
		} else if (!strcmp(cmd, "wait")) {
			char line[64];

			if (!fgets(line, sizeof(line), stdin)) {
				fprintf(stderr, "topwork: wait: no line on stdin\n");
				return 2;
			}
		} else if (!strcmp(cmd, "ready") && i + 1 < argc) {
			int fd = open(argv[++i], O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (fd < 0) {
				perror("topwork: ready");
				return 2;
			}
			close(fd);
		} else {
			fprintf(stderr, "topwork: bad command '%s'\n", cmd);
			return 2;
		}
	}
	return 0;
}
