/*
 * tests/unit/checked.c - records read with their files checked: a data or
 * model file missing, changed since registered, or absent from the record;
 * a model tied back to its workflow, region and shapes, and each refusal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "fixtures.h"
#include "store/checked.h"
#include "store/store.h"
#include "sys/fsutil.h"


/* A produced artefact under a temporary name of the store. */
static char *produce(hml__store *s, const char *subdir, const char *ext, const char *text)
{
	char *p = hml__store_tmp_path(s, subdir, ext);

	if (p)
		write_text_mode(p, text, 0644);
	return p;
}

/* DIR/wf/workflow.json: workflow "wf" with region r1 (and an app). */
static char *write_workflow(void)
{
	static char path[600];
	char app[600], wdir[560];

	snprintf(wdir, sizeof(wdir), "%s/wf", tmpdir);
	CHECK_OK(hml__mkdir_p(wdir));
	snprintf(app, sizeof(app), "%s/app", wdir);
	write_text_mode(app, "#!/bin/sh\nexit 0\n", 0755);
	snprintf(path, sizeof(path), "%s/workflow.json", wdir);
	write_text_mode(path, "{\"schema_version\": 1, \"name\": \"wf\", \"program\": \"app\", "
	           "\"collect\": {\"args\": []}, \"evaluate\": {\"args\": []}, "
	           "\"regions\": [{\"label\": \"r1\", \"model\": {\"family\": \"mlp\"}}], "
	           "\"qoi\": {\"dataset\": \"price\", \"metric\": \"rmse\"}}\n", 0644);
	return path;
}

/* A data set of workflow wf (at wpath) with rows of r1 of `in` features. */
static void add_dataset(hml__store *s, const char *wpath, int in, char *id)
{
	char *tmp = produce(s, "data", ".h5", "rows");
	hml__store_file f = { "data", tmp, ".h5", NULL, NULL };

	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:{s:s, s:s}, s:{s:{s:i, s:[i], s:[i]}}}",
	         "workflow", "name", "wf", "path", wpath, "regions", "r1", "rows", 10,
	         "input_shape", in, "output_shape", 1), &f, 1, 0, id, 16));
	free(tmp);
}

TEST(files)
{
	hml__store *s = NULL;
	char id[16], id2[16], *path = NULL, **paths = NULL, *full;
	const char *ids[2];

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	add_dataset(s, write_workflow(), 5, id);
	add_dataset(s, write_workflow(), 5, id2);
	ids[0] = id, ids[1] = id2;
	/* Both files, absolute, as registered. */
	CHECK_OK(hml__checked_dataset_files(s, ids, 2, &paths));
	CHECK(paths && paths[0][0] == '/' && strstr(paths[0], "/data/d1.h5") &&
	      strstr(paths[1], "/data/d2.h5"));
	for (int i = 0; paths && i < 2; i++)
		free(paths[i]);
	free(paths);
	/* Changed since collected: refused, named. */
	full = hml__store_path(s, "data/d2.h5");
	write_text_mode(full, "other rows", 0644);
	CHECK_FAILS(hml__checked_dataset_files(s, ids, 2, &paths), HML_EINVALID,
	            "data/d2.h5' changed since it was collected (SHA-256 differs)");
	CHECK(paths && paths[0] && !paths[1]);   /* reached entries stay yours */
	free(paths[0]);
	free(paths);
	/* Missing. */
	remove(full);
	CHECK_FAILS(hml__checked_file(s, hml__store_find(s, "datasets", "d2"), "data set", "data",
	                              "collected", &path), HML_ENOTFOUND,
	            "of data set 'd2' is missing");
	CHECK(path == NULL);
	free(full);
	/* No such file in the record. */
	CHECK_FAILS(hml__checked_file(s, hml__store_find(s, "datasets", "d1"), "data set", "model",
	                              "registered", &path), HML_EINVALID,
	            "data set 'd1' has no model file in the manifest");
	hml__store_free(s);
}

/* A model of region `region` (NULL: none) with `in` input features
 * trained on d1, workflow named `wf` (NULL: none). */
static void add_model(hml__store *s, const char *region, const char *wf, int in, char *id)
{
	char *tmp = produce(s, "models", ".pt", "weights");
	hml__store_file f = { "model", tmp, ".pt", NULL, NULL };
	json_t *rec = json_pack("{s:[i], s:[i], s:[s]}", "input_shape", in, "output_shape", 1,
	                        "datasets", "d1");

	if (region)
		json_object_set_new(rec, "region", json_string(region));
	if (wf)
		json_object_set_new(rec, "workflow", json_string(wf));
	CHECK_OK(hml__store_add(s, "models", rec, &f, 1, 0, id, 16));
	free(tmp);
}

TEST(models)
{
	hml__store *s = NULL;
	hml__model_view m;
	hml__workflow *w = NULL;
	char id[16], *path = NULL;

	CHECK_OK(hml__store_open(&s, tmpdir, 0));
	CHECK_FAILS(hml__checked_model(s, "m9", &m, &path), HML_ENOTFOUND,
	            "no model 'm9' in experiment");
	add_model(s, "r1", "wf", 5, id);   /* m1: fits */
	CHECK_OK(hml__checked_model(s, "m1", &m, &path));
	CHECK(path && strstr(path, "/models/m1.pt"));
	free(path);
	CHECK_OK(hml__checked_model_workflow(s, &m, &w));
	CHECK(w && strcmp(w->name, "wf") == 0);
	hml__workflow_free(w);
	/* Shapes are checked against the newest data set of the workflow:
	 * d2 (5 features) fits, a newer d3 of 6 features does not. */
	{
		char d3[16];

		add_dataset(s, write_workflow(), 6, d3);
		CHECK_STR(d3, "d3");
	}
	CHECK_OK(hml__records_model(&m, s, "m1"));
	CHECK_FAILS(hml__checked_model_workflow(s, &m, &w), HML_ESHAPE,
	            "model 'm1' has input rows [5] but region 'r1' of data set 'd3' has [6]");
	CHECK(w == NULL);
	add_model(s, "r2", "wf", 6, id);   /* m2: a region the workflow lacks */
	CHECK_OK(hml__records_model(&m, s, "m2"));
	CHECK_FAILS(hml__checked_model_workflow(s, &m, &w), HML_EINVALID,
	            "model 'm2' is for region 'r2', which workflow 'wf' does not have");
	add_model(s, NULL, "wf", 6, id);   /* m3 */
	CHECK_OK(hml__records_model(&m, s, "m3"));
	CHECK_FAILS(hml__checked_model_workflow(s, &m, &w), HML_EINVALID, "model 'm3' names no region");
	hml__store_free(s);
}

int main(void)
{
	if (tmp_dir_make("checked") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(files);
	RUN(models);
	tmp_dir_remove();
	return check_report();
}
