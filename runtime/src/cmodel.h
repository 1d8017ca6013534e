/*
 * runtime/src/cmodel.h - the loader of compiled models (internal): shared
 * objects made by `hml deploy --target c` (ABI: hml/cmodel.h). Plain C, no
 * dependency beyond libc and libdl; shaped like the TorchScript shim
 * (model.h) so a region can run either through the same calls.
 *
 * A file is trusted only after these checks, in this order, none of which
 * runs code from the file: it is an ELF file; it contains the ABI tag
 * string (so a foreign shared object is refused before dlopen would run its
 * constructors); dlopen(RTLD_NOW | RTLD_LOCAL) succeeds; it exports the
 * data symbol HML_CMODEL_ENTRY; the struct there carries the magic number,
 * ABI version, size, tag and dtype of this runtime, sane shapes and both
 * forward pointers. Only then is forward ever called.
 */
#ifndef HML_RUNTIME_CMODEL_H
#define HML_RUNTIME_CMODEL_H

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__cmodel hml__cmodel;

/**
 * 1 when the file at `path` starts like a shared object (ELF magic), so a
 * region should load it with hml__cmodel_load rather than as TorchScript
 * (a zip archive); 0 otherwise or when unreadable.
 */
int hml__cmodel_sniff(const char *path);

/**
 * Load the compiled model at `path`. `*out` is yours (hml__cmodel_free).
 * Errors (message "cannot open compiled model 'PATH': REASON"):
 * HML_ENOTFOUND (no such file), HML_EIO (unreadable), HML_EMODEL (not an
 * ELF file, not a compiled hml model, dlopen failure, missing entry
 * symbol, bad magic), HML_ENOTSUPPORTED (another ABI version or dtype).
 */
int hml__cmodel_load(hml__cmodel **out, const char *path);

/** dlclose()s the object. NULL-safe. */
void hml__cmodel_free(hml__cmodel *m);

/** The model's arithmetic type: HML_F32. */
hml_dtype hml__cmodel_dtype(const hml__cmodel *m);

/**
 * The per-row feature shapes the model declares (without the batch
 * dimension); returns the number of dims copied into `shape` (room for
 * HML_MAX_DIMS).
 */
int hml__cmodel_declared_input(const hml__cmodel *m, int64_t *shape);
int hml__cmodel_declared_output(const hml__cmodel *m, int64_t *shape);

/** The model id and the SHA-256 of the TorchScript file it came from. Borrowed. */
const char *hml__cmodel_id(const hml__cmodel *m);
const char *hml__cmodel_hash(const hml__cmodel *m);

/**
 * Run the model on `in`: `ndim` dims of `shape`, shape[0] the rows, the
 * rest multiplying to the model's input features (row-major, element type
 * `dtype`, F32 or F64; borrowed). The output, in the same dtype, is kept in
 * the model until the next forward (hml__cmodel_output). Errors:
 * HML_ESHAPE "compiled model 'PATH' takes rows of [5], not [4]",
 * HML_EINVALID (bad dtype), HML_ENOMEM.
 */
int hml__cmodel_forward(hml__cmodel *m, const void *in, hml_dtype dtype,
                        int ndim, const int64_t *shape);

/**
 * The last forward's output: [rows, *declared output shape], a buffer owned
 * by the model, valid until the next forward or free; `*dtype` is the
 * input's dtype. HML_EINVALID before any forward.
 */
int hml__cmodel_output(const hml__cmodel *m, const void **data, hml_dtype *dtype,
                       int *ndim, int64_t *shape);

#ifdef __cplusplus
}
#endif
#endif
