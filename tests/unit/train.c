/*
 * tests/unit/train.c - the libtorch training shim on in-memory data sets:
 * an MLP and a CNN learn, metrics are filled in, training is deterministic,
 * the saved file computes what training computed (run through the
 * runtime's own inference, runtime/loader/loader.h, as an application runs
 * it), and every bad spec or option fails with HML_EINVALID and a precise
 * message (the spec grammar alone: tests/unit/arch.c).
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
#include "core/util.h"
#include "fixtures.h"
#include "loader/loader.h"
#include "train/dataset.h"
#include "train/train.h"

/*
 * The TorchScript file at `path` on `rows` rows of x ([rows, *in_shape],
 * float32), through the runtime's inference (the libtorch plugin): its
 * outputs, as float, into y (room for y_size), and the per-row output count
 * into *per_row (may be NULL). Fails with HML_ESHAPE when y is too small.
 */
/* Through the runtime's inference, the same plugin as applications. */
#define predict hml__model_predict_f32

/* y = sin(x0) + sin(x1) + sin(x2), x uniform in [-2, 2]^3. */
static void make_sines(hml__dataset *d, int64_t rows, uint64_t seed)
{
	static const int64_t in[] = { 3 }, out[] = { 1 };

	dataset_zeros(d, rows, 1, in, 1, out);
	for (int64_t r = 0; r < rows; r++) {
		double s = 0;

		for (int k = 0; k < 3; k++) {
			double v = uniform(&seed, -2, 2);
			d->x[r * 3 + k] = (float)v;
			s += sin(v);
		}
		d->y[r] = (float)s;
	}
}

/* One explicit step of the heat equation on an 8x8 field with zero
 * boundaries: y = x + 0.2 * laplacian(x). Rows [1, 8, 8] or [8, 8]. */
#define FIELD 8
static void heat_step(const float *x, float *y)
{
	for (int i = 0; i < FIELD; i++) {
		for (int j = 0; j < FIELD; j++) {
			float c = x[i * FIELD + j];
			float n = i > 0 ? x[(i - 1) * FIELD + j] : 0;
			float s = i < FIELD - 1 ? x[(i + 1) * FIELD + j] : 0;
			float w = j > 0 ? x[i * FIELD + j - 1] : 0;
			float e = j < FIELD - 1 ? x[i * FIELD + j + 1] : 0;
			y[i * FIELD + j] = c + 0.2f * (n + s + w + e - 4 * c);
		}
	}
}

static void make_heat(hml__dataset *d, int64_t rows, int with_channel, uint64_t seed)
{
	static const int64_t chw[] = { 1, FIELD, FIELD }, hw[] = { FIELD, FIELD };

	if (with_channel)
		dataset_zeros(d, rows, 3, chw, 3, chw);
	else
		dataset_zeros(d, rows, 2, hw, 2, hw);
	for (int64_t r = 0; r < rows; r++) {
		float *x = d->x + r * FIELD * FIELD;

		for (int k = 0; k < FIELD * FIELD; k++)
			x[k] = (float)uniform(&seed, 0, 1);
		heat_step(x, d->y + r * FIELD * FIELD);
	}
}

