/*
 * binomial_physics.h - what both forms of binomial share (binomial.c, with
 * directives, and binomial_api.c, against the C API): the options, the
 * command line, the generator of the options priced, the Cox-Ross-Rubinstein
 * tree (the region's original code) and the closed-form Black-Scholes price
 * every result is checked against. Included once by each program.
 */
#ifndef BINOMIAL_PHYSICS_H
#define BINOMIAL_PHYSICS_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 1024
#define RISKFREE 0.06
#define VOLATILITY 0.10

struct opts {
	long options;
	long batch;
	unsigned long seed;
	int quiet;
	double spot_lo, spot_hi;   /* --spot-range: the spots drawn */
	long rounds;               /* --rounds: price the options R times (API form) */
	const char *until;         /* --until FILE: rounds until FILE exists (API form) */
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

/* "LO:HI", two positive finite numbers with LO < HI. */
static int parse_range(const char *arg, const char *flag, double *lo, double *hi)
{
	char *end, *mid;

	errno = 0;
	*lo = strtod(arg ? arg : "", &mid);
	if (arg && mid != arg && *mid == ':') {
		*hi = strtod(mid + 1, &end);
		if (!errno && end != mid + 1 && !*end && isfinite(*lo) && isfinite(*hi) &&
		    *lo > 0 && *lo < *hi)
			return 0;
	}
	fprintf(stderr, "binomial: error: %s needs LO:HI with 0 < LO < HI, got '%s'\n",
	        flag, arg ? arg : "");
	return -1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	long v;
	int i;

	o->options = 16384;
	o->batch = 4096;
	o->seed = 42;
	o->quiet = 0;
	o->spot_lo = 5.0;
	o->spot_hi = 30.0;
	o->rounds = 1;
	o->until = NULL;
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
		} else if (!strcmp(a, "--spot-range")) {
			if (parse_range(next, a, &o->spot_lo, &o->spot_hi) < 0) return 2;
			i++;
		} else if (!strcmp(a, "--rounds")) {
			if (parse_long(next, a, 1, &o->rounds) < 0) return 2;
			i++;
		} else if (!strcmp(a, "--until")) {
			if (!next || !*next) {
				fprintf(stderr, "binomial: error: --until needs a file name\n");
				return 2;
			}
			o->until = next;
			i++;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: binomial [--options N] [--batch B] [--seed S] [--spot-range LO:HI] [--quiet]\n"
			       "       binomial_api ... [--rounds R | --until FILE]\n"
			       "Prices N European calls on a 1024-step binomial tree, B per region call,\n"
			       "spots drawn uniformly from LO:HI (default 5:30). The API form prices\n"
			       "them R times, or until FILE exists, a line per round after the first\n"
			       "(its RMSE against the first round's accurate prices, rows guarded).\n"
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

/* The options' spot, strike and maturity, drawn from o's seed, and the
 * tree's inputs from them (pre-processing stays exact). */
static void make_inputs(const struct opts *o, double *S, double *X, double *T, double *vdt,
                        double *pu, double *pd)
{
	uint64_t rng = (uint64_t)o->seed;
	long i;

	for (i = 0; i < o->options; i++) {
		S[i] = uniform(&rng, o->spot_lo, o->spot_hi);
		X[i] = uniform(&rng, 1.0, 100.0);
		T[i] = uniform(&rng, 0.25, 10.0);
	}
	for (i = 0; i < o->options; i++) {
		double dt = T[i] / STEPS, v = VOLATILITY * sqrt(dt);
		double u = exp(v), d = exp(-v);
		double p = (exp(RISKFREE * dt) - d) / (u - d), df = exp(-RISKFREE * dt);
		vdt[i] = v;
		pu[i] = p * df;
		pd[i] = (1.0 - p) * df;
	}
}

#endif
