/*
 * lib/train/guard_fit.h - the statistics of a model's training inputs that
 * its guards need (lib/core/guard.h), fitted when hml train registers the
 * model (internal).
 *
 * Runs in the training plugin (libhml-cli-train.so, with LAPACKE for the
 * Cholesky factor and its inverse); the CLI reaches it through
 * train_proxy.c like hml__train. The unit tests link guard_fit.c itself.
 */
#ifndef HML_LIB_GUARD_FIT_H
#define HML_LIB_GUARD_FIT_H

#include <stdint.h>

#include "core/guard.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Fit *out on `rows` rows of `features` float inputs (row-major): min and
 * max over every row; for F <= HML__GUARD_MAX_DISTANCE_FEATURES, with at
 * least 4 F + 40 rows, the mean and whitening matrix from the rows i with
 * i % 5 != 4 and the calibration quantiles of the Mahalanobis distance
 * and of each whitened component from the others (held out, so that the threshold's false-alarm rate is
 * that of unseen rows). The covariance gets a ridge of 1e-9 of each
 * variance (inputs that are functions of each other make it singular);
 * a constant feature gets variance 1. *out is yours
 * (hml__guard_stats_release). HML_EINVALID for no rows, HML_ENOMEM, or
 * HML_EMODEL when the factorisation fails.
 */
int hml__guard_fit(hml__guard_stats *out, const float *x, int64_t rows, int64_t features);

#ifdef __cplusplus
}
#endif
#endif
