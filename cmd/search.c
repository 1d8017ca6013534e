/*
 * hml search - Bayesian optimisation of a region's surrogate over
 * architectures and training hyper-parameters, with ASHA promotions,
 * persistent worker processes, a trial history that survives kill -9, and
 * the Pareto front of validation error against inference latency.
 *
 * This file: options, the data and search space, starting or resuming a
 * search (refused when its space or data changed), the kept models and the
 * results. The coordinator itself is cmd/search_run.c; the history and the
 * "searches" record are lib/search/history.h.
 */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "store/checked.h"
#include "store/data_pick.h"
#include "sys/fsutil.h"
#include "train/arch.h"
#include "train/dataset.h"
#ifdef HML_WITH_MPI
#include "search/mpi_relay.h"
#endif
#include "core/util.h"
#include "search/trialmap.h"
#include "search_state.h"
#include "store/records.h"

#define UNSET INT64_MIN
static int64_t budget = UNSET, workers = UNSET, seed = UNSET, max_epochs = UNSET,
	threads = UNSET;
static double max_latency = NAN, max_params = NAN, max_error = NAN, trial_timeout = NAN;
static const char *space_path, *region, *keep_models, *target;
static int resume, deterministic;
static const char *train_args;   /* --train-args POINT */

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
	{ "max-error", 0, CMD_OPT_DOUBLE, &max_error, "E", "constraint: validation RMSE" },
	{ "trial-timeout", 0, CMD_OPT_DOUBLE, &trial_timeout, "S",
	  "a trial running longer is killed and recorded as timed out (default: none)" },
	{ "deterministic", 0, CMD_OPT_FLAG, &deterministic, NULL,
	  "choose trials in lockstep with their results, in trial order: the same seed and "
	  "--workers give the same trials (workers may wait)" },
	{ "resume", 0, CMD_OPT_FLAG, &resume, NULL,
	  "continue search ID (the argument; default: the newest) to its budget" },
	{ "target", 0, CMD_OPT_STRING, &target, "c|torchscript|auto",
	  "deployment form whose latency is the objective (default auto: c when a C compiler "
	  "is found and the family compiles to C)" },
	{ "keep-models", 0, CMD_OPT_STRING, &keep_models, "all|front",
	  "register the models of the front (default) or of every trial" },
	{ "train-args", 0, CMD_OPT_STRING, &train_args, "POINT",
	  "print the hml train arguments of search-space point POINT (JSON) and exit" },
	{ NULL, 0, 0, NULL, NULL, NULL }
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
	options, 0, 1
};

static void state_release(search_state *st)
{
	for (size_t i = 0; i < st->ncfg; i++)
		json_decref(st->cfg[i]);
	for (size_t i = 0; i < st->nds; i++)
		free(st->ds_paths[i]);
	free(st->ds_paths);
	free(st->ds_ids);
	if (st->card_data)
		hml__dataset_release(st->card_data);
	free(st->card_data);
	free(st->cfg);
	free(st->t);
	free(st->queue);
	free(st->pending);
	free(st->wk);
	free(st->dir);
	free(st->exe);
	json_decref(st->space_json);
	json_decref(st->space_source);
	hml__space_free(st->space);
	hml__sched_free(st->sched);
	hml__history_close(st->hist);
	hml__reaper_close(st->reaper);
	hml__workflow_free(st->w);
	hml__search_unlock(st->lock_fd);
	hml__latency_cache_release(&st->lat);
	hml__store_free(st->s);
}

/* ---- the command line --------------------------------------------------- */

static int usage(const char *fmt, const char *what, double v)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, what, v);
	cmd_error("search: %s", msg);
	return HML_EXIT_USAGE;
}

static int check_cli(int npos)
{
	if (budget != UNSET && budget < 1)
		return usage("%s must be at least 1, not %.0f", "--budget", (double)budget);
	if (workers != UNSET && (workers < 1 || workers > 64))
		return usage("%s must be 1 to 64, not %.0f", "--workers", (double)workers);
	if (threads != UNSET && (threads < 1 || threads > 1024))
		return usage("%s must be 1 to 1024, not %.0f", "--threads", (double)threads);
	if (seed != UNSET && seed < 0)
		return usage("%s must be 0 or more, not %.0f", "--seed", (double)seed);
	if (max_epochs != UNSET && (max_epochs < 1 || max_epochs > 1000000))
		return usage("%s must be 1 to 1000000, not %.0f", "--max-epochs", (double)max_epochs);
	if (!isnan(trial_timeout) && !(trial_timeout > 0))
		return usage("%s must be positive, not %g", "--trial-timeout", trial_timeout);
	if (!isnan(max_latency) && !(max_latency > 0 && isfinite(max_latency)))
		return usage("%s must be positive, not %g", "--max-latency", max_latency);
	if (!isnan(max_params) && !(max_params > 0 && isfinite(max_params)))
		return usage("%s must be positive, not %g", "--max-params", max_params);
	if (!isnan(max_error) && !(max_error > 0 && isfinite(max_error)))
		return usage("%s must be positive, not %g", "--max-error", max_error);
	if (keep_models && strcmp(keep_models, "all") && strcmp(keep_models, "front")) {
		cmd_error("search: --keep-models must be 'all' or 'front', not '%s'", keep_models);
		return HML_EXIT_USAGE;
	}
	if (target && strcmp(target, "auto") && hml__target_parse(target) < 0) {
		cmd_error("search: --target must be 'c', 'torchscript' or 'auto', not '%s'", target);
		return HML_EXIT_USAGE;
	}
	if (npos && !resume) {
		cmd_error("search: unexpected argument (a search id goes with --resume)");
		return HML_EXIT_USAGE;
	}
	return 0;
}

