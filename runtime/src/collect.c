#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "core/collection.h"
#include "core/error.h"
#include "core/h5util.h"
#include "core/rankfile.h"
#include "core/util.h"

#define DEFAULT_FLUSH_BYTES ((size_t)16 << 20)
#define DEFAULT_FLUSH_SECONDS 1.0

enum { IN = HML__COLL_IN, OUT = HML__COLL_OUT };
_Static_assert((int)HML__COLLECTOR_INPUT == (int)IN &&
               (int)HML__COLLECTOR_OUTPUT == (int)OUT,
               "the collector's sides are the layout's");

static const char *const *const side_name = hml__coll_side_name;

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
	/* Rows placed by hml__collector_next() for the call not yet
	 * committed (after the buffered ones), -1 when none. */
	int64_t next_rows[2];
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
	int has_ncalls;    /* the calls table has the `ncalls` field */
} h5set;

static void h5set_init(h5set *s)
{
	s->group = s->data[IN] = s->data[OUT] = s->calls = H5I_INVALID_HID;
	s->dims[IN] = s->dims[OUT] = s->rows[IN] = s->rows[OUT] = s->ncalls = 0;
	s->has_ncalls = 0;
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

static int shape_mismatch(const hml__collector *c, int side, const int64_t *have,
                          int have_ndim, const char *have_type)
{
	char h[160], w[160];

	hml__format_shape(h, sizeof(h), have, have_ndim);
	hml__format_shape(w, sizeof(w), c->shape[side], c->ndim[side]);
	return hml__error_set(HML_ESHAPE,
		"region '%s' in '%s' holds %s rows %s of %s but this run gives %s of %s",
		c->label, c->path, side_name[side], h, have_type,
		w, hml_dtype_name(c->dtype[side]));
}

/* Open the existing `input` or `output` data set and check that its rows
 * have this run's shape and dtype. Leaves *out invalid when it is missing. */
static int open_data(const hml__collector *c, hid_t group, int side, hid_t *out,
                     int64_t *rows)
{
	hml__coll_data info;
	hid_t dset = H5I_INVALID_HID;
	int rc, d, same;

	*out = H5I_INVALID_HID;
	*rows = 0;
	if ((rc = hml__coll_has(group, c->path, c->label, side_name[side])) <= 0)
		return rc;
	if ((rc = hml__coll_data_open(&dset, &info, group, c->path, c->label, side)) < 0)
		return rc;
	same = info.rank >= 1 && info.rank <= HML_MAX_DIMS + 1 && info.dtype == c->dtype[side] &&
	       info.ndim == c->ndim[side];
	for (d = 0; same && d < c->ndim[side]; d++)
		same = info.shape[d] == c->shape[side][d];
	if (!same) {
		rc = shape_mismatch(c, side, info.shape, info.ndim, info.type_name);
		goto done;
	}
	if (!info.growing) {
		rc = hml__error_set(HML_EIO, "'%s/%s' in '%s' cannot grow",
		                    c->label, side_name[side], c->path);
		goto done;
	}
	*rows = info.rows;
	*out = dset;
	dset = H5I_INVALID_HID;
done:
	if (dset >= 0)
		H5Dclose(dset);
	return rc;
}

/* Open or create the calls table; where its last record's rows end is
 * where the next rows go. */
static int open_calls(const hml__collector *c, hid_t group, h5set *s)
{
	hml__coll_calls info;
	int rc;

	if ((rc = hml__coll_has(group, c->path, c->label, HML__COLL_CALLS)) < 0)
		return rc;
	if (rc == 0) {
		s->has_ncalls = 1;
		return hml__coll_calls_create(&s->calls, group, c->path, c->label);
	}
	if ((rc = hml__coll_calls_open(&s->calls, &info, group, c->path, c->label)) < 0)
		return rc;
	if (!info.table || !info.growing)
		return hml__error_set(HML_EIO, "'%s/calls' in '%s' is not a growing table",
		                      c->label, c->path);
	if (info.fields != 2)
		return hml__error_set(HML_EIO, "'%s/calls' in '%s' is not a table of calls",
		                      c->label, c->path);
	s->ncalls = info.ncalls;
	s->has_ncalls = info.has_ncalls;
	s->rows[IN] = info.last.input_offset + info.last.input_rows;
	s->rows[OUT] = info.last.output_offset + info.last.output_rows;
	return 0;
}

/* Open the region's group in `file`, creating what is missing. An existing
 * group is checked completely before anything is added to it, so a
 * mismatch leaves the file as it was. `runs` is the count written into a
 * group created here. */
static int attach(const hml__collector *c, hid_t file, h5set *s, int64_t runs,
                  int *created)
{
	hml__coll_meta meta;
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
		for (i = 0; i < 2; i++) {
			meta.functor[i] = c->functor[i];
			meta.arrays[i] = c->arrays[i];
			meta.domain[i] = c->domain[i];
			meta.dtype[i] = c->dtype[i];
		}
		*created = 1;
		if ((rc = hml__coll_group_create(&s->group, file, c->path, c->label,
		                                 &meta, runs)) < 0)
			goto done;
	}
	for (i = 0; i < 2; i++)
		if ((rc = open_data(c, s->group, i, &s->data[i], &s->dims[i])) < 0)
			goto done;
	for (i = 0; i < 2; i++)
		if (s->data[i] < 0 &&
		    (rc = hml__coll_data_create(&s->data[i], s->group, c->path, c->label,
		                                i, c->dtype[i], c->ndim[i],
		                                c->shape[i])) < 0)
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
	if (!hml__coll_label_ok(d->label))
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

/* The file this process writes for HML_DB `db`: `db` itself, or, when the
 * process is one of several MPI ranks, its rank's file (core/rankfile.h),
 * so that no two ranks write one file. */
static int resolve_path(char **out, const char *db)
{
	int rank, rc = hml__rank_from_env(&rank, NULL);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return (*out = hml__strdup(db)) ? 0 : hml__error_oom();
	return hml__rankfile_path(out, db, rank);
}

static int copy_desc(hml__collector *c, const hml__collector_desc *d)
{
	const char *texts[2][3] = {
		{ d->in_functor, d->in_arrays, d->in_domain },
		{ d->out_functor, d->out_arrays, d->out_domain },
	};
	int i, k, rc;

	if ((rc = resolve_path(&c->path, d->path)) < 0)
		return rc;
	if (!(c->label = hml__strdup(d->label)))
		return hml__error_oom();
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

/* HML_DB is opened for writing each time data is flushed: never a FIFO,
 * a device or a symbolic link (hml__path_replaceable), whatever it was
 * at the previous opening. */
static int open_rw(hid_t *file, const char *path)
{
	int rc = hml__path_replaceable(path);

	return rc < 0 ? rc : hml__h5_open_rw(file, path);
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
	if ((rc = open_rw(&file, c->path)) < 0)
		goto done;
	if ((rc = attach(c, file, &s, 0, &created)) < 0)
		goto done;
	if (!created && (rc = hml__coll_runs_get(s.group, &runs)) < 0)
		goto done;
	if ((rc = hml__coll_runs_set(s.group, runs + 1)) < 0)
		goto done;
	c->run = runs;
	c->next_rows[IN] = c->next_rows[OUT] = -1;
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

int hml__collector_probe(const char *path)
{
	hid_t file;
	char *mine = NULL;
	int rc;

	if (!path || !*path)
		return hml__error_set(HML_EINVALID, "collector file name is empty");
	hml__h5_init();
	if ((rc = resolve_path(&mine, path)) < 0)
		return rc;
	if ((rc = open_rw(&file, mine)) >= 0)
		H5Fclose(file);
	free(mine);
	return rc < 0 ? rc : 0;
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
	if ((rc = open_rw(&file, c->path)) < 0)
		goto done;
	/* A group created here means the file was removed or replaced since
	 * the open: start it again, counting this run. */
	if ((rc = attach(c, file, &s, c->run + 1, &created)) < 0)
		goto done;
	for (side = 0; side < 2; side++) {
		rc = hml__coll_rows_write(s.data[side], c->path, c->label,
		                          side_name[side], hml__h5_type(c->dtype[side]),
		                          s.dims[side], s.rows[side], c->buf_rows[side],
		                          c->ndim[side], c->shape[side], c->buf[side].p);
		if (rc < 0)
			goto done;
	}
	/* The rows reach the disk in a commit of their own: a record in
	 * `calls` never points at rows that are not there (see lib/core/h5_ordered.c
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
	if ((type = hml__coll_calls_type(s.has_ncalls)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write '%s/calls' to '%s'",
		                   c->label, c->path);
		goto done;
	}
	touched = 1;
	rc = hml__coll_rows_write(s.calls, c->path, c->label, HML__COLL_CALLS, type,
	                          s.ncalls, s.ncalls, (int64_t)c->nrecs, 0, &zero, recs);
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
		/* Rows placed for a call still in progress (a flush from an
		 * exit handler inside the region) move to the front. */
		for (side = 0; side < 2; side++) {
			if (c->next_rows[side] > 0)
				memmove(c->buf[side].p, c->buf[side].p + c->buf[side].len,
				        (size_t)c->next_rows[side] * c->row_bytes[side]);
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

int hml__collector_next(hml__collector *c, int side, int64_t rows, void **dst)
{
	size_t bytes;
	int rc;

	if (!c || !dst || (side != IN && side != OUT))
		return hml__error_set(HML_EINVALID, "collector, side or destination is invalid");
	if (rows < 0)
		return hml__error_set(HML_EINVALID, "region '%s': %lld %s rows",
		                      c->label, (long long)rows, side_name[side]);
	if ((uint64_t)rows > (SIZE_MAX / 2 - c->buf[side].len) / c->row_bytes[side])
		return hml__error_oom();
	bytes = (size_t)rows * c->row_bytes[side];
	if ((rc = reserve_bytes(&c->buf[side], c->buf[side].len + bytes)) < 0)
		return rc;
	*dst = c->buf[side].p ? c->buf[side].p + c->buf[side].len : NULL;
	c->next_rows[side] = rows;
	return 0;
}

/* Record the placed rows as `ncalls` calls. */
static int commit(hml__collector *c, int64_t ncalls, double original_seconds)
{
	hml__call_record *r;
	size_t buffered;
	int i, rc;

	if (!c)
		return hml__error_set(HML_EINVALID, "collector is NULL");
	if (c->next_rows[IN] < 0 || c->next_rows[OUT] < 0)
		return hml__error_set(HML_EINVALID,
			"region '%s': a call is recorded before its rows were placed",
			c->label);
	if ((rc = reserve_record(c)) < 0)
		return rc;
	r = &c->recs[c->nrecs++];
	r->run = c->run;
	r->call = c->calls;
	r->ncalls = ncalls;
	c->calls += ncalls;
	r->input_offset = c->buf_rows[IN];
	r->input_rows = c->next_rows[IN];
	r->output_offset = c->buf_rows[OUT];
	r->output_rows = c->next_rows[OUT];
	r->original_seconds = original_seconds;
	for (i = 0; i < 2; i++) {
		c->buf[i].len += (size_t)c->next_rows[i] * c->row_bytes[i];
		c->buf_rows[i] += c->next_rows[i];
		c->next_rows[i] = -1;
	}
	c->rows += r->input_rows;
	buffered = c->buf[IN].len + c->buf[OUT].len + c->nrecs * sizeof(*c->recs);
	if (buffered >= c->flush_bytes ||
	    hml__now() - c->last_flush >= c->flush_seconds)
		return flush(c);
	return 0;
}

int hml__collector_commit(hml__collector *c, double original_seconds)
{
	return commit(c, 1, original_seconds);
}

int hml__collector_append(hml__collector *c, const void *in, int64_t in_rows,
                          const void *out, int64_t out_rows,
                          double original_seconds)
{
	return hml__collector_append_calls(c, in, in_rows, out, out_rows, 1,
	                                   original_seconds);
}

int hml__collector_append_calls(hml__collector *c, const void *in, int64_t in_rows,
                                const void *out, int64_t out_rows, int64_t ncalls,
                                double original_seconds)
{
	const void *src[2] = { in, out };
	const int64_t rows[2] = { in_rows, out_rows };
	void *dst[2];
	int i, rc;

	if (!c)
		return hml__error_set(HML_EINVALID, "collector is NULL");
	if (ncalls < 1)
		return hml__error_set(HML_EINVALID, "region '%s': %lld calls",
		                      c->label, (long long)ncalls);
	for (i = 0; i < 2; i++) {
		if (rows[i] < 0)
			return hml__error_set(HML_EINVALID, "region '%s': %lld %s rows",
			                      c->label, (long long)rows[i], side_name[i]);
		if (rows[i] > 0 && !src[i])
			return hml__error_set(HML_EINVALID,
				"region '%s': %lld %s rows but no data", c->label,
				(long long)rows[i], side_name[i]);
	}
	/* Both places first: a failure leaves the collector as it was. */
	for (i = 0; i < 2; i++) {
		if ((rc = hml__collector_next(c, i, rows[i], &dst[i])) < 0) {
			c->next_rows[IN] = c->next_rows[OUT] = -1;
			return rc;
		}
	}
	for (i = 0; i < 2; i++)
		if (rows[i])
			memcpy(dst[i], src[i], (size_t)rows[i] * c->row_bytes[i]);
	return commit(c, ncalls, original_seconds);
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
