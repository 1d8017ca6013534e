/*
 * minibude_physics.c - docking energies of ligand poses against a protein, in the
 * manner of miniBUDE (written from the description in REFERENCE.md), on a
 * self-made, seeded deck.
 *
 * A pose (rx, ry, rz, tx, ty, tz) moves every ligand atom p to
 * q = Rz*Ry*Rx*p + t; every (ligand, protein) atom pair adds a steric, an
 * electrostatic and a desolvation term; the pose's energy is half the sum.
 * Everything is float, as in miniBUDE.
 *
 * --deck seeds the atoms, protein and ligand (the problem), --seed the poses
 * (the samples), so that data collected with several seeds describes one
 * problem: the same pose has the same energy under every --seed.
 *
 * --check recomputes the first poses with a deliberately simple double
 * precision code path (matrix products, one pair at a time) and exits 1 if
 * an energy differs by more than 1e-4 of the sum of its terms' magnitudes.
 *
 * Everything of workflows/minibude but hml (minibude_physics.h).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "minibude_physics.h"

#define HARDNESS 38.0f
#define CNSTNT 45.0f
#define HBTYPE_F 70
#define HBTYPE_E 69
#define NPNPDIST 5.5f           /* desolvation reach, both atoms nonpolar */
#define NPPDIST 1.0f            /* desolvation reach, otherwise */
#define NTYPES 8
#define CHECK_POSES 32
#define PI_F 3.14159265358979f

typedef struct ffparams { float radius, hphb, elsc; int hbtype; } ffparams;

/* A small force field: radius, hydrophobicity, charge scale, H-bond type. */
static const ffparams FF[NTYPES] = {
	{ 1.90f, -0.40f,  0.00f, 0 },         /* carbon, nonpolar */
	{ 1.80f, -0.20f,  0.10f, 0 },
	{ 1.80f,  0.50f, -0.50f, HBTYPE_F },  /* nitrogen, donor */
	{ 1.70f,  0.60f, -0.60f, HBTYPE_F },  /* oxygen, donor/acceptor */
	{ 1.60f,  0.70f,  0.80f, HBTYPE_E },  /* charged */
	{ 2.00f, -0.30f,  0.05f, 0 },         /* sulphur */
	{ 1.20f,  0.10f,  0.30f, HBTYPE_F },  /* polar hydrogen */
	{ 1.85f, -0.10f, -0.20f, HBTYPE_E },
};

/* splitmix64: a small seeded generator, the same on every platform. */
static uint64_t next_u64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static float uniformf(uint64_t *state, float lo, float hi)
{
	return lo + (hi - lo) * (float)((double)(next_u64(state) >> 11) * (1.0 / 9007199254740992.0));
}

/* Atoms spread uniformly in a ball whose volume grows with their count. */
static void make_atoms(uint64_t *rng, atom *a, long n, float radius)
{
	long i;

	for (i = 0; i < n; i++) {
		float x, y, z;
		do {
			x = uniformf(rng, -1.0f, 1.0f);
			y = uniformf(rng, -1.0f, 1.0f);
			z = uniformf(rng, -1.0f, 1.0f);
		} while (x * x + y * y + z * z > 1.0f);
		a[i] = (atom){ radius * x, radius * y, radius * z, (int)(next_u64(rng) % NTYPES) };
	}
}

/* Protein beside the origin; ligand a small cluster at it (both from the
 * deck's seed); poses (from the pose seed): angles from {-170, ..., 180}
 * degrees, translations from {-T, ..., T} angstrom (T: --translation,
 * default 7; a wider T draws poses a model trained at 7 has not seen). */
