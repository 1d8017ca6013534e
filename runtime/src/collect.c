#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect.h"
#include "error.h"
#include "h5util.h"
#include "hml/version.h"
#include "util.h"

#define DEFAULT_FLUSH_BYTES ((size_t)16 << 20)
#define DEFAULT_FLUSH_SECONDS 1.0
#define CHUNK_ROWS_MAX 65536
/* Overridable only to test deep chunk indexes with little data. */
#ifndef HML_COLLECT_CHUNK_BYTES
#define HML_COLLECT_CHUNK_BYTES ((size_t)1 << 20)
#endif
#ifndef HML_COLLECT_CALLS_CHUNK
#define HML_COLLECT_CALLS_CHUNK 1024
#endif

enum { IN = 0, OUT = 1 };

static const char *const side_name[2] = { "input", "output" };

typedef struct {
	unsigned char *p;
	size_t len, cap;
} buffer;

struct hml__collector {
	char *path, *label;
	char *functor[2], *arrays[2], *domain[2];
	hml_dtype dtype[2];
	int ndim[2];
	int64_t shape[2][HML_MAX_DIMS];
	size_t row_bytes[2];
	size_t flush_bytes;
	double flush_seconds, last_flush;
	int64_t run, calls, rows;
	/* Not yet written: rows of each side, and one record per call whose
	 * offsets count from the start of the buffer until a flush adds the
	 * rows already in the file. */
	buffer buf[2];
	int64_t buf_rows[2];
	hml__call_record *recs;
	size_t nrecs, caprecs;
};

/* The HDF5 objects of one region's group while the file is open. `dims`
 * are the rows the data sets hold, `rows` those that the calls table
 * accounts for: a process killed in the middle of a flush can leave rows
 * beyond them, which the next flush overwrites. */
typedef struct {
	hid_t group, data[2], calls;
	int64_t dims[2], rows[2], ncalls;
} h5set;

static void h5set_init(h5set *s)
{
	s->group = s->data[IN] = s->data[OUT] = s->calls = H5I_INVALID_HID;
	s->dims[IN] = s->dims[OUT] = s->rows[IN] = s->rows[OUT] = s->ncalls = 0;
}

static void h5set_close(h5set *s)
{
	int i;

	for (i = 0; i < 2; i++)
		if (s->data[i] >= 0)
			H5Dclose(s->data[i]);
	if (s->calls >= 0)
		H5Dclose(s->calls);
	if (s->group >= 0)
		H5Gclose(s->group);
	h5set_init(s);
}

static hid_t calls_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(hml__call_record));

	if (t < 0)
		return t;
	if (H5Tinsert(t, "run", HOFFSET(hml__call_record, run), H5T_NATIVE_INT64) < 0 ||
	    H5Tinsert(t, "call", HOFFSET(hml__call_record, call), H5T_NATIVE_INT64) < 0 ||
	    H5Tinsert(t, "input_offset", HOFFSET(hml__call_record, input_offset),
	              H5T_NATIVE_INT64) < 0 ||
	    H5Tinsert(t, "input_rows", HOFFSET(hml__call_record, input_rows),
	              H5T_NATIVE_INT64) < 0 ||
	    H5Tinsert(t, "output_offset", HOFFSET(hml__call_record, output_offset),
	              H5T_NATIVE_INT64) < 0 ||
	    H5Tinsert(t, "output_rows", HOFFSET(hml__call_record, output_rows),
	              H5T_NATIVE_INT64) < 0 ||
	    H5Tinsert(t, "original_seconds", HOFFSET(hml__call_record, original_seconds),
	              H5T_NATIVE_DOUBLE) < 0) {
		H5Tclose(t);
		return H5I_INVALID_HID;
	}
	return t;
}

