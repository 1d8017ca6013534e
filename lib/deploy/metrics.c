/*
 * lib/deploy/metrics.c - error metrics and summaries of repeated measurements.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deploy/metrics.h"

void hml__errors_compute(hml__errors *e, const double *a, const double *b, size_t n)
{
	hml__errors_compute_floor(e, a, b, n, 0.0);
}

void hml__errors_compute_floor(hml__errors *e, const double *a, const double *b, size_t n,
                               double mape_floor)
{
	double sq = 0, abs_sum = 0, rel = 0, mx = 0, amax = 0, floor_;

	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < n; i++)
		if (isfinite(a[i]) && isfinite(b[i]) && fabs(a[i]) > amax)
			amax = fabs(a[i]);
	floor_ = HML__MAPE_FLOOR * amax;
	for (size_t i = 0; i < n; i++) {
		double d;

		if (!isfinite(a[i]) || !isfinite(b[i])) {
			e->nonfinite++;
			continue;
		}
		d = fabs(b[i] - a[i]);
		sq += d * d;
		abs_sum += d;
		if (d > mx)
			mx = d;
		if (mape_floor > 0 ? fabs(a[i]) >= mape_floor : a[i] != 0 && fabs(a[i]) > floor_) {
			rel += d / fabs(a[i]);
			e->mape_n++;
		}
		e->n++;
	}
	e->rmse = e->n ? sqrt(sq / (double)e->n) : NAN;
	e->mae = e->n ? abs_sum / (double)e->n : NAN;
	e->max_abs = e->n ? mx : NAN;
	e->mape = e->mape_n ? 100.0 * rel / (double)e->mape_n : NAN;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

double hml__errors_metric(const hml__errors *e, const char *metric)
{
	if (!metric || strcmp(metric, "rmse") == 0)
		return e->rmse;
	if (strcmp(metric, "max_abs") == 0)
		return e->max_abs;
	if (strcmp(metric, "mape") == 0)
		return e->mape;
	return NAN;
}

void hml__summary_compute(hml__summary *s, const double *v, size_t n)
{
	double sum = 0, sq = 0, *sorted;

	s->n = n;
	if (n == 0) {
		s->mean = s->min = s->max = s->stdev = s->median = NAN;
		return;
	}
	s->min = s->max = v[0];
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		s->min = v[i] < s->min ? v[i] : s->min;
		s->max = v[i] > s->max ? v[i] : s->max;
	}
	s->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (v[i] - s->mean) * (v[i] - s->mean);
	s->stdev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
	if ((sorted = malloc(n * sizeof(*sorted))) != NULL) {
		memcpy(sorted, v, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_double);
		s->median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
		free(sorted);
	} else {
		s->median = NAN;
	}
}

void hml__format_speedup(char *buf, size_t size, double x)
{
	double a = fabs(x), r;
	int d;

	if (!isfinite(x)) {
		snprintf(buf, size, "-");
		return;
	}
	if (a == 0) {
		snprintf(buf, size, "0x");
		return;
	}
	/* Rounded to two digits first: 9.96 is 10, whose decade is the next. */
	d = (int)floor(log10(a));
	r = round(a / pow(10, d - 1)) * pow(10, d - 1);
	d = (int)floor(log10(r));
	if (d >= 1)
		snprintf(buf, size, "%s%.0fx", x < 0 ? "-" : "", r);
	else
		snprintf(buf, size, "%s%.*fx", x < 0 ? "-" : "", 1 - d, r);
}

char *hml__format_seconds(char *buf, size_t size, double s, int digits)
{
	static const struct { double scale; const char *unit; } units[] = {
		{ 1, "s" }, { 1e-3, "ms" }, { 1e-6, "us" }, { 1e-9, "ns" }
	};
	double up = 1 - 0.5 * pow(10, -digits);   /* what rounds up to 1 of a unit */
	size_t u = 0;

	buf[0] = '\0';
	if (!isfinite(s) || s < 0)
		return buf;
	while (u + 1 < sizeof(units) / sizeof(units[0]) && s < units[u].scale * up)
		u++;
	s /= units[u].scale;
	if (s >= pow(10, digits) * up)   /* %g would write an exponent */
		snprintf(buf, size, "%.0f %s", s, units[u].unit);
	else
		snprintf(buf, size, "%.*g %s", digits, s, units[u].unit);
	return buf;
}

void hml__format_speedup_range(char *buf, size_t size, const hml__summary *s)
{
	char mean[32], lo[32], hi[32];

	hml__format_speedup(mean, sizeof(mean), s->mean);
	hml__format_speedup(lo, sizeof(lo), s->min);
	hml__format_speedup(hi, sizeof(hi), s->max);
	snprintf(buf, size, "%s (%s-%s)", mean, lo, hi);
}
