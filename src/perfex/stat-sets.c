// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex stat with event sets: each -e is one set, rotated by
 * --switch-interval MS (of the command's run time) and/or
 * --switch-after N:EVENT (after N occurrences of EVENT, which each set
 * must count).  Prints per set its runs and active time, and per event
 * the estimate with its error and the share of the time it was counted
 * (docs/estimates.md); -j the same fields as JSON.
 *
 * Entered from cmd-stat.c when one of the two switch options is given.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfctr/perfctr.h>
#include <perfctr/set.h>

#include "json-out.h"
#include "perfex.h"
#include "stat.h"

#define MAX_SETS 64

enum {
	OPT_SWITCH_INTERVAL = 512,
	OPT_SWITCH_AFTER,
};

static const struct option sets_options[] = {
	{ "event",		required_argument, NULL, 'e' },
	{ "json",		no_argument,	   NULL, 'j' },
	{ "output",		required_argument, NULL, 'o' },
	{ "switch-interval",	required_argument, NULL, OPT_SWITCH_INTERVAL },
	{ "switch-after",	required_argument, NULL, OPT_SWITCH_AFTER },
	{ NULL, 0, NULL, 0 },
};

bool stat_sets_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--switch-interval", 17) ||
		    !strncmp(argv[i], "--switch-after", 14))
			return true;
	return false;
}

struct sets_opts {
	const char *specs[MAX_SETS];
	size_t nr_sets;
	unsigned long interval_ms;
	unsigned long after_n;
	const char *after_event;
	bool json;
	const char *output;
	char **command;
};

static int parse_ulong(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static int parse(int argc, char **argv, struct sets_opts *o)
{
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:e:jo:", sets_options, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o->nr_sets == MAX_SETS) {
				perfex_error("too many sets (at most %d)", MAX_SETS);
				return PERFEX_EXIT_USAGE;
			}
			o->specs[o->nr_sets++] = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_SWITCH_INTERVAL:
			if (parse_ulong(optarg, &o->interval_ms) || !o->interval_ms) {
				perfex_error("bad --switch-interval '%s'", optarg);
				perfex_hint("give a positive number of milliseconds");
				return PERFEX_EXIT_USAGE;
			}
			break;
		case OPT_SWITCH_AFTER: {
			char *colon = strchr(optarg, ':');

			if (!colon || colon == optarg || !colon[1]) {
				perfex_error("bad --switch-after '%s'", optarg);
				perfex_hint("write N:EVENT, e.g. 10000:syscalls:sys_enter_read");
				return PERFEX_EXIT_USAGE;
			}
			*colon = '\0';
			if (parse_ulong(optarg, &o->after_n) || !o->after_n) {
				perfex_error("bad count '%s' in --switch-after", optarg);
				return PERFEX_EXIT_USAGE;
			}
			o->after_event = colon + 1;
			break;
		}
		case ':':
			perfex_error("option '%s' needs a value", argv[optind - 1]);
			return PERFEX_EXIT_USAGE;
		default:
			perfex_error("option '%s' is not supported with event sets",
				     argv[optind - 1]);
			perfex_hint("with --switch-interval / --switch-after: -e, -j, -o");
			return PERFEX_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		perfex_error("no command to run");
		return PERFEX_EXIT_USAGE;
	}
	if (o->nr_sets < 2) {
		perfex_error("event sets need two -e or more (one per set)");
		return PERFEX_EXIT_USAGE;
	}
	o->command = &argv[optind];
	return -1;
}

static const char *status_name(int status)
{
	switch (status) {
	case PERFCTR_ESTIMATE_EXACT:		return "exact";
	case PERFCTR_ESTIMATE_SCALED:		return "scaled";
	case PERFCTR_ESTIMATE_NO_ERROR:		return "no-error";
	default:				return "not-counted";
	}
}

static void json_number(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.17g", v);
	else
		fputs("null", out);
}

