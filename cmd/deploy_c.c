/*
 * hml deploy --target c: a trained model compiled to its deployment form.
 *
 * The TorchScript file is read into a torch-free description
 * (lib/export.cpp), written as C (lib/codegen.c), compiled by the system C
 * compiler into a shared object, loaded back through the runtime's own
 * loader (runtime/src/cmodel.c) and compared with the TorchScript model on
 * rows drawn around the training data's mean, and only then registered as
 * a "compiled" record (c1: models/c1.c, c1.h, c1.so) with the compiler, its
 * version and flags. Nothing is registered when any step fails; the
 * temporary files are removed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cmodel.h"
#include "model.h"
#include "codegen.h"
#include "export.h"
#include "fsutil.h"
#include "proc.h"
#include "store.h"
#include "train.h"
#include "util.h"

#define AGREE_ROWS 256

/* The first line of file `path` into buf ("" when unreadable). */
static void first_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)size, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\r\n")] = '\0';
}

/* The description's shapes must be the model record's (the region's). */
static int check_shapes(const hml__cg_model *d, const json_t *model, const char *id)
{
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
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
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

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		u = (double)(seed >> 11) / 9007199254740992.0 * 4 - 2;
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

/* Run cc; its stderr into err_path. */
static int run_cc(const char *const *argv, const char *err_path, const char *out_path)
{
	hml__proc_result res;
	char line[300];
	int rc;

	if ((rc = hml__proc_run(argv, NULL, out_path, err_path, &res)) < 0)
		return rc;
	if (res.interrupted)
		return hml__error_set(HML_ERROR, "interrupted");
	if (!res.exited || res.exit_code != 0) {
		first_line(err_path, line, sizeof(line));
		return hml__error_set(HML_ERROR, "C compiler '%s' failed (%s)%s%s", argv[0],
		                      hml__proc_describe(&res), line[0] ? ": " : "", line);
	}
	return 0;
}

int cmd_deploy_compile(hml__store *s, const json_t *model, const char *pt_path,
                       const char *march, char *cid, size_t cid_size)
{
	const char *id = cmd_json_string(model, "id");
	hml__cg_model d;
	hml__cg_options o = { id, NULL };
	char *cc = NULL, *tmp[5] = { NULL }, hash[65], version[256], arch_flag[128];
	const char *flags[] = { "-std=c11", "-O3", "-ffp-contract=fast", "-fPIC", "-shared",
	                        "-fvisibility=hidden", "-fopenmp", arch_flag };
	size_t nflags = sizeof(flags) / sizeof(flags[0]) - (march ? 0 : 1);
	const char *argv[16];
	json_t *rec = NULL, *fl, *agree = NULL;
	int rc, n = 0;

	memset(&d, 0, sizeof(d));
	snprintf(arch_flag, sizeof(arch_flag), "-march=%s", march ? march : "");
	if (!(cc = hml__find_on_path("cc"))) {
		rc = hml__error_set(HML_ERROR, "no C compiler: 'cc' is not on PATH "
		                    "(--target c compiles the model with it)");
		goto done;
	}
	if ((rc = hml__export_model(pt_path, &d)) < 0 || (rc = check_shapes(&d, model, id)) < 0 ||
	    (rc = hml__sha256_file(pt_path, hash)) < 0)
		goto done;
	o.hash = hash;
	{
		static const char *const ext[5] = { ".c", ".h", ".so", ".version", ".err" };

		for (int i = 0; i < 5; i++)
			if (!(tmp[i] = hml__store_tmp_path(s, "models", ext[i]))) {
				rc = hml__error_oom();
				goto done;
			}
	}
	if ((rc = hml__cg_write(&d, &o, tmp[0], tmp[1])) < 0)
		goto done;
	argv[0] = cc, argv[1] = "--version", argv[2] = NULL;
	if ((rc = run_cc(argv, tmp[4], tmp[3])) < 0)
		goto done;
	first_line(tmp[3], version, sizeof(version));
	argv[n++] = cc;
	for (size_t i = 0; i < nflags; i++)
		argv[n++] = flags[i];
	argv[n++] = "-o", argv[n++] = tmp[2], argv[n++] = tmp[0], argv[n++] = "-lm";
	argv[n] = NULL;
	if ((rc = run_cc(argv, tmp[4], NULL)) < 0 ||
	    (rc = check_agreement(&d, pt_path, tmp[2], &agree)) < 0)
		goto done;
	fl = json_array();
	for (size_t i = 0; i < nflags; i++)
		json_array_append_new(fl, json_string(flags[i]));
	json_array_append_new(fl, json_string("-lm"));
	rec = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:o}, s:o}", "model", id,
	                "region", cmd_json_string(model, "region"), "target", "c",
	                "arch", d.arch, "compiler", "path", cc, "version", version, "flags", fl,
	                "agreement", agree);
	agree = NULL;
	{
		const hml__store_file files[] = {
			{ "source", tmp[0], ".c" }, { "header", tmp[1], ".h" }, { "library", tmp[2], ".so" },
		};

		rc = hml__store_add(s, "compiled", rec, files, 3, 0, cid, cid_size);
		rec = NULL;
	}
done:
	for (int i = 0; i < 5; i++) {
		if (tmp[i] && (rc < 0 || i >= 3))   /* registered files were renamed */
			unlink(tmp[i]);
		free(tmp[i]);
	}
	json_decref(agree);
	json_decref(rec);
	hml__cg_model_release(&d);
	free(cc);
	return rc;
}
