/*
 * lib/search/opt/asha.c - ASHA promotions (see asha.h).
 */
#include "search/opt/asha.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "search/opt/pareto.h"

#define MAX_RUNGS 32

enum { RUNNING, DONE, FAILED };

typedef struct run {
	size_t config;
	unsigned rung;
	int status;
	int promoted;
	double f[2];
} run;

struct hml__asha {
	unsigned nobj, eta, nrungs;
	double resource[MAX_RUNGS];
	run *r;
	size_t n, cap;
};

int hml__asha_new(hml__asha **out, unsigned nobj, double min, double max, unsigned eta)
{
	*out = NULL;
	if (nobj != 1 && nobj != 2)
		return hml__error_set(HML_EINVALID, "asha: %u objectives (expected 1 or 2)", nobj);
	if (!(min > 0) || !(max >= min) || !isfinite(max))
		return hml__error_set(HML_EINVALID, "asha: resources must satisfy 0 < min <= max "
		                      "(min %g, max %g)", min, max);
	if (eta < 2)
		return hml__error_set(HML_EINVALID, "asha: reduction factor %u (expected >= 2)", eta);
	hml__asha *a = calloc(1, sizeof *a);
	if (!a)
		return hml__error_oom();
	a->nobj = nobj;
	a->eta = eta;
	double res = min;
	/* rungs min, min*eta, ... below max (within rounding), then max itself */
	while (a->nrungs < MAX_RUNGS - 1 && res * (1 + 1e-9) < max) {
		a->resource[a->nrungs++] = res;
		res *= eta;
	}
	a->resource[a->nrungs++] = max;
	*out = a;
	return 0;
}

void hml__asha_free(hml__asha *a)
{
	if (!a)
		return;
	free(a->r);
	free(a);
}

unsigned hml__asha_rungs(const hml__asha *a)
{
	return a->nrungs;
}

double hml__asha_resource(const hml__asha *a, unsigned k)
{
	return k < a->nrungs ? a->resource[k] : NAN;
}

static run *find(hml__asha *a, size_t config, unsigned k)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].config == config && a->r[i].rung == k)
			return &a->r[i];
	return NULL;
}

int hml__asha_start(hml__asha *a, size_t config, unsigned k)
{
	if (k >= a->nrungs)
		return hml__error_set(HML_EINVALID, "asha: rung %u out of range", k);
	if (find(a, config, k))
		return hml__error_set(HML_EINVALID, "asha: configuration %zu already started at "
		                      "rung %u", config, k);
	run *from = k ? find(a, config, k - 1) : NULL;
	if (k && (!from || from->status != DONE || from->promoted))
		return hml__error_set(HML_EINVALID, "asha: configuration %zu has no result at "
		                      "rung %u to promote", config, k - 1);
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		run *r = realloc(a->r, cap * sizeof *r);
		if (!r)
			return hml__error_oom();
		a->r = r;
		a->cap = cap;
		from = k ? find(a, config, k - 1) : NULL;
	}
	if (from)
		from->promoted = 1;
	a->r[a->n++] = (run){ config, k, RUNNING, 0, { NAN, NAN } };
	return 0;
}

static run *running(hml__asha *a, size_t config, unsigned k)
{
	run *r = find(a, config, k);
	if (!r || r->status != RUNNING) {
		hml__error_set(HML_EINVALID, "asha: configuration %zu is not running at rung %u",
		               config, k);
		return NULL;
	}
	return r;
}

int hml__asha_report(hml__asha *a, size_t config, unsigned k, const double *f)
{
	run *r = running(a, config, k);
	if (!r)
		return HML_EINVALID;
	for (unsigned i = 0; i < a->nobj; i++)
		if (!isfinite(f[i]))
			return hml__error_set(HML_EINVALID, "asha: configuration %zu: objective %u "
			                      "is not finite", config, i);
	r->f[0] = f[0];
	r->f[1] = a->nobj == 2 ? f[1] : 0.0;
	r->status = DONE;
	return 0;
}

int hml__asha_fail(hml__asha *a, size_t config, unsigned k)
{
	run *r = running(a, config, k);
	if (!r)
		return HML_EINVALID;
	r->status = FAILED;
	return 0;
}

typedef struct { size_t layer; double f0; size_t config; run *r; } ranked;

static int ranked_cmp(const void *pa, const void *pb)
{
	const ranked *x = pa, *y = pb;
	if (x->layer != y->layer)
		return x->layer < y->layer ? -1 : 1;
	if (x->f0 != y->f0)
		return x->f0 < y->f0 ? -1 : 1;
	return x->config < y->config ? -1 : x->config > y->config;
}

/* The finished runs of rung k in rank order; their count into *m. */
static ranked *rank_rung(hml__asha *a, unsigned k, size_t *m)
{
	size_t n = 0;
	ranked *v = malloc((a->n ? a->n : 1) * sizeof *v);
	double *f = malloc((a->n ? a->n : 1) * 2 * sizeof *f);
	size_t *idx = malloc((a->n ? a->n : 1) * sizeof *idx), left;
	if (!v || !f || !idx)
		goto fail;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].rung == k && a->r[i].status == DONE)
			v[n++] = (ranked){ 0, a->r[i].f[0], a->r[i].config, &a->r[i] };
	/* Pareto layers: peel fronts off the points not yet layered (NaN). */
	for (size_t i = 0; i < n; i++) {
		f[2 * i] = v[i].r->f[0];
		f[2 * i + 1] = v[i].r->f[1];
	}
	left = n;
	for (size_t layer = 0; left > 0; layer++) {
		size_t c = hml__pareto_front(idx, f, n);
		if (c == (size_t)-1)
			goto fail;
		for (size_t j = 0; j < c; j++) {
			v[idx[j]].layer = layer;
			f[2 * idx[j]] = NAN;
		}
		/* identical points: the front keeps one; the next layer takes the rest */
		left -= c;
	}
	qsort(v, n, sizeof *v, ranked_cmp);
	free(f);
	free(idx);
	*m = n;
	return v;
fail:
	free(v);
	free(f);
	free(idx);
	hml__error_oom();
	return NULL;
}

int hml__asha_next(hml__asha *a, size_t *config, unsigned *k)
{
	for (unsigned rung = a->nrungs - 1; rung-- > 0;) {
		size_t m;
		ranked *v = rank_rung(a, rung, &m);
		if (!v)
			return HML_ENOMEM;
		size_t top = m / a->eta;
		for (size_t j = 0; j < top; j++) {
			if (!v[j].r->promoted) {
				*config = v[j].config;
				*k = rung + 1;
				free(v);
				return hml__asha_start(a, *config, *k) < 0 ? HML_ENOMEM : 1;
			}
		}
		free(v);
	}
	return 0;
}
