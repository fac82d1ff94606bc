/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The metric expression language (see expr.h): a lexer that follows the
 * tables' own rules for where a number ends and a name begins, a
 * precedence-climbing parser into a tree, and a tree-walking evaluator.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "metric/expr.h"

enum tok {
	T_END, T_NUM, T_ID, T_LIT, T_IF, T_ELSE, T_MIN, T_MAX, T_DRATIO,
	T_SOURCE_COUNT, T_HAS_EVENT, T_CPUID, T_OP, T_LPAREN, T_RPAREN,
	T_COMMA,
};

enum node_kind {
	N_NUM, N_REF, N_NEG, N_BIN, N_IF, N_MIN, N_MAX, N_DRATIO,
};

struct node {
	enum node_kind kind;
	int pos;
	char op;		/* N_BIN */
	enum pc_mx_ref ref;	/* N_REF */
	double num;		/* N_NUM */
	char *id;		/* N_REF */
	struct node *a, *b, *c;
};

struct pc_mx {
	struct node *root;
	char **ids;
	int *id_pos;
	size_t nr_ids;
};

struct parser {
	const char *text;
	size_t at;		/* lexer position */
	int runtime;
	/* the current token */
	enum tok tok;
	int tok_pos;
	size_t tok_len;
	char op;
	double num;
	char *word;		/* T_ID / T_LIT text, normalised, owned */
	struct pc_mx *mx;
	struct pc_mx_error *err;
	bool failed;
	bool nomem;
};

static void fail(struct parser *p, int pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct parser *p, int pos, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	if (!p->err)
		return;
	p->err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
}

static bool sym_char(char c)
{
	return isalnum((unsigned char)c) || (c && strchr("_.:@?", c));
}

/* Length of the longest number at @s: ([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)? */
static size_t number_len(const char *s)
{
	size_t n = 0, digits = 0;

	while (isdigit((unsigned char)s[n]))
		n++, digits++;
	if (s[n] == '.') {
		size_t m = n + 1;

		while (isdigit((unsigned char)s[m]))
			m++, digits++;
		if (digits)
			n = m;
	}
	if (!digits)
		return 0;
	if (s[n] == 'e') {
		size_t m = n + 1;

		if (s[m] == '-')
			m++;
		if (isdigit((unsigned char)s[m])) {
			while (isdigit((unsigned char)s[m]))
				m++;
			n = m;
		}
	}
	return n;
}

/* Length of the longest name at @s: letters, digits, _ . : @ ? and the
 * escapes \- \, \= . */
static size_t symbol_len(const char *s)
{
	size_t n = 0;

	for (;;) {
		if (sym_char(s[n]))
			n++;
		else if (s[n] == '\\' && s[n + 1] && strchr("-,=", s[n + 1]))
			n += 2;
		else
			return n;
	}
}

/* The name as the tables mean it: escapes dropped, '?' the runtime. */
static char *normalise(struct parser *p, const char *s, size_t len)
{
	size_t i, marks = 0;
	char *out, *d;

	/* Room for what it holds (a '?' becomes up to 11 characters): the
	 * names stay in the tree, and every count parses the generic
	 * table's expressions. */
	for (i = 0; i < len; i++)
		marks += s[i] == '?';
	out = d = malloc(len + marks * 11 + 1);
	if (!out) {
		p->nomem = true;
		fail(p, -1, "out of memory");
		return NULL;
	}
	for (i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len)
			*d++ = s[++i];
		else if (s[i] == '?')
			d += snprintf(d, 12, "%d", p->runtime);
		else
			*d++ = s[i];
	}
	*d = '\0';
	return out;
}

static const struct {
	const char *word;
	enum tok tok;
} keywords[] = {
	{ "if", T_IF }, { "else", T_ELSE }, { "min", T_MIN }, { "max", T_MAX },
	{ "d_ratio", T_DRATIO }, { "source_count", T_SOURCE_COUNT },
	{ "has_event", T_HAS_EVENT }, { "strcmp_cpuid_str", T_CPUID },
};

