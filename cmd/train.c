/*
 * hml train - train one surrogate model of a region on collected data.
 *
 * Option values come from, in order of precedence: the command line, the
 * workflow region's "model.train" object (and "model.arch"), the defaults
 * of lib/train/train.h. The data are the region's rows in the chosen data sets
 * (default: every data set of the newest data set's workflow that holds the
 * region), each file checked against its SHA-256 as collected before it is read.
 *
 * --from MODEL continues a model: MODEL's arch, loss and categorical
 * features, its parameters as the starting point and its normalisation
 * kept (lib/train/train.h init_from), on MODEL's data sets and the
 * region's others (old plus new rows); the new model records MODEL as its
 * parent.
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
#include "core/util.h"
#include "run/workflow.h"
#include "store/checked.h"
#include "store/cost.h"
#include "store/data_pick.h"
#include "store/records.h"
#include "store/store.h"
#include "train/categorical.h"
#include "train/dataset.h"
#include "train/guard_fit.h"
#include "train/train.h"
#include "train_ensemble.h"
#include "train_report.h"

/* Command-line values; UNSET / NAN / NULL: not given. */
#define UNSET INT64_MIN
static const char *region, *arch, *optimizer, *schedule, *nonfinite, *loss, *categorical, *from,
	*device;
static cmd_list data_ids;
static int64_t epochs = UNSET, batch = UNSET, patience = UNSET, seed = UNSET,
	threads = UNSET, infer_batch = UNSET, ensemble = UNSET, rollout = UNSET;
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
	{ "loss", 0, CMD_OPT_STRING, &loss, "NAME",
	  "training loss: mse, mae, relative or log (default: the workflow's metric's)" },
	{ "categorical", 0, CMD_OPT_STRING, &categorical, "F:K[,F:K...]",
	  "input feature F (0-based, in the flattened row) is a category of K classes, one-hot "
	  "inside the model (mlp; 'none': none; default: the workflow's model.categorical)" },
	{ "from", 0, CMD_OPT_STRING, &from, "MODEL",
	  "continue training MODEL (its arch, loss, normalisation and weights) on its data sets "
	  "and the region's others; the new model records MODEL as its parent" },
	{ "device", 0, CMD_OPT_STRING, &device, "cpu|cuda|auto",
	  "where the training steps run (default cpu; cuda needs a CUDA build and a GPU)" },
	{ "rollout", 0, CMD_OPT_INT, &rollout, "R",
	  "multi-step training: the model applied R times along a run's calls, each output the "
	  "next input; loss and best epoch by the R steps' errors (default 1; hml-train(1) ROLLOUT)" },
	{ "ensemble", 0, CMD_OPT_INT, &ensemble, "N",
	  "train N models of this configuration (seeds SEED..SEED+N-1, N from 2 to 16) as one, "
	  "member 0 deployed; their disagreement calibrated for --guard ensemble" },
	{ "infer-batch", 0, CMD_OPT_INT, &infer_batch, "N",
	  "rows per call when measuring latency (default: the region's batch)" },
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const cmd_range ranges[] = {
	{ "epochs", 1, INT_MAX, 0 }, { "batch", 1, INFINITY, 0 }, { "lr", 0, INFINITY, 1 },
	{ "weight-decay", 0, INFINITY, 0 }, { "patience", 0, INT_MAX, 0 },
	{ "clip", 0, INFINITY, 0 }, { "seed", 0, INFINITY, 0 }, { "threads", 0, INT_MAX, 0 },
	{ "val-fraction", 0, 1, 1 }, { "test-fraction", 0, 1, 1 },
	{ "max-seconds", 0, INFINITY, 1 }, { "infer-batch", 1, INFINITY, 0 },
	{ "rollout", 1, HML__ROLLOUT_MAX, 0 },
	{ "ensemble", HML__GUARD_ENSEMBLE_MIN, HML__GUARD_ENSEMBLE_MAX, 0 }, { NULL, 0, 0, 0 }
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
	options, 0, 0, ranges
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
	const char *metric;    /* the validation error's metric */
	hml__model_view parent;   /* --from: the model continued */
	char *parent_path;        /* its file, absolute (checked) */
	char parent_cat[512];     /* its categorical features, "F:K,..." */
	size_t parent_data;       /* data sets of the parent among ids */
	cmd_ensemble ens;         /* --ensemble: its members (ens.n 0: none) */
} train_state;

