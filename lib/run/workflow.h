/*
 * lib/run/workflow.h - workflow.json: how hml runs an application (internal).
 *
 * Format (schema_version 1), documented in hml-workflow(5):
 *
 * {
 *   "schema_version": 1,
 *   "name": "binomial",
 *   "description": "European options on a binomial tree",
 *   "program": "binomial",                 // relative to the workflow.json's directory, or absolute
 *   "env": {"OMP_PROC_BIND": "false"},     // optional, added to the application's environment (lib/run/childenv.h)
 *   "collect":  {"args": ["--options", "16384", "--seed", "{seed}"], "runs": 1, "seed": 1,
 *                "sample": {"rate": 0.1, "reservoir": 20000, "dedup": true, "seed": 7},
 *                "compression": "deflate:4"},        // sample, compression optional
 *   "evaluate": {"args": ["--options", "16384", "--seed", "42"], "repeat": 3},
 *   "regions": [
 *     {"label": "binomial", "batch": 4096,
 *      "model": {"family": "mlp", "arch": "mlp:64x64:relu",
 *                "train": {"epochs": 100, "batch": 256, "lr": 0.001},
 *                "categorical": [{"feature": 1, "classes": 12}],   // optional, mlp only
 *                "search_space": { ... free-form, used by hml search ... }}}
 *   ],
 *   "qoi": {"dataset": "price", "metric": "rmse"},   // metric: rmse | mape | max_abs
 *          optional "mape_floor": 1.0 (MAPE over |accurate| >= 1 only),
 *          optional "max_error": 0.05 (the error in `metric` the owner accepts);
 *          or a non-empty array of such objects, each naming another data set:
 *          "qoi": [{"dataset": "state"}, {"dataset": "mass", "max_error": 1e-6}]
 *          The first is the primary: its error is "the QoI error" wherever
 *          one figure is needed (training metric, deploy --max-qoi-error,
 *          --best, search --qoi-check's qoi_error).
 *   "success_exit_codes": [0, 1],          // optional, default [0]: statuses 0-255
 *   "verify": {"pattern": "Verification: PASSED"},  // optional, POSIX extended regex
 *   "launcher": ["mpirun", "-n", "{ranks}"],  // optional: an MPI application's launcher,
 *                                          // "{ranks}" becomes the number of ranks
 *   "ranks": 3,                            // optional, default 1 (2 and more need a launcher)
 *   "search_args": {"k": {"arg": "--k", "values": [5, 10]},   // optional: an iterative
 *                   "interleave": {"range": [0, 4]}}          // application's (search_args.h)
 * }
 *
 * "{seed}" in an argument is replaced by the run's seed (collect: seed,
 * seed+1, ... for --runs N). The program is never run through a shell.
 */
#ifndef HML_LIB_WORKFLOW_H
#define HML_LIB_WORKFLOW_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <regex.h>

#include "run/childenv.h"
#include "run/search_args.h"

/* The largest seed of any run (collect.seed, hml collect --seed S and every
 * S+k-1 of its runs). */
#define HML__SEED_MAX (INT64_MAX / 2)

