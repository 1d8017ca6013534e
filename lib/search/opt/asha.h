/*
 * lib/search/opt/asha.h - asynchronous successive halving (ASHA) promotions for
 * multi-fidelity search (internal).
 *
 * A configuration (a trial of the optimiser, by the caller's id) is first
 * trained with the smallest resource (epochs, or a data fraction) at rung 0;
 * rung k gives min * eta^k, the last rung exactly max. Whenever a worker is
 * free, hml__asha_next() either promotes a finished configuration one rung
 * up (one in the best 1/eta of those finished at its rung, the deepest rung
 * first), or says to start a new one at rung 0 (Li et al., "A System for
 * Massively Parallel Hyperparameter Tuning", MLSys 2020).
 *
 * With two objectives, "best" ranks by Pareto layer (non-dominated sorting),
 * then by the first objective, then by the id; with one, by the objective,
 * then the id. Failed runs are never promoted.
 *
 * With the Bayesian optimiser (bo.h), BOHB-style: each new configuration
 * comes from hml__bo_ask() and is told its rung-0 result, replaced by its
 * result at each higher rung it reaches (trialsched.c), so the GP knows
 * the promoted configurations as trained longer; the promotions decide
 * which configurations earn more resource, and the front is taken over the
 * results at the top rung.
 *
 * Determinism and resume: decisions depend only on the recorded starts,
 * results and failures; replaying them with hml__asha_start() /
 * hml__asha_report() / hml__asha_fail() rebuilds the state (a replayed
 * start at rung k > 0 records the promotion from rung k-1).
 */
#ifndef HML_LIB_ASHA_H
#define HML_LIB_ASHA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__asha hml__asha;

/**
 * New promotion state for nobj (1 or 2) minimised objectives and resources
 * from min to max (0 < min <= max) with reduction factor eta >= 2.
 * *out is yours: hml__asha_free() it.
 * Errors: HML_EINVALID naming the bad argument, HML_ENOMEM.
 */
int hml__asha_new(hml__asha **out, unsigned nobj, double min, double max, unsigned eta);

/** Free (NULL-safe). */
void hml__asha_free(hml__asha *a);

/** The number of rungs, and the resource of rung k (< rungs). */
unsigned hml__asha_rungs(const hml__asha *a);
double hml__asha_resource(const hml__asha *a, unsigned k);

/**
 * Record that configuration `config` starts at rung k: k = 0 for a new
 * configuration; k > 0 promotes it from rung k-1, where it must have
 * finished and not yet been promoted.
 * Errors: HML_EINVALID "asha: rung K out of range", "asha: configuration C
 * already started at rung K", "asha: configuration C has no result at
 * rung K-1 to promote"; HML_ENOMEM.
 */
int hml__asha_start(hml__asha *a, size_t config, unsigned k);

/**
 * Record the result (nobj finite values) or the failure of a running
 * configuration at rung k.
 * Errors: HML_EINVALID "asha: configuration C is not running at rung K",
 * "asha: configuration C: objective I is not finite".
 */
int hml__asha_report(hml__asha *a, size_t config, unsigned k, const double *f);
int hml__asha_fail(hml__asha *a, size_t config, unsigned k);

/**
 * What a free worker runs next. Returns 1 with *config and *k set when a
 * configuration is promoted (already recorded as started at rung *k); 0
 * when none is due: start a new configuration (then hml__asha_start(a, id,
 * 0)). Errors: HML_ENOMEM (negative).
 */
int hml__asha_next(hml__asha *a, size_t *config, unsigned *k);

#ifdef __cplusplus
}
#endif
#endif
