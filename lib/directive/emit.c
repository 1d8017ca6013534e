/*
 * lib/directive/emit.c - the code of an ml or qoi directive (emit.h).
 *
 * A region directive becomes a block on the directive's line: its arrays
 * described (hml_array), every integer the maps need evaluated into
 * symbols (so any C expression may bound a slice), the maps listed, and
 * the user's statement under `if (hml__dir_ck(hml_dir_begin(...)))`, kept
 * on its own lines by #line. The runtime's directive calls
 * (hml/directive.h) open the region on first use, bind it anew when a size
 * changes, and point it at the arrays each call.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "directive/cdecl.h"
#include "directive/emit.h"
#include "directive/extent.h"

#define DMAX_SYMS 64

typedef struct site {
	demit *m;
	const ddirective *d;
	dspan seek_lo;              /* over(): the loop's lower bound, sought */
	int over;                   /* over(): loop holds the loop's parts */
	dloop loop;
	dbuf arrays, maps, syms;
	char names[DMAX_SYMS][64];
	int nsym, nmaps, narr;
	int rows;                   /* a row site: a region of one row per call */
	const char *where;          /* the C expression of the site's "file:line" */
} site;

/* ---- functors ------------------------------------------------------ */

typedef struct finfo {
	dspan idx[DMAX_DIMS];
	dspan fname[DMAX_DIMS], frange[DMAX_DIMS];   /* "t = 0:T": t and 0:T */
	int nidx, nfname, npieces;
	dspan sub[DMAX_ARGS][DMAX_DIMS];
	int nsub[DMAX_ARGS];
	dtok at;
} finfo;

static int span_is(const char *src, dspan a, dspan b)
{
	return a.e - a.s == b.e - b.s && memcmp(src + a.s, src + b.s, a.e - a.s) == 0;
}

/* A subscript that names a feature dimension ("t" under "t = 0:T") reads
 * that dimension's range: its span; any other subscript its own. */
static dspan named_range(const char *src, const finfo *f, dspan sub)
{
	dscan sc;
	dtok a, b;

	hml__dscan_init(&sc, src, sub.s, sub.e, 1, 0, 1);
	a = hml__dscan_next(&sc);
	b = hml__dscan_next(&sc);
	if (a.kind == DT_IDENT && b.kind == DT_EOF)
		for (int k = 0; k < f->nfname; k++)
			if (span_is(src, (dspan){ a.start, a.end }, f->fname[k]))
				return f->frange[k];
	return sub;
}

static int span_has_ident(const char *src, dspan sp, dspan id)
{
	dscan sc;
	dtok t;
	size_t n = id.e - id.s;

	hml__dscan_init(&sc, src, sp.s, sp.e, 1, 0, 1);
	for (t = hml__dscan_next(&sc); t.kind != DT_EOF; t = hml__dscan_next(&sc))
		if (t.kind == DT_IDENT && t.end - t.start == n && memcmp(src + t.start, src + id.s, n) == 0)
			return 1;
	return 0;
}

/* Split [LHS] = ([..], ...) into indices and piece subscripts. */
static int functor_info(finfo *f, const demit *m, dspan text, const dtok *at)
{
	dscan sc;
	dtok t;
	int depth = 0, piece = -1, lhs = 0;
	size_t from = 0;

	memset(f, 0, sizeof(*f));
	f->at = *at;
	hml__dscan_init(&sc, m->src, text.s, text.e, at->line, at->start - (size_t)(at->col - 1), 1);
	for (t = hml__dscan_next(&sc); t.kind != DT_EOF; t = hml__dscan_next(&sc)) {
		char c = t.kind == DT_PUNCT && t.end - t.start == 1 ? m->src[t.start] : 0;
		if (c == '[' && depth == 0 && !lhs) {
			lhs = 1;
			from = t.end;
		} else if (c == '[' && depth == 1 && lhs == 2) {
			if (f->npieces == DMAX_ARGS)
				return hml__directive_error(m->src, m->path, &t, "too many pieces in the functor");
			piece = f->npieces++;
			from = t.end;
		}
		if (c == '(' || c == '[')
			depth++;
		if ((c == ',' || c == ']') && ((lhs == 1 && depth == 1) || (piece >= 0 && depth == 2))) {
			dspan sp = { from, t.start };
			if (lhs == 1) {
				dscan one;
				dtok a, b;
				hml__dscan_init(&one, m->src, sp.s, sp.e, 1, 0, 1);
				a = hml__dscan_next(&one);
				b = hml__dscan_next(&one);
				if (a.kind == DT_IDENT && b.kind == DT_EOF) {
					if (f->nidx == DMAX_DIMS)
						return hml__directive_error(m->src, m->path, &t, "too many sample indices");
					f->idx[f->nidx].s = a.start;
					f->idx[f->nidx++].e = a.end;
				} else if (a.kind == DT_IDENT && hml__dtok_is(&one, &b, "=") && f->nfname < DMAX_DIMS) {
					f->fname[f->nfname] = (dspan){ a.start, a.end };
					f->frange[f->nfname++] = (dspan){ b.end, sp.e };
				}
			} else {
				if (f->nsub[piece] == DMAX_DIMS)
					return hml__directive_error(m->src, m->path, &t, "too many subscripts (at most 4)");
				f->sub[piece][f->nsub[piece]++] = sp;
			}
			from = t.end;
		}
		if (c == ')' || c == ']')
			depth--;
		if (c == ']' && depth == 0 && lhs == 1)
			lhs = 2;
		if (c == ']' && depth == 1)
			piece = -1;
		if (depth < 0)
			return hml__directive_error(m->src, m->path, &t, "unbalanced bracket in the functor");
	}
	if (sc.error)
		return hml__directive_error(m->src, m->path, &sc.error_at, sc.error);
	if (lhs != 2 || f->npieces == 0 || depth != 0)
		return hml__directive_error(m->src, m->path, at,
		                            "a functor reads '[INDICES, 0:N] = ([SUBSCRIPTS], ...)'");
	/* A named feature dimension is a whole subscript (the runtime says so
	 * too, but only when the program runs) */
	for (int p = 0; p < f->npieces; p++)
		for (int d = 0; d < f->nsub[p]; d++)
			for (int k = 0; k < f->nfname; k++)
				if (span_has_ident(m->src, f->sub[p][d], f->fname[k]) &&
				    named_range(m->src, f, f->sub[p][d]).s == f->sub[p][d].s)
					return hml__directive_error(m->src, m->path, at,
						"a named feature dimension stands alone as a subscript, not in an expression");
	return 0;
}

