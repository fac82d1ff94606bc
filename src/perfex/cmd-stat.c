// SPDX-License-Identifier: GPL-2.0
/* perfex stat — not implemented yet. */
#include "perfex.h"

int cmd_stat(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	perfex_error("'stat' is not implemented yet");
	return PERFEX_EXIT_INTERNAL;
}
