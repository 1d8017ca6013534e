/*
 * runtime/src/tmap_copy.c - the copies between application memory and
 * row-major tensors of a bound tensor map (tmap_layout.h): gather and
 * scatter, whole or by rows, on one thread or many (OpenMP).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#  include <omp.h>
#endif

#include "core/error.h"
#include "core/util.h"
#include "functor_internal.h"   /* hml__clip */
#include "tmap_internal.h"
#include "tmap_layout.h"

/* Elements one work item copies; a few thousand short rows, or part of a
 * long one. Keeps an item's slice of the tensor in the L2 cache. */
#define CHUNK_ELEMS (1 << 14)
/* Below this many elements threads cost more than they bring. */
#define PARALLEL_MIN (1 << 16)

/* --- gather and scatter -------------------------------------------------- */

/* to[k * ts] = from[k * fs] for k < n, converting the element type. The
 * stride tests sit outside the loops so that each loop stays simple enough
 * for the compiler to vectorise. */
#ifdef _OPENMP
#  define SIMD _Pragma("omp simd")
#else
#  define SIMD
#endif

typedef void (*kernel_fn)(void *to, int64_t ts, const void *from, int64_t fs, int64_t n);

/* SAME: TO and FROM are one type, so a contiguous run is a memcpy (int32
 * and float32 share a size, not a representation: they need the cast). */
#define KERNEL(NAME, TO, FROM, SAME)                                           \
static void NAME(void *to_, int64_t ts, const void *from_, int64_t fs,         \
                 int64_t n)                                                    \
{                                                                              \
	TO *restrict to = to_;                                                 \
	const FROM *restrict from = from_;                                     \
	int64_t k;                                                             \
	if (ts == 1 && fs == 1) {                                              \
		if (SAME)                                                      \
			memcpy(to, from, (size_t)n * sizeof(TO));              \
		else                                                           \
			SIMD for (k = 0; k < n; k++)                           \
				to[k] = (TO)from[k];                           \
	} else if (fs == 1) {                                                  \
		for (k = 0; k < n; k++)                                        \
			to[k * ts] = (TO)from[k];                              \
	} else if (ts == 1) {                                                  \
		for (k = 0; k < n; k++)                                        \
			to[k] = (TO)from[k * fs];                              \
	} else {                                                               \
		for (k = 0; k < n; k++)                                        \
			to[k * ts] = (TO)from[k * fs];                         \
	}                                                                      \
}

KERNEL(copy_ff, float, float, 1)
KERNEL(copy_dd, double, double, 1)
KERNEL(copy_fd, float, double, 0)
KERNEL(copy_df, double, float, 0)
KERNEL(copy_fi, float, int32_t, 0)
KERNEL(copy_fl, float, int64_t, 0)
KERNEL(copy_di, double, int32_t, 0)
KERNEL(copy_dl, double, int64_t, 0)

/* `to` is a float type; `from` any dtype (integers are read, never written). */
static kernel_fn pick_kernel(hml_dtype to, hml_dtype from)
{
	switch (from) {
	case HML_F32: return to == HML_F32 ? copy_ff : copy_df;
	case HML_I32: return to == HML_F32 ? copy_fi : copy_di;
	case HML_I64: return to == HML_F32 ? copy_fl : copy_dl;
	default:      return to == HML_F32 ? copy_fd : copy_dd;
	}
}

/* Outputs are floating point: scattering into an integer array would
 * silently truncate model values, so it is refused. */
static int check_scatter_dtypes(const hml_tmap *map, const char *fname)
{
	char txt[TEXT_MAX + 8], label[80];
	size_t k;

	for (k = 0; k < map->narrays; k++) {
		if (map->arrays[k].dtype == HML_F32 || map->arrays[k].dtype == HML_F64)
			continue;
		hml__clip(txt, sizeof(txt), map->text);
		hml__tmap_array_label(label, sizeof(label), &map->arrays[k], k);
		return hml__error_set(HML_ENOTSUPPORTED,
			"%s: array %s of functor '%s' is %s; outputs must be float32 or float64",
			fname, label, txt, hml_dtype_name(map->arrays[k].dtype));
	}
	return 0;
}

typedef struct xfer {
	const hml_tmap *map;
	char *tensor;
	size_t tes;                       /* tensor element size */
	hml_dtype tdtype;
	int64_t trow;                     /* tensor elements per row */
	int64_t tstride[HML_MAX_DIMS];    /* tensor strides of the feature dims */
	int64_t col;
	int64_t row0;                     /* domain row of tensor row 0 */
	const void *const *data;          /* the arrays' data for this call, or NULL: as bound */
	int scatter;
} xfer;

