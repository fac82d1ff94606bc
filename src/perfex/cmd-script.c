// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfex script — every sample of a perf.data file, laid out as perf
 * script lays it out, so that the tools which parse perf script's text
 * (stackcollapse-perf.pl, speedscope, hotspot...) read ours too:
 *
 *	comm  tid [cpu] seconds: period event: ip symbol+off (dso)
 *
 * and, when the file has call chains, the sample line ends after the event
 * and each frame follows on its own line ("\taddress symbol+off (dso)"),
 * then an empty line.
 *
 * The fields are perf's, chosen per event type as perf chooses them: the
 * defaults of a type lose silently what its events did not record; a field
 * asked for with -F that an event did not record is an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <limits.h>

#include <perfctr/perfctr.h>
#include <perfctr/reader.h>

#include "options.h"
#include "perfex.h"
#include "script.h"

enum field {
	F_COMM, F_TID, F_PID, F_TIME, F_CPU, F_EVENT, F_IP, F_SYM, F_SYMOFF,
	F_DSO, F_PERIOD, F_TRACE, F_NR
};

#define BIT(f) (1u << (f))

static const char *const field_names[F_NR] = {
	[F_COMM] = "comm", [F_TID] = "tid", [F_PID] = "pid",
	[F_TIME] = "time", [F_CPU] = "cpu", [F_EVENT] = "event",
	[F_IP] = "ip", [F_SYM] = "sym", [F_SYMOFF] = "symoff",
	[F_DSO] = "dso", [F_PERIOD] = "period", [F_TRACE] = "trace",
};

/* What each field needs in the sample (0: nothing). */
static const uint64_t field_needs[F_NR] = {
	[F_COMM] = PERF_SAMPLE_TID, [F_TID] = PERF_SAMPLE_TID,
	[F_PID] = PERF_SAMPLE_TID, [F_TIME] = PERF_SAMPLE_TIME,
	[F_CPU] = PERF_SAMPLE_CPU, [F_IP] = PERF_SAMPLE_IP,
	[F_SYM] = PERF_SAMPLE_IP, [F_SYMOFF] = PERF_SAMPLE_IP,
	[F_DSO] = PERF_SAMPLE_IP, [F_PERIOD] = PERF_SAMPLE_PERIOD,
	[F_TRACE] = PERF_SAMPLE_RAW,
};

/* perf's field names that perfex script does not print (yet). */
static const char *const unsupported_fields[] = {
	"addr", "srcline", "iregs", "uregs", "brstack", "brstacksym", "flags",
	"bpf-output", "brstackinsn", "brstackoff", "callindent", "insn",
	"insnlen", "synth", "phys_addr", "metric", "misc", "srccode", "ipc",
	"data_page_size", "code_page_size", "ins_lat", "machine_pid", "vcpu",
	"cgroup", "retire_lat", "tod", "dsoff", "weight", "brcntr", "disasm",
};

/*
 * Output types, as perf's -F "type:" prefixes name them; the events of a
 * type share its fields.
 */
enum otype { T_HW, T_SW, T_TRACE, T_RAW, T_BREAKPOINT, T_OTHER, T_NR };

static const char *const otype_names[T_NR] = {
	[T_HW] = "hw", [T_SW] = "sw", [T_TRACE] = "trace", [T_RAW] = "raw",
	[T_BREAKPOINT] = "break", [T_OTHER] = "other",
};

#define DEFAULT_SAMPLE (BIT(F_COMM) | BIT(F_TID) | BIT(F_CPU) | BIT(F_TIME) | \
			BIT(F_EVENT) | BIT(F_IP) | BIT(F_SYM) | \
			BIT(F_SYMOFF) | BIT(F_DSO) | BIT(F_PERIOD))
#define DEFAULT_TRACE (BIT(F_COMM) | BIT(F_TID) | BIT(F_CPU) | BIT(F_TIME) | \
		       BIT(F_EVENT) | BIT(F_TRACE))
#define CALLCHAIN_FIELDS (BIT(F_IP) | BIT(F_SYM) | BIT(F_SYMOFF) | BIT(F_DSO))

/* Frames perf prints per call chain at most (its default --max-stack). */
#define MAX_STACK 127

struct output {
	unsigned int fields;
	unsigned int user_fields;	/* named by -F: must be recorded */
	bool user_set;		/* -F changed this type's fields */
};

