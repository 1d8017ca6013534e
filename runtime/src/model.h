/*
 * runtime/src/model.h - the libtorch shim (internal). The only C++ in the
 * runtime lives behind this C interface, in model.cpp; no C++ exception
 * crosses it: every function catches everything and records an hml error.
 */
#ifndef HML_RUNTIME_MODEL_H
#define HML_RUNTIME_MODEL_H

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__model hml__model;

/**
 * Load the TorchScript file `path` for inference on the CPU (on the GPU in a
 * HML_WITH_CUDA build when one is present). `threads` > 0 sets libtorch's
 * intra-op thread count (process-wide). `*out` is yours (hml__model_free).
 * Errors: HML_ENOTFOUND (no such file), HML_EIO (unreadable),
 * HML_EMODEL (not a TorchScript archive, or no forward method); the message
 * is "cannot open model 'PATH': REASON".
 */
int hml__model_load(hml__model **out, const char *path, int threads);

void hml__model_free(hml__model *m);

/** Element type of the model's floating-point parameters (F32 if none). */
hml_dtype hml__model_dtype(const hml__model *m);

/**
 * Feature shapes the model declares, if its module has the integer-list
 * attributes `hml_input_shape` / `hml_output_shape` (hml-trained models do;
 * Python models may). Returns the number of dims copied into `shape`
 * (without the leading batch dim), or 0 when the attribute is absent.
 */
int hml__model_declared_input(const hml__model *m, int64_t *shape);
int hml__model_declared_output(const hml__model *m, int64_t *shape);

/**
 * Run forward on `in` (row-major, `ndim` dims of `shape`, element type
 * `dtype`; the memory is borrowed, not copied, when dtype is the model's).
 * Runs under torch::NoGradGuard. The result is kept inside the model until
 * the next forward; read it with hml__model_output(). A model that rejects
 * the input fails with HML_ESHAPE or HML_EMODEL naming the input shape.
 */
int hml__model_forward(hml__model *m, const void *in, hml_dtype dtype,
                       int ndim, const int64_t *shape);

/**
 * The last forward's output: a contiguous CPU buffer owned by the model,
 * valid until the next forward or free. `*dtype` is F32 or F64 (other
 * output types are converted to the model dtype by the shim).
 */
int hml__model_output(const hml__model *m, const void **data, hml_dtype *dtype,
                      int *ndim, int64_t *shape);

/** "1.13.1": the libtorch version compiled against. Static storage. */
const char *hml__torch_version(void);

#ifdef __cplusplus
}
#endif
#endif
