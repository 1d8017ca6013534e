/*
 * miniweather_api - miniWeather (miniweather_physics.c) written against
 * the hml C API: the same program as miniweather.c, whose directives hml
 * cc translates. The region, the quantities of interest and the arguments
 * are described at the top of miniweather.c.
 *
 * Built with -DHML_BASELINE it contains no hml call at all.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "miniweather_physics.h"

#ifndef HML_BASELINE
#include <hml/hml.h>

static int fail(const char *what)
{
	fprintf(stderr, "miniweather: error: %s: %s\n", what, hml_error_last()->message);
	return 1;
}

/* The quantities of interest: the final interior state [4, nz, nx], the
 * per-call totals, and the interior state over time [records, 4, nz, nx]. */
static int record(const struct mw *w)
{
	const struct model *m = &w->m;
	int64_t sshape[3] = { NV, m->nz, m->nx }, tshape[1] = { w->calls + 1 };
	int64_t rshape[4] = { w->nrec, NV, m->nz, m->nx };
	double *s = malloc(sizeof(double) * NV * (size_t)(m->nx * m->nz));
	int rc = 0;

	if (!s) {
		fprintf(stderr, "miniweather: error: out of memory\n");
		return 1;
	}
	mw_interior(m, s);
	if (hml_qoi_write("state", s, HML_F64, 3, sshape) < 0 ||
	    hml_qoi_write("mass", w->mass, HML_F64, 1, tshape) < 0 ||
	    hml_qoi_write("energy", w->energy, HML_F64, 1, tshape) < 0 ||
	    hml_qoi_write_steps("trajectory", w->traj_steps, w->traj, HML_F64, 4, rshape) < 0)
		rc = fail("cannot record the quantity of interest");
	free(s);
	return rc;
}
#endif

int main(int argc, char **argv)
{
	struct mw w;
	long s, c;
	int rc;
#ifndef HML_BASELINE
	hml_region *region = NULL;
	hml_symbol sym[2];
	hml_array st;
#endif

	if ((rc = mw_setup(&w, argc, argv)) != 0)
		return rc;
#ifndef HML_BASELINE
	sym[0] = (hml_symbol){ "nz", w.o.nz };
	sym[1] = (hml_symbol){ "nx", w.o.nx };
	st = HML_ARRAY_3D(w.m.state, HML_F64, NV, w.m.h, w.m.w);
	if (hml_region_open(&region, "miniweather", NULL) < 0 ||
	    hml_region_inout(region, "[0:4, 0:nz+4, 0:nx+4] = ([0:4, 0:nz+4, 0:nx+4])",
	                     NULL, &st, 1, sym, 2) < 0) {
		rc = fail("cannot set up region 'miniweather'");
		goto done;
	}
#endif
	for (c = 0; c < w.calls; c++) {
#ifndef HML_BASELINE
		int run = hml_region_begin(region);
		if (run < 0) {
			rc = fail("region 'miniweather' failed");
			goto done;
		}
		if (run)
#endif
			for (s = 0; s < w.o.k; s++)
				mw_step(&w.m);
#ifndef HML_BASELINE
		if (hml_region_end(region) < 0) {
			rc = fail("region 'miniweather' failed");
			goto done;
		}
#endif
		mw_called(&w, c);
	}
	mw_finish(&w);
#ifndef HML_BASELINE
	if ((rc = record(&w)) == 0)
		mw_report(&w, hml_mode_name(hml_region_mode(region)));
done:
	if (region && hml_region_flush(region) < 0 && rc == 0)
		rc = fail("cannot write collected data");
	hml_region_free(region);
#else
	mw_report(&w, "baseline");
#endif
	mw_free(&w);
	return rc;
}
