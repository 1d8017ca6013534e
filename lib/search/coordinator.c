/*
 * lib/search/coordinator.c - the coordinator of hml search (see
 * coordinator.h): replay, workers, trials, kept models, the record.
 */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "search/coordinator.h"
#include "search/iterative.h"
#include "search/seed.h"
#include "search/history_check.h"
#include "search/latency_cache.h"
#include "search/opt/trialsched.h"
#include "search/trialmap.h"
#include "search/wire.h"
#include "store/records.h"
#include "train/guard_fit.h"
#include "sys/reaper.h"

/* What the coordinator knows of one trial (index: the trial number). */
typedef struct search_trial {
	long config;
	unsigned rung;
	hml__hist_status status;   /* RUNNING until it ends; KEPT once registered */
	int epochs;
	int worker;
	hml__hist_metrics m;
	char arch[256];
	double seconds;
	char model[16];            /* registered model id, or "" */
	int has_file;              /* search/<id>/t<trial>.pt exists */
	int cold;                  /* its worker's first trial (its time includes the
	                              worker's warm-up: libtorch loaded, first batches) */
	int reruns;
	int lat_cached;            /* its latency came from the cache (target c) */
	uint64_t end_seq;          /* its end's line in the history (hml__history_write) */
	hml__hist_status end_status;   /* that end, counted once the line is durable */
	int replayed;              /* its end was read from the history, not seen now */
} search_trial;

/* One worker of the pool, as the coordinator drives it. */
typedef struct worker {
	int alive;                 /* started, not lost or given up */
	int ready;                 /* answered init */
	long trial;                /* the trial it runs, -1 when idle */
	double started;            /* hml__now() when the trial was sent */
	int ran;                   /* trials it was sent since it started */
} worker;

struct hml__coordinator {
	hml__coordinator_options o;
	const hml__search_plan *p;
	hml__sched *sched;
	hml__history *hist;
	hml__history_check check;  /* what the history is checked against on replay */
	hml__reaper *reaper;       /* deletes pruned model files (lib/sys/reaper.h) */
	search_trial *t;
	size_t nt, capt;
	json_t **cfg;              /* parameters of each configuration */
	size_t ncfg, capcfg;
	long *queue;               /* trials to run again (resume), in order */
	size_t nqueue;
	long *pending;             /* trials ended whose end is not yet durable */
	size_t npending, cappending;
	worker *wk;
	hml__latency_cache lat;    /* C latencies measured, by (arch, batch, threads) */
	hml__dataset *card_data;   /* loaded for the front models' latency cards, or NULL */
	json_t *guard;             /* the data's input statistics for guards, fitted once */
	int guard_failed;          /* ... or why not, warned once */
	double t0;
	double busy, suggest;      /* this session: wall time outside the waits, in the scheduler */
	double busy_cpu, suggest_cpu;  /* its thread's CPU time in the same sections */
	double wait_t, wait_c;     /* a wait's busy clock: its first event (NaN: none yet) */
	size_t session_trials;     /* trials ended in this session */
	size_t counted;            /* deterministic: trials 0 .. counted-1 are counted */
	size_t det_extra;          /* ends counted past the rule since the last choice */
	int all_chosen;            /* the scheduler said the search is complete */
	double deadline;           /* hml__now() of the time limit; 0: none */
	int time_up;               /* no trial starts any more: the time limit */
	size_t held;               /* promotions chosen, not started: the time limit */
};

static void warn(const hml__coordinator *c, const char *fmt, ...) HML__PRINTF(2, 3);

static void warn(const hml__coordinator *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!c->o.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->o.warn(c->o.payload, msg);
}

static int interrupted(const hml__coordinator *c)
{
	return c->o.interrupted && *c->o.interrupted;
}

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

static int trial_new(hml__coordinator *c, long config, unsigned rung, int epochs)
{
	search_trial *t;
	int rc;

	if ((rc = grow((void **)&c->t, &c->capt, c->nt + 1, sizeof(*c->t))) < 0)
		return rc;
	t = &c->t[c->nt++];
	memset(t, 0, sizeof(*t));
	t->config = config;
	t->rung = rung;
	t->status = HML__HIST_RUNNING;
	t->epochs = epochs;
	t->worker = -1;
	t->seconds = NAN;
	return 0;
}

static int cfg_push(hml__coordinator *c, json_t *params)
{
	int rc = grow((void **)&c->cfg, &c->capcfg, c->ncfg + 1, sizeof(*c->cfg));

	if (rc < 0) {
		json_decref(params);
		return rc;
	}
	c->cfg[c->ncfg++] = params;
	return 0;
}

static int pending_push(hml__coordinator *c, long trial)
{
	int rc = grow((void **)&c->pending, &c->cappending, c->npending + 1,
	              sizeof(*c->pending));

	if (rc == 0)
		c->pending[c->npending++] = trial;
	return rc;
}

static void model_path(const hml__coordinator *c, long trial, char *buf, size_t size)
{
	snprintf(buf, size, "%s/t%ld.pt", c->p->dir, trial);
}

/* The trial at the top rung of configuration `config` that ended ok, or -1. */
static long top_trial(const hml__coordinator *c, size_t config)
{
	for (size_t i = c->nt; i-- > 0;)
		if ((size_t)c->t[i].config == config && c->t[i].rung + 1 == c->p->rungs &&
		    (c->t[i].status == HML__HIST_OK || c->t[i].status == HML__HIST_KEPT))
			return (long)i;
	return -1;
}

/* The front's configurations (by error) into *cfg (yours): how many, or
 * negative (HML_ENOMEM; *cfg NULL). */
