/*
 * hml evaluate of an iterative application: --k and --interleave as its
 * workflow's search_args declare them (lib/store/model_run.h), and the
 * error over time of the quantities it records over time
 * (lib/store/qoi_series.h): a table, the record's "over_time", a plot.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/json.h"
#include "core/util.h"
#include "run/workflow.h"
#include "store/cost.h"
#include "store/model_run.h"
#include "store/qoi_series.h"
#include "sys/gnuplot.h"

int cmd_evaluate_search_args(char ***argv, int *interleave, hml__schedule *sched,
                             const hml__workflow *w, const hml__model_run *r)
{
	hml__run_config c;
	int rc;

	memset(&c, 0, sizeof(c));
	if ((rc = hml__model_run_apply(argv, &c, w, r)) < 0)
		return rc;
	*interleave = c.interleave;
	sched->k = r->k > 0 ? (double)r->k : NAN;
	sched->interleave = r->interleave > 0 ? r->interleave : 0;
	return 0;
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
