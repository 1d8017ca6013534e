/*
 * runtime/src/collect.h - appending a region's calls to an HDF5 file
 * (internal).
 *
 * Layout, one group per region label:
 *   /<label>/input   [rows, *in_features]   dtype of the application data
 *   /<label>/output  [rows, *out_features]
 *   /<label>/calls   compound, one record per call (see hml__call_record)
 * chunked and extendible along rows. Group attributes: hml_version,
 * input_functor, output_functor, input_arrays, output_arrays, input_domain,
 * output_domain, input_dtype, output_dtype, created; `runs` counts the processes that appended.
 *
 * Flush policy: calls are buffered in memory and written when the buffer
 * reaches flush_bytes, when flush_seconds have passed since the last write
 * (checked at each append), on hml__collector_flush() and on close. The file
 * is opened, appended to and closed at each flush, so at any moment outside
 * a flush the file on disk is a complete, closed HDF5 file holding every
 * call up to the last flush: a process killed between flushes loses only
 * the calls still buffered.
 */
#ifndef HML_RUNTIME_COLLECT_H
#define HML_RUNTIME_COLLECT_H

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__collector hml__collector;

typedef struct hml__collector_desc {
	const char *path;            /**< HDF5 file, created if missing */
	const char *label;           /**< group name */
	hml_dtype in_dtype, out_dtype;
	int in_ndim, out_ndim;       /**< feature dims (without rows) */
	int64_t in_shape[HML_MAX_DIMS], out_shape[HML_MAX_DIMS];
	const char *in_functor, *out_functor;   /**< recorded as attributes */
	const char *in_arrays, *out_arrays;     /**< "S, X, T" */
	const char *in_domain, *out_domain;
	size_t flush_bytes;          /**< 0: 16 MiB */
	double flush_seconds;        /**< <= 0: 1 s */
} hml__collector_desc;

/** One record of the `calls` dataset. */
typedef struct hml__call_record {
	int64_t run;             /**< which process run (0, 1, ... per file) */
	int64_t call;            /**< call number within the run */
	int64_t input_offset;    /**< first row of this call in `input` */
	int64_t input_rows;
	int64_t output_offset;
	int64_t output_rows;
	double original_seconds; /**< time of the original code */
} hml__call_record;

/**
 * Open (create) the file, create the group or check that an existing one
 * has the same feature shapes and dtypes, bump `runs`, and close the file
 * again. Errors: HML_EIO ("cannot write 'f.h5': ..."; "'f.h5' is not an
 * HDF5 file" - an existing non-HDF5 file is never modified), HML_ESHAPE
 * ("region 'r' in 'f.h5' holds input rows [5] of float64 but this run gives
 * [6] of float64").
 */
int hml__collector_open(hml__collector **out, const hml__collector_desc *desc);

/**
 * Buffer one call: `in_rows` rows of input and `out_rows` rows of output,
 * row-major in the desc's dtypes, plus the original code's time. Copies the
 * data. May flush (see policy). `run`, `call` and offsets are filled in.
 */
int hml__collector_append(hml__collector *c, const void *in, int64_t in_rows,
                          const void *out, int64_t out_rows,
                          double original_seconds);

/** Write everything buffered now. */
int hml__collector_flush(hml__collector *c);

/** Rows appended by this collector (buffered or written). */
int64_t hml__collector_rows(const hml__collector *c);

/** Flush, then free (NULL-safe). Returns the flush's result. */
int hml__collector_close(hml__collector *c);

#ifdef __cplusplus
}
#endif
#endif
