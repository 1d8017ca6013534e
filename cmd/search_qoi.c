/*
 * hml search --qoi-check K: the application run with the K most accurate
 * registered models of the search's front (cmd/qoi_check.c: a check run
 * on a seed no data set used), their errors of its quantity of interest
 * recorded in the search and the models (hml__records_set_qoi_check), so
 * that hml deploy --best chooses by what the application's owner judges
 * (the primary QoI's error); every data set's error is recorded beside it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/json.h"
#include "deploy/latency.h"
#include "store/records.h"
#include "store/store.h"

typedef struct entry {
	const char *model;
	double val;
} entry;

static int by_val(const void *a, const void *b)
{
	double x = ((const entry *)a)->val, y = ((const entry *)b)->val;

	return (x > y) - (x < y);
}

/* The front's registered models, most accurate first, into *out (yours). */
static size_t front_models(entry **out, const json_t *rec)
{
	const json_t *front = json_object_get(rec, "front"), *e;
	size_t i, n = 0;

	*out = malloc((json_array_size(front) + 1) * sizeof(**out));
	if (!*out)
		return 0;
	json_array_foreach(front, i, e)
		if (hml__json_string(e, "model")) {
			(*out)[n].model = hml__json_string(e, "model");
			(*out)[n++].val = hml__json_number(e, "val_rmse");
		}
	qsort(*out, n, sizeof(**out), by_val);
	return n;
}

int cmd_search_qoi_check(hml__store *s, const char *id, int64_t k)
{
	const json_t *rec = hml__store_find(s, "searches", id);
	const char *target = hml__json_string(rec, "latency_target");
	cmd_qoi_check *q = NULL;
	json_t *report = NULL;
	entry *e = NULL;
	size_t n = front_models(&e, rec);
	double err;
	int rc = 0, ok;

	if (!e)
		return hml__error_oom();
	if (n == 0) {
		cmd_warn("search %s: --qoi-check: no registered model on the front to check", id);
		goto done;
	}
	if ((size_t)k < n)
		n = (size_t)k;
	cmd_info("search %s: QoI check of the front's %zu most accurate model%s", id, n,
	         n == 1 ? "" : "s");
	if ((rc = cmd_qoi_check_open(&q, s, e[0].model)) < 0)
		goto done;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = cmd_qoi_check_model(q, e[i].model, target ? target : "torchscript", NAN, &err, &ok);
	if (rc == 0 && !(report = cmd_qoi_check_report(q)))
		rc = HML_ENOMEM;
	if (rc == 0)
		rc = hml__records_set_qoi_check(s, id, report);
done:
	json_decref(report);
	cmd_qoi_check_free(q);
	free(e);
	return rc;
}

/* One line per QoI data set, the primary first: "QoI check (seed 5):
 * price rmse: m3 0.012, m4 failed". */
void cmd_search_qoi_print(const json_t *rec)
{
	const json_t *q = json_object_get(rec, "qoi_check"), *checks, *c, *first;
	size_t i, d, nd;

	if (!q)
		return;
	checks = json_object_get(q, "checks");
	first = NULL;
	json_array_foreach(checks, i, c)
		if (!first && json_object_get(c, "qois"))
			first = json_object_get(c, "qois");
	nd = first ? json_array_size(first) : 1;
	for (d = 0; d < nd; d++) {
		const json_t *ds = json_array_get(first, d);

		printf("QoI check (seed %lld): %s %s:", (long long)json_integer_value(
		       json_object_get(q, "seed")), ds ? hml__json_string(ds, "dataset") :
		       hml__json_string(q, "dataset"), ds ? hml__json_string(ds, "metric") :
		       hml__json_string(q, "metric"));
		json_array_foreach(checks, i, c) {
			double e = d == 0 ? hml__json_number(c, "error") :
			           hml__json_number(json_array_get(json_object_get(c, "qois"), d), "error");

			if (isnan(e))
				printf("%s %s failed", i ? "," : "", hml__json_string(c, "model"));
			else
				printf("%s %s %.4g", i ? "," : "", hml__json_string(c, "model"), e);
		}
		printf("\n");
	}
}