/* The side-band records --show-*-events print. */
enum {
	SHOW_TASK = 1u << 0,	/* COMM, FORK, EXIT */
	SHOW_MMAP = 1u << 1,	/* MMAP, MMAP2 */
	SHOW_LOST = 1u << 2,	/* LOST */
};

struct script {
	struct output out[T_NR];
	unsigned int show;	/* SHOW_* */
	bool header;		/* --header */
	bool no_callchain;
	bool use_callchain;	/* some event has call chains; not -G */
	int name_width;
	struct perfctr_reader *rd;
	struct script_trace *trace;	/* payload printer, or NULL */
};

static enum otype otype_of(uint32_t type)
{
	switch (type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
		return type == PERF_TYPE_HARDWARE ? T_HW : T_OTHER;
	case PERF_TYPE_SOFTWARE:
		return T_SW;
	case PERF_TYPE_TRACEPOINT:
		return T_TRACE;
	case PERF_TYPE_RAW:
		return T_RAW;
	case PERF_TYPE_BREAKPOINT:
		return T_BREAKPOINT;
	default:
		return T_OTHER;
	}
}

static bool has_callchain(const struct perf_event_attr *attr)
{
	return attr->sample_type & PERF_SAMPLE_CALLCHAIN;
}

static bool printing(const struct script *sc, enum otype t, enum field f)
{
	return sc->out[t].fields & BIT(f);
}

/*
 * Output by hand rather than printf, into a buffer of our own: a DWARF
 * recording prints a million frame lines and more, and formatting their
 * fields through stdio cost as much as unwinding them.  The buffer goes
 * to stdout before anything else writes there (the trace payloads).
 */
static struct {
	size_t len;
	char buf[64 * 1024];
} out;

static void out_flush(void)
{
	fwrite_unlocked(out.buf, 1, out.len, stdout);
	out.len = 0;
}

static void out_bytes(const char *s, size_t len)
{
	if (len > sizeof(out.buf) - out.len) {
		out_flush();
		if (len > sizeof(out.buf)) {
			fwrite_unlocked(s, 1, len, stdout);
			return;
		}
	}
	memcpy(out.buf + out.len, s, len);
	out.len += len;
}

static void out_char(char c)
{
	if (out.len == sizeof(out.buf))
		out_flush();
	out.buf[out.len++] = c;
}

enum { PAD_LEFT = 1, PAD_ZERO = 2, HEX = 4 };

/* @v (negative when @neg) in @width columns, like printf's %d/%u/%x. */
static void put_num(uint64_t v, bool neg, int width, int flags)
{
	static const char digits[] = "0123456789abcdef";
	unsigned int base = flags & HEX ? 16 : 10;
	char buf[96], *end = buf + sizeof(buf), *p = end;
	int len, pad;

	do {
		*--p = digits[v % base];
		v /= base;
	} while (v);
	len = (int)(end - p) + neg;
	pad = width > len ? width - len : 0;
	if (pad > 64)
		pad = 64;
	if (flags & PAD_ZERO) {
		while (pad-- > 0)
			*--p = '0';
		pad = 0;
	}
	if (neg)
		*--p = '-';
	if (!(flags & PAD_LEFT))
		while (pad-- > 0)
			*--p = ' ';
	out_bytes(p, (size_t)(end - p));
	if (flags & PAD_LEFT)
		while (pad-- > 0)
			out_char(' ');
}

static void put_int(int v, int width, int flags)
{
	put_num(v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0, width, flags);
}

/* @s right-aligned in @width columns, like printf's %*s. */
static void put_str(const char *s, int width)
{
	size_t len = strlen(s);

	for (; width > (int)len; width--)
		out_char(' ');
	out_bytes(s, len);
}

/*
 * Print the symbol of @ip: "sym+0xoff" or "[unknown]", then " (dso)", as
 * the fields ask; an address in a DSO's map shows in the DSO's own terms
 * in call chains (@chain) as perf shows it (the offset in the mapped
 * file), the address as sampled on the sample line.
 */