static int shape_mismatch(const hml__collector *c, int side, const int64_t *have,
                          int have_ndim, hml_dtype have_dtype)
{
	char h[160], w[160];

	hml__format_shape(h, sizeof(h), have, have_ndim);
	hml__format_shape(w, sizeof(w), c->shape[side], c->ndim[side]);
	return hml__error_set(HML_ESHAPE,
		"region '%s' in '%s' holds %s rows %s of %s but this run gives %s of %s",
		c->label, c->path, side_name[side], h, hml_dtype_name(have_dtype),
		w, hml_dtype_name(c->dtype[side]));
}

/* Open the existing `input` or `output` data set and check that its rows
 * have this run's shape and dtype. Leaves *out invalid when it is missing. */
static int open_data(const hml__collector *c, hid_t group, int side, hid_t *out,
                     int64_t *rows)
{
	hsize_t dims[HML_MAX_DIMS + 1], maxdims[HML_MAX_DIMS + 1];
	int64_t have[HML_MAX_DIMS + 1];
	hid_t dset = H5I_INVALID_HID, type = H5I_INVALID_HID, space = H5I_INVALID_HID;
	hml_dtype dt;
	htri_t exists;
	int rc = 0, nd, d, same;

	*out = H5I_INVALID_HID;
	*rows = 0;
	if ((exists = H5Lexists(group, side_name[side], H5P_DEFAULT)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read region '%s' in '%s'",
		                   c->label, c->path);
		goto done;
	}
	if (!exists)
		goto done;
	if ((dset = H5Dopen2(group, side_name[side], H5P_DEFAULT)) < 0 ||
	    (type = H5Dget_type(dset)) < 0 || (space = H5Dget_space(dset)) < 0 ||
	    (nd = H5Sget_simple_extent_ndims(space)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s/%s' in '%s'",
		                   c->label, side_name[side], c->path);
		goto done;
	}
	if (nd < 1 || nd > HML_MAX_DIMS + 1) {
		rc = shape_mismatch(c, side, have, 0, hml__h5_dtype(type));
		goto done;
	}
	H5Sget_simple_extent_dims(space, dims, maxdims);
	for (d = 1; d < nd; d++)
		have[d - 1] = (int64_t)dims[d];
	dt = hml__h5_dtype(type);
	same = dt == c->dtype[side] && nd - 1 == c->ndim[side];
	for (d = 0; same && d < c->ndim[side]; d++)
		same = have[d] == c->shape[side][d];
	if (!same) {
		rc = shape_mismatch(c, side, have, nd - 1, dt);
		goto done;
	}
	if (maxdims[0] != H5S_UNLIMITED) {
		rc = hml__error_set(HML_EIO, "'%s/%s' in '%s' cannot grow",
		                    c->label, side_name[side], c->path);
		goto done;
	}
	*rows = (int64_t)dims[0];
	*out = dset;
	dset = H5I_INVALID_HID;
done:
	if (space >= 0)
		H5Sclose(space);
	if (type >= 0)
		H5Tclose(type);
	if (dset >= 0)
		H5Dclose(dset);
	return rc;
}

/* A chunked data set of `rank` dims, empty and unlimited along rows. */
static int create_rows(const hml__collector *c, hid_t group, const char *name,
                       hid_t type, int rank, const hsize_t *chunk, hid_t *out)
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
	if ((space = H5Screate_simple(rank, dims, maxdims)) < 0 ||
	    (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
	    H5Pset_chunk(dcpl, rank, chunk) < 0 ||
	    H5Pset_obj_track_times(dcpl, 0) < 0 ||
	    (*out = H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl,
	                       H5P_DEFAULT)) < 0)
		rc = hml__h5_error(HML_EIO, "cannot create '%s/%s' in '%s'",
		                   c->label, name, c->path);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (space >= 0)
		H5Sclose(space);
	return rc;
}

