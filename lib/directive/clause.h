/*
 * lib/directive/clause.h - one directive line parsed (internal).
 *
 * Both spellings share one grammar (hml-cc(1)):
 *
 *   #pragma approx declare tensor_functor(NAME: [LHS] = ([RHS], ...))
 *   #pragma approx declare tensor(NAME: FUNCTOR(arr[lo:hi], ...))
 *   #pragma approx ml(infer|offline|predicated[:COND]) in(...) out(...)
 *           [model(EXPR)] [label(EXPR)] [if(COND)]
 *   #pragma hml ml[(off|collect|infer|interleave|shadow)] ... [inout(...)]
 *           [mode(EXPR)] [interleave(K)] [shadow(F)] [over(I)] [seek(ROWS)] [db(EXPR)]
 *   #pragma hml qoi(arr[lo:hi]) [name(EXPR)]
 *   #pragma hml declare shape(arr[[D0]][D1]...)
 *
 * Every part is kept as a span of the source file, so generated code
 * copies the user's own expressions and errors point at their columns.
 */
#ifndef HML_DIRECTIVE_CLAUSE_H
#define HML_DIRECTIVE_CLAUSE_H

#include <stddef.h>

#include "directive/scan.h"

#define DMAX_DIMS 4     /* subscripts per array (hml_array up to 4-D here) */
#define DMAX_ARGS 16    /* arrays per functor application */
#define DMAX_ITEMS 16   /* items per in/out/inout clause */

typedef struct dspan { size_t s, e; } dspan;   /* s == e: absent */

/* One subscript: a point `lo`, or a slice `lo:hi[:step]` (range set). */
typedef struct dslice { dspan lo, hi, step; int range; dtok at; } dslice;

typedef struct darray {
	dspan base;                 /* the array expression: a, p->a, s.a */
	dslice sub[DMAX_DIMS];
	int nsub;
	dtok at;
} darray;

typedef enum ditem_kind {
	DI_NAME,      /* a declared tensor, a scalar, or an array of over() */
	DI_APPLY,     /* FUNCTOR(arr[...], ...) */
	DI_SECTION    /* arr[lo:len] or arr[i]: one row of a region in a loop body */
} ditem_kind;

typedef struct ditem {
	ditem_kind kind;
	dspan name;                 /* the name, the functor or the array */
	darray arg[DMAX_ARGS];      /* DI_APPLY: the arguments; DI_SECTION: arg[0] */
	int narg;
	dtok at;
} ditem;

typedef enum ddir_kind { DD_FUNCTOR, DD_TENSOR, DD_ML, DD_QOI, DD_SHAPE } ddir_kind;

/* What the mode clause of ml(...) says. */
typedef enum dmode {
	DM_DEFAULT,   /* #pragma hml ml: the environment decides (off by default) */
	DM_OFF, DM_COLLECT, DM_INFER, DM_INTERLEAVE, DM_SHADOW,
	DM_PREDICATED /* infer where COND holds, the original code elsewhere */
} dmode;

typedef struct ddirective {
	ddir_kind kind;
	int hml;                    /* spelled #pragma hml */
	dtok at;                    /* the '#' */
	/* declare: NAME and the functor's text, or the tensor's application;
	 * shape: NAME is the array, shape.sub[k].lo its extents (the first
	 * may be empty: not known) */
	dspan name, text;
	ditem apply;
	darray shape;
	/* ml */
	dmode mode;
	dspan pred;                 /* predicated:COND or if(COND) */
	ditem in[DMAX_ITEMS], out[DMAX_ITEMS], inout[DMAX_ITEMS];
	int nin, nout, ninout;
	dspan model, label, mode_expr, interleave, shadow, over, seek, db;
	dtok over_at;
	/* qoi */
	ditem qoi;
	dspan qoi_name;
} ddirective;

/*
 * Is the preprocessor line [start, end) of src an hml directive? 1 for
 * `#pragma approx ...` or `#pragma hml ...`, else 0.
 */
int hml__directive_is(const char *src, size_t start, size_t end);

/*
 * Parse the directive line token `pp` of src (a file named `path` in
 * messages) into *d. HML_ESYNTAX with "PATH:LINE:COL: WHAT: 'TOKEN'".
 */
int hml__directive_parse(ddirective *d, const char *src, const char *path, const dtok *pp);

/* HML_ESYNTAX "PATH:LINE:COL: WHAT: 'TOKEN'" at token t of src. */
int hml__directive_error(const char *src, const char *path, const dtok *t, const char *what);

#endif
