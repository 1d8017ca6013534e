#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/collection.h"
#include "core/error.h"
#include "core/h5util.h"
#include "hml/version.h"

#define CHUNK_ROWS_MAX 65536
#define COMPRESSED_CHUNK_DIVISOR 16   /* 64 KiB chunks when compressed */
/* Overridable only to test deep chunk indexes with little data. */
#ifndef HML_COLLECT_CHUNK_BYTES
#define HML_COLLECT_CHUNK_BYTES ((size_t)1 << 20)
#endif
#ifndef HML_COLLECT_CALLS_CHUNK
#define HML_COLLECT_CALLS_CHUNK 1024
#endif

enum { IN = HML__COLL_IN, OUT = HML__COLL_OUT };

const char *const hml__coll_side_name[2] = { "input", "output" };
const char *const hml__coll_attr_functor[2] = { "input_functor", "output_functor" };
const char *const hml__coll_attr_arrays[2] = { "input_arrays", "output_arrays" };
const char *const hml__coll_attr_domain[2] = { "input_domain", "output_domain" };
const char *const hml__coll_attr_dtype[2] = { "input_dtype", "output_dtype" };

/* The fields that say where a call's rows are: all a reader needs. */
static const char *const row_fields[4] = {
	"input_offset", "input_rows", "output_offset", "output_rows"
};

int hml__coll_label_ok(const char *label)
{
	return label && *label && !strchr(label, '/') && strcmp(label, ".") != 0;
}

/* ---- writer side ------------------------------------------------------------ */

/* The row fields of hml__call_record, alone (`all` 0), with the others
 * but `ncalls` (1), or every field (2). */
static hid_t record_type(int all)
{
	const size_t off[4] = {
		HOFFSET(hml__call_record, input_offset),
		HOFFSET(hml__call_record, input_rows),
		HOFFSET(hml__call_record, output_offset),
		HOFFSET(hml__call_record, output_rows),
	};
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(hml__call_record));
	int i, bad = t < 0;

	if (!bad && all)
		bad = H5Tinsert(t, "run", HOFFSET(hml__call_record, run),
		                H5T_NATIVE_INT64) < 0 ||
		      H5Tinsert(t, "call", HOFFSET(hml__call_record, call),
		                H5T_NATIVE_INT64) < 0;
	for (i = 0; !bad && i < 4; i++)
		bad = H5Tinsert(t, row_fields[i], off[i], H5T_NATIVE_INT64) < 0;
	if (!bad && all)
		bad = H5Tinsert(t, "original_seconds",
		                HOFFSET(hml__call_record, original_seconds),
		                H5T_NATIVE_DOUBLE) < 0;
	if (!bad && all == 2)
		bad = H5Tinsert(t, "ncalls", HOFFSET(hml__call_record, ncalls),
		                H5T_NATIVE_INT64) < 0;
	if (bad && t >= 0) {
		H5Tclose(t);
		t = H5I_INVALID_HID;
	}
	return t;
}

hid_t hml__coll_calls_type(int with_ncalls)
{
	return record_type(with_ncalls ? 2 : 1);
}

