/*
 * lib/search/opt/trialsched.c - BO proposes, ASHA promotes (see trialsched.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "search/opt/asha.h"
#include "search/opt/bo.h"
#include "search/opt/pareto.h"
#include "search/opt/trialsched.h"

enum { RUNNING, DONE, FAILED };

typedef struct run {
	size_t config;
	unsigned rung;
	int status;
	hml__sched_outcome o;
} run;

struct hml__sched {
	hml__sched_options o;
	hml__bo *bo;
	hml__asha *asha;
	size_t dim;
	double *u;            /* the last point handed out */
	unsigned ncons;
	double cons_bound[3]; /* raw bounds, in the order the optimiser sees them */
	int cons_kind[3];     /* 0 latency, 1 params, 2 error */
	run *r;
	size_t n, cap;
};

static void project(double *u, void *payload)
{
	hml__space_project(payload, u);
}

/* Logarithms of positive values; a zero error or latency is the smallest double. */
static double lg(double v)
{
	return log(v > 1e-300 ? v : 1e-300);
}

int hml__sched_new(hml__sched **out, const hml__sched_options *o)
{
	hml__bo_options bo = HML__BO_OPTIONS_INIT;
	const double lim[3] = { o->max_latency, o->max_params, o->max_error };
	double bounds[3];
	hml__sched *s;
	int rc;

	*out = NULL;
	if (!o->space || o->budget < 1)
		return hml__error_set(HML_EINVALID, "the budget must be at least 1 configuration");
	if (o->rungs < 1 || o->rungs > 8)
		return hml__error_set(HML_EINVALID, "%u rungs (expected 1 to 8)", o->rungs);
	for (int i = 0; i < 3; i++)
		if (!(lim[i] >= 0) || !isfinite(lim[i]))
			return hml__error_set(HML_EINVALID, "a constraint bound must be 0 (none) or "
			                      "positive, not %g", lim[i]);
	if (!(s = calloc(1, sizeof(*s))))
		return hml__error_oom();
	s->o = *o;
	s->dim = hml__space_dim(o->space);
	for (int i = 0; i < 3; i++)
		if (lim[i] > 0) {
			s->cons_kind[s->ncons] = i;
			s->cons_bound[s->ncons] = lim[i];
			bounds[s->ncons++] = lg(lim[i]);
		}
	bo.dim = s->dim;
	bo.nobj = 2;
	bo.ncons = s->ncons;
	bo.bounds = bounds;
	bo.seed = o->seed;
	bo.n_init = o->n_init;
	bo.first = o->first;
	bo.nfirst = o->nfirst;
	bo.project = project;
	bo.payload = (void *)o->space;
	if (!(s->u = calloc(s->dim ? s->dim : 1, sizeof(double)))) {
		rc = hml__error_oom();
		goto fail;
	}
	s->o.first = NULL;   /* the caller's; the optimiser copies it */
	if ((rc = hml__bo_new(&s->bo, &bo)) < 0 ||
	    (rc = hml__asha_new(&s->asha, 2, 1.0 / pow(o->eta, o->rungs - 1), 1.0, o->eta)) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	hml__sched_free(s);
	return rc;
}

void hml__sched_free(hml__sched *s)
{
	if (!s)
		return;
	hml__bo_free(s->bo);
	hml__asha_free(s->asha);
	free(s->u);
	free(s->r);
	free(s);
}

static run *find(const hml__sched *s, size_t config, unsigned rung)
{
	for (size_t i = s->n; i-- > 0;)
		if (s->r[i].config == config && s->r[i].rung == rung)
			return &s->r[i];
	return NULL;
}

static int push(hml__sched *s, size_t config, unsigned rung)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		run *r = realloc(s->r, cap * sizeof(*r));

		if (!r)
			return hml__error_oom();
		s->r = r;
		s->cap = cap;
	}
	s->r[s->n++] = (run){ config, rung, RUNNING, { NAN, NAN, NAN, NAN, NAN } };
	return 0;
}

/* Budget spent, nothing running or due, and no result at the top rung
 * (a small budget): the unpromoted configuration with the lowest error at
 * the highest rung reached goes one rung up, so the front is never empty
 * for want of full trainings. 1 with *config, *k; 0 when none. */
