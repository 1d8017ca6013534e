/*
 * runtime/src/collect_sample.c - the collector's side of sampling
 * (collect.h, sample.h): each call's rows through the sampler, and the
 * reservoir and the counts written into the region's group.
 */
#include <string.h>

#include "collect_internal.h"
#include "core/error.h"
#include "core/h5util.h"

/* Pass the placed rows through the sampler: 1 when some are left to
 * record (their time scaled to them), 0 when none (the calls are
 * counted, nothing else), negative on failure (the rows dropped). */
int hml__collector_sample(hml__collector *c, int64_t ncalls, double *seconds)
{
	int64_t rows[2] = { c->next_rows[IN], c->next_rows[OUT] }, seen = rows[IN];
	void *at[2];
	int i, rc;

	for (i = 0; i < 2; i++)
		at[i] = c->buf[i].p ? c->buf[i].p + c->buf[i].len : NULL;
	rc = hml__sampler_filter(c->sampler, at[IN], at[OUT], rows, ncalls);
	c->res_seconds += *seconds;
	if (rc < 0 || (rows[IN] == 0 && rows[OUT] == 0)) {
		c->next_rows[IN] = c->next_rows[OUT] = -1;
		c->calls += ncalls;
		return rc;
	}
	if (seen > 0)
		*seconds *= (double)rows[IN] / (double)seen;
	c->next_rows[IN] = rows[IN];
	c->next_rows[OUT] = rows[OUT];
	return 1;
}

/* The group's sampling attributes: earlier runs' counts plus this one's. */
int hml__collector_put_sampling(const hml__collector *c, hid_t group)
{
	hml__coll_sampling now;

	if (!c->sampler)
		return 0;
	hml__sampler_stats(c->sampler, &now);
	now.calls_seen += c->base.calls_seen;
	now.rows_seen += c->base.rows_seen;
	now.rows_kept += c->base.rows_kept;
	now.dropped_rate += c->base.dropped_rate;
	now.dropped_duplicate += c->base.dropped_duplicate;
	now.dropped_reservoir += c->base.dropped_reservoir;
	return hml__coll_sampling_set(group, &now);
}

/* The reservoir's rows and one record standing for every call of the run,
 * written over those of the previous write (sample.h), and the sampling
 * attributes. */
int hml__collector_write_reservoir(hml__collector *c)
{
	const void *data[2];
	hml__call_record rec;
	hid_t file = H5I_INVALID_HID, type = H5I_INVALID_HID;
	hml__coll_sampling st;
	int64_t zero = 0, held;
	h5set s;
	int rc, created, side;

	hml__h5set_init(&s);
	held = hml__sampler_rows(c->sampler, &data[IN], &data[OUT]);
	if ((rc = hml__collector_open_rw(&file, c->path)) < 0)
		goto done;
	if ((rc = hml__collector_attach(c, file, &s, c->run + 1, &created)) < 0)
		goto done;
	if (created || c->res_rec < 0 || c->res_rec > s.ncalls) {
		c->res_rec = s.ncalls;
		c->res_at[IN] = s.rows[IN];
		c->res_at[OUT] = s.rows[OUT];
	}
	for (side = 0; side < 2 && held > 0; side++)
		if ((rc = hml__coll_rows_write(s.data[side], c->path, c->label, side_name[side],
		                               hml__h5_type(c->dtype[side]), s.dims[side],
		                               c->res_at[side], held, c->ndim[side],
		                               c->shape[side], data[side])) < 0)
			goto done;
	if (held > 0 && H5Fflush(file, H5F_SCOPE_LOCAL) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write region '%s' to '%s'",
		                   c->label, c->path);
		goto done;
	}
	hml__sampler_stats(c->sampler, &st);
	memset(&rec, 0, sizeof(rec));
	rec.run = c->run;
	rec.ncalls = st.calls_seen;
	rec.input_offset = c->res_at[IN];
	rec.output_offset = c->res_at[OUT];
	rec.input_rows = rec.output_rows = held;
	rec.original_seconds = st.rows_seen ? c->res_seconds * (double)held /
	                                      (double)st.rows_seen : 0.0;
	if (held > 0 && (type = hml__coll_calls_type(s.has_ncalls)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write '%s/calls' to '%s'",
		                   c->label, c->path);
		goto done;
	}
	if (held > 0 &&
	    (rc = hml__coll_rows_write(s.calls, c->path, c->label, HML__COLL_CALLS, type,
	                               s.ncalls, c->res_rec, 1, 0, &zero, &rec)) < 0)
		goto done;
	rc = hml__collector_put_sampling(c, s.group);
done:
	if (type >= 0)
		H5Tclose(type);
	hml__h5set_close(&s);
	return hml__collector_close_file(c, file, rc);
}
