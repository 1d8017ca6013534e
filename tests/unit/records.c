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
#include "core/json.h"
#include "fixtures.h"
#include "store/records.h"
#include "store/sampling.h"
#include "store/store.h"
#include "train/train.h"


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

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	CHECK_FAILS(hml__records_latest_deployment(&p, s), HML_ENOTFOUND, "no model is deployed");
	CHECK_FAILS(hml__records_model(&m, s, "m1"), HML_ENOTFOUND, "no model 'm1' in experiment");
	CHECK_FAILS(hml__records_dataset(&d, s, "d1"), HML_ENOTFOUND, "no data set 'd1'");
	CHECK(!hml__records_model_at(&m, s, 0));

	tmp = produce(s, "data", ".h5");
	{
		hml__store_file f = { "data", tmp, ".h5", NULL, NULL };

		CHECK_OK(hml__store_add(s, "datasets", json_pack(
			"{s:{s:s, s:s}, s:b, s:{s:{s:i, s:[i]}}}",
			"workflow", "name", "binomial", "path", "/w/workflow.json",
			"complete", 0, "regions", "binomial", "rows", 4096, "input_shape", 5),
			&f, 1, 0, id, sizeof(id)));
	}
	free(tmp);
	tmp = produce(s, "models", ".pt");
	{
		hml__store_file f = { "model", tmp, ".pt", NULL, NULL };

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
	CHECK(d.runs == NULL);
	CHECK_EQ_INT(hml__records_max_seed(s), -1);
	/* Seeds of collect's runs (hml-manifest(5) datasets[].runs[].seed): the
	 * largest of every data set; a malformed one is not a seed. */
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:[{s:i}, {s:i}, {s:s}, {}]}", "runs",
	                        "seed", 7, "seed", 3, "seed", "99"), NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:[{s:i}]}", "runs", "seed", 5),
	                        NULL, 0, 0, id, sizeof(id)));
	CHECK_EQ_INT(hml__records_max_seed(s), 7);
	CHECK_OK(hml__records_dataset(&d, s, "d2"));
	CHECK_EQ_INT(json_array_size(d.runs), 4);
	/* The data set a command line was collected with (runs[].argv), as
	 * hml evaluate's warning asks; bytes that are not UTF-8 compare too. */
	{
		char *ran[] = { "/x/app", "--n", "5", NULL }, *other[] = { "/x/app", "--n", NULL };
		char *raw[] = { "/x/app", "\xff", NULL };

		CHECK(hml__records_dataset_with_argv(s, ran) == NULL);
		CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:[{s:i, s:[s, s, s]}, {s:o}]}",
		                        "runs", "seed", 1, "argv", "/x/app", "--n", "5", "argv",
		                        json_pack("[s, {s:s}]", "/x/app", "hex", "ff")),
		                        NULL, 0, 0, id, sizeof(id)));
		CHECK_STR(hml__records_dataset_with_argv(s, ran), id);
		CHECK_STR(hml__records_dataset_with_argv(s, raw), id);
		CHECK(hml__records_dataset_with_argv(s, other) == NULL);
	}

	CHECK_OK(hml__records_model(&m, s, "m1"));
	CHECK_STR(m.region, "binomial");
	CHECK_STR(m.workflow, "binomial");
	CHECK_STR(m.file, "models/m1.pt");
	CHECK_EQ_INT(json_array_size(m.input_shape), 1);
	CHECK_EQ_INT(json_integer_value(json_array_get(m.output_shape, 0)), 1);
	CHECK_STR(json_string_value(json_array_get(m.datasets, 0)), "d1");
	CHECK(m.val_rmse == 0.125 && m.latency_s == 2e-7);
	/* a card of older hml names no metric: RMSE */
	CHECK_STR(m.metric, "rmse");
	CHECK(m.val_error == 0.125);
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

static double metric(const hml__model_view *m, const char *key)
{
	const json_t *v = json_object_get(m->metrics, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long count(const json_t *obj, const char *key)
{
	return (long long)json_integer_value(json_object_get(obj, key));
}

/* The keys of object `o` in order, joined with ' '. */
static const char *keys(const json_t *o)
{
	static char buf[512];
	const char *k;
	json_t *v;
	size_t n = 0;

	buf[0] = '\0';
	json_object_foreach((json_t *)o, k, v)
		n += (size_t)snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) - n : 0, "%s%s",
		                      n ? " " : "", k);
	return buf;
}

