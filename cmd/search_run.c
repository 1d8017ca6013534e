/*
 * cmd/search_run.c - the coordinator of hml search: it replays the
 * history, keeps every worker busy with the scheduler's next trial, records
 * each start and end in the history before acting on it, replaces workers
 * that crash or hang, and registers the models worth keeping.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/util.h"
#include "search/trialmap.h"
#include "search_state.h"

/* ---- bookkeeping -------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	void *q;
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(q = realloc(*p, c * size)))
		return hml__error_oom();
	*p = q;
	*cap = c;
	return 0;
}

static int trial_new(search_state *st, long config, unsigned rung, int epochs)
{
	search_trial *t;
	int rc;

	if ((rc = grow((void **)&st->t, &st->capt, st->nt + 1, sizeof(*st->t))) < 0)
		return rc;
	t = &st->t[st->nt++];
	memset(t, 0, sizeof(*t));
	t->config = config;
	t->rung = rung;
	t->status = HML__HIST_RUNNING;
	t->epochs = epochs;
	t->worker = -1;
	t->seconds = NAN;
	return 0;
}

static int cfg_push(search_state *st, json_t *params)
{
	int rc = grow((void **)&st->cfg, &st->capcfg, st->ncfg + 1, sizeof(*st->cfg));

	if (rc < 0) {
		json_decref(params);
		return rc;
	}
	st->cfg[st->ncfg++] = params;
	return 0;
}

static void model_path(const search_state *st, long trial, char *buf, size_t size)
{
	snprintf(buf, size, "%s/t%ld.pt", st->dir, trial);
}

long search_top_trial(const search_state *st, size_t config)
{
	for (size_t i = st->nt; i-- > 0;)
		if ((size_t)st->t[i].config == config && st->t[i].rung + 1 == st->rungs &&
		    (st->t[i].status == HML__HIST_OK || st->t[i].status == HML__HIST_KEPT))
			return (long)i;
	return -1;
}

void search_trial_event(const search_state *st, long i, hml__hist_status status,
                        hml__hist_event *ev)
{
	hml__hist_event_init(ev);
	ev->trial = i;
	ev->config = st->t[i].config;
	ev->rung = st->t[i].rung;
	ev->status = status;
}

/* ---- replay ------------------------------------------------------------- */

/* The scheduler learns the end of trial i (its end_status and metrics). */
static int sched_learn(search_state *st, long i)
{
	const search_trial *t = &st->t[i];
	hml__sched_outcome o = { t->m.val_rmse, t->m.latency_s, (double)t->m.params };

	return t->end_status == HML__HIST_OK
	       ? hml__sched_report(st->sched, (size_t)t->config, t->rung, &o)
	       : hml__sched_fail(st->sched, (size_t)t->config, t->rung);
}

/* Deterministic: count the recorded ends of trials st->counted .. n-1, in
 * trial order, as the original run had before it chose the next trial. */
static int replay_count_upto(search_state *st, size_t n)
{
	int rc;

	for (; st->counted < n; st->counted++) {
		if (st->counted >= st->nt || st->t[st->counted].status == HML__HIST_RUNNING)
			return hml__error_set(HML_EINVALID, "trial history of search '%s': a trial "
			                      "start counts the end of trial %zu, which has not ended",
			                      st->id, st->counted);
		if ((rc = sched_learn(st, (long)st->counted)) < 0)
			return rc;
	}
	return 0;
}

