// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * -G NAME[,NAME...] after events: perf's rule (perf-stat(1), -G), the
 * names go to the events one by one in the order of the expanded events,
 * so a -e of several events takes several names.  One mechanism for
 * perfex stat and perfex record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-names.h"
#include "perfex.h"

/* How many events @text expands to; 1 when it does not parse (the
 * counting that follows reports why, in its own words). */
static size_t nr_events_of(const char *text,
			   const struct perfctr_parse_opts *popts)
{
	struct perfctr_parse_error err = { .sz = sizeof(err) };
	struct perfctr_evlist *list = perfctr_evlist__new();
	int n = list ? perfctr_evlist__parse(list, text, popts, &err) : -ENOMEM;

	perfctr_evlist__delete(list);
	return n > 0 ? (size_t)n : 1;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

void cgroup_plan_free(struct cgroup_plan *plan)
{
	for (size_t e = 0; e < plan->nr_events; e++)
		free(plan->names[e]);
	free(plan->names);
	free(plan->first);
	memset(plan, 0, sizeof(*plan));
}

int cgroup_plan_make(struct cgroup_plan *plan, const char *const *specs,
		     size_t nr_specs, const struct cgroup_arg *args,
		     size_t nr_args, const struct perfctr_parse_opts *popts)
{
	size_t given = 0;	/* names given so far, empty ones included */

	memset(plan, 0, sizeof(*plan));
	plan->nr_specs = nr_specs;
	plan->first = calloc(nr_specs + 1, sizeof(*plan->first));
	if (!plan->first)
		goto nomem;
	for (size_t i = 0; i < nr_specs; i++)
		plan->first[i + 1] = plan->first[i] + nr_events_of(specs[i], popts);
	plan->names = calloc(plan->first[nr_specs] ? plan->first[nr_specs] : 1,
			     sizeof(*plan->names));
	if (!plan->names)
		goto nomem;
	plan->nr_events = plan->first[nr_specs];
	for (size_t a = 0; a < nr_args; a++) {
		const char *name = args[a].names;
		size_t before = plan->first[args[a].nr_specs];

		do {
			size_t len = strcspn(name, ",");

			if (given >= before) {
				perfex_error("option '-G' names more cgroups "
					     "than there are events before it "
					     "('%s')", args[a].names);
				perfex_hint("each name goes to one event, in "
					    "the order of the -e's and of "
					    "their events");
				return PERFEX_EXIT_USAGE;
			}
			free(plan->names[given]);
			plan->names[given] = len ? strndup(name, len) : NULL;
			if (len && !plan->names[given])
				goto nomem;
			given++;
			name += len;
		} while (*name++);
		/* The first -G's one name: for every event before it. */
		if (given == 1) {
			for (size_t e = 1; e < before; e++) {
				free(plan->names[e]);
				plan->names[e] = plan->names[0] ?
						 strdup(plan->names[0]) : NULL;
				if (plan->names[0] && !plan->names[e])
					goto nomem;
			}
		}
	}
	return -1;
nomem:
	perfex_error("out of memory");
	return PERFEX_EXIT_INTERNAL;
}

bool cgroup_plan_splits(const struct cgroup_plan *plan, size_t spec)
{
	for (size_t e = plan->first[spec] + 1; e < plan->first[spec + 1]; e++)
		if (!same(plan->names[e], plan->names[plan->first[spec]]))
			return true;
	return false;
}

/* The length of the first piece of @s: up to a comma outside braces and
 * outside a PMU's slashes ("cpu/event=1,umask=2/"). */
static size_t piece_len(const char *s)
{
	size_t k, slashes = 0;
	int depth = 0;

	for (k = 0; s[k]; k++) {
		if (s[k] == '{')
			depth++;
		else if (s[k] == '}' && depth > 0)
			depth--;
		else if (s[k] == '/')
			slashes++;
		else if (s[k] == ',' && !depth && !(slashes % 2))
			break;
	}
	return k;
}

int cgroup_plan_split(const struct cgroup_plan *plan, size_t spec,
		      const char *text, const struct perfctr_parse_opts *popts,
		      char ***pieces, char ***cgroups, size_t *nr_pieces)
{
	size_t e = plan->first[spec], n = 0;
	char **texts = NULL, **names = NULL;
	const char *s = text;
	int ret = PERFEX_EXIT_INTERNAL;

	while (*s) {
		size_t len = piece_len(s), k, c;
		char *piece = strndup(s, len), **t, **m;

		if (!piece)
			goto nomem;
		c = nr_events_of(piece, popts);
		for (k = 1; k < c && e + k < plan->first[spec + 1]; k++)
			if (!same(plan->names[e + k], plan->names[e]))
				break;
		if (k < c && e + k < plan->first[spec + 1]) {
			if (*piece == '{') {
				perfex_error("option '-G' gives the events of "
					     "group '%s' different cgroups",
					     piece);
				perfex_hint("the kernel refuses a group member "
					    "in another cgroup than its "
					    "leader's: one name for the "
					    "group's events, or the events "
					    "out of the group");
			} else {
				perfex_error("option '-G' gives the events of "
					     "'%s' different cgroups", piece);
				perfex_hint("write its events out one by one "
					    "to give them cgroups of their "
					    "own");
			}
			free(piece);
			ret = PERFEX_EXIT_USAGE;
			goto fail;
		}
		t = realloc(texts, (n + 1) * sizeof(*t));
		if (t)
			texts = t;
		m = realloc(names, (n + 1) * sizeof(*m));
		if (m)
			names = m;
		if (!t || !m) {
			free(piece);
			goto nomem;
		}
		texts[n] = piece;
		names[n] = plan->names[e] ? strdup(plan->names[e]) : NULL;
		n++;
		if (plan->names[e] && !names[n - 1])
			goto nomem;
		e += c;
		s += len;
		if (*s)
			s++;
	}
	*pieces = texts;
	*cgroups = names;
	*nr_pieces = n;
	return -1;
nomem:
	perfex_error("out of memory");
fail:
	for (size_t i = 0; i < n; i++) {
		free(texts[i]);
		free(names[i]);
	}
	free(texts);
	free(names);
	return ret;
}