/* ---- symbols and arrays ---------------------------------------------- */

/* A symbol for the C expression [s, e) (or "0" when empty); its name. */
static const char *sym_expr(site *st, const char *src, size_t s, size_t e, const char *dflt)
{
	char *name;

	if (st->nsym == DMAX_SYMS)
		return NULL;
	name = st->names[st->nsym++];
	snprintf(name, 64, "hml__%d", st->nsym - 1);
	hml__dbuf_printf(&st->syms, "\t\t{ \"%s\", (int64_t)(", name);
	if (s < e)
		hml__dbuf_put(&st->syms, src + s, e - s);
	else
		hml__dbuf_printf(&st->syms, "%s", dflt);
	hml__dbuf_printf(&st->syms, ") },\n");
	return name;
}



/* The value the slices give the functor symbol `name`: where a piece's
 * subscript reads 0:SYM, :SYM, 0:SYM+C or 0:SYM-C (C a number) and the
 * array applied there has a slice lo:hi in that dimension, SYM is hi - lo
 * (less C): the piece reads the elements the slice names. Writes the C
 * expression to out; 0 when no subscript reads the symbol so. */
static int slice_sym(const site *st, const finfo *f, const ditem *it, dspan name, char *out, size_t cap)
{
	const char *src = st->m->src;

	for (int p = 0; it && p < f->npieces && p < it->narg; p++)
		for (int d = 0; d < f->nsub[p] && d < it->arg[p].nsub; d++) {
			const dslice *sl = &it->arg[p].sub[d];
			dscan sc;
			dtok t[6];
			int k = 0, i = 0, zero;
			if (!sl->range || sl->hi.s == sl->hi.e || sl->step.s != sl->step.e)
				continue;
			dspan sub = named_range(src, f, f->sub[p][d]);
			memset(t, 0, sizeof(t));
			hml__dscan_init(&sc, src, sub.s, sub.e, 1, 0, 1);
			for (k = 0; k < 6 && (t[k] = hml__dscan_next(&sc)).kind != DT_EOF; k++)
				;
			if (k == 6)
				continue;
			if (t[i].kind == DT_NUMBER && hml__dtok_is(&sc, &t[i], "0"))
				i++;
			if (!hml__dtok_is(&sc, &t[i], ":") || t[i + 1].kind != DT_IDENT ||
			    t[i + 1].end - t[i + 1].start != name.e - name.s ||
			    memcmp(src + t[i + 1].start, src + name.s, name.e - name.s) != 0)
				continue;
			i += 2;
			if (t[i].kind != DT_EOF && !((hml__dtok_is(&sc, &t[i], "+") || hml__dtok_is(&sc, &t[i], "-")) &&
			                             t[i + 1].kind == DT_NUMBER && t[i + 2].kind == DT_EOF))
				continue;
			if (sl->hi.e - sl->hi.s + sl->lo.e - sl->lo.s + 40 > cap)
				continue;
			zero = sl->lo.s == sl->lo.e || (sl->lo.e - sl->lo.s == 1 && src[sl->lo.s] == '0');
			snprintf(out, cap, zero && t[i].kind == DT_EOF ? "%.*s" : "(%.*s)", (int)(sl->hi.e - sl->hi.s),
			         src + sl->hi.s);
			if (!zero)
				snprintf(out + strlen(out), cap - strlen(out), " - (%.*s)", (int)(sl->lo.e - sl->lo.s),
				         src + sl->lo.s);
			if (t[i].kind != DT_EOF)
				snprintf(out + strlen(out), cap - strlen(out), " %s %.*s",
				         src[t[i].start] == '+' ? "-" : "+", (int)(t[i + 1].end - t[i + 1].start),
				         src + t[i + 1].start);
			return 1;
		}
	return 0;
}

/* The functor's own symbols (identifiers that are not its indices): the
 * extents its pieces read from the slices of `it` (slice_sym), else the C
 * variables of the same names. */
