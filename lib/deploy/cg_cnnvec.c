/*
 * lib/deploy/cg_cnnvec.c - the generated C of a cnnvec (cg_gen.h): one
 * sample at a time, conv layers on zero-padded planes (direct, cg_conv.c,
 * or im2col + sgemm, cg_conv_gemm.c), each followed by its activation and
 * average pool, then the linear layers on the flattened map; a spatial
 * cnnvec's last conv layer instead gives heatmaps, read by their
 * soft-argmax (put_soft_argmax).
 */
#include <stdio.h>

#include "deploy/cg_conv.h"
#include "deploy/cg_gen.h"

/* A spatial cnnvec's heatmaps, c maps of h x w in `t`: each map's
 * softmax-weighted column and row,
 * (2j + 1) / w - 1 and (2i + 1) / h - 1, into u[2 co] and u[2 co + 1]
 * (models/cnnvec.ts's spatial()). The max is subtracted first, as
 * torch.softmax does; the exponentials are summed as they are computed,
 * vectorised by OpenMP's simd reductions. */
static void put_soft_argmax(hml__cg_gen *g, int64_t c, int64_t h, int64_t w)
{
	long long hw = (long long)(h * w);

	fprintf(g->f, "\t/* spatial soft-argmax of %lld maps of %lld x %lld */\n"
	        "\tfor (int co = 0; co < %lld; co++) {\n"
	        "\t\tconst float *q = t + co * %lld;\n"
	        "\t\tfloat mx = q[0], s = 0.0f, sx = 0.0f, sy = 0.0f;\n\n"
	        "#pragma omp simd reduction(max:mx)\n"
	        "\t\tfor (int k = 0; k < %lld; k++)\n\t\t\tmx = q[k] > mx ? q[k] : mx;\n"
	        "\t\tfor (int i = 0; i < %lld; i++) {\n"
	        "\t\t\tfloat r = 0.0f, rx = 0.0f;\n\n"
	        "#pragma omp simd reduction(+:r, rx)\n"
	        "\t\t\tfor (int j = 0; j < %lld; j++) {\n"
	        "\t\t\t\tconst float e = hml_%s_exp(q[i * %lld + j] - mx);\n\n"
	        "\t\t\t\tr += e;\n"
	        "\t\t\t\trx += e * (float)(2 * j + 1);\n\t\t\t}\n"
	        "\t\t\ts += r;\n\t\t\tsx += rx;\n\t\t\tsy += r * (float)(2 * i + 1);\n\t\t}\n"
	        "\t\tu[2 * co] = sx / (s * %lld.0f) - 1.0f;\n"
	        "\t\tu[2 * co + 1] = sy / (s * %lld.0f) - 1.0f;\n\t}\n",
	        (long long)c, (long long)h, (long long)w, (long long)c, hw, hw,
	        (long long)h, (long long)w, g->id, (long long)w, (long long)w, (long long)h);
}

/* cnnvec, one conv layer l on an h x w map held zero-padded (pad p) in
 * `a`: the full-size result in `t`, its activation, then the pool into
 * the next layer's padded planes in `b` (or, after the last conv layer,
 * the flattened vector `u`, in [C, H', W'] order as torch's reshape). */
