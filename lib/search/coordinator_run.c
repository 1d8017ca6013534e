/*
 * lib/search/coordinator_run.c - the coordinator's loop
 * (hml__coordinator_run, coordinator.h): idle workers given trials, the
 * waits for their messages and for the history's syncs, hung trials
 * stopped, progress reported.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "search/coordinator_private.h"

static void progress(const hml__coordinator *c)
{
	hml__coordinator_progress pr;
	size_t *cfg;
	long n;

	if (!c->o.progress)
		return;
	memset(&pr, 0, sizeof(pr));
	pr.budget = c->p->budget;
	pr.running = hml__sched_running(c->sched);
	pr.best = hml__sched_best_error(c->sched);
	pr.elapsed = hml__now() - c->t0;
	for (size_t i = 0; i < c->nt; i++) {
		pr.done += c->t[i].rung == 0 && c->t[i].status != HML__HIST_RUNNING;
		pr.trials += c->t[i].status != HML__HIST_RUNNING;
		pr.top += c->t[i].status != HML__HIST_RUNNING && c->t[i].rung + 1 == c->p->rungs;
		pr.failed += c->t[i].status == HML__HIST_FAILED || c->t[i].status == HML__HIST_TIMEOUT ||
		             c->t[i].status == HML__HIST_CRASHED;
	}
	n = hml__coord_front_configs(c, &cfg);
	pr.front = n > 0 ? (size_t)n : 0;
	free(cfg);
	pr.eta = pr.done ? pr.elapsed / (double)pr.done * (double)((size_t)pr.budget - pr.done)
	       : NAN;
	pr.time_left = c->deadline > 0 ? fmax(0, c->deadline - hml__now()) : NAN;
	if (!(pr.eta <= pr.time_left))
		pr.eta = isnan(pr.time_left) ? pr.eta : pr.time_left;
	c->o.progress(c->o.payload, &pr);
}

/* Give every idle, ready worker a trial. *done: the budget is spent;
 * c->time_up: no trial would end by the time limit (a promotion that
 * would not is held: recorded for --resume; others may still start). */
static int dispatch(hml__coordinator *c, int *done)
{
	long i = -1;
	int fresh = 0, rc;

	/* The next suggestions wait for the ended trials to count (hml__coord_may_start). */
	for (int k = 0; k < c->p->nworkers && !*done && !c->time_up && hml__coord_may_start(c);
	     k++) {
		hml__coord_worker *w = &c->wk[k];

		while (w->alive && w->ready && w->trial < 0 && !*done &&
		       !hml__coord_interrupted(c) && !c->time_up && hml__coord_may_start(c)) {
			size_t before = c->counted;
			int next;

			if (!hml__coord_fits(c, hml__coord_next_rung(c), -1, k)) {
				c->time_up = 1;
				return 0;
			}
			if ((next = hml__coord_trial_next(c, &i, &fresh)) < 0)
				return next;
			if (next == 2) {
				*done = 1;
				return 0;
			}
			if (next == 1 && fresh && !hml__coord_fits(c, c->t[i].rung, i, k)) {
				/* too long for the time left */
				if ((rc = hml__coord_trial_hold(c, i)) < 0)
					return rc;
				continue;
			}
			if (next == 1 && (rc = hml__coord_trial_start(c, k, i, fresh)) < 0)
				return rc;
			/* Deterministic: the choice (or the scheduler's wait) lets one
			 * more end count; if it is there, go on at once. */
			if (c->p->deterministic && (rc = hml__coord_count_durable(c, 0)) < 0)
				return rc;
			if (next == 0 && (!c->p->deterministic || c->counted == before))
				return 0;
		}
	}
	return 0;
}

/* Wait up to a second for the workers (and, while ended trials wait to
 * count, the history's sync thread); handle what they sent, and hangs. */
static int wait_workers(hml__coordinator *c)
{
	int wake = c->npending ? hml__history_sync_fd(c->hist) : -1, rc;
	/* (no later than the time limit, to stop the trials then) */
	double timeout = c->deadline > 0 ? fmin(1.0, fmax(0.01, c->deadline - hml__now())) : 1.0;

	c->wait_t = NAN;
	rc = c->o.pool_ops->wait(c->o.pool, timeout, wake, hml__coord_on_event, c);
	if (rc < 0)
		return rc;
	if (isnan(c->wait_t)) {
		c->wait_t = hml__now();
		c->wait_c = hml__thread_cpu();
	}
	for (int k = 0; k < c->p->nworkers && !hml__coord_interrupted(c); k++) {
		hml__coord_worker *w = &c->wk[k];

		if (w->alive && w->trial >= 0 && c->p->trial_timeout > 0 &&
		    hml__now() - w->started > c->p->trial_timeout &&
		    (rc = hml__coord_worker_lost(c, k, HML__HIST_TIMEOUT, NULL)) < 0)
			return rc;
	}
	c->busy += hml__now() - c->wait_t;
	c->busy_cpu += hml__thread_cpu() - c->wait_c;
	return 0;
}

int hml__coordinator_run(hml__coordinator *c)
{
	int done = 0, rc = 0, busy, alive, flushed, nw = c->p->nworkers;
	size_t kept;
	double t, cpu;

	if (!(c->wk = calloc((size_t)nw, sizeof(*c->wk))) || hml__reaper_open(&c->reaper) < 0)
		return hml__error_oom();
	for (int k = 0; k < nw; k++)
		c->wk[k].trial = -1;
	for (int k = 0; k < nw && rc == 0; k++)
		rc = hml__coord_worker_start(c, k);
	while (rc == 0) {
		if (hml__coord_interrupted(c)) {
			rc = 1;
			break;
		}
		if (hml__coord_past_deadline(c)) {
			c->time_up = 1;   /* the trials still running are stopped below */
			break;
		}
		t = hml__now();
		cpu = hml__thread_cpu();
		if ((rc = hml__coord_count_durable(c, 0)) == 0)
			rc = dispatch(c, &done);
		c->busy += hml__now() - t;
		c->busy_cpu += hml__thread_cpu() - cpu;
		if (rc < 0)
			break;
		progress(c);   /* after dispatch: what runs now */
		busy = (int)c->npending;
		alive = 0;
		for (int k = 0; k < nw; k++) {
			busy += c->wk[k].trial >= 0;
			alive += c->wk[k].alive;
		}
		/* (held promotions: the scheduler may wait for them) */
		if ((done || c->time_up || c->held) && !busy)
			break;
		if (!alive) {
			rc = hml__error_set(HML_ERROR, "search '%s': every worker rank was lost",
			                    c->p->id);
			break;
		}
		rc = wait_workers(c);
		if (rc > 0)
			rc = 0;   /* the wait stopped: interrupted, seen at the top */
	}
	if (c->o.progress)
		c->o.progress(c->o.payload, NULL);
	for (int k = 0; k < nw; k++) {
		c->o.pool_ops->stop(c->o.pool, k, NULL, 0);
		c->wk[k].alive = c->wk[k].ready = 0;
	}
	/* Trials that ended count before the record is written. */
	if ((flushed = hml__coord_count_durable(c, 1)) < 0 && rc >= 0)
		rc = flushed;
	/* Pruned files are gone before the front is registered. */
	if ((kept = hml__reaper_close(c->reaper)) > 0)
		hml__coord_warn(c, "search %s: %zu dominated model files could not be deleted",
		                c->p->id, kept);
	c->reaper = NULL;
	if (rc < 0)
		return rc;
	return hml__coord_interrupted(c) ? 1 : c->time_up || c->held ? 2 : 0;
}
