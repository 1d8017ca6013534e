/*
 * lib/core/collection.h - the layout of a collection file: what the runtime's
 * collector (the runtime's collect.c) writes and the CLI's data-set reader
 * (lib/train/dataset.c) reads, defined once (internal).
 *
 * One group per region label; in it:
 *   input   [rows, *in_features]   float32 or float64, chunked, growing
 *   output  [rows, *out_features]
 *   calls   one compound record per call (hml__call_record, fields named
 *           as its members), chunked, growing; a record points only at
 *           rows written before it, so the last record says how many rows
 *           of `input` and `output` are complete. A record may stand for
 *           several calls (`ncalls` > 1): the row calls one thread made
 *           in a row (hml_region_row_begin()), whose rows follow one
 *           another; `call` is then the first one's number and
 *           `original_seconds` their sum, so seconds per row stay right.
 *           Files written before `ncalls` existed lack the field: each of
 *           their records is one call.
 * and the group attributes named below (strings, `runs` an int64).
 *
 * The writer helpers create and describe these objects; the reader helpers
 * open and describe them without judging: what a caller accepts is its own
 * policy (the collector appends only to its own layout, the reader takes
 * any float data with the right names). Errors are hml errors (HML_EIO with
 * HDF5's reason) naming the region and the file.
 */
#ifndef HML_LIB_COLLECTION_H
#define HML_LIB_COLLECTION_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "core/collection_keep.h"
#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The two data sides, as indices of the arrays below. */
enum { HML__COLL_IN = 0, HML__COLL_OUT = 1 };

/** Data set names of the sides: "input", "output". */
extern const char *const hml__coll_side_name[2];

#define HML__COLL_CALLS "calls"

/* Group attributes. Per side: functor text, array names ("S, X, T"),
 * domain, dtype name ("float32"); `runs` counts the processes that
 * appended, `created` is the UTC time the group was made. */
#define HML__COLL_ATTR_VERSION "hml_version"
#define HML__COLL_ATTR_CREATED "created"
#define HML__COLL_ATTR_RUNS "runs"
extern const char *const hml__coll_attr_functor[2];
extern const char *const hml__coll_attr_arrays[2];
extern const char *const hml__coll_attr_domain[2];
extern const char *const hml__coll_attr_dtype[2];

/** One record of the `calls` data set. */
typedef struct hml__call_record {
	int64_t run;             /**< which process run (0, 1, ... per file) */
	int64_t call;            /**< call number within the run */
	int64_t input_offset;    /**< first row of this call in `input` */
	int64_t input_rows;
	int64_t output_offset;
	int64_t output_rows;
	double original_seconds; /**< time of the original code */
	int64_t ncalls;          /**< region calls the record stands for (>= 1) */
} hml__call_record;

/**
 * Whether `label` can name a region group: not empty, no '/', not ".".
 * Returns 1 or 0; sets no error.
 */
int hml__coll_label_ok(const char *label);

/* ---- writer side ---------------------------------------------------------- */

/** What the attributes of a new group describe. Strings may not be NULL. */
typedef struct hml__coll_meta {
	const char *functor[2], *arrays[2], *domain[2];
	hml_dtype dtype[2];
} hml__coll_meta;

/**
 * The compound HDF5 type of hml__call_record (native layout, the fields
 * named as the members), with `ncalls` when `with_ncalls` is nonzero (to
 * append to a table made before that field, leave it out). Yours to
 * H5Tclose(); H5I_INVALID_HID on failure (HDF5's error stack says why).
 */
hid_t hml__coll_calls_type(int with_ncalls);

/**
 * Create the region's group in `file` (no modification times) and write
 * its attributes, `runs` included. *group is yours to H5Gclose().
 * Errors: HML_EIO "cannot create region 'L' in 'P': ...".
 */
int hml__coll_group_create(hid_t *group, hid_t file, const char *path,
                           const char *label, const hml__coll_meta *meta,
                           int64_t runs);

/* ---- compression (collection_sample.c) ---------------------------------- */

/**
 * hml__compression_parse() (collection_keep.h), and a filter this HDF5 lacks
 * (H5Zfilter_avail) is HML_ENOTSUPPORTED "compression 'szip' is not
 * available in this HDF5"; anything else HML_EINVALID "unknown compression
 * 'x' (expected none, deflate:L, ...)".
 */
int hml__coll_compression_parse(hml__coll_compression *out, const char *text);

/**
 * Create a side's empty data set, `ndim` feature dims of `shape`, chunked
 * by about 1 MiB of rows but no more than `rows_max` rows when it is > 0
 * (a reservoir's N: HDF5 allocates whole chunks, so a small collection in
 * a large chunk would take the chunk's size), compressed as `z` says
 * (NULL: not compressed). *dset is yours. Errors: HML_EIO "cannot create
 * 'L/input' in 'P': ...".
 */
int hml__coll_data_create(hid_t *dset, hid_t group, const char *path,
                          const char *label, int side, hml_dtype dtype,
                          int ndim, const int64_t *shape,
                          const hml__coll_compression *z, int64_t rows_max);

/** Create the empty `calls` table, chunked by 1024 records or by
 *  `records_max` when that is smaller and > 0 (a reservoir writes one per
 *  run). *dset is yours. Errors as above. */
int hml__coll_calls_create(hid_t *dset, hid_t group, const char *path,
                           const char *label, int64_t records_max);

/**
 * Write `rows` rows of `buf` (memory type `mem_type`, rows of `nfeat` dims
 * `feat`) at row `at` of `dset`, which holds `have` rows; the data set
 * grows to at least at + rows. `name` is the data set's, for the message:
 * HML_EIO "cannot write 'L/NAME' to 'P': ...".
 */