static double std_of(const float *v, int64_t n)
{
	double m = 0, s = 0;

	for (int64_t i = 0; i < n; i++)
		m += v[i];
	m /= (double)n;
	for (int64_t i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return sqrt(s / (double)n);
}

static int files_equal(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca, cb, same = fa && fb;

	while (same) {
		ca = fgetc(fa);
		cb = fgetc(fb);
		if (ca != cb)
			same = 0;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static hml__train_options quick(const char *arch, int epochs)
{
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;

	o.arch = arch;
	o.epochs = epochs;
	o.batch = 64;
	o.threads = 1;
	o.lr = 3e-3;
	o.infer_batch = 512;
	return o;
}

/* --- learning ------------------------------------------------------------ */

TEST(mlp_learns_and_fills_the_metrics)
{
	hml__dataset d;
	hml__train_options o = quick("mlp:32x32:tanh", 40);
	hml__train_result r;
	const char *path = tmp_path("sines.pt");
	float *pred;
	double sd, sse = 0;
	int64_t per_row = 0;

	make_sines(&d, 2000, 1);
	sd = std_of(d.y, d.rows);
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK_STR(r.arch, "mlp:32x32:tanh");
	CHECK_EQ_INT(r.params, 3 * 32 + 32 + 32 * 32 + 32 + 32 + 1);
	CHECK_EQ_INT(r.n_train, 1600);
	CHECK_EQ_INT(r.n_val, 200);
	CHECK_EQ_INT(r.n_test, 200);
	CHECK(r.epochs_run >= 1 && r.epochs_run <= 40);
	CHECK(r.best_epoch >= 1 && r.best_epoch <= r.epochs_run);
	CHECK(!r.interrupted);
	CHECK(r.test_rmse < 0.1 * sd);
	CHECK(r.val_rmse < 0.1 * sd);
	CHECK(r.test_mae > 0 && r.test_mae <= r.test_rmse);
	CHECK(r.test_max_abs >= r.test_rmse);
	/* A constant (the training mean) misses by about the outputs' spread;
	 * the model by a tenth of it. */
	CHECK(r.test_rmse_const > 0.8 * sd && r.test_rmse_const < 1.25 * sd);
	CHECK(r.test_rmse < 0.1 * r.test_rmse_const);
	CHECK(r.train_seconds > 0 && r.train_step_seconds > 0 && r.train_step_seconds <= r.train_seconds);
	/* 1600 rows at batch 64: 25 steps a pass, so an epoch is 3 passes
	 * (HML__TRAIN_MIN_EPOCH_STEPS 64) */
	CHECK_NEAR(r.samples_per_second, 3 * 1600.0 * r.epochs_run / r.train_step_seconds, 1e-6 * r.samples_per_second);
	CHECK(r.latency_s_per_sample > 0 && r.latency_s_per_sample < 1e-3);
	CHECK_EQ_INT(r.latency_batch, 512);
	CHECK_NEAR(r.final_lr, 3e-3, 3e-3);
	/* The saved module computes what training computed (same operations,
	 * so the same numbers). */
	CHECK(r.forward_max_diff <= 1e-6);

	/* The file on its own: reloaded and run on every row. */
	pred = malloc((size_t)d.rows * sizeof(float));
	CHECK_OK(predict(path, d.x, d.rows, d.in_ndim, d.in_shape, pred, d.rows, &per_row));
	CHECK_EQ_INT(per_row, 1);
	for (int64_t i = 0; i < d.rows; i++)
		sse += (pred[i] - d.y[i]) * (pred[i] - d.y[i]);
	CHECK(sqrt(sse / (double)d.rows) < 0.1 * sd);
	free(pred);
	hml__dataset_release(&d);
}

TEST(deterministic_for_a_seed)
{
	hml__dataset d;
	hml__train_options o = quick("mlp:16x16:relu:dropout=0.05", 5);
	hml__train_result a, b, c;
	const char *pa = tmp_path("det-a.pt"), *pb = tmp_path("det-b.pt"), *pc = tmp_path("det-c.pt");

	make_sines(&d, 1000, 2);
	for (int threads = 1; threads <= 2; threads++) {
		o.threads = threads;
		o.seed = 7;
		CHECK_OK(hml__train(&d, &o, pa, &a));
		CHECK_OK(hml__train(&d, &o, pb, &b));
		CHECK(a.val_rmse == b.val_rmse);
		CHECK(a.test_rmse == b.test_rmse);
		CHECK(a.test_max_abs == b.test_max_abs);
		CHECK_EQ_INT(a.best_epoch, b.best_epoch);
		CHECK(files_equal(pa, pb));
		o.seed = 8;
		CHECK_OK(hml__train(&d, &o, pc, &c));
		CHECK(c.val_rmse != a.val_rmse);
		CHECK(!files_equal(pa, pc));
	}
	hml__dataset_release(&d);
}

static void check_heat(int with_channel)
{
	hml__dataset d, fresh;
	hml__train_options o = quick("cnn:8:tanh:kernel=3", 60);
	hml__train_result r;
	const char *path = tmp_path(with_channel ? "heat-chw.pt" : "heat-hw.pt");
	float *pred;
	double sd, sse = 0;
	int64_t per_row = 0, n;

	make_heat(&d, 600, with_channel, 3);
	sd = std_of(d.y, d.rows * d.out_features);
	o.batch = 32;
	o.lr = 1e-2;
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK_STR(r.arch, "cnn:8:tanh:kernel=3");
	CHECK_EQ_INT(r.params, 1 * 8 * 9 + 8 + 8 * 1 * 9 + 1);
	CHECK(r.test_rmse < 0.1 * sd);
	CHECK(r.forward_max_diff <= 1e-6);
	CHECK(r.latency_s_per_sample > 0);

	/* Fields it has never seen, through the saved file. */
	make_heat(&fresh, 50, with_channel, 99);
	n = fresh.rows * fresh.out_features;
	pred = malloc((size_t)n * sizeof(float));
	CHECK_OK(predict(path, fresh.x, fresh.rows, fresh.in_ndim, fresh.in_shape,
	                            pred, n, &per_row));
	CHECK_EQ_INT(per_row, FIELD * FIELD);
	for (int64_t i = 0; i < n; i++)
		sse += (pred[i] - fresh.y[i]) * (pred[i] - fresh.y[i]);
	CHECK(sqrt(sse / (double)n) < 0.1 * sd);
	free(pred);
	hml__dataset_release(&fresh);
	hml__dataset_release(&d);
}

TEST(cnn_learns_a_heat_stencil_on_chw_rows)
{
	check_heat(1);
}

TEST(cnn_learns_a_heat_stencil_on_hw_rows)
{
	check_heat(0);
}

/* Frames in, a position out (the particle filter's shape, small): a
 * 3 x 3 bright square on a noisy [2, 12, 12] field (the same spot in both
 * channels), output its centre (row, column) as [1, 2]. */
static void make_spots(hml__dataset *d, int64_t rows, uint64_t seed)
{
	static const int64_t in[] = { 2, 12, 12 }, out[] = { 1, 2 };

	dataset_zeros(d, rows, 3, in, 2, out);
	for (int64_t r = 0; r < rows; r++) {
		float *x = d->x + r * 288;
		int cy = 1 + (int)uniform(&seed, 0, 10), cx = 1 + (int)uniform(&seed, 0, 10);

		for (int k = 0; k < 288; k++)
			x[k] = (float)uniform(&seed, 0, 0.2);
		for (int c = 0; c < 2; c++)
			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++)
					x[c * 144 + (cy + dy) * 12 + cx + dx] += 1.0f;
		d->y[2 * r] = (float)cy;
		d->y[2 * r + 1] = (float)cx;
	}
}

/* cnnvec: conv, pool, flatten, head; the saved file computes what
 * training computed, the script forward trains the same model, and the
 * runtime's inference finds spots it has never seen. */
TEST(cnnvec_finds_a_spot)
{
	hml__dataset d, fresh;
	hml__train_options o = quick("cnnvec:8x8:relu:kernel=3:pool=2:head=32", 60);
	hml__train_result r, script;
	const char *path = tmp_path("spots.pt");
	float pred[2 * 50];
	double sse = 0;
	int64_t per_row = 0;

	make_spots(&d, 1000, 5);
	o.batch = 32;
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK_STR(r.arch, "cnnvec:8x8:relu:kernel=3:pool=2:head=32");
	/* conv 2->8, conv 8->8, head 8*3*3 -> 32, out 32 -> 2 */
	CHECK_EQ_INT(r.params, 2 * 8 * 9 + 8 + 8 * 8 * 9 + 8 + 72 * 32 + 32 + 32 * 2 + 2);
	CHECK(r.forward_max_diff <= 1e-5);
	CHECK(r.test_rmse < 0.5);   /* pixels; the spots' centres span 1..10 */
	CHECK(r.test_rmse_const > 4 * r.test_rmse);   /* a constant misses by their spread */

	make_spots(&fresh, 50, 77);
	CHECK_OK(predict(path, fresh.x, fresh.rows, fresh.in_ndim, fresh.in_shape, pred, 100, &per_row));
	CHECK_EQ_INT(per_row, 2);
	for (int64_t i = 0; i < 100; i++)
		sse += (pred[i] - fresh.y[i]) * (pred[i] - fresh.y[i]);
	CHECK(sqrt(sse / 100.0) < 0.5);

	o.epochs = 3;
	CHECK_OK(hml__train(&d, &o, path, &r));
	setenv("HML_TRAIN_FORWARD", "script", 1);
	CHECK_OK(hml__train(&d, &o, path, &script));
	unsetenv("HML_TRAIN_FORWARD");
	CHECK(script.forward_max_diff <= 1e-5);
	CHECK_NEAR(script.val_rmse, r.val_rmse, 1e-3 * r.val_rmse);
	hml__dataset_release(&fresh);
	hml__dataset_release(&d);
}

TEST(mlp_on_multidimensional_rows_and_constant_features)
{
	static const int64_t in[] = { 2, 3 }, out[] = { 2 };
	hml__dataset d;
	hml__train_options o = quick("mlp:16", 3);
	hml__train_result r;
	const char *path = tmp_path("multi.pt");
	uint64_t seed = 5;
	float y[2 * 10];
	int64_t per_row = 0;

	dataset_zeros(&d, 300, 2, in, 1, out);
	for (int64_t i = 0; i < d.rows; i++) {
		for (int k = 0; k < 6; k++)
			d.x[i * 6 + k] = k == 4 ? 7.0f : (float)uniform(&seed, 0, 1);
		d.y[i * 2] = d.x[i * 6] + d.x[i * 6 + 1];
		d.y[i * 2 + 1] = 3.0f;   /* a constant output too */
	}
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK_STR(r.arch, "mlp:16:relu");
	CHECK(isfinite(r.val_rmse) && isfinite(r.test_rmse));
	CHECK_OK(predict(path, d.x, 10, d.in_ndim, d.in_shape, y, 20, &per_row));
	CHECK_EQ_INT(per_row, 2);
	for (int i = 0; i < 10; i++)
		CHECK_NEAR(y[2 * i + 1], 3.0, 1e-3);
	hml__dataset_release(&d);
}

/* --- the training loop's controls ---------------------------------------- */

typedef struct progress_log {
	int calls, last_epoch, stop_at;
	int ordered;
} progress_log;

static int on_progress(void *payload, int epoch, int epochs, double loss, double val)
{
	progress_log *p = payload;

	p->calls++;
	if (epoch != p->last_epoch + 1 || !isfinite(loss) || !isfinite(val) || epochs <= 0)
		p->ordered = 0;
	p->last_epoch = epoch;
	return p->stop_at && epoch >= p->stop_at;
}

TEST(progress_and_interrupt_keep_the_best_so_far)
{
	hml__dataset d;
	hml__train_options o = quick("mlp:8", 50);
	hml__train_result r;
	progress_log log = { 0, 0, 3, 1 };
	const char *path = tmp_path("interrupted.pt");
	float y[4];

	make_sines(&d, 500, 4);
	o.progress = on_progress;
	o.payload = &log;
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK(r.interrupted);
	CHECK_EQ_INT(r.epochs_run, 3);
	CHECK_EQ_INT(log.calls, 3);
	CHECK(log.ordered);
	CHECK(exists(path));
	CHECK_OK(predict(path, d.x, 4, d.in_ndim, d.in_shape, y, 4, NULL));
	hml__dataset_release(&d);
}

/* Runs of the heat step in place: `runs` runs of `calls` calls on [1, 8, 8]
 * rows, each call's input the previous call's output, with the run and
 * call numbers the collector records. */
static void make_heat_runs(hml__dataset *d, int64_t runs, int64_t calls, uint64_t seed)
{
	static const int64_t chw[] = { 1, FIELD, FIELD };
	const int64_t cells = FIELD * FIELD;

	dataset_zeros(d, runs * calls, 3, chw, 3, chw);
	d->run = malloc((size_t)d->rows * sizeof(int64_t));
	d->call = malloc((size_t)d->rows * sizeof(int64_t));
	for (int64_t r = 0, i = 0; r < runs; r++)
		for (int64_t c = 0; c < calls; c++, i++) {
			float *x = d->x + i * cells;

			for (int64_t k = 0; k < cells; k++)
				x[k] = c == 0 ? (float)uniform(&seed, 0, 1) : d->y[(i - 1) * cells + k];
			heat_step(x, d->y + i * cells);
			d->run[i] = r;
			d->call[i] = c;
		}
}

typedef struct val_log {
	int epochs;
	double val[16];
} val_log;

static int log_val(void *payload, int epoch, int epochs, double loss, double val)
{
	val_log *p = payload;

	(void)epochs;
	(void)loss;
	if (epoch >= 1 && epoch <= 16)
		p->val[epoch - 1] = val;
	p->epochs = epoch;
	return 0;
}

/* Rollout R > 1: the split deals whole windows of R calls, and the error
 * the epochs are judged by (the progress callback's) is the R-step one:
 * its smallest is the best epoch's, and the card's val_rollout_rmse. */
TEST(rollout_chooses_the_epoch_by_the_r_step_error)
{
	hml__dataset d;
	hml__train_options o = quick("cnn:4:tanh:kernel=3:residual", 8);
	hml__train_result r, one;
	val_log log = { 0, { 0 } };
	int best = 0;

	make_heat_runs(&d, 4, 12, 21);
	o.batch = 8;
	o.patience = 0;
	o.rollout = 3;
	o.progress = log_val;
	o.payload = &log;
	CHECK_OK(hml__train(&d, &o, tmp_path("rollout3.pt"), &r));
	CHECK_EQ_INT(log.epochs, 8);
	for (int e = 1; e < 8; e++)
		if (log.val[e] < log.val[best])
			best = e;
	CHECK_EQ_INT(r.best_epoch, best + 1);
	CHECK(r.val_rollout_windows >= 1);
	CHECK_NEAR(log.val[best], r.val_rollout_rmse, 1e-6 * r.val_rollout_rmse);
	CHECK(fabs(r.val_rollout_rmse - r.val_rmse) > 1e-6 * r.val_rmse);
	CHECK(isfinite(r.val_rollout_mape));
	/* whole blocks of 3 calls: 48 rows, 10% is 4.8 rows, 2 blocks */
	CHECK_EQ_INT(r.n_val, 6);
	CHECK_EQ_INT(r.n_test, 6);
	CHECK_EQ_INT(r.n_train, 36);
	/* one call at a time: the row split, no R-step error */
	o.rollout = 1;
	o.progress = NULL;
	CHECK_OK(hml__train(&d, &o, tmp_path("rollout1.pt"), &one));
	CHECK_EQ_INT(one.n_val, 5);
	CHECK_EQ_INT(one.val_rollout_windows, 0);
	hml__dataset_release(&d);
}

/* Outputs that are noise: validation never improves for long. */
static void make_noise(hml__dataset *d, int64_t rows)
{
	static const int64_t in[] = { 2 }, out[] = { 1 };
	uint64_t seed = 11;

	dataset_zeros(d, rows, 1, in, 1, out);
	for (int64_t i = 0; i < rows; i++) {
		d->x[2 * i] = (float)uniform(&seed, 0, 1);
		d->x[2 * i + 1] = (float)uniform(&seed, 0, 1);
		d->y[i] = (float)uniform(&seed, 0, 1);
	}
}

TEST(early_stopping_and_schedules)
{
	hml__dataset d;
	hml__train_options o = quick("mlp:32x32", 300);
	hml__train_result r;
	const char *path = tmp_path("sched.pt");

	make_noise(&d, 400);
	o.lr = 1e-2;
	o.patience = 4;
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK(r.stopped_early);
	CHECK(r.epochs_run < 300);
	CHECK_EQ_INT(r.best_epoch, r.epochs_run - 4);
	/* plateau: halved after patience/2 = 2 flat epochs */
	CHECK(r.final_lr < 1e-2);

	o.schedule = "none";
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK(r.final_lr == 1e-2);

	o.schedule = "cosine";
	o.patience = 0;
	o.epochs = 10;
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK(!r.stopped_early);
	CHECK_EQ_INT(r.epochs_run, 10);
	CHECK_NEAR(r.final_lr, 1e-2 * 0.5 * (1 + cos(M_PI * 9 / 10)), 1e-12);
	/* Under cosine the patience stops nothing before the rate is below a
	 * tenth of its start: epoch 33 of 40 (0.5 (1 + cos(pi 32 / 40)) < 0.1),
	 * however flat the noise's validation error is before. */
	o.patience = 4;
	o.epochs = 40;
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK(r.epochs_run >= 33 && r.epochs_run <= 40);
	CHECK(r.final_lr < 0.1 * 1e-2);
	CHECK(r.best_epoch < 33 ? r.stopped_early || r.epochs_run == 40 : 1);

	o.schedule = "plateau";
	o.optimizer = "adamw";
	o.clip = 0;
	o.epochs = 3;
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK_EQ_INT(r.epochs_run, 3);

	o.max_seconds = 1e-9;
	o.epochs = 100;
	CHECK_OK(hml__train(&d, &o, path, &r));
	CHECK_EQ_INT(r.epochs_run, 1);
	CHECK(r.out_of_time);
	hml__dataset_release(&d);
}

TEST(script_forward_trains_the_same_model)
{
	hml__dataset d;
	hml__train_options o = quick("mlp:16x16:gelu", 4);
	hml__train_result eager, script;
	const char *path = tmp_path("script.pt");

	make_sines(&d, 800, 6);
	CHECK_OK(hml__train(&d, &o, path, &eager));
	setenv("HML_TRAIN_FORWARD", "script", 1);
	CHECK_OK(hml__train(&d, &o, path, &script));
	CHECK(script.forward_max_diff <= 1e-6);
	CHECK_NEAR(script.val_rmse, eager.val_rmse, 1e-3 * eager.val_rmse);
	setenv("HML_TRAIN_FORWARD", "fast", 1);
	CHECK_FAILS(hml__train(&d, &o, path, &script), HML_EINVALID,
	            "HML_TRAIN_FORWARD is 'fast'; expected eager or script");
	unsetenv("HML_TRAIN_FORWARD");
	hml__dataset_release(&d);
}

/* The MLP's hand-written backward (MlpStep) against autograd (the script
 * forward): per activation, the two trained models predict alike. */
TEST(hand_written_backward_matches_autograd)
{
	static const char *const archs[] = {
		"mlp:16x8:relu", "mlp:16x8:tanh", "mlp:16x8:gelu", "mlp:16x8:silu",
		"mlp:16x8:sigmoid", "mlp:12:tanh",
	};
	hml__dataset d;
	const char *pa = tmp_path("manual.pt"), *pb = tmp_path("autograd.pt");
	int64_t n, per_row;
	float *ya, *yb;

	make_sines(&d, 600, 11);
	n = 64 * d.out_features;
	ya = malloc((size_t)n * sizeof(float));
	yb = malloc((size_t)n * sizeof(float));
	for (size_t k = 0; k < sizeof(archs) / sizeof(archs[0]); k++) {
		hml__train_options o = quick(archs[k], 3);
		hml__train_result ra, rb;
		double worst = 0, scale = 0;

		o.batch = 50;   /* a short last batch too */
		unsetenv("HML_TRAIN_FORWARD");
		CHECK_OK(hml__train(&d, &o, pa, &ra));
		setenv("HML_TRAIN_FORWARD", "script", 1);
		CHECK_OK(hml__train(&d, &o, pb, &rb));
		unsetenv("HML_TRAIN_FORWARD");
		CHECK_OK(predict(pa, d.x, 64, d.in_ndim, d.in_shape, ya, n, &per_row));
		CHECK_OK(predict(pb, d.x, 64, d.in_ndim, d.in_shape, yb, n, &per_row));
		for (int64_t i = 0; i < n; i++) {
			worst = fmax(worst, fabs((double)ya[i] - (double)yb[i]));
			scale = fmax(scale, fabs((double)yb[i]));
		}
		if (!(worst <= 1e-4 * fmax(scale, 1.0)))
			fprintf(stderr, "%s: predictions differ by %g (scale %g)\n", archs[k], worst, scale);
		CHECK(worst <= 1e-4 * fmax(scale, 1.0));
		CHECK_NEAR(ra.val_rmse, rb.val_rmse, 1e-4 * rb.val_rmse);
	}
	free(ya);
	free(yb);
	hml__dataset_release(&d);
}

/* y = exp(1.5 x0 + 0.5 sin(x1) + 0.3 x2), x uniform in [-2, 2]^3: positive
 * outputs spanning about three decades. */
static void make_decades(hml__dataset *d, int64_t rows, uint64_t seed)
{
	make_sines(d, rows, seed);
	for (int64_t r = 0; r < rows; r++) {
		const float *x = d->x + r * 3;

		d->y[r] = (float)exp(1.5 * x[0] + 0.5 * sin(x[1]) + 0.3 * x[2]);
	}
}

/* The relative, mae and log losses: the hand-written backward agrees with
 * autograd's, and the log model returns the application's units (its exp
 * inside, checked by hml__train against the eager forward). */
TEST(losses_hand_written_match_autograd)
{
	static const char *const losses[] = { "mae", "relative", "log" };
	hml__dataset d;
	const char *pa = tmp_path("loss-manual.pt"), *pb = tmp_path("loss-autograd.pt");
	float ya[64], yb[64];
	int64_t per_row;

	make_decades(&d, 600, 12);
	for (size_t k = 0; k < sizeof(losses) / sizeof(losses[0]); k++) {
		hml__train_options o = quick("mlp:16x8:tanh", 3);
		hml__train_result ra, rb;
		double worst = 0, scale = 0;

		o.batch = 50;
		o.loss = losses[k];
		o.metric = "mape";
		unsetenv("HML_TRAIN_FORWARD");
		CHECK_OK(hml__train(&d, &o, pa, &ra));
		setenv("HML_TRAIN_FORWARD", "script", 1);
		CHECK_OK(hml__train(&d, &o, pb, &rb));
		unsetenv("HML_TRAIN_FORWARD");
		CHECK_OK(predict(pa, d.x, 64, d.in_ndim, d.in_shape, ya, 64, &per_row));
		CHECK_OK(predict(pb, d.x, 64, d.in_ndim, d.in_shape, yb, 64, &per_row));
		for (int64_t i = 0; i < 64; i++) {
			worst = fmax(worst, fabs((double)ya[i] - (double)yb[i]));
			scale = fmax(scale, fabs((double)yb[i]));
			if (k == 2)
				CHECK(ya[i] > 0);
		}
		if (!(worst <= 1e-4 * fmax(scale, 1.0)))
			fprintf(stderr, "%s: predictions differ by %g (scale %g)\n", losses[k], worst, scale);
		CHECK(worst <= 1e-4 * fmax(scale, 1.0));
		CHECK(isfinite(ra.val_mape) && isfinite(ra.test_mape));
		CHECK_NEAR(ra.val_mape, rb.val_mape, 1e-3 * rb.val_mape);
	}
	hml__dataset_release(&d);
}

/* A small data set trains: 400 training rows at batch 256 are 2 steps a
 * pass, so an epoch is 32 passes (HML__TRAIN_MIN_EPOCH_STEPS 64); before,
 * 2 steps an epoch, the patience and the plateau schedule stopped such a
 * set after a few dozen steps. The model fits, and the rows processed
 * count every pass. */
TEST(small_data_sets_make_whole_epochs)
{
	hml__dataset d;
	hml__train_options o = quick("mlp:32x32:tanh", 25);
	hml__train_result r;
	double sd;

	make_sines(&d, 500, 4);
	sd = std_of(d.y, d.rows);
	o.batch = 256;
	CHECK_OK(hml__train(&d, &o, tmp_path("small.pt"), &r));
	CHECK_EQ_INT(r.n_train, 400);
	CHECK_NEAR(r.samples_per_second, 32 * 400.0 * r.epochs_run / r.train_step_seconds,
	           1e-6 * r.samples_per_second);
	if (!(r.test_rmse < 0.1 * sd))
		fprintf(stderr, "small data set: test RMSE %g, sd %g, epochs %d\n", r.test_rmse, sd,
		        r.epochs_run);
	CHECK(r.test_rmse < 0.1 * sd);
	hml__dataset_release(&d);
}

/* On outputs spanning decades, the relative and (far more) the log loss
 * give a lower MAPE than the MSE at the same epochs and seed; log refuses
 * outputs that are not positive. */
TEST(relative_and_log_losses_lower_the_mape)
{
	static const char *const losses[] = { "mse", "relative", "log" };
	hml__dataset d;
	hml__train_result r[3];
	const char *path = tmp_path("decades.pt");

	make_decades(&d, 2000, 13);
	for (int k = 0; k < 3; k++) {
		/* 10 epochs of 3 passes (HML__TRAIN_MIN_EPOCH_STEPS): the 750
		 * steps these figures were measured at, as 30 epochs of one pass */
		hml__train_options o = quick("mlp:32x32:tanh", 10);

		o.loss = losses[k];
		o.metric = "mape";
		CHECK_OK(hml__train(&d, &o, path, &r[k]));
	}
	/* measured: mse 30.9, relative 18.6, log 1.5 (per cent) */
	if (!(r[1].test_mape < 0.8 * r[0].test_mape && r[2].test_mape < 0.2 * r[0].test_mape))
		fprintf(stderr, "test MAPE: mse %g, relative %g, log %g\n", r[0].test_mape,
		        r[1].test_mape, r[2].test_mape);
	CHECK(r[1].test_mape < 0.8 * r[0].test_mape);
	CHECK(r[2].test_mape < 0.2 * r[0].test_mape);
	d.y[5] = -1;
	{
		hml__train_options o = quick("mlp:8", 1);

		o.loss = "log";
		CHECK_FAILS(hml__train(&d, &o, path, &r[0]), HML_EINVALID,
		            "loss 'log' needs positive outputs; the smallest is -1");
		o.loss = "relative", o.metric = "mape", o.mape_floor = 1e9;
		CHECK_FAILS(hml__train(&d, &o, path, &r[0]), HML_EINVALID,
		            "no validation output reaches the MAPE floor 1e+09");
	}
	hml__dataset_release(&d);
}

TEST(every_activation_compiles_and_runs)
{
	static const char *const archs[] = {
		"mlp:8:relu", "mlp:8:tanh", "mlp:8:gelu", "mlp:8:silu", "mlp:8:sigmoid",
		"mlp:8,4:silu:dropout=0.2", "mlp",
	};
	hml__dataset d;
	hml__train_result r;
	const char *path = tmp_path("acts.pt");

	make_sines(&d, 200, 8);
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		hml__train_options o = quick(archs[i], 1);

		CHECK_OK(hml__train(&d, &o, path, &r));
		CHECK(r.forward_max_diff <= 1e-6);
	}
	CHECK_STR(r.arch, "mlp:64x64:relu");
	hml__dataset_release(&d);
}

/* --- bad input ------------------------------------------------------------ */

TEST(bad_arch_specs)
{
	static const struct { const char *arch, *needle; } cases[] = {
		{ "foo:64", "unknown model family 'foo' in arch 'foo:64' (families: cnn, cnnvec, mlp)" },
		{ "", "arch '' names no model family" },
		{ "mlp:64:foo", "unknown activation 'foo' in arch 'mlp:64:foo' (known: relu, tanh, gelu, silu, sigmoid)" },
		{ "mlp:64xfoo:relu", "bad widths '64xfoo' in arch 'mlp:64xfoo:relu'" },
		{ "mlp:0x64", "bad widths '0x64'" },
		{ "mlp:64x", "bad widths '64x'" },
		{ "mlp:99999", "width 99999 in arch 'mlp:99999' is outside 1 to 16384" },
		{ "mlp::relu", "empty field in arch 'mlp::relu'" },
		{ "mlp:64:relu:tanh", "arch 'mlp:64:relu:tanh' gives the activation twice" },
		{ "mlp:64:8", "arch 'mlp:64:8' gives the widths twice" },
		{ "mlp:64:relu:dropout=1.5", "bad dropout '1.5' in arch 'mlp:64:relu:dropout=1.5'" },
		{ "mlp:64:relu:dropout=x", "bad dropout 'x'" },
		{ "mlp:64:relu:kernel=3", "unknown option 'kernel' in arch 'mlp:64:relu:kernel=3' (mlp takes: dropout)" },
		{ "cnn:8:relu:kernel=4", "bad kernel '4' in arch 'cnn:8:relu:kernel=4' (expected an odd size from 1 to 15)" },
		{ "cnn:8:relu:stride=2", "unknown option 'stride' in arch 'cnn:8:relu:stride=2' (cnn takes: dropout, kernel)" },
	};
	hml__dataset d;
	hml__train_result r;
	const char *path = tmp_path("bad.pt");

	make_sines(&d, 100, 9);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hml__train_options o = quick(cases[i].arch, 1);

		CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, cases[i].needle);
		CHECK_FAILS(hml__train(&d, &o, path, &r), HML_EINVALID, cases[i].needle);
		CHECK(!exists(path));
	}
	hml__dataset_release(&d);
}