static int create_data(const hml__collector *c, hid_t group, int side, hid_t *out)
{
	hsize_t chunk[HML_MAX_DIMS + 1];
	size_t rows = HML_COLLECT_CHUNK_BYTES / c->row_bytes[side];
	int d;

	if (rows < 1)
		rows = 1;
	if (rows > CHUNK_ROWS_MAX)
		rows = CHUNK_ROWS_MAX;
	chunk[0] = rows;
	for (d = 0; d < c->ndim[side]; d++)
		chunk[d + 1] = (hsize_t)c->shape[side][d];
	return create_rows(c, group, side_name[side], hml__h5_type(c->dtype[side]),
	                   c->ndim[side] + 1, chunk, out);
}

static int open_calls(const hml__collector *c, hid_t group, h5set *s)
{
	hsize_t dims[1], maxdims[1], chunk[1] = { HML_COLLECT_CALLS_CHUNK };
	hsize_t last[1], one[1] = { 1 };
	hid_t space = H5I_INVALID_HID, type = H5I_INVALID_HID, mem = H5I_INVALID_HID;
	hml__call_record rec;
	htri_t exists;
	int rc = 0;

	if ((exists = H5Lexists(group, "calls", H5P_DEFAULT)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read region '%s' in '%s'",
		                   c->label, c->path);
		goto done;
	}
	if (!exists) {
		if ((type = calls_type()) < 0) {
			rc = hml__h5_error(HML_EIO, "cannot create '%s/calls' in '%s'",
			                   c->label, c->path);
			goto done;
		}
		rc = create_rows(c, group, "calls", type, 1, chunk, &s->calls);
		goto done;
	}
	if ((s->calls = H5Dopen2(group, "calls", H5P_DEFAULT)) < 0 ||
	    (space = H5Dget_space(s->calls)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s/calls' in '%s'",
		                   c->label, c->path);
		goto done;
	}
	if (H5Sget_simple_extent_ndims(space) != 1 ||
	    H5Sget_simple_extent_dims(space, dims, maxdims) != 1 ||
	    maxdims[0] != H5S_UNLIMITED) {
		rc = hml__error_set(HML_EIO, "'%s/calls' in '%s' is not a growing table",
		                    c->label, c->path);
		goto done;
	}
	s->ncalls = (int64_t)dims[0];
	if (s->ncalls == 0)
		goto done;
	/* Where the last call's rows end is where the next rows go. */
	last[0] = dims[0] - 1;
	if ((type = calls_type()) < 0 ||
	    H5Sselect_hyperslab(space, H5S_SELECT_SET, last, NULL, one, NULL) < 0 ||
	    (mem = H5Screate_simple(1, one, NULL)) < 0 ||
	    H5Dread(s->calls, type, mem, space, H5P_DEFAULT, &rec) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s/calls' in '%s'",
		                   c->label, c->path);
		goto done;
	}
	s->rows[IN] = rec.input_offset + rec.input_rows;
	s->rows[OUT] = rec.output_offset + rec.output_rows;
done:
	if (mem >= 0)
		H5Sclose(mem);
	if (type >= 0)
		H5Tclose(type);
	if (space >= 0)
		H5Sclose(space);
	return rc;
}

