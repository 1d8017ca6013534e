/*
 * cmd/experiment.c - experiment records as the commands need them: JSON
 * fields read and written, record files integrity-checked, models tied
 * back to their workflow and region.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "dataset.h"
#include "fsutil.h"
#include "store.h"
#include "util.h"
#include "workflow.h"

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
	rel = cmd_json_string(json_object_get(rec, "files"), role);
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
	want = cmd_json_string(json_object_get(json_object_get(rec, "provenance"), "sha256"), rel);
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

int cmd_model_get(hml__store *s, const char *id, const json_t **model, char **abs_path)
{
	const json_t *m = hml__store_find(s, "models", id);
	int rc;

	*model = NULL;
	*abs_path = NULL;
	if (!m)
		return hml__error_set(HML_ENOTFOUND, "no model '%s' in experiment '%s'",
		                      id, hml__store_dir(s));
	if ((rc = cmd_record_file(s, m, "model", "model", "registered", abs_path)) < 0)
		return rc;
	*model = m;
	return 0;
}

/* The newest data set of workflow `name` that holds region `label`. */
static const json_t *newest_dataset(const hml__store *s, const char *name, const char *label)
{
	const json_t *sets = json_object_get(hml__store_manifest(s), "datasets"), *d, *found = NULL;
	size_t i;

	json_array_foreach(sets, i, d) {
		const char *wf = cmd_json_string(json_object_get(d, "workflow"), "name");

		if (wf && strcmp(wf, name) == 0 &&
		    json_object_get(json_object_get(d, "regions"), label))
			found = d;
	}
	return found;
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

int cmd_model_workflow(hml__store *s, const json_t *model, hml__workflow **out)
{
	const char *id = cmd_json_string(model, "id"), *label = cmd_json_string(model, "region");
	const char *wname = cmd_json_string(model, "workflow"), *wpath = NULL;
	const json_t *ds = json_object_get(model, "datasets"), *d, *reg;
	hml__workflow *w = NULL;
	size_t i;
	int rc;

	*out = NULL;
	if (!label)
		return hml__error_set(HML_EINVALID, "model '%s' names no region", id ? id : "?");
	json_array_foreach(ds, i, d) {
		const json_t *rec = json_is_string(d) ? hml__store_find(s, "datasets",
		                                                        json_string_value(d)) : NULL;
		if (rec && (wpath = cmd_json_string(json_object_get(rec, "workflow"), "path")))
			break;
	}
	rc = HML_ENOTFOUND;
	if (wpath)
		rc = hml__workflow_load(&w, wpath);
	if (rc < 0 && wname)
		rc = hml__workflow_load(&w, wname);
	if (rc < 0) {
		if (!wpath && !wname)
			rc = hml__error_set(HML_EINVALID, "model '%s' names no workflow", id);
		return rc;
	}
	if (!hml__workflow_region_find(w, label)) {
		rc = hml__error_set(HML_EINVALID,
			"model '%s' is for region '%s', which workflow '%s' does not have",
			id, label, w->name);
		goto fail;
	}
	d = newest_dataset(s, w->name, label);
	reg = d ? json_object_get(json_object_get(d, "regions"), label) : NULL;
	if (reg) {
		const char *side[2] = { "input_shape", "output_shape" };

		for (int k = 0; k < 2; k++) {
			const json_t *ms = json_object_get(model, side[k]);
			const json_t *rs = json_object_get(reg, side[k]);
			char a[96], b[96];

			if (!ms || same_shape(ms, rs))
				continue;
			shape_text(a, sizeof(a), ms);
			shape_text(b, sizeof(b), rs);
			rc = hml__error_set(HML_ESHAPE,
				"model '%s' has %s rows %s but region '%s' of data set '%s' has %s",
				id, k ? "output" : "input", a, label, cmd_json_string(d, "id"), b);
			goto fail;
		}
	}
	*out = w;
	return 0;
fail:
	hml__workflow_free(w);
	return rc;
}

/* The runtime's per-region variable: HML_<KEY>_<LABEL>, upper-cased. */
static void region_var(char *buf, size_t size, const char *key, const char *label)
{
	size_t n = (size_t)snprintf(buf, size, "HML_%s_", key);

	for (; *label && n + 1 < size; label++, n++)
		buf[n] = isalnum((unsigned char)*label) ? (char)toupper((unsigned char)*label) : '_';
	buf[n < size ? n : size - 1] = '\0';
}

json_t *cmd_deploy_env(const char *label, const char *path)
{
	char name[192];
	json_t *env = json_object();

	region_var(name, sizeof(name), "MODE", label);
	json_object_set_new(env, name, json_string("infer"));
	region_var(name, sizeof(name), "MODEL", label);
	json_object_set_new(env, name, json_string(path));
	return env;
}
