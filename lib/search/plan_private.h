/*
 * lib/search/plan_private.h - the steps of a search's plan, shared by the
 * files of lib/search/plan*.c (private to them; the interface is plan.h):
 *
 *   plan.c           a plan made: new (its record registered), resumed (its
 *                    record read back, options given again checked against
 *                    it), for --train-args; released
 *   plan_settings.c  how it searches: the command line's settings, the
 *                    fidelity, workers and threads, latency target, seeds
 *   plan_region.c    what it searches: the region's data, workflow and
 *                    cost, the options every trial starts from, the space
 *
 * Each file calls only those below it in this list.
 */
#ifndef HML_LIB_PLAN_PRIVATE_H
#define HML_LIB_PLAN_PRIVATE_H

#include "core/error.h"
#include "search/plan.h"
#include "store/store.h"

/* plan_region.c */

/** fn(payload, the message) when fn is not NULL: rq->info or rq->warn. */
void hml__plan_say(void (*fn)(void *, const char *), void *payload, const char *fmt, ...)
	HML__PRINTF(3, 4);

/** The region (given, else the only one with rows) and its data sets, as
 * hml train chooses them (lib/store/data_pick.h); their files, checked. */
int hml__plan_pick_data(hml__search_plan *p, const hml__store *s);

/** The workflow of the data (for the region's family, arch, training
 * defaults and batch); without it (a warning said), hml's defaults. */
void hml__plan_load_workflow(hml__search_plan *p, const hml__store *s,
                             const hml__search_request *rq);

/** Say what the original code costs per row: slower models are infeasible.
 * An iterative search says it for each k, from the data of that k, which
 * bounds the trials at k (lib/search/iterative.h). */
void hml__plan_say_cost(const hml__search_plan *p, const hml__search_request *rq);

/** Say what trials of a space with "rollout" are ranked by: the QoI after
 * the run (an iterative application), else the one-step validation error
 * (hml-search(1) ROLLOUT). Nothing for a space without it. */
void hml__plan_say_rollout(const hml__search_plan *p, const hml__search_request *rq);

/** Training options every trial starts from: the region's model.train
 * (lib/run/workflow.h, as hml train's defaults), the search's epochs. */
void hml__plan_setup_base(hml__search_plan *p);

/** The search space from `path` (--space, or recorded), else the region's
 * (when kind, recorded, is NULL or "workflow"), else the family's; an
 * iterative application's k and interleave joined to it. */
int hml__plan_load_space(hml__search_plan *p, const hml__store *s, const char *path,
                         const char *kind);

/** The number of rungs for full trials of max_epochs, eta 3: as many as
 * keep the lowest rung at one epoch or more, at most 3; and a fourth when
 * even that one gets 3 epochs or more (max_epochs >= 81), as Hyperband's
 * widest bracket does, so that a long training's configurations are first
 * judged at 1/27 of it and a configuration costs about 4/27 of a full
 * training instead of 1/3 (hml-search(1)). */
unsigned hml__plan_rungs_for(int epochs);

/** What a new search searches: region, data, workflow, its cost, epochs. */
int hml__plan_search(hml__search_plan *p, const hml__store *s, const hml__search_request *rq);

/* plan_settings.c */

/** The settings of the command line, before a record may replace them. */
void hml__plan_from_request(hml__search_plan *p, const hml__search_request *rq);

/** --fidelity, else the one recorded (older records: epochs), else epochs. */
int hml__plan_choose_fidelity(hml__search_plan *p, const hml__search_request *rq,
                              const char *recorded);

/** The workers capped, and libtorch threads per worker: --threads, else
 * the cores shared out. */
void hml__plan_set_threads(hml__search_plan *p, const hml__search_request *rq);

/** The latency objective's target: --target, else the one recorded (on
 * resume: a different one is refused), else auto's choice. */
int hml__plan_choose_target(hml__search_plan *p, const hml__search_request *rq,
                            const char *recorded);

/** --from: the front of another search of the region, its configurations
 * that this search's space can express tried first (seed.h). */
int hml__plan_seed_from(hml__search_plan *p, const hml__store *s, const hml__search_request *rq);

#endif
