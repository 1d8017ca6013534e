/*
 * bench/collect_rank.c - what collection costs one process: CALLS calls of
 * a region of N rows (5 doubles in, 1 out) in collect mode, timed from the
 * first begin to the region's free (the last flush included). Run under
 * mpirun by bench/mpi.sh: each rank then writes its own file (HML_DB with
 * its rank, hml-runtime(3)) and prints its own time.
 *
 *   bench_collect_rank [N] [CALLS]      (HML_MODE=collect HML_DB=... in the environment)
 *
 * Prints "collect_seconds S rows R cpu_seconds C": wall time, and the
 * process's CPU time (user + system, the writes into the page cache
 * included), which ranks sharing fewer cores than they are do not inflate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <hml/hml.h>

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 16384, calls = argc > 2 ? atoll(argv[2]) : 64;
	double *x, *y, t0, c0;
	hml_region *r;

	if (n < 1 || calls < 1 || !(x = malloc((size_t)n * 5 * sizeof(*x))) ||
	    !(y = malloc((size_t)n * sizeof(*y))))
		return 1;
	hml_array ax = HML_ARRAY_2D(x, HML_F64, n, 5), ay = HML_ARRAY_1D(y, HML_F64, n);
	hml_symbol s = { "N", n };

	if (hml_region_open(&r, "bench", NULL) < 0 ||
	    hml_region_input(r, "[i, 0:5] = ([i, 0:5])", "0:N", &ax, 1, &s, 1) < 0 ||
	    hml_region_output(r, "[i, 0:1] = ([i])", "0:N", &ay, 1, &s, 1) < 0) {
		fprintf(stderr, "bench_collect_rank: %s\n", hml_error_last()->message);
		return 1;
	}
	t0 = clock_s(CLOCK_MONOTONIC);
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	for (int64_t c = 0; c < calls; c++) {
		if (hml_region_begin(r))
			for (int64_t i = 0; i < n; i++) {
				for (int k = 0; k < 5; k++)
					x[i * 5 + k] = (double)(c + i + k);
				y[i] = x[i * 5] * 0.5;
			}
		hml_region_end(r);
	}
	hml_region_free(r);
	printf("collect_seconds %.6f rows %lld cpu_seconds %.6f\n", clock_s(CLOCK_MONOTONIC) - t0,
	       (long long)(n * calls), clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
	free(x);
	free(y);
	return 0;
}
