/*
 * lib/search/coordinator_start.c - the next trial: a re-run or the
 * scheduler's choice, its training options, its start line in the
 * history, and its start on a worker (or, past the time limit, held for
 * --resume).
 */
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "search/coordinator_private.h"
#include "search/iterative.h"
#include "search/trialmap.h"
#include "search/wire.h"

/* The trial's model file, made (or emptied) here beneath the experiment
 * before a worker writes it by name: a link planted at search/<id>/tN.pt
 * stops the search (core/beneath.h) instead of being written through. */
static int output_make(const hml__coordinator *c, const char *mp)
{
	int fd = hml__beneath_open(c->p->xp_dir, mp, O_WRONLY | O_CREAT | O_TRUNC, 0666);

	return fd < 0 ? fd : close(fd);
}

/* The options trial `i` trains with: the base, its configuration's
 * sample, and its rung's share of the epochs. */
static int trial_options(const hml__coordinator *c, long i, hml__train_options *o, char *arch,
                         size_t size)
{
	const hml__search_plan *p = c->p;
	const hml__coord_trial *t = &c->t[i];
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

int hml__coord_trial_next(hml__coordinator *c, long *i, int *fresh)
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
	                     (rc = hml__coord_cfg_push(c, params)) < 0))
		return rc;
	if ((rc = hml__coord_trial_new(c, (long)nt.config, nt.rung, 0)) < 0)
		return rc;
	*i = (long)c->nt - 1;
	*fresh = 1;
	return 1;
}

/* The C latency already measured for the arch, batch and threads of
 * options o (t->lat_cached says whether there is one), or NaN. */
static double known_latency(hml__coordinator *c, hml__coord_trial *t, const hml__train_options *o)
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
	const hml__coord_trial *t = &c->t[i];
	hml__hist_event ev;
	uint64_t seq;

	hml__coord_trial_event(c, i, HML__HIST_RUNNING, &ev);
	ev.epochs = t->epochs;
	ev.worker = k;
	ev.params = c->cfg[t->config];
	ev.u = hml__sched_point(c->sched, (size_t)t->config);
	ev.dim = hml__space_dim(c->p->space);
	if (c->p->deterministic)
		ev.counted = (long)c->counted;
	return hml__history_write(c->hist, &ev, &seq);
}

int hml__coord_trial_hold(hml__coordinator *c, long i)
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

int hml__coord_trial_start(hml__coordinator *c, int k, long i, int fresh)
{
	const hml__search_plan *p = c->p;
	hml__coord_trial *t = &c->t[i];
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
		return hml__coord_trial_end(c, i, HML__HIST_FAILED, hml_error_last()->message, NULL,
		                            NAN, NAN);
	hml__coord_model_path(c, i, mp, sizeof(mp));
	if ((rc = output_make(c, mp)) < 0)
		return rc;
	if (!(msg = hml__wire_trial(i, mp, &o)))
		return hml__error_oom();
	if ((p->target != HML__TARGET_TORCHSCRIPT &&
	     (rc = hml__wire_trial_set_latency(msg, p->target, known_latency(c, t, &o))) < 0) ||
	    (hml__coord_discarded(c, t) && (rc = hml__wire_trial_set_discard(msg)) < 0) ||
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
