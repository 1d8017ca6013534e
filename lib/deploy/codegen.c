/*
 * lib/deploy/codegen.c - the C deployment form of an hml model (see codegen.h).
 *
 * MLP kernel: weights are written transposed ([in][out]) so that the inner
 * loop runs over a layer's outputs with unit stride and vectorises without
 * reassociating any sum: every output is still accumulated in input order,
 * bias first, as a plain dot product would. Rows go through in blocks of
 * BR (the accumulators of a block stay in L1 and each weight row is loaded
 * once per block); a single row takes a copy of the kernel specialised to
 * one row. Two ping-pong buffers of BR x (widest layer) floats on the stack
 * are the only intermediates. Large batches of a wide MLP may take the
 * sgemm path instead (put_mlp_gemm), whose weights are the same arrays:
 * [in][out] is sgemm's row-major B.
 *
 * CNN and cnnvec kernels: one sample at a time on zero-padded planes, each
 * conv layer in register-blocked direct loops (cg_conv.c); a very wide
 * conv layer may instead be im2col + sgemm (put_conv_gemm), whose weights,
 * [out][in][k][k], are sgemm's row-major A.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/beneath.h"
#include "core/error.h"
#include "deploy/cg_conv.h"
#include "deploy/codegen.h"
#include "hml/cmodel.h"

/* The body of `static inline float act(float v)` for each activation;
 * "%1$s" is the model's id. tanh, GELU, SiLU and sigmoid use the
 * branch-free exp/erfc/tanh below instead of libm's tanhf/expf/erff, which
 * are a call per element the compiler cannot vectorise (7-14 ns per erff
 * here: most of a GELU MLP's time at batch 4096; tanhf made a 4x106 tanh
 * MLP 4x slower at batch 4096). With -fno-trapping-math (lib/deploy/cbuild.h) the
 * activation loops vectorise; without it they are correct, only scalar. */
static const char *const act_bodies[] = {
	"return v;",
	"return v > 0.0f ? v : 0.0f;",
	"return hml_%1$s_tanhf(v);",
	"return 0.5f * v * hml_%1$s_erfc(v * -0.707106781186547524f);",
	"return v / (1.0f + hml_%1$s_exp(-v));",
	"return 1.0f / (1.0f + hml_%1$s_exp(-v));",
};
#define NACT ((int)(sizeof(act_bodies) / sizeof(act_bodies[0])))

/*
 * exp(x) for float, branch-free: x clamped to [-87, 88], n = the nearest
 * integer to x / ln 2 (the 1.5 * 2^23 rounding trick), r = x - n ln 2 in
 * two parts (Cody and Waite), e^r by its Taylor polynomial of degree 7
 * (|r| <= ln 2 / 2: relative error < 1e-7), times 2^n built in the
 * exponent bits. erfc(x) by the Chebyshev fit of Numerical Recipes
 * (erfcc, relative error < 1.2e-7 everywhere), so that GELU = v/2
 * erfc(-v/sqrt 2) stays relatively accurate where it is small. tanh(x):
 * below |x| = 0.625, x + x^3 P(x^2) with P the degree-4 minimax fit of
 * (tanh x - x) / x^3 in relative error (fitted here with numpy; 7.9e-8
 * evaluated in float); above, 1 - 2 / (e^2|x| + 1) with x's sign; both
 * computed and one selected, so that the loop stays branch-free. Measured
 * against double precision: exp 9.2e-8, GELU 1.1e-6 relative (where
 * |GELU| > 1e-3), SiLU 1.6e-7, tanh 1.2e-7 (tests/unit/cmodel.c).
 */
static const char exp_erfc_source[] =
	"\nstatic inline float hml_%1$s_exp(float x)\n{\n"
	"\tx = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);\n"
	"\tconst float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;\n"
	"\tconst float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;\n"
	"\tfloat p = 1.0f / 5040.0f;\n"
	"\tp = p * r + 1.0f / 720.0f;\n\tp = p * r + 1.0f / 120.0f;\n"
	"\tp = p * r + 1.0f / 24.0f;\n\tp = p * r + 1.0f / 6.0f;\n"
	"\tp = p * r + 0.5f;\n\tp = p * r + 1.0f;\n\tp = p * r + 1.0f;\n"
	"\tunion { unsigned int u; float f; } b;\n"
	"\tb.u = (unsigned int)((int)n + 127) << 23;\n"
	"\treturn p * b.f;\n}\n"
	"\nstatic inline float hml_%1$s_erfc(float x)\n{\n"
	"\tconst float z = fabsf(x), t = 1.0f / (1.0f + 0.5f * z);\n"
	"\tfloat q = 0.17087277f;\n"
	"\tq = q * t - 0.82215223f;\n\tq = q * t + 1.48851587f;\n"
	"\tq = q * t - 1.13520398f;\n\tq = q * t + 0.27886807f;\n"
	"\tq = q * t - 0.18628806f;\n\tq = q * t + 0.09678418f;\n"
	"\tq = q * t + 0.37409196f;\n\tq = q * t + 1.00002368f;\n"
	"\tconst float e = t * hml_%1$s_exp(q * t - 1.26551223f - z * z);\n"
	"\treturn x >= 0.0f ? e : 2.0f - e;\n}\n"
	"\nstatic inline float hml_%1$s_tanhf(float x)\n{\n"
	"\tconst float a = fabsf(x), s = x * x;\n"
	"\tfloat p = -5.704984390e-03f;\n"
	"\tp = p * s + 2.063908505e-02f;\n\tp = p * s - 5.373971446e-02f;\n"
	"\tp = p * s + 1.333144219e-01f;\n\tp = p * s - 3.333328194e-01f;\n"
	"\tconst float small = p * s * x + x;\n"
	"\tconst float big = 1.0f - 2.0f / (hml_%1$s_exp(2.0f * a) + 1.0f);\n"
	"\treturn a < 0.625f ? small : (x < 0.0f ? -big : big);\n}\n";

/* --- writing C --------------------------------------------------------- */

typedef struct gen {
	FILE *f;
	const hml__cg_model *m;
	const char *id;
	char up[64];       /* the id in upper case */
	int br;            /* MLP rows per block */
	int64_t maxw;      /* widest hidden layer */
	int chunk;         /* MLP sgemm path: rows per chunk */
	int gemm_rows;     /* MLP sgemm path: from this many rows; 0: no such path */
} gen;

/* OpenMP over rows from this many rows (block and sgemm paths). */
#define OMP_ROWS 1024
/* A layer goes through sgemm when it has at least this many inputs and
 * outputs (below, the call costs more than the loop it replaces). */
#define GEMM_MIN_WIDTH 16
/* The sgemm path is taken from the batch at which its widest layer does
 * this many multiply-adds (rows x in x out): measured with bench/cmodel.sh
 * on a 2-core AMD EPYC (Zen 3), where it wins from 64 rows for 250 x 250
 * and from 256 rows for 64 x 64 layers, and loses below. */
#define GEMM_MACS (1 << 20)
/* Rows per chunk of the sgemm path: a chunk's two activation buffers
 * (chunk x widest layer floats each) stay within a core's L2. */
#define GEMM_CHUNK_FLOATS 65536

/* (The first layer of a model with categorical features reads the row
 * itself, put_mlp_first: never sgemm.) */
static int mlp_gemm_layer(const hml__cg_model *m, int l)
{
	return m->layers[l].in >= GEMM_MIN_WIDTH && m->layers[l].out >= GEMM_MIN_WIDTH &&
	       !(l == 0 && m->ncat > 0);
}

static int gemm_layer(const gen *g, int l)
{
	return mlp_gemm_layer(g->m, l);
}

/* A conv layer goes through im2col + sgemm (compiled with
 * -DHML_CMODEL_CBLAS) when it has at least CONV_GEMM_MIN_OUT output
 * channels and CONV_GEMM_MIN_K inputs per output (channels x kernel^2).
 * The register-blocked direct loops (cg_conv.c) beat it on every model
 * bench/cnn.sh times, up to 64 -> 64 channels 7x7 (3136 inputs per
 * output: 1.07x to 1.46x on one core) and on miniWeather's and the
 * particle filter's defaults (1.5x, 1.8x); sgemm is kept for wider layers
 * than were measured. The column matrix of a tile of image rows holds at
 * most CONV_GEMM_COL floats (4 MiB), however large the field. */
