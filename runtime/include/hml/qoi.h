/*
 * hml/qoi.h - record an application's quantity of interest (QoI).
 *
 * An application calls hml_qoi_write() once its result is known (all option
 * prices, the final state, ...). When the environment variable HML_QOI names
 * an HDF5 file, the values are stored there as dataset `name` (replacing one
 * of the same name); otherwise the call does nothing. `hml evaluate` compares
 * the QoI of an accurate run with that of a surrogate run.
 *
 * Under MPI (several ranks, found in the launcher's environment: see
 * hml-runtime(3)), each rank writes its own file, HML_QOI with the rank
 * before the extension (qoi.h5 -> qoi.r0002.h5), as collection does with
 * HML_DB; hml evaluate reads the ranks' files as one, in rank order.
 */
#ifndef HML_QOI_H
#define HML_QOI_H

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Write `data` (row-major, `ndim` dims of `shape`, element type `dtype`:
 * HML_F32, HML_F64, HML_I32 or HML_I64, stored as it is; hml evaluate
 * compares every type as doubles) as dataset `name` of the file named by
 * HML_QOI. Returns 0 when written or when
 * HML_QOI is unset; HML_EINVALID for bad arguments (including a shape whose
 * size in bytes does not fit in 64 bits), HML_EIO when the file
 * cannot be created or is not HDF5 (an existing non-HDF5 file is left
 * untouched).
 */
HML_EXTERN int hml_qoi_write(const char *name, const void *data, hml_dtype dtype,
                             int ndim, const int64_t *shape);

/**
 * hml_qoi_write() of a 1-D array of `n` elements, the common case (every
 * option price, every energy): one line in the application. C only (it
 * builds the shape as a compound literal).
 */
#define HML_QOI_WRITE_1D(name, data, dtype, n) \
	hml_qoi_write((name), (data), (dtype), 1, (const int64_t[1]){ (int64_t)(n) })

/**
 * Record a quantity of interest over time (an iterative application's
 * state at several of its steps): `data` holds shape[0] records, record r
 * (the slice at index r of the first dimension) the value at the
 * application's step steps[r] (shape[0] values, >= 0, strictly
 * increasing; borrowed). hml evaluate then reports the error at every
 * record (the error over time) as well as over the whole. Returns as
 * hml_qoi_write() does; HML_EINVALID also for steps that are NULL,
 * negative or not increasing.
 */
HML_EXTERN int hml_qoi_write_steps(const char *name, const int64_t *steps,
                                   const void *data, hml_dtype dtype, int ndim,
                                   const int64_t *shape);

/** Like hml_qoi_write() with an explicit file path instead of HML_QOI. */
HML_EXTERN int hml_qoi_write_to(const char *path, const char *name,
                                const void *data, hml_dtype dtype,
                                int ndim, const int64_t *shape);

#ifdef __cplusplus
}
#endif
#endif
