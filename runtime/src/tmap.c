/*
 * Tensor maps: a functor bound to arrays and a domain (the copies between
 * application memory and row-major tensors are tmap_copy.c's).
 *
 * Binding turns every piece into plain strides: an element offset for the
 * first row, an offset step per loop dimension of the domain and a (stride,
 * extent) per block dimension (tmap_layout.h). Gather and scatter then only
 * walk strides; the element type is chosen once per piece and work item,
 * never per element.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "functor_internal.h"
#include "tmap_internal.h"
#include "tmap_layout.h"

/* One subscript after symbol substitution. */
typedef struct psub {
	int is_range;
	hml__affine a;                    /* the point, or the start of the range */
	int64_t step, ext;                /* ranges */
	int64_t first;                    /* index reached at row 0 (bounds pass) */
} psub;

typedef struct binder {
	const hml_functor *fn;
	const hml_array *arrays;
	char txt[TEXT_MAX + 8];           /* clipped functor text for messages */
	hml__affine *vals;                /* every expression node of the functor */
	psub (*subs)[HML_MAX_DIMS];
	int (*bdim)[HML_MAX_DIMS];        /* array dimension of each padded block dim, -1 */
	int64_t dstart[HML_MAX_DIMS], dstep[HML_MAX_DIMS], dext[HML_MAX_DIMS];
} binder;

void hml__tmap_array_label(char *buf, size_t size, const hml_array *a, size_t k)
{
	if (a->name && *a->name) {
		char name[64];
		hml__clip(name, sizeof(name), a->name);
		snprintf(buf, size, "'%s'", name);
	} else {
		snprintf(buf, size, "#%zu", k);
	}
}

static void piece_label(char *buf, size_t size, const hml_functor *fn, int k)
{
	const hml__piece *pc = &fn->pieces[k];
	char span[72];
	int len = pc->end - pc->begin;
	size_t i;

	if (len > 60)
		snprintf(span, sizeof(span), "%.57s...", fn->text + pc->begin);
	else
		snprintf(span, sizeof(span), "%.*s", len, fn->text + pc->begin);
	for (i = 0; span[i]; i++)
		if (span[i] == '\n' || span[i] == '\r' || span[i] == '\t')
			span[i] = ' ';
	snprintf(buf, size, "piece %d '%s'", k, span);
}

