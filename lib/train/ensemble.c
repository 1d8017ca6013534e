/*
 * lib/train/ensemble.c - the held-out rows of an ensemble and its
 * calibration (ensemble.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "loader/loader.h"
#include "train/ensemble.h"

static int held_out(int64_t i)
{
	return i % HML__ENSEMBLE_HOLDOUT == HML__ENSEMBLE_HOLDOUT - 1;
}

void hml__ensemble_rows_release(hml__dataset *d)
{
	if (!d)
		return;
	free(d->x);
	free(d->y);
	free(d->run);
	free(d->call);
	memset(d, 0, sizeof(*d));
}

int hml__ensemble_split(hml__dataset *fit, hml__dataset *cal, const hml__dataset *all)
{
	int64_t nc = all->rows / HML__ENSEMBLE_HOLDOUT, fi = 0, ci = 0;
	size_t fin = (size_t)all->in_features, fout = (size_t)all->out_features;

	*fit = *all;
	*cal = *all;
	fit->x = fit->y = cal->x = cal->y = NULL;
	fit->run = fit->call = cal->run = cal->call = NULL;
	fit->nonfinite_rows = cal->nonfinite_rows = 0;
	fit->nonfinite_values = cal->nonfinite_values = 0;
	if (nc < HML__ENSEMBLE_MIN_CALIBRATION)
		return hml__error_set(HML_EINVALID, "%lld rows are too few for an ensemble: it holds "
		                      "out every %dth row for its calibration and needs at least %d "
		                      "of them", (long long)all->rows, HML__ENSEMBLE_HOLDOUT,
		                      HML__ENSEMBLE_MIN_CALIBRATION);
	fit->rows = all->rows - nc;
	cal->rows = nc;
	fit->x = malloc((size_t)fit->rows * fin * sizeof(float));
	fit->y = malloc((size_t)fit->rows * fout * sizeof(float));
	cal->x = malloc((size_t)nc * fin * sizeof(float));
	cal->y = malloc((size_t)nc * fout * sizeof(float));
	if (all->run && all->call) {   /* the call order, for a rollout's windows */
		fit->run = malloc((size_t)fit->rows * sizeof(int64_t));
		fit->call = malloc((size_t)fit->rows * sizeof(int64_t));
		cal->run = malloc((size_t)nc * sizeof(int64_t));
		cal->call = malloc((size_t)nc * sizeof(int64_t));
	}
	if (!fit->x || !fit->y || !cal->x || !cal->y ||
	    (all->run && all->call && (!fit->run || !fit->call || !cal->run || !cal->call))) {
		hml__ensemble_rows_release(fit);
		hml__ensemble_rows_release(cal);
		return hml__error_oom();
	}
	for (int64_t i = 0; i < all->rows; i++) {
		hml__dataset *to = held_out(i) ? cal : fit;
		int64_t k = held_out(i) ? ci++ : fi++;

		memcpy(to->x + (size_t)k * fin, all->x + (size_t)i * fin, fin * sizeof(float));
		memcpy(to->y + (size_t)k * fout, all->y + (size_t)i * fout, fout * sizeof(float));
		if (to->run) {
			to->run[k] = all->run[i];
			to->call[k] = all->call[i];
		}
	}
	return 0;
}

/* The standard deviation of each output over d's rows (1 for a constant). */
static void output_scale(double *scale, const hml__dataset *d)
{
	int64_t o = d->out_features;

	for (int64_t j = 0; j < o; j++) {
		double mean = 0.0, sq = 0.0;

		for (int64_t i = 0; i < d->rows; i++)
			mean += d->y[i * o + j];
		mean /= (double)d->rows;
		for (int64_t i = 0; i < d->rows; i++) {
			double v = d->y[i * o + j] - mean;
			sq += v * v;
		}
		scale[j] = d->rows > 1 ? sqrt(sq / (double)(d->rows - 1)) : 0.0;
		if (!(scale[j] > 0) || !isfinite(scale[j]))
			scale[j] = 1.0;
	}
}

int hml__ensemble_calibrate(hml__guard_ensemble *out, const char *const *members, int n,
                            const hml__dataset *fit, const hml__dataset *cal)
{
	int64_t rows = cal->rows, o = cal->out_features, per_row = 0;
	float *y = NULL;
	double *row = NULL, *spread = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (n < HML__GUARD_ENSEMBLE_MIN || n > HML__GUARD_ENSEMBLE_MAX)
		return hml__error_set(HML_EINVALID, "an ensemble has %d to %d members, not %d",
		                      HML__GUARD_ENSEMBLE_MIN, HML__GUARD_ENSEMBLE_MAX, n);
	if (rows < 1)
		return hml__error_set(HML_EINVALID, "an ensemble's calibration has no rows");
	out->scale = malloc((size_t)o * sizeof(double));
	y = malloc((size_t)n * (size_t)(rows * o) * sizeof(float));
	row = malloc((size_t)(n * o) * sizeof(double));
	spread = malloc((size_t)rows * sizeof(double));
	if (!out->scale || !y || !row || !spread) {
		rc = hml__error_oom();
		goto done;
	}
	output_scale(out->scale, fit);
	for (int m = 0; m < n; m++) {
		if ((rc = hml__model_predict_f32(members[m], cal->x, rows, cal->in_ndim, cal->in_shape,
		                                 y + (size_t)m * (size_t)(rows * o), rows * o,
		                                 &per_row)) < 0)
			goto done;
		if (per_row != o) {
			rc = hml__error_set(HML_ESHAPE, "ensemble member '%s' returns %lld values per "
			                    "row, the data %lld", members[m], (long long)per_row,
			                    (long long)o);
			goto done;
		}
	}
	for (int64_t i = 0; i < rows; i++) {
		for (int m = 0; m < n; m++)
			for (int64_t j = 0; j < o; j++)
				row[m * o + j] = y[(size_t)m * (size_t)(rows * o) + (size_t)(i * o + j)];
		spread[i] = hml__guard_spread(row, n, o, out->scale);
	}
	hml__guard_quantiles(out->quantile, 1, spread, rows);
	out->members = n;
	out->outputs = o;
	out->calibration_rows = rows;
done:
	if (rc < 0)
		hml__guard_ensemble_release(out);
	free(y);
	free(row);
	free(spread);
	return rc;
}