static void state_release(train_state *st)
{
	/* data sets are picked before their paths: a bad workflow default fails between */
	for (size_t i = 0; st->paths && i < st->n; i++)
		free(st->paths[i]);
	free(st->paths);
	free(st->ids);
	free(st->parent_path);
	hml__dataset_release(&st->d);
	if (st->tmp)
		unlink(st->tmp);
	free(st->tmp);
	cmd_ensemble_release(&st->ens);
	cmd_progress_end(st->bar);
	hml__workflow_free(st->w);
	hml__store_free(st->s);
	free(data_ids.items);
	data_ids.items = NULL;
}

/* --from: the model continued, checked (its file's SHA-256), trained by
 * hml (an imported model's parameters are not an arch's), of --region. */
static int load_parent(train_state *st)
{
	hml__categorical *cat = NULL;
	size_t ncat = 0;
	int rc;

	if ((rc = hml__checked_model(st->s, from, &st->parent, &st->parent_path)) < 0)
		return rc;
	if (!st->parent.family || strcmp(st->parent.family, "imported") == 0 || !st->parent.arch)
		return hml__error_set(HML_EINVALID, "model '%s' was not trained by hml (it was %s); "
		                      "--from continues models hml train or hml search trained", from,
		                      st->parent.family ? "imported" : "recorded without an arch");
	if (region && st->parent.region && strcmp(region, st->parent.region) != 0)
		return hml__error_set(HML_EINVALID, "model '%s' is of region '%s', not '%s'", from,
		                      st->parent.region, region);
	region = st->parent.region;
	if ((rc = hml__categorical_from_json(&cat, &ncat,
	                                     json_object_get(st->parent.json, "categorical"),
	                                     "its record's categorical")) == 0)
		hml__categorical_format(st->parent_cat, sizeof(st->parent_cat), cat, ncat);
	free(cat);
	return rc;
}

/* The parent's data sets first (still registered: their files are
 * checked as any), then those picked that it was not trained on. */
static int add_parent_data(train_state *st)
{
	const json_t *pd = st->parent.datasets, *v;
	size_t i, k, n = json_array_size(pd);
	const char **all = malloc((n + st->n + 1) * sizeof(*all));

	if (!all)
		return hml__error_oom();
	json_array_foreach(pd, i, v)
		if (json_is_string(v))
			all[st->parent_data++] = json_string_value(v);
	n = st->parent_data;
	for (k = 0; k < st->n; k++) {
		for (i = 0; i < st->parent_data && strcmp(all[i], st->ids[k]) != 0; i++)
			;
		if (i == st->parent_data)
			all[n++] = st->ids[k];
	}
	for (i = 0; i < st->parent_data; i++)
		if (!hml__store_find(st->s, "datasets", all[i])) {
			int rc = hml__error_set(HML_ENOTFOUND, "model '%s' was trained on data set "
			                        "'%s', which experiment '%s' no longer has", from,
			                        all[i], hml__store_dir(st->s));
			free(all);
			return rc;
		}
	free(st->ids);
	st->ids = all;
	st->n = n;
	return 0;
}

/* The region and data sets to train on (lib/store/data_pick.h). */
static int pick_datasets(train_state *st)
{
	hml__data_query q = { region, NULL, data_ids.items, (size_t)data_ids.n, "train on" };
	hml__data_choice c;
	int rc;

	if ((rc = hml__data_pick(&c, st->s, &q)) < 0)
		return rc;
	st->label = c.region;
	st->wname = c.workflow;
	st->ids = c.ids;   /* now st's */
	st->n = c.n;
	return from ? add_parent_data(st) : 0;
}

/* Absolute data paths, each checked against its recorded SHA-256. */
static int check_data_files(train_state *st)
{
	return hml__checked_dataset_files(st->s, st->ids, st->n, &st->paths);
}

