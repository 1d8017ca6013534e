/*
 * lib/store/cost.c - the region's cost as collected, and predicted speedups
 * (cost.h).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/profile_file.h"
#include "deploy/metrics.h"
#include "store/cost.h"

#define F_ORIGINAL "original_seconds"
#define F_COLLECT "collect_seconds"
#define F_PER_ROW "original_seconds_per_row"
#define F_GATHER "gather_seconds"
#define F_THREADS "threads"
#define F_CPU_RUN "cpu_run_seconds"
#define F_CPU_WAIT "cpu_wait_seconds"
#define F_CPU_PROCS "cpu_processes"

static int put_real(json_t *rec, const char *key, double v)
{
	return json_object_set_new(rec, key, json_real(v)) < 0 ? hml__error_oom() : 0;
}

int hml__cost_put(json_t *rec, const hml__cost_times *t, double per_row)
{
	double orig = t->original_s, coll = t->region_s - t->original_s;
	int rc = 0;

	if (orig >= 0 && isfinite(orig) && coll >= 0 && isfinite(coll)) {
		if ((rc = put_real(rec, F_ORIGINAL, orig)) < 0 ||
		    (rc = put_real(rec, F_COLLECT, coll)) < 0)
			return rc;
		if (t->gather_s >= 0 && t->gather_s <= coll &&
		    (rc = put_real(rec, F_GATHER, t->gather_s)) < 0)
			return rc;
	}
	if (t->threads > 0 &&
	    json_object_set_new(rec, F_THREADS, json_integer(t->threads)) < 0)
		return hml__error_oom();
	if (t->cpu_run_s >= 0 && isfinite(t->cpu_run_s) && t->cpu_wait_s >= 0 &&
	    isfinite(t->cpu_wait_s)) {
		if ((rc = put_real(rec, F_CPU_RUN, t->cpu_run_s)) < 0 ||
		    (rc = put_real(rec, F_CPU_WAIT, t->cpu_wait_s)) < 0)
			return rc;
		if (t->cpu_procs >= 1 && t->cpu_procs <= 1e9 &&
		    json_object_set_new(rec, F_CPU_PROCS,
		                        json_integer((json_int_t)t->cpu_procs)) < 0)
			return hml__error_oom();
	}
	if (per_row > 0 && isfinite(per_row))
		rc = put_real(rec, F_PER_ROW, per_row);
	return rc;
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
		/* the collector's time outside the calls (loading HDF5, the last
		 * flush, closing the file) is its time all the same */
		t[i].region_s += rec.stats.region_s +
		                 (rec.stats.collect_outside_s > 0 ? rec.stats.collect_outside_s : 0);
		t[i].gather_s += rec.stats.gather_s >= 0 ? rec.stats.gather_s : NAN;
		t[i].cpu_run_s += rec.cpu.run_s;    /* NaN once a run's is unknown */
		t[i].cpu_wait_s += rec.cpu.wait_s;
		t[i].cpu_procs += rec.cpu.procs >= 1 ? rec.cpu.procs : 1;
		if (t[i].threads <= 0)
			t[i].threads = rec.threads;
	}
	return 0;
}

static double field(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) : NAN;
}

double hml__cost_processes(const hml__dataset_view *d, const char *region)
{
	double runs = (double)json_array_size(d->runs);
	double procs = field(hml__dataset_view_region(d, region), F_CPU_PROCS);

	/* absent in data sets of older hml: one a run */
	return runs >= 1 && procs >= runs ? procs / runs : 1;
}

