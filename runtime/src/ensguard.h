/*
 * runtime/src/ensguard.h - the ensemble guard's members at run time
 * (internal; rowguard.c's). The guard file (lib/core/guard.h) names the
 * members' files; each is loaded through the model loader as the
 * region's model is (TorchScript or compiled), and run on the rows the
 * model is about to answer. A row is guarded when the members' outputs
 * disagree beyond the threshold (hml__guard_ensemble_row).
 */
#ifndef HML_RUNTIME_ENSGUARD_H
#define HML_RUNTIME_ENSGUARD_H

#include <stdint.h>

#include "core/guard.h"
#include "hml/common.h"

typedef struct hml__ensguard hml__ensguard;

/**
 * Load the members g->member[0 .. g->stats.ens.members) with `threads`
 * (hml__model_load). *out is yours (hml__ensguard_free). Errors: the
 * loader's for a missing or corrupt member ("cannot open model 'P': ..."),
 * prefixed "ensemble member K: ", HML_ENOMEM.
 */
int hml__ensguard_open(hml__ensguard **out, const hml__guard *g, int threads);
void hml__ensguard_free(hml__ensguard *e);

/**
 * Run every member on `rows` rows of x (element type dt, each row of
 * shape in_shape[0 .. in_ndim)) and list the rows whose members disagree
 * beyond g's threshold in idx (room for `rows`); their count, or a
 * negative code: a member's failure, HML_ESHAPE when a member's outputs
 * per row are not the calibration's. Thread-safe (one call at a time
 * runs the members: TorchScript keeps its output in the model).
 */
int64_t hml__ensguard_check(hml__ensguard *e, const hml__guard *g, const void *x,
                            hml_dtype dt, int in_ndim, const int64_t *in_shape, int64_t rows,
                            int64_t *idx);

#endif
