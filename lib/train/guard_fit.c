/*
 * lib/train/guard_fit.c - input statistics for guards (guard_fit.h):
 * bounds, mean, the whitening matrix W = L^-1 of the covariance's
 * Cholesky factor (LAPACKE dpotrf and dtrtri), and calibration quantiles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "core/error.h"
#include "train/guard_fit.h"

static int is_fit_row(int64_t i)
{
	return i % 5 != 4;
}

/* Mean and covariance of the fitting rows, then W in s->whiten. */
static int fit_whiten(hml__guard_stats *s, const float *x, int64_t rows)
{
	int64_t f = s->features, n = 0;
	double *c = calloc((size_t)(f * f), sizeof(double)), *d;
	lapack_int info;

	if (!c)
		return hml__error_oom();
	for (int64_t i = 0; i < rows; i++) {
		if (!is_fit_row(i))
			continue;
		n++;
		for (int64_t a = 0; a < f; a++)
			s->mean[a] += x[i * f + a];
	}
	for (int64_t a = 0; a < f; a++)
		s->mean[a] /= (double)n;
	for (int64_t i = 0; i < rows; i++) {
		if (!is_fit_row(i))
			continue;
		for (int64_t a = 0; a < f; a++) {
			double da = x[i * f + a] - s->mean[a];
			for (int64_t b = 0; b <= a; b++)
				c[a * f + b] += da * (x[i * f + b] - s->mean[b]);
		}
	}
	for (int64_t a = 0; a < f; a++) {
		for (int64_t b = 0; b <= a; b++)
			c[a * f + b] /= (double)(n - 1);
		d = &c[a * f + a];
		*d = *d > 0 ? *d * (1.0 + 1e-9) : 1.0;
	}
	info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)f, c, (lapack_int)f);
	if (info == 0)
		info = LAPACKE_dtrtri(LAPACK_ROW_MAJOR, 'L', 'N', (lapack_int)f, c, (lapack_int)f);
	if (info != 0) {
		free(c);
		return hml__error_set(HML_EMODEL, "guard statistics: the covariance of the inputs "
		                      "cannot be factorised (LAPACK info %d)", (int)info);
	}
	for (int64_t a = 0; a < f; a++)   /* the upper triangle is not W's */
		for (int64_t b = a + 1; b < f; b++)
			c[a * f + b] = 0.0;
	s->whiten = c;
	return 0;
}

/* The calibration rows' |z|_2 and each |z_i| at HML__GUARD_LEVELS. */
static int calibrate(hml__guard_stats *s, const float *x, int64_t rows)
{
	int64_t f = s->features, m = 0, cap = rows / 5 + 1;
	double *d = malloc((size_t)cap * sizeof(double));
	double *z = malloc((size_t)(cap * f) * sizeof(double));   /* [f][cap] */
	double *row = malloc((size_t)f * sizeof(double)), *zi = malloc((size_t)f * sizeof(double));
	hml__guard g;
	int rc = 0;

	s->component = malloc((size_t)f * HML__GUARD_NLEVELS * sizeof(double));
	if (!d || !z || !row || !zi || !s->component) {
		rc = hml__error_oom();
		goto done;
	}
	memset(&g, 0, sizeof(g));
	g.stats = *s;
	for (int64_t i = 0; i < rows; i++) {
		if (is_fit_row(i))
			continue;
		for (int64_t a = 0; a < f; a++)
			row[a] = x[i * f + a];
		d[m] = hml__guard_distance(&g, row, zi);
		for (int64_t a = 0; a < f; a++)
			z[a * cap + m] = fabs(zi[a]);
		m++;
	}
	hml__guard_quantiles(s->quantile, 1, d, m);
	for (int64_t a = 0; a < f; a++)
		hml__guard_quantiles(s->component + a, (size_t)f, z + a * cap, m);
	s->calibration_rows = m;
done:
	free(d);
	free(z);
	free(row);
	free(zi);
	return rc;
}

int hml__guard_fit(hml__guard_stats *out, const float *x, int64_t rows, int64_t features)
{
	int64_t f = features;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (rows < 1 || f < 1 || !x)
		return hml__error_set(HML_EINVALID, "guard statistics: no rows");
	out->features = f;
	out->rows = rows;
	out->min = malloc((size_t)f * sizeof(double));
	out->max = malloc((size_t)f * sizeof(double));
	if (!out->min || !out->max) {
		rc = hml__error_oom();
		goto fail;
	}
	for (int64_t a = 0; a < f; a++)
		out->min[a] = out->max[a] = x[a];
	for (int64_t i = 1; i < rows; i++)
		for (int64_t a = 0; a < f; a++) {
			double v = x[i * f + a];
			if (v < out->min[a]) out->min[a] = v;
			if (v > out->max[a]) out->max[a] = v;
		}
	if (f > HML__GUARD_MAX_DISTANCE_FEATURES || rows < 4 * f + 40)
		return 0;
	if (!(out->mean = calloc((size_t)f, sizeof(double)))) {
		rc = hml__error_oom();
		goto fail;
	}
	if ((rc = fit_whiten(out, x, rows)) < 0 || (rc = calibrate(out, x, rows)) < 0)
		goto fail;
	return 0;
fail:
	hml__guard_stats_release(out);
	return rc;
}
