/*
 * lib/directive/scan.c - the lexer (scan.h).
 *
 * Continuations are handled by one primitive, peek(): it looks through
 * backslash-newline pairs, so a comment, literal or identifier split over
 * lines is still one token, and line numbers stay right.
 */
#include <string.h>

#include "directive/scan.h"

/* Offset of the next real character at or after p (skipping "\\\n" and
 * "\\\r\n" pairs). */
static size_t skip_splices(const dscan *s, size_t p)
{
	while (p + 1 < s->end && s->src[p] == '\\') {
		if (s->src[p + 1] == '\n')
			p += 2;
		else if (p + 2 < s->end && s->src[p + 1] == '\r' && s->src[p + 2] == '\n')
			p += 3;
		else
			break;
	}
	return p;
}

static int peek_at(const dscan *s, int k)
{
	size_t p = skip_splices(s, s->pos);

	while (k-- > 0) {
		if (p >= s->end)
			return -1;
		p = skip_splices(s, p + 1);
	}
	return p < s->end ? (unsigned char)s->src[p] : -1;
}

static int peek(const dscan *s)
{
	return peek_at(s, 0);
}

/* Advance past one character (and the splices before it), counting lines. */
static void adv(dscan *s)
{
	size_t p = skip_splices(s, s->pos);

	for (size_t q = s->pos; q < p && q < s->end; q++)
		if (s->src[q] == '\n') {
			s->line++;
			s->line_start = q + 1;
		}
	if (p < s->end && s->src[p] == '\n') {
		s->line++;
		s->line_start = p + 1;
	}
	s->pos = p < s->end ? p + 1 : s->end;
}

void hml__dscan_init(dscan *s, const char *src, size_t start, size_t end, int line,
                     size_t line_start, int in_pp)
{
	memset(s, 0, sizeof(*s));
	s->src = src;
	s->pos = start;
	s->end = end;
	s->line = line;
	s->line_start = line_start;
	s->in_pp = in_pp;
}

static int is_ident(int c, int first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '$' ||
	       c >= 0x80 || (!first && c >= '0' && c <= '9');
}

/* Stop at an unterminated comment or literal: the error's token is the
 * rest of its line, from where it starts. */
static void fail(dscan *s, const dtok *t, const char *what)
{
	size_t e = t->start;

	while (e < s->end && s->src[e] != '\n')
		e++;
	s->error = what;
	s->error_at = *t;
	s->error_at.kind = DT_PUNCT;
	s->error_at.end = e;
	s->pos = s->end;
}

/* The rest of a quoted literal after its opening quote q. */
static void literal(dscan *s, dtok *t, int q)
{
	int c;

	while ((c = peek(s)) != -1 && c != q && c != '\n') {
		adv(s);
		if (c == '\\' && peek(s) != -1)
			adv(s);
	}
	if (c != q)
		fail(s, t, q == '"' ? "unterminated string literal" : "unterminated character literal");
	else
		adv(s);
}

/* R"delim( ... )delim" after the R and the quote. */
static void raw_string(dscan *s, dtok *t)
{
	char delim[20];
	size_t n = 0, p;

	while (peek(s) != '(' && peek(s) != -1 && n < 16)
		delim[n++] = (char)peek(s), adv(s);
	if (peek(s) != '(') {
		fail(s, t, "malformed raw string literal");
		return;
	}
	delim[n] = '"';
	for (p = s->pos; p + n + 1 < s->end; p++)
		if (s->src[p] == ')' && memcmp(s->src + p + 1, delim, n + 1) == 0) {
			while (s->pos < p + n + 2)
				adv(s);
			return;
		}
	fail(s, t, "unterminated raw string literal");
}

/* Whitespace and comments; stops at a newline inside a preprocessor line. */
static void skip_space(dscan *s)
{
	for (;;) {
		int c = peek(s);

		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' ||
		    (c == '\n' && !s->in_pp)) {
			adv(s);
		} else if (c == '/' && peek_at(s, 1) == '/') {
			while ((c = peek(s)) != -1 && c != '\n')
				adv(s);
		} else if (c == '/' && peek_at(s, 1) == '*') {
			dtok t = { DT_EOF, s->pos, s->pos, s->line, (int)(s->pos - s->line_start) + 1 };
			adv(s), adv(s);
			while ((c = peek(s)) != -1 && !(c == '*' && peek_at(s, 1) == '/'))
				adv(s);
			if (c == -1) {
				fail(s, &t, "unterminated comment");
				return;
			}
			adv(s), adv(s);
		} else {
			return;
		}
	}
}

