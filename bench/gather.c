/*
 * bench/gather - gather and scatter throughput of tensor maps against
 * memcpy of the same bytes, measured in one process.
 *
 *   gather [ROWS] [REPEAT]
 *
 * For each shape (the binomial rows, a 2-D 5-point stencil, a whole field
 * with halos) it prints the best time of REPEAT runs of gather and scatter
 * and of memcpy of the bytes the application side holds, and the ratio
 * memcpy_time / gather_time (1.0 = as fast as memcpy; goal >= 0.5).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hml/hml.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "gather: error: %s: %s\n", what, hml_error_last()->message);
	exit(1);
}

/* Best of `repeat` timings of memcpy, gather and scatter for one map. */
static void measure(const char *name, hml_tmap *map, hml_dtype tdt, size_t app_bytes,
                    int repeat, int threads)
{
	size_t tensor_bytes = (size_t)(hml_tmap_rows(map) * hml_tmap_row_size(map)) *
	                      hml_dtype_size(tdt);
	char *a = malloc(app_bytes), *b = malloc(app_bytes);
	void *t = malloc(tensor_bytes);
	double best_m = 1e30, best_g = 1e30, best_s = 1e30, t0;
	int k;

	if (!a || !b || !t) {
		fprintf(stderr, "gather: error: out of memory\n");
		exit(1);
	}
	memset(a, 1, app_bytes);
	memset(b, 0, app_bytes);
	memset(t, 0, tensor_bytes);
	for (k = 0; k < repeat; k++) {
		t0 = now();
		memcpy(b, a, app_bytes);
		if (now() - t0 < best_m) best_m = now() - t0;
		t0 = now();
		if (hml_tmap_gather(map, t, tdt, threads) < 0) die("gather");
		if (now() - t0 < best_g) best_g = now() - t0;
		t0 = now();
		if (hml_tmap_scatter(map, t, tdt, threads) < 0) die("scatter");
		if (now() - t0 < best_s) best_s = now() - t0;
	}
	printf("%-28s %9.1f MB  memcpy %8.3f ms  gather %8.3f ms (%.2fx)  scatter %8.3f ms (%.2fx)\n",
	       name, (double)app_bytes / 1e6, best_m * 1e3, best_g * 1e3, best_m / best_g,
	       best_s * 1e3, best_m / best_s);
	free(a);
	free(b);
	free(t);
}

static hml_tmap *bind(const char *functor, const char *domain, hml_array *arrays,
                      size_t n, hml_symbol *sym, size_t nsym)
{
	hml_functor *fn;
	hml_tmap *map;

	if (hml_functor_parse(&fn, functor) < 0) die("parse");
	if (hml_tmap_new(&map, fn, domain, arrays, n, sym, nsym) < 0) die("bind");
	hml_functor_free(fn);
	return map;
}

int main(int argc, char **argv)
{
	long rows = argc > 1 ? atol(argv[1]) : 1 << 20;
	int repeat = argc > 2 ? atoi(argv[2]) : 20, threads = 1, k;
	double *cols[5], *grid, *field;
	hml_array arr[5];
	hml_symbol sym[3];
	hml_tmap *map;
	long side, nz, nx;

	if (rows < 1024 || repeat < 1) {
		fprintf(stderr, "gather: error: usage: gather [ROWS >= 1024] [REPEAT >= 1]\n");
		return 2;
	}
	printf("rows %ld, best of %d, %d thread(s); ratio = memcpy time / hml time\n",
	       rows, repeat, threads);

	/* Binomial: five double arrays, one value each per row. */
	for (k = 0; k < 5; k++) {
		cols[k] = calloc((size_t)rows, sizeof(double));
		arr[k] = (hml_array){ "c", cols[k], HML_F64, 1, { rows } };
	}
	sym[0] = (hml_symbol){ "n", rows };
	map = bind("[i, 0:5] = ([i], [i], [i], [i], [i])", "0:n", arr, 5, sym, 1);
	measure("rows 5 x f64 -> f64", map, HML_F64, (size_t)rows * 5 * 8, repeat, threads);
	measure("rows 5 x f64 -> f32", map, HML_F32, (size_t)rows * 5 * 8, repeat, threads);
	hml_tmap_free(map);
	for (k = 0; k < 5; k++)
		free(cols[k]);

	/* 2-D 5-point stencil over the interior of a side x side grid. */
	for (side = 2; (side - 2) * (side - 2) < rows; side++)
		;
	grid = calloc((size_t)(side * side), sizeof(double));
	arr[0] = (hml_array){ "u", grid, HML_F64, 2, { side, side } };
	arr[1] = arr[0];
	arr[2] = arr[0];
	sym[0] = (hml_symbol){ "N", side };
	map = bind("[i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2])", "1:N-1, 1:N-1",
	           arr, 3, sym, 1);
	measure("stencil 5-point f64 -> f64", map, HML_F64,
	        (size_t)((side - 2) * (side - 2)) * 5 * 8, repeat, threads);
	hml_tmap_free(map);
	free(grid);

	/* Whole field [4, nz, nx] inside halos of 2: one sample. */
	nz = 256;
	nx = rows / nz > 8 ? rows / nz : 8;
	field = calloc((size_t)(4 * (nz + 4) * (nx + 4)), sizeof(double));
	arr[0] = (hml_array){ "state", field, HML_F64, 3, { 4, nz + 4, nx + 4 } };
	sym[0] = (hml_symbol){ "nz", nz };
	sym[1] = (hml_symbol){ "nx", nx };
	map = bind("[0:4, 0:nz, 0:nx] = ([0:4, 2:nz+2, 2:nx+2])", NULL, arr, 1, sym, 2);
	measure("whole field f64 -> f64", map, HML_F64, (size_t)(4 * nz * nx) * 8,
	        repeat, threads);
	measure("whole field f64 -> f32", map, HML_F32, (size_t)(4 * nz * nx) * 8,
	        repeat, threads);
	hml_tmap_free(map);
	free(field);
	return 0;
}
