/*
 * tests/unit/cmodel.c - the compiled-model contract, generator and loader
 * side by side: models described by hand (every activation, an MLP and
 * CNNs) are generated (lib/deploy/codegen.c), compiled with the system C compiler,
 * loaded (runtime/loader/cmodel.c) and compared with the description evaluated
 * here in double; the standalone source compiles with `cc -std=c11 -O2` and
 * runs on libc and libm alone; foreign, corrupt and mismatched shared
 * objects are refused, without ever running their code.
 */
#include <dlfcn.h>
#include <elf.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "deploy/cbuild.h"
#include "deploy/codegen.h"
#include "fixtures.h"
#include "hml/cmodel.h"
#include "hml/hml.h"
#include "loader/loader.h"

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* cc -shared; 0 on success. `extra` after the source (libraries included). */
static int compile_so(const char *c, const char *so, const char *extra)
{
	return sh("cc -std=c11 -O2 -fPIC -shared -fvisibility=hidden -o '%s' '%s' %s -lm",
	          so, c, extra);
}

static void fill(uint64_t *seed, float *v, int64_t n, double lo, double hi)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)uniform(seed, lo, hi);
}

/* A random model: sizes[0..nlayers], act after every hidden layer. */
static int make_model(hml__cg_model *m, hml__cg_family fam, int nlayers, const int64_t *sizes,
                      int kernel, hml__cg_act act, uint64_t seed)
{
	int rc = hml__cg_model_init(m, fam, nlayers, sizes, kernel);

	if (rc < 0)
		return rc;
	for (int l = 0; l < nlayers; l++) {
		hml__cg_layer *y = &m->layers[l];
		int64_t kk = kernel ? (int64_t)kernel * kernel : 1;
		double bound = 1.0 / sqrt((double)(y->in * kk));

		fill(&seed, y->weight, y->in * y->out * kk, -bound, bound);
		fill(&seed, y->bias, y->out, -bound, bound);
		y->act = l < nlayers - 1 ? act : HML__ACT_IDENTITY;
	}
	fill(&seed, m->in_mean, sizes[0], -2, 5);
	fill(&seed, m->in_std, sizes[0], 0.5, 3);
	fill(&seed, m->out_mean, sizes[nlayers], -1, 10);
	fill(&seed, m->out_std, sizes[nlayers], 0.1, 4);
	snprintf(m->arch, sizeof(m->arch), "%s:test:%s", fam == HML__CG_MLP ? "mlp" : "cnn",
	         hml__cg_act_name(act));
	return 0;
}

static double act_ref(hml__cg_act a, double v)
{
	switch (a) {
	case HML__ACT_RELU: return v > 0 ? v : 0;
	case HML__ACT_TANH: return tanh(v);
	case HML__ACT_GELU: return 0.5 * v * (1 + erf(v / sqrt(2.0)));
	case HML__ACT_SILU: return v / (1 + exp(-v));
	case HML__ACT_SIGMOID: return 1 / (1 + exp(-v));
	default: return v;
	}
}

/* The description in double, unfolded: one MLP row. */
static void mlp_ref(const hml__cg_model *m, const double *x, double *y)
{
	double a[512], b[512];
	int64_t n = m->layers[0].in;

	for (int64_t i = 0; i < n; i++)
		a[i] = (x[i] - m->in_mean[i]) / m->in_std[i];
	for (int l = 0; l < m->nlayers; l++) {
		const hml__cg_layer *L = &m->layers[l];

		for (int64_t o = 0; o < L->out; o++) {
			double s = L->bias[o];

			for (int64_t i = 0; i < L->in; i++)
				s += (double)L->weight[o * L->in + i] * a[i];
			b[o] = act_ref(L->act, s);
		}
		memcpy(a, b, (size_t)L->out * sizeof(double));
	}
	for (int64_t o = 0; o < m->layers[m->nlayers - 1].out; o++)
		y[o] = a[o] * m->out_std[o] + m->out_mean[o];
}

/* One CNN sample [C, H, W] in double, zero padding on the normalised field. */
static void cnn_ref(const hml__cg_model *m, int64_t H, int64_t W, const double *x, double *y)
{
	static double a[128 * 50 * 20], b[128 * 50 * 20];   /* cnn_gemm_path's field */
	int64_t c0 = m->layers[0].in;

	for (int64_t c = 0; c < c0; c++)
		for (int64_t p = 0; p < H * W; p++)
			a[c * H * W + p] = (x[c * H * W + p] - m->in_mean[c]) / m->in_std[c];
	for (int l = 0; l < m->nlayers; l++) {
		const hml__cg_layer *L = &m->layers[l];
		int k = L->kernel, p = k / 2;

		for (int64_t o = 0; o < L->out; o++)
			for (int64_t i = 0; i < H; i++)
				for (int64_t j = 0; j < W; j++) {
					double s = L->bias[o];

					for (int64_t c = 0; c < L->in; c++)
						for (int ky = 0; ky < k; ky++)
							for (int kx = 0; kx < k; kx++) {
								int64_t ii = i + ky - p, jj = j + kx - p;

								if (ii >= 0 && ii < H && jj >= 0 && jj < W)
									s += (double)L->weight[((o * L->in + c) * k + ky) * k + kx] *
									     a[(c * H + ii) * W + jj];
							}
					b[(o * H + i) * W + j] = act_ref(L->act, s);
				}
		memcpy(a, b, (size_t)(L->out * H * W) * sizeof(double));
	}
	for (int64_t o = 0; o < m->layers[m->nlayers - 1].out; o++)
		for (int64_t p = 0; p < H * W; p++)
			y[o * H * W + p] = a[o * H * W + p] * m->out_std[o] + m->out_mean[o] +
			                   (m->residual ? x[o * H * W + p] : 0);
}

/* Run `rows` rows through the loaded model in float and double and compare
 * with the reference to 1e-5 of the outputs' scale; the same rows rounded
 * to int32 give, in float, what their float64 copy gives (compare_i32). */
static void compare(const hml__cg_model *m, hml__cmodel *cm, const char *name, int64_t rows);

