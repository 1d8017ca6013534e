/*
 * hml search - Bayesian optimisation of a region's surrogate over
 * architectures and training hyper-parameters, with ASHA promotions,
 * persistent worker processes, a trial history that survives kill -9, and
 * the Pareto front of validation error against inference latency.
 *
 * This file: options, the MPI launch, messages, the results and exit
 * codes. What a new or resumed search searches (data, space, resume
 * checks) is lib/search/plan.h; the coordinator that runs it, keeps its
 * models and writes its record is lib/search/coordinator.h, on the worker
 * pool of lib/search/pool.h; the history and the "searches" record are
 * lib/search/history.h.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/rankfile.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "deploy/metrics.h"
#include "search/coordinator.h"
#include "search/duration.h"
#include "search/history.h"
#include "search/iterative.h"
#include "search/plan.h"
#include "search/pool.h"
#ifdef HML_WITH_MPI
#include "search/mpi_relay.h"
#endif
#include "store/cost.h"
#include "store/store.h"

#define UNSET HML__SEARCH_UNSET
static int64_t budget = UNSET, workers = UNSET, seed = UNSET, max_epochs = UNSET,
	threads = UNSET, qoi_check;
static double max_latency = NAN, max_params = NAN, max_error = NAN, trial_timeout = NAN;
static const char *space_path, *region, *keep_models, *target, *fidelity, *seed_search;
static int resume, deterministic;
static const char *train_args;   /* --train-args POINT */
static const char *time_limit_arg;   /* --time-limit DURATION, in seconds: */
static double time_limit;

