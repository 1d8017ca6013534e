/*
 * lib/deploy/cg_cnn.c - the generated C of a CNN (cg_gen.h): one sample
 * at a time on zero-padded planes, each conv layer in register-blocked
 * direct loops (cg_conv.c) or, when very wide, as im2col + sgemm
 * (cg_conv_gemm.c); and the per-sample forwards a CNN and a cnnvec share.
 */
#include <stdio.h>

#include "deploy/cg_conv.h"
#include "deploy/cg_gen.h"

/*
 * The forwards of a CNN or cnnvec: rows samples through hml_<id>_sample,
 * spread over OpenMP threads from 2 samples, each thread with its own
 * scratch (zeroed: the planes' borders stay zero), and inside that region
 * OpenBLAS's OpenMP build runs single-threaded; one sample alone gets
 * OpenBLAS's threads. Samples of `nin` and `nout` floats; float64 and int32
 * inputs are converted per sample into the thread's scratch.
 */
void hml__cg_put_sample_forwards(hml__cg_gen *g, long long nin, long long nout)
{
	const char *id = g->id, *up = g->up;

	fprintf(g->f,
		"\n/* x, y: rows samples; x of floats (src 0), doubles (1, y doubles) or\n"
		" * int32 (2, y floats), converted per sample; 0, or -1 when scratch memory\n"
		" * runs out */\n"
		"static int hml_%s_samples(const void *x, void *y, int64_t rows, int src)\n{\n"
		"\tint failed = 0;\n\n\tif (rows <= 0)\n\t\treturn 0;\n"
		"#ifdef _OPENMP\n#pragma omp parallel if (rows >= 2)\n#endif\n"
		"\t{\n"
		"\t\tfloat *buf = calloc((size_t)(HML_%s_SCRATCH + HML_%s_GSCRATCH + (src ? %lld + %lld : 0)\n"
		"\t\t                             + %d), sizeof(float));\n\n"
		"\t\tif (!buf) {\n#ifdef _OPENMP\n#pragma omp atomic write\n#endif\n"
		"\t\t\tfailed = 1;\n\t\t}\n",
		id, up, up, nin, nout, HML__CG_CONV_SLACK);
	fprintf(g->f,
		"#ifdef _OPENMP\n#pragma omp for schedule(static)\n#endif\n"
		"\t\tfor (int64_t i = 0; i < rows; i++) {\n"
		"\t\t\tfloat *xf, *yf;\n\n"
		"\t\t\tif (!buf)\n\t\t\t\tcontinue;\n"
		"\t\t\tif (src == 0) {\n"
		"\t\t\t\thml_%s_sample((const float *)x + i * %lld, (float *)y + i * %lld, buf,\n"
		"\t\t\t\t               rows < 2);\n"
		"\t\t\t\tcontinue;\n\t\t\t}\n"
		"\t\t\txf = buf + HML_%s_SCRATCH + HML_%s_GSCRATCH;\n"
		"\t\t\tyf = src == 1 ? xf + %lld : (float *)y + i * %lld;\n"
		"\t\t\tif (src == 1)\n"
		"\t\t\t\tfor (int64_t k = 0; k < %lld; k++)\n"
		"\t\t\t\t\txf[k] = (float)((const double *)x)[i * %lld + k];\n"
		"\t\t\telse\n"
		"\t\t\t\tfor (int64_t k = 0; k < %lld; k++)\n"
		"\t\t\t\t\txf[k] = (float)((const int32_t *)x)[i * %lld + k];\n"
		"\t\t\thml_%s_sample(xf, yf, buf, rows < 2);\n"
		"\t\t\tif (src == 1)\n"
		"\t\t\t\tfor (int64_t k = 0; k < %lld; k++)\n"
		"\t\t\t\t\t((double *)y)[i * %lld + k] = yf[k];\n"
		"\t\t}\n\t\tfree(buf);\n\t}\n"
		"\treturn failed ? -1 : 0;\n}\n",
		id, nin, nout, up, up, nin, nout, nin, nin, nin, nin, id, nout, nout);
	fprintf(g->f,
		"\nint hml_%s_forward_f32(const float *x, float *y, int64_t rows)\n{\n"
		"\treturn hml_%s_samples(x, y, rows, 0);\n}\n"
		"\nint hml_%s_forward_f64(const double *x, double *y, int64_t rows)\n{\n"
		"\treturn hml_%s_samples(x, y, rows, 1);\n}\n"
		"\nint hml_%s_forward_i32(const int32_t *x, float *y, int64_t rows)\n{\n"
		"\treturn hml_%s_samples(x, y, rows, 2);\n}\n", id, id, id, id, id, id);
}

