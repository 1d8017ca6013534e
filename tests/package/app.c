/* An outside application built against an installed hml: a region that
 * doubles an array, run in off mode, checked by value. */
#include <stdio.h>

#include <hml/hml.h>

int main(void)
{
	double x[8], y[8];
	hml_array in = HML_ARRAY_1D(x, HML_F64, 8), out = HML_ARRAY_1D(y, HML_F64, 8);
	hml_region *r;
	int i;

	for (i = 0; i < 8; i++)
		x[i] = i;
	if (hml_region_open(&r, "double", NULL) < 0 ||
	    hml_region_input(r, "[i, 0:1] = ([i])", "0:8", &in, 1, NULL, 0) < 0 ||
	    hml_region_output(r, "[i, 0:1] = ([i])", "0:8", &out, 1, NULL, 0) < 0) {
		fprintf(stderr, "app: error: %s\n", hml_error_last()->message);
		return 1;
	}
	if (hml_region_begin(r))
		for (i = 0; i < 8; i++)
			y[i] = 2 * x[i];
	hml_region_end(r);
	hml_region_free(r);
	printf("hml %s: y[7] = %g\n", hml_version(), y[7]);
	return y[7] == 14.0 ? 0 : 1;
}