static int replay_event(const hml__hist_event *ev, void *payload)
{
	search_state *st = payload;
	search_trial *t = ev->trial < (long)st->nt ? &st->t[ev->trial] : NULL;
	int rc;

	if (ev->status == HML__HIST_RUNNING) {
		if (ev->trial != (long)st->nt)
			return hml__error_set(HML_EINVALID, "trial history of search '%s': trial %ld "
			                      "starts out of order", st->id, ev->trial);
		if (st->deterministic && ev->counted >= 0 &&
		    (rc = replay_count_upto(st, (size_t)ev->counted)) < 0)
			return rc;
		if (ev->rung == 0 && (!ev->u || ev->dim != hml__space_dim(st->space) || !ev->params))
			return hml__error_set(HML_EINVALID, "trial history of search '%s': trial %ld "
			                      "has no point of this search space", st->id, ev->trial);
		if (ev->rung == 0 && (rc = cfg_push(st, json_deep_copy(ev->params))) < 0)
			return rc;
		if ((rc = hml__sched_start(st->sched, (size_t)ev->config, ev->rung, ev->u)) < 0 ||
		    (rc = trial_new(st, ev->config, ev->rung, ev->epochs)) < 0)
			return rc;
		st->t[st->nt - 1].worker = ev->worker;
		return 0;
	}
	if (!t || t->config != ev->config || t->rung != ev->rung)
		return hml__error_set(HML_EINVALID, "trial history of search '%s': trial %ld ends "
		                      "but never started", st->id, ev->trial);
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
		rc = 0;
		if (ev->m.latency_target == HML__TARGET_C && !ev->m.latency_cached)
			rc = hml__latency_cache_put(&st->lat, ev->arch, ev->m.latency_batch,
			                            ev->m.latency_threads, ev->m.latency_s);
		break;
	default:
		rc = 0;
	}
	if (rc < 0)
		return rc;
	t->status = t->end_status = ev->status;
	t->replayed = 1;
	/* Deterministic: counted in trial order, at the points the starts say. */
	return st->deterministic ? 0 : sched_learn(st, ev->trial);
}

int search_replay(search_state *st)
{
	hml__hist_event ev;
	char path[4096];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", st->dir, HML__HISTORY_FILE);
	if ((rc = hml__history_read(path, replay_event, st, NULL)) < 0)
		return rc;
	for (size_t i = 0; i < st->nt; i++) {
		char mp[4200];

		model_path(st, (long)i, mp, sizeof(mp));
		st->t[i].has_file = access(mp, F_OK) == 0;
	}
	if ((rc = hml__history_open(&st->hist, path)) < 0)
		return rc;
	/* Deterministic: recorded ends not yet counted are counted by the loop,
	 * in trial order, as the original run would have. */
	for (size_t i = st->counted; st->deterministic && i < st->nt; i++) {
		if (st->t[i].status == HML__HIST_RUNNING)
			continue;
		if ((rc = grow((void **)&st->pending, &st->cappending, st->npending + 1,
		               sizeof(*st->pending))) < 0)
			return rc;
		st->t[i].end_seq = 0;   /* durable */
		st->pending[st->npending++] = (long)i;
	}
	/* Trials that were running when the search stopped run once more. */
	if (!(st->queue = calloc(st->nt + 1, sizeof(long))))
		return hml__error_oom();
	for (size_t i = 0; i < st->nt; i++) {
		if (st->t[i].status != HML__HIST_RUNNING)
			continue;
		search_trial_event(st, (long)i, HML__HIST_RERUN, &ev);
		if ((rc = hml__history_append(st->hist, &ev)) < 0)
			return rc;
		st->queue[st->nqueue++] = (long)i;
		st->t[i].reruns++;
		st->reruns++;
	}
	return 0;
}

/* ---- one trial ---------------------------------------------------------- */

/* The options trial `trial` trains with: the base, its configuration's
 * sample, and its rung's share of the epochs. */
static int trial_options(search_state *st, long trial, hml__train_options *o, char *arch,
                         size_t size)
{
	const search_trial *t = &st->t[trial];
	int rc;

	*o = st->base;
	if ((rc = hml__trialmap_apply(o, arch, size, st->family, st->base_arch,
	                              st->cfg[t->config])) < 0)
		return rc;
	o->epochs = (int)lround(o->epochs * hml__sched_fraction(st->sched, t->rung));
	if (o->epochs < 1)
		o->epochs = 1;
	o->threads = st->threads;
	return 0;
}

static void prune_files(search_state *st);

/* A lower rung's model never reaches the front: its file is not kept
 * (unless --keep-models all). */
static int discarded(const search_state *st, const search_trial *t)
{
	return t->rung + 1 < st->rungs && !st->keep_all;
}

/* Record the end of a trial: its line is written now and made durable in
 * the background (lib/search/history.h); the trial counts (trial_count) once it is. */
