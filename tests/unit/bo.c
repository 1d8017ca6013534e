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

#include "check.h"
#include "core/rng.h"
#include "search/opt/bo.h"
#include "search/opt/pareto.h"
#include "search/opt/space.h"

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
	return hml__rng_lcg(s) >> 11;
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


static hml__bo *make_bo(size_t dim, unsigned nobj, unsigned ncons, const double *bounds,
                        uint64_t seed)
{
	hml__bo_options o = HML__BO_OPTIONS_INIT;
	hml__bo *bo = NULL;
	o.dim = dim;
	o.nobj = nobj;
	o.ncons = ncons;
	o.bounds = bounds;
	o.seed = seed;
	CHECK_OK(hml__bo_new(&bo, &o));
	return bo;
}

static void two_obj(const double *u, double f[2])
{
	f[0] = pow(u[0] - 0.2, 2) + pow(u[1] - 0.5, 2) + 0.1 * u[2];
	f[1] = pow(u[0] - 0.8, 2) + pow(u[1] - 0.3, 2) + 0.1 * u[2];
}

/* Two optimisers with the same seed and the same history suggest the same
 * points; one rebuilt by replaying the history (hml__bo_add, then tell and
 * fail in completion order) suggests what the original suggests next. */
TEST(deterministic_and_replayable)
{
	enum { D = 3, STEPS = 30 };
	hml__bo *a = make_bo(D, 2, 0, NULL, 11), *b = make_bo(D, 2, 0, NULL, 11);
	hml__bo *c = make_bo(D, 2, 0, NULL, 11);
	if (!a || !b || !c)
		return;
	/* log: +id = added, -id-1 = completed (failed when id % 7 == 3) */
	long log[3 * STEPS];
	size_t nlog = 0, ia, ib, q[2] = { 0, 0 };
	double ua[D], ub[D], f[2];
	for (int step = 0; step < STEPS; step++) {
		CHECK_OK(hml__bo_ask(a, &ia, ua));
		CHECK_OK(hml__bo_ask(b, &ib, ub));
		CHECK_EQ_INT(ia, ib);
		CHECK(!memcmp(ua, ub, sizeof ua));
		log[nlog++] = (long)ia;
		/* two trials in flight: complete the older one */
		if (step == 0) {
			q[0] = ia;
			continue;
		}
		q[1] = ia;
		size_t done = q[0];
		const double *u;
		hml__bo_trial(a, done, &u, NULL, NULL);
		two_obj(u, f);
		if (done % 7 == 3) {
			CHECK_OK(hml__bo_fail(a, done));
			CHECK_OK(hml__bo_fail(b, done));
		} else {
			CHECK_OK(hml__bo_tell(a, done, f, NULL));
			CHECK_OK(hml__bo_tell(b, done, f, NULL));
		}
		log[nlog++] = -(long)done - 1;
		q[0] = q[1];
	}
	/* replay into c */
	for (size_t j = 0; j < nlog; j++) {
		if (log[j] >= 0) {
			const double *u;
			size_t id;
			hml__bo_trial(a, (size_t)log[j], &u, NULL, NULL);
			CHECK_OK(hml__bo_add(c, &id, u));
			CHECK_EQ_INT(id, log[j]);
		} else {
			size_t id = (size_t)(-log[j] - 1);
			const double *fo;
			if (hml__bo_trial(a, id, NULL, &fo, NULL) == HML__TRIAL_FAILED)
				CHECK_OK(hml__bo_fail(c, id));
			else
				CHECK_OK(hml__bo_tell(c, id, fo, NULL));
		}
	}
	for (int k = 0; k < 3; k++) {
		CHECK_OK(hml__bo_ask(a, &ia, ua));
		CHECK_OK(hml__bo_ask(c, &ib, ub));
		CHECK_EQ_INT(ia, ib);
		CHECK(!memcmp(ua, ub, sizeof ua));
	}
	/* a different seed gives different suggestions */
	hml__bo *d = make_bo(D, 2, 0, NULL, 12);
	CHECK_OK(hml__bo_ask(d, &ia, ua));
	CHECK_OK(hml__bo_ask(b, &ib, ub));
	CHECK(memcmp(ua, ub, sizeof ua));
	hml__bo_free(a);
	hml__bo_free(b);
	hml__bo_free(c);
	hml__bo_free(d);
}

