/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfex top's table, printed (batch mode) or drawn on the terminal.
 *
 * The screen is drawn with a handful of ANSI (ECMA-48) sequences, not
 * curses: perfex is one static binary (Makefile), and the screen needs no
 * more than "home", "erase to the end of the line", the alternate screen
 * and a hidden cursor, which every terminal emulator in use (and tmux,
 * which the tests drive) understands.  Each refresh writes the whole
 * screen in one write(2), cut to the terminal's width and height.
 *
 * The keys are perf top's: d delay, e entries, E the next event, f count
 * filter, F percent limit, K and U hide kernel and user symbols, z
 * zeroing, q quit; s asks for the sort keys (perf's s annotates, which
 * perfex annotate does).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <perfctr/sampler.h>

#include "perfex.h"
#include "report.h"
#include "top.h"

#define KEY_HELP "d delay  e rows  E event  f min samples  F min %  " \
		 "s sort  K kernel  U user  z zero  q quit"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Key @k of row @e as shown, unpadded. */
static const char *cell(struct top *t, const struct perfctr_profile_entry *e,
			size_t k, char *buf, size_t size)
{
	const char *comm;
	pid_t id;

	switch (t->keys[k]) {
	case PERFCTR_SORT_DSO:
		return base_name(e->keys[k]);
	case PERFCTR_SORT_SYM:
		snprintf(buf, size, "[%c] %s", e->kernel ? 'k' : '.', e->keys[k]);
		return buf;
	case PERFCTR_SORT_PID:
	case PERFCTR_SORT_TID:
		id = t->keys[k] == PERFCTR_SORT_PID ? e->pid : e->tid;
		/* A process's name is its main thread's, else the name of
		 * the thread of the row's first sample. */
		comm = top_comm(t, id);
		comm = comm ? comm : top_comm(t, e->tid);
		snprintf(buf, size, "%7d:%s", (int)id, comm ? comm : "");
		return buf;
	default:
		return e->keys[k];
	}
}

/* Row @e passes the filters of the moment. */
static bool shown(const struct top *t, const struct perfctr_profile_entry *e,
		  uint64_t total)
{
	double pct = total ? 100.0 * (double)e->weight / (double)total : 0;

	if ((t->hide_kernel && e->kernel) || (t->hide_user && !e->kernel))
		return false;
	return e->samples >= t->count_filter && pct >= t->percent_limit;
}

static void header(struct top *t, FILE *out)
{
	const char *event = t->nr_events ?
		perfctr_sampler__name(t->sampler, t->shown) : NULL;
	const struct perf_event_attr *a = t->nr_events ?
		perfctr_sampler__attr(t->sampler, t->shown) : NULL;
	char target[64], rate[48];

	if (t->pid)
		snprintf(target, sizeof(target), "pid %d", (int)t->pid);
	else if (t->tid)
		snprintf(target, sizeof(target), "tid %d", (int)t->tid);
	else if (t->user)
		snprintf(target, sizeof(target), "user %s", t->user);
	else if (t->cpus)
		snprintf(target, sizeof(target), "CPUs %s", t->cpus);
	else
		snprintf(target, sizeof(target), "all CPUs");
	if (a && a->freq)
		snprintf(rate, sizeof(rate), "%" PRIu64 " Hz", (uint64_t)a->sample_freq);
	else if (a)
		snprintf(rate, sizeof(rate), "period %" PRIu64,
			 (uint64_t)a->sample_period);
	else
		rate[0] = '\0';
	fprintf(out, "perfex top: %8.0f samples/s  kernel: %5.1f%%  lost: %" PRIu64
		"  [%s, %s]  %s\n", t->rate, t->kernel_pct, t->lost,
		event ? event : "?", rate, target);
	/* What else did not make it into the table. */
	if (t->unknown || t->bad || t->filtered || t->zero || t->hide_kernel ||
	    t->hide_user)
		fprintf(out, "samples: %" PRIu64 " (%" PRIu64 " in no known map, %"
			PRIu64 " undecodable, %" PRIu64 " of other users)%s%s%s\n",
			t->samples, t->unknown, t->bad, t->filtered,
			t->zero ? "  zeroing" : "",
			t->hide_kernel ? "  kernel hidden" : "",
			t->hide_user ? "  user hidden" : "");
	else
		fprintf(out, "samples: %" PRIu64 "\n", t->samples);
	for (int i = 0; i < 79; i++)
		fputc('-', out);
	fputc('\n', out);
}