static int trial_end(search_state *st, long trial, hml__hist_status status, const char *error,
                     const hml__train_result *r, double lat_cost)
{
	search_trial *t = &st->t[trial];
	hml__hist_event ev;
	int rc;

	if (status == HML__HIST_OK && (!isfinite(r->val_rmse) || !isfinite(r->latency_s_per_sample))) {
		status = HML__HIST_FAILED;
		error = "training gave no finite validation error or latency";
	}
	search_trial_event(st, trial, status, &ev);
	ev.epochs = t->epochs;
	ev.worker = t->worker;
	ev.error = error;
	ev.seconds = t->seconds = hml__now() - st->t0 - t->seconds;
	if (status == HML__HIST_OK) {
		snprintf(t->arch, sizeof(t->arch), "%s", r->arch);
		ev.arch = t->arch;
		ev.m = (hml__hist_metrics){ r->val_rmse, r->test_rmse, r->latency_s_per_sample,
		                            r->latency_batch, r->params, r->epochs_run, st->target,
		                            st->threads, t->lat_cached, lat_cost };
		t->m = ev.m;
		if (st->target == HML__TARGET_C && !t->lat_cached &&
		    (rc = hml__latency_cache_put(&st->lat, r->arch, r->latency_batch, st->threads,
		                                 r->latency_s_per_sample)) < 0)
			return rc;
	}
	if ((rc = grow((void **)&st->pending, &st->cappending, st->npending + 1,
	               sizeof(*st->pending))) < 0 ||
	    (rc = hml__history_write(st->hist, &ev, &t->end_seq)) < 0)
		return rc;
	t->end_status = status;
	st->pending[st->npending++] = trial;
	return 0;
}

/* A trial whose end is durable counts: the scheduler learns its outcome,
 * its model file is kept or deleted. */
static int trial_count(search_state *st, long trial)
{
	search_trial *t = &st->t[trial];
	char mp[4200];
	int rc;

	st->session_trials++;
	rc = sched_learn(st, trial);
	t->status = t->end_status;
	t->has_file = 0;
	if (!discarded(st, t)) {   /* (the worker deleted a discarded one) */
		model_path(st, trial, mp, sizeof(mp));
		t->has_file = t->status == HML__HIST_OK && access(mp, F_OK) == 0;
		if (!t->has_file)
			hml__reaper_add(st->reaper, mp);
	}
	if (t->status == HML__HIST_OK && t->rung + 1 == st->rungs)
		prune_files(st);
	return rc;
}

/* Count trial `trial`, whose end is durable (read from the history: the
 * scheduler only learns it). */
static int count_one(search_state *st, long trial)
{
	return st->t[trial].replayed ? sched_learn(st, trial) : trial_count(st, trial);
}

/* Deterministic: how many trials' ends may be counted before the next
 * trial is chosen (all, once every trial is chosen). */
static size_t det_limit(const search_state *st)
{
	size_t w = (size_t)st->nworkers;

	if (st->all_chosen)
		return SIZE_MAX;
	return (st->nt + 1 > w ? st->nt + 1 - w : 0) + st->det_extra;
}

/* Deterministic: count durable ends in trial order, up to det_limit(). */
static int count_in_order(search_state *st, uint64_t seq)
{
	size_t limit = det_limit(st), i;
	int rc;

	while (st->counted < st->nt && st->counted < limit) {
		long trial = (long)st->counted;

		for (i = 0; i < st->npending && st->pending[i] != trial; i++)
			;
		if (i == st->npending || st->t[trial].end_seq > seq)
			break;   /* still running, or its end not yet durable */
		memmove(&st->pending[i], &st->pending[i + 1],
		        (st->npending - i - 1) * sizeof(*st->pending));
		st->npending--;
		st->counted++;
		if ((rc = count_one(st, trial)) < 0)
			return rc;
	}
	return 0;
}

/* Count the pending trials whose end is durable (wait: sync first, and
 * count every one: the search is stopping). */
