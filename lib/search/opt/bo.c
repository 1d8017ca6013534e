/*
 * lib/search/opt/bo.c - ParEGO Bayesian optimisation with outcome constraints, failed
 * and pending trials (the method is described in bo.h).
 */
#include "search/opt/bo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <nlopt.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/error.h"
#include "core/rng.h"
#include "search/opt/gp.h"
#include "search/opt/pareto.h"

#define N_RANDOM 384     /* uniform candidates per suggestion */
#define N_LOCAL 128      /* candidates around the best trials */
#define N_POLISH 3       /* candidates polished with BOBYQA */
#define POLISH_EVALS 60
#define FIT_MAX 128      /* most trials a hyper-parameter fit looks at */
#define FIT_RESTARTS 1
#define FIT_EVALS 60
#define FIRST_FIT 4
#define RHO 0.05         /* ParEGO's augmentation */

/* What a completed trial measured. */
typedef struct outcome {
	double obj[2];
	double cons[HML__BO_MAX_CONSTRAINTS];
} outcome;

typedef struct trial {
	double *u;           /* dim values in [0, 1] */
	outcome now;         /* the latest: as told, or improved (hml__bo_improve) */
	outcome told;        /* as told: what hyper-parameter fits use */
	int status;
} trial;

typedef struct hyper {
	double *ls;          /* dim */
	double s2, n2;
} hyper;

struct hml__bo {
	hml__bo_options o;
	double bounds[HML__BO_MAX_CONSTRAINTS];
	trial *t;
	size_t n, cap;
	size_t *done;        /* ids of completed (ok) trials, in completion order */
	size_t ndone;
	double *lhs;         /* n_init x dim initial design */
	size_t fitted;       /* completed trials the hyper-parameters were fitted on */
	hyper h[1 + HML__BO_MAX_CONSTRAINTS]; /* objective, then constraints */
};

/* ---- random numbers: one stream per suggestion, from (seed, trial id) ---- */

static double normal(uint64_t *s)
{
	double a = hml__rng_uniform(s), b = hml__rng_uniform(s);
	return sqrt(-2.0 * log(1.0 - a)) * cos(2.0 * M_PI * b);
}

static uint64_t stream(const hml__bo *bo, uint64_t purpose, uint64_t k)
{
	uint64_t s = bo->o.seed ^ (purpose * 0xd1b54a32d192ed03ULL);
	hml__rng_splitmix64(&s);
	s ^= k * HML__RNG_GOLDEN;
	hml__rng_splitmix64(&s);
	return s;
}

/* ---- lifetime ------------------------------------------------------------ */

static int latin_hypercube(hml__bo *bo)
{
	size_t n = bo->o.n_init, d = bo->o.dim;
	size_t *perm = malloc(n * sizeof *perm);
	if (!perm || !(bo->lhs = malloc(n * d * sizeof *bo->lhs))) {
		free(perm);
		return hml__error_oom();
	}
	uint64_t rng = stream(bo, 1, 0);
	for (size_t k = 0; k < d; k++) {
		for (size_t i = 0; i < n; i++)
			perm[i] = i;
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = (size_t)(hml__rng_splitmix64(&rng) % (i + 1)), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (size_t i = 0; i < n; i++)
			bo->lhs[i * d + k] = ((double)perm[i] + hml__rng_uniform(&rng)) / (double)n;
	}
	free(perm);
	if (bo->o.first)
		memcpy(bo->lhs, bo->o.first, (bo->o.nfirst < n ? bo->o.nfirst : n) * d *
		       sizeof(*bo->lhs));
	bo->o.first = NULL;   /* the caller's; copied */
	return 0;
}

