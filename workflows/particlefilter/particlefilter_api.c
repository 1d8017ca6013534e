/*
 * particlefilter_api - the particle filter (particlefilter_physics.c)
 * written against the hml C API: the same program as particlefilter.c,
 * whose directives hml cc translates. The region, the quantities of
 * interest, the arguments and the exit status are described at the top of
 * particlefilter.c.
 *
 * Built with -DHML_BASELINE it contains no hml call at all.
 */
#include <stdint.h>
#include <stdio.h>

#include "particlefilter_physics.h"

#ifndef HML_BASELINE
#include <hml/hml.h>

static int fail(const char *what)
{
	fprintf(stderr, "particlefilter: error: %s: %s\n", what, hml_error_last()->message);
	return 1;
}

/* The region and its maps (see the top of particlefilter.c). */
static int describe(hml_region **r, const struct pfilter *p)
{
	hml_symbol sym[3] = { { "T", p->frames }, { "S", p->size }, { "V", p->videos } };
	hml_array in = HML_ARRAY_4D(p->pixels, HML_I32, p->videos, p->frames, p->size, p->size);
	/* --label truth: the output map reads the truth (particlefilter.c says why) */
	double *labels = p->label_truth ? p->truth : p->est;
	hml_array out = HML_ARRAY_3D(labels, HML_F64, p->videos, p->frames, 2);

	in.name = "p.pixels";   /* as the directive form names them */
	out.name = p->label_truth ? "p.truth" : "p.est";
	if (hml_region_open(r, "particlefilter", NULL) < 0)
		return fail("cannot open the region");
	if (hml_region_input(*r, "[v, 0:T, 0:S, 0:S] = ([v, 0:T, 0:S, 0:S])", "0:V", &in, 1, sym, 3) < 0 ||
	    hml_region_output(*r, "[v, 0:T, 0:2] = ([v, 0:T, 0:2])", "0:V", &out, 1, sym, 3) < 0)
		return fail("cannot describe the region");
	return 0;
}
#endif

int main(int argc, char **argv)
{
	struct pfilter p;
	int rc, ok = 1;
#ifndef HML_BASELINE
	hml_region *region = NULL;
	int run;
#endif

	if ((rc = pf_setup(&p, argc, argv)) != 0)
		return rc;
#ifndef HML_BASELINE
	if ((rc = describe(&region, &p)) != 0 ||
	    (rc = pf_label_check(&p, hml_mode_name(hml_region_mode(region)))) != 0)
		goto done;
	if ((run = hml_region_begin(region)) < 0) {
		rc = fail("region failed");
		goto done;
	}
	if (run)
#else
	if ((rc = pf_label_check(&p, "baseline")) != 0)
		goto done;
#endif
		ok = pf_track(&p);
#ifndef HML_BASELINE
	if (hml_region_end(region) < 0) {
		rc = fail("region failed");
		goto done;
	}
#endif
	if (ok < 0) {
		rc = 1;
		goto done;
	}
	pf_finish(&p);
#ifndef HML_BASELINE
	{
		int64_t shape[2] = { p.videos, 2 };
		if (hml_qoi_write("final_position", p.fin, HML_F64, 2, shape) < 0 ||
		    hml_qoi_write("truth", p.tru, HML_F64, 2, shape) < 0 ||
		    HML_QOI_WRITE_1D("final_error", p.err, HML_F64, p.videos) < 0) {
			rc = fail("cannot record the quantity of interest");
			goto done;
		}
	}
	pf_report(&p, hml_mode_name(hml_region_mode(region)));
#else
	pf_report(&p, "baseline");
#endif
	rc = ok ? 0 : 1;
done:
#ifndef HML_BASELINE
	if (region && hml_region_flush(region) < 0 && rc == 0)
		rc = fail("cannot write collected data");
	hml_region_free(region);
#endif
	pf_free(&p);
	return rc;
}