static void print(FILE *out, struct perfctr_session *s, const struct sets_opts *o)
{
	size_t nr_events = perfctr_session__nr_events(s);

	if (o->json)
		fputs("{\"schema\":1,\"sets\":[", out);
	else
		fprintf(out, "\n Performance counter stats for '%s' in %zu sets:\n",
			o->command[0], perfctr_session__nr_sets(s));
	for (size_t i = 0; i < perfctr_session__nr_sets(s); i++) {
		struct perfctr_set_info info = { .sz = sizeof(info) };
		int id = perfctr_session__set_id(s, i);
		bool first = true;

		if (perfctr_session__set_info(s, (uint16_t)id, &info))
			continue;
		if (o->json)
			fprintf(out, "%s{\"id\":%d,\"runs\":%llu,\"active_ns\":%llu,"
				"\"overflows\":%llu,\"events\":[", i ? "," : "", id,
				(unsigned long long)info.runs,
				(unsigned long long)info.active_ns,
				(unsigned long long)info.overflows);
		else
			fprintf(out, "\n set %d: %llu runs, active %.3f msec\n", id,
				(unsigned long long)info.runs, info.active_ns / 1e6);
		for (size_t e = 0; e < nr_events; e++) {
			struct perfctr_estimate est = { .sz = sizeof(est) };
			const char *name = perfctr_session__event_name(s, e);

			if (perfctr_session__event_set(s, e) != id ||
			    perfctr_session__estimate(s, e, &est))
				continue;
			if (o->json) {
				fprintf(out, "%s{\"name\":", first ? "" : ",");
				jout_str(out, name);
				fputs(",\"value\":", out);
				json_number(out, est.value);
				fputs(",\"error\":", out);
				json_number(out, est.error);
				fprintf(out, ",\"counted\":%llu,\"time_counted_ns\":%llu,"
					"\"time_total_ns\":%llu,\"fraction\":",
					(unsigned long long)est.counted,
					(unsigned long long)est.time_counted,
					(unsigned long long)est.time_total);
				json_number(out, est.fraction);
				fprintf(out, ",\"slices\":%llu,\"status\":\"%s\"}",
					(unsigned long long)est.nr_slices,
					status_name(est.status));
			} else if (est.status == PERFCTR_ESTIMATE_NOT_COUNTED) {
				fprintf(out, "   %20s      %-40s\n", "<not counted>", name);
			} else if (est.status == PERFCTR_ESTIMATE_SCALED) {
				fprintf(out, "   %20.0f +- %-12.0f %-40s (%.2f%% counted, %llu raw)\n",
					est.value, est.error, name, 100 * est.fraction,
					(unsigned long long)est.counted);
			} else {
				fprintf(out, "   %20.0f %-15s %-40s (%.2f%% counted, %llu raw)\n",
					est.value,
					est.status == PERFCTR_ESTIMATE_EXACT ? "" : "+- ?",
					name, 100 * est.fraction,
					(unsigned long long)est.counted);
			}
			first = false;
		}
		if (o->json)
			fputs("]}", out);
	}
	if (o->json)
		fputs("]}\n", out);
	else
		fputs("\n Ratios are shown only between events of one set; events of"
		      " different sets\n were never counted together.\n\n", out);
}

int stat_sets_run(int argc, char **argv)
{
	struct sets_opts o = { 0 };
	struct perfctr_session *s = NULL;
	struct perfctr_target *t = NULL;
	struct perfctr_parse_error perr = { .sz = sizeof(perr) };
	int ret, err, status = 0, switchers = 0;
	FILE *out = stderr;

	ret = parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	s = perfctr_session__new(NULL);
	if (!s) {
		perfex_error("cannot create a session: %s", strerror(errno));
		return PERFEX_EXIT_INTERNAL;
	}
	for (size_t i = 0; i < o.nr_sets; i++) {
		PERFCTR_OPTS(perfctr_set_desc, desc, .id = (uint16_t)i);

		if (o.interval_ms) {
			desc.flags = PERFCTR_SET_SWITCH_TIMEOUT;
			desc.timeout_ns = (uint64_t)o.interval_ms * 1000000;
		}
		err = perfctr_session__create_set(s, &desc);
		if (!err)
			err = perfctr_session__add_events_to_set(s, (uint16_t)i,
								 o.specs[i], &perr);
		if (err < 0) {
			perfex_error("%s", err == perr.errnum && perr.message[0] ?
				     perr.message : strerror(-err));
			if (perr.hint[0])
				perfex_hint("%s", perr.hint);
			ret = PERFEX_EXIT_USAGE;
			goto out;
		}
	}
	if (o.after_event) {
		for (size_t e = 0; e < perfctr_session__nr_events(s); e++) {
			if (strcmp(perfctr_session__event_name(s, e), o.after_event))
				continue;
			err = perfctr_session__switch_after(s, e, o.after_n, 1);
			if (err) {
				perfex_error("cannot switch after '%s': %s", o.after_event,
					     strerror(-err));
				ret = PERFEX_EXIT_USAGE;
				goto out;
			}
			switchers++;
		}
		if (!switchers) {
			perfex_error("no set counts '%s' for --switch-after", o.after_event);
			ret = PERFEX_EXIT_USAGE;
			goto out;
		}
	}
	t = perfctr_target__new_command(o.command, NULL);
	if (!t) {
		perfex_error("cannot run '%s': %s", o.command[0], strerror(errno));
		ret = errno == ENOENT ? PERFEX_EXIT_NOCMD : PERFEX_EXIT_NOEXEC;
		goto out;
	}
	err = perfctr_session__attach(s, t);
	if (err) {
		perfex_error("cannot attach the counters: %s", strerror(-err));
		ret = PERFEX_EXIT_INTERNAL;
		goto out;
	}
	err = perfctr_target__start(t);
	if (!err)
		err = perfctr_session__start(s);
	if (err) {
		perfex_error("cannot start '%s': %s", o.command[0], strerror(-err));
		ret = PERFEX_EXIT_INTERNAL;
		goto out;
	}
	/* The overflow signals of the rotation interrupt the wait. */
	do
		err = perfctr_target__wait(t, &status);
	while (err == -EINTR);
	perfctr_session__stop(s);
	perfctr_session__read(s);
	perfctr_session__detach(s);
	if (o.output) {
		out = fopen(o.output, "we");
		if (!out) {
			perfex_error("cannot open '%s' for writing: %s", o.output,
				     strerror(errno));
			ret = PERFEX_EXIT_IO;
			goto out;
		}
	}
	print(out, s, &o);
	if (out != stderr)
		fclose(out);
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	perfctr_session__delete(s);
	perfctr_target__delete(t);
	return ret;
}