int hml__bo_new(hml__bo **out, const hml__bo_options *opts)
{
	int rc = 0;
	*out = NULL;
	if (opts->dim == 0 || (opts->nobj != 1 && opts->nobj != 2) ||
	    opts->ncons > HML__BO_MAX_CONSTRAINTS)
		return hml__error_set(HML_EINVALID, "optimiser: invalid options (dim %zu, "
		                      "%u objectives, %u constraints)", opts->dim, opts->nobj,
		                      opts->ncons);
	for (unsigned k = 0; k < opts->ncons; k++)
		if (!isfinite(opts->bounds[k]))
			return hml__error_set(HML_EINVALID, "optimiser: constraint bound %u is "
			                      "not finite", k);
	hml__bo *bo = calloc(1, sizeof *bo);
	if (!bo)
		return hml__error_oom();
	bo->o = *opts;
	bo->o.bounds = NULL;
	if (opts->ncons)
		memcpy(bo->bounds, opts->bounds, opts->ncons * sizeof *bo->bounds);
	if (!bo->o.n_init)
		bo->o.n_init = 2 * opts->dim + 2 > 5 ? 2 * opts->dim + 2 : 5;
	if (bo->o.n_init < opts->nfirst)   /* every first point is tried */
		bo->o.n_init = opts->nfirst;
	if (!bo->o.window)
		bo->o.window = 256;
	if (bo->o.window < 8)
		bo->o.window = 8;
	if (!bo->o.refit_every)
		bo->o.refit_every = 10;
	for (unsigned k = 0; k <= opts->ncons; k++) {
		if (!(bo->h[k].ls = malloc(opts->dim * sizeof(double)))) {
			rc = hml__error_oom();
			goto done;
		}
		for (size_t j = 0; j < opts->dim; j++)
			bo->h[k].ls[j] = 0.5;
		bo->h[k].s2 = 1.0;
		bo->h[k].n2 = 1e-3;
	}
	if ((rc = latin_hypercube(bo)) < 0)
		goto done;
	*out = bo;
	bo = NULL;
done:
	hml__bo_free(bo);
	return rc;
}

void hml__bo_free(hml__bo *bo)
{
	if (!bo)
		return;
	for (size_t i = 0; i < bo->n; i++)
		free(bo->t[i].u);
	for (unsigned k = 0; k <= bo->o.ncons; k++)
		free(bo->h[k].ls);
	free(bo->t);
	free(bo->done);
	free(bo->lhs);
	free(bo);
}

/* ---- history --------------------------------------------------------------- */

static int push_trial(hml__bo *bo, size_t *id, const double *u)
{
	size_t d = bo->o.dim;
	if (bo->n == bo->cap) {
		size_t cap = bo->cap ? 2 * bo->cap : 64;
		trial *t = realloc(bo->t, cap * sizeof *t);
		if (!t)
			return hml__error_oom();
		bo->t = t;
		size_t *done = realloc(bo->done, cap * sizeof *done);
		if (!done)
			return hml__error_oom();
		bo->done = done;
		bo->cap = cap;
	}
	trial *t = &bo->t[bo->n];
	if (!(t->u = calloc(d, sizeof *t->u)))
		return hml__error_oom();
	for (size_t k = 0; k < d; k++)
		t->u[k] = u[k] > 1 ? 1 : u[k] >= 0 ? u[k] : 0;
	if (bo->o.project)
		bo->o.project(t->u, bo->o.payload);
	for (unsigned k = 0; k < 2; k++)
		t->now.obj[k] = NAN;
	for (unsigned k = 0; k < bo->o.ncons; k++)
		t->now.cons[k] = NAN;
	t->told = t->now;
	t->status = HML__TRIAL_PENDING;
	*id = bo->n++;
	return 0;
}

int hml__bo_add(hml__bo *bo, size_t *id, const double *u)
{
	return push_trial(bo, id, u);
}

static int pending(const hml__bo *bo, size_t id)
{
	if (id >= bo->n || bo->t[id].status != HML__TRIAL_PENDING)
		return hml__error_set(HML_EINVALID, "trial %zu is not pending", id);
	return 0;
}

