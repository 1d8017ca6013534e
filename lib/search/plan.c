/*
 * lib/search/plan.c - what an hml search searches: a new search planned
 * and registered, a recorded one checked for --resume (see plan.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "deploy/metrics.h"
#include "search/history.h"
#include "search/iterative.h"
#include "search/plan.h"
#include "search/seed.h"
#include "search/results.h"
#include "search/trialmap.h"
#include "store/checked.h"
#include "store/cost.h"
#include "store/data_pick.h"
#include "store/records.h"
#include "sys/fsutil.h"
#include "train/arch.h"

static void say(void (*fn)(void *, const char *), void *payload, const char *fmt, ...)
	HML__PRINTF(3, 4);

static void say(void (*fn)(void *, const char *), void *payload, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(payload, msg);
}

/* ---- data and workflow -------------------------------------------------- */

/* The region (given, else the only one with rows) and its data sets, as
 * hml train chooses them (lib/store/data_pick.h); their files, checked. */
static int pick_data(hml__search_plan *p, const hml__store *s)
{
	hml__data_query q = { p->region, NULL, NULL, 0, "search on" };
	hml__data_choice c;
	int rc;

	if ((rc = hml__data_pick(&c, s, &q)) < 0)
		return rc;
	p->region = c.region;
	p->workflow_name = c.workflow;
	p->ds_ids = c.ids;   /* now p's */
	p->nds = c.n;
	return hml__checked_dataset_files(s, p->ds_ids, p->nds, &p->ds_paths);
}

/* The workflow of the data (for the region's family, arch, training
 * defaults and batch); without it, hml's defaults. */
static void load_workflow(hml__search_plan *p, const hml__store *s,
                          const hml__search_request *rq)
{
	const hml__workflow_region *wr;
	hml__dataset_view d;

	hml__dataset_view_of(&d, hml__store_find(s, "datasets", p->ds_ids[0]));
	if (d.workflow_path && hml__workflow_load(&p->w, d.workflow_path) < 0 &&
	    hml__workflow_load(&p->w, p->workflow_name) < 0) {
		say(rq->warn, rq->payload, "the workflow of data set '%s' cannot be loaded (%s); "
		    "searching with hml's defaults", p->ds_ids[0], hml_error_last()->message);
		p->w = NULL;
	}
	wr = p->w ? hml__workflow_region_find(p->w, p->region) : NULL;
	p->family = wr && wr->family ? wr->family : "mlp";
	p->base_arch = wr ? wr->arch : NULL;
}

/* What the region's original code costs per row in the data searched on:
 * a model slower than that is infeasible (lib/store/cost.h). */
static void region_cost(hml__search_plan *p, const hml__store *s)
{
	hml__region_cost c;

	hml__cost_of_datasets(&c, s, p->region, p->ds_ids, p->nds);
	p->region_cost = hml__cost_per_row(&c);
	p->region_move = hml__cost_move_per_row(&c);
	if (!(p->region_move > 0))
		p->region_move = 0;
	if (c.threads > 0)
		p->lat_threads = c.threads;
}

/* Say what the original code costs per row: slower models are infeasible.
 * An iterative search says it for each k, from the data of that k, which
 * bounds the trials at k (lib/search/iterative.h). */