static long front_configs(const hml__coordinator *c, size_t **cfg)
{
	long n = HML_ENOMEM;

	if ((*cfg = malloc((hml__sched_configs(c->sched) + 1) * sizeof(**cfg))))
		n = hml__sched_front(c->sched, *cfg, NULL);
	if (n < 0) {
		free(*cfg);
		*cfg = NULL;
	}
	return n;
}

/* *ev: a history event of trial i with `status` (its trial, configuration
 * and rung set; every other field empty, for the caller to add). */
static void trial_event(const hml__coordinator *c, long i, hml__hist_status status,
                        hml__hist_event *ev)
{
	hml__hist_event_init(ev);
	ev->trial = i;
	ev->config = c->t[i].config;
	ev->rung = c->t[i].rung;
	ev->status = status;
}

/* ---- replay ------------------------------------------------------------- */

/* The scheduler learns the end of trial i (its end_status and metrics). */
static int sched_learn(hml__coordinator *c, long i)
{
	const search_trial *t = &c->t[i];
	hml__sched_outcome o = { hml__hist_error(&t->m, c->p->base.metric), t->m.latency_s,
	                         (double)t->m.params, hml__hist_cost(&t->m),
	                         t->m.latency_bound };

	return t->end_status == HML__HIST_OK
	       ? hml__sched_report(c->sched, (size_t)t->config, t->rung, &o)
	       : hml__sched_fail(c->sched, (size_t)t->config, t->rung);
}

/* Deterministic: count the recorded ends of trials c->counted .. n-1, in
 * trial order, as the original run had before it chose the next trial. */
static int replay_count_upto(hml__coordinator *c, size_t n)
{
	int rc;

	for (; c->counted < n; c->counted++) {
		if (c->counted >= c->nt || c->t[c->counted].status == HML__HIST_RUNNING)
			return hml__error_set(HML_EINVALID, "a trial start counts the end of trial "
			                      "%zu, which has not ended", c->counted);
		if ((rc = sched_learn(c, (long)c->counted)) < 0)
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
	if (ev->rung == 0 && (rc = cfg_push(c, json_deep_copy(ev->params))) < 0)
		return rc;
	if ((rc = hml__sched_start(c->sched, (size_t)ev->config, ev->rung, ev->u)) < 0 ||
	    (rc = trial_new(c, ev->config, ev->rung, ev->epochs)) < 0)
		return rc;
	c->t[c->nt - 1].worker = ev->worker;
	return 0;
}

static int replay_event(const hml__hist_event *ev, void *payload)
{
	hml__coordinator *c = payload;
	search_trial *t = ev->trial < (long)c->nt ? &c->t[ev->trial] : NULL;
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
	return c->p->deterministic ? 0 : sched_learn(c, ev->trial);
}

/* The trial's model file, made (or emptied) here beneath the experiment
 * before a worker writes it by name: a link planted at search/<id>/tN.pt
 * stops the search (core/beneath.h) instead of being written through. */
static int output_make(const hml__coordinator *c, const char *mp)
{
	int fd = hml__beneath_open(c->p->xp_dir, mp, O_WRONLY | O_CREAT | O_TRUNC, 0666);

	return fd < 0 ? fd : close(fd);
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

		model_path(c, (long)i, mp, sizeof(mp));
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
		if ((rc = pending_push(c, (long)i)) < 0)
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
		trial_event(c, (long)i, HML__HIST_RERUN, &ev);
		if ((rc = hml__history_append(c->hist, &ev)) < 0)
			return rc;
		c->queue[c->nqueue++] = (long)i;
		c->t[i].reruns++;
	}
	return 0;
}

/* ---- one trial ---------------------------------------------------------- */

/* The options trial `i` trains with: the base, its configuration's
 * sample, and its rung's share of the epochs. */
static int trial_options(const hml__coordinator *c, long i, hml__train_options *o, char *arch,
                         size_t size)
{
	const hml__search_plan *p = c->p;
	const search_trial *t = &c->t[i];
	int rc;

	*o = p->base;
	if ((rc = hml__trialmap_apply(o, arch, size, p->family, p->base_arch,
	                              c->cfg[t->config])) < 0)
		return rc;
	hml__search_plan_rung_options(p, hml__sched_fraction(c->sched, t->rung), o);
	o->threads = p->threads;
	o->latency_threads = p->lat_threads;
	return 0;
}

static void prune_files(hml__coordinator *c);

/* A lower rung's model never reaches the front: its file is not kept
 * (unless the plan keeps every model). */
static int discarded(const hml__coordinator *c, const search_trial *t)
{
	return t->rung + 1 < c->p->rungs && !c->p->keep_all;
}

/* Record the end of trial i: its line is written now and made durable in
 * the background (lib/search/history.h); the trial counts (trial_count) once it is. */
