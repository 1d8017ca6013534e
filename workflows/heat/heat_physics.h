/*
 * heat_physics.h - the 2-D heat stencil without hml: what heat.c (its
 * directive form, built by hml cc) and heat_api.c (the same program
 * written against the C API) share, so that the physics is written once.
 *
 * A run owns its fields: heat_setup() allocates them, heat_free() frees
 * them. The field is stored (n+2) x (n+2), a ring of ghost cells (u = 0,
 * the Dirichlet boundary) around the n x n grid.
 */
#ifndef HEAT_PHYSICS_H
#define HEAT_PHYSICS_H

struct heat {
	long n, steps, k;       /* grid, steps, steps per region call */
	double alpha;
	int rows;               /* --region rows: one step per call */
	int mode;               /* --init mode */
	unsigned long seed;
	int quiet;
	long calls;             /* steps / k */
	double *u, *v;          /* the field and the next step's, swapped by the caller */
	double *heat;           /* total heat after each call */
	double *field;          /* heat_finish(): the final n x n field */
	double err;             /* heat_finish(): the mode check's error */
	double t0, t1;          /* when the stepping started and ended */
};

/* Parses the arguments (prints usage and exits 0 for --help), allocates
 * the fields and sets the initial one. 0, or the exit status (2 for a bad
 * argument, 1 out of memory) after a one-line error on stderr. */
int heat_setup(struct heat *h, int argc, char **argv);
/* One step from u to v, interior cells only (the ghost ring stays 0). */
void heat_step(const double *u, double *v, long n, double a);
/* K steps of the field u in place (v is scratch). */
void heat_advance(double *u, double *v, const struct heat *h);
/* The sum of the field u over the grid. */
double heat_total(const double *u, long n);
/* From the final field u (h->u or h->v): h->field and the mode check
 * (h->err); 0, or 1 after an error on stderr. */
int heat_finish(struct heat *h, const double *u);
/* The summary on stdout (unless --quiet); mode names the hml mode. */
void heat_report(const struct heat *h, const char *mode);
double heat_now(void);
void heat_free(struct heat *h);

#endif