static int is_blank(const char *s)
{
	if (!s)
		return 1;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return *s == '\0';
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

static int check_arrays(binder *b, size_t narrays)
{
	const hml_functor *fn = b->fn;
	char label[80], piece[96];
	int64_t total;
	size_t k;
	int d;

	if (narrays != (size_t)fn->npieces)
		return hml__error_set(HML_ESHAPE, "functor '%s' has %d piece%s but %zu array%s given",
		                      b->txt, fn->npieces, fn->npieces == 1 ? "" : "s",
		                      narrays, narrays == 1 ? " was" : "s were");
	for (k = 0; k < narrays; k++) {
		const hml_array *a = &b->arrays[k];

		hml__tmap_array_label(label, sizeof(label), a, k);
		if (!a->data)
			return hml__error_set(HML_EINVALID, "array %s for functor '%s' has no data",
			                      label, b->txt);
		if (hml_dtype_size(a->dtype) == 0)
			return hml__error_set(HML_EINVALID,
				"array %s for functor '%s' has an unknown dtype %d", label, b->txt,
				(int)a->dtype);
		if (a->ndim < 1 || a->ndim > HML_MAX_DIMS)
			return hml__error_set(HML_EINVALID,
				"array %s for functor '%s' has %d dimensions; 1 to %d are allowed",
				label, b->txt, a->ndim, HML_MAX_DIMS);
		total = 1;
		for (d = 0; d < a->ndim; d++) {
			if (a->shape[d] <= 0)
				return hml__error_set(HML_EINVALID,
					"array %s for functor '%s' has extent %lld in dimension %d",
					label, b->txt, (long long)a->shape[d], d);
			if (HML__MUL_OVF(total, a->shape[d], &total))
				return hml__error_set(HML_EINVALID,
					"array %s for functor '%s' has more elements than 64-bit indices reach",
					label, b->txt);
		}
		if (fn->pieces[k].nsubs != a->ndim) {
			piece_label(piece, sizeof(piece), fn, (int)k);
			return hml__error_set(HML_ESHAPE,
				"functor '%s': %s has %d subscript%s but array %s has %d dimension%s",
				b->txt, piece, fn->pieces[k].nsubs, fn->pieces[k].nsubs == 1 ? "" : "s",
				label, a->ndim, a->ndim == 1 ? "" : "s");
		}
	}
	return 0;
}

static int bind_features(binder *b, hml_tmap *map)
{
	const hml_functor *fn = b->fn;
	int64_t ext;
	int f;

	map->nf = fn->nfeatures;
	map->row_size = 1;
	for (f = 0; f < fn->nfeatures; f++) {
		const hml__affine *s = &b->vals[fn->fstart[f]], *e = &b->vals[fn->fstop[f]];

		if (HML__SUB_OVF(e->c0, s->c0, &ext) || ext <= 0)
			return hml__error_set(HML_EINVALID,
				"functor '%s': feature dimension %d (%lld:%lld) is empty",
				b->txt, f, (long long)s->c0, (long long)e->c0);
		map->fshape[f] = ext;
		if (HML__MUL_OVF(map->row_size, ext, &map->row_size))
			return hml__error_set(HML_ESHAPE, "functor '%s': rows are too large",
			                      b->txt);
	}
	map->nlines = map->row_size / map->fshape[map->nf - 1];
	return 0;
}

/* A piece whose subscripts name feature dimensions ([x, y, t] under
 * [t = 0:T, x = 0:X, y = 0:Y]) lays its block out in the left-hand side's
 * order, not its own: the gather transposes. Every range must then be named,
 * each name once. */
static int order_named(const binder *b, const char *piece, int64_t *block, int *dims,
                       int *feat, int nb)
{
	int i, j;

	for (i = 0; i < nb; i++) {
		if (feat[i] < 0)
			return hml__error_set(HML_EINVALID,
				"functor '%s': %s mixes named feature dimensions with a range; name every one",
				b->txt, piece);
		for (j = i; j > 0 && feat[j - 1] >= feat[j]; j--) {
			int64_t e = block[j];
			int d = dims[j], f = feat[j];
			if (feat[j - 1] == f)
				return hml__error_set(HML_EINVALID,
					"functor '%s': %s names the feature dimension '%s' twice",
					b->txt, piece, b->fn->fnames[f]);
			block[j] = block[j - 1], dims[j] = dims[j - 1], feat[j] = feat[j - 1];
			block[j - 1] = e, dims[j - 1] = d, feat[j - 1] = f;
		}
	}
	return 0;
}

/* Evaluate the subscripts of piece p; its block shape against the features. */
static int bind_piece(binder *b, hml_tmap *map, int p, int64_t *col)
{
	const hml_functor *fn = b->fn;
	const hml__piece *pc = &fn->pieces[p];
	tpiece *tp = &map->pieces[p];
	int64_t block[HML_MAX_DIMS], diff;
	int dims[HML_MAX_DIMS], feat[HML_MAX_DIMS];
	char piece[96], s1[128], s2[128];
	int d, j, nb = 0, named = 0, pad, nf = map->nf, rc;

	piece_label(piece, sizeof(piece), fn, p);
	for (d = 0; d < pc->nsubs; d++) {
		const hml__sub *sub = &pc->subs[d];
		psub *s = &b->subs[p][d];
		const hml__affine *stop, *step;
		hml__affine one;

		s->is_range = sub->is_range;
		s->a = b->vals[sub->start];
		if (!sub->is_range)
			continue;
		stop = &b->vals[sub->stop];
		memset(&one, 0, sizeof(one));
		one.c0 = 1;
		step = sub->step >= 0 ? &b->vals[sub->step] : &one;
		if (!hml__affine_is_const(step))
			return hml__error_set(HML_EINVALID,
				"functor '%s': the step of subscript %d of %s depends on a sample index",
				b->txt, d, piece);
		if (step->c0 <= 0)
			return hml__error_set(HML_EINVALID,
				"functor '%s': subscript %d of %s has step %lld; steps must be positive",
				b->txt, d, piece, (long long)step->c0);
		for (j = 0; j < fn->nindices; j++)
			if (stop->c[j] != s->a.c[j])
				return hml__error_set(HML_EINVALID,
					"functor '%s': the extent of subscript %d of %s depends on the sample index '%s'",
					b->txt, d, piece, fn->indices[j]);
		if (HML__SUB_OVF(stop->c0, s->a.c0, &diff) || diff <= 0)
			return hml__error_set(HML_EINVALID,
				"functor '%s': subscript %d of %s is an empty range",
				b->txt, d, piece);
		s->step = step->c0;
		s->ext = diff / s->step + (diff % s->step != 0);
		block[nb] = s->ext;
		dims[nb] = d;
		feat[nb] = sub->feat;
		named += sub->feat >= 0;
		nb++;
	}
	if (named && (rc = order_named(b, piece, block, dims, feat, nb)) < 0)
		return rc;
	if (nb == 0) {
		block[0] = 1;
		dims[0] = -1;
		nb = 1;
	}
	if (nb > nf)
		return hml__error_set(HML_ESHAPE,
			"functor '%s': %s has %d ranges but the left-hand side declares %d feature dimension%s",
			b->txt, piece, nb, nf, nf == 1 ? "" : "s");
	pad = nf - nb;
	for (d = 0; d < nf; d++) {
		tp->bext[d] = d < pad ? 1 : block[d - pad];
		b->bdim[p][d] = d < pad ? -1 : dims[d - pad];
	}
	for (d = 0; d < nf - 1; d++) {
		if (tp->bext[d] != map->fshape[d]) {
			hml__format_shape(s1, sizeof(s1), block, nb);
			hml__format_shape(s2, sizeof(s2), map->fshape, nf);
			return hml__error_set(HML_ESHAPE,
				"functor '%s': %s gives a block %s that does not fit the feature shape %s (only the last dimension may differ)",
				b->txt, piece, s1, s2);
		}
	}
	tp->col = *col;
	*col += tp->bext[nf - 1];
	return 0;
}

static int bind_pieces(binder *b, hml_tmap *map)
{
	int64_t col = 0;
	int p, rc;

	for (p = 0; p < b->fn->npieces; p++)
		if ((rc = bind_piece(b, map, p, &col)) < 0)
			return rc;
	if (col != map->fshape[map->nf - 1])
		return hml__error_set(HML_ESHAPE,
			"functor '%s': pieces give %lld values on the last dimension but the left-hand side declares %lld",
			b->txt, (long long)col, (long long)map->fshape[map->nf - 1]);
	return 0;
}

/* The largest box of indices for which every access stays in its array,
 * index by index. Each subscript must involve at most one index, with a
 * positive coefficient. */
static int infer_domain(binder *b)
{
	const hml_functor *fn = b->fn;
	int64_t lo[HML_MAX_DIMS], hi[HML_MAX_DIMS], c, c0, add, top, bound;
	int bad[HML_MAX_DIMS] = { 0 }, seen[HML_MAX_DIMS] = { 0 };
	int p, d, j, k, n;

	for (j = 0; j < fn->nindices; j++) {
		lo[j] = INT64_MIN;
		hi[j] = INT64_MAX;
	}
	for (p = 0; p < fn->npieces; p++) {
		for (d = 0; d < fn->pieces[p].nsubs; d++) {
			const psub *s = &b->subs[p][d];

			for (n = 0, k = -1, j = 0; j < fn->nindices; j++)
				if (s->a.c[j]) {
					n++;
					k = j;
				}
			if (n == 0)
				continue;
			if (n > 1 || s->a.c[k] < 0) {
				for (j = 0; j < fn->nindices; j++)
					if (s->a.c[j])
						bad[j] = 1;
				continue;
			}
			c = s->a.c[k];
			c0 = s->a.c0;
			add = 0;
			/* c0 + c*i >= 0 and c0 + c*i + add <= size - 1 */
			if ((s->is_range && HML__MUL_OVF(s->ext - 1, s->step, &add)) ||
			    c0 == INT64_MIN ||
			    HML__SUB_OVF(b->arrays[p].shape[d] - 1, add, &top) ||
			    HML__SUB_OVF(top, c0, &top)) {
				bad[k] = 1;
				continue;
			}
			seen[k] = 1;
			bound = ceil_div(-c0, c);
			if (bound > lo[k])
				lo[k] = bound;
			bound = floor_div(top, c);
			if (bound < hi[k])
				hi[k] = bound;
		}
	}
	for (j = 0; j < fn->nindices; j++) {
		if (bad[j] || !seen[j])
			return hml__error_set(HML_EINVALID,
				"cannot infer the domain of '%s' in functor '%s': give one",
				fn->indices[j], b->txt);
		if (hi[j] < lo[j])
			return hml__error_set(HML_EINVALID,
				"cannot infer the domain of '%s' in functor '%s': no value keeps every access inside its array",
				fn->indices[j], b->txt);
		b->dstart[j] = lo[j];
		b->dstep[j] = 1;
		b->dext[j] = hi[j] - lo[j] + 1;
	}
	return 0;
}

static int bind_domain(binder *b, const char *domain, const hml_symbol *symbols,
                       size_t nsymbols)
{
	const hml_functor *fn = b->fn;
	hml__domain dom;
	hml__affine *vals = NULL;
	int64_t *symvals = NULL, start, stop, step, diff;
	char dtxt[TEXT_MAX + 8];
	int j, rc = 0;

	memset(&dom, 0, sizeof(dom));
	if (is_blank(domain)) {
		if (fn->nindices == 0)
			return 0;
		return infer_domain(b);
	}
	hml__clip(dtxt, sizeof(dtxt), domain);
	if ((rc = hml__domain_parse(&dom, domain)) < 0)
		goto done;
	if (dom.nslices != fn->nindices) {
		rc = hml__error_set(HML_ESHAPE,
			"domain '%s' has %d slice%s but functor '%s' has %d sample ind%s",
			dtxt, dom.nslices, dom.nslices == 1 ? "" : "s", b->txt,
			fn->nindices, fn->nindices == 1 ? "ex" : "ices");
		goto done;
	}
	if (!(symvals = calloc((size_t)dom.x.nsyms + 1, sizeof(*symvals))) ||
	    !(vals = calloc((size_t)dom.x.n + 1, sizeof(*vals)))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__exprs_resolve(&dom.x, symbols, nsymbols, symvals, "domain", domain)) < 0 ||
	    (rc = hml__exprs_eval(&dom.x, symvals, vals, "domain", domain)) < 0)
		goto done;
	for (j = 0; j < fn->nindices; j++) {
		start = vals[dom.start[j]].c0;
		stop = vals[dom.stop[j]].c0;
		step = dom.step[j] >= 0 ? vals[dom.step[j]].c0 : 1;
		if (step <= 0) {
			rc = hml__error_set(HML_EINVALID,
				"domain '%s': the slice of '%s' has step %lld; steps must be positive",
				dtxt, fn->indices[j], (long long)step);
			goto done;
		}
		if (HML__SUB_OVF(stop, start, &diff) || diff <= 0) {
			rc = hml__error_set(HML_EINVALID,
				"domain '%s': the slice of '%s' (%lld:%lld) is empty",
				dtxt, fn->indices[j], (long long)start, (long long)stop);
			goto done;
		}
		b->dstart[j] = start;
		b->dstep[j] = step;
		b->dext[j] = diff / step + (diff % step != 0);
	}
done:
	free(vals);
	free(symvals);
	hml__domain_release(&dom);
	return rc;
}

