/*
 * hml deploy --target c: a trained model compiled to its deployment form.
 *
 * The TorchScript file is read into a torch-free description
 * (lib/deploy/export.cpp), written as C (lib/deploy/codegen.c), compiled by the system C
 * compiler (lib/deploy/cbuild.c) into a shared object, loaded back through the runtime's own
 * loader (runtime/loader/cmodel.c) and compared with the TorchScript model on
 * rows drawn around the training data's mean; the card's input statistics
 * (its "guard" object) are embedded in it (hml/cmodel.h, input_stats) and
 * read back from the loaded object, which must give the card's object
 * exactly; only then is it registered as a "compiled" record (c1:
 * models/c1.c, c1.h, c1.so) with the compiler, its version and flags,
 * and "input_stats": whether it carries statistics. Nothing is registered when any step fails; the
 * temporary files are removed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/rng.h"
#include "core/util.h"
#include "deploy/cbuild.h"
#include "deploy/codegen.h"
#include "deploy/export.h"
#include "loader/loader.h"
#include "store/store.h"
#include "sys/fsutil.h"
#include "train/train.h"

#define AGREE_ROWS 256

/* A plain Sequential (hml import) maps flat rows; a region whose rows
 * have more dims but as many features takes its shapes. */
static void adopt_shapes(hml__cg_model *d, const json_t *model)
{
	const json_t *shapes[2] = { json_object_get(model, "input_shape"),
	                            json_object_get(model, "output_shape") };
	int64_t *dst[2] = { d->in_shape, d->out_shape }, tmp[8];
	int *nd[2] = { &d->in_ndim, &d->out_ndim };

	if (strncmp(d->arch, "sequential:", 11) != 0)
		return;
	for (int k = 0; k < 2; k++) {
		size_t n = json_array_size(shapes[k]);
		int64_t p = 1;

		if (n < 1 || n > 8)
			continue;
		for (size_t i = 0; i < n; i++)
			p *= tmp[i] = json_integer_value(json_array_get(shapes[k], i));
		if (*nd[k] == 1 && p == dst[k][0]) {
			memcpy(dst[k], tmp, n * sizeof(int64_t));
			*nd[k] = (int)n;
		}
	}
}

/* The description's shapes must be the model record's (the region's). */
static int check_shapes(hml__cg_model *d, const json_t *model, const char *id)
{
	adopt_shapes(d, model);
	json_t *in = cmd_json_shape(d->in_shape, d->in_ndim);
	json_t *out = cmd_json_shape(d->out_shape, d->out_ndim);
	const json_t *rin = json_object_get(model, "input_shape");
	const json_t *rout = json_object_get(model, "output_shape");
	int rc = 0;

	if (!json_equal(in, (json_t *)rin) || !json_equal(out, (json_t *)rout)) {
		char *a = json_dumps(in, JSON_COMPACT), *b = json_dumps(out, JSON_COMPACT);
		char *c = json_dumps(rin, JSON_COMPACT | JSON_ENCODE_ANY);
		char *e = json_dumps(rout, JSON_COMPACT | JSON_ENCODE_ANY);

		rc = hml__error_set(HML_ESHAPE, "model '%s' maps rows of %s to %s, but its record "
		                    "(the region's data) has %s to %s", id, a ? a : "?", b ? b : "?",
		                    c ? c : "null", e ? e : "null");
		free(a), free(b), free(c), free(e);
	}
	json_decref(in);
	json_decref(out);
	return rc;
}

/* The compiled model against TorchScript on rows around the data's mean:
 * max |difference| within 1e-5 of the outputs' scale. Fills *agree. */
static int check_agreement(const hml__cg_model *d, const char *pt, const char *so,
                           json_t **agree)
{
	int64_t nin = 1, nout = 1, shape[HML_MAX_DIMS + 1], oshape[HML_MAX_DIMS + 1];
	float *x = NULL, *want = NULL;
	const void *got;
	hml__cmodel *cm = NULL;
	double diff = 0, scale = 1;
	uint64_t seed = HML__RNG_GOLDEN;
	hml_dtype dt;
	int rc, nd;

	for (int i = 0; i < d->in_ndim; i++)
		nin *= d->in_shape[i];
	for (int i = 0; i < d->out_ndim; i++)
		nout *= d->out_shape[i];
	x = malloc((size_t)(AGREE_ROWS * nin) * sizeof(float));
	want = malloc((size_t)(AGREE_ROWS * nout) * sizeof(float));
	if (!x || !want) {
		rc = hml__error_oom();
		goto done;
	}
	for (int64_t i = 0; i < AGREE_ROWS * nin; i++) {
		int64_t f = i % nin, ch = d->family == HML__CG_MLP ? f : f / (nin / d->layers[0].in);
		double u;

		u = (double)(hml__rng_lcg(&seed) >> 11) / 9007199254740992.0 * 4 - 2;
		x[i] = (float)(d->in_mean[ch] + d->in_std[ch] * u);
	}
	if ((rc = hml__model_predict_f32(pt, x, AGREE_ROWS, d->in_ndim, d->in_shape, want,
	                             AGREE_ROWS * nout, NULL)) < 0 ||
	    (rc = hml__cmodel_load(&cm, so)) < 0)
		goto done;
	shape[0] = AGREE_ROWS;
	memcpy(shape + 1, d->in_shape, (size_t)d->in_ndim * sizeof(int64_t));
	if ((rc = hml__cmodel_forward(cm, x, HML_F32, d->in_ndim + 1, shape)) < 0 ||
	    (rc = hml__cmodel_output(cm, &got, &dt, &nd, oshape)) < 0)
		goto done;
	for (int64_t i = 0; i < AGREE_ROWS * nout; i++) {
		scale = fmax(scale, fabs(want[i]));
		diff = fmax(diff, fabs((double)((const float *)got)[i] - want[i]));
	}
	*agree = json_pack("{s:i, s:f, s:f}", "rows", AGREE_ROWS, "max_abs_diff", diff,
	                   "scale", scale);
	if (!(diff <= 1e-5 * scale))
		rc = hml__error_set(HML_EMODEL, "the compiled model differs from the TorchScript "
		                    "model by %g (scale %g; allowed 1e-5 relative)", diff, scale);
done:
	hml__cmodel_free(cm);
	free(x);
	free(want);
	return rc;
}

