/*
 * lib/train/categorical.h - input features declared categorical (internal;
 * plain C, no libtorch): the declaration's grammar and checks, and the
 * encoding an MLP applies to them. The one place this contract is stated;
 * models/mlp.ts, lib/train/train.cpp and lib/deploy (cg_model.h,
 * export.cpp, codegen.c) implement it.
 *
 * Declaration: "F:K[,F:K...]" (hml train --categorical, hml__train_options'
 * categorical), or in workflow.json a region's model.categorical, an array
 * of {"feature": F, "classes": K}. F: the 0-based index of a feature in the
 * flattened input row; K: 2 to HML__CATEGORICAL_MAX_CLASSES classes,
 * values 0 .. K-1. No feature twice. The canonical form lists the
 * features in increasing order ("3:12,7:2").
 *
 * Encoding (MLP family only): a row of F features becomes the continuous
 * features (those not declared), in their order, normalised by their
 * in_mean / in_std, followed by one block of K values per categorical
 * feature, in increasing feature order: the one-hot vector of round(v)
 * (round half to even, as torch.round and rintf) when 0 <= round(v) < K,
 * and all zeros otherwise (a class never seen, NaN): the model invents no
 * class, the prediction is what the continuous features and the bias give.
 * Categorical features are not normalised (their in_mean 0, in_std 1).
 * The saved module holds the declaration in its buffers cat_feature and
 * cat_classes (float32 [C]), with cat_offset (int64 [C], where each block
 * starts after the continuous features) and cont_feature (int64, the
 * continuous features' indices).
 */
#ifndef HML_LIB_CATEGORICAL_H
#define HML_LIB_CATEGORICAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HML__CATEGORICAL_MAX_CLASSES 4096

typedef struct hml__categorical {
	int64_t feature;   /**< index in the flattened input row */
	int64_t classes;   /**< K: values 0 .. K-1 */
} hml__categorical;

/**
 * Parse a declaration "F:K[,F:K...]" into *out (yours, free(); sorted by
 * feature) and *n. NULL, "" or "none": no feature (*out NULL, *n 0).
 * Errors: HML_EINVALID "bad categorical declaration 'S': ..." naming the
 * entry ("expected FEATURE:CLASSES", "classes 1 of feature 3 is outside
 * 2 to 4096", "feature 3 is declared twice"), HML_ENOMEM.
 */
int hml__categorical_parse(hml__categorical **out, size_t *n, const char *spec);

/**
 * The same from a JSON array of {"feature": F, "classes": K} (workflow.json);
 * errors name `where` ("workflow 'P': model.categorical[1]: ...").
 * Unknown keys and wrong types are errors.
 */
int hml__categorical_from_json(hml__categorical **out, size_t *n, const json_t *arr,
                               const char *where);

/** The canonical "F:K,F:K" of c[0..n) (sorted) into buf; "" for n 0. */
void hml__categorical_format(char *buf, size_t size, const hml__categorical *c, size_t n);

/** [{"feature": F, "classes": K}, ...] of c[0..n); NULL when out of memory. */
json_t *hml__categorical_json(const hml__categorical *c, size_t n);

/**
 * Check the declaration against rows of `in_features` features: every
 * feature must be below it (a row may be all categorical). Errors: HML_EINVALID "categorical feature 9 is not an
 * input feature: the rows have 4 (0 to 3)".
 */
int hml__categorical_check(const hml__categorical *c, size_t n, int64_t in_features);

/** The first layer's inputs: in_features - n + the sum of the classes. */
int64_t hml__categorical_width(const hml__categorical *c, size_t n, int64_t in_features);

#ifdef __cplusplus
}
#endif
#endif
