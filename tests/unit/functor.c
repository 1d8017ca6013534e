/* Unit tests of the tensor functor parser (the runtime's functor.c). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "functor_internal.h"
#include "hml/tensor.h"

/* Parse `text`, check the counts, free. */
static void parses(const char *text, int npieces, int nindices)
{
	hml_functor *fn = NULL;
	int rc = hml_functor_parse(&fn, text);

	if (rc != 0) {
		fprintf(stderr, "parse of \"%s\" failed: %s\n", text, hml_error_last()->message);
		check_failures_++;
		return;
	}
	CHECK(fn != NULL);
	CHECK_STR(hml_functor_text(fn), text);
	CHECK_EQ_INT(hml_functor_npieces(fn), npieces);
	CHECK_EQ_INT(hml_functor_nindices(fn), nindices);
	hml_functor_free(fn);
}

/* hml_functor_parse() fails with HML_ESYNTAX, leaves *out NULL, and the
 * message holds `needle`. */
static int parse_rc(const char *text)
{
	hml_functor *fn = (hml_functor *)&fn;   /* not NULL: must be reset */
	int rc = hml_functor_parse(&fn, text);

	if (rc != 0 && fn != NULL) {
		fprintf(stderr, "parse of \"%s\" failed but left *out set\n", text);
		check_failures_++;
	}
	if (rc == 0)
		hml_functor_free(fn);
	return rc;
}

TEST(valid_rows)
{
	parses("[i, 0:5] = ([i], [i], [i], [i], [i])", 5, 1);
	parses("[i, 0:1] = ([i])", 1, 1);
}

TEST(valid_named)
{
	hml_functor *fn = NULL;

	parses("f: [i, 0:2] = ([i], [i])", 2, 1);
	parses("option_in : [i, 0:5] = ([i], [i], [i], [i], [i])", 5, 1);
	CHECK_OK(hml_functor_parse(&fn, "stencil: [i, j, 0:5] = ([i-1,j], [i+1,j], [i,j-1:j+2])"));
	CHECK_STR(fn->name, "stencil");
	CHECK_EQ_INT(fn->nindices, 2);
	CHECK_STR(fn->indices[0], "i");
	CHECK_STR(fn->indices[1], "j");
	hml_functor_free(fn);
}

TEST(valid_stencil_affine_steps)
{
	parses("[i, j, 0:5] = ([i-1,j], [i+1,j], [i,j-1:j+2])", 3, 2);
	parses("[i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2], [i, j])", 4, 2);
	parses("[i, 0:m] = ([i*m : i*m+m])", 1, 1);
	parses("[i, 0:1] = ([2*i+1])", 1, 1);
	parses("[i, 0:3] = ([i, 0:6:2])", 1, 1);
	parses("[i, 0:1] = ([(i+1)*m - m*(2+n)])", 1, 1);
	parses("[i, 0:1] = ([-(-i) + (2 - 1)*3 - 3])", 1, 1);
	parses("[i, 0:1] = ([+i])", 1, 1);
	parses("[row_1, 0:1] = ([row_1 + off_2])", 1, 1);
}

TEST(valid_whole_field_and_multidim)
{
	hml_functor *fn = NULL;

	parses("[0:4, 0:nz, 0:nx] = ([0:4, 2:nz+2, 2:nx+2])", 1, 0);
	parses("[i, j, 0:2, 0:3] = ([i, j, 0:2, 0:3])", 1, 2);
	parses("[i, j, k, 0:1] = ([i, j, k])", 1, 3);
	/* A single piece needs no parentheses. */
	parses("[i, 0:3] = [i, 0:3]", 1, 1);

	CHECK_OK(hml_functor_parse(&fn, "[0:4, 0:nz, 0:nx] = ([0:4, 2:nz+2, 2:nx+2])"));
	CHECK_EQ_INT(fn->nfeatures, 3);
	CHECK_EQ_INT(fn->x.nsyms, 2);
	CHECK_STR(fn->x.syms[0], "nz");
	CHECK_STR(fn->x.syms[1], "nx");
	CHECK_EQ_INT(fn->pieces[0].nsubs, 3);
	CHECK(fn->pieces[0].subs[0].is_range && fn->pieces[0].subs[0].step == -1);
	hml_functor_free(fn);
}