static int finish_promotion(const hml__sched *s, size_t *config, unsigned *k)
{
	unsigned top = hml__asha_rungs(s->asha) - 1;
	const run *best = NULL;

	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].rung == top && s->r[i].status == DONE)
			return 0;
	for (size_t i = 0; i < s->n; i++) {
		const run *r = &s->r[i];

		if (r->status != DONE || r->rung >= top || find(s, r->config, r->rung + 1))
			continue;
		if (!best || r->rung > best->rung ||
		    (r->rung == best->rung && r->o.val_rmse < best->o.val_rmse))
			best = r;
	}
	if (!best)
		return 0;
	*config = best->config;
	*k = best->rung + 1;
	return 1;
}

int hml__sched_next(hml__sched *s, hml__sched_trial *t)
{
	const double *u;
	size_t config;
	unsigned k;
	int rc;

	if ((rc = hml__asha_next(s->asha, &config, &k)) < 0)
		return rc;
	if (rc == 1) {
		if ((rc = push(s, config, k)) < 0)
			return rc;
		hml__bo_trial(s->bo, config, &u, NULL, NULL);
		memcpy(s->u, u, s->dim * sizeof(double));
	} else if (hml__bo_count(s->bo) < s->o.budget) {
		k = 0;
		if ((rc = hml__bo_ask(s->bo, &config, s->u)) < 0 ||
		    (rc = hml__asha_start(s->asha, config, 0)) < 0 || (rc = push(s, config, 0)) < 0)
			return rc;
	} else if (hml__sched_running(s)) {
		return 0;
	} else if (finish_promotion(s, &config, &k)) {
		if ((rc = hml__asha_start(s->asha, config, k)) < 0 || (rc = push(s, config, k)) < 0)
			return rc;
		hml__bo_trial(s->bo, config, &u, NULL, NULL);
		memcpy(s->u, u, s->dim * sizeof(double));
	} else {
		return 2;
	}
	t->config = config;
	t->rung = k;
	t->fraction = hml__sched_fraction(s, k);
	t->u = s->u;
	return 1;
}

int hml__sched_start(hml__sched *s, size_t config, unsigned rung, const double *u)
{
	size_t id;
	int rc;

	if (rung == 0) {
		if (config != hml__bo_count(s->bo))
			return hml__error_set(HML_EINVALID, "history: configuration %zu starts out of "
			                      "order (expected %zu)", config, hml__bo_count(s->bo));
		if ((rc = hml__bo_add(s->bo, &id, u)) < 0)
			return rc;
	} else if (config >= hml__bo_count(s->bo)) {
		return hml__error_set(HML_EINVALID, "history: configuration %zu is promoted before "
		                      "it started", config);
	}
	if ((rc = hml__asha_start(s->asha, config, rung)) < 0)
		return rc;
	return push(s, config, rung);
}

static run *running(hml__sched *s, size_t config, unsigned rung)
{
	run *r = find(s, config, rung);

	if (!r || r->status != RUNNING)
		hml__error_set(HML_EINVALID, "trial of configuration %zu at rung %u is not running",
		               config, rung);
	return r && r->status == RUNNING ? r : NULL;
}

/* The second objective: the cost where given, else the latency. */
static double objective(const hml__sched_outcome *o)
{
	return o->cost_s > 0 && isfinite(o->cost_s) ? o->cost_s : o->latency_s;
}

/* The value of constraint kind (0 latency, 1 params, 2 error) whose bound
 * is `bound`: a latency with the trial's own bound scaled onto it. */
static double cons_value(const hml__sched_outcome *o, int kind, double bound)
{
	if (kind == 0 && o->latency_bound > 0)
		return o->latency_s / o->latency_bound * bound;
	return kind == 0 ? o->latency_s : kind == 1 ? o->params : o->val_rmse;
}

