/*
 * runtime/src/qoi.c - hml_qoi_write(): the public face of the QoI file
 * (lib/core/qoi_file.h holds its layout, writer and reader).
 */
#include <stdlib.h>

#include "core/envname.h"
#include "core/rankfile.h"
#include "core/qoi_file.h"
#include "hml/qoi.h"

int hml_qoi_write_to(const char *path, const char *name, const void *data,
                     hml_dtype dtype, int ndim, const int64_t *shape)
{
	return hml__qoi_file_write(path, name, data, dtype, ndim, shape);
}

int hml_qoi_write(const char *name, const void *data, hml_dtype dtype,
                  int ndim, const int64_t *shape)
{
	const char *path = getenv(HML__ENV_QOI);
	char *own = NULL;
	int rc;

	/* Arguments are checked even when nothing is recorded, so that a
	 * mistake shows up in the run that does not record. */
	if ((rc = hml__qoi_check(name, data, dtype, ndim, shape)) < 0)
		return rc;
	if (!path || !*path)
		return 0;
	/* One of several MPI ranks writes its rank's file (core/rankfile.h). */
	if ((rc = hml__rankfile_own(&own, path)) == 0)
		rc = hml__qoi_file_write(own, name, data, dtype, ndim, shape);
	free(own);
	return rc;
}

int hml_qoi_write_steps(const char *name, const int64_t *steps, const void *data,
                        hml_dtype dtype, int ndim, const int64_t *shape)
{
	const char *path = getenv(HML__ENV_QOI);
	int rc;

	if ((rc = hml__qoi_check(name, data, dtype, ndim, shape)) < 0 ||
	    (rc = hml__qoi_check_steps(name, steps, ndim, shape)) < 0)
		return rc;
	if (!path || !*path)
		return 0;
	return hml__qoi_file_write_steps(path, name, steps, data, dtype, ndim, shape);
}