static int write_attrs(const hml__collector *c, hid_t group, int64_t runs)
{
	static const char *const names[2][4] = {
		{ "input_functor", "input_arrays", "input_domain", "input_dtype" },
		{ "output_functor", "output_arrays", "output_domain", "output_dtype" },
	};
	char created[32];
	struct tm tm;
	time_t now = time(NULL);
	int rc, i;

	if (!gmtime_r(&now, &tm) ||
	    !strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(created, sizeof(created), "unknown");
	if ((rc = hml__h5_attr_set_str(group, "hml_version", hml_version())) < 0)
		return rc;
	for (i = 0; i < 2; i++) {
		if ((rc = hml__h5_attr_set_str(group, names[i][0], c->functor[i])) < 0 ||
		    (rc = hml__h5_attr_set_str(group, names[i][1], c->arrays[i])) < 0 ||
		    (rc = hml__h5_attr_set_str(group, names[i][2], c->domain[i])) < 0 ||
		    (rc = hml__h5_attr_set_str(group, names[i][3],
		                               hml_dtype_name(c->dtype[i]))) < 0)
			return rc;
	}
	if ((rc = hml__h5_attr_set_str(group, "created", created)) < 0)
		return rc;
	return hml__h5_attr_set_i64(group, "runs", runs);
}

/* Open the region's group in `file`, creating what is missing. An existing
 * group is checked completely before anything is added to it, so a
 * mismatch leaves the file as it was. `runs` is the count written into a
 * group created here. */
static int attach(const hml__collector *c, hid_t file, h5set *s, int64_t runs,
                  int *created)
{
	hid_t gcpl = H5I_INVALID_HID;
	htri_t exists;
	int rc = 0, i;

	*created = 0;
	if ((exists = H5Lexists(file, c->label, H5P_DEFAULT)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s'", c->path);
		goto done;
	}
	if (exists) {
		if ((s->group = H5Gopen2(file, c->label, H5P_DEFAULT)) < 0) {
			rc = hml__h5_error(HML_EIO, "cannot open region '%s' in '%s'",
			                   c->label, c->path);
			goto done;
		}
	} else {
		if ((gcpl = H5Pcreate(H5P_GROUP_CREATE)) < 0 ||
		    H5Pset_obj_track_times(gcpl, 0) < 0 ||
		    (s->group = H5Gcreate2(file, c->label, H5P_DEFAULT, gcpl,
		                           H5P_DEFAULT)) < 0) {
			rc = hml__h5_error(HML_EIO, "cannot create region '%s' in '%s'",
			                   c->label, c->path);
			goto done;
		}
		*created = 1;
		if ((rc = write_attrs(c, s->group, runs)) < 0)
			goto done;
	}
	for (i = 0; i < 2; i++)
		if ((rc = open_data(c, s->group, i, &s->data[i], &s->dims[i])) < 0)
			goto done;
	for (i = 0; i < 2; i++)
		if (s->data[i] < 0 &&
		    (rc = create_data(c, s->group, i, &s->data[i])) < 0)
			goto done;
	if ((rc = open_calls(c, s->group, s)) < 0)
		goto done;
	for (i = 0; i < 2; i++) {
		if (s->rows[i] < 0 || s->rows[i] > s->dims[i]) {
			rc = hml__error_set(HML_EIO,
				"region '%s' in '%s' is damaged: its calls table "
				"points past the %lld %s rows", c->label, c->path,
				(long long)s->dims[i], side_name[i]);
			goto done;
		}
	}
done:
	if (gcpl >= 0)
		H5Pclose(gcpl);
	if (rc < 0)
		h5set_close(s);
	return rc;
}

/* Close the file and report a failure to write what it still held. */
static int close_file(const hml__collector *c, hid_t file, int rc)
{
	if (file < 0)
		return rc;
	if (H5Fclose(file) < 0 && rc == 0)
		rc = hml__h5_error(HML_EIO, "cannot write '%s'", c->path);
	return rc;
}

static int check_desc(const hml__collector_desc *d)
{
	int i, k;
	const hml_dtype dt[2] = { d->in_dtype, d->out_dtype };
	const int nd[2] = { d->in_ndim, d->out_ndim };
	const int64_t *shape[2] = { d->in_shape, d->out_shape };

	if (!d->path || !*d->path)
		return hml__error_set(HML_EINVALID, "collector file name is empty");
	if (!d->label || !*d->label || strchr(d->label, '/') ||
	    strcmp(d->label, ".") == 0)
		return hml__error_set(HML_EINVALID,
			"region label '%s' cannot name an HDF5 group",
			d->label ? d->label : "");
	for (i = 0; i < 2; i++) {
		if (hml_dtype_size(dt[i]) == 0)
			return hml__error_set(HML_EINVALID,
				"region '%s': unknown %s dtype %d", d->label,
				side_name[i], (int)dt[i]);
		if (nd[i] < 0 || nd[i] > HML_MAX_DIMS)
			return hml__error_set(HML_EINVALID,
				"region '%s': %s rows have %d dims (0 to %d allowed)",
				d->label, side_name[i], nd[i], HML_MAX_DIMS);
		for (k = 0; k < nd[i]; k++)
			if (shape[i][k] <= 0 || shape[i][k] > INT32_MAX)
				return hml__error_set(HML_EINVALID,
					"region '%s': %s dim %d is %lld", d->label,
					side_name[i], k, (long long)shape[i][k]);
	}
	return 0;
}

static int copy_desc(hml__collector *c, const hml__collector_desc *d)
{
	const char *texts[2][3] = {
		{ d->in_functor, d->in_arrays, d->in_domain },
		{ d->out_functor, d->out_arrays, d->out_domain },
	};
	int i, k;

	if (!(c->path = hml__strdup(d->path)) || !(c->label = hml__strdup(d->label)))
		return HML_ENOMEM;
	c->dtype[IN] = d->in_dtype;
	c->dtype[OUT] = d->out_dtype;
	c->ndim[IN] = d->in_ndim;
	c->ndim[OUT] = d->out_ndim;
	memcpy(c->shape[IN], d->in_shape, sizeof(c->shape[IN]));
	memcpy(c->shape[OUT], d->out_shape, sizeof(c->shape[OUT]));
	for (i = 0; i < 2; i++) {
		if (!(c->functor[i] = hml__strdup(texts[i][0])) ||
		    !(c->arrays[i] = hml__strdup(texts[i][1])) ||
		    !(c->domain[i] = hml__strdup(texts[i][2])))
			return HML_ENOMEM;
		c->row_bytes[i] = hml_dtype_size(c->dtype[i]);
		for (k = 0; k < c->ndim[i]; k++) {
			if ((size_t)c->shape[i][k] > SIZE_MAX / 2 / c->row_bytes[i])
				return hml__error_set(HML_EINVALID,
					"region '%s': %s rows are too large", d->label,
					side_name[i]);
			c->row_bytes[i] *= (size_t)c->shape[i][k];
		}
	}
	c->flush_bytes = d->flush_bytes ? d->flush_bytes : DEFAULT_FLUSH_BYTES;
	c->flush_seconds = d->flush_seconds > 0 ? d->flush_seconds
	                                        : DEFAULT_FLUSH_SECONDS;
	return 0;
}

static void collector_free(hml__collector *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < 2; i++) {
		free(c->buf[i].p);
		free(c->functor[i]);
		free(c->arrays[i]);
		free(c->domain[i]);
	}
	free(c->recs);
	free(c->path);
	free(c->label);
	free(c);
}

int hml__collector_open(hml__collector **out, const hml__collector_desc *desc)
{
	hml__collector *c = NULL;
	hid_t file = H5I_INVALID_HID;
	h5set s;
	int64_t runs = 0;
	int rc, created;

	h5set_init(&s);
	if (!out || !desc)
		return hml__error_set(HML_EINVALID, "collector or description is NULL");
	*out = NULL;
	if ((rc = check_desc(desc)) < 0)
		return rc;
	hml__h5_init();
	if (!(c = calloc(1, sizeof(*c)))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = copy_desc(c, desc)) < 0)
		goto done;
	if ((rc = hml__h5_open_rw(&file, c->path)) < 0)
		goto done;
	if ((rc = attach(c, file, &s, 0, &created)) < 0)
		goto done;
	if (!created) {
		rc = hml__h5_attr_get_i64(s.group, "runs", &runs);
		if (rc == HML_ENOTFOUND)
			runs = 0;
		else if (rc < 0)
			goto done;
		if (runs < 0)
			runs = 0;
	}
	if ((rc = hml__h5_attr_set_i64(s.group, "runs", runs + 1)) < 0)
		goto done;
	c->run = runs;
	c->last_flush = hml__now();
done:
	h5set_close(&s);
	rc = close_file(c, file, rc);
	if (rc < 0)
		collector_free(c);
	else
		*out = c;
	return rc;
}

