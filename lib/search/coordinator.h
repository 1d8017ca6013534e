/*
 * lib/search/coordinator.h - the coordinator of hml search (internal).
 *
 * It runs a planned search (lib/search/plan.h) on a pool of workers
 * (lib/search/pool.h): it replays the trial history (lib/search/history.h),
 * keeps every worker busy with the scheduler's next trial
 * (lib/search/opt/trialsched.h), records each start and end in the history
 * before acting on it, replaces workers that crash or hang, and at the end
 * registers the models worth keeping and writes the search's record.
 *
 *   hml__coordinator_new(&c, &opts);     // the scheduler
 *   hml__coordinator_replay(c);          // the history: resumed trials queued
 *   rc = hml__coordinator_run(c);        // 0 budget spent, 1 interrupted,
 *                                        // 2 stopped at the time limit
 *   hml__coordinator_keep_models(c);     // the front's models registered
 *   hml__coordinator_record(c, "finished");
 *   hml__coordinator_free(c);
 *
 * Trials: trial i is the i-th run started (numbered in the history); a
 * configuration's rung-0 trial and its promotions are different trials. A
 * trial's end counts (the scheduler learns it, its model file is kept or
 * deleted) once its history line is durable; new suggestions wait for the
 * ended trials to count, and the scheduler holds the points of the trials
 * still running as pending (lib/search/opt/bo.h's constant liar), so
 * parallel suggestions spread out. A trial that fails, crashes its worker
 * or runs past the plan's trial_timeout (its worker killed and replaced)
 * ends with that status and counts like any other.
 *
 * --deterministic (lockstep): trial ends are counted in trial order, and
 * trial k is chosen once exactly the ends of trials 0 .. k-W are counted
 * (W workers; one more each time the scheduler had nothing to start), so
 * the choices depend on the seed, W and the trials' results, never on
 * which trial ended first. Each start records how many ends were counted
 * ("counted"), so a replay counts them at the same points.
 *
 * Resume: a trial recorded as running when the search stopped is started
 * once more (a "rerun" line first); no ended trial runs again.
 *
 * Time limit (--time-limit): no trial starts that is not expected to end
 * by the limit (the longest trial of its rung so far, ended or still
 * running; with none at its rung, the longest of any rung scaled up to
 * its rung's epochs; with none at all, it starts). A promotion chosen
 * that would not end in time is recorded as started without a worker, so
 * that --resume runs it. At the limit the trials still running are
 * stopped (their workers killed); they stay running in the history, and
 * --resume runs them again, as after an interrupt.
 *
 * The coordinator neither prints nor exits: progress and warnings go to
 * the callbacks of its options; an interrupt is a flag it reads.
 */
#ifndef HML_LIB_COORDINATOR_H
#define HML_LIB_COORDINATOR_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "search/history.h"
#include "search/plan.h"
#include "search/pool.h"
#include "store/store.h"
#include "train/dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where a search stands, for a progress bar. */
typedef struct hml__coordinator_progress {
	size_t done;                 /**< configurations whose rung-0 trial ended */
	long long budget;
	size_t running, failed, front;   /**< trials running, failed (ever); front size */
	double best;                 /**< the best top-rung validation RMSE; NaN: none yet */
	double elapsed;              /**< seconds of this session */
	double eta;                  /**< seconds to the budget at this pace, or to the time
	                                  limit when that is sooner; NaN: unknown */
	size_t trials;               /**< trials ended (all sessions) */
	size_t top;                  /**< ... of which at the top rung */
	double time_left;            /**< seconds to the time limit; NaN: no limit */
} hml__coordinator_progress;

typedef struct hml__coordinator_options {
	int version;                 /**< 1 */
	const hml__search_plan *plan;    /**< what to run: borrowed, must outlive the coordinator */
	hml__store *store;           /**< for the kept models and the record (borrowed; NULL:
	                                  hml__coordinator_keep_models and _record fail) */
	const hml__pool_ops *pool_ops;   /**< the workers, plan->nworkers of them */
	void *pool;                  /**< borrowed: must outlive the coordinator, which stops
	                                  its workers when it ends */
	/** Nonzero once the search must stop (SIGINT, SIGTERM); NULL: never. */
	const volatile sig_atomic_t *interrupted;
	/** After each round of the loop; once with NULL when the loop ended.
	 *  May be NULL. */
	void (*progress)(void *payload, const hml__coordinator_progress *p);
	/** A warning (a trial lost with its worker, files that stay); may be NULL. */
	void (*warn)(void *payload, const char *message);
	/** The latency card (a model record's "latency") of the model file at
	 *  model_path, measured on rows of d at `batch` rows per call with
	 *  `threads` threads: new, or NULL when it was not measured. NULL: the
	 *  kept models get no card. */
	json_t *(*card)(void *payload, const char *model_path, const hml__dataset *d,
	                int64_t batch, int threads);
	void *payload;
	/** Wall-clock limit of this run in seconds from `started` (0: none):
	 *  hml__coordinator_run() starts no trial it does not expect to end by
	 *  then, and stops the trials still running when it comes. */
	double time_limit;
	double started;              /**< hml__now() when the limit's clock started (0: at
	                                  hml__coordinator_new()) */
} hml__coordinator_options;

