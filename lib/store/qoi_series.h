/*
 * lib/store/qoi_series.h - the error over time of an iterative
 * application's quantities of interest (internal, CLI side).
 *
 * A QoI the application recorded over time (lib/core/qoi_file.h: a
 * dataset whose first dimension is the record, with the step of each in
 * its "hml_steps" attribute) is compared record by record, in the
 * workflow's metric for it (lib/store/qoi_compare.h compares it whole,
 * as every QoI). hml evaluate prints the table, records it and plots it;
 * the error growth over the steps is what it shows.
 */
#ifndef HML_LIB_QOI_SERIES_H
#define HML_LIB_QOI_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "deploy/metrics.h"
#include "run/workflow.h"

/* One QoI's error at each of its records. */
typedef struct hml__qoi_series {
	const hml__workflow_qoi *qoi; /**< the workflow's entry (borrowed from it) */
	size_t n;                     /**< records */
	int64_t *steps;               /**< [n]: the application's step of each */
	hml__errors *err;             /**< [n]: every figure of each record */
	double *error;                /**< [n]: err in qoi->metric */
	double *rel_l2;               /**< [n]: ||b - a|| / ||a|| of the finite pairs
	                                   (NaN when ||a|| is 0) */
} hml__qoi_series;

/**
 * Compare the QoIs over time of workflow `w` in the surrogate run's QoI
 * file `path` with the accurate run's `ref_path`: *out (yours:
 * hml__qoi_series_free()) holds *n entries, one per data set of w->qoi
 * the accurate run recorded over time, in the workflow's order (*n 0 and
 * *out NULL when it recorded none so). `what` names the surrogate run in
 * messages. Errors: those of hml__qoi_file_read_steps() and
 * hml__qoi_file_read(); HML_ESHAPE "quantity of interest 'N' was recorded
 * at 10 steps in the accurate run but 9 with the surrogate" (or at other
 * steps, or with other values per record); HML_ENOMEM.
 */
int hml__qoi_over_time(hml__qoi_series **out, size_t *n, const hml__workflow *w,
                       const char *ref_path, const char *path, const char *what);

/** Free s[0 .. n) and s (NULL-safe). */
void hml__qoi_series_free(hml__qoi_series *s, size_t n);

/**
 * s[0 .. n) as recorded (hml-manifest(5), an evaluation's "over_time"):
 * [{dataset, metric, steps: [..], error: [..], rmse: [..], max_abs: [..],
 * rel_l2: [..]}], NaN as null. New reference, or NULL (out of memory).
 */
json_t *hml__qoi_series_json(const hml__qoi_series *s, size_t n);

/**
 * Draw s[0 .. n) (n >= 1): the error of each QoI in its metric against
 * the step, one line each, the error axis logarithmic when every figure
 * is positive. The data (over_time.dat), the script (over_time.gp), the
 * log (gnuplot.log) and the image `png` are written in directory `work`
 * (an existing directory beneath experiment `root`, never through a link:
 * core/beneath.h). Errors: those of hml__gnuplot_run() (HML_ERROR
 * "gnuplot is not installed (no 'gnuplot' on PATH)", ...), HML_ERROR
 * "gnuplot made no 'P'", HML_EIO naming a file that cannot be written.
 */
int hml__qoi_series_plot(const hml__qoi_series *s, size_t n, const char *title,
                         const char *root, const char *work, const char *png);

#endif