/* The command line's values, else (st not NULL) the workflow region's
 * training defaults (lib/run/workflow.h), else lib/train/train.h's. *nf gets the
 * NaN/Inf policy. */
static void apply_defaults(const train_state *st, hml__train_options *o, const char **nf)
{
	const hml__workflow_region *r = st && st->w ? hml__workflow_region_find(st->w, st->label)
	                                            : NULL;

	*nf = "drop";
	hml__workflow_train_options(r, o, nf);
#define INT_OPT(var, field) if (var != UNSET) o->field = (__typeof__(o->field))var
#define NUM_OPT(var, field) if (!isnan(var)) o->field = var
#define STR_OPT(var, field) if (var) o->field = var
	INT_OPT(epochs, epochs);
	INT_OPT(batch, batch);
	INT_OPT(patience, patience);
	INT_OPT(rollout, rollout);
	INT_OPT(seed, seed);
	INT_OPT(threads, threads);
	NUM_OPT(lr, lr);
	NUM_OPT(weight_decay, weight_decay);
	NUM_OPT(clip, clip);
	NUM_OPT(val_fraction, val_fraction);
	NUM_OPT(test_fraction, test_fraction);
	NUM_OPT(max_seconds, max_seconds);
	STR_OPT(optimizer, optimizer);
	STR_OPT(schedule, schedule);
	STR_OPT(loss, loss);
	STR_OPT(categorical, categorical);
	STR_OPT(device, device);
	if (nonfinite)
		*nf = nonfinite;
#undef INT_OPT
#undef NUM_OPT
#undef STR_OPT
	o->arch = arch ? arch : (r && r->arch ? r->arch : r && r->family ? r->family : NULL);
	if (st && from) {   /* the parent's; check_cli refused --arch and the rest */
		const char *ploss = hml__json_string(st->parent.json, "loss");

		o->arch = st->parent.arch;
		o->loss = ploss ? ploss : "mse";
		o->categorical = st->parent_cat[0] ? st->parent_cat : "none";
		o->init_from = st->parent_path;
	}
	o->infer_batch = infer_batch != UNSET ? infer_batch : (r && r->batch > 0 ? r->batch : 0);
}

/* Once per epoch: the progress bar, and the interrupt check. */
static int on_epoch(void *payload, int epoch, int total, double train_loss, double val_rmse)
{
	train_state *st = payload;
	char detail[96];

	snprintf(detail, sizeof(detail), "loss %.3g, val %s %.3g", train_loss, st->metric, val_rmse);
	cmd_progress_update(st->bar, epoch, detail);
	if (cmd_interrupted) {
		st->interrupted_at = epoch;
		return 1;
	}
	return 0;
}

/* The model's record (lib/store/records.h writes it). */
static json_t *model_record(const train_state *st, const hml__train_options *o,
                            const char *nf, const hml__train_result *res)
{
	json_t *in = cmd_json_shape(st->d.in_shape, st->d.in_ndim);
	json_t *out = cmd_json_shape(st->d.out_shape, st->d.out_ndim);
	hml__model_facts f = {
		st->wname, st->label, in, out, st->ids, st->n, o, res, nf,
		st->d.nonfinite_rows, st->d.nonfinite_values, NULL, 0, 0, NULL,
		from ? st->parent.id : NULL
	};
	json_t *rec = in && out ? hml__model_record_new(st->s, &f) : NULL;

	json_decref(in);
	json_decref(out);
	return rec;
}

/* The command line alone first: its mistakes are usage errors. 0, or
 * HML_EXIT_USAGE with its message. */
