/*
 * minibude_api - the miniBUDE docking energies (minibude_physics.c) written
 * against the hml C API: the same program as minibude.c, whose directives
 * hml cc translates. The region, the quantity of interest and the
 * arguments are described at the top of minibude.c.
 *
 * Its original code iterates over the rows the runtime hands it
 * (hml_region_rows), so that a guard (hml deploy --guard) sends only the
 * poses it does not trust to the physics: workflow minibude-api.
 *
 * Built with -DHML_BASELINE it contains no hml call at all.
 */
#include <stdint.h>
#include <stdio.h>

#include "minibude_physics.h"

#ifndef HML_BASELINE
#include <hml/hml.h>

static int fail(const char *what)
{
	fprintf(stderr, "minibude: error: %s: %s\n", what, hml_error_last()->message);
	return 1;
}
#endif

int main(int argc, char **argv)
{
	struct minibude m;
	long off;
	int rc = 0;
#ifndef HML_BASELINE
	hml_region *region = NULL;
	hml_symbol sym[1];
	hml_array in[1], out[1];
#endif

	if ((rc = minibude_setup(&m, argc, argv)) != 0)
		return rc;
#ifndef HML_BASELINE
	if (hml_region_open(&region, "minibude", NULL) < 0) {
		rc = fail("cannot open region 'minibude'");
		goto done;
	}
	sym[0] = (hml_symbol){ "n", m.batch };
	in[0] = HML_ARRAY_2D(m.d.poses, HML_F32, m.batch, 6);
	out[0] = HML_ARRAY_1D(m.energy, HML_F32, m.batch);
	if (hml_region_input(region, "[i, 0:6] = ([i, 0:6])", "0:n", in, 1, sym, 1) < 0 ||
	    hml_region_output(region, "[i, 0:1] = ([i])", "0:n", out, 1, sym, 1) < 0 ||
	    hml_region_subset_enable(region) < 0) {
		rc = fail("cannot describe region 'minibude'");
		goto done;
	}
#endif
	for (off = 0; off < m.poses; off += m.batch) {
		long n = m.poses - off < m.batch ? m.poses - off : m.batch, j;
		int run = 1;
#ifndef HML_BASELINE
		/* A last, shorter batch runs outside the region. */
		if (n == m.batch && (run = hml_region_seek(region, off)) == 0)
			run = hml_region_begin(region);
		if (run < 0) {
			rc = fail("region 'minibude' failed");
			goto done;
		}
#endif
		if (run) {
			/* All the rows, or those the guard kept from the model. */
			const int64_t *rows = NULL;
			int64_t nrows = n;
#ifndef HML_BASELINE
			if (n == m.batch && hml_region_rows(region, &rows, &nrows) < 0) {
				rc = fail("region 'minibude' failed");
				goto done;
			}
#endif
#pragma omp parallel for schedule(dynamic, 4)
			for (j = 0; j < (long)nrows; j++) {
				long p = off + (long)(rows ? rows[j] : j);
				m.energy[p] = minibude_energy(&m.d, m.d.poses[p]);
			}
		}
#ifndef HML_BASELINE
		if (n == m.batch && hml_region_end(region) < 0) {
			rc = fail("region 'minibude' failed");
			goto done;
		}
#endif
	}
	minibude_finish(&m);
#ifndef HML_BASELINE
	if (HML_QOI_WRITE_1D("energy", m.energy, HML_F32, m.poses) < 0) {
		rc = fail("cannot record the quantity of interest");
		goto done;
	}
	rc = minibude_report(&m, hml_mode_name(hml_region_mode(region)));
done:
	if (region && hml_region_flush(region) < 0 && rc == 0)
		rc = fail("cannot write collected data");
	hml_region_free(region);
#else
	rc = minibude_report(&m, "baseline");
#endif
	minibude_free(&m);
	return rc;
}
