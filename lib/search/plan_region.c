/*
 * lib/search/plan_region.c - what a search searches (plan.h): the
 * region's data and workflow, what its original code costs, the options
 * every trial starts from, the search space and its rungs.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "deploy/metrics.h"
#include "search/history.h"
#include "search/iterative.h"
#include "search/plan_private.h"
#include "search/results.h"
#include "search/trialmap.h"
#include "store/checked.h"
#include "store/cost.h"
#include "store/data_pick.h"
#include "store/records.h"
#include "sys/fsutil.h"
#include "train/arch.h"

void hml__plan_say(void (*fn)(void *, const char *), void *payload, const char *fmt, ...)
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

int hml__plan_pick_data(hml__search_plan *p, const hml__store *s)
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

void hml__plan_load_workflow(hml__search_plan *p, const hml__store *s,
                             const hml__search_request *rq)
{
	const hml__workflow_region *wr;
	hml__dataset_view d;

	hml__dataset_view_of(&d, hml__store_find(s, "datasets", p->ds_ids[0]));
	if (d.workflow_path && hml__workflow_load(&p->w, d.workflow_path) < 0 &&
	    hml__workflow_load(&p->w, p->workflow_name) < 0) {
		hml__plan_say(rq->warn, rq->payload, "the workflow of data set '%s' cannot be "
		              "loaded (%s); searching with hml's defaults", p->ds_ids[0],
		              hml_error_last()->message);
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

/* One line on what the original code costs per row, `at` (" at k 4", or
 * "" for the data searched on as a whole): slower models are infeasible. */
static void say_one_cost(const hml__search_plan *p, const hml__search_request *rq,
                         const char *at, double cost, double move)
{
	char buf[32], mv[32];

	if (isnan(cost)) {
		hml__plan_say(rq->info, rq->payload, "the data%s record no cost of the original "
		              "code of region '%s' (collected before hml measured it): no model "
		              "is judged slower than it", at, p->region);
		return;
	}
	hml__format_seconds(buf, sizeof(buf), cost, 2);
	if (move > 0)
		hml__plan_say(rq->info, rq->payload, "the original code of region '%s'%s costs %s "
		              "per row, moving a row in and out %s: slower models are infeasible",
		              p->region, at, buf, hml__format_seconds(mv, sizeof(mv), move, 2));
	else
		hml__plan_say(rq->info, rq->payload, "the original code of region '%s'%s costs %s "
		              "per row: slower models are infeasible", p->region, at, buf);
}

void hml__plan_say_cost(const hml__search_plan *p, const hml__search_request *rq)
{
	const json_t *groups = p->iterative ? json_object_get(p->iterative, "groups") : NULL;
	const json_t *g;
	char at[48];
	size_t i;
	int said = 0;

	json_array_foreach(groups, i, g) {
		const json_t *k = json_object_get(g, "k");

		if (!json_is_integer(k) || !json_object_get(g, "region_cost_per_row"))
			continue;
		snprintf(at, sizeof(at), " at k %lld", (long long)json_integer_value(k));
		say_one_cost(p, rq, at, hml__json_number(g, "region_cost_per_row"),
		             hml__json_number(g, "region_move_per_row"));
		said = 1;
	}
	if (!said)   /* the data as a whole, when no k has its own */
		say_one_cost(p, rq, "", p->region_cost, p->region_move);
}

void hml__plan_say_rollout(const hml__search_plan *p, const hml__search_request *rq)
{
	if (!json_object_get(p->space_json, "rollout"))
		return;
	if (p->iterative)
		hml__plan_say(rq->info, rq->payload, "trials of every rollout are ranked by the "
		              "error of the application's QoI after the whole run");
	else
		hml__plan_say(rq->info, rq->payload, "trials of every rollout are ranked by their "
		              "one-step validation error, the only one they share (the R-step "
		              "error, val_rollout_rmse, grows with R); declare search_args in the "
		              "workflow to rank them by the error after the whole run");
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

void hml__plan_setup_base(hml__search_plan *p)
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

/* A "rollout" parameter of the space, checked against the region's row
 * shapes as its first data set records them (lib/search/trialmap.h). */
static int check_rollout(const hml__search_plan *p, const hml__store *s, const char *origin)
{
	hml__dataset_view d;
	const json_t *reg;

	if (!json_object_get(p->space_json, "rollout"))
		return 0;
	hml__dataset_view_of(&d, hml__store_find(s, "datasets", p->ds_ids[0]));
	reg = hml__dataset_view_region(&d, p->region);
	return hml__trialmap_check_rollout(p->space_json, p->region,
	                                   json_object_get(reg, "input_shape"),
	                                   json_object_get(reg, "output_shape"), origin);
}

int hml__plan_load_space(hml__search_plan *p, const hml__store *s, const char *path,
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
	if ((rc = hml__trialmap_check(p->space, p->family, origin)) < 0 ||
	    (rc = check_rollout(p, s, origin)) < 0)
		return rc;
	return hml__json_sha256(p->space_json, p->space_sha);
}

unsigned hml__plan_rungs_for(int epochs)
{
	unsigned r = 1;

	for (int e = epochs; e >= 3 && r < 3; e /= 3)
		r++;
	if (r == 3 && epochs >= 81)
		r = 4;
	return r;
}

int hml__plan_search(hml__search_plan *p, const hml__store *s, const hml__search_request *rq)
{
	int rc;

	p->region = rq->region;
	if ((rc = hml__plan_pick_data(p, s)) < 0)
		return rc;
	hml__plan_load_workflow(p, s, rq);
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