/* Generate, compile, load, compare at each of the `n` row counts. */
static void roundtrip(const hml__cg_model *m, const char *name, const int64_t *rows, size_t n,
                      const char *cflags)
{
	char c[256], so[256];
	hml__cg_options o = { name, "00ff", NULL };
	hml__cmodel *cm = NULL;
	int64_t shape[HML_MAX_DIMS];

	snprintf(c, sizeof(c), "%s.c", tmp_path(name));
	snprintf(so, sizeof(so), "%s.so", tmp_path(name));
	CHECK_OK(hml__cg_write(m, &o, c, NULL));
	CHECK(compile_so(c, so, cflags) == 0);
	CHECK_OK(hml__cmodel_load(&cm, so));
	if (!cm)
		return;
	CHECK_STR(hml__cmodel_id(cm), name);
	CHECK_STR(hml__cmodel_hash(cm), "00ff");
	CHECK_EQ_INT(hml__cmodel_abi(cm), 3);
	CHECK(hml__cmodel_takes(cm, HML_I32) && hml__cmodel_takes(cm, HML_F64));
	CHECK(hml__cmodel_input_stats(cm) == NULL);   /* none given */
	CHECK_EQ_INT(hml__cmodel_declared_input(cm, shape), m->in_ndim);
	CHECK_EQ_INT(shape[m->in_ndim - 1], m->in_shape[m->in_ndim - 1]);
	for (size_t i = 0; i < n; i++)
		compare(m, cm, name, rows[i]);
	hml__cmodel_free(cm);
}

/* forward_i32 of the rows x (nin values each) rounded to int32, against
 * forward_f64 of the same integers: the same float arithmetic on the same
 * float inputs, so the same outputs bit for bit (float32 against float64
 * holding float32 values). */
static void compare_i32(hml__cmodel *cm, const double *x, int64_t rows, int64_t nin,
                        int64_t nout, int ndim, const int64_t *shape)
{
	int32_t *xi = malloc((size_t)(rows * nin) * sizeof(int32_t));
	double *xd = malloc((size_t)(rows * nin) * sizeof(double));
	double *yd = malloc((size_t)(rows * nout) * sizeof(double));
	int64_t oshape[HML_MAX_DIMS], same = 0;
	const void *out;
	hml_dtype dt;
	int nd;

	if (!xi || !xd || !yd)
		goto done;
	for (int64_t i = 0; i < rows * nin; i++)
		xd[i] = xi[i] = (int32_t)lround(x[i]);
	CHECK_OK(hml__cmodel_forward(cm, xd, HML_F64, ndim, shape));
	CHECK_OK(hml__cmodel_output(cm, &out, &dt, &nd, oshape));
	memcpy(yd, out, (size_t)(rows * nout) * sizeof(double));
	CHECK_OK(hml__cmodel_forward(cm, xi, HML_I32, ndim, shape));
	CHECK_OK(hml__cmodel_output(cm, &out, &dt, &nd, oshape));
	CHECK_EQ_INT(dt, HML_F32);
	CHECK_EQ_INT(oshape[0], rows);
	for (int64_t i = 0; i < rows * nout; i++)
		same += (double)((const float *)out)[i] == yd[i];
	CHECK_EQ_INT(same, rows * nout);
done:
	free(xi);
	free(xd);
	free(yd);
}

static void compare(const hml__cg_model *m, hml__cmodel *cm, const char *name, int64_t rows)
{
	int64_t nin = 1, nout = 1, shape[HML_MAX_DIMS + 1], oshape[HML_MAX_DIMS];
	double *x, *ref, maxdiff = 0, scale = 1;
	float *xf;
	uint64_t seed = 7;
	const void *out;
	hml_dtype dt;
	int ndim;

	for (int d = 0; d < m->in_ndim; d++)
		nin *= m->in_shape[d];
	for (int d = 0; d < m->out_ndim; d++)
		nout *= m->out_shape[d];
	x = malloc((size_t)(rows * nin) * sizeof(double));
	xf = malloc((size_t)(rows * nin) * sizeof(float));
	ref = malloc((size_t)(rows * nout) * sizeof(double));
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t i = 0; i < nin; i++) {
			int64_t ch = m->family == HML__CG_MLP ? i : i / (nin / m->layers[0].in);

			x[r * nin + i] = m->in_mean[ch] + m->in_std[ch] * uniform(&seed, -2, 2);
			xf[r * nin + i] = (float)x[r * nin + i];
			x[r * nin + i] = xf[r * nin + i];
		}
		if (m->family == HML__CG_MLP)
			mlp_ref(m, x + r * nin, ref + r * nout);
		else
			cnn_ref(m, m->out_shape[m->out_ndim - 2], m->out_shape[m->out_ndim - 1],
			        x + r * nin, ref + r * nout);
	}
	for (int64_t i = 0; i < rows * nout; i++)
		scale = fmax(scale, fabs(ref[i]));
	shape[0] = rows;
	memcpy(shape + 1, m->in_shape, (size_t)m->in_ndim * sizeof(int64_t));
	for (int pass = 0; pass < 2; pass++) {
		hml_dtype want = pass ? HML_F64 : HML_F32;

		CHECK_OK(hml__cmodel_forward(cm, pass ? (const void *)x : (const void *)xf, want,
		                             m->in_ndim + 1, shape));
		CHECK_OK(hml__cmodel_output(cm, &out, &dt, &ndim, oshape));
		CHECK_EQ_INT(dt, want);
		CHECK_EQ_INT(ndim, m->out_ndim + 1);
		CHECK_EQ_INT(oshape[0], rows);
		for (int64_t i = 0; i < rows * nout; i++) {
			double v = pass ? ((const double *)out)[i] : ((const float *)out)[i];

			maxdiff = fmax(maxdiff, fabs(v - ref[i]));
		}
	}
	/* Into the caller's buffer, no state kept (row calls from many
	 * threads): what the last forward (float64) gave, bit for bit. */
	{
		double *into = malloc((size_t)(rows * nout) * sizeof(double));

		CHECK_OK(hml__cmodel_forward_into(cm, x, HML_F64, rows, into));
		CHECK(into && memcmp(into, out, (size_t)(rows * nout) * sizeof(double)) == 0);
		CHECK_FAILS(hml__cmodel_forward_into(cm, x, HML_I32, rows, into), HML_EINVALID,
		            "bad input dtype");
		free(into);
	}
	if (!(maxdiff <= 1e-5 * scale))
		fprintf(stderr, "%s (%lld rows): max diff %g, scale %g\n", name, (long long)rows,
		        maxdiff, scale);
	CHECK(maxdiff <= 1e-5 * scale);
	compare_i32(cm, x, rows, nin, nout, m->in_ndim + 1, shape);
	free(x);
	free(xf);
	free(ref);
}

TEST(mlp_every_activation)
{
	static const int64_t sizes[] = { 5, 24, 16, 3 };

	for (int a = 0; a <= HML__ACT_SIGMOID; a++) {
		hml__cg_model m;
		char name[32];

		snprintf(name, sizeof(name), "mlp_%s", hml__cg_act_name((hml__cg_act)a));
		CHECK_OK(make_model(&m, HML__CG_MLP, 3, sizes, 0, (hml__cg_act)a, 100 + (uint64_t)a));
		m.in_ndim = 1, m.in_shape[0] = 5;
		m.out_ndim = 1, m.out_shape[0] = 3;
		roundtrip(&m, name, (const int64_t[]){ 3 }, 1, "");
		hml__cg_model_release(&m);
	}
}

