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
 * then once with each model checked (cmd/qoi_check.c: the check run, on a
 * seed that neither the training data nor hml evaluate uses).
 *
 * Along the front the validation error rises as the models get faster;
 * the QoI error is taken to rise with it, and the walk is a bisection:
 * the most accurate candidate first (when even it misses E, nothing
 * does), then halving, about 1 + log2(front) checks. Every check is
 * recorded with the deployment; the model chosen always passed its own.
 * A check passes when the primary QoI's error is within E and every data
 * set of the workflow with a max_error is within it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "deploy/latency.h"
#include "store/qoi_compare.h"
#include "store/records.h"
#include "store/select.h"
#include "store/store.h"

typedef struct qoi_walk {
	hml__store *s;
	const hml__candidate *c;
	cmd_qoi_check *q;
	double max;           /* the bound */
} qoi_walk;

/* Candidate i's QoI error into *err (NaN when its run failed), and
 * whether it passes (*ok), recorded. */
static int check(qoi_walk *w, size_t i, double *err, int *ok)
{
	const hml__candidate *c = &w->c[i];

	return cmd_qoi_check_model(w->q, c->model, hml__target_name(c->target), w->max, err, ok);
}

/* Why the most accurate candidate, `model`, failed its check. */
static int refuse(const qoi_walk *w, const char *model, double err)
{
	const hml__qoi_result *f = cmd_qoi_check_failed(w->q);
	long long seed = (long long)cmd_qoi_check_seed(w->q);
	char val[32] = "no value";

	if (!isnan(err))
		snprintf(val, sizeof(val), "%.4g", err);
	if (!(err <= w->max) || !f)
		return hml__error_set(HML_ENOTFOUND, "no model's %s %s is within %g: the most "
		                      "accurate candidate, '%s', gives %s on a run with seed %lld",
		                      cmd_qoi_check_dataset(w->q), cmd_qoi_check_metric(w->q), w->max,
		                      model, val, seed);
	return hml__error_set(HML_ENOTFOUND, "no model's %s %s is within its max_error %g: the "
	                      "most accurate candidate, '%s', gives %.4g on a run with seed %lld",
	                      f->qoi->dataset, f->qoi->metric, f->qoi->max_error, model, f->error,
	                      seed);
}

/* The candidates walked replace one region of one workflow, or the user
 * must choose a region. */
static int one_region(const qoi_walk *w, const size_t *idx, size_t m)
{
	hml__model_view mv, other;
	int rc;

	if ((rc = hml__records_model(&mv, w->s, w->c[idx[m - 1]].model)) < 0)
		return rc;
	for (size_t i = 0; i < m; i++) {
		if ((rc = hml__records_model(&other, w->s, w->c[idx[i]].model)) < 0)
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
	return 0;
}

/* The bisection over idx[0 .. m), fastest first: the first index whose
 * check passes, assuming the checks pass from some index on. */
static int walk(qoi_walk *w, const size_t *idx, size_t m, size_t *found, double *found_err)
{
	size_t lo = 0, hi = m - 1;
	double err;
	int rc, ok;

	if ((rc = check(w, idx[hi], &err, &ok)) < 0)
		return rc;
	if (!ok)
		return refuse(w, w->c[idx[hi]].model, err);
	*found_err = err;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((rc = check(w, idx[mid], &err, &ok)) < 0)
			return rc;
		if (ok) {
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
	qoi_walk w = { s, c, NULL, max_qoi };
	size_t *idx = malloc((n ? n : 1) * sizeof(size_t)), m = 0;
	double err = NAN;
	int rc;

	*report = NULL;
	if (!idx)
		rc = hml__error_oom();
	else if ((rc = hml__select_front(c, n, b, idx, &m)) == 0 &&
	         (rc = one_region(&w, idx, m)) == 0 &&
	         (rc = cmd_qoi_check_open(&w.q, s, c[idx[m - 1]].model)) == 0)
		rc = walk(&w, idx, m, pick, &err);
	if (rc == 0 && (*report = cmd_qoi_check_report(w.q))) {
		json_object_set_new(*report, "max", json_real(max_qoi));
		json_object_set_new(*report, "front", json_integer((json_int_t)m));
		json_object_set_new(*report, "error", hml__json_real(err));
	} else if (rc == 0) {
		rc = HML_ENOMEM;
	}
	cmd_qoi_check_free(w.q);
	free(idx);
	return rc;
}