static const cmd_option options[] = {
	{ "budget", 'n', CMD_OPT_INT, &budget, "N",
	  "configurations to try (default 50; see hml-search(1) for what a configuration costs)" },
	{ "workers", 'w', CMD_OPT_INT, &workers, "N", "trials at once, one process each (default 1)" },
	{ "threads", 'j', CMD_OPT_INT, &threads, "N",
	  "libtorch threads per worker (default: cores / workers, at least 1)" },
	{ "seed", 's', CMD_OPT_INT, &seed, "S", "seed of the optimiser (default 1)" },
	{ "space", 0, CMD_OPT_STRING, &space_path, "FILE",
	  "search space (default: the region's model.search_space, else the family's)" },
	{ "region", 'r', CMD_OPT_STRING, &region, "R",
	  "region to search (default: the only region of the data sets)" },
	{ "max-epochs", 'e', CMD_OPT_INT, &max_epochs, "N",
	  "epochs of a full-fidelity trial (default: the region's model.train.epochs, else 100)" },
	{ "max-latency", 0, CMD_OPT_DOUBLE, &max_latency, "S",
	  "constraint: inference seconds per sample at the region's batch" },
	{ "max-params", 0, CMD_OPT_DOUBLE, &max_params, "N", "constraint: trainable parameters" },
	{ "max-error", 0, CMD_OPT_DOUBLE, &max_error, "E",
	  "constraint: validation error in the region's metric (RMSE, or MAPE in per cent)" },
	{ "trial-timeout", 0, CMD_OPT_DOUBLE, &trial_timeout, "S",
	  "a trial running longer is killed and recorded as timed out (default: none)" },
	{ "time-limit", 0, CMD_OPT_STRING, &time_limit_arg, "DURATION",
	  "start no trial that would not end within DURATION (90, 90s, 45m, 1.5h), stop the "
	  "rest then, and leave a resumable search and its front" },
	{ "deterministic", 0, CMD_OPT_FLAG, &deterministic, NULL,
	  "choose trials in lockstep with their results, in trial order: the same seed and "
	  "--workers give the same trials (workers may wait)" },
	{ "resume", 0, CMD_OPT_FLAG, &resume, NULL,
	  "continue search ID (the argument; default: the newest) to its budget" },
	{ "target", 0, CMD_OPT_STRING, &target, "c|torchscript|auto",
	  "deployment form whose latency is the objective (default auto: c when a C compiler "
	  "is found and the family compiles to C)" },
	{ "fidelity", 0, CMD_OPT_STRING, &fidelity, "epochs|rows|both",
	  "what lower rungs train less of (default epochs; see hml-search(1))" },
	{ "from", 0, CMD_OPT_STRING, &seed_search, "ID",
	  "seed the search with the front of search ID: its configurations are tried first" },
	{ "keep-models", 0, CMD_OPT_STRING, &keep_models, "all|front",
	  "register the models of the front (default) or of every trial" },
	{ "qoi-check", 0, CMD_OPT_INT, &qoi_check, "K",
	  "run the application with the front's K most accurate models and record their "
	  "errors of its quantity of interest (default 0: none)" },
	{ "train-args", 0, CMD_OPT_STRING, &train_args, "POINT",
	  "print the hml train arguments of search-space point POINT (JSON) and exit" },
	CMD_RUN_TIMEOUT_OPTION,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

/* A value outside these is a usage error (cmd_range) */
static const cmd_range ranges[] = {
	{ "budget", 1, 1000000, 0 }, { "workers", 1, 64, 0 }, { "threads", 1, 1024, 0 },
	{ "seed", 0, INFINITY, 0 }, { "max-epochs", 1, 1000000, 0 },
	{ "max-latency", 0, INFINITY, 1 }, { "max-params", 0, INFINITY, 1 },
	{ "max-error", 0, INFINITY, 1 }, { "trial-timeout", 0, INFINITY, 1 },
	{ "qoi-check", 0, 1000, 0 }, { "run-timeout", 0, INFINITY, 0 }, { NULL, 0, 0, 0 }
};

static const cmd_spec spec = {
	"search", "[options] [--resume [ID]]",
	"search architectures and hyper-parameters (BO + ASHA, Pareto front)",
	"Trains up to N candidate surrogates of region R, each proposed by Bayesian\n"
	"optimisation (Gaussian processes, ParEGO over validation error and\n"
	"inference latency, constraints as outcome constraints) and trained first\n"
	"on a fraction of its epochs; asynchronous successive halving promotes the\n"
	"best to more epochs. Trials run in persistent worker processes; each is\n"
	"appended to search/<id>/trials.jsonl as it starts and ends, so a search\n"
	"stopped by a signal or kill -9 continues with --resume. Prints the Pareto\n"
	"front of the full-fidelity trials, whose models are registered.",
	options, 0, 1, ranges
};

/* Everything one run holds, released in one place. */
typedef struct search_cli {
	hml__search_request rq;
	hml__store *s;
	int lock_fd;
	hml__search_plan plan;
	hml__pool *pool;
	hml__coordinator *c;
	search_progress *progress;
	double started;              /* hml__now() when the command started */
	int replayed;                /* the history passed its checks: the record may change */
} search_cli;

static void release(search_cli *x)
{
	hml__coordinator_free(x->c);   /* (before the pool it stops workers of) */
	hml__pool_free(x->pool);
	hml__search_plan_release(&x->plan);
	hml__search_unlock(x->lock_fd);
	hml__store_free(x->s);
	search_progress_end(x->progress);
}

/* ---- the command line --------------------------------------------------- */

static int check_cli(int npos)
{
	if (time_limit_arg && hml__search_duration_parse(&time_limit, time_limit_arg) < 0) {
		cmd_error("search: --time-limit: %s", hml_error_last()->message);
		return HML_EXIT_USAGE;
	}
	if (keep_models && strcmp(keep_models, "all") && strcmp(keep_models, "front")) {
		cmd_error("search: --keep-models must be 'all' or 'front', not '%s'", keep_models);
		return HML_EXIT_USAGE;
	}
	if (target && strcmp(target, "auto") && hml__target_parse(target) < 0) {
		cmd_error("search: --target must be 'c', 'torchscript' or 'auto', not '%s'", target);
		return HML_EXIT_USAGE;
	}
	if (fidelity && hml__fidelity_parse(fidelity) < 0) {
		cmd_error("search: --fidelity must be 'epochs', 'rows' or 'both', not '%s'", fidelity);
		return HML_EXIT_USAGE;
	}
	if (seed_search && resume) {
		cmd_error("search: --from seeds a new search; a resumed one keeps its seeds");
		return HML_EXIT_USAGE;
	}
	if (npos && !resume) {
		cmd_error("search: unexpected argument (a search id goes with --resume)");
		return HML_EXIT_USAGE;
	}
	return 0;
}

/* ---- messages ----------------------------------------------------------- */

static void on_info(void *payload, const char *message)
{
	cmd_info("%s", message);
}

static void on_warn(void *payload, const char *message)
{
	cmd_warn("%s", message);
}

/* The progress bar or lines (cmd/search_progress.c). */
static void on_progress(void *payload, const hml__coordinator_progress *p)
{
	search_progress_update(((search_cli *)payload)->progress, p);
}

/* The latency per target of a front model's card, as hml train measures
 * it (cmd/latency.c). */
static json_t *on_card(void *payload, const char *model_path, const hml__dataset *d,
                       int64_t batch, int nthreads)
{
	return cmd_latency_card(model_path, d, batch, nthreads);
}

/* The request of the command line (lib/search/plan.h). */
static void make_request(hml__search_request *rq)
{
	*rq = (hml__search_request)HML__SEARCH_REQUEST_INIT;
	rq->region = region;
	rq->space_path = space_path;
	rq->target = target;
	rq->keep_models = keep_models;
	rq->fidelity = fidelity;
	rq->from = seed_search;
	rq->budget = budget;
	rq->workers = workers;
	rq->seed = seed;
	rq->max_epochs = max_epochs;
	rq->threads = threads;
	rq->max_latency = max_latency;
	rq->max_params = max_params;
	rq->max_error = max_error;
	rq->trial_timeout = trial_timeout;
	rq->deterministic = deterministic;
	rq->info = on_info;
	rq->warn = on_warn;
}

/* ---- --train-args ------------------------------------------------------- */

/* The hml train arguments of one point, as a new search's trial trains it
 * at full fidelity (lib/search/plan.h): the peers of bench/search.sh train
 * exactly what hml search would. Nothing is written. */
static int print_train_args(search_cli *x, const json_t *point)
{
	json_t *argv, *w;
	size_t i;
	int rc;

	if ((rc = hml__store_open(&x->s, g_cmd.dir, 0)) < 0 ||
	    (rc = hml__search_plan_train_args(&argv, x->s, &x->rq, point)) < 0)
		return rc;
	if (g_cmd.json) {
		cmd_json_print(json_pack("{s:o, s:O}", "train_args", argv, "point", point));
		return 0;
	}
	fputs("hml", stdout);
	json_array_foreach(argv, i, w) {
		putchar(' ');
		cmd_print_shell_word(json_string_value(w), 0);
	}
	putchar('\n');
	json_decref(argv);
	return 0;
}

static int train_args_main(search_cli *x)
{
	json_error_t je;
	json_t *point = json_loads(train_args, JSON_REJECT_DUPLICATES, &je);
	int rc;

	if (resume) {
		cmd_error("search: --train-args maps a point of a new search; it does not go "
		          "with --resume");
		json_decref(point);
		return HML_EXIT_USAGE;
	}
	if (!json_is_object(point)) {
		cmd_error("search: --train-args takes a JSON object of search-space parameters "
		          "(%s)", point ? "not an object" : je.text);
		json_decref(point);
		return HML_EXIT_USAGE;
	}
	rc = print_train_args(x, point);
	json_decref(point);
	release(x);
	return cmd_finish(rc < 0 ? cmd_fail(rc) : HML_EXIT_OK);
}

/* ---- MPI ---------------------------------------------------------------- */

/* Ranks started by an MPI launcher, from its environment by the library's
 * one rule (core/rankfile.h): the size, 0 without a launcher or when it
 * gives none; HML_EINVALID for a variable that is not a number. */
static int launched_size(int *size)
{
	int rank, rc = hml__rank_from_env(&rank, size);

	return rc < 0 ? rc : 0;
}

#ifdef HML_WITH_MPI
/* Ranks 1 .. N-1: a worker behind the relay, until rank 0 ends its input. */
static int search_rank(int rank, int size)
{
	int in = -1, out = -1, rc;

	signal(SIGINT, SIG_IGN);
	if ((rc = hml__mpi_relay_start(rank, size, NULL, NULL, &in, &out)) == 0)
		rc = search_worker_loop(in, out);
	if (out >= 0)
		close(out);
	if (in >= 0)
		close(in);
	hml__mpi_finish();
	if (rc < 0)
		cmd_error("search (rank %d): %s", rank, hml_error_last()->message);
	return rc < 0 ? cmd_exit_code(rc) : HML_EXIT_OK;
}

/* Rank 0: the workers are the other ranks, the pool over their pipes.
 * 1: this rank was a worker, or MPI failed, and *code is the exit code. */
static int mpi_setup(search_cli *x, int *code)
{
	int rank, size, rc, *to, *from;

	if ((rc = hml__mpi_init(&rank, &size)) < 0) {
		*code = cmd_fail(rc);
		return 1;
	}
	if (rank > 0) {
		*code = search_rank(rank, size);
		return 1;
	}
	if (size < 2) {
		hml__mpi_finish();
		*code = cmd_fail(hml__error_set(HML_EINVALID, "hml search under MPI needs at least 2 "
		                                "ranks (rank 0 coordinates)"));
		return 1;
	}
	if (workers != UNSET && workers != size - 1)
		cmd_warn("--workers %lld ignored: the %d ranks but rank 0 are the workers",
		         (long long)workers, size - 1);
	x->rq.ranks = size - 1;
	to = malloc((size_t)(size - 1) * sizeof(int));
	from = malloc((size_t)(size - 1) * sizeof(int));
	if (!to || !from || hml__mpi_relay_start(0, size, to, from, NULL, NULL) < 0) {
		*code = cmd_fail(to && from ? HML_EIO : hml__error_oom());
		return 1;   /* (the ranks wait for input that never comes: mpirun ends them) */
	}
	if ((rc = hml__pool_new_ranks(&x->pool, size - 1, to, from)) < 0) {
		*code = cmd_fail(rc);
		return 1;
	}
	return 0;
}
#endif

/* Under an MPI launcher, the ranks (or an error: built without MPI). 1:
 * the command ends with *code. */
static int mpi_start(search_cli *x, int *code)
{
	int n, rc;

	if ((rc = launched_size(&n)) < 0) {
		*code = cmd_fail(rc);
		return 1;
	}
	/* One rank has no other to train on: a plain search, said (hml-search(1)). */
	if (n == 1)
		cmd_info("search: started as a single MPI rank: its workers are local processes "
		         "(transport: processes); start 2 or more ranks to train on the others");
	if (n <= 1)
		return 0;
#ifdef HML_WITH_MPI
	return mpi_setup(x, code);
#else
	cmd_error("search: started by an MPI launcher, but hml was built without MPI "
	          "(-DHML_WITH_MPI=ON)");
	*code = HML_EXIT_INVALID;
	return 1;
#endif
}

/* The pool's pipes closed, the relay joined. */
static void mpi_end(search_cli *x)
{
#ifdef HML_WITH_MPI
	if (x->rq.ranks > 0)
		hml__mpi_finish();
#endif
}

/* ---- the search --------------------------------------------------------- */

/* Open, lock, and start or resume the search; its workers, its
 * coordinator, the history replayed. */
static int prepare(search_cli *x, const char *resume_id)
{
	hml__coordinator_options co = HML__COORDINATOR_OPTIONS_INIT;
	char exe[4096];
	ssize_t n;
	int rc;

	if ((rc = hml__store_open(&x->s, g_cmd.dir, 0)) < 0 ||
	    (rc = hml__search_lock(x->s, &x->lock_fd)) < 0)
		return rc;
	rc = resume ? hml__search_plan_resume(&x->plan, x->s, &x->rq, resume_id)
	            : hml__search_plan_new(&x->plan, x->s, &x->rq);
	if (rc < 0)
		return rc;
	hml__search_lock_name(x->lock_fd, x->plan.id);   /* hml show: whose the lock is */
	if (!x->pool) {   /* worker processes of this hml */
		if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
			return hml__error_set(HML_EIO, "cannot find the hml executable for the workers");
		exe[n] = '\0';
		if ((rc = hml__pool_new(&x->pool, x->plan.nworkers, exe, x->plan.dir)) < 0)
			return rc;
	}
	co.plan = &x->plan;
	co.store = x->s;
	co.pool_ops = &hml__pool_workers;
	co.pool = x->pool;
	co.interrupted = &cmd_interrupted;
	co.progress = on_progress;
	co.warn = on_warn;
	co.card = on_card;
	co.payload = x;
	co.time_limit = time_limit;
	co.started = x->started;
	if ((rc = hml__coordinator_new(&x->c, &co)) < 0 || (rc = hml__coordinator_replay(x->c)) < 0)
		return rc;
	x->replayed = 1;
	return 0;
}

/* Run the prepared search to its end: 0 and the exit code in *code, or
 * an error. */
static int run(search_cli *x, int *code)
{
	const hml__search_plan *p = &x->plan;
	hml__coordinator_counts n;
	int rc, stopped;
	char limit[32], most[32];
	double ceiling, share;

	hml__search_duration_format(limit, sizeof(limit), time_limit);
	cmd_info("search %s: region '%s', budget %lld configurations, %d worker%s x %d thread%s, "
	         "%u rung%s up to %d epochs, %s latency%s%s", p->id, p->region, p->budget,
	         p->nworkers, p->nworkers == 1 ? "" : "s", p->threads, p->threads == 1 ? "" : "s",
	         p->rungs, p->rungs == 1 ? "" : "s", p->max_epochs, hml__target_name(p->target),
	         time_limit > 0 ? ", time limit " : "", time_limit > 0 ? limit : "");
	if (isfinite(ceiling = cmd_search_ceiling(p, x->s, &share))) {
		hml__format_speedup(most, sizeof(most), ceiling);
		cmd_info("search %s: the region took %.3g%% of the collected runs' time: no model "
		         "makes them more than %s faster end to end", p->id, 100.0 * share, most);
	}
	x->progress = search_progress_start(p->id, p->budget, p->iterative ? "qoi_error" :
	                                    p->base.metric);
	if ((rc = hml__coordinator_run(x->c)) < 0)
		return rc;
	hml__coordinator_counts_of(&n, x->c);
	if (rc == 1) {
		hml__coordinator_record(x->c, "interrupted");
		cmd_error("search '%s' interrupted after %zu trials; continue it with "
		          "'hml search --resume %s'", p->id, n.trials, p->id);
		*code = HML_EXIT_INTERRUPTED;
		return 0;
	}
	stopped = rc == 2;   /* at the time limit: resumable, its front kept */
	if ((rc = hml__coordinator_keep_models(x->c)) < 0 ||
	    (rc = hml__coordinator_record(x->c, stopped ? "stopped" : "finished")) < 0 ||
	    (!stopped && qoi_check > 0 && (rc = cmd_search_qoi_check(x->s, p->id, qoi_check)) < 0))
		return rc;
	if (!n.ok && !stopped)
		return hml__error_set(HML_ERROR, "no trial of search '%s' succeeded (see %s/%s)", p->id,
		                      p->dir, HML__HISTORY_FILE);
	/* Hook (wt-d, hml show --plot): draw the plots into search/<id>/ and
	 * register them; a failure (no gnuplot) is only a warning. */
	if (n.ok)
		cmd_show_plots(x->s, p->id);
	cmd_search_report(&x->plan, x->s, x->c);
	if (!stopped && cmd_search_top_rung_ok(&x->plan, x->c) == 0)
		return hml__error_set(HML_ERROR, "search '%s' has nothing on its front: none of its "
		                      "%zu configurations finished a top-rung (full-fidelity) trial, "
		                      "%zu trials failed or timed out (see %s/%s)", p->id, n.configs,
		                      n.failed, p->dir, HML__HISTORY_FILE);
	if (stopped)
		cmd_info("search %s stopped at the time limit (%s) after %zu configurations; resume "
		         "with: hml search --resume %s", p->id, limit, n.configs, p->id);
	*code = HML_EXIT_OK;
	return 0;
}

int cmd_search(int argc, char **argv)
{
	search_cli x;
	int first, rc, code = HML_EXIT_OK;

	memset(&x, 0, sizeof(x));
	x.lock_fd = -1;
	x.started = hml__now();
	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if ((rc = check_cli(argc - first)) != 0)
		return rc;
	make_request(&x.rq);
	if (train_args)
		return train_args_main(&x);
	if (mpi_start(&x, &code))
		return cmd_finish(code);
	if ((rc = prepare(&x, argc > first ? argv[first] : NULL)) < 0 ||
	    (resume && (rc = hml__coordinator_record(x.c, "running")) < 0) ||
	    (rc = run(&x, &code)) < 0) {
		code = cmd_fail(rc);
		/* A refused history leaves the record as it was. */
		if (x.c && x.replayed && rc != HML_ELOCKED)
			hml__coordinator_record(x.c, cmd_interrupted ? "interrupted" : "failed");
	}
	release(&x);
	mpi_end(&x);
	return cmd_finish(code);
}
