/*
 * lib/directive/clause.c - the parser of one directive line (clause.h).
 *
 * A recursive-descent parser over scan.c's tokens of the pragma line.
 * Expressions are not parsed, only delimited (balanced brackets up to a
 * ',' ':' ']' or ')' at depth 0): they are the user's C and go to the
 * compiler as written.
 */
#include <string.h>

#include "core/error.h"
#include "directive/clause.h"

typedef struct parser {
	const char *src, *path;
	dscan sc;
	dtok tok;
} parser;

static void next(parser *p)
{
	p->tok = hml__dscan_next(&p->sc);
}

static int is(parser *p, const char *w)
{
	return hml__dtok_is(&p->sc, &p->tok, w);
}

int hml__directive_error(const char *src, const char *path, const dtok *t, const char *what)
{
	size_t n = t->end - t->start;

	if (t->kind == DT_EOF)
		return hml__error_set(HML_ESYNTAX, "%s:%d:%d: %s: end of the directive",
		                      path, t->line, t->col, what);
	return hml__error_set(HML_ESYNTAX, "%s:%d:%d: %s: '%.*s'", path, t->line, t->col, what,
	                      (int)(n > 60 ? 60 : n), src + t->start);
}

static int err(parser *p, const char *what)
{
	if (p->sc.error)
		return hml__directive_error(p->src, p->path, &p->sc.error_at, p->sc.error);
	return hml__directive_error(p->src, p->path, &p->tok, what);
}

static int expect(parser *p, const char *w, const char *what)
{
	if (!is(p, w))
		return err(p, what);
	next(p);
	return 0;
}

/* An expression up to ',' ':' ']' or ')' at depth 0 (`colon` 0: ':' is
 * part of it, as in a ternary or a label). May be empty. */
static int expr(parser *p, dspan *out, int colon)
{
	int depth = 0;

	out->s = out->e = p->tok.start;
	for (;;) {
		if (p->tok.kind == DT_EOF)
			return depth ? err(p, "unbalanced brackets in expression") : 0;
		if (p->tok.kind == DT_PUNCT) {
			char c = p->src[p->tok.start];
			if (depth == 0 && (c == ',' || c == ']' || c == ')' || (colon && c == ':' &&
			    p->tok.end - p->tok.start == 1)))
				return 0;
			if (c == '(' || c == '[' || c == '{')
				depth++;
			else if (c == ')' || c == ']' || c == '}')
				depth--;
		}
		out->e = p->tok.end;
		next(p);
	}
}

/* '[' slices ']' ('[' slices ']')* into a->sub. */
static int subscripts(parser *p, darray *a)
{
	while (is(p, "[")) {
		next(p);
		for (;;) {
			dslice *s;
			int rc;
			if (a->nsub == DMAX_DIMS)
				return err(p, "too many subscripts (at most 4)");
			s = &a->sub[a->nsub++];
			memset(s, 0, sizeof(*s));
			s->at = p->tok;
			if ((rc = expr(p, &s->lo, 1)) < 0)
				return rc;
			if (is(p, ":")) {
				s->range = 1;
				next(p);
				if ((rc = expr(p, &s->hi, 1)) < 0)
					return rc;
				if (is(p, ":")) {
					next(p);
					if ((rc = expr(p, &s->step, 1)) < 0)
						return rc;
				}
			} else if (s->lo.s == s->lo.e) {
				return err(p, "empty subscript");
			}
			if (!is(p, ","))
				break;
			next(p);
		}
		if (!is(p, "]"))
			return err(p, "expected ']' after subscripts");
		next(p);
	}
	return 0;
}

/* IDENT ('.' IDENT | '->' IDENT)* */
static int base(parser *p, dspan *out)
{
	if (p->tok.kind != DT_IDENT)
		return err(p, "expected an array name");
	out->s = p->tok.start;
	out->e = p->tok.end;
	next(p);
	while (is(p, ".") || is(p, "->")) {
		next(p);
		if (p->tok.kind != DT_IDENT)
			return err(p, "expected a member name");
		out->e = p->tok.end;
		next(p);
	}
	return 0;
}

static int array(parser *p, darray *a)
{
	int rc;

	memset(a, 0, sizeof(*a));
	a->at = p->tok;
	if ((rc = base(p, &a->base)) < 0)
		return rc;
	return subscripts(p, a);
}