/* Rows [r0, r1) and block lines [l0, l1) of every piece. A line is one
 * position of the block dims except the last; per line and per run of rows
 * in which only the innermost loop index moves, the copy is 2-D: rows
 * (array stride sstride, tensor stride trow) by the last block dim (array
 * stride bstride, tensor stride 1). The longer side is the inner loop. */
static void copy_part(const xfer *x, int64_t r0, int64_t r1, int64_t l0, int64_t l1)
{
	const hml_tmap *m = x->map;
	int nf = m->nf, nl = m->nloop, d;
	size_t p;

	for (p = 0; p < m->narrays; p++) {
		const tpiece *tp = &m->pieces[p];
		char *arr = x->data ? (char *)(uintptr_t)x->data[p] : m->arrays[p].data;
		size_t aes = hml_dtype_size(m->arrays[p].dtype);
		/* Scatter runs only into float arrays (check_scatter_dtypes). */
		kernel_fn kern = x->scatter ? pick_kernel(m->arrays[p].dtype, x->tdtype)
		                            : pick_kernel(x->tdtype, m->arrays[p].dtype);
		int64_t ext = tp->bext[nf - 1], bs = tp->bstride[nf - 1];
		int64_t is = tp->sstride[nl - 1], inner = m->lext[nl - 1];
		int64_t l, q, i, k, e, r, run, aoff, toff, ao, to;
		int64_t t[HML_MAX_DIMS];

		for (l = l0; l < l1; l++) {
			aoff = tp->base;
			toff = x->col + tp->col;
			for (q = l, d = nf - 2; d >= 0; d--) {
				i = q % tp->bext[d];
				q /= tp->bext[d];
				aoff += i * tp->bstride[d];
				toff += i * x->tstride[d];
			}
			for (q = r0, d = nl - 1; d >= 0; d--) {
				t[d] = q % m->lext[d];
				q /= m->lext[d];
			}
			for (r = r0; r < r1; r += run) {
				run = inner - t[nl - 1];
				if (run > r1 - r)
					run = r1 - r;
				ao = aoff;
				for (d = 0; d < nl; d++)
					ao += t[d] * tp->sstride[d];
				to = toff + (r - x->row0) * x->trow;
				if (is == ext * bs && x->trow == ext) {
					/* The run is one strided line in both. */
					char *a = arr + ao * (int64_t)aes;
					char *tt = x->tensor + to * (int64_t)x->tes;
					if (x->scatter)
						kern(a, bs, tt, 1, run * ext);
					else
						kern(tt, 1, a, bs, run * ext);
				} else if (ext >= run || (bs == 1 && ext >= 16)) {
					for (k = 0; k < run; k++) {
						char *a = arr + (ao + k * is) * (int64_t)aes;
						char *tt = x->tensor + (to + k * x->trow) * (int64_t)x->tes;
						if (x->scatter)
							kern(a, bs, tt, 1, ext);
						else
							kern(tt, 1, a, bs, ext);
					}
				} else {
					for (e = 0; e < ext; e++) {
						char *a = arr + (ao + e * bs) * (int64_t)aes;
						char *tt = x->tensor + (to + e) * (int64_t)x->tes;
						if (x->scatter)
							kern(a, is, tt, x->trow, run);
						else
							kern(tt, x->trow, a, is, run);
					}
				}
				/* Next run: carry into the outer loop indices. */
				t[nl - 1] += run;
				for (d = nl - 1; d > 0 && t[d] == m->lext[d]; d--) {
					t[d] = 0;
					t[d - 1]++;
				}
			}
		}
	}
}

