/*
 * lib/store/records.c - typed views of manifest records.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "store/records.h"
#include "train/categorical.h"
#include "train/train.h"

static const char *str(const json_t *obj, const char *key)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static double num(const json_t *obj, const char *key)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const json_t *typed(const json_t *obj, const char *key, int (*is)(const json_t *))
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	return v && is(v) ? v : NULL;
}

static int is_array(const json_t *v) { return json_is_array(v); }
static int is_object(const json_t *v) { return json_is_object(v); }

const char *hml__record_file(const json_t *rec, const char *role)
{
	return str(json_object_get(rec, "files"), role);
}

const char *hml__record_sha256(const json_t *rec, const char *rel)
{
	return str(json_object_get(json_object_get(rec, "provenance"), "sha256"), rel);
}

/* A count of "iterative", or -1. */
static long long count_of(const json_t *it, const char *key)
{
	const json_t *v = json_object_get(it, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
}

json_t *hml__records_iterative_json(long long k, long long interleave, double qoi_error)
{
	return json_pack("{s:o, s:o, s:o}", "k", k >= 0 ? json_integer(k) : json_null(),
	                 "interleave", interleave >= 0 ? json_integer(interleave) : json_null(),
	                 "qoi_error", isfinite(qoi_error) ? json_real(qoi_error) : json_null());
}

/* The QoI error a model's card records: the QoI check's, else the
 * iterative search's objective; a value that is not a finite number >= 0
 * is none (qoi_error_bad says so; hml deploy warns). */
static void qoi_error_of(hml__model_view *out, const json_t *rec)
{
	const json_t *it = json_object_get(rec, "iterative");
	const json_t *v = json_object_get(json_object_get(rec, "qoi_error"), "value");

	out->k = count_of(it, "k");
	out->interleave = count_of(it, "interleave");
	out->qoi_error = NAN;
	out->qoi_error_source = NULL;
	out->qoi_error_bad = 0;
	if (!v || json_is_null(v)) {
		v = json_object_get(it, "qoi_error");
		if (!v || json_is_null(v))
			return;
		out->qoi_error_source = "iterative";
	} else {
		out->qoi_error_source = "qoi_check";
	}
	if (json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= 0) {
		out->qoi_error = json_number_value(v);
		return;
	}
	out->qoi_error_source = NULL;
	out->qoi_error_bad = 1;
}

void hml__model_view_of(hml__model_view *out, const json_t *rec)
{
	const json_t *metrics = json_object_get(rec, "metrics");

	out->json = rec;
	out->id = str(rec, "id");
	out->region = str(rec, "region");
	out->workflow = str(rec, "workflow");
	out->file = hml__record_file(rec, "model");
	out->input_shape = typed(rec, "input_shape", is_array);
	out->output_shape = typed(rec, "output_shape", is_array);
	out->datasets = typed(rec, "datasets", is_array);
	out->val_rmse = num(metrics, "val_rmse");
	out->metric = str(rec, "metric") ? str(rec, "metric") : "rmse";
	out->val_error = strcmp(out->metric, "mape") == 0 ? num(metrics, "val_mape") : out->val_rmse;
	out->latency_s = num(metrics, "latency_seconds_per_sample");
	out->family = str(rec, "family");
	out->arch = str(rec, "arch");
	out->data_sha256 = typed(rec, "data_sha256", is_object);
	out->rows = typed(rec, "rows", is_object);
	out->options = typed(rec, "options", is_object);
	out->metrics = typed(rec, "metrics", is_object);
	out->search = str(json_object_get(rec, "search"), "id");
	out->parent = str(rec, "parent");
	qoi_error_of(out, rec);
}

void hml__dataset_view_of(hml__dataset_view *out, const json_t *rec)
{
	const json_t *wf = json_object_get(rec, "workflow");

	out->json = rec;
	out->id = str(rec, "id");
	out->workflow_name = str(wf, "name");
	out->workflow_path = str(wf, "path");
	out->file = hml__record_file(rec, "data");
	out->complete = !json_is_false(json_object_get(rec, "complete"));
	out->regions = typed(rec, "regions", is_object);
	out->runs = typed(rec, "runs", is_array);
}

void hml__deployment_view_of(hml__deployment_view *out, const json_t *rec)
{
	out->json = rec;
	out->id = str(rec, "id");
	out->model = str(rec, "model");
	out->region = str(rec, "region");
	out->env = typed(rec, "env", is_object);
	out->compiled = str(rec, "compiled");
}

void hml__search_view_of(hml__search_view *out, const json_t *rec)
{
	out->json = rec;
	out->id = str(rec, "id");
	out->region = str(rec, "region");
	out->workflow = str(rec, "workflow");
	out->family = str(rec, "family");
	out->latency_target = str(rec, "latency_target");
	out->metric = str(rec, "metric") ? str(rec, "metric") : "rmse";
	out->status = str(rec, "status");
	out->history = hml__record_file(rec, "history");
	out->space = typed(rec, "space", is_object);
	out->space_sha256 = str(rec, "space_sha256");
	out->datasets = typed(rec, "datasets", is_array);
	out->data_sha256 = typed(rec, "data_sha256", is_object);
	out->constraints = typed(rec, "constraints", is_object);
	out->front = typed(rec, "front", is_array);
	out->seed = num(rec, "seed");
	out->budget = num(rec, "budget");
	out->workers = num(rec, "workers");
	out->eta = num(rec, "eta");
	out->rungs = num(rec, "rungs");
	out->max_epochs = num(rec, "max_epochs");
	out->deterministic = json_is_true(json_object_get(rec, "deterministic"));
}

size_t hml__records_count(const hml__store *s, const char *collection)
{
	return json_array_size(json_object_get(hml__store_manifest(s), collection));
}

static const json_t *at(const hml__store *s, const char *collection, size_t i)
{
	return json_array_get(json_object_get(hml__store_manifest(s), collection), i);
}

int64_t hml__records_max_seed(const hml__store *s)
{
	hml__dataset_view d;
	int64_t max = -1;
	const json_t *run;
	size_t k;

	for (size_t i = 0; hml__records_dataset_at(&d, s, i); i++)
		json_array_foreach(d.runs, k, run) {
			const json_t *seed = json_object_get(run, "seed");

			if (json_is_integer(seed) && json_integer_value(seed) > max)
				max = json_integer_value(seed);
		}
	return max;
}

double hml__records_run_wall_max(const hml__store *s, const char *workflow)
{
	hml__dataset_view d;
	double max = 0.0;
	const json_t *run;
	size_t k;

	for (size_t i = 0; hml__records_dataset_at(&d, s, i); i++) {
		if (!workflow || !d.workflow_name || strcmp(d.workflow_name, workflow) != 0)
			continue;
		json_array_foreach(d.runs, k, run) {
			double w = hml__json_number(run, "wall_seconds");

			if (json_is_true(json_object_get(run, "succeeded")) && isfinite(w) && w > max)
				max = w;
		}
	}
	return max;
}

const char *hml__records_dataset_with_argv(const hml__store *s, char *const *argv)
{
	hml__dataset_view d;
	const json_t *run;
	json_t *want = json_array();
	const char *id = NULL;
	size_t k;

	for (char *const *a = argv; want && *a; a++)
		json_array_append_new(want, hml__json_bytes(*a));
	for (size_t i = 0; want && !id && hml__records_dataset_at(&d, s, i); i++)
		json_array_foreach(d.runs, k, run)
			if (json_equal(json_object_get(run, "argv"), want))
				id = d.id;
	json_decref(want);
	return id;
}

int hml__records_model_at(hml__model_view *out, const hml__store *s, size_t i)
{
	const json_t *rec = at(s, "models", i);

	if (rec)
		hml__model_view_of(out, rec);
	return rec != NULL;
}

int hml__records_dataset_at(hml__dataset_view *out, const hml__store *s, size_t i)
{
	const json_t *rec = at(s, "datasets", i);

	if (rec)
		hml__dataset_view_of(out, rec);
	return rec != NULL;
}

int hml__records_search_at(hml__search_view *out, const hml__store *s, size_t i)
{
	const json_t *rec = at(s, "searches", i);

	if (rec)
		hml__search_view_of(out, rec);
	return rec != NULL;
}

int hml__records_search(hml__search_view *out, const hml__store *s, const char *id)
{
	const json_t *rec = hml__store_find(s, "searches", id);

	memset(out, 0, sizeof(*out));
	if (!rec)
		return hml__error_set(HML_ENOTFOUND, "no search '%s' in experiment '%s'",
		                      id, hml__store_dir(s));
	hml__search_view_of(out, rec);
	return 0;
}

int hml__records_model(hml__model_view *out, const hml__store *s, const char *id)
{
	const json_t *rec = hml__store_find(s, "models", id);

	memset(out, 0, sizeof(*out));
	if (!rec)
		return hml__error_set(HML_ENOTFOUND, "no model '%s' in experiment '%s'",
		                      id, hml__store_dir(s));
	hml__model_view_of(out, rec);
	return 0;
}

const char *hml__records_search_model(const hml__store *s, const char *search, long trial)
{
	hml__model_view m;

	for (size_t k = 0; hml__records_model_at(&m, s, k); k++) {
		const json_t *by = json_object_get(m.json, "search");
		const char *id = str(by, "id");

		if (by && strcmp(id ? id : "", search) == 0 &&
		    json_integer_value(json_object_get(by, "trial")) == trial)
			return m.id;
	}
	return NULL;
}

int hml__records_dataset(hml__dataset_view *out, const hml__store *s, const char *id)
{
	const json_t *rec = hml__store_find(s, "datasets", id);

	memset(out, 0, sizeof(*out));
	if (!rec)
		return hml__error_set(HML_ENOTFOUND, "no data set '%s' in experiment '%s'",
		                      id, hml__store_dir(s));
	hml__dataset_view_of(out, rec);
	return 0;
}

const json_t *hml__dataset_view_region(const hml__dataset_view *d, const char *label)
{
	return typed(d->regions, label, is_object);
}

long long hml__dataset_view_rows(const hml__dataset_view *d, const char *label)
{
	return (long long)json_integer_value(json_object_get(hml__dataset_view_region(d, label),
	                                                     "rows"));
}

int hml__records_latest_deployment(hml__deployment_view *out, const hml__store *s)
{
	size_t n = hml__records_count(s, "deployments");
	const json_t *rec = n ? at(s, "deployments", n - 1) : NULL;

	memset(out, 0, sizeof(*out));
	if (rec)
		hml__deployment_view_of(out, rec);
	if (!out->model)
		return hml__error_set(HML_ENOTFOUND,
			"no model is deployed in experiment '%s': run 'hml deploy' or name a model",
			hml__store_dir(s));
	return 0;
}

/* ---- the writer of trained models' records ----------------------------- */

static json_t *count_or_null(int64_t v)
{
	return v >= 0 ? json_integer((json_int_t)v) : json_null();
}

static json_t *flag_or_null(int v)
{
	return v >= 0 ? json_boolean(v) : json_null();
}

static json_t *string_or_null(const char *v)
{
	return v ? json_string(v) : json_null();
}

json_t *hml__records_data_sha256(const hml__store *s, const char *const *ids, size_t n)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < n; i++) {
		const json_t *rec = hml__store_find(s, "datasets", ids[i]);
		const char *sha = hml__record_sha256(rec, hml__record_file(rec, "data"));

		if (json_object_set_new(o, ids[i], string_or_null(sha)) < 0) {
			json_decref(o);
			o = NULL;
		}
	}
	return o;
}

