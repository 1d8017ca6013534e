/*
 * lib/directive/directive.h - the directive translator: C (or C++) source
 * annotated with `#pragma approx` (HPAC-ML's spelling, unchanged) or
 * `#pragma hml` directives in, the same source calling the hml runtime API
 * out (hml-cc(1) has the grammar and the translation).
 *
 * Why a hand-written lexer and not libclang: the translator only has to
 * find directive lines, parse their clauses and find the end of the
 * statement that follows; that needs comments, literals, continuations,
 * preprocessor lines, #if branches and nested brackets right, which a lexer
 * of a few hundred lines does (scan.c), while libclang would add a heavy
 * dependency, a second of start-up to every compile, and a need for the
 * user's full preprocessor context (include paths, macros) just to find
 * where a block ends. User expressions are copied as written and compiled
 * by the user's own compiler, which then checks them.
 */
#ifndef HML_DIRECTIVE_H
#define HML_DIRECTIVE_H

#include <stddef.h>

/*
 * Translate the NUL-terminated source `src` (`path` names it in #line
 * directives and messages). On success *out (malloc'ed, NUL-terminated,
 * yours to free) holds the translation and *count the number of
 * directives found; with no directive *out is NULL and *count 0 (compile
 * the original). Fails with HML_ESYNTAX and the message
 * "PATH:LINE:COL: WHAT: 'TOKEN'" for a malformed directive, HML_ENOMEM.
 */
int hml__directive_translate(char **out, int *count, const char *src, const char *path);

/* Nonzero when src holds a line `#pragma approx` or `#pragma hml` (a quick
 * test that scans without parsing). */
int hml__directive_present(const char *src);

#endif
