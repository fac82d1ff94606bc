/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The perf.data input of perfex report and perfex script: the library's
 * reader, with perfex's messages and exit codes for its errors. */
#include <errno.h>
#include <string.h>

#include <perfctr/reader.h>

#include "perfex.h"

struct perfctr_reader *perfex_reader_open(const char *input,
					  const struct perfctr_reader_opts *opts,
					  int *exit_code)
{
	struct perfctr_reader *reader = perfctr_reader__open(input, opts);
	int err = errno;

	*exit_code = 0;
	if (reader)
		return reader;
	*exit_code = PERFEX_EXIT_IO;
	switch (err) {
	case EINVAL:
		perfex_error("'%s' is not a perf.data file (or it is damaged)",
			     input);
		break;
	case EOPNOTSUPP:
		perfex_error("cannot read '%s': pipe-mode or foreign-endian perf.data is not supported",
			     input);
		break;
	case ENODATA:
		perfex_error("cannot read '%s': no events in the file", input);
		break;
	case EBADMSG:
	case ENOMEM:
		*exit_code = perfex_reader_error(input, -err);
		break;
	default:
		perfex_error("cannot open '%s': %s", input, strerror(err));
		if (err == ENOENT)
			perfex_hint("record one with 'perfex record -- COMMAND', or name it with -i");
		break;
	}
	return NULL;
}

int perfex_reader_error(const char *input, int err)
{
	if (err == -ENOMEM) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	if (err == -EBADMSG)
		perfex_error("'%s' is damaged: a record of the data section makes no sense",
			     input);
	else
		perfex_error("cannot read '%s': %s", input, strerror(-err));
	return PERFEX_EXIT_IO;
}