TEST(valid_whitespace)
{
	parses("[i,0:5]=([i],[i],[i],[i],[i])", 5, 1);
	parses("  \t[ i ,0 : 5 ]=\n( [ i ] ,[i],[ i],[i ] ,\t[i] )  \n", 5, 1);
	parses("f:[i,j,0:5]=([i-1,j],[i+1,j],[i,j-1:j+2])", 3, 2);
	parses("[ i , 0 : m ] = ( [ i * m : i * m + m ] )", 1, 1);
}

/* The affine forms the parser produces, evaluated with symbol values. */
TEST(affine_evaluation)
{
	hml_functor *fn = NULL;
	hml__affine *vals = NULL;
	hml_symbol syms[] = { { "m", 5 }, { "n", 2 } };
	int64_t symvals[2];
	const hml__piece *pc;

	CHECK_OK(hml_functor_parse(&fn,
		"[i, j, 0:1] = ([2*i + 3*j - 4 + m*i, (j+1)*n - (-i), i*m : i*m + m : n])"));
	if (!fn)
		return;
	CHECK_EQ_INT(fn->x.nsyms, 2);
	vals = calloc((size_t)fn->x.n, sizeof(*vals));
	CHECK_OK(hml__exprs_resolve(&fn->x, syms, 2, symvals, "functor", fn->text));
	CHECK_EQ_INT(symvals[0], 5);
	CHECK_EQ_INT(symvals[1], 2);
	CHECK_OK(hml__exprs_eval(&fn->x, symvals, vals, "functor", fn->text));
	pc = &fn->pieces[0];
	CHECK_EQ_INT(pc->nsubs, 3);
	/* 2i + 3j - 4 + 5i */
	CHECK_EQ_INT(vals[pc->subs[0].start].c0, -4);
	CHECK_EQ_INT(vals[pc->subs[0].start].c[0], 7);
	CHECK_EQ_INT(vals[pc->subs[0].start].c[1], 3);
	/* (j+1)*2 + i */
	CHECK_EQ_INT(vals[pc->subs[1].start].c0, 2);
	CHECK_EQ_INT(vals[pc->subs[1].start].c[0], 1);
	CHECK_EQ_INT(vals[pc->subs[1].start].c[1], 2);
	/* 5i : 5i + 5 : 2 */
	CHECK(pc->subs[2].is_range);
	CHECK_EQ_INT(vals[pc->subs[2].start].c[0], 5);
	CHECK_EQ_INT(vals[pc->subs[2].stop].c0, 5);
	CHECK_EQ_INT(vals[pc->subs[2].stop].c[0], 5);
	CHECK_EQ_INT(vals[pc->subs[2].step].c0, 2);
	CHECK(hml__affine_is_const(&vals[pc->subs[2].step]));
	CHECK(!hml__affine_is_const(&vals[pc->subs[2].start]));
	/* Piece spans cover "[...]". */
	CHECK_EQ_INT(fn->text[pc->begin], '[');
	CHECK_EQ_INT(fn->text[pc->end - 1], ']');

	/* Unknown symbols and overflow. */
	CHECK_FAILS(hml__exprs_resolve(&fn->x, syms, 1, symvals, "functor", fn->text),
	            HML_EINVALID, "unknown symbol 'n' in functor '[i, j, 0:1] = (");
	syms[0].value = INT64_MAX;
	CHECK_OK(hml__exprs_resolve(&fn->x, syms, 2, symvals, "functor", fn->text));
	CHECK_FAILS(hml__exprs_eval(&fn->x, symvals, vals, "functor", fn->text),
	            HML_EINVALID, "overflows 64-bit integers");
	free(vals);
	hml_functor_free(fn);
}

