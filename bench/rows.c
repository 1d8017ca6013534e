/*
 * bench/rows.c - a region inside a loop body (row calls, one per
 * iteration) against the same rows as one batch call, in the mode of
 * HML_MODE (off, collect, infer). 5 float64 inputs, 1 output per row.
 *
 * usage: bench_rows ROWS REPEATS   (prints "batch_ns_per_row row_ns_per_row")
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <hml/hml.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static hml_region *open_region(const char *label, double *x, double *y, int64_t n)
{
	hml_array ax = HML_ARRAY_2D(x, HML_F64, n, 5), ay = HML_ARRAY_1D(y, HML_F64, n);
	hml_symbol s = { "N", n };
	hml_region *r;

	if (hml_region_open(&r, label, NULL) < 0 ||
	    hml_region_input(r, "[i, 0:5] = ([i, 0:5])", "0:N", &ax, 1, &s, 1) < 0 ||
	    hml_region_output(r, "[i, 0:1] = ([i])", "0:N", &ay, 1, &s, 1) < 0) {
		fprintf(stderr, "bench_rows: %s\n", hml_error_last()->message);
		exit(1);
	}
	return r;
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 100000, i, k;
	int reps = argc > 2 ? atoi(argv[2]) : 5, rep;
	double *x = malloc((size_t)n * 5 * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
	double t, batch = 1e30, row = 1e30;
	hml_region *rb, *rr;

	if (!x || !y || n < 1 || reps < 1)
		return 1;
	for (i = 0; i < n * 5; i++)
		x[i] = (double)(i % 97) / 97.0;
	rb = open_region("batch", x, y, n);
	rr = open_region("rows", x, y, n);
	for (rep = 0; rep < reps; rep++) {
		t = now();
		if (hml_region_begin(rb))
			for (i = 0; i < n; i++)
				for (y[i] = 0, k = 0; k < 5; k++)
					y[i] += x[i * 5 + k];
		hml_region_end(rb);
		hml_region_flush(rb);
		t = now() - t;
		batch = t < batch ? t : batch;

		t = now();
		#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++) {
			if (hml_region_row_begin(rr, i))
				for (y[i] = 0, k = 0; k < 5; k++)
					y[i] += x[i * 5 + k];
			hml_region_row_end(rr);
		}
		hml_region_flush(rr);
		t = now() - t;
		row = t < row ? t : row;
	}
	printf("%.1f %.1f\n", 1e9 * batch / (double)n, 1e9 * row / (double)n);
	hml_region_free(rb);
	hml_region_free(rr);
	free(x);
	free(y);
	return 0;
}
