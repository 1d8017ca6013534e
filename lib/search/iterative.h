/*
 * lib/search/iterative.h - the search of an iterative application's steps
 * per model call (k) and interleave ratio (internal).
 *
 * Where the workflow of the searched data declares "search_args"
 * (lib/run/search_args.h), hml search adds them to the search space as
 * two choice parameters, "k" and "interleave" (their declared values; k
 * only those some data set was collected with), and a trial's objective
 * is no longer the model's validation error but the error of the
 * application's primary quantity of interest after the whole run
 * (lib/store/qoi_compare.h) with the trained model deployed at the
 * trial's k and interleave: error growth over the steps is what is
 * optimised. A trial trains on the data sets collected at its k (a model
 * predicts one region call, k steps, ahead), then its worker runs the
 * application: accurately once per k (the reference), and with the model.
 * The runs use the workflow's collect arguments on the seed after every
 * collected one (as hml search --qoi-check does), with k set.
 *
 * The plan (the search record's "iterative", hml-manifest(5)):
 *   {"workflow": PATH, "region": R, "argv": [program, args...], "seed": S,
 *    "k": {"arg": "--k", "values": [5, 10]} (absent: not searched),
 *    "interleave": {"values": [0, 1, 2]}   (and "arg" when the application's),
 *    "groups": [{"k": 5, "data": [0, 2],       indices into the search's
 *                "region_cost_per_row": C,      data sets; k null: all
 *                "region_move_per_row": M}, ...]}
 *
 * A group's cost is that of its own data sets (lib/store/cost.h): the
 * original code's cost per row differs by k (a call advances k steps), so
 * "a model slower than the original code is infeasible" is judged per k:
 * a trial's latency bound is --max-latency or the room its k's cost
 * leaves (hml__search_latency_room()), the lower
 * (hml__iterative_latency_bound()), recorded with the trial (its
 * metrics' "latency_bound") and applied to it by the scheduler and the
 * front (lib/search/opt/trialsched.h, lib/search/results.h). A plan of
 * older hml has no group costs: the search's pooled bound holds.
 */
#ifndef HML_LIB_ITERATIVE_H
#define HML_LIB_ITERATIVE_H

#include <stddef.h>

#include <jansson.h>

#include "run/workflow.h"
#include "store/cost.h"
#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Plan the iterative part of a search of region `region` of workflow `w`
 * on data sets ds_ids[0 .. nds) of store `s`: *out the plan above (new
 * reference), and `space` (a search space object, changed in place)
 * gains "k" and "interleave"; *out NULL and nothing changed when `w` is
 * NULL or declares no search_args. Errors: HML_EINVALID "workflow 'W'
 * declares search_args.k ('--k': 5, 10) but no data set of region 'R'
 * was collected with one of them (collect with --args giving '--k 5')",
 * "search space already has a parameter 'k' (workflow 'W' adds it from
 * search_args)"; HML_ENOMEM.
 */
int hml__iterative_plan(json_t **out, const hml__store *s, const hml__workflow *w,
                        const char *region, const char *const *ds_ids, size_t nds,
                        json_t *space);

/**
 * The trial's k and interleave from its sample (-1 each when absent).
 */
void hml__iterative_choice(const json_t *sample, long long *k, long long *interleave);

/**
 * The data sets of plan `plan` a trial at `k` trains on (its group; k < 0:
 * the group of a plan that searches no k): their ids, ds_ids[i] for each
 * index i of the group, into ids (room for cap), their count into *n.
 * Errors: HML_ENOTFOUND "the search plan has no data set collected at k K".
 */
int hml__iterative_group(const char **ids, size_t cap, size_t *n, const json_t *plan,
                         long long k, const char *const *ds_ids, size_t nds);

/**
 * The prediction (lib/store/cost.h hml__predict(), start-up unknown) for
 * a model of `latency` seconds per row at k and interleave il (-1: not
 * searched), from the cost of the data sets of its k in plan `plan`
 * (hml__iterative_group()); with plan NULL, or no group of k, of all the
 * search's data sets ds_ids[0 .. nds) and no schedule. hml search's front
 * table prints its region speedup. Never fails.
 */
void hml__iterative_predict(hml__prediction *p, const hml__store *s, const json_t *plan,
                            const char *region, long long k, long long il, double latency,
                            const char *const *ds_ids, size_t nds);

/**
 * An iterative trial's cost, hml search's second objective for it: the
 * region's predicted seconds per application time step (lib/store/cost.h
 * hml__predict(), step_seconds) with a model of `latency` seconds per row
 * at the trial's k and interleave, from the cost of the data sets of its
 * k (hml__iterative_group()); NaN when they record no cost (the search
 * then ranks by latency per row, as for other applications).
 */
double hml__iterative_step_seconds(const hml__store *s, const json_t *plan, const char *region,
                                   const json_t *sample, double latency,
                                   const char *const *ds_ids, size_t nds);

/**
 * The latency bound, seconds per row, of a trial at k (k < 0: a plan that
 * searches no k) in plan `plan`: max_latency (0: none) or the room left
 * by the cost of the group of k (its "region_cost_per_row" less
 * "region_move_per_row"), the lower. NaN when there is none, the group
 * records no cost (a plan of older hml: the search's pooled bound holds)
 * or the plan has no group of k.
 */
double hml__iterative_latency_bound(const json_t *plan, long long k, double max_latency);

/** The largest of the groups' bounds (hml__iterative_latency_bound()), NaN: none. */
double hml__iterative_latency_bound_max(const json_t *plan, double max_latency);

#ifdef __cplusplus
}
#endif
#endif