static void say_cost(const hml__search_plan *p, const hml__search_request *rq)
{
	const json_t *groups = p->iterative ? json_object_get(p->iterative, "groups") : NULL, *g;
	char buf[32], move[32], at[48] = "";
	size_t i, n = json_array_size(groups);

	for (i = 0; i <= n; i++) {
		double cost = p->region_cost, mv = p->region_move;

		g = json_array_get(groups, i);
		if (i < n && !(json_is_integer(json_object_get(g, "k")) &&
		               json_object_get(g, "region_cost_per_row")))
			continue;
		if (i < n) {
			cost = hml__json_number(g, "region_cost_per_row");
			mv = hml__json_number(g, "region_move_per_row");
			snprintf(at, sizeof(at), " at k %lld",
			         (long long)json_integer_value(json_object_get(g, "k")));
		} else if (at[0]) {
			break;   /* each k said its own */
		}
		if (isnan(cost)) {
			say(rq->info, rq->payload, "the data%s record no cost of the original code of "
			    "region '%s' (collected before hml measured it): no model is judged slower "
			    "than it", at, p->region);
			continue;
		}
		hml__format_seconds(buf, sizeof(buf), cost, 2);
		if (mv > 0)
			say(rq->info, rq->payload, "the original code of region '%s'%s costs %s per row, "
			    "moving a row in and out %s: slower models are infeasible", p->region, at,
			    buf, hml__format_seconds(move, sizeof(move), mv, 2));
		else
			say(rq->info, rq->payload, "the original code of region '%s'%s costs %s per row: "
			    "slower models are infeasible", p->region, at, buf);
	}
}

double hml__search_plan_latency_bound(const hml__search_plan *p)
{
	double b = p->max_latency > 0 ? p->max_latency : INFINITY;
	double room = hml__search_latency_room(p->region_cost, p->region_move);
	double per_k = p->iterative ? hml__iterative_latency_bound_max(p->iterative,
	                                                               p->max_latency) : NAN;

	if (per_k > 0)   /* each trial has its k's (lib/search/iterative.h) */
		return per_k;
	if (room < b)
		b = room;
	return isfinite(b) ? b : 0;
}

static const hml__workflow_region *region_of(const hml__search_plan *p)
{
	return p->w ? hml__workflow_region_find(p->w, p->region) : NULL;
}

/* Training options every trial starts from: the region's model.train
 * (lib/run/workflow.h, as hml train's defaults), the search's epochs. */
static void setup_base(hml__search_plan *p)
{
	const hml__workflow_region *wr = region_of(p);

	p->base = (hml__train_options)HML__TRAIN_OPTIONS_INIT;
	hml__workflow_train_options(wr, &p->base, NULL);
	p->base.epochs = p->max_epochs;
	p->base.infer_batch = wr && wr->batch > 0 ? wr->batch : 0;
	p->base.latency_threads = p->lat_threads;
}

/* ---- the search space --------------------------------------------------- */

/* The space object of a JSON document: its "search_space" member when it
 * has one (a model family's description), else the document. New ref. */
static json_t *space_of(json_t *doc)
{
	json_t *inner = json_object_get(doc, "search_space");
	json_t *sp = json_is_object(inner) ? json_incref(inner) : json_incref(doc);

	json_decref(doc);
	return sp;
}

/* From `path` (--space, or recorded), else the region's, else the family's. */
static int load_space(hml__search_plan *p, const hml__store *s, const char *path,
                      const char *kind)
{
	const hml__workflow_region *wr = region_of(p);
	json_error_t je;
	char origin[600];
	int rc;

	if (path) {
		char *abs = hml__path_abs(path);

		if ((rc = hml__space_read(&p->space_json, path)) < 0) {   /* read once, bounded */
			free(abs);
			return rc;
		}
		p->space_source = json_pack("{s:s, s:s}", "kind", "file", "path", abs ? abs : path);
		free(abs);
		snprintf(origin, sizeof(origin), "%s", path);
	} else if (wr && wr->search_space && (!kind || strcmp(kind, "workflow") == 0)) {
		p->space_json = json_incref(wr->search_space);
		p->space_source = json_pack("{s:s, s:s}", "kind", "workflow", "path", p->w->path);
		snprintf(origin, sizeof(origin), "workflow '%s' region '%s' model.search_space",
		         p->w->path, p->region);
	} else {
		const char *text = hml__arch_family_json(p->family);

		p->space_json = text ? space_of(json_loads(text, 0, &je)) : NULL;
		p->space_source = json_pack("{s:s, s:s}", "kind", "family", "family", p->family);
		snprintf(origin, sizeof(origin), "models/%s.json", p->family);
	}
	if (!p->space_json || !p->space_source)
		return hml__error_set(HML_EINVALID, "search space '%s' cannot be read", origin);
	if (p->w && hml__search_args_any(&p->w->search_args)) {
		/* k and interleave join the space (lib/search/iterative.h) */
		json_t *copy = json_deep_copy(p->space_json);

		json_decref(p->space_json);
		json_decref(p->iterative);
		p->iterative = NULL;
		if (!(p->space_json = copy))
			return hml__error_oom();
		if ((rc = hml__iterative_plan(&p->iterative, s, p->w, p->region,
		                              (const char *const *)p->ds_ids, p->nds,
		                              p->space_json)) < 0)
			return rc;
	}
	if (!p->space && (rc = hml__space_parse(&p->space, p->space_json, origin)) < 0)
		return rc;
	if ((rc = hml__trialmap_check(p->space, p->family, origin)) < 0)
		return rc;
	return hml__json_sha256(p->space_json, p->space_sha);
}

