/*
 * tests/unit/collect.c - the HDF5 collector: layout, values, appending runs,
 * mismatches, bad files, the flush policy, and a process killed while it
 * collects: at random moments, and at every single write. Files are read
 * back with plain HDF5 calls, with h5py and with h5dump.
 */
/* RTLD_NEXT, for the pwrite() and ftruncate() stand-ins below. */
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "check.h"
#include "collect.h"
#include "core/collection.h"
#include "core/error.h"
#include "core/h5util.h"
#include "core/util.h"
#include "fixtures.h"
#include "hml/version.h"

/* ---- files ------------------------------------------------------------------ */

static int same_bytes(const unsigned char *a, size_t na, const char *path)
{
	size_t nb;
	unsigned char *b = slurp(path, &nb);
	int same = a && b && na == nb && memcmp(a, b, na) == 0;

	free(b);
	return same;
}

/* ---- HDF5 identifiers must not leak ------------------------------------- */

typedef struct {
	hsize_t n[3];
} idsnap;

static void snap(idsnap *s)
{
	s->n[0] = s->n[1] = s->n[2] = 0;
	H5Inmembers(H5I_DATASPACE, &s->n[0]);
	H5Inmembers(H5I_DATATYPE, &s->n[1]);
	H5Inmembers(H5I_GENPROP_LST, &s->n[2]);
}

#define CHECK_NO_LEAKS(before) do { idsnap after_; snap(&after_); \
	CHECK_EQ_INT(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0); \
	CHECK_EQ_INT(after_.n[0], (before).n[0]); \
	CHECK_EQ_INT(after_.n[1], (before).n[1]); \
	CHECK_EQ_INT(after_.n[2], (before).n[2]); } while (0)

/* ---- known content ------------------------------------------------------- */

typedef struct {
	const char *label;
	hml_dtype dt[2];
	int nd[2];
	int64_t shape[2][HML_MAX_DIMS];
} layout;

static int64_t features(const layout *l, int side)
{
	int64_t n = 1;
	int d;

	for (d = 0; d < l->nd[side]; d++)
		n *= l->shape[side][d];
	return n;
}

/* Rows of one call, in the layout's dtype; free() it. */
static void *make_rows(const layout *l, int side, int64_t run, int64_t call)
{
	int64_t rows = collected_rows(side, call), nf = features(l, side), r, k;
	size_t es = hml_dtype_size(l->dt[side]);
	unsigned char *buf = malloc((size_t)(rows * nf) * es);

	if (!buf)
		return NULL;
	for (r = 0; r < rows; r++)
		for (k = 0; k < nf; k++) {
			double v = collected_value(side, run, call, r, k);
			if (l->dt[side] == HML_F32)
				((float *)buf)[r * nf + k] = (float)v;
			else
				((double *)buf)[r * nf + k] = v;
		}
	return buf;
}

static hml__collector_desc make_desc(const layout *l, const char *path,
                                     size_t flush_bytes, double flush_seconds)
{
	hml__collector_desc d;

	memset(&d, 0, sizeof(d));
	d.path = path;
	d.label = l->label;
	d.in_dtype = l->dt[0];
	d.out_dtype = l->dt[1];
	d.in_ndim = l->nd[0];
	d.out_ndim = l->nd[1];
	memcpy(d.in_shape, l->shape[0], sizeof(d.in_shape));
	memcpy(d.out_shape, l->shape[1], sizeof(d.out_shape));
	d.in_functor = "[S[i], X[i], T[i]]";
	d.out_functor = "[price[i]]";
	d.in_arrays = "S, X, T";
	d.out_arrays = "price";
	d.in_domain = "0:N";
	d.out_domain = "0:N";
	d.flush_bytes = flush_bytes;
	d.flush_seconds = flush_seconds;
	return d;
}

static int append_known(hml__collector *c, const layout *l, int64_t run,
                        int64_t call)
{
	void *in = make_rows(l, 0, run, call), *out = make_rows(l, 1, run, call);
	int rc = (in && out) ? hml__collector_append(c, in, collected_rows(0, call), out,
	                                             collected_rows(1, call),
	                                             collected_seconds(run, call))
	                     : HML_ENOMEM;

	free(in);
	free(out);
	return rc;
}

/* One complete run: open, `ncalls` calls, close. */
static int write_run(const char *path, const layout *l, int64_t run,
                     int64_t ncalls, size_t flush_bytes, double flush_seconds)
{
	hml__collector_desc d = make_desc(l, path, flush_bytes, flush_seconds);
	hml__collector *c = NULL;
	int64_t i;
	int rc;

	if ((rc = hml__collector_open(&c, &d)) < 0)
		return rc;
	for (i = 0; i < ncalls && rc == 0; i++)
		rc = append_known(c, l, run, i);
	if (rc == 0)
		return hml__collector_close(c);
	hml__collector_close(c);
	return rc;
}

/* ---- reading back with plain HDF5 ----------------------------------------- */

/* Dims of a data set; returns the rank or -1. */
static int dataset_dims(hid_t group, const char *name, hsize_t *dims, hsize_t *maxdims)
{
	hid_t d = H5Dopen2(group, name, H5P_DEFAULT), s;
	int nd = -1;

	if (d < 0)
		return -1;
	if ((s = H5Dget_space(d)) >= 0) {
		nd = H5Sget_simple_extent_dims(s, dims, maxdims);
		H5Sclose(s);
	}
	H5Dclose(d);
	return nd;
}

static double *read_doubles(hid_t group, const char *name, size_t n)
{
	double *buf = malloc((n ? n : 1) * sizeof(double));
	hid_t d = H5Dopen2(group, name, H5P_DEFAULT);

	if (d < 0 || !buf ||
	    (n && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)) {
		free(buf);
		buf = NULL;
	}
	if (d >= 0)
		H5Dclose(d);
	return buf;
}

static collected_call *read_calls(hid_t group, int64_t *n)
{
	hsize_t dims[1], maxdims[1];
	collected_call *recs = NULL;
	hid_t d, t;

	*n = -1;
	if (dataset_dims(group, "calls", dims, maxdims) != 1)
		return NULL;
	if (!(recs = malloc((dims[0] ? dims[0] : 1) * sizeof(*recs))))
		return NULL;
	d = H5Dopen2(group, "calls", H5P_DEFAULT);
	t = collected_calls_type();
	if (dims[0] && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, recs) < 0) {
		free(recs);
		recs = NULL;
	} else {
		*n = (int64_t)dims[0];
	}
	H5Tclose(t);
	H5Dclose(d);
	return recs;
}

/* A variable-length string attribute read with plain HDF5 calls. */
static char *attr_str(hid_t obj, const char *name)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t, ft;
	char *v = NULL, *copy = NULL;

	if (a < 0)
		return NULL;
	ft = H5Aget_type(a);
	if (H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) > 0 &&
	    H5Tget_cset(ft) == H5T_CSET_UTF8) {
		t = H5Tcopy(H5T_C_S1);
		H5Tset_size(t, H5T_VARIABLE);
		H5Tset_cset(t, H5T_CSET_UTF8);
		if (H5Aread(a, t, &v) >= 0 && v) {
			copy = strdup(v);
			H5free_memory(v);
		}
		H5Tclose(t);
	}
	H5Tclose(ft);
	H5Aclose(a);
	return copy;
}

static int64_t attr_i64(hid_t obj, const char *name)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
	int64_t v = -999;

	if (a < 0)
		return v;
	if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0)
		v = -998;
	H5Aclose(a);
	return v;
}

#define CHECK_ATTR(obj, name, want) do { char *s_ = attr_str(obj, name); \
	CHECK_STR(s_, want); free(s_); } while (0)

static int expect_superblock = 0;