static void make_deck(deck *d, uint64_t deck_seed, uint64_t pose_seed, long t)
{
	uint64_t rng = deck_seed;
	long i;
	int k;

	float rp = 2.0f * cbrtf((float)d->np);

	/* The pocket is the origin, on the protein's surface: poses range
	 * from deep clashes to no contact at all. */
	make_atoms(&rng, d->protein, d->np, rp);
	for (i = 0; i < d->np; i++)
		d->protein[i].x += rp;
	/* The ligand is part of the problem: drawn from the deck's seed, so
	 * that an energy is a function of the pose alone whatever --seed
	 * draws the poses (drawn from the pose seed, as it once was, every
	 * seed docked another ligand and a model trained on one run's poses
	 * was scored against another molecule). */
	make_atoms(&rng, d->ligand, d->nl, 1.5f * cbrtf((float)d->nl));
	rng = pose_seed;
	for (i = 0; i < d->nposes; i++) {
		for (k = 0; k < 3; k++)
			d->poses[i][k] = (float)(-170 + 10 * (int)(next_u64(&rng) % 36)) * (PI_F / 180.0f);
		for (k = 3; k < 6; k++)
			d->poses[i][k] = (float)(-t + (long)(next_u64(&rng) % (uint64_t)(2 * t + 1)));
	}
}

/* The region's original code: one pose's energy. The rotation Rz*Ry*Rx is
 * written out; the inner loop runs over protein atoms. */
float minibude_energy(const deck *d, const float *pose)
{
	float sx = sinf(pose[0]), cx = cosf(pose[0]), sy = sinf(pose[1]), cy = cosf(pose[1]);
	float sz = sinf(pose[2]), cz = cosf(pose[2]);
	float m[3][4] = {
		{ cy * cz, sx * sy * cz - cx * sz, cx * sy * cz + sx * sz, pose[3] },
		{ cy * sz, sx * sy * sz + cx * cz, cx * sy * sz - sx * cz, pose[4] },
		{ -sy,     sx * cy,                cx * cy,                pose[5] },
	};
	float etot = 0.0f;
	long l, p;

	for (l = 0; l < d->nl; l++) {
		const atom *la = &d->ligand[l];
		const ffparams *lp = &FF[la->type];
		float qx = m[0][0] * la->x + m[0][1] * la->y + m[0][2] * la->z + m[0][3];
		float qy = m[1][0] * la->x + m[1][1] * la->y + m[1][2] * la->z + m[1][3];
		float qz = m[2][0] * la->x + m[2][1] * la->y + m[2][2] * la->z + m[2][3];

		for (p = 0; p < d->np; p++) {
			const atom *pa = &d->protein[p];
			const ffparams *pp = &FF[pa->type];
			float dx = qx - pa->x, dy = qy - pa->y, dz = qz - pa->z;
			float r = pp->radius + lp->radius;
			float dist = sqrtf(dx * dx + dy * dy + dz * dz), b = dist - r;
			int both_f = lp->hbtype == HBTYPE_F && pp->hbtype == HBTYPE_F;
			int any_e = lp->hbtype == HBTYPE_E || pp->hbtype == HBTYPE_E;
			float c = both_f ? 4.0f : 2.0f, c1 = both_f ? 0.25f : 0.5f;
			int nonpolar = lp->hphb < 0.0f && pp->hphb < 0.0f;
			float reach = nonpolar ? NPNPDIST : NPPDIST;
			float chrg, dslv;

			if (b < 0.0f)
				etot += 2.0f * HARDNESS * (1.0f - dist / r);
			chrg = b < c ? CNSTNT * lp->elsc * pp->elsc * (b < 0.0f ? 1.0f : 1.0f - b * c1) : 0.0f;
			etot += any_e ? -fabsf(chrg) : chrg;
			dslv = b < reach ? (lp->hphb + pp->hphb) * (b < 0.0f ? 1.0f : 1.0f - b / reach) : 0.0f;
			etot += dslv;
		}
	}
	return 0.5f * etot;
}

/* The check's code path: double, rotation from matrix products, one pair
 * term at a time. Returns the energy; *scale gets the sum of |terms|. */
