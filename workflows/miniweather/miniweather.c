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
 * Steps per model call: the model replaces one region call, so it
 * predicts the state --k steps ahead and is trained on data collected at
 * that --k; a larger k makes fewer model calls (less error build-up, a
 * harder map). workflow.json's search_args declare --k (5, 10, 20) and the
 * runtime's interleave ratio (0 to 4) to hml search, which judges each
 * pair by the error of the final state after the whole run
 * (hml-workflow(5), hml-search(1)).
 *
 * Quantities of interest (HML_QOI): "state" (the final interior state,
 * [4, nz, nx]), "mass" and "energy" (after the warm-up and after each
 * region call: [calls + 1]), and "trajectory", the interior state over
 * time ([records, 4, nz, nx], after --records R calls spread over the run,
 * each with its step: hml_qoi_write_steps(), which no directive spells).
 *
 *   miniweather [--nx NX] [--nz NZ] [--steps T] [--k K] [--warm W]
 *               [--records R] [--seed S] [--quiet]
 *
 * miniweather_api.c is the same program written against the C API.
 */
#include "miniweather_physics.h"

#pragma approx declare tensor_functor(whole: [0:4, 0:nz+4, 0:nx+4] = ([0:4, 0:nz+4, 0:nx+4]))

int main(int argc, char **argv)
{
	struct mw w;
	long s, c;
	int rc;

	if ((rc = mw_setup(&w, argc, argv)) != 0)
		return rc;
#pragma hml declare shape(w.m.state[NV][w.m.h][w.m.w])
	for (c = 0; c < w.calls; c++) {
#pragma hml ml inout(whole(w.m.state[0:NV, 0:w.m.h, 0:w.m.w])) label("miniweather")
		for (s = 0; s < w.o.k; s++)
			mw_step(&w.m);
		mw_called(&w, c);
	}
	mw_finish(&w);
#pragma hml qoi(w.m.state[0:NV, HS:w.o.nz+HS, HS:w.o.nx+HS]) name("state")
#pragma hml qoi(w.mass[0:w.calls+1]) name("mass")
#pragma hml qoi(w.energy[0:w.calls+1]) name("energy")
	if (hml_qoi_write_steps("trajectory", w.traj_steps, w.traj, HML_F64, 4,
	                        (const int64_t[4]){ w.nrec, NV, w.o.nz, w.o.nx }) < 0) {
		mw_free(&w);
		return 1;
	}
	mw_report(&w, hml_mode_name(hml_region_mode(hml_region_find("miniweather"))));
	mw_free(&w);
	return 0;
}