static int out_of_range(binder *b, int p, int d, int64_t index)
{
	char label[80], piece[96];

	hml__tmap_array_label(label, sizeof(label), &b->arrays[p], (size_t)p);
	piece_label(piece, sizeof(piece), b->fn, p);
	return hml__error_set(HML_ERANGE,
		"slice outside the declared array: %s dimension %d reaches index %lld but its size is %lld (%s of functor '%s')",
		label, d, (long long)index, (long long)b->arrays[p].shape[d], piece, b->txt);
}

/* The smallest and largest index every subscript reaches over the domain
 * (affine: at the corners) against the declared shapes. */
static int check_bounds(binder *b)
{
	const hml_functor *fn = b->fn;
	int64_t lo, hi, t;
	int p, d, j, ovf;

	for (p = 0; p < fn->npieces; p++) {
		for (d = 0; d < fn->pieces[p].nsubs; d++) {
			psub *s = &b->subs[p][d];

			ovf = 0;
			lo = s->a.c0;
			for (j = 0; j < fn->nindices; j++) {
				ovf |= HML__MUL_OVF(s->a.c[j], b->dstart[j], &t);
				ovf |= HML__ADD_OVF(lo, t, &lo);
			}
			s->first = lo;
			hi = lo;
			for (j = 0; j < fn->nindices; j++) {
				if (b->dext[j] <= 1 || !s->a.c[j])
					continue;
				ovf |= HML__MUL_OVF(s->a.c[j], b->dstep[j], &t);
				ovf |= HML__MUL_OVF(t, b->dext[j] - 1, &t);
				if (t < 0)
					ovf |= HML__ADD_OVF(lo, t, &lo);
				else
					ovf |= HML__ADD_OVF(hi, t, &hi);
			}
			if (s->is_range) {
				ovf |= HML__MUL_OVF(s->ext - 1, s->step, &t);
				ovf |= HML__ADD_OVF(hi, t, &hi);
			}
			if (ovf)
				return out_of_range(b, p, d, lo < 0 ? INT64_MIN : INT64_MAX);
			if (lo < 0)
				return out_of_range(b, p, d, lo);
			if (hi >= b->arrays[p].shape[d])
				return out_of_range(b, p, d, hi);
		}
	}
	return 0;
}

