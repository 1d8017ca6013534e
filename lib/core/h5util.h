/*
 * lib/core/h5util.h - HDF5 helpers shared by the runtime's collector and QoI
 * writer and by the CLI's data-set reader (internal).
 *
 * hml never lets HDF5 print: hml__h5_init() switches the automatic error
 * stack printing off once per process, and failures become hml errors whose
 * message ends with the innermost HDF5 description.
 */
#ifndef HML_LIB_H5UTIL_H
#define HML_LIB_H5UTIL_H

#include <hdf5.h>

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Initialise HDF5 and silence its error printing (idempotent, thread-safe). */
void hml__h5_init(void);

/**
 * Record `code` with the formatted message followed by ": " and the most
 * specific description on HDF5's current error stack (if any). Returns code.
 */
int hml__h5_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/**
 * Open `path` read-write, creating it when it does not exist. An existing
 * file that is not HDF5 is left untouched: HML_EIO "'PATH' is not an HDF5
 * file". Unwritable: HML_EIO "cannot write 'PATH': Permission denied".
 *
 * Also: an existing empty file is taken as a new one; a damaged HDF5 file
 * gives HML_EIO "'PATH' is not a valid HDF5 file: <reason>" when its
 * superblock is damaged (cut short, addresses undefined or past the end
 * of the file: checked before HDF5 reads it, so that HDF5 allocates
 * nothing the file's bytes ask for), otherwise "cannot open 'PATH':
 * <HDF5's reason>", and is left as it is. The file is written through a driver that orders HDF5's writes so
 * that a process killed at any moment leaves a file that reads as it was
 * before the last H5Fflush()/H5Fclose() or as after it, for sessions that
 * add data and objects (not for ones that delete; see h5_ordered.c).
 */
int hml__h5_open_rw(hid_t *out, const char *path);

/** Open an existing HDF5 file read-only (HML_ENOTFOUND, HML_EIO), with
 * the superblock checked first as hml__h5_open_rw() does. */
int hml__h5_open_ro(hid_t *out, const char *path);

/** HDF5 native type for an hml dtype (H5T_NATIVE_FLOAT / _DOUBLE). */
hid_t hml__h5_type(hml_dtype dtype);

/** hml dtype of an HDF5 float type (0 if not float/double). */
hml_dtype hml__h5_dtype(hid_t type);

/** Write (replace) a variable-length UTF-8 string attribute. */
int hml__h5_attr_set_str(hid_t obj, const char *name, const char *value);

/** Read a string attribute into a malloc'ed string (*out yours to free). */
int hml__h5_attr_get_str(hid_t obj, const char *name, char **out);

/** Write (replace) / read a scalar int64 attribute. */
int hml__h5_attr_set_i64(hid_t obj, const char *name, int64_t value);
int hml__h5_attr_get_i64(hid_t obj, const char *name, int64_t *out);

/** Write (replace) / read a scalar float64 attribute (HML_ENOTFOUND when
 *  absent, HML_EINVALID when it is not one floating-point value). */
int hml__h5_attr_set_f64(hid_t obj, const char *name, double value);
int hml__h5_attr_get_f64(hid_t obj, const char *name, double *out);

/** "1.10.8": the HDF5 library version in use. Static storage. */
const char *hml__h5_version(void);

#ifdef __cplusplus
}
#endif
#endif