/*
 * Check everything about a region: layout, attributes, and every call of
 * `nruns` runs with calls_per_run[r] calls each. With `ordered`, the calls
 * appear run after run, in order; otherwise (collectors alive at the same
 * time) in any order, each exactly once. Rows always lie back to back in
 * the order of the calls table.
 */
static void verify(const char *path, const layout *l, int nruns,
                   const int64_t *calls_per_run, int ordered)
{
	hsize_t dims[HML_MAX_DIMS + 1], maxdims[HML_MAX_DIMS + 1], chunk[HML_MAX_DIMS + 1];
	collected_call *recs = NULL;
	double *data[2] = { NULL, NULL };
	char *seen = NULL;
	int64_t nrec = 0, total = 0, next[2] = { 0, 0 }, i, r, k, nf, base[8];
	int64_t expect_rows[2] = { 0, 0 };
	hid_t file, group = H5I_INVALID_HID, dset, dcpl, type;
	H5F_info2_t info;
	int side, nd, d, run;
	char *created;
	static const char *const names[2] = { "input", "output" };

	if ((file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
		CHECK(!"file opens");
		return;
	}
	/* 1.8-compatible: superblock version 0 (in files the collector made). */
	CHECK(H5Fget_info2(file, &info) >= 0);
	if (expect_superblock >= 0)
		CHECK_EQ_INT(info.super.version, expect_superblock);
	if ((group = H5Gopen2(file, l->label, H5P_DEFAULT)) < 0) {
		CHECK(!"group opens");
		goto done;
	}
	for (run = 0; run < nruns; run++) {
		base[run] = total;
		total += calls_per_run[run];
		for (i = 0; i < calls_per_run[run]; i++) {
			expect_rows[0] += collected_rows(0, i);
			expect_rows[1] += collected_rows(1, i);
		}
	}
	/* Attributes. */
	CHECK_ATTR(group, "hml_version", hml_version());
	CHECK_ATTR(group, "input_functor", "[S[i], X[i], T[i]]");
	CHECK_ATTR(group, "output_functor", "[price[i]]");
	CHECK_ATTR(group, "input_arrays", "S, X, T");
	CHECK_ATTR(group, "output_arrays", "price");
	CHECK_ATTR(group, "input_domain", "0:N");
	CHECK_ATTR(group, "output_domain", "0:N");
	CHECK_ATTR(group, "input_dtype", hml_dtype_name(l->dt[0]));
	CHECK_ATTR(group, "output_dtype", hml_dtype_name(l->dt[1]));
	CHECK_EQ_INT(attr_i64(group, "runs"), nruns);
	created = attr_str(group, "created");
	CHECK(created && strlen(created) == 20 && created[4] == '-' &&
	      created[10] == 'T' && created[13] == ':' && created[19] == 'Z');
	free(created);

	/* Shapes, dtypes, chunks, values. */
	for (side = 0; side < 2; side++) {
		nf = features(l, side);
		nd = dataset_dims(group, names[side], dims, maxdims);
		CHECK_EQ_INT(nd, l->nd[side] + 1);
		if (nd != l->nd[side] + 1)
			goto done;
		CHECK_EQ_INT(dims[0], expect_rows[side]);
		CHECK(maxdims[0] == H5S_UNLIMITED);
		for (d = 0; d < l->nd[side]; d++)
			CHECK_EQ_INT(dims[d + 1], l->shape[side][d]);
		dset = H5Dopen2(group, names[side], H5P_DEFAULT);
		type = H5Dget_type(dset);
		CHECK_EQ_INT(H5Tget_class(type), H5T_FLOAT);
		CHECK_EQ_INT(H5Tget_size(type), hml_dtype_size(l->dt[side]));
		dcpl = H5Dget_create_plist(dset);
		CHECK_EQ_INT(H5Pget_layout(dcpl), H5D_CHUNKED);
		CHECK_EQ_INT(H5Pget_chunk(dcpl, nd, chunk), nd);
		{
			size_t row = (size_t)nf * hml_dtype_size(l->dt[side]);
			int64_t want = (int64_t)(1048576 / row);
			if (want < 1)
				want = 1;
			if (want > 65536)
				want = 65536;
			CHECK_EQ_INT(chunk[0], want);
		}
		H5Pclose(dcpl);
		H5Tclose(type);
		H5Dclose(dset);
		data[side] = read_doubles(group, names[side], (size_t)(dims[0] * (hsize_t)nf));
		CHECK(data[side] != NULL);
	}
	nd = dataset_dims(group, "calls", dims, maxdims);
	CHECK_EQ_INT(nd, 1);
	CHECK(maxdims[0] == H5S_UNLIMITED);
	recs = read_calls(group, &nrec);
	CHECK_EQ_INT(nrec, total);
	if (!recs || !data[0] || !data[1] || nrec != total)
		goto done;
	seen = calloc((size_t)total + 1, 1);
	for (i = 0; i < nrec; i++) {
		collected_call *c = &recs[i];
		int64_t idx;
		const int64_t off[2] = { c->input_offset, c->output_offset };
		const int64_t cnt[2] = { c->input_rows, c->output_rows };

		if (ordered) {
			for (run = 0, idx = i; run < nruns && idx >= calls_per_run[run]; run++)
				idx -= calls_per_run[run];
			CHECK_EQ_INT(c->run, run);
			CHECK_EQ_INT(c->call, idx);
		}
		if (c->run < 0 || c->run >= nruns || c->call < 0 ||
		    c->call >= calls_per_run[c->run]) {
			CHECK(!"record names a known call");
			continue;
		}
		idx = base[c->run] + c->call;
		CHECK_EQ_INT(seen[idx], 0);
		seen[idx] = 1;
		CHECK_NEAR(c->original_seconds, collected_seconds(c->run, c->call), 0);
		for (side = 0; side < 2; side++) {
			nf = features(l, side);
			CHECK_EQ_INT(off[side], next[side]);
			CHECK_EQ_INT(cnt[side], collected_rows(side, c->call));
			next[side] += cnt[side];
			if (off[side] + cnt[side] > expect_rows[side])
				continue;
			for (r = 0; r < cnt[side]; r++)
				for (k = 0; k < nf; k++) {
					double got = data[side][(off[side] + r) * nf + k];
					double want = collected_value(side, c->run, c->call, r, k);
					if (got != want) {
						CHECK_NEAR(got, want, 0);
						goto done;
					}
				}
		}
	}
	CHECK_EQ_INT(next[0], expect_rows[0]);
	CHECK_EQ_INT(next[1], expect_rows[1]);
done:
	free(seen);
	free(recs);
	free(data[0]);
	free(data[1]);
	if (group >= 0)
		H5Gclose(group);
	H5Fclose(file);
}

/* Rows of `label`/input in the file now (-1 if it cannot be read). */
static int64_t rows_on_disk(const char *path, const char *label)
{
	hsize_t dims[HML_MAX_DIMS + 1], maxdims[HML_MAX_DIMS + 1];
	hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), group;
	int64_t rows = -1;

	if (file < 0)
		return -1;
	if ((group = H5Gopen2(file, label, H5P_DEFAULT)) >= 0) {
		if (dataset_dims(group, "input", dims, maxdims) >= 1)
			rows = (int64_t)dims[0];
		H5Gclose(group);
	}
	H5Fclose(file);
	return rows;
}

/* ---- layouts ------------------------------------------------------------ */

/* float32 multi-dim input, float32 1-D output */
static const layout L_F32 = { "tree", { HML_F32, HML_F32 }, { 3, 1 },
                              { { 4, 3, 5 }, { 3 } } };
/* float64 1-D input, float64 2-D output */
static const layout L_F64 = { "bonds", { HML_F64, HML_F64 }, { 1, 2 },
                              { { 5 }, { 2, 2 } } };
/* mixed dtypes, scalar output rows (0 feature dims) */
static const layout L_MIX = { "mixed", { HML_F64, HML_F32 }, { 2, 0 },
                              { { 2, 7 }, { 0 } } };

