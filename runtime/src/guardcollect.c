/*
 * runtime/src/guardcollect.c - guarded collection of batch calls
 * (HML_COLLECT_GUARDED; region_internal.h): in infer or interleave mode,
 * the rows the guard sent to the original code, and only those, are
 * stored through the region's collector, their inputs as the call began
 * and the original code's outputs for them.
 *
 * A call that falls back whole because a row was guarded (a region
 * without hml_region_subset_enable()) stores its guarded rows only: the
 * others are in the training data's range, and the data set is meant to
 * hold what the model did not cover. Inputs are gathered before the
 * original code runs, which may update them in place.
 */
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "region_internal.h"
#include "rowguard.h"

/* The listed rows of `src` (rows of `row_bytes`) into the collector's next call. */
static int place(hml_region *r, int which, const void *src, size_t row_bytes,
                 const int64_t *idx, int64_t k)
{
	char *dst;
	int rc;

	if ((rc = hml__collector_next(r->col, which, k, (void **)&dst)) < 0)
		return rc;
	for (int64_t i = 0; i < k; i++)
		memcpy(dst + (size_t)i * row_bytes, (const char *)src + (size_t)idx[i] * row_bytes,
		       row_bytes);
	return 0;
}

static size_t row_bytes(const side *s)
{
	return (size_t)s->row_size * hml_dtype_size(s->app_dtype);
}

int hml__gcollect_begin(hml_region *r)
{
	const int64_t *idx;
	const void *x;
	int64_t k = hml__guard_listed(r, &idx);
	double t = hml__now();
	int rc;

	r->gc_rows = 0;
	if (!r->collect_guarded || !r->col || r->collect_broken || k == 0)
		return 0;
	if ((rc = hml__side_gather(&r->in, r->in.buf, r->in.app_dtype, r->cfg.threads, &x)) < 0 ||
	    (rc = place(r, HML__COLLECTOR_INPUT, x, row_bytes(&r->in), idx, k)) < 0)
		return hml__region_degrade(r, rc, &r->collect_broken, "not collecting");
	r->stats.gather_s += hml__now() - t;
	r->gc_rows = 1;
	return 0;
}

int hml__gcollect_end(hml_region *r, double original_s)
{
	const int64_t *idx;
	const void *y;
	int64_t k = hml__guard_listed(r, &idx);
	double t = hml__now(), t1;
	int rc;

	if (!r->gc_rows)
		return 0;
	r->gc_rows = 0;
	if ((rc = hml__side_gather(&r->out, r->out.buf, r->out.app_dtype, r->cfg.threads, &y)) < 0 ||
	    (rc = place(r, HML__COLLECTOR_OUTPUT, y, row_bytes(&r->out), idx, k)) < 0)
		return hml__region_degrade(r, rc, &r->collect_broken, "not collecting");
	t1 = hml__now();
	r->stats.gather_s += t1 - t;
	if ((rc = hml__collector_commit(r->col, original_s)) < 0)
		return hml__region_degrade(r, rc, &r->collect_broken, "not collecting");
	r->stats.write_s += hml__now() - t1;
	r->stats.rows_in += (uint64_t)k;
	r->stats.rows_out += (uint64_t)k;
	return 0;
}
