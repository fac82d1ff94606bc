/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Unit tests of the metric expression language (metric/expr.c): one row
 * per operator, literal and function, the precedence, the identifiers'
 * spellings, and the position of every kind of error. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "metric/expr.h"
#include "test.h"

/* Identifiers a..e are 1..5, "cpu/event=0x3c,umask=0x1/" 7, literals as
 * named; any other name has no value. */
static int lookup(void *ctx, enum pc_mx_ref ref, const char *id, double *v)
{
	static const struct {
		enum pc_mx_ref ref;
		const char *id;
		double v;
	} values[] = {
		{ PC_MX_VALUE, "a", 1 }, { PC_MX_VALUE, "b", 2 },
		{ PC_MX_VALUE, "c", 3 }, { PC_MX_VALUE, "d", 4 },
		{ PC_MX_VALUE, "e", 5 }, { PC_MX_VALUE, "zero", 0 },
		{ PC_MX_VALUE, "cpu@event=0x3c,umask=0x1@", 7 },
		{ PC_MX_VALUE, "inst_retired.any:u", 11 },
		{ PC_MX_VALUE, "L1-dcache-loads", 13 },
		{ PC_MX_VALUE, "duration_time", 0.5 },
		{ PC_MX_VALUE, "event_0", 17 },
		{ PC_MX_SOURCE_COUNT, "a", 4 },
		{ PC_MX_HAS_EVENT, "a", 1 }, { PC_MX_HAS_EVENT, "nope", 0 },
		{ PC_MX_CPUID, "0x00000000410fd0c0", 1 },
		{ PC_MX_LITERAL, "smt_on", 1 }, { PC_MX_LITERAL, "num_cpus", 8 },
		{ PC_MX_LITERAL, "slots", 6 },
		{ PC_MX_LITERAL, "num_cpus_online", 4 },
	};
	size_t i;

	(void)ctx;
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (values[i].ref == ref && !strcmp(values[i].id, id)) {
			*v = values[i].v;
			return 0;
		}
	return -ENOENT;
}

static const struct {
	const char *expr;
	double value;		/* NAN: expect NaN */
} value_cases[] = {
	{ "1", 1 }, { "2.5", 2.5 }, { ".5", 0.5 }, { "1e3", 1000 },
	{ "1e-3", 0.001 }, { "7.", 7 },
	{ "a + b", 3 }, { "e - b", 3 }, { "b * c", 6 }, { "e / b", 2.5 },
	{ "e % b", 1 }, { "-a", -1 }, { "- - a", 1 }, { "-a * b", -2 },
	{ "a + b * c", 7 }, { "(a + b) * c", 9 }, { "e - b - a", 2 },
	{ "d / b / b", 1 }, { "a < b", 1 }, { "b < a", 0 }, { "b > a", 1 },
	{ "a > b", 0 }, { "a + b > c", 0 }, { "a + b > b", 1 },
	{ "a | zero", 1 }, { "zero | zero", 0 }, { "a & b", 1 },
	{ "a & zero", 0 }, { "a ^ b", 0 }, { "a ^ zero", 1 },
	{ "a | zero & zero", 1 },	/* & binds tighter than | */
	{ "zero & a ^ a", 1 },		/* ^ is looser than & */
	{ "a if b else c", 1 }, { "a if zero else c", 3 },
	{ "a if zero else b if zero else c", 3 },
	{ "a + b if a < b else c", 3 },	/* if is loosest */
	{ "(a if zero else b) * c", 6 },
	{ "min(b, c)", 2 }, { "max(b, c)", 3 }, { "min(c, max(a, b))", 2 },
	{ "d_ratio(a, b)", 0.5 }, { "d_ratio(a, zero)", 0 },
	{ "a / zero", NAN }, { "a % zero", NAN },
	{ "#smt_on", 1 }, { "#num_cpus", 8 }, { "#slots * b", 12 },
	{ "#num_cpus_online", 4 },
	{ "a if #smt_on else b", 1 },
	{ "source_count(a)", 4 }, { "has_event(a)", 1 },
	{ "has_event(nope)", 0 },
	{ "strcmp_cpuid_str(0x00000000410fd0c0)", 1 },
	{ "duration_time * 2", 1 },
	{ "cpu@event\\=0x3c\\,umask\\=0x1@", 7 },
	{ "inst_retired.any:u", 11 },
	{ "L1\\-dcache\\-loads", 13 },
	{ "event_?", 17 },		/* '?' is the runtime parameter */
	{ "NaN", NAN },
	{ "  a\t+\nb ", 3 },
	/* a number ends where a longer name goes on */
	{ "2 * 1e1", 20 },
};

TEST(values)
{
	size_t i;

	for (i = 0; i < sizeof(value_cases) / sizeof(value_cases[0]); i++) {
		struct pc_mx_error err;
		struct pc_mx *mx = pc_mx_parse(value_cases[i].expr, 0, &err);
		double v = -12345;
		int rc;

		if (!mx) {
			test_fail(__FILE__, __LINE__, "'%s' does not parse: "
				  "%s at %d", value_cases[i].expr, err.msg,
				  err.pos);
			continue;
		}
		rc = pc_mx_eval(mx, lookup, NULL, &v);
		if (rc)
			test_fail(__FILE__, __LINE__, "'%s': eval %d",
				  value_cases[i].expr, rc);
		else if (isnan(value_cases[i].value) ? !isnan(v) :
			 fabs(v - value_cases[i].value) > 1e-12)
			test_fail(__FILE__, __LINE__, "'%s' = %g, want %g",
				  value_cases[i].expr, v,
				  value_cases[i].value);
		pc_mx_free(mx);
	}
}