/* The number of rungs for full trials of max_epochs, eta 3: as many as
 * keep the lowest rung at one epoch or more, at most 3; and a fourth when
 * even that one gets 3 epochs or more (max_epochs >= 81), as Hyperband's
 * widest bracket does, so that a long training's configurations are first
 * judged at 1/27 of it and a configuration costs about 4/27 of a full
 * training instead of 1/3 (hml-search(1)). */
static unsigned rungs_for(int epochs)
{
	unsigned r = 1;

	for (int e = epochs; e >= 3 && r < 3; e /= 3)
		r++;
	if (r == 3 && epochs >= 81)
		r = 4;
	return r;
}

/* What a new search searches: region, data, workflow, epochs. */
static int plan_search(hml__search_plan *p, const hml__store *s, const hml__search_request *rq)
{
	int rc;

	p->region = rq->region;
	if ((rc = pick_data(p, s)) < 0)
		return rc;
	load_workflow(p, s, rq);
	region_cost(p, s);
	if (rq->max_epochs != HML__SEARCH_UNSET) {
		p->max_epochs = (int)rq->max_epochs;
	} else {
		hml__train_options t = HML__TRAIN_OPTIONS_INIT;   /* epochs 100 */

		hml__workflow_train_options(region_of(p), &t, NULL);
		p->max_epochs = t.epochs;
	}
	return 0;
}

/* ---- starting and resuming ---------------------------------------------- */

/* The settings of the command line, before a record may replace them. */
static void from_request(hml__search_plan *p, const hml__search_request *rq)
{
	memset(p, 0, sizeof(*p));
	p->budget = rq->budget != HML__SEARCH_UNSET ? rq->budget : 50;
	p->seed = rq->seed != HML__SEARCH_UNSET ? rq->seed : 1;
	p->nworkers = rq->ranks > 0 ? rq->ranks
	            : rq->workers != HML__SEARCH_UNSET ? (int)rq->workers : 1;
	p->mpi = rq->ranks > 0;
	p->max_latency = isnan(rq->max_latency) ? 0 : rq->max_latency;
	p->max_params = isnan(rq->max_params) ? 0 : rq->max_params;
	p->max_error = isnan(rq->max_error) ? 0 : rq->max_error;
	p->trial_timeout = rq->trial_timeout;
	p->region_cost = NAN;
	p->keep_all = rq->keep_models && strcmp(rq->keep_models, "all") == 0;
	p->deterministic = rq->deterministic;
	p->target = -1;
}

static const char *const fidelities[] = { "epochs", "rows", "both" };

const char *hml__fidelity_name(int f)
{
	return f >= 0 && f < 3 ? fidelities[f] : NULL;
}

int hml__fidelity_parse(const char *name)
{
	for (int f = 0; name && f < 3; f++)
		if (strcmp(fidelities[f], name) == 0)
			return f;
	return -1;
}

