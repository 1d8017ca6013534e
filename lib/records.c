/*
 * lib/records.c - typed views of manifest records.
 */
#include <math.h>
#include <string.h>

#include "error.h"
#include "records.h"

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
	out->latency_s = num(metrics, "latency_seconds_per_sample");
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
}

size_t hml__records_count(const hml__store *s, const char *collection)
{
	return json_array_size(json_object_get(hml__store_manifest(s), collection));
}

static const json_t *at(const hml__store *s, const char *collection, size_t i)
{
	return json_array_get(json_object_get(hml__store_manifest(s), collection), i);
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