static int functor_syms(site *st, dspan text, const finfo *f, const ditem *it)
{
	const char *src = st->m->src;
	char value[600];
	dscan sc;
	dtok t, prev;

	memset(&prev, 0, sizeof(prev));
	hml__dscan_init(&sc, src, text.s, text.e, 1, 0, 1);
	for (t = hml__dscan_next(&sc); t.kind != DT_EOF; prev = t, t = hml__dscan_next(&sc)) {
		size_t n = t.end - t.start;
		int j, known = 0;
		if (t.kind != DT_IDENT || n >= 64)
			continue;
		for (j = 0; j < f->nidx; j++)
			known |= f->idx[j].e - f->idx[j].s == n && memcmp(src + f->idx[j].s, src + t.start, n) == 0;
		for (j = 0; j < f->nfname; j++)
			known |= span_is(src, f->fname[j], (dspan){ t.start, t.end });
		for (j = 0; j < st->nsym; j++)
			known |= strlen(st->names[j]) == n && memcmp(st->names[j], src + t.start, n) == 0;
		/* hml's optional `name:` before the left-hand side */
		if (known || (prev.kind == DT_EOF && sc.pos < sc.end && src[sc.pos] == ':'))
			continue;
		if (st->nsym == DMAX_SYMS)
			return hml__directive_error(src, st->m->path, &f->at, "too many symbols in one directive");
		memcpy(st->names[st->nsym], src + t.start, n);
		st->names[st->nsym++][n] = 0;
		if (slice_sym(st, f, it, (dspan){ t.start, t.end }, value, sizeof(value)))
			hml__dbuf_printf(&st->syms, "\t\t{ \"%.*s\", (int64_t)(%s) },\n", (int)n, src + t.start, value);
		else
			hml__dbuf_printf(&st->syms, "\t\t{ \"%.*s\", (int64_t)(%.*s) },\n", (int)n, src + t.start,
			                 (int)n, src + t.start);
	}
	return 0;
}

static void array_call(site *st, int arr, int k, dspan name, const char *data_fmt, dspan data,
                       const char *dt_fmt, int ndim, const char *dims)
{
	const char *src = st->m->src;
	int n = (int)(name.e - name.s), dn = (int)(data.e - data.s);

	hml__dbuf_printf(&st->arrays, "\thml__dir_ck(hml_dir_array(&hml__a%d[%d], %s, \"%.*s\", ",
	                 arr, k, st->where, n, src + name.s);
	hml__dbuf_printf(&st->arrays, data_fmt, dn, src + data.s);
	hml__dbuf_printf(&st->arrays, ", ");
	hml__dbuf_printf(&st->arrays, dt_fmt, dn, src + data.s);
	hml__dbuf_printf(&st->arrays, ", %d, %s));\n", ndim, dims);
}

static void map_entry(site *st, int kind, const char *functor, size_t flen, const char *domain,
                      int arr, int n)
{
	hml__dbuf_printf(&st->maps, "\t\t{ %d, \"", kind);
	hml__dbuf_cstr(&st->maps, functor, flen);
	hml__dbuf_printf(&st->maps, "\", \"%s\", hml__a%d, %d },\n", domain, arr, n);
	st->nmaps++;
}

static const ddirective *find_decl(const demit *m, ddir_kind kind, dspan name);

/* A symbol for the C expression `text`; its index. */
static int sym_text(site *st, const char *text)
{
	if (st->nsym == DMAX_SYMS)
		return -1;
	snprintf(st->names[st->nsym], 64, "hml__%d", st->nsym);
	hml__dbuf_printf(&st->syms, "\t\t{ \"%s\", (int64_t)(%s) },\n", st->names[st->nsym], text);
	return st->nsym++;
}

/* Does every dimension after the first have a slice 0:HI (or :HI)? */
static int whole_rows(const char *src, const darray *a)
{
	for (int d = 1; d < a->nsub; d++) {
		const dslice *sl = &a->sub[d];
		size_t n = sl->lo.e - sl->lo.s;
		if (!sl->range || sl->hi.s == sl->hi.e || sl->step.s != sl->step.e ||
		    (n && !(n == 1 && src[sl->lo.s] == '0')))
			return 0;
	}
	return 1;
}

/* The extents of an array sliced in k > 1 dimensions come from a
 * declaration, not from the slices (a halo's 1:m-1 is no row length):
 * `#pragma hml declare shape(arr[D0][D1]...)`, else the array's C type
 * when it is declared as an array (T arr[N][M], a VLA, T (*arr)[M]): its
 * row lengths are then sizeof quotients. A pointer without either keeps
 * HPAC-ML's rule only where it cannot mislead: slices 0:HI after the
 * first dimension give the extents HI; any other slice is an error naming
 * the array. *indexed: the C type has the k dimensions (arr[0][0] is an
 * element). */
