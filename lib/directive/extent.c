/*
 * lib/directive/extent.c - statement extents, loop headers and subscripts
 * (extent.h), by recursive descent over scan.c's tokens.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "directive/extent.h"

typedef struct stmt_ctx {
	const char *src, *path;
	dscan sc;
	dtok tok;
	int depth;      /* #if nesting opened inside the statement */
	size_t last;    /* end of the last token consumed */
	dtok early;     /* the first `return` or `goto` seen, or a `break` or
	                 * `continue` outside any loop (or switch) in the statement */
	int loops, switches;  /* loops and switches around the current token */
	int blocks;     /* blocks around it: a '}' may end a statement without ';' (a macro) */
} stmt_ctx;

static int is(stmt_ctx *c, const char *w)
{
	return hml__dtok_is(&c->sc, &c->tok, w);
}

static int err(stmt_ctx *c, const dtok *t, const char *what)
{
	if (c->sc.error)
		return hml__directive_error(c->src, c->path, &c->sc.error_at, c->sc.error);
	return hml__directive_error(c->src, c->path, t, what);
}

/* The directive word of a preprocessor line: "if", "endif", ... */
static int pp_word(stmt_ctx *c, const dtok *t, const char *w)
{
	size_t p = t->start + 1, n = strlen(w);

	while (p < t->end && (c->src[p] == ' ' || c->src[p] == '\t'))
		p++;
	return p + n <= t->end && memcmp(c->src + p, w, n) == 0 &&
	       (p + n == t->end || !(c->src[p + n] == '_' || isalnum((unsigned char)c->src[p + n])));
}

/* Skip an inactive #elif/#else branch up to and including its #endif. */
static int skip_branch(stmt_ctx *c, const dtok *at)
{
	int nest = 0;

	for (;;) {
		dtok t = hml__dscan_next(&c->sc);
		if (t.kind == DT_EOF)
			return err(c, at, "no #endif for this conditional");
		if (t.kind != DT_PP)
			continue;
		if (pp_word(c, &t, "if"))
			nest++;
		else if (pp_word(c, &t, "endif") && nest-- == 0)
			return 0;
	}
}

/* Next token, handling preprocessor lines. */
static int next(stmt_ctx *c)
{
	int rc;

	/* a directive is only looked at (the token after the statement may be
	 * one); consuming it means it is inside */
	if (c->tok.kind == DT_PP)
		return err(c, &c->tok, "a directive cannot appear inside the statement of an ml region");
	if (c->tok.kind != DT_EOF)
		c->last = c->tok.end;
	for (;;) {
		c->tok = hml__dscan_next(&c->sc);
		if (c->tok.kind != DT_PP)
			break;
		if (hml__directive_is(c->src, c->tok.start, c->tok.end))
			return 0;
		if (pp_word(c, &c->tok, "if")) {   /* #if, #ifdef, #ifndef */
			c->depth++;
		} else if (pp_word(c, &c->tok, "elif") || pp_word(c, &c->tok, "else")) {
			if (c->depth == 0)
				return err(c, &c->tok, "the region's statement crosses this line of a conditional opened before it");
			if ((rc = skip_branch(c, &c->tok)) < 0)
				return rc;
			c->depth--;
		} else if (pp_word(c, &c->tok, "endif")) {
			if (c->depth-- == 0)
				return err(c, &c->tok, "the region's statement crosses this line of a conditional opened before it");
		}
	}
	if (c->tok.kind == DT_IDENT && c->early.kind == DT_EOF && (is(c, "return") || is(c, "goto")))
		c->early = c->tok;
	return c->sc.error ? err(c, &c->tok, "") : 0;
}

/* Balanced tokens from an opening bracket to its closing one, inclusive. */
static int balanced(stmt_ctx *c)
{
	dtok open = c->tok;
	int depth = 0, rc;

	do {
		if (c->tok.kind == DT_EOF)
			return err(c, &open, "no closing bracket for this one");
		if (c->tok.kind == DT_PUNCT) {
			char ch = c->src[c->tok.start];
			depth += (ch == '(' || ch == '[' || ch == '{') - (ch == ')' || ch == ']' || ch == '}');
		}
		if ((rc = next(c)) < 0)
			return rc;
	} while (depth > 0);
	return 0;
}

static int statement(stmt_ctx *c);

static int paren_then_statement(stmt_ctx *c)
{
	int rc;

	if ((rc = next(c)) < 0)
		return rc;
	if (is(c, "constexpr") && (rc = next(c)) < 0)   /* C++17 if constexpr */
		return rc;
	if (!is(c, "("))
		return err(c, &c->tok, "expected '('");
	if ((rc = balanced(c)) < 0)
		return rc;
	return statement(c);
}

