// SPDX-License-Identifier: GPL-2.0
/* perfex info — not implemented yet. */
#include "perfex.h"

int cmd_info(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	perfex_error("'info' is not implemented yet");
	return PERFEX_EXIT_INTERNAL;
}
