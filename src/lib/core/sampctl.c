// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Sampling controls: period jitter, short and long resets, resets of other
 * counters.  See sampctl.h and perfctr_sampling in notify.h. */
#include "common/internal.h"
#include "core/sampctl.h"
#include "sys/sys.h"

/* xorshift64*: small, fast, and good enough to decorrelate sampling
 * periods from the workload's own periodicity. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 2685821657736338717ULL;
}

uint64_t perfctr_sampling__next_period(const struct perfctr_sampling *ctl,
				       uint64_t *rng, bool notified,
				       uint64_t base)
{
	uint64_t period = base;

	if (!ctl)
		return base;
	if (PC_OPTS_GET(ctl, short_period, 0))
		period = ctl->short_period;
	if (notified && PC_OPTS_GET(ctl, long_period, 0))
		period = ctl->long_period;
	if (PC_OPTS_GET(ctl, random_mask, 0) && rng)
		period += next_random(rng) & ctl->random_mask;
	return period ? period : 1;
}

int pc_sampctl_set_period(int fd, uint64_t period, bool enable)
{
	int err = sys_perf_disable(fd, false);

	if (!err)
		err = sys_perf_period(fd, period);
	if (enable) {
		int rc = sys_perf_enable(fd, false);

		if (!err)
			err = rc;
	}
	return err;
}

int pc_sampctl_reset(int fd, uint64_t period, bool enable)
{
	int err = sys_perf_disable(fd, false);

	if (!err)
		err = sys_perf_reset(fd, false);
	if (!err && period)
		err = sys_perf_period(fd, period);
	if (enable) {
		int rc = sys_perf_enable(fd, false);

		if (!err)
			err = rc;
	}
	return err;
}