/* ---- data and workflow -------------------------------------------------- */

/* The region (given, else the only one with rows) and its data sets, as
 * hml train chooses them (lib/store/data_pick.h); their files, checked. */
static int pick_data(search_state *st)
{
	hml__data_query q = { st->label, NULL, NULL, 0, "search on" };
	hml__data_choice c;
	int rc;

	if ((rc = hml__data_pick(&c, st->s, &q)) < 0)
		return rc;
	st->label = c.region;
	st->wname = c.workflow;
	st->ds_ids = c.ids;   /* now st's */
	st->nds = c.n;
	return hml__checked_dataset_files(st->s, st->ds_ids, st->nds, &st->ds_paths);
}

static json_t *data_sha(const search_state *st)
{
	return hml__records_data_sha256(st->s, st->ds_ids, st->nds);
}

/* The workflow of the data (for the region's family, arch, training
 * defaults and batch); without it, hml's defaults. */
static void load_workflow(search_state *st)
{
	hml__dataset_view d;

	hml__dataset_view_of(&d, hml__store_find(st->s, "datasets", st->ds_ids[0]));
	if (d.workflow_path && hml__workflow_load(&st->w, d.workflow_path) < 0 &&
	    hml__workflow_load(&st->w, st->wname) < 0) {
		cmd_warn("the workflow of data set '%s' cannot be loaded (%s); searching with hml's "
		         "defaults", st->ds_ids[0], hml_error_last()->message);
		st->w = NULL;
	}
	st->wr = st->w ? hml__workflow_region_find(st->w, st->label) : NULL;
	st->family = st->wr && st->wr->family ? st->wr->family : "mlp";
	st->base_arch = st->wr ? st->wr->arch : NULL;
}

/* Training options every trial starts from: the region's model.train
 * (lib/run/workflow.h, as hml train's defaults), the search's epochs. */
static void setup_base(search_state *st)
{
	st->base = (hml__train_options)HML__TRAIN_OPTIONS_INIT;
	hml__workflow_train_options(st->wr, &st->base, NULL);
	st->base.epochs = st->max_epochs;
	st->base.infer_batch = st->wr && st->wr->batch > 0 ? st->wr->batch : 0;
}

/* ---- the search space --------------------------------------------------- */

/* The space object of a JSON document: its "search_space" member when it
 * has one (a model family's description), else the document. New ref. */
static json_t *space_of(json_t *doc)
{
	json_t *inner = json_object_get(doc, "search_space");
	json_t *sp = json_is_object(inner) ? json_incref(inner) : json_incref(doc);

	json_decref(doc);
	return sp;
}

/* From `path` (--space, or recorded), else the region's, else the family's. */
static int load_space(search_state *st, const char *path, const char *kind)
{
	json_error_t je;
	char origin[600];
	int rc;

	if (path) {
		char *abs = hml__path_abs(path);

		if ((rc = hml__space_read(&st->space_json, path)) < 0) {   /* read once, bounded */
			free(abs);
			return rc;
		}
		st->space_source = json_pack("{s:s, s:s}", "kind", "file", "path", abs ? abs : path);
		free(abs);
		snprintf(origin, sizeof(origin), "%s", path);
	} else if (st->wr && st->wr->search_space && (!kind || strcmp(kind, "workflow") == 0)) {
		st->space_json = json_incref(st->wr->search_space);
		st->space_source = json_pack("{s:s, s:s}", "kind", "workflow", "path", st->w->path);
		snprintf(origin, sizeof(origin), "workflow '%s' region '%s' model.search_space",
		         st->w->path, st->label);
	} else {
		const char *text = hml__arch_family_json(st->family);

		st->space_json = text ? space_of(json_loads(text, 0, &je)) : NULL;
		st->space_source = json_pack("{s:s, s:s}", "kind", "family", "family", st->family);
		snprintf(origin, sizeof(origin), "models/%s.json", st->family);
	}
	if (!st->space_json || !st->space_source)
		return hml__error_set(HML_EINVALID, "search space '%s' cannot be read", origin);
	if (!st->space && (rc = hml__space_parse(&st->space, st->space_json, origin)) < 0)
		return rc;
	if ((rc = hml__trialmap_check(st->space, st->family, origin)) < 0)
		return rc;
	return hml__json_sha256(st->space_json, st->space_sha);
}

