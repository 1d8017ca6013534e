/*
 * lib/store/select.h - choosing what to deploy: a (model, target) pair out of
 * the experiment's candidates under an error bound, a latency bound, or
 * both (internal, CLI side; `hml deploy --best / --max-error /
 * --max-latency / --target auto`).
 *
 * A candidate is one model in one deployment form ("target", latency.h):
 * its error is the model's validation error in its card's metric
 * (metrics.val_rmse, or metrics.val_mape in per cent for a model whose
 * card says "metric": "mape"; the same for every target of a model), its
 * latency the card's figure for that target in seconds per
 * sample. "Faster" compares the cost of one application run, start-up +
 * rows per run x latency, when both candidates have a start-up on their
 * cards (latency.h "startup") and the rows a run passes through the
 * region are known (the model's training data: rows / runs); else the
 * latency per sample. So a form that is a little faster per sample but
 * costs the process 0.4 s to load (TorchScript: libtorch) loses to one
 * that loads in milliseconds, unless the runs are long enough to repay
 * it. The rules:
 *   - --max-latency L (with or without --max-error E): among the
 *     candidates within both bounds, the lowest error; ties: the lower
 *     latency.
 *   - --max-error E alone: among the candidates within E, the fastest;
 *     a candidate without a measured latency counts as slower than any
 *     measured one; ties: the lower error.
 *   - no bound (--best): the lowest QoI error when some candidate within
 *     has one (hml search --qoi-check ran the application with it, or an
 *     iterative search judged it by it); ties: the higher predicted end-to-
 *     end speedup (hml__predict(), at the candidate's k and interleave),
 *     then the faster. Else, or among the candidates without one, the
 *     lowest validation error; ties: the lower latency. A candidate
 *     with a QoI error always ranks before one without.
 * The predicted speedup of a candidate counts its schedule (cost.h): an
 * iterative search's model at the interleave it was judged at.
 * Ties beyond that go to the earlier candidate. A candidate without an
 * error is never chosen.
 */
#ifndef HML_LIB_SELECT_H
#define HML_LIB_SELECT_H

#include <stddef.h>

#include "store/cost.h"
#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__candidate {
	const char *model;   /**< model id (borrowed) */
	int target;          /**< HML__TARGET_* */
	double error;        /**< validation error in the card's metric; NaN: unknown */
	double latency;      /**< seconds per sample; NaN: not measured */
	double startup;      /**< seconds the form adds to a process's start-up; NaN: unknown */
	double rows_per_run; /**< rows one application run passes through the region;
	                          NaN or 0: unknown */
	hml__region_cost cost; /**< the region's original code as collected (cost.h);
	                          rows 0 or NaN: unknown */
	double qoi_error;    /**< the model's QoI error after a run with it, as its card
	                          records it (records.h: a search's QoI check, or an
	                          iterative search's objective); NaN: none */
	const char *qoi_source;  /**< "qoi_check" or "iterative" (records.h), or NULL */
	int qoi_bad;         /**< 1: the card's QoI error is not a finite number >= 0
	                          and was ignored */
	hml__schedule sched; /**< the k and interleave its card says it runs at (an
	                          iterative search's model), else NaN and 0 */
} hml__candidate;

/** The speedup candidate c is predicted to give (cost.h: hml__predict()). */
void hml__candidate_predict(const hml__candidate *c, hml__prediction *p);

/** 1 when candidate c is predicted slower than the region's original code
 *  per row (both known), else 0. */
int hml__candidate_slower(const hml__candidate *c);

/**
 * Seconds one application run spends on candidate c: startup +
 * rows_per_run x latency, or NaN when one of them is unknown.
 */
double hml__candidate_run_cost(const hml__candidate *c);

typedef struct hml__select_bounds {
	double max_error;     /**< NaN: no bound */
	double max_latency;   /**< seconds per sample; NaN: no bound */
	int allow_slower;     /**< 1: a candidate predicted slower than the original
	                           code may be chosen (deploy --force); 0: it is
	                           out of bounds */
} hml__select_bounds;

/**
 * Check a bound given on the command line: NaN (not given) or a positive
 * finite number. Errors: HML_EINVALID "--NAME must be a positive finite
 * number, not V".
 */
