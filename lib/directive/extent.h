/*
 * lib/directive/extent.h - what a region directive applies to (internal):
 * the extent of the statement after it, the header of a for loop, and the
 * subscripts of an array in a loop body (over(i)).
 */
#ifndef HML_DIRECTIVE_EXTENT_H
#define HML_DIRECTIVE_EXTENT_H

#include <stdint.h>

#include "directive/clause.h"

/*
 * The statement that follows the directive line `pp`: a block, a
 * selection or iteration statement (with its body, and else), or an
 * expression statement up to its ';'. Preprocessor lines before and inside
 * it are skipped, the inactive branches of #if/#elif/#else not counted (the
 * first branch is); a conditional it opens must close in it. *start: the
 * statement's first token (after any preprocessor lines), *end: just past
 * its last. HML_ESYNTAX for: no statement, unbalanced braces, a `return`
 * or `goto` inside, or a `break` or `continue` that is not inside a loop
 * (or, for `break`, a switch) of the statement (the region must end
 * where it began), another hml
 * directive inside, a conditional that crosses its end.
 */
int hml__dstmt_extent(const char *src, const char *path, const dtok *pp, size_t *start,
                      size_t *end);

/* The loop `for ([type] I = LO; I < HI; I++)` at [start, end) for over(I):
 * spans of LO and HI (hi_plus_one: the condition was I <= HI) and of the
 * body. HML_ESYNTAX naming the token that does not fit. */
typedef struct dloop {
	dspan lo, hi, body;
	dspan type;          /* the index's type when the loop declares it, else empty */
	int hi_plus_one;
} dloop;
int hml__dfor_loop(dloop *l, const char *src, const char *path, size_t start, size_t end,
                   const char *var, size_t nvar, const dtok *at);

/* The offsets c of every subscript `name[var + c]` in [s, e), distinct,
 * ascending, into off[0 .. *n) (at most `max`). HML_ESYNTAX naming the
 * first use that is not of that form, or when there is none. */
int hml__dsubscripts(int64_t *off, int *n, int max, const char *src, const char *path,
                     dspan body, const char *name, size_t nname, const char *var,
                     size_t nvar, const dtok *at);

#endif
