/*
 * lib/store/cost.c - the region's cost as collected, and predicted speedups
 * (cost.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/profile_file.h"
#include "store/cost.h"

#define F_ORIGINAL "original_seconds"
#define F_COLLECT "collect_seconds"
#define F_PER_ROW "original_seconds_per_row"

int hml__cost_put(json_t *rec, double original_s, double collect_s, double per_row)
{
	if (original_s >= 0 && isfinite(original_s) && collect_s >= 0 && isfinite(collect_s) &&
	    (json_object_set_new(rec, F_ORIGINAL, json_real(original_s)) < 0 ||
	     json_object_set_new(rec, F_COLLECT, json_real(collect_s)) < 0))
		return hml__error_oom();
	if (per_row > 0 && isfinite(per_row) &&
	    json_object_set_new(rec, F_PER_ROW, json_real(per_row)) < 0)
		return hml__error_oom();
	return 0;
}

int hml__cost_times_add(hml__cost_times *t, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++) {
		hml__profile_record rec;
		int rc = hml__profile_file_find(path, t[i].label, &rec);

		if (rc == HML_ENOTFOUND)   /* the run never entered the region */
			continue;
		if (rc < 0)
			return rc;
		if (!(rec.stats.region_s >= rec.stats.original_s))
			return hml__error_set(HML_EINVALID, "profile '%s': region '%s' took %g s, less "
			                      "than its original code's %g s", path, t[i].label,
			                      rec.stats.region_s, rec.stats.original_s);
		t[i].original_s += rec.stats.original_s;
		t[i].region_s += rec.stats.region_s;
	}
	return 0;
}

static double field(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) : NAN;
}

/* Add data set d's cost of `region` to *c; 0, or -1 when it has none. */
static int add_dataset(hml__region_cost *c, const hml__dataset_view *d, const char *region)
{
	const json_t *r = hml__dataset_view_region(d, region), *run;
	double orig = field(r, F_ORIGINAL), coll = field(r, F_COLLECT), wall = 0;
	double per_row = field(r, F_PER_ROW);
	long long rows = hml__dataset_view_rows(d, region);
	size_t i;

	if (!r || isnan(orig) || isnan(coll) || rows <= 0 || !json_array_size(d->runs))
		return -1;
	/* The median per row where recorded; the rest of the run keeps its
	 * measured share (the wall time less the profile's sum). */
	if (per_row > 0) {
		wall -= orig - per_row * (double)rows;
		orig = per_row * (double)rows;
	}
	json_array_foreach(d->runs, i, run) {
		double w = field(run, "wall_seconds");

		if (isnan(w))
			return -1;
		wall += w;
	}
	c->original_s += orig;
	c->app_s += wall - coll;
	c->rows += (double)rows;
	c->runs += (double)json_array_size(d->runs);
	return 0;
}

static void unknown(hml__region_cost *c)
{
	c->original_s = c->app_s = c->rows = c->runs = NAN;
}

void hml__cost_of_datasets(hml__region_cost *out, const hml__store *s, const char *region,
                           const char *const *ids, size_t n)
{
	memset(out, 0, sizeof(*out));
	if (!region || n == 0)
		goto none;
	for (size_t i = 0; i < n; i++) {
		hml__dataset_view d;

		if (hml__records_dataset(&d, s, ids[i]) < 0 || add_dataset(out, &d, region) < 0)
			goto none;
	}
	/* The collector's time is measured inside the wall time; noise can
	 * not make the rest smaller than the region itself. */
	if (out->app_s < out->original_s)
		out->app_s = out->original_s;
	return;
none:
	unknown(out);
}

void hml__cost_of_model(hml__region_cost *out, const hml__store *s, const hml__model_view *m)
{
	const char *ids[64], *id;
	const json_t *v;
	size_t n = 0;

	json_object_foreach((json_t *)m->data_sha256, id, v) {
		if (n == sizeof(ids) / sizeof(ids[0])) {
			unknown(out);
			return;
		}
		ids[n++] = id;
	}
	hml__cost_of_datasets(out, s, m->region, ids, n);
}

double hml__cost_per_row(const hml__region_cost *c)
{
	return c->rows > 0 && c->original_s >= 0 ? c->original_s / c->rows : NAN;
}

void hml__predict(hml__prediction *p, const hml__region_cost *c, double latency,
                  double startup)
{
	double after;

	p->cost_per_row = hml__cost_per_row(c);
	p->model_per_row = latency > 0 ? latency : NAN;
	p->startup = startup >= 0 ? startup : NAN;
	p->region = p->cost_per_row / p->model_per_row;   /* NaN when either is */
	p->slower = p->model_per_row >= p->cost_per_row;
	p->end_to_end = NAN;
	if (!(c->runs > 0) || isnan(p->region) || isnan(p->startup) || !(c->app_s > 0))
		return;
	after = (c->app_s - c->original_s + c->rows * p->model_per_row) / c->runs + p->startup;
	p->end_to_end = after > 0 ? c->app_s / c->runs / after : NAN;
}

double hml__predict_run(const hml__prediction *p, double wall, double region)
{
	double after = wall - region + region / p->region + p->startup;

	return after > 0 ? wall / after : NAN;   /* NaN when a figure is */
}