static int count_durable(search_state *st, int wait)
{
	uint64_t seq;
	size_t k = 0;
	int rc;

	if (!st->npending)
		return 0;
	if ((rc = wait ? hml__history_flush(st->hist, &seq) : hml__history_durable(st->hist, &seq)) < 0)
		return rc;
	if (st->deterministic && !wait)
		return count_in_order(st, seq);
	for (size_t i = 0; i < st->npending; i++) {
		long trial = st->pending[i];

		if (st->t[trial].end_seq <= seq) {
			if ((rc = count_one(st, trial)) < 0)
				return rc;
		} else {
			st->pending[k++] = trial;
		}
	}
	st->npending = k;
	return 0;
}

/* May a trial start now? Normally once every ended trial is counted;
 * deterministic, a re-run at once, a new choice once exactly the ends the
 * rule allows are counted. */
static int may_start(const search_state *st)
{
	if (!st->deterministic)
		return !st->npending;
	return st->nqueue > 0 || st->counted >= det_limit(st);
}

/* The next trial to start: 1 (*trial, *fresh: 0 for a re-run), 0 none now, 2 done. */
static int trial_next(search_state *st, long *trial, int *fresh)
{
	hml__sched_trial nt;
	json_t *params = NULL;
	double t0, c0;
	int rc;

	if (st->nqueue) {
		*trial = st->queue[0];
		memmove(st->queue, st->queue + 1, --st->nqueue * sizeof(long));
		*fresh = 0;
		return 1;
	}
	t0 = hml__now();
	c0 = hml__thread_cpu();
	rc = hml__sched_next(st->sched, &nt);
	st->suggest += hml__now() - t0;
	st->suggest_cpu += hml__thread_cpu() - c0;
	if (rc == 0 && st->deterministic)
		st->det_extra++;   /* wait for one more end */
	if (rc == 2)
		st->all_chosen = 1;
	if (rc != 1)
		return rc;
	st->det_extra = 0;
	if (nt.rung == 0 && ((rc = hml__space_decode(&params, st->space, nt.u)) < 0 ||
	                     (rc = cfg_push(st, params)) < 0))
		return rc;
	if ((rc = trial_new(st, (long)nt.config, nt.rung, 0)) < 0)
		return rc;
	*trial = (long)st->nt - 1;
	*fresh = 1;
	return 1;
}

/* The C latency already measured for the arch, batch and threads of
 * options o (t->lat_cached says whether there is one), or NaN. */
static double known_latency(search_state *st, search_trial *t, const hml__train_options *o)
{
	double s = hml__latency_cache_get(&st->lat, o->arch, o->infer_batch > 0 ? o->infer_batch
	                                                                      : o->batch, o->threads);

	t->lat_cached = isfinite(s);
	return s;
}

/* Start `trial` on idle worker w (a bad configuration fails at once). */
static int trial_start(search_state *st, hml__worker *w, long trial, int fresh)
{
	search_trial *t = &st->t[trial];
	hml__train_options o;
	hml__hist_event ev;
	char arch[256], mp[4200];
	json_t *msg;
	uint64_t seq;
	int bad, rc;

	bad = trial_options(st, trial, &o, arch, sizeof(arch));
	t->epochs = bad < 0 ? 0 : o.epochs;
	t->worker = w->index;
	t->seconds = hml__now() - st->t0;   /* the start, until it ends */
	if (fresh) {
		search_trial_event(st, trial, HML__HIST_RUNNING, &ev);
		ev.epochs = t->epochs;
		ev.worker = w->index;
		ev.params = st->cfg[t->config];
		ev.u = hml__sched_point(st->sched, (size_t)t->config);
		ev.dim = hml__space_dim(st->space);
		if (st->deterministic)
			ev.counted = (long)st->counted;
		/* Not waited for: a start lost in a machine crash is a trial never started. */
		if ((rc = hml__history_write(st->hist, &ev, &seq)) < 0)
			return rc;
	}
	if (bad < 0)
		return trial_end(st, trial, HML__HIST_FAILED, hml_error_last()->message, NULL, NAN);
	model_path(st, trial, mp, sizeof(mp));
	if (!(msg = hml__wire_trial(trial, mp, &o)))
		return hml__error_oom();
	if ((st->target != HML__TARGET_TORCHSCRIPT &&
	     (rc = hml__wire_trial_set_latency(msg, st->target, known_latency(st, t, &o))) < 0) ||
	    (discarded(st, t) && (rc = hml__wire_trial_set_discard(msg)) < 0)) {
		json_decref(msg);
		return rc;
	}
	w->trial = trial;
	w->started = hml__now();
	/* A worker that died meanwhile is noticed by the poll: its pipe ends. */
	(void)hml__wire_send(w->to, msg);
	json_decref(msg);
	return 0;
}

