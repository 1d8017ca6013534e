/*
 * hml evaluate's quantities of interest: the warm-up pair's QoI files
 * compared (lib/store/qoi_compare.h), every data set of the workflow, and
 * each printed on a line of its own, the primary first, with its
 * acceptance bound (max_error) passed or failed; and the error over time
 * of those an iterative application recorded over time, a table and a
 * plot.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "core/json.h"
#include "core/util.h"
#include "store/qoi_compare.h"
#include "store/qoi_series.h"
#include "sys/gnuplot.h"

int cmd_evaluate_qoi_read(hml__qoi_result **out, const hml__workflow *w, const char *a0,
                          const char *s0)
{
	hml__qoi_ref *ref = NULL;
	hml__qoi_result *r = calloc(w->nqoi, sizeof(*r));
	int rc;

	*out = NULL;
	if (!r)
		return hml__error_oom();
	if ((rc = hml__qoi_ref_load(&ref, w, a0)) < 0 ||
	    (rc = hml__qoi_compare(r, ref, s0, "the surrogate")) < 0) {
		free(r);
		hml__qoi_ref_free(ref);
		return rc;
	}
	if (hml__qoi_ref_check_finite(ref, "the warm-up") < 0)
		cmd_warn("%s; its errors are of the finite values only", hml_error_last()->message);
	hml__qoi_ref_free(ref);
	for (size_t i = 0; i < w->nqoi; i++) {
		if (r[i].err.nonfinite)
			cmd_warn("%zu values of '%s' are NaN or Inf; they are left out of the errors",
			         r[i].err.nonfinite, r[i].qoi->dataset);
		if (!r[i].passed)
			cmd_warn("quantity of interest '%s' failed its bound: %s %.4g, max_error %g",
			         r[i].qoi->dataset, r[i].qoi->metric, r[i].error, r[i].qoi->max_error);
	}
	*out = r;
	return 0;
}

void cmd_evaluate_qoi_print(const json_t *evaluation)
{
	const json_t *q;
	char bound[96];
	size_t i;

	json_array_foreach(json_object_get(evaluation, "qois"), i, q) {
		bound[0] = '\0';
		if (json_object_get(q, "max_error"))
			snprintf(bound, sizeof(bound), ", max_error %g: %s",
			         hml__json_number(q, "max_error"),
			         json_is_true(json_object_get(q, "passed")) ? "passed" : "FAILED");
		printf("quantity of interest '%s' (%lld values): RMSE %.4g, MAPE %.4g%% (of %lld "
		       "values), max abs error %.4g  [metric: %s%s]\n", hml__json_string(q, "dataset"),
		       (long long)json_integer_value(json_object_get(q, "values")),
		       hml__json_number(q, "rmse"), hml__json_number(q, "mape"),
		       (long long)json_integer_value(json_object_get(q, "mape_values")),
		       hml__json_number(q, "max_abs"), hml__json_string(q, "metric"), bound);
	}
}

int cmd_evaluate_over_time(json_t **over_time, char **png, const hml__workflow *w,
                           const char *a0, const char *s0, const char *root,
                           const char *work, const char *title)
{
	hml__qoi_series *ser = NULL;
	size_t n = 0;
	char path[4096];
	int rc;

	*over_time = NULL;
	*png = NULL;
	if ((rc = hml__qoi_over_time(&ser, &n, w, a0, s0, "the surrogate")) < 0 || n == 0)
		return rc;
	if (!(*over_time = hml__qoi_series_json(ser, n))) {
		hml__qoi_series_free(ser, n);
		return hml__error_oom();
	}
	if (!hml__gnuplot_found())
		cmd_info("no plot of the error over time: gnuplot is not installed");
	else if (hml__qoi_series_plot(ser, n, title, root, work, "over-time.png") < 0)
		cmd_warn("no plot of the error over time: %s", hml_error_last()->message);
	else if (snprintf(path, sizeof(path), "%s/over-time.png", work) < (int)sizeof(path) &&
	         !(*png = hml__strdup(path)))
		rc = hml__error_oom();
	hml__qoi_series_free(ser, n);
	return rc;
}

/* obj[key][r] as a number; NaN for null. */
static double number_at(const json_t *obj, const char *key, size_t r)
{
	const json_t *v = json_array_get(json_object_get(obj, key), r);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

void cmd_evaluate_over_time_print(const json_t *evaluation)
{
	const json_t *q, *files = json_object_get(evaluation, "files");
	size_t i, r;

	json_array_foreach(json_object_get(evaluation, "over_time"), i, q) {
		const json_t *steps = json_object_get(q, "steps");

		printf("error over time of '%s' (%s):\n%10s %12s %12s %12s %12s\n",
		       hml__json_string(q, "dataset"), hml__json_string(q, "metric"), "step",
		       "error", "rmse", "max_abs", "rel_l2");
		for (r = 0; r < json_array_size(steps); r++)
			printf("%10lld %12.4g %12.4g %12.4g %12.4g\n",
			       (long long)json_integer_value(json_array_get(steps, r)),
			       number_at(q, "error", r), number_at(q, "rmse", r),
			       number_at(q, "max_abs", r), number_at(q, "rel_l2", r));
	}
	if (hml__json_string(files, "over_time_png"))
		printf("plot: %s\n", hml__json_string(files, "over_time_png"));
}