/*
 * Each activation alone (a 1-1-1 MLP whose weights are 1 and biases 0, so
 * that the output is act(x)) over [-12, 12] and near 0, in float, against
 * double precision: the branch-free exp/erfc/tanh of the generated code
 * (lib/deploy/codegen.c) hold their stated accuracy everywhere, including at
 * tanh's switch between its two forms (|x| = 0.625). Relative error where
 * |act(x)| > 1e-3 (where it is smaller the absolute error is below 2e-9).
 */
TEST(activation_accuracy)
{
	static const int64_t sizes[] = { 1, 1, 1 };
	static const double tol[] = { 0, 0, 4e-7, 2e-6, 4e-7, 4e-7 };
	enum { N = 24001 + 200 };

	for (int a = HML__ACT_RELU; a <= HML__ACT_SIGMOID; a++) {
		hml__cg_options o = { NULL, "00ff", NULL };
		hml__cg_model m;
		hml__cmodel *cm = NULL;
		hml__cbuild_info info;
		char name[32], c[256], so[256];
		static float x[N];
		const void *out;
		double worst = 0, worst_abs = 0, at = 0;
		int64_t shape[2] = { N, 1 }, oshape[HML_MAX_DIMS];
		hml_dtype dt;
		int ndim;

		snprintf(name, sizeof(name), "act_%s", hml__cg_act_name((hml__cg_act)a));
		o.id = name;
		CHECK_OK(hml__cg_model_init(&m, HML__CG_MLP, 2, sizes, 0));
		m.layers[0].weight[0] = m.layers[1].weight[0] = 1;
		m.layers[0].act = (hml__cg_act)a;
		m.in_std[0] = m.out_std[0] = 1;
		m.in_ndim = m.out_ndim = 1;
		m.in_shape[0] = m.out_shape[0] = 1;
		snprintf(m.arch, sizeof(m.arch), "mlp:1:%s", name + 4);
		for (int i = 0; i < 24001; i++)
			x[i] = (float)(-12.0 + i * 1e-3);
		for (int i = 0; i < 200; i++)   /* tiny magnitudes, both signs */
			x[24001 + i] = (float)((i % 2 ? -1 : 1) * pow(10.0, -8.0 + 7.0 * (i / 2) / 99.0));
		snprintf(c, sizeof(c), "%s.c", tmp_path(name));
		snprintf(so, sizeof(so), "%s.so", tmp_path(name));
		/* built as hml deploy builds it (lib/deploy/cbuild.h: -O3, contraction, ...) */
		CHECK_OK(hml__cbuild_so(&m, &o, NULL, c, NULL, so, &info));
		hml__cbuild_info_release(&info);
		CHECK_OK(hml__cmodel_load(&cm, so));
		if (cm && hml__cmodel_forward(cm, x, HML_F32, 2, shape) == 0 &&
		    hml__cmodel_output(cm, &out, &dt, &ndim, oshape) == 0) {
			for (int i = 0; i < N; i++) {
				double ref = act_ref((hml__cg_act)a, (double)x[i]);
				double v = ((const float *)out)[i], e = fabs(v - ref);

				if (fabs(ref) > 1e-3 && e / fabs(ref) > worst)
					worst = e / fabs(ref), at = x[i];
				if (fabs(ref) <= 1e-3)
					worst_abs = fmax(worst_abs, e);
			}
			if (!(worst <= tol[a] && worst_abs <= 2e-9))
				fprintf(stderr, "%s: relative error %g at %g (tolerance %g), absolute %g\n",
				        name, worst, at, tol[a], worst_abs);
			CHECK(worst <= tol[a]);
			CHECK(worst_abs <= 2e-9);
		} else {
			CHECK(!"the activation model ran");
		}
		hml__cmodel_free(cm);
		hml__cg_model_release(&m);
	}
}

/* Row path, blocks with a ragged tail, and the OpenMP path. */
TEST(mlp_batches)
{
	static const int64_t sizes[] = { 6, 64, 64, 2 };
	static const int64_t rows[] = { 1, 2, 63, 64, 65, 2500 };
	hml__cg_model m;

	CHECK_OK(make_model(&m, HML__CG_MLP, 3, sizes, 0, HML__ACT_TANH, 5));
	m.in_ndim = 2, m.in_shape[0] = 2, m.in_shape[1] = 3;
	m.out_ndim = 1, m.out_shape[0] = 2;
	roundtrip(&m, "mlp_batch", rows, sizeof(rows) / sizeof(rows[0]), "-fopenmp");
	roundtrip(&m, "mlp_native", (const int64_t[]){ 100 }, 1, "-march=native -ffp-contract=fast");
	hml__cg_model_release(&m);
}

/* The sgemm path (lib/deploy/cg_mlp.c): a layer of 48 x 40 takes it from 547
 * rows (2^20 multiply-adds); below, at and above that, in chunks with a
 * ragged tail and over OpenMP, float and double, built with OpenBLAS as
 * hml deploy builds it (lib/deploy/cbuild.c); the same source without the define
 * is the blocked kernel alone and agrees as well. */
TEST(mlp_gemm_path)
{
	static const int64_t sizes[] = { 5, 48, 40, 3 };
	static const int64_t rows[] = { 546, 547, 600, 2500 };
	const char *blas = hml__cbuild_blas();
	char flags[1200];
	hml__cg_model m;

	CHECK_OK(make_model(&m, HML__CG_MLP, 3, sizes, 0, HML__ACT_GELU, 21));
	m.in_ndim = 1, m.in_shape[0] = 5;
	m.out_ndim = 1, m.out_shape[0] = 3;
	CHECK_OK(hml__cg_write(&m, &(hml__cg_options){ "g", NULL, NULL }, tmp_path("g.c"), NULL));
	CHECK(sh("grep -q 'if (rows >= 547)' '%s'", tmp_path("g.c")) == 0);
	CHECK(sh("grep -q 'cblas_sgemm(101, 111, 111, r, 40, 48' '%s'", tmp_path("g.c")) == 0);
	CHECK_EQ_INT(hml__cg_uses_blas(&m), 1);
	roundtrip(&m, "mlp_noblas", rows, sizeof(rows) / sizeof(rows[0]), "-fopenmp");
	if (!blas) {
		fprintf(stderr, "mlp_gemm_path: hml built without OpenBLAS's OpenMP build "
		        "(HML_CMODEL_BLAS): sgemm path not run\n");
	} else {
		snprintf(flags, sizeof(flags), "-fopenmp -DHML_CMODEL_CBLAS '%s' -Wl,-rpath,$(dirname '%s')",
		         blas, blas);
		roundtrip(&m, "mlp_blas", rows, sizeof(rows) / sizeof(rows[0]), flags);
		CHECK(sh("ldd '%s' | grep -q libopenblas", tmp_path("mlp_blas.so")) == 0);
	}
	hml__cg_model_release(&m);
	/* a narrow model has no sgemm path */
	CHECK_OK(make_model(&m, HML__CG_MLP, 2, (const int64_t[]){ 5, 8, 1 }, 0, HML__ACT_RELU, 22));
	m.in_ndim = 1, m.in_shape[0] = 5;
	m.out_ndim = 1, m.out_shape[0] = 1;
	CHECK_OK(hml__cg_write(&m, &(hml__cg_options){ "n", NULL, NULL }, tmp_path("n.c"), NULL));
	CHECK(sh("grep -q cblas_sgemm '%s'", tmp_path("n.c")) != 0);
	CHECK_EQ_INT(hml__cg_uses_blas(&m), 0);
	hml__cg_model_release(&m);
}

