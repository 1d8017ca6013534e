/*
 * lib/search/opt/trialsched.h - the scheduler of hml search (internal): Bayesian
 * optimisation (lib/search/opt/bo.h) proposes configurations, asynchronous successive
 * halving (lib/search/opt/asha.h) decides which earn more epochs, BOHB-style.
 *
 *   hml__sched_new(&s, &opts);
 *   while ((rc = hml__sched_next(s, &t)) == 1)    // whenever a worker is free
 *       run t.config at rung t.rung on t.fraction of its epochs, then
 *       hml__sched_report(s, t.config, t.rung, &outcome)  or  hml__sched_fail(...)
 *   // rc 0: nothing to start until a running trial ends; 2: the search is done
 *
 * Budget: the number of configurations started at rung 0. Each one may
 * then be promoted up to rungs-1 times: rung k trains fraction
 * eta^(k+1-rungs) of the configuration's epochs (the top rung all of them),
 * and only the best 1/eta of each rung's results move up, so a
 * configuration costs about rungs / eta^(rungs-1) full trainings on
 * average and the search ends once every due promotion has run. When the
 * budget is spent and no configuration reached the top rung (a budget
 * smaller than about eta^(rungs-1)), the configuration with the lowest
 * error at the highest rung reached is promoted, one rung at a time, until
 * one has: the front always holds a fully trained model when any trial
 * succeeded.
 *
 * Objectives (both minimised): log validation RMSE and log latency per
 * sample. Constraints (--max-latency, --max-params, --max-error) are outcome
 * constraints of the optimiser (log value <= log bound): infeasible trials
 * stay in the history and steer the acquisition away, they are never
 * dropped. The optimiser learns each configuration's result at the highest
 * rung it has reached (its rung-0 result, replaced when a promotion ends:
 * hml__bo_improve()); the front is taken over the feasible results of the
 * top rung.
 *
 * Resume: replaying a recorded history -- hml__sched_start() for each start
 * (rung 0: the configuration's point), then hml__sched_report() /
 * hml__sched_fail() for each end, in recorded order -- rebuilds the state,
 * so hml__sched_next() makes the same decisions as the original run would
 * have made next (lib/search/opt/bo.h and lib/search/opt/asha.h determinism).
 */
#ifndef HML_LIB_TRIALSCHED_H
#define HML_LIB_TRIALSCHED_H

#include <stddef.h>
#include <stdint.h>

#include "search/opt/space.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__sched_options {
	int version;                 /**< 1 */
	const hml__space *space;     /**< borrowed; must outlive the scheduler */
	uint64_t seed;
	size_t budget;               /**< configurations, >= 1 */
	unsigned eta;                /**< reduction factor, >= 2 (3) */
	unsigned rungs;              /**< fidelity levels, >= 1 */
	double max_latency;          /**< seconds per sample; 0: none */
	double max_params;           /**< 0: none */
	double max_error;            /**< validation RMSE; 0: none */
	size_t n_init;               /**< initial design; 0: lib/search/opt/bo.h's default */
	const double *first;         /**< the first configurations' points (nfirst x dim,
	                                  copied; bo.h), or NULL */
	size_t nfirst;
} hml__sched_options;

#define HML__SCHED_OPTIONS_INIT { 1, NULL, 0, 0, 3, 1, 0, 0, 0, 0, NULL, 0 }

/** What a free worker runs. */
typedef struct hml__sched_trial {
	size_t config;
	unsigned rung;
	double fraction;       /**< share of the configuration's epochs, (0, 1] */
	const double *u;       /**< its point (hml__space_dim values), owned by the scheduler,
	                            valid until the next call that starts a trial */
} hml__sched_trial;

/** A trial's measured outcome. */
typedef struct hml__sched_outcome {
	double val_rmse;
	double latency_s;   /**< per sample: what max_latency bounds */
	double params;
	double cost_s;      /**< the second objective (an iterative application's seconds
	                         per step, lib/search/history.h hml__hist_cost()); 0 or
	                         NaN: latency_s */
	double latency_bound; /**< this trial's own bound on latency_s, where bounds differ
	                         by trial (an iterative search's k, lib/search/
	                         iterative.h): latency_s is judged against it, scaled
	                         onto max_latency (latency_s x max_latency /
	                         latency_bound) so that the optimiser's one constraint
	                         model serves every trial; 0 or NaN: max_latency */
} hml__sched_outcome;

typedef struct hml__sched hml__sched;

/**
 * A new scheduler. *out is yours: hml__sched_free(). Errors: HML_EINVALID
 * "budget must be at least 1", "... negative constraint", those of
 * hml__bo_new(), hml__asha_new(); HML_ENOMEM.
 */
int hml__sched_new(hml__sched **out, const hml__sched_options *o);

void hml__sched_free(hml__sched *s);

/**
 * The next trial to start: 1 with *t filled (recorded as started), 0 when
 * nothing can start before a running trial ends, 2 when the search is
 * complete. Errors: those of hml__bo_ask() (negative).
 */
int hml__sched_next(hml__sched *s, hml__sched_trial *t);

/**
 * Replay a recorded start: rung 0 adds configuration `config` at point u
 * (it must be the next configuration: configurations are numbered in the
 * order they started); rung k > 0 promotes it.
 * Errors: HML_EINVALID "history: configuration C starts out of order",
 * those of hml__asha_start().
 */
int hml__sched_start(hml__sched *s, size_t config, unsigned rung, const double *u);

/**
 * A running trial ended: with an outcome (all finite and positive but
 * params, which may be anything >= 0), or failed.
 * Errors: HML_EINVALID "trial of configuration C at rung K is not running",
 * "... outcome is not finite".
 */
int hml__sched_report(hml__sched *s, size_t config, unsigned rung,
                      const hml__sched_outcome *o);
int hml__sched_fail(hml__sched *s, size_t config, unsigned rung);

/** Configurations started, trials running, trials ended (ok + failed), failed. */
size_t hml__sched_configs(const hml__sched *s);
size_t hml__sched_running(const hml__sched *s);
size_t hml__sched_ended(const hml__sched *s);
size_t hml__sched_failed(const hml__sched *s);

/** Nonzero when an outcome satisfies every constraint. */
int hml__sched_feasible(const hml__sched *s, const hml__sched_outcome *o);

/** The fraction of the epochs rung k trains. */
double hml__sched_fraction(const hml__sched *s, unsigned rung);
unsigned hml__sched_rungs(const hml__sched *s);

/** The point of configuration `config` (dim values) or NULL. Borrowed. */
const double *hml__sched_point(const hml__sched *s, size_t config);

/**
 * The Pareto front (validation RMSE against latency) of the feasible
 * results at the top rung: their configurations into configs (room for
 * hml__sched_configs() values) and outcomes into out (may be NULL), sorted
 * by error; returns how many (negative: HML_ENOMEM).
 */
long hml__sched_front(const hml__sched *s, size_t *configs, hml__sched_outcome *out);

/** The best (lowest) validation RMSE of any result at the top rung; NaN if none. */
double hml__sched_best_error(const hml__sched *s);

#ifdef __cplusplus
}
#endif
#endif