/* --fidelity, else the one recorded (older records: epochs), else epochs. */
static int choose_fidelity(hml__search_plan *p, const hml__search_request *rq,
                           const char *recorded)
{
	const char *name = rq->fidelity ? rq->fidelity : recorded ? recorded : "epochs";
	int f = hml__fidelity_parse(name);

	if (f < 0 && rq->fidelity)
		return hml__error_set(HML_EINVALID, "unknown fidelity '%s' (known: epochs, rows, "
		                      "both)", name);
	if (f < 0)
		return hml__error_set(HML_EINVALID, "search '%s' records an unknown fidelity '%s'",
		                      p->id, name);
	if (recorded && rq->fidelity && strcmp(recorded, rq->fidelity) != 0)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s' with --fidelity %s: "
		                      "it was started with %s", p->id, rq->fidelity, recorded);
	p->fidelity = f;
	return 0;
}

void hml__search_plan_rung_options(const hml__search_plan *p, double fraction,
                                   hml__train_options *o)
{
	double epochs = fraction, rows = 1;

	if (p->fidelity == HML__FIDELITY_ROWS) {
		epochs = 1;
		rows = fraction;
	} else if (p->fidelity == HML__FIDELITY_BOTH) {
		epochs = rows = sqrt(fraction);
	}
	o->epochs = (int)lround(o->epochs * epochs);
	if (o->epochs < 1)
		o->epochs = 1;
	o->row_fraction = rows < 1 ? rows : 1;
}

/* Worker processes beyond the budget's configurations never get a trial,
 * and beyond the online cores they only share them (each loads libtorch,
 * ~60 MB, and distorts the latencies the search measures): capped, with a
 * note, the request kept in workers_requested. With --deterministic the
 * workers decide the trials, so only the budget caps them; MPI ranks are
 * the launcher's. */
static void cap_workers(hml__search_plan *p, const hml__search_request *rq, long cores)
{
	long long cap = p->budget;

	if (!p->deterministic && cores > 0 && cores < cap)
		cap = cores;
	p->workers_requested = 0;
	if (p->mpi || p->nworkers <= cap)
		return;
	p->workers_requested = p->nworkers;
	p->nworkers = (int)cap;
	say(rq->info, rq->payload, "%d workers capped at %d: %s", p->workers_requested,
	    p->nworkers, cap == p->budget ? "the budget's configurations" : "the online cores");
}

/* libtorch threads per worker: --threads, else the cores shared out. */
static void set_threads(hml__search_plan *p, const hml__search_request *rq)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	cap_workers(p, rq, cores);
	p->threads = rq->threads != HML__SEARCH_UNSET ? (int)rq->threads
	           : (int)(cores > p->nworkers ? cores / p->nworkers : 1);
	if (p->lat_threads <= 0)
		p->lat_threads = p->threads;
}

/* search/<id>, absolute. */
static int set_dir(hml__search_plan *p, const hml__store *s)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "search/%s", p->id);
	p->xp_dir = hml__store_dir(s);
	return (p->dir = hml__store_path(s, rel)) ? 0 : hml__error_oom();
}

static json_t *constraints_json(const hml__search_plan *p)
{
	return json_pack("{s:o, s:o, s:o}", "max_latency", hml__json_real(p->max_latency > 0 ?
	                 p->max_latency : NAN), "max_params", hml__json_real(p->max_params > 0 ?
	                 p->max_params : NAN), "max_error", hml__json_real(p->max_error > 0 ?
	                 p->max_error : NAN));
}

/* The latency objective's target: --target, else the one recorded (on
 * resume: a different one is refused), else auto's choice. */
