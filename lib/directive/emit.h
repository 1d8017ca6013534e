/*
 * lib/directive/emit.h - generating the code of one directive (internal).
 */
#ifndef HML_DIRECTIVE_EMIT_H
#define HML_DIRECTIVE_EMIT_H

#include <stdarg.h>

#include "core/error.h"
#include "directive/clause.h"

typedef struct dbuf {
	char *p;
	size_t n, cap;
	int oom;
} dbuf;

void hml__dbuf_put(dbuf *b, const char *s, size_t n);
void hml__dbuf_printf(dbuf *b, const char *fmt, ...) HML__PRINTF(2, 3);
/* `s` as the body of a C string literal (quotes and backslashes escaped,
 * continuations and newlines made spaces). */
void hml__dbuf_cstr(dbuf *b, const char *s, size_t n);

/* The declarations seen so far (a later one of the same name wins). */
typedef struct ddecls {
	ddirective **d;
	int n, cap;
} ddecls;

typedef struct demit {
	const char *src, *path, *base;  /* base: path without folders, for default labels */
	ddecls decls;
	dbuf *out;
} demit;

/* The code that replaces an ml directive and its statement [s, e):
 * everything from the directive's line to the end of the statement. */
int hml__demit_ml(demit *m, const ddirective *d, size_t s, size_t e);

/* The code of `#pragma hml qoi(...)`, on the directive's line. */
int hml__demit_qoi(demit *m, const ddirective *d);
/* qoi(a[lo:hi, ...]) not from 0: gathered through hml_dir_qoi_slice() with
 * the array's row lengths (declared shape or C type). */
int hml__demit_qoi_slice(demit *m, const ddirective *d);

/* `pre`, the text of span `sp` of src and `post`; `dflt` for an empty span. */
void hml__dput_span_or(dbuf *b, const char *src, dspan sp, const char *pre, const char *post,
                       const char *dflt);

/* What a translation carries before its first directive (the runtime's
 * header, the dtype macros) and at its end (hml__dir_ck), prelude.c. */
extern const char hml__dprelude_head[];
extern const char hml__dprelude_tail[];

#endif
