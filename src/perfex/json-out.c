// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include "json-out.h"

/*
 * The length of the well-formed UTF-8 sequence at @p (1 to 4), or 0 when
 * it is not one; *@bad then holds how many bytes form its "maximal
 * subpart" (the longest prefix that could still have begun a valid
 * sequence), which becomes one U+FFFD.  That is the replacement rule of
 * Unicode's chapter 3 (and of Python's bytes.decode(errors="replace")),
 * so a reader that decodes the raw bytes the same way sees the same text.
 */
static size_t utf8_len(const unsigned char *p, size_t *bad)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	*bad = 1;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;	/* a continuation byte, C0, C1 or F5..FF */
	/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF
	 * are excluded by the range of the second byte. */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++) {
		if (p[i] < lo || p[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

void jout_str(FILE *out, const char *s)
{
	const unsigned char *p;
	size_t n, bad;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (p = (const unsigned char *)s; *p; p += n) {
		n = 1;
		switch (*p) {
		case '"':  fputs("\\\"", out); continue;
		case '\\': fputs("\\\\", out); continue;
		case '\n': fputs("\\n", out); continue;
		case '\t': fputs("\\t", out); continue;
		case '\r': fputs("\\r", out); continue;
		}
		if (*p < 0x20) {
			fprintf(out, "\\u%04x", *p);
			continue;
		}
		n = utf8_len(p, &bad);
		if (n) {
			fwrite(p, 1, n, out);
		} else {
			/* A name from a binary or a perf map is a byte
			 * string; JSON text must be UTF-8. */
			fputs("\\ufffd", out);
			n = bad;
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
