/*
 * bonds - fixed-rate bonds priced from a clean price (bonds_physics.c),
 * marked for hml with directives (hml-cc(1)).
 *
 * The whole per-bond computation is the hml region "bonds", one row per bond:
 *   input  [i, 0:10] = (rate[i], dates[i][0:9])    dates: int32 y, m, d of
 *                                                   issue, maturity, today
 *   output [i, 0:3]  = (out[i][0:3])               dirty, accrued, clean
 * The yield, out[i][3], is solved inside the region but is not one of its
 * mapped outputs: with "today" days before maturity it reaches 1e9 (a
 * 10% discount over one day), and a model trained on such a column learns
 * nothing else. Under a surrogate it is NaN. The quantity of interest
 * (HML_QOI) is every dirty price.
 *
 *   bonds [--bonds N] [--batch B] [--seed S] [--check] [--quiet]
 *
 * bonds_api.c is the same program written against the C API.
 */
#include <math.h>

#include "bonds_physics.h"

#pragma approx declare tensor_functor(bond_in: [i, 0:10] = ([i], [i, 0:9]))
#pragma approx declare tensor_functor(bond_out: [i, 0:3] = ([i, 0:3]))

int main(int argc, char **argv)
{
	struct bonds b;
	long i, off;
	int rc;

	if ((rc = bonds_setup(&b, argc, argv)) != 0)
		return rc;
	for (i = 0; i < b.bonds; i++) b.out[i][3] = NAN; /* hml: a surrogate leaves the yield NaN */
	for (off = 0; off < b.bonds; off += b.batch) {
		long n = b.bonds - off < b.batch ? b.bonds - off : b.batch, j;
#pragma hml ml in(bond_in(b.rate[0:n], b.dates[0:n, 0:NDATES])) out(bond_out(b.out[0:n, 0:4])) seek(off) label("bonds")
#pragma omp parallel for schedule(static)
		for (j = off; j < off + n; j++)
			bonds_price(b.rate[j], b.dates[j], b.out[j]);
	}
	bonds_finish(&b);
#pragma hml qoi(b.dirty[0:b.bonds]) name("dirty_price")
	rc = bonds_report(&b, hml_mode_name(hml_region_mode(hml_region_find("bonds"))));
	bonds_free(&b);
	return rc;
}
