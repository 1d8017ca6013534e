/*
 * runtime/src/collect_file.c - the collector's file: the region's group
 * opened or created and checked, and the file opened for writing and
 * closed (collect_internal.h), for collect.c's flushes and
 * collect_sample.c's reservoir writes.
 */
#include <stdint.h>
#include <string.h>

#include "collect_internal.h"
#include "core/error.h"
#include "core/h5util.h"
#include "core/util.h"

void hml__h5set_init(h5set *s)
{
	s->group = s->data[IN] = s->data[OUT] = s->calls = H5I_INVALID_HID;
	s->dims[IN] = s->dims[OUT] = s->rows[IN] = s->rows[OUT] = s->ncalls = 0;
	s->has_ncalls = 0;
}

void hml__h5set_close(h5set *s)
{
	int i;

	for (i = 0; i < 2; i++)
		if (s->data[i] >= 0)
			H5Dclose(s->data[i]);
	if (s->calls >= 0)
		H5Dclose(s->calls);
	if (s->group >= 0)
		H5Gclose(s->group);
	hml__h5set_init(s);
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
		/* A reservoir writes one record per run. */
		return hml__coll_calls_create(&s->calls, group, c->path, c->label,
		                              c->chunk_rows ? 16 : 0);
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
int hml__collector_attach(const hml__collector *c, hid_t file, h5set *s, int64_t runs,
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
		                                c->shape[i], &c->z, c->chunk_rows)) < 0)
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
		hml__h5set_close(s);
	return rc;
}

/* Close the file and report a failure to write what it still held. */
int hml__collector_close_file(const hml__collector *c, hid_t file, int rc)
{
	if (file < 0)
		return rc;
	if (H5Fclose(file) < 0 && rc == 0)
		rc = hml__h5_error(HML_EIO, "cannot write '%s'", c->path);
	return rc;
}

/* HML_DB is opened for writing each time data is flushed: never a FIFO,
 * a device or a symbolic link (hml__path_replaceable), whatever it was
 * at the previous opening. */
int hml__collector_open_rw(hid_t *file, const char *path)
{
	int rc = hml__path_replaceable(path);

	return rc < 0 ? rc : hml__h5_open_rw(file, path);
}
