/*
 * cmd/experiment.c - experiment records as the commands need them: JSON
 * fields read and written, record files integrity-checked, models tied
 * back to their workflow and region.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/envname.h"
#include "core/util.h"
#include "run/childenv.h"
#include "run/workflow.h"
#include "store/records.h"
#include "store/store.h"
#include "sys/fsutil.h"
#include "train/dataset.h"

double cmd_json_number(const json_t *obj, const char *key)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *cmd_json_string(const json_t *obj, const char *key)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

json_t *cmd_json_real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *cmd_json_shape(const int64_t *shape, int ndim)
{
	json_t *a = json_array();

	for (int k = 0; a && k < ndim; k++)
		json_array_append_new(a, json_integer(shape[k]));
	return a;
}

int cmd_record_file(hml__store *s, const json_t *rec, const char *kind, const char *role,
                    const char *since, char **abs_path)
{
	const char *id = cmd_json_string(rec, "id"), *rel, *want;
	char hex[65], *path;
	int rc;

	*abs_path = NULL;
	id = id ? id : "?";
	rel = hml__record_file(rec, role);
	if (!rel)
		return hml__error_set(HML_EINVALID, "%s '%s' has no %s file in the manifest",
		                      kind, id, role);
	if (!(path = hml__store_path(s, rel)))
		return HML_ENOMEM;
	if (path[0] != '/' && access(path, F_OK) == 0) {
		/* Absolute, so that printed paths work from anywhere. */
		char *abs = hml__path_abs(path);

		free(path);
		if (!(path = abs))
			return HML_ENOMEM;
	}
	if (access(path, R_OK) != 0) {
		rc = hml__error_set(HML_ENOTFOUND, "%s file '%s' of %s '%s' is missing",
		                    role, path, kind, id);
		free(path);
		return rc;
	}
	want = hml__record_sha256(rec, rel);
	if (want) {
		if ((rc = hml__sha256_file(path, hex)) < 0) {
			free(path);
			return rc;
		}
		if (strcmp(hex, want) != 0) {
			rc = hml__error_set(HML_EINVALID,
				"%s file '%s' changed since it was %s (SHA-256 differs)", role, path, since);
			free(path);
			return rc;
		}
	}
	*abs_path = path;
	return 0;
}

int cmd_dataset_files(hml__store *s, const char *const *ids, size_t n, char ***paths)
{
	int rc;

	if (!(*paths = calloc(n ? n : 1, sizeof(**paths))))
		return hml__error_oom();
	for (size_t i = 0; i < n; i++)
		if ((rc = cmd_record_file(s, hml__store_find(s, "datasets", ids[i]), "data set",
		                          "data", "collected", &(*paths)[i])) < 0)
			return rc;
	return 0;
}

int cmd_model_get(hml__store *s, const char *id, hml__model_view *model, char **abs_path)
{
	int rc;

	*abs_path = NULL;
	if ((rc = hml__records_model(model, s, id)) < 0 ||
	    (rc = cmd_record_file(s, model->json, "model", "model", "registered", abs_path)) < 0)
		return rc;
	return 0;
}

/* The newest data set of workflow `name` that holds region `label`. */
static int newest_dataset(hml__dataset_view *found, const hml__store *s, const char *name,
                          const char *label)
{
	hml__dataset_view d;
	int any = 0;

	for (size_t i = 0; hml__records_dataset_at(&d, s, i); i++)
		if (d.workflow_name && strcmp(d.workflow_name, name) == 0 &&
		    hml__dataset_view_region(&d, label)) {
			*found = d;
			any = 1;
		}
	return any;
}

static int same_shape(const json_t *a, const json_t *b)
{
	return json_is_array(a) && json_is_array(b) && json_equal((json_t *)a, (json_t *)b);
}

static void shape_text(char *buf, size_t size, const json_t *shape)
{
	int64_t dims[HML_MAX_DIMS];
	size_t i, n = json_array_size(shape);
	json_t *v;

	if (n > HML_MAX_DIMS)
		n = HML_MAX_DIMS;
	json_array_foreach(shape, i, v) {
		if (i < n)
			dims[i] = json_integer_value(v);
	}
	hml__format_shape(buf, size, dims, (int)n);
}