/* The statistics the compiled model at `so` carries must be the card's
 * "guard" object `card` (NULL: it must carry none), read back exactly. */
static int check_stats(const json_t *card, const char *so)
{
	hml__cmodel *cm = NULL;
	const char *text;
	json_t *back = NULL;
	int rc;

	if ((rc = hml__cmodel_load(&cm, so)) < 0)
		return rc;
	text = hml__cmodel_input_stats(cm);
	if (!card && text)
		rc = hml__error_set(HML_EMODEL, "the compiled model carries input statistics its "
		                    "card does not have");
	else if (card && (!text || !(back = json_loads(text, 0, NULL)) ||
	                  !json_equal(back, (json_t *)card)))
		rc = hml__error_set(HML_EMODEL, "the compiled model's input statistics do not read "
		                    "back as its card's");
	json_decref(back);
	hml__cmodel_free(cm);
	return rc;
}

int cmd_deploy_compile(hml__store *s, const json_t *model, const char *pt_path,
                       const char *march, char *cid, size_t cid_size)
{
	const char *id = hml__json_string(model, "id");
	const json_t *card = json_object_get(model, "guard");
	hml__cg_model d;
	hml__cg_options o = { id, NULL, NULL };
	hml__cbuild_info info;
	char *cc = NULL, *tmp[3] = { NULL }, hash[65], *stats = NULL;
	json_t *rec = NULL, *agree = NULL;
	int rc;

	memset(&d, 0, sizeof(d));
	memset(&info, 0, sizeof(info));
	/* No compiler: said first, before the model is read. */
	if ((rc = hml__cbuild_find_cc(&cc)) < 0)
		goto done;
	if ((rc = cmd_model_vet(pt_path)) < 0 ||
	    (rc = hml__export_model(pt_path, &d)) < 0 || (rc = check_shapes(&d, model, id)) < 0 ||
	    (rc = hml__sha256_file(pt_path, hash)) < 0)
		goto done;
	o.hash = hash;
	if (!json_is_object(card))
		card = NULL;
	else if (!(o.input_stats = stats = json_dumps(card, JSON_COMPACT))) {
		rc = hml__error_oom();
		goto done;
	}
	{
		static const char *const ext[3] = { ".c", ".h", ".so" };

		for (int i = 0; i < 3; i++)
			if (!(tmp[i] = hml__store_tmp_create(s, "models", ext[i]))) {   /* no link */
				rc = hml_error_last()->code;
				goto done;
			}
	}
	if ((rc = hml__cbuild_so(&d, &o, march, tmp[0], tmp[1], tmp[2], &info)) < 0 ||
	    (rc = check_agreement(&d, pt_path, tmp[2], &agree)) < 0 ||
	    (rc = check_stats(card, tmp[2])) < 0)
		goto done;
	rec = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:b}", "model", id,
	                "region", hml__json_string(model, "region"), "target", "c",
	                "arch", d.arch, "compiler", hml__cbuild_info_json(&info),
	                "agreement", agree, "input_stats", card != NULL);
	agree = NULL;
	{
		const hml__store_file files[] = {
			{ "source", tmp[0], ".c", NULL, NULL }, { "header", tmp[1], ".h", NULL, NULL },
			{ "library", tmp[2], ".so", NULL, NULL },
		};

		rc = hml__store_add(s, "compiled", rec, files, 3, 0, cid, cid_size);
		rec = NULL;
	}
done:
	for (int i = 0; i < 3; i++) {
		if (tmp[i] && rc < 0)   /* registered files were renamed */
			unlink(tmp[i]);
		free(tmp[i]);
	}
	json_decref(agree);
	json_decref(rec);
	hml__cg_model_release(&d);
	hml__cbuild_info_release(&info);
	free(cc);
	free(stats);
	return rc;
}