/* Inputs far from zero (dates in days, prices): the mean must not be folded
 * into layer 0's float bias, where large terms would cancel. */
TEST(mlp_inputs_far_from_zero)
{
	static const int64_t sizes[] = { 4, 64, 64, 1 };
	hml__cg_model m;

	CHECK_OK(make_model(&m, HML__CG_MLP, 3, sizes, 0, HML__ACT_RELU, 17));
	for (int i = 0; i < 4; i++) {
		m.in_mean[i] = 45000.0f + 1000.0f * (float)i;
		m.in_std[i] = 30.0f + 100.0f * (float)i;
	}
	m.in_ndim = 1, m.in_shape[0] = 4;
	m.out_ndim = 1, m.out_shape[0] = 1;
	roundtrip(&m, "mlp_far", (const int64_t[]){ 1, 300 }, 2, "");
	hml__cg_model_release(&m);
}

TEST(cnn)
{
	static const int64_t sizes[] = { 2, 4, 3 };
	static const int64_t sizes1[] = { 1, 3, 1 };
	hml__cg_model m;

	CHECK_OK(make_model(&m, HML__CG_CNN, 2, sizes, 3, HML__ACT_RELU, 11));
	m.in_ndim = 3, m.in_shape[0] = 2, m.in_shape[1] = 5, m.in_shape[2] = 6;
	m.out_ndim = 3, m.out_shape[0] = 3, m.out_shape[1] = 5, m.out_shape[2] = 6;
	roundtrip(&m, "cnn3", (const int64_t[]){ 3 }, 1, "");
	CHECK_EQ_INT(hml__cg_uses_blas(&m), 0);   /* 2 -> 4 -> 3 channels, 3x3: no sgemm */
	hml__cg_model_release(&m);
	/* [H, W] rows, kernel 5 wider than the field's height */
	CHECK_OK(make_model(&m, HML__CG_CNN, 2, sizes1, 5, HML__ACT_SILU, 12));
	m.in_ndim = 2, m.in_shape[0] = 4, m.in_shape[1] = 7;
	m.out_ndim = 2, m.out_shape[0] = 4, m.out_shape[1] = 7;
	roundtrip(&m, "cnn5", (const int64_t[]){ 2 }, 1, "");
	hml__cg_model_release(&m);
	/* residual (models/cnn.ts): the input added to the de-normalised output */
	CHECK_OK(make_model(&m, HML__CG_CNN, 2, (const int64_t[]){ 2, 4, 2 }, 3, HML__ACT_TANH, 13));
	m.in_ndim = 3, m.in_shape[0] = 2, m.in_shape[1] = 5, m.in_shape[2] = 6;
	m.out_ndim = 3, m.out_shape[0] = 2, m.out_shape[1] = 5, m.out_shape[2] = 6;
	m.residual = 1;
	roundtrip(&m, "cnn_res", (const int64_t[]){ 1, 3 }, 2, "");
	hml__cg_model_release(&m);
	/* channels that differ cannot be added */
	CHECK_OK(make_model(&m, HML__CG_CNN, 2, sizes, 3, HML__ACT_RELU, 11));
	m.in_ndim = 3, m.in_shape[0] = 2, m.in_shape[1] = 5, m.in_shape[2] = 6;
	m.out_ndim = 3, m.out_shape[0] = 3, m.out_shape[1] = 5, m.out_shape[2] = 6;
	m.residual = 1;
	CHECK_FAILS(hml__cg_model_check(&m), HML_ESHAPE, "residual CNN");
	hml__cg_model_release(&m);
}

/* Conv layers as im2col + sgemm: 128 -> 128 channels, 3x3 (1152 inputs
 * per output: the sgemm path), on a field tall enough for two tiles of
 * image rows (45 and 5); its first (18 inputs) and last (one output)
 * layers stay direct. Built without and with OpenBLAS, both match the
 * reference. */
TEST(cnn_gemm_path)
{
	static const int64_t sizes[] = { 2, 128, 128, 1 };
	static const int64_t rows[] = { 1, 2 };
	const char *blas = hml__cbuild_blas();
	char flags[1200];
	hml__cg_model m;

	CHECK_OK(make_model(&m, HML__CG_CNN, 3, sizes, 3, HML__ACT_TANH, 31));
	m.in_ndim = 3, m.in_shape[0] = 2, m.in_shape[1] = 50, m.in_shape[2] = 20;
	m.out_ndim = 3, m.out_shape[0] = 1, m.out_shape[1] = 50, m.out_shape[2] = 20;
	CHECK_OK(hml__cg_write(&m, &(hml__cg_options){ "cg", NULL, NULL }, tmp_path("cg.c"), NULL));
	CHECK(sh("grep -q 'layer 1: conv 128 -> 128, 3x3, tanh: im2col tiles of 45 rows + sgemm' '%s'",
	         tmp_path("cg.c")) == 0);
	CHECK(sh("test $(grep -c 'sgemm \\*/' '%s') = 1", tmp_path("cg.c")) == 0);
	CHECK_EQ_INT(hml__cg_uses_blas(&m), 1);
	roundtrip(&m, "cnn_noblas", rows, 2, "-fopenmp");
	if (!blas) {
		fprintf(stderr, "cnn_gemm_path: hml built without OpenBLAS's OpenMP build "
		        "(HML_CMODEL_BLAS): sgemm path not run\n");
	} else {
		snprintf(flags, sizeof(flags), "-fopenmp -DHML_CMODEL_CBLAS '%s' -Wl,-rpath,$(dirname '%s')",
		         blas, blas);
		roundtrip(&m, "cnn_blas", rows, 2, flags);
		CHECK(sh("ldd '%s' | grep -q libopenblas", tmp_path("cnn_blas.so")) == 0);
	}
	hml__cg_model_release(&m);
}

