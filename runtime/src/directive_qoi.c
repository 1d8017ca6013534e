/*
 * runtime/src/directive_qoi.c - the arrays and the quantities of interest
 * of translated directives (hml/directive.h), and the error line every
 * directive call reports through.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "directive_internal.h"
#include "hml/directive.h"
#include "hml/qoi.h"

int hml__dir_error(int code, const char *where, const char *label, const char *what)
{
	char prev[512];

	if (!what) {
		/* the message is about to be overwritten: copy it first */
		snprintf(prev, sizeof(prev), "%s", hml_error_last()->message);
		what = prev;
		if (!code)
			code = hml_error_last()->code < 0 ? hml_error_last()->code : HML_ERROR;
	}
	return hml__error_set(code ? code : HML_ERROR, "%s: %s%s%s%s", where ? where : "(unknown)",
	                      label ? "region '" : "", label ? label : "", label ? "': " : "", what);
}

int hml_dir_array(hml_array *a, const char *where, const char *name, const void *data,
                  hml_dtype dt, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
	char msg[200];

	if (dt == 0) {
		snprintf(msg, sizeof(msg), "array '%s' is not of float, double, int32_t or int64_t", name);
		return hml__dir_error(HML_EINVALID, where, NULL, msg);
	}
	memset(a, 0, sizeof(*a));
	a->name = name;
	a->data = (void *)data;
	a->dtype = dt;
	a->ndim = ndim;
	a->shape[0] = d0;
	a->shape[1] = d1;
	a->shape[2] = d2;
	a->shape[3] = d3;
	return 0;
}

int hml_dir_qoi(const char *where, const char *name, const void *data, hml_dtype dt, int ndim,
                int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
	const int64_t shape[4] = { d0, d1, d2, d3 };
	char msg[300];

	if (dt == 0) {
		snprintf(msg, sizeof(msg), "quantity of interest '%s': the array is not of float, double, "
		         "int32_t or int64_t", name);
		return hml__dir_error(HML_EINVALID, where, NULL, msg);
	}
	if (hml_qoi_write(name, data, dt, ndim, shape) < 0) {
		snprintf(msg, sizeof(msg), "cannot record the quantity of interest: %s",
		         hml_error_last()->message);
		return hml__dir_error(hml_error_last()->code, where, NULL, msg);
	}
	return 0;
}

/* The offset, in elements, of row i of the slice: its index in each
 * leading dimension, row-major. */
static int64_t slice_row(const int64_t *shape, const int64_t *lo, const int64_t *n, int ndim,
                         int64_t i)
{
	int64_t r = i, off = 0;

	for (int k = ndim - 2; k >= 0; k--) {
		int64_t stride = 1;
		for (int j = k + 1; j < ndim; j++)
			stride *= shape[j];
		off += (lo[k] + r % n[k]) * stride;
		r /= n[k];
	}
	return off + lo[ndim - 1];
}

int hml_dir_qoi_slice(const char *where, const char *name, const void *data, hml_dtype dt,
                      size_t size, int ndim, const int64_t *q)
{
	const int64_t *shape = q, *lo = q + 4, *n = q + 8;
	int64_t rows = 1, i;
	char msg[300], *buf;
	int k, rc;

	if (ndim < 1 || ndim > 4)
		return hml__dir_error(HML_EINVALID, where, NULL, "a slice of 1 to 4 dimensions is expected");
	for (k = 0; k < ndim; k++) {
		if (lo[k] < 0 || n[k] < 0 || (shape[k] != HML_DIR_ROWS && lo[k] + n[k] > shape[k])) {
			snprintf(msg, sizeof(msg), "quantity of interest '%s': the slice %lld:%lld of "
			         "dimension %d is not inside the array's extent %lld", name, (long long)lo[k],
			         (long long)(lo[k] + n[k]), k, (long long)shape[k]);
			return hml__dir_error(HML_ERANGE, where, NULL, msg);
		}
		if (k < ndim - 1)
			rows *= n[k];
	}
	buf = malloc(size * (size_t)(rows * n[ndim - 1]) + 1);
	if (!buf)
		return hml__dir_error(HML_ENOMEM, where, NULL,
		                      "cannot record the quantity of interest: out of memory");
	for (i = 0; i < rows; i++)
		memcpy(buf + (size_t)(i * n[ndim - 1]) * size,
		       (const char *)data + (size_t)slice_row(shape, lo, n, ndim, i) * size,
		       size * (size_t)n[ndim - 1]);
	rc = hml_dir_qoi(where, name, buf, dt, ndim, n[0], n[1], n[2], n[3]);
	free(buf);
	return rc;
}
