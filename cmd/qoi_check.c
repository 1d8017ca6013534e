/*
 * The QoI check: the application run once accurately and once per model
 * checked, on a seed no data set was collected with, and the error of each
 * of its quantities of interest (the workflow's "qoi", compared in
 * lib/store/qoi_compare.c) in its metric; the primary's is "the QoI error".
 * hml deploy --max-qoi-error walks a front with it (cmd/deploy_qoi.c);
 * hml search --qoi-check K checks its front's most accurate models.
 *
 * The check run uses the workflow's collect arguments with the first seed
 * after every collected one, skipping the one that would give hml
 * evaluate's command line, so that neither the training data nor the
 * later evaluation chooses the model. A check runs the model's
 * TorchScript form: its C form was checked against it when compiled
 * (cmd/deploy_c.c) and gives the same outputs to float rounding. An MPI
 * workflow's check runs are started under its launcher with its ranks, as
 * hml evaluate starts them, and its QoI is read from every rank's file
 * (lib/store/qoi_compare.h).
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
#include "evaluate_mpi.h"
#include "core/json.h"
#include "core/util.h"
#include "deploy/metrics.h"
#include "run/argv.h"
#include "run/childenv.h"
#include "run/workflow.h"
#include "store/checked.h"
#include "store/qoi_compare.h"
#include "store/records.h"
#include "store/store.h"

struct cmd_qoi_check {
	hml__store *s;
	hml__workflow *w;
	const char *region, *metric;
	char *tmp, **argv;
	int64_t seed;
	int ranks;            /* an MPI workflow's (under its launcher), else 1 */
	hml__qoi_ref *ref;    /* the accurate run's QoI */
	hml__qoi_result *last;/* [w->nqoi]: the last check's comparison */
	int last_ok;          /* it compared (its run did not fail) */
	json_t *checks;       /* [{model, target, error, qois} or {..., failed}] */
	int nchecks;
	double acc_wall;      /* the accurate run's: the checks' time limit */
};

static int strv_equal(char *const *a, char *const *b)
{
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b) != 0)
			return 0;
	return !*a && !*b;
}

/* The check run's argv: collect's arguments with the first seed after
 * every collected one (and the workflow's), skipping the one that would
 * give evaluate's command line. */
static int check_argv(cmd_qoi_check *q)
{
	char **eval = NULL;
	int64_t seed = hml__records_max_seed(q->s);
	int rc;

	if (seed < q->w->collect_seed)
		seed = q->w->collect_seed;
	if ((rc = hml__argv_build(&eval, q->w->program, (const char *const *)q->w->evaluate_args,
	                          NULL)) < 0)
		return rc;
	for (int k = 0; k < 2 && rc == 0; k++) {
		q->seed = seed < HML__SEED_MAX ? ++seed : seed;
		hml__strv_free(q->argv);
		q->argv = NULL;
		if ((rc = hml__argv_build(&q->argv, q->w->program,
		                          (const char *const *)q->w->collect_args, &q->seed)) < 0)
			break;
		if (!strv_equal(q->argv, eval))
			break;
	}
	hml__strv_free(eval);
	q->ranks = 1;
	if (rc == 0 && q->w->launcher) {   /* mpirun -n 3 PROGRAM ARGS */
		char **launcher = NULL, **app = q->argv;

		q->argv = NULL;
		if ((rc = collect_mpi_launcher_find(&launcher, q->w)) == 0)
			rc = hml__argv_launch(&q->argv, (const char *const *)launcher, q->w->ranks,
			                      app);
		hml__strv_free(launcher);
		hml__strv_free(app);
		q->ranks = q->w->ranks;
	}
	return rc;
}

/* Paths of check k's files (k < 0: the accurate run). */
static void run_paths(const cmd_qoi_check *q, int k, char *qoi, char *log, size_t size)
{
	snprintf(qoi, size, "%s/%s%d.h5", q->tmp, k < 0 ? "a" : "s", k < 0 ? 0 : k);
	snprintf(log, size, "%s/%s%d.log", q->tmp, k < 0 ? "a" : "s", k < 0 ? 0 : k);
}

/* The accurate run that records the reference QoI. */
static int reference(cmd_qoi_check *q)
{
	hml__run_config config = { HML__RUN_ACCURATE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0 };
	char qoi[4096], log[4096], what[64];
	int rc;

	if (!(q->tmp = hml__store_tmp_dir(q->s, "eval")))   /* never through a link */
		return hml_error_last()->code;
	run_paths(q, -1, qoi, log, sizeof(qoi));
	config.qoi = qoi;
	cmd_info("QoI check: workflow '%s', seed %lld: accurate run", q->w->name,
	         (long long)q->seed);
	if ((rc = cmd_app_run(q->w, q->argv, &config, log,
	                      hml__records_run_wall_max(q->s, q->w->name), &q->acc_wall,
	                      NULL)) < 0 ||
	    (rc = hml__qoi_ref_load(&q->ref, q->w, qoi, q->ranks)) < 0)
		return rc;
	snprintf(what, sizeof(what), "seed %lld", (long long)q->seed);
	if ((rc = hml__qoi_ref_check_finite(q->ref, what)) < 0) {
		cmd_log_tail(log, "the accurate run's log");
		return rc;
	}
	return 0;
}