/* The effective options: weight_decay < 0 means the optimiser's default. */
static json_t *options_json(const hml__train_options *o)
{
	int adamw = o->optimizer && strcmp(o->optimizer, "adamw") == 0;

	return json_pack("{s:i, s:I, s:o, s:o, s:s, s:s, s:i, s:o, s:I, s:i, s:o, s:o, s:o, s:s,"
	                 " s:o, s:i}",
		"epochs", o->epochs, "batch", (json_int_t)o->batch, "lr", hml__json_real(o->lr),
		"weight_decay", hml__json_real(o->weight_decay >= 0 ? o->weight_decay
		                                                  : adamw ? 1e-2 : 0.0),
		"optimizer", o->optimizer ? o->optimizer : "adam",
		"schedule", o->schedule ? o->schedule : "plateau",
		"patience", o->patience, "clip", hml__json_real(o->clip), "seed", (json_int_t)o->seed,
		"threads", o->threads, "val_fraction", hml__json_real(o->val_fraction),
		"test_fraction", hml__json_real(o->test_fraction),
		"max_seconds", o->max_seconds > 0 ? json_real(o->max_seconds) : json_null(),
		"loss", o->loss ? o->loss : "mse", "mape_floor", hml__json_real(o->mape_floor),
		"rollout", o->rollout);
}

