/*
 * hml evaluate - run the workflow accurately and with the surrogate, and
 * report the errors of its quantities of interest (cmd/evaluate_qoi.c) and
 * the speedups.
 *
 * Accurate and surrogate runs alternate (a0 s0 a1 s1 ...) so that drift of
 * a shared machine hits both alike; the first pair warms caches and loads
 * libraries, records the QoI (HML_QOI) the errors are computed from, and
 * is not timed. The measured runs record no QoI: a production run does not,
 * and recording it loads HDF5 (about 30 ms with Debian's libhdf5 and its
 * thirty dependent libraries), which would count against the surrogate's
 * end-to-end time as much as the application's own work. Every run writes
 * a JSON profile (HML_PROFILE); the region's own time comes from the
 * profile, the end-to-end time is the process's wall time.
 *
 * An MPI workflow's runs are started under its launcher; each rank writes
 * its own QoI file and profile, read as one (cmd/evaluate_mpi.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "collect_mpi.h"
#include "evaluate.h"
#include "evaluate_mpi.h"
#include "core/beneath.h"
#include "core/envname.h"
#include "core/profile_file.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "deploy/metrics.h"
#include "run/argv.h"
#include "run/childenv.h"
#include "run/workflow.h"
#include "store/checked.h"
#include "store/model_run.h"
#include "store/cost.h"
#include "store/qoi_compare.h"
#include "store/records.h"
#include "store/store.h"
#include "sys/fsutil.h"

static int64_t repeat = -1, ranks_opt = -1, k_opt = -1, interleave_opt = -1;
static const char *args_text, *device;
static int keep;

static const cmd_option options[] = {
	{ "repeat", 'n', CMD_OPT_INT, &repeat, "N",
	  "measured runs of each configuration, after one discarded warm-up (default: the workflow's)" },
	{ "args", 0, CMD_OPT_STRING, &args_text, "'A B ...'",
	  "the application's arguments instead of the workflow's evaluate args (split on blanks)" },
	{ "keep-runs", 0, CMD_OPT_FLAG, &keep, NULL,
	  "keep every run's QoI, profile and log in eval/<id>-runs/" },
	{ "ranks", 0, CMD_OPT_INT, &ranks_opt, "N",
	  "an MPI workflow's ranks (default: the workflow's \"ranks\")" },
	{ "k", 0, CMD_OPT_INT, &k_opt, "K",
	  "steps per model call: the workflow's search_args.k argument set to K" },
	{ "interleave", 0, CMD_OPT_INT, &interleave_opt, "N",
	  "the model for N calls, then the original code for one (0: every call)" },
	{ "device", 0, CMD_OPT_STRING, &device, "auto|cpu|cuda",
	  "where the surrogate runs' TorchScript model runs (HML_DEVICE; default: the workflow's env, else auto)" },
	CMD_RUN_TIMEOUT_OPTION,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const cmd_range ranges[] = {
	{ "repeat", 1, 1000000, 0 }, { "ranks", 1, HML__RANKS_MAX, 0 },
	{ "run-timeout", 0, INFINITY, 0 }, { "k", 1, INT32_MAX, 0 },
	{ "interleave", 0, 1000000000, 0 }, { NULL, 0, 0, 0 }
};

static const cmd_spec spec = {
	"evaluate", "[options] [MODEL] [-- ARGS...]",
	"compare the application with and without the surrogate",
	"Runs the workflow's application accurately and with MODEL (default: the\n"
	"deployed model) in place of its region, N+1 times each, alternating and\n"
	"discarding the first pair, and reports the error of each quantity of interest\n"
	"(RMSE, MAPE, max abs error; passed or FAILED against its max_error) and the\n"
	"end-to-end and region speedups with their spread. The evaluation is recorded\n"
	"in the experiment (eval/<id>.json).",
	options, 0, -1, ranges
};

static void evaluation_release(evaluation *e)
{
	free(e->acc.wall); free(e->acc.region); free(e->sur.wall); free(e->sur.region);
	free(e->acc.cpu_wait); free(e->sur.cpu_wait);
	free(e->speed_e2e); free(e->speed_region); free(e->ceiling);
	hml__strv_free(e->argv);
	hml__strv_free(e->launcher);
	free(e->tmp);
	free(e->model_path);
	free(e->guard_path);
	free(e->qoi);
	json_decref(e->over_time);
	free(e->over_time_png);
	hml__workflow_free(e->w);
	hml__store_free(e->s);
}

static json_t *summary_json(const double *v, size_t n)
{
	hml__summary s;

	hml__summary_compute(&s, v, n);
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "mean", hml__json_real(s.mean),
	                 "median", hml__json_real(s.median), "min", hml__json_real(s.min),
	                 "max", hml__json_real(s.max), "stdev", hml__json_real(s.stdev));
}

static json_t *array_json(const double *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, hml__json_real(v[i]));
	return a;
}

/* --- plan ------------------------------------------------------------------ */

