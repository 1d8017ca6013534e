/*
 * cmd/cmd.h - what every hml subcommand shares: global options, the
 * option-table parser that also prints --help, output and exit codes,
 * the progress bar and interrupt handling.
 *
 * A subcommand is `int cmd_<name>(int argc, char **argv)` in cmd/<name>.c,
 * with argv[0] the command name. It returns an exit code (HML_EXIT_*).
 * Results go to stdout (one JSON document when g_cmd.json), diagnostics
 * to stderr as "hml: error: ..." / "hml: warning: ...".
 */
#ifndef HML_CMD_H
#define HML_CMD_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "core/error.h"
#include "core/json.h"

enum {
	HML_EXIT_OK = 0,
	HML_EXIT_FAILURE = 1,      /* the work failed (I/O, a crashed application, ...) */
	HML_EXIT_USAGE = 2,        /* bad command line */
	HML_EXIT_INVALID = 3,      /* invalid input: workflow, manifest, data, model */
	HML_EXIT_INTERRUPTED = 130 /* interrupted: main() makes it 128 + the signal
	                              (130 SIGINT, 143 SIGTERM, 129 SIGHUP) */
};

/* Global options, set by main() before the subcommand runs (and also
 * accepted after the subcommand name: `hml show --json`). */
typedef struct cmd_globals {
	const char *dir;   /* -C DIR: experiment directory (default ./hml-experiment) */
	int quiet;         /* -q: no progress, no informational stderr */
	int json;          /* --json: stdout is one JSON document */
} cmd_globals;
extern cmd_globals g_cmd;

/* Set by the SIGINT/SIGTERM/SIGHUP handler (which also forwards the
 * signal to a running child's process group through hml__interrupt). */
extern volatile sig_atomic_t cmd_interrupted;
void cmd_signals_install(void);

/* A command's exit status as hml exits with it: HML_EXIT_INTERRUPTED
 * becomes 128 + the first interrupting signal's number (hml(1)). */
int cmd_exit_status(int code);

typedef enum cmd_opt_kind {
	CMD_OPT_FLAG,     /* int *: set to 1 */
	CMD_OPT_STRING,   /* const char **: points into argv */
	CMD_OPT_INT,      /* int64_t * */
	CMD_OPT_DOUBLE,   /* double * */
	CMD_OPT_LIST      /* cmd_list *: repeatable, values appended */
} cmd_opt_kind;

typedef struct cmd_list {
	const char **items;   /* malloc'ed array of pointers into argv */
	int n;
} cmd_list;

typedef struct cmd_option {
	const char *name;     /* long name without "--" ("epochs"); NULL ends the table */
	char short_name;      /* or 0 */
	cmd_opt_kind kind;
	void *value;
	const char *arg;      /* argument name for help ("N"); NULL for flags */
	const char *help;     /* one line */
} cmd_option;

/* The values a numeric option accepts: a value given outside them is a usage
 * error naming the option and its range, so that no value given on the
 * command line is taken for the option's default. */
typedef struct cmd_range {
	const char *name;     /* the option's long name; NULL ends the table */
	long double min, max; /* from min to max (INFINITY: no upper bound); long
	                         double holds every int64_t bound exactly */
	int above_min;        /* 1: more than min, not equal (min 0: a positive number) */
} cmd_range;

typedef struct cmd_spec {
	const char *name;       /* "train" */
	const char *synopsis;   /* "[options] [WORKFLOW]" */
	const char *summary;    /* one line, also in `hml --help` */
	const char *description;/* a paragraph for --help, may be NULL */
	const cmd_option *options;
	int min_args, max_args; /* positional arguments (max -1: any) */
	const cmd_range *ranges;/* of the numeric options; NULL: none, see above */
} cmd_spec;

/*
 * Parse argv (argv[0] is the command name) against spec->options plus the
 * global options (-C, -q, --json) and --help/-h. Accepts "--name value",
 * "--name=value", "-x value", and "--" to end options.
 * Returns:
 *   0  parsed; the positional arguments are argv[*first .. argc-1]
 *      (argv is permuted so positionals come last)
 *   1  --help was printed on stdout: the command returns HML_EXIT_OK
 *  -1  a usage error was printed on stderr: return HML_EXIT_USAGE
 */