static json_t *metrics_json(const hml__train_result *r)
{
	const int rollout = r->val_rollout_windows > 0;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
	                 " s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		"val_rmse", hml__json_real(r->val_rmse), "test_rmse", hml__json_real(r->test_rmse),
		"test_rmse_const", r->test_rmse_const > 0 ? hml__json_real(r->test_rmse_const) : json_null(),
		"val_rollout_rmse", rollout ? hml__json_real(r->val_rollout_rmse) : json_null(),
		"val_rollout_mape", rollout ? hml__json_real(r->val_rollout_mape) : json_null(),
		"val_rollout_windows", rollout ? count_or_null(r->val_rollout_windows) : json_null(),
		"val_mape", hml__json_real(r->val_mape), "test_mape", hml__json_real(r->test_mape),
		"test_mae", hml__json_real(r->test_mae), "test_max_abs", hml__json_real(r->test_max_abs),
		"params", count_or_null(r->params), "epochs_run", count_or_null(r->epochs_run),
		"best_epoch", count_or_null(r->best_epoch),
		"stopped_early", flag_or_null(r->stopped_early),
		"out_of_time", flag_or_null(r->out_of_time),
		"train_seconds", hml__json_real(r->train_seconds),
		"train_step_seconds", hml__json_real(r->train_step_seconds),
		"samples_per_second", hml__json_real(r->samples_per_second),
		"final_lr", hml__json_real(r->final_lr),
		"latency_seconds_per_sample", hml__json_real(r->latency_s_per_sample),
		"latency_batch", count_or_null(r->latency_batch),
		"forward_max_diff", hml__json_real(r->forward_max_diff),
		"device", r->device[0] ? json_string(r->device) : json_null());
}

