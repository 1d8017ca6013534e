/*
 * lib/search/history.h - the trial history of hml search and its "searches"
 * record (internal): writer and reader side by side.
 *
 * A search with id S keeps its history in the experiment as
 * search/S/trials.jsonl, one JSON object per line, one line per event,
 * appended as the event happens (documented in hml-manifest(5), section
 * searches):
 *
 *   {"trial":3,"config":2,"rung":0,"status":"running","epochs":1,
 *    "worker":1,"params":{...},"u":[...],"time":"..."}
 *   {"trial":3,"config":2,"rung":0,"status":"ok","epochs":1,"worker":1,
 *    "seconds":2.5,"arch":"mlp:64x64:relu","metrics":{"val_rmse":...,
 *    "test_rmse":...,"val_mape":...,"test_mape":...,"latency_seconds_per_sample":...,"latency_batch":4096,
 *    "latency_target":"c","latency_threads":1,"latency_cached":false,
 *    "latency_cost_seconds":1.7,"params":4481,"epochs_run":1},"time":"..."}
 *   {"trial":3,...,"status":"failed"|"timeout"|"crashed","error":"..."}
 *   {"trial":3,...,"status":"rerun"}      running when the search stopped;
 *                                          started again on --resume
 *   {"trial":3,...,"status":"kept","model":"m4"}   registered as a model
 *
 * A --deterministic search's "running" lines carry "counted": n, the
 * number of trial ends (trials 0 .. n-1, in trial order) the scheduler had
 * counted when it chose the trial, so that a replay counts them at the
 * same points (lib/search/coordinator.h).
 *
 * "trial" counts runs (0, 1, ... in the order they were started), "config"
 * is the optimiser's configuration (lib/search/opt/bo.h id), "rung" its fidelity level
 * (lib/search/opt/asha.h), "u" the configuration's point of the unit cube
 * (lib/search/opt/space.h) with every digit needed to read back the same doubles.
 *
 * "latency_target" (absent in histories of older hml: "torchscript") is the
 * deployment form the latency objective was measured in (hml search
 * --target); "latency_cached" true when the figure is that of an earlier
 * trial of the same arch, batch and threads. "val_rollout_rmse" (a trial
 * of rollout R > 1 only) is its R-step validation error, recorded beside
 * the one-step val_rmse it is ranked by.
 *
 * Atomicity: each event is one complete line written with a single
 * write(2) on an O_APPEND descriptor, so a process killed at any point
 * leaves whole lines and at most one torn last line (no newline) -- which
 * the reader ignores and the next writer cuts off before appending. A
 * written line survives kill -9 (it is in the page cache); fdatasync()
 * makes it survive a crash of the machine too, together with every line
 * before it.
 *
 * Durability: hml__history_append writes and syncs before it returns.
 * hml__history_write only writes, and a background thread syncs: the
 * caller learns from hml__history_durable (poll hml__history_sync_fd)
 * when its line is durable, so hml search's coordinator never waits for
 * the disk: it counts a trial's end once durable and meanwhile goes on
 * with the other workers. A start ("running") line need not be durable
 * before the trial is dispatched: lost in a machine crash, the trial is as
 * if never started (its end cannot be durable without it, being synced
 * after it).
 */
#ifndef HML_LIB_HISTORY_H
#define HML_LIB_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The history's name inside search/<id>/. */
#define HML__HISTORY_FILE "trials.jsonl"

/** The largest trial and configuration number a history may hold (a trial's
 *  model is search/<id>/t<trial>.pt: lib/store/ids.h), and rung. */
#define HML__HIST_MAX_TRIAL 999999999L
#define HML__HIST_MAX_RUNG 63

typedef enum hml__hist_status {
	HML__HIST_RUNNING = 0,   /**< a trial started */
	HML__HIST_OK,            /**< finished with metrics */
	HML__HIST_FAILED,        /**< training reported an error */
	HML__HIST_TIMEOUT,       /**< killed past --trial-timeout */
	HML__HIST_CRASHED,       /**< its worker died (signal, OOM kill, exit) */
	HML__HIST_RERUN,         /**< was running when the search stopped; started again */
	HML__HIST_KEPT           /**< its model was registered ("model") */
} hml__hist_status;

/** "running", "ok", ... (static), or NULL for a bad value. */
const char *hml__hist_status_name(hml__hist_status st);

