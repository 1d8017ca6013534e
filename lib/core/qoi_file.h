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

#ifdef __cplusplus
}
#endif
#endif
