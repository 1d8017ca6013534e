/*
 * cmd/probe.c - hml-probe: a process that loads a model as an application
 * does (the runtime's own loader: the libtorch plugin for TorchScript, the
 * compiled-model loader for a .so) and runs one row of zeros through it,
 * and nothing else. lib/deploy/latency_measure.c times it against the same
 * process given no model, to learn what each deployment form adds to an
 * application's start-up (libtorch: ~0.4 s here; a compiled model: a few
 * milliseconds). Not linked with libtorch, jansson or HDF5; not meant to
 * be run by hand.
 *
 *   hml-probe MODEL|- D1[xD2...]     the input's per-row shape, e.g. 5 or 1x64x64
 *
 * Exit 0, or 1 with the error on stderr; "-" loads nothing (the baseline).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "loader/loader.h"

/* "5" or "1x64x64" into shape[1..]; the number of dims, or -1. */
static int parse_shape(const char *s, int64_t *shape, int max)
{
	int n = 0;

	while (*s) {
		char *end;
		long long v = strtoll(s, &end, 10);

		if (end == s || v < 1 || v > (1LL << 24) || n == max || (*end && *end != 'x'))
			return -1;
		shape[n++] = v;
		s = *end ? end + 1 : end;
	}
	return n;
}

int main(int argc, char **argv)
{
	int64_t shape[HML_MAX_DIMS + 1];
	int64_t features = 1;
	hml__model *m = NULL;
	float *x;
	int nd, rc;

	if (argc != 3 || (nd = parse_shape(argv[2], shape + 1, HML_MAX_DIMS)) < 1) {
		fprintf(stderr, "usage: hml-probe MODEL|- D1[xD2...]\n");
		return 2;
	}
	if (strcmp(argv[1], "-") == 0)
		return 0;
	shape[0] = 1;
	for (int i = 1; i <= nd; i++)
		features *= shape[i];
	if (features > (1 << 24) || !(x = calloc((size_t)features, sizeof(float)))) {
		fprintf(stderr, "hml-probe: %lld features are too many\n", (long long)features);
		return 1;
	}
	rc = hml__model_load_on(&m, argv[1], 1, "cpu");   /* the card describes the CPU */
	if (rc == 0)
		rc = hml__model_forward(m, x, HML_F32, nd + 1, shape);
	if (rc < 0)
		fprintf(stderr, "hml-probe: %s\n", hml_error_last()->message);
	hml__model_free(m);
	free(x);
	return rc < 0;
}
