/*
 * miniweather_physics.c - 2-D compressible Euler equations for a stratified, dry
 * atmosphere (a re-creation of the miniWeather mini-app from its published
 * description): the state rho', rho*u, rho*w, (rho*theta)' on nx x nz cells
 * plus two halo cells each side, 20 km x 10 km, periodic in x, solid walls
 * in z. Finite volumes with fourth-order interface values
 * (-q[-2] + 7 q[-1] + 7 q[0] - q[1]) / 12, hyperviscosity, dimensional
 * splitting (x then z, alternating each step), three-stage Runge-Kutta per
 * direction, p = C0 (rho theta)^gamma, dt = min(dx, dz) / 450 * 1.5.
 * Initial state: the collision case, a +20 K and a -20 K cos^2 bubble of
 * radius 2 km in a neutral (theta = 300 K) hydrostatic background; seeds
 * other than 0 move the bubbles and change their strength, so collected
 * runs differ.
 *
 * --warm W accurate steps run first, outside the region (the paper ran
 * 1000 accurate steps and then let the model take over).
 *
 * Checks: the total mass (rho' plus the background, over the interior)
 * is conserved by the scheme to rounding: the run prints its relative
 * drift, which must stay below 1e-12 in double; the total energy
 * (kinetic + internal) is printed and recorded.
 * Everything of workflows/miniweather but hml (miniweather_physics.h).
 */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "miniweather_physics.h"

#define PI 3.14159265358979323846
#define GRAV 9.8
#define CP 1004.0
#define CV 717.0
#define RD 287.0
#define P0 1.0e5
#define C0 27.5629410929725921
#define GAMMA 1.40027894
#define THETA0 300.0
#define XLEN 2.0e4
#define ZLEN 1.0e4
#define HV_BETA 0.05
#define CFL 1.5
#define MAX_SPEED 450.0
#define DENS 0
#define UMOM 1
#define WMOM 2
#define RHOT 3
#define MASS_BOUND 1e-12
#define PARALLEL_MIN 16384  /* smaller grids step on one thread */

/* splitmix64: a small seeded generator, the same on every platform. */
static double uniform(uint64_t *state, double lo, double hi)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return lo + (hi - lo) * ((double)(z >> 11) * (1.0 / 9007199254740992.0));
}

/* Hydrostatic background with constant theta at height z. */
static void hydrostatic(double z, double *r, double *t)
{
	double exner = 1.0 - GRAV * z / (CP * THETA0);
	double p = P0 * pow(exner, CP / RD);

	*t = THETA0;
	*r = pow(p / C0, 1.0 / GAMMA) / THETA0;
}

/* A cos^2 bubble of amplitude amp and radius rad centred at (x0, z0). */
static double bubble(double x, double z, double x0, double z0, double rad, double amp)
{
	double d = sqrt((x - x0) * (x - x0) + (z - z0) * (z - z0)) / rad;

	return d <= 1.0 ? amp * pow(cos(PI / 2.0 * d), 2.0) : 0.0;
}

struct bubbles {
	double x0[2], z0[2], amp[2];
};

static double perturbation(const struct bubbles *b, double x, double z)
{
	return bubble(x, z, b->x0[0], b->z0[0], 2000.0, b->amp[0]) +
	       bubble(x, z, b->x0[1], b->z0[1], 2000.0, b->amp[1]);
}