void top_render(struct top *t, FILE *out, size_t max_rows)
{
	struct perfctr_profile *prof = t->profiles[t->shown];
	size_t nr = perfctr_profile__nr_entries(prof), rows = 0;
	uint64_t total = perfctr_profile__weight(prof);
	size_t width[PERFCTR_SORT_NR] = { 0 };
	struct perfctr_profile_entry e = { .sz = sizeof(e) };
	char buf[512];

	header(t, out);
	/* The widths of the rows shown. */
	for (size_t k = 0; k < t->nr_keys; k++)
		width[k] = strlen(report_key_title(t->keys[k]));
	for (size_t i = 0; i < nr && (!max_rows || rows < max_rows); i++) {
		if (perfctr_profile__entry(prof, i, &e) || !shown(t, &e, total))
			continue;
		for (size_t k = 0; k + 1 < t->nr_keys; k++) {
			size_t w = strlen(cell(t, &e, k, buf, sizeof(buf)));

			width[k] = w > width[k] ? w : width[k];
		}
		rows++;
	}
	fprintf(out, "  Overhead%s", t->show_samples ? "   Samples" : "");
	for (size_t k = 0; k < t->nr_keys; k++)
		fprintf(out, "  %-*s", k + 1 < t->nr_keys ? (int)width[k] : 0,
			report_key_title(t->keys[k]));
	fputc('\n', out);
	rows = 0;
	for (size_t i = 0; i < nr && (!max_rows || rows < max_rows); i++) {
		if (perfctr_profile__entry(prof, i, &e) || !shown(t, &e, total))
			continue;
		fprintf(out, "  %7.2f%%", total ? 100.0 * (double)e.weight /
						  (double)total : 0.0);
		if (t->show_samples)
			fprintf(out, "  %8" PRIu64, e.samples);
		for (size_t k = 0; k < t->nr_keys; k++)
			fprintf(out, "  %-*s", k + 1 < t->nr_keys ? (int)width[k] : 0,
				cell(t, &e, k, buf, sizeof(buf)));
		fputc('\n', out);
		if (t->callgraph)
			report_print_callgraph(prof, i, out, t->percent_limit);
		rows++;
	}
	if (!rows)
		fprintf(out, "  (no samples%s)\n", nr ? " pass the filters" : " yet");
}

int top_print_batch(struct top *t)
{
	for (t->shown = 0; t->shown < t->nr_events; t->shown++) {
		top_render(t, stdout, t->entries);
		fputc('\n', stdout);
	}
	t->shown = 0;
	return fflush(stdout) || ferror(stdout) ? -EIO : 0;
}

/* ---- the terminal ---- */

static void put(const char *s)
{
	size_t len = strlen(s);

	while (len) {
		ssize_t n = write(STDOUT_FILENO, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

void top_screen_resize(struct top *t)
{
	struct winsize ws;

	t->rows = 24;
	t->cols = 80;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	}
}

int top_screen_enter(struct top *t)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &t->saved))
		return -1;
	raw = t->saved;
	/* Keys one by one, not echoed; Ctrl-C still a signal. */
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw))
		return -1;
	t->raw = true;
	top_screen_resize(t);
	/* The alternate screen, the cursor hidden. */
	put("\033[?1049h\033[?25l");
	return 0;
}

void top_screen_leave(struct top *t)
{
	put("\033[?25h\033[?1049l");
	tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
	t->raw = false;
}

/* @line (without its newline) cut to the screen's width, appended. */
static void add_line(char **scr, size_t *len, size_t *cap, const char *line,
		     size_t n, int cols, bool last)
{
	size_t want = *len + (size_t)cols + 8;

	if (want > *cap) {
		size_t c = want * 2;
		char *p = realloc(*scr, c);

		if (!p)
			return;
		*scr = p;
		*cap = c;
	}
	if (n > (size_t)cols)
		n = (size_t)cols;
	memcpy(*scr + *len, line, n);
	*len += n;
	/* Erase the rest of the old line. */
	memcpy(*scr + *len, "\033[K", 3);
	*len += 3;
	if (!last) {
		memcpy(*scr + *len, "\r\n", 2);
		*len += 2;
	}
	(*scr)[*len] = '\0';
}

void top_screen_draw(struct top *t)
{
	char *text = NULL, *scr = NULL, *p, bottom[256];
	size_t size = 0, len = 0, cap = 0;
	int row = 0, body = t->rows - 1;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return;
	/* Rows beyond the screen are not drawn; the header takes 4 lines. */
	top_render(t, out, t->entries ? t->entries :
		   (size_t)(body > 5 ? body - 4 : 1));
	if (fclose(out) || !text)
		return;
	scr = malloc(cap = 4096);
	if (!scr) {
		free(text);
		return;
	}
	memcpy(scr, "\033[H", 4);
	len = 3;
	for (p = text; *p && row < body; row++) {
		size_t n = strcspn(p, "\n");

		add_line(&scr, &len, &cap, p, n, t->cols, false);
		p += n + (p[n] == '\n');
	}
	for (; row < body; row++)
		add_line(&scr, &len, &cap, "", 0, t->cols, false);
	if (t->prompt_key)
		snprintf(bottom, sizeof(bottom), "%s%s", t->status, t->prompt);
	else
		snprintf(bottom, sizeof(bottom), "%s",
			 t->status[0] ? t->status : KEY_HELP);
	add_line(&scr, &len, &cap, bottom, strlen(bottom), t->cols, true);
	put(scr);
	free(scr);
	free(text);
}