int hml__select_check_bound(const char *name, double v);

/**
 * The index of the chosen candidate into *pick. Errors: HML_ENOTFOUND
 * "no model to choose from" (n == 0 or no candidate has an error), and
 * when nothing meets the bounds, naming the best achievable:
 *   "no model has a validation RMSE within E (the lowest is X, model 'm1')"
 *   "no model runs within L s per sample (the fastest is X s, model 'm2' as c)"
 *   "no model has a validation RMSE within E and runs within L s per
 *    sample (...)" naming both;
 *   "no model is predicted faster than the original code: the region
 *    costs 40 ns per row, the fastest model 180 ns ('m2' as c)" when the
 *    bounds leave only candidates predicted slower (unless allow_slower).
 * A bound that fails hml__select_check_bound: HML_EINVALID.
 */
int hml__select(const hml__candidate *c, size_t n, const hml__select_bounds *b, size_t *pick);

/**
 * The candidates that --max-qoi-error walks (hml deploy): those with an
 * error and within the bounds `b`, less every candidate another one
 * dominates (at most its error and at least as fast, better in one, or
 * equal in both and earlier), fastest first; so errors rise along the
 * order. Their indices into idx[] (room for n), their count into *m.
 * Errors: as hml__select_check_bound() for a bad bound; HML_ENOTFOUND
 * as hml__select() when no candidate has an error or none is within
 * the bounds.
 */
int hml__select_front(const hml__candidate *c, size_t n, const hml__select_bounds *b,
                      size_t *idx, size_t *m);

/**
 * The faster target of model `model` among the candidates (--target auto
 * with a model named or chosen by error alone; "faster" as above): the
 * index into *pick.
 * Errors: HML_ENOTFOUND "model 'm1' has no measured latency in any target"
 * (e.g. a card written before latencies were recorded).
 */
int hml__select_target(const hml__candidate *c, size_t n, const char *model, size_t *pick);

/**
 * The candidates of the experiment: every model (of region `region`
 * unless NULL) in every target whose bit (1 << HML__TARGET_*) is set in
 * `targets`, in manifest order, models first, targets in order. Latencies
 * come from each model's card (lib/deploy/latency.h); a model whose card has no
 * latencies is a candidate in TorchScript with the latency hml train
 * measured (metrics.latency_seconds_per_sample), and in C without one; a
 * target the card says is unavailable is left out. Start-ups come from
 * the cards: every candidate of a target gets the least start-up any
 * card records for that target (the form's libraries dominate it; the
 * figures of two cards differ by noise more than by model). Rows per run
 * come from the data sets the model was trained on (data_sha256's ids):
 * their rows of the model's region over their runs; so does the region's
 * cost (cost.h: hml__cost_of_model()). *out (malloc'ed, *n
 * entries, ids borrowed from the store) is yours; *out is NULL when *n is
 * 0. Errors: HML_EINVALID for a malformed card (its message, with the
 * model id), HML_ENOMEM.
 */
int hml__select_candidates(hml__candidate **out, size_t *n, const hml__store *s,
                           const char *region, unsigned targets);

/**
 * Keep only the candidates whose model is on the front of search `search`
 * (its record in "searches": front[].model, hml-search(1)), in place; *n
 * is updated. Errors: HML_ENOTFOUND "no search 's9' in experiment 'DIR'",
 * "search 's1' has no registered model on its front".
 */
int hml__select_in_search(hml__candidate *c, size_t *n, const hml__store *s,
                          const char *search);

/**
 * --target auto's rule (hml search --target auto follows it too, through
 * hml__target_auto()): C is a candidate only where models can be compiled
 * here (lib/deploy/latency.h hml__target_c_found(): a C compiler is
 * found) and the model compiles (its card does not mark C unavailable:
 * hml__select_candidates() left those out). Without a compiler the C
 * candidates are removed, in place (*n updated), and why gets the reason
 * (may be NULL; "" when none was removed). Never fails.
 */
void hml__select_auto(hml__candidate *c, size_t *n, char *why, size_t size);

#ifdef __cplusplus
}
#endif
#endif
