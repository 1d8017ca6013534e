/*
 * bench/minibude_ligand.c - prints the ligand's atoms of miniBUDE's deck
 * (x y z type, one a line), for bench/minibude_grid.py: the deck comes
 * from --deck alone (default 1), as in workflows/minibude, so these are the
 * atoms every collected pose moves. Takes minibude's arguments.
 */
#include <stdio.h>

#include "minibude_physics.h"

int main(int argc, char **argv)
{
	struct minibude m;
	long i;
	int rc;

	if ((rc = minibude_setup(&m, argc, argv)) != 0)
		return rc;
	for (i = 0; i < m.d.nl; i++)
		printf("%.9g %.9g %.9g %d\n", m.d.ligand[i].x, m.d.ligand[i].y, m.d.ligand[i].z,
		       m.d.ligand[i].type);
	minibude_free(&m);
	return 0;
}
