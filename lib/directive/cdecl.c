/*
 * lib/directive/cdecl.c - the C declaration of an array (cdecl.h).
 *
 * Not a C parser: a walk over scan.c's tokens that keeps, per brace depth,
 * the last declaration of the name. A declaration is the name right after
 * another identifier (a type, a typedef name or a qualifier: in C two
 * identifiers in a row only occur in declarations), or `( * name )`
 * after one; inside parentheses (a function's parameters) it belongs to
 * the block that follows. Leaving a block forgets what was declared in it,
 * except for a structure's member (p->u, s.u), whose last declaration
 * counts.
 */
#include <string.h>

#include "directive/cdecl.h"
#include "directive/scan.h"

#define DEPTHS 64

/* Identifiers that precede an expression, not a declarator. */
static int expr_keyword(const char *w, size_t n)
{
	static const char *const kw[] = { "return", "sizeof", "case", "goto", "else", "do",
		"typeof", "alignof", "_Alignof", "throw", "delete", "new", "co_return", NULL };

	for (int i = 0; kw[i]; i++)
		if (strlen(kw[i]) == n && memcmp(kw[i], w, n) == 0)
			return 1;
	return 0;
}

static int punct(const char *src, const dtok *t, char c)
{
	return t->kind == DT_PUNCT && t->end - t->start == 1 && src[t->start] == c;
}

/* The '[' ... ']' groups from t on (t: the token after the declarator). */
static int brackets(dscan *sc, const char *src, dtok t)
{
	int dims = 0, depth = 0;

	while (punct(src, &t, '[')) {
		dims++;
		do {
			depth += punct(src, &t, '[') - punct(src, &t, ']');
			if (depth > 0)
				t = hml__dscan_next(sc);
		} while (depth > 0 && t.kind != DT_EOF);
		t = hml__dscan_next(sc);
	}
	return dims;
}

int hml__dcdecl_dims(const char *src, size_t upto, const char *name, size_t n, int member)
{
	int found[DEPTHS], depth = 0, paren = 0, d, last = 0;
	dtok t, p1, p2;
	dscan sc;

	for (d = 0; d < DEPTHS; d++)
		found[d] = -1;
	memset(&p1, 0, sizeof(p1));
	p2 = p1;
	hml__dscan_init(&sc, src, 0, upto, 1, 0, 0);
	for (t = hml__dscan_next(&sc); t.kind != DT_EOF; p2 = p1, p1 = t, t = hml__dscan_next(&sc)) {
		int at = depth + (paren > 0), dims = -1;
		if (t.kind == DT_PP)
			continue;
		if (punct(src, &t, '(') || punct(src, &t, ')')) {
			paren += punct(src, &t, '(') ? 1 : -1;
		} else if (punct(src, &t, '{') || punct(src, &t, '}')) {
			int open = punct(src, &t, '{');
			if (!open && depth > 0 && depth < DEPTHS)
				found[depth] = -1;
			depth += open ? 1 : depth > 0 ? -1 : 0;
			paren = 0;
		} else if (punct(src, &t, ';') && paren == 0 && depth + 1 < DEPTHS) {
			found[depth + 1] = -1;   /* a prototype's parameters */
		}
		if (t.kind != DT_IDENT || t.end - t.start != n || memcmp(src + t.start, name, n) != 0)
			continue;
		if (p1.kind == DT_IDENT && !expr_keyword(src + p1.start, p1.end - p1.start)) {
			dscan peek = sc;
			dims = brackets(&peek, src, hml__dscan_next(&peek));
		} else if (punct(src, &p1, '*') && punct(src, &p2, '(')) {
			dscan peek = sc;
			dtok close = hml__dscan_next(&peek);
			if (punct(src, &close, ')'))
				dims = 1 + brackets(&peek, src, hml__dscan_next(&peek));
		}
		if (dims >= 0 && at >= 0 && at < DEPTHS)
			found[at] = dims;
		if (dims >= 0)
			last = dims;
	}
	if (member)
		return last;
	for (d = depth < DEPTHS ? depth : DEPTHS - 1; d >= 0; d--)
		if (found[d] >= 0)
			return found[d];
	return 0;
}
