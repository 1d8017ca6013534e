/*
 * lib/train/ensemble.h - an ensemble of N trainings of one configuration
 * (hml train --ensemble N) and its calibration for the ensemble guard
 * (lib/core/guard.h, "ensemble" of the card's guard statistics).
 *
 * The rows i with i % HML__ENSEMBLE_HOLDOUT == HML__ENSEMBLE_HOLDOUT - 1
 * are held out of every member's training (each member then splits the
 * others by its own seed into training, validation and test rows); the
 * members' disagreement on them, hml__guard_spread in the space of the
 * training outputs' standard deviations, gives the calibration quantiles
 * a threshold is set from for a false-alarm rate. The members are run
 * through the runtime's loader (hml__model_predict_f32), as an
 * application runs them.
 */
#ifndef HML_LIB_TRAIN_ENSEMBLE_H
#define HML_LIB_TRAIN_ENSEMBLE_H

#include <stdint.h>

#include "core/guard.h"
#include "train/dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HML__ENSEMBLE_HOLDOUT 10
/** The fewest held-out rows a calibration is made from. */
#define HML__ENSEMBLE_MIN_CALIBRATION 20

/**
 * Split `all` into the rows the members train on (*fit) and the held-out
 * calibration rows (*cal), copies (both yours: hml__ensemble_rows_release).
 * HML_EINVALID "N rows are too few for an ensemble: it holds out every
 * 10th row for its calibration and needs at least 20 of them" (rows <
 * 200), HML_ENOMEM.
 */
int hml__ensemble_split(hml__dataset *fit, hml__dataset *cal, const hml__dataset *all);

/** Free the rows hml__ensemble_split made (NULL-safe). */
void hml__ensemble_rows_release(hml__dataset *d);

/**
 * Calibrate: scale[o] the standard deviation of output o over fit's rows
 * (1 where it is 0), the n members (model files, member 0 first) run on
 * cal's rows, and the quantiles of their disagreement per row. *out is
 * yours (hml__guard_ensemble_release). Errors: the loader's (a member
 * that does not load or run: "cannot open model 'P': ..."), HML_ESHAPE
 * when a member's outputs are not the data's, HML_EINVALID for n out of
 * [HML__GUARD_ENSEMBLE_MIN, HML__GUARD_ENSEMBLE_MAX].
 */
int hml__ensemble_calibrate(hml__guard_ensemble *out, const char *const *members, int n,
                            const hml__dataset *fit, const hml__dataset *cal);

#ifdef __cplusplus
}
#endif
#endif
