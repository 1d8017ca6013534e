/*
 * bench/minibude_enc.c - an experiment, not a workflow: miniBUDE
 * (workflows/minibude/minibude_physics.c) whose region input is an
 * encoding of the pose instead of its raw angles, so that bench/
 * minibude-search.sh can train hml's own MLP on other input features
 * without a change to hml. MB_ENC in the environment picks the encoding:
 *
 *   sincos  sin and cos of the three angles, then the translations (9)
 *   rot     the nine entries of the rotation matrix Rz*Ry*Rx the physics
 *           applies, then the translations (12): every ligand atom's
 *           position is linear in these
 *
 * The energies, arguments and quantity of interest are minibude's; the
 * program takes minibude's arguments. It runs in collect mode only in
 * the bench (a model trained on it is judged on rows it collects).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hml/hml.h>

#include "minibude_physics.h"

/* The features of pose p into f; returns their count. */
static int encode(const float *p, float *f, int rot)
{
	float sx = sinf(p[0]), cx = cosf(p[0]), sy = sinf(p[1]), cy = cosf(p[1]);
	float sz = sinf(p[2]), cz = cosf(p[2]);
	float sc[9] = { sx, sy, sz, cx, cy, cz, p[3], p[4], p[5] };
	float m[12] = { cy * cz, sx * sy * cz - cx * sz, cx * sy * cz + sx * sz,
	                cy * sz, sx * sy * sz + cx * cz, cx * sy * sz - sx * cz,
	                -sy, sx * cy, cx * cy, p[3], p[4], p[5] };

	memcpy(f, rot ? m : sc, rot ? sizeof m : sizeof sc);
	return rot ? 12 : 9;
}

static int fail(const char *what)
{
	fprintf(stderr, "minibude_enc: error: %s: %s\n", what, hml_error_last()->message);
	return 1;
}

int main(int argc, char **argv)
{
	struct minibude m;
	hml_region *region = NULL;
	hml_symbol sym[1];
	hml_array in[1], out[1];
	const char *enc = getenv("MB_ENC");
	int rot, nf, rc;
	char functor[64];
	float *feat = NULL;
	long off, j;

	if (!enc || (strcmp(enc, "sincos") && strcmp(enc, "rot"))) {
		fprintf(stderr, "minibude_enc: error: MB_ENC must be 'sincos' or 'rot', got '%s'\n",
		        enc ? enc : "");
		return 2;
	}
	rot = !strcmp(enc, "rot");
	nf = rot ? 12 : 9;
	if ((rc = minibude_setup(&m, argc, argv)) != 0)
		return rc;
	if (!(feat = malloc(sizeof(float) * (size_t)nf * (size_t)m.poses))) {
		fprintf(stderr, "minibude_enc: error: out of memory\n");
		rc = 1;
		goto done;
	}
	for (j = 0; j < m.poses; j++)
		encode(m.d.poses[j], feat + (size_t)nf * (size_t)j, rot);
	snprintf(functor, sizeof functor, "[i, 0:%d] = ([i, 0:%d])", nf, nf);
	sym[0] = (hml_symbol){ "n", m.batch };
	in[0] = HML_ARRAY_2D(feat, HML_F32, m.batch, nf);
	out[0] = HML_ARRAY_1D(m.energy, HML_F32, m.batch);
	if (hml_region_open(&region, "minibude", NULL) < 0 ||
	    hml_region_input(region, functor, "0:n", in, 1, sym, 1) < 0 ||
	    hml_region_output(region, "[i, 0:1] = ([i])", "0:n", out, 1, sym, 1) < 0) {
		rc = fail("cannot describe region 'minibude'");
		goto done;
	}
	/* Whole batches through the region, a last shorter one outside it. */
	for (off = 0; off < m.poses; off += m.batch) {
		long n = m.poses - off < m.batch ? m.poses - off : m.batch;
		int run = 1;

		if (n == m.batch && (run = hml_region_seek(region, off)) == 0)
			run = hml_region_begin(region);
		if (run < 0) {
			rc = fail("region 'minibude' failed");
			goto done;
		}
		if (run)
			for (j = 0; j < n; j++)
				m.energy[off + j] = minibude_energy(&m.d, m.d.poses[off + j]);
		if (n == m.batch && hml_region_end(region) < 0) {
			rc = fail("region 'minibude' failed");
			goto done;
		}
	}
	minibude_finish(&m);
	if (HML_QOI_WRITE_1D("energy", m.energy, HML_F32, m.poses) < 0) {
		rc = fail("cannot record the quantity of interest");
		goto done;
	}
	rc = minibude_report(&m, hml_mode_name(hml_region_mode(region)));
done:
	if (region && hml_region_flush(region) < 0 && rc == 0)
		rc = fail("cannot write collected data");
	hml_region_free(region);
	free(feat);
	minibude_free(&m);
	return rc;
}
