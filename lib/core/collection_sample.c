/*
 * lib/core/collection_sample.c - the parts of the collection layout that
 * keep a collection small: how its rows are compressed and what was
 * sampled (collection.h), writer and reader side by side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collection.h"
#include "core/error.h"
#include "core/h5util.h"
#include "core/util.h"

static int avail(H5Z_filter_t id, const char *text)
{
	hml__h5_init();
	if (H5Zfilter_avail(id) <= 0)
		return hml__error_set(HML_ENOTSUPPORTED,
			"compression '%s' is not available in this HDF5", text);
	return 0;
}

int hml__coll_compression_parse(hml__coll_compression *out, const char *text)
{
	hml__coll_compression z;
	int rc;

	if ((rc = hml__compression_parse(&z, text)) < 0)
		return rc;
	if (z.szip)
		rc = avail(H5Z_FILTER_SZIP, text);
	if (rc == 0 && z.shuffle)
		rc = avail(H5Z_FILTER_SHUFFLE, text);
	if (rc == 0 && z.deflate)
		rc = avail(H5Z_FILTER_DEFLATE, text);
	if (rc == 0)
		*out = z;
	return rc;
}

/* ---- sampling --------------------------------------------------------------- */

/* The int64 fields, in the struct's order after `rate`. */
static const struct {
	const char *name;
	size_t off;
} counts[] = {
#define F(f) { "sample_" #f, offsetof(hml__coll_sampling, f) }
	F(reservoir), F(dedup), F(seed), F(calls_seen), F(rows_seen), F(rows_kept),
	F(dropped_rate), F(dropped_duplicate), F(dropped_reservoir),
#undef F
};

#define ATTR_RATE "sample_rate"
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))
#define FIELD(s, i) ((int64_t *)((char *)(s) + counts[i].off))

int hml__coll_sampling_set(hid_t group, const hml__coll_sampling *s)
{
	int rc = hml__h5_attr_set_f64(group, ATTR_RATE, s->rate);

	for (size_t i = 0; rc == 0 && i < NCOUNTS; i++)
		rc = hml__h5_attr_set_i64(group, counts[i].name, *FIELD(s, i));
	return rc;
}

int hml__coll_sampling_get(hid_t group, const char *path, const char *label,
                           hml__coll_sampling *s)
{
	hml__coll_sampling got;
	int rc;

	memset(s, 0, sizeof(*s));
	memset(&got, 0, sizeof(got));
	rc = hml__h5_attr_get_f64(group, ATTR_RATE, &got.rate);
	if (rc == HML_ENOTFOUND)
		return 0;
	for (size_t i = 0; rc == 0 && i < NCOUNTS; i++)
		rc = hml__h5_attr_get_i64(group, counts[i].name, FIELD(&got, i));
	if (rc < 0)
		return hml__error_set(rc, "region '%s' in '%s': %s", label, path,
		                      hml_error_last()->message);
	*s = got;
	return 1;
}
