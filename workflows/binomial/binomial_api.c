/*
 * binomial - European call options priced on a Cox-Ross-Rubinstein tree.
 *
 * The tree (N = 1024 steps, double) is the expensive region: it is marked as
 * the hml region "binomial", with one row per option:
 *   input  [i, 0:5] = (S[i], X[i], vDt[i], puByDf[i], pdByDf[i])
 *   output [i, 0:1] = (price[i])
 * Pre-processing (dt, u, d, pu, pd, discounting) stays exact. Every price is
 * checked against the closed-form Black-Scholes value, and all prices are
 * recorded as the quantity of interest (HML_QOI).
 *
 *   binomial [--options N] [--batch B] [--seed S] [--spot-range LO:HI] [--quiet]
 *            [--rounds R | --until FILE]
 *
 * --rounds R (or --until FILE: until FILE exists) prices the same options
 * R times, a long-running application for hot swap (bench/guard-loop.sh):
 * the accurate prices are computed once first, and each round prints
 * "binomial: round K rmse E guarded G" (flushed): its RMSE against them
 * and the rows the guard sent to the original code in that round.
 *
 * Built with -DHML_BASELINE it contains no hml call at all: the benchmark
 * measures the cost of hml's off mode against that build.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef HML_BASELINE
#include <hml/hml.h>
#endif

#include "binomial_physics.h"

#ifndef HML_BASELINE
static int fail(const char *what)
{
	fprintf(stderr, "binomial: error: %s: %s\n", what, hml_error_last()->message);
	return 1;
}
#endif

int main(int argc, char **argv)
{
	struct opts o;
	double *S, *X, *T, *vdt, *pu, *pd, *price, *ref = NULL;
	double err_sq = 0.0, err_max = 0.0, sum = 0.0, t0, t1;
	struct timespec ts;
	long i, off, round;
	int rc = 0, looping;
#ifndef HML_BASELINE
	hml_region *region = NULL;
	hml_symbol sym[1];
	hml_array in[5], out[1];
#endif

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

	make_inputs(&o, S, X, T, vdt, pu, pd);

#ifndef HML_BASELINE
	if (hml_region_open(&region, "binomial", NULL) < 0)
		return fail("cannot open region 'binomial'");
	sym[0] = (hml_symbol){ "n", o.batch };
	in[0] = HML_ARRAY_1D(S, HML_F64, o.batch);
	in[1] = HML_ARRAY_1D(X, HML_F64, o.batch);
	in[2] = HML_ARRAY_1D(vdt, HML_F64, o.batch);
	in[3] = HML_ARRAY_1D(pu, HML_F64, o.batch);
	in[4] = HML_ARRAY_1D(pd, HML_F64, o.batch);
	out[0] = HML_ARRAY_1D(price, HML_F64, o.batch);
	if (hml_region_input(region, "[i, 0:5] = ([i], [i], [i], [i], [i])", "0:n",
	                     in, 5, sym, 1) < 0 ||
	    hml_region_output(region, "[i, 0:1] = ([i])", "0:n", out, 1, sym, 1) < 0 ||
	    hml_region_subset_enable(region) < 0) {
		rc = fail("cannot describe region 'binomial'");
		goto done;
	}
#endif

	looping = o.rounds > 1 || o.until;
	if (looping) {   /* the accurate prices, once, to measure each round against */
		if (!(ref = malloc(sizeof(double) * (size_t)o.options))) {
			fprintf(stderr, "binomial: error: out of memory for %ld options\n", o.options);
			return 1;
		}
#pragma omp parallel for schedule(static)
		for (i = 0; i < o.options; i++)
			ref[i] = crr_tree(S[i], X[i], vdt[i], pu[i], pd[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
	for (round = 0;; round++) {
		for (off = 0; off < o.options; off += o.batch) {
			long n = o.options - off < o.batch ? o.options - off : o.batch;
#ifndef HML_BASELINE
			int run = 1;
			/* The maps have the batch's shape: a last, shorter batch runs
			 * outside the region (not collected, never a model call). */
			if (n == o.batch && (run = hml_region_seek(region, off)) == 0)
				run = hml_region_begin(region);
			if (run < 0) {
				rc = fail("region 'binomial' failed");
				goto done;
			}
			if (run)
#endif
			{
				/* The rows the runtime hands the original code: all of
				 * them, or those its guard kept from the model. */
				const int64_t *rows = NULL;
				int64_t k, nrows = n;
#ifndef HML_BASELINE
				if (n == o.batch && hml_region_rows(region, &rows, &nrows) < 0) {
					rc = fail("region 'binomial' failed");
					goto done;
				}
#endif
#pragma omp parallel for schedule(static)
				for (k = 0; k < nrows; k++) {
					long j = off + (long)(rows ? rows[k] : k);
					price[j] = crr_tree(S[j], X[j], vdt[j], pu[j], pd[j]);
				}
			}
#ifndef HML_BASELINE
			if (n == o.batch && hml_region_end(region) < 0) {
				rc = fail("region 'binomial' failed");
				goto done;
			}
#endif
		}
		if (!looping)
			break;
		{
			uint64_t guarded = 0;
			double sq = 0;
#ifndef HML_BASELINE
			static uint64_t guarded_before;
			hml_region_stats st = { 0 };

			if (hml_region_stats_get(region, &st) < 0) {
				rc = fail("region 'binomial' failed");
				goto done;
			}
			guarded = st.guarded_rows - guarded_before;
			guarded_before = st.guarded_rows;
#endif
			for (i = 0; i < o.options; i++)
				sq += (price[i] - ref[i]) * (price[i] - ref[i]);
			printf("binomial: round %ld rmse %.9g guarded %llu\n", round,
			       sqrt(sq / (double)o.options), (unsigned long long)guarded);
			fflush(stdout);
		}
		if (o.until ? access(o.until, F_OK) == 0 : round + 1 >= o.rounds)
			break;
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
#ifndef HML_BASELINE
	if (HML_QOI_WRITE_1D("price", price, HML_F64, o.options) < 0) {
		rc = fail("cannot record the quantity of interest");
		goto done;
	}
#endif
	if (!o.quiet)
		printf("binomial: options %ld, batch %ld, seed %lu, mode %s\n"
		       "binomial: mean price %.6f, rmse vs black-scholes %.3e, max error %.3e\n"
		       "binomial: priced in %.3f s\n",
		       o.options, o.batch, o.seed,
#ifndef HML_BASELINE
		       hml_mode_name(hml_region_mode(region)),
#else
		       "baseline",
#endif
		       sum / (double)o.options, sqrt(err_sq / (double)o.options), err_max,
		       t1 - t0);
#ifndef HML_BASELINE
done:
	if (region && hml_region_flush(region) < 0 && rc == 0)
		rc = fail("cannot write collected data");
	hml_region_free(region);
#endif
	free(S); free(X); free(T); free(vdt); free(pu); free(pd); free(price); free(ref);
	return rc;
}
