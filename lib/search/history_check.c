/*
 * lib/search/history_check.c - a trial history checked against its search
 * and the experiment before a replay (see history_check.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/error.h"
#include "search/history_check.h"
#include "store/records.h"

/* Do samples a and b hold the same parameters with the same values?
 * Reals agree to 1e-9 relative: the writer keeps 17 digits, so this only
 * forgives rounding, never an edited value. */
static int sample_same(const json_t *a, const json_t *b)
{
	const char *key;
	json_t *va;

	if (json_object_size(a) != json_object_size(b))
		return 0;
	json_object_foreach((json_t *)a, key, va) {
		const json_t *vb = json_object_get(b, key);

		if (json_is_number(va) && json_is_number(vb)) {
			double x = json_number_value(va), y = json_number_value(vb);
			double scale = fmax(1.0, fmax(fabs(x), fabs(y)));

			if (!(fabs(x - y) <= 1e-9 * scale))
				return 0;
		} else if (!vb || !json_equal(va, (json_t *)vb)) {
			return 0;
		}
	}
	return 1;
}

/* A "running" line's point: params a sample of the space, u of its
 * dimension, and u decoding to params. */
static int point_check(const hml__history_check *cx, const hml__hist_event *ev)
{
	size_t dim = hml__space_dim(cx->space);
	double *u = NULL;
	json_t *decoded = NULL;
	int rc = 0;

	if (ev->rung == 0 && (!ev->u || !ev->params))
		return hml__error_set(HML_EINVALID, "trial %ld has no point of this search space",
		                      ev->trial);
	if (ev->u && ev->dim != dim)
		return hml__error_set(HML_EINVALID, "trial %ld: its point has %zu coordinates; the "
		                      "search space has %zu", ev->trial, ev->dim, dim);
	if (!(u = malloc((dim + 1) * sizeof(*u))))
		return hml__error_oom();
	if (ev->params && hml__space_encode(u, cx->space, ev->params) < 0) {
		hml__error_saved why;

		hml__error_save(&why);
		rc = hml__error_set(HML_EINVALID, "trial %ld: its point is not in the search space: "
		                    "%s", ev->trial, why.message);
		goto done;
	}
	if (ev->params && ev->u) {
		if ((rc = hml__space_decode(&decoded, cx->space, ev->u)) < 0)
			goto done;
		if (!sample_same(decoded, ev->params))
			rc = hml__error_set(HML_EINVALID, "trial %ld: its parameters are not those of "
			                    "its point 'u'", ev->trial);
	}
done:
	json_decref(decoded);
	free(u);
	return rc;
}

/* A "kept" line's model: the one the manifest records as this trial's. */
static int kept_check(const hml__history_check *cx, const hml__hist_event *ev)
{
	const json_t *rec = hml__store_find(cx->store, "models", ev->model), *by;
	hml__model_view m;

	if (!rec)
		return hml__error_set(HML_EINVALID, "trial %ld: kept model '%s' is not in the "
		                      "experiment", ev->trial, ev->model);
	hml__model_view_of(&m, rec);
	if (!m.search || strcmp(m.search, cx->search) != 0)
		return hml__error_set(HML_EINVALID, "trial %ld: kept model '%s' is not a model of "
		                      "search %s", ev->trial, ev->model, cx->search);
	by = json_object_get(rec, "search");
	if (!json_is_integer(json_object_get(by, "trial")) ||
	    json_integer_value(json_object_get(by, "trial")) != ev->trial)
		return hml__error_set(HML_EINVALID, "trial %ld: kept model '%s' is a model of "
		                      "another trial of search %s", ev->trial, ev->model, cx->search);
	return 0;
}

int hml__history_check_event(const hml__history_check *cx, const hml__hist_event *ev)
{
	if (ev->rung >= cx->rungs)
		return hml__error_set(HML_EINVALID, "trial %ld: rung %u is not one of the search's "
		                      "%u rungs", ev->trial, ev->rung, cx->rungs);
	if (ev->status == HML__HIST_RUNNING)
		return point_check(cx, ev);
	if (ev->status == HML__HIST_KEPT && cx->store)
		return kept_check(cx, ev);
	return 0;
}

/* o.trial when it is a trial number, else -1. */
static json_int_t trial_of(const json_t *o)
{
	const json_t *t = json_object_get(o, "trial");

	return json_is_integer(t) && json_integer_value(t) >= 0 &&
	       json_integer_value(t) <= HML__HIST_MAX_TRIAL ? json_integer_value(t) : -1;
}

/* The trials the manifest says the search has: counts.trials, its front's
 * and its models' (one more than the largest), and which says so. */
static size_t recorded_trials(const hml__history_check *cx, const char **what)
{
	const json_t *rec = hml__store_find(cx->store, "searches", cx->search), *e;
	json_int_t n = json_integer_value(json_object_get(json_object_get(rec, "counts"),
	                                                  "trials"));

	if (n < 0 || n > HML__HIST_MAX_TRIAL + 1)
		n = HML__HIST_MAX_TRIAL + 1;   /* no history holds so many */
	hml__model_view m;
	size_t i;

	*what = "counts";
	json_array_foreach(json_object_get(rec, "front"), i, e)
		if (trial_of(e) + 1 > n) {
			n = trial_of(e) + 1;
			*what = "front";
		}
	for (i = 0; hml__records_model_at(&m, cx->store, i); i++) {
		json_int_t t = trial_of(json_object_get(m.json, "search"));

		if (m.search && strcmp(m.search, cx->search) == 0 && t + 1 > n) {
			n = t + 1;
			*what = "models";
		}
	}
	return n > 0 ? (size_t)n : 0;
}

int hml__history_check_complete(const hml__history_check *cx, const char *path,
                                 size_t ntrials)
{
	const char *what;
	size_t want;

	if (access(path, F_OK) < 0)
		return hml__error_set(HML_EINVALID, "trial history '%s' is missing: search %s cannot "
		                      "be resumed without it; start a new search", path, cx->search);
	if (!cx->store || (want = recorded_trials(cx, &what)) <= ntrials)
		return 0;
	if (strcmp(what, "counts") == 0)
		return hml__error_set(HML_EINVALID, "trial history '%s' holds %zu trials, but the "
		                      "record of search %s counts %zu: the history was cut short or "
		                      "emptied; start a new search", path, ntrials, cx->search, want);
	return hml__error_set(HML_EINVALID, "trial history '%s' holds %zu trials, but the %s "
	                      "of search %s %s trial %zu: the history was cut short or emptied; "
	                      "start a new search", path, ntrials, what, cx->search,
	                      strcmp(what, "front") == 0 ? "lists" : "include", want - 1);
}
