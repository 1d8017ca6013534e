/*
 * tests/unit/records.c - typed views of manifest records: models, data
 * sets, deployments; absent fields; lookups that fail.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "records.h"
#include "store.h"

static char dir[512];

static char *produce(hml__store *s, const char *subdir, const char *ext)
{
	char *p = hml__store_tmp_path(s, subdir, ext);
	FILE *f = p ? fopen(p, "w") : NULL;

	if (f) {
		fputs("x", f);
		fclose(f);
	}
	return p;
}

TEST(views)
{
	hml__store *s = NULL;
	hml__model_view m;
	hml__dataset_view d;
	hml__deployment_view p;
	char id[16], *tmp;

	CHECK_OK(hml__store_open(&s, dir, 1));
	CHECK_FAILS(hml__records_latest_deployment(&p, s), HML_ENOTFOUND, "no model is deployed");
	CHECK_FAILS(hml__records_model(&m, s, "m1"), HML_ENOTFOUND, "no model 'm1' in experiment");
	CHECK_FAILS(hml__records_dataset(&d, s, "d1"), HML_ENOTFOUND, "no data set 'd1'");
	CHECK(!hml__records_model_at(&m, s, 0));

	tmp = produce(s, "data", ".h5");
	{
		hml__store_file f = { "data", tmp, ".h5" };

		CHECK_OK(hml__store_add(s, "datasets", json_pack(
			"{s:{s:s, s:s}, s:b, s:{s:{s:i, s:[i]}}}",
			"workflow", "name", "binomial", "path", "/w/workflow.json",
			"complete", 0, "regions", "binomial", "rows", 4096, "input_shape", 5),
			&f, 1, 0, id, sizeof(id)));
	}
	free(tmp);
	tmp = produce(s, "models", ".pt");
	{
		hml__store_file f = { "model", tmp, ".pt" };

		CHECK_OK(hml__store_add(s, "models", json_pack(
			"{s:s, s:s, s:[i], s:[i], s:[s], s:{s:f, s:f}}",
			"region", "binomial", "workflow", "binomial", "input_shape", 5,
			"output_shape", 1, "datasets", "d1", "metrics", "val_rmse", 0.125,
			"latency_seconds_per_sample", 2e-7), &f, 1, 0, id, sizeof(id)));
	}
	free(tmp);
	CHECK_OK(hml__store_add(s, "models", json_pack("{s:s}", "region", "other"),
	                        NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__store_add(s, "deployments", json_pack("{s:s, s:s, s:s}", "model", "m2",
	                        "region", "other", "compiled", "c1"), NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__store_add(s, "deployments", json_pack("{s:s, s:s, s:{s:s}}", "model", "m1",
	                        "region", "binomial", "env", "HML_MODE_BINOMIAL", "infer"),
	                        NULL, 0, 0, id, sizeof(id)));

	CHECK_OK(hml__records_dataset(&d, s, "d1"));
	CHECK_STR(d.id, "d1");
	CHECK_STR(d.workflow_name, "binomial");
	CHECK_STR(d.workflow_path, "/w/workflow.json");
	CHECK_STR(d.file, "data/d1.h5");
	CHECK_EQ_INT(d.complete, 0);
	CHECK(hml__dataset_view_region(&d, "binomial") != NULL);
	CHECK(hml__dataset_view_region(&d, "other") == NULL);
	CHECK_EQ_INT(hml__dataset_view_rows(&d, "binomial"), 4096);
	CHECK_EQ_INT(hml__dataset_view_rows(&d, "other"), 0);
	CHECK_STR(hml__record_sha256(d.json, d.file),
	          "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881");

	CHECK_OK(hml__records_model(&m, s, "m1"));
	CHECK_STR(m.region, "binomial");
	CHECK_STR(m.workflow, "binomial");
	CHECK_STR(m.file, "models/m1.pt");
	CHECK_EQ_INT(json_array_size(m.input_shape), 1);
	CHECK_EQ_INT(json_integer_value(json_array_get(m.output_shape, 0)), 1);
	CHECK_STR(json_string_value(json_array_get(m.datasets, 0)), "d1");
	CHECK(m.val_rmse == 0.125 && m.latency_s == 2e-7);
	/* Absent fields: NULL and NaN. */
	CHECK(hml__records_model_at(&m, s, 1));
	CHECK_STR(m.id, "m2");
	CHECK(m.workflow == NULL && m.file == NULL && m.input_shape == NULL && m.datasets == NULL);
	CHECK(isnan(m.val_rmse) && isnan(m.latency_s));
	CHECK(!hml__records_model_at(&m, s, 2));
	CHECK_EQ_INT(hml__records_count(s, "models"), 2);

	CHECK_OK(hml__records_latest_deployment(&p, s));
	CHECK_STR(p.id, "p2");
	CHECK_STR(p.model, "m1");
	CHECK_STR(p.region, "binomial");
	CHECK_STR(json_string_value(json_object_get(p.env, "HML_MODE_BINOMIAL")), "infer");
	CHECK(p.compiled == NULL);
	hml__deployment_view_of(&p, hml__store_find(s, "deployments", "p1"));
	CHECK_STR(p.compiled, "c1");
	hml__store_free(s);
}

int main(void)
{
	const char *base = getenv("HML_TEST_TMP");

	snprintf(dir, sizeof(dir), "%s/records-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(views);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return check_report();
}
