/*
 * hml/tensor.h - tensor functors and tensor maps: how application memory
 * forms the rows of a model tensor.
 *
 * A *functor* is a symbolic description, parsed once:
 *
 *     [i, 0:5] = ([i], [i], [i], [i], [i])          five arrays, one value each
 *     [i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2])   2-D 5-point stencil
 *     [i, 0:m] = ([i*m : i*m+m])                     affine rows of width m
 *     [0:4, 0:nz, 0:nx] = ([0:4, 2:nz+2, 2:nx+2])    a whole field, one sample
 *
 * The left-hand side lists the *sample indices* (identifiers, first) and then
 * the *feature dimensions* (constant ranges `a:b`). Each right-hand piece reads
 * one array: a subscript is either a point (an affine expression) or a range
 * `start:stop[:step]` whose extent does not depend on the sample indices. A
 * piece's ranges form its block of values; the blocks of all pieces are
 * concatenated along the last feature dimension. Any other identifier (m, nz,
 * N) is a symbol bound to an integer when the functor is bound to arrays.
 * Expressions use integers, + - * and parentheses; a product may involve at
 * most one sample index. An optional `name:` may precede the left-hand side.
 *
 * A *tensor map* binds a functor to concrete arrays (piece k reads array k)
 * and to a *domain*: one slice `start:stop[:step]` per sample index, e.g.
 * "1:N-1, 1:M-1". Rows are the domain's points in row-major order (the first
 * index varies slowest). Strides come from the arrays' declared shapes; every
 * access is checked against them when the map is created.
 *
 * Fortran (the module hml, hml-fortran(3)): a column-major array
 * a(l1:u1, l2:u2) is bound as the C array a[u2-l2+1][u1-l1+1] it is in
 * memory, so subscript [s2, s1] reads a(l1 + s1, l2 + s2): functors are
 * written over the reversed dims, indices counted from the lower bounds.
 */
#ifndef HML_TENSOR_H
#define HML_TENSOR_H

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml_functor hml_functor;
typedef struct hml_tmap hml_tmap;

/**
 * Parse `text` into a functor. On success `*out` is yours to free with
 * hml_functor_free(). Fails with HML_ESYNTAX and a message naming the column
 * and what was expected, e.g.
 * "functor '[i, 0:5] = ([i]': column 16: expected ')' but found end of input".
 */
HML_EXTERN int hml_functor_parse(hml_functor **out, const char *text);

/** Free a functor (NULL-safe). Maps created from it stay valid. */
HML_EXTERN void hml_functor_free(hml_functor *fn);

/** The text the functor was parsed from. Owned by the functor. */
HML_EXTERN const char *hml_functor_text(const hml_functor *fn);

/** Number of right-hand pieces, i.e. of arrays a map must bind. */
HML_EXTERN int hml_functor_npieces(const hml_functor *fn);

/** Number of sample indices on the left-hand side. */
HML_EXTERN int hml_functor_nindices(const hml_functor *fn);

/**
 * Bind `fn` to `narrays` arrays (piece k reads arrays[k]) over `domain`.
 *
 * `domain` holds one slice per sample index, comma-separated, and may use the
 * symbols. NULL or "" asks for the largest box of indices for which every
 * access stays inside its array (e.g. 1:N-1 for a piece reading [i-1] and
 * [i+1] of an N-element array); a functor without sample indices needs none.
 * `symbols` (may be NULL when `nsymbols` is 0) give values to the other names.
 *
 * The map copies what it needs from `fn`, `arrays` and `symbols`; the array
 * memory stays borrowed and must outlive the map. `*out` is yours to free with
 * hml_tmap_free().
 *
 * Fails with HML_ESHAPE (piece/array count, subscript count or feature shapes
 * disagree), HML_ERANGE (an access falls outside its declared array; the
 * message names the array, the dimension, the index and the size),
 * HML_ESYNTAX (domain does not parse), HML_EINVALID (unknown symbol, empty or
 * negative domain, bad step, NULL data).
 */