/* Cell averages by 3-point Gauss-Legendre quadrature in x and z. */
static void init_state(struct model *m, unsigned long seed)
{
	static const double qp[3] = { 0.112701665379258311482073460022, 0.5,
	                              0.887298334620741688517926539980 };
	static const double qw[3] = { 0.277777777777777777777777777779,
	                              0.444444444444444444444444444444,
	                              0.277777777777777777777777777779 };
	struct bubbles b = { { XLEN / 2, XLEN / 2 }, { 2000.0, 8000.0 }, { 20.0, -20.0 } };
	uint64_t rng = (uint64_t)seed;
	long k, i, a, c;

	if (seed) {
		for (c = 0; c < 2; c++) {
			b.x0[c] += uniform(&rng, -3000.0, 3000.0);
			b.z0[c] += uniform(&rng, -1000.0, 1000.0);
			b.amp[c] *= uniform(&rng, 0.5, 1.5);
		}
	}
	memset(m->state, 0, sizeof(double) * NV * (size_t)(m->w * m->h));
	for (k = 0; k < m->h; k++) {
		double zc = ((double)(k - HS) + 0.5) * m->dz;
		m->hy_dens[k] = m->hy_dens_theta[k] = 0.0;
		for (a = 0; a < 3; a++) {
			double r, t, z = zc + (qp[a] - 0.5) * m->dz;
			hydrostatic(z, &r, &t);
			m->hy_dens[k] += qw[a] * r;
			m->hy_dens_theta[k] += qw[a] * r * t;
		}
		if (k < HS || k >= m->nz + HS)
			continue;
		for (i = HS; i < m->nx + HS; i++) {
			double xc = ((double)(i - HS + m->x0) + 0.5) * m->dx;
			for (a = 0; a < 3; a++)
				for (c = 0; c < 3; c++) {
					double r, t, z = zc + (qp[a] - 0.5) * m->dz, x = xc + (qp[c] - 0.5) * m->dx;
					hydrostatic(z, &r, &t);
					/* Only theta is perturbed: rho' = 0, at rest. */
					Q(m->state, RHOT, k, i) += qw[a] * qw[c] * r * perturbation(&b, x, z);
				}
		}
	}
	for (k = 0; k <= m->nz; k++) {
		double r, t;
		hydrostatic((double)k * m->dz, &r, &t);
		m->hy_dens_int[k] = r;
		m->hy_dens_theta_int[k] = r * t;
		m->hy_p_int[k] = C0 * pow(r * t, GAMMA);
	}
}

/* Periodic halos in x; a part of a split domain asks its neighbours. */
static void halo_x(struct model *m, double *s)
{
	long v, k;

	if (m->exchange_x) {
		m->exchange_x(m, s);
		return;
	}
	for (v = 0; v < NV; v++)
		for (k = 0; k < m->h; k++) {
			Q(s, v, k, 0) = Q(s, v, k, m->nx);
			Q(s, v, k, 1) = Q(s, v, k, m->nx + 1);
			Q(s, v, k, m->nx + 2) = Q(s, v, k, 2);
			Q(s, v, k, m->nx + 3) = Q(s, v, k, 3);
		}
}

/* Solid walls in z: no vertical momentum, the rest copied outward
 * (horizontal momentum scaled with the background density). */
static void halo_z(struct model *m, double *s)
{
	long v, i, top = m->nz + HS - 1;

	for (v = 0; v < NV; v++)
		for (i = 0; i < m->w; i++) {
			int j;
			for (j = 0; j < HS; j++) {
				double lo = Q(s, v, HS, i), hi = Q(s, v, top, i);
				if (v == WMOM) {
					lo = hi = 0.0;
				} else if (v == UMOM) {
					lo *= m->hy_dens[j] / m->hy_dens[HS];
					hi *= m->hy_dens[top + 1 + j] / m->hy_dens[top];
				}
				Q(s, v, j, i) = lo;
				Q(s, v, top + 1 + j, i) = hi;
			}
		}
}

#define F(v, k, i) m->flux[((size_t)(v) * (size_t)(m->nz + 1) + (size_t)(k)) * (size_t)(m->nx + 1) + (size_t)(i)]
#define T(v, k, i) m->tend[((size_t)(v) * (size_t)m->nz + (size_t)(k)) * (size_t)m->nx + (size_t)(i)]

/* Fourth-order interface value and third difference of four cells. */
static void interface(const double *s4, double *val, double *d3)
{
	*val = (-s4[0] + 7.0 * s4[1] + 7.0 * s4[2] - s4[3]) / 12.0;
	*d3 = -s4[0] + 3.0 * s4[1] - 3.0 * s4[2] + s4[3];
}

static void tendencies_x(struct model *m, double *s, double dt)
{
	double hv = -HV_BETA * m->dx / (16.0 * dt);
	long k;

	halo_x(m, s);
#pragma omp parallel for schedule(static) if (m->nx * m->nz >= PARALLEL_MIN)
	for (k = 0; k < m->nz; k++) {
		long i, v, j;
		for (i = 0; i <= m->nx; i++) {
			double val[NV], d3[NV], s4[4], r, u, w, t, p;
			for (v = 0; v < NV; v++) {
				for (j = 0; j < 4; j++)
					s4[j] = Q(s, v, k + HS, i + j);
				interface(s4, &val[v], &d3[v]);
			}
			r = val[DENS] + m->hy_dens[k + HS];
			u = val[UMOM] / r;
			w = val[WMOM] / r;
			t = (val[RHOT] + m->hy_dens_theta[k + HS]) / r;
			p = C0 * pow(r * t, GAMMA);
			F(DENS, k, i) = r * u - hv * d3[DENS];
			F(UMOM, k, i) = r * u * u + p - hv * d3[UMOM];
			F(WMOM, k, i) = r * u * w - hv * d3[WMOM];
			F(RHOT, k, i) = r * u * t - hv * d3[RHOT];
		}
		for (v = 0; v < NV; v++)
			for (i = 0; i < m->nx; i++)
				T(v, k, i) = -(F(v, k, i + 1) - F(v, k, i)) / m->dx;
	}
}

