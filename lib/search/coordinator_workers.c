/*
 * lib/search/coordinator_workers.c - the coordinator's workers: started
 * with the data to load, their messages (ready, an error, a trial's
 * result), and a worker lost (crashed or killed) replaced.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "search/coordinator_private.h"
#include "search/wire.h"

int hml__coord_worker_start(hml__coordinator *c, int k)
{
	hml__coord_worker *w = &c->wk[k];
	json_t *msg;
	int rc;

	memset(w, 0, sizeof(*w));
	w->trial = -1;
	if ((rc = c->o.pool_ops->start(c->o.pool, k)) != 0)
		return rc < 0 ? rc : 0;   /* 1: a rank given up is not replaced */
	w->alive = 1;
	if (!(msg = hml__wire_init(c->p->region, (const char *const *)c->p->ds_paths, c->p->nds,
	                           "drop")))
		return hml__error_oom();
	if (c->p->iterative &&
	    (rc = hml__wire_init_set_run(msg, c->p->iterative, c->p->ds_paths,
	                                 c->p->xp_dir ? c->p->xp_dir : c->p->dir, c->p->dir)) < 0) {
		json_decref(msg);
		return rc;
	}
	(void)c->o.pool_ops->send(c->o.pool, k, msg);   /* a dead worker shows in the wait */
	json_decref(msg);
	return 0;
}

int hml__coord_worker_lost(hml__coordinator *c, int k, hml__hist_status status,
                           const char *detail)
{
	long i = c->wk[k].trial;
	int ready = c->wk[k].ready, rc;
	char why[64], msg[512];

	c->o.pool_ops->stop(c->o.pool, k, why, sizeof(why));
	c->wk[k].alive = c->wk[k].ready = 0;
	c->wk[k].trial = -1;
	if (!ready)
		return hml__error_set(HML_ERROR, "worker %d of search '%s' ended while starting (%s%s%s);"
		                      " see %s/worker-%d.log", k, c->p->id, why, detail ? ": " : "",
		                      detail ? detail : "", c->p->dir, k);
	if (i >= 0) {
		if (status == HML__HIST_TIMEOUT)
			snprintf(msg, sizeof(msg), "no result within --trial-timeout %g s; worker %d "
			         "killed", c->p->trial_timeout, k);
		else
			snprintf(msg, sizeof(msg), "worker %d %s%s%s", k, why, detail ? ": " : "",
			         detail ? detail : "");
		if ((rc = hml__coord_trial_end(c, i, status, msg, NULL, NAN, NAN)) < 0)
			return rc;
		hml__coord_warn(c, "trial %ld %s: %s", i, hml__hist_status_name(status), msg);
	}
	return hml__coord_worker_start(c, k);
}

/* A message from worker k. */
static int worker_message(hml__coordinator *c, int k, const json_t *msg)
{
	const char *type = hml__wire_type(msg), *error;
	hml__coord_worker *w = &c->wk[k];
	hml__train_result r;
	long i;
	double cost;
	int rc, target;

	if (strcmp(type, "ready") == 0) {
		w->ready = 1;
		return 0;
	}
	if (strcmp(type, "error") == 0)   /* the data would not load */
		return hml__error_set(HML_EINVALID, "search '%s': worker %d: %s", c->p->id, k,
		                      json_string_value(json_object_get(msg, "error")));
	if ((rc = hml__wire_result_read(msg, &i, &error, &r)) < 0 ||
	    (rc = hml__wire_result_latency(msg, &target, &cost)) < 0)
		return rc;
	if (!error && target != c->p->target)
		return hml__error_set(HML_ERROR, "search '%s': worker %d measured the %s latency of "
		                      "trial %ld, not the %s latency", c->p->id, k,
		                      hml__target_name(target), i, hml__target_name(c->p->target));
	if (i != w->trial)
		return hml__error_set(HML_ERROR, "search '%s': worker %d answered for trial %ld while "
		                      "running trial %ld", c->p->id, k, i, w->trial);
	w->trial = -1;
	return hml__coord_trial_end(c, i, error ? HML__HIST_FAILED : HML__HIST_OK, error, &r, cost,
	                            hml__wire_result_qoi(msg));
}

int hml__coord_on_event(void *payload, const hml__pool_event *ev)
{
	hml__coordinator *c = payload;

	if (hml__coord_interrupted(c))
		return 1;
	if (isnan(c->wait_t)) {
		c->wait_t = hml__now();
		c->wait_c = hml__thread_cpu();
	}
	if (ev->worker < 0 || ev->worker >= c->p->nworkers || !c->wk[ev->worker].alive)
		return 0;
	if (ev->kind == HML__POOL_MESSAGE)
		return worker_message(c, ev->worker, ev->msg);
	return hml__coord_worker_lost(c, ev->worker, HML__HIST_CRASHED, ev->detail);
}
