/*
 * lib/search/plan.h - what an hml search searches (internal): a new
 * search planned from the command line's request and registered, or a
 * recorded one checked for --resume.
 *
 * A new search takes the region and data sets hml train would
 * (lib/store/data_pick.h), the workflow of its data for the region's
 * family, arch, training defaults and batch, the search space (--space,
 * else the region's model.search_space, else the family's), the latency
 * target (--target, else auto's choice) and the number of rungs for its
 * epochs; it is registered as a "searches" record (lib/search/history.h)
 * with everything a resume needs to check. A resumed search takes its
 * record's settings; an option given again must agree with the record,
 * and its data (SHA-256 of every data file) and space (SHA-256 of the
 * space in canonical JSON) must be the same as when it started.
 *
 * The plan is what the coordinator (lib/search/coordinator.h) runs.
 */
#ifndef HML_LIB_PLAN_H
#define HML_LIB_PLAN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "run/workflow.h"
#include "search/opt/space.h"
#include "store/store.h"
#include "train/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An integer option the command line did not give. */
#define HML__SEARCH_UNSET INT64_MIN

/** What the command line asks for. Strings are borrowed. */
typedef struct hml__search_request {
	int version;                 /**< 1 */
	const char *region;          /**< --region, or NULL */
	const char *space_path;      /**< --space, or NULL */
	const char *target;          /**< --target: "c", "torchscript", "auto", or NULL (auto) */
	const char *keep_models;     /**< --keep-models: "all", "front", or NULL */
	int64_t budget, workers, seed, max_epochs, threads;   /**< HML__SEARCH_UNSET: not given */
	double max_latency, max_params, max_error, trial_timeout;   /**< NaN: not given */
	int deterministic;           /**< --deterministic */
	int ranks;                   /**< > 0: the workers are this many MPI ranks (they
	                                  replace --workers); 0: worker processes */
	/** An informational line (the latency objective auto chose), a warning
	 *  (a workflow that cannot be loaded); may be NULL. */
	void (*info)(void *payload, const char *message);
	void (*warn)(void *payload, const char *message);
	void *payload;
	const char *fidelity;        /**< --fidelity: "epochs", "rows", "both", or NULL */
	const char *from;            /**< --from: seed with this search's front (seed.h), or NULL */
} hml__search_request;

#define HML__SEARCH_REQUEST_INIT { 1, NULL, NULL, NULL, NULL, HML__SEARCH_UNSET, \
	HML__SEARCH_UNSET, HML__SEARCH_UNSET, HML__SEARCH_UNSET, HML__SEARCH_UNSET, \
	NAN, NAN, NAN, NAN, 0, 0, NULL, NULL, NULL, NULL, NULL }

/** What a lower rung saves on (the record's "fidelity"): a rung's fraction
 *  f of the epochs, of the training rows, or sqrt(f) of each. */
typedef enum hml__fidelity {
	HML__FIDELITY_EPOCHS = 0,
	HML__FIDELITY_ROWS = 1,
	HML__FIDELITY_BOTH = 2
} hml__fidelity;

/** "epochs", "rows", "both"; NULL for a bad value. */
const char *hml__fidelity_name(int f);

/** The fidelity named `name`, or -1. */
int hml__fidelity_parse(const char *name);

/** The coordinator's time in the earlier sessions of a resumed search
 *  (seconds; 0 for a new search), as its record kept them. */
typedef struct hml__search_times {
	double seconds;              /**< wall time */
	double cpu;                  /**< the coordinator process's CPU time */
	double busy, suggest;        /**< its wall time outside its waits, of which in the
	                                  scheduler */
	double busy_cpu, suggest_cpu;/**< its thread's CPU time in the same sections */
} hml__search_times;

/**
 * A search to run. Filled by hml__search_plan_new() / _resume() (or by
 * hand, as the unit tests do); released by hml__search_plan_release(),
 * which frees what is marked owned. Borrowed strings come from the store's
 * manifest (valid until hml__store_free()) or the request.
 */
