/*
 * runtime/src/collect.h - appending a region's calls to an HDF5 file
 * (internal).
 *
 * The collector owns its file: it alone opens, checks and writes it. The
 * layout (one group per region label with `input`, `output`, `calls` and
 * attributes) is defined in lib/core/collection.h, beside the CLI's reader.
 *
 * Sampling (desc.sample, sample.h): each call's rows pass the sampler
 * before they are recorded; a record keeps the rows kept (its time scaled
 * to them) and a call that keeps none leaves no record. A reservoir's rows
 * are written at hml__collector_flush() and at close, always over the
 * same rows and record of the file, so the file holds at most N rows of
 * this run; what was kept and dropped goes into the group's sampling
 * attributes (lib/core/collection.h) at every write.
 *
 * Flush policy: calls are buffered in memory and written when the buffer
 * reaches flush_bytes, when flush_seconds have passed since the last write
 * (checked at each recorded call), on hml__collector_flush() and on
 * close. The file is opened, appended to and closed at each flush, so at
 * any moment outside a flush the file on disk is a complete, closed HDF5
 * file holding every call up to the last flush: a process killed between
 * flushes loses only the calls still buffered.
 */
#ifndef HML_RUNTIME_COLLECT_H
#define HML_RUNTIME_COLLECT_H

#include "hml/common.h"
#include "sample.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__collector hml__collector;

/** The sides of a call, for hml__collector_next(). */
enum { HML__COLLECTOR_INPUT = 0, HML__COLLECTOR_OUTPUT = 1 };

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
	hml__sample_cfg sample;      /**< what to keep (sample.h); zeroed: every row */
	const char *compression;     /**< of new data sets: lib/core/collection.h's
	                                  names ("deflate:4"); NULL: none */
} hml__collector_desc;

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
 * Check now that `path` can be collected into (the region's open, before
 * the first call's work): opens it read-write, creating an empty HDF5 file
 * when it is missing, and closes it. Errors as hml__collector_open()'s
 * HML_EIO; an empty name is HML_EINVALID.
 */
int hml__collector_probe(const char *path);

/**
 * Where the next call's `rows` rows of `side` (HML__COLLECTOR_INPUT or
 * _OUTPUT) go:
 * *dst receives room for them in the collector's buffer, row-major in the
 * desc's dtype, to be filled by the caller. Nothing is recorded until
 * hml__collector_commit(); placing a side again replaces its rows. *dst
 * stays valid until the next call on this collector (a flush moves it).
 * Errors: HML_EINVALID (negative rows), HML_ENOMEM; the collector is then
 * as it was.
 */
int hml__collector_next(hml__collector *c, int side, int64_t rows, void **dst);

/**
 * Record the call whose rows were placed with hml__collector_next() for
 * both sides, with the original code's time. May flush (see policy).
 * Errors: HML_EINVALID when a side was not placed; HML_ENOMEM (nothing
 * recorded); a flush's HML_EIO (the call stays buffered).
 */
int hml__collector_commit(hml__collector *c, double original_seconds);

/**
 * Buffer one call: `in_rows` rows of input and `out_rows` rows of output,
 * row-major in the desc's dtypes, plus the original code's time: copies
 * the data with hml__collector_next() and records it with
 * hml__collector_commit().
 */
int hml__collector_append(hml__collector *c, const void *in, int64_t in_rows,
                          const void *out, int64_t out_rows,
                          double original_seconds);

/**
 * hml__collector_append() for `ncalls` calls (>= 1) whose rows follow one
 * another: one record stands for them all (lib/core/collection.h), with
 * their summed time. HML_EINVALID for ncalls < 1.
 */
int hml__collector_append_calls(hml__collector *c, const void *in, int64_t in_rows,
                                const void *out, int64_t out_rows, int64_t ncalls,
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