int cmd_parse(const cmd_spec *spec, int argc, char **argv, int *first);

/*
 * Parse the options that come before a command name (`hml -C DIR --json
 * show`): the options of argv[1 ..] up to the first argument that is not
 * an option (or just past "--"), against spec->options and then the same
 * global options table cmd_parse() uses, so that every global option is
 * accepted in either place. *next is the index of that argument (argc when
 * none). Returns 0, 1 (--help printed) or -1 (usage error printed).
 */
int cmd_parse_leading(const cmd_spec *spec, int argc, char **argv, int *next);

/* Print the help text of a command (from its spec) to f. */
void cmd_print_help(const cmd_spec *spec, FILE *f);

/* "hml: error: <formatted>\n" on stderr. */
void cmd_error(const char *fmt, ...) HML__PRINTF(1, 2);
/* "hml: warning: ..." (always printed). */
void cmd_warn(const char *fmt, ...) HML__PRINTF(1, 2);
/* "hml: ..." informational line on stderr, silenced by -q. */
void cmd_info(const char *fmt, ...) HML__PRINTF(1, 2);

/* Map an HML_E* code to an exit code: EINVALID, ESYNTAX, ESHAPE,
 * ENOTFOUND, ERANGE, ENOTSUPPORTED -> 3; others -> 1. */
int cmd_exit_code(int err);

/* Print hml_error_last()'s message as an error and return cmd_exit_code(err). */
int cmd_fail(int err);

/* Emit `doc` (stolen) as the command's JSON result on stdout, with
 * "schema_version": 1 added first, indented, followed by a newline. */
void cmd_json_print(json_t *doc);

/* Print `w` to stdout as a POSIX shell reads it back: single-quoted (a
 * quote as '\''), or bare when `quote` is 0 and it is a non-empty word of
 * letters, digits and _-+=:,./ only. */
void cmd_print_shell_word(const char *w, int quote);

/* Flush stdout; HML_EXIT_FAILURE with a message if writing failed
 * (closed pipe, full disk), else `code`. Every command returns through it. */
int cmd_finish(int code);

/*
 * For a process that trains: glibc's malloc serves every block from the
 * heap and keeps up to 1 GiB of freed heap, instead of a fresh mmap for
 * each large block (anything of 32 MiB or more always is) returned to the
 * kernel when freed. libtorch allocates and frees each step's batch and
 * activations (a batch of 256 videos of 10 x 128 x 128 floats is 168 MB),
 * and with mmap every step paid the kernel's page faults and zeroing: on
 * Rodinia's particle filter 85 s of system time for 49 s of user time, and
 * 2.6x fewer samples a second than with the heap kept. Costs resident
 * memory (the largest step's, kept). Not done when GLIBC_TUNABLES is set:
 * the user's malloc settings stand.
 */
void cmd_keep_heap(void);

/* A progress bar on stderr, drawn only when stderr is a terminal and not -q.
 * With `lines` and stderr not a terminal (a log file, a batch job's
 * output), a plain line instead every HML_PROGRESS_SECONDS (default 60; 0:
 * none): "hml: LABEL: DONE/TOTAL (P%), DETAIL, T elapsed, about T left".
 * NULL when nothing is drawn; NULL-safe everywhere. */
typedef struct cmd_progress cmd_progress;
cmd_progress *cmd_progress_start(const char *label, double total, int lines);

/* Read HML_PROGRESS_SECONDS once, before a command runs: 0, or -1 after a
 * one-line error (not a number of seconds >= 0). */
int cmd_progress_setup(void);
void cmd_progress_update(cmd_progress *p, double done, const char *detail);
void cmd_progress_end(cmd_progress *p);

/* HML_THREADS, the default of --threads (hml(1)): *out unchanged when it
 * is unset or empty; -1 after a usage error naming the variable and `cmd`. */
int cmd_env_threads(const char *cmd, int64_t *out);

/* --- reading and writing experiment records (cmd/experiment.c; the
 * checked reads of record files are lib/store/checked.h) ----------- */

struct hml__store;
struct hml__workflow;

/* A shape as a JSON array of integers. New. */
json_t *cmd_json_shape(const int64_t *shape, int ndim);

