/*
 * bench/rows.c - a region inside a loop body (row calls, one per
 * iteration) against the same rows as one batch call, in the mode of
 * HML_MODE (off, collect, infer). 5 float64 inputs, 1 output per row.
 * Row calls both ways: maps bound over the loop's domain
 * (hml_region_row_begin) and one-row maps given each iteration's addresses
 * (hml_region_row_begin_at, what a directive in a loop body becomes);
 * and, on one thread, a batch call per row with the maps re-pointed each
 * call (what such a directive was translated to before row calls).
 *
 * usage: bench_rows ROWS REPEATS
 * prints "batch_ns_per_row row_ns_per_row at_ns_per_row call_ns_per_row"
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

/* Over the whole domain (n > 0), or one row at x and y (n == 0). */
static hml_region *open_region(const char *label, double *x, double *y, int64_t n)
{
	hml_array ax = HML_ARRAY_2D(x, HML_F64, n ? n : 1, 5), ay = HML_ARRAY_1D(y, HML_F64, n ? n : 1);
	hml_symbol s = { "N", n };
	hml_region *r;

	if (n == 0) {
		ax = HML_ARRAY_1D(x, HML_F64, 5);
		ay = HML_ARRAY_1D(y, HML_F64, 1);
	}
	if (hml_region_open(&r, label, NULL) < 0 ||
	    hml_region_input(r, n ? "[i, 0:5] = ([i, 0:5])" : "[0:5] = ([0:5])", n ? "0:N" : NULL,
	                     &ax, 1, &s, n ? 1 : 0) < 0 ||
	    hml_region_output(r, n ? "[i, 0:1] = ([i])" : "[0:1] = ([0:1])", n ? "0:N" : NULL,
	                      &ay, 1, &s, n ? 1 : 0) < 0) {
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
	double t, batch = 1e30, row = 1e30, at = 1e30, call = 1e30;
	hml_region *rb, *rr, *ra, *rc;
	hml_tmap *ci, *co;

	if (!x || !y || n < 1 || reps < 1)
		return 1;
	for (i = 0; i < n * 5; i++)
		x[i] = (double)(i % 97) / 97.0;
	rb = open_region("batch", x, y, n);
	rr = open_region("rows", x, y, n);
	ra = open_region("at", x, y, 0);
	rc = open_region("call", x, y, 0);
	ci = hml_region_input_map(rc, 0);
	co = hml_region_output_map(rc, 0);
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

		t = now();
		#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++) {
			const void *a[2] = { x + i * 5, y + i };

			if (hml_region_row_begin_at(ra, a, 2, 0))
				for (y[i] = 0, k = 0; k < 5; k++)
					y[i] += x[i * 5 + k];
			hml_region_row_end(ra);
		}
		hml_region_flush(ra);
		t = now() - t;
		at = t < at ? t : at;

		t = now();
		for (i = 0; i < n; i++) {
			hml_tmap_set_data(ci, 0, x + i * 5);
			hml_tmap_set_data(co, 0, y + i);
			if (hml_region_begin(rc))
				for (y[i] = 0, k = 0; k < 5; k++)
					y[i] += x[i * 5 + k];
			hml_region_end(rc);
		}
		hml_region_flush(rc);
		t = now() - t;
		call = t < call ? t : call;
	}
	printf("%.1f %.1f %.1f %.1f\n", 1e9 * batch / (double)n, 1e9 * row / (double)n,
	       1e9 * at / (double)n, 1e9 * call / (double)n);
	hml_region_free(rb);
	hml_region_free(rr);
	hml_region_free(ra);
	hml_region_free(rc);
	free(x);
	free(y);
	return 0;
}
