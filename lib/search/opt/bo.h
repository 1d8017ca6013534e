/*
 * lib/search/opt/bo.h - Bayesian optimisation of one or two objectives (internal).
 *
 * An ask/tell optimiser over the unit cube [0,1]^dim (a search space maps
 * it to parameters: hml__space_project() as the projection callback, then
 * hml__space_decode()). Every objective is minimised; pass log error and log
 * latency rather than raw values. Outcome constraints are "value_k <=
 * bound_k", measured per trial like the objectives.
 *
 *   hml__bo_options o = HML__BO_OPTIONS_INIT;
 *   o.dim = hml__space_dim(space); o.seed = 7;
 *   o.project = project_cb; o.payload = space;
 *   hml__bo_new(&bo, &o);
 *   hml__bo_ask(bo, &id, u);           // a new pending trial; run it
 *   hml__bo_tell(bo, id, obj, cons);   // or hml__bo_fail(bo, id)
 *
 * Method:
 *  - the first n_init suggestions are a Latin hypercube drawn from the seed,
 *    its first rows replaced by the caller's `first` points (n_init grows
 *    to nfirst when there are more);
 *  - then ParEGO: each suggestion draws weights (l, 1-l) and models the
 *    augmented Chebyshev scalarisation max_i(w_i f_i) + 0.05 sum_i w_i f_i of
 *    the objectives normalised to [0,1] over the completed trials with one
 *    Gaussian process (lib/search/opt/gp.h), and maximises expected improvement over
 *    the best feasible trial times the probability of feasibility of every
 *    constraint (one GP per constraint) times the probability of not failing
 *    (a GP on the 0/1 failure indicator; failed trials are kept, so the
 *    places where trials failed are not suggested again). With no feasible
 *    trial yet, the probability of feasibility alone is maximised;
 *  - a completed trial's values may be replaced by better-informed ones
 *    (hml__bo_improve(): the same configuration trained longer); the GPs
 *    and the scalarisation's normalisation use the values it holds now;
 *  - pending trials enter the objective GP with the worst observed
 *    scalarised value (constant liar), so parallel suggestions spread out;
 *  - the acquisition is maximised over 512 random and local candidates, the
 *    best 3 polished with NLopt's BOBYQA (derivative-free: the optimum is
 *    snapped to the space's grid of ints and choices afterwards, so exact
 *    gradients would buy little); a suggestion that snaps onto an earlier
 *    trial's point is replaced by the next best candidate;
 *  - cost stays bounded as the history grows: the GPs condition on at most
 *    `window` trials (the pending ones, up to half the window; of the
 *    completed ones the better half by the current scalarisation, the rest
 *    the most recently completed), and the GP hyper-parameters (L-BFGS on
 *    the marginal likelihood, lib/search/opt/gp.h) are refitted only at boundaries of
 *    the count of completed trials: 4, then each time max(refit_every, b/8)
 *    more have completed since the last boundary b; a fit at boundary b
 *    uses the first b completed trials in completion order (at most the
 *    last 128 of them), with their values as told (not as improved since),
 *    and starts from fixed values, so it depends on the history alone.
 * Threads: the linear algebra runs on the calling thread; hml__bo_ask()
 * holds the OpenMP thread count (which an OpenMP build of OpenBLAS follows)
 * to one while it runs and restores it after: matrices of a few hundred
 * rows gain nothing from threads, and a search's coordinator shares the
 * machine with the trials it runs.
 * Determinism: the suggestion made by hml__bo_ask() depends only on the
 * options and on the history (the trials in the order they were added, and
 * the order in which they completed, and the values improved since).
 * Rebuilding an optimiser by replaying a recorded history with hml__bo_add(),
 * hml__bo_tell()/hml__bo_fail() and hml__bo_improve(), in the order they
 * happened, gives the same next suggestions as the original.
 */
#ifndef HML_LIB_BO_H
#define HML_LIB_BO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HML__BO_MAX_CONSTRAINTS 8