/* '{' statements '}' */
static int block(stmt_ctx *c)
{
	dtok open = c->tok;
	int rc;

	if ((rc = next(c)) < 0)
		return rc;
	c->blocks++;
	while (!is(c, "}")) {
		if (c->tok.kind == DT_EOF)
			return err(c, &open, "no closing bracket for this one");
		if ((rc = statement(c)) < 0)
			return rc;
	}
	c->blocks--;
	return next(c);
}

/* A label before a statement: `NAME :`, `case EXPR :` or `default :`
 * (consumed; 1 when there was one). */
static int label(stmt_ctx *c)
{
	int rc, depth = 0;

	if (is(c, "case") || is(c, "default")) {
		while (!(depth == 0 && is(c, ":"))) {
			if (c->tok.kind == DT_EOF || is(c, ";") || is(c, "{") || is(c, "}"))
				return err(c, &c->tok, "expected ':' after the case label");
			depth += is(c, "(") || is(c, "[");
			depth -= is(c, ")") || is(c, "]");
			if ((rc = next(c)) < 0)
				return rc;
		}
		return (rc = next(c)) < 0 ? rc : 1;
	}
	if (c->tok.kind == DT_IDENT) {
		dscan peek = c->sc;
		dtok colon = hml__dscan_next(&peek);
		if (colon.kind == DT_PUNCT && colon.end - colon.start == 1 && c->src[colon.start] == ':') {
			if ((rc = next(c)) < 0 || (rc = next(c)) < 0)
				return rc;
			return 1;
		}
	}
	return 0;
}

/* A loop's or a switch's body: `break` (and in a loop `continue`) inside
 * it stay in the region. */
static int body(stmt_ctx *c, int loop)
{
	int rc;

	c->loops += loop;
	c->switches += !loop;
	rc = statement(c);
	c->loops -= loop;
	c->switches -= !loop;
	return rc;
}

static int statement(stmt_ctx *c)
{
	int rc;

	if (c->tok.kind == DT_EOF)
		return err(c, &c->tok, "expected a statement after the directive");
	if ((rc = label(c)) != 0)
		return rc < 0 ? rc : statement(c);
	if (is(c, "{"))
		return block(c);
	if (is(c, "for") || is(c, "while") || is(c, "switch")) {
		int loop = !is(c, "switch");
		if ((rc = next(c)) < 0)
			return rc;
		if (!is(c, "("))
			return err(c, &c->tok, "expected '('");
		if ((rc = balanced(c)) < 0)
			return rc;
		return body(c, loop);
	}
	if (c->early.kind == DT_EOF && ((is(c, "break") && c->loops + c->switches == 0) ||
	                                (is(c, "continue") && c->loops == 0)))
		c->early = c->tok;
	if (is(c, "try")) {   /* C++: try BLOCK (catch (...) BLOCK)+ */
		if ((rc = next(c)) < 0)
			return rc;
		if (!is(c, "{"))
			return err(c, &c->tok, "expected '{' after 'try'");
		if ((rc = block(c)) < 0)
			return rc;
		while (is(c, "catch")) {
			if ((rc = next(c)) < 0)
				return rc;
			if (!is(c, "(") || (rc = balanced(c)) < 0)
				return rc < 0 ? rc : err(c, &c->tok, "expected '('");
			if (!is(c, "{"))
				return err(c, &c->tok, "expected '{' after 'catch (...)'");
			if ((rc = block(c)) < 0)
				return rc;
		}
		return 0;
	}
	if (is(c, "if")) {
		if ((rc = paren_then_statement(c)) < 0)
			return rc;
		if (is(c, "else")) {
			if ((rc = next(c)) < 0)
				return rc;
			return statement(c);
		}
		return 0;
	}
	if (is(c, "do")) {
		if ((rc = next(c)) < 0 || (rc = body(c, 1)) < 0)
			return rc;
		if (!is(c, "while"))
			return err(c, &c->tok, "expected 'while' after the body of 'do'");
		if ((rc = next(c)) < 0)
			return rc;
		if (!is(c, "("))
			return err(c, &c->tok, "expected '('");
		if ((rc = balanced(c)) < 0)
			return rc;
		if (!is(c, ";"))
			return err(c, &c->tok, "expected ';'");
		return next(c);
	}
	if (is(c, "}"))
		return err(c, &c->tok, "expected a statement after the directive");
	while (!is(c, ";")) {
		if (is(c, "}") && c->blocks > 0)
			return 0;
		if (c->tok.kind == DT_EOF)
			return err(c, &c->tok, "expected ';' to end the statement after the directive");
		if (is(c, "(") || is(c, "[") || is(c, "{"))
			rc = balanced(c);
		else if (is(c, ")") || is(c, "]") || is(c, "}"))
			return err(c, &c->tok, "unbalanced bracket in the statement after the directive");
		else
			rc = next(c);
		if (rc < 0)
			return rc;
	}
	return next(c);
}