/* NAME | FUNCTOR '(' array, ... ')' | array-with-subscripts */
static int item(parser *p, ditem *it)
{
	int rc;

	memset(it, 0, sizeof(*it));
	it->at = p->tok;
	if (p->tok.kind != DT_IDENT)
		return err(p, "expected a tensor, a functor application or an array");
	if ((rc = base(p, &it->name)) < 0)
		return rc;
	if (is(p, "(")) {
		it->kind = DI_APPLY;
		next(p);
		for (;;) {
			if (it->narg == DMAX_ARGS)
				return err(p, "too many arrays in one functor application (at most 16)");
			if ((rc = array(p, &it->arg[it->narg])) < 0)
				return rc;
			if (it->arg[it->narg].nsub == 0)
				return err(p, "expected subscripts after the array");
			it->narg++;
			if (!is(p, ","))
				break;
			next(p);
		}
		return expect(p, ")", "expected ')' after the functor's arrays");
	}
	if (is(p, "[")) {
		it->kind = DI_SECTION;
		it->narg = 1;
		it->arg[0].base = it->name;
		it->arg[0].at = it->at;
		return subscripts(p, &it->arg[0]);
	}
	it->kind = DI_NAME;
	return 0;
}

static int items(parser *p, ditem *list, int *n)
{
	int rc;

	if ((rc = expect(p, "(", "expected '('")) < 0)
		return rc;
	for (;;) {
		if (*n == DMAX_ITEMS)
			return err(p, "too many items in one clause (at most 16)");
		if ((rc = item(p, &list[(*n)++])) < 0)
			return rc;
		if (!is(p, ","))
			break;
		next(p);
	}
	return expect(p, ")", "expected ',' or ')'");
}

/* '(' expression ')' into *out (non-empty). */
static int paren_expr(parser *p, dspan *out)
{
	int rc;

	if ((rc = expect(p, "(", "expected '('")) < 0)
		return rc;
	if ((rc = expr(p, out, 0)) < 0)
		return rc;
	if (out->s == out->e)
		return err(p, "expected an expression");
	return expect(p, ")", "expected ')'");
}

static const struct { const char *name; dmode mode; int hml; } modes[] = {
	{ "infer", DM_INFER, 0 }, { "offline", DM_COLLECT, 0 }, { "predicated", DM_PREDICATED, 0 },
	{ "off", DM_OFF, 1 }, { "collect", DM_COLLECT, 1 }, { "interleave", DM_INTERLEAVE, 1 },
	{ "shadow", DM_SHADOW, 1 },
};

static int ml_mode(parser *p, ddirective *d)
{
	size_t i;
	int rc;

	next(p);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (is(p, modes[i].name) && (d->hml || !modes[i].hml))
			break;
	if (i == sizeof(modes) / sizeof(modes[0]))
		return err(p, d->hml ? "unknown mode (off, collect, infer, interleave, shadow, offline, predicated)"
		                     : "unknown ml mode (infer, offline, predicated)");
	d->mode = modes[i].mode;
	next(p);
	if (d->mode == DM_PREDICATED && is(p, ":")) {
		next(p);
		if ((rc = expr(p, &d->pred, 0)) < 0)
			return rc;
	}
	return expect(p, ")", "expected ')' after the mode");
}

