/*
 * particlefilter_physics.c - object tracking in noisy video with a particle filter
 * (after Rodinia's particle filter, written from the description in
 * REFERENCE.md).
 *
 * Each video is T frames of S x S pixels: background 100, a disk of radius
 * 5 (the pixels with dx^2 + dy^2 < 25: 69 of them) of value 228, plus
 * 5 N(0,1) noise, rounded and clamped to 0..255. The disk starts at a
 * seeded random position and moves by (+1, -2) pixels (x = column, y = row)
 * per frame, so the ground truth is known exactly.
 *
 * The tracker, per video: P particles start at the known first position
 * with equal weights; for every frame each particle moves by
 * (1 + 5 N, -2 + 2 N), its likelihood is
 *   L = (1/69) sum over the disk around it of ((I - 100)^2 - (I - 228)^2) / 50,
 * its weight is multiplied by e^L (shifted by the largest L, which the
 * normalisation cancels), the weights are normalised, the estimate is the
 * weighted mean and the particles are resampled systematically from the CDF.
 *
 * Rodinia parallelises the particle loops of one video;
 * here a batch of videos is tracked, and the videos are the OpenMP loop
 * (coarser, and each video's random stream is its own, so the result does
 * not depend on the thread count).
 *
 * The check: the RMSE of the final estimates against the ground truth must
 * stay below CHECK_BOUND pixels; exit 1 otherwise.
 *
 * Everything of workflows/particlefilter but hml (particlefilter_physics.h).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "particlefilter_physics.h"

#define BACKGROUND 100.0
#define FOREGROUND 228.0
#define NOISE 5.0
#define DX 1.0          /* motion per frame */
#define DY (-2.0)
#define CHECK_BOUND 1.0 /* pixels: RMSE of the final estimates vs truth */

/* splitmix64: a small seeded generator, the same on every platform. */
static double uniform01(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* The start of an independent stream for (seed, video, purpose): one
 * splitmix64 step over the three, so that no two streams are shifts of
 * one another. */
static uint64_t stream(unsigned long seed, long video, uint64_t purpose)
{
	uint64_t s = (uint64_t)seed * 0xd1b54a32d192ed03ULL ^ (uint64_t)video * 0xa0761d6478bd642fULL ^ purpose;

	(void)uniform01(&s);
	return s;
}

/* Box-Muller; one draw per call keeps the streams simple. */
static double normal(uint64_t *state)
{
	double u = uniform01(state), v = uniform01(state);

	return sqrt(-2.0 * log(u > 0.0 ? u : 1e-300)) * cos(2.0 * 3.14159265358979323846 * v);
}

static int parse_long(const char *arg, const char *flag, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	if (!arg || errno || *end || v < min || v > max) {
		fprintf(stderr, "particlefilter: error: %s needs an integer from %ld to %ld, got '%s'\n",
		        flag, min, max, arg ? arg : "");
		return -1;
	}
	*out = v;
	return 0;
}

static void usage(void)
{
	printf("usage: particlefilter [--size S] [--frames T] [--videos V] [--particles P]\n"
	       "                      [--seed N] [--label estimate|truth] [--quiet]\n"
	       "Tracks a disk moving by (+1, -2) pixels per frame through V noisy videos of\n"
	       "T frames of S x S pixels with a particle filter of P particles (defaults:\n"
	       "S 32, T 8, V 64, P 512) and checks the final estimates against the known\n"
	       "positions (RMSE below %.0f pixels). The region is the whole tracker: frames\n"
	       "in, (x, y) per frame out.\n"
	       "--label truth (HML_MODE=collect only) records the true positions as the\n"
	       "region's output instead of the tracker's estimates: training data for a\n"
	       "surrogate that learns where the disk is, not the filter's error.\n"
	       "hml settings come from the environment: HML_MODE, HML_MODEL, HML_DB, HML_QOI, ...\n",
	       CHECK_BOUND);
}

static int parse_args(int argc, char **argv, struct pfilter *o)
{
	long v = 0;
	int i;

	*o = (struct pfilter){ .size = 32, .frames = 8, .videos = 64, .particles = 512, .seed = 1 };
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;

		if (!strcmp(a, "--size"))
			bad = parse_long(next, a, 16, 4096, &o->size), i++;
		else if (!strcmp(a, "--frames"))
			bad = parse_long(next, a, 1, 1000, &o->frames), i++;
		else if (!strcmp(a, "--videos"))
			bad = parse_long(next, a, 1, 1000000, &o->videos), i++;
		else if (!strcmp(a, "--particles"))
			bad = parse_long(next, a, 1, 10000000, &o->particles), i++;
		else if (!strcmp(a, "--seed")) {
			bad = parse_long(next, a, 0, 0x7fffffffL, &v), i++;
			o->seed = (unsigned long)v;
		} else if (!strcmp(a, "--label")) {
			if (next && (!strcmp(next, "truth") || !strcmp(next, "estimate")))
				o->label_truth = !strcmp(next, "truth");
			else {
				fprintf(stderr, "particlefilter: error: --label needs 'estimate' or 'truth', got '%s'\n",
				        next ? next : "");
				bad = 1;
			}
			i++;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
			o->quiet = 1;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage();
			exit(0);
		} else {
			fprintf(stderr, "particlefilter: error: unknown argument '%s'\n", a);
			return 2;
		}
		if (bad)
			return 2;
	}
	/* The disk must stay inside the frame for the whole video. */
	if (2 * RADIUS + 1 + (o->frames - 1) * 2 > o->size) {
		fprintf(stderr, "particlefilter: error: --frames %ld do not fit in --size %ld "
		        "(the disk moves 2 pixels a frame; at most %ld frames)\n",
		        o->frames, o->size, (o->size - 2 * RADIUS - 1) / 2 + 1);
		return 2;
	}
	return 0;
}

