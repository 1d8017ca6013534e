/*
 * lib/store/sampling.c - a region record's "sampling" object (sampling.h).
 */
#include <string.h>

#include "core/error.h"
#include "store/sampling.h"

json_t *hml__sampling_json(const hml__coll_sampling *s)
{
	return json_pack("{s:f, s:I, s:b, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}}",
		"rate", s->rate, "reservoir", (json_int_t)s->reservoir, "dedup", (int)s->dedup,
		"seed", (json_int_t)s->seed, "calls_seen", (json_int_t)s->calls_seen,
		"rows_seen", (json_int_t)s->rows_seen, "rows_kept", (json_int_t)s->rows_kept,
		"dropped", "rate", (json_int_t)s->dropped_rate,
		"duplicate", (json_int_t)s->dropped_duplicate,
		"reservoir", (json_int_t)s->dropped_reservoir);
}

int hml__sampling_put(json_t *rec, const hml__coll_sampling *s)
{
	if (!rec || !s)
		return 0;
	return json_object_set_new(rec, "sampling", hml__sampling_json(s)) == 0 ? 0
	       : hml__error_oom();
}

static int count(const json_t *o, const char *key, int64_t *out)
{
	const json_t *j = json_object_get(o, key);

	if (!json_is_integer(j))
		return hml__error_set(HML_EINVALID,
			"the record's sampling is malformed: '%s' is not an integer", key);
	*out = (int64_t)json_integer_value(j);
	return 0;
}

int hml__sampling_get(const json_t *region, hml__coll_sampling *s)
{
	const json_t *o = json_object_get(region, "sampling"), *d, *j;
	hml__coll_sampling g;
	int rc;

	memset(s, 0, sizeof(*s));
	memset(&g, 0, sizeof(g));
	if (!o)
		return 0;
	d = json_object_get(o, "dropped");
	if (!json_is_number(j = json_object_get(o, "rate")) ||
	    !json_is_boolean(json_object_get(o, "dedup")) || !json_is_object(d))
		return hml__error_set(HML_EINVALID, "the record's sampling is malformed: "
		                      "'rate', 'dedup' or 'dropped' is missing or mistyped");
	g.rate = json_number_value(j);
	g.dedup = json_is_true(json_object_get(o, "dedup"));
	if ((rc = count(o, "reservoir", &g.reservoir)) < 0 ||
	    (rc = count(o, "seed", &g.seed)) < 0 ||
	    (rc = count(o, "calls_seen", &g.calls_seen)) < 0 ||
	    (rc = count(o, "rows_seen", &g.rows_seen)) < 0 ||
	    (rc = count(o, "rows_kept", &g.rows_kept)) < 0 ||
	    (rc = count(d, "rate", &g.dropped_rate)) < 0 ||
	    (rc = count(d, "duplicate", &g.dropped_duplicate)) < 0 ||
	    (rc = count(d, "reservoir", &g.dropped_reservoir)) < 0)
		return rc;
	*s = g;
	return 1;
}
