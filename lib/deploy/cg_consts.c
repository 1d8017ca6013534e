/*
 * lib/deploy/cg_consts.c - the data of the generated C (cg_gen.h): each
 * layer's weights and bias with the normalisation folded in, as float
 * constants laid out for its kernel; the categorical features' tables;
 * the activation functions the model uses, with their branch-free
 * exp/erfc/tanh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "deploy/cg_gen.h"

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

int hml__cg_put_constants(hml__cg_gen *g)
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
void hml__cg_put_categorical(hml__cg_gen *g)
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

void hml__cg_put_activations(hml__cg_gen *g)
{
	int used[NACT] = { 0 };

	for (int l = 0; l < g->m->nlayers; l++)
		used[g->m->layers[l].act] = 1;
	if (used[HML__ACT_TANH] || used[HML__ACT_GELU] || used[HML__ACT_SILU] ||
	    used[HML__ACT_SIGMOID] || g->m->spatial)
		fprintf(g->f, exp_erfc_source, g->id);
	for (int a = 0; a < NACT; a++)
		if (used[a]) {
			fprintf(g->f, "\nstatic inline float hml_%s_%s(float v)\n{\n\t", g->id,
			        hml__cg_act_name((hml__cg_act)a));
			fprintf(g->f, act_bodies[a], g->id);
			fputs("\n}\n", g->f);
		}
}
