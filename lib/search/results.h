/*
 * lib/search/results.h - what a search found, computed from its trial
 * history (internal): the results of its trials, its Pareto front and its
 * convergence (best error and hypervolume against trials ended). Read by
 * `hml show` and drawn by lib/search/plot.h.
 *
 * The history is read only through lib/search/history.h's reader. The front is
 * the one `hml search` records (lib/sched.h): the Pareto front of
 * validation error (in the search's metric: RMSE, or MAPE in per cent)
 * against latency per sample over the feasible results of
 * the top rung, sorted by error. The hypervolume is measured in decades
 * (log10 of both objectives) against the reference point
 * hml__search_results.ref: one tenth of a decade beyond the largest error
 * and latency of any result of the search, so that every result adds
 * volume and the series of one search share one reference.
 */
#ifndef HML_LIB_SEARCHRESULTS_H
#define HML_LIB_SEARCHRESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "store/records.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One trial that ended "ok" with finite, positive error and latency. */
typedef struct hml__sr_trial {
	long trial, config;
	unsigned rung;
	size_t ended;          /**< trials ended (ok or not) when it ended, itself included */
	double error;          /**< validation error in the search's metric */
	double latency_s;      /**< per sample */
	double cost;           /**< the second objective (history.h hml__hist_cost()):
	                            latency_s, or an iterative trial's seconds per step */
	int64_t params;        /**< -1: not recorded */
	double latency_bound;  /**< its own bound on latency_s (an iterative trial's k's,
	                            history.h); NaN: the search's max_latency */
	int feasible;          /**< within every constraint of the search (latency_s
	                            within latency_bound when it has one) */
	int top;               /**< trained at the top rung (full fidelity) */
	int front;             /**< on the Pareto front */
	char *arch;            /**< the architecture trained (malloc'ed) or NULL */
	json_t *sample;        /**< its configuration's parameters (the history's
	                            "running" line's "params": k, interleave, rollout
	                            among them), a reference of its own, or NULL */
	char model[24];        /**< the model it was registered as ("kept"), or "" */
} hml__sr_trial;

typedef struct hml__search_results {
	hml__sr_trial *res;    /**< the results, in the order they ended */
	size_t nres;
	size_t ended;          /**< trials ended: ok, failed, timeout, crashed */
	size_t failed;         /**< of which failed, timed out or crashed */
	size_t configs;        /**< configurations started */
	size_t *front;         /**< indices into res of the front, by error */
	size_t nfront;
	/** Per trial ended k (0 .. ended-1), after it: the best top-rung error
	 *  (NaN before the first) and the front's hypervolume (0 before). */
	double *best, *hv;
	double ref[2];         /**< hypervolume reference (log10 error, log10 latency);
	                            NaN when there is no result */
	unsigned top_rung;     /**< the record's rungs - 1, else the highest rung seen */
	double max_error, max_latency, max_params;   /**< the constraints; NaN: none */
	int torn;              /**< a torn last line was ignored (a writer was killed) */
	const char *metric;    /**< the error's metric: "rmse" or "mape" (static); "qoi":
	                            an iterative application's QoI error after the run
	                            (lib/search/iterative.h) */
} hml__search_results;

/**
 * The latency bound of a search's record, seconds per sample, NaN for
 * none: the least of its constraints' max_latency and its
 * room its region_cost_per_row leaves less region_move_per_row
 * (hml__search_latency_room: a slower model is infeasible;
 * hml__search_plan_latency_bound() on the writing side). What
 * hml__search_results_load() judges feasibility by.
 */
double hml__search_record_latency_bound(const json_t *rec);

/**
 * The most a model may take per row in a region whose original code costs
 * `cost` seconds per row and moving a row in and out `move` (<= 0: not
 * known): cost - move, DBL_MIN when that is not positive (no model can
 * pay), NaN when the cost is not positive (unknown).
 */
double hml__search_latency_room(double cost, double move);

/**
 * Read the history of search `v` (v->history, relative to experiment
 * directory `dir`) and compute its results into *out, which is yours:
 * hml__search_results_release() (also after a failure). A history that
 * does not exist yet is a search with no trial.
 * Errors: HML_EINVALID "search 's1' has no trial history in the manifest";
 * those of hml__history_read() (HML_EIO, HML_EINVALID naming the line);
 * HML_ENOMEM.
 */
int hml__search_results_load(hml__search_results *out, const char *dir,
                             const hml__search_view *v);

/** Free what *r holds (NULL-safe) and zero it. */
void hml__search_results_release(hml__search_results *r);

/** The best (lowest) error on the front, NaN when the front is empty. */
double hml__search_results_best(const hml__search_results *r);

#ifdef __cplusplus
}
#endif
#endif
