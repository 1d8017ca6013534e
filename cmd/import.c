/*
 * hml import - register a TorchScript model trained elsewhere (for example
 * in Python) as a model of the experiment.
 *
 * The model is checked against a region's collected data before anything
 * is registered: the shapes it declares (hml_input_shape /
 * hml_output_shape, when it has them) must be the region's, and it must
 * run on the region's rows through the runtime's own TorchScript backend
 * and give one output row of the region's shape per input row. Its errors
 * are measured on all of those rows (hml cannot know which of them it was
 * trained on), in the metrics hml train records; its card gets the
 * latency per target (lib/deploy/latency.h) and whether hml can compile it to C
 * (lib/deploy/export.h). The file is copied into the experiment (models/<id>.pt)
 * with its origin and SHA-256; it is then deployed, compiled and evaluated
 * like a trained model.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "core/beneath.h"
#include "core/util.h"
#include "deploy/codegen.h"
#include "deploy/export.h"
#include "deploy/metrics.h"
#include "loader/loader.h"
#include "run/workflow.h"
#include "store/checked.h"
#include "store/data_pick.h"
#include "store/records.h"
#include "store/store.h"
#include "sys/fsutil.h"
#include "train/dataset.h"
#include "train/train.h"

#define MAX_MODEL_BYTES ((size_t)1 << 32)

static const char *region, *workflow;
static int64_t batch = -1, threads = 0;

static const cmd_option options[] = {
	{ "region", 'r', CMD_OPT_STRING, &region, "R", "the region the model replaces (required)" },
	{ "workflow", 'w', CMD_OPT_STRING, &workflow, "W",
	  "the workflow whose data sets are used (default: that of the newest data set "
	  "holding R)" },
	{ "batch", 'b', CMD_OPT_INT, &batch, "N",
	  "rows per call when measuring latency (default: the region's batch)" },
	{ "threads", 'j', CMD_OPT_INT, &threads, "N",
	  "libtorch threads for the measurements (default: libtorch's)" },
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const cmd_range ranges[] = {
	{ "batch", 1, 16777216, 0 }, { "threads", 0, 4096, 0 }, { NULL, 0, 0, 0 }
};

static const cmd_spec spec = {
	"import", "[options] --region R FILE.pt",
	"register a TorchScript model trained elsewhere",
	"Registers the TorchScript model FILE.pt (for example saved by torch.jit.script\n"
	"in Python) as a model of region R: its shapes are checked against the\n"
	"region's collected rows, its errors measured on them (val_rmse, test_rmse,\n"
	"test_mae, test_max_abs, all over every collected row), its latency measured\n"
	"per target, and the file copied to models/<id>.pt with its origin and\n"
	"SHA-256. It is then deployed (hml deploy), compiled (--target c, when it is\n"
	"a plain nn.Sequential of Linear layers and activations or an hml model) and\n"
	"evaluated like a trained model.",
	options, 1, 1, ranges
};

typedef struct import_state {
	hml__store *s;
	const char *wname;
	const char **ids;        /* data-set ids (borrowed from the store) */
	char **paths;            /* their files, absolute */
	size_t n;
	hml__dataset d;
	float *y;                /* the model's outputs on d's rows */
	char hash[65];
	char arch[256];
	char *tmp;               /* the copy under a temporary name */
} import_state;

static void state_release(import_state *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->paths ? st->paths[i] : NULL);
	free(st->paths);
	free(st->ids);
	hml__dataset_release(&st->d);
	free(st->y);
	if (st->tmp)
		unlink(st->tmp);
	free(st->tmp);
	hml__store_free(st->s);
}

/* The data sets with rows of the region: those of `workflow`, else of the
 * workflow of the newest data set holding the region (lib/store/data_pick.h). */
static int pick_datasets(import_state *st)
{
	hml__data_query q = { region, workflow, NULL, 0, NULL };
	hml__data_choice c;
	int rc;

	if ((rc = hml__data_pick(&c, st->s, &q)) < 0)
		return rc;
	st->wname = c.workflow;
	st->ids = c.ids;   /* now st's */
	st->n = c.n;
	if ((rc = hml__checked_dataset_files(st->s, st->ids, st->n, &st->paths)) < 0)
		return rc;
	return hml__dataset_load(&st->d, (const char *const *)st->paths, st->n, region,
	                         HML__NONFINITE_DROP);
}

