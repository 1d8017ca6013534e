/*
 * miniweather_physics.h - miniWeather without hml: what miniweather.c (its
 * directive form, built by hml cc) and miniweather_api.c (the same program
 * written against the C API) share, so that the physics is written once.
 *
 * A run owns its model and totals: mw_setup() allocates them, mw_free()
 * frees them.
 *
 * Split in x (workflows/miniweather-mpi): mw_setup_part() gives rank r of
 * n the columns [r nx/n, (r+1) nx/n) of the domain, and the model's
 * exchange_x, when set, fills the x halos of a state from the neighbours
 * instead of the periodic copy; the totals are then the part's, which
 * the caller sums over the parts.
 */
#ifndef MINIWEATHER_PHYSICS_H
#define MINIWEATHER_PHYSICS_H

#include <stdint.h>

#define HS 2                    /* halo cells each side */
#define NV 4                    /* rho', rho*u, rho*w, (rho*theta)' */

struct mw_opts {
	long nx, nz, steps, k, warm;    /* cells; steps after the warm-up, k per region call */
	long records;                   /* the interior state recorded after this many calls */
	unsigned long seed;
	int quiet;
};

/* The model: sizes, background and work arrays. */
struct model {
	long nx, nz, w, h;        /* interior cells (this part's); padded width and height */
	long gnx, x0;             /* the whole domain's cells in x, this part's first */
	void (*exchange_x)(struct model *m, double *s);   /* NULL: periodic, one part */
	void *payload;            /* exchange_x's */
	double dx, dz, dt;
	int xfirst;               /* this step splits x then z */
	double *state, *tmp, *flux, *tend;                  /* state: [NV][h][w] */
	double *hy_dens, *hy_dens_theta;                    /* cells, [h] */
	double *hy_dens_int, *hy_dens_theta_int, *hy_p_int; /* interfaces, [nz+1] */
};

/* Element (v, k, i) of a [NV][h][w] array a of the model m in scope. */
#define Q(a, v, k, i) ((a)[((size_t)(v) * (size_t)m->h + (size_t)(k)) * (size_t)m->w + (size_t)(i)])

struct mw {
	struct mw_opts o;
	struct model m;
	long calls;             /* steps / k */
	double *mass, *energy;  /* [calls + 1]: after the warm-up and each call */
	long nrec;              /* states recorded so far, of o.records */
	double *traj;           /* [o.records][NV][nz][nx]: the interior state over time */
	int64_t *traj_steps;    /* [o.records]: the step (after the warm-up) of each */
	double t0, t1;          /* when stepping started and ended */
};

/* Parses the arguments (prints usage and exits 0 for --help), allocates
 * the model, sets the initial state and runs the warm-up steps. 0, or the
 * exit status (2 for a bad argument, 1 out of memory) after a one-line
 * error on stderr. */
int mw_setup(struct mw *w, int argc, char **argv);
/* mw_setup() of part `part` of `parts` in x: --nx must be a multiple of
 * `parts` (else exit status 2 after a one-line error); only `part` 0
 * prints --help. The halos in x are periodic until m.exchange_x is set. */
int mw_setup_part(struct mw *w, int argc, char **argv, int part, int parts);
/* One time step of the model, in place. */
void mw_step(struct model *m);
/* The interior state of m, [NV][nz][nx], into dst. */
void mw_interior(const struct model *m, double *dst);
/* After region call c: the totals mass[c + 1] and energy[c + 1], and the
 * interior state into traj when call c is one of the o.records calls
 * spread evenly over the run (the last call is always one). */
void mw_called(struct mw *w, long c);
/* After the last call. */
void mw_finish(struct mw *w);
/* The summary on stdout (unless --quiet); mode names the hml mode. */
void mw_report(const struct mw *w, const char *mode);
void mw_free(struct mw *w);

#endif
