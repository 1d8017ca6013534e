/*
 * bench/rows_dir.c - the loop of bench/rows.c annotated with a directive
 * inside its body (HPAC-ML's sections, one row per iteration), built by
 * bench/rows.sh with hml cc: the row call as a translated program makes
 * it, through libhml's directive calls (hml/directive.h). Mode from
 * HML_MODE, model from HML_MODEL.
 *
 * usage: rows_dir ROWS REPEATS   (prints "dir_ns_per_row")
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, i;
	int reps = argc > 2 ? atoi(argv[2]) : 5, rep, k;
	double *x = malloc((size_t)n * 5 * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
	double t, best = 1e30;

	if (!x || !y || n < 1 || reps < 1)
		return 1;
	for (i = 0; i < n * 5; i++)
		x[i] = (double)(i % 97) / 97.0;
	for (rep = 0; rep < reps; rep++) {
		t = now();
		#pragma omp parallel for schedule(static) private(k)
		for (i = 0; i < n; i++) {
#pragma approx ml(infer) in(x[5 * i:5]) out(y[i]) label("dir")
			for (y[i] = 0, k = 0; k < 5; k++)
				y[i] += x[i * 5 + k];
		}
		t = now() - t;
		best = t < best ? t : best;
	}
	printf("%.1f\n", 1e9 * best / (double)n);
	free(x);
	free(y);
	return 0;
}
