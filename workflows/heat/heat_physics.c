/*
 * heat_physics.c - the 2-D heat equation on an n x n grid, explicit 5-point
 * stencil, u' = u + a * (uN + uS + uW + uE - 4u), a <= 0.25, with a
 * Dirichlet boundary: everything of workflows/heat but hml (heat_physics.h).
 *
 * Initial field: --init random (Gaussian bumps drawn from --seed, the data a
 * surrogate learns from) or --init mode, the discrete eigenmode
 * sin(p pi i/(n+1)) sin(q pi j/(n+1)) with p = 1, q = 2, which one step
 * multiplies by exactly
 *   g = 1 - 4a (sin^2(p pi / (2(n+1))) + sin^2(q pi / (2(n+1)))):
 * the check compares the final field with g^steps times the initial one.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heat_physics.h"

#define PI 3.14159265358979323846
#define MODE_P 1
#define MODE_Q 2
#define CHECK_BOUND 1e-10   /* relative max error of the mode's decay */
#define PARALLEL_MIN 128    /* smaller grids step on one thread */


/* splitmix64: a small seeded generator, the same on every platform. */
static double uniform(uint64_t *state, double lo, double hi)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return lo + (hi - lo) * ((double)(z >> 11) * (1.0 / 9007199254740992.0));
}

static int parse_long(const char *arg, const char *flag, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	if (!arg || errno || *end || v < min) {
		fprintf(stderr, "heat: error: %s needs an integer >= %ld, got '%s'\n",
		        flag, min, arg ? arg : "");
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_choice(const char *arg, const char *flag, const char *a, const char *b, int *out)
{
	if (arg && !strcmp(arg, a)) {
		*out = 0;
		return 0;
	}
	if (arg && !strcmp(arg, b)) {
		*out = 1;
		return 0;
	}
	fprintf(stderr, "heat: error: %s needs '%s' or '%s', got '%s'\n", flag, a, b, arg ? arg : "");
	return -1;
}

static int parse_args(int argc, char **argv, struct heat *o)
{
	long v = 0;
	int i;

	*o = (struct heat){ .n = 32, .steps = 64, .k = 4, .alpha = 0.2, .seed = 42 };
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;

		if (!strcmp(a, "--n")) {
			bad = parse_long(next, a, 1, &o->n);
			i++;
		} else if (!strcmp(a, "--steps")) {
			bad = parse_long(next, a, 1, &o->steps);
			i++;
		} else if (!strcmp(a, "--k")) {
			bad = parse_long(next, a, 1, &o->k);
			i++;
		} else if (!strcmp(a, "--alpha")) {
			char *end;
			errno = 0;
			o->alpha = strtod(next ? next : "", &end);
			if (!next || errno || *end || !(o->alpha > 0.0 && o->alpha <= 0.25)) {
				fprintf(stderr, "heat: error: --alpha needs a number in (0, 0.25], got '%s'\n",
				        next ? next : "");
				bad = -1;
			}
			i++;
		} else if (!strcmp(a, "--region")) {
			bad = parse_choice(next, a, "field", "rows", &o->rows);
			i++;
		} else if (!strcmp(a, "--init")) {
			bad = parse_choice(next, a, "random", "mode", &o->mode);
			i++;
		} else if (!strcmp(a, "--seed")) {
			bad = parse_long(next, a, 0, &v);
			o->seed = (unsigned long)v;
			i++;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: heat [--n N] [--steps T] [--k K] [--alpha A] [--region field|rows]\n"
			       "            [--init random|mode] [--seed S] [--quiet]\n"
			       "Runs T explicit steps of the 2-D heat equation on an N x N grid (default 32,\n"
			       "64 steps, alpha 0.2). --region field: the region advances the whole field K\n"
			       "steps per call (default 4; T must be a multiple of K); --region rows: one step\n"
			       "per call, each cell's 5-point neighbourhood a row. --init mode checks the\n"
			       "decay of a sin*sin mode against its exact factor.\n"
			       "hml settings come from the environment: HML_MODE, HML_MODEL, HML_DB, HML_QOI, ...\n");
			exit(0);
		} else {
			fprintf(stderr, "heat: error: unknown argument '%s'\n", a);
			return 2;
		}
		if (bad)
			return 2;
	}
	if (o->rows)
		o->k = 1;
	if (o->steps % o->k) {
		fprintf(stderr, "heat: error: --steps %ld is not a multiple of --k %ld\n", o->steps, o->k);
		return 2;
	}
	return 0;
}

void heat_step(const double *u, double *v, long n, double a)
{
	long w = n + 2, i;

#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN)
	for (i = 1; i <= n; i++) {
		long j;
		for (j = 1; j <= n; j++) {
			long c = i * w + j;
			v[c] = u[c] + a * (u[c - w] + u[c + w] + u[c - 1] + u[c + 1] - 4.0 * u[c]);
		}
	}
}

