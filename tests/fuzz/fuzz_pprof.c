/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libFuzzer target: any perf.data file through the sample reader into a
 * pprof profile (perfex report --pprof), encoded; the encoding must
 * decompress and decode again with as many samples as were merged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfctr/pprof.h"
#include "perfctr/reader.h"

#if defined(HAVE_PROTOBUFC) && defined(HAVE_ZLIB)
#include <zlib.h>
#include "profile.pb-c.h"

static void check_decodes(const void *buf, size_t size, size_t nr_samples)
{
	Perftools__Profiles__Profile *p;
	z_stream z = { 0 };
	size_t cap = 8u << 20;
	uint8_t *raw = malloc(cap);

	if (!raw || inflateInit2(&z, 15 + 16) != Z_OK)
		__builtin_trap();
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)size;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	if (inflate(&z, Z_FINISH) != Z_STREAM_END)
		__builtin_trap();
	p = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	if (!p || p->n_sample != nr_samples || !p->n_string_table ||
	    p->string_table[0][0])
		__builtin_trap();
	perftools__profiles__profile__free_unpacked(p, NULL);
	inflateEnd(&z);
	free(raw);
}
#else
static void check_decodes(const void *buf, size_t size, size_t nr_samples)
{
	(void)buf, (void)size, (void)nr_samples;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PERFCTR_OPTS(perfctr_reader_opts, o, .callchain = true,
		     .dso_only = true, .kallsyms = "/nonexistent");
	struct perfctr_pprof *pp;
	struct perfctr_reader *r;
	char path[64];
	void *buf;
	size_t len;
	int fd;

	fd = memfd_create("fuzz_pprof", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = perfctr_reader__open(path, &o);
	close(fd);
	if (!r)
		return 0;
	pp = perfctr_pprof__new(NULL);
	if (pp && perfctr_pprof__add_reader(pp, r) >= 0 &&
	    !perfctr_pprof__encode(pp, &buf, &len)) {
		check_decodes(buf, len, perfctr_pprof__nr_samples(pp));
		free(buf);
	}
	perfctr_pprof__delete(pp);
	perfctr_reader__close(r);
	return 0;
}