static void tendencies_z(struct model *m, double *s, double dt)
{
	double hv = -HV_BETA * m->dz / (16.0 * dt);
	long k, i;

	halo_z(m, s);
#pragma omp parallel for schedule(static) if (m->nx * m->nz >= PARALLEL_MIN)
	for (k = 0; k <= m->nz; k++) {
		long ii, v, j;
		for (ii = 0; ii < m->nx; ii++) {
			double val[NV], d3[NV], s4[4], r, u, w, t, p;
			for (v = 0; v < NV; v++) {
				for (j = 0; j < 4; j++)
					s4[j] = Q(s, v, k + j, ii + HS);
				interface(s4, &val[v], &d3[v]);
			}
			r = val[DENS] + m->hy_dens_int[k];
			u = val[UMOM] / r;
			w = val[WMOM] / r;
			t = (val[RHOT] + m->hy_dens_theta_int[k]) / r;
			p = C0 * pow(r * t, GAMMA) - m->hy_p_int[k];
			if (k == 0 || k == m->nz) {   /* walls: nothing crosses */
				w = 0.0;
				d3[DENS] = 0.0;
			}
			F(DENS, k, ii) = r * w - hv * d3[DENS];
			F(UMOM, k, ii) = r * w * u - hv * d3[UMOM];
			F(WMOM, k, ii) = r * w * w + p - hv * d3[WMOM];
			F(RHOT, k, ii) = r * w * t - hv * d3[RHOT];
		}
	}
#pragma omp parallel for schedule(static) if (m->nx * m->nz >= PARALLEL_MIN)
	for (k = 0; k < m->nz; k++) {
		long v;
		for (v = 0; v < NV; v++)
			for (i = 0; i < m->nx; i++) {
				T(v, k, i) = -(F(v, k + 1, i) - F(v, k, i)) / m->dz;
				if (v == WMOM)
					T(v, k, i) -= Q(s, DENS, k + HS, i + HS) * GRAV;
			}
	}
}

/* out = init + dt * tendencies(forcing), interior cells. */
static void semi_step(struct model *m, const double *init, double *forcing, double *out,
                      double dt, int xdir)
{
	long k;

	if (xdir)
		tendencies_x(m, forcing, dt);
	else
		tendencies_z(m, forcing, dt);
#pragma omp parallel for schedule(static) if (m->nx * m->nz >= PARALLEL_MIN)
	for (k = 0; k < m->nz; k++) {
		long v, i;
		for (v = 0; v < NV; v++)
			for (i = 0; i < m->nx; i++)
				Q(out, v, k + HS, i + HS) = Q(init, v, k + HS, i + HS) + dt * T(v, k, i);
	}
}

/* Three-stage Runge-Kutta in one direction. */
static void rk3(struct model *m, int xdir)
{
	semi_step(m, m->state, m->state, m->tmp, m->dt / 3.0, xdir);
	semi_step(m, m->state, m->tmp, m->tmp, m->dt / 2.0, xdir);
	semi_step(m, m->state, m->tmp, m->state, m->dt, xdir);
}

/* One time step, dimensionally split, the order alternating. */
void mw_step(struct model *m)
{
	rk3(m, m->xfirst);
	rk3(m, !m->xfirst);
	m->xfirst = !m->xfirst;
}

/* Total mass and total energy (kinetic + internal) over the interior. */
static void totals(struct model *m, double *mass, double *energy)
{
	double ms = 0.0, te = 0.0;
	long k, i;

	for (k = HS; k < m->nz + HS; k++)
		for (i = HS; i < m->nx + HS; i++) {
			double r = Q(m->state, DENS, k, i) + m->hy_dens[k];
			double u = Q(m->state, UMOM, k, i) / r, w = Q(m->state, WMOM, k, i) / r;
			double th = (Q(m->state, RHOT, k, i) + m->hy_dens_theta[k]) / r;
			double p = C0 * pow(r * th, GAMMA), temp = th / pow(P0 / p, RD / CP);
			ms += r * m->dx * m->dz;
			te += (0.5 * r * (u * u + w * w) + r * CV * temp) * m->dx * m->dz;
		}
	*mass = ms;
	*energy = te;
}