/* Write `rows` rows from `buf` at row `old` of a data set that holds
 * `have` rows, growing it as needed. */
static int append_rows(const hml__collector *c, hid_t dset, const char *name,
                       hid_t mem_type, int64_t have, int64_t old, int64_t rows,
                       int nfeat, const int64_t *feat, const void *buf)
{
	hsize_t dims[HML_MAX_DIMS + 1], start[HML_MAX_DIMS + 1], count[HML_MAX_DIMS + 1];
	hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
	int rc = 0, d;

	if (rows == 0)
		return 0;
	dims[0] = (hsize_t)(old + rows > have ? old + rows : have);
	start[0] = (hsize_t)old;
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
		                   c->label, name, c->path);
	if (mspace >= 0)
		H5Sclose(mspace);
	if (fspace >= 0)
		H5Sclose(fspace);
	return rc;
}

/* After a failed flush: a calls table that grew without its records would
 * hold records of zeros, so it gets its old length back. Rows written
 * beyond the calls table are harmless: the next flush writes over them. */
static void shrink_back(const h5set *s)
{
	hsize_t dims[1];

	if (s->calls >= 0) {
		dims[0] = (hsize_t)s->ncalls;
		H5Dset_extent(s->calls, dims);
	}
}

static int flush(hml__collector *c)
{
	hml__call_record *recs = NULL;
	hml__error_saved saved;
	hid_t file = H5I_INVALID_HID, type = H5I_INVALID_HID;
	int64_t zero = 0;
	h5set s;
	size_t i;
	int rc = 0, created, side, touched = 0;

	h5set_init(&s);
	if (c->nrecs == 0)
		goto done;
	hml__h5_init();
	if (!(recs = malloc(c->nrecs * sizeof(*recs)))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__h5_open_rw(&file, c->path)) < 0)
		goto done;
	/* A group created here means the file was removed or replaced since
	 * the open: start it again, counting this run. */
	if ((rc = attach(c, file, &s, c->run + 1, &created)) < 0)
		goto done;
	for (side = 0; side < 2; side++) {
		rc = append_rows(c, s.data[side], side_name[side],
		                 hml__h5_type(c->dtype[side]), s.dims[side],
		                 s.rows[side], c->buf_rows[side], c->ndim[side],
		                 c->shape[side], c->buf[side].p);
		if (rc < 0)
			goto done;
	}
	/* The rows reach the disk in a commit of their own: a record in
	 * `calls` never points at rows that are not there (see lib/h5util.c
	 * on the order of writes). */
	if (H5Fflush(file, H5F_SCOPE_LOCAL) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write region '%s' to '%s'",
		                   c->label, c->path);
		goto done;
	}
	for (i = 0; i < c->nrecs; i++) {
		recs[i] = c->recs[i];
		recs[i].input_offset += s.rows[IN];
		recs[i].output_offset += s.rows[OUT];
	}
	/* The calls table goes last: a record only ever points at rows that
	 * were written before it. */
	if ((type = calls_type()) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write '%s/calls' to '%s'",
		                   c->label, c->path);
		goto done;
	}
	touched = 1;
	rc = append_rows(c, s.calls, "calls", type, s.ncalls, s.ncalls,
	                 (int64_t)c->nrecs, 0, &zero, recs);