static int array_shape(site *st, const darray *a, char *dims, size_t n, int *indexed)
{
	const char *src = st->m->src, *path = st->m->path;
	const ddirective *sh = find_decl(st->m, DD_SHAPE, a->base);
	size_t id = a->base.e;
	int d, cdims;

	snprintf(dims, n, "HML_DIR_ROWS");
	*indexed = 0;
	if (a->nsub < 2) {
		snprintf(dims + strlen(dims), n - strlen(dims), ", 0, 0, 0");
		return 0;
	}
	while (id > a->base.s && (src[id - 1] == '_' || isalnum((unsigned char)src[id - 1])))
		id--;
	cdims = hml__dcdecl_dims(src, st->d->at.start, src + id, a->base.e - id, id > a->base.s);
	*indexed = cdims == a->nsub;
	if (sh && sh->shape.nsub != a->nsub) {
		char msg[160];
		snprintf(msg, sizeof(msg), "this array's declared shape has %d dimensions but it is sliced in %d",
		         sh->shape.nsub, a->nsub);
		return hml__directive_error(src, path, &a->at, msg);
	}
	if (!sh && cdims == 0 && whole_rows(src, a)) {   /* HPAC-ML's rule */
		for (d = 1; d < DMAX_DIMS; d++) {
			if (d >= a->nsub) {
				snprintf(dims + strlen(dims), n - strlen(dims), ", 0");
				continue;
			}
			if (!sym_expr(st, src, a->sub[d].hi.s, a->sub[d].hi.e, "0"))
				return hml__directive_error(src, path, &a->at, "too many symbols in one directive");
			snprintf(dims + strlen(dims), n - strlen(dims), ", hml__sym[%d].value", st->nsym - 1);
		}
		return 0;
	}
	if (!sh && cdims != a->nsub) {
		int nb = (int)(a->base.e - a->base.s);
		char msg[300];
		if (cdims > 0)
			snprintf(msg, sizeof(msg), "this array is declared with %d dimensions but sliced in %d", cdims,
			         a->nsub);
		else
			snprintf(msg, sizeof(msg), "the row length of this array is not known (a slice is no shape): "
			         "declare it as an array (T %.*s[N][M]) or by '#pragma hml declare shape(%.*s[N][M])'",
			         nb > 40 ? 40 : nb, src + a->base.s, nb > 40 ? 40 : nb, src + a->base.s);
		return hml__directive_error(src, path, &a->at, msg);
	}
	for (d = 0; d < DMAX_DIMS; d++) {
		char e[1024];
		int k;
		if (d >= a->nsub || (d == 0 && (!sh || sh->shape.sub[0].lo.s == sh->shape.sub[0].lo.e))) {
			if (d > 0)
				snprintf(dims + strlen(dims), n - strlen(dims), ", 0");
			continue;
		}
		if (sh) {
			k = sh->shape.sub[d].lo.e - sh->shape.sub[d].lo.s < 900 ? 0 : -1;
			snprintf(e, sizeof(e), "%.*s", (int)(sh->shape.sub[d].lo.e - sh->shape.sub[d].lo.s),
			         src + sh->shape.sub[d].lo.s);
		} else {   /* sizeof((a)[0]...) / sizeof((a)[0]...[0]), d and d+1 subscripts */
			int nb = (int)(a->base.e - a->base.s);
			k = nb < 200 ? 0 : -1;
			snprintf(e, sizeof(e), "sizeof((%.*s)", nb, src + a->base.s);
			for (int j = 0; j < d; j++)
				strcat(e, "[0]");
			snprintf(e + strlen(e), sizeof(e) - strlen(e), ") / sizeof((%.*s)", nb, src + a->base.s);
			for (int j = 0; j <= d; j++)
				strcat(e, "[0]");
			strcat(e, ")");
		}
		if (k < 0 || (k = sym_text(st, e)) < 0)
			return hml__directive_error(src, path, &a->at, "too many symbols in one directive");
		if (d == 0)
			snprintf(dims, n, "hml__sym[%d].value", k);
		else
			snprintf(dims + strlen(dims), n - strlen(dims), ", hml__sym[%d].value", k);
	}
	return 0;
}

/* FUNCTOR(arr[lo:hi, ...], ...): arrays bound at their bases, the
 * domain from the slices where each index first appears. */
static int apply_map(site *st, int kind, const ditem *it, dspan ftext, const dtok *fat)
{
	const char *src = st->m->src, *path = st->m->path;
	char domain[512] = "";
	finfo f;
	int rc, p, d, j, arr = st->narr++;

	if ((rc = functor_info(&f, st->m, ftext, fat)) < 0)
		return rc;
	if (f.npieces != it->narg) {
		char msg[160];
		snprintf(msg, sizeof(msg), "the functor has %d pieces but %d arrays are given", f.npieces, it->narg);
		return hml__directive_error(src, path, &it->at, msg);
	}
	if ((rc = functor_syms(st, ftext, &f, it)) < 0)
		return rc;
	for (j = 0; j < f.nidx; j++) {
		const dslice *sl = NULL;
		const char *lo, *hi, *step = NULL;
		for (p = 0; p < f.npieces && !sl; p++)
			for (d = 0; d < f.nsub[p] && !sl; d++)
				if (span_has_ident(src, f.sub[p][d], f.idx[j])) {
					if (d >= it->arg[p].nsub || !it->arg[p].sub[d].range)
						return hml__directive_error(src, path, &it->arg[p].at,
							"this array needs a slice lo:hi for the subscript that holds a sample index");
					sl = &it->arg[p].sub[d];
				}
		if (!sl)
			return hml__directive_error(src, path, fat, "a sample index of the functor is used by no piece");
		if (sl->hi.s == sl->hi.e)
			return hml__directive_error(src, path, &sl->at, "a slice needs its upper bound");
		lo = sym_expr(st, src, sl->lo.s, sl->lo.e, "0");
		hi = sym_expr(st, src, sl->hi.s, sl->hi.e, "0");
		if (sl->step.s < sl->step.e)
			step = sym_expr(st, src, sl->step.s, sl->step.e, "1");
		if (!lo || !hi || (sl->step.s < sl->step.e && !step))
			return hml__directive_error(src, path, &it->at, "too many symbols in one directive");
		snprintf(domain + strlen(domain), sizeof(domain) - strlen(domain), "%s%s:%s%s%s",
		         j ? ", " : "", lo, hi, step ? ":" : "", step ? step : "");
	}
	hml__dbuf_printf(&st->arrays, "\thml_array hml__a%d[%d];\n", arr, it->narg);
	for (p = 0; p < it->narg; p++) {
		const darray *a = &it->arg[p];
		char dims[300], dt[64] = "HML__DIR_DT(&(%.*s)";
		int indexed;
		if ((rc = array_shape(st, a, dims, sizeof(dims), &indexed)) < 0)
			return rc;
		for (d = 0; d < a->nsub && indexed; d++)
			strcat(dt, "[0]");
		strcat(dt, indexed ? ")" : "[0])");
		array_call(st, arr, p, a->base, "(%.*s)", a->base, dt, a->nsub, dims);
	}
	{
		char *ftxt = malloc(ftext.e - ftext.s + 1);
		if (!ftxt)
			return hml__error_oom();
		memcpy(ftxt, src + ftext.s, ftext.e - ftext.s);
		map_entry(st, kind, ftxt, ftext.e - ftext.s, domain, arr, it->narg);
		free(ftxt);
	}
	return 0;
}

