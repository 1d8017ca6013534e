/*
 * tests/unit/export.c - TorchScript models trained by the shim (lib/train/train.cpp)
 * read back (lib/deploy/export.cpp), generated as C, compiled with the system C
 * compiler and loaded by the runtime's loader: on the training rows the
 * compiled model's outputs match the TorchScript model's within 1e-5 of
 * the outputs' scale, for every activation of the MLP family, for CNNs
 * on [C, H, W] and [H, W] rows and for cnnvec models (pooling, heads), in
 * float and in double. Models that are not of an hml family are refused
 * with the reason.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "deploy/codegen.h"
#include "deploy/export.h"
#include "fixtures.h"
#include "loader/loader.h"
#include "train/dataset.h"
#include "train/train.h"

/* rows of `in` features on very different scales (as option data are);
 * y: two smooth functions of them. */
static void make_rows(hml__dataset *d, int64_t rows)
{
	static const int64_t in[] = { 4 }, out[] = { 2 };
	uint64_t seed = 3;

	dataset_zeros(d, rows, 1, in, 1, out);
	for (int64_t r = 0; r < rows; r++) {
		float *x = d->x + r * 4;

		x[0] = (float)uniform(&seed, 50, 150);
		x[1] = (float)uniform(&seed, 0.01, 0.05);
		x[2] = (float)uniform(&seed, -1, 1);
		x[3] = (float)uniform(&seed, 1000, 3000);
		d->y[r * 2] = (float)(x[0] * exp(x[2]) / 10);
		d->y[r * 2 + 1] = (float)(sin(x[3] / 500) + x[1] * 20);
	}
}

/* Fields [c, 6, 7] (c = 0: [6, 7] rows); y: a blur. */
static void make_fields(hml__dataset *d, int64_t rows, int c)
{
	const int64_t chw[] = { c, 6, 7 };
	uint64_t seed = 5;

	dataset_zeros(d, rows, c ? 3 : 2, chw + !c, c ? 3 : 2, chw + !c);
	for (int64_t i = 0; i < rows * d->in_features; i++)
		d->x[i] = (float)uniform(&seed, 2, 4);
	for (int64_t i = 0; i < rows * d->in_features; i++)
		d->y[i] = 0.5f * d->x[i] + 0.25f * d->x[i > 0 ? i - 1 : i] + 0.25f * d->x[(i + 1) % (rows * d->in_features)];
}

/* Train `arch` (with the categorical declaration `cat`, may be NULL) on
 * d, compile it, compare on all of d's rows. */
static void agree_with(const hml__dataset *d, const char *arch, const char *cat,
                       const char *name)
{
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;
	hml__train_result res;
	hml__cg_model m;
	hml__cg_options go = { name, "feed", NULL };
	hml__cmodel *cm = NULL;
	char pt[600], c[600], so[600], cmd[2048];
	int64_t shape[HML_MAX_DIMS + 1], oshape[HML_MAX_DIMS + 1];
	float *want = malloc((size_t)(d->rows * d->out_features) * sizeof(float));
	double *xd = malloc((size_t)(d->rows * d->in_features) * sizeof(double));
	double diff = 0, scale = 1;
	const void *out;
	hml_dtype dt;
	int nd;

	snprintf(pt, sizeof(pt), "%s.pt", tmp_path(name));
	snprintf(c, sizeof(c), "%s.c", tmp_path(name));
	snprintf(so, sizeof(so), "%s.so", tmp_path(name));
	o.arch = arch;
	o.categorical = cat;
	o.epochs = 2;
	o.batch = 32;
	o.threads = 1;
	o.patience = 0;
	CHECK_OK(hml__train(d, &o, pt, &res));
	CHECK_OK(hml__export_model(pt, &m));
	CHECK_STR(m.arch, res.arch);
	CHECK_OK(hml__cg_write(&m, &go, c, NULL));
	snprintf(cmd, sizeof(cmd), "cc -std=c11 -O2 -fPIC -shared -o '%s' '%s' -lm", so, c);
	CHECK(system(cmd) == 0);
	CHECK_OK(hml__cmodel_load(&cm, so));
	CHECK_OK(hml__model_predict_f32(pt, d->x, d->rows, d->in_ndim, d->in_shape, want,
	                            d->rows * d->out_features, NULL));
	shape[0] = d->rows;
	memcpy(shape + 1, d->in_shape, (size_t)d->in_ndim * sizeof(int64_t));
	for (int64_t i = 0; i < d->rows * d->in_features; i++)
		xd[i] = d->x[i];
	for (int64_t i = 0; i < d->rows * d->out_features; i++)
		scale = fmax(scale, fabs(want[i]));
	for (int pass = 0; cm && pass < 2; pass++) {
		CHECK_OK(hml__cmodel_forward(cm, pass ? (const void *)xd : (const void *)d->x,
		                             pass ? HML_F64 : HML_F32, d->in_ndim + 1, shape));
		CHECK_OK(hml__cmodel_output(cm, &out, &dt, &nd, oshape));
		for (int64_t i = 0; i < d->rows * d->out_features; i++) {
			double v = pass ? ((const double *)out)[i] : ((const float *)out)[i];

			diff = fmax(diff, fabs(v - want[i]));
		}
	}
	printf("%-22s max |C - TorchScript| = %.3g (scale %.3g)\n", res.arch, diff, scale);
	CHECK(diff <= 1e-5 * scale);
	hml__cmodel_free(cm);
	hml__cg_model_release(&m);
	free(want);
	free(xd);
}