static int choose_target(hml__search_plan *p, const hml__search_request *rq,
                         const char *recorded)
{
	char why[300];
	const char *target = rq->target;
	int given = target && strcmp(target, "auto") ? hml__target_parse(target) : -1;
	int t = given >= 0 ? given : recorded ? hml__target_parse(recorded)
	      : hml__target_auto(p->family, why, sizeof(why));
	int log_loss = p->base.loss && strcmp(p->base.loss, "log") == 0;

	if (log_loss && !recorded && given < 0 && t == HML__TARGET_C) {
		t = HML__TARGET_TORCHSCRIPT;
		snprintf(why, sizeof(why), "the loss is log, whose models do not compile to C");
	}
	if (log_loss && t == HML__TARGET_C && !recorded)
		return hml__error_set(HML_EINVALID, "--target c: the latency target is c, but the loss "
		                      "is log, whose models do not compile to C");

	if (recorded && given >= 0 && hml__target_parse(recorded) != given)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s' with --target %s: it "
		                      "was started with %s", p->id, target, recorded);
	if (recorded && t < 0)
		return hml__error_set(HML_EINVALID, "search '%s' records an unknown latency target "
		                      "'%s'", p->id, recorded);
	if (t == HML__TARGET_C && (given >= 0 || recorded) &&
	    hml__target_auto(p->family, why, sizeof(why)) != HML__TARGET_C)
		return hml__error_set(HML_EINVALID, "%s: the latency target is c, but %s",
		                      recorded ? "cannot resume the search" : "--target c", why);
	if (given < 0 && !recorded && t != HML__TARGET_C)
		say(rq->info, rq->payload, "latency objective: torchscript (%s)", why);
	p->target = t;
	return 0;
}

/* --from: the front of another search of the region, its configurations
 * that this search's space can express tried first (seed.h). */
static int seed_from(hml__search_plan *p, const hml__store *s, const hml__search_request *rq)
{
	size_t n, skipped, dim = hml__space_dim(p->space);
	double *u;
	int rc;

	if ((rc = hml__seed_front(&p->seeds, s, rq->from, p->region)) < 0)
		return rc;
	p->from = rq->from;
	if (!(u = malloc((json_array_size(p->seeds) + 1) * dim * sizeof(*u))))
		return hml__error_oom();
	n = hml__seed_points(u, json_array_size(p->seeds), p->space, p->seeds, &skipped);
	free(u);
	if (n == 0)
		return hml__error_set(HML_EINVALID, "search '%s': none of the %zu configurations on "
		                      "its front is in this search's space", rq->from, skipped);
	if (skipped)
		say(rq->warn, rq->payload, "search '%s': %zu of the %zu configurations on its front "
		    "are outside this search's space; the other %zu are tried first", rq->from,
		    skipped, skipped + n, n);
	else
		say(rq->info, rq->payload, "search '%s': the %zu configurations on its front are tried "
		    "first", rq->from, n);
	return 0;
}