#define CONV_GEMM_MIN_OUT 128
#define CONV_GEMM_MIN_K 1024
#define CONV_GEMM_COL (1 << 20)

static int conv_gemm_layer(const hml__cg_model *m, int l)
{
	const hml__cg_layer *y = &m->layers[l];

	return y->kernel > 0 && y->out >= CONV_GEMM_MIN_OUT &&
	       y->in * y->kernel * y->kernel >= CONV_GEMM_MIN_K;
}

/* Image rows per im2col tile of conv layer l on a w-wide map (h rows). */
static int64_t conv_gemm_rows(const hml__cg_layer *y, int64_t h, int64_t w)
{
	int64_t k = y->in * y->kernel * y->kernel, rb = CONV_GEMM_COL / (k * w);

	return rb < 1 ? 1 : rb > h ? h : rb;
}

static const char cblas_decl[] =
	"/* OpenBLAS's CBLAS sgemm (32-bit integers; 101 row-major, 111 no transpose) */\n"
	"void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha,\n"
	"                 const float *a, int lda, const float *b, int ldb, float beta,\n"
	"                 float *c, int ldc);\n";

/*
 * Conv layer l as sgemm (inside #ifdef HML_CMODEL_CBLAS): dst[co][i*w + j]
 * = bias + the weights ([out][in * k * k], as stored) times the column
 * matrix of the input planes `src` (plane floats each, rows of wp floats,
 * the h x w map at offset `off` + the kernel's reach), built a tile of
 * image rows at a time in `col`. The activation is the caller's. The sums
 * are sgemm's order: agreement with TorchScript is checked as for the
 * direct loop (unit.cmodel, e2e 065).
 */
static void put_conv_gemm(gen *g, int l, int64_t h, int64_t w, long long plane, long long wp,
                          int off, const char *src, const char *dst)
{
	const hml__cg_layer *y = &g->m->layers[l];
	long long k = y->kernel, kk = (long long)y->in * k * k, hw = (long long)(h * w);
	long long rb = (long long)conv_gemm_rows(y, h, w), out = (long long)y->out;

	fprintf(g->f, "\t/* layer %d: conv %lld -> %lld, %lldx%lld, %s: im2col tiles of %lld "
	        "rows + sgemm */\n", l, (long long)y->in, out, k, k, hml__cg_act_name(y->act), rb);
	fprintf(g->f,
		"\tfor (int co = 0; co < %lld; co++)\n\t\tfor (int q = 0; q < %lld; q++)\n"
		"\t\t\t%s[co * %lld + q] = hml_%s_b%d[co];\n",
		out, hw, dst, hw, g->id, l);
	fprintf(g->f,
		"\tfor (int i0 = 0; i0 < %lld; i0 += %lld) {\n"
		"\t\tconst int rb = %lld - i0 < %lld ? %lld - i0 : %lld;\n\n"
		"\t\tfor (int ci = 0; ci < %lld; ci++)\n"
		"\t\t\tfor (int ky = 0; ky < %lld; ky++)\n\t\t\t\tfor (int kx = 0; kx < %lld; kx++) {\n"
		"\t\t\t\t\tfloat *cr = col + ((ci * %lld + ky) * %lld + kx) * rb * %lld;\n\n",
		(long long)h, rb, (long long)h, rb, (long long)h, rb,
		(long long)y->in, k, k, k, k, (long long)w);
	fprintf(g->f,
		"\t\t\t\t\tfor (int i = 0; i < rb; i++) {\n"
		"\t\t\t\t\t\tconst float *s = %s + ci * %lld + (i0 + i + ky + %d) * %lld + kx + %d;\n\n"
		"\t\t\t\t\t\tfor (int j = 0; j < %lld; j++)\n"
		"\t\t\t\t\t\t\tcr[i * %lld + j] = s[j];\n"
		"\t\t\t\t\t}\n\t\t\t\t}\n",
		src, plane, off, wp, off, (long long)w, (long long)w);
	fprintf(g->f,
		"\t\tcblas_sgemm(101, 111, 111, %lld, rb * %lld, %lld, 1.0f, hml_%s_w%d, %lld, col, "
		"rb * %lld, 1.0f, %s + i0 * %lld, %lld);\n\t}\n",
		out, (long long)w, kk, g->id, l, kk, (long long)w, dst, (long long)w, hw);
}

/* The sgemm scratch of a CNN: the largest column tile and, when `outs`,
 * the largest conv result (out x h x w); 0 without a gemm layer. */
static int64_t conv_gemm_scratch(const hml__cg_model *m, int64_t h, int64_t w, int outs)
{
	int64_t col = 0, out = 0;
	int nconv = m->family == HML__CG_CNN ? m->nlayers : m->nconv;

	for (int l = 0; l < nconv; l++) {
		const hml__cg_layer *y = &m->layers[l];

		if (conv_gemm_layer(m, l)) {
			int64_t c = y->in * y->kernel * y->kernel * conv_gemm_rows(y, h, w) * w;

			col = c > col ? c : col;
			out = y->out * h * w > out ? y->out * h * w : out;
		}
		if (m->family == HML__CG_CNNVEC)
			h /= m->pool, w /= m->pool;
	}
	return col ? col + (outs ? out : 0) : 0;
}

/* #define HML_<ID>_GSCRATCH: the sgemm scratch after the sample's (0
 * without CBLAS or a gemm layer), and sgemm's declaration when used. */
static void put_gemm_scratch(gen *g, int64_t n)
{
	if (n > 0)
		fprintf(g->f, "\n#ifdef HML_CMODEL_CBLAS\n%s#define HML_%s_GSCRATCH %lld\n#else\n"
		        "#define HML_%s_GSCRATCH 0\n#endif\n", cblas_decl, g->up, (long long)n, g->up);
	else
		fprintf(g->f, "\n#define HML_%s_GSCRATCH 0\n", g->up);
}

/* A float constant that reads back as the same float. */
static void put_float(FILE *f, double v)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%.9g", (double)(float)v);
	fputs(buf, f);
	if (!strpbrk(buf, ".e"))
		fputs(".0", f);
	fputc('f', f);
}

static void put_array(FILE *f, const double *v, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		fputs(i % 6 == 0 ? "\n\t" : " ", f);
		put_float(f, v[i]);
		fputc(',', f);
	}
	fputc('\n', f);
}

/*
 * Layer l's weights and bias in double with the normalisation folded in,
 * laid out for the kernel: MLP [in][out] (transposed), CNN [out][in][k][k].
 * The MLP's input scale folds into layer 0's weights, its input mean does
 * not: folded into the bias, a mean far from zero (dates, prices) would make
 * layer 0 a float sum of large terms that cancel, losing the digits the
 * model needs; the kernel subtracts the mean from each input instead, as
 * the TorchScript model does.
 */
static int folded(const hml__cg_model *m, int l, double **w_out, double **b_out)
{
	const hml__cg_layer *y = &m->layers[l];
	int64_t n = hml__cg_model_weights(m, l), kk = y->kernel ? (int64_t)y->kernel * y->kernel : 1;
	double *w = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)y->out * sizeof(double));

	if (!w || !b) {
		free(w);
		free(b);
		return hml__error_oom();
	}
	for (int64_t o = 0; o < y->out; o++) {
		double bias = y->bias[o];

		for (int64_t i = 0; i < y->in; i++) {
			for (int64_t k = 0; k < kk; k++) {
				double v = y->weight[(o * y->in + i) * kk + k];

				if (l == 0 && m->family == HML__CG_MLP)
					v /= (double)m->in_std[i];
				if (l == m->nlayers - 1)
					v *= (double)m->out_std[o];
				if (y->kernel == 0)
					w[i * y->out + o] = v;
				else
					w[(o * y->in + i) * kk + k] = v;
			}
		}
		if (l == m->nlayers - 1)
			bias = bias * (double)m->out_std[o] + (double)m->out_mean[o];
		b[o] = bias;
	}
	*w_out = w;
	*b_out = b;
	return 0;
}

