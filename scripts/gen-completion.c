// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * gen-completion: the data part of perfex's bash completion, printed from
 * perfex's own option table (src/perfex/options.c, which this program
 * links), so that the completion never lists an option perfex does not
 * take or misses one it does.  The Makefile puts it before
 * scripts/perfex-completion.bash, the part that completes with it.
 *
 * For each subcommand KEY (stat, record, ..., and regions for
 * `perfex --regions`):
 *	_perfex_opts_KEY="-e --event ..."	every spelling of its options
 *	_perfex_args_KEY=" -e=event --pid=pid --filter= "
 *		those whose argument is the next word, with what completes
 *		it: event (perfex list), metric (perfex list metrics), file,
 *		pid, or nothing
 * and _perfex_subcommands, _perfex_words (the first words that pick a
 * subcommand other than counting: "--regions=regions").
 */
#include <stdio.h>
#include <string.h>

#include "options.h"

/* What completes the argument of @o. */
static const char *arg_kind(const struct perfex_option *o)
{
	switch (o->id) {
	case OPT_EVENT:
		return "event";
	case OPT_METRICS:
		return "metric";
	case OPT_PID:
	case OPT_TID:
		return "pid";
	default:
		break;
	}
	if (o->arg && strstr(o->arg, "FILE"))
		return "file";
	return "";
}

/*
 * @cmd's key and the word that selects it, from its help hint: "perfex
 * record --help" is the subcommand record, "perfex --regions --help" the
 * first word --regions, "perfex --help" counting, which is also "stat".
 */
static int key_of(enum perfex_cmd cmd, char *key, size_t size, char *word,
		  size_t wsize)
{
	const char *hint = perfex_options_help_hint(cmd);
	const char *head = "perfex ", *tail = " --help";
	size_t len = strlen(hint), hl = strlen(head), tl = strlen(tail);

	if (len < hl + tl - 1 || strncmp(hint, head, hl - 1) ||
	    strcmp(hint + len - tl, tail)) {
		fprintf(stderr, "gen-completion: cannot read the help hint '%s' "
			"of subcommand %d\n", hint, (int)cmd);
		return -1;
	}
	if (len <= hl + tl - 1) {
		snprintf(key, size, "stat");
		snprintf(word, wsize, "stat");
		return 0;
	}
	snprintf(word, wsize, "%.*s", (int)(len - hl - tl), hint + hl);
	snprintf(key, size, "%s", word + strspn(word, "-"));
	return 0;
}

int main(void)
{
	const struct perfex_option *table;
	char key[64], word[64];
	size_t nr;

	table = perfex_options_table(&nr);
	printf("# Generated from perfex's option table (src/perfex/options.c) by\n"
	       "# scripts/gen-completion.c at build time: do not edit.\n");
	printf("_perfex_subcommands=\"help");
	for (int cmd = 0; cmd < PERFEX_CMD_NR; cmd++) {
		if (key_of(cmd, key, sizeof(key), word, sizeof(word)))
			return 1;
		if (word[0] != '-')
			printf(" %s", word);
	}
	printf("\"\n_perfex_words=\"");
	for (int cmd = 0; cmd < PERFEX_CMD_NR; cmd++) {
		key_of(cmd, key, sizeof(key), word, sizeof(word));
		if (word[0] == '-')
			printf(" %s=%s", word, key);
	}
	printf(" \"\n");
	for (int cmd = 0; cmd < PERFEX_CMD_NR; cmd++) {
		key_of(cmd, key, sizeof(key), word, sizeof(word));
		printf("_perfex_opts_%s=\"", key);
		for (size_t i = 0, n = 0; i < nr; i++) {
			const struct perfex_option *o = &table[i];

			if (!(o->cmds & (1u << cmd)))
				continue;
			if (o->short_name)
				printf("%s-%c", n++ ? " " : "", o->short_name);
			if (o->long_name)
				printf("%s--%s", n++ ? " " : "", o->long_name);
		}
		printf("\"\n_perfex_args_%s=\" ", key);
		for (size_t i = 0; i < nr; i++) {
			const struct perfex_option *o = &table[i];

			/* An optional argument is --name=ARG, never the
			 * next word. */
			if (!(o->cmds & (1u << cmd)) || !o->arg ||
			    (o->flags & PERFEX_OPT_ARG_OPTIONAL))
				continue;
			if (o->short_name)
				printf("-%c=%s ", o->short_name, arg_kind(o));
			if (o->long_name)
				printf("--%s=%s ", o->long_name, arg_kind(o));
		}
		printf("\"\n");
	}
	return ferror(stdout) ? 1 : 0;
}
