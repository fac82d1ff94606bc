// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"

bool pc_opts_valid(const void *opts, size_t known_size)
{
	const unsigned char *bytes = opts;
	size_t sz, i;

	if (!opts)
		return true;
	sz = *(const size_t *)opts;
	if (sz < sizeof(size_t))
		return false;
	for (i = known_size; i < sz; i++)
		if (bytes[i])
			return false;
	return true;
}

size_t pc_strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

char *pc_strdup_or_null(const char *s, bool *failed)
{
	char *copy;

	if (!s)
		return NULL;
	copy = strdup(s);
	if (!copy)
		*failed = true;
	return copy;
}

int pc_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd;

	if (!size)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)total < size - 1) {
		n = read(fd, buf + total, size - 1 - total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	while (total > 0 && buf[total - 1] == '\n')
		buf[--total] = '\0';
	return (int)total;
}

int pc_parse_u64(const char *s, int base, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int pc_slots_grow(uint32_t **slots, size_t *nslots, size_t nr,
		  uint64_t (*hash)(const void *arg, size_t i), const void *arg)
{
	size_t n = *nslots ? *nslots * 2 : 256;
	uint32_t *grown = calloc(n, sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		size_t h = hash(arg, i) & (n - 1);

		while (grown[h])
			h = (h + 1) & (n - 1);
		grown[h] = (uint32_t)i + 1;
	}
	free(*slots);
	*slots = grown;
	*nslots = n;
	return 0;
}