/* The .c and .h alone, with a main of the application's, on libc and libm. */
TEST(standalone)
{
	static const int64_t sizes[] = { 5, 16, 1 };
	hml__cg_model m;
	hml__cg_options o = { "m7", NULL, NULL };
	FILE *f;
	double want[2], x[10] = { 1, 2, 3, 4, 5, 0.5, -1, 2.5, 7, 0 };
	char line[256], *stats = malloc(9000);

	/* statistics longer than the 4095 characters of one C literal, with
	 * quotes and a backslash: -pedantic -Werror still compiles them */
	strcpy(stats, "{\"a\\\"b\": [");
	for (int i = 0; i < 800; i++)
		strcat(stats, i ? ", 1.5e-3" : "1.5e-3");
	strcat(stats, "]}");
	o.input_stats = stats;
	CHECK_OK(make_model(&m, HML__CG_MLP, 2, sizes, 0, HML__ACT_GELU, 3));
	m.in_ndim = 1, m.in_shape[0] = 5;
	m.out_ndim = 1, m.out_shape[0] = 1;
	CHECK_OK(hml__cg_write(&m, &o, tmp_path("m7.c"), tmp_path("m7.h")));
	f = fopen(tmp_path("app.c"), "w");
	fputs("#include <stdio.h>\n#include <string.h>\n#include \"m7.h\"\n#include \"stats.h\"\n"
	      "int main(void)\n{\n"
	      "\tconst float x[2 * HML_M7_IN_FEATURES] = { 1, 2, 3, 4, 5, 0.5f, -1, 2.5f, 7, 0 };\n"
	      "\tfloat y[2], yi[2];\n\tdouble xd[10], yd[2];\n\tint32_t xi[10];\n"
	      "\tfor (int i = 0; i < 10; i++) xd[i] = x[i], xi[i] = (int32_t)x[i];\n"
	      "\tif (hml_m7_forward_f32(x, y, 2) || hml_m7_forward_f64(xd, yd, 2)) return 1;\n"
	      "\tif (hml_cmodel_v3.forward_i32(xi, yi, 2) || !(yi[0] == yi[0])) return 3;\n"
	      "\tprintf(\"%.9g %.9g %.9g %.9g %s\\n\", y[0], y[1], yd[0], yd[1], hml_cmodel_v3.arch);\n"
	      "\tif (strcmp(hml_cmodel_v3.input_stats, STATS) != 0) return 2;\n"
	      "\treturn 0;\n}\n", f);
	fclose(f);
	f = fopen(tmp_path("stats.h"), "w");   /* the same text, for the app to compare */
	fputs("#define STATS \"", f);
	for (const char *c = stats; *c; c++)
		fprintf(f, "%s%c", *c == '"' || *c == '\\' ? "\\" : "", *c);
	fputs("\"\n", f);
	fclose(f);
	/* m7.c as it is, under -pedantic; the app's own STATS is long too */
	CHECK(sh("cd '%s' && cc -std=c11 -O2 -Wall -Wextra -pedantic -Werror -c m7.c && "
	         "cc -std=c11 -O2 -Wall -Wextra -pedantic -Werror -Wno-overlength-strings -c app.c && "
	         "cc -o app app.o m7.o -lm", tmpdir) == 0);
	/* only libc and libm (and the loader, vdso) in the executable */
	CHECK(sh("ldd '%s/app' | grep -v -e libc.so -e libm.so -e ld-linux -e linux-vdso "
	         "| grep . && exit 1 || exit 0", tmpdir) == 0);
	CHECK(sh("'%s/app' > '%s/app.out'", tmpdir, tmpdir) == 0);
	f = fopen(tmp_path("app.out"), "r");
	CHECK(f && fgets(line, sizeof(line), f));
	if (f)
		fclose(f);
	mlp_ref(&m, x, &want[0]);
	mlp_ref(&m, x + 5, &want[1]);
	{
		double y0, y1, d0, d1;
		char arch[64];

		CHECK_EQ_INT(sscanf(line, "%lf %lf %lf %lf %63s", &y0, &y1, &d0, &d1, arch), 5);
		CHECK_NEAR(y0, want[0], 1e-5 * fmax(1, fabs(want[0])));
		CHECK_NEAR(y1, want[1], 1e-5 * fmax(1, fabs(want[1])));
		CHECK_NEAR(d0, y0, 0);
		CHECK_NEAR(d1, y1, 0);
		CHECK_STR(arch, "mlp:test:gelu");
	}
	hml__cg_model_release(&m);
	free(stats);
}

