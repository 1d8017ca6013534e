/*
 * lib/store/select.c - choosing a (model, target) pair under bounds (select.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "deploy/latency.h"
#include "deploy/metrics.h"
#include "store/records.h"
#include "store/select.h"

int hml__select_check_bound(const char *name, double v)
{
	if (isnan(v))
		return 0;
	if (!isfinite(v) || v <= 0)
		return hml__error_set(HML_EINVALID, "--%s must be a positive finite number, not %g",
		                      name, v);
	return 0;
}

double hml__candidate_run_cost(const hml__candidate *c)
{
	if (!(c->rows_per_run > 0) || !(c->startup >= 0) || !(c->latency > 0))
		return NAN;
	return c->startup + c->rows_per_run * c->latency;
}

void hml__candidate_predict(const hml__candidate *c, hml__prediction *p)
{
	hml__predict(p, &c->cost, c->latency, c->startup, &c->sched);
}

int hml__candidate_slower(const hml__candidate *c)
{
	hml__prediction p;

	hml__candidate_predict(c, &p);
	return p.slower;
}

/* Speed order of a and b: < 0 when a is faster, > 0 when b is, 0 for a
 * tie. Per run when both have a run cost, else per sample; unmeasured is
 * slower than anything measured. */
static int speed_cmp(const hml__candidate *a, const hml__candidate *b)
{
	double ka = hml__candidate_run_cost(a), kb = hml__candidate_run_cost(b);

	if (isnan(ka) || isnan(kb)) {
		ka = isnan(a->latency) ? INFINITY : a->latency;
		kb = isnan(b->latency) ? INFINITY : b->latency;
	}
	return ka < kb ? -1 : ka > kb;
}

/* 1 when candidate a is better than b under the objective. */
static int better(const hml__candidate *a, const hml__candidate *b, int fastest)
{
	int sp = speed_cmp(a, b);

	if (fastest) {
		if (sp)
			return sp < 0;
		return a->error < b->error;
	}
	if (a->error != b->error)
		return a->error < b->error;
	return sp < 0;
}

/* Within the error and latency bounds, predicted slower or not. */
static int within_bounds(const hml__candidate *c, const hml__select_bounds *b)
{
	if (!isnan(b->max_error) && !(c->error <= b->max_error))
		return 0;
	if (!isnan(b->max_latency) && !(c->latency <= b->max_latency))
		return 0;
	return 1;
}

static int within(const hml__candidate *c, const hml__select_bounds *b)
{
	return within_bounds(c, b) && (b->allow_slower || !hml__candidate_slower(c));
}

/* Candidates within the bounds, all predicted slower: name the fastest
 * against the region's cost. */
static int all_slower(const hml__candidate *c, size_t n, const hml__select_bounds *b)
{
	const hml__candidate *fast = NULL;
	hml__prediction p;
	char cost[32], lat[64], speed[48];

	for (size_t i = 0; i < n; i++)
		if (!isnan(c[i].error) && within_bounds(&c[i], b) &&
		    (!fast || c[i].latency < fast->latency))
			fast = &c[i];
	if (!fast)
		return 0;
	hml__candidate_predict(fast, &p);
	return hml__error_set(HML_ENOTFOUND, "no model is predicted faster than the original "
	                      "code: the region costs %s per row, the fastest model %s ('%s' "
	                      "as %s, %s)", hml__format_seconds(cost, sizeof(cost), p.cost_per_row, 2),
	                      hml__prediction_model_text(lat, sizeof(lat), &p),
	                      fast->model, hml__target_name(fast->target),
	                      hml__prediction_speed_text(speed, sizeof(speed), &p));
}

