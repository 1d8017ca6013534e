/*
 * lib/deploy/cg_model.h - a trained model described without libtorch
 * (internal): what lib/deploy/export.cpp reads out of an hml-trained
 * TorchScript file (models/mlp.ts, models/cnn.ts, models/cnnvec.ts) and
 * what the C generator (lib/deploy/codegen.h) writes out as C.
 *
 *   y = denorm(core(norm(x))), core = layer_L o act o ... o act o layer_1,
 *   norm(x) = (x - in_mean) / in_std, denorm(z) = z * out_std + out_mean,
 * per feature (MLP) or per channel (CNN). A layer is torch.linear (weight
 * [out, in]) or torch.conv2d with stride 1 and 'same' zero padding k/2
 * (weight [out, in, k, k], k odd) on [C, H, W] fields. A cnnvec
 * (models/cnnvec.ts) is `nconv` conv layers, each followed by its
 * activation and a P x P average pool of stride P (sizes rounded down),
 * the last map flattened ([C, H', W'] order), then linear layers; inputs
 * are normalised per channel, outputs per feature.
 *
 * A residual CNN (models/cnn.ts, arch "...:residual") adds its input row to
 * that: y = x + denorm(core(norm(x))), its rows keeping their shape.
 *
 * An MLP may declare categorical input features (lib/train/categorical.h
 * states the encoding): norm(x) is then the encoded row, the continuous
 * features in order followed by one one-hot block per categorical feature,
 * and in_mean / in_std are those of the encoded row (0 and 1 over the
 * one-hot blocks); the first layer takes the encoded width.
 */
#ifndef HML_LIB_CG_MODEL_H
#define HML_LIB_CG_MODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hml__cg_family {
	HML__CG_MLP = 1,
	HML__CG_CNN = 2,
	HML__CG_CNNVEC = 3
} hml__cg_family;

typedef enum hml__cg_act {
	HML__ACT_IDENTITY = 0,
	HML__ACT_RELU,
	HML__ACT_TANH,
	HML__ACT_GELU,      /* exact (erf) form, torch.gelu's default */
	HML__ACT_SILU,
	HML__ACT_SIGMOID
} hml__cg_act;

/** "relu", ... for an activation; NULL for a bad value. */
const char *hml__cg_act_name(hml__cg_act a);

/** The activation named `name` ("identity", "relu", "tanh", "gelu",
 * "silu", "sigmoid"), or -1. */
int hml__cg_act_parse(const char *name);

typedef struct hml__cg_layer {
	int64_t in, out;     /**< features (linear layer) or channels (conv layer) */
	int kernel;          /**< conv layer: odd kernel size; linear layer: 0 */
	hml__cg_act act;     /**< applied after the layer (IDENTITY for the last) */
	float *weight;       /**< MLP [out][in]; CNN [out][in][k][k]; owned */
	float *bias;         /**< [out]; owned */
} hml__cg_layer;

typedef struct hml__cg_model {
	hml__cg_family family;
	int nlayers;
	hml__cg_layer *layers;               /**< owned */
	int in_ndim, out_ndim;               /**< per-row shapes (no batch dim) */
	int64_t in_shape[8], out_shape[8];   /**< CNN: [C, H, W] or [H, W] */
	float *in_mean, *in_std;             /**< [in features] or [in channels]; owned */
	float *out_mean, *out_std;           /**< [out features] or [out channels]; owned */
	char arch[256];                      /**< "mlp:64x64:relu" */
	int nconv;                           /**< cnnvec: its conv layers (the first ones); else 0 */
	int pool;                            /**< cnnvec: pooling size after each conv layer; else 0 */
	int ncat;                            /**< MLP: categorical input features; else 0 */
	int64_t *cat_feature;                /**< [ncat] increasing indices into the row; owned */
	int64_t *cat_classes;                /**< [ncat] classes of each (2 or more); owned */
	int residual;                        /**< CNN: 1 when y = x + the network's output */
	int spatial;                         /**< cnnvec: 1 when the last conv layer (no
	                                          activation, no pool) gives heatmaps whose
	                                          softmax-weighted (column, row), each in
	                                          [-1, 1] across the map, the first linear
	                                          layer reads: 2 features per channel */
} hml__cg_model;

/**
 * Make `m` (caller's storage) a model of `nlayers` layers with the given
 * sizes: sizes[0] is the input features/channels, sizes[l + 1] layer l's
 * output; every weight, bias and normalisation array is allocated (zero)
 * for the caller to fill; shapes and arch are left to the caller. kernel
 * is 0 for an MLP. Errors: HML_EINVALID (bad sizes), HML_ENOMEM.
 * Release with hml__cg_model_release (also after a failure).
 */
int hml__cg_model_init(hml__cg_model *m, hml__cg_family family, int nlayers,
                       const int64_t *sizes, int kernel);

/**
 * The cnnvec form of hml__cg_model_init(): `nconv` conv layers (kernel
 * `kernel`, channels sizes[0] -> ... -> sizes[nconv], each pooled by
 * `pool`), then nlayers - nconv linear layers, the first taking `flat`
 * features (the last map flattened) and giving sizes[nconv + 1], and so
 * on to sizes[nlayers]. in_mean/in_std have sizes[0] values (channels),
 * out_mean/out_std sizes[nlayers] (features). Errors as for
 * hml__cg_model_init(), and HML_EINVALID for nconv outside 1..nlayers-1
 * or pool < 1.
 */
int hml__cg_model_init_vec(hml__cg_model *m, int nlayers, int nconv, const int64_t *sizes,
                           int kernel, int pool, int64_t flat);

/**
 * Declare features feature[0..n) (increasing) of an MLP categorical with
 * classes[0..n) classes (copied); hml__cg_model_check() checks them
 * against the rows and the first layer. Errors: HML_EINVALID (n < 1),
 * HML_ENOMEM.
 */
int hml__cg_model_set_categorical(hml__cg_model *m, const int64_t *feature,
                                  const int64_t *classes, int n);

/** Free what `m` owns and zero it. NULL-safe. */
void hml__cg_model_release(hml__cg_model *m);

/**
 * Check that the description is one the generator handles: layer sizes
 * chain, shapes agree with the first and last layers (MLP: product of the
 * row shape = features, or with categorical features the encoded width,
 * each feature once, increasing, inside the row, 2 or more classes; CNN: [C, H, W] or [H, W] rows, odd kernels, same
 * H, W out as in, and for a residual one the input's channels out; cnnvec: [C, H, W] or [H, W] rows whose pooled map
 * flattens to the first linear layer's inputs (spatial: 2 per channel of
 * the last conv layer, which has no activation), and output features those
 * of the last layer), standard deviations finite and nonzero, weights finite.
 * Errors: HML_ESHAPE or HML_EINVALID naming the problem.
 */
int hml__cg_model_check(const hml__cg_model *m);

/* What the generator reads of a description that hml__cg_model_check()
 * accepted. */

/** Values per input row: the product of in_shape. */
int64_t hml__cg_model_in_size(const hml__cg_model *m);

/** Values per output row: the product of out_shape. */
int64_t hml__cg_model_out_size(const hml__cg_model *m);

/** The input row as a [C, H, W] field ([H, W] rows: C = 1): 1, or 0 when
 * the row is neither. */
int hml__cg_model_in_field(const hml__cg_model *m, int64_t *c, int64_t *h, int64_t *w);

/** The weights of layer l: out x in (x k x k for a conv layer). */
int64_t hml__cg_model_weights(const hml__cg_model *m, int l);

#ifdef __cplusplus
}
#endif
#endif
