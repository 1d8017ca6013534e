/*
 * hml train - train one surrogate model of a region on collected data.
 *
 * Option values come from, in order of precedence: the command line, the
 * workflow region's "model.train" object (and "model.arch"), the defaults
 * of lib/train.h. The data are the region's rows in the chosen data sets
 * (default: every data set of the newest data set's workflow that holds the
 * region); each data file is checked against the SHA-256 recorded when it
 * was collected before it is read.
 *
 * The model is trained into a temporary file of models/ and registered
 * (renamed to models/<id>.pt, card models/<id>.json) only when training
 * finished: an interrupted or killed run leaves the manifest as it was.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "dataset.h"
#include "envname.h"
#include "fsutil.h"
#include "records.h"
#include "store.h"
#include "train.h"
#include "util.h"
#include "workflow.h"

/* Command-line values; UNSET / NAN / NULL: not given. */
#define UNSET INT64_MIN
static const char *region, *arch, *optimizer, *schedule, *nonfinite;
static cmd_list data_ids;
static int64_t epochs = UNSET, batch = UNSET, patience = UNSET, seed = UNSET,
	threads = UNSET, infer_batch = UNSET;
static double lr = NAN, weight_decay = NAN, clip = NAN, val_fraction = NAN,
	test_fraction = NAN, max_seconds = NAN;

static const cmd_option options[] = {
	{ "region", 'r', CMD_OPT_STRING, &region, "R",
	  "region to train (default: the only region of the data sets)" },
	{ "data", 'd', CMD_OPT_LIST, &data_ids, "ID",
	  "train on data set ID (repeatable; default: every data set of the region's workflow)" },
	{ "arch", 'a', CMD_OPT_STRING, &arch, "SPEC",
	  "architecture, e.g. mlp:64x64:relu or cnn:16x16:relu:kernel=3 (see hml-train(1))" },
	{ "epochs", 'e', CMD_OPT_INT, &epochs, "N", "maximum epochs (default 100)" },
	{ "batch", 'b', CMD_OPT_INT, &batch, "N", "mini-batch rows (default 256)" },
	{ "lr", 0, CMD_OPT_DOUBLE, &lr, "X", "initial learning rate (default 0.001)" },
	{ "weight-decay", 0, CMD_OPT_DOUBLE, &weight_decay, "X",
	  "weight decay (default 0 with adam, 0.01 with adamw)" },
	{ "optimizer", 0, CMD_OPT_STRING, &optimizer, "NAME", "adam (default) or adamw" },
	{ "schedule", 0, CMD_OPT_STRING, &schedule, "NAME",
	  "learning-rate schedule: plateau (default), cosine or none" },
	{ "patience", 0, CMD_OPT_INT, &patience, "N",
	  "stop after N epochs without validation improvement (default 10; 0: never)" },
	{ "clip", 0, CMD_OPT_DOUBLE, &clip, "X", "gradient-norm clipping (default 5; 0: off)" },
	{ "seed", 's', CMD_OPT_INT, &seed, "N",
	  "seed of the split, initialisation and shuffling (default 42)" },
	{ "threads", 'j', CMD_OPT_INT, &threads, "N",
	  "libtorch threads (default: libtorch's, from OMP_NUM_THREADS or the cores)" },
	{ "val-fraction", 0, CMD_OPT_DOUBLE, &val_fraction, "X",
	  "share of rows for validation (default 0.1)" },
	{ "test-fraction", 0, CMD_OPT_DOUBLE, &test_fraction, "X",
	  "share of rows for the test split (default 0.1)" },
	{ "max-seconds", 0, CMD_OPT_DOUBLE, &max_seconds, "S",
	  "stop training after S seconds and keep the best epoch (default: no limit)" },
	{ "nonfinite", 0, CMD_OPT_STRING, &nonfinite, "drop|error",
	  "rows holding NaN or Inf: drop them with a warning (default) or fail" },
	{ "infer-batch", 0, CMD_OPT_INT, &infer_batch, "N",
	  "rows per call when measuring latency (default: the region's batch)" },
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const cmd_spec spec = {
	"train", "[options]",
	"train a surrogate model on collected data (libtorch)",
	"Trains a model of region R on its collected rows: a seeded train /\n"
	"validation / test split, normalisation stored inside the model, Adam or\n"
	"AdamW with a learning-rate schedule and early stopping. The model is saved\n"
	"as plain TorchScript (models/<id>.pt, loadable by torch.jit.load) with a\n"
	"model card (models/<id>.json) holding its errors, size, training time and\n"
	"inference latency, and registered in the experiment. Defaults come from\n"
	"the workflow's model.train object; options given here override them.\n"
	"Deterministic for a given seed and thread count.",
	options, 0, 0
};

/* Everything one run holds, released in one place. */
typedef struct train_state {
	hml__store *s;
	hml__workflow *w;
	const char **ids;      /* data set ids (borrowed from the manifest) */
	char **paths;          /* their data files, absolute */
	size_t n;
	const char *label;     /* borrowed from argv or the manifest */
	const char *wname;     /* workflow name of the data sets (likewise) */
	hml__dataset d;
	char *tmp;             /* model being written */
	cmd_progress *bar;
	int interrupted_at;    /* epoch the user interrupted at, or 0 */
} train_state;

static void state_release(train_state *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->paths[i]);
	free(st->paths);
	free(st->ids);
	hml__dataset_release(&st->d);
	if (st->tmp)
		unlink(st->tmp);
	free(st->tmp);
	cmd_progress_end(st->bar);
	hml__workflow_free(st->w);
	hml__store_free(st->s);
	free(data_ids.items);
	data_ids.items = NULL;
}