/* The scratch defines' last line (the sgemm part, cg_conv_gemm.c) and the
 * head of hml_<id>_sample, whose comment says what buf holds (`note`). */
void hml__cg_put_sample_head(hml__cg_gen *g, int64_t gscratch, const char *note)
{
	hml__cg_put_gemm_scratch(g, gscratch);
	fprintf(g->f, "\n/* buf: HML_%s_SCRATCH floats%s */\n"
	        "HML_%s_KERNEL\nstatic void hml_%s_sample(const float *restrict x, float *restrict y, "
	        "float *buf,\n                          int par)\n{\n", g->up, note, g->up, g->id);
}

/* The CNN's sgemm path, a layer before the last: its result `src`
 * ([out][H x W]) with the activation into the next layer's padded planes. */
static void put_conv_place(hml__cg_gen *g, const hml__cg_layer *y, const char *src)
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
static void put_cnn_direct(hml__cg_gen *g, int l, int off, int last)
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
void hml__cg_put_cnn(hml__cg_gen *g)
{
	const hml__cg_model *m = g->m;
	const char *id = g->id;
	int64_t c = 0, h = 0, w = 0, cmax = 0, gsz, gcol;
	int pmax = 0;

	hml__cg_model_in_field(m, &c, &h, &w);
	gsz = hml__cg_conv_gemm_scratch(m, h, w, 1);
	gcol = hml__cg_conv_gemm_scratch(m, h, w, 0);
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
	hml__cg_put_sample_head(g, gsz, ", zero at the borders");
	fprintf(g->f, "\tfloat *a = buf, *b = buf + HML_%s_SCRATCH / 2;\n\n\t(void)par;\n"
	        "\tfor (int c = 0; c < %lld; c++)\n\t\tfor (int i = 0; i < HML_%s_H; i++)\n"
	        "\t\t\tfor (int j = 0; j < HML_%s_W; j++)\n"
	        "\t\t\t\ta[c * HML_%s_PLANE + (i + HML_%s_P) * HML_%s_WP + j + HML_%s_P] =\n"
	        "\t\t\t\t\t(x[(c * HML_%s_H + i) * HML_%s_W + j] - hml_%s_in_mean[c]) / hml_%s_in_std[c];\n",
	        g->up, (long long)c, g->up, g->up, g->up, g->up, g->up, g->up, g->up,
	        g->up, id, id);
	if (gsz > 0)
		fprintf(g->f, "#ifdef HML_CMODEL_CBLAS\n\tfloat *col = buf + HML_%s_SCRATCH, "
		        "*gt = col + %lld;\n\n\t(void)gt;\n#endif\n", g->up, (long long)gcol);
	for (int l = 0; l < m->nlayers; l++) {
		const hml__cg_layer *y = &m->layers[l];
		int last = l == m->nlayers - 1, off = pmax - y->kernel / 2;

		if (hml__cg_conv_gemm_layer(m, l)) {
			fputs("#ifdef HML_CMODEL_CBLAS\n", g->f);
			hml__cg_put_conv_gemm(g, l, h, w, (long long)((h + 2 * pmax) * (w + 2 * pmax)),
			              (long long)(w + 2 * pmax), off, "a", last ? "y" : "gt");
			if (last && y->act != HML__ACT_IDENTITY)
				fprintf(g->f, "\tfor (int q = 0; q < %lld; q++)\n\t\ty[q] = hml_%s_%s(y[q]);\n",
				        (long long)(y->out * h * w), id, hml__cg_act_name(y->act));
			else if (!last)
				put_conv_place(g, y, "gt");
			fputs("#else\n", g->f);
		}

		put_cnn_direct(g, l, off, last);
		if (hml__cg_conv_gemm_layer(m, l))
			fputs("#endif\n", g->f);
		if (!last)
			fputs("\t{\n\t\tfloat *t = a;\n\n\t\ta = b;\n\t\tb = t;\n\t}\n", g->f);
	}
	/* models/cnn.ts's residual form: the change added to the input */
	if (m->residual)
		fprintf(g->f, "\tfor (int q = 0; q < %lld; q++)\n\t\ty[q] += x[q];\n",
		        (long long)(m->layers[m->nlayers - 1].out * h * w));
	fputs("}\n", g->f);
	hml__cg_put_sample_forwards(g, (long long)(m->layers[0].in * h * w),
	                    (long long)(m->layers[m->nlayers - 1].out * h * w));
}
