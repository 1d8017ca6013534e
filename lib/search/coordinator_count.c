/*
 * lib/search/coordinator_count.c - a trial's end: recorded in the history,
 * then counted once its line is durable (the scheduler learns it, its
 * model file is kept or deleted), in trial order under --deterministic.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "deploy/latency.h"
#include "search/coordinator_private.h"
#include "search/iterative.h"

int hml__coord_sched_learn(hml__coordinator *c, long i)
{
	const hml__coord_trial *t = &c->t[i];
	hml__sched_outcome o = { hml__hist_error(&t->m, c->p->base.metric), t->m.latency_s,
	                         (double)t->m.params, hml__hist_cost(&t->m),
	                         t->m.latency_bound };

	return t->end_status == HML__HIST_OK
	       ? hml__sched_report(c->sched, (size_t)t->config, t->rung, &o)
	       : hml__sched_fail(c->sched, (size_t)t->config, t->rung);
}

int hml__coord_discarded(const hml__coordinator *c, const hml__coord_trial *t)
{
	return t->rung + 1 < c->p->rungs && !c->p->keep_all;
}

/* Delete the files of top-rung models the front dominates (they stay
 * dominated: the front only improves). */
static void prune_files(hml__coordinator *c)
{
	size_t *cfg, n;
	long nf, *keep;

	if (c->p->keep_all || (nf = hml__coord_front_configs(c, &cfg)) < 0)
		return;
	n = (size_t)nf;
	/* The front's trials first: O(front x trials), not for every trial. */
	if (!(keep = malloc((n + 1) * sizeof(*keep)))) {
		free(cfg);
		return;
	}
	for (size_t j = 0; j < n; j++)
		keep[j] = hml__coord_top_trial(c, cfg[j]);
	for (size_t i = 0; i < c->nt; i++) {
		hml__coord_trial *t = &c->t[i];
		int on = 0;
		char mp[4200];

		if (!t->has_file || t->status != HML__HIST_OK)
			continue;
		for (size_t j = 0; j < n && !on; j++)
			on = keep[j] == (long)i;
		if (!on) {
			hml__coord_model_path(c, (long)i, mp, sizeof(mp));
			hml__reaper_add(c->reaper, mp);
			t->has_file = 0;
		}
	}
	free(keep);
	free(cfg);
}

int hml__coord_trial_end(hml__coordinator *c, long i, hml__hist_status status,
                         const char *error, const hml__train_result *r, double lat_cost,
                         double qoi)
{
	const hml__search_plan *p = c->p;
	hml__coord_trial *t = &c->t[i];
	hml__hist_event ev;
	int rc;

	if (status == HML__HIST_OK && (!isfinite(hml__train_result_error(r, p->base.metric, 0)) ||
	                               !isfinite(r->latency_s_per_sample))) {
		status = HML__HIST_FAILED;
		error = "training gave no finite validation error or latency";
	}
	if (status == HML__HIST_OK && p->iterative && !isfinite(qoi)) {
		status = HML__HIST_FAILED;
		error = "the application's run with the model gave no finite QoI error";
	}
	hml__coord_trial_event(c, i, status, &ev);
	ev.epochs = t->epochs;
	ev.worker = t->worker;
	ev.error = error;
	ev.seconds = t->seconds = hml__now() - c->t0 - t->seconds;
	if (status == HML__HIST_OK) {
		snprintf(t->arch, sizeof(t->arch), "%s", r->arch);
		ev.arch = t->arch;
		ev.m = (hml__hist_metrics){ r->val_rmse, r->test_rmse, r->val_mape, r->test_mape,
		                            r->latency_s_per_sample, r->latency_batch, r->params,
		                            r->epochs_run, p->target, p->lat_threads, t->lat_cached,
		                            lat_cost, p->iterative != NULL, qoi, NAN, NAN,
		                            r->val_rollout_windows > 0 ? r->val_rollout_rmse : NAN };
		if (p->iterative && c->o.store)
			ev.m.step_seconds = hml__iterative_step_seconds(c->o.store, p->iterative,
			                                                p->region, c->cfg[t->config],
			                                                r->latency_s_per_sample,
			                                                p->ds_ids, p->nds);
		if (p->iterative) {   /* its own k's bound (lib/search/iterative.h) */
			long long k, il;

			hml__iterative_choice(c->cfg[t->config], &k, &il);
			ev.m.latency_bound = hml__iterative_latency_bound(p->iterative, k,
			                                                  p->max_latency);
		}
		t->m = ev.m;
		if (p->target == HML__TARGET_C && !t->lat_cached &&
		    (rc = hml__latency_cache_put(&c->lat, r->arch, r->latency_batch, p->lat_threads,
		                                 r->latency_s_per_sample)) < 0)
			return rc;
	}
	if ((rc = hml__coord_grow((void **)&c->pending, &c->cappending, c->npending + 1,
	                          sizeof(*c->pending))) < 0 ||
	    (rc = hml__history_write(c->hist, &ev, &t->end_seq)) < 0)
		return rc;
	t->end_status = status;
	c->pending[c->npending++] = i;
	return 0;
}