static int put_constants(gen *g)
{
	const hml__cg_model *m = g->m;

	for (int l = 0; l < m->nlayers; l++) {
		const hml__cg_layer *y = &m->layers[l];
		double *w = NULL, *b = NULL;
		int rc;

		if ((rc = folded(m, l, &w, &b)) < 0)
			return rc;
		if (y->kernel == 0)
			fprintf(g->f, "\n/* layer %d: %lld -> %lld, %s */\n"
			        "static const float hml_%s_w%d[%lld * %lld] = {", l, (long long)y->in,
			        (long long)y->out, hml__cg_act_name(y->act), g->id, l, (long long)y->in,
			        (long long)y->out);
		else
			fprintf(g->f, "\n/* layer %d: conv %lld -> %lld channels, %dx%d, %s */\n"
			        "static const float hml_%s_w%d[%lld * %lld * %d * %d] = {", l,
			        (long long)y->in, (long long)y->out, y->kernel, y->kernel,
			        hml__cg_act_name(y->act), g->id, l, (long long)y->out, (long long)y->in,
			        y->kernel, y->kernel);
		put_array(g->f, w, hml__cg_model_weights(m, l));
		fprintf(g->f, "};\nstatic const float hml_%s_b%d[%lld] = {", g->id, l, (long long)y->out);
		put_array(g->f, b, y->out);
		fputs("};\n", g->f);
		free(w);
		free(b);
	}
	{ /* the input normalisation (the MLP's scale is in layer 0's weights) */
		int64_t c = m->layers[0].in;
		double *v = malloc((size_t)c * 2 * sizeof(double));

		if (!v)
			return hml__error_oom();
		for (int64_t i = 0; i < c; i++) {
			v[i] = m->in_mean[i];
			v[c + i] = m->in_std[i];
		}
		fprintf(g->f, "\n/* input normalisation per %s: mean%s */\n"
		        "static const float hml_%s_in_mean[%lld] = {",
		        m->family == HML__CG_MLP ? "feature" : "channel",
		        m->family == HML__CG_MLP ? " (1/std is folded into layer 0)" : ", std",
		        g->id, (long long)c);
		put_array(g->f, v, c);
		if (m->family != HML__CG_MLP) {
			fprintf(g->f, "};\nstatic const float hml_%s_in_std[%lld] = {", g->id, (long long)c);
			put_array(g->f, v + c, c);
		}
		fputs("};\n", g->f);
		free(v);
	}
	return 0;
}

/* The categorical features' tables (put_mlp_first): the continuous
 * features' indices in the row, each categorical feature's index, classes
 * and the row of layer 0's transposed weights that holds its class 0. */
static void put_categorical(gen *g)
{
	const hml__cg_model *m = g->m;
	int64_t nin = hml__cg_model_in_size(m), ncont = nin - m->ncat, base = ncont;
	int c = 0;

	fprintf(g->f, "\n/* categorical features: one-hot inside the model, read as a row of\n"
	        " * layer 0's weights; a class outside 0..K-1 adds nothing */\n");
	if (ncont > 0) {
		fprintf(g->f, "static const int hml_%s_cont[%lld] = {", g->id, (long long)ncont);
		for (int64_t f = 0; f < nin; f++) {
			if (c < m->ncat && m->cat_feature[c] == f)
				c++;
			else
				fprintf(g->f, " %lld,", (long long)f);
		}
		fputs(" };\n", g->f);
	}
	fprintf(g->f, "static const int hml_%s_cat_feature[%d] = {", g->id, m->ncat);
	for (c = 0; c < m->ncat; c++)
		fprintf(g->f, " %lld,", (long long)m->cat_feature[c]);
	fprintf(g->f, " };\nstatic const float hml_%s_cat_classes[%d] = {", g->id, m->ncat);
	for (c = 0; c < m->ncat; c++)
		fprintf(g->f, " %lld.0f,", (long long)m->cat_classes[c]);
	fprintf(g->f, " };\nstatic const int hml_%s_cat_base[%d] = {", g->id, m->ncat);
	for (c = 0; c < m->ncat; c++) {
		fprintf(g->f, " %lld,", (long long)base);
		base += m->cat_classes[c];
	}
	fputs(" };\n", g->f);
}

static void put_activations(gen *g)
{
	int used[NACT] = { 0 };

	for (int l = 0; l < g->m->nlayers; l++)
		used[g->m->layers[l].act] = 1;
	if (used[HML__ACT_TANH] || used[HML__ACT_GELU] || used[HML__ACT_SILU] ||
	    used[HML__ACT_SIGMOID])
		fprintf(g->f, exp_erfc_source, g->id);
	for (int a = 0; a < NACT; a++)
		if (used[a]) {
			fprintf(g->f, "\nstatic inline float hml_%s_%s(float v)\n{\n\t", g->id,
			        hml__cg_act_name((hml__cg_act)a));
			fprintf(g->f, act_bodies[a], g->id);
			fputs("\n}\n", g->f);
		}
}

/*
 * The sums of layer 0 of a model with categorical features, after its
 * bias: the continuous features (normalised as the plain kernel does),
 * then for each categorical feature the one row of the transposed weights
 * its class selects (one-hot times the weights; no K-wide multiply), none
 * for a class outside 0..K-1. rintf rounds half to even, as torch.round.
 */
static void put_mlp_first(gen *g, const char *rows, const char *src, const char *sstride,
                          const char *dst, const char *dstride)
{
	const hml__cg_model *m = g->m;
	long long out = m->layers[0].out, ncont = hml__cg_model_in_size(m) - m->ncat;
	const char *id = g->id;

	if (ncont > 0)
		fprintf(g->f, "\tfor (int i = 0; i < %lld; i++)\n\t\tfor (int k = 0; k < %s; k++) {\n"
		        "\t\t\tconst float v = %s[k * %s + hml_%s_cont[i]] - hml_%s_in_mean[i];\n"
		        "\t\t\tfloat *restrict o = %s + k * %s;\n\n"
		        "\t\t\tfor (int j = 0; j < %lld; j++)\n\t\t\t\to[j] += v * hml_%s_w0[i * %lld + j];\n"
		        "\t\t}\n", ncont, rows, src, sstride, id, id, dst, dstride, out, id, out);
	fprintf(g->f, "\tfor (int c = 0; c < %d; c++)\n\t\tfor (int k = 0; k < %s; k++) {\n"
	        "\t\t\tconst float v = rintf(%s[k * %s + hml_%s_cat_feature[c]]);\n\n"
	        "\t\t\tif (v >= 0.0f && v < hml_%s_cat_classes[c]) {\n"
	        "\t\t\t\tconst float *restrict w = hml_%s_w0 + (hml_%s_cat_base[c] + (int)v) * %lld;\n"
	        "\t\t\t\tfloat *restrict o = %s + k * %s;\n\n"
	        "\t\t\t\tfor (int j = 0; j < %lld; j++)\n\t\t\t\t\to[j] += w[j];\n"
	        "\t\t\t}\n\t\t}\n", m->ncat, rows, src, sstride, id, id, id, id, out, dst, dstride,
	        out);
}

/*
 * One MLP layer over `rows` rows (a literal: "1" or "r"): from `src` (row
 * stride `sstride`) into `dst` (row stride `dstride`), bias, then the sum
 * in input order, then the activation, all on the block's accumulators.
 */
static void put_mlp_layer(gen *g, int l, const char *rows, const char *src, const char *sstride,
                          const char *dst, const char *dstride)
{
	const hml__cg_layer *y = &g->m->layers[l];
	long long in = y->in, out = y->out;
	const char *id = g->id;

	fprintf(g->f, "\t/* layer %d: %lld -> %lld, %s */\n", l, in, out, hml__cg_act_name(y->act));
	fprintf(g->f, "\tfor (int k = 0; k < %s; k++)\n\t\tfor (int j = 0; j < %lld; j++)\n"
	        "\t\t\t%s[k * %s + j] = hml_%s_b%d[j];\n", rows, out, dst, dstride, id, l);
	if (l == 0 && g->m->ncat > 0) {
		put_mlp_first(g, rows, src, sstride, dst, dstride);
	} else {
		fprintf(g->f, "\tfor (int i = 0; i < %lld; i++)\n\t\tfor (int k = 0; k < %s; k++) {\n"
		        "\t\t\tconst float v = %s[k * %s + i]", in, rows, src, sstride);
		if (l == 0 && g->m->family == HML__CG_MLP)
			fprintf(g->f, " - hml_%s_in_mean[i]", id);
		fprintf(g->f, ";\n\t\t\tfloat *restrict o = %s + k * %s;\n\n"
		        "\t\t\tfor (int j = 0; j < %lld; j++)\n\t\t\t\to[j] += v * hml_%s_w%d[i * %lld + j];\n"
		        "\t\t}\n", dst, dstride, out, id, l, out);
	}
	if (y->act != HML__ACT_IDENTITY)
		fprintf(g->f, "\tfor (int k = 0; k < %s; k++)\n\t\tfor (int j = 0; j < %lld; j++)\n"
		        "\t\t\t%s[k * %s + j] = hml_%s_%s(%s[k * %s + j]);\n", rows, out, dst,
		        dstride, id, hml__cg_act_name(y->act), dst, dstride);
}