static void init_field(double *u, const struct heat *o)
{
	long n = o->n, w = n + 2, i, j, b;
	uint64_t rng = (uint64_t)o->seed;

	memset(u, 0, sizeof(double) * (size_t)(w * w));
	if (o->mode) {
		for (i = 1; i <= n; i++)
			for (j = 1; j <= n; j++)
				u[i * w + j] = sin(MODE_P * PI * (double)i / (double)(n + 1)) *
				               sin(MODE_Q * PI * (double)j / (double)(n + 1));
		return;
	}
	/* A few hot and cold Gaussian bumps. */
	for (b = 0; b < 6; b++) {
		double ci = uniform(&rng, 0.15, 0.85) * (double)n, cj = uniform(&rng, 0.15, 0.85) * (double)n;
		double amp = uniform(&rng, -1.0, 1.0), r = uniform(&rng, 0.04, 0.15) * (double)n;
		for (i = 1; i <= n; i++)
			for (j = 1; j <= n; j++) {
				double di = (double)i - ci, dj = (double)j - cj;
				u[i * w + j] += amp * exp(-(di * di + dj * dj) / (2.0 * r * r));
			}
	}
}

void heat_advance(double *u, double *v, const struct heat *o)
{
	double *a = u, *b = v, *t;
	long s;

	for (s = 0; s < o->k; s++) {
		heat_step(a, b, o->n, o->alpha);
		t = a;
		a = b;
		b = t;
	}
	if (a != u)
		memcpy(u, a, sizeof(double) * (size_t)((o->n + 2) * (o->n + 2)));
}

double heat_total(const double *u, long n)
{
	long w = n + 2, i, j;
	double s = 0.0;

	for (i = 1; i <= n; i++)
		for (j = 1; j <= n; j++)
			s += u[i * w + j];
	return s;
}

/* The largest error of the final field against g^steps times the mode,
 * relative to the largest value of the exact field. */
static double mode_error(const double *u, const struct heat *o)
{
	long n = o->n, w = n + 2, i, j;
	double sp = sin(MODE_P * PI / (2.0 * (double)(n + 1)));
	double sq = sin(MODE_Q * PI / (2.0 * (double)(n + 1)));
	double g = pow(1.0 - 4.0 * o->alpha * (sp * sp + sq * sq), (double)o->steps);
	double err = 0.0, top = 0.0;

	for (i = 1; i <= n; i++)
		for (j = 1; j <= n; j++) {
			double exact = g * sin(MODE_P * PI * (double)i / (double)(n + 1)) *
			               sin(MODE_Q * PI * (double)j / (double)(n + 1));
			double e = fabs(u[i * w + j] - exact);
			if (e > err || isnan(e))
				err = e;
			if (fabs(exact) > top)
				top = fabs(exact);
		}
	return err / top;
}

double heat_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


int heat_setup(struct heat *h, int argc, char **argv)
{
	long w;
	int rc;

	if ((rc = parse_args(argc, argv, h)) != 0)
		return rc;
	w = h->n + 2;
	h->calls = h->steps / h->k;
	h->u = calloc((size_t)(w * w), sizeof(double));
	h->v = calloc((size_t)(w * w), sizeof(double));
	h->heat = malloc(sizeof(double) * (size_t)h->calls);
	if (!h->u || !h->v || !h->heat) {
		fprintf(stderr, "heat: error: out of memory for a %ld x %ld grid\n", h->n, h->n);
		heat_free(h);
		return 1;
	}
	init_field(h->u, h);
	h->t0 = heat_now();
	return 0;
}

int heat_finish(struct heat *h, const double *u)
{
	long i, w = h->n + 2;

	h->t1 = heat_now();
	h->err = h->mode ? mode_error(u, h) : 0.0;
	h->field = malloc(sizeof(double) * (size_t)(h->n * h->n));
	if (!h->field) {
		fprintf(stderr, "heat: error: out of memory\n");
		return 1;
	}
	for (i = 0; i < h->n; i++)
		memcpy(h->field + i * h->n, u + (i + 1) * w + 1, sizeof(double) * (size_t)h->n);
	return 0;
}

void heat_report(const struct heat *h, const char *mode)
{
	if (h->quiet)
		return;
	printf("heat: n %ld, steps %ld, k %ld, alpha %g, init %s, seed %lu, mode %s\n",
	       h->n, h->steps, h->k, h->alpha, h->mode ? "mode" : "random", h->seed, mode);
	printf("heat: total heat %.10e, stepped in %.3f s\n", h->heat[h->calls - 1], h->t1 - h->t0);
	if (h->mode)
		printf("heat: check mode decay: relative error %.3e (bound %.0e) %s\n",
		       h->err, CHECK_BOUND, h->err <= CHECK_BOUND ? "pass" : "FAIL");
}

void heat_free(struct heat *h)
{
	free(h->u);
	free(h->v);
	free(h->heat);
	free(h->field);
	h->u = h->v = h->heat = h->field = NULL;
}