/* A trial whose end is durable counts: the scheduler learns its outcome,
 * its model file is kept or deleted. */
static int trial_count(hml__coordinator *c, long i)
{
	hml__coord_trial *t = &c->t[i];
	char mp[4200];
	int rc;

	c->session_trials++;
	rc = hml__coord_sched_learn(c, i);
	t->status = t->end_status;
	t->has_file = 0;
	if (!hml__coord_discarded(c, t)) {   /* (the worker deleted a discarded one) */
		hml__coord_model_path(c, i, mp, sizeof(mp));
		t->has_file = t->status == HML__HIST_OK && access(mp, F_OK) == 0;
		if (!t->has_file)
			hml__reaper_add(c->reaper, mp);
	}
	if (t->status == HML__HIST_OK && t->rung + 1 == c->p->rungs)
		prune_files(c);
	return rc;
}

/* Count trial i, whose end is durable (read from the history: the
 * scheduler only learns it). */
static int count_one(hml__coordinator *c, long i)
{
	return c->t[i].replayed ? hml__coord_sched_learn(c, i) : trial_count(c, i);
}

/* Deterministic: how many trials' ends may be counted before the next
 * trial is chosen (all, once every trial is chosen). */
static size_t det_limit(const hml__coordinator *c)
{
	size_t w = (size_t)c->p->nworkers;

	if (c->all_chosen)
		return SIZE_MAX;
	return (c->nt + 1 > w ? c->nt + 1 - w : 0) + c->det_extra;
}

/* Deterministic: count durable ends in trial order, up to det_limit(). */
static int count_in_order(hml__coordinator *c, uint64_t seq)
{
	size_t limit = det_limit(c), k;
	int rc;

	while (c->counted < c->nt && c->counted < limit) {
		long i = (long)c->counted;

		for (k = 0; k < c->npending && c->pending[k] != i; k++)
			;
		if (k == c->npending || c->t[i].end_seq > seq)
			break;   /* still running, or its end not yet durable */
		memmove(&c->pending[k], &c->pending[k + 1],
		        (c->npending - k - 1) * sizeof(*c->pending));
		c->npending--;
		c->counted++;
		if ((rc = count_one(c, i)) < 0)
			return rc;
	}
	return 0;
}

int hml__coord_count_durable(hml__coordinator *c, int wait)
{
	uint64_t seq;
	size_t k = 0;
	int rc;

	if (!c->npending)
		return 0;
	if ((rc = wait ? hml__history_flush(c->hist, &seq) : hml__history_durable(c->hist, &seq)) < 0)
		return rc;
	if (c->p->deterministic && !wait)
		return count_in_order(c, seq);
	for (size_t j = 0; j < c->npending; j++) {
		long i = c->pending[j];

		if (c->t[i].end_seq <= seq) {
			if ((rc = count_one(c, i)) < 0)
				return rc;
		} else {
			c->pending[k++] = i;
		}
	}
	c->npending = k;
	return 0;
}

int hml__coord_may_start(const hml__coordinator *c)
{
	if (!c->p->deterministic)
		return !c->npending;
	return c->nqueue > 0 || c->counted >= det_limit(c);
}
