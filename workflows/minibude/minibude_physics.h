/*
 * minibude_physics.h - the miniBUDE docking energies without hml: what
 * minibude.c (its directive form, built by hml cc) and minibude_api.c (the
 * same program written against the C API) share, so that the physics is
 * written once.
 *
 * A run owns its deck and energies: minibude_setup() allocates them,
 * minibude_free() frees them.
 */
#ifndef MINIBUDE_PHYSICS_H
#define MINIBUDE_PHYSICS_H

typedef struct atom { float x, y, z; int type; } atom;

typedef struct deck {
	atom *ligand, *protein;
	long nl, np;
	float (*poses)[6];      /* rx, ry, rz, tx, ty, tz of each pose */
	long nposes;
} deck;

struct minibude {
	long poses, batch, ligand, protein;     /* poses per region call: batch */
	unsigned long seed, deck;
	long translation;       /* --translation: poses move by {-T, ..., T} angstrom */
	int check, quiet;
	deck d;
	float *energy;          /* the energy of each pose */
	double sum, t0, t1;     /* minibude_finish(): the energies' sum; when docking started, ended */
	long failed;            /* minibude_finish(): poses that fail --check */
};

/* Parses the arguments (prints usage and exits 0 for --help), allocates
 * and draws the deck. 0, or the exit status (2 for a bad argument, 1 out
 * of memory) after a one-line error on stderr. */
int minibude_setup(struct minibude *m, int argc, char **argv);
/* The region's original code: the energy of one pose. */
float minibude_energy(const deck *d, const float *pose);
/* After docking: the energies' sum and, with --check, the check of the
 * first poses (the first failures on stderr). */
void minibude_finish(struct minibude *m);
/* The summary on stdout (unless --quiet); mode names the hml mode. Returns
 * the exit status: 1 when --check found a failure. */
int minibude_report(const struct minibude *m, const char *mode);
void minibude_free(struct minibude *m);

#endif
