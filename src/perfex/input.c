/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The perf.data input of perfex report and perfex script: the library's
 * reader, with perfex's messages and exit codes for its errors. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <perfctr/perfdata.h>
#include <perfctr/reader.h>

#include "perfex.h"

struct perfctr_reader *perfex_reader_open(const char *input,
					  const struct perfctr_reader_opts *opts,
					  int *exit_code)
{
	struct perfctr_reader *reader = perfctr_reader__open(input, opts);
	int err = errno;

	*exit_code = 0;
	if (reader) {
		struct perfctr_perfdata_recovery rec = { .sz = sizeof(rec) };

		static const char *const why[] = {
			[PERFCTR_RECOVERED_NO_FEATURES] =
				"is unfinished (its recording did not end normally)",
			[PERFCTR_RECOVERED_NO_SIZE] =
				"is unfinished (perf record did not end normally: "
				"no data size, no features)",
			[PERFCTR_RECOVERED_TRUNCATED] =
				"is truncated (its data section runs past the end of the file)",
		};

		/* A killed recording or a file cut short: say how much of it
		 * is read, and where names come from that it lacks. */
		if (perfctr_perfdata__recovered(perfctr_reader__perfdata(reader),
						&rec) != 1)
			return reader;
		fprintf(stderr, "perfex: warning: '%s' %s: recovered %" PRIu64
			" records, %" PRIu64 " bytes%s\n", input,
			rec.kind >= 0 && rec.kind < (int)(sizeof(why) / sizeof(why[0])) ?
			why[rec.kind] : why[0], rec.records, rec.bytes,
			rec.torn_bytes ? "; a torn record at the end left out" : "");
		if (rec.local_names)
			fprintf(stderr, "perfex: warning: '%s' does not name "
				"%" PRIu32 " tracepoint event%s: names and formats "
				"taken from this machine's tracefs by id (right "
				"for a file recorded here since boot)\n", input,
				rec.local_names, rec.local_names == 1 ? "" : "s");
		return reader;
	}
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

bool perfex_unwind_summary(const struct perfctr_reader_stats *st, char *buf,
			   size_t size)
{
	uint64_t truncated = 0;
	bool first = true;
	size_t len;
	int i;

	if (!st->unwound)
		return false;
	for (i = 0; i < PERFCTR_UNWIND_NR_STOPS; i++)
		truncated += st->truncated[i];
	len = (size_t)snprintf(buf, size, "%" PRIu64 " truncated of %" PRIu64
			       " unwound", truncated, st->unwound);
	for (i = 0; i < PERFCTR_UNWIND_NR_STOPS && len < size; i++) {
		if (!st->truncated[i])
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s %" PRIu64 " %s",
					first ? ":" : ",", st->truncated[i],
					perfctr_unwind_stop_str(i));
		first = false;
	}
	return true;
}
