/*
 * lib/search/trialmap.h - from a search-space sample to what one trial trains
 * (internal): the architecture spec (lib/train/arch.h) and the training options
 * (lib/train/train.h).
 *
 * The parameters a search space may hold (hml-search(1), SEARCH SPACE):
 *   layers        hidden layers (mlp) or conv layers (cnn, cnnvec)
 *   width         units (mlp) or channels (cnn, cnnvec) of every layer
 *   width_K       of layer K (1-based) when the space has it, overriding
 *                 width: usually conditional, "when": {"parent": "layers",
 *                 "min": K}
 *   activation    relu, tanh, gelu, silu, sigmoid
 *   dropout       0 <= p < 1
 *   kernel        cnn, cnnvec: odd kernel size
 *   pool, head    cnnvec: pooling size, hidden units of the head
 *   spatial       cnnvec: 1 for a spatial soft-argmax on the last conv
 *                 layer's maps (lib/train/arch.h), 0 for the flattened map
 *   residual      cnn: 1 to predict the change y - x
 *   lr, batch, weight_decay, optimizer (adam, adamw), epochs
 *   rollout       hml train --rollout: steps a trial of an in-place region
 *                 trains on (1 .. HML__ROLLOUT_MAX, lib/train/rollout.h)
 *   k, interleave an iterative application's steps per model call and
 *                 interleave ratio, added from its workflow's search_args
 *                 (lib/search/iterative.h): not training options, the
 *                 trial's application run takes them
 * What a sample leaves out keeps the base architecture's value (the
 * region's model.arch, else the family's defaults) and the base options'.
 * "epochs" is the configuration's full-fidelity epoch count; the scheduler
 * trains lower rungs on a fraction of it (lib/search/opt/trialsched.h).
 */
#ifndef HML_LIB_TRIALMAP_H
#define HML_LIB_TRIALMAP_H

#include <stddef.h>

#include <jansson.h>

#include "search/opt/space.h"
#include "train/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Check that every parameter of `space` is one the family `family` trains
 * with (before any trial runs). origin names the space in messages.
 * Errors: HML_EINVALID "search space 'O': parameter 'momentum' is not an
 * option of model family 'mlp' (known: ...)"; "... 'width_99' names layer
 * 99 (at most 64)".
 */
int hml__trialmap_check(const hml__space *space, const char *family, const char *origin);

/**
 * Check a search space's "rollout" declaration (space: the space's JSON
 * object), if it has one, before any trial runs: an int or a choice whose
 * values are all integers from 1 to HML__ROLLOUT_MAX; and, when it can be
 * more than 1, a region in place (in_shape and out_shape, the region's row
 * shapes as its data sets record them, equal). region and origin name the
 * region and the space in messages. Errors: HML_EINVALID "search space
 * 'O': parameter 'rollout': 0 is not an integer from 1 to 64", "... must
 * be of type int or choice, not 'float'", "... parameter 'rollout' needs a
 * region whose output has its input's shape; region 'rows' takes [5] and
 * gives [1]".
 */
int hml__trialmap_check_rollout(const json_t *space, const char *region, const json_t *in_shape,
                                const json_t *out_shape, const char *origin);

/**
 * Map `sample` onto `base_arch` (NULL: the family's defaults) and `o`
 * (filled by the caller with the base options; the fields the sample sets
 * are overwritten, o->optimizer may then point into sample). The canonical
 * spec goes to arch (size bytes) and o->arch points to it.
 * Errors: HML_EINVALID naming the parameter ("trial parameter 'batch':
 * 0 is not a positive integer") or the spec's problem (lib/train/arch.h).
 */
int hml__trialmap_apply(hml__train_options *o, char *arch, size_t size, const char *family,
                        const char *base_arch, const json_t *sample);

/** The most points hml__trialmap_first() gives. */
#define HML__TRIALMAP_FIRST_MAX 2

/**
 * The configurations a search tries first, before its Latin hypercube:
 * the region's own architecture (`base_arch`, NULL: the mlp family's
 * default; its widths, activation, kernel, pool, head, and base's learning
 * rate, batch and rollout where the space has them, the rest at the space's
 * centre), when the space can express it; then the space's smallest models
 * (layers, widths, kernel and head at their lowest, the rest at the
 * centre), unless that is the same point. So the search judges the
 * workflow's default and the cheapest models at once: where the original
 * code is cheap, those are the ones that can pay. Writes up to
 * HML__TRIALMAP_FIRST_MAX points of hml__space_dim() coordinates into u
 * and returns how many (1 or 2; 0 only when out of memory). Sets no error.
 */
size_t hml__trialmap_first(double *u, const hml__space *space, const char *family,
                           const char *base_arch, const hml__train_options *base);

/**
 * The `hml train` arguments that train what `o` (hml__trialmap_apply's
 * result) describes on region `region`: a JSON array of strings, "train"
 * first, then --region, --arch, --epochs, --batch, --lr, --weight-decay
 * (when o sets it), --optimizer, --schedule, --loss, --categorical (when o
 * declares categorical features), --patience, --rollout (when o->rollout
 * > 1), --clip, --seed, --val-fraction, --test-fraction, and --max-seconds
 * / --infer-batch when o sets them; numbers in their shortest exact
 * text. Not --threads (the caller's choice). The reader is hml train's
 * own option table (hml-train(1)); hml search --train-args prints it.
 * NULL when out of memory (HML_ENOMEM set).
 */
json_t *hml__trialmap_train_argv(const hml__train_options *o, const char *region);

#ifdef __cplusplus
}
#endif
#endif