/* The disk's offsets, dx^2 + dy^2 < RADIUS^2; returns how many. */
static int disk_offsets(int (*off)[2])
{
	int n = 0, dx, dy;

	for (dy = -RADIUS; dy <= RADIUS; dy++)
		for (dx = -RADIUS; dx <= RADIUS; dx++)
			if (dx * dx + dy * dy < RADIUS * RADIUS) {
				off[n][0] = dx;
				off[n][1] = dy;
				n++;
			}
	return n;
}

/* Video v: its frames [T][S][S] and its true positions [T][2]. */
static void make_video(int32_t *frames, double *truth, long v, const struct pfilter *o,
                       int (*off)[2], int ndisk)
{
	long s = o->size, t, p;
	uint64_t rng = stream(o->seed, v, 1);
	/* x0 in [R, S-1-R-(T-1)], y0 in [R+2(T-1), S-1-R]: inside all along. */
	long xmax = s - 1 - RADIUS - (o->frames - 1), ymin = RADIUS + 2 * (o->frames - 1);
	long x0 = RADIUS + (long)(uniform01(&rng) * (double)(xmax - RADIUS + 1));
	long y0 = ymin + (long)(uniform01(&rng) * (double)(s - 1 - RADIUS - ymin + 1));

	for (t = 0; t < o->frames; t++) {
		int32_t *f = frames + t * s * s;
		long cx = x0 + t * (long)DX, cy = y0 + t * (long)DY;
		int k;

		for (p = 0; p < s * s; p++)
			f[p] = (int32_t)BACKGROUND;
		for (k = 0; k < ndisk; k++)
			f[(cy + off[k][1]) * s + cx + off[k][0]] = (int32_t)FOREGROUND;
		for (p = 0; p < s * s; p++) {
			double val = nearbyint((double)f[p] + NOISE * normal(&rng));
			f[p] = (int32_t)(val < 0.0 ? 0.0 : val > 255.0 ? 255.0 : val);
		}
		truth[2 * t] = (double)cx;
		truth[2 * t + 1] = (double)cy;
	}
}

/* Scratch of one tracker: particles, weights, likelihoods, CDF. */
struct filter {
	double *x, *y, *nx, *ny, *w, *lik, *cdf;
};