int cmd_qoi_check_open(cmd_qoi_check **out, hml__store *s, const char *model)
{
	cmd_qoi_check *q;
	hml__model_view mv;
	char *path = NULL;
	int rc;

	*out = NULL;
	if (!(q = calloc(1, sizeof(*q))) || !(q->checks = json_array())) {
		free(q);
		return hml__error_oom();
	}
	q->s = s;
	if ((rc = hml__checked_model(s, model, &mv, &path)) < 0 ||
	    (rc = hml__checked_model_workflow(s, &mv, &q->w)) < 0)
		goto fail;
	q->region = mv.region;
	q->metric = q->w->qoi[0].metric;
	if (!(q->last = calloc(q->w->nqoi, sizeof(*q->last)))) {
		rc = hml__error_oom();
		goto fail;
	}
	if ((rc = check_argv(q)) < 0 || (rc = reference(q)) < 0)
		goto fail;
	free(path);
	*out = q;
	return 0;
fail:
	free(path);
	cmd_qoi_check_free(q);
	return rc;
}

/* Model `model`'s run compared into q->last. */
static int run_model(cmd_qoi_check *q, const char *model, int k)
{
	hml__run_config config = { HML__RUN_SURROGATE, NULL, q->region, NULL, NULL, NULL, NULL, NULL, 0 };
	char qoi[4096], log[4096], what[128], *path = NULL;
	hml__model_view mv;
	int rc;

	run_paths(q, k, qoi, log, sizeof(qoi));
	config.qoi = qoi;
	if ((rc = hml__checked_model(q->s, model, &mv, &path)) < 0)
		return rc;
	config.model = path;
	rc = cmd_app_run(q->w, q->argv, &config, log, q->acc_wall, NULL, NULL);
	free(path);
	snprintf(what, sizeof(what), "model '%s'", model);
	return rc < 0 ? rc : hml__qoi_compare(q->last, q->ref, qoi, what);
}

/* Each data set's error after the primary's, with its bound: "; mass
 * rmse 0.3 (over max_error 0.1)". */
static void others_text(const cmd_qoi_check *q, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < q->w->nqoi && len < size; i++) {
		const hml__qoi_result *r = &q->last[i];

		if (i > 0)
			len += (size_t)snprintf(buf + len, size - len, "; %s %s %.4g", r->qoi->dataset,
			                        r->qoi->metric, r->error);
		if (len < size && !isnan(r->qoi->max_error))
			len += (size_t)snprintf(buf + len, size - len, " (%s max_error %g)",
			                        r->passed ? "within" : "over", r->qoi->max_error);
	}
}

/* A bound on the check: --max-qoi-error's, or a data set's max_error. */
static int has_bound(const cmd_qoi_check *q, double max)
{
	for (size_t i = 0; i < q->w->nqoi; i++)
		if (!isnan(q->w->qoi[i].max_error))
			return 1;
	return !isnan(max);
}

int cmd_qoi_check_model(cmd_qoi_check *q, const char *model, const char *target, double max,
                        double *err, int *within)
{
	char bound[64] = "", others[512];
	json_t *rec = json_pack("{s:s, s:s}", "model", model, "target", target);
	int k = q->nchecks++, rc;

	*err = NAN;
	*within = 0;
	if (!rec)
		return hml__error_oom();
	rc = run_model(q, model, k);
	q->last_ok = rc == 0;
	if (rc < 0 && (cmd_interrupted || rc == HML_ENOMEM)) {
		json_decref(rec);
		return rc;
	}
	if (rc < 0) {
		json_object_set_new(rec, "failed", json_string(hml_error_last()->message));
		cmd_warn("QoI check of model '%s': %s", model, hml_error_last()->message);
	} else {
		*err = q->last[0].error;
		*within = (isnan(max) || *err <= max) && !hml__qoi_failed(q->last, q->w->nqoi);
		if (!isnan(max))
			snprintf(bound, sizeof(bound), " (%s %g)", *err <= max ? "within" : "over", max);
		others_text(q, others, sizeof(others));
		cmd_info("QoI check %d: model '%s': %s %s %.4g%s%s", k + 1, model, q->w->qoi[0].dataset,
		         q->metric, *err, bound, others);
		json_object_set_new(rec, "qois", hml__qoi_results_json(q->last, q->w->nqoi));
	}
	json_object_set_new(rec, "error", hml__json_real(*err));
	if (has_bound(q, max))
		json_object_set_new(rec, "within", json_boolean(*within));
	json_array_append_new(q->checks, rec);
	return 0;
}

const hml__qoi_result *cmd_qoi_check_failed(const cmd_qoi_check *q)
{
	return q->last_ok ? hml__qoi_failed(q->last, q->w->nqoi) : NULL;
}

json_t *cmd_qoi_check_report(const cmd_qoi_check *q)
{
	json_t *argv = json_array(), *r;

	for (char **a = q->argv; argv && *a; a++)
		json_array_append_new(argv, hml__json_bytes(*a));
	r = json_pack("{s:s, s:s, s:o, s:I, s:s, s:O}", "dataset", q->w->qoi[0].dataset,
	              "metric", q->metric, "argv", argv, "seed", (json_int_t)q->seed,
	              "form", "torchscript", "checks", q->checks);
	if (!r)
		hml__error_oom();
	return r;
}

const char *cmd_qoi_check_metric(const cmd_qoi_check *q)
{
	return q->metric;
}

const char *cmd_qoi_check_dataset(const cmd_qoi_check *q)
{
	return q->w->qoi[0].dataset;
}

int64_t cmd_qoi_check_seed(const cmd_qoi_check *q)
{
	return q->seed;
}

void cmd_qoi_check_free(cmd_qoi_check *q)
{
	if (!q)
		return;
	if (q->tmp)   /* a0 and s0 .. s<n-1>, each rank's */
		cmd_evaluate_runs_remove(q->tmp, q->nchecks > 1 ? q->nchecks : 1, q->ranks);
	json_decref(q->checks);
	free(q->tmp);
	hml__qoi_ref_free(q->ref);
	free(q->last);
	hml__strv_free(q->argv);
	hml__workflow_free(q->w);
	free(q);
}