/* Nothing within the bounds: say what the best achievable is. */
static int none_within(const hml__candidate *c, size_t n, const hml__select_bounds *b)
{
	const hml__candidate *acc = NULL, *fast = NULL;
	int rc;

	if (!b->allow_slower && (rc = all_slower(c, n, b)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (isnan(c[i].error))
			continue;
		if (!acc || better(&c[i], acc, 0))
			acc = &c[i];
		if (!isnan(c[i].latency) && (!fast || better(&c[i], fast, 1)))
			fast = &c[i];
	}
	if (isnan(b->max_latency))
		return hml__error_set(HML_ENOTFOUND, "no model has a validation RMSE within %g "
		                      "(the lowest is %g, model '%s')", b->max_error, acc->error,
		                      acc->model);
	if (!fast)
		return hml__error_set(HML_ENOTFOUND, "no model runs within %g s per sample (no "
		                      "model has a measured latency)", b->max_latency);
	if (isnan(b->max_error))
		return hml__error_set(HML_ENOTFOUND, "no model runs within %g s per sample (the "
		                      "fastest is %g s, model '%s' as %s)", b->max_latency,
		                      fast->latency, fast->model, hml__target_name(fast->target));
	return hml__error_set(HML_ENOTFOUND, "no model has a validation RMSE within %g and runs "
	                      "within %g s per sample (the lowest RMSE is %g, model '%s'; the "
	                      "fastest is %g s, model '%s' as %s)", b->max_error, b->max_latency,
	                      acc->error, acc->model, fast->latency, fast->model,
	                      hml__target_name(fast->target));
}

/* Of two candidates with one QoI error, 1 when a is predicted the faster
 * end to end (both known), else when it is the faster by speed_cmp. */
static int qoi_tie_better(const hml__candidate *a, const hml__candidate *b)
{
	hml__prediction pa, pb;

	hml__candidate_predict(a, &pa);
	hml__candidate_predict(b, &pb);
	if (pa.end_to_end > 0 && pb.end_to_end > 0 && pa.end_to_end != pb.end_to_end)
		return pa.end_to_end > pb.end_to_end;
	return speed_cmp(a, b) < 0;
}

/* --best among candidates with a QoI error: the lowest, ties the one
 * predicted faster; n when none within the bounds has one. */
static size_t best_qoi(const hml__candidate *c, size_t n, const hml__select_bounds *b)
{
	size_t best = n;

	for (size_t i = 0; i < n; i++)
		if (!isnan(c[i].error) && !isnan(c[i].qoi_error) && within(&c[i], b) &&
		    (best == n || c[i].qoi_error < c[best].qoi_error ||
		     (c[i].qoi_error == c[best].qoi_error && qoi_tie_better(&c[i], &c[best]))))
			best = i;
	return best;
}

int hml__select(const hml__candidate *c, size_t n, const hml__select_bounds *b, size_t *pick)
{
	int fastest = !isnan(b->max_error) && isnan(b->max_latency);
	size_t best = n, known = 0;
	int rc;

	if ((rc = hml__select_check_bound("max-error", b->max_error)) < 0 ||
	    (rc = hml__select_check_bound("max-latency", b->max_latency)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (isnan(c[i].error))
			continue;
		known++;
		if (within(&c[i], b) && (best == n || better(&c[i], &c[best], fastest)))
			best = i;
	}
	if (!known)
		return hml__error_set(HML_ENOTFOUND, "no model to choose from (none has a "
		                      "validation RMSE)");
	if (best == n)
		return none_within(c, n, b);
	if (isnan(b->max_error) && isnan(b->max_latency) && best_qoi(c, n, b) < n)
		best = best_qoi(c, n, b);
	*pick = best;
	return 0;
}

/* 1 when candidate a dominates b (a at index ia, b at ib). */
static int dominates(const hml__candidate *a, size_t ia, const hml__candidate *b, size_t ib)
{
	int sp = speed_cmp(a, b);

	if (a->error > b->error || sp > 0)
		return 0;
	return a->error < b->error || sp < 0 || ia < ib;
}

int hml__select_front(const hml__candidate *c, size_t n, const hml__select_bounds *b,
                      size_t *idx, size_t *m)
{
	size_t first, i, j;
	int rc;

	*m = 0;
	if ((rc = hml__select(c, n, b, &first)) < 0)   /* bounds, and something within */
		return rc;
	for (i = 0; i < n; i++) {
		if (isnan(c[i].error) || !within(&c[i], b))
			continue;
		for (j = 0; j < n; j++)
			if (j != i && !isnan(c[j].error) && within(&c[j], b) &&
			    dominates(&c[j], j, &c[i], i))
				break;
		if (j == n)
			idx[(*m)++] = i;
	}
	/* Insertion sort, fastest first: fronts are short. */
	for (i = 1; i < *m; i++)
		for (j = i; j > 0 && better(&c[idx[j]], &c[idx[j - 1]], 1); j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	return 0;
}

int hml__select_target(const hml__candidate *c, size_t n, const char *model, size_t *pick)
{
	size_t best = n;

	for (size_t i = 0; i < n; i++)
		if (c[i].model && strcmp(c[i].model, model) == 0 && !isnan(c[i].latency) &&
		    (best == n || speed_cmp(&c[i], &c[best]) < 0))
			best = i;
	if (best == n)
		return hml__error_set(HML_ENOTFOUND, "model '%s' has no measured latency in any "
		                      "target", model);
	*pick = best;
	return 0;
}

/* Rows of model m's region per application run in the data sets it was
 * trained on (a mean rank's in an MPI run: each rank runs its own rows
 * and pays its own start-up), or NaN when unknown. */
static double rows_per_run(const hml__store *s, const hml__model_view *m)
{
	double rows = 0, runs = 0;
	const char *id;
	const json_t *v;

	if (!m->region)
		return NAN;
	json_object_foreach((json_t *)m->data_sha256, id, v) {
		hml__dataset_view d;

		if (hml__records_dataset(&d, s, id) < 0)
			return NAN;
		rows += (double)hml__dataset_view_rows(&d, m->region) /
		        hml__cost_processes(&d, m->region);
		runs += (double)json_array_size(d.runs);
	}
	return rows > 0 && runs > 0 ? rows / runs : NAN;
}

/* A form's start-up is its libraries' (libtorch and its plugin; the C
 * loader and OpenBLAS): model files load in milliseconds, and two cards'
 * figures for one form differ by measurement noise (tens of ms) more than
 * by model. So every candidate of a target gets the least start-up
 * measured for that target: between models of one form the per-run
 * order is then the per-sample order, and start-up only weighs between
 * forms. */
static void same_startup_per_target(hml__candidate *c, size_t n)
{
	for (int t = 0; t < HML__NTARGETS; t++) {
		double least = NAN;

		for (size_t i = 0; i < n; i++)
			if (c[i].target == t && c[i].startup >= 0 && !(c[i].startup >= least))
				least = c[i].startup;
		for (size_t i = 0; i < n; i++)
			if (c[i].target == t)
				c[i].startup = least;
	}
}

int hml__select_candidates(hml__candidate **out, size_t *n, const hml__store *s,
                           const char *region, unsigned targets)
{
	hml__model_view m;
	hml__candidate *c = NULL;
	size_t k = 0, cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; hml__records_model_at(&m, s, i); i++) {
		hml__latency l;
		hml__region_cost cost;
		int rc = hml__latency_of_record(&l, m.json);
		double rows;

		if (region && (!m.region || strcmp(m.region, region) != 0))
			continue;
		if (rc == HML_EINVALID) {
			hml__error_saved why;

			hml__error_save(&why);
			free(c);
			return hml__error_set(HML_EINVALID, "model '%s': %s", m.id ? m.id : "?",
			                      why.message);
		}
		if (rc == HML_ENOTFOUND)   /* a card without latencies: train's own figure */
			l.seconds[HML__TARGET_TORCHSCRIPT] = m.latency_s;
		rows = rows_per_run(s, &m);
		hml__cost_of_model(&cost, s, &m);
		for (int t = 0; t < HML__NTARGETS; t++) {
			if (!(targets & (1u << t)) || l.unavailable[t][0])
				continue;
			if (k == cap) {
				hml__candidate *p = realloc(c, (cap = cap ? 2 * cap : 16) * sizeof(*c));

				if (!p) {
					free(c);
					return hml__error_oom();
				}
				c = p;
			}
			c[k].model = m.id;
			c[k].target = t;
			c[k].error = m.val_error;
			c[k].latency = l.seconds[t];
			c[k].startup = l.startup[t];
			c[k].rows_per_run = rows;
			c[k].cost = cost;
			c[k].qoi_error = m.qoi_error;
			c[k].qoi_source = m.qoi_error_source;
			c[k].qoi_bad = m.qoi_error_bad;
			c[k].sched.k = m.k > 0 ? (double)m.k : NAN;
			c[k].sched.interleave = m.interleave > 0 ? m.interleave : 0;
			k++;
		}
	}
	same_startup_per_target(c, k);
	*out = c;
	*n = k;
	return 0;
}

/* 1 when model `id` is on the front of search record `rec`. */
static int on_front(const json_t *rec, const char *id)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(rec, "front"), i, e) {
		const json_t *m = json_object_get(e, "model");

		if (json_is_string(m) && strcmp(json_string_value(m), id) == 0)
			return 1;
	}
	return 0;
}

int hml__select_in_search(hml__candidate *c, size_t *n, const hml__store *s,
                          const char *search)
{
	const json_t *rec = hml__store_find(s, "searches", search);
	size_t k = 0, models = 0;
	const json_t *e;
	size_t i;

	if (!rec)
		return hml__error_set(HML_ENOTFOUND, "no search '%s' in experiment '%s'", search,
		                      hml__store_dir(s));
	json_array_foreach(json_object_get(rec, "front"), i, e)
		models += json_is_string(json_object_get(e, "model"));
	if (!models)
		return hml__error_set(HML_ENOTFOUND, "search '%s' has no registered model on its "
		                      "front", search);
	for (i = 0; i < *n; i++)
		if (c[i].model && on_front(rec, c[i].model))
			c[k++] = c[i];
	*n = k;
	return 0;
}

void hml__select_auto(hml__candidate *c, size_t *n, char *why, size_t size)
{
	size_t k = 0;

	if (hml__target_c_found(why, size))
		return;
	for (size_t i = 0; i < *n; i++)
		if (c[i].target != HML__TARGET_C)
			c[k++] = c[i];
	if (k == *n && why && size)
		why[0] = '\0';
	*n = k;
}