/* Row-major element strides from the declared shapes: per piece the offset
 * of row 0, an offset step per domain index and a stride per block dim. */
static void piece_strides(binder *b, hml_tmap *map)
{
	const hml_functor *fn = b->fn;
	int64_t S[HML_MAX_DIMS], st;
	int p, d, j, k;

	for (p = 0; p < fn->npieces; p++) {
		const hml_array *a = &b->arrays[p];
		tpiece *tp = &map->pieces[p];

		S[a->ndim - 1] = 1;
		for (d = a->ndim - 2; d >= 0; d--)
			S[d] = S[d + 1] * a->shape[d + 1];
		tp->base = 0;
		for (d = 0; d < a->ndim; d++)
			tp->base += S[d] * b->subs[p][d].first;
		for (j = 0; j < fn->nindices; j++) {
			/* Bounded by the array size once the bounds passed, except
			 * for an index that never moves: leave that one out. */
			st = 0;
			if (b->dext[j] > 1)
				for (d = 0; d < a->ndim; d++)
					st += S[d] * b->subs[p][d].a.c[j] * b->dstep[j];
			tp->sstride[j] = st;
		}
		for (d = 0; d < map->nf; d++) {
			k = b->bdim[p][d];
			tp->bstride[d] = k < 0 ? 0 : S[k] * b->subs[p][k].step;
		}
	}
}

