/*
 * runtime/src/functor_internal.h - parsed functors and domains, shared by the
 * parser (functor.c) and the binder (tmap.c). Internal.
 *
 * Expressions live in a node pool. Nodes are appended after their operands,
 * so every operand has a smaller index than the node that uses it: one pass
 * over the pool in index order evaluates every expression (no recursion).
 * Every expression is affine in the sample indices; symbols (names that are
 * not indices) get their values when a functor is bound.
 */
#ifndef HML_FUNCTOR_INTERNAL_H
#define HML_FUNCTOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hml/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

enum hml__op {
	HML__NUM,   /* integer literal: value */
	HML__IDX,   /* sample index: value = its ordinal on the left-hand side */
	HML__SYM,   /* symbol: value = its slot in hml__exprs.syms */
	HML__NEG,   /* -a */
	HML__ADD,   /* a + b */
	HML__SUB,   /* a - b */
	HML__MUL    /* a * b, at most one side holds a sample index */
};

typedef struct hml__node {
	int op;
	int a, b;            /* operand nodes, -1 when unused */
	int64_t value;
	int has_index;       /* the subtree names a sample index */
	int begin, end;      /* byte span in the source text */
} hml__node;

typedef struct hml__exprs {
	hml__node *nodes;
	int n, cap;
	char **syms;         /* distinct symbol names, in order of appearance */
	int nsyms, symcap;
} hml__exprs;

/* One subscript of a piece: a point (start only) or a range. */
typedef struct hml__sub {
	int is_range;
	int start, stop, step;   /* nodes; stop and step -1 when absent */
	int feat;                /* a named feature dimension's ordinal on the
	                          * left-hand side (the subscript is its name:
	                          * the range start:stop of that dimension), or -1 */
} hml__sub;

typedef struct hml__piece {
	int nsubs;
	hml__sub subs[HML_MAX_DIMS];
	int begin, end;          /* byte span of "[...]" in the text */
} hml__piece;

struct hml_functor {
	char *text;
	char *name;                       /* NULL when unnamed */
	int nindices;
	char *indices[HML_MAX_DIMS];
	int nfeatures;
	int fstart[HML_MAX_DIMS], fstop[HML_MAX_DIMS];   /* nodes */
	char *fnames[HML_MAX_DIMS];       /* "t" of "t = 0:T", else NULL */
	int npieces, piececap;
	hml__piece *pieces;
	hml__exprs x;
};

/* A parsed domain: one slice start:stop[:step] per sample index. Only the
 * first HML_MAX_DIMS slices are kept; nslices counts them all. */
typedef struct hml__domain {
	int nslices;
	int start[HML_MAX_DIMS], stop[HML_MAX_DIMS], step[HML_MAX_DIMS];
	hml__exprs x;
} hml__domain;

/* c0 + sum_k c[k] * index_k */
typedef struct hml__affine {
	int64_t c0;
	int64_t c[HML_MAX_DIMS];
} hml__affine;

/* Checked 64-bit arithmetic: *r = a op b, nonzero on overflow. */
#if defined(__GNUC__)
#  define HML__ADD_OVF(a, b, r) __builtin_add_overflow(a, b, r)
#  define HML__SUB_OVF(a, b, r) __builtin_sub_overflow(a, b, r)
#  define HML__MUL_OVF(a, b, r) __builtin_mul_overflow(a, b, r)
#else
#  define HML__ADD_OVF(a, b, r) (*(r) = (a) + (b), 0)
#  define HML__SUB_OVF(a, b, r) (*(r) = (a) - (b), 0)
#  define HML__MUL_OVF(a, b, r) (*(r) = (a) * (b), 0)
#endif

/* Nonzero when no sample index coefficient of `a` is set. */
int hml__affine_is_const(const hml__affine *a);

/* Parse a domain string; HML_ESYNTAX with "domain '...': column N: ...".
 * Release `out` with hml__domain_release() whatever the result. */
int hml__domain_parse(hml__domain *out, const char *text);
void hml__domain_release(hml__domain *d);

/* Values of the symbols of `x` (values[k] for x->syms[k]). Fails with
 * HML_EINVALID "unknown symbol 'm' in <kind> '<text>'". */
int hml__exprs_resolve(const hml__exprs *x, const hml_symbol *symbols,
                       size_t nsymbols, int64_t *values,
                       const char *kind, const char *text);

/* Evaluate every node of `x` into vals[0..x->n) given the symbol values.
 * Fails with HML_EINVALID on 64-bit overflow. */
int hml__exprs_eval(const hml__exprs *x, const int64_t *symvals,
                    hml__affine *vals, const char *kind, const char *text);

/* Copy `text` into buf for quoting in a message: one line, long texts cut
 * with "...". */
void hml__clip(char *buf, size_t size, const char *text);

#ifdef __cplusplus
}
#endif
#endif
