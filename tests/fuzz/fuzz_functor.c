/*
 * libFuzzer target: the functor grammar, the domain grammar and the bounds
 * checks of a tensor map. The input is "FUNCTOR\nDOMAIN"; a functor that
 * parses is bound to small double arrays of 1, 2 and 3 dims (with the
 * symbols the documentation uses) and, when a map is made, gathered and
 * scattered: AddressSanitizer then checks that every access the map
 * accepted lies inside its arrays.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hml/tensor.h"

#define NELEM 4096
#define MAXPIECES 8
#define MAXROWS_X_SIZE 200000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void try_bind(const hml_functor *fn, const char *domain, int ndim)
{
	static double store[MAXPIECES][NELEM];
	static const int64_t shapes[3][3] = { { 64, 0, 0 }, { 8, 12, 0 }, { 4, 6, 7 } };
	const hml_symbol syms[] = { { "n", 16 }, { "m", 3 }, { "N", 8 }, { "M", 6 },
	                            { "nx", 4 }, { "nz", 3 }, { "k", 2 } };
	hml_array arrays[MAXPIECES];
	hml_tmap *map = NULL;
	int npieces = hml_functor_npieces(fn);
	double *buf;
	int64_t rows, width;

	if (npieces < 1 || npieces > MAXPIECES)
		return;
	for (int k = 0; k < npieces; k++) {
		memset(&arrays[k], 0, sizeof(arrays[k]));
		arrays[k].name = "a";
		arrays[k].data = store[k];
		arrays[k].dtype = HML_F64;
		arrays[k].ndim = ndim;
		memcpy(arrays[k].shape, shapes[ndim - 1], (size_t)ndim * sizeof(int64_t));
	}
	if (hml_tmap_new(&map, fn, domain, arrays, (size_t)npieces, syms,
	                 sizeof(syms) / sizeof(syms[0])) < 0)
		return;
	rows = hml_tmap_rows(map);
	width = hml_tmap_row_size(map);
	if (rows > 0 && width > 0 && rows <= MAXROWS_X_SIZE / width &&
	    (buf = malloc((size_t)(rows * width) * sizeof(double))) != NULL) {
		hml_tmap_gather(map, buf, HML_F64, 1);
		hml_tmap_scatter(map, buf, HML_F64, 1);
		free(buf);
	}
	hml_tmap_free(map);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *nl;
	const char *domain = NULL;
	hml_functor *fn = NULL;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if ((nl = strchr(text, '\n')) != NULL) {
		*nl = '\0';
		domain = nl + 1;
	}
	if (hml_functor_parse(&fn, text) == 0) {
		for (int ndim = 1; ndim <= 3; ndim++)
			try_bind(fn, domain, ndim);
		hml_functor_free(fn);
	}
	free(text);
	return 0;
}
