/*
 * binomial - European call options priced on a Cox-Ross-Rubinstein tree.
 *
 * The tree (N = 1024 steps, double) is the expensive region: its loop is
 * marked by one directive as the hml region "binomial", built by hml cc
 * (hml-cc(1)), which derives one row per option from the subscripts:
 *   input  [i, 0:5] = (S[i], X[i], vDt[i], puByDf[i], pdByDf[i])
 *   output [i, 0:1] = (price[i])
 * Pre-processing (dt, u, d, pu, pd, discounting) stays exact. Every price is
 * checked against the closed-form Black-Scholes value, and all prices are
 * recorded as the quantity of interest (HML_QOI).
 *
 *   binomial [--options N] [--batch B] [--seed S] [--quiet]
 *
 * binomial_api.c is the same program written against the C API.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEPS 1024
#define RISKFREE 0.06
#define VOLATILITY 0.10

struct opts {
	long options;
	long batch;
	unsigned long seed;
	int quiet;
};

/* splitmix64: a small seeded generator, the same on every platform. */
static double uniform(uint64_t *state, double lo, double hi)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return lo + (hi - lo) * ((double)(z >> 11) * (1.0 / 9007199254740992.0));
}

static double cnd(double d)
{
	return 0.5 * erfc(-d / sqrt(2.0));
}

static double black_scholes(double s, double x, double t)
{
	double sq = VOLATILITY * sqrt(t);
	double d1 = (log(s / x) + (RISKFREE + 0.5 * VOLATILITY * VOLATILITY) * t) / sq;
	double d2 = d1 - sq;

	return s * cnd(d1) - x * exp(-RISKFREE * t) * cnd(d2);
}

/* Price one option on the tree: the region's original code. */
static double crr_tree(double s, double x, double vdt, double pu_df, double pd_df)
{
	double c[STEPS + 1];
	int i, j;

	for (i = 0; i <= STEPS; i++) {
		double v = s * exp(vdt * (2.0 * i - STEPS)) - x;
		c[i] = v > 0.0 ? v : 0.0;
	}
	for (i = STEPS; i > 0; i--)
		for (j = 0; j < i; j++)
			c[j] = pu_df * c[j + 1] + pd_df * c[j];
	return c[0];
}

static int parse_long(const char *arg, const char *flag, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	if (!arg || errno || *end || v < min) {
		fprintf(stderr, "binomial: error: %s needs an integer >= %ld, got '%s'\n",
		        flag, min, arg ? arg : "");
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	long v;
	int i;

	o->options = 16384;
	o->batch = 4096;
	o->seed = 42;
	o->quiet = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--options")) {
			if (parse_long(next, a, 1, &o->options) < 0) return 2;
			i++;
		} else if (!strcmp(a, "--batch")) {
			if (parse_long(next, a, 1, &o->batch) < 0) return 2;
			i++;
		} else if (!strcmp(a, "--seed")) {
			if (parse_long(next, a, 0, &v) < 0) return 2;
			o->seed = (unsigned long)v;
			i++;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: binomial [--options N] [--batch B] [--seed S] [--quiet]\n"
			       "Prices N European calls on a 1024-step binomial tree, B per region call.\n"
			       "hml settings come from the environment: HML_MODE, HML_MODEL, HML_DB, HML_QOI, ...\n");
			exit(0);
		} else {
			fprintf(stderr, "binomial: error: unknown argument '%s'\n", a);
			return 2;
		}
	}
	if (o->batch > o->options)
		o->batch = o->options;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	double *S, *X, *T, *vdt, *pu, *pd, *price;
	double err_sq = 0.0, err_max = 0.0, sum = 0.0, t0, t1;
	struct timespec ts;
	uint64_t rng;
	long i, off;
	int rc = 0;

	if ((rc = parse_args(argc, argv, &o)) != 0)
		return rc;
	S = malloc(sizeof(double) * (size_t)o.options);
	X = malloc(sizeof(double) * (size_t)o.options);
	T = malloc(sizeof(double) * (size_t)o.options);
	vdt = malloc(sizeof(double) * (size_t)o.options);
	pu = malloc(sizeof(double) * (size_t)o.options);
	pd = malloc(sizeof(double) * (size_t)o.options);
	price = malloc(sizeof(double) * (size_t)o.options);
	if (!S || !X || !T || !vdt || !pu || !pd || !price) {
		fprintf(stderr, "binomial: error: out of memory for %ld options\n", o.options);
		return 1;
	}

	rng = (uint64_t)o.seed;
	for (i = 0; i < o.options; i++) {
		S[i] = uniform(&rng, 5.0, 30.0);
		X[i] = uniform(&rng, 1.0, 100.0);
		T[i] = uniform(&rng, 0.25, 10.0);
	}
	/* Pre-processing stays exact. */
	for (i = 0; i < o.options; i++) {
		double dt = T[i] / STEPS, v = VOLATILITY * sqrt(dt);
		double u = exp(v), d = exp(-v);
		double p = (exp(RISKFREE * dt) - d) / (u - d), df = exp(-RISKFREE * dt);
		vdt[i] = v;
		pu[i] = p * df;
		pd[i] = (1.0 - p) * df;
	}

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
	for (off = 0; off < o.options; off += o.batch) {
		long n = o.options - off < o.batch ? o.options - off : o.batch;
#pragma hml ml in(S, X, vdt, pu, pd) out(price) over(i) label("binomial")
#pragma omp parallel for schedule(static)
		for (i = off; i < off + n; i++)
			price[i] = crr_tree(S[i], X[i], vdt[i], pu[i], pd[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t1 = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;

	for (i = 0; i < o.options; i++) {
		double e = fabs(price[i] - black_scholes(S[i], X[i], T[i]));
		err_sq += e * e;
		if (e > err_max || isnan(e))
			err_max = e;
		sum += price[i];
	}
#pragma hml qoi(price[0:o.options])
	if (!o.quiet)
		printf("binomial: options %ld, batch %ld, seed %lu, mode %s\n"
		       "binomial: mean price %.6f, rmse vs black-scholes %.3e, max error %.3e\n"
		       "binomial: priced in %.3f s\n",
		       o.options, o.batch, o.seed,
		       hml_mode_name(hml_region_mode(hml_region_find("binomial"))),
		       sum / (double)o.options, sqrt(err_sq / (double)o.options), err_max,
		       t1 - t0);
	free(S); free(X); free(T); free(vdt); free(pu); free(pd); free(price);
	return rc;
}
