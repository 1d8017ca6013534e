/*
 * tests/unit/dataset.c - the reader of collected data: region listing,
 * loading float and double files, multi-dimensional rows, concatenation,
 * shape mismatches, missing regions, empty files, uneven sides, rows past
 * the calls table, NaN/Inf policies, unusable layouts and bad files. The
 * fixtures are written with plain HDF5 calls in the collector's layout.
 */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "check.h"
#include "core/util.h"
#include "fixtures.h"
#include "sys/interrupt.h"
#include "train/dataset.h"

/* ---- fixtures --------------------------------------------------------------- */

/* One region as the collector writes it. `in`/`out` are row-major data of
 * `in_dtype`/`out_dtype`; `ncalls` < 0 writes no calls table, else one
 * whose last record accounts for `acc_in`/`acc_out` rows. */
typedef struct {
	const char *label;
	hml_dtype in_dtype, out_dtype;
	int in_ndim, out_ndim;
	hsize_t in_shape[HML_MAX_DIMS], out_shape[HML_MAX_DIMS];
	hsize_t in_rows, out_rows;
	const void *in, *out;
	int64_t ncalls, acc_in, acc_out;
	const char *in_functor, *out_functor;
} fixture;

static hid_t h5type(hml_dtype dt)
{
	return dt == HML_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

static hid_t open_or_create(const char *path)
{
	hid_t f;

	if (access(path, F_OK) == 0)
		f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	else
		f = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
	if (f < 0) {
		fprintf(stderr, "cannot open fixture '%s'\n", path);
		exit(1);
	}
	return f;
}

/* A chunked data set, unlimited along rows, as the collector makes; with
 * no data, nothing is written (its chunks are never allocated). */
static void put_rows(hid_t g, const char *name, hid_t type, int rank,
                     const hsize_t *dims, const void *data)
{
	hsize_t maxdims[HML_MAX_DIMS + 1], chunk[HML_MAX_DIMS + 1];
	hid_t space, dcpl, d;
	int i;

	for (i = 0; i < rank; i++)
		maxdims[i] = chunk[i] = dims[i] ? dims[i] : 1;
	maxdims[0] = H5S_UNLIMITED;
	if (chunk[0] > 4096)
		chunk[0] = 4096;
	space = H5Screate_simple(rank, dims, maxdims);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, rank, chunk);
	d = H5Dcreate2(g, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (d < 0 || (dims[0] && data && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
	                                          data) < 0)) {
		fprintf(stderr, "cannot write fixture data set '%s'\n", name);
		exit(1);
	}
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(space);
}

static void put_str(hid_t obj, const char *name, const char *value)
{
	hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a;

	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
	H5Awrite(a, t, &value);
	H5Aclose(a);
	H5Sclose(s);
	H5Tclose(t);
}

static void put_calls(hid_t g, const fixture *f)
{
	hid_t t = collected_calls_type();
	collected_call *recs = calloc((size_t)f->ncalls + 1, sizeof(*recs));
	hsize_t dims[1] = { (hsize_t)f->ncalls };
	int64_t i;

	/* Calls of one row each, the last taking what is left. */
	for (i = 0; i < f->ncalls; i++) {
		recs[i].call = i;
		recs[i].input_offset = i < f->acc_in ? i : f->acc_in;
		recs[i].input_rows = i < f->acc_in ? 1 : 0;
		recs[i].output_offset = i < f->acc_out ? i : f->acc_out;
		recs[i].output_rows = i < f->acc_out ? 1 : 0;
	}
	if (f->ncalls > 0) {
		recs[f->ncalls - 1].input_offset = f->acc_in > 0 ? f->ncalls - 1 : 0;
		recs[f->ncalls - 1].input_rows = f->acc_in - recs[f->ncalls - 1].input_offset;
		recs[f->ncalls - 1].output_offset = f->acc_out > 0 ? f->ncalls - 1 : 0;
		recs[f->ncalls - 1].output_rows =
			f->acc_out - recs[f->ncalls - 1].output_offset;
	}
	put_rows(g, "calls", t, 1, dims, recs);
	H5Tclose(t);
	free(recs);
}