/* ---- keys ---- */

static const char *prompt_text(char key)
{
	switch (key) {
	case 'd': return "refresh delay in seconds: ";
	case 'e': return "rows to show (0: as many as fit): ";
	case 'f': return "hide rows with fewer samples than: ";
	case 'F': return "hide rows under this percentage: ";
	case 's': return "sort keys (comm,dso,sym,pid,tid,cpu,srcline): ";
	default: return "";
	}
}

static bool parse_number(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* The prompt's answer applied; a message in the status line when it is
 * refused. */
static void answer(struct top *t, char key, const char *text)
{
	enum perfctr_sort_key keys[PERFCTR_SORT_NR];
	const char *bad = NULL;
	double v;
	int n;

	t->status[0] = '\0';
	if (!*text)
		return;
	switch (key) {
	case 'd':
		if (parse_number(text, 0.1, 3600, &v))
			t->delay_ms = (unsigned int)lround(v * 1000);
		else
			snprintf(t->status, sizeof(t->status),
				 "bad delay '%s': seconds from 0.1 to 3600  ", text);
		return;
	case 'e':
		if (parse_number(text, 0, 1000000, &v))
			t->entries = (size_t)v;
		else
			snprintf(t->status, sizeof(t->status),
				 "bad number of rows '%s'  ", text);
		return;
	case 'f':
		if (parse_number(text, 0, 1e18, &v))
			t->count_filter = (uint64_t)v;
		else
			snprintf(t->status, sizeof(t->status),
				 "bad number of samples '%s'  ", text);
		return;
	case 'F':
		if (parse_number(text, 0, 100, &v))
			t->percent_limit = v;
		else
			snprintf(t->status, sizeof(t->status),
				 "bad percentage '%s': 0 to 100  ", text);
		return;
	case 's':
		n = perfctr_sort_keys_parse(text, keys, PERFCTR_SORT_NR, &bad);
		if (n < 0) {
			snprintf(t->status, sizeof(t->status),
				 "bad sort key '%.*s'  ",
				 bad ? (int)strcspn(bad, ",") : 0, bad ? bad : "");
			return;
		}
		/* Rows of other keys are other rows: the counts start
		 * afresh. */
		memcpy(t->keys, keys, sizeof(keys[0]) * (size_t)n);
		t->nr_keys = (size_t)n;
		if (top_reset_profiles(t))
			snprintf(t->status, sizeof(t->status), "out of memory  ");
		return;
	default:
		return;
	}
}

/* One key typed into the open prompt. */
static void prompt_key(struct top *t, char c)
{
	if (c == '\r' || c == '\n') {
		char key = t->prompt_key;

		t->prompt[t->prompt_len] = '\0';
		t->prompt_key = 0;
		answer(t, key, t->prompt);
		return;
	}
	if (c == 27) {		/* Escape: no change */
		t->prompt_key = 0;
		t->status[0] = '\0';
		return;
	}
	if ((c == 127 || c == 8) && t->prompt_len) {
		t->prompt[--t->prompt_len] = '\0';
		return;
	}
	if (c >= ' ' && c < 127 && t->prompt_len + 1 < sizeof(t->prompt)) {
		t->prompt[t->prompt_len++] = c;
		t->prompt[t->prompt_len] = '\0';
	}
}

static void key(struct top *t, char c, bool *quit)
{
	if (t->prompt_key) {
		prompt_key(t, c);
		return;
	}
	t->status[0] = '\0';
	switch (c) {
	case 'q':
	case 'Q':
		*quit = true;
		return;
	case 'd':
	case 'e':
	case 'f':
	case 'F':
	case 's':
		t->prompt_key = c;
		t->prompt_len = 0;
		t->prompt[0] = '\0';
		snprintf(t->status, sizeof(t->status), "%s", prompt_text(c));
		return;
	case 'E':
		t->shown = (t->shown + 1) % (t->nr_events ? t->nr_events : 1);
		return;
	case 'K':
		t->hide_kernel = !t->hide_kernel;
		return;
	case 'U':
		t->hide_user = !t->hide_user;
		return;
	case 'z':
		t->zero = !t->zero;
		return;
	default:
		/* An unmapped key: what the keys are. */
		snprintf(t->status, sizeof(t->status), "keys: %s", KEY_HELP);
		return;
	}
}

bool top_screen_keys(struct top *t, bool *quit)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	bool any = false;
	char buf[64];
	ssize_t n;

	*quit = false;
	while (poll(&pfd, 1, 0) > 0 && !*quit) {
		if (!(pfd.revents & POLLIN)) {
			*quit = true;	/* POLLHUP: the terminal is gone */
			break;
		}
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n == 0)
			*quit = true;	/* the terminal is gone */
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && !*quit; i++)
			key(t, buf[i], quit);
		any = true;
	}
	return any;
}