typedef struct hml__search_plan {
	char id[16];                 /**< "s1" */
	char *dir;                   /**< search/<id>, absolute (owned) */
	const char *xp_dir;          /**< the experiment, whose files are written beneath it
	                                  (core/beneath.h; borrowed from the store); NULL:
	                                  `dir` is taken as the root */
	const char *region;          /**< the region's label (borrowed) */
	const char *workflow_name;   /**< the data sets' workflow ("" when none; borrowed) */
	const char *family;          /**< model family searched (borrowed) */
	const char *base_arch;       /**< the region's model.arch, or NULL (borrowed) */
	const char **ds_ids;         /**< the data sets (array owned, ids borrowed) */
	char **ds_paths;             /**< their files, absolute (owned) */
	size_t nds;
	hml__workflow *w;            /**< the data's workflow, or NULL (owned) */
	json_t *space_json;          /**< the space searched (owned reference) */
	json_t *space_source;        /**< {"kind": ..., "path"|"family": ...} (owned) */
	char space_sha[65];
	hml__space *space;           /**< parsed (owned) */
	hml__train_options base;     /**< every trial's options before its sample */
	int target;                  /**< the latency objective's form (lib/deploy/latency.h) */
	int fidelity;                /**< hml__fidelity */
	unsigned rungs;
	int max_epochs;
	long long budget, seed;      /**< configurations; the optimiser's seed */
	double max_latency, max_params, max_error;   /**< constraints; 0 or NaN: none */
	double region_cost;          /**< the region's original code, seconds per row, as
	                                  collected (lib/store/cost.h; the record's
	                                  "region_cost_per_row"); NaN: unknown. A model
	                                  slower per sample is infeasible */
	double region_move;          /**< moving a row in and out (the record's
	                                  "region_move_per_row"; 0: not recorded): what a
	                                  model pays besides its latency */
	int lat_threads;             /**< the threads latencies are measured with: the
	                                  application's (the record's "latency_threads"),
	                                  else `threads` */
	double trial_timeout;        /**< seconds; NaN or <= 0: none */
	int keep_all;                /**< register every trial's model, not the front's */
	int deterministic;           /**< choose trials in lockstep (lib/search/coordinator.h) */
	int nworkers, threads;       /**< workers; libtorch threads per worker */
	int workers_requested;       /**< the workers asked for when more than nworkers (capped
	                                  at the budget and, but with --deterministic, the
	                                  online cores), else 0 */
	int mpi;                     /**< 1: the workers are MPI ranks */
	hml__search_times prev;      /**< of earlier sessions */
	int resumed;                 /**< 1: a recorded search (_resume): its history must
	                                  be there, whole (lib/search/history_check.h) */
	const char *from;            /**< the search whose front seeds this one, or NULL */
	json_t *seeds;               /**< its front's samples, tried first (seed.h; owned
	                                  reference), or NULL */
	json_t *iterative;           /**< an iterative application's k and interleave searched
	                                  (lib/search/iterative.h; owned reference), or NULL */
} hml__search_plan;

/**
 * The options of a trial at a rung that trains `fraction` of a full
 * trial: o's epochs (a full trial's on entry) and row_fraction, as the
 * plan's fidelity says; at least one epoch.
 */
void hml__search_plan_rung_options(const hml__search_plan *p, double fraction,
                                   hml__train_options *o);

/**
 * The latency bound the search enforces, seconds per sample: the least of
 * --max-latency and the region's cost per row less moving a row (a model
 * that costs the whole of it cannot pay); 0 for none. (Read back from
 * the record: hml__search_record_latency_bound(), results.h.) An
 * iterative search whose plan has each k's cost: the largest of its k's
 * bounds, onto which each trial's own k's bound is scaled
 * (lib/search/iterative.h, lib/search/opt/trialsched.h latency_bound).
 */
double hml__search_plan_latency_bound(const hml__search_plan *p);

/**
 * Plan a new search of experiment `s` as `rq` asks, and register its
 * record (status "running"; id into p->id, its directory made). On
 * failure nothing is registered; release *p all the same.
 * Errors: those of hml__data_pick() (no data, several regions, ...), of
 * hml__checked_dataset_files() (a data file missing or changed), of the
 * space (HML_EINVALID "search space 'P' cannot be read", those of
 * hml__space_parse(), hml__trialmap_check()), HML_EINVALID "--target c:
 * the latency target is c, but <why>", those of hml__search_register().
 */
int hml__search_plan_new(hml__search_plan *p, hml__store *s, const hml__search_request *rq);

/**
 * Plan the resumption of search `id` (NULL: the newest) of experiment `s`:
 * its recorded settings, `rq`'s budget, workers, keep_models and
 * trial_timeout where given. Nothing is written.
 * Errors: HML_ENOTFOUND "no search to resume in experiment 'DIR'", "no
 * search 's9' in experiment 'DIR'"; HML_EINVALID "search 's1' has an
 * incomplete record", "cannot resume search 's1' with --seed 4: it was
 * started with 3" (likewise --max-epochs and the constraints, "... it was
 * started without it"), "cannot resume search 's1' on region 'R': it
 * searches region 'Q'", "cannot resume search 's1' with --deterministic:
 * it was started without it", "cannot resume search 's1' with --target
 * torchscript: it was started with c", "cannot resume search 's1': its
 * data changed since it started (...)", "... its search space changed
 * since it started (...)", "search 's1' records N rungs (1 to 8
 * expected)"; those of the data and the space as for _new().
 */
int hml__search_plan_resume(hml__search_plan *p, hml__store *s, const hml__search_request *rq,
                            const char *id);

/**
 * The `hml train` arguments (lib/search/trialmap.h) that train search-space
 * point `point` (an object of parameters) as a new search planned from
 * `rq` would train it at full fidelity: a JSON array of strings into *argv
 * (yours). Nothing is written. Errors: those of planning (as _new(), but
 * nothing is registered), HML_EINVALID "--train-args: parameter 'x' is not
 * in the search space of region 'R'", those of hml__trialmap_apply(),
 * HML_ENOMEM.
 */
int hml__search_plan_train_args(json_t **argv, hml__store *s, const hml__search_request *rq,
                                const json_t *point);

/** Free what the plan owns (NULL-safe, idempotent). */
void hml__search_plan_release(hml__search_plan *p);

#ifdef __cplusplus
}
#endif
#endif