/* Domain dimensions become loop dimensions, merged where every piece walks
 * two of them as one (e.g. a 2-D domain over whole rows of every array). */
static int bind_layout(binder *b, hml_tmap *map)
{
	const hml_functor *fn = b->fn;
	int64_t ext[HML_MAX_DIMS], str[HML_MAX_DIMS][HML_MAX_DIMS], s;
	int p, j, n = 0, merge, i;

	piece_strides(b, map);
	/* Loop dimensions, innermost first: str[n][p] is piece p's stride. */
	for (j = fn->nindices - 1; j >= 0; j--) {
		if (b->dext[j] == 1)
			continue;
		merge = n > 0;
		for (p = 0; merge && p < fn->npieces; p++)
			if (HML__MUL_OVF(str[n - 1][p], ext[n - 1], &s) ||
			    s != map->pieces[p].sstride[j])
				merge = 0;
		if (merge) {
			ext[n - 1] *= b->dext[j];
			continue;
		}
		ext[n] = b->dext[j];
		for (p = 0; p < fn->npieces; p++)
			str[n][p] = map->pieces[p].sstride[j];
		n++;
	}
	if (n == 0) {
		ext[0] = 1;
		for (p = 0; p < fn->npieces; p++)
			str[0][p] = 0;
		n = 1;
	}
	map->nloop = n;
	map->rows = 1;
	for (i = 0; i < n; i++) {
		map->lext[i] = ext[n - 1 - i];
		if (HML__MUL_OVF(map->rows, ext[n - 1 - i], &map->rows))
			return hml__error_set(HML_ESHAPE, "functor '%s': the domain has too many rows",
			                      b->txt);
	}
	for (p = 0; p < fn->npieces; p++) {
		for (i = 0; i < HML_MAX_DIMS; i++)
			map->pieces[p].sstride[i] = i < n ? str[n - 1 - i][p] : 0;
	}
	if (HML__MUL_OVF(map->rows, map->row_size, &s))
		return hml__error_set(HML_ESHAPE, "functor '%s': the tensor has too many elements",
		                      b->txt);
	return 0;
}

