/*
 * lib/search/seed.c - a search's first configurations from another's
 * front (seed.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "search/history.h"
#include "search/seed.h"
#include "store/records.h"

typedef struct collect {
	const json_t *front;
	json_t *samples;          /* one slot per front entry, null until found */
} collect;

/* Each front configuration's sample, from its first "running" line. */
static int on_event(const hml__hist_event *ev, void *payload)
{
	collect *c = payload;
	const json_t *e;
	size_t i;

	if (ev->status != HML__HIST_RUNNING || !ev->params)
		return 0;
	json_array_foreach(c->front, i, e)
		if (json_integer_value(json_object_get(e, "config")) == ev->config &&
		    json_is_null(json_array_get(c->samples, i)))
			json_array_set(c->samples, i, (json_t *)ev->params);
	return 0;
}

int hml__seed_front(json_t **out, const hml__store *s, const char *from, const char *region)
{
	hml__search_view v;
	collect c = { NULL, NULL };
	char *path = NULL;
	const json_t *e;
	size_t i;
	int rc, torn;

	*out = NULL;
	if ((rc = hml__records_search(&v, s, from)) < 0)
		return rc;
	if (region && v.region && strcmp(region, v.region) != 0)
		return hml__error_set(HML_EINVALID, "search '%s' is of region '%s', not '%s'", from,
		                      v.region, region);
	if (json_array_size(v.front) == 0)
		return hml__error_set(HML_EINVALID, "search '%s' has nothing on its front (status %s)",
		                      from, v.status ? v.status : "unknown");
	if (!v.history || !(path = hml__store_path(s, v.history)))
		return v.history ? hml__error_oom()
		                 : hml__error_set(HML_EINVALID, "search '%s' records no trial history",
		                                  from);
	c.front = v.front;
	if (!(c.samples = json_array())) {
		rc = hml__error_oom();
		goto done;
	}
	for (i = 0; i < json_array_size(v.front); i++)
		json_array_append_new(c.samples, json_null());
	if ((rc = hml__history_read(path, on_event, &c, &torn)) < 0)
		goto done;
	json_array_foreach(c.samples, i, e)
		if (!json_is_object(e)) {
			rc = hml__error_set(HML_EINVALID, "search '%s': front configuration %lld is not "
			                    "in its trial history", from, (long long)json_integer_value(
			                    json_object_get(json_array_get(v.front, i), "config")));
			goto done;
		}
	*out = c.samples;
	c.samples = NULL;
done:
	json_decref(c.samples);
	free(path);
	return rc;
}

size_t hml__seed_points(double *u, size_t max, const hml__space *space, const json_t *seeds,
                        size_t *skipped)
{
	size_t i, n = 0, dim = hml__space_dim(space);
	const json_t *e;
	hml__error_saved saved;

	*skipped = 0;
	hml__error_save(&saved);
	json_array_foreach(seeds, i, e) {
		if (n == max || hml__space_encode(u + n * dim, space, e) < 0) {
			(*skipped)++;
			continue;
		}
		n++;
	}
	hml__error_restore(&saved);
	return n;
}
