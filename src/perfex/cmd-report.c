// SPDX-License-Identifier: GPL-2.0
/* perfex report — not implemented yet. */
#include "perfex.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	perfex_error("'report' is not implemented yet");
	return PERFEX_EXIT_INTERNAL;
}