static void agree(const hml__dataset *d, const char *arch, const char *name)
{
	agree_with(d, arch, NULL, name);
}

/* make_rows with x[1] and x[3] replaced by classes: 0 .. K-1, out of range
 * (-1, K, 40) and ties of the rounding (2.5, 3.5). */
static void make_classes(hml__dataset *d, int64_t rows)
{
	static const float odd[] = { -1.0f, 8.0f, 40.0f, 2.5f, 3.5f, -0.4f };
	uint64_t seed = 11;

	make_rows(d, rows);
	for (int64_t r = 0; r < rows; r++) {
		float *x = d->x + r * 4;
		int c = (int)uniform(&seed, 0, 8);

		x[1] = r % 10 == 0 ? odd[(r / 10) % 6] : (float)c;
		x[3] = (float)(r % 3);
		d->y[r * 2] += (float)((c * 5) % 8) * 3.0f;
	}
}

TEST(mlp_categorical)
{
	hml__dataset d;
	hml__cg_model m;
	char pt[600];

	make_classes(&d, 500);
	agree_with(&d, "mlp:24x24:relu", "1:8,3:3", "mcat");
	agree_with(&d, "mlp:8:tanh", "3:3", "mcat1");
	/* the description read back holds the declaration and the encoded width */
	snprintf(pt, sizeof(pt), "%s.pt", tmp_path("mcat"));
	CHECK_OK(hml__export_model(pt, &m));
	CHECK(m.ncat == 2 && m.cat_feature[0] == 1 && m.cat_classes[0] == 8 &&
	      m.cat_feature[1] == 3 && m.cat_classes[1] == 3);
	CHECK(m.layers[0].in == 2 + 8 + 3 && hml__cg_model_in_size(&m) == 4);
	hml__cg_model_release(&m);
	hml__dataset_release(&d);
}

TEST(mlp_every_activation)
{
	static const char *const acts[] = { "relu", "tanh", "gelu", "silu", "sigmoid" };
	hml__dataset d;

	make_rows(&d, 300);
	for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		char arch[64], name[32];

		snprintf(arch, sizeof(arch), "mlp:32x16:%s", acts[i]);
		snprintf(name, sizeof(name), "mlp_%s", acts[i]);
		agree(&d, arch, name);
	}
	hml__dataset_release(&d);
}

TEST(cnn)
{
	hml__dataset d;

	make_fields(&d, 40, 2);
	agree(&d, "cnn:4x3:tanh:kernel=3", "cnn_chw");
	hml__dataset_release(&d);
	make_fields(&d, 40, 0);
	agree(&d, "cnn:3:gelu:kernel=5", "cnn_hw");
	hml__dataset_release(&d);
}

/* Fields [c, 9, 10] (c = 0: [9, 10] rows) in, a vector [3] or [1, 2] out:
 * where the field is brightest (row, column) and its mean, as the
 * particle filter's frames -> positions. */