/* static void hml_<id>_<name>(const float *x, float *y[, int r]): the MLP
 * on one row (rows = "1") or on a block of r <= BR rows. */
static void put_mlp_kernel(gen *g, const char *name, const char *rows, int nrows)
{
	const hml__cg_model *m = g->m;
	char in_stride[32], out_stride[32], w_stride[32];

	snprintf(in_stride, sizeof(in_stride), "%lld", (long long)hml__cg_model_in_size(m));
	snprintf(out_stride, sizeof(out_stride), "%lld", (long long)m->layers[m->nlayers - 1].out);
	snprintf(w_stride, sizeof(w_stride), "%lld", (long long)g->maxw);
	fprintf(g->f, "\nHML_%s_KERNEL\nstatic void hml_%s_%s(const float *restrict x, float *restrict y%s)\n{\n",
	        g->up, g->id, name, nrows > 1 ? ", const int r" : "");
	if (m->nlayers > 1)
		fprintf(g->f, "\tfloat h[2][%d * %lld];\n\n", nrows, (long long)g->maxw);
	for (int l = 0; l < m->nlayers; l++) {
		char src[16], dst[16];
		int last = l == m->nlayers - 1;

		snprintf(src, sizeof(src), l == 0 ? "x" : "h[%d]", (l - 1) % 2);
		snprintf(dst, sizeof(dst), last ? "y" : "h[%d]", l % 2);
		put_mlp_layer(g, l, rows, src, l == 0 ? in_stride : w_stride, dst,
		              last ? out_stride : w_stride);
	}
	fputs("}\n", g->f);
}

/*
 * The sgemm path (compiled with -DHML_CMODEL_CBLAS, which lib/deploy/cbuild.c
 * defines when it links OpenBLAS): rows go through in chunks of g->chunk,
 * each layer wide enough for sgemm (GEMM_MIN_WIDTH inputs and outputs)
 * as bias copy + cblas_sgemm + activation pass over the chunk, the others
 * (the first layer's few inputs, the last layer's few outputs) as in the
 * block kernel. OpenMP over chunks from OMP_ROWS rows, as the block path;
 * each thread sets its own nthreads ICV to 1 inside the region (scoped to
 * it), so that OpenBLAS's OpenMP build runs one thread per call, also below
 * OMP_ROWS where the region is inactive: the thread count is the block
 * path's, OpenMP's. The sums are sgemm's order,
 * not input order: agreement with TorchScript (itself sgemm) is unchanged
 * in kind (unit.cmodel, e2e 065).
 */
static void put_mlp_gemm(gen *g)
{
	const hml__cg_model *m = g->m;
	long long nin = hml__cg_model_in_size(m), nout = m->layers[m->nlayers - 1].out;
	long long ch = g->chunk, w = (long long)g->maxw;
	const char *id = g->id;
	char in_stride[32], out_stride[32], w_stride[32];

	snprintf(in_stride, sizeof(in_stride), "%lld", nin);
	snprintf(out_stride, sizeof(out_stride), "%lld", nout);
	snprintf(w_stride, sizeof(w_stride), "%lld", w);
	fprintf(g->f, "\n#ifdef HML_CMODEL_CBLAS\n#ifdef _OPENMP\n#include <omp.h>\n#endif\n"
	        "%s\n"
	        "/* r <= %lld rows; h: 2 * %lld * %lld floats */\n"
	        "HML_%s_KERNEL\nstatic void hml_%s_chunk(const float *restrict x, float *restrict y, "
	        "const int r, float *restrict h)\n{\n"
	        "\tfloat *restrict hc[2] = { h, h + %lld * %lld };\n\n",
	        cblas_decl, ch, ch, w, g->up, id, ch, w);
	for (int l = 0; l < m->nlayers; l++) {
		const hml__cg_layer *y = &m->layers[l];
		char src[16], dst[16];
		int last = l == m->nlayers - 1;
		const char *ss = l == 0 ? in_stride : w_stride, *ds = last ? out_stride : w_stride;

		snprintf(src, sizeof(src), l == 0 ? "x" : "hc[%d]", (l - 1) % 2);
		snprintf(dst, sizeof(dst), last ? "y" : "hc[%d]", l % 2);
		if (!gemm_layer(g, l)) {
			put_mlp_layer(g, l, "r", src, ss, dst, ds);
			continue;
		}
		fprintf(g->f, "\t/* layer %d: %lld -> %lld, %s, sgemm */\n"
		        "\tfor (int k = 0; k < r; k++)\n\t\tfor (int j = 0; j < %lld; j++)\n"
		        "\t\t\t%s[k * %s + j] = hml_%s_b%d[j];\n"
		        "\tcblas_sgemm(101, 111, 111, r, %lld, %lld, 1.0f, %s, %s, hml_%s_w%d, %lld, "
		        "1.0f, %s, %s);\n", l, (long long)y->in, (long long)y->out,
		        hml__cg_act_name(y->act), (long long)y->out, dst, ds, id, l, (long long)y->out,
		        (long long)y->in, src, ss, id, l, (long long)y->out, dst, ds);
		if (y->act != HML__ACT_IDENTITY)
			fprintf(g->f, "\tfor (int k = 0; k < r; k++)\n\t\tfor (int j = 0; j < %lld; j++)\n"
			        "\t\t\t%s[k * %s + j] = hml_%s_%s(%s[k * %s + j]);\n", (long long)y->out,
			        dst, ds, id, hml__cg_act_name(y->act), dst, ds);
	}
	fprintf(g->f, "}\n\n"
		"/* x, y: rows >= 1 rows of floats, or of doubles (f64) converted per chunk; 0, or -1\n"
		" * when scratch memory runs out */\n"
		"static int hml_%s_gemm(const void *x, void *y, int64_t rows, int f64)\n{\n"
		"\tconst int64_t nc = (rows + %lld - 1) / %lld;\n\tint failed = 0;\n\n"
		"#ifdef _OPENMP\n#pragma omp parallel if (rows >= %d)\n#endif\n"
		"\t{\n"
		"\t\tfloat *h = malloc((size_t)(2 * %lld * %lld + (f64 ? %lld * (%lld + %lld) : 0)) "
		"* sizeof(float));\n\n"
		"\t\tif (!h) {\n#ifdef _OPENMP\n#pragma omp atomic write\n#endif\n"
		"\t\t\tfailed = 1;\n\t\t}\n"
		"#ifdef _OPENMP\n"
		"\t\t/* this task's ICV only: OpenBLAS runs one thread per chunk, also when\n"
		"\t\t * the region is not active (fewer rows than OpenMP's threshold) */\n"
		"\t\tomp_set_num_threads(1);\n#endif\n"
		"#ifdef _OPENMP\n#pragma omp for schedule(static)\n#endif\n"
		"\t\tfor (int64_t c = 0; c < nc; c++) {\n"
		"\t\t\tconst int64_t i0 = c * %lld;\n"
		"\t\t\tconst int r = rows - i0 < %lld ? (int)(rows - i0) : %lld;\n\n"
		"\t\t\tif (!h)\n\t\t\t\tcontinue;\n"
		"\t\t\tif (!f64) {\n"
		"\t\t\t\thml_%s_chunk((const float *)x + i0 * %lld, (float *)y + i0 * %lld, r, h);\n"
		"\t\t\t} else {\n"
		"\t\t\t\tfloat *xf = h + 2 * %lld * %lld, *yf = xf + %lld * %lld;\n\n"
		"\t\t\t\tfor (int64_t k = 0; k < r * %lld; k++)\n"
		"\t\t\t\t\txf[k] = (float)((const double *)x)[i0 * %lld + k];\n"
		"\t\t\t\thml_%s_chunk(xf, yf, r, h);\n"
		"\t\t\t\tfor (int64_t k = 0; k < r * %lld; k++)\n"
		"\t\t\t\t\t((double *)y)[i0 * %lld + k] = yf[k];\n"
		"\t\t\t}\n\t\t}\n\t\tfree(h);\n\t}\n"
		"\treturn failed ? -1 : 0;\n}\n#endif\n",
		id, ch, ch, OMP_ROWS, ch, w, ch, nin, nout, ch, ch, ch, id, nin, nout, ch, w, ch, nin,
		nin, nin, id, nout, nout);
}