done:
	if (rc < 0 && touched) {
		hml__error_save(&saved);
		shrink_back(&s);
		hml__error_restore(&saved);
	}
	if (type >= 0)
		H5Tclose(type);
	h5set_close(&s);
	rc = close_file(c, file, rc);
	if (rc == 0) {
		for (side = 0; side < 2; side++) {
			c->buf[side].len = 0;
			c->buf_rows[side] = 0;
		}
		c->nrecs = 0;
	}
	c->last_flush = hml__now();
	free(recs);
	return rc;
}

/* The capacity, at least doubled, that holds `need` items of `unit` bytes. */
static int grown_cap(size_t cap, size_t need, size_t unit, size_t *out)
{
	size_t n = cap ? cap : 4096 / unit + 1;

	while (n < need) {
		if (n > SIZE_MAX / 2 / unit)
			return hml__error_oom();
		n *= 2;
	}
	*out = n;
	return 0;
}

static int reserve_bytes(buffer *b, size_t need)
{
	unsigned char *p;
	size_t cap = 0;
	int rc;

	if (need <= b->cap)
		return 0;
	if ((rc = grown_cap(b->cap, need, 1, &cap)) < 0)
		return rc;
	if (!(p = realloc(b->p, cap)))
		return hml__error_oom();
	b->p = p;
	b->cap = cap;
	return 0;
}