/* The number of rungs for full trials of max_epochs, eta 3: as many as
 * keep the lowest rung at one epoch or more, at most 3; and a fourth when
 * even that one gets 3 epochs or more (max_epochs >= 81), as Hyperband's
 * widest bracket does, so that a long training's configurations are first
 * judged at 1/27 of it and a configuration costs about 4/27 of a full
 * training instead of 1/3 (hml-search(1)). */
static unsigned rungs_for(int epochs)
{
	unsigned r = 1;

	for (int e = epochs; e >= 3 && r < 3; e /= 3)
		r++;
	if (r == 3 && epochs >= 81)
		r = 4;
	return r;
}

/* What a new search searches: region, data, workflow, epochs. */
static int plan_search(search_state *st)
{
	int rc;

	st->label = region;
	if ((rc = pick_data(st)) < 0)
		return rc;
	load_workflow(st);
	if (max_epochs != UNSET) {
		st->max_epochs = (int)max_epochs;
	} else {
		hml__train_options t = HML__TRAIN_OPTIONS_INIT;   /* epochs 100 */

		hml__workflow_train_options(st->wr, &t, NULL);
		st->max_epochs = t.epochs;
	}
	return 0;
}

/* ---- starting and resuming ---------------------------------------------- */

static json_t *constraints_json(const search_state *st)
{
	return json_pack("{s:o, s:o, s:o}", "max_latency", cmd_json_real(st->max_latency > 0 ?
	                 st->max_latency : NAN), "max_params", cmd_json_real(st->max_params > 0 ?
	                 st->max_params : NAN), "max_error", cmd_json_real(st->max_error > 0 ?
	                 st->max_error : NAN));
}

/* The latency objective's target: --target, else the one recorded (on
 * resume: a different one is refused), else auto's choice. */
static int choose_target(search_state *st, const char *recorded)
{
	char why[300];
	int given = target && strcmp(target, "auto") ? hml__target_parse(target) : -1;
	int t = given >= 0 ? given : recorded ? hml__target_parse(recorded)
	      : hml__target_auto(st->family, why, sizeof(why));

	if (recorded && given >= 0 && hml__target_parse(recorded) != given)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s' with --target %s: it "
		                      "was started with %s", st->id, target, recorded);
	if (recorded && t < 0)
		return hml__error_set(HML_EINVALID, "search '%s' records an unknown latency target "
		                      "'%s'", st->id, recorded);
	if (t == HML__TARGET_C && (given >= 0 || recorded) &&
	    hml__target_auto(st->family, why, sizeof(why)) != HML__TARGET_C)
		return hml__error_set(HML_EINVALID, "%s: the latency target is c, but %s",
		                      recorded ? "cannot resume the search" : "--target c", why);
	if (given < 0 && !recorded && t != HML__TARGET_C)
		cmd_info("latency objective: torchscript (%s)", why);
	st->target = t;
	return 0;
}

static int new_search(search_state *st)
{
	json_t *ids = json_array(), *rec;
	int rc;

	if ((rc = plan_search(st)) < 0) {
		json_decref(ids);
		return rc;
	}
	st->rungs = rungs_for(st->max_epochs);
	if ((rc = load_space(st, space_path, NULL)) < 0 || (rc = choose_target(st, NULL)) < 0)
		return rc;
	for (size_t i = 0; i < st->nds; i++)
		json_array_append_new(ids, json_string(st->ds_ids[i]));
	rec = json_pack("{s:s, s:s, s:s, s:s, s:O, s:s, s:O, s:o, s:o, s:I, s:I, s:i, s:i, s:i,"
	                " s:i, s:i, s:o, s:s, s:o, s:{s:i, s:i, s:i, s:i, s:i}, s:f, s:s, s:s,"
	                " s:b}",
	                "region", st->label, "workflow", st->wname, "family", st->family,
	                "status", "running", "space", st->space_json, "space_sha256", st->space_sha,
	                "space_source", st->space_source, "datasets", ids, "data_sha256", data_sha(st),
	                "seed", (json_int_t)st->seed, "budget", (json_int_t)st->budget,
	                "workers", st->nworkers, "threads", st->threads, "eta", 3,
	                "rungs", (int)st->rungs, "max_epochs", st->max_epochs,
	                "constraints", constraints_json(st),
	                "keep_models", st->keep_all ? "all" : "front",
	                "trial_timeout", cmd_json_real(st->trial_timeout),
	                "counts", "configs", 0, "trials", 0, "ok", 0, "failed", 0, "reruns", 0,
	                "seconds", 0.0, "transport", st->mpi ? "mpi" : "processes",
	                "latency_target", hml__target_name(st->target),
	                "deterministic", st->deterministic);
	if (!rec)
		return hml__error_oom();
	return hml__search_register(st->s, rec, st->id, sizeof(st->id));
}

/* An option given again on --resume must agree with the search's record. */
static int same(const search_state *st, const char *opt, double given, double recorded)
{
	if (isnan(given) || given == recorded || (isnan(recorded) && given <= 0))
		return 0;
	if (isnan(recorded))
		return hml__error_set(HML_EINVALID, "cannot resume search '%s' with %s %g: it was "
		                      "started without it", st->id, opt, given);
	return hml__error_set(HML_EINVALID, "cannot resume search '%s' with %s %g: it was started "
	                      "with %g", st->id, opt, given, recorded);
}