typedef struct hml__bo_options {
	int version;            /**< 1 */
	size_t dim;             /**< unit-cube dimension, >= 1 */
	unsigned nobj;          /**< objectives: 1 or 2 */
	unsigned ncons;         /**< outcome constraints, <= HML__BO_MAX_CONSTRAINTS */
	const double *bounds;   /**< ncons upper bounds (copied) */
	uint64_t seed;
	size_t n_init;          /**< initial design; 0: max(5, 2 dim + 2) */
	size_t window;          /**< most trials a GP conditions on; 0: 256 */
	size_t refit_every;     /**< spacing of hyper-parameter refits; 0: 10 */
	/** Snaps a point of the cube to a valid one in place (may be NULL). */
	void (*project)(double *u, void *payload);
	void *payload;
	/** nfirst points (nfirst x dim, copied) that replace the first rows of
	 *  the initial design, in order (n_init is at least nfirst); may be NULL. */
	const double *first;
	size_t nfirst;
} hml__bo_options;

#define HML__BO_OPTIONS_INIT { 1, 0, 2, 0, NULL, 0, 0, 0, 0, NULL, NULL, NULL, 0 }

typedef enum {
	HML__TRIAL_PENDING = 0,
	HML__TRIAL_OK = 1,
	HML__TRIAL_FAILED = 2
} hml__trial_status;

typedef struct hml__bo hml__bo;

/**
 * A new optimiser with an empty history. *out is yours: hml__bo_free() it.
 * Errors: HML_EINVALID (dim 0, nobj not 1 or 2, too many constraints, a
 * non-finite bound), HML_ENOMEM.
 */
int hml__bo_new(hml__bo **out, const hml__bo_options *opts);

/** Free an optimiser (NULL-safe). */
void hml__bo_free(hml__bo *bo);

/**
 * Suggest the next trial: writes its point (dim values, already projected)
 * into u and its id (0, 1, 2, ... in the order trials are added) into *id;
 * the trial is pending until told or failed.
 * Errors: HML_ENOMEM; HML_ERROR from a GP that cannot be factorised.
 */
int hml__bo_ask(hml__bo *bo, size_t *id, double *u);

/**
 * Add a pending trial at a given point (projected and copied): a trial
 * replayed from a recorded history, or one chosen by hand.
 * Errors: HML_ENOMEM.
 */
int hml__bo_add(hml__bo *bo, size_t *id, const double *u);

/**
 * Complete pending trial id with nobj finite objectives and ncons finite
 * constraint values (cons may be NULL when ncons is 0).
 * Errors: HML_EINVALID "trial N is not pending" (unknown, told or failed),
 * "trial N: objective K is not finite", "trial N: constraint K is not
 * finite".
 */
int hml__bo_tell(hml__bo *bo, size_t id, const double *obj, const double *cons);

/**
 * Replace the objectives and constraint values of completed trial id by
 * better-informed ones (the same configuration trained longer).
 * Errors: HML_EINVALID "trial N is not completed", a non-finite value.
 */
int hml__bo_improve(hml__bo *bo, size_t id, const double *obj, const double *cons);

/**
 * Mark pending trial id as failed (crashed, timed out, out of memory).
 * Errors: HML_EINVALID "trial N is not pending".
 */
int hml__bo_fail(hml__bo *bo, size_t id);

/** The number of trials added (asked or added), pending ones included. */
size_t hml__bo_count(const hml__bo *bo);

/**
 * Trial id's status and, for any argument that is not NULL, pointers to its
 * point (dim values), objectives (nobj) and constraint values (ncons; valid
 * for HML__TRIAL_OK only), owned by the optimiser and valid until the next
 * call that adds a trial. Returns -1 for an unknown id.
 */
int hml__bo_trial(const hml__bo *bo, size_t id, const double **u, const double **obj,
                  const double **cons);

/** Nonzero when a completed trial satisfies every constraint. */
int hml__bo_feasible(const hml__bo *bo, size_t id);

/**
 * The Pareto front of the completed, feasible trials (two objectives; with
 * one, the best trial): writes their ids into ids (room for
 * hml__bo_count() values), sorted by the first objective, and returns how
 * many. Errors: HML_ENOMEM (as a negative value).
 */
long hml__bo_front(const hml__bo *bo, size_t *ids);

#ifdef __cplusplus
}
#endif
#endif