static int reserve_record(hml__collector *c)
{
	hml__call_record *p;
	size_t cap = 0;
	int rc;

	if (c->nrecs < c->caprecs)
		return 0;
	if ((rc = grown_cap(c->caprecs, c->nrecs + 1, sizeof(*p), &cap)) < 0)
		return rc;
	if (!(p = realloc(c->recs, cap * sizeof(*p))))
		return hml__error_oom();
	c->recs = p;
	c->caprecs = cap;
	return 0;
}

int hml__collector_append(hml__collector *c, const void *in, int64_t in_rows,
                          const void *out, int64_t out_rows,
                          double original_seconds)
{
	const void *src[2] = { in, out };
	const int64_t rows[2] = { in_rows, out_rows };
	size_t bytes[2], buffered;
	hml__call_record *r;
	int i, rc;

	if (!c)
		return hml__error_set(HML_EINVALID, "collector is NULL");
	for (i = 0; i < 2; i++) {
		if (rows[i] < 0)
			return hml__error_set(HML_EINVALID, "region '%s': %lld %s rows",
			                      c->label, (long long)rows[i], side_name[i]);
		if (rows[i] > 0 && !src[i])
			return hml__error_set(HML_EINVALID,
				"region '%s': %lld %s rows but no data", c->label,
				(long long)rows[i], side_name[i]);
		if ((uint64_t)rows[i] > (SIZE_MAX / 2 - c->buf[i].len) / c->row_bytes[i])
			return hml__error_oom();
		bytes[i] = (size_t)rows[i] * c->row_bytes[i];
	}
	/* Reserve everything first: a failure leaves the collector as it was. */
	for (i = 0; i < 2; i++)
		if ((rc = reserve_bytes(&c->buf[i], c->buf[i].len + bytes[i])) < 0)
			return rc;
	if ((rc = reserve_record(c)) < 0)
		return rc;
	r = &c->recs[c->nrecs++];
	r->run = c->run;
	r->call = c->calls++;
	r->input_offset = c->buf_rows[IN];
	r->input_rows = in_rows;
	r->output_offset = c->buf_rows[OUT];
	r->output_rows = out_rows;
	r->original_seconds = original_seconds;
	for (i = 0; i < 2; i++) {
		if (bytes[i])
			memcpy(c->buf[i].p + c->buf[i].len, src[i], bytes[i]);
		c->buf[i].len += bytes[i];
		c->buf_rows[i] += rows[i];
	}
	c->rows += in_rows;
	buffered = c->buf[IN].len + c->buf[OUT].len + c->nrecs * sizeof(*c->recs);
	if (buffered >= c->flush_bytes ||
	    hml__now() - c->last_flush >= c->flush_seconds)
		return flush(c);
	return 0;
}

int hml__collector_flush(hml__collector *c)
{
	if (!c)
		return hml__error_set(HML_EINVALID, "collector is NULL");
	return flush(c);
}

int64_t hml__collector_rows(const hml__collector *c)
{
	return c ? c->rows : 0;
}

int hml__collector_close(hml__collector *c)
{
	int rc;

	if (!c)
		return 0;
	rc = flush(c);
	collector_free(c);
	return rc;
}
