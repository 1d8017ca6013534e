/*
 * tests/unit/qoi.c - hml_qoi_write(): into the file HML_QOI names, or
 * nowhere; replacing a data set; bad arguments; files it must not touch.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "check.h"
#include "core/h5util.h"
#include "fixtures.h"
#include "hml/qoi.h"
#include "hml/version.h"

/* Dataset `name` of `path`: its dims (returns the rank, -1 on failure),
 * float size, values as doubles and its hml_version attribute. */
static int read_qoi(const char *path, const char *name, hsize_t *dims,
                    size_t *fsize, double *values, size_t max, char *version)
{
	hid_t file, dset, space, type, attr, str;
	char *v = NULL;
	int nd = -1;

	if ((file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		return -1;
	if ((dset = H5Dopen2(file, name, H5P_DEFAULT)) >= 0) {
		space = H5Dget_space(dset);
		type = H5Dget_type(dset);
		nd = H5Sget_simple_extent_ndims(space);
		H5Sget_simple_extent_dims(space, dims, NULL);
		*fsize = H5Tget_class(type) == H5T_FLOAT ? H5Tget_size(type) : 0;
		if ((size_t)H5Sget_simple_extent_npoints(space) > max ||
		    H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
			nd = -1;
		version[0] = '\0';
		if ((attr = H5Aopen(dset, "hml_version", H5P_DEFAULT)) >= 0) {
			str = H5Tcopy(H5T_C_S1);
			H5Tset_size(str, H5T_VARIABLE);
			H5Tset_cset(str, H5T_CSET_UTF8);
			if (H5Aread(attr, str, &v) >= 0 && v) {
				snprintf(version, 64, "%s", v);
				H5free_memory(v);
			}
			H5Tclose(str);
			H5Aclose(attr);
		}
		H5Tclose(type);
		H5Sclose(space);
		H5Dclose(dset);
	}
	H5Fclose(file);
	return nd;
}

static int count_objects(const char *path)
{
	hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	H5G_info_t info;
	int n = -1;

	if (file < 0)
		return -1;
	if (H5Gget_info(file, &info) >= 0)
		n = (int)info.nlinks;
	H5Fclose(file);
	return n;
}

TEST(unset_writes_nothing)
{
	const char *path = tmp_path("unset.h5");
	const double v[3] = { 1, 2, 3 };
	const int64_t shape[1] = { 3 };

	unsetenv("HML_QOI");
	CHECK_OK(hml_qoi_write("prices", v, HML_F64, 1, shape));
	setenv("HML_QOI", "", 1);
	CHECK_OK(hml_qoi_write("prices", v, HML_F64, 1, shape));
	CHECK(!exists(path));
	CHECK(!exists("prices"));
	unsetenv("HML_QOI");
}

TEST(write_read_replace)
{
	const char *path = tmp_path("qoi.h5");
	const double prices[5] = { 10.5, 11.25, -3, 0, 1e-300 };
	const float grid[2][3] = { { 1.5f, 2.5f, 3.5f }, { -1, -2, -3 } };
	const int64_t s5[1] = { 5 }, s23[2] = { 2, 3 };
	double got[16];
	hsize_t dims[8];
	size_t fsize = 0;
	char version[64];
	int i;

	setenv("HML_QOI", path, 1);
	CHECK_OK(hml_qoi_write("prices", prices, HML_F64, 1, s5));
	CHECK_EQ_INT(read_qoi(path, "prices", dims, &fsize, got, 16, version), 1);
	CHECK_EQ_INT(dims[0], 5);
	CHECK_EQ_INT(fsize, 8);
	for (i = 0; i < 5; i++)
		CHECK_NEAR(got[i], prices[i], 0);
	CHECK_STR(version, hml_version());

	/* The same name again, now float32 [2, 3]: replaced, not added. */
	CHECK_OK(hml_qoi_write("prices", grid, HML_F32, 2, s23));
	CHECK_EQ_INT(read_qoi(path, "prices", dims, &fsize, got, 16, version), 2);
	CHECK_EQ_INT(dims[0], 2);
	CHECK_EQ_INT(dims[1], 3);
	CHECK_EQ_INT(fsize, 4);
	for (i = 0; i < 6; i++)
		CHECK_NEAR(got[i], grid[i / 3][i % 3], 0);
	CHECK_EQ_INT(count_objects(path), 1);

	/* Another name sits beside it; an explicit path works the same. */
	CHECK_OK(hml_qoi_write("final_state", prices, HML_F64, 1, s5));
	CHECK_EQ_INT(count_objects(path), 2);
	CHECK_OK(hml_qoi_write_to(path, "third", prices, HML_F64, 1, s5));
	CHECK_EQ_INT(count_objects(path), 3);
	CHECK_EQ_INT(read_qoi(path, "prices", dims, &fsize, got, 16, version), 2);
	CHECK_EQ_INT(read_qoi(path, "third", dims, &fsize, got, 16, version), 1);
	CHECK_NEAR(got[1], 11.25, 0);

	/* The one-line macro for a 1-D array. */
	CHECK_OK(HML_QOI_WRITE_1D("macro", grid[1], HML_F32, 3));
	CHECK_EQ_INT(read_qoi(path, "macro", dims, &fsize, got, 16, version), 1);
	CHECK_EQ_INT(dims[0], 3);
	CHECK_EQ_INT(fsize, 4);
	CHECK_NEAR(got[2], -3, 0);
	unsetenv("HML_QOI");

	/* h5dump reads it. */
	{
		char cmd[800];
		snprintf(cmd, sizeof(cmd), "h5dump '%s' > /dev/null", path);
		CHECK_EQ_INT(system(cmd), 0);
	}
}

TEST(bad_arguments)
{
	const char *path = tmp_path("bad.h5");
	const double v[4] = { 1, 2, 3, 4 };
	const int64_t s4[1] = { 4 }, s0[1] = { 0 }, sneg[2] = { 2, -2 };
	const int64_t s9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };

	setenv("HML_QOI", path, 1);
	CHECK_FAILS(hml_qoi_write(NULL, v, HML_F64, 1, s4), HML_EINVALID, "no name");
	CHECK_FAILS(hml_qoi_write("", v, HML_F64, 1, s4), HML_EINVALID, "no name");
	CHECK_FAILS(hml_qoi_write("a/b", v, HML_F64, 1, s4), HML_EINVALID, "'a/b'");
	CHECK_FAILS(hml_qoi_write("x", NULL, HML_F64, 1, s4), HML_EINVALID,
	            "quantity of interest 'x': data is NULL");
	CHECK_FAILS(hml_qoi_write("x", v, (hml_dtype)9, 1, s4), HML_EINVALID,
	            "dtype 9 is not float32, float64, int32 or int64");
	CHECK_FAILS(hml_qoi_write("x", v, (hml_dtype)0, 1, s4), HML_EINVALID,
	            "dtype 0 is not float32, float64, int32 or int64");
	CHECK_FAILS(hml_qoi_write("x", v, HML_F64, 0, s4), HML_EINVALID, "0 dims");
	CHECK_FAILS(hml_qoi_write("x", v, HML_F64, 9, s9), HML_EINVALID, "9 dims");
	CHECK_FAILS(hml_qoi_write("x", v, HML_F64, -1, s4), HML_EINVALID, "-1 dims");
	CHECK_FAILS(hml_qoi_write("x", v, HML_F64, 1, NULL), HML_EINVALID, "shape is NULL");
	CHECK_FAILS(hml_qoi_write("x", v, HML_F64, 1, s0), HML_EINVALID, "dim 0 is 0");
	CHECK_FAILS(hml_qoi_write("x", v, HML_F64, 2, sneg), HML_EINVALID, "dim 1 is -2");
	CHECK_FAILS(hml_qoi_write_to(NULL, "x", v, HML_F64, 1, s4), HML_EINVALID, "no file name");
	CHECK(!exists(path));
	/* Checked even when nothing would be written. */
	unsetenv("HML_QOI");
	CHECK_FAILS(hml_qoi_write("x", NULL, HML_F64, 1, s4), HML_EINVALID, "data is NULL");
}

TEST(files_left_alone)
{
	const char *path = tmp_path("notes.txt");
	const char *text = "not HDF5 at all\n";
	const double v[2] = { 1, 2 };
	const int64_t s2[1] = { 2 };
	unsigned char *after;
	char want[800];
	size_t len;

	write_text(path, text);
	setenv("HML_QOI", path, 1);
	snprintf(want, sizeof(want), "'%s' is not an HDF5 file", path);
	CHECK_FAILS(hml_qoi_write("x", v, HML_F64, 1, s2), HML_EIO, want);
	after = slurp(path, &len);
	CHECK(after && len == strlen(text) && memcmp(after, text, len) == 0);
	free(after);
	unsetenv("HML_QOI");

	CHECK_FAILS(hml_qoi_write_to("/nonexistent/q.h5", "x", v, HML_F64, 1, s2), HML_EIO,
	            "cannot write '/nonexistent/q.h5': No such file or directory");
	CHECK(!exists("/nonexistent/q.h5"));
	/* No identifier is left open by any of this. */
	CHECK_EQ_INT(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
}

int main(void)
{
	if (tmp_dir_make("qoi") < 0)
		return 1;
	hml__h5_init();
	RUN(unset_writes_nothing);
	RUN(write_read_replace);
	RUN(bad_arguments);
	RUN(files_left_alone);
	tmp_dir_remove();
	return check_report();
}