static const ddirective *find_decl(const demit *m, ddir_kind kind, dspan name)
{
	size_t n = name.e - name.s;

	for (int i = m->decls.n - 1; i >= 0; i--) {
		const ddirective *d = m->decls.d[i];
		if (d->kind == kind && d->name.e - d->name.s == n &&
		    memcmp(m->src + d->name.s, m->src + name.s, n) == 0)
			return d;
	}
	return NULL;
}

/* arr[lo:len], arr[i] or a scalar: one row, re-pointed every call. */
static int row_map(site *st, int kind, const ditem *it)
{
	const char *src = st->m->src;
	const darray *a = &it->arg[0];
	int arr = st->narr++;
	char functor[128], dims[160];
	dspan data = it->name;
	const char *fmt = "&(%.*s)";

	if (it->kind == DI_SECTION) {
		const dslice *sl = &a->sub[0];
		if (a->nsub != 1)
			return hml__directive_error(src, st->m->path, &it->at,
				"an array section in a region's clause takes one subscript, [i] or [start:length]");
		data.e = sl->lo.e > sl->lo.s ? sl->lo.e : data.e;
		if (sl->lo.s == sl->lo.e)
			fmt = "(%.*s)";
		else
			fmt = NULL;
		if (sl->range) {
			if (sl->hi.s == sl->hi.e || sl->step.s != sl->step.e)
				return hml__directive_error(src, st->m->path, &sl->at,
					"a section reads [start:length] (OpenMP's form)");
			if (!sym_expr(st, src, sl->hi.s, sl->hi.e, "1"))
				return hml__directive_error(src, st->m->path, &it->at, "too many symbols in one directive");
			snprintf(functor, sizeof(functor), "[0:%s] = ([0:%s])", st->names[st->nsym - 1],
			         st->names[st->nsym - 1]);
			snprintf(dims, sizeof(dims), "hml__sym[%d].value, 0, 0, 0", st->nsym - 1);
		} else {
			snprintf(functor, sizeof(functor), "[0:1] = ([0:1])");
			snprintf(dims, sizeof(dims), "1, 0, 0, 0");
		}
		hml__dbuf_printf(&st->arrays, "\thml_array hml__a%d[1];\n", arr);
		if (!fmt) {
			/* &(a)[lo]: the array and its start are two spans */
			int n = (int)(a->base.e - a->base.s), l = (int)(sl->lo.e - sl->lo.s);
			hml__dbuf_printf(&st->arrays,
				"\thml__dir_ck(hml_dir_array(&hml__a%d[0], %s, \"%.*s\", &(%.*s)[%.*s], "
				"HML__DIR_DT(&(%.*s)[%.*s]), 1, %s));\n", arr, st->where, n, src + a->base.s, n, src + a->base.s,
				l, src + sl->lo.s, n, src + a->base.s, l, src + sl->lo.s, dims);
		} else {
			array_call(st, arr, 0, a->base, fmt, a->base, "HML__DIR_DT(%.*s)", 1, dims);
		}
	} else {
		snprintf(functor, sizeof(functor), "[0:1] = ([0:1])");
		hml__dbuf_printf(&st->arrays, "\thml_array hml__a%d[1];\n", arr);
		array_call(st, arr, 0, it->name, "&(%.*s)", it->name, "HML__DIR_DT(&(%.*s))", 1, "1, 0, 0, 0");
	}
	map_entry(st, kind, functor, strlen(functor), "", arr, 1);
	return 0;
}

