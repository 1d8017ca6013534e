/*
 * tests/unit/collection.c - the collected-data layout (lib/core/collection.h)
 * round trip: files written through the runtime's collector are read back
 * through the CLI's reader (lib/train/dataset.c) and by h5py, and files the
 * collector did not write are named and refused as each side's policy
 * says.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "check.h"
#include "collect.h"
#include "core/collection.h"
#include "core/error.h"
#include "core/h5util.h"
#include "fixtures.h"
#include "train/dataset.h"

/* One region of the round trip: input float64 [2, 3], output float32 [2]. */
#define IN_FEAT 6
#define OUT_FEAT 2

static hml__collector_desc desc_of(const char *path)
{
	hml__collector_desc d;

	memset(&d, 0, sizeof(d));
	d.path = path;
	d.label = "trip";
	d.in_dtype = HML_F64;
	d.out_dtype = HML_F32;
	d.in_ndim = 2;
	d.in_shape[0] = 2;
	d.in_shape[1] = 3;
	d.out_ndim = 1;
	d.out_shape[0] = OUT_FEAT;
	d.in_functor = "[i, 0:2, 0:3] = ([i, 0:2, 0:3])";
	d.out_functor = "[i, 0:2] = ([i, 0:2])";
	d.in_arrays = "X";
	d.out_arrays = "Y";
	d.in_domain = "0:4";
	d.out_domain = "0:4";
	d.flush_bytes = 300;      /* several flushes per run */
	d.flush_seconds = 60;
	return d;
}

/* One run of `ncalls` calls, rows placed with hml__collector_next() as the
 * region does (odd calls) or copied with hml__collector_append(). */
static int write_run(const char *path, int64_t run, int64_t ncalls)
{
	hml__collector_desc d = desc_of(path);
	hml__collector *c = NULL;
	double in[3 * IN_FEAT];
	float out[2 * OUT_FEAT];
	void *dst[2];
	int64_t call, row, k, n[2];
	int rc = 0;

	if ((rc = hml__collector_open(&c, &d)) < 0)
		return rc;
	for (call = 0; rc == 0 && call < ncalls; call++) {
		n[0] = collected_rows(0, call);
		n[1] = collected_rows(1, call);
		for (row = 0; row < n[0]; row++)
			for (k = 0; k < IN_FEAT; k++)
				in[row * IN_FEAT + k] = collected_value(0, run, call, row, k);
		for (row = 0; row < n[1]; row++)
			for (k = 0; k < OUT_FEAT; k++)
				out[row * OUT_FEAT + k] = (float)collected_value(1, run, call, row, k);
		if (call % 2 == 0) {
			rc = hml__collector_append(c, in, n[0], out, n[1],
			                           collected_seconds(run, call));
			continue;
		}
		if ((rc = hml__collector_next(c, HML__COLLECTOR_INPUT, n[0], &dst[0])) < 0)
			break;
		memcpy(dst[0], in, (size_t)(n[0] * IN_FEAT) * sizeof(double));
		/* A flush in the middle of a call (an exit handler inside the
		 * region) keeps the rows already placed. */
		if (call % 4 == 1 && (rc = hml__collector_flush(c)) < 0)
			break;
		if ((rc = hml__collector_next(c, HML__COLLECTOR_OUTPUT, n[1], &dst[1])) < 0)
			break;
		memcpy(dst[1], out, (size_t)(n[1] * OUT_FEAT) * sizeof(float));
		rc = hml__collector_commit(c, collected_seconds(run, call));
	}
	if (hml__collector_close(c) < 0 && rc == 0)
		rc = -1;
	return rc;
}