/* rows and metrics of an imported model: measured on every collected row. */
static int imported_json(json_t *rec, const hml__model_facts *f)
{
	const hml__train_result *r = f->result;
	const hml__model_import *im = f->import;
	json_t *metrics = json_pack("{s:o, s:o, s:o, s:o, s:s}",
		"val_rmse", hml__json_real(r->val_rmse), "test_rmse", hml__json_real(r->test_rmse),
		"test_mae", hml__json_real(r->test_mae), "test_max_abs", hml__json_real(r->test_max_abs),
		"rows_measured", "all collected rows of the region");

	if (metrics && r->params > 0)   /* known when hml could read the graph */
		json_object_set_new(metrics, "params", json_integer((json_int_t)r->params));
	return json_object_set_new(rec, "rows", json_pack("{s:I, s:I}", "evaluated",
	                           (json_int_t)im->rows, "dropped_nonfinite",
	                           (json_int_t)f->dropped_nonfinite)) < 0 ||
	       json_object_set_new(rec, "metrics", metrics) < 0 ||
	       json_object_set_new(rec, "import", json_pack("{s:o, s:s, s:b, s:o}", "origin",
	                           hml__json_bytes(im->origin), "sha256", im->sha256,
	                           "compilable", im->not_compilable == NULL, "not_compilable",
	                           string_or_null(im->not_compilable))) < 0 ? -1 : 0;
}

/* The declaration it trained with, [{feature, classes}] ([] for none; the
 * options were checked before training). */
static json_t *categorical_json(const hml__train_options *o)
{
	hml__categorical *c = NULL;
	size_t n = 0;
	json_t *arr;

	if (hml__categorical_parse(&c, &n, o->categorical) < 0)
		return NULL;
	arr = hml__categorical_json(c, n);
	free(c);
	return arr;
}

/* rows, options, metrics and normalisation of a trained model. */
static int trained_json(json_t *rec, const hml__model_facts *f)
{
	const hml__train_result *r = f->result;

	if (json_object_set_new(rec, "rows", json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}",
	                        "train", count_or_null(r->n_train), "validation",
	                        count_or_null(r->n_val), "test", count_or_null(r->n_test),
	                        "dropped_nonfinite", count_or_null(f->dropped_nonfinite),
	                        "nonfinite_values", count_or_null(f->nonfinite_values),
	                        "nonfinite_policy", string_or_null(f->nonfinite_policy))) < 0 ||
	    json_object_set_new(rec, "options", options_json(f->options)) < 0 ||
	    json_object_set_new(rec, "loss", json_string(f->options->loss ? f->options->loss
	                                                                 : "mse")) < 0 ||
	    json_object_set_new(rec, "metric", json_string(f->options->metric ? f->options->metric
	                                                                     : "rmse")) < 0 ||
	    json_object_set_new(rec, "metrics", metrics_json(r)) < 0 ||
	    json_object_set_new(rec, "categorical", categorical_json(f->options)) < 0 ||
	    json_object_set_new(rec, "normalisation", json_string(
		"per feature (mlp) or channel (cnn; cnnvec inputs, its outputs per feature) "
		"mean and std of the training split, "
		"inside the model: buffers in_mean, in_std, out_mean, out_std")) < 0)
		return -1;
	if (f->search &&
	    json_object_set_new(rec, "search", json_pack("{s:s, s:I, s:I}", "id", f->search,
	                        "trial", (json_int_t)f->trial, "config", (json_int_t)f->config)) < 0)
		return -1;
	return 0;
}