/* A declared shape (when the model has one) must be the region's. */
static int check_declared(const char *file, const char *what, const int64_t *got, int gn,
                          const int64_t *want, int wn)
{
	char a[160], b[160];

	if (gn == 0 || (gn == wn && memcmp(got, want, (size_t)gn * sizeof(*got)) == 0))
		return 0;
	hml__format_shape(a, sizeof(a), got, gn);
	hml__format_shape(b, sizeof(b), want, wn);
	return hml__error_set(HML_ESHAPE, "model '%s' declares %s rows of %s, but region '%s' "
	                      "has %s", file, what, a, region, b);
}

/* The file is a TorchScript model that maps the region's rows to rows of
 * its outputs (run by the runtime's backend, as an application runs it);
 * its outputs on every row into st->y. */
static int run_model(import_state *st, const char *file)
{
	hml__dataset *d = &st->d;
	hml__model *m = NULL;
	hml__error_saved why;
	int64_t shape[HML_MAX_DIMS + 1], per_row = 1;
	const void *out;
	hml_dtype dt;
	char want[160];
	int rc, n;

	if (hml__cmodel_sniff(file))
		return hml__error_set(HML_EINVALID, "cannot import '%s': it is a shared object, not "
		                      "a TorchScript file (hml import takes the .pt a model was saved "
		                      "to)", file);
	/* Not a TorchScript model is invalid input (exit 3), as a bad data file
	 * is; the backend's message says why. */
	if ((rc = hml__model_load(&m, file, (int)threads)) == HML_EMODEL) {
		hml__error_save(&why);
		return hml__error_set(HML_EINVALID, "%s", why.message);
	}
	if (rc < 0)
		return rc;
	n = hml__model_declared_input(m, shape);
	rc = check_declared(file, "input", shape, n, d->in_shape, d->in_ndim);
	n = rc < 0 ? 0 : hml__model_declared_output(m, shape);
	if (rc == 0)
		rc = check_declared(file, "output", shape, n, d->out_shape, d->out_ndim);
	if (rc < 0)
		goto done;
	shape[0] = d->rows;
	memcpy(shape + 1, d->in_shape, (size_t)d->in_ndim * sizeof(int64_t));
	hml__format_shape(want, sizeof(want), d->in_shape, d->in_ndim);
	if ((rc = hml__model_forward(m, d->x, HML_F32, d->in_ndim + 1, shape)) < 0 ||
	    (rc = hml__model_output(m, &out, &dt, &n, shape)) < 0) {
		hml__error_save(&why);
		rc = hml__error_set(HML_ESHAPE, "model '%s' does not run on the rows of region "
		                    "'%s' (%s): %s", file, region, want, why.message);
		goto done;
	}
	for (int i = 1; i < n; i++)
		per_row *= shape[i];
	if (n < 1 || shape[0] != d->rows) {
		rc = hml__error_set(HML_ESHAPE, "model '%s' gives %lld output rows for %lld input "
		                    "rows of region '%s'", file, (long long)(n < 1 ? 0 : shape[0]),
		                    (long long)d->rows, region);
		goto done;
	}
	if (per_row != d->out_features) {
		hml__format_shape(want, sizeof(want), d->out_shape, d->out_ndim);
		rc = hml__error_set(HML_ESHAPE, "model '%s' gives %lld values per row, but region "
		                    "'%s' has output rows of %s", file, (long long)per_row, region,
		                    want);
		goto done;
	}
	if (!(st->y = malloc((size_t)(d->rows * d->out_features) * sizeof(float)))) {
		rc = hml__error_oom();
		goto done;
	}
	hml__convert(st->y, HML_F32, out, dt, (size_t)(d->rows * d->out_features));
done:
	hml__model_free(m);
	return rc;
}