static void put_region(const char *path, const fixture *f)
{
	hsize_t dims[HML_MAX_DIMS + 1];
	hid_t file = open_or_create(path), g;
	int i;

	g = H5Gcreate2(file, f->label, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	dims[0] = f->in_rows;
	for (i = 0; i < f->in_ndim; i++)
		dims[i + 1] = f->in_shape[i];
	put_rows(g, "input", h5type(f->in_dtype), f->in_ndim + 1, dims, f->in);
	dims[0] = f->out_rows;
	for (i = 0; i < f->out_ndim; i++)
		dims[i + 1] = f->out_shape[i];
	put_rows(g, "output", h5type(f->out_dtype), f->out_ndim + 1, dims, f->out);
	if (f->ncalls >= 0)
		put_calls(g, f);
	if (f->in_functor)
		put_str(g, "input_functor", f->in_functor);
	if (f->out_functor)
		put_str(g, "output_functor", f->out_functor);
	put_str(g, "input_dtype", hml_dtype_name(f->in_dtype));
	H5Gclose(g);
	H5Fclose(file);
}

/* Rows of doubles: input [rows, nin] = base + 10*r + c, output [rows, nout]
 * = -(base + 10*r + c). */
static double *make_d(int64_t rows, int64_t n, double base, double sign)
{
	double *v = malloc((size_t)(rows * n + 1) * sizeof(double));
	int64_t r, c;

	for (r = 0; r < rows; r++)
		for (c = 0; c < n; c++)
			v[r * n + c] = sign * (base + 10.0 * (double)r + (double)c);
	return v;
}

static float *make_f(int64_t rows, int64_t n, double base, double sign)
{
	float *v = malloc((size_t)(rows * n + 1) * sizeof(float));
	int64_t r, c;

	for (r = 0; r < rows; r++)
		for (c = 0; c < n; c++)
			v[r * n + c] = (float)(sign * (base + 10.0 * (double)r + (double)c));
	return v;
}

/* A plain region: `rows` rows of `nin` inputs and `nout` outputs. */
static fixture plain(const char *label, hml_dtype dt, int64_t rows, int64_t nin,
                     int64_t nout, const void *in, const void *out)
{
	fixture f;

	memset(&f, 0, sizeof(f));
	f.label = label;
	f.in_dtype = f.out_dtype = dt;
	f.in_ndim = f.out_ndim = 1;
	f.in_shape[0] = (hsize_t)nin;
	f.out_shape[0] = (hsize_t)nout;
	f.in_rows = f.out_rows = (hsize_t)rows;
	f.in = in;
	f.out = out;
	f.ncalls = -1;
	return f;
}

static void put_plain_d(const char *path, const char *label, int64_t rows,
                        int64_t nin, int64_t nout, double base)
{
	double *in = make_d(rows, nin, base, 1), *out = make_d(rows, nout, base, -1);
	fixture f = plain(label, HML_F64, rows, nin, nout, in, out);

	put_region(path, &f);
	free(in);
	free(out);
}

/* The data set holds the plain rows `first`.. of base `base`. */
static int rows_match(const hml__dataset *d, int64_t at, int64_t first, int64_t n,
                      double base)
{
	int64_t r, c;

	for (r = 0; r < n; r++) {
		for (c = 0; c < d->in_features; c++)
			if (d->x[(at + r) * d->in_features + c] !=
			    (float)(base + 10.0 * (double)(first + r) + (double)c))
				return 0;
		for (c = 0; c < d->out_features; c++)
			if (d->y[(at + r) * d->out_features + c] !=
			    (float)-(base + 10.0 * (double)(first + r) + (double)c))
				return 0;
	}
	return 1;
}

/* ---- tests ------------------------------------------------------------------ */

TEST(double_file)
{
	const char *p = tmp_path("double.h5");
	const char *list[1] = { p };
	hml__dataset d;

	put_plain_d(p, "binomial", 100, 5, 1, 0.5);
	CHECK_OK(hml__dataset_load(&d, list, 1, "binomial", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(d.rows, 100);
	CHECK_EQ_INT(d.in_ndim, 1);
	CHECK_EQ_INT(d.in_shape[0], 5);
	CHECK_EQ_INT(d.out_ndim, 1);
	CHECK_EQ_INT(d.out_shape[0], 1);
	CHECK_EQ_INT(d.in_features, 5);
	CHECK_EQ_INT(d.out_features, 1);
	CHECK_EQ_INT(d.nonfinite_rows, 0);
	CHECK_EQ_INT(d.nonfinite_values, 0);
	CHECK(d.x && d.y);
	CHECK(rows_match(&d, 0, 0, 100, 0.5));
	CHECK_NEAR(d.x[99 * 5 + 4], 994.5, 0);
	hml__dataset_release(&d);
	CHECK(d.x == NULL && d.y == NULL && d.rows == 0);
}

TEST(float_file)
{
	const char *p = tmp_path("float.h5");
	const char *list[1] = { p };
	float *in = make_f(7, 3, 2, 1), *out = make_f(7, 2, 2, -1);
	fixture f = plain("r", HML_F32, 7, 3, 2, in, out);
	hml__dataset d;

	put_region(p, &f);
	CHECK_OK(hml__dataset_load(&d, list, 1, "r", HML__NONFINITE_DROP));
	CHECK_EQ_INT(d.rows, 7);
	CHECK_EQ_INT(d.in_features, 3);
	CHECK_EQ_INT(d.out_features, 2);
	CHECK(d.x && memcmp(d.x, in, 7 * 3 * sizeof(float)) == 0);
	CHECK(d.y && memcmp(d.y, out, 7 * 2 * sizeof(float)) == 0);
	hml__dataset_release(&d);
	free(in);
	free(out);
}

/* A float input and a double output in one region. */
TEST(mixed_dtypes)
{
	const char *p = tmp_path("mixed.h5");
	const char *list[1] = { p };
	float *in = make_f(4, 2, 0, 1);
	double *out = make_d(4, 1, 0, -1);
	fixture f = plain("m", HML_F32, 4, 2, 1, in, out);
	hml__dataset d;

	f.out_dtype = HML_F64;
	put_region(p, &f);
	CHECK_OK(hml__dataset_load(&d, list, 1, "m", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(d.rows, 4);
	CHECK(rows_match(&d, 0, 0, 4, 0));
	hml__dataset_release(&d);
	free(in);
	free(out);
}

/* Whole fields: rows of [2, 3, 4] in and [2, 3, 4] out, kept row-major. */
TEST(multidim_rows)
{
	const char *p = tmp_path("field.h5");
	const char *list[1] = { p };
	double in[5 * 24], out[5 * 24];
	fixture f;
	hml__dataset d;
	int i, ok = 1;

	for (i = 0; i < 5 * 24; i++) {
		in[i] = i;
		out[i] = 1000 + i;
	}
	memset(&f, 0, sizeof(f));
	f.label = "field";
	f.in_dtype = f.out_dtype = HML_F64;
	f.in_ndim = f.out_ndim = 3;
	f.in_shape[0] = f.out_shape[0] = 2;
	f.in_shape[1] = f.out_shape[1] = 3;
	f.in_shape[2] = f.out_shape[2] = 4;
	f.in_rows = f.out_rows = 5;
	f.in = in;
	f.out = out;
	f.ncalls = -1;
	put_region(p, &f);
	CHECK_OK(hml__dataset_load(&d, list, 1, "field", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(d.rows, 5);
	CHECK_EQ_INT(d.in_ndim, 3);
	CHECK_EQ_INT(d.out_ndim, 3);
	CHECK_EQ_INT(d.in_shape[0], 2);
	CHECK_EQ_INT(d.in_shape[1], 3);
	CHECK_EQ_INT(d.in_shape[2], 4);
	CHECK_EQ_INT(d.in_features, 24);
	CHECK_EQ_INT(d.out_features, 24);
	for (i = 0; d.x && d.y && i < 5 * 24; i++)
		ok &= d.x[i] == (float)i && d.y[i] == (float)(1000 + i);
	CHECK(ok);
	hml__dataset_release(&d);
}

/* Rows of a single value: a data set of rank 1 has an empty feature shape. */
TEST(scalar_rows)
{
	const char *p = tmp_path("scalar.h5");
	const char *list[1] = { p };
	double in[6] = { 1, 2, 3, 4, 5, 6 }, out[6] = { -1, -2, -3, -4, -5, -6 };
	fixture f = plain("s", HML_F64, 6, 1, 1, in, out);
	hml__region_info *info = NULL;
	hml__dataset d;
	size_t n = 0;

	f.in_ndim = f.out_ndim = 0;
	put_region(p, &f);
	CHECK_OK(hml__region_info_list(p, &info, &n));
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_EQ_INT(info[0].in_ndim, 0);
		CHECK_EQ_INT(info[0].rows, 6);
	}
	hml__region_info_free(info, n);
	CHECK_OK(hml__dataset_load(&d, list, 1, "s", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(d.in_ndim, 0);
	CHECK_EQ_INT(d.in_features, 1);
	CHECK_EQ_INT(d.out_features, 1);
	CHECK(d.x && d.x[5] == 6.0f && d.y[5] == -6.0f);
	hml__dataset_release(&d);
}

TEST(concatenated_in_order)
{
	const char *a = tmp_path("cat-a.h5"), *b = tmp_path("cat-b.h5");
	const char *c = tmp_path("cat-c.h5");
	const char *list[3] = { a, b, c };
	float *in = make_f(5, 4, 5000, 1), *out = make_f(5, 2, 5000, -1);
	fixture f = plain("r", HML_F32, 5, 4, 2, in, out);
	hml__dataset d;

	put_plain_d(a, "r", 3, 4, 2, 0);
	put_plain_d(b, "r", 4, 4, 2, 1000);
	put_region(c, &f);      /* float after double: converted all the same */
	CHECK_OK(hml__dataset_load(&d, list, 3, "r", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(d.rows, 12);
	CHECK(rows_match(&d, 0, 0, 3, 0));
	CHECK(rows_match(&d, 3, 0, 4, 1000));
	CHECK(rows_match(&d, 7, 0, 5, 5000));
	hml__dataset_release(&d);
	free(in);
	free(out);
}

TEST(shape_mismatch)
{
	const char *a = tmp_path("shape-a.h5"), *b = tmp_path("shape-b.h5");
	const char *c = tmp_path("shape-c.h5");
	const char *ab[2] = { a, b }, *ac[2] = { a, c };
	char want[1400];
	hml__dataset d;

	put_plain_d(a, "r", 3, 4, 1, 0);
	put_plain_d(b, "r", 3, 5, 1, 0);
	put_plain_d(c, "r", 3, 4, 2, 0);
	snprintf(want, sizeof(want), "'%s': region 'r' input is [5] but '%s' has [4]",
	         b, a);
	CHECK_FAILS(hml__dataset_load(&d, ab, 2, "r", HML__NONFINITE_ERROR),
	            HML_ESHAPE, want);
	CHECK(d.x == NULL && d.y == NULL && d.rows == 0);
	snprintf(want, sizeof(want), "'%s': region 'r' output is [2] but '%s' has [1]",
	         c, a);
	CHECK_FAILS(hml__dataset_load(&d, ac, 2, "r", HML__NONFINITE_ERROR),
	            HML_ESHAPE, want);
	CHECK(d.x == NULL && d.rows == 0);
}

TEST(missing_region)
{
	const char *p = tmp_path("regions.h5");
	const char *list[1] = { p };
	char want[800];
	hml__dataset d;
	hid_t file, g;

	put_plain_d(p, "beta", 2, 1, 1, 0);
	put_plain_d(p, "alpha", 2, 1, 1, 0);
	/* Neither a group without data nor a data set is a region. */
	file = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
	g = H5Gcreate2(file, "notes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	H5Gclose(g);
	{
		double v[2] = { 1, 2 };
		hsize_t dims[1] = { 2 };
		put_rows(file, "loose", H5T_NATIVE_DOUBLE, 1, dims, v);
	}
	H5Fclose(file);
	snprintf(want, sizeof(want), "'%s' has no region 'gamma' (it has: alpha, beta)", p);
	CHECK_FAILS(hml__dataset_load(&d, list, 1, "gamma", HML__NONFINITE_ERROR),
	            HML_ENOTFOUND, want);
	CHECK_FAILS(hml__dataset_load(&d, list, 1, "notes", HML__NONFINITE_ERROR),
	            HML_ENOTFOUND, "(it has: alpha, beta)");
	CHECK_FAILS(hml__dataset_load(&d, list, 1, "loose", HML__NONFINITE_ERROR),
	            HML_ENOTFOUND, "(it has: alpha, beta)");
	CHECK_FAILS(hml__dataset_load(&d, list, 1, "alpha/input", HML__NONFINITE_ERROR),
	            HML_ENOTFOUND, "has no region 'alpha/input'");
	CHECK_FAILS(hml__dataset_load(&d, list, 1, "", HML__NONFINITE_ERROR),
	            HML_EINVALID, "region label is empty");
	CHECK(d.x == NULL && d.rows == 0);
}

TEST(empty_file)
{
	const char *e = tmp_path("empty.h5"), *f = tmp_path("empty-2.h5");
	const char *g = tmp_path("full.h5");
	const char *one[1] = { e }, *two[2] = { e, f }, *mixed[3] = { e, g, f };
	char want[1400];
	hml__region_info *info = (hml__region_info *)1;
	hml__dataset d;
	size_t n = 99;

	H5Fclose(H5Fcreate(e, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT));
	H5Fclose(H5Fcreate(f, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT));
	CHECK_OK(hml__region_info_list(e, &info, &n));
	CHECK_EQ_INT(n, 0);
	CHECK(info == NULL);
	hml__region_info_free(info, n);
	snprintf(want, sizeof(want), "region 'r' has no data rows in '%s'", e);
	CHECK_FAILS(hml__dataset_load(&d, one, 1, "r", HML__NONFINITE_DROP),
	            HML_EINVALID, want);
	snprintf(want, sizeof(want), "region 'r' has no data rows in '%s', '%s'", e, f);
	CHECK_FAILS(hml__dataset_load(&d, two, 2, "r", HML__NONFINITE_DROP),
	            HML_EINVALID, want);
	/* A file without regions adds nothing to files that have rows. */
	put_plain_d(g, "r", 3, 2, 1, 0);
	CHECK_OK(hml__dataset_load(&d, mixed, 3, "r", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(d.rows, 3);
	CHECK(rows_match(&d, 0, 0, 3, 0));
	hml__dataset_release(&d);
}

/* A region opened by the collector and never written: shapes, no rows. */
TEST(region_without_rows)
{
	const char *p = tmp_path("norows.h5");
	const char *list[1] = { p };
	fixture f = plain("r", HML_F64, 0, 3, 1, NULL, NULL);
	hml__region_info *info = NULL;
	hml__dataset d;
	size_t n = 0;

	f.ncalls = 0;
	put_region(p, &f);
	CHECK_OK(hml__region_info_list(p, &info, &n));
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_EQ_INT(info[0].rows, 0);
		CHECK_EQ_INT(info[0].calls, 0);
		CHECK_EQ_INT(info[0].in_shape[0], 3);
	}
	hml__region_info_free(info, n);
	CHECK_FAILS(hml__dataset_load(&d, list, 1, "r", HML__NONFINITE_ERROR),
	            HML_EINVALID, "region 'r' has no data rows in '");
}

TEST(input_longer_than_output)
{
	const char *p = tmp_path("uneven.h5");
	const char *list[1] = { p };
	double *in = make_d(10, 2, 0, 1), *out = make_d(7, 1, 0, -1);
	fixture f = plain("r", HML_F64, 10, 2, 1, in, out);
	hml__region_info *info = NULL;
	hml__dataset d;
	size_t n = 0;

	f.out_rows = 7;
	put_region(p, &f);
	CHECK_OK(hml__region_info_list(p, &info, &n));
	CHECK_EQ_INT(n, 1);
	if (n == 1)
		CHECK_EQ_INT(info[0].rows, 7);
	hml__region_info_free(info, n);
	CHECK_OK(hml__dataset_load(&d, list, 1, "r", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(d.rows, 7);
	CHECK(rows_match(&d, 0, 0, 7, 0));
	hml__dataset_release(&d);
	free(in);
	free(out);
}

/* A collector killed in a flush leaves rows past what the calls table
 * records; only the recorded rows count. */
TEST(rows_past_calls_table)
{
	const char *p = tmp_path("killed.h5");
	const char *list[1] = { p };
	double *in = make_d(10, 2, 0, 1), *out = make_d(10, 1, 0, -1);
	fixture f = plain("r", HML_F64, 10, 2, 1, in, out);
	hml__region_info *info = NULL;
	hml__dataset d;
	size_t n = 0;

	f.ncalls = 4;
	f.acc_in = 6;
	f.acc_out = 8;
	put_region(p, &f);
	CHECK_OK(hml__region_info_list(p, &info, &n));
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_EQ_INT(info[0].rows, 6);
		CHECK_EQ_INT(info[0].calls, 4);
	}
	hml__region_info_free(info, n);
	CHECK_OK(hml__dataset_load(&d, list, 1, "r", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(d.rows, 6);
	CHECK(rows_match(&d, 0, 0, 6, 0));
	hml__dataset_release(&d);
	free(in);
	free(out);
}

/* Rows 2 and 5 hold 1 + 3 values that are not finite. */
static void put_nonfinite(const char *path, double base)
{
	double *in = make_d(10, 3, base, 1), *out = make_d(10, 2, base, -1);
	fixture f = plain("r", HML_F64, 10, 3, 2, in, out);

	in[2 * 3 + 1] = NAN;
	in[5 * 3 + 0] = INFINITY;
	in[5 * 3 + 2] = -INFINITY;
	out[5 * 2 + 1] = NAN;
	put_region(path, &f);
	free(in);
	free(out);
}

TEST(nonfinite_drop)
{
	const char *a = tmp_path("nan-a.h5"), *b = tmp_path("nan-b.h5");
	const char *list[2] = { a, b };
	hml__dataset d;

	put_nonfinite(a, 0);
	put_nonfinite(b, 1000);
	CHECK_OK(hml__dataset_load(&d, list, 1, "r", HML__NONFINITE_DROP));
	CHECK_EQ_INT(d.rows, 8);
	CHECK_EQ_INT(d.nonfinite_rows, 2);
	CHECK_EQ_INT(d.nonfinite_values, 4);
	CHECK(rows_match(&d, 0, 0, 2, 0));
	CHECK(rows_match(&d, 2, 3, 2, 0));
	CHECK(rows_match(&d, 4, 6, 4, 0));
	hml__dataset_release(&d);

	CHECK_OK(hml__dataset_load(&d, list, 2, "r", HML__NONFINITE_DROP));
	CHECK_EQ_INT(d.rows, 16);
	CHECK_EQ_INT(d.nonfinite_rows, 4);
	CHECK_EQ_INT(d.nonfinite_values, 8);
	CHECK(rows_match(&d, 8, 0, 2, 1000));
	CHECK(rows_match(&d, 10, 3, 2, 1000));
	CHECK(rows_match(&d, 12, 6, 4, 1000));
	hml__dataset_release(&d);
}

TEST(nonfinite_error)
{
	const char *a = tmp_path("nanerr-a.h5"), *b = tmp_path("nanerr-b.h5");
	const char *list[2] = { a, b };
	char want[800];
	hml__dataset d;

	put_plain_d(a, "r", 4, 3, 2, 0);
	put_nonfinite(b, 0);
	snprintf(want, sizeof(want),
	         "region 'r': 2 rows hold NaN or Inf (4 values) in '%s'; "
	         "use --nonfinite drop to drop them", b);
	CHECK_FAILS(hml__dataset_load(&d, list, 2, "r", HML__NONFINITE_ERROR),
	            HML_EINVALID, want);
	CHECK(d.x == NULL && d.y == NULL && d.rows == 0 && d.nonfinite_rows == 0);
}

TEST(nonfinite_all_rows)
{
	const char *p = tmp_path("allnan.h5");
	const char *list[1] = { p };
	double in[3] = { NAN, NAN, INFINITY }, out[3] = { 1, 2, 3 };
	fixture f = plain("r", HML_F64, 3, 1, 1, in, out);
	hml__dataset d;

	put_region(p, &f);
	CHECK_FAILS(hml__dataset_load(&d, list, 1, "r", HML__NONFINITE_DROP),
	            HML_EINVALID, "region 'r' has no data rows in '");
}

/* Doubles beyond float range become Inf in float32, and count as such. */
TEST(double_beyond_float)
{
	const char *p = tmp_path("huge.h5");
	const char *list[1] = { p };
	double in[3] = { 1, 1e300, 3 }, out[3] = { 1, 2, -1e300 };
	fixture f = plain("r", HML_F64, 3, 1, 1, in, out);
	hml__dataset d;

	put_region(p, &f);
	CHECK_OK(hml__dataset_load(&d, list, 1, "r", HML__NONFINITE_DROP));
	CHECK_EQ_INT(d.rows, 1);
	CHECK_EQ_INT(d.nonfinite_rows, 2);
	CHECK(d.x && d.x[0] == 1.0f && d.y[0] == 1.0f);
	hml__dataset_release(&d);
}

/* More rows than one slab, NaN around the slab boundary: compaction moves
 * rows across slabs. */
TEST(large_slabs)
{
	const char *p = tmp_path("large.h5");
	const char *list[1] = { p };
	const int64_t rows = 150000;
	const int64_t bad[5] = { 0, 65535, 65536, 131071, 149999 };
	double *in = make_d(rows, 2, 0, 1), *out = make_d(rows, 1, 0, -1);
	fixture f = plain("r", HML_F64, rows, 2, 1, in, out);
	hml__dataset d;
	int64_t i, r, k, ok = 1;

	for (i = 0; i < 5; i++)
		out[bad[i]] = NAN;
	put_region(p, &f);
	CHECK_OK(hml__dataset_load(&d, list, 1, "r", HML__NONFINITE_DROP));
	CHECK_EQ_INT(d.rows, rows - 5);
	CHECK_EQ_INT(d.nonfinite_rows, 5);
	for (r = 0, k = 0, i = 0; d.x && r < rows; r++) {
		if (i < 5 && bad[i] == r) {
			i++;
			continue;
		}
		ok &= d.x[2 * k] == (float)(10.0 * (double)r) &&
		      d.y[k] == (float)(-10.0 * (double)r);
		k++;
	}
	CHECK(ok);
	hml__dataset_release(&d);
	free(in);
	free(out);
}

/* A pending interrupt (the CLI's SIGINT/SIGTERM) stops a read between
 * slabs. Last: the interrupt stays pending in this process. */
TEST(interrupt_stops_reading)
{
	const char *p = tmp_path("interrupted.h5");
	const char *list[1] = { p };
	double *in = make_d(100, 2, 0, 1), *out = make_d(100, 1, 0, -1);
	fixture f = plain("r", HML_F64, 100, 2, 1, in, out);
	hml__dataset d;

	put_region(p, &f);
	free(in);
	free(out);
	hml__interrupt(SIGINT);
	CHECK_FAILS(hml__dataset_load(&d, list, 1, "r", HML__NONFINITE_DROP), HML_ERROR,
	            "interrupted while reading '");
	CHECK(d.x == NULL && d.rows == 0);
}

TEST(region_info_fields)
{
	const char *p = tmp_path("info.h5");
	float *in = make_f(12, 5, 0, 1);
	double *out = make_d(12, 1, 0, -1), *fin = make_d(3, 4 * 8, 0, 1);
	fixture f = plain("binomial", HML_F32, 12, 5, 1, in, out);
	fixture g;
	hml__region_info *info = NULL;
	size_t n = 0;

	f.out_dtype = HML_F64;
	f.ncalls = 12;
	f.acc_in = f.acc_out = 12;
	f.in_functor = "[i, 0:5] = ([i], [i], [i], [i], [i])";
	f.out_functor = "[i, 0:1] = ([i])";
	put_region(p, &f);
	memset(&g, 0, sizeof(g));
	g.label = "advect";
	g.in_dtype = g.out_dtype = HML_F64;
	g.in_ndim = 2;
	g.in_shape[0] = 4;
	g.in_shape[1] = 8;
	g.out_ndim = 2;
	g.out_shape[0] = 4;
	g.out_shape[1] = 8;
	g.in_rows = g.out_rows = 3;
	g.in = g.out = fin;
	g.ncalls = -1;
	put_region(p, &g);
	CHECK_OK(hml__region_info_list(p, &info, &n));
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		/* In name order. */
		CHECK_STR(info[0].label, "advect");
		CHECK_EQ_INT(info[0].rows, 3);
		CHECK_EQ_INT(info[0].calls, 0);
		CHECK_EQ_INT(info[0].in_ndim, 2);
		CHECK_EQ_INT(info[0].in_shape[0], 4);
		CHECK_EQ_INT(info[0].in_shape[1], 8);
		CHECK_EQ_INT(info[0].out_ndim, 2);
		CHECK_EQ_INT(info[0].in_dtype, HML_F64);
		CHECK(info[0].input_functor == NULL);
		CHECK(info[0].output_functor == NULL);

		CHECK_STR(info[1].label, "binomial");
		CHECK_EQ_INT(info[1].rows, 12);
		CHECK_EQ_INT(info[1].calls, 12);
		CHECK_EQ_INT(info[1].in_ndim, 1);
		CHECK_EQ_INT(info[1].in_shape[0], 5);
		CHECK_EQ_INT(info[1].out_ndim, 1);
		CHECK_EQ_INT(info[1].out_shape[0], 1);
		CHECK_EQ_INT(info[1].in_dtype, HML_F32);
		CHECK_EQ_INT(info[1].out_dtype, HML_F64);
		CHECK_STR(info[1].input_functor, "[i, 0:5] = ([i], [i], [i], [i], [i])");
		CHECK_STR(info[1].output_functor, "[i, 0:1] = ([i])");
	}
	hml__region_info_free(info, n);
	hml__region_info_free(NULL, 0);
	free(in);
	free(out);
	free(fin);
}

TEST(unusable_layouts)
{
	const char *p = tmp_path("ints.h5"), *q = tmp_path("rank0.h5");
	const char *lp[1] = { p }, *lq[1] = { q };
	int ints[4] = { 1, 2, 3, 4 };
	double out[4] = { 1, 2, 3, 4 }, one = 1;
	hsize_t dims[2] = { 4, 1 };
	hml__region_info *info = NULL;
	hml__dataset d;
	size_t n = 0;
	hid_t file, g, s, ds;

	file = H5Fcreate(p, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
	g = H5Gcreate2(file, "r", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	put_rows(g, "input", H5T_NATIVE_INT, 2, dims, ints);
	put_rows(g, "output", H5T_NATIVE_DOUBLE, 2, dims, out);
	H5Gclose(g);
	H5Fclose(file);
	CHECK_FAILS(hml__region_info_list(p, &info, &n), HML_EINVALID,
	            "region 'r': input is int32 data, not float32 or float64");
	CHECK(info == NULL && n == 0);
	CHECK_FAILS(hml__dataset_load(&d, lp, 1, "r", HML__NONFINITE_DROP),
	            HML_EINVALID, "region 'r': input is int32 data, not float32 or float64");

	file = H5Fcreate(q, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
	g = H5Gcreate2(file, "r", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	put_rows(g, "input", H5T_NATIVE_DOUBLE, 2, dims, out);
	s = H5Screate(H5S_SCALAR);
	ds = H5Dcreate2(g, "output", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT,
	                H5P_DEFAULT);
	H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &one);
	H5Dclose(ds);
	H5Sclose(s);
	H5Gclose(g);
	H5Fclose(file);
	CHECK_FAILS(hml__region_info_list(q, &info, &n), HML_EINVALID,
	            "region 'r': output has rank 0");
	CHECK_FAILS(hml__dataset_load(&d, lq, 1, "r", HML__NONFINITE_DROP),
	            HML_EINVALID, "region 'r': output has rank 0");
}

TEST(bad_files)
{
	const char *text = tmp_path("notes.txt"), *missing = tmp_path("missing.h5");
	const char *zero = tmp_path("zero.h5"), *good = tmp_path("good.h5");
	const char *lt[1] = { text }, *lm[2] = { good, missing };
	char want[800];
	hml__region_info *info = NULL;
	hml__dataset d;
	size_t n = 0;

	write_text(text, "not an HDF5 file at all\n");
	write_text(zero, "");
	put_plain_d(good, "r", 2, 1, 1, 0);
	snprintf(want, sizeof(want), "'%s' is not an HDF5 file", text);
	CHECK_FAILS(hml__region_info_list(text, &info, &n), HML_EIO, want);
	CHECK_FAILS(hml__dataset_load(&d, lt, 1, "r", HML__NONFINITE_DROP),
	            HML_EIO, want);
	snprintf(want, sizeof(want), "'%s' is not an HDF5 file", zero);
	CHECK_FAILS(hml__region_info_list(zero, &info, &n), HML_EIO, want);
	snprintf(want, sizeof(want), "cannot read '%s'", missing);
	CHECK_FAILS(hml__region_info_list(missing, &info, &n), HML_ENOTFOUND, want);
	CHECK_FAILS(hml__dataset_load(&d, lm, 2, "r", HML__NONFINITE_DROP),
	            HML_ENOTFOUND, want);
	CHECK(d.x == NULL && d.rows == 0);
	CHECK(info == NULL && n == 0);
	CHECK_FAILS(hml__dataset_load(&d, lm, 0, "r", HML__NONFINITE_DROP),
	            HML_EINVALID, "no data files");
	CHECK_FAILS(hml__dataset_load(&d, lm, 1, "r", (hml__nonfinite)7),
	            HML_EINVALID, "unknown NaN/Inf policy 7");
}

/* ---- damaged superblocks (issue #9) ---------------------------------------- */

/* The 58 bytes that made H5Fopen() allocate 4 GiB: a version 0 superblock
 * whose base, free-space, end-of-file and driver information addresses
 * are all undefined (all ones), cut short before its root group entry. */
static const unsigned char oom_superblock[58] = {
	0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x08, 0x08, 0x00, 0x04, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x00
};

static void put_bytes(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	fwrite(b, 1, n, f);
	fclose(f);
}

static void put_le64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* A region in a file made with the creation property list `fcpl` and the
 * access property list `fapl`, then reopened to add the region. */
static void put_plain_with(const char *path, hid_t fcpl, hid_t fapl)
{
	hid_t f = H5Fcreate(path, H5F_ACC_EXCL, fcpl, fapl);

	CHECK(f >= 0);
	H5Fclose(f);
	put_plain_d(path, "r", 4, 2, 1, 0);
}

static void accepted(const char *path)
{
	hml__region_info *info = NULL;
	size_t n = 0;

	CHECK_OK(hml__region_info_list(path, &info, &n));
	CHECK(n == 1 && info && info[0].rows == 4);
	hml__region_info_free(info, n);
}

/* Region 'r' of path refused, with `code` and a message holding `want`, by
 * the region listing and by the loader, neither leaving anything behind. */
static void refused_as(const char *path, int code, const char *want)
{
	hml__region_info *info = NULL;
	const char *lp[1] = { path };
	hml__dataset d;
	size_t n = 0;

	CHECK_FAILS(hml__region_info_list(path, &info, &n), code, want);
	CHECK(info == NULL && n == 0);
	CHECK_FAILS(hml__dataset_load(&d, lp, 1, "r", HML__NONFINITE_DROP), code, want);
	CHECK(d.x == NULL && d.rows == 0);
}

static void refused(const char *path, const char *reason)
{
	char want[800];

	snprintf(want, sizeof(want), "'%s' is not a valid HDF5 file: %s", path, reason);
	refused_as(path, HML_EIO, want);
}

TEST(damaged_superblocks)
{
	const char *good = tmp_path("sb-good.h5"), *oom = tmp_path("sb-oom.h5");
	const char *cut = tmp_path("sb-cut.h5"), *longer = tmp_path("sb-longer.h5");
	const char *v3 = tmp_path("sb-v3.h5"), *v3long = tmp_path("sb-v3long.h5");
	const char *ub = tmp_path("sb-userblock.h5"), *ublong = tmp_path("sb-ublong.h5");
	const char *undef = tmp_path("sb-undef-eof.h5"), *ver = tmp_path("sb-version.h5");
	const char *sizes = tmp_path("sb-sizes.h5");
	hid_t fcpl, fapl;
	unsigned char *b, *c;
	char reason[200];
	size_t n, m;

	/* A collection in the collector's layout (version 0 superblock). */
	put_plain_d(good, "r", 4, 2, 1, 0);
	accepted(good);
	b = slurp(good, &n);
	CHECK(b && n > 200 && b[8] == 0 && b[13] == 8);
	if (!b)
		return;

	put_bytes(oom, oom_superblock, sizeof(oom_superblock));
	refused(oom, "superblock cut short (58 of 96 bytes)");

	/* Cut in half: the superblock is whole, the data are not. */
	put_bytes(cut, b, n / 2);
	snprintf(reason, sizeof(reason), "truncated file (%zu bytes, the superblock says %zu)",
	         n / 2, n);
	refused(cut, reason);

	/* The end-of-file address (after base and free-space addresses) one
	 * byte past the file. */
	c = malloc(n);
	memcpy(c, b, n);
	put_le64(c + 24 + 16, (uint64_t)n + 1);
	put_bytes(longer, c, n);
	snprintf(reason, sizeof(reason), "truncated file (%zu bytes, the superblock says %zu)",
	         n, n + 1);
	refused(longer, reason);

	memcpy(c, b, n);
	put_le64(c + 24 + 16, UINT64_MAX);
	put_bytes(undef, c, n);
	refused(undef, "end-of-file address undefined");

	memcpy(c, b, n);
	c[8] = 4;
	put_bytes(ver, c, n);
	refused(ver, "unknown superblock version 4");

	memcpy(c, b, n);
	c[13] = 16;
	put_bytes(sizes, c, n);
	refused(sizes, "size of offsets 16 (2, 4 or 8 allowed)");
	free(c);
	free(b);

	/* The newest format (version 3 superblock): accepted whole, refused
	 * with its end-of-file address (base and extension first) past the
	 * end. */
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
	put_plain_with(v3, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	accepted(v3);
	b = slurp(v3, &n);
	CHECK(b && n > 48 && b[8] >= 2 && b[9] == 8);
	if (b) {
		put_le64(b + 12 + 16, (uint64_t)n + 100);
		put_bytes(v3long, b, n);
		snprintf(reason, sizeof(reason),
		         "truncated file (%zu bytes, the superblock says %zu)", n, n + 100);
		refused(v3long, reason);
		free(b);
	}

	/* A user block of 512 bytes before the superblock: HDF5 finds the
	 * signature at 512 and so do we. */
	fcpl = H5Pcreate(H5P_FILE_CREATE);
	H5Pset_userblock(fcpl, 512);
	put_plain_with(ub, fcpl, H5P_DEFAULT);
	H5Pclose(fcpl);
	accepted(ub);
	b = slurp(ub, &n);
	CHECK(b && n > 600 && memcmp(b + 512, oom_superblock, 8) == 0);
	if (b) {
		m = n - 1;
		put_bytes(ublong, b, m);
		snprintf(reason, sizeof(reason),
		         "truncated file (%zu bytes, the superblock says %zu)", m, n);
		refused(ublong, reason);
		free(b);
	}
}

/* A dataspace whose extent is past its maximum: HDF5 1.10 opens such a
 * data set, and fuzz_dataset found the reader then allocating gigabytes for
 * rows of 83886080 features that a 20-KB file does not hold. The file is
 * made whole, then the input's dataspace message (dims 4 x 5, max
 * unlimited x 5, 8-byte lengths) gets a feature extent of 83886080. */
TEST(dims_past_their_maximum)
{
	char path[600], want[700];
	unsigned char pat[32], *b;
	size_t n = 0, i, hits = 0;

	snprintf(path, sizeof(path), "%s/past-max.h5", tmpdir);
	put_plain_d(path, "r", 4, 5, 1, 0.0);
	put_le64(pat, 4);
	put_le64(pat + 8, 5);
	put_le64(pat + 16, UINT64_MAX);
	put_le64(pat + 24, 5);
	b = slurp(path, &n);
	CHECK(b != NULL);
	if (!b)
		return;
	for (i = 0; i + sizeof(pat) <= n; i++)
		if (memcmp(b + i, pat, sizeof(pat)) == 0) {
			put_le64(b + i + 8, 83886080);
			hits++;
		}
	CHECK(hits == 1);
	put_bytes(path, b, n);
	free(b);
	snprintf(want, sizeof(want), "'r/input' in '%s' is damaged: its dim 2 is 83886080, "
	         "past its maximum 5", path);
	refused_as(path, HML_EINVALID, want);
}

/* Extents within their maxima but chunks never written: HDF5 would return
 * fill values for a million rows the file does not store, and the reader
 * would size its arrays for them. Refused before anything is allocated. */
TEST(rows_not_stored)
{
	char path[600], want[700];
	hsize_t in_dims[2] = { 1000000, 5 }, out_dims[2] = { 1000000, 1 };
	hid_t file, g;

	snprintf(path, sizeof(path), "%s/not-stored.h5", tmpdir);
	file = open_or_create(path);
	g = H5Gcreate2(file, "r", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	put_rows(g, "input", H5T_NATIVE_DOUBLE, 2, in_dims, NULL);
	put_rows(g, "output", H5T_NATIVE_DOUBLE, 2, out_dims, NULL);
	H5Gclose(g);
	H5Fclose(file);
	snprintf(want, sizeof(want), "'r/input' in '%s' is damaged: it declares 1000000 rows "
	         "(40 MB) but stores 0 bytes", path);
	refused_as(path, HML_EINVALID, want);
}

TEST(release_is_safe)
{
	hml__dataset d;

	memset(&d, 0, sizeof(d));
	hml__dataset_release(&d);
	hml__dataset_release(&d);
	hml__dataset_release(NULL);
	CHECK(d.x == NULL && d.rows == 0);
}

int main(void)
{
	if (tmp_dir_make("dataset") < 0)
		return 1;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	RUN(double_file);
	RUN(float_file);
	RUN(mixed_dtypes);
	RUN(multidim_rows);
	RUN(scalar_rows);
	RUN(concatenated_in_order);
	RUN(shape_mismatch);
	RUN(missing_region);
	RUN(empty_file);
	RUN(region_without_rows);
	RUN(input_longer_than_output);
	RUN(rows_past_calls_table);
	RUN(nonfinite_drop);
	RUN(nonfinite_error);
	RUN(nonfinite_all_rows);
	RUN(double_beyond_float);
	RUN(large_slabs);
	RUN(region_info_fields);
	RUN(unusable_layouts);
	RUN(bad_files);
	RUN(damaged_superblocks);
	RUN(release_is_safe);
	RUN(dims_past_their_maximum);
	RUN(rows_not_stored);
	RUN(interrupt_stops_reading);
	tmp_dir_remove();
	return check_report();
}