/** The metrics of a finished trial; NaN / -1 where unknown. */
typedef struct hml__hist_metrics {
	double val_rmse, test_rmse;
	double val_mape, test_mape;  /**< per cent; NaN: not recorded (older hml) */
	double latency_s;          /**< per sample, at latency_batch rows per call */
	int64_t latency_batch;
	int64_t params;
	int epochs_run;
	int latency_target;        /**< deployment form latency_s is of (lib/deploy/latency.h
	                                hml__target); -1: not recorded (torchscript) */
	int latency_threads;       /**< threads it was measured with; 0: not recorded */
	int latency_cached;        /**< 1: taken from an earlier trial of the same arch,
	                                batch and threads, not measured again */
	double latency_cost;       /**< seconds measuring it cost the worker; NaN: not recorded */
	int has_qoi;               /**< 1: an iterative application's trial (lib/search/
	                                iterative.h): qoi_error is its objective */
	double qoi_error;          /**< the primary QoI's error after the application's run
	                                with the model at the trial's k and interleave
	                                (written as "qoi_error") */
	double step_seconds;       /**< an iterative trial's predicted region seconds per
	                                application step at its k and interleave
	                                (lib/search/iterative.h); NaN: not known */
	double latency_bound;      /**< an iterative trial's own bound on latency_s, seconds
	                                per row: its k's (lib/search/iterative.h
	                                hml__iterative_latency_bound()); NaN: the search's */
	double val_rollout_rmse;   /**< a trial of rollout R > 1 (hml train --rollout): its
	                                R-step validation RMSE (the card's val_rollout_rmse),
	                                written when finite; not ranked by (hml-search(1)
	                                ROLLOUT); NaN: R 1 or not recorded */
} hml__hist_metrics;

/**
 * The error a search ranks `m` by: an iterative application's trial's
 * QoI error after the run (has_qoi), else the validation error in the
 * search's metric (NULL or "rmse": val_rmse; "mape": val_mape); NaN for
 * another name. A search record without "metric" (older hml) searched RMSE.
 */
double hml__hist_error(const hml__hist_metrics *m, const char *metric);

/**
 * The cost a search ranks `m` by, its second objective: an iterative
 * application's trial's step_seconds where known (the calls a run makes
 * at its k and interleave counted), else the latency per sample.
 */
double hml__hist_cost(const hml__hist_metrics *m);

/** One event. Pointers are borrowed (from the caller, or from the reader's line). */
typedef struct hml__hist_event {
	long trial;
	long config;
	unsigned rung;
	hml__hist_status status;
	int epochs;               /**< epochs this run trains (0: not recorded) */
	int worker;               /**< -1: not recorded */
	long counted;             /**< "running" of a --deterministic search: how many
	                               trial ends the scheduler had counted when it
	                               chose this trial; -1: not recorded */
	const json_t *params;     /**< the configuration's sample, or NULL */
	const double *u;          /**< its unit-cube point (dim values), or NULL */
	size_t dim;
	double seconds;           /**< wall time of the run; NaN: not recorded */
	const char *arch;         /**< canonical arch spec trained, or NULL */
	const char *error;        /**< why it failed, or NULL */
	const char *model;        /**< HML__HIST_KEPT: the model id */
	hml__hist_metrics m;      /**< HML__HIST_OK only */
} hml__hist_event;

/** An event with nothing recorded: status running, -1 / NaN / NULL elsewhere. */
void hml__hist_event_init(hml__hist_event *ev);

typedef struct hml__history hml__history;

/**
 * Open (create) the history file at `path` for appending. A torn last line
 * (no newline: the writer was killed mid-line) is cut off first.
 * `path` lies inside experiment `root` and is opened beneath it, never
 * through a link (core/beneath.h; NULL: its own directory is the root).
 * *out is yours: hml__history_close(). Errors: HML_EINVALID "'search/s1/
 * trials.jsonl' in experiment 'EXP' is a symbolic link; ...", HML_EIO
 * "cannot open trial history 'P': <strerror>", HML_ENOMEM.
 */
int hml__history_open(hml__history **out, const char *root, const char *path);

/** Close (NULL-safe): stops the sync thread and syncs what is unsynced. */
void hml__history_close(hml__history *h);

/**
 * Append one event as one line (single write, then fdatasync).
 * Errors: HML_EIO "cannot write trial history 'P': <strerror>", HML_ENOMEM,
 * HML_EINVALID for a status out of range.
 */
int hml__history_append(hml__history *h, const hml__hist_event *ev);

/**
 * Append one event as one line (a single write) without waiting for the
 * disk; *seq is its number (1, 2, ... since open, counting every line
 * written through h). The sync thread (started by the first call) makes it
 * durable soon. Errors: as hml__history_append; HML_ERROR when the thread
 * cannot start.
 */