/* Every objective and constraint value of trial id is finite. */
static int finite_values(const hml__bo *bo, size_t id, const double *obj, const double *cons)
{
	for (unsigned k = 0; k < bo->o.nobj; k++)
		if (!isfinite(obj[k]))
			return hml__error_set(HML_EINVALID, "trial %zu: objective %u is not finite",
			                      id, k);
	for (unsigned k = 0; k < bo->o.ncons; k++)
		if (!isfinite(cons[k]))
			return hml__error_set(HML_EINVALID, "trial %zu: constraint %u is not "
			                      "finite", id, k);
	return 0;
}

static void set_outcome(const hml__bo *bo, outcome *o, const double *obj, const double *cons)
{
	for (unsigned k = 0; k < bo->o.nobj; k++)
		o->obj[k] = obj[k];
	for (unsigned k = 0; k < bo->o.ncons; k++)
		o->cons[k] = cons[k];
}

int hml__bo_tell(hml__bo *bo, size_t id, const double *obj, const double *cons)
{
	int rc;
	if ((rc = pending(bo, id)) < 0 || (rc = finite_values(bo, id, obj, cons)) < 0)
		return rc;
	trial *t = &bo->t[id];
	set_outcome(bo, &t->now, obj, cons);
	t->told = t->now;
	t->status = HML__TRIAL_OK;
	bo->done[bo->ndone++] = id;
	return 0;
}

int hml__bo_improve(hml__bo *bo, size_t id, const double *obj, const double *cons)
{
	int rc;
	if (id >= bo->n || bo->t[id].status != HML__TRIAL_OK)
		return hml__error_set(HML_EINVALID, "trial %zu is not completed", id);
	if ((rc = finite_values(bo, id, obj, cons)) < 0)
		return rc;
	set_outcome(bo, &bo->t[id].now, obj, cons);
	return 0;
}

int hml__bo_fail(hml__bo *bo, size_t id)
{
	int rc;
	if ((rc = pending(bo, id)) < 0)
		return rc;
	bo->t[id].status = HML__TRIAL_FAILED;
	return 0;
}

size_t hml__bo_count(const hml__bo *bo)
{
	return bo->n;
}

int hml__bo_trial(const hml__bo *bo, size_t id, const double **u, const double **obj,
                  const double **cons)
{
	if (id >= bo->n)
		return -1;
	if (u)
		*u = bo->t[id].u;
	if (obj)
		*obj = bo->t[id].now.obj;
	if (cons)
		*cons = bo->t[id].now.cons;
	return bo->t[id].status;
}

int hml__bo_feasible(const hml__bo *bo, size_t id)
{
	if (id >= bo->n || bo->t[id].status != HML__TRIAL_OK)
		return 0;
	for (unsigned k = 0; k < bo->o.ncons; k++)
		if (!(bo->t[id].now.cons[k] <= bo->bounds[k]))
			return 0;
	return 1;
}

long hml__bo_front(const hml__bo *bo, size_t *ids)
{
	double *f = malloc((bo->n ? bo->n : 1) * 2 * sizeof *f);
	size_t *map = malloc((bo->n ? bo->n : 1) * sizeof *map), m = 0;
	long count = HML_ENOMEM;
	if (!f || !map) {
		hml__error_oom();
		goto done;
	}
	for (size_t i = 0; i < bo->n; i++) {
		if (!hml__bo_feasible(bo, i))
			continue;
		f[2 * m] = bo->t[i].now.obj[0];
		f[2 * m + 1] = bo->o.nobj == 2 ? bo->t[i].now.obj[1] : 0.0;
		map[m++] = i;
	}
	size_t k = hml__pareto_front(ids, f, m);
	if (k == (size_t)-1) {
		hml__error_oom();
		goto done;
	}
	for (size_t j = 0; j < k; j++)
		ids[j] = map[ids[j]];
	count = (long)k;
done:
	free(f);
	free(map);
	return count;
}

/* ---- hyper-parameters -------------------------------------------------- */

/* ParEGO's augmented Chebyshev scalarisation of the objectives f,
 * normalised by lo and span. */