TEST(syntax_missing_equals)
{
	CHECK_FAILS(parse_rc("[i, 0:5] ([i])"), HML_ESYNTAX,
	            "functor '[i, 0:5] ([i])': column 10: expected '=' but found '('");
	CHECK_FAILS(parse_rc("[i, 0:5]"), HML_ESYNTAX,
	            "column 9: expected '=' but found end of input");
}

TEST(syntax_unbalanced)
{
	/* The example of tensor.h, verbatim. */
	CHECK_FAILS(parse_rc("[i, 0:5] = ([i]"), HML_ESYNTAX,
	            "functor '[i, 0:5] = ([i]': column 16: expected ')' but found end of input");
	CHECK_FAILS(parse_rc("[i, 0:5] = ([i)"), HML_ESYNTAX,
	            "column 15: expected ']' but found ')'");
	CHECK_FAILS(parse_rc("[i, 0:5 = ([i])"), HML_ESYNTAX,
	            "column 9: expected ']' but found '='");
	CHECK_FAILS(parse_rc("[i, 0:5] = ([i]))"), HML_ESYNTAX,
	            "column 17: expected end of input but found ')'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([(i + 1])"), HML_ESYNTAX,
	            "column 20: expected ')' but found ']'");
	CHECK_FAILS(parse_rc("[i, 0:1] = [i"), HML_ESYNTAX,
	            "column 14: expected ']' but found end of input");
	CHECK_FAILS(parse_rc(""), HML_ESYNTAX,
	            "functor '': column 1: expected '[' but found end of input");
}

TEST(syntax_empty_piece_and_garbage)
{
	CHECK_FAILS(parse_rc("[i, 0:1] = ([])"), HML_ESYNTAX,
	            "column 14: expected an expression but found ']'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ()"), HML_ESYNTAX,
	            "column 13: expected '[' but found ')'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([i]) x"), HML_ESYNTAX,
	            "column 18: expected end of input but found 'x'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([i]) [i]"), HML_ESYNTAX,
	            "column 18: expected end of input but found '['");
	CHECK_FAILS(parse_rc("[i, 0:1] = i"), HML_ESYNTAX,
	            "column 12: expected '(' or '[' but found 'i'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([i],)"), HML_ESYNTAX,
	            "column 17: expected '[' but found ')'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([i,])"), HML_ESYNTAX,
	            "column 16: expected an expression but found ']'");
	CHECK_FAILS(parse_rc("[i, 0:] = ([i])"), HML_ESYNTAX,
	            "column 7: expected an expression but found ']'");
	CHECK_FAILS(parse_rc("[i, 0:1,] = ([i])"), HML_ESYNTAX,
	            "column 9: expected an expression but found ']'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([i - ])"), HML_ESYNTAX,
	            "column 18: expected an expression but found ']'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([i, 0:1:2:3])"), HML_ESYNTAX,
	            "column 22: expected ']' but found ':'");
}

TEST(syntax_non_affine)
{
	CHECK_FAILS(parse_rc("[i, j, 0:1] = ([i*j])"), HML_ESYNTAX,
	            "column 17: expected an affine expression but found non-affine expression 'i*j'");
	CHECK_FAILS(parse_rc("[i, j, 0:1] = ([2 + (i+1) * (j-1)])"), HML_ESYNTAX,
	            "column 21: expected an affine expression but found non-affine expression '(i+1) * (j-1)'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([2*i*i])"), HML_ESYNTAX,
	            "column 14: expected an affine expression but found non-affine expression '2*i*i'");
	CHECK_FAILS(parse_rc("[i, j, 0:1] = ([0, i*m*j])"), HML_ESYNTAX,
	            "column 20: expected an affine expression but found non-affine expression 'i*m*j'");
	/* Products with at most one index are fine. */
	parses("[i, j, 0:1] = ([i*m*n + j*(m+1)])", 1, 2);
	parses("[i, 0:1] = ([m*i*n])", 1, 1);
}

