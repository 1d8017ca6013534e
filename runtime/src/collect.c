#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "collect_internal.h"
#include "core/collection.h"
#include "core/error.h"
#include "core/h5util.h"
#include "core/rankfile.h"
#include "core/util.h"

#define DEFAULT_FLUSH_BYTES ((size_t)16 << 20)
#define DEFAULT_FLUSH_SECONDS 1.0

_Static_assert((int)HML__COLLECTOR_INPUT == (int)IN &&
               (int)HML__COLLECTOR_OUTPUT == (int)OUT,
               "the collector's sides are the layout's");


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

static int copy_desc(hml__collector *c, const hml__collector_desc *d)
{
	const char *texts[2][3] = {
		{ d->in_functor, d->in_arrays, d->in_domain },
		{ d->out_functor, d->out_arrays, d->out_domain },
	};
	int i, k, rc;

	if ((rc = hml__rankfile_own(&c->path, d->path)) < 0)   /* no two ranks share a file */
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
	c->res_rec = -1;
	c->chunk_rows = d->sample.reservoir;
	if ((rc = hml__coll_compression_parse(&c->z, d->compression)) < 0)
		return rc;
	if (hml__sample_active(&d->sample))
		return hml__sampler_new(&c->sampler, &d->sample, c->row_bytes, c->label);
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
	hml__sampler_free(c->sampler);
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

	hml__h5set_init(&s);
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
	if ((rc = hml__collector_open_rw(&file, c->path)) < 0)
		goto done;
	if ((rc = hml__collector_attach(c, file, &s, 0, &created)) < 0)
		goto done;
	if (!created && (rc = hml__coll_runs_get(s.group, &runs)) < 0)
		goto done;
	if (!created && c->sampler &&
	    (rc = hml__coll_sampling_get(s.group, c->path, c->label, &c->base)) < 0)
		goto done;
	if ((rc = hml__coll_runs_set(s.group, runs + 1)) < 0)
		goto done;
	c->run = runs;
	c->next_rows[IN] = c->next_rows[OUT] = -1;
	c->last_flush = hml__now();
done:
	hml__h5set_close(&s);
	rc = hml__collector_close_file(c, file, rc);
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
	if ((rc = hml__rankfile_own(&mine, path)) < 0)
		return rc;
	if ((rc = hml__collector_open_rw(&file, mine)) >= 0)
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

	hml__h5set_init(&s);
	if (c->nrecs == 0)
		goto done;
	hml__h5_init();
	if (!(recs = malloc(c->nrecs * sizeof(*recs)))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__collector_open_rw(&file, c->path)) < 0)
		goto done;
	/* A group created here means the file was removed or replaced since
	 * the open: start it again, counting this run. */
	if ((rc = hml__collector_attach(c, file, &s, c->run + 1, &created)) < 0)
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
	if (rc == 0)
		rc = hml__collector_put_sampling(c, s.group);
done:
	if (rc < 0 && touched) {
		hml__error_save(&saved);
		shrink_back(&s);
		hml__error_restore(&saved);
	}
	if (type >= 0)
		H5Tclose(type);
	hml__h5set_close(&s);
	rc = hml__collector_close_file(c, file, rc);
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

/* The buffer's first `upto` bytes written once, each page the first time
 * it is used: their first-touch faults are the collector's own cost (the
 * runtime times hml__collector_next as write_seconds), else they would
 * fall in the gather that fills them, which lib/store/cost.h predicts as a
 * deployed model's cost of moving rows, although a model gathers into a
 * buffer it reuses. Pages never used are never touched (resident memory). */
static void touch(buffer *b, size_t upto)
{
	if (upto > b->touched && b->p) {
		memset(b->p + b->touched, 0, upto - b->touched);
		b->touched = upto;
	}
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
	touch(&c->buf[side], c->buf[side].len + bytes);
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
	if (c->sampler && (rc = hml__collector_sample(c, ncalls, &original_seconds)) <= 0)
		return rc;
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

/* Everything buffered, then the reservoir and the sampling counts. */
static int flush_all(hml__collector *c)
{
	int rc = flush(c);

	if (rc == 0 && c->sampler)
		rc = hml__collector_write_reservoir(c);
	return rc;
}

int hml__collector_flush(hml__collector *c)
{
	if (!c)
		return hml__error_set(HML_EINVALID, "collector is NULL");
	return flush_all(c);
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
	rc = flush_all(c);
	collector_free(c);
	return rc;
}