static void make_spots(hml__dataset *d, int64_t rows, int c, int pair)
{
	const int64_t chw[] = { c, 9, 10 }, pos[] = { 1, 2 }, three[] = { 3 };
	uint64_t seed = 9;
	int64_t n = 9 * 10;

	dataset_zeros(d, rows, c ? 3 : 2, chw + !c, pair ? 2 : 1, pair ? pos : three);
	for (int64_t r = 0; r < rows; r++) {
		float *x = d->x + r * d->in_features, *y = d->y + r * d->out_features;
		int best = 0;
		double sum = 0;

		for (int64_t i = 0; i < d->in_features; i++) {
			x[i] = (float)uniform(&seed, 90, 120);
			sum += x[i];
			if (x[i] > x[best])
				best = (int)i;
		}
		y[0] = (float)(best % n / 10);
		y[1] = (float)(best % 10);
		if (!pair)
			y[2] = (float)(sum / (double)d->in_features);
	}
}

/* cnnvec: pooling that divides the map and one that drops a remainder,
 * with and without a hidden head layer, [C, H, W] and [H, W] rows; spatial
 * (the last conv layer's heatmaps read by their soft-argmax) after a
 * pooled layer that drops a remainder, and as the only layer. */
TEST(cnnvec)
{
	hml__dataset d;

	make_spots(&d, 40, 2, 0);
	agree(&d, "cnnvec:4x3:tanh:kernel=3:pool=2:head=8", "vec_chw");
	agree(&d, "cnnvec:3:silu:kernel=5:pool=3:head=0", "vec_pool3");
	agree(&d, "cnnvec:4x3:relu:kernel=3:pool=2:head=8:spatial", "vec_spatial2");
	hml__dataset_release(&d);
	make_spots(&d, 40, 0, 1);
	agree(&d, "cnnvec:4x4:gelu:kernel=3:pool=1:head=6", "vec_hw");
	agree(&d, "cnnvec:2:relu:kernel=1:pool=4:head=0:spatial", "vec_spatial1");
	hml__dataset_release(&d);
}

TEST(refused)
{
	hml__cg_model m;
	char path[600];
	const char *models = getenv("HML_TEST_MODELS");

	CHECK_FAILS(hml__export_model(tmp_path("none.pt"), &m), HML_ENOTFOUND, "none.pt");
	{
		/* the log loss: the model returns exp of its network, which C lacks */
		hml__dataset d;
		hml__train_options o = HML__TRAIN_OPTIONS_INIT;
		hml__train_result res;

		make_fields(&d, 64, 0);
		o.arch = "mlp:8", o.epochs = 1, o.batch = 32, o.threads = 1, o.loss = "log";
		CHECK_OK(hml__train(&d, &o, tmp_path("log.pt"), &res));
		CHECK_FAILS(hml__export_model(tmp_path("log.pt"), &m), HML_ENOTSUPPORTED,
		            "it returns exp of its network (trained with loss log)");
		hml__dataset_release(&d);
	}
	if (!models)
		return;
	snprintf(path, sizeof(path), "%s/affine.pt", models);
	CHECK_FAILS(hml__export_model(path, &m), HML_ENOTSUPPORTED,
	            "to C: it is neither an hml model (no hml_arch attribute) nor a "
	            "torch.nn.Sequential of Linear layers and activations");
	/* a Sequential scripted in Python: an MLP without normalisation */
	snprintf(path, sizeof(path), "%s/mlp_f32.pt", models);
	CHECK_OK(hml__export_model(path, &m));
	CHECK_STR(m.arch, "sequential:16:tanh");
	CHECK_EQ_INT(m.family, HML__CG_MLP);
	CHECK_EQ_INT(m.nlayers, 2);
	CHECK_EQ_INT(m.in_shape[0], 5);
	CHECK_EQ_INT(m.out_shape[0], 1);
	hml__cg_model_release(&m);
	snprintf(path, sizeof(path), "%s/mlp_f64.pt", models);
	CHECK_OK(hml__export_model(path, &m));
	hml__cg_model_release(&m);
	snprintf(path, sizeof(path), "%s/state_dict.pt", models);
	CHECK_FAILS(hml__export_model(path, &m), HML_EMODEL, "cannot read model");
}

int main(void)
{
	if (tmp_dir_make("export") < 0)
		return 1;
	RUN(mlp_every_activation);
	RUN(mlp_categorical);
	RUN(cnn);
	RUN(cnnvec);
	RUN(refused);
	tmp_dir_remove();
	return check_report();
}