static int domain_text(binder *b, hml_tmap *map)
{
	char part[80];
	size_t len = 0, cap = 1;
	int j;

	for (j = 0; j < b->fn->nindices; j++)
		cap += sizeof(part) + 2;
	if (!(map->domain = malloc(cap)))
		return hml__error_oom();
	map->domain[0] = '\0';
	for (j = 0; j < b->fn->nindices; j++) {
		int64_t stop = b->dstart[j] + b->dstep[j] * b->dext[j];

		if (b->dstep[j] == 1)
			snprintf(part, sizeof(part), "%lld:%lld", (long long)b->dstart[j],
			         (long long)stop);
		else
			snprintf(part, sizeof(part), "%lld:%lld:%lld", (long long)b->dstart[j],
			         (long long)(stop - b->dstep[j] + 1), (long long)b->dstep[j]);
		len += (size_t)snprintf(map->domain + len, cap - len, "%s%s", j ? ", " : "", part);
	}
	return 0;
}

static int copy_arrays(hml_tmap *map, const hml_array *arrays, size_t narrays)
{
	size_t k;

	if (!(map->arrays = calloc(narrays ? narrays : 1, sizeof(*map->arrays))) ||
	    !(map->base = calloc(narrays ? narrays : 1, sizeof(*map->base))))
		return hml__error_oom();
	map->narrays = narrays;
	map->dtype = HML_F32;
	for (k = 0; k < narrays; k++) {
		map->arrays[k] = arrays[k];
		map->arrays[k].name = NULL;
		map->base[k] = arrays[k].data;
		if (arrays[k].name && !(map->arrays[k].name = hml__strdup(arrays[k].name)))
			return HML_ENOMEM;
		/* Integers widen to double: exact for int32, and for int64 up to 2^53. */
		if (arrays[k].dtype != HML_F32)
			map->dtype = HML_F64;
	}
	return 0;
}