int hml__search_plan_new(hml__search_plan *p, hml__store *s, const hml__search_request *rq)
{
	json_t *ids, *rec;
	int rc;

	from_request(p, rq);
	set_threads(p, rq);
	if ((rc = plan_search(p, s, rq)) < 0)
		return rc;
	p->rungs = rungs_for(p->max_epochs);
	setup_base(p);
	if ((rc = load_space(p, s, rq->space_path, NULL)) < 0)
		return rc;
	say_cost(p, rq);
	if ((rc = choose_target(p, rq, NULL)) < 0 || (rc = choose_fidelity(p, rq, NULL)) < 0 ||
	    (rq->from && (rc = seed_from(p, s, rq)) < 0))
		return rc;
	if (!(ids = json_array()))
		return hml__error_oom();
	for (size_t i = 0; i < p->nds; i++)
		json_array_append_new(ids, json_string(p->ds_ids[i]));
	rec = json_pack("{s:s, s:s, s:s, s:s, s:O, s:s, s:O, s:o, s:o, s:I, s:I, s:i, s:i, s:i,"
	                " s:i, s:i, s:o, s:s, s:o, s:{s:i, s:i, s:i, s:i, s:i}, s:f, s:s, s:s,"
	                " s:b, s:o, s:o, s:i, s:s, s:s, s:s}",
	                "region", p->region, "workflow", p->workflow_name, "family", p->family,
	                "status", "running", "space", p->space_json, "space_sha256", p->space_sha,
	                "space_source", p->space_source, "datasets", ids,
	                "data_sha256", hml__records_data_sha256(s, p->ds_ids, p->nds),
	                "seed", (json_int_t)p->seed, "budget", (json_int_t)p->budget,
	                "workers", p->nworkers, "threads", p->threads, "eta", 3,
	                "rungs", (int)p->rungs, "max_epochs", p->max_epochs,
	                "constraints", constraints_json(p),
	                "keep_models", p->keep_all ? "all" : "front",
	                "trial_timeout", hml__json_real(p->trial_timeout),
	                "counts", "configs", 0, "trials", 0, "ok", 0, "failed", 0, "reruns", 0,
	                "seconds", 0.0, "transport", p->mpi ? "mpi" : "processes",
	                "latency_target", hml__target_name(p->target),
	                "deterministic", p->deterministic,
	                "region_cost_per_row", hml__json_real(p->region_cost),
	                "region_move_per_row", hml__json_real(p->region_move),
	                "latency_threads", p->lat_threads,
	                "metric", p->base.metric ? p->base.metric : "rmse",
	                "loss", p->base.loss ? p->base.loss : "mse",
	                "fidelity", hml__fidelity_name(p->fidelity));
	if (rec && p->seeds &&
	    json_object_set_new(rec, "from", json_pack("{s:s, s:O}", "search", p->from,
	                                               "configs", p->seeds)) < 0) {
		json_decref(rec);
		rec = NULL;
	}
	if (rec && p->iterative && json_object_set(rec, "iterative", p->iterative) < 0) {
		json_decref(rec);
		rec = NULL;
	}
	if (!rec)
		return hml__error_oom();
	if ((rc = hml__search_register(s, rec, p->id, sizeof(p->id))) < 0)
		return rc;
	return set_dir(p, s);
}

/* An option given again on --resume must agree with the search's record. */
static int same(const hml__search_plan *p, const char *opt, double given, double recorded)
{
	if (isnan(given) || given == recorded || (isnan(recorded) && given <= 0))
		return 0;
	if (isnan(recorded))
		return hml__error_set(HML_EINVALID, "cannot resume search '%s' with %s %g: it was "
		                      "started without it", p->id, opt, given);
	return hml__error_set(HML_EINVALID, "cannot resume search '%s' with %s %g: it was started "
	                      "with %g", p->id, opt, given, recorded);
}

static double bound_of(const hml__search_view *v, const char *key)
{
	const json_t *b = json_object_get(v->constraints, key);

	return json_is_number(b) ? json_number_value(b) : NAN;
}

static double given_int(int64_t v)
{
	return v != HML__SEARCH_UNSET ? (double)v : NAN;
}

/* Compare the search's recorded data sets and space with today's. */
static int resume_check(hml__search_plan *p, const hml__store *s, const hml__search_request *rq,
                        const hml__search_view *v)
{
	json_t *now = hml__records_data_sha256(s, p->ds_ids, p->nds);
	const json_t *src = json_object_get(v->json, "space_source");
	const char *kind = hml__json_string(src, "kind");
	const char *path = rq->space_path ? rq->space_path : kind && strcmp(kind, "file") == 0
		? hml__json_string(src, "path") : NULL;
	int same_data = now && v->data_sha256 && json_equal(now, (json_t *)v->data_sha256), rc;

	json_decref(now);
	if (!same_data)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s': its data changed since "
		                      "it started (data sets or their SHA-256 differ); start a new "
		                      "search", p->id);
	if ((rc = load_space(p, s, path, kind)) < 0)
		return rc;
	if (!v->space_sha256 || strcmp(v->space_sha256, p->space_sha) != 0)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s': its search space "
		                      "changed since it started (SHA-256 differs); start a new search",
		                      p->id);
	return 0;
}