/* The workflow name of data set `d` ("" when it has none). */
static const char *workflow_of(const hml__dataset_view *d)
{
	return d->workflow_name ? d->workflow_name : "";
}

static int has_rows(const hml__dataset_view *d, const char *label)
{
	return hml__dataset_view_rows(d, label) > 0;
}

static int push_id(train_state *st, const char *id)
{
	const char **grown = realloc(st->ids, (st->n + 1) * sizeof(*grown));

	if (!grown)
		return hml__error_oom();
	st->ids = grown;
	st->ids[st->n++] = id;
	return 0;
}

/*
 * The region to train: --region, else the one region the data sets hold
 * rows for. Named data sets must exist and hold it.
 */
static int pick_region(train_state *st)
{
	hml__dataset_view d;
	const json_t *r;
	const char *key, *only = NULL;
	json_t *seen;      /* labels with rows, as a set */
	char names[512] = "";
	size_t i, used = 0, nseen;

	if (region) {
		st->label = region;
		return 0;
	}
	if (!(seen = json_object()))
		return hml__error_oom();
	for (i = 0; hml__records_dataset_at(&d, st->s, i); i++) {
		int wanted = !data_ids.n;

		for (int k = 0; k < data_ids.n; k++)
			wanted |= d.id && strcmp(data_ids.items[k], d.id) == 0;
		if (!wanted)
			continue;
		json_object_foreach((json_t *)d.regions, key, r)
			if (has_rows(&d, key)) {
				json_object_set_new(seen, key, json_true());
				only = only ? only : key;
			}
	}
	nseen = json_object_size(seen);
	json_object_foreach(seen, key, r)
		if (used + strlen(key) + 8 < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
			                         used ? ", " : "", key);
	json_decref(seen);
	if (nseen == 0)
		return hml__error_set(HML_EINVALID,
			"experiment '%s' has no collected rows to train on (run 'hml collect')",
			hml__store_dir(st->s));
	if (nseen > 1)
		return hml__error_set(HML_EINVALID,
			"the data sets hold several regions (%s): choose one with --region", names);
	st->label = only;
	return 0;
}

