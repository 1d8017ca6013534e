/*
 * lib/search/plan_settings.c - how a search searches (plan.h): the
 * command line's settings, the fidelity and each rung's options, the
 * workers and their threads, the latency target, the seeds of --from.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "deploy/latency.h"
#include "search/plan_private.h"
#include "search/seed.h"

void hml__plan_from_request(hml__search_plan *p, const hml__search_request *rq)
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

int hml__plan_choose_fidelity(hml__search_plan *p, const hml__search_request *rq,
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
	hml__plan_say(rq->info, rq->payload, "%d workers capped at %d: %s", p->workers_requested,
	              p->nworkers, cap == p->budget ? "the budget's configurations"
	                                            : "the online cores");
}

void hml__plan_set_threads(hml__search_plan *p, const hml__search_request *rq)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	cap_workers(p, rq, cores);
	p->threads = rq->threads != HML__SEARCH_UNSET ? (int)rq->threads
	           : (int)(cores > p->nworkers ? cores / p->nworkers : 1);
	if (p->lat_threads <= 0)
		p->lat_threads = p->threads;
}

int hml__plan_choose_target(hml__search_plan *p, const hml__search_request *rq,
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
		hml__plan_say(rq->info, rq->payload, "latency objective: torchscript (%s)", why);
	p->target = t;
	return 0;
}

int hml__plan_seed_from(hml__search_plan *p, const hml__store *s, const hml__search_request *rq)
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
		hml__plan_say(rq->warn, rq->payload, "search '%s': %zu of the %zu configurations on "
		              "its front are outside this search's space; the other %zu are tried "
		              "first", rq->from, skipped, skipped + n, n);
	else
		hml__plan_say(rq->info, rq->payload, "search '%s': the %zu configurations on its "
		              "front are tried first", rq->from, n);
	return 0;
}