int hml__coll_rows_write(hid_t dset, const char *path, const char *label,
                         const char *name, hid_t mem_type, int64_t have,
                         int64_t at, int64_t rows, int nfeat,
                         const int64_t *feat, const void *buf);

/** `runs` of a group: absent or negative reads as 0. Errors: HML_EIO. */
int hml__coll_runs_get(hid_t group, int64_t *runs);
int hml__coll_runs_set(hid_t group, int64_t runs);

/* ---- sampling (collection_sample.c) ------------------------------------ */

/* hml__coll_sampling (collection_keep.h) as group attributes. */

/** Write the attributes. Errors: HML_EIO "cannot write attribute 'A'". */
int hml__coll_sampling_set(hid_t group, const hml__coll_sampling *s);

/**
 * Read them: 1 when the group has them (*s filled), 0 when it was not
 * sampled (*s zeroed). Errors: HML_EIO; HML_EINVALID "region 'L' in 'P':
 * attribute 'sample_seed' is not an integer".
 */
int hml__coll_sampling_get(hid_t group, const char *path, const char *label,
                           hml__coll_sampling *s);

/* ---- reader side ---------------------------------------------------------- */

/** How an `input` or `output` data set is made. */
typedef struct hml__coll_data {
	hml_dtype dtype;      /**< HML_F32/HML_F64; 0 for any other type */
	char type_name[32];   /**< "float32", "int32", "uint8", "string", ... */
	int rank;             /**< dims, rows included (may be 0 or > 9) */
	int64_t rows;         /**< extent of the first dim (0 when rank is 0) */
	int ndim;             /**< feature dims: rank - 1, when 1 <= rank <= 9 */
	int64_t shape[HML_MAX_DIMS];
	int growing;          /**< the first dim is unlimited */
} hml__coll_data;

/**
 * Whether the region group holds a link named `name`: 1 or 0. Errors:
 * HML_EIO "cannot read region 'L' in 'P': ...".
 */
int hml__coll_has(hid_t group, const char *path, const char *label,
                  const char *name);

/**
 * Open a side's data set and describe it. *dset is yours to H5Dclose()
 * (left invalid on failure). Errors: HML_EIO "cannot read 'L/input' in
 * 'P': ..."; HML_EINVALID "'L/input' in 'P' is damaged: its dim D is N,
 * past its maximum M" (a dataspace only a damaged file holds).
 */
int hml__coll_data_open(hid_t *dset, hml__coll_data *info, hid_t group,
                        const char *path, const char *label, int side);

/**
 * The name of an HDF5 data type as hml reports it: "float32", "float64",
 * "float16", "int32", "uint8", ..., or the type class ("string",
 * "compound", "enum", ...).
 */
void hml__coll_type_name(char *buf, size_t size, hid_t type);

/** How a `calls` data set is made and what its last record says. */
typedef struct hml__coll_calls {
	int64_t ncalls;       /**< records (extent of a 1-D table, else 0) */
	int table;            /**< one dimension */
	int growing;          /**< ... and unlimited */
	int fields;           /**< 2: every field of hml__call_record (but
	                           perhaps `ncalls`), 1: the four row fields,
	                           0: not a table of calls */
	int has_ncalls;       /**< the records have `ncalls` */
	hml__call_record last;/**< row fields of the last record when fields
	                           >= 1 and ncalls > 0; zero otherwise */
} hml__coll_calls;

/**
 * Open `calls` (which must exist: see hml__coll_has) and describe it,
 * reading its last record when it has the row fields. *dset is yours
 * (left invalid on failure). Errors: HML_EIO "cannot read 'L/calls' in
 * 'P': ...".
 */
int hml__coll_calls_open(hid_t *dset, hml__coll_calls *info, hid_t group,
                         const char *path, const char *label);

/** The most records hml__coll_calls_per_row() reads (the first ones). */
#define HML__COLL_PER_ROW_CALLS 65536

/**
 * The median over the calls of `dset` (opened by hml__coll_calls_open(),
 * `info` its description) of the original code's seconds per output row:
 * a robust cost of the region, which one preempted call does not move
 * (hml-manifest(5) "original_seconds_per_row"). Calls without rows or
 * without a positive time are skipped; at most the first
 * HML__COLL_PER_ROW_CALLS records are read. *median is NaN when the table
 * has no original_seconds field or no call counts. Errors: HML_EIO
 * "cannot read 'L/calls' in 'P': ...", HML_ENOMEM.
 */
int hml__coll_calls_per_row(hid_t dset, const hml__coll_calls *info, const char *path,
                            const char *label, double *median);

/**
 * A string attribute of the group, NULL when it is absent or not a string.
 * *out is yours to free(). Errors: HML_EIO, HML_ENOMEM.
 */
int hml__coll_attr_text(hid_t group, const char *name, char **out);

/**
 * Whether data set `dset` of `path` is a view (virtual
 * layout), and if so that every part it maps is in place and stores the
 * rows it maps (HDF5 would read fill values for a part that is gone).
 * 1: a view, checked; 0: not a view. Errors: HML_ENOTFOUND "'L/input' in
 * 'P' maps rows of 'Q', which is missing", HML_EINVALID "... which stores
 * fewer rows than it maps", HML_EIO.
 */
int hml__coll_vds_check(hid_t dset, const char *path, const char *label, const char *name);

#ifdef __cplusplus
}
#endif
#endif
