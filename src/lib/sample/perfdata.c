// SPDX-License-Identifier: LGPL-2.1
/* Placeholder: the API of perfdata.h, not implemented yet (ENOSYS). */
#include <errno.h>
#include <stddef.h>

#include "common/internal.h"
#include "perfctr/perfdata.h"

struct perfctr_perfdata_writer * perfctr_perfdata_writer__new(const char *path, const struct perfctr_perfdata_writer_opts *opts)
{
	errno = ENOSYS;
	return NULL;
}

struct perfctr_perfdata_writer * perfctr_perfdata_writer__new_fd(int fd, const struct perfctr_perfdata_writer_opts *opts)
{
	errno = ENOSYS;
	return NULL;
}

int perfctr_perfdata_writer__add_attr(struct perfctr_perfdata_writer *w, const struct perf_event_attr *attr, const char *name, const uint64_t *ids, size_t nr_ids)
{
	return pc_err(ENOSYS);
}

int perfctr_perfdata_writer__add_ids(struct perfctr_perfdata_writer *w, size_t idx, const uint64_t *ids, size_t nr_ids)
{
	return pc_err(ENOSYS);
}

int perfctr_perfdata_writer__write(struct perfctr_perfdata_writer *w, const void *buf, size_t len)
{
	return pc_err(ENOSYS);
}

int perfctr_perfdata_writer__add_build_id(struct perfctr_perfdata_writer *w, pid_t pid, uint16_t misc, const uint8_t *id, size_t id_size, const char *filename)
{
	return pc_err(ENOSYS);
}

void perfctr_perfdata_writer__set_sample_time(struct perfctr_perfdata_writer *w, uint64_t first, uint64_t last)
{
	return;
}

uint64_t perfctr_perfdata_writer__data_size(const struct perfctr_perfdata_writer *w)
{
	return 0;
}

int perfctr_perfdata_writer__close(struct perfctr_perfdata_writer *w)
{
	return pc_err(ENOSYS);
}

struct perfctr_perfdata * perfctr_perfdata__open(const char *path, const struct perfctr_perfdata_opts *opts)
{
	errno = ENOSYS;
	return NULL;
}

struct perfctr_perfdata * perfctr_perfdata__open_mem(const void *buf, size_t size, const struct perfctr_perfdata_opts *opts)
{
	errno = ENOSYS;
	return NULL;
}

void perfctr_perfdata__close(struct perfctr_perfdata *pd)
{
	return;
}

size_t perfctr_perfdata__nr_attrs(const struct perfctr_perfdata *pd)
{
	return 0;
}

const struct perf_event_attr * perfctr_perfdata__attr(const struct perfctr_perfdata *pd, size_t idx)
{
	errno = ENOSYS;
	return NULL;
}

const char * perfctr_perfdata__attr_name(const struct perfctr_perfdata *pd, size_t idx)
{
	errno = ENOSYS;
	return NULL;
}

size_t perfctr_perfdata__attr_ids(const struct perfctr_perfdata *pd, size_t idx, const uint64_t **ids)
{
	return 0;
}

const struct perfctr_decoder * perfctr_perfdata__decoder(const struct perfctr_perfdata *pd)
{
	errno = ENOSYS;
	return NULL;
}

bool perfctr_perfdata__has_feature(const struct perfctr_perfdata *pd, unsigned int feat)
{
	return false;
}

int perfctr_perfdata__feature(const struct perfctr_perfdata *pd, unsigned int feat, const void **data, size_t *size)
{
	return pc_err(ENOSYS);
}

const char * perfctr_perfdata__string(const struct perfctr_perfdata *pd, unsigned int feat)
{
	errno = ENOSYS;
	return NULL;
}

int perfctr_perfdata__nr_cpus(const struct perfctr_perfdata *pd, uint32_t *avail, uint32_t *online)
{
	return pc_err(ENOSYS);
}

int perfctr_perfdata__cmdline(const struct perfctr_perfdata *pd, const char *const **argv)
{
	return pc_err(ENOSYS);
}

size_t perfctr_perfdata__nr_build_ids(const struct perfctr_perfdata *pd)
{
	return 0;
}

int perfctr_perfdata__build_id(const struct perfctr_perfdata *pd, size_t idx, struct perfctr_build_id *out)
{
	return pc_err(ENOSYS);
}

int perfctr_perfdata__sample_time(const struct perfctr_perfdata *pd, uint64_t *first, uint64_t *last)
{
	return pc_err(ENOSYS);
}

uint64_t perfctr_perfdata__data_size(const struct perfctr_perfdata *pd)
{
	return 0;
}

int perfctr_perfdata__next(struct perfctr_perfdata *pd, uint64_t *cursor, const struct perf_event_header **hdr)
{
	return pc_err(ENOSYS);
}

