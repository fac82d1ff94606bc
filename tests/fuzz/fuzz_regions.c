// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: the regions results file reader (what perfex regions
 * and perfctr_region_report() print).  The input is the whole file; it is
 * read from a memory file and its report written to /dev/null.  A file
 * whose first line is not the header must be refused with -EINVAL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfctr/region.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	char path[64];
	int fd, ret;

	if (!sink)
		sink = fopen("/dev/null", "w");
	fd = memfd_create("fuzz_regions", MFD_CLOEXEC);
	if (fd < 0 || !sink)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = perfctr_region_report(path, sink);
	if (size < 17 || memcmp(data, "perfctr-regions 1", 17)) {
		if (ret != -EINVAL)
			abort();
	}
	close(fd);
	return 0;
}
