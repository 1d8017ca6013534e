/*
 * tests/unit/reference.h - reference tensors written by
 * tests/python/make_models.py: a first line "NDIM D0 D1 ...", then one value
 * per line. Shared by the tests that compare hml with Python.
 */
#ifndef HML_TEST_REFERENCE_H
#define HML_TEST_REFERENCE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hml/common.h"

typedef struct {
	int ndim;
	int64_t shape[HML_MAX_DIMS + 1];
	size_t n;
	double *v;   /* yours to free */
} ref;

/* Read `path` into *r; -1 (with a line on stderr) if missing or malformed. */
static inline int ref_read_path(ref *r, const char *path)
{
	FILE *f = fopen(path, "r");
	long long d;
	size_t i;
	int k;

	memset(r, 0, sizeof(*r));
	if (!f) {
		fprintf(stderr, "cannot open reference '%s'\n", path);
		return -1;
	}
	if (fscanf(f, "%d", &r->ndim) != 1 || r->ndim < 0 || r->ndim > HML_MAX_DIMS + 1)
		goto bad;
	r->n = 1;
	for (k = 0; k < r->ndim; k++) {
		if (fscanf(f, "%lld", &d) != 1 || d < 0)
			goto bad;
		r->shape[k] = d;
		r->n *= (size_t)d;
	}
	if (!(r->v = malloc((r->n ? r->n : 1) * sizeof(double))))
		goto bad;
	for (i = 0; i < r->n; i++)
		if (fscanf(f, "%lf", &r->v[i]) != 1)
			goto bad;
	fclose(f);
	return 0;
bad:
	fprintf(stderr, "bad reference file '%s'\n", path);
	fclose(f);
	free(r->v);
	r->v = NULL;
	return -1;
}

#endif
