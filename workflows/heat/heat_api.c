/*
 * heat_api - the 2-D heat stencil (heat_physics.c) written against the hml
 * C API: the same program as heat.c, whose directives hml cc translates.
 * The regions, the quantities of interest and the arguments are described
 * at the top of heat.c.
 *
 * Built with -DHML_BASELINE it contains no hml call at all.
 */
#include <stdint.h>
#include <stdio.h>

#include "heat_physics.h"

#ifndef HML_BASELINE
#include <hml/hml.h>

static int fail(const char *what)
{
	fprintf(stderr, "heat: error: %s: %s\n", what, hml_error_last()->message);
	return 1;
}

/* The region and its maps (see the top of heat.c). */
static int describe(hml_region **r, const struct heat *h, double *u, double *v)
{
	long n = h->n;
	hml_symbol sym[1] = { { "n", n } };
	hml_array in[3] = { HML_ARRAY_2D(u, HML_F64, n + 2, n + 2), HML_ARRAY_2D(u, HML_F64, n + 2, n + 2),
	                    HML_ARRAY_2D(u, HML_F64, n + 2, n + 2) };
	hml_array out = HML_ARRAY_2D(v, HML_F64, n + 2, n + 2);
	const char *label = h->rows ? "heat_rows" : "heat_field";

	if (hml_region_open(r, label, NULL) < 0)
		return fail("cannot open the region");
	if (h->rows ? hml_region_input(*r, "[i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2])",
	                               "1:n+1, 1:n+1", in, 3, sym, 1) < 0 ||
	              hml_region_output(*r, "[i, j, 0:1] = ([i, j])", "1:n+1, 1:n+1", &out, 1, sym, 1) < 0
	            : hml_region_inout(*r, "[0:n, 0:n] = ([1:n+1, 1:n+1])", NULL, in, 1, sym, 1) < 0)
		return fail("cannot describe the region");
	return 0;
}
#endif

int main(int argc, char **argv)
{
	struct heat h;
	double *u, *v, *t;
	long c;
	int rc;
#ifndef HML_BASELINE
	hml_region *region = NULL;
#endif

	if ((rc = heat_setup(&h, argc, argv)) != 0)
		return rc;
	u = h.u, v = h.v;
#ifndef HML_BASELINE
	if ((rc = describe(&region, &h, u, v)) != 0)
		goto done;
#endif
	for (c = 0; c < h.calls; c++) {
#ifndef HML_BASELINE
		int run;
		size_t piece;
		if (h.rows) {   /* double buffers: point the maps at this step's */
			for (piece = 0; piece < 3; piece++)
				hml_tmap_set_data(hml_region_input_map(region, 0), piece, u);
			hml_tmap_set_data(hml_region_output_map(region, 0), 0, v);
		}
		if ((run = hml_region_begin(region)) < 0) {
			rc = fail("region failed");
			goto done;
		}
		if (run)
#endif
		{
			if (h.rows)
				heat_step(u, v, h.n, h.alpha);
			else
				heat_advance(u, v, &h);
		}
#ifndef HML_BASELINE
		if (hml_region_end(region) < 0) {
			rc = fail("region failed");
			goto done;
		}
#endif
		if (h.rows) {
			t = u, u = v, v = t;    /* double buffers */
		}
		h.heat[c] = heat_total(u, h.n);
	}
	if ((rc = heat_finish(&h, u)) != 0)
		goto done;
#ifndef HML_BASELINE
	{
		int64_t fshape[2] = { h.n, h.n }, hshape[1] = { h.calls };
		if (hml_qoi_write("field", h.field, HML_F64, 2, fshape) < 0 ||
		    hml_qoi_write("total_heat", h.heat, HML_F64, 1, hshape) < 0) {
			rc = fail("cannot record the quantity of interest");
			goto done;
		}
	}
	heat_report(&h, hml_mode_name(hml_region_mode(region)));
#else
	heat_report(&h, "baseline");
#endif
done:
#ifndef HML_BASELINE
	if (region && hml_region_flush(region) < 0 && rc == 0)
		rc = fail("cannot write collected data");
	hml_region_free(region);
#endif
	heat_free(&h);
	return rc;
}