static int trial_end(hml__coordinator *c, long i, hml__hist_status status, const char *error,
                     const hml__train_result *r, double lat_cost, double qoi)
{
	const hml__search_plan *p = c->p;
	search_trial *t = &c->t[i];
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
	trial_event(c, i, status, &ev);
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
		                            lat_cost, p->iterative != NULL, qoi, NAN, NAN };
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
	if ((rc = grow((void **)&c->pending, &c->cappending, c->npending + 1,
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
	search_trial *t = &c->t[i];
	char mp[4200];
	int rc;

	c->session_trials++;
	rc = sched_learn(c, i);
	t->status = t->end_status;
	t->has_file = 0;
	if (!discarded(c, t)) {   /* (the worker deleted a discarded one) */
		model_path(c, i, mp, sizeof(mp));
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
	return c->t[i].replayed ? sched_learn(c, i) : trial_count(c, i);
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

/* Count the pending trials whose end is durable (wait: sync first, and
 * count every one: the search is stopping). */
static int count_durable(hml__coordinator *c, int wait)
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

/* May a trial start now? Normally once every ended trial is counted;
 * deterministic, a re-run at once, a new choice once exactly the ends the
 * rule allows are counted. */
static int may_start(const hml__coordinator *c)
{
	if (!c->p->deterministic)
		return !c->npending;
	return c->nqueue > 0 || c->counted >= det_limit(c);
}

/* The next trial to start: 1 (*i, *fresh: 0 for a re-run), 0 none now, 2 done. */
static int trial_next(hml__coordinator *c, long *i, int *fresh)
{
	hml__sched_trial nt;
	json_t *params = NULL;
	double t0, c0;
	int rc;

	if (c->nqueue) {
		*i = c->queue[0];
		memmove(c->queue, c->queue + 1, --c->nqueue * sizeof(long));
		*fresh = 0;
		return 1;
	}
	t0 = hml__now();
	c0 = hml__thread_cpu();
	rc = hml__sched_next(c->sched, &nt);
	c->suggest += hml__now() - t0;
	c->suggest_cpu += hml__thread_cpu() - c0;
	if (rc == 0 && c->p->deterministic)
		c->det_extra++;   /* wait for one more end */
	if (rc == 2)
		c->all_chosen = 1;
	if (rc != 1)
		return rc;
	c->det_extra = 0;
	if (nt.rung == 0 && ((rc = hml__space_decode(&params, c->p->space, nt.u)) < 0 ||
	                     (rc = cfg_push(c, params)) < 0))
		return rc;
	if ((rc = trial_new(c, (long)nt.config, nt.rung, 0)) < 0)
		return rc;
	*i = (long)c->nt - 1;
	*fresh = 1;
	return 1;
}

/* The C latency already measured for the arch, batch and threads of
 * options o (t->lat_cached says whether there is one), or NaN. */
static double known_latency(hml__coordinator *c, search_trial *t, const hml__train_options *o)
{
	double s = hml__latency_cache_get(&c->lat, o->arch, o->infer_batch > 0 ? o->infer_batch
	                                                                     : o->batch,
	                                   hml__train_latency_threads(o));

	t->lat_cached = isfinite(s);
	return s;
}

/* The start line of new trial i on worker k (-1: none, the time limit
 * came first). Not waited for: a start lost in a machine crash is a trial
 * never started. */
static int record_start(hml__coordinator *c, long i, int k)
{
	const search_trial *t = &c->t[i];
	hml__hist_event ev;
	uint64_t seq;

	trial_event(c, i, HML__HIST_RUNNING, &ev);
	ev.epochs = t->epochs;
	ev.worker = k;
	ev.params = c->cfg[t->config];
	ev.u = hml__sched_point(c->sched, (size_t)t->config);
	ev.dim = hml__space_dim(c->p->space);
	if (c->p->deterministic)
		ev.counted = (long)c->counted;
	return hml__history_write(c->hist, &ev, &seq);
}

/* New trial i, chosen but not to end by the time limit: recorded as
 * started on no worker, for --resume to run. */
static int trial_hold(hml__coordinator *c, long i)
{
	hml__train_options o;
	char arch[256];

	c->held++;
	c->t[i].epochs = trial_options(c, i, &o, arch, sizeof(arch)) < 0 ? 0 : o.epochs;
	return record_start(c, i, -1);
}

/* An iterative application's trial: the application runs at its k and
 * interleave (lib/search/iterative.h). */
static int trial_run(json_t *msg, const json_t *sample)
{
	long long k, il;

	hml__iterative_choice(sample, &k, &il);
	return hml__wire_trial_set_run(msg, k, il);
}

/* Start trial i on idle worker k (a bad configuration fails at once). */
static int trial_start(hml__coordinator *c, int k, long i, int fresh)
{
	const hml__search_plan *p = c->p;
	search_trial *t = &c->t[i];
	hml__train_options o;
	char arch[256], mp[4200];
	json_t *msg;
	int bad, rc;

	bad = trial_options(c, i, &o, arch, sizeof(arch));
	t->epochs = bad < 0 ? 0 : o.epochs;
	t->worker = k;
	t->cold = !c->wk[k].ran++;
	t->seconds = hml__now() - c->t0;   /* the start, until it ends */
	if (fresh && (rc = record_start(c, i, k)) < 0)
		return rc;
	if (bad < 0)
		return trial_end(c, i, HML__HIST_FAILED, hml_error_last()->message, NULL, NAN, NAN);
	model_path(c, i, mp, sizeof(mp));
	if ((rc = output_make(c, mp)) < 0)
		return rc;
	if (!(msg = hml__wire_trial(i, mp, &o)))
		return hml__error_oom();
	if ((p->target != HML__TARGET_TORCHSCRIPT &&
	     (rc = hml__wire_trial_set_latency(msg, p->target, known_latency(c, t, &o))) < 0) ||
	    (discarded(c, t) && (rc = hml__wire_trial_set_discard(msg)) < 0) ||
	    (p->iterative && (rc = trial_run(msg, c->cfg[t->config])) < 0)) {
		json_decref(msg);
		return rc;
	}
	c->wk[k].trial = i;
	c->wk[k].started = hml__now();
	/* A worker that died meanwhile is lost in the next wait: its pipe ends. */
	(void)c->o.pool_ops->send(c->o.pool, k, msg);
	json_decref(msg);
	return 0;
}

/* Delete the files of top-rung models the front dominates (they stay
 * dominated: the front only improves). */
static void prune_files(hml__coordinator *c)
{
	size_t *cfg, n;
	long nf, *keep;

	if (c->p->keep_all || (nf = front_configs(c, &cfg)) < 0)
		return;
	n = (size_t)nf;
	/* The front's trials first: O(front x trials), not for every trial. */
	if (!(keep = malloc((n + 1) * sizeof(*keep)))) {
		free(cfg);
		return;
	}
	for (size_t j = 0; j < n; j++)
		keep[j] = top_trial(c, cfg[j]);
	for (size_t i = 0; i < c->nt; i++) {
		search_trial *t = &c->t[i];
		int on = 0;
		char mp[4200];

		if (!t->has_file || t->status != HML__HIST_OK)
			continue;
		for (size_t j = 0; j < n && !on; j++)
			on = keep[j] == (long)i;
		if (!on) {
			model_path(c, (long)i, mp, sizeof(mp));
			hml__reaper_add(c->reaper, mp);
			t->has_file = 0;
		}
	}
	free(keep);
	free(cfg);
}

/* ---- workers ------------------------------------------------------------ */

static int worker_start(hml__coordinator *c, int k)
{
	worker *w = &c->wk[k];
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

/* Worker k died or was killed: its trial (if any) ends with `status`,
 * and a new worker takes its place. */
static int worker_lost(hml__coordinator *c, int k, hml__hist_status status, const char *detail)
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
		if ((rc = trial_end(c, i, status, msg, NULL, NAN, NAN)) < 0)
			return rc;
		warn(c, "trial %ld %s: %s", i, hml__hist_status_name(status), msg);
	}
	return worker_start(c, k);
}

/* A message from worker k. */
static int worker_message(hml__coordinator *c, int k, const json_t *msg)
{
	const char *type = hml__wire_type(msg), *error;
	worker *w = &c->wk[k];
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
	return trial_end(c, i, error ? HML__HIST_FAILED : HML__HIST_OK, error, &r, cost,
	                 hml__wire_result_qoi(msg));
}

/* What a wait saw: a message, or a worker lost (the trial stays running
 * for --resume once the search is stopping). */
static int on_event(void *payload, const hml__pool_event *ev)
{
	hml__coordinator *c = payload;

	if (interrupted(c))
		return 1;
	if (isnan(c->wait_t)) {
		c->wait_t = hml__now();
		c->wait_c = hml__thread_cpu();
	}
	if (ev->worker < 0 || ev->worker >= c->p->nworkers || !c->wk[ev->worker].alive)
		return 0;
	if (ev->kind == HML__POOL_MESSAGE)
		return worker_message(c, ev->worker, ev->msg);
	return worker_lost(c, ev->worker, HML__HIST_CRASHED, ev->detail);
}

/* ---- the time limit ----------------------------------------------------- */

/* Seconds a trial at `rung` is expected to take: the longest of that rung
 * so far, ended ok or running (its time until now); with none, the longest
 * of another rung scaled up to this rung's epochs; NaN when nothing is
 * known. Conservative: a trial that would not end by the limit is not
 * started. On a worker that has run a trial (!cold), the trials that
 * warmed their workers up are left out while others are known. */
static double expected_seconds(const hml__coordinator *c, unsigned rung, int cold)
{
	double same = NAN, other = NAN, f = hml__sched_fraction(c->sched, rung), now = hml__now();

	for (size_t i = 0; i < c->nt; i++) {
		const search_trial *t = &c->t[i];

		if (t->end_status != HML__HIST_OK || !isfinite(t->seconds) || (t->cold && !cold))
			continue;
		if (t->rung == rung)
			same = fmax(same, t->seconds);   /* (fmax: NaN loses) */
		else
			other = fmax(other, t->seconds *
			                    fmax(1, f / hml__sched_fraction(c->sched, t->rung)));
	}
	for (int k = 0; c->wk && k < c->p->nworkers; k++) {
		const search_trial *t = c->wk[k].trial >= 0 ? &c->t[c->wk[k].trial] : NULL;

		if (t && t->rung == rung && (cold || !t->cold))
			same = fmax(same, now - c->wk[k].started);
	}
	if (isnan(same) && isnan(other) && !cold)
		return expected_seconds(c, rung, 1);
	return isnan(same) ? other : same;
}

/* Seconds trial i is expected to take: a promotion's own configuration at
 * a lower rung, scaled up to this rung's fidelity (the longest such; its
 * fixed costs, scaled too, keep it conservative), else expected_seconds().
 * The longest trial of any configuration judges only configurations not
 * yet timed: one wide configuration timed at rung 0 must not hold every
 * small one's promotion (a search of miniBUDE at benchmark size held all
 * of them behind a 5x252 trial and ended with an empty front). */
static double trial_expected_seconds(const hml__coordinator *c, long i, int cold)
{
	const search_trial *t = &c->t[i];
	double own = NAN, f = hml__sched_fraction(c->sched, t->rung);

	for (size_t j = 0; j < c->nt; j++) {
		const search_trial *u = &c->t[j];

		if (u->config == t->config && u->rung < t->rung && u->end_status == HML__HIST_OK &&
		    isfinite(u->seconds))
			own = fmax(own, u->seconds * fmax(1, f / hml__sched_fraction(c->sched, u->rung)));
	}
	return isnan(own) ? expected_seconds(c, t->rung, cold) : own;
}

/* May a trial at `rung` (i < 0), or trial i, start on worker k now and end
 * by the time limit? */
static int fits(const hml__coordinator *c, unsigned rung, long i, int k)
{
	double e;

	if (c->deadline <= 0)
		return 1;
	e = i >= 0 ? trial_expected_seconds(c, i, !c->wk[k].ran)
	           : expected_seconds(c, rung, !c->wk[k].ran);
	return hml__now() + (isnan(e) ? 0 : e) < c->deadline;
}

/* The rung the next trial would train at, if known before choosing it: a
 * re-run's, else rung 0 (the cheapest a choice may be). */
static unsigned next_rung(const hml__coordinator *c)
{
	return c->nqueue ? c->t[c->queue[0]].rung : 0;
}

static int past_deadline(const hml__coordinator *c)
{
	return c->deadline > 0 && hml__now() >= c->deadline;
}

/* ---- the loop ----------------------------------------------------------- */

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
	n = front_configs(c, &cfg);
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

	/* The next suggestions wait for the ended trials to count (may_start). */
	for (int k = 0; k < c->p->nworkers && !*done && !c->time_up && may_start(c); k++) {
		worker *w = &c->wk[k];

		while (w->alive && w->ready && w->trial < 0 && !*done && !interrupted(c) &&
		       !c->time_up && may_start(c)) {
			size_t before = c->counted;
			int next;

			if (!fits(c, next_rung(c), -1, k)) {
				c->time_up = 1;
				return 0;
			}
			if ((next = trial_next(c, &i, &fresh)) < 0)
				return next;
			if (next == 2) {
				*done = 1;
				return 0;
			}
			if (next == 1 && fresh && !fits(c, c->t[i].rung, i, k)) {
				if ((rc = trial_hold(c, i)) < 0)   /* too long for the time left */
					return rc;
				continue;
			}
			if (next == 1 && (rc = trial_start(c, k, i, fresh)) < 0)
				return rc;
			/* Deterministic: the choice (or the scheduler's wait) lets one
			 * more end count; if it is there, go on at once. */
			if (c->p->deterministic && (rc = count_durable(c, 0)) < 0)
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
	rc = c->o.pool_ops->wait(c->o.pool, timeout, wake, on_event, c);
	if (rc < 0)
		return rc;
	if (isnan(c->wait_t)) {
		c->wait_t = hml__now();
		c->wait_c = hml__thread_cpu();
	}
	for (int k = 0; k < c->p->nworkers && !interrupted(c); k++) {
		worker *w = &c->wk[k];

		if (w->alive && w->trial >= 0 && c->p->trial_timeout > 0 &&
		    hml__now() - w->started > c->p->trial_timeout &&
		    (rc = worker_lost(c, k, HML__HIST_TIMEOUT, NULL)) < 0)
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
		rc = worker_start(c, k);
	while (rc == 0) {
		if (interrupted(c)) {
			rc = 1;
			break;
		}
		if (past_deadline(c)) {
			c->time_up = 1;   /* the trials still running are stopped below */
			break;
		}
		t = hml__now();
		cpu = hml__thread_cpu();
		if ((rc = count_durable(c, 0)) == 0)
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
	if ((flushed = count_durable(c, 1)) < 0 && rc >= 0)
		rc = flushed;
	/* Pruned files are gone before the front is registered. */
	if ((kept = hml__reaper_close(c->reaper)) > 0)
		warn(c, "search %s: %zu dominated model files could not be deleted", c->p->id, kept);
	c->reaper = NULL;
	if (rc < 0)
		return rc;
	return interrupted(c) ? 1 : c->time_up || c->held ? 2 : 0;
}

/* ---- kept models -------------------------------------------------------- */

/* A "models" record for trial i, in the layout of hml train's (lib/store/records.h
 * writes it; what the trial's summary lacks is null). */
/* An iterative application's model: the k it predicts ahead and the
 * interleave it was judged at, with that QoI error (the card's
 * "iterative"), for hml evaluate --k --interleave. Steals rec. */
static json_t *iterative_facts(json_t *rec, const hml__coordinator *c, const search_trial *t)
{
	long long k, il;

	if (!rec || !t->m.has_qoi)
		return rec;
	hml__iterative_choice(c->cfg[t->config], &k, &il);
	if (json_object_set_new(rec, "iterative",
	                        hml__records_iterative_json(k, il, t->m.qoi_error)) < 0) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

static json_t *model_record(const hml__coordinator *c, long i)
{
	const hml__search_plan *p = c->p;
	const search_trial *t = &c->t[i];
	const json_t *reg;
	hml__dataset_view d;
	hml__train_options o = p->base;
	hml__train_result r;
	hml__model_facts f;
	char arch[256];
	const char *ids[256];
	size_t nids = 0;
	long long k, il;

	memset(&r, 0, sizeof(r));
	hml__dataset_view_of(&d, hml__store_find(c->o.store, "datasets", p->ds_ids[0]));
	reg = hml__dataset_view_region(&d, p->region);
	/* The options the trial trained with; its arch as it ran. */
	if (hml__trialmap_apply(&o, arch, sizeof(arch), p->family, p->base_arch,
	                        c->cfg[t->config]) < 0)
		o.arch = t->arch;
	snprintf(r.arch, sizeof(r.arch), "%s", t->arch);
	o.epochs = t->epochs;
	o.threads = p->threads;
	o.latency_threads = p->lat_threads;
	r.params = t->m.params;
	r.n_train = r.n_val = r.n_test = -1;
	r.epochs_run = t->m.epochs_run;
	r.best_epoch = r.stopped_early = r.out_of_time = -1;
	r.train_seconds = t->seconds;
	r.samples_per_second = r.final_lr = r.train_step_seconds = r.forward_max_diff = NAN;
	r.val_rmse = t->m.val_rmse;
	r.test_rmse = t->m.test_rmse;
	r.val_mape = t->m.val_mape;
	r.test_mape = t->m.test_mape;
	r.test_mae = r.test_max_abs = NAN;
	r.latency_s_per_sample = t->m.latency_s;
	r.latency_batch = t->m.latency_batch;
	/* an iterative trial trained on the data sets of its k only: its cost
	 * (lib/store/cost.h) is theirs */
	if (p->iterative) {
		hml__iterative_choice(c->cfg[t->config], &k, &il);
		if (hml__iterative_group(ids, sizeof(ids) / sizeof(ids[0]), &nids, p->iterative, k,
		                         p->ds_ids, p->nds) < 0 || nids == 0)
			nids = 0;
	}
	f = (hml__model_facts){ p->workflow_name, p->region, json_object_get(reg, "input_shape"),
	                        json_object_get(reg, "output_shape"), nids ? ids : p->ds_ids,
	                        nids ? nids : p->nds, &o, &r,
	                        NULL, -1, -1, p->id, i, t->config, NULL, NULL };
	return iterative_facts(hml__model_record_new(c->o.store, &f), c, t);
}

/* The region's data for the front models' cards, loaded once; NULL
 * (after a warning naming `what` they lack) when it cannot be. */
static hml__dataset *card_data(hml__coordinator *c, const char *what)
{
	hml__dataset *d;

	if (c->card_data)
		return c->card_data;
	d = calloc(1, sizeof(*d));
	if (!d || hml__dataset_load(d, (const char *const *)c->p->ds_paths, c->p->nds,
	                            c->p->region, HML__NONFINITE_DROP) < 0) {
		warn(c, "the front's models get no %s: %s", what,
		     d ? hml_error_last()->message : "out of memory");
		free(d);
		return NULL;
	}
	return c->card_data = d;
}

/* The latency card of trial i's model (as hml train measures it), on the
 * region's data, loaded once; NULL (after a warning) when it cannot be
 * measured. */
static json_t *latency_card(hml__coordinator *c, long i, const char *path)
{
	if (!c->o.card || !card_data(c, "latency card"))
		return NULL;
	return c->o.card(c->o.payload, path, c->card_data, c->t[i].m.latency_batch,
	                 c->p->lat_threads);
}

/* The statistics of the region's data that hml deploy --guard needs
 * (lib/core/guard.h, as hml train records them), fitted once: borrowed,
 * or NULL (after a warning) when they cannot be. */
static const json_t *guard_stats(hml__coordinator *c)
{
	hml__guard_stats g;

	if (c->guard || c->guard_failed)
		return c->guard;
	c->guard_failed = 1;
	if (!card_data(c, "guard statistics"))
		return NULL;
	if (hml__guard_fit(&g, c->card_data->x, c->card_data->rows, c->card_data->in_features) < 0) {
		warn(c, "the front's models get no guard statistics: %s", hml_error_last()->message);
		return NULL;
	}
	c->guard = hml__guard_stats_json(&g);
	hml__guard_stats_release(&g);
	c->guard_failed = !c->guard;
	return c->guard;
}

typedef struct card_args {
	const char *id;
	json_t *card;
	const json_t *guard;       /* the input statistics, or NULL */
} card_args;

static int set_card(json_t *m, void *payload)
{
	const card_args *a = payload;
	json_t *rec = hml__manifest_find(m, "models", a->id);

	if (rec && a->guard && !json_object_get(rec, "guard") &&
	    json_object_set(rec, "guard", (json_t *)a->guard))
		return hml__error_oom();
	return rec && json_object_set(rec, "latency", a->card) ? hml__error_oom() : 0;
}

/* Trial i's registered model, kept at a time limit without a latency
 * card, gets its card now. */
static int add_card(hml__coordinator *c, long i)
{
	const json_t *rec = hml__store_find(c->o.store, "models", c->t[i].model);
	const char *rel = rec && !json_object_get(rec, "latency")
	                  ? hml__record_file(rec, "model") : NULL;
	char *path = rel ? hml__store_path(c->o.store, rel) : NULL;
	card_args a = { c->t[i].model, path ? latency_card(c, i, path) : NULL,
	                path ? guard_stats(c) : NULL };
	int rc = a.card ? hml__store_update(c->o.store, set_card, &a) : 0;

	json_decref(a.card);
	free(path);
	return rc;
}

static int keep(hml__coordinator *c, long i, int card)
{
	search_trial *t = &c->t[i];
	hml__hist_event ev;
	const char *before = hml__records_search_model(c->o.store, c->p->id, i);
	char mp[4200];
	int rc;

	if (before) {
		snprintf(t->model, sizeof(t->model), "%s", before);
	} else {
		hml__store_file f = { "model", mp, ".pt", NULL, NULL };
		json_t *rec, *lat;

		model_path(c, i, mp, sizeof(mp));
		if (!t->has_file) {
			warn(c, "the model of trial %ld is missing; it is not registered", i);
			return 0;
		}
		rec = model_record(c, i);
		lat = card && rec ? latency_card(c, i, mp) : NULL;
		if (lat)
			json_object_set_new(rec, "latency", lat);
		if (card && rec && guard_stats(c))
			json_object_set(rec, "guard", c->guard);
		if ((rc = hml__store_add(c->o.store, "models", rec, &f, 1, 1, t->model,
		                         sizeof(t->model))) < 0)
			return rc;
		t->has_file = 0;
	}
	trial_event(c, i, HML__HIST_KEPT, &ev);
	ev.model = t->model;
	if ((rc = hml__history_append(c->hist, &ev)) < 0)
		return rc;
	t->status = HML__HIST_KEPT;
	return 0;
}

static int need_store(const hml__coordinator *c)
{
	return c->o.store ? 0 : hml__error_set(HML_EINVALID, "search '%s': no experiment to "
	                                       "record in", c->p->id);
}

int hml__coordinator_keep_models(hml__coordinator *c)
{
	size_t *cfg;
	long nf;
	int rc;

	if ((rc = need_store(c)) < 0)
		return rc;
	nf = front_configs(c, &cfg);
	rc = nf < 0 ? (int)nf : 0;
	for (long j = 0; j < nf && rc == 0; j++) {
		long i = top_trial(c, cfg[j]);

		/* At the time limit no card: measuring takes seconds a model;
		 * a later session's front gets it. */
		if (i >= 0 && c->t[i].status == HML__HIST_OK)
			rc = keep(c, i, !c->time_up && !c->held);
		else if (i >= 0 && c->t[i].status == HML__HIST_KEPT && !c->time_up && !c->held)
			rc = add_card(c, i);
	}
	for (size_t i = 0; i < c->nt && rc == 0; i++) {
		char mp[4200];

		if (c->p->keep_all && c->t[i].status == HML__HIST_OK && c->t[i].has_file) {
			rc = keep(c, (long)i, 0);
			continue;
		}
		model_path(c, (long)i, mp, sizeof(mp));
		if (c->t[i].status != HML__HIST_KEPT)
			unlink(mp);
	}
	free(cfg);
	return rc;
}

/* ---- the record --------------------------------------------------------- */

/* The front as JSON: [{trial, config, model, val_rmse, val_mape, latency...,
 * params, arch}]. */
static json_t *front_json(const hml__coordinator *c)
{
	size_t *cfg;
	long nf = front_configs(c, &cfg);
	json_t *arr = json_array();

	for (long j = 0; j < nf; j++) {
		long i = top_trial(c, cfg[j]);
		const search_trial *t = i >= 0 ? &c->t[i] : NULL;

		if (!t)
			continue;
		json_array_append_new(arr, json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:I, s:s}",
			"trial", (json_int_t)i, "config", (json_int_t)t->config,
			"model", t->model[0] ? json_string(t->model) : json_null(),
			"val_rmse", hml__json_real(t->m.val_rmse),
			"val_mape", hml__json_real(t->m.val_mape),
			"latency_seconds_per_sample", hml__json_real(t->m.latency_s),
			"params", (json_int_t)t->m.params, "arch", t->arch));
		if (t->m.has_qoi) {
			json_t *f = json_array_get(arr, json_array_size(arr) - 1);
			long long k, il;

			hml__iterative_choice(c->cfg[t->config], &k, &il);
			json_object_set_new(f, "qoi_error", hml__json_real(t->m.qoi_error));
			if (k >= 0)
				json_object_set_new(f, "k", json_integer(k));
			if (il >= 0)
				json_object_set_new(f, "interleave", json_integer(il));
		}
	}
	free(cfg);
	return arr;
}

void hml__coordinator_counts_of(hml__coordinator_counts *out, const hml__coordinator *c)
{
	memset(out, 0, sizeof(*out));
	out->configs = hml__sched_configs(c->sched);
	out->trials = c->nt;
	for (size_t i = 0; i < c->nt; i++) {
		out->ok += c->t[i].status == HML__HIST_OK || c->t[i].status == HML__HIST_KEPT;
		out->failed += c->t[i].status == HML__HIST_FAILED ||
		               c->t[i].status == HML__HIST_TIMEOUT ||
		               c->t[i].status == HML__HIST_CRASHED;
		out->reruns += (size_t)c->t[i].reruns;
	}
	out->session_trials = c->session_trials;
	out->busy = c->busy;
	out->busy_cpu = c->busy_cpu;
	out->suggest = c->suggest;
	out->suggest_cpu = c->suggest_cpu;
}

int hml__coordinator_record(hml__coordinator *c, const char *status)
{
	const hml__search_times *prev = &c->p->prev;
	hml__coordinator_counts n;
	struct rusage ru;
	double cpu;
	json_t *f;
	int rc;

	if ((rc = need_store(c)) < 0)
		return rc;
	hml__coordinator_counts_of(&n, c);
	cpu = getrusage(RUSAGE_SELF, &ru) == 0
		? (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		  (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6 : NAN;
	f = json_pack("{s:s, s:{s:I, s:I, s:I, s:I, s:I}, s:f, s:o, s:f, s:f, s:f, s:f, s:o, s:I}",
		"status", status, "counts", "configs", (json_int_t)n.configs,
		"trials", (json_int_t)n.trials, "ok", (json_int_t)n.ok, "failed", (json_int_t)n.failed,
		"reruns", (json_int_t)n.reruns,
		"seconds", prev->seconds + hml__now() - c->t0,
		"coordinator_cpu_seconds", hml__json_real(prev->cpu + cpu),
		"coordinator_busy_seconds", prev->busy + c->busy,
		"coordinator_suggest_seconds", prev->suggest + c->suggest,
		"coordinator_busy_cpu_seconds", prev->busy_cpu + c->busy_cpu,
		"coordinator_suggest_cpu_seconds", prev->suggest_cpu + c->suggest_cpu,
		"front", front_json(c), "budget", (json_int_t)c->p->budget);
	if (f && (json_object_set_new(f, "stopped", strcmp(status, "stopped") == 0
	                                             ? json_string("time_limit") : json_null()) ||
	          json_object_set_new(f, "time_limit", hml__json_real(c->o.time_limit > 0
	                                                              ? c->o.time_limit : NAN)) ||
	          /* this session's: a search resumed under another launch runs as launched */
	          json_object_set_new(f, "transport", json_string(c->p->mpi ? "mpi" : "processes")) ||
	          json_object_set_new(f, "workers", json_integer(c->p->nworkers)) ||
	          json_object_set_new(f, "workers_requested", c->p->workers_requested > 0 ?
	                              json_integer(c->p->workers_requested) : json_null()))) {
		json_decref(f);
		f = NULL;
	}
	rc = f ? hml__search_set(c->o.store, c->p->id, f) : hml__error_oom();
	json_decref(f);
	return rc;
}

/* ---- the object --------------------------------------------------------- */

/* The `n` points after the `nseeds` seeds of u, less those a seed is
 * already (the workflow's own architecture is often on a front): the
 * count of points kept in all. */
static size_t first_unseeded(double *u, size_t nseeds, size_t dim, size_t n)
{
	size_t kept = nseeds, i, k;

	for (i = 0; i < n; i++) {
		const double *pt = u + (nseeds + i) * dim;

		for (k = 0; k < nseeds && memcmp(u + k * dim, pt, dim * sizeof(*u)) != 0; k++)
			;
		if (k == nseeds)
			memmove(u + kept++ * dim, pt, dim * sizeof(*u));
	}
	return kept;
}

int hml__coordinator_new(hml__coordinator **out, const hml__coordinator_options *o)
{
	hml__sched_options so = HML__SCHED_OPTIONS_INIT;
	const hml__search_plan *p = o->plan;
	hml__coordinator *c;
	double *first;
	size_t nseeds, skipped;
	int rc;

	*out = NULL;
	if (!p || !o->pool_ops || p->nworkers < 1)
		return hml__error_set(HML_EINVALID, "a search coordinator needs a plan and workers");
	if (!(c = calloc(1, sizeof(*c))))
		return hml__error_oom();
	c->o = *o;
	c->p = p;
	so.space = p->space;
	so.seed = (uint64_t)p->seed;
	so.budget = (size_t)p->budget;
	so.rungs = p->rungs;
	so.max_latency = hml__search_plan_latency_bound(p);
	so.max_params = p->max_params > 0 ? p->max_params : 0;
	so.max_error = p->max_error > 0 ? p->max_error : 0;
	/* The seeds of --from (another search's front), then the workflow's own
	 * architecture and the smallest models first. */
	nseeds = json_array_size(p->seeds);
	if (!(first = malloc((nseeds + HML__TRIALMAP_FIRST_MAX) *
	                     (hml__space_dim(p->space) + 1) * sizeof(*first)))) {
		hml__coordinator_free(c);
		return hml__error_oom();
	}
	so.first = first;
	so.nfirst = hml__seed_points(first, nseeds, p->space, p->seeds, &skipped);
	so.nfirst = first_unseeded(first, so.nfirst, hml__space_dim(p->space),
	                           hml__trialmap_first(first + so.nfirst * hml__space_dim(p->space),
	                                               p->space, p->family, p->base_arch,
	                                               &p->base));
	rc = hml__sched_new(&c->sched, &so);
	free(first);
	if (rc < 0) {
		hml__coordinator_free(c);
		return rc;
	}
	c->t0 = hml__now();
	if (o->time_limit > 0)
		c->deadline = (o->started > 0 ? o->started : c->t0) + o->time_limit;
	*out = c;
	return 0;
}

int hml__coordinator_trial_at(hml__coordinator_trial *out, const hml__coordinator *c,
                              size_t i)
{
	const search_trial *t = i < c->nt ? &c->t[i] : NULL;

	memset(out, 0, sizeof(*out));
	if (!t)
		return hml__error_set(HML_ENOTFOUND, "search '%s' has no trial %zu", c->p->id, i);
	out->config = t->config;
	out->rung = t->rung;
	out->status = t->status;
	out->epochs = t->epochs;
	out->worker = t->worker;
	out->reruns = t->reruns;
	out->arch = t->arch;
	out->model = t->model;
	out->m = t->m;
	out->params = (size_t)t->config < c->ncfg ? c->cfg[t->config] : NULL;
	out->u = hml__sched_point(c->sched, (size_t)t->config);
	out->dim = hml__space_dim(c->p->space);
	return 0;
}

size_t hml__coordinator_running(const hml__coordinator *c)
{
	return hml__sched_running(c->sched);
}

void hml__coordinator_free(hml__coordinator *c)
{
	if (!c)
		return;
	for (int k = 0; c->wk && k < c->p->nworkers; k++)
		if (c->wk[k].alive)
			c->o.pool_ops->stop(c->o.pool, k, NULL, 0);
	for (size_t i = 0; i < c->ncfg; i++)
		json_decref(c->cfg[i]);
	if (c->card_data)
		hml__dataset_release(c->card_data);
	free(c->card_data);
	json_decref(c->guard);
	free(c->cfg);
	free(c->t);
	free(c->queue);
	free(c->pending);
	free(c->wk);
	hml__sched_free(c->sched);
	hml__history_close(c->hist);
	hml__reaper_close(c->reaper);
	hml__latency_cache_release(&c->lat);
	free(c);
}