/* The data sets to train on, in manifest order. */
static int pick_datasets(train_state *st)
{
	hml__dataset_view d;
	size_t i;
	int rc;

	for (int k = 0; k < data_ids.n; k++)
		if ((rc = hml__records_dataset(&d, st->s, data_ids.items[k])) < 0)
			return rc;
	if ((rc = pick_region(st)) < 0)
		return rc;
	if (data_ids.n) {
		for (int k = 0; k < data_ids.n; k++) {
			const char *id = data_ids.items[k];

			if ((rc = hml__records_dataset(&d, st->s, id)) < 0)
				return rc;
			if (!has_rows(&d, st->label))
				return hml__error_set(HML_EINVALID,
					"data set '%s' has no rows of region '%s'", id, st->label);
			if (st->wname && strcmp(st->wname, workflow_of(&d)) != 0)
				return hml__error_set(HML_EINVALID,
					"data sets '%s' and '%s' come from different workflows", st->ids[0], id);
			st->wname = workflow_of(&d);
			if ((rc = push_id(st, id)) < 0)
				return rc;
		}
		return 0;
	}
	/* Default: the newest data set holding the region sets the workflow. */
	for (i = hml__records_count(st->s, "datasets"); i-- > 0;)
		if (hml__records_dataset_at(&d, st->s, i) && has_rows(&d, st->label)) {
			st->wname = workflow_of(&d);
			break;
		}
	if (!st->wname) {
		int known = 0;

		for (i = 0; hml__records_dataset_at(&d, st->s, i); i++)
			known |= hml__dataset_view_region(&d, st->label) != NULL;
		if (known)
			return hml__error_set(HML_EINVALID,
				"region '%s' has no collected rows in experiment '%s'",
				st->label, hml__store_dir(st->s));
		return hml__error_set(HML_ENOTFOUND, "no data set of experiment '%s' holds region '%s'",
		                      hml__store_dir(st->s), st->label);
	}
	for (i = 0; hml__records_dataset_at(&d, st->s, i); i++)
		if (has_rows(&d, st->label) && strcmp(workflow_of(&d), st->wname) == 0 &&
		    (rc = push_id(st, d.id)) < 0)
			return rc;
	return 0;
}

/* Absolute data paths, each checked against its recorded SHA-256. */
static int check_data_files(train_state *st)
{
	int rc;

	if (!(st->paths = calloc(st->n ? st->n : 1, sizeof(*st->paths))))
		return hml__error_oom();
	for (size_t i = 0; i < st->n; i++)
		if ((rc = cmd_record_file(st->s, hml__store_find(st->s, "datasets", st->ids[i]),
		                          "data set", "data", "collected", &st->paths[i])) < 0)
			return rc;
	return 0;
}

/* The command line's values, else (st not NULL) the workflow region's
 * training defaults, else lib/train.h's. *nf gets the NaN/Inf policy. */
static void apply_defaults(const train_state *st, hml__train_options *o, const char **nf)
{
	const hml__workflow_region *r = st && st->w ? hml__workflow_region_find(st->w, st->label)
	                                            : NULL;
	const json_t *t = r ? r->train : NULL;
	const json_t *v;

#define INT_OPT(var, key, field) \
	o->field = var != UNSET ? (__typeof__(o->field))var : \
		((v = json_object_get(t, key)) ? (__typeof__(o->field))json_integer_value(v) : o->field)
#define NUM_OPT(var, key, field) \
	o->field = !isnan(var) ? var : ((v = json_object_get(t, key)) ? json_number_value(v) : o->field)
#define STR_OPT(var, key, field) \
	o->field = var ? var : ((v = json_object_get(t, key)) ? json_string_value(v) : o->field)

	INT_OPT(epochs, "epochs", epochs);
	INT_OPT(batch, "batch", batch);
	INT_OPT(patience, "patience", patience);
	INT_OPT(seed, "seed", seed);
	INT_OPT(threads, "threads", threads);
	NUM_OPT(lr, "lr", lr);
	NUM_OPT(weight_decay, "weight_decay", weight_decay);
	NUM_OPT(clip, "clip", clip);
	NUM_OPT(val_fraction, "val_fraction", val_fraction);
	NUM_OPT(test_fraction, "test_fraction", test_fraction);
	NUM_OPT(max_seconds, "max_seconds", max_seconds);
	STR_OPT(optimizer, "optimizer", optimizer);
	STR_OPT(schedule, "schedule", schedule);
	*nf = nonfinite ? nonfinite : ((v = json_object_get(t, "nonfinite")) ? json_string_value(v)
	                                                                      : "drop");
#undef INT_OPT
#undef NUM_OPT
#undef STR_OPT
	o->arch = arch ? arch : (r && r->arch ? r->arch : NULL);
	o->infer_batch = infer_batch != UNSET ? infer_batch : (r && r->batch > 0 ? r->batch : 0);
}

/* HML_THREADS, the default of --threads (hml(1)): *out unchanged when it
 * is unset or empty; -1 after a usage error naming the variable. */
static int env_threads(int64_t *out)
{
	const char *v = getenv(HML__ENV_THREADS);
	int64_t n;

	if (!v || !*v)
		return 0;
	if (hml__parse_i64(v, &n) < 0 || n < 0 || n > hml__threads_max()) {
		cmd_error("train: invalid %s '%s': expected an integer from 0 to %d (%d per online core)",
		          HML__ENV_THREADS, v, hml__threads_max(), HML__THREADS_PER_CORE);
		return -1;
	}
	*out = n;
	return 0;
}