json_t *hml__model_record_new(const hml__store *s, const hml__model_facts *f)
{
	const hml__train_result *r = f->result;
	json_t *ids = json_array(), *rec;
	char family[32];

	for (size_t i = 0; ids && i < f->ndatasets; i++)
		json_array_append_new(ids, json_string(f->datasets[i]));
	snprintf(family, sizeof(family), "%.*s", (int)strcspn(r->arch, ":"), r->arch);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o}",
		"workflow", f->workflow ? f->workflow : "", "region", f->region,
		"family", f->import ? "imported" : family, "arch", r->arch,
		"input_shape", f->input_shape ? json_deep_copy(f->input_shape) : json_null(),
		"output_shape", f->output_shape ? json_deep_copy(f->output_shape) : json_null(),
		"datasets", ids, "data_sha256", hml__records_data_sha256(s, f->datasets, f->ndatasets));
	if (rec && f->parent && json_object_set_new(rec, "parent", json_string(f->parent)) < 0) {
		json_decref(rec);
		rec = NULL;
	}
	if (rec && (f->import ? imported_json(rec, f) : trained_json(rec, f)) < 0) {
		json_decref(rec);
		rec = NULL;
	}
	if (!rec)
		hml__error_oom();
	return rec;
}

/* ---- a search's QoI check ------------------------------------------------ */

typedef struct qoi_update {
	const char *search;
	const json_t *report;
} qoi_update;

/* A check's per-data-set errors without their detail: [{dataset, metric,
 * error[, max_error, passed]}] (new; NULL when it has none). */
static json_t *qois_brief(const json_t *check)
{
	static const char *const keys[] = { "dataset", "metric", "error", "max_error", "passed",
	                                    NULL };
	const json_t *qois = json_object_get(check, "qois"), *q;
	json_t *out, *o;
	size_t i;

	if (!qois || !(out = json_array()))
		return NULL;
	json_array_foreach(qois, i, q) {
		if (!(o = json_object()))
			break;
		for (const char *const *k = keys; *k; k++)
			if (json_object_get(q, *k))
				json_object_set(o, *k, json_object_get(q, *k));
		json_array_append_new(out, o);
	}
	return out;
}

static int set_qoi_check(json_t *manifest, void *payload)
{
	const qoi_update *u = payload;
	json_t *rec = hml__manifest_find(manifest, "searches", u->search), *check, *e;
	const json_t *checks = json_object_get(u->report, "checks");
	size_t i, j;

	if (!rec)
		return hml__error_set(HML_ENOTFOUND, "no search '%s' in the experiment", u->search);
	json_object_set_new(rec, "qoi_check", json_deep_copy(u->report));
	json_array_foreach(checks, i, check) {
		const char *model = str(check, "model");
		json_t *m = model ? hml__manifest_find(manifest, "models", model) : NULL;
		json_t *err = json_object_get(check, "error"), *brief = qois_brief(check), *q;

		json_array_foreach(json_object_get(rec, "front"), j, e)
			if (model && str(e, "model") && strcmp(str(e, "model"), model) == 0) {
				json_object_set(e, "qoi_error", err);
				if (brief)
					json_object_set(e, "qoi_errors", brief);
			}
		if (m && (q = json_pack("{s:O, s:O, s:O, s:s, s:O}",
				"value", err, "metric", json_object_get(u->report, "metric"),
				"dataset", json_object_get(u->report, "dataset"), "search", u->search,
				"seed", json_object_get(u->report, "seed")))) {
			if (brief)
				json_object_set(q, "qois", brief);
			json_object_set_new(m, "qoi_error", q);
		}
		json_decref(brief);
	}
	return 0;
}

int hml__records_set_qoi_check(hml__store *s, const char *search, const json_t *report)
{
	qoi_update u = { search, report };

	if (!hml__store_find(s, "searches", search))
		return hml__error_set(HML_ENOTFOUND, "no search '%s' in experiment '%s'", search,
		                      hml__store_dir(s));
	return hml__store_update(s, set_qoi_check, &u);
}

int hml__records_sole_workflow(const hml__store *s, const char **path, const char **name,
                               const char **other)
{
	hml__dataset_view d;

	*path = *name = *other = NULL;
	for (size_t i = 0; hml__records_dataset_at(&d, s, i); i++) {
		if (!d.workflow_path)
			continue;
		if (!*path) {
			*path = d.workflow_path;
			*name = d.workflow_name;
		} else if (strcmp(*path, d.workflow_path) != 0) {
			*other = d.workflow_name;
			return -1;
		}
	}
	return *path ? 1 : 0;
}