TEST(syntax_lhs_rules)
{
	CHECK_FAILS(parse_rc("[0:5, i] = ([i])"), HML_ESYNTAX,
	            "column 7: expected a feature range 'a:b' (sample indices come first) but found 'i'");
	CHECK_FAILS(parse_rc("[i, i, 0:1] = ([i])"), HML_ESYNTAX,
	            "column 5: expected a distinct index name but found 'i'");
	CHECK_FAILS(parse_rc("[i, j, i, 0:1] = ([i])"), HML_ESYNTAX,
	            "column 8: expected a distinct index name but found 'i'");
	CHECK_FAILS(parse_rc("[i] = ([i])"), HML_ESYNTAX,
	            "functor '[i] = ([i])': column 3: expected a feature range 'a:b' but found ']'");
	CHECK_FAILS(parse_rc("[i, j] = ([i, j])"), HML_ESYNTAX,
	            "column 6: expected a feature range 'a:b' but found ']'");
	CHECK_FAILS(parse_rc("[i, 5] = ([i])"), HML_ESYNTAX,
	            "column 6: expected ':' but found ']'");
	CHECK_FAILS(parse_rc("[i, 0:i] = ([i])"), HML_ESYNTAX,
	            "column 7: expected an expression without sample indices but found 'i'");
	CHECK_FAILS(parse_rc("[i, 0:5:1] = ([i])"), HML_ESYNTAX,
	            "column 8: expected ']' but found ':'");
	CHECK_FAILS(parse_rc("f [i, 0:1] = ([i])"), HML_ESYNTAX,
	            "column 3: expected ':' but found '['");
	CHECK_FAILS(parse_rc("[a, b, c, d, e, f, g, h, k, 0:1] = ([a])"), HML_ESYNTAX,
	            "column 26: expected at most 8 sample indices but found 'k'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([0, 0, 0, 0, 0, 0, 0, 0, 0])"), HML_ESYNTAX,
	            "column 38: expected at most 8 subscripts but found '0'");
}

TEST(syntax_bad_characters)
{
	CHECK_FAILS(parse_rc("[i, 0:1] = ([i # 2])"), HML_ESYNTAX,
	            "column 16: expected ']' but found '#'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([$i])"), HML_ESYNTAX,
	            "column 14: expected an expression but found '$'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([i/2])"), HML_ESYNTAX,
	            "column 15: expected ']' but found '/'");
	CHECK_FAILS(parse_rc("[i; 0:1] = ([i])"), HML_ESYNTAX,
	            "column 3: expected ':' but found ';'");
	/* A multi-byte character is quoted whole. */
	CHECK_FAILS(parse_rc("[i, 0:1] = ([\xc3\xa9])"), HML_ESYNTAX,
	            "column 14: expected an expression but found '\xc3\xa9'");
	CHECK_FAILS(parse_rc("[i, 0:1] = ([99999999999999999999])"), HML_ESYNTAX,
	            "column 14: expected an integer below 2^63 but found '99999999999999999999'");
	parses("[i, 0:1] = ([9223372036854775807 - 9223372036854775807 + i])", 1, 1);
}

TEST(syntax_long_and_multiline_texts)
{
	char text[600], deep[700];
	const char *msg;
	int k, n = 0;

	/* A newline in the text does not cut the one-line message. */
	CHECK_FAILS(parse_rc("[i, 0:1]\n= ([i]"), HML_ESYNTAX,
	            "functor '[i, 0:1] = ([i]': column 16: expected ')' but found end of input");

	/* A long text is cut in the message; the column still counts from 1. */
	n = snprintf(text, sizeof(text), "[i, 0:1] = ([i");
	for (k = 0; k < 100; k++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, " + 1");
	snprintf(text + n, sizeof(text) - (size_t)n, " ?])");
	CHECK_FAILS(parse_rc(text), HML_ESYNTAX, "column 416: expected ']' but found '?'");
	msg = hml_error_last()->message;
	CHECK_CONTAINS(msg, "...': column 416");
	CHECK(strlen(msg) < 300);
	CHECK(strchr(msg, '\n') == NULL);

	/* Deep nesting is refused, not a stack overflow. */
	n = snprintf(deep, sizeof(deep), "[i, 0:1] = ([");
	for (k = 0; k < 300; k++)
		deep[n++] = '(';
	deep[n++] = 'i';
	deep[n] = '\0';
	CHECK_FAILS(parse_rc(deep), HML_ESYNTAX, "expected an expression nested less deeply");
}