/* The model: named, or the latest deployment's; then its workflow. */
static int plan_model(evaluation *e, const char *named)
{
	hml__deployment_view dep = { 0 };
	hml__model_view model;
	int rc;

	hml__model_run deployed = HML__MODEL_RUN_INIT, choice = { k_opt, interleave_opt };

	e->id = named;
	e->target = "torchscript";
	if (!e->id) {
		if ((rc = hml__records_latest_deployment(&dep, e->s)) < 0)
			return rc;
		e->id = dep.model;
		hml__model_run_read(&deployed, json_object_get(dep.json, "run"));
	}
	if ((rc = hml__checked_model(e->s, e->id, &model, &e->model_path)) < 0 ||
	    (rc = hml__checked_model_workflow(e->s, &model, &e->w)) < 0)
		return rc;
	/* The model runs as it was judged, or deployed (lib/store/model_run.h). */
	hml__model_run_resolve(&e->run, &model, &deployed, &choice);
	/* The latest deployment is evaluated as deployed: a compiled one runs
	 * its checked shared object, not the TorchScript file. */
	if (!named && dep.compiled) {
		char *so = NULL;

		if ((rc = hml__checked_file(e->s, hml__store_find(e->s, "compiled", dep.compiled),
		                            "compiled model", "library", "compiled", &so)) < 0)
			return rc;
		free(e->model_path);
		e->model_path = so;
		e->target = "c";
	}
	e->label = model.region;
	return named ? 0 : cmd_evaluate_guard_plan(e->s, dep.json, &e->guard_path, &e->guard_spec);
}

/* The application's argv: the program, then the arguments after "--"
 * (`extra`), or --args, or the workflow's. */
static int plan_argv(evaluation *e, char **extra, int nextra)
{
	char **args = NULL;
	int rc;

	if (extra)
		rc = hml__argv_copy(&args, (const char *const *)extra, nextra);
	else if (args_text)
		rc = hml__argv_split(&args, args_text);
	else
		rc = hml__argv_copy(&args, (const char *const *)e->w->evaluate_args, -1);
	if (rc == 0)
		rc = hml__argv_build(&e->argv, e->w->program, (const char *const *)args, NULL);
	hml__strv_free(args);
	if (rc == 0)
		rc = cmd_evaluate_search_args(&e->argv, &e->interleave, &e->sched, e->w, &e->run);
	if (rc == 0 && e->launcher) {   /* mpirun -n 3 PROGRAM ARGS */
		char **app = e->argv;

		rc = hml__argv_launch(&e->argv, (const char *const *)e->launcher, e->ranks, app);
		hml__strv_free(app);
	}
	return rc;
}