#define HML__COORDINATOR_OPTIONS_INIT { 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
	0, 0 }

typedef struct hml__coordinator hml__coordinator;

/**
 * A coordinator for o->plan: its scheduler made, no worker started, the
 * history not read yet. *out is yours: hml__coordinator_free().
 * Errors: those of hml__sched_new(); HML_EINVALID for options without a
 * plan or a pool; HML_ENOMEM.
 */
int hml__coordinator_new(hml__coordinator **out, const hml__coordinator_options *o);

/**
 * Read the plan's history (plan->dir/trials.jsonl; missing: a new search,
 * unless plan->resumed) into the scheduler, as the original run made it,
 * every line checked first (lib/search/history_check.h: its point in the
 * space, its rung, a kept model the manifest's model of that trial), and
 * open it for appending; trials that were running are queued to run
 * again, each after a "rerun" line. A resumed search's history must be
 * whole (hml__history_check_complete). Nothing is written before the
 * whole history has passed. Errors: those of hml__history_read() and
 * hml__history_open(), hml__history_check_event() and
 * hml__history_check_complete(); HML_EINVALID "trial history 'P' line 9:
 * trial 4 starts out of order (expected 3)" (and the like for an end that
 * never started, a --deterministic start counting a trial that has not
 * ended).
 */
int hml__coordinator_replay(hml__coordinator *c);

/**
 * Start the workers and run trials until the budget is spent (0), the
 * interrupt flag is set (1: trials left running are re-run by --resume)
 * or the time limit of the options comes (2: likewise; see "Time limit"
 * above).
 * Every ended trial counts before it returns; the workers are stopped.
 * Errors: those of the history, the scheduler and the pool; HML_EINVALID
 * "search 's1': worker 0: <why>" when a worker cannot load the data;
 * HML_ERROR "worker 0 of search 's1' ended while starting (exit 1); see
 * DIR/worker-0.log", "search 's1': every worker rank was lost", a worker
 * answering for another trial or measuring another latency target.
 */
int hml__coordinator_run(hml__coordinator *c);

/**
 * Register the models to keep as "models" records (lib/store/records.h,
 * with a latency card for the front's): the top-rung trials of the front,
 * or every trial with a model file when plan->keep_all; each gets a "kept"
 * history line. After a stop at the time limit (hml__coordinator_run()
 * returned 2) the front's models get no latency card: measuring one takes
 * seconds, past the limit; a later session's front gets its cards. A model
 * a killed search had registered for a trial is taken, not registered
 * twice; a missing model file is a warning. The
 * other model files are deleted. Errors: those of hml__store_add() and
 * hml__history_append(); HML_EINVALID without a store.
 */
int hml__coordinator_keep_models(hml__coordinator *c);

/**
 * Set the search's record (lib/search/history.h hml__search_set): status,
 * counts, the coordinator's time (this session's added to the plan's
 * earlier ones), the front ([{trial, config, model, val_rmse,
 * latency_seconds_per_sample, params, arch}], by error), the budget,
 * "stopped": "time_limit" when status is "stopped" (null otherwise) and
 * "time_limit": this session's limit in seconds (null: none).
 * Errors: those of hml__search_set(); HML_EINVALID without a store.
 */
int hml__coordinator_record(hml__coordinator *c, const char *status);

/** Counts over every trial of the search (this session's and replayed). */
typedef struct hml__coordinator_counts {
	size_t configs;              /**< configurations started */
	size_t trials;               /**< trials started */
	size_t ok;                   /**< ended with a result (kept ones included) */
	size_t failed;               /**< failed, timed out or crashed */
	size_t reruns;               /**< re-runs of trials left running, all sessions */
	size_t session_trials;       /**< trials that ended in this session */
	double busy, busy_cpu;       /**< this session: the coordinator's wall and thread CPU
	                                  seconds outside its waits */
	double suggest, suggest_cpu; /**< ... of which in the scheduler */
} hml__coordinator_counts;

void hml__coordinator_counts_of(hml__coordinator_counts *out, const hml__coordinator *c);

/** What the coordinator knows of one trial. */
typedef struct hml__coordinator_trial {
	long config;
	unsigned rung;
	hml__hist_status status;     /**< RUNNING until it ends (and counts); KEPT once kept */
	int epochs;                  /**< epochs it trains (0 before it starts) */
	int worker;                  /**< the worker it ran on, -1: none yet */
	int reruns;                  /**< times it was started again on resume */
	const char *arch;            /**< canonical spec trained ("" until it ended ok) */
	const char *model;           /**< registered model id, or "" */
	hml__hist_metrics m;         /**< of an ok trial */
	const json_t *params;        /**< its configuration's parameters (borrowed) */
	const double *u;             /**< its configuration's point (dim values, borrowed) */
	size_t dim;
} hml__coordinator_trial;

/** Trial i (valid until the next call on c): 0, or HML_ENOTFOUND past the end. */
int hml__coordinator_trial_at(hml__coordinator_trial *out, const hml__coordinator *c,
                              size_t i);

/** The scheduler's trials running now (configurations started and not ended). */
size_t hml__coordinator_running(const hml__coordinator *c);

/** Stops the workers left running, closes the history (NULL-safe). */
void hml__coordinator_free(hml__coordinator *c);

#ifdef __cplusplus
}
#endif
#endif