int hml__sched_report(hml__sched *s, size_t config, unsigned rung,
                      const hml__sched_outcome *o)
{
	run *r = running(s, config, rung);
	double f[2], c[3];
	int rc;

	if (!r)
		return HML_EINVALID;
	if (!isfinite(o->val_rmse) || !isfinite(o->latency_s) || !isfinite(o->params) ||
	    o->val_rmse < 0 || o->latency_s < 0 || o->params < 0)
		return hml__error_set(HML_EINVALID, "trial of configuration %zu at rung %u: outcome "
		                      "is not finite and non-negative", config, rung);
	f[0] = lg(o->val_rmse);
	f[1] = lg(objective(o));
	for (unsigned i = 0; i < s->ncons; i++)
		c[i] = lg(cons_value(o, s->cons_kind[i], s->cons_bound[i]));
	if ((rc = hml__asha_report(s->asha, config, rung, f)) < 0 ||
	    (rc = rung == 0 ? hml__bo_tell(s->bo, config, f, c)
	                    : hml__bo_improve(s->bo, config, f, c)) < 0)
		return rc;
	r->status = DONE;
	r->o = *o;
	return 0;
}

int hml__sched_fail(hml__sched *s, size_t config, unsigned rung)
{
	run *r = running(s, config, rung);
	int rc;

	if (!r)
		return HML_EINVALID;
	if ((rc = hml__asha_fail(s->asha, config, rung)) < 0 ||
	    (rung == 0 && (rc = hml__bo_fail(s->bo, config)) < 0))
		return rc;
	r->status = FAILED;
	return 0;
}

static size_t count(const hml__sched *s, int status)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += s->r[i].status == status;
	return n;
}

size_t hml__sched_configs(const hml__sched *s) { return hml__bo_count(s->bo); }
size_t hml__sched_running(const hml__sched *s) { return count(s, RUNNING); }
size_t hml__sched_ended(const hml__sched *s) { return s->n - count(s, RUNNING); }
size_t hml__sched_failed(const hml__sched *s) { return count(s, FAILED); }
unsigned hml__sched_rungs(const hml__sched *s) { return hml__asha_rungs(s->asha); }

double hml__sched_fraction(const hml__sched *s, unsigned rung)
{
	return hml__asha_resource(s->asha, rung);
}

int hml__sched_feasible(const hml__sched *s, const hml__sched_outcome *o)
{
	for (unsigned i = 0; i < s->ncons; i++)
		if (!(cons_value(o, s->cons_kind[i], s->cons_bound[i]) <= s->cons_bound[i]))
			return 0;
	return 1;
}

const double *hml__sched_point(const hml__sched *s, size_t config)
{
	const double *u = NULL;

	return hml__bo_trial(s->bo, config, &u, NULL, NULL) < 0 ? NULL : u;
}

long hml__sched_front(const hml__sched *s, size_t *configs, hml__sched_outcome *out)
{
	unsigned top = hml__asha_rungs(s->asha) - 1;
	double *f = malloc((s->n + 1) * 2 * sizeof(double));
	size_t *idx = malloc((s->n + 1) * sizeof(size_t)), *which = malloc((s->n + 1) * sizeof(size_t));
	size_t m = 0, nf;

	if (!f || !idx || !which) {
		free(f);
		free(idx);
		free(which);
		return hml__error_oom();
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].rung == top && s->r[i].status == DONE && hml__sched_feasible(s, &s->r[i].o)) {
			f[2 * m] = s->r[i].o.val_rmse;
			f[2 * m + 1] = objective(&s->r[i].o);
			which[m++] = i;
		}
	nf = hml__pareto_front(idx, f, m);
	if (nf == (size_t)-1)
		nf = 0;
	for (size_t j = 0; j < nf; j++) {
		configs[j] = s->r[which[idx[j]]].config;
		if (out)
			out[j] = s->r[which[idx[j]]].o;
	}
	free(f);
	free(idx);
	free(which);
	return (long)nf;
}

double hml__sched_best_error(const hml__sched *s)
{
	unsigned top = hml__asha_rungs(s->asha) - 1;
	double best = NAN;

	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].rung == top && s->r[i].status == DONE &&
		    !(s->r[i].o.val_rmse >= best))
			best = s->r[i].o.val_rmse;
	return best;
}