/* The sgemm path's entry, for batches of at least g->gemm_rows rows. */
static void put_gemm_call(gen *g, int f64)
{
	if (g->gemm_rows > 0)
		fprintf(g->f, "#ifdef HML_CMODEL_CBLAS\n\tif (rows >= %d)\n"
		        "\t\treturn hml_%s_gemm(x, y, rows, %d);\n#endif\n", g->gemm_rows, g->id, f64);
}

static void put_mlp(gen *g)
{
	const hml__cg_model *m = g->m;
	long long nin = hml__cg_model_in_size(m), nout = m->layers[m->nlayers - 1].out;
	const char *id = g->id;

	put_mlp_kernel(g, "row", "1", 1);
	put_mlp_kernel(g, "block", "r", g->br);
	if (g->gemm_rows > 0)
		put_mlp_gemm(g);
	fprintf(g->f,
		"\nint hml_%s_forward_f32(const float *x, float *y, int64_t rows)\n{\n"
		"\tconst int64_t nb = (rows + %d - 1) / %d;\n\n"
		"\tif (rows < %d) {\n"
		"\t\tfor (int64_t i = 0; i < rows; i++)\n"
		"\t\t\thml_%s_row(x + i * %lld, y + i * %lld);\n"
		"\t\treturn 0;\n\t}\n",
		id, g->br, g->br, 2 * g->br, id, nin, nout);
	put_gemm_call(g, 0);
	fprintf(g->f,
		"#ifdef _OPENMP\n#pragma omp parallel for schedule(static) if (rows >= %d)\n#endif\n"
		"\tfor (int64_t b = 0; b < nb; b++) {\n"
		"\t\tconst int64_t i = b * %d;\n\n"
		"\t\thml_%s_block(x + i * %lld, y + i * %lld, rows - i < %d ? (int)(rows - i) : %d);\n"
		"\t}\n\treturn 0;\n}\n",
		OMP_ROWS, g->br, id, nin, nout, g->br, g->br);
	fprintf(g->f,
		"\nint hml_%s_forward_f64(const double *x, double *y, int64_t rows)\n{\n"
		"\tconst int64_t nb = (rows + %d - 1) / %d;\n\n", id, g->br, g->br);
	put_gemm_call(g, 1);
	fprintf(g->f,
		"#ifdef _OPENMP\n#pragma omp parallel for schedule(static) if (rows >= %d)\n#endif\n"
		"\tfor (int64_t b = 0; b < nb; b++) {\n"
		"\t\tconst int64_t i0 = b * %d;\n"
		"\t\tconst int r = rows - i0 < %d ? (int)(rows - i0) : %d;\n"
		"\t\tfloat xf[%d * %lld], yf[%d * %lld];\n\n"
		"\t\tfor (int64_t k = 0; k < r * %lld; k++)\n"
		"\t\t\txf[k] = (float)x[i0 * %lld + k];\n"
		"\t\tif (r == 1)\n\t\t\thml_%s_row(xf, yf);\n"
		"\t\telse\n\t\t\thml_%s_block(xf, yf, r);\n"
		"\t\tfor (int64_t k = 0; k < r * %lld; k++)\n"
		"\t\t\ty[i0 * %lld + k] = yf[k];\n"
		"\t}\n\treturn 0;\n}\n",
		OMP_ROWS, g->br, g->br, g->br, g->br, nin, g->br, nout, nin, nin,
		id, id, nout, nout);
}

/*
 * The forwards of a CNN or cnnvec: rows samples through hml_<id>_sample,
 * spread over OpenMP threads from 2 samples, each thread with its own
 * scratch (zeroed: the planes' borders stay zero), and inside that region
 * OpenBLAS's OpenMP build runs single-threaded; one sample alone gets
 * OpenBLAS's threads. Samples of `nin` and `nout` floats.
 */
static void put_sample_forwards(gen *g, long long nin, long long nout)
{
	const char *id = g->id, *up = g->up;

	fprintf(g->f,
		"\n/* x, y: rows samples of floats, or of doubles (f64) converted per sample; 0, or -1\n"
		" * when scratch memory runs out */\n"
		"static int hml_%s_samples(const void *x, void *y, int64_t rows, int f64)\n{\n"
		"\tint failed = 0;\n\n\tif (rows <= 0)\n\t\treturn 0;\n"
		"#ifdef _OPENMP\n#pragma omp parallel if (rows >= 2)\n#endif\n"
		"\t{\n"
		"\t\tfloat *buf = calloc((size_t)(HML_%s_SCRATCH + HML_%s_GSCRATCH + (f64 ? %lld + %lld : 0)\n"
		"\t\t                             + %d), sizeof(float));\n\n"
		"\t\tif (!buf) {\n#ifdef _OPENMP\n#pragma omp atomic write\n#endif\n"
		"\t\t\tfailed = 1;\n\t\t}\n",
		id, up, up, nin, nout, HML__CG_CONV_SLACK);
	fprintf(g->f,
		"#ifdef _OPENMP\n#pragma omp for schedule(static)\n#endif\n"
		"\t\tfor (int64_t i = 0; i < rows; i++) {\n"
		"\t\t\tif (!buf)\n\t\t\t\tcontinue;\n"
		"\t\t\tif (!f64) {\n"
		"\t\t\t\thml_%s_sample((const float *)x + i * %lld, (float *)y + i * %lld, buf,\n"
		"\t\t\t\t               rows < 2);\n"
		"\t\t\t} else {\n"
		"\t\t\t\tfloat *xf = buf + HML_%s_SCRATCH + HML_%s_GSCRATCH, *yf = xf + %lld;\n\n"
		"\t\t\t\tfor (int64_t k = 0; k < %lld; k++)\n"
		"\t\t\t\t\txf[k] = (float)((const double *)x)[i * %lld + k];\n"
		"\t\t\t\thml_%s_sample(xf, yf, buf, rows < 2);\n"
		"\t\t\t\tfor (int64_t k = 0; k < %lld; k++)\n"
		"\t\t\t\t\t((double *)y)[i * %lld + k] = yf[k];\n"
		"\t\t\t}\n\t\t}\n\t\tfree(buf);\n\t}\n"
		"\treturn failed ? -1 : 0;\n}\n",
		id, nin, nout, up, up, nin, nin, nin, id, nout, nout);
	fprintf(g->f,
		"\nint hml_%s_forward_f32(const float *x, float *y, int64_t rows)\n{\n"
		"\treturn hml_%s_samples(x, y, rows, 0);\n}\n"
		"\nint hml_%s_forward_f64(const double *x, double *y, int64_t rows)\n{\n"
		"\treturn hml_%s_samples(x, y, rows, 1);\n}\n", id, id, id, id);
}

/* The CNN's sgemm path, a layer before the last: its result `src`
 * ([out][H x W]) with the activation into the next layer's padded planes. */
static void put_conv_place(gen *g, const hml__cg_layer *y, const char *src)
{
	char val[384];

	if (y->act == HML__ACT_IDENTITY)
		snprintf(val, sizeof(val), "%s[(co * HML_%s_H + i) * HML_%s_W + j]", src, g->up, g->up);
	else
		snprintf(val, sizeof(val), "hml_%s_%s(%s[(co * HML_%s_H + i) * HML_%s_W + j])", g->id,
		         hml__cg_act_name(y->act), src, g->up, g->up);
	fprintf(g->f, "\tfor (int co = 0; co < %lld; co++)\n"
	        "\t\tfor (int i = 0; i < HML_%s_H; i++)\n"
	        "\t\t\tfor (int j = 0; j < HML_%s_W; j++)\n"
	        "\t\t\t\tb[co * HML_%s_PLANE + (i + HML_%s_P) * HML_%s_WP + j + HML_%s_P] = %s;\n",
	        (long long)y->out, g->up, g->up, g->up, g->up, g->up, g->up, val);
}