static const struct {
	const char *expr;
	int pos;
	const char *msg;	/* a part of the message */
} error_cases[] = {
	{ "", 0, "empty expression" },
	{ "   ", 3, "empty expression" },
	{ "a +", 3, "expected a value, found the end" },
	{ "a + * b", 4, "expected a value, found '*'" },
	{ "(a + b", 6, "expected ')'" },
	{ "a + b)", 5, "unexpected ')' after the expression" },
	{ "a b", 2, "unexpected 'b'" },
	{ "min(a b)", 6, "',' between the arguments of min()" },
	{ "max(a, b", 8, "')' after the arguments of max()" },
	{ "d_ratio a, b)", 8, "'(' after d_ratio" },
	{ "a if b", 6, "'else'" },
	{ "a if b c", 7, "'else'" },
	{ "source_count(1)", 13, "an event name in source_count()" },
	{ "has_event()", 10, "an event name in has_event()" },
	{ "a = b", 2, "unexpected character '='" },
	{ "a + $x", 4, "unexpected character '$'" },
	{ "# + a", 0, "'#' without a literal name" },
	{ "a +\n\tmin(b,)", 11, "expected a value, found ')'" },
	{ "if", 0, "expected a value, found 'if'" },
};

TEST(errors)
{
	size_t i;

	for (i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		struct pc_mx_error err;
		struct pc_mx *mx = pc_mx_parse(error_cases[i].expr, 0, &err);

		if (mx) {
			test_fail(__FILE__, __LINE__, "'%s' parses",
				  error_cases[i].expr);
			pc_mx_free(mx);
			continue;
		}
		if (errno != EINVAL)
			test_fail(__FILE__, __LINE__, "'%s': errno %d",
				  error_cases[i].expr, errno);
		if (err.pos != error_cases[i].pos ||
		    !strstr(err.msg, error_cases[i].msg))
			test_fail(__FILE__, __LINE__,
				  "'%s': '%s' at %d, want '%s' at %d",
				  error_cases[i].expr, err.msg, err.pos,
				  error_cases[i].msg, error_cases[i].pos);
	}
}

TEST(identifiers_in_first_use_order)
{
	struct pc_mx *mx = pc_mx_parse(
		"d_ratio(b, a) + b * source_count(c) + #slots + "
		"has_event(d) + duration_time", 0, NULL);

	REQUIRE(mx);
	/* has_event() and literals name nothing to count */
	CHECK_EQ_U64(pc_mx_nr_ids(mx), 4);
	CHECK_STR(pc_mx_id(mx, 0), "b");
	CHECK_STR(pc_mx_id(mx, 1), "a");
	CHECK_STR(pc_mx_id(mx, 2), "c");
	CHECK_STR(pc_mx_id(mx, 3), "duration_time");
	CHECK_EQ_INT(pc_mx_id_pos(mx, 1), 11);
	CHECK(pc_mx_id(mx, 4) == NULL);
	pc_mx_free(mx);
}

/* The first identifier as the lexer alone finds it is the parse's first:
 * the generic metrics choose by it which expressions to parse. */
TEST(first_identifier_without_parsing)
{
	static const char *const exprs[] = {
		"task\\-clock / (duration_time * 1e9)",
		"1 / instructions * cycles",
		"has_event(d) + strcmp_cpuid_str(x) + #slots + e",
		"source_count(c) * b",
		"(2 * a if #smt_on else b) / min(c, d)",
		"d_ratio(b, a)",
		"event_? + 1",
		"if_x if has_event(y) else 0",
		"1 + 2",
		"has_event(only)",
		"#slots * 3",
	};
	size_t i;

	for (i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		struct pc_mx *mx = pc_mx_parse(exprs[i], 5, NULL);
		char first[64];
		int rc = pc_mx_first_id(exprs[i], 5, first, sizeof(first));

		if (!mx) {
			test_fail(__FILE__, __LINE__, "'%s' does not parse",
				  exprs[i]);
			continue;
		}
		if (!pc_mx_nr_ids(mx))
			CHECK_EQ_INT(rc, -ENOENT);
		else if (rc)
			test_fail(__FILE__, __LINE__, "'%s': %d, want '%s'",
				  exprs[i], rc, pc_mx_id(mx, 0));
		else
			CHECK_STR(first, pc_mx_id(mx, 0));
		pc_mx_free(mx);
	}
	CHECK_EQ_INT(pc_mx_first_id("a_rather_long_name", 0, (char[4]){ 0 }, 4),
		     -ENAMETOOLONG);
}

TEST(only_the_branch_taken_is_evaluated)
{
	struct pc_mx *mx = pc_mx_parse("a if #smt_on else missing", 0, NULL);
	double v;

	REQUIRE(mx);
	CHECK_EQ_INT(pc_mx_eval(mx, lookup, NULL, &v), 0);
	CHECK(v == 1);
	pc_mx_free(mx);
	mx = pc_mx_parse("missing if #smt_on else a", 0, NULL);
	REQUIRE(mx);
	CHECK_EQ_INT(pc_mx_eval(mx, lookup, NULL, &v), -ENOENT);
	pc_mx_free(mx);
}

TEST(runtime_parameter)
{
	struct pc_mx *mx = pc_mx_parse("event_?", 3, NULL);

	REQUIRE(mx);
	CHECK_STR(pc_mx_id(mx, 0), "event_3");
	pc_mx_free(mx);
}

TEST_MAIN(TEST_CASE(values), TEST_CASE(errors),
	  TEST_CASE(identifiers_in_first_use_order),
	  TEST_CASE(first_identifier_without_parsing),
	  TEST_CASE(only_the_branch_taken_is_evaluated),
	  TEST_CASE(runtime_parameter))