static int write_attrs(hid_t group, const hml__coll_meta *m, int64_t runs)
{
	char created[32];
	struct tm tm;
	time_t now = time(NULL);
	int rc, i;

	if (!gmtime_r(&now, &tm) ||
	    !strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(created, sizeof(created), "unknown");
	if ((rc = hml__h5_attr_set_str(group, HML__COLL_ATTR_VERSION, hml_version())) < 0)
		return rc;
	for (i = 0; i < 2; i++) {
		if ((rc = hml__h5_attr_set_str(group, hml__coll_attr_functor[i],
		                               m->functor[i])) < 0 ||
		    (rc = hml__h5_attr_set_str(group, hml__coll_attr_arrays[i],
		                               m->arrays[i])) < 0 ||
		    (rc = hml__h5_attr_set_str(group, hml__coll_attr_domain[i],
		                               m->domain[i])) < 0 ||
		    (rc = hml__h5_attr_set_str(group, hml__coll_attr_dtype[i],
		                               hml_dtype_name(m->dtype[i]))) < 0)
			return rc;
	}
	if ((rc = hml__h5_attr_set_str(group, HML__COLL_ATTR_CREATED, created)) < 0)
		return rc;
	return hml__h5_attr_set_i64(group, HML__COLL_ATTR_RUNS, runs);
}

int hml__coll_group_create(hid_t *group, hid_t file, const char *path,
                           const char *label, const hml__coll_meta *meta,
                           int64_t runs)
{
	hid_t gcpl = H5I_INVALID_HID;
	int rc = 0;

	if ((gcpl = H5Pcreate(H5P_GROUP_CREATE)) < 0 ||
	    H5Pset_obj_track_times(gcpl, 0) < 0 ||
	    (*group = H5Gcreate2(file, label, H5P_DEFAULT, gcpl, H5P_DEFAULT)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot create region '%s' in '%s'",
		                   label, path);
		goto done;
	}
	rc = write_attrs(*group, meta, runs);
done:
	if (gcpl >= 0)
		H5Pclose(gcpl);
	return rc;
}

/* A chunked data set of `rank` dims, empty and unlimited along rows. */
static int create_rows(hid_t *out, hid_t group, const char *path,
                       const char *label, const char *name, hid_t type,
                       int rank, const hsize_t *chunk,
                       const hml__coll_compression *z)
{
	hsize_t dims[HML_MAX_DIMS + 1], maxdims[HML_MAX_DIMS + 1];
	hid_t space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
	int rc = 0, d;

	for (d = 0; d < rank; d++)
		dims[d] = maxdims[d] = chunk[d];
	dims[0] = 0;
	maxdims[0] = H5S_UNLIMITED;
	/* No modification times: a flush then changes as few metadata blocks
	 * as it can, which narrows the window in which a killed process leaves
	 * a file whose metadata is half written. */
	if (type < 0 || (space = H5Screate_simple(rank, dims, maxdims)) < 0 ||
	    (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
	    H5Pset_chunk(dcpl, rank, chunk) < 0 ||
	    H5Pset_obj_track_times(dcpl, 0) < 0 ||
	    (z && z->shuffle && H5Pset_shuffle(dcpl) < 0) ||
	    (z && z->deflate && H5Pset_deflate(dcpl, (unsigned)z->deflate) < 0) ||
	    (z && z->szip && H5Pset_szip(dcpl, H5_SZIP_NN_OPTION_MASK, 32) < 0) ||
	    (*out = H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl,
	                       H5P_DEFAULT)) < 0)
		rc = hml__h5_error(HML_EIO, "cannot create '%s/%s' in '%s'",
		                   label, name, path);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (space >= 0)
		H5Sclose(space);
	return rc;
}

int hml__coll_data_create(hid_t *dset, hid_t group, const char *path,
                          const char *label, int side, hml_dtype dtype,
                          int ndim, const int64_t *shape,
                          const hml__coll_compression *z, int64_t rows_max)
{
	hsize_t chunk[HML_MAX_DIMS + 1];
	size_t row_bytes = hml_dtype_size(dtype), rows;
	int d;

	for (d = 0; d < ndim; d++) {
		chunk[d + 1] = (hsize_t)shape[d];
		if (row_bytes <= HML_COLLECT_CHUNK_BYTES)
			row_bytes *= (size_t)shape[d];
	}
	rows = row_bytes ? HML_COLLECT_CHUNK_BYTES / row_bytes : 1;
	/* A compressed chunk that a later flush completes is written again
	 * elsewhere in the file, and HDF5 does not reuse the old space once
	 * the file is closed: small chunks bound what each flush leaves. */
	if (z && (z->deflate || z->szip))
		rows /= COMPRESSED_CHUNK_DIVISOR;
	if (rows < 1)
		rows = 1;
	if (rows > CHUNK_ROWS_MAX)
		rows = CHUNK_ROWS_MAX;
	if (rows_max > 0 && rows > (size_t)rows_max)
		rows = (size_t)rows_max;
	chunk[0] = rows;
	return create_rows(dset, group, path, label, hml__coll_side_name[side],
	                   hml__h5_type(dtype), ndim + 1, chunk, z);
}

int hml__coll_calls_create(hid_t *dset, hid_t group, const char *path,
                           const char *label, int64_t records_max)
{
	const hsize_t chunk[1] = {
		records_max > 0 && records_max < HML_COLLECT_CALLS_CHUNK ? (hsize_t)records_max
		                                                        : HML_COLLECT_CALLS_CHUNK
	};
	hid_t type = hml__coll_calls_type(1);
	int rc = create_rows(dset, group, path, label, HML__COLL_CALLS, type, 1, chunk,
	                     NULL);

	if (type >= 0)
		H5Tclose(type);
	return rc;
}

int hml__coll_rows_write(hid_t dset, const char *path, const char *label,
                         const char *name, hid_t mem_type, int64_t have,
                         int64_t at, int64_t rows, int nfeat,
                         const int64_t *feat, const void *buf)
{
	hsize_t dims[HML_MAX_DIMS + 1], start[HML_MAX_DIMS + 1], count[HML_MAX_DIMS + 1];
	hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
	int rc = 0, d;

	if (rows == 0)
		return 0;
	dims[0] = (hsize_t)(at + rows > have ? at + rows : have);
	start[0] = (hsize_t)at;
	count[0] = (hsize_t)rows;
	for (d = 0; d < nfeat; d++) {
		dims[d + 1] = count[d + 1] = (hsize_t)feat[d];
		start[d + 1] = 0;
	}
	if (H5Dset_extent(dset, dims) < 0 ||
	    (fspace = H5Dget_space(dset)) < 0 ||
	    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
	    (mspace = H5Screate_simple(nfeat + 1, count, NULL)) < 0 ||
	    H5Dwrite(dset, mem_type, mspace, fspace, H5P_DEFAULT, buf) < 0)
		rc = hml__h5_error(HML_EIO, "cannot write '%s/%s' to '%s'",
		                   label, name, path);
	if (mspace >= 0)
		H5Sclose(mspace);
	if (fspace >= 0)
		H5Sclose(fspace);
	return rc;
}

int hml__coll_runs_get(hid_t group, int64_t *runs)
{
	int rc = hml__h5_attr_get_i64(group, HML__COLL_ATTR_RUNS, runs);

	if (rc == HML_ENOTFOUND) {
		*runs = 0;
		return 0;
	}
	if (rc == 0 && *runs < 0)
		*runs = 0;
	return rc;
}

int hml__coll_runs_set(hid_t group, int64_t runs)
{
	return hml__h5_attr_set_i64(group, HML__COLL_ATTR_RUNS, runs);
}

/* ---- reader side ------------------------------------------------------------ */

int hml__coll_has(hid_t group, const char *path, const char *label,
                  const char *name)
{
	htri_t exists = H5Lexists(group, name, H5P_DEFAULT);

	if (exists < 0)
		return hml__h5_error(HML_EIO, "cannot read region '%s' in '%s'",
		                     label, path);
	return exists > 0;
}

void hml__coll_type_name(char *buf, size_t size, hid_t type)
{
	static const struct { H5T_class_t cls; const char *name; } classes[] = {
		{ H5T_TIME, "time" }, { H5T_STRING, "string" },
		{ H5T_BITFIELD, "bitfield" }, { H5T_OPAQUE, "opaque" },
		{ H5T_COMPOUND, "compound" }, { H5T_REFERENCE, "reference" },
		{ H5T_ENUM, "enum" }, { H5T_VLEN, "variable-length" },
		{ H5T_ARRAY, "array" },
	};
	H5T_class_t cls = H5Tget_class(type);
	size_t bits = H5Tget_size(type) * 8, i;

	if (cls == H5T_FLOAT) {
		snprintf(buf, size, "float%zu", bits);
		return;
	}
	if (cls == H5T_INTEGER) {
		snprintf(buf, size, "%sint%zu",
		         H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", bits);
		return;
	}
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (classes[i].cls == cls) {
			snprintf(buf, size, "%s", classes[i].name);
			return;
		}
	}
	snprintf(buf, size, "unknown");
}

int hml__coll_data_open(hid_t *dset, hml__coll_data *info, hid_t group,
                        const char *path, const char *label, int side)
{
	hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
	hid_t type = H5I_INVALID_HID, space = H5I_INVALID_HID;
	const char *name = hml__coll_side_name[side];
	int rc = 0, d;

	memset(info, 0, sizeof(*info));
	if ((*dset = H5Dopen2(group, name, H5P_DEFAULT)) < 0 ||
	    (type = H5Dget_type(*dset)) < 0 || (space = H5Dget_space(*dset)) < 0 ||
	    (info->rank = H5Sget_simple_extent_ndims(space)) < 0 ||
	    H5Sget_simple_extent_dims(space, dims, maxdims) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s/%s' in '%s'",
		                   label, name, path);
		goto done;
	}
	/* HDF5 1.10 opens a data set whose dataspace message says an extent is
	 * past its maximum (only a damaged file says so); its sizes are then
	 * not to be trusted, nor allocated for (found by fuzz_dataset). */
	for (d = 0; d < info->rank && d < H5S_MAX_RANK; d++)
		if (maxdims[d] != H5S_UNLIMITED && dims[d] > maxdims[d]) {
			rc = hml__error_set(HML_EINVALID, "'%s/%s' in '%s' is damaged: its dim %d "
			                    "is %llu, past its maximum %llu", label, name, path,
			                    d + 1, (unsigned long long)dims[d],
			                    (unsigned long long)maxdims[d]);
			goto done;
		}
	info->dtype = hml__h5_dtype(type);
	hml__coll_type_name(info->type_name, sizeof(info->type_name), type);
	if (info->rank >= 1) {
		info->rows = (int64_t)dims[0];
		info->growing = maxdims[0] == H5S_UNLIMITED;
	}
	if (info->rank >= 1 && info->rank <= HML_MAX_DIMS + 1) {
		info->ndim = info->rank - 1;
		for (d = 1; d < info->rank; d++)
			info->shape[d - 1] = (int64_t)dims[d];
	}
done:
	if (space >= 0)
		H5Sclose(space);
	if (type >= 0)
		H5Tclose(type);
	if (rc < 0 && *dset >= 0) {
		H5Dclose(*dset);
		*dset = H5I_INVALID_HID;
	}
	return rc;
}