static double scalarise(const hml__bo *bo, const double *f, const double w[2],
                        const double lo[2], const double span[2])
{
	double mx = -INFINITY, sum = 0;
	for (unsigned k = 0; k < bo->o.nobj; k++) {
		double v = w[k] * (f[k] - lo[k]) / span[k];
		mx = v > mx ? v : mx;
		sum += v;
	}
	return mx + RHO * sum;
}

/* Range of each objective over the completed trials ids[0..m): their
 * values now, or as told. */
static void obj_range(const hml__bo *bo, const size_t *ids, size_t m, int told, double lo[2],
                      double span[2])
{
	for (unsigned k = 0; k < 2; k++) {
		double a = INFINITY, b = -INFINITY;
		for (size_t j = 0; j < m; j++) {
			const trial *t = &bo->t[ids[j]];
			double v = told ? t->told.obj[k] : t->now.obj[k];
			a = v < a ? v : a;
			b = v > b ? v : b;
		}
		lo[k] = isfinite(a) ? a : 0;
		span[k] = b - a > 1e-12 ? b - a : 1.0;
	}
}

static size_t next_boundary(const hml__bo *bo, size_t b)
{
	return b + (bo->o.refit_every > b / 8 ? bo->o.refit_every : b / 8);
}

/* Fit one GP on X (m x dim) and y; store its hyper-parameters in h. */
static int fit_one(const hml__bo *bo, hyper *h, const double *X, const double *y,
                   size_t m, uint64_t seed)
{
	hml__gp *gp = NULL;
	int rc;
	if ((rc = hml__gp_new(&gp, bo->o.dim)) < 0 ||
	    (rc = hml__gp_set_data(gp, X, y, m)) < 0 ||
	    (rc = hml__gp_fit(gp, FIT_RESTARTS, FIT_EVALS, seed)) < 0)
		goto done;
	hml__gp_hyper(gp, h->ls, &h->s2, &h->n2);
done:
	hml__gp_free(gp);
	return rc;
}

/* Refit the hyper-parameters when the completed trials cross a boundary:
 * on the first b completed trials (at most the last FIT_MAX of them), the
 * objectives scalarised with equal weights, with the values as told: a fit
 * at boundary b is the same whenever it runs (a resumed search fits after
 * its replay, with values improved since the original's fit). */
static int maybe_refit(hml__bo *bo)
{
	size_t b = FIRST_FIT, d = bo->o.dim;
	int rc = 0;
	if (bo->ndone < FIRST_FIT)
		return 0;
	while (next_boundary(bo, b) <= bo->ndone)
		b = next_boundary(bo, b);
	if (b == bo->fitted)
		return 0;
	const size_t *ids = bo->done + (b > FIT_MAX ? b - FIT_MAX : 0);
	size_t m = b > FIT_MAX ? FIT_MAX : b;
	double *X = malloc(m * (d + 1) * sizeof *X), *y = X + m * d;
	double lo[2], span[2], w[2] = { 0.5, 0.5 };
	if (!X)
		return hml__error_oom();
	obj_range(bo, bo->done, b, 1, lo, span);
	for (size_t j = 0; j < m; j++) {
		memcpy(X + j * d, bo->t[ids[j]].u, d * sizeof *X);
		y[j] = scalarise(bo, bo->t[ids[j]].told.obj, w, lo, span);
	}
	if ((rc = fit_one(bo, &bo->h[0], X, y, m, stream(bo, 2, b))) < 0)
		goto done;
	for (unsigned k = 0; k < bo->o.ncons; k++) {
		for (size_t j = 0; j < m; j++)
			y[j] = bo->t[ids[j]].told.cons[k];
		if ((rc = fit_one(bo, &bo->h[1 + k], X, y, m, stream(bo, 3 + k, b))) < 0)
			goto done;
	}
	bo->fitted = b;
done:
	free(X);
	return rc;
}

/* ---- acquisition --------------------------------------------------------- */

/* log Phi(z), accurate in the far left tail. */
static double log_cdf(double z)
{
	if (z > -5)
		return log(0.5 * erfc(-z / M_SQRT2));
	double z2 = z * z;
	return -0.5 * z2 - 0.5 * log(2 * M_PI) - log(-z) + log1p(-1 / z2 + 3 / (z2 * z2));
}