TEST(bad_options)
{
	hml__dataset d;
	hml__train_result r;
	const char *path = tmp_path("bad-opt.pt");
	hml__train_options o;

	make_sines(&d, 100, 10);
#define BAD(field, value, needle) do { o = quick("mlp:8", 1); o.field = value; \
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, needle); \
	CHECK_FAILS(hml__train(&d, &o, path, &r), HML_EINVALID, needle); } while (0)
	BAD(epochs, 0, "epochs must be positive, not 0");
	BAD(batch, -5, "batch must be positive, not -5");
	BAD(lr, 0, "learning rate must be positive, not 0");
	BAD(lr, NAN, "learning rate must be positive, not nan");
	BAD(weight_decay, -0.5, "weight decay must be 0 or more, not -0.5");
	BAD(optimizer, "sgd", "unknown optimizer 'sgd' (known: adam, adamw)");
	BAD(schedule, "step", "unknown schedule 'step' (known: plateau, cosine, none)");
	BAD(patience, -1, "patience must be 0 (off) or more, not -1");
	BAD(clip, -1, "gradient clipping norm must be 0 (off) or more, not -1");
	BAD(threads, -2, "threads must be from 0 (libtorch's default) to ");
	BAD(threads, 100000, "(16 per online core), not 100000");
	BAD(val_fraction, 0, "validation fraction must be between 0 and 1, not 0");
	BAD(val_fraction, 1, "validation fraction must be between 0 and 1, not 1");
	BAD(test_fraction, 1.5, "test fraction must be between 0 and 1, not 1.5");
	BAD(test_fraction, 0.9, "validation and test fractions (0.1 + 0.9) leave no rows for training");
	BAD(infer_batch, -1, "inference batch must be positive, not -1");
	BAD(max_seconds, -1, "time limit must be 0 (none) or more, not -1");
