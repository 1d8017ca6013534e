/*
 * hml train's report of the model it registered (train_report.h).
 */
#include <math.h>
#include <stdio.h>

#include "cmd.h"
#include "core/json.h"
#include "store/store.h"
#include "train_ensemble.h"
#include "train_report.h"

/* "  categorical features: 1 (8 classes), 3 (3 classes)" when it has any. */
static void print_categorical(const json_t *cat)
{
	const json_t *c;
	size_t i;

	json_array_foreach(cat, i, c)
		printf("%s%lld (%lld classes)", i ? ", " : "  categorical features: ",
		       (long long)json_integer_value(json_object_get(c, "feature")),
		       (long long)json_integer_value(json_object_get(c, "classes")));
	if (json_array_size(cat))
		putchar('\n');
}

/* The card's errors: validation and test, a constant's test RMSE when the
 * card has one (null: none measured), MAPE, metric and loss. */
static void print_errors(const json_t *rec, const json_t *m)
{
	char constant[48] = "";

	if (!isnan(hml__json_number(m, "test_rmse_const")))
		snprintf(constant, sizeof(constant), " (a constant's %.6g)",
		         hml__json_number(m, "test_rmse_const"));
	printf("  validation RMSE %.6g, test RMSE %.6g%s, test MAE %.6g, test max error %.6g\n",
	       hml__json_number(m, "val_rmse"), hml__json_number(m, "test_rmse"), constant,
	       hml__json_number(m, "test_mae"), hml__json_number(m, "test_max_abs"));
	printf("  validation MAPE %.4g%%, test MAPE %.4g%% (metric %s, loss %s)\n",
	       hml__json_number(m, "val_mape"), hml__json_number(m, "test_mape"),
	       hml__json_string(rec, "metric"), hml__json_string(rec, "loss"));
}

void cmd_train_report(struct hml__store *s, const char *id, const char *label,
                      const json_t *rec, const char *from, size_t parent_data, size_t n)
{
	const json_t *m = json_object_get(rec, "metrics");
	const json_t *rows = json_object_get(rec, "rows");

	if (g_cmd.json) {
		json_t *full = json_deep_copy(hml__store_find(s, "models", id));

		cmd_json_print(json_pack("{s:o}", "model", full ? full : json_null()));
		return;
	}
	printf("%s: %s on region '%s' (%lld train / %lld validation / %lld test rows)\n",
	       id, hml__json_string(rec, "arch"), label,
	       (long long)json_integer_value(json_object_get(rows, "train")),
	       (long long)json_integer_value(json_object_get(rows, "validation")),
	       (long long)json_integer_value(json_object_get(rows, "test")));
	print_errors(rec, m);
	print_categorical(json_object_get(rec, "categorical"));
	if (from)
		printf("  continued from model '%s' (its %zu data set%s, and %zu more)\n", from,
		       parent_data, parent_data == 1 ? "" : "s", n - parent_data);
	printf("  %lld parameters, %lld epochs (best %lld) in %.3g s on %s, %.4g samples/s\n",
	       (long long)json_integer_value(json_object_get(m, "params")),
	       (long long)json_integer_value(json_object_get(m, "epochs_run")),
	       (long long)json_integer_value(json_object_get(m, "best_epoch")),
	       hml__json_number(m, "train_seconds"),
	       hml__json_string(m, "device") ? hml__json_string(m, "device") : "cpu",
	       hml__json_number(m, "samples_per_second"));
	if (isnan(hml__json_number(m, "latency_seconds_per_sample")))
		printf("  inference latency not measured at batch %lld\n",
		       (long long)json_integer_value(json_object_get(m, "latency_batch")));
	else
		printf("  inference %.4g us/sample at batch %lld\n",
		       hml__json_number(m, "latency_seconds_per_sample") * 1e6,
		       (long long)json_integer_value(json_object_get(m, "latency_batch")));
	cmd_latency_print(rec, "  ");
	cmd_ensemble_print(json_object_get(rec, "ensemble"));
}
