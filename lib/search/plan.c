/*
 * lib/search/plan.c - a search's plan made (see plan.h): a new search
 * planned and its record registered, a recorded one read back and checked
 * for --resume, one configuration's training arguments (--train-args);
 * the steps are plan_region.c's and plan_settings.c's (plan_private.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "search/history.h"
#include "search/plan_private.h"
#include "search/trialmap.h"
#include "store/records.h"

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

int hml__search_plan_new(hml__search_plan *p, hml__store *s, const hml__search_request *rq)
{
	json_t *ids, *rec;
	int rc;

	hml__plan_from_request(p, rq);
	hml__plan_set_threads(p, rq);
	if ((rc = hml__plan_search(p, s, rq)) < 0)
		return rc;
	p->rungs = hml__plan_rungs_for(p->max_epochs);
	hml__plan_setup_base(p);
	if ((rc = hml__plan_load_space(p, s, rq->space_path, NULL)) < 0)
		return rc;
	hml__plan_say_cost(p, rq);
	hml__plan_say_rollout(p, rq);
	if ((rc = hml__plan_choose_target(p, rq, NULL)) < 0 ||
	    (rc = hml__plan_choose_fidelity(p, rq, NULL)) < 0 ||
	    (rq->from && (rc = hml__plan_seed_from(p, s, rq)) < 0))
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
	if ((rc = hml__plan_load_space(p, s, path, kind)) < 0)
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
	/* the recorded rungs: the rule of hml__plan_rungs_for() may differ between versions */
	p->rungs = hml__plan_rungs_for(p->max_epochs);
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

	hml__plan_from_request(p, rq);
	if (id)
		rc = hml__records_search(&v, s, id);
	else if (!n)
		rc = hml__error_set(HML_ENOTFOUND, "no search to resume in experiment '%s'",
		                    hml__store_dir(s));
	else
		rc = hml__records_search_at(&v, s, n - 1) ? 0 : HML_ENOTFOUND;
	if (rc < 0 || (rc = from_record(p, rq, &v)) < 0 || (rc = hml__plan_pick_data(p, s)) < 0)
		return rc;
	hml__plan_load_workflow(p, s, rq);
	if ((rc = hml__plan_choose_target(p, rq, v.latency_target ? v.latency_target
	                                                          : "torchscript")) < 0 ||
	    (rc = hml__plan_choose_fidelity(p, rq, hml__json_string(v.json, "fidelity") ?
	                                           hml__json_string(v.json, "fidelity") :
	                                           "epochs")) < 0 ||
	    (rc = resume_check(p, s, rq, &v)) < 0)
		return rc;
	hml__plan_set_threads(p, rq);
	hml__plan_setup_base(p);
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
	hml__plan_from_request(&p, rq);
	if ((rc = hml__plan_search(&p, s, rq)) < 0 ||
	    (rc = hml__plan_load_space(&p, s, rq->space_path, NULL)) < 0 ||
	    (rc = check_point(&p, point)) < 0)
		goto done;
	hml__plan_setup_base(&p);
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
