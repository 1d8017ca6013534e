/*
 * lib/core/qoi_file.c - the QoI file, written by the runtime (hml_qoi_write)
 * and read by hml evaluate. The argument check, which needs no HDF5, is
 * in qoi_check.c.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/h5util.h"
#include "core/qoi_file.h"
#include "core/rankfile.h"
#include "core/util.h"
#include "hml/version.h"

/* The element type in memory and in the file. Integer QoIs (counts, cell
 * indices, dates) are kept as integers; the reader converts every type to
 * double. hml__h5_type() knows the collected data's float types only. */
static void qoi_types(hml_dtype dtype, hid_t *mem, hid_t *file)
{
	switch (dtype) {
	case HML_F32: *mem = H5T_NATIVE_FLOAT; *file = H5T_IEEE_F32LE; break;
	case HML_I32: *mem = H5T_NATIVE_INT32; *file = H5T_STD_I32LE; break;
	case HML_I64: *mem = H5T_NATIVE_INT64; *file = H5T_STD_I64LE; break;
	default: *mem = H5T_NATIVE_DOUBLE; *file = H5T_IEEE_F64LE; break;
	}
}

/* The steps of a QoI over time, a 1-D int64 attribute of the dataset. */
static int steps_write(hid_t dset, const int64_t *steps, int64_t n)
{
	hsize_t dim = (hsize_t)n;
	hid_t sp = H5Screate_simple(1, &dim, NULL), a = H5I_INVALID_HID;
	int rc = 0;

	if (sp < 0 || (a = H5Acreate2(dset, HML__QOI_STEPS_ATTR, H5T_STD_I64LE, sp,
	                              H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
	    H5Awrite(a, H5T_NATIVE_INT64, steps) < 0)
		rc = hml__h5_error(HML_EIO, "cannot write attribute '%s'", HML__QOI_STEPS_ATTR);
	if (a >= 0)
		H5Aclose(a);
	if (sp >= 0)
		H5Sclose(sp);
	return rc;
}

/* hml__qoi_file_write(), with steps[shape[0]] when the QoI is over time. */
static int write_qoi(const char *path, const char *name, const int64_t *steps,
                     const void *data, hml_dtype dtype, int ndim, const int64_t *shape)
{
	hsize_t dims[HML_MAX_DIMS];
	hid_t file = H5I_INVALID_HID, space = H5I_INVALID_HID, dset = H5I_INVALID_HID;
	hid_t mem_type, file_type;
	htri_t exists;
	int rc, d;

	if ((rc = hml__qoi_check(name, data, dtype, ndim, shape)) < 0)
		return rc;
	if (!path || !*path)
		return hml__error_set(HML_EINVALID,
			"quantity of interest '%s': no file name", name);
	hml__h5_init();
	qoi_types(dtype, &mem_type, &file_type);
	for (d = 0; d < ndim; d++)
		dims[d] = (hsize_t)shape[d];
	if ((rc = hml__path_replaceable(path)) < 0 || (rc = hml__h5_open_rw(&file, path)) < 0)
		goto done;
	if ((exists = H5Lexists(file, name, H5P_DEFAULT)) < 0 ||
	    (exists && H5Ldelete(file, name, H5P_DEFAULT) < 0)) {
		rc = hml__h5_error(HML_EIO, "cannot replace '%s' in '%s'", name, path);
		goto done;
	}
	if ((space = H5Screate_simple(ndim, dims, NULL)) < 0 ||
	    (dset = H5Dcreate2(file, name, file_type, space, H5P_DEFAULT,
	                       H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
	    H5Dwrite(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write '%s' to '%s'", name, path);
		goto done;
	}
	rc = hml__h5_attr_set_str(dset, "hml_version", hml_version());
	if (rc == 0 && steps)
		rc = steps_write(dset, steps, shape[0]);
done:
	if (dset >= 0)
		H5Dclose(dset);
	if (space >= 0)
		H5Sclose(space);
	if (file >= 0 && H5Fclose(file) < 0 && rc == 0)
		rc = hml__h5_error(HML_EIO, "cannot write '%s'", path);
	return rc;
}

int hml__qoi_file_write(const char *path, const char *name, const void *data,
                        hml_dtype dtype, int ndim, const int64_t *shape)
{
	return write_qoi(path, name, NULL, data, dtype, ndim, shape);
}

int hml__qoi_file_write_steps(const char *path, const char *name, const int64_t *steps,
                              const void *data, hml_dtype dtype, int ndim,
                              const int64_t *shape)
{
	int rc;

	if ((rc = hml__qoi_check(name, data, dtype, ndim, shape)) < 0 ||
	    (rc = hml__qoi_check_steps(name, steps, ndim, shape)) < 0)
		return rc;
	return write_qoi(path, name, steps, data, dtype, ndim, shape);
}

/* The QoI file `path` and its dataset `name`, opened for reading into *f
 * and *d (close both, *d when >= 0, in either case; *f is < 0 only when
 * the file did not open). HML_ENOTFOUND when the application wrote no
 * such QoI; HML_EIO when it cannot be opened. */
static int open_qoi(const char *path, const char *name, hid_t *f, hid_t *d)
{
	int rc;

	*f = *d = H5I_INVALID_HID;
	hml__h5_init();
	if ((rc = hml__h5_open_ro(f, path)) < 0)
		return rc;
	if (H5Lexists(*f, name, H5P_DEFAULT) <= 0)
		return hml__error_set(HML_ENOTFOUND,
			"the application wrote no quantity of interest '%s' to '%s'", name, path);
	if ((*d = H5Dopen2(*f, name, H5P_DEFAULT)) < 0)
		return hml__h5_error(HML_EIO, "cannot read '%s' in '%s'", name, path);
	return 0;
}

int hml__qoi_file_read(const char *path, const char *name, double **out, size_t *n)
{
	hid_t f, d, sp = H5I_INVALID_HID;
	hssize_t count;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = open_qoi(path, name, &f, &d)) < 0) {
		if (f < 0)
			return rc;
		goto done;
	}
	if ((sp = H5Dget_space(d)) < 0 || (count = H5Sget_simple_extent_npoints(sp)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s' in '%s'", name, path);
		goto done;
	}
	if (!(*out = malloc((size_t)(count ? count : 1) * sizeof(double)))) {
		rc = hml__error_oom();
		goto done;
	}
	if (count && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s' in '%s'", name, path);
		free(*out);
		*out = NULL;
		goto done;
	}
	*n = (size_t)count;
done:
	if (sp >= 0)
		H5Sclose(sp);
	if (d >= 0)
		H5Dclose(d);
	H5Fclose(f);
	return rc;
}

int hml__qoi_file_read_ranks(const char *path, int ranks, const char *name, double **out,
                             size_t *n)
{
	double *all = NULL, *v = NULL, *grown;
	size_t total = 0, nv;
	char *own = NULL;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (ranks <= 1)
		return hml__qoi_file_read(path, name, out, n);
	for (int k = 0; k < ranks && rc == 0; k++) {
		if ((rc = hml__rankfile_path(&own, path, k)) < 0)
			break;
		if (access(own, F_OK) != 0)
			rc = hml__error_set(HML_ENOTFOUND, "rank %d of %d wrote no QoI file ('%s' "
			                    "is missing)", k, ranks, own);
		else if ((rc = hml__qoi_file_read(own, name, &v, &nv)) == 0) {
			if (!(grown = realloc(all, (total + nv + 1) * sizeof(*all)))) {
				rc = hml__error_oom();
			} else {
				all = grown;
				if (nv)
					memcpy(all + total, v, nv * sizeof(*v));
				total += nv;
			}
			free(v);
			v = NULL;
		}
		free(own);
		own = NULL;
	}
	if (rc < 0) {
		free(all);
		return rc;
	}
	*out = all;
	*n = total;
	return 0;
}

/* The attribute's values when it is a 1-D integer array of the dataset's
 * first dimension. */
static int steps_read(hid_t d, const char *path, const char *name, int64_t **steps,
                      size_t *n)
{
	hid_t a = H5I_INVALID_HID, asp = H5I_INVALID_HID, dsp = H5I_INVALID_HID;
	hid_t type = H5I_INVALID_HID;
	hsize_t adim = 0, ddim[HML_MAX_DIMS];
	int rc = 0;

	if ((a = H5Aopen(d, HML__QOI_STEPS_ATTR, H5P_DEFAULT)) < 0 ||
	    (asp = H5Aget_space(a)) < 0 || (dsp = H5Dget_space(d)) < 0 ||
	    (type = H5Aget_type(a)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read attribute '%s' of '%s' in '%s'",
		                   HML__QOI_STEPS_ATTR, name, path);
		goto done;
	}
	if (H5Tget_class(type) != H5T_INTEGER || H5Sget_simple_extent_ndims(asp) != 1 ||
	    H5Sget_simple_extent_ndims(dsp) < 1 ||
	    H5Sget_simple_extent_ndims(dsp) > HML_MAX_DIMS ||
	    H5Sget_simple_extent_dims(asp, &adim, NULL) < 0 ||
	    H5Sget_simple_extent_dims(dsp, ddim, NULL) < 0 || adim != ddim[0] || adim == 0) {
		rc = hml__error_set(HML_EIO, "quantity of interest '%s' in '%s': attribute '%s' "
		                    "does not match its first dimension", name, path,
		                    HML__QOI_STEPS_ATTR);
		goto done;
	}
	if (!(*steps = malloc((size_t)adim * sizeof(**steps)))) {
		rc = hml__error_oom();
		goto done;
	}
	if (H5Aread(a, H5T_NATIVE_INT64, *steps) < 0) {
		free(*steps);
		*steps = NULL;
		rc = hml__h5_error(HML_EIO, "cannot read attribute '%s' of '%s' in '%s'",
		                   HML__QOI_STEPS_ATTR, name, path);
		goto done;
	}
	*n = (size_t)adim;
done:
	if (type >= 0)
		H5Tclose(type);
	if (dsp >= 0)
		H5Sclose(dsp);
	if (asp >= 0)
		H5Sclose(asp);
	if (a >= 0)
		H5Aclose(a);
	return rc;
}

int hml__qoi_file_read_steps(const char *path, const char *name, int64_t **steps, size_t *n)
{
	hid_t f, d;
	htri_t has;
	int rc;

	*steps = NULL;
	*n = 0;
	if ((rc = open_qoi(path, name, &f, &d)) < 0) {
		if (f < 0)
			return rc;
		goto done;
	}
	if ((has = H5Aexists(d, HML__QOI_STEPS_ATTR)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s' in '%s'", name, path);
		goto done;
	}
	if (has)
		rc = steps_read(d, path, name, steps, n);
done:
	if (d >= 0)
		H5Dclose(d);
	H5Fclose(f);
	return rc;
}