/* The CNN's direct form of layer l (input planes in `a`, padded by
 * HML_<ID>_P, `off` the part of it beyond the layer's reach): into the
 * next layer's padded planes in `b`, or the output `y` after the last. */
static void put_cnn_direct(gen *g, int l, int off, int last)
{
	const hml__cg_model *m = g->m;
	const hml__cg_layer *y = &m->layers[l];
	int64_t c = 0, h = 0, w = 0, p = 0, wp;
	char dst[256];

	for (int k = 0; k < m->nlayers; k++)
		p = m->layers[k].kernel / 2 > p ? m->layers[k].kernel / 2 : p;
	hml__cg_model_in_field(m, &c, &h, &w);
	wp = w + 2 * p;
	snprintf(dst, sizeof(dst), last ? "y" : "(b + HML_%s_P * HML_%s_WP + HML_%s_P)", g->up, g->up,
	         g->up);
	hml__cg_put_conv_direct(g->f, &(hml__cg_conv){ g->id, l, y->in, y->out, y->kernel, h, w,
	                        y->act == HML__ACT_IDENTITY ? NULL : hml__cg_act_name(y->act),
	                        "a", (h + 2 * p) * wp, wp, off * wp + off, dst,
	                        last ? h * w : (h + 2 * p) * wp, last ? w : wp });
}

/* The CNN on one sample: zero-padded planes of (H + 2P) x (W + 2P). */
static void put_cnn(gen *g)
{
	const hml__cg_model *m = g->m;
	const char *id = g->id;
	int64_t c = 0, h = 0, w = 0, cmax = 0, gsz, gcol;
	int pmax = 0;

	hml__cg_model_in_field(m, &c, &h, &w);
	gsz = conv_gemm_scratch(m, h, w, 1);
	gcol = conv_gemm_scratch(m, h, w, 0);
	for (int l = 0; l < m->nlayers; l++) {
		if (m->layers[l].in > cmax)
			cmax = m->layers[l].in;
		if (m->layers[l].kernel / 2 > pmax)
			pmax = m->layers[l].kernel / 2;
	}
	fprintf(g->f, "\nenum { HML_%s_H = %lld, HML_%s_W = %lld, HML_%s_P = %d,\n"
	        "       HML_%s_HP = %lld, HML_%s_WP = %lld, HML_%s_PLANE = %lld };\n",
	        g->up, (long long)h, g->up, (long long)w, g->up, pmax, g->up,
	        (long long)(h + 2 * pmax), g->up, (long long)(w + 2 * pmax), g->up,
	        (long long)((h + 2 * pmax) * (w + 2 * pmax)));
	fprintf(g->f, "#define HML_%s_SCRATCH (2 * (%lld * HML_%s_PLANE + %d))\n", g->up,
	        (long long)cmax, g->up, HML__CG_CONV_SLACK);
	put_gemm_scratch(g, gsz);
	fputc('\n', g->f);
	fprintf(g->f, "/* buf: HML_%s_SCRATCH floats, zero at the borders */\n"
	        "HML_%s_KERNEL\nstatic void hml_%s_sample(const float *restrict x, float *restrict y, float *buf,\n                          int par)\n{\n"
	        "\tfloat *a = buf, *b = buf + HML_%s_SCRATCH / 2;\n\n\t(void)par;\n"
	        "\tfor (int c = 0; c < %lld; c++)\n\t\tfor (int i = 0; i < HML_%s_H; i++)\n"
	        "\t\t\tfor (int j = 0; j < HML_%s_W; j++)\n"
	        "\t\t\t\ta[c * HML_%s_PLANE + (i + HML_%s_P) * HML_%s_WP + j + HML_%s_P] =\n"
	        "\t\t\t\t\t(x[(c * HML_%s_H + i) * HML_%s_W + j] - hml_%s_in_mean[c]) / hml_%s_in_std[c];\n",
	        g->up, g->up, id, g->up, (long long)c, g->up, g->up, g->up, g->up, g->up, g->up, g->up,
	        g->up, id, id);
	if (gsz > 0)
		fprintf(g->f, "#ifdef HML_CMODEL_CBLAS\n\tfloat *col = buf + HML_%s_SCRATCH, "
		        "*gt = col + %lld;\n\n\t(void)gt;\n#endif\n", g->up, (long long)gcol);
	for (int l = 0; l < m->nlayers; l++) {
		const hml__cg_layer *y = &m->layers[l];
		int last = l == m->nlayers - 1, off = pmax - y->kernel / 2;

		if (conv_gemm_layer(m, l)) {
			fputs("#ifdef HML_CMODEL_CBLAS\n", g->f);
			put_conv_gemm(g, l, h, w, (long long)((h + 2 * pmax) * (w + 2 * pmax)),
			              (long long)(w + 2 * pmax), off, "a", last ? "y" : "gt");
			if (last && y->act != HML__ACT_IDENTITY)
				fprintf(g->f, "\tfor (int q = 0; q < %lld; q++)\n\t\ty[q] = hml_%s_%s(y[q]);\n",
				        (long long)(y->out * h * w), id, hml__cg_act_name(y->act));
			else if (!last)
				put_conv_place(g, y, "gt");
			fputs("#else\n", g->f);
		}

		put_cnn_direct(g, l, off, last);
		if (conv_gemm_layer(m, l))
			fputs("#endif\n", g->f);
		if (!last)
			fputs("\t{\n\t\tfloat *t = a;\n\n\t\ta = b;\n\t\tb = t;\n\t}\n", g->f);
	}
	/* models/cnn.ts's residual form: the change added to the input */
	if (m->residual)
		fprintf(g->f, "\tfor (int q = 0; q < %lld; q++)\n\t\ty[q] += x[q];\n",
		        (long long)(m->layers[m->nlayers - 1].out * h * w));
	fputs("}\n", g->f);
	put_sample_forwards(g, (long long)(m->layers[0].in * h * w),
	                    (long long)(m->layers[m->nlayers - 1].out * h * w));
}

/* cnnvec, one conv layer l on an h x w map held zero-padded (pad p) in
 * `a`: the full-size result in `t`, its activation, then the pool into
 * the next layer's padded planes in `b` (or, after the last conv layer,
 * the flattened vector `u`, in [C, H', W'] order as torch's reshape). */
static void put_vec_conv(gen *g, int l, int64_t h, int64_t w, int p)
{
	const hml__cg_model *m = g->m;
	const hml__cg_layer *y = &m->layers[l];
	const char *id = g->id;
	long long hw = (long long)(h * w), wp = (long long)(w + 2 * p);
	long long plane = (long long)((h + 2 * p) * (w + 2 * p));
	int64_t hn = h / m->pool, wn = w / m->pool;
	long long wpn = (long long)(wn + 2 * p), planen = (long long)((hn + 2 * p) * (wn + 2 * p));
	int last = l == m->nconv - 1, P = m->pool;

	if (conv_gemm_layer(m, l)) {
		fputs("#ifdef HML_CMODEL_CBLAS\n", g->f);
		put_conv_gemm(g, l, h, w, plane, wp, 0, "a", "t");
		if (y->act != HML__ACT_IDENTITY)
			fprintf(g->f, "\tfor (int q = 0; q < %lld; q++)\n\t\tt[q] = hml_%s_%s(t[q]);\n",
			        (long long)y->out * hw, id, hml__cg_act_name(y->act));
		fputs("#else\n", g->f);
	}
	fprintf(g->f, "\t/* layer %d on %lld x %lld; pool %d */\n", l, (long long)h, (long long)w, P);
	hml__cg_put_conv_direct(g->f, &(hml__cg_conv){ id, l, y->in, y->out, y->kernel, h, w,
	                        y->act == HML__ACT_IDENTITY ? NULL : hml__cg_act_name(y->act),
	                        "a", plane, wp, 0, "t", hw, w });
	if (conv_gemm_layer(m, l))
		fputs("#endif\n", g->f);
	if (!last)
		fprintf(g->f, "\tfor (int k = 0; k < %lld; k++)\n\t\tb[k] = 0.0f;\n",
		        (long long)y->out * planen);
	fprintf(g->f,
		"\tfor (int co = 0; co < %lld; co++)\n"
		"\t\tfor (int i = 0; i < %lld; i++)\n\t\t\tfor (int j = 0; j < %lld; j++) {\n"
		"\t\t\t\tfloat s = 0.0f;\n\n"
		"\t\t\t\tfor (int dy = 0; dy < %d; dy++)\n\t\t\t\t\tfor (int dx = 0; dx < %d; dx++)\n"
		"\t\t\t\t\t\ts += t[co * %lld + (i * %d + dy) * %lld + j * %d + dx];\n",
		(long long)y->out, (long long)hn, (long long)wn, P, P, hw, P, (long long)w, P);
	if (last)
		fprintf(g->f, "\t\t\t\tu[(co * %lld + i) * %lld + j] = s / %d.0f;\n\t\t\t}\n",
		        (long long)hn, (long long)wn, P * P);
	else
		fprintf(g->f, "\t\t\t\tb[co * %lld + (i + %d) * %lld + j + %d] = s / %d.0f;\n\t\t\t}\n"
		        "\t{\n\t\tfloat *sw = a;\n\n\t\ta = b;\n\t\tb = sw;\n\t}\n",
		        planen, p, wpn, p, P * P);
}

