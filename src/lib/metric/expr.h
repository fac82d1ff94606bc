/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perf's metric expression language (the MetricExpr of the pmu-events
 * tables): parsed once into a tree, evaluated many times against values
 * the caller supplies for the identifiers.  Not installed.
 *
 *   if_expr := expr [ 'if' expr 'else' if_expr ]
 *   expr    := expr OP expr | '-' expr | '(' if_expr ')' | NUMBER | NaN
 *            | ID | #literal | min(e, e) | max(e, e) | d_ratio(e, e)
 *            | source_count(ID) | has_event(ID) | strcmp_cpuid_str(ID)
 *   OP, loosest first: '|'  '^'  '&'  '<' '>'  '+' '-'  '*' '/' '%'
 *
 * An identifier is an event (with modifiers, "event:u", or a PMU prefix,
 * "cpu@event=0x3c\,umask=0x1@"), another metric, or duration_time.  A
 * backslash escapes '-', ',' and '=' inside one; a '?' stands for the
 * runtime parameter.  Division by zero gives NaN (the metric has no
 * value), d_ratio() gives 0.
 */
#ifndef PERFCTR_METRIC_EXPR_H
#define PERFCTR_METRIC_EXPR_H

#include <stdbool.h>
#include <stddef.h>

struct pc_mx;

struct pc_mx_error {
	int pos;		/* byte offset in the expression, -1 when none */
	char msg[160];
};

/* Kinds of identifier reference, for the evaluator's callback. */
enum pc_mx_ref {
	PC_MX_VALUE,		/* the value of an event or a metric */
	PC_MX_SOURCE_COUNT,	/* source_count(ID) */
	PC_MX_HAS_EVENT,	/* has_event(ID) */
	PC_MX_CPUID,		/* strcmp_cpuid_str(ID): 1 when the CPU matches */
	PC_MX_LITERAL,		/* #name (without the '#') */
};

/*
 * Supplies the value of an identifier or literal.  Return 0 with *value
 * set, or -errno (the evaluation then fails with that errno; the callback
 * keeps its own reason).
 */
typedef int (*pc_mx_lookup_fn)(void *ctx, enum pc_mx_ref ref, const char *id,
			       double *value);

/* Parse @text (runtime parameter @runtime replaces '?').  NULL with errno
 * EINVAL and @err filled when @text is not an expression; ENOMEM. */
struct pc_mx *pc_mx_parse(const char *text, int runtime,
			  struct pc_mx_error *err);
void pc_mx_free(struct pc_mx *mx);

/* The distinct identifiers of value references (events, metrics and
 * duration_time; those of source_count() too), in first-use order. */
size_t pc_mx_nr_ids(const struct pc_mx *mx);
const char *pc_mx_id(const struct pc_mx *mx, size_t i);
/* Byte offset of identifier @i's first use. */
int pc_mx_id_pos(const struct pc_mx *mx, size_t i);

/* What pc_mx_id(parsed, 0) is for @text (with @runtime) when it parses,
 * found by the lexer alone: nothing is allocated for the tree.  For
 * choosing which expressions to parse.  Return 0 with the name in @buf,
 * -ENOENT when it names none, -ENAMETOOLONG, -ENOMEM. */
int pc_mx_first_id(const char *text, int runtime, char *buf, size_t size);

/*
 * Evaluate.  Only the branch an 'if' takes is evaluated, so an event of the
 * branch not taken need not have a value.  Return 0 with *out set (NaN
 * when a division by zero leaves it undefined), or the lookup's -errno.
 */
int pc_mx_eval(const struct pc_mx *mx, pc_mx_lookup_fn lookup, void *ctx,
	       double *out);

#endif /* PERFCTR_METRIC_EXPR_H */
