/*
 * lib/search/iterative.c - an iterative application's k and interleave
 * as search dimensions: the plan.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "run/argv.h"
#include "run/search_args.h"
#include "search/iterative.h"
#include "search/results.h"
#include "store/cost.h"
#include "store/records.h"

/* The k data set `id` was collected with: that of its first run that
 * gives it (every run of a collection has the same arguments but the
 * seed); 0 when none does. */
static int data_k(const hml__store *s, const char *id, const char *arg, int64_t *k)
{
	const json_t *runs = json_object_get(hml__store_find(s, "datasets", id), "runs"), *run;
	size_t i;

	json_array_foreach(runs, i, run) {
		const json_t *argv = json_object_get(run, "argv"), *a;
		char **v = calloc(json_array_size(argv) + 1, sizeof(*v));
		size_t j;
		int found;

		if (!v)
			return hml__error_oom();
		json_array_foreach(argv, j, a)
			v[j] = (char *)(json_string_value(a) ? json_string_value(a) : "");
		found = hml__search_args_value_in(arg, v, k);
		free(v);
		if (found)
			return 1;
	}
	return 0;
}

static json_t *values_json(const int64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_integer(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* groups: one per declared k some data set was collected with, its data
 * sets' indices; *kv the ks found. */
static int k_groups(json_t *groups, int64_t *kv, size_t *nk, const hml__store *s,
                    const hml__search_arg *ka, const char *const *ds_ids, size_t nds)
{
	*nk = 0;
	for (size_t v = 0; v < ka->n; v++) {
		json_t *data = json_array();
		int64_t k;
		int rc;

		if (!data)
			return hml__error_oom();
		for (size_t i = 0; i < nds; i++) {
			if ((rc = data_k(s, ds_ids[i], ka->arg, &k)) < 0) {
				json_decref(data);
				return rc;
			}
			if (rc == 1 && k == ka->values[v])
				json_array_append_new(data, json_integer((json_int_t)i));
		}
		if (json_array_size(data) == 0) {
			json_decref(data);
			continue;
		}
		kv[(*nk)++] = ka->values[v];
		if (json_array_append_new(groups, json_pack("{s:I, s:o}", "k",
		                          (json_int_t)ka->values[v], "data", data)) < 0)
			return hml__error_oom();
	}
	return 0;
}

/* Each group's original code cost per row and moving a row, from its own
 * data sets: the bound of the trials at its k. */
static int group_costs(json_t *groups, const hml__store *s, const char *region,
                       const char *const *ds_ids, size_t nds)
{
	const json_t *g, *ix;
	const char **ids = calloc(nds + 1, sizeof(*ids));
	size_t i, j;

	if (!ids)
		return hml__error_oom();
	json_array_foreach(groups, i, g) {
		hml__region_cost c;
		size_t n = 0;

		json_array_foreach(json_object_get(g, "data"), j, ix)
			if (json_integer_value(ix) >= 0 && (size_t)json_integer_value(ix) < nds)
				ids[n++] = ds_ids[json_integer_value(ix)];
		hml__cost_of_datasets(&c, s, region, ids, n);
		if (json_object_set_new((json_t *)g, "region_cost_per_row",
		                        hml__json_real(hml__cost_per_row(&c))) < 0 ||
		    json_object_set_new((json_t *)g, "region_move_per_row",
		                        hml__json_real(hml__cost_move_per_row(&c))) < 0) {
			free(ids);
			return hml__error_oom();
		}
	}
	free(ids);
	return 0;
}

static int add_dim(json_t *space, const char *name, const int64_t *v, size_t n,
                   const hml__workflow *w)
{
	if (json_object_get(space, name))
		return hml__error_set(HML_EINVALID, "search space already has a parameter '%s' "
		                      "(workflow '%s' adds it from search_args)", name, w->path);
	if (json_object_set_new(space, name, json_pack("{s:s, s:o}", "type", "choice",
	                                               "values", values_json(v, n))) < 0)
		return hml__error_oom();
	return 0;
}

/* "arg" (when any) and "values" of a declared argument. */
static json_t *arg_json(const char *arg, const int64_t *v, size_t n)
{
	json_t *o = json_pack("{s:o}", "values", values_json(v, n));

	if (o && arg && json_object_set_new(o, "arg", json_string(arg)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The trial runs' command line: collect's arguments on the seed after
 * every collected one. */
static int run_argv(json_t *plan, const hml__store *s, const hml__workflow *w)
{
	int64_t seed = hml__records_max_seed(s);
	char **argv = NULL;
	json_t *a;
	int rc;

	if (seed < w->collect_seed)
		seed = w->collect_seed;
	seed = seed < HML__SEED_MAX ? seed + 1 : seed;
	if ((rc = hml__argv_build(&argv, w->program, (const char *const *)w->collect_args,
	                          &seed)) < 0)
		return rc;
	a = json_array();
	for (char **p = argv; a && *p; p++)
		json_array_append_new(a, hml__json_bytes(*p));
	hml__strv_free(argv);
	if (!a || json_object_set_new(plan, "argv", a) < 0 ||
	    json_object_set_new(plan, "seed", json_integer(seed)) < 0)
		return hml__error_oom();
	return 0;
}

static void say_values(char *buf, size_t size, const hml__search_arg *a)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < a->n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "",
		                        (long long)a->values[i]);
}

int hml__iterative_plan(json_t **out, const hml__store *s, const hml__workflow *w,
                        const char *region, const char *const *ds_ids, size_t nds,
                        json_t *space)
{
	const hml__search_args *sa = w ? &w->search_args : NULL;
	int64_t kv[HML__SEARCH_ARG_MAX];
	json_t *plan, *groups;
	size_t nk = 0;
	int rc = 0;

	*out = NULL;
	if (!sa || !hml__search_args_any(sa))
		return 0;
	if (!(plan = json_pack("{s:s, s:s, s:[]}", "workflow", w->path, "region", region,
	                       "groups")))
		return hml__error_oom();
	groups = json_object_get(plan, "groups");
	if (sa->k.n) {
		char vals[256];

		if ((rc = k_groups(groups, kv, &nk, s, &sa->k, ds_ids, nds)) < 0)
			goto fail;
		say_values(vals, sizeof(vals), &sa->k);
		if (nk == 0) {
			rc = hml__error_set(HML_EINVALID, "workflow '%s' declares search_args.k ('%s': "
			                    "%s) but no data set of region '%s' was collected with one "
			                    "of them (collect with --args giving '%s %lld')", w->path,
			                    sa->k.arg, vals, region, sa->k.arg,
			                    (long long)sa->k.values[0]);
			goto fail;
		}
		if ((rc = add_dim(space, "k", kv, nk, w)) < 0)
			goto fail;
		json_object_set_new(plan, "k", arg_json(sa->k.arg, kv, nk));
	} else {
		json_t *all = json_array();

		for (size_t i = 0; all && i < nds; i++)
			json_array_append_new(all, json_integer((json_int_t)i));
		json_array_append_new(groups, json_pack("{s:n, s:o}", "k", "data", all));
	}
	if (sa->interleave.n) {
		if ((rc = add_dim(space, "interleave", sa->interleave.values, sa->interleave.n,
		                  w)) < 0)
			goto fail;
		json_object_set_new(plan, "interleave", arg_json(sa->interleave.arg,
		                    sa->interleave.values, sa->interleave.n));
	}
	if ((rc = group_costs(groups, s, region, ds_ids, nds)) < 0 ||
	    (rc = run_argv(plan, s, w)) < 0)
		goto fail;
	*out = plan;
	return 0;
fail:
	json_decref(plan);
	return rc;
}

void hml__iterative_choice(const json_t *sample, long long *k, long long *interleave)
{
	const json_t *kv = json_object_get(sample, "k"), *iv = json_object_get(sample, "interleave");

	*k = json_is_integer(kv) ? json_integer_value(kv) : -1;
	*interleave = json_is_integer(iv) ? json_integer_value(iv) : -1;
}

int hml__iterative_group(const char **ids, size_t cap, size_t *n, const json_t *plan,
                         long long k, const char *const *ds_ids, size_t nds)
{
	const json_t *g, *ix;
	size_t i, j;

	*n = 0;
	json_array_foreach(json_object_get(plan, "groups"), i, g) {
		const json_t *gk = json_object_get(g, "k");

		if (k < 0 ? !json_is_null(gk) : !(json_is_integer(gk) && json_integer_value(gk) == k))
			continue;
		json_array_foreach(json_object_get(g, "data"), j, ix) {
			json_int_t d = json_integer_value(ix);

			if (d >= 0 && (size_t)d < nds && *n < cap)
				ids[(*n)++] = ds_ids[d];
		}
		return 0;
	}
	return hml__error_set(HML_ENOTFOUND, "the search plan has no data set collected at k %lld",
	                      k);
}

void hml__iterative_predict(hml__prediction *p, const hml__store *s, const json_t *plan,
                            const char *region, long long k, long long il, double latency,
                            const char *const *ds_ids, size_t nds)
{
	const char *ids[256];
	hml__region_cost cost;
	hml__schedule sch = { k > 0 ? (double)k : NAN, il > 0 ? il : 0 };
	size_t n = nds;

	if (plan && hml__iterative_group(ids, sizeof(ids) / sizeof(ids[0]), &n, plan, k, ds_ids,
	                                 nds) == 0)
		ds_ids = ids;
	hml__cost_of_datasets(&cost, s, region, ds_ids, n);
	hml__predict(p, &cost, latency, NAN, &sch);
}

double hml__iterative_step_seconds(const hml__store *s, const json_t *plan, const char *region,
                                   const json_t *sample, double latency,
                                   const char *const *ds_ids, size_t nds)
{
	hml__prediction p;
	long long k, il;

	hml__iterative_choice(sample, &k, &il);
	hml__iterative_predict(&p, s, plan, region, k, il, latency, ds_ids, nds);
	return p.step_seconds;
}

/* The group of k in plan (k < 0: the group of a plan that searches no k), or NULL. */
static const json_t *group_of(const json_t *plan, long long k)
{
	const json_t *g;
	size_t i;

	json_array_foreach(json_object_get(plan, "groups"), i, g) {
		const json_t *gk = json_object_get(g, "k");

		if (k < 0 ? json_is_null(gk) : json_is_integer(gk) && json_integer_value(gk) == k)
			return g;
	}
	return NULL;
}

/* A group's bound: max_latency, or the room its cost leaves, the lower. */
static double group_bound(const json_t *g, double max_latency)
{
	double room = hml__search_latency_room(hml__json_number(g, "region_cost_per_row"),
	                                       hml__json_number(g, "region_move_per_row"));
	double b = max_latency > 0 ? max_latency : INFINITY;

	if (room < b)
		b = room;
	return isfinite(b) ? b : NAN;
}

double hml__iterative_latency_bound(const json_t *plan, long long k, double max_latency)
{
	const json_t *g = group_of(plan, k);

	if (!g || !json_object_get(g, "region_cost_per_row"))
		return NAN;
	return group_bound(g, max_latency);
}

double hml__iterative_latency_bound_max(const json_t *plan, double max_latency)
{
	const json_t *g;
	double most = NAN;
	size_t i;

	json_array_foreach(json_object_get(plan, "groups"), i, g) {
		double b = json_object_get(g, "region_cost_per_row") ? group_bound(g, max_latency) :
		           NAN;

		if (b > 0 && !(b <= most))
			most = b;
	}
	return most;
}