static int check_cli(void)
{
	const struct { const char *name; int64_t v; } ints[] = {
		{ "epochs", epochs }, { "patience", patience }, { "threads", threads },
	};
	hml__train_options cli = HML__TRAIN_OPTIONS_INIT;
	const char *cli_nf;

	if (from && ensemble != UNSET) {
		cmd_error("train: --ensemble cannot be given with --from (a continued model is one)");
		return HML_EXIT_USAGE;
	}
	if (from && (arch || loss || categorical)) {
		cmd_error("train: --from MODEL trains MODEL's architecture, loss and categorical "
		          "features; --%s cannot be given with it",
		          arch ? "arch" : loss ? "loss" : "categorical");
		return HML_EXIT_USAGE;
	}
	if (nonfinite && strcmp(nonfinite, "drop") != 0 && strcmp(nonfinite, "error") != 0) {
		cmd_error("train: --nonfinite must be 'drop' or 'error', not '%s'", nonfinite);
		return HML_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (ints[i].v != UNSET && (ints[i].v < INT_MIN || ints[i].v > INT_MAX)) {
			cmd_error("train: --%s %lld is out of range", ints[i].name, (long long)ints[i].v);
			return HML_EXIT_USAGE;
		}
	if (threads == UNSET && cmd_env_threads("train", &threads) < 0)
		return HML_EXIT_USAGE;
	apply_defaults(NULL, &cli, &cli_nf);
	if (hml__train_check(&cli, NULL, 0) < 0) {
		cmd_error("train: %s", hml_error_last()->message);
		return HML_EXIT_USAGE;
	}
	return 0;
}

/* Latencies are measured with the threads the application gives the
 * region's model, as the data sets record them (lib/store/cost.h). */
static void latency_threads(const train_state *st, hml__train_options *o)
{
	hml__region_cost c;

	hml__cost_of_datasets(&c, st->s, st->label, st->ids, st->n);
	o->latency_threads = c.threads;
}

/* The options (the workflow's training defaults under the command line's),
 * checked with the arch (canonical form into `canonical`) before the
 * possibly long load of the data sets st->ids into st->d. */
static int load_data(train_state *st, hml__train_options *o, const char **nf,
                     char *canonical, size_t size)
{
	hml__dataset_view data0;
	hml__nonfinite policy;
	const char *wpath;
	int rc;

	/* The workflow of the data, for its training defaults. */
	hml__dataset_view_of(&data0, hml__store_find(st->s, "datasets", st->ids[0]));
	wpath = data0.workflow_path;
	if (wpath && hml__workflow_load(&st->w, wpath) < 0 &&
	    (!st->wname || hml__workflow_load(&st->w, st->wname) < 0)) {
		cmd_warn("the workflow of data set '%s' cannot be loaded (%s); "
		         "training with hml's defaults", st->ids[0], hml_error_last()->message);
		st->w = NULL;
	}
	if (st->w && !hml__workflow_region_find(st->w, st->label))
		cmd_warn("workflow '%s' has no region '%s'; training with hml's defaults",
		         st->w->name, st->label);
	apply_defaults(st, o, nf);
	latency_threads(st, o);
	if (strcmp(*nf, "drop") != 0 && strcmp(*nf, "error") != 0)
		return hml__error_set(HML_EINVALID, "workflow '%s': model.train.nonfinite must be "
		                      "'drop' or 'error', not '%s'", st->w ? st->w->path : "?", *nf);
	policy = strcmp(*nf, "error") == 0 ? HML__NONFINITE_ERROR : HML__NONFINITE_DROP;
	if ((rc = hml__train_check(o, canonical, size)) < 0 ||
	    (rc = check_data_files(st)) < 0 ||
	    (rc = hml__dataset_load(&st->d, (const char *const *)st->paths, st->n, st->label,
	                            policy)) < 0 ||
	    (rc = hml__rollout_check(&st->d, o->rollout)) < 0)
		return rc;
	if (st->d.nonfinite_rows)
		cmd_warn("region '%s': dropped %lld of %lld rows holding NaN or Inf (%lld values)",
		         st->label, (long long)st->d.nonfinite_rows,
		         (long long)(st->d.rows + st->d.nonfinite_rows),
		         (long long)st->d.nonfinite_values);
	cmd_info("training %s on region '%s': %lld rows from %zu data set%s",
	         canonical, st->label, (long long)st->d.rows, st->n, st->n == 1 ? "" : "s");
	return 0;
}

/* The statistics of the training inputs its guards need (lib/core/guard.h),
 * in the card; a model without them can be deployed with no guard. */
static void add_guard_stats(const train_state *st, json_t *rec)
{
	hml__guard_stats g;

	if (hml__guard_fit(&g, st->d.x, st->d.rows, st->d.in_features) < 0) {
		cmd_warn("no input statistics for guards: %s (hml deploy --guard is refused for "
		         "this model)", hml_error_last()->message);
		return;
	}
	json_object_set_new(rec, "guard", hml__guard_stats_json(&g));
	hml__guard_stats_release(&g);
}

/* The trained model st->tmp registered with its card (latency per target
 * measured here); id into id. A failure keeps the file and says where: a
 * locked or full experiment must not cost a long training. Returns the
 * exit status. */
static int register_model(train_state *st, const hml__train_options *o, const char *nf,
                          const hml__train_result *res, char *id, size_t size)
{
	hml__store_file files[HML__GUARD_ENSEMBLE_MAX] = { { "model", st->tmp, ".pt", NULL, NULL } };
	json_t *rec = model_record(st, o, nf, res), *lat;
	int rc, nfiles = 1 + cmd_ensemble_files(&st->ens, files + 1, HML__GUARD_ENSEMBLE_MAX - 1);
	int code = HML_EXIT_OK;

	if (!rec)
		return cmd_fail(hml__error_oom());
	/* The card's latency per target (cmd/latency.c, lib/deploy/latency.h). */
	if ((lat = cmd_latency_card(st->tmp, &st->d, res->latency_batch,
	                            hml__train_latency_threads(o))))
		json_object_set_new(rec, "latency", lat);
	add_guard_stats(st, rec);
	if (st->ens.n && (rc = cmd_ensemble_card(&st->ens, rec)) < 0) {
		json_decref(rec);
		return cmd_fail(rc);
	}
	json_incref(rec);
	if ((rc = hml__store_add(st->s, "models", rec, files, (size_t)nfiles, 1, id, size)) < 0) {
		code = cmd_fail(rc);
		for (int k = 0; k < nfiles; k++)
			cmd_error("the trained model is kept in '%s'", files[k].tmp_path);
	} else {
		cmd_train_report(st->s, id, st->label, rec, from, st->parent_data, st->n);
	}
	cmd_ensemble_registered(&st->ens);
	free(st->tmp);  /* renamed, or kept for the user: nothing to remove */
	st->tmp = NULL;
	json_decref(rec);
	return code;
}

int cmd_train(int argc, char **argv)
{
	train_state st;
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;
	hml__train_result res;
	const char *nf = "drop";
	char canonical[256], id[32];
	int first, rc, code = HML_EXIT_OK;

	memset(&st, 0, sizeof(st));
	memset(&res, 0, sizeof(res));
	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if ((rc = check_cli()) != 0)
		return rc;
	cmd_keep_heap();
	if ((rc = hml__store_open(&st.s, g_cmd.dir, 0)) < 0 ||
	    (from && (rc = load_parent(&st)) < 0) ||
	    (rc = pick_datasets(&st)) < 0 ||
	    (rc = load_data(&st, &o, &nf, canonical, sizeof(canonical))) < 0)
		goto fail;
	if (cmd_interrupted) {
		cmd_error("interrupted before training; no model was recorded");
		code = HML_EXIT_INTERRUPTED;
		goto done;
	}
	st.ens.n = ensemble != UNSET ? (int)ensemble : 0;
	if (!st.ens.n && !(st.tmp = hml__store_tmp_path(st.s, "models", ".pt"))) {
		rc = hml__error_oom();
		goto fail;
	}
	o.progress = on_epoch;
	o.payload = &st;
	o.out_root = hml__store_dir(st.s);   /* never written through a link */
	st.metric = o.metric ? o.metric : "rmse";
	st.bar = cmd_progress_start("train", o.epochs, 1);
	rc = st.ens.n ? cmd_ensemble_train(&st.ens, st.s, &st.d, &o, &res)
	              : hml__train(&st.d, &o, st.tmp, &res);
	if (st.ens.n && rc == 0)
		st.tmp = st.ens.tmp[0], st.ens.tmp[0] = NULL;   /* member 0: the model */
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
	code = register_model(&st, &o, nf, &res, id, sizeof(id));
	goto done;
fail:
	code = cmd_fail(rc);
done:
	state_release(&st);
	return cmd_finish(code);
}