/* log of expected improvement sigma * (z Phi(z) + phi(z)), z = (best - mu)/sigma. */
static double log_ei(double z, double sigma)
{
	double lphi = -0.5 * z * z - 0.5 * log(2 * M_PI);
	if (z > -5)
		return log(sigma) + log(z * 0.5 * erfc(-z / M_SQRT2) + exp(lphi));
	double z2 = z * z;
	return log(sigma) + lphi - log(z2) + log1p(-3 / z2 + 15 / (z2 * z2));
}

typedef struct acq {
	const hml__bo *bo;
	hml__gp *obj;                 /* the scalarised objectives */
	hml__gp *cons[HML__BO_MAX_CONSTRAINTS];
	hml__gp *fail;                /* the failure indicator, or NULL */
	double best;                  /* best feasible scalarised value, or NAN */
	double *mu, *var;             /* scratch for batches */
	size_t cap;
} acq;

/* log acquisition at m points X (m x dim) into out. */
static int acq_eval(acq *a, const double *X, size_t m, double *out)
{
	int rc;
	if (m > a->cap) {
		free(a->mu);
		a->cap = m;
		if (!(a->mu = malloc(2 * m * sizeof *a->mu)))
			return hml__error_oom();
		a->var = a->mu + m;
	}
	for (size_t j = 0; j < m; j++)
		out[j] = 0;
	if (!isnan(a->best)) {
		if ((rc = hml__gp_predict(a->obj, X, m, a->mu, a->var)) < 0)
			return rc;
		for (size_t j = 0; j < m; j++) {
			double s = sqrt(a->var[j]) + 1e-12;
			out[j] += log_ei((a->best - a->mu[j]) / s, s);
		}
	}
	for (unsigned k = 0; k < a->bo->o.ncons; k++) {
		if ((rc = hml__gp_predict(a->cons[k], X, m, a->mu, a->var)) < 0)
			return rc;
		for (size_t j = 0; j < m; j++)
			out[j] += log_cdf((a->bo->bounds[k] - a->mu[j]) / (sqrt(a->var[j]) + 1e-12));
	}
	if (a->fail) {
		if ((rc = hml__gp_predict(a->fail, X, m, a->mu, a->var)) < 0)
			return rc;
		for (size_t j = 0; j < m; j++)
			out[j] += log_cdf((0.5 - a->mu[j]) / (sqrt(a->var[j]) + 1e-12));
	}
	return 0;
}

static void acq_release(acq *a)
{
	hml__gp_free(a->obj);
	for (unsigned k = 0; k < HML__BO_MAX_CONSTRAINTS; k++)
		hml__gp_free(a->cons[k]);
	hml__gp_free(a->fail);
	free(a->mu);
}

/* A GP with hyper-parameters h conditioned on rows ids of the history. */
static int make_gp(hml__gp **out, const hml__bo *bo, const hyper *h, const size_t *ids,
                   const double *y, size_t m, double *X)
{
	int rc;
	size_t d = bo->o.dim;
	for (size_t j = 0; j < m; j++)
		memcpy(X + j * d, bo->t[ids[j]].u, d * sizeof *X);
	if ((rc = hml__gp_new(out, d)) < 0 ||
	    (rc = hml__gp_set_hyper(*out, h->ls, h->s2, h->n2)) < 0 ||
	    (rc = hml__gp_set_data(*out, X, y, m)) < 0)
		return rc;
	return 0;
}

/* Sort ids by key ascending (ties by id): a small insertion-free merge via qsort. */
typedef struct { double key; size_t id; } keyed;

