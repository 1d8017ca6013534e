/*
 * lib/core/qoi_check.c - hml__qoi_check() (qoi_file.h): the arguments of a
 * quantity of interest, checked apart from the HDF5 writer so that libhml
 * checks them in every run without loading HDF5 (the runtime's h5io.h).
 */
#include <string.h>

#include "core/error.h"
#include "core/qoi_file.h"
#include "core/util.h"

int hml__qoi_check(const char *name, const void *data, hml_dtype dtype,
                   int ndim, const int64_t *shape)
{
	uint64_t count = 1, limit;
	char text[256];
	int d;

	if (!name || !*name)
		return hml__error_set(HML_EINVALID, "quantity of interest has no name");
	if (strchr(name, '/') || strcmp(name, ".") == 0)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': the name cannot contain '/'", name);
	if (!data)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': data is NULL", name);
	if (dtype != HML_F32 && dtype != HML_F64 && dtype != HML_I32 && dtype != HML_I64)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': dtype %d is not float32, float64, int32 or int64",
			name, (int)dtype);
	if (ndim < 1 || ndim > HML_MAX_DIMS)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': %d dims (1 to %d allowed)",
			name, ndim, HML_MAX_DIMS);
	if (!shape)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': shape is NULL", name);
	/* The byte count must fit in a signed 64-bit size: beyond it HDF5
	 * wraps the element count and the file would claim absurd dims. */
	limit = (uint64_t)INT64_MAX / hml_dtype_size(dtype);
	for (d = 0; d < ndim; d++) {
		if (shape[d] <= 0)
			return hml__error_set(HML_EINVALID,
				"quantity of interest '%s': dim %d is %lld", name, d,
				(long long)shape[d]);
		if ((uint64_t)shape[d] > limit / count) {
			hml__format_shape(text, sizeof(text), shape, ndim);
			return hml__error_set(HML_EINVALID,
				"quantity of interest '%s': shape %s has too many elements",
				name, text);
		}
		count *= (uint64_t)shape[d];
	}
	return 0;
}

int hml__qoi_check_steps(const char *name, const int64_t *steps, int ndim,
                         const int64_t *shape)
{
	if (!steps)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': steps is NULL", name ? name : "");
	if (ndim < 1 || !shape || shape[0] <= 0)
		return 0;   /* hml__qoi_check() names the problem */
	for (int64_t r = 0; r < shape[0]; r++) {
		if (steps[r] < 0)
			return hml__error_set(HML_EINVALID,
				"quantity of interest '%s': step %lld of record %lld is negative",
				name, (long long)steps[r], (long long)r);
		if (r > 0 && steps[r] <= steps[r - 1])
			return hml__error_set(HML_EINVALID,
				"quantity of interest '%s': step %lld of record %lld does not follow "
				"step %lld", name, (long long)steps[r], (long long)r,
				(long long)steps[r - 1]);
	}
	return 0;
}