static void next(struct parser *p)
{
	const char *s = p->text;
	size_t num, sym, i;

	free(p->word);
	p->word = NULL;
	while (isspace((unsigned char)s[p->at]))
		p->at++;
	p->tok_pos = (int)p->at;
	s += p->at;
	if (!*s) {
		p->tok = T_END;
		p->tok_len = 0;
		return;
	}
	if (*s == '#') {
		size_t n = 1;

		while (isalnum((unsigned char)s[n]) ||
		       (s[n] && strchr("_.-", s[n])))
			n++;
		if (n == 1 || !s[n - 1]) {
			fail(p, p->tok_pos, "'#' without a literal name");
			p->tok = T_END;
			return;
		}
		p->tok = T_LIT;
		p->tok_len = n;
		p->word = normalise(p, s + 1, n - 1);
		p->at += n;
		return;
	}
	num = number_len(s);
	sym = symbol_len(s);
	if (num && num >= sym) {
		p->tok = T_NUM;
		p->tok_len = num;
		p->num = strtod(s, NULL);
		p->at += num;
		return;
	}
	if (sym) {
		p->tok_len = sym;
		p->at += sym;
		if (sym == 3 && !strncmp(s, "NaN", 3)) {
			p->tok = T_NUM;
			p->num = NAN;
			return;
		}
		for (i = 0; i < ARRAY_SIZE(keywords); i++)
			if (strlen(keywords[i].word) == sym &&
			    !strncmp(s, keywords[i].word, sym)) {
				p->tok = keywords[i].tok;
				return;
			}
		p->tok = T_ID;
		p->word = normalise(p, s, sym);
		return;
	}
	p->tok_len = 1;
	p->at++;
	switch (*s) {
	case '(': p->tok = T_LPAREN; return;
	case ')': p->tok = T_RPAREN; return;
	case ',': p->tok = T_COMMA; return;
	case '|': case '^': case '&': case '<': case '>':
	case '+': case '-': case '*': case '/': case '%':
		p->tok = T_OP;
		p->op = *s;
		return;
	}
	fail(p, p->tok_pos, "unexpected character '%c'", *s);
	p->tok = T_END;
}

static const char *tok_text(struct parser *p, char *buf, size_t size)
{
	if (p->tok == T_END)
		return "the end";
	snprintf(buf, size, "'%.*s'", (int)(p->tok_len > 40 ? 40 : p->tok_len),
		 p->text + p->tok_pos);
	return buf;
}

static struct node *new_node(struct parser *p, enum node_kind kind, int pos)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n) {
		p->nomem = true;
		fail(p, -1, "out of memory");
		return NULL;
	}
	n->kind = kind;
	n->pos = pos;
	return n;
}

static void free_node(struct node *n)
{
	if (!n)
		return;
	free_node(n->a);
	free_node(n->b);
	free_node(n->c);
	free(n->id);
	free(n);
}

static bool expect(struct parser *p, enum tok tok, const char *what)
{
	char buf[64];

	if (p->failed)
		return false;
	if (p->tok != tok) {
		fail(p, p->tok_pos, "expected %s, found %s", what,
		     tok_text(p, buf, sizeof(buf)));
		return false;
	}
	next(p);
	return !p->failed;
}

static void note_id(struct parser *p, const char *id, int pos)
{
	struct pc_mx *mx = p->mx;
	char **ids;
	int *id_pos;
	size_t i;

	for (i = 0; i < mx->nr_ids; i++)
		if (!strcmp(mx->ids[i], id))
			return;
	ids = realloc(mx->ids, (mx->nr_ids + 1) * sizeof(*ids));
	if (ids)
		mx->ids = ids;
	id_pos = realloc(mx->id_pos, (mx->nr_ids + 1) * sizeof(*id_pos));
	if (id_pos)
		mx->id_pos = id_pos;
	if (!ids || !id_pos || !(ids[mx->nr_ids] = strdup(id))) {
		p->nomem = true;
		fail(p, -1, "out of memory");
		return;
	}
	id_pos[mx->nr_ids++] = pos;
}

static struct node *parse_if(struct parser *p);
static struct node *parse_binary(struct parser *p, int min_prec);

/* A function's single identifier argument: source_count(ID) etc. */
static struct node *parse_id_call(struct parser *p, enum pc_mx_ref ref,
				  const char *fn)
{
	struct node *n = new_node(p, N_REF, p->tok_pos);
	char what[64];

	if (!n)
		return NULL;
	n->ref = ref;
	next(p);
	if (!expect(p, T_LPAREN, "'('"))
		goto err;
	if (p->tok != T_ID) {
		snprintf(what, sizeof(what), "an event name in %s()", fn);
		expect(p, T_ID, what);
		goto err;
	}
	n->pos = p->tok_pos;
	n->id = p->word;
	p->word = NULL;
	if (ref == PC_MX_SOURCE_COUNT)
		note_id(p, n->id, n->pos);
	next(p);
	if (!expect(p, T_RPAREN, "')'"))
		goto err;
	return n;
err:
	free_node(n);
	return NULL;
}

