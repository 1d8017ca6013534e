/*
 * runtime/src/inout.c - regions that update their data in place: one
 * description serves as both input and output (see hml_region_inout()).
 */
#include "core/error.h"
#include "hml/region.h"

int hml_region_inout(hml_region *r, const char *functor, const char *domain,
                     const hml_array *arrays, size_t narrays,
                     const hml_symbol *symbols, size_t nsymbols)
{
	hml_functor *fn = NULL;
	hml_tmap *in = NULL, *out = NULL;
	int rc;

	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	/* Both maps are bound before either is added, so that a bad functor
	 * or array leaves the region as it was. */
	if ((rc = hml_functor_parse(&fn, functor)) < 0 ||
	    (rc = hml_tmap_new(&in, fn, domain, arrays, narrays, symbols, nsymbols)) < 0 ||
	    (rc = hml_tmap_new(&out, fn, domain, arrays, narrays, symbols, nsymbols)) < 0)
		goto done;
	if ((rc = hml_region_add_input(r, in)) < 0)
		goto done;
	in = NULL;
	if ((rc = hml_region_add_output(r, out)) < 0)
		goto done;
	out = NULL;
done:
	hml_tmap_free(in);
	hml_tmap_free(out);
	hml_functor_free(fn);
	return rc;
}
