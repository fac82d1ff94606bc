// SPDX-License-Identifier: GPL-2.0
/* perfex record — not implemented yet. */
#include "perfex.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	perfex_error("'record' is not implemented yet");
	return PERFEX_EXIT_INTERNAL;
}