HML_EXTERN int hml_tmap_new(hml_tmap **out, const hml_functor *fn,
                            const char *domain,
                            const hml_array *arrays, size_t narrays,
                            const hml_symbol *symbols, size_t nsymbols);

/** Free a map (NULL-safe). */
HML_EXTERN void hml_tmap_free(hml_tmap *map);

/** Number of rows (samples): the number of points in the domain (1 if none). */
HML_EXTERN int64_t hml_tmap_rows(const hml_tmap *map);

/**
 * Feature shape of one row: copies up to HML_MAX_DIMS extents into `shape`
 * (may be NULL) and returns the number of feature dimensions.
 */
HML_EXTERN int hml_tmap_features(const hml_tmap *map, int64_t *shape);

/** Elements in one row (product of the feature shape). */
HML_EXTERN int64_t hml_tmap_row_size(const hml_tmap *map);

/**
 * The float type that holds every bound array's values: F32 when all are
 * float32, F64 otherwise (any double or integer array; see hml_dtype).
 */
HML_EXTERN hml_dtype hml_tmap_dtype(const hml_tmap *map);

/** The map's array k as it was bound (with its current data pointer). */
HML_EXTERN const hml_array *hml_tmap_array(const hml_tmap *map, size_t k);

/**
 * Point piece k at new memory of the same shape and dtype, e.g. after the
 * application swapped double buffers. No re-validation is needed.
 */
HML_EXTERN int hml_tmap_set_data(hml_tmap *map, size_t k, void *data);

/**
 * Move every array of the map `rows` rows past the memory it was bound to (or
 * last given with hml_tmap_set_data()), a row being one index of its first
 * dimension: for `double x[n][9]` declared {B, 9}, data becomes x + rows*9.
 * This is how a map declared with the shape of one batch walks a larger
 * array, batch after batch; seeking to 0 returns to the start. The caller
 * guarantees that each array's memory holds `rows` more rows than its
 * declared shape. Fails with HML_EINVALID for a NULL map or rows < 0.
 */
HML_EXTERN int hml_tmap_seek(hml_tmap *map, int64_t rows);

/**
 * Copy the mapped application values into `dst`, a row-major buffer of
 * rows * row_size elements of `dtype` (HML_F32 or HML_F64), converting
 * element types; integer arrays are converted to `dtype`.
 * Parallel with OpenMP on large maps (`threads` <= 0: OpenMP's default).
 */
HML_EXTERN int hml_tmap_gather(const hml_tmap *map, void *dst, hml_dtype dtype,
                               int threads);

/**
 * The inverse of hml_tmap_gather(): write the values of `src` (rows *
 * row_size elements of `dtype`) into the mapped application memory.
 * Fails with HML_ENOTSUPPORTED when a mapped array is an integer array.
 * Pieces of an output functor should not overlap; if they do, which write
 * lands is unspecified.
 */
HML_EXTERN int hml_tmap_scatter(const hml_tmap *map, const void *src,
                                hml_dtype dtype, int threads);

/**
 * Zero-copy view: if the mapped memory already is the row-major tensor
 * (a single piece, contiguous, element type `dtype`), return a pointer to its
 * first element; NULL otherwise. The pointer is application memory.
 */
HML_EXTERN void *hml_tmap_contiguous(const hml_tmap *map, hml_dtype dtype);

/**
 * Low-level gather into a wider row-major buffer: row r of this map goes to
 * dst + r * dst_row_size, and its last feature dimension is placed at column
 * offset `col` of a last dimension that is `dst_last` wide (used to
 * concatenate several maps into one tensor). All other feature extents must
 * match the buffer's. hml_tmap_gather() is the case col = 0, dst_last = the
 * map's own last extent.
 */
HML_EXTERN int hml_tmap_gather_into(const hml_tmap *map, void *dst,
                                    hml_dtype dtype, int64_t dst_last,
                                    int64_t col, int threads);

/** The inverse of hml_tmap_gather_into(). */
HML_EXTERN int hml_tmap_scatter_from(const hml_tmap *map, const void *src,
                                     hml_dtype dtype, int64_t src_last,
                                     int64_t col, int threads);

#ifdef __cplusplus
}
#endif
#endif
