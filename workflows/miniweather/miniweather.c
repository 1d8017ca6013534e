/*
 * miniweather - 2-D compressible Euler equations for a stratified, dry
 * atmosphere (miniweather_physics.c), marked for hml with directives
 * (hml-cc(1)).
 *
 * The region "miniweather" advances the whole state --k steps per call, in
 * place, one sample per call, halos included:
 *   [0:4, 0:nz+4, 0:nx+4] = ([0:4, 0:nz+4, 0:nx+4])   of state (input and output)
 * --warm W accurate steps run first, outside the region (the paper ran
 * 1000 accurate steps and then let the model take over).
 *
 * Quantities of interest (HML_QOI): "state" (the final interior state,
 * [4, nz, nx]), "mass" and "energy" (after the warm-up and after each
 * region call: [calls + 1]).
 *
 *   miniweather [--nx NX] [--nz NZ] [--steps T] [--k K] [--warm W]
 *               [--seed S] [--quiet]
 *
 * miniweather_api.c is the same program written against the C API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "miniweather_physics.h"

#pragma approx declare tensor_functor(whole: [0:4, 0:nz+4, 0:nx+4] = ([0:4, 0:nz+4, 0:nx+4]))

/* The quantities of interest: the final interior state [4, nz, nx] and
 * the per-call totals. */
static int record(struct model *m, const double *mass, const double *energy, long n)
{
	double *s = malloc(sizeof(double) * NV * (size_t)(m->nx * m->nz)); /* hml: */
	long v, k;

	if (!s) { /* hml: */
		fprintf(stderr, "miniweather: error: out of memory\n"); /* hml: */
		return 1; /* hml: */
	} /* hml: */
	for (v = 0; v < NV; v++) /* hml: */
		for (k = 0; k < m->nz; k++) /* hml: */
			memcpy(s + (v * m->nz + k) * m->nx, &Q(m->state, v, k + HS, HS), /* hml: */
			       sizeof(double) * (size_t)m->nx);
#pragma hml qoi(s[0:NV, 0:m->nz, 0:m->nx]) name("state")
#pragma hml qoi(mass[0:n])
#pragma hml qoi(energy[0:n])
	free(s); /* hml: */
	return 0;
}

int main(int argc, char **argv)
{
	struct mw w;
	long s, c;
	int rc;

	if ((rc = mw_setup(&w, argc, argv)) != 0)
		return rc;
	for (c = 0; c < w.calls; c++) {
#pragma hml ml inout(whole(w.m.state[0:NV, 0:w.m.h, 0:w.m.w])) label("miniweather")
		for (s = 0; s < w.o.k; s++)
			mw_step(&w.m);
		mw_called(&w, c);
	}
	mw_finish(&w);
	if ((rc = record(&w.m, w.mass, w.energy, w.calls + 1)) == 0)
		mw_report(&w, hml_mode_name(hml_region_mode(hml_region_find("miniweather"))));
	mw_free(&w);
	return rc;
}
