/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex serve's configuration file: one "key value" a line, '#' starts a
 * comment, keys as the long options (perfex-serve(1)):
 *
 *   listen 127.0.0.1:9717
 *   event {task-clock,context-switches}
 *   cgroup system.slice/nginx.service
 *   cgroup-root kubepods.slice
 *   cpus 0-3
 *   label node=web1
 *   profile-max-seconds 60
 *   bpf-counters no
 *   cgroup-depth 3
 *   cgroup-include /kubepods.slice/pod*
 *   cgroup-exclude *.scope
 *   max-series 200000
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfex.h"
#include "serve.h"

static int line_error(const char *file, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int line_error(const char *file, size_t line, const char *fmt, ...)
{
	va_list ap;

	if (line)
		fprintf(stderr, "perfex: config '%s' line %zu: ", file, line);
	else
		fputs("perfex: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return PERFEX_EXIT_USAGE;
}

static int push(char ***list, size_t *nr, const char *value)
{
	char **n = realloc(*list, (*nr + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	*list = n;
	n[*nr] = strdup(value);
	if (!n[*nr])
		return -ENOMEM;
	(*nr)++;
	return 0;
}

/* Prometheus label names: [a-zA-Z_][a-zA-Z0-9_]*, "__" reserved. */
static bool label_name_ok(const char *name, size_t len)
{
	if (!len || isdigit((unsigned char)name[0]) ||
	    (len >= 2 && name[0] == '_' && name[1] == '_'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return false;
	return true;
}

static const char *const own_labels[] = { "cpu", "cgroup", "event", "mode",
					  "reason", "result", "version" };

static int add_label(struct serve_config *cfg, const char *value, size_t line)
{
	const char *eq = strchr(value, '=');
	const char *file = cfg->file ? cfg->file : "";
	struct serve_label *n;
	size_t len;

	if (!eq || !label_name_ok(value, (size_t)(eq - value)))
		return line_error(file, line, "label '%s' is not NAME=VALUE "
				  "with a Prometheus label name", value);
	len = (size_t)(eq - value);
	for (size_t i = 0; i < sizeof(own_labels) / sizeof(own_labels[0]); i++)
		if (strlen(own_labels[i]) == len &&
		    !strncmp(own_labels[i], value, len))
			return line_error(file, line, "label '%.*s' is one of "
					  "perfex serve's own", (int)len, value);
	for (size_t i = 0; i < cfg->nr_labels; i++)
		if (strlen(cfg->labels[i].name) == len &&
		    !strncmp(cfg->labels[i].name, value, len))
			return line_error(file, line, "label '%.*s' is given "
					  "twice", (int)len, value);
	n = realloc(cfg->labels, (cfg->nr_labels + 1) * sizeof(*n));
	if (!n)
		return PERFEX_EXIT_INTERNAL;
	cfg->labels = n;
	n += cfg->nr_labels;
	n->name = strndup(value, len);
	n->value = strdup(eq + 1);
	if (!n->name || !n->value) {
		free(n->name);
		free(n->value);
		return PERFEX_EXIT_INTERNAL;
	}
	cfg->nr_labels++;
	return -1;
}

int serve_config_add(struct serve_config *cfg, const char *key,
		     const char *value, size_t line)
{
	int err = 0;

	if (!strcmp(key, "label"))
		return add_label(cfg, value, line);
	if (!strcmp(key, "event")) {
		size_t *n = realloc(cfg->event_lines,
				    (cfg->nr_events + 1) * sizeof(*n));

		if (!n)
			return PERFEX_EXIT_INTERNAL;
		cfg->event_lines = n;
		n[cfg->nr_events] = line;
		err = push(&cfg->events, &cfg->nr_events, value);
	} else if (!strcmp(key, "cgroup")) {
		/* A comma list, as -G takes it. */
		char *copy = strdup(value), *save = NULL, *tok;

		if (!copy)
			return PERFEX_EXIT_INTERNAL;
		for (tok = strtok_r(copy, ",", &save); tok && !err;
		     tok = strtok_r(NULL, ",", &save))
			err = push(&cfg->cgroups, &cfg->nr_cgroups, tok);
		free(copy);
	} else if (!strcmp(key, "cgroup-root")) {
		err = push(&cfg->roots, &cfg->nr_roots, value);
	} else if (!strcmp(key, "cgroup-include")) {
		err = push(&cfg->includes, &cfg->nr_includes, value);
	} else if (!strcmp(key, "cgroup-exclude")) {
		err = push(&cfg->excludes, &cfg->nr_excludes, value);
	} else if (!strcmp(key, "cgroup-depth") || !strcmp(key, "max-series")) {
		return serve_config_set_number(cfg, key, value, line);
	} else {
		return line_error(cfg->file ? cfg->file : "", line,
				  "unknown key '%s'", key);
	}
	return err ? PERFEX_EXIT_INTERNAL : -1;
}

int serve_config_set_number(struct serve_config *cfg, const char *key,
			    const char *value, size_t line)
{
	bool depth = !strcmp(key, "cgroup-depth");
	unsigned long long v, max = depth ? 32 : 1ULL << 40;
	char *end;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (!*value || *end || errno || value[0] == '-' || v > max ||
	    (!depth && !v)) {
		const char *what = depth ? "a number of levels from 0 to 32" :
				   "a number of series, 1 or more";

		return line ? line_error(cfg->file ? cfg->file : "", line,
					 "%s '%s' is not %s", key, value, what) :
		       line_error("", 0, "option '--%s' expects %s (not '%s')",
				  key, what, value);
	}
	if (depth && !(line && cfg->depth_flag)) {
		cfg->has_depth = true;
		cfg->depth = (unsigned int)v;
		cfg->depth_flag = !line;
	} else if (!depth && !(line && cfg->max_series_flag)) {
		cfg->max_series = v;
		cfg->max_series_flag = !line;
	}
	return -1;
}

int serve_config_set_profile_max(struct serve_config *cfg, const char *value,
				 size_t line)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (!*value || *end || errno || value[0] == '-' || !v || v > 86400)
		return line ? line_error(cfg->file ? cfg->file : "", line,
					 "profile-max-seconds '%s' is not a "
					 "number of seconds from 1 to 86400",
					 value) :
		       line_error("", 0, "option '--profile-max-seconds' "
				  "expects a number of seconds from 1 to 86400 "
				  "(not '%s')", value);
	cfg->profile_max_seconds = (unsigned int)v;
	if (!line)
		cfg->profile_max_flag = true;
	return -1;
}

static int set_once(char **slot, bool from_flag, const char *value)
{
	if (from_flag)		/* the command line wins over the file */
		return -1;
	free(*slot);
	*slot = strdup(value);
	return *slot ? -1 : PERFEX_EXIT_INTERNAL;
}

int serve_config_read(struct serve_config *cfg, const char *path)
{
	bool listen_flag = cfg->listen != NULL, cpus_flag = cfg->cpus != NULL;
	char *buf = NULL;
	size_t cap = 0, line = 0;
	int ret = -1;
	FILE *f;

	if (!path)
		return -1;
	free(cfg->file);
	cfg->file = strdup(path);
	if (!cfg->file)
		return PERFEX_EXIT_INTERNAL;
	f = fopen(path, "re");
	if (!f) {
		perfex_error("cannot read config '%s': %s", path, strerror(errno));
		return PERFEX_EXIT_USAGE;
	}
	while (ret < 0 && getline(&buf, &cap, f) >= 0) {
		char *s = buf, *key, *value, *end;

		line++;
		/* '#' starts a comment at the start of a line or after a
		 * blank: an event may hold '#' nowhere, a label value may. */
		for (char *h = s; (h = strchr(h, '#')); h++)
			if (h == s || isspace((unsigned char)h[-1])) {
				*h = '\0';
				break;
			}
		while (isspace((unsigned char)*s))
			s++;
		end = s + strlen(s);
		while (end > s && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*s)
			continue;
		key = s;
		value = s + strcspn(s, " \t");
		if (*value) {
			*value++ = '\0';
			while (isspace((unsigned char)*value))
				value++;
		}
		if (!*value) {
			ret = line_error(path, line, "'%s' needs a value", key);
			break;
		}
		if (!strcmp(key, "listen"))
			ret = set_once(&cfg->listen, listen_flag, value);
		else if (!strcmp(key, "cpus"))
			ret = set_once(&cfg->cpus, cpus_flag, value);
		else if (!strcmp(key, "bpf-counters")) {
			if (strcmp(value, "yes") && strcmp(value, "no"))
				ret = line_error(path, line, "bpf-counters '%s' "
						 "is not yes or no", value);
			else if (!cfg->no_bpf_flag)
				cfg->no_bpf = !strcmp(value, "no");
		} else if (!strcmp(key, "profile-max-seconds"))
			ret = cfg->profile_max_flag ? -1 :
			      serve_config_set_profile_max(cfg, value, line);
		else
			ret = serve_config_add(cfg, key, value, line);
	}
	if (ret < 0 && ferror(f)) {
		perfex_error("cannot read config '%s': %s", path, strerror(errno));
		ret = PERFEX_EXIT_USAGE;
	}
	free(buf);
	fclose(f);
	return ret;
}

void serve_config_free(struct serve_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->listen);
	for (size_t i = 0; i < cfg->nr_events; i++)
		free(cfg->events[i]);
	free(cfg->events);
	free(cfg->event_lines);
	for (size_t i = 0; i < cfg->nr_cgroups; i++)
		free(cfg->cgroups[i]);
	free(cfg->cgroups);
	for (size_t i = 0; i < cfg->nr_roots; i++)
		free(cfg->roots[i]);
	free(cfg->roots);
	for (size_t i = 0; i < cfg->nr_includes; i++)
		free(cfg->includes[i]);
	free(cfg->includes);
	for (size_t i = 0; i < cfg->nr_excludes; i++)
		free(cfg->excludes[i]);
	free(cfg->excludes);
	free(cfg->cpus);
	for (size_t i = 0; i < cfg->nr_labels; i++) {
		free(cfg->labels[i].name);
		free(cfg->labels[i].value);
	}
	free(cfg->labels);
	free(cfg->file);
	memset(cfg, 0, sizeof(*cfg));
}