/* cnnvec, linear layer l from `src` into `dst`: bias, the sum in input
 * order (weights transposed, [in][out]), the activation. */
static void put_vec_linear(gen *g, int l, const char *src, const char *dst)
{
	const hml__cg_layer *y = &g->m->layers[l];
	long long in = y->in, out = y->out;

	fprintf(g->f, "\t/* layer %d: %lld -> %lld, %s */\n", l, in, out, hml__cg_act_name(y->act));
	fprintf(g->f, "\tfor (int j = 0; j < %lld; j++)\n\t\t%s[j] = hml_%s_b%d[j];\n"
	        "\tfor (int i = 0; i < %lld; i++) {\n\t\tconst float vi = %s[i];\n\n"
	        "\t\tfor (int j = 0; j < %lld; j++)\n\t\t\t%s[j] += vi * hml_%s_w%d[i * %lld + j];\n\t}\n",
	        out, dst, g->id, l, in, src, out, dst, g->id, l, out);
	if (y->act != HML__ACT_IDENTITY)
		fprintf(g->f, "\tfor (int j = 0; j < %lld; j++)\n\t\t%s[j] = hml_%s_%s(%s[j]);\n",
		        out, dst, g->id, hml__cg_act_name(y->act), dst);
}

/* The cnnvec on one sample; scratch: two padded map buffers, one
 * full-size conv result, two vectors. */
static void put_cnnvec(gen *g)
{
	const hml__cg_model *m = g->m;
	const char *id = g->id;
	int64_t c = 0, h = 0, w = 0, hh, ww, pad_max = 0, conv_max = 0, vec_max = 0, gsz;
	int p = m->layers[0].kernel / 2;

	hml__cg_model_in_field(m, &c, &h, &w);
	gsz = conv_gemm_scratch(m, h, w, 0);
	hh = h, ww = w;
	for (int l = 0; l < m->nconv; l++) {
		const hml__cg_layer *y = &m->layers[l];
		int64_t padded = y->in * (hh + 2 * p) * (ww + 2 * p), full = y->out * hh * ww;

		pad_max = padded + HML__CG_CONV_SLACK > pad_max ? padded + HML__CG_CONV_SLACK : pad_max;
		conv_max = full > conv_max ? full : conv_max;
		hh /= m->pool;
		ww /= m->pool;
	}
	for (int l = m->nconv; l < m->nlayers; l++) {
		vec_max = m->layers[l].in > vec_max ? m->layers[l].in : vec_max;
		vec_max = m->layers[l].out > vec_max ? m->layers[l].out : vec_max;
	}
	fprintf(g->f, "\n#define HML_%s_SCRATCH (2 * %lld + %lld + 2 * %lld)\n", g->up,
	        (long long)pad_max, (long long)conv_max, (long long)vec_max);
	put_gemm_scratch(g, gsz);
	fputc('\n', g->f);
	fprintf(g->f, "/* buf: HML_%s_SCRATCH floats */\n"
	        "HML_%s_KERNEL\nstatic void hml_%s_sample(const float *restrict x, float *restrict y, float *buf,\n                          int par)\n{\n"
	        "\tfloat *a = buf, *b = buf + %lld, *t = buf + 2 * %lld, *u = t + %lld, *v = u + %lld;\n\n"
	        "\t(void)b;\n\t(void)v;\n\t(void)par;\n"
	        "\tfor (int k = 0; k < %lld; k++)\n\t\ta[k] = 0.0f;\n"
	        "\tfor (int c = 0; c < %lld; c++)\n\t\tfor (int i = 0; i < %lld; i++)\n"
	        "\t\t\tfor (int j = 0; j < %lld; j++)\n"
	        "\t\t\t\ta[c * %lld + (i + %d) * %lld + j + %d] =\n"
	        "\t\t\t\t\t(x[(c * %lld + i) * %lld + j] - hml_%s_in_mean[c]) / hml_%s_in_std[c];\n",
	        g->up, g->up, id, (long long)pad_max, (long long)pad_max, (long long)conv_max,
	        (long long)vec_max, (long long)(c * (h + 2 * p) * (w + 2 * p)), (long long)c,
	        (long long)h, (long long)w, (long long)((h + 2 * p) * (w + 2 * p)), p,
	        (long long)(w + 2 * p), p, (long long)h, (long long)w, id, id);
	if (gsz > 0)
		fprintf(g->f, "#ifdef HML_CMODEL_CBLAS\n\tfloat *col = buf + HML_%s_SCRATCH;\n#endif\n",
		        g->up);
	hh = h, ww = w;
	for (int l = 0; l < m->nconv; l++) {
		put_vec_conv(g, l, hh, ww, p);
		hh /= m->pool;
		ww /= m->pool;
	}
	for (int l = m->nconv; l < m->nlayers; l++) {
		int k = l - m->nconv, last = l == m->nlayers - 1;

		put_vec_linear(g, l, k % 2 ? "v" : "u", last ? "y" : k % 2 ? "u" : "v");
	}
	fputs("}\n", g->f);
	put_sample_forwards(g, (long long)hml__cg_model_in_size(m),
	                    (long long)m->layers[m->nlayers - 1].out);
}

static void put_shape(FILE *f, const int64_t *shape, int ndim)
{
	fputc('{', f);
	for (int i = 0; i < ndim; i++)
		fprintf(f, "%s%lld", i ? ", " : " ", (long long)shape[i]);
	fputs(" }", f);
}

static void put_c_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			fputc(*s, f);
	}
	fputc('"', f);
}

/*
 * The input statistics (JSON text, hml/cmodel.h's input_stats) as the
 * array hml_<id>_input_stats, in adjacent literals of at most 100
 * characters (JSON escapes its control characters, so put_c_string drops
 * none of them). A card's statistics exceed the 4095 characters C asks a
 * compiler to take in one literal: GCC and Clang take any length, and are
 * told not to warn of it under -pedantic.
 */
static void put_stats(gen *g, const char *json)
{
	char piece[101];
	size_t n = json ? strlen(json) : 0;

	if (n == 0)
		return;
	fputs("\n#ifndef HML_CMODEL_NO_ENTRY\n"
	      "/* the training inputs' statistics: the model card's \"guard\" object */\n"
	      "#if defined(__GNUC__)\n#pragma GCC diagnostic push\n"
	      "#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n#endif\n", g->f);
	fprintf(g->f, "static const char hml_%s_input_stats[] =", g->id);
	for (size_t at = 0; at < n; at += 100) {
		snprintf(piece, sizeof(piece), "%s", json + at);
		fputs("\n\t", g->f);
		put_c_string(g->f, piece);
	}
	fputs(";\n#if defined(__GNUC__)\n#pragma GCC diagnostic pop\n#endif\n#endif\n", g->f);
}

static void put_typedef(FILE *f)
{
	fputs("#ifndef HML_CMODEL_V2_DEFINED\n#define HML_CMODEL_V2_DEFINED\n"
	      "/* the compiled-model ABI, version 2 (hml/cmodel.h) */\n"
	      "typedef struct hml_cmodel_v2_info {\n\t", f);
	fputs(HML_CMODEL_STR(HML_CMODEL_V2_FIELDS), f);
	fputs("\n} hml_cmodel_v2_info;\n#endif\n", f);
}