/* The coordinator's time in the earlier sessions, as recorded. */
static void prev_times(hml__search_times *t, const json_t *rec)
{
	const char *keys[] = { "seconds", "coordinator_cpu_seconds", "coordinator_busy_seconds",
	                       "coordinator_suggest_seconds", "coordinator_busy_cpu_seconds",
	                       "coordinator_suggest_cpu_seconds" };
	double *to[] = { &t->seconds, &t->cpu, &t->busy, &t->suggest, &t->busy_cpu,
	                 &t->suggest_cpu };

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		*to[k] = isnan(hml__json_number(rec, keys[k])) ? 0 : hml__json_number(rec, keys[k]);
}

/* The recorded settings; options given again checked against them. */
static int from_record(hml__search_plan *p, const hml__search_request *rq,
                       const hml__search_view *v)
{
	int rc;

	snprintf(p->id, sizeof(p->id), "%s", v->id);
	if (!v->region || isnan(v->seed) || isnan(v->budget) || isnan(v->max_epochs))
		return hml__error_set(HML_EINVALID, "search '%s' has an incomplete record", p->id);
	if ((rc = same(p, "--seed", given_int(rq->seed), v->seed)) < 0 ||
	    (rc = same(p, "--max-epochs", given_int(rq->max_epochs), v->max_epochs)) < 0 ||
	    (rc = same(p, "--max-latency", rq->max_latency, bound_of(v, "max_latency"))) < 0 ||
	    (rc = same(p, "--max-params", rq->max_params, bound_of(v, "max_params"))) < 0 ||
	    (rc = same(p, "--max-error", rq->max_error, bound_of(v, "max_error"))) < 0)
		return rc;
	if (rq->region && strcmp(rq->region, v->region) != 0)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s' on region '%s': it "
		                      "searches region '%s'", p->id, rq->region, v->region);
	p->deterministic = v->deterministic;
	if (rq->deterministic && !p->deterministic)
		return hml__error_set(HML_EINVALID, "cannot resume search '%s' with --deterministic: "
		                      "it was started without it", p->id);
	p->region = v->region;
	prev_times(&p->prev, v->json);
	p->seed = (long long)v->seed;
	p->max_epochs = (int)v->max_epochs;
	/* the recorded rungs: the rule of rungs_for() may differ between versions */
	p->rungs = rungs_for(p->max_epochs);
	if (!isnan(v->rungs)) {
		if (v->rungs < 1 || v->rungs > 8 || v->rungs != floor(v->rungs))
			return hml__error_set(HML_EINVALID, "search '%s' records %g rungs (1 to 8 "
			                      "expected)", p->id, v->rungs);
		p->rungs = (unsigned)v->rungs;
	}
	p->budget = rq->budget != HML__SEARCH_UNSET ? rq->budget : (long long)v->budget;
	p->max_latency = bound_of(v, "max_latency");
	p->region_cost = hml__json_number(v->json, "region_cost_per_row");
	if (!(p->region_cost > 0))
		p->region_cost = NAN;
	p->region_move = hml__json_number(v->json, "region_move_per_row");
	if (!(p->region_move > 0))
		p->region_move = 0;
	p->lat_threads = (int)hml__json_number(v->json, "latency_threads");
	if (!(p->lat_threads > 0 && p->lat_threads <= hml__threads_max()))
		p->lat_threads = 0;   /* older records: the workers' threads */
	p->max_params = bound_of(v, "max_params");
	p->max_error = bound_of(v, "max_error");
	if (!rq->keep_models)
		p->keep_all = hml__json_string(v->json, "keep_models") &&
		              strcmp(hml__json_string(v->json, "keep_models"), "all") == 0;
	if (isnan(rq->trial_timeout))
		p->trial_timeout = hml__json_number(v->json, "trial_timeout");
	if (rq->workers == HML__SEARCH_UNSET && rq->ranks <= 0 && !isnan(v->workers))
		p->nworkers = (int)v->workers;
	return 0;
}

