// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* perfctr_broker_info(): the access broker's answer for this user. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "perfctr/info.h"
#include "sys/broker.h"

int perfctr_broker_info(struct perfctr_broker_info *info)
{
	struct perfctr_broker_info out;
	const char *off = getenv("PERFCTR_NO_BROKER");
	size_t n;

	if (!info || info->sz < offsetof(struct perfctr_broker_info, policy) +
				sizeof(info->policy))
		return pc_err(EINVAL);
	memset(&out, 0, sizeof(out));
	pc_strlcpy(out.socket, pc_broker_socket(), sizeof(out.socket));
	if (off && *off && strcmp(off, "0"))
		out.status = -ECANCELED;
	else
		out.status = pc_broker_policy(out.policy, sizeof(out.policy),
					      out.rule, sizeof(out.rule));
	if (out.status == -EACCES)
		out.policy[0] = '\0';
	n = info->sz < sizeof(out) ? info->sz : sizeof(out);
	memcpy((char *)info + sizeof(size_t), (char *)&out + sizeof(size_t),
	       n - sizeof(size_t));
	if (info->sz > sizeof(out))
		memset((char *)info + sizeof(out), 0, info->sz - sizeof(out));
	return 0;
}