static int plan(evaluation *e, const char *named, char **extra, int nextra)
{
	int rc;

	if ((rc = hml__store_open(&e->s, g_cmd.dir, 0)) < 0 ||
	    (rc = plan_model(e, named)) < 0)
		return rc;
	cmd_workflow_env_check(e->w);
	if ((rc = collect_mpi_launcher(&e->launcher, &e->ranks, e->w, (int)ranks_opt,
	                               "evaluate")) != 0)
		return rc;
	if (!e->launcher)
		e->ranks = 1;
	e->collected_wall = hml__records_run_wall_max(e->s, e->w->name);
	e->nrep = (int)(repeat > 0 ? repeat : (e->w->evaluate_repeat > 0 ? e->w->evaluate_repeat : 3));
	if ((rc = plan_argv(e, extra, nextra)) < 0)
		return rc;
	cmd_app_same_inputs_warn(e->w, NULL, e->argv + 1, e->s, e->argv);
	/* A scratch directory inside eval/ for every run's files. */
	if (!(e->tmp = hml__store_tmp_dir(e->s, "eval")))   /* never through a link */
		return hml_error_last()->code;
	e->acc.wall = calloc((size_t)e->nrep, sizeof(double));
	e->acc.region = calloc((size_t)e->nrep, sizeof(double));
	e->sur.wall = calloc((size_t)e->nrep, sizeof(double));
	e->sur.region = calloc((size_t)e->nrep, sizeof(double));
	e->speed_e2e = calloc((size_t)e->nrep, sizeof(double));
	e->speed_region = calloc((size_t)e->nrep, sizeof(double));
	e->ceiling = calloc((size_t)e->nrep, sizeof(double));
	e->acc.cpu_wait = calloc((size_t)e->nrep, sizeof(double));
	e->sur.cpu_wait = calloc((size_t)e->nrep, sizeof(double));
	if (!e->acc.wall || !e->acc.region || !e->sur.wall || !e->sur.region || !e->speed_e2e ||
	    !e->speed_region || !e->ceiling || !e->acc.cpu_wait || !e->sur.cpu_wait)
		return hml__error_oom();
	return 0;
}

/* --- run ------------------------------------------------------------------- */

/*
 * Run number k (0: the warm-up) of the accurate (which 0) or surrogate
 * (which 1) configuration, in an environment built from scratch, and add
 * its profile to the series. A failed run ends the progress bar (*bar
 * NULL) before its log is shown.
 */
static int run_one(evaluation *e, int which, int k, cmd_progress **bar)
{
	const char *kind = which ? "s" : "a";
	hml__run_config config = { which ? HML__RUN_SURROGATE : HML__RUN_ACCURATE, NULL,
	                           e->label, e->model_path, NULL, NULL,
	                           which ? e->guard_path : NULL, NULL,
	                           which ? e->interleave : 0, NULL, NULL };
	const hml__workflow_region *region = hml__workflow_region_find(e->w, e->label);
	char qoi[4096], prof[4096], log[4096];
	series *se = which ? &e->sur : &e->acc;
	hml__profile_record rec;
	double wall;
	int rc, passed;

	snprintf(qoi, sizeof(qoi), "%s/%s%d.h5", e->tmp, kind, k);
	snprintf(prof, sizeof(prof), "%s/%s%d.json", e->tmp, kind, k);
	snprintf(log, sizeof(log), "%s/%s%d.log", e->tmp, kind, k);
	config.qoi = k == 0 ? qoi : NULL;   /* the warm-up pair records the QoI */
	config.conserve = which && region ? region->conserve : NULL;
	config.device = which ? device : NULL;
	config.profile = prof;
	/* A surrogate run's limit: 10 x the slowest accurate run so far; an
	 * accurate run's: 10 x the slowest collected run (lib/run/limit.h). */
	if ((rc = cmd_app_run(e->w, e->argv, &config, log,
	                      which ? e->acc_wall_max : e->collected_wall, &wall,
	                      bar)) < 0 ||
	    (rc = hml__workflow_verify(e->w, log, &passed)) < 0 ||
	    (rc = hml__profile_file_find_ranks(prof, e->ranks, e->label, &rec)) < 0)
		return rc;
	se->unverified += !passed;
	if (!which && wall > e->acc_wall_max)
		e->acc_wall_max = wall;
	if (k == 0)
		return 0;
	se->model_calls += (int64_t)rec.stats.model_calls;
	se->fallback_calls += (int64_t)rec.stats.fallback_calls;
	se->original_calls += (int64_t)rec.stats.original_calls;
	se->guard.checked_rows += (int64_t)rec.stats.checked_rows;
	se->guard.guarded_rows += (int64_t)rec.stats.guarded_rows;
	se->guard.guarded_calls += (int64_t)rec.stats.guarded_calls;
	se->guard.whole_calls += (int64_t)rec.stats.guard_whole_calls;
	se->guard.seconds += rec.stats.guard_s;
	se->wall[k - 1] = wall;
	se->region[k - 1] = rec.stats.region_s;
	se->cpu_wait[k - 1] = hml__profile_cpu_wait_share(&rec.cpu);
	if (hml__profile_cpu_waited(&rec.cpu))
		se->cpu_noted = fmax(se->cpu_noted, se->cpu_wait[k - 1]);
	return 0;
}