/* Once per epoch: the progress bar, and the interrupt check. */
static int on_epoch(void *payload, int epoch, int total, double loss, double val_rmse)
{
	train_state *st = payload;
	char detail[96];

	snprintf(detail, sizeof(detail), "loss %.3g, val RMSE %.3g", loss, val_rmse);
	cmd_progress_update(st->bar, epoch, detail);
	if (cmd_interrupted) {
		st->interrupted_at = epoch;
		return 1;
	}
	return 0;
}

static json_t *model_record(const train_state *st, const hml__train_options *o,
                            const char *nf, const hml__train_result *res)
{
	json_t *ids = json_array(), *data_sha = json_object();
	char family[32];

	for (size_t i = 0; i < st->n; i++) {
		hml__dataset_view d;
		const char *sha;

		hml__dataset_view_of(&d, hml__store_find(st->s, "datasets", st->ids[i]));
		sha = d.file ? hml__record_sha256(d.json, d.file) : NULL;

		json_array_append_new(ids, json_string(st->ids[i]));
		json_object_set_new(data_sha, st->ids[i], sha ? json_string(sha) : json_null());
	}
	snprintf(family, sizeof(family), "%.*s", (int)strcspn(res->arch, ":"), res->arch);
	return json_pack(
		"{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o,"
		" s:{s:I, s:I, s:I, s:I, s:I, s:s},"
		" s:{s:i, s:I, s:f, s:o, s:s, s:s, s:i, s:f, s:I, s:i, s:f, s:f, s:o},"
		" s:{s:o, s:o, s:o, s:o, s:I, s:i, s:i, s:b, s:b, s:f, s:f, s:f, s:o, s:o, s:I, s:o},"
		" s:s}",
		"workflow", st->wname ? st->wname : "",
		"region", st->label,
		"family", family,
		"arch", res->arch,
		"input_shape", cmd_json_shape(st->d.in_shape, st->d.in_ndim),
		"output_shape", cmd_json_shape(st->d.out_shape, st->d.out_ndim),
		"datasets", ids,
		"data_sha256", data_sha,
		"rows",
		"train", (json_int_t)res->n_train, "validation", (json_int_t)res->n_val,
		"test", (json_int_t)res->n_test,
		"dropped_nonfinite", (json_int_t)st->d.nonfinite_rows,
		"nonfinite_values", (json_int_t)st->d.nonfinite_values,
		"nonfinite_policy", nf,
		"options",
		"epochs", o->epochs, "batch", (json_int_t)o->batch, "lr", o->lr,
		"weight_decay", json_real(o->weight_decay >= 0 ? o->weight_decay :
			(o->optimizer && strcmp(o->optimizer, "adamw") == 0 ? 1e-2 : 0.0)),
		"optimizer", o->optimizer ? o->optimizer : "adam",
		"schedule", o->schedule ? o->schedule : "plateau",
		"patience", o->patience, "clip", o->clip, "seed", (json_int_t)o->seed,
		"threads", o->threads, "val_fraction", o->val_fraction,
		"test_fraction", o->test_fraction,
		"max_seconds", o->max_seconds > 0 ? json_real(o->max_seconds) : json_null(),
		"metrics",
		"val_rmse", cmd_json_real(res->val_rmse),
		"test_rmse", cmd_json_real(res->test_rmse),
		"test_mae", cmd_json_real(res->test_mae),
		"test_max_abs", cmd_json_real(res->test_max_abs),
		"params", (json_int_t)res->params,
		"epochs_run", res->epochs_run, "best_epoch", res->best_epoch,
		"stopped_early", res->stopped_early, "out_of_time", res->out_of_time,
		"train_seconds", res->train_seconds,
		"train_step_seconds", res->train_step_seconds,
		"samples_per_second", res->samples_per_second,
		"final_lr", cmd_json_real(res->final_lr),
		"latency_seconds_per_sample", cmd_json_real(res->latency_s_per_sample),
		"latency_batch", (json_int_t)res->latency_batch,
		"forward_max_diff", cmd_json_real(res->forward_max_diff),
		"normalisation",
		"per feature (mlp) or channel (cnn; cnnvec inputs, its outputs per feature) "
		"mean and std of the training split, "
		"inside the model: buffers in_mean, in_std, out_mean, out_std");
}

