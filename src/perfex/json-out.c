// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include "json-out.h"

void jout_str(FILE *out, const char *s)
{
	const unsigned char *p;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

void jout_key(FILE *out, int indent, bool first, const char *key)
{
	fprintf(out, "%s\n%*s", first ? "" : ",", indent, "");
	jout_str(out, key);
	fputs(": ", out);
}
