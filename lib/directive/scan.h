/*
 * lib/directive/scan.h - the C lexer of the directive translator (internal).
 *
 * A scanner walks a byte range of a source file and returns tokens with
 * their offsets, lines and columns. It knows what the translator must not
 * be fooled by: comments (both kinds), string and character literals (with
 * encoding prefixes and C++ raw strings), backslash-newline continuations
 * anywhere, and preprocessor lines, which come back as one token spanning
 * the whole logical line. It does not expand macros or evaluate #if: the
 * translator copies user text verbatim and lets the compiler do that.
 */
#ifndef HML_DIRECTIVE_SCAN_H
#define HML_DIRECTIVE_SCAN_H

#include <stddef.h>

typedef enum dtok_kind {
	DT_EOF = 0,
	DT_IDENT,
	DT_NUMBER,
	DT_STRING,
	DT_CHAR,
	DT_PUNCT,   /* one character, or "->", "++", "--", "<=", ">=", "+=", "-=", "::" */
	DT_PP       /* a whole preprocessor line, '#' to its end (newline excluded) */
} dtok_kind;

typedef struct dtok {
	dtok_kind kind;
	size_t start, end;  /* byte offsets [start, end) in the source */
	int line, col;      /* of start, both from 1 (columns count bytes) */
} dtok;

typedef struct dscan {
	const char *src;
	size_t pos, end;    /* scanning [pos, end) */
	int line;
	size_t line_start;  /* offset where `line` begins */
	int in_pp;          /* inside a preprocessor line: '#' is punctuation */
	const char *error;  /* set on an unterminated comment or literal */
	dtok error_at;
} dscan;

/* Scan [start, end) of src; line/line_start give the position of start. */
void hml__dscan_init(dscan *s, const char *src, size_t start, size_t end, int line,
                     size_t line_start, int in_pp);

/* The next token (DT_EOF at the end, or after an error: s->error). */
dtok hml__dscan_next(dscan *s);

/* Nonzero when token t's text equals the C string `w`. */
int hml__dtok_is(const dscan *s, const dtok *t, const char *w);

/* Line and column of offset `off` (scanning from the file's start). */
void hml__dscan_where(const char *src, size_t off, int *line, int *col);

#endif