/* Add data set d's cost of `region` to *c; 0, or -1 when it has none. */
static int add_dataset(hml__region_cost *c, const hml__dataset_view *d, const char *region)
{
	const json_t *r = hml__dataset_view_region(d, region), *run;
	double orig = field(r, F_ORIGINAL), coll = field(r, F_COLLECT), wall = 0;
	double per_row = field(r, F_PER_ROW), gather = field(r, F_GATHER);
	double runs = (double)json_array_size(d->runs), p = hml__cost_processes(d, region), rows;
	const json_t *threads = json_object_get(r, F_THREADS);
	const json_t *calls = json_object_get(r, "calls");
	size_t i;

	rows = (double)hml__dataset_view_rows(d, region);
	if (!r || isnan(orig) || isnan(coll) || !(rows > 0) || runs < 1)
		return -1;
	/* The ranks of an MPI run (p processes a run) run the region side by
	 * side, and the profiles' sums add theirs: a run counts one mean
	 * process's share, its rows and calls too (the cost per row stays). */
	orig /= p, coll /= p, gather /= p, rows /= p;
	/* The median per row where recorded; the rest of the run keeps its
	 * measured share (the wall time less the profile's sum). */
	if (per_row > 0) {
		wall -= orig - per_row * rows;
		orig = per_row * rows;
	}
	json_array_foreach(d->runs, i, run) {
		double w = field(run, "wall_seconds");

		if (isnan(w))
			return -1;
		wall += w;
	}
	c->original_s += orig;
	c->app_s += wall - coll;
	c->rows += rows;
	c->runs += runs;
	c->gather_s += isnan(gather) ? 0 : gather;
	c->cpu_run_s += field(r, F_CPU_RUN);   /* NaN once a data set lacks it */
	c->cpu_wait_s += field(r, F_CPU_WAIT);
	/* the processes the CPU times sum (runs that entered the region) */
	c->cpu_procs += field(r, F_CPU_PROCS) >= 1 ? field(r, F_CPU_PROCS) : runs;
	/* calls unknown once one data set lacks them */
	c->calls += json_is_integer(calls) && json_integer_value(calls) > 0 ?
	            (double)json_integer_value(calls) / p : NAN;
	/* The first data set's threads; -1 once two differ. */
	if (c->threads == 0)
		c->threads = json_is_integer(threads) && json_integer_value(threads) > 0 &&
		             json_integer_value(threads) <= INT_MAX ?
		             (int)json_integer_value(threads) : -1;
	else if (c->threads > 0 && c->threads != json_integer_value(threads))
		c->threads = -1;
	return 0;
}