static double bound_of(const hml__search_view *v, const char *key)
{
	const json_t *b = json_object_get(v->constraints, key);

	return json_is_number(b) ? json_number_value(b) : NAN;
}

/* Compare the search's recorded data sets and space with today's. */
static int resume_check(search_state *st, const hml__search_view *v)
{
	json_t *now = data_sha(st);
	const json_t *src = json_object_get(v->json, "space_source");
	const char *kind = json_string_value(json_object_get(src, "kind"));
	const char *path = space_path ? space_path : kind && strcmp(kind, "file") == 0
		? json_string_value(json_object_get(src, "path")) : NULL;
	int same_data = now && v->data_sha256 && json_equal(now, (json_t *)v->data_sha256), rc;

	json_decref(now);
	if (!same_data)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s': its data changed since "
		                      "it started (data sets or their SHA-256 differ); start a new "
		                      "search", st->id);
	if ((rc = load_space(st, path, kind)) < 0)
		return rc;
	if (!v->space_sha256 || strcmp(v->space_sha256, st->space_sha) != 0)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s': its search space "
		                      "changed since it started (SHA-256 differs); start a new search",
		                      st->id);
	return 0;
}

static int resume_search(search_state *st, const char *id)
{
	hml__search_view v;
	size_t n = hml__records_count(st->s, "searches");
	int rc;

	if (id)
		rc = hml__records_search(&v, st->s, id);
	else if (!n)
		rc = hml__error_set(HML_ENOTFOUND, "no search to resume in experiment '%s'",
		                    hml__store_dir(st->s));
	else
		rc = hml__records_search_at(&v, st->s, n - 1) ? 0 : HML_ENOTFOUND;
	if (rc < 0)
		return rc;
	snprintf(st->id, sizeof(st->id), "%s", v.id);
	if (!v.region || isnan(v.seed) || isnan(v.budget) || isnan(v.max_epochs))
		return hml__error_set(HML_EINVALID, "search '%s' has an incomplete record", st->id);
	if ((rc = same(st, "--seed", seed != UNSET ? (double)seed : NAN, v.seed)) < 0 ||
	    (rc = same(st, "--max-epochs", max_epochs != UNSET ? (double)max_epochs : NAN,
	               v.max_epochs)) < 0 ||
	    (rc = same(st, "--max-latency", max_latency, bound_of(&v, "max_latency"))) < 0 ||
	    (rc = same(st, "--max-params", max_params, bound_of(&v, "max_params"))) < 0 ||
	    (rc = same(st, "--max-error", max_error, bound_of(&v, "max_error"))) < 0)
		return rc;
	if (region && strcmp(region, v.region) != 0)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s' on region '%s': it "
		                      "searches region '%s'", st->id, region, v.region);
	st->deterministic = v.deterministic;
	if (deterministic && !st->deterministic)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s' with --deterministic: "
		                      "it was started without it", st->id);
	st->label = v.region;
	st->prev_seconds = isnan(cmd_json_number(v.json, "seconds")) ? 0
	                 : cmd_json_number(v.json, "seconds");
	st->prev_cpu = isnan(cmd_json_number(v.json, "coordinator_cpu_seconds")) ? 0
	             : cmd_json_number(v.json, "coordinator_cpu_seconds");
	st->prev_busy = isnan(cmd_json_number(v.json, "coordinator_busy_seconds")) ? 0
	              : cmd_json_number(v.json, "coordinator_busy_seconds");
	st->prev_suggest = isnan(cmd_json_number(v.json, "coordinator_suggest_seconds")) ? 0
	                 : cmd_json_number(v.json, "coordinator_suggest_seconds");
	st->prev_busy_cpu = isnan(cmd_json_number(v.json, "coordinator_busy_cpu_seconds")) ? 0
	                  : cmd_json_number(v.json, "coordinator_busy_cpu_seconds");
	st->prev_suggest_cpu = isnan(cmd_json_number(v.json, "coordinator_suggest_cpu_seconds"))
	                     ? 0 : cmd_json_number(v.json, "coordinator_suggest_cpu_seconds");
	st->seed = (long long)v.seed;
	st->max_epochs = (int)v.max_epochs;
	/* the recorded rungs: the rule of rungs_for() may differ between versions */
	st->rungs = rungs_for(st->max_epochs);
	if (!isnan(v.rungs)) {
		if (v.rungs < 1 || v.rungs > 8 || v.rungs != floor(v.rungs))
			return hml__error_set(HML_EINVALID, "search '%s' records %g rungs (1 to 8 "
			                      "expected)", st->id, v.rungs);
		st->rungs = (unsigned)v.rungs;
	}
	st->budget = budget != UNSET ? budget : (long long)v.budget;
	st->max_latency = bound_of(&v, "max_latency");
	st->max_params = bound_of(&v, "max_params");
	st->max_error = bound_of(&v, "max_error");
	if (!keep_models)
		st->keep_all = cmd_json_string(v.json, "keep_models") &&
		              strcmp(cmd_json_string(v.json, "keep_models"), "all") == 0;
	if (isnan(trial_timeout))
		st->trial_timeout = cmd_json_number(v.json, "trial_timeout");
	if (workers == UNSET && !isnan(v.workers))
		st->nworkers = (int)v.workers;
	if ((rc = pick_data(st)) < 0)
		return rc;
	load_workflow(st);
	if ((rc = choose_target(st, v.latency_target ? v.latency_target : "torchscript")) < 0)
		return rc;
	return resume_check(st, &v);
}