int hml_tmap_new(hml_tmap **out, const hml_functor *fn, const char *domain,
                 const hml_array *arrays, size_t narrays,
                 const hml_symbol *symbols, size_t nsymbols)
{
	binder b;
	hml_tmap *map = NULL;
	int64_t *symvals = NULL;
	int rc = 0;

	memset(&b, 0, sizeof(b));
	if (!out)
		return hml__error_set(HML_EINVALID, "hml_tmap_new: no output pointer");
	*out = NULL;
	if (!fn)
		return hml__error_set(HML_EINVALID, "hml_tmap_new: no functor");
	if ((narrays && !arrays) || (nsymbols && !symbols))
		return hml__error_set(HML_EINVALID, "hml_tmap_new: %s is NULL but its count is not 0",
		                      narrays && !arrays ? "arrays" : "symbols");
	b.fn = fn;
	b.arrays = arrays;
	hml__clip(b.txt, sizeof(b.txt), fn->text);
	if ((rc = check_arrays(&b, narrays)) < 0)
		goto done;

	if (!(map = calloc(1, sizeof(*map))) ||
	    !(map->pieces = calloc(narrays ? narrays : 1, sizeof(*map->pieces))) ||
	    !(b.subs = calloc(narrays ? narrays : 1, sizeof(*b.subs))) ||
	    !(b.bdim = calloc(narrays ? narrays : 1, sizeof(*b.bdim))) ||
	    !(symvals = calloc((size_t)fn->x.nsyms + 1, sizeof(*symvals))) ||
	    !(b.vals = calloc((size_t)fn->x.n + 1, sizeof(*b.vals)))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__exprs_resolve(&fn->x, symbols, nsymbols, symvals, "functor", fn->text)) < 0 ||
	    (rc = hml__exprs_eval(&fn->x, symvals, b.vals, "functor", fn->text)) < 0 ||
	    (rc = bind_features(&b, map)) < 0 ||
	    (rc = bind_pieces(&b, map)) < 0 ||
	    (rc = bind_domain(&b, domain, symbols, nsymbols)) < 0 ||
	    (rc = check_bounds(&b)) < 0 ||
	    (rc = bind_layout(&b, map)) < 0 ||
	    (rc = domain_text(&b, map)) < 0 ||
	    (rc = copy_arrays(map, arrays, narrays)) < 0)
		goto done;
	if (!(map->text = hml__strdup(fn->text))) {
		rc = HML_ENOMEM;
		goto done;
	}
	*out = map;
	map = NULL;
done:
	hml_tmap_free(map);
	free(symvals);
	free(b.vals);
	free(b.subs);
	free(b.bdim);
	return rc;
}

void hml_tmap_free(hml_tmap *map)
{
	size_t k;

	if (!map)
		return;
	for (k = 0; map->arrays && k < map->narrays; k++)
		free((char *)map->arrays[k].name);
	free(map->arrays);
	free(map->base);
	free(map->pieces);
	free(map->domain);
	free(map->text);
	free(map);
}

int64_t hml_tmap_rows(const hml_tmap *map)
{
	return map ? map->rows : 0;
}

int hml_tmap_features(const hml_tmap *map, int64_t *shape)
{
	int d;

	if (!map)
		return 0;
	for (d = 0; shape && d < map->nf; d++)
		shape[d] = map->fshape[d];
	return map->nf;
}

int64_t hml_tmap_row_size(const hml_tmap *map)
{
	return map ? map->row_size : 0;
}