/* ---- tests -------------------------------------------------------------- */

TEST(write_and_read_back)
{
	const char *path = tmp_path("basic.h5");
	const int64_t n_f32[1] = { 25 }, n_f64[1] = { 11 }, n_mix[1] = { 7 };
	idsnap s;

	snap(&s);
	/* Three regions in one file, with flushes in between and at close. */
	CHECK_OK(write_run(path, &L_F32, 0, 25, 5000, 60));
	CHECK_OK(write_run(path, &L_F64, 0, 11, 0, 0));
	CHECK_OK(write_run(path, &L_MIX, 0, 7, 1, 0));
	verify(path, &L_F32, 1, n_f32, 1);
	verify(path, &L_F64, 1, n_f64, 1);
	verify(path, &L_MIX, 1, n_mix, 1);
	CHECK_NO_LEAKS(s);
}

/* Files made elsewhere: the newest HDF5 format, and a user block. */
TEST(files_made_by_others)
{
	const char *latest = tmp_path("latest.h5"), *ublock = tmp_path("userblock.h5");
	const int64_t n[2] = { 5, 3 };
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE), f;
	idsnap s;

	snap(&s);
	H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
	H5Pset_userblock(fcpl, 512);
	CHECK((f = H5Fcreate(latest, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
	H5Fclose(f);
	CHECK((f = H5Fcreate(ublock, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT)) >= 0);
	H5Fclose(f);
	H5Pclose(fapl);
	H5Pclose(fcpl);
	expect_superblock = -1;
	CHECK_OK(write_run(latest, &L_F32, 0, 5, 500, 0));
	CHECK_OK(write_run(latest, &L_F32, 1, 3, 0, 0));
	verify(latest, &L_F32, 2, n, 1);
	CHECK_OK(write_run(ublock, &L_F64, 0, 5, 0, 0));
	CHECK_OK(write_run(ublock, &L_F64, 1, 3, 0, 0));
	verify(ublock, &L_F64, 2, n, 1);
	expect_superblock = 0;
	CHECK_NO_LEAKS(s);
}

TEST(h5util_attributes)
{
	const char *path = tmp_path("attrs.h5");
	hid_t file;
	char *str = NULL;
	int64_t v = 0;
	idsnap s;

	snap(&s);
	CHECK_OK(hml__h5_open_rw(&file, path));
	if (file < 0)
		return;
	CHECK_OK(hml__h5_attr_set_str(file, "name", "caf\xc3\xa9"));
	CHECK_OK(hml__h5_attr_set_str(file, "name", "second value"));
	CHECK_OK(hml__h5_attr_get_str(file, "name", &str));
	CHECK_STR(str, "second value");
	free(str);
	CHECK_OK(hml__h5_attr_set_i64(file, "n", 41));
	CHECK_OK(hml__h5_attr_set_i64(file, "n", INT64_C(1) << 40));
	CHECK_OK(hml__h5_attr_get_i64(file, "n", &v));
	CHECK_EQ_INT(v, INT64_C(1) << 40);
	/* A string attribute replaced by an integer one and back. */
	CHECK_OK(hml__h5_attr_set_i64(file, "name", 7));
	CHECK_OK(hml__h5_attr_get_i64(file, "name", &v));
	CHECK_EQ_INT(v, 7);
	CHECK_OK(hml__h5_attr_set_str(file, "n", "text"));
	CHECK_FAILS(hml__h5_attr_get_i64(file, "n", &v), HML_EINVALID, "'n'");
	CHECK_FAILS(hml__h5_attr_get_str(file, "name", &str), HML_EINVALID, "'name'");
	CHECK_FAILS(hml__h5_attr_get_str(file, "missing", &str), HML_ENOTFOUND,
	            "attribute 'missing' not found");
	CHECK_FAILS(hml__h5_attr_get_i64(file, "missing", &v), HML_ENOTFOUND, "'missing'");
	H5Fclose(file);

	CHECK(hml__h5_type(HML_F32) == H5T_NATIVE_FLOAT);
	CHECK(hml__h5_type(HML_F64) == H5T_NATIVE_DOUBLE);
	CHECK(hml__h5_type((hml_dtype)9) < 0);
	CHECK_EQ_INT(hml__h5_dtype(H5T_IEEE_F32BE), HML_F32);
	CHECK_EQ_INT(hml__h5_dtype(H5T_NATIVE_DOUBLE), HML_F64);
	CHECK_EQ_INT(hml__h5_dtype(H5T_NATIVE_INT), 0);
	{
		unsigned maj, min, rel;
		char want[32];
		H5get_libversion(&maj, &min, &rel);
		snprintf(want, sizeof(want), "%u.%u.%u", maj, min, rel);
		CHECK_STR(hml__h5_version(), want);
		/* The version the CLI prints without loading HDF5 (its headers'). */
		CHECK_STR(hml__hdf5_version(), want);
	}
	/* The error text ends with HDF5's own reason. */
	file = H5Fopen(tmp_path("missing.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
	CHECK(file < 0);
	CHECK_EQ_INT(hml__h5_error(HML_EIO, "cannot open '%s'", "missing.h5"), HML_EIO);
	CHECK_CONTAINS(hml_error_last()->message, "cannot open 'missing.h5': ");
	CHECK_CONTAINS(hml_error_last()->message, "No such file or directory");
	H5Eclear2(H5E_DEFAULT);
	CHECK_EQ_INT(hml__h5_error(HML_EIO, "plain %d", 3), HML_EIO);
	CHECK_STR(hml_error_last()->message, "plain 3");
	CHECK_NO_LEAKS(s);
}

TEST(later_runs_append)
{
	const char *path = tmp_path("runs.h5");
	const int64_t n2[2] = { 7, 5 };
	idsnap s;

	snap(&s);
	CHECK_OK(write_run(path, &L_F64, 0, 7, 0, 0));
	CHECK_OK(write_run(path, &L_F64, 1, 5, 200, 0));
	verify(path, &L_F64, 2, n2, 1);
	/* A run that records no call still counts. */
	CHECK_OK(write_run(path, &L_F64, 2, 0, 0, 0));
	{
		hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
		hid_t g = H5Gopen2(f, "bonds", H5P_DEFAULT);
		CHECK_EQ_INT(attr_i64(g, "runs"), 3);
		H5Gclose(g);
		H5Fclose(f);
	}
	/* That run's number (2) has no calls; run 3 follows it. */
	CHECK_OK(write_run(path, &L_F64, 3, 4, 0, 0));
	{
		hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
		hid_t g = H5Gopen2(f, "bonds", H5P_DEFAULT);
		int64_t n = 0, i;
		collected_call *recs = read_calls(g, &n);
		CHECK_EQ_INT(attr_i64(g, "runs"), 4);
		CHECK_EQ_INT(n, 16);
		for (i = 0; recs && i < n; i++)
			CHECK_EQ_INT(recs[i].run, i < 7 ? 0 : i < 12 ? 1 : 3);
		if (recs && n == 16) {
			CHECK_EQ_INT(recs[12].call, 0);
			CHECK_EQ_INT(recs[12].input_offset,
			             recs[11].input_offset + recs[11].input_rows);
		}
		free(recs);
		H5Gclose(g);
		H5Fclose(f);
	}
	CHECK_NO_LEAKS(s);
}

/* Two collectors of one label alive together, and a second label in the
 * same file, flushing in turns: every call lands once, rows stay aligned. */
TEST(collectors_side_by_side)
{
	const char *path = tmp_path("side.h5");
	hml__collector_desc d1 = make_desc(&L_F32, path, 700, 60);
	hml__collector_desc d2 = make_desc(&L_F32, path, 1500, 60);
	hml__collector_desc d3 = make_desc(&L_F64, path, 1, 60);
	hml__collector *a = NULL, *b = NULL, *o = NULL;
	const int64_t n[2] = { 30, 21 }, no[1] = { 17 };
	int64_t i;
	idsnap s;

	snap(&s);
	CHECK_OK(hml__collector_open(&a, &d1));
	CHECK_OK(hml__collector_open(&b, &d2));
	CHECK_OK(hml__collector_open(&o, &d3));
	if (!a || !b || !o)
		return;
	for (i = 0; i < 30; i++) {
		CHECK_OK(append_known(a, &L_F32, 0, i));
		if (i < 21)
			CHECK_OK(append_known(b, &L_F32, 1, i));
		if (i < 17)
			CHECK_OK(append_known(o, &L_F64, 0, i));
		if (i == 13)
			CHECK_OK(hml__collector_flush(b));
	}
	CHECK_EQ_INT(hml__collector_rows(a), 30 + 30);  /* 1 + i % 3 */
	CHECK_OK(hml__collector_close(a));
	CHECK_OK(hml__collector_close(o));
	CHECK_OK(hml__collector_close(b));
	verify(path, &L_F32, 2, n, 0);
	verify(path, &L_F64, 1, no, 1);
	CHECK_NO_LEAKS(s);
}

TEST(mismatch_leaves_file_alone)
{
	const char *path = tmp_path("mismatch.h5");
	layout bad = L_F32;
	hml__collector_desc d;
	hml__collector *c = (hml__collector *)&d;
	unsigned char *before;
	size_t len;
	char want[1024];
	const int64_t n[1] = { 6 };
	idsnap s;

	snap(&s);
	CHECK_OK(write_run(path, &L_F32, 0, 6, 0, 0));
	before = slurp(path, &len);
	CHECK(before != NULL && len > 0);

	bad.shape[0][2] = 6;
	d = make_desc(&bad, path, 0, 0);
	CHECK_EQ_INT(hml__collector_open(&c, &d), HML_ESHAPE);
	CHECK(c == NULL);
	snprintf(want, sizeof(want), "region 'tree' in '%s' holds input rows [4, 3, 5] "
	         "of float32 but this run gives [4, 3, 6] of float32", path);
	CHECK_STR(hml_error_last()->message, want);
	CHECK(same_bytes(before, len, path));

	bad = L_F32;
	bad.dt[1] = HML_F64;
	d = make_desc(&bad, path, 0, 0);
	CHECK_EQ_INT(hml__collector_open(&c, &d), HML_ESHAPE);
	snprintf(want, sizeof(want), "region 'tree' in '%s' holds output rows [3] "
	         "of float32 but this run gives [3] of float64", path);
	CHECK_STR(hml_error_last()->message, want);
	CHECK(same_bytes(before, len, path));

	bad = L_F32;
	bad.nd[1] = 2;
	bad.shape[1][1] = 1;
	d = make_desc(&bad, path, 0, 0);
	CHECK_FAILS(hml__collector_open(&c, &d), HML_ESHAPE,
	            "holds output rows [3] of float32 but this run gives [3, 1] of float32");
	CHECK(same_bytes(before, len, path));

	/* The right shapes still work after all that. */
	verify(path, &L_F32, 1, n, 1);
	free(before);
	CHECK_NO_LEAKS(s);
}

TEST(bad_descriptions)
{
	hml__collector_desc d = make_desc(&L_F64, tmp_path("never.h5"), 0, 0);
	hml__collector *c = NULL;

	d.label = "a/b";
	CHECK_FAILS(hml__collector_open(&c, &d), HML_EINVALID, "'a/b'");
	d.label = "";
	CHECK_EQ_INT(hml__collector_open(&c, &d), HML_EINVALID);
	d = make_desc(&L_F64, d.path, 0, 0);
	d.in_dtype = (hml_dtype)5;
	CHECK_FAILS(hml__collector_open(&c, &d), HML_EINVALID, "unknown input dtype");
	d = make_desc(&L_F64, d.path, 0, 0);
	d.out_ndim = HML_MAX_DIMS + 1;
	CHECK_EQ_INT(hml__collector_open(&c, &d), HML_EINVALID);
	d = make_desc(&L_F64, d.path, 0, 0);
	d.in_shape[0] = 0;
	CHECK_FAILS(hml__collector_open(&c, &d), HML_EINVALID, "input dim 0 is 0");
	d.path = NULL;
	CHECK_EQ_INT(hml__collector_open(&c, &d), HML_EINVALID);
	CHECK_EQ_INT(hml__collector_open(&c, NULL), HML_EINVALID);
	CHECK(!exists(tmp_path("never.h5")));
	CHECK_EQ_INT(hml__collector_append(NULL, NULL, 0, NULL, 0, 0), HML_EINVALID);
	CHECK_EQ_INT(hml__collector_flush(NULL), HML_EINVALID);
	CHECK_EQ_INT(hml__collector_close(NULL), 0);
	CHECK_EQ_INT(hml__collector_rows(NULL), 0);

	/* Bad appends leave the collector as it was. */
	d = make_desc(&L_F64, tmp_path("appends.h5"), 0, 0);
	CHECK_OK(hml__collector_open(&c, &d));
	if (c) {
		double row[5] = { 0 };
		void *dst = NULL;
		const int64_t n[1] = { 2 };
		CHECK_OK(append_known(c, &L_F64, 0, 0));
		CHECK_FAILS(hml__collector_append(c, NULL, 2, row, 1, 0), HML_EINVALID,
		            "input rows");
		CHECK_FAILS(hml__collector_append(c, row, -1, row, 1, 0), HML_EINVALID,
		            "-1 input rows");
		CHECK_EQ_INT(hml__collector_append(c, row, INT64_MAX / 2, row, 1, 0),
		             HML_ENOMEM);
		/* Rows placed for a call are recorded only by a commit with
		 * both sides placed; a call never committed leaves nothing. */
		CHECK_FAILS(hml__collector_commit(c, 0), HML_EINVALID,
		            "a call is recorded before its rows were placed");
		CHECK_OK(hml__collector_next(c, HML__COLLECTOR_INPUT, 3, &dst));
		CHECK(dst != NULL);
		CHECK_FAILS(hml__collector_commit(c, 0), HML_EINVALID,
		            "before its rows were placed");
		CHECK_FAILS(hml__collector_next(c, HML__COLLECTOR_OUTPUT, -2, &dst),
		            HML_EINVALID, "-2 output rows");
		CHECK_EQ_INT(hml__collector_next(c, 2, 1, &dst), HML_EINVALID);
		CHECK_EQ_INT(hml__collector_next(NULL, 0, 1, &dst), HML_EINVALID);
		CHECK_EQ_INT(hml__collector_commit(NULL, 0), HML_EINVALID);
		CHECK_OK(append_known(c, &L_F64, 0, 1));
		CHECK_EQ_INT(hml__collector_rows(c), 1 + 2);
		CHECK_OK(hml__collector_close(c));
		verify(d.path, &L_F64, 1, n, 1);
	}
}

TEST(unwritable_places)
{
	char dir[700], path[800];
	hml__collector_desc d = make_desc(&L_F64, "/nonexistent/x.h5", 0, 0);
	hml__collector *c = NULL;
	hid_t file;
	int fd;

	CHECK_FAILS(hml__collector_open(&c, &d), HML_EIO,
	            "cannot write '/nonexistent/x.h5': No such file or directory");
	CHECK(c == NULL);
	d.path = "/proc/hml-test-x.h5";
	CHECK_FAILS(hml__collector_open(&c, &d), HML_EIO, "cannot write '/proc/hml-test-x.h5': ");
	CHECK(!exists("/proc/hml-test-x.h5"));
	CHECK_FAILS(hml__h5_open_rw(&file, tmpdir), HML_EIO, "Is a directory");
	CHECK_FAILS(hml__h5_open_rw(&file, "/dev/null"), HML_EIO,
	            "cannot write '/dev/null': not a regular file");
	CHECK_FAILS(hml__h5_open_ro(&file, "/nonexistent/x.h5"), HML_ENOTFOUND,
	            "cannot read '/nonexistent/x.h5': No such file or directory");

	/* A directory without write permission. Root writes there anyway:
	 * then there is nothing to check. */
	snprintf(dir, sizeof(dir), "%s/readonly", tmpdir);
	snprintf(path, sizeof(path), "%s/x.h5", dir);
	CHECK(mkdir(dir, 0700) == 0);
	CHECK(chmod(dir, 0500) == 0);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0) {
		close(fd);
		unlink(path);
		printf("note: %s is writable despite mode 0500 (running as root?): "
		       "skipping the permission check\n", dir);
	} else {
		d.path = path;
		CHECK_FAILS(hml__collector_open(&c, &d), HML_EIO, "Permission denied");
		CHECK(!exists(path));
	}
	chmod(dir, 0700);
	rmdir(dir);
}

TEST(not_hdf5_left_alone)
{
	const char *path = tmp_path("notes.txt");
	const char *text = "these are my notes, not an HDF5 file\n";
	hml__collector_desc d = make_desc(&L_F64, path, 0, 0);
	hml__collector *c = NULL;
	hid_t file;
	char want[800];

	write_text(path, text);
	snprintf(want, sizeof(want), "'%s' is not an HDF5 file", path);
	CHECK_FAILS(hml__collector_open(&c, &d), HML_EIO, want);
	CHECK_STR(hml_error_last()->message, want);
	CHECK(same_bytes((const unsigned char *)text, strlen(text), path));
	CHECK_FAILS(hml__h5_open_rw(&file, path), HML_EIO, want);
	CHECK_FAILS(hml__h5_open_ro(&file, path), HML_EIO, want);
	CHECK(same_bytes((const unsigned char *)text, strlen(text), path));

	/* An empty file holds nothing: it becomes the HDF5 file. */
	path = tmp_path("empty.h5");
	write_text(path, "");
	d.path = path;
	CHECK_OK(write_run(path, &L_F64, 0, 3, 0, 0));
	{
		const int64_t n[1] = { 3 };
		verify(path, &L_F64, 1, n, 1);
	}
}

/* HML_DB that is a FIFO or a symbolic link: refused at the probe and the
 * opening, without blocking, the FIFO still one and the link's target as
 * it was. */
TEST(fifo_and_link_refused)
{
	const char *fifo = tmp_path("db.fifo"), *target = tmp_path("target.txt");
	const char *link_path = tmp_path("db-link.h5"), *text = "not to be touched\n";
	hml__collector_desc d = make_desc(&L_F64, fifo, 0, 0);
	hml__collector *c = NULL;
	struct stat st;

	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK_FAILS(hml__collector_probe(fifo), HML_EINVALID, "not a regular file (a FIFO)");
	CHECK_FAILS(hml__collector_open(&c, &d), HML_EINVALID, "not a regular file (a FIFO)");
	CHECK(c == NULL && lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	write_text(target, text);
	CHECK(symlink(target, link_path) == 0);
	d.path = link_path;
	CHECK_FAILS(hml__collector_probe(link_path), HML_EINVALID, "(a symbolic link)");
	CHECK_FAILS(hml__collector_open(&c, &d), HML_EINVALID, "(a symbolic link)");
	CHECK(c == NULL && lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(same_bytes((const unsigned char *)text, strlen(text), target));
}

TEST(truncated_hdf5_left_alone)
{
	const char *path = tmp_path("truncated.h5");
	hml__collector_desc d = make_desc(&L_F64, path, 0, 0);
	hml__collector *c = NULL;
	unsigned char *before;
	size_t len = 0;
	hid_t file;
	int cuts[3] = { 2, 3, 8 }, i;

	for (i = 0; i < 3; i++) {
		unlink(path);
		CHECK_OK(write_run(path, &L_F64, 0, 40, 0, 0));
		free(slurp(path, &len));
		CHECK(len > 1000);
		CHECK(truncate(path, (off_t)(len * (size_t)(cuts[i] - 1) / (size_t)cuts[i])) == 0);
		before = slurp(path, &len);
		CHECK_FAILS(hml__collector_open(&c, &d), HML_EIO,
		            "is not a valid HDF5 file: truncated file (");
		CHECK(strlen(hml_error_last()->message) > strlen(path) + 16);
		CHECK(strchr(hml_error_last()->message, '\n') == NULL);
		CHECK(same_bytes(before, len, path));
		CHECK_FAILS(hml__h5_open_ro(&file, path), HML_EIO,
		            "is not a valid HDF5 file: truncated file (");
		CHECK(same_bytes(before, len, path));
		free(before);
	}
	printf("note: truncated file: %s\n", hml_error_last()->message);

	/* Intact superblock, garbage where the root group's index was. */
	unlink(path);
	CHECK_OK(write_run(path, &L_F64, 0, 4, 0, 0));
	{
		FILE *f = fopen(path, "r+b");
		char junk[600];

		memset(junk, 0x5a, sizeof(junk));
		CHECK(f && fseek(f, 136, SEEK_SET) == 0 &&
		      fwrite(junk, 1, sizeof(junk), f) == sizeof(junk));
		if (f)
			fclose(f);
	}
	before = slurp(path, &len);
	CHECK_EQ_INT(hml__collector_open(&c, &d), HML_EIO);
	CHECK(c == NULL);
	printf("note: damaged file: %s\n", hml_error_last()->message);
	CHECK(same_bytes(before, len, path));
	free(before);
}

/* A flush that fails keeps the data; a later one writes it. */
TEST(failed_flush_keeps_data)
{
	const char *path = tmp_path("retry.h5");
	const char *text = "replaced by someone\n";
	hml__collector_desc d = make_desc(&L_F64, path, 0, 60);
	hml__collector *c = NULL;
	const int64_t n[1] = { 9 };
	int64_t i;
	idsnap s;

	snap(&s);
	CHECK_OK(hml__collector_open(&c, &d));
	if (!c)
		return;
	for (i = 0; i < 4; i++)
		CHECK_OK(append_known(c, &L_F64, 0, i));
	unlink(path);
	write_text(path, text);
	CHECK_FAILS(hml__collector_flush(c), HML_EIO, "is not an HDF5 file");
	CHECK(same_bytes((const unsigned char *)text, strlen(text), path));
	for (; i < 9; i++)
		CHECK_OK(append_known(c, &L_F64, 0, i));
	CHECK_FAILS(hml__collector_flush(c), HML_EIO, "is not an HDF5 file");
	unlink(path);
	/* The file is gone: the next flush starts it again with the group. */
	CHECK_OK(hml__collector_flush(c));
	CHECK_OK(hml__collector_close(c));
	verify(path, &L_F64, 1, n, 1);
	CHECK_NO_LEAKS(s);
}

static void pause_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

TEST(flush_policy)
{
	const char *path = tmp_path("policy.h5");
	hml__collector_desc d = make_desc(&L_F32, path, 1, 60);
	hml__collector *c = NULL;
	int64_t i, rows = 0;
	idsnap s;

	snap(&s);
	/* flush_bytes tiny: on disk after every call. */
	CHECK_OK(hml__collector_open(&c, &d));
	if (!c)
		return;
	CHECK_EQ_INT(rows_on_disk(path, "tree"), 0);
	for (i = 0; i < 6; i++) {
		CHECK_OK(append_known(c, &L_F32, 0, i));
		rows += collected_rows(0, i);
		CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
		CHECK_EQ_INT(hml__collector_rows(c), rows);
	}
	CHECK_OK(hml__collector_close(c));
	CHECK_NO_LEAKS(s);

	/* Large limits: nothing until flush() or close(). */
	d = make_desc(&L_F32, path, 1 << 20, 60);
	CHECK_OK(hml__collector_open(&c, &d));
	if (!c)
		return;
	for (i = 0; i < 5; i++)
		CHECK_OK(append_known(c, &L_F32, 1, i));
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
	CHECK_OK(hml__collector_flush(c));
	rows += 1 + 2 + 3 + 1 + 2;
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
	CHECK_OK(append_known(c, &L_F32, 1, 5));
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
	CHECK_OK(hml__collector_close(c));
	rows += 3;
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);

	/* Bytes: rows of 240 + 12 bytes and 56 per record; calls 0 and 1
	 * buffer 868 bytes, call 2 brings that to 1668. */
	d = make_desc(&L_F32, path, 1000, 60);
	CHECK_OK(hml__collector_open(&c, &d));
	if (!c)
		return;
	CHECK_OK(append_known(c, &L_F32, 2, 0));
	CHECK_OK(append_known(c, &L_F32, 2, 1));
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
	CHECK_OK(append_known(c, &L_F32, 2, 2));
	rows += 6;
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
	CHECK_OK(hml__collector_close(c));

	/* Time: the first append after flush_seconds writes everything. */
	d = make_desc(&L_F32, path, 1 << 20, 0.2);
	CHECK_OK(hml__collector_open(&c, &d));
	if (!c)
		return;
	CHECK_OK(append_known(c, &L_F32, 3, 0));
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
	pause_ms(250);
	CHECK_OK(append_known(c, &L_F32, 3, 1));
	rows += 3;
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
	CHECK_OK(append_known(c, &L_F32, 3, 2));
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
	CHECK_OK(hml__collector_close(c));
	rows += 3;
	CHECK_EQ_INT(rows_on_disk(path, "tree"), rows);
	{
		const int64_t n[4] = { 6, 6, 3, 3 };
		verify(path, &L_F32, 4, n, 1);
	}
	CHECK_NO_LEAKS(s);
}

/* ---- a process killed while it collects ---------------------------------- */

typedef struct {
	int64_t calls, rows;
} progress;

static const layout L_KILL = { "killed", { HML_F64, HML_F32 }, { 1, 1 },
                               { { 3 }, { 2 } } };

static void child_collect(const char *path, int fd, int explicit_every)
{
	hml__collector_desc d = make_desc(&L_KILL, path, 0, 0.01);
	hml__collector *c = NULL;
	progress p;
	int64_t call;

	if (hml__collector_open(&c, &d) < 0)
		_exit(2);
	for (call = 0;; call++) {
		if (append_known(c, &L_KILL, 0, call) < 0)
			_exit(3);
		if (call % explicit_every == explicit_every - 1) {
			if (hml__collector_flush(c) < 0)
				_exit(4);
			p.calls = call + 1;
			p.rows = hml__collector_rows(c);
			if (write(fd, &p, sizeof(p)) != (ssize_t)sizeof(p))
				_exit(5);
		}
	}
}

/* Read one progress message; 0 at end of file, -1 after 20 s of nothing. */
static int read_progress(int fd, progress *p)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(*p)) {
		if (poll(&pfd, 1, 20000) <= 0)
			return -1;
		n = read(fd, (char *)p + got, sizeof(*p) - got);
		if (n == 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0)
			got += (size_t)n;
	}
	return 1;
}

/* Every complete call up to the last one reported is there, with the right
 * values; the calls table agrees with the rows on disk. */
static void verify_killed(const char *path, const progress *last, int iteration)
{
	hsize_t dims[2][2], maxdims[2];
	collected_call *recs = NULL;
	double *data[2] = { NULL, NULL };
	int64_t n = 0, i, r, k, next[2] = { 0, 0 };
	hid_t file, group = H5I_INVALID_HID;
	int side, bad = 0;
	static const char *const names[2] = { "input", "output" };

	file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (file < 0) {
		fprintf(stderr, "kill %d: the file does not open\n", iteration);
		CHECK(!"killed file opens");
		return;
	}
	if ((group = H5Gopen2(file, L_KILL.label, H5P_DEFAULT)) < 0) {
		CHECK(!"group opens");
		goto done;
	}
	for (side = 0; side < 2; side++) {
		CHECK_EQ_INT(dataset_dims(group, names[side], dims[side], maxdims), 2);
		data[side] = read_doubles(group, names[side],
		                          (size_t)(dims[side][0] * dims[side][1]));
		CHECK(data[side] != NULL);
	}
	recs = read_calls(group, &n);
	CHECK(recs != NULL);
	if (!recs || !data[0] || !data[1])
		goto done;
	CHECK(n >= last->calls);
	for (i = 0; i < n && !bad; i++) {
		const int64_t off[2] = { recs[i].input_offset, recs[i].output_offset };
		const int64_t cnt[2] = { recs[i].input_rows, recs[i].output_rows };

		bad |= recs[i].run != 0 || recs[i].call != i ||
		       recs[i].original_seconds != collected_seconds(0, i);
		for (side = 0; side < 2 && !bad; side++) {
			int64_t nf = L_KILL.shape[side][0];
			bad |= off[side] != next[side] || cnt[side] != collected_rows(side, i) ||
			       off[side] + cnt[side] > (int64_t)dims[side][0];
			for (r = 0; r < cnt[side] && !bad; r++)
				for (k = 0; k < nf && !bad; k++)
					bad |= data[side][(off[side] + r) * nf + k] !=
					       collected_value(side, 0, i, r, k);
			next[side] += cnt[side];
		}
		if (bad)
			fprintf(stderr, "kill %d: call %lld of %lld is wrong\n", iteration,
			        (long long)i, (long long)n);
	}
	CHECK(!bad);
	/* Rows beyond the last record are what a flush cut short left; the
	 * next flush writes over them. */
	CHECK(next[0] <= (int64_t)dims[0][0]);
	CHECK(next[1] <= (int64_t)dims[1][0]);
	CHECK(next[0] >= last->rows);
	printf("kill %d: reported %lld calls flushed, file holds %lld calls "
	       "(+%lld/%lld rows past them)\n", iteration, (long long)last->calls,
	       (long long)n, (long long)((int64_t)dims[0][0] - next[0]),
	       (long long)((int64_t)dims[1][0] - next[1]));
done:
	free(recs);
	free(data[0]);
	free(data[1]);
	if (group >= 0)
		H5Gclose(group);
	H5Fclose(file);
}

TEST(killed_process_leaves_readable_file)
{
	const char *env = getenv("HML_KILL_ITERATIONS");
	const char *path = tmp_path("killed.h5");
	int iterations = env ? atoi(env) : 5, it;

	for (it = 0; it < iterations; it++) {
		progress p = { 0, 0 }, last = { 0, 0 };
		int fds[2], status = 0, want = 2 + (it * 7) % 23, got = 0, rc;
		pid_t pid;

		unlink(path);
		if (pipe(fds) != 0) {
			CHECK(!"pipe");
			return;
		}
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0) {
			CHECK(!"fork");
			return;
		}
		if (pid == 0) {
			close(fds[0]);
			child_collect(path, fds[1], 3 + it % 5);
			_exit(6);
		}
		close(fds[1]);
		while (got < want && (rc = read_progress(fds[0], &p)) == 1) {
			last = p;
			got++;
		}
		/* Kill at a moment that varies: right after a report, or some
		 * hundreds of microseconds into the next stretch of appends. */
		if (it % 3) {
			struct timespec ts = { 0, (long)((it * 389) % 3000) * 1000L };
			nanosleep(&ts, NULL);
		}
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		if (!WIFSIGNALED(status))
			fprintf(stderr, "kill %d: child exited with %d\n", it,
			        WEXITSTATUS(status));
		CHECK_EQ_INT(got, want);
		/* Reports written before the kill count too. */
		while (read_progress(fds[0], &p) == 1)
			last = p;
		close(fds[0]);
		verify_killed(path, &last, it);
	}
}

/* ---- a process killed at every write -------------------------------------- */

/*
 * The test executable's own pwrite() and ftruncate() stand in for libc's,
 * for hml's writes and HDF5's alike. In a child process with crash_at >= 0,
 * write number `crash_at` is never made: the process kills itself instead.
 * Running the same session with crash_at = 0, 1, 2, ... stops it at every
 * point between two writes, which random kills reach only by luck.
 */
static long crash_at = -1, writes_made;

static void maybe_crash(void)
{
	if (crash_at >= 0 && writes_made == crash_at)
		kill(getpid(), SIGKILL);
	writes_made++;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
	maybe_crash();
	return real(fd, buf, n, off);
}

int ftruncate(int fd, off_t len)
{
	static int (*real)(int, off_t);

	if (!real)
		real = (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");
	maybe_crash();
	return real(fd, len);
}

/* Rows of 128 KiB: 8 rows to a chunk, so the session below allocates new
 * chunks and grows the chunk index as it goes. */
#define CRASH_FEATURES (128 * 128)
#define CRASH_BASE_CALLS 20
#define CRASH_SESSION_CALLS 9
#define CRASH_LATER_CALLS 4

static const layout L_CRASH = { "crashed", { HML_F64, HML_F64 }, { 2, 1 },
                                { { 128, 128 }, { 3 } } };
static const layout L_CRASH2 = { "second", { HML_F64, HML_F64 }, { 1, 1 },
                                 { { 2 }, { 3 } } };

/* Distinct for every element of every call of every session (`tag`). */
static double crash_value(int side, int64_t tag, int64_t call, int64_t row, int64_t k)
{
	return (double)((((tag * 100 + call) * 10 + row) * 2 + side) * 100000 + k);
}

static int crash_append(hml__collector *c, const layout *l, int64_t tag, int64_t call)
{
	double *buf[2];
	int64_t nf, r, k;
	int side, rc;

	for (side = 0; side < 2; side++) {
		nf = features(l, side);
		buf[side] = malloc((size_t)(collected_rows(side, call) * nf) * sizeof(double));
		for (r = 0; buf[side] && r < collected_rows(side, call); r++)
			for (k = 0; k < nf; k++)
				buf[side][r * nf + k] = crash_value(side, tag, call, r, k);
	}
	rc = (buf[0] && buf[1])
	     ? hml__collector_append(c, buf[0], collected_rows(0, call), buf[1],
	                             collected_rows(1, call), collected_seconds(tag, call))
	     : HML_ENOMEM;
	free(buf[0]);
	free(buf[1]);
	return rc;
}

/* What the child does: a later run of `crashed` with three flushes, a new
 * region `second` in the same file, and the closes. Returns 0 or the step
 * that failed. */
static int crash_session(const char *path)
{
	hml__collector_desc d = make_desc(&L_CRASH, path, 1 << 30, 3600);
	hml__collector_desc d2 = make_desc(&L_CRASH2, path, 1 << 30, 3600);
	hml__collector *c = NULL, *c2 = NULL;
	int64_t i;

	if (hml__collector_open(&c, &d) < 0)
		return 1;
	for (i = 0; i < CRASH_SESSION_CALLS; i++) {
		if (crash_append(c, &L_CRASH, 1, i) < 0)
			return 2;
		if (i % 3 == 2 && hml__collector_flush(c) < 0)
			return 3;
	}
	if (hml__collector_open(&c2, &d2) < 0 || crash_append(c2, &L_CRASH2, 1, 0) < 0 ||
	    hml__collector_close(c2) < 0)
		return 4;
	return hml__collector_close(c) < 0 ? 5 : 0;
}

typedef struct {
	int64_t calls[3];     /* per tag: 0 the first run, 1 the killed one, 2 a later one */
	int64_t extra[2];     /* rows past the last call */
	int64_t second;       /* calls of region `second`, -1 if absent */
} crash_seen;

#define FAIL_IF(cond, ...) do { if (cond) { snprintf(why, whylen, __VA_ARGS__); \
	goto done; } } while (0)

