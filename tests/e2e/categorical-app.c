/*
 * tests/e2e/categorical-app.c - the synthetic application of
 * 127-categorical.bats: rows (x, c) with c a class 0..7 and
 * y = a[c] x + b[c], the coefficients in shuffled order (y is not monotone
 * in c). --class V gives every row class V instead (out-of-range classes);
 * --out FILE writes the outputs, one per line.
 * usage: categorical-app [--rows N] [--seed S] [--class V] [--out FILE]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hml/hml.h>

static const double A[8] = { 3, -2, 0.5, -4, 1, 2.5, -1, 4 };
static const double B[8] = { 1, -3, 2, 0, -2, 3, -1, 0.5 };

static double next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
	long rows = 4096, seed = 1;
	double fixed = -1;
	int have_fixed = 0;
	const char *out = NULL;
	hml_region *r = NULL;
	hml_symbol sym[1];
	hml_array in[2], o[1];
	double *x, *c, *y;
	uint64_t s;
	int rc = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--rows"))
			rows = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--seed"))
			seed = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--class"))
			fixed = atof(argv[i + 1]), have_fixed = 1;
		else if (!strcmp(argv[i], "--out"))
			out = argv[i + 1];
	}
	x = malloc(sizeof(double) * (size_t)rows);
	c = malloc(sizeof(double) * (size_t)rows);
	y = malloc(sizeof(double) * (size_t)rows);
	if (!x || !c || !y)
		return 1;
	s = (uint64_t)seed * 2654435761u + 1;
	for (long i = 0; i < rows; i++) {
		x[i] = 2 * next(&s) - 1;
		c[i] = have_fixed ? fixed : (double)(int)(8 * next(&s));
	}
	sym[0] = (hml_symbol){ "n", rows };
	in[0] = HML_ARRAY_1D(x, HML_F64, rows);
	in[1] = HML_ARRAY_1D(c, HML_F64, rows);
	o[0] = HML_ARRAY_1D(y, HML_F64, rows);
	if (hml_region_open(&r, "lookup", NULL) < 0 ||
	    hml_region_input(r, "[i, 0:2] = ([i], [i])", "0:n", in, 2, sym, 1) < 0 ||
	    hml_region_output(r, "[i, 0:1] = ([i])", "0:n", o, 1, sym, 1) < 0) {
		fprintf(stderr, "categorical-app: %s\n", hml_error_last()->message);
		return 1;
	}
	if ((rc = hml_region_begin(r)) > 0) {
		for (long i = 0; i < rows; i++) {
			int k = (int)c[i] & 7;

			y[i] = A[k] * x[i] + B[k];
		}
	}
	if (rc < 0 || hml_region_end(r) < 0 || hml_region_flush(r) < 0) {
		fprintf(stderr, "categorical-app: %s\n", hml_error_last()->message);
		return 1;
	}
	if (out) {
		FILE *f = fopen(out, "w");

		for (long i = 0; f && i < rows; i++)
			fprintf(f, "%.9g\n", y[i]);
		if (!f || fclose(f) != 0)
			return 1;
	}
	hml_region_free(r);
	free(x);
	free(c);
	free(y);
	return 0;
}
