// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Edit-distance suggestions (see suggest.h). */
#include <string.h>

#include "common/internal.h"
#include "event/suggest.h"

#define MAX_LEN 255

size_t pc_edit_distance(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t row[MAX_LEN + 1], i, j;

	if (alen > MAX_LEN || blen > MAX_LEN)
		return MAX_LEN;
	for (j = 0; j <= blen; j++)
		row[j] = j;
	for (i = 1; i <= alen; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= blen; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[blen];
}

void pc_suggest_init(struct pc_suggest *s, const char *want, size_t len)
{
	s->want = want;
	s->want_len = len;
	s->best[0] = '\0';
	/* Close enough: a third of the name, at least one edit, at most 3. */
	s->best_dist = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
	s->best_dist++;
}

void pc_suggest_offer_as(struct pc_suggest *s, const char *key,
			 const char *display)
{
	size_t d = pc_edit_distance(s->want, s->want_len, key, strlen(key));

	/* The name itself is no suggestion. */
	if (d == 0 && strlen(display) == s->want_len &&
	    !memcmp(display, s->want, s->want_len))
		return;
	if (d < s->best_dist) {
		s->best_dist = d;
		pc_strlcpy(s->best, display, sizeof(s->best));
	}
}

void pc_suggest_offer(struct pc_suggest *s, const char *candidate)
{
	pc_suggest_offer_as(s, candidate, candidate);
}