/* hml__model_record_new() written, registered, and read back through the
 * view: every field, then a search's trial with unknowns (null). The
 * layout is the one hml train and hml search have always written (the
 * keys in order: cards and --json print them so). */
TEST(model_record_round_trip)
{
	hml__store *s = NULL;
	hml__model_view m;
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;
	hml__train_result r;
	json_t *in = json_pack("[i]", 5), *out = json_pack("[i, i]", 2, 3), *rec;
	const char *ids[] = { "d1" };
	char id[16];

	CHECK_OK(hml__store_open(&s, tmpdir, 0));
	memset(&r, 0, sizeof(r));
	snprintf(r.arch, sizeof(r.arch), "mlp:32x16:tanh");
	r.params = 785, r.n_train = 800, r.n_val = 100, r.n_test = 99;
	r.epochs_run = 40, r.best_epoch = 31, r.stopped_early = 1, r.out_of_time = 0;
	r.train_seconds = 2.5, r.train_step_seconds = 2.25, r.samples_per_second = 12800;
	r.final_lr = 5e-4, r.val_rmse = 0.25, r.test_rmse = 0.375, r.test_mae = 0.125;
	r.test_max_abs = 1.5, r.latency_s_per_sample = 3e-7, r.latency_batch = 4096;
	r.test_rmse_const = 4.5;
	r.forward_max_diff = 1e-9, r.val_mape = 12.5, r.test_mape = 13.25;
	snprintf(r.device, sizeof(r.device), "cuda");
	o.loss = "relative", o.metric = "mape", o.mape_floor = 1;
	o.epochs = 40, o.batch = 64, o.lr = 2e-3, o.optimizer = "adamw", o.schedule = "cosine";
	o.patience = 7, o.clip = 1, o.seed = 9, o.threads = 2, o.val_fraction = 0.2;
	o.test_fraction = 0.15, o.max_seconds = 60;
	{
		hml__model_facts f = { "binomial", "binomial", in, out, ids, 1, &o, &r, "error",
		                       3, 4, NULL, 0, 0, NULL, "m1" };

		CHECK((rec = hml__model_record_new(s, &f)) != NULL);
	}
	CHECK_OK(hml__store_add(s, "models", rec, NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__records_model(&m, s, id));
	CHECK_STR(m.workflow, "binomial");
	CHECK_STR(m.region, "binomial");
	CHECK_STR(m.family, "mlp");
	CHECK_STR(m.arch, "mlp:32x16:tanh");
	CHECK_STR(m.parent, "m1");   /* hml train --from m1 */
	CHECK(json_equal((json_t *)m.input_shape, in) && json_equal((json_t *)m.output_shape, out));
	CHECK_EQ_INT(json_array_size(m.datasets), 1);
	CHECK_STR(json_string_value(json_array_get(m.datasets, 0)), "d1");
	CHECK_STR(json_string_value(json_object_get(m.data_sha256, "d1")),
	          "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881");
	CHECK_EQ_INT(count(m.rows, "train"), 800);
	CHECK_EQ_INT(count(m.rows, "validation"), 100);
	CHECK_EQ_INT(count(m.rows, "test"), 99);
	CHECK_EQ_INT(count(m.rows, "dropped_nonfinite"), 3);
	CHECK_EQ_INT(count(m.rows, "nonfinite_values"), 4);
	CHECK_STR(json_string_value(json_object_get(m.rows, "nonfinite_policy")), "error");
	CHECK_EQ_INT(count(m.options, "epochs"), 40);
	CHECK_EQ_INT(count(m.options, "batch"), 64);
	CHECK(json_real_value(json_object_get(m.options, "lr")) == 2e-3);
	/* adamw's default decay, as trained */
	CHECK(json_real_value(json_object_get(m.options, "weight_decay")) == 1e-2);
	CHECK_STR(json_string_value(json_object_get(m.options, "optimizer")), "adamw");
	CHECK_STR(json_string_value(json_object_get(m.options, "schedule")), "cosine");
	CHECK_EQ_INT(count(m.options, "patience"), 7);
	CHECK(json_real_value(json_object_get(m.options, "clip")) == 1);
	CHECK_EQ_INT(count(m.options, "seed"), 9);
	CHECK_EQ_INT(count(m.options, "threads"), 2);
	CHECK(json_real_value(json_object_get(m.options, "val_fraction")) == 0.2);
	CHECK(json_real_value(json_object_get(m.options, "test_fraction")) == 0.15);
	CHECK(json_real_value(json_object_get(m.options, "max_seconds")) == 60);
	CHECK(m.val_rmse == 0.25 && m.latency_s == 3e-7);
	CHECK(metric(&m, "test_rmse") == 0.375 && metric(&m, "test_mae") == 0.125);
	CHECK(metric(&m, "test_max_abs") == 1.5 && metric(&m, "params") == 785);
	CHECK(metric(&m, "test_rmse_const") == 4.5);
	CHECK(metric(&m, "epochs_run") == 40 && metric(&m, "best_epoch") == 31);
	CHECK(json_is_true(json_object_get(m.metrics, "stopped_early")));
	CHECK(json_is_false(json_object_get(m.metrics, "out_of_time")));
	CHECK(metric(&m, "train_seconds") == 2.5 && metric(&m, "train_step_seconds") == 2.25);
	CHECK(metric(&m, "samples_per_second") == 12800 && metric(&m, "final_lr") == 5e-4);
	CHECK(metric(&m, "latency_batch") == 4096 && metric(&m, "forward_max_diff") == 1e-9);
	CHECK_CONTAINS(json_string_value(json_object_get(m.json, "normalisation")), "in_mean");
	CHECK_EQ_INT(json_array_size(json_object_get(m.json, "categorical")), 0);
	CHECK(json_is_array(json_object_get(m.json, "categorical")));
	CHECK(m.search == NULL && json_object_get(m.json, "search") == NULL);
	/* the loss and the metric named, the error in it (per cent) */
	CHECK_STR(json_string_value(json_object_get(m.json, "loss")), "relative");
	CHECK_STR(m.metric, "mape");
	CHECK(m.val_error == 12.5 && metric(&m, "test_mape") == 13.25);
	CHECK_STR(json_string_value(json_object_get(m.options, "loss")), "relative");
	CHECK(json_real_value(json_object_get(m.options, "mape_floor")) == 1);
	CHECK_STR(json_string_value(json_object_get(m.metrics, "device")), "cuda");
	CHECK_EQ_INT(json_object_size(m.metrics), 23);
	/* one-call training: no R-step validation error */
	CHECK(json_is_null(json_object_get(m.metrics, "val_rollout_rmse")));
	CHECK(json_is_null(json_object_get(m.metrics, "val_rollout_mape")));
	CHECK(json_is_null(json_object_get(m.metrics, "val_rollout_windows")));
	CHECK_EQ_INT(json_object_size(m.options), 16);
	CHECK_EQ_INT(json_integer_value(json_object_get(m.options, "rollout")), 1);
	CHECK_STR(keys(m.json), "id workflow region family arch input_shape output_shape datasets "
	          "data_sha256 parent rows options loss metric metrics categorical normalisation files provenance");
	CHECK_STR(keys(m.rows), "train validation test dropped_nonfinite nonfinite_values "
	          "nonfinite_policy");

	/* A search's trial: unknowns are null, the search is named. */
	r.n_train = r.n_val = r.n_test = -1;
	r.best_epoch = r.stopped_early = r.out_of_time = -1;
	r.test_mae = r.final_lr = NAN;
	r.val_rollout_windows = 5, r.val_rollout_rmse = 0.375, r.val_rollout_mape = NAN;
	o.optimizer = "adam", o.weight_decay = -1, o.max_seconds = 0;
	o.loss = o.metric = NULL, r.val_mape = r.test_mape = NAN;
	o.categorical = "4:12,1:3";   /* recorded as objects, in feature order */
	{
		hml__model_facts f = { "binomial", "binomial", in, out, ids, 1, &o, &r, NULL,
		                       -1, -1, "s1", 61, 44, NULL, NULL };

		CHECK((rec = hml__model_record_new(s, &f)) != NULL);
	}
	CHECK_OK(hml__store_add(s, "models", rec, NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__records_model(&m, s, id));
	CHECK_STR(m.search, "s1");
	CHECK(m.parent == NULL && !json_object_get(m.json, "parent"));
	CHECK_EQ_INT(count(json_object_get(m.json, "search"), "trial"), 61);
	CHECK_EQ_INT(count(json_object_get(m.json, "search"), "config"), 44);
	CHECK(json_is_null(json_object_get(m.rows, "train")));
	CHECK(json_is_null(json_object_get(m.rows, "nonfinite_policy")));
	CHECK(json_is_null(json_object_get(m.metrics, "stopped_early")));
	CHECK(json_is_null(json_object_get(m.metrics, "best_epoch")));
	CHECK(isnan(metric(&m, "test_mae")) && isnan(metric(&m, "final_lr")));
	/* rollout R > 1: the R-step validation error beside the one-call one */
	CHECK(metric(&m, "val_rollout_rmse") == 0.375 && metric(&m, "val_rollout_windows") == 5);
	CHECK(json_is_null(json_object_get(m.metrics, "val_rollout_mape")));
	CHECK(json_is_null(json_object_get(m.options, "max_seconds")));
	CHECK(json_real_value(json_object_get(m.options, "weight_decay")) == 0);
	/* the defaults: MSE trained, RMSE judged */
	CHECK_STR(json_string_value(json_object_get(m.json, "loss")), "mse");
	CHECK_STR(m.metric, "rmse");
	CHECK(m.val_error == 0.25 && json_is_null(json_object_get(m.metrics, "val_mape")));
	CHECK_STR(keys(m.json), "id workflow region family arch input_shape output_shape datasets "
	          "data_sha256 rows options loss metric metrics categorical normalisation search files provenance");
	CHECK_STR(keys(json_object_get(m.json, "search")), "id trial config");
	{
		char *cat = json_dumps(json_object_get(m.json, "categorical"), JSON_COMPACT);

		CHECK_STR(cat, "[{\"feature\":1,\"classes\":3},{\"feature\":4,\"classes\":12}]");
		free(cat);
	}
	json_decref(in);
	json_decref(out);
	hml__store_free(s);
}

/* hml import's record through the same writer: family "imported", its
 * errors on every row, the import's origin and whether it compiles; no
 * training options or normalisation. */
TEST(model_record_import)
{
	hml__store *s = NULL;
	hml__model_view m;
	hml__train_result r;
	hml__model_import im = { "/tmp/m.pt", "ab12", NULL, 1000 };
	json_t *in = json_pack("[i]", 5), *out = json_pack("[i]", 1), *rec;
	const char *ids[] = { "d1" };
	const json_t *imp;
	char id[16];

	CHECK_OK(hml__store_open(&s, tmpdir, 0));
	memset(&r, 0, sizeof(r));
	snprintf(r.arch, sizeof(r.arch), "mlp:8:relu");
	r.val_rmse = r.test_rmse = 0.5, r.test_mae = 0.25, r.test_max_abs = 2, r.params = 57;
	{
		hml__model_facts f = { "binomial", "binomial", in, out, ids, 1, NULL, &r, NULL,
		                       2, -1, NULL, 0, 0, &im, NULL };

		CHECK((rec = hml__model_record_new(s, &f)) != NULL);
	}
	CHECK_OK(hml__store_add(s, "models", rec, NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__records_model(&m, s, id));
	CHECK_STR(keys(m.json), "id workflow region family arch input_shape output_shape datasets "
	          "data_sha256 rows metrics import files provenance");
	CHECK_STR(m.family, "imported");
	CHECK_STR(m.arch, "mlp:8:relu");
	CHECK_STR(m.workflow, "binomial");
	CHECK(json_equal((json_t *)m.input_shape, in) && json_equal((json_t *)m.output_shape, out));
	CHECK_STR(json_string_value(json_array_get(m.datasets, 0)), "d1");
	CHECK(json_is_string(json_object_get(m.data_sha256, "d1")));
	CHECK_STR(keys(m.rows), "evaluated dropped_nonfinite");
	CHECK_EQ_INT(count(m.rows, "evaluated"), 1000);
	CHECK_EQ_INT(count(m.rows, "dropped_nonfinite"), 2);
	CHECK_STR(keys(m.metrics), "val_rmse test_rmse test_mae test_max_abs rows_measured params");
	CHECK(m.val_rmse == 0.5 && metric(&m, "test_rmse") == 0.5);
	CHECK(metric(&m, "test_mae") == 0.25 && metric(&m, "test_max_abs") == 2);
	CHECK(metric(&m, "params") == 57);
	imp = json_object_get(m.json, "import");
	CHECK_STR(keys(imp), "origin sha256 compilable not_compilable");
	CHECK_STR(json_string_value(json_object_get(imp, "origin")), "/tmp/m.pt");
	CHECK_STR(json_string_value(json_object_get(imp, "sha256")), "ab12");
	CHECK(json_is_true(json_object_get(imp, "compilable")));
	CHECK(json_is_null(json_object_get(imp, "not_compilable")));
	CHECK(m.options == NULL && json_object_get(m.json, "normalisation") == NULL);
	CHECK(m.search == NULL);

	/* Not compilable, its graph unread: the reason, and no params. */
	im.not_compilable = "not an nn.Sequential";
	snprintf(r.arch, sizeof(r.arch), "torchscript");
	r.params = 0;
	r.test_mae = NAN;
	{
		hml__model_facts f = { "binomial", "binomial", in, out, ids, 1, NULL, &r, NULL,
		                       0, -1, NULL, 0, 0, &im, NULL };

		CHECK((rec = hml__model_record_new(s, &f)) != NULL);
	}
	CHECK_OK(hml__store_add(s, "models", rec, NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__records_model(&m, s, id));
	CHECK_STR(m.family, "imported");
	CHECK_STR(m.arch, "torchscript");
	CHECK_STR(keys(m.metrics), "val_rmse test_rmse test_mae test_max_abs rows_measured");
	CHECK(json_is_null(json_object_get(m.metrics, "test_mae")));
	imp = json_object_get(m.json, "import");
	CHECK(json_is_false(json_object_get(imp, "compilable")));
	CHECK_STR(json_string_value(json_object_get(imp, "not_compilable")), "not an nn.Sequential");
	json_decref(in);
	json_decref(out);
	hml__store_free(s);
}

/* A search's QoI check: the primary's error as qoi_error of the front
 * entry and the model, every data set's beside it without its detail. */
/* The default time limit of an accurate run (lib/run/limit.h): the slowest
 * successful collected run of the workflow, 0 when none records one. */
TEST(run_wall_max)
{
	hml__store *s = NULL;
	char id[16], dir[4096];

	snprintf(dir, sizeof(dir), "%s/walls", tmpdir);
	CHECK_OK(hml__store_open(&s, dir, 1));
	CHECK(hml__records_run_wall_max(s, "binomial") == 0.0);
	CHECK_OK(hml__store_add(s, "datasets", json_pack(
		"{s:{s:s}, s:[{s:b, s:f}, {s:b, s:f}, {s:b, s:f}, {s:b, s:s}, {s:b}]}",
		"workflow", "name", "binomial", "runs",
		"succeeded", 1, "wall_seconds", 2.5, "succeeded", 1, "wall_seconds", 4.0,
		"succeeded", 0, "wall_seconds", 99.0, "succeeded", 1, "wall_seconds", "7",
		"succeeded", 1), NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:{s:s}, s:[{s:b, s:f}]}",
		"workflow", "name", "heat", "runs", "succeeded", 1, "wall_seconds", 50.0),
		NULL, 0, 0, id, sizeof(id)));
	/* A failed run's time, another workflow's and a malformed one do not count. */
	CHECK_NEAR(hml__records_run_wall_max(s, "binomial"), 4.0, 0);
	CHECK_NEAR(hml__records_run_wall_max(s, "heat"), 50.0, 0);
	CHECK(hml__records_run_wall_max(s, "other") == 0.0);
	CHECK(hml__records_run_wall_max(s, NULL) == 0.0);
	hml__store_free(s);
}

TEST(qoi_check_records)
{
	hml__store *s = NULL;
	hml__model_view m;
	const json_t *front, *model;
	json_t *report, *want;
	char id[16], dir[600];

	snprintf(dir, sizeof(dir), "%s/qoi-check", tmpdir);
	CHECK_OK(hml__store_open(&s, dir, 1));
	CHECK_OK(hml__store_add(s, "models", json_pack("{s:s}", "region", "r"), NULL, 0, 0, id,
	                        sizeof(id)));
	CHECK_OK(hml__store_add(s, "searches", json_pack("{s:[{s:s}, {s:n}]}", "front", "model",
	                        "m1", "val_rmse"), NULL, 0, 0, id, sizeof(id)));
	report = json_pack("{s:s, s:s, s:i, s:[{s:s, s:f, s:[{s:s, s:s, s:f, s:f, s:i}, "
	                   "{s:s, s:s, s:f, s:f, s:i, s:f, s:b}]}]}",
	                   "dataset", "a", "metric", "rmse", "seed", 5, "checks",
	                   "model", "m1", "error", 0.25, "qois",
	                   "dataset", "a", "metric", "rmse", "error", 0.25, "rmse", 0.25,
	                   "values", 10,
	                   "dataset", "b", "metric", "max_abs", "error", 2.0, "max_abs", 2.0,
	                   "values", 1, "max_error", 1.0, "passed", 0);
	want = json_pack("[{s:s, s:s, s:f}, {s:s, s:s, s:f, s:f, s:b}]",
	                 "dataset", "a", "metric", "rmse", "error", 0.25,
	                 "dataset", "b", "metric", "max_abs", "error", 2.0, "max_error", 1.0,
	                 "passed", 0);
	CHECK_OK(hml__records_set_qoi_check(s, "s1", report));
	hml__store_free(s);
	s = NULL;
	CHECK_OK(hml__store_open(&s, dir, 0));
	front = json_array_get(json_object_get(hml__store_find(s, "searches", "s1"), "front"), 0);
	model = json_object_get(hml__store_find(s, "models", "m1"), "qoi_error");
	CHECK_NEAR(hml__json_number(front, "qoi_error"), 0.25, 0.0);
	CHECK(json_equal(json_object_get(front, "qoi_errors"), want));
	CHECK(json_equal(json_object_get(model, "qois"), want));
	CHECK_STR(hml__json_string(model, "dataset"), "a");
	/* The entry without a model gains nothing. */
	CHECK(!json_object_get(json_array_get(json_object_get(hml__store_find(s, "searches",
	      "s1"), "front"), 1), "qoi_errors"));
	CHECK_OK(hml__records_model(&m, s, "m1"));
	CHECK_NEAR(m.qoi_error, 0.25, 0.0);
	json_decref(report);
	json_decref(want);
	hml__store_free(s);
}

/* The region record's "sampling": written and read back the same. */
TEST(sampling_round_trip)
{
	hml__coll_sampling a = { 0.5, 2000, 1, 7, 100, 5000, 2000, 2400, 100, 500 }, b;
	json_t *region = json_object();

	CHECK_EQ_INT(hml__sampling_get(region, &b), 0);
	json_object_set_new(region, "sampling", hml__sampling_json(&a));
	CHECK_EQ_INT(hml__sampling_get(region, &b), 1);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	json_object_set_new(json_object_get(region, "sampling"), "rows_kept", json_string("x"));
	CHECK_FAILS(hml__sampling_get(region, &b), HML_EINVALID, "'rows_kept' is not an integer");
	json_decref(region);
}

int main(void)
{
	if (tmp_dir_make("records") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(views);
	RUN(sampling_round_trip);
	RUN(model_record_round_trip);
	RUN(model_record_import);
	RUN(qoi_check_records);
	RUN(run_wall_max);
	tmp_dir_remove();
	return check_report();
}