static int keyed_cmp(const void *pa, const void *pb)
{
	const keyed *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The completed trials the GPs condition on: all of them when they fit in
 * room, else the better half by s and the most recently completed. Writes
 * ids into sel and returns their count. s is indexed by trial id. */
static size_t select_window(const hml__bo *bo, const double *s, size_t room,
                            size_t *sel, keyed *tmp, unsigned char *taken)
{
	size_t nd = bo->ndone, m = 0;
	if (nd <= room) {
		memcpy(sel, bo->done, nd * sizeof *sel);
		return nd;
	}
	for (size_t j = 0; j < nd; j++)
		tmp[j] = (keyed){ s[bo->done[j]], bo->done[j] };
	qsort(tmp, nd, sizeof *tmp, keyed_cmp);
	memset(taken, 0, bo->n);
	for (size_t j = 0; j < room / 2; j++) {
		sel[m++] = tmp[j].id;
		taken[tmp[j].id] = 1;
	}
	for (size_t j = nd; j-- > 0 && m < room;)
		if (!taken[bo->done[j]])
			sel[m++] = bo->done[j];
	return m;
}

typedef struct scratch {
	double *s, *y, *X;
	size_t *ids, *sel;
	keyed *tmp;
	unsigned char *taken;
} scratch;

static void scratch_free(scratch *w)
{
	free(w->s);
	free(w->y);
	free(w->X);
	free(w->ids);
	free(w->sel);
	free(w->tmp);
	free(w->taken);
}

static int scratch_init(scratch *w, size_t n, size_t d)
{
	n = n ? n : 1;
	w->s = malloc(n * sizeof *w->s);
	w->y = malloc(n * sizeof *w->y);
	w->X = malloc(n * d * sizeof *w->X);
	w->ids = malloc(n * sizeof *w->ids);
	w->sel = malloc(n * sizeof *w->sel);
	w->tmp = malloc(n * sizeof *w->tmp);
	w->taken = malloc(n);
	if (!w->s || !w->y || !w->X || !w->ids || !w->sel || !w->tmp || !w->taken)
		return hml__error_oom();
	return 0;
}

/* The most recent trials (by id) of one status, at most max; count returned. */
static size_t recent(const hml__bo *bo, int status, size_t max, size_t *ids)
{
	size_t m = 0;
	for (size_t i = bo->n; i-- > 0 && m < max;)
		if (bo->t[i].status == status)
			ids[m++] = i;
	return m;
}

/* Condition the GPs of the acquisition for one suggestion (weights from rng). */
static int build_acq(const hml__bo *bo, uint64_t *rng, acq *a, scratch *w)
{
	int rc;
	double lo[2], span[2], wt[2] = { 1, 0 }, liar = -INFINITY;
	if (bo->o.nobj == 2) {
		wt[0] = hml__rng_uniform(rng);
		wt[1] = 1 - wt[0];
	}
	obj_range(bo, bo->done, bo->ndone, 0, lo, span);
	a->best = NAN;
	for (size_t j = 0; j < bo->ndone; j++) {
		size_t i = bo->done[j];
		w->s[i] = scalarise(bo, bo->t[i].now.obj, wt, lo, span);
		liar = w->s[i] > liar ? w->s[i] : liar;
		if (hml__bo_feasible(bo, i) && !(w->s[i] >= a->best))
			a->best = w->s[i];
	}
	size_t npend = recent(bo, HML__TRIAL_PENDING, bo->o.window / 2, w->ids + 0);
	size_t room = bo->o.window - npend;
	size_t nsel = select_window(bo, w->s, room, w->sel, w->tmp, w->taken);
	/* objective: the selected trials, then the pending ones at the liar */
	memmove(w->ids + nsel, w->ids, npend * sizeof *w->ids);
	memcpy(w->ids, w->sel, nsel * sizeof *w->ids);
	for (size_t j = 0; j < nsel; j++)
		w->y[j] = w->s[w->sel[j]];
	for (size_t j = nsel; j < nsel + npend; j++)
		w->y[j] = liar;
	if ((rc = make_gp(&a->obj, bo, &bo->h[0], w->ids, w->y, nsel + npend, w->X)) < 0)
		return rc;
	for (unsigned k = 0; k < bo->o.ncons; k++) {
		for (size_t j = 0; j < nsel; j++)
			w->y[j] = bo->t[w->sel[j]].now.cons[k];
		if ((rc = make_gp(&a->cons[k], bo, &bo->h[1 + k], w->sel, w->y, nsel,
		                  w->X)) < 0)
			return rc;
	}
	size_t nfail = recent(bo, HML__TRIAL_FAILED, bo->o.window / 2, w->ids + nsel);
	if (nfail) {
		hyper h = { bo->h[0].ls, 1.0, 1e-3 };
		memcpy(w->ids, w->sel, nsel * sizeof *w->ids);
		for (size_t j = 0; j < nsel + nfail; j++)
			w->y[j] = j < nsel ? 0.0 : 1.0;
		if ((rc = make_gp(&a->fail, bo, &h, w->ids, w->y, nsel + nfail, w->X)) < 0)
			return rc;
	}
	return 0;
}

static int is_duplicate(const hml__bo *bo, const double *u)
{
	for (size_t i = 0; i < bo->n; i++) {
		size_t k = 0;
		while (k < bo->o.dim && fabs(bo->t[i].u[k] - u[k]) < 1e-9)
			k++;
		if (k == bo->o.dim)
			return 1;
	}
	return 0;
}

static void project(const hml__bo *bo, double *u)
{
	for (size_t k = 0; k < bo->o.dim; k++)
		u[k] = u[k] > 1 ? 1 : u[k] >= 0 ? u[k] : 0;
	if (bo->o.project)
		bo->o.project(u, bo->o.payload);
}

/* A uniformly random point, projected, that no trial has yet (after a few
 * tries, any). */
static void random_point(const hml__bo *bo, uint64_t *rng, double *u)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		for (size_t k = 0; k < bo->o.dim; k++)
			u[k] = hml__rng_uniform(rng);
		project(bo, u);
		if (!is_duplicate(bo, u))
			return;
	}
}