static double dist(const double *a, const double *b, size_t d)
{
	double s = 0;
	for (size_t k = 0; k < d; k++)
		s += (a[k] - b[k]) * (a[k] - b[k]);
	return sqrt(s);
}

/* Suggestions made while earlier ones are pending spread out (constant
 * liar) instead of piling onto the same optimum. */
TEST(pending_trials_spread)
{
	enum { D = 2, W = 4 };
	hml__bo *bo = make_bo(D, 1, 0, NULL, 5);
	double u[D], pend[W][D];
	size_t id;
	if (!bo)
		return;
	for (int i = 0; i < 20; i++) {
		CHECK_OK(hml__bo_ask(bo, &id, u));
		double y = branin(u);
		CHECK_OK(hml__bo_tell(bo, id, &y, NULL));
	}
	for (int w = 0; w < W; w++)
		CHECK_OK(hml__bo_ask(bo, &id, pend[w]));
	double closest = INFINITY;
	for (int i = 0; i < W; i++)
		for (int j = 0; j < i; j++)
			closest = fmin(closest, dist(pend[i], pend[j], D));
	if (verbose)
		printf("pending: closest pair %g\n", closest);
	CHECK(closest > 0.01);
	CHECK_EQ_INT(hml__bo_count(bo), 20 + W);
	hml__bo_free(bo);
}

/* Trials fail where x0 > 0.6, next to the optimum at x0 = 0.55: failed
 * trials are never suggested again, few suggestions land in the failing
 * region, and the best success gets close to the optimum. */
TEST(failed_trials_avoided)
{
	enum { D = 2, BUDGET = 40 };
	hml__bo *bo = make_bo(D, 1, 0, NULL, 3);
	double u[D], best = INFINITY;
	size_t id, late_failures = 0;
	if (!bo)
		return;
	for (int i = 0; i < BUDGET; i++) {
		CHECK_OK(hml__bo_ask(bo, &id, u));
		for (size_t j = 0; j < id; j++) {
			const double *v;
			if (hml__bo_trial(bo, j, &v, NULL, NULL) == HML__TRIAL_FAILED)
				CHECK(dist(u, v, D) > 1e-9);
		}
		if (u[0] > 0.6) {
			CHECK_OK(hml__bo_fail(bo, id));
			late_failures += i >= BUDGET / 2;
			continue;
		}
		double y = pow(u[0] - 0.55, 2) + pow(u[1] - 0.5, 2);
		best = fmin(best, y);
		CHECK_OK(hml__bo_tell(bo, id, &y, NULL));
	}
	if (verbose)
		printf("failures: %zu of the last %d, best %g\n", late_failures, BUDGET / 2, best);
	CHECK(late_failures <= BUDGET / 4);
	CHECK(best < 1e-3);
	hml__bo_free(bo);
}

/* Minimise x0 + x1 subject to (x0-1)^2 + (x1-1)^2 <= 0.5: the constrained
 * optimum is 1 at (0.5, 0.5), on the boundary, where the unconstrained
 * optimum (0, 0) is far outside. Infeasible trials are kept (counted, and
 * out of the front); later suggestions stay at the boundary, feasible or
 * nearly so, instead of chasing the unconstrained optimum. */
TEST(outcome_constraints)
{
	enum { D = 2, BUDGET = 40 };
	const double bound = 0.5;
	hml__bo *bo = make_bo(D, 1, 1, &bound, 9);
	double u[D], best = INFINITY;
	size_t id, late_near = 0, ids[BUDGET];
	if (!bo)
		return;
	for (int i = 0; i < BUDGET; i++) {
		CHECK_OK(hml__bo_ask(bo, &id, u));
		double y = u[0] + u[1], c = pow(u[0] - 1, 2) + pow(u[1] - 1, 2);
		CHECK_OK(hml__bo_tell(bo, id, &y, &c));
		CHECK_EQ_INT(hml__bo_feasible(bo, id), c <= bound);
		if (c <= bound)
			best = fmin(best, y);
		late_near += i >= BUDGET / 2 && c <= bound + 0.01;
	}
	if (verbose)
		printf("constraints: %zu near-feasible of the last %d, best %g\n", late_near,
		       BUDGET / 2, best);
	CHECK(best < 1.05);
	CHECK(late_near >= BUDGET / 4);
	CHECK_EQ_INT(hml__bo_count(bo), BUDGET);
	CHECK_EQ_INT(hml__bo_front(bo, ids), 1);
	const double *fo;
	hml__bo_trial(bo, ids[0], NULL, &fo, NULL);
	CHECK(fo[0] == best);
	hml__bo_free(bo);
}