static void print_loc(struct script *sc, enum otype t, pid_t pid,
		      uint64_t ip, bool kernel, bool chain)
{
	struct perfctr_symbol_loc loc = { .sz = sizeof(loc) };

	perfctr_symbols__resolve(perfctr_reader__symbols(sc->rd), pid, ip,
				 kernel, 0, &loc);
	if (printing(sc, t, F_IP)) {
		if (chain)
			out_char('\t');
		put_num(chain ? loc.file_addr : ip, false, 16, HEX);
	}
	if (printing(sc, t, F_SYM)) {
		out_char(' ');
		if (!loc.sym) {
			put_str("[unknown]", 0);
		} else {
			put_str(loc.sym, 0);
			if (printing(sc, t, F_SYMOFF)) {
				put_str("+0x", 0);
				put_num(loc.dso_addr - loc.sym_addr, false, 0,
					HEX);
			}
		}
	}
	if (printing(sc, t, F_DSO)) {
		put_str(" (", 0);
		put_str(loc.dso ? loc.dso : "[unknown]", 0);
		out_char(')');
	}
	if (chain)
		out_char('\n');
}

/* The reader's chain, whichever way it was recorded (the kernel's
 * callchain, or its kernel part and the user frames unwound from the
 * stack copy). */
static void print_callchain(struct script *sc, enum otype t,
			    const struct perfctr_reader_sample *ws)
{
	bool unwound = ws->sample->type & PERF_SAMPLE_STACK_USER;
	bool first_user = true;
	size_t i;

	for (i = 0; i < ws->nr_frames && i < MAX_STACK; i++) {
		uint64_t ip = ws->ips[i];

		/* Return addresses are shown and named as they are (not
		 * the call before them), as perf script does; but for the
		 * callers it unwinds, perf shows the call (one byte
		 * before), and so do we. */
		if (unwound && !ws->frames[i].kernel) {
			if (!first_user)
				ip--;
			first_user = false;
		}
		print_loc(sc, t, ws->pid, ip, ws->frames[i].kernel, true);
	}
}


/* What starts every line: comm, pid/tid, cpu and time, as the fields of
 * type @t ask; @chain: call chains follow (perf leaves the comm
 * unpadded then). */
static void print_start(struct script *sc, enum otype t, bool chain,
			const char *comm, int pid, int tid, uint32_t cpu,
			uint64_t time)
{
	char buf[32];

	if (printing(sc, t, F_COMM)) {
		if (comm)
			snprintf(buf, sizeof(buf), "%s", comm);
		else
			snprintf(buf, sizeof(buf), ":%d", tid);
		put_str(buf, chain ? 0 : 16);
		out_char(' ');
	}
	if (printing(sc, t, F_PID) && printing(sc, t, F_TID)) {
		put_int(pid, 5, 0);
		out_char('/');
		put_int(tid, 5, PAD_LEFT);
		out_char(' ');
	} else if (printing(sc, t, F_PID) || printing(sc, t, F_TID)) {
		put_int(printing(sc, t, F_PID) ? pid : tid, 5, 0);
		out_char(' ');
	}
	if (printing(sc, t, F_CPU)) {
		out_char('[');
		put_num(cpu, false, 3, PAD_ZERO);
		put_str("] ", 0);
	}
	if (printing(sc, t, F_TIME)) {
		put_num(time / 1000000000, false, 5, 0);
		out_char('.');
		put_num(time % 1000000000 / 1000, false, 6, PAD_ZERO);
		put_str(": ", 0);
	}
}

/* The comm thread @tid has now (NULL when the file never named it). */
static const char *comm_of(struct script *sc, int64_t tid)
{
	struct perfctr_reader_thread th = { .sz = sizeof(th) };

	if (tid < 0 || perfctr_reader__thread(sc->rd, (pid_t)tid, &th))
		return NULL;
	return th.comm;
}

/* The text of side-band record @rec after the line's start, as perf
 * prints it, in @line of @size bytes.  Return snprintf()'s length. */