/* The environment variables that run `label` of workflow `w` with the
 * model at `path` (lib/run/childenv.h hml__childenv_model(), as hml
 * evaluate runs it): HML_MODE_<LABEL>=infer and HML_MODEL_<LABEL>=<path>
 * (interleave > 0: HML_MODE_<LABEL>=interleave,
 * HML_INTERLEAVE_<LABEL>=<interleave>), HML_CONSERVE_<LABEL> when the
 * region declares "conserve" (hml-workflow(5)), and, when `watch`
 * is not NULL, HML_DEPLOYMENT_<LABEL>=<watch> (the deployment file a
 * running application watches for a newer model: lib/core/deployfile.h),
 * named by lib/core/envname.h as the runtime reads them. New object; NULL
 * when the label is too long for a variable name (an hml error is set). */
json_t *cmd_deploy_env(const struct hml__workflow *w, const char *label, const char *path,
                       int interleave, const char *watch);

/* cmd/deploy_run.c: how a deployed model runs. *run from the card (its
 * iterative k and interleave), *interleave the runtime's ratio its
 * environment sets (0: infer, or the application's own interleave
 * argument). 0 or an hml error. */
struct hml__model_run;
struct hml__model_view;
int cmd_deploy_model_run(struct hml__model_run *run, int *interleave,
                         const struct hml__workflow *w, const struct hml__model_view *m);
/* Tell the user the application's arguments the model must run with. */
void cmd_deploy_print_run(const char *pid, const char *id, const struct hml__workflow *w,
                          const struct hml__model_run *run);
/* Warn when the region's previous deployment runs at another k (a running
 * application's hot swap refuses the model) or another interleave that is
 * the application's argument (it keeps its own); say it when a swap adopts
 * another interleave of the runtime's. */
void cmd_deploy_warn_swap(const struct hml__store *s, const char *label, const char *id,
                          const struct hml__model_run *run, const struct hml__workflow *w);
/* Write region `label`'s deployment file (lib/core/deployfile.h), which a
 * running application watches (HML_DEPLOYMENT_<LABEL>) and swaps models by
 * (hml-runtime(3)): deployment pid of `model` at `path` (absolute), its
 * guard file `gpath` (NULL: none), the run's k and the runtime's
 * interleave. 0 or an hml error. */
int cmd_deploy_write_file(const struct hml__store *s, const char *pid, const char *label,
                          const char *model, const char *path, const char *gpath,
                          const struct hml__model_run *run, const struct hml__workflow *w);

/* Warn about every entry of the workflow's env that hml sets itself for
 * each run and so ignores (lib/run/childenv.h). */
void cmd_workflow_env_check(const struct hml__workflow *w);

/*
 * hml deploy --target c (cmd/deploy_c.c): compile the TorchScript model at
 * `pt_path` of record `model` to C, build it with `cc` from PATH (flags
 * -std=c11 -O3 -ffp-contract=fast -fno-trapping-math -fPIC -shared -fvisibility=hidden -fopenmp
 * [-march=ARCH], and OpenBLAS for the sgemm path when configured: lib/deploy/cbuild.h),
 * check it against the TorchScript model, and register a "compiled" record
 * whose id goes to cid. HML_ERROR when there is no cc or it fails,
 * HML_ENOTSUPPORTED for a model that cannot be compiled, HML_ESHAPE when
 * the model's shapes are not its record's; nothing registered then.
 */
/*
 * hml deploy --guard (cmd/deploy_guard.c): write the guard file of `spec`
 * for the model record `model` (its card's "guard" statistics), beneath
 * the experiment; *path_out (absolute, yours) is what HML_GUARD_<LABEL>
 * names, *rec_out (new) the deployment's "guard" field {spec, file,
 * threshold}. HML_ENOTSUPPORTED for a model without statistics or without
 * those the kind needs (ensemble: trained without --ensemble); a member
 * file missing or changed (hml__checked_file's errors) or not compiled;
 * HML_EIO when the file cannot be written.
 */
struct hml__guard_spec;
/* The form a model is deployed in, for an ensemble guard's members:
 * `path` the deployed file (absolute), `cid` its compiled id under
 * --target c (NULL or "": TorchScript), `march` the compiler's --march. */
