/*
 * lib/search/opt/pareto.c - two-objective Pareto fronts and exact hypervolume.
 */
#include "search/opt/pareto.h"

#include <math.h>
#include <stdlib.h>

int hml__pareto_dominates(const double a[2], const double b[2])
{
	return a[0] <= b[0] && a[1] <= b[1] && (a[0] < b[0] || a[1] < b[1]);
}

/* qsort has no payload argument: sort (f0, f1, index) triples instead. */
typedef struct { double f0, f1; size_t i; } point;

static int point_cmp(const void *pa, const void *pb)
{
	const point *a = pa, *b = pb;
	if (a->f0 != b->f0)
		return a->f0 < b->f0 ? -1 : 1;
	if (a->f1 != b->f1)
		return a->f1 < b->f1 ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* The finite points sorted by (f0, f1, index); *m gets their count. */
static point *sorted_points(const double *f, size_t n, size_t *m)
{
	point *p = malloc((n ? n : 1) * sizeof *p);
	if (!p)
		return NULL;
	*m = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(f[2 * i]) && isfinite(f[2 * i + 1]))
			p[(*m)++] = (point){ f[2 * i], f[2 * i + 1], i };
	qsort(p, *m, sizeof *p, point_cmp);
	return p;
}

size_t hml__pareto_front(size_t *idx, const double *f, size_t n)
{
	size_t m, k = 0;
	point *p = sorted_points(f, n, &m);
	if (!p)
		return (size_t)-1;
	/* Sweep by increasing f0: a point is on the front when its f1 is
	 * strictly below every f1 seen so far. */
	double best = INFINITY;
	for (size_t j = 0; j < m; j++) {
		if (p[j].f1 < best) {
			idx[k++] = p[j].i;
			best = p[j].f1;
		}
	}
	free(p);
	return k;
}

double hml__pareto_hypervolume(const double *f, size_t n, const double ref[2])
{
	size_t m;
	point *p = sorted_points(f, n, &m);
	if (!p)
		return -1.0;
	double hv = 0.0, best = ref[1];
	for (size_t j = 0; j < m; j++) {
		if (p[j].f0 >= ref[0])
			break;
		if (p[j].f1 < best) {
			hv += (ref[0] - p[j].f0) * (best - p[j].f1);
			best = p[j].f1;
		}
	}
	free(p);
	return hv;
}
