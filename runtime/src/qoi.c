#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "h5util.h"
#include "hml/qoi.h"
#include "hml/version.h"

static int check_args(const char *name, const void *data, hml_dtype dtype,
                      int ndim, const int64_t *shape)
{
	int d;

	if (!name || !*name)
		return hml__error_set(HML_EINVALID, "quantity of interest has no name");
	if (strchr(name, '/') || strcmp(name, ".") == 0)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': the name cannot contain '/'", name);
	if (!data)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': data is NULL", name);
	if (dtype != HML_F32 && dtype != HML_F64)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': dtype %d is not float32 or float64", name,
			(int)dtype);
	if (ndim < 1 || ndim > HML_MAX_DIMS)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': %d dims (1 to %d allowed)",
			name, ndim, HML_MAX_DIMS);
	if (!shape)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': shape is NULL", name);
	for (d = 0; d < ndim; d++)
		if (shape[d] <= 0)
			return hml__error_set(HML_EINVALID,
				"quantity of interest '%s': dim %d is %lld", name, d,
				(long long)shape[d]);
	return 0;
}

static int write_qoi(const char *path, const char *name, const void *data,
                     hml_dtype dtype, int ndim, const int64_t *shape)
{
	hsize_t dims[HML_MAX_DIMS];
	hid_t file = H5I_INVALID_HID, space = H5I_INVALID_HID, dset = H5I_INVALID_HID;
	hid_t file_type = dtype == HML_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
	htri_t exists;
	int rc, d;

	for (d = 0; d < ndim; d++)
		dims[d] = (hsize_t)shape[d];
	if ((rc = hml__h5_open_rw(&file, path)) < 0)
		goto done;
	if ((exists = H5Lexists(file, name, H5P_DEFAULT)) < 0 ||
	    (exists && H5Ldelete(file, name, H5P_DEFAULT) < 0)) {
		rc = hml__h5_error(HML_EIO, "cannot replace '%s' in '%s'", name, path);
		goto done;
	}
	if ((space = H5Screate_simple(ndim, dims, NULL)) < 0 ||
	    (dset = H5Dcreate2(file, name, file_type, space, H5P_DEFAULT,
	                       H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
	    H5Dwrite(dset, hml__h5_type(dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT,
	             data) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write '%s' to '%s'", name, path);
		goto done;
	}
	rc = hml__h5_attr_set_str(dset, "hml_version", hml_version());
done:
	if (dset >= 0)
		H5Dclose(dset);
	if (space >= 0)
		H5Sclose(space);
	if (file >= 0 && H5Fclose(file) < 0 && rc == 0)
		rc = hml__h5_error(HML_EIO, "cannot write '%s'", path);
	return rc;
}

int hml_qoi_write_to(const char *path, const char *name, const void *data,
                     hml_dtype dtype, int ndim, const int64_t *shape)
{
	int rc;

	if ((rc = check_args(name, data, dtype, ndim, shape)) < 0)
		return rc;
	if (!path || !*path)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': no file name", name);
	hml__h5_init();
	return write_qoi(path, name, data, dtype, ndim, shape);
}

int hml_qoi_write(const char *name, const void *data, hml_dtype dtype,
                  int ndim, const int64_t *shape)
{
	const char *path = getenv("HML_QOI");
	int rc;

	/* Arguments are checked even when nothing is recorded, so that a
	 * mistake shows up in the run that does not record. */
	if ((rc = check_args(name, data, dtype, ndim, shape)) < 0)
		return rc;
	if (!path || !*path)
		return 0;
	return hml_qoi_write_to(path, name, data, dtype, ndim, shape);
}