/* Delete the files of top-rung models the front dominates (they stay
 * dominated: the front only improves). */
static void prune_files(search_state *st)
{
	size_t *cfg, n;
	long nf, *keep;

	if (st->keep_all || !(cfg = malloc((hml__sched_configs(st->sched) + 1) * sizeof(*cfg))))
		return;
	nf = hml__sched_front(st->sched, cfg, NULL);
	n = nf > 0 ? (size_t)nf : 0;
	/* The front's trials first: O(front x trials), not for every trial. */
	if (nf < 0 || !(keep = malloc((n + 1) * sizeof(*keep)))) {
		free(cfg);
		return;
	}
	for (size_t j = 0; j < n; j++)
		keep[j] = search_top_trial(st, cfg[j]);
	for (size_t i = 0; i < st->nt; i++) {
		search_trial *t = &st->t[i];
		int on = 0;
		char mp[4200];

		if (!t->has_file || t->status != HML__HIST_OK)
			continue;
		for (size_t j = 0; j < n && !on; j++)
			on = keep[j] == (long)i;
		if (!on) {
			model_path(st, (long)i, mp, sizeof(mp));
			hml__reaper_add(st->reaper, mp);
			t->has_file = 0;
		}
	}
	free(keep);
	free(cfg);
}

/* ---- workers ------------------------------------------------------------ */

static int worker_start(search_state *st, int k)
{
	const char *argv[] = { st->exe, "search-worker", NULL };
	char log[4200];
	json_t *msg;
	int rc;

	if (st->mpi && st->mpi_to[k] < 0) {
		st->wk[k].pid = 0;   /* a rank given up is not replaced */
		return 0;
	}
	if (st->mpi) {
		hml__worker_remote(&st->wk[k], k, k + 1, st->mpi_to[k], st->mpi_from[k]);
		st->mpi_to[k] = st->mpi_from[k] = -1;   /* the worker owns them now */
	} else {
		snprintf(log, sizeof(log), "%s/worker-%d.log", st->dir, k);
		if ((rc = hml__worker_spawn(&st->wk[k], k, argv, log)) < 0)
			return rc;
	}
	if (!(msg = hml__wire_init(st->label, (const char *const *)st->ds_paths, st->nds, "drop")))
		return hml__error_oom();
	(void)hml__wire_send(st->wk[k].to, msg);   /* a dead worker shows in the poll */
	json_decref(msg);
	return 0;
}

/* Worker w died or was killed: its trial (if any) ends with `status`,
 * and a new worker takes its place. */
static int worker_lost(search_state *st, hml__worker *w, hml__hist_status status,
                       const char *detail)
{
	long trial = w->trial;
	int ready = w->ready, k = w->index, rc = 0;
	char why[64], msg[512];

	hml__worker_stop(w, 1, why, sizeof(why));
	if (!ready)
		return hml__error_set(HML_ERROR, "worker %d of search '%s' ended while starting (%s%s%s);"
		                      " see %s/worker-%d.log", k, st->id, why, detail ? ": " : "",
		                      detail ? detail : "", st->dir, k);
	if (trial >= 0) {
		if (status == HML__HIST_TIMEOUT)
			snprintf(msg, sizeof(msg), "no result within --trial-timeout %g s; worker %d "
			         "killed", st->trial_timeout, k);
		else
			snprintf(msg, sizeof(msg), "worker %d %s%s%s", k, why, detail ? ": " : "",
			         detail ? detail : "");
		if ((rc = trial_end(st, trial, status, msg, NULL, NAN)) < 0)
			return rc;
		cmd_warn("trial %ld %s: %s", trial, hml__hist_status_name(status), msg);
	}
	return worker_start(st, k);
}