static void unknown(hml__region_cost *c)
{
	c->original_s = c->app_s = c->rows = c->runs = c->gather_s = c->calls = NAN;
	c->cpu_run_s = c->cpu_wait_s = c->cpu_procs = NAN;
	c->threads = 0;
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
	if (out->threads < 0)
		out->threads = 0;
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

double hml__cost_cpu_wait_share(const hml__region_cost *c)
{
	hml__profile_cpu cpu = { c->cpu_run_s, c->cpu_wait_s, c->cpu_procs };

	return hml__profile_cpu_wait_share(&cpu);
}

int hml__cost_cpu_waited(const hml__region_cost *c)
{
	hml__profile_cpu cpu = { c->cpu_run_s, c->cpu_wait_s, c->cpu_procs };

	return hml__profile_cpu_waited(&cpu);
}

double hml__cost_move_per_row(const hml__region_cost *c)
{
	return c->rows > 0 && c->gather_s >= 0 ? c->gather_s / c->rows : NAN;
}

double hml__schedule_model_calls(long long interleave, double calls)
{
	if (interleave <= 0)
		return calls;
	return calls - floor(calls / (double)(interleave + 1));   /* NaN when calls is */
}

/* The share of the calls the model answers: exact over the calls a run
 * makes where the data sets record them. */
static double model_share(const hml__region_cost *c, long long interleave)
{
	double calls = c->calls > 0 && c->runs > 0 ? c->calls / c->runs : NAN;

	if (interleave <= 0)
		return 1;
	if (calls >= 1)
		return hml__schedule_model_calls(interleave, floor(calls)) / floor(calls);
	return (double)interleave / (double)(interleave + 1);
}

/* A run's ceiling (hml__speedup_ceiling) when the model answers `share` of
 * the region's calls and the original code keeps the rest; NaN: unknown. */
static double run_ceiling(const hml__region_cost *c, double share)
{
	return c->runs > 0 ? hml__speedup_ceiling(c->app_s / c->runs,
	                                          share * c->original_s / c->runs) : NAN;
}

void hml__predict(hml__prediction *p, const hml__region_cost *c, double latency,
                  double startup, const hml__schedule *sch)
{
	double after, per_row, region_row, k = sch && sch->k > 0 ? sch->k : 1;

	p->cost_per_row = hml__cost_per_row(c);
	p->move_per_row = hml__cost_move_per_row(c);
	p->model_per_row = latency > 0 ? latency : NAN;
	p->startup = startup >= 0 ? startup : NAN;
	p->model_share = model_share(c, sch ? sch->interleave : 0);
	p->cpu_wait_share = hml__cost_cpu_wait_share(c);
	p->cpu_waited = hml__cost_cpu_waited(c);
	per_row = p->model_per_row + p->move_per_row;
	/* the calls the original code keeps cost what they cost collected */
	region_row = p->model_share < 1 ? p->model_share * per_row +
	                                  (1 - p->model_share) * p->cost_per_row : per_row;
	p->region = p->cost_per_row / region_row;   /* NaN when either is */
	p->slower = per_row >= p->cost_per_row;
	p->step_seconds = c->calls > 0 ? c->rows * region_row / (c->calls * k) : NAN;
	p->end_to_end = NAN;
	p->ceiling = run_ceiling(c, p->model_share);
	if (!(c->runs > 0) || isnan(p->region) || isnan(p->startup) || !(c->app_s > 0))
		return;
	after = (c->app_s - c->original_s + c->rows * region_row) / c->runs + p->startup;
	p->end_to_end = after > 0 ? c->app_s / c->runs / after : NAN;
}

double hml__speedup_ceiling(double wall, double region)
{
	if (!(wall > 0) || !(region >= 0) || region > wall || !isfinite(wall))
		return NAN;
	return region == wall ? INFINITY : wall / (wall - region);
}

double hml__cost_ceiling(const hml__region_cost *c, double *share)
{
	if (share)
		*share = c->app_s > 0 ? c->original_s / c->app_s : NAN;
	return run_ceiling(c, 1);
}

json_t *hml__prediction_json(const hml__prediction *p)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	                 "cost_per_row", hml__json_real(p->cost_per_row),
	                 "model_per_row", hml__json_real(p->model_per_row),
	                 "move_per_row", hml__json_real(p->move_per_row),
	                 "startup", hml__json_real(p->startup),
	                 "region", hml__json_real(p->region),
	                 "end_to_end", hml__json_real(p->end_to_end),
	                 "slower", isnan(p->region) ? json_null() : json_boolean(p->slower),
	                 "model_share", hml__json_real(p->model_share),
	                 "step_seconds", hml__json_real(p->step_seconds),
	                 "cpu_wait_share", hml__json_real(p->cpu_wait_share),
	                 "cpu_waited", isnan(p->cpu_wait_share) ? json_null() :
	                                json_boolean(p->cpu_waited),
	                 "ceiling", hml__json_real(p->ceiling));
}

char *hml__prediction_model_text(char *buf, size_t size, const hml__prediction *p)
{
	char lat[32], move[32];

	hml__format_seconds(lat, sizeof(lat), p->model_per_row, 2);
	if (p->move_per_row > 0)
		snprintf(buf, size, "%s + %s moving rows", lat,
		         hml__format_seconds(move, sizeof(move), p->move_per_row, 2));
	else
		snprintf(buf, size, "%s", lat);
	return buf;
}

char *hml__prediction_speed_text(char *buf, size_t size, const hml__prediction *p)
{
	double r = p->region;
	int prec = 2;

	if (!(r > 0) || !isfinite(r)) {
		snprintf(buf, size, "predicted ?x");
		return buf;
	}
	if (r < 1)   /* two significant digits of a slowdown */
		prec = (int)fmin(12, 1 - floor(log10(r)));
	snprintf(buf, size, "predicted %.*fx", prec, r);
	return buf;
}

char *hml__prediction_ceiling_text(char *buf, size_t size, const hml__prediction *p)
{
	char most[32];

	buf[0] = '\0';
	if (isfinite(p->ceiling)) {
		hml__format_speedup(most, sizeof(most), p->ceiling);
		snprintf(buf, size, " (any model: at most %s)", most);
	}
	return buf;
}

double hml__predict_run(const hml__prediction *p, double wall, double region)
{
	double after = wall - region + region / p->region + p->startup;

	return after > 0 ? wall / after : NAN;   /* NaN when a figure is */
}