/* Measured runs whose threads waited for a CPU (hml__profile_cpu_waited:
 * other work on the machine) measured that work as well as the
 * application's: said, not under -q. */
static void say_cpu_wait(const evaluation *e)
{
	double most = fmax(e->acc.cpu_noted, e->sur.cpu_noted);

	if (most > 0)
		cmd_info("the measured runs' threads waited for a CPU up to %.0f%% of their time "
		         "(other work on this machine): the times and speedups measured are not "
		         "the application's alone", 100.0 * most);
}

/* Accurate and surrogate runs alternate, the first pair discarded. */
static int run(evaluation *e)
{
	cmd_progress *bar;
	char detail[64];
	int rc = 0;

	cmd_info("evaluating model '%s' on workflow '%s': %d measured runs each, after a warm-up",
	         e->id, e->w->name, e->nrep);
	bar = cmd_progress_start("evaluate", 2.0 * (e->nrep + 1), 1);
	for (int k = 0; k <= e->nrep && rc == 0; k++) {
		for (int which = 0; which < 2 && rc == 0; which++) {
			snprintf(detail, sizeof(detail), "%s run %d/%d",
			         which ? "surrogate" : "accurate", k, e->nrep);
			cmd_progress_update(bar, 2.0 * k + which, detail);
			rc = run_one(e, which, k, &bar);
		}
		if (rc == 0 && k > 0) {
			e->speed_e2e[k - 1] = e->acc.wall[k - 1] / e->sur.wall[k - 1];
			e->speed_region[k - 1] = e->acc.region[k - 1] / e->sur.region[k - 1];
		}
	}
	cmd_progress_end(bar);
	if (rc == 0)
		say_cpu_wait(e);
	if (rc == 0 && e->sur.model_calls == 0)
		cmd_warn("the surrogate runs made no model calls in region '%s'", e->label);
	return rc;
}

/* --- read ------------------------------------------------------------------ */

/* The latency of the form evaluated (cmd/evaluate_latency.c). */
static void read_latency(evaluation *e)
{
	e->lat_source = cmd_evaluate_latency(&e->lat, e->s, e->id, e->w, e->label, e->target);
}

/* What the collected cost and the latency predict (lib/store/cost.h). */
static void predict(evaluation *e)
{
	hml__model_view m;
	hml__region_cost cost;
	hml__summary aw, ar;
	int t = hml__target_parse(e->target);

	memset(&cost, 0, sizeof(cost));
	if (hml__records_model(&m, e->s, e->id) == 0)
		hml__cost_of_model(&cost, e->s, &m);
	hml__predict(&e->pred, &cost, e->lat_source && t >= 0 ? e->lat.seconds[t] : NAN,
	             e->lat_source && t >= 0 ? e->lat.startup[t] : NAN, &e->sched);
	hml__summary_compute(&aw, e->acc.wall, (size_t)e->nrep);
	hml__summary_compute(&ar, e->acc.region, (size_t)e->nrep);
	/* An MPI run's region time sums its ranks', which run side by side: a
	 * run's wall time is set against a mean rank's (lib/store/cost.h). */
	e->pred_run = hml__predict_run(&e->pred, aw.mean, ar.mean / e->ranks);
	/* the calls the original code keeps (interleave) stay in every run */
	for (int k = 0; k < e->nrep; k++)
		e->ceiling[k] = hml__speedup_ceiling(e->acc.wall[k], e->pred.model_share *
		                                     e->acc.region[k] / e->ranks);
}