static int parse_long(const char *arg, const char *flag, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	if (!arg || errno || *end || v < min) {
		fprintf(stderr, "miniweather: error: %s needs an integer >= %ld, got '%s'\n",
		        flag, min, arg ? arg : "");
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct mw_opts *o, int part)
{
	static const struct { const char *flag; long min; size_t off; } ints[] = {
		{ "--nx", 4, offsetof(struct mw_opts, nx) },
		{ "--nz", 4, offsetof(struct mw_opts, nz) },
		{ "--steps", 1, offsetof(struct mw_opts, steps) },
		{ "--k", 1, offsetof(struct mw_opts, k) },
		{ "--warm", 0, offsetof(struct mw_opts, warm) },
		{ "--records", 1, offsetof(struct mw_opts, records) },
	};
	long v;
	int i;
	size_t f;

	*o = (struct mw_opts){ .nx = 40, .nz = 20, .steps = 100, .k = 10, .records = 10 };
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;

		for (f = 0; f < sizeof(ints) / sizeof(ints[0]) && strcmp(a, ints[f].flag); f++)
			;
		if (f < sizeof(ints) / sizeof(ints[0])) {
			if (parse_long(next, a, ints[f].min, (long *)((char *)o + ints[f].off)) < 0)
				return 2;
			i++;
		} else if (!strcmp(a, "--seed")) {
			if (parse_long(next, a, 0, &v) < 0)
				return 2;
			o->seed = (unsigned long)v;
			i++;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			if (part)
				exit(0);
			printf("usage: miniweather [--nx NX] [--nz NZ] [--steps T] [--k K] [--warm W]\n"
			       "                   [--records R] [--seed S] [--quiet]\n"
			       "Runs W accurate steps, then T steps of the collision case on NX x NZ cells\n"
			       "(default 40 x 20, 100 steps), K steps per call of the region 'miniweather'\n"
			       "(default 10; T must be a multiple of K). Seed 0 is the reference case; other\n"
			       "seeds move the bubbles. Prints the relative mass drift (check: below 1e-12).\n"
			       "Records the interior state after R calls spread over the run (default 10,\n"
			       "at most T/K; the last call always), the quantity of interest 'trajectory'.\n"
			       "hml settings come from the environment: HML_MODE, HML_MODEL, HML_DB, HML_QOI, ...\n");
			exit(0);
		} else {
			fprintf(stderr, "miniweather: error: unknown argument '%s'\n", a);
			return 2;
		}
	}
	if (o->steps % o->k) {
		fprintf(stderr, "miniweather: error: --steps %ld is not a multiple of --k %ld\n",
		        o->steps, o->k);
		return 2;
	}
	return 0;
}

static int model_alloc(struct model *m, const struct mw_opts *o, int part, int parts)
{
	size_t cells;

	memset(m, 0, sizeof(*m));
	m->gnx = o->nx;
	m->nx = o->nx / parts;
	m->x0 = m->nx * part;
	m->nz = o->nz;
	m->w = m->nx + 2 * HS;
	m->h = o->nz + 2 * HS;
	m->dx = XLEN / (double)o->nx;
	m->dz = ZLEN / (double)o->nz;
	m->dt = (m->dx < m->dz ? m->dx : m->dz) / MAX_SPEED * CFL;
	m->xfirst = 1;
	cells = NV * (size_t)(m->w * m->h);
	m->state = calloc(cells, sizeof(double));
	m->tmp = calloc(cells, sizeof(double));
	m->flux = calloc(NV * (size_t)((m->nx + 1) * (o->nz + 1)), sizeof(double));
	m->tend = calloc(NV * (size_t)(m->nx * o->nz), sizeof(double));
	m->hy_dens = calloc((size_t)m->h, sizeof(double));
	m->hy_dens_theta = calloc((size_t)m->h, sizeof(double));
	m->hy_dens_int = calloc((size_t)(o->nz + 1), sizeof(double));
	m->hy_dens_theta_int = calloc((size_t)(o->nz + 1), sizeof(double));
	m->hy_p_int = calloc((size_t)(o->nz + 1), sizeof(double));
	return m->state && m->tmp && m->flux && m->tend && m->hy_dens && m->hy_dens_theta &&
	       m->hy_dens_int && m->hy_dens_theta_int && m->hy_p_int ? 0 : -1;
}

