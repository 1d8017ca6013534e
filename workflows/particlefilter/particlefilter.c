/*
 * particlefilter - object tracking in noisy video with a particle filter
 * (particlefilter_physics.c), marked for hml with directives (hml-cc(1)).
 *
 * The whole tracker is the hml region "particlefilter", one row per video:
 *   input  [v, 0:T, 0:S, 0:S] = ([v, 0:T, 0:S, 0:S])   frames (int32)
 *   output [v, 0:T, 0:2]      = ([v, 0:T, 0:2])        estimates (x, y)
 * Frames in, positions out: a CNN with a vector head (family cnnvec) is
 * the surrogate.
 *
 * Quantities of interest (HML_QOI): "final_position" [V, 2] (the estimate
 * at the last frame), "truth" [V, 2] (where the disk really is then) and
 * "final_error" [V] (the distance between the two).
 *
 *   particlefilter [--size S] [--frames T] [--videos V] [--particles P]
 *                  [--seed N] [--label estimate|truth] [--quiet]
 *
 * Training data (--label truth, collect mode only): a surrogate trained on
 * the region's outputs learns the filter's estimates, error included, and
 * can at best match the filter. The truth is known here, so the collected
 * output may be the true positions instead: the output map then binds
 * p.truth (the group's output "arrays" attribute names it), the tracker
 * still runs as the region's code, and any other mode exits 2, so no run
 * whose outputs matter ever mixes the two.
 *
 * Exit 1 when the tracker's own estimates miss the truth (pf_track()): a
 * surrogate's estimates are the model's business, so a run whose region
 * the model replaced is not checked.
 * particlefilter_api.c is the same program written against the C API.
 */
#include "particlefilter_physics.h"

#pragma approx declare tensor_functor(video_in: [v, 0:T, 0:S, 0:S] = ([v, 0:T, 0:S, 0:S]))
#pragma approx declare tensor_functor(video_out: [v, 0:T, 0:2] = ([v, 0:T, 0:2]))

int main(int argc, char **argv)
{
	struct pfilter p;
	int rc, ok = 1;        /* stays 1 where a model replaces the tracker */

	if ((rc = pf_setup(&p, argc, argv)) != 0)
		return rc;
	if (p.label_truth) {
		/* The same region, its output read from the truth: collection
		 * only (if(0): no model ever writes over the truth). */
#pragma hml ml in(video_in(p.pixels[0:p.videos, 0:p.frames, 0:p.size, 0:p.size])) out(video_out(p.truth[0:p.videos, 0:p.frames, 0:2])) label("particlefilter") if(0)
		ok = pf_track(&p);
		if ((rc = pf_label_check(&p, hml_mode_name(hml_region_mode(hml_region_find("particlefilter"))))) != 0) {
			pf_free(&p);
			return rc;
		}
	} else {
#pragma hml ml in(video_in(p.pixels[0:p.videos, 0:p.frames, 0:p.size, 0:p.size])) out(video_out(p.est[0:p.videos, 0:p.frames, 0:2])) label("particlefilter")
		ok = pf_track(&p);
	}
	if (ok >= 0) {
		pf_finish(&p);
#pragma hml qoi(p.fin[0:p.videos, 0:2]) name("final_position")
#pragma hml qoi(p.tru[0:p.videos, 0:2]) name("truth")
#pragma hml qoi(p.err[0:p.videos]) name("final_error")
		pf_report(&p, hml_mode_name(hml_region_mode(hml_region_find("particlefilter"))));
	}
	pf_free(&p);
	return ok == 1 ? 0 : 1;
}