typedef struct polish_ctx { acq *a; int rc; } polish_ctx;

static double polish_f(unsigned n, const double *x, double *grad, void *data)
{
	polish_ctx *c = data;
	double v;
	(void)n;
	(void)grad;
	int rc = acq_eval(c->a, x, 1, &v);
	if (rc < 0) {
		c->rc = rc;
		return 1e300;
	}
	return isfinite(v) ? -v : 1e300;
}

/* Polish x in place: maximise the acquisition locally with BOBYQA. */
static int polish(acq *a, double *x, size_t d)
{
	polish_ctx c = { a, 0 };
	nlopt_opt opt = nlopt_create(NLOPT_LN_BOBYQA, (unsigned)d);
	if (!opt)
		return hml__error_oom();
	nlopt_set_lower_bounds1(opt, 0.0);
	nlopt_set_upper_bounds1(opt, 1.0);
	nlopt_set_min_objective(opt, polish_f, &c);
	nlopt_set_maxeval(opt, POLISH_EVALS);
	nlopt_set_xtol_rel(opt, 1e-4);
	nlopt_set_initial_step1(opt, 0.05);
	double f;
	double *x0 = malloc(d * sizeof *x0);
	if (!x0) {
		nlopt_destroy(opt);
		return hml__error_oom();
	}
	memcpy(x0, x, d * sizeof *x);
	nlopt_result r = nlopt_optimize(opt, x, &f);
	if (r < 0 || !(f < 1e300)) /* keep the start when NLopt gives up */
		memcpy(x, x0, d * sizeof *x);
	free(x0);
	nlopt_destroy(opt);
	return c.rc;
}

#define N_CAND (N_RANDOM + N_LOCAL)
#define N_FINAL (N_POLISH + 16)

