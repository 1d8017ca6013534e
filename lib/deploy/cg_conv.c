/*
 * lib/deploy/cg_conv.c - the generated C of a conv layer's direct form
 * (cg_conv.h).
 *
 * The plane-wide form it replaces (o[i][j] += w * s[i][j] for each weight)
 * loads and stores every output once per multiply-add. Here a block of
 * CB channels x JB columns keeps its sums in registers and loads each
 * input vector once for CB multiply-adds. The accumulators are GCC/clang
 * vectors of 8 floats (`vector_size`, plain C operators, no intrinsics),
 * named one by one: as arrays, gcc 12 kept some of them on the stack and
 * the loop ran at a third of the speed (a store-to-load chain per
 * multiply-add). Another compiler gets the same loops on float arrays.
 * On miniWeather's 16 -> 16, 5x5 layer, one core: 2.9x the plane-wide
 * form. The sums keep its order (bias, then input channel, ky, kx), so
 * the results are those of the form before, TorchScript's within float
 * rounding.
 *
 * A block's columns are whole vectors: the last block of a row reads up to
 * JB - 1 floats past the row (into the next row, or the scratch's slack,
 * HML__CG_CONV_SLACK) and stores only the row's columns.
 */
#include "deploy/cg_conv.h"

/* The block's accumulators: "v<cb>_<q>" (vectors) or acc[cb][jj]. */
static void put_init(FILE *f, const hml__cg_conv *c, int vec, int nc)
{
	if (!vec) {
		fprintf(f, "\t\t\t\tfloat acc[%d][%d];\n\n"
		        "\t\t\t\tfor (int cb = 0; cb < %d; cb++)\n"
		        "\t\t\t\t\tfor (int jj = 0; jj < %d; jj++)\n"
		        "\t\t\t\t\t\tacc[cb][jj] = hml_%s_b%d[co0 + cb];\n",
		        nc, HML__CG_CONV_JB, nc, HML__CG_CONV_JB, c->id,
		        c->layer);
		return;
	}
	for (int cb = 0; cb < nc; cb++) {
		fprintf(f, "\t\t\t\tconst float b%d = hml_%s_b%d[co0 + %d];\n"
		        "\t\t\t\tv8 v%d_0 = { b%d, b%d, b%d, b%d, b%d, b%d, b%d, b%d }", cb, c->id,
		        c->layer, cb, cb, cb, cb, cb, cb, cb, cb, cb, cb);
		for (int q = 1; q < HML__CG_CONV_JB / 8; q++)
			fprintf(f, ", v%d_%d = v%d_0", cb, q, cb);
		fputs(";\n", f);
	}
}

/* The sums over (ci, ky, kx) into the block's accumulators. */
static void put_sums(FILE *f, const hml__cg_conv *c, int vec, int nc)
{
	long long kk = (long long)c->in * c->kernel * c->kernel;

	fprintf(f, "\t\t\t\tfor (int ci = 0; ci < %lld; ci++)\n"
	        "\t\t\t\t\tfor (int ky = 0; ky < %d; ky++) {\n"
	        "\t\t\t\t\t\tconst float *s = %s + ci * %lld + (i + ky) * %lld + %lld + j0;\n"
	        "\t\t\t\t\t\tconst float *wr = hml_%s_w%d + ((co0 * %lld + ci) * %d + ky) * %d;\n\n"
	        "\t\t\t\t\t\tfor (int kx = 0; kx < %d; kx++) {\n",
	        (long long)c->in, c->kernel, c->src, (long long)c->src_plane,
	        (long long)c->src_row, (long long)c->src_off, c->id, c->layer,
	        (long long)c->in, c->kernel, c->kernel, c->kernel);
	if (!vec) {
		fprintf(f, "\t\t\t\t\t\t\tfor (int cb = 0; cb < %d; cb++) {\n"
		        "\t\t\t\t\t\t\t\tconst float wv = wr[cb * %lld + kx];\n\n"
		        "\t\t\t\t\t\t\t\tfor (int jj = 0; jj < %d; jj++)\n"
		        "\t\t\t\t\t\t\t\t\tacc[cb][jj] += wv * s[kx + jj];\n"
		        "\t\t\t\t\t\t\t}\n\t\t\t\t\t\t}\n\t\t\t\t\t}\n",
		        nc, kk, HML__CG_CONV_JB);
		return;
	}
	fprintf(f, "\t\t\t\t\t\t\tv8 s0");
	for (int q = 1; q < HML__CG_CONV_JB / 8; q++)
		fprintf(f, ", s%d", q);
	fputs(";\n\n", f);
	for (int q = 0; q < HML__CG_CONV_JB / 8; q++)
		fprintf(f, "\t\t\t\t\t\t\tmemcpy(&s%d, s + kx + %d, sizeof(v8));\n", q, 8 * q);
	for (int cb = 0; cb < nc; cb++) {
		fprintf(f, "\t\t\t\t\t\t\t{\n\t\t\t\t\t\t\t\tconst float w = wr[%lld + kx];\n"
		        "\t\t\t\t\t\t\t\tconst v8 wv = { w, w, w, w, w, w, w, w };\n\n",
		        (long long)cb * kk);
		for (int q = 0; q < HML__CG_CONV_JB / 8; q++)
			fprintf(f, "\t\t\t\t\t\t\t\tv%d_%d += wv * s%d;\n", cb, q, q);
		fputs("\t\t\t\t\t\t\t}\n", f);
	}
	fputs("\t\t\t\t\t\t}\n\t\t\t\t\t}\n", f);
}

