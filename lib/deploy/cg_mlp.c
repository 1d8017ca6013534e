/*
 * lib/deploy/cg_mlp.c - the generated C of an MLP (cg_gen.h).
 *
 * Weights are written transposed ([in][out]) so that the inner loop runs
 * over a layer's outputs with unit stride and vectorises without
 * reassociating any sum: every output is still accumulated in input order,
 * bias first, as a plain dot product would. Rows go through in blocks of
 * BR (the accumulators of a block stay in L1 and each weight row is loaded
 * once per block); a single row takes a copy of the kernel specialised to
 * one row. Two ping-pong buffers of BR x (widest layer) floats on the stack
 * are the only intermediates. Large batches of a wide MLP may take the
 * sgemm path instead (put_mlp_gemm), whose weights are the same arrays:
 * [in][out] is sgemm's row-major B.
 */
#include <stdio.h>

#include "deploy/cg_gen.h"

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
int hml__cg_mlp_gemm_layer(const hml__cg_model *m, int l)
{
	return m->layers[l].in >= GEMM_MIN_WIDTH && m->layers[l].out >= GEMM_MIN_WIDTH &&
	       !(l == 0 && m->ncat > 0);
}

static int gemm_layer(const hml__cg_gen *g, int l)
{
	return hml__cg_mlp_gemm_layer(g->m, l);
}

/*
 * The sums of layer 0 of a model with categorical features, after its
 * bias: the continuous features (normalised as the plain kernel does),
 * then for each categorical feature the one row of the transposed weights
 * its class selects (one-hot times the weights; no K-wide multiply), none
 * for a class outside 0..K-1. rintf rounds half to even, as torch.round.
 */
static void put_mlp_first(hml__cg_gen *g, const char *rows, const char *src, const char *sstride,
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
static void put_mlp_layer(hml__cg_gen *g, int l, const char *rows, const char *src, const char *sstride,
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
static void put_mlp_kernel(hml__cg_gen *g, const char *name, const char *rows, int nrows)
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
static void put_mlp_gemm(hml__cg_gen *g)
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
	        hml__cg_cblas_decl, ch, ch, w, g->up, id, ch, w);
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
		"/* x, y: rows >= 1 rows; x of floats (src 0), doubles (1, y doubles) or int32\n"
		" * (2, y floats), converted per chunk; 0, or -1 when scratch memory runs out */\n"
		"static int hml_%s_gemm(const void *x, void *y, int64_t rows, int src)\n{\n"
		"\tconst int64_t nc = (rows + %lld - 1) / %lld;\n\tint failed = 0;\n\n"
		"#ifdef _OPENMP\n#pragma omp parallel if (rows >= %d)\n#endif\n"
		"\t{\n"
		"\t\tfloat *h = malloc((size_t)(2 * %lld * %lld + (src ? %lld * (%lld + %lld) : 0)) "
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
		"\t\t\tconst int r = rows - i0 < %lld ? (int)(rows - i0) : %lld;\n"
		"\t\t\tfloat *xf, *yf;\n\n"
		"\t\t\tif (!h)\n\t\t\t\tcontinue;\n"
		"\t\t\tif (src == 0) {\n"
		"\t\t\t\thml_%s_chunk((const float *)x + i0 * %lld, (float *)y + i0 * %lld, r, h);\n"
		"\t\t\t\tcontinue;\n\t\t\t}\n"
		"\t\t\txf = h + 2 * %lld * %lld;\n"
		"\t\t\tyf = src == 1 ? xf + %lld * %lld : (float *)y + i0 * %lld;\n"
		"\t\t\tif (src == 1)\n"
		"\t\t\t\tfor (int64_t k = 0; k < r * %lld; k++)\n"
		"\t\t\t\t\txf[k] = (float)((const double *)x)[i0 * %lld + k];\n"
		"\t\t\telse\n"
		"\t\t\t\tfor (int64_t k = 0; k < r * %lld; k++)\n"
		"\t\t\t\t\txf[k] = (float)((const int32_t *)x)[i0 * %lld + k];\n"
		"\t\t\thml_%s_chunk(xf, yf, r, h);\n"
		"\t\t\tif (src == 1)\n"
		"\t\t\t\tfor (int64_t k = 0; k < r * %lld; k++)\n"
		"\t\t\t\t\t((double *)y)[i0 * %lld + k] = yf[k];\n"
		"\t\t}\n\t\tfree(h);\n\t}\n"
		"\treturn failed ? -1 : 0;\n}\n#endif\n",
		id, ch, ch, OMP_ROWS, ch, w, ch, nin, nout, ch, ch, ch, id, nin, nout, ch, w, ch, nin,
		nout, nin, nin, nin, nin, id, nout, nout);
}

/* The sgemm path's entry, for batches of at least g->gemm_rows rows; src
 * as hml_<id>_gemm's. */
static void put_gemm_call(hml__cg_gen *g, int src)
{
	if (g->gemm_rows > 0)
		fprintf(g->f, "#ifdef HML_CMODEL_CBLAS\n\tif (rows >= %d)\n"
		        "\t\treturn hml_%s_gemm(x, y, rows, %d);\n#endif\n", g->gemm_rows, g->id, src);
}

/* hml_<id>_forward_<name>: rows of `xtype` converted to float per block of
 * rows (on the stack), the outputs stored as `ytype`; src as
 * hml_<id>_gemm's. */
static void put_converting_forward(hml__cg_gen *g, const char *name, const char *xtype,
                                   const char *ytype, int src)
{
	long long nin = hml__cg_model_in_size(g->m), nout = g->m->layers[g->m->nlayers - 1].out;
	const char *id = g->id;

	fprintf(g->f,
		"\nint hml_%s_forward_%s(const %s *x, %s *y, int64_t rows)\n{\n"
		"\tconst int64_t nb = (rows + %d - 1) / %d;\n\n", id, name, xtype, ytype, g->br,
		g->br);
	put_gemm_call(g, src);
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

void hml__cg_put_mlp(hml__cg_gen *g)
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
	put_converting_forward(g, "f64", "double", "double", 1);
	put_converting_forward(g, "i32", "int32_t", "float", 2);
}

/* The sgemm path's chunk and threshold (GEMM_MACS, GEMM_CHUNK_FLOATS). */
void hml__cg_plan_gemm(hml__cg_gen *g)
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