TEST(parse_arguments)
{
	hml_functor *fn = NULL;

	CHECK_FAILS(hml_functor_parse(NULL, "[i, 0:1] = ([i])"), HML_EINVALID, "no output");
	CHECK_FAILS(hml_functor_parse(&fn, NULL), HML_EINVALID, "no functor text");
	CHECK(fn == NULL);
	hml_functor_free(NULL);
	CHECK_EQ_INT(hml_functor_npieces(NULL), 0);
	CHECK_EQ_INT(hml_functor_nindices(NULL), 0);
	CHECK_STR(hml_functor_text(NULL), "");
}

TEST(domain_parse)
{
	hml__domain d;
	hml__affine vals[64];
	int64_t symvals[4];
	hml_symbol syms[] = { { "N", 10 }, { "M", 20 } };

	CHECK_OK(hml__domain_parse(&d, "1:N-1, 1:M-1"));
	CHECK_EQ_INT(d.nslices, 2);
	CHECK_EQ_INT(d.x.nsyms, 2);
	CHECK(d.x.n <= 64);
	CHECK_OK(hml__exprs_resolve(&d.x, syms, 2, symvals, "domain", "1:N-1, 1:M-1"));
	CHECK_OK(hml__exprs_eval(&d.x, symvals, vals, "domain", "1:N-1, 1:M-1"));
	CHECK_EQ_INT(vals[d.start[0]].c0, 1);
	CHECK_EQ_INT(vals[d.stop[0]].c0, 9);
	CHECK_EQ_INT(vals[d.stop[1]].c0, 19);
	CHECK_EQ_INT(d.step[0], -1);
	hml__domain_release(&d);

	CHECK_OK(hml__domain_parse(&d, " 0 : 2*N : 3 "));
	CHECK_EQ_INT(d.nslices, 1);
	CHECK(d.step[0] >= 0);
	hml__domain_release(&d);

	CHECK_FAILS(hml__domain_parse(&d, "1:N-1, 1:"), HML_ESYNTAX,
	            "domain '1:N-1, 1:': column 10: expected an expression but found end of input");
	hml__domain_release(&d);
	CHECK_FAILS(hml__domain_parse(&d, "1:N-1 1:M-1"), HML_ESYNTAX,
	            "domain '1:N-1 1:M-1': column 7: expected ',' but found '1'");
	hml__domain_release(&d);
	CHECK_FAILS(hml__domain_parse(&d, "3"), HML_ESYNTAX,
	            "domain '3': column 2: expected ':' but found end of input");
	hml__domain_release(&d);
	CHECK_FAILS(hml__domain_parse(&d, "0:5)"), HML_ESYNTAX,
	            "domain '0:5)': column 4: expected ',' but found ')'");
	hml__domain_release(&d);
}

TEST(clip)
{
	char buf[200], longtext[300];

	hml__clip(buf, sizeof(buf), "a\nb\tc");
	CHECK_STR(buf, "a b c");
	memset(longtext, 'x', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	hml__clip(buf, sizeof(buf), longtext);
	CHECK_EQ_INT(strlen(buf), 120);
	CHECK(!strcmp(buf + 117, "..."));
}

int main(void)
{
	RUN(valid_rows);
	RUN(valid_named);
	RUN(valid_stencil_affine_steps);
	RUN(valid_whole_field_and_multidim);
	RUN(valid_whitespace);
	RUN(affine_evaluation);
	RUN(syntax_missing_equals);
	RUN(syntax_unbalanced);
	RUN(syntax_empty_piece_and_garbage);
	RUN(syntax_non_affine);
	RUN(syntax_lhs_rules);
	RUN(syntax_bad_characters);
	RUN(syntax_long_and_multiline_texts);
	RUN(parse_arguments);
	RUN(domain_parse);
	RUN(clip);
	return check_report();
}
