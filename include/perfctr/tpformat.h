/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libperfctr — the tracepoint formats of a recording: the tracefs
 * "format" file of every tracepoint event recorded, as a perf.data file
 * carries them (its tracing data, HEADER_TRACING_DATA), parsed into
 * events and fields, with the calls that read a field out of a sample's
 * raw payload (PERF_SAMPLE_RAW).
 *
 * What is parsed is what a tool needs to take a payload apart: each
 * event's id (the attr's config), subsystem and name, and each field's
 * name, declared type, offset, size, signedness and kind (a number, a
 * fixed array, a dynamic array behind a __data_loc or __rel_loc word, a
 * string).  The "print fmt" line is not interpreted: the whole format
 * text stays available (perfctr_tp_format__text()) for a printer that
 * does, with the file's long size, page size and header_page text.
 *
 * A perf.data reader hands out its file's formats through
 * perfctr_perfdata__tp_formats(); perfctr_tp_formats__new() parses a
 * tracing-data section from anywhere else (a pipe's HEADER_TRACING_DATA
 * record, a file of the caller's).
 *
 * Only sections of this machine's byte order are read (EOPNOTSUPP).
 *
 * Thread safety: a parsed object is never changed, so any number of
 * threads may read it at once; nothing here is async-signal-safe.
 */
#ifndef PERFCTR_TPFORMAT_H
#define PERFCTR_TPFORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perfctr/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfctr_tp_formats;	/* a recording's formats */
struct perfctr_tp_format;	/* one event's */

/* What a field is (perfctr_tp_field.flags). */
enum perfctr_tp_field_flags {
	/* "signed:1": numbers are sign-extended by the readers. */
	PERFCTR_TP_FIELD_SIGNED = 1u << 0,
	/* An array: "name[N]", or a dynamic one (the two below). */
	PERFCTR_TP_FIELD_ARRAY = 1u << 1,
	/* __data_loc: the field is a u32, the array's length << 16 | its
	 * offset in the payload. */
	PERFCTR_TP_FIELD_DYNAMIC = 1u << 2,
	/* __rel_loc: as __data_loc, the offset counted from the field's
	 * end (DYNAMIC is set too). */
	PERFCTR_TP_FIELD_RELATIVE = 1u << 3,
	/* An array of char. */
	PERFCTR_TP_FIELD_STRING = 1u << 4,
	/* A common_* field of the trace entry's header (pid, flags...). */
	PERFCTR_TP_FIELD_COMMON = 1u << 5,
};

/*
 * A field of an event's format.  The library allocates these and owns
 * them: callers only read them, and later versions may add members at
 * the end.
 */
struct perfctr_tp_field {
	const char *name;	/* "prev_comm" */
	const char *type;	/* the declaration before the name:
				 * "char", "__data_loc char[]",
				 * "const char *" */
	uint32_t offset;	/* in the payload, bytes */
	uint32_t size;		/* bytes (of the u32 for a dynamic array) */
	uint32_t flags;		/* enum perfctr_tp_field_flags */
	uint32_t nr_elems;	/* N of "name[N]"; 0 when not a fixed array */
};

/* The members a caller reads stay where they are; new ones go after. */
_Static_assert(offsetof(struct perfctr_tp_field, offset) == 2 * sizeof(void *) &&
	       offsetof(struct perfctr_tp_field, nr_elems) ==
	       2 * sizeof(void *) + 12, "ABI: perfctr_tp_field");

/**
 * perfctr_tp_formats__new() - parse a tracing-data section (@size bytes
 * at @data, as HEADER_TRACING_DATA holds it: magic, version, byte order,
 * sizeof(long), page size, header_page, header_event, the ftrace formats
 * and the events' formats by subsystem).  What follows the events
 * (kallsyms, printk formats, saved cmdlines) is not read.  The object
 * keeps copies of what it needs: @data may go at once.  An event whose
 * format has no name or no ID is left out (perf leaves it without fields
 * too).
 * Return: the formats, or NULL + errno: EINVAL (a malformed section),
 * EOPNOTSUPP (another byte order), ENOMEM.
 */
PERFCTR_API struct perfctr_tp_formats *
perfctr_tp_formats__new(const void *data, size_t size);

/** perfctr_tp_formats__delete() - free (NULL is a no-op); not for the
 * formats a perf.data reader hands out, which are the reader's. */
PERFCTR_API void perfctr_tp_formats__delete(struct perfctr_tp_formats *f);

/** perfctr_tp_formats__nr() - how many events have a format: the ftrace
 * ones (subsystem "ftrace") first, then the rest in section order. */
PERFCTR_API size_t perfctr_tp_formats__nr(const struct perfctr_tp_formats *f);

/** perfctr_tp_formats__at() - event @idx's format, NULL past the end. */
PERFCTR_API const struct perfctr_tp_format *
perfctr_tp_formats__at(const struct perfctr_tp_formats *f, size_t idx);

/**
 * perfctr_tp_formats__find() - the format of tracepoint @id (the
 * perf_event_attr.config of a PERF_TYPE_TRACEPOINT event).
 * Return: the format, or NULL + errno ENOENT.
 */
PERFCTR_API const struct perfctr_tp_format *
perfctr_tp_formats__find(const struct perfctr_tp_formats *f, uint64_t id);

/**
 * perfctr_tp_formats__find_name() - the format of @system:@name
 * ("sched", "sched_switch").  Return: the format, or NULL + errno ENOENT.
 */
PERFCTR_API const struct perfctr_tp_format *
perfctr_tp_formats__find_name(const struct perfctr_tp_formats *f,
			      const char *system, const char *name);

/** perfctr_tp_formats__long_size() - sizeof(long) of the recording
 * machine, in bytes. */
PERFCTR_API unsigned int
perfctr_tp_formats__long_size(const struct perfctr_tp_formats *f);

/** perfctr_tp_formats__page_size() - the page size of the recording
 * machine, in bytes. */
PERFCTR_API unsigned int
perfctr_tp_formats__page_size(const struct perfctr_tp_formats *f);

/** perfctr_tp_formats__header_page() - the text of tracefs's
 * events/header_page as recorded (@len set to its length; it is not
 * NUL-terminated), for a printer that reads ring pages. */
PERFCTR_API const char *
perfctr_tp_formats__header_page(const struct perfctr_tp_formats *f,
				size_t *len);

/** perfctr_tp_format__id() - the event's ID (its attr's config). */
PERFCTR_API uint64_t perfctr_tp_format__id(const struct perfctr_tp_format *fmt);

/** perfctr_tp_format__system() - its subsystem ("sched"; "ftrace" for
 * the ftrace formats). */
PERFCTR_API const char *
perfctr_tp_format__system(const struct perfctr_tp_format *fmt);

/** perfctr_tp_format__name() - its name ("sched_switch"). */
PERFCTR_API const char *
perfctr_tp_format__name(const struct perfctr_tp_format *fmt);

/** perfctr_tp_format__text() - the whole format file's text (@len set to
 * its length; NUL-terminated as well), print fmt included. */
PERFCTR_API const char *
perfctr_tp_format__text(const struct perfctr_tp_format *fmt, size_t *len);

/** perfctr_tp_format__nr_fields() - its fields, the common_* ones
 * (flagged PERFCTR_TP_FIELD_COMMON) first, then the event's own, each
 * group in format order. */
PERFCTR_API size_t
perfctr_tp_format__nr_fields(const struct perfctr_tp_format *fmt);

/** perfctr_tp_format__field() - field @idx, NULL past the end. */
PERFCTR_API const struct perfctr_tp_field *
perfctr_tp_format__field(const struct perfctr_tp_format *fmt, size_t idx);

/**
 * perfctr_tp_format__field_by_name() - the field called @name
 * ("common_pid", "prev_comm").  Return: the field, or NULL + errno ENOENT.
 */
PERFCTR_API const struct perfctr_tp_field *
perfctr_tp_format__field_by_name(const struct perfctr_tp_format *fmt,
				 const char *name);

/**
 * perfctr_tp_field__number() - the value of a number field in @raw
 * (a sample's payload of @size bytes): read at the field's offset with
 * its size (1, 2, 4 or 8 bytes), sign-extended to 64 bits when it is
 * signed (then cast *@value to int64_t).
 * Return: 0, -EINVAL (an array, or a size not 1, 2, 4 or 8), -ERANGE
 * (the field lies past the payload's end).
 */
PERFCTR_API int perfctr_tp_field__number(const struct perfctr_tp_field *field,
					 const void *raw, size_t size,
					 uint64_t *value);

/**
 * perfctr_tp_field__array() - the bytes of an array field in @raw:
 * *@data points into @raw, *@len is the array's length in bytes (a
 * string's with its final NUL, as the kernel stores it).  A dynamic
 * array is found through its __data_loc or __rel_loc word.
 * Return: 0, -EINVAL (not an array), -ERANGE (the array or its word lies
 * past the payload's end).
 */
PERFCTR_API int perfctr_tp_field__array(const struct perfctr_tp_field *field,
					const void *raw, size_t size,
					const void **data, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* PERFCTR_TPFORMAT_H */
