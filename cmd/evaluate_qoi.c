/*
 * hml evaluate's quantities of interest: the warm-up pair's QoI files
 * compared (lib/store/qoi_compare.h), every data set of the workflow, and
 * each printed on a line of its own, the primary first, with its
 * acceptance bound (max_error) passed or failed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "core/json.h"
#include "store/qoi_compare.h"

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
