// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* libpfm4 native event names (see native.h). */
#include <errno.h>
#include <string.h>

#include "event/native.h"

#ifdef HAVE_LIBPFM
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>

/* libpfm4 keeps its tables in globals initialised once per process. */
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_ret;

static void pfm_init(void)
{
	pfm_init_ret = pfm_initialize();
}

bool pc_native_available(void)
{
	return true;
}

int pc_native_encode(const char *name, size_t len, struct perf_event_attr *attr,
		     const char **why)
{
	struct perf_event_attr out;
	pfm_perf_encode_arg_t arg;
	char buf[256];
	int ret;

	if (len >= sizeof(buf))
		return -ENOENT;
	memcpy(buf, name, len);
	buf[len] = '\0';
	pthread_once(&pfm_once, pfm_init);
	if (pfm_init_ret != PFM_SUCCESS)
		return -ENOENT;
	memset(&out, 0, sizeof(out));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &out;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(buf, PFM_PLM0 | PFM_PLM3,
					PFM_OS_PERF_EVENT, &arg);
	if (ret == PFM_ERR_NOTFOUND || ret == PFM_ERR_NOTSUPP)
		return -ENOENT;
	if (ret != PFM_SUCCESS) {
		*why = pfm_strerror(ret);
		return -EINVAL;
	}
	attr->type = out.type;
	attr->config = out.config;
	attr->config1 = out.config1;
	attr->config2 = out.config2;
	attr->exclude_user = out.exclude_user;
	attr->exclude_kernel = out.exclude_kernel;
	attr->exclude_hv = out.exclude_hv;
	attr->precise_ip = out.precise_ip;
	return 0;
}

#else

bool pc_native_available(void)
{
	return false;
}

int pc_native_encode(const char *name, size_t len, struct perf_event_attr *attr,
		     const char **why)
{
	(void)name;
	(void)len;
	(void)attr;
	(void)why;
	return -ENOENT;
}

#endif