/* The clauses after `ml[(...)]`, in any order, each at most once. */
static int ml_clauses(parser *p, ddirective *d)
{
	struct { const char *name; dspan *span; int hml; } ex[] = {
		{ "model", &d->model, 0 }, { "label", &d->label, 0 }, { "if", &d->pred, 0 },
		{ "mode", &d->mode_expr, 1 }, { "interleave", &d->interleave, 1 },
		{ "shadow", &d->shadow, 1 }, { "over", &d->over, 1 }, { "seek", &d->seek, 1 },
		{ "db", &d->db, 1 },
	};
	int rc;

	while (p->tok.kind != DT_EOF) {
		size_t i;
		if (is(p, "in") || is(p, "out") || is(p, "inout")) {
			int w = is(p, "in") ? 0 : is(p, "out") ? 1 : 2;
			if ((w == 0 && d->nin) || (w == 1 && d->nout) || (w == 2 && d->ninout))
				return err(p, "clause given twice");
			if (w == 2 && !d->hml)
				return err(p, "inout is spelled '#pragma hml ml', not '#pragma approx ml'");
			next(p);
			rc = items(p, w == 0 ? d->in : w == 1 ? d->out : d->inout,
			           w == 0 ? &d->nin : w == 1 ? &d->nout : &d->ninout);
			if (rc < 0)
				return rc;
			continue;
		}
		for (i = 0; i < sizeof(ex) / sizeof(ex[0]); i++)
			if (is(p, ex[i].name))
				break;
		if (i == sizeof(ex) / sizeof(ex[0]) || (ex[i].hml && !d->hml))
			return err(p, i < sizeof(ex) / sizeof(ex[0]) ?
			           "this clause is spelled '#pragma hml ml', not '#pragma approx ml'" :
			           "unknown clause");
		if (ex[i].span->s != ex[i].span->e)
			return err(p, "clause given twice");
		if (i == 6)
			d->over_at = p->tok;
		next(p);
		if ((rc = paren_expr(p, ex[i].span)) < 0)
			return rc;
	}
	if (d->nout == 0 && d->ninout == 0)
		return err(p, "an ml directive needs out(...) or inout(...)");
	if (d->nin == 0 && d->ninout == 0)
		return err(p, "an ml directive needs in(...) or inout(...)");
	return 0;
}

/* shape '(' ARRAY '[' [D0] ']' ('[' D ']')* ')' of `#pragma hml declare`:
 * the array's extents (C's order, the last one contiguous). */
static int shape(parser *p, ddirective *d)
{
	darray *a = &d->shape;
	int rc, k;

	d->kind = DD_SHAPE;
	next(p);
	if ((rc = expect(p, "(", "expected '('")) < 0)
		return rc;
	memset(a, 0, sizeof(*a));
	a->at = p->tok;
	if ((rc = base(p, &a->base)) < 0)
		return rc;
	d->name = a->base;
	if (is(p, "[")) {    /* '[' ']': the first extent is not known */
		dscan peek = p->sc;
		dtok close = hml__dscan_next(&peek);
		if (hml__dtok_is(&p->sc, &close, "]")) {
			a->sub[a->nsub].at = p->tok;
			a->nsub++;
			next(p);
			next(p);
		}
	}
	if ((rc = subscripts(p, a)) < 0)
		return rc;
	if (a->nsub < 2)
		return hml__directive_error(p->src, p->path, &a->at,
		                            "a shape gives two extents or more, as in shape(u[n][m])");
	for (k = 0; k < a->nsub; k++)
		if (a->sub[k].range || (k > 0 && a->sub[k].lo.s == a->sub[k].lo.e))
			return hml__directive_error(p->src, p->path, &a->sub[k].at,
			                            "a shape's dimension is one extent (only the first may be empty)");
	if ((rc = expect(p, ")", "expected ')'")) < 0)
		return rc;
	return p->tok.kind == DT_EOF ? 0 : err(p, "unexpected text after the declaration");
}

/* NAME ':' ... ')' of a declare. */
static int declare(parser *p, ddirective *d)
{
	int rc;

	if (d->hml && is(p, "shape"))
		return shape(p, d);
	d->kind = is(p, "tensor_functor") ? DD_FUNCTOR : is(p, "tensor") ? DD_TENSOR : -1;
	if ((int)d->kind < 0)
		return err(p, d->hml ? "expected 'tensor_functor', 'tensor' or 'shape' after 'declare'"
		                     : "expected 'tensor_functor' or 'tensor' after 'declare'");
	next(p);
	if ((rc = expect(p, "(", "expected '('")) < 0)
		return rc;
	if (p->tok.kind != DT_IDENT)
		return err(p, "expected a name");
	d->name.s = p->tok.start;
	d->name.e = p->tok.end;
	next(p);
	if ((rc = expect(p, ":", "expected ':' after the name")) < 0)
		return rc;
	if (d->kind == DD_TENSOR) {
		if ((rc = item(p, &d->apply)) < 0)
			return rc;
		if (d->apply.kind != DI_APPLY)
			return hml__directive_error(p->src, p->path, &d->apply.at,
			                            "expected a functor application FUNCTOR(array[...], ...)");
	} else {
		dtok at = p->tok;
		if ((rc = expr(p, &d->text, 0)) < 0)
			return rc;
		if (d->text.s == d->text.e)
			return hml__directive_error(p->src, p->path, &at, "expected a functor");
	}
	if ((rc = expect(p, ")", "expected ')'")) < 0)
		return rc;
	return p->tok.kind == DT_EOF ? 0 : err(p, "unexpected text after the declaration");
}

