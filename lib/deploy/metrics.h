/*
 * lib/deploy/metrics.h - error metrics between two result vectors and summaries of
 * repeated timings (internal).
 */
#ifndef HML_LIB_METRICS_H
#define HML_LIB_METRICS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Values below this share of the largest |a| are left out of the MAPE. */
#define HML__MAPE_FLOOR 1e-3

typedef struct hml__errors {
	double rmse;        /**< sqrt(mean((b - a)^2)) */
	double mae;         /**< mean(|b - a|) */
	double max_abs;     /**< max |b - a| */
	double mape;        /**< mean(|b - a| / |a|) * 100 over the values with
	                         |a| > HML__MAPE_FLOOR * max|a|, or |a| >= the absolute
	                         floor given to hml__errors_compute_floor() (relative
	                         errors of values near zero, such as worthless
	                         options, say nothing) */
	size_t n;           /**< values compared */
	size_t mape_n;      /**< values in the MAPE */
	size_t nonfinite;   /**< pairs where either value is NaN or Inf (excluded, counted) */
} hml__errors;

/** Errors of `b` (surrogate) against `a` (reference), n values each. */
void hml__errors_compute(hml__errors *e, const double *a, const double *b, size_t n);

/**
 * Like hml__errors_compute(), but when `mape_floor` > 0 the MAPE leaves out
 * exactly the values with |a| < mape_floor (an absolute mask, e.g. 1 for
 * miniBUDE's energies) instead of the relative HML__MAPE_FLOOR rule.
 */
void hml__errors_compute_floor(hml__errors *e, const double *a, const double *b, size_t n,
                               double mape_floor);

/**
 * The figure a workflow's "qoi.metric" names (hml-workflow(5)): "rmse",
 * "mape" or "max_abs" (NULL: "rmse"); NaN for any other name, or when the
 * figure has no value (nothing compared, no value in the MAPE).
 */
double hml__errors_metric(const hml__errors *e, const char *metric);

typedef struct hml__summary {
	double mean, min, max, stdev;  /**< stdev: sample standard deviation (0 for n < 2) */
	double median;
	size_t n;
} hml__summary;

/** Summary of n values (n = 0 gives NaNs). `v` is not modified. */
void hml__summary_compute(hml__summary *s, const double *v, size_t n);

/**
 * A speedup as people read it, with two significant digits and an "x":
 * 0.033x, 0.50x, 1.5x, 27x, 130x, 1200x ("%.1fx" shows a 30x loss as
 * 0.0x). 0 gives "0x", a negative value the same digits with its sign,
 * NaN or Inf "-". Every speedup hml prints goes through here. buf is
 * always terminated (size > 0).
 */
void hml__format_speedup(char *buf, size_t size, double x);

/**
 * Seconds in the unit that fits (s, ms, us, ns) with `digits` (1 to 6)
 * significant digits: "2.2 us", "40 ns", "126 us", "1.3 ms" at 2; a value
 * that rounds up to the next unit is written in it ("1 s", not "1e+03
 * ms"). NaN, Inf or a negative value gives "". Returns buf.
 */
char *hml__format_seconds(char *buf, size_t size, double s, int digits);

/** A summary of speedups as "27x (25x-29x)": its mean, min and max. */
void hml__format_speedup_range(char *buf, size_t size, const hml__summary *s);

#ifdef __cplusplus
}
#endif
#endif
