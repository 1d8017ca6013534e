/*
 * lib/core/guard_ensemble.c - the ensemble guard's part of the guard
 * contract (guard.h): the card's "ensemble" statistics (writer and reader
 * side by side), the members' disagreement on a row and its quantiles,
 * which hml train calibrates with and the runtime checks rows with.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/guard.h"
#include "core/json.h"

/* The levels every calibrated guard (distance, ensemble) keeps quantiles at. */
const double HML__GUARD_LEVELS[HML__GUARD_NLEVELS] = {
	0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995, 0.9999, 1.0
};

void hml__guard_ensemble_release(hml__guard_ensemble *e)
{
	free(e->scale);
	memset(e, 0, sizeof(*e));
}

json_t *hml__guard_ensemble_json(const hml__guard_ensemble *e)
{
	json_t *scale, *q;

	if (e->members < HML__GUARD_ENSEMBLE_MIN || !e->scale)
		return json_null();
	scale = json_array();
	q = json_array();
	for (int64_t o = 0; scale && o < e->outputs; o++)
		json_array_append_new(scale, hml__json_real(e->scale[o]));
	for (int k = 0; q && k < HML__GUARD_NLEVELS; k++)
		json_array_append_new(q, json_pack("[f, o]", HML__GUARD_LEVELS[k],
		                                   hml__json_real(e->quantile[k])));
	return json_pack("{s:I, s:I, s:I, s:o, s:o}", "members", (json_int_t)e->members,
	                 "outputs", (json_int_t)e->outputs,
	                 "calibration_rows", (json_int_t)e->calibration_rows,
	                 "scale", scale ? scale : json_null(), "quantiles", q ? q : json_null());
}

int hml__guard_ensemble_from_json(hml__guard_ensemble *out, const json_t *j, const char *what)
{
	const json_t *scale = json_object_get(j, "scale"), *q = json_object_get(j, "quantiles");
	json_int_t n = json_integer_value(json_object_get(j, "members"));
	json_int_t o = json_integer_value(json_object_get(j, "outputs"));

	memset(out, 0, sizeof(*out));
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_object(j) || n < HML__GUARD_ENSEMBLE_MIN || n > HML__GUARD_ENSEMBLE_MAX)
		return hml__error_set(HML_EINVALID, "%s: guard statistics 'ensemble' must have %d to "
		                      "%d members", what, HML__GUARD_ENSEMBLE_MIN,
		                      HML__GUARD_ENSEMBLE_MAX);
	if (o < 1 || o > 1000000 || !json_is_array(scale) || (json_int_t)json_array_size(scale) != o)
		return hml__error_set(HML_EINVALID, "%s: guard statistics 'ensemble' must have a "
		                      "scale per output", what);
	if (!json_is_array(q) || json_array_size(q) != HML__GUARD_NLEVELS)
		return hml__error_set(HML_EINVALID, "%s: guard statistics 'ensemble.quantiles' must "
		                      "be %d pairs", what, HML__GUARD_NLEVELS);
	if (!(out->scale = malloc((size_t)o * sizeof(double))))
		return hml__error_oom();
	out->members = n;
	out->outputs = o;
	out->calibration_rows = json_integer_value(json_object_get(j, "calibration_rows"));
	for (json_int_t i = 0; i < o; i++) {
		const json_t *v = json_array_get(scale, (size_t)i);
		out->scale[i] = json_number_value(v);
		if (!json_is_number(v) || !(out->scale[i] > 0) || !isfinite(out->scale[i])) {
			hml__guard_ensemble_release(out);
			return hml__error_set(HML_EINVALID, "%s: guard statistics 'ensemble.scale'[%lld] "
			                      "is not a positive number", what, (long long)i);
		}
	}
	for (int k = 0; k < HML__GUARD_NLEVELS; k++) {
		const json_t *d = json_array_get(json_array_get(q, (size_t)k), 1);
		if (!json_is_number(d)) {
			hml__guard_ensemble_release(out);
			return hml__error_set(HML_EINVALID, "%s: guard statistics "
			                      "'ensemble.quantiles'[%d] has no value", what, k);
		}
		out->quantile[k] = json_number_value(d);
	}
	return 0;
}

double hml__guard_spread(const double *y, int64_t members, int64_t outputs,
                         const double *scale)
{
	double worst = 0.0;

	if (members < 2)
		return 0.0;
	for (int64_t o = 0; o < outputs; o++) {
		double mean = 0.0, sq = 0.0, s;

		for (int64_t m = 0; m < members; m++)
			mean += y[m * outputs + o];
		mean /= (double)members;
		for (int64_t m = 0; m < members; m++) {
			double d = y[m * outputs + o] - mean;
			sq += d * d;
		}
		s = sqrt(sq / (double)members) / scale[o];
		if (!(s <= worst))   /* a NaN output disagrees with everything */
			worst = isnan(s) ? INFINITY : s;
	}
	return worst;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void hml__guard_quantiles(double *q, size_t stride, double *v, int64_t n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	for (int k = 0; k < HML__GUARD_NLEVELS; k++) {
		double pos = HML__GUARD_LEVELS[k] * (double)(n - 1);
		int64_t lo = (int64_t)floor(pos);
		int64_t hi = lo + 1 < n ? lo + 1 : lo;
		q[(size_t)k * stride] = v[lo] + (pos - (double)lo) * (v[hi] - v[lo]);
	}
}

int hml__guard_set_members(hml__guard *g, const char *const *paths, int64_t n)
{
	char **m;

	if (n != g->stats.ens.members || n < HML__GUARD_ENSEMBLE_MIN)
		return hml__error_set(HML_EINVALID, "an ensemble guard of %lld members given %lld "
		                      "member files", (long long)g->stats.ens.members, (long long)n);
	if (!(m = calloc((size_t)n, sizeof(*m))))
		return hml__error_oom();
	for (int64_t k = 0; k < n; k++)
		if (!(m[k] = strdup(paths[k]))) {
			while (k-- > 0)
				free(m[k]);
			free(m);
			return hml__error_oom();
		}
	g->member = m;
	return 0;
}

int hml__guard_ensemble_row(const hml__guard *g, const double *y)
{
	const hml__guard_ensemble *e = &g->stats.ens;

	return !(hml__guard_spread(y, e->members, e->outputs, e->scale) <= g->threshold);
}