static void model_free(struct model *m)
{
	free(m->state); free(m->tmp); free(m->flux); free(m->tend);
	free(m->hy_dens); free(m->hy_dens_theta);
	free(m->hy_dens_int); free(m->hy_dens_theta_int); free(m->hy_p_int);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int mw_setup(struct mw *w, int argc, char **argv)
{
	return mw_setup_part(w, argc, argv, 0, 1);
}

int mw_setup_part(struct mw *w, int argc, char **argv, int part, int parts)
{
	long s;
	int rc;

	memset(w, 0, sizeof(*w));
	if ((rc = parse_args(argc, argv, &w->o, part)) != 0)
		return rc;
	if (w->o.nx % parts) {
		if (part == 0)
			fprintf(stderr, "miniweather: error: --nx %ld is not a multiple of the %d ranks\n",
			        w->o.nx, parts);
		return 2;
	}
	w->calls = w->o.steps / w->o.k;
	if (w->o.records > w->calls)
		w->o.records = w->calls;
	w->mass = malloc(sizeof(double) * (size_t)(w->calls + 1));
	w->energy = malloc(sizeof(double) * (size_t)(w->calls + 1));
	w->traj = malloc(sizeof(double) * NV * (size_t)(w->o.nx * w->o.nz) * (size_t)w->o.records);
	w->traj_steps = malloc(sizeof(int64_t) * (size_t)w->o.records);
	if (model_alloc(&w->m, &w->o, part, parts) < 0 || !w->mass || !w->energy || !w->traj ||
	    !w->traj_steps) {
		fprintf(stderr, "miniweather: error: out of memory for %ld x %ld cells\n", w->o.nx, w->o.nz);
		mw_free(w);
		return 1;
	}
	init_state(&w->m, w->o.seed);
	for (s = 0; s < w->o.warm; s++)
		mw_step(&w->m);
	totals(&w->m, &w->mass[0], &w->energy[0]);
	w->t0 = now();
	return 0;
}

void mw_interior(const struct model *m, double *dst)
{
	for (long v = 0; v < NV; v++)
		for (long k = 0; k < m->nz; k++)
			memcpy(dst + (v * m->nz + k) * m->nx, &Q(m->state, v, k + HS, HS),
			       sizeof(double) * (size_t)m->nx);
}

void mw_called(struct mw *w, long c)
{
	/* Record r (0-based) is taken after call ceil((r + 1) calls / R) - 1. */
	long r = w->nrec, due = ((r + 1) * w->calls + w->o.records - 1) / w->o.records - 1;

	totals(&w->m, &w->mass[c + 1], &w->energy[c + 1]);
	if (r < w->o.records && c == due) {
		mw_interior(&w->m, w->traj + (size_t)r * NV * (size_t)(w->m.nx * w->m.nz));
		w->traj_steps[r] = (int64_t)(c + 1) * w->o.k;
		w->nrec++;
	}
}

void mw_finish(struct mw *w)
{
	w->t1 = now();
}

void mw_report(const struct mw *w, const char *mode)
{
	const struct mw_opts *o = &w->o;
	const double *mass = w->mass, *energy = w->energy;
	double drift = (mass[w->calls] - mass[0]) / mass[0];

	if (o->quiet)
		return;
	printf("miniweather: %ld x %ld cells, dt %.4f s, %ld warm-up + %ld steps (k %ld), seed %lu, mode %s\n"
	       "miniweather: check mass: relative drift %.3e (bound %.0e) %s\n"
	       "miniweather: total energy %.10e, relative change %.3e\n"
	       "miniweather: stepped in %.3f s\n",
	       o->nx, o->nz, w->m.dt, o->warm, o->steps, o->k, o->seed, mode,
	       drift, MASS_BOUND, fabs(drift) <= MASS_BOUND ? "pass" : "FAIL",
	       energy[w->calls], (energy[w->calls] - energy[0]) / energy[0], w->t1 - w->t0);
}

void mw_free(struct mw *w)
{
	model_free(&w->m);
	free(w->mass);
	free(w->energy);
	free(w->traj);
	free(w->traj_steps);
	memset(&w->m, 0, sizeof(w->m));
	w->mass = w->energy = NULL;
	w->traj = NULL;
	w->traj_steps = NULL;
}
