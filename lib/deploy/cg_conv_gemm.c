/*
 * lib/deploy/cg_conv_gemm.c - the generated C of a conv layer as im2col +
 * sgemm (cg_gen.h): which layers take that form, their loops, and the
 * scratch they need. The weights, [out][in][k][k], are sgemm's row-major
 * A. The register-blocked direct form every build has is cg_conv.c's.
 */
#include <stdio.h>

#include "deploy/cg_gen.h"

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

int hml__cg_conv_gemm_layer(const hml__cg_model *m, int l)
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

const char hml__cg_cblas_decl[] =
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
void hml__cg_put_conv_gemm(hml__cg_gen *g, int l, int64_t h, int64_t w, long long plane, long long wp,
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
int64_t hml__cg_conv_gemm_scratch(const hml__cg_model *m, int64_t h, int64_t w, int outs)
{
	int64_t col = 0, out = 0;
	int nconv = m->family == HML__CG_CNN ? m->nlayers : m->nconv;

	for (int l = 0; l < nconv; l++) {
		const hml__cg_layer *y = &m->layers[l];

		if (hml__cg_conv_gemm_layer(m, l)) {
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
void hml__cg_put_gemm_scratch(hml__cg_gen *g, int64_t n)
{
	if (n > 0)
		fprintf(g->f, "\n#ifdef HML_CMODEL_CBLAS\n%s#define HML_%s_GSCRATCH %lld\n#else\n"
		        "#define HML_%s_GSCRATCH 0\n#endif\n", hml__cg_cblas_decl, g->up, (long long)n, g->up);
	else
		fprintf(g->f, "\n#define HML_%s_GSCRATCH 0\n", g->up);
}
