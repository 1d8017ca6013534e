/*
 * hml deploy --max-qoi-error E: the fastest model whose error on the
 * application's own output stays within E, found by running it.
 *
 * A validation RMSE is the region's error on held-out rows; what a
 * scientist bounds is the error of the quantity of interest (the
 * workflow's "qoi"), which the region's error reaches through the rest of
 * the application, damped or amplified. So the candidates on the
 * (validation error, speed) front (lib/store/select.h hml__select_front) are
 * checked by running the application: once accurately, recording the QoI,
 * then once with each model checked. The check run uses the workflow's
 * collect arguments with a seed that no data set of the experiment was
 * collected with and that hml evaluate's arguments do not use, so that
 * neither the training data nor the later evaluation chooses the model.
 *
 * Along the front the validation error rises as the models get faster;
 * the QoI error is taken to rise with it, and the walk is a bisection:
 * the most accurate candidate first (when even it misses E, nothing
 * does), then halving, about 1 + log2(front) checks. Every check is
 * recorded with the deployment; the model chosen always passed its own.
 * A check runs the model's TorchScript form: its C form was checked
 * against it when compiled (cmd/deploy_c.c) and gives the same outputs
 * to float rounding.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "core/qoi_file.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "deploy/metrics.h"
#include "run/argv.h"
#include "run/childenv.h"
#include "run/workflow.h"
#include "store/checked.h"
#include "store/records.h"
#include "store/select.h"
#include "store/store.h"

typedef struct qoi_walk {
	hml__store *s;
	const hml__candidate *c;
	hml__workflow *w;
	const char *region, *metric;
	char *tmp, **argv;
	int64_t seed;
	double max, *ref;     /* the bound; the accurate run's QoI */
	size_t nref;
	json_t *checks;       /* [{model, target, error, within} or {..., failed}] */
	int nchecks;
} qoi_walk;

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
static int check_argv(qoi_walk *q)
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
	return rc;
}

/* Paths of check k's files (k < 0: the accurate run). */
static void run_paths(const qoi_walk *q, int k, char *qoi, char *log, size_t size)
{
	snprintf(qoi, size, "%s/%s%d.h5", q->tmp, k < 0 ? "a" : "s", k < 0 ? 0 : k);
	snprintf(log, size, "%s/%s%d.log", q->tmp, k < 0 ? "a" : "s", k < 0 ? 0 : k);
}

static void remove_runs(const qoi_walk *q)
{
	char qoi[4096], log[4096];

	if (!q->tmp)
		return;
	for (int k = -1; k < q->nchecks; k++) {
		run_paths(q, k, qoi, log, sizeof(qoi));
		unlink(qoi);
		unlink(log);
	}
	rmdir(q->tmp);
}

/* The accurate run that records the reference QoI. */
static int reference(qoi_walk *q)
{
	hml__run_config config = { HML__RUN_ACCURATE, NULL, NULL, NULL, NULL, NULL };
	char qoi[4096], log[4096];
	int rc;

	if (!(q->tmp = hml__store_tmp_path(q->s, "eval", "")))
		return hml__error_oom();
	if (mkdir(q->tmp, 0777) != 0) {
		rc = hml__error_set(HML_EIO, "cannot create '%s': %s", q->tmp, strerror(errno));
		free(q->tmp);
		q->tmp = NULL;
		return rc;
	}
	run_paths(q, -1, qoi, log, sizeof(qoi));
	config.qoi = qoi;
	cmd_info("QoI check: workflow '%s', seed %lld: accurate run", q->w->name,
	         (long long)q->seed);
	if ((rc = cmd_app_run(q->w, q->argv, &config, log, NULL, NULL)) < 0)
		return rc;
	return hml__qoi_file_read(qoi, q->w->qoi_dataset, &q->ref, &q->nref);
}

/* Run candidate i with its model; its QoI error into *err (NaN when the
 * run failed or compared nothing; the reason is recorded). */
static int check(qoi_walk *q, size_t i, double *err)
{
	hml__run_config config = { HML__RUN_SURROGATE, NULL, q->region, NULL, NULL, NULL };
	const hml__candidate *c = &q->c[i];
	char qoi[4096], log[4096], *path = NULL;
	double *v = NULL;
	size_t nv = 0;
	hml__errors e;
	hml__model_view mv;
	json_t *rec;
	int rc, k = q->nchecks++;

	*err = NAN;
	run_paths(q, k, qoi, log, sizeof(qoi));
	config.qoi = qoi;
	if ((rc = hml__checked_model(q->s, c->model, &mv, &path)) < 0)
		return rc;
	config.model = path;
	rec = json_pack("{s:s, s:s}", "model", c->model, "target", hml__target_name(c->target));
	rc = cmd_app_run(q->w, q->argv, &config, log, NULL, NULL);
	free(path);
	if (rc == 0 && (rc = hml__qoi_file_read(qoi, q->w->qoi_dataset, &v, &nv)) == 0 &&
	    nv != q->nref)
		rc = hml__error_set(HML_ESHAPE, "quantity of interest '%s' has %zu values in the "
		                    "accurate run but %zu with model '%s'", q->w->qoi_dataset,
		                    q->nref, nv, c->model);
	if (rc == 0) {
		hml__errors_compute_floor(&e, q->ref, v, nv, q->w->qoi_mape_floor);
		*err = hml__errors_metric(&e, q->metric);
	}
	free(v);
	if (rc < 0 && (cmd_interrupted || rc == HML_ENOMEM)) {
		json_decref(rec);
		return rc;
	}
	if (rc < 0)
		json_object_set_new(rec, "failed", json_string(hml_error_last()->message));
	json_object_set_new(rec, "error", hml__json_real(*err));
	json_object_set_new(rec, "within", json_boolean(*err <= q->max));
	json_array_append_new(q->checks, rec);
	if (rc < 0)
		cmd_warn("QoI check of model '%s': %s", c->model, hml_error_last()->message);
	else
		cmd_info("QoI check %d: model '%s': %s %s %.4g (%s %g)", k + 1, c->model,
		         q->w->qoi_dataset, q->metric, *err, *err <= q->max ? "within" : "over",
		         q->max);
	return 0;
}