static double likelihood(const int32_t *f, long s, double px, double py, int (*off)[2], int ndisk)
{
	long cx = lround(px), cy = lround(py);
	double sum = 0.0;
	int k;

	for (k = 0; k < ndisk; k++) {
		long ix = cx + off[k][0], iy = cy + off[k][1];
		double i;

		ix = ix < 0 ? 0 : ix >= s ? s - 1 : ix;
		iy = iy < 0 ? 0 : iy >= s ? s - 1 : iy;
		i = (double)f[iy * s + ix];
		sum += ((i - BACKGROUND) * (i - BACKGROUND) - (i - FOREGROUND) * (i - FOREGROUND)) / 50.0;
	}
	return sum / (double)ndisk;
}

/* Systematic resampling: one uniform draw, P evenly spaced points on the CDF. */
static void resample(struct filter *pf, long np, uint64_t *rng)
{
	double u0 = uniform01(rng) / (double)np, *t;
	long j, k = 0;

	pf->cdf[0] = pf->w[0];
	for (j = 1; j < np; j++)
		pf->cdf[j] = pf->cdf[j - 1] + pf->w[j];
	for (j = 0; j < np; j++) {
		double u = u0 + (double)j / (double)np;
		while (k < np - 1 && pf->cdf[k] < u)
			k++;
		pf->nx[j] = pf->x[k];
		pf->ny[j] = pf->y[k];
	}
	t = pf->x, pf->x = pf->nx, pf->nx = t;
	t = pf->y, pf->y = pf->ny, pf->ny = t;
	for (j = 0; j < np; j++)
		pf->w[j] = 1.0 / (double)np;
}

/* Track video v: estimates [T][2] from its frames, starting at `start`. */
static void track(double *est, const int32_t *frames, const double *start, long v,
                  const struct pfilter *o, struct filter *pf, int (*off)[2], int ndisk)
{
	long np = o->particles, s = o->size, t, j;
	uint64_t rng = stream(o->seed, v, 2);

	for (j = 0; j < np; j++) {
		pf->x[j] = start[0];
		pf->y[j] = start[1];
		pf->w[j] = 1.0 / (double)np;
	}
	for (t = 0; t < o->frames; t++) {
		const int32_t *f = frames + t * s * s;
		double top = -INFINITY, sum = 0.0, ex = 0.0, ey = 0.0;

		for (j = 0; j < np; j++) {
			pf->x[j] += DX + 5.0 * normal(&rng);
			pf->y[j] += DY + 2.0 * normal(&rng);
			pf->lik[j] = likelihood(f, s, pf->x[j], pf->y[j], off, ndisk);
			if (pf->lik[j] > top)
				top = pf->lik[j];
		}
		for (j = 0; j < np; j++)
			sum += (pf->w[j] *= exp(pf->lik[j] - top));
		for (j = 0; j < np; j++) {
			pf->w[j] /= sum;
			ex += pf->w[j] * pf->x[j];
			ey += pf->w[j] * pf->y[j];
		}
		est[2 * t] = ex;
		est[2 * t + 1] = ey;
		resample(pf, np, &rng);
	}
}

