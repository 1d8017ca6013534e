/*
 * lib/deploy/export.h - reading an hml-trained TorchScript model into the
 * torch-free description of lib/deploy/codegen.h (internal; libtorch, in
 * lib/deploy/export.cpp behind extern "C"). The CLI reaches it through its
 * plugin libhml-cli-export.so (export_plugin.h, export_proxy.c), the unit
 * tests link it directly; without libtorch, the proxy refuses with
 * HML_ENOTSUPPORTED.
 */
#ifndef HML_LIB_EXPORT_H
#define HML_LIB_EXPORT_H

#include "deploy/codegen.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Read the TorchScript model at `path` into `out` (caller's storage; release
 * with hml__cg_model_release, also after a failure). The model must be one
 * hml trains (models/mlp.ts, cnn.ts, cnnvec.ts): an "hml_arch" attribute of
 * family mlp or cnn, parameters w0, b0, ..., w_out, b_out and nothing else
 * (cnnvec, models/cnnvec.ts: conv layers w0, b0, ..., optionally w_head,
 * b_head, then w_out, b_out),
 * buffers in_mean, in_std, out_mean, out_std, attributes hml_input_shape /
 * hml_output_shape. The description is then checked against the file: the
 * module's forward and the description, evaluated with libtorch on random
 * rows, must agree to 1e-4 relative, so a model whose graph is not the
 * plain family graph is refused rather than compiled wrong. Parameters of
 * another floating type are converted to float32.
 * A model without hml_arch is read when it is a plain torch.nn.Sequential
 * of Linear layers (bias optional) each followed by at most one of ReLU,
 * Tanh, GELU (exact), SiLU, Sigmoid, ending in a Linear layer (Dropout and
 * Identity modules are skipped), as torch.jit.script exports one from
 * Python (`hml import`): an MLP with no normalisation (means 0, standard
 * deviations 1), rows [in_features] to [out_features], arch
 * "sequential:16x8:tanh" (hidden widths; the activations, '+'-joined when
 * they differ); the same forward check applies.
 * Errors: HML_ENOTFOUND / HML_EIO (file), HML_EMODEL (not TorchScript),
 * HML_ENOTSUPPORTED "cannot compile model 'PATH' to C: REASON" (neither an
 * hml model nor such a Sequential, and why), HML_ESHAPE (its shapes disagree with its weights).
 */
int hml__export_model(const char *path, hml__cg_model *out);

#ifdef __cplusplus
}
#endif
#endif