/* The workflow and region of the candidates walked: one of each, or
 * the user must choose a region. */
static int plan(qoi_walk *q, const size_t *idx, size_t m)
{
	hml__model_view mv, other;
	char *path = NULL;
	int rc;

	if ((rc = hml__checked_model(q->s, q->c[idx[m - 1]].model, &mv, &path)) < 0)
		return rc;
	free(path);
	for (size_t i = 0; i < m; i++) {
		if ((rc = hml__records_model(&other, q->s, q->c[idx[i]].model)) < 0)
			return rc;
		if (!other.region || !mv.region || strcmp(other.region, mv.region) != 0 ||
		    !other.workflow || !mv.workflow || strcmp(other.workflow, mv.workflow) != 0)
			return hml__error_set(HML_EINVALID, "--max-qoi-error: the candidates replace "
			                      "more than one region ('%s' of '%s', '%s' of '%s'); "
			                      "choose one with --region", mv.region ? mv.region : "?",
			                      mv.workflow ? mv.workflow : "?",
			                      other.region ? other.region : "?",
			                      other.workflow ? other.workflow : "?");
	}
	if ((rc = hml__checked_model_workflow(q->s, &mv, &q->w)) < 0)
		return rc;
	q->region = mv.region;
	q->metric = q->w->qoi_metric ? q->w->qoi_metric : "rmse";
	return check_argv(q);
}

/* The bisection over idx[0 .. m), fastest first: the first index whose
 * check passes, assuming the checks pass from some index on. */
static int walk(qoi_walk *q, const size_t *idx, size_t m, size_t *found, double *found_err)
{
	size_t lo = 0, hi = m - 1;
	char val[32] = "no value";
	double err;
	int rc;

	if ((rc = check(q, idx[hi], &err)) < 0)
		return rc;
	if (!isnan(err))
		snprintf(val, sizeof(val), "%.4g", err);
	if (!(err <= q->max))
		return hml__error_set(HML_ENOTFOUND, "no model's %s %s is within %g: the most "
		                      "accurate candidate, '%s', gives %s on a run with seed %lld",
		                      q->w->qoi_dataset, q->metric, q->max, q->c[idx[hi]].model,
		                      val, (long long)q->seed);
	*found_err = err;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((rc = check(q, idx[mid], &err)) < 0)
			return rc;
		if (err <= q->max) {
			hi = mid;
			*found_err = err;
		} else {
			lo = mid + 1;
		}
	}
	*found = idx[hi];
	return 0;
}

int cmd_deploy_by_qoi(hml__store *s, const hml__candidate *c, size_t n,
                      const hml__select_bounds *b, double max_qoi, size_t *pick,
                      json_t **report)
{
	qoi_walk q = { s, c, NULL, NULL, NULL, NULL, NULL, 0, max_qoi, NULL, 0, NULL, 0 };
	size_t *idx = malloc((n ? n : 1) * sizeof(size_t)), m = 0;
	double err = NAN;
	int rc;

	*report = NULL;
	if (!idx || !(q.checks = json_array()))
		rc = hml__error_oom();
	else if ((rc = hml__select_front(c, n, b, idx, &m)) == 0 &&
	         (rc = plan(&q, idx, m)) == 0 && (rc = reference(&q)) == 0)
		rc = walk(&q, idx, m, pick, &err);
	if (rc == 0) {
		json_t *argv = json_array();

		for (char **a = q.argv; argv && *a; a++)
			json_array_append_new(argv, json_string(*a));
		*report = json_pack("{s:s, s:s, s:f, s:o, s:I, s:s, s:i, s:o, s:o}",
		                    "dataset", q.w->qoi_dataset, "metric", q.metric, "max", max_qoi,
		                    "argv", argv, "seed", (json_int_t)q.seed, "form", "torchscript",
		                    "front", (int)m, "checks", q.checks, "error", hml__json_real(err));
		q.checks = NULL;
		if (!*report)
			rc = hml__error_oom();
	}
	remove_runs(&q);
	json_decref(q.checks);
	free(q.tmp);
	free(q.ref);
	free(idx);
	hml__strv_free(q.argv);
	hml__workflow_free(q.w);
	return rc;
}