/* Is the token starting at s->pos the first non-blank of its line? */
static int at_line_start(const dscan *s)
{
	size_t p = s->pos;

	while (p > 0 && (s->src[p - 1] == ' ' || s->src[p - 1] == '\t'))
		p--;
	return p == 0 || s->src[p - 1] == '\n';
}

static void pp_line(dscan *s)
{
	int c;

	s->in_pp = 1;
	adv(s);
	for (;;) {
		skip_space(s);
		c = peek(s);
		if (c == -1 || c == '\n' || s->error)
			break;
		if (c == '"' || c == '\'') {
			dtok t = { DT_EOF, s->pos, s->pos, s->line, (int)(s->pos - s->line_start) + 1 };
			adv(s);
			literal(s, &t, c);
		} else {
			adv(s);
		}
	}
	s->in_pp = 0;
}

static const char *const two[] = { "->", "++", "--", "<=", ">=", "+=", "-=", "::", "==", "!=",
                                    "&&", "||", "<<", ">>", NULL };

dtok hml__dscan_next(dscan *s)
{
	dtok t;
	int c;

	skip_space(s);
	t.start = skip_splices(s, s->pos);
	t.line = s->line;
	t.col = (int)(t.start - s->line_start) + 1;
	c = peek(s);
	if (c == -1 || s->error || (c == '\n' && s->in_pp)) {
		t.kind = DT_EOF;
	} else if (c == '#' && !s->in_pp && at_line_start(s)) {
		t.kind = DT_PP;
		pp_line(s);
	} else if (is_ident(c, 1)) {
		t.kind = DT_IDENT;
		while (is_ident(peek(s), 0))
			adv(s);
		c = peek(s);
		if (c == '"' || c == '\'') {
			/* an encoding prefix (L, u8, u, U) or a raw string (R, u8R, ...) */
			size_t n = s->pos - t.start;
			const char *w = s->src + t.start;
			int raw = n && w[n - 1] == 'R' && c == '"';
			if (raw || (n <= 2 && (w[0] == 'L' || w[0] == 'u' || w[0] == 'U'))) {
				t.kind = c == '"' ? DT_STRING : DT_CHAR;
				adv(s);
				if (raw)
					raw_string(s, &t);
				else
					literal(s, &t, c);
			}
		}
	} else if ((c >= '0' && c <= '9') || (c == '.' && peek_at(s, 1) >= '0' && peek_at(s, 1) <= '9')) {
		t.kind = DT_NUMBER;
		for (;;) {
			c = peek(s);
			if ((c == '+' || c == '-') && s->pos > t.start &&
			    strchr("eEpP", s->src[s->pos - 1]) != NULL)
				adv(s);
			else if (is_ident(c, 0) || c == '.' || c == '\'')
				adv(s);
			else
				break;
		}
	} else if (c == '"' || c == '\'') {
		t.kind = c == '"' ? DT_STRING : DT_CHAR;
		adv(s);
		literal(s, &t, c);
	} else {
		int d = peek_at(s, 1);
		t.kind = DT_PUNCT;
		adv(s);
		for (int i = 0; two[i]; i++)
			if (two[i][0] == c && two[i][1] == d) {
				adv(s);
				break;
			}
	}
	if (s->error)
		t.kind = DT_EOF;
	t.end = s->pos;
	return t;
}

int hml__dtok_is(const dscan *s, const dtok *t, const char *w)
{
	size_t n = strlen(w);

	return t->kind != DT_EOF && t->end - t->start == n && memcmp(s->src + t->start, w, n) == 0;
}

void hml__dscan_where(const char *src, size_t off, int *line, int *col)
{
	size_t ls = 0;
	int l = 1;

	for (size_t i = 0; i < off; i++)
		if (src[i] == '\n') {
			l++;
			ls = i + 1;
		}
	*line = l;
	*col = (int)(off - ls) + 1;
}
