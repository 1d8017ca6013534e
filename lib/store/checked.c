/*
 * lib/store/checked.c - records read with their files checked (see checked.h).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/rankfile.h"
#include "core/util.h"
#include "store/checked.h"
#include "store/data_pick.h"
#include "sys/fsutil.h"

static int check_one(const hml__store *s, const json_t *rec, const char *kind,
                     const char *role, const char *since, char **abs_path)
{
	const json_t *idv = json_object_get(rec, "id");
	const char *id = json_is_string(idv) ? json_string_value(idv) : "?", *rel, *want;
	char hex[65], *path;
	int rc;

	*abs_path = NULL;
	rel = hml__record_file(rec, role);
	if (!rel)
		return hml__error_set(HML_EINVALID, "%s '%s' has no %s file in the manifest",
		                      kind, id, role);
	/* A link inside the experiment (models/m1.pt -> /elsewhere) would have
	 * hml hash and deploy a file that is not the experiment's. */
	if ((rc = hml__beneath_open(hml__store_dir(s), rel, O_RDONLY, 0)) >= 0)
		close(rc);
	else if (rc != HML_ENOTFOUND)
		return rc;
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
		goto fail;
	}
	want = hml__record_sha256(rec, rel);
	if (want && (rc = hml__sha256_file(path, hex)) < 0)
		goto fail;
	if (want && strcmp(hex, want) != 0) {
		rc = hml__error_set(HML_EINVALID, "%s file '%s' changed since it was %s (SHA-256 "
		                    "differs)", role, path, since);
		goto fail;
	}
	*abs_path = path;
	return 0;
fail:
	free(path);
	return rc;
}

/* A file may be a view of parts (an MPI run's ranks' files behind a data
 * set's virtual data sets, core/collection_vds.h): the parts are
 * registered under the roles the rank rule makes of the role ("data" ->
 * "data.r0003", core/rankfile.h), and the file is as sound as they are. */
int hml__checked_file(const hml__store *s, const json_t *rec, const char *kind,
                      const char *role, const char *since, char **abs_path)
{
	const char *key;
	json_t *v;
	int rc;

	if ((rc = check_one(s, rec, kind, role, since, abs_path)) < 0)
		return rc;
	json_object_foreach(json_object_get(rec, "files"), key, v) {
		char *part = NULL;

		if (hml__rankfile_parse(role, key) < 0)
			continue;
		rc = check_one(s, rec, kind, key, since, &part);
		free(part);
		if (rc < 0) {
			free(*abs_path);
			*abs_path = NULL;
			return rc;
		}
	}
	return 0;
}

int hml__checked_dataset_files(const hml__store *s, const char *const *ids, size_t n,
                               char ***paths)
{
	int rc;

	if (!(*paths = calloc(n ? n : 1, sizeof(**paths))))
		return hml__error_oom();
	for (size_t i = 0; i < n; i++)
		if ((rc = hml__checked_file(s, hml__store_find(s, "datasets", ids[i]), "data set",
		                            "data", "collected", &(*paths)[i])) < 0)
			return rc;
	return 0;
}

int hml__checked_model(const hml__store *s, const char *id, hml__model_view *model,
                       char **abs_path)
{
	int rc;

	*abs_path = NULL;
	if ((rc = hml__records_model(model, s, id)) < 0 ||
	    (rc = hml__checked_file(s, model->json, "model", "model", "registered", abs_path)) < 0)
		return rc;
	return 0;
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

/* The model's rows have the shapes of its region's in the newest data set
 * of the workflow. */
static int check_shapes(const hml__store *s, const hml__model_view *model,
                        const hml__workflow *w)
{
	const json_t *mine[2] = { model->input_shape, model->output_shape };
	const char *side[2] = { "input_shape", "output_shape" };
	hml__dataset_view d;
	const json_t *reg;

	if (!hml__data_pick_newest(&d, s, w->name, model->region))
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

int hml__checked_model_workflow(const hml__store *s, const hml__model_view *model,
                                hml__workflow **out)
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
	/* A recorded workflow.json that is gone: the workflow by name. One that
	 * is there but invalid is reported, not replaced by another. */
	if (rc == HML_ENOTFOUND && model->workflow)
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