/* Whether a compound type read from a file lies inside its own size:
 * HDF5 1.10.8 converts a member at whatever offset the file says (a
 * corrupt offset made it read 16 MB past its buffer). Members are the
 * 8-byte integers and floats the runtime writes, each whole inside. */
static int members_inside(hid_t type)
{
	size_t size = H5Tget_size(type), off, msize;
	int i, n = H5Tget_nmembers(type);
	hid_t m;

	if (size == 0 || n < 0)
		return 0;
	for (i = 0; i < n; i++) {
		H5T_class_t cls = H5Tget_member_class(type, (unsigned)i);
		if (cls != H5T_INTEGER && cls != H5T_FLOAT)
			return 0;
		if ((m = H5Tget_member_type(type, (unsigned)i)) < 0)
			return 0;
		msize = H5Tget_size(m);
		H5Tclose(m);
		off = H5Tget_member_offset(type, (unsigned)i);
		if (msize == 0 || msize > 16 || off > size || msize > size - off)
			return 0;
	}
	return 1;
}

/* 2: every field of a call record, 1: the row fields, 0: neither, -1: a
 * compound whose members lie outside it (a corrupt file). */
static int record_fields(hid_t type)
{
	static const char *const others[3] = { "run", "call", "original_seconds" };
	int i;

	if (H5Tget_class(type) != H5T_COMPOUND)
		return 0;
	if (!members_inside(type))
		return -1;
	for (i = 0; i < 4; i++)
		if (H5Tget_member_index(type, row_fields[i]) < 0)
			return 0;
	for (i = 0; i < 3; i++)
		if (H5Tget_member_index(type, others[i]) < 0)
			return 1;
	return 2;
}