typedef struct cmd_deploy_form {
	const char *path, *cid, *march;
} cmd_deploy_form;
int cmd_deploy_guard(struct hml__store *s, const json_t *model,
                     const struct hml__guard_spec *spec, const cmd_deploy_form *form,
                     char **path_out, json_t **rec_out);

int cmd_deploy_compile(struct hml__store *s, const json_t *model, const char *pt_path,
                       const char *march, char *cid, size_t cid_size);

/* --- running the workflow's application (cmd/app_run.c) -------------- */

/* The last 10 lines of the log at `path` on stderr under "hml: TITLE (last
 * lines):", indented (nothing with -q or for an empty log). */
void cmd_log_tail(const char *path, const char *title);
struct hml__run_config;

/*
 * Run the application (argv[0] the workflow's program) once in
 * configuration `config` (lib/run/childenv.h: the environment is built from
 * scratch over the caller's and the workflow's), stdout and stderr to
 * `log`, under its time limit (lib/run/limit.h: --run-timeout, else
 * HML_RUN_TIMEOUT, else 10 x `accurate_s` when > 0, the workflow's
 * accurate run's wall time). 0 when it exited with a status the workflow
 * declares success (success_exit_codes: 0 by default; *wall_s, may be
 * NULL: its wall time); HML_ERROR "interrupted" after SIGINT/SIGTERM/
 * SIGHUP; HML_EINVALID for a bad limit; HML_ERROR "accurate run of 'P'
 * failed: exit status 2" (or "surrogate", a signal, "timed out after its
 * limit of N s") after printing the log's last lines on stderr (unless
 * -q) and ending *bar (may be NULL) so that they are not drawn over.
 */
int cmd_app_run(const struct hml__workflow *w, char *const *argv,
                const struct hml__run_config *config, const char *log, double accurate_s,
                double *wall_s, cmd_progress **bar);

/* --run-timeout SECONDS (NAN: not given), the option row that sets it
 * (collect, evaluate, deploy, search), and how a run ended, in buf: "timed out after its
 * limit of N s (--run-timeout, HML_RUN_TIMEOUT)" for one that ran past
 * `limit`, else hml__proc_describe()'s "exit 3", "killed by SIGSEGV". */
extern double cmd_run_timeout;
struct hml__proc_result;
#define CMD_RUN_TIMEOUT_OPTION { "run-timeout", 0, CMD_OPT_DOUBLE, &cmd_run_timeout, \
	"SECONDS", "time limit of each application run (0: none; default: HML_RUN_TIMEOUT, " \
	"else 10 x the accurate or collected runs' time, plus 60 s)" }
const char *cmd_run_status(char *buf, size_t size, const struct hml__proc_result *res,
                           double limit);

/* --- hml evaluate's quantities of interest (cmd/evaluate_qoi.c) ------ */
struct hml__qoi_result;

/*
 * Compare the QoI files of the accurate (a0) and surrogate (s0) warm-up
 * runs, every data set of `w` (lib/store/qoi_compare.h), warning of
 * non-finite values and of each data set over its max_error; runs of
 * `ranks` > 1 MPI ranks: the ranks' files as one. *out (an
 * array of w->nqoi, yours: free()) on success. Errors: hml__qoi_ref_load()'s
 * and hml__qoi_compare()'s.
 */
int cmd_evaluate_qoi_read(struct hml__qoi_result **out, const struct hml__workflow *w,
                          const char *a0, const char *s0, int ranks);

/* The latency of model `id` in `target` ("torchscript", "c") for hml
 * evaluate (cmd/evaluate_latency.c): the card's; when the card has no
 * figure for it (a model registered before cards had one, a C form that
 * could not be measured then), measured now on rows of its first data set
 * at the region's batch, so that an evaluation never silently lacks the
 * deployed form's latency. Returns "card", "measured", or NULL (none,
 * with a warning); the figures in *lat. */
struct hml__latency;
const char *cmd_evaluate_latency(struct hml__latency *lat, struct hml__store *s, const char *id,
                                 const struct hml__workflow *w, const char *label,
                                 const char *target);

/* The evaluation record's "qois", one line each on stdout ("quantity of
 * interest 'mass' (21 values): RMSE ..., max abs error ...  [metric: rmse,
 * max_error 0.1: FAILED]"). */