/* ---- kept models -------------------------------------------------------- */

/* A "models" record for trial i, in the layout of hml train's (lib/store/records.h
 * writes it; what the trial's summary lacks is null). */
static json_t *model_record(const search_state *st, long i)
{
	const search_trial *t = &st->t[i];
	const json_t *reg;
	hml__dataset_view d;
	hml__train_options o = st->base;
	hml__train_result r;
	hml__model_facts f;
	char arch[256];

	memset(&r, 0, sizeof(r));
	hml__dataset_view_of(&d, hml__store_find(st->s, "datasets", st->ds_ids[0]));
	reg = hml__dataset_view_region(&d, st->label);
	/* The options the trial trained with; its arch as it ran. */
	if (hml__trialmap_apply(&o, arch, sizeof(arch), st->family, st->base_arch,
	                        st->cfg[t->config]) < 0)
		o.arch = t->arch;
	snprintf(r.arch, sizeof(r.arch), "%s", t->arch);
	o.epochs = t->epochs;
	o.threads = st->threads;
	r.params = t->m.params;
	r.n_train = r.n_val = r.n_test = -1;
	r.epochs_run = t->m.epochs_run;
	r.best_epoch = r.stopped_early = r.out_of_time = -1;
	r.train_seconds = t->seconds;
	r.samples_per_second = r.final_lr = r.train_step_seconds = r.forward_max_diff = NAN;
	r.val_rmse = t->m.val_rmse;
	r.test_rmse = t->m.test_rmse;
	r.test_mae = r.test_max_abs = NAN;
	r.latency_s_per_sample = t->m.latency_s;
	r.latency_batch = t->m.latency_batch;
	f = (hml__model_facts){ st->wname, st->label, json_object_get(reg, "input_shape"),
	                        json_object_get(reg, "output_shape"), st->ds_ids, st->nds, &o, &r,
	                        NULL, -1, -1, st->id, i, t->config, NULL };
	return hml__model_record_new(st->s, &f);
}

/* A model registered for trial i before the search was killed (its
 * "kept" line lost), or NULL. */
static const char *registered_before(const search_state *st, long i)
{
	hml__model_view m;

	for (size_t k = 0; hml__records_model_at(&m, st->s, k); k++) {
		const json_t *s = json_object_get(m.json, "search");

		if (s && strcmp(cmd_json_string(s, "id") ? cmd_json_string(s, "id") : "", st->id) == 0 &&
		    json_integer_value(json_object_get(s, "trial")) == i)
			return m.id;
	}
	return NULL;
}

/* The latency per target of trial i's model for its card (as hml train
 * measures it, cmd/latency.c), on the region's data, loaded once; NULL
 * (after a warning) when it cannot be measured. */
static json_t *latency_card(search_state *st, long i, const char *model_path)
{
	if (!st->card_data) {
		hml__dataset *d = calloc(1, sizeof(*d));

		if (!d || hml__dataset_load(d, (const char *const *)st->ds_paths, st->nds, st->label,
		                            HML__NONFINITE_DROP) < 0) {
			cmd_warn("the front's models get no latency card: %s",
			         d ? hml_error_last()->message : "out of memory");
			free(d);
			return NULL;
		}
		st->card_data = d;
	}
	return cmd_latency_card(model_path, st->card_data, st->t[i].m.latency_batch, st->threads);
}

static int keep(search_state *st, long i, int card)
{
	search_trial *t = &st->t[i];
	hml__hist_event ev;
	const char *before = registered_before(st, i);
	char mp[4200];
	int rc;

	if (before) {
		snprintf(t->model, sizeof(t->model), "%s", before);
	} else {
		hml__store_file f = { "model", mp, ".pt" };

		snprintf(mp, sizeof(mp), "%s/t%ld.pt", st->dir, i);
		if (!t->has_file) {
			cmd_warn("the model of trial %ld is missing; it is not registered", i);
			return 0;
		}
		json_t *rec = model_record(st, i), *lat = card && rec ? latency_card(st, i, mp) : NULL;

		if (lat)
			json_object_set_new(rec, "latency", lat);
		if ((rc = hml__store_add(st->s, "models", rec, &f, 1, 1, t->model,
		                         sizeof(t->model))) < 0)
			return rc;
		t->has_file = 0;
	}
	search_trial_event(st, i, HML__HIST_KEPT, &ev);
	ev.model = t->model;
	if ((rc = hml__history_append(st->hist, &ev)) < 0)
		return rc;
	t->status = HML__HIST_KEPT;
	return 0;
}

