/*
 * minibude - docking energies of ligand poses against a protein, in the
 * manner of miniBUDE (minibude_physics.c), marked for hml with directives
 * (hml-cc(1)).
 *
 * The per-pose energy is the hml region "minibude", one row per pose:
 *   input  [i, 0:6] = (pose[i][0:6])     float32
 *   output [i, 0:1] = (energy[i])        float32
 * The quantity of interest (HML_QOI) is every energy.
 *
 *   minibude [--poses N] [--batch B] [--ligand L] [--protein P] [--seed S]
 *            [--deck D] [--translation T] [--check] [--quiet]
 *
 * --translation T draws each pose's translation from {-T, ..., T} angstrom
 * (default 7): a wider T is an out-of-distribution run for a model trained
 * on the default (hml evaluate --args '... --translation 14').
 *
 * minibude_api.c is the same program written against the C API.
 */
#include "minibude_physics.h"

#pragma approx declare tensor_functor(pose_in: [i, 0:6] = ([i, 0:6]))
#pragma approx declare tensor_functor(pose_out: [i, 0:1] = ([i]))

int main(int argc, char **argv)
{
	struct minibude m;
	long off;
	int rc;

	if ((rc = minibude_setup(&m, argc, argv)) != 0)
		return rc;
	for (off = 0; off < m.poses; off += m.batch) {
		long n = m.poses - off < m.batch ? m.poses - off : m.batch, j;
#pragma hml ml in(pose_in(m.d.poses[0:n, 0:6])) out(pose_out(m.energy[0:n])) seek(off) label("minibude")
#pragma omp parallel for schedule(dynamic, 4)
		for (j = off; j < off + n; j++)
			m.energy[j] = minibude_energy(&m.d, m.d.poses[j]);
	}
	minibude_finish(&m);
#pragma hml qoi(m.energy[0:m.poses]) name("energy")
	rc = minibude_report(&m, hml_mode_name(hml_region_mode(hml_region_find("minibude"))));
	minibude_free(&m);
	return rc;
}