void cmd_evaluate_qoi_print(const json_t *evaluation);

/* --- hml evaluate of an iterative application (cmd/evaluate_iterative.c) */

/*
 * Model run `r` (lib/store/model_run.h: --k and --interleave, else the
 * deployment's, else the model card's) applied to workflow `w`'s run:
 * *argv (the application's, replaced) with the k argument (and the
 * interleave argument when the workflow declares one) set; *interleave
 * the runtime's interleave ratio for the surrogate runs (0: infer);
 * *sched the k and interleave the surrogate runs have (lib/store/cost.h:
 * for the predicted speedup; k NaN when not set). Errors: those of
 * hml__model_run_apply().
 */
struct hml__schedule;
struct hml__model_run;
int cmd_evaluate_search_args(char ***argv, int *interleave, struct hml__schedule *sched,
                             const struct hml__workflow *w, const struct hml__model_run *r);

/*
 * The error over time (lib/store/qoi_series.h) of the QoIs the accurate
 * warm-up run (a0) recorded over time, against the surrogate's (s0):
 * *over_time the evaluation's "over_time" (new reference; NULL when no
 * QoI was recorded over time), and, when gnuplot is installed, its plot
 * drawn in `work` (beneath experiment `root`): *png its path (yours),
 * else NULL after a note on stderr. Errors: hml__qoi_over_time()'s; a
 * plot that fails is a warning, not an error.
 */
int cmd_evaluate_over_time(json_t **over_time, char **png, const struct hml__workflow *w,
                           const char *a0, const char *s0, const char *root,
                           const char *work, const char *title);

/* The evaluation's "over_time" as a table on stdout: per QoI, one row per
 * recorded step (step, error in its metric, RMSE, max abs, relative L2). */
void cmd_evaluate_over_time_print(const json_t *evaluation);

/* --- hml evaluate's guard report (cmd/evaluate_guard.c) ------------- */

/* The guard of deployment record `deployment` (hml deploy --guard):
 * *path the absolute guard file (yours; NULL without a guard), *spec its
 * spec (borrowed). HML_ENOTFOUND when the file is missing. */
int cmd_evaluate_guard_plan(const struct hml__store *s, const json_t *deployment, char **path,
                            const char **spec);

/* What a guard did over the measured surrogate runs (their profiles). */
typedef struct cmd_guard_counts {
	int64_t checked_rows, guarded_rows, guarded_calls, whole_calls;
	double seconds;            /* checking rows, all runs */
} cmd_guard_counts;

/* The evaluation's "guard" (hml-manifest(5)): `spec` (NULL: "none"), the
 * counts, the fraction guarded, seconds per run of `nrep`, and the
 * seconds over `region_s` (the surrogate runs' region time). New. */
json_t *cmd_evaluate_guard_json(const char *spec, const cmd_guard_counts *c, int nrep,
                                double region_s);

/* The record's guard on one line of stdout; nothing without a guard. */
void cmd_evaluate_guard_print(const json_t *evaluation);

/* --- the QoI check (cmd/qoi_check.c) --------------------------------- */
typedef struct cmd_qoi_check cmd_qoi_check;

/*
 * Open a QoI check for the region and workflow of model `model`: the
 * check run's argv (collect's arguments on a seed no data set used, not
 * evaluate's), and the accurate run, whose QoI is the reference. *out is
 * yours: cmd_qoi_check_free(). Errors: those of the model's checks
 * (hml__checked_model, _workflow), HML_ERROR when the accurate run fails
 * or is interrupted, the QoI file's.
 */
int cmd_qoi_check_open(cmd_qoi_check **out, struct hml__store *s, const char *model);

/*
 * Run the application with model `model` (its TorchScript form; `target`
 * is only recorded) and compare every QoI data set of the workflow with
 * the accurate run's; *err gets the primary's error in its metric: NaN
 * when the run failed or compared nothing, which is recorded (and warned)
 * and is no error. *within: 1 when that error is within `max` (NaN: no
 * bound) and every data set within its max_error, 0 otherwise or after a
 * failed run. The line and the record ({model, target, error, qois[,
 * within]}, within with any bound) say so. Errors: interruption, HML_ENOMEM.
 */
