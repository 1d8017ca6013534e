/*
 * lib/store/records.h - typed views of the experiment's records (internal).
 *
 * Commands read the manifest through these views instead of chains of
 * json_object_get(): each view names the fields a command needs, typed,
 * with NULL (strings, JSON parts) or NaN (numbers) where the record lacks
 * one. The layout of the records is documented in hml-manifest(5).
 *
 * Views borrow from the store: every pointer in them stays valid until
 * hml__store_free() (see hml__store_manifest()). Filling a view never
 * fails; looking a record up by id can (HML_ENOTFOUND).
 */
#ifndef HML_LIB_RECORDS_H
#define HML_LIB_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A trained or imported model ("models"). */
typedef struct hml__model_view {
	const json_t *json;          /**< the whole record */
	const char *id;
	const char *region;          /**< the label it replaces */
	const char *workflow;        /**< the workflow's name */
	const char *file;            /**< files.model, relative to the experiment */
	const json_t *input_shape;   /**< array of integers (one row), or NULL */
	const json_t *output_shape;
	const json_t *datasets;      /**< array of the data-set ids it was trained on, or NULL */
	double val_rmse;             /**< metrics.val_rmse */
	const char *metric;          /**< "metric": the error metric it was trained for,
	                                  "rmse" (also when absent) or "mape" */
	double val_error;            /**< the validation error in it: metrics.val_rmse or
	                                  metrics.val_mape (per cent) */
	double latency_s;            /**< metrics.latency_seconds_per_sample */
	const char *family;          /**< "mlp", "cnn", ..., "imported" */
	const char *arch;            /**< the canonical spec ("mlp:64x64:relu") */
	const json_t *data_sha256;   /**< object: data-set id -> SHA-256 of its file when trained */
	const json_t *rows;          /**< object: train, validation, test, ... (or NULL) */
	const json_t *options;       /**< object: the effective training options (or NULL) */
	const json_t *metrics;       /**< object: every metric (or NULL) */
	const char *search;          /**< search.id: the search that trained it, or NULL */
	const char *parent;          /**< the model it continued (hml train --from), or NULL */
	double qoi_error;            /**< its error of the application's primary quantity
	                                  of interest after a run with it: qoi_error.value
	                                  (a search's QoI check, hml__records_set_qoi_check),
	                                  else iterative.qoi_error (an iterative search's
	                                  objective); NaN: none, or not a finite number >= 0 */
	const char *qoi_error_source;  /**< "qoi_check", "iterative", or NULL: none */
	int qoi_error_bad;           /**< 1: the card records a QoI error that is not a
	                                  finite number >= 0 (qoi_error is then NaN) */
	long long k, interleave;     /**< iterative.k and .interleave: the steps per call
	                                  and interleave it was judged at; -1: none */
} hml__model_view;

/** A collected data set ("datasets"). */
typedef struct hml__dataset_view {
	const json_t *json;
	const char *id;
	const char *workflow_name;   /**< workflow.name */
	const char *workflow_path;   /**< workflow.path: the workflow.json it ran */
	const char *file;            /**< files.data, relative to the experiment */
	int complete;                /**< 0 when a run failed part-way */
	const json_t *regions;       /**< object: label -> {rows, calls, input_shape, ...} */
	const json_t *runs;          /**< array of {seed, argv, ...}, one per application run,
	                                  or NULL */
} hml__dataset_view;

/** A deployment ("deployments"). */
typedef struct hml__deployment_view {
	const json_t *json;
	const char *id;
	const char *model;           /**< the deployed model's id */
	const char *region;
	const json_t *env;           /**< object: variable -> value */
	const char *compiled;        /**< the "compiled" record it runs (deploy --target c), or NULL */
} hml__deployment_view;