/* Everything one can ask of the file: it opens; the calls table holds the
 * first run complete, then a prefix of the killed run, then `later` calls
 * of a later run (-1: none expected); runs are numbered in order; every row
 * of every call is right; only rows past the last call are unaccounted. */
static int crash_check(const char *path, int64_t later, crash_seen *seen,
                       char *why, size_t whylen)
{
	hsize_t dims[2][HML_MAX_DIMS + 1], maxdims[HML_MAX_DIMS + 1];
	collected_call *recs = NULL;
	double *data[2] = { NULL, NULL };
	int64_t n = 0, i, r, k, nf, next[2] = { 0, 0 }, run_of[3] = { -1, -1, -1 };
	int64_t prev_tag = 0, runs;
	hid_t file, group = H5I_INVALID_HID, g2;
	int side, ok = -1;
	static const char *const names[2] = { "input", "output" };

	memset(seen, 0, sizeof(*seen));
	seen->second = -1;
	why[0] = '\0';
	if ((file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
		hml__h5_error(HML_EIO, "does not open");
		snprintf(why, whylen, "%s", hml_error_last()->message);
		return -1;
	}
	FAIL_IF((group = H5Gopen2(file, L_CRASH.label, H5P_DEFAULT)) < 0, "no group");
	for (side = 0; side < 2; side++) {
		FAIL_IF(dataset_dims(group, names[side], dims[side], maxdims) !=
		        L_CRASH.nd[side] + 1, "%s unreadable", names[side]);
		nf = features(&L_CRASH, side);
		data[side] = read_doubles(group, names[side],
		                          (size_t)(dims[side][0] * (hsize_t)nf));
		FAIL_IF(!data[side], "%s rows unreadable", names[side]);
	}
	recs = read_calls(group, &n);
	FAIL_IF(!recs, "calls unreadable");
	runs = attr_i64(group, "runs");
	for (i = 0; i < n; i++) {
		collected_call *c = &recs[i];
		const int64_t off[2] = { c->input_offset, c->output_offset };
		const int64_t cnt[2] = { c->input_rows, c->output_rows };
		int64_t tag = (int64_t)c->original_seconds;

		FAIL_IF(tag < prev_tag || tag > 2, "record %lld: tag %lld after %lld",
		        (long long)i, (long long)tag, (long long)prev_tag);
		prev_tag = tag;
		FAIL_IF(c->call != seen->calls[tag], "record %lld: call %lld, expected %lld",
		        (long long)i, (long long)c->call, (long long)seen->calls[tag]);
		FAIL_IF(c->original_seconds != collected_seconds(tag, c->call), "record %lld: seconds",
		        (long long)i);
		if (run_of[tag] < 0)
			run_of[tag] = c->run;
		FAIL_IF(c->run != run_of[tag] || (tag > 0 && run_of[tag - 1] >= 0 &&
		        c->run <= run_of[tag - 1]) || c->run >= runs,
		        "record %lld: run %lld (runs %lld)", (long long)i, (long long)c->run,
		        (long long)runs);
		seen->calls[tag]++;
		for (side = 0; side < 2; side++) {
			nf = features(&L_CRASH, side);
			FAIL_IF(off[side] != next[side] || cnt[side] != collected_rows(side, c->call) ||
			        off[side] + cnt[side] > (int64_t)dims[side][0],
			        "record %lld: %s rows %lld+%lld of %lld", (long long)i,
			        names[side], (long long)off[side], (long long)cnt[side],
			        (long long)dims[side][0]);
			for (r = 0; r < cnt[side]; r++)
				for (k = 0; k < nf; k++)
					FAIL_IF(data[side][(off[side] + r) * nf + k] !=
					        crash_value(side, tag, c->call, r, k),
					        "record %lld: wrong %s value", (long long)i,
					        names[side]);
			next[side] += cnt[side];
		}
	}
	FAIL_IF(seen->calls[0] != CRASH_BASE_CALLS, "first run has %lld calls",
	        (long long)seen->calls[0]);
	FAIL_IF(seen->calls[1] > CRASH_SESSION_CALLS, "killed run has %lld calls",
	        (long long)seen->calls[1]);
	FAIL_IF(later >= 0 && seen->calls[2] != later, "later run has %lld calls",
	        (long long)seen->calls[2]);
	for (side = 0; side < 2; side++)
		seen->extra[side] = (int64_t)dims[side][0] - next[side];
	/* The other region: absent, or whole. */
	if (H5Lexists(file, L_CRASH2.label, H5P_DEFAULT) > 0) {
		collected_call *r2;
		int64_t n2 = 0;
		double *in2;

		FAIL_IF((g2 = H5Gopen2(file, L_CRASH2.label, H5P_DEFAULT)) < 0, "second: no group");
		r2 = read_calls(g2, &n2);
		in2 = read_doubles(g2, "input", 2 * (size_t)(n2 > 0 ? collected_rows(0, 0) : 0));
		seen->second = n2;
		ok = r2 && in2 && n2 <= 1 &&
		     (n2 == 0 || (r2[0].input_rows == 1 && in2[0] == crash_value(0, 1, 0, 0, 0) &&
		                  in2[1] == crash_value(0, 1, 0, 0, 1)));
		free(r2);
		free(in2);
		H5Gclose(g2);
		FAIL_IF(!ok, "second: wrong");
		ok = -1;
	}
	ok = 0;
done:
	free(recs);
	free(data[0]);
	free(data[1]);
	if (group >= 0)
		H5Gclose(group);
	H5Fclose(file);
	return ok;
}

static int copy_file(const char *from, const char *to)
{
	size_t len;
	unsigned char *buf = slurp(from, &len);
	FILE *f = buf ? fopen(to, "wb") : NULL;
	int ok = f && fwrite(buf, 1, len, f) == len;

	if (f && fclose(f) != 0)
		ok = 0;
	free(buf);
	return ok ? 0 : -1;
}

TEST(killed_at_every_write)
{
	const char *base = tmp_path("crash-base.h5"), *path = tmp_path("crash.h5");
	hml__collector_desc d = make_desc(&L_CRASH, base, 1 << 30, 3600);
	hml__collector *c = NULL;
	crash_seen seen;
	char why[256];
	long k, with_extra = 0, cut_runs[CRASH_SESSION_CALLS + 1] = { 0 };
	int64_t i;
	int status;
	pid_t pid;

	/* The first run, and a region that has nothing to do with it. */
	CHECK_OK(write_run(base, &L_F64, 0, 3, 0, 0));
	CHECK_OK(hml__collector_open(&c, &d));
	if (!c)
		return;
	for (i = 0; i < CRASH_BASE_CALLS; i++) {
		CHECK_OK(crash_append(c, &L_CRASH, 0, i));
		if (i % 7 == 6)
			CHECK_OK(hml__collector_flush(c));
	}
	CHECK_OK(hml__collector_close(c));

	for (k = 0; k < 100000; k++) {
		if (copy_file(base, path) < 0) {
			CHECK(!"copy the base file");
			return;
		}
		fflush(stdout);
		fflush(stderr);
		if ((pid = fork()) == 0) {
			writes_made = 0;
			crash_at = k;
			/* Codes below 10 are not ours: valgrind's --error-exitcode
			 * for leaks in libraries, say. */
			_exit(10 * crash_session(path));
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			CHECK(!"fork and wait");
			return;
		}
		if (WIFEXITED(status)) {
			/* The session ran to its end: every point has been seen. */
			CHECK(WEXITSTATUS(status) < 10);
			CHECK_OK(crash_check(path, -1, &seen, why, sizeof(why)));
			CHECK_EQ_INT(seen.calls[1], CRASH_SESSION_CALLS);
			CHECK_EQ_INT(seen.second, 1);
			CHECK_EQ_INT(seen.extra[0], 0);
			CHECK_EQ_INT(seen.extra[1], 0);
			break;
		}
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		if (crash_check(path, -1, &seen, why, sizeof(why)) < 0) {
			fprintf(stderr, "killed before write %ld: %s\n", k, why);
			CHECK(!"the killed run's file is whole");
			continue;
		}
		cut_runs[seen.calls[1]]++;
		with_extra += seen.extra[0] || seen.extra[1];
		/* A later run takes the file from there. */
		d.path = path;
		CHECK_OK(hml__collector_open(&c, &d));
		for (i = 0; c && i < CRASH_LATER_CALLS; i++)
			CHECK_OK(crash_append(c, &L_CRASH, 2, i));
		CHECK_OK(hml__collector_close(c));
		if (crash_check(path, CRASH_LATER_CALLS, &seen, why, sizeof(why)) < 0) {
			fprintf(stderr, "after a kill before write %ld and a later run: %s\n",
			        k, why);
			CHECK(!"the later run's file is whole");
		}
	}
	printf("killed at each of %ld writes: killed run kept", k);
	for (i = 0; i <= CRASH_SESSION_CALLS; i++)
		if (cut_runs[i])
			printf(" %lld calls %ld times,", (long long)i, cut_runs[i]);
	printf(" rows past the last call %ld times\n", with_extra);
	/* The session does make many writes, flushes and commits. */
	CHECK(k > 30);
}

/* ---- other readers ------------------------------------------------------- */

TEST(h5py_and_h5dump_read_it)
{
	const char *py = getenv("HML_TEST_PYTHON"), *src = getenv("HML_SOURCE_DIR");
	const char *path = tmp_path("readers.h5");
	char cmd[4096];
	int rc;

	CHECK_OK(write_run(path, &L_F32, 0, 7, 0, 0));
	CHECK_OK(write_run(path, &L_F32, 1, 4, 0, 0));
	CHECK_OK(write_run(path, &L_F64, 0, 5, 0, 0));
	CHECK_OK(write_run(path, &L_MIX, 0, 3, 0, 0));
	if (!py || !src) {
		printf("note: HML_TEST_PYTHON or HML_SOURCE_DIR unset (not run by ctest): "
		       "skipping the h5py check\n");
	} else {
		snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/python/check_collect.py' '%s' "
		         "tree float32 4,3,5 float32 3 7,4", py, src, path);
		CHECK_EQ_INT(system(cmd), 0);
		snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/python/check_collect.py' '%s' "
		         "bonds float64 5 float64 2,2 5", py, src, path);
		CHECK_EQ_INT(system(cmd), 0);
		snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/python/check_collect.py' '%s' "
		         "mixed float64 2,7 float32 - 3", py, src, path);
		CHECK_EQ_INT(system(cmd), 0);
		/* The checker does fail on a wrong expectation. */
		snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/python/check_collect.py' '%s' "
		         "tree float32 4,3,5 float32 3 7,5 2>/dev/null", py, src, path);
		rc = system(cmd);
		CHECK(rc != 0);
	}
	snprintf(cmd, sizeof(cmd), "h5dump -H '%s' > /dev/null", path);
	CHECK_EQ_INT(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "h5dump -d /tree/calls '%s' > /dev/null", path);
	CHECK_EQ_INT(system(cmd), 0);
}

int main(void)
{
	if (tmp_dir_make("collect") < 0)
		return 1;
	hml__h5_init();
	RUN(write_and_read_back);
	RUN(files_made_by_others);
	RUN(h5util_attributes);
	RUN(later_runs_append);
	RUN(collectors_side_by_side);
	RUN(mismatch_leaves_file_alone);
	RUN(bad_descriptions);
	RUN(unwritable_places);
	RUN(not_hdf5_left_alone);
	RUN(fifo_and_link_refused);
	RUN(truncated_hdf5_left_alone);
	RUN(failed_flush_keeps_data);
	RUN(flush_policy);
	RUN(killed_process_leaves_readable_file);
	RUN(killed_at_every_write);
	RUN(h5py_and_h5dump_read_it);
	tmp_dir_remove();
	return check_report();
}