TEST(collector_to_reader)
{
	const char *path = tmp_path("trip.h5");
	const char *one[1] = { path };
	const int64_t calls[2] = { 7, 4 };
	hml__region_info *info = NULL;
	hml__dataset d;
	size_t n = 0;
	int64_t run, call, row, k, r[2], total[2] = { 0, 0 };
	int bad = 0, side;

	CHECK_OK(write_run(path, 0, calls[0]));
	CHECK_OK(write_run(path, 1, calls[1]));
	for (side = 0; side < 2; side++)
		for (run = 0; run < 2; run++)
			for (call = 0; call < calls[run]; call++)
				total[side] += collected_rows(side, call);

	CHECK_OK(hml__region_info_list(path, &info, &n));
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_STR(info[0].label, "trip");
		CHECK_EQ_INT(info[0].calls, calls[0] + calls[1]);
		CHECK_EQ_INT(info[0].in_dtype, HML_F64);
		CHECK_EQ_INT(info[0].out_dtype, HML_F32);
		CHECK_EQ_INT(info[0].in_ndim, 2);
		CHECK_EQ_INT(info[0].in_shape[0], 2);
		CHECK_EQ_INT(info[0].in_shape[1], 3);
		CHECK_EQ_INT(info[0].out_ndim, 1);
		CHECK_EQ_INT(info[0].out_shape[0], OUT_FEAT);
		CHECK_STR(info[0].input_functor, "[i, 0:2, 0:3] = ([i, 0:2, 0:3])");
		CHECK_STR(info[0].output_functor, "[i, 0:2] = ([i, 0:2])");
	}
	hml__region_info_free(info, n);

	/* The reader pairs rows by position: input and output rows of the
	 * same index, the shorter side's count. */
	CHECK_OK(hml__dataset_load(&d, one, 1, "trip", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(d.in_features, IN_FEAT);
	CHECK_EQ_INT(d.out_features, OUT_FEAT);
	CHECK_EQ_INT(d.rows, total[0] < total[1] ? total[0] : total[1]);
	r[0] = r[1] = 0;
	for (run = 0; run < 2 && d.x && d.y; run++) {
		for (call = 0; call < calls[run]; call++) {
			for (row = 0; row < collected_rows(0, call); row++, r[0]++)
				for (k = 0; r[0] < d.rows && k < IN_FEAT; k++)
					bad += d.x[r[0] * IN_FEAT + k] !=
					       (float)collected_value(0, run, call, row, k);
			for (row = 0; row < collected_rows(1, call); row++, r[1]++)
				for (k = 0; r[1] < d.rows && k < OUT_FEAT; k++)
					bad += d.y[r[1] * OUT_FEAT + k] !=
					       (float)collected_value(1, run, call, row, k);
		}
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(d.nonfinite_rows, 0);
	hml__dataset_release(&d);
}

TEST(h5py_reads_it)
{
	const char *py = getenv("HML_TEST_PYTHON"), *src = getenv("HML_SOURCE_DIR");
	const char *path = tmp_path("h5py.h5");
	char cmd[2048];

	CHECK_OK(write_run(path, 0, 7));
	CHECK_OK(write_run(path, 1, 4));
	if (!py || !src) {
		printf("note: HML_TEST_PYTHON or HML_SOURCE_DIR unset (not run by ctest): "
		       "skipping the h5py check\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/python/check_collect.py' '%s' "
	         "trip float64 2,3 float32 2 7,4", py, src, path);
	CHECK_EQ_INT(system(cmd), 0);
}

/* A region group made by hand (growing data sets), `input` of `type`,
 * and a calls table of every field but `ncalls` (full_calls 1: a file
 * written before that field) or of the row fields only (0: h5py-made
 * files may have such tables). */
static void put_region(const char *path, hid_t type, int full_calls)
{
	const hsize_t dims[2] = { 4, 1 }, ndims[1] = { 1 };
	const hsize_t maxdims[2] = { H5S_UNLIMITED, 1 }, chunk[2] = { 4, 1 };
	hml__call_record rec = { 0, 0, 0, 4, 0, 4, 0.0, 1 };
	double v[4] = { 1, 2, 3, 4 };
	hid_t f, g, s, ds, t, dcpl = H5Pcreate(H5P_DATASET_CREATE);

	H5Pset_chunk(dcpl, 2, chunk);
	f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	g = H5Gcreate2(f, "r", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	s = H5Screate_simple(2, dims, maxdims);
	ds = H5Dcreate2(g, "input", type, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
	H5Dclose(ds);
	ds = H5Dcreate2(g, "output", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, dcpl,
	                H5P_DEFAULT);
	H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
	H5Dclose(ds);
	H5Sclose(s);
	H5Pclose(dcpl);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, 1, chunk);
	if (full_calls) {
		t = hml__coll_calls_type(0);
	} else {
		t = H5Tcreate(H5T_COMPOUND, 4 * sizeof(int64_t));
		H5Tinsert(t, "input_offset", 0, H5T_NATIVE_INT64);
		H5Tinsert(t, "input_rows", 8, H5T_NATIVE_INT64);
		H5Tinsert(t, "output_offset", 16, H5T_NATIVE_INT64);
		H5Tinsert(t, "output_rows", 24, H5T_NATIVE_INT64);
	}
	s = H5Screate_simple(1, ndims, maxdims);
	ds = H5Dcreate2(g, "calls", t, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (full_calls) {
		H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &rec);
	} else {
		int64_t part[4] = { 0, 3, 0, 4 };   /* 3 complete input rows */
		H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, part);
	}
	H5Dclose(ds);
	H5Sclose(s);
	H5Tclose(t);
	H5Pclose(dcpl);
	H5Gclose(g);
	H5Fclose(f);
}

TEST(foreign_files)
{
	const char *ints = tmp_path("int32.h5"), *part = tmp_path("partial.h5");
	const char *li[1] = { ints };
	hml__collector_desc d = desc_of(ints);
	hml__collector *c = NULL;
	hml__region_info *info = NULL;
	size_t n = 0;
	hml__dataset ds;

	/* int32 data: named by both sides, refused by both. */
	put_region(ints, H5T_STD_I32LE, 1);
	CHECK_FAILS(hml__region_info_list(ints, &info, &n), HML_EINVALID,
	            "'r': input is int32 data, not float32 or float64");
	CHECK_FAILS(hml__dataset_load(&ds, li, 1, "r", HML__NONFINITE_DROP),
	            HML_EINVALID, "input is int32 data");
	d.label = "r";
	d.in_ndim = 1;
	d.in_shape[0] = 1;
	CHECK_FAILS(hml__collector_open(&c, &d), HML_ESHAPE,
	            "holds input rows [1] of int32 but this run gives [1] of float64");
	CHECK(c == NULL);

	/* A calls table of the row fields only: the reader takes the rows it
	 * accounts for; the collector does not append to it. */
	put_region(part, H5T_NATIVE_DOUBLE, 0);
	CHECK_OK(hml__region_info_list(part, &info, &n));
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_EQ_INT(info[0].rows, 3);
		CHECK_EQ_INT(info[0].calls, 1);
		CHECK(info[0].input_functor == NULL);
	}
	hml__region_info_free(info, n);
	d.path = part;
	d.in_ndim = d.out_ndim = 1;
	d.in_shape[0] = d.out_shape[0] = 1;
	d.out_dtype = HML_F64;
	CHECK_FAILS(hml__collector_open(&c, &d), HML_EIO,
	            "'r/calls' in '");
	CHECK_CONTAINS(hml_error_last()->message, "is not a table of calls");
	CHECK(c == NULL);
}

/* The records of `label`/calls in `path`, read as the full record type
 * (`ncalls` 0 where the file has no such field). */
static int64_t read_records(const char *path, const char *label,
                            hml__call_record *recs, int64_t max)
{
	hml__coll_calls info;
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), g, ds = H5I_INVALID_HID, t;
	int64_t n = -1;

	g = H5Gopen2(f, label, H5P_DEFAULT);
	if (hml__coll_calls_open(&ds, &info, g, path, label) == 0 && info.ncalls <= max) {
		t = hml__coll_calls_type(info.has_ncalls);
		if (H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, recs) >= 0)
			n = info.ncalls;
		/* HDF5 may write anything where the memory type has no field. */
		for (int64_t i = 0; !info.has_ncalls && i < max; i++)
			recs[i].ncalls = 0;
		H5Tclose(t);
	}
	if (ds >= 0)
		H5Dclose(ds);
	H5Gclose(g);
	H5Fclose(f);
	return n;
}