static void print_result(const train_state *st, const char *id, const json_t *rec)
{
	const json_t *m = json_object_get(rec, "metrics");
	const json_t *rows = json_object_get(rec, "rows");

	if (g_cmd.json) {
		json_t *full = json_deep_copy(hml__store_find(st->s, "models", id));

		cmd_json_print(json_pack("{s:o}", "model", full ? full : json_null()));
		return;
	}
	printf("%s: %s on region '%s' (%lld train / %lld validation / %lld test rows)\n",
	       id, cmd_json_string(rec, "arch"), st->label,
	       (long long)json_integer_value(json_object_get(rows, "train")),
	       (long long)json_integer_value(json_object_get(rows, "validation")),
	       (long long)json_integer_value(json_object_get(rows, "test")));
	printf("  validation RMSE %.6g, test RMSE %.6g, test MAE %.6g, test max error %.6g\n",
	       cmd_json_number(m, "val_rmse"), cmd_json_number(m, "test_rmse"),
	       cmd_json_number(m, "test_mae"), cmd_json_number(m, "test_max_abs"));
	printf("  %lld parameters, %lld epochs (best %lld) in %.3g s, %.4g samples/s\n",
	       (long long)json_integer_value(json_object_get(m, "params")),
	       (long long)json_integer_value(json_object_get(m, "epochs_run")),
	       (long long)json_integer_value(json_object_get(m, "best_epoch")),
	       cmd_json_number(m, "train_seconds"), cmd_json_number(m, "samples_per_second"));
	if (isnan(cmd_json_number(m, "latency_seconds_per_sample")))
		printf("  inference latency not measured at batch %lld\n",
		       (long long)json_integer_value(json_object_get(m, "latency_batch")));
	else
		printf("  inference %.4g us/sample at batch %lld\n",
		       cmd_json_number(m, "latency_seconds_per_sample") * 1e6,
		       (long long)json_integer_value(json_object_get(m, "latency_batch")));
	cmd_latency_print(rec, "  ");
}

