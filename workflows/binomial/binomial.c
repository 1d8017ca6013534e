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
 *   binomial [--options N] [--batch B] [--seed S] [--spot-range LO:HI] [--quiet]
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

#include "binomial_physics.h"

int main(int argc, char **argv)
{
	struct opts o;
	double *S, *X, *T, *vdt, *pu, *pd, *price;
	double err_sq = 0.0, err_max = 0.0, sum = 0.0, t0, t1;
	struct timespec ts;
	long i, off;
	int rc = 0;

	if ((rc = parse_args(argc, argv, &o)) != 0)
		return rc;
	if (o.rounds != 1 || o.until) {
		fprintf(stderr, "binomial: error: --rounds and --until are binomial_api's\n");
		return 2;
	}
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

	make_inputs(&o, S, X, T, vdt, pu, pd);

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