hml_dtype hml_tmap_dtype(const hml_tmap *map)
{
	return map ? map->dtype : HML_F32;
}

const hml_array *hml_tmap_array(const hml_tmap *map, size_t k)
{
	return map && k < map->narrays ? &map->arrays[k] : NULL;
}

int hml_tmap_set_data(hml_tmap *map, size_t k, void *data)
{
	char txt[TEXT_MAX + 8], label[80];

	if (!map)
		return hml__error_set(HML_EINVALID, "hml_tmap_set_data: no map");
	hml__clip(txt, sizeof(txt), map->text);
	if (k >= map->narrays)
		return hml__error_set(HML_EINVALID,
			"tensor map of functor '%s' has %zu array%s: there is no array %zu",
			txt, map->narrays, map->narrays == 1 ? "" : "s", k);
	if (!data) {
		hml__tmap_array_label(label, sizeof(label), &map->arrays[k], k);
		return hml__error_set(HML_EINVALID,
			"no data given for array %s of functor '%s'", label, txt);
	}
	map->arrays[k].data = data;
	map->base[k] = data;
	return 0;
}

int hml_tmap_seek(hml_tmap *map, int64_t rows)
{
	char txt[TEXT_MAX + 8];
	size_t k;

	if (!map)
		return hml__error_set(HML_EINVALID, "hml_tmap_seek: no map");
	if (rows < 0) {
		hml__clip(txt, sizeof(txt), map->text);
		return hml__error_set(HML_EINVALID,
			"tensor map of functor '%s': cannot seek to row %lld", txt, (long long)rows);
	}
	for (k = 0; k < map->narrays; k++) {
		const hml_array *a = &map->arrays[k];
		int64_t step = (int64_t)hml_dtype_size(a->dtype);
		int d;

		/* Overflow is impossible: the memory is the application's. */
		for (d = 1; d < a->ndim; d++)
			step *= a->shape[d];
		map->arrays[k].data = (char *)map->base[k] + rows * step;
	}
	return 0;
}

size_t hml__tmap_narrays(const hml_tmap *map)
{
	return map ? map->narrays : 0;
}

const char *hml__tmap_functor_text(const hml_tmap *map)
{
	return map ? map->text : "";
}

const char *hml__tmap_domain(const hml_tmap *map)
{
	return map ? map->domain : "";
}

char *hml__tmap_array_names(const hml_tmap *map)
{
	char label[32];
	size_t k, len = 1;
	char *out;

	for (k = 0; map && k < map->narrays; k++)
		len += (map->arrays[k].name ? strlen(map->arrays[k].name) : sizeof(label)) + 2;
	if (!(out = malloc(len))) {
		hml__error_oom();
		return NULL;
	}
	out[0] = '\0';
	for (k = 0; map && k < map->narrays; k++) {
		if (k)
			strcat(out, ", ");
		if (map->arrays[k].name) {
			strcat(out, map->arrays[k].name);
		} else {
			snprintf(label, sizeof(label), "#%zu", k);
			strcat(out, label);
		}
	}
	return out;
}

void *hml_tmap_contiguous(const hml_tmap *map, hml_dtype dtype)
{
	const tpiece *tp;
	int64_t expect = 1;
	int d;

	if (!map || map->narrays != 1 || map->arrays[0].dtype != dtype)
		return NULL;
	tp = &map->pieces[0];
	for (d = map->nf - 1; d >= 0; d--) {
		if (tp->bext[d] == 1)
			continue;
		if (tp->bstride[d] != expect)
			return NULL;
		expect *= tp->bext[d];
	}
	for (d = map->nloop - 1; d >= 0; d--) {
		if (map->lext[d] == 1)
			continue;
		if (tp->sstride[d] != expect)
			return NULL;
		expect *= map->lext[d];
	}
	return (char *)map->arrays[0].data + tp->base * (int64_t)hml_dtype_size(dtype);
}