/* over(I): one map per clause, a piece per (array, offset) seen in the loop. */
static int over_map(site *st, int kind, const ditem *list, int n, const dloop *loop, const char *lohi)
{
	const char *src = st->m->src, *path = st->m->path;
	const ddirective *d = st->d;
	dbuf f = { 0 };
	int64_t off[16];
	int arr = st->narr++, pieces = 0, total = 0, i, k, no, rc;
	size_t nv = d->over.e - d->over.s;
	const char *v = src + d->over.s;

	hml__dbuf_printf(&st->arrays, "\thml_array hml__a%d[%d];\n", arr, DMAX_ARGS);
	hml__dbuf_printf(&f, " = (");
	for (i = 0; i < n; i++) {
		const ditem *it = &list[i];
		if (it->kind != DI_NAME) {
			free(f.p);
			return hml__directive_error(src, path, &it->at, "with over(), list array names only");
		}
		if ((rc = hml__dsubscripts(off, &no, 16, src, path, loop->body, src + it->name.s,
		                           it->name.e - it->name.s, v, nv, &it->at)) < 0) {
			free(f.p);
			return rc;
		}
		for (k = 0; k < no; k++) {
			if (pieces == DMAX_ARGS) {
				free(f.p);
				return hml__directive_error(src, path, &it->at, "over(): too many pieces (at most 16)");
			}
			hml__dbuf_printf(&f, "%s[%.*s", pieces ? ", " : "", (int)nv, v);
			if (off[k])
				hml__dbuf_printf(&f, "%+lld", (long long)off[k]);
			hml__dbuf_printf(&f, "]");
			array_call(st, arr, pieces, it->name, "(%.*s)", it->name, "HML__DIR_DT(%.*s)", 1,
			           "HML_DIR_ROWS, 0, 0, 0");
			pieces++;
			total++;
		}
	}
	hml__dbuf_printf(&f, ")");
	{
		dbuf full = { 0 };
		hml__dbuf_printf(&full, "[%.*s, 0:%d]%.*s", (int)nv, v, total, (int)f.n, f.p ? f.p : "");
		if (full.oom || f.oom) {
			free(full.p);
			free(f.p);
			return hml__error_oom();
		}
		map_entry(st, kind, full.p, full.n, lohi, arr, pieces);
		free(full.p);
	}
	free(f.p);
	return 0;
}

static int clause_maps(site *st, int kind, const ditem *list, int n)
{
	const demit *m = st->m;
	int rc = 0;

	for (int i = 0; i < n && rc >= 0; i++) {
		const ditem *it = &list[i];
		const ddirective *t, *f;
		if (it->kind == DI_SECTION) {
			rc = row_map(st, kind, it);
		} else if (it->kind == DI_APPLY) {
			if (!(f = find_decl(m, DD_FUNCTOR, it->name)))
				return hml__directive_error(m->src, m->path, &it->at, "no tensor_functor of this name is declared");
			rc = apply_map(st, kind, it, f->text, &f->at);
		} else if ((t = find_decl(m, DD_TENSOR, it->name))) {
			if (!(f = find_decl(m, DD_FUNCTOR, t->apply.name)))
				return hml__directive_error(m->src, m->path, &t->apply.at,
				                            "no tensor_functor of this name is declared");
			rc = apply_map(st, kind, &t->apply, f->text, &f->at);
		} else {
			rc = row_map(st, kind, it);
		}
	}
	return rc;
}

void hml__dput_span_or(dbuf *b, const char *src, dspan sp, const char *pre, const char *post,
                       const char *dflt)
{
	if (sp.s < sp.e) {
		hml__dbuf_printf(b, "%s", pre);
		hml__dbuf_put(b, src + sp.s, sp.e - sp.s);
		hml__dbuf_printf(b, "%s", post);
	} else {
		hml__dbuf_printf(b, "%s", dflt);
	}
}

static void put_line(demit *m, size_t off)
{
	int line, col;

	hml__dscan_where(m->src, off, &line, &col);
	hml__dbuf_printf(m->out, "#line %d \"", line);
	hml__dbuf_cstr(m->out, m->path, strlen(m->path));
	hml__dbuf_printf(m->out, "\"\n");
}

static const char *mode_name(dmode mode)
{
	static const char *const names[] = { NULL, "\"off\"", "\"collect\"", "\"infer\"",
	                                     "\"interleave\"", "\"shadow\"", "\"infer\"" };
	return names[mode];
}

/* A site whose maps are all one row (sections, elements, scalars) and that
 * neither seeks nor iterates: one row call per execution, thread-safe,
 * at the execution's own addresses (hml_dir_row_begin(), hml/directive.h). */
static int is_row_site(const demit *m, const ddirective *d)
{
	const ditem *lists[3] = { d->in, d->out, d->inout };
	const int counts[3] = { d->nin, d->nout, d->ninout };

	if (d->over.s < d->over.e || d->seek.s < d->seek.e)
		return 0;
	for (int l = 0; l < 3; l++)
		for (int i = 0; i < counts[l]; i++) {
			const ditem *it = &lists[l][i];
			if (it->kind == DI_APPLY ||
			    (it->kind == DI_NAME && find_decl(m, DD_TENSOR, it->name)))
				return 0;
		}
	return 1;
}

/* The arguments common to hml_dir_begin and hml_dir_row_begin, from the
 * label to the symbols. */
static void site_args(demit *m, site *st, const ddirective *d)
{
	const char *src = m->src;
	dbuf *o = m->out;

	if (d->label.s < d->label.e)
		hml__dput_span_or(o, src, d->label, "(", ")", "");
	else
		hml__dbuf_printf(o, "\"%s_%d\"", m->base, d->at.line);
	hml__dbuf_printf(o, ", ");
	if (d->mode_expr.s < d->mode_expr.e)
		hml__dput_span_or(o, src, d->mode_expr, "(", ")", "");
	else
		hml__dbuf_printf(o, "%s", mode_name(d->mode) ? mode_name(d->mode) : "NULL");
	hml__dbuf_printf(o, ",\n\t                    ");
	hml__dput_span_or(o, src, d->pred, "!!(", ")", "1");
	hml__dbuf_printf(o, ", ");
	hml__dput_span_or(o, src, d->model, "(", ")", "NULL");
	hml__dbuf_printf(o, ", ");
	hml__dput_span_or(o, src, d->db, "(", ")", "NULL");
	hml__dbuf_printf(o, ", ");
	hml__dput_span_or(o, src, d->interleave, "(int)(", ")", "0");
	hml__dbuf_printf(o, ", ");
	hml__dput_span_or(o, src, d->shadow, "(double)(", ")", "0.0");
	hml__dbuf_printf(o, ",\n\t                    hml__maps, %d, hml__sym, %d", st->nmaps, st->nsym);
}