/* Errors on every row, in the outputs' units. */
static int measure_errors(const import_state *st, hml__errors *e)
{
	size_t n = (size_t)(st->d.rows * st->d.out_features);
	double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));

	if (!a || !b) {
		free(a);
		free(b);
		return hml__error_oom();
	}
	for (size_t i = 0; i < n; i++)
		a[i] = st->d.y[i], b[i] = st->y[i];
	hml__errors_compute(e, a, b, n);
	free(a);
	free(b);
	if (e->nonfinite)
		return hml__error_set(HML_EINVALID, "model gives NaN or Inf for %zu of %zu values "
		                      "of region '%s'", e->nonfinite, n, region);
	return 0;
}

/* The rows per call of the region in its workflow (0: unknown). */
static int64_t region_batch(const import_state *st)
{
	hml__dataset_view d;
	hml__workflow *w = NULL;
	int64_t b = 0;

	if (hml__records_dataset(&d, st->s, st->ids[st->n - 1]) == 0 &&
	    ((d.workflow_path && hml__workflow_load(&w, d.workflow_path) == 0) ||
	     (st->wname[0] && hml__workflow_load(&w, st->wname) == 0))) {
		const hml__workflow_region *r = hml__workflow_region_find(w, region);

		b = r ? r->batch : 0;
	}
	hml__workflow_free(w);
	return b;
}

/* The model's record (lib/store/records.h writes it, as hml train's). */
static json_t *model_record(const import_state *st, const char *file, const hml__errors *e,
                            const char *compile_error, int64_t params)
{
	json_t *in = cmd_json_shape(st->d.in_shape, st->d.in_ndim);
	json_t *out = cmd_json_shape(st->d.out_shape, st->d.out_ndim), *rec = NULL;
	char *origin = hml__path_abs(file);
	hml__model_import im = { origin ? origin : file, st->hash, compile_error, st->d.rows };
	hml__train_result r;
	hml__model_facts f = { st->wname, region, in, out, st->ids, st->n, NULL, &r, NULL,
	                       st->d.nonfinite_rows, -1, NULL, 0, 0, &im, NULL };

	memset(&r, 0, sizeof(r));
	snprintf(r.arch, sizeof(r.arch), "%s", st->arch);
	r.val_rmse = r.test_rmse = e->rmse;
	r.test_mae = e->mae;
	r.test_max_abs = e->max_abs;
	r.params = params;
	if (in && out)
		rec = hml__model_record_new(st->s, &f);
	json_decref(in);
	json_decref(out);
	free(origin);
	return rec;
}

/* The file copied into models/ under a temporary name; its SHA-256. */
static int copy_in(import_state *st, const char *file)
{
	char *buf = NULL;
	size_t size = 0;
	int rc;

	if ((rc = hml__sha256_file(file, st->hash)) < 0 ||
	    (rc = hml__read_file_max(file, MAX_MODEL_BYTES, &buf, &size)) < 0)
		return rc;
	if (!(st->tmp = hml__store_tmp_path(st->s, "models", ".pt")))
		rc = hml__error_oom();
	else
		rc = hml__beneath_write_atomic(hml__store_dir(st->s), st->tmp, buf, size);
	free(buf);
	return rc;
}

static void print_result(const json_t *rec, const char *id)
{
	const json_t *m = json_object_get(rec, "metrics");
	const json_t *imp = json_object_get(rec, "import");

	printf("%s: imported '%s' (%s) for region '%s' of workflow '%s'\n", id,
	       hml__json_string(imp, "origin") ? hml__json_string(imp, "origin") : "?",
	       hml__json_string(rec, "arch"), region, hml__json_string(rec, "workflow"));
	printf("  on all %lld collected rows: RMSE %.6g, MAE %.6g, max error %.6g\n",
	       (long long)json_integer_value(json_object_get(json_object_get(rec, "rows"),
	                                                     "evaluated")),
	       hml__json_number(m, "val_rmse"), hml__json_number(m, "test_mae"),
	       hml__json_number(m, "test_max_abs"));
	if (json_is_true(json_object_get(imp, "compilable")))
		printf("  compilable to C (hml deploy --target c %s)\n", id);
	else if (!json_object_get(rec, "latency"))   /* else the latency line says why */
		printf("  not compilable to C: %s\n", hml__json_string(imp, "not_compilable"));
	cmd_latency_print(rec, "  ");
}