int cmd_train(int argc, char **argv)
{
	train_state st;
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;
	hml__train_result res;
	hml__nonfinite policy;
	json_t *rec = NULL;
	const char *wpath = NULL, *nf = "drop";
	hml__dataset_view data0;
	char canonical[256], id[32];
	int first, rc, code = HML_EXIT_OK;

	memset(&st, 0, sizeof(st));
	memset(&res, 0, sizeof(res));
	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if (nonfinite && strcmp(nonfinite, "drop") != 0 && strcmp(nonfinite, "error") != 0) {
		cmd_error("train: --nonfinite must be 'drop' or 'error', not '%s'", nonfinite);
		return HML_EXIT_USAGE;
	}
	{
		/* The command line alone first: its mistakes are usage errors. */
		const struct { const char *name; int64_t v; } ints[] = {
			{ "epochs", epochs }, { "patience", patience }, { "threads", threads },
		};
		hml__train_options cli = HML__TRAIN_OPTIONS_INIT;
		const char *cli_nf;

		for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
			if (ints[i].v != UNSET && (ints[i].v < INT_MIN || ints[i].v > INT_MAX)) {
				cmd_error("train: --%s %lld is out of range", ints[i].name,
				          (long long)ints[i].v);
				return HML_EXIT_USAGE;
			}
		if (!isnan(max_seconds) && !(max_seconds > 0)) {
			cmd_error("train: --max-seconds must be positive, not %g "
			          "(leave it out for no time limit)", max_seconds);
			return HML_EXIT_USAGE;
		}
		if (infer_batch != UNSET && infer_batch <= 0) {
			cmd_error("train: --infer-batch must be positive, not %lld "
			          "(leave it out for the region's batch)", (long long)infer_batch);
			return HML_EXIT_USAGE;
		}
		if (threads == UNSET && env_threads(&threads) < 0)
			return HML_EXIT_USAGE;
		if (seed != UNSET && seed < 0) {
			cmd_error("train: --seed must be 0 or more, not %lld", (long long)seed);
			return HML_EXIT_USAGE;
		}
		apply_defaults(NULL, &cli, &cli_nf);
		if (hml__train_check(&cli, NULL, 0) < 0) {
			cmd_error("train: %s", hml_error_last()->message);
			return HML_EXIT_USAGE;
		}
	}
	if ((rc = hml__store_open(&st.s, g_cmd.dir, 0)) < 0 ||
	    (rc = pick_datasets(&st)) < 0)
		goto fail;

	/* The workflow of the data, for its training defaults. */
	hml__dataset_view_of(&data0, hml__store_find(st.s, "datasets", st.ids[0]));
	wpath = data0.workflow_path;
	if (wpath && hml__workflow_load(&st.w, wpath) < 0 &&
	    (!st.wname || hml__workflow_load(&st.w, st.wname) < 0)) {
		cmd_warn("the workflow of data set '%s' cannot be loaded (%s); "
		         "training with hml's defaults", st.ids[0], hml_error_last()->message);
		st.w = NULL;
	}
	if (st.w && !hml__workflow_region_find(st.w, st.label))
		cmd_warn("workflow '%s' has no region '%s'; training with hml's defaults",
		         st.w->name, st.label);
	apply_defaults(&st, &o, &nf);
	if (strcmp(nf, "drop") != 0 && strcmp(nf, "error") != 0) {
		rc = hml__error_set(HML_EINVALID, "workflow '%s': model.train.nonfinite must be "
		                    "'drop' or 'error', not '%s'", st.w ? st.w->path : "?", nf);
		goto fail;
	}
	policy = strcmp(nf, "error") == 0 ? HML__NONFINITE_ERROR : HML__NONFINITE_DROP;
	/* Options and arch are checked before the (possibly long) data load. */
	if ((rc = hml__train_check(&o, canonical, sizeof(canonical))) < 0 ||
	    (rc = check_data_files(&st)) < 0 ||
	    (rc = hml__dataset_load(&st.d, (const char *const *)st.paths, st.n, st.label,
	                            policy)) < 0)
		goto fail;
	if (st.d.nonfinite_rows)
		cmd_warn("region '%s': dropped %lld of %lld rows holding NaN or Inf (%lld values)",
		         st.label, (long long)st.d.nonfinite_rows,
		         (long long)(st.d.rows + st.d.nonfinite_rows),
		         (long long)st.d.nonfinite_values);
	cmd_info("training %s on region '%s': %lld rows from %zu data set%s",
	         canonical, st.label, (long long)st.d.rows, st.n, st.n == 1 ? "" : "s");

	if (cmd_interrupted) {
		cmd_error("interrupted before training; no model was recorded");
		code = HML_EXIT_INTERRUPTED;
		goto done;
	}
	if (!(st.tmp = hml__store_tmp_path(st.s, "models", ".pt"))) {
		rc = hml__error_oom();
		goto fail;
	}
	o.progress = on_epoch;
	o.payload = &st;
	st.bar = cmd_progress_start("train", o.epochs);
	rc = hml__train(&st.d, &o, st.tmp, &res);
	cmd_progress_end(st.bar);
	st.bar = NULL;
	if (rc < 0)
		goto fail;
	if (res.interrupted || cmd_interrupted) {
		if (st.interrupted_at)
			cmd_error("interrupted at epoch %d; no model was recorded", st.interrupted_at);
		else
			cmd_error("interrupted; no model was recorded");
		code = HML_EXIT_INTERRUPTED;
		goto done;
	}
	if (res.out_of_time)
		cmd_info("stopped after --max-seconds at epoch %d; kept epoch %d",
		         res.epochs_run, res.best_epoch);
	if (res.latency_error[0])
		cmd_warn("the inference latency was not measured (%s); the model is kept, "
		         "its latency recorded as null", res.latency_error);

	if (!(rec = model_record(&st, &o, nf, &res))) {
		rc = hml__error_oom();
		goto fail;
	}
	{
		/* The card's latency per target (cmd/latency.c, lib/latency.h). */
		json_t *lat = cmd_latency_card(st.tmp, &st.d, res.latency_batch, o.threads);

		if (lat)
			json_object_set_new(rec, "latency", lat);
	}
	{
		const hml__store_file files[] = { { "model", st.tmp, ".pt" } };

		json_incref(rec);
		if ((rc = hml__store_add(st.s, "models", rec, files, 1, 1, id, sizeof(id))) < 0) {
			/* A locked or full experiment must not cost a long training. */
			code = cmd_fail(rc);
			cmd_error("the trained model is kept in '%s'", st.tmp);
			free(st.tmp);
			st.tmp = NULL;
			goto done;
		}
	}
	free(st.tmp);   /* renamed: nothing to remove */
	st.tmp = NULL;
	print_result(&st, id, rec);
	goto done;
fail:
	code = cmd_fail(rc);
done:
	json_decref(rec);
	state_release(&st);
	return cmd_finish(code);
}