/*
 * over(): the loop body again, over the rows a guard kept from the model
 * (hml_region_rows(), hml-runtime(3) GUARDS), the loop index set to each
 * (declared as the loop declares it); the loop as written runs otherwise.
 * The rows run in order on one thread: the user's OpenMP pragma, whose
 * clauses may not fit this loop (collapse), is not copied.
 */
static void emit_subset(demit *m, const site *st)
{
	const char *src = m->src;
	const dloop *l = &st->loop;
	const ddirective *d = st->d;
	int nl = (int)(l->lo.e - l->lo.s), nv = (int)(d->over.e - d->over.s);
	dbuf *o = m->out;

	hml__dbuf_printf(o, "\tconst int64_t *hml__idx;\n"
	                 "\tint64_t hml__n = hml__dir_ck(hml_dir_rows(&hml__site, &hml__idx));\n"
	                 "\tif (hml__n < hml__sym[0].value) { /* the rows a guard kept from the model */\n"
	                 "\tfor (int64_t hml__k = 0; hml__k < hml__n; hml__k++) {\n\t");
	hml__dbuf_put(o, src + l->type.s, l->type.e - l->type.s);   /* declared by the loop */
	hml__dbuf_printf(o, "%s%.*s = (%.*s) + hml__idx[hml__k];\n", l->type.e > l->type.s ? " " : "",
	                 nv, src + d->over.s, nl, src + l->lo.s);
	put_line(m, l->body.s);
	hml__dbuf_put(o, src + l->body.s, l->body.e - l->body.s);
	hml__dbuf_printf(o, "\n\t}\n\t} else {\n");
}

static int emit_site(demit *m, site *st, const ddirective *d, size_t s, size_t e)
{
	const char *src = m->src;
	dbuf *o = m->out;
	int line = d->at.line;

	if (st->rows) {
		hml__dbuf_printf(o, "{ /* hml: the region of the directive above, a row call (hml-cc(1)) */\n");
		hml__dbuf_printf(o, "\tstatic hml_dir_site hml__site;\n\tstatic const char hml__where[] = \"");
	} else {
		hml__dbuf_printf(o, "{ /* hml: the region of the directive above (hml-cc(1)) */\n");
		hml__dbuf_printf(o, "\tstatic hml_dir_site hml__site;\n\thml__site.where = \"");
	}
	hml__dbuf_cstr(o, m->path, strlen(m->path));
	hml__dbuf_printf(o, ":%d\";\n", line);
	if (st->over)
		hml__dbuf_printf(o, "\thml__site.subset = 1;\n");
	hml__dbuf_printf(o, "\tconst hml_symbol hml__sym[] = {\n");
	if (st->nsym == 0)
		hml__dbuf_printf(o, "\t\t{ \"\", 0 }\n");
	hml__dbuf_put(o, st->syms.p, st->syms.n);
	hml__dbuf_printf(o, "\t};\n");
	hml__dbuf_put(o, st->arrays.p, st->arrays.n);
	hml__dbuf_printf(o, "\tconst hml_dir_map hml__maps[] = {\n");
	hml__dbuf_put(o, st->maps.p, st->maps.n);
	if (st->rows) {
		hml__dbuf_printf(o, "\t};\n\thml_dir_entry *hml__e = NULL;\n");
		hml__dbuf_printf(o, "\tif (hml__dir_ck(hml_dir_row_begin(&hml__site, &hml__e, hml__where, ");
		site_args(m, st, d);
	} else {
		hml__dbuf_printf(o, "\t};\n\tif (hml__dir_ck(hml_dir_begin(&hml__site, ");
		site_args(m, st, d);
		hml__dbuf_printf(o, ", ");
		if (st->seek_lo.s < st->seek_lo.e)
			hml__dput_span_or(o, src, st->seek_lo, "(int64_t)(", ")", "-1");
		else
			hml__dput_span_or(o, src, d->seek, "(int64_t)(", ")", "-1");
	}
	hml__dbuf_printf(o, "))) {\n");
	if (st->over)
		emit_subset(m, st);
	/* the user's lines, from the one after the directive */
	{
		size_t from = d->at.end;
		if (from < strlen(src) && src[from] == '\n')
			from++;
		put_line(m, from);
		hml__dbuf_put(o, src + from, e - from);
	}
	if (st->rows)
		hml__dbuf_printf(o, "\n\t}\n\thml__dir_ck(hml_dir_row_end(&hml__site, hml__e));\n}\n");
	else
		hml__dbuf_printf(o, "%s\thml__dir_ck(hml_dir_end(&hml__site));\n}\n",
		                 st->over ? "\n\t}\n\t}\n" : "\n\t}\n");
	put_line(m, e);
	(void)s;
	return o->oom ? hml__error_oom() : 0;
}

