// SPDX-License-Identifier: GPL-2.0
/* perfex list — not implemented yet. */
#include "perfex.h"

int cmd_list(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	perfex_error("'list' is not implemented yet");
	return PERFEX_EXIT_INTERNAL;
}