/* The error over time of what the application recorded over time. */
static int over_time(evaluation *e, const char *a0, const char *s0)
{
	char title[256];

	snprintf(title, sizeof(title), "model %s (%s) on workflow %s: error over time", e->id,
	         e->target, e->w->name);
	return cmd_evaluate_over_time(&e->over_time, &e->over_time_png, e->w, a0, s0,
	                              hml__store_dir(e->s), e->tmp, title);
}

/* --- record ---------------------------------------------------------------- */

static json_t *record_json(const evaluation *e, const char *a1, const char *s1)
{
	const hml__errors *err = &e->qoi[0].err;
	const size_t n = (size_t)e->nrep;
	json_t *v, *rec = json_pack("{s:s, s:s, s:s, s:s, s:i}", "model", e->id, "target", e->target,
	                        "region", e->label,
	                        "workflow", e->w->name, "repeat", e->nrep);

	if (!rec)
		return NULL;
	json_object_set_new(rec, "argv", json_array());
	for (char **a = e->argv; *a; a++)
		json_array_append_new(json_object_get(rec, "argv"), hml__json_bytes(*a));
	json_object_set_new(rec, "qoi", json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
		"dataset", e->w->qoi[0].dataset, "metric", e->w->qoi[0].metric,
		"rmse", hml__json_real(err->rmse), "mape", hml__json_real(err->mape),
		"max_abs", hml__json_real(err->max_abs), "mae", hml__json_real(err->mae),
		"values", (json_int_t)err->n, "mape_values", (json_int_t)err->mape_n,
		"nonfinite", (json_int_t)err->nonfinite));
	json_object_set_new(rec, "qois", hml__qoi_results_json(e->qoi, e->w->nqoi));
	if (e->interleave > 0)
		json_object_set_new(rec, "interleave", json_integer(e->interleave));
	if (device)
		json_object_set_new(rec, "device", json_string(device));
	json_object_set_new(rec, "run", hml__model_run_json(&e->run));
	if (e->over_time)
		json_object_set(rec, "over_time", e->over_time);
	json_object_set_new(rec, "accurate", json_pack("{s:o, s:o, s:o}",
		"wall_seconds", array_json(e->acc.wall, n),
		"region_seconds", array_json(e->acc.region, n),
		"cpu_wait_share", array_json(e->acc.cpu_wait, n)));
	json_object_set_new(rec, "surrogate", json_pack("{s:o, s:o, s:o, s:I, s:I, s:I}",
		"wall_seconds", array_json(e->sur.wall, n),
		"region_seconds", array_json(e->sur.region, n),
		"cpu_wait_share", array_json(e->sur.cpu_wait, n),
		"model_calls", (json_int_t)e->sur.model_calls,
		"fallback_calls", (json_int_t)e->sur.fallback_calls,
		"original_calls", (json_int_t)e->sur.original_calls));
	{
		double region = 0.0;

		for (int k = 0; k < e->nrep; k++)
			region += e->sur.region[k];
		json_object_set_new(rec, "guard", cmd_evaluate_guard_json(e->guard_spec, &e->sur.guard,
		                                                          e->nrep, region));
	}
	json_object_set_new(rec, "speedup", json_pack("{s:o, s:o, s:o}",
		"end_to_end", summary_json(e->speed_e2e, n),
		"region", summary_json(e->speed_region, n),
		"ceiling", summary_json(e->ceiling, n)));
	json_object_set_new(rec, "predicted", v = hml__prediction_json(&e->pred));
	json_object_set_new(v, "end_to_end_as_collected", hml__json_real(e->pred.end_to_end));
	json_object_set_new(v, "end_to_end", hml__json_real(e->pred_run));   /* these runs' */
	if (e->w->verify_pattern)
		json_object_set_new(rec, "verification", cmd_app_verification(e->w, e->nrep + 1,
		                    e->acc.unverified, e->sur.unverified));
	if (e->launcher)
		json_object_set_new(rec, "mpi", cmd_evaluate_mpi_json(e->w->launcher, e->ranks, e->w,
		                                                        a1, s1));
	if (e->lat_source)   /* the latency of the form evaluated (lib/deploy/latency.h) */
		json_object_set_new(rec, "card_latency", json_pack("{s:o, s:I, s:s}",
			"seconds_per_sample", hml__json_real(e->lat.seconds[hml__target_parse(e->target)]),
			"batch", (json_int_t)e->lat.batch, "source", e->lat_source));
	return rec;
}