int hml__demit_ml(demit *m, const ddirective *d, size_t s, size_t e)
{
	site st;
	int rc = 0;

	memset(&st, 0, sizeof(st));
	st.m = m;
	st.d = d;
	st.rows = is_row_site(m, d);
	st.where = st.rows ? "hml__where" : "hml__site.where";
	if (d->over.s < d->over.e) {
		dloop loop;
		char lohi[64];
		if ((rc = hml__dfor_loop(&loop, m->src, m->path, s, e, m->src + d->over.s,
		                         d->over.e - d->over.s, &d->over_at)) < 0)
			goto done;
		if (d->seek.s < d->seek.e) {
			rc = hml__directive_error(m->src, m->path, &d->over_at,
			                          "over() seeks to the loop's start itself: leave seek() out");
			goto done;
		}
		/* The loop's row count is the one symbol; its start a seek, so that
		 * a loop over batches keeps its region (bound anew only when the
		 * count changes: a short last batch). */
		hml__dbuf_printf(&st.syms, "\t\t{ \"hml__0\", (int64_t)(");
		hml__dbuf_put(&st.syms, m->src + loop.hi.s, loop.hi.e - loop.hi.s);
		hml__dbuf_printf(&st.syms, ") - (int64_t)(");
		hml__dbuf_put(&st.syms, m->src + loop.lo.s, loop.lo.e - loop.lo.s);
		hml__dbuf_printf(&st.syms, ")%s },\n", loop.hi_plus_one ? " + 1 /* the loop's '<=' */" : "");
		snprintf(st.names[st.nsym++], 64, "hml__0");
		st.seek_lo = loop.lo;
		st.over = 1;
		st.loop = loop;
		snprintf(lohi, sizeof(lohi), "0:hml__0");
		if ((rc = over_map(&st, 0, d->in, d->nin, &loop, lohi)) < 0 ||
		    (rc = over_map(&st, 1, d->out, d->nout, &loop, lohi)) < 0)
			goto done;
		if (d->ninout)
			rc = hml__directive_error(m->src, m->path, &d->inout[0].at, "over() does not take inout()");
	} else if ((rc = clause_maps(&st, 0, d->in, d->nin)) >= 0 &&
	           (rc = clause_maps(&st, 1, d->out, d->nout)) >= 0) {
		rc = clause_maps(&st, 2, d->inout, d->ninout);
	}
	if (rc >= 0)
		rc = st.arrays.oom || st.maps.oom || st.syms.oom ? hml__error_oom() : emit_site(m, &st, d, s, e);
done:
	free(st.arrays.p);
	free(st.maps.p);
	free(st.syms.p);
	return rc;
}

/* qoi(a[lo:hi, ...]) of an array whose shape is declared (or its C type):
 * the slice gathered from the array's rows by hml_dir_qoi_slice()
 * (hml/directive.h). */
int hml__demit_qoi_slice(demit *m, const ddirective *d)
{
	const char *src = m->src;
	const darray *a = &d->qoi.arg[0];
	dbuf *o = m->out;
	site st;
	char dims[300], elem[300];
	int n = (int)(a->base.e - a->base.s), k, indexed, rc;

	memset(&st, 0, sizeof(st));
	st.m = m;
	st.d = d;
	if ((rc = array_shape(&st, a, dims, sizeof(dims), &indexed)) < 0)
		goto done;
	snprintf(elem, sizeof(elem), "(%.*s)", n, src + a->base.s);
	for (k = 0; k < (indexed ? a->nsub : 1); k++)
		strcat(elem, "[0]");
	hml__dbuf_printf(o, "{ const hml_symbol hml__sym[] = { ");
	if (st.nsym == 0)
		hml__dbuf_printf(o, "{ \"hml__none\", 0 }");
	for (k = 0; k < (int)st.syms.n; k++)   /* the symbols on the directive's line */
		hml__dbuf_put(o, st.syms.p[k] == '\n' || st.syms.p[k] == '\t' ? " " : st.syms.p + k, 1);
	hml__dbuf_printf(o, " }; const int64_t hml__q[12] = { %s", dims);
	for (k = 0; k < DMAX_DIMS; k++) {
		hml__dbuf_printf(o, ", (int64_t)(");
		hml__dput_span_or(o, src, k < a->nsub ? a->sub[k].lo : (dspan){ 0, 0 }, "", "", "0");
		hml__dbuf_printf(o, ")");
	}
	for (k = 0; k < DMAX_DIMS; k++) {
		hml__dbuf_printf(o, ", (int64_t)(");
		if (k < a->nsub) {
			hml__dbuf_put(o, src + a->sub[k].hi.s, a->sub[k].hi.e - a->sub[k].hi.s);
			hml__dbuf_printf(o, ") - (int64_t)(");
			hml__dput_span_or(o, src, a->sub[k].lo, "", "", "0");
		} else {
			hml__dbuf_printf(o, "0");
		}
		hml__dbuf_printf(o, ")");
	}
	hml__dbuf_printf(o, " }; (void)hml__sym; hml__dir_ck(hml_dir_qoi_slice(\"");
	hml__dbuf_cstr(o, m->path, strlen(m->path));
	hml__dbuf_printf(o, ":%d\", ", d->at.line);
	if (d->qoi_name.s < d->qoi_name.e)
		hml__dput_span_or(o, src, d->qoi_name, "(", ")", "");
	else
		hml__dbuf_printf(o, "\"%.*s\"", n, src + a->base.s);
	hml__dbuf_printf(o, ", &%s, HML__DIR_DT(&%s), sizeof(%s), %d, hml__q)); }", elem, elem, elem, a->nsub);
	rc = o->oom ? hml__error_oom() : 0;
done:
	free(st.arrays.p);
	free(st.maps.p);
	free(st.syms.p);
	return rc;
}