int cmd_qoi_check_model(cmd_qoi_check *q, const char *model, const char *target, double max,
                        double *err, int *within);

/* The last check's first data set over its max_error (valid until the
 * next check), or NULL: none, or its run failed. */
const struct hml__qoi_result *cmd_qoi_check_failed(const cmd_qoi_check *q);

/* {dataset, metric, argv, seed, form, checks} (new), or NULL (out of memory);
 * dataset and metric: the primary's. */
json_t *cmd_qoi_check_report(const cmd_qoi_check *q);
const char *cmd_qoi_check_metric(const cmd_qoi_check *q);
const char *cmd_qoi_check_dataset(const cmd_qoi_check *q);
int64_t cmd_qoi_check_seed(const cmd_qoi_check *q);
void cmd_qoi_check_free(cmd_qoi_check *q);

/* --- hml search-worker's runs of an iterative application (cmd/search_run.c) */
typedef struct cmd_search_run cmd_search_run;
struct hml__dataset;

/*
 * Open the runs of init message's "run" (lib/search/wire.h) for region
 * `region`: the workflow, a directory for the runs' files, and the data
 * set of each k (loaded with `nonfinite`, an hml__nonfinite); *rows: all
 * their rows. *out yours: cmd_search_run_free(). Errors: the workflow's,
 * the data's, HML_EIO for the directory, HML_ENOMEM.
 */
int cmd_search_run_open(cmd_search_run **out, const json_t *run, const char *region,
                        int nonfinite, long long *rows);

/* The data set collected at k (-1: k not searched), or NULL (HML_EINVALID
 * "no data set was collected with k 7"). Borrowed from r. */
const struct hml__dataset *cmd_search_run_data(cmd_search_run *r, long long k);

/*
 * Run the application with `model` at k and interleave (-1: not searched),
 * after its accurate run at k (once per k), and compare their QoIs: *err
 * the primary QoI's error in its metric. Errors: a failed or interrupted
 * run, a QoI the runs did not write or whose shapes differ, an accurate
 * run with NaN or Inf.
 */
int cmd_search_run_qoi(cmd_search_run *r, const char *model, long long k, long long interleave,
                       long trial, double *err);

void cmd_search_run_free(cmd_search_run *r);

/*
 * hml search --qoi-check K (cmd/search_qoi.c): check the K most accurate
 * registered models of search `id`'s front on the application and record
 * their QoI errors (hml__records_set_qoi_check). A front without a
 * registered model is a warning. Errors: those of cmd_qoi_check_open()
 * and of the record's update.
 */
int cmd_search_qoi_check(struct hml__store *s, const char *id, int64_t k);

/* Search record `rec`'s QoI check (nothing without one) on stdout, one line
 * per data set, the primary first: "QoI check (seed 5): mass rmse: m3 0.012,
 * m4 failed". */
void cmd_search_qoi_print(const json_t *rec);

struct hml__search_plan;
struct hml__coordinator;

/* hml search's report at its end on stdout (cmd/search_report.c): counts,
 * the Pareto front with each model's predicted speedup, the region's cost
 * and ceiling, the QoI check; --json: the search's record. */
void cmd_search_report(const struct hml__search_plan *p, struct hml__store *s,
                       struct hml__coordinator *c);

/* The search's top-rung trials that ended with a result: none leaves its
 * front empty for want of a model, not because no model pays. */
size_t cmd_search_top_rung_ok(const struct hml__search_plan *p, struct hml__coordinator *c);

/* The most any model can speed up runs like the search's collected ones
 * (hml__speedup_ceiling), the region's share of their time in *share;
 * NaN where the data record no cost. */
double cmd_search_ceiling(const struct hml__search_plan *p, struct hml__store *s,
                          double *share);

/*
 * The workflow's own verification (verify.pattern) of a configuration's
 * runs, as recorded with an evaluation (hml-manifest(5)): {pattern,
 * accurate: {passed, runs, failed_runs}, surrogate: {...}} of `runs` runs
 * each, of which acc_failed and sur_failed failed it. A warning says which
 * failed. New object.
 */
json_t *cmd_app_verification(const struct hml__workflow *w, int runs, int acc_failed,
                             int sur_failed);