/* Candidates: uniform points and perturbations of the best trials. */
static void candidates(const hml__bo *bo, const scratch *w, uint64_t *rng, double *C)
{
	size_t d = bo->o.dim, nbest = bo->ndone < 5 ? bo->ndone : 5;
	keyed *top = w->tmp;
	for (size_t j = 0; j < bo->ndone; j++)
		top[j] = (keyed){ w->s[bo->done[j]], bo->done[j] };
	qsort(top, bo->ndone, sizeof *top, keyed_cmp);
	for (size_t c = 0; c < N_CAND; c++) {
		double *x = C + c * d;
		if (c < N_RANDOM || nbest == 0) {
			for (size_t k = 0; k < d; k++)
				x[k] = hml__rng_uniform(rng);
			continue;
		}
		const double *b = bo->t[top[c % nbest].id].u;
		double scale = c % 2 ? 0.02 : 0.1;
		for (size_t k = 0; k < d; k++) {
			double v = b[k] + scale * normal(rng);
			x[k] = v > 1 ? 1 : v >= 0 ? v : 0;
		}
	}
}

/* The point maximising the acquisition, snapped and new if possible. */
static int maximise(hml__bo *bo, acq *a, scratch *w, uint64_t *rng, double *u)
{
	size_t d = bo->o.dim;
	int rc = 0;
	double *C = malloc((N_CAND * (d + 1) + N_FINAL * (d + 1)) * sizeof *C);
	keyed *order = malloc(N_CAND * sizeof *order);
	if (!C || !order) {
		rc = hml__error_oom();
		goto done;
	}
	double *val = C + N_CAND * d, *F = val + N_CAND, *fval = F + N_FINAL * d;
	candidates(bo, w, rng, C);
	if ((rc = acq_eval(a, C, N_CAND, val)) < 0)
		goto done;
	for (size_t c = 0; c < N_CAND; c++)
		order[c] = (keyed){ isfinite(val[c]) ? -val[c] : INFINITY, c };
	qsort(order, N_CAND, sizeof *order, keyed_cmp);
	for (size_t f = 0; f < N_FINAL; f++) {
		memcpy(F + f * d, C + order[f < N_POLISH ? f : f - N_POLISH].id * d,
		       d * sizeof *F);
		if (f < N_POLISH && (rc = polish(a, F + f * d, d)) < 0)
			goto done;
		project(bo, F + f * d);
	}
	if ((rc = acq_eval(a, F, N_FINAL, fval)) < 0)
		goto done;
	long best = -1;
	for (size_t f = 0; f < N_FINAL; f++)
		if (isfinite(fval[f]) && (best < 0 || fval[f] > fval[best]) &&
		    !is_duplicate(bo, F + f * d))
			best = (long)f;
	if (best >= 0)
		memcpy(u, F + (size_t)best * d, d * sizeof *u);
	else
		random_point(bo, rng, u);
done:
	free(C);
	free(order);
	return rc;
}

static int ask(hml__bo *bo, size_t *id, double *u)
{
	int rc;
	size_t k = bo->n, d = bo->o.dim;
	uint64_t rng = stream(bo, 0, k);
	acq a = { bo, NULL, { NULL }, NULL, NAN, NULL, NULL, 0 };
	scratch w = { 0 };
	if ((rc = maybe_refit(bo)) < 0)
		return rc;
	if (k < bo->o.n_init) {
		memcpy(u, bo->lhs + k * d, d * sizeof *u);
		project(bo, u);
		if (is_duplicate(bo, u))
			random_point(bo, &rng, u);
	} else if (bo->ndone < 2) {
		random_point(bo, &rng, u);
	} else {
		if ((rc = scratch_init(&w, bo->n, d)) < 0 ||
		    (rc = build_acq(bo, &rng, &a, &w)) < 0 ||
		    (rc = maximise(bo, &a, &w, &rng, u)) < 0)
			goto done;
	}
	rc = push_trial(bo, id, u);
done:
	acq_release(&a);
	scratch_free(&w);
	return rc;
}

/* The BLAS (OpenBLAS built with OpenMP) follows the calling thread's OpenMP
 * thread count; hold it to one for the small matrices of a suggestion. */
int hml__bo_ask(hml__bo *bo, size_t *id, double *u)
{
#ifdef _OPENMP
	int threads = omp_get_max_threads();
	omp_set_num_threads(1);
	int rc = ask(bo, id, u);
	omp_set_num_threads(threads);
	return rc;
#else
	return ask(bo, id, u);
#endif
}