TEST(refused)
{
	static const int64_t sizes[] = { 5, 8, 1 };
	hml__cg_model m;
	hml__cg_options o = { "m1", NULL, NULL };
	hml__cmodel *cm = NULL;
	char cmd[2048];
	int64_t shape[3] = { 4, 4 };
	float x[16] = { 0 };

	CHECK_FAILS(hml__cmodel_load(&cm, tmp_path("missing.so")), HML_ENOTFOUND, "missing.so");
	write_text(tmp_path("text.so"), "this is not a shared object, it is text of some length\n"
	           "padding padding padding padding padding padding\n");
	CHECK_FAILS(hml__cmodel_load(&cm, tmp_path("text.so")), HML_EMODEL, "not an ELF shared object");
	/* a foreign object whose constructor would kill the process */
	write_text(tmp_path("foreign.c"), "#include <stdlib.h>\n"
	           "__attribute__((constructor)) static void boom(void) { abort(); }\n"
	           "int hml_cmodel_v1 = 1;\n");
	CHECK(compile_so(tmp_path("foreign.c"), tmp_path("foreign.so"), "") == 0);
	CHECK_FAILS(hml__cmodel_load(&cm, tmp_path("foreign.so")), HML_EMODEL,
	            "not a model compiled by hml");
	/* the tag but another magic number, then another version */
	snprintf(cmd, sizeof(cmd), "#include <stdint.h>\n#include \"hml/cmodel.h\"\n"
	         "static int f(const float *x, float *y, int64_t r) { (void)x; (void)y; (void)r; abort(); }\n"
	         "static int d(const double *x, double *y, int64_t r) { (void)x; (void)y; (void)r; abort(); }\n"
	         "__attribute__((visibility(\"default\"))) const hml_cmodel_v1_info hml_cmodel_v1 = {\n"
	         "MAGIC, VERSION, sizeof(hml_cmodel_v1_info), 1, HML_CMODEL_V1_TAG, 1, 1, {5}, {1}, 5, 1,\n"
	         "\"x\", \"\", \"a\", f, d };\n");
	write_text(tmp_path("fake.c"), "#include <stdlib.h>\n");
	{
		FILE *f = fopen(tmp_path("fake.c"), "a");

		fputs(cmd, f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "-I'%s/runtime/include' -DMAGIC=0x1234u -DVERSION=1",
	         getenv("HML_SOURCE_DIR") ? getenv("HML_SOURCE_DIR") : ".");
	CHECK(compile_so(tmp_path("fake.c"), tmp_path("magic.so"), cmd) == 0);
	CHECK_FAILS(hml__cmodel_load(&cm, tmp_path("magic.so")), HML_EMODEL, "bad magic number");
	snprintf(cmd, sizeof(cmd), "-I'%s/runtime/include' -DMAGIC=HML_CMODEL_MAGIC -DVERSION=4",
	         getenv("HML_SOURCE_DIR") ? getenv("HML_SOURCE_DIR") : ".");
	CHECK(compile_so(tmp_path("fake.c"), tmp_path("version.so"), cmd) == 0);
	CHECK_FAILS(hml__cmodel_load(&cm, tmp_path("version.so")), HML_ENOTSUPPORTED,
	            "ABI version 4, this runtime reads 1 to 3");
	/* a good model cut short */
	CHECK_OK(make_model(&m, HML__CG_MLP, 2, sizes, 0, HML__ACT_RELU, 9));
	m.in_ndim = 1, m.in_shape[0] = 5;
	m.out_ndim = 1, m.out_shape[0] = 1;
	CHECK_OK(hml__cg_write(&m, &o, tmp_path("good.c"), NULL));
	CHECK(compile_so(tmp_path("good.c"), tmp_path("good.so"), "") == 0);
	CHECK(sh("head -c 3000 '%s' > '%s'", tmp_path("good.so"), tmp_path("cut.so")) == 0);
	CHECK(hml__cmodel_load(&cm, tmp_path("cut.so")) == HML_EMODEL);
	CHECK(cm == NULL);
	CHECK(hml__cmodel_sniff(tmp_path("good.so")) == 1);
	CHECK(hml__cmodel_sniff(tmp_path("text.so")) == 0);
	/* a shape that is not the model's */
	CHECK_OK(hml__cmodel_load(&cm, tmp_path("good.so")));
	if (cm) {
		const void *out;
		hml_dtype dt;
		int nd;
		int64_t os[HML_MAX_DIMS];

		CHECK_FAILS(hml__cmodel_output(cm, &out, &dt, &nd, os), HML_EINVALID, "has not run");
		CHECK_FAILS(hml__cmodel_forward(cm, x, HML_F32, 2, shape), HML_ESHAPE,
		            "takes rows of [5], not [4]");
		shape[1] = 5;
		CHECK_OK(hml__cmodel_forward(cm, x, HML_F32, 2, shape));
		shape[0] = 0;
		CHECK_OK(hml__cmodel_forward(cm, x, HML_F64, 2, shape));
		CHECK_OK(hml__cmodel_output(cm, &out, &dt, &nd, os));
		CHECK_EQ_INT(os[0], 0);
	}
	hml__cmodel_free(cm);
	/* descriptions the generator refuses */
	o.id = "bad-id";
	CHECK_FAILS(hml__cg_write(&m, &o, tmp_path("x.c"), NULL), HML_EINVALID, "bad model id");
	o.id = "m1";
	m.in_shape[0] = 4;
	CHECK_FAILS(hml__cg_write(&m, &o, tmp_path("x.c"), NULL), HML_ESHAPE,
	            "declares 4 input and 1 output features");
	m.in_shape[0] = 5;
	m.in_std[2] = 0;
	CHECK_FAILS(hml__cg_write(&m, &o, tmp_path("x.c"), NULL), HML_EINVALID, "normalisation");
	hml__cg_model_release(&m);
}

/* A file the loader refuses runs none of its code: each of these shared
 * objects has a constructor that leaves a marker file, and none of them is
 * an hml model (the tag string but no entry symbol; an entry that is a
 * function; an entry of another size). The ELF checker also survives
 * damaged headers: a good object with random bytes changed in its first
 * 4 KiB and in its section headers is refused or accepted, never read out
 * of bounds (ASan build). */
TEST(no_code_before_check)
{
	static const char *const bodies[] = {
		"const char tag[] = HML_CMODEL_TAG;\n",
		"__attribute__((visibility(\"default\"))) int hml_cmodel_v1(void) { return 1; }\n",
		"__attribute__((visibility(\"default\"))) const char hml_cmodel_v1[16] = HML_CMODEL_TAG;\n",
	};
	char src[1024], flags[1024], name[64];
	hml__cmodel *cm = NULL;

	snprintf(flags, sizeof(flags), "-I'%s/runtime/include'",
	         getenv("HML_SOURCE_DIR") ? getenv("HML_SOURCE_DIR") : ".");
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		snprintf(src, sizeof(src), "#include <stdio.h>\n#include \"hml/cmodel.h\"\n"
		         "__attribute__((constructor)) static void ran(void)\n"
		         "{ FILE *f = fopen(\"%s\", \"w\"); if (f) fclose(f); }\n%s",
		         tmp_path("ran"), bodies[i]);
		snprintf(name, sizeof(name), "ctor%zu.c", i);
		write_text(tmp_path(name), src);
		snprintf(name, sizeof(name), "ctor%zu", i);
		CHECK(sh("cc -std=c11 -fPIC -shared -o '%s.so' '%s.c' %s", tmp_path(name),
		         tmp_path(name), flags) == 0);
		strcat(name, ".so");
		CHECK_FAILS(hml__cmodel_load(&cm, tmp_path(name)), HML_EMODEL,
		            "refused without loading it");
		CHECK(cm == NULL);
		CHECK(access(tmp_path("ran"), F_OK) != 0);
	}
	{
		const char *good = tmp_path("good.so");   /* from TEST(refused) */
		FILE *f = fopen(good, "rb");
		unsigned char *buf = NULL, *copy = NULL;
		long n = 0;
		uint64_t seed = 7;

		CHECK(f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 4096 &&
		      fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) &&
		      (copy = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) == (size_t)n);
		if (f)
			fclose(f);
		if (copy) {
			const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)buf;

			CHECK_EQ_INT(hml__cmodel_elf_check(buf, (size_t)n, "good.so"), 3);
			for (int k = 0; k < 20000; k++) {
				memcpy(copy, buf, (size_t)n);
				for (int j = 0; j < 4; j++) {
					uint64_t r = (uint64_t)uniform(&seed, 0, 1e9);
					size_t at = k % 2 ? r % 4096
					                  : (size_t)(eh->e_shoff + r % ((uint64_t)n - eh->e_shoff));

					copy[at % (size_t)n] = (unsigned char)(r >> 12);
				}
				(void)hml__cmodel_elf_check(copy, (size_t)n, "fuzzed.so");
			}
			/* cut short anywhere: refused */
			for (long cut = 0; cut < n; cut += 97)
				CHECK(hml__cmodel_elf_check(buf, (size_t)cut, "cut.so") < 0);
		}
		free(buf);
		free(copy);
	}
}