static void project_cb(double *u, void *payload)
{
	hml__space_project(payload, u);
}

/* Over a mixed space with conditional parameters, every suggestion decodes
 * to a valid sample and none repeats an earlier one. */
TEST(mixed_space)
{
	json_t *spec = json_loads(
		"{\"layers\": {\"type\": \"int\", \"low\": 1, \"high\": 3},"
		" \"width_1\": {\"type\": \"int\", \"low\": 4, \"high\": 64, \"log\": true},"
		" \"width_2\": {\"type\": \"int\", \"low\": 4, \"high\": 64, \"log\": true,"
		"   \"when\": {\"parent\": \"layers\", \"min\": 2}},"
		" \"activation\": {\"type\": \"choice\", \"values\": [\"relu\", \"tanh\"]},"
		" \"lr\": {\"type\": \"float\", \"low\": 1e-4, \"high\": 1e-1, \"log\": true}}",
		0, NULL);
	hml__space *s = NULL;
	CHECK_OK(hml__space_parse(&s, spec, "test"));
	json_decref(spec);
	if (!s)
		return;
	hml__bo_options o = HML__BO_OPTIONS_INIT;
	hml__bo *bo = NULL;
	o.dim = hml__space_dim(s);
	o.seed = 4;
	o.project = project_cb;
	o.payload = s;
	CHECK_OK(hml__bo_new(&bo, &o));
	double u[8], v[8], f[2];
	size_t id;
	for (int i = 0; i < 30 && bo; i++) {
		json_t *x = NULL;
		CHECK_OK(hml__bo_ask(bo, &id, u));
		CHECK_OK(hml__space_decode(&x, s, u));
		CHECK_OK(hml__space_encode(v, s, x));
		CHECK(!memcmp(u, v, o.dim * sizeof *u));
		for (size_t j = 0; j < id; j++) {
			const double *w;
			hml__bo_trial(bo, j, &w, NULL, NULL);
			CHECK(memcmp(u, w, o.dim * sizeof *u));
		}
		double lr = json_real_value(json_object_get(x, "lr"));
		json_int_t layers = json_integer_value(json_object_get(x, "layers"));
		f[0] = pow(log10(lr) + 2.5, 2) + (double)layers;          /* "error" */
		f[1] = log((double)json_integer_value(json_object_get(x, "width_1")));
		CHECK_OK(hml__bo_tell(bo, id, f, NULL));
		json_decref(x);
	}
	hml__bo_free(bo);
	hml__space_free(s);
}

TEST(pareto_helpers)
{
	const double f[] = { 1, 5,  2, 3,  3, 4,  4, 1,  2, 3,  NAN, 0,  5, 0.5,  0.5, 6 };
	size_t idx[8];
	const double ref[2] = { 6, 7 };
	CHECK_EQ_INT(hml__pareto_front(idx, f, 8), 5);
	const size_t want[5] = { 7, 0, 1, 3, 6 };
	for (int i = 0; i < 5; i++)
		CHECK_EQ_INT(idx[i], want[i]);
	/* rectangles swept by increasing first objective */
	double hv = (6 - 0.5) * (7 - 6) + (6 - 1) * (6 - 5) + (6 - 2) * (5 - 3) + (6 - 4) * (3 - 1) +
	     (6 - 5) * (1 - 0.5);
	CHECK_NEAR(hml__pareto_hypervolume(f, 8, ref), hv, 1e-12);
	const double outside[2] = { 7, 8 };
	CHECK_NEAR(hml__pareto_hypervolume(outside, 1, ref), 0, 0);
	CHECK_EQ_INT(hml__pareto_front(idx, f, 0), 0);
	CHECK(hml__pareto_dominates(f + 2, f + 4));
	CHECK(!hml__pareto_dominates(f + 2, f + 8));
}