#undef BAD
	CHECK(!exists(path));
	hml__dataset_release(&d);
}

TEST(bad_data)
{
	static const int64_t row[] = { 5 }, one[] = { 1 }, field[] = { 1, 8, 8 }, small[] = { 1, 4, 4 };
	hml__dataset d;
	hml__train_result r;
	hml__train_options o = quick("mlp:8", 1);
	const char *path = tmp_path("bad-data.pt");

	/* too few rows for three splits */
	make_sines(&d, 4, 12);
	CHECK_FAILS(hml__train(&d, &o, path, &r), HML_EINVALID,
	            "4 rows are too few for a train/validation/test split (fractions 0.1 and 0.1)");
	hml__dataset_release(&d);

	/* NaN in the data */
	make_sines(&d, 100, 12);
	d.x[7] = NAN;
	d.y[3] = INFINITY;
	CHECK_FAILS(hml__train(&d, &o, path, &r), HML_EINVALID,
	            "the data hold 2 NaN/Inf values (1 in inputs, 1 in outputs)");
	hml__dataset_release(&d);

	/* a CNN on row data */
	dataset_zeros(&d, 50, 1, row, 1, one);
	o.arch = "cnn:16x16:relu";
	CHECK_FAILS(hml__train(&d, &o, path, &r), HML_EINVALID,
	            "arch 'cnn:16x16:relu:kernel=3' needs whole-field rows [C,H,W] or [H,W]; region rows are [5]");
	hml__dataset_release(&d);

	/* a CNN whose outputs are not whole fields */
	dataset_zeros(&d, 50, 3, field, 1, one);
	CHECK_FAILS(hml__train(&d, &o, path, &r), HML_EINVALID,
	            "arch 'cnn:16x16:relu:kernel=3' needs whole-field outputs [C,H,W] or [H,W]; region outputs are [1]");
	hml__dataset_release(&d);

	/* a CNN that would have to change the field's size */
	dataset_zeros(&d, 50, 3, field, 3, small);
	CHECK_FAILS(hml__train(&d, &o, path, &r), HML_EINVALID,
	            "arch 'cnn:16x16:relu:kernel=3' keeps the field's size, but the region maps [1, 8, 8] to [1, 4, 4]");
	hml__dataset_release(&d);
	CHECK(!exists(path));

	/* training that diverges at once */
	make_sines(&d, 200, 13);
	o.arch = "mlp:8";
	o.lr = 1e30;
	o.clip = 0;
	CHECK_FAILS(hml__train(&d, &o, path, &r), HML_EINVALID, "training diverged");
	CHECK(!exists(path));
	hml__dataset_release(&d);
}

