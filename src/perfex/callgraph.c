/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex report -g: a row's call graph as perf draws it, an indented tree
 * whose branches carry their share of the event's total weight.  Only the
 * profile's node iterators are used; children come heaviest first.
 */
#include <errno.h>
#include <string.h>

#include "report.h"

#define NODE_INIT { .sz = sizeof(struct perfctr_profile_node) }

/*
 * The children of @node below @prefix (the first @plen bytes of a buffer
 * of @pcap).  A chain of only children that carry all of their parent is
 * drawn as a straight line of names.
 */
static int print_graph(struct perfctr_profile *prof,
		       struct perfctr_profile_node node, uint64_t total,
		       double min_percent, FILE *out, char *prefix,
		       size_t plen, size_t pcap)
{
	struct perfctr_profile_node kid = NODE_INIT;
	size_t i;
	int err;

	for (;;) {
		if (!node.nr_children)
			return 0;
		if (node.nr_children > 1)
			break;
		err = perfctr_profile__child(prof, &node, 0, &kid);
		if (err)
			return err;
		if (kid.total != node.total)
			break;
		fprintf(out, "%.*s%s\n", (int)plen, prefix, kid.name);
		node = kid;
	}
	for (i = 0; i < node.nr_children; i++) {
		double pct;
		bool last = i + 1 == node.nr_children;
		size_t add;

		err = perfctr_profile__child(prof, &node, i, &kid);
		if (err)
			return err;
		pct = total ? 100.0 * kid.total / total : 0.0;
		if (pct < min_percent)
			continue;
		fprintf(out, "%.*s|\n", (int)plen, prefix);
		fprintf(out, "%.*s%s--%.2f%%--%s\n", (int)plen, prefix,
			last ? " " : "|", pct, kid.name);
		/* Children of this branch line up under its name. */
		add = 4 + (size_t)snprintf(NULL, 0, "%.2f%%", pct) + 2;
		if (plen + add + 1 < pcap) {
			prefix[plen] = last ? ' ' : '|';
			memset(prefix + plen + 1, ' ', add - 1);
			err = print_graph(prof, kid, total, min_percent, out,
					  prefix, plen + add, pcap);
			if (err)
				return err;
		}
	}
	return 0;
}

int report_print_callgraph(struct perfctr_profile *prof, size_t idx,
			   FILE *out, double min_percent)
{
	struct perfctr_profile_node root = NODE_INIT, kid = NODE_INIT;
	uint64_t total = perfctr_profile__weight(prof);
	const int indent = 12;
	char prefix[1024];
	size_t i;
	int err;

	err = perfctr_profile__callgraph_root(prof, idx, &root);
	if (err)
		return err;
	if (!root.nr_children)
		return 0;
	memset(prefix, ' ', sizeof(prefix));
	fprintf(out, "%*s|\n", indent, "");
	/* The first frame hangs off "---"; the rest lines up after it. */
	for (i = 0; i < root.nr_children; i++) {
		double pct;

		err = perfctr_profile__child(prof, &root, i, &kid);
		if (err)
			return err;
		pct = total ? 100.0 * kid.total / total : 0;
		if (root.nr_children > 1)
			fprintf(out, "%*s---%.2f%%--%s\n", indent, "", pct,
				kid.name);
		else
			fprintf(out, "%*s---%s\n", indent, "", kid.name);
		err = print_graph(prof, kid, total, min_percent, out, prefix,
				  indent + 3, sizeof(prefix));
		if (err)
			return err;
	}
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}