static void put_entry(gen *g, const hml__cg_options *o)
{
	const hml__cg_model *m = g->m;
	FILE *f = g->f;

	fprintf(f, "\n#ifndef HML_CMODEL_NO_ENTRY\n#if defined(__GNUC__)\n"
	        "__attribute__((visibility(\"default\")))\n#endif\n"
	        "const hml_cmodel_v2_info hml_cmodel_v2 = {\n"
	        "\t%#xu, %uu, (uint32_t)sizeof(hml_cmodel_v2_info), %uu, \"%s\",\n\t%d, %d, ",
	        HML_CMODEL_MAGIC, HML_CMODEL_ABI_VERSION, HML_CMODEL_DTYPE_F32, HML_CMODEL_TAG,
	        m->in_ndim, m->out_ndim);
	put_shape(f, m->in_shape, m->in_ndim);
	fputs(", ", f);
	put_shape(f, m->out_shape, m->out_ndim);
	fprintf(f, ", %lld, %lld,\n\t", (long long)hml__cg_model_in_size(m),
	        (long long)hml__cg_model_out_size(m));
	put_c_string(f, g->id);
	fputs(", ", f);
	put_c_string(f, o->hash ? o->hash : "");
	fputs(", ", f);
	put_c_string(f, m->arch);
	fprintf(f, ",\n\thml_%s_forward_f32, hml_%s_forward_f64,\n\t", g->id, g->id);
	if (o->input_stats && *o->input_stats)
		fprintf(f, "hml_%s_input_stats", g->id);
	else
		fputs("0", f);
	fputs("\n};\n#endif\n", f);
}

static void put_prototypes(gen *g)
{
	fprintf(g->f, "\n/* x: rows * HML_%s_IN_FEATURES values, y: rows * HML_%s_OUT_FEATURES;\n"
	        " * float32 arithmetic; 0, or -1 when scratch memory runs out */\n"
	        "int hml_%s_forward_f32(const float *x, float *y, int64_t rows);\n"
	        "int hml_%s_forward_f64(const double *x, double *y, int64_t rows);\n",
	        g->up, g->up, g->id, g->id);
}

static void put_header(gen *g, const char *hash)
{
	const hml__cg_model *m = g->m;

	fprintf(g->f, "/* generated by hml deploy --target c: model %s (%s)%s%s */\n"
	        "#ifndef HML_MODEL_%s_H\n#define HML_MODEL_%s_H\n\n#include <stdint.h>\n\n"
	        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
	        g->id, m->arch, hash ? ", sha256 " : "", hash ? hash : "", g->up, g->up);
	put_typedef(g->f);
	fprintf(g->f, "\nenum { HML_%s_IN_FEATURES = %lld, HML_%s_OUT_FEATURES = %lld };\n",
	        g->up, (long long)hml__cg_model_in_size(m), g->up,
	        (long long)hml__cg_model_out_size(m));
	put_prototypes(g);
	fputs("\n#ifndef HML_CMODEL_NO_ENTRY\nextern const hml_cmodel_v2_info hml_cmodel_v2;\n#endif\n"
	      "\n#ifdef __cplusplus\n}\n#endif\n#endif\n", g->f);
}

static int put_source(gen *g, const hml__cg_options *o)
{
	int rc;

	fprintf(g->f, "/* generated by hml deploy --target c: model %s (%s)%s%s\n"
	        " * standalone: cc -std=c11 -O2 -c THIS.c (add -fopenmp for threads); needs libm */\n"
	        "#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n\n",
	        g->id, g->m->arch, o->hash ? ", sha256 " : "", o->hash ? o->hash : "");
	put_typedef(g->f);
	fprintf(g->f, "\nenum { HML_%s_IN_FEATURES = %lld, HML_%s_OUT_FEATURES = %lld };\n",
	        g->up, (long long)hml__cg_model_in_size(g->m), g->up,
	        (long long)hml__cg_model_out_size(g->m));
	put_prototypes(g);
	fprintf(g->f, "\n/* kernels: a copy for AVX2 CPUs chosen at load time, unless disabled */\n"
	        "#if defined(__x86_64__) && defined(__has_attribute) && !defined(HML_CMODEL_NO_CLONES)\n"
	        "#if __has_attribute(target_clones)\n"
	        "#define HML_%s_KERNEL __attribute__((target_clones(\"arch=x86-64-v3\", \"default\")))\n"
	        "#endif\n#endif\n#ifndef HML_%s_KERNEL\n#define HML_%s_KERNEL\n#endif\n",
	        g->up, g->up, g->up);
	if ((rc = put_constants(g)) < 0)
		return rc;
	if (g->m->ncat > 0)
		put_categorical(g);
	put_activations(g);
	if (g->m->family == HML__CG_MLP)
		put_mlp(g);
	else if (g->m->family == HML__CG_CNN)
		put_cnn(g);
	else
		put_cnnvec(g);
	put_stats(g, o->input_stats);
	put_entry(g, o);
	return 0;
}

static int write_file(gen *g, const char *path, const hml__cg_options *o, int header)
{
	int rc = 0;

	/* Not through a link at `path` (core/beneath.h). */
	if ((rc = hml__beneath_fopen(&g->f, NULL, path, "w")) < 0)
		return rc != HML_EIO ? rc : hml__error_set(HML_EIO, "cannot write '%s': %s", path,
		                                           strerror(errno));
	if (header)
		put_header(g, o->hash);
	else
		rc = put_source(g, o);
	if (ferror(g->f) && rc == 0)
		rc = hml__error_set(HML_EIO, "cannot write '%s': %s", path, strerror(errno));
	if (fclose(g->f) != 0 && rc == 0)
		rc = hml__error_set(HML_EIO, "cannot write '%s': %s", path, strerror(errno));
	g->f = NULL;
	return rc;
}

/* The sgemm path's chunk and threshold (GEMM_MACS, GEMM_CHUNK_FLOATS). */
static void plan_gemm(gen *g)
{
	int64_t macs = 0, rows, chunk = GEMM_CHUNK_FLOATS / g->maxw;

	for (int l = 0; l < g->m->nlayers; l++)
		if (gemm_layer(g, l) && g->m->layers[l].in * g->m->layers[l].out > macs)
			macs = g->m->layers[l].in * g->m->layers[l].out;
	if (macs == 0)
		return;
	rows = (GEMM_MACS + macs - 1) / macs;
	g->gemm_rows = (int)(rows < 2 * g->br ? 2 * g->br : rows);
	chunk = chunk < 32 ? 32 : chunk > OMP_ROWS ? OMP_ROWS : chunk & ~(int64_t)7;
	g->chunk = (int)chunk;
}

int hml__cg_uses_blas(const hml__cg_model *m)
{
	int nconv = m->family == HML__CG_CNN ? m->nlayers : m->family == HML__CG_CNNVEC ?
	            m->nconv : 0;

	for (int l = 0; l < m->nlayers; l++)
		if (l < nconv ? conv_gemm_layer(m, l) : m->family == HML__CG_MLP &&
		                                        mlp_gemm_layer(m, l))
			return 1;
	return 0;
}

int hml__cg_write(const hml__cg_model *m, const hml__cg_options *o,
                  const char *c_path, const char *h_path)
{
	gen g = { NULL, m, o ? o->id : NULL, { 0 }, 1, 1, 0, 0 };
	int rc;
	size_t n;

	if ((rc = hml__cg_model_check(m)) < 0)
		return rc;
	n = g.id ? strlen(g.id) : 0;
	if (n == 0 || n >= sizeof(g.up) || strspn(g.id, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != n)
		return hml__error_set(HML_EINVALID, "bad model id '%s' for generated C",
		                      g.id ? g.id : "");
	for (size_t i = 0; i <= n; i++)
		g.up[i] = (char)(g.id[i] >= 'a' && g.id[i] <= 'z' ? g.id[i] - 'a' + 'A' : g.id[i]);
	for (int l = 0; l < m->nlayers - 1; l++)
		if (m->layers[l].out > g.maxw)
			g.maxw = m->layers[l].out;
	/* a block's two buffers stay within ~32 KiB */
	g.br = (int)(4096 / g.maxw);
	g.br = g.br < 1 ? 1 : g.br > 32 ? 32 : g.br;
	if (m->family == HML__CG_MLP)
		plan_gemm(&g);
	if ((rc = write_file(&g, c_path, o, 0)) < 0)
		return rc;
	return h_path ? write_file(&g, h_path, o, 1) : 0;
}