/* Improved values (a configuration trained longer) are what the optimiser
 * holds and reports, and change its next suggestion; an optimiser rebuilt
 * by replaying adds, tells and improvements suggests what the original
 * does, although the original fitted its hyper-parameters before some
 * improvements and the rebuilt one after all of them (a resumed search). */
TEST(improved_values)
{
	enum { D = 3, TOLD = 24, BETTER = 6 };
	const double bound = 0.5;
	hml__bo *a = make_bo(D, 2, 1, &bound, 5), *c = make_bo(D, 2, 1, &bound, 5);
	hml__bo *n = make_bo(D, 2, 1, &bound, 5);
	size_t ia, ic, id;
	double ua[D], uc[D], un[D], f[2], g[2], cons, better;
	const double *u, *fo, *co;
	if (!a || !c || !n)
		return;
	for (size_t i = 0; i < TOLD; i++) {   /* asked and told one by one */
		CHECK_OK(hml__bo_ask(a, &ia, ua));
		two_obj(ua, f);
		cons = f[0];
		CHECK_OK(hml__bo_tell(a, ia, f, &cons));
		CHECK_OK(hml__bo_add(c, &id, ua));
		CHECK_OK(hml__bo_tell(c, id, f, &cons));
		CHECK_OK(hml__bo_add(n, &id, ua));
		CHECK_OK(hml__bo_tell(n, id, f, &cons));
	}
	CHECK_OK(hml__bo_ask(a, &ia, ua));   /* a fits at its boundary, c and n not */
	CHECK_OK(hml__bo_fail(a, ia));
	CHECK_OK(hml__bo_add(c, &id, ua));
	CHECK_OK(hml__bo_fail(c, id));
	CHECK_OK(hml__bo_add(n, &id, ua));
	CHECK_OK(hml__bo_fail(n, id));
	for (size_t i = 0; i < BETTER; i++) {   /* the first trials, trained longer */
		hml__bo_trial(a, i, &u, &fo, NULL);
		g[0] = fo[0] - 0.3;
		g[1] = fo[1];
		better = g[0];
		CHECK_OK(hml__bo_improve(a, i, g, &better));
		CHECK_OK(hml__bo_improve(c, i, g, &better));
		CHECK_EQ_INT(hml__bo_trial(a, i, NULL, &fo, &co), HML__TRIAL_OK);
		CHECK(fo[0] == g[0] && fo[1] == g[1] && co[0] == better);
	}
	for (int k = 0; k < 3; k++) {
		CHECK_OK(hml__bo_ask(a, &ia, ua));
		CHECK_OK(hml__bo_ask(c, &ic, uc));
		CHECK_OK(hml__bo_ask(n, &id, un));
		CHECK_EQ_INT(ia, ic);
		CHECK(!memcmp(ua, uc, sizeof ua));
		if (k == 0)   /* without the improvements: another suggestion */
			CHECK(memcmp(ua, un, sizeof ua));
	}
	CHECK_FAILS(hml__bo_improve(a, ia, g, &better), HML_EINVALID, "is not completed");
	CHECK_FAILS(hml__bo_improve(a, TOLD, g, &better), HML_EINVALID, "is not completed");
	CHECK_FAILS(hml__bo_improve(a, 99, g, &better), HML_EINVALID, "is not completed");
	g[1] = NAN;
	CHECK_FAILS(hml__bo_improve(a, 0, g, &better), HML_EINVALID,
	            "trial 0: objective 1 is not finite");
	g[1] = 0;
	better = INFINITY;
	CHECK_FAILS(hml__bo_improve(a, 0, g, &better), HML_EINVALID,
	            "trial 0: constraint 0 is not finite");
	hml__bo_free(a);
	hml__bo_free(c);
	hml__bo_free(n);
}