int search_keep_models(search_state *st)
{
	size_t *cfg = malloc((hml__sched_configs(st->sched) + 1) * sizeof(*cfg));
	long nf = cfg ? hml__sched_front(st->sched, cfg, NULL) : HML_ENOMEM;
	int rc = nf < 0 ? (int)nf : 0;

	for (long j = 0; j < nf && rc == 0; j++) {
		long i = search_top_trial(st, cfg[j]);

		if (i >= 0 && st->t[i].status == HML__HIST_OK)
			rc = keep(st, i, 1);
	}
	for (size_t i = 0; i < st->nt && rc == 0; i++) {
		char mp[4200];

		if (st->keep_all && st->t[i].status == HML__HIST_OK && st->t[i].has_file) {
			rc = keep(st, (long)i, 0);
			continue;
		}
		snprintf(mp, sizeof(mp), "%s/t%zu.pt", st->dir, i);
		if (st->t[i].status != HML__HIST_KEPT)
			unlink(mp);
	}
	free(cfg);
	return rc;
}

/* ---- results ------------------------------------------------------------ */

json_t *search_front_json(const search_state *st)
{
	size_t *cfg = malloc((hml__sched_configs(st->sched) + 1) * sizeof(*cfg));
	long nf = cfg ? hml__sched_front(st->sched, cfg, NULL) : -1;
	json_t *arr = json_array();

	for (long j = 0; j < nf; j++) {
		long i = search_top_trial(st, cfg[j]);
		const search_trial *t = i >= 0 ? &st->t[i] : NULL;

		if (!t)
			continue;
		json_array_append_new(arr, json_pack("{s:I, s:I, s:o, s:o, s:o, s:I, s:s}",
			"trial", (json_int_t)i, "config", (json_int_t)t->config,
			"model", t->model[0] ? json_string(t->model) : json_null(),
			"val_rmse", cmd_json_real(t->m.val_rmse),
			"latency_seconds_per_sample", cmd_json_real(t->m.latency_s),
			"params", (json_int_t)t->m.params, "arch", t->arch));
	}
	free(cfg);
	return arr;
}

typedef struct counts {
	size_t ok, failed, reruns;
} counts;

static counts count_trials(const search_state *st)
{
	counts c = { 0, 0, 0 };

	for (size_t i = 0; i < st->nt; i++) {
		c.ok += st->t[i].status == HML__HIST_OK || st->t[i].status == HML__HIST_KEPT;
		c.failed += st->t[i].status == HML__HIST_FAILED || st->t[i].status == HML__HIST_TIMEOUT ||
		            st->t[i].status == HML__HIST_CRASHED;
		c.reruns += (size_t)st->t[i].reruns;
	}
	return c;
}

/* The record's status, counts, time and front. */
static int record_state(search_state *st, const char *status)
{
	struct rusage ru;
	counts c = count_trials(st);
	double cpu = getrusage(RUSAGE_SELF, &ru) == 0
		? (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		  (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6 : NAN;
	json_t *f = json_pack("{s:s, s:{s:I, s:I, s:I, s:I, s:I}, s:f, s:o, s:f, s:f, s:f, s:f, "
	                      "s:o, s:I}",
		"status", status, "counts", "configs", (json_int_t)hml__sched_configs(st->sched),
		"trials", (json_int_t)st->nt, "ok", (json_int_t)c.ok, "failed", (json_int_t)c.failed,
		"reruns", (json_int_t)c.reruns,
		"seconds", st->prev_seconds + hml__now() - st->t0,
		"coordinator_cpu_seconds", cmd_json_real(st->prev_cpu + cpu),
		"coordinator_busy_seconds", st->prev_busy + st->busy,
		"coordinator_suggest_seconds", st->prev_suggest + st->suggest,
		"coordinator_busy_cpu_seconds", st->prev_busy_cpu + st->busy_cpu,
		"coordinator_suggest_cpu_seconds", st->prev_suggest_cpu + st->suggest_cpu,
		"front", search_front_json(st), "budget", (json_int_t)st->budget);
	int rc = f ? hml__search_set(st->s, st->id, f) : hml__error_oom();

	json_decref(f);
	return rc;
}

static void print_result(const search_state *st)
{
	const json_t *rec = hml__store_find(st->s, "searches", st->id);
	const json_t *front = json_object_get(rec, "front"), *e, *c = json_object_get(rec, "counts");
	size_t i;

	if (g_cmd.json) {
		cmd_json_print(json_pack("{s:O}", "search", rec));
		return;
	}
	printf("search %s: region '%s', %lld configurations, %lld trials (%lld failed, %lld re-run) "
	       "in %.1f s\n", st->id, st->label,
	       (long long)json_integer_value(json_object_get(c, "configs")),
	       (long long)json_integer_value(json_object_get(c, "trials")),
	       (long long)json_integer_value(json_object_get(c, "failed")),
	       (long long)json_integer_value(json_object_get(c, "reruns")),
	       cmd_json_number(rec, "seconds"));
	printf("Pareto front (%zu): validation RMSE against %s latency at batch %lld\n",
	       json_array_size(front), hml__target_name(st->target),
	       (long long)st->base.infer_batch);
	printf("  %-12s %-14s %-9s %-6s %s\n", "val_rmse", "us/sample", "params", "model", "arch");
	json_array_foreach(front, i, e)
		printf("  %-12.6g %-14.5g %-9lld %-6s %s\n", cmd_json_number(e, "val_rmse"),
		       cmd_json_number(e, "latency_seconds_per_sample") * 1e6,
		       (long long)json_integer_value(json_object_get(e, "params")),
		       cmd_json_string(e, "model") ? cmd_json_string(e, "model") : "-",
		       cmd_json_string(e, "arch") ? cmd_json_string(e, "arch") : "");
	if (st->session_trials)
		printf("coordinator: %.3g ms per trial outside its waits (%.3g ms of CPU), of which "
		       "%.3g ms in the optimiser (%.3g ms of CPU)\n",
		       st->busy / (double)st->session_trials * 1e3,
		       st->busy_cpu / (double)st->session_trials * 1e3,
		       st->suggest / (double)st->session_trials * 1e3,
		       st->suggest_cpu / (double)st->session_trials * 1e3);
	printf("history: %s/search/%s/%s\n", hml__store_dir(st->s), st->id, HML__HISTORY_FILE);
}

/* ---- --train-args ------------------------------------------------------- */

/* Every parameter of the point must be one the space searches. */
static int check_point(const search_state *st, const json_t *point)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)point, key, v) {
		size_t i, n = hml__space_count(st->space);

		for (i = 0; i < n && strcmp(hml__space_name(st->space, i), key) != 0; i++)
			;
		if (i == n)
			return hml__error_set(HML_EINVALID, "--train-args: parameter '%s' is not in the "
			                      "search space of region '%s'", key, st->label);
	}
	return 0;
}

