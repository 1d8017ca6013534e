/*
 * lib/train/dataset.h - reading collected region data for training (internal).
 *
 * A collection file (written by the runtime's collector, see hml-runtime(3))
 * holds one group per region label with datasets `input` [rows, *in_shape]
 * and `output` [rows, *out_shape] (float or double), a compound `calls`
 * table and attributes: the layout is defined once, in lib/core/collection.h.
 * Files made by other tools (h5py) with the same names read too.
 */
#ifndef HML_LIB_DATASET_H
#define HML_LIB_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "core/collection_keep.h"
#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What one region of one collection file holds. */
typedef struct hml__region_info {
	char *label;
	int64_t rows;                  /**< complete rows (min of input and output rows) */
	int64_t calls;                 /**< rows of the calls table */
	double original_per_row;       /**< median over the calls of the original code's
	                                    seconds per row (hml__coll_calls_per_row());
	                                    NaN when the table has no times */
	int in_ndim;                   /**< per-row feature dims (without the rows dim) */
	int64_t in_shape[HML_MAX_DIMS];
	int out_ndim;
	int64_t out_shape[HML_MAX_DIMS];
	hml_dtype in_dtype, out_dtype;
	char *input_functor;           /**< may be NULL when the attribute is absent */
	char *output_functor;
	int sampled;                   /**< the collector sampled (HML_COLLECT_*) */
	hml__coll_sampling sampling;   /**< what it kept, when sampled */
} hml__region_info;

/**
 * List every region group of the collection file `path` (groups holding
 * both `input` and `output`), in name order. *out (array of *n) is yours:
 * free with hml__region_info_free(*out, *n). A file with no region: *n = 0,
 * *out NULL, rc 0. `rows` pairs input and output rows: the shorter side,
 * and no more than the `calls` table's last record accounts for when the
 * group has the collector's table (a collector killed in a flush can leave
 * rows past it).
 * Errors: HML_ENOTFOUND, HML_EIO "'PATH' is not an HDF5 file" /
 * "'PATH' is not a valid HDF5 file: truncated file (N bytes, the
 * superblock says M)" and other damaged superblocks,
 * HML_EINVALID "'PATH': region 'L': input is int32 data, not float32 or
 * float64" /
 * "... output has rank 0 (1 to 9 allowed)" for unusable layouts.
 */
int hml__region_info_list(const char *path, hml__region_info **out, size_t *n);
void hml__region_info_free(hml__region_info *infos, size_t n);

/** What to do with rows holding NaN or Inf (in inputs or outputs). */
typedef enum hml__nonfinite {
	HML__NONFINITE_DROP = 0,   /**< drop those rows, count them */
	HML__NONFINITE_ERROR = 1   /**< fail with HML_EINVALID naming the counts */
} hml__nonfinite;

/** A region's rows from one or more files, as float32, row-major. */
typedef struct hml__dataset {
	int64_t rows;
	int in_ndim, out_ndim;
	int64_t in_shape[HML_MAX_DIMS], out_shape[HML_MAX_DIMS];
	int64_t in_features, out_features;  /**< products of the shapes */
	float *x;                           /**< rows * in_features */
	float *y;                           /**< rows * out_features */
	int64_t nonfinite_rows;             /**< rows dropped (policy DROP) */
	int64_t nonfinite_values;           /**< NaN/Inf values seen */
	/** Per row (rows of each, or NULL when the rows were not loaded by
	 *  hml__dataset_load): the run the row was collected in, numbered
	 *  across the files (two files' runs never share a number), and its
	 *  call number within that run from the collector's `calls` table;
	 *  call -1 where the order is not known (no calls table, or a record
	 *  of several rows or calls). A row whose call is c + 1 in the run of
	 *  a row of call c is the next call of the same run: what an in-place
	 *  region's multi-step training follows (lib/train/rollout.h). */
	int64_t *run;
	int64_t *call;
} hml__dataset;

/**
 * Load region `label` from each of the `n` files and concatenate the rows
 * (float32; doubles are converted). All files must agree on the feature
 * shapes: else HML_ESHAPE "'B': region 'L' input is [5] but 'A' has [4]".
 * A missing region: HML_ENOTFOUND "'PATH' has no region 'L' (it has: a, b)";
 * a file with no region at all (a run stopped before its first write)
 * adds no rows instead. Rows per file as hml__region_info's `rows`.
 * No rows at all (after dropping): HML_EINVALID "region 'L' has no data
 * rows in 'A', 'B'" (names the files). NaN/Inf per `policy`; ERROR fails
 * with HML_EINVALID "region 'L': 12 rows hold NaN or Inf (30 values) in
 * 'PATH'; use --nonfinite drop to drop them". An interrupt pending
 * (hml__interrupt(), the CLI's SIGINT/SIGTERM) stops the reading
 * between slabs: HML_ERROR "interrupted while reading 'PATH'". On failure
 * *d is zeroed.
 * *d is yours: hml__dataset_release().
 */
int hml__dataset_load(hml__dataset *d, const char *const *paths, size_t n,
                      const char *label, hml__nonfinite policy);

void hml__dataset_release(hml__dataset *d);

#ifdef __cplusplus
}
#endif
#endif