int hml__history_write(hml__history *h, const hml__hist_event *ev, uint64_t *seq);

/** A descriptor that becomes readable when the sync thread made more lines
 *  durable (poll it; hml__history_durable drains it). */
int hml__history_sync_fd(const hml__history *h);

/**
 * The number of the last durable line into *seq (every line up to it is
 * durable). Errors: HML_EIO "cannot write trial history 'P': <strerror>"
 * when a background sync failed (then nothing after the last good sync is
 * known durable).
 */
int hml__history_durable(hml__history *h, uint64_t *seq);

/** Sync now (waiting for the disk) and give the last durable line as
 *  hml__history_durable. Errors: HML_EIO. */
int hml__history_flush(hml__history *h, uint64_t *seq);

/**
 * Read the history at `path`, calling fn for every complete event in file
 * order (pointers in *ev valid during the call only); a nonzero return of
 * fn stops the reading and is returned. A missing file is an empty
 * history. *torn (may be NULL) is set to 1 when a torn last line was
 * ignored. Every line is checked before fn sees it: only the keys above
 * (and in "metrics" those the writer writes), each of its type; trial and
 * config counts up to HML__HIST_MAX_TRIAL, rung up to HML__HIST_MAX_RUNG;
 * "u" in [0, 1]; "seconds" and every error in "metrics" finite and >= 0,
 * the latency finite and > 0 (null: unknown); "model" a model id
 * (lib/store/ids.h). Errors: HML_EIO; HML_EINVALID "trial history 'P'
 * line N: <why>" for a complete line that is not such an event (not JSON,
 * an unknown key, a missing, bad or out-of-range field, an unknown
 * status), and for an HML_EINVALID that fn returns (its message after the
 * file and line).
 */
int hml__history_read(const char *path, int (*fn)(const hml__hist_event *ev, void *payload),
                      void *payload, int *torn);

/* ---- the "searches" record (manifest.json) ------------------------------ */

/**
 * Register a search: `record` (stolen) is added to the "searches"
 * collection (lib/store/store.h gives it id sN and provenance); then its
 * directory search/<id>/ is made and files.history set to
 * "search/<id>/trials.jsonl". The id goes to id_out.
 * Errors: those of hml__store_add(), hml__store_update(); HML_EIO when the
 * directory cannot be made.
 */
int hml__search_register(hml__store *s, json_t *record, char *id_out, size_t id_size);

/**
 * Set the members of `fields` (borrowed) in search record `id` under the
 * store's lock (status, counts, front, ...).
 * Errors: HML_ENOTFOUND "no search 'S' in experiment 'DIR'"; those of
 * hml__store_update().
 */
int hml__search_set(hml__store *s, const char *id, const json_t *fields);

/** SHA-256 (hex) of a JSON value in canonical form (sorted keys, compact). */
int hml__json_sha256(const json_t *v, char hex[65]);

/**
 * The lock that lets one search at a time run in an experiment:
 * search/.lock, flock()ed without waiting and held until
 * hml__search_unlock() (or the process's death). *fd is the held
 * descriptor (close-on-exec). Errors: HML_ELOCKED "a search is already
 * running in experiment 'DIR' (pid N)"; HML_EIO.
 */
int hml__search_lock(hml__store *s, int *fd);
void hml__search_unlock(int fd);

/** Name the search the held lock `fd` runs (the lock file reads "PID ID"),
 *  once it has an id. Best effort: a failure leaves "PID". */
void hml__search_lock_name(int fd, const char *id);

/**
 * Whether a live process holds the search lock of experiment `s`: 1 (and
 * the id it named, "" before it named one, into id when not NULL), 0 when
 * none does. It probes the lock with a shared flock() for an instant (so
 * it never blocks, and hml__search_lock waits up to 0.2 s for a probe to
 * pass). Errors: HML_EIO, HML_ENOMEM.
 */
int hml__search_holder(const hml__store *s, char *id, size_t size);

/**
 * The status of search `rec` (a "searches" record) as readers report it:
 * the record's, except "interrupted" for one recorded as "running" that no
 * live process runs (its coordinator was killed with kill -9 or crashed,
 * and could not say so); `hml search --resume` continues it. A lock that
 * cannot be probed leaves the record's status. Static storage or rec's.
 */
const char *hml__search_status(const hml__store *s, const json_t *rec);

#ifdef __cplusplus
}
#endif
#endif
