// SPDX-License-Identifier: GPL-2.0
/* perfex script — not implemented yet. */
#include "perfex.h"

int cmd_script(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	perfex_error("'script' is not implemented yet");
	return PERFEX_EXIT_INTERNAL;
}