static int side_text(const struct perfctr_record *rec, char *line, size_t size)
{
	char prot[5];
	int len = 0;

	switch (rec->type) {
	case PERF_RECORD_COMM:
		len = snprintf(line, size, "PERF_RECORD_COMM%s: %s:%d/%d\n",
			       rec->misc & PERF_RECORD_MISC_COMM_EXEC ? " exec" : "",
			       rec->comm.comm, (int)rec->comm.pid,
			       (int)rec->comm.tid);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		len = snprintf(line, size, "PERF_RECORD_%s(%d:%d):(%d:%d)\n",
			       rec->type == PERF_RECORD_FORK ? "FORK" : "EXIT",
			       (int)rec->task.pid, (int)rec->task.tid,
			       (int)rec->task.ppid, (int)rec->task.ptid);
		break;
	case PERF_RECORD_MMAP:
		len = snprintf(line, size, "PERF_RECORD_MMAP %d/%d: [%#"
			       PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %s\n",
			       (int)rec->mmap.pid, (int)rec->mmap.tid,
			       rec->mmap.addr, rec->mmap.len, rec->mmap.pgoff,
			       rec->misc & PERF_RECORD_MISC_MMAP_DATA ? 'r' : 'x',
			       rec->mmap.filename);
		break;
	case PERF_RECORD_MMAP2:
		snprintf(prot, sizeof(prot), "%c%c%c%c",
			 rec->mmap.prot & PROT_READ ? 'r' : '-',
			 rec->mmap.prot & PROT_WRITE ? 'w' : '-',
			 rec->mmap.prot & PROT_EXEC ? 'x' : '-',
			 rec->mmap.flags & MAP_SHARED ? 's' : 'p');
		len = snprintf(line, size, "PERF_RECORD_MMAP2 %d/%d: [%#"
			       PRIx64 "(%#" PRIx64 ") @ %#" PRIx64,
			       (int)rec->mmap.pid, (int)rec->mmap.tid,
			       rec->mmap.addr, rec->mmap.len, rec->mmap.pgoff);
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			len += snprintf(line + len, size - len, " <");
			for (unsigned int i = 0; i < rec->mmap.build_id_size; i++)
				len += snprintf(line + len, size - len,
						"%02x", rec->mmap.build_id[i]);
			len += snprintf(line + len, size - len, ">");
		} else {
			len += snprintf(line + len, size - len,
					" %02x:%02x %" PRIu64 " %" PRIu64,
					rec->mmap.maj, rec->mmap.min,
					rec->mmap.ino, rec->mmap.ino_generation);
		}
		len += snprintf(line + len, size - len, "]: %s %s\n",
				prot, rec->mmap.filename);
		break;
	case PERF_RECORD_LOST:
		len = snprintf(line, size, "PERF_RECORD_LOST lost %" PRIu64
			       "\n", rec->lost.lost);
		break;
	default:
		break;
	}
	return len;
}

/*
 * A side-band record as perf script --show-*-events prints it.  The line
 * starts as a sample's, with the thread the record is about (the child of
 * a FORK, the one exiting, the one renamed or mapping); pid, tid, cpu and
 * time come from the record's sample_id, or without one (sample_id_all
 * off) from the record itself, as perf takes them.
 */
static void print_side(struct script *sc, const struct perfctr_reader_sample *ws)
{
	const struct perfctr_record *rec = ws->record;
	const struct perfctr_sample_id *id = &rec->sample_id;
	const struct perf_event_attr *attr =
		perfctr_reader__event_attr(sc->rd, ws->event_idx);
	enum otype t = otype_of(attr ? attr->type : PERF_TYPE_SOFTWARE);
	bool chain = attr && printing(sc, t, F_IP) && sc->use_callchain &&
		     has_callchain(attr);
	int64_t pid = -1, tid = -1, who = -1;
	uint64_t time = 0;
	uint32_t cpu = 0;
	char line[8192];
	int len;

	switch (rec->type) {
	case PERF_RECORD_COMM:
		if (!(sc->show & SHOW_TASK))
			return;
		pid = rec->comm.pid;
		tid = who = rec->comm.tid;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (!(sc->show & SHOW_TASK))
			return;
		pid = rec->task.pid;
		tid = who = rec->task.tid;
		time = rec->task.time;
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (!(sc->show & SHOW_MMAP))
			return;
		pid = (int32_t)rec->mmap.pid;
		tid = who = (int32_t)rec->mmap.tid;
		break;
	case PERF_RECORD_LOST:
		if (!(sc->show & SHOW_LOST))
			return;
		break;
	default:
		return;
	}
	if (id->present & PERF_SAMPLE_TID) {
		pid = (int32_t)id->pid;
		tid = (int32_t)id->tid;
	}
	if (rec->type == PERF_RECORD_LOST)
		who = tid;
	if (id->present & PERF_SAMPLE_TIME)
		time = id->time;
	if (id->present & PERF_SAMPLE_CPU)
		cpu = id->cpu;
	print_start(sc, t, chain, comm_of(sc, who), (int)pid, (int)tid, cpu,
		    time);
	len = side_text(rec, line, sizeof(line));
	if (len > (int)sizeof(line) - 1)
		len = (int)sizeof(line) - 1;
	out_bytes(line, (size_t)len);
}