/* min(a, b), max(a, b), d_ratio(a, b) */
static struct node *parse_call2(struct parser *p, enum node_kind kind,
				const char *fn)
{
	struct node *n = new_node(p, kind, p->tok_pos);
	char what[64];

	if (!n)
		return NULL;
	next(p);
	snprintf(what, sizeof(what), "'(' after %s", fn);
	if (!expect(p, T_LPAREN, what))
		goto err;
	n->a = parse_if(p);
	snprintf(what, sizeof(what), "',' between the arguments of %s()", fn);
	if (!n->a || !expect(p, T_COMMA, what))
		goto err;
	n->b = parse_if(p);
	snprintf(what, sizeof(what), "')' after the arguments of %s()", fn);
	if (!n->b || !expect(p, T_RPAREN, what))
		goto err;
	return n;
err:
	free_node(n);
	return NULL;
}

static struct node *parse_primary(struct parser *p)
{
	struct node *n;
	char buf[64];
	int pos = p->tok_pos;

	if (p->failed)
		return NULL;
	switch (p->tok) {
	case T_NUM:
		if (!(n = new_node(p, N_NUM, pos)))
			return NULL;
		n->num = p->num;
		next(p);
		return n;
	case T_ID:
	case T_LIT:
		if (!(n = new_node(p, N_REF, pos)))
			return NULL;
		n->ref = p->tok == T_ID ? PC_MX_VALUE : PC_MX_LITERAL;
		n->id = p->word;
		p->word = NULL;
		if (n->ref == PC_MX_VALUE)
			note_id(p, n->id, pos);
		next(p);
		return n;
	case T_SOURCE_COUNT:
		return parse_id_call(p, PC_MX_SOURCE_COUNT, "source_count");
	case T_HAS_EVENT:
		return parse_id_call(p, PC_MX_HAS_EVENT, "has_event");
	case T_CPUID:
		return parse_id_call(p, PC_MX_CPUID, "strcmp_cpuid_str");
	case T_MIN:
		return parse_call2(p, N_MIN, "min");
	case T_MAX:
		return parse_call2(p, N_MAX, "max");
	case T_DRATIO:
		return parse_call2(p, N_DRATIO, "d_ratio");
	case T_LPAREN:
		next(p);
		n = parse_if(p);
		if (n && !expect(p, T_RPAREN, "')'")) {
			free_node(n);
			return NULL;
		}
		return n;
	case T_OP:
		if (p->op == '-') {
			if (!(n = new_node(p, N_NEG, pos)))
				return NULL;
			next(p);
			n->a = parse_binary(p, 7);
			if (!n->a) {
				free_node(n);
				return NULL;
			}
			return n;
		}
		break;
	default:
		break;
	}
	fail(p, pos, "expected a value, found %s", tok_text(p, buf, sizeof(buf)));
	return NULL;
}

static int precedence(char op)
{
	switch (op) {
	case '|': return 1;
	case '^': return 2;
	case '&': return 3;
	case '<': case '>': return 4;
	case '+': case '-': return 5;
	case '*': case '/': case '%': return 6;
	}
	return 0;
}

/* Left-associative binary operators binding at least @min_prec. */
static struct node *parse_binary(struct parser *p, int min_prec)
{
	struct node *lhs = parse_primary(p);

	while (lhs && !p->failed && p->tok == T_OP &&
	       precedence(p->op) >= min_prec) {
		struct node *n = new_node(p, N_BIN, p->tok_pos);

		if (!n)
			break;
		n->op = p->op;
		n->a = lhs;
		lhs = n;
		next(p);
		n->b = parse_binary(p, precedence(n->op) + 1);
		if (!n->b)
			break;
	}
	if (p->failed) {
		free_node(lhs);
		return NULL;
	}
	return lhs;
}

/* "A if C else B", right-nested: A if C else (B if D else E). */
static struct node *parse_if(struct parser *p)
{
	struct node *lhs = parse_binary(p, 1), *n;

	if (!lhs || p->tok != T_IF)
		return lhs;
	if (!(n = new_node(p, N_IF, p->tok_pos))) {
		free_node(lhs);
		return NULL;
	}
	n->a = lhs;
	next(p);
	n->c = parse_binary(p, 1);
	if (!n->c || !expect(p, T_ELSE, "'else' after the condition of 'if'") ||
	    !(n->b = parse_if(p))) {
		free_node(n);
		return NULL;
	}
	return n;
}

struct pc_mx *pc_mx_parse(const char *text, int runtime,
			  struct pc_mx_error *err)
{
	struct parser p = { .text = text, .runtime = runtime, .err = err };
	char buf[64];

