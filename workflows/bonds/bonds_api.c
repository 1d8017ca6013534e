/*
 * bonds_api - the bonds pricer (bonds_physics.c) written against the hml
 * C API: the same program as bonds.c, whose directives hml cc translates.
 * The region, the quantity of interest and the arguments are described at
 * the top of bonds.c.
 *
 * Built with -DHML_BASELINE it contains no hml call at all.
 */
#include <math.h>
#include <stdio.h>

#include "bonds_physics.h"

#ifndef HML_BASELINE
#include <hml/hml.h>

static int fail(const char *what)
{
	fprintf(stderr, "bonds: error: %s: %s\n", what, hml_error_last()->message);
	return 1;
}
#endif

int main(int argc, char **argv)
{
	struct bonds b;
	long i, off;
	int rc = 0;
#ifndef HML_BASELINE
	hml_region *region = NULL;
	hml_symbol sym[1];
	hml_array in[2], res[1];
#endif

	if ((rc = bonds_setup(&b, argc, argv)) != 0)
		return rc;
#ifndef HML_BASELINE
	if (hml_region_open(&region, "bonds", NULL) < 0) {
		rc = fail("cannot open region 'bonds'");
		goto done;
	}
	sym[0] = (hml_symbol){ "n", b.batch };
	in[0] = HML_ARRAY_1D(b.rate, HML_F64, b.batch);
	in[1] = HML_ARRAY_2D(b.dates, HML_I32, b.batch, NDATES);
	res[0] = HML_ARRAY_2D(b.out, HML_F64, b.batch, 4);
	for (i = 0; i < b.bonds; i++)
		b.out[i][3] = NAN;      /* the yield, when the original code runs */
	if (hml_region_input(region, "[i, 0:10] = ([i], [i, 0:9])", "0:n", in, 2, sym, 1) < 0 ||
	    hml_region_output(region, "[i, 0:3] = ([i, 0:3])", "0:n", res, 1, sym, 1) < 0) {
		rc = fail("cannot describe region 'bonds'");
		goto done;
	}
#endif
	for (off = 0; off < b.bonds; off += b.batch) {
		long n = b.bonds - off < b.batch ? b.bonds - off : b.batch, j;
		int run = 1;
#ifndef HML_BASELINE
		/* A last, shorter batch runs outside the region. */
		if (n == b.batch && (run = hml_region_seek(region, off)) == 0)
			run = hml_region_begin(region);
		if (run < 0) {
			rc = fail("region 'bonds' failed");
			goto done;
		}
#endif
		if (run) {
#pragma omp parallel for schedule(static)
			for (j = off; j < off + n; j++)
				bonds_price(b.rate[j], b.dates[j], b.out[j]);
		}
#ifndef HML_BASELINE
		if (n == b.batch && hml_region_end(region) < 0) {
			rc = fail("region 'bonds' failed");
			goto done;
		}
#endif
	}
	bonds_finish(&b);
#ifndef HML_BASELINE
	if (HML_QOI_WRITE_1D("dirty_price", b.dirty, HML_F64, b.bonds) < 0) {
		rc = fail("cannot record the quantity of interest");
		goto done;
	}
	rc = bonds_report(&b, hml_mode_name(hml_region_mode(region)));
done:
	if (region && hml_region_flush(region) < 0 && rc == 0)
		rc = fail("cannot write collected data");
	hml_region_free(region);
#else
	(void)i;
	rc = bonds_report(&b, "baseline");
#endif
	bonds_free(&b);
	return rc;
}