static void print_sample(struct script *sc, const struct perfctr_reader_sample *ws)
{
	const struct perf_event_attr *attr =
		perfctr_reader__event_attr(sc->rd, ws->event_idx);
	const struct perfctr_sample *s = ws->sample;
	enum otype t = otype_of(attr->type);
	bool chain = printing(sc, t, F_IP) && sc->use_callchain &&
		     has_callchain(attr);

	print_start(sc, t, chain, ws->comm, (int)s->pid, (int)s->tid, s->cpu,
		    s->time);
	if (printing(sc, t, F_PERIOD)) {
		put_num(s->period, false, 10, 0);
		out_char(' ');
	}
	if (printing(sc, t, F_EVENT)) {
		put_str(ws->event, sc->name_width);
		put_str(": ", 0);
	}
	if (printing(sc, t, F_TRACE)) {
		out_flush();
		script_trace_print(sc->trace, attr, s, stdout);
	}
	if (printing(sc, t, F_IP)) {
		if (chain && (s->type & PERF_SAMPLE_CALLCHAIN)) {
			out_char('\n');
			print_callchain(sc, t, ws);
		} else {
			out_char(' ');
			print_loc(sc, t, (pid_t)s->pid, s->ip, ws->kernel, false);
		}
	}
	out_char('\n');
}

static int field_index(const char *name)
{
	int i;

	for (i = 0; i < F_NR; i++)
		if (!strcmp(name, field_names[i]))
			return i;
	return -1;
}

static void list_fields(char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < F_NR && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					i ? ", " : "", field_names[i]);
}

/*
 * -F as perf takes it: "f1,f2" sets the fields of every type, "type:f1,f2"
 * those of one type, "+f" and "-f" add to or take from the defaults.
 */
static int parse_fields(struct perfex_parse *p, struct script *sc)
{
	char *copy = strdup(p->arg), *list = copy, *tok, *save = NULL;
	enum { DEFAULT, SET, ADD, REMOVE } mode = DEFAULT;
	unsigned int set = 0, add = 0, remove = 0;
	int type = -1, i, ret = -1;
	char *colon;

	if (!copy)
		return perfex_opt_error(p, "%s", strerror(ENOMEM));
	colon = strchr(list, ':');
	if (colon) {
		*colon = 0;
		for (i = 0; i < T_NR; i++)
			if (!strcmp(list, otype_names[i]))
				type = i;
		if (type < 0) {
			ret = perfex_opt_error(p, "has an unknown event type '%s' (hw, sw, trace, raw, break, other)",
					       list);
			goto out;
		}
		list = colon + 1;
	}
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int sign = 0, f;

		if (*tok == '+' || *tok == '-')
			sign = *tok++;
		if ((sign && mode == SET) || (!sign && mode != DEFAULT && mode != SET)) {
			ret = perfex_opt_error(p, "cannot mix +field or -field with a list of fields");
			goto out;
		}
		mode = sign == '+' ? ADD : sign == '-' ? REMOVE : SET;
		f = field_index(tok);
		if (f < 0) {
			char names[256];
			bool known = false;
			size_t k;

			for (k = 0; k < sizeof(unsupported_fields) /
					sizeof(unsupported_fields[0]); k++)
				known |= !strcmp(tok, unsupported_fields[k]);
			list_fields(names, sizeof(names));
			ret = perfex_opt_error(p, known ?
					       "names field '%s', which perfex script does not print" :
					       "names an unknown field '%s'", tok);
			perfex_hint("fields: %s", names);
			goto out;
		}
		if (sign == '+')
			add |= BIT(f);
		else if (sign == '-')
			remove |= BIT(f);
		else
			set |= BIT(f);
	}
	for (i = 0; i < T_NR; i++) {
		struct output *o = &sc->out[i];

		if (type >= 0 && i != type)
			continue;
		if (mode == SET)
			o->fields = set;
		else
			o->fields = (o->fields | add) & ~remove;
		o->user_fields = (o->user_fields | set | add) & ~remove;
		o->user_set = true;
	}