#ifdef __cplusplus
extern "C" {
#endif

#define HML__WORKFLOW_SCHEMA 1

/* The most ranks of an MPI workflow (hml collect --ranks, "ranks"). */
#define HML__RANKS_MAX 4096

typedef struct hml__workflow_region {
	char *label;
	int64_t batch;       /**< the application's rows per call (0: unknown) */
	char *family;        /**< "mlp", "cnn" */
	char *arch;          /**< default architecture spec, may be NULL */
	json_t *train;       /**< default training options object, or NULL (borrowed from json) */
	json_t *search_space;/**< or NULL (borrowed from json) */
	const char *metric;  /**< the error metric of training and search: "rmse" or "mape"
	                          (from the primary qoi's metric, lib/train/train.h) */
	const char *loss;    /**< model.train.loss, else the primary qoi's metric's loss
	                          ("mse", "relative") */
	double mape_floor;   /**< the primary qoi's mape_floor */
	char *categorical;   /**< model.categorical as "F:K,..." (lib/train/categorical.h),
	                          or NULL */
	char *conserve;      /**< "conserve": the sum of a box of the output the physics
	                          conserves, a spec in its canonical form
	                          (hml__conserve_format, lib/core/conserve.h), or NULL */
} hml__workflow_region;

/* One quantity of interest, an entry of "qoi". */
typedef struct hml__workflow_qoi {
	char *dataset;       /**< "dataset": its name in the QoI file (lib/core/qoi_file.h) */
	char *metric;        /**< "metric": "rmse" (default), "mape" or "max_abs" */
	double mape_floor;   /**< "mape_floor": MAPE leaves out |accurate| below it; 0: relative rule */
	double max_error;    /**< "max_error": the error in `metric` accepted; NaN: no bound */
} hml__workflow_qoi;

typedef struct hml__workflow {
	char *name;
	char *description;
	char *path;          /**< absolute path of the workflow.json */
	char *dir;           /**< its directory */
	char *program;       /**< absolute path of the executable */
	char **env;          /**< NULL-terminated "KEY=VALUE" list */
	char **collect_args; /**< NULL-terminated, "{seed}" not yet substituted */
	int collect_runs;
	int64_t collect_seed;       /* 0 to HML__SEED_MAX */
	hml__collect_keep collect_keep; /**< "collect.sample", "collect.compression"
	                                     (compression borrowed from json) */
	char **evaluate_args;
	int evaluate_repeat;
	hml__workflow_region *regions;
	size_t nregions;
	hml__workflow_qoi *qoi; /**< "qoi", as an array: qoi[0] is the primary */
	size_t nqoi;         /**< at least 1; data sets unique */
	int *success_codes;  /**< "success_exit_codes": statuses a run may end with ({0}) */
	size_t nsuccess_codes;
	char *verify_pattern;/**< "verify.pattern": the program's own check, or NULL */
	regex_t *verify_re;  /**< it compiled (REG_EXTENDED), or NULL */
	char **launcher;     /**< "launcher", NULL-terminated, "{ranks}" not yet
	                          substituted; NULL when the workflow has none */
	int ranks;           /**< "ranks": 1 to HML__RANKS_MAX, default 1 */
	hml__search_args search_args; /**< "search_args": the steps per model call and
	                                   the interleave ratio hml search explores
	                                   (lib/run/search_args.h); none declared: n 0 */
	json_t *json;        /**< the whole document */
	char sha256[65];     /**< of the workflow.json file */
} hml__workflow;

/**
 * Load a workflow by bundled name ("binomial") or by path (anything with a
 * '/' or ending in ".json"; a directory means DIR/workflow.json).
 * Bundled names are looked up in $HML_WORKFLOW_PATH (colon-separated
 * directories, each holding NAME/workflow.json), then next to the hml
 * executable: <exe>/../workflows (build tree) and
 * <exe>/../libexec/hml/workflows (installed).
 * Errors: HML_ENOTFOUND "unknown workflow 'NAME' (looked in: DIRS)" (with
 * "; did you mean ./NAME?" after the name when ./NAME/workflow.json exists) or
 * "cannot read workflow 'PATH': <strerror>"; HML_EINVALID "invalid
 * workflow name 'N'", "cannot read workflow 'PATH': not a regular file",
 * "workflow 'PATH': invalid JSON: <text> (line L, column C)",
 * "workflow 'PATH': key 'collect.args' must be an array of strings",
 * "workflow 'PATH': key 'qoi[1].dataset' repeats data set 'mass' of qoi[0]" or
 * "workflow 'PATH': unknown key 'colect'" (every key named by its path);
 * HML_ENOTFOUND "workflow 'PATH': program 'P' not found" / "is not a
 * file" / "is not executable"; HML_ENOTSUPPORTED for a newer
 * schema_version; HML_EIO when the file cannot be read.
 * *out is yours: hml__workflow_free(); *out is NULL on failure.
 */
int hml__workflow_load(hml__workflow **out, const char *name_or_path);

void hml__workflow_free(hml__workflow *w);

struct hml__train_options;

/**
 * Apply the region's model.train object (hml-workflow(5); its keys and
 * types are checked at load) over `o`: each key it holds sets the training
 * option of the same name, the others keep their value; the loss, metric
 * and MAPE floor are always set (the region's loss, metric, mape_floor), and
 * the categorical features (model.categorical, none when it has none). hml train's
 * defaults and every hml search trial's base come from here. *nonfinite
 * (may be NULL) gets model.train.nonfinite when it has one. r NULL: nothing.
 * Strings point into the workflow (valid until hml__workflow_free()).
 */
void hml__workflow_train_options(const hml__workflow_region *r, struct hml__train_options *o,
                                 const char **nonfinite);

/** The region with `label`, or NULL; label NULL gives the only/first region. */
const hml__workflow_region *hml__workflow_region_find(const hml__workflow *w,
                                                      const char *label);

/** 1 when a run that exited with status `code` succeeded: `code` is one
 *  of the workflow's success_exit_codes (0 alone by default). */
int hml__workflow_exit_ok(const hml__workflow *w, int code);

/**
 * The program's own verification of a run (verify.pattern): *passed 1 when
 * a line of the run's output `log` matches the pattern, else 0; 1 when the
 * workflow has no pattern (nothing is read then). Lines are matched one by
 * one, without their newline. 0, or HML_ENOTFOUND / HML_EIO "cannot read
 * 'LOG': <strerror>".
 */
int hml__workflow_verify(const hml__workflow *w, const char *log, int *passed);

/**
 * 1 when a run with `evaluate_args` would run the inputs a collection with
 * `collect_args` ran (each NULL: the workflow's own): collect's arguments
 * hold no "{seed}" and the two lists are equal. The QoI error of such an
 * evaluation measures memorisation, not generalisation.
 */
int hml__workflow_same_inputs(const hml__workflow *w, char *const *collect_args,
                              char *const *evaluate_args);

/** Directories searched for bundled workflows, ':'-joined (malloc'ed). */
char *hml__workflow_search_path(void);

#ifdef __cplusplus
}
#endif
#endif
