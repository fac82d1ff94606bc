/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Small helpers for perfex's JSON documents (info, list, stat, report). */
#ifndef PERFEX_JSON_OUT_H
#define PERFEX_JSON_OUT_H

#include <stdbool.h>
#include <stdio.h>

/* @s as a JSON string with quotes and escapes; NULL as null.  Control
 * characters are \u00XX escapes; each ill-formed UTF-8 sequence is one
 * \ufffd (the maximal-subpart rule), so the output is valid JSON for any
 * byte string. */
void jout_str(FILE *out, const char *s);
/* "key": with the indentation and separator of a pretty document. */
void jout_key(FILE *out, int indent, bool first, const char *key);

#endif /* PERFEX_JSON_OUT_H */
