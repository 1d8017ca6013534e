/*
 * heat - the 2-D heat equation on an n x n grid, explicit 5-point stencil
 * (heat_physics.c), marked for hml with directives (hml-cc(1)).
 *
 * Two ways to replace it, chosen with --region:
 *   field  the hml region "heat_field" advances the whole field K steps per
 *          call, in place (a CNN's job; zero padding is the boundary):
 *            inout  [0:n, 0:n] = ([1:n+1, 1:n+1])   of u
 *   rows   the hml region "heat_rows" is one step, each cell's 5-point
 *          neighbourhood a row (an MLP's job):
 *            input  [i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2])  of u, u, u
 *            output [i, j, 0:1] = ([i, j])                            of v
 *
 * Quantities of interest (HML_QOI): "field" (the final n x n field) and
 * "total_heat" (the sum of the field after each region call's worth of steps).
 *
 *   heat [--n N] [--steps T] [--k K] [--alpha A] [--region field|rows]
 *        [--init random|mode] [--seed S] [--quiet]
 *
 * heat_api.c is the same program written against the C API.
 *
 * Annotation: over the 2% goal (6 lines of this program of ~300):
 * the program holds two regions, chosen at run time, and each needs its
 * own: three functors (the field, the 5-point rows, the one-cell output),
 * the two ml directives, a declared shape for each of the two flat
 * buffers (their row length, n+2, is no slice's upper bound), the two
 * quantities of interest and the line that prints the mode in effect.
 */
#include "heat_physics.h"

#pragma approx declare tensor_functor(five: [i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2]))
#pragma approx declare tensor_functor(one: [i, j, 0:1] = ([i, j]))
#pragma approx declare tensor_functor(whole: [0:n, 0:n] = ([1:n+1, 1:n+1]))

int main(int argc, char **argv)
{
	struct heat h;
	double *u, *v, *t;
	long c, n;
	int rc;

	if ((rc = heat_setup(&h, argc, argv)) != 0)
		return rc;
	n = h.n, u = h.u, v = h.v;
#pragma hml declare shape(u[n+2][n+2])
#pragma hml declare shape(v[n+2][n+2])
	for (c = 0; c < h.calls; c++) {
		if (h.rows) {
#pragma hml ml in(five(u[1:n+1, 1:n+1], u[1:n+1, 1:n+1], u[1:n+1, 1:n+1])) out(one(v[1:n+1, 1:n+1])) label("heat_rows")
			heat_step(u, v, n, h.alpha);
			t = u, u = v, v = t;    /* double buffers */
		} else {
#pragma hml ml inout(whole(u[1:n+1, 1:n+1])) label("heat_field")
			heat_advance(u, v, &h);
		}
		h.heat[c] = heat_total(u, n);
	}
	if ((rc = heat_finish(&h, u)) == 0) {
#pragma hml qoi(h.field[0:n, 0:n]) name("field")
#pragma hml qoi(h.heat[0:h.calls]) name("total_heat")
		heat_report(&h, hml_mode_name(hml_region_mode(hml_region_find(h.rows ? "heat_rows" : "heat_field"))));
	}
	heat_free(&h);
	return rc;
}