/** A search ("searches", hml search; the trial history is lib/search/history.h). */
typedef struct hml__search_view {
	const json_t *json;
	const char *id;
	const char *region;
	const char *workflow;        /**< the workflow's name */
	const char *family;          /**< model family searched ("mlp", ...) */
	const char *latency_target;  /**< deployment form of the latency objective ("c",
	                                  "torchscript"), NULL in records of older hml */
	const char *status;          /**< "running", "finished", "interrupted", "stopped", "failed" */
	const char *history;         /**< files.history: search/<id>/trials.jsonl */
	const json_t *space;         /**< the search space searched (object) */
	const char *space_sha256;    /**< of the space in canonical JSON (hml__json_sha256) */
	const json_t *datasets;      /**< array of data-set ids */
	const json_t *data_sha256;   /**< object: data-set id -> SHA-256 of its file */
	const json_t *constraints;   /**< object: max_latency, max_params, max_error (null: none) */
	const json_t *front;         /**< array of {trial, config, model, val_rmse, val_mape,
	                                  latency_seconds_per_sample, params}, or NULL */
	double seed, budget, workers, eta, rungs, max_epochs;   /**< NaN when absent */
	int deterministic;           /**< 1: started with --deterministic (absent: 0) */
	const char *metric;          /**< the error objective: "rmse" (also in records of
	                                  older hml, which have no "metric") or "mape" */
} hml__search_view;

struct hml__train_options;
struct hml__train_result;

/** What hml import learnt of a model it checked (hml__model_facts.import). */
typedef struct hml__model_import {
	const char *origin;          /**< the file imported (absolute when known) */
	const char *sha256;          /**< of that file (hex) */
	const char *not_compilable;  /**< why hml cannot compile it to C, or NULL: it can */
	int64_t rows;                /**< the rows its errors were measured on (all collected) */
} hml__model_import;

/**
 * What hml train, hml search and hml import know of a model: the facts
 * hml__model_record_new() writes. Pointers are borrowed. An unknown
 * number is NaN (doubles) or negative (counts, flags) and is written as
 * null; hml search, which keeps only a trial's summary (lib/search/history.h),
 * leaves rows, test_mae, best_epoch and the like unknown. An imported
 * model (import set) has no training: options and nonfinite_policy are
 * not read, result gives its arch and its errors on every collected row
 * (val_rmse, test_rmse, test_mae, test_max_abs; params when > 0).
 */
typedef struct hml__model_facts {
	const char *workflow;        /**< the data sets' workflow name */
	const char *region;
	const json_t *input_shape;   /**< arrays of one row's dimensions */
	const json_t *output_shape;
	const char *const *datasets; /**< the data-set ids trained on */
	size_t ndatasets;
	const struct hml__train_options *options;  /**< the options it trained with */
	const struct hml__train_result *result;    /**< arch, sizes, metrics */
	const char *nonfinite_policy;              /**< "drop", "error", or NULL */
	int64_t dropped_nonfinite, nonfinite_values;
	const char *search;          /**< the search that trained it, or NULL */
	long trial, config;          /**< its trial and configuration there */
	const hml__model_import *import;   /**< hml import's model, or NULL: a trained one */
	const char *parent;          /**< the model it continued (hml train --from), or NULL */
} hml__model_facts;

/**
 * A new "models" record in the layout of hml-manifest(5): workflow,
 * region, family, arch, shapes, datasets with the SHA-256 each file had at
 * collection (from the store's records), then for a trained model
 * ("models (hml train)") family the arch's prefix, rows, options
 * (weight_decay the effective one), metrics, normalisation, and "search"
 * when one trained it, "parent" (a model id) when it continued one; for an
 * imported one ("models (hml import)") family
 * "imported", rows (evaluated, dropped_nonfinite), metrics measured on
 * every row and "import" (origin, sha256, compilable, not_compilable).
 * The one writer of model records (hml train, hml search, hml import);
 * the reader is hml__model_view_of(). NULL when out of memory (HML_ENOMEM
 * set).
 */
json_t *hml__model_record_new(const hml__store *s, const hml__model_facts *f);

/** {"d1": "<sha256 of d1's data file>" or null, ...} of data sets ids[0..n)
 *  as the store records them; NULL when out of memory. */
json_t *hml__records_data_sha256(const hml__store *s, const char *const *ids, size_t n);

void hml__model_view_of(hml__model_view *out, const json_t *rec);
void hml__search_view_of(hml__search_view *out, const json_t *rec);
void hml__dataset_view_of(hml__dataset_view *out, const json_t *rec);
void hml__deployment_view_of(hml__deployment_view *out, const json_t *rec);

/**
 * The largest seed any data set of the experiment was collected with
 * (runs[].seed), or -1 when none records one.
 */
int64_t hml__records_max_seed(const hml__store *s);

