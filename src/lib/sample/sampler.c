// SPDX-License-Identifier: LGPL-2.1
/* Placeholder: the API of sampler.h, not implemented yet (ENOSYS). */
#include <errno.h>
#include <stddef.h>

#include "common/internal.h"
#include "perfctr/sampler.h"

struct perfctr_sampler * perfctr_sampler__new(const struct perfctr_sampler_opts *opts)
{
	errno = ENOSYS;
	return NULL;
}

void perfctr_sampler__delete(struct perfctr_sampler *s)
{
	return;
}

int perfctr_sampler__add_attr(struct perfctr_sampler *s, const struct perf_event_attr *attr, const char *name)
{
	return pc_err(ENOSYS);
}

int perfctr_sampler__open(struct perfctr_sampler *s)
{
	return pc_err(ENOSYS);
}

int perfctr_sampler__enable(struct perfctr_sampler *s)
{
	return pc_err(ENOSYS);
}

int perfctr_sampler__disable(struct perfctr_sampler *s)
{
	return pc_err(ENOSYS);
}

size_t perfctr_sampler__nr_attrs(const struct perfctr_sampler *s)
{
	return 0;
}

const struct perf_event_attr * perfctr_sampler__attr(const struct perfctr_sampler *s, size_t idx)
{
	errno = ENOSYS;
	return NULL;
}

const char * perfctr_sampler__name(const struct perfctr_sampler *s, size_t idx)
{
	errno = ENOSYS;
	return NULL;
}

size_t perfctr_sampler__ids(const struct perfctr_sampler *s, size_t idx, const uint64_t **ids)
{
	return 0;
}

size_t perfctr_sampler__nr_rings(const struct perfctr_sampler *s)
{
	return 0;
}

struct perfctr_ring *const * perfctr_sampler__rings(const struct perfctr_sampler *s)
{
	errno = ENOSYS;
	return NULL;
}

int perfctr_sampler__ring_cpu(const struct perfctr_sampler *s, size_t idx)
{
	return pc_err(ENOSYS);
}

pid_t perfctr_sampler__ring_tid(const struct perfctr_sampler *s, size_t idx)
{
	return pc_err(ENOSYS);
}

int perfctr_sampler__fd(const struct perfctr_sampler *s, size_t idx, size_t ring_idx)
{
	return pc_err(ENOSYS);
}

const struct perfctr_decoder * perfctr_sampler__decoder(const struct perfctr_sampler *s)
{
	errno = ENOSYS;
	return NULL;
}

int64_t perfctr_sampler__poll(struct perfctr_sampler *s, int timeout_ms, perfctr_ring_record_cb_t cb, void *ctx)
{
	return pc_err(ENOSYS);
}

int perfctr_sampler__stats(const struct perfctr_sampler *s, struct perfctr_ring_stats *stats, uint64_t *kernel_lost)
{
	return pc_err(ENOSYS);
}

