/*
 * hml search --qoi-check K: the application run with the K most accurate
 * registered models of the search's front (cmd/qoi_check.c: a check run
 * on a seed no data set used), their errors of its quantity of interest
 * recorded in the search and the models (hml__records_set_qoi_check), so
 * that hml deploy --best chooses by what the application's owner judges.
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
	int rc = 0;

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
		rc = cmd_qoi_check_model(q, e[i].model, target ? target : "torchscript", NAN, &err);
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