/* The accurate code of the region: every video tracked, in parallel. */
static int track_all(double *est, const int32_t *frames, const double *truth,
                     const struct pfilter *o, int (*off)[2], int ndisk)
{
	long v, per_video = o->frames * o->size * o->size;
	int failed = 0;

#pragma omp parallel reduction(| : failed)
	{
		struct filter pf;
		size_t n = (size_t)o->particles;
		double *mem = malloc(sizeof(double) * 7 * n);

		if (!mem)
			failed = 1;
		else {
			pf = (struct filter){ mem, mem + n, mem + 2 * n, mem + 3 * n, mem + 4 * n,
			                      mem + 5 * n, mem + 6 * n };
#pragma omp for schedule(dynamic)
			for (v = 0; v < o->videos; v++)
				track(est + v * o->frames * 2, frames + v * per_video,
				      truth + v * o->frames * 2, v, o, &pf, off, ndisk);
		}
		free(mem);
	}
	return failed ? -1 : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


/* Final estimate, truth and their distance per video; the RMSE over videos.
 * fin, tru and err may be NULL (the RMSE alone). */
static double final_errors(double *fin, double *tru, double *err, const double *est,
                           const double *truth, const struct pfilter *o)
{
	long v, last = (o->frames - 1) * 2;
	double sq = 0.0;

	for (v = 0; v < o->videos; v++) {
		const double *e = est + v * o->frames * 2 + last, *g = truth + v * o->frames * 2 + last;
		double d = hypot(e[0] - g[0], e[1] - g[1]);
		if (fin) {
			fin[2 * v] = e[0];
			fin[2 * v + 1] = e[1];
			tru[2 * v] = g[0];
			tru[2 * v + 1] = g[1];
			err[v] = d;
		}
		sq += d * d;
	}
	return sqrt(sq / (double)o->videos);
}

int pf_setup(struct pfilter *p, int argc, char **argv)
{
	long v;
	int rc;

	if ((rc = parse_args(argc, argv, p)) != 0)
		return rc;
	p->ndisk = disk_offsets(p->off);
	p->pixels = malloc(sizeof(int32_t) * (size_t)(p->videos * p->frames * p->size * p->size));
	p->truth = malloc(sizeof(double) * (size_t)(p->videos * p->frames * 2));
	p->est = calloc((size_t)(p->videos * p->frames * 2), sizeof(double));
	p->fin = malloc(sizeof(double) * (size_t)(p->videos * 5));
	if (!p->pixels || !p->truth || !p->est || !p->fin) {
		fprintf(stderr, "particlefilter: error: out of memory for %ld videos of %ld frames of %ld x %ld\n",
		        p->videos, p->frames, p->size, p->size);
		pf_free(p);
		return 1;
	}
	p->tru = p->fin + 2 * p->videos;
	p->err = p->fin + 4 * p->videos;
#pragma omp parallel for schedule(static)
	for (v = 0; v < p->videos; v++)
		make_video(p->pixels + v * p->frames * p->size * p->size, p->truth + v * p->frames * 2, v, p,
		           p->off, p->ndisk);
	p->t0 = now();
	return 0;
}

int pf_label_check(const struct pfilter *p, const char *mode)
{
	if (!p->label_truth || !strcmp(mode, "collect"))
		return 0;
	fprintf(stderr, "particlefilter: error: --label truth is for collection only "
	        "(HML_MODE=collect), not mode %s\n", mode);
	return 2;
}

int pf_track(struct pfilter *p)
{
	if (track_all(p->est, p->pixels, p->truth, p, p->off, p->ndisk) < 0) {
		fprintf(stderr, "particlefilter: error: out of memory for %ld particles\n", p->particles);
		return -1;
	}
	return final_errors(NULL, NULL, NULL, p->est, p->truth, p) <= CHECK_BOUND;
}

void pf_finish(struct pfilter *p)
{
	p->t1 = now();
	p->rmse = final_errors(p->fin, p->tru, p->err, p->est, p->truth, p);
}

void pf_report(const struct pfilter *p, const char *mode)
{
	if (p->quiet)
		return;
	printf("particlefilter: size %ld, frames %ld, videos %ld, particles %ld, seed %lu, mode %s\n",
	       p->size, p->frames, p->videos, p->particles, p->seed, mode);
	printf("particlefilter: tracked in %.3f s\n", p->t1 - p->t0);
	printf("particlefilter: check final position: rmse %.3f px vs ground truth (bound %.0f) %s\n",
	       p->rmse, CHECK_BOUND, p->rmse <= CHECK_BOUND ? "pass" : "FAIL");
}

void pf_free(struct pfilter *p)
{
	free(p->pixels);
	free(p->truth);
	free(p->est);
	free(p->fin);
	p->pixels = NULL;
	p->truth = p->est = p->fin = NULL;
}
