/*
 * lib/deploy/codegen.h - the generator of a model's C deployment form: C
 * specialised to the architecture of a model description (hml__cg_model,
 * lib/deploy/cg_model.h; internal, used by `hml deploy --target c`).
 *
 * The generated source implements the ABI of hml/cmodel.h and is
 * standalone (libc and libm only). Folding: the output de-normalisation is
 * folded into the last layer's weights and bias (exact); the input
 * normalisation into the first layer's for an MLP; for a CNN it is applied
 * while the field is copied into its zero-padded buffer (folding it would
 * be wrong at the borders, where torch pads the *normalised* field with 0).
 * The folding is done in double and the constants rounded once to float.
 */
#ifndef HML_LIB_CODEGEN_H
#define HML_LIB_CODEGEN_H

#include <stdint.h>

#include "deploy/cg_model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__cg_options {
	const char *id;      /**< model id ("m3"): names the functions hml_<id>_forward_f32 */
	const char *hash;    /**< SHA-256 hex of the source model (may be NULL) */
	/** The card's input statistics, its "guard" object as JSON text
	 *  (lib/core/guard.h), embedded as the entry's input_stats; NULL or
	 *  "": none (input_stats NULL) */
	const char *input_stats;
} hml__cg_options;

/**
 * Write the generated source to `c_path` and its header to `h_path`
 * (`h_path` may be NULL). The .c compiles on its own (C11, libm); it
 * defines hml_<id>_forward_f32 / _f64 / _i32 (the ABI's forward
 * signatures) and, unless compiled with -DHML_CMODEL_NO_ENTRY, the data
 * symbol hml_cmodel_v3 (visibility default, so -fvisibility=hidden may be
 * used).
 * OpenMP over row blocks when compiled with -fopenmp. An MLP with a layer
 * of at least 16 inputs and outputs also gets an sgemm path for large
 * batches, and a conv layer with at least 128 outputs and 1024 inputs per
 * output an im2col + sgemm form (tiles of image rows, 4 MiB of columns at
 * most), compiled only with -DHML_CMODEL_CBLAS (then link a CBLAS whose
 * sgemm is single-threaded inside OpenMP regions: OpenBLAS's OpenMP build,
 * as lib/deploy/cbuild.c does); without it the source needs no library. The id must be a C
 * identifier fragment ([A-Za-z0-9_]). Errors: HML_EINVALID (model check,
 * bad id; a path that is a link or not a regular file: never written
 * through, core/beneath.h), HML_EIO "cannot write 'PATH': ...".
 */
int hml__cg_write(const hml__cg_model *m, const hml__cg_options *o,
                  const char *c_path, const char *h_path);

/**
 * 1 when the source hml__cg_write() generates for `m` has an sgemm path
 * (an MLP layer of at least 16 inputs and outputs, a conv layer of at
 * least 128 outputs and 1024 inputs per output), so that building it with
 * -DHML_CMODEL_CBLAS and a CBLAS pays; else 0 (the build then links no
 * BLAS, which a process would load for nothing).
 */
int hml__cg_uses_blas(const hml__cg_model *m);

#ifdef __cplusplus
}
#endif
#endif