/* HML_THREADS reaches a compiled model's OpenMP regions for the time of
 * each forward only: a fake model whose forward answers the threads it
 * was given, and a second function of it that answers its caller's. */
TEST(threads)
{
	static const char src[] =
		"#include <omp.h>\n#include <stdint.h>\n#include \"hml/cmodel.h\"\n"
		"static int f(const float *x, float *y, int64_t r) { (void)x;\n"
		"  for (int64_t i = 0; i < r; i++) y[i] = (float)omp_get_max_threads(); return 0; }\n"
		"static int d(const double *x, double *y, int64_t r) { (void)x;\n"
		"  for (int64_t i = 0; i < r; i++) y[i] = omp_get_max_threads(); return 0; }\n"
		"__attribute__((visibility(\"default\"))) int fake_caller_threads(void)\n"
		"{ return omp_get_max_threads(); }\n"
		"__attribute__((visibility(\"default\"))) const hml_cmodel_v1_info hml_cmodel_v1 = {\n"
		"HML_CMODEL_MAGIC, 1, sizeof(hml_cmodel_v1_info), 1, HML_CMODEL_V1_TAG, 1, 1, {5}, {1},"
		" 5, 1, \"t\", \"\", \"a\", f, d };\n";
	char flags[1024];
	const char *so = tmp_path("threads.so");
	hml__cmodel *cm = NULL;
	int64_t shape[2] = { 2, 5 };
	float x[10] = { 0 };
	const void *out;
	hml_dtype dt;
	int nd, (*caller)(void) = NULL, before;
	int64_t os[HML_MAX_DIMS];
	void *h, *sym;

	write_text(tmp_path("threads.c"), src);
	snprintf(flags, sizeof(flags), "-fopenmp -I'%s/runtime/include'",
	         getenv("HML_SOURCE_DIR") ? getenv("HML_SOURCE_DIR") : ".");
	CHECK(compile_so(tmp_path("threads.c"), so, flags) == 0);
	CHECK_OK(hml__cmodel_load(&cm, so));
	if (!cm)
		return;
	/* an object of ABI version 1 (hml_cmodel_v1) loads, without statistics */
	CHECK_EQ_INT(hml__cmodel_abi(cm), 1);
	CHECK(hml__cmodel_input_stats(cm) == NULL);
	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);   /* the same object, counted once more */
	CHECK(h && (sym = dlsym(h, "fake_caller_threads")));
	if (!h || !sym)
		return;
	memcpy(&caller, &sym, sizeof(sym));
	before = caller();
	CHECK_EQ_INT(hml__cmodel_set_threads(cm, before + 2), 1);
	CHECK_OK(hml__cmodel_forward(cm, x, HML_F32, 2, shape));
	CHECK_OK(hml__cmodel_output(cm, &out, &dt, &nd, os));
	CHECK(((const float *)out)[1] == (float)(before + 2));
	CHECK_EQ_INT(caller(), before);   /* the caller's count is back */
	CHECK_OK(hml__cmodel_forward(cm, x, HML_F64, 2, shape));
	CHECK_OK(hml__cmodel_output(cm, &out, &dt, &nd, os));
	CHECK(((const double *)out)[0] == before + 2);
	CHECK_EQ_INT(hml__cmodel_set_threads(cm, 0), 0);   /* OpenMP's own setting */
	CHECK_OK(hml__cmodel_forward(cm, x, HML_F32, 2, shape));
	CHECK_OK(hml__cmodel_output(cm, &out, &dt, &nd, os));
	CHECK(((const float *)out)[0] == (float)before);
	hml__cmodel_free(cm);
	dlclose(h);
	/* a model built without OpenMP runs on one thread: nothing to set */
	CHECK_OK(hml__cmodel_load(&cm, tmp_path("good.so")));
	if (cm)
		CHECK_EQ_INT(hml__cmodel_set_threads(cm, 4), 0);
	hml__cmodel_free(cm);
}

/* Objects of ABI version 2 (no int32 forward) still load and run; a
 * version 3 object without its int32 forward is refused. */
TEST(older_versions)
{
	static const char src[] =
		"#include <stdint.h>\n#include \"hml/cmodel.h\"\n"
		"static int f(const float *x, float *y, int64_t r) { for (int64_t i = 0; i < r; i++)\n"
		"  y[i] = x[5 * i] + 1; return 0; }\n"
		"static int d(const double *x, double *y, int64_t r) { for (int64_t i = 0; i < r; i++)\n"
		"  y[i] = x[5 * i] + 1; return 0; }\n"
		"#if V3\n"
		"__attribute__((visibility(\"default\"))) const hml_cmodel_v3_info hml_cmodel_v3 = {\n"
		"HML_CMODEL_MAGIC, 3, sizeof(hml_cmodel_v3_info), 1, HML_CMODEL_TAG, 1, 1, {5}, {1},"
		" 5, 1, \"t\", \"\", \"a\", f, d, \"{}\", 0 };\n"
		"#else\n"
		"__attribute__((visibility(\"default\"))) const hml_cmodel_v2_info hml_cmodel_v2 = {\n"
		"HML_CMODEL_MAGIC, 2, sizeof(hml_cmodel_v2_info), 1, HML_CMODEL_V2_TAG, 1, 1, {5}, {1},"
		" 5, 1, \"t\", \"\", \"a\", f, d, \"{}\" };\n"
		"#endif\n";
	char flags[1024];
	hml__cmodel *cm = NULL;
	int64_t shape[2] = { 2, 5 }, os[HML_MAX_DIMS];
	int32_t xi[10] = { 0 };
	float x[10] = { 3, 0, 0, 0, 0, 4 };
	const void *out;
	hml_dtype dt;
	int nd;

	write_text(tmp_path("older.c"), src);
	snprintf(flags, sizeof(flags), "-I'%s/runtime/include' -DV3=0",
	         getenv("HML_SOURCE_DIR") ? getenv("HML_SOURCE_DIR") : ".");
	CHECK(compile_so(tmp_path("older.c"), tmp_path("v2.so"), flags) == 0);
	CHECK_OK(hml__cmodel_load(&cm, tmp_path("v2.so")));
	if (cm) {
		CHECK_EQ_INT(hml__cmodel_abi(cm), 2);
		CHECK_STR(hml__cmodel_input_stats(cm), "{}");
		CHECK_EQ_INT(hml__cmodel_takes(cm, HML_I32), 0);
		CHECK_EQ_INT(hml__cmodel_takes(cm, HML_F64), 1);
		CHECK_FAILS(hml__cmodel_forward(cm, xi, HML_I32, 2, shape), HML_EINVALID,
		            "bad input dtype");
		CHECK_OK(hml__cmodel_forward(cm, x, HML_F32, 2, shape));
		CHECK_OK(hml__cmodel_output(cm, &out, &dt, &nd, os));
		CHECK(dt == HML_F32 && ((const float *)out)[0] == 4 && ((const float *)out)[1] == 5);
	}
	hml__cmodel_free(cm);
	cm = NULL;
	snprintf(flags, sizeof(flags), "-I'%s/runtime/include' -DV3=1",
	         getenv("HML_SOURCE_DIR") ? getenv("HML_SOURCE_DIR") : ".");
	CHECK(compile_so(tmp_path("older.c"), tmp_path("v3null.so"), flags) == 0);
	CHECK_FAILS(hml__cmodel_load(&cm, tmp_path("v3null.so")), HML_EMODEL,
	            "its shapes or functions are not valid");
	CHECK(cm == NULL);
}

