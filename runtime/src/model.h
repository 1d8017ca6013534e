/*
 * runtime/src/model.h - model inference (internal): what the rest of the
 * runtime calls to run a region's model. Implemented in model.c, which
 * forwards to a backend loaded at run time (backend.h): TorchScript runs in
 * libhml-torch.so, the libtorch plugin, dlopen-ed on the first load, so a
 * process that never loads a model never maps libtorch. The plugin is
 * looked up in $HML_TORCH_PLUGIN when set (a path; for tests and for
 * programs that link the runtime statically), else beside the object that
 * holds this code (libhml.so), else in its hml/ subdirectory (the installed
 * LIBDIR/hml/libhml-torch.so). No C++ exception crosses this interface.
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
 * HML_EMODEL (not a TorchScript archive, or no forward method),
 * HML_ENOTFOUND / HML_ENOTSUPPORTED when the libtorch plugin cannot be
 * loaded or is not this build's, HML_ENOTSUPPORTED in a build without
 * libtorch (HML_WITH_TORCH=OFF); the message is "cannot open model 'PATH':
 * REASON".
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

/** The name of the backend running `m` ("torch"). Static storage. */
const char *hml__model_backend(const hml__model *m);

/**
 * Load the model at `path`, run it once on `rows` rows of x (float32,
 * [rows, *in_shape]) and write its outputs (float32) to y, which holds
 * y_size floats; *per_row (may be NULL) gets the outputs per row. The one
 * way the CLI and the tests run a TorchScript model: through the same
 * backend as applications. HML_ESHAPE when the outputs do not fit in y.
 */
int hml__model_predict_f32(const char *path, const float *x, int64_t rows, int in_ndim,
                           const int64_t *in_shape, float *y, int64_t y_size,
                           int64_t *per_row);

#ifdef __cplusplus
}
#endif
#endif
