/*
 * runtime/src/ensguard.c - the ensemble guard's members (ensguard.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "ensguard.h"
#include "loader/loader.h"

struct hml__ensguard {
	pthread_mutex_t mu;
	int64_t n;
	hml__model *m[HML__GUARD_ENSEMBLE_MAX];
	double *y;           /* [n][rows * outputs]: the members' outputs */
	int64_t cap;         /* rows y holds */
	double row[HML__GUARD_ENSEMBLE_MAX * 64], *rowbuf;   /* one row's, member after member */
};

void hml__ensguard_free(hml__ensguard *e)
{
	if (!e)
		return;
	for (int64_t k = 0; k < e->n; k++)
		hml__model_free(e->m[k]);
	pthread_mutex_destroy(&e->mu);
	if (e->rowbuf != e->row)
		free(e->rowbuf);
	free(e->y);
	free(e);
}

int hml__ensguard_open(hml__ensguard **out, const hml__guard *g, int threads)
{
	const hml__guard_ensemble *s = &g->stats.ens;
	hml__ensguard *e;
	int rc;

	*out = NULL;
	if (!g->member || s->members < HML__GUARD_ENSEMBLE_MIN)
		return hml__error_set(HML_EINVALID, "an ensemble guard without members");
	if (!(e = calloc(1, sizeof(*e))))
		return hml__error_oom();
	pthread_mutex_init(&e->mu, NULL);
	e->rowbuf = e->row;
	if (s->members * s->outputs > (int64_t)(sizeof(e->row) / sizeof(e->row[0])) &&
	    !(e->rowbuf = malloc((size_t)(s->members * s->outputs) * sizeof(double)))) {
		e->rowbuf = e->row;
		hml__ensguard_free(e);
		return hml__error_oom();
	}
	for (e->n = 0; e->n < s->members; e->n++)
		if ((rc = hml__model_load(&e->m[e->n], g->member[e->n], threads)) < 0) {
			hml__error_set(rc, "ensemble member %lld: %s", (long long)e->n,
			               hml_error_last()->message);
			hml__ensguard_free(e);
			return rc;
		}
	*out = e;
	return 0;
}

/* Member k on the rows, its outputs (double) into y. */
static int run_member(hml__ensguard *e, int64_t k, const hml__guard *g, const void *x,
                      hml_dtype dt, int in_ndim, const int64_t *in_shape, int64_t rows,
                      double *y)
{
	int64_t shape[HML_MAX_DIMS + 1], oshape[HML_MAX_DIMS + 1], per_row = 1;
	const void *out;
	hml_dtype odt;
	int nd, rc;

	shape[0] = rows;
	memcpy(shape + 1, in_shape, (size_t)in_ndim * sizeof(int64_t));
	if ((rc = hml__model_forward(e->m[k], x, dt, in_ndim + 1, shape)) < 0 ||
	    (rc = hml__model_output(e->m[k], &out, &odt, &nd, oshape)) < 0)
		return hml__error_set(rc, "ensemble member %lld: %s", (long long)k,
		                      hml_error_last()->message);
	for (int d = 1; d < nd; d++)
		per_row *= oshape[d];
	if (nd < 1 || oshape[0] != rows || per_row != g->stats.ens.outputs)
		return hml__error_set(HML_ESHAPE, "ensemble member %lld ('%s') returns %lld values "
		                      "per row, its calibration %lld", (long long)k, g->member[k],
		                      (long long)per_row, (long long)g->stats.ens.outputs);
	hml__convert(y, HML_F64, out, odt, (size_t)(rows * per_row));
	return 0;
}

int64_t hml__ensguard_check(hml__ensguard *e, const hml__guard *g, const void *x,
                            hml_dtype dt, int in_ndim, const int64_t *in_shape, int64_t rows,
                            int64_t *idx)
{
	int64_t o = g->stats.ens.outputs, k = 0;
	int rc = 0;

	if (rows < 1)
		return 0;
	pthread_mutex_lock(&e->mu);
	if (rows > e->cap) {
		double *grown = realloc(e->y, (size_t)(e->n * rows * o) * sizeof(double));
		if (!grown) {
			rc = hml__error_oom();
			goto done;
		}
		e->y = grown;
		e->cap = rows;
	}
	for (int64_t m = 0; m < e->n && rc == 0; m++)
		rc = run_member(e, m, g, x, dt, in_ndim, in_shape, rows, e->y + m * rows * o);
	for (int64_t i = 0; rc == 0 && i < rows; i++) {
		for (int64_t m = 0; m < e->n; m++)
			memcpy(e->rowbuf + m * o, e->y + (m * rows + i) * o, (size_t)o * sizeof(double));
		if (hml__guard_ensemble_row(g, e->rowbuf))
			idx[k++] = i;
	}
done:
	pthread_mutex_unlock(&e->mu);
	return rc < 0 ? rc : k;
}