/* A region hands a compiled model the application's own array when it can
 * (one contiguous map, a dtype the model reads: float64, and int32 from
 * ABI version 3), else a gathered float32 copy: a fake model answers which
 * forward ran and on what pointer. */
TEST(region_reads_app_arrays)
{
	static const char src[] =
		"#include <stdint.h>\n#include \"hml/cmodel.h\"\n"
		"static int which; static const void *seen;\n"
		"__attribute__((visibility(\"default\"))) int probe(const void **p)\n"
		"{ *p = seen; return which; }\n"
		"static int f(const float *x, float *y, int64_t r) { which = 32; seen = x;\n"
		"  for (int64_t i = 0; i < r; i++) y[i] = x[5 * i] + x[5 * i + 4]; return 0; }\n"
		"static int d(const double *x, double *y, int64_t r) { which = 64; seen = x;\n"
		"  for (int64_t i = 0; i < r; i++) y[i] = x[5 * i] + x[5 * i + 4]; return 0; }\n"
		"static int n(const int32_t *x, float *y, int64_t r) { which = 3; seen = x;\n"
		"  for (int64_t i = 0; i < r; i++) y[i] = (float)(x[5 * i] + x[5 * i + 4]); return 0; }\n"
		"__attribute__((visibility(\"default\"))) const hml_cmodel_v3_info hml_cmodel_v3 = {\n"
		"HML_CMODEL_MAGIC, 3, sizeof(hml_cmodel_v3_info), 1, HML_CMODEL_TAG, 1, 1, {5}, {1},"
		" 5, 1, \"t\", \"\", \"a\", f, d, 0, n };\n";
	enum { R = 6 };
	int32_t xi[R][5], xa[R][2], xb[R][3];
	double xd[R][5], y[R];
	hml_symbol sym = { "N", R };
	hml_array out = HML_ARRAY_1D(y, HML_F64, R);
	struct {
		const char *so, *functor;
		hml_array in[2];
		size_t n;
		int which;          /* the forward the model must run: 3, 64 or 32 */
		const void *seen;   /* the pointer it gets; NULL: a copy */
	} cases[] = {
		{ "probe.so", "[i, 0:5] = ([i, 0:5])", { HML_ARRAY_2D(xi, HML_I32, R, 5) }, 1, 3, xi },
		{ "probe.so", "[i, 0:5] = ([i, 0:5])", { HML_ARRAY_2D(xd, HML_F64, R, 5) }, 1, 64, xd },
		{ "probe.so", "[i, 0:5] = ([i, 0:2], [i, 0:3])",
		  { HML_ARRAY_2D(xa, HML_I32, R, 2), HML_ARRAY_2D(xb, HML_I32, R, 3) }, 2, 32, NULL },
		{ "v2.so", "[i, 0:5] = ([i, 0:5])", { HML_ARRAY_2D(xi, HML_I32, R, 5) }, 1, 0, NULL },
	};
	char flags[1024];
	int (*probe)(const void **) = NULL;
	void *h, *sym_probe;

	write_text(tmp_path("probe.c"), src);
	snprintf(flags, sizeof(flags), "-I'%s/runtime/include'",
	         getenv("HML_SOURCE_DIR") ? getenv("HML_SOURCE_DIR") : ".");
	CHECK(compile_so(tmp_path("probe.c"), tmp_path("probe.so"), flags) == 0);
	for (int i = 0; i < R; i++)
		for (int j = 0; j < 5; j++) {
			xi[i][j] = 100 * i - 7 * j;
			xd[i][j] = xi[i][j] + 0.5;
			if (j < 2)
				xa[i][j] = xi[i][j];
			else
				xb[i][j - 2] = xi[i][j];
		}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		hml_region_options o;
		hml_region *r = NULL;
		const void *seen = NULL;
		char model[512];

		snprintf(model, sizeof(model), "%s", tmp_path(cases[c].so));
		CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
		o.mode = HML_MODE_INFER;
		o.on_error = HML_ON_ERROR_FAIL;
		o.model = model;
		CHECK_OK(hml_region_open(&r, "direct", &o));
		if (!r)
			return;
		CHECK_EQ_INT(hml_region_input(r, cases[c].functor, "0:N", cases[c].in, cases[c].n,
		                              &sym, 1), 0);
		CHECK_EQ_INT(hml_region_output(r, "[i, 0:1] = ([i])", "0:N", &out, 1, &sym, 1), 0);
		memset(y, 0, sizeof(y));
		CHECK_EQ_INT(hml_region_begin(r), 0);   /* the model ran */
		CHECK_OK(hml_region_end(r));
		for (int i = 0; i < R; i++)   /* v2.so's f: x[0] + 1 */
			CHECK(y[i] == (cases[c].which ? xi[i][0] + xi[i][4] : xi[i][0] + 1) +
			              (cases[c].which == 64 ? 1.0 : 0.0));
		if (cases[c].which) {
			h = dlopen(model, RTLD_NOW | RTLD_LOCAL);
			CHECK(h && (sym_probe = dlsym(h, "probe")));
			if (h && sym_probe) {
				memcpy(&probe, &sym_probe, sizeof(sym_probe));
				CHECK_EQ_INT(probe(&seen), cases[c].which);
				CHECK(cases[c].seen ? seen == cases[c].seen
				                    : seen != cases[c].in[0].data && seen != NULL);
			}
			if (h)
				dlclose(h);
		}
		hml_region_free(r);
	}
}

int main(void)
{
	if (tmp_dir_make("cmodel") < 0)
		return 1;
	RUN(mlp_every_activation);
	RUN(activation_accuracy);
	RUN(mlp_batches);
	RUN(mlp_inputs_far_from_zero);
	RUN(mlp_gemm_path);
	RUN(cnn);
	RUN(cnn_gemm_path);
	RUN(standalone);
	RUN(refused);
	RUN(no_code_before_check);
	RUN(threads);
	RUN(older_versions);
	RUN(region_reads_app_arrays);
	tmp_dir_remove();
	return check_report();
}