TEST(unwritable_output_path)
{
	hml__dataset d;
	hml__train_result r;
	hml__train_options o = quick("mlp:8", 1);

	make_sines(&d, 100, 14);
	CHECK_FAILS(hml__train(&d, &o, "/nonexistent-dir/m.pt", &r), HML_EIO,
	            "cannot write model '/nonexistent-dir/m.pt': No such file or directory");
	CHECK_FAILS(hml__train(&d, &o, tmpdir, &r), HML_EIO, "Is a directory");
	CHECK_FAILS(predict("/nonexistent-dir/m.pt", d.x, 1, 1, d.in_shape, d.y, 1, NULL),
	            HML_ENOTFOUND, "cannot open model '/nonexistent-dir/m.pt'");
	hml__dataset_release(&d);
}

int main(void)
{
	if (tmp_dir_make("train") < 0)
		return 1;
	RUN(bad_arch_specs);
	RUN(bad_options);
	RUN(bad_data);
	RUN(unwritable_output_path);
	RUN(mlp_learns_and_fills_the_metrics);
	RUN(deterministic_for_a_seed);
	RUN(cnn_learns_a_heat_stencil_on_chw_rows);
	RUN(cnn_learns_a_heat_stencil_on_hw_rows);
	RUN(cnnvec_finds_a_spot);
	RUN(mlp_on_multidimensional_rows_and_constant_features);
	RUN(progress_and_interrupt_keep_the_best_so_far);
	RUN(rollout_chooses_the_epoch_by_the_r_step_error);
	RUN(early_stopping_and_schedules);
	RUN(script_forward_trains_the_same_model);
	RUN(hand_written_backward_matches_autograd);
	RUN(losses_hand_written_match_autograd);
	RUN(relative_and_log_losses_lower_the_mape);
	RUN(small_data_sets_make_whole_epochs);
	RUN(every_activation_compiles_and_runs);
	tmp_dir_remove();
	return check_report();
}