/* Row calls are recorded in chunks: one record stands for `ncalls`
 * consecutive calls, with their summed time, so the reader's count of
 * rows and the cost model's seconds per row stay right; a file made
 * before the field takes such records too (without the count). */
TEST(merged_calls)
{
	const char *path = tmp_path("merged.h5"), *old = tmp_path("old.h5");
	const char *one[1] = { path };
	hml__collector_desc d = desc_of(path);
	hml__collector *c = NULL;
	hml__call_record recs[4];
	hml__coll_calls info;
	hml__dataset ds;
	double in[5 * IN_FEAT], median = 0, v[2] = { 7, 8 };
	float out[5 * OUT_FEAT];
	hid_t f, g, cd = H5I_INVALID_HID;
	int k;

	for (k = 0; k < 5 * IN_FEAT; k++)
		in[k] = k;
	for (k = 0; k < 5 * OUT_FEAT; k++)
		out[k] = (float)k;
	CHECK_OK(hml__collector_open(&c, &d));
	CHECK_FAILS(hml__collector_append_calls(c, in, 4, out, 4, 0, 1.0), HML_EINVALID,
	            "0 calls");
	CHECK_OK(hml__collector_append_calls(c, in, 4, out, 4, 4, 0.8));
	CHECK_OK(hml__collector_append(c, in + 4 * IN_FEAT, 1, out + 4 * OUT_FEAT, 1, 0.1));
	CHECK_OK(hml__collector_close(c));
	CHECK_EQ_INT(read_records(path, "trip", recs, 4), 2);
	CHECK_EQ_INT(recs[0].call, 0);
	CHECK_EQ_INT(recs[0].ncalls, 4);
	CHECK_EQ_INT(recs[0].input_rows, 4);
	CHECK_EQ_INT(recs[0].output_rows, 4);
	CHECK(recs[0].original_seconds == 0.8);
	CHECK_EQ_INT(recs[1].call, 4);
	CHECK_EQ_INT(recs[1].ncalls, 1);
	CHECK_EQ_INT(recs[1].input_offset, 4);
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	g = H5Gopen2(f, "trip", H5P_DEFAULT);
	CHECK_OK(hml__coll_calls_open(&cd, &info, g, path, "trip"));
	CHECK_EQ_INT(info.has_ncalls, 1);
	CHECK_OK(hml__coll_calls_per_row(cd, &info, path, "trip", &median));
	CHECK(median > 0.1499 && median < 0.1501);
	H5Dclose(cd);
	H5Gclose(g);
	H5Fclose(f);
	CHECK_OK(hml__dataset_load(&ds, one, 1, "trip", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(ds.rows, 5);
	if (ds.x && ds.rows == 5)
		CHECK(ds.x[4 * IN_FEAT + 1] == (float)(4 * IN_FEAT + 1));
	/* the rows of a record of 4 calls have no call order; the last has */
	CHECK(ds.run && ds.call);
	if (ds.call && ds.rows == 5) {
		CHECK_EQ_INT(ds.call[0], -1);
		CHECK_EQ_INT(ds.call[3], -1);
		CHECK_EQ_INT(ds.call[4], 4);
		CHECK_EQ_INT(ds.run[4], 0);
	}
	hml__dataset_release(&ds);

	/* A table without `ncalls`: appended to as it is. */
	put_region(old, H5T_NATIVE_DOUBLE, 1);
	d.path = old;
	d.label = "r";
	d.in_dtype = d.out_dtype = HML_F64;
	d.in_ndim = d.out_ndim = 1;
	d.in_shape[0] = d.out_shape[0] = 1;
	CHECK_OK(hml__collector_open(&c, &d));
	CHECK_OK(hml__collector_append_calls(c, v, 2, v, 2, 2, 0.5));
	CHECK_OK(hml__collector_close(c));
	CHECK_EQ_INT(read_records(old, "r", recs, 4), 2);
	CHECK_EQ_INT(recs[1].input_offset, 4);
	CHECK_EQ_INT(recs[1].input_rows, 2);
	CHECK_EQ_INT(recs[1].ncalls, 0);
	CHECK(recs[1].original_seconds == 0.5);
}

/* One run of `ncalls` calls of one row each, every value run * 100 + call. */
static int write_field_run(const char *path, int64_t run, int64_t ncalls)
{
	hml__collector_desc d = desc_of(path);
	hml__collector *c = NULL;
	double in[IN_FEAT];
	float out[OUT_FEAT];
	int rc = 0;

	if ((rc = hml__collector_open(&c, &d)) < 0)
		return rc;
	for (int64_t call = 0; rc == 0 && call < ncalls; call++) {
		for (int k = 0; k < IN_FEAT; k++)
			in[k] = (double)(run * 100 + call);
		for (int k = 0; k < OUT_FEAT; k++)
			out[k] = (float)(run * 100 + call);
		rc = hml__collector_append(c, in, 1, out, 1, 0.01);
	}
	if (hml__collector_close(c) < 0 && rc == 0)
		rc = -1;
	return rc;
}

/* The call order the reader gives each row (hml__dataset run, call): the
 * runs of a file and of two files are told apart, so that multi-step
 * training (lib/train/rollout.h) never follows one run into another. */
TEST(call_order)
{
	const char *a = tmp_path("order-a.h5"), *b = tmp_path("order-b.h5");
	const char *both[2] = { a, b };
	hml__dataset ds;
	int bad = 0;

	unlink(a);
	unlink(b);
	CHECK_OK(write_field_run(a, 0, 3));
	CHECK_OK(write_field_run(a, 1, 2));
	CHECK_OK(write_field_run(b, 0, 4));
	CHECK_OK(hml__dataset_load(&ds, both, 2, "trip", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(ds.rows, 9);
	CHECK(ds.run && ds.call);
	for (int64_t i = 0; ds.run && ds.call && ds.x && i < ds.rows; i++) {
		/* file a: runs 0, 1; file b's run 0 comes after them as run 2 */
		int64_t run = i < 3 ? 0 : i < 5 ? 1 : 2, call = i < 3 ? i : i < 5 ? i - 3 : i - 5;
		int64_t value = (run == 2 ? 0 : run) * 100 + call;

		bad += ds.run[i] != run || ds.call[i] != call || ds.x[i * IN_FEAT] != (float)value;
	}
	CHECK_EQ_INT(bad, 0);
	hml__dataset_release(&ds);
}

TEST(type_names)
{
	const struct { hid_t type; const char *name; } cases[] = {
		{ H5T_NATIVE_FLOAT, "float32" }, { H5T_IEEE_F64BE, "float64" },
		{ H5T_STD_I32LE, "int32" }, { H5T_STD_U8LE, "uint8" },
		{ H5T_STD_I64BE, "int64" }, { H5T_C_S1, "string" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hml__coll_type_name(buf, sizeof(buf), cases[i].type);
		CHECK_STR(buf, cases[i].name);
	}
	CHECK(hml__coll_label_ok("binomial"));
	CHECK(!hml__coll_label_ok("a/b") && !hml__coll_label_ok(".") &&
	      !hml__coll_label_ok("") && !hml__coll_label_ok(NULL));
}

int main(void)
{
	int rc;

	if (tmp_dir_make("collection") < 0)
		return 1;
	hml__h5_init();
	RUN(collector_to_reader);
	RUN(h5py_reads_it);
	RUN(foreign_files);
	RUN(merged_calls);
	RUN(call_order);
	RUN(type_names);
	rc = check_report();
	tmp_dir_remove();
	return rc;
}