int hml__search_plan_resume(hml__search_plan *p, hml__store *s, const hml__search_request *rq,
                            const char *id)
{
	hml__search_view v;
	size_t n = hml__records_count(s, "searches");
	int rc;

	from_request(p, rq);
	if (id)
		rc = hml__records_search(&v, s, id);
	else if (!n)
		rc = hml__error_set(HML_ENOTFOUND, "no search to resume in experiment '%s'",
		                    hml__store_dir(s));
	else
		rc = hml__records_search_at(&v, s, n - 1) ? 0 : HML_ENOTFOUND;
	if (rc < 0 || (rc = from_record(p, rq, &v)) < 0 || (rc = pick_data(p, s)) < 0)
		return rc;
	load_workflow(p, s, rq);
	if ((rc = choose_target(p, rq, v.latency_target ? v.latency_target : "torchscript")) < 0 ||
	    (rc = choose_fidelity(p, rq, hml__json_string(v.json, "fidelity") ?
	                                 hml__json_string(v.json, "fidelity") : "epochs")) < 0 ||
	    (rc = resume_check(p, s, rq, &v)) < 0)
		return rc;
	set_threads(p, rq);
	setup_base(p);
	/* what the search ranked by when it started; older records: RMSE, MSE */
	p->base.metric = v.metric;
	p->base.loss = hml__json_string(v.json, "loss") ? hml__json_string(v.json, "loss") : "mse";
	/* the recorded seeds, not the source search's front again */
	if ((p->seeds = json_object_get(json_object_get(v.json, "from"), "configs")) != NULL) {
		json_incref(p->seeds);
		p->from = hml__json_string(json_object_get(v.json, "from"), "search");
	}
	p->resumed = 1;
	return set_dir(p, s);
}

/* ---- --train-args ------------------------------------------------------- */

/* Every parameter of the point must be one the space searches. */
static int check_point(const hml__search_plan *p, const json_t *point)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)point, key, v) {
		size_t i, n = hml__space_count(p->space);

		for (i = 0; i < n && strcmp(hml__space_name(p->space, i), key) != 0; i++)
			;
		if (i == n)
			return hml__error_set(HML_EINVALID, "--train-args: parameter '%s' is not in the "
			                      "search space of region '%s'", key, p->region);
	}
	return 0;
}

int hml__search_plan_train_args(json_t **argv, hml__store *s, const hml__search_request *rq,
                                const json_t *point)
{
	hml__search_plan p;
	hml__train_options o;
	char arch[256];
	int rc;

	*argv = NULL;
	from_request(&p, rq);
	if ((rc = plan_search(&p, s, rq)) < 0 || (rc = load_space(&p, s, rq->space_path, NULL)) < 0 ||
	    (rc = check_point(&p, point)) < 0)
		goto done;
	setup_base(&p);
	o = p.base;
	if ((rc = hml__trialmap_apply(&o, arch, sizeof(arch), p.family, p.base_arch, point)) < 0)
		goto done;
	if (!(*argv = hml__trialmap_train_argv(&o, p.region)))
		rc = HML_ENOMEM;
done:
	hml__search_plan_release(&p);
	return rc;
}

void hml__search_plan_release(hml__search_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->ds_paths && i < p->nds; i++)
		free(p->ds_paths[i]);
	free(p->ds_paths);
	free(p->ds_ids);
	free(p->dir);
	json_decref(p->space_json);
	json_decref(p->space_source);
	json_decref(p->seeds);
	p->seeds = NULL;
	json_decref(p->iterative);
	p->iterative = NULL;
	hml__space_free(p->space);
	hml__workflow_free(p->w);
	p->ds_paths = NULL;
	p->ds_ids = NULL;
	p->nds = 0;
	p->dir = NULL;
	p->space_json = p->space_source = NULL;
	p->space = NULL;
	p->w = NULL;
}
