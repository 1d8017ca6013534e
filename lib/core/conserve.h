/*
 * lib/core/conserve.h - an output that conserves a sum (internal; the
 * runtime and the CLI share it: the spec is a contract between them).
 *
 * A region that advances a field in place (its output row has its input
 * row's shape) may declare that the physics conserves the sum of a slice
 * of it: miniWeather's mass is the sum over the interior cells of
 * channel 0 (rho', plus a background that does not change). A model does
 * not conserve it by itself, and its error adds up call after call. The
 * runtime corrects each output row of a model call: the difference
 * between the slice's sum in the input row and in the output row, spread
 * uniformly over the slice's elements, is added to them, so that the
 * output's sum is the input's (to the rounding of the model's dtype).
 *
 * The spec, hml-workflow(5) "conserve" and hml-runtime(3) HML_CONSERVE_<L>
 * (written by the CLI, lib/run/childenv.h, read by the runtime): one item
 * per dimension of a row, separated by commas: an index I, a range A:B
 * (B excluded; either may be left out: 0 and the extent), negative values
 * counted from the extent's end. "0, 2:-2, 2:-2": channel 0, all but two
 * cells at each edge of the other two dimensions.
 */
#ifndef HML_LIB_CONSERVE_H
#define HML_LIB_CONSERVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most dimensions a row has (the public HML_MAX_DIMS). */
#define HML__CONSERVE_DIMS 8

/** A parsed spec: per dimension, lo:hi as written (index: hi = lo + 1;
 *  an omitted bound: has_lo / has_hi 0). */
typedef struct hml__conserve {
	int ndim;
	int64_t lo[HML__CONSERVE_DIMS], hi[HML__CONSERVE_DIMS];
	unsigned char has_lo[HML__CONSERVE_DIMS], has_hi[HML__CONSERVE_DIMS];
	unsigned char index[HML__CONSERVE_DIMS];   /**< 1: an index, not a range */
} hml__conserve;

/** A spec resolved against a row shape: the box [lo, hi) per dimension. */
typedef struct hml__conserve_box {
	int ndim;
	int64_t shape[HML__CONSERVE_DIMS];
	int64_t lo[HML__CONSERVE_DIMS], hi[HML__CONSERVE_DIMS];
	int64_t count;       /**< elements in the box */
	int64_t row_size;    /**< elements in a row */
} hml__conserve_box;

/**
 * Parse `spec` into *c. Errors: HML_EINVALID "conserve '0,2:x': 'x' is not
 * an index", "conserve '': no dimension", "conserve '...': more than 8
 * dimensions".
 */
int hml__conserve_parse(hml__conserve *c, const char *spec);

/**
 * The spec of c in its canonical form ("0,2:-2,2:-2"): what
 * hml__conserve_parse reads back as c. HML_EINVALID when it does not fit
 * in `size` bytes.
 */
int hml__conserve_format(char *buf, size_t size, const hml__conserve *c);

/**
 * c resolved against a row of `ndim` dimensions `shape`. Errors:
 * HML_EINVALID "conserve '0,2:-2': 2 dimensions, a row has 3 ([4, 24,
 * 44])", "conserve '5,:,:': index 5 is outside dimension 0 of extent 4",
 * "conserve '0,3:3,:': range 3:3 of dimension 1 is empty".
 */
int hml__conserve_resolve(hml__conserve_box *b, const hml__conserve *c, int ndim,
                          const int64_t *shape);

/**
 * Correct `rows` output rows `out` so that the sum over b of each equals
 * that of the input row `in` of the same index: each element of the box
 * gets (sum in - sum out) / b->count added (sums in double). Rows are
 * b->row_size elements, contiguous.
 */
void hml__conserve_apply_f32(const hml__conserve_box *b, const float *in, float *out,
                             int64_t rows);
void hml__conserve_apply_f64(const hml__conserve_box *b, const double *in, double *out,
                             int64_t rows);

#ifdef __cplusplus
}
#endif
#endif