static void put_vec_conv(hml__cg_gen *g, int l, int64_t h, int64_t w, int p)
{
	const hml__cg_model *m = g->m;
	const hml__cg_layer *y = &m->layers[l];
	const char *id = g->id;
	long long hw = (long long)(h * w), wp = (long long)(w + 2 * p);
	long long plane = (long long)((h + 2 * p) * (w + 2 * p));
	int64_t hn = h / m->pool, wn = w / m->pool;
	long long wpn = (long long)(wn + 2 * p), planen = (long long)((hn + 2 * p) * (wn + 2 * p));
	int last = l == m->nconv - 1, P = m->pool;

	if (hml__cg_conv_gemm_layer(m, l)) {
		fputs("#ifdef HML_CMODEL_CBLAS\n", g->f);
		hml__cg_put_conv_gemm(g, l, h, w, plane, wp, 0, "a", "t");
		if (y->act != HML__ACT_IDENTITY)
			fprintf(g->f, "\tfor (int q = 0; q < %lld; q++)\n\t\tt[q] = hml_%s_%s(t[q]);\n",
			        (long long)y->out * hw, id, hml__cg_act_name(y->act));
		fputs("#else\n", g->f);
	}
	fprintf(g->f, "\t/* layer %d on %lld x %lld; pool %d */\n", l, (long long)h, (long long)w, P);
	hml__cg_put_conv_direct(g->f, &(hml__cg_conv){ id, l, y->in, y->out, y->kernel, h, w,
	                        y->act == HML__ACT_IDENTITY ? NULL : hml__cg_act_name(y->act),
	                        "a", plane, wp, 0, "t", hw, w });
	if (hml__cg_conv_gemm_layer(m, l))
		fputs("#endif\n", g->f);
	if (last && m->spatial) {
		put_soft_argmax(g, y->out, h, w);
		return;
	}
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
static void put_vec_linear(hml__cg_gen *g, int l, const char *src, const char *dst)
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
void hml__cg_put_cnnvec(hml__cg_gen *g)
{
	const hml__cg_model *m = g->m;
	const char *id = g->id;
	int64_t c = 0, h = 0, w = 0, hh, ww, pad_max = 0, conv_max = 0, vec_max = 0, gsz;
	int p = m->layers[0].kernel / 2;

	hml__cg_model_in_field(m, &c, &h, &w);
	gsz = hml__cg_conv_gemm_scratch(m, h, w, 0);
	hh = h, ww = w;
	for (int l = 0; l < m->nconv; l++) {
		const hml__cg_layer *y = &m->layers[l];
		int64_t padded = y->in * (hh + 2 * p) * (ww + 2 * p), full = y->out * hh * ww;

		pad_max = padded + HML__CG_CONV_SLACK > pad_max ? padded + HML__CG_CONV_SLACK : pad_max;
		conv_max = full > conv_max ? full : conv_max;
		if (l < m->nconv - 1 || !m->spatial)
			hh /= m->pool, ww /= m->pool;
	}
	for (int l = m->nconv; l < m->nlayers; l++) {
		vec_max = m->layers[l].in > vec_max ? m->layers[l].in : vec_max;
		vec_max = m->layers[l].out > vec_max ? m->layers[l].out : vec_max;
	}
	fprintf(g->f, "\n#define HML_%s_SCRATCH (2 * %lld + %lld + 2 * %lld)\n", g->up,
	        (long long)pad_max, (long long)conv_max, (long long)vec_max);
	hml__cg_put_sample_head(g, gsz, "");
	fprintf(g->f, "\tfloat *a = buf, *b = buf + %lld, *t = buf + 2 * %lld, *u = t + %lld, *v = u + %lld;\n\n"
	        "\t(void)b;\n\t(void)v;\n\t(void)par;\n"
	        "\tfor (int k = 0; k < %lld; k++)\n\t\ta[k] = 0.0f;\n"
	        "\tfor (int c = 0; c < %lld; c++)\n\t\tfor (int i = 0; i < %lld; i++)\n"
	        "\t\t\tfor (int j = 0; j < %lld; j++)\n"
	        "\t\t\t\ta[c * %lld + (i + %d) * %lld + j + %d] =\n"
	        "\t\t\t\t\t(x[(c * %lld + i) * %lld + j] - hml_%s_in_mean[c]) / hml_%s_in_std[c];\n",
	        (long long)pad_max, (long long)pad_max, (long long)conv_max,
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
	hml__cg_put_sample_forwards(g, (long long)hml__cg_model_in_size(m),
	                    (long long)m->layers[m->nlayers - 1].out);
}
