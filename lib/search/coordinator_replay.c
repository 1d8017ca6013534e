/*
 * lib/search/coordinator_replay.c - the trial history read back into a
 * coordinator (hml__coordinator_replay, coordinator.h): the scheduler
 * learns what the earlier sessions ran, the trials left running are
 * queued to run again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "search/coordinator_private.h"

/* Deterministic: count the recorded ends of trials c->counted .. n-1, in
 * trial order, as the original run had before it chose the next trial. */
static int replay_count_upto(hml__coordinator *c, size_t n)
{
	int rc;

	for (; c->counted < n; c->counted++) {
		if (c->counted >= c->nt || c->t[c->counted].status == HML__HIST_RUNNING)
			return hml__error_set(HML_EINVALID, "a trial start counts the end of trial "
			                      "%zu, which has not ended", c->counted);
		if ((rc = hml__coord_sched_learn(c, (long)c->counted)) < 0)
			return rc;
	}
	return 0;
}

static int replay_start(hml__coordinator *c, const hml__hist_event *ev)
{
	int rc;

	if (ev->trial != (long)c->nt)
		return hml__error_set(HML_EINVALID, "trial %ld starts out of order (expected %zu)",
		                      ev->trial, c->nt);
	if (c->p->deterministic && ev->counted >= 0 &&
	    (rc = replay_count_upto(c, (size_t)ev->counted)) < 0)
		return rc;
	if (ev->rung == 0 && (rc = hml__coord_cfg_push(c, json_deep_copy(ev->params))) < 0)
		return rc;
	if ((rc = hml__sched_start(c->sched, (size_t)ev->config, ev->rung, ev->u)) < 0 ||
	    (rc = hml__coord_trial_new(c, ev->config, ev->rung, ev->epochs)) < 0)
		return rc;
	c->t[c->nt - 1].worker = ev->worker;
	return 0;
}

static int replay_event(const hml__hist_event *ev, void *payload)
{
	hml__coordinator *c = payload;
	hml__coord_trial *t = ev->trial < (long)c->nt ? &c->t[ev->trial] : NULL;
	int rc;

	/* Nothing is replayed that the search and the manifest do not back. */
	if ((rc = hml__history_check_event(&c->check, ev)) < 0)
		return rc;
	if (ev->status == HML__HIST_RUNNING)
		return replay_start(c, ev);
	if (!t || t->config != ev->config || t->rung != ev->rung)
		return hml__error_set(HML_EINVALID, "trial %ld ends but never started", ev->trial);
	switch (ev->status) {
	case HML__HIST_RERUN:
		t->reruns++;
		return 0;
	case HML__HIST_KEPT:
		snprintf(t->model, sizeof(t->model), "%s", ev->model);
		t->status = HML__HIST_KEPT;
		return 0;
	case HML__HIST_OK:
		t->m = ev->m;
		t->seconds = ev->seconds;
		snprintf(t->arch, sizeof(t->arch), "%s", ev->arch ? ev->arch : "");
		if (ev->m.latency_target == HML__TARGET_C && !ev->m.latency_cached)
			rc = hml__latency_cache_put(&c->lat, ev->arch, ev->m.latency_batch,
			                            ev->m.latency_threads, ev->m.latency_s);
		break;
	default:
		break;
	}
	if (rc < 0)
		return rc;
	t->status = t->end_status = ev->status;
	t->replayed = 1;
	/* Deterministic: counted in trial order, at the points the starts say. */
	return c->p->deterministic ? 0 : hml__coord_sched_learn(c, ev->trial);
}

int hml__coordinator_replay(hml__coordinator *c)
{
	hml__hist_event ev;
	char path[4096];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", c->p->dir, HML__HISTORY_FILE);
	c->check = (hml__history_check){ c->p->id, c->p->space, c->p->rungs, c->o.store };
	if ((rc = hml__history_read(path, replay_event, c, NULL)) < 0 ||
	    (c->p->resumed && (rc = hml__history_check_complete(&c->check, path, c->nt)) < 0))
		return rc;
	for (size_t i = 0; i < c->nt; i++) {
		char mp[4200];

		hml__coord_model_path(c, (long)i, mp, sizeof(mp));
		c->t[i].has_file = access(mp, F_OK) == 0;
	}
	if ((rc = hml__history_open(&c->hist, c->p->xp_dir, path)) < 0)
		return rc;
	c->t0 = hml__now();   /* this session's clock */
	/* Deterministic: recorded ends not yet counted are counted by the loop,
	 * in trial order, as the original run would have. */
	for (size_t i = c->counted; c->p->deterministic && i < c->nt; i++) {
		if (c->t[i].status == HML__HIST_RUNNING)
			continue;
		c->t[i].end_seq = 0;   /* durable */
		if ((rc = hml__coord_pending_push(c, (long)i)) < 0)
			return rc;
	}
	/* Trials that were running when the search stopped run once more. */
	free(c->queue);
	if (!(c->queue = calloc(c->nt + 1, sizeof(long))))
		return hml__error_oom();
	c->nqueue = 0;
	for (size_t i = 0; i < c->nt; i++) {
		if (c->t[i].status != HML__HIST_RUNNING)
			continue;
		hml__coord_trial_event(c, (long)i, HML__HIST_RERUN, &ev);
		if ((rc = hml__history_append(c->hist, &ev)) < 0)
			return rc;
		c->queue[c->nqueue++] = (long)i;
		c->t[i].reruns++;
	}
	return 0;
}