static int qoi(parser *p, ddirective *d)
{
	int rc;

	d->kind = DD_QOI;
	next(p);
	if ((rc = expect(p, "(", "expected '('")) < 0)
		return rc;
	if ((rc = item(p, &d->qoi)) < 0)
		return rc;
	if (d->qoi.kind != DI_SECTION || d->qoi.arg[0].nsub < 1)
		return hml__directive_error(p->src, p->path, &d->qoi.at,
		                            "expected one array slice, as in qoi(price[0:n])");
	for (int k = 0; k < d->qoi.arg[0].nsub; k++)
		if (!d->qoi.arg[0].sub[k].range)
			return hml__directive_error(p->src, p->path, &d->qoi.arg[0].sub[k].at,
			                            "expected one array slice, as in qoi(price[0:n])");
	if ((rc = expect(p, ")", "expected ')'")) < 0)
		return rc;
	if (is(p, "name")) {
		next(p);
		if ((rc = paren_expr(p, &d->qoi_name)) < 0)
			return rc;
	}
	return p->tok.kind == DT_EOF ? 0 : err(p, "unexpected text after qoi(...)");
}

/* `# pragma (approx|hml)` at the start of the line: the scanner positioned
 * after it, *hml set. 0 when it is not such a line. */
static int head(parser *p, const char *src, const dtok *pp, int *hml)
{
	hml__dscan_init(&p->sc, src, pp->start + 1, pp->end, pp->line,
	                pp->start - (size_t)(pp->col - 1), 1);
	next(p);
	if (!is(p, "pragma"))
		return 0;
	next(p);
	if (!is(p, "approx") && !is(p, "hml"))
		return 0;
	*hml = is(p, "hml");
	next(p);
	return 1;
}

int hml__directive_is(const char *src, size_t start, size_t end)
{
	parser p;
	dtok pp;
	int hml;

	memset(&p, 0, sizeof(p));
	p.src = src;
	memset(&pp, 0, sizeof(pp));
	pp.start = start;
	pp.end = end;
	pp.line = pp.col = 1;
	return head(&p, src, &pp, &hml);
}

int hml__directive_parse(ddirective *d, const char *src, const char *path, const dtok *pp)
{
	parser p;
	int rc;

	memset(d, 0, sizeof(*d));
	memset(&p, 0, sizeof(p));
	p.src = src;
	p.path = path;
	d->at = *pp;
	if (!head(&p, src, pp, &d->hml))
		return hml__directive_error(src, path, pp, "not an hml directive");
	if (is(&p, "declare")) {
		next(&p);
		return declare(&p, d);
	}
	if (d->hml && is(&p, "qoi"))
		return qoi(&p, d);
	if (!is(&p, "ml"))
		return err(&p, d->hml ? "expected 'ml', 'qoi' or 'declare'" : "expected 'ml' or 'declare'");
	d->kind = DD_ML;
	next(&p);
	if (is(&p, "(") && (rc = ml_mode(&p, d)) < 0)
		return rc;
	if (!d->hml && d->mode == DM_DEFAULT)
		return err(&p, "expected '(' and a mode after 'approx ml'");
	if ((rc = ml_clauses(&p, d)) < 0)
		return rc;
	if (d->pred.s != d->pred.e && d->mode != DM_PREDICATED && !d->hml && d->mode != DM_INFER)
		return hml__directive_error(src, path, &d->at, "if(...) needs ml(infer) or ml(predicated)");
	if (d->mode == DM_PREDICATED && d->pred.s == d->pred.e)
		return hml__directive_error(src, path, &d->at,
		                            "ml(predicated) needs a condition: predicated:COND or if(COND)");
	return p.sc.error ? err(&p, "") : 0;
}