out:
	free(copy);
	return ret;
}

/*
 * Check the fields against what the events recorded: defaults lose the
 * fields a type's events lack, -F's are refused (perf does both).
 */
static int check_fields(struct script *sc)
{
	size_t i, n = perfctr_reader__nr_events(sc->rd);
	int f;

	for (i = 0; i < n; i++) {
		const struct perf_event_attr *attr =
			perfctr_reader__event_attr(sc->rd, i);
		struct output *o = &sc->out[otype_of(attr->type)];
		const char *name = perfctr_reader__event_name(sc->rd, i);
		int len = (int)strlen(name);

		if (len > sc->name_width)
			sc->name_width = len;
		if (has_callchain(attr) && !sc->no_callchain)
			sc->use_callchain = true;
		for (f = 0; f < F_NR; f++) {
			if (!(o->fields & BIT(f)) || !field_needs[f] ||
			    (attr->sample_type & field_needs[f]))
				continue;
			if (!(o->user_fields & BIT(f))) {
				o->fields &= ~BIT(f);
				continue;
			}
			perfex_error("the samples of event '%s' do not record field '%s'",
				     name, field_names[f]);
			perfex_hint("record them with what the field needs, or leave it out of -F");
			return PERFEX_EXIT_USAGE;
		}
		if (o->fields & BIT(F_TRACE) && attr->type != PERF_TYPE_TRACEPOINT)
			o->fields &= ~BIT(F_TRACE);
		if (o->user_fields & BIT(F_TRACE) && o->fields & BIT(F_TRACE) &&
		    !script_trace_available()) {
			perfex_error("cannot print field 'trace': perfex was "
				     "built without libtraceevent");
			perfex_hint("install libtraceevent-dev and rebuild "
				    "(scripts/install-deps)");
			return PERFEX_EXIT_USAGE;
		}
	}
	/* Tracepoints with call chains show them, as perf does. */
	if (sc->use_callchain && !sc->out[T_TRACE].user_set) {
		for (i = 0; i < n; i++) {
			const struct perf_event_attr *attr =
				perfctr_reader__event_attr(sc->rd, i);

			if (attr->type == PERF_TYPE_TRACEPOINT &&
			    has_callchain(attr) &&
			    (attr->sample_type & PERF_SAMPLE_IP)) {
				sc->out[T_TRACE].fields |= CALLCHAIN_FIELDS;
				break;
			}
		}
	}
	return -1;
}

/*
 * perf script's options that perfex script does not offer: named as such
 * rather than as unknown, so that a perf user knows it is not a typo.
 */
static const char *const perf_only_options[] = {
	"--header-only", "--show-switch-events",
	"--show-namespace-events",
	"--show-round-events", "--show-bpf-events", "--show-cgroup-events",
	"--show-text-poke-events", "--show-info", "--show-kernel-path",
	"--reltime", "--deltatime", "--ns", "--dump-raw-trace", "-D",
	"--list", "-l", "--comms",
	"--pid", "--tid", "--symbols", "-S", "--time", "--cpu", "-C",
	"--max-stack", "--inline", "--itrace", "--insn-trace",
	"--call-trace", "--call-ret-trace", "--graph-function",
	"--per-event-dump", "--full-source-path", "--demangle-kernel",
	"--stop-bt", "--xed", "--debug-mode", "--force", "--guestmount",
};

/* Return -1, or PERFEX_EXIT_USAGE after naming a perf-only option. */
static int refuse_perf_only(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		size_t len = strcspn(argv[i], "=");

		for (size_t k = 0; k < sizeof(perf_only_options) /
				       sizeof(perf_only_options[0]); k++) {
			const char *o = perf_only_options[k];

			if (strlen(o) != len || strncmp(argv[i], o, len))
				continue;
			perfex_error("option '%s' of perf script is not "
				     "supported by perfex script", o);
			perfex_hint("perfex-script(1) lists what perfex script "
				    "prints and what it does not");
			return PERFEX_EXIT_USAGE;
		}
	}
	return -1;
}

struct script_opts {
	struct script sc;
	const char *input;
	const char *script;	/* -s: perf's Python script protocol */
	const char *gen;	/* --gen-script LANG */
	struct perfctr_reader_opts *ropts;
};