/* A word as the shell reads it back. */
static void print_word(const char *w)
{
	if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	                    "_-+=:,./") == strlen(w)) {
		fputs(w, stdout);
		return;
	}
	putchar('\'');
	for (; *w; w++)
		if (*w == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*w);
	putchar('\'');
}

/* The hml train arguments of one point, as a new search's trial trains it
 * at full fidelity (lib/search/trialmap.h): the peers of bench/search.sh train
 * exactly what hml search would. Nothing is written. */
static int print_train_args(search_state *st, const json_t *point)
{
	hml__train_options o;
	char arch[256];
	json_t *argv, *w;
	size_t i;
	int rc;

	if ((rc = hml__store_open(&st->s, g_cmd.dir, 0)) < 0 || (rc = plan_search(st)) < 0 ||
	    (rc = load_space(st, space_path, NULL)) < 0 || (rc = check_point(st, point)) < 0)
		return rc;
	setup_base(st);
	o = st->base;
	if ((rc = hml__trialmap_apply(&o, arch, sizeof(arch), st->family, st->base_arch,
	                              point)) < 0)
		return rc;
	if (!(argv = hml__trialmap_train_argv(&o, st->label)))
		return HML_ENOMEM;
	if (g_cmd.json) {
		cmd_json_print(json_pack("{s:o, s:O}", "train_args", argv, "point", point));
		return 0;
	}
	fputs("hml", stdout);
	json_array_foreach(argv, i, w) {
		putchar(' ');
		print_word(json_string_value(w));
	}
	putchar('\n');
	json_decref(argv);
	return 0;
}

/* ---- the command -------------------------------------------------------- */

/* Ranks started by an MPI launcher (its environment), 1 without one. */
static int launched_size(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && atoi(v) > 0)
			return atoi(v);
	}
	return 1;
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

/* Rank 0: the workers are the other ranks. 1: this rank was a worker and
 * *code is its exit code. */
static int mpi_setup(search_state *st, int *code)
{
	int rank, size, rc;

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
	st->mpi = 1;
	st->nworkers = size - 1;
	st->mpi_to = malloc((size_t)(size - 1) * sizeof(int));
	st->mpi_from = malloc((size_t)(size - 1) * sizeof(int));
	if (!st->mpi_to || !st->mpi_from ||
	    hml__mpi_relay_start(0, size, st->mpi_to, st->mpi_from, NULL, NULL) < 0) {
		*code = cmd_fail(st->mpi_to && st->mpi_from ? HML_EIO : hml__error_oom());
		return 1;   /* (the ranks wait for input that never comes: mpirun ends them) */
	}
	return 0;
}

/* Close the pipes of ranks never handed to a worker; join the relay. */
static void mpi_end(search_state *st)
{
	for (int k = 0; k < st->nworkers; k++) {
		if (st->mpi_to[k] >= 0)
			close(st->mpi_to[k]);
		if (st->mpi_from[k] >= 0)
			close(st->mpi_from[k]);
	}
	free(st->mpi_to);
	free(st->mpi_from);
	hml__mpi_finish();
}
#endif

static void set_threads(search_state *st)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	st->threads = threads != UNSET ? (int)threads
	            : (int)(cores > st->nworkers ? cores / st->nworkers : 1);
}