int hml__dstmt_extent(const char *src, const char *path, const dtok *pp, size_t *start,
                      size_t *end)
{
	stmt_ctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.src = src;
	c.path = path;
	hml__dscan_init(&c.sc, src, pp->end, strlen(src), pp->line, pp->start - (size_t)(pp->col - 1), 0);
	/* the line count of a directive with continuations */
	for (size_t p = pp->start; p < pp->end; p++)
		if (src[p] == '\n')
			c.sc.line++, c.sc.line_start = p + 1;
	if ((rc = next(&c)) < 0)
		return rc;
	if (c.depth != 0)
		return err(&c, &c.tok, "the statement after the directive starts inside a conditional it does not close");
	if (c.tok.kind == DT_PP)
		return err(&c, &c.tok, "expected a statement after the directive, not another directive");
	*start = c.tok.start;
	if ((rc = statement(&c)) < 0)
		return rc;
	if (c.depth != 0)
		return err(&c, &c.tok, "a conditional opened in the region's statement is not closed in it");
	if (c.early.kind != DT_EOF && c.early.start < c.last)
		return err(&c, &c.early, "a region's statement cannot leave the region early");
	*end = c.last;
	return 0;
}

static int tok_is(const char *src, const dtok *t, const char *w, size_t n)
{
	return t->kind != DT_EOF && t->end - t->start == n && memcmp(src + t->start, w, n) == 0;
}

/* Tokens up to `stop` at depth 0, as a span. */
static int until(dscan *sc, dtok *t, const char *src, const char *path, char stop, dspan *out)
{
	int depth = 0;

	out->s = out->e = t->start;
	while (t->kind != DT_EOF && !(depth == 0 && t->kind == DT_PUNCT && src[t->start] == stop &&
	                               t->end - t->start == 1)) {
		if (t->kind == DT_PUNCT)
			depth += (src[t->start] == '(' || src[t->start] == '[') -
			         (src[t->start] == ')' || src[t->start] == ']');
		out->e = t->end;
		*t = hml__dscan_next(sc);
	}
	if (t->kind == DT_EOF)
		return hml__directive_error(src, path, t, "over(): the loop's header is incomplete");
	*t = hml__dscan_next(sc);
	return 0;
}