static perfex_result script_option(struct perfex_parse *p, void *ctx)
{
	struct script_opts *so = ctx;

	switch (p->opt->id) {
	case OPT_INPUT:
		so->input = p->arg;
		break;
	case OPT_CALLCHAIN:
		so->sc.no_callchain = false;
		break;
	case OPT_NO_CALLCHAIN:
		so->sc.no_callchain = true;
		break;
	case OPT_FIELDS:
		return parse_fields(p, &so->sc);
	case OPT_SHOW_TASK_EVENTS:
		so->sc.show |= SHOW_TASK;
		break;
	case OPT_SHOW_MMAP_EVENTS:
		so->sc.show |= SHOW_MMAP;
		break;
	case OPT_SHOW_LOST_EVENTS:
		so->sc.show |= SHOW_LOST;
		break;
	case OPT_HEADER:
		so->sc.header = true;
		break;
	case OPT_KALLSYMS:
		so->ropts->kallsyms = p->arg;
		break;
	case OPT_NO_DEMANGLE:
		so->ropts->no_demangle = true;
		break;
	case OPT_SCRIPT:
		so->script = p->arg;
		break;
	case OPT_GEN_SCRIPT:
		if (strcmp(p->arg, "python") && strcmp(p->arg, "py"))
			return perfex_opt_error(p, "supports python only (not '%s')",
						p->arg);
		so->gen = p->arg;
		break;
	default:
		break;
	}
	return -1;
}

/*
 * perf's spelling "-g python" (perf script's -g is --gen-script, perfex
 * script's is --callchain): "-g" followed by a language name is taken as
 * --gen-script.  Return a copy of @argv to parse (NULL: out of memory).
 */
static char **gen_script_spelling(int argc, char **argv)
{
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));
	int n = 0;

	if (!copy)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i > 0 && !strcmp(argv[i], "-g") && i + 1 < argc &&
		    (!strcmp(argv[i + 1], "python") || !strcmp(argv[i + 1], "py"))) {
			copy[n++] = "--gen-script";
			continue;
		}
		copy[n++] = argv[i];
		if (!strcmp(argv[i], "--"))
			while (++i < argc)
				copy[n++] = argv[i];
	}
	copy[n] = NULL;
	return copy;
}

/* The folder of perfex's build tree that holds the perfctr package
 * (O/python beside O/perfex), or NULL when perfex is an installed one. */
static const char *build_tree_python(char *buf, size_t size)
{
	char exe[PATH_MAX];
	size_t len;

	if (perfex_self_dir(exe, sizeof(exe)))
		return NULL;
	if (snprintf(buf, size, "%s/python", exe) >= (int)size)
		return NULL;
	len = strlen(exe);
	if (snprintf(exe + len, sizeof(exe) - len,
		     "/python/perfctr/script/__init__.py") >= (int)(sizeof(exe) - len) ||
	    access(exe, R_OK))
		return NULL;
	return buf;
}

/*
 * -s and -g python: Python runs the script protocol (the perfctr package's
 * perfctr.script), over the same reader as perfex script.  The Python is
 * Debian's (or $PERFEX_PYTHON), with the tree's package first on its path
 * when perfex runs from its build tree.  Returns only when it cannot run.
 */
static int run_python(const struct script_opts *so, int nargs, char **args)
{
	const char *python = getenv("PERFEX_PYTHON");
	const char *old = getenv("PYTHONPATH");
	char dir[PATH_MAX], path[2 * PATH_MAX];
	char **argv = calloc((size_t)nargs + 10, sizeof(*argv));
	int n = 0;

	if (!argv) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	if (!python || !*python)
		python = "/usr/bin/python3";
	if (build_tree_python(dir, sizeof(dir))) {
		if (old && *old)
			snprintf(path, sizeof(path), "%s:%s", dir, old);
		else
			snprintf(path, sizeof(path), "%s", dir);
		setenv("PYTHONPATH", path, 1);
	}
	argv[n++] = (char *)python;
	argv[n++] = "-m";
	argv[n++] = "perfctr.script";
	argv[n++] = "-i";
	argv[n++] = (char *)so->input;
	if (so->sc.no_callchain)
		argv[n++] = "--no-callchain";
	if (so->gen) {
		argv[n++] = "--gen-script";
		argv[n++] = (char *)so->gen;
	} else {
		argv[n++] = "--";
		argv[n++] = (char *)so->script;
		for (int i = 0; i < nargs; i++)
			argv[n++] = args[i];
	}
	argv[n] = NULL;
	fflush(stdout);
	execvp(python, argv);
	perfex_error("cannot run '%s': %s", python, strerror(errno));
	perfex_hint("perfex script -s needs Python 3 with the perfctr package: "
		    "install python3, or name one in PERFEX_PYTHON");
	free(argv);
	return errno == ENOENT ? PERFEX_EXIT_NOCMD : PERFEX_EXIT_NOEXEC;
}