/* Domain rows [row0, row0 + nrows) to or from tensor rows [0, nrows). */
static int transfer(const hml_tmap *map, void *tensor, hml_dtype dtype,
                    int64_t tlast, int64_t col, int64_t row0, int64_t nrows,
                    const void *const *data, int threads, int scatter, const char *fname)
{
	char txt[TEXT_MAX + 8];
	xfer x;
	int64_t last, cr, lg, nrc, nlg, items, it;
	int d, par, nt = 1;

	if (!map)
		return hml__error_set(HML_EINVALID, "%s: no map", fname);
	if (!tensor)
		return hml__error_set(HML_EINVALID, "%s: no buffer", fname);
	if (dtype != HML_F32 && dtype != HML_F64)
		return hml__error_set(HML_EINVALID, "%s: tensor dtype %d is not float32 or float64",
		                      fname, (int)dtype);
	if (scatter && (d = check_scatter_dtypes(map, fname)) < 0)
		return d;
	last = map->fshape[map->nf - 1];
	if (col < 0 || tlast < 1 || col > tlast - last) {
		hml__clip(txt, sizeof(txt), map->text);
		return hml__error_set(HML_ESHAPE,
			"functor '%s': columns %lld to %lld do not fit a last dimension of %lld",
			txt, (long long)col, (long long)(col + last), (long long)tlast);
	}
	memset(&x, 0, sizeof(x));
	x.map = map;
	x.tensor = tensor;
	x.tes = hml_dtype_size(dtype);
	x.tdtype = dtype;
	x.trow = map->nlines * tlast;
	x.col = col;
	x.row0 = row0;
	x.data = data;
	x.scatter = scatter;
	if (map->nf >= 2) {
		x.tstride[map->nf - 2] = tlast;
		for (d = map->nf - 3; d >= 0; d--)
			x.tstride[d] = x.tstride[d + 1] * map->fshape[d + 1];
	}

	/* Work items: row chunks by groups of block lines. */
	if (map->row_size <= CHUNK_ELEMS) {
		cr = CHUNK_ELEMS / map->row_size;
		lg = map->nlines;
	} else {
		cr = 1;
		lg = CHUNK_ELEMS / last;
		if (lg < 1)
			lg = 1;
	}
	nrc = (nrows + cr - 1) / cr;
	nlg = (map->nlines + lg - 1) / lg;
	items = nrc * nlg;
	par = nrows * map->row_size >= PARALLEL_MIN && items > 1 && threads != 1;
#ifdef _OPENMP
	nt = threads > 0 ? threads : omp_get_max_threads();
#endif
	(void)nt;

	/* One row (a call per loop iteration) copies without entering an
	 * OpenMP region at all: even a team of one costs more than the copy. */
	if (!par) {
		for (it = 0; it < items; it++) {
			int64_t r0 = row0 + (it / nlg) * cr, l0 = (it % nlg) * lg;
			int64_t r1 = r0 + cr < row0 + nrows ? r0 + cr : row0 + nrows;
			int64_t l1 = l0 + lg < map->nlines ? l0 + lg : map->nlines;

			copy_part(&x, r0, r1, l0, l1);
		}
		return 0;
	}
	#pragma omp parallel for schedule(static) num_threads(nt)
	for (it = 0; it < items; it++) {
		int64_t r0 = row0 + (it / nlg) * cr, l0 = (it % nlg) * lg;
		int64_t r1 = r0 + cr < row0 + nrows ? r0 + cr : row0 + nrows;
		int64_t l1 = l0 + lg < map->nlines ? l0 + lg : map->nlines;

		copy_part(&x, r0, r1, l0, l1);
	}
	return 0;
}

int hml_tmap_gather_into(const hml_tmap *map, void *dst, hml_dtype dtype,
                         int64_t dst_last, int64_t col, int threads)
{
	return transfer(map, dst, dtype, dst_last, col, 0, map ? map->rows : 0, NULL, threads, 0,
	                "hml_tmap_gather_into");
}

int hml_tmap_scatter_from(const hml_tmap *map, const void *src, hml_dtype dtype,
                          int64_t src_last, int64_t col, int threads)
{
	/* The tensor is only read when scattering. */
	return transfer(map, (void *)src, dtype, src_last, col, 0, map ? map->rows : 0,
	                NULL, threads, 1, "hml_tmap_scatter_from");
}

int hml_tmap_gather(const hml_tmap *map, void *dst, hml_dtype dtype, int threads)
{
	if (!map)
		return hml__error_set(HML_EINVALID, "hml_tmap_gather: no map");
	return transfer(map, dst, dtype, map->fshape[map->nf - 1], 0, 0, map->rows, NULL, threads, 0,
	                "hml_tmap_gather");
}

int hml_tmap_scatter(const hml_tmap *map, const void *src, hml_dtype dtype, int threads)
{
	if (!map)
		return hml__error_set(HML_EINVALID, "hml_tmap_scatter: no map");
	return transfer(map, (void *)src, dtype, map->fshape[map->nf - 1], 0, 0, map->rows,
	                NULL, threads, 1, "hml_tmap_scatter");
}

int hml__tmap_rows_transfer(const hml_tmap *map, void *tensor, hml_dtype dtype,
                            int64_t tensor_last, int64_t col, int64_t row0,
                            int64_t nrows, const void *const *data, int scatter)
{
	const char *fname = scatter ? "hml__tmap_rows_transfer (scatter)"
	                            : "hml__tmap_rows_transfer (gather)";

	if (!map)
		return hml__error_set(HML_EINVALID, "%s: no map", fname);
	if (row0 < 0 || nrows < 0 || row0 > map->rows - nrows)
		return hml__error_set(HML_EINVALID,
			"row %lld is outside the domain '%s' of %lld rows",
			(long long)row0, map->domain, (long long)map->rows);
	return transfer(map, tensor, dtype, tensor_last, col, row0, nrows, data, 1, scatter, fname);
}
