/*
 * libFuzzer target: the search-space parser (lib/search/opt/space.c). The input is a
 * JSON document: a space, or an object with a "search_space" member (a
 * model family's file). A space that parses is then used the way the
 * optimiser uses it: points of the unit cube (all 0, all 1, a ramp, and
 * coordinates taken from the input bytes) are projected, decoded to a
 * sample and encoded back, which must succeed and give the projected point
 * again (hml-workflow(5): encode(decode(u)) == u).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "search/opt/space.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const hml__space *s, double *u, double *v, size_t dim)
{
	json_t *sample = NULL;

	hml__space_project(s, u);
	if (hml__space_decode(&sample, s, u) != 0)
		return;   /* out of memory */
	if (hml__space_encode(v, s, sample) != 0)
		abort();
	for (size_t i = 0; i < dim; i++)
		if (!(fabs(u[i] - v[i]) <= 1e-9))
			abort();
	json_decref(sample);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t err;
	json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &err), *spec;
	hml__space *s = NULL;
	double *u, *v;
	size_t dim, i, k;

	if (!doc)
		return 0;
	spec = json_object_get(doc, "search_space");
	if (!json_is_object(spec))
		spec = doc;
	if (hml__space_parse(&s, spec, "fuzz") == 0) {
		dim = hml__space_dim(s);
		u = calloc(dim + 1, sizeof(double));
		v = calloc(dim + 1, sizeof(double));
		for (k = 0; u && v && k < 4; k++) {
			for (i = 0; i < dim; i++)
				u[i] = k == 0 ? 0.0 : k == 1 ? 1.0 : k == 2 ? (double)i / (double)(dim + 1)
				     : (double)data[(i * 7 + 3) % size] / 255.0;
			round_trip(s, u, v, dim);
		}
		for (i = 0; i < hml__space_count(s); i++)
			if (!hml__space_name(s, i))
				abort();
		free(u);
		free(v);
		hml__space_free(s);
	}
	json_decref(doc);
	return 0;
}