static double pose_energy_simple(const deck *d, const float *pose, double *scale)
{
	double ax = pose[0], ay = pose[1], az = pose[2];
	double rx[3][3] = { { 1, 0, 0 }, { 0, cos(ax), -sin(ax) }, { 0, sin(ax), cos(ax) } };
	double ry[3][3] = { { cos(ay), 0, sin(ay) }, { 0, 1, 0 }, { -sin(ay), 0, cos(ay) } };
	double rz[3][3] = { { cos(az), -sin(az), 0 }, { sin(az), cos(az), 0 }, { 0, 0, 1 } };
	double ryx[3][3] = { { 0 } }, rot[3][3] = { { 0 } }, e = 0.0;
	long l, p;
	int i, j, k;

	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++)
			for (k = 0; k < 3; k++)
				ryx[i][j] += ry[i][k] * rx[k][j];
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++)
			for (k = 0; k < 3; k++)
				rot[i][j] += rz[i][k] * ryx[k][j];
	*scale = 0.0;
	for (l = 0; l < d->nl; l++) {
		const atom *la = &d->ligand[l];
		double v[3] = { la->x, la->y, la->z }, q[3];

		for (i = 0; i < 3; i++)
			q[i] = rot[i][0] * v[0] + rot[i][1] * v[1] + rot[i][2] * v[2] + pose[3 + i];
		for (p = 0; p < d->np; p++) {
			const atom *pa = &d->protein[p];
			ffparams a = FF[la->type], b = FF[pa->type];
			double dist = sqrt(pow(q[0] - pa->x, 2) + pow(q[1] - pa->y, 2) + pow(q[2] - pa->z, 2));
			double r = (double)a.radius + b.radius, gap = dist - r, term[3] = { 0, 0, 0 };
			double c = 2.0, c1 = 0.5, reach = NPPDIST;

			if (a.hbtype == HBTYPE_F && b.hbtype == HBTYPE_F) {
				c = 4.0;
				c1 = 0.25;
			}
			if (a.hphb < 0 && b.hphb < 0)
				reach = NPNPDIST;
			if (gap < 0) {
				term[0] = 2.0 * HARDNESS * (1.0 - dist / r);
				term[1] = CNSTNT * (double)a.elsc * b.elsc;
				term[2] = (double)a.hphb + b.hphb;
			} else {
				if (gap < c)
					term[1] = CNSTNT * (double)a.elsc * b.elsc * (1.0 - gap * c1);
				if (gap < reach)
					term[2] = ((double)a.hphb + b.hphb) * (1.0 - gap / reach);
			}
			if (a.hbtype == HBTYPE_E || b.hbtype == HBTYPE_E)
				term[1] = -fabs(term[1]);
			for (i = 0; i < 3; i++) {
				e += 0.5 * term[i];
				*scale += 0.5 * fabs(term[i]);
			}
		}
	}
	return e;
}

static int parse_long(const char *arg, const char *flag, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	if (!arg || errno || *end || v < min) {
		fprintf(stderr, "minibude: error: %s needs an integer >= %ld, got '%s'\n",
		        flag, min, arg ? arg : "");
		return -1;
	}
	*out = v;
	return 0;
}

#define MAX_TRANSLATION 1000

static int parse_translation(const char *arg, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	if (!arg || !*arg || errno || *end || v < 1 || v > MAX_TRANSLATION) {
		fprintf(stderr, "minibude: error: --translation needs an integer in [1, %d] "
		        "(angstrom), got '%s'\n", MAX_TRANSLATION, arg ? arg : "");
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct minibude *o)
{
	static const char *const flags[] = { "--poses", "--batch", "--ligand", "--protein",
	                                     "--seed", "--deck" };
	long *dest[6], v, w;
	int i, k;

	*o = (struct minibude){ .poses = 4096, .batch = 256, .ligand = 26, .protein = 938, .seed = 42, .deck = 1,
	                       .translation = 7 };
	dest[0] = &o->poses; dest[1] = &o->batch; dest[2] = &o->ligand; dest[3] = &o->protein;
	dest[4] = &v;
	dest[5] = &w;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		for (k = 0; k < 6 && strcmp(a, flags[k]); k++)
			;
		if (k < 6) {
			if (parse_long(next, a, k >= 4 ? 0 : 1, dest[k]) < 0)
				return 2;
			if (k == 4)
				o->seed = (unsigned long)v;
			if (k == 5)
				o->deck = (unsigned long)w;
			i++;
		} else if (!strcmp(a, "--translation")) {
			if (parse_translation(next, &o->translation) < 0)
				return 2;
			i++;
		} else if (!strcmp(a, "--check")) {
			o->check = 1;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: minibude [--poses N] [--batch B] [--ligand L] [--protein P] [--seed S]\n"
			       "                [--deck D] [--translation T] [--check] [--quiet]\n"
			       "Docking energies of N poses of an L-atom ligand against a P-atom protein\n"
			       "(defaults 4096, 26, 938: bm1's sizes; bm2's protein has 2672 atoms), B per\n"
			       "region call. S seeds the poses, D (default 1) the atoms of the deck.\n"
			       "Translations are drawn from {-T, ..., T} angstrom (default 7, 1 <= T <= 1000):\n"
			       "a wider T draws poses unlike the default run's (out of distribution).\n"
			       "--check recomputes the first poses with a simple double path.\n"
			       "hml settings come from the environment: HML_MODE, HML_MODEL, HML_DB, HML_QOI, ...\n");
			exit(0);
		} else {
			fprintf(stderr, "minibude: error: unknown argument '%s'\n", a);
			return 2;
		}
	}
	if (o->batch > o->poses)
		o->batch = o->poses;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Poses whose energy differs from the simple path; messages for the first. */