TEST(bad_input)
{
	hml__bo_options o = HML__BO_OPTIONS_INIT;
	hml__bo *bo = NULL;
	double u[2] = { 0.5, 0.5 }, f[2] = { 1, NAN }, inf = INFINITY;
	size_t id;
	CHECK_FAILS(hml__bo_new(&bo, &o), HML_EINVALID, "invalid options (dim 0");
	o.dim = 2;
	o.nobj = 3;
	CHECK_FAILS(hml__bo_new(&bo, &o), HML_EINVALID, "3 objectives");
	o.nobj = 2;
	o.ncons = 1;
	o.bounds = &inf;
	CHECK_FAILS(hml__bo_new(&bo, &o), HML_EINVALID, "constraint bound 0 is not finite");
	CHECK(bo == NULL);
	o.ncons = 0;
	CHECK_OK(hml__bo_new(&bo, &o));
	if (!bo)
		return;
	CHECK_FAILS(hml__bo_tell(bo, 0, f, NULL), HML_EINVALID, "trial 0 is not pending");
	CHECK_OK(hml__bo_add(bo, &id, u));
	CHECK_FAILS(hml__bo_tell(bo, id, f, NULL), HML_EINVALID, "trial 0: objective 1 is not finite");
	CHECK_OK(hml__bo_fail(bo, id));
	CHECK_FAILS(hml__bo_fail(bo, id), HML_EINVALID, "trial 0 is not pending");
	CHECK_EQ_INT(hml__bo_trial(bo, 5, NULL, NULL, NULL), -1);
	hml__bo_free(bo);
	hml__bo_free(NULL);
}

/* The caller's first points replace the first rows of the initial design,
 * in order; the rest of the design is the one without them. */
TEST(first_points)
{
	enum { D = 3 };
	const double first[2 * D] = { 0.1, 0.2, 0.3, 0.9, 0.8, 0.7 };
	hml__bo_options o = HML__BO_OPTIONS_INIT;
	hml__bo *a = NULL, *b = make_bo(D, 2, 0, NULL, 5);
	double ua[D], ub[D];
	size_t ia, ib;

	o.dim = D;
	o.nobj = 2;
	o.seed = 5;
	o.first = first;
	o.nfirst = 2;
	CHECK_OK(hml__bo_new(&a, &o));
	if (!a || !b)
		return;
	for (int k = 0; k < 4; k++) {
		CHECK_OK(hml__bo_ask(a, &ia, ua));
		CHECK_OK(hml__bo_ask(b, &ib, ub));
		if (k < 2)
			CHECK(!memcmp(ua, first + k * D, sizeof ua));
		else
			CHECK(!memcmp(ua, ub, sizeof ua));
	}
	hml__bo_free(a);
	hml__bo_free(b);
}

/* More first points than the default initial design (a search seeded
 * with a large front, hml search --from): every one is asked, in order. */
TEST(more_first_points_than_the_design)
{
	enum { D = 1, N = 9 };   /* the default design of one dimension: 5 */
	double first[N * D], u[D];
	hml__bo_options o = HML__BO_OPTIONS_INIT;
	hml__bo *bo = NULL;
	size_t id;

	for (int k = 0; k < N; k++)
		first[k] = (k + 0.5) / N;
	o.dim = D;
	o.nobj = 2;
	o.seed = 5;
	o.first = first;
	o.nfirst = N;
	CHECK_OK(hml__bo_new(&bo, &o));
	if (!bo)
		return;
	for (int k = 0; k < N; k++) {
		CHECK_OK(hml__bo_ask(bo, &id, u));
		CHECK(u[0] == first[k]);
	}
	hml__bo_free(bo);
}

int main(void)
{
	verbose = getenv("HML_BO_VERBOSE") && *getenv("HML_BO_VERBOSE") == '1';
	RUN(branin_beats_random);
	RUN(hartmann6_beats_random);
	RUN(zdt1_beats_random);
	RUN(deterministic_and_replayable);
	RUN(pending_trials_spread);
	RUN(failed_trials_avoided);
	RUN(outcome_constraints);
	RUN(mixed_space);
	RUN(pareto_helpers);
	RUN(improved_values);
	RUN(bad_input);
	RUN(first_points);
	RUN(more_first_points_than_the_design);
	return check_report();
}