/**
 * The card's "iterative" of a model an iterative search registered
 * (lib/search/iterative.h): {"k", "interleave", "qoi_error"}, k or
 * interleave null when < 0 (not searched), qoi_error null when not
 * finite. The writer; hml__model_view_of() reads it. New reference, NULL
 * when out of memory.
 */
json_t *hml__records_iterative_json(long long k, long long interleave, double qoi_error);

/**
 * Record the QoI check `report` of search `search` ({dataset, metric,
 * argv, seed, form, checks: [{model, target, error[, qois][, failed]}]},
 * as hml search --qoi-check makes it; dataset, metric and error: the
 * primary QoI's): as the search's "qoi_check", as "qoi_error" of each of
 * its front entries checked, and as each checked model's "qoi_error":
 * {"value", "metric", "dataset", "search", "seed"} (value null when its
 * run failed). A check's "qois" (every data set, lib/store/qoi_compare.h)
 * is added, as [{dataset, metric, error[, max_error, passed]}], as the
 * front entry's "qoi_errors" and the model's qoi_error.qois. Under the store's lock. Errors:
 * HML_ENOTFOUND "no search 's9' in experiment 'DIR'", those of
 * hml__store_update().
 */
int hml__records_set_qoi_check(hml__store *s, const char *search, const json_t *report);

/** The longest wall time, in seconds, of a successful application run of
 *  the data sets collected with workflow `workflow` (its name), or 0 when
 *  none records one: the default time limit of the accurate runs of hml
 *  evaluate and of the QoI checks (lib/run/limit.h). */
double hml__records_run_wall_max(const hml__store *s, const char *workflow);

/**
 * The id of the first data set of the experiment one of whose runs ran
 * exactly `argv` (NULL-terminated, the program first; runs[].argv), or
 * NULL when none did.
 */
const char *hml__records_dataset_with_argv(const hml__store *s, char *const *argv);

/**
 * The workflow the experiment's data sets ran (their workflow.path), when
 * they all ran one: 1, *path and *name (borrowed) set; 0 and *path NULL
 * when no data set records one; -1 when they ran several, *name and
 * *other naming two of them (either may be NULL).
 */
int hml__records_sole_workflow(const hml__store *s, const char **path, const char **name,
                               const char **other);

/** Records in `collection` ("models", "datasets", ...) of the manifest. */
size_t hml__records_count(const hml__store *s, const char *collection);

/** The i-th (from 0, oldest first) model / data set: 1 and *out filled,
 *  or 0 past the end. */
int hml__records_model_at(hml__model_view *out, const hml__store *s, size_t i);
int hml__records_dataset_at(hml__dataset_view *out, const hml__store *s, size_t i);

/** The model with `id`: 0, or HML_ENOTFOUND "no model 'm9' in experiment 'DIR'". */
int hml__records_model(hml__model_view *out, const hml__store *s, const char *id);

/** The i-th search (1, or 0 past the end), and the search with `id`: 0, or
 *  HML_ENOTFOUND "no search 's9' in experiment 'DIR'". */
int hml__records_search_at(hml__search_view *out, const hml__store *s, size_t i);
int hml__records_search(hml__search_view *out, const hml__store *s, const char *id);

/** The id of the model that trial `trial` of search `search` registered
 *  (its "search" member names both), or NULL. */
const char *hml__records_search_model(const hml__store *s, const char *search, long trial);

/** The data set with `id`: 0, or HML_ENOTFOUND "no data set 'd9' in experiment 'DIR'". */
int hml__records_dataset(hml__dataset_view *out, const hml__store *s, const char *id);

/** The region `label` of a data set ({rows, calls, input_shape, ...}) or NULL. */
const json_t *hml__dataset_view_region(const hml__dataset_view *d, const char *label);

/** The rows collected for region `label` of a data set; 0 when it has no
 *  such region or no integer row count. */
long long hml__dataset_view_rows(const hml__dataset_view *d, const char *label);

/** The latest deployment: 0, or HML_ENOTFOUND "no model is deployed in
 *  experiment 'DIR': run 'hml deploy' or name a model". */
int hml__records_latest_deployment(hml__deployment_view *out, const hml__store *s);

/** files[role] of any record (relative path) or NULL. */
const char *hml__record_file(const json_t *rec, const char *role);

/** The SHA-256 (hex) recorded in a record's provenance for `rel`, or NULL. */
const char *hml__record_sha256(const json_t *rec, const char *rel);

#ifdef __cplusplus
}
#endif
#endif