static long check_energies(const deck *d, const float *energy)
{
	long i, failed = 0, n = d->nposes < CHECK_POSES ? d->nposes : CHECK_POSES;

	for (i = 0; i < n; i++) {
		double scale, e = pose_energy_simple(d, d->poses[i], &scale);
		if (!(fabs(energy[i] - e) <= 1e-4 * scale + 1e-6)) {
			if (failed < 3)
				fprintf(stderr, "minibude: check failed for pose %ld: %.8g, simple path %.8g\n",
				        i, (double)energy[i], e);
			failed++;
		}
	}
	return failed;
}

int minibude_setup(struct minibude *m, int argc, char **argv)
{
	deck *d = &m->d;
	int rc;

	memset(m, 0, sizeof(*m));
	if ((rc = parse_args(argc, argv, m)) != 0)
		return rc;
	d->nl = m->ligand;
	d->np = m->protein;
	d->nposes = m->poses;
	d->ligand = malloc(sizeof(atom) * (size_t)m->ligand);
	d->protein = malloc(sizeof(atom) * (size_t)m->protein);
	d->poses = malloc(sizeof(*d->poses) * (size_t)m->poses);
	m->energy = malloc(sizeof(float) * (size_t)m->poses);
	if (!d->ligand || !d->protein || !d->poses || !m->energy) {
		fprintf(stderr, "minibude: error: out of memory for the deck\n");
		minibude_free(m);
		return 1;
	}
	make_deck(d, (uint64_t)m->deck, (uint64_t)m->seed, m->translation);
	m->t0 = now();
	return 0;
}

void minibude_finish(struct minibude *m)
{
	long i;

	m->t1 = now();
	for (i = 0; i < m->poses; i++)
		m->sum += m->energy[i];
	if (m->check)
		m->failed = check_energies(&m->d, m->energy);
}

int minibude_report(const struct minibude *m, const char *mode)
{
	if (!m->quiet)
		printf("minibude: poses %ld, batch %ld, ligand %ld, protein %ld, seed %lu, mode %s\n"
		       "minibude: mean energy %.6f\n"
		       "minibude: docked in %.3f s\n",
		       m->poses, m->batch, m->ligand, m->protein, m->seed, mode,
		       m->sum / (double)m->poses, m->t1 - m->t0);
	if (!m->check)
		return 0;
	printf("minibude: check %s: %ld of %ld poses differ from the simple path\n",
	       m->failed ? "failed" : "passed", m->failed,
	       m->poses < CHECK_POSES ? m->poses : (long)CHECK_POSES);
	return m->failed ? 1 : 0;
}

void minibude_free(struct minibude *m)
{
	free(m->d.ligand);
	free(m->d.protein);
	free(m->d.poses);
	free(m->energy);
	m->d.ligand = m->d.protein = NULL;
	m->d.poses = NULL;
	m->energy = NULL;
}