/* Before the experiment is read: a missing file, a file past the archive
 * limits or one libtorch cannot load in a child, or one that is not a
 * regular file (a FIFO, a directory, a device: opened without blocking,
 * as every model file is, loader.h) is invalid input, refused at once. */
static int check_file(const char *file)
{
	hml__error_saved why;
	struct stat st;
	int fd;

	if (access(file, R_OK) != 0)
		return hml__error_set(errno == ENOENT ? HML_ENOTFOUND : HML_EIO,
		                      "cannot import '%s': %s", file, strerror(errno));
	if ((fd = hml__model_file_open(file, "model", &st)) < 0) {
		hml__error_save(&why);
		return hml__error_set(HML_EINVALID, "%s", why.message);
	}
	close(fd);
	/* Loaded first in a child under limits: whatever libtorch does with
	 * the file happens there (lib/deploy/vet.h). A shared object is
	 * refused by run_model, before anything loads it. */
	return hml__cmodel_sniff(file) ? 0 : cmd_model_vet(file);
}

int cmd_import(int argc, char **argv)
{
	import_state st;
	hml__errors e;
	hml__cg_model desc;
	json_t *rec = NULL, *lat;
	const char *file, *compile_error = NULL;
	char id[32], why[512];
	int64_t params = 0;
	int first, rc, code = HML_EXIT_OK;

	memset(&st, 0, sizeof(st));
	memset(&desc, 0, sizeof(desc));
	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if (!region) {
		cmd_error("import: --region R is required (the region the model replaces)");
		return HML_EXIT_USAGE;
	}
	file = argv[first];
	if ((rc = check_file(file)) < 0)
		goto fail;
	if ((rc = hml__store_open(&st.s, g_cmd.dir, 0)) < 0 || (rc = pick_datasets(&st)) < 0 ||
	    (rc = run_model(&st, file)) < 0 || (rc = measure_errors(&st, &e)) < 0)
		goto fail;
	/* Compilable to C? The reason is kept when it is not. */
	if (hml__export_model(file, &desc) == 0) {
		snprintf(st.arch, sizeof(st.arch), "%s", desc.arch);
		for (int l = 0; l < desc.nlayers; l++) {
			const hml__cg_layer *y = &desc.layers[l];
			int64_t k = y->kernel > 0 ? (int64_t)y->kernel * y->kernel : 1;

			params += y->in * y->out * k + y->out;
		}
	} else {
		snprintf(why, sizeof(why), "%s", hml_error_last()->message);
		compile_error = why;
		snprintf(st.arch, sizeof(st.arch), "torchscript");
	}
	hml__cg_model_release(&desc);
	if ((rc = copy_in(&st, file)) < 0)
		goto fail;
	if (!(rec = model_record(&st, file, &e, compile_error, params))) {
		rc = hml__error_oom();
		goto fail;
	}
	lat = cmd_latency_card(file, &st.d, batch > 0 ? batch : region_batch(&st),
	                       (int)threads);
	if (lat)
		json_object_set_new(rec, "latency", lat);
	if (cmd_interrupted) {
		cmd_error("interrupted; no model was recorded");
		code = HML_EXIT_INTERRUPTED;
		goto done;
	}
	{
		const hml__store_file files[] = { { "model", st.tmp, ".pt", NULL, NULL } };

		json_incref(rec);
		if ((rc = hml__store_add(st.s, "models", rec, files, 1, 1, id, sizeof(id))) < 0)
			goto fail;
		free(st.tmp);   /* renamed */
		st.tmp = NULL;
	}
	if (g_cmd.json) {
		json_t *full = json_deep_copy(hml__store_find(st.s, "models", id));

		cmd_json_print(json_pack("{s:o}", "model", full ? full : json_null()));
	} else {
		print_result(rec, id);
	}
	goto done;
fail:
	code = cmd_fail(rc);
done:
	json_decref(rec);
	state_release(&st);
	return cmd_finish(code);
}