/* The block's channels from `first` (the last block may overlap the one
 * before it) and columns up to the row's end into dst, through the
 * activation. */
static void put_store(FILE *f, const hml__cg_conv *c, int vec, int nc)
{
	if (vec) {
		fprintf(f, "\t\t\t\tfloat acc[%d][%d];\n\n", nc, HML__CG_CONV_JB);
		for (int cb = 0; cb < nc; cb++)
			for (int q = 0; q < HML__CG_CONV_JB / 8; q++)
				fprintf(f, "\t\t\t\tmemcpy(&acc[%d][%d], &v%d_%d, sizeof(v8));\n", cb, 8 * q,
				        cb, q);
	}
	fprintf(f, "\t\t\t\tfor (int cb = first; cb < %d; cb++)\n"
	        "\t\t\t\t\tfor (int jj = 0; jj < n; jj++)\n"
	        "\t\t\t\t\t\t%s[(co0 + cb) * %lld + i * %lld + j0 + jj] = ",
	        nc, c->dst, (long long)c->dst_plane, (long long)c->dst_row);
	if (c->act)
		fprintf(f, "hml_%s_%s(acc[cb][jj]);\n", c->id, c->act);
	else
		fputs("acc[cb][jj];\n", f);
}

/* The loops over (channel block, image row, column block), one form. */
static void put_loops(FILE *f, const hml__cg_conv *c, int vec, int nc)
{
	long long cb = nc, out = (long long)c->out;
	long long nblk = (out + cb - 1) / cb;

	fputs("\t{\n", f);
	if (vec)
		fputs("\t\ttypedef float v8 __attribute__((vector_size(32)));\n\n", f);
	if ((double)c->out * (double)c->in * c->kernel * c->kernel * (double)c->h * (double)c->w >=
	    HML__CG_CONV_PAR_MIN)
		fputs("#ifdef _OPENMP\n#pragma omp parallel for collapse(2) schedule(static) if (par)\n"
		      "#endif\n", f);
	fprintf(f, "\tfor (int c = 0; c < %lld; c++)\n"
	        "\t\tfor (int i = 0; i < %lld; i++) {\n"
	        "\t\t\tconst int co0 = c * %lld < %lld ? c * %lld : %lld, first = c * %lld - co0;\n\n"
	        "\t\t\tfor (int j0 = 0; j0 < %lld; j0 += %d) {\n"
	        "\t\t\t\tconst int n = %lld - j0 < %d ? %lld - j0 : %d;\n\n",
	        nblk, (long long)c->h, cb, out - cb, cb, out - cb, cb,
	        (long long)c->w, HML__CG_CONV_JB, (long long)c->w, HML__CG_CONV_JB,
	        (long long)c->w, HML__CG_CONV_JB);
	put_init(f, c, vec, nc);
	put_sums(f, c, vec, nc);
	put_store(f, c, vec, nc);
	fputs("\t\t\t}\n\t\t}\n\t}\n", f);
}

void hml__cg_put_conv_direct(FILE *f, const hml__cg_conv *c)
{
	int nc = c->out < HML__CG_CONV_CB ? (int)c->out : HML__CG_CONV_CB;

	fprintf(f, "\t/* layer %d: conv %lld -> %lld, %dx%d, %s: direct, blocks of %d channels x "
	        "%d columns */\n", c->layer, (long long)c->in, (long long)c->out, c->kernel,
	        c->kernel, c->act ? c->act : "identity", nc, HML__CG_CONV_JB);
	fputs("#if defined(__GNUC__)\n", f);
	put_loops(f, c, 1, nc);
	fputs("#else\n", f);
	put_loops(f, c, 0, nc);
	fputs("#endif\n", f);
}