/* A message from worker w. */
static int worker_message(search_state *st, hml__worker *w, json_t *msg)
{
	const char *type = hml__wire_type(msg), *error;
	hml__train_result r;
	long trial;
	double cost;
	int rc, target;

	if (strcmp(type, "ready") == 0) {
		w->ready = 1;
		return 0;
	}
	if (strcmp(type, "error") == 0)   /* the data would not load */
		return hml__error_set(HML_EINVALID, "search '%s': worker %d: %s", st->id, w->index,
		                      json_string_value(json_object_get(msg, "error")));
	if ((rc = hml__wire_result_read(msg, &trial, &error, &r)) < 0 ||
	    (rc = hml__wire_result_latency(msg, &target, &cost)) < 0)
		return rc;
	if (!error && target != st->target)
		return hml__error_set(HML_ERROR, "search '%s': worker %d measured the %s latency of "
		                      "trial %ld, not the %s latency", st->id, w->index,
		                      hml__target_name(target), trial, hml__target_name(st->target));
	if (trial != w->trial)
		return hml__error_set(HML_ERROR, "search '%s': worker %d answered for trial %ld while "
		                      "running trial %ld", st->id, w->index, trial, w->trial);
	w->trial = -1;
	return trial_end(st, trial, error ? HML__HIST_FAILED : HML__HIST_OK, error, &r, cost);
}

/* Read what worker w sent (poll said its pipe is readable or closed). */
static int worker_input(search_state *st, hml__worker *w)
{
	json_t *msg = NULL;
	int rc;

	while ((rc = hml__wire_recv(&w->from, &msg)) == 1) {
		rc = worker_message(st, w, msg);
		json_decref(msg);
		if (rc < 0 || w->from.len == 0)
			return rc;
	}
	if (rc == 0)
		return 0;
	if (cmd_interrupted)
		return 0;   /* stopping: the trial stays running for --resume */
	return worker_lost(st, w, HML__HIST_CRASHED, rc == HML_EIO ? NULL : hml_error_last()->message);
}

/* ---- the loop ----------------------------------------------------------- */

static void progress(const search_state *st, cmd_progress *bar)
{
	size_t done = 0, running = hml__sched_running(st->sched), failed = 0, nf = 0;
	double best = hml__sched_best_error(st->sched), el = hml__now() - st->t0, eta;
	size_t *cfg = malloc((hml__sched_configs(st->sched) + 1) * sizeof(*cfg));
	char detail[200], ebuf[32], bbuf[32];

	for (size_t i = 0; i < st->nt; i++) {
		done += st->t[i].rung == 0 && st->t[i].status != HML__HIST_RUNNING;
		failed += st->t[i].status == HML__HIST_FAILED || st->t[i].status == HML__HIST_TIMEOUT ||
		          st->t[i].status == HML__HIST_CRASHED;
	}
	if (cfg) {
		long n = hml__sched_front(st->sched, cfg, NULL);

		nf = n > 0 ? (size_t)n : 0;
		free(cfg);
	}
	eta = done ? el / (double)done * (double)((size_t)st->budget - done) : NAN;
	snprintf(ebuf, sizeof(ebuf), isfinite(eta) ? "%.0f s" : "?", eta);
	snprintf(bbuf, sizeof(bbuf), isfinite(best) ? "%.3g" : "-", best);
	snprintf(detail, sizeof(detail), "%zu/%lld done, %zu running, %zu failed, best %s, "
	         "front %zu, %.0f s, ETA %s", done, st->budget, running, failed, bbuf, nf, el, ebuf);
	cmd_progress_update(bar, (double)done, detail);
}

/* Give every idle, ready worker a trial. *done: the budget is spent. */
static int dispatch(search_state *st, int *done)
{
	long trial = -1;
	int fresh = 0, rc;

	/* The next suggestions wait for the ended trials to count (may_start). */
	for (int k = 0; k < st->nworkers && !*done && may_start(st); k++) {
		hml__worker *w = &st->wk[k];

		while (w->pid > 0 && w->ready && w->trial < 0 && !*done && !cmd_interrupted &&
		       may_start(st)) {
			size_t before = st->counted;
			int next;

			if ((next = trial_next(st, &trial, &fresh)) < 0)
				return next;
			if (next == 2) {
				*done = 1;
				return 0;
			}
			if (next == 1 && (rc = trial_start(st, w, trial, fresh)) < 0)
				return rc;
			/* Deterministic: the choice (or the scheduler's wait) lets one
			 * more end count; if it is there, go on at once. */
			if (st->deterministic && (rc = count_durable(st, 0)) < 0)
				return rc;
			if (next == 0 && (!st->deterministic || st->counted == before))
				return 0;
		}
	}
	return 0;
}