/* Register the report and the two compared QoI files (each rank's). */
static int record(evaluation *e, const char *a1, const char *s1)
{
	cmd_evaluate_qoi_files f = { 0 };
	json_t *rec = record_json(e, a1, s1);
	int rc;

	if (!rec)
		return hml__error_oom();
	if ((rc = cmd_evaluate_qoi_files_make(&f, a1, s1, e->ranks, e->over_time_png)) == 0)
		rc = hml__store_add(e->s, "evaluations", rec, f.files, f.n, 1, e->eid,
		                    sizeof(e->eid));
	else
		json_decref(rec);
	cmd_evaluate_qoi_files_release(&f);
	return rc;
}

/* --- the command ----------------------------------------------------------- */

/* Parse the command line; -1 when it is fine, else the exit code. */
static int parse(int argc, char **argv, int *first, int *dashdash)
{
	int rc, end;

	*dashdash = 0;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			*dashdash = i;
			break;
		}
	end = *dashdash ? *dashdash : argc;
	if ((rc = cmd_parse(&spec, end, argv, first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if (device && (!*device || !hml__device_known(device))) {
		cmd_error("evaluate: option '--device' must be auto, cpu or cuda, not '%.64s'", device);
		return HML_EXIT_USAGE;
	}
	if (end - *first > 1) {
		cmd_error("evaluate: unexpected argument '%s' (usage: hml evaluate %s)",
		          argv[*first + 1], spec.synopsis);
		return HML_EXIT_USAGE;
	}
	return -1;
}

int cmd_evaluate(int argc, char **argv)
{
	evaluation e;
	char a0[4096], s0[4096];
	int first, dashdash, rc, code = HML_EXIT_OK;

	memset(&e, 0, sizeof(e));
	if ((code = parse(argc, argv, &first, &dashdash)) >= 0)
		return code;
	code = HML_EXIT_OK;
	rc = plan(&e, first < (dashdash ? dashdash : argc) ? argv[first] : NULL,
	          dashdash ? argv + dashdash + 1 : NULL, dashdash ? argc - dashdash - 1 : 0);
	if (rc == 0 && (rc = run(&e)) == 0) {
		snprintf(a0, sizeof(a0), "%s/a0.h5", e.tmp);
		snprintf(s0, sizeof(s0), "%s/s0.h5", e.tmp);
		/* the error over time: not for an MPI run's per-rank files */
		if ((rc = cmd_evaluate_qoi_read(&e.qoi, e.w, a0, s0, e.ranks)) == 0 &&
		    (e.ranks > 1 || (rc = over_time(&e, a0, s0)) == 0)) {
			read_latency(&e);
			predict(&e);
			if ((rc = record(&e, a0, s0)) == 0)
				cmd_evaluate_print(&e);
		}
	}
	if (rc < 0)
		code = cmd_fail(rc);
	else if (rc > 0)   /* an exit status, its message printed (collect_mpi.h) */
		code = rc;
	if (e.tmp) {
		char dest[4096];

		snprintf(dest, sizeof(dest), "%s/eval/%s-runs", hml__store_dir(e.s), e.eid);
		if (!(keep && code == HML_EXIT_OK &&
		      hml__beneath_rename(hml__store_dir(e.s), e.tmp, dest, 1) == 0))
			cmd_evaluate_runs_remove(e.tmp, e.nrep + 1, e.ranks);
	}
	evaluation_release(&e);
	return cmd_finish(code);
}