/* The record's verification as one line on stdout ("verification:    accurate
 * passed, surrogate FAILED (3 of 3 runs)  [pattern: P]"); nothing without one. */
void cmd_app_verification_print(const json_t *evaluation);

/*
 * Warn, in one line, when an evaluation runs the inputs its data was
 * collected on (lib/run/workflow.h hml__workflow_same_inputs(): collect
 * arguments `collect_args` without {seed}, equal to `evaluate_args`; each
 * NULL: the workflow's), or when `argv` (the whole command line; NULL: the
 * workflow's evaluate command line) is one a data set of `s` (may be NULL)
 * was collected with.
 */
void cmd_app_same_inputs_warn(const struct hml__workflow *w, char *const *collect_args,
                              char *const *evaluate_args, const struct hml__store *s,
                              char *const *argv);

/*
 * hml deploy --max-qoi-error E (cmd/deploy_qoi.c): among candidates
 * c[0 .. n) within bounds b, the fastest whose error of the workflow's
 * primary quantity of interest, on a check run of the application, is
 * within E and every data set's within its max_error (hml-workflow(5)):
 * its index into *pick, and into *report (new) the record of the checks
 * (hml-manifest(5), deployments[].qoi_check). HML_ENOTFOUND when even the
 * most accurate candidate misses E or a max_error (the message names the
 * data set, its error, metric and bound),
 * HML_EINVALID when the candidates replace several regions, HML_ERROR when the accurate run fails or is
 * interrupted. A model whose run fails is recorded as failed, not chosen.
 */
struct hml__candidate;
struct hml__select_bounds;
int cmd_deploy_by_qoi(struct hml__store *s, const struct hml__candidate *c, size_t n,
                      const struct hml__select_bounds *b, double max_qoi, size_t *pick,
                      json_t **report);

/* --- the latency part of model cards (cmd/latency.c) ---------------- */
struct hml__dataset;

/* Measure the model file `pt_path` in each target (lib/deploy/latency.h) on rows
 * of `d` at `batch` rows per call: the card's "latency" object (new), or
 * NULL after a warning when it could not be measured. */
/**
 * Load the untrusted TorchScript file `path` first in a child process of
 * hml under memory and time limits (lib/deploy/vet.h); 0 when it loaded.
 * Every command that reads a model in its own process calls it first.
 */
int cmd_model_vet(const char *path);

json_t *cmd_latency_card(const char *pt_path, const struct hml__dataset *d, int64_t batch,
                         int threads);

/* One line (two when a target is unavailable) on stdout: the card's
 * latencies, each line starting with `indent`. */
void cmd_latency_print(const json_t *model_record, const char *indent);

/* Draw the plots of search `id` and register them (lib/search/plot.h;
 * cmd/show_search.c), the ending of `hml search`: a failure (no gnuplot, ...) is a warning
 * saying that the search itself succeeded, and is returned. */
int cmd_show_plots(struct hml__store *s, const char *id);

/* The loop of a search worker (cmd/search_worker.c): init, then trials,
 * on descriptors in and out (lib/search/wire.h), until in ends (0) or an
 * error; hml search-worker runs it on its standard input and output, a
 * worker rank of hml search under MPI on the relay's pipes. */
int search_worker_loop(int in, int out);

/* hml search's progress on stderr (cmd/search_progress.c): on a terminal
 * the bar, otherwise a plain line each time a configuration's first trial
 * or a top-rung trial ends ("hml: search s1: 12/60 configurations, 34
 * trials, best val_rmse 0.0123, 2m10s elapsed, about 8m left"; the error in
 * the search's metric); nothing with
 * -q. _update with NULL: the run ended, nothing more is drawn. NULL-safe;
 * _end frees. */
typedef struct search_progress search_progress;
struct hml__coordinator_progress;
search_progress *search_progress_start(const char *id, long long budget, const char *metric);
void search_progress_update(search_progress *sp, const struct hml__coordinator_progress *p);
void search_progress_end(search_progress *sp);

/* Subcommands. */
int cmd_collect(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_deploy(int argc, char **argv);
int cmd_evaluate(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_search_worker(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_cc(int argc, char **argv);
/* hml model-check (hidden; cmd/model_check.c). */
int cmd_model_check(int argc, char **argv);

#endif