int hml__dfor_loop(dloop *l, const char *src, const char *path, size_t start, size_t end,
                   const char *var, size_t nvar, const dtok *at)
{
	dscan sc;
	dtok t, first;
	int line, col, rc;

	memset(l, 0, sizeof(*l));
	hml__dscan_where(src, start, &line, &col);
	hml__dscan_init(&sc, src, start, end, line, start - (size_t)(col - 1), 0);
	first = t = hml__dscan_next(&sc);
	while (t.kind == DT_PP)
		first = t = hml__dscan_next(&sc);
	if (!tok_is(src, &t, "for", 3))
		return hml__directive_error(src, path, &first, "over() needs a for loop after the directive");
	t = hml__dscan_next(&sc);
	if (!tok_is(src, &t, "(", 1))
		return hml__directive_error(src, path, &t, "expected '('");
	/* init: [type words] VAR = LO ; */
	t = hml__dscan_next(&sc);
	l->type.s = l->type.e = t.start;
	while (t.kind == DT_IDENT && !tok_is(src, &t, var, nvar)) {
		l->type.e = t.end;
		t = hml__dscan_next(&sc);
	}
	if (!tok_is(src, &t, var, nvar))
		return hml__directive_error(src, path, &t, "over(): the loop must start with 'VAR = LOW'");
	t = hml__dscan_next(&sc);
	if (!tok_is(src, &t, "=", 1))
		return hml__directive_error(src, path, &t, "over(): the loop must start with 'VAR = LOW'");
	t = hml__dscan_next(&sc);
	if ((rc = until(&sc, &t, src, path, ';', &l->lo)) < 0)
		return rc;
	/* cond: VAR < HI or VAR <= HI */
	if (!tok_is(src, &t, var, nvar))
		return hml__directive_error(src, path, &t, "over(): the loop's condition must be 'VAR < HIGH'");
	t = hml__dscan_next(&sc);
	if (tok_is(src, &t, "<=", 2))
		l->hi_plus_one = 1;
	else if (!tok_is(src, &t, "<", 1))
		return hml__directive_error(src, path, &t, "over(): the loop's condition must be 'VAR < HIGH'");
	t = hml__dscan_next(&sc);
	if ((rc = until(&sc, &t, src, path, ';', &l->hi)) < 0)
		return rc;
	/* incr: VAR++ | ++VAR | VAR += 1 */
	{
		dtok a = t, b = hml__dscan_next(&sc), c3 = hml__dscan_next(&sc);
		int ok = (tok_is(src, &a, var, nvar) && tok_is(src, &b, "++", 2) && tok_is(src, &c3, ")", 1)) ||
		         (tok_is(src, &a, "++", 2) && tok_is(src, &b, var, nvar) && tok_is(src, &c3, ")", 1));
		if (!ok && tok_is(src, &a, var, nvar) && tok_is(src, &b, "+=", 2) && tok_is(src, &c3, "1", 1)) {
			c3 = hml__dscan_next(&sc);
			ok = tok_is(src, &c3, ")", 1);
		}
		if (!ok)
			return hml__directive_error(src, path, &a, "over(): the loop must step by one ('VAR++')");
		l->body.s = c3.end;
		l->body.e = end;
	}
	(void)at;
	return l->lo.s == l->lo.e || l->hi.s == l->hi.e ?
	       hml__directive_error(src, path, &first, "over(): the loop needs both bounds") : 0;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* [VAR] [VAR + N] [VAR - N] [N + VAR] between '[' and ']' at t. */
static int offset_of(dscan *sc, const char *src, const char *var, size_t nvar, int64_t *off,
                     size_t *close)
{
	dtok t[5];
	int n = 0;

	int depth = 0, many = 0;

	for (;;) {
		dtok x = hml__dscan_next(sc);
		if (x.kind == DT_EOF)
			return -1;
		if (tok_is(src, &x, "[", 1))
			depth++;
		if (tok_is(src, &x, "]", 1) && depth-- == 0) {
			*close = x.end;
			break;
		}
		if (n == 4)
			many = 1;
		else
			t[n++] = x;
	}
	if (many)
		return -1;
	if (n == 1 && tok_is(src, &t[0], var, nvar)) {
		*off = 0;
		return 0;
	}
	if (n == 3 && tok_is(src, &t[0], var, nvar) && t[2].kind == DT_NUMBER &&
	    (tok_is(src, &t[1], "+", 1) || tok_is(src, &t[1], "-", 1))) {
		char *e;
		long long v = strtoll(src + t[2].start, &e, 10);
		if (e != src + t[2].end || v > 1000000)
			return -1;
		*off = src[t[1].start] == '-' ? -v : v;
		return 0;
	}
	if (n == 3 && t[0].kind == DT_NUMBER && tok_is(src, &t[1], "+", 1) && tok_is(src, &t[2], var, nvar)) {
		char *e;
		long long v = strtoll(src + t[0].start, &e, 10);
		if (e != src + t[0].end || v > 1000000)
			return -1;
		*off = v;
		return 0;
	}
	return -1;
}

int hml__dsubscripts(int64_t *off, int *n, int max, const char *src, const char *path,
                     dspan body, const char *name, size_t nname, const char *var,
                     size_t nvar, const dtok *at)
{
	dscan sc;
	dtok t, prev;
	int line, col;

	*n = 0;
	hml__dscan_where(src, body.s, &line, &col);
	hml__dscan_init(&sc, src, body.s, body.e, line, body.s - (size_t)(col - 1), 0);
	memset(&prev, 0, sizeof(prev));
	for (t = hml__dscan_next(&sc); t.kind != DT_EOF; prev = t, t = hml__dscan_next(&sc)) {
		dtok use = t;
		size_t close = 0, save;
		int64_t o;
		int k;
		if (!tok_is(src, &t, name, nname) || tok_is(src, &prev, ".", 1) || tok_is(src, &prev, "->", 2))
			continue;
		t = hml__dscan_next(&sc);
		if (!tok_is(src, &t, "[", 1))
			return hml__directive_error(src, path, &use,
				"over() cannot derive a functor: the array is used without a subscript");
		if (offset_of(&sc, src, var, nvar, &o, &close) < 0) {
			use.end = close ? close : use.end;
			return hml__directive_error(src, path, &use,
				"over() cannot derive a functor from this subscript (it takes [I], [I+C] or [I-C])");
		}
		save = sc.pos;
		{
			dscan peek = sc;
			dtok nx = hml__dscan_next(&peek);
			if (tok_is(src, &nx, "[", 1)) {
				use.end = nx.end;
				return hml__directive_error(src, path, &use,
					"over() cannot derive a functor from a second subscript");
			}
		}
		sc.pos = save;
		for (k = 0; k < *n && off[k] != o; k++)
			;
		if (k == *n) {
			if (*n == max)
				return hml__directive_error(src, path, &use, "over(): too many distinct subscripts");
			off[(*n)++] = o;
		}
		t.end = close;
	}
	if (sc.error)
		return hml__directive_error(src, path, &sc.error_at, sc.error);
	if (*n == 0)
		return hml__directive_error(src, path, at, "over() cannot derive a functor: an array of the clause is not subscripted in the loop");
	qsort(off, (size_t)*n, sizeof(off[0]), cmp64);
	return 0;
}
