/*
 * lib/core/qoi_file.h - the QoI file: what an application records with
 * hml_qoi_write() and `hml evaluate` compares (internal; writer and
 * reader side by side).
 *
 * Layout: an HDF5 file (the one HML_QOI names) with one dataset per
 * quantity of interest at the root, named as given, shaped as given,
 * stored as the application's data is: little-endian IEEE float or double,
 * or little-endian 32- or 64-bit signed integers (counts, indices, dates),
 * with a string attribute "hml_version". Writing a name again replaces the
 * dataset. h5py and h5dump read it as is.
 *
 * A quantity of interest recorded over time (an iterative application's
 * state at several steps) is such a dataset whose first dimension is the
 * record, with a 1-D 64-bit integer attribute "hml_steps" of that length:
 * the application's step of each record, strictly increasing. hml evaluate
 * compares it at every record (the error over time) as well as whole. A
 * dataset without the attribute (every file of hml before it) is a QoI at
 * the end of the run only.
 */
#ifndef HML_LIB_QOIFILE_H
#define HML_LIB_QOIFILE_H

#include <stddef.h>
#include <stdint.h>

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Check a quantity of interest before it is written: a name without '/',
 * data, a dtype of float32, float64, int32 or int64, 1 to HML_MAX_DIMS positive dims whose product (in
 * bytes) fits in 64 bits. 0 or HML_EINVALID naming the problem, e.g.
 * "quantity of interest 'q': shape [a, b] has too many elements".
 * Needs no HDF5 (qoi_check.c).
 */
int hml__qoi_check(const char *name, const void *data, hml_dtype dtype,
                   int ndim, const int64_t *shape);

/**
 * Write `data` (row-major, `ndim` dims of `shape`) as dataset `name` of
 * the HDF5 file `path`, created when missing, replacing a dataset of that
 * name. Checks its arguments as hml__qoi_check() does. HML_EIO when the
 * file cannot be created or is not HDF5 (an existing non-HDF5 file is
 * left untouched).
 */
int hml__qoi_file_write(const char *path, const char *name, const void *data,
                        hml_dtype dtype, int ndim, const int64_t *shape);

/**
 * Read dataset `name` of the QoI file `path`, flattened, as doubles (any
 * numeric type is converted: integers beyond 2^53 are rounded):
 * *out (malloc'ed, yours; NULL on failure) holds *n values.
 * HML_ENOTFOUND "the application wrote no quantity of interest 'N' to
 * 'P'" (or the file is missing), HML_EIO when it cannot be read.
 */
int hml__qoi_file_read(const char *path, const char *name, double **out, size_t *n);

/**
 * The QoI `name` of an MPI run of `ranks` ranks, each of which wrote its
 * own file (core/rankfile.h: rank k's is hml__rankfile_path(path, k)),
 * read as one: every rank's values, flattened, in rank order, as
 * hml__qoi_file_read() reads one file. `ranks` <= 1 reads `path` itself.
 * HML_ENOTFOUND "rank 1 of 3 wrote no QoI file ('P' is missing)", and
 * hml__qoi_file_read()'s errors for a rank's file.
 */
int hml__qoi_file_read_ranks(const char *path, int ranks, const char *name, double **out,
                             size_t *n);

/** The attribute naming the step of each record of a QoI over time. */
#define HML__QOI_STEPS_ATTR "hml_steps"

/**
 * Check the steps of a QoI over time: `steps` holds shape[0] values,
 * each >= 0 and greater than the one before. 0 or HML_EINVALID, e.g.
 * "quantity of interest 'q': step 4 of record 2 does not follow step 7".
 * Needs no HDF5 (qoi_check.c).
 */
int hml__qoi_check_steps(const char *name, const int64_t *steps, int ndim,
                         const int64_t *shape);

/**
 * hml__qoi_file_write() of a QoI over time: record r of `data` (the
 * slice at index r of the first dimension of `shape`) is the value at
 * application step steps[r]. Checks as hml__qoi_file_write() and
 * hml__qoi_check_steps() do.
 */
int hml__qoi_file_write_steps(const char *path, const char *name, const int64_t *steps,
                              const void *data, hml_dtype dtype, int ndim,
                              const int64_t *shape);

/**
 * The steps of dataset `name` of the QoI file `path` when it was written
 * over time: *steps (malloc'ed, yours) holds *n values; *steps NULL and
 * *n 0 when it was written at the end only (hml__qoi_file_write()).
 * Errors: those of hml__qoi_file_read(); HML_EIO "quantity of interest
 * 'N' in 'P': attribute 'hml_steps' does not match its first dimension"
 * (or is not integers).
 */
int hml__qoi_file_read_steps(const char *path, const char *name, int64_t **steps, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