/* Wait up to a second for the workers; handle what they sent, and hangs. */
static int wait_workers(search_state *st)
{
	struct pollfd pf[65];
	int n = 0, rc;
	double t, c;

	for (int k = 0; k < st->nworkers; k++)
		pf[n++] = (struct pollfd){ st->wk[k].pid > 0 ? st->wk[k].from.fd : -1, POLLIN, 0 };
	/* ... and the history's sync thread, while ended trials wait to count */
	pf[n++] = (struct pollfd){ st->npending ? hml__history_sync_fd(st->hist) : -1, POLLIN, 0 };
	if (poll(pf, (nfds_t)n, 1000) < 0 && errno != EINTR)
		return hml__error_set(HML_EIO, "poll: %s", strerror(errno));
	t = hml__now();
	c = hml__thread_cpu();
	for (int k = 0; k < st->nworkers && !cmd_interrupted; k++)
		if (pf[k].fd >= 0 && (pf[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    (rc = worker_input(st, &st->wk[k])) < 0)
			return rc;
	for (int k = 0; k < st->nworkers && !cmd_interrupted; k++) {
		hml__worker *w = &st->wk[k];

		if (w->trial >= 0 && st->trial_timeout > 0 &&
		    hml__now() - w->started > st->trial_timeout &&
		    (rc = worker_lost(st, w, HML__HIST_TIMEOUT, NULL)) < 0)
			return rc;
	}
	st->busy += hml__now() - t;
	st->busy_cpu += hml__thread_cpu() - c;
	return 0;
}

int search_run(search_state *st)
{
	cmd_progress *bar = cmd_progress_start("search", (double)st->budget);
	int done = 0, rc = 0, busy, alive, flushed;
	size_t kept;
	double t, c;

	if (!(st->wk = calloc((size_t)st->nworkers, sizeof(*st->wk))) ||
	    hml__reaper_open(&st->reaper) < 0)
		return hml__error_oom();
	for (int k = 0; k < st->nworkers; k++) {
		st->wk[k].pid = 0;
		st->wk[k].from.fd = -1;
		st->wk[k].to = -1;
	}
	for (int k = 0; k < st->nworkers && rc == 0; k++)
		rc = worker_start(st, k);
	while (rc == 0) {
		if (cmd_interrupted) {
			rc = 1;
			break;
		}
		t = hml__now();
		c = hml__thread_cpu();
		if ((rc = count_durable(st, 0)) == 0)
			rc = dispatch(st, &done);
		st->busy += hml__now() - t;
		st->busy_cpu += hml__thread_cpu() - c;
		if (rc < 0)
			break;
		progress(st, bar);   /* after dispatch: what runs now */
		busy = (int)st->npending;
		alive = 0;
		for (int k = 0; k < st->nworkers; k++) {
			busy += st->wk[k].trial >= 0;
			alive += st->wk[k].pid > 0;
		}
		if (done && !busy)
			break;
		if (!alive) {
			rc = hml__error_set(HML_ERROR, "search '%s': every worker rank was lost", st->id);
			break;
		}
		rc = wait_workers(st);
	}
	cmd_progress_end(bar);
	for (int k = 0; k < st->nworkers; k++)
		hml__worker_stop(&st->wk[k], 1, NULL, 0);
	/* Trials that ended count before the record is written. */
	if ((flushed = count_durable(st, 1)) < 0 && rc >= 0)
		rc = flushed;
	/* Pruned files are gone before the front is registered. */
	if ((kept = hml__reaper_close(st->reaper)) > 0)
		cmd_warn("search %s: %zu dominated model files could not be deleted", st->id, kept);
	st->reaper = NULL;
	return rc < 0 ? rc : (cmd_interrupted ? 1 : 0);
}
