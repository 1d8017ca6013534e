/*
 * lib/search/coordinator.c - the coordinator of hml search (see
 * coordinator.h): the object, its table of trials and configurations, and
 * what its other files share (coordinator_private.h names them).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "search/coordinator_private.h"
#include "search/seed.h"
#include "search/trialmap.h"

void hml__coord_warn(const hml__coordinator *c, const char *fmt, ...)
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

int hml__coord_interrupted(const hml__coordinator *c)
{
	return c->o.interrupted && *c->o.interrupted;
}

/* ---- bookkeeping -------------------------------------------------------- */

int hml__coord_grow(void **p, size_t *cap, size_t need, size_t size)
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

int hml__coord_trial_new(hml__coordinator *c, long config, unsigned rung, int epochs)
{
	hml__coord_trial *t;
	int rc;

	if ((rc = hml__coord_grow((void **)&c->t, &c->capt, c->nt + 1, sizeof(*c->t))) < 0)
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

int hml__coord_cfg_push(hml__coordinator *c, json_t *params)
{
	int rc = hml__coord_grow((void **)&c->cfg, &c->capcfg, c->ncfg + 1, sizeof(*c->cfg));

	if (rc < 0) {
		json_decref(params);
		return rc;
	}
	c->cfg[c->ncfg++] = params;
	return 0;
}

int hml__coord_pending_push(hml__coordinator *c, long trial)
{
	int rc = hml__coord_grow((void **)&c->pending, &c->cappending, c->npending + 1,
	                         sizeof(*c->pending));

	if (rc == 0)
		c->pending[c->npending++] = trial;
	return rc;
}

void hml__coord_model_path(const hml__coordinator *c, long trial, char *buf, size_t size)
{
	snprintf(buf, size, "%s/t%ld.pt", c->p->dir, trial);
}

long hml__coord_top_trial(const hml__coordinator *c, size_t config)
{
	for (size_t i = c->nt; i-- > 0;)
		if ((size_t)c->t[i].config == config && c->t[i].rung + 1 == c->p->rungs &&
		    (c->t[i].status == HML__HIST_OK || c->t[i].status == HML__HIST_KEPT))
			return (long)i;
	return -1;
}

long hml__coord_front_configs(const hml__coordinator *c, size_t **cfg)
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

void hml__coord_trial_event(const hml__coordinator *c, long i, hml__hist_status status,
                            hml__hist_event *ev)
{
	hml__hist_event_init(ev);
	ev->trial = i;
	ev->config = c->t[i].config;
	ev->rung = c->t[i].rung;
	ev->status = status;
}

int hml__coord_need_store(const hml__coordinator *c)
{
	return c->o.store ? 0 : hml__error_set(HML_EINVALID, "search '%s': no experiment to "
	                                       "record in", c->p->id);
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
	const hml__coord_trial *t = i < c->nt ? &c->t[i] : NULL;

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
