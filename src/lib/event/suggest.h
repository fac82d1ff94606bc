/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* "did you mean ...?": the closest known name by edit distance. */
#ifndef PERFCTR_EVENT_SUGGEST_H
#define PERFCTR_EVENT_SUGGEST_H

#include <stddef.h>

struct pc_suggest {
	const char *want;	/* the unknown name */
	size_t want_len;
	char best[256];		/* "" until a candidate is close enough */
	size_t best_dist;
};

void pc_suggest_init(struct pc_suggest *s, const char *want, size_t len);

/* Offer a candidate; it replaces the best one if strictly closer. */
void pc_suggest_offer(struct pc_suggest *s, const char *candidate);

/* Offer @display, scored by its distance to @key (e.g. a tracepoint's
 * name alone, suggested with its subsystem). */
void pc_suggest_offer_as(struct pc_suggest *s, const char *key,
			 const char *display);

/* Levenshtein distance, case-sensitive, capped at 255. */
size_t pc_edit_distance(const char *a, size_t alen, const char *b, size_t blen);

#endif /* PERFCTR_EVENT_SUGGEST_H */
