/*
 * lib/store/qoi_compare.c - the QoI data sets of two runs compared.
 */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/json.h"
#include "core/qoi_file.h"
#include "store/qoi_compare.h"

struct hml__qoi_ref {
	const hml__workflow *w;
	int ranks;            /* the runs' MPI ranks, each with its QoI file */
	double **values;      /* [w->nqoi] */
	size_t *n;
};

void hml__qoi_ref_free(hml__qoi_ref *ref)
{
	if (!ref)
		return;
	for (size_t i = 0; ref->values && i < ref->w->nqoi; i++)
		free(ref->values[i]);
	free(ref->values);
	free(ref->n);
	free(ref);
}

int hml__qoi_ref_load(hml__qoi_ref **out, const hml__workflow *w, const char *path,
                      int ranks)
{
	hml__qoi_ref *ref = calloc(1, sizeof(*ref));
	int rc = 0;

	*out = NULL;
	if (!ref || !(ref->values = calloc(w->nqoi, sizeof(*ref->values))) ||
	    !(ref->n = calloc(w->nqoi, sizeof(*ref->n)))) {
		free(ref ? ref->values : NULL);
		free(ref);
		return hml__error_oom();
	}
	ref->w = w;
	ref->ranks = ranks;
	for (size_t i = 0; i < w->nqoi && rc == 0; i++)
		rc = hml__qoi_file_read_ranks(path, ranks, w->qoi[i].dataset, &ref->values[i],
		                              &ref->n[i]);
	if (rc < 0) {
		hml__qoi_ref_free(ref);
		return rc;
	}
	*out = ref;
	return 0;
}

int hml__qoi_ref_check_finite(const hml__qoi_ref *ref, const char *what)
{
	for (size_t i = 0; i < ref->w->nqoi; i++) {
		size_t bad = 0;

		for (size_t k = 0; k < ref->n[i]; k++)
			bad += !isfinite(ref->values[i][k]);
		if (bad)
			return hml__error_set(HML_ERROR, "the accurate run (%s) gave %zu of %zu values "
			                      "of quantity of interest '%s' as NaN or Inf: no model can "
			                      "be judged against it", what, bad, ref->n[i],
			                      ref->w->qoi[i].dataset);
	}
	return 0;
}

int hml__qoi_compare(hml__qoi_result *out, const hml__qoi_ref *ref, const char *path,
                     const char *what)
{
	const hml__workflow *w = ref->w;
	int rc = 0;

	for (size_t i = 0; i < w->nqoi && rc == 0; i++) {
		const hml__workflow_qoi *q = &w->qoi[i];
		hml__qoi_result *r = &out[i];
		double *v = NULL;
		size_t nv = 0;

		if ((rc = hml__qoi_file_read_ranks(path, ref->ranks, q->dataset, &v, &nv)) < 0)
			break;
		if (nv != ref->n[i])
			rc = hml__error_set(HML_ESHAPE, "quantity of interest '%s' has %zu values in "
			                    "the accurate run but %zu with %s", q->dataset, ref->n[i],
			                    nv, what);
		if (rc == 0) {
			r->qoi = q;
			hml__errors_compute_floor(&r->err, ref->values[i], v, nv, q->mape_floor);
			r->error = hml__errors_metric(&r->err, q->metric);
			r->passed = isnan(q->max_error) || r->error <= q->max_error;
		}
		free(v);
	}
	return rc;
}

const hml__qoi_result *hml__qoi_failed(const hml__qoi_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!r[i].passed)
			return &r[i];
	return NULL;
}

json_t *hml__qoi_results_json(const hml__qoi_result *r, size_t n)
{
	json_t *a = json_array(), *o;

	for (size_t i = 0; a && i < n; i++) {
		const hml__errors *e = &r[i].err;

		o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
			"dataset", r[i].qoi->dataset, "metric", r[i].qoi->metric,
			"error", hml__json_real(r[i].error), "rmse", hml__json_real(e->rmse),
			"mape", hml__json_real(e->mape), "max_abs", hml__json_real(e->max_abs),
			"mae", hml__json_real(e->mae), "values", (json_int_t)e->n,
			"mape_values", (json_int_t)e->mape_n, "nonfinite", (json_int_t)e->nonfinite);
		if (o && !isnan(r[i].qoi->max_error)) {
			json_object_set_new(o, "max_error", json_real(r[i].qoi->max_error));
			json_object_set_new(o, "passed", json_boolean(r[i].passed));
		}
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}