	if (err) {
		err->pos = -1;
		err->msg[0] = '\0';
	}
	if (!text) {
		errno = EINVAL;
		return NULL;
	}
	p.mx = calloc(1, sizeof(*p.mx));
	if (!p.mx) {
		errno = ENOMEM;
		return NULL;
	}
	next(&p);
	if (p.tok == T_END && !p.failed)
		fail(&p, p.tok_pos, "empty expression");
	else
		p.mx->root = parse_if(&p);
	if (!p.failed && p.tok != T_END)
		fail(&p, p.tok_pos, "unexpected %s after the expression",
		     tok_text(&p, buf, sizeof(buf)));
	free(p.word);
	if (p.failed) {
		pc_mx_free(p.mx);
		errno = p.nomem ? ENOMEM : EINVAL;
		return NULL;
	}
	return p.mx;
}

void pc_mx_free(struct pc_mx *mx)
{
	size_t i;

	if (!mx)
		return;
	free_node(mx->root);
	for (i = 0; i < mx->nr_ids; i++)
		free(mx->ids[i]);
	free(mx->ids);
	free(mx->id_pos);
	free(mx);
}

size_t pc_mx_nr_ids(const struct pc_mx *mx)
{
	return mx ? mx->nr_ids : 0;
}

const char *pc_mx_id(const struct pc_mx *mx, size_t i)
{
	return mx && i < mx->nr_ids ? mx->ids[i] : NULL;
}

int pc_mx_id_pos(const struct pc_mx *mx, size_t i)
{
	return mx && i < mx->nr_ids ? mx->id_pos[i] : -1;
}

int pc_mx_first_id(const char *text, int runtime, char *buf, size_t size)
{
	struct parser p = { .text = text, .runtime = runtime };
	bool in_call = false;	/* has_event(), strcmp_cpuid_str(): not noted */
	int ret = -ENOENT;

	for (next(&p); p.tok != T_END && !p.failed; next(&p)) {
		if (p.tok == T_HAS_EVENT || p.tok == T_CPUID) {
			in_call = true;
		} else if (p.tok == T_ID && in_call) {
			in_call = false;
		} else if (p.tok == T_ID) {
			ret = p.word ? (int)pc_strlcpy(buf, p.word, size) : -ENOMEM;
			if (ret >= (int)size)
				ret = -ENAMETOOLONG;
			break;
		}
	}
	free(p.word);
	return ret < 0 ? ret : 0;
}

struct evaluator {
	pc_mx_lookup_fn lookup;
	void *ctx;
	int err;
};

static bool truth(double v)
{
	return v != 0.0 && !isnan(v);
}

static double eval(struct evaluator *ev, const struct node *n)
{
	double a, b;

	if (ev->err)
		return NAN;
	switch (n->kind) {
	case N_NUM:
		return n->num;
	case N_REF: {
		int err = ev->lookup(ev->ctx, n->ref, n->id, &a);

		if (err < 0) {
			ev->err = err;
			return NAN;
		}
		return a;
	}
	case N_NEG:
		return -eval(ev, n->a);
	case N_IF:
		return truth(eval(ev, n->c)) ? eval(ev, n->a) : eval(ev, n->b);
	case N_MIN:
		a = eval(ev, n->a);
		b = eval(ev, n->b);
		return a < b ? a : b;
	case N_MAX:
		a = eval(ev, n->a);
		b = eval(ev, n->b);
		return a > b ? a : b;
	case N_DRATIO:
		a = eval(ev, n->a);
		b = eval(ev, n->b);
		return b == 0.0 ? 0.0 : a / b;
	case N_BIN:
		break;
	}
	a = eval(ev, n->a);
	b = eval(ev, n->b);
	switch (n->op) {
	case '|': return truth(a) || truth(b);
	case '&': return truth(a) && truth(b);
	case '^': return truth(a) != truth(b);
	case '<': return a < b;
	case '>': return a > b;
	case '+': return a + b;
	case '-': return a - b;
	case '*': return a * b;
	case '/': return b == 0.0 ? NAN : a / b;
	case '%':
		if ((long long)b == 0)
			return NAN;
		return (double)((long long)a % (long long)b);
	}
	return NAN;
}

int pc_mx_eval(const struct pc_mx *mx, pc_mx_lookup_fn lookup, void *ctx,
	       double *out)
{
	struct evaluator ev = { .lookup = lookup, .ctx = ctx };
	double v;

	if (!mx || !mx->root || !lookup || !out)
		return pc_err(EINVAL);
	v = eval(&ev, mx->root);
	if (ev.err)
		return pc_err(-ev.err);
	*out = v;
	return 0;
}