/* The row fields of the table's last record; the others stay as they are
 * (HDF5 may write anything between the fields it converts). */
static int read_last(hid_t dset, hid_t space, hsize_t n, hml__call_record *rec)
{
	hsize_t last[1] = { n - 1 }, one[1] = { 1 };
	hid_t mtype = record_type(0), mem = H5I_INVALID_HID;
	hml__call_record r;
	int rc = 0;

	if (mtype < 0 ||
	    H5Sselect_hyperslab(space, H5S_SELECT_SET, last, NULL, one, NULL) < 0 ||
	    (mem = H5Screate_simple(1, one, NULL)) < 0 ||
	    H5Dread(dset, mtype, mem, space, H5P_DEFAULT, &r) < 0) {
		rc = -1;
	} else {
		rec->input_offset = r.input_offset;
		rec->input_rows = r.input_rows;
		rec->output_offset = r.output_offset;
		rec->output_rows = r.output_rows;
	}
	if (mem >= 0)
		H5Sclose(mem);
	if (mtype >= 0)
		H5Tclose(mtype);
	return rc;
}

int hml__coll_calls_open(hid_t *dset, hml__coll_calls *info, hid_t group,
                         const char *path, const char *label)
{
	hsize_t dims[1], maxdims[1];
	hid_t type = H5I_INVALID_HID, space = H5I_INVALID_HID;
	int rc = 0;

	memset(info, 0, sizeof(*info));
	if ((*dset = H5Dopen2(group, HML__COLL_CALLS, H5P_DEFAULT)) < 0 ||
	    (type = H5Dget_type(*dset)) < 0 || (space = H5Dget_space(*dset)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s/calls' in '%s'", label, path);
		goto done;
	}
	if (H5Sget_simple_extent_ndims(space) != 1 ||
	    H5Sget_simple_extent_dims(space, dims, maxdims) != 1)
		goto done;
	info->table = 1;
	info->growing = maxdims[0] == H5S_UNLIMITED;
	info->ncalls = (int64_t)dims[0];
	if ((info->fields = record_fields(type)) < 0) {
		rc = hml__error_set(HML_EIO, "'%s/calls' in '%s' is corrupt: a field of its "
		                    "records lies outside the record", label, path);
		info->fields = 0;
		goto done;
	}
	info->has_ncalls = info->fields == 2 && H5Tget_member_index(type, "ncalls") >= 0;
	if (info->fields && info->ncalls > 0 &&
	    read_last(*dset, space, dims[0], &info->last) < 0)
		rc = hml__h5_error(HML_EIO, "cannot read '%s/calls' in '%s'", label, path);
done:
	if (space >= 0)
		H5Sclose(space);
	if (type >= 0)
		H5Tclose(type);
	if (rc < 0 && *dset >= 0) {
		H5Dclose(*dset);
		*dset = H5I_INVALID_HID;
	}
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int hml__coll_calls_per_row(hid_t dset, const hml__coll_calls *info, const char *path,
                            const char *label, double *median)
{
	hsize_t n = (hsize_t)(info->ncalls < HML__COLL_PER_ROW_CALLS ? info->ncalls
	                      : HML__COLL_PER_ROW_CALLS), start[1] = { 0 }, count[1] = { n };
	hml__call_record *recs = NULL;
	hid_t mtype = H5I_INVALID_HID, space = H5I_INVALID_HID, mem = H5I_INVALID_HID;
	double *v = NULL;
	size_t m = 0;
	int rc = 0;

	*median = NAN;
	if (info->fields < 2 || !info->table || n == 0)
		return 0;
	if (!(recs = malloc(n * sizeof(*recs))) || !(v = malloc(n * sizeof(*v)))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((mtype = record_type(1)) < 0 || (space = H5Dget_space(dset)) < 0 ||
	    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
	    (mem = H5Screate_simple(1, count, NULL)) < 0 ||
	    H5Dread(dset, mtype, mem, space, H5P_DEFAULT, recs) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s/calls' in '%s'", label, path);
		goto done;
	}
	for (hsize_t i = 0; i < n; i++)
		if (recs[i].output_rows > 0 && recs[i].original_seconds > 0 &&
		    isfinite(recs[i].original_seconds))
			v[m++] = recs[i].original_seconds / (double)recs[i].output_rows;
	if (m) {
		qsort(v, m, sizeof(*v), cmp_double);
		*median = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
	}
done:
	if (mem >= 0)
		H5Sclose(mem);
	if (space >= 0)
		H5Sclose(space);
	if (mtype >= 0)
		H5Tclose(mtype);
	free(recs);
	free(v);
	return rc;
}

int hml__coll_attr_text(hid_t group, const char *name, char **out)
{
	int rc = hml__h5_attr_get_str(group, name, out);

	if (rc == HML_ENOTFOUND || rc == HML_EINVALID) {
		*out = NULL;
		return 0;
	}
	return rc;
}