/* The workflow.json recorded by the first of the model's data sets that
 * still has one. */
static const char *model_workflow_path(const hml__store *s, const hml__model_view *model)
{
	hml__dataset_view dv;
	const json_t *d;
	size_t i;

	json_array_foreach(model->datasets, i, d) {
		const json_t *rec = json_is_string(d) ? hml__store_find(s, "datasets",
		                                                        json_string_value(d)) : NULL;
		if (!rec)
			continue;
		hml__dataset_view_of(&dv, rec);
		if (dv.workflow_path)
			return dv.workflow_path;
	}
	return NULL;
}

/* The model's rows have the shapes of its region's in the newest data set. */
static int check_shapes(const hml__store *s, const hml__model_view *model,
                        const hml__workflow *w)
{
	const json_t *mine[2] = { model->input_shape, model->output_shape };
	const char *side[2] = { "input_shape", "output_shape" };
	hml__dataset_view d;
	const json_t *reg;

	if (!newest_dataset(&d, s, w->name, model->region))
		return 0;
	reg = hml__dataset_view_region(&d, model->region);
	for (int k = 0; k < 2; k++) {
		const json_t *theirs = json_object_get(reg, side[k]);
		char a[96], b[96];

		if (!mine[k] || same_shape(mine[k], theirs))
			continue;
		shape_text(a, sizeof(a), mine[k]);
		shape_text(b, sizeof(b), theirs);
		return hml__error_set(HML_ESHAPE,
			"model '%s' has %s rows %s but region '%s' of data set '%s' has %s",
			model->id, k ? "output" : "input", a, model->region, d.id, b);
	}
	return 0;
}

int cmd_model_workflow(hml__store *s, const hml__model_view *model, hml__workflow **out)
{
	const char *id = model->id ? model->id : "?";
	const char *wpath = model_workflow_path(s, model);
	hml__workflow *w = NULL;
	int rc;

	*out = NULL;
	if (!model->region)
		return hml__error_set(HML_EINVALID, "model '%s' names no region", id);
	rc = HML_ENOTFOUND;
	if (wpath)
		rc = hml__workflow_load(&w, wpath);
	if (rc < 0 && model->workflow)
		rc = hml__workflow_load(&w, model->workflow);
	if (rc < 0) {
		if (!wpath && !model->workflow)
			rc = hml__error_set(HML_EINVALID, "model '%s' names no workflow", id);
		return rc;
	}
	if (!hml__workflow_region_find(w, model->region)) {
		rc = hml__error_set(HML_EINVALID,
			"model '%s' is for region '%s', which workflow '%s' does not have",
			id, model->region, w->name);
		goto fail;
	}
	if ((rc = check_shapes(s, model, w)) < 0)
		goto fail;
	*out = w;
	return 0;
fail:
	hml__workflow_free(w);
	return rc;
}

json_t *cmd_deploy_env(const char *label, const char *path)
{
	char name[HML__ENVNAME_MAX];
	json_t *env = json_object();

	if (!env) {
		hml__error_oom();
		return NULL;
	}
	if (hml__envname_region(name, sizeof(name), HML__ENV_MODE, label) < 0)
		goto fail;
	json_object_set_new(env, name, json_string("infer"));
	if (hml__envname_region(name, sizeof(name), HML__ENV_MODEL, label) < 0)
		goto fail;
	json_object_set_new(env, name, json_string(path));
	return env;
fail:
	json_decref(env);
	return NULL;
}

void cmd_workflow_env_check(const hml__workflow *w)
{
	for (char **e = w->env; e && *e; e++)
		if (hml__childenv_controls(*e))
			cmd_warn("workflow '%s' sets %.*s in its env; hml sets it for each run, "
			         "so it is ignored", w->name, (int)strcspn(*e, "="), *e);
}