int cmd_script(int argc, char **argv)
{
	PERFCTR_OPTS(perfctr_reader_opts, ropts);
	struct perfctr_reader_sample rs = { .sz = sizeof(rs) };
	struct perfctr_reader_stats st = { .sz = sizeof(st) };
	char unwind[512];
	struct script_opts so = { .input = "perf.data", .ropts = &ropts };
	struct script *sc = &so.sc;
	struct perfex_parse p;
	char **args;
	int ret, r, i;

	for (i = 0; i < T_NR; i++)
		sc->out[i].fields = i == T_TRACE ? DEFAULT_TRACE : DEFAULT_SAMPLE;
	ret = refuse_perf_only(argc, argv);
	if (ret >= 0)
		return ret;
	args = gen_script_spelling(argc, argv);
	if (!args) {
		perfex_error("out of memory");
		return PERFEX_EXIT_INTERNAL;
	}
	/* With -s, the first argument ends the options: the rest are the
	 * script's (perf script's order). */
	ret = perfex_options_parse(&p, PERFEX_CMD_SCRIPT, argc, args, true,
				   script_option, &so);
	if (ret >= 0) {
		free(args);
		return ret;
	}
	if (so.script && so.gen) {
		free(args);
		perfex_error("options '-s' and '--gen-script' cannot be combined");
		return PERFEX_EXIT_USAGE;
	}
	if (so.script || so.gen) {
		if (so.gen && optind < argc) {
			perfex_error("unexpected argument '%s'", args[optind]);
			free(args);
			return PERFEX_EXIT_USAGE;
		}
		ret = perfex_dry_run ? 0 : run_python(&so, argc - optind,
						      args + optind);
		free(args);
		return ret;
	}
	free(args);
	if (optind < argc) {
		perfex_error("unexpected argument '%s'", argv[optind]);
		perfex_hint("perfex script --help lists the options");
		return PERFEX_EXIT_USAGE;
	}
	if (perfex_dry_run)
		return 0;
	/* The reader's frames are the chains printed (unwound too). */
	ropts.callchain = !sc->no_callchain;
	ropts.side_band = sc->show != 0;
	sc->rd = perfex_reader_open(so.input, &ropts, &ret);
	if (!sc->rd)
		return ret;
	ret = check_fields(sc);
	if (ret >= 0) {
		perfctr_reader__close(sc->rd);
		return ret;
	}
	sc->trace = script_trace_new(sc->rd);
	ret = 0;
	if (sc->header)
		script_print_header(sc->rd, so.input, stdout);
	while ((r = perfctr_reader__next(sc->rd, &rs)) > 0) {
		if (rs.record)
			print_side(sc, &rs);
		else
			print_sample(sc, &rs);
	}
	out_flush();
	if (r < 0)
		ret = perfex_reader_error(so.input, r);
	perfctr_reader__stats(sc->rd, SIZE_MAX, &st);
	if (!ret && st.lost + st.lost_samples)
		fprintf(stderr, "perfex: %" PRIu64 " samples were lost while recording\n",
			st.lost + st.lost_samples);
	/* Only when chains were cut: the output does not say so itself. */
	if (!ret && perfex_unwind_summary(&st, unwind, sizeof(unwind)) &&
	    strncmp(unwind, "0 ", 2))
		fprintf(stderr, "perfex: note: DWARF call chains: %s\n", unwind);
	if (fflush(stdout) && !ret) {
		perfex_error("cannot write: %s", strerror(errno));
		ret = PERFEX_EXIT_IO;
	}
	script_trace_free(sc->trace);
	perfctr_reader__close(sc->rd);
	return ret;
}
