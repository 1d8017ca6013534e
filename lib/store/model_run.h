/*
 * lib/store/model_run.h - how the application is run with a model in
 * place of its region (internal): the one definition of "the command line
 * and environment of a run of model M", for every command that runs one.
 *
 * A model of an iterative application (lib/run/search_args.h) was trained
 * on data collected at one k (steps per model call) and judged at one
 * interleave ratio; it must run at them wherever it runs, or it is judged
 * on a run it was not made for. Its k and interleave are, in order:
 *   1. the caller's choice (hml evaluate --k --interleave, a search
 *      trial's configuration),
 *   2. the deployment's (its "run", written by hml deploy: the values it
 *      was checked at, hml__model_run_json()),
 *   3. the model card's "iterative" (an iterative search's, lib/store/
 *      records.h hml__model_view k and interleave),
 * else the command line's own k and no interleave. k is set as the
 * workflow's search_args.k argument in argv; the interleave as its
 * search_args.interleave argument when the workflow declares one, else as
 * the runtime's interleave mode (hml__run_config.interleave:
 * HML_MODE_<REGION>=interleave, HML_INTERLEAVE_<REGION>=N,
 * lib/run/childenv.h).
 *
 * Used by hml evaluate, hml deploy --max-qoi-error and hml search
 * --qoi-check (cmd/qoi_check.c), the iterative search's trial runs
 * (cmd/search_run.c) and, through hml evaluate, bench/apps.sh.
 */
#ifndef HML_LIB_MODEL_RUN_H
#define HML_LIB_MODEL_RUN_H

#include <jansson.h>

#include "run/childenv.h"
#include "run/workflow.h"
#include "store/records.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A run's steps per model call and interleave ratio; -1 each: not set. */
typedef struct hml__model_run {
	long long k;           /**< >= 1, or -1: the command line's own */
	long long interleave;  /**< >= 0, or -1: none (the model on every call) */
} hml__model_run;

#define HML__MODEL_RUN_INIT { -1, -1 }

/**
 * The k and interleave of a run of model `m` (NULL: no card, e.g. a trial
 * not yet registered) into *out: each field from `choice` when set there
 * (may be NULL), else from `deployed` (may be NULL), else from m's card,
 * else -1.
 */
void hml__model_run_resolve(hml__model_run *out, const hml__model_view *m,
                            const hml__model_run *deployed, const hml__model_run *choice);

/**
 * Apply run `r` to a run of workflow `w`: *argv (NULL-terminated, yours,
 * replaced by a new vector on success) gets w's search_args.k argument
 * set to r->k when r->k >= 1, and its search_args.interleave argument set
 * to r->interleave when it declares one (c->interleave then 0); else
 * c->interleave is r->interleave (0 when -1). c->conserve is the
 * "conserve" w declares for region c->region (NULL: none; set c->region
 * first), so that every run of a model keeps the sum the region's physics
 * keeps (lib/core/conserve.h). Errors: HML_EINVALID "k K:
 * workflow 'W' declares no steps per model call (search_args.k in
 * hml-workflow(5))"; HML_ENOMEM. *argv is unchanged on failure.
 */
int hml__model_run_apply(char ***argv, hml__run_config *c, const hml__workflow *w,
                         const hml__model_run *r);

/** Run `r` as JSON, {"k": K|null, "interleave": N|null} (new reference;
 *  NULL: out of memory): what a deployment records as its "run". */
json_t *hml__model_run_json(const hml__model_run *r);

/** The reader of hml__model_run_json()'s object `o` (NULL, or a field that
 *  is not an integer in range: -1). */
void hml__model_run_read(hml__model_run *out, const json_t *o);

#ifdef __cplusplus
}
#endif
#endif
