/*
 * lib/train/arch.h - model architectures, in plain C (internal; CLI side): the
 * architecture-spec grammar, the model families of models/ (their limits
 * and defaults, models/FAMILY.json, and their TorchScript templates,
 * models/FAMILY.ts, embedded at build time) and the template's expansion.
 * Checking a spec needs no libtorch; lib/train/train.cpp compiles what
 * hml__arch_expand() (arch_template.c) writes.
 *
 * Spec: FAMILY[:WIDTHS][:ACTIVATION][:key=value]...; what is left out comes
 * from the family's "defaults".
 *   mlp:64x64:relu            two hidden layers of 64, ReLU
 *   mlp:128x128x64:tanh:dropout=0.1
 *   cnn:16x16:relu:kernel=3   whole-field data [C,H,W] or [H,W]
 *   cnn:16x16:tanh:kernel=5:residual
 *                             the same, predicting the change: y = x +
 *                             g(x), g's outputs normalised by the
 *                             statistics of y - x (regions whose rows
 *                             keep their shape: a field advanced in place)
 *   cnnvec:8x16:relu:kernel=3:pool=2:head=64
 *                             whole-field inputs, vector outputs: conv
 *                             layers ('same' padding), each followed by a
 *                             PxP average pool (stride P, sizes rounded
 *                             down; pool=1: none), the last map flattened,
 *                             an optional hidden linear layer of `head`
 *                             units (head=0: none), a linear output layer
 *                             to the region's output features
 *   cnnvec:16x8:relu:kernel=3:pool=4:head=0:spatial
 *                             the same, but the last conv layer's channels
 *                             are heatmaps (no activation, no pool): a
 *                             softmax over each map's positions gives its
 *                             expected column and row (2 features per
 *                             channel, in [-1, 1] across the map), read by
 *                             the head instead of the flattened map (a
 *                             spatial soft-argmax: positions in, as a
 *                             tracker's; sub-pixel, and cheap to read)
 * Activations: relu, tanh, gelu, silu, sigmoid.
 */
#ifndef HML_LIB_ARCH_H
#define HML_LIB_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "train/dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/** More hidden layers than any family allows. */
#define HML__ARCH_MAX_LAYERS 64

/** The activations every family offers, in this order. */
extern const char *const hml__arch_activations[];
#define HML__ARCH_NACT 5

/** A parsed spec. Strings point to static storage. */
typedef struct hml__arch {
	const char *family;        /**< "mlp", "cnn", "cnnvec" */
	const char *template_src;  /**< models/FAMILY.ts, NUL-terminated */
	int nwidths;               /**< hidden layers */
	int64_t widths[HML__ARCH_MAX_LAYERS];
	const char *act;           /**< one of hml__arch_activations */
	int act_index;             /**< its index there */
	double dropout;            /**< 0 <= p < 1 */
	int kernel;                /**< cnn, cnnvec: odd kernel size; 0 otherwise */
	int cnn;                   /**< 1 for the conv families (cnn, cnnvec) */
	int vec;                   /**< 1 for cnnvec (a vector head) */
	int pool;                  /**< cnnvec: pooling size after each conv layer (1: none) */
	int64_t head;              /**< cnnvec: hidden units of the head (0: none) */
	int residual;              /**< cnn: 1 when the network predicts y - x */
	int spatial;               /**< cnnvec: 1 when the last conv layer's maps are
	                                read by a spatial soft-argmax */
	char canonical[256];       /**< "mlp:64x64:relu" */
} hml__arch;

/**
 * Parse `spec` (NULL: "mlp:64x64:relu") into `a`, checking it against the
 * family's limits. Errors: HML_EINVALID naming the bad field, e.g.
 * "unknown activation 'foo' in arch 'mlp:64:foo' (known: ...)";
 * HML_EMODEL when an embedded family description does not parse.
 */
int hml__arch_parse(hml__arch *a, const char *spec);

/** The shapes a model of `a` maps between, from the data's row shapes. */
typedef struct hml__arch_layout {
	int in_ndim, out_ndim;                 /**< the region's per-row shapes */
	int64_t in_row[HML_MAX_DIMS], out_row[HML_MAX_DIMS];
	int core_in_ndim, core_out_ndim;       /**< inside core(): [F] or [C,H,W] */
	int64_t core_in[3], core_out[3];
	int64_t in_features, out_features;
	int64_t flat_features;                 /**< cnnvec: the last pooled map, flattened
	                                            (spatial: 2 per channel of the last layer) */
	int64_t map_height, map_width;         /**< cnnvec: the last conv layer's map */
	int log_output;                        /**< 1: forward returns exp of the de-normalised
	                                            network (the loss "log", lib/train/train.h) */
	int64_t ncategorical;                  /**< mlp: features one-hot encoded
	                                            (lib/train/categorical.h); core_in[0] is
	                                            then the encoded width */
	int64_t onehot_features;               /**< the sum of their classes */
} hml__arch_layout;

/**
 * Fill `l` for rows of `d` (only its shapes are read). Errors: HML_EINVALID
 * for rows without features, a CNN on data that are not whole fields, a
 * cnn that would change the field's size, a residual cnn whose rows change
 * shape (naming both), or a cnnvec whose pooling leaves no pixel.
 */
int hml__arch_layout_of(hml__arch_layout *l, const hml__arch *a, const hml__dataset *d);

struct hml__categorical;

/**
 * Declare c[0..n) (sorted, lib/train/categorical.h) categorical in `l`, a
 * layout of an mlp: core_in[0] becomes the encoded width. Errors:
 * HML_EINVALID for a feature beyond the rows' (hml__categorical_check).
 */
int hml__arch_layout_categorical(hml__arch_layout *l, const struct hml__categorical *c,
                                 size_t n);

/**
 * Expand the family's template for `a` and `l`: the TorchScript source of
 * the module's methods. `*out` is yours (free()). Errors: HML_EMODEL for a
 * template that does not expand (its line), HML_ENOMEM.
 */
int hml__arch_expand(char **out, const hml__arch *a, const hml__arch_layout *l);

/**
 * The embedded description of model family `family` (models/FAMILY.json)
 * as NUL-terminated JSON, or NULL for an unknown family. Static storage.
 */
const char *hml__arch_family_json(const char *family);

/** "cnn, mlp": the families compiled in (static storage). */
const char *hml__arch_families(void);

/** The shortest "%g" text that reads back as `v` (into buf). */
void hml__arch_format_double(char *buf, size_t size, double v);

#ifdef __cplusplus
}
#endif
#endif