/* Open, lock, and start or resume the search; then the scheduler. */
static int prepare(search_state *st, const char *resume_id)
{
	char rel[64], exe[4096];
	hml__sched_options so = HML__SCHED_OPTIONS_INIT;
	ssize_t n;
	int rc;

	if ((rc = hml__store_open(&st->s, g_cmd.dir, 0)) < 0 ||
	    (rc = hml__search_lock(st->s, &st->lock_fd)) < 0)
		return rc;
	if (resume) {
		if ((rc = resume_search(st, resume_id)) < 0)
			return rc;
		set_threads(st);
	} else {
		set_threads(st);
		if ((rc = new_search(st)) < 0)
			return rc;
	}
	hml__search_lock_name(st->lock_fd, st->id);   /* hml show: whose the lock is */
	setup_base(st);
	so.space = st->space;
	so.seed = (uint64_t)st->seed;
	so.budget = (size_t)st->budget;
	so.rungs = st->rungs;
	so.max_latency = st->max_latency > 0 ? st->max_latency : 0;
	so.max_params = st->max_params > 0 ? st->max_params : 0;
	so.max_error = st->max_error > 0 ? st->max_error : 0;
	if ((rc = hml__sched_new(&st->sched, &so)) < 0)
		return rc;
	snprintf(rel, sizeof(rel), "search/%s", st->id);
	if (!(st->dir = hml__store_path(st->s, rel)))
		return hml__error_oom();
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return hml__error_set(HML_EIO, "cannot find the hml executable for the workers");
	exe[n] = '\0';
	if (!(st->exe = hml__strdup(exe)))
		return hml__error_oom();
	return search_replay(st);
}

int cmd_search(int argc, char **argv)
{
	search_state st;
	int first, rc, code = HML_EXIT_OK;

	memset(&st, 0, sizeof(st));
	st.lock_fd = -1;
	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if ((rc = check_cli(argc - first)) != 0)
		return rc;
	if (train_args) {
		json_error_t je;
		json_t *point = json_loads(train_args, JSON_REJECT_DUPLICATES, &je);

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
		rc = print_train_args(&st, point);
		json_decref(point);
		code = rc < 0 ? cmd_fail(rc) : HML_EXIT_OK;
		state_release(&st);
		return cmd_finish(code);
	}
	st.budget = budget != UNSET ? budget : 50;
	st.seed = seed != UNSET ? seed : 1;
	st.nworkers = workers != UNSET ? (int)workers : 1;
	st.max_latency = isnan(max_latency) ? 0 : max_latency;
	st.max_params = isnan(max_params) ? 0 : max_params;
	st.max_error = isnan(max_error) ? 0 : max_error;
	st.trial_timeout = trial_timeout;
	st.keep_all = keep_models && strcmp(keep_models, "all") == 0;
	st.deterministic = deterministic;
	if (launched_size() > 1) {
#ifdef HML_WITH_MPI
		if (mpi_setup(&st, &code))
			return cmd_finish(code);
#else
		cmd_error("search: started by an MPI launcher, but hml was built without MPI "
		          "(-DHML_WITH_MPI=ON)");
		return HML_EXIT_INVALID;
#endif
	}
	if ((rc = prepare(&st, argc > first ? argv[first] : NULL)) < 0)
		goto fail;
	st.t0 = hml__now();
	if (resume && (rc = record_state(&st, "running")) < 0)
		goto fail;
	cmd_info("search %s: region '%s', budget %lld configurations, %d worker%s x %d thread%s, "
	         "%u rung%s up to %d epochs, %s latency", st.id, st.label, st.budget, st.nworkers,
	         st.nworkers == 1 ? "" : "s", st.threads, st.threads == 1 ? "" : "s", st.rungs,
	         st.rungs == 1 ? "" : "s", st.max_epochs, hml__target_name(st.target));
	if ((rc = search_run(&st)) < 0)
		goto fail;
	if (rc == 1) {
		record_state(&st, "interrupted");
		cmd_error("search '%s' interrupted after %zu trials; continue it with "
		          "'hml search --resume %s'", st.id, st.nt, st.id);
		code = HML_EXIT_INTERRUPTED;
		goto done;
	}
	if ((rc = search_keep_models(&st)) < 0 || (rc = record_state(&st, "finished")) < 0)
		goto fail;
	if (!count_trials(&st).ok) {
		rc = hml__error_set(HML_ERROR, "no trial of search '%s' succeeded (see %s/%s)", st.id,
		                    st.dir, HML__HISTORY_FILE);
		goto fail;
	}
	/* Hook (wt-d, hml show --plot): draw the plots into search/<id>/ and
	 * register them; a failure (no gnuplot) is only a warning. */
	cmd_show_plots(st.s, st.id);
	print_result(&st);
	goto done;
fail:
	code = cmd_fail(rc);
	if (st.sched && st.id[0] && rc != HML_ELOCKED)
		record_state(&st, cmd_interrupted ? "interrupted" : "failed");
done:
	state_release(&st);
#ifdef HML_WITH_MPI
	if (st.mpi)
		mpi_end(&st);
#endif
	return cmd_finish(code);
}
